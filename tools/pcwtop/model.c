/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/model.c - one refresh of pcwtop's data (model.h): collect
 * the shown counterset through the query layer and keep the table of its
 * instances; cook values when they are asked for.
 *
 * The steady state - the same instances as last time, which the query says
 * with an unchanged pcw_pdh_instance_epoch - keeps the table as it is. When
 * the epoch moves, the table is built again from the query's instances and
 * matched with the last one by identity (provider, instance id, kind,
 * name): rows keep their "appeared in" mark, and rows that went away stay
 * TOP_GONE_REFRESHES refreshes at the place they had, marked gone (or
 * exited, when their provider did), so nothing on screen is silently
 * shuffled.
 *
 * Providers: every refresh looks at each segment's provider (alive or not)
 * to count live and exited ones and to report exits.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include <pcw/histogram.h>
#include "common/layout.h"
#include "common/name.h"

#include "../common/container.h"
#include "../common/grow.h"
#include "model.h"

/* Providers remembered for exit reports; beyond this the oldest exited
 * ones are forgotten (their count stays). */
#define MAX_KNOWN_PROVIDERS 4096u

typedef struct known_provider {
    uint64_t id;
    int32_t pid;
    int alive;
    uint64_t seen; /* refresh it was last found in */
    char name[64];
} known_provider;

