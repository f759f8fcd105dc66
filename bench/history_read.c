/* SPDX-License-Identifier: MIT */
/*
 * bench/history_read.c - reading a pcw log back through the query layer
 * (pcw_pdh_open_log, lib/query/logsource.c; issue 28).
 *
 *   history/read_cooked/<series>/<samples>
 *       the whole log read once: pcw_pdh_log_seek to its start, then for
 *       each sample pcw_pdh_collect (decoding it) and pcw_pdh_visit_rows
 *       on "\HistBench(*)\*" (every value cooked and handed over a block at
 *       a time, the consumer adding up one value per instance, as
 *       query/collect_cooked does). items_per_second are cooked values
 *       ("samples": one series' value at one time) per second. The
 *       baseline is query/collect_cooked/100000/16 of the same run: the
 *       live query's values per second. Issue 28's target: at least 50
 *       million a second.
 *   history/read_decode/<series>/<samples>
 *       the same without cooking (pcw_pdh_collect alone): how much of the
 *       time is decoding.
 *
 * The log is written once, before timing, into the suite's private
 * directory with lib/history's writer as pcwstat records: 10,000 series
 * (2,500 instances x 4 counters: a slowly growing count, a rate, a
 * mostly-constant gauge, a fraction with its base), one sample a second,
 * blocks of 10 samples (pcwstat's --flush default), 600 samples.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchutil.h"
#include "history/history.h"
#include "pcw/pdh.h"

#define INSTANCES 2500
#define COUNTERS  4
#define SERIES    (INSTANCES * COUNTERS)
#define SAMPLES   600

static char log_path[PATH_MAX], rows_path[PATH_MAX];

/* The same log in row samples (format 3, what the fused recorder writes):
 * a row an instance of 5 words - the four counters and the fraction's
 * base (a series of its own, "Ratio Base") - with the same values. */
#define RWORDS 5
static int make_rows_log(void)
{
    if (rows_path[0])
        return 0;
    const char *root = getenv("PCW_DIR");
    char path[PATH_MAX], why[256];
    snprintf(path, sizeof path, "%s/history_read_rows.pcwlog", root && *root ? root : "/tmp");
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    pcw__hist_writer *w;
    if (fd < 0 || pcw__hist_writer_open(&w, fd, path, NULL, why, sizeof why))
        return -1;
    static const char *const names[RWORDS] = {"Count", "Rate", "Level", "Ratio", "Ratio Base"};
    static const uint32_t types[RWORDS] = {PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_COUNTER,
                                           PERF_COUNTER_LARGE_RAWCOUNT, PERF_RAW_FRACTION,
                                           PERF_RAW_BASE};
    uint64_t(*rows)[RWORDS] = calloc(INSTANCES, sizeof *rows);
    int rc = rows ? 0 : -1;
    for (uint32_t i = 0; i < INSTANCES * RWORDS && !rc; i++) {
        uint32_t k = i % RWORDS;
        char p[128];
        snprintf(p, sizeof p, "\\\\bench\\HistBench(inst%u)\\%s", i / RWORDS, names[k]);
        pcw__hist_series id = {.type = types[k],
                               .provider_id = 7,
                               .instance_id = i / RWORDS,
                               .pid = 1234,
                               .layout = {.words = k == 3 ? 5 : k + 1,
                                          .first = k,
                                          .second = k == 1   ? PCW__HIST_SRC_TIME
                                                    : k == 3 ? PCW__HIST_SRC_WORD + 4
                                                             : PCW__HIST_SRC_CONST,
                                          .freq_const = 1000000000u}};
        rc = pcw__hist_writer_series(w, i, p, PCW__HIST_KIND_RAW) ||
             pcw__hist_writer_ident(w, i, &id);
    }
    uint64_t mono = 1000000000000ull, real = 1790000000000000000ull;
    for (int s = 0; s < SAMPLES && !rc; s++, mono += 1000000000ull, real += 1000000000ull) {
        for (uint32_t inst = 0; inst < INSTANCES; inst++) {
            uint64_t *x = rows[inst];
            x[0] += (uint64_t)((s + inst) % 7 == 0);
            x[1] += 100 + (inst * 37 + (uint64_t)s * 11) % 50;
            x[2] = 40 + (uint64_t)((s / 60 + inst) % 3);
            x[3] = (inst * 7 + (uint64_t)s) % 100, x[4] = 100;
        }
        rc = pcw__hist_writer_rows_begin(w, INSTANCES * RWORDS) ||
             pcw__hist_writer_rows(w, rows, sizeof rows[0], INSTANCES, RWORDS, mono) ||
             pcw__hist_writer_rows_end(w, mono, real);
        if (!rc && s % 10 == 9)
            rc = pcw__hist_writer_flush(w, why, sizeof why);
    }
    free(rows);
    if (pcw__hist_writer_close(w, why, sizeof why) || rc)
        return -1;
    snprintf(rows_path, sizeof rows_path, "%s", path);
    return 0;
}

