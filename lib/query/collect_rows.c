/* SPDX-License-Identifier: MIT */
/*
 * lib/query/collect_rows.c - pcw_pdh_collect_rows: a collection that
 * hands one handle's rows over as it reads them.
 *
 * pcw_pdh_collect_rows is pcw_pdh_collect and then pcw_pdh_visit_rows, in
 * one pass over the rows where it can: the rows pcw_pdh_visit_rows would
 * convert as one array (pcw__q_rows_contig: a segment set in steady state,
 * without totals, whose selected counters are plain 8-byte values side by
 * side) are converted and handed over run by run as the read validates
 * them (lib/consumer/private.h), while they are still in the cache -
 * instead of read a second time, out of memory, after the collection.
 *
 * Attribution: the read is one without names (read_set: no provider's
 * instance list changed since the last sample), and a row is the last
 * sample's instance at its position only while the provider's segment
 * generation is still the one of the last sample: a create or a close
 * increments it before its instance can be seen (P0 in
 * pcw_create_instance) or after it is gone (pcw_close_instance), and each
 * run's check loads it after the run's copies (read_run's R3 fence lies
 * between). The first run that fails any check stops the handover; if
 * the collection then does not end in the same steady state with every
 * row handed over, fn gets an empty block (restart) and the values again,
 * from the collection as it ended (pcw__q_cook_handle).
 *
 * The fetch reads through this file's row sink (fetch.h's pcw__q_row_sink,
 * q->rows during the collection): it calls fused_read and fused_cannot,
 * and never calls into this file by name, so the calls between the files
 * go one way (collect_rows.c calls pcw_pdh_collect, query.c and fetch.c).
 *
 * When the selected counters are the whole row, the read converts each
 * run as it copies it, into q->cvt (lib/consumer/private.h), and the blocks handed
 * over are pieces of that buffer: the rows are read once, not twice.
 */
#define _GNU_SOURCE 1 /* posix_memalign */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "consumer/private.h"
#include "fetch.h"
#include "kernels.h"
#include "match.h"
#include "pdh.h"
#include "rank.h"
#include "sink.h"
#include "snaprows.h"
#include "walk.h"
#include "logsource.h"

typedef struct fused {
    pcw__q_row_sink base; /* first: the fetch's view of it */
    pcw__q_sink *k;
    uint32_t off, nc;  /* the first selected counter's offset; how many */
    uint32_t koff;     /* pcw_pdh_collect_column: the offset of the column
                          handed over (off + 8 x its index); else off */
    uint32_t knc;      /* ...1; else nc */
    size_t cap;        /* rows the sink has room for (SIZE_MAX: a block
                          sink, any number) */
    pcw_segment *seg;  /* the source being read */
    uint64_t gen;      /* its segment's generation at the last sample */
    size_t next;       /* the next snapshot row to hand over */
    int abort;         /* not every row can be handed over as it is read */
    double *cvt;       /* the read's conversion buffer (NULL: none) */
    size_t cvt_cap;    /* doubles */
    pcw__q_rank *rank; /* pcw_pdh_collect_top: the column is offered to it
                          instead of the sink (NULL: not ranking) */
} fused;

/* The fetch's "this set's rows cannot be handed over as they are read"
 * (a read with names, a provider not read). */
static void fused_cannot(pcw__q_row_sink *base)
{
    ((fused *)base)->abort = 1;
}

/* Hand rows already converted (cv: nrows rows of nc values, all VALID)
 * over in blocks of at most the sink's room, after what the sink holds. */
static void sink_hand(pcw__q_sink *k, const double *cv, size_t nrows, uint32_t nc)
{
    pcw__q_sink_flush(k);
    size_t per = k->bcap / nc;
    for (size_t r = 0; r < nrows && !k->stop; r += per) {
        size_t m = nrows - r < per ? nrows - r : per, nv = m * nc;
        if (k->valid < nv) { /* the statuses: VALID, as far as written before */
            memset(k->rs + k->valid, PCW_CSTATUS_VALID, nv - k->valid);
            k->valid = nv;
        }
        pcw_pdh_rows b = {k->at, m, nc, cv + r * nc, k->rs};
        k->calls++;
        k->stop = k->fnb(&b, k->arg) != 0;
        k->at += nv;
    }
}