struct top_model {
    pcw_pdh *q;
    pcw_pdh_counter *h;
    char *want;     /* counterset asked for, NULL: none */
    int want_first; /* show the first one when none is asked for */
    char *shown;    /* counterset of h */
    int raw;
    uint64_t seq;
    uint64_t hash_seed;
    uint64_t next_table_id;
    top_frame f;      /* the last collection */
    top_table *table; /* its table (f.table holds a reference too) */
    /* top_model_column's cache: column col_k of refresh col_seq. */
    double *col_v;
    uint8_t *col_st;
    size_t col_cap;
    uint64_t col_seq;
    uint32_t col_k;
    int col_raw;
    int unfused;   /* top_model_set_fused(m, 0) */
    int col_asked; /* top_model_column was called since the last
                      collection: the next one converts column col_k as
                      it reads the rows (pcw_pdh_collect_column) */
    /* top_model_top's list: column top_k of refresh top_seq, ranked in
     * direction top_desc for top_want instances (top_n of them ranked). */
    pcw_pdh_ranked *top_v;
    size_t top_cap, top_n, top_want;
    uint64_t top_seq;
    uint32_t top_k;
    int top_desc, top_raw;
    /* ...and what the view asked of it since the last collection: the
     * next one ranks column ask_k (ask_desc) for ask_want instances. */
    int top_asked, ask_desc;
    uint32_t ask_k;
    size_t ask_want;
    known_provider *known;
    size_t nknown, known_cap;
    size_t exited_forgotten; /* exited providers dropped from `known` */
    uint64_t note_table;     /* the table id f.note was written for */
    uint32_t detail;         /* pcw_pdh_set_detail: which counters are columns */
    int reshow;              /* the handle of `shown` is to be made again */
    int containers;          /* rows name their container (options' containers) */
    char container[80];      /* the paths' host part (top_model_set_container); "" none */
    int log;                 /* a query on logs (top_model_open_log) */
    char **files;            /* ...its files (top_model_log_span reads them again) */
    size_t nfiles;
    int prime; /* log: read one sample first (top_model_seek) */
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- tables ------------------------------------------------------------- */

static void columns_free(top_column *c, uint32_t n)
{
    for (uint32_t k = 0; c && k < n; k++) {
        free(c[k].name);
        free(c[k].description);
        free(c[k].base);
    }
    free(c);
}

void top_table_ref(top_table *t)
{
    if (t)
        atomic_fetch_add_explicit((_Atomic int *)&t->refs, 1, memory_order_relaxed);
}

void top_table_unref(top_table *t)
{
    /* acq_rel: the last owner's frees happen after every other owner's
     * reads (the usual reference-count pairing with itself). */
    if (!t || atomic_fetch_sub_explicit((_Atomic int *)&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(t->rows);
    free(t->names);
    columns_free(t->cols, t->ncols);
    free(t->hash);
    free(t->qi_row);
    free(t);
}

/* A seeded 64-bit hash of an instance's identity (the seed keeps a
 * provider from choosing names that collide in our table). */
static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static uint64_t identity(uint64_t seed, uint64_t provider, uint32_t id, uint32_t kind,
                         const char *name, size_t len)
{
    uint64_t h = mix(seed ^ provider) ^ mix(((uint64_t)id << 8) | kind);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        memcpy(&w, name + i, len - i < 8 ? len - i : 8);
        h = mix(h ^ w) + len;
    }
    return h ? h : 1;
}

uint32_t top_table_find(const top_table *t, uint64_t key)
{
    if (!t || !t->hash_cap)
        return UINT32_MAX;
    for (size_t i = key & (t->hash_cap - 1); t->hash[i]; i = (i + 1) & (t->hash_cap - 1))
        if (t->rows[t->hash[i] - 1].key == key)
            return t->hash[i] - 1;
    return UINT32_MAX;
}

static int same_instance(const top_table *a, const top_row *x, const top_table *b, const top_row *y)
{
    return x->key == y->key && x->provider_id == y->provider_id &&
           x->instance_id == y->instance_id && x->kind == y->kind && x->name_len == y->name_len &&
           memcmp(top_row_name(a, x), top_row_name(b, y), x->name_len) == 0;
}

/* The row of `t` that is instance x of table `of`, or UINT32_MAX. */
static uint32_t find_same(const top_table *t, const top_table *of, const top_row *x)
{
    if (!t || !t->hash_cap)
        return UINT32_MAX;
    for (size_t i = x->key & (t->hash_cap - 1); t->hash[i]; i = (i + 1) & (t->hash_cap - 1))
        if (same_instance(t, &t->rows[t->hash[i] - 1], of, x))
            return t->hash[i] - 1;
    return UINT32_MAX;
}

static int index_rows(top_table *t)
{
    size_t cap = 16;
    while (cap < 2 * t->nrows + 2)
        cap *= 2;
    t->hash = calloc(cap, sizeof *t->hash);
    if (!t->hash)
        return -1;
    t->hash_cap = cap;
    for (size_t r = 0; r < t->nrows; r++) {
        size_t i = t->rows[r].key & (cap - 1);
        while (t->hash[i])
            i = (i + 1) & (cap - 1);
        t->hash[i] = (uint32_t)r + 1;
    }
    return 0;
}

static const char *unit_of(uint32_t type)
{
    switch (type & 0xF0000000u) {
    case PCW_PERF_DISPLAY_PER_SEC:
        return "/s";
    case PCW_PERF_DISPLAY_PERCENT:
        return "%";
    case PCW_PERF_DISPLAY_SECONDS:
        return "s";
    }
    return "";
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* Fill col for counter i of cs (statistic st of a histogram, or NULL).
 * 0, or -1 out of memory. */
static int make_column(const pcw_counterset *cs, uint32_t i, const pcw_hist_stat *st,
                       top_column *col)
{
    const pcw_counter *ctr = &cs->counters[i];
    col->index = i;
    col->id = ctr->id;
    col->type = ctr->type;
    col->aggregate = ctr->aggregate;
    col->detail_level = ctr->detail_level;
    col->attributes = ctr->attributes;
    col->scale = ctr->default_scale;
    col->unit = unit_of(ctr->type);
    /* The base: the counter base_id names, else the next counter when
     * it has a base type (Windows' rule, docs/query.md). */
    const char *base = "";
    if (pcw_counter_type_needs_base(ctr->type)) {
        for (uint32_t j = 0; ctr->base_id != PCW_NO_COUNTER && j < cs->counter_count; j++)
            if (cs->counters[j].id == ctr->base_id)
                base = cs->counters[j].name;
        if (!*base && i + 1 < cs->counter_count &&
            pcw_counter_type_is_base(cs->counters[i + 1].type))
            base = cs->counters[i + 1].name;
    }
    if (st) {
        /* "Latency:p99": a rate per second, a count, or a value in the
         * histogram's exported unit (seconds for nanosecond histograms). */
        char stat[32];
        pcw_hist_stat_name(st, stat, sizeof stat);
        const char *name = ctr->name ? ctr->name : "";
        size_t len = strlen(name) + 1 + strlen(stat) + 1;
        col->name = malloc(len);
        if (col->name)
            snprintf(col->name, len, "%s:%s", name, stat);
        col->shape = ctr->histogram;
        col->stat_len = (uint32_t)strlen(stat) + 1;
        col->unit = st->kind == PCW_HSTAT_RATE                          ? "/s"
                    : st->kind == PCW_HSTAT_COUNT                       ? ""
                    : pcw_hist_unit(ctr->histogram) == PCW_HIST_UNIT_NS ? "s"
                                                                        : "";
    } else {
        col->name = dup_or_empty(ctr->name);
    }
    col->description = dup_or_empty(ctr->description);
    col->base = dup_or_empty(base);
    return col->name && col->description && col->base ? 0 : -1;
}

/* The columns of cs: the counters "\Set(*)\*" selects at detail level
 * `detail` (pcw_counter_in_wildcard), in the order the handle has them
 * (every one but bases and PERF_COUNTER_NODATA); a histogram counter
 * gives one column per default statistic (pcw_hist_default_stats). */
static int make_columns(const pcw_counterset *cs, uint32_t detail, top_column **out, uint32_t *n)
{
    size_t nstats, cap = 1;
    const pcw_hist_stat *stats = pcw_hist_default_stats(&nstats);
    for (uint32_t i = 0; i < cs->counter_count; i++)
        cap += cs->counters[i].type == PERF_PCW_HISTOGRAM ? nstats : 1;
    top_column *c = calloc(cap, sizeof *c);
    if (!c)
        return -1;
    uint32_t k = 0;
    for (uint32_t i = 0; i < cs->counter_count; i++) {
        const pcw_counter *ctr = &cs->counters[i];
        if (!pcw_counter_in_wildcard(ctr->type, ctr->detail_level, detail))
            continue;
        int hist = ctr->type == PERF_PCW_HISTOGRAM;
        for (size_t s = 0; s < (hist ? nstats : 1); s++)
            if (make_column(cs, i, hist ? &stats[s] : NULL, &c[k++]) != 0) {
                columns_free(c, k);
                return -1;
            }
    }
    *out = c;
    *n = k;
    return 0;
}

/* A log's columns: the counters the handle selects, as the values of its
 * first instance name them (the log keeps names, types and scales, not
 * descriptions, bases or detail levels). */
static int make_log_columns(const top_model *m, top_column **out, uint32_t *n)
{
    size_t K = pcw_pdh_selected_counter_count(m->h);
    *out = NULL;
    *n = 0;
    if (!K || !pcw_pdh_instance_count(m->h))
        return 0;
    top_column *c = calloc(K, sizeof *c);
    if (!c)
        return -1;
    for (size_t k = 0; k < K; k++) {
        pcw_pdh_value v;
        memset(&v, 0, sizeof v);
        pcw_pdh_get_value(m->h, k, PCW_FMT_RAW, &v);
        c[k].index = v.counter_index;
        c[k].type = v.counter_type;
        c[k].detail_level = PCW_DETAIL_STANDARD;
        c[k].unit = unit_of(v.counter_type);
        c[k].name = dup_or_empty(v.counter);
        c[k].description = dup_or_empty("");
        c[k].base = dup_or_empty("");
        if (!c[k].name || !c[k].description || !c[k].base) {
            columns_free(c, (uint32_t)k + 1);
            return -1;
        }
    }
    *out = c;
    *n = (uint32_t)K;
    return 0;
}

/* A copy of t's columns (none when t is NULL). */
static int copy_columns(const top_table *t, top_column **out, uint32_t *n)
{
    *out = NULL;
    *n = 0;
    if (!t || !t->ncols)
        return 0;
    top_column *c = calloc(t->ncols, sizeof *c);
    if (!c)
        return -1;
    for (uint32_t k = 0; k < t->ncols; k++) {
        c[k] = t->cols[k];
        c[k].name = strdup(t->cols[k].name);
        c[k].description = strdup(t->cols[k].description);
        c[k].base = strdup(t->cols[k].base);
        if (!c[k].name || !c[k].description || !c[k].base) {
            columns_free(c, k + 1);
            return -1;
        }
    }
    *out = c;
    *n = t->ncols;
    return 0;
}

/* Build the table of this collection - columns `cols` (taken over) - from
 * the query's instances, matched with `old` (the last table of the same
 * counterset, or NULL). */
static top_table *build_table(top_model *m, top_column *cols, uint32_t ncols, uint64_t epoch,
                              const top_table *old)
{
    top_table *t = calloc(1, sizeof *t);
    if (!t) {
        columns_free(cols, ncols);
        return NULL;
    }
    t->refs = 1;
    t->id = ++m->next_table_id;
    t->epoch = epoch;
    t->cols = cols; /* ours now */
    t->ncols = ncols;
    size_t nq = pcw_pdh_instance_count(m->h);
    uint32_t K = (uint32_t)pcw_pdh_selected_counter_count(m->h);
    if (K != t->ncols)
        nq = 0; /* re-registered between two looks: the next epoch fixes it */
    /* Old rows that stay as gone rows. */
    size_t nold = old ? old->nrows : 0;
    uint8_t *matched = calloc(nold ? nold : 1, 1);
    if (!matched)
        goto fail;
    /* 1. The query's instances. */
    size_t rows_cap = nq + nold + 1;
    t->rows = calloc(rows_cap, sizeof *t->rows);
    top_row *q = calloc(nq ? nq : 1, sizeof *q);
    size_t names_cap = 0, ctr_hint = 0;
    if (!t->rows || !q) {
        free(q);
        free(matched);
        goto fail;
    }
    for (size_t i = 0; i < nq; i++) {
        pcw_pdh_value v;
        if (pcw_pdh_get_value(m->h, i * K, 0, &v) != PCW_OK)
            memset(&v, 0, sizeof v), v.instance = v.instance_name = "";
        size_t len = strlen(v.instance);
        if (len > UINT32_MAX / 4 || t->names_len + len + 1 > UINT32_MAX ||
            grow((void **)&t->names, &names_cap, t->names_len + len + 1, 1)) {
            free(q);
            free(matched);
            goto fail;
        }
        top_row *r = &q[i];
        r->name_off = (uint32_t)t->names_len;
        r->name_len = (uint32_t)len;
        memcpy(t->names + t->names_len, v.instance, len + 1);
        t->names_len += len + 1;
        r->qi = (uint32_t)i;
        r->instance_id = v.instance_id;
        r->pid = v.pid;
        /* Its container's name, now: the segment (and its identity) may be
         * gone by the time the UI thread draws the row. */
        r->ctr[0] = r->pod[0] = 0;
        if (m->containers && v.kind == PCW_PDH_INSTANCE) {
            const pcw_container_info *ci =
                tc_container(pcw_pdh_consumer(m->q), v.provider_id, &ctr_hint);
            tc_container_name(ci, r->ctr, sizeof r->ctr);
            if (ci && ci->pod[0])
                snprintf(r->pod, sizeof r->pod, "%s/%s", ci->pod_namespace, ci->pod);
        }
        r->provider_id = v.provider_id;
        r->kind = (uint8_t)v.kind;
        r->state = TOP_ROW_LIVE;
        r->key = identity(m->hash_seed, v.provider_id, v.instance_id, v.kind, v.instance, len);
        r->born = old ? m->seq : 0;
    }
    if (!t->names && !(t->names = calloc(1, 1))) {
        free(q);
        free(matched);
        goto fail;
    }
    /* 2. Match them with the old rows: they keep their marks. newpos[o]
     * is old row o's query index + 1 (0: gone). */
    uint32_t *newpos = calloc(nold ? nold : 1, sizeof *newpos);
    if (!newpos) {
        free(q);
        free(matched);
        goto fail;
    }
    for (size_t i = 0; i < nq; i++) {
        top_row *r = &q[i];
        uint32_t o = find_same(old, t, r);
        if (o == UINT32_MAX || matched[o])
            continue;
        matched[o] = 1;
        newpos[o] = (uint32_t)i + 1;
        if (old->rows[o].state == TOP_ROW_LIVE)
            r->born = old->rows[o].born;
    }
    /* 3. Old rows not matched: gone rows, kept a few refreshes, each after
     * the nearest row before it that is still there (attach[g] = that
     * row's query index + 1, 0 = at the top). */
    uint32_t *gone = calloc(nold ? nold : 1, sizeof *gone);
    uint32_t *attach = calloc(nold ? nold : 1, sizeof *attach);
    size_t ngone = 0;
    if (!gone || !attach) {
        free(gone), free(attach), free(q), free(matched), free(newpos);
        goto fail;
    }
    for (size_t o = 0; o < nold; o++) {
        const top_row *r = &old->rows[o];
        if (matched[o])
            continue;
        uint64_t went = r->gone ? r->gone : m->seq;
        if (m->seq - went >= TOP_GONE_REFRESHES)
            continue;
        gone[ngone] = (uint32_t)o;
        attach[ngone++] = 0;
    }
    {
        /* Where each gone row goes: after the last earlier old row that
         * is still there. One walk over the old rows in order. */
        size_t g = 0;
        uint32_t last = 0;
        for (size_t o = 0; o < nold && g < ngone; o++) {
            if (newpos[o])
                last = newpos[o];
            else if (gone[g] == o)
                attach[g++] = last;
        }
    }
    free(newpos);
    /* 4. The rows: gone rows attached at the top, then each query row
     * followed by the gone rows attached to it. attach[] is not sorted
     * when providers were read in another order: a counting pass. */
    size_t *count = calloc(nq + 2, sizeof *count);
    if (!count) {
        free(gone), free(attach), free(q), free(matched);
        goto fail;
    }
    for (size_t g = 0; g < ngone; g++)
        count[attach[g] + 1]++;
    for (size_t i = 1; i < nq + 2; i++)
        count[i] += count[i - 1];
    uint32_t *order = calloc(ngone ? ngone : 1, sizeof *order);
    if (!order) {
        free(order), free(count), free(gone), free(attach), free(q), free(matched);
        goto fail;
    }
    for (size_t g = 0; g < ngone; g++)
        order[count[attach[g]]++] = (uint32_t)g; /* stable: old order kept */
    /* count[a] is now the end of bucket a; bucket a starts at count[a-1]
     * (0 for a = 0). */
    size_t n = 0, gi = 0;
    for (size_t a = 0; a <= nq; a++) {
        if (a > 0)
            t->rows[n++] = q[a - 1];
        size_t end = count[a];
        for (; gi < end; gi++) {
            const top_row *o = &old->rows[gone[order[gi]]];
            top_row *r = &t->rows[n++];
            size_t len = o->name_len;
            if (t->names_len + len + 1 > UINT32_MAX ||
                grow((void **)&t->names, &names_cap, t->names_len + len + 1, 1)) {
                free(order), free(count), free(gone), free(attach), free(q), free(matched);
                goto fail;
            }
            *r = *o;
            r->name_off = (uint32_t)t->names_len;
            memcpy(t->names + t->names_len, top_row_name(old, o), len);
            t->names[t->names_len + len] = 0;
            t->names_len += len + 1;
            r->qi = UINT32_MAX;
            t->nghosts++;
            if (!o->gone) {
                r->gone = m->seq;
                r->state = TOP_ROW_GONE;
            }
        }
    }
    t->nrows = n;
    t->nq = nq;
    free(order), free(count), free(gone), free(attach), free(q), free(matched);
    while (t->ntotals < t->nrows && t->rows[t->ntotals].kind == PCW_PDH_TOTAL)
        t->ntotals++;
    if (!(t->qi_row = calloc(nq ? nq : 1, sizeof *t->qi_row)))
        goto fail;
    for (size_t r = 0; r < t->nrows; r++)
        if (t->rows[r].qi != UINT32_MAX)
            t->qi_row[t->rows[r].qi] = (uint32_t)r;
    if (index_rows(t))
        goto fail;
    return t;
fail:
    top_table_unref(t);
    return NULL;
}

/* ---- providers ---------------------------------------------------------- */

static known_provider *known_find(top_model *m, uint64_t id)
{
    for (size_t i = 0; i < m->nknown; i++)
        if (m->known[i].id == id)
            return &m->known[i];
    return NULL;
}

/* Count live and exited providers; report the ones that went since the
 * last refresh into f->exits. A provider is exited when its segment is
 * gone or says so (pcw_segment_alive). */
static void scan_providers(top_model *m, top_frame *f)
{
    pcw_consumer *c = pcw_pdh_consumer(m->q);
    size_t nseg = pcw_consumer_segment_count(c);
    f->providers_live = 0;
    f->nexits = 0;
    for (size_t i = 0; i < nseg; i++) {
        pcw_segment *seg = pcw_consumer_segment(c, i);
        const pcw_provider_info *info = pcw_segment_provider(seg);
        int alive = pcw_segment_alive(seg) == PCW_OK;
        f->providers_live += (size_t)alive;
        known_provider *k = known_find(m, info->provider_id);
        if (!k) {
            if (m->nknown == MAX_KNOWN_PROVIDERS) {
                /* Forget the oldest exited one (its count stays). */
                size_t j = 0;
                while (j < m->nknown && m->known[j].alive)
                    j++;
                if (j == m->nknown)
                    continue; /* all alive: count only */
                memmove(&m->known[j], &m->known[j + 1], (m->nknown - j - 1) * sizeof *m->known);
                m->nknown--;
                m->exited_forgotten++;
            }
            if (grow((void **)&m->known, &m->known_cap, m->nknown + 1, sizeof *m->known))
                continue;
            k = &m->known[m->nknown++];
            memset(k, 0, sizeof *k);
            k->id = info->provider_id;
            k->pid = info->pid;
            k->alive = alive;
            snprintf(k->name, sizeof k->name, "%s", info->name ? info->name : "");
        } else if (k->alive && !alive) {
            k->alive = 0;
            goto report;
        }
        k->seen = m->seq;
        continue;
    report:
        k->seen = m->seq;
        if (!grow((void **)&f->exits, &f->exits_cap, f->nexits + 1, sizeof *f->exits)) {
            top_exit *e = &f->exits[f->nexits++];
            e->pid = k->pid;
            snprintf(e->name, sizeof e->name, "%s", k->name);
        }
    }
    size_t exited = m->exited_forgotten;
    for (size_t i = 0; i < m->nknown; i++) {
        known_provider *k = &m->known[i];
        if (k->alive && k->seen != m->seq) { /* its segment went away */
            k->alive = 0;
            if (!grow((void **)&f->exits, &f->exits_cap, f->nexits + 1, sizeof *f->exits)) {
                top_exit *e = &f->exits[f->nexits++];
                e->pid = k->pid;
                snprintf(e->name, sizeof e->name, "%s", k->name);
            }
        }
        exited += !k->alive;
    }
    f->providers_exited = exited;
}

static int provider_alive(const top_model *m, uint64_t id)
{
    for (size_t i = 0; i < m->nknown; i++)
        if (m->known[i].id == id)
            return m->known[i].alive;
    return 0;
}

/* ---- the counterset list -------------------------------------------------- */

static int by_set_name(const void *a, const void *b)
{
    const top_setinfo *x = a, *y = b;
    int c = strcasecmp(x->name, y->name);
    return c ? c : strcmp(x->name, y->name);
}

static void sets_clear(top_frame *f)
{
    for (size_t i = 0; i < f->nsets; i++)
        free(f->sets[i].name);
    f->nsets = 0;
}

/* A log's countersets: its series' (the log keeps no instance type: a
 * counterset logged with a _Total is shown as multipleAggregate, one with
 * an instance as multiple, else single). O(series x countersets). */
static int list_log_sets(top_model *m, top_frame *f)
{
    size_t n = pcw_pdh_log_series_count(m->q);
    sets_clear(f);
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_log_series ls;
        if (pcw_pdh_log_series_at(m->q, i, &ls) != PCW_OK)
            continue;
        size_t len = strlen(ls.counterset), k = 0;
        while (k < f->nsets &&
               !pcw__name_equal(f->sets[k].name, strlen(f->sets[k].name), ls.counterset, len))
            k++;
        if (k == f->nsets) {
            if (grow((void **)&f->sets, &f->sets_cap, f->nsets + 1, sizeof *f->sets))
                return -1;
            top_setinfo *si = &f->sets[f->nsets];
            memset(si, 0, sizeof *si);
            if (!(si->name = strdup(ls.counterset)))
                return -1;
            si->instance_type = PCW_SINGLE_INSTANCE;
            f->nsets++;
        }
        top_setinfo *si = &f->sets[k];
        if (ls.kind != PCW_PDH_INSTANCE)
            si->instance_type = PCW_MULTI_AGGREGATE;
        else if (ls.instance[0] && si->instance_type == PCW_SINGLE_INSTANCE)
            si->instance_type = PCW_MULTI_INSTANCE;
    }
    qsort(f->sets, f->nsets, sizeof *f->sets, by_set_name);
    return 0;
}

static int list_sets(top_model *m, top_frame *f)
{
    if (m->log)
        return list_log_sets(m, f);
    pcw_consumer *c = pcw_pdh_consumer(m->q);
    size_t n = pcw_consumer_counterset_count(c);
    sets_clear(f);
    if (grow((void **)&f->sets, &f->sets_cap, n + 1, sizeof *f->sets))
        return -1;
    for (size_t i = 0; i < n; i++) {
        const pcw_merged_counterset *ms = pcw_consumer_counterset(c, i);
        top_setinfo *s = &f->sets[f->nsets];
        if (!(s->name = strdup(ms->meta->name)))
            return -1;
        s->providers = (uint32_t)ms->source_count;
        s->instance_type = ms->meta->instance_type;
        s->callback = 0;
        for (size_t j = 0; j < ms->source_count; j++)
            s->callback |= (ms->source_cset[j]->flags & PCW_CSET_F_CALLBACK) != 0;
        f->nsets++;
    }
    qsort(f->sets, f->nsets, sizeof *f->sets, by_set_name);
    return 0;
}

static int find_set(const top_frame *f, const char *name)
{
    if (!name)
        return -1;
    for (size_t i = 0; i < f->nsets; i++)
        if (pcw__name_equal(f->sets[i].name, strlen(f->sets[i].name), name, strlen(name)))
            return (int)i;
    return -1;
}

/* ---- the model ----------------------------------------------------------- */

int top_model_open(top_model **out, const pcw_consumer_options *opt)
{
    top_model *m = calloc(1, sizeof *m);
    if (!m)
        return PCW_E_NO_MEMORY;
    int rc = pcw_pdh_open(&m->q, opt);
    if (rc != PCW_OK) {
        free(m);
        return rc;
    }
    if (getrandom(&m->hash_seed, sizeof m->hash_seed, GRND_NONBLOCK) != sizeof m->hash_seed)
        m->hash_seed = clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)(uintptr_t)m;
    m->want_first = 1;
    m->detail = PCW_DETAIL_STANDARD;
    m->containers = opt && opt->containers;
    m->f.containers = m->containers;
    *out = m;
    return PCW_OK;
}

static int lined_up(const top_model *m);

int top_model_open_log(top_model **out, const char *const *files, size_t nfiles, char *why,
                       size_t why_len)
{
    top_model *m = calloc(1, sizeof *m);
    if (!m)
        return PCW_E_NO_MEMORY;
    int rc = pcw_pdh_open_log(&m->q, files, nfiles, why, why_len);
    if (rc != PCW_OK) {
        free(m);
        return rc;
    }
    if (getrandom(&m->hash_seed, sizeof m->hash_seed, GRND_NONBLOCK) != sizeof m->hash_seed)
        m->hash_seed = clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)(uintptr_t)m;
    m->want_first = 1;
    m->detail = PCW_DETAIL_WIZARD; /* the log holds what was recorded */
    m->log = 1;
    m->f.log = 1;
    if (!(m->files = calloc(nfiles ? nfiles : 1, sizeof *m->files))) {
        top_model_close(m);
        return PCW_E_NO_MEMORY;
    }
    for (m->nfiles = 0; m->nfiles < nfiles; m->nfiles++)
        if (!(m->files[m->nfiles] = strdup(files[m->nfiles]))) {
            top_model_close(m);
            return PCW_E_NO_MEMORY;
        }
    *out = m;
    return PCW_OK;
}

