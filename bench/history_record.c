/* SPDX-License-Identifier: MIT */
/*
 * bench/history_record.c - recording counters into a pcw log (lib/history,
 * docs/history.md; issue 28, "Performance").
 *
 *   history/record/<instances>/<counters>
 *       one collection of "\Bench(*)\*" (bench/query.c's provider child and
 *       counterset) and its raw rows logged: pcw__q_collect_raw_cmp handing
 *       each run of rows, compared with the writer's words in the pass that
 *       copies it, to pcw__hist_writer_rows_cmp (a row sample, the series
 *       instance-major), and a block appended every 10 samples - a
 *       recorder at one second with the default --flush of 10 s. The log
 *       goes to /dev/null: the figure is the CPU of recording, not the
 *       disk's. The baseline is query/collect_cooked/<instances>/<counters>
 *       of the same run (bench/query.c): the collection alone, every value
 *       cooked; the target is at most 1.3x for 100,000 series
 *       (6250 x 16).
 *   history/size_hour/<series>
 *       the size of one hour of a log of <series> realistic series at one
 *       second: 3,600 samples generated back to back, each series advanced
 *       as one second would advance it, the logged times one second apart
 *       (plus up to 2 ms of jitter, as a sampling loop has), written with
 *       the recorder's blocks (10 samples). Of every 16 series of an
 *       instance: 6 slow counts (0 to 2 events a second, most seconds
 *       none), 4 rates (a few hundred to a few thousand a second, noisy),
 *       6 gauges that mostly stay (each changes in 1 % of the seconds).
 *       Counters: log_bytes_per_sample (the file over series x 3,600),
 *       csv_bytes_per_sample (typeperf's CSV of the same hour, cooked,
 *       "%.6f" in quotes: what typeperf -f CSV writes) and gorilla_anchor
 *       (1.37, the Gorilla paper's bytes per sample); the target is at
 *       most 2 bytes a sample. One iteration (the hour), timed for
 *       information only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/history/codec.h"
#include "../lib/history/history.h"
#include "../lib/query/collect_raw.h"
#include "benchutil.h"
#include "pcw/pdh.h"
#include "pcw/provider.h"

#define BLOCK_SAMPLES 10 /* --flush 10 s at one sample a second */

static int open_devnull(void)
{
    return open("/dev/null", O_WRONLY | O_CLOEXEC);
}

/* ---- recording: the fused path ------------------------------------------- */

/* The series of a handle of `instances` x `counters`, instance-major
 * (series i * counters + k: the rows are given as they are), each with
 * its counter type (types[k]) and the layout the query gives for it. */
static int define(pcw__hist_writer *w, pcw_pdh_counter *h, size_t instances, uint32_t counters,
                  const uint32_t *types)
{
    for (size_t i = 0; i < instances; i++)
        for (uint32_t k = 0; k < counters; k++) {
            pcw__hist_series s = {.type = types[k], .provider_id = 1, .instance_id = (uint32_t)i};
            char path[64];
            uint32_t id = (uint32_t)(i * counters + k);
            snprintf(path, sizeof path, "\\\\host\\Bench(i%zu)\\c%u", i, k);
            if (pcw__q_raw_layout(h, k, &s.layout) || pcw__hist_writer_series(w, id, path, 0) ||
                pcw__hist_writer_ident(w, id, &s))
                return -1;
        }
    return 0;
}

typedef struct recorder {
    pcw__hist_writer *w;
    size_t series;
    uint32_t width;
    int bad;
    uint64_t *changed; /* a bit a row: which changed (pcw__q_collect_raw_cmp) */
} recorder;

/* pcw__q_collect_raw's runs into the row sample: the recorder's loop. */
static int record_run(const pcw__q_raw_rows *run, void *arg)
{
    recorder *R = arg;
    if (!run->nrows) { /* a restart: the sample again from its start */
        pcw__hist_writer_rows_cancel(R->w);
        R->bad |= pcw__hist_writer_rows_begin(R->w, R->series) != 0;
    } else if (!run->rows) {
        R->bad |=
            pcw__hist_writer_rows_absent(R->w, run->nrows * R->width, PCW_CSTATUS_NO_INSTANCE) != 0;
    } else {
        R->bad |= pcw__hist_writer_rows_cmp(R->w, run->rows, run->stride, run->nrows, R->width,
                                            run->time_ns, run->changed, run->changed_at) != 0;
    }
    return R->bad;
}

