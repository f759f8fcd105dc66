/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/collector.c - a scrape (collector.h).
 *
 * One pcw_pdh query holds one handle, "\Set(*)\*", per exported
 * counterset. A scrape:
 *
 *   1. catches up with the providers (pcw_pdh_refresh); when countersets
 *      came or went, adds or removes handles, and rebuilds every metric
 *      family: names made from pcw names (expo.c), the type mapping
 *      (mapping.c), and the HELP/TYPE lines of both formats, once;
 *   2. collects (pcw_pdh_collect) within the time left before the
 *      scrape's deadline: callback countersets that do not answer by then
 *      are left out and counted (pcw_pdh_get_source);
 *   3. writes, counterset by counterset and family by family, one series
 *      per provider instance (pcw_pdh_raw_*): the raw value, never
 *      cooked. Each instance's label string ({instance_name=..,provider=..,
 *      pid=..}) is built once and kept while the instance list stays the
 *      same (pcw_pdh_raw_epoch), so a steady-state scrape only copies;
 *   4. writes the exporter's own metrics.
 *
 * Names are unique by construction or left out: a family whose name (or a
 * sample name it makes) is already taken - two pcw names that sanitise
 * alike - is dropped and counted, in a stable order (countersets sorted by
 * metric name), so the same family wins every time. Instances whose label
 * strings coincide (two names that differ only in invalid bytes, or one
 * process publishing a name twice) keep the first.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcw/histogram.h>
#include "common/name.h"
#include <pcw/pdh.h>
#include <pcw/version.h>

#include "../common/container.h"
#include "collector.h"
#include "log.h"
#include "mapping.h"
#include "names.h"
#include "proto.h"
#include "unreadable.h"

/* ---- structures ------------------------------------------------------------ */

/* One metric family. */
typedef struct xfam {
    uint32_t counter; /* its counter's index in the counterset */
    const fam_rule *rule;
    char *name;         /* the family: pcw_<set>_<counter><infix><unit> */
    char *s1, *s2, *s3; /* sample names: the value (name, name_total or
                           name_sum), a summary's or histogram's name_count,
                           a histogram's name_bucket */
    size_t s1_len, s2_len, s3_len;
    ebuf head[2]; /* HELP and TYPE (and UNIT) lines, per text format */
    char *help;   /* the help text as UTF-8 (the protobuf format) */
    /* A histogram: its shape and classic buckets. */
    uint32_t shape;
    classic plan;
} xfam;

/* One exported counterset. */
typedef struct xset {
    char *name;                        /* as published */
    char stem[4 + NAMES_PART_MAX + 9]; /* "pcw_<set>" */
    pcw_pdh_counter *h;                /* NULL: cannot be exported (logged once) */
    int named;                         /* instances have names: instance_name label */
    int seen;                          /* published at the last refresh */
    int logged;                        /* why it cannot be exported was logged */
    xfam *fam;
    size_t nfam;
    size_t collisions; /* families left out: names taken */
    /* Label strings of the raw instances, valid for `epoch`. */
    uint64_t epoch;
    int labels_valid;
    ebuf lab;
    uint32_t *lab_off, *lab_len;
    /* The same labels' values as UTF-8 strings for the protobuf format:
     * instance i's are at plab.p + plab_off[i], each NUL-terminated:
     * instance_name (named sets only), provider, pid. */
    ebuf plab;
    uint32_t *plab_off;
    uint8_t *dup;
    size_t lab_cap, nlab, ndup;
} xset;

struct collector {
    pthread_mutex_t lock; /* one scrape at a time: owns what follows but errors[] */
    pcw_pdh *q;
    collector_options opt;
    xset **sets;
    size_t nsets, sets_cap;
    int synced;   /* sets have been matched to the published ones */
    pcw_raw *col; /* one counter's raw values for every instance */
    size_t col_cap;
    /* A histogram's words and classic cumulative counts (one instance's),
     * and the protobuf family being built. */
    uint64_t *words, *cum;
    size_t words_cap, cum_cap;
    proto_fam *pf;
    /* Name registry (family and sample names in use), open addressing. */
    const char **names;
    size_t names_cap, nnames;
    /* Counters of the exporter's own metrics. */
    uint64_t scrapes, timeouts;    /* under lock */
    uint64_t errors[CAUSE_COUNT_]; /* under count_lock: also counted by
                                      HTTP threads (collector_count) */
    pthread_mutex_t count_lock;
    /* Providers it cannot read (logged once, counted): under lock. */
    unreadable *unread;
    int unread_due; /* under lock: the last check was cut short, check again */
};

/* The longest the check of unreadable providers at start may take (no
 * scrape bounds it): past it, the first scrape checks again. */
#define UNREADABLE_AT_START_NS (10 * 1000000000ull)

static const char *const cause_names[CAUSE_COUNT_] = {
    "collect", "provider",     "name_collision", "duplicate_series", "busy", "encoding",
    "auth",    "auth_limited", "auth_busy",      "request_timeout",  "shed", "memory",
};

int lock_until(pthread_mutex_t *m, uint64_t deadline_ns)
{
    /* pthread_mutex_timedlock takes CLOCK_REALTIME: the same distance from
     * now (a clock step during the wait moves it; the wait stays bounded).
     * Not pthread_mutex_clocklock, which ThreadSanitizer does not know. */
    uint64_t now = mono_ns();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    uint64_t at = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec +
                  (deadline_ns > now ? deadline_ns - now : 0);
    struct timespec dl = {(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)};
    return pthread_mutex_timedlock(m, &dl);
}

/* ---- the name registry ------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static int names_has(const collector *c, const char *s)
{
    if (!c->names_cap)
        return 0;
    for (size_t i = hash_str(s) & (c->names_cap - 1); c->names[i]; i = (i + 1) & (c->names_cap - 1))
        if (strcmp(c->names[i], s) == 0)
            return 1;
    return 0;
}

/* Add s (kept by pointer: it must outlive the registry). 0 or -1. */
static int names_add(collector *c, const char *s)
{
    if (2 * (c->nnames + 1) > c->names_cap) {
        size_t cap = c->names_cap ? 2 * c->names_cap : 256;
        const char **v = calloc(cap, sizeof *v);
        if (!v)
            return -1;
        for (size_t i = 0; i < c->names_cap; i++)
            if (c->names[i]) {
                size_t j = hash_str(c->names[i]) & (cap - 1);
                while (v[j])
                    j = (j + 1) & (cap - 1);
                v[j] = c->names[i];
            }
        free(c->names);
        c->names = v;
        c->names_cap = cap;
    }
    size_t i = hash_str(s) & (c->names_cap - 1);
    while (c->names[i])
        i = (i + 1) & (c->names_cap - 1);
    c->names[i] = s;
    c->nnames++;
    return 0;
}