static void fused_run(void *arg, const pcw_snapshot *snap, size_t from, size_t to,
                      const double *cvt)
{
    fused *f = arg;
    if (f->abort || from != f->next || to > f->cap || snap->busy || !f->gen ||
        pcw_segment_generation(f->seg) != f->gen) {
        f->abort = 1;
        return;
    }
    if (f->rank)
        pcw__q_rank_plain(f->rank, pcw__q_row(snap, from) + f->koff, to - from, snap->data_size,
                          from);
    else if (!f->k->stop) {
        if (cvt && snap->data_size == 8 * (size_t)f->nc)
            sink_hand(f->k, cvt, to - from, f->nc);
        else
            pcw__q_rows_contig(snap, from, to, f->koff, f->knc, f->k);
    }
    f->next = to;
}

/* The fetch's read of one source of the set, appended to snap (as
 * pcw_segment_read; gen: its segment's generation at the last sample),
 * that hands each run of rows over as it is read. */
static int fused_read(pcw__q_row_sink *base, pcw_segment *seg, const pcw_counterset *cs,
                      pcw_snapshot *snap, unsigned flags, uint64_t gen)
{
    fused *f = (fused *)base;
    f->seg = seg;
    f->gen = gen;
    if (snap->count != f->next)
        f->abort = 1; /* rows missing before this source's */
    return pcw__segment_read_runs(seg, cs, snap, flags, fused_run, f, f->cvt, f->cvt_cap);
}

/* Runs of rows this wide at most are converted as they are read: 32
 * counters, a 256 KB buffer (half the L2 of this VM, docs/performance.md),
 * where the blocks handed over are read from. */
#define CVT_MOST_VALUES (32u * PCW__RUN_ROWS)

/* q's conversion buffer, room for a run of rows of nc values (NULL, and
 * the read converts nothing, if they are wider than CVT_MOST_VALUES or
 * there is no memory: a slower collection, not a failed one). Grown once;
 * a steady collection allocates nothing. */
static __attribute__((unused)) double *cvt_buffer(pcw_pdh *q, uint32_t nc, size_t *cap)
{
    size_t need = (size_t)nc * PCW__RUN_ROWS;
    *cap = 0;
    if (need > CVT_MOST_VALUES)
        return NULL;
    if (q->cvt_cap < need) {
        void *p = NULL;
        if (posix_memalign(&p, 64, need * sizeof(double)) != 0)
            return NULL;
        free(q->cvt);
        q->cvt = p, q->cvt_cap = need;
    }
    *cap = q->cvt_cap;
    return q->cvt;
}

/* Plan a fused collection of ctr into sink k: the fused reader of the set
 * the last sample says is steady (or one that hands nothing over), and
 * the handle's read hook set. col >= 0 hands over that selected counter
 * only, at most cap rows. */
static void fused_plan(pcw_pdh *q, pcw_pdh_counter *ctr, unsigned flags, pcw__q_sink *k, int col,
                       size_t cap, fused *f)
{
    uint32_t off = 0;
    const pcw__q_match *mt = pcw__q_contig_match(ctr, flags, &off);
    if (mt && col >= 0 && (uint32_t)col >= mt->nctr)
        mt = NULL; /* no such column: cook_column says so after */
    memset(f, 0, sizeof *f);
    f->base.set = mt ? mt->set : NULL;
    f->base.read = fused_read;
    f->base.cannot = fused_cannot;
    f->k = k;
    f->off = off;
    f->nc = mt ? mt->nctr : 0;
    f->koff = col >= 0 ? off + 8u * (uint32_t)col : off;
    f->knc = col >= 0 ? 1 : f->nc;
    f->cap = cap;
    f->abort = !mt;
    q->rows = mt ? &f->base : NULL;
}

