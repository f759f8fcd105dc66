/* SPDX-License-Identifier: MIT */
/*
 * bench/histogram.h - the histogram the observe benchmarks update
 * (bench/histogram.c, and bench/histogram_lzcnt.c built with -mlzcnt).
 */
#ifndef PCW_BENCH_HISTOGRAM_H
#define PCW_BENCH_HISTOGRAM_H

#include <stdint.h>

#include "pcw/provider.h"

#define NVALUES 4096 /* a power of two; 32 KiB of values, 64 KiB with the seconds */

/* 1 ns .. about 1 h at schema 3: 336 buckets, 2,704 bytes. */
PCW_HISTOGRAM_TYPE(bench_latency, PCW_HIST_UNIT_NS, 3, -30, 12);

/* The fixed-seed latencies (nanoseconds), made by bench_hist_instance. */
extern uint64_t bench_lat_ns[NVALUES];
/* The histogram in its instance's block in the segment (NULL on failure). */
bench_latency *bench_hist_instance(void);
void bench_histogram_lzcnt_register(void);

#endif