/* The exporter's own metric names (families and samples), taken first. */
static const char *const self_names[] = {
    "pcw_exporter_build_info",
    "pcw_exporter_scrape_duration_seconds",
    "pcw_exporter_scrape_budget_seconds",
    "pcw_exporter_scrapes",
    "pcw_exporter_scrapes_total",
    "pcw_exporter_providers",
    "pcw_exporter_providers_up",
    "pcw_exporter_providers_unreadable",
    "pcw_exporter_countersets",
    "pcw_exporter_series",
    "pcw_exporter_late_countersets",
    "pcw_exporter_callback_timeouts",
    "pcw_exporter_callback_timeouts_total",
    "pcw_exporter_errors",
    "pcw_exporter_errors_total",
};

/* ---- families ---------------------------------------------------------------- */

static void fam_free(xfam *f)
{
    free(f->name);
    free(f->s1);
    free(f->s2);
    free(f->s3);
    free(f->help);
    classic_free(&f->plan);
    eb_free(&f->head[0]);
    eb_free(&f->head[1]);
}

static void set_free_fams(xset *s)
{
    for (size_t i = 0; i < s->nfam; i++)
        fam_free(&s->fam[i]);
    free(s->fam);
    s->fam = NULL;
    s->nfam = 0;
}

static const char *type_word(int t)
{
    return t == MT_COUNTER     ? "counter"
           : t == MT_SUMMARY   ? "summary"
           : t == MT_HISTOGRAM ? "histogram"
                               : "gauge";
}

/* The HELP and TYPE lines of f in `format`. */
static void fam_head(xfam *f, int format, const char *help, size_t help_len)
{
    ebuf *b = &f->head[format];
    /* In the text format a counter's lines name its sample (x_total); in
     * OpenMetrics, the family (x), with a UNIT line when it has one. */
    const char *who = format == EXPO_TEXT && f->rule->type == MT_COUNTER ? f->s1 : f->name;
    eb_str(b, "# HELP ");
    eb_str(b, who);
    eb_put(b, " ", 1);
    expo_help_text(b, help, help_len, format);
    eb_str(b, "\n# TYPE ");
    eb_str(b, who);
    eb_put(b, " ", 1);
    eb_str(b, type_word(f->rule->type));
    eb_put(b, "\n", 1);
    if (format == EXPO_OPENMETRICS && strcmp(f->rule->unit, "_seconds") == 0) {
        eb_str(b, "# UNIT ");
        eb_str(b, f->name);
        eb_str(b, " seconds\n");
    }
}

/* The names a family makes: the family, its value sample (x, x_total or
 * x_sum), a summary's or histogram's count sample and a histogram's
 * bucket sample ("" for the others). */
static void fam_names(const xset *s, const char *part, const fam_rule *fr, char *name, char *s1,
                      char *s2, char *s3, size_t cap)
{
    int sum = fr->type == MT_SUMMARY || fr->type == MT_HISTOGRAM;
    snprintf(name, cap, "%s_%s%s%s", s->stem, part, fr->infix, fr->unit);
    snprintf(s1, cap, "%s%s", name, fr->type == MT_COUNTER ? "_total" : sum ? "_sum" : "");
    snprintf(s2, cap, "%s%s", sum ? name : "", sum ? "_count" : "");
    snprintf(s3, cap, "%s%s", fr->type == MT_HISTOGRAM ? name : "",
             fr->type == MT_HISTOGRAM ? "_bucket" : "");
}

#define FAM_NAME_MAX (4 + NAMES_PART_MAX + 16 + NAMES_PART_MAX + 48)

/* Does a family of rule r named with `part` take a name already taken? */
static int part_taken(const collector *c, const xset *s, const char *part, const type_rule *r)
{
    for (uint8_t j = 0; j < r->nfam; j++) {
        char name[FAM_NAME_MAX], s1[FAM_NAME_MAX], s2[FAM_NAME_MAX], s3[FAM_NAME_MAX];
        fam_names(s, part, &r->fam[j], name, s1, s2, s3, FAM_NAME_MAX);
        if (names_has(c, name) || names_has(c, s1) || (s2[0] && names_has(c, s2)) ||
            (s3[0] && names_has(c, s3)))
            return 1;
    }
    return 0;
}

/* Add the families of counter k of s, named with `part`. 0 or -1 (out of
 * memory). */
static int add_fams(collector *c, xset *s, uint32_t k, const pcw_counter *ctr, const type_rule *r,
                    const char *part)
{
    const char *numerator = NULL;
    for (uint8_t j = 0; j < r->nfam; j++) {
        const fam_rule *fr = &r->fam[j];
        xfam f;
        memset(&f, 0, sizeof f);
        f.counter = k;
        f.rule = fr;
        char name[FAM_NAME_MAX], s1[FAM_NAME_MAX], s2[FAM_NAME_MAX], s3[FAM_NAME_MAX];
        fam_names(s, part, fr, name, s1, s2, s3, FAM_NAME_MAX);
        f.name = strdup(name);
        f.s1 = strdup(s1);
        f.s2 = s2[0] ? strdup(s2) : NULL;
        f.s3 = s3[0] ? strdup(s3) : NULL;
        if (!f.name || !f.s1 || (s2[0] && !f.s2) || (s3[0] && !f.s3)) {
            fam_free(&f);
            return -1;
        }
        f.s1_len = strlen(f.s1);
        f.s2_len = f.s2 ? strlen(f.s2) : 0;
        f.s3_len = f.s3 ? strlen(f.s3) : 0;
        if (fr->type == MT_HISTOGRAM) {
            f.shape = ctr->histogram;
            if (classic_plan(&f.plan, f.shape, c->opt.classic_buckets)) {
                fam_free(&f);
                return -1;
            }
        }
        if (names_add(c, f.name) || names_add(c, f.s1) || (f.s2 && names_add(c, f.s2)) ||
            (f.s3 && names_add(c, f.s3))) {
            fam_free(&f);
            return -1;
        }
        /* Help: the counter's description (or a sentence naming it),
         * and for a base what it is the base of. */
        ebuf help = {0};
        if (!fr->help) {
            if (ctr->description[0])
                eb_str(&help, ctr->description);
            else
                eb_printf(&help, "pcw counter %s of counterset %s.", ctr->name, s->name);
            eb_printf(&help, " (%s)",
                      pcw_counter_type_name(ctr->type) ? pcw_counter_type_name(ctr->type) : "?");
            numerator = numerator ? numerator : f.name;
        } else {
            eb_printf(&help, "%s %s.", fr->help, numerator ? numerator : name);
        }
        for (int fmt = 0; fmt < 2; fmt++)
            fam_head(&f, fmt, help.p ? help.p : "", help.len);
        ebuf utf8 = {0};
        expo_utf8(&utf8, help.p ? help.p : "", help.len);
        eb_put(&utf8, "", 1);
        f.help = utf8.p;
        int bad = help.failed || f.head[0].failed || f.head[1].failed || utf8.failed;
        eb_free(&help);
        s->fam[s->nfam++] = f;
        if (bad)
            return -1;
    }
    return 0;
}

