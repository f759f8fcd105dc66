/* SPDX-License-Identifier: MIT */
/*
 * dump.c - the walk: find the providers (a pcw_consumer over the directory,
 * or the --segment files), apply the filters, plan the countersets to show,
 * collect them all in one pass (one time limit for every slow provider)
 * and hand each to the output format. Repeats for --watch.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/layout.h"

#include "pcw/collect.h"
#include "pcwdump.h"

const char *dump_root(const dump_opts *o)
{
    return pcw_root(o->dir);
}

/* What one pass found, to decide the exit status. */
typedef struct pass_stats {
    size_t providers; /* providers shown */
    size_t csets;     /* countersets shown */
    size_t instances; /* instances shown */
    int failed;       /* a read or refresh failed */
} pass_stats;

/* One counterset to show: what is collected for it and how it went. A
 * listing has one per (provider, counterset); --merged one per merged
 * counterset, collecting from the selected providers' registrations. */
typedef struct entry {
    const pcw_counterset *cs;       /* the metadata shown */
    const pcw_merged_counterset *m; /* --merged: the merged counterset */
    pcw_segment *seg;               /* listing: the provider's segment */
    pcw_merged_counterset sub;      /* with a consumer: what is collected */
    uint32_t seg_index;             /* listing: sub's one source */
    size_t *sources;                /* --merged: indexes into m's sources */
    size_t nsources;
    unsigned char *shown; /* [cs->counter_count] */
    size_t nshown;
    pcw_query q;
    int rc;      /* PCW_OK, or why the collection itself failed */
    int *status; /* [nsources] each source's status */
    pcw_collect_report rep;
} entry;

/* A provider of the listing and its entries [first, first + n). */
typedef struct prov_group {
    pcw_segment *seg;
    size_t first, n;
} prov_group;

typedef struct pass {
    const dump_opts *o;
    const dump_sink *sink;
    void *st;
    pcw_consumer *consumer; /* NULL with --segment */
    pcw_segment **segs;
    size_t nsegs;
    /* This sample's plan: entries (with one snapshot each, kept from
     * sample to sample) and, for a listing, the providers. */
    entry *entries;
    size_t nentries, entries_cap;
    pcw_snapshot *snaps;
    size_t nsnaps;
    prov_group *groups;
    size_t ngroups;
    size_t *order;
    size_t order_cap;
    pass_stats s;
} pass;

static int instance_filter(const dump_opts *o)
{
    return o->instances.n || o->nids;
}

static int cmp_seg(const void *a, const void *b, void *arg)
{
    pcw_segment *const *segs = arg;
    const pcw_provider_info *x = pcw_segment_provider(segs[*(const size_t *)a]);
    const pcw_provider_info *y = pcw_segment_provider(segs[*(const size_t *)b]);
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return strcmp(x->path, y->path);
}

typedef struct sample_order {
    const pcw_snapshot *snap;
    const pcw_consumer *consumer;
} sample_order;

static int32_t source_pid(const sample_order *so, size_t row)
{
    pcw_segment *s =
        so->consumer ? pcw_consumer_segment(so->consumer, row_source(so->snap, row)) : NULL;
    return s ? pcw_segment_provider(s)->pid : 0;
}

static int cmp_sample(const void *a, const void *b, void *arg)
{
    const sample_order *so = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int32_t px = source_pid(so, x), py = source_pid(so, y);
    if (px != py)
        return px < py ? -1 : 1;
    uint32_t sx = row_source(so->snap, x), sy = row_source(so->snap, y);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    uint32_t ix = pcw_snapshot_id(so->snap, x), iy = pcw_snapshot_id(so->snap, y);
    return ix < iy ? -1 : ix > iy;
}

