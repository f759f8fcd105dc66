/* SPDX-License-Identifier: MIT */
/*
 * lib/history/write.c - appending to a pcw log (docs/history.md).
 *
 * Records gather in the open block's payload; pcw__hist_writer_flush compresses
 * it (zstd, kept only when smaller), puts the header with its check (XXH3)
 * in front and appends the whole block with write(). A block that could not be
 * written whole (ENOSPC, EIO...) is cut off again with ftruncate, and even
 * if that fails its check and length keep a reader from counting it: the
 * log stays readable up to the last good block.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>
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
    pcw__hist_prev *prev;    /* per series */
    size_t prev_lo, prev_hi; /* the series [lo, hi) whose prev this block changed */
    unsigned char *kind;     /* per series: PCW__HIST_KIND_* */
    pcw__hist_hstate *hs;    /* per series: a histogram's last words (n 0: none) */
    uint32_t *hshape;        /* per series: its identity's histogram shape, or 0 */
    uint64_t hwords;         /* histogram words kept, all series (PCW__HIST_MAX_HWORDS) */
    uint64_t block_words;    /* the open block's histogram words to decode
                                (PCW__HIST_MAX_BLOCK_WORDS) */
    uint64_t block_rvalues;  /* the values its row samples decode
                                (PCW__HIST_ROW_VALUES_BASE, _PER_BYTE) */
    int zstd;                /* the open block holds value samples: compress it */
    uint32_t nseries;
    pcw__hist_tstate t;
    char err[512]; /* why a block a sample ended could not be written */
    /* Row samples (version 3): per series its identity's layout's words
     * (0: none) and its last word in this block; the spans of series
     * whose words were written in this block (only there is a row's
     * delta one a reader can take: elsewhere rows are written whole). */
    uint8_t *lneed;
    uint64_t *word;
    struct span {
        size_t from, to; /* series [from, to), rows of `width` from `from` */
        uint32_t width;
    } * spans;
    size_t nspans, spans_cap;
    size_t fit_from, fit_to; /* layouts_fit's last range that fits */
    uint32_t fit_width;      /* its width (0: none) */
    int in_rows;             /* between rows_begin and rows_end */
    size_t rows_len;         /* the payload's length at rows_begin */
    size_t rows_n;           /* the row sample's series */
    size_t rows_at;          /* the next series it gives */
    uint64_t rows_tb;        /* the last row time written (the next one's base) */
    struct bak {             /* the values' deltas state before a VALUES piece */
        size_t from, n;
        pcw__hist_prev *old;
    } * bak;
    size_t nbak, bak_cap;
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

/* Write all of buf and then buf2 (len2 bytes; may be 0) at the end of
 * the log, or cut the file back to it. Two pieces: a block's header and
 * its payload where it is stored as the writer built it (no copy). */
