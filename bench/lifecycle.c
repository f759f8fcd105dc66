/* SPDX-License-Identifier: MIT */
/*
 * bench/lifecycle.c - lifecycle/create_close/<readers>: pcw_create_instance
 * plus pcw_close_instance of one instance, in a provider that already holds
 * BASE instances, while <readers> consumer processes (0 or 2) snapshot the
 * same counterset (with names) as fast as they can.
 *
 * The provider is this process, pinned to BU_CPU_MAIN; the readers are
 * child processes pinned to BU_CPU_OTHER. Wall-clock time: a closed slot is
 * recycled after a grace period, which a create waits for once per
 * slot_count / 2 closes (docs/design.md, section 6); that wait is counted,
 * amortised over the creates.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>

#include "benchutil.h"
#include "pcw/provider.h"

#define BASE        1000
#define MAX_READERS 4

static void bm_create_close(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t nreaders = gb_range(st, 0);
    pcw_provider *p;
    pcw_provider_options o = {.name = "pcw_bench-lifecycle"};
    if (nreaders > MAX_READERS || pcw_provider_open(&p, &o) != PCW_OK) {
        gb_skip_with_error(st, "cannot open the provider");
        return;
    }
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "value";
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .name = "Bench",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = 1,
                                .counters = &c};
    pcw_registration *r;
    pcw_data d = {NULL, 8};
    char name[32];
    int ok = pcw_register(&r, p, &ri) == PCW_OK;
    for (int i = 0; ok && i < BASE; i++) {
        pcw_instance *in;
        snprintf(name, sizeof name, BU_NAME_FMT, i);
        ok = pcw_create_instance(&in, r, name, 1, &d) == PCW_OK;
    }
    bu_child readers[MAX_READERS];
    int64_t started = 0;
    for (; ok && started < nreaders; started++) {
        const char *args[] = {"reader", pcw_provider_path(p), NULL};
        ok = bu_spawn(&readers[started], BU_CPU_OTHER, args) == 0;
    }
    if (!ok) {
        gb_skip_with_error(st, "setup failed");
    } else {
        int bad = 0;
        while (gb_keep_running(st)) {
            pcw_instance *in;
            bad |= pcw_create_instance(&in, r, "the-new-one", 1, &d) != PCW_OK;
            pcw_close_instance(in);
        }
        if (bad)
            gb_skip_with_error(st, "create failed");
        gb_set_items_processed(st, gb_state_iterations(st));
        gb_counter(st, "readers", (double)nreaders);
        gb_counter(st, "instances", BASE);
    }
    for (int64_t i = 0; i < started; i++)
        bu_stop(&readers[i]);
    pcw_provider_close(p);
}

void bench_lifecycle_register(void)
{
    gb_bench *b = gb_register("lifecycle/create_close", bm_create_close, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){0}, 1);
    gb_args(b, (const int64_t[]){2}, 1);
}
