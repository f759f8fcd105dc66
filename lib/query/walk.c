/* SPDX-License-Identifier: MIT */
/*
 * lib/query/walk.c - a handle's values all at once (pcw_pdh_cook_all,
 * pcw_pdh_cook_column, pcw_pdh_visit, pcw_pdh_visit_rows): a walk over
 * its entries into a sink (sink.h), taking the kernels (kernels.c) where
 * the rows allow.
 *
 * pcw_pdh_cook_all and pcw_pdh_visit walk a handle's values instance by
 * instance (each instance's row is read from memory once) into a "sink":
 * the caller's whole arrays, or one instance's values at a time handed to a
 * callback (nothing materialised: the cheapest way to consume everything).
 *
 * In steady state (every instance kept its row: identity) the instances of
 * a set are its snapshot's rows in order, provider by provider, and the
 * previous sample's rows sit at the same indexes. The two commonest
 * families then take a short path per value that computes exactly what
 * pcw_cook computes, in the same order of operations, so the results are
 * identical: instantaneous values (X, times the scale) and rates over the
 * system time ((X1 - X0) / ((Y1 - Y0) / TB)). Anything else, or a value
 * that needs a status (a reset, a zero interval), goes through pcw_cook.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cook.h"
#include "kernels.h"
#include "match.h"
#include "rows.h"
#include "sink.h"
#include "snaprows.h"
#include "values.h"
#include "walk.h"
#include "logsource.h"

enum { K_GENERIC, K_RAW, K_RATE };

typedef struct kernel {
    uint8_t kind, size;
    uint32_t k, off;
    const pcw_hist_stat *hs; /* a histogram's statistic, else NULL */
    double scale;            /* 10^scale, or 1 */
    int scaled, x1000;
} kernel;

static void kernel_of(const pcw_pdh_counter *h, const pcw__q_set *s, uint32_t k,
                      const pcw_hist_stat *hs, unsigned flags, kernel *kn)
{
    const pcw__q_recipe *r = &s->recipes[k];
    int32_t sc = pcw__q_scale_of(h, s, k);
    kn->k = k;
    kn->hs = hs->kind ? hs : NULL;
    kn->off = s->off[k];
    kn->size = s->size[k];
    kn->scaled = !(flags & PCW_FMT_NOSCALE) && sc != 0;
    kn->scale = kn->scaled ? pcw__q_pow10(sc) : 1.0;
    kn->x1000 = (flags & PCW_FMT_1000) != 0;
    kn->kind = K_GENERIC;
    if (r->status != PCW_CSTATUS_VALID)
        return;
    if (flags & PCW_FMT_RAW) { /* X as it is, for every type with a value */
        kn->scaled = kn->x1000 = 0;
        kn->scale = 1.0;
        if (r->formula != PCW__Q_F_NONE)
            kn->kind = K_RAW;
        return;
    }
    if ((r->type & 0xF0000000u) == PCW_PERF_DISPLAY_PERCENT)
        return;
    if (r->formula == PCW__Q_F_RAW)
        kn->kind = K_RAW;
    else if (r->formula == PCW__Q_F_RATE && r->second == PCW__Q_Y_SYSTIME && r->freq_ctr < 0)
        kn->kind = K_RATE;
}

static inline uint64_t load_at(const unsigned char *row, uint32_t off, uint8_t size)
{
    if (size == 8)
        return *(const uint64_t *)(const void *)(row + off);
    return *(const uint32_t *)(const void *)(row + off);
}

/* pcw_cook's finish() for a non-percentage: scale, x1000, finiteness. */
static inline int finish_fast(const kernel *kn, double v, double *out)
{
    if (kn->scaled)
        v *= kn->scale;
    if (kn->x1000)
        v *= 1000.0;
    if (!isfinite(v)) {
        *out = 0;
        return PCW_CSTATUS_OVERFLOW;
    }
    *out = v;
    return PCW_CSTATUS_VALID;
}