/* Families in counter order, and a counter's in its rule's order. */
static int cmp_fams(const void *a, const void *b)
{
    const xfam *x = (const xfam *)a, *y = (const xfam *)b;
    if (x->counter != y->counter)
        return x->counter < y->counter ? -1 : 1;
    return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/* Build the families of set s from its metadata (names: names.c); names
 * taken are left out (counted in s->collisions, logged). A name the
 * display rules shortened ("Bytes/sec" as "bytes") yields to a name that
 * is the counter's own ("Bytes"), whatever their order: those are named
 * first, and a shortened one whose name is taken tries its full form
 * ("bytes_per_second") before it is left out. 0 or -1 (out of memory). */
static int build_fams(collector *c, xset *s, const pcw_counterset *cs)
{
    set_free_fams(s);
    s->collisions = 0;
    s->named = pcw_instance_type_is_multi(cs->instance_type);
    size_t cap = 0;
    for (uint32_t k = 0; k < cs->counter_count; k++) {
        const type_rule *r = mapping_counter(cs->counters[k].type, cs->counters[k].histogram);
        cap += r ? r->nfam : 0;
    }
    s->fam = calloc(cap ? cap : 1, sizeof *s->fam);
    if (!s->fam)
        return -1;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t k = 0; k < cs->counter_count; k++) {
            const pcw_counter *ctr = &cs->counters[k];
            const type_rule *r = mapping_counter(ctr->type, ctr->histogram);
            if (!r)
                continue;
            char part[NAMES_PART_MAX + 1], full[NAMES_PART_MAX + 1];
            int shortened = 0;
            size_t n = names_counter(ctr->name, ctr->type, r, 1, part, &shortened);
            size_t fn = shortened || !n ? names_counter(ctr->name, ctr->type, r, 0, full, NULL) : 0;
            if (!n) /* only display words: the full form */
                memcpy(part, full, fn + 1), n = fn, shortened = 0;
            if (!n) /* no ASCII letter or digit at all */
                snprintf(part, sizeof part, "c%u", (unsigned)ctr->id);
            if (shortened != pass)
                continue;
            if (shortened && part_taken(c, s, part, r) && fn && !part_taken(c, s, full, r))
                memcpy(part, full, fn + 1);
            if (part_taken(c, s, part, r)) {
                s->collisions += r->nfam;
                xlog(LOG_WARN, "metric name already taken: counter left out", "name", part,
                     "counterset", s->name, "counter", ctr->name, NULL);
                continue;
            }
            if (add_fams(c, s, k, ctr, r, part))
                return -1;
        }
    }
    if (s->nfam > 1)
        qsort(s->fam, s->nfam, sizeof *s->fam, cmp_fams);
    return 0;
}

/* ---- sets -------------------------------------------------------------------- */

static void set_free(collector *c, xset *s)
{
    if (s->h)
        pcw_pdh_remove_counter(c->q, s->h);
    set_free_fams(s);
    eb_free(&s->lab);
    eb_free(&s->plab);
    free(s->plab_off);
    free(s->lab_off);
    free(s->lab_len);
    free(s->dup);
    free(s->name);
    free(s);
}

static int wanted(const collector *c, const char *name)
{
    size_t n = strlen(name);
    int in = c->opt.ninclude == 0;
    for (size_t i = 0; !in && i < c->opt.ninclude; i++)
        in = pcw__wildcard_match(c->opt.include[i], strlen(c->opt.include[i]), name, n);
    for (size_t i = 0; in && i < c->opt.nexclude; i++)
        in = !pcw__wildcard_match(c->opt.exclude[i], strlen(c->opt.exclude[i]), name, n);
    return in;
}

static xset *find_set(collector *c, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < c->nsets; i++)
        if (pcw__name_equal(c->sets[i]->name, strlen(c->sets[i]->name), name, n))
            return c->sets[i];
    return NULL;
}

/* The time left before the deadline, in whole milliseconds, at least 1
 * (pcw_pdh_set_timeout reads 0 as its default). */
static uint32_t left_ms(uint64_t deadline_ns)
{
    uint64_t now = mono_ns();
    uint64_t ms = deadline_ns > now ? (deadline_ns - now) / 1000000ull : 0;
    return ms < 1 ? 1 : ms > 3600000 ? 3600000 : (uint32_t)ms;
}

/* Give s its handle. A counterset name a path cannot carry (PDH's limits:
 * no '(', ')', '\', and no wildcard) or one without any counter to show
 * stays without, logged once. */
static void attach(collector *c, xset *s, uint64_t deadline_ns)
{
    const char *why = NULL;
    if (strpbrk(s->name, "()\\*?"))
        why = "its name has a character counter paths cannot carry: ( ) \\ * ?";
    char path[PCW_PATH_MAX];
    if (!why && (size_t)snprintf(path, sizeof path, "\\%s(*)\\*", s->name) >= sizeof path)
        why = "its name is too long for a counter path";
    pcw_path_error err;
    if (!why) {
        pcw_pdh_set_timeout(c->q, left_ms(deadline_ns));
        if (pcw_pdh_add_counter(c->q, path, &s->h, &err) != PCW_OK) {
            s->h = NULL;
            why = err.message;
        }
    }
    if (why && !s->logged) {
        xlog(LOG_WARN, "counterset not exported", "counterset", s->name, "reason", why, NULL);
        s->logged = 1;
    }
}

static int cmp_sets(const void *a, const void *b)
{
    const xset *x = *(xset *const *)a, *y = *(xset *const *)b;
    int r = strcmp(x->stem, y->stem);
    return r ? r : strcmp(x->name, y->name);
}

/* Match the sets to what is published now: new ones get a handle, gone
 * ones go, and every family is rebuilt (metadata may have changed). */
