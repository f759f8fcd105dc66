/* SPDX-License-Identifier: MIT */
/*
 * lib/query/query.c - the query object: open/close, adding and removing
 * counter paths (validated against what is published), and one collection:
 *
 *   1. re-read the provider list if it changed (fetch.c), re-bind the
 *      countersets, pick up countersets new to wildcard paths, and tell new
 *      providers of the counters already added (notify.c);
 *   2. read one sample of every referenced counterset (fetch.c);
 *   3. map rows to instances (instances.c) - or, when no provider's
 *      instance list changed since the last sample, keep every mapping (the
 *      fast path that makes a steady-state collection allocation-free) -
 *      and compute the totals (totals.c);
 *   4. re-select each handle's entries where its counterset changed
 *      (match.c). Values are cooked when read (values.c, walk.c).
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "budget.h"
#include "container.h"
#include "fetch.h"
#include "hist_query.h"
#include "histogram.h"
#include "instances.h"
#include "match.h"
#include "notify.h"
#include "path.h"
#include "common/layout.h"
#include "common/name.h"
#include "totals.h"
#include "util.h"
#include "logsource.h"

int pcw_pdh_open(pcw_pdh **out, const pcw_consumer_options *opt)
{
    if (!out)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    pcw_pdh *q = calloc(1, sizeof *q);
    if (!q)
        return PCW_E_NO_MEMORY;
    pcw_consumer_options o = {0};
    if (opt)
        o = *opt;
    const char *root = o.dir ? o.dir : getenv(PCW_DIR_ENV);
    if (!root || !*root)
        root = PCW_DEFAULT_ROOT;
    q->all_users = o.all_users;
    q->timeout_ms = o.timeout_ms ? o.timeout_ms : 1000;
    q->detail = PCW_DETAIL_STANDARD;
    int rc = PCW_E_NO_MEMORY;
    if (!(q->root = strdup(root)) || (rc = pcw_consumer_open(&q->c, &o)) != PCW_OK) {
        free(q->root);
        free(q);
        return rc;
    }
    *out = q;
    return PCW_OK;
}

static void handle_free(pcw_pdh_counter *h)
{
    for (size_t j = 0; j < h->nm; j++) {
        pcw__q_match *mt = &h->m[j];
        if (mt->set->refs)
            mt->set->refs--;
        pcw__q_match_free(mt);
        free(mt->ents);
        free(mt->told);
    }
    free(h->m);
    pcw__q_hcache_free(h->hc);
    pcw_path_free(&h->path);
    free(h->text);
    free(h);
}

void pcw_pdh_close(pcw_pdh *q)
{
    if (PCWL_Q(q)) {
        pcwl_close(q);
        return;
    }
    if (!q)
        return;
    while (q->nctrs)
        pcw_pdh_remove_counter(q, q->ctrs[q->nctrs - 1]);
    free(q->ctrs);
    for (size_t i = 0; i < q->nsets; i++)
        pcw__q_set_free(q->sets[i]);
    free(q->sets);
    for (size_t i = 0; i < q->ndirs; i++)
        free(q->dirs[i]);
    free(q->dirs);
    free(q->dir_stamp);
    free(q->items);
    free(q->cvt);
    free(q->rank);
    pcw_consumer_close(q->c);
    free(q->root);
    free(q);
}

pcw_consumer *pcw_pdh_consumer(pcw_pdh *q)
{
    return q ? q->c : NULL;
}

/* ---- matching paths to countersets --------------------------------------- */

/* Does the instance part of p fit a counterset of this instance type? */
static int instance_form_fits(const pcw_path *p, pcw__q_itype it)
{
    if (it.named)
        return p->instance != NULL;
    /* Unnamed: no instance part, or one that can name "" ("*", "#n"). */
    return !p->instance || pcw__q_instance_match(p->instance, "", 0);
}

static int set_name_matches(const pcw_path *p, const char *name)
{
    if (p->wild & PCW_PATH_WILD_COUNTERSET)
        return pcw__wildcard_match(p->counterset, strlen(p->counterset), name, strlen(name));
    return pcw__name_equal(p->counterset, strlen(p->counterset), name, strlen(name));
}

/* Does the path select any counter of cs at detail level `level` (and
 * which error if not: a base counter named, or a pattern that only
 * counters above the level match)? */
