/* SPDX-License-Identifier: MIT */
/*
 * lib/query/values.c - what a counter handle selects (entries x counters)
 * and its values: raw samples from the current and previous rows, cooked
 * with pcw_cook, and their paths.
 *
 * A counterset's entries are its visible totals (active ones, in creation
 * order) followed by its instances in value order; a globalAggregate or
 * instanceAggregate set shows only its totals. A handle's match in a set
 * keeps the entries its instance pattern selects, recomputed only when the
 * set's entries change (its epoch).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "../consumer/read_hook.h"
#include "internal.h"
#include "common/name.h"
#include "snaprows.h"

/* Rebuild s->ent if the set changed since. */
static int entries(pcwq_set *s)
{
    if (s->ent && s->ent_epoch == s->epoch)
        return 0;
    size_t need = s->nagg + s->norder + 1;
    if (pcwq_grow((void **)&s->ent, &s->ent_cap, need, sizeof *s->ent))
        return -1;
    size_t n = 0;
    for (size_t a = 0; a < s->nagg; a++)
        if (s->aggs[a].active)
            s->ent[n++] = (uint32_t)a | PCWQ_ENT_AGG;
    if (!s->it.global && !s->it.by_name)
        for (size_t o = 0; o < s->norder; o++)
            s->ent[n++] = s->order[o];
    s->nent = n;
    s->ent_epoch = s->epoch;
    return 0;
}

size_t pcwq_entry_count(const pcwq_set *s)
{
    return s->nent;
}

/* An entry's name (without #n) and #n. */
static const char *entry_name(const pcwq_set *s, uint32_t e, uint32_t *len, uint32_t *dup)
{
    if (e & PCWQ_ENT_AGG) {
        const pcwq_agg *a = &s->aggs[e & ~PCWQ_ENT_AGG];
        *len = a->name_len, *dup = 0;
        return a->name;
    }
    const pcwq_inst *x = &s->inst[e];
    *len = x->name_len, *dup = x->dup;
    return x->name;
}

static int entry_matches(const pcw_path *p, const char *name, uint32_t len, uint32_t dup)
{
    if (!p->instance)
        return len == 0 && dup == 0;
    if (!pcwq_instance_match(p->instance, name, len))
        return 0;
    if (p->has_index)
        return dup == p->index;
    return (p->wild & PCW_PATH_WILD_INSTANCE) ? 1 : dup == 0;
}

/* ---- entries by name ------------------------------------------------------ */

/* The key of a name (case-insensitively, as pcw_name_equal) with its #n:
 * a handle that names one instance selects exactly the entries of one key
 * (#n is the path's index, else 0), so the index needs no scan. */
