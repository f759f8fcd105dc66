/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/expo.h - writing the exposition: Prometheus' text
 * format 0.0.4 and OpenMetrics 1.0.0 - a growable buffer, escaped label
 * values and help texts, numbers (metric names: names.h).
 *
 * Everything here is pure or works on a caller's buffer: any thread, one
 * buffer per thread.
 */
#ifndef PCW_EXPORTER_EXPO_H
#define PCW_EXPORTER_EXPO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The formats: text 0.0.4, OpenMetrics 1.0.0, and Prometheus' protobuf
 * exposition (proto.h). */
enum { EXPO_TEXT = 0, EXPO_OPENMETRICS = 1, EXPO_PROTO = 2, EXPO_FORMATS = 3 };

/* A growable output buffer. `failed` is set when growing failed (out of
 * memory); the writes after it are dropped, so a writer checks once. */
typedef struct ebuf {
    char *p;
    size_t len, cap;
    int failed;
} ebuf;

/* Make room for n more bytes; 0 when there is none (failed is set). */
int eb_grow(ebuf *b, size_t n);
static inline int eb_need(ebuf *b, size_t n)
{
    return b->len + n <= b->cap ? 1 : eb_grow(b, n);
}
static inline void eb_put(ebuf *b, const void *s, size_t n)
{
    if (eb_need(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}
static inline void eb_str(ebuf *b, const char *s)
{
    eb_put(b, s, strlen(s));
}
void eb_printf(ebuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void eb_free(ebuf *b);

/* Unchecked writers: the caller made room (eb_need) for what they write:
 * at most EXPO_NUM_MAX bytes for a number. */
#define EXPO_NUM_MAX 48
/* Decimal digits of v. */
char *expo_u64(char *at, uint64_t v);
/* x / tb exactly when tb is a power of ten ("1.5", "0.000000123", "7"),
 * else to 17 significant digits; with `negative`, a leading '-'. tb > 0. */
char *expo_ratio(char *at, uint64_t x, uint64_t tb, int negative);

/* A label value (without its quotes), escaped ('\\', '"' and newline),
 * invalid UTF-8 and NUL replaced by U+FFFD; at most 3 * n bytes. */
void expo_label_value(ebuf *b, const char *s, size_t n);
/* s as valid UTF-8 without escapes (a protobuf string): invalid UTF-8
 * and NUL replaced by U+FFFD; at most 3 * n bytes. */
void expo_utf8(ebuf *b, const char *s, size_t n);
/* A HELP text: newline and '\\' escaped, and in OpenMetrics '"' too;
 * invalid UTF-8 replaced. */
void expo_help_text(ebuf *b, const char *s, size_t n, int format);

#endif /* PCW_EXPORTER_EXPO_H */
