/* SPDX-License-Identifier: MIT */
/*
 * lib/query/hist_query.h - the distributions of a query's histograms
 * (hist_query.c): an entry's, cached in its handle, and its statistics
 * as values.
 */
#ifndef PCW_QUERY_HIST_QUERY_H
#define PCW_QUERY_HIST_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "histogram.h"
#include "pdh.h"

/* The last distribution a handle computed (hist_query.c): a value's
 * statistics, cooked one after the other, share it, and
 * pcw_pdh_get_histogram hands out its buckets. */
typedef struct pcw__q_hcache {
    int have;
    uint64_t collections, epoch; /* of the query and set it was made in */
    const void *set;
    uint32_t e, k, cumulative;
    pcw_hist_dist d;
    pcw__q_hspan sp;     /* d's non-empty buckets */
    uint64_t *buf, *tmp; /* d's buckets; a member's (totals) */
    size_t cap;
} pcw__q_hcache;

/* The distribution of counter k (a histogram) of entry e of s, in h's
 * cache (NULL: out of memory); and value (e, k) as statistic st, with
 * `flags` (PCW_FMT_RAW: of the distribution since the start). */
const pcw__q_hcache *pcw__q_hist_entry(const pcw_pdh_counter *h, const pcw__q_set *s, uint32_t e,
                                       uint32_t k, int cumulative);
int pcw__q_hist_value(const pcw_pdh_counter *h, const pcw__q_set *s, uint32_t e, uint32_t k,
                      const pcw_hist_stat *st, unsigned flags, double *v);
void pcw__q_hcache_free(pcw__q_hcache *hc);

#endif /* PCW_QUERY_HIST_QUERY_H */