static uint64_t ent_key(const char *name, uint32_t len, uint32_t dup)
{
    uint64_t k = pcw_name_hash(name, len) ^ ((uint64_t)dup * 0x9e3779b97f4a7c15ull);
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
static int name_index(pcw_pdh *q, pcwq_set *s)
{
    if (s->nidx && s->nidx_epoch == s->epoch)
        return 0;
    size_t cap = 16;
    while (cap < 2 * s->nent + 2)
        cap <<= 1;
    if (cap != s->nidx_cap) {
        uint32_t *v = realloc(s->nidx, cap * sizeof *v);
        if (!v)
            return -1;
        s->nidx = v, s->nidx_cap = cap;
    }
    if (pcwq_grow((void **)&s->ent_key, &s->ent_key_cap, s->nent + 1, sizeof *s->ent_key))
        return -1;
    memset(s->nidx, 0, cap * sizeof *s->nidx);
    /* In entry order: entries of one key are then met in that order along
     * its probe sequence, so a lookup lists them as the scan did. */
    for (size_t e = 0; e < s->nent; e++) {
        uint32_t len, dup;
        const char *name = entry_name(s, s->ent[e], &len, &dup);
        uint64_t k = s->ent_key[e] = ent_key(name, len, dup);
        size_t i = k & (cap - 1);
        while (s->nidx[i])
            i = (i + 1) & (cap - 1);
        s->nidx[i] = (uint32_t)e + 1;
    }
    q->entry_tests += s->nent;
    s->nidx_epoch = s->epoch;
    return 0;
}

/* The entries p (names_one) selects, into mt->ents (grown as they are
 * found: a handle per instance must not hold room for every entry).
 * 0 or -1 (out of memory). */
static int match_by_name(pcw_pdh *q, const pcwq_set *s, const pcw_path *p, pcwq_match *mt)
{
    uint32_t want_dup = p->has_index ? p->index : 0;
    uint64_t k = ent_key(p->instance, (uint32_t)strlen(p->instance), want_dup);
    for (size_t i = k & (s->nidx_cap - 1); s->nidx[i]; i = (i + 1) & (s->nidx_cap - 1)) {
        uint32_t e = s->nidx[i] - 1, len, dup;
        q->entry_tests++;
        if (s->ent_key[e] != k)
            continue;
        const char *name = entry_name(s, s->ent[e], &len, &dup);
        if (!entry_matches(p, name, len, dup))
            continue;
        if (pcwq_grow((void **)&mt->ents, &mt->ents_cap, mt->nents + 1, sizeof *mt->ents))
            return -1;
        mt->ents[mt->nents++] = e;
    }
    return 0;
}

/* How many columns counter k of s gives for pattern `c` at detail level
 * `level` (0: not selected), their statistics into st (pcwq_hist_select).
 * Wildcards skip base counters (used, never shown), PERF_COUNTER_NODATA
 * and counters above the level (pcw_counter_in_wildcard). */
int pcwq_counter_selected(const pcwq_set *s, const pcw_path *p, uint32_t level, uint32_t k,
                          pcw_hist_stat *st)
{
    int wild = (p->wild & PCW_PATH_WILD_COUNTER) != 0;
    if (wild && !pcw_counter_in_wildcard(s->counter_types[k], s->detail[k], level))
        return 0;
    return pcwq_hist_select(p->counter, wild, s->counter_names[k], s->counter_types[k], st, NULL);
}

/* Column names of a histogram's statistics: "Latency:p99". */
static void free_cnames(pcwq_match *mt)
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
static int select_columns(pcw_pdh_counter *h, pcwq_match *mt)
{
    pcwq_set *s = mt->set;
    pcw_hist_stat st[PCWQ_HIST_NDEFAULT];
    size_t n = 0, hist = 0;
    for (uint32_t k = 0; k < s->ncounters; k++) {
        int c = pcwq_counter_selected(s, &h->path, h->detail, k, st);
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
        int c = pcwq_counter_selected(s, &h->path, h->detail, k, st);
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

void pcwq_match_free(pcwq_match *mt)
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
static int container_entries(pcw_pdh_counter *h, const pcwq_set *s, pcwq_match *mt)
{
    const pcw_path *p = &h->path;
    if (pcwq_grow((void **)&mt->ents, &mt->ents_cap, s->nent + 1, sizeof *mt->ents))
        return -1;
    h->q->entry_tests += s->nent;
    size_t hint = 0;
    for (size_t e = 0; e < s->nent; e++) {
        uint32_t len, dup, x = s->ent[e];
        if (x & PCWQ_ENT_AGG)
            continue;
        const char *name = entry_name(s, x, &len, &dup);
        int named = p->instance && !p->has_index ? pcwq_instance_match(p->instance, name, len)
                                                 : entry_matches(p, name, len, dup);
        if (named && pcwq_in_container(h, s->inst[x].provider_id, &hint))
            mt->ents[mt->nents++] = (uint32_t)e;
    }
    return 0;
}

/* Is a previously matched instance's provider still among s's live ones? */
static int provider_present(const pcwq_set *s, uint64_t provider)
{
    int b = s->cur;
    for (size_t i = 0; i < s->nsrc[b]; i++)
        if (s->src[b][i].provider_id == provider)
            return s->src[b][i].alive;
    return 0;
}

int pcwq_match_update(pcw_pdh_counter *h, pcwq_match *mt)
{
    pcwq_set *s = mt->set;
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
            if (pcwq_grow((void **)&mt->ents, &mt->ents_cap, s->nent + 1, sizeof *mt->ents))
                return PCW_E_NO_MEMORY;
            h->q->entry_tests += s->nent;
            for (size_t e = 0; e < s->nent; e++) {
                uint32_t len, dup;
                const char *name = entry_name(s, s->ent[e], &len, &dup);
                if (entry_matches(p, name, len, dup))
                    mt->ents[mt->nents++] = (uint32_t)e;
            }
        }
    } else {
        mt->nents = s->nent;
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
        uint32_t e = s->ent[mt->all ? 0 : mt->ents[0]];
        mt->last_provider = (e & PCWQ_ENT_AGG) ? 0 : s->inst[e].provider_id;
    }
    mt->epoch = s->epoch;
    return PCW_OK;
}

/* ---- locating value i ---------------------------------------------------- */

typedef struct locus {
    const pcwq_match *mt;
    size_t ent; /* index into the set's entries; SIZE_MAX: placeholder */
    uint32_t k; /* counter index in the set */
    uint32_t c; /* column in the match */
} locus;

static size_t match_values(const pcwq_match *mt)
{
    if (mt->placeholder)
        return mt->nctr;
    return mt->nents * mt->nctr;
}

static int locate(const pcw_pdh_counter *h, size_t i, locus *l)
{
    for (size_t j = 0; j < h->nm; j++) {
        const pcwq_match *mt = &h->m[j];
        size_t n = match_values(mt);
        if (i >= n) {
            i -= n;
            continue;
        }
        l->mt = mt;
        size_t e = i / mt->nctr;
        l->c = (uint32_t)(i % mt->nctr);
        l->k = mt->ctr[l->c];
        l->ent = mt->placeholder ? SIZE_MAX : (mt->all ? e : mt->ents[e]);
        return 0;
    }
    return -1;
}

uint64_t pcw_pdh_instance_epoch(const pcw_pdh_counter *ctr)
{
    return ctr ? ctr->epoch : 0;
}

size_t pcw_pdh_value_count(const pcw_pdh_counter *ctr)
{
    size_t n = 0;
    if (ctr)
        for (size_t j = 0; j < ctr->nm; j++)
            n += match_values(&ctr->m[j]);
    return n;
}

/* ---- raw samples of an entry --------------------------------------------- */

/* The status a total's raw sample has for counter k: its own, or that of
 * a counter its recipe reads. */
static int agg_status(const pcwq_set *s, const uint8_t *st, uint32_t k)
{
    const pcwq_recipe *r = &s->recipes[k];
    int32_t refs[5] = {(int32_t)k, r->base, r->multi, r->time, r->freq_ctr};
    for (int i = 0; i < 5; i++)
        if (refs[i] >= 0 && st[refs[i]] != PCW_CSTATUS_VALID)
            return st[refs[i]];
    return PCW_CSTATUS_VALID;
}

void pcwq_entry_rows(const pcwq_set *s, uint32_t e, pcwq_rows *w)
{
    int b = s->cur, pb = b ^ 1;
    memset(w, 0, sizeof *w);
    w->status = PCW_CSTATUS_VALID;
    if (e & PCWQ_ENT_AGG) {
        uint32_t a = e & ~PCWQ_ENT_AGG, nc = s->ncounters;
        w->lay.off = s->woff, w->lay.size = s->wsize;
        w->row = (const unsigned char *)(s->arow[b] + (size_t)a * nc);
        w->st = s->ast[b] + (size_t)a * nc;
        w->t = s->atime[b];
        /* (No previous row: a total's values are its members', computed
         * when it was collected - pcwq_tval.) */
        return;
    }
    const pcwq_inst *x = &s->inst[e];
    w->lay.off = s->off, w->lay.size = s->size;
    if (x->row < 0) {
        w->status = x->stale ? PCW_CSTATUS_PROVIDER_GONE : PCW_CSTATUS_NO_INSTANCE;
        return;
    }
    w->row = pcwq_row(pcwq_snap(s, b), (size_t)x->row);
    w->t = s->src[b][x->src].time_ns;
    int32_t prow = s->identity ? x->row : x->prev_row;
    int32_t psrc = s->identity ? x->src : x->prev_src;
    if (prow >= 0 && psrc >= 0 && s->two) {
        w->prow = pcwq_row(pcwq_snap(s, pb), (size_t)prow);
        w->pt = s->src[pb][psrc].time_ns;
    }
}

void pcwq_rows_raw(const pcwq_set *s, const pcwq_rows *w, uint32_t k, pcw_raw *now, pcw_raw *prev)
{
    const pcwq_recipe *r = &s->recipes[k];
    prev->status = PCW_CSTATUS_NO_INSTANCE;
    if (!w->row) {
        memset(now, 0, sizeof *now);
        now->status = w->status;
        return;
    }
    pcwq_raw_from_row(r, w->row, &w->lay, w->t, now);
    if (w->st && now->status == PCW_CSTATUS_VALID)
        now->status = agg_status(s, w->st, k);
    if (w->prow) {
        pcwq_raw_from_row(r, w->prow, &w->lay, w->pt, prev);
    }
}

static int32_t scale_of(const pcw_pdh_counter *h, const pcwq_set *s, uint32_t k)
{
    return h->scale_set ? h->scale : s->default_scale[k];
}

/* Counter k of entry e (its rows w): *now its raw sample, *v its value
 * with h's scale and `flags`; returns the status. An instance's value is
 * pcw_cook's of its two samples; a total's was computed from its members'
 * when it was collected (totals.c) and is finished here. */
static int cook_one(const pcw_pdh_counter *h, const pcwq_set *s, const pcwq_rows *w, uint32_t e,
                    uint32_t k, const pcw_hist_stat *hs, unsigned flags, pcw_raw *now, double *v)
{
    pcw_raw prev;
    if (hs && hs->kind) {
        memset(now, 0, sizeof *now);
        now->status = w->row ? PCW_CSTATUS_VALID : w->status;
        now->time_ns = w->t;
        return pcwq_hist_value(h, s, e, k, hs, flags, v);
    }
    pcwq_rows_raw(s, w, k, now, &prev);
    if (!(e & PCWQ_ENT_AGG))
        return pcw_cook(s->counter_types[k], now, prev.status == PCW_CSTATUS_VALID ? &prev : NULL,
                        scale_of(h, s, k), flags, v);
    const pcwq_tval *t = &s->tval[(size_t)(e & ~PCWQ_ENT_AGG) * s->ncounters + k];
    *v = 0.0;
    if (flags & PCW_FMT_RAW) {
        if (t->raw_status == PCW_CSTATUS_VALID)
            *v = t->raw;
        return t->raw_status;
    }
    if (t->status != PCW_CSTATUS_VALID)
        return t->status;
    return pcwq_finish(s->counter_types[k], t->v, scale_of(h, s, k), flags, v);
}

int pcw_pdh_get_value(const pcw_pdh_counter *ctr, size_t i, unsigned flags, pcw_pdh_value *out)
{
    locus l;
    if (!ctr || !out || locate(ctr, i, &l))
        return PCW_E_INVALID_PARAMETER;
    const pcwq_set *s = l.mt->set;
    memset(out, 0, sizeof *out);
    out->counterset = s->name;
    out->counter = l.mt->cname[l.c] ? l.mt->cname[l.c] : s->counter_names[l.k];
    out->counter_index = l.k;
    out->counter_type = s->counter_types[l.k];
    out->instance_id = PCW_ANY_INSTANCE_ID;
    if (l.ent == SIZE_MAX) {
        out->status = l.mt->placeholder_status;
        out->raw.status = out->status;
        out->instance = out->instance_name = ctr->path.instance ? ctr->path.instance : "";
        out->dup_index = ctr->path.index;
        return PCW_OK;
    }
    uint32_t e = s->ent[l.ent];
    pcwq_rows w;
    pcwq_entry_rows(s, e, &w);
    out->status = cook_one(ctr, s, &w, e, l.k, &l.mt->hst[l.c], flags, &out->raw, &out->value);

    if (e & PCWQ_ENT_AGG) {
        const pcwq_agg *a = &s->aggs[e & ~PCWQ_ENT_AGG];
        out->instance = out->instance_name = a->name;
        out->kind = a->kind;
        out->sources = a->sources;
    } else {
        const pcwq_inst *x = &s->inst[e];
        out->instance = x->disp;
        out->instance_name = x->name;
        out->dup_index = x->dup;
        out->instance_id = x->id;
        out->pid = x->pid;
        out->provider_id = x->provider_id;
        out->kind = PCW_PDH_INSTANCE;
        out->sources = 1;
    }
    return PCW_OK;
}

size_t pcw_pdh_value_path(const pcw_pdh_counter *ctr, size_t i, int with_host, char *buf,
                          size_t len)
{
    locus l;
    if (!ctr || locate(ctr, i, &l)) {
        if (len && buf)
            buf[0] = 0;
        return 0;
    }
    const pcwq_set *s = l.mt->set;
    /* A container's value keeps the container its path named: the path
     * read back selects the same value. */
    const char *host = ctr->path.container ? ctr->path.container
                       : with_host         ? pcw_path_local_host()
                                           : NULL;
    const char *inst = NULL;
    uint32_t dup = 0;
    if (l.ent == SIZE_MAX) {
        inst = ctr->path.instance;
        dup = ctr->path.index;
    } else {
        uint32_t e = s->ent[l.ent], nlen;
        inst = entry_name(s, e, &nlen, &dup);
    }
    /* A set without instance names writes its first instance without
     * parentheses and the others as (#n). */
    if (!s->it.named && inst && !inst[0] && dup == 0)
        inst = NULL;
    return pcw_path_build(buf, len, host, s->name, inst, dup,
                          l.mt->cname[l.c] ? l.mt->cname[l.c] : s->counter_names[l.k]);
}

/* ---- the fast way -------------------------------------------------------- */

static const pcwq_match *single(const pcw_pdh_counter *ctr)
{
    return ctr && ctr->nm == 1 ? &ctr->m[0] : NULL;
}

size_t pcw_pdh_instance_count(const pcw_pdh_counter *ctr)
{
    const pcwq_match *mt = single(ctr);
    if (!mt)
        return 0;
    return mt->placeholder ? 1 : mt->nents;
}

size_t pcw_pdh_selected_counter_count(const pcw_pdh_counter *ctr)
{
    const pcwq_match *mt = single(ctr);
    return mt ? mt->nctr : 0;
}

/* ---- cooking a whole handle fast ------------------------------------------
 *
 * pcw_pdh_cook_all and pcw_pdh_visit walk a handle's values instance by
 * instance (each instance's row is read from memory once) into a "sink":
 * the caller's whole arrays, or one instance's values at a time handed to a
 * callback (nothing materialised: the cheapest way to consume everything).
 *
 * In steady state (every instance kept its row: identity) the instances of
 * a set are its snapshot's rows in order, provider by provider, and the
 * previous sample's rows sit at the same indexes. The two commonest
 * families then take a short path per value that computes exactly what
 * pcw_cook computes, in the same order of operations, so the results are
 * identical: instantaneous values (X, times the scale) and rates over the
 * system time ((X1 - X0) / ((Y1 - Y0) / TB)). Anything else, or a value
 * that needs a status (a reset, a zero interval), goes through pcw_cook.
 */

typedef struct sink {
    double *values;                                  /* cook_all: the whole arrays */
    uint8_t *status;                                 /* (may be NULL) */
    int (*fn)(const pcw_pdh_row *row, void *arg);    /* visit */
    int (*fnb)(const pcw_pdh_rows *rows, void *arg); /* visit_rows */
    void *arg;
    double *rv; /* visit: one instance's values; visit_rows: the block */
    uint8_t *rs;
    size_t at;      /* values so far */
    int stop;       /* the callback asked to stop */
    size_t bcap;    /* visit_rows: the block's room, in values */
    size_t fill;    /* visit_rows: values in the block */
    size_t rows;    /* visit_rows: instances in the block */
    uint32_t width; /* visit_rows: values per instance in the block */
    size_t valid;   /* visit_rows: statuses [0, valid) of the block are
                       VALID from an earlier block (not written again) */
    size_t calls;   /* visit_rows: blocks handed over */
} sink;

/* visit_rows: hand the block's instances over, and start an empty one. */
static int sink_flush(sink *k)
{
    if (k->rows && !k->stop) {
        pcw_pdh_rows b = {k->at - k->fill, k->rows, k->width, k->rv, k->rs};
        k->calls++;
        k->stop = k->fnb(&b, k->arg) != 0;
    }
    k->fill = k->rows = 0;
    return k->stop;
}

/* Where the next instance's n values go: the caller's arrays, the row
 * buffer, or the block (handed over first if they would not fit, or if
 * its instances have another number of values). */
static inline double *sink_values(sink *k, uint32_t n)
{
    if (k->fnb) {
        if (k->fill + n > k->bcap || (k->rows && k->width != n))
            sink_flush(k);
        k->width = n;
        return k->rv + k->fill;
    }
    return k->fn ? k->rv : k->values + k->at;
}

/* The statuses of those values (after sink_values). */
static inline uint8_t *sink_status(sink *k)
{
    if (k->fnb) {
        if (k->valid > k->fill)
            k->valid = k->fill; /* the caller writes statuses from here */
        return k->rs + k->fill;
    }
    return k->fn ? k->rs : k->status ? k->status + k->at : NULL;
}

/* One instance's n values are written: hand them over (visit), or count
 * them into the block (visit_rows). */
static inline int sink_row(sink *k, uint32_t n)
{
    if (k->fnb) {
        k->fill += n, k->rows++;
    } else if (k->fn) {
        pcw_pdh_row row = {k->at, n, k->rv, k->rs};
        k->stop = k->fn(&row, k->arg);
    }
    k->at += n;
    return k->stop;
}

enum { K_GENERIC, K_RAW, K_RATE };

typedef struct kernel {
    uint8_t kind, size;
    uint32_t k, off;
    const pcw_hist_stat *hs; /* a histogram's statistic, else NULL */
    double scale;            /* 10^scale, or 1 */
    int scaled, x1000;
} kernel;

static void kernel_of(const pcw_pdh_counter *h, const pcwq_set *s, uint32_t k,
                      const pcw_hist_stat *hs, unsigned flags, kernel *kn)
{
    const pcwq_recipe *r = &s->recipes[k];
    int32_t sc = scale_of(h, s, k);
    kn->k = k;
    kn->hs = hs->kind ? hs : NULL;
    kn->off = s->off[k];
    kn->size = s->size[k];
    kn->scaled = !(flags & PCW_FMT_NOSCALE) && sc != 0;
    kn->scale = kn->scaled ? pcwq_pow10(sc) : 1.0;
    kn->x1000 = (flags & PCW_FMT_1000) != 0;
    kn->kind = K_GENERIC;
    if (r->status != PCW_CSTATUS_VALID)
        return;
    if (flags & PCW_FMT_RAW) { /* X as it is, for every type with a value */
        kn->scaled = kn->x1000 = 0;
        kn->scale = 1.0;
        if (r->formula != PCWQ_F_NONE)
            kn->kind = K_RAW;
        return;
    }
    if ((r->type & 0xF0000000u) == PCW_PERF_DISPLAY_PERCENT)
        return;
    if (r->formula == PCWQ_F_RAW)
        kn->kind = K_RAW;
    else if (r->formula == PCWQ_F_RATE && r->second == PCWQ_Y_SYSTIME && r->freq_ctr < 0)
        kn->kind = K_RATE;
}

static inline uint64_t load_at(const unsigned char *row, uint32_t off, uint8_t size)
{
    if (size == 8)
        return *(const uint64_t *)(const void *)(row + off);
    return *(const uint32_t *)(const void *)(row + off);
}

/* pcw_cook's finish() for a non-percentage: scale, x1000, finiteness. */
static inline int finish_fast(const kernel *kn, double v, double *out)
{
    if (kn->scaled)
        v *= kn->scale;
    if (kn->x1000)
        v *= 1000.0;
    if (!isfinite(v)) {
        *out = 0;
        return PCW_CSTATUS_OVERFLOW;
    }
    *out = v;
    return PCW_CSTATUS_VALID;
}

/* Entry e's counters cols[0..nc), the general way. */
static int cook_entry(const pcw_pdh_counter *h, const pcwq_set *s, const uint32_t *cols,
                      const pcw_hist_stat *hs, uint32_t nc, uint32_t e, unsigned flags, sink *k)
{
    pcwq_rows w;
    pcwq_entry_rows(s, e, &w);
    double *v = sink_values(k, nc);
    uint8_t *st = sink_status(k);
    for (uint32_t c = 0; c < nc; c++) {
        pcw_raw now;
        int r = cook_one(h, s, &w, e, cols[c], &hs[c], flags, &now, &v[c]);
        if (st)
            st[c] = (uint8_t)r;
    }
    return sink_row(k, nc);
}

/* ---- plain 8-byte values, side by side --------------------------------
 *
 * The commonest set of all: every selected counter an instantaneous 8-byte
 * value without scaling, the counters one contiguous run of the row (a
 * struct of uint64_t). Cooking is then converting, every status VALID, and
 * the loop is the whole cost: it has no dispatch per value, converts four
 * values per vector operation (AVX2 where the CPU has it, else two per SSE2
 * operation, x86-64's baseline; GCC's generic vectors elsewhere) and keeps
 * everything it needs in registers.
 *
 * The conversion: for x < 2^52, the double whose bits are 2^52's exponent
 * with x as mantissa is exactly 2^52 + x, and minus 2^52 it is x - exactly
 * (double)x. A row with a value of 2^52 or more (the OR of its values says
 * so) is converted again one value at a time by the C conversion, so every
 * result is bit for bit pcw_cook's.
 */

typedef uint64_t pcwq_u64x4 __attribute__((vector_size(32)));
typedef double pcwq_f64x4 __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) void convert_row(double *v, const uint64_t *x,
                                                              size_t n)
{
    const pcwq_u64x4 exp52 = {0x4330000000000000ull, 0x4330000000000000ull, 0x4330000000000000ull,
                              0x4330000000000000ull};
    const pcwq_f64x4 two52 = {4503599627370496.0, 4503599627370496.0, 4503599627370496.0,
                              4503599627370496.0};
    pcwq_u64x4 acc = {0, 0, 0, 0};
    size_t c = 0;
    for (; c + 4 <= n; c += 4) {
        pcwq_u64x4 a;
        memcpy(&a, x + c, sizeof a); /* rows are 8-byte aligned, not 32 */
        acc |= a;
        pcwq_f64x4 d = (pcwq_f64x4)(a | exp52) - two52;
        memcpy(v + c, &d, sizeof d);
    }
    uint64_t any = acc[0] | acc[1] | acc[2] | acc[3];
    for (; c < n; c++) {
        uint64_t bits = x[c] | 0x4330000000000000ull;
        double d;
        memcpy(&d, &bits, sizeof d);
        v[c] = d - 4503599627370496.0;
        any |= x[c];
    }
    if (any >> 52)
        for (c = 0; c < n; c++)
            v[c] = (double)x[c];
}