/* After the collection (rc): did every row go through the sink, and does
 * the sample end in the steady state the rows were attributed in? */
static int fused_complete(pcw_pdh *q, pcw_pdh_counter *ctr, unsigned flags, int rc, const fused *f)
{
    q->rows = NULL;
    uint32_t off2 = 0;
    const pcw__q_match *mt2 =
        rc == PCW_OK && !f->abort ? pcw__q_contig_match(ctr, flags, &off2) : NULL;
    return mt2 && mt2->set == f->base.set && off2 == f->off && mt2->nctr == f->nc &&
           f->next == pcw__q_snap(f->base.set, f->base.set->cur)->count;
}

int pcw_pdh_collect_rows(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, unsigned flags,
                         int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    if (PCWL_Q(q) && ctr && ctr->q == q && fn)
        return pcwl_collect_rows(q, failed, ctr, flags, fn, arg);
    if (failed)
        *failed = 0;
    if (!q || !ctr || ctr->q != q || !fn)
        return PCW_E_INVALID_PARAMETER;
    pcw__q_block bl;
    if (pcw__q_block_open(&bl, ctr) != PCW_OK)
        return PCW_E_NO_MEMORY;
    pcw__q_sink k = pcw__q_block_sink(&bl, fn, arg);
    /* Planned from the last sample: the same set, steady, is expected. */
    fused f;
    fused_plan(q, ctr, flags, &k, -1, SIZE_MAX, &f);
#ifdef PCW__Q_HAVE_AVX2
    /* The whole row selected: converted as it is read (with AVX2 only,
     * so that $PCW_NO_AVX2 tests the other way). */
    if (f.base.set && f.off == 0 && 8 * (size_t)f.nc == f.base.set->data_size && pcw__q_use_avx2())
        f.cvt = cvt_buffer(q, f.nc, &f.cvt_cap);
#endif
    int rc = pcw_pdh_collect(q, failed);
    /* Done if this sample is steady too, and every row was handed over. */
    if (fused_complete(q, ctr, flags, rc, &f)) {
        pcw__q_sink_flush(&k);
    } else {
        if (k.calls) {
            /* Blocks were handed over that this sample does not end with:
             * an empty block says to forget them. */
            pcw_pdh_rows restart = {0, 0, 0, bl.v, bl.s};
            (void)fn(&restart, arg);
        }
        k = pcw__q_block_sink(&bl, fn, arg);
        if (rc == PCW_OK) {
            pcw__q_cook_handle(ctr, -1, flags, &k);
            pcw__q_sink_flush(&k);
        }
    }
    pcw__q_block_close(&bl);
    return rc;
}

int pcw_pdh_collect_column(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, size_t col,
                           unsigned flags, double *values, uint8_t *status, size_t cap,
                           size_t *count)
{
    if (count)
        *count = 0;
    if (failed)
        *failed = 0;
    if (!q || !ctr || ctr->q != q || !values || !count || col > INT32_MAX)
        return PCW_E_INVALID_PARAMETER;
    int rc;
    if (PCWL_Q(q)) { /* a log: collect, then cook (no read to fuse with) */
        rc = pcw_pdh_collect(q, failed);
    } else {
        /* The column's values go straight into the caller's arrays as
         * each run is read (the same attribution as collect_rows); any
         * doubt, and cook_column writes them all again after. */
        pcw__q_sink k = {.values = values, .status = status};
        fused f;
        fused_plan(q, ctr, flags, &k, (int)col, cap, &f);
        rc = pcw_pdh_collect(q, failed);
        if (fused_complete(q, ctr, flags, rc, &f)) {
            *count = f.next;
            return rc;
        }
    }
    if (rc != PCW_OK)
        return rc;
    *count = pcw_pdh_instance_count(ctr);
    if (*count > cap)
        return PCW_OK; /* the caller grows its arrays and cooks the column */
    int r = pcw_pdh_cook_column(ctr, col, flags, values, status);
    return r != PCW_OK ? r : rc;
}

/* pcw_pdh_collect_top's walk after the read: column `col` of each block
 * (count values an instance) offered. */
