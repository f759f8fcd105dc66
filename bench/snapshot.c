/* SPDX-License-Identifier: MIT */
/*
 * bench/snapshot.c - a consumer reading every instance of a counterset.
 *
 *   snapshot/pcw/<instances>/<counters>        pcw_segment_read(PCW_READ_NO_NAMES)
 *   snapshot/pcw_names/<instances>/<counters>  pcw_segment_read with names
 *   snapshot/pcw_then_sum/<instances>/<counters>
 *                                              pcw_segment_read(PCW_READ_NO_NAMES)
 *                                              and one pass over the rows
 *                                              (their sum, as integers): the
 *                                              least any consumer of the
 *                                              snapshot pays, the baseline
 *                                              of query/collect_cooked beside
 *                                              snapshot/pcw
 *   snapshot/memcpy/<instances>/<counters>     memcpy of instances*counters*8
 *                                              bytes: the same value bytes,
 *                                              nothing else
 *
 * The provider is a child process (benchutil.c) pinned to the other CPU,
 * holding the instances; this process maps its segment read-only and reads
 * with the full protocol and validation of lib/consumer/read.c: range checks
 * of every chunk, the slot generation seqlock per instance, the SIGBUS
 * guard. The snapshot is reused, so after the first read nothing is
 * allocated. Items processed = counter values, so items_per_second is
 * values per second; instances_per_second is a separate rate counter.
 * The memcpy source is a MAP_SHARED memfd (shared memory, like the segment)
 * filled once; the destination a reused heap buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "benchutil.h"
#include "pcw/consumer.h"
#include "pcw/provider.h"

/* One open segment per provider shape. */
typedef struct open_seg {
    const bu_provider *prov;
    pcw_segment *seg;
    const pcw_counterset *cs;
} open_seg;

static open_seg segs[16];
static size_t nsegs;

static open_seg *open_provider(gb_state *st, int64_t n, int64_t c, uint32_t flags)
{
    const bu_provider *p = bu_provider_get_flags(n, c, flags);
    if (!p) {
        gb_skip_with_error(st, "cannot start the provider child");
        return NULL;
    }
    for (size_t i = 0; i < nsegs; i++)
        if (segs[i].prov == p)
            return &segs[i];
    if (nsegs == sizeof segs / sizeof segs[0]) {
        gb_skip_with_error(st, "too many segments");
        return NULL;
    }
    open_seg *o = &segs[nsegs];
    if (pcw_segment_open(&o->seg, p->path) != PCW_OK) {
        gb_skip_with_error(st, "cannot open the provider's segment");
        return NULL;
    }
    o->cs = pcw_segment_find_counterset(o->seg, "Bench");
    if (!o->cs) {
        pcw_segment_close(o->seg);
        gb_skip_with_error(st, "no counterset");
        return NULL;
    }
    o->prov = p;
    nsegs++;
    return o;
}

static void report(gb_state *st, int64_t n, int64_t c)
{
    int64_t it = gb_state_iterations(st);
    gb_set_items_processed(st, it * n * c);
    gb_set_bytes_processed(st, it * n * c * 8);
    gb_counter_rate(st, "instances_per_second", (double)(it * n));
    gb_counter(st, "instances", (double)n);
    gb_counter(st, "counters", (double)c);
}

/* The sum of n 8-byte words: eight at a time in four SSE2 accumulators
 * (x86-64's baseline), so that the pass is as fast as the memory lets it
 * be, not a chain of additions. */
typedef uint64_t u64x2 __attribute__((vector_size(16)));

static uint64_t sum_words(const void *p, size_t n)
{
    const unsigned char *b = p;
    u64x2 a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, v0, v1, v2, v3;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        memcpy(&v0, b + 8 * i, 16), memcpy(&v1, b + 8 * i + 16, 16);
        memcpy(&v2, b + 8 * i + 32, 16), memcpy(&v3, b + 8 * i + 48, 16);
        a0 += v0, a1 += v1, a2 += v2, a3 += v3;
    }
    a0 += a1 + a2 + a3;
    uint64_t s = a0[0] + a0[1];
    for (; i < n; i++) {
        uint64_t w;
        memcpy(&w, b + 8 * i, 8);
        s += w;
    }
    return s;
}