static int sync_sets(collector *c, uint64_t deadline_ns)
{
    pcw_consumer *con = pcw_pdh_consumer(c->q);
    for (size_t i = 0; i < c->nsets; i++)
        c->sets[i]->seen = 0;
    size_t n = pcw_consumer_counterset_count(con);
    for (size_t i = 0; i < n; i++) {
        const pcw_merged_counterset *m = pcw_consumer_counterset(con, i);
        const char *name = m->meta->name;
        if (!wanted(c, name))
            continue;
        xset *s = find_set(c, name);
        if (!s) {
            if (c->nsets == c->sets_cap) {
                size_t cap = c->sets_cap ? 2 * c->sets_cap : 16;
                xset **v = realloc(c->sets, cap * sizeof *v);
                if (!v)
                    return -1;
                c->sets = v;
                c->sets_cap = cap;
            }
            if (!(s = calloc(1, sizeof *s)) || !(s->name = strdup(name))) {
                free(s);
                return -1;
            }
            char part[NAMES_PART_MAX + 1];
            if (names_set(name, part))
                snprintf(s->stem, sizeof s->stem, "pcw_%s", part);
            else /* no ASCII at all: a stable stand-in */
                snprintf(s->stem, sizeof s->stem, "pcw_x%08x",
                         (unsigned)(pcw__name_hash(name, strlen(name)) & 0xffffffffu));
            c->sets[c->nsets++] = s;
            xlog(LOG_INFO, "counterset found", "counterset", name, NULL);
        }
        s->seen = 1;
        if (!s->h)
            attach(c, s, deadline_ns);
    }
    for (size_t i = 0; i < c->nsets;) {
        if (c->sets[i]->seen) {
            i++;
            continue;
        }
        xlog(LOG_INFO, "counterset gone", "counterset", c->sets[i]->name, NULL);
        set_free(c, c->sets[i]);
        c->sets[i] = c->sets[--c->nsets];
    }
    if (c->nsets > 1)
        qsort(c->sets, c->nsets, sizeof *c->sets, cmp_sets);
    /* Families: every name again, in the sorted order. */
    free(c->names);
    c->names = NULL;
    c->names_cap = c->nnames = 0;
    for (size_t i = 0; i < sizeof self_names / sizeof self_names[0]; i++)
        if (names_add(c, self_names[i]))
            return -1;
    for (size_t i = 0; i < c->nsets; i++) {
        xset *s = c->sets[i];
        s->labels_valid = 0;
        if (!s->h) {
            set_free_fams(s);
            continue;
        }
        const pcw_merged_counterset *m = pcw_consumer_find_counterset(con, s->name);
        if (m && build_fams(c, s, m->meta))
            return -1;
    }
    c->synced = 1;
    return 0;
}

/* ---- labels ------------------------------------------------------------------ */

static int grow_labels(xset *s, size_t n)
{
    if (n <= s->lab_cap)
        return 0;
    size_t cap = s->lab_cap ? s->lab_cap : 64;
    while (cap < n)
        cap *= 2;
    uint32_t *o = realloc(s->lab_off, cap * sizeof *o);
    if (!o)
        return -1;
    s->lab_off = o;
    uint32_t *l = realloc(s->lab_len, cap * sizeof *l);
    if (!l)
        return -1;
    s->lab_len = l;
    uint8_t *d = realloc(s->dup, cap);
    if (!d)
        return -1;
    s->dup = d;
    uint32_t *po = realloc(s->plab_off, cap * sizeof *po);
    if (!po)
        return -1;
    s->plab_off = po;
    s->lab_cap = cap;
    return 0;
}

/* A container's labels (docs/containers.md, "Labels"): the id as
 * Kubernetes writes it in a pod's status (<runtime>://<id>, so that
 * kube_pod_container_info{container_id} joins it to its pod, namespace and
 * container), the pod UID (kube_pod_info{uid}), cAdvisor's namespace,
 * pod and container (Kubernetes' names, when the runtime's config.json
 * gives them: written by the pod's author, escaped like every value) and
 * its pid in the exporter's pid namespace. None for a provider in the
 * exporter's own namespace. */
static void container_label(ebuf *lab, ebuf *plab, const char *name, const char *const *parts)
{
    eb_put(lab, ",", 1);
    eb_str(lab, name);
    eb_str(lab, "=\"");
    eb_put(plab, name, strlen(name) + 1);
    for (; *parts; parts++) {
        expo_label_value(lab, *parts, strlen(*parts));
        expo_utf8(plab, *parts, strlen(*parts));
    }
    eb_put(lab, "\"", 1);
    eb_put(plab, "", 1);
}

/* ... into lab (the text formats' label string) and plab (the protobuf
 * format's: name and value pairs, each NUL-terminated, that proto_labels
 * reads up to an empty name, which the caller writes). */
static void container_labels(ebuf *lab, ebuf *plab, const pcw_container_info *ci)
{
    if (!ci)
        return;
    if (ci->id[0]) {
        const char *id[] = {ci->runtime, ci->runtime[0] ? "://" : "", ci->id, NULL};
        container_label(lab, plab, "container_id", id);
    }
    if (ci->pod_uid[0]) {
        const char *uid[] = {ci->pod_uid, NULL};
        container_label(lab, plab, "pod_uid", uid);
    }
    const char *const k8s[][2] = {
        {"namespace", ci->pod_namespace}, {"pod", ci->pod}, {"container", ci->container_name}};
    for (size_t i = 0; i < sizeof k8s / sizeof *k8s; i++)
        if (k8s[i][1][0]) {
            const char *v[] = {k8s[i][1], NULL};
            container_label(lab, plab, k8s[i][0], v);
        }
    if (ci->host_pid) {
        char pid[32];
        snprintf(pid, sizeof pid, "%d", (int)ci->host_pid);
        const char *hp[] = {pid, NULL};
        container_label(lab, plab, "host_pid", hp);
    }
}

/* Build the label string of every raw instance of s; mark the ones whose
 * labels an earlier instance already has. 0 or -1. */
