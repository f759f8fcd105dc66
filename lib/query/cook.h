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

#include "pcw/pdh.h"

/* pcw's system time base: CLOCK_MONOTONIC nanoseconds. */
#define PCW__Q_SYS_FREQ   1000000000ull
#define PCW__Q_100NS_FREQ 10000000ull

/* The formula families of pcw_cook. */
enum {
    PCW__Q_F_NONE = 0,      /* no displayable value */
    PCW__Q_F_RAW,           /* X */
    PCW__Q_F_RAW_FRACTION,  /* X / B */
    PCW__Q_F_ELAPSED,       /* (Y - X) / TB */
    PCW__Q_F_RATE,          /* (X1 - X0) / ((Y1 - Y0) / TB) */
    PCW__Q_F_DELTA,         /* X1 - X0 */
    PCW__Q_F_RATIO,         /* (X1 - X0) / (Y1 - Y0) */
    PCW__Q_F_AVERAGE_TIMER, /* ((X1 - X0) / TB) / (B1 - B0) */
    PCW__Q_F_INVERSE,       /* 1 - (X1 - X0) / (Y1 - Y0) */
    PCW__Q_F_MULTI,         /* ((X1 - X0) / (Y1 - Y0)) / B1 */
    PCW__Q_F_MULTI_INV,     /* (B1 - (X1 - X0) / (Y1 - Y0)) / B1 */
};
int pcw__q_formula(uint32_t type);
double pcw__q_pow10(int32_t e);
/* Formula family f (PCW__Q_F_*) on now and prev (NULL: none), before the
 * percent, cap, scale and x1000 of pcw_cook: the value is *part / *whole,
 * where whole is the base (B, B1 - B0, the multi count, Y1 - Y0 of a ratio)
 * and 1 for a formula that is not a fraction. A total pools parts and
 * wholes (totals.c). Returns the pcw_cstatus; now->status is not looked at. */
int pcw__q_cook_parts(int f, const pcw_raw *now, const pcw_raw *prev, double *part, double *whole);
/* pcw_cook's last step: x100 and cap for a percentage, 10^scale, x1000. */
int pcw__q_finish(uint32_t type, double v, int32_t scale, unsigned flags, double *value);
/* pcw__q_finish after its x100: the cap, 10^scale, x1000 (a logged total's
 * value, lib/query/logcook.c, is finished with it). */
int pcw__q_finish_percent(uint32_t type, double v, int32_t scale, unsigned flags, double *value);

/* Where a sample's denominator ("second") comes from. */
enum {
    PCW__Q_Y_NONE = 0,
    PCW__Q_Y_SYSTIME, /* the read's CLOCK_MONOTONIC ns */
    PCW__Q_Y_100NS,   /* the same / 100 */
    PCW__Q_Y_COUNTER, /* the perf_time_id counter (object time) */
    PCW__Q_Y_BASE,    /* the base counter */
};

/* How to make a pcw_raw for one counter from a row of values. */
typedef struct pcw__q_recipe {
    uint32_t type;
    uint8_t formula; /* PCW__Q_F_* */
    uint8_t second;  /* PCW__Q_Y_* */
    int status;      /* PCW_CSTATUS_VALID, or NO_BASE when a reference is missing */
    int32_t value, base, multi, time, freq_ctr; /* counter indexes; -1 = none */
    uint64_t freq;                              /* constant TB when freq_ctr < 0 */
} pcw__q_recipe;
void pcw__q_recipe_build(const pcw_counterset *cs, uint32_t k, pcw__q_recipe *r);

/* Where counter k sits in a row: byte offset and size (4 or 8). The
 * snapshot's rows use the counterset's layout; totals use a "wide" one,
 * every counter 8 bytes at 8 * k, since a sum of 4-byte values needs 8. */
typedef struct pcw__q_layout {
    const uint32_t *off;
    const uint8_t *size;
} pcw__q_layout;

static inline uint64_t pcw__q_load(const unsigned char *row, const pcw__q_layout *l, uint32_t k)
{
    const unsigned char *p = row + l->off[k];
    if (l->size[k] == 8)
        return *(const uint64_t *)(const void *)p;
    return *(const uint32_t *)(const void *)p;
}

void pcw__q_raw_from_row(const pcw__q_recipe *r, const unsigned char *row, const pcw__q_layout *lay,
                         uint64_t time_ns, pcw_raw *out);

#endif /* PCW_QUERY_COOK_H */
