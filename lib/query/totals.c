/* SPDX-License-Identifier: MIT */
/*
 * lib/query/totals.c - a counterset's totals for the current sample:
 * _Total (multipleAggregate), the one instance of a globalAggregate set,
 * one per name of an instanceAggregate set.
 *
 * Two things per total and counter (docs/query.md, "Totals"):
 *
 *   - its raw sample: each counter totalled with its aggregate function
 *     over the instances read now; a History set adds what departed
 *     instances last showed, and an instance whose provider did not answer
 *     this time counts with its last values (only History sets keep them).
 *     A row in the "wide" layout (every counter 8 bytes): what
 *     pcw_pdh_value.raw shows.
 *   - its value, from its members' own: each member's formula as part /
 *     whole (pcw__q_cook_parts) over ITS two samples, and the aggregate
 *     function of those - a sum pools a fraction of a base (sum of parts
 *     over sum of wholes: the fraction of the totals, as PDH's _Total) and
 *     adds anything else (rates, deltas, timers over the clock); avg, min
 *     and max are those of the members' values. A member counts in an
 *     interval once its own value is valid: from its second sample, and not
 *     in an interval it reset in. A departed member adds nothing to an
 *     interval (no reset); a History total keeps its last raw values and
 *     fractions. Nothing is computed from a difference of two totals, so
 *     members coming and going, a gap with no provider at all or a
 *     provider's restart never make a number up.
 */
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "cook.h"
#include "rows.h"
#include "snaprows.h"
#include "totals.h"
#include "util.h"

int pcw__q_total_pools(const pcw__q_set *s, uint32_t k)
{
    const pcw__q_recipe *r = &s->recipes[k];
    return s->aggfn[k] == PCW_AGGREGATE_TOTAL && (r->second == PCW__Q_Y_BASE || r->multi >= 0);
}

/* Does a total's value of counter k need its members one by one? Not for
 * a type without a value, a counter without an aggregate function or a
 * recipe that cannot work, nor for a plain value (its raw total is it). */
static int by_member(const pcw__q_set *s, uint32_t k)
{
    const pcw__q_recipe *r = &s->recipes[k];
    return r->formula != PCW__Q_F_NONE && r->formula != PCW__Q_F_RAW &&
           r->status == PCW_CSTATUS_VALID && s->aggfn[k] != PCW_AGGREGATE_UNDEFINED;
}

void pcw__q_total_keep(pcw__q_set *s, pcw__q_agg *a, const unsigned char *last)
{
    pcw__q_layout lay = {s->off, s->size};
    for (uint32_t k = 0; k < s->ncounters; k++) {
        if (a->hist)
            pcw__q_acc_add(&a->hist[k], pcw__q_load(last, &lay, k));
        /* A fraction's last value stays too; what needs two samples or
         * the clock (elapsed time) has no value once its member is gone. */
        const pcw__q_recipe *r = &s->recipes[k];
        if (!a->hval || !by_member(s, k) || r->formula != PCW__Q_F_RAW_FRACTION)
            continue;
        pcw_raw now;
        double part, whole;
        pcw__q_raw_from_row(r, last, &lay, 0, &now);
        if (pcw__q_cook_parts(r->formula, &now, NULL, &part, &whole) == PCW_CSTATUS_VALID)
            pcw__q_vacc_add(&a->hval[k], part, whole);
    }
}

/* The raw sample's part: each counter's function over the raw values
 * (with History's departed ones). */
static void raw_rows(pcw__q_set *s, int b)
{
    uint32_t nc = s->ncounters;
    const pcw_snapshot *snap = pcw__q_snap(s, b);
    pcw__q_layout lay = {s->off, s->size};
    for (size_t o = 0; o < s->ins.norder; o++) {
        pcw__q_inst *x = &s->ins.inst[s->ins.order[o]];
        const unsigned char *row = NULL;
        if (x->row >= 0) {
            row = pcw__q_row(snap, (size_t)x->row);
            if (x->last)
                memcpy(x->last, row, s->data_size);
        } else if (x->stale) {
            row = x->last;
        }
        if (!row)
            continue;
        size_t g = s->it.by_name ? x->agg : 0;
        pcw__q_acc *acc = &s->tot.acc[g * nc];
        for (uint32_t k = 0; k < nc; k++)
            pcw__q_acc_add(&acc[k], pcw__q_load(row, &lay, k));
        s->aggs[g].sources++;
    }
    for (size_t a = 0; a < s->nagg; a++) {
        pcw__q_agg *g = &s->aggs[a];
        pcw__q_acc *acc = &s->tot.acc[a * nc];
        if (g->hist)
            for (uint32_t k = 0; k < nc; k++)
                pcw__q_acc_merge(&acc[k], &g->hist[k]);
        for (uint32_t k = 0; k < nc; k++)
            s->tot.ast[b][a * nc + k] =
                (uint8_t)pcw__q_acc_result(&acc[k], s->aggfn[k], &s->tot.arow[b][a * nc + k]);
    }
}

