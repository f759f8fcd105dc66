/* SPDX-License-Identifier: MIT */
/*
 * lib/query/instances.c - which instance each row of a sample is: identity
 * across collections, stable #n names, departures (and what History totals
 * keep of them).
 *
 * An instance is (provider, id, name): the same id under another name is a
 * new instance, whose rates start afresh. Instances that share a name
 * (case-insensitively) form a group; each takes the smallest #n no live
 * member holds, and keeps it while it lives - unlike Windows, where the
 * survivors are renumbered when an earlier duplicate exits. In a set with a
 * _Total, the name "_Total" starts at #1: #0 is the total.
 *
 * When nothing changed since the last sample (the fast path decided by the
 * caller) none of this runs: every instance keeps its row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "instances.h"
#include "common/name.h"
#include "snaprows.h"
#include "totals.h"
#include "util.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t inst_key(uint64_t provider, uint32_t id, const char *name, uint32_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < len; i++) {
        h ^= (unsigned char)name[i];
        h *= 0x100000001b3ull;
    }
    return mix(h ^ mix(provider) ^ ((uint64_t)id << 17));
}

/* ---- name groups (#n) ----------------------------------------------------- */

/* A min-heap of indexes given back (a group's #n, the set's aggregate
 * slots): the lowest is taken again first. heap[*n] must have room. */
static void heap_push(uint32_t *heap, uint32_t *n, uint32_t v)
{
    uint32_t i = (*n)++;
    while (i > 0) {
        uint32_t p = (i - 1) / 2;
        if (heap[p] <= v)
            break;
        heap[i] = heap[p];
        i = p;
    }
    heap[i] = v;
}
static uint32_t heap_pop(uint32_t *heap, uint32_t *n)
{
    uint32_t top = heap[0], v = heap[--*n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap[c + 1] < heap[c])
            c++;
        if (heap[c] >= v)
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (*n)
        heap[i] = v;
    return top;
}

static int ghash_rebuild(pcw__q_set *s)
{
    size_t cap = 16;
    while (cap < 2 * s->ins.ngroups + 2)
        cap *= 2;
    if (cap != s->ins.ghash_cap) {
        uint32_t *h = realloc(s->ins.ghash, cap * sizeof *h);
        if (!h)
            return -1;
        s->ins.ghash = h, s->ins.ghash_cap = cap;
    }
    memset(s->ins.ghash, 0, s->ins.ghash_cap * sizeof *s->ins.ghash);
    for (size_t g = 0; g < s->ins.ngroups; g++) {
        size_t i = s->ins.groups[g].hash & (s->ins.ghash_cap - 1);
        while (s->ins.ghash[i])
            i = (i + 1) & (s->ins.ghash_cap - 1);
        s->ins.ghash[i] = (uint32_t)g + 1;
    }
    return 0;
}

static int agg_new(pcw__q_set *s, const char *name, uint32_t len, uint32_t kind, uint32_t *out);

/* The group of `name`, created if new. UINT32_MAX: out of memory. */
static uint32_t group_of(pcw__q_set *s, const char *name, uint32_t len)
{
    uint64_t h = pcw__name_hash(name, len);
    if (s->ins.ghash_cap) {
        size_t i = h & (s->ins.ghash_cap - 1);
        for (; s->ins.ghash[i]; i = (i + 1) & (s->ins.ghash_cap - 1)) {
            pcw__q_group *g = &s->ins.groups[s->ins.ghash[i] - 1];
            if (g->hash == h && pcw__name_equal(g->name, g->name_len, name, len))
                return s->ins.ghash[i] - 1;
        }
    }
    if (pcw__q_grow((void **)&s->ins.groups, &s->ins.groups_cap, s->ins.ngroups + 1,
                    sizeof *s->ins.groups))
        return UINT32_MAX;
    pcw__q_group *g = &s->ins.groups[s->ins.ngroups];
    memset(g, 0, sizeof *g);
    if (!(g->name = malloc(len + 1)))
        return UINT32_MAX;
    memcpy(g->name, name, len);
    g->name[len] = 0;
    g->name_len = len;
    g->hash = h;
    g->agg = UINT32_MAX;
    /* "_Total" #0 is the total itself in a set that has one. */
    if (s->it.total && pcw__name_equal(name, len, "_Total", 6))
        g->next = 1;
    if (s->it.by_name && agg_new(s, name, len, PCW_PDH_AGGREGATE, &g->agg) != 0) {
        free(g->name);
        return UINT32_MAX;
    }
    s->ins.ngroups++;
    s->ins.nempty++; /* until its first member joins */
    if (2 * s->ins.ngroups + 2 > s->ins.ghash_cap) {
        if (ghash_rebuild(s))
            return UINT32_MAX;
    } else {
        size_t i = h & (s->ins.ghash_cap - 1);
        while (s->ins.ghash[i])
            i = (i + 1) & (s->ins.ghash_cap - 1);
        s->ins.ghash[i] = (uint32_t)s->ins.ngroups;
    }
    return (uint32_t)s->ins.ngroups - 1;
}

