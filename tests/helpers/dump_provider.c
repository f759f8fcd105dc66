/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/dump_provider.c - a provider for test_pcwdump.
 *
 *   dump_provider PROVIDER COUNTERSET [INSTANCE=COUNT,FLAGS ...]
 *
 * Opens a provider named PROVIDER, registers the multiple-instance
 * counterset COUNTERSET with four counters:
 *   1 "Count"     PERF_COUNTER_LARGE_RAWCOUNT, 8 bytes  (= COUNT)
 *   2 "Flags"     PERF_COUNTER_RAWCOUNT_HEX,   4 bytes  (= FLAGS)
 *   3 "Hits"      PERF_RAW_FRACTION, base 4, aggregate sum   (= COUNT / 2)
 *   4 "Hits Base" PERF_RAW_BASE, attribute noDisplay, detail advanced
 *                                                            (= COUNT)
 * creates the instances (names may hold anything the API accepts; the
 * value part follows the last '='), prints "ready <segment path>" and
 * waits for its stdin to close, then closes the provider and exits 0.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

typedef struct values {
    uint64_t count;
    uint32_t flags;
    uint32_t hits;
    uint32_t hits_base;
    uint32_t pad;
} values;

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: dump_provider PROVIDER COUNTERSET [NAME=COUNT,FLAGS...]\n");
        return 2;
    }
    pcw_counter_desc c[4] = {pcw_counter_desc_default(), pcw_counter_desc_default(),
                             pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "Count", c[0].type = PERF_COUNTER_LARGE_RAWCOUNT;
    c[0].offset = offsetof(values, count), c[0].size = 8;
    c[0].description = "How many";
    c[1].id = 2, c[1].name = "Flags", c[1].type = PERF_COUNTER_RAWCOUNT_HEX;
    c[1].offset = offsetof(values, flags), c[1].size = 4;
    c[2].id = 3, c[2].name = "Hits", c[2].type = PERF_RAW_FRACTION, c[2].base_ref = PCW_REF(4);
    c[2].offset = offsetof(values, hits), c[2].size = 4, c[2].aggregate = PCW_AGGREGATE_TOTAL;
    c[3].id = 4, c[3].name = "Hits Base", c[3].type = PERF_RAW_BASE;
    c[3].offset = offsetof(values, hits_base), c[3].size = 4;
    c[3].attributes = PCW_ATTR_NO_DISPLAY, c[3].detail_level = PCW_DETAIL_ADVANCED;
    pcw_registration_info info = {
        .version = PCW_VERSION_1,
        .name = argv[2],
        .description = "pcwdump test counterset",
        .guid = "{ab2e8dd5-6d3c-4a68-8b6b-4d2f3a1e0c11}",
        .instance_type = PCW_MULTI_INSTANCE,
        .counter_count = 4,
        .counters = c,
    };
    pcw_provider *prov;
    pcw_registration *reg;
    pcw_provider_options opt = {.name = argv[1]};
    int rc = pcw_provider_open(&prov, &opt);
    if (rc != PCW_OK || (rc = pcw_register(&reg, prov, &info)) != PCW_OK) {
        fprintf(stderr, "dump_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    for (int i = 3; i < argc; i++) {
        char *eq = strrchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "dump_provider: %s: no '='\n", argv[i]);
            return 2;
        }
        *eq = 0;
        values v = {0};
        char *end;
        v.count = strtoull(eq + 1, &end, 10);
        if (*end == ',')
            v.flags = (uint32_t)strtoul(end + 1, NULL, 0);
        v.hits = (uint32_t)(v.count / 2);
        v.hits_base = (uint32_t)v.count;
        pcw_data d = {&v, offsetof(values, pad)}; /* the registered block ends there */
        pcw_instance *inst;
        if ((rc = pcw_create_instance(&inst, reg, argv[i], 1, &d)) != PCW_OK) {
            fprintf(stderr, "dump_provider: instance %s: %s\n", argv[i], pcw_status_str(rc));
            return 1;
        }
    }
    printf("ready %s\n", pcw_provider_path(prov));
    fflush(stdout);
    char buf[256];
    while (fgets(buf, sizeof buf, stdin))
        ;
    pcw_provider_close(prov);
    return 0;
}