/* How member_values has a member's value of a counter. */
enum { WAY_NONE, WAY_RATE, WAY_GENERAL };

/* Every member's value of every counter that needs them, into its
 * total's vacc (or, not valid, its status into vst). */
static void member_values(pcw__q_set *s)
{
    uint32_t nc = s->ncounters;
    uint8_t *way = s->tot.tway;
    for (uint32_t k = 0; k < nc; k++) {
        const pcw__q_recipe *r = &s->recipes[k];
        way[k] = !by_member(s, k) ? WAY_NONE
                 : r->formula == PCW__Q_F_RATE && r->second == PCW__Q_Y_SYSTIME && r->freq_ctr < 0
                     ? WAY_RATE
                     : WAY_GENERAL;
    }
    for (size_t o = 0; o < s->ins.norder; o++) {
        uint32_t j = s->ins.order[o];
        const pcw__q_inst *x = &s->ins.inst[j];
        if (x->row < 0 && !x->stale)
            continue;
        size_t g = s->it.by_name ? x->agg : 0;
        /* A member whose provider did not answer has its last values
         * (History) for what takes one sample, and no interval. */
        pcw__q_rows w;
        pcw__q_entry_rows(s, j, &w);
        if (x->row < 0 && x->last) {
            w.row = x->last;
            w.t = s->tot.atime[s->cur];
        }
        /* (Y1 - Y0) / TB of a rate over the system time, the commonest
         * counter: such a value is computed here as pcw_cook does it, in
         * the same order of operations (0: the general way). */
        double dt =
            w.row && w.prow && w.t > w.pt ? (double)(w.t - w.pt) / (double)PCW__Q_SYS_FREQ : 0.0;
        for (uint32_t k = 0; k < nc; k++) {
            if (way[k] == WAY_NONE)
                continue;
            size_t c = g * nc + k;
            if (way[k] == WAY_RATE && dt > 0.0) {
                uint64_t x1 = pcw__q_load(w.row, &w.lay, k), x0 = pcw__q_load(w.prow, &w.lay, k);
                if (x1 >= x0) {
                    pcw__q_vacc_add(&s->tot.vacc[c], (double)(x1 - x0) / dt, 1.0);
                    continue;
                }
            }
            pcw_raw now, prev;
            double part, whole;
            pcw__q_rows_raw(s, &w, k, &now, &prev);
            int st = now.status;
            if (st == PCW_CSTATUS_VALID && x->row < 0 && pcw_cook_needs_two(s->counter_types[k]))
                st = PCW_CSTATUS_PROVIDER_GONE;
            if (st == PCW_CSTATUS_VALID)
                st = pcw__q_cook_parts(s->recipes[k].formula, &now,
                                       prev.status == PCW_CSTATUS_VALID ? &prev : NULL, &part,
                                       &whole);
            if (st == PCW_CSTATUS_VALID)
                pcw__q_vacc_add(&s->tot.vacc[c], part, whole);
            else if (s->tot.vst[c] == UINT8_MAX)
                s->tot.vst[c] = (uint8_t)st;
        }
    }
}

