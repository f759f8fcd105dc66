/* SPDX-License-Identifier: MIT */
/*
 * lib/query/aggregate.c - totals of raw values: the counter's aggregate
 * function (sum, avg, min, max) over instances, and what each instance
 * type aggregates.
 *
 * A total's raw sample is the function of its members' raw values
 * (pcw__q_acc); its value the function of their values (pcw__q_vacc: parts,
 * wholes and values; totals.c says which members count). A "...History"
 * total also holds the last raw values of instances that went away, for
 * the life of the query, as Windows' GlobalAggregateWithHistory "stores all
 * counter values for the lifetime of the consumer application": the _Total
 * of a cumulative counter then never drops when a provider exits.
 */
#include <math.h>
#include <string.h>

#include "aggregate.h"
#include "cook.h"

void pcw__q_acc_reset(pcw__q_acc *a)
{
    a->sum = 0, a->n = 0, a->overflow = 0;
    a->min = UINT64_MAX, a->max = 0;
}

void pcw__q_acc_add(pcw__q_acc *a, uint64_t v)
{
    uint64_t s = a->sum + v;
    a->overflow |= s < a->sum;
    a->sum = s;
    if (v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    a->n++;
}

void pcw__q_acc_merge(pcw__q_acc *a, const pcw__q_acc *b)
{
    if (!b->n)
        return;
    uint64_t s = a->sum + b->sum;
    a->overflow |= b->overflow | (s < a->sum);
    a->sum = s;
    if (b->min < a->min)
        a->min = b->min;
    if (b->max > a->max)
        a->max = b->max;
    a->n += b->n;
}

int pcw__q_acc_result(const pcw__q_acc *a, uint32_t fn, uint64_t *out)
{
    *out = 0;
    switch (fn) {
    case PCW_AGGREGATE_TOTAL:
        if (a->overflow)
            return PCW_CSTATUS_OVERFLOW;
        *out = a->sum;
        return PCW_CSTATUS_VALID;
    case PCW_AGGREGATE_AVERAGE:
        if (!a->n)
            return PCW_CSTATUS_NO_INSTANCE;
        if (a->overflow)
            return PCW_CSTATUS_OVERFLOW;
        /* Round to nearest without overflowing sum + n / 2. */
        *out = a->sum / a->n + ((a->sum % a->n) >= (a->n - a->n / 2) ? 1 : 0);
        return PCW_CSTATUS_VALID;
    case PCW_AGGREGATE_MIN:
        if (!a->n)
            return PCW_CSTATUS_NO_INSTANCE;
        *out = a->min;
        return PCW_CSTATUS_VALID;
    case PCW_AGGREGATE_MAX:
        if (!a->n)
            return PCW_CSTATUS_NO_INSTANCE;
        *out = a->max;
        return PCW_CSTATUS_VALID;
    }
    return PCW_CSTATUS_NOT_AGGREGATED;
}

void pcw__q_vacc_reset(pcw__q_vacc *a)
{
    a->part = a->whole = a->sum = 0.0;
    a->min = INFINITY, a->max = -INFINITY;
    a->n = 0;
}

void pcw__q_vacc_merge(pcw__q_vacc *a, const pcw__q_vacc *b)
{
    if (!b->n)
        return;
    a->part += b->part, a->whole += b->whole, a->sum += b->sum;
    if (b->min < a->min)
        a->min = b->min;
    if (b->max > a->max)
        a->max = b->max;
    a->n += b->n;
}

int pcw__q_vacc_result(const pcw__q_vacc *a, uint32_t fn, int pooled, double *out)
{
    *out = 0.0;
    switch (fn) {
    case PCW_AGGREGATE_TOTAL:
        if (!pooled) {
            *out = a->sum;
            return PCW_CSTATUS_VALID;
        }
        if (a->whole == 0.0)
            return PCW_CSTATUS_ZERO_DENOMINATOR;
        *out = a->part / a->whole;
        return PCW_CSTATUS_VALID;
    case PCW_AGGREGATE_AVERAGE:
        *out = a->sum / (double)a->n;
        return PCW_CSTATUS_VALID;
    case PCW_AGGREGATE_MIN:
        *out = a->min;
        return PCW_CSTATUS_VALID;
    case PCW_AGGREGATE_MAX:
        *out = a->max;
        return PCW_CSTATUS_VALID;
    }
    return PCW_CSTATUS_NOT_AGGREGATED;
}

void pcw__q_aggregate_functions(const pcw_counterset *cs, uint32_t *fn)
{
    uint32_t n = cs->counter_count;
    for (uint32_t k = 0; k < n; k++)
        fn[k] = cs->counters[k].aggregate;
    /* A base, multi count, time or frequency has no meaning of its own to
     * total; without an attribute it follows the counter that uses it. */
    for (uint32_t k = 0; k < n; k++) {
        pcw__q_recipe r;
        pcw__q_recipe_build(cs, k, &r);
        if (fn[k] == PCW_AGGREGATE_UNDEFINED)
            continue;
        if (r.base >= 0 && cs->counters[r.base].aggregate == PCW_AGGREGATE_UNDEFINED)
            fn[r.base] = fn[k];
        if (r.multi >= 0 && cs->counters[r.multi].aggregate == PCW_AGGREGATE_UNDEFINED)
            fn[r.multi] = fn[k];
        if (r.time >= 0 && cs->counters[r.time].aggregate == PCW_AGGREGATE_UNDEFINED)
            fn[r.time] = PCW_AGGREGATE_MAX;
        if (r.freq_ctr >= 0 && cs->counters[r.freq_ctr].aggregate == PCW_AGGREGATE_UNDEFINED)
            fn[r.freq_ctr] = PCW_AGGREGATE_MAX;
    }
}

pcw__q_itype pcw__q_instance_type(uint32_t t)
{
    pcw__q_itype it;
    memset(&it, 0, sizeof it);
    it.known = 1;
    switch (t) {
    case PCW_SINGLE_INSTANCE:
        break;
    case PCW_MULTI_INSTANCE:
        it.named = 1;
        break;
    case PCW_GLOBAL_AGGREGATE:
        it.global = 1;
        break;
    case PCW_GLOBAL_AGGREGATE_HISTORY:
        it.global = 1, it.history = 1;
        break;
    case PCW_MULTI_AGGREGATE:
        it.named = 1, it.total = 1;
        break;
    case PCW_MULTI_AGGREGATE_HISTORY:
        it.named = 1, it.total = 1, it.history = 1;
        break;
    case PCW_INSTANCE_AGGREGATE:
        it.named = 1, it.by_name = 1;
        break;
    case PCW_INSTANCE_AGGREGATE_HISTORY:
        it.named = 1, it.by_name = 1, it.history = 1;
        break;
    default:
        /* Unknown to this build: show the instances as published. */
        it.named = 1, it.known = 0;
        break;
    }
    return it;
}
