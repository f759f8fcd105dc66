/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/hist_provider.c - a provider of histograms with known
 * distributions, for every consumer's tests (the query layer, pcwstat,
 * pcwtop, pcw-exporter): N instances, each observing what its commands
 * say, driven over a pipe.
 *
 *   hist_provider [--set NAME] [--instances N] [--prefix P]
 *
 * Registers counterset NAME (default "Hist Test"), multiple instances with
 * a _Total (multipleAggregate), with these counters:
 *
 *   id name      type                     shape
 *   1  Requests  PERF_COUNTER_BULK_COUNT  (observations of Latency)
 *   2  Latency   PERF_PCW_HISTOGRAM       ns, schema 3, 2^-30 .. 2^12 s
 *                                         (336 buckets, 2,704 bytes)
 *   3  Size      PERF_PCW_HISTOGRAM       unit one, schema 0, 1 .. 2^40
 *
 * and N instances (default 1) named P0, P1, ... (P default "inst").
 * Prints "ready <pid>", then serves one command per stdin line, answering
 * each with one line ("ok", or "err <why>"):
 *
 *   observe INST HIST DIST COUNT SEED   COUNT observations drawn from DIST
 *                                       with a splitmix64 PRNG seeded SEED
 *                                       into histogram HIST (Latency: ns,
 *                                       Size: units) of instance INST (its
 *                                       index); Latency also counts Requests
 *   quit                                close and exit 0
 *
 * DIST and the PRNG are tests/hist_dist.h's, so a test computes the
 * same draws and knows the exact quantiles. Exits 0 on "quit", end of
 * stdin or SIGTERM.
 */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <pcw/histogram.h>
#include <pcw/provider.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../hist_dist.h"

PCW_HISTOGRAM_TYPE(hp_latency, PCW_HIST_UNIT_NS, 3, -30, 12);
PCW_HISTOGRAM_TYPE(hp_size, PCW_HIST_UNIT_ONE, 0, 0, 40);

typedef struct hp_data {
    uint64_t requests;
    hp_latency latency;
    hp_size size;
} hp_data;

static const pcw_counter_desc counters[] = {
    PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, hp_data, requests),
    PCW_HISTOGRAM_COUNTER(2, "Latency", hp_data, latency, hp_latency),
    PCW_HISTOGRAM_COUNTER(3, "Size", hp_data, size, hp_size),
};

#define MAX_INST 1024

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    const char *set = "Hist Test", *prefix = "inst";
    long n = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--set") == 0)
            set = argv[i + 1];
        else if (strcmp(argv[i], "--instances") == 0)
            n = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--prefix") == 0)
            prefix = argv[i + 1];
    }
    if (n < 1 || n > MAX_INST) {
        fprintf(stderr, "hist_provider: --instances 1..%d\n", MAX_INST);
        return 2;
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = set,
                                  .instance_type = PCW_MULTI_AGGREGATE,
                                  .counter_count = sizeof counters / sizeof counters[0],
                                  .counters = counters};
    pcw_provider *p;
    pcw_registration *r;
    int rc = pcw_provider_open(&p, NULL);
    if (rc == PCW_OK && (rc = pcw_register(&r, p, &info)) != PCW_OK)
        pcw_provider_close(p);
    if (rc != PCW_OK) {
        fprintf(stderr, "hist_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    static hp_data *data[MAX_INST];
    for (long i = 0; i < n; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s%ld", prefix, i);
        pcw_instance *in;
        pcw_data d = {NULL, sizeof(hp_data)};
        if ((rc = pcw_create_instance(&in, r, name, 1, &d)) != PCW_OK) {
            fprintf(stderr, "hist_provider: %s: %s\n", name, pcw_status_str(rc));
            return 1;
        }
        data[i] = pcw_instance_block(in, 0);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[512];
    while (!stop && fgets(line, sizeof line, stdin)) {
        char cmd[16], hist[16], dist[128];
        long inst;
        unsigned long long count, seed;
        int k =
            sscanf(line, "%15s %ld %15s %127s %llu %llu", cmd, &inst, hist, dist, &count, &seed);
        if (k >= 1 && strcmp(cmd, "quit") == 0)
            break;
        uint64_t v;
        hd_rng rg = {seed};
        if (k != 6 || strcmp(cmd, "observe") != 0 || inst < 0 || inst >= n ||
            (strcmp(hist, "Latency") != 0 && strcmp(hist, "Size") != 0) ||
            hd_draw(&rg, dist, &v) != 0) {
            printf("err bad command\n");
            fflush(stdout);
            continue;
        }
        rg.s = seed;
        hp_data *x = data[inst];
        for (unsigned long long i = 0; i < count; i++) {
            hd_draw(&rg, dist, &v);
            if (hist[0] == 'L') {
                hp_latency_observe(&x->latency, v);
                pcw_u64_set(&x->requests, x->requests + 1);
            } else {
                hp_size_observe(&x->size, v);
            }
        }
        printf("ok\n");
        fflush(stdout);
    }
    pcw_provider_close(p);
    return 0;
}