/* Pick the instances of snap to show into p->order, sorted. */
static int select_instances(pass *p, const pcw_snapshot *snap, const pcw_consumer *merged_from,
                            size_t *n)
{
    if (snap->count > p->order_cap) {
        size_t *v = realloc(p->order, snap->count * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        p->order = v, p->order_cap = snap->count;
    }
    size_t k = 0;
    for (size_t i = 0; i < snap->count; i++)
        if (sel_instance(p->o, pcw_snapshot_id(snap, i), pcw_snapshot_name(snap, i),
                         pcw_snapshot_name_len(snap, i)))
            p->order[k++] = i;
    sample_order so = {snap, merged_from};
    if (k > 1) /* p->order is NULL until a read returned instances */
        qsort_r(p->order, k, sizeof *p->order, cmp_sample, &so);
    *n = k;
    return PCW_OK;
}

/* The query providers' callbacks get (PCW_MASK_INFORMATION): what the
 * options select, where one value says it; pcwdump's own filters then apply
 * the rest (several ids or patterns). */
static pcw_query make_query(const dump_opts *o, const pcw_counterset *cs,
                            const unsigned char *shown)
{
    pcw_query q = PCW_QUERY_ALL;
    if (o->counters.n) {
        q.counter_mask = 0;
        for (uint32_t i = 0; i < cs->counter_count; i++)
            if (shown[i])
                q.counter_mask |= 1ull << (i < 63 ? i : 63);
    }
    if (o->nids == 1)
        q.instance_id = o->ids[0];
    if (o->instances.n == 1)
        q.instance_mask = o->instances.v[0];
    return q;
}

/* ---- the plan: what to collect and show ----------------------------------- */

static void free_entries(pass *p)
{
    for (size_t i = 0; i < p->nentries; i++) {
        entry *e = &p->entries[i];
        free(e->sources);
        free((void *)e->sub.source_segment);
        free((void *)e->sub.source_cset);
        free(e->shown);
        free(e->status);
    }
    p->nentries = 0;
    p->ngroups = 0;
}

/* A new entry for cs with nsources sources, its counters chosen. NULL:
 * out of memory. */
static entry *new_entry(pass *p, const pcw_counterset *cs, size_t nsources)
{
    if (p->nentries == p->entries_cap) {
        size_t cap = p->entries_cap ? 2 * p->entries_cap : 16;
        entry *v = realloc(p->entries, cap * sizeof *v);
        if (!v)
            return NULL;
        p->entries = v, p->entries_cap = cap;
    }
    entry *e = &p->entries[p->nentries++];
    memset(e, 0, sizeof *e);
    e->cs = cs;
    e->nsources = nsources;
    e->shown = calloc(cs->counter_count ? cs->counter_count : 1, 1);
    e->status = calloc(nsources ? nsources : 1, sizeof *e->status);
    if (!e->shown || !e->status)
        return NULL;
    e->nshown = sel_counters(p->o, cs, e->shown);
    e->q = make_query(p->o, cs, e->shown);
    return e;
}

/* With --counters, a counterset none of whose counters it names is left
 * out (as one with no instance is, with -i). */
static int counters_hide(const dump_opts *o, const entry *e)
{
    return o->counters.n && e->nshown == 0;
}

/* The listing's plan: each selected provider (by pid) and its selected
 * countersets. */
static int plan_listing(pass *p)
{
    const dump_opts *o = p->o;
    size_t *idx = calloc(p->nsegs + 1, sizeof *idx);
    p->groups = calloc(p->nsegs + 1, sizeof *p->groups);
    if (!idx || !p->groups) {
        free(idx);
        return PCW_E_NO_MEMORY;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->nsegs; i++)
        if (sel_provider(o, pcw_segment_provider(p->segs[i])))
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_seg, p->segs);
    int rc = PCW_OK;
    for (size_t k = 0; k < n && rc == PCW_OK; k++) {
        pcw_segment *seg = p->segs[idx[k]];
        prov_group *g = &p->groups[p->ngroups++];
        g->seg = seg;
        g->first = p->nentries;
        for (size_t c = 0; c < pcw_segment_counterset_count(seg) && rc == PCW_OK; c++) {
            const pcw_counterset *cs = pcw_segment_counterset(seg, c);
            if (!sel_cset(o, cs))
                continue;
            entry *e = new_entry(p, cs, 1);
            if (!e) {
                rc = PCW_E_NO_MEMORY;
                break;
            }
            e->seg = seg;
            e->seg_index = (uint32_t)idx[k];
            if (counters_hide(o, e)) {
                free(e->shown), free(e->status);
                p->nentries--;
                continue;
            }
            /* One source: the provider's registration. */
            uint32_t *ss = malloc(sizeof *ss);
            const pcw_counterset **sc = malloc(sizeof *sc);
            if (!ss || !sc) {
                free(ss), free(sc);
                rc = PCW_E_NO_MEMORY;
                break;
            }
            ss[0] = e->seg_index, sc[0] = cs;
            e->sub = (pcw_merged_counterset){cs, 1, ss, sc, 0};
        }
        g->n = p->nentries - g->first;
    }
    free(idx);
    return rc;
}

