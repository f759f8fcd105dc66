/* SPDX-License-Identifier: MIT */
/*
 * tests/test_name_index.c - pcw_name_index (lib/consumer/index.c): finding a
 * snapshot's instances by name, case-insensitively; names that are absent,
 * duplicated, empty or malformed; snapshots the caller got wrong; and an
 * index over a real segment read.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h" /* lib/consumer's: a snapshot's private part */
#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

/* Append a sample to a snapshot built by hand: the name with its NUL, as a
 * read does. */
static void hand_add(pcw_snapshot *s, const char *name)
{
    pcw__snapshot_priv *p = pcw__snap(s); /* the part a read keeps to itself */
    size_t len = strlen(name);
    if (s->count == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        s->ids = realloc(s->ids, p->cap * sizeof *s->ids);
        p->name_off_buf = realloc(p->name_off_buf, p->cap * sizeof *p->name_off_buf);
        p->name_len_buf = realloc(p->name_len_buf, p->cap * sizeof *p->name_len_buf);
        cr_assert(s->ids && p->name_off_buf && p->name_len_buf);
        s->name_off = p->name_off_buf, s->name_len = p->name_len_buf;
    }
    if (p->names_len + len + 1 > p->names_cap) {
        p->names_cap = (p->names_len + len + 1) * 2;
        s->names = realloc(s->names, p->names_cap);
        cr_assert_not_null(s->names);
    }
    size_t x = s->count++;
    s->ids[x] = (uint32_t)x;
    s->name_off[x] = p->names_len;
    s->name_len[x] = (uint32_t)len;
    memcpy(s->names + p->names_len, name, len + 1);
    p->names_len += len + 1;
}

static int find(const pcw_name_index *ix, const char *name, size_t *at)
{
    return pcw_name_index_find(ix, name, strlen(name), at);
}

Test(name_index, finds_every_name_and_only_those)
{
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    char name[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "disk-%04d", i);
        hand_add(&s, name);
    }
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    for (int i = 0; i < 5000; i++) {
        size_t at = (size_t)-1;
        snprintf(name, sizeof name, "disk-%04d", i);
        cr_assert_eq(find(ix, name, &at), PCW_OK, "%s", name);
        cr_assert_eq(at, (size_t)i);
    }
    size_t at = 77;
    cr_assert_eq(find(ix, "disk-5000", &at), PCW_E_NOT_FOUND);
    cr_assert_eq(find(ix, "disk-000", &at), PCW_E_NOT_FOUND);   /* a prefix */
    cr_assert_eq(find(ix, "disk-00000", &at), PCW_E_NOT_FOUND); /* longer */
    cr_assert_eq(find(ix, "", &at), PCW_E_NOT_FOUND);
    cr_assert_eq(at, 77, "a miss leaves *sample alone");
    /* len bounds the name: "disk-0001" found by its first 9 bytes. */
    cr_assert_eq(pcw_name_index_find(ix, "disk-0001xyz", 9, &at), PCW_OK);
    cr_assert_eq(at, 1);
    pcw_name_index_free(ix);
    pcw_snapshot_free(&s);
}

Test(name_index, case_insensitive_like_the_provider)
{
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    hand_add(&s, "Eth0");
    hand_add(&s, "\xC3\x89t\xC3\xA9");                /* Été */
    hand_add(&s, "\xD0\x94\xD0\xB8\xD1\x81\xD0\xBA"); /* Диск */
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    size_t at;
    cr_assert_eq(find(ix, "ETH0", &at), PCW_OK);
    cr_assert_eq(at, 0);
    cr_assert_eq(find(ix, "eth0", &at), PCW_OK);
    cr_assert_eq(find(ix, "\xC3\xA9T\xC3\x89", &at), PCW_OK); /* éTÉ */
    cr_assert_eq(at, 1);
    cr_assert_eq(find(ix, "\xD0\xB4\xD0\x98\xD0\xA1\xD0\x9A", &at), PCW_OK); /* дИСК */
    cr_assert_eq(at, 2);
    cr_assert_eq(find(ix, "eth1", &at), PCW_E_NOT_FOUND);
    /* Malformed UTF-8 never matches (and never crashes). */
    cr_assert_eq(pcw_name_index_find(ix, "Eth\xC3", 4, &at), PCW_E_NOT_FOUND);
    cr_assert_eq(pcw_name_index_find(ix, "\xFF\xFE", 2, &at), PCW_E_NOT_FOUND);
    pcw_name_index_free(ix);
    pcw_snapshot_free(&s);
}

Test(name_index, duplicate_names_keep_the_first_sample)
{
    /* A merged read (pcw_consumer_read) may hold one name from several
     * providers. */
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    hand_add(&s, "a");
    hand_add(&s, "shared");
    hand_add(&s, "SHARED");
    hand_add(&s, "b");
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    size_t at;
    cr_assert_eq(find(ix, "Shared", &at), PCW_OK);
    cr_assert_eq(at, 1);
    cr_assert_eq(find(ix, "b", &at), PCW_OK);
    cr_assert_eq(at, 3);
    pcw_name_index_free(ix);
    pcw_snapshot_free(&s);
}

