/* SPDX-License-Identifier: MIT */
/*
 * tests/cxx/web_counters.cc - the second translation unit of the C++
 * provider: no PCW_PROVIDER_IMPLEMENTATION here. A static counter table
 * of PCW_COUNTER and PCW_COUNTER_EX entries (offsetof/sizeof, checked against the types at
 * compile time), a registration with designated initialisers where the
 * language has them (C++20), and updates with the inline fast paths,
 * a histogram's typed observer among them.
 */
#include "web.h"

/* The base of "Hit Ratio" is the counter right after it (Windows' rule):
 * nothing to set. */
static const pcw_counter_desc web_table[] = {
    PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, web_counters, requests),
    PCW_COUNTER(2, "Active", PERF_COUNTER_RAWCOUNT, web_counters, active),
    PCW_COUNTER(3, "Hit Ratio", PERF_RAW_FRACTION, web_counters, hits),
    PCW_COUNTER(4, "Hit Ratio Base", PERF_RAW_BASE, web_counters, lookups),
    /* With the manifest's aggregate, detail level and description. */
    PCW_COUNTER_EX(5, "Errors", PERF_COUNTER_RAWCOUNT, web_counters, errors, PCW_AGGREGATE_TOTAL,
                   PCW_DETAIL_ADVANCED, "Failed requests"),
    /* A histogram: its type and alignment checked at compile time (a
     * template in C++), aggregate PCW_AGGREGATE_TOTAL. */
    PCW_HISTOGRAM_COUNTER(6, "Latency", web_counters, latency, cxx_latency),
};

int web_register(pcw_provider *prov, pcw_registration **reg, char *why, size_t len)
{
#if __cplusplus >= 202002L
    /* Every member not named stays zero, without a warning
     * (-Wmissing-field-initializers is on). */
    const pcw_registration_info info = {
        .version = PCW_VERSION_1,
        .name = "Cxx Web",
        .instance_type = PCW_MULTI_INSTANCE,
        .counter_count = sizeof web_table / sizeof web_table[0],
        .counters = web_table,
    };
#else
    pcw_registration_info info = {};
    info.version = PCW_VERSION_1;
    info.name = "Cxx Web";
    info.instance_type = PCW_MULTI_INSTANCE;
    info.counter_count = sizeof web_table / sizeof web_table[0];
    info.counters = web_table;
#endif
    int rc = pcw_register(reg, prov, &info);
    if (rc != PCW_OK)
        pcw_register_error(rc, &info, why, len);
    return rc;
}

void web_serve(web_counters *w, uint32_t hit)
{
    pcw_u64_add(&w->requests, 1); /* this thread is its only writer */
    pcw_u32_set(&w->active, 1);
    pcw_u32_add(&w->hits, hit);
    pcw_u32_add(&w->lookups, 1);
    cxx_latency_observe(&w->latency, hit ? 1000 : 1000000);
}
