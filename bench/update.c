/*
 * bench/update.c - the provider's cost of one counter update.
 *
 *   update/raw_store   *p += 1 through a raw pointer into a MAP_SHARED page
 *   update/pcw_plain   the same through pcw's provider API as it is meant to
 *                      be used: the instance's block pointer from
 *                      pcw_instance_block() (or a generated X_<block>_of()),
 *                      taken once when the instance is created, then a plain
 *                      store per update into the segment
 *   update/raw_atomic  relaxed atomic add through the raw pointer
 *   update/pcw_atomic  pcw_u64_add() through that block pointer
 *   update/pcw_plain_fetch  (extra) the block pointer fetched again with
 *                      pcw_instance_block() on every update: what a provider
 *                      pays if it keeps only the pcw_instance
 *
 * gb_clobber_memory() after each update makes the compiler perform every
 * load and store (and, for the pcw variants, re-fetch the instance's block
 * pointer) each time, as code that updates a counter once per event does.
 * The provider is this process, as in real use; no reader is needed for the
 * provider's cost.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "benchutil.h"
#include "pcw/provider.h"

#define BATCH 1024

static uint64_t *raw_counter(void)
{
    static uint64_t *p;
    if (!p) {
        int fd = memfd_create("pcw-bench-raw", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, 4096) != 0)
            return NULL;
        void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED)
            return NULL;
        p = (uint64_t *)m + 8; /* same offset in its line as a slot's data */
    }
    return p;
}

/* One provider, one counterset, one instance, for the life of the process. */
static pcw_instance *pcw_counter_instance(void)
{
    static pcw_instance *inst;
    if (inst)
        return inst;
    pcw_provider *p;
    pcw_provider_options o = {.name = "pcw_bench-update"};
    if (pcw_provider_open(&p, &o) != PCW_OK)
        return NULL;
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "events";
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .name = "Bench Update",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = 1,
                                .counters = &c};
    pcw_registration *r;
    pcw_data d = {NULL, 8};
    if (pcw_register(&r, p, &ri) != PCW_OK || pcw_create_instance(&inst, r, "one", 1, &d) != 0)
        return NULL;
    return inst;
}

static void bm_raw_store(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    uint64_t *p = raw_counter();
    if (!p) {
        gb_skip_with_error(st, "cannot map shared memory");
        return;
    }
    int64_t k;
    while ((k = gb_keep_running_batch(st, BATCH)) > 0)
        for (int64_t i = 0; i < k; i++) {
            *p += 1;
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

/* Through the pointer the provider API handed out when the instance was
 * created: the update itself is the same plain store into the segment. */
static void bm_pcw_plain(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    pcw_instance *in = pcw_counter_instance();
    if (!in) {
        gb_skip_with_error(st, "cannot create the pcw instance");
        return;
    }
    uint64_t *c = (uint64_t *)pcw_instance_block(in, 0);
    int64_t k;
    while ((k = gb_keep_running_batch(st, BATCH)) > 0)
        for (int64_t i = 0; i < k; i++) {
            *c += 1;
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

/* Extra: the block pointer fetched anew for every update. */
static void bm_pcw_plain_fetch(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    pcw_instance *in = pcw_counter_instance();
    if (!in) {
        gb_skip_with_error(st, "cannot create the pcw instance");
        return;
    }
    int64_t k;
    while ((k = gb_keep_running_batch(st, BATCH)) > 0)
        for (int64_t i = 0; i < k; i++) {
            uint64_t *c = (uint64_t *)pcw_instance_block(in, 0);
            *c += 1;
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

static void bm_raw_atomic(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    uint64_t *p = raw_counter();
    if (!p) {
        gb_skip_with_error(st, "cannot map shared memory");
        return;
    }
    int64_t k;
    while ((k = gb_keep_running_batch(st, BATCH)) > 0)
        for (int64_t i = 0; i < k; i++) {
            __atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

static void bm_pcw_atomic(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    pcw_instance *in = pcw_counter_instance();
    if (!in) {
        gb_skip_with_error(st, "cannot create the pcw instance");
        return;
    }
    uint64_t *c = (uint64_t *)pcw_instance_block(in, 0);
    int64_t k;
    while ((k = gb_keep_running_batch(st, BATCH)) > 0)
        for (int64_t i = 0; i < k; i++) {
            pcw_u64_add(c, 1);
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

void bench_update_register(void)
{
    gb_unit_ns(gb_register("update/raw_store", bm_raw_store, NULL));
    gb_unit_ns(gb_register("update/pcw_plain", bm_pcw_plain, NULL));
    gb_unit_ns(gb_register("update/raw_atomic", bm_raw_atomic, NULL));
    gb_unit_ns(gb_register("update/pcw_atomic", bm_pcw_atomic, NULL));
    gb_unit_ns(gb_register("update/pcw_plain_fetch", bm_pcw_plain_fetch, NULL));
}