/* One recorded sample: the collection handing its rows to the writer,
 * each compared with the writer's words in the pass that copies it. */
static int record_once(pcw_pdh *q, pcw_pdh_counter *h, recorder *R)
{
    size_t nw;
    const uint64_t *words = pcw__hist_writer_words(R->w, 0, &nw);
    R->bad |= pcw__hist_writer_rows_begin(R->w, R->series) != 0;
    R->bad |= pcw__q_collect_raw_cmp(q, NULL, h, words, nw / R->width, R->width, R->changed,
                                     record_run, R) != PCW_OK;
    R->bad |= pcw__hist_writer_rows_end(R->w, pcw_pdh_time_ns(q), pcw_pdh_realtime_ns(q)) != 0;
    return R->bad;
}

/* A query of "\Bench(*)\*" on the provider child, primed (two samples). */
static int open_bench(pcw_pdh **q, pcw_pdh_counter **h, gb_state *st)
{
    pcw_path_error err;
    if (pcw_pdh_open(q, NULL) != PCW_OK) {
        gb_skip_with_error(st, "pcw_pdh_open");
        return -1;
    }
    if (pcw_pdh_add_counter(*q, "\\Bench(*)\\*", h, &err) != PCW_OK) {
        gb_skip_with_error(st, err.message);
        pcw_pdh_close(*q);
        return -1;
    }
    return 0;
}

/* Step the churn child (if any) one second on, and wait for it. */
static int churn_step(const bu_child *c)
{
    char x = 's';
    if (!c)
        return 0;
    if (write(c->in, &x, 1) != 1 || read(c->out, &x, 1) != 1)
        return -1;
    return 0;
}

static const bu_child *churn_child(int64_t n, int64_t c);
static const uint32_t *churn_types(void);

/* history/record and history/record_churn: `churn` 0 is the static
 * provider of the query benchmarks (bu_provider_get), 1 the churn child. */
static void record_bench(gb_state *st, int churn)
{
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    const bu_child *child = NULL;
    bu_provider_stop_all();
    if (churn ? !(child = churn_child(n, c)) : !bu_provider_get(n, c)) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    pcw_pdh *q;
    pcw_pdh_counter *h;
    if (open_bench(&q, &h, st))
        return;
    static uint32_t raw_types[PCW__HIST_ROW_WORDS];
    for (unsigned k = 0; k < PCW__HIST_ROW_WORDS; k++)
        raw_types[k] = PERF_COUNTER_LARGE_RAWCOUNT;
    recorder R = {NULL, (size_t)(n * c), (uint32_t)c, 0, calloc((size_t)(n + 63) / 64, 8)};
    char why[256];
    int bad = !R.changed || pcw_pdh_collect(q, NULL) != PCW_OK ||
              pcw_pdh_collect(q, NULL) != PCW_OK || pcw__q_raw_width(h) != (uint32_t)c ||
              pcw__hist_writer_open(&R.w, open_devnull(), "/dev/null", NULL, why, sizeof why) ||
              define(R.w, h, (size_t)n, (uint32_t)c, churn ? churn_types() : raw_types);
    if (bad) {
        gb_skip_with_error(st, "set-up failed");
        goto out;
    }
    int64_t samples = 0;
    while (gb_keep_running(st)) {
        bad |= churn_step(child) != 0;
        bad |= record_once(q, h, &R) != 0;
        if (++samples % BLOCK_SAMPLES == 0)
            bad |= pcw__hist_writer_flush(R.w, why, sizeof why) != 0;
    }
    if (bad)
        gb_skip_with_error(st, "a collection or a write failed");
    gb_set_items_processed(st, gb_state_iterations(st) * (int64_t)R.series);
    gb_counter(st, "series", (double)R.series);
    gb_counter(st, "log_bytes_per_sample",
               samples ? (double)pcw__hist_writer_bytes(R.w) / ((double)samples * (double)R.series)
                       : 0);
out:
    if (R.w)
        pcw__hist_writer_close(R.w, NULL, 0);
    free(R.changed);
    pcw_pdh_close(q);
}

