/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwstat/record.c - `pcwstat -f BIN -o FILE`: the columns' raw
 * samples into a pcw log (lib/history, docs/history.md), from which
 * pcwrelog cooks what the live CSV would have shown.
 *
 * The log's series, in the order they are defined (the CSV's columns):
 *
 * - A column (its own handle, one value) is one series, logged value by
 *   value. A column whose value is a provider's instance logs its raw
 *   sample (pcw_pdh_value.raw) and, whenever it changes, its identity
 *   (provider, instance id, #n) with the counter type and scale: the live
 *   query cooks a sample against the previous one of the same instance
 *   only. A _Total or aggregate column logs the value the query computed
 *   from its members, before the scale (PCW__HIST_COMPUTED_FLAGS). A
 *   histogram's statistic ("Latency:p99") of an instance logs the
 *   histogram's words as they stand (PCW_HIST_CUMULATIVE), from which
 *   pcw__hist_cook takes the interval as the query did; its identity
 *   names the shape and the statistic.
 * - A group (record_group: a user's path whose instances' rows the query
 *   can hand over whole, pcw__q_raw_width, selecting every counter of its
 *   counterset in order) is W series per instance, one slot of W series
 *   per instance path it ever matched, in the order they appeared. Its
 *   rows go into the log as row samples (docs/history.md, "Row samples")
 *   straight from the query's snapshot (pcw__q_raw_sample): no value is
 *   cooked or copied. record_collect, pcwstat's collection when it
 *   records, compares one group's rows with the log's last words as the
 *   read copies them (pcw__q_collect_raw_cmp), so that the writer takes
 *   the rows that did not change without a second look. A new instance's
 *   slot is defined when the handle's instance epoch says its list
 *   changed; a gone instance's slot logs
 *   NO_INSTANCE; a _Total of the group (and any instance whose row is not
 *   there) is logged value by value in the same row sample.
 *
 * A sample is a row sample (pieces in series order: rows, values, absent
 * runs), or, while a histogram column has words to log (a row sample
 * holds none), a sample record of the same values.
 *
 * Samples gather in a block that is appended whole once it spans
 * `flush_ns` (pcwstat's --flush, default 10 s; 0: every sample is a
 * block): a recorder killed at any moment loses at most the samples of
 * that span, and more samples in a block are what lets the deltas and zstd
 * make the log small. The log is synced as PCW__HIST_SYNC_DEFAULT says.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcw/histogram.h>

#include "../../lib/history/codec.h"
#include "../../lib/query/collect_raw.h"
#include "pcwstat.h"

/* One instance path a group matched: its W series from `base`. */
typedef struct slot {
    char *key;     /* the path of its first counter, without the host */
    uint32_t base; /* its first series */
    int32_t pos;   /* its instance in the handle now; -1: gone */
} slot;

typedef struct group {
    pcw_pdh_counter *h;
    uint32_t width; /* W: the counterset's counters, all selected, in order */
    uint64_t epoch; /* the handle's instance epoch when the slots were mapped */
    int mapped;     /* epoch is meaningful */
    int same;       /* the handle still selects the W counters rows hold */
    size_t unknown; /* slots present whose identities are not logged yet */
    slot *slots;
    size_t nslots, slots_cap;
    uint32_t *hash;     /* open addressing over the slots' keys: slot + 1, 0 empty */
    size_t hash_cap;    /* a power of two, at least twice the slots */
    uint32_t *pos_slot; /* instance p of the handle: its slot */
    size_t npos, pos_cap;
    struct grun { /* the last collection's rows, as handed over: instances pos.. pos + n - 1 */
        size_t pos, n;
        const unsigned char *rows; /* NULL: no value */
        uint64_t time_ns;
        const uint64_t *changed; /* NULL, or bit pos + j: row j changed (record_collect) */
    } * runs;
    size_t nruns, runs_cap;
    size_t nrows; /* rows handed over (npos when they all were; else 0) */
    size_t stride;
    pcw__hist_layout layout[PCW__HIST_ROW_WORDS];
    int layouts; /* layout[] is the handle's now (rows can be logged) */
    /* Instances 0 .. npos - 1 are the series lin_base + pos * W (their
     * slots in order, one after the other: -1 when not), and record_collect
     * compared the rows of instances [0, cmp_rows) with the writer's words
     * of those series as it read them (bit pos of bits set: changed), for
     * the mapping of epoch cmp_epoch. */
    int64_t lin_base;
    uint64_t *bits;
    size_t bits_cap, cmp_rows;
    uint64_t cmp_epoch;
} group;

/* The series' sources in id order: a column (g 0) or slot idx of group g - 1. */
typedef struct unit {
    uint32_t g;
    uint32_t idx;
} unit;

/* A piece of the sample being written, in series order. */
enum { P_VALUES, P_ABSENT, P_ROWS };
typedef struct piece {
    int kind;
    uint32_t width;  /* P_ROWS */
    uint32_t status; /* P_ABSENT */
    size_t count;    /* series (P_VALUES, P_ABSENT), rows (P_ROWS) */
    size_t first;    /* P_VALUES: in vbuf */
    const unsigned char *rows;
    size_t stride;
    uint64_t time_ns;
    const uint64_t *changed; /* P_ROWS: NULL, or bit at + j: row j changed */
    size_t at;
} piece;

struct recorder {
    pcw__hist_writer *w;
    char *file; /* the log's name: the file being written */
    /* Per series (r->n of them): */
    size_t n, last_cap, known_cap, kind_cap;
    pcw__hist_series *last; /* the identity last logged */
    unsigned char *known, *kind;
    /* Columns: */
    const column *cols;
    size_t ncols, sid_cap, v_cap, hw_cap;
    uint32_t *col_sid;
    pcw__hist_value *v; /* per column: this sample's value */
    uint64_t **hw;      /* per column: a histogram's words (NULL: none yet) */
    /* Groups and the order of everything: */
    group **groups;
    size_t ngroups, groups_cap;
    unit *units;
    size_t nunits, units_cap;
    uint32_t *span; /* per unit: the present raw slots from it whose instances follow on */
    size_t span_cap;
    int spans_stale; /* units or mappings changed since span[] was made */
    /* This sample, as built (and rebuilt for a rotation's first sample): */
    piece *plan;
    size_t nplan, plan_cap;
    pcw__hist_value *vbuf;
    size_t nvbuf, vbuf_cap;
    pcw__hist_value *full; /* a sample record's values (histograms) */
    size_t full_cap;
    int as_sample;                    /* this sample is a sample record */
    uint64_t flush_ns;                /* a block spans this much time at most */
    uint64_t block_start;             /* the open block's first sample's time; 0: none */
    unsigned block_samples, in_block; /* a block's samples at most (0: any); the open one's */
    uint64_t max_size;                /* rotate once the file is this long (0: never) */
    unsigned max_files;               /* files kept: FILE, FILE.1 .. FILE.(max_files - 1) */
    uint64_t mono, real;              /* the last sample's times */
};

static void group_free(group *g)
{
    for (size_t i = 0; i < g->nslots; i++)
        free(g->slots[i].key);
    free(g->slots);
    free(g->hash);
    free(g->pos_slot);
    free(g->runs);
    free(g->bits);
    free(g);
}

void record_close(recorder *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        free(r->last[i].path);
    free(r->last);
    free(r->known);
    free(r->kind);
    free(r->col_sid);
    free(r->v);
    for (size_t i = 0; r->hw && i < r->ncols; i++)
        free(r->hw[i]);
    free(r->hw);
    for (size_t i = 0; i < r->ngroups; i++)
        group_free(r->groups[i]);
    free(r->groups);
    free(r->units);
    free(r->span);
    free(r->plan);
    free(r->vbuf);
    free(r->full);
    free(r->file);
    free(r);
}

/* The kind of a value, from what the query says it is now (no value: a
 * provider's instance). */
static uint32_t kind_of_value(pcw_pdh_counter *h, size_t i)
{
    pcw_pdh_value v;
    if (i < pcw_pdh_value_count(h) && pcw_pdh_get_value(h, i, PCW_FMT_RAW, &v) == PCW_OK &&
        v.kind != PCW_PDH_INSTANCE)
        return PCW__HIST_KIND_COMPUTED;
    return PCW__HIST_KIND_RAW;
}

/* Series r->n (path, kind) into the log and the per-series arrays. */
static int new_series(recorder *r, const char *path, uint32_t kind, char *why, size_t why_len)
{
    size_t i = r->n;
    if (grow(&r->last, &r->last_cap, i + 1, sizeof *r->last) ||
        grow(&r->known, &r->known_cap, i + 1, 1) || grow(&r->kind, &r->kind_cap, i + 1, 1))
        return snprintf(why, why_len, "out of memory"), -1;
    memset(&r->last[i], 0, sizeof r->last[i]);
    if (!(r->last[i].path = strdup(path))) /* (a rotation defines it again) */
        return snprintf(why, why_len, "out of memory"), -1;
    r->known[i] = 0;
    r->kind[i] = (unsigned char)kind;
    if (pcw__hist_writer_series(r->w, (uint32_t)i, path, kind)) {
        free(r->last[i].path);
        return snprintf(why, why_len,
                        "%s: cannot define series %zu (more than %u, or out of memory)", r->file,
                        i + 1, PCW__HIST_MAX_SERIES),
               -1;
    }
    r->n++;
    return 0;
}

static int add_unit(recorder *r, uint32_t g, uint32_t idx)
{
    if (grow(&r->units, &r->units_cap, r->nunits + 1, sizeof *r->units))
        return -1;
    r->units[r->nunits++] = (unit){g, idx};
    r->spans_stale = 1;
    return 0;
}

int record_columns(recorder *r, const column *cols, size_t n, char *why, size_t why_len)
{
    if (n < r->ncols || grow(&r->col_sid, &r->sid_cap, n, sizeof *r->col_sid) ||
        grow(&r->v, &r->v_cap, n, sizeof *r->v) || grow(&r->hw, &r->hw_cap, n, sizeof *r->hw)) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    r->cols = cols;
    for (size_t i = r->ncols; i < n; i++) {
        r->hw[i] = NULL;
        r->col_sid[i] = (uint32_t)r->n;
        r->ncols = i + 1;
        if (new_series(r, cols[i].path, kind_of_value(cols[i].h, 0), why, why_len))
            return -1;
        if (add_unit(r, 0, (uint32_t)i))
            return snprintf(why, why_len, "out of memory"), -1;
    }
    return 0;
}

void record_rotation(recorder *r, uint64_t max_size, unsigned max_files)
{
    r->max_size = max_size;
    r->max_files = max_files < 2 ? 2 : max_files;
}

void record_block_samples(recorder *r, unsigned n)
{
    r->block_samples = n;
}

recorder *record_open(int fd, const char *file, const column *cols, size_t n, uint64_t flush_ns,
                      char *why, size_t why_len)
{
    recorder *r = calloc(1, sizeof *r);
    if (!r || !(r->file = strdup(file))) {
        snprintf(why, why_len, "out of memory");
        free(r);
        close(fd);
        return NULL;
    }
    r->flush_ns = flush_ns;
    if (pcw__hist_writer_open(&r->w, fd, file, NULL, why, why_len)) {
        record_close(r);
        return NULL;
    }
    if (record_columns(r, cols, n, why, why_len)) {
        pcw__hist_writer_close(r->w, NULL, 0);
        record_close(r);
        return NULL;
    }
    return r;
}

/* The counter's metadata (the counterset's first registration's, which
 * every merged one shares: the default scale as the query applies it, a
 * histogram's shape), or NULL. */
static const pcw_counter *meta_of(pcw_pdh *q, const pcw_pdh_value *v)
{
    const pcw_merged_counterset *m =
        pcw_consumer_find_counterset(pcw_pdh_consumer(q), v->counterset);
    if (!m || v->counter_index >= m->meta->counter_count)
        return NULL;
    return &m->meta->counters[v->counter_index];
}

/* A histogram column's identity: the shape and the statistic its counter
 * name ends with ("Latency:p99"; the statistic's name has no ':'). */
static void histogram_ident(const pcw_counter *c, const pcw_pdh_value *v, pcw__hist_series *s)
{
    s->hshape = c ? c->histogram : 0;
    memset(&s->hstat, 0, sizeof s->hstat);
    const char *colon = strrchr(v->counter, ':');
    if (!colon || pcw_hist_stat_parse(colon + 1, &s->hstat) != PCW_OK)
        s->hshape = 0; /* not a statistic: pcw__hist_writer_ident refuses it */
}

/* Series sid's identity from value v (its layout l, or NULL: none),
 * logged when it differs from the one logged last. 0, or -1 with why. */
static int note_ident(recorder *r, pcw_pdh *q, size_t sid, const pcw_pdh_value *v,
                      const pcw__hist_layout *l, char *why, size_t why_len)
{
    pcw__hist_series *s = &r->last[sid];
    const pcw_counter *c = meta_of(q, v);
    uint32_t shape = c && v->counter_type == PERF_PCW_HISTOGRAM ? c->histogram : 0;
    pcw__hist_layout none = {0};
    if (!l)
        l = &none;
    if (r->known[sid] && s->provider_id == v->provider_id && s->instance_id == v->instance_id &&
        s->dup_index == v->dup_index && s->type == v->counter_type && s->hshape == shape &&
        memcmp(&s->layout, l, sizeof *l) == 0)
        return 0;
    s->type = v->counter_type;
    s->scale = c ? c->default_scale : 0;
    histogram_ident(c, v, s);
    s->provider_id = v->provider_id;
    s->instance_id = v->instance_id;
    s->pid = v->pid;
    s->dup_index = v->dup_index;
    s->layout = *l;
    r->known[sid] = 1;
    if (pcw__hist_writer_ident(r->w, (uint32_t)sid, s))
        return snprintf(why, why_len,
                        "series %zu: its histograms' buckets are more than a log may keep "
                        "(%u words), or out of memory",
                        sid + 1, PCW__HIST_MAX_HWORDS),
               -1;
    return 0;
}

/* Column i's histogram words as they stand into r->hw[i] and hv (its value
 * VALID): the words the provider wrote, sum and zero bucket first. A
 * histogram whose count since the start does not fit 64 bits has no
 * distribution to take them from: OVERFLOW. */
static int histogram_words(recorder *r, size_t i, uint32_t shape, pcw__hist_value *hv)
{
    pcw_hist_dist d;
    if (pcw_pdh_get_histogram(r->cols[i].h, 0, PCW_HIST_CUMULATIVE, &d) != PCW_OK)
        return -1;
    if (d.status != PCW_CSTATUS_VALID || d.shape != shape) {
        hv->raw.status = d.status == PCW_CSTATUS_VALID ? PCW_CSTATUS_NO_DATA : d.status;
        return 0;
    }
    uint32_t n = 2 + d.nbuckets;
    if (!r->hw[i] && !(r->hw[i] = malloc((size_t)(2 + PCW_HIST_MAX_BUCKETS) * sizeof **r->hw)))
        return -1;
    r->hw[i][0] = d.sum, r->hw[i][1] = d.zero;
    memcpy(r->hw[i] + 2, d.buckets, (size_t)d.nbuckets * sizeof *d.buckets);
    hv->hwords = r->hw[i], hv->hn = n;
    return 0;
}

/* Value vi of h as series sid logs it (its identity logged when new),
 * into hv. `col`: the column it is (histogram words), or -1. l: the
 * series' layout (a group's), or NULL. 0, or -1 with why. */
static int value_of(recorder *r, pcw_pdh *q, pcw_pdh_counter *h, size_t vi, size_t sid, long col,
                    const pcw__hist_layout *l, pcw__hist_value *hv, char *why, size_t why_len)
{
    memset(hv, 0, sizeof *hv);
    hv->raw.status = PCW_CSTATUS_NO_INSTANCE;
    pcw_pdh_value v;
    int computed = r->kind[sid] == PCW__HIST_KIND_COMPUTED;
    unsigned flags = computed ? PCW__HIST_COMPUTED_FLAGS : 0;
    if (vi >= pcw_pdh_value_count(h) || pcw_pdh_get_value(h, vi, flags, &v) != PCW_OK)
        return 0;
    if ((v.kind != PCW_PDH_INSTANCE) != computed ||
        (col < 0 && v.counter_type == PERF_PCW_HISTOGRAM)) {
        hv->raw.status = PCW_CSTATUS_NO_DATA; /* changed kind: not logged */
        return 0;
    }
    if (computed) {
        hv->raw.status = v.status;
        hv->computed = v.value;
    } else {
        hv->raw = v.raw;
    }
    if (v.raw.status != PCW_CSTATUS_VALID && !computed)
        return 0;
    if (note_ident(r, q, sid, &v, l, why, why_len))
        return -1;
    if (col >= 0 && r->last[sid].hshape && !computed &&
        histogram_words(r, (size_t)col, r->last[sid].hshape, hv) != 0)
        return snprintf(why, why_len, "out of memory"), -1;
    return 0;
}

/* ---- groups ----------------------------------------------------------------- */

/* Does h still select the W counters its rows hold, in order, with the
 * layouts rows need (into g->layout)? */
static int group_same(group *g)
{
    pcw_pdh_counter *h = g->h;
    if (pcw__q_raw_width(h) != g->width || pcw_pdh_selected_counter_count(h) != g->width)
        return 0;
    for (uint32_t k = 0; k < g->width; k++) {
        pcw_pdh_value v;
        if (pcw_pdh_get_value(h, k, PCW_FMT_RAW, &v) != PCW_OK || v.counter_index != k ||
            pcw__q_raw_layout(h, k, &g->layout[k]))
            return 0;
    }
    return 1;
}

/* FNV-1a of a slot's key. */
static size_t key_hash(const char *key)
{
    uint64_t h = 14695981039346656037ull;
    for (; *key; key++)
        h = (h ^ (unsigned char)*key) * 1099511628211ull;
    return (size_t)(h ^ h >> 32);
}

/* The first free cell of key's chain. */
static size_t hash_free(const group *g, const char *key)
{
    size_t m = g->hash_cap - 1, i = key_hash(key) & m;
    while (g->hash[i])
        i = (i + 1) & m;
    return i;
}

/* The slot of instance path `key` that no instance of this mapping took
 * yet (a path twice among the instances: a slot each), or NULL. Looked up
 * only when the handle's instances changed, in time independent of the
 * slots. */
static slot *find_slot(group *g, const char *key)
{
    if (!g->hash_cap)
        return NULL;
    size_t m = g->hash_cap - 1;
    for (size_t i = key_hash(key) & m; g->hash[i]; i = (i + 1) & m) {
        slot *s = &g->slots[g->hash[i] - 1];
        if (s->pos < 0 && strcmp(s->key, key) == 0)
            return s;
    }
    return NULL;
}

/* Slot i (its key set) into the hash, which grows to stay half empty. */
static int hash_add(group *g, size_t i)
{
    if (2 * (g->nslots + 1) > g->hash_cap) {
        size_t cap = g->hash_cap ? 2 * g->hash_cap : 64;
        uint32_t *h = calloc(cap, sizeof *h);
        if (!h)
            return -1;
        free(g->hash);
        g->hash = h, g->hash_cap = cap;
        for (size_t j = 0; j < g->nslots; j++)
            if (j != i)
                g->hash[hash_free(g, g->slots[j].key)] = (uint32_t)j + 1;
    }
    g->hash[hash_free(g, g->slots[i].key)] = (uint32_t)i + 1;
    return 0;
}

/* Instance p's W series as a new slot of g. */
static int new_slot(recorder *r, group *g, size_t gi, size_t p, const char *key, char *why,
                    size_t why_len)
{
    if (grow(&g->slots, &g->slots_cap, g->nslots + 1, sizeof *g->slots))
        return snprintf(why, why_len, "out of memory"), -1;
    slot *s = &g->slots[g->nslots];
    if (!(s->key = strdup(key)))
        return snprintf(why, why_len, "out of memory"), -1;
    s->base = (uint32_t)r->n;
    s->pos = (int32_t)p;
    if (hash_add(g, g->nslots)) {
        free(s->key);
        return snprintf(why, why_len, "out of memory"), -1;
    }
    g->nslots++;
    uint32_t kind = kind_of_value(g->h, p * g->width);
    for (uint32_t k = 0; k < g->width; k++) {
        char full[8192];
        if (pcw_pdh_value_path(g->h, p * g->width + k, 1, full, sizeof full) >= sizeof full)
            return snprintf(why, why_len, "a path longer than %zu bytes", sizeof full), -1;
        if (new_series(r, full, kind, why, why_len))
            return -1;
    }
    return add_unit(r, (uint32_t)gi + 1, (uint32_t)(g->nslots - 1)) ? -1 : 0;
}

/* Slot s's identities (its instance at s->pos), when its first value is
 * valid: 1 when logged, 0 not yet, -1 with why. */
static int slot_idents(recorder *r, pcw_pdh *q, group *g, const slot *s, char *why, size_t why_len)
{
    for (uint32_t k = 0; k < g->width; k++) {
        pcw_pdh_value v;
        size_t sid = s->base + k;
        if (pcw_pdh_get_value(g->h, (size_t)s->pos * g->width + k, PCW_FMT_RAW, &v) != PCW_OK ||
            (v.kind != PCW_PDH_INSTANCE) != (r->kind[sid] == PCW__HIST_KIND_COMPUTED))
            return 0;
        if (v.kind == PCW_PDH_INSTANCE && v.raw.status != PCW_CSTATUS_VALID)
            return 0;
        int rows = g->layouts && v.kind == PCW_PDH_INSTANCE;
        if (note_ident(r, q, sid, &v, rows ? &g->layout[k] : NULL, why, why_len))
            return -1;
    }
    return 1;
}

/* The handle's instances changed (or it is the first look): map them to
 * slots, new ones defined, and log the identities of those present. */
static int group_map(recorder *r, pcw_pdh *q, group *g, size_t gi, char *why, size_t why_len)
{
    g->epoch = pcw_pdh_instance_epoch(g->h);
    g->mapped = 1;
    r->spans_stale = 1;
    g->same = group_same(g);
    g->layouts = g->same;
    for (size_t i = 0; i < g->nslots; i++)
        g->slots[i].pos = -1;
    size_t ninst = g->same ? pcw_pdh_instance_count(g->h) : 0;
    g->npos = 0;
    if (grow(&g->pos_slot, &g->pos_cap, ninst + 1, sizeof *g->pos_slot))
        return snprintf(why, why_len, "out of memory"), -1;
    for (size_t p = 0; p < ninst; p++) {
        char key[8192];
        if (pcw_pdh_value_path(g->h, p * g->width, 0, key, sizeof key) >= sizeof key)
            return snprintf(why, why_len, "a path longer than %zu bytes", sizeof key), -1;
        slot *s = find_slot(g, key);
        if (!s && new_slot(r, g, gi, p, key, why, why_len))
            return -1;
        if (!s)
            s = &g->slots[g->nslots - 1];
        s->pos = (int32_t)p;
        g->pos_slot[p] = (uint32_t)(s - g->slots);
        g->npos = p + 1;
    }
    g->unknown = 0;
    for (size_t i = 0; i < g->nslots; i++) {
        if (g->slots[i].pos < 0)
            continue;
        int rc = slot_idents(r, q, g, &g->slots[i], why, why_len);
        if (rc < 0)
            return -1;
        g->unknown += rc == 0;
    }
    /* Are the instances' slots the series one after the other, in order
     * (record_collect's compare: instance pos's words at lin_base + pos * W)? */
    g->lin_base = -1;
    g->cmp_rows = 0;
    size_t p = 0;
    if (g->npos) {
        uint32_t b0 = g->slots[g->pos_slot[0]].base;
        while (p < g->npos && g->slots[g->pos_slot[p]].base == b0 + p * g->width)
            p++;
        if (p == g->npos)
            g->lin_base = b0;
    }
    return 0;
}

int record_group(recorder *r, pcw_pdh *q, pcw_pdh_counter *h, char *why, size_t why_len)
{
    uint32_t width = pcw__q_raw_width(h);
    if (!width || pcw_pdh_instance_count(h) == 0)
        return 0;
    group *g = calloc(1, sizeof *g);
    if (!g || grow(&r->groups, &r->groups_cap, r->ngroups + 1, sizeof *r->groups)) {
        free(g);
        return snprintf(why, why_len, "out of memory"), -1;
    }
    g->h = h;
    g->width = width;
    if (!group_same(g)) {
        free(g);
        return 0;
    }
    r->groups[r->ngroups++] = g;
    return group_map(r, q, g, r->ngroups - 1, why, why_len) ? -1 : 1;
}

/* pcw__q_raw_sample's runs, kept as they come (no look at each row). */
static int take_run(const pcw__q_raw_rows *run, void *arg)
{
    group *g = arg;
    if (run->nrows > g->npos - g->nrows ||
        grow(&g->runs, &g->runs_cap, g->nruns + 1, sizeof *g->runs)) {
        g->nrows = SIZE_MAX; /* more than the handle's instances: not as mapped */
        return 1;
    }
    g->runs[g->nruns++] = (struct grun){g->nrows, run->nrows, run->rows, run->time_ns};
    if (run->rows)
        g->stride = run->stride;
    g->nrows += run->nrows;
    return 0;
}

/* This collection's rows of g's instances (g->runs), or none (nrows 0:
 * every value of the group logged value by value); each run with the bits
 * record_collect found for its instances, if it compared them all under
 * this mapping. */
static void group_rows(group *g)
{
    g->nrows = g->nruns = 0;
    if (g->layouts && (pcw__q_raw_sample(g->h, take_run, g) != PCW_OK || g->nrows != g->npos))
        g->nrows = 0;
    int cmp = g->cmp_rows && g->cmp_epoch == g->epoch && g->lin_base >= 0;
    for (size_t i = 0; i < g->nruns; i++)
        g->runs[i].changed =
            cmp && g->runs[i].rows && g->runs[i].pos + g->runs[i].n <= g->cmp_rows ? g->bits : NULL;
    g->cmp_rows = 0;
}

/* pcw__q_collect_raw_cmp's runs: how many instances from the first were
 * compared in the read (their rows are taken after it: group_rows). */
static int take_cmp(const pcw__q_raw_rows *run, void *arg)
{
    group *g = arg;
    if (!run->nrows) /* a restart: none */
        g->cmp_rows = 0, g->cmp_epoch = 0;
    else if (run->changed && run->changed_at == g->cmp_rows && g->cmp_epoch)
        g->cmp_rows += run->nrows;
    else
        g->cmp_epoch = 0; /* a run not compared: the bits stop before it */
    return 0;
}

int record_collect(recorder *r, pcw_pdh *q, size_t *failed)
{
    group *g = NULL;
    for (size_t gi = 0; gi < r->ngroups && !g; gi++) {
        group *x = r->groups[gi];
        x->cmp_rows = 0;
        if (x->mapped && x->layouts && !x->unknown && x->lin_base >= 0 &&
            pcw_pdh_instance_epoch(x->h) == x->epoch)
            g = x;
    }
    size_t nw = 0;
    const uint64_t *words =
        g && r->w ? pcw__hist_writer_words(r->w, (size_t)g->lin_base, &nw) : NULL;
    size_t rows = g && nw / g->width < g->npos ? nw / g->width : g ? g->npos : 0;
    if (!words || !rows || grow(&g->bits, &g->bits_cap, (rows + 63) / 64, sizeof *g->bits))
        return pcw_pdh_collect(q, failed);
    g->cmp_epoch = g->epoch;
    int rc = pcw__q_collect_raw_cmp(q, failed, g->h, words, rows, g->width, g->bits, take_cmp, g);
    if (rc == PCW_E_INVALID_PARAMETER) /* (its rows cannot be handed over now) */
        return pcw_pdh_collect(q, failed);
    if (rc != PCW_OK || !g->cmp_epoch)
        g->cmp_rows = 0;
    return rc;
}

/* The run holding instance pos (the runs cover 0 .. npos - 1 in order). */
static const struct grun *run_of(const group *g, size_t pos)
{
    size_t lo = 0, hi = g->nruns;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->runs[mid].pos <= pos)
            lo = mid;
        else
            hi = mid;
    }
    return &g->runs[lo];
}

