/* SPDX-License-Identifier: MIT */
/*
 * tests/cxx/web.h - the C++ provider test (issue 12): a provider in two
 * translation units, built as C++17 and C++20 with g++ and clang++. This
 * header is what both share; web_counters.cc registers the counterset from
 * a static table, provider_main.cc holds the implementation and main().
 * scripts/install-test.sh builds the same files from the installed headers.
 */
#ifndef PCW_TESTS_CXX_WEB_H
#define PCW_TESTS_CXX_WEB_H

#include <pcw/provider.h>

#include <stdint.h>

/* A histogram type (pcw/histogram.h) in C++: nanoseconds, schema 3,
 * 1 ns .. 68 min (336 buckets); its typed observers are static inline, so
 * both translation units may include this. */
PCW_HISTOGRAM_TYPE(cxx_latency, PCW_HIST_UNIT_NS, 3, -30, 12);

struct web_counters {
    uint64_t requests;   /* PERF_COUNTER_BULK_COUNT */
    cxx_latency latency; /* PERF_PCW_HISTOGRAM */
    uint32_t active;     /* PERF_COUNTER_RAWCOUNT */
    uint32_t hits;       /* PERF_RAW_FRACTION, over lookups */
    uint32_t lookups;    /* PERF_RAW_BASE */
    uint32_t errors;     /* PERF_COUNTER_RAWCOUNT (and no padding: the block is
                            exactly what the counters cover) */
};

/* Register "Cxx Web" in prov (web_counters.cc). On failure, why holds
 * pcw_register_error's sentence. */
int web_register(pcw_provider *prov, pcw_registration **reg, char *why, size_t len);

/* One update of every counter, through the block pointer, from a
 * translation unit without the implementation (web_counters.cc): a hit
 * takes 1 us, a miss 1 ms (observed into the latency histogram). */
void web_serve(web_counters *w, uint32_t hit);

#endif
