/* SPDX-License-Identifier: MIT */
/*
 * lib/history/write.c - appending to a pcw log (docs/history.md).
 *
 * Records gather in the open block's payload; pcw__hist_writer_flush compresses
 * it (zstd, kept only when smaller), puts the header with its CRC in front
 * and appends the whole block with write(). A block that could not be
 * written whole (ENOSPC, EIO...) is cut off again with ftruncate, and even
 * if that fails its CRC and length keep a reader from counting it: the
 * log stays readable up to the last good block.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <pcw/histogram.h>

#include "codec.h"
#include "history.h"

struct pcw__hist_writer {
    int fd;
    int failed;
    char *file;
    unsigned char *buf; /* the open block's payload */
    size_t len, cap;
    unsigned char *out; /* header + stored payload */
    size_t out_cap;
    uint64_t seq, end; /* next block's sequence number; offset past the last good block */
    pcw__hist_sync_policy policy;
    uint32_t unsynced;
    uint64_t synced_ns;
    pcw__hist_prev *prev; /* per series */
    unsigned char *kind;  /* per series: PCW__HIST_KIND_* */
    pcw__hist_hstate *hs; /* per series: a histogram's last words (n 0: none) */
    uint32_t *hshape;     /* per series: its identity's histogram shape, or 0 */
    uint64_t hwords;      /* histogram words kept, all series (PCW__HIST_MAX_HWORDS) */
    uint64_t block_words; /* the open block's histogram words to decode
                             (PCW__HIST_MAX_BLOCK_WORDS) */
    uint32_t nseries;
    pcw__hist_tstate t;
    char err[512]; /* why a block a sample ended could not be written */
};

static uint64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Room for `more` bytes in the payload. */
static int reserve(pcw__hist_writer *w, size_t more)
{
    if (w->failed)
        return -1;
    if (w->len + more <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < w->len + more)
        cap *= 2;
    unsigned char *b = realloc(w->buf, cap);
    if (!b)
        return -1;
    w->buf = b, w->cap = cap;
    return 0;
}

static void put_varint(pcw__hist_writer *w, uint64_t v)
{
    w->len += pcw__hist_put_varint(w->buf + w->len, v);
}

/* Write all of buf at the end of the log, or cut the file back to it. */
static int append(pcw__hist_writer *w, const unsigned char *buf, size_t len, char *why,
                  size_t why_len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = write(w->fd, buf + done, len - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            /* Nothing of this block counts: cut it off (a reader would stop
             * at its bad length or CRC anyway). */
            if (ftruncate(w->fd, (off_t)w->end) == 0)
                (void)lseek(w->fd, (off_t)w->end, SEEK_SET);
            w->failed = 1;
            return pcw__hist_fail(
                why, why_len, "%s: %s (the log is complete up to byte %llu, %llu blocks)", w->file,
                strerror(e), (unsigned long long)w->end, (unsigned long long)w->seq);
        }
        done += (size_t)r;
    }
    w->end += len;
    return 0;
}

int pcw__hist_writer_open(pcw__hist_writer **out, int fd, const char *name,
                          const pcw__hist_sync_policy *policy, char *why, size_t why_len)
{
    *out = NULL;
    pcw__hist_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->file = strdup(name))) {
        free(w);
        close(fd);
        return pcw__hist_fail(why, why_len, "out of memory");
    }
    pcw__hist_sync_policy def = PCW__HIST_SYNC_DEFAULT;
    w->policy = policy ? *policy : def;
    w->fd = fd;
    off_t at = lseek(fd, 0, SEEK_CUR);
    w->end = at > 0 ? (uint64_t)at : 0;
    unsigned char h[PCW__HIST_FILE_HEADER];
    memcpy(h, PCW__HIST_MAGIC, 8);
    pcw__hist_put_le32(h + 8, PCW__HIST_VERSION);
    pcw__hist_put_le32(h + 12, 0);
    if (append(w, h, sizeof h, why, why_len)) {
        close(w->fd);
        free(w->file);
        free(w);
        return -1;
    }
    w->synced_ns = mono_now();
    *out = w;
    return 0;
}

