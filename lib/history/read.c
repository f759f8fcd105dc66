/* SPDX-License-Identifier: MIT */
/*
 * lib/history/read.c - reading a pcw log (docs/history.md).
 *
 * Every log is hostile input. Blocks are read one at a time (memory: one
 * block, at most PCW__HIST_BLOCK_MAX_RAW decompressed, and a decompressed size
 * at most PCW__HIST_MAX_RATIO times the stored one, so the work per byte of
 * file is bounded; so are a block's histogram words,
 * PCW__HIST_MAX_BLOCK_WORDS), checked (magic, lengths, CRC, sequence
 * number) before any record is decoded, and every record is checked
 * against the block's end. The first block that fails ends the reading
 * with a sentence naming its offset; the samples before it were already
 * handed out.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <pcw/histogram.h>

#include "codec.h"
#include "history.h"

struct pcw__hist_reader {
    int fd;                   /* -1: reading `mem` */
    const unsigned char *mem; /* pcw__hist_reader_open_mem's buffer */
    size_t mem_len;
    uint64_t off; /* past the last block read whole */
    uint64_t blocks;
    unsigned char *stored, *raw; /* the current block */
    size_t stored_cap, raw_cap;
    ZSTD_DCtx *zd;                /* made at the first compressed block and kept (one
                                     made and freed per block cost ~3 % of reading) */
    const unsigned char *p, *end; /* records left in it */
    uint64_t block_off;
    pcw__hist_series *series;
    pcw__hist_value *values;
    pcw__hist_prev *prev;
    unsigned char *kind;
    size_t nseries, cap;
    pcw__hist_tstate t;
    int broken;
    uint64_t seen;        /* blocks read so far at most (pcw__hist_reader_seek goes back) */
    int reread;           /* the current block was read before */
    pcw__hist_value *out; /* pcw__hist_reader_set_output's array, or NULL: values */
    size_t out_tail;      /* its values from out_tail on have no instance */
    size_t tail;          /* the same for `values` */
    size_t last_n;        /* values the last sample held */
    uint64_t gen;         /* block loads so far (never goes back: pcw__hist_prev.gen) */
    uint32_t *changed;    /* series whose identity record came since the last
                             pcw__hist_reader_next, each once (at most nseries) */
    size_t nchanged, changed_cap;
    uint64_t calls;   /* pcw__hist_reader_next calls so far */
    uint64_t *listed; /* per series: the call whose `changed` lists it */
    uint32_t version; /* the file header's */
    int frozen;       /* pcw__hist_reader_freeze: no series defined from now on */
    /* Histograms (version 2): per series, the words state (hs[i].n 0: not
     * a histogram of a provider's instance), allocated as identities name
     * histograms; hwords counts the words kept (PCW__HIST_MAX_HWORDS). */
    pcw__hist_hstate *hs;
    size_t hs_cap;
    uint64_t hwords;
    uint64_t bwords; /* words the current block's values decoded (PCW__HIST_MAX_BLOCK_WORDS) */
    uint64_t brows;  /* values its row samples decoded (PCW__HIST_ROW_VALUES_*) */
    uint64_t rlimit; /* ... at most */
};

