/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/expo.c - the exposition's pieces: buffer, numbers,
 * escaped label values and help texts (expo.h); metric-name parts are
 * names.c's.
 *
 * Names and values come from segments, which are hostile input: a label
 * value or help text is written as valid UTF-8 whatever bytes it had
 * (each malformed sequence, and NUL, becomes U+FFFD), and escaped as both
 * formats require, so no instance name can end a line, a string or the
 * exposition early.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/name.h"

#include "expo.h"

int eb_grow(ebuf *b, size_t n)
{
    if (b->failed)
        return 0;
    if (b->len + n <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) {
        if (cap > SIZE_MAX / 2) {
            b->failed = 1;
            return 0;
        }
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return 0;
    }
    b->p = p;
    b->cap = cap;
    return 1;
}

void eb_printf(ebuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !eb_need(b, (size_t)n + 1))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void eb_free(ebuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- numbers ------------------------------------------------------------ */

static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

char *expo_u64(char *at, uint64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = digit_pairs[d + 1];
        *--p = digit_pairs[d];
    }
    if (v >= 10) {
        unsigned d = (unsigned)v * 2;
        *--p = digit_pairs[d + 1];
        *--p = digit_pairs[d];
    } else {
        *--p = (char)('0' + v);
    }
    size_t n = (size_t)(tmp + sizeof tmp - p);
    memcpy(at, p, n);
    return at + n;
}

/* 10^k when tb is that, else -1. */
static int power_of_ten(uint64_t tb)
{
    int k = 0;
    while (tb >= 10 && tb % 10 == 0)
        tb /= 10, k++;
    return tb == 1 ? k : -1;
}

char *expo_ratio(char *at, uint64_t x, uint64_t tb, int negative)
{
    if (negative && x)
        *at++ = '-';
    int k = power_of_ten(tb);
    if (k < 0) {
        /* Not a decimal fraction: 17 significant digits round-trip the
         * double (a rare path: an object clock's own frequency). */
        int n = snprintf(at, EXPO_NUM_MAX - 1, "%.17g", (double)x / (double)tb);
        return at + (n > 0 ? n : 0);
    }
    at = expo_u64(at, x / tb);
    uint64_t frac = x % tb;
    if (!frac)
        return at;
    /* k digits, leading zeros kept, trailing zeros dropped. */
    char d[20];
    for (int i = k - 1; i >= 0; i--, frac /= 10)
        d[i] = (char)('0' + frac % 10);
    int n = k;
    while (n > 0 && d[n - 1] == '0')
        n--;
    *at++ = '.';
    memcpy(at, d, (size_t)n);
    return at + n;
}

/* ---- escaped strings ----------------------------------------------------- */

static const char replacement[3] = {(char)0xEF, (char)0xBF, (char)0xBD}; /* U+FFFD */

/* s escaped into b: backslash, newline, and '"' when `quote`; with
 * `quote` < 0, nothing is escaped (the protobuf format's strings). */
static void escaped(ebuf *b, const char *s, size_t n, int quote)
{
    int raw = quote < 0;
    /* Worst case: every byte becomes U+FFFD (3 bytes). */
    if (!eb_need(b, 3 * n))
        return;
    char *o = b->p + b->len;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 0x20 && c < 0x80 && c != '\\' && c != '"') || (raw && c > 0 && c < 0x80)) {
            *o++ = (char)c;
            i++;
            continue;
        }
        if (c == '\\' || (c == '"' && quote > 0)) {
            *o++ = '\\';
            *o++ = (char)c;
            i++;
            continue;
        }
        if (c == '\n') {
            *o++ = '\\';
            *o++ = 'n';
            i++;
            continue;
        }
        if (c == '"' || (c > 0 && c < 0x20)) { /* '"' unquoted; tab, CR... */
            *o++ = (char)c;
            i++;
            continue;
        }
        size_t at = i;
        int32_t cp = pcw__utf8_next(s, n, &at);
        if (cp <= 0) { /* malformed, or NUL */
            memcpy(o, replacement, 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(o, s + i, at - i);
        o += at - i;
        i = at;
    }
    b->len = (size_t)(o - b->p);
}

void expo_label_value(ebuf *b, const char *s, size_t n)
{
    escaped(b, s, n, 1);
}

void expo_help_text(ebuf *b, const char *s, size_t n, int format)
{
    escaped(b, s, n, format == EXPO_OPENMETRICS);
}

void expo_utf8(ebuf *b, const char *s, size_t n)
{
    escaped(b, s, n, -1);
}