int pcw__hist_writer_series(pcw__hist_writer *w, uint32_t id, const char *path, uint32_t kind)
{
    size_t plen = strlen(path);
    if (id != w->nseries || id >= PCW__HIST_MAX_SERIES || plen > PCW__HIST_MAX_STRING ||
        kind > PCW__HIST_KIND_COMPUTED)
        return -1;
    pcw__hist_prev *p = realloc(w->prev, (size_t)(id + 1) * sizeof *p);
    if (!p)
        return -1;
    w->prev = p;
    memset(&p[id], 0, sizeof p[id]);
    unsigned char *k = realloc(w->kind, (size_t)id + 1);
    if (!k)
        return -1;
    w->kind = k;
    pcw__hist_hstate *hs = realloc(w->hs, (size_t)(id + 1) * sizeof *hs);
    if (!hs)
        return -1;
    w->hs = hs;
    memset(&hs[id], 0, sizeof hs[id]);
    uint32_t *sh = realloc(w->hshape, (size_t)(id + 1) * sizeof *sh);
    if (!sh)
        return -1;
    w->hshape = sh;
    sh[id] = 0;
    k[id] = (unsigned char)kind;
    if (reserve(w, 40 + plen))
        return -1;
    put_varint(w, PCW__HIST_REC_SERIES);
    put_varint(w, id);
    put_varint(w, kind);
    put_varint(w, plen);
    memcpy(w->buf + w->len, path, plen);
    w->len += plen;
    w->nseries++;
    return 0;
}

/* Series id's histogram words state for `shape` (0: not a histogram):
 * room for its words, within PCW__HIST_MAX_HWORDS as a reader counts them. */
static int ident_histogram(pcw__hist_writer *w, uint32_t id, uint32_t shape)
{
    pcw__hist_hstate *h = &w->hs[id];
    uint32_t n = shape ? 2 + pcw_hist_nbuckets(shape) : 0;
    if (n > h->cap) {
        if (w->hwords + (n - h->cap) > PCW__HIST_MAX_HWORDS)
            return -1;
        uint64_t *a = realloc(h->w[0], (size_t)n * sizeof *a);
        if (!a)
            return -1;
        w->hwords += n - h->cap;
        h->w[0] = a, h->cap = n;
    }
    h->n = n;
    h->block = 0; /* a new identity: its next words are whole */
    w->hshape[id] = shape;
    return 0;
}

int pcw__hist_writer_ident(pcw__hist_writer *w, uint32_t id, const pcw__hist_series *s)
{
    int hist = s->type == PERF_PCW_HISTOGRAM;
    if (id >= w->nseries || (hist && !pcw_hist_shape_valid(s->hshape)) ||
        ident_histogram(w, id, hist && w->kind[id] == PCW__HIST_KIND_RAW ? s->hshape : 0) ||
        reserve(w, 110))
        return -1;
    put_varint(w, PCW__HIST_REC_IDENT);
    put_varint(w, id);
    put_varint(w, s->type);
    put_varint(w, pcw__hist_zigzag(s->scale));
    put_varint(w, s->provider_id);
    put_varint(w, s->instance_id);
    put_varint(w, pcw__hist_zigzag(s->pid));
    put_varint(w, s->dup_index);
    if (hist) { /* version 2: the shape and the statistic */
        uint64_t q;
        memcpy(&q, &s->hstat.q, sizeof q);
        put_varint(w, s->hshape);
        put_varint(w, (uint64_t)(uint32_t)s->hstat.kind);
        put_varint(w, q);
    }
    return 0;
}

/* Series i's histogram words (its value VALID; room reserved): deltas
 * from its previous words in this block. */
static void put_hwords(pcw__hist_writer *w, uint32_t i, const pcw__hist_value *v)
{
    pcw__hist_hstate *h = &w->hs[i];
    const uint64_t *base = h->block == w->seq + 1 ? h->w[0] : NULL;
    put_varint(w, h->n);
    w->len += pcw__hist_put_hwords(w->buf + w->len, v->hwords, base, h->n);
    memcpy(h->w[0], v->hwords, (size_t)h->n * sizeof *h->w[0]);
    h->block = w->seq + 1;
}

/* The bytes a sample of v[0..n-1] may take, or 0 when a histogram value
 * lacks its words: checked before anything is written, so that a refused
 * sample leaves the block as it was. *words: the histogram words a reader
 * decodes for it. */