/* Up to len bytes at offset off: how many were there. */
static size_t fetch(pcw__hist_reader *r, uint64_t off, void *buf, size_t len)
{
    if (r->fd < 0) {
        if (off >= r->mem_len)
            return 0;
        size_t n = r->mem_len - off < len ? (size_t)(r->mem_len - off) : len;
        memcpy(buf, r->mem + off, n);
        return n;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(r->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    return done;
}

static int open_common(pcw__hist_reader *r, char *why, size_t why_len)
{
    unsigned char h[PCW__HIST_FILE_HEADER];
    if (fetch(r, 0, h, sizeof h) != sizeof h || memcmp(h, PCW__HIST_MAGIC, 8) != 0)
        return pcw__hist_fail(why, why_len, "not a pcw log (no \"PCWLOG\" header at offset 0)");
    uint32_t v = pcw__hist_le32(h + 8);
    if (v < PCW__HIST_VERSION_MIN || v > PCW__HIST_VERSION)
        return pcw__hist_fail(why, why_len,
                              "pcw log version %u, this reader knows versions %u to %u", v,
                              PCW__HIST_VERSION_MIN, PCW__HIST_VERSION);
    r->version = v;
    r->off = PCW__HIST_FILE_HEADER;
    return 0;
}

int pcw__hist_reader_open(pcw__hist_reader **out, const char *file, char *why, size_t why_len)
{
    *out = NULL;
    pcw__hist_reader *r = calloc(1, sizeof *r);
    if (!r)
        return pcw__hist_fail(why, why_len, "out of memory");
    /* O_NONBLOCK: a FIFO (or a device) named as a log must not wait for a
     * writer; anything but a regular file is refused, and the flag taken
     * off again. Links are followed: the user names the log. */
    struct stat st;
    const char *what = NULL;
    r->fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (r->fd < 0 || fstat(r->fd, &st) != 0)
        what = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        what = "not a regular file (a pcw log is one)", errno = EINVAL;
    else if (fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) & ~O_NONBLOCK) != 0)
        what = strerror(errno);
    if (what) {
        int e = errno; /* (the caller's status: pcw_pdh_open_log) */
        pcw__hist_fail(why, why_len, "%s: %s", file, what);
        pcw__hist_reader_close(r);
        errno = e;
        return -1;
    }
    if (open_common(r, why, why_len)) {
        pcw__hist_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

int pcw__hist_reader_open_mem(pcw__hist_reader **out, const void *data, size_t len, char *why,
                              size_t why_len)
{
    *out = NULL;
    pcw__hist_reader *r = calloc(1, sizeof *r);
    if (!r)
        return pcw__hist_fail(why, why_len, "out of memory");
    r->fd = -1, r->mem = data, r->mem_len = len;
    if (open_common(r, why, why_len)) {
        pcw__hist_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

void pcw__hist_reader_close(pcw__hist_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    for (size_t i = 0; i < r->nseries; i++)
        free(r->series[i].path);
    free(r->series);
    free(r->values);
    free(r->prev);
    free(r->kind);
    for (size_t i = 0; i < r->hs_cap; i++)
        free(r->hs[i].w[0]), free(r->hs[i].w[1]);
    free(r->hs);
    free(r->stored);
    free(r->raw);
    ZSTD_freeDCtx(r->zd);
    free(r->changed);
    free(r->listed);
    free(r);
}

static int grow_buf(unsigned char **b, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    unsigned char *n = realloc(*b, need);
    if (!n)
        return -1;
    *b = n, *cap = need;
    return 0;
}

/* Read and check the block at r->off: 1 loaded, 0 clean end, -1 damaged. */
static int load_block(pcw__hist_reader *r, char *why, size_t why_len)
{
    unsigned long long at = (unsigned long long)r->off;
    unsigned char h[PCW__HIST_BLOCK_HEADER];
    size_t got = fetch(r, r->off, h, sizeof h);
    if (got == 0)
        return 0;
    if (got < sizeof h)
        return pcw__hist_fail(why, why_len,
                              "incomplete block header at offset %llu (%zu of %u bytes)", at, got,
                              PCW__HIST_BLOCK_HEADER);
    if (pcw__hist_le32(h) != PCW__HIST_BLOCK_MAGIC)
        return pcw__hist_fail(why, why_len, "no block at offset %llu (bad block magic)", at);
    uint32_t stored = pcw__hist_le32(h + 4), raw = pcw__hist_le32(h + 8),
             flags = pcw__hist_le32(h + 12);
    uint64_t seq = pcw__hist_le64(h + 16);
    if (flags & ~(uint32_t)PCW__HIST_BLOCK_ZSTD || pcw__hist_le32(h + 28) != 0)
        return pcw__hist_fail(why, why_len, "block at offset %llu: unknown flags %#x", at, flags);
    if (raw > PCW__HIST_BLOCK_MAX_RAW || stored > raw ||
        (uint64_t)raw > (uint64_t)stored * PCW__HIST_MAX_RATIO + 65536 ||
        (!(flags & PCW__HIST_BLOCK_ZSTD) && stored != raw))
        return pcw__hist_fail(
            why, why_len, "block at offset %llu: bad lengths (stored %u, decompressed %u bytes)",
            at, stored, raw);
    if (seq != r->blocks)
        return pcw__hist_fail(why, why_len,
                              "block at offset %llu: sequence number %llu, expected %llu", at,
                              (unsigned long long)seq, (unsigned long long)r->blocks);
    if (grow_buf(&r->stored, &r->stored_cap, stored ? stored : 1) ||
        grow_buf(&r->raw, &r->raw_cap, raw ? raw : 1))
        return pcw__hist_fail(why, why_len, "out of memory");
    got = fetch(r, r->off + PCW__HIST_BLOCK_HEADER, r->stored, stored);
    if (got < stored)
        return pcw__hist_fail(why, why_len, "incomplete block at offset %llu (%zu of %u bytes)", at,
                              got, stored);
    if (pcw__hist_block_check(r->version, h, r->stored, stored) != pcw__hist_le32(h + 24))
        return pcw__hist_fail(why, why_len, "block at offset %llu: %s mismatch (damaged)", at,
                              r->version >= 3 ? "XXH3 check" : "CRC-32");
    if (flags & PCW__HIST_BLOCK_ZSTD) {
        if (!r->zd && !(r->zd = ZSTD_createDCtx()))
            return pcw__hist_fail(why, why_len, "out of memory");
        size_t n = ZSTD_decompressDCtx(r->zd, r->raw, raw, r->stored, stored);
        if (ZSTD_isError(n) || n != raw)
            return pcw__hist_fail(why, why_len, "block at offset %llu: zstd: %s", at,
                                  ZSTD_isError(n) ? ZSTD_getErrorName(n)
                                                  : "wrong decompressed size");
    } else {
        memcpy(r->raw, r->stored, raw);
    }
    r->block_off = r->off;
    r->off += PCW__HIST_BLOCK_HEADER + stored;
    r->reread = r->blocks < r->seen;
    r->blocks++;
    if (r->blocks > r->seen)
        r->seen = r->blocks;
    r->p = r->raw, r->end = r->raw + raw;
    /* Deltas start from zero again: each series' when it is next used
     * (prev.gen), so that a block costs its bytes, not the series. */
    r->gen++;
    memset(&r->t, 0, sizeof r->t);
    r->bwords = 0;
    r->brows = 0;
    r->rlimit = PCW__HIST_ROW_VALUES_BASE + (uint64_t)PCW__HIST_ROW_VALUES_PER_BYTE * raw;
    return 1;
}

#define GET(v)                                                                                     \
    do {                                                                                           \
        if (pcw__hist_get_varint(&r->p, r->end, &(v)))                                             \
            return pcw__hist_fail(why, why_len, "block at offset %llu: record cut short",          \
                                  (unsigned long long)r->block_off);                               \
    } while (0)

static int bad(pcw__hist_reader *r, char *why, size_t why_len, const char *what)
{
    return pcw__hist_fail(why, why_len, "block at offset %llu: %s",
                          (unsigned long long)r->block_off, what);
}

static int rec_series(pcw__hist_reader *r, char *why, size_t why_len)
{
    uint64_t id, kind, len;
    GET(id);
    GET(kind);
    GET(len);
    if (r->reread && id < r->nseries && len <= (uint64_t)(r->end - r->p)) {
        /* Read again after pcw__hist_reader_seek: defined already. */
        r->p += len;
        return 0;
    }
    if (r->frozen)
        return bad(r, why, why_len,
                   "a series the log did not hold when it was opened (changed since)");
    if (id != r->nseries || id >= PCW__HIST_MAX_SERIES)
        return bad(r, why, why_len, "series defined out of order");
    if (kind > PCW__HIST_KIND_COMPUTED || len > PCW__HIST_MAX_STRING ||
        len > (uint64_t)(r->end - r->p))
        return bad(r, why, why_len, "bad series definition");
    if (r->nseries == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        pcw__hist_series *s = realloc(r->series, cap * sizeof *s);
        if (s)
            r->series = s;
        pcw__hist_value *v = s ? realloc(r->values, cap * sizeof *v) : NULL;
        if (v)
            r->values = v;
        pcw__hist_prev *p = v ? realloc(r->prev, cap * sizeof *p) : NULL;
        if (p)
            r->prev = p;
        unsigned char *k = p ? realloc(r->kind, cap) : NULL;
        if (k)
            r->kind = k;
        uint64_t *l = k ? realloc(r->listed, cap * sizeof *l) : NULL;
        if (!l)
            return pcw__hist_fail(why, why_len, "out of memory");
        r->listed = l, r->cap = cap;
    }
    pcw__hist_series *s = &r->series[r->nseries];
    memset(s, 0, sizeof *s);
    if (!(s->path = malloc(len + 1)))
        return pcw__hist_fail(why, why_len, "out of memory");
    memcpy(s->path, r->p, len);
    s->path[len] = 0;
    r->p += len;
    s->kind = (uint32_t)kind;
    memset(&r->values[r->nseries], 0, sizeof r->values[0]);
    r->values[r->nseries].raw.status = PCW_CSTATUS_NO_INSTANCE;
    memset(&r->prev[r->nseries], 0, sizeof r->prev[0]);
    r->kind[r->nseries] = (unsigned char)kind;
    r->listed[r->nseries] = 0;
    r->nseries++;
    return 0;
}

/* ---- histograms (version 2) ---------------------------------------------- */

/* Series i's words state for its identity's shape (0: none): room for two
 * arrays of its words, within PCW__HIST_MAX_HWORDS. */
static int hstate_for(pcw__hist_reader *r, size_t i, uint32_t shape, char *why, size_t why_len)
{
    if (i >= r->hs_cap) {
        if (!shape)
            return 0;
        size_t cap = r->hs_cap ? r->hs_cap : 16;
        while (cap <= i)
            cap *= 2;
        pcw__hist_hstate *hs = realloc(r->hs, cap * sizeof *hs);
        if (!hs)
            return pcw__hist_fail(why, why_len, "out of memory");
        memset(hs + r->hs_cap, 0, (cap - r->hs_cap) * sizeof *hs);
        r->hs = hs, r->hs_cap = cap;
    }
    pcw__hist_hstate *h = &r->hs[i];
    uint32_t n = shape ? 2 + pcw_hist_nbuckets(shape) : 0;
    if (n > h->cap) {
        if (r->hwords + 2ull * (n - h->cap) > 2ull * PCW__HIST_MAX_HWORDS)
            return bad(r, why, why_len, "more histogram buckets than a log may hold");
        for (int k = 0; k < 2; k++) {
            uint64_t *a = realloc(h->w[k], (size_t)n * sizeof *a);
            if (!a)
                return pcw__hist_fail(why, why_len, "out of memory");
            h->w[k] = a;
        }
        r->hwords += 2ull * (n - h->cap);
        h->cap = n;
    }
    h->n = n;
    h->block = 0; /* a new identity: its next words are whole */
    return 0;
}

/* The rest of an identity record: a histogram's shape and statistic. */
static int rec_ident_histogram(pcw__hist_reader *r, size_t id, char *why, size_t why_len)
{
    pcw__hist_series *s = &r->series[id];
    s->hshape = 0;
    memset(&s->hstat, 0, sizeof s->hstat);
    if (r->version < 2 || s->type != PERF_PCW_HISTOGRAM)
        return hstate_for(r, id, 0, why, why_len);
    uint64_t shape, kind, q;
    GET(shape);
    GET(kind);
    GET(q);
    double qd;
    memcpy(&qd, &q, sizeof qd);
    if (shape > UINT32_MAX || !pcw_hist_shape_valid((uint32_t)shape) || kind < PCW_HSTAT_RATE ||
        kind > PCW_HSTAT_SUM || (kind == PCW_HSTAT_QUANTILE ? !(qd > 0 && qd <= 1) : q != 0))
        return bad(r, why, why_len, "bad histogram identity");
    s->hshape = (uint32_t)shape;
    s->hstat.kind = (int)kind;
    s->hstat.q = qd;
    return hstate_for(r, id, r->kind[id] == PCW__HIST_KIND_RAW ? s->hshape : 0, why, why_len);
}

/* A raw histogram value's words into v (rec_sample, the value VALID). */
static int rec_hwords(pcw__hist_reader *r, size_t i, pcw__hist_value *v, char *why, size_t why_len)
{
    pcw__hist_hstate *h = &r->hs[i];
    uint64_t n;
    GET(n);
    if (n != h->n)
        return bad(r, why, why_len, "histogram words do not match the shape");
    /* Each value costs all its words (its base copied), however few bytes
     * name a change: bounded per block, so work stays per byte. */
    if (r->bwords + n > PCW__HIST_MAX_BLOCK_WORDS)
        return bad(r, why, why_len, "more histogram words in one block than a log may hold");
    r->bwords += n;
    unsigned into = h->cur ^ 1;
    const uint64_t *base = h->block == r->gen ? h->w[h->cur] : NULL;
    if (pcw__hist_get_hwords(&r->p, r->end, h->w[into], base, h->n))
        return bad(r, why, why_len, "bad histogram words");
    h->cur = into, h->block = r->gen;
    v->hwords = h->w[into];
    v->hn = h->n;
    return 0;
}

/* The rest of a version 3 identity record: the layout (0, or 1 and its
 * fields), only for a provider's instance that is no histogram. */
static int rec_ident_layout(pcw__hist_reader *r, pcw__hist_series *s, char *why, size_t why_len)
{
    uint64_t has, f[6];
    GET(has);
    if (!has)
        return 0;
    for (int i = 0; i < 6; i++)
        GET(f[i]);
    pcw__hist_layout l = {
        0, (uint32_t)f[0], (uint32_t)f[1], (uint32_t)f[2], (uint32_t)f[3], (uint32_t)f[4], f[5]};
    for (int i = 0; i < 5; i++)
        if (f[i] > UINT32_MAX)
            return bad(r, why, why_len, "bad row layout");
    if (has != 1 || s->kind != PCW__HIST_KIND_RAW || s->type == PERF_PCW_HISTOGRAM ||
        !(l.words = pcw__hist_layout_words(&l, PCW_CSTATUS_LAST)))
        return bad(r, why, why_len, "bad row layout");
    s->layout = l;
    return 0;
}

/* ---- records --------------------------------------------------------------- */

static int rec_ident(pcw__hist_reader *r, char *why, size_t why_len)
{
    uint64_t id, type, scale, prov, inst, pid, dup;
    GET(id);
    GET(type);
    GET(scale);
    GET(prov);
    GET(inst);
    GET(pid);
    GET(dup);
    if (id >= r->nseries || type > UINT32_MAX || inst > UINT32_MAX || dup > UINT32_MAX)
        return bad(r, why, why_len, "bad identity record");
    pcw__hist_series *s = &r->series[id];
    s->type = (uint32_t)type;
    /* A hostile scale, clamped: 10^400 is no finite number and 10^-400
     * underflows to 0 as any larger one would, and the power of ten
     * cooking takes must not see INT32_MIN (it negates it). */
    int64_t sc = pcw__hist_unzigzag(scale);
    s->scale = (int32_t)(sc < -PCW__HIST_MAX_SCALE  ? -PCW__HIST_MAX_SCALE
                         : sc > PCW__HIST_MAX_SCALE ? PCW__HIST_MAX_SCALE
                                                    : sc);
    s->provider_id = prov;
    s->instance_id = (uint32_t)inst;
    s->pid = (int32_t)pcw__hist_unzigzag(pid);
    s->dup_index = (uint32_t)dup;
    s->epoch++;
    memset(&s->layout, 0, sizeof s->layout);
    if (r->listed[id] != r->calls) { /* once per call, however many records */
        if (r->nchanged == r->changed_cap) {
            size_t cap = r->changed_cap ? r->changed_cap * 2 : 16;
            uint32_t *c = realloc(r->changed, cap * sizeof *c);
            if (!c)
                return pcw__hist_fail(why, why_len, "out of memory");
            r->changed = c, r->changed_cap = cap;
        }
        r->changed[r->nchanged++] = (uint32_t)id;
        r->listed[id] = r->calls;
    }
    if (rec_ident_histogram(r, (size_t)id, why, why_len))
        return -1;
    return r->version >= 3 ? rec_ident_layout(r, s, why, why_len) : 0;
}

/* A sample's times from the record's two numbers (delta of delta). */
static void put_times(pcw__hist_reader *r, uint64_t t0, uint64_t t1)
{
    pcw__hist_tstate *t = &r->t;
    /* The sums in uint64_t (a hostile delta wraps, as the writer's
     * differences do; int64_t overflow would be undefined). */
    if (t->n == 0) {
        t->mono = t0;
        t->mono_delta = 0;
    } else {
        t->mono_delta = (int64_t)((uint64_t)t->mono_delta + (uint64_t)pcw__hist_unzigzag(t0));
        t->mono += (uint64_t)t->mono_delta;
    }
    t->real_offset = t->n == 0
                         ? pcw__hist_unzigzag(t1)
                         : (int64_t)((uint64_t)t->real_offset + (uint64_t)pcw__hist_unzigzag(t1));
    t->n++;
}

/* Where a sample of n values goes; the series after them have no
 * instance (set only where the last sample into this array had one: the
 * work is the sample's bytes, not the series defined). */
static pcw__hist_value *sample_out(pcw__hist_reader *r, size_t n)
{
    pcw__hist_value *out = r->out ? r->out : r->values;
    size_t *tail = r->out ? &r->out_tail : &r->tail;
    for (size_t i = n; i < *tail && i < r->nseries; i++)
        out[i] = (pcw__hist_value){.raw = {.status = PCW_CSTATUS_NO_INSTANCE}};
    *tail = r->last_n = n;
    return out;
}

/* Series i's deltas state, zero when it was last used in another block. */
static inline pcw__hist_prev *prev_of(pcw__hist_reader *r, size_t i)
{
    pcw__hist_prev *p = &r->prev[i];
    if (p->gen != r->gen) {
        memset(p, 0, sizeof *p);
        p->gen = r->gen;
    }
    return p;
}

/* Values of series [from, from + n) as a sample record holds them, into
 * out[from...]. The hot loop of reading a v2 log (docs/performance.md), so
 * the cursor is a local (not r->p through a pointer at every varint) and
 * the previous values are added in registers. */
static int get_values(pcw__hist_reader *r, pcw__hist_value *out, size_t from, size_t n, char *why,
                      size_t why_len)
{
    const unsigned char *cp = r->p, *end = r->end;
    /* The reader's fields the loop reads, in locals: the stores into the
     * values and deltas would otherwise make the compiler load them from
     * r again for every value (rec_hwords changes none of them). */
    pcw__hist_prev *const prev = r->prev;
    const unsigned char *const kind = r->kind;
    const uint64_t gen = r->gen;
    const uint32_t version = r->version;
#define VGET(v)                                                                                    \
    do {                                                                                           \
        if (pcw__hist_get_varint(&cp, end, &(v))) {                                                \
            r->p = cp;                                                                             \
            return pcw__hist_fail(why, why_len, "block at offset %llu: record cut short",          \
                                  (unsigned long long)r->block_off);                               \
        }                                                                                          \
    } while (0)
    for (size_t i = from; i < from + n; i++) {
        pcw__hist_value *v = &out[i];
        pcw__hist_prev *p = &prev[i];
        if (p->gen != gen) /* prev_of's */
            *p = (pcw__hist_prev){.gen = gen};
        uint64_t st;
        VGET(st);
        if (st > PCW_CSTATUS_LAST) {
            r->p = cp;
            return bad(r, why, why_len, "unknown value status");
        }
        if (!pcw__hist_has_number(version, kind[i], st)) {
            /* (Every field written: no memset of the whole value.) */
            v->raw = (pcw_raw){.status = (int)st};
            v->computed = 0;
            v->hwords = NULL;
            v->hn = 0;
            continue;
        }
        v->raw.status = (int)st; /* VALID, or a computed histogram's ABOVE_RANGE */
        v->hwords = NULL;
        v->hn = 0;
        if (kind[i] == PCW__HIST_KIND_COMPUTED) {
            uint64_t x;
            VGET(x);
            p->f[0] ^= x;
            memcpy(&v->computed, &p->f[0], sizeof v->computed);
            v->raw.first = v->raw.second = v->raw.multi = v->raw.freq = v->raw.time_ns = 0;
            continue;
        }
        uint64_t d0, d1, d2, d3, d4;
        VGET(d0);
        VGET(d1);
        VGET(d2);
        VGET(d3);
        VGET(d4);
        v->raw.first = p->f[0] += (uint64_t)pcw__hist_unzigzag(d0);
        v->raw.second = p->f[1] += (uint64_t)pcw__hist_unzigzag(d1);
        v->raw.multi = p->f[2] += (uint64_t)pcw__hist_unzigzag(d2);
        v->raw.freq = p->f[3] += (uint64_t)pcw__hist_unzigzag(d3);
        v->raw.time_ns = p->f[4] += (uint64_t)pcw__hist_unzigzag(d4);
        v->computed = 0;
        if (i < r->hs_cap && r->hs[i].n) {
            r->p = cp;
            if (rec_hwords(r, i, v, why, why_len))
                return -1;
            cp = r->p;
        }
    }
#undef VGET
    r->p = cp;
    return 0;
}

static int rec_sample(pcw__hist_reader *r, char *why, size_t why_len)
{
    uint64_t t0, t1, n;
    GET(t0);
    GET(t1);
    put_times(r, t0, t1);
    GET(n);
    if (n > r->nseries)
        return bad(r, why, why_len, "sample of more series than defined");
    return get_values(r, sample_out(r, (size_t)n), 0, (size_t)n, why, why_len);
}

/* ---- row samples (version 3) ------------------------------------------- */

/* Row `row` of a piece from series `at` on, its words w: each series'
 * raw sample by its layout, at time t. */
static int put_row(pcw__hist_reader *r, pcw__hist_value *out, size_t at, const uint64_t *w,
                   uint32_t width, uint64_t t, char *why, size_t why_len)
{
    for (uint32_t j = 0; j < width; j++) {
        size_t i = at + j;
        const pcw__hist_layout *l = &r->series[i].layout;
        /* A series in a row has a layout within the row (and so is a
         * provider's instance and no histogram: rec_ident_layout). */
        if (!l->words || l->words > width)
            return bad(r, why, why_len, "a series in a row sample without a layout that fits it");
        prev_of(r, i)->word = w[j];
        pcw__hist_value *v = &out[i];
        pcw__hist_row_raw(l, w, t, &v->raw);
        v->computed = 0;
        v->hwords = NULL;
        v->hn = 0;
    }
    return 0;
}

/* A ROWS or WHOLE piece of `count` rows from series at (its header read). */
static int get_rows(pcw__hist_reader *r, pcw__hist_value *out, unsigned kind, size_t at,
                    size_t count, uint32_t width, uint64_t t, char *why, size_t why_len)
{
    uint64_t w[PCW__HIST_ROW_WORDS];
    size_t mbytes = (width + 7) / 8;
    for (size_t row = 0; row < count;) {
        size_t s = at + row * width;
        if (kind == PCW__HIST_SEG_WHOLE) {
            if ((size_t)(r->end - r->p) < 8 * (size_t)width)
                return bad(r, why, why_len, "record cut short");
            for (uint32_t j = 0; j < width; j++)
                w[j] = pcw__hist_le64(r->p + 8 * j);
            r->p += 8 * (size_t)width;
            if (put_row(r, out, s, w, width, t, why, why_len))
                return -1;
            row++;
            continue;
        }
        /* Rows that did not change, then one that did (unless the count
         * ends the piece). */
        uint64_t same;
        GET(same);
        if (same > count - row)
            return bad(r, why, why_len, "bad row sample");
        for (; same; same--, row++, s += width) {
            for (uint32_t j = 0; j < width; j++)
                w[j] = prev_of(r, s + j)->word;
            if (put_row(r, out, s, w, width, t, why, why_len))
                return -1;
        }
        if (row == count)
            break;
        if ((size_t)(r->end - r->p) < mbytes)
            return bad(r, why, why_len, "record cut short");
        uint64_t mask = 0;
        for (size_t b = 0; b < mbytes; b++)
            mask |= (uint64_t)r->p[b] << (8 * b);
        r->p += mbytes;
        if (!mask || (width < 64 && mask >> width))
            return bad(r, why, why_len, "bad row sample");
        for (uint32_t j = 0; j < width; j++) {
            w[j] = prev_of(r, s + j)->word;
            if (mask >> j & 1) {
                uint64_t d;
                GET(d);
                w[j] += (uint64_t)pcw__hist_unzigzag(d);
            }
        }
        if (put_row(r, out, s, w, width, t, why, why_len))
            return -1;
        row++;
    }
    return 0;
}

static int rec_rows(pcw__hist_reader *r, char *why, size_t why_len)
{
    uint64_t n;
    GET(n);
    if (n > r->nseries)
        return bad(r, why, why_len, "sample of more series than defined");
    /* Rows that did not change cost no byte: the values row samples
     * decode are bounded per block, by its bytes (history.h). */
    if (r->brows + n > r->rlimit)
        return bad(r, why, why_len, "more row values in one block than its bytes allow");
    r->brows += n;
    pcw__hist_value *out = sample_out(r, (size_t)n);
    uint64_t t = r->t.n ? r->t.mono : 0; /* a piece's time: from the last one */
    for (size_t at = 0; at < n;) {
        uint64_t tag, st, width, dt;
        GET(tag);
        unsigned kind = (unsigned)(tag & 3);
        uint64_t count = tag >> 2;
        if (!count || count > n - at)
            return bad(r, why, why_len, "bad row sample");
        if (kind == PCW__HIST_SEG_ABSENT) {
            GET(st);
            if (st > PCW_CSTATUS_LAST || st == PCW_CSTATUS_VALID ||
                pcw__hist_has_number(r->version, PCW__HIST_KIND_COMPUTED, st))
                return bad(r, why, why_len, "unknown value status");
            for (size_t i = at; i < at + count; i++)
                out[i] = (pcw__hist_value){.raw = {.status = (int)st}};
            at += count;
            continue;
        }
        if (kind == PCW__HIST_SEG_VALUES) {
            if (get_values(r, out, at, (size_t)count, why, why_len))
                return -1;
            at += count;
            continue;
        }
        GET(width);
        GET(dt);
        if (!width || width > PCW__HIST_ROW_WORDS || count > (n - at) / width)
            return bad(r, why, why_len, "bad row sample");
        t += (uint64_t)pcw__hist_unzigzag(dt);
        if (get_rows(r, out, kind, at, (size_t)count, (uint32_t)width, t, why, why_len))
            return -1;
        at += count * width;
    }
    uint64_t t0, t1;
    GET(t0);
    GET(t1);
    put_times(r, t0, t1);
    return 0;
}

int pcw__hist_reader_next(pcw__hist_reader *r, uint64_t *mono_ns, uint64_t *real_ns,
                          const pcw__hist_value **v, size_t *n, char *why, size_t why_len)
{
    if (r->broken)
        return pcw__hist_fail(why, why_len, "the log is damaged at offset %llu",
                              (unsigned long long)r->off);
    r->nchanged = 0;
    r->calls++; /* (from 1: a series' listed 0 is no call) */
    for (;;) {
        while (r->p == r->end) {
            int rc = load_block(r, why, why_len);
            if (rc <= 0) {
                r->broken = rc < 0;
                return rc;
            }
        }
        uint64_t type = 0;
        int rc;
        if (pcw__hist_get_varint(&r->p, r->end, &type))
            rc = bad(r, why, why_len, "record cut short");
        else if (type == PCW__HIST_REC_SERIES)
            rc = rec_series(r, why, why_len);
        else if (type == PCW__HIST_REC_IDENT)
            rc = rec_ident(r, why, why_len);
        else if (type == PCW__HIST_REC_SAMPLE)
            rc = rec_sample(r, why, why_len);
        else if (type == PCW__HIST_REC_ROWS && r->version >= 3)
            rc = rec_rows(r, why, why_len);
        else
            rc = bad(r, why, why_len, "unknown record type");
        if (rc) {
            r->broken = 1;
            /* The damaged block does not count as read. */
            r->off = r->block_off;
            r->blocks--;
            return -1;
        }
        if (type == PCW__HIST_REC_SAMPLE || type == PCW__HIST_REC_ROWS) {
            *mono_ns = r->t.mono;
            *real_ns = r->t.mono + (uint64_t)r->t.real_offset;
            *v = r->out ? r->out : r->values;
            *n = r->nseries;
            return 1;
        }
    }
}

size_t pcw__hist_reader_series_count(const pcw__hist_reader *r)
{
    return r->nseries;
}

const pcw__hist_series *pcw__hist_reader_series(const pcw__hist_reader *r, size_t i)
{
    return i < r->nseries ? &r->series[i] : NULL;
}

uint64_t pcw__hist_reader_blocks(const pcw__hist_reader *r)
{
    return r->blocks;
}

uint64_t pcw__hist_reader_offset(const pcw__hist_reader *r)
{
    return r->off;
}

uint64_t pcw__hist_reader_block_offset(const pcw__hist_reader *r)
{
    return r->block_off;
}

void pcw__hist_reader_seek(pcw__hist_reader *r, uint64_t off, uint64_t seq)
{
    r->off = off;
    r->blocks = seq;
    r->p = r->end = NULL;
    r->broken = 0;
}

void pcw__hist_reader_set_ident(pcw__hist_reader *r, size_t id, const pcw__hist_series *ident)
{
    if (id >= r->nseries)
        return;
    /* Everything an identity record sets (whatever the format adds), the
     * definition (path, kind) kept. */
    pcw__hist_series *s = &r->series[id];
    char *path = s->path;
    uint32_t kind = s->kind;
    *s = *ident;
    s->path = path;
    s->kind = kind;
    /* The words state for the shape in force there (a restarted provider's
     * histogram may have another); when the reader cannot hold it (beyond
     * PCW__HIST_MAX_HWORDS, out of memory) the reading is a damaged one:
     * pcw__hist_reader_next fails until the next seek. */
    if (hstate_for(r, id, kind == PCW__HIST_KIND_RAW ? s->hshape : 0, NULL, 0))
        r->broken = 1;
}

void pcw__hist_reader_freeze(pcw__hist_reader *r)
{
    r->frozen = 1;
}

void pcw__hist_reader_set_output(pcw__hist_reader *r, pcw__hist_value *out, size_t tail)
{
    r->out = out;
    r->out_tail = tail;
}

size_t pcw__hist_reader_sample_values(const pcw__hist_reader *r)
{
    return r->last_n;
}

const uint32_t *pcw__hist_reader_changed(const pcw__hist_reader *r, size_t *n)
{
    *n = r->nchanged;
    return r->changed;
}

uint32_t pcw__hist_reader_version(const pcw__hist_reader *r)
{
    return r->version;
}
