/* SPDX-License-Identifier: MIT */
/*
 * lib/query/fetch.c - the per-collection fetch: notice when providers or
 * countersets came or went (and only then re-read the provider list), bind
 * the query's countersets to what is published, and read one sample of
 * each into its current snapshot.
 *
 * A counterset whose providers are all plain segments is read provider by
 * provider with pcw_segment_read (what pcw_consumer_read does, keeping
 * which provider failed and when each was read), lock-free; every
 * counterset with a callback registration, or a provider with a control
 * channel, is collected in one pcw_consumer_collect_many, so a collection
 * waits at most one time limit in total.
 *
 * Change detection without allocating: the provider folders' mtimes (a
 * segment appears or goes by rename/unlink there), and each segment's
 * counterset list (pcw_segment_refresh, which only walks it when nothing
 * changed). File times come from a coarse clock, so a folder changed less
 * than PCW__Q_DIR_SETTLE_NS ago is looked at again on the next collection.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aggregate.h"
#include "budget.h"
#include "consumer/private.h"
#include "cook.h"
#include "fetch.h"
#include "hist_fused.h"
#include "instances.h"
#include "common/layout.h"
#include "common/name.h"
#include "snaprows.h"
#include "util.h"

#define PCW__Q_DIR_SETTLE_NS 100000000ull /* 100 ms: several coarse ticks */

uint64_t pcw__q_provider_id(const pcw_provider_info *info)
{
    if (info->provider_id)
        return info->provider_id;
    /* A provider that published none: pid and start time (pid reuse gives
     * another start time), mixed so that it looks random. */
    uint64_t x = ((uint64_t)(uint32_t)info->pid << 32) ^ info->start_time ^ 0x9E3779B97F4A7C15ull;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x ? x : 1;
}

/* ---- sets ---------------------------------------------------------------- */

pcw__q_set *pcw__q_set_get(pcw_pdh *q, const char *name, int create)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < q->nsets; i++)
        if (pcw__name_equal(q->sets[i]->name, strlen(q->sets[i]->name), name, n))
            return q->sets[i];
    if (!create)
        return NULL;
    if (pcw__q_grow((void **)&q->sets, &q->sets_cap, q->nsets + 1, sizeof *q->sets))
        return NULL;
    pcw__q_set *s = calloc(1, sizeof *s);
    if (!s || !(s->name = strdup(name))) {
        free(s);
        return NULL;
    }
    q->sets[q->nsets++] = s;
    return s;
}

static void free_meta(pcw__q_set *s)
{
    for (uint32_t k = 0; k < s->ncounters && s->counter_names; k++)
        free(s->counter_names[k]);
    free(s->counter_names), free(s->counter_types), free(s->default_scale), free(s->detail);
    free(s->recipes), free(s->aggfn), free(s->off), free(s->woff), free(s->size), free(s->wsize);
    free(s->counter_ids), free(s->hshape);
    s->hshape = NULL;
    s->counter_names = NULL, s->counter_types = NULL, s->default_scale = NULL, s->detail = NULL;
    s->recipes = NULL, s->aggfn = NULL, s->off = s->woff = NULL, s->size = s->wsize = NULL;
    s->counter_ids = NULL;
    s->ncounters = 0;
}

void pcw__q_set_free(pcw__q_set *s)
{
    if (!s)
        return;
    pcw__q_instances_free(s);
    pcw__q_hpre_free(s->hpre);
    free_meta(s);
    for (int b = 0; b < 2; b++) {
        pcw_snapshot_free(&s->snap[b]);
        free(s->src[b]);
    }
    free(s->mf_seg);
    free(s->mf_cset);
    free(s->mf_status);
    free(s->name);
    free(s);
}

/* A counter's size as s->size holds it: a histogram (words the query
 * reads itself, hist_query.c) as 8, its first word. */
static uint8_t row_size(const pcw_counter *c)
{
    return c->histogram ? 8 : (uint8_t)c->size;
}