static size_t sample_bound(const pcw__hist_writer *w, const pcw__hist_value *v, size_t n,
                           uint64_t *words)
{
    size_t need = 40 + n * 64; /* a status and five 10-byte varints a value */
    for (size_t i = 0; i < n && w->hwords; i++) {
        if (!w->hshape[i] || v[i].raw.status != PCW_CSTATUS_VALID)
            continue;
        if (!v[i].hwords || v[i].hn != w->hs[i].n)
            return 0;
        need += 10 + pcw__hist_hwords_bound(w->hs[i].n);
        *words += w->hs[i].n;
    }
    return need;
}

int pcw__hist_writer_sample(pcw__hist_writer *w, uint64_t mono_ns, uint64_t real_ns,
                            const pcw__hist_value *v, size_t n)
{
    uint64_t words = 0;
    size_t need = n <= w->nseries ? sample_bound(w, v, n, &words) : 0;
    if (!need)
        return -1;
    /* The block ends before a sample that could take it beyond what a
     * reader accepts, in bytes or in histogram words to decode: whatever
     * the caller's flushing, no block is refused (one sample alone beyond
     * the bytes still is: pcw__hist_writer_flush says so). */
    if (w->t.n && (w->len + need > PCW__HIST_BLOCK_MAX_RAW ||
                   w->block_words + words > PCW__HIST_MAX_BLOCK_WORDS)) {
        if (pcw__hist_writer_flush(w, w->err, sizeof w->err)) {
            if (!w->failed) /* out of memory: the writer goes on */
                w->err[0] = 0;
            return -1;
        }
    }
    if (reserve(w, need))
        return -1;
    w->block_words += words;
    put_varint(w, PCW__HIST_REC_SAMPLE);
    pcw__hist_tstate *t = &w->t;
    int64_t off = (int64_t)(real_ns - mono_ns);
    if (t->n == 0) {
        put_varint(w, mono_ns);
        put_varint(w, pcw__hist_zigzag(off));
        t->mono_delta = 0;
    } else {
        int64_t d = (int64_t)(mono_ns - t->mono);
        put_varint(w, pcw__hist_zigzag(d - t->mono_delta));
        put_varint(w, pcw__hist_zigzag(off - t->real_offset));
        t->mono_delta = d;
    }
    t->n++, t->mono = mono_ns, t->real_offset = off;
    put_varint(w, n);
    /* The values through a local cursor (w->len once at the end): the
     * loop is the recorder's cost (docs/performance.md, "Recording a
     * log"), and stores through w would make the compiler reload it. */
    unsigned char *o = w->buf + w->len;
    for (size_t i = 0; i < n; i++) {
        const pcw_raw *r = &v[i].raw;
        pcw__hist_prev *p = &w->prev[i];
        o += pcw__hist_put_varint(o, (uint64_t)(uint32_t)r->status);
        if (!pcw__hist_has_number(PCW__HIST_VERSION, w->kind[i], (uint32_t)r->status))
            continue;
        /* A raw series' fields as deltas (counts and times grow slowly); a
         * computed value as the XOR of its bits with the previous (Gorilla:
         * a value that stays is one byte). */
        if (w->kind[i] == PCW__HIST_KIND_COMPUTED) {
            uint64_t bits;
            memcpy(&bits, &v[i].computed, sizeof bits);
            o += pcw__hist_put_varint(o, bits ^ p->f[0]);
            p->f[0] = bits;
            continue;
        }
        uint64_t f[5] = {r->first, r->second, r->multi, r->freq, r->time_ns};
        for (int k = 0; k < 5; k++) {
            o += pcw__hist_put_varint(o, pcw__hist_zigzag((int64_t)(f[k] - p->f[k])));
            p->f[k] = f[k];
        }
        if (w->hshape[i]) {
            w->len = (size_t)(o - w->buf);
            put_hwords(w, (uint32_t)i, &v[i]);
            o = w->buf + w->len;
        }
    }
    w->len = (size_t)(o - w->buf);
    return 0;
}