static int counters_fit(const pcw_path *p, const pcw_counterset *cs, uint32_t level,
                        int *base_named, int *above_level, const char **bad_stat)
{
    int wild = (p->wild & PCW_PATH_WILD_COUNTER) != 0;
    *base_named = 0;
    for (uint32_t k = 0; k < cs->counter_count; k++) {
        const pcw_counter *c = &cs->counters[k];
        pcw_hist_stat st[PCW__Q_HIST_NDEFAULT];
        int bad = 0;
        if (!pcw__q_hist_select(p->counter, wild, c->name, c->type, st, &bad)) {
            if (bad)
                *bad_stat = c->name; /* "Latency:p101" */
            continue;
        }
        if (wild) {
            if (pcw_counter_in_wildcard(c->type, c->detail_level, level))
                return 1;
            if (pcw_counter_in_wildcard(c->type, c->detail_level, PCW_DETAIL_WIZARD))
                *above_level = 1;
        } else {
            if (pcw_counter_type_is_base(c->type)) {
                *base_named = 1;
                return 0;
            }
            return 1;
        }
    }
    return 0;
}

static pcw__q_match *add_match(pcw_pdh_counter *h, pcw__q_set *s)
{
    for (size_t j = 0; j < h->nm; j++)
        if (h->m[j].set == s)
            return &h->m[j];
    if (pcw__q_grow((void **)&h->m, &h->m_cap, h->nm + 1, sizeof *h->m))
        return NULL;
    pcw__q_match *mt = &h->m[h->nm++];
    memset(mt, 0, sizeof *mt);
    mt->set = s;
    s->refs++;
    return mt;
}

/* Match h against every published counterset; validate when `strict`.
 * Returns PCW_OK or the path error. */
static int match_sets(pcw_pdh *q, pcw_pdh_counter *h, int strict, pcw_path_error *err)
{
    const pcw_path *p = &h->path;
    size_t nsets = pcw_consumer_counterset_count(q->c), named_sets = 0, fitting = 0;
    int base_named = 0, above_level = 0;
    const char *form_set = NULL, *ctr_set = NULL, *bad_stat = NULL;
    for (size_t i = 0; i < nsets; i++) {
        const pcw_merged_counterset *m = pcw_consumer_counterset(q->c, i);
        const pcw_counterset *cs = m->meta;
        if (!set_name_matches(p, cs->name))
            continue;
        named_sets++;
        if (!instance_form_fits(p, pcw__q_instance_type(cs->instance_type))) {
            form_set = cs->name;
            continue;
        }
        int b = 0;
        if (!counters_fit(p, cs, h->detail, &b, &above_level, &bad_stat)) {
            ctr_set = cs->name;
            base_named |= b;
            continue;
        }
        fitting++;
        pcw__q_set *s = pcw__q_set_get(q, cs->name, 1);
        if (!s)
            return pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
        if (!s->m) {
            int rc = pcw__q_bind(q, s);
            if (rc != PCW_OK)
                return pcw__q_fail(err, rc, PCW_PATH_SYNTAX, 0, "%s", pcw_status_str(rc));
        }
        pcw__q_match *mt = add_match(h, s);
        if (!mt)
            return pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    }
    if (!strict || fitting)
        return PCW_OK;
    size_t set_at = p->host ? 3 + strlen(p->host) : 1;
    if (!named_sets)
        return pcw__q_fail(err, PCW_E_NOT_FOUND, PCW_PATH_COUNTERSET, set_at,
                           (p->wild & PCW_PATH_WILD_COUNTERSET)
                               ? "no counterset matches \"%.200s\" (no provider publishes one)"
                               : "counterset \"%.200s\" does not exist (no provider publishes it)",
                           p->counterset);
    if (form_set && !ctr_set) {
        pcw__q_itype it = pcw__q_instance_type(
            pcw_consumer_find_counterset(q->c, form_set)
                ? pcw_consumer_find_counterset(q->c, form_set)->meta->instance_type
                : PCW_MULTI_INSTANCE);
        if (it.named)
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_INSTANCE,
                               set_at + strlen(p->counterset),
                               "counterset \"%.200s\" has instances: name one, as "
                               "\\%.200s(name)\\%.200s, or (*) for all",
                               form_set, form_set, p->counter);
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_INSTANCE,
                           set_at + strlen(p->counterset),
                           "counterset \"%.200s\" has no instances: leave out \"(%.200s)\"",
                           form_set, p->instance);
    }
    size_t ctr_at = 0;
    {
        /* The counter is what follows the last '\' of the text. */
        const char *t = h->text, *last = strrchr(t, '\\');
        ctr_at = last ? (size_t)(last - t) + 1 : 0;
    }
    if (bad_stat) {
        const char *colon = strrchr(p->counter, ':');
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_COUNTER, ctr_at,
                           "\"%.200s\" is not a statistic of histogram \"%.200s\": use rate, "
                           "count, mean, sum, max or pNN (a quantile, 0 < NN <= 100: p50, p99.9)",
                           colon ? colon + 1 : "", bad_stat);
    }
    if (base_named)
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_COUNTER, ctr_at,
                           "counter \"%.200s\" is a base counter: it is the denominator of "
                           "another counter of \"%.200s\" and has no value of its own",
                           p->counter, ctr_set);
    if (above_level)
        return pcw__q_fail(err, PCW_E_NOT_FOUND, PCW_PATH_COUNTER, ctr_at,
                           "only advanced counters of \"%.200s\" match \"%.200s\": name one, or "
                           "ask for them (pcw_pdh_set_detail, pcwstat --advanced)",
                           ctr_set ? ctr_set : p->counterset, p->counter);
    return pcw__q_fail(err, PCW_E_NOT_FOUND, PCW_PATH_COUNTER, ctr_at,
                       (p->wild & PCW_PATH_WILD_COUNTER)
                           ? "no counter of \"%.200s\" matches \"%.200s\""
                           : "counterset \"%.200s\" has no counter \"%.200s\"",
                       ctr_set ? ctr_set : p->counterset, p->counter);
}