int top_model_log_span(top_model *m, const top_row *r, uint32_t k, double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
    if (!m->log || !n || !lined_up(m) || r->qi == UINT32_MAX || k >= m->table->ncols)
        return PCW_E_INVALID_PARAMETER;
    /* The series' own path, read by a second query on the same files: the
     * replay's position stays where it is. */
    char *path = malloc(PCW_PATH_MAX);
    if (!path)
        return PCW_E_NO_MEMORY;
    if (pcw_pdh_value_path(m->h, (size_t)r->qi * m->table->ncols + k, 1, path, PCW_PATH_MAX) >=
        PCW_PATH_MAX) {
        free(path);
        return PCW_E_NAME_TOO_LONG;
    }
    pcw_pdh *q;
    int rc = pcw_pdh_open_log(&q, (const char *const *)m->files, m->nfiles, NULL, 0);
    if (rc != PCW_OK) {
        free(path);
        return rc;
    }
    pcw_pdh_counter *h;
    pcw_path_error err;
    pcw_pdh_log_info info;
    rc = pcw_pdh_add_counter(q, path, &h, &err);
    if (rc == PCW_OK)
        rc = pcw_pdh_get_log_info(q, &info);
    uint64_t span = rc == PCW_OK && info.last_ns > info.first_ns ? info.last_ns - info.first_ns : 1;
    while (rc == PCW_OK && pcw_pdh_collect(q, NULL) == PCW_OK) {
        uint64_t t = pcw_pdh_time_ns(q);
        pcw_pdh_value val;
        if (t < info.first_ns ||
            pcw_pdh_get_value(h, 0, m->raw ? PCW_FMT_RAW : 0, &val) != PCW_OK ||
            val.status != PCW_CSTATUS_VALID)
            continue;
        size_t i = (size_t)((double)(t - info.first_ns) / (double)span * (double)(n - 1) + 0.5);
        v[i < n ? i : n - 1] = val.value;
    }
    pcw_pdh_close(q);
    free(path);
    return rc;
}