/* span[u] for every unit: how many present raw slots from unit u on are
 * the instances pos, pos + 1, ... of one group - rows that go into a row
 * sample as the runs give them, without a look at each. */
static int make_spans(recorder *r)
{
    if (grow(&r->span, &r->span_cap, r->nunits + 1, sizeof *r->span))
        return -1;
    for (size_t u = r->nunits; u-- > 0;) {
        const unit *x = &r->units[u];
        uint32_t len = 0;
        if (x->g) {
            const group *g = r->groups[x->g - 1];
            const slot *s = &g->slots[x->idx];
            if (s->pos >= 0 && r->kind[s->base] == PCW__HIST_KIND_RAW) {
                len = 1;
                const unit *y = u + 1 < r->nunits ? &r->units[u + 1] : NULL;
                if (y && y->g == x->g && r->span[u + 1] && g->slots[y->idx].pos == s->pos + 1)
                    len += r->span[u + 1];
            }
        }
        r->span[u] = len;
    }
    r->spans_stale = 0;
    return 0;
}

/* ---- the sample's pieces --------------------------------------------------- */

static piece *plan_add(recorder *r, int kind)
{
    if (r->nplan) {
        piece *p = &r->plan[r->nplan - 1];
        if (p->kind == kind && kind == P_VALUES)
            return p;
    }
    if (grow(&r->plan, &r->plan_cap, r->nplan + 1, sizeof *r->plan))
        return NULL;
    piece *p = &r->plan[r->nplan++];
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->first = r->nvbuf;
    return p;
}

