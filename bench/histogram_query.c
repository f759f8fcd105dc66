/* SPDX-License-Identifier: MIT */
/*
 * bench/histogram_query.c - reading and cooking histograms' quantiles
 * (issue 27, "Performance": at most 3x the raw snapshot of the same bytes).
 *
 *   histogram/snapshot/<instances>
 *       pcw_segment_read(PCW_READ_NO_NAMES) of a counterset of <instances>
 *       instances, each one histogram counter "Latency" (ns, schema 3,
 *       2^-30 .. 2^12 s: 336 buckets, 2,704 bytes): the raw snapshot of the
 *       bytes the query reads, the baseline.
 *   histogram/query_p99/<instances>
 *       pcw_pdh_collect of "\HBench(*)\Latency:p99" and every value cooked
 *       (pcw_pdh_cook_all): each instance's interval distribution (the
 *       difference of its two last samples, bucket by bucket) and its p99.
 *   histogram/query_default/<instances>
 *       the same for "\HBench(*)\Latency": the seven default statistics
 *       (rate mean p50 p90 p99 p99.9 max) of each instance, from one
 *       distribution per instance (the handle keeps it).
 *
 * The provider is a child process pinned to the other CPU (as every
 * provider of the suite). Each instance observes ten values between two
 * reads (outside the timed part: gb_pause; the child answers when it is
 * done), so every interval has observations and the quantile walks its
 * buckets. The counterset has no _Total (multiple instances), so the
 * figure is per instance.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "benchutil.h"
#include "pcw/consumer.h"
#include "pcw/histogram.h"
#include "pcw/provider.h"
#include "pcw/pdh.h"

PCW_HISTOGRAM_TYPE(hb_latency, PCW_HIST_UNIT_NS, 3, -30, 12);

typedef struct hb_data {
    hb_latency latency;
} hb_data;

static const pcw_counter_desc hb_counters[] = {
    PCW_HISTOGRAM_COUNTER(1, "Latency", hb_data, latency, hb_latency),
};

#define HB_MAX 100000

/* The provider child (pinned to the other CPU, as every provider of the
 * suite): n instances; prints "ready <segment path>", then for each line
 * on stdin makes ten observations per instance (100 ns .. 52 ms,
 * log-spread) and answers "ok". */
int bench_histogram_child(int64_t n)
{
    if (n < 1 || n > HB_MAX) {
        printf("error instances\n");
        return 2;
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "HBench",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = hb_counters};
    pcw_provider *p;
    pcw_registration *r;
    hb_data **data = calloc((size_t)n, sizeof *data);
    if (!data || pcw_provider_open(&p, NULL) != PCW_OK || pcw_register(&r, p, &info) != PCW_OK) {
        printf("error provider\n");
        return 1;
    }
    for (int64_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "i%lld", (long long)i);
        pcw_instance *in;
        pcw_data d = {NULL, sizeof(hb_data)};
        if (pcw_create_instance(&in, r, name, 1, &d) != PCW_OK) {
            printf("error instance\n");
            return 1;
        }
        data[i] = pcw_instance_block(in, 0);
    }
    printf("ready %s\n", pcw_provider_path(p));
    fflush(stdout);
    uint64_t x = 1;
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        for (int64_t i = 0; i < n; i++)
            for (int k = 0; k < 10; k++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t v = 100ull << ((x >> 59) % 20);
                hb_latency_observe(&data[i]->latency, v + (x >> 40) % v);
            }
        printf("ok\n");
        fflush(stdout);
    }
    pcw_provider_close(p);
    free(data);
    return 0;
}

/* The child of n instances, started once per n. */
static bu_child hb_child;
static int64_t hb_n;

static void hb_stop(void)
{
    if (hb_n)
        bu_stop(&hb_child);
    hb_n = 0;
}

static const char *hb_provider(int64_t n)
{
    bu_on_stop_all(hb_stop);
    if (hb_n != n) {
        if (hb_n)
            bu_stop(&hb_child);
        hb_n = 0;
        char ns[32];
        snprintf(ns, sizeof ns, "%lld", (long long)n);
        const char *args[] = {"histogram-provider", ns, NULL};
        if (bu_spawn(&hb_child, BU_CPU_OTHER, args) != 0)
            return NULL;
        hb_n = n;
    }
    return hb_child.line + 6; /* "ready <path>" */
}

