/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/callback_provider.c - a provider process with one callback
 * counterset, for the control-channel tests (tests/test_callback.c).
 *
 *   callback_provider PREFIX BASE_ID SLEEP_MS [MODE]
 *
 * Registers "Callback Test" (multi-instance; counters A = u64 at 0, B = u64
 * at 8) whose callback adds PREFIX-0..PREFIX-2 with ids BASE_ID+i and, when
 * collecting, A = 100 * (i + 1) and B = the number of COLLECT_DATA calls
 * so far. Before answering a COLLECT_DATA it sleeps SLEEP_MS ms (in slices,
 * so that quitting never waits for it); MODE "first" sleeps on the first
 * collection only. Prints "ready <segment path>", then runs until its
 * stdin closes.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static const char *prefix;
static uint32_t base_id;
static long sleep_ms;
static int first_only;
static atomic_int quitting;
static atomic_int collects;

static void nap(long ms)
{
    for (long t = 0; t < ms && !atomic_load(&quitting); t += 10) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint64_t call = 0;
    if (type == PCW_CALLBACK_COLLECT_DATA) {
        call = (uint64_t)atomic_fetch_add(&collects, 1) + 1;
        if (!first_only || call == 1)
            nap(sleep_ms);
    }
    for (uint32_t i = 0; i < 3; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%u", prefix, i);
        uint64_t v[2] = {100 * (i + 1), call};
        pcw_data d = {v, sizeof v};
        int rc = type == PCW_CALLBACK_COLLECT_DATA
                     ? pcw_add_instance(info->buffer, name, base_id + i, 1, &d)
                     : pcw_add_instance(info->buffer, name, base_id + i, 0, NULL);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: callback_provider PREFIX BASE_ID SLEEP_MS [first]\n");
        return 2;
    }
    prefix = argv[1];
    base_id = (uint32_t)strtoul(argv[2], NULL, 10);
    sleep_ms = strtol(argv[3], NULL, 10);
    first_only = argc > 4 && strcmp(argv[4], "first") == 0;

    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "A", c[0].offset = 0;
    c[1].id = 2, c[1].name = "B", c[1].offset = 8;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Callback Test",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 2,
                                  .counters = c,
                                  .callback = callback};
    pcw_provider *p;
    pcw_registration *r;
    int rc = pcw_provider_open(&p, NULL);
    if (rc == PCW_OK && (rc = pcw_register(&r, p, &info)) != PCW_OK)
        pcw_provider_close(p);
    if (rc != PCW_OK) {
        fprintf(stderr, "callback_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    printf("ready %s\n", pcw_provider_path(p));
    fflush(stdout);
    char buf[256];
    while (fgets(buf, sizeof buf, stdin))
        ;
    atomic_store(&quitting, 1);
    pcw_unregister(r);
    pcw_provider_close(p);
    return 0;
}
