// SPDX-License-Identifier: MIT
// bench/promcpp.cc - prometheus-cpp's Histogram behind bench/promcpp.h;
// without it (-DBENCH_HAVE_PROMCPP=0, bench/bench.mk's probe) only
// promcpp_available(), which says so.
#include "promcpp.h"

#if BENCH_HAVE_PROMCPP
#include <prometheus/histogram.h>

int promcpp_available(void)
{
    return 1;
}

struct promcpp_histogram {
    prometheus::Histogram h;
    explicit promcpp_histogram(const prometheus::Histogram::BucketBoundaries &b) : h(b) {}
};

promcpp_histogram *promcpp_histogram_new(const double *bounds, size_t n)
{
    return new promcpp_histogram(prometheus::Histogram::BucketBoundaries(bounds, bounds + n));
}

void promcpp_histogram_free(promcpp_histogram *h)
{
    delete h;
}

void promcpp_histogram_observe_n(promcpp_histogram *h, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h->h.Observe(v[i]);
}

double promcpp_histogram_count(promcpp_histogram *h)
{
    return static_cast<double>(h->h.Collect().histogram.sample_count);
}

#else

int promcpp_available(void)
{
    return 0;
}
promcpp_histogram *promcpp_histogram_new(const double *, size_t)
{
    return nullptr;
}
void promcpp_histogram_free(promcpp_histogram *) {}
void promcpp_histogram_observe_n(promcpp_histogram *, const double *, size_t) {}
double promcpp_histogram_count(promcpp_histogram *)
{
    return 0;
}

#endif
