/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/classic.h - a histogram's classic Prometheus buckets
 * (_bucket{le}) derived from its exponential ones (classic.c).
 *
 * A pcw histogram has up to 8,192 exponential buckets (pcw/histogram.h);
 * a classic histogram costs a series per `le`, so the exporter merges
 * them: the classic bounds are the bucket bounds of the coarsest-needed
 * schema c <= the histogram's schema s - every 2^(s-c)-th bound of the
 * histogram - with at most `max` finite bounds over the histogram's range.
 * Each classic bound is one of the histogram's own, so every cumulative
 * count is exact (no interpolation). The bounds are: 2^min_exp (the zero
 * bucket's), then each bound of schema c strictly between 2^min_exp and
 * 2^max_exp, then +Inf. 2^max_exp itself is not one: the last exponential
 * bucket also holds everything above it, so only +Inf counts it exactly.
 *
 * The bounds depend on the shape and `max` only, so they stay the same
 * from scrape to scrape (rate() and histogram_quantile() need that).
 * Pure: any thread, one plan per family.
 */
#ifndef PCW_EXPORTER_CLASSIC_H
#define PCW_EXPORTER_CLASSIC_H

#include <stddef.h>
#include <stdint.h>

/* The default and the limits of --histogram.classic-buckets: at schema -4
 * over the widest range (2^-64 .. 2^63) there are 8 bounds, so every
 * shape has a plan within 8. */
#define CLASSIC_DEFAULT 30u
#define CLASSIC_MIN     8u
#define CLASSIC_MAX     8193u

/* The classic buckets of one shape. */
typedef struct classic {
    int schema;    /* the classic bounds' schema c (<= the histogram's) */
    uint32_t n;    /* finite bounds (+Inf is bound n) */
    uint32_t *end; /* bound k counts words 1 .. end[k] - 1 */
    double *bound; /* bound k in the exported unit; bound[n] = +Inf */
    char *le;      /* n + 1 label values, each NUL-terminated, "+Inf" last */
    uint32_t *le_off;
} classic;

/* Plan the classic buckets of a valid shape with at most max (>=
 * CLASSIC_MIN) finite bounds. 0, or -1 when out of memory. */
int classic_plan(classic *p, uint32_t shape, unsigned max);
void classic_free(classic *p);

/* The cumulative counts of the n + 1 classic buckets from a histogram's
 * words (pcw_hist_bytes(shape) / 8 of them, as the provider wrote them):
 * cum[k] for bound k, cum[n] the count of every observation. 0, or -1
 * when the counts overflow 64 bits (a hostile segment's words). */
int classic_counts(const classic *p, const uint64_t *words, size_t nwords, uint64_t *cum);

/* 2^(i / 2^schema), the upper bound of native bucket i. */
double classic_bucket_bound(int schema, int32_t i);

#endif /* PCW_EXPORTER_CLASSIC_H */
