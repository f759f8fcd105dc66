/* SPDX-License-Identifier: MIT */
/*
 * lib/query/rows.c - where an entry's raw values are: an instance's rows
 * in the current and previous snapshots, a total's row of the current
 * sample (wide layout), and the raw samples of one counter made from them
 * with its recipe (cook.c).
 */
#include <string.h>

#include "rows.h"
#include "snaprows.h"

/* The status a total's raw sample has for counter k: its own, or that of
 * a counter its recipe reads. */
static int agg_status(const pcw__q_set *s, const uint8_t *st, uint32_t k)
{
    const pcw__q_recipe *r = &s->recipes[k];
    int32_t refs[5] = {(int32_t)k, r->base, r->multi, r->time, r->freq_ctr};
    for (int i = 0; i < 5; i++)
        if (refs[i] >= 0 && st[refs[i]] != PCW_CSTATUS_VALID)
            return st[refs[i]];
    return PCW_CSTATUS_VALID;
}

void pcw__q_entry_rows(const pcw__q_set *s, uint32_t e, pcw__q_rows *w)
{
    int b = s->cur, pb = b ^ 1;
    memset(w, 0, sizeof *w);
    w->status = PCW_CSTATUS_VALID;
    if (e & PCW__Q_ENT_AGG) {
        uint32_t a = e & ~PCW__Q_ENT_AGG, nc = s->ncounters;
        w->lay.off = s->woff, w->lay.size = s->wsize;
        w->row = (const unsigned char *)(s->tot.arow[b] + (size_t)a * nc);
        w->st = s->tot.ast[b] + (size_t)a * nc;
        w->t = s->tot.atime[b];
        /* (No previous row: a total's values are its members', computed
         * when it was collected - pcw__q_tval.) */
        return;
    }
    const pcw__q_inst *x = &s->ins.inst[e];
    w->lay.off = s->off, w->lay.size = s->size;
    if (x->row < 0) {
        w->status = x->stale ? PCW_CSTATUS_PROVIDER_GONE : PCW_CSTATUS_NO_INSTANCE;
        return;
    }
    w->row = pcw__q_row(pcw__q_snap(s, b), (size_t)x->row);
    w->t = s->src[b][x->src].time_ns;
    int32_t prow = s->ins.identity ? x->row : x->prev_row;
    int32_t psrc = s->ins.identity ? x->src : x->prev_src;
    if (prow >= 0 && psrc >= 0 && s->two) {
        w->prow = pcw__q_row(pcw__q_snap(s, pb), (size_t)prow);
        w->pt = s->src[pb][psrc].time_ns;
    }
}

void pcw__q_rows_raw(const pcw__q_set *s, const pcw__q_rows *w, uint32_t k, pcw_raw *now,
                     pcw_raw *prev)
{
    const pcw__q_recipe *r = &s->recipes[k];
    prev->status = PCW_CSTATUS_NO_INSTANCE;
    if (!w->row) {
        memset(now, 0, sizeof *now);
        now->status = w->status;
        return;
    }
    pcw__q_raw_from_row(r, w->row, &w->lay, w->t, now);
    if (w->st && now->status == PCW_CSTATUS_VALID)
        now->status = agg_status(s, w->st, k);
    if (w->prow) {
        pcw__q_raw_from_row(r, w->prow, &w->lay, w->pt, prev);
    }
}