/* Entry e's counters cols[0..nc), the general way. */
static int cook_entry(const pcw_pdh_counter *h, const pcw__q_set *s, const uint32_t *cols,
                      const pcw_hist_stat *hs, uint32_t nc, uint32_t e, unsigned flags,
                      pcw__q_sink *k)
{
    pcw__q_rows w;
    pcw__q_entry_rows(s, e, &w);
    double *v = pcw__q_sink_values(k, nc);
    uint8_t *st = pcw__q_sink_status(k);
    for (uint32_t c = 0; c < nc; c++) {
        pcw_raw now;
        int r = pcw__q_cook_value(h, s, &w, e, cols[c], &hs[c], flags, &now, &v[c]);
        if (st)
            st[c] = (uint8_t)r;
    }
    return pcw__q_sink_row(k, nc);
}

/* The commonest case of all - instantaneous values, no scaling - is a
 * plain conversion of each value, every status VALID (0): PLAIN; and when
 * they are 8-byte values side by side (the usual struct of uint64_t), a
 * row converts as one array: PLAIN_CONTIG. */
enum { NOT_PLAIN, PLAIN, PLAIN_CONTIG };

static int kernels_plain(const kernel *kn, uint32_t nc)
{
    for (uint32_t c = 0; c < nc; c++)
        if (kn[c].kind != K_RAW || kn[c].scaled || kn[c].x1000)
            return NOT_PLAIN;
    for (uint32_t c = 0; c < nc; c++)
        if (kn[c].size != 8 || kn[c].off != kn[0].off + 8 * c)
            return PLAIN;
    return PLAIN_CONTIG;
}

/* The instances of s in steady state, row by row. */
static void cook_rows_fast(const pcw_pdh_counter *h, const pcw__q_set *s, const kernel *kn,
                           uint32_t nc, unsigned flags, pcw__q_sink *k)
{
    int b = s->cur, pb = b ^ 1;
    const pcw_snapshot *cur = pcw__q_snap(s, b), *prev = pcw__q_snap(s, pb);
    int plain = kernels_plain(kn, nc);
    if (plain == PLAIN_CONTIG) {
        pcw__q_rows_contig(cur, 0, cur->count, kn[0].off, nc, k);
        return;
    }
    if (plain) {
        for (size_t r = 0; r < cur->count && !k->stop; r++) {
            const unsigned char *row = pcw__q_row(cur, r);
            double *v = pcw__q_sink_values(k, nc);
            uint8_t *st = pcw__q_sink_status(k);
            for (uint32_t c = 0; c < nc; c++)
                v[c] = (double)load_at(row, kn[c].off, kn[c].size);
            if (st)
                memset(st, PCW_CSTATUS_VALID, nc);
            pcw__q_sink_row(k, nc);
        }
        return;
    }
    for (size_t i = 0; i < s->nsrc[b] && !k->stop; i++) {
        const pcw__q_src *x = &s->src[b][i];
        /* (Y1 - Y0) / TB for this provider's rows. */
        uint64_t t1 = x->time_ns, t0 = s->src[pb][i].time_ns;
        double dt = t1 > t0 ? (double)(t1 - t0) / (double)PCW__Q_SYS_FREQ : 0.0;
        for (size_t r = x->first; r < x->first + x->count && !k->stop; r++) {
            const unsigned char *row = pcw__q_row(cur, r), *prow = pcw__q_row(prev, r);
            double *v = pcw__q_sink_values(k, nc);
            uint8_t *st = pcw__q_sink_status(k);
            for (uint32_t c = 0; c < nc; c++) {
                const kernel *q = &kn[c];
                int rs;
                if (q->kind == K_RAW) {
                    rs = finish_fast(q, (double)load_at(row, q->off, q->size), &v[c]);
                } else if (q->kind == K_RATE && dt > 0.0 &&
                           load_at(row, q->off, q->size) >= load_at(prow, q->off, q->size)) {
                    uint64_t x1 = load_at(row, q->off, q->size),
                             x0 = load_at(prow, q->off, q->size);
                    rs = finish_fast(q, (double)(x1 - x0) / dt, &v[c]);
                } else {
                    /* Anything else, or a status to tell: the general way. */
                    pcw__q_rows w;
                    pcw__q_entry_rows(s, s->ins.order[r], &w);
                    pcw_raw now;
                    rs = pcw__q_cook_value(h, s, &w, s->ins.order[r], q->k, q->hs, flags, &now,
                                           &v[c]);
                }
                if (st)
                    st[c] = (uint8_t)rs;
            }
            pcw__q_sink_row(k, nc);
        }
    }
}