static int group_join(pcw__q_set *s, uint32_t gi, uint32_t *dup)
{
    pcw__q_group *g = &s->ins.groups[gi];
    /* A name back after all its instances left (no history): a new total,
     * whose rates start afresh. */
    if (s->it.by_name && g->agg == UINT32_MAX) {
        uint32_t a;
        if (agg_new(s, g->name, g->name_len, PCW_PDH_AGGREGATE, &a) != 0)
            return -1;
        g = &s->ins.groups[gi];
        g->agg = a;
    }
    if (g->nfreed) {
        *dup = heap_pop(g->freed, &g->nfreed);
    } else {
        *dup = g->next++;
    }
    if (g->nlive++ == 0)
        s->ins.nempty--;
    if (g->agg != UINT32_MAX) {
        pcw__q_agg *a = &s->aggs[g->agg];
        a->nlive++;
        a->active = 1;
    }
    return 0;
}

static void group_leave(pcw__q_set *s, uint32_t gi, uint32_t dup)
{
    pcw__q_group *g = &s->ins.groups[gi];
    if (dup + 1 == g->next) {
        g->next--; /* the newest: give it back to the counter */
    } else if (pcw__q_grow((void **)&g->freed, &g->freed_cap, g->nfreed + 1u, sizeof *g->freed) ==
               0) {
        heap_push(g->freed, &g->nfreed, dup);
    }
    /* (Out of memory: the index is simply not reused.) */
    if (--g->nlive == 0) {
        s->ins.nempty++;
        g->nfreed = 0;
        g->next = s->it.total && pcw__name_equal(g->name, g->name_len, "_Total", 6) ? 1 : 0;
        if (g->agg != UINT32_MAX) {
            pcw__q_agg *a = &s->aggs[g->agg];
            a->nlive = 0;
            if (!s->it.history) {
                /* Its slot may now go to another name: forget it. (Out of
                 * memory: the slot is simply not reused.) */
                a->active = 0;
                if (pcw__q_grow((void **)&s->agg_free, &s->agg_free_cap, s->nagg_free + 1u,
                                sizeof *s->agg_free) == 0)
                    heap_push(s->agg_free, &s->nagg_free, g->agg);
                g->agg = UINT32_MAX;
            }
        }
    } else if (g->agg != UINT32_MAX) {
        s->aggs[g->agg].nlive--;
    }
}

/* Drop groups without members (and, without history, their totals) when
 * they are more than half: memory stays bounded under churn of unique
 * names. A History set keeps them, since they hold its totals. */
static int compact_groups(pcw__q_set *s)
{
    if (s->it.by_name && s->it.history)
        return 0;
    if (s->ins.nempty < 64 || 2 * s->ins.nempty < s->ins.ngroups)
        return 0;
    uint32_t *map = malloc(s->ins.ngroups * sizeof *map);
    if (!map)
        return 0; /* compaction is only an optimisation */
    size_t w = 0;
    for (size_t g = 0; g < s->ins.ngroups; g++) {
        if (s->ins.groups[g].nlive == 0) {
            free(s->ins.groups[g].name);
            free(s->ins.groups[g].freed);
            map[g] = UINT32_MAX;
            continue;
        }
        map[g] = (uint32_t)w;
        s->ins.groups[w++] = s->ins.groups[g];
    }
    s->ins.ngroups = w;
    s->ins.nempty = 0;
    for (size_t i = 0; i < s->ins.ninst; i++)
        if (s->ins.inst[i].live)
            s->ins.inst[i].group = map[s->ins.inst[i].group];
    free(map);
    return ghash_rebuild(s);
}

/* ---- totals' slots ------------------------------------------------------- */

