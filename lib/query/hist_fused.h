/* SPDX-License-Identifier: MIT */
/*
 * lib/query/hist_fused.h - histograms' statistics cooked as the rows are
 * read (hist_fused.c).
 */
#ifndef PCW_QUERY_HIST_FUSED_H
#define PCW_QUERY_HIST_FUSED_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/pdh.h"
#include "pdh.h"

/* Histograms' statistics cooked as the rows are read: the (counter,
 * statistic) pairs of a set the query's handles select, at most this many
 * (the rest are cooked after the collection). Like the rest of a set, a
 * pcw__q_hpre belongs to the query: used by one thread at a time (the
 * read's run callback runs on the collecting thread), no atomics. */
#define PCW__Q_HPRE_MAX 16
typedef struct pcw__q_hpre_sum {
    uint64_t count; /* the interval's observations */
    uint8_t status; /* its distribution's status */
} pcw__q_hpre_sum;
typedef struct pcw__q_hpre_cell {
    double v;
    uint8_t status;
} pcw__q_hpre_cell;
struct pcw__q_hpre {
    uint64_t gen; /* rows stamped with it were cooked by the set's last read */
    uint32_t nk, nplan;
    uint32_t ks[PCW__Q_HPRE_MAX];        /* the histogram counters cooked */
    pcw_hist_stat plan[PCW__Q_HPRE_MAX]; /* and their statistics (not rate/count) */
    uint32_t plan_k[PCW__Q_HPRE_MAX];
    uint64_t *stamp;        /* [rows] gen when row r was cooked (this read's
                               rows are all stamped: gen or 0) */
    pcw__q_hpre_sum *sum;   /* [rows][nk] by ks */
    pcw__q_hpre_cell *cell; /* [rows][nplan] by plan */
    size_t stamp_cap, sum_cap, cell_cap;
    uint64_t *scratch; /* one interval's buckets */
    uint32_t scratch_cap;
    uint32_t order[PCW__Q_HPRE_MAX]; /* ks by offset in the row (copy_run) */
    uint64_t now01[2];               /* a histogram's sum and zero bucket words */
    /* During a read. */
    const pcw__q_set *set;
    size_t next; /* the next row expected */
    int abort, active;
};
void pcw__q_hpre_free(pcw__q_hpre *p);

/* Before a read of s with `flags`, whether it cooks the
 * histograms of its handles as it reads (then read each source with
 * pcw__q_hpre_read, and call pcw__q_hpre_end after the last); after any read
 * of s, pcw__q_hpre_end. pcw__q_hpre_value: 1 and *v, *status when value
 * (e, k, st) was cooked as read, else 0. */
int pcw__q_hpre_begin(const pcw_pdh *q, pcw__q_set *s, unsigned flags);
int pcw__q_hpre_read(pcw__q_set *s, pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                     unsigned flags);
void pcw__q_hpre_end(pcw__q_set *s);
int pcw__q_hpre_value(const pcw__q_set *s, uint32_t e, uint32_t k, const pcw_hist_stat *st,
                      unsigned flags, double *v, int *status);

#endif /* PCW_QUERY_HIST_FUSED_H */