/* Room for one more value in vbuf: it, or NULL. */
static pcw__hist_value *plan_value(recorder *r)
{
    piece *p = plan_add(r, P_VALUES);
    if (!p || grow(&r->vbuf, &r->vbuf_cap, r->nvbuf + 1, sizeof *r->vbuf))
        return NULL;
    p->count++;
    return &r->vbuf[r->nvbuf++];
}

static int plan_absent(recorder *r, size_t count, uint32_t status)
{
    piece *p = r->nplan ? &r->plan[r->nplan - 1] : NULL;
    if (p && p->kind == P_ABSENT && p->status == status) {
        p->count += count;
        return 0;
    }
    if (!(p = plan_add(r, P_ABSENT)))
        return -1;
    p->count = count, p->status = status;
    return 0;
}

/* n rows of g from `rows` read at t, continuing the last piece when
 * they are the next rows in memory of the same time. */
static int plan_rows(recorder *r, const group *g, const unsigned char *rows, size_t n, uint64_t t,
                     const uint64_t *changed, size_t at)
{
    piece *p = r->nplan ? &r->plan[r->nplan - 1] : NULL;
    if (p && p->kind == P_ROWS && p->width == g->width && p->stride == g->stride &&
        p->time_ns == t && rows == p->rows + p->count * p->stride && p->changed == changed &&
        (!changed || at == p->at + p->count)) {
        p->count += n;
        return 0;
    }
    if (!(p = plan_add(r, P_ROWS)))
        return -1;
    *p = (piece){P_ROWS, g->width, 0, n, 0, rows, g->stride, t, changed, at};
    return 0;
}

