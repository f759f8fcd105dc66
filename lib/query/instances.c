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

#include "internal.h"
#include "common/name.h"
#include "snaprows.h"

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

static int ghash_rebuild(pcwq_set *s)
{
    size_t cap = 16;
    while (cap < 2 * s->ngroups + 2)
        cap *= 2;
    if (cap != s->ghash_cap) {
        uint32_t *h = realloc(s->ghash, cap * sizeof *h);
        if (!h)
            return -1;
        s->ghash = h, s->ghash_cap = cap;
    }
    memset(s->ghash, 0, s->ghash_cap * sizeof *s->ghash);
    for (size_t g = 0; g < s->ngroups; g++) {
        size_t i = s->groups[g].hash & (s->ghash_cap - 1);
        while (s->ghash[i])
            i = (i + 1) & (s->ghash_cap - 1);
        s->ghash[i] = (uint32_t)g + 1;
    }
    return 0;
}

static int agg_new(pcwq_set *s, const char *name, uint32_t len, uint32_t kind, uint32_t *out);

/* The group of `name`, created if new. UINT32_MAX: out of memory. */
static uint32_t group_of(pcwq_set *s, const char *name, uint32_t len)
{
    uint64_t h = pcw_name_hash(name, len);
    if (s->ghash_cap) {
        size_t i = h & (s->ghash_cap - 1);
        for (; s->ghash[i]; i = (i + 1) & (s->ghash_cap - 1)) {
            pcwq_group *g = &s->groups[s->ghash[i] - 1];
            if (g->hash == h && pcw_name_equal(g->name, g->name_len, name, len))
                return s->ghash[i] - 1;
        }
    }
    if (pcwq_grow((void **)&s->groups, &s->groups_cap, s->ngroups + 1, sizeof *s->groups))
        return UINT32_MAX;
    pcwq_group *g = &s->groups[s->ngroups];
    memset(g, 0, sizeof *g);
    if (!(g->name = malloc(len + 1)))
        return UINT32_MAX;
    memcpy(g->name, name, len);
    g->name[len] = 0;
    g->name_len = len;
    g->hash = h;
    g->agg = UINT32_MAX;
    /* "_Total" #0 is the total itself in a set that has one. */
    if (s->it.total && pcw_name_equal(name, len, "_Total", 6))
        g->next = 1;
    if (s->it.by_name && agg_new(s, name, len, PCW_PDH_AGGREGATE, &g->agg) != 0) {
        free(g->name);
        return UINT32_MAX;
    }
    s->ngroups++;
    s->nempty++; /* until its first member joins */
    if (2 * s->ngroups + 2 > s->ghash_cap) {
        if (ghash_rebuild(s))
            return UINT32_MAX;
    } else {
        size_t i = h & (s->ghash_cap - 1);
        while (s->ghash[i])
            i = (i + 1) & (s->ghash_cap - 1);
        s->ghash[i] = (uint32_t)s->ngroups;
    }
    return (uint32_t)s->ngroups - 1;
}

static int group_join(pcwq_set *s, uint32_t gi, uint32_t *dup)
{
    pcwq_group *g = &s->groups[gi];
    /* A name back after all its instances left (no history): a new total,
     * whose rates start afresh. */
    if (s->it.by_name && g->agg == UINT32_MAX) {
        uint32_t a;
        if (agg_new(s, g->name, g->name_len, PCW_PDH_AGGREGATE, &a) != 0)
            return -1;
        g = &s->groups[gi];
        g->agg = a;
    }
    if (g->nfreed) {
        *dup = heap_pop(g->freed, &g->nfreed);
    } else {
        *dup = g->next++;
    }
    if (g->nlive++ == 0)
        s->nempty--;
    if (g->agg != UINT32_MAX) {
        pcwq_agg *a = &s->aggs[g->agg];
        a->nlive++;
        a->active = 1;
    }
    return 0;
}

