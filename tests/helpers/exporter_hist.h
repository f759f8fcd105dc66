/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/exporter_hist.h - what the exporter's histogram tests
 * share: observations with a known distribution for
 * tests/helpers/exporter_hist_provider.c, their true quantile, and the
 * provider's shape. Include after testutil.h and criterion.h.
 */
#ifndef PCW_TESTS_EXPORTER_HIST_H
#define PCW_TESTS_EXPORTER_HIST_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <pcw/histogram.h>

#include "exporter_test.h"

/* exporter_hist_provider's Latency: nanoseconds, schema 3, 2^-30 .. 2^12 s. */
#define EH_SHAPE PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12)
#define EH_N     20000

/* splitmix64: a fixed seed gives the same values on every run. */
static inline uint64_t eh_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* n latencies in nanoseconds, log-normal: median 2 ms, sigma 0.6 (a
 * request's latency as web servers see it), from a fixed seed. */
static inline void eh_values(uint64_t *v, size_t n)
{
    uint64_t s = 27;
    for (size_t i = 0; i < n; i++) {
        double u1 = ((double)(eh_next(&s) >> 11) + 1) / 9007199254740993.0; /* (0, 1] */
        double u2 = (double)(eh_next(&s) >> 11) / 9007199254740992.0;
        double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
        v[i] = (uint64_t)llround(2e6 * exp(0.6 * z));
    }
}

static inline int eh_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The true q-quantile of v (nanoseconds) as histogram_quantile ranks it:
 * the ceil(q * n)-th smallest value (the bucket whose cumulative count
 * first reaches q * n holds it). */
static inline uint64_t eh_quantile(const uint64_t *v, size_t n, double q)
{
    uint64_t *c = malloc(n * sizeof *c);
    cr_assert_not_null(c);
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, eh_cmp);
    size_t r = (size_t)ceil(q * (double)n);
    uint64_t x = c[r ? r - 1 : 0];
    free(c);
    return x;
}

/* Write the values for the provider; start it (ready). */
static inline void eh_provider(tu_child *c, const uint64_t *v, size_t n)
{
    char path[400];
    ex_path(path, sizeof path, "hist-values.bin");
    cr_assert_eq(tu_write_file(path, v, n * sizeof *v, 0600), 0);
    const char *args[] = {path, NULL};
    cr_assert_eq(tu_spawn(c, "exporter_hist_provider", args), 0);
    char line[256];
    cr_assert(tu_readline(c, line, sizeof line, 10000) > 0 && strncmp(line, "ready", 5) == 0,
              "exporter_hist_provider: %s", line);
}

/* The bounds (lower, upper] in seconds of the bucket of schema `schema`
 * that holds ns nanoseconds: bucket ceil(2^schema * log2(seconds)), by the
 * core's integer index. */
static inline void eh_bucket(int schema, uint64_t ns, double *lo, double *hi)
{
    uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, schema, -32, 16);
    int32_t i = pcw_hist_index(shape, ns);
    double w = schema >= 0 ? 1.0 / (1 << schema) : (double)(1 << -schema);
    *lo = exp2((i - 1) * w);
    *hi = exp2(i * w);
}

#endif /* PCW_TESTS_EXPORTER_HIST_H */
