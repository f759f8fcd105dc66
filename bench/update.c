/* SPDX-License-Identifier: MIT */
/*
 * bench/update.c - the provider's cost of one counter update.
 *
 *   update/raw_store   *p += 1 through a raw pointer into a MAP_SHARED page
 *   update/pcw_plain   the same through pcw's provider API as it is meant to
 *                      be used: the instance's block pointer from
 *                      pcw_instance_block() (or a generated X_<block>_of()),
 *                      taken once when the instance is created, then a plain
 *                      store per update into the segment
 *   update/pcw_add     pcw_u64_add() through that block pointer: the
 *                      single-writer update (relaxed load + relaxed store,
 *                      the same instructions as pcw_plain, race-free in
 *                      C11's terms)
 *   update/raw_atomic  relaxed atomic add through the raw pointer
 *   update/pcw_atomic  pcw_u64_add_atomic() through that block pointer: the
 *                      update for a counter several threads share (an
 *                      atomic read-modify-write, `lock add` on x86)
 *   update/pcw_time_ns  (extra) one pcw_time_ns() added into the counter
 *                      with pcw_u64_add: a latency numerator's update costs
 *                      two of these clock reads and the add (issue 27)
 *   update/pcw_plain_fetch  (extra) the block pointer fetched again with
 *                      pcw_instance_block() on every update: what a provider
 *                      pays if it keeps only the pcw_instance
 *   update/raw_atomic_threads/<k>   k threads, each a relaxed atomic add on
 *                      its own 64-byte-aligned word of a MAP_SHARED page
 *   update/pcw_atomic_threads/<k>   k threads, each pcw_u64_add_atomic() on
 *                      its own instance, instances created one after the
 *                      other (adjacent slots: neighbours share cache lines)
 *   update/pcw_add_threads/<k>   the same with pcw_u64_add(): each thread
 *                      is its counter's only writer, as in a provider with
 *                      one instance per worker
 *   update/pcw_atomic_threads_cacheline/<k>  the same with
 *                      PCW_REG_CACHELINE (each instance's data on its own
 *                      cache line)
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
#include <pthread.h>
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

/* pcw_time_ns(): clock_gettime(CLOCK_MONOTONIC) through the vDSO, its
 * result added into the counter so that the read is not optimised away. */
static void bm_pcw_time_ns(gb_state *st, void *arg)
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
        for (int64_t i = 0; i < k; i++)
            pcw_u64_add(c, pcw_time_ns());
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

/* One counter through the block pointer: pcw_u64_add, the single-writer
 * update (relaxed load + relaxed store), or pcw_u64_add_atomic, the update
 * of a counter several threads share (an atomic RMW). */
static void one_counter(gb_state *st, int atomic)
{
    bu_pin(BU_CPU_MAIN);
    pcw_instance *in = pcw_counter_instance();
    if (!in) {
        gb_skip_with_error(st, "cannot create the pcw instance");
        return;
    }
    uint64_t *c = (uint64_t *)pcw_instance_block(in, 0);
    int64_t k;
    while ((k = gb_keep_running_batch(st, BATCH)) > 0) {
        if (atomic)
            for (int64_t i = 0; i < k; i++) {
                pcw_u64_add_atomic(c, 1);
                gb_clobber_memory();
            }
        else
            for (int64_t i = 0; i < k; i++) {
                pcw_u64_add(c, 1);
                gb_clobber_memory();
            }
    }
    gb_set_items_processed(st, gb_state_iterations(st));
}

static void bm_pcw_add(gb_state *st, void *arg)
{
    (void)arg;
    one_counter(st, 0);
}

static void bm_pcw_atomic(gb_state *st, void *arg)
{
    (void)arg;
    one_counter(st, 1);
}

/* ---- several threads, each on its own counter --------------------------- */

#define MAX_THREADS 64

static uint64_t *raw_words;              /* one per 64-byte line */
static uint64_t *adjacent[MAX_THREADS];  /* instances' counters, packed */
static uint64_t *cacheline[MAX_THREADS]; /* ... with PCW_REG_CACHELINE */
static pthread_once_t threads_once = PTHREAD_ONCE_INIT;

