/* SPDX-License-Identifier: MIT */
/*
 * lib/query/collect_raw.c - pcw__q_collect_raw: a collection that hands
 * a recorder one handle's raw rows as the read validates them (issue 28:
 * recording costs little more than the collection).
 *
 * The raw sibling of pcw_pdh_collect_rows (collect_rows.c, design.md
 * §4.4a): the same row sink (fetch.h's pcw__q_row_sink, q->rows for the
 * length of one collection) and the same attribution rule - a run is the
 * last sample's instances at its rows only while the read is one without
 * names, the runs follow on from row 0, nothing is busy and the
 * provider's segment generation is still the last sample's (each run's
 * check loads it after the run's copies: read_run's R3 fence lies
 * between) - but what it hands over is the rows themselves, the 8-byte
 * words the recorder compares with its last sample's and encodes
 * (lib/history's row samples), instead of values cooked to doubles. When
 * a run fails a check, or the collection does not end in the steady state
 * it began in with every row handed over, fn gets an empty run (restart)
 * and then the handle's rows again, from the sample the collection left.
 */
#include <string.h>

#include "../history/codec.h"
#include "collect_raw.h"
#include "consumer/private.h"
#include "fetch.h"
#include "pdh.h"
#include "snaprows.h"

/* The set ctr's rows come from when they can be handed over whole: one
 * counterset, every counter 8 bytes at 8 * k (a row is its counters'
 * words: those the handle selects and the others, bases among them), at
 * most PCW__HIST_ROW_WORDS of them, no histogram; NULL else. */
static pcw__q_set *raw_set(const pcw_pdh_counter *ctr)
{
    if (!ctr || ctr->nm != 1)
        return NULL;
    const pcw__q_match *mt = &ctr->m[0];
    pcw__q_set *s = mt->set;
    if (mt->placeholder || !s || !s->m || s->callback || !s->ncounters ||
        s->ncounters > PCW__HIST_ROW_WORDS || s->data_size != 8 * s->ncounters || s->it.global ||
        s->it.by_name)
        return NULL;
    for (uint32_t k = 0; k < s->ncounters; k++)
        if (s->off[k] != 8 * k || s->size[k] != 8 || (s->hshape && s->hshape[k]))
            return NULL;
    return s;
}

/* Are s's entries its instances, in snapshot row order, one a row (the
 * steady state: no totals, nothing stale)? */
static int raw_steady(const pcw__q_match *mt)
{
    const pcw__q_set *s = mt->set;
    return mt->all && s->ins.identity && s->ins.in_order && !s->ins.nstale &&
           s->entries.nent == pcw__q_snap(s, s->cur)->count &&
           (!s->entries.nent || !(s->entries.ent[0] & PCW__Q_ENT_AGG));
}

uint32_t pcw__q_raw_width(const pcw_pdh_counter *ctr)
{
    const pcw__q_set *s = raw_set(ctr);
    return s ? s->ncounters : 0;
}

int pcw__q_raw_layout(const pcw_pdh_counter *ctr, uint32_t k, pcw__hist_layout *out)
{
    const pcw__q_set *s = raw_set(ctr);
    if (!s || k >= s->ncounters)
        return -1;
    const pcw__q_recipe *r = &s->recipes[k];
    /* pcw__q_raw_from_row's fields, the counter indexes being words. */
    pcw__hist_layout l = {.status = (uint32_t)r->status,
                          .first = (uint32_t)r->value,
                          .second = PCW__HIST_SRC_CONST,
                          .multi = PCW__HIST_SRC_CONST,
                          .freq = PCW__HIST_SRC_CONST,
                          .freq_const = r->freq};
    if (r->freq_ctr >= 0)
        l.freq = PCW__HIST_SRC_WORD + (uint32_t)r->freq_ctr;
    switch (r->second) {
    case PCW__Q_Y_SYSTIME:
        if (r->freq_ctr >= 0)
            return -1; /* the time in the counterset's ticks */
        l.second = PCW__HIST_SRC_TIME;
        break;
    case PCW__Q_Y_100NS:
        l.second = PCW__HIST_SRC_TIME100;
        break;
    case PCW__Q_Y_COUNTER:
        l.second = PCW__HIST_SRC_WORD + (uint32_t)r->time;
        break;
    case PCW__Q_Y_BASE:
        if (r->base >= 0)
            l.second = PCW__HIST_SRC_WORD + (uint32_t)r->base;
        break;
    }
    if (r->multi >= 0)
        l.multi = PCW__HIST_SRC_WORD + (uint32_t)r->multi;
    if (!(l.words = pcw__hist_layout_words(&l, PCW_CSTATUS_LAST)))
        return -1;
    *out = l;
    return 0;
}