/* visit_rows' block, in values: 128 instances of 16 counters, 16 KB of
 * values and 2 KB of statuses, which stay in the L1 cache between the
 * conversion and the callback. */
#define PCWQ_BLOCK_VALUES 2048u

/* Values converted at a time when rows lie back to back (cook_all). */
#define FLAT_VALUES 4096u

#if defined(__x86_64__) && defined(__GNUC__)
#define PCWQ_STREAM 1
/* cook_all's output from 1 MB on (more than a core's L2 holds) is written
 * with streaming stores: it cannot stay in the caches anyway, and they
 * spare reading each line in before writing it (measured: the collection
 * of 100,000 x 16 into a 12.8 MB array 20 % faster). Blocks of 1,024
 * values are converted as convert_row does, and again by the C conversion
 * if one was 2^52 or more. */
#define STREAM_VALUES (128u * 1024u)

__attribute__((target("avx2"))) static void flat_stream(double *v, const uint64_t *x, size_t n)
{
    const __m256i exp52 = _mm256_set1_epi64x(0x4330000000000000ll);
    const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
    size_t i = 0;
    for (; i < n && ((uintptr_t)(v + i) & 31); i++)
        v[i] = (double)x[i];
    while (i + 4 <= n) {
        size_t end = n - i > 1024 ? i + 1024 : n - (n - i) % 4;
        __m256i acc = _mm256_setzero_si256();
        for (size_t j = i; j < end; j += 4) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(x + j));
            acc = _mm256_or_si256(acc, a);
            _mm256_stream_pd(v + j,
                             _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a, exp52)), two52));
        }
        if (!_mm256_testz_si256(acc, _mm256_set1_epi64x((long long)0xFFF0000000000000ull)))
            for (size_t j = i; j < end; j++)
                v[j] = (double)x[j];
        i = end;
    }
    for (; i < n; i++)
        v[i] = (double)x[i];
    _mm_sfence(); /* the streaming stores are done before the caller reads */
}
#endif

