/* SPDX-License-Identifier: MIT */
/*
 * tests/test_hist_cook.c - all the statistics of one distribution from
 * one walk (pcw__q_hist_cook_many, lib/query/histogram.c: the non-empty
 * buckets visited through a bitmap) against the walks of one statistic at
 * a time (pcw__q_hist_cook: the quantile's bucket from either end) and, for
 * the mean's check that the sum is one the buckets can hold, against a
 * plain reference written here from the buckets' bounds - for
 * distributions with few or many non-empty buckets anywhere in the range,
 * sums at and beyond the limits, and spans of every width (up to 8,192
 * buckets: the bitmap's words). And the values of record: the statistics
 * of 3,900 distributions at every schema, hashed, are those the code
 * computed before this session's changes (so a faster path that moves a
 * quantile by one ulp fails here).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pcw/histogram.h"
#include "query/histogram.h"

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* The mean's check, plainly: every bucket's bounds (pcw_hist_bucket_bounds),
 * the sum of the lower and the upper bounds, two observations of the
 * highest non-empty bucket either side, no upper limit once the last
 * bucket holds any (histogram.c, sum_consistent's rule). */
static int ref_consistent(const pcw_hist_dist *d, double sum)
{
    double lo = 0.0, hi = 0.0, top = 0.0, l, u;
    if (d->zero) {
        pcw_hist_bucket_bounds(d->shape, UINT32_MAX, NULL, &u);
        hi = (double)d->zero * u, top = u;
    }
    for (uint32_t j = 0; j < d->nbuckets; j++) {
        if (!d->buckets[j])
            continue;
        pcw_hist_bucket_bounds(d->shape, j, &l, &u);
        top = u;
        lo += (double)d->buckets[j] * l;
        hi += (double)d->buckets[j] * u;
    }
    if (d->buckets[d->nbuckets - 1])
        hi = INFINITY;
    return sum >= lo - 2.0 * top && sum <= hi + 2.0 * top;
}

static void check_shape(uint32_t shape, uint64_t *seed, int reps)
{
    static uint64_t b[PCW_HIST_MAX_BUCKETS];
    static const pcw_hist_stat st[] = {
        {PCW_HSTAT_RATE, 0},         {PCW_HSTAT_MEAN, 0},       {PCW_HSTAT_QUANTILE, 0.001},
        {PCW_HSTAT_QUANTILE, 0.5},   {PCW_HSTAT_QUANTILE, 0.9}, {PCW_HSTAT_QUANTILE, 0.99},
        {PCW_HSTAT_QUANTILE, 0.999}, {PCW_HSTAT_MAX, 0},        {PCW_HSTAT_SUM, 0},
        {PCW_HSTAT_QUANTILE, 1.0},
    };
    enum { NST = sizeof st / sizeof st[0] };
    uint32_t n = pcw_hist_nbuckets(shape);
    for (int rep = 0; rep < reps; rep++) {
        memset(b, 0, n * sizeof *b);
        pcw_hist_dist d = {.shape = shape, .nbuckets = n, .buckets = b};
        d.status = PCW_CSTATUS_VALID, d.interval_ns = 1000000000;
        d.zero = rng(seed) % 3 ? 0 : rng(seed) % 5;
        uint32_t lo = (uint32_t)(rng(seed) % n), w = 1 + (uint32_t)(rng(seed) % (n - lo));
        uint32_t dens = 1 + (uint32_t)(rng(seed) % 64); /* 1 in dens non-empty */
        uint64_t count = d.zero;
        double mid = 0.0;
        for (uint32_t j = lo; j < lo + w; j++)
            if (j == lo || rng(seed) % dens == 0) {
                b[j] = 1 + rng(seed) % 20;
                count += b[j];
                double l, u;
                pcw_hist_bucket_bounds(shape, j, &l, &u);
                mid += (double)b[j] * (l + u) / 2;
            }
        d.count = count;
        /* A sum the buckets hold, or one far off either way, or 0. */
        double sum = rng(seed) % 4 == 0   ? mid * (rng(seed) % 2 ? 0.01 : 100.0)
                     : rng(seed) % 8 == 0 ? 0.0
                                          : mid;
        d.sum = (uint64_t)(sum * 1e9); /* ns; the check sees sum * 1e-9 */
        pcw__q_hspan sp = {n, 0};
        for (uint32_t j = 0; j < n; j++)
            if (b[j])
                sp.lo = sp.lo < j ? sp.lo : j, sp.hi = j + 1;
        double v[NST];
        int rc[NST];
        pcw__q_hist_cook_many(&d, &sp, st, NST, v, rc);
        for (int i = 0; i < NST; i++) {
            double one;
            int r1 = pcw__q_hist_cook(&d, &sp, &st[i], &one);
            cr_assert_eq(rc[i], r1, "shape %#x rep %d stat %d: %d, one at a time %d", shape, rep, i,
                         rc[i], r1);
            cr_assert_eq(v[i], one, "shape %#x rep %d stat %d: %.17g, one at a time %.17g", shape,
                         rep, i, v[i], one);
        }
        int want = ref_consistent(&d, (double)d.sum * 1e-9);
        cr_assert_eq(rc[1] != PCW_CSTATUS_INCONSISTENT, want, "shape %#x rep %d: mean %d", shape,
                     rep, rc[1]);
        cr_assert_eq(rc[8] != PCW_CSTATUS_INCONSISTENT, want, "shape %#x rep %d: sum %d", shape,
                     rep, rc[8]);
    }
}