/* Do the set's bound counters match cs's? */
static int same_meta(const pcw__q_set *s, const pcw_counterset *cs)
{
    if (s->ncounters != cs->counter_count || s->data_size != cs->data_size ||
        s->instance_type != cs->instance_type)
        return 0;
    for (uint32_t k = 0; k < s->ncounters; k++) {
        const pcw_counter *c = &cs->counters[k];
        if (s->counter_ids[k] != c->id || s->counter_types[k] != c->type ||
            s->detail[k] != c->detail_level || s->off[k] != c->data_offset ||
            s->size[k] != row_size(c) || s->hshape[k] != c->histogram ||
            strcmp(s->counter_names[k], c->name) != 0)
            return 0;
    }
    return 1;
}

static int copy_meta(pcw__q_set *s, const pcw_counterset *cs)
{
    uint32_t n = cs->counter_count;
    free_meta(s);
    s->counter_names = calloc(n ? n : 1, sizeof *s->counter_names);
    s->counter_types = calloc(n ? n : 1, sizeof *s->counter_types);
    s->counter_ids = calloc(n ? n : 1, sizeof *s->counter_ids);
    s->default_scale = calloc(n ? n : 1, sizeof *s->default_scale);
    s->detail = calloc(n ? n : 1, sizeof *s->detail);
    s->recipes = calloc(n ? n : 1, sizeof *s->recipes);
    s->aggfn = calloc(n ? n : 1, sizeof *s->aggfn);
    s->off = calloc(n ? n : 1, sizeof *s->off);
    s->woff = calloc(n ? n : 1, sizeof *s->woff);
    s->size = calloc(n ? n : 1, 1);
    s->wsize = calloc(n ? n : 1, 1);
    s->hshape = calloc(n ? n : 1, sizeof *s->hshape);
    if (!s->hshape || !s->counter_names || !s->counter_types || !s->counter_ids ||
        !s->default_scale || !s->detail || !s->recipes || !s->aggfn || !s->off || !s->woff ||
        !s->size || !s->wsize) {
        free_meta(s);
        return PCW_E_NO_MEMORY;
    }
    s->ncounters = n;
    for (uint32_t k = 0; k < n; k++) {
        const pcw_counter *c = &cs->counters[k];
        if (!(s->counter_names[k] = strdup(c->name))) {
            free_meta(s);
            return PCW_E_NO_MEMORY;
        }
        s->counter_types[k] = c->type;
        s->counter_ids[k] = c->id;
        s->default_scale[k] = c->default_scale;
        s->detail[k] = c->detail_level;
        s->off[k] = c->data_offset;
        s->size[k] = row_size(c);
        s->hshape[k] = c->histogram;
        s->woff[k] = 8 * k;
        s->wsize[k] = 8;
        pcw__q_recipe_build(cs, k, &s->recipes[k]);
    }
    pcw__q_aggregate_functions(cs, s->aggfn);
    s->two = 0;
    for (uint32_t k = 0; k < n; k++)
        s->two |= pcw_cook_needs_two(s->counter_types[k]) || s->hshape[k];
    s->data_size = cs->data_size;
    s->instance_type = cs->instance_type;
    s->flags = cs->flags;
    s->it = pcw__q_instance_type(cs->instance_type);
    return PCW_OK;
}

/* The epoch (what the matches selected) changes only when the set comes or
 * goes, its counters change or its providers do (a missing instance's
 * status says whether its provider is gone): every consumer refresh binds
 * every set again, and a refresh that changed nothing of this set must not
 * make each handle select its entries again (with many handles, as
 * pcwstat's columns, that made every refresh cost handles x entries). */
