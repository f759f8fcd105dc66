/* SPDX-License-Identifier: MIT */
/*
 * check.c - checks that need a whole counterSet (or the whole manifest):
 * duplicate ids and names, base counters, id references, struct/field
 * consistency, identifier collisions in the generated header.
 *
 * Everything pcw_register() would refuse is refused here first, with the
 * manifest line, so a generated header registers or fails only for runtime
 * reasons (memory, segment full).
 */
#include <string.h>

#include "common/name.h"
#include <pcw/types.h>

#include "internal.h"

static int same_name(const char *a, const char *b)
{
    /* pcw's own folding: the generator and pcw_register agree. */
    return pcw__name_equal(a, strlen(a), b, strlen(b));
}

static const mf_counter *find_id(const mf_counterset *s, unsigned long id)
{
    for (size_t i = 0; i < s->ncounters; i++)
        if (s->counters[i].id == id)
            return &s->counters[i];
    return NULL;
}

/* Resolve one id reference attribute (baseID and friends). */
static int resolve_ref(const mf_counterset *s, const mf_counter *k, const char *attr, int has,
                       unsigned long v, uint32_t *out, mf_error *err)
{
    if (!has)
        return 0;
    if (!find_id(s, v)) {
        mf_set_error(err, k->line,
                     "counter \"%s\": %s=\"%lu\" names no counter in counterSet \"%s\"", k->name,
                     attr, v, s->name);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int is_precision(uint32_t t)
{
    return t == PERF_PRECISION_SYSTEM_TIMER || t == PERF_PRECISION_100NS_TIMER ||
           t == PERF_PRECISION_OBJECT_TIMER;
}

static int check_structs(mf_counterset *s, mf_error *err)
{
    for (size_t i = 0; i < s->nstructs; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->structs[i].name, s->structs[j].name) == 0) {
                mf_set_error(err, s->structs[i].line, "struct \"%s\" is declared twice",
                             s->structs[i].name);
                return -1;
            }
    int kernel = s->nstructs > 0;
    for (size_t i = 0; i < s->ncounters; i++)
        kernel = kernel || s->counters[i].struct_name || s->counters[i].field;
    s->kernel_style = kernel;
    if (!kernel)
        return 0;
    for (size_t i = 0; i < s->ncounters; i++) {
        mf_counter *k = &s->counters[i];
        if (k->field && !k->struct_name) {
            /* CTRPP takes the only struct when there is one (xdp-for-windows'
             * xdppcw.man relies on it); with several, which one is meant
             * cannot be guessed. */
            if (s->nstructs == 1) {
                k->struct_name = s->structs[0].name;
            } else if (s->nstructs == 0) {
                mf_set_error(err, k->line,
                             "counter \"%s\" has field=\"%s\" but no struct attribute, and "
                             "counterSet \"%s\" declares no <structs>",
                             k->name, k->field, s->name);
                return -1;
            } else {
                mf_set_error(err, k->line,
                             "counter \"%s\" has field=\"%s\" but no struct attribute; counterSet "
                             "\"%s\" declares %zu structs, so struct= is needed to say which",
                             k->name, k->field, s->name, s->nstructs);
                return -1;
            }
        }
        if (k->struct_name && !k->field) {
            mf_set_error(err, k->line, "counter \"%s\" has struct=\"%s\" but no field attribute",
                         k->name, k->struct_name);
            return -1;
        }
        if (!k->struct_name) {
            /* Mixing styles would need a block pcwgen cannot lay out next
             * to the provider's own structs. */
            mf_set_error(err, k->line,
                         "counter \"%s\" has no struct/field, but other counters of counterSet "
                         "\"%s\" do (give every counter of a kernel-style set struct and field)",
                         k->name, s->name);
            return -1;
        }
        size_t b = 0;
        while (b < s->nstructs && strcmp(s->structs[b].name, k->struct_name) != 0)
            b++;
        if (b == s->nstructs) {
            mf_set_error(err, k->line,
                         "counter \"%s\" names struct \"%s\", which <structs> of counterSet \"%s\" "
                         "does not declare",
                         k->name, k->struct_name, s->name);
            return -1;
        }
        k->block = (int)b;
        for (size_t j = 0; j < i; j++)
            if (s->counters[j].block == k->block && strcmp(s->counters[j].field, k->field) == 0) {
                mf_set_error(err, k->line,
                             "counter \"%s\" uses field %s.%s, as counter \"%s\" does", k->name,
                             k->struct_name, k->field, s->counters[j].name);
                return -1;
            }
    }
    return 0;
}

/* What the header names after P<Set>_<counter ident> (emit.c): every
 * counter its _ID macro; a histogram also its type (PCW_HISTOGRAM_TYPE
 * makes _hist, _hist_shape, _hist_observe, _hist_observe_atomic) and the
 * block's observers _observe, _observe_atomic. */
static const char *const id_suffixes[] = {"_ID"};
static const char *const hist_suffixes[] = {
    "_ID",      "_hist",           "_hist_shape", "_hist_observe", "_hist_observe_atomic",
    "_observe", "_observe_atomic",
};

static size_t suffixes(const mf_counter *k, const char *const **out)
{
    *out = k->histogram ? hist_suffixes : id_suffixes;
    return k->histogram ? sizeof hist_suffixes / sizeof *hist_suffixes : 1;
}

/* Do counters a and b (different identifiers) make the same name? Only if
 * one identifier starts the other, so most pairs cost one comparison. */
static const char *same_generated_name(const mf_counter *a, const mf_counter *b)
{
    size_t la = strlen(a->ident), lb = strlen(b->ident);
    if (strncmp(a->ident, b->ident, la < lb ? la : lb) != 0)
        return NULL;
    if (la > lb) {
        const mf_counter *t = a;
        a = b, b = t;
        size_t tl = la;
        la = lb, lb = tl;
    }
    /* a's identifier is a prefix of b's: a's name ident_a + sa equals b's
     * ident_b + sb when sa = (the rest of ident_b) + sb. */
    const char *rest = b->ident + la;
    const char *const *sa, *const *sb;
    size_t na = suffixes(a, &sa), nb = suffixes(b, &sb);
    size_t lr = strlen(rest);
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            if (strncmp(sa[i], rest, lr) == 0 && strcmp(sa[i] + lr, sb[j]) == 0)
                return sa[i];
    return NULL;
}

int mf_check_counterset(mf_manifest *m, mf_counterset *s, mf_error *err)
{
    (void)m;
    for (size_t i = 0; i < s->ncounters; i++) {
        const mf_counter *k = &s->counters[i];
        for (size_t j = 0; j < i; j++) {
            const mf_counter *o = &s->counters[j];
            if (o->id == k->id) {
                mf_set_error(err, k->line,
                             "duplicate counter id %u in counterSet \"%s\" (also counter \"%s\", "
                             "line %lu)",
                             k->id, s->name, o->name, o->line);
                return -1;
            }
            if (same_name(o->name, k->name)) {
                mf_set_error(err, k->line,
                             "duplicate counter name \"%s\" in counterSet \"%s\" (names compare "
                             "case-insensitively; see line %lu)",
                             k->name, s->name, o->line);
                return -1;
            }
            if (strcmp(o->ident, k->ident) == 0) {
                mf_set_error(err, k->line,
                             "counter \"%s\" and counter \"%s\" (line %lu) both get the C "
                             "identifier %s; give one a symbol attribute",
                             k->name, o->name, o->line, k->ident);
                return -1;
            }
            const char *suf;
            if ((k->histogram || o->histogram) && (suf = same_generated_name(k, o)) != NULL) {
                const mf_counter *x = strlen(k->ident) <= strlen(o->ident) ? k : o;
                mf_set_error(err, k->line,
                             "counter \"%s\" and counter \"%s\" (line %lu) both make the C "
                             "name %s_%s%s (after the prefix); give one a symbol attribute",
                             k->name, o->name, o->line, s->ident, x->ident, suf);
                return -1;
            }
        }
    }
    if (check_structs(s, err) != 0)
        return -1;

    for (size_t i = 0; i < s->ncounters; i++) {
        mf_counter *k = &s->counters[i];
        if (resolve_ref(s, k, "baseID", k->has_base_attr, k->base_attr_value, &k->base_id, err) ||
            resolve_ref(s, k, "perfTimeID", k->has_time_attr, k->time_attr_value, &k->perf_time_id,
                        err) ||
            resolve_ref(s, k, "perfFreqID", k->has_freq_attr, k->freq_attr_value, &k->perf_freq_id,
                        err) ||
            resolve_ref(s, k, "multiCounterID", k->has_multi_attr, k->multi_attr_value,
                        &k->multi_id, err))
            return -1;
        int needs = pcw_counter_type_needs_base(k->type);
        const mf_counter *next = i + 1 < s->ncounters ? &s->counters[i + 1] : NULL;
        if (k->has_base_attr) {
            const mf_counter *b = find_id(s, k->base_id);
            if (needs && !pcw_counter_type_is_base(b->type)) {
                mf_set_error(err, k->line,
                             "counter \"%s\" (%s): baseID=\"%u\" names counter \"%s\" of type %s, "
                             "which is not a base type",
                             k->name, k->type_name, k->base_id, b->name, b->type_name);
                return -1;
            }
        } else if (needs || is_precision(k->type)) {
            /* Windows takes the counter registered right after a fraction
             * or average as its denominator; say so explicitly so that
             * consumers need not know the rule. Precision timers may use
             * a following timestamp the same way, but need not. */
            if (next && pcw_counter_type_is_base(next->type)) {
                k->base_id = next->id;
                k->base_implicit = 1;
            } else if (needs) {
                mf_set_error(err, k->line,
                             "counter \"%s\" (%s) needs a base counter: add baseID, or put a "
                             "counter of a base type (e.g. perf_raw_base, perf_average_base) right "
                             "after it",
                             k->name, k->type_name);
                return -1;
            }
        }
    }
    return 0;
}

int mf_check_manifest(mf_manifest *m, mf_error *err)
{
    /* Countersets and providers become C names and pcw registrations
     * side by side; they must not collide anywhere in the manifest. */
    for (size_t p = 0; p < m->nproviders; p++) {
        const mf_provider *pv = &m->providers[p];
        for (size_t q = 0; q < p; q++) {
            const mf_provider *o = &m->providers[q];
            if (strcmp(pv->guid, o->guid) == 0 || same_name(pv->name, o->name) ||
                strcmp(pv->ident, o->ident) == 0) {
                mf_set_error(err, pv->line, "provider \"%s\" is declared twice (see line %lu)",
                             pv->name, o->line);
                return -1;
            }
        }
        for (size_t i = 0; i < pv->nsets; i++) {
            const mf_counterset *s = &pv->sets[i];
            for (size_t q = 0; q <= p; q++) {
                const mf_provider *po = &m->providers[q];
                for (size_t j = 0; j < (q == p ? i : po->nsets); j++) {
                    const mf_counterset *o = &po->sets[j];
                    const char *what = NULL;
                    if (same_name(s->name, o->name))
                        what = "name";
                    else if (strcmp(s->ident, o->ident) == 0)
                        what = "C identifier";
                    else if (strcmp(s->guid, o->guid) == 0)
                        what = "guid";
                    if (what) {
                        mf_set_error(err, s->line,
                                     "counterSet \"%s\" has the same %s as counterSet \"%s\" "
                                     "(line %lu)",
                                     s->name, what, o->name, o->line);
                        return -1;
                    }
                }
            }
        }
    }
    return 0;
}