/* Write the log (once per process): 0, or -1. */
static int make_log(void)
{
    if (log_path[0])
        return 0;
    const char *root = getenv("PCW_DIR");
    char path[PATH_MAX], why[256];
    snprintf(path, sizeof path, "%s/history_read.pcwlog", root && *root ? root : "/tmp");
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    pcw__hist_writer *w;
    if (fd < 0 || pcw__hist_writer_open(&w, fd, path, NULL, why, sizeof why))
        return -1;
    static const char *const names[COUNTERS] = {"Count", "Rate", "Level", "Ratio"};
    static const uint32_t types[COUNTERS] = {PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_COUNTER,
                                             PERF_COUNTER_LARGE_RAWCOUNT, PERF_RAW_FRACTION};
    pcw__hist_value *v = calloc(SERIES, sizeof *v);
    int rc = v ? 0 : -1;
    for (uint32_t i = 0; i < SERIES && !rc; i++) {
        char p[128];
        snprintf(p, sizeof p, "\\\\bench\\HistBench(inst%u)\\%s", i / COUNTERS,
                 names[i % COUNTERS]);
        pcw__hist_series id = {.type = types[i % COUNTERS],
                               .provider_id = 7,
                               .instance_id = i / COUNTERS,
                               .pid = 1234};
        rc = pcw__hist_writer_series(w, i, p, PCW__HIST_KIND_RAW) ||
             pcw__hist_writer_ident(w, i, &id);
    }
    uint64_t mono = 1000000000000ull, real = 1790000000000000000ull;
    for (int s = 0; s < SAMPLES && !rc; s++, mono += 1000000000ull, real += 1000000000ull) {
        for (uint32_t i = 0; i < SERIES; i++) {
            uint32_t k = i % COUNTERS, inst = i / COUNTERS;
            pcw_raw *r = &v[i].raw;
            r->status = PCW_CSTATUS_VALID;
            r->time_ns = mono;
            if (k == 0) /* a count that grows now and then */
                r->first += (uint64_t)((s + inst) % 7 == 0);
            else if (k == 1) /* a rate: a count and the time */
                r->first += 100 + (inst * 37 + (uint64_t)s * 11) % 50, r->second = mono,
                                                                       r->freq = 1000000000u;
            else if (k == 2) /* a gauge that mostly stays */
                r->first = 40 + (uint64_t)((s / 60 + inst) % 3);
            else /* a fraction with its base */
                r->first = (inst * 7 + (uint64_t)s) % 100, r->second = 100;
        }
        rc = pcw__hist_writer_sample(w, mono, real, v, SERIES);
        if (!rc && s % 10 == 9)
            rc = pcw__hist_writer_flush(w, why, sizeof why);
    }
    free(v);
    if (pcw__hist_writer_close(w, why, sizeof why) || rc)
        return -1;
    snprintf(log_path, sizeof log_path, "%s", path);
    return 0;
}

static int add_rows(const pcw_pdh_rows *b, void *arg)
{
    double s[4] = {0, 0, 0, 0};
    const double *v = b->values + b->count - 1;
    size_t r = 0;
    for (; r + 4 <= b->rows; r += 4, v += 4 * (size_t)b->count) {
        s[0] += v[0];
        s[1] += v[b->count];
        s[2] += v[2 * (size_t)b->count];
        s[3] += v[3 * (size_t)b->count];
    }
    for (; r < b->rows; r++, v += b->count)
        s[0] += *v;
    *(double *)arg += (s[0] + s[1]) + (s[2] + s[3]);
    return 0;
}

static void bm_read(gb_state *st, void *arg)
{
    int cooked = *(const int *)arg & 1, rows = *(const int *)arg & 2;
    size_t series = rows ? (size_t)INSTANCES * RWORDS : SERIES;
    bu_pin(BU_CPU_MAIN);
    if (rows ? make_rows_log() : make_log()) {
        gb_skip_with_error(st, "cannot write the log");
        return;
    }
    pcw_pdh *q;
    pcw_pdh_counter *h;
    char why[512];
    const char *files[] = {rows ? rows_path : log_path};
    if (pcw_pdh_open_log(&q, files, 1, why, sizeof why) != PCW_OK) {
        gb_skip_with_error(st, why);
        return;
    }
    pcw_path_error err;
    if (pcw_pdh_add_counter(q, "\\HistBench(*)\\*", &h, &err) != PCW_OK) {
        gb_skip_with_error(st, err.message);
        pcw_pdh_close(q);
        return;
    }
    double sum = 0;
    int bad = 0;
    while (gb_keep_running(st)) {
        bad |= pcw_pdh_log_seek(q, 0) != PCW_OK;
        for (int s = 0; s < SAMPLES; s++) {
            bad |= pcw_pdh_collect(q, NULL) != PCW_OK;
            if (cooked)
                pcw_pdh_visit_rows(h, 0, add_rows, &sum);
        }
        bad |= pcw_pdh_value_count(h) != series;
        gb_do_not_optimize(&sum);
    }
    if (bad)
        gb_skip_with_error(st, "a collection failed or missed values");
    int64_t it = gb_state_iterations(st);
    gb_set_items_processed(st, it * (int64_t)SAMPLES * (int64_t)series);
    gb_counter(st, "series", (double)series);
    gb_counter(st, "samples", SAMPLES);
    pcw_pdh_close(q);
}

void bench_history_read_register(void); /* bench/main.c calls it */
void bench_history_read_register(void)
{
    static int how[4] = {1, 0, 3, 2}; /* bit 0 cooked, bit 1 row samples */
    const char *names[4] = {"history/read_cooked", "history/read_decode",
                            "history/read_rows_cooked", "history/read_rows_decode"};
    static const int64_t shape[2] = {SERIES, SAMPLES};
    for (int k = 0; k < 4; k++) {
        gb_bench *b = gb_register(names[k], bm_read, &how[k]);
        gb_use_real_time(b);
        gb_unit_ns(b);
        gb_args(b, shape, 2);
    }
}