static int add(pcw_pdh *q, const char *text, int notify, pcw_pdh_counter **out, pcw_path_error *err)
{
    pcw__q_path_error_clear(err);
    if (out)
        *out = NULL;
    if (!q || !text)
        return pcw__q_fail(err, PCW_E_INVALID_PARAMETER, PCW_PATH_SYNTAX, 0, "no path given");
    pcw_pdh_counter *h = calloc(1, sizeof *h);
    if (!h)
        return pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    h->q = q;
    h->detail = q->detail;
    int rc = pcw_path_parse(text, &h->path, err);
    if (rc == PCW_OK && !(h->text = strdup(text)))
        rc = pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    if (rc == PCW_OK) {
        int r = pcw__q_refresh_if_changed(q, 0);
        if (r < 0)
            rc = pcw__q_fail(err, r, PCW_PATH_SYNTAX, 0, "cannot read the providers: %s",
                             pcw_status_str(r));
    }
    if (rc == PCW_OK && h->path.container)
        rc = pcw__q_container_resolve(q, h, err);
    if (rc == PCW_OK)
        rc = match_sets(q, h, 1, err);
    if (rc == PCW_OK && pcw__q_grow((void **)&q->ctrs, &q->ctrs_cap, q->nctrs + 1, sizeof *q->ctrs))
        rc = pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    for (size_t j = 0; rc == PCW_OK && j < h->nm; j++)
        if (pcw__q_match_update(h, &h->m[j]) != PCW_OK)
            rc = pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    if (rc != PCW_OK) {
        handle_free(h);
        return rc;
    }
    q->ctrs[q->nctrs++] = h;
    if (notify) {
        pcw__q_budget_start(q);
        for (size_t j = 0; j < h->nm; j++)
            pcw__q_notify(q, h, &h->m[j], 1);
        pcw__q_budget_end(q);
    }
    if (out)
        *out = h;
    return PCW_OK;
}

int pcw_pdh_add_counter(pcw_pdh *q, const char *path, pcw_pdh_counter **out, pcw_path_error *err)
{
    if (PCWL_Q(q))
        return pcwl_add_counter(q, path, out, err);
    return add(q, path, 1, out, err);
}

/* From the newest: pcw_pdh_close removes the handles newest first, each
 * found at once (a search from the oldest made closing n handles n^2). */
static int unlink_handle(pcw_pdh *q, pcw_pdh_counter *h)
{
    for (size_t i = q->nctrs; i-- > 0;)
        if (q->ctrs[i] == h) {
            memmove(q->ctrs + i, q->ctrs + i + 1, (q->nctrs - i - 1) * sizeof *q->ctrs);
            q->nctrs--;
            return 0;
        }
    return -1;
}