static int cmp_merged(const void *a, const void *b, void *arg)
{
    const pcw_consumer *c = arg;
    return strcmp(pcw_consumer_counterset(c, *(const size_t *)a)->meta->name,
                  pcw_consumer_counterset(c, *(const size_t *)b)->meta->name);
}

/* --merged: each selected merged counterset (by name), from the selected
 * providers' registrations of it - however many a provider has. */
static int plan_merged(pass *p)
{
    const dump_opts *o = p->o;
    pcw_consumer *c = p->consumer;
    size_t nm = pcw_consumer_counterset_count(c);
    size_t *idx = calloc(nm + 1, sizeof *idx);
    if (!idx)
        return PCW_E_NO_MEMORY;
    for (size_t i = 0; i < nm; i++)
        idx[i] = i;
    qsort_r(idx, nm, sizeof *idx, cmp_merged, c);
    int rc = PCW_OK;
    for (size_t k = 0; k < nm && rc == PCW_OK; k++) {
        const pcw_merged_counterset *m = pcw_consumer_counterset(c, idx[k]);
        if (!sel_cset(o, m->meta))
            continue;
        size_t ns = 0;
        for (size_t i = 0; i < m->source_count; i++) {
            pcw_segment *s = pcw_consumer_segment(c, m->source_segment[i]);
            ns += s && sel_provider(o, pcw_segment_provider(s));
        }
        if (!ns && sel_any_provider_filter(o))
            continue;
        entry *e = new_entry(p, m->meta, ns);
        if (!e) {
            rc = PCW_E_NO_MEMORY;
            break;
        }
        if (counters_hide(o, e)) {
            free(e->shown), free(e->status);
            p->nentries--;
            continue;
        }
        e->m = m;
        /* Only the selected providers' registrations: a subset of the
         * merged counterset, collected with the same call. */
        size_t *src = calloc(ns + 1, sizeof *src);
        uint32_t *ss = calloc(ns + 1, sizeof *ss);
        const pcw_counterset **sc = calloc(ns + 1, sizeof *sc);
        e->sources = src;
        e->sub = (pcw_merged_counterset){m->meta, ns, ss, sc, m->mismatched};
        if (!src || !ss || !sc) {
            rc = PCW_E_NO_MEMORY;
            break;
        }
        ns = 0;
        for (size_t i = 0; i < m->source_count; i++) {
            pcw_segment *s = pcw_consumer_segment(c, m->source_segment[i]);
            if (!s || !sel_provider(o, pcw_segment_provider(s)))
                continue;
            src[ns] = i;
            ss[ns] = m->source_segment[i];
            sc[ns++] = m->source_cset[i];
        }
    }
    free(idx);
    return rc;
}

/* ---- collecting ----------------------------------------------------------- */