/* Slot si of group gi into the plan. */
static int plan_slot(recorder *r, pcw_pdh *q, size_t gi, size_t si, char *why, size_t why_len)
{
    group *g = r->groups[gi];
    const slot *s = &g->slots[si];
    if (s->pos < 0)
        return plan_absent(r, g->width, PCW_CSTATUS_NO_INSTANCE)
                   ? (snprintf(why, why_len, "out of memory"), -1)
                   : 0;
    size_t p = (size_t)s->pos;
    const pcw__hist_series *id = &r->last[s->base];
    const struct grun *run = g->nrows ? run_of(g, p) : NULL;
    if (run && run->rows && r->kind[s->base] == PCW__HIST_KIND_RAW &&
        r->known[s->base + g->width - 1] && id->layout.words &&
        r->last[s->base + g->width - 1].layout.words)
        return plan_rows(r, g, run->rows + (p - run->pos) * g->stride, 1, run->time_ns,
                         run->changed, p)
                   ? (snprintf(why, why_len, "out of memory"), -1)
                   : 0;
    for (uint32_t k = 0; k < g->width; k++) {
        pcw__hist_value *hv = plan_value(r);
        if (!hv)
            return snprintf(why, why_len, "out of memory"), -1;
        if (value_of(r, q, g->h, p * g->width + k, s->base + k, -1, NULL, hv, why, why_len))
            return -1;
    }
    return 0;
}