int top_model_seek(top_model *m, uint64_t index)
{
    pcw_pdh_log_info info;
    if (!m->log || pcw_pdh_get_log_info(m->q, &info) != PCW_OK)
        return PCW_E_INVALID_PARAMETER;
    if (!info.samples)
        return PCW_OK;
    if (index >= info.samples)
        index = info.samples - 1;
    /* The sample before it first, so that its rates are cooked (as live). */
    int rc = pcw_pdh_log_seek(m->q, index ? index - 1 : 0);
    m->prime = rc == PCW_OK && index > 0;
    return rc;
}

uint64_t top_model_log_interval(const top_model *m)
{
    pcw_pdh_log_info info;
    if (!m->log || pcw_pdh_get_log_info(m->q, &info) != PCW_OK || info.samples < 2 ||
        info.last_ns <= info.first_ns)
        return 1000000000ull;
    return (info.last_ns - info.first_ns) / (info.samples - 1);
}

int top_model_seek_time(top_model *m, uint64_t real_ns)
{
    pcw_pdh_log_info info;
    if (!m->log)
        return PCW_E_INVALID_PARAMETER;
    int rc = pcw_pdh_log_seek_time(m->q, real_ns);
    if (rc == PCW_OK)
        rc = pcw_pdh_get_log_info(m->q, &info);
    return rc == PCW_OK ? top_model_seek(m, info.next) : rc;
}

