/* SPDX-License-Identifier: MIT */
/*
 * bench/histogram.c - the provider's cost of one histogram observation
 * (issue 27, "Performance"):
 *
 *   update/pcw_histogram_observe   a PCW_HISTOGRAM_TYPE's typed observer
 *                      (PCW_HIST_UNIT_NS, schema 3, 2^-30 .. 2^12 s: 336
 *                      buckets, 2,704 bytes) on a histogram in an instance's
 *                      block in the segment: the single-writer form
 *   update/pcw_histogram_observe_atomic   the same with _observe_atomic
 *                      (two relaxed atomic adds, for a shared histogram)
 *   update/pcw_histogram_observe_lzcnt   (extra) the same built with
 *                      -mlzcnt (bench/histogram_lzcnt.c): what a provider
 *                      built for x86-64-v3 (or any CPU with lzcnt) pays
 *   update/histogram_floor   the floor of any observer: the two
 *                      read-modify-writes an observation must make (its
 *                      bucket's count and the sum) on the same histogram,
 *                      with each value's word looked up from an array
 *                      filled beforehand by pcw_hist_word: no index
 *                      computed at all. What is above it is the index.
 *   update/promcpp_histogram_observe   prometheus-cpp's Histogram::Observe
 *                      with the same 336 bucket bounds (in seconds, the
 *                      same values), through bench/promcpp.cc
 *
 * Baselines: update/raw_store and update/raw_atomic (bench/update.c).
 *
 * The values: 4096 latencies in nanoseconds from a fixed seed, bimodal like
 * a service with a cache: 90 % log-normal around 200 us (sigma 0.5), 10 %
 * around 5 ms (sigma 1), so the bucket changes from one observation to the
 * next as in real use (one constant would keep hitting one bucket and one
 * branch outcome). Each benchmark walks the same array; prometheus-cpp gets
 * them converted to seconds beforehand, so neither side pays a conversion.
 * gb_clobber_memory() after each pcw observation makes the compiler perform
 * every load and store each time, as in bench/update.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <math.h>
#include <stdint.h>

#include "benchutil.h"
#include "histogram.h"
#include "promcpp.h"

struct bench_hist_block {
    uint64_t requests;
    bench_latency latency;
};

uint64_t bench_lat_ns[NVALUES];
static double lat_s[NVALUES];

/* xorshift64*: a fixed, portable sequence. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static double uniform(uint64_t *s)
{
    return ((double)(next_random(s) >> 11) + 0.5) / 9007199254740992.0;
}

static void make_values(void)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < NVALUES; i++) {
        /* Box-Muller: a standard normal. */
        double z = sqrt(-2 * log(uniform(&s))) * cos(6.283185307179586 * uniform(&s));
        int slow = uniform(&s) < 0.1;
        double ns = slow ? 5e6 * exp(1.0 * z) : 2e5 * exp(0.5 * z);
        bench_lat_ns[i] = (uint64_t)ns + 1;
        lat_s[i] = (double)bench_lat_ns[i] * 1e-9;
    }
}

/* One provider, one counterset with a histogram, one instance. */
bench_latency *bench_hist_instance(void)
{
    static bench_latency *h;
    if (h)
        return h;
    make_values();
    pcw_provider *p;
    pcw_provider_options o = {.name = "pcw_bench-histogram"};
    if (pcw_provider_open(&p, &o) != PCW_OK)
        return NULL;
    static const pcw_counter_desc c[] = {
        PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct bench_hist_block, requests),
        PCW_HISTOGRAM_COUNTER(2, "Latency", struct bench_hist_block, latency, bench_latency),
    };
    static const uint32_t sizes[] = {sizeof(struct bench_hist_block)};
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .name = "Bench Histogram",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = 2,
                                .counters = c,
                                .block_count = 1,
                                .block_sizes = sizes};
    pcw_registration *r;
    pcw_instance *in;
    pcw_data d = {NULL, sizeof(struct bench_hist_block)}; /* zeros */
    if (pcw_register(&r, p, &ri) != PCW_OK || pcw_create_instance(&in, r, "one", 1, &d) != 0)
        return NULL;
    h = &((struct bench_hist_block *)pcw_instance_block(in, 0))->latency;
    return h;
}