/* Whether mt's instances, after its set's naggs totals, are the set's
 * snapshot rows in order (steady state: every instance kept its row), so
 * that nc of its counters can be cooked row by row (at most 64). */
static int steady(const pcw__q_match *mt, uint32_t nc, size_t *naggs)
{
    const pcw__q_set *s = mt->set;
    size_t n = 0;
    while (n < s->entries.nent && (s->entries.ent[n] & PCW__Q_ENT_AGG))
        n++;
    *naggs = n;
    return mt->all && s->ins.identity && !s->it.global && !s->it.by_name && !s->ins.nstale &&
           nc <= 64 && s->entries.nent - n == pcw__q_snap(s, s->cur)->count;
}

/* Every value of the handle, instance by instance, into the sink: all
 * its selected counters, or (col >= 0) only the col-th of them. */
void pcw__q_cook_handle(const pcw_pdh_counter *ctr, int col, unsigned flags, pcw__q_sink *k)
{
    for (size_t j = 0; j < ctr->nm && !k->stop; j++) {
        const pcw__q_match *mt = &ctr->m[j];
        const pcw__q_set *s = mt->set;
        const uint32_t *cols = col < 0 ? mt->ctr : &mt->ctr[col];
        const pcw_hist_stat *hs = col < 0 ? mt->hst : &mt->hst[col];
        uint32_t nc = col < 0 ? mt->nctr : 1;
        if (mt->placeholder) {
            double *v = pcw__q_sink_values(k, nc);
            uint8_t *st = pcw__q_sink_status(k);
            for (uint32_t c = 0; c < nc; c++) {
                v[c] = 0;
                if (st)
                    st[c] = (uint8_t)mt->placeholder_status;
            }
            pcw__q_sink_row(k, nc);
            continue;
        }
        size_t i = 0, naggs;
        if (steady(mt, nc, &naggs)) {
            kernel kn[64];
            for (uint32_t c = 0; c < nc; c++)
                kernel_of(ctr, s, cols[c], &hs[c], flags, &kn[c]);
            for (; i < naggs && !k->stop; i++)
                cook_entry(ctr, s, cols, hs, nc, s->entries.ent[i], flags, k);
            cook_rows_fast(ctr, s, kn, nc, flags, k);
            continue;
        }
        for (; i < mt->nents && !k->stop; i++)
            cook_entry(ctr, s, cols, hs, nc, s->entries.ent[mt->all ? i : mt->ents[i]], flags, k);
    }
}

int pcw_pdh_cook_all(const pcw_pdh_counter *ctr, unsigned flags, double *values, uint8_t *status)
{
    if (PCWL_H(ctr) && values)
        return pcwl_cook_all(ctr, flags, values, status);
    if (!ctr || !values)
        return PCW_E_INVALID_PARAMETER;
    pcw__q_sink k = {.values = values, .status = status};
    pcw__q_cook_handle(ctr, -1, flags, &k);
    return PCW_OK;
}

int pcw_pdh_cook_column(const pcw_pdh_counter *ctr, size_t kk, unsigned flags, double *values,
                        uint8_t *status)
{
    if (PCWL_H(ctr))
        return pcwl_cook_column(ctr, kk, flags, values, status);
    const pcw__q_match *mt = pcw__q_match_single(ctr);
    if (!mt || kk >= mt->nctr || !values)
        return PCW_E_INVALID_PARAMETER;
    /* The same walk as cook_all, over one counter: in steady state a
     * column of a million instances is one pass over their rows. */
    pcw__q_sink k = {.values = values, .status = status};
    pcw__q_cook_handle(ctr, (int)kk, flags, &k);
    return PCW_OK;
}