static void bm_record(gb_state *st, void *arg)
{
    (void)arg;
    record_bench(st, 0);
}

static void bm_record_churn(gb_state *st, void *arg)
{
    (void)arg;
    record_bench(st, 1);
}

/* The baseline of history/record_churn: query/collect_cooked's
 * collection (pcw_pdh_collect_rows, one value per instance added up) of
 * the churn child, stepped the same way. */
static int add_rows(const pcw_pdh_rows *b, void *arg)
{
    double *sum = arg;
    for (size_t r = 0; r < b->rows; r++)
        *sum += b->values[r * b->count + b->count - 1];
    return 0;
}

static void bm_collect_churn(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    bu_provider_stop_all();
    const bu_child *child = churn_child(n, c);
    pcw_pdh *q;
    pcw_pdh_counter *h;
    if (!child) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    if (open_bench(&q, &h, st))
        return;
    double sum = 0;
    int bad = pcw_pdh_collect(q, NULL) != PCW_OK || pcw_pdh_collect(q, NULL) != PCW_OK;
    while (gb_keep_running(st)) {
        bad |= churn_step(child) != 0;
        bad |= pcw_pdh_collect_rows(q, NULL, h, 0, add_rows, &sum) != PCW_OK;
    }
    if (bad)
        gb_skip_with_error(st, "a collection failed");
    gb_do_not_optimize(&sum);
    gb_set_items_processed(st, gb_state_iterations(st) * n * c);
    pcw_pdh_close(q);
}

/* ---- the churn child ------------------------------------------------------- */

/* xorshift64*: the same values every run. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

enum { SLOW = 0, RATE = 1, GAUGE = 2 };

/* Of every 16 counters: 6 slow counts, 4 rates, 6 gauges (the size_hour
 * mix below). */
static int kind_of_series(size_t i)
{
    size_t k = i % 16;
    return k < 6 ? SLOW : k < 10 ? RATE : GAUGE;
}

static uint32_t type_of(int kind)
{
    return kind == GAUGE ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_COUNTER_BULK_COUNT;
}

/* Counter k's value one second on (level: its value now). */
static uint64_t advance(int kind, uint64_t level, uint64_t r)
{
    if (kind == SLOW)
        return level + ((r % 100) < 70 ? 0 : 1 + (r >> 32) % 2);
    if (kind == RATE)
        return level + 300 + (r % 4) * 500 + (r >> 40) % 200;
    return r % 100 == 0 ? 1000 + (r >> 20) % 100000 : level;
}

static const uint32_t *churn_types(void)
{
    static uint32_t t[PCW__HIST_ROW_WORDS];
    for (size_t k = 0; k < PCW__HIST_ROW_WORDS; k++)
        t[k] = type_of(kind_of_series(k));
    return t;
}

static bu_child churn;
static int64_t churn_n, churn_c;

static void churn_stop(void)
{
    if (churn.pid > 0)
        bu_stop(&churn);
}

static const bu_child *churn_child(int64_t n, int64_t c)
{
    bu_on_stop_all(churn_stop);
    if (churn.pid > 0 && churn_n == n && churn_c == c)
        return &churn;
    if (churn.pid > 0)
        bu_stop(&churn);
    char ns[32], cs[32];
    snprintf(ns, sizeof ns, "%lld", (long long)n);
    snprintf(cs, sizeof cs, "%lld", (long long)c);
    const char *args[] = {"history-churn", ns, cs, NULL};
    if (bu_spawn(&churn, BU_CPU_OTHER, args) != 0)
        return NULL;
    churn_n = n, churn_c = c;
    return &churn;
}

/* history-churn N C: N instances of C counters of "Bench" (the size_hour
 * mix of types), then for each byte read from the parent every value
 * advanced one second and a byte written back. */
