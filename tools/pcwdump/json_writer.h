/* SPDX-License-Identifier: MIT */
/*
 * json_writer.h - a tiny streaming JSON writer for pcwdump.
 *
 * Everything pcwdump prints comes from segments, which are hostile input:
 * a name may hold quotes, backslashes, control characters or bytes that are
 * not UTF-8. The writer always produces valid JSON (RFC 8259) whatever the
 * bytes: '"' and '\' are escaped, control characters become \n, \t... or
 * \u00XX, DEL, C1 controls, bidirectional overrides and U+2028/U+2029 are
 * escaped too (safe on a terminal and to embed in JavaScript: the tools'
 * one rule, tools/common/escape.h), and every byte that does not start a
 * valid UTF-8 sequence becomes \ufffd. Other UTF-8 passes through
 * unchanged.
 *
 * The writer tracks nesting so commas, colons and (when pretty) newlines and
 * indentation come out right; callers only say what comes next.
 *
 * Concurrency: a jw belongs to one thread.
 */
#ifndef PCWDUMP_JSON_WRITER_H
#define PCWDUMP_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

typedef struct jw {
    FILE *out;
    int pretty;              /* 1: newlines and two-space indentation */
    int depth;               /* open containers */
    int count[JW_MAX_DEPTH]; /* items written so far in each container */
    char kind[JW_MAX_DEPTH]; /* '{' or '[' */
    int after_key;           /* a key was written; its value comes next */
    int error;               /* misuse (unbalanced, too deep) */
} jw;

void jw_init(jw *w, FILE *out, int pretty);

void jw_begin_object(jw *w);
void jw_end_object(jw *w);
void jw_begin_array(jw *w);
void jw_end_array(jw *w);

/* An object member's key (then exactly one value). */
void jw_key(jw *w, const char *key);
void jw_key_n(jw *w, const char *key, size_t n);

/* Values. */
void jw_string(jw *w, const char *s); /* NULL writes null */
void jw_string_n(jw *w, const char *s, size_t n);
void jw_u64(jw *w, uint64_t v);
void jw_i64(jw *w, int64_t v);
/* A finite double, shortest round-trip form ("0.0009765625"); not finite:
 * null (JSON has no NaN or infinity). */
void jw_double(jw *w, double v);
void jw_bool(jw *w, int v);
void jw_null(jw *w);

/* Shorthands for "key": value. */
void jw_kv_string(jw *w, const char *key, const char *s);
void jw_kv_u64(jw *w, const char *key, uint64_t v);
void jw_kv_i64(jw *w, const char *key, int64_t v);
void jw_kv_double(jw *w, const char *key, double v);
void jw_kv_bool(jw *w, const char *key, int v);

/* End the document (a newline) and report: 0 if every container was closed
 * and nothing was misused or failed to write, else -1. */
int jw_finish(jw *w);

/* The escaper itself: write s[0..n) as a JSON string literal, quotes
 * included. */
void jw_write_escaped(FILE *out, const char *s, size_t n);

#endif /* PCWDUMP_JSON_WRITER_H */