typedef struct fused_raw {
    pcw__q_row_sink base; /* first: the fetch's view of it */
    int (*fn)(const pcw__q_raw_rows *rows, void *arg);
    void *arg;
    pcw_segment *seg; /* the source being read */
    uint64_t gen;     /* its segment's generation at the last sample */
    size_t next;      /* the next snapshot row to hand over */
    size_t runs;      /* runs handed over */
    int abort;        /* not every row can be handed over as it is read */
    int stop;         /* fn asked to stop */
    /* pcw__q_collect_raw_cmp: the caller's rows to compare with, and which
     * snapshot rows differ from them (a bit a row) for the rows
     * [cmp_from, cmp_to) raw_copy copied last, one stretch after the other. */
    const uint64_t *prev;
    size_t prev_rows, prev_words;
    uint64_t *changed;
    size_t cmp_from, cmp_to;
} fused_raw;

static void raw_cannot(pcw__q_row_sink *base)
{
    ((fused_raw *)base)->abort = 1;
}

static void raw_run(void *arg, const pcw_snapshot *snap, size_t from, size_t to, const double *cvt)
{
    (void)cvt;
    fused_raw *f = arg;
    if (f->abort || from != f->next || snap->busy || !f->gen ||
        pcw_segment_generation(f->seg) != f->gen) {
        f->abort = 1;
        return;
    }
    if (!f->stop && to > from) {
        /* The compare holds for the run if raw_copy copied all of it: a run
         * that failed is read again without it and never handed over. */
        int cmp = f->changed && f->cmp_from <= from && to <= f->cmp_to;
        pcw__q_raw_rows run = {pcw__q_row(snap, from),  to - from,
                               snap->data_size,         snap->sources[snap->nsources - 1].time_ns,
                               cmp ? f->changed : NULL, from};
        f->runs++;
        f->stop = f->fn(&run, f->arg) != 0;
    }
    f->next = to;
}

/* A stretch of the run copied here (pcw__segment_read_runs_copy), each
 * row compared with prev's of its index as it is copied. */
static int raw_copy(void *arg, pcw_snapshot *snap, size_t first, const unsigned char *src,
                    size_t stride, uint32_t len)
{
    fused_raw *f = arg;
    size_t words = snap->data_size / 8;
    if (f->abort || first + len > f->prev_rows || words != f->prev_words) {
        f->cmp_from = f->cmp_to = 0; /* the read copies it: no compare */
        return 0;
    }
    pcw__copy_cmp_rows((uint64_t *)(void *)(snap->data + first * snap->data_size), src, stride,
                       f->prev + first * words, words, len, f->changed, first);
    if (first != f->cmp_to || f->cmp_to == f->cmp_from)
        f->cmp_from = first;
    f->cmp_to = first + len;
    return 1;
}

static int raw_read(pcw__q_row_sink *base, pcw_segment *seg, const pcw_counterset *cs,
                    pcw_snapshot *snap, unsigned flags, uint64_t gen)
{
    fused_raw *f = (fused_raw *)base;
    f->seg = seg;
    f->gen = gen;
    if (snap->count != f->next)
        f->abort = 1; /* rows missing before this source's */
    if (f->changed)
        return pcw__segment_read_runs_copy(seg, cs, snap, flags, raw_run, raw_copy, f);
    return pcw__segment_read_runs(seg, cs, snap, flags, raw_run, f, NULL, 0);
}

/* Are the sample's rows its sources' rows whole and in order: each
 * source's [first, first + count) (read_set's or collected_set's, in
 * fetch.c) following on from the last, the last ending at the snapshot's
 * end? The set's list says where its sources' rows are; the snapshot's
 * own sources do not (a lock-free read records source 0 for every
 * segment it read). */
static int by_source(const pcw__q_set *s, int b)
{
    size_t at = 0;
    for (size_t j = 0; j < s->nsrc[b]; j++) {
        const pcw__q_src *x = &s->src[b][j];
        if (!x->count)
            continue;
        if (x->first != at)
            return 0;
        at += x->count;
    }
    return at == pcw__q_snap(s, b)->count;
}

/* The steady state's rows (the handle's instances are the snapshot's
 * rows in order): a run a source, at the time its instances were read,
 * without a look at each instance. 0 when the rows are not their
 * sources' whole (the caller takes them instance by instance). */
static int steady_runs(const pcw__q_set *s, int b, fused_raw *f)
{
    if (!by_source(s, b))
        return 0;
    const pcw_snapshot *snap = pcw__q_snap(s, b);
    pcw__q_raw_rows run = {NULL, 0, s->data_size, 0, NULL, 0};
    for (size_t j = 0; j < s->nsrc[b] && !f->stop; j++) {
        const pcw__q_src *x = &s->src[b][j];
        if (!x->count)
            continue;
        run.rows = pcw__q_row(snap, x->first);
        run.nrows = x->count;
        run.time_ns = x->time_ns;
        f->stop = f->fn(&run, f->arg) != 0;
    }
    return 1;
}