/* pass: after each read, add up every value of the snapshot. */
static void read_bench(gb_state *st, unsigned flags, uint32_t reg_flags, int pass)
{
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    open_seg *o = open_provider(st, n, c, reg_flags);
    if (!o)
        return;
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    /* Grow the snapshot before timing. */
    if (pcw_segment_read(o->seg, o->cs, &snap, flags) != PCW_OK || (int64_t)snap.count != n) {
        gb_skip_with_error(st, "first read failed or missed instances");
        pcw_snapshot_free(&snap);
        return;
    }
    int bad = 0;
    while (gb_keep_running(st)) {
        int rc = pcw_segment_read(o->seg, o->cs, &snap, flags);
        bad |= rc != PCW_OK || (int64_t)snap.count != n;
        if (pass) {
            uint64_t acc = sum_words(snap.data, snap.count * snap.data_size / 8);
            gb_do_not_optimize(&acc);
        }
        gb_do_not_optimize(snap.data);
    }
    if (bad)
        gb_skip_with_error(st, "a read failed or missed instances");
    report(st, n, c);
    pcw_snapshot_free(&snap);
}

static void bm_pcw(gb_state *st, void *arg)
{
    (void)arg;
    read_bench(st, PCW_READ_NO_NAMES, 0, 0);
}

static void bm_pcw_then_sum(gb_state *st, void *arg)
{
    (void)arg;
    read_bench(st, PCW_READ_NO_NAMES, 0, 1);
}

/* What PCW_REG_CACHELINE (each instance's row padded to 64 bytes) costs a
 * reader. */
static void bm_pcw_cacheline(gb_state *st, void *arg)
{
    (void)arg;
    read_bench(st, PCW_READ_NO_NAMES, PCW_REG_CACHELINE, 0);
}

static void bm_pcw_names(gb_state *st, void *arg)
{
    (void)arg;
    read_bench(st, 0, 0, 0);
}

static void bm_memcpy(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    size_t bytes = (size_t)(n * c * 8);
    int fd = memfd_create("pcw-bench-memcpy", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
        gb_skip_with_error(st, "memfd");
        return;
    }
    unsigned char *src = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    unsigned char *dst = malloc(bytes);
    if (src == MAP_FAILED || !dst) {
        gb_skip_with_error(st, "no memory");
        free(dst);
        return;
    }
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = i;
        memcpy(src + i, &v, 8);
    }
    memset(dst, 0, bytes);
    while (gb_keep_running(st)) {
        memcpy(dst, src, bytes);
        gb_clobber_memory();
    }
    report(st, n, c);
    munmap(src, bytes);
    free(dst);
}

static void sizes(gb_bench *b)
{
    gb_use_real_time(b);
    gb_unit_ns(b);
    static const int64_t instances[] = {1000, 100000, 1000000}, counters[] = {1, 16};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 2; j++)
            gb_args(b, (const int64_t[]){instances[i], counters[j]}, 2);
    /* pcwtop/refresh/1000000's baseline (bench/pcwtop.c). */
    gb_args(b, (const int64_t[]){1000000, 4}, 2);
}

void bench_snapshot_register(void)
{
    sizes(gb_register("snapshot/pcw", bm_pcw, NULL));
    sizes(gb_register("snapshot/pcw_names", bm_pcw_names, NULL));
    sizes(gb_register("snapshot/pcw_then_sum", bm_pcw_then_sum, NULL));
    sizes(gb_register("snapshot/pcw_cacheline", bm_pcw_cacheline, NULL));
    sizes(gb_register("snapshot/memcpy", bm_memcpy, NULL));
}
