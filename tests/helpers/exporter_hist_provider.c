/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/exporter_hist_provider.c - a provider of histograms whose
 * observations the test chooses (tests/test_exporter_histogram.c), so that
 * the test knows their true quantiles.
 *
 *   exporter_hist_provider VALUES_FILE
 *
 * VALUES_FILE holds native-endian uint64 values (nanoseconds). It
 * registers the counterset "Hist Test" (multi-instance) with
 *   Requests  PERF_COUNTER_BULK_COUNT  observations so far
 *   Latency   histogram of nanoseconds (seconds exported), schema 3,
 *             2^-30 .. 2^12 s (336 buckets)
 *   Size      histogram of the values / 1000 as they are (unit one),
 *             schema 0, 2^0 .. 2^20
 * and creates the instance "api". Prints "ready <pid>", then serves one
 * command per stdin line:
 *   round   observe every value of the file once ("ok <observations so far>")
 *   poke latency|size WORD VALUE
 *           store VALUE in word WORD of that histogram, as a hostile or
 *           corrupt segment could hold it ("ok")
 *   quit
 * It exits 0 on "quit" or at the end of stdin.
 */
#define _GNU_SOURCE 1
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/histogram.h>
#include <pcw/provider.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

PCW_HISTOGRAM_TYPE(hist_latency, PCW_HIST_UNIT_NS, 3, -30, 12);
PCW_HISTOGRAM_TYPE(hist_size, PCW_HIST_UNIT_ONE, 0, 0, 20);

struct hist_block {
    uint64_t requests;
    hist_latency latency;
    hist_size size;
};

static const pcw_counter_desc counters[] = {
    PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct hist_block, requests),
    PCW_HISTOGRAM_COUNTER(2, "Latency", struct hist_block, latency, hist_latency),
    PCW_HISTOGRAM_COUNTER(3, "Size", struct hist_block, size, hist_size),
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: exporter_hist_provider VALUES_FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1024, n = 0;
    uint64_t *v = malloc(cap * sizeof *v);
    for (;;) {
        if (n == cap && !(v = realloc(v, (cap *= 2) * sizeof *v)))
            return 1;
        size_t got = fread(v + n, sizeof *v, cap - n, f);
        if (!got)
            break;
        n += got;
    }
    fclose(f);
    pcw_provider *prov;
    pcw_registration *reg;
    pcw_instance *inst;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Hist Test",
                                  .description = "Histograms for the exporter's tests.",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 3,
                                  .counters = counters};
    pcw_data d = {NULL, sizeof(struct hist_block)};
    int rc = pcw_provider_open(&prov, NULL);
    if (rc == PCW_OK)
        rc = pcw_register(&reg, prov, &info);
    if (rc == PCW_OK)
        rc = pcw_create_instance(&inst, reg, "api", 1, &d);
    if (rc != PCW_OK) {
        fprintf(stderr, "exporter_hist_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    struct hist_block *b = pcw_instance_block(inst, 0);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "quit", 4) == 0)
            break;
        if (strncmp(line, "round", 5) == 0) {
            for (size_t i = 0; i < n; i++) {
                hist_latency_observe(&b->latency, v[i]);
                hist_size_observe(&b->size, v[i] / 1000);
                __atomic_store_n(&b->requests, b->requests + 1, __ATOMIC_RELAXED);
            }
            printf("ok %llu\n", (unsigned long long)b->requests);
        } else if (strncmp(line, "poke ", 5) == 0) {
            char which[16];
            unsigned word;
            unsigned long long value;
            int lat = 0;
            if (sscanf(line + 5, "%15s %u %llu", which, &word, &value) == 3 &&
                ((lat = strcmp(which, "latency") == 0) || strcmp(which, "size") == 0) &&
                word < (lat ? sizeof b->latency : sizeof b->size) / 8) {
                uint64_t *w = lat ? b->latency.words : b->size.words;
                __atomic_store_n(&w[word], (uint64_t)value, __ATOMIC_RELAXED);
                printf("ok\n");
            } else {
                printf("err bad poke\n");
            }
        } else {
            printf("err unknown command\n");
        }
        fflush(stdout);
    }
    pcw_provider_close(prov);
    free(v);
    return 0;
}