/* The rows of cur from `x` (the first row's first counter), `stride` bytes
 * apart, nc values each, into the sink. visit converts a row and hands it
 * over at once: the callback's work (at least a dependent chain through
 * memory per row) overlaps the next row's loads. (Converting 32 rows at a
 * time and prefetching the next 32 during their callbacks measured the
 * same.) cook_all, when the selected counters are the whole row (stride
 * 8 x nc), converts the rows as one flat array. */
static inline __attribute__((always_inline)) void
contig_body(const unsigned char *x, size_t nrows, size_t stride, uint32_t nc, sink *k, int stream)
{
    if (k->fn) {
        int (*fn)(const pcw_pdh_row *, void *) = k->fn;
        void *arg = k->arg;
        double *v = k->rv;
        const uint8_t *st = k->rs;
        size_t at = k->at;
        for (size_t r = 0; r < nrows; r++, x += stride) {
            convert_row(v, (const uint64_t *)(const void *)x, nc);
            pcw_pdh_row row = {at, nc, v, st};
            at += nc;
            if (fn(&row, arg)) {
                k->stop = 1;
                break;
            }
        }
        k->at = at;
        return;
    }
    if (k->fnb) {
        /* visit_rows: as many rows as the block holds, converted as one
         * array when they lie back to back, then handed over together. */
        size_t r = 0;
        while (r < nrows && !k->stop) {
            double *v = sink_values(k, nc);
            size_t room = (k->bcap - k->fill) / nc, m = nrows - r < room ? nrows - r : room;
            if (stride == 8 * (size_t)nc)
                convert_row(v, (const uint64_t *)(const void *)(x + r * stride), m * nc);
            else
                for (size_t j = 0; j < m; j++)
                    convert_row(v + j * nc, (const uint64_t *)(const void *)(x + (r + j) * stride),
                                nc);
            /* The statuses, all VALID: not written again where an earlier
             * block of this walk left VALID ones (k->valid). */
            size_t end = k->fill + m * nc, from = k->fill > k->valid ? k->fill : k->valid;
            if (end > from)
                memset(k->rs + from, PCW_CSTATUS_VALID, end - from);
            if (k->fill <= k->valid && end > k->valid)
                k->valid = end;
            k->fill = end, k->rows += m, k->at += m * nc;
            r += m;
        }
        return;
    }
    double *v = k->values + k->at;
    if (stride == 8 * (size_t)nc) {
#ifdef PCWQ_STREAM
        if (stream && nrows * nc >= STREAM_VALUES) {
            flat_stream(v, (const uint64_t *)(const void *)x, nrows * nc);
            k->at += nrows * nc;
            return;
        }
#endif
        for (size_t i = 0, n = nrows * nc; i < n; i += FLAT_VALUES) {
            size_t m = n - i < FLAT_VALUES ? n - i : FLAT_VALUES;
            convert_row(v + i, (const uint64_t *)(const void *)x + i, m);
        }
    } else {
        for (size_t r = 0; r < nrows; r++, x += stride, v += nc)
            convert_row(v, (const uint64_t *)(const void *)x, nc);
    }
    k->at += nrows * nc;
}

