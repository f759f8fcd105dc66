/* SPDX-License-Identifier: MIT */
/*
 * lib/history/read.c - reading a pcw log (docs/history.md).
 *
 * Every log is hostile input. Blocks are read one at a time (memory: one
 * block, at most HIST_BLOCK_MAX_RAW decompressed, and a decompressed size
 * at most HIST_MAX_RATIO times the stored one, so the work per byte of
 * file is bounded), checked (magic, lengths, CRC, sequence number) before
 * any record is decoded, and every record is checked against the block's
 * end. The first block that fails ends the reading with a sentence naming
 * its offset; the samples before it were already handed out.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "codec.h"
#include "history.h"

struct hist_reader {
    int fd;                   /* -1: reading `mem` */
    const unsigned char *mem; /* hist_reader_open_mem's buffer */
    size_t mem_len;
    uint64_t off; /* past the last block read whole */
    uint64_t blocks;
    unsigned char *stored, *raw; /* the current block */
    size_t stored_cap, raw_cap;
    const unsigned char *p, *end; /* records left in it */
    uint64_t block_off;
    hist_series *series;
    hist_value *values;
    hist_prev *prev;
    unsigned char *kind;
    size_t nseries, cap;
    hist_tstate t;
    int broken;
    uint64_t seen;     /* blocks read so far at most (hist_reader_seek goes back) */
    int reread;        /* the current block was read before */
    hist_value *out;   /* hist_reader_set_output's array, or NULL: values */
    uint32_t *changed; /* series whose identity record came since the last
                          hist_reader_next */
    size_t nchanged, changed_cap;
};

/* Up to len bytes at offset off: how many were there. */
static size_t fetch(hist_reader *r, uint64_t off, void *buf, size_t len)
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

static int open_common(hist_reader *r, char *why, size_t why_len)
{
    unsigned char h[HIST_FILE_HEADER];
    if (fetch(r, 0, h, sizeof h) != sizeof h || memcmp(h, HIST_MAGIC, 8) != 0)
        return hist_fail(why, why_len, "not a pcw log (no \"PCWLOG\" header at offset 0)");
    uint32_t v = hist_le32(h + 8);
    if (v != HIST_VERSION)
        return hist_fail(why, why_len, "pcw log version %u, this reader knows version %u", v,
                         HIST_VERSION);
    r->off = HIST_FILE_HEADER;
    return 0;
}