int pcw__q_bind(pcw_pdh *q, pcw__q_set *s)
{
    int was_bound = s->m != NULL;
    s->m = pcw_consumer_find_counterset(q->c, s->name);
    if (!s->m || !was_bound)
        s->epoch++;
    if (!s->m)
        return PCW_OK;
    const pcw_counterset *cs = s->m->meta;
    if (!s->counter_names || !same_meta(s, cs)) {
        s->epoch += was_bound;
        /* First sight, or registered again with other counters: what the
         * query knew about its instances no longer applies. */
        pcw__q_instances_free(s);
        s->ins.have_prev = 0;
        int rc = copy_meta(s, cs);
        if (rc != PCW_OK) {
            s->m = NULL;
            return rc;
        }
    }
    s->callback = 0;
    uint64_t sig = s->m->source_count; /* its providers, in any order */
    for (size_t i = 0; i < s->m->source_count; i++) {
        pcw_segment *seg = pcw_consumer_segment(q->c, s->m->source_segment[i]);
        if ((s->m->source_cset[i]->flags & PCW_CSET_F_CALLBACK) ||
            (seg && (pcw_segment_provider(seg)->flags & PCW_SEG_F_CONTROL)))
            s->callback = 1;
        if (seg)
            sig += pcw__q_provider_id(pcw_segment_provider(seg));
    }
    if (sig != s->src_sig)
        s->epoch++;
    s->src_sig = sig;
    size_t n = s->m->source_count;
    if (s->mf_cap < n) {
        uint32_t *a = realloc(s->mf_seg, n * sizeof *a);
        if (!a)
            return PCW_E_NO_MEMORY;
        s->mf_seg = a;
        const pcw_counterset **c = realloc(s->mf_cset, n * sizeof *c);
        if (!c)
            return PCW_E_NO_MEMORY;
        s->mf_cset = c;
        s->mf_cap = n;
    }
    return PCW_OK;
}

/* ---- change detection ---------------------------------------------------- */

static uint64_t stamp(const char *path, uint64_t *mtime)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *mtime = 0;
        return 0;
    }
    *mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    return *mtime ^ ((uint64_t)st.st_ino << 1) ^ ((uint64_t)st.st_ctim.tv_nsec << 7);
}

/* Has a watched folder changed (or changed too recently to be sure)? */
static int dirs_changed(pcw_pdh *q)
{
    uint64_t now = pcw__q_real_ns(), mt;
    if (q->all_users) {
        if (stamp(q->root, &mt) != q->root_stamp || now - mt < PCW__Q_DIR_SETTLE_NS)
            return 1;
    }
    for (size_t i = 0; i < q->ndirs; i++)
        if (stamp(q->dirs[i], &mt) != q->dir_stamp[i] || now - mt < PCW__Q_DIR_SETTLE_NS)
            return 1;
    /* Containers' folders, and whether a walk of /proc is due: cheap
     * (consumer/private.h), never a walk itself. */
    return pcw__consumer_containers_changed(q->c);
}

static void free_dirs(pcw_pdh *q)
{
    for (size_t i = 0; i < q->ndirs; i++)
        free(q->dirs[i]);
    free(q->dirs);
    free(q->dir_stamp);
    q->dirs = NULL, q->dir_stamp = NULL, q->ndirs = 0;
}

static int add_dir(pcw_pdh *q, const char *path, size_t *cap)
{
    if (pcw__q_grow((void **)&q->dirs, cap, q->ndirs + 1, sizeof *q->dirs))
        return -1;
    size_t scap = q->ndirs;
    if (pcw__q_grow((void **)&q->dir_stamp, &scap, q->ndirs + 1, sizeof *q->dir_stamp))
        return -1;
    if (!(q->dirs[q->ndirs] = strdup(path)))
        return -1;
    uint64_t mt;
    q->dir_stamp[q->ndirs++] = stamp(path, &mt);
    return 0;
}

/* Record the folders to watch, as they are now (after a refresh). */
static void watch_dirs(pcw_pdh *q)
{
    free_dirs(q);
    size_t cap = 0;
    uint64_t mt;
    char path[4096];
    if (!q->all_users) {
        snprintf(path, sizeof path, "%s/pcw-%u", q->root, (unsigned)geteuid());
        (void)add_dir(q, path, &cap);
        return;
    }
    q->root_stamp = stamp(q->root, &mt);
    DIR *d = opendir(q->root);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "pcw-", 4) == 0) {
            snprintf(path, sizeof path, "%s/%s", q->root, e->d_name);
            if (add_dir(q, path, &cap))
                break;
        }
    closedir(d);
}

