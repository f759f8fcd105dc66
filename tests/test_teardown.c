/* SPDX-License-Identifier: MIT */
/*
 * tests/test_teardown.c - teardown mistakes do not corrupt memory (issue
 * 12): closing an instance twice, or after pcw_unregister or
 * pcw_provider_close, unregistering twice or after the provider closed,
 * closing the provider twice, a handle of the wrong kind, a made-up
 * handle. Each is refused with PCW_E_INVALID_HANDLE and touches nothing:
 * what consumers see afterwards is checked, and `make check` runs this
 * file under ASan+UBSan, which would report any use after free.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <pthread.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

static pcw_provider *prov;
static pcw_registration *reg;
static const pcw_counter_desc counters[] = {
    {.id = 1, .type = PERF_COUNTER_LARGE_RAWCOUNT, .name = "Value"}};
static const pcw_registration_info info = {.version = PCW_VERSION_1,
                                           .name = "Teardown",
                                           .instance_type = PCW_MULTI_INSTANCE,
                                           .counter_count = 1,
                                           .counters = counters};

static void setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
    cr_assert_eq(pcw_register(&reg, prov, &info), PCW_OK);
}

static void teardown(void)
{
    pcw_provider_close(prov); /* PCW_E_INVALID_HANDLE if a test closed it: fine */
    tu_root_teardown();
}

TestSuite(teardown, .init = setup, .fini = teardown, .timeout = 30);

static pcw_instance *create(const char *name, uint64_t value)
{
    pcw_instance *in;
    pcw_data d = {&value, sizeof value};
    cr_assert_eq(pcw_create_instance(&in, reg, name, 1, &d), PCW_OK, "%s", name);
    return in;
}

/* The instances a consumer sees in our segment, as "name=value,...". */
static void seen(char *out, size_t cap)
{
    pcw_segment *seg;
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Teardown");
    cr_assert_not_null(cs);
    cr_assert_eq(pcw_segment_read(seg, cs, &snap, 0), PCW_OK);
    size_t n = 0;
    out[0] = 0;
    for (size_t i = 0; i < snap.count; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s=%llu", i ? "," : "",
                              pcw_snapshot_name(&snap, i),
                              (unsigned long long)pcw_snapshot_value(&snap, i, &cs->counters[0]));
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
}

Test(teardown, close_instance_twice)
{
    pcw_instance *a = create("a", 1);
    cr_assert_eq(pcw_close_instance(a), PCW_OK);
    cr_assert_eq(pcw_close_instance(a), PCW_E_INVALID_HANDLE);
    /* A new instance may take the old one's handle entry (and slot): the
     * stale handle must not reach it. */
    pcw_instance *b = create("b", 2);
    cr_assert_eq(pcw_close_instance(a), PCW_E_INVALID_HANDLE);
    char s[256];
    seen(s, sizeof s);
    cr_assert_str_eq(s, "b=2");
    cr_assert_eq(pcw_close_instance(b), PCW_OK);
}

Test(teardown, stale_instance_fast_paths)
{
    pcw_instance *a = create("a", 7);
    cr_assert_not_null(pcw_instance_block(a, 0));
    cr_assert_eq(pcw_instance_id(a), 0);
    cr_assert_eq(pcw_close_instance(a), PCW_OK);
    cr_assert_null(pcw_instance_block(a, 0));
    cr_assert_eq(pcw_instance_id(a), PCW_ANY_INSTANCE_ID);
    pcw_instance_write_begin(a); /* nothing to do, nothing touched */
    pcw_instance_write_end(a);
    pcw_instance *b = create("b", 8); /* reuses the entry and the slot */
    cr_assert_null(pcw_instance_block(a, 0));
    cr_assert_not_null(pcw_instance_block(b, 0));
}

Test(teardown, close_instance_after_unregister)
{
    pcw_instance *a = create("a", 1), *b = create("b", 2);
    cr_assert_eq(pcw_close_instance(a), PCW_OK);
    cr_assert_eq(pcw_unregister(reg), PCW_OK); /* closes b */
    cr_assert_eq(pcw_close_instance(b), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_close_instance(a), PCW_E_INVALID_HANDLE);
    cr_assert_null(pcw_instance_block(b, 0));
    /* The registration is gone too. */
    cr_assert_eq(pcw_create_instance(&a, reg, "c", 0, NULL), PCW_E_INVALID_HANDLE);
}

Test(teardown, unregister_twice)
{
    create("a", 1);
    cr_assert_eq(pcw_unregister(reg), PCW_OK);
    cr_assert_eq(pcw_unregister(reg), PCW_E_INVALID_HANDLE);
    /* Another registration made since is not hit by the stale handle. */
    pcw_registration *other;
    cr_assert_eq(pcw_register(&other, prov, &info), PCW_OK);
    cr_assert_eq(pcw_unregister(reg), PCW_E_INVALID_HANDLE);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    cr_assert_not_null(pcw_segment_find_counterset(seg, "Teardown"));
    pcw_segment_close(seg);
    cr_assert_eq(pcw_unregister(other), PCW_OK);
}

