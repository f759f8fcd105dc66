/* SPDX-License-Identifier: MIT */
/*
 * tools/common/suggest.c - the nearest names to a mistyped one
 * (suggest.h says which are near and why).
 */
#include "suggest.h"

#include <string.h>

#include "common/name.h"

#include "escape.h"

/* Decode up to SUGGEST_MAX_CHARS folded code points of s; returns how many.
 * Bytes that are not UTF-8 stop the decoding (they never match anyway). */
static size_t folded(const char *s, uint32_t *out)
{
    size_t n = strlen(s), i = 0, k = 0;
    while (i < n && k < SUGGEST_MAX_CHARS) {
        int32_t c = pcw__utf8_next(s, n, &i);
        if (c < 0)
            break;
        out[k++] = pcw__fold((uint32_t)c);
    }
    return k;
}

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
    unsigned m = a < b ? a : b;
    return m < c ? m : c;
}

/* Optimal string alignment distance of a[0..an) and b[0..bn), three rows. */
static unsigned osa(const uint32_t *a, size_t an, const uint32_t *b, size_t bn)
{
    unsigned rows[3][SUGGEST_MAX_CHARS + 1];
    unsigned *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= bn; j++)
        prev[j] = (unsigned)j;
    for (size_t i = 1; i <= an; i++) {
        cur[0] = (unsigned)i;
        for (size_t j = 1; j <= bn; j++) {
            unsigned cost = a[i - 1] != b[j - 1];
            unsigned d = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            cur[j] = d;
        }
        unsigned *t = pp;
        pp = prev, prev = cur, cur = t;
    }
    return prev[bn];
}

static unsigned limit_for(size_t len)
{
    unsigned l = (unsigned)(len / 4);
    return l < 1 ? 1 : l > 3 ? 3 : l;
}

void suggest_init(suggest *s, const char *typo)
{
    memset(s, 0, sizeof *s);
    s->typo = typo ? typo : "";
}

void suggest_add(suggest *s, const char *candidate)
{
    if (!candidate)
        return;
    uint32_t t[SUGGEST_MAX_CHARS], c[SUGGEST_MAX_CHARS];
    size_t tn = folded(s->typo, t), cn = folded(candidate, c);
    if (tn == 0 || cn == 0)
        return;
    unsigned limit = limit_for(tn), score = osa(t, tn, c, cn);
    if (score == 0)
        return; /* the same name: not a suggestion */
    if (score > limit) {
        if (tn >= 3 && cn > tn && !memcmp(t, c, tn * sizeof *t))
            score = limit + 1; /* the typed name starts this one */
        else
            return;
    }
    for (size_t k = 0; k < s->n; k++)
        if (!strcmp(s->name[k], candidate))
            return;
    size_t at = s->n;
    while (at > 0 && s->score[at - 1] > score)
        at--;
    if (at >= SUGGEST_KEEP)
        return;
    size_t last = s->n < SUGGEST_KEEP ? s->n : SUGGEST_KEEP - 1;
    memmove(&s->name[at + 1], &s->name[at], (last - at) * sizeof s->name[0]);
    memmove(&s->score[at + 1], &s->score[at], (last - at) * sizeof s->score[0]);
    s->name[at] = candidate;
    s->score[at] = score;
    if (s->n < SUGGEST_KEEP)
        s->n++;
}

size_t suggest_print(FILE *out, const suggest *s)
{
    if (s->n == 0)
        return 0;
    fputs("did you mean ", out);
    for (size_t k = 0; k < s->n; k++) {
        if (k > 0)
            fputs(k + 1 == s->n ? " or " : ", ", out);
        fputc('"', out);
        esc_put(out, s->name[k], strlen(s->name[k]), 0);
        fputc('"', out);
    }
    fputc('?', out);
    return s->n;
}
