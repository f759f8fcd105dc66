/* SPDX-License-Identifier: MIT */
/*
 * tests/test_history_query.c - the query layer reading pcw logs
 * (pcw_pdh_open_log, lib/query/logsource.c, docs/history.md "The query
 * layer on a log"):
 *
 *   - log equals live: pcwstat's own column and recording code (compiled
 *     in, as tests/test_history does) records real providers while the
 *     live values of every column are kept; the log, opened through the
 *     query layer, gives the same statuses and the same cooked numbers
 *     (bit for bit) and times, per column path and through a wildcard,
 *     across rates, a fraction, a _Total, #n instances, an instance
 *     created again (a new identity), a provider that crashes and one that
 *     starts later (a provider restart);
 *   - seeks by index and by wall-clock time land on the right sample, the
 *     first collect after one has no previous sample (as live after add),
 *     the next one cooks as live; the end of the log is PCW_PDH_END_OF_LOG;
 *   - a real `pcwstat -f BIN -o LOG`, its log damaged (a flipped byte, a
 *     cut): the samples before the damaged block read as usual, the
 *     collect that reaches it returns PCW_E_CORRUPT naming the offset;
 *   - two logs read as one: the second starts without previous samples;
 *   - bad files, bad paths and the listing of what a log holds;
 *   - the inline cooking of pcw_pdh_cook_all, visit(_rows) and
 *     cook_column (logsource.c, cook_fast) gives the bits and statuses
 *     pcw__hist_cook gives, for every formula, flag, scale
 *     and status it meets, across identity changes and seeks.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <zlib.h>

#include "pcw/pdh.h"
#include "query_provider.h"

#include "../lib/history/codec.h"
#include "../lib/query/logsource.h" /* pcwl_generic_cook */
/* Compiled in: pcwstat's recording sink. */
#include "../tools/pcwstat/pcwstat.h"

TestSuite(history_query, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

static void pause_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL); /* the sampling interval, not synchronisation */
}

static char *slurp(const char *path)
{
    char *s = tu_read_text(path, 1 << 24);
    cr_assert(s, "cannot read %s", path);
    return s;
}

/* ---- a recording with its live values ------------------------------------- */

#define SAMPLES 25 /* the priming sample and 24 more */

typedef struct live_val {
    int status;
    double value;
} live_val;

typedef struct recording {
    char log[PATH_MAX];
    size_t n;    /* columns */
    char **path; /* with host, as logged */
    char **bare; /* without */
    uint32_t *type;
    live_val (*v)[SAMPLES]; /* [column][sample] */
    uint64_t real[SAMPLES], mono[SAMPLES];
} recording;

static void recording_free(recording *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->path[i]);
        free(r->bare[i]);
    }
    free(r->path);
    free(r->bare);
    free(r->type);
    free(r->v);
}

/* Two providers of "HQ" (an aggregating set: a _Total), both with an
 * instance "a" (so "a" and "a#1"), recorded as pcwstat records, with the
 * live value of every column at every sample. Events: at 8 "b" is created
 * again (a new identity), at 12 a base goes to zero, at 16 the second
 * provider crashes, at 19 a third one starts with "c" again (a provider
 * restart: a new identity behind the same path). */
static void record_scenario(recording *r, const char *name)
{
    tu_child p1, p2, p3;
    qp_start(&p1, "HQ", PCW_MULTI_AGGREGATE, NULL);
    qp_start(&p2, "HQ", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&p1, "create a");
    qp_cmd(&p1, "create b");
    qp_cmd(&p2, "create c");
    qp_cmd(&p2, "create a");
    qp_cmd(&p1, "rate a %d 1000", QP_RATE);
    qp_cmd(&p1, "rate b %d 250", QP_RATE);
    qp_cmd(&p1, "rate a %d 5000", QP_COUNT);
    qp_cmd(&p2, "rate c %d 777", QP_RATE);
    qp_cmd(&p2, "rate a %d 333", QP_RATE);
    qp_cmd(&p1, "set a %d 7", QP_HIT);
    qp_cmd(&p1, "set a %d 9", QP_HIT_BASE);
    qp_cmd(&p1, "set b %d 42", QP_LEVEL);
    qp_cmd(&p2, "set c %d 5", QP_PEAK);

    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *user;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\HQ(*)\\*", &user, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    size_t n = pcw_pdh_value_count(user);
    cr_assert_geq(n, 5 * 7, "values: %zu", n);
    column *cols = calloc(n, sizeof *cols);
    r->n = n;
    r->path = calloc(n, sizeof *r->path);
    r->bare = calloc(n, sizeof *r->bare);
    r->type = calloc(n, sizeof *r->type);
    r->v = calloc(n, sizeof *r->v);
    for (size_t i = 0; i < n; i++) {
        char bare[4096], full[4096];
        pcw_pdh_value_path(user, i, 0, bare, sizeof bare);
        pcw_pdh_value_path(user, i, 1, full, sizeof full);
        cr_assert_eq(pcw_pdh_add_counter(q, bare, &cols[i].h, NULL), PCW_OK, "%s", bare);
        cols[i].path = strdup(full);
        r->path[i] = strdup(full);
        r->bare[i] = strdup(bare);
    }
    pcw_pdh_remove_counter(q, user);
    char why[512];
    snprintf(r->log, sizeof r->log, "%s/%s", tu_root, name);
    int fd = open(r->log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0);
    /* Blocks of 4 samples or so (a seek lands inside a block). */
    recorder *rec = record_open(fd, r->log, cols, n, 40000000ull, why, sizeof why);
    cr_assert(rec, "%s", why);
    for (int s = 0; s < SAMPLES; s++) {
        if (s == 8) {
            qp_cmd(&p1, "close b");
            qp_cmd(&p1, "create tmp");
            qp_cmd(&p1, "create b");
            qp_cmd(&p1, "close tmp");
            qp_cmd(&p1, "set b %d 4000000000", QP_COUNT);
            qp_cmd(&p1, "rate b %d 3000", QP_RATE);
        }
        if (s == 12)
            qp_cmd(&p1, "set a %d 0", QP_HIT_BASE);
        if (s == 16) {
            tu_send(&p2, "crash");
            tu_finish(&p2, 10000);
        }
        if (s == 19) {
            qp_start(&p3, "HQ", PCW_MULTI_AGGREGATE, NULL);
            qp_cmd(&p3, "create c");
            qp_cmd(&p3, "rate c %d 100", QP_RATE);
        }
        if (s > 0) {
            pause_ms(15);
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        }
        for (size_t i = 0; i < n; i++) {
            pcw_pdh_value v;
            r->v[i][s].status = PCW_CSTATUS_NO_INSTANCE;
            if (pcw_pdh_value_count(cols[i].h) &&
                pcw_pdh_get_value(cols[i].h, 0, 0, &v) == PCW_OK) {
                r->v[i][s].status = v.status;
                r->v[i][s].value = v.value;
                if (v.counter_type)
                    r->type[i] = v.counter_type;
            }
        }
        r->real[s] = pcw_pdh_realtime_ns(q);
        r->mono[s] = pcw_pdh_time_ns(q);
        cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(record_finish(rec, why, sizeof why), 0, "%s", why);
    qp_stop(&p1);
    qp_stop(&p3);
    for (size_t i = 0; i < n; i++)
        free(cols[i].path);
    free(cols);
    pcw_pdh_close(q);
}

static int column_of(const recording *r, const char *bare)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->bare[i], bare) == 0)
            return (int)i;
    return -1;
}

