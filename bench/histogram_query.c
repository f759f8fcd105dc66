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
 * The provider is this process (its segment is read as any other's). Each
 * instance observes ten values between two collections (outside the timed
 * part: gb_pause), so every interval has observations and the quantile
 * walks its buckets; the _Total (multipleAggregate) is left out of the
 * paths' instances by the counterset's type (multiple instances, no
 * total), so the figure is per instance.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdlib.h>

#include "benchutil.h"
#include "pcw/consumer.h"
#include "pcw/histogram.h"
#include "pcw/provider.h"
#include "pcw/query.h"

PCW_HISTOGRAM_TYPE(hb_latency, PCW_HIST_UNIT_NS, 3, -30, 12);

typedef struct hb_data {
    hb_latency latency;
} hb_data;

static const pcw_counter_desc hb_counters[] = {
    PCW_HISTOGRAM_COUNTER(1, "Latency", hb_data, latency, hb_latency),
};

static struct {
    int64_t n;
    pcw_provider *p;
    hb_data **data;
    uint64_t x; /* the observations' PRNG */
} hb;

/* The provider of n instances (this process), made once per n. */
static int hb_provider(int64_t n)
{
    if (hb.p && hb.n == n)
        return 0;
    if (hb.p) {
        pcw_provider_close(hb.p);
        free(hb.data);
        hb.p = NULL;
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "HBench",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = hb_counters};
    pcw_registration *r;
    if (pcw_provider_open(&hb.p, NULL) != PCW_OK)
        return -1;
    hb.data = calloc((size_t)n, sizeof *hb.data);
    if (!hb.data || pcw_register(&r, hb.p, &info) != PCW_OK)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "i%lld", (long long)i);
        pcw_instance *in;
        pcw_data d = {NULL, sizeof(hb_data)};
        if (pcw_create_instance(&in, r, name, 1, &d) != PCW_OK)
            return -1;
        hb.data[i] = pcw_instance_block(in, 0);
    }
    hb.n = n;
    return 0;
}

/* Ten observations per instance, 100 ns .. 100 ms, log-spread. */
static void hb_observe(void)
{
    for (int64_t i = 0; i < hb.n; i++)
        for (int k = 0; k < 10; k++) {
            hb.x = hb.x * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t v = 100ull << ((hb.x >> 59) % 20); /* 100 ns .. 52 ms */
            hb_latency_observe(&hb.data[i]->latency, v + (hb.x >> 40) % v);
        }
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
    if (hb_provider(n) || pcw_segment_open(&seg, pcw_provider_path(hb.p)) != PCW_OK ||
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
        hb_observe();
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
    if (hb_provider(n) || pcw_pdh_open(&q, NULL) != PCW_OK ||
        pcw_pdh_add_counter(q, path, &h, &err) != PCW_OK) {
        gb_skip_with_error(st, "cannot publish or query the histograms");
        pcw_pdh_close(q);
        return;
    }
    hb_observe();
    pcw_pdh_collect(q, NULL);
    hb_observe();
    pcw_pdh_collect(q, NULL);
    size_t nv = pcw_pdh_value_count(h);
    double *v = malloc((nv ? nv : 1) * sizeof *v);
    uint8_t *s = malloc(nv ? nv : 1);
    int bad = !v || !s || nv < (size_t)n;
    while (!bad && gb_keep_running(st)) {
        gb_pause(st);
        hb_observe();
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