static void contig_generic(const unsigned char *x, size_t nrows, size_t stride, uint32_t nc,
                           sink *k)
{
    contig_body(x, nrows, stride, nc, k, 0);
}

#if defined(__x86_64__) && defined(__GNUC__)
#define PCWQ_HAVE_AVX2 1
/* visit's loop, written out for AVX2: a row's check for values of 2^52
 * or more is one vptest, and what stays live across the callback fits in
 * the callee-saved registers. Computes what contig_body does. */
__attribute__((target("avx2"))) static void visit_avx2(const unsigned char *x, size_t nrows,
                                                       size_t stride, uint32_t nc, sink *k)
{
    int (*fn)(const pcw_pdh_row *, void *) = k->fn;
    void *arg = k->arg;
    double *v = k->rv;
    const uint8_t *st = k->rs;
    size_t at = k->at;
    const uint32_t n4 = nc & ~3u;
    const unsigned char *end = x + nrows * stride;
    for (; x != end; x += stride) {
        const uint64_t *p = (const uint64_t *)(const void *)x;
        const __m256i exp52 = _mm256_set1_epi64x(0x4330000000000000ll);
        const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
        __m256i acc = _mm256_setzero_si256();
        uint32_t c = 0;
        for (; c < n4; c += 4) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + c));
            acc = _mm256_or_si256(acc, a);
            _mm256_storeu_pd(v + c,
                             _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a, exp52)), two52));
        }
        int big = !_mm256_testz_si256(acc, _mm256_set1_epi64x((long long)0xFFF0000000000000ull));
        for (; c < nc; c++) {
            v[c] = (double)p[c];
            big |= p[c] >> 52 != 0;
        }
        if (__builtin_expect(big, 0))
            for (c = 0; c < n4; c++)
                v[c] = (double)p[c];
        pcw_pdh_row row = {at, nc, v, st};
        at += nc;
        if (fn(&row, arg)) {
            k->stop = 1;
            break;
        }
    }
    k->at = at;
}