/* Value 0 of h now equals the live value of column c at sample s. */
static void assert_live(const recording *r, pcw_pdh_counter *h, size_t c, int s)
{
    pcw_pdh_value v;
    cr_assert_eq(pcw_pdh_value_count(h), 1, "%s", r->bare[c]);
    cr_assert_eq(pcw_pdh_get_value(h, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, r->v[c][s].status, "%s sample %d: status %d, live %d", r->bare[c], s,
                 v.status, r->v[c][s].status);
    cr_assert(memcmp(&v.value, &r->v[c][s].value, sizeof v.value) == 0,
              "%s sample %d: %.17g, live %.17g", r->bare[c], s, v.value, r->v[c][s].value);
}

/* What the fast ways of reading a handle hand over (pcw_pdh_cook_column,
 * pcw_pdh_visit, pcw_pdh_visit_rows, as pcwtop and pcwstat read) equals
 * pcw_pdh_cook_all's vals/sts[nv]. */
typedef struct walked {
    double *v;
    uint8_t *st;
    size_t n, calls;
} walked;

static int take_rows(const pcw_pdh_rows *b, void *arg)
{
    walked *w = arg;
    for (size_t k = 0; k < b->rows * b->count; k++) {
        cr_assert_lt(b->first + k, w->n);
        w->v[b->first + k] = b->values[k];
        w->st[b->first + k] = b->status[k];
    }
    w->calls++;
    return 0;
}

static int take_row(const pcw_pdh_row *r, void *arg)
{
    pcw_pdh_rows b = {r->first, 1, r->count, r->values, r->status};
    return take_rows(&b, arg);
}

static void assert_walks_agree(pcw_pdh_counter *h, const double *vals, const uint8_t *sts,
                               size_t nv)
{
    size_t ni = pcw_pdh_instance_count(h), nc = pcw_pdh_selected_counter_count(h);
    cr_assert_eq(ni * nc, nv, "%zu instances x %zu counters, %zu values", ni, nc, nv);
    double *v = calloc(nv + 1, sizeof *v);
    uint8_t *st = calloc(nv + 1, 1);
    for (size_t k = 0; k < nc; k++) {
        cr_assert_eq(pcw_pdh_cook_column(h, k, 0, v, st), PCW_OK);
        for (size_t i = 0; i < ni; i++) {
            cr_assert_eq(st[i], sts[i * nc + k]);
            cr_assert(memcmp(&v[i], &vals[i * nc + k], sizeof v[i]) == 0);
        }
    }
    for (int how = 0; how < 2; how++) {
        walked w = {v, st, nv, 0};
        memset(v, 0, (nv + 1) * sizeof *v);
        memset(st, 0xff, nv + 1);
        cr_assert_eq(how ? pcw_pdh_visit(h, 0, take_row, &w)
                         : pcw_pdh_visit_rows(h, 0, take_rows, &w),
                     PCW_OK);
        cr_assert_eq(memcmp(v, vals, nv * sizeof *v), 0, "visit%s", how ? "" : "_rows");
        cr_assert_eq(memcmp(st, sts, nv), 0);
        cr_assert_geq(w.calls, how ? ni : (nv ? 1 : 0));
    }
    free(v);
    free(st);
}

/* ---- log equals live ---------------------------------------------------------- */

Test(history_query, log_equals_live)
{
    recording r = {0};
    record_scenario(&r, "hq.pcwlog");
    pcw_pdh *q;
    char why[512];
    const char *files[] = {r.log};
    cr_assert_eq(pcw_pdh_open_log(&q, files, 1, why, sizeof why), PCW_OK, "%s", why);
    cr_assert(pcw_pdh_is_log(q));
    cr_assert_null(pcw_pdh_consumer(q));
    pcw_pdh_log_info info;
    cr_assert_eq(pcw_pdh_get_log_info(q, &info), PCW_OK);
    cr_assert_eq(info.samples, SAMPLES);
    cr_assert_eq(info.next, 0);
    cr_assert_eq(info.series, r.n);
    cr_assert_eq(info.files, 1);
    cr_assert_eq(info.damaged, 0);
    cr_assert_eq(info.first_real_ns, r.real[0]);
    cr_assert_eq(info.last_real_ns, r.real[SAMPLES - 1]);
    cr_assert_eq(info.first_ns, r.mono[0]);
    cr_assert_eq(info.last_ns, r.mono[SAMPLES - 1]);
    cr_assert_gt(info.blocks, 2, "blocks: %llu", (unsigned long long)info.blocks);
    cr_assert_str_eq(pcw_pdh_log_error(q), "");

    /* The listing: every column, in order, with its parts. */
    int totals = 0, dups = 0;
    for (size_t i = 0; i < r.n; i++) {
        pcw_pdh_log_series s;
        cr_assert_eq(pcw_pdh_log_series_at(q, i, &s), PCW_OK);
        cr_assert_str_eq(s.path, r.path[i]);
        cr_assert_str_eq(s.counterset, "HQ");
        totals += s.kind == PCW_PDH_TOTAL && strcmp(s.instance, "_Total") == 0;
        dups +=
            s.dup_index == 1 && strcmp(s.instance, "a#1") == 0 && strcmp(s.instance_name, "a") == 0;
        cr_assert_eq(s.counter_type, r.type[i], "%s", s.path);
    }
    cr_assert_eq(totals, 7, "a _Total of each counter");
    cr_assert_eq(dups, 7, "a#1: the second provider's a");
    cr_assert_eq(pcw_pdh_log_series_at(q, r.n, &(pcw_pdh_log_series){0}), PCW_E_INVALID_PARAMETER);

    /* One handle per column, and the wildcard. */
    pcw_pdh_counter **h = calloc(r.n, sizeof *h), *all;
    for (size_t i = 0; i < r.n; i++)
        cr_assert_eq(pcw_pdh_add_counter(q, r.bare[i], &h[i], NULL), PCW_OK, "%s", r.bare[i]);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\HQ(*)\\*", &all, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_counter_count(q), r.n + 1);
    uint64_t epoch = pcw_pdh_instance_epoch(all);
    int epoch_changes = 0, saw_restart = 0, saw_gone = 0;
    for (int s = 0; s < SAMPLES; s++) {
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK, "sample %d", s);
        cr_assert_eq(pcw_pdh_realtime_ns(q), r.real[s]);
        cr_assert_eq(pcw_pdh_time_ns(q), r.mono[s]);
        cr_assert_eq(pcw_pdh_collections(q), (uint64_t)s + 1);
        for (size_t i = 0; i < r.n; i++)
            assert_live(&r, h[i], i, s);
        /* The wildcard: each value is its column's. */
        size_t nv = pcw_pdh_value_count(all);
        double *vals = calloc(nv + 1, sizeof *vals);
        uint8_t *sts = calloc(nv + 1, 1);
        cr_assert_eq(pcw_pdh_cook_all(all, 0, vals, sts), PCW_OK);
        for (size_t k = 0; k < nv; k++) {
            char bare[4096];
            pcw_pdh_value v;
            pcw_pdh_value_path(all, k, 0, bare, sizeof bare);
            int c = column_of(&r, bare);
            cr_assert_geq(c, 0, "%s is no column", bare);
            cr_assert_eq(pcw_pdh_get_value(all, k, 0, &v), PCW_OK);
            cr_assert_eq(v.status, r.v[c][s].status, "%s sample %d", bare, s);
            cr_assert_eq(v.status, sts[k]);
            cr_assert(memcmp(&v.value, &r.v[c][s].value, sizeof v.value) == 0);
            cr_assert(memcmp(&v.value, &vals[k], sizeof v.value) == 0);
            /* A wildcard shows the instances there are. */
            cr_assert(v.status != PCW_CSTATUS_NO_INSTANCE || strstr(bare, "_Total"), "%s at %d",
                      bare, s);
            if (s == 19 && strcmp(bare, "\\HQ(c)\\Rate") == 0)
                saw_restart = v.status == PCW_CSTATUS_NEW_DATA_NEEDED;
        }
        if (s == 17) {
            saw_gone = 1;
            for (size_t k = 0; k < nv; k++) {
                char bare[4096];
                pcw_pdh_value_path(all, k, 0, bare, sizeof bare);
                if (strstr(bare, "(c)") || strstr(bare, "(a#1)"))
                    saw_gone = 0;
            }
        }
        assert_walks_agree(all, vals, sts, nv);
        free(vals);
        free(sts);
        if (pcw_pdh_instance_epoch(all) != epoch)
            epoch_changes++, epoch = pcw_pdh_instance_epoch(all);
    }
    cr_assert(saw_gone, "the crashed provider's instances left the wildcard");
    cr_assert(saw_restart, "the restarted provider's c starts without a previous sample");
    cr_assert_geq(epoch_changes, 2, "instances went and came: %d", epoch_changes);
    /* The scenario reached what it means to compare: a rate, a number
     * and an empty value of the same column. */
    int c = column_of(&r, "\\HQ(a#1)\\Rate");
    cr_assert_geq(c, 0);
    cr_assert_eq(r.v[c][0].status, PCW_CSTATUS_NEW_DATA_NEEDED);
    int rated = 0;
    for (int s = 1; s < SAMPLES; s++)
        rated += r.v[c][s].status == PCW_CSTATUS_VALID && r.v[c][s].value > 0;
    cr_assert_gt(rated, 5, "a rate with numbers");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_PDH_END_OF_LOG);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_PDH_END_OF_LOG);
    /* The last sample's values stay. */
    assert_live(&r, h[c], (size_t)c, SAMPLES - 1);
    cr_assert_eq(pcw_pdh_get_log_info(q, &info), PCW_OK);
    cr_assert_eq(info.next, SAMPLES);
    free(h);
    pcw_pdh_close(q);
    recording_free(&r);
}

