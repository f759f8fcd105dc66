/* SPDX-License-Identifier: MIT */
/*
 * lib/history/codec.h - the log's byte-level encoding (docs/history.md):
 * LEB128 varints, zigzag for signed deltas, little-endian fixed words, and
 * the per-block state that deltas are taken against. Shared by write.c and
 * read.c so both sides apply one rule.
 */
#ifndef PCW_HISTORY_CODEC_H
#define PCW_HISTORY_CODEC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <xxhash.h>
#include <zlib.h>

#include "history.h"

/* Per series, per block: the previous values its deltas are taken from
 * (zero at the start of every block, so that a block decodes on its own). */
typedef struct pcw__hist_prev {
    uint64_t f[5]; /* first, second, multi, freq, time_ns; or [0] the bits of computed */
    uint64_t word; /* version 3, the reader's: its last word in a row sample */
    uint64_t gen;  /* the reader's: the block load f belongs to; from another, f is
                      zero (reset when used, not for every series at every block) */
} pcw__hist_prev;

/* Per block: the sample times' state (delta of delta). */
typedef struct pcw__hist_tstate {
    uint64_t n;          /* samples in this block so far */
    uint64_t mono;       /* the previous sample's */
    int64_t mono_delta;  /* the previous delta */
    int64_t real_offset; /* the previous real - mono */
} pcw__hist_tstate;

/* Put a sentence into why (may be NULL) and return -1: every error of the
 * writer and the reader. */
