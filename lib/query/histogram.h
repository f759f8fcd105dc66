/* SPDX-License-Identifier: MIT */
/*
 * lib/query/histogram.h - histogram.c's side for the other modules:
 * selecting statistics by name, a distribution between two copies of a
 * histogram's words, its statistics, adding distributions (the public side
 * is pcw/histogram.h).
 */
#ifndef PCW_QUERY_HISTOGRAM_H
#define PCW_QUERY_HISTOGRAM_H

#include <stdint.h>

#include "pcw/pdh.h"

/* The statistics a bare histogram name (or a wildcard) selects, in order:
 * rate mean p50 p90 p99 p99.9 max. */
#define PCW__Q_HIST_NDEFAULT 7
extern const pcw_hist_stat pcw__q_hist_defaults[PCW__Q_HIST_NDEFAULT];
/* How the counter part `pat` (with wildcards when `wild`) selects the
 * counter `name` of `type`: 0 not at all; 1 as itself (st[0].kind 0: not
 * a histogram) or one statistic of a histogram ("Latency:p99", st[0]);
 * PCW__Q_HIST_NDEFAULT, the default statistics of a histogram the whole
 * pattern names (st[PCW__Q_HIST_NDEFAULT]). The whole name is tried first,
 * so a counter named "a:max" is itself. *bad_stat (may be NULL) is set
 * when the pattern names the histogram but what follows ':' is no
 * statistic. */
int pcw__q_hist_select(const char *pat, int wild, const char *name, uint32_t type,
                       pcw_hist_stat *st, int *bad_stat);
/* Where a distribution's non-empty buckets lie: every bucket below lo and
 * from hi on is empty (lo = nbuckets, hi = 0: all are). The statistics
 * look at [lo, hi) only: a p99 or a max does not walk the empty top of
 * the range, nor a p50 its empty bottom. */
typedef struct pcw__q_hspan {
    uint32_t lo, hi;
} pcw__q_hspan;
/* The distribution between two copies of a histogram's words (prev NULL:
 * now as it stands) into d, its buckets into `buckets` (nbuckets of the
 * shape) and where they are non-empty into sp: RESET if a bucket went
 * down, OVERFLOW if the count does not fit 64 bits. Returns d->status. */
int pcw__q_hist_interval(uint32_t shape, const uint64_t *now, const uint64_t *prev,
                         uint64_t *buckets, pcw_hist_dist *d, pcw__q_hspan *sp);
/* pcw__q_hist_interval's end, for a caller that computed the deltas
 * itself (hist_fused.c, as it copies the rows): buckets holds them,
 * `fast` and `count` are what deltas_fast would say of them (fast: the
 * OR of every delta and every word of prev is below 2^50; count: their
 * sum), and span (NULL: found here) where they are non-zero. Only now[0]
 * and now[1] (the sum and the zero bucket) are read of now. */
int pcw__q_hist_from_deltas(uint32_t shape, const uint64_t *now, const uint64_t *prev,
                            uint64_t *buckets, int fast, uint64_t count, const pcw__q_hspan *span,
                            pcw_hist_dist *d, pcw__q_hspan *sp);
/* pcw_hist_cook of a distribution the query made (shape, count and span
 * trusted: pcw__q_hist_interval's, pcw__q_hist_add's). */
int pcw__q_hist_cook(const pcw_hist_dist *d, const pcw__q_hspan *sp, const pcw_hist_stat *st,
                     double *value);
/* n (at most PCW__Q_HIST_COOK_MANY) statistics of one distribution, each
 * into v[i] and its status into rc[i]: pcw__q_hist_cook's numbers, from one
 * walk up the buckets for all the quantiles and one sum check. */
#define PCW__Q_HIST_COOK_MANY 16
void pcw__q_hist_cook_many(const pcw_hist_dist *d, const pcw__q_hspan *sp, const pcw_hist_stat *st,
                           uint32_t n, double *v, int *rc);
/* acc += d (same shape; acc's buckets are acc_buckets, writable, its span
 * acc_sp; d's span dsp): VALID or OVERFLOW (a bucket or the count
 * wrapped). */
int pcw__q_hist_add(pcw_hist_dist *acc, uint64_t *acc_buckets, pcw__q_hspan *acc_sp,
                    const pcw_hist_dist *d, const pcw__q_hspan *dsp);

#endif /* PCW_QUERY_HISTOGRAM_H */