/* Total a's value of counter k from what its members gave. */
static void total_value(pcw__q_set *s, size_t a, uint32_t k, pcw__q_tval *t)
{
    uint32_t nc = s->ncounters, fn = s->aggfn[k];
    const pcw__q_recipe *r = &s->recipes[k];
    const pcw__q_agg *g = &s->aggs[a];
    const pcw__q_acc *acc = &s->tot.acc[a * nc + k];
    /* PCW_FMT_RAW: the function of the values X, unrounded. */
    t->raw = 0.0;
    if (r->formula == PCW__Q_F_NONE)
        t->raw_status = PCW_CSTATUS_NO_DATA;
    else if (fn == PCW_AGGREGATE_UNDEFINED)
        t->raw_status = PCW_CSTATUS_NOT_AGGREGATED;
    else if (fn != PCW_AGGREGATE_TOTAL && !acc->n)
        t->raw_status = PCW_CSTATUS_NO_INSTANCE;
    else if (acc->overflow && fn != PCW_AGGREGATE_MIN && fn != PCW_AGGREGATE_MAX)
        t->raw_status = PCW_CSTATUS_OVERFLOW;
    else {
        t->raw_status = PCW_CSTATUS_VALID;
        t->raw = fn == PCW_AGGREGATE_TOTAL     ? (double)acc->sum
                 : fn == PCW_AGGREGATE_AVERAGE ? (double)acc->sum / (double)acc->n
                 : fn == PCW_AGGREGATE_MIN     ? (double)acc->min
                                               : (double)acc->max;
    }
    t->v = 0.0;
    if (r->formula == PCW__Q_F_RAW || t->raw_status == PCW_CSTATUS_NO_DATA ||
        t->raw_status == PCW_CSTATUS_NOT_AGGREGATED) {
        t->status = t->raw_status, t->v = t->raw;
        return;
    }
    if (r->status != PCW_CSTATUS_VALID) {
        t->status = (uint8_t)r->status;
        return;
    }
    pcw__q_vacc c = s->tot.vacc[a * nc + k];
    if (g->hval)
        pcw__q_vacc_merge(&c, &g->hval[k]);
    int pooled = pcw__q_total_pools(s, k);
    if (pcw_cook_needs_two(r->type) && !g->had_row)
        t->status = PCW_CSTATUS_NEW_DATA_NEEDED; /* the total's first sample */
    else if (c.n)
        t->status = (uint8_t)pcw__q_vacc_result(&c, fn, pooled, &t->v);
    else if (s->tot.vst[a * nc + k] != UINT8_MAX)
        t->status = s->tot.vst[a * nc + k]; /* members, none with a value yet */
    else if (fn == PCW_AGGREGATE_TOTAL)
        /* No member at all: nothing happened (0), but a fraction of
         * nothing has no value. */
        t->status = pooled ? PCW_CSTATUS_ZERO_DENOMINATOR : PCW_CSTATUS_VALID;
    else
        t->status = PCW_CSTATUS_NO_INSTANCE;
}

void pcw__q_totals_free(pcw__q_totals_state *t)
{
    for (int b = 0; b < 2; b++) {
        free(t->arow[b]), free(t->ast[b]);
        t->arow[b] = NULL, t->ast[b] = NULL, t->arow_cap[b] = t->ast_cap[b] = 0;
    }
    free(t->acc), free(t->tval), free(t->vacc), free(t->vst), free(t->tway);
    t->acc = NULL, t->tval = NULL, t->vacc = NULL, t->vst = NULL, t->tway = NULL;
    t->acc_cap = t->tval_cap = t->vacc_cap = t->vst_cap = t->tway_cap = 0;
    /* (atime stays: a total's raw sample never goes back to 0.) */
}

int pcw__q_totals(pcw__q_set *s)
{
    if (!s->nagg)
        return PCW_OK;
    int b = s->cur;
    uint32_t nc = s->ncounters;
    size_t cells = s->nagg * (size_t)(nc ? nc : 1);
    if (pcw__q_grow((void **)&s->tot.arow[b], &s->tot.arow_cap[b], cells, sizeof *s->tot.arow[b]) ||
        pcw__q_grow((void **)&s->tot.ast[b], &s->tot.ast_cap[b], cells, sizeof *s->tot.ast[b]) ||
        pcw__q_grow((void **)&s->tot.acc, &s->tot.acc_cap, cells, sizeof *s->tot.acc) ||
        pcw__q_grow((void **)&s->tot.tval, &s->tot.tval_cap, cells, sizeof *s->tot.tval) ||
        pcw__q_grow((void **)&s->tot.vacc, &s->tot.vacc_cap, cells, sizeof *s->tot.vacc) ||
        pcw__q_grow((void **)&s->tot.vst, &s->tot.vst_cap, cells, sizeof *s->tot.vst) ||
        pcw__q_grow((void **)&s->tot.tway, &s->tot.tway_cap, nc ? nc : 1, sizeof *s->tot.tway))
        return PCW_E_NO_MEMORY;
    for (size_t i = 0; i < cells; i++) {
        pcw__q_acc_reset(&s->tot.acc[i]);
        pcw__q_vacc_reset(&s->tot.vacc[i]);
    }
    memset(s->tot.vst, UINT8_MAX, cells);
    for (size_t a = 0; a < s->nagg; a++)
        s->aggs[a].sources = 0;
    /* The time of the raw sample: its latest read (the last one's when no
     * provider answered: a total's raw sample never goes back to 0). */
    uint64_t t = 0;
    for (size_t i = 0; i < s->nsrc[b]; i++)
        if (s->src[b][i].time_ns > t)
            t = s->src[b][i].time_ns;
    s->tot.atime[b] = t ? t : s->tot.atime[b ^ 1];
    raw_rows(s, b);
    member_values(s);
    for (size_t a = 0; a < s->nagg; a++) {
        pcw__q_agg *g = &s->aggs[a];
        g->had_row = g->has_row;
        g->has_row = g->active;
        for (uint32_t k = 0; k < nc; k++)
            total_value(s, a, k, &s->tot.tval[a * nc + k]);
    }
    return PCW_OK;
}
