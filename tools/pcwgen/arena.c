/* SPDX-License-Identifier: MIT */
/*
 * arena.c - the manifest's allocator, warnings and error formatting.
 *
 * One list of blocks per manifest: the reader allocates as it goes and
 * mf_free() releases everything, whether parsing succeeded or stopped half
 * way (which is what keeps the fuzzer's leak check quiet on any input).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct mf_arena_block {
    mf_arena_block *next;
    max_align_t data[]; /* keeps every allocation suitably aligned */
};

void *mf_alloc(mf_manifest *m, size_t n)
{
    if (n > (size_t)-1 / 2)
        return NULL;
    mf_arena_block *b = calloc(1, sizeof *b + n);
    if (!b)
        return NULL;
    b->next = m->arena;
    m->arena = b;
    return b->data;
}

char *mf_strdup(mf_manifest *m, const char *s)
{
    size_t n = strlen(s);
    char *d = mf_alloc(m, n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

int mf_reserve(mf_manifest *m, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 8;
    if (ncap > (size_t)-1 / 2 / elem)
        return -1;
    /* The old array stays in the arena until mf_free: doubling bounds the
     * waste to the size of the final array. */
    void *a = mf_alloc(m, ncap * elem);
    if (!a)
        return -1;
    if (n)
        memcpy(a, *arr, n * elem);
    *arr = a;
    *cap = ncap;
    return 0;
}

void mf_warn(mf_manifest *m, unsigned long line, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (mf_reserve(m, (void **)&m->warnings, &m->warnings_cap, m->nwarnings, sizeof *m->warnings) !=
        0)
        return;
    char *msg = mf_strdup(m, buf);
    if (!msg)
        return;
    m->warnings[m->nwarnings].line = line;
    m->warnings[m->nwarnings].msg = msg;
    m->nwarnings++;
}

void mf_set_error(mf_error *e, unsigned long line, const char *fmt, ...)
{
    va_list ap;
    e->line = line;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
}

void mf_free(mf_manifest *m)
{
    if (!m)
        return;
    for (mf_arena_block *b = m->arena, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    memset(m, 0, sizeof *m);
}