/* Whether to take the AVX2 loops: the CPU has AVX2 and $PCW_NO_AVX2
 * is unset (the tests run the baseline loops with it). Decided once per
 * process; a race between two first callers computes the same answer. */
static int use_avx2(void)
{
    static _Atomic int decided; /* 0: not yet; 1: no; 2: yes */
    int d = atomic_load_explicit(&decided, memory_order_relaxed);
    if (!d) {
        d = __builtin_cpu_supports("avx2") && !getenv("PCW_NO_AVX2") ? 2 : 1;
        atomic_store_explicit(&decided, d, memory_order_relaxed);
    }
    return d == 2;
}

__attribute__((target("avx2"))) static void contig_avx2(const unsigned char *x, size_t nrows,
                                                        size_t stride, uint32_t nc, sink *k)
{
    if (k->fn)
        visit_avx2(x, nrows, stride, nc, k);
    else
        contig_body(x, nrows, stride, nc, k, 1);
}
#endif

/* Rows [from, to) of cur: nc plain 8-byte values from offset `off` on. */
static void cook_rows_contig(const pcw_snapshot *cur, size_t from, size_t to, uint32_t off,
                             uint32_t nc, sink *k)
{
    size_t n = to - from;
    if (!n)
        return;
    /* The statuses: all VALID (0), written once (the visit callback's
     * row.status is const), or in one stretch of the caller's array. */
    if (k->fn)
        memset(k->rs, PCW_CSTATUS_VALID, nc);
    else if (k->status)
        memset(k->status + k->at, PCW_CSTATUS_VALID, n * nc);
    const unsigned char *x = pcwq_row(cur, from) + off;
#ifdef PCWQ_HAVE_AVX2
    if (use_avx2()) {
        contig_avx2(x, n, cur->data_size, nc, k);
        return;
    }
#endif
    contig_generic(x, n, cur->data_size, nc, k);
}

/* The commonest case of all - instantaneous values, no scaling - is a
 * plain conversion of each value, every status VALID (0): PLAIN; and when
 * they are 8-byte values side by side (the usual struct of uint64_t), a
 * row converts as one array: PLAIN_CONTIG. */
enum { NOT_PLAIN, PLAIN, PLAIN_CONTIG };

static int kernels_plain(const kernel *kn, uint32_t nc)
{
    for (uint32_t c = 0; c < nc; c++)
        if (kn[c].kind != K_RAW || kn[c].scaled || kn[c].x1000)
            return NOT_PLAIN;
    for (uint32_t c = 0; c < nc; c++)
        if (kn[c].size != 8 || kn[c].off != kn[0].off + 8 * c)
            return PLAIN;
    return PLAIN_CONTIG;
}

/* The instances of s in steady state, row by row. */
static void cook_rows_fast(const pcw_pdh_counter *h, const pcwq_set *s, const kernel *kn,
                           uint32_t nc, unsigned flags, sink *k)
{
    int b = s->cur, pb = b ^ 1;
    const pcw_snapshot *cur = pcwq_snap(s, b), *prev = pcwq_snap(s, pb);
    int plain = kernels_plain(kn, nc);
    if (plain == PLAIN_CONTIG) {
        cook_rows_contig(cur, 0, cur->count, kn[0].off, nc, k);
        return;
    }
    if (plain) {
        for (size_t r = 0; r < cur->count && !k->stop; r++) {
            const unsigned char *row = pcwq_row(cur, r);
            double *v = sink_values(k, nc);
            uint8_t *st = sink_status(k);
            for (uint32_t c = 0; c < nc; c++)
                v[c] = (double)load_at(row, kn[c].off, kn[c].size);
            if (st)
                memset(st, PCW_CSTATUS_VALID, nc);
            sink_row(k, nc);
        }
        return;
    }
    for (size_t i = 0; i < s->nsrc[b] && !k->stop; i++) {
        const pcwq_src *x = &s->src[b][i];
        /* (Y1 - Y0) / TB for this provider's rows. */
        uint64_t t1 = x->time_ns, t0 = s->src[pb][i].time_ns;
        double dt = t1 > t0 ? (double)(t1 - t0) / (double)PCWQ_SYS_FREQ : 0.0;
        for (size_t r = x->first; r < x->first + x->count && !k->stop; r++) {
            const unsigned char *row = pcwq_row(cur, r), *prow = pcwq_row(prev, r);
            double *v = sink_values(k, nc);
            uint8_t *st = sink_status(k);
            for (uint32_t c = 0; c < nc; c++) {
                const kernel *q = &kn[c];
                int rs;
                if (q->kind == K_RAW) {
                    rs = finish_fast(q, (double)load_at(row, q->off, q->size), &v[c]);
                } else if (q->kind == K_RATE && dt > 0.0 &&
                           load_at(row, q->off, q->size) >= load_at(prow, q->off, q->size)) {
                    uint64_t x1 = load_at(row, q->off, q->size),
                             x0 = load_at(prow, q->off, q->size);
                    rs = finish_fast(q, (double)(x1 - x0) / dt, &v[c]);
                } else {
                    /* Anything else, or a status to tell: the general way. */
                    pcwq_rows w;
                    pcwq_entry_rows(s, s->order[r], &w);
                    pcw_raw now;
                    rs = cook_one(h, s, &w, s->order[r], q->k, q->hs, flags, &now, &v[c]);
                }
                if (st)
                    st[c] = (uint8_t)rs;
            }
            sink_row(k, nc);
        }
    }
}

/* Whether mt's instances, after its set's naggs totals, are the set's
 * snapshot rows in order (steady state: every instance kept its row), so
 * that nc of its counters can be cooked row by row (at most 64). */
static int steady(const pcwq_match *mt, uint32_t nc, size_t *naggs)
{
    const pcwq_set *s = mt->set;
    size_t n = 0;
    while (n < s->nent && (s->ent[n] & PCWQ_ENT_AGG))
        n++;
    *naggs = n;
    return mt->all && s->identity && !s->it.global && !s->it.by_name && !s->nstale && nc <= 64 &&
           s->nent - n == pcwq_snap(s, s->cur)->count;
}

/* Every value of the handle, instance by instance, into the sink: all
 * its selected counters, or (col >= 0) only the col-th of them. */