static int agg_new(pcw__q_set *s, const char *name, uint32_t len, uint32_t kind, uint32_t *out)
{
    /* Reuse a slot no longer shown (a name whose instances all left, in a
     * set without history: group_leave gave it back), the lowest first. */
    size_t a = s->nagg;
    if (kind == PCW_PDH_AGGREGATE && s->nagg_free) {
        s->agg_tests++;
        a = heap_pop(s->agg_free, &s->nagg_free);
    }
    if (a == s->nagg && pcw__q_grow((void **)&s->aggs, &s->agg_cap, s->nagg + 1, sizeof *s->aggs))
        return -1;
    pcw__q_agg *g = &s->aggs[a];
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, name, len);
    copy[len] = 0;
    if (a < s->nagg)
        free(g->name);
    memset(g, 0, sizeof *g);
    g->name = copy;
    g->name_len = len;
    g->kind = kind;
    g->active = 1;
    if (s->it.history) {
        g->hist = calloc(s->ncounters ? s->ncounters : 1, sizeof *g->hist);
        g->hval = calloc(s->ncounters ? s->ncounters : 1, sizeof *g->hval);
        if (!g->hist || !g->hval)
            return -1;
        for (uint32_t k = 0; k < s->ncounters; k++) {
            pcw__q_acc_reset(&g->hist[k]);
            pcw__q_vacc_reset(&g->hval[k]);
        }
    }
    if (a == s->nagg)
        s->nagg++;
    *out = (uint32_t)a;
    return 0;
}

/* ---- instances ----------------------------------------------------------- */

static int hash_rebuild(pcw__q_set *s, size_t want)
{
    size_t cap = 64;
    while (cap < 2 * want + 2)
        cap *= 2;
    if (cap > s->ins.hash_cap) {
        uint32_t *h = realloc(s->ins.hash, cap * sizeof *h);
        if (!h)
            return -1;
        s->ins.hash = h, s->ins.hash_cap = cap;
    }
    memset(s->ins.hash, 0, s->ins.hash_cap * sizeof *s->ins.hash);
    for (size_t j = 0; j < s->ins.ninst; j++)
        if (s->ins.inst[j].live) {
            size_t i = s->ins.inst[j].key & (s->ins.hash_cap - 1);
            while (s->ins.hash[i])
                i = (i + 1) & (s->ins.hash_cap - 1);
            s->ins.hash[i] = (uint32_t)j + 1;
        }
    return 0;
}

static void hash_insert(pcw__q_set *s, uint32_t j)
{
    size_t i = s->ins.inst[j].key & (s->ins.hash_cap - 1);
    while (s->ins.hash[i])
        i = (i + 1) & (s->ins.hash_cap - 1);
    s->ins.hash[i] = j + 1;
}

static void inst_release(pcw__q_set *s, uint32_t j)
{
    pcw__q_inst *x = &s->ins.inst[j];
    free(x->name);
    free(x->disp);
    free(x->last);
    memset(x, 0, sizeof *x);
    /* The free list has room: it was sized with the array. */
    s->ins.free_inst[s->ins.nfree++] = j;
}

/* Make the display name: "name", or "name#n". */
static char *display(const char *name, uint32_t len, uint32_t dup)
{
    char *d = malloc(len + 12);
    if (!d)
        return NULL;
    memcpy(d, name, len);
    if (dup)
        snprintf(d + len, 12, "#%u", (unsigned)dup);
    else
        d[len] = 0;
    return d;
}