/* ---- seeking -------------------------------------------------------------------- */

Test(history_query, seek_by_index_and_time)
{
    recording r = {0};
    record_scenario(&r, "seek.pcwlog");
    pcw_pdh *q;
    char why[512];
    const char *files[] = {r.log};
    cr_assert_eq(pcw_pdh_open_log(&q, files, 1, why, sizeof why), PCW_OK, "%s", why);
    pcw_pdh_counter **h = calloc(r.n, sizeof *h);
    for (size_t i = 0; i < r.n; i++)
        cr_assert_eq(pcw_pdh_add_counter(q, r.bare[i], &h[i], NULL), PCW_OK);
    int rates = 0;
    for (int k = 1; k < SAMPLES; k += 3) {
        cr_assert_eq(pcw_pdh_log_seek(q, (uint64_t)k), PCW_OK);
        pcw_pdh_log_info info;
        pcw_pdh_get_log_info(q, &info);
        cr_assert_eq(info.next, (uint64_t)k);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(pcw_pdh_realtime_ns(q), r.real[k]);
        /* No previous sample: a two-sample type has no value yet, an
         * instantaneous one is as live. */
        for (size_t i = 0; i < r.n; i++) {
            pcw_pdh_value v;
            cr_assert_eq(pcw_pdh_get_value(h[i], 0, 0, &v), PCW_OK);
            if (!pcw_cook_needs_two(r.type[i])) {
                assert_live(&r, h[i], i, k);
            } else if (r.v[i][k].status == PCW_CSTATUS_VALID) {
                cr_assert_eq(v.status, PCW_CSTATUS_NEW_DATA_NEEDED, "%s after a seek to %d: %d",
                             r.bare[i], k, v.status);
                rates++;
            }
        }
        /* The next sample cooks as live. */
        if (k + 1 < SAMPLES) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            for (size_t i = 0; i < r.n; i++)
                assert_live(&r, h[i], i, k + 1);
        }
    }
    cr_assert_gt(rates, 10);
    /* Backwards, one before, twice: sample k exactly as live. */
    for (int k = SAMPLES - 1; k >= 1; k -= 5) {
        cr_assert_eq(pcw_pdh_log_seek(q, (uint64_t)k - 1), PCW_OK);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        for (size_t i = 0; i < r.n; i++)
            assert_live(&r, h[i], i, k);
    }
    /* By wall-clock time: the sample at or after it. */
    for (int k = 0; k < SAMPLES; k += 4) {
        cr_assert_eq(pcw_pdh_log_seek_time(q, r.real[k]), PCW_OK);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(pcw_pdh_realtime_ns(q), r.real[k], "seek to sample %d", k);
        if (k > 0) {
            cr_assert_eq(pcw_pdh_log_seek_time(q, r.real[k] - 1), PCW_OK);
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            cr_assert_eq(pcw_pdh_realtime_ns(q), r.real[k], "just before sample %d", k);
        }
    }
    cr_assert_eq(pcw_pdh_log_seek_time(q, 0), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_realtime_ns(q), r.real[0]);
    cr_assert_eq(pcw_pdh_log_seek_time(q, r.real[SAMPLES - 1] + 1), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_PDH_END_OF_LOG);
    cr_assert_eq(pcw_pdh_log_seek(q, SAMPLES), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_PDH_END_OF_LOG);
    cr_assert_eq(pcw_pdh_log_seek(q, SAMPLES + 1), PCW_E_INVALID_PARAMETER);
    /* From the end back to the start. */
    cr_assert_eq(pcw_pdh_log_seek(q, 0), PCW_OK);
    for (int s = 0; s < SAMPLES; s++)
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    for (size_t i = 0; i < r.n; i++)
        assert_live(&r, h[i], i, SAMPLES - 1);
    free(h);
    pcw_pdh_close(q);
    recording_free(&r);
}

/* ---- several logs ----------------------------------------------------------------- */

