/* SPDX-License-Identifier: MIT */
/*
 * lib/query/aggregate.h - aggregate.c's side for the other modules: the
 * accumulators of a total (raw values, values) and what an instance type
 * aggregates.
 */
#ifndef PCW_QUERY_AGGREGATE_H
#define PCW_QUERY_AGGREGATE_H

#include <stdint.h>

#include "pcw/pdh.h"

/* An accumulator of raw values for one counter of one total. */
typedef struct pcw__q_acc {
    uint64_t sum, min, max, n;
    uint32_t overflow; /* sum wrapped */
} pcw__q_acc;

void pcw__q_acc_reset(pcw__q_acc *a);
void pcw__q_acc_add(pcw__q_acc *a, uint64_t v);
/* a += b (history folded into a live total). */
void pcw__q_acc_merge(pcw__q_acc *a, const pcw__q_acc *b);
/* The total of `fn` (pcw_aggregate) over what a holds: PCW_CSTATUS_VALID
 * and *out, or NOT_AGGREGATED (fn undefined), OVERFLOW (the sum wrapped),
 * NO_INSTANCE (average, minimum or maximum of nothing). The average is
 * rounded to the nearest integer: it is the raw sample shown
 * (pcw_pdh_value.raw), never what a value is computed from (pcw__q_tval). */
int pcw__q_acc_result(const pcw__q_acc *a, uint32_t fn, uint64_t *out);

/* What a total makes of its members' values of one counter (totals.c):
 * each member's formula as part / whole (pcw__q_cook_parts), summed, and
 * the values part / whole summed, with their minimum and maximum. */
typedef struct pcw__q_vacc {
    double part, whole;   /* sums of the members' parts and wholes */
    double sum, min, max; /* of the members' values part / whole */
    uint64_t n;           /* members counted */
} pcw__q_vacc;

void pcw__q_vacc_reset(pcw__q_vacc *a);
/* (Inline: a total adds one per member and counter.) */
static inline void pcw__q_vacc_add(pcw__q_vacc *a, double part, double whole)
{
    double v = part / whole;
    a->part += part, a->whole += whole, a->sum += v;
    if (v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    a->n++;
}
void pcw__q_vacc_merge(pcw__q_vacc *a, const pcw__q_vacc *b);
/* The total of `fn` over what a holds (n > 0): sum - pooled, the sum of
 * the parts over the sum of the wholes (ZERO_DENOMINATOR when that is 0),
 * or else the sum of the values -, avg, min or max of the values. */
int pcw__q_vacc_result(const pcw__q_vacc *a, uint32_t fn, int pooled, double *out);

/* The aggregate function each counter of cs is totalled with: its own
 * attribute, or - when that is undefined - the function of a counter that
 * uses it as base or multi count, or "max" for a time or frequency
 * counter (perf_time_id / perf_freq_id). fn[cs->counter_count]. */
void pcw__q_aggregate_functions(const pcw_counterset *cs, uint32_t *fn);

/* What a counterset's instance type means for the query. */
typedef struct pcw__q_itype {
    uint8_t named;   /* instances have names (paths need "(instance)") */
    uint8_t total;   /* a _Total over every instance */
    uint8_t global;  /* every instance combined into one, unnamed */
    uint8_t by_name; /* instances of one name combined */
    uint8_t history; /* totals keep departed instances' contributions */
    uint8_t known;   /* a type this layer understands */
} pcw__q_itype;
pcw__q_itype pcw__q_instance_type(uint32_t instance_type);

#endif /* PCW_QUERY_AGGREGATE_H */