int top_model_set_container(top_model *m, const char *name)
{
    /* The path grammar decides what names a container: one rule, in
     * lib/query/path.c. */
    char path[128];
    if (snprintf(path, sizeof path, "\\\\%s\\S\\C", name) >= (int)sizeof path)
        return 0;
    pcw_path p;
    if (pcw_path_parse(path, &p, NULL) != PCW_OK)
        return 0;
    int is = p.container != NULL;
    pcw_path_free(&p);
    if (is)
        snprintf(m->container, sizeof m->container, "%s", name);
    return is;
}

void top_model_set_advanced(top_model *m, int advanced)
{
    m->detail = advanced ? PCW_DETAIL_WIZARD : PCW_DETAIL_STANDARD;
    m->f.advanced = advanced != 0;
    pcw_pdh_set_detail(m->q, m->detail);
    m->reshow = 1; /* the columns change: a new handle, a new table */
}

static void drop_handle(top_model *m)
{
    if (m->h)
        pcw_pdh_remove_counter(m->q, m->h);
    m->h = NULL;
    free(m->shown);
    m->shown = NULL;
    top_table_unref(m->table);
    m->table = NULL;
    m->col_seq = 0;
    m->top_seq = 0;
}

void top_model_close(top_model *m)
{
    if (!m)
        return;
    drop_handle(m);
    pcw_pdh_close(m->q);
    top_frame *f = &m->f;
    sets_clear(f);
    free(f->sets);
    free(f->exits);
    free(f->set_name);
    top_table_unref(f->table);
    free(m->col_v);
    free(m->col_st);
    free(m->top_v);
    free(m->want);
    free(m->known);
    for (size_t i = 0; i < m->nfiles; i++)
        free(m->files[i]);
    free(m->files);
    free(m);
}

