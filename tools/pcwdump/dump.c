/*
 * dump.c - the walk: find the providers (a pcw_consumer over the directory,
 * or the --segment files), apply the filters, read each counterset once and
 * hand it to the output format. Repeats for --watch.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcw/layout.h>

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
    size_t counters;  /* counters shown (over all countersets) */
    int failed;       /* a read or refresh failed */
} pass_stats;

typedef struct pass {
    const dump_opts *o;
    const dump_sink *sink;
    void *st;
    pcw_consumer *consumer; /* NULL with --segment */
    pcw_segment **segs;
    size_t nsegs;
    pcw_snapshot snap;
    size_t *order;
    size_t order_cap;
    unsigned char *shown;
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
    pcw_segment *s = so->consumer ? pcw_consumer_segment(so->consumer, row_source(so->snap, row))
                                  : NULL;
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

/* Pick the instances to show from p->snap into p->order, sorted. */
static int select_instances(pass *p, const pcw_consumer *merged_from, size_t *n)
{
    if (p->snap.count > p->order_cap) {
        size_t *v = realloc(p->order, p->snap.count * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        p->order = v, p->order_cap = p->snap.count;
    }
    size_t k = 0;
    for (size_t i = 0; i < p->snap.count; i++)
        if (sel_instance(p->o, pcw_snapshot_id(&p->snap, i), pcw_snapshot_name(&p->snap, i),
                         pcw_snapshot_name_len(&p->snap, i)))
            p->order[k++] = i;
    sample_order so = {&p->snap, merged_from};
    if (k > 1) /* p->order is NULL until a read returned instances */
        qsort_r(p->order, k, sizeof *p->order, cmp_sample, &so);
    *n = k;
    return PCW_OK;
}

static int prepare_shown(pass *p, const pcw_counterset *cs, size_t *nshown)
{
    unsigned char *v = realloc(p->shown, cs->counter_count ? cs->counter_count : 1);
    if (!v)
        return PCW_E_NO_MEMORY;
    p->shown = v;
    *nshown = sel_counters(p->o, cs, v);
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

static void provider_pass(pass *p)
{
    const dump_opts *o = p->o;
    size_t *idx = calloc(p->nsegs + 1, sizeof *idx);
    if (!idx) {
        p->s.failed = 1;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->nsegs; i++)
        if (sel_provider(o, pcw_segment_provider(p->segs[i])))
            idx[n++] = i;
    qsort_r(idx, n, sizeof *idx, cmp_seg, p->segs);
    /* With a counterset or instance filter, a provider shows only if one
     * of its countersets does. */
    int lazy = o->csets.n || instance_filter(o);
    for (size_t k = 0; k < n; k++) {
        pcw_segment *seg = p->segs[idx[k]];
        const pcw_provider_info *pi = pcw_segment_provider(seg);
        int started = 0;
        if (!lazy) {
            p->sink->provider_begin(p->st, pi, pcw_segment_alive(seg) == PCW_OK);
            started = 1;
        }
        for (size_t c = 0; c < pcw_segment_counterset_count(seg); c++) {
            const pcw_counterset *cs = pcw_segment_counterset(seg, c);
            if (!sel_cset(o, cs))
                continue;
            cset_view v = {.cs = cs, .snap = &p->snap};
            int rc = prepare_shown(p, cs, &v.nshown);
            if (rc == PCW_OK) {
                /* Segment instances, and a callback's through its provider's
                 * control channel, within the time limit. */
                pcw_query q = make_query(o, cs, p->shown);
                rc = pcw_segment_collect(seg, cs, &q, &p->snap, 0, 0, o->timeout_ms, NULL);
            }
            if (rc == PCW_OK)
                rc = select_instances(p, NULL, &v.ninst);
            if (rc == PCW_OK && instance_filter(o) && v.ninst == 0)
                continue;
            v.read_rc = rc;
            v.shown = p->shown;
            v.order = p->order;
            if (!started) {
                p->sink->provider_begin(p->st, pi, pcw_segment_alive(seg) == PCW_OK);
                started = 1;
            }
            p->sink->cset(p->st, o, &v);
            p->s.csets++;
            p->s.counters += v.nshown;
            p->s.instances += rc == PCW_OK ? v.ninst : 0;
            if (rc != PCW_OK)
                p->s.failed = 1;
        }
        if (started) {
            p->sink->provider_end(p->st);
            p->s.providers++;
        }
    }
    free(idx);
}

static int cmp_merged(const void *a, const void *b, void *arg)
{
    const pcw_consumer *c = arg;
    return strcmp(pcw_consumer_counterset(c, *(const size_t *)a)->meta->name,
                  pcw_consumer_counterset(c, *(const size_t *)b)->meta->name);
}

static void merged_pass(pass *p)
{
    const dump_opts *o = p->o;
    pcw_consumer *c = p->consumer;
    size_t nm = pcw_consumer_counterset_count(c);
    size_t *idx = calloc(nm + 1, sizeof *idx);
    size_t *sources = calloc(p->nsegs + 1, sizeof *sources);
    uint32_t *src_seg = calloc(p->nsegs + 1, sizeof *src_seg);
    const pcw_counterset **src_cs = calloc(p->nsegs + 1, sizeof *src_cs);
    if (!idx || !sources || !src_seg || !src_cs) {
        p->s.failed = 1;
        goto out;
    }
    for (size_t i = 0; i < nm; i++)
        idx[i] = i;
    qsort_r(idx, nm, sizeof *idx, cmp_merged, c);
    for (size_t k = 0; k < nm; k++) {
        const pcw_merged_counterset *m = pcw_consumer_counterset(c, idx[k]);
        if (!sel_cset(o, m->meta))
            continue;
        /* Only the selected providers' registrations: a filtered copy of
         * the merged counterset, read with the same call. */
        size_t ns = 0;
        for (size_t i = 0; i < m->source_count && ns < p->nsegs; i++) {
            pcw_segment *s = pcw_consumer_segment(c, m->source_segment[i]);
            if (!s || !sel_provider(o, pcw_segment_provider(s)))
                continue;
            sources[ns] = i;
            src_seg[ns] = m->source_segment[i];
            src_cs[ns++] = m->source_cset[i];
        }
        if (!ns && sel_any_provider_filter(o))
            continue;
        pcw_merged_counterset sub = *m;
        sub.source_count = ns;
        sub.source_segment = src_seg;
        sub.source_cset = src_cs;
        cset_view v = {.cs = m->meta,
                       .snap = &p->snap,
                       .merged = m,
                       .consumer = c,
                       .sources = sources,
                       .nsources = ns};
        pcw_collect_report rep = {0};
        int rc = prepare_shown(p, m->meta, &v.nshown);
        if (rc == PCW_OK) {
            pcw_query q = make_query(o, m->meta, p->shown);
            rc = pcw_consumer_collect(c, &sub, &q, &p->snap, 0, &rep);
        }
        if (rc == PCW_OK)
            rc = select_instances(p, c, &v.ninst);
        if (rc == PCW_OK && instance_filter(o) && v.ninst == 0)
            continue;
        if (rc == PCW_OK && rep.failed)
            rc = rep.first_error; /* e.g. a provider that did not answer in time */
        v.read_rc = rc;
        v.shown = p->shown;
        v.order = p->order;
        p->sink->cset(p->st, o, &v);
        p->s.csets++;
        p->s.counters += v.nshown;
        p->s.instances += rc == PCW_OK ? v.ninst : 0;
        if (rc != PCW_OK)
            p->s.failed = 1;
    }
out:
    free(idx);
    free(sources);
    free(src_seg);
    free(src_cs);
}

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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
    p->sink->doc_begin(p->st, o, sample, now_ns(CLOCK_REALTIME));
    if (o->merged)
        merged_pass(p);
    else
        provider_pass(p);
    if (p->sink->doc_end(p->st, o, p->s.providers, p->s.csets) != 0) {
        fprintf(stderr, "pcwdump: cannot write the output: %s\n", strerror(errno));
        return EXIT_FAIL;
    }
    if (p->s.failed)
        status = EXIT_FAIL;
    /* Say why the output is empty; a filter that matched nothing fails. */
    if (o->merged ? !p->s.csets : !p->s.providers) {
        if (o->providers.n || o->csets.n || instance_filter(o)) {
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
    } else if (o->counters.n && !p->s.counters) {
        fprintf(stderr, "pcwdump: --counters matches no counter\n");
        status = EXIT_FAIL;
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
        pcw_consumer_options co = {
            .dir = o->dir, .all_users = o->all_users, .timeout_ms = o->timeout_ms};
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
    pcw_snapshot_free(&p.snap);
    free(p.order);
    free(p.shown);
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