static int thread_counters(uint32_t flags, const char *name, uint64_t **out)
{
    pcw_provider *p;
    pcw_provider_options o = {.name = "pcw_bench-update-threads"};
    if (pcw_provider_open(&p, &o) != PCW_OK)
        return -1;
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "events";
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .flags = flags,
                                .name = name,
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = 1,
                                .counters = &c};
    pcw_registration *r;
    if (pcw_register(&r, p, &ri) != PCW_OK)
        return -1;
    for (int i = 0; i < MAX_THREADS; i++) {
        char n[16];
        pcw_data d = {NULL, 8};
        pcw_instance *in;
        snprintf(n, sizeof n, "worker-%d", i);
        if (pcw_create_instance(&in, r, n, 1, &d) != PCW_OK)
            return -1;
        out[i] = (uint64_t *)pcw_instance_block(in, 0);
    }
    return 0;
}

static void make_thread_counters(void)
{
    int fd = memfd_create("pcw-bench-raw-threads", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, 64 * MAX_THREADS) == 0) {
        void *m = mmap(NULL, 64 * MAX_THREADS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        raw_words = m == MAP_FAILED ? NULL : (uint64_t *)m;
    }
    if (fd >= 0)
        close(fd);
    if (thread_counters(0, "Bench Threads", adjacent) != 0 ||
        thread_counters(PCW_REG_CACHELINE, "Bench Threads Cacheline", cacheline) != 0)
        adjacent[0] = cacheline[0] = NULL;
}

/* Each of the benchmark's threads adds to its own counter, pinned to a CPU
 * of its own (as far as the machine has them), with an atomic RMW
 * (`atomic`) or as the counter's single writer. */
static void threads_bench(gb_state *st, uint64_t *(*counter)(int), int atomic)
{
    pthread_once(&threads_once, make_thread_counters);
    int t = gb_thread_index(st);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bu_pin((int)(t % (ncpu > 0 ? ncpu : 1)));
    uint64_t *c = t < MAX_THREADS ? counter(t) : NULL;
    if (!c) {
        gb_skip_with_error(st, "cannot set up the counters");
        return;
    }
    int64_t k;
    while ((k = gb_keep_running_batch(st, BATCH)) > 0) {
        if (atomic)
            for (int64_t i = 0; i < k; i++) {
                pcw_u64_add_atomic(c, 1);
                gb_clobber_memory();
            }
        else
            for (int64_t i = 0; i < k; i++) {
                pcw_u64_add(c, 1);
                gb_clobber_memory();
            }
    }
    gb_set_items_processed(st, gb_state_iterations(st));
}

static uint64_t *raw_of(int t)
{
    return raw_words ? raw_words + 8 * t : NULL;
}
static uint64_t *adjacent_of(int t)
{
    return adjacent[t];
}
static uint64_t *cacheline_of(int t)
{
    return cacheline[t];
}

static void bm_raw_threads(gb_state *st, void *arg)
{
    (void)arg;
    threads_bench(st, raw_of, 1);
}
static void bm_pcw_threads(gb_state *st, void *arg)
{
    (void)arg;
    threads_bench(st, adjacent_of, 1);
}
static void bm_pcw_threads_cacheline(gb_state *st, void *arg)
{
    (void)arg;
    threads_bench(st, cacheline_of, 1);
}
static void bm_pcw_add_threads(gb_state *st, void *arg)
{
    (void)arg;
    threads_bench(st, adjacent_of, 0);
}

static void thread_counts(gb_bench *b)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    gb_unit_ns(b);
    gb_use_real_time(b);
    gb_threads(b, 1);
    gb_threads(b, 2);
    if (ncpu > 2)
        gb_threads(b, (int)(ncpu < MAX_THREADS ? ncpu : MAX_THREADS));
}

void bench_update_register(void)
{
    thread_counts(gb_register("update/raw_atomic_threads", bm_raw_threads, NULL));
    thread_counts(gb_register("update/pcw_atomic_threads", bm_pcw_threads, NULL));
    thread_counts(
        gb_register("update/pcw_atomic_threads_cacheline", bm_pcw_threads_cacheline, NULL));
    thread_counts(gb_register("update/pcw_add_threads", bm_pcw_add_threads, NULL));
    gb_unit_ns(gb_register("update/raw_store", bm_raw_store, NULL));
    gb_unit_ns(gb_register("update/pcw_plain", bm_pcw_plain, NULL));
    gb_unit_ns(gb_register("update/pcw_add", bm_pcw_add, NULL));
    gb_unit_ns(gb_register("update/raw_atomic", bm_raw_atomic, NULL));
    gb_unit_ns(gb_register("update/pcw_atomic", bm_pcw_atomic, NULL));
    gb_unit_ns(gb_register("update/pcw_plain_fetch", bm_pcw_plain_fetch, NULL));
    gb_unit_ns(gb_register("update/pcw_time_ns", bm_pcw_time_ns, NULL));
}