void top_model_want(top_model *m, const char *name, int want_first)
{
    free(m->want);
    m->want = name ? strdup(name) : NULL;
    m->want_first = want_first;
}

void top_model_set_fused(top_model *m, int fused)
{
    m->unfused = !fused;
}

void top_model_set_raw(top_model *m, int raw)
{
    m->raw = raw != 0;
    m->f.raw = m->raw;
}

const top_frame *top_model_frame(const top_model *m)
{
    return &m->f;
}

/* Show counterset `name` from now on: a handle for all its instances and
 * counters. Returns PCW_OK or why not (the message is in f). */
static int show(top_model *m, top_frame *f, const char *name)
{
    drop_handle(m);
    char path[8192];
    if (pcw_path_build(path, sizeof path, m->container[0] ? m->container : NULL, name, "*", 0,
                       "*") >= sizeof path) {
        snprintf(f->message, sizeof f->message, "counterset name too long");
        return PCW_E_NAME_TOO_LONG;
    }
    pcw_path_error err;
    int rc = pcw_pdh_add_counter(m->q, path, &m->h, &err);
    if (rc != PCW_OK) {
        m->h = NULL;
        snprintf(f->message, sizeof f->message, "%s", err.message);
        return rc;
    }
    m->shown = strdup(name);
    if (!m->shown) {
        drop_handle(m);
        return PCW_E_NO_MEMORY;
    }
    return PCW_OK;
}

/* The table again if the instances changed or a gone row is due to leave. */
static int update_table(top_model *m, top_frame *f)
{
    uint64_t epoch = pcw_pdh_instance_epoch(m->h);
    int rebuild = !m->table || m->table->epoch != epoch;
    for (size_t r = 0; !rebuild && m->table->nghosts && r < m->table->nrows; r++)
        rebuild = m->table->rows[r].gone && m->seq - m->table->rows[r].gone >= TOP_GONE_REFRESHES;
    if (!rebuild)
        return PCW_OK;
    /* Columns: the counterset's now, or - when nobody publishes it any
     * more - the last ones, for the rows that are going. */
    const pcw_merged_counterset *ms =
        m->log ? NULL : pcw_consumer_find_counterset(pcw_pdh_consumer(m->q), m->shown);
    top_column *cols = NULL;
    uint32_t ncols = 0;
    int ok = ms       ? make_columns(ms->meta, m->detail, &cols, &ncols) == 0
             : m->log ? make_log_columns(m, &cols, &ncols) == 0
                      : copy_columns(m->table, &cols, &ncols) == 0;
    top_table *t = ok ? build_table(m, cols, ncols, epoch, m->table) : NULL;
    if (!t)
        return PCW_E_NO_MEMORY;
    for (size_t r = 0; r < t->nrows; r++) {
        f->born_now += t->rows[r].born == m->seq;
        if (t->rows[r].gone == m->seq) {
            f->gone_now++;
            if (t->rows[r].provider_id && !provider_alive(m, t->rows[r].provider_id))
                t->rows[r].state = TOP_ROW_EXITED;
        }
    }
    top_table_unref(m->table);
    m->table = t;
    return PCW_OK;
}

static int lined_up(const top_model *m);

/* f->note: the counters whose totals are not computed because they have
 * no aggregate attribute (PCW_CSTATUS_NOT_AGGREGATED: the provider's
 * choice, which no later sample changes), so that a "-" in a total row
 * has its reason on screen. Written when the table changes: at most
 * totals x counters values, once per table. */
static void note_totals(top_model *m, top_frame *f)
{
    const top_table *t = m->table;
    if (m->note_table == t->id)
        return;
    m->note_table = t->id;
    f->note[0] = 0;
    if (!lined_up(m))
        return;
    uint32_t nc = t->ncols, first = 0, count = 0;
    int total = 1;
    for (uint32_t k = 0; k < nc; k++)
        for (size_t r = 0; r < t->ntotals; r++) {
            pcw_pdh_value v;
            if (t->rows[r].qi == UINT32_MAX ||
                pcw_pdh_get_value(m->h, (size_t)t->rows[r].qi * nc + k, 0, &v) != PCW_OK ||
                v.status != PCW_CSTATUS_NOT_AGGREGATED)
                continue;
            if (count++ == 0)
                first = k, total = t->rows[r].kind == PCW_PDH_TOTAL;
            break;
        }
    if (!count)
        return;
    const char *what = total ? "_Total" : "aggregates";
    if (count == 1)
        snprintf(f->note, sizeof f->note,
                 "%s: counter \"%.80s\" has no aggregate attribute, so its total is not "
                 "computed (-)",
                 what, t->cols[first].name);
    else
        snprintf(f->note, sizeof f->note,
                 "%s: %u counters (\"%.80s\"...) have no aggregate attribute, so their totals "
                 "are not computed (-)",
                 what, count, t->cols[first].name);
}

/* A log model's collection: the counterset list (the log's, which a sample
 * does not change), the next sample - the one before it first after a
 * seek - and where in the log it is. At the end of the log the last
 * sample stays (f->log_end). */
