/* SPDX-License-Identifier: MIT */
/*
 * select.c - which providers, countersets, instances and counters to show.
 *
 * Values of one option are alternatives (-c A -c B shows both); different
 * options must all hold (-p 12 -c A shows A of provider 12 only). Names
 * compare case-insensitively and may use the wildcards '*' and '?'
 * (pcw__wildcard_match), as PCW compares names.
 */
#include <stdlib.h>
#include <string.h>

#include "common/name.h"

#include "../common/escape.h"
#include "../common/suggest.h"
#include "pcwdump.h"

static int wild(const char *pattern, const char *name, size_t len)
{
    return pcw__wildcard_match(pattern, strlen(pattern), name, len);
}

/* A decimal number and nothing else: *v gets it. */
static int all_digits(const char *s, unsigned long long *v)
{
    if (!*s)
        return 0;
    unsigned long long x = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9' || x > (~0ull - 9) / 10)
            return 0;
        x = x * 10 + (unsigned)(*p - '0');
    }
    *v = x;
    return 1;
}

int sel_any_provider_filter(const dump_opts *o)
{
    return o->providers.n > 0;
}

int sel_provider(const dump_opts *o, const pcw_provider_info *p)
{
    if (!o->providers.n)
        return 1;
    for (size_t i = 0; i < o->providers.n; i++) {
        const char *f = o->providers.v[i];
        unsigned long long pid;
        if (all_digits(f, &pid) ? pid == (unsigned long long)(int64_t)p->pid && p->pid > 0
                                : wild(f, p->name, strlen(p->name)))
            return 1;
    }
    return 0;
}

int sel_cset(const dump_opts *o, const pcw_counterset *cs)
{
    if (!o->csets.n)
        return 1;
    for (size_t i = 0; i < o->csets.n; i++)
        if (wild(o->csets.v[i], cs->name, strlen(cs->name)))
            return 1;
    return 0;
}

int sel_instance(const dump_opts *o, uint32_t id, const char *name, size_t len)
{
    if (o->nids) {
        size_t i;
        for (i = 0; i < o->nids && o->ids[i] != id; i++)
            ;
        if (i == o->nids)
            return 0;
    }
    if (o->instances.n) {
        size_t i;
        for (i = 0; i < o->instances.n && !wild(o->instances.v[i], name, len); i++)
            ;
        if (i == o->instances.n)
            return 0;
    }
    return 1;
}

size_t sel_counters(const dump_opts *o, const pcw_counterset *cs, unsigned char *shown)
{
    size_t n = 0;
    for (uint32_t i = 0; i < cs->counter_count; i++) {
        const pcw_counter *c = &cs->counters[i];
        int on = !o->counters.n;
        for (size_t k = 0; !on && k < o->counters.n; k++) {
            const char *t = o->counters.v[k];
            unsigned long long id;
            on = pcw__name_equal(t, strlen(t), c->name, strlen(c->name)) ||
                 (all_digits(t, &id) && id == c->id);
        }
        shown[i] = (unsigned char)on;
        n += (size_t)on;
    }
    return n;
}

/* Does any counterset of these segments match -c's value f? */
static int cset_matched(const char *f, pcw_segment *const *segs, size_t nsegs)
{
    for (size_t i = 0; i < nsegs; i++)
        for (size_t k = 0; segs[i] && k < pcw_segment_counterset_count(segs[i]); k++) {
            const pcw_counterset *cs = pcw_segment_counterset(segs[i], k);
            if (cs && wild(f, cs->name, strlen(cs->name)))
                return 1;
        }
    return 0;
}

void sel_explain_unmatched(const dump_opts *o, pcw_segment *const *segs, size_t nsegs, FILE *err)
{
    for (size_t f = 0; f < o->csets.n; f++) {
        const char *want = o->csets.v[f];
        if (strpbrk(want, "*?") || cset_matched(want, segs, nsegs))
            continue; /* a pattern is not a typo of one name */
        suggest sg;
        suggest_init(&sg, want);
        for (size_t i = 0; i < nsegs; i++)
            for (size_t k = 0; segs[i] && k < pcw_segment_counterset_count(segs[i]); k++) {
                const pcw_counterset *cs = pcw_segment_counterset(segs[i], k);
                if (cs)
                    suggest_add(&sg, cs->name);
            }
        if (!sg.n)
            continue;
        fputs("pcwdump: -c \"", err);
        esc_put(err, want, strlen(want), 0);
        fputs("\": ", err);
        suggest_print(err, &sg);
        fputc('\n', err);
    }
    for (size_t f = 0; f < o->counters.n; f++) {
        const char *want = o->counters.v[f];
        unsigned long long id;
        if (all_digits(want, &id) || strpbrk(want, "*?"))
            continue;
        int found = 0;
        suggest sg;
        suggest_init(&sg, want);
        for (size_t i = 0; i < nsegs && !found; i++)
            for (size_t k = 0; segs[i] && k < pcw_segment_counterset_count(segs[i]); k++) {
                const pcw_counterset *cs = pcw_segment_counterset(segs[i], k);
                if (!cs || !sel_cset(o, cs))
                    continue;
                for (uint32_t c = 0; c < cs->counter_count; c++) {
                    const char *name = cs->counters[c].name;
                    if (pcw__name_equal(want, strlen(want), name, strlen(name)))
                        found = 1;
                    suggest_add(&sg, name);
                }
            }
        if (found)
            continue;
        if (!sg.n)
            continue;
        fputs("pcwdump: --counters \"", err);
        esc_put(err, want, strlen(want), 0);
        fputs("\": ", err);
        suggest_print(err, &sg);
        fputc('\n', err);
    }
}
