/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/classic.c - classic buckets from exponential ones
 * (classic.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcw/histogram.h>

#include "classic.h"

double classic_bucket_bound(int schema, int32_t i)
{
    /* exp2 of an integer is exact; a fractional exponent rounds, the same
     * every time. */
    return schema >= 0 ? exp2((double)i / (double)(1 << schema)) : exp2((double)i * (1 << -schema));
}

/* Finite bounds with every m-th exponential bound: min_index itself and
 * the multiples of m strictly between min_index and max_index. */
static uint32_t bounds_with(int32_t lo, int32_t hi, int32_t m)
{
    uint32_t n = 1;
    for (int32_t i = lo + 1; i < hi; i++)
        n += i % m == 0;
    return n;
}

/* The shortest decimal that reads back as v ("0.25", "9.5367431640625e-07"). */
static int shortest(char *out, size_t cap, double v)
{
    int n = 0;
    for (int prec = 1; prec <= 17; prec++) {
        n = snprintf(out, cap, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            break;
    }
    return n;
}

int classic_plan(classic *p, uint32_t shape, unsigned max)
{
    memset(p, 0, sizeof *p);
    int s = pcw_hist_schema(shape);
    int32_t lo = pcw_hist_min_index(shape);
    int32_t hi = lo + (int32_t)pcw_hist_nbuckets(shape);
    /* The finest schema c <= s within max: m = 2^(s - c). */
    int c = s;
    while (c > PCW_HIST_SCHEMA_MIN && bounds_with(lo, hi, (int32_t)1 << (s - c)) > max)
        c--;
    int32_t m = (int32_t)1 << (s - c);
    uint32_t n = bounds_with(lo, hi, m);
    p->schema = c;
    p->n = n;
    p->end = malloc((n + 1) * sizeof *p->end);
    p->bound = malloc((n + 1) * sizeof *p->bound);
    p->le_off = malloc((n + 1) * sizeof *p->le_off);
    p->le = malloc((size_t)(n + 1) * 32);
    if (!p->end || !p->bound || !p->le_off || !p->le) {
        classic_free(p);
        return -1;
    }
    uint32_t k = 0;
    size_t at = 0;
    for (int32_t i = lo; i < hi; i++) {
        if (i != lo && i % m != 0)
            continue;
        /* Native bucket i is word 2 + (i - lo - 1): bound i counts words
         * 1 .. 2 + (i - lo - 1). */
        p->end[k] = (uint32_t)(i - lo) + 2;
        p->bound[k] = classic_bucket_bound(s, i);
        p->le_off[k] = (uint32_t)at;
        at += (size_t)shortest(p->le + at, 31, p->bound[k]) + 1;
        k++;
    }
    p->end[n] = 2 + pcw_hist_nbuckets(shape);
    p->bound[n] = INFINITY;
    p->le_off[n] = (uint32_t)at;
    memcpy(p->le + at, "+Inf", 5);
    return 0;
}

void classic_free(classic *p)
{
    free(p->end);
    free(p->bound);
    free(p->le);
    free(p->le_off);
    memset(p, 0, sizeof *p);
}

int classic_counts(const classic *p, const uint64_t *words, size_t nwords, uint64_t *cum)
{
    uint64_t sum = 0;
    size_t w = 1;
    for (uint32_t k = 0; k <= p->n; k++) {
        for (; w < p->end[k] && w < nwords; w++)
            if (__builtin_add_overflow(sum, words[w], &sum))
                return -1;
        cum[k] = sum;
    }
    return 0;
}
