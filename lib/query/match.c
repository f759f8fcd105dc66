/* SPDX-License-Identifier: MIT */
/*
 * lib/query/match.c - what a counter handle selects in each counterset it
 * matches: the entries its instance pattern names and the columns its
 * counter pattern names (a histogram's statistics each a column).
 *
 * A counterset's entries are its visible totals (active ones, in creation
 * order) followed by its instances in value order; a globalAggregate or
 * instanceAggregate set shows only its totals. A handle's match in a set
 * keeps the entries its instance pattern selects, recomputed only when the
 * set's entries change (its epoch).
 */
#include <stdlib.h>
#include <string.h>

#include "container.h"
#include "hist_query.h"
#include "histogram.h"
#include "match.h"
#include "path.h"
#include "common/name.h"
#include "util.h"

/* Rebuild s->entries.ent if the set changed since. */
static int entries(pcw__q_set *s)
{
    if (s->entries.ent && s->entries.ent_epoch == s->epoch)
        return 0;
    size_t need = s->nagg + s->ins.norder + 1;
    if (pcw__q_grow((void **)&s->entries.ent, &s->entries.ent_cap, need, sizeof *s->entries.ent))
        return -1;
    size_t n = 0;
    for (size_t a = 0; a < s->nagg; a++)
        if (s->aggs[a].active)
            s->entries.ent[n++] = (uint32_t)a | PCW__Q_ENT_AGG;
    if (!s->it.global && !s->it.by_name)
        for (size_t o = 0; o < s->ins.norder; o++)
            s->entries.ent[n++] = s->ins.order[o];
    s->entries.nent = n;
    s->entries.ent_epoch = s->epoch;
    return 0;
}

size_t pcw__q_entry_count(const pcw__q_set *s)
{
    return s->entries.nent;
}

/* An entry's name (without #n) and #n. */
const char *pcw__q_entry_name(const pcw__q_set *s, uint32_t e, uint32_t *len, uint32_t *dup)
{
    if (e & PCW__Q_ENT_AGG) {
        const pcw__q_agg *a = &s->aggs[e & ~PCW__Q_ENT_AGG];
        *len = a->name_len, *dup = 0;
        return a->name;
    }
    const pcw__q_inst *x = &s->ins.inst[e];
    *len = x->name_len, *dup = x->dup;
    return x->name;
}

static int entry_matches(const pcw_path *p, const char *name, uint32_t len, uint32_t dup)
{
    if (!p->instance)
        return len == 0 && dup == 0;
    if (!pcw__q_instance_match(p->instance, name, len))
        return 0;
    if (p->has_index)
        return dup == p->index;
    return (p->wild & PCW_PATH_WILD_INSTANCE) ? 1 : dup == 0;
}

/* ---- entries by name ------------------------------------------------------ */

/* The key of a name (case-insensitively, as pcw__name_equal) with its #n:
 * a handle that names one instance selects exactly the entries of one key
 * (#n is the path's index, else 0), so the index needs no scan. */
