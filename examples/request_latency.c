/* SPDX-License-Identifier: MIT */
/*
 * examples/request_latency.c - a latency histogram for the demo (make
 * demo): counterset "Demo Requests", two endpoints whose request latencies
 * follow known distributions, so that the quantiles a consumer reads
 * (pcwstat "\Demo Requests(*)\Latency": rate, mean, p50, p90, p99, p99.9,
 * max) can be checked by eye:
 *
 *   api      log-normal, median 2 ms (sigma 0.5), plus 1 % of requests
 *            around 40 ms (a slow dependency): p50 about 2 ms, p99 the tail
 *   static   log-normal, median 200 us (sigma 0.25)
 *
 * Each endpoint serves 1,000 requests a second, simulated: the latencies
 * come from a fixed-seed generator rather than from timing real work (a
 * real provider times its work with pcw_time_ns(): README, "Latency done
 * right"), and each is counted with the histogram's typed observer.
 *
 * Usage: request_latency [SECONDS]   (default: until SIGINT or SIGTERM)
 */
#define PCW_PROVIDER_IMPLEMENTATION /* this file compiles the provider */
#define _GNU_SOURCE                 1
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <pcw/provider.h>

/* Nanoseconds observed, seconds exported; 8 buckets per doubling (9 %
 * wide); 1 ns .. 68 min. */
PCW_HISTOGRAM_TYPE(demo_latency, PCW_HIST_UNIT_NS, 3, -30, 12);

struct demo_requests {
    uint64_t requests;
    demo_latency latency;
};

static const pcw_counter_desc counters[] = {
    PCW_COUNTER_EX(1, "Requests", PERF_COUNTER_BULK_COUNT, struct demo_requests, requests,
                   PCW_AGGREGATE_TOTAL, PCW_DETAIL_STANDARD, "Requests served"),
    PCW_HISTOGRAM_COUNTER_EX(2, "Latency", struct demo_requests, latency, demo_latency,
                             PCW_AGGREGATE_TOTAL, PCW_DETAIL_STANDARD,
                             "Seconds to serve a request"),
};

static const struct endpoint {
    const char *name;
    double median_ns, sigma, tail; /* tail: share of requests around 40 ms */
} endpoints[] = {{"api", 2e6, 0.5, 0.01}, {"static", 2e5, 0.25, 0}};
#define NENDPOINTS (sizeof endpoints / sizeof endpoints[0])

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* xorshift64*, and a uniform in (0, 1). */
static double uniform(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return ((double)((*s * 0x2545F4914F6CDD1Dull) >> 11) + 0.5) / 9007199254740992.0;
}

/* One request's latency in nanoseconds. */
static uint64_t latency_ns(const struct endpoint *e, uint64_t *s)
{
    double z = sqrt(-2 * log(uniform(s))) * cos(6.283185307179586 * uniform(s));
    double ns = uniform(s) < e->tail ? 4e7 * exp(0.2 * z) : e->median_ns * exp(e->sigma * z);
    return (uint64_t)ns;
}

int main(int argc, char **argv)
{
    long seconds = argc > 1 ? strtol(argv[1], NULL, 10) : -1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    pcw_provider *prov;
    pcw_provider_options opt = {.name = "request_latency"};
    char why[512];
    int rc = pcw_provider_open(&prov, &opt);
    if (rc != PCW_OK) {
        fprintf(stderr, "request_latency: cannot open provider: %s\n",
                pcw_provider_open_error(rc, &opt, why, sizeof why));
        return 1;
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Demo Requests",
                                  .description = "Simulated requests with known latencies",
                                  .instance_type = PCW_MULTI_AGGREGATE,
                                  .counter_count = sizeof counters / sizeof counters[0],
                                  .counters = counters};
    pcw_registration *reg;
    pcw_instance *inst[NENDPOINTS];
    struct demo_requests *block[NENDPOINTS];
    pcw_data zeros = {NULL, sizeof(struct demo_requests)};
    if ((rc = pcw_register(&reg, prov, &info)) != PCW_OK) {
        fprintf(stderr, "request_latency: cannot register: %s\n",
                pcw_register_error(rc, &info, why, sizeof why));
        pcw_provider_close(prov);
        return 1;
    }
    for (size_t i = 0; i < NENDPOINTS; i++) {
        if ((rc = pcw_create_instance(&inst[i], reg, endpoints[i].name, 1, &zeros)) != PCW_OK) {
            fprintf(stderr, "request_latency: cannot create \"%s\": %s\n", endpoints[i].name,
                    pcw_status_str(rc));
            pcw_provider_close(prov);
            return 1;
        }
        block[i] = pcw_instance_block(inst[i], 0);
    }
    printf("request_latency: publishing in %s\n", pcw_provider_path(prov));
    fflush(stdout);

    uint64_t seed = 0x9E3779B97F4A7C15ull;
    /* Every 10 ms, 10 requests per endpoint: 1,000 a second each. */
    for (long t = 0; !stop && (seconds < 0 || t < seconds * 100); t++) {
        for (size_t i = 0; i < NENDPOINTS; i++)
            for (int r = 0; r < 10; r++) {
                demo_latency_observe(&block[i]->latency, latency_ns(&endpoints[i], &seed));
                pcw_u64_add(&block[i]->requests, 1);
            }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < NENDPOINTS; i++)
        pcw_close_instance(inst[i]);
    pcw_unregister(reg);
    pcw_provider_close(prov);
    return 0;
}
