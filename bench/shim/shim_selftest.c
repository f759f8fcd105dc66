/* SPDX-License-Identifier: MIT */
/*
 * shim_selftest.c - proves the C shim over Google Benchmark works.
 *
 * Two benchmarks:
 *   shim/noop               empty body, batch loop: measures loop overhead.
 *   shim/sum_array/n:N      sums N int64s (N = 1000, 100000) per iteration;
 *                           sets items_per_second and a plain "n" counter.
 *
 * Run: build/bench/shim/shim_selftest --benchmark_min_time=0.01
 */
#include "gbench.h"

#include <stdio.h>
#include <stdlib.h>

static void bm_noop(gb_state *st, void *arg)
{
    (void)arg;
    int64_t k;
    while ((k = gb_keep_running_batch(st, 1024)) > 0) {
        for (int64_t i = 0; i < k; i++)
            gb_clobber_memory();
    }
}

static void bm_sum_array(gb_state *st, void *arg)
{
    (void)arg;
    int64_t n = gb_range(st, 0);
    int64_t *a = malloc((size_t)n * sizeof *a);
    if (a == NULL) {
        gb_skip_with_error(st, "malloc failed");
        return;
    }
    for (int64_t i = 0; i < n; i++)
        a[i] = i;

    /* Each iteration is long (µs), so the per-call cost of
     * gb_keep_running is negligible here. */
    while (gb_keep_running(st)) {
        int64_t sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += a[i];
        gb_do_not_optimize(&sum);
    }

    gb_set_items_processed(st, gb_state_iterations(st) * n);
    gb_counter(st, "n", (double)n);
    free(a);
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"n"};
    static const int64_t sizes[] = {1000, 100000};

    gb_bench *b = gb_register("shim/noop", bm_noop, NULL);
    gb_unit_ns(b);

    b = gb_register("shim/sum_array", bm_sum_array, NULL);
    gb_arg_names(b, names, 1);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        gb_args(b, &sizes[i], 1);
    gb_unit_ns(b);

    return gb_main(argc, argv);
}