Test(hist_cook, all_statistics_from_one_walk_are_each_ones)
{
    uint64_t seed = 2718281828459045ull;
    check_shape(PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12), &seed, 3000); /* 336 */
    check_shape(PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 0, -2, 60), &seed, 2000);  /* 62 */
    check_shape(PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 0, 0, 1), &seed, 200);     /* 1 */
    check_shape(PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 7, -30, 34), &seed, 100);  /* 8,192 */
}

/* The statistics of many distributions at every schema, as one hash of
 * their values' bits and statuses. */
static uint64_t record_hash(void)
{
    static uint64_t b[PCW_HIST_MAX_BUCKETS];
    static const pcw_hist_stat st[] = {
        {PCW_HSTAT_QUANTILE, 0.001}, {PCW_HSTAT_QUANTILE, 0.1},   {PCW_HSTAT_QUANTILE, 0.5},
        {PCW_HSTAT_QUANTILE, 0.9},   {PCW_HSTAT_QUANTILE, 0.99},  {PCW_HSTAT_QUANTILE, 0.999},
        {PCW_HSTAT_QUANTILE, 1.0},   {PCW_HSTAT_QUANTILE, 0.333}, {PCW_HSTAT_MEAN, 0},
        {PCW_HSTAT_MAX, 0},
    };
    uint64_t h = 14695981039346656037ull, seed = 31415926535ull;
    for (int s = PCW_HIST_SCHEMA_MIN; s <= PCW_HIST_SCHEMA_MAX; s++) {
        int m = s >= 0 ? 1 : 1 << -s;
        int lo_e = -40 / m * m, hi_e = lo_e + (s > 5 ? 16 : 64) / m * m;
        uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, s, lo_e, hi_e);
        uint32_t n = pcw_hist_nbuckets(shape);
        for (int rep = 0; rep < 300; rep++) {
            memset(b, 0, n * sizeof *b);
            uint64_t zero = rng(&seed) % 4 ? 0 : rng(&seed) % 7, sum = 0;
            uint32_t k = 1 + (uint32_t)(rng(&seed) % 40);
            for (uint32_t i = 0; i < k; i++) {
                uint32_t j = (uint32_t)(rng(&seed) % n);
                uint64_t c = 1 + rng(&seed) % 1000;
                b[j] += c;
                double l, u;
                pcw_hist_bucket_bounds(shape, j, &l, &u);
                sum += (uint64_t)(c * (l + u) / 2 * 1e9);
            }
            pcw_hist_dist d = {PCW_CSTATUS_VALID, shape, n, zero, b, 0, sum, 1000000000};
            for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
                double v;
                int rc = pcw_hist_cook(&d, &st[i], &v);
                uint64_t bits;
                memcpy(&bits, &v, 8);
                h = (h ^ bits ^ (uint64_t)rc << 56) * 1099511628211ull;
            }
        }
    }
    return h;
}

/* The hash of record_hash() as computed by lib/query/histogram.c at
 * cea4a28 (before the span from the copy loop, the bitmap walks and the
 * division by 2^s as a multiplication): the same doubles, bit for bit. */
#define RECORD_HASH 0x87cf038fa16f97dbull

Test(hist_cook, values_are_those_of_record)
{
    uint64_t h = record_hash();
    cr_assert_eq(h, RECORD_HASH, "statistics hash %#llx, of record %#llx", (unsigned long long)h,
                 RECORD_HASH);
}