Test(teardown, after_provider_close)
{
    pcw_instance *a = create("a", 1), *b = create("b", 2);
    cr_assert_eq(pcw_close_instance(a), PCW_OK);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", pcw_provider_path(prov));
    cr_assert_eq(pcw_provider_close(prov), PCW_OK);
    cr_assert_neq(access(path, F_OK), 0, "segment removed");
    cr_assert_eq(pcw_close_instance(b), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_close_instance(a), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_unregister(reg), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_provider_close(prov), PCW_E_INVALID_HANDLE);
    cr_assert_null(pcw_provider_path(prov));
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_E_INVALID_HANDLE);
    cr_assert_null(r);
}

Test(teardown, provider_close_twice_with_another_open)
{
    pcw_provider *other;
    cr_assert_eq(pcw_provider_open(&other, NULL), PCW_OK);
    cr_assert_eq(pcw_provider_close(prov), PCW_OK);
    cr_assert_eq(pcw_provider_close(prov), PCW_E_INVALID_HANDLE);
    /* The other provider is untouched. */
    cr_assert_eq(access(pcw_provider_path(other), F_OK), 0);
    cr_assert_eq(pcw_provider_close(other), PCW_OK);
}

Test(teardown, wrong_kind_and_made_up_handles)
{
    pcw_instance *a = create("a", 1);
    cr_assert_eq(pcw_close_instance((pcw_instance *)reg), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_close_instance((pcw_instance *)prov), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_unregister((pcw_registration *)a), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_unregister((pcw_registration *)prov), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_provider_close((pcw_provider *)reg), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_provider_close((pcw_provider *)a), PCW_E_INVALID_HANDLE);
    /* Values that were never handles: any index, any generation. */
    const uintptr_t junk[] = {0xdeadbeefu,   0xffffffffu,       0xffffffff00000001u,
                              ~(uintptr_t)0, 0x12345678u << 16, 0x100000000u};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        cr_assert_eq(pcw_close_instance((pcw_instance *)junk[i]), PCW_E_INVALID_HANDLE);
        cr_assert_eq(pcw_unregister((pcw_registration *)junk[i]), PCW_E_INVALID_HANDLE);
        cr_assert_eq(pcw_provider_close((pcw_provider *)junk[i]), PCW_E_INVALID_HANDLE);
        cr_assert_null(pcw_instance_block((pcw_instance *)junk[i], 0));
    }
    /* NULL is a no-op, like free(NULL). */
    cr_assert_eq(pcw_close_instance(NULL), PCW_OK);
    cr_assert_eq(pcw_unregister(NULL), PCW_OK);
    cr_assert_eq(pcw_provider_close(NULL), PCW_OK);
    char s[64];
    seen(s, sizeof s);
    cr_assert_str_eq(s, "a=1", "nothing was closed by a wrong handle");
}

/* Two threads close the same instance at once: exactly one closes it. */
static pcw_instance *raced;
static int raced_rc[2];
static pthread_barrier_t race_start;

static void *close_raced(void *arg)
{
    int *rc = arg;
    pthread_barrier_wait(&race_start);
    *rc = pcw_close_instance(raced);
    return NULL;
}

Test(teardown, concurrent_double_close)
{
    for (int round = 0; round < 200; round++) {
        raced = create("raced", (uint64_t)round);
        pthread_t t[2];
        pthread_barrier_init(&race_start, NULL, 2);
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, close_raced, &raced_rc[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&race_start);
        cr_assert_eq((raced_rc[0] == PCW_OK) + (raced_rc[1] == PCW_OK), 1, "round %d: %d %d", round,
                     raced_rc[0], raced_rc[1]);
        cr_assert_eq(raced_rc[0] + raced_rc[1], PCW_E_INVALID_HANDLE);
    }
    char s[64];
    seen(s, sizeof s);
    cr_assert_str_eq(s, "");
}

/* The order the README gives, every step returning PCW_OK; then each step
 * again, refused. */
Test(teardown, documented_order)
{
    pcw_instance *a = create("a", 1);
    cr_assert_eq(pcw_close_instance(a), PCW_OK);
    cr_assert_eq(pcw_unregister(reg), PCW_OK);
    cr_assert_eq(pcw_provider_close(prov), PCW_OK);
    cr_assert_eq(pcw_close_instance(a), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_unregister(reg), PCW_E_INVALID_HANDLE);
    cr_assert_eq(pcw_provider_close(prov), PCW_E_INVALID_HANDLE);
}
