/* SPDX-License-Identifier: MIT */
/*
 * tests/history_v2.h - the values of tests/data/format2.pcwlog, a log
 * written by the format 2 writer (pcw before format 3, commit afa2855):
 * 4 series (a rate, a gauge, a computed _Total, a histogram), 25 samples
 * in blocks of 10, an identity change at sample 12, the gauge without an
 * instance at samples 5..7. tests/test_history.c reads the file with
 * today's reader and compares it with these.
 */
#ifndef PCW_TESTS_HISTORY_V2_H
#define PCW_TESTS_HISTORY_V2_H

#include <stdint.h>
#include <string.h>

#include <pcw/histogram.h>

#include "../lib/history/history.h"

#define V2_SAMPLES 25
#define V2_SERIES  4
#define V2_SHAPE   PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12)

static const char *const v2_paths[V2_SERIES] = {"\\\\v2\\Old(a)\\Rate", "\\\\v2\\Old(a)\\Gauge",
                                                "\\\\v2\\Old(_Total)\\Rate",
                                                "\\\\v2\\Old(a)\\Latency:p99"};

static inline pcw__hist_series v2_ident(int series, int sample)
{
    pcw__hist_series s = {.type = series == 1   ? PERF_COUNTER_LARGE_RAWCOUNT
                                  : series == 3 ? PERF_PCW_HISTOGRAM
                                                : PERF_COUNTER_BULK_COUNT,
                          .provider_id = sample < 12 ? 7u : 8u,
                          .instance_id = 1,
                          .pid = sample < 12 ? 100 : 200};
    if (series == 3) {
        s.hshape = V2_SHAPE;
        s.hstat.kind = PCW_HSTAT_QUANTILE;
        s.hstat.q = 0.99;
    }
    return s;
}

/* Sample k's value of a series; words: room for 2 + the shape's buckets. */
static inline pcw__hist_value v2_value(int series, int k, uint64_t *words)
{
    pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID}};
    uint64_t t = (uint64_t)(k + 1) * 1000000000u;
    if (series == 1 && k >= 5 && k <= 7) {
        v.raw.status = PCW_CSTATUS_NO_INSTANCE;
        return v;
    }
    if (series == 2) {
        v.computed = 1.5 * k;
        return v;
    }
    v.raw.first = series == 0 ? (uint64_t)k * k * 1000 : 40u + (uint64_t)(k % 3);
    v.raw.second = series == 0 ? t : 0;
    v.raw.multi = 1;
    v.raw.freq = 1000000000u;
    v.raw.time_ns = t;
    if (series == 3) {
        uint32_t n = 2 + pcw_hist_nbuckets(V2_SHAPE);
        memset(words, 0, n * sizeof *words);
        words[0] = (uint64_t)k * 12345;
        words[1] = (uint64_t)k;
        words[2 + (unsigned)k % 5] = (uint64_t)k * 3;
        v.hwords = words;
        v.hn = n;
    }
    return v;
}

#endif /* PCW_TESTS_HISTORY_V2_H */