static int build_labels(collector *c, xset *s)
{
    size_t hint = 0;
    size_t n = pcw_pdh_raw_count(s->h);
    if (grow_labels(s, n ? n : 1))
        return -1;
    s->lab.len = 0;
    s->plab.len = 0;
    s->nlab = n;
    s->ndup = 0;
    /* Duplicates: a hash table of label strings, only while building. */
    size_t hcap = 16;
    while (hcap < 2 * n)
        hcap *= 2;
    uint32_t *ht = calloc(hcap, sizeof *ht);
    if (!ht)
        return -1;
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_raw_instance ri;
        if (pcw_pdh_raw_instance_at(s->h, i, &ri) != PCW_OK) {
            free(ht);
            return -1;
        }
        size_t at = s->lab.len;
        eb_put(&s->lab, "{", 1);
        if (s->named) {
            eb_str(&s->lab, "instance_name=\"");
            expo_label_value(&s->lab, ri.name, ri.name_len);
            eb_str(&s->lab, "\",");
        }
        eb_str(&s->lab, "provider=\"");
        expo_label_value(&s->lab, ri.provider, strlen(ri.provider));
        char pid[32];
        snprintf(pid, sizeof pid, "\",pid=\"%d\"", (int)ri.pid);
        eb_str(&s->lab, pid);
        s->plab_off[i] = (uint32_t)s->plab.len;
        if (s->named) {
            expo_utf8(&s->plab, ri.name, ri.name_len);
            eb_put(&s->plab, "", 1);
        }
        expo_utf8(&s->plab, ri.provider, strlen(ri.provider));
        eb_put(&s->plab, "", 1);
        snprintf(pid, sizeof pid, "%d", (int)ri.pid);
        eb_put(&s->plab, pid, strlen(pid) + 1);
        if (c->opt.containers)
            container_labels(&s->lab, &s->plab,
                             tc_container(pcw_pdh_consumer(c->q), ri.provider_id, &hint));
        eb_put(&s->lab, "}", 1);
        eb_put(&s->plab, "", 1); /* the end of the container labels */
        if (s->lab.failed || s->lab.len - at > UINT32_MAX || s->lab.len > UINT32_MAX ||
            s->plab.failed || s->plab.len > UINT32_MAX) {
            free(ht);
            return -1;
        }
        s->lab_off[i] = (uint32_t)at;
        s->lab_len[i] = (uint32_t)(s->lab.len - at);
        s->dup[i] = 0;
        const char *str = s->lab.p + at;
        uint64_t h = 0xcbf29ce484222325ull;
        for (uint32_t k = 0; k < s->lab_len[i]; k++) {
            h ^= (unsigned char)str[k];
            h *= 0x100000001b3ull;
        }
        size_t j = h & (hcap - 1);
        for (; ht[j]; j = (j + 1) & (hcap - 1)) {
            size_t o = ht[j] - 1;
            if (s->lab_len[o] == s->lab_len[i] &&
                memcmp(s->lab.p + s->lab_off[o], str, s->lab_len[i]) == 0) {
                s->dup[i] = 1;
                s->ndup++;
                break;
            }
        }
        if (!s->dup[i])
            ht[j] = (uint32_t)i + 1;
    }
    free(ht);
    s->epoch = pcw_pdh_raw_epoch(s->h);
    s->labels_valid = 1;
    return 0;
}

/* ---- writing ------------------------------------------------------------------ */

/* The value of rule `v` from raw sample r into at; NULL when it has none
 * (no data, a zero time base). */
static char *value(char *at, int v, const pcw_raw *r)
{
    switch (v) {
    case V_X:
        return expo_u64(at, r->first);
    case V_B:
        return expo_u64(at, r->second);
    case V_MULTI:
        return expo_u64(at, r->multi);
    case V_X_TB:
        return r->freq ? expo_ratio(at, r->first, r->freq, 0) : NULL;
    case V_B_TB:
        return r->freq ? expo_ratio(at, r->second, r->freq, 0) : NULL;
    case V_ELAPSED:
        if (!r->freq)
            return NULL;
        return r->second >= r->first ? expo_ratio(at, r->second - r->first, r->freq, 0)
                                     : expo_ratio(at, r->first - r->second, r->freq, 1);
    }
    return NULL;
}

/* One series line: sample, labels, value. Returns 1 if written. */
static inline int series(ebuf *out, const char *sample, size_t slen, const char *lab, size_t llen,
                         int v, const pcw_raw *r)
{
    if (!eb_need(out, slen + llen + EXPO_NUM_MAX + 2))
        return 0;
    char *at = out->p + out->len;
    memcpy(at, sample, slen);
    memcpy(at + slen, lab, llen);
    at += slen + llen;
    *at++ = ' ';
    char *end = value(at, v, r);
    if (!end)
        return 0;
    *end++ = '\n';
    out->len = (size_t)(end - out->p);
    return 1;
}

/* The number a value rule gives, as Prometheus reads it from the text
 * format: the same digits, parsed. 0 when it has none. */
static int value_num(int v, const pcw_raw *r, double *out)
{
    char buf[EXPO_NUM_MAX];
    char *end = value(buf, v, r);
    if (!end)
        return 0;
    *end = 0;
    *out = strtod(buf, NULL);
    return 1;
}

/* A histogram's sum (word 0) in the exported unit: seconds for observed
 * nanoseconds. */
static char *hist_sum(char *at, const xfam *x, uint64_t w0)
{
    return pcw_hist_unit(x->shape) == PCW_HIST_UNIT_NS ? expo_ratio(at, w0, 1000000000u, 0)
                                                       : expo_u64(at, w0);
}

/* Make room for n entries of v (elements of `elem` bytes). 0 or -1. */
static int room(void *vp, size_t *cap, size_t n, size_t elem)
{
    void **v = vp;
    if (n <= *cap)
        return 0;
    void *p = realloc(*v, n * elem);
    if (!p)
        return -1;
    *v = p;
    *cap = n;
    return 0;
}

/* Instance i's histogram of family x: its words into c->words and the
 * classic cumulative counts into c->cum (the count last). 1; 0 when it
 * has none this time (not readable, or more than 2^63 observations: a
 * hostile segment's words); -1 when out of memory. */
static int hist_load(collector *c, const xset *s, const xfam *x, size_t i)
{
    size_t nw = pcw_hist_bytes(x->shape) / 8;
    if (room(&c->words, &c->words_cap, nw, sizeof *c->words) ||
        room(&c->cum, &c->cum_cap, x->plan.n + 1, sizeof *c->cum))
        return -1;
    if (pcw_pdh_raw_histogram(s->h, x->counter, i, c->words, nw) != PCW_OK ||
        classic_counts(&x->plan, c->words, nw, c->cum) != 0 || c->cum[x->plan.n] > INT64_MAX)
        return 0;
    return 1;
}

/* A histogram's series in the text formats: _bucket{le} (classic), _sum,
 * _count. lab is "{...}" (never "{}": provider and pid are always there). */