int pcw__hist_writer_flush(pcw__hist_writer *w, char *why, size_t why_len)
{
    if (w->failed && w->err[0])
        return pcw__hist_fail(why, why_len, "%s", w->err);
    if (w->failed)
        return pcw__hist_fail(why, why_len, "%s: an earlier write failed", w->file);
    if (w->len == 0)
        return 0;
    if (w->len > PCW__HIST_BLOCK_MAX_RAW) { /* a reader would refuse it */
        w->failed = 1;
        return pcw__hist_fail(
            why, why_len,
            "%s: a block of %zu bytes is more than a log block may hold (%u bytes): "
            "too many series in one sample",
            w->file, w->len, PCW__HIST_BLOCK_MAX_RAW);
    }
    size_t bound = ZSTD_compressBound(w->len), need = PCW__HIST_BLOCK_HEADER + bound;
    if (need > w->out_cap) {
        unsigned char *o = realloc(w->out, need);
        if (!o)
            return pcw__hist_fail(why, why_len, "out of memory");
        w->out = o, w->out_cap = need;
    }
    unsigned char *h = w->out, *payload = w->out + PCW__HIST_BLOCK_HEADER;
    uint32_t flags = 0;
    /* Level 1: faster than 3 and, on deltas, smaller too (docs/performance.md,
     * "Recording a log": 1.16 against 1.36 bytes a sample). */
    size_t stored = ZSTD_compress(payload, bound, w->buf, w->len, 1);
    /* Stored as it is when compression does not help, or helps more than a
     * reader accepts (PCW__HIST_MAX_RATIO: it bounds a reader's work per byte). */
    if (ZSTD_isError(stored) || stored >= w->len ||
        (uint64_t)w->len > (uint64_t)stored * PCW__HIST_MAX_RATIO + 65536) {
        memcpy(payload, w->buf, w->len);
        stored = w->len;
    } else {
        flags |= PCW__HIST_BLOCK_ZSTD;
    }
    pcw__hist_put_le32(h, PCW__HIST_BLOCK_MAGIC);
    pcw__hist_put_le32(h + 4, (uint32_t)stored);
    pcw__hist_put_le32(h + 8, (uint32_t)w->len);
    pcw__hist_put_le32(h + 12, flags);
    pcw__hist_put_le64(h + 16, w->seq);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), h, 24);
    crc = crc32(crc, payload, (uInt)stored);
    pcw__hist_put_le32(h + 24, (uint32_t)crc);
    pcw__hist_put_le32(h + 28, 0);
    if (append(w, h, PCW__HIST_BLOCK_HEADER + stored, why, why_len))
        return -1;
    w->seq++;
    w->len = 0;
    w->block_words = 0;
    /* The next block decodes on its own: deltas start again from zero. */
    if (w->nseries)
        memset(w->prev, 0, (size_t)w->nseries * sizeof *w->prev);
    memset(&w->t, 0, sizeof w->t);
    uint64_t now = mono_now();
    if ((w->policy.sync_blocks && ++w->unsynced >= w->policy.sync_blocks) ||
        (w->policy.sync_ns && now - w->synced_ns >= w->policy.sync_ns)) {
        if (fdatasync(w->fd) != 0 && errno != EINVAL) {
            w->failed = 1;
            return pcw__hist_fail(why, why_len, "%s: fdatasync: %s", w->file, strerror(errno));
        }
        w->unsynced = 0, w->synced_ns = now;
    }
    return 0;
}

int pcw__hist_writer_close(pcw__hist_writer *w, char *why, size_t why_len)
{
    if (!w)
        return 0;
    int rc = pcw__hist_writer_flush(w, why, why_len);
    if (rc == 0 && fdatasync(w->fd) != 0 && errno != EINVAL)
        rc = pcw__hist_fail(why, why_len, "%s: fdatasync: %s", w->file, strerror(errno));
    if (close(w->fd) != 0 && rc == 0)
        rc = pcw__hist_fail(why, why_len, "%s: %s", w->file, strerror(errno));
    free(w->file);
    free(w->buf);
    free(w->out);
    free(w->prev);
    free(w->kind);
    for (uint32_t i = 0; i < w->nseries; i++)
        free(w->hs[i].w[0]);
    free(w->hs);
    free(w->hshape);
    free(w);
    return rc;
}

uint64_t pcw__hist_writer_blocks(const pcw__hist_writer *w)
{
    return w->seq;
}

uint64_t pcw__hist_writer_bytes(const pcw__hist_writer *w)
{
    return w->end;
}