static int append2(pcw__hist_writer *w, const unsigned char *buf, size_t len1,
                   const unsigned char *buf2, size_t len2, char *why, size_t why_len)
{
    size_t done = 0, len = len1 + len2;
    while (done < len) {
        struct iovec iov[2];
        int n = 0;
        if (done < len1)
            iov[n++] = (struct iovec){(void *)(buf + done), len1 - done};
        if (len2)
            iov[n++] = (struct iovec){(void *)(buf2 + (done > len1 ? done - len1 : 0)),
                                      len2 - (done > len1 ? done - len1 : 0)};
        ssize_t r = writev(w->fd, iov, n);
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

static int append(pcw__hist_writer *w, const unsigned char *buf, size_t len, char *why,
                  size_t why_len)
{
    return append2(w, buf, len, NULL, 0, why, why_len);
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
    uint8_t *ln = realloc(w->lneed, (size_t)id + 1);
    if (!ln)
        return -1;
    w->lneed = ln;
    ln[id] = 0;
    uint64_t *wd = realloc(w->word, (size_t)(id + 1) * sizeof *wd);
    if (!wd)
        return -1;
    w->word = wd;
    wd[id] = 0;
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

/* Forget the spans that hold series [from, to): their rows are written
 * whole again (a layout changed, a row sample cancelled). */
static void spans_drop(pcw__hist_writer *w, size_t from, size_t to)
{
    size_t k = 0;
    for (size_t i = 0; i < w->nspans; i++)
        if (w->spans[i].to <= from || w->spans[i].from >= to)
            w->spans[k++] = w->spans[i];
    w->nspans = k;
}

int pcw__hist_writer_ident(pcw__hist_writer *w, uint32_t id, const pcw__hist_series *s)
{
    int hist = s->type == PERF_PCW_HISTOGRAM;
    const pcw__hist_layout *l = &s->layout;
    /* A layout: only a provider's instance that is no histogram, and one
     * a reader takes (its words as it says, within PCW__HIST_ROW_WORDS). */
    if (id >= w->nseries || (hist && !pcw_hist_shape_valid(s->hshape)) ||
        (l->words && (hist || w->kind[id] != PCW__HIST_KIND_RAW ||
                      pcw__hist_layout_words(l, PCW_CSTATUS_LAST) != l->words)) ||
        w->in_rows ||
        ident_histogram(w, id, hist && w->kind[id] == PCW__HIST_KIND_RAW ? s->hshape : 0) ||
        reserve(w, 180))
        return -1;
    if (w->lneed[id] != l->words) {
        spans_drop(w, id, id + 1);
        if (w->fit_from <= id && id < w->fit_to)
            w->fit_width = 0; /* checked again */
    }
    w->lneed[id] = (uint8_t)l->words;
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
    /* Version 3: the layout (0: none; else its fields). */
    put_varint(w, l->words ? 1 : 0);
    if (l->words) {
        put_varint(w, l->status);
        put_varint(w, l->first);
        put_varint(w, l->second);
        put_varint(w, l->multi);
        put_varint(w, l->freq);
        put_varint(w, l->freq_const);
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

/* A sample's times (delta of delta; room reserved). */
static void put_times(pcw__hist_writer *w, uint64_t mono_ns, uint64_t real_ns)
{
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
}

/* The values of series first .. first + n - 1 (room reserved). */
static void put_values(pcw__hist_writer *w, const pcw__hist_value *v, size_t first, size_t n)
{
    if (w->prev_hi == w->prev_lo) /* (the series whose deltas the block changed) */
        w->prev_lo = first, w->prev_hi = first + n;
    if (first < w->prev_lo)
        w->prev_lo = first;
    if (first + n > w->prev_hi)
        w->prev_hi = first + n;
    /* The values through a local cursor (w->len once at the end): stores
     * through w would make the compiler reload it at every byte. */
    unsigned char *o = w->buf + w->len;
    for (size_t j = 0; j < n; j++) {
        size_t i = first + j;
        const pcw_raw *r = &v[j].raw;
        pcw__hist_prev *p = &w->prev[i];
        o += pcw__hist_put_varint(o, (uint64_t)(uint32_t)r->status);
        if (!pcw__hist_has_number(PCW__HIST_VERSION, w->kind[i], (uint32_t)r->status))
            continue;
        /* A raw series' fields as deltas (counts and times grow slowly); a
         * computed value as the XOR of its bits with the previous (Gorilla:
         * a value that stays is one byte). */
        if (w->kind[i] == PCW__HIST_KIND_COMPUTED) {
            uint64_t bits;
            memcpy(&bits, &v[j].computed, sizeof bits);
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
            put_hwords(w, (uint32_t)i, &v[j]);
            o = w->buf + w->len;
        }
    }
    w->len = (size_t)(o - w->buf);
}

/* End the block first when a sample of `need` bytes and `words`
 * histogram words could take it beyond what a reader accepts, whatever
 * the caller's flushing (one sample alone beyond the bytes still is:
 * pcw__hist_writer_flush says so); then room for it. */
static int room_for_sample(pcw__hist_writer *w, size_t need, uint64_t words, uint64_t rvalues)
{
    /* (Row values against the payload so far: it only grows.) */
    if (w->t.n &&
        (w->len + need > PCW__HIST_BLOCK_MAX_RAW ||
         w->block_words + words > PCW__HIST_MAX_BLOCK_WORDS ||
         w->block_rvalues + rvalues >
             PCW__HIST_ROW_VALUES_BASE + (uint64_t)PCW__HIST_ROW_VALUES_PER_BYTE * w->len)) {
        if (pcw__hist_writer_flush(w, w->err, sizeof w->err)) {
            if (!w->failed) /* out of memory: the writer goes on */
                w->err[0] = 0;
            return -1;
        }
    }
    return reserve(w, need);
}

int pcw__hist_writer_sample(pcw__hist_writer *w, uint64_t mono_ns, uint64_t real_ns,
                            const pcw__hist_value *v, size_t n)
{
    uint64_t words = 0;
    size_t need = n <= w->nseries && !w->in_rows ? sample_bound(w, v, n, &words) : 0;
    if (!need || room_for_sample(w, need, words, 0))
        return -1;
    w->block_words += words;
    w->zstd = 1;
    put_varint(w, PCW__HIST_REC_SAMPLE);
    put_times(w, mono_ns, real_ns);
    put_varint(w, n);
    put_values(w, v, 0, n);
    return 0;
}

/* ---- row samples (version 3) ---------------------------------------------- */

/* Most bytes a row sample's pieces take per series: a value's 64 (a
 * status and five 10-byte varints), and a piece's header (30) for each
 * piece, which has at least one series. */
#define ROWS_PER_SERIES 96u

int pcw__hist_writer_rows_begin(pcw__hist_writer *w, size_t n)
{
    if (w->in_rows || n > w->nseries || room_for_sample(w, 40 + n * ROWS_PER_SERIES, 0, n))
        return -1;
    w->block_rvalues += n;
    w->rows_len = w->len;
    put_varint(w, PCW__HIST_REC_ROWS);
    put_varint(w, n);
    w->in_rows = 1;
    w->rows_n = n;
    w->rows_at = 0;
    w->rows_tb = w->t.n ? w->t.mono : 0;
    return 0;
}

/* A piece's header: its kind and count. */
static void put_seg(pcw__hist_writer *w, unsigned kind, size_t count)
{
    put_varint(w, (uint64_t)count << 2 | kind);
}

int pcw__hist_writer_rows_absent(pcw__hist_writer *w, size_t count, uint32_t status)
{
    if (!w->in_rows || !count || count > w->rows_n - w->rows_at || status > PCW_CSTATUS_LAST ||
        status == PCW_CSTATUS_VALID ||
        pcw__hist_has_number(PCW__HIST_VERSION, PCW__HIST_KIND_COMPUTED, status))
        return -1;
    put_seg(w, PCW__HIST_SEG_ABSENT, count);
    put_varint(w, status);
    w->rows_at += count;
    return 0;
}

int pcw__hist_writer_rows_values(pcw__hist_writer *w, const pcw__hist_value *v, size_t count)
{
    if (!w->in_rows || !count || count > w->rows_n - w->rows_at)
        return -1;
    for (size_t j = 0; j < count && w->hwords; j++)
        if (w->hshape[w->rows_at + j])
            return -1;
    /* Their deltas' state as it was, for rows_cancel to put back. */
    if (w->nbak == w->bak_cap) {
        size_t cap = w->bak_cap ? 2 * w->bak_cap : 16;
        struct bak *b = realloc(w->bak, cap * sizeof *b);
        if (!b)
            return -1;
        w->bak = b, w->bak_cap = cap;
    }
    pcw__hist_prev *old = malloc(count * sizeof *old);
    if (!old)
        return -1;
    memcpy(old, &w->prev[w->rows_at], count * sizeof *old);
    w->bak[w->nbak++] = (struct bak){w->rows_at, count, old};
    put_seg(w, PCW__HIST_SEG_VALUES, count);
    put_values(w, v, w->rows_at, count);
    w->rows_at += count;
    return 0;
}

/* Are series [from, from + nrows * width) rows of width whose words this
 * block holds (one span, the rows aligned with it)? */
static int spans_cover(const pcw__hist_writer *w, size_t from, size_t nrows, uint32_t width)
{
    for (size_t i = 0; i < w->nspans; i++) {
        const struct span *p = &w->spans[i];
        if (p->from <= from && from < p->to)
            return p->width == width && (from - p->from) % width == 0 &&
                   from + nrows * width <= p->to;
    }
    return 0;
}

/* Series [from, to) are rows of width written whole in this block: a
 * span of their own, or the end of the one they continue. */
static int spans_add(pcw__hist_writer *w, size_t from, size_t to, uint32_t width)
{
    spans_drop(w, from, to);
    for (size_t i = 0; i < w->nspans; i++)
        if (w->spans[i].to == from && w->spans[i].width == width &&
            (from - w->spans[i].from) % width == 0) {
            w->spans[i].to = to;
            return 0;
        }
    if (w->nspans == w->spans_cap) {
        size_t cap = w->spans_cap ? 2 * w->spans_cap : 16;
        struct span *p = realloc(w->spans, cap * sizeof *p);
        if (!p)
            return -1;
        w->spans = p, w->spans_cap = cap;
    }
    w->spans[w->nspans++] = (struct span){from, to, width};
    return 0;
}

/* Row r's word j (host order, as the provider wrote it). */
static inline uint64_t row_word(const unsigned char *row, uint32_t j)
{
    uint64_t x;
    memcpy(&x, row + 8 * (size_t)j, sizeof x);
    return x;
}

/* Do series [from, from + n) have layouts that rows of width make raw
 * samples of? The last range found to fit is remembered (w->fit_*) until
 * a layout in it changes: the first rows of every block are checked, and
 * a byte a series each time was 6 % of recording 100,000 series. */
static int layouts_fit(pcw__hist_writer *w, size_t from, size_t n, uint32_t width)
{
    /* Rows that start within the range (a sample's runs, one after the
     * other): only the series past it are looked at. */
    int within = w->fit_width == width && w->fit_from <= from && from <= w->fit_to;
    size_t i = within && from + n > w->fit_to ? w->fit_to : from;
    if (within && from + n <= w->fit_to)
        return 1;
    for (; i < from + n; i++)
        if (!w->lneed[i] || w->lneed[i] > width)
            return 0;
    if (!within)
        w->fit_from = from;
    w->fit_to = from + n, w->fit_width = width;
    return 1;
}

/* The rows as they are: every word, little-endian; the words kept. */
static int put_whole(pcw__hist_writer *w, const unsigned char *rows, size_t stride, size_t nrows,
                     uint32_t width)
{
    size_t s = w->rows_at;
    unsigned char *o = w->buf + w->len;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (stride == 8 * (size_t)width) { /* side by side: as one piece */
        memcpy(&w->word[s], rows, nrows * stride);
        memcpy(o, rows, nrows * stride);
        w->len += nrows * stride;
        return spans_add(w, s, s + nrows * width, width);
    }
#endif
    for (size_t r = 0; r < nrows; r++, s += width) {
        const unsigned char *row = rows + r * stride;
        memcpy(&w->word[s], row, 8 * (size_t)width);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(o, row, 8 * (size_t)width);
#else
        for (uint32_t j = 0; j < width; j++)
            pcw__hist_put_le64(o + 8 * j, w->word[s + j]);
#endif
        o += 8 * (size_t)width;
    }
    w->len = (size_t)(o - w->buf);
    return spans_add(w, w->rows_at, s, width);
}

/* Rows compared at once where they are side by side (put_deltas): 32
 * rows of 16 words are 4 KiB (8 rows at once cost 10 % more: calls). */
#define ROWS_AT_ONCE 32u

/* The rows as deltas from the block's words: a count of the rows that
 * did not change, then a changed row (a mask of its changed words, their
 * zigzag deltas), and so on; a last count for the rows left. The compare
 * is the recorder's cost for a row that did not change
 * (docs/performance.md, "Recording a log"): the XORs of the row's words
 * ORed together, one branch a row. */
static void put_deltas(pcw__hist_writer *w, const unsigned char *rows, size_t stride, size_t nrows,
                       uint32_t width, const uint64_t *changed, size_t at)
{
    unsigned char *o = w->buf + w->len;
    uint64_t same = 0;
    uint64_t *pw = &w->word[w->rows_at];
    size_t wbytes = 8 * (size_t)width;
    for (size_t r = 0; r < nrows; r++, pw += width) {
        const unsigned char *row = rows + r * stride;
        if (changed) {
            /* Compared already (pcw__hist_writer_rows_cmp): the rows up to
             * the next one that changed are a count, 64 bits at a time. */
            size_t b = at + r;
            uint64_t m = changed[b / 64] >> (b % 64);
            size_t skip = m ? (size_t)__builtin_ctzll(m) : 64 - b % 64;
            if (skip) {
                if (skip > nrows - r)
                    skip = nrows - r;
                same += skip;
                r += skip - 1, pw += (skip - 1) * (size_t)width;
                continue;
            }
        } else if (stride == wbytes && r % ROWS_AT_ONCE == 0 && nrows - r >= ROWS_AT_ONCE &&
                   memcmp(row, pw, ROWS_AT_ONCE * wbytes) == 0) {
            /* Rows side by side (as a snapshot holds them): ROWS_AT_ONCE
             * at a time with memcmp (the C library's widest compare), and
             * row by row only in a group where one changed. */
            same += ROWS_AT_ONCE;
            r += ROWS_AT_ONCE - 1, pw += (ROWS_AT_ONCE - 1) * (size_t)width;
            continue;
        } else {
            uint64_t d = 0;
            for (uint32_t j = 0; j < width; j++)
                d |= row_word(row, j) ^ pw[j];
            if (!d) {
                same++;
                continue;
            }
        }
        o += pcw__hist_put_varint(o, same);
        same = 0;
        uint64_t mask = 0;
        for (uint32_t j = 0; j < width; j++)
            mask |= (uint64_t)(row_word(row, j) != pw[j]) << j;
        for (uint32_t b = 0; b < (width + 7) / 8; b++)
            *o++ = (unsigned char)(mask >> (8 * b));
        for (uint32_t j = 0; j < width; j++) {
            uint64_t x = row_word(row, j);
            if (x != pw[j])
                o += pcw__hist_put_varint(o, pcw__hist_zigzag((int64_t)(x - pw[j])));
            pw[j] = x;
        }
    }
    if (same)
        o += pcw__hist_put_varint(o, same);
    w->len = (size_t)(o - w->buf);
}

int pcw__hist_writer_rows(pcw__hist_writer *w, const void *rows, size_t stride, size_t nrows,
                          uint32_t width, uint64_t time_ns)
{
    return pcw__hist_writer_rows_cmp(w, rows, stride, nrows, width, time_ns, NULL, 0);
}

const uint64_t *pcw__hist_writer_words(const pcw__hist_writer *w, size_t from, size_t *n)
{
    /* None at a block's start: its first rows are written whole, what
     * they are compared with does not matter. */
    *n = from < w->nseries && w->nspans ? w->nseries - from : 0;
    return *n ? &w->word[from] : NULL;
}

int pcw__hist_writer_rows_cmp(pcw__hist_writer *w, const void *rows, size_t stride, size_t nrows,
                              uint32_t width, uint64_t time_ns, const uint64_t *changed, size_t at)
{
    if (!w->in_rows || !nrows || !width || width > PCW__HIST_ROW_WORDS ||
        stride < 8 * (size_t)width || nrows > (w->rows_n - w->rows_at) / width)
        return -1;
    /* Rows this block holds the words of are deltas; others are whole
     * (and their layouts checked: a covered span's were, and a layout
     * that changed since dropped its span). */
    int whole = !spans_cover(w, w->rows_at, nrows, width);
    if (whole && !layouts_fit(w, w->rows_at, nrows * width, width))
        return -1;
    put_seg(w, whole ? PCW__HIST_SEG_WHOLE : PCW__HIST_SEG_ROWS, nrows);
    put_varint(w, width);
    put_varint(w, pcw__hist_zigzag((int64_t)(time_ns - w->rows_tb)));
    w->rows_tb = time_ns;
    if (whole) {
        if (put_whole(w, rows, stride, nrows, width))
            return -1; /* (out of memory: the sample is cancelled by rows_end) */
    } else {
        put_deltas(w, rows, stride, nrows, width, changed, at);
    }
    w->rows_at += nrows * width;
    return 0;
}

/* The row sample is over: its values' backups freed. */
static void rows_done(pcw__hist_writer *w)
{
    for (size_t i = 0; i < w->nbak; i++)
        free(w->bak[i].old);
    w->nbak = 0;
    w->in_rows = 0;
}

int pcw__hist_writer_rows_end(pcw__hist_writer *w, uint64_t mono_ns, uint64_t real_ns)
{
    if (!w->in_rows)
        return -1;
    if (w->rows_at != w->rows_n) {
        pcw__hist_writer_rows_cancel(w);
        return -1;
    }
    put_times(w, mono_ns, real_ns);
    rows_done(w);
    return 0;
}

void pcw__hist_writer_rows_cancel(pcw__hist_writer *w)
{
    if (!w->in_rows)
        return;
    /* The words of the rows given are the cancelled sample's, which no
     * reader will see: those rows are written whole again. The values'
     * deltas (w->prev) are put back as they were. */
    spans_drop(w, 0, w->rows_at);
    for (size_t i = 0; i < w->nbak; i++)
        memcpy(&w->prev[w->bak[i].from], w->bak[i].old, w->bak[i].n * sizeof *w->prev);
    rows_done(w);
    w->len = w->rows_len;
    w->block_rvalues -= w->rows_n;
}

int pcw__hist_writer_flush(pcw__hist_writer *w, char *why, size_t why_len)
{
    pcw__hist_writer_rows_cancel(w); /* a sample half given is never written */
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
    /* A block of row samples only is stored as it is: their encoding is
     * compact already, and zstd (even at -5) doubled the CPU of recording
     * for a sixth less size (docs/performance.md, "Recording a log").
     * Value samples (pcw__hist_writer_sample) are compressed. */
    size_t bound = w->zstd ? ZSTD_compressBound(w->len) : 0, need = PCW__HIST_BLOCK_HEADER + bound;
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
    size_t stored = w->zstd ? ZSTD_compress(payload, bound, w->buf, w->len, 1) : w->len;
    /* Stored as it is when compression does not help, or helps more than a
     * reader accepts (PCW__HIST_MAX_RATIO: it bounds a reader's work per byte). */
    if (!w->zstd || ZSTD_isError(stored) || stored >= w->len ||
        (uint64_t)w->len > (uint64_t)stored * PCW__HIST_MAX_RATIO + 65536) {
        payload = w->buf; /* written from where it is */
        stored = w->len;
    } else {
        flags |= PCW__HIST_BLOCK_ZSTD;
    }
    pcw__hist_put_le32(h, PCW__HIST_BLOCK_MAGIC);
    pcw__hist_put_le32(h + 4, (uint32_t)stored);
    pcw__hist_put_le32(h + 8, (uint32_t)w->len);
    pcw__hist_put_le32(h + 12, flags);
    pcw__hist_put_le64(h + 16, w->seq);
    pcw__hist_put_le32(h + 24, pcw__hist_block_check(PCW__HIST_VERSION, h, payload, stored));
    pcw__hist_put_le32(h + 28, 0);
    if (append2(w, h, PCW__HIST_BLOCK_HEADER, payload, stored, why, why_len))
        return -1;
    w->seq++;
    w->len = 0;
    w->block_words = 0;
    w->block_rvalues = 0;
    w->zstd = 0;
    /* The next block decodes on its own: deltas start again from zero
     * (for the values this block wrote; row samples' words by their spans). */
    if (w->prev_hi > w->prev_lo)
        memset(&w->prev[w->prev_lo], 0, (w->prev_hi - w->prev_lo) * sizeof *w->prev);
    w->prev_lo = w->prev_hi = 0;
    memset(&w->t, 0, sizeof w->t);
    w->nspans = 0; /* and rows are written whole again */
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
    free(w->lneed);
    free(w->word);
    free(w->spans);
    free(w->bak);
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