/* The m slots of span u (group gi's instances pos .. pos + m - 1, every
 * identity logged): the runs' rows as they are, an instance without a row
 * value by value. */
static int plan_span(recorder *r, pcw_pdh *q, size_t gi, size_t pos, size_t m, char *why,
                     size_t why_len)
{
    const group *g = r->groups[gi];
    for (size_t end = pos + m; pos < end;) {
        const struct grun *run = run_of(g, pos);
        size_t to = run->pos + run->n < end ? run->pos + run->n : end;
        if (run->rows) {
            if (plan_rows(r, g, run->rows + (pos - run->pos) * g->stride, to - pos, run->time_ns,
                          run->changed, pos))
                return snprintf(why, why_len, "out of memory"), -1;
            pos = to;
            continue;
        }
        for (; pos < to; pos++)
            if (plan_slot(r, q, gi, g->pos_slot[pos], why, why_len))
                return -1;
    }
    return 0;
}

/* The sample's pieces in series order (identities logged on the way,
 * before the sample begins). */
static int make_plan(recorder *r, pcw_pdh *q, char *why, size_t why_len)
{
    r->nplan = r->nvbuf = 0;
    r->as_sample = 0;
    if (r->spans_stale && make_spans(r))
        return snprintf(why, why_len, "out of memory"), -1;
    for (size_t u = 0; u < r->nunits; u++) {
        const unit *x = &r->units[u];
        if (x->g) {
            const group *g = r->groups[x->g - 1];
            size_t m = r->span[u];
            if (m > 1 && g->nrows && !g->unknown && g->layouts) {
                if (plan_span(r, q, x->g - 1, (size_t)g->slots[x->idx].pos, m, why, why_len))
                    return -1;
                u += m - 1;
                continue;
            }
            if (plan_slot(r, q, x->g - 1, x->idx, why, why_len))
                return -1;
            continue;
        }
        pcw__hist_value *hv = plan_value(r);
        if (!hv)
            return snprintf(why, why_len, "out of memory"), -1;
        if (value_of(r, q, r->cols[x->idx].h, 0, r->col_sid[x->idx], (long)x->idx, NULL, hv, why,
                     why_len))
            return -1;
        /* (A histogram's series is never in a row sample.) */
        r->as_sample |= hv->hn > 0 || r->last[r->col_sid[x->idx]].hshape != 0;
    }
    return 0;
}