int bench_history_churn_child(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int64_t n = strtoll(argv[1], NULL, 10), c = strtoll(argv[2], NULL, 10);
    pcw_provider *p;
    pcw_provider_options o = {.name = "pcw_bench_churn"};
    if (c <= 0 || c > 64 || n <= 0 || pcw_provider_open(&p, &o) != PCW_OK)
        return 1;
    pcw_counter_desc cd[64];
    char names[64][8];
    for (int64_t k = 0; k < c; k++) {
        cd[k] = pcw_counter_desc_default();
        cd[k].id = (uint32_t)k;
        cd[k].offset = (uint32_t)(8 * k);
        cd[k].type = type_of(kind_of_series((size_t)k));
        snprintf(names[k], sizeof names[k], "c%d", (int)k);
        cd[k].name = names[k];
    }
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .name = "Bench",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = (uint32_t)c,
                                .counters = cd};
    pcw_registration *r;
    pcw_instance **in = calloc((size_t)n, sizeof *in);
    uint64_t init[64] = {0}, seed = 0x9E3779B97F4A7C15ull;
    pcw_data d = {init, (uint32_t)(8 * c)};
    if (!in || pcw_register(&r, p, &ri) != PCW_OK)
        return 1;
    for (int64_t i = 0; i < n; i++) {
        char name[32];
        for (int64_t k = 0; k < c; k++)
            init[k] = kind_of_series((size_t)k) == GAUGE ? 1000 + rnd(&seed) % 100000
                                                         : rnd(&seed) % 1000000;
        snprintf(name, sizeof name, BU_NAME_FMT, (int)i);
        if (pcw_create_instance(&in[i], r, name, 1, &d) != PCW_OK)
            return 1;
    }
    printf("ready\n");
    fflush(stdout);
    char x;
    while (read(0, &x, 1) == 1) {
        for (int64_t i = 0; i < n; i++) {
            uint64_t *v = pcw_instance_block(in[i], 0);
            pcw_instance_write_begin(in[i]);
            for (int64_t k = 0; k < c; k++)
                pcw_u64_set(&v[k], advance(kind_of_series((size_t)k), v[k], rnd(&seed)));
            pcw_instance_write_end(in[i]);
        }
        if (write(1, &x, 1) != 1)
            break;
    }
    unlink(pcw_provider_path(p));
    _exit(0);
}

/* ---- the size of an hour ---------------------------------------------------- */

/* Counter k's layout, as the query's recipe makes it: a count's second
 * value is the read's time, a gauge's none. */
static pcw__hist_layout layout_of(size_t k)
{
    int gauge = kind_of_series(k) == GAUGE;
    return (pcw__hist_layout){.words = (uint32_t)k + 1,
                              .status = PCW_CSTATUS_VALID,
                              .first = (uint32_t)k,
                              .second = gauge ? PCW__HIST_SRC_CONST : PCW__HIST_SRC_TIME,
                              .freq_const = 1000000000ull};
}

