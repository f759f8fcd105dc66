/* SPDX-License-Identifier: MIT */
/*
 * examples/instance_churn.c - many instances coming and going.
 *
 * Keeps a window of WINDOW live instances of the counterset "Churn" and,
 * ROUNDS times, closes the oldest and creates a new one, updating every
 * live instance's counters as it goes. Shows that instance ids are reused
 * only after their instance closed, and that the segment stops growing once
 * closed slots and names are recycled.
 *
 * Usage: instance_churn [WINDOW [ROUNDS]]   (defaults 1000, 100000)
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <stdlib.h>

typedef struct churn_values {
    uint64_t serial;  /* which instance this is: never repeats */
    uint64_t updates; /* how often it was updated */
} churn_values;

static const pcw_counter_desc counters[] = {
    PCW_COUNTER(1, "Serial", PERF_COUNTER_LARGE_RAWCOUNT, churn_values, serial),
    PCW_COUNTER(2, "Updates", PERF_COUNTER_BULK_COUNT, churn_values, updates),
};
static const pcw_registration_info info = {.version = PCW_VERSION_1,
                                           .name = "Churn",
                                           .description =
                                               "Instances created and closed continuously",
                                           .instance_type = PCW_MULTI_INSTANCE,
                                           .counter_count = 2,
                                           .counters = counters};

int main(int argc, char **argv)
{
    long window = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 100000;
    if (window < 1 || rounds < 0) {
        fprintf(stderr, "usage: instance_churn [WINDOW [ROUNDS]]\n");
        return 2;
    }
    pcw_provider *prov;
    pcw_registration *reg;
    char why[256];
    int rc = pcw_provider_open(&prov, NULL);
    if (rc != PCW_OK) {
        fprintf(stderr, "instance_churn: %s\n", pcw_provider_open_error(rc, NULL, why, sizeof why));
        return 1;
    }
    if ((rc = pcw_register(&reg, prov, &info)) != PCW_OK) {
        fprintf(stderr, "instance_churn: %s\n", pcw_register_error(rc, &info, why, sizeof why));
        pcw_provider_close(prov); /* removes the segment */
        return 1;
    }
    pcw_instance **live = calloc((size_t)window, sizeof *live);
    if (!live)
        return 1;
    uint64_t serial = 0;
    char name[32];
    for (long r = 0; r < rounds + window; r++) {
        long k = r % window;
        if (live[k])
            pcw_close_instance(live[k]);
        snprintf(name, sizeof name, "churn %llu", (unsigned long long)serial);
        churn_values init = {serial++, 0};
        pcw_data d = {&init, sizeof init};
        if ((rc = pcw_create_instance(&live[k], reg, name, 1, &d)) != PCW_OK) {
            fprintf(stderr, "instance_churn: create \"%s\": %s\n", name, pcw_status_str(rc));
            pcw_provider_close(prov);
            return 1;
        }
        churn_values *v = pcw_instance_block(live[k], 0);
        pcw_u64_add(&v->updates, 1);
    }
    struct stat st;
    stat(pcw_provider_path(prov), &st);
    printf("instance_churn: %llu instances created, %ld live, segment file %lld bytes\n",
           (unsigned long long)serial, window, (long long)st.st_size);
    pcw_unregister(reg);      /* closes the live ones */
    pcw_provider_close(prov); /* removes the segment */
    free(live);
    return 0;
}
