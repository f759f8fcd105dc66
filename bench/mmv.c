/* SPDX-License-Identifier: MIT */
/*
 * bench/mmv.c - the same figures for Performance Co-Pilot's MMV files
 * (libpcp_mmv), what a Linux user would pick instead of pcw.
 *
 *   mmv/update              mmv_inc() of one 64-bit counter (the library's
 *                           fast path: a value handle looked up once with
 *                           mmv_lookup_value_desc)
 *   mmv/snapshot/<N>        a consumer process walking the values section of
 *                           an MMV file with N instances of one 64-bit
 *                           counter, copying each value and its instance
 *                           reference, as pmdammv does on a fetch. MMV has
 *                           no per-value consistency protocol: the only check
 *                           is the header's generation pair (g1 == g2),
 *                           made once per pass; no offset is range-checked
 *                           but the section's own bounds, once at open.
 *
 * Built only when bench.mk finds <pcp/mmv_stats.h> and libpcp_mmv
 * (-DBENCH_HAVE_MMV=1). Debian's libpcp-mmv1-dev ships mmv_stats.h without
 * the <pcp/pmapi.h> it needs (that is in libpcp3-dev); when pmapi.h is
 * absent, the two types and the constants mmv_stats.h uses are declared
 * here with PCP's layout (pmUnits: one 32-bit bitfield word; pmAtomValue:
 * an 8-byte union).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include "benchutil.h"

#if defined(BENCH_HAVE_MMV) && BENCH_HAVE_MMV

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if __has_include(<pcp/pmapi.h>)
#include <pcp/pmapi.h>
#else
typedef struct pmUnits { /* little-endian, !HAVE_BITFIELDS_LTOR */
    unsigned int pad : 8;
    signed int scaleCount : 4;
    unsigned int scaleTime : 4;
    unsigned int scaleSpace : 4;
    signed int dimCount : 4;
    signed int dimTime : 4;
    signed int dimSpace : 4;
} pmUnits;
typedef union {
    int32_t l;
    uint32_t ul;
    int64_t ll;
    uint64_t ull;
    float f;
    double d;
    char *cp;
    void *vbp;
} pmAtomValue;
#define PM_TYPE_NOSUPPORT (-1)
#define PM_TYPE_32        0
#define PM_TYPE_U32       1
#define PM_TYPE_64        2
#define PM_TYPE_U64       3
#define PM_TYPE_FLOAT     4
#define PM_TYPE_DOUBLE    5
#define PM_TYPE_STRING    6
#define PM_SEM_COUNTER    1
#define PM_SEM_INSTANT    3
#define PM_SEM_DISCRETE   4
#define PM_INDOM_NULL     0xffffffffu
#endif
#include <pcp/mmv_stats.h>
#include <pcp/mmv_dev.h>

/* The directory libpcp_mmv writes into: $PCP_TMP_DIR/mmv (main.c points
 * PCP_TMP_DIR into the private root). */
static void mmv_path(char *buf, size_t cap, const char *file)
{
    const char *t = getenv("PCP_TMP_DIR");
    snprintf(buf, cap, "%s/mmv/%s", t ? t : "/var/lib/pcp/tmp", file);
}

/* ---- mmv/update ------------------------------------------------------- */

static void bm_update(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    static void *addr;
    static pmAtomValue *v;
    if (!addr) {
        mmv_metric2_t m = {.name = "events",
                           .item = 1,
                           .type = MMV_TYPE_U64,
                           .semantics = MMV_SEM_COUNTER,
                           .indom = 0,
                           .shorttext = "events",
                           .helptext = "events"};
        addr = mmv_stats2_init("pcw-bench-update", 0, 0, &m, 1, NULL, 0);
        v = addr ? mmv_lookup_value_desc(addr, "events", NULL) : NULL;
    }
    if (!v) {
        gb_skip_with_error(st, "mmv_stats2_init / mmv_lookup_value_desc failed");
        return;
    }
    int64_t k;
    while ((k = gb_keep_running_batch(st, 1024)) > 0)
        for (int64_t i = 0; i < k; i++) {
            mmv_inc(addr, v);
            gb_clobber_memory();
        }
    gb_set_items_processed(st, gb_state_iterations(st));
}

/* ---- mmv/snapshot ------------------------------------------------------- */