Test(history_query, two_logs_read_as_one)
{
    recording a = {0}, b = {0};
    record_scenario(&a, "one.pcwlog");
    record_scenario(&b, "two.pcwlog");
    pcw_pdh *q;
    char why[512];
    const char *files[] = {a.log, b.log};
    cr_assert_eq(pcw_pdh_open_log(&q, files, 2, why, sizeof why), PCW_OK, "%s", why);
    pcw_pdh_log_info info;
    cr_assert_eq(pcw_pdh_get_log_info(q, &info), PCW_OK);
    cr_assert_eq(info.samples, 2 * SAMPLES);
    cr_assert_eq(info.files, 2);
    cr_assert_eq(info.first_real_ns, a.real[0]);
    cr_assert_eq(info.last_real_ns, b.real[SAMPLES - 1]);
    int c = column_of(&a, "\\HQ(b)\\Rate");
    cr_assert_geq(c, 0);
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, a.bare[c], &h, NULL), PCW_OK);
    for (int s = 0; s < 2 * SAMPLES; s++) {
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        const recording *r = s < SAMPLES ? &a : &b;
        /* The second log's first sample: no previous one, as its live run. */
        assert_live(r, h, (size_t)column_of(r, a.bare[c]), s % SAMPLES);
    }
    cr_assert_eq(b.v[column_of(&b, a.bare[c])][0].status, PCW_CSTATUS_NEW_DATA_NEEDED);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_PDH_END_OF_LOG);
    /* A seek into the second log. */
    cr_assert_eq(pcw_pdh_log_seek_time(q, b.real[3]), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_realtime_ns(q), b.real[3]);
    pcw_pdh_close(q);
    recording_free(&a);
    recording_free(&b);
}

/* ---- damaged logs from a real pcwstat ------------------------------------------------- */

/* The offsets of the blocks of a log (walking the headers). */
static size_t block_offsets(const unsigned char *b, size_t len, uint64_t *off, size_t cap)
{
    size_t n = 0;
    for (uint64_t at = PCW__HIST_FILE_HEADER; at + PCW__HIST_BLOCK_HEADER <= len && n < cap;) {
        off[n++] = at;
        at += PCW__HIST_BLOCK_HEADER + pcw__hist_le32(b + at + 4);
    }
    return n;
}

Test(history_query, damaged_block_ends_the_log_naming_its_offset)
{
    tu_child p;
    qp_start(&p, "Dmg", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create x");
    qp_cmd(&p, "set x %d 42", QP_LEVEL);
    qp_cmd(&p, "rate x %d 1000", QP_RATE);
    char log[PATH_MAX], out[PATH_MAX], err[PATH_MAX], bad[PATH_MAX], cut[PATH_MAX];
    snprintf(log, sizeof log, "%s/dmg.pcwlog", tu_root);
    snprintf(bad, sizeof bad, "%s/bad.pcwlog", tu_root);
    snprintf(cut, sizeof cut, "%s/cut.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    const char *args[] = {"\\Dmg(x)\\Level",
                          "\\Dmg(x)\\Rate",
                          "-si",
                          "0.02",
                          "-sc",
                          "8",
                          "--flush",
                          "0",
                          "-f",
                          "BIN",
                          "-o",
                          log,
                          NULL};
    int st = tu_run_tool("pcwstat", args, out, err, 60000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pcwstat: %s", slurp(err));
    qp_stop(&p);
    size_t len = 0;
    unsigned char *b = tu_read_file(log, 1 << 24, &len);
    cr_assert(b);
    uint64_t off[64];
    size_t nb = block_offsets(b, len, off, 64);
    cr_assert_eq(nb, 9, "one block a sample: %zu", nb);

    /* A byte flipped in the 4th block: three samples, then the error. */
    b[off[3] + PCW__HIST_BLOCK_HEADER + 1] ^= 0x40;
    cr_assert_eq(tu_write_file(bad, b, len, 0600), 0);
    pcw_pdh *q;
    char why[512];
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){bad}, 1, why, sizeof why), PCW_OK, "%s",
                 why);
    pcw_pdh_log_info info;
    pcw_pdh_get_log_info(q, &info);
    cr_assert_eq(info.samples, 3);
    cr_assert_eq(info.damaged, 1);
    char want[128];
    snprintf(want, sizeof want, "bad.pcwlog: block at offset %llu: XXH3 check mismatch",
             (unsigned long long)off[3]);
    cr_assert(strstr(pcw_pdh_log_error(q), want), "%s", pcw_pdh_log_error(q));
    pcw_pdh_counter *lv, *rt;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Dmg(x)\\Level", &lv, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Dmg(*)\\Rate", &rt, NULL), PCW_OK);
    for (int s = 0; s < 3; s++) {
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(lv, 0, 0, &v), PCW_OK);
        cr_assert_eq(v.status, PCW_CSTATUS_VALID);
        cr_assert_float_eq(v.value, 42.0, 1e-9);
        cr_assert_eq(pcw_pdh_get_value(rt, 0, 0, &v), PCW_OK);
        cr_assert_eq(v.status, s == 0 ? PCW_CSTATUS_NEW_DATA_NEEDED : PCW_CSTATUS_VALID);
    }
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_E_CORRUPT);
    cr_assert(strstr(pcw_pdh_log_error(q), want), "%s", pcw_pdh_log_error(q));
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_PDH_END_OF_LOG);
    /* A seek back reads the good part again. */
    cr_assert_eq(pcw_pdh_log_seek(q, 2), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_E_CORRUPT);
    pcw_pdh_close(q);

    /* Cut inside the last block (a recorder killed mid-write). */
    b[off[3] + PCW__HIST_BLOCK_HEADER + 1] ^= 0x40;
    cr_assert_eq(tu_write_file(cut, b, (size_t)off[8] + 10, 0600), 0);
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){cut}, 1, why, sizeof why), PCW_OK);
    pcw_pdh_get_log_info(q, &info);
    cr_assert_eq(info.samples, 8);
    snprintf(want, sizeof want, "incomplete block header at offset %llu",
             (unsigned long long)off[8]);
    cr_assert(strstr(pcw_pdh_log_error(q), want), "%s", pcw_pdh_log_error(q));
    for (int s = 0; s < 8; s++)
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_E_CORRUPT);
    pcw_pdh_close(q);
    free(b);
}

/* ---- bad files, bad paths ------------------------------------------------------------- */

static int append_path(const char *path, void *arg)
{
    strcat(arg, path);
    return 0;
}

