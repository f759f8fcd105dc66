/* SPDX-License-Identifier: MIT */
/*
 * lib/query/hist_query.c - the distributions of a query's histograms: an
 * instance's interval (the per-bucket difference of its two last samples,
 * as a rate is the difference of two counts), a total's (its members'
 * intervals merged, bucket by bucket), their statistics as values, and
 * pcw_pdh_get_histogram.
 *
 * A total merges only members that have a valid interval of their own
 * (two samples, no reset), as totals.c does for every other counter: a
 * member coming, going or restarting never makes buckets up. Its interval
 * is the set's (the latest read of this collection minus the last one's).
 *
 * Cost: one pass over an instance's two copies of the words (O(buckets)),
 * a total's over each member's; the handle keeps the last distribution,
 * so the statistics of one value (pcwstat's seven columns) share it. In
 * a steady set, the values were cooked as the rows were read
 * (hist_fused.c) and pcw__q_hist_value takes them from there.
 */
#include <stdlib.h>
#include <string.h>

#include "hist_fused.h"
#include "hist_query.h"
#include "histogram.h"
#include "pcw/histogram.h"
#include "rows.h"
#include "snaprows.h"

void pcw__q_hcache_free(pcw__q_hcache *hc)
{
    if (!hc)
        return;
    free(hc->buf);
    free(hc->tmp);
    free(hc);
}

static int cache_room(pcw__q_hcache *hc, uint32_t n)
{
    if (hc->cap >= n && hc->buf)
        return 0;
    uint64_t *b = realloc(hc->buf, (n ? n : 1) * sizeof *b);
    if (!b)
        return -1;
    hc->buf = b;
    uint64_t *t = realloc(hc->tmp, (n ? n : 1) * sizeof *t);
    if (!t)
        return -1;
    hc->tmp = t;
    hc->cap = n;
    return 0;
}

static const uint64_t *words_at(const unsigned char *row, uint32_t off)
{
    return (const uint64_t *)(const void *)(row + off);
}

/* Instance e's distribution into d (buckets in `buf`). */
static void instance_dist(const pcw__q_set *s, uint32_t e, uint32_t k, int cumulative,
                          uint64_t *buf, pcw_hist_dist *d, pcw__q_hspan *sp)
{
    pcw__q_rows w;
    pcw__q_entry_rows(s, e, &w);
    uint32_t shape = s->hshape[k];
    memset(d, 0, sizeof *d);
    sp->lo = pcw_hist_nbuckets(shape), sp->hi = 0;
    if (!w.row) {
        d->status = w.status;
        return;
    }
    if (!cumulative && !w.prow) {
        d->status = PCW_CSTATUS_NEW_DATA_NEEDED;
        return;
    }
    pcw__q_hist_interval(shape, words_at(w.row, s->off[k]),
                         cumulative ? NULL : words_at(w.prow, s->off[k]), buf, d, sp);
    if (!cumulative)
        d->interval_ns = w.t > w.pt ? w.t - w.pt : 0;
}

/* Total a's: its live members' distributions merged. */
static void total_dist(const pcw__q_set *s, uint32_t a, uint32_t k, int cumulative, uint64_t *buf,
                       uint64_t *tmp, pcw_hist_dist *d, pcw__q_hspan *sp)
{
    const pcw__q_agg *g = &s->aggs[a];
    uint32_t shape = s->hshape[k], n = pcw_hist_nbuckets(shape);
    memset(d, 0, sizeof *d);
    sp->lo = n, sp->hi = 0;
    d->shape = shape, d->nbuckets = n, d->buckets = buf;
    if (s->aggfn[k] != PCW_AGGREGATE_TOTAL) {
        d->status = PCW_CSTATUS_NOT_AGGREGATED;
        return;
    }
    if (!cumulative && !g->had_row) {
        d->status = PCW_CSTATUS_NEW_DATA_NEEDED; /* the total's first sample */
        return;
    }
    memset(buf, 0, (size_t)n * sizeof *buf);
    int first_bad = PCW_CSTATUS_VALID, over = 0;
    size_t members = 0;
    for (size_t o = 0; o < s->ins.norder; o++) {
        uint32_t j = s->ins.order[o];
        const pcw__q_inst *x = &s->ins.inst[j];
        if (x->row < 0 || (s->it.by_name && x->agg != a))
            continue;
        pcw_hist_dist m;
        pcw__q_hspan msp;
        instance_dist(s, j, k, cumulative, tmp, &m, &msp);
        if (m.status != PCW_CSTATUS_VALID) {
            if (first_bad == PCW_CSTATUS_VALID)
                first_bad = m.status;
            continue;
        }
        over |= pcw__q_hist_add(d, buf, sp, &m, &msp) != PCW_CSTATUS_VALID;
        members++;
    }
    if (!members && first_bad != PCW_CSTATUS_VALID) {
        d->status = first_bad; /* members, none with an interval yet */
        return;
    }
    d->status = over ? PCW_CSTATUS_OVERFLOW : PCW_CSTATUS_VALID;
    int b = s->cur;
    if (!cumulative)
        d->interval_ns =
            s->tot.atime[b] > s->tot.atime[b ^ 1] ? s->tot.atime[b] - s->tot.atime[b ^ 1] : 0;
}

const pcw__q_hcache *pcw__q_hist_entry(const pcw_pdh_counter *h, const pcw__q_set *s, uint32_t e,
                                       uint32_t k, int cumulative)
{
    pcw__q_hcache *hc = h->hc;
    if (!hc)
        return NULL;
    if (hc->have && hc->collections == h->q->collections && hc->epoch == s->epoch && hc->set == s &&
        hc->e == e && hc->k == k && hc->cumulative == (uint32_t)cumulative)
        return hc;
    hc->have = 0;
    if (cache_room(hc, pcw_hist_nbuckets(s->hshape[k])))
        return NULL;
    if (e & PCW__Q_ENT_AGG)
        total_dist(s, e & ~PCW__Q_ENT_AGG, k, cumulative, hc->buf, hc->tmp, &hc->d, &hc->sp);
    else
        instance_dist(s, e, k, cumulative, hc->buf, &hc->d, &hc->sp);
    hc->have = 1;
    hc->collections = h->q->collections, hc->epoch = s->epoch;
    hc->set = s, hc->e = e, hc->k = k, hc->cumulative = (uint32_t)cumulative;
    return hc;
}

int pcw__q_hist_value(const pcw_pdh_counter *h, const pcw__q_set *s, uint32_t e, uint32_t k,
                      const pcw_hist_stat *st, unsigned flags, double *v)
{
    *v = 0.0;
    int rc;
    if (!pcw__q_hpre_value(s, e, k, st, flags, v, &rc)) {
        const pcw__q_hcache *hc = pcw__q_hist_entry(h, s, e, k, (flags & PCW_FMT_RAW) != 0);
        if (!hc)
            return PCW_CSTATUS_OVERFLOW; /* out of memory: no number */
        const pcw_hist_dist *d = &hc->d;
        if ((flags & PCW_FMT_RAW) && st->kind == PCW_HSTAT_RATE && d->status == PCW_CSTATUS_VALID)
            return PCW_CSTATUS_NO_DATA; /* no rate since the start */
        rc = pcw__q_hist_cook(d, &hc->sp, st, v);
    }
    if ((rc == PCW_CSTATUS_VALID || rc == PCW_CSTATUS_ABOVE_RANGE) && (flags & PCW_FMT_1000))
        *v *= 1000.0;
    return rc;
}