static void bm_size_hour(gb_state *st, void *arg)
{
    (void)arg;
    size_t series = (size_t)gb_range(st, 0);
    char log[PATH_MAX], csv[PATH_MAX];
    const char *dir = getenv("PCW_DIR");
    snprintf(log, sizeof log, "%s/hour.pcwlog", dir ? dir : "/tmp");
    snprintf(csv, sizeof csv, "%s/hour.csv", dir ? dir : "/tmp");
    pcw__hist_value *v = calloc(series, sizeof *v);
    pcw__hist_value *prev = calloc(series, sizeof *prev);
    uint64_t *level = calloc(series, sizeof *level);
    FILE *out = fopen(csv, "w");
    pcw__hist_writer *w = NULL;
    char why[256];
    unlink(log);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (!v || !prev || !level || !out || fd < 0 ||
        pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why)) {
        gb_skip_with_error(st, "set-up failed");
        goto out;
    }
    /* Series of the three kinds, each with its own type and scale 0. */
    for (size_t i = 0; i < series; i++) {
        pcw__hist_series s = {.type = type_of(kind_of_series(i)),
                              .provider_id = 1,
                              .instance_id = (uint32_t)(i / 16),
                              .pid = 100,
                              .layout = layout_of(i % 16)};
        char path[64];
        snprintf(path, sizeof path, "\\\\host\\Bench(i%zu)\\c%zu", i / 16, i % 16);
        if (pcw__hist_writer_series(w, (uint32_t)i, path, PCW__HIST_KIND_RAW) ||
            pcw__hist_writer_ident(w, (uint32_t)i, &s) || fprintf(out, ",\"%s\"", path) < 0) {
            gb_skip_with_error(st, "set-up failed");
            goto out;
        }
    }
    fputc('\n', out);
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < series; i++)
        level[i] = kind_of_series(i) == GAUGE ? 1000 + rnd(&seed) % 100000 : rnd(&seed) % 1000000;
    const uint64_t t0 = 1000000000000ull, wall = 1764200000000000000ull;
    int bad = 0;
    while (gb_keep_running(st)) {
        for (int s = 0; s < 3600 && !bad; s++) {
            uint64_t t = t0 + (uint64_t)s * 1000000000ull + rnd(&seed) % 2000000;
            /* The instances' rows (level: 16 words an instance), recorded
             * as the recorder does (a row sample, one run of rows), and
             * their raw samples as the query makes them, for the CSV. */
            for (size_t i = 0; i < series; i++)
                level[i] = advance(kind_of_series(i), level[i], rnd(&seed));
            for (size_t i = 0; i < series; i++) {
                pcw__hist_layout l = layout_of(i % 16);
                pcw__hist_row_raw(&l, &level[i - i % 16], t, &v[i].raw);
            }
            bad |= pcw__hist_writer_rows_begin(w, series) != 0 ||
                   pcw__hist_writer_rows(w, level, 16 * 8, series / 16, 16, t) != 0 ||
                   pcw__hist_writer_rows_end(w, t, wall + t - t0) != 0;
            if ((s + 1) % BLOCK_SAMPLES == 0)
                bad |= pcw__hist_writer_flush(w, why, sizeof why) != 0;
            /* typeperf's CSV of the same sample (the first primes: no row). */
            if (s > 0) {
                fprintf(out, "\"11/27/2026 02:%02d:%02d.%03d\"", s / 60, s % 60,
                        (int)((t / 1000000) % 1000));
                for (size_t i = 0; i < series; i++) {
                    double x;
                    int rc =
                        pcw_cook(type_of(kind_of_series(i)), &v[i].raw, &prev[i].raw, 0, 0, &x);
                    if (rc == PCW_CSTATUS_VALID)
                        fprintf(out, ",\"%.6f\"", x);
                    else
                        fputs(",\"\"", out);
                }
                fputc('\n', out);
            }
            memcpy(prev, v, series * sizeof *v);
        }
    }
    bad |= pcw__hist_writer_close(w, why, sizeof why) != 0;
    w = NULL;
    if (bad || fflush(out) != 0) {
        gb_skip_with_error(st, "a write failed");
        goto out;
    }
    struct stat sl, sc;
    if (stat(log, &sl) == 0 && stat(csv, &sc) == 0) {
        double samples = (double)series * 3600.0;
        gb_counter(st, "log_bytes_per_sample", (double)sl.st_size / samples);
        gb_counter(st, "csv_bytes_per_sample", (double)sc.st_size / samples);
        gb_counter(st, "gorilla_anchor", 1.37);
        gb_counter(st, "series", (double)series);
    }
out:
    if (w)
        pcw__hist_writer_close(w, NULL, 0);
    if (out)
        fclose(out);
    unlink(log);
    unlink(csv);
    free(v);
    free(prev);
    free(level);
}

void bench_history_register(void)
{
    static const int64_t shape[2] = {6250, 16};
    gb_bench *b = gb_register("history/record", bm_record, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, shape, 2);
    b = gb_register("history/record_churn", bm_record_churn, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, shape, 2);
    b = gb_register("history/collect_cooked_churn", bm_collect_churn, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, shape, 2);
    b = gb_register("history/size_hour", bm_size_hour, NULL);
    gb_iterations(b, 1);
    gb_unit_ns(b);
    static const int64_t series[1] = {10000};
    gb_args(b, series, 1);
}
