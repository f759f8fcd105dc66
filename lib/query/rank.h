/* SPDX-License-Identifier: MIT */
/*
 * lib/query/rank.h - the first `want` instances of a column in order,
 * kept from a stream of (value, instance) pairs in bounded memory
 * (pcw_pdh_collect_top: fed by the read's runs in collect_rows.c, or by a
 * walk over the column after the read).
 *
 * Keys are (s * value, instance), s = -1 for descending, +1 ascending
 * (a negation: exact), compared ascending: the order pcw_pdh_collect_top
 * promises, equal values by instance index. The stream's keys no worse
 * than the threshold go into a buffer of `room` (> want); a full buffer
 * is cut back to its best `want` by a quickselect and the threshold
 * becomes the want-th key. Starting from a bound (thr = (s * bound,
 * SIZE_MAX): every value that reaches it passes), few keys pass at all.
 * O(stream) time whatever the order of the keys (a cut-back costs
 * O(room) and comes after room - want new keys), O(room) memory.
 */
#ifndef PCW_QUERY_RANK_H
#define PCW_QUERY_RANK_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/pdh.h"

typedef struct pcw__q_rank {
    pcw_pdh_ranked *buf; /* keys: value holds s * value until pcw__q_rank_end */
    size_t n, room, want;
    double s;     /* -1 descending, +1 ascending */
    double tv;    /* the threshold: keys (v, i) > (tv, ti) are dropped */
    size_t ti;    /* ...SIZE_MAX with tv = +inf: none yet */
    int bounded;  /* tv came from the caller's bound (maybe wrong) */
    int cut;      /* a cut-back happened: want keys passed */
    uint64_t rng; /* the quickselect's pivots */
} pcw__q_rank;

/* Start a ranking of `want` (> 0) into buf (room entries, room > want).
 * bound: NaN for none. */
void pcw__q_rank_start(pcw__q_rank *r, pcw_pdh_ranked *buf, size_t room, size_t want,
                       int descending, double bound);

/* Cut the buffer back to its best `want` (it is full). */
void pcw__q_rank_cut(pcw__q_rank *r);

/* Offer value v of instance i (instances offered in increasing order or
 * not: any). */
static inline void pcw__q_rank_offer(pcw__q_rank *r, double v, size_t i)
{
    double k = r->s * v;
    if (k > r->tv || (k == r->tv && i > r->ti) || k != k) /* k != k: NaN, not ranked */
        return;
    r->buf[r->n].value = k;
    r->buf[r->n].instance = i;
    if (++r->n == r->room)
        pcw__q_rank_cut(r);
}

/* Did every instance that belongs in the first `want` get offered past
 * the threshold? Not when a bound was given and fewer than want keys
 * reached it (the bound was wrong: rank again without it). */
static inline int pcw__q_rank_complete(const pcw__q_rank *r)
{
    return !r->bounded || r->cut || r->n >= r->want;
}

/* The first min(want, keys) in order into out (room for want), values
 * as they were; returns how many. */
size_t pcw__q_rank_end(pcw__q_rank *r, pcw_pdh_ranked *out);

/* The values of column k of rows [0, nrows) of x (an 8-byte plain value
 * every `stride` bytes; instance index first + row), converted as
 * pcw_pdh_cook_column converts them, offered. */
void pcw__q_rank_plain(pcw__q_rank *r, const unsigned char *x, size_t nrows, size_t stride,
                       size_t first);

#endif /* PCW_QUERY_RANK_H */