int pcw_pdh_remove_counter(pcw_pdh *q, pcw_pdh_counter *ctr)
{
    if (PCWL_Q(q) && ctr)
        return pcwl_remove_counter(q, ctr);
    if (!q || !ctr || unlink_handle(q, ctr))
        return PCW_E_INVALID_PARAMETER;
    pcw__q_budget_start(q);
    for (size_t j = 0; j < ctr->nm; j++)
        pcw__q_notify(q, ctr, &ctr->m[j], 0);
    pcw__q_budget_end(q);
    handle_free(ctr);
    return PCW_OK;
}

size_t pcw_pdh_counter_count(const pcw_pdh *q)
{
    return q ? q->nctrs : 0;
}

pcw_pdh_counter *pcw_pdh_counter_at(const pcw_pdh *q, size_t i)
{
    return q && i < q->nctrs ? q->ctrs[i] : NULL;
}

const char *pcw_pdh_counter_path(const pcw_pdh_counter *ctr)
{
    return ctr ? ctr->text : NULL;
}

int pcw_pdh_set_scale(pcw_pdh_counter *ctr, int32_t scale)
{
    /* PdhSetCounterScaleFactor refuses what is outside PDH_MIN_SCALE (-7)
     * .. PDH_MAX_SCALE (7); a counter's own default_scale may be -10..10. */
    if (!ctr || scale < -7 || scale > 7)
        return PCW_E_INVALID_PARAMETER;
    ctr->scale = scale;
    ctr->scale_set = 1;
    return PCW_OK;
}

uint64_t pcw_pdh_time_ns(const pcw_pdh *q)
{
    return q ? q->time_ns : 0;
}

uint64_t pcw_pdh_realtime_ns(const pcw_pdh *q)
{
    return q ? q->realtime_ns : 0;
}

uint64_t pcw_pdh_collections(const pcw_pdh *q)
{
    return q ? q->collections : 0;
}

/* ---- collecting ---------------------------------------------------------- */

/* Re-read the provider list if it changed; then match wildcard paths to
 * new countersets and tell new providers of the counters added. 1 when it
 * changed, 0 when not, or an error. */
static int catch_up(pcw_pdh *q)
{
    int rc = pcw__q_refresh_if_changed(q, 0);
    if (rc != 1)
        return rc;
    for (size_t i = 0; i < q->nctrs; i++) {
        pcw_pdh_counter *h = q->ctrs[i];
        int r;
        if ((h->path.wild & PCW_PATH_WILD_COUNTERSET) && (r = match_sets(q, h, 0, NULL)) != PCW_OK)
            return r;
        for (size_t j = 0; j < h->nm; j++)
            pcw__q_notify(q, h, &h->m[j], 1);
    }
    return 1;
}

int pcw_pdh_refresh(pcw_pdh *q)
{
    if (PCWL_Q(q))
        return 0;
    if (!q)
        return PCW_E_INVALID_PARAMETER;
    pcw__q_budget_start(q);
    int rc = catch_up(q);
    pcw__q_budget_end(q);
    return rc;
}

int pcw_pdh_set_timeout(pcw_pdh *q, uint32_t ms)
{
    if (!q)
        return PCW_E_INVALID_PARAMETER;
    q->timeout_ms = ms ? ms : 1000;
    pcw_consumer_set_timeout(q->c, q->timeout_ms);
    return PCW_OK;
}

int pcw_pdh_set_detail(pcw_pdh *q, uint32_t level)
{
    if (!q || (level != PCW_DETAIL_NOVICE && level != PCW_DETAIL_ADVANCED &&
               level != PCW_DETAIL_EXPERT && level != PCW_DETAIL_WIZARD))
        return PCW_E_INVALID_PARAMETER;
    q->detail = level;
    return PCW_OK;
}

static int collect(pcw_pdh *q, size_t *failed);

int pcw_pdh_collect(pcw_pdh *q, size_t *failed)
{
    if (PCWL_Q(q))
        return pcwl_collect(q, failed);
    if (failed)
        *failed = 0;
    if (!q)
        return PCW_E_INVALID_PARAMETER;
    pcw__q_budget_start_collect(q);
    int rc = collect(q, failed);
    pcw__q_budget_end(q);
    return rc;
}

