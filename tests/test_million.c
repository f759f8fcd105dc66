/* SPDX-License-Identifier: MIT */
/*
 * test_million.c - a million instances: the segment has no fixed capacity.
 *
 * A reader opens the segment while it is small; the provider then grows it
 * to 1,000,000 live instances. The same reader, without reopening, must see
 * every one of them with its own name and value (it remaps as the segment
 * grows), find any of them by name, and stay consistent after half close.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

#define N 1000000u

Test(million, one_million_instances_grow_under_a_reader, .timeout = 240)
{
    tu_root_setup();
    pcw_provider *prov;
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "Serial";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Million",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *reg;
    cr_assert_eq(pcw_register(&reg, prov, &info), PCW_OK);

    /* The reader maps the segment while it holds no instance. */
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "million");
    cr_assert_not_null(cs);

    pcw_instance **in = malloc(N * sizeof *in);
    cr_assert_not_null(in);
    char name[32];
    for (uint32_t i = 0; i < N; i++) {
        uint64_t v = i;
        pcw_data d = {&v, sizeof v};
        snprintf(name, sizeof name, "i%u", i);
        int rc = pcw_create_instance(&in[i], reg, name, 1, &d);
        cr_assert_eq(rc, PCW_OK, "instance %u: %s", i, pcw_status_str(rc));
    }

    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &snap, 0), PCW_OK);
    cr_assert_eq(snap.count, N);
    unsigned char *seen = calloc(N, 1);
    cr_assert_not_null(seen);
    for (size_t k = 0; k < snap.count; k++) {
        size_t x = k;
        uint64_t v = pcw_snapshot_value(&snap, x, &cs->counters[0]);
        cr_assert_lt(v, N);
        snprintf(name, sizeof name, "i%llu", (unsigned long long)v);
        cr_assert_str_eq(pcw_snapshot_name(&snap, x), name, "value %llu under another name",
                         (unsigned long long)v);
        cr_assert_eq(seen[v], 0, "instance %llu read twice", (unsigned long long)v);
        seen[v] = 1;
    }

    /* Any of them by name, through the consumer's index. */
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &snap), PCW_OK);
    size_t at;
    cr_assert_eq(pcw_name_index_find(ix, "I999999", 7, &at), PCW_OK);
    cr_assert_eq(pcw_snapshot_value(&snap, at, &cs->counters[0]), 999999);
    cr_assert_eq(pcw_name_index_find(ix, "i1000000", 8, &at), PCW_E_NOT_FOUND);
    pcw_name_index_free(ix);

    /* Close every other one: the rest read back exactly. */
    for (uint32_t i = 0; i < N; i += 2)
        pcw_close_instance(in[i]);
    cr_assert_eq(pcw_segment_read(seg, cs, &snap, PCW_READ_NO_NAMES), PCW_OK);
    cr_assert_eq(snap.count, N / 2);
    for (size_t k = 0; k < snap.count; k++)
        cr_assert_eq(pcw_snapshot_value(&snap, k, &cs->counters[0]) % 2, 1);

    free(seen);
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    free(in);
    pcw_provider_close(prov); /* closes the other half */
    tu_root_teardown();
}
