/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwstat/split.c - -f BIN: a user's path whose counterset part is a
 * wildcard ("\*(*)\*", pcwstat-recorder.service's default) recorded as one
 * path per counterset it matches: those published at the start, and each
 * one published later, from the sample after it appears.
 *
 * Why: the recorder logs a handle's rows whole (record_group, row samples)
 * only when the handle is one counterset's. A handle over several would be
 * logged value by value, each value its own handle; and a handle that
 * matched one counterset at the start would have become that counterset's
 * group, deaf to countersets published later. One path per counterset
 * makes each a group of its own (or, if its rows cannot be logged whole,
 * its values columns), and new countersets new paths.
 *
 * A derived path is the user's text with the counterset part replaced by
 * the counterset's name; the host, instance and counter parts stay as
 * written. A name holding '*' or '?' cannot be told from a pattern in a
 * path, nor one holding '(', ')' or '\\' from the path's other parts (PDH
 * has the same limits): such a counterset is not recorded, and stderr says
 * so once. A path the query refuses (the counterset lacks the counters
 * the pattern names) is tried again only once the counterset is
 * registered with other counters. A path is split into SPLIT_MAX_SETS countersets at
 * most over a run (a provider registering name after name cannot grow the
 * recorder without bound); stderr says so once when it is reached.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>

#include "common/name.h"
#include "pcwstat.h"

int split_init(splitter *s, const char *text)
{
    memset(s, 0, sizeof *s);
    pcw_path p;
    if (pcw_path_parse(text, &p, NULL) != PCW_OK)
        return 0;
    int wild = (p.wild & PCW_PATH_WILD_COUNTERSET) != 0;
    if (wild) {
        /* The counterset part starts after "\\host" and its '\'
         * (pcw_path_parse's layout, as query.c's errors count it) and is
         * written as parsed. */
        s->set_at = p.host ? 3 + strlen(p.host) : 1;
        s->set_len = strlen(p.counterset);
        s->text = strdup(text);
        s->pattern = strdup(p.counterset);
        int oom = !s->text || !s->pattern;
        if (oom || strncmp(text + s->set_at, p.counterset, s->set_len) != 0) {
            split_free(s);
            wild = oom ? -1 : 0; /* (a layout not as expected: not split) */
        }
    }
    pcw_path_free(&p);
    return wild;
}

/* Names as the query compares them (common/name.h: case-insensitive, by
 * simple case folding): a total order consistent with pcw__name_equal, so
 * that "Foo" and "FOO" - one merged counterset, whose name is its first
 * registration's - are one entry. */
static int name_cmp(const char *a, const char *b)
{
    size_t an = strlen(a), bn = strlen(b), i = 0, j = 0;
    while (i < an && j < bn) {
        int32_t x = pcw__utf8_next(a, an, &i), y = pcw__utf8_next(b, bn, &j);
        if (x < 0 || y < 0)
            return strcmp(a, b); /* (not UTF-8: its bytes) */
        uint32_t fx = pcw__fold((uint32_t)x), fy = pcw__fold((uint32_t)y);
        if (fx != fy)
            return fx < fy ? -1 : 1;
    }
    return (i < an) - (j < bn);
}

/* Where name is, or goes, in the sorted seen[]: *at; 1 when there. A
 * sample looks up every counterset: O(log n) each, not O(n). */
static int seen_find(const splitter *s, const char *name, size_t *at)
{
    size_t lo = 0, hi = s->nseen;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(s->seen[mid].name, name);
        if (c == 0)
            return *at = mid, 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    return 0;
}

/* What decides whether a counterset's path is accepted: its instance type
 * and its counters' names and types. A path refused is tried again only
 * when this changes (the counterset registered again, otherwise). */
static uint64_t set_sig(const pcw_counterset *cs)
{
    uint64_t h = pcw__name_hash_from(0x9e3779b97f4a7c15ull ^ cs->instance_type, "", 0);
    for (uint32_t k = 0; k < cs->counter_count; k++) {
        const pcw_counter *c = &cs->counters[k];
        h = pcw__name_hash_from(h * 31 + c->type, c->name, strlen(c->name));
    }
    return h ^ cs->counter_count;
}

int split_new(splitter *s, pcw_consumer *c, int (*fn)(void *arg, const char *path), void *arg)
{
    if (!s->text)
        return 0;
    /* (fn adds a handle, which may refresh c's list: an entry that moves
     * is seen at the next sample.) */
    for (size_t i = 0; i < pcw_consumer_counterset_count(c); i++) {
        const pcw_merged_counterset *m = pcw_consumer_counterset(c, i);
        const char *name = m && m->meta ? m->meta->name : NULL;
        size_t at;
        if (!name || !pcw__wildcard_match(s->pattern, strlen(s->pattern), name, strlen(name)))
            continue;
        uint64_t sig = set_sig(m->meta);
        int known = seen_find(s, name, &at);
        if (known && (s->seen[at].added || s->seen[at].sig == sig))
            continue;
        if (!known) {
            if (s->nseen == SPLIT_MAX_SETS) {
                if (!s->full) {
                    char shown[1024];
                    fprintf(stderr,
                            "pcwstat: %s has matched %u countersets: the ones published from now "
                            "on are not recorded\n",
                            show(shown, sizeof shown, s->text), SPLIT_MAX_SETS);
                    s->full = 1;
                }
                continue;
            }
            char *copy = strdup(name);
            if (!copy || grow(&s->seen, &s->seen_cap, s->nseen + 1, sizeof *s->seen)) {
                free(copy);
                return -1;
            }
            memmove(&s->seen[at + 1], &s->seen[at], (s->nseen - at) * sizeof *s->seen);
            s->seen[at] = (struct split_seen){copy, sig, 0};
            s->nseen++;
        }
        s->seen[at].sig = sig;
        if (strpbrk(name, "*?()\\")) {
            if (!known) {
                char shown[1024];
                fprintf(stderr,
                        "pcwstat: counterset \"%s\" is not recorded: a name with '*', '?', '(', "
                        "')' or '\\' cannot be written in a path without matching others\n",
                        show(shown, sizeof shown, name));
            }
            continue;
        }
        size_t tail = strlen(s->text + s->set_at + s->set_len), len = strlen(name);
        char *path = malloc(s->set_at + len + tail + 1);
        if (!path)
            return -1;
        memcpy(path, s->text, s->set_at);
        memcpy(path + s->set_at, name, len);
        memcpy(path + s->set_at + len, s->text + s->set_at + s->set_len, tail + 1);
        int rc = fn(arg, path);
        free(path);
        if (rc < 0)
            return -1;
        s->seen[at].added = rc > 0;
    }
    return 0;
}

void split_free(splitter *s)
{
    for (size_t i = 0; i < s->nseen; i++)
        free(s->seen[i].name);
    free(s->seen);
    free(s->text);
    free(s->pattern);
    memset(s, 0, sizeof *s);
}
