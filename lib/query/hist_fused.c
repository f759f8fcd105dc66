/* SPDX-License-Identifier: MIT */
/*
 * lib/query/hist_fused.c - histograms' statistics cooked while the rows
 * are read (docs/performance.md, "Histograms: cooking").
 *
 * An instance's interval needs every word of its row in this sample and
 * in the last one. Cooked after the collection, each row of this sample
 * is read twice: by the segment read, then again (out of the cache, for
 * a large set) by the interval. Here the segment read hands each
 * validated run of rows over as it copies it (lib/consumer/private.h),
 * and every statistic the query's handles ask of the set's histograms
 * (the plan) is cooked for each row of the run against the same row of
 * the last sample while the run is still in the cache; the values keep
 * (pcw__q_hpre_value) until the next read of the set. Where the read
 * copies with 16-byte loads, the query copies the runs itself (copy_run):
 * each histogram's deltas are taken in the loop that copies its words, so
 * this sample's rows are never read back (docs/performance.md).
 *
 * The cooking is hist_query.c's, on the same words: a row's cooked value
 * is used only for an entry whose rows are exactly the two it was cooked
 * from (this sample's row r and the last sample's row r: a steady set),
 * and only if every row of the read was handed over once, in order
 * (a read that starts over, reads a run slot by slot or fails drops them
 * all). Anything else - a total, PCW_FMT_RAW, an instance that moved, a
 * statistic not in the plan - is cooked after the collection as before.
 */
#include <stdlib.h>
#include <string.h>

#include "consumer/private.h"
#include "hist_fused.h"
#include "histogram.h"
#include "pcw/histogram.h"
#include "rows.h"
#include "snaprows.h"
#include "util.h"

void pcw__q_hpre_free(pcw__q_hpre *p)
{
    if (!p)
        return;
    free(p->stamp);
    free(p->sum);
    free(p->cell);
    free(p->scratch);
    free(p);
}

static int stat_eq(const pcw_hist_stat *a, const pcw_hist_stat *b)
{
    return a->kind == b->kind && (a->kind != PCW_HSTAT_QUANTILE || a->q == b->q);
}

/* Where counter k is in p->ks. */
static uint32_t counter_pos(const pcw__q_hpre *p, uint32_t k)
{
    uint32_t x = 0;
    while (x < p->nk && p->ks[x] != k)
        x++;
    return x;
}

/* The plan: every (counter, statistic) of s a handle of q selects, up to
 * PCW__Q_HPRE_MAX (the rest are cooked after the collection). The rate and
 * the count need the interval's length, known after the read: they are
 * the counter's summary (its count and status), not a cell. */
static void make_plan(const pcw_pdh *q, const pcw__q_set *s, pcw__q_hpre *p)
{
    p->nplan = p->nk = 0;
    for (size_t i = 0; i < q->nctrs; i++) {
        const pcw_pdh_counter *h = q->ctrs[i];
        for (size_t m = 0; m < h->nm; m++) {
            const pcw__q_match *mt = &h->m[m];
            if (mt->set != s || mt->placeholder)
                continue;
            for (uint32_t c = 0; c < mt->nctr; c++) {
                const pcw_hist_stat *st = &mt->hst[c];
                uint32_t k = mt->ctr[c], x;
                if (!st->kind || !s->hshape || !s->hshape[k])
                    continue;
                for (x = 0; x < p->nk && p->ks[x] != k; x++)
                    ;
                if (x == p->nk) {
                    if (p->nk == PCW__Q_HPRE_MAX)
                        continue;
                    p->ks[p->nk++] = k;
                }
                if (st->kind == PCW_HSTAT_RATE || st->kind == PCW_HSTAT_COUNT)
                    continue;
                for (x = 0; x < p->nplan && !(p->plan_k[x] == k && stat_eq(&p->plan[x], st)); x++)
                    ;
                if (x == p->nplan && p->nplan < PCW__Q_HPRE_MAX) {
                    /* After k's others: a counter's statistics stay
                     * consecutive (cooked together, cook_run). */
                    uint32_t at = p->nplan;
                    while (at > 0 && p->plan_k[at - 1] != k &&
                           counter_pos(p, p->plan_k[at - 1]) > counter_pos(p, k))
                        at--;
                    memmove(&p->plan[at + 1], &p->plan[at], (p->nplan - at) * sizeof *p->plan);
                    memmove(&p->plan_k[at + 1], &p->plan_k[at],
                            (p->nplan - at) * sizeof *p->plan_k);
                    p->plan[at] = *st, p->plan_k[at] = k;
                    p->nplan++;
                }
            }
        }
    }
}

/* Room for rows [0, rows) of this read's plan. */
static int grow_rows(pcw__q_hpre *p, size_t rows)
{
    return pcw__q_grow((void **)&p->stamp, &p->stamp_cap, rows, sizeof *p->stamp) ||
           pcw__q_grow((void **)&p->sum, &p->sum_cap, rows * p->nk, sizeof *p->sum) ||
           pcw__q_grow((void **)&p->cell, &p->cell_cap, rows * p->nplan, sizeof *p->cell);
}