static void hist_text(ebuf *out, const xfam *x, const char *lab, size_t llen, const uint64_t *cum,
                      uint64_t w0)
{
    const classic *p = &x->plan;
    for (uint32_t k = 0; k <= p->n; k++) {
        const char *le = p->le + p->le_off[k];
        size_t lel = strlen(le);
        if (!eb_need(out, x->s3_len + llen + lel + 8 + EXPO_NUM_MAX))
            return;
        char *at = out->p + out->len;
        memcpy(at, x->s3, x->s3_len);
        at += x->s3_len;
        memcpy(at, lab, llen - 1);
        at += llen - 1;
        memcpy(at, ",le=\"", 5);
        memcpy(at + 5, le, lel);
        at += 5 + lel;
        memcpy(at, "\"} ", 3);
        at = expo_u64(at + 3, cum[k]);
        *at++ = '\n';
        out->len = (size_t)(at - out->p);
    }
    if (!eb_need(out, x->s1_len + x->s2_len + 2 * llen + 2 * EXPO_NUM_MAX + 4))
        return;
    char *at = out->p + out->len;
    memcpy(at, x->s1, x->s1_len);
    memcpy(at + x->s1_len, lab, llen);
    at += x->s1_len + llen;
    *at++ = ' ';
    at = hist_sum(at, x, w0);
    *at++ = '\n';
    memcpy(at, x->s2, x->s2_len);
    memcpy(at + x->s2_len, lab, llen);
    at += x->s2_len + llen;
    *at++ = ' ';
    at = expo_u64(at, cum[p->n]);
    *at++ = '\n';
    out->len = (size_t)(at - out->p);
}

/* A histogram's metric in the protobuf format: the classic buckets and
 * the native ones, which are the words themselves. */
static int hist_proto(proto_fam *pf, const xfam *x, const proto_label *l, size_t nl,
                      const uint64_t *words, const uint64_t *cum)
{
    char buf[EXPO_NUM_MAX];
    *hist_sum(buf, x, words[0]) = 0;
    proto_hist h = {
        .count = cum[x->plan.n],
        .sum = strtod(buf, NULL),
        .plan = &x->plan,
        .cum = cum,
        .schema = pcw_hist_schema(x->shape),
        .zero_threshold = classic_bucket_bound(0, pcw_hist_min_exp(x->shape)),
        .zero_count = words[1],
        .buckets = words + 2,
        .nbuckets = pcw_hist_nbuckets(x->shape),
        .first_index = pcw_hist_min_index(x->shape) + 1,
    };
    return proto_add_histogram(pf, l, nl, &h);
}

/* At most: instance_name, provider, pid and container_labels' six. */
#define PROTO_MAX_LABELS 9

/* Instance i's labels in the protobuf format; how many. */
static size_t proto_labels(const xset *s, size_t i, proto_label *l)
{
    const char *p = s->plab.p + s->plab_off[i];
    size_t n = 0;
    if (s->named) {
        l[n++] = (proto_label){"instance_name", p};
        p += strlen(p) + 1;
    }
    l[n++] = (proto_label){"provider", p};
    p += strlen(p) + 1;
    l[n++] = (proto_label){"pid", p};
    p += strlen(p) + 1;
    while (*p && n < PROTO_MAX_LABELS) { /* container_labels' pairs */
        const char *name = p;
        p += strlen(p) + 1;
        l[n++] = (proto_label){name, p};
        p += strlen(p) + 1;
    }
    return n;
}

/* Family x's series of instance i in `format`; 1 if written, 0 if the
 * instance has none, -1 when out of memory. */
static int write_one(collector *c, const xset *s, const xfam *x, size_t i, const pcw_raw *raw,
                     ebuf *out, int format)
{
    const fam_rule *r = x->rule;
    if (format != EXPO_PROTO) {
        const char *lab = s->lab.p + s->lab_off[i];
        if (r->type == MT_HISTOGRAM) {
            int h = hist_load(c, s, x, i);
            if (h > 0)
                hist_text(out, x, lab, s->lab_len[i], c->cum, c->words[0]);
            return h;
        }
        if (!series(out, x->s1, x->s1_len, lab, s->lab_len[i], r->value, raw))
            return 0;
        if (r->type == MT_SUMMARY)
            series(out, x->s2, x->s2_len, lab, s->lab_len[i], r->count, raw);
        return 1;
    }
    proto_label l[PROTO_MAX_LABELS];
    size_t nl = proto_labels(s, i, l);
    double v, n;
    switch (r->type) {
    case MT_HISTOGRAM: {
        int h = hist_load(c, s, x, i);
        if (h <= 0)
            return h;
        return hist_proto(c->pf, x, l, nl, c->words, c->cum) ? -1 : 1;
    }
    case MT_SUMMARY:
        if (!value_num(r->value, raw, &v) || !value_num(r->count, raw, &n))
            return 0;
        return proto_add_summary(c->pf, l, nl, (uint64_t)n, v) ? -1 : 1;
    default:
        if (!value_num(r->value, raw, &v))
            return 0;
        return proto_add_number(c->pf, l, nl, v) ? -1 : 1;
    }
}

/* Every family of s with the values of its first n instances (0: the
 * HELP and TYPE lines only); returns the series written. */
static size_t write_set(collector *c, xset *s, ebuf *out, int format, size_t n)
{
    size_t written = 0;
    if (n > c->col_cap) {
        pcw_raw *v = realloc(c->col, n * sizeof *v);
        if (!v) {
            out->failed = 1;
            return 0;
        }
        c->col = v;
        c->col_cap = n;
    }
    uint32_t have = UINT32_MAX; /* the counter c->col holds */
    for (size_t f = 0; f < s->nfam; f++) {
        const xfam *x = &s->fam[f];
        if (format == EXPO_PROTO)
            proto_fam_begin(c->pf, x->rule->type == MT_COUNTER ? x->s1 : x->name, x->help,
                            x->rule->type);
        else
            eb_put(out, x->head[format].p, x->head[format].len);
        if (n && have != x->counter) {
            if (pcw_pdh_raw_column(s->h, x->counter, c->col) != PCW_OK)
                continue;
            have = x->counter;
        }
        for (size_t i = 0; i < n; i++) {
            const pcw_raw *raw = &c->col[i];
            /* A histogram's status says nothing (its words are read
             * apart: hist_load). */
            if (s->dup[i] || (raw->status != PCW_CSTATUS_VALID && x->rule->type != MT_HISTOGRAM))
                continue;
            int w = write_one(c, s, x, i, raw, out, format);
            if (w < 0) {
                out->failed = 1;
                return written;
            }
            written += (size_t)w;
        }
        if (format == EXPO_PROTO)
            proto_fam_end(c->pf, out);
    }
    return written;
}

