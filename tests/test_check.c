/* SPDX-License-Identifier: MIT */
/*
 * tests/test_check.c - pcw_segment_check (pcwdump --check) at scale: the
 * duplicate-name check covers every instance, however many, and its work
 * grows as n log n, so long names and many instances still finish.
 *
 * The provider runs in the test process; a duplicate (which the provider
 * API refuses to make) is made by rewriting an instance's name bytes in
 * the segment, found by searching for them.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

TestSuite(check, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

typedef struct env {
    pcw_provider *prov;
    pcw_registration *reg;
} env;

static void env_open(env *e)
{
    cr_assert_eq(pcw_provider_open(&e->prov, NULL), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Many",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    cr_assert_eq(pcw_register(&e->reg, e->prov, &info), PCW_OK);
}

static void create(env *e, const char *name)
{
    pcw_instance *in;
    pcw_data zeros = {NULL, 8};
    cr_assert_eq(pcw_create_instance(&in, e->reg, name, 1, &zeros), PCW_OK, "%s", name);
}

/* Overwrite the (unique) bytes `from` in the segment with `to`. */
static void rename_in_segment(env *e, const char *from, const char *to)
{
    size_t n = strlen(from);
    cr_assert_eq(strlen(to), n);
    /* White box: the provider's record behind the handle. */
    pcw__prov *p = (pcw__prov *)pcw__handle_get(e->prov, PCW__HANDLE_PROVIDER);
    unsigned char *base = p->base;
    uint64_t used = __atomic_load_n(&p->hdr->size, __ATOMIC_ACQUIRE);
    unsigned char *at = memmem(base, used, from, n);
    cr_assert(at, "name %s not found in the segment", from);
    cr_assert_null(memmem(at + 1, used - (size_t)(at + 1 - base), from, n), "not unique");
    memcpy(at, to, n);
}

static int check(env *e, char *why, size_t n)
{
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(e->prov)), PCW_OK);
    int rc = pcw_segment_check(seg, why, n);
    pcw_segment_close(seg);
    return rc;
}

/* On 9ef2b5d the pairwise loop stopped at the 20,000th instance: a
 * duplicate past it was reported OK (after 2 * 10^8 comparisons). */
Test(check, duplicate_past_twenty_thousand_instances)
{
    env e;
    env_open(&e);
    char name[32];
    for (int i = 0; i < 20001; i++) {
        snprintf(name, sizeof name, "i%06d", i);
        create(&e, name);
    }
    create(&e, "zzzzzzz");
    char why[256];
    cr_assert_eq(check(&e, why, sizeof why), PCW_OK, "%s", why);
    cr_assert_str_eq(why, "ok");
    /* Same name as instance 0, case-insensitively. */
    rename_in_segment(&e, "zzzzzzz", "I000000");
    cr_assert_eq(check(&e, why, sizeof why), PCW_E_CORRUPT);
    cr_assert(strstr(why, "two instances share a name"), "%s", why);
    pcw_provider_close(e.prov);
}

/* Long names with a long common prefix: the worst case for comparisons. */
Test(check, long_names)
{
    env e;
    env_open(&e);
    static char name[1025];
    memset(name, 'n', 1024);
    for (int i = 0; i < 4000; i++) {
        snprintf(name + 1016, 9, "%08d", i);
        create(&e, name);
    }
    char why[256];
    cr_assert_eq(check(&e, why, sizeof why), PCW_OK, "%s", why);
    snprintf(name + 1016, 9, "%08d", 3999);
    char dup[1025];
    memcpy(dup, name, sizeof dup);
    dup[0] = 'N';
    snprintf(dup + 1016, 9, "%08d", 0);
    rename_in_segment(&e, name, dup);
    cr_assert_eq(check(&e, why, sizeof why), PCW_E_CORRUPT);
    cr_assert(strstr(why, "two instances share a name"), "%s", why);
    pcw_provider_close(e.prov);
}