Test(history_query, bad_files_and_paths)
{
    char why[512], missing[PATH_MAX], text[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/none.pcwlog", tu_root);
    snprintf(text, sizeof text, "%s/text.pcwlog", tu_root);
    pcw_pdh *q = (pcw_pdh *)1;
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){missing}, 1, why, sizeof why),
                 PCW_E_NOT_FOUND);
    cr_assert_null(q);
    cr_assert(strstr(why, "none.pcwlog") && strstr(why, "No such file"), "%s", why);
    cr_assert_eq(tu_write_file(text, "hello, world\n", 13, 0600), 0);
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){text}, 1, why, sizeof why), PCW_E_CORRUPT);
    cr_assert(strstr(why, "text.pcwlog: not a pcw log"), "%s", why);
    cr_assert_eq(pcw_pdh_open_log(&q, NULL, 0, why, sizeof why), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_open_log(NULL, (const char *[]){text}, 1, NULL, 0),
                 PCW_E_INVALID_PARAMETER);
    /* A log of one known series. */
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/one.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(x)\\Rate", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_COUNTER_COUNTER, .provider_id = 1, .instance_id = 1};
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
    for (int i = 0; i < 3; i++) {
        pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID,
                                     .first = (uint64_t)i * 100,
                                     .second = (uint64_t)(i + 1) * 1000000000u,
                                     .freq = 1000000000u}};
        cr_assert_eq(pcw__hist_writer_sample(w, (uint64_t)(i + 1) * 1000000000u,
                                             1700000000000000000ull + (uint64_t)i * 1000000000u, &v,
                                             1),
                     0);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){log}, 1, why, sizeof why), PCW_OK, "%s",
                 why);
    pcw_path_error e;
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Nope(*)\\*", &h, &e), PCW_E_NOT_FOUND);
    cr_assert_eq(e.part, PCW_PATH_COUNTERSET);
    cr_assert(strstr(e.message, "Nope"), "%s", e.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\S(*)\\Nope", &h, &e), PCW_E_NOT_FOUND);
    cr_assert_eq(e.part, PCW_PATH_COUNTER, "%d %s", e.part, e.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\S(*", &h, &e), PCW_E_INVALID_NAME);
    /* An instance the log does not hold: one value, no instance. */
    cr_assert_eq(pcw_pdh_add_counter(q, "\\S(y)\\Rate", &h, &e), PCW_OK, "%s", e.message);
    pcw_pdh_counter *x, *any;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\\\h\\s(X)\\rate", &x, &e), PCW_OK, "%s", e.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\\\other\\S(*)\\Rate", &any, &e), PCW_E_NOT_FOUND);
    cr_assert_eq(pcw_pdh_refresh(q), 0);
    cr_assert_eq(pcw_pdh_raw_count(x), 0);
    cr_assert_eq(pcw_pdh_source_count(x), 0);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    pcw_pdh_value v;
    cr_assert_eq(pcw_pdh_value_count(h), 1);
    cr_assert_eq(pcw_pdh_get_value(h, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_NO_INSTANCE);
    cr_assert_eq(pcw_pdh_get_value(x, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    cr_assert_float_eq(v.value, 100.0, 1e-9);
    cr_assert_str_eq(v.instance, "x");
    cr_assert_eq(v.instance_id, 1);
    cr_assert_eq(v.provider_id, 1);
    cr_assert_eq(v.raw.first, 100);
    char p[256];
    pcw_pdh_value_path(x, 0, 1, p, sizeof p);
    cr_assert_str_eq(p, "\\\\h\\S(x)\\Rate");
    /* Expansion lists the logged paths a pattern matches. */
    char got[256] = "";
    cr_assert_eq(pcw_pdh_expand(q, "\\S(*)\\*", append_path, got, NULL), PCW_OK);
    cr_assert_str_eq(got, "\\S(x)\\Rate");
    pcw_hist_dist d;
    cr_assert_eq(pcw_pdh_get_histogram(x, 0, 0, &d), PCW_OK);
    cr_assert_eq(d.status, PCW_CSTATUS_NO_DATA);
    cr_assert_eq(pcw_pdh_remove_counter(q, h), PCW_OK);
    cr_assert_eq(pcw_pdh_remove_counter(q, h), PCW_E_INVALID_PARAMETER);
    pcw_pdh_close(q);
}

/* A series whose identity changed (another instance behind the path, a
 * provider restarted) has no previous sample at that point, as live: its
 * rate there is no number, the next one is a rate again. */
Test(history_query, new_identity_has_no_previous_sample)
{
    char log[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/ident.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(x)\\Rate", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_COUNTER_COUNTER, .provider_id = 1, .instance_id = 1};
    uint64_t firsts[5] = {100, 300, 5000, 5400, 5500};
    for (int i = 0; i < 5; i++) {
        if (i == 0 || i == 2) {
            id.instance_id = (uint32_t)i + 1;
            cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
        }
        pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID,
                                     .first = firsts[i],
                                     .second = (uint64_t)(i + 1) * 1000000000u,
                                     .freq = 1000000000u}};
        cr_assert_eq(pcw__hist_writer_sample(w, (uint64_t)(i + 1) * 1000000000u,
                                             1700000000000000000ull + (uint64_t)i * 1000000000u, &v,
                                             1),
                     0);
        if (i <= 1) /* sample 1 a block without the identity record, the change at a
                       block's start */
            cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){log}, 1, why, sizeof why), PCW_OK, "%s",
                 why);
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\S(x)\\Rate", &h, NULL), PCW_OK);
    const int want_st[5] = {PCW_CSTATUS_NEW_DATA_NEEDED, PCW_CSTATUS_VALID,
                            PCW_CSTATUS_NEW_DATA_NEEDED, PCW_CSTATUS_VALID, PCW_CSTATUS_VALID};
    const double want[5] = {0, 200, 0, 400, 100};
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            pcw_pdh_value v;
            cr_assert_eq(pcw_pdh_get_value(h, 0, 0, &v), PCW_OK);
            cr_assert_eq(v.status, want_st[i], "pass %d sample %d: %d", pass, i, v.status);
            cr_assert_float_eq(v.value, want[i], 1e-9, "sample %d: %g", i, v.value);
            cr_assert_eq(v.instance_id, i < 2 ? 1u : 3u);
        }
        /* Again from sample 1 (no previous: a seek), the identities put
         * back as they were there. */
        cr_assert_eq(pcw_pdh_log_seek(q, 0), PCW_OK);
    }
    cr_assert_eq(pcw_pdh_log_seek(q, 3), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    pcw_pdh_value v;
    cr_assert_eq(pcw_pdh_get_value(h, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    cr_assert_float_eq(v.value, 100.0, 1e-9);
    cr_assert_eq(v.instance_id, 3u);
    cr_assert_eq(pcw_pdh_log_seek(q, 1), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_get_value(h, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.instance_id, 1u, "the identity of sample 1, put back by the seek");
    pcw_pdh_close(q);
}

/* A histogram counter (format version 2 logs its buckets, lib/history):
 * every statistic of every instance and of the _Total cooks as live, and
 * pcw_pdh_get_histogram on the log gives the interval's distribution the
 * live query gave (the same buckets, count, sum, interval), before and
 * after a seek (the first sample after one: no previous, as live's
 * first). */
#define HSAMPLES 14
Test(history_query, histogram_as_live)
{
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "top_hist_provider", (const char *[]){NULL}), 0);
    char line[256], why[512], log[PATH_MAX];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "top_hist_provider did not start");
    qp_cmd(&p, "create web");
    qp_cmd(&p, "create api");
    qp_cmd(&p, "pattern web 1500000 3 70000000 1");
    qp_cmd(&p, "pattern api 2000 4");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *user;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Hist Test(*)\\Latency", &user, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    size_t n = pcw_pdh_value_count(user);
    cr_assert_geq(n, 3 * 7, "columns: %zu", n);
    column *cols = calloc(n, sizeof *cols);
    char **bare = calloc(n, sizeof *bare);
    for (size_t i = 0; i < n; i++) {
        char b[4096], full[4096];
        pcw_pdh_value_path(user, i, 0, b, sizeof b);
        pcw_pdh_value_path(user, i, 1, full, sizeof full);
        cr_assert_eq(pcw_pdh_add_counter(q, b, &cols[i].h, NULL), PCW_OK, "%s", b);
        cols[i].path = strdup(full);
        bare[i] = strdup(b);
    }
    pcw_pdh_remove_counter(q, user);
    snprintf(log, sizeof log, "%s/hist.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    recorder *rec = record_open(fd, log, cols, n, 40000000ull, why, sizeof why);
    cr_assert(rec, "%s", why);
    live_val(*lv)[HSAMPLES] = calloc(n, sizeof *lv);
    pcw_hist_dist(*ld)[HSAMPLES] = calloc(n, sizeof *ld);
    uint64_t(*lb)[HSAMPLES][64] = calloc(n, sizeof *lb);  /* the first 64 buckets */
    pcw_hist_dist(*lc)[HSAMPLES] = calloc(n, sizeof *lc); /* cumulative */
    uint64_t real[HSAMPLES];
    for (int s = 0; s < HSAMPLES; s++) {
        if (s == 6)
            qp_cmd(&p, "pattern web"); /* an interval without observations */
        if (s > 0) {
            pause_ms(15);
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        }
        for (size_t i = 0; i < n; i++) {
            pcw_pdh_value v;
            cr_assert_eq(pcw_pdh_get_value(cols[i].h, 0, 0, &v), PCW_OK);
            lv[i][s].status = v.status, lv[i][s].value = v.value;
            cr_assert_eq(pcw_pdh_get_histogram(cols[i].h, 0, PCW_HIST_CUMULATIVE, &lc[i][s]),
                         PCW_OK);
            cr_assert_eq(pcw_pdh_get_histogram(cols[i].h, 0, 0, &ld[i][s]), PCW_OK);
            for (uint32_t j = 0; j < 64 && j < ld[i][s].nbuckets; j++)
                lb[i][s][j] = ld[i][s].buckets[j];
        }
        real[s] = pcw_pdh_realtime_ns(q);
        cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(record_finish(rec, why, sizeof why), 0, "%s", why);
    tu_send(&p, "quit");
    cr_assert_eq(tu_finish(&p, 10000), 0);
    pcw_pdh_close(q);

    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){log}, 1, why, sizeof why), PCW_OK, "%s",
                 why);
    pcw_pdh_counter **h = calloc(n, sizeof *h);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(pcw_pdh_add_counter(q, bare[i], &h[i], NULL), PCW_OK, "%s", bare[i]);
    int dists = 0;
    /* From the start, then after seeks: back to sample 3 (another block
     * than the last read), and back into the block last read (its words
     * must be decoded whole again, not against the words read last). */
    const int starts[3] = {0, 4, HSAMPLES - 1};
    for (int pass = 0; pass < 3; pass++) {
        int from = starts[pass];
        if (pass)
            cr_assert_eq(pcw_pdh_log_seek(q, (uint64_t)from - 1), PCW_OK);
        for (int s = pass ? from - 1 : 0; s < HSAMPLES; s++) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            cr_assert_eq(pcw_pdh_realtime_ns(q), real[s]);
            if (s < from)
                continue; /* the priming sample after the seek */
            for (size_t i = 0; i < n; i++) {
                pcw_pdh_value v;
                cr_assert_eq(pcw_pdh_get_value(h[i], 0, 0, &v), PCW_OK);
                cr_assert_eq(v.status, lv[i][s].status, "%s sample %d", bare[i], s);
                cr_assert(memcmp(&v.value, &lv[i][s].value, sizeof v.value) == 0,
                          "%s sample %d: %.17g live %.17g", bare[i], s, v.value, lv[i][s].value);
                if (strstr(bare[i], "_Total"))
                    continue; /* a total's buckets are not logged */
                pcw_hist_dist d;
                /* Cumulative: the words as logged, not only their change. */
                cr_assert_eq(pcw_pdh_get_histogram(h[i], 0, PCW_HIST_CUMULATIVE, &d), PCW_OK);
                cr_assert_eq(d.status, lc[i][s].status, "%s sample %d", bare[i], s);
                cr_assert_eq(d.count, lc[i][s].count, "%s sample %d: cumulative", bare[i], s);
                cr_assert_eq(d.sum, lc[i][s].sum);
                cr_assert_eq(pcw_pdh_get_histogram(h[i], 0, 0, &d), PCW_OK);
                const pcw_hist_dist *w = &ld[i][s];
                cr_assert_eq(d.status, w->status, "%s sample %d: %d live %d", bare[i], s, d.status,
                             w->status);
                if (d.status != PCW_CSTATUS_VALID)
                    continue;
                cr_assert_eq(d.shape, w->shape);
                cr_assert_eq(d.count, w->count, "%s sample %d", bare[i], s);
                cr_assert_eq(d.sum, w->sum);
                cr_assert_eq(d.zero, w->zero);
                cr_assert_eq(d.interval_ns, w->interval_ns, "%s sample %d", bare[i], s);
                for (uint32_t j = 0; j < 64 && j < d.nbuckets; j++)
                    cr_assert_eq(d.buckets[j], lb[i][s][j], "bucket %u", j);
                dists += d.count > 0;
            }
        }
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_PDH_END_OF_LOG);
    }
    cr_assert_gt(dists, 10, "distributions with observations compared: %d", dists);
    for (size_t i = 0; i < n; i++) {
        free(cols[i].path);
        free(bare[i]);
    }
    free(cols), free(bare), free(h), free(lv), free(ld), free(lb), free(lc);
    pcw_pdh_close(q);
}