static uint32_t inst_new(pcw__q_set *s, const pcw__q_src *x, uint32_t id, const char *name,
                         uint32_t len, uint64_t key, int *nomem)
{
    uint32_t j;
    if (s->ins.nfree) {
        j = s->ins.free_inst[--s->ins.nfree];
    } else {
        size_t fcap = s->ins.inst_cap;
        if (pcw__q_grow((void **)&s->ins.inst, &s->ins.inst_cap, s->ins.ninst + 1,
                        sizeof *s->ins.inst)) {
            *nomem = 1;
            return UINT32_MAX;
        }
        if (s->ins.inst_cap != fcap || !s->ins.free_inst) {
            uint32_t *f = realloc(s->ins.free_inst, s->ins.inst_cap * sizeof *f);
            if (!f) {
                *nomem = 1;
                return UINT32_MAX;
            }
            s->ins.free_inst = f;
        }
        j = (uint32_t)s->ins.ninst++;
    }
    pcw__q_inst *in = &s->ins.inst[j];
    memset(in, 0, sizeof *in);
    in->name = malloc(len + 1);
    uint32_t g = group_of(s, name, len);
    if (!in->name || g == UINT32_MAX) {
        free(in->name);
        in->name = NULL;
        s->ins.free_inst[s->ins.nfree++] = j;
        *nomem = 1;
        return UINT32_MAX;
    }
    in = &s->ins.inst[j];
    memcpy(in->name, name, len);
    in->name[len] = 0;
    in->name_len = len;
    in->provider_id = x->provider_id;
    in->pid = x->pid;
    in->id = id;
    in->key = key;
    in->group = g;
    if (group_join(s, g, &in->dup) != 0) {
        free(in->name);
        in->name = NULL;
        s->ins.free_inst[s->ins.nfree++] = j;
        *nomem = 1;
        return UINT32_MAX;
    }
    in->agg = s->ins.groups[g].agg != UINT32_MAX ? s->ins.groups[g].agg : 0;
    in->disp = display(name, len, in->dup);
    if (s->it.history && s->data_size)
        in->last = calloc(1, s->data_size);
    in->live = 1;
    in->row = in->prev_row = in->src = in->prev_src = -1;
    if (!in->disp || (s->it.history && s->data_size && !in->last)) {
        group_leave(s, g, in->dup);
        inst_release(s, j);
        *nomem = 1;
        return UINT32_MAX;
    }
    hash_insert(s, j);
    return j;
}

/* An instance left for good: a History total keeps its last values. */
static void depart(pcw__q_set *s, uint32_t j)
{
    pcw__q_inst *x = &s->ins.inst[j];
    if (s->it.history && x->last && s->nagg)
        pcw__q_total_keep(s, &s->aggs[s->it.by_name ? x->agg : 0], x->last);
    group_leave(s, x->group, x->dup);
    inst_release(s, j);
}

void pcw__q_instances_free(pcw__q_set *s)
{
    for (size_t j = 0; j < s->ins.ninst; j++)
        if (s->ins.inst[j].live) {
            free(s->ins.inst[j].name);
            free(s->ins.inst[j].disp);
            free(s->ins.inst[j].last);
        }
    for (size_t g = 0; g < s->ins.ngroups; g++) {
        free(s->ins.groups[g].name);
        free(s->ins.groups[g].freed);
    }
    for (size_t a = 0; a < s->nagg; a++) {
        free(s->aggs[a].name);
        free(s->aggs[a].hist);
        free(s->aggs[a].hval);
    }
    free(s->ins.inst), free(s->ins.free_inst), free(s->ins.hash), free(s->ins.groups),
        free(s->ins.ghash);
    free(s->aggs), free(s->ins.order);
    free(s->agg_free);
    s->agg_free = NULL, s->nagg_free = 0, s->agg_free_cap = 0;
    s->ins.inst = NULL, s->ins.free_inst = NULL, s->ins.hash = NULL, s->ins.groups = NULL,
    s->ins.ghash = NULL;
    s->aggs = NULL, s->ins.order = NULL;
    s->ins.ninst = s->ins.inst_cap = s->ins.nfree = s->ins.hash_cap = s->ins.ngroups =
        s->ins.groups_cap = 0;
    s->ins.ghash_cap = s->nagg = s->agg_cap = s->ins.norder = s->ins.order_cap = 0;
    s->ins.nread = 0;
    s->ins.in_order = 0;
    s->ins.nempty = s->ins.nstale = 0;
    s->ins.have_prev = 0;
    s->ins.identity = 0;
    pcw__q_entries_free(&s->entries);
    pcw__q_totals_free(&s->tot);
    s->epoch++;
}

/* The set's one total (_Total or the global aggregate), made on first use. */
static int ensure_total(pcw__q_set *s)
{
    if (!(s->it.total || s->it.global) || s->nagg)
        return 0;
    uint32_t a;
    if (s->it.total)
        return agg_new(s, "_Total", 6, PCW_PDH_TOTAL, &a);
    return agg_new(s, "", 0, PCW_PDH_AGGREGATE, &a);
}