int pcw__q_refresh_if_changed(pcw_pdh *q, int force)
{
    int changed = force || !q->refreshed || dirs_changed(q);
    for (size_t i = 0; !changed && i < pcw_consumer_segment_count(q->c); i++) {
        int ch = 0;
        if (pcw_segment_refresh(pcw_consumer_segment(q->c, i), &ch) != PCW_OK || ch)
            changed = 1;
    }
    if (!changed)
        return PCW_OK;
    /* Stamp the folders before reading them, so that a change made during
     * the refresh is seen next time. */
    watch_dirs(q);
    int rc = pcw_consumer_refresh(q->c, NULL);
    if (rc != PCW_OK && rc != PCW_E_IO)
        return rc;
    q->refreshed = 1;
    for (size_t i = 0; i < q->nsets; i++) {
        int r = pcw__q_bind(q, q->sets[i]);
        if (r != PCW_OK)
            return r;
    }
    return 1; /* refreshed */
}

/* ---- the fetch ----------------------------------------------------------- */

static int src_slot(pcw__q_set *s, int b, size_t need)
{
    return pcw__q_grow((void **)&s->src[b], &s->src_cap[b], need, sizeof *s->src[b]) ? -1 : 0;
}

/* Read every live provider's part of s, in src order, into snap[cur].
 * For pcw_pdh_collect_rows' set, a read without names (the instances are
 * those of the last sample: read_set) hands each validated run of rows
 * over as it is read; any other read of it says it cannot. */
static int read_sources(pcw_pdh *q, pcw__q_set *s, unsigned flags)
{
    int b = s->cur;
    pcw_snapshot *snap = (pcw_snapshot *)pcw__q_snap(s, b);
    pcw__q_row_sink *f = q->rows && q->rows->set == s ? q->rows : NULL;
    if (f && !(flags & PCW_READ_NO_NAMES)) {
        f->cannot(f);
        f = NULL;
    }
    /* Histograms cooked as they are read, when no handle's rows are. */
    int hist = !f && pcw__q_hpre_begin(q, s, flags);
    for (size_t i = 0; i < s->nsrc[b]; i++) {
        pcw__q_src *x = &s->src[b][i];
        if (!x->alive) {
            if (f)
                f->cannot(f);
            continue;
        }
        pcw_segment *seg = pcw_consumer_segment(q->c, x->seg);
        x->gen_before = pcw_segment_generation(seg);
        x->first = snap->count;
        x->time_ns = pcw__q_mono_ns();
        size_t ns = snap->nsources;
        int rc;
        if (f) {
            /* (A read without names follows maybe_unchanged: the same
             * sources as the last sample, index by index.) */
            rc = f->read(f, seg, s->m->source_cset[x->k], snap, flags | PCW_READ_APPEND,
                         s->src[b ^ 1][i].gen_after);
        } else if (hist) {
            rc = pcw__q_hpre_read(s, seg, s->m->source_cset[x->k], snap, flags | PCW_READ_APPEND);
        } else {
            rc = pcw_segment_read(seg, s->m->source_cset[x->k], snap, flags | PCW_READ_APPEND);
        }
        if (rc == PCW_E_NO_MEMORY) {
            pcw__q_hpre_end(s);
            return rc;
        }
        if (rc == PCW_OK && snap->nsources > ns)
            x->time_ns = snap->sources[snap->nsources - 1].time_ns; /* when it was read */
        x->status = rc;
        x->count = rc == PCW_OK ? snap->count - x->first : 0;
        x->gen_after = pcw_segment_generation(seg);
    }
    pcw__q_hpre_end(s);
    s->busy[b] = snap->busy;
    return PCW_OK;
}

int pcw__q_unchanged(const pcw__q_set *s)
{
    int b = s->cur, pb = b ^ 1;
    if (!s->ins.have_prev || s->callback || s->ins.nstale || s->nsrc[b] != s->nsrc[pb] ||
        s->busy[b] || s->busy[pb])
        return 0;
    for (size_t i = 0; i < s->nsrc[b]; i++) {
        const pcw__q_src *x = &s->src[b][i], *y = &s->src[pb][i];
        if (x->provider_id != y->provider_id || x->k != y->k || x->status != PCW_OK ||
            y->status != PCW_OK || x->first != y->first || x->count != y->count || !y->gen_before ||
            y->gen_before != x->gen_after)
            return 0;
    }
    return 1;
}

/* Before reading: can this sample be unchanged? (The same providers as
 * last time, and no instance list changed since.) */