static int collect(pcw_pdh *q, size_t *failed)
{
    int rc = catch_up(q);
    if (rc < 0)
        return rc;
    if ((rc = pcw__q_fetch(q)) != PCW_OK)
        return rc;
    for (size_t i = 0; i < q->nsets; i++) {
        pcw__q_set *s = q->sets[i];
        if (!s->refs)
            continue;
        if ((rc = pcw__q_map_instances(s, pcw__q_unchanged(s))) != PCW_OK ||
            (rc = pcw__q_totals(s)) != PCW_OK)
            return rc;
        if (failed)
            for (size_t j = 0; j < s->nsrc[s->cur]; j++)
                *failed += s->src[s->cur][j].status != PCW_OK;
    }
    for (size_t i = 0; i < q->nctrs; i++)
        for (size_t j = 0; j < q->ctrs[i]->nm; j++)
            if ((rc = pcw__q_match_update(q->ctrs[i], &q->ctrs[i]->m[j])) != PCW_OK)
                return rc;
    q->collections++;
    return PCW_OK;
}

/* ---- expansion ----------------------------------------------------------- */

/* One sample of the sets pcw__q_fetch_new_picks. */
static int pcw__q_fetch_only_new(pcw_pdh *q)
{
    int rc = pcw__q_fetch_new(q);
    for (size_t i = 0; i < q->nsets && rc == PCW_OK; i++) {
        pcw__q_set *s = q->sets[i];
        if (!pcw__q_fetch_new_picks(s))
            continue;
        /* As collect: a set read before whose instance lists did not
         * change was read without names (read_set) and keeps its mapping. */
        if ((rc = pcw__q_map_instances(s, pcw__q_unchanged(s))) == PCW_OK)
            rc = pcw__q_totals(s);
    }
    return rc;
}

int pcw_pdh_expand(pcw_pdh *q, const char *path, int (*fn)(const char *path, void *arg), void *arg,
                   pcw_path_error *err)
{
    if (PCWL_Q(q))
        return pcwl_expand(q, path, fn, arg, err);
    if (!q || !path || !fn)
        return pcw__q_fail(err, PCW_E_INVALID_PARAMETER, PCW_PATH_SYNTAX, 0, "no path given");
    pcw_pdh_counter *h;
    int rc = add(q, path, 0, &h, err);
    if (rc != PCW_OK)
        return rc;
    /* Countersets nobody collected yet, and those no handle holds (h is
     * their only match), are read now: they expand to the instances
     * there are now, as PdhExpandWildCardPath enumerates them each call.
     * Those a handle holds are left alone (reading them would change the
     * interval of the handle's rates) and expand to the instances of
     * their last collection. */
    int fresh = 0;
    for (size_t j = 0; j < h->nm; j++) {
        pcw__q_set *s = h->m[j].set;
        s->expand_only = s->refs == 1;
        fresh |= pcw__q_fetch_new_picks(s);
    }
    if (fresh) {
        pcw__q_budget_start(q);
        rc = pcw__q_fetch_only_new(q);
        pcw__q_budget_end(q);
        if (rc != PCW_OK)
            goto out;
        for (size_t j = 0; j < h->nm; j++)
            if ((rc = pcw__q_match_update(h, &h->m[j])) != PCW_OK)
                goto out;
    }
    size_t n = pcw_pdh_value_count(h);
    char stack[512];
    for (size_t i = 0; i < n; i++) {
        const pcw__q_match *mt = NULL;
        size_t at = i;
        for (size_t j = 0; j < h->nm; j++) {
            size_t c = h->m[j].placeholder ? h->m[j].nctr : h->m[j].nents * h->m[j].nctr;
            if (at < c) {
                mt = &h->m[j];
                break;
            }
            at -= c;
        }
        if (!mt || mt->placeholder)
            continue; /* a named instance that does not exist expands to nothing */
        size_t need = pcw_pdh_value_path(h, i, 0, stack, sizeof stack);
        char *buf = stack;
        if (need >= sizeof stack) {
            if (!(buf = malloc(need + 1))) {
                rc = PCW_E_NO_MEMORY;
                goto out;
            }
            pcw_pdh_value_path(h, i, 0, buf, need + 1);
        }
        int stop = fn(buf, arg);
        if (buf != stack)
            free(buf);
        if (stop)
            break;
    }
out:
    for (size_t j = 0; j < h->nm; j++)
        h->m[j].set->expand_only = 0;
    unlink_handle(q, h);
    handle_free(h);
    return rc;
}