static void cook_handle(const pcw_pdh_counter *ctr, int col, unsigned flags, sink *k)
{
    for (size_t j = 0; j < ctr->nm && !k->stop; j++) {
        const pcwq_match *mt = &ctr->m[j];
        const pcwq_set *s = mt->set;
        const uint32_t *cols = col < 0 ? mt->ctr : &mt->ctr[col];
        const pcw_hist_stat *hs = col < 0 ? mt->hst : &mt->hst[col];
        uint32_t nc = col < 0 ? mt->nctr : 1;
        if (mt->placeholder) {
            double *v = sink_values(k, nc);
            uint8_t *st = sink_status(k);
            for (uint32_t c = 0; c < nc; c++) {
                v[c] = 0;
                if (st)
                    st[c] = (uint8_t)mt->placeholder_status;
            }
            sink_row(k, nc);
            continue;
        }
        size_t i = 0, naggs;
        if (steady(mt, nc, &naggs)) {
            kernel kn[64];
            for (uint32_t c = 0; c < nc; c++)
                kernel_of(ctr, s, cols[c], &hs[c], flags, &kn[c]);
            for (; i < naggs && !k->stop; i++)
                cook_entry(ctr, s, cols, hs, nc, s->ent[i], flags, k);
            cook_rows_fast(ctr, s, kn, nc, flags, k);
            continue;
        }
        for (; i < mt->nents && !k->stop; i++)
            cook_entry(ctr, s, cols, hs, nc, s->ent[mt->all ? i : mt->ents[i]], flags, k);
    }
}

int pcw_pdh_cook_all(const pcw_pdh_counter *ctr, unsigned flags, double *values, uint8_t *status)
{
    if (!ctr || !values)
        return PCW_E_INVALID_PARAMETER;
    sink k = {.values = values, .status = status};
    cook_handle(ctr, -1, flags, &k);
    return PCW_OK;
}

int pcw_pdh_cook_column(const pcw_pdh_counter *ctr, size_t kk, unsigned flags, double *values,
                        uint8_t *status)
{
    const pcwq_match *mt = single(ctr);
    if (!mt || kk >= mt->nctr || !values)
        return PCW_E_INVALID_PARAMETER;
    /* The same walk as cook_all, over one counter: in steady state a
     * column of a million instances is one pass over their rows. */
    sink k = {.values = values, .status = status};
    cook_handle(ctr, (int)kk, flags, &k);
    return PCW_OK;
}

/* visit_rows' block (and visit's one instance): on the stack (18 KB, it
 * stays in the L1 cache while the callback reads it), or, for instances
 * of more values than it holds, one instance's worth from the heap. */
typedef struct block {
    double stack_v[PCWQ_BLOCK_VALUES];
    uint8_t stack_s[PCWQ_BLOCK_VALUES];
    double *v;
    uint8_t *s;
    size_t cap;
} block;

static int block_open(block *bl, const pcw_pdh_counter *ctr)
{
    size_t most = PCWQ_BLOCK_VALUES;
    for (size_t j = 0; j < ctr->nm; j++)
        if (ctr->m[j].nctr > most)
            most = ctr->m[j].nctr;
    bl->cap = most;
    bl->v = most <= PCWQ_BLOCK_VALUES ? bl->stack_v : malloc(most * sizeof *bl->v);
    bl->s = most <= PCWQ_BLOCK_VALUES ? bl->stack_s : malloc(most);
    if (bl->v && bl->s)
        return PCW_OK;
    if (bl->v != bl->stack_v)
        free(bl->v);
    if (bl->s != bl->stack_s)
        free(bl->s);
    return PCW_E_NO_MEMORY;
}

static void block_close(block *bl)
{
    if (bl->v != bl->stack_v)
        free(bl->v);
    if (bl->s != bl->stack_s)
        free(bl->s);
}

static sink block_sink(block *bl, int (*fn)(const pcw_pdh_rows *, void *), void *arg)
{
    sink k = {.fnb = fn, .arg = arg, .rv = bl->v, .rs = bl->s, .bcap = bl->cap};
    return k;
}

int pcw_pdh_visit_rows(const pcw_pdh_counter *ctr, unsigned flags,
                       int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    if (!ctr || !fn)
        return PCW_E_INVALID_PARAMETER;
    block bl;
    if (block_open(&bl, ctr) != PCW_OK)
        return PCW_E_NO_MEMORY;
    sink k = block_sink(&bl, fn, arg);
    cook_handle(ctr, -1, flags, &k);
    sink_flush(&k);
    block_close(&bl);
    return PCW_OK;
}

/* ---- handing rows over as they are read ----------------------------------
 *
 * pcw_pdh_collect_rows is pcw_pdh_collect and then pcw_pdh_visit_rows, in
 * one pass over the rows where it can: the rows pcw_pdh_visit_rows would
 * convert as one array (cook_rows_contig: a segment set in steady state,
 * without totals, whose selected counters are plain 8-byte values side by
 * side) are converted and handed over run by run as the read validates
 * them (lib/consumer/read_hook.h), while they are still in the cache -
 * instead of read a second time, out of memory, after the collection.
 *
 * Attribution: the read is one without names (read_set: no provider's
 * instance list changed since the last sample), and a row is the last
 * sample's instance at its position only while the provider's segment
 * generation is still the one of the last sample: a create or a close
 * increments it before its instance can be seen (P0 in
 * pcw_create_instance) or after it is gone (pcw_close_instance), and each
 * run's check loads it after the run's copies (read_run's R3 fence lies
 * between). The first run that fails any check stops the handover; if
 * the collection then does not end in the same steady state with every
 * row handed over, fn gets an empty block (restart) and the values again,
 * from the collection as it ended (cook_handle).
 *
 * When the selected counters are the whole row, the read converts each
 * run as it copies it, into q->cvt (read_hook.h), and the blocks handed
 * over are pieces of that buffer: the rows are read once, not twice.
 */

struct pcwq_fused {
    const pcwq_set *set;
    sink *k;
    uint32_t off, nc; /* the first selected counter's offset; how many */
    pcw_segment *seg; /* the source being read */
    uint64_t gen;     /* its segment's generation at the last sample */
    size_t next;      /* the next snapshot row to hand over */
    int abort;        /* not every row can be handed over as it is read */
    double *cvt;      /* the read's conversion buffer (NULL: none) */
    size_t cvt_cap;   /* doubles */
};

int pcwq_fused_wants(const pcwq_fused *f, const pcwq_set *s)
{
    return f->set == s;
}

void pcwq_fused_abort(pcwq_fused *f)
{
    f->abort = 1;
}

/* Hand rows already converted (cv: nrows rows of nc values, all VALID)
 * over in blocks of at most the sink's room, after what the sink holds. */
static void sink_hand(sink *k, const double *cv, size_t nrows, uint32_t nc)
{
    sink_flush(k);
    size_t per = k->bcap / nc;
    for (size_t r = 0; r < nrows && !k->stop; r += per) {
        size_t m = nrows - r < per ? nrows - r : per, nv = m * nc;
        if (k->valid < nv) { /* the statuses: VALID, as far as written before */
            memset(k->rs + k->valid, PCW_CSTATUS_VALID, nv - k->valid);
            k->valid = nv;
        }
        pcw_pdh_rows b = {k->at, m, nc, cv + r * nc, k->rs};
        k->calls++;
        k->stop = k->fnb(&b, k->arg) != 0;
        k->at += nv;
    }
}