/* Collect every entry: with a consumer, all in one
 * pcw_consumer_collect_many, so slow providers cost one time limit in all;
 * --segment files one counterset after another. */
static int collect(pass *p)
{
    if (p->nsnaps < p->nentries) {
        pcw_snapshot *v = realloc(p->snaps, p->nentries * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        for (size_t i = p->nsnaps; i < p->nentries; i++)
            v[i] = (pcw_snapshot)PCW_SNAPSHOT_INIT;
        p->snaps = v, p->nsnaps = p->nentries;
    }
    if (!p->consumer) {
        for (size_t i = 0; i < p->nentries; i++) {
            entry *e = &p->entries[i];
            e->status[0] = pcw_segment_collect(e->seg, e->cs, &e->q, &p->snaps[i], 0, 0,
                                               p->o->timeout_ms, NULL);
            e->rc = e->status[0] == PCW_E_NO_MEMORY ? PCW_E_NO_MEMORY : PCW_OK;
            e->rep.failed = e->status[0] != PCW_OK;
        }
        return PCW_OK;
    }
    pcw_collect_item *items = calloc(p->nentries + 1, sizeof *items);
    if (!items)
        return PCW_E_NO_MEMORY;
    size_t n = 0;
    for (size_t i = 0; i < p->nentries; i++) {
        entry *e = &p->entries[i];
        pcw_snapshot_clear(&p->snaps[i]);
        e->rep = (pcw_collect_report){.source_status = e->status};
        if (e->sub.source_count)
            items[n++] = (pcw_collect_item){&e->sub, &e->q, &p->snaps[i], 0, &e->rep};
    }
    int rc = pcw_consumer_collect_many(p->consumer, items, n);
    free(items);
    for (size_t i = 0; i < p->nentries; i++)
        p->entries[i].rc = rc == PCW_E_NO_MEMORY ? rc : PCW_OK;
    return rc == PCW_E_NO_MEMORY ? PCW_OK : rc; /* which entry: its rep says */
}

/* ---- showing -------------------------------------------------------------- */

/* Show entry i (unless a filter leaves it out). Returns 1 if shown. */
static int show(pass *p, size_t i, int *group_started, const prov_group *g)
{
    const dump_opts *o = p->o;
    entry *e = &p->entries[i];
    const pcw_snapshot *snap = &p->snaps[i];
    cset_view v = {.cs = e->cs,
                   .shown = e->shown,
                   .nshown = e->nshown,
                   .snap = snap,
                   .read_rc = e->rc,
                   .merged = e->m,
                   .consumer = e->m ? p->consumer : NULL,
                   .sources = e->sources,
                   .nsources = e->m ? e->nsources : 0,
                   .source_status = e->status};
    int rc = e->rc;
    if (rc == PCW_OK)
        rc = select_instances(p, snap, e->m ? p->consumer : NULL, &v.ninst);
    if (rc == PCW_OK && instance_filter(o) && v.ninst == 0)
        return 0;
    int failed = rc != PCW_OK || (e->nsources && e->rep.failed);
    if (!e->m && rc == PCW_OK && e->status[0] != PCW_OK && snap->count == 0)
        rc = e->status[0]; /* the listing's one provider gave nothing */
    v.read_rc = rc;
    v.order = p->order;
    if (g && !*group_started) {
        p->sink->provider_begin(p->st, pcw_segment_provider(g->seg), pcw_segment_container(g->seg),
                                pcw_segment_alive(g->seg) == PCW_OK);
        *group_started = 1;
    }
    p->sink->cset(p->st, o, &v);
    p->s.csets++;
    p->s.instances += rc == PCW_OK ? v.ninst : 0;
    if (failed)
        p->s.failed = 1;
    return 1;
}

static void show_listing(pass *p)
{
    const dump_opts *o = p->o;
    /* With a counterset, instance or counter filter, a provider shows
     * only if one of its countersets does. */
    int lazy = o->csets.n || instance_filter(o) || o->counters.n;
    for (size_t k = 0; k < p->ngroups; k++) {
        const prov_group *g = &p->groups[k];
        int started = 0;
        if (!lazy) {
            p->sink->provider_begin(p->st, pcw_segment_provider(g->seg),
                                    pcw_segment_container(g->seg),
                                    pcw_segment_alive(g->seg) == PCW_OK);
            started = 1;
        }
        for (size_t i = g->first; i < g->first + g->n; i++)
            show(p, i, &started, g);
        if (started) {
            p->sink->provider_end(p->st);
            p->s.providers++;
        }
    }
}

static void show_merged(pass *p)
{
    for (size_t i = 0; i < p->nentries; i++)
        show(p, i, NULL, NULL);
}

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Does --counters name a counter of any counterset planned? */
static int counters_match(const pass *p)
{
    for (size_t i = 0; i < p->nentries; i++)
        if (p->entries[i].nshown)
            return 1;
    return 0;
}

/* One sample. Returns an exit status. */
static int one_pass(pass *p, unsigned sample)
{
    const dump_opts *o = p->o;
    int status = EXIT_OK;
    memset(&p->s, 0, sizeof p->s);
    if (p->consumer) {
        int rc = pcw_consumer_refresh(p->consumer, NULL);
        if (rc != PCW_OK) {
            fprintf(stderr, "pcwdump: %s: %s\n", dump_root(o), pcw_status_str(rc));
            return EXIT_FAIL;
        }
        p->nsegs = pcw_consumer_segment_count(p->consumer);
        free(p->segs);
        p->segs = calloc(p->nsegs + 1, sizeof *p->segs);
        if (!p->segs) {
            fprintf(stderr, "pcwdump: %s\n", pcw_status_str(PCW_E_NO_MEMORY));
            return EXIT_FAIL;
        }
        for (size_t i = 0; i < p->nsegs; i++)
            p->segs[i] = pcw_consumer_segment(p->consumer, i);
    } else {
        for (size_t i = 0; i < p->nsegs; i++) {
            int rc = pcw_segment_refresh(p->segs[i], NULL);
            if (rc != PCW_OK) {
                fprintf(stderr, "pcwdump: %s: %s\n", pcw_segment_provider(p->segs[i])->path,
                        pcw_status_str(rc));
                status = EXIT_FAIL;
            }
        }
    }
    free_entries(p);
    free(p->groups);
    p->groups = NULL;
    int rc = o->merged ? plan_merged(p) : plan_listing(p);
    /* A --counters that names nothing here: the error alone, no listing. */
    if (rc == PCW_OK && o->counters.n && !counters_match(p)) {
        sel_explain_unmatched(o, p->segs, p->nsegs, stderr);
        fprintf(stderr, "pcwdump: --counters matches no counter\n");
        return EXIT_FAIL;
    }
    if (rc == PCW_OK)
        rc = collect(p);
    if (rc != PCW_OK) {
        fprintf(stderr, "pcwdump: %s\n", pcw_status_str(rc));
        return EXIT_FAIL;
    }
    p->sink->doc_begin(p->st, o, sample, now_ns(CLOCK_REALTIME));
    if (o->merged)
        show_merged(p);
    else
        show_listing(p);
    if (p->sink->doc_end(p->st, o, p->s.providers, p->s.csets) != 0) {
        fprintf(stderr, "pcwdump: cannot write the output: %s\n", strerror(errno));
        return EXIT_FAIL;
    }
    if (p->s.failed)
        status = EXIT_FAIL;
    /* Say why the output is empty; a filter that matched nothing fails. */
    if (o->merged ? !p->s.csets : !p->s.providers) {
        if (o->providers.n || o->csets.n || instance_filter(o)) {
            sel_explain_unmatched(o, p->segs, p->nsegs, stderr);
            fprintf(stderr, "pcwdump: nothing matches the filters\n");
            status = EXIT_FAIL;
        } else if (!o->json) {
            if (o->segments.n)
                fprintf(stderr, "pcwdump: no countersets\n");
            else if (o->merged)
                fprintf(stderr, "pcwdump: no countersets in %s\n", dump_root(o));
            else
                fprintf(stderr, "pcwdump: no providers in %s\n", dump_root(o));
        }
    } else if (instance_filter(o) && !p->s.instances) {
        fprintf(stderr, "pcwdump: nothing matches the filters\n");
        status = EXIT_FAIL;
    }
    return status;
}

/* A provider folder consumers refuse: its segments are left out of every
 * listing, so say which and why (once, on stderr; the listing goes on). */
static int warn_refused(pcw_discovered *d, void *arg)
{
    (void)arg;
    if (d->is_folder)
        fprintf(stderr, "pcwdump: warning: ignoring %s: %s\n", d->path, d->why);
    return PCW_OK;
}

int dump_run(const dump_opts *o)
{
    pass p = {.o = o};
    int status = EXIT_OK;
    if (o->segments.n) {
        p.segs = calloc(o->segments.n, sizeof *p.segs);
        if (!p.segs) {
            fprintf(stderr, "pcwdump: %s\n", pcw_status_str(PCW_E_NO_MEMORY));
            return EXIT_FAIL;
        }
        for (size_t i = 0; i < o->segments.n; i++) {
            int rc = pcw_segment_open(&p.segs[p.nsegs], o->segments.v[i]);
            if (rc != PCW_OK) {
                fprintf(stderr, "pcwdump: %s: %s\n", o->segments.v[i], pcw_status_str(rc));
                status = EXIT_FAIL;
                goto out;
            }
            p.nsegs++;
        }
    } else {
        pcw_consumer_options co = {.dir = o->dir,
                                   .all_users = o->all_users,
                                   .timeout_ms = o->timeout_ms,
                                   .containers = o->containers};
        int rc = pcw_consumer_open(&p.consumer, &co);
        if (rc != PCW_OK) {
            fprintf(stderr, "pcwdump: %s: %s\n", dump_root(o), pcw_status_str(rc));
            return EXIT_FAIL;
        }
        (void)pcw_consumer_discover(p.consumer, warn_refused, NULL);
    }
    if (o->json) {
        p.sink = &json_sink;
        p.st = json_sink_new(stdout, !o->compact, o->merged);
    } else {
        p.sink = &text_sink;
        p.st = text_sink_new(stdout);
    }
    if (!p.st) {
        fprintf(stderr, "pcwdump: %s\n", pcw_status_str(PCW_E_NO_MEMORY));
        status = EXIT_FAIL;
        goto out;
    }
    /* Samples on a fixed cadence: each deadline is the previous one plus
     * the interval, so slow passes do not make the schedule drift. */
    uint64_t interval_ns = (uint64_t)(o->interval * 1e9);
    uint64_t deadline = now_ns(CLOCK_MONOTONIC);
    for (unsigned sample = 1;; sample++) {
        int s = one_pass(&p, sample);
        if (s > status)
            status = s;
        fflush(stdout);
        if (o->count > 0 && sample >= (unsigned long)o->count)
            break;
        if (o->count == 0 && interval_ns == 0)
            break;
        deadline += interval_ns;
        struct timespec ts = {(time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
    }
out:
    sink_free(p.st);
    free_entries(&p);
    free(p.entries);
    free(p.groups);
    for (size_t i = 0; i < p.nsnaps; i++)
        pcw_snapshot_free(&p.snaps[i]);
    free(p.snaps);
    free(p.order);
    if (p.consumer) {
        pcw_consumer_close(p.consumer);
        free(p.segs);
    } else {
        for (size_t i = 0; i < p.nsegs; i++)
            pcw_segment_close(p.segs[i]);
        free(p.segs);
    }
    return status;
}
