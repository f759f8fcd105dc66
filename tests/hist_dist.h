/* SPDX-License-Identifier: MIT */
/*
 * tests/hist_dist.h - known distributions for histogram tests: a
 * splitmix64 PRNG and the draws tests/helpers/hist_provider makes, so a
 * test that tells the provider "observe ... DIST COUNT SEED" computes the
 * same observations and their exact quantiles.
 *
 * DIST (values in the histogram's observed unit, ns for a latency):
 *   const:V            every observation V
 *   uniform:LO:HI      uniform in [LO, HI)
 *   lognormal:MED:SD   exp(ln MED + SD * N(0,1))
 *   bimodal:A:B:P      around A (log sd 0.2) with probability P, else
 *                      around B (log sd 0.3)
 */
#ifndef PCW_TESTS_HIST_DIST_H
#define PCW_TESTS_HIST_DIST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct hd_rng {
    uint64_t s;
} hd_rng;

static inline uint64_t hd_next(hd_rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline double hd_uniform01(hd_rng *r)
{
    return ((double)(hd_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double hd_normal(hd_rng *r) /* Box-Muller */
{
    double u = hd_uniform01(r), v = hd_uniform01(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

/* One draw of DIST into *out: 0, or -1 if DIST is not one. */
static inline int hd_draw(hd_rng *r, const char *dist, uint64_t *out)
{
    double a, b, p, x;
    if (sscanf(dist, "const:%lf", &a) == 1)
        x = a;
    else if (sscanf(dist, "uniform:%lf:%lf", &a, &b) == 2)
        x = a + hd_uniform01(r) * (b - a);
    else if (sscanf(dist, "lognormal:%lf:%lf", &a, &b) == 2)
        x = exp(log(a) + b * hd_normal(r));
    else if (sscanf(dist, "bimodal:%lf:%lf:%lf", &a, &b, &p) == 3)
        x = hd_uniform01(r) < p ? a * exp(0.2 * hd_normal(r)) : b * exp(0.3 * hd_normal(r));
    else
        return -1;
    *out = x < 1 ? 1 : x > 1.8e19 ? UINT64_MAX : (uint64_t)x;
    return 0;
}

static inline int hd_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* COUNT draws of DIST from SEED, sorted (malloc'd; NULL on a bad DIST). */
static inline uint64_t *hd_sorted(const char *dist, size_t count, uint64_t seed)
{
    hd_rng r = {seed};
    uint64_t *v = malloc((count ? count : 1) * sizeof *v);
    for (size_t i = 0; v && i < count; i++)
        if (hd_draw(&r, dist, &v[i])) {
            free(v);
            return NULL;
        }
    if (v)
        qsort(v, count, sizeof *v, hd_cmp_u64);
    return v;
}

/* The exact q-quantile of sorted data: observation number ceil(q * n). */
static inline uint64_t hd_quantile(const uint64_t *sorted, size_t n, double q)
{
    size_t k = (size_t)ceil(q * (double)n);
    return sorted[(k < 1 ? 1 : k > n ? n : k) - 1];
}

/* The relative error bound of a quantile at a schema (docs/query.md):
 * 2^(2^-schema) - 1. */
static inline double hd_bound(int schema)
{
    return exp2(exp2(-schema)) - 1.0;
}

#endif /* PCW_TESTS_HIST_DIST_H */