Test(name_index, empty_snapshot_and_empty_names)
{
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_name_index *ix;
    size_t at;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    cr_assert_eq(find(ix, "x", &at), PCW_E_NOT_FOUND);
    cr_assert_eq(pcw_name_index_find(ix, NULL, 0, &at), PCW_E_NOT_FOUND);
    pcw_name_index_free(ix);
    /* A single-instance counterset's one instance has the empty name. */
    hand_add(&s, "");
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    cr_assert_eq(pcw_name_index_find(ix, NULL, 0, &at), PCW_OK);
    cr_assert_eq(at, 0);
    cr_assert_eq(find(ix, "", &at), PCW_OK);
    pcw_name_index_free(ix);
    pcw_snapshot_free(&s);
}

Test(name_index, rejects_bad_arguments_and_bad_snapshots)
{
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_name_index *ix = (pcw_name_index *)&s;
    size_t at;
    cr_assert_eq(pcw_name_index_build(NULL, &s), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_name_index_build(&ix, NULL), PCW_E_INVALID_PARAMETER);
    cr_assert_null(ix, "*out is cleared on failure");
    hand_add(&s, "fine");
    hand_add(&s, "broken");
    /* A name reaching past the name buffer: refused, not read. */
    s.name_off[1] = pcw__snap(&s)->names_len - 2;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_E_INVALID_PARAMETER);
    s.name_off[1] = 5;
    s.name_len[1] = 5000; /* over PCW_MAX_INSTANCE_NAME_BYTES */
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_E_INVALID_PARAMETER);
    s.name_len[1] = 6;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    cr_assert_eq(pcw_name_index_find(NULL, "fine", 4, &at), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_name_index_find(ix, "fine", 4, NULL), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_name_index_find(ix, NULL, 3, &at), PCW_E_INVALID_PARAMETER);
    pcw_name_index_free(ix);
    pcw_name_index_free(NULL);
    pcw_snapshot_free(&s);
}

/* End to end: a provider's instances read from its segment, with names. */
Test(name_index, over_a_segment_read, .init = tu_root_setup, .fini = tu_root_teardown)
{
    pcw_provider *p;
    cr_assert_eq(pcw_provider_open(&p, NULL), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "v";
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .name = "Index Test",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = 1,
                                .counters = &c};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, p, &ri), PCW_OK);
    enum { N = 3000 };
    static pcw_instance *inst[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        uint64_t v = (uint64_t)i * 7;
        pcw_data d = {&v, 8};
        snprintf(name, sizeof name, "Worker %d", i);
        cr_assert_eq(pcw_create_instance(&inst[i], r, name, 1, &d), PCW_OK);
    }
    /* Close every third one: the index sees only live instances. */
    for (int i = 0; i < N; i += 3)
        pcw_close_instance(inst[i]);

    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(p)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "index test");
    cr_assert_not_null(cs);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, N - N / 3);
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    for (int i = 0; i < N; i++) {
        size_t at;
        snprintf(name, sizeof name, "WORKER %d", i);
        int rc = find(ix, name, &at);
        if (i % 3 == 0) {
            cr_assert_eq(rc, PCW_E_NOT_FOUND, "%s was closed", name);
            continue;
        }
        cr_assert_eq(rc, PCW_OK, "%s", name);
        cr_assert_eq(pcw_snapshot_id(&s, at), pcw_instance_id(inst[i]));
        cr_assert_eq(pcw_snapshot_value(&s, at, &cs->counters[0]), (uint64_t)i * 7);
    }
    pcw_name_index_free(ix);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    pcw_provider_close(p);
}

/* Names a hostile segment made to collide (the test hook gives every name
 * the same hash): up to MAX_PROBE (1,024, index.c) of them are still found,
 * each at its own row, the first of a duplicate keeps it, and a miss ends
 * after at most that many entries; more of them and the build fails with a
 * status instead of making every lookup compare them all. */
static uint64_t same_hash(const char *name, size_t len)
{
    (void)name, (void)len;
    return 0x5a5a5a5a12345678ull;
}

Test(name_index, colliding_names_are_found_within_the_bound)
{
    pcw__index_test_hash = same_hash;
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "hostile-%d", i);
        hand_add(&s, name);
    }
    hand_add(&s, "HOSTILE-7"); /* a duplicate, in another case */
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    for (int i = 0; i < 1000; i++) {
        size_t at = (size_t)-1;
        snprintf(name, sizeof name, "Hostile-%d", i);
        cr_assert_eq(find(ix, name, &at), PCW_OK, "%s", name);
        cr_assert_eq(at, (size_t)i);
    }
    size_t at = 5;
    cr_assert_eq(find(ix, "hostile-7", &at), PCW_OK);
    cr_assert_eq(at, 7, "the first row keeps a duplicated name");
    at = 5;
    cr_assert_eq(find(ix, "hostile-1000", &at), PCW_E_NOT_FOUND);
    cr_assert_eq(at, 5);
    pcw_name_index_free(ix);
    pcw_snapshot_free(&s);
}

Test(name_index, too_many_colliding_names_fail_the_build)
{
    pcw__index_test_hash = same_hash;
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    char name[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(name, sizeof name, "hostile-%d", i);
        hand_add(&s, name);
    }
    pcw_name_index *ix = (pcw_name_index *)&s; /* set to NULL on failure */
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_E_INTEGER_OVERFLOW);
    cr_assert_null(ix);
    pcw_snapshot_free(&s);
}