/* Child "mmv N": an MMV file with N instances of one counter. */
int bench_mmv_child(int argc, char **argv)
{
    if (argc < 2) {
        printf("error usage\n");
        return 2;
    }
    int n = atoi(argv[1]);
    mmv_instances2_t *in = calloc((size_t)n, sizeof *in);
    char *names = malloc((size_t)n * 16);
    if (!in || !names) {
        printf("error no memory\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        snprintf(names + 16 * (size_t)i, 16, BU_NAME_FMT, i);
        in[i].internal = i;
        in[i].external = names + 16 * (size_t)i;
    }
    mmv_indom2_t indom = {.serial = 1,
                          .count = (uint32_t)n,
                          .instances = in,
                          .shorttext = "instances",
                          .helptext = "instances"};
    mmv_metric2_t m = {.name = "value",
                       .item = 1,
                       .type = MMV_TYPE_U64,
                       .semantics = MMV_SEM_COUNTER,
                       .indom = 1,
                       .shorttext = "value",
                       .helptext = "value"};
    char file[64], path[4096];
    snprintf(file, sizeof file, "pcw-bench-%d", n);
    void *addr = mmv_stats2_init(file, 0, 0, &m, 1, &indom, 1);
    if (!addr) {
        printf("error mmv_stats2_init\n");
        return 1;
    }
    mmv_path(path, sizeof path, file);
    printf("ready %s\n", path);
    fflush(stdout);
    char b[64];
    while (read(0, b, sizeof b) > 0) {
    }
    mmv_stats_stop(file, addr);
    return 0;
}

typedef struct mmv_sample {
    uint64_t value;
    uint64_t instance; /* offset of its mmv_disk_instance in the file */
} mmv_sample;

static void bm_snapshot(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0);
    char nbuf[32];
    snprintf(nbuf, sizeof nbuf, "%lld", (long long)n);
    const char *args[] = {"mmv", nbuf, NULL};
    bu_child child;
    if (bu_spawn(&child, BU_CPU_OTHER, args) != 0) {
        gb_skip_with_error(st, "cannot start the MMV writer");
        return;
    }
    const char *path = child.line + 6; /* "ready " */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    const unsigned char *map = MAP_FAILED;
    if (fd >= 0 && fstat(fd, &sb) == 0)
        map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (fd >= 0)
        close(fd);
    mmv_sample *out = malloc(sizeof *out * (size_t)n);
    const mmv_disk_header_t *h = (const mmv_disk_header_t *)map;
    const mmv_disk_value_t *vals = NULL;
    int64_t nvals = 0;
    if (map != MAP_FAILED && (size_t)sb.st_size >= sizeof *h && memcmp(h->magic, "MMV", 4) == 0) {
        const mmv_disk_toc_t *toc = (const mmv_disk_toc_t *)(h + 1);
        for (int i = 0; i < h->tocs && (const unsigned char *)(toc + i + 1) <= map + sb.st_size;
             i++)
            if (toc[i].type == MMV_TOC_VALUES &&
                toc[i].offset + (uint64_t)toc[i].count * sizeof(mmv_disk_value_t) <=
                    (uint64_t)sb.st_size) {
                vals = (const mmv_disk_value_t *)(map + toc[i].offset);
                nvals = toc[i].count;
            }
    }
    if (!vals || nvals != n || !out) {
        gb_skip_with_error(st, "cannot map the MMV file's values");
    } else {
        int bad = 0;
        while (gb_keep_running(st)) {
            uint64_t g1 = __atomic_load_n(&h->g1, __ATOMIC_ACQUIRE);
            for (int64_t i = 0; i < nvals; i++) {
                out[i].value = vals[i].value.ull;
                out[i].instance = vals[i].instance;
            }
            bad |= g1 != __atomic_load_n(&h->g2, __ATOMIC_ACQUIRE);
            gb_do_not_optimize(out);
        }
        if (bad)
            gb_skip_with_error(st, "generation changed during a read");
        int64_t it = gb_state_iterations(st);
        gb_set_items_processed(st, it * n);
        gb_counter_rate(st, "instances_per_second", (double)(it * n));
        gb_counter(st, "instances", (double)n);
    }
    if (map != MAP_FAILED)
        munmap((void *)map, (size_t)sb.st_size);
    free(out);
    bu_stop(&child);
}

void bench_mmv_register(void)
{
    gb_unit_ns(gb_register("mmv/update", bm_update, NULL));
    gb_bench *b = gb_register("mmv/snapshot", bm_snapshot, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    static const int64_t instances[] = {1000, 100000, 1000000};
    for (size_t i = 0; i < 3; i++)
        gb_args(b, &instances[i], 1);
}

#else /* !BENCH_HAVE_MMV */

#include <stdio.h>

int bench_mmv_child(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("error built without libpcp_mmv\n");
    return 2;
}

void bench_mmv_register(void) {}

#endif
