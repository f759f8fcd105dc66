/*
 * lib/query/internal.h - the query layer's private structures and helpers
 * (pcw/query.h is the public side).
 *
 *   path.c       path grammar, errors, this machine's name
 *   cook.c       formulas (pcw_cook), raw samples from rows (recipes)
 *   aggregate.c  sum/avg/min/max of raw values, with history
 *
 * Everything here belongs to one thread at a time, as the pcw_pdh that
 * owns it.
 */
#ifndef PCW_QUERY_INTERNAL_H
#define PCW_QUERY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/query.h"

/* pcw's system time base: CLOCK_MONOTONIC nanoseconds. */
#define PCWQ_SYS_FREQ   1000000000ull
#define PCWQ_100NS_FREQ 10000000ull

/* ---- path.c ------------------------------------------------------------- */

/* Fill *err (may be NULL) and return status. */
int pcwq_fail(pcw_path_error *err, int status, int part, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void pcwq_path_error_clear(pcw_path_error *err);

/* ---- cook.c ------------------------------------------------------------- */

/* The formula families of pcw_cook. */
enum {
    PCWQ_F_NONE = 0,      /* no displayable value */
    PCWQ_F_RAW,           /* X */
    PCWQ_F_RAW_FRACTION,  /* X / B */
    PCWQ_F_ELAPSED,       /* (Y - X) / TB */
    PCWQ_F_RATE,          /* (X1 - X0) / ((Y1 - Y0) / TB) */
    PCWQ_F_DELTA,         /* X1 - X0 */
    PCWQ_F_RATIO,         /* (X1 - X0) / (Y1 - Y0) */
    PCWQ_F_AVERAGE_TIMER, /* ((X1 - X0) / TB) / (B1 - B0) */
    PCWQ_F_INVERSE,       /* 1 - (X1 - X0) / (Y1 - Y0) */
    PCWQ_F_MULTI_TB,      /* ((X1 - X0) / ((Y1 - Y0) / TB)) / B1 */
    PCWQ_F_MULTI,         /* ((X1 - X0) / (Y1 - Y0)) / B1 */
    PCWQ_F_MULTI_INV_TB,  /* (B1 - (X1 - X0) / ((Y1 - Y0) / TB)) / B1 */
    PCWQ_F_MULTI_INV,     /* (B1 - (X1 - X0) / (Y1 - Y0)) / B1 */
};
int pcwq_formula(uint32_t type);
double pcwq_pow10(int32_t e);

/* Where a sample's denominator ("second") comes from. */
enum {
    PCWQ_Y_NONE = 0,
    PCWQ_Y_SYSTIME, /* the read's CLOCK_MONOTONIC ns */
    PCWQ_Y_100NS,   /* the same / 100 */
    PCWQ_Y_COUNTER, /* the perf_time_id counter (object time) */
    PCWQ_Y_BASE,    /* the base counter */
};

/* How to make a pcw_raw for one counter from a row of values. */
typedef struct pcwq_recipe {
    uint32_t type;
    uint8_t formula; /* PCWQ_F_* */
    uint8_t second;  /* PCWQ_Y_* */
    int status;      /* PCW_CSTATUS_VALID, or NO_BASE when a reference is missing */
    int32_t value, base, multi, time, freq_ctr; /* counter indexes; -1 = none */
    uint64_t freq;                              /* constant TB when freq_ctr < 0 */
} pcwq_recipe;
void pcwq_recipe_build(const pcw_counterset *cs, uint32_t k, pcwq_recipe *r);

/* Where counter k sits in a row: byte offset and size (4 or 8). The
 * snapshot's rows use the counterset's layout; totals use a "wide" one,
 * every counter 8 bytes at 8 * k, since a sum of 4-byte values needs 8. */
typedef struct pcwq_layout {
    const uint32_t *off;
    const uint8_t *size;
} pcwq_layout;

static inline uint64_t pcwq_load(const unsigned char *row, const pcwq_layout *l, uint32_t k)
{
    const unsigned char *p = row + l->off[k];
    if (l->size[k] == 8)
        return *(const uint64_t *)(const void *)p;
    return *(const uint32_t *)(const void *)p;
}

void pcwq_raw_from_row(const pcwq_recipe *r, const unsigned char *row, const pcwq_layout *lay,
                       uint64_t time_ns, pcw_raw *out);

/* ---- aggregate.c -------------------------------------------------------- */

/* An accumulator of raw values for one counter of one total. */
typedef struct pcwq_acc {
    uint64_t sum, min, max, n;
    uint32_t overflow; /* sum wrapped */
} pcwq_acc;

void pcwq_acc_reset(pcwq_acc *a);
void pcwq_acc_add(pcwq_acc *a, uint64_t v);
/* a += b (history folded into a live total). */
void pcwq_acc_merge(pcwq_acc *a, const pcwq_acc *b);
/* The total of `fn` (pcw_aggregate) over what a holds: PCW_CSTATUS_VALID
 * and *out, or NOT_AGGREGATED (fn undefined), OVERFLOW (the sum wrapped),
 * NO_INSTANCE (average, minimum or maximum of nothing). The average is
 * rounded to the nearest integer (raw values are integers). */
int pcwq_acc_result(const pcwq_acc *a, uint32_t fn, uint64_t *out);

/* The aggregate function each counter of cs is totalled with: its own
 * attribute, or - when that is undefined - the function of a counter that
 * uses it as base or multi count, or "max" for a time or frequency
 * counter (perf_time_id / perf_freq_id). fn[cs->counter_count]. */
void pcwq_aggregate_functions(const pcw_counterset *cs, uint32_t *fn);

/* Instance types this layer knows. The first five are in pcw/types.h; the
 * last three are being added to it by another change with exactly these
 * names and values.
 * TODO(types.h): remove this private fallback once PCW_INSTANCE_AGGREGATE,
 * PCW_MULTI_AGGREGATE_HISTORY and PCW_INSTANCE_AGGREGATE_HISTORY are in
 * pcw/types.h. */
enum {
    PCWQ_INSTANCE_AGGREGATE = 5,         /* "instanceAggregate" */
    PCWQ_MULTI_AGGREGATE_HISTORY = 6,    /* "multipleAggregateHistory" */
    PCWQ_INSTANCE_AGGREGATE_HISTORY = 7, /* "instanceAggregateHistory" */
};

/* What a counterset's instance type means for the query. */
typedef struct pcwq_itype {
    uint8_t named;   /* instances have names (paths need "(instance)") */
    uint8_t total;   /* a _Total over every instance */
    uint8_t global;  /* every instance combined into one, unnamed */
    uint8_t by_name; /* instances of one name combined */
    uint8_t history; /* totals keep departed instances' contributions */
    uint8_t known;   /* a type this layer understands */
} pcwq_itype;
pcwq_itype pcwq_instance_type(uint32_t instance_type);

#endif /* PCW_QUERY_INTERNAL_H */