/* Row r's statistics of its histogram ks[x], from its interval d. */
static void cook_one(pcw__q_hpre *p, size_t r, uint32_t x, const pcw_hist_dist *d,
                     const pcw__q_hspan *sp)
{
    uint32_t k = p->ks[x];
    pcw__q_hpre_sum *sm = &p->sum[r * p->nk + x];
    sm->count = d->count, sm->status = (uint8_t)d->status;
    /* k's statistics: consecutive in the plan, all from one walk. */
    uint32_t c0 = 0, c1;
    while (c0 < p->nplan && p->plan_k[c0] != k)
        c0++;
    for (c1 = c0; c1 < p->nplan && p->plan_k[c1] == k; c1++)
        ;
    double v[PCW__Q_HPRE_MAX];
    int rc[PCW__Q_HPRE_MAX];
    if (c1 - c0 == 1)
        rc[0] = pcw__q_hist_cook(d, sp, &p->plan[c0], &v[0]);
    else if (c1 > c0)
        pcw__q_hist_cook_many(d, sp, &p->plan[c0], c1 - c0, v, rc);
    for (uint32_t c = c0; c < c1; c++) {
        pcw__q_hpre_cell *cl = &p->cell[r * p->nplan + c];
        cl->v = v[c - c0], cl->status = (uint8_t)rc[c - c0];
    }
}

/* A row cooked by copy_run, in a run not validated yet: cook_run, called
 * once the read validated the run, makes it gen. */
#define PROVISIONAL (1ull << 63)

/* Each run's rows copied here instead of by the read
 * (pcw__segment_read_runs_copy): a row with a last-sample row of the same
 * index has each of its histograms' deltas taken in the pass that copies
 * it (pcw__copy_delta_span: this sample's words are never read back,
 * the last sample's are read where the copy's stores would have read the
 * lines they write, and where the deltas are non-zero is found in the
 * same loop, not by a second scan) and is cooked from them at once,
 * provisionally; the words between the histograms are copied plainly.
 * The numbers are cook_run's: the same deltas and span,
 * pcw__q_hist_interval's end (pcw__q_hist_from_deltas). */
static int copy_run(void *arg, pcw_snapshot *snap, size_t first, const unsigned char *src,
                    size_t stride, uint32_t len)
{
    pcw__q_hpre *p = arg;
    const pcw__q_set *s = p->set;
    if (p->abort || snap->busy || grow_rows(p, first + len))
        return 0;
    const pcw_snapshot *prev = pcw__q_snap(s, s->cur ^ 1);
    size_t pcount = prev->data_size == snap->data_size ? prev->count : 0;
    size_t words = snap->data_size / 8;
    for (uint32_t j = 0; j < len; j++) {
        size_t r = first + j;
        uint64_t *dst = (uint64_t *)(void *)pcw__q_row(snap, r);
        const uint64_t *row = (const uint64_t *)(const void *)(src + (size_t)j * stride);
        if (r >= pcount) {
            pcw__copy_delta_words(dst, row, NULL, NULL, words, NULL);
            p->stamp[r] = 0;
            continue;
        }
        const uint64_t *prow = (const uint64_t *)(const void *)pcw__q_row(prev, r);
        size_t at = 0; /* words [0, at) copied */
        for (uint32_t i = 0; i < p->nk; i++) {
            uint32_t x = p->order[i], k = p->ks[x];
            size_t w = s->off[k] / 8, nb = pcw_hist_nbuckets(s->hshape[k]);
            if (w > at)
                pcw__copy_delta_words(dst + at, row + at, NULL, NULL, w - at, NULL);
            uint64_t unused, count;
            pcw__copy_delta_words(dst + w, row + w, prow + w, p->now01, 2, &unused);
            p->now01[0] += prow[w], p->now01[1] += prow[w + 1]; /* the words, not deltas */
            uint32_t span[2];
            uint64_t ors = pcw__copy_delta_span(dst + w + 2, row + w + 2, prow + w + 2, p->scratch,
                                                nb, &count, span);
            pcw_hist_dist d;
            pcw__q_hspan sp, known = {span[0], span[1]};
            pcw__q_hist_from_deltas(s->hshape[k], p->now01, prow + w, p->scratch, ors >> 50 == 0,
                                    count, &known, &d, &sp);
            cook_one(p, r, x, &d, &sp);
            at = w + 2 + nb;
        }
        if (words > at)
            pcw__copy_delta_words(dst + at, row + at, NULL, NULL, words - at, NULL);
        p->stamp[r] = p->gen | PROVISIONAL;
    }
    return 1;
}

/* Each run as it is read: rows [from, to) of this sample, each against
 * the last sample's row of the same index (if it has one). */