/* ---- hostile logs: work bounded by the bytes ---------------------------------- */

/* Append a block of `payload` (stored as it is) with sequence number seq. */
static void put_block(FILE *f, uint64_t seq, const unsigned char *payload, size_t len)
{
    unsigned char h[PCW__HIST_BLOCK_HEADER] = {0};
    pcw__hist_put_le32(h, PCW__HIST_BLOCK_MAGIC);
    pcw__hist_put_le32(h + 4, (uint32_t)len);
    pcw__hist_put_le32(h + 8, (uint32_t)len);
    pcw__hist_put_le64(h + 16, seq);
    pcw__hist_put_le32(h + 24, pcw__hist_block_check(PCW__HIST_VERSION, h, payload, len));
    cr_assert_eq(fwrite(h, 1, sizeof h, f), sizeof h);
    cr_assert_eq(fwrite(payload, 1, len, f), len);
}

/* Many series defined, then many tiny blocks of samples that hold none of
 * them: a sample (or block) of a few bytes must cost a few bytes' work,
 * not a pass over every series (which made this 6 MB log cost 100,000 x
 * 100,000 value writes and per-series block resets: a minute and more).
 * Read whole, through the query layer, within a deadline far above what
 * it takes (a second). */
Test(history_query, tiny_samples_of_many_series_cost_their_bytes)
{
    enum { NSERIES = 100000, NSAMPLES = 100000 };
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/many.pcwlog", tu_root);
    FILE *f = fopen(log, "w");
    cr_assert(f);
    unsigned char hdr[PCW__HIST_FILE_HEADER] = "PCWLOG\r\n";
    pcw__hist_put_le32(hdr + 8, PCW__HIST_VERSION);
    cr_assert_eq(fwrite(hdr, 1, sizeof hdr, f), sizeof hdr);
    unsigned char *b = malloc((size_t)NSERIES * 40 + 64);
    size_t len = 0;
    for (uint32_t i = 0; i < NSERIES; i++) {
        char path[40];
        int pl = snprintf(path, sizeof path, "\\\\h\\S(i%u)\\C", i);
        len += pcw__hist_put_varint(b + len, PCW__HIST_REC_SERIES);
        len += pcw__hist_put_varint(b + len, i);
        len += pcw__hist_put_varint(b + len, PCW__HIST_KIND_RAW);
        len += pcw__hist_put_varint(b + len, (uint64_t)pl);
        memcpy(b + len, path, (size_t)pl);
        len += (size_t)pl;
    }
    put_block(f, 0, b, len);
    for (uint64_t s = 1; s <= NSAMPLES; s++) {
        len = 0;
        len += pcw__hist_put_varint(b + len, PCW__HIST_REC_SAMPLE);
        len += pcw__hist_put_varint(b + len, 1000000000ull * s); /* a block's first time: whole */
        len += pcw__hist_put_varint(b + len, 0);
        len += pcw__hist_put_varint(b + len, 0); /* no values */
        put_block(f, s, b, len);
    }
    cr_assert_eq(fclose(f), 0);
    free(b);
    long long t0 = tu_now_ms();
    pcw_pdh *q;
    char why[512];
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){log}, 1, why, sizeof why), PCW_OK, "%s",
                 why);
    pcw_pdh_log_info info;
    pcw_pdh_get_log_info(q, &info);
    cr_assert_eq(info.samples, NSAMPLES);
    cr_assert_eq(info.series, NSERIES);
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\S(i7)\\C", &h, NULL), PCW_OK);
    uint64_t got = 0;
    while (pcw_pdh_collect(q, NULL) == PCW_OK) {
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(h, 0, 0, &v), PCW_OK);
        cr_assert_eq(v.status, PCW_CSTATUS_NO_INSTANCE);
        got++;
        cr_assert_lt(tu_now_ms() - t0, 30000, "still reading after 30 s (%llu samples)",
                     (unsigned long long)got);
    }
    cr_assert_eq(got, NSAMPLES);
    cr_assert_eq(pcw_pdh_log_seek(q, NSAMPLES / 2), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    pcw_pdh_close(q);
}

