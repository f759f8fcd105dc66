/* SPDX-License-Identifier: MIT */
/*
 * tests/test_memory.c - segment memory after a mass close (issue 9): the
 * pages of chunks left without an instance go back to the system, and
 * re-creating the instances reuses the segment instead of doubling it.
 * Instances reused after the punch continue their slots' generations, so
 * readers still read them whole.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/stat.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

#define N 200000

TestSuite(memory, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* Bytes of memory the segment file holds (tmpfs pages). */
static uint64_t file_bytes(const char *path, uint64_t *size)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    if (size)
        *size = (uint64_t)st.st_size;
    return (uint64_t)st.st_blocks * 512;
}

Test(memory, mass_close_returns_pages_and_recreate_reuses_them)
{
    pcw_provider *p;
    cr_assert_eq(pcw_provider_open(&p, NULL), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "v";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Mass",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    static pcw_instance *in[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        uint64_t v = (uint64_t)i;
        pcw_data d = {&v, 8};
        snprintf(name, sizeof name, "instance-%d", i);
        cr_assert_eq(pcw_create_instance(&in[i], r, name, 1, &d), PCW_OK);
    }
    const char *path = pcw_provider_path(p);
    uint64_t size_full, full = file_bytes(path, &size_full);

    for (int i = 0; i < N; i++)
        pcw_close_instance(in[i]);
    uint64_t after_close = file_bytes(path, NULL);
    cr_assert_lt(after_close, full / 2,
                 "after closing every instance the segment holds %llu of %llu bytes",
                 (unsigned long long)after_close, (unsigned long long)full);

    /* A reader sees nothing live, and the segment checks out. */
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Mass");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 0);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);

    for (int i = 0; i < N; i++) {
        uint64_t v = 1000000 + (uint64_t)i;
        pcw_data d = {&v, 8};
        snprintf(name, sizeof name, "again-%d", i);
        cr_assert_eq(pcw_create_instance(&in[i], r, name, 1, &d), PCW_OK);
    }
    uint64_t size_again, again = file_bytes(path, &size_again);
    cr_assert_leq(size_again, size_full + size_full / 4 + (2u << 20),
                  "re-creating grew the file from %llu to %llu bytes",
                  (unsigned long long)size_full, (unsigned long long)size_again);
    cr_assert_leq(again, full + full / 4 + (2u << 20));
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, N);
    for (size_t k = 0; k < s.count; k++) {
        uint64_t v = pcw_snapshot_value(&s, k, &cs->counters[0]);
        snprintf(name, sizeof name, "again-%llu", (unsigned long long)(v - 1000000));
        cr_assert_str_eq(pcw_snapshot_name(&s, k), name);
    }
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    pcw_provider_close(p);
}
