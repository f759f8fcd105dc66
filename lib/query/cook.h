/* SPDX-License-Identifier: MIT */
/*
 * lib/query/cook.h - cook.c's side for the other modules: the formula
 * families, recipes (a raw sample from a row) and the finishing steps of
 * pcw_cook.
 */
#ifndef PCW_QUERY_COOK_H
#define PCW_QUERY_COOK_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/query.h"

/* pcw's system time base: CLOCK_MONOTONIC nanoseconds. */
#define PCWQ_SYS_FREQ   1000000000ull
#define PCWQ_100NS_FREQ 10000000ull

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
    PCWQ_F_MULTI,         /* ((X1 - X0) / (Y1 - Y0)) / B1 */
    PCWQ_F_MULTI_INV,     /* (B1 - (X1 - X0) / (Y1 - Y0)) / B1 */
};
int pcwq_formula(uint32_t type);
double pcwq_pow10(int32_t e);
/* Formula family f (PCWQ_F_*) on now and prev (NULL: none), before the
 * percent, cap, scale and x1000 of pcw_cook: the value is *part / *whole,
 * where whole is the base (B, B1 - B0, the multi count, Y1 - Y0 of a ratio)
 * and 1 for a formula that is not a fraction. A total pools parts and
 * wholes (totals.c). Returns the pcw_cstatus; now->status is not looked at. */
int pcwq_cook_parts(int f, const pcw_raw *now, const pcw_raw *prev, double *part, double *whole);
/* pcw_cook's last step: x100 and cap for a percentage, 10^scale, x1000. */
int pcwq_finish(uint32_t type, double v, int32_t scale, unsigned flags, double *value);
/* pcwq_finish after its x100: the cap, 10^scale, x1000 (a logged total's
 * value, lib/history/cook.c, is finished with it). */
int pcwq_finish_percent(uint32_t type, double v, int32_t scale, unsigned flags, double *value);

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

#endif /* PCW_QUERY_COOK_H */