static void observe_bench(gb_state *st, int atomic)
{
    bu_pin(BU_CPU_MAIN);
    bench_latency *h = bench_hist_instance();
    if (!h) {
        gb_skip_with_error(st, "cannot create the pcw instance");
        return;
    }
    int64_t k;
    while ((k = gb_keep_running_batch(st, NVALUES)) > 0) {
        if (atomic)
            for (int64_t i = 0; i < k; i++) {
                bench_latency_observe_atomic(h, bench_lat_ns[i & (NVALUES - 1)]);
                gb_clobber_memory();
            }
        else
            for (int64_t i = 0; i < k; i++) {
                bench_latency_observe(h, bench_lat_ns[i & (NVALUES - 1)]);
                gb_clobber_memory();
            }
    }
    gb_set_items_processed(st, gb_state_iterations(st));
}

static void bm_observe(gb_state *st, void *arg)
{
    (void)arg;
    observe_bench(st, 0);
}

static void bm_observe_atomic(gb_state *st, void *arg)
{
    (void)arg;
    observe_bench(st, 1);
}

/* The two stores, the word precomputed (update/histogram_floor). */
static void bm_floor(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    bench_latency *h = bench_hist_instance();
    if (!h) {
        gb_skip_with_error(st, "cannot create the pcw instance");
        return;
    }
    static uint32_t word[NVALUES];
    for (int i = 0; i < NVALUES; i++)
        word[i] = pcw_hist_word((uint32_t)bench_latency_shape, bench_lat_ns[i]);
    uint64_t *w = h->words;
    int64_t k;
    while ((k = gb_keep_running_batch(st, NVALUES)) > 0)
        for (int64_t i = 0; i < k; i++) {
            uint64_t *b = &w[word[i & (NVALUES - 1)]];
            __atomic_store_n(b, __atomic_load_n(b, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
            __atomic_store_n(
                &w[0], __atomic_load_n(&w[0], __ATOMIC_RELAXED) + bench_lat_ns[i & (NVALUES - 1)],
                __ATOMIC_RELAXED);
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

/* prometheus-cpp with pcw's bucket bounds: the upper bounds 2^(i/8) s of
 * the same 336 buckets. */
static void bm_promcpp(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    if (!bench_hist_instance()) {
        gb_skip_with_error(st, "cannot make the values");
        return;
    }
    uint32_t shape = (uint32_t)bench_latency_shape, n = pcw_hist_nbuckets(shape);
    double bounds[PCW_HIST_MAX_BUCKETS];
    for (uint32_t j = 0; j < n; j++)
        bounds[j] = exp2((double)(pcw_hist_min_index(shape) + 1 + (int32_t)j) / 8.0);
    promcpp_histogram *h = promcpp_histogram_new(bounds, n);
    while (gb_keep_running_batch(st, NVALUES) > 0)
        promcpp_histogram_observe_n(h, lat_s, NVALUES);
    int64_t iters = gb_state_iterations(st);
    if (promcpp_histogram_count(h) != (double)iters)
        gb_skip_with_error(st, "prometheus-cpp counted another number of observations");
    promcpp_histogram_free(h);
    gb_set_items_processed(st, iters);
}

void bench_histogram_register(void)
{
    gb_unit_ns(gb_register("update/pcw_histogram_observe", bm_observe, NULL));
    gb_unit_ns(gb_register("update/pcw_histogram_observe_atomic", bm_observe_atomic, NULL));
    gb_unit_ns(gb_register("update/histogram_floor", bm_floor, NULL));
    if (promcpp_available())
        gb_unit_ns(gb_register("update/promcpp_histogram_observe", bm_promcpp, NULL));
    bench_histogram_lzcnt_register();
}