static void cook_run(void *arg, const pcw_snapshot *snap, size_t from, size_t to, const double *cvt)
{
    (void)cvt;
    pcw__q_hpre *p = arg;
    const pcw__q_set *s = p->set;
    if (p->abort || from != p->next || snap->busy || grow_rows(p, to)) {
        p->abort = 1;
        return;
    }
    p->next = to;
    const pcw_snapshot *prev = pcw__q_snap(s, s->cur ^ 1);
    size_t pcount = prev->data_size == snap->data_size ? prev->count : 0;
    for (size_t r = from; r < to; r++) {
        if (p->stamp[r] == (p->gen | PROVISIONAL)) {
            p->stamp[r] = p->gen; /* cooked as copied: the run is validated */
            continue;
        }
        p->stamp[r] = 0; /* not cooked (yet) */
        if (r >= pcount)
            continue;
        const unsigned char *row = pcw__q_row(snap, r), *prow = pcw__q_row(prev, r);
        for (uint32_t x = 0; x < p->nk; x++) {
            uint32_t k = p->ks[x];
            pcw_hist_dist d;
            pcw__q_hspan sp;
            pcw__q_hist_interval(s->hshape[k], (const uint64_t *)(const void *)(row + s->off[k]),
                                 (const uint64_t *)(const void *)(prow + s->off[k]), p->scratch, &d,
                                 &sp);
            cook_one(p, r, x, &d, &sp);
        }
        p->stamp[r] = p->gen;
    }
}

int pcw__q_hpre_begin(const pcw_pdh *q, pcw__q_set *s, unsigned flags)
{
    pcw__q_hpre *p = s->hpre;
    if (p)
        p->gen++, p->active = 0; /* nothing of an earlier read is this one's */
    if (!(flags & PCW_READ_NO_NAMES) || !s->hshape)
        return 0;
    if (!p) {
        uint32_t k;
        for (k = 0; k < s->ncounters && !s->hshape[k]; k++)
            ;
        if (k == s->ncounters || !(p = s->hpre = calloc(1, sizeof *p)))
            return 0;
        p->gen = 1;
    }
    make_plan(q, s, p);
    if (!p->nk)
        return 0;
    uint32_t most = 0;
    for (uint32_t x = 0; x < p->nk; x++)
        if (pcw_hist_nbuckets(s->hshape[p->ks[x]]) > most)
            most = pcw_hist_nbuckets(s->hshape[p->ks[x]]);
    if (p->scratch_cap < most) {
        uint64_t *b = realloc(p->scratch, (size_t)most * sizeof *b);
        if (!b)
            return 0;
        p->scratch = b, p->scratch_cap = most;
    }
    for (uint32_t x = 0; x < p->nk; x++) { /* ks by offset: copy_run's order */
        uint32_t at = x;
        for (; at > 0 && s->off[p->ks[p->order[at - 1]]] > s->off[p->ks[x]]; at--)
            p->order[at] = p->order[at - 1];
        p->order[at] = x;
    }
    p->set = s, p->next = 0, p->abort = 0, p->active = 1;
    return 1;
}

int pcw__q_hpre_read(pcw__q_set *s, pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                     unsigned flags)
{
    pcw__q_hpre *p = s->hpre;
    if (snap->count != p->next)
        p->abort = 1; /* rows before this source's that were not handed over */
    return pcw__segment_read_runs_copy(seg, cs, snap, flags, cook_run, copy_run, p);
}

void pcw__q_hpre_end(pcw__q_set *s)
{
    pcw__q_hpre *p = s->hpre;
    if (p && p->active && (p->abort || p->next != pcw__q_snap(s, s->cur)->count))
        p->gen++; /* not every row once, in order: none */
    if (p)
        p->active = 0;
}

int pcw__q_hpre_value(const pcw__q_set *s, uint32_t e, uint32_t k, const pcw_hist_stat *st,
                      unsigned flags, double *v, int *status)
{
    const pcw__q_hpre *p = s->hpre;
    if (!p || (flags & PCW_FMT_RAW) || (e & PCW__Q_ENT_AGG))
        return 0;
    const pcw__q_inst *x = &s->ins.inst[e];
    if (x->row < 0 || (size_t)x->row >= p->stamp_cap || p->stamp[x->row] != p->gen)
        return 0;
    size_t r = (size_t)x->row;
    pcw__q_rows w;
    pcw__q_entry_rows(s, e, &w);
    if (!w.row || !w.prow || w.prow != pcw__q_row(pcw__q_snap(s, s->cur ^ 1), r))
        return 0; /* not the two rows the value was cooked from */
    uint32_t i, c;
    for (i = 0; i < p->nk && p->ks[i] != k; i++)
        ;
    if (i == p->nk)
        return 0;
    const pcw__q_hpre_sum *sm = &p->sum[r * p->nk + i];
    if (st->kind == PCW_HSTAT_RATE || st->kind == PCW_HSTAT_COUNT) {
        /* hist_query.c's way, from the count and the interval's length. */
        pcw_hist_dist d = {.status = sm->status, .count = sm->count};
        d.interval_ns = w.t > w.pt ? w.t - w.pt : 0;
        *status = pcw__q_hist_cook(&d, NULL, st, v);
        return 1;
    }
    for (c = 0; c < p->nplan && !(p->plan_k[c] == k && stat_eq(&p->plan[c], st)); c++)
        ;
    if (c == p->nplan)
        return 0;
    const pcw__q_hpre_cell *cl = &p->cell[r * p->nplan + c];
    *v = cl->v;
    *status = cl->status;
    return 1;
}