static uint64_t ent_key(const char *name, uint32_t len, uint32_t dup)
{
    uint64_t k = pcw__name_hash(name, len) ^ ((uint64_t)dup * 0x9e3779b97f4a7c15ull);
    /* FNV-1a's low bits depend only on the low bits of the bytes (names
     * that differ in a digit cluster in a small table): mix the high bits
     * down (MurmurHash3's finaliser) before the table takes the low ones. */
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

/* Does p name one instance (no wildcard: its entries are one key's)? */
static int names_one(const pcw_path *p)
{
    return p->instance && !(p->wild & PCW_PATH_WILD_INSTANCE) && !strpbrk(p->instance, "*?");
}

/* (Re)build s's index of entries by key; 0 or -1 (out of memory). */
static int name_index(pcw_pdh *q, pcw__q_set *s)
{
    if (s->entries.nidx && s->entries.nidx_epoch == s->epoch)
        return 0;
    size_t cap = 16;
    while (cap < 2 * s->entries.nent + 2)
        cap <<= 1;
    if (cap != s->entries.nidx_cap) {
        uint32_t *v = realloc(s->entries.nidx, cap * sizeof *v);
        if (!v)
            return -1;
        s->entries.nidx = v, s->entries.nidx_cap = cap;
    }
    if (pcw__q_grow((void **)&s->entries.ent_key, &s->entries.ent_key_cap, s->entries.nent + 1,
                    sizeof *s->entries.ent_key))
        return -1;
    memset(s->entries.nidx, 0, cap * sizeof *s->entries.nidx);
    /* In entry order: entries of one key are then met in that order along
     * its probe sequence, so a lookup lists them as the scan did. */
    for (size_t e = 0; e < s->entries.nent; e++) {
        uint32_t len, dup;
        const char *name = pcw__q_entry_name(s, s->entries.ent[e], &len, &dup);
        uint64_t k = s->entries.ent_key[e] = ent_key(name, len, dup);
        size_t i = k & (cap - 1);
        while (s->entries.nidx[i])
            i = (i + 1) & (cap - 1);
        s->entries.nidx[i] = (uint32_t)e + 1;
    }
    q->entry_tests += s->entries.nent;
    s->entries.nidx_epoch = s->epoch;
    return 0;
}

/* The entries p (names_one) selects, into mt->ents (grown as they are
 * found: a handle per instance must not hold room for every entry).
 * 0 or -1 (out of memory). */
static int match_by_name(pcw_pdh *q, const pcw__q_set *s, const pcw_path *p, pcw__q_match *mt)
{
    uint32_t want_dup = p->has_index ? p->index : 0;
    uint64_t k = ent_key(p->instance, (uint32_t)strlen(p->instance), want_dup);
    for (size_t i = k & (s->entries.nidx_cap - 1); s->entries.nidx[i];
         i = (i + 1) & (s->entries.nidx_cap - 1)) {
        uint32_t e = s->entries.nidx[i] - 1, len, dup;
        q->entry_tests++;
        if (s->entries.ent_key[e] != k)
            continue;
        const char *name = pcw__q_entry_name(s, s->entries.ent[e], &len, &dup);
        if (!entry_matches(p, name, len, dup))
            continue;
        if (pcw__q_grow((void **)&mt->ents, &mt->ents_cap, mt->nents + 1, sizeof *mt->ents))
            return -1;
        mt->ents[mt->nents++] = e;
    }
    return 0;
}

/* How many columns counter k of s gives for pattern `c` at detail level
 * `level` (0: not selected), their statistics into st (pcw__q_hist_select).
 * Wildcards skip base counters (used, never shown), PERF_COUNTER_NODATA
 * and counters above the level (pcw_counter_in_wildcard). */
int pcw__q_counter_selected(const pcw__q_set *s, const pcw_path *p, uint32_t level, uint32_t k,
                            pcw_hist_stat *st)
{
    int wild = (p->wild & PCW_PATH_WILD_COUNTER) != 0;
    if (wild && !pcw_counter_in_wildcard(s->counter_types[k], s->detail[k], level))
        return 0;
    return pcw__q_hist_select(p->counter, wild, s->counter_names[k], s->counter_types[k], st, NULL);
}

/* Column names of a histogram's statistics: "Latency:p99". */
static void free_cnames(pcw__q_match *mt)
{
    if (mt->cname)
        for (uint32_t c = 0; c < mt->nctr; c++)
            free(mt->cname[c]);
}

static char *column_name(const char *counter, const pcw_hist_stat *st)
{
    char stat[32];
    pcw_hist_stat_name(st, stat, sizeof stat);
    size_t n = strlen(counter), m = strlen(stat);
    char *t = malloc(n + m + 2);
    if (t) {
        memcpy(t, counter, n);
        t[n] = ':';
        memcpy(t + n + 1, stat, m + 1);
    }
    return t;
}

/* mt's columns: every counter the path selects, a histogram's statistics
 * each a column. */
static int select_columns(pcw_pdh_counter *h, pcw__q_match *mt)
{
    pcw__q_set *s = mt->set;
    pcw_hist_stat st[PCW__Q_HIST_NDEFAULT];
    size_t n = 0, hist = 0;
    for (uint32_t k = 0; k < s->ncounters; k++) {
        int c = pcw__q_counter_selected(s, &h->path, h->detail, k, st);
        n += (size_t)c;
        hist |= c && st[0].kind;
    }
    free_cnames(mt);
    mt->nctr = 0;
    /* Exactly what was selected: a handle per counter (pcwstat's columns)
     * must not hold room for every counter of the set. */
    uint32_t *ctr = realloc(mt->ctr, (n ? n : 1) * sizeof *ctr);
    if (ctr)
        mt->ctr = ctr;
    pcw_hist_stat *hst = realloc(mt->hst, (n ? n : 1) * sizeof *hst);
    if (hst)
        mt->hst = hst;
    char **cname = calloc(n ? n : 1, sizeof *cname);
    free(mt->cname);
    mt->cname = cname;
    if (!ctr || !hst || !cname)
        return PCW_E_NO_MEMORY;
    if (hist && !h->hc && !(h->hc = calloc(1, sizeof *h->hc)))
        return PCW_E_NO_MEMORY;
    for (uint32_t k = 0; k < s->ncounters; k++) {
        int c = pcw__q_counter_selected(s, &h->path, h->detail, k, st);
        for (int i = 0; i < c; i++) {
            mt->ctr[mt->nctr] = k;
            mt->hst[mt->nctr] = st[i];
            if (st[i].kind && !(mt->cname[mt->nctr] = column_name(s->counter_names[k], &st[i])))
                return PCW_E_NO_MEMORY;
            mt->nctr++;
        }
    }
    return PCW_OK;
}

void pcw__q_match_free(pcw__q_match *mt)
{
    free_cnames(mt);
    free(mt->cname);
    free(mt->hst);
    free(mt->ctr);
    mt->cname = NULL, mt->hst = NULL, mt->ctr = NULL, mt->nctr = 0;
}

/* The entries of a path that names a container: its providers' instances
 * only (the query's aggregates, of every provider, are not). Without #n
 * an instance name selects every instance of that name in the container
 * (#n numbers the names of every provider the query sees, not the
 * container's). 0 or -1 (out of memory). */
static int container_entries(pcw_pdh_counter *h, const pcw__q_set *s, pcw__q_match *mt)
{
    const pcw_path *p = &h->path;
    if (pcw__q_grow((void **)&mt->ents, &mt->ents_cap, s->entries.nent + 1, sizeof *mt->ents))
        return -1;
    h->q->entry_tests += s->entries.nent;
    size_t hint = 0;
    for (size_t e = 0; e < s->entries.nent; e++) {
        uint32_t len, dup, x = s->entries.ent[e];
        if (x & PCW__Q_ENT_AGG)
            continue;
        const char *name = pcw__q_entry_name(s, x, &len, &dup);
        int named = p->instance && !p->has_index ? pcw__q_instance_match(p->instance, name, len)
                                                 : entry_matches(p, name, len, dup);
        if (named && pcw__q_in_container(h, s->ins.inst[x].provider_id, &hint))
            mt->ents[mt->nents++] = (uint32_t)e;
    }
    return 0;
}

/* Is a previously matched instance's provider still among s's live ones? */
static int provider_present(const pcw__q_set *s, uint64_t provider)
{
    int b = s->cur;
    for (size_t i = 0; i < s->nsrc[b]; i++)
        if (s->src[b][i].provider_id == provider)
            return s->src[b][i].alive;
    return 0;
}

int pcw__q_match_update(pcw_pdh_counter *h, pcw__q_match *mt)
{
    pcw__q_set *s = mt->set;
    if (entries(s))
        return PCW_E_NO_MEMORY;
    if (mt->epoch == s->epoch && mt->ctr)
        return PCW_OK;
    h->epoch++; /* what value i names may change: pcw_pdh_instance_epoch */
    /* Counters (they may differ after the set was registered again). */
    if (select_columns(h, mt) != PCW_OK)
        return PCW_E_NO_MEMORY;
    /* Entries. */
    const pcw_path *p = &h->path;
    mt->all = p->instance && strcmp(p->instance, "*") == 0 && !p->has_index &&
              (s->it.named || s->it.global) && !p->container;
    mt->nents = 0;
    if (p->container) {
        if (container_entries(h, s, mt))
            return PCW_E_NO_MEMORY;
    } else if (!mt->all) {
        if (names_one(p)) {
            if (name_index(h->q, s) || match_by_name(h->q, s, p, mt))
                return PCW_E_NO_MEMORY;
        } else {
            if (pcw__q_grow((void **)&mt->ents, &mt->ents_cap, s->entries.nent + 1,
                            sizeof *mt->ents))
                return PCW_E_NO_MEMORY;
            h->q->entry_tests += s->entries.nent;
            for (size_t e = 0; e < s->entries.nent; e++) {
                uint32_t len, dup;
                const char *name = pcw__q_entry_name(s, s->entries.ent[e], &len, &dup);
                if (entry_matches(p, name, len, dup))
                    mt->ents[mt->nents++] = (uint32_t)e;
            }
        }
    } else {
        mt->nents = s->entries.nent;
    }
    /* A named instance that is not there shows as one value saying why. */
    mt->placeholder = 0;
    if (!(p->wild & PCW_PATH_WILD_INSTANCE) && mt->nents == 0 && mt->nctr) {
        mt->placeholder = 1;
        mt->placeholder_status = mt->last_provider && !provider_present(s, mt->last_provider)
                                     ? PCW_CSTATUS_PROVIDER_GONE
                                     : PCW_CSTATUS_NO_INSTANCE;
        if (!s->m && mt->last_provider)
            mt->placeholder_status = PCW_CSTATUS_PROVIDER_GONE;
    } else if (mt->nents) {
        uint32_t e = s->entries.ent[mt->all ? 0 : mt->ents[0]];
        mt->last_provider = (e & PCW__Q_ENT_AGG) ? 0 : s->ins.inst[e].provider_id;
    }
    mt->epoch = s->epoch;
    return PCW_OK;
}