static int maybe_unchanged(pcw_pdh *q, const pcw__q_set *s)
{
    int b = s->cur, pb = b ^ 1;
    if (!s->ins.have_prev || s->ins.nstale || s->nsrc[b] != s->nsrc[pb])
        return 0;
    for (size_t i = 0; i < s->nsrc[b]; i++) {
        const pcw__q_src *x = &s->src[b][i], *y = &s->src[pb][i];
        if (x->provider_id != y->provider_id || x->k != y->k || !x->alive || y->status != PCW_OK ||
            !y->gen_before || y->gen_before != y->gen_after ||
            pcw_segment_generation(pcw_consumer_segment(q->c, x->seg)) != y->gen_after)
            return 0;
    }
    return 1;
}

/* Start a sample of s: empty snap[cur], list its sources (the live ones
 * also in s->mf, for a collection), in the order their providers started. */
static int prepare_set(pcw_pdh *q, pcw__q_set *s)
{
    int b = s->cur;
    pcw_snapshot *snap = (pcw_snapshot *)pcw__q_snap(s, b);
    pcw_snapshot_clear(snap);
    snap->data_size = s->data_size;
    s->nsrc[b] = 0;
    s->busy[b] = 0;
    s->mf.source_count = 0;
    if (!s->m)
        return PCW_OK;
    size_t n = s->m->source_count;
    if (src_slot(s, b, n ? n : 1))
        return PCW_E_NO_MEMORY;
    /* Providers that exited are not read: their segment stays behind only
     * until someone removes it, and its values are no longer true. */
    size_t nlive = 0;
    for (size_t i = 0; i < n; i++) {
        pcw__q_src *x = &s->src[b][s->nsrc[b]++];
        memset(x, 0, sizeof *x);
        x->k = (uint32_t)i;
        x->seg = s->m->source_segment[i];
        x->reg_index = s->m->source_cset[i]->reg_index;
        pcw_segment *seg = pcw_consumer_segment(q->c, x->seg);
        const pcw_provider_info *info = seg ? pcw_segment_provider(seg) : NULL;
        x->pid = info ? info->pid : 0;
        x->start_time = info ? info->start_time : 0;
        x->provider_id = info ? pcw__q_provider_id(info) : 0;
        x->alive = seg && pcw_segment_alive(seg) == PCW_OK;
        x->status = x->alive ? PCW_OK : PCW_E_PROVIDER_EXITED;
        x->mf = UINT32_MAX;
        if (x->alive) {
            x->mf = (uint32_t)nlive;
            s->mf_seg[nlive] = x->seg;
            s->mf_cset[nlive++] = s->m->source_cset[i];
        }
    }
    s->mf.meta = s->m->meta;
    s->mf.source_count = nlive;
    s->mf.source_segment = s->mf_seg;
    s->mf.source_cset = s->mf_cset;
    s->mf.mismatched = 0;
    /* Providers in the order they started (then pid, then registration):
     * values come out in a stable order, and when several providers
     * publish one name, the oldest provider's instance is the one without
     * #n. (Few providers: insertion sort.) */
    pcw__q_src *v = s->src[b];
    for (size_t i = 1; i < s->nsrc[b]; i++) {
        pcw__q_src t = v[i];
        size_t j = i;
        while (j > 0 && (v[j - 1].start_time > t.start_time ||
                         (v[j - 1].start_time == t.start_time &&
                          (v[j - 1].pid > t.pid ||
                           (v[j - 1].pid == t.pid && v[j - 1].reg_index > t.reg_index))))) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = t;
    }
    return PCW_OK;
}

/* A set whose providers are all plain segments: read lock-free, provider
 * by provider (what pcw_consumer_read does, keeping which provider failed
 * and when each was read). */
static int read_set(pcw_pdh *q, pcw__q_set *s)
{
    /* Names are only needed when instances came or went: if no provider's
     * instance list changed since the last sample (its generation), read
     * without them - and read again with them if a change slipped in
     * during the read. */
    int no_names = maybe_unchanged(q, s);
    int rc = read_sources(q, s, no_names ? PCW_READ_NO_NAMES : 0);
    if (rc == PCW_OK && no_names && !pcw__q_unchanged(s)) {
        pcw_snapshot *snap = (pcw_snapshot *)pcw__q_snap(s, s->cur);
        pcw_snapshot_clear(snap);
        snap->data_size = s->data_size;
        rc = read_sources(q, s, 0);
    }
    return rc;
}