/* A self-metric with its HELP and TYPE lines. */
static void self_head(ebuf *b, int format, const char *name, const char *type, const char *help)
{
    int counter = strcmp(type, "counter") == 0;
    const char *who = name;
    char total[96];
    if (counter && format == EXPO_TEXT) {
        snprintf(total, sizeof total, "%s_total", name);
        who = total;
    }
    eb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", who, help, who, type);
    if (format == EXPO_OPENMETRICS && strstr(name, "_seconds"))
        eb_printf(b, "# UNIT %s seconds\n", name);
}

/* A self-metric in the protobuf format: n values, value k labelled
 * lname=lvals[k] (no label when lname is NULL). */
static void self_proto(collector *c, ebuf *b, const char *name, const char *type, const char *help,
                       const char *lname, const char *const *lvals, const double *v, size_t n)
{
    int counter = strcmp(type, "counter") == 0;
    char total[96];
    snprintf(total, sizeof total, "%s_total", name);
    proto_fam_begin(c->pf, counter ? total : name, help, counter ? MT_COUNTER : MT_GAUGE);
    for (size_t k = 0; k < n; k++) {
        proto_label l = {lname, lname ? lvals[k] : NULL};
        if (proto_add_number(c->pf, &l, lname ? 1 : 0, v[k])) {
            b->failed = 1;
            return;
        }
    }
    proto_fam_end(c->pf, b);
}

static void self_u64(collector *c, ebuf *b, int format, const char *name, const char *type,
                     const char *help, uint64_t v)
{
    if (format == EXPO_PROTO) {
        double d = (double)v;
        self_proto(c, b, name, type, help, NULL, NULL, &d, 1);
        return;
    }
    self_head(b, format, name, type, help);
    eb_printf(b, "%s%s %llu\n", name, strcmp(type, "counter") == 0 ? "_total" : "",
              (unsigned long long)v);
}

/* A self-metric in seconds: a gauge, to `decimals` places in text. */
static void self_seconds(collector *c, ebuf *b, int format, const char *name, const char *help,
                         double v, int decimals)
{
    if (format == EXPO_PROTO) {
        self_proto(c, b, name, "gauge", help, NULL, NULL, &v, 1);
        return;
    }
    self_head(b, format, name, "gauge", help);
    eb_printf(b, "%s %.*f\n", name, decimals, v);
}

/* Count n errors of `cause`: under count_lock, which the HTTP threads take
 * too (collector_count) - the scrape's own lock does not cover errors[]. */
static void count_n(collector *c, int cause, uint64_t n)
{
    if (!n)
        return;
    pthread_mutex_lock(&c->count_lock);
    c->errors[cause] += n;
    pthread_mutex_unlock(&c->count_lock);
}

/* ---- the scrape ---------------------------------------------------------------- */

