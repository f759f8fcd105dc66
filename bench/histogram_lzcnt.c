/* SPDX-License-Identifier: MIT */
/*
 * bench/histogram_lzcnt.c - update/pcw_histogram_observe_lzcnt: the typed
 * observer compiled with -mlzcnt (bench/bench.mk), so pcw/histogram.h
 * counts leading zeros with lzcnt instead of its baseline x86-64 path (see
 * pcw__hist_clz64). Skipped on a CPU without lzcnt (ABM).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "benchutil.h"
#include "histogram.h"

static void bm_observe_lzcnt(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("abm")) {
        gb_skip_with_error(st, "this CPU has no lzcnt");
        return;
    }
#endif
    bench_latency *h = bench_hist_instance();
    if (!h) {
        gb_skip_with_error(st, "cannot create the pcw instance");
        return;
    }
    int64_t k;
    while ((k = gb_keep_running_batch(st, NVALUES)) > 0)
        for (int64_t i = 0; i < k; i++) {
            bench_latency_observe(h, bench_lat_ns[i & (NVALUES - 1)]);
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

void bench_histogram_lzcnt_register(void)
{
    gb_unit_ns(gb_register("update/pcw_histogram_observe_lzcnt", bm_observe_lzcnt, NULL));
}