/* A hostile identity's scale (any int32: INT32_MIN made the cooking's
 * power of ten negate it, undefined, and recurse without end): a value
 * scaled to nothing, or to no finite number, as the formula says, never a
 * crash. Found by fuzz/history's query-layer path. */
Test(history_query, hostile_scale_cooks_without_crashing)
{
    char log[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/scale.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    const int32_t scales[3] = {INT32_MIN, INT32_MAX, -400};
    for (uint32_t i = 0; i < 3; i++) {
        char path[64];
        snprintf(path, sizeof path, "\\\\h\\S(x%u)\\Level", i);
        cr_assert_eq(pcw__hist_writer_series(w, i, path, PCW__HIST_KIND_RAW), 0);
        pcw__hist_series id = {.type = PERF_COUNTER_LARGE_RAWCOUNT, .scale = scales[i]};
        cr_assert_eq(pcw__hist_writer_ident(w, i, &id), 0);
    }
    pcw__hist_value v[3];
    memset(v, 0, sizeof v);
    for (int i = 0; i < 3; i++)
        v[i].raw = (pcw_raw){.status = PCW_CSTATUS_VALID, .first = 42};
    cr_assert_eq(pcw__hist_writer_sample(w, 1000000000u, 1700000000000000000ull, v, 3), 0);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){log}, 1, why, sizeof why), PCW_OK, "%s",
                 why);
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\S(*)\\Level", &h, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_value_count(h), 3);
    const int want[3] = {PCW_CSTATUS_VALID, PCW_CSTATUS_OVERFLOW, PCW_CSTATUS_VALID};
    for (size_t i = 0; i < 3; i++) {
        pcw_pdh_value x;
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &x), PCW_OK);
        cr_assert_eq(x.status, want[i], "scale %d: status %d", scales[i], x.status);
        cr_assert_eq(x.value, 0.0, "scale %d: %g", scales[i], x.value);
    }
    pcw_pdh_close(q);
}

/* The walk over a handle's values cooks the commonest formulas inline
 * (logsource.c, cook_fast): it must give exactly the bits and statuses of
 * the generic path (pcw__hist_cook, pcwl_generic_cook set), whatever the
 * formula (raw counts, rates, fractions, bases, and the generic ones among
 * them), the flags, the scale (the identity's, a handle's, one that
 * overflows), the sample (resets, zero and backward intervals, a zero
 * frequency or base, a fraction above 100 %, values without an instance)
 * and identities changing in the middle of a block, read on or reached by
 * a seek (the kinds the walk keeps per series follow the identity). */
