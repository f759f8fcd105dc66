/* SPDX-License-Identifier: MIT */
/*
 * bench/history_record.c - recording counters into a pcw log (lib/history,
 * docs/history.md; issue 28, "Performance").
 *
 *   history/record/<instances>/<counters>
 *       one collection of "\Bench(*)\*" (bench/query.c's provider child and
 *       counterset) and its raw samples logged: pcw_pdh_collect, each
 *       counter's raw column (pcw_pdh_raw_column) copied in order into the
 *       values of the sample (the series counter-major), pcw__hist_writer_sample of
 *       every value, and a block appended (zstd) every 10 samples - a
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

#include "../lib/history/history.h"
#include "benchutil.h"
#include "pcw/pdh.h"

#define BLOCK_SAMPLES 10 /* --flush 10 s at one sample a second */

static int open_devnull(void)
{
    return open("/dev/null", O_WRONLY | O_CLOEXEC);
}

/* One series per value, counter-major (all instances of counter 0, then of
 * counter 1...): the raw columns are copied in order. */
static int define(pcw__hist_writer *w, size_t n, size_t instances, uint32_t type)
{
    pcw__hist_series s = {.type = type};
    for (size_t i = 0; i < n; i++) {
        char path[64];
        snprintf(path, sizeof path, "\\\\host\\Bench(i%zu)\\c%zu", i % instances, i / instances);
        if (pcw__hist_writer_series(w, (uint32_t)i, path, PCW__HIST_KIND_RAW) ||
            pcw__hist_writer_ident(w, (uint32_t)i, &s))
            return -1;
    }
    return 0;
}

static void bm_record(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    bu_provider_stop_all();
    if (!bu_provider_get(n, c)) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    pcw_pdh *q;
    pcw_pdh_counter *h;
    if (pcw_pdh_open(&q, NULL) != PCW_OK) {
        gb_skip_with_error(st, "pcw_pdh_open");
        return;
    }
    pcw_path_error err;
    if (pcw_pdh_add_counter(q, "\\Bench(*)\\*", &h, &err) != PCW_OK) {
        gb_skip_with_error(st, err.message);
        pcw_pdh_close(q);
        return;
    }
    size_t series = (size_t)(n * c);
    pcw__hist_value *v = calloc(series, sizeof *v);
    pcw_raw *col = calloc((size_t)n, sizeof *col);
    pcw__hist_writer *w = NULL;
    char why[256];
    int bad = !v || !col || pcw_pdh_collect(q, NULL) != PCW_OK ||
              pcw_pdh_raw_count(h) != (size_t)n ||
              pcw__hist_writer_open(&w, open_devnull(), "/dev/null", NULL, why, sizeof why) ||
              define(w, series, (size_t)n, PERF_COUNTER_LARGE_RAWCOUNT);
    if (bad) {
        gb_skip_with_error(st, "set-up failed");
        goto out;
    }
    int64_t samples = 0;
    while (gb_keep_running(st)) {
        bad |= pcw_pdh_collect(q, NULL) != PCW_OK || pcw_pdh_raw_count(h) != (size_t)n;
        for (uint32_t k = 0; k < (uint32_t)c; k++) {
            bad |= pcw_pdh_raw_column(h, k, col) != PCW_OK;
            /* Counter-major: series k * n + i, so the copy is sequential. */
            pcw__hist_value *x = v + (size_t)k * (size_t)n;
            for (size_t i = 0; i < (size_t)n; i++)
                x[i].raw = col[i];
        }
        bad |=
            pcw__hist_writer_sample(w, pcw_pdh_time_ns(q), pcw_pdh_realtime_ns(q), v, series) != 0;
        if (++samples % BLOCK_SAMPLES == 0)
            bad |= pcw__hist_writer_flush(w, why, sizeof why) != 0;
    }
    if (bad)
        gb_skip_with_error(st, "a collection or a write failed");
    int64_t it = gb_state_iterations(st);
    gb_set_items_processed(st, it * (int64_t)series);
    gb_counter(st, "series", (double)series);
out:
    if (w)
        pcw__hist_writer_close(w, NULL, 0);
    free(v);
    free(col);
    pcw_pdh_close(q);
}

/* ---- the size of an hour ---------------------------------------------------- */

/* xorshift64*: the same hour every run. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

enum { SLOW = 0, RATE = 1, GAUGE = 2 };

static int kind_of_series(size_t i)
{
    size_t k = i % 16;
    return k < 6 ? SLOW : k < 10 ? RATE : GAUGE;
}

static uint32_t type_of(int kind)
{
    return kind == GAUGE ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_COUNTER_BULK_COUNT;
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
                              .pid = 100};
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
            for (size_t i = 0; i < series; i++) {
                int kind = kind_of_series(i);
                uint64_t r = rnd(&seed);
                if (kind == SLOW)
                    level[i] += (r % 100) < 70 ? 0 : 1 + (r >> 32) % 2;
                else if (kind == RATE)
                    level[i] += 300 + (r % 4) * 500 + (r >> 40) % 200;
                else if (r % 100 == 0)
                    level[i] = 1000 + (r >> 20) % 100000;
                pcw_raw *x = &v[i].raw;
                memset(x, 0, sizeof *x);
                x->status = PCW_CSTATUS_VALID;
                x->first = level[i];
                x->freq = 1000000000ull;
                x->time_ns = t;
            }
            bad |= pcw__hist_writer_sample(w, t, wall + t - t0, v, series) != 0;
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
    gb_bench *b = gb_register("history/record", bm_record, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    static const int64_t shape[2] = {6250, 16};
    gb_args(b, shape, 2);
    b = gb_register("history/size_hour", bm_size_hour, NULL);
    gb_iterations(b, 1);
    gb_unit_ns(b);
    static const int64_t series[1] = {10000};
    gb_args(b, series, 1);
}