/* The plan as one sample record's values (r->full). */
static int plan_values(recorder *r)
{
    if (grow(&r->full, &r->full_cap, r->n + 1, sizeof *r->full))
        return -1;
    size_t at = 0;
    for (size_t i = 0; i < r->nplan; i++) {
        const piece *p = &r->plan[i];
        if (p->kind == P_VALUES) {
            memcpy(&r->full[at], &r->vbuf[p->first], p->count * sizeof *r->full);
            at += p->count;
        } else if (p->kind == P_ABSENT) {
            for (size_t j = 0; j < p->count; j++)
                r->full[at++] = (pcw__hist_value){.raw = {.status = (int)p->status}};
        } else {
            for (size_t row = 0; row < p->count; row++) {
                uint64_t w[PCW__HIST_ROW_WORDS];
                memcpy(w, p->rows + row * p->stride, p->width * sizeof *w);
                for (uint32_t j = 0; j < p->width; j++, at++) {
                    r->full[at] = (pcw__hist_value){0};
                    pcw__hist_row_raw(&r->last[at].layout, w, p->time_ns, &r->full[at].raw);
                }
            }
        }
    }
    return 0;
}

/* The plan into the log: a row sample, or a sample record. */
static int write_plan(recorder *r, uint64_t mono, uint64_t real)
{
    if (r->as_sample)
        return plan_values(r) || pcw__hist_writer_sample(r->w, mono, real, r->full, r->n) ? -1 : 0;
    if (pcw__hist_writer_rows_begin(r->w, r->n))
        return -1;
    for (size_t i = 0; i < r->nplan; i++) {
        const piece *p = &r->plan[i];
        int rc = p->kind == P_VALUES
                     ? pcw__hist_writer_rows_values(r->w, &r->vbuf[p->first], p->count)
                 : p->kind == P_ABSENT
                     ? pcw__hist_writer_rows_absent(r->w, p->count, p->status)
                     : pcw__hist_writer_rows_cmp(r->w, p->rows, p->stride, p->count, p->width,
                                                 p->time_ns, p->changed, p->at);
        if (rc) {
            pcw__hist_writer_rows_cancel(r->w);
            return -1;
        }
    }
    return pcw__hist_writer_rows_end(r->w, mono, real);
}