int collector_scrape(collector *c, ebuf *out, int format, uint64_t deadline_ns)
{
    uint64_t start = mono_ns();
    if (lock_until(&c->lock, deadline_ns) != 0) {
        collector_count(c, CAUSE_BUSY);
        return -2;
    }
    c->scrapes++;
    uint64_t budget_ns = deadline_ns > start ? deadline_ns - start : 0;
    /* 1. Catch up with the providers, in half the budget at most: new
     * providers and countersets are told of the counters added
     * (ADD_COUNTER), and one that does not answer must not leave the
     * collection, and so every other provider's series, without time. */
    uint64_t catch_up_ns = start + budget_ns / 2;
    pcw_pdh_set_timeout(c->q, left_ms(catch_up_ns));
    int rc = pcw_pdh_refresh(c->q);
    if (rc < 0) {
        count_n(c, CAUSE_COLLECT, 1);
        xlog(LOG_ERROR, "cannot read the providers", "err", pcw_status_str(rc), NULL);
    } else if ((rc == 1 || !c->synced) && sync_sets(c, catch_up_ns) != 0) {
        count_n(c, CAUSE_COLLECT, 1);
        xlog(LOG_ERROR, "out of memory matching countersets", NULL);
        c->synced = 0;
    }
    /* Providers came or went: which cannot be read (it opens every
     * segment once more, so only then, or when the last check ran out of
     * time) - within the catching up's time: it runs under the lock. */
    if (rc == 1 || c->unread_due) {
        int ur = unreadable_check(c->unread, pcw_pdh_consumer(c->q), catch_up_ns);
        c->unread_due = ur == 1;
        if (ur < 0)
            count_n(c, CAUSE_COLLECT, 1);
    }
    /* 2. Collect within what is left: every provider at once, so one that
     * does not answer costs its own callback series only. */
    pcw_pdh_set_timeout(c->q, left_ms(deadline_ns));
    int collected = (rc = pcw_pdh_collect(c->q, NULL)) == PCW_OK;
    if (!collected) {
        count_n(c, CAUSE_COLLECT, 1);
        xlog(LOG_ERROR, "collection failed", "err", pcw_status_str(rc), NULL);
    }
    /* 3. The counters. */
    size_t series_n = 0, late_sets = 0, exported = 0;
    for (size_t i = 0; i < c->nsets; i++) {
        xset *s = c->sets[i];
        if (!s->h)
            continue;
        exported++;
        count_n(c, CAUSE_COLLISION, s->collisions);
        int late = 0;
        size_t nsrc = pcw_pdh_source_count(s->h);
        for (size_t j = 0; j < nsrc; j++) {
            pcw_pdh_source src;
            if (pcw_pdh_get_source(s->h, j, &src) != PCW_OK || src.status == PCW_OK ||
                src.status == PCW_E_PROVIDER_EXITED)
                continue;
            if (src.status == PCW_E_TIMEOUT) {
                c->timeouts++;
                late = 1;
                char pid[16];
                snprintf(pid, sizeof pid, "%d", (int)src.pid);
                xlog(LOG_DEBUG, "provider late: left out of this scrape", "counterset", s->name,
                     "provider", src.provider, "pid", pid, NULL);
            } else {
                count_n(c, CAUSE_PROVIDER, 1);
                xlog(LOG_WARN, "provider failed", "counterset", s->name, "provider", src.provider,
                     "err", pcw_status_str(src.status), NULL);
            }
        }
        late_sets += late;
        if (collected &&
            (!s->labels_valid || s->epoch != pcw_pdh_raw_epoch(s->h) ||
             s->nlab != pcw_pdh_raw_count(s->h)) &&
            build_labels(c, s) != 0) {
            s->labels_valid = 0;
            out->failed = 1;
            break;
        }
        count_n(c, CAUSE_DUPLICATE, s->ndup);
        /* After a failed collection there are no trustworthy rows: the
         * HELP and TYPE lines only. */
        series_n += write_set(c, s, out, format, collected ? s->nlab : 0);
    }
    /* 4. The exporter's own metrics. */
    pcw_consumer *con = pcw_pdh_consumer(c->q);
    size_t providers = pcw_consumer_segment_count(con), up = 0;
    for (size_t i = 0; i < providers; i++)
        up += pcw_segment_alive(pcw_consumer_segment(con, i)) == PCW_OK;
    static const char build_help[] = "The exporter's version; the value is 1.";
    if (format == EXPO_PROTO) {
        static const char *const version[] = {PCW_VERSION_STRING};
        static const double one = 1;
        self_proto(c, out, "pcw_exporter_build_info", "gauge", build_help, "version", version, &one,
                   1);
    } else {
        self_head(out, format, "pcw_exporter_build_info", "gauge", build_help);
        eb_printf(out, "pcw_exporter_build_info{version=\"%s\"} 1\n", PCW_VERSION_STRING);
    }
    self_u64(c, out, format, "pcw_exporter_providers", "gauge",
             "pcw providers (segments) the exporter sees.", providers);
    self_u64(c, out, format, "pcw_exporter_providers_up", "gauge",
             "pcw providers whose process is running.", up);
    self_u64(c, out, format, "pcw_exporter_providers_unreadable", "gauge",
             "pcw providers (segments) and provider folders the exporter may not read, "
             "each logged once: most often a provider that did not share with its group.",
             unreadable_count(c->unread));
    self_u64(c, out, format, "pcw_exporter_countersets", "gauge", "Countersets exported.",
             exported);
    self_u64(c, out, format, "pcw_exporter_series", "gauge",
             "Series of pcw counters in this scrape.", series_n);
    self_u64(c, out, format, "pcw_exporter_late_countersets", "gauge",
             "Countersets with a callback provider left out of this scrape: it did not answer "
             "within the scrape's time.",
             late_sets);
    self_u64(c, out, format, "pcw_exporter_callback_timeouts", "counter",
             "Callback providers' parts left out of scrapes because they did not answer in time.",
             c->timeouts);
    self_u64(c, out, format, "pcw_exporter_scrapes", "counter",
             "Collections made (requests that arrive during one share it).", c->scrapes);
    static const char errors_help[] =
        "Errors by cause: collect, provider (a provider's part failed), name_collision "
        "(a family left out), duplicate_series (a series left out), busy (a scrape waited "
        "past its time for another), encoding, auth (refused credentials), auth_limited "
        "(refused: too many bcrypts from its address), auth_busy (refused: other "
        "password checks held the one bcrypt past its time), request_timeout (a connection "
        "closed: no whole request in time), shed (a connection closed for a newer one), "
        "memory (a scrape refused: the response memory limit).";
    double errors[CAUSE_COUNT_];
    pthread_mutex_lock(&c->count_lock);
    for (int k = 0; k < CAUSE_COUNT_; k++)
        errors[k] = (double)c->errors[k];
    if (format != EXPO_PROTO) {
        self_head(out, format, "pcw_exporter_errors", "counter", errors_help);
        for (int k = 0; k < CAUSE_COUNT_; k++)
            eb_printf(out, "pcw_exporter_errors_total{cause=\"%s\"} %llu\n", cause_names[k],
                      (unsigned long long)c->errors[k]);
    }
    pthread_mutex_unlock(&c->count_lock);
    if (format == EXPO_PROTO)
        self_proto(c, out, "pcw_exporter_errors", "counter", errors_help, "cause", cause_names,
                   errors, CAUSE_COUNT_);
    self_seconds(c, out, format, "pcw_exporter_scrape_budget_seconds",
                 "Time this scrape could wait for callback providers.", (double)budget_ns / 1e9, 3);
    self_seconds(c, out, format, "pcw_exporter_scrape_duration_seconds",
                 "Time this scrape took to collect and write the series above.",
                 (double)(mono_ns() - start) / 1e9, 6);
    if (format == EXPO_OPENMETRICS)
        eb_str(out, "# EOF\n");
    pthread_mutex_unlock(&c->lock);
    return out->failed ? -1 : 0;
}

void collector_count(collector *c, int cause)
{
    count_n(c, cause, 1);
}

/* ---- open / close ------------------------------------------------------------- */

int collector_open(collector **out, const collector_options *o)
{
    collector *c = calloc(1, sizeof *c);
    if (!c)
        return PCW_E_NO_MEMORY;
    c->opt = *o;
    if (!c->opt.classic_buckets) /* not given (bench/export.c): the default */
        c->opt.classic_buckets = CLASSIC_DEFAULT;
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->count_lock, NULL);
    pcw_consumer_options co = {0};
    co.dir = o->dir;
    co.all_users = o->all_users;
    co.containers = o->containers;
    int rc = pcw_pdh_open(&c->q, &co);
    /* Every counter is exported, advanced ones too: a scrape keeps what
     * queries ask for (docs/exporter.md). */
    if (rc == PCW_OK)
        rc = pcw_pdh_set_detail(c->q, PCW_DETAIL_WIZARD);
    if (rc == PCW_OK && !(c->unread = unreadable_open()))
        rc = PCW_E_NO_MEMORY;
    if (rc == PCW_OK && !(c->pf = proto_fam_new()))
        rc = PCW_E_NO_MEMORY;
    if (rc != PCW_OK) { /* the query, if it opened, is closed here once */
        if (c->q)
            pcw_pdh_close(c->q);
        unreadable_close(c->unread);
        pthread_mutex_destroy(&c->lock);
        pthread_mutex_destroy(&c->count_lock);
        free(c);
        return rc;
    }
    /* At start, what it cannot read is logged at once, not at the first
     * scrape - within UNREADABLE_AT_START_NS, or else at the first scrape. */
    c->unread_due = unreadable_check(c->unread, pcw_pdh_consumer(c->q),
                                     mono_ns() + UNREADABLE_AT_START_NS) == 1;
    *out = c;
    return PCW_OK;
}

void collector_close(collector *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nsets; i++)
        set_free(c, c->sets[i]);
    free(c->sets);
    free(c->names);
    free(c->col);
    free(c->words);
    free(c->cum);
    proto_fam_free(c->pf);
    unreadable_close(c->unread);
    pcw_pdh_close(c->q);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->count_lock);
    free(c);
}