int pcw__q_block_open(pcw__q_block *bl, const pcw_pdh_counter *ctr)
{
    size_t most = PCW__Q_BLOCK_VALUES;
    for (size_t j = 0; j < ctr->nm; j++)
        if (ctr->m[j].nctr > most)
            most = ctr->m[j].nctr;
    bl->cap = most;
    bl->v = most <= PCW__Q_BLOCK_VALUES ? bl->stack_v : malloc(most * sizeof *bl->v);
    bl->s = most <= PCW__Q_BLOCK_VALUES ? bl->stack_s : malloc(most);
    if (bl->v && bl->s)
        return PCW_OK;
    if (bl->v != bl->stack_v)
        free(bl->v);
    if (bl->s != bl->stack_s)
        free(bl->s);
    return PCW_E_NO_MEMORY;
}

void pcw__q_block_close(pcw__q_block *bl)
{
    if (bl->v != bl->stack_v)
        free(bl->v);
    if (bl->s != bl->stack_s)
        free(bl->s);
}

pcw__q_sink pcw__q_block_sink(pcw__q_block *bl, int (*fn)(const pcw_pdh_rows *, void *), void *arg)
{
    pcw__q_sink k = {.fnb = fn, .arg = arg, .rv = bl->v, .rs = bl->s, .bcap = bl->cap};
    return k;
}

int pcw_pdh_visit_rows(const pcw_pdh_counter *ctr, unsigned flags,
                       int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    if (PCWL_H(ctr) && fn)
        return pcwl_visit_rows(ctr, flags, fn, arg);
    if (!ctr || !fn)
        return PCW_E_INVALID_PARAMETER;
    pcw__q_block bl;
    if (pcw__q_block_open(&bl, ctr) != PCW_OK)
        return PCW_E_NO_MEMORY;
    pcw__q_sink k = pcw__q_block_sink(&bl, fn, arg);
    pcw__q_cook_handle(ctr, -1, flags, &k);
    pcw__q_sink_flush(&k);
    pcw__q_block_close(&bl);
    return PCW_OK;
}

const pcw__q_match *pcw__q_contig_match(const pcw_pdh_counter *ctr, unsigned flags, uint32_t *off)
{
    if (ctr->nm != 1)
        return NULL;
    const pcw__q_match *mt = &ctr->m[0];
    const pcw__q_set *s = mt->set;
    size_t naggs;
    if (mt->placeholder || s->callback || !mt->nctr || !steady(mt, mt->nctr, &naggs) || naggs)
        return NULL;
    kernel kn[64]; /* steady: at most 64 */
    for (uint32_t c = 0; c < mt->nctr; c++)
        kernel_of(ctr, s, mt->ctr[c], &mt->hst[c], flags, &kn[c]);
    if (kernels_plain(kn, mt->nctr) != PLAIN_CONTIG)
        return NULL;
    *off = kn[0].off;
    return mt;
}

int pcw_pdh_visit(const pcw_pdh_counter *ctr, unsigned flags,
                  int (*fn)(const pcw_pdh_row *row, void *arg), void *arg)
{
    if (PCWL_H(ctr) && fn)
        return pcwl_visit(ctr, flags, fn, arg);
    if (!ctr || !fn)
        return PCW_E_INVALID_PARAMETER;
    pcw__q_block bl; /* one instance's values at a time */
    if (pcw__q_block_open(&bl, ctr) != PCW_OK)
        return PCW_E_NO_MEMORY;
    pcw__q_sink k = {.fn = fn, .arg = arg, .rv = bl.v, .rs = bl.s};
    pcw__q_cook_handle(ctr, -1, flags, &k);
    pcw__q_block_close(&bl);
    return PCW_OK;
}