/* FILE.k's name into buf (k 0: FILE). */
static int numbered(char *buf, size_t len, const char *file, unsigned k)
{
    int n = k ? snprintf(buf, len, "%s.%u", file, k) : snprintf(buf, len, "%s", file);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The file reached max_size at the end of a block: close it (synced), move
 * FILE.k to FILE.k+1 and FILE to FILE.1 (the oldest, FILE.(max_files-1),
 * replaced), and start FILE again: every series defined anew, every known
 * identity, then the last sample once more - the new file's first sample
 * primes its rates as a log's first sample does, so FILE.1's rows and
 * FILE's follow on without a gap or a repeat. FILE is created new
 * (O_EXCL, O_NOFOLLOW): a name planted in between is an error. */
int record_shift(const char *file, unsigned max_files, char *why, size_t why_len)
{
    char from[PATH_MAX], to[PATH_MAX];
    for (unsigned k = (max_files < 2 ? 2 : max_files) - 1; k >= 1; k--) {
        if (numbered(from, sizeof from, file, k - 1) || numbered(to, sizeof to, file, k))
            return snprintf(why, why_len, "%s: name too long to rotate", file), -1;
        if (rename(from, to) != 0 && errno != ENOENT)
            return snprintf(why, why_len, "%s: cannot rotate to %s: %s", from, to, strerror(errno)),
                   -1;
    }
    return 0;
}

static int rotate(recorder *r, char *why, size_t why_len)
{
    int rc = pcw__hist_writer_close(r->w, why, why_len);
    r->w = NULL;
    if (rc || record_shift(r->file, r->max_files, why, why_len))
        return -1;
    int fd = open(r->file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return snprintf(why, why_len, "%s: cannot start the next file: %s", r->file,
                        strerror(errno)),
               -1;
    if (pcw__hist_writer_open(&r->w, fd, r->file, NULL, why, why_len))
        return -1;
    for (size_t i = 0; i < r->n; i++)
        if (pcw__hist_writer_series(r->w, (uint32_t)i, r->last[i].path, r->kind[i]))
            return snprintf(why, why_len, "%s: out of memory", r->file), -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->known[i] && pcw__hist_writer_ident(r->w, (uint32_t)i, &r->last[i]))
            return snprintf(why, why_len, "%s: out of memory", r->file), -1;
    /* The same pieces again: the rows are still the last collection's. */
    if (write_plan(r, r->mono, r->real))
        return snprintf(why, why_len, "%s: out of memory", r->file), -1;
    r->block_start = r->mono;
    return 0;
}

int record_sample(recorder *r, pcw_pdh *q, char *why, size_t why_len)
{
    if (!r->w)
        return snprintf(why, why_len, "%s: an earlier error ended the log", r->file), -1;
    for (size_t gi = 0; gi < r->ngroups; gi++) {
        group *g = r->groups[gi];
        if (!g->mapped || pcw_pdh_instance_epoch(g->h) != g->epoch) {
            if (group_map(r, q, g, gi, why, why_len))
                return -1;
        } else if (g->unknown) {
            g->unknown = 0;
            for (size_t i = 0; i < g->nslots; i++) {
                int rc = g->slots[i].pos < 0 || r->known[g->slots[i].base + g->width - 1]
                             ? 1
                             : slot_idents(r, q, g, &g->slots[i], why, why_len);
                if (rc < 0)
                    return -1;
                g->unknown += rc == 0;
            }
        }
        group_rows(g);
    }
    if (make_plan(r, q, why, why_len))
        return -1;
    uint64_t now = pcw_pdh_time_ns(q);
    r->mono = now, r->real = pcw_pdh_realtime_ns(q);
    if (write_plan(r, now, r->real)) {
        /* A block it ended could not be written (the flush says why), or
         * out of memory. */
        if (pcw__hist_writer_flush(r->w, why, why_len) == 0)
            snprintf(why, why_len, "out of memory");
        return -1;
    }
    if (!r->block_start)
        r->block_start = now;
    r->in_block++;
    if (now - r->block_start < r->flush_ns && (!r->block_samples || r->in_block < r->block_samples))
        return 0;
    r->block_start = 0;
    r->in_block = 0;
    if (pcw__hist_writer_flush(r->w, why, why_len))
        return -1;
    if (r->max_size && pcw__hist_writer_bytes(r->w) >= r->max_size)
        return rotate(r, why, why_len);
    return 0;
}

int record_finish(recorder *r, char *why, size_t why_len)
{
    int rc = r->w ? pcw__hist_writer_close(r->w, why, why_len) : 0;
    r->w = NULL;
    record_close(r);
    return rc;
}