/* One round of observations in the child; 0 or -1. */
static int hb_observe(void)
{
    char c = 0;
    if (write(hb_child.in, "observe\n", 8) != 8)
        return -1;
    while (c != '\n')
        if (read(hb_child.out, &c, 1) != 1)
            return -1;
    return 0;
}

static void report(gb_state *st, int64_t n)
{
    int64_t it = gb_state_iterations(st);
    gb_set_items_processed(st, it * n);
    gb_set_bytes_processed(st, it * n * (int64_t)sizeof(hb_data));
    gb_counter(st, "instances", (double)n);
    gb_counter(st, "bytes_per_histogram", (double)sizeof(hb_latency));
}

static void bm_snapshot(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0);
    pcw_segment *seg = NULL;
    const pcw_counterset *cs;
    const char *path = hb_provider(n);
    if (!path || pcw_segment_open(&seg, path) != PCW_OK ||
        !(cs = pcw_segment_find_counterset(seg, "HBench"))) {
        gb_skip_with_error(st, "cannot publish or open the histograms");
        if (seg)
            pcw_segment_close(seg);
        return;
    }
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    int bad = pcw_segment_read(seg, cs, &snap, PCW_READ_NO_NAMES) != PCW_OK;
    while (gb_keep_running(st)) {
        gb_pause(st);
        bad |= hb_observe();
        gb_resume(st);
        bad |= pcw_segment_read(seg, cs, &snap, PCW_READ_NO_NAMES) != PCW_OK ||
               (int64_t)snap.count != n;
        gb_do_not_optimize(snap.data);
    }
    if (bad)
        gb_skip_with_error(st, "a read failed or missed instances");
    report(st, n);
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
}

static void bm_query(gb_state *st, void *arg)
{
    const char *path = arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0);
    pcw_pdh *q = NULL;
    pcw_pdh_counter *h;
    pcw_path_error err;
    if (!hb_provider(n) || pcw_pdh_open(&q, NULL) != PCW_OK ||
        pcw_pdh_add_counter(q, path, &h, &err) != PCW_OK) {
        gb_skip_with_error(st, "cannot publish or query the histograms");
        pcw_pdh_close(q);
        return;
    }
    int bad = hb_observe() || pcw_pdh_collect(q, NULL) != PCW_OK || hb_observe() ||
              pcw_pdh_collect(q, NULL) != PCW_OK;
    size_t nv = pcw_pdh_value_count(h);
    double *v = malloc((nv ? nv : 1) * sizeof *v);
    uint8_t *s = malloc(nv ? nv : 1);
    bad |= !v || !s || nv < (size_t)n;
    while (!bad && gb_keep_running(st)) {
        gb_pause(st);
        bad |= hb_observe();
        gb_resume(st);
        bad |= pcw_pdh_collect(q, NULL) != PCW_OK;
        pcw_pdh_cook_all(h, 0, v, s);
        bad |= s[nv - 1] != PCW_CSTATUS_VALID;
        gb_do_not_optimize(v);
    }
    if (bad)
        gb_skip_with_error(st, "a collection failed or a value was not valid");
    report(st, n);
    free(v);
    free(s);
    pcw_pdh_close(q);
}

void bench_histogram_query_register(void); /* bench/main.c calls it */
void bench_histogram_query_register(void)
{
    static const int64_t sizes[] = {10000};
    gb_bench *b[3] = {
        gb_register("histogram/snapshot", bm_snapshot, NULL),
        gb_register("histogram/query_p99", bm_query, "\\HBench(*)\\Latency:p99"),
        gb_register("histogram/query_default", bm_query, "\\HBench(*)\\Latency"),
    };
    for (int k = 0; k < 3; k++) {
        gb_use_real_time(b[k]);
        gb_unit_ns(b[k]);
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            gb_args(b[k], &sizes[i], 1);
    }
}