static int log_collect(top_model *m, top_frame *f, int read)
{
    if (!f->nsets && list_sets(m, f))
        return PCW_E_NO_MEMORY;
    int rc = PCW_OK;
    /* Without a handle yet (read 0), the sample is for the one show() makes. */
    if (read && m->prime) {
        m->prime = 0;
        rc = pcw_pdh_collect(m->q, NULL);
    }
    if (rc == PCW_OK && read)
        rc = pcw_pdh_collect(m->q, NULL);
    f->log_again = rc == PCW_PDH_END_OF_LOG;
    if (f->log_again)
        rc = PCW_OK;
    pcw_pdh_log_info info;
    if (pcw_pdh_get_log_info(m->q, &info) == PCW_OK) {
        f->log_index = info.next ? info.next - 1 : 0;
        f->log_samples = info.samples;
        f->log_end = info.next >= info.samples;
        f->log_damaged = info.damaged;
        if (f->log_end && info.damaged) /* where the readable part ends, and why */
            snprintf(f->message, sizeof f->message, "%s", pcw_pdh_log_error(m->q));
        f->log_first_real_ns = info.first_real_ns;
        f->log_last_real_ns = info.last_real_ns;
        f->log_first_ns = info.first_ns;
        f->log_last_ns = info.last_ns;
    }
    return rc;
}

/* How many instances a collection ranks for a view that showed `want`:
 * twice that (room to scroll a screenful without a miss), at least 64. */
static size_t rank_room(size_t want)
{
    size_t n = want < 32 ? 64 : 2 * want;
    return n < PCW_PDH_TOP_MAX ? n : PCW_PDH_TOP_MAX;
}

/* The collection ranking column ask_k (pcw_pdh_collect_top), bounded by
 * the value the last list had at the same rank when it is of the same
 * column, direction and values (a hint: a wrong one costs a second pass,
 * not a wrong order). *ranked: 2 ranked as read, 1 after the read, 0 not
 * ranked. */
static int collect_top(top_model *m, size_t *failed, int *ranked)
{
    size_t want = rank_room(m->ask_want);
    double bound = NAN;
    if (m->top_seq == m->seq - 1 && m->top_k == m->ask_k && m->top_desc == m->ask_desc &&
        m->top_raw == m->raw && m->top_n >= want)
        bound = m->top_v[want - 1].value;
    if (want > m->top_cap) {
        pcw_pdh_ranked *n = realloc(m->top_v, want * sizeof *n);
        if (!n)
            return pcw_pdh_collect(m->q, failed);
        m->top_v = n;
        m->top_cap = want;
    }
    pcw_pdh_top t = {.counter = m->ask_k,
                     .flags = m->raw ? PCW_FMT_RAW : 0,
                     .descending = m->ask_desc,
                     .bound = bound,
                     .ranked = m->top_v,
                     .cap = want};
    int rc = pcw_pdh_collect_top(m->q, failed, m->h, &t);
    m->top_n = 0;
    if (rc == PCW_E_INVALID_PARAMETER) /* the collection was made; the */
        return PCW_OK;                 /* counter is gone (re-registered) */
    if (rc != PCW_OK)
        return rc;
    m->top_n = t.count;
    m->top_want = want;
    m->top_k = m->ask_k;
    m->top_desc = m->ask_desc;
    m->top_raw = m->raw;
    *ranked = t.fused ? 2 : 1;
    return PCW_OK;
}

int top_model_collect(top_model *m, uint64_t interval_ns)
{
    uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
    top_frame *f = &m->f;
    m->seq++;
    f->seq = m->seq;
    f->message[0] = 0;
    f->interval_ns = interval_ns;
    f->raw = m->raw;
    f->failed = f->born_now = f->gone_now = 0;
    top_table_unref(f->table);
    f->table = NULL;
    free(f->set_name);
    f->set_name = NULL;
    f->set_index = -1;
    f->set_callback = 0;
    size_t failed = 0;
    int fused = 0, ranked = 0, rc;
    pcw_pdh_counter *fused_h = NULL;
    if (!m->log && m->h && m->top_asked && !m->col_asked && !m->unfused &&
        m->ask_k < pcw_pdh_selected_counter_count(m->h)) {
        /* The view showed the first rows of a column's order: the next
         * ones are ranked as the read reads each row, and nothing else of
         * the column is kept. */
        rc = collect_top(m, &failed, &ranked);
        fused_h = m->h;
    } else if (m->log) {
        rc = log_collect(m, f, m->h != NULL);
    } else if (m->h && m->col_asked && m->col_cap && !m->unfused &&
               m->col_k < pcw_pdh_selected_counter_count(m->h)) {
        /* The column the last refresh sorted by, converted as the read
         * reads each row (the view will sort by it again): the rows are
         * not read a second time. */
        size_t n = 0;
        rc = pcw_pdh_collect_column(m->q, &failed, m->h, m->col_k, m->raw ? PCW_FMT_RAW : 0,
                                    m->col_v, m->col_st, m->col_cap, &n);
        if (rc == PCW_E_INVALID_PARAMETER) /* the collection was made; the */
            rc = PCW_OK;                   /* counter is gone (re-registered) */
        else
            fused = rc == PCW_OK && n <= m->col_cap;
        fused_h = m->h;
    } else {
        rc = pcw_pdh_collect(m->q, &failed);
    }
    m->col_asked = 0;
    m->top_asked = 0;
    if (rc == PCW_OK && !m->log && list_sets(m, f))
        rc = PCW_E_NO_MEMORY;
    if (rc != PCW_OK) {
        if (m->log)
            snprintf(f->message, sizeof f->message, "%s", pcw_pdh_log_error(m->q));
        else
            snprintf(f->message, sizeof f->message, "collection failed: %s", pcw_status_str(rc));
        goto out;
    }
    if (!m->log)
        scan_providers(m, f);
    /* Which counterset to show: the one asked for, else the one shown,
     * else the first. */
    const char *target = m->want;
    if (!target && m->want_first && f->nsets)
        target = m->shown && find_set(f, m->shown) >= 0 ? m->shown : f->sets[0].name;
    if (!target && !m->want_first)
        drop_handle(m);
    if (target && (m->reshow || !m->shown ||
                   !pcw__name_equal(m->shown, strlen(m->shown), target, strlen(target)))) {
        m->reshow = 0;
        fused = ranked = 0; /* of the handle dropped */
        if (find_set(f, target) < 0) {
            drop_handle(m);
            snprintf(f->message, sizeof f->message,
                     m->log ? "counterset \"%.200s\" is not in the log"
                            : "counterset \"%.200s\" is not published (waiting for it)",
                     target);
            goto out;
        }
        /* As published (the name asked for may differ in case). */
        if ((rc = show(m, f, f->sets[find_set(f, target)].name)) != PCW_OK)
            goto out;
        /* Its first sample (rates show from the next one); a log's
         * handle takes the sample log_collect reads next. */
        if (m->log)
            rc = log_collect(m, f, 1);
        else
            rc = pcw_pdh_collect(m->q, &failed);
        if (rc != PCW_OK) {
            snprintf(f->message, sizeof f->message, "collection failed: %s", pcw_status_str(rc));
            goto out;
        }
    }
    if (!m->h) {
        if (!f->nsets && m->log)
            snprintf(f->message, sizeof f->message, "%s",
                     pcw_pdh_log_error(m->q)[0] ? pcw_pdh_log_error(m->q)
                                                : "the log holds no counters");
        else if (!f->nsets)
            snprintf(f->message, sizeof f->message, "no counters are published (no provider)");
        goto out;
    }
    if (!(f->set_name = strdup(m->shown))) {
        rc = PCW_E_NO_MEMORY;
        goto out;
    }
    f->set_index = find_set(f, m->shown);
    if (f->set_index >= 0) {
        f->instance_type = f->sets[f->set_index].instance_type;
        f->set_callback = f->sets[f->set_index].callback;
    } else {
        snprintf(f->message, sizeof f->message, "no provider publishes \"%.200s\" now", m->shown);
    }
    f->failed = failed;
    if ((rc = update_table(m, f)) != PCW_OK) {
        snprintf(f->message, sizeof f->message, "out of memory");
        goto out;
    }
    top_table_ref(m->table);
    f->table = m->table;
    note_totals(m, f);
out:
    if (!f->table)
        f->note[0] = 0, m->note_table = 0;
    /* The column cache is of the last sample, or of this one if it was
     * converted during the read, of the handle shown now. */
    m->col_seq = fused && m->h == fused_h && f->table ? m->seq : 0;
    f->fused_col = m->col_seq ? (int)m->col_k : -1;
    m->top_seq = ranked && m->h == fused_h && f->table ? m->seq : 0;
    f->ranked_col = m->top_seq && ranked == 2 ? (int)m->top_k : -1;
    m->col_raw = m->raw;
    f->mono_ns = pcw_pdh_time_ns(m->q) ? pcw_pdh_time_ns(m->q) : clock_ns(CLOCK_MONOTONIC);
    f->real_ns = pcw_pdh_realtime_ns(m->q) ? pcw_pdh_realtime_ns(m->q) : clock_ns(CLOCK_REALTIME);
    f->cost_ns = clock_ns(CLOCK_MONOTONIC) - t0;
    return rc;
}

