// SPDX-License-Identifier: MIT
// bench/promcpp.cc - prometheus-cpp's Histogram behind bench/promcpp.h.
#include "promcpp.h"

#include <prometheus/histogram.h>

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