typedef struct rank_walk {
    pcw__q_rank *r;
    uint32_t col;
} rank_walk;

static int rank_block(const pcw_pdh_rows *b, void *arg)
{
    const rank_walk *w = arg;
    size_t at = b->first / (b->count ? b->count : 1);
    for (size_t i = 0; i < b->rows; i++) {
        size_t j = i * b->count + w->col;
        if (b->status[j] == PCW_CSTATUS_VALID)
            pcw__q_rank_offer(w->r, b->values[j], at + i);
    }
    return 0;
}

/* Rank column col of the collection as it ended, from the start (no
 * bound): a walk over that counter alone (a log's: over its rows). */
static int rank_after(pcw_pdh *q, pcw_pdh_counter *ctr, const pcw_pdh_top *t, pcw__q_rank *r)
{
    pcw__q_rank_start(r, q->rank, q->rank_cap, t->cap, t->descending, NAN);
    rank_walk w = {r, 0};
    if (PCWL_Q(q)) {
        if (t->counter >= pcw_pdh_selected_counter_count(ctr))
            return PCW_E_INVALID_PARAMETER;
        w.col = (uint32_t)t->counter;
        return pcw_pdh_visit_rows(ctr, t->flags, rank_block, &w);
    }
    const pcw__q_match *mt = pcw__q_match_single(ctr);
    if (!mt || t->counter >= mt->nctr)
        return PCW_E_INVALID_PARAMETER;
    pcw__q_block bl;
    if (pcw__q_block_open(&bl, ctr) != PCW_OK)
        return PCW_E_NO_MEMORY;
    pcw__q_sink k = pcw__q_block_sink(&bl, rank_block, &w);
    pcw__q_cook_handle(ctr, (int)t->counter, t->flags, &k);
    pcw__q_sink_flush(&k);
    pcw__q_block_close(&bl);
    return PCW_OK;
}

int pcw_pdh_collect_top(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, pcw_pdh_top *t)
{
    if (failed)
        *failed = 0;
    if (t)
        t->count = 0, t->fused = 0;
    if (!q || !ctr || ctr->q != q || !t || (!t->ranked && t->cap) || t->cap > PCW_PDH_TOP_MAX ||
        t->counter > INT32_MAX)
        return PCW_E_INVALID_PARAMETER;
    if (!t->cap)
        return pcw_pdh_collect(q, failed);
    /* The candidates' room: cut back to cap whenever it fills, so at
     * least max(cap, 4,096) new keys come between two cut-backs. */
    size_t room = 2 * (t->cap > 4096 ? t->cap : 4096);
    if (q->rank_cap < room) {
        pcw_pdh_ranked *b = malloc(room * sizeof *b);
        if (!b)
            return PCW_E_NO_MEMORY;
        free(q->rank);
        q->rank = b, q->rank_cap = room;
    }
    pcw__q_rank r;
    int rc, done = 0;
    if (PCWL_Q(q)) { /* a log: collect, then rank (no read to fuse with) */
        rc = pcw_pdh_collect(q, failed);
    } else {
        /* Each run's column offered as the read validates it (the same
         * attribution as collect_rows); any doubt, or a bound that fewer
         * than cap values reached, and the column is ranked after. */
        pcw__q_sink k = {0};
        fused f;
        fused_plan(q, ctr, t->flags, &k, (int)t->counter, SIZE_MAX, &f);
        pcw__q_rank_start(&r, q->rank, q->rank_cap, t->cap, t->descending, t->bound);
        f.rank = &r;
        rc = pcw_pdh_collect(q, failed);
        done = fused_complete(q, ctr, t->flags, rc, &f) && pcw__q_rank_complete(&r);
    }
    if (rc != PCW_OK)
        return rc;
    if (!done) {
        int r2 = rank_after(q, ctr, t, &r);
        if (r2 != PCW_OK)
            return r2;
    }
    t->count = pcw__q_rank_end(&r, t->ranked);
    t->fused = done;
    return PCW_OK;
}
