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

/* Per series, per block: the previous values its deltas are taken from
 * (zero at the start of every block, so that a block decodes on its own). */
typedef struct hist_prev {
    uint64_t f[5]; /* first, second, multi, freq, time_ns; or [0] the bits of computed */
} hist_prev;

/* Per block: the sample times' state (delta of delta). */
typedef struct hist_tstate {
    uint64_t n;          /* samples in this block so far */
    uint64_t mono;       /* the previous sample's */
    int64_t mono_delta;  /* the previous delta */
    int64_t real_offset; /* the previous real - mono */
} hist_tstate;

/* Put a sentence into why (may be NULL) and return -1: every error of the
 * writer and the reader. */
__attribute__((format(printf, 3, 4))) static inline int hist_fail(char *why, size_t len,
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

static inline uint64_t hist_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t hist_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline void hist_put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void hist_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t hist_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t hist_le64(const unsigned char *p)
{
    return (uint64_t)hist_le32(p) | (uint64_t)hist_le32(p + 4) << 32;
}

/* A varint into p (room for 10 bytes); returns the bytes written. */
static inline size_t hist_put_varint(unsigned char *p, uint64_t v)
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
static inline int hist_get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    const unsigned char *q = *p;
    if (q < end && q[0] < 0x80) {
        *v = q[0];
        *p = q + 1;
        return 0;
    }
    if (end - q >= 10) {
        uint64_t x = 0;
        for (unsigned i = 0; i < 10; i++) {
            unsigned char b = q[i];
            if (i == 9 && b > 1)
                return -1;
            x |= (uint64_t)(b & 0x7f) << (7 * i);
            if (!(b & 0x80)) {
                *v = x;
                *p = q + i + 1;
                return 0;
            }
        }
        return -1;
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

#endif /* PCW_HISTORY_CODEC_H */
