/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/hostile_provider.c - a provider whose every name is an
 * attack on the terminal of whoever looks at it (test_term_inject).
 *
 *   hostile_provider PROVIDER COUNTERSET COUNTER INSTANCE
 *
 * Opens a provider named PROVIDER and registers the multiple-instance
 * counterset COUNTERSET with two counters, COUNTER (PERF_COUNTER_RAWCOUNT,
 * value 7) and "Plain" (PERF_COUNTER_RAWCOUNT, 1), and creates instance
 * INSTANCE. The names are taken as given: valid UTF-8 that may hold ESC,
 * OSC, BEL and C1 controls, which the API accepts. Prints "ready <pid>",
 * then serves one command per stdin line, answering "ok":
 *   add    creates instance "INSTANCE late" (a match that appears mid-run)
 *   quit   closes the provider and exits 0 (also at end of stdin)
 */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <unistd.h>

typedef struct values {
    uint32_t value, plain;
} values;

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: hostile_provider PROVIDER COUNTERSET COUNTER INSTANCE\n");
        return 2;
    }
    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = argv[3], c[0].type = PERF_COUNTER_RAWCOUNT;
    c[0].offset = offsetof(values, value), c[0].size = 4;
    c[1].id = 2, c[1].name = "Plain", c[1].type = PERF_COUNTER_RAWCOUNT;
    c[1].offset = offsetof(values, plain), c[1].size = 4;
    pcw_registration_info info = {
        .version = PCW_VERSION_1,
        .name = argv[2],
        .description = "a hostile counterset",
        .guid = "{5f0e6a8e-2c1d-4b7a-9e3f-0d4c8b2a1f60}",
        .instance_type = PCW_MULTI_INSTANCE,
        .counter_count = 2,
        .counters = c,
    };
    pcw_provider *prov;
    pcw_registration *reg;
    pcw_provider_options opt = {.name = argv[1]};
    int rc = pcw_provider_open(&prov, &opt);
    if (rc != PCW_OK || (rc = pcw_register(&reg, prov, &info)) != PCW_OK) {
        fprintf(stderr, "hostile_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    values v = {7, 1};
    pcw_data d = {&v, sizeof v};
    pcw_instance *inst;
    if ((rc = pcw_create_instance(&inst, reg, argv[4], 1, &d)) != PCW_OK) {
        fprintf(stderr, "hostile_provider: instance: %s\n", pcw_status_str(rc));
        return 1;
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char buf[256], late[4200];
    while (fgets(buf, sizeof buf, stdin)) {
        if (strncmp(buf, "quit", 4) == 0)
            break;
        if (strncmp(buf, "add", 3) == 0) {
            snprintf(late, sizeof late, "%s late", argv[4]);
            rc = pcw_create_instance(&inst, reg, late, 1, &d);
        }
        printf(rc == PCW_OK ? "ok\n" : "error %d\n", rc);
        fflush(stdout);
    }
    pcw_provider_close(prov);
    return 0;
}
