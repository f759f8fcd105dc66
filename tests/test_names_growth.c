/* SPDX-License-Identifier: MIT */
/*
 * tests/test_names_growth.c - a registration's names table (liburcu's
 * cds_lfht) grows with its instances even when liburcu's lazy resize has
 * stopped for good.
 *
 * liburcu 0.13.2 (Debian 12) queues a lazy resize before it marks one as
 * initiated (__cds_lfht_resize_lazy_launch, src/rculfhash.c). A worker that
 * runs in between and has nothing to do - likely on the creating thread's
 * own CPU - clears the mark before it is set: the mark then stays set, and
 * no lazy resize is ever launched again. The chains grow with the
 * instances: creating 1,000,000 took minutes instead of a second in about
 * one try in ten with the creating thread held to one CPU
 * (docs/design.md, "Instance names").
 *
 * The test makes that loss certain. It stands in for liburcu-cds's
 * urcu_workqueue_queue_work (which the library calls through its PLT, so
 * the executable's definition is the one called) and drops every resize
 * it is given, as the race would leave it. pcw_create_instance must then
 * grow the table itself (cds_lfht_resize, which the test stands in for
 * too, to see the sizes, and forwards to liburcu's).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <dlfcn.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

struct urcu_workqueue;
struct urcu_work;

static int drop_resizes;            /* drop the lazy resizes queued */
static unsigned long dropped;       /* lazy resizes dropped */
static unsigned long largest_asked; /* the largest cds_lfht_resize size */

void urcu_workqueue_queue_work(struct urcu_workqueue *wq, struct urcu_work *work,
                               void (*func)(struct urcu_work *work));
void urcu_workqueue_queue_work(struct urcu_workqueue *wq, struct urcu_work *work,
                               void (*func)(struct urcu_work *work))
{
    if (__atomic_load_n(&drop_resizes, __ATOMIC_RELAXED)) {
        /* (The work is the first member of liburcu's malloc'ed
         * struct resize_work: freeing it frees that.) */
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
        free(work);
        return;
    }
    void (*real)(struct urcu_workqueue *, struct urcu_work *, void (*)(struct urcu_work *));
    *(void **)&real = dlsym(RTLD_NEXT, "urcu_workqueue_queue_work");
    real(wq, work, func);
}

void cds_lfht_resize(struct cds_lfht *ht, unsigned long new_size)
{
    unsigned long was = __atomic_load_n(&largest_asked, __ATOMIC_RELAXED);
    while (new_size > was && !__atomic_compare_exchange_n(&largest_asked, &was, new_size, 0,
                                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    void (*real)(struct cds_lfht *, unsigned long);
    *(void **)&real = dlsym(RTLD_NEXT, "cds_lfht_resize");
    real(ht, new_size);
}

TestSuite(names_growth, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* Every lazy resize lost from the first: the table is still made to grow
 * once the instances reach names_grow_from() (2^16 on up to 64 CPUs), to
 * at least their number; and every instance is still found by its name (a
 * duplicate is refused) and seen by a consumer. */
Test(names_growth, table_grows_when_lazy_resizes_are_lost)
{
    const uint64_t from = names_grow_from();
    cr_assert_geq(from, 1u << 16);
    const int N = (int)from + 100;
    __atomic_store_n(&drop_resizes, 1, __ATOMIC_RELAXED);
    pcw_provider *p;
    pcw_provider_options po = {.name = "names_growth"};
    cr_assert_eq(pcw_provider_open(&p, &po), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "Value", c.size = 8, c.offset = 0;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Growth",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    uint64_t v = 0;
    pcw_data d = {&v, sizeof v};
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "i%d", i);
        pcw_instance *in;
        cr_assert_eq(pcw_create_instance(&in, r, name, 1, &d), PCW_OK, "instance %d", i);
    }
    cr_assert_gt(dropped, 0, "no lazy resize was asked for, so none was lost");
    cr_assert_geq(largest_asked, from,
                  "with its lazy resizes lost, the table of %d names was not grown (largest "
                  "resize asked: %lu)",
                  N, largest_asked);
    pcw_instance *dup;
    cr_assert_eq(pcw_create_instance(&dup, r, "i12345", 1, &d), PCW_E_DUPLICATE_NAME);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(p)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Growth");
    cr_assert_not_null(cs);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, (size_t)N);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    /* (Before the close: destroying the table queues a flush that must
     * run.) */
    __atomic_store_n(&drop_resizes, 0, __ATOMIC_RELAXED);
    pcw_provider_close(p);
}
