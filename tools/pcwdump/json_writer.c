/* SPDX-License-Identifier: MIT */
/*
 * json_writer.c - see json_writer.h.
 */
#include "json_writer.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/name.h"

#include "../common/escape.h"

void jw_init(jw *w, FILE *out, int pretty)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->pretty = pretty;
}

void jw_write_escaped(FILE *out, const char *s, size_t n)
{
    esc_json(out, s, n);
}

static void newline(jw *w)
{
    if (!w->pretty)
        return;
    putc('\n', w->out);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->out);
}

/* Before any value or key: the separator its position needs. */
static void before_item(jw *w, int is_key)
{
    if (w->after_key) {
        if (is_key)
            w->error = 1; /* two keys in a row */
        w->after_key = 0;
        return;
    }
    if (w->depth == 0)
        return;
    int d = w->depth - 1;
    if ((w->kind[d] == '{') != is_key)
        w->error = 1; /* a bare value in an object, or a key in an array */
    if (w->count[d]++)
        putc(',', w->out);
    newline(w);
}

static void open_container(jw *w, char kind)
{
    before_item(w, 0);
    putc(kind, w->out);
    if (w->depth >= JW_MAX_DEPTH) {
        w->error = 1;
        return;
    }
    w->kind[w->depth] = kind;
    w->count[w->depth] = 0;
    w->depth++;
}

static void close_container(jw *w, char kind)
{
    if (w->depth == 0 || w->kind[w->depth - 1] != kind || w->after_key) {
        w->error = 1;
        return;
    }
    int had = w->count[w->depth - 1];
    w->depth--;
    if (had)
        newline(w);
    putc(kind == '{' ? '}' : ']', w->out);
}

void jw_begin_object(jw *w)
{
    open_container(w, '{');
}
void jw_end_object(jw *w)
{
    close_container(w, '{');
}
void jw_begin_array(jw *w)
{
    open_container(w, '[');
}
void jw_end_array(jw *w)
{
    close_container(w, '[');
}

void jw_key_n(jw *w, const char *key, size_t n)
{
    before_item(w, 1);
    jw_write_escaped(w->out, key, n);
    fputs(w->pretty ? ": " : ":", w->out);
    w->after_key = 1;
}

void jw_key(jw *w, const char *key)
{
    jw_key_n(w, key, strlen(key));
}

void jw_string_n(jw *w, const char *s, size_t n)
{
    before_item(w, 0);
    jw_write_escaped(w->out, s, n);
}

void jw_string(jw *w, const char *s)
{
    if (!s)
        jw_null(w);
    else
        jw_string_n(w, s, strlen(s));
}

void jw_u64(jw *w, uint64_t v)
{
    before_item(w, 0);
    fprintf(w->out, "%" PRIu64, v);
}

void jw_i64(jw *w, int64_t v)
{
    before_item(w, 0);
    fprintf(w->out, "%" PRId64, v);
}

void jw_double(jw *w, double v)
{
    if (!isfinite(v)) {
        jw_null(w);
        return;
    }
    before_item(w, 0);
    /* %.17g round-trips; %.15g first, when it does, reads better. */
    char buf[32];
    snprintf(buf, sizeof buf, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, w->out);
}

void jw_bool(jw *w, int v)
{
    before_item(w, 0);
    fputs(v ? "true" : "false", w->out);
}

void jw_null(jw *w)
{
    before_item(w, 0);
    fputs("null", w->out);
}

void jw_kv_string(jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    jw_string(w, s);
}
void jw_kv_u64(jw *w, const char *key, uint64_t v)
{
    jw_key(w, key);
    jw_u64(w, v);
}
void jw_kv_double(jw *w, const char *key, double v)
{
    jw_key(w, key);
    jw_double(w, v);
}
void jw_kv_i64(jw *w, const char *key, int64_t v)
{
    jw_key(w, key);
    jw_i64(w, v);
}
void jw_kv_bool(jw *w, const char *key, int v)
{
    jw_key(w, key);
    jw_bool(w, v);
}

int jw_finish(jw *w)
{
    putc('\n', w->out);
    if (w->depth != 0 || w->after_key)
        w->error = 1;
    if (fflush(w->out) != 0 || ferror(w->out))
        w->error = 1;
    return w->error ? -1 : 0;
}