int pcw__q_map_instances(pcw__q_set *s, int fast)
{
    if (ensure_total(s))
        return PCW_E_NO_MEMORY;
    if (fast) {
        s->ins.identity = 1;
        s->ins.have_prev = 1;
        return PCW_OK;
    }
    int b = s->cur;
    const pcw_snapshot *snap = pcw__q_snap(s, b);
    int changed = 0;
    /* 1. Last time's rows are in the previous snapshot now. */
    for (size_t j = 0; j < s->ins.ninst; j++) {
        pcw__q_inst *x = &s->ins.inst[j];
        if (!x->live)
            continue;
        x->prev_row = s->ins.have_prev ? x->row : -1;
        x->prev_src = s->ins.have_prev ? x->src : -1;
        x->row = x->src = -1;
    }
    s->ins.identity = 0;
    size_t nlive = s->ins.ninst - s->ins.nfree;
    if (hash_rebuild(s, nlive + snap->count))
        return PCW_E_NO_MEMORY;
    if (pcw__q_grow((void **)&s->ins.order, &s->ins.order_cap, snap->count + nlive + 1,
                    sizeof *s->ins.order))
        return PCW_E_NO_MEMORY;
    /* The order is rebuilt in place; an instance in another place than
     * last time is a change too (a callback may add its instances in any
     * order), so that the epoch tells callers who cache by position. */
    size_t old_norder = s->ins.norder;
    s->ins.norder = 0;
    s->ins.in_order = 1;
    /* 2. Each row: the instance it is, or a new one. */
    int nomem = 0;
    for (size_t i = 0; i < s->nsrc[b] && !nomem; i++) {
        const pcw__q_src *x = &s->src[b][i];
        for (size_t r = x->first; r < x->first + x->count; r++) {
            uint32_t len, id = pcw__q_row_id(snap, r);
            const char *name = pcw__q_row_name(snap, r, &len);
            uint64_t key = inst_key(x->provider_id, id, name, len);
            uint32_t j = UINT32_MAX;
            for (size_t h = key & (s->ins.hash_cap - 1); s->ins.hash[h];
                 h = (h + 1) & (s->ins.hash_cap - 1)) {
                pcw__q_inst *c = &s->ins.inst[s->ins.hash[h] - 1];
                if (c->key == key && c->provider_id == x->provider_id && c->id == id &&
                    c->name_len == len && memcmp(c->name, name, len) == 0 && c->row < 0) {
                    j = s->ins.hash[h] - 1;
                    break;
                }
            }
            if (j == UINT32_MAX) {
                j = inst_new(s, x, id, name, len, key, &nomem);
                if (nomem)
                    break;
                changed = 1;
            }
            pcw__q_inst *c = &s->ins.inst[j];
            c->row = (int32_t)r;
            c->src = (int32_t)i;
            c->pid = x->pid;
            if (c->stale) {
                c->stale = 0;
                s->ins.nstale--;
                changed = 1;
            }
            if (s->ins.norder >= old_norder || s->ins.order[s->ins.norder] != j)
                changed = 1;
            if ((size_t)r != s->ins.norder)
                s->ins.in_order = 0;
            s->ins.order[s->ins.norder++] = j;
        }
    }
    if (nomem)
        return PCW_E_NO_MEMORY;
    s->ins.nread = s->ins.norder;
    /* 3. Instances not read: their provider did not answer (kept, stale),
     * or they are gone. */
    for (size_t j = 0; j < s->ins.ninst; j++) {
        pcw__q_inst *x = &s->ins.inst[j];
        if (!x->live || x->row >= 0)
            continue;
        int keep = 0;
        for (size_t i = 0; i < s->nsrc[b]; i++) {
            const pcw__q_src *y = &s->src[b][i];
            if (y->provider_id == x->provider_id) {
                keep = y->alive && y->status != PCW_OK;
                break;
            }
        }
        if (keep) {
            if (!x->stale) {
                x->stale = 1;
                s->ins.nstale++;
                changed = 1;
            }
            if (s->ins.norder >= old_norder || s->ins.order[s->ins.norder] != (uint32_t)j)
                changed = 1;
            s->ins.order[s->ins.norder++] = (uint32_t)j;
        } else {
            if (x->stale)
                s->ins.nstale--;
            depart(s, (uint32_t)j);
            changed = 1;
        }
    }
    if (compact_groups(s))
        return PCW_E_NO_MEMORY;
    if (s->ins.norder != old_norder)
        changed = 1;
    if (changed || !s->ins.have_prev)
        s->epoch++;
    s->ins.have_prev = 1;
    return PCW_OK;
}