int hist_reader_open(hist_reader **out, const char *file, char *why, size_t why_len)
{
    *out = NULL;
    hist_reader *r = calloc(1, sizeof *r);
    if (!r)
        return hist_fail(why, why_len, "out of memory");
    r->fd = open(file, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        int e = errno;
        free(r);
        return hist_fail(why, why_len, "%s: %s", file, strerror(e));
    }
    if (open_common(r, why, why_len)) {
        hist_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

int hist_reader_open_mem(hist_reader **out, const void *data, size_t len, char *why, size_t why_len)
{
    *out = NULL;
    hist_reader *r = calloc(1, sizeof *r);
    if (!r)
        return hist_fail(why, why_len, "out of memory");
    r->fd = -1, r->mem = data, r->mem_len = len;
    if (open_common(r, why, why_len)) {
        hist_reader_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

void hist_reader_close(hist_reader *r)
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
    free(r->stored);
    free(r->raw);
    free(r->changed);
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
static int load_block(hist_reader *r, char *why, size_t why_len)
{
    unsigned long long at = (unsigned long long)r->off;
    unsigned char h[HIST_BLOCK_HEADER];
    size_t got = fetch(r, r->off, h, sizeof h);
    if (got == 0)
        return 0;
    if (got < sizeof h)
        return hist_fail(why, why_len, "incomplete block header at offset %llu (%zu of %u bytes)",
                         at, got, HIST_BLOCK_HEADER);
    if (hist_le32(h) != HIST_BLOCK_MAGIC)
        return hist_fail(why, why_len, "no block at offset %llu (bad block magic)", at);
    uint32_t stored = hist_le32(h + 4), raw = hist_le32(h + 8), flags = hist_le32(h + 12);
    uint64_t seq = hist_le64(h + 16);
    if (flags & ~(uint32_t)HIST_BLOCK_ZSTD || hist_le32(h + 28) != 0)
        return hist_fail(why, why_len, "block at offset %llu: unknown flags %#x", at, flags);
    if (raw > HIST_BLOCK_MAX_RAW || stored > raw ||
        (uint64_t)raw > (uint64_t)stored * HIST_MAX_RATIO + 65536 ||
        (!(flags & HIST_BLOCK_ZSTD) && stored != raw))
        return hist_fail(why, why_len,
                         "block at offset %llu: bad lengths (stored %u, decompressed %u bytes)", at,
                         stored, raw);
    if (seq != r->blocks)
        return hist_fail(why, why_len, "block at offset %llu: sequence number %llu, expected %llu",
                         at, (unsigned long long)seq, (unsigned long long)r->blocks);
    if (grow_buf(&r->stored, &r->stored_cap, stored ? stored : 1) ||
        grow_buf(&r->raw, &r->raw_cap, raw ? raw : 1))
        return hist_fail(why, why_len, "out of memory");
    got = fetch(r, r->off + HIST_BLOCK_HEADER, r->stored, stored);
    if (got < stored)
        return hist_fail(why, why_len, "incomplete block at offset %llu (%zu of %u bytes)", at, got,
                         stored);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), h, 24);
    crc = crc32(crc, r->stored, (uInt)stored);
    if ((uint32_t)crc != hist_le32(h + 24))
        return hist_fail(why, why_len, "block at offset %llu: CRC mismatch (damaged)", at);
    if (flags & HIST_BLOCK_ZSTD) {
        size_t n = ZSTD_decompress(r->raw, raw, r->stored, stored);
        if (ZSTD_isError(n) || n != raw)
            return hist_fail(why, why_len, "block at offset %llu: zstd: %s", at,
                             ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong decompressed size");
    } else {
        memcpy(r->raw, r->stored, raw);
    }
    r->block_off = r->off;
    r->off += HIST_BLOCK_HEADER + stored;
    r->reread = r->blocks < r->seen;
    r->blocks++;
    if (r->blocks > r->seen)
        r->seen = r->blocks;
    r->p = r->raw, r->end = r->raw + raw;
    if (r->nseries)
        memset(r->prev, 0, r->nseries * sizeof *r->prev);
    memset(&r->t, 0, sizeof r->t);
    return 1;
}

#define GET(v)                                                                                     \
    do {                                                                                           \
        if (hist_get_varint(&r->p, r->end, &(v)))                                                  \
            return hist_fail(why, why_len, "block at offset %llu: record cut short",               \
                             (unsigned long long)r->block_off);                                    \
    } while (0)

static int bad(hist_reader *r, char *why, size_t why_len, const char *what)
{
    return hist_fail(why, why_len, "block at offset %llu: %s", (unsigned long long)r->block_off,
                     what);
}

static int rec_series(hist_reader *r, char *why, size_t why_len)
{
    uint64_t id, kind, len;
    GET(id);
    GET(kind);
    GET(len);
    if (r->reread && id < r->nseries && len <= (uint64_t)(r->end - r->p)) {
        /* Read again after hist_reader_seek: defined already. */
        r->p += len;
        return 0;
    }
    if (id != r->nseries || id >= HIST_MAX_SERIES)
        return bad(r, why, why_len, "series defined out of order");
    if (kind > HIST_KIND_COMPUTED || len > HIST_MAX_STRING || len > (uint64_t)(r->end - r->p))
        return bad(r, why, why_len, "bad series definition");
    if (r->nseries == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        hist_series *s = realloc(r->series, cap * sizeof *s);
        if (s)
            r->series = s;
        hist_value *v = s ? realloc(r->values, cap * sizeof *v) : NULL;
        if (v)
            r->values = v;
        hist_prev *p = v ? realloc(r->prev, cap * sizeof *p) : NULL;
        if (p)
            r->prev = p;
        unsigned char *k = p ? realloc(r->kind, cap) : NULL;
        if (!k)
            return hist_fail(why, why_len, "out of memory");
        r->kind = k, r->cap = cap;
    }
    hist_series *s = &r->series[r->nseries];
    memset(s, 0, sizeof *s);
    if (!(s->path = malloc(len + 1)))
        return hist_fail(why, why_len, "out of memory");
    memcpy(s->path, r->p, len);
    s->path[len] = 0;
    r->p += len;
    s->kind = (uint32_t)kind;
    memset(&r->values[r->nseries], 0, sizeof r->values[0]);
    r->values[r->nseries].raw.status = PCW_CSTATUS_NO_INSTANCE;
    memset(&r->prev[r->nseries], 0, sizeof r->prev[0]);
    r->kind[r->nseries] = (unsigned char)kind;
    r->nseries++;
    return 0;
}

static int rec_ident(hist_reader *r, char *why, size_t why_len)
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
    hist_series *s = &r->series[id];
    s->type = (uint32_t)type;
    s->scale = (int32_t)hist_unzigzag(scale);
    s->provider_id = prov;
    s->instance_id = (uint32_t)inst;
    s->pid = (int32_t)hist_unzigzag(pid);
    s->dup_index = (uint32_t)dup;
    s->epoch++;
    if (r->nchanged == r->changed_cap) {
        size_t cap = r->changed_cap ? r->changed_cap * 2 : 16;
        uint32_t *c = realloc(r->changed, cap * sizeof *c);
        if (!c)
            return hist_fail(why, why_len, "out of memory");
        r->changed = c, r->changed_cap = cap;
    }
    r->changed[r->nchanged++] = (uint32_t)id;
    return 0;
}

static int rec_sample(hist_reader *r, char *why, size_t why_len)
{
    uint64_t t0, t1, n;
    GET(t0);
    GET(t1);
    hist_tstate *t = &r->t;
    if (t->n == 0) {
        t->mono = t0;
        t->mono_delta = 0;
    } else {
        t->mono_delta += hist_unzigzag(t0);
        t->mono += (uint64_t)t->mono_delta;
    }
    t->real_offset = t->n == 0 ? hist_unzigzag(t1) : t->real_offset + hist_unzigzag(t1);
    t->n++;
    GET(n);
    if (n > r->nseries)
        return bad(r, why, why_len, "sample of more series than defined");
    /* The values: the hot loop of reading a log (docs/performance.md), so
     * the cursor is a local (not r->p through a pointer at every varint)
     * and the previous values are added in registers. */
    hist_value *out = r->out ? r->out : r->values;
    const unsigned char *cp = r->p, *end = r->end;
#define VGET(v)                                                                                    \
    do {                                                                                           \
        if (hist_get_varint(&cp, end, &(v))) {                                                     \
            r->p = cp;                                                                             \
            return hist_fail(why, why_len, "block at offset %llu: record cut short",               \
                             (unsigned long long)r->block_off);                                    \
        }                                                                                          \
    } while (0)
    for (size_t i = 0; i < r->nseries; i++) {
        hist_value *v = &out[i];
        hist_prev *p = &r->prev[i];
        uint64_t st = PCW_CSTATUS_NO_INSTANCE;
        if (i < n)
            VGET(st);
        if (st != PCW_CSTATUS_VALID) {
            if (st > PCW_CSTATUS_NOT_AGGREGATED) {
                r->p = cp;
                return bad(r, why, why_len, "unknown value status");
            }
            /* (Every field written: no memset of the whole value.) */
            v->raw = (pcw_raw){.status = (int)st};
            v->computed = 0;
            continue;
        }
        v->raw.status = PCW_CSTATUS_VALID;
        if (r->kind[i] == HIST_KIND_COMPUTED) {
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
        v->raw.first = p->f[0] += (uint64_t)hist_unzigzag(d0);
        v->raw.second = p->f[1] += (uint64_t)hist_unzigzag(d1);
        v->raw.multi = p->f[2] += (uint64_t)hist_unzigzag(d2);
        v->raw.freq = p->f[3] += (uint64_t)hist_unzigzag(d3);
        v->raw.time_ns = p->f[4] += (uint64_t)hist_unzigzag(d4);
        v->computed = 0;
    }
#undef VGET
    r->p = cp;
    return 0;
}

int hist_reader_next(hist_reader *r, uint64_t *mono_ns, uint64_t *real_ns, const hist_value **v,
                     size_t *n, char *why, size_t why_len)
{
    if (r->broken)
        return hist_fail(why, why_len, "the log is damaged at offset %llu",
                         (unsigned long long)r->off);
    r->nchanged = 0;
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
        if (hist_get_varint(&r->p, r->end, &type))
            rc = bad(r, why, why_len, "record cut short");
        else if (type == HIST_REC_SERIES)
            rc = rec_series(r, why, why_len);
        else if (type == HIST_REC_IDENT)
            rc = rec_ident(r, why, why_len);
        else if (type == HIST_REC_SAMPLE)
            rc = rec_sample(r, why, why_len);
        else
            rc = bad(r, why, why_len, "unknown record type");
        if (rc) {
            r->broken = 1;
            /* The damaged block does not count as read. */
            r->off = r->block_off;
            r->blocks--;
            return -1;
        }
        if (type == HIST_REC_SAMPLE) {
            *mono_ns = r->t.mono;
            *real_ns = r->t.mono + (uint64_t)r->t.real_offset;
            *v = r->out ? r->out : r->values;
            *n = r->nseries;
            return 1;
        }
    }
}

size_t hist_reader_series_count(const hist_reader *r)
{
    return r->nseries;
}

const hist_series *hist_reader_series(const hist_reader *r, size_t i)
{
    return i < r->nseries ? &r->series[i] : NULL;
}

uint64_t hist_reader_blocks(const hist_reader *r)
{
    return r->blocks;
}

uint64_t hist_reader_offset(const hist_reader *r)
{
    return r->off;
}

uint64_t hist_reader_block_offset(const hist_reader *r)
{
    return r->block_off;
}

void hist_reader_seek(hist_reader *r, uint64_t off, uint64_t seq)
{
    r->off = off;
    r->blocks = seq;
    r->p = r->end = NULL;
    r->broken = 0;
}

void hist_reader_set_ident(hist_reader *r, size_t id, const hist_series *ident)
{
    if (id >= r->nseries)
        return;
    /* Everything an identity record sets (whatever the format adds), the
     * definition (path, kind) kept. */
    hist_series *s = &r->series[id];
    char *path = s->path;
    uint32_t kind = s->kind;
    *s = *ident;
    s->path = path;
    s->kind = kind;
}

void hist_reader_set_output(hist_reader *r, hist_value *out)
{
    r->out = out;
}

const uint32_t *hist_reader_changed(const hist_reader *r, size_t *n)
{
    *n = r->nchanged;
    return r->changed;
}