__attribute__((format(printf, 3, 4))) static inline int pcw__hist_fail(char *why, size_t len,
                                                                       const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static inline uint64_t pcw__hist_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t pcw__hist_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline void pcw__hist_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void pcw__hist_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t pcw__hist_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t pcw__hist_le64(const unsigned char *p)
{
    return (uint64_t)pcw__hist_le32(p) | (uint64_t)pcw__hist_le32(p + 4) << 32;
}

/* A varint into p (room for 10 bytes); returns the bytes written. */
static inline size_t pcw__hist_put_varint(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

/* A varint from [*p, end): 0 and *p moved past it, or -1 (truncated, or
 * longer than 10 bytes / 64 bits). The common cases first (a value is
 * mostly one byte; with 10 bytes left no byte needs its own bounds
 * check): reading a log is decoding these (docs/performance.md). */
__attribute__((always_inline)) static inline int
pcw__hist_get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    const unsigned char *q = *p;
    if (q < end && q[0] < 0x80) {
        *v = q[0];
        *p = q + 1;
        return 0;
    }
    if (end - q >= 10) {
        /* Unrolled (a time delta is 5 bytes): a constant shift per byte,
         * no loop counter; the 10th byte may hold only the 64th bit. */
        uint64_t x = q[0] & 0x7f, b;
#define PCW__HIST_VBYTE(i)                                                                         \
    b = q[i];                                                                                      \
    x |= (b & 0x7f) << (7 * (i));                                                                  \
    if (b < 0x80) {                                                                                \
        *v = x;                                                                                    \
        *p = q + (i) + 1;                                                                          \
        return 0;                                                                                  \
    }
        PCW__HIST_VBYTE(1)
        PCW__HIST_VBYTE(2)
        PCW__HIST_VBYTE(3)
        PCW__HIST_VBYTE(4)
        PCW__HIST_VBYTE(5)
        PCW__HIST_VBYTE(6)
        PCW__HIST_VBYTE(7)
        PCW__HIST_VBYTE(8)
#undef PCW__HIST_VBYTE
        b = q[9];
        if (b > 1)
            return -1;
        *v = x | b << 63;
        *p = q + 10;
        return 0;
    }
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*p >= end)
            return -1;
        unsigned char b = *(*p)++;
        if (shift == 63 && b > 1)
            return -1;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* A block's check over its header's bytes 0..23 and its stored payload
 * (header bytes 24..27). Up to version 2 zlib's CRC-32; from version 3
 * the low 32 bits of XXH3-64 (libxxhash) of the payload, seeded with the
 * XXH3-64 of the header bytes: a recorder's block is its rows whole, and
 * the CRC was a fifth of recording's CPU (docs/performance.md, "Recording
 * a log"); XXH3 checks the same bytes several times faster and, as the CRC,
 * catches a block the disk wrote only in part. */
static inline uint32_t pcw__hist_block_check(uint32_t version, const unsigned char *h,
                                             const unsigned char *payload, size_t len)
{
    if (version >= 3)
        return (uint32_t)XXH3_64bits_withSeed(payload, len, XXH3_64bits(h, 24));
    uLong crc = crc32(crc32(0L, Z_NULL, 0), h, 24);
    return (uint32_t)crc32_z(crc, payload, len);
}

/* ---- version 2: histograms ----------------------------------------------- */

/* Does a value of this status carry a number? A raw series' fields only
 * when VALID; a computed series' double when VALID and, from version 2,
 * ABOVE_RANGE (a histogram statistic's top bound, which live shows). */
static inline int pcw__hist_has_number(uint32_t version, uint32_t kind, uint64_t status)
{
    return status == 0 /* PCW_CSTATUS_VALID */ ||
           (version >= 2 && kind == 1 /* PCW__HIST_KIND_COMPUTED */ &&
            status == 12 /* ABOVE_RANGE */);
}

/* Per histogram series: the words its next sample's deltas are taken from.
 * The reader keeps two arrays and decodes each sample into the one it did
 * not hand out last, so the previous sample's words stay valid for its
 * caller (history.h, pcw__hist_value); the writer uses w[0] only. */
typedef struct pcw__hist_hstate {
    uint64_t *w[2];
    uint32_t n;     /* words per array: 2 + the shape's buckets (0: none) */
    uint32_t cap;   /* words allocated per array (counted in PCW__HIST_MAX_HWORDS) */
    unsigned cur;   /* w[cur]: the last sample's words */
    uint64_t block; /* the reader's block load (pcw__hist_reader.gen, which a
                       seek never takes back) they were coded in: in another
                       load the base is zero (a block decodes on its own) */
} pcw__hist_hstate;

/* Most bytes pcw__hist_put_hwords writes for n words. */
static inline size_t pcw__hist_hwords_bound(uint32_t n)
{
    return 10u * 3u + 20u * (size_t)n;
}

/* A histogram's n words (sum, zero bucket, buckets), as deltas from base
 * (NULL: zero), into p: the sum's and the zero bucket's zigzag deltas,
 * then the buckets as a run-length list - a bucket untouched since the
 * base costs nothing: the count k of buckets that changed, then for each
 * its gap from the previous one's index (+1) and its zigzag delta. A
 * histogram with a few busy buckets of hundreds costs a few bytes a
 * sample. Returns the bytes written (at most pcw__hist_hwords_bound(n)). */
static inline size_t pcw__hist_put_hwords(unsigned char *p, const uint64_t *now,
                                          const uint64_t *base, uint32_t n)
{
    size_t len = 0;
    for (uint32_t j = 0; j < 2; j++)
        len += pcw__hist_put_varint(p + len,
                                    pcw__hist_zigzag((int64_t)(now[j] - (base ? base[j] : 0))));
    uint32_t k = 0;
    for (uint32_t j = 2; j < n; j++)
        k += now[j] != (base ? base[j] : 0);
    len += pcw__hist_put_varint(p + len, k);
    uint32_t next = 2;
    for (uint32_t j = 2; j < n && k; j++) {
        uint64_t b = base ? base[j] : 0;
        if (now[j] == b)
            continue;
        len += pcw__hist_put_varint(p + len, j - next);
        len += pcw__hist_put_varint(p + len, pcw__hist_zigzag((int64_t)(now[j] - b)));
        next = j + 1;
        k--;
    }
    return len;
}

/* The reverse, from [*p, end) into out[n]: 0, or -1 (cut short, an index
 * beyond n, a zero delta where the list names a change). */
static inline int pcw__hist_get_hwords(const unsigned char **p, const unsigned char *end,
                                       uint64_t *out, const uint64_t *base, uint32_t n)
{
    uint64_t v, k;
    for (uint32_t j = 0; j < n; j++)
        out[j] = base ? base[j] : 0;
    for (uint32_t j = 0; j < 2 && j < n; j++) {
        if (pcw__hist_get_varint(p, end, &v))
            return -1;
        out[j] += (uint64_t)pcw__hist_unzigzag(v);
    }
    if (n < 2 || pcw__hist_get_varint(p, end, &k) || k > n - 2)
        return -1;
    uint64_t next = 2;
    while (k--) {
        uint64_t gap;
        if (pcw__hist_get_varint(p, end, &gap) || gap >= n - next ||
            pcw__hist_get_varint(p, end, &v) || !v)
            return -1;
        next += gap;
        out[next++] += (uint64_t)pcw__hist_unzigzag(v);
    }
    return 0;
}

/* ---- version 3: row samples ---------------------------------------------- */

/* A row sample's pieces: a tag (count << 2 | kind), count >= 1. */
enum {
    PCW__HIST_SEG_ABSENT = 0, /* count series without a value: a status */
    PCW__HIST_SEG_VALUES = 1, /* count values as a sample record's */
    PCW__HIST_SEG_ROWS = 2,   /* count rows: deltas from the block's last words */
    PCW__HIST_SEG_WHOLE = 3,  /* count rows: every word as it is */
};

/* A field of a layout (PCW__HIST_SRC_*) from row words w and time t. */
static inline uint64_t pcw__hist_src(uint32_t src, uint64_t konst, const uint64_t *w, uint64_t t)
{
    switch (src) {
    case PCW__HIST_SRC_CONST:
        return konst;
    case PCW__HIST_SRC_TIME:
        return t;
    case PCW__HIST_SRC_TIME100:
        return t / 100;
    default:
        return w[src - PCW__HIST_SRC_WORD];
    }
}

/* The raw sample a layout makes of a row (history.h, pcw__hist_layout):
 * the reader's, and the tests'. The layout's indices are below the row's
 * width (the reader checks before). */
static inline void pcw__hist_row_raw(const pcw__hist_layout *l, const uint64_t *w, uint64_t t,
                                     pcw_raw *out)
{
    out->status = (int)l->status;
    out->first = w[l->first];
    out->second = pcw__hist_src(l->second, 0, w, t);
    out->multi = pcw__hist_src(l->multi, 1, w, t);
    out->freq = pcw__hist_src(l->freq, l->freq_const, w, t);
    out->time_ns = t;
}

/* The words a layout reads (1 + its largest word index), or 0 when it is
 * not one (a source beyond PCW__HIST_ROW_WORDS words, a status beyond
 * `last`). */
static inline uint32_t pcw__hist_layout_words(const pcw__hist_layout *l, uint32_t last)
{
    uint32_t need = l->first + 1;
    const uint32_t src[3] = {l->second, l->multi, l->freq};
    if (l->first >= PCW__HIST_ROW_WORDS || l->status > last)
        return 0;
    for (int i = 0; i < 3; i++) {
        if (src[i] >= PCW__HIST_SRC_WORD + PCW__HIST_ROW_WORDS)
            return 0;
        if (src[i] >= PCW__HIST_SRC_WORD && src[i] - PCW__HIST_SRC_WORD + 1 > need)
            need = src[i] - PCW__HIST_SRC_WORD + 1;
    }
    return need;
}

#endif /* PCW_HISTORY_CODEC_H */
