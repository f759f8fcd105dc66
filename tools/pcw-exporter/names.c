/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/names.c - metric-name parts from pcw names (names.h).
 *
 * A name is read as words twice: once to find which words it ends with
 * (the rules about endings look at the last few kept words), once to write
 * the words kept. Work is linear in the name; the output is at most
 * NAMES_PART_MAX bytes, cut at a word. Names come from segments (hostile):
 * every byte that is not an ASCII letter or digit is a separator, so the
 * result is [a-z0-9_] whatever the input.
 */
#include <string.h>

#include <pcw/types.h>

#include "names.h"

/* The words promtool refuses as abbreviated units, spelled out. */
static const struct {
    const char *abbr, *word;
} units[] = {
    {"s", "seconds"},      {"sec", "seconds"},  {"ms", "milliseconds"}, {"us", "microseconds"},
    {"ns", "nanoseconds"}, {"b", "bytes"},      {"kb", "kilobytes"},    {"mb", "megabytes"},
    {"gb", "gigabytes"},   {"tb", "terabytes"}, {"pb", "petabytes"},    {"m", "minutes"},
    {"h", "hours"},        {"d", "days"},
};

/* Words no metric name may contain (promtool: the metric's type). */
static const char *const type_words[] = {"counter", "gauge", "histogram", "summary"};

/* Words only some metric types' samples end with: never a part's last. */
static const char *const reserved_ends[] = {"total", "count", "sum", "bucket"};

#define WORD_SHORT 16 /* longer words match none of the above */

typedef struct word {
    const char *src; /* its bytes in the name (letters, digits, apostrophes) */
    size_t n;
    const char *as;       /* else what it is written as */
    char low[WORD_SHORT]; /* lowercased without apostrophes, when short; else "" */
} word;

static int alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int in(const char *w, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(w, list[i]) == 0)
            return 1;
    return 0;
}

#define IN(w, list) in((w), (list), sizeof(list) / sizeof(list)[0])

/* The next word at *p ('%' and '/' are words of their own); 0 at the end.
 * `after_per`: the word before was "per" (a unit after it is singular). */
static int next_word(const char **p, word *w, int after_per)
{
    const unsigned char *s = (const unsigned char *)*p;
    while (*s && *s != '%' && *s != '/' && !alnum(*s))
        s++;
    if (!*s)
        return 0;
    memset(w, 0, sizeof *w);
    w->src = (const char *)s;
    if (*s == '%' || *s == '/') {
        w->as = *s == '%' ? "percent" : "per";
        strcpy(w->low, w->as);
        *p = (const char *)s + 1;
        return 1;
    }
    size_t k = 0;
    const unsigned char *e = s;
    while (alnum(*e) || (*e == '\'' && alnum(e[1]) && e > s)) {
        if (*e != '\'' && k < WORD_SHORT)
            w->low[k++] = (char)(*e >= 'A' && *e <= 'Z' ? *e + 32 : *e);
        else if (*e != '\'')
            k = WORD_SHORT + 1;
        e++;
    }
    w->n = (size_t)(e - s);
    if (k > WORD_SHORT - 1)
        w->low[0] = 0;
    else
        w->low[k] = 0;
    for (size_t i = 0; w->low[0] && i < sizeof units / sizeof units[0]; i++)
        if (strcmp(w->low, units[i].abbr) == 0) {
            w->as = after_per && strcmp(units[i].word, "seconds") == 0 ? "second" : units[i].word;
            strcpy(w->low, w->as);
        }
    *p = (const char *)e;
    return 1;
}

/* What the rules need to know of a counter. */
typedef struct how {
    int tails;   /* apply the rules about endings (counters, not sets) */
    int rate;    /* drop a final "per second(s)" */
    int percent; /* drop "percent" */
    int ratio;   /* drop a final "ratio" */
    int seconds; /* drop a final "seconds" */
} how;

static int kept(const word *w, const how *h)
{
    return !IN(w->low, type_words) && !(h->percent && strcmp(w->low, "percent") == 0);
}

/* The words of `name` under rule h into out; *dropped counts the words the
 * display rules (rate, percent, ratio) left out. */
static size_t make_part(const char *name, const how *h, char *out, int *dropped)
{
    /* 1. The last kept words, to apply the rules about endings. */
    enum { RING = 8 };
    char ring[RING][WORD_SHORT];
    size_t n = 0;
    int after_per = 0;
    word w;
    *dropped = 0;
    for (const char *p = name; next_word(&p, &w, after_per);) {
        after_per = strcmp(w.low, "per") == 0;
        if (!kept(&w, h)) {
            *dropped += h->percent && strcmp(w.low, "percent") == 0;
            continue;
        }
        strcpy(ring[n % RING], w.low);
        n++;
    }
    size_t cut = 0;
    for (int again = h->tails; again && n - cut > 0;) {
        const char *last = ring[(n - cut - 1) % RING];
        const char *before = n - cut >= 2 ? ring[(n - cut - 2) % RING] : "";
        again = 0;
        if (h->rate && strcmp(before, "per") == 0 &&
            (strcmp(last, "second") == 0 || strcmp(last, "seconds") == 0)) {
            cut += 2, *dropped += 1, again = 1;
        } else if (IN(last, reserved_ends) || (h->seconds && strcmp(last, "seconds") == 0)) {
            cut += 1, again = 1;
        } else if (h->ratio && strcmp(last, "ratio") == 0) {
            cut += 1, *dropped += 1, again = 1;
        }
        if (cut >= RING - 1)
            break; /* what the ring holds: enough for any real name */
    }
    /* 2. The words kept, but the cut ones at the end. */
    size_t len = 0, i = 0;
    after_per = 0;
    for (const char *p = name; i + cut < n && next_word(&p, &w, after_per);) {
        after_per = strcmp(w.low, "per") == 0;
        if (!kept(&w, h))
            continue;
        i++;
        size_t wl = w.as ? strlen(w.as) : w.n;
        if (len + (len > 0) + wl > NAMES_PART_MAX)
            break;
        if (len > 0)
            out[len++] = '_';
        if (w.as) {
            memcpy(out + len, w.as, wl);
            len += wl;
            continue;
        }
        for (size_t k = 0; k < w.n; k++)
            if (w.src[k] != '\'')
                out[len++] = (char)(w.src[k] >= 'A' && w.src[k] <= 'Z' ? w.src[k] + 32 : w.src[k]);
    }
    out[len] = 0;
    return len;
}

size_t names_set(const char *name, char *out)
{
    how h = {0, 0, 0, 0, 0};
    int dropped;
    return make_part(name, &h, out, &dropped);
}

size_t names_counter(const char *name, uint32_t type, const type_rule *r, int display, char *out,
                     int *shortened)
{
    int percent = (type & 0x70000000u) == PCW_PERF_DISPLAY_PERCENT;
    how h = {
        .tails = 1,
        .rate = display && r && r->fam[0].type == MT_COUNTER,
        .percent = display && percent,
        .ratio = display && percent && (type & 0x000F0000u) == PCW_PERF_COUNTER_FRACTION,
        .seconds = r && strcmp(r->fam[0].unit, "_seconds") == 0,
    };
    int dropped;
    size_t len = make_part(name, &h, out, &dropped);
    if (shortened)
        *shortened = dropped > 0;
    return len;
}