/* Do the handle's values still line up with the table? (They always do
 * within one collection; a table that failed to build leaves none.) */
static int lined_up(const top_model *m)
{
    return m->h && m->table && pcw_pdh_instance_count(m->h) == m->table->nq &&
           pcw_pdh_selected_counter_count(m->h) == m->table->ncols;
}

void top_model_row_values(top_model *m, const top_row *r, double *v, uint8_t *st)
{
    uint32_t n = m->table ? m->table->ncols : 0;
    int ok = r->qi != UINT32_MAX && lined_up(m);
    for (uint32_t k = 0; k < n; k++) {
        pcw_pdh_value val;
        if (ok && pcw_pdh_get_value(m->h, (size_t)r->qi * n + k, m->raw ? PCW_FMT_RAW : 0, &val) ==
                      PCW_OK) {
            v[k] = val.value;
            st[k] = (uint8_t)val.status;
        } else {
            v[k] = 0;
            st[k] = PCW_CSTATUS_NO_INSTANCE;
        }
    }
}

int top_model_histogram(top_model *m, const top_row *r, uint32_t k, pcw_hist_dist *out)
{
    if (!lined_up(m) || r->qi == UINT32_MAX || k >= m->table->ncols || !m->table->cols[k].shape)
        return PCW_E_INVALID_PARAMETER;
    return pcw_pdh_get_histogram(m->h, (size_t)r->qi * m->table->ncols + k, 0, out);
}

int top_model_top(top_model *m, uint32_t k, int desc, size_t want, const pcw_pdh_ranked **list,
                  size_t *n)
{
    if (!lined_up(m) || k >= m->table->ncols)
        return -1;
    want += m->table->ntotals; /* ranked among the totals too */
    if (!m->top_asked || m->ask_k != k || m->ask_desc != desc)
        m->ask_want = 0;
    m->top_asked = 1;
    m->ask_k = k;
    m->ask_desc = desc != 0;
    if (want > m->ask_want)
        m->ask_want = want;
    if (m->top_seq != m->seq || m->top_k != k || m->top_desc != (desc != 0) ||
        m->top_raw != m->raw || m->top_want < want)
        return -1;
    *list = m->top_v;
    *n = m->top_n;
    return 0;
}

static int column(top_model *m, uint32_t k, const double **v, const uint8_t **st, int ask);

int top_model_column(top_model *m, uint32_t k, const double **v, const uint8_t **st)
{
    return column(m, k, v, st, 1);
}

int top_model_column_once(top_model *m, uint32_t k, const double **v, const uint8_t **st)
{
    return column(m, k, v, st, 0);
}

/* top_model_column; ask: the next collection converts column k as it reads. */
static int column(top_model *m, uint32_t k, const double **v, const uint8_t **st, int ask)
{
    if (!lined_up(m) || k >= m->table->ncols)
        return PCW_E_INVALID_PARAMETER;
    if (m->col_seq != m->seq || m->col_k != k || m->col_raw != m->raw) {
        size_t n = m->table->nq;
        if (n > m->col_cap) {
            double *nv = realloc(m->col_v, n * sizeof *nv);
            if (nv)
                m->col_v = nv;
            uint8_t *ns = nv ? realloc(m->col_st, n) : NULL;
            if (ns)
                m->col_st = ns;
            if (!nv || !ns)
                return PCW_E_NO_MEMORY;
            m->col_cap = n;
        }
        if (n)
            pcw_pdh_cook_column(m->h, k, m->raw ? PCW_FMT_RAW : 0, m->col_v, m->col_st);
        m->col_seq = m->seq;
        m->col_k = k;
        m->col_raw = m->raw;
    }
    m->col_asked |= ask;
    *v = m->col_v;
    *st = m->col_st;
    return PCW_OK;
}