/* The handle's rows from the sample the collection left, in the order of
 * its instances: runs of rows that follow each other in one source. */
static void hand_sample(const pcw_pdh_counter *ctr, fused_raw *f)
{
    const pcw__q_match *mt = &ctr->m[0];
    const pcw__q_set *s = mt->set;
    int b = s->cur;
    const pcw_snapshot *snap = pcw__q_snap(s, b);
    pcw__q_raw_rows run = {NULL, 0, s->data_size, 0, NULL, 0};
    if (raw_steady(mt) && steady_runs(s, b, f))
        return;
    /* The handle's instances: every entry of the set, or those its path
     * selects (pcw_pdh_get_value's order either way). */
    size_t n = mt->all ? s->entries.nent : mt->nents;
    for (size_t e = 0; e < n && !f->stop; e++) {
        uint32_t ent = s->entries.ent[mt->all ? e : mt->ents[e]];
        const pcw__q_inst *x = ent & PCW__Q_ENT_AGG ? NULL : &s->ins.inst[ent];
        int ok = x && x->row >= 0 && (size_t)x->row < snap->count && x->src >= 0 &&
                 (size_t)x->src < s->nsrc[b];
        const unsigned char *row = ok ? pcw__q_row(snap, (size_t)x->row) : NULL;
        uint64_t t = ok ? s->src[b][x->src].time_ns : 0;
        /* This one continues the run: the next row of the same source, or
         * another instance without a value. */
        if (run.nrows &&
            (ok ? run.rows && row == run.rows + run.nrows * run.stride && t == run.time_ns
                : !run.rows)) {
            run.nrows++;
            continue;
        }
        if (run.nrows)
            f->stop = f->fn(&run, f->arg) != 0;
        run.rows = row, run.nrows = 1, run.time_ns = t;
    }
    if (run.nrows && !f->stop)
        f->fn(&run, f->arg);
}

int pcw__q_raw_by_source(const pcw_pdh_counter *ctr)
{
    const pcw__q_set *s = raw_set(ctr);
    if (!s || ctr->q->log || !raw_steady(&ctr->m[0]))
        return 0;
    return by_source(s, s->cur);
}

int pcw__q_raw_sample(const pcw_pdh_counter *ctr, int (*fn)(const pcw__q_raw_rows *rows, void *arg),
                      void *arg)
{
    if (!ctr || !fn || ctr->q->log || !raw_set(ctr))
        return PCW_E_INVALID_PARAMETER;
    fused_raw f = {{NULL, raw_read, raw_cannot}, fn, arg};
    hand_sample(ctr, &f);
    return PCW_OK;
}

int pcw__q_collect_raw(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr,
                       int (*fn)(const pcw__q_raw_rows *rows, void *arg), void *arg)
{
    return pcw__q_collect_raw_cmp(q, failed, ctr, NULL, 0, 0, NULL, fn, arg);
}

int pcw__q_collect_raw_cmp(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, const uint64_t *prev,
                           size_t prev_rows, size_t prev_words, uint64_t *changed,
                           int (*fn)(const pcw__q_raw_rows *rows, void *arg), void *arg)
{
    if (failed)
        *failed = 0;
    if (!q || q->log || !ctr || ctr->q != q || !fn || !raw_set(ctr))
        return PCW_E_INVALID_PARAMETER;
    const pcw__q_match *mt = &ctr->m[0];
    /* Planned from the last sample: the same set, steady, is expected. */
    int steady = raw_steady(mt);
    fused_raw f = {{steady ? mt->set : NULL, raw_read, raw_cannot}, fn, arg};
    f.abort = !steady;
    if (steady && prev && changed && prev_rows)
        f.prev = prev, f.prev_rows = prev_rows, f.prev_words = prev_words, f.changed = changed;
    q->rows = steady ? &f.base : NULL;
    int rc = pcw_pdh_collect(q, failed);
    q->rows = NULL;
    f.changed = NULL; /* (the runs after the read: without) */
    /* Done if this sample is steady too (and of the same set), and every
     * row was handed over. */
    if (rc == PCW_OK && !f.abort && raw_set(ctr) == f.base.set && raw_steady(&ctr->m[0]) &&
        f.next == pcw__q_snap(f.base.set, f.base.set->cur)->count)
        return rc;
    if (f.runs) {
        /* Runs were handed over that this sample does not end with: an
         * empty run says to forget them. */
        pcw__q_raw_rows restart = {NULL, 0, 0, 0};
        (void)fn(&restart, arg);
    }
    f.stop = 0;
    if (rc == PCW_OK && raw_set(ctr))
        hand_sample(ctr, &f);
    return rc;
}