static void group_leave(pcwq_set *s, uint32_t gi, uint32_t dup)
{
    pcwq_group *g = &s->groups[gi];
    if (dup + 1 == g->next) {
        g->next--; /* the newest: give it back to the counter */
    } else if (pcwq_grow((void **)&g->freed, &g->freed_cap, g->nfreed + 1u, sizeof *g->freed) ==
               0) {
        heap_push(g->freed, &g->nfreed, dup);
    }
    /* (Out of memory: the index is simply not reused.) */
    if (--g->nlive == 0) {
        s->nempty++;
        g->nfreed = 0;
        g->next = s->it.total && pcw_name_equal(g->name, g->name_len, "_Total", 6) ? 1 : 0;
        if (g->agg != UINT32_MAX) {
            pcwq_agg *a = &s->aggs[g->agg];
            a->nlive = 0;
            if (!s->it.history) {
                /* Its slot may now go to another name: forget it. (Out of
                 * memory: the slot is simply not reused.) */
                a->active = 0;
                if (pcwq_grow((void **)&s->agg_free, &s->agg_free_cap, s->nagg_free + 1u,
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
static int compact_groups(pcwq_set *s)
{
    if (s->it.by_name && s->it.history)
        return 0;
    if (s->nempty < 64 || 2 * s->nempty < s->ngroups)
        return 0;
    uint32_t *map = malloc(s->ngroups * sizeof *map);
    if (!map)
        return 0; /* compaction is only an optimisation */
    size_t w = 0;
    for (size_t g = 0; g < s->ngroups; g++) {
        if (s->groups[g].nlive == 0) {
            free(s->groups[g].name);
            free(s->groups[g].freed);
            map[g] = UINT32_MAX;
            continue;
        }
        map[g] = (uint32_t)w;
        s->groups[w++] = s->groups[g];
    }
    s->ngroups = w;
    s->nempty = 0;
    for (size_t i = 0; i < s->ninst; i++)
        if (s->inst[i].live)
            s->inst[i].group = map[s->inst[i].group];
    free(map);
    return ghash_rebuild(s);
}

/* ---- totals' slots ------------------------------------------------------- */

static int agg_new(pcwq_set *s, const char *name, uint32_t len, uint32_t kind, uint32_t *out)
{
    /* Reuse a slot no longer shown (a name whose instances all left, in a
     * set without history: group_leave gave it back), the lowest first. */
    size_t a = s->nagg;
    if (kind == PCW_PDH_AGGREGATE && s->nagg_free) {
        s->agg_tests++;
        a = heap_pop(s->agg_free, &s->nagg_free);
    }
    if (a == s->nagg && pcwq_grow((void **)&s->aggs, &s->agg_cap, s->nagg + 1, sizeof *s->aggs))
        return -1;
    pcwq_agg *g = &s->aggs[a];
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
            pcwq_acc_reset(&g->hist[k]);
            pcwq_vacc_reset(&g->hval[k]);
        }
    }
    if (a == s->nagg)
        s->nagg++;
    *out = (uint32_t)a;
    return 0;
}

/* ---- instances ----------------------------------------------------------- */

static int hash_rebuild(pcwq_set *s, size_t want)
{
    size_t cap = 64;
    while (cap < 2 * want + 2)
        cap *= 2;
    if (cap > s->hash_cap) {
        uint32_t *h = realloc(s->hash, cap * sizeof *h);
        if (!h)
            return -1;
        s->hash = h, s->hash_cap = cap;
    }
    memset(s->hash, 0, s->hash_cap * sizeof *s->hash);
    for (size_t j = 0; j < s->ninst; j++)
        if (s->inst[j].live) {
            size_t i = s->inst[j].key & (s->hash_cap - 1);
            while (s->hash[i])
                i = (i + 1) & (s->hash_cap - 1);
            s->hash[i] = (uint32_t)j + 1;
        }
    return 0;
}

static void hash_insert(pcwq_set *s, uint32_t j)
{
    size_t i = s->inst[j].key & (s->hash_cap - 1);
    while (s->hash[i])
        i = (i + 1) & (s->hash_cap - 1);
    s->hash[i] = j + 1;
}

static void inst_release(pcwq_set *s, uint32_t j)
{
    pcwq_inst *x = &s->inst[j];
    free(x->name);
    free(x->disp);
    free(x->last);
    memset(x, 0, sizeof *x);
    /* The free list has room: it was sized with the array. */
    s->free_inst[s->nfree++] = j;
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

static uint32_t inst_new(pcwq_set *s, const pcwq_src *x, uint32_t id, const char *name,
                         uint32_t len, uint64_t key, int *nomem)
{
    uint32_t j;
    if (s->nfree) {
        j = s->free_inst[--s->nfree];
    } else {
        size_t fcap = s->inst_cap;
        if (pcwq_grow((void **)&s->inst, &s->inst_cap, s->ninst + 1, sizeof *s->inst)) {
            *nomem = 1;
            return UINT32_MAX;
        }
        if (s->inst_cap != fcap || !s->free_inst) {
            uint32_t *f = realloc(s->free_inst, s->inst_cap * sizeof *f);
            if (!f) {
                *nomem = 1;
                return UINT32_MAX;
            }
            s->free_inst = f;
        }
        j = (uint32_t)s->ninst++;
    }
    pcwq_inst *in = &s->inst[j];
    memset(in, 0, sizeof *in);
    in->name = malloc(len + 1);
    uint32_t g = group_of(s, name, len);
    if (!in->name || g == UINT32_MAX) {
        free(in->name);
        in->name = NULL;
        s->free_inst[s->nfree++] = j;
        *nomem = 1;
        return UINT32_MAX;
    }
    in = &s->inst[j];
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
        s->free_inst[s->nfree++] = j;
        *nomem = 1;
        return UINT32_MAX;
    }
    in->agg = s->groups[g].agg != UINT32_MAX ? s->groups[g].agg : 0;
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
static void depart(pcwq_set *s, uint32_t j)
{
    pcwq_inst *x = &s->inst[j];
    if (s->it.history && x->last && s->nagg)
        pcwq_total_keep(s, &s->aggs[s->it.by_name ? x->agg : 0], x->last);
    group_leave(s, x->group, x->dup);
    inst_release(s, j);
}

void pcwq_instances_free(pcwq_set *s)
{
    for (size_t j = 0; j < s->ninst; j++)
        if (s->inst[j].live) {
            free(s->inst[j].name);
            free(s->inst[j].disp);
            free(s->inst[j].last);
        }
    for (size_t g = 0; g < s->ngroups; g++) {
        free(s->groups[g].name);
        free(s->groups[g].freed);
    }
    for (size_t a = 0; a < s->nagg; a++) {
        free(s->aggs[a].name);
        free(s->aggs[a].hist);
        free(s->aggs[a].hval);
    }
    free(s->inst), free(s->free_inst), free(s->hash), free(s->groups), free(s->ghash);
    free(s->aggs), free(s->acc), free(s->order), free(s->ent), free(s->nidx), free(s->ent_key);
    free(s->agg_free);
    s->agg_free = NULL, s->nagg_free = 0, s->agg_free_cap = 0;
    s->inst = NULL, s->free_inst = NULL, s->hash = NULL, s->groups = NULL, s->ghash = NULL;
    s->aggs = NULL, s->acc = NULL, s->order = NULL, s->ent = NULL, s->nidx = NULL;
    s->ent_key = NULL;
    s->nent = s->ent_cap = s->nidx_cap = s->ent_key_cap = 0;
    s->ninst = s->inst_cap = s->nfree = s->hash_cap = s->ngroups = s->groups_cap = 0;
    s->ghash_cap = s->nagg = s->agg_cap = s->acc_cap = s->norder = s->order_cap = 0;
    s->nread = 0;
    s->in_order = 0;
    s->nempty = s->nstale = 0;
    s->have_prev = 0;
    s->identity = 0;
    for (int b = 0; b < 2; b++) {
        free(s->arow[b]), free(s->ast[b]);
        s->arow[b] = NULL, s->ast[b] = NULL, s->arow_cap[b] = s->ast_cap[b] = 0;
    }
    free(s->tval), free(s->vacc), free(s->vst), free(s->tway);
    s->tval = NULL, s->vacc = NULL, s->vst = NULL, s->tway = NULL;
    s->tval_cap = s->vacc_cap = s->vst_cap = s->tway_cap = 0;
    s->epoch++;
}

/* The set's one total (_Total or the global aggregate), made on first use. */
static int ensure_total(pcwq_set *s)
{
    if (!(s->it.total || s->it.global) || s->nagg)
        return 0;
    uint32_t a;
    if (s->it.total)
        return agg_new(s, "_Total", 6, PCW_PDH_TOTAL, &a);
    return agg_new(s, "", 0, PCW_PDH_AGGREGATE, &a);
}

int pcwq_map_instances(pcwq_set *s, int fast)
{
    if (ensure_total(s))
        return PCW_E_NO_MEMORY;
    if (fast) {
        s->identity = 1;
        s->have_prev = 1;
        return PCW_OK;
    }
    int b = s->cur;
    const pcw_snapshot *snap = pcwq_snap(s, b);
    int changed = 0;
    /* 1. Last time's rows are in the previous snapshot now. */
    for (size_t j = 0; j < s->ninst; j++) {
        pcwq_inst *x = &s->inst[j];
        if (!x->live)
            continue;
        x->prev_row = s->have_prev ? x->row : -1;
        x->prev_src = s->have_prev ? x->src : -1;
        x->row = x->src = -1;
    }
    s->identity = 0;
    size_t nlive = s->ninst - s->nfree;
    if (hash_rebuild(s, nlive + snap->count))
        return PCW_E_NO_MEMORY;
    if (pcwq_grow((void **)&s->order, &s->order_cap, snap->count + nlive + 1, sizeof *s->order))
        return PCW_E_NO_MEMORY;
    /* The order is rebuilt in place; an instance in another place than
     * last time is a change too (a callback may add its instances in any
     * order), so that the epoch tells callers who cache by position. */
    size_t old_norder = s->norder;
    s->norder = 0;
    s->in_order = 1;
    /* 2. Each row: the instance it is, or a new one. */
    int nomem = 0;
    for (size_t i = 0; i < s->nsrc[b] && !nomem; i++) {
        const pcwq_src *x = &s->src[b][i];
        for (size_t r = x->first; r < x->first + x->count; r++) {
            uint32_t len, id = pcwq_row_id(snap, r);
            const char *name = pcwq_row_name(snap, r, &len);
            uint64_t key = inst_key(x->provider_id, id, name, len);
            uint32_t j = UINT32_MAX;
            for (size_t h = key & (s->hash_cap - 1); s->hash[h]; h = (h + 1) & (s->hash_cap - 1)) {
                pcwq_inst *c = &s->inst[s->hash[h] - 1];
                if (c->key == key && c->provider_id == x->provider_id && c->id == id &&
                    c->name_len == len && memcmp(c->name, name, len) == 0 && c->row < 0) {
                    j = s->hash[h] - 1;
                    break;
                }
            }
            if (j == UINT32_MAX) {
                j = inst_new(s, x, id, name, len, key, &nomem);
                if (nomem)
                    break;
                changed = 1;
            }
            pcwq_inst *c = &s->inst[j];
            c->row = (int32_t)r;
            c->src = (int32_t)i;
            c->pid = x->pid;
            if (c->stale) {
                c->stale = 0;
                s->nstale--;
                changed = 1;
            }
            if (s->norder >= old_norder || s->order[s->norder] != j)
                changed = 1;
            if ((size_t)r != s->norder)
                s->in_order = 0;
            s->order[s->norder++] = j;
        }
    }
    if (nomem)
        return PCW_E_NO_MEMORY;
    s->nread = s->norder;
    /* 3. Instances not read: their provider did not answer (kept, stale),
     * or they are gone. */
    for (size_t j = 0; j < s->ninst; j++) {
        pcwq_inst *x = &s->inst[j];
        if (!x->live || x->row >= 0)
            continue;
        int keep = 0;
        for (size_t i = 0; i < s->nsrc[b]; i++) {
            const pcwq_src *y = &s->src[b][i];
            if (y->provider_id == x->provider_id) {
                keep = y->alive && y->status != PCW_OK;
                break;
            }
        }
        if (keep) {
            if (!x->stale) {
                x->stale = 1;
                s->nstale++;
                changed = 1;
            }
            if (s->norder >= old_norder || s->order[s->norder] != (uint32_t)j)
                changed = 1;
            s->order[s->norder++] = (uint32_t)j;
        } else {
            if (x->stale)
                s->nstale--;
            depart(s, (uint32_t)j);
            changed = 1;
        }
    }
    if (compact_groups(s))
        return PCW_E_NO_MEMORY;
    if (s->norder != old_norder)
        changed = 1;
    if (changed || !s->have_prev)
        s->epoch++;
    s->have_prev = 1;
    return PCW_OK;
}
