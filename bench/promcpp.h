/* SPDX-License-Identifier: MIT */
/*
 * bench/promcpp.h - a C interface to prometheus-cpp's Histogram (Debian's
 * prometheus-cpp-dev), the baseline of update/pcw_histogram_observe. The
 * loop over the values runs inside the C++ (bench/promcpp.cc), so the
 * figure holds Histogram::Observe and nothing of the C-to-C++ crossing.
 */
#ifndef PCW_BENCH_PROMCPP_H
#define PCW_BENCH_PROMCPP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct promcpp_histogram promcpp_histogram;

/* Was the suite built with prometheus-cpp? (If not, the functions below
 * do nothing and update/promcpp_histogram_observe is not registered.) */
int promcpp_available(void);

/* A histogram with these n ascending upper bounds (plus prometheus-cpp's
 * +Inf bucket). Never NULL (allocation failure aborts). */
promcpp_histogram *promcpp_histogram_new(const double *bounds, size_t n);
void promcpp_histogram_free(promcpp_histogram *h);
/* Histogram::Observe(v[i]) for i < n. */
void promcpp_histogram_observe_n(promcpp_histogram *h, const double *v, size_t n);
/* The histogram's count (sample_count), to check the loop ran. */
double promcpp_histogram_count(promcpp_histogram *h);

#ifdef __cplusplus
}
#endif
#endif