/* After the collection: each provider's status, rows and read time. Rows
 * are found by their source entry (segment and registration: a provider
 * may register one name twice); a provider whose part is missing has
 * none, or only its segment instances (a mixed registration that did not
 * answer in time). */
static void collected_set(pcw__q_set *s, uint64_t t)
{
    int b = s->cur;
    const pcw_snapshot *snap = pcw__q_snap(s, b);
    s->busy[b] = snap->busy;
    for (size_t i = 0; i < s->nsrc[b]; i++) {
        pcw__q_src *x = &s->src[b][i];
        if (!x->alive)
            continue;
        x->status = s->mf_status[x->mf];
        x->time_ns = t;
        x->first = snap->count, x->count = 0;
        for (size_t e = 0; e < snap->nsources; e++) {
            const pcw_snapshot_source *src = &snap->sources[e];
            if (src->source != x->seg || src->registration != x->reg_index)
                continue;
            x->first = src->first, x->count = src->count;
            if (src->time_ns)
                x->time_ns = src->time_ns;
            break;
        }
    }
}

/* One sample of each set `pick` selects (flipping its cur): plain
 * segment sets read directly, lock-free; every set with a callback
 * registration or a provider with a control channel collected in one
 * pcw_consumer_collect_many, so the whole fetch waits at most one time
 * limit, however many slow providers and countersets it spans. */
static int fetch_sets(pcw_pdh *q, int only_new)
{
    size_t ncb = 0;
    int rc = PCW_OK;
    for (size_t i = 0; i < q->nsets && rc == PCW_OK; i++) {
        pcw__q_set *s = q->sets[i];
        if (!s->refs || (only_new && !pcw__q_fetch_new_picks(s)))
            continue;
        s->cur ^= 1;
        if (s->hpre)
            s->hpre->gen++; /* its rows are this sample's to be */
        if ((rc = prepare_set(q, s)) != PCW_OK || !s->m)
            continue;
        if (!s->callback) {
            rc = read_set(q, s);
            continue;
        }
        if (!s->mf.source_count)
            continue;
        if (pcw__q_grow((void **)&s->mf_status, &s->mf_status_cap, s->mf.source_count,
                        sizeof *s->mf_status) ||
            pcw__q_grow((void **)&q->items, &q->items_cap, ncb + 1, sizeof *q->items)) {
            rc = PCW_E_NO_MEMORY;
            continue;
        }
        memset(&s->rep, 0, sizeof s->rep);
        s->rep.source_status = s->mf_status;
        q->items[ncb++] =
            (pcw_collect_item){&s->mf, NULL, (pcw_snapshot *)pcw__q_snap(s, s->cur), 0, &s->rep};
    }
    if (rc != PCW_OK || !ncb)
        return rc;
    uint64_t t = pcw__q_mono_ns();
    if (!pcw__q_budget_arm(q, 0)) {
        /* The call's time limit is spent (a refresh's notifications used
         * it): not asked, as late as a provider that did not answer. */
        for (size_t i = 0; i < ncb; i++) {
            pcw_collect_item *it = &q->items[i];
            for (size_t j = 0; j < it->m->source_count; j++)
                it->rep->source_status[j] = PCW_E_TIMEOUT;
        }
    } else if ((rc = pcw_consumer_collect_many(q->c, q->items, ncb)) != PCW_OK) {
        return rc;
    }
    for (size_t i = 0; i < q->nsets; i++) {
        pcw__q_set *s = q->sets[i];
        if (s->refs && (!only_new || pcw__q_fetch_new_picks(s)) && s->m && s->callback &&
            s->mf.source_count)
            collected_set(s, t);
    }
    return PCW_OK;
}

int pcw__q_fetch(pcw_pdh *q)
{
    q->time_ns = pcw__q_mono_ns();
    q->realtime_ns = pcw__q_real_ns();
    return fetch_sets(q, 0);
}

int pcw__q_fetch_new(pcw_pdh *q)
{
    return fetch_sets(q, 1);
}