static void fused_run(void *arg, const pcw_snapshot *snap, size_t from, size_t to,
                      const double *cvt)
{
    pcwq_fused *f = arg;
    if (f->abort || from != f->next || snap->busy || !f->gen ||
        pcw_segment_generation(f->seg) != f->gen) {
        f->abort = 1;
        return;
    }
    if (!f->k->stop) {
        if (cvt && snap->data_size == 8 * (size_t)f->nc)
            sink_hand(f->k, cvt, to - from, f->nc);
        else
            cook_rows_contig(snap, from, to, f->off, f->nc, f->k);
    }
    f->next = to;
}

int pcwq_fused_read(pcwq_fused *f, pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                    unsigned flags, uint64_t gen)
{
    f->seg = seg;
    f->gen = gen;
    if (snap->count != f->next)
        f->abort = 1; /* rows missing before this source's */
    return pcw__segment_read_runs(seg, cs, snap, flags, fused_run, f, f->cvt, f->cvt_cap);
}

/* ctr's one match, if its values are rows cook_rows_contig converts: a
 * segment set in steady state without totals whose selected counters
 * (with these flags) are plain 8-byte values side by side; *off is the
 * first one's offset in the row. */
static const pcwq_match *contig_match(const pcw_pdh_counter *ctr, unsigned flags, uint32_t *off)
{
    if (ctr->nm != 1)
        return NULL;
    const pcwq_match *mt = &ctr->m[0];
    const pcwq_set *s = mt->set;
    size_t naggs;
    if (mt->placeholder || s->callback || !mt->nctr || !steady(mt, mt->nctr, &naggs) || naggs)
        return NULL;
    kernel kn[64]; /* steady: at most 64 */
    for (uint32_t c = 0; c < mt->nctr; c++)
        kernel_of(ctr, s, mt->ctr[c], &mt->hst[c], flags, &kn[c]);
    if (kernels_plain(kn, mt->nctr) != PLAIN_CONTIG)
        return NULL;
    *off = kn[0].off;
    return mt;
}

/* Runs of rows this wide at most are converted as they are read: 32
 * counters, a 256 KB buffer (half the L2 of this VM, docs/performance.md),
 * where the blocks handed over are read from. */
#define CVT_MOST_VALUES (32u * PCW__RUN_ROWS)

/* q's conversion buffer, room for a run of rows of nc values (NULL, and
 * the read converts nothing, if they are wider than CVT_MOST_VALUES or
 * there is no memory: a slower collection, not a failed one). Grown once;
 * a steady collection allocates nothing. */
static __attribute__((unused)) double *cvt_buffer(pcw_pdh *q, uint32_t nc, size_t *cap)
{
    size_t need = (size_t)nc * PCW__RUN_ROWS;
    *cap = 0;
    if (need > CVT_MOST_VALUES)
        return NULL;
    if (q->cvt_cap < need) {
        void *p = NULL;
        if (posix_memalign(&p, 64, need * sizeof(double)) != 0)
            return NULL;
        free(q->cvt);
        q->cvt = p, q->cvt_cap = need;
    }
    *cap = q->cvt_cap;
    return q->cvt;
}

int pcw_pdh_collect_rows(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, unsigned flags,
                         int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    if (failed)
        *failed = 0;
    if (!q || !ctr || ctr->q != q || !fn)
        return PCW_E_INVALID_PARAMETER;
    block bl;
    if (block_open(&bl, ctr) != PCW_OK)
        return PCW_E_NO_MEMORY;
    sink k = block_sink(&bl, fn, arg);
    /* Planned from the last sample: the same set, steady, is expected. */
    uint32_t off = 0;
    const pcwq_match *mt = contig_match(ctr, flags, &off);
    pcwq_fused f = {mt ? mt->set : NULL, &k, off, mt ? mt->nctr : 0, NULL, 0, 0, !mt, NULL, 0};
#ifdef PCWQ_HAVE_AVX2
    /* The whole row selected: converted as it is read (with AVX2 only,
     * so that $PCW_NO_AVX2 tests the other way). */
    if (mt && off == 0 && 8 * (size_t)mt->nctr == mt->set->data_size && use_avx2())
        f.cvt = cvt_buffer(q, mt->nctr, &f.cvt_cap);
#endif
    q->fused = mt ? &f : NULL;
    int rc = pcw_pdh_collect(q, failed);
    q->fused = NULL;
    /* Done if this sample is steady too, and every row was handed over. */
    uint32_t off2 = 0;
    const pcwq_match *mt2 = rc == PCW_OK && !f.abort ? contig_match(ctr, flags, &off2) : NULL;
    if (mt2 && mt2->set == f.set && off2 == f.off && mt2->nctr == f.nc &&
        f.next == pcwq_snap(f.set, f.set->cur)->count) {
        sink_flush(&k);
    } else {
        if (k.calls) {
            /* Blocks were handed over that this sample does not end with:
             * an empty block says to forget them. */
            pcw_pdh_rows restart = {0, 0, 0, bl.v, bl.s};
            (void)fn(&restart, arg);
        }
        k = block_sink(&bl, fn, arg);
        if (rc == PCW_OK) {
            cook_handle(ctr, -1, flags, &k);
            sink_flush(&k);
        }
    }
    block_close(&bl);
    return rc;
}

int pcw_pdh_visit(const pcw_pdh_counter *ctr, unsigned flags,
                  int (*fn)(const pcw_pdh_row *row, void *arg), void *arg)
{
    if (!ctr || !fn)
        return PCW_E_INVALID_PARAMETER;
    block bl; /* one instance's values at a time */
    if (block_open(&bl, ctr) != PCW_OK)
        return PCW_E_NO_MEMORY;
    sink k = {.fn = fn, .arg = arg, .rv = bl.v, .rs = bl.s};
    cook_handle(ctr, -1, flags, &k);
    block_close(&bl);
    return PCW_OK;
}

/* ---- histograms ------------------------------------------------------------ */

int pcw_pdh_get_histogram(const pcw_pdh_counter *ctr, size_t i, unsigned flags, pcw_hist_dist *out)
{
    locus l;
    if (!ctr || !out || locate(ctr, i, &l))
        return PCW_E_INVALID_PARAMETER;
    memset(out, 0, sizeof *out);
    const pcwq_set *s = l.mt->set;
    if (!l.mt->hst[l.c].kind) {
        out->status = PCW_CSTATUS_NO_DATA; /* not a histogram */
        return PCW_OK;
    }
    if (l.ent == SIZE_MAX) {
        out->status = l.mt->placeholder_status;
        return PCW_OK;
    }
    const pcwq_hcache *hc =
        pcwq_hist_entry(ctr, s, s->ent[l.ent], l.k, (flags & PCW_HIST_CUMULATIVE) != 0);
    if (!hc)
        return PCW_E_NO_MEMORY;
    const pcw_hist_dist *d = &hc->d;
    if (d->status == PCW_CSTATUS_VALID)
        *out = *d;
    else
        out->status = d->status;
    return PCW_OK;
}