#define FC_SERIES  11
#define FC_SAMPLES 24
Test(history_query, fast_cooking_is_the_generic_cooking)
{
    static const struct {
        const char *path;
        uint32_t type;
        int32_t scale;
        uint32_t kind;
    } sp[FC_SERIES] = {
        {"\\\\h\\S(a)\\Count", PERF_COUNTER_LARGE_RAWCOUNT, 0, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Scaled", PERF_COUNTER_LARGE_RAWCOUNT, 2, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Tiny", PERF_COUNTER_RAWCOUNT, -3, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Huge", PERF_COUNTER_LARGE_RAWCOUNT, 400, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Rate", PERF_COUNTER_COUNTER, 0, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Bulk", PERF_COUNTER_BULK_COUNT, -1, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Ratio", PERF_RAW_FRACTION, 0, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Ratio Base", PERF_RAW_BASE, 0, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(a)\\Elapsed", PERF_ELAPSED_TIME, 0, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(b)\\Count", PERF_COUNTER_LARGE_RAWCOUNT, 0, PCW__HIST_KIND_RAW},
        {"\\\\h\\S(_Total)\\Rate", PERF_COUNTER_COUNTER, 0, PCW__HIST_KIND_COMPUTED},
    };
    char log[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/fast.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    pcw__hist_series id[FC_SERIES];
    for (uint32_t i = 0; i < FC_SERIES; i++) {
        cr_assert_eq(pcw__hist_writer_series(w, i, sp[i].path, sp[i].kind), 0);
        id[i] = (pcw__hist_series){.type = sp[i].type, .scale = sp[i].scale, .instance_id = i};
        cr_assert_eq(pcw__hist_writer_ident(w, i, &id[i]), 0);
    }
    uint64_t x = 12345; /* a fixed LCG: small numbers, so that equal and smaller ones come */
    pcw__hist_value v[FC_SERIES];
    for (int t = 0; t < FC_SAMPLES; t++) {
        if (t == 7) { /* mid-block: b's count becomes a rate, a's rate scaled */
            id[9].type = PERF_COUNTER_COUNTER, id[9].scale = 1;
            cr_assert_eq(pcw__hist_writer_ident(w, 9, &id[9]), 0);
            id[4].scale = 3;
            cr_assert_eq(pcw__hist_writer_ident(w, 4, &id[4]), 0);
        }
        if (t == 16) { /* and back, the fraction's base scaled */
            id[9].type = PERF_COUNTER_LARGE_RAWCOUNT, id[9].scale = -2;
            cr_assert_eq(pcw__hist_writer_ident(w, 9, &id[9]), 0);
        }
        memset(v, 0, sizeof v);
        for (int i = 0; i < FC_SERIES; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t r = x >> 33;
            pcw_raw *raw = &v[i].raw;
            raw->status = r % 11 == 0 ? PCW_CSTATUS_NO_INSTANCE : PCW_CSTATUS_VALID;
            raw->first = (uint64_t)t * 10 + (r >> 4) % 7;     /* resets now and then */
            raw->second = (uint64_t)t * 3 + (r >> 8) % 4;     /* zero, back intervals */
            raw->freq = (r >> 12) % 9 == 0 ? 0 : 1000000000u; /* a zero frequency */
            raw->multi = 1;
            raw->time_ns = (uint64_t)(t + 1) * 1000000000u;
            if (i == 6) /* a fraction: a zero base, above 100 % */
                raw->second = (r >> 16) % 5;
            if (t % 6 == 5 && (i == 4 || i == 5)) /* a rate's counter reset */
                raw->first = 0, raw->status = PCW_CSTATUS_VALID;
            if (i == 3) /* x 10^400: no finite number */
                raw->first = (r >> 4) % 3;
            if (i == 10)
                v[i].computed = (double)((r >> 4) % 1000) / 7.0;
        }
        cr_assert_eq(pcw__hist_writer_sample(w, (uint64_t)(t + 1) * 1000000000u,
                                             1700000000000000000ull + (uint64_t)t * 1000000000u, v,
                                             FC_SERIES),
                     0);
        if (t % 5 == 4)
            cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);

    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open_log(&q, (const char *[]){log}, 1, why, sizeof why), PCW_OK, "%s",
                 why);
    pcw_pdh_counter *h[3];
    for (int k = 0; k < 3; k++)
        cr_assert_eq(pcw_pdh_add_counter(q, "\\S(*)\\*", &h[k], NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_set_scale(h[1], 2), PCW_OK);
    cr_assert_eq(pcw_pdh_set_scale(h[2], 0), PCW_OK);
    static const unsigned flags[] = {0,
                                     PCW_FMT_NOSCALE,
                                     PCW_FMT_NOCAP100,
                                     PCW_FMT_1000,
                                     PCW_FMT_RAW,
                                     PCW_FMT_NOSCALE | PCW_FMT_1000,
                                     PCW_FMT_NOCAP100 | PCW_FMT_1000 | PCW_FMT_NOSCALE};
    size_t valid = 0, statuses[PCW_CSTATUS_LAST + 1] = {0};
    /* Read on from the start, then from every sample after a seek. */
    for (int start = -1; start < FC_SAMPLES; start++) {
        if (start >= 0)
            cr_assert_eq(pcw_pdh_log_seek(q, (uint64_t)start), PCW_OK);
        int from = start < 0 ? 0 : start, to = start < 0 ? FC_SAMPLES : start + 3;
        for (int t = from; t < to && t < FC_SAMPLES; t++) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            for (int k = 0; k < 3; k++)
                for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
                    size_t n = pcw_pdh_value_count(h[k]);
                    cr_assert(n > 0 && n <= 64);
                    double a[64], b[64];
                    uint8_t sa[64], sb[64];
                    memset(a, 0x55, sizeof a), memset(b, 0xaa, sizeof b);
                    pcwl_generic_cook = 0;
                    cr_assert_eq(pcw_pdh_cook_all(h[k], flags[f], a, sa), PCW_OK);
                    pcwl_generic_cook = 1;
                    cr_assert_eq(pcw_pdh_cook_all(h[k], flags[f], b, sb), PCW_OK);
                    pcwl_generic_cook = 0;
                    for (size_t i = 0; i < n; i++) {
                        cr_assert_eq(sa[i], sb[i],
                                     "start %d sample %d handle %d flags %#x value %zu: "
                                     "status %u, generic %u",
                                     start, t, k, flags[f], i, sa[i], sb[i]);
                        cr_assert_eq(memcmp(&a[i], &b[i], sizeof a[i]), 0,
                                     "start %d sample %d handle %d flags %#x value %zu: "
                                     "%.17g, generic %.17g",
                                     start, t, k, flags[f], i, a[i], b[i]);
                        valid += sa[i] == PCW_CSTATUS_VALID;
                        statuses[sa[i] <= PCW_CSTATUS_LAST ? sa[i] : 0]++;
                    }
                    /* pcw_pdh_cook_column takes the same inline cooking. */
                    size_t ni = pcw_pdh_instance_count(h[k]),
                           nc = pcw_pdh_selected_counter_count(h[k]);
                    cr_assert_eq(ni * nc, n);
                    for (size_t col = 0; col < nc; col++) {
                        double cv[64];
                        uint8_t cs[64];
                        cr_assert_eq(pcw_pdh_cook_column(h[k], col, flags[f], cv, cs), PCW_OK);
                        for (size_t r = 0; r < ni; r++) {
                            size_t i = r * nc + col;
                            cr_assert_eq(cs[r], sb[i], "column %zu row %zu: status %u, generic %u",
                                         col, r, cs[r], sb[i]);
                            cr_assert_eq(memcmp(&cv[r], &b[i], sizeof cv[r]), 0,
                                         "column %zu row %zu flags %#x: %.17g, generic %.17g", col,
                                         r, flags[f], cv[r], b[i]);
                        }
                    }
                }
        }
    }
    pcw_pdh_close(q);
    /* The cases met (the comparison is not empty). */
    cr_assert_gt(valid, 1000);
    static const int met[] = {PCW_CSTATUS_NEW_DATA_NEEDED, PCW_CSTATUS_NO_DATA,
                              PCW_CSTATUS_NO_INSTANCE,     PCW_CSTATUS_ZERO_DENOMINATOR,
                              PCW_CSTATUS_BAD_TIMEBASE,    PCW_CSTATUS_RESET,
                              PCW_CSTATUS_OVERFLOW,        PCW_CSTATUS_NEGATIVE_DENOMINATOR};
    for (size_t i = 0; i < sizeof met / sizeof met[0]; i++)
        cr_assert_gt(statuses[met[i]], 0, "status %d never met", met[i]);
}
