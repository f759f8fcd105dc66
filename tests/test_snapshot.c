/* SPDX-License-Identifier: MIT */
/*
 * tests/test_snapshot.c - the columnar snapshot: its columns and sources,
 * the name cache that lets a read of unchanged instances skip their ids and
 * names, and PCW_REG_CACHELINE rows.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

static pcw_provider *prov;
static pcw_registration *reg;

static void setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
}

static void teardown(void)
{
    pcw_provider_close(prov);
    tu_root_teardown();
}

static void setup_baseline(void)
{
    /* The 8-byte copy loop, as on a CPU without AVX2 (read.c, vec_cpu). */
    setenv("PCW_NO_AVX2", "1", 1);
    setup();
}

TestSuite(snapshot, .init = setup, .fini = teardown, .timeout = 30);
TestSuite(snapshot_baseline, .init = setup_baseline, .fini = teardown, .timeout = 30);

/* A counterset "Set" of one 8-byte counter, registered with `flags`. */
static void register_set(const char *name, uint32_t flags)
{
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "Value";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .flags = flags,
                                  .name = name,
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    cr_assert_eq(pcw_register(&reg, prov, &info), PCW_OK);
}

static pcw_instance *create(const char *name, uint64_t value)
{
    pcw_instance *in = NULL; /* gcc -O2 cannot see that cr_assert_eq returns only on success */
    pcw_data d = {&value, 8};
    cr_assert_eq(pcw_create_instance(&in, reg, name, 1, &d), PCW_OK, "%s", name);
    return in;
}

/* Every row's name is prefix<value - base>, and its value matches. */
static void expect_rows(const pcw_snapshot *s, const pcw_counter *c, size_t n, const char *prefix,
                        uint64_t base)
{
    cr_assert_eq(s->count, n);
    for (size_t i = 0; i < s->count; i++) {
        char want[64];
        uint64_t v = pcw_snapshot_value(s, i, c);
        snprintf(want, sizeof want, "%s%llu", prefix, (unsigned long long)(v - base));
        cr_assert_str_eq(pcw_snapshot_name(s, i), want, "row %zu (id %u): %s", i,
                         pcw_snapshot_id(s, i), pcw_snapshot_name(s, i));
        cr_assert_eq(pcw_snapshot_name_len(s, i), strlen(want));
    }
}

Test(snapshot, columns_sources_and_time)
{
    register_set("Set", 0);
    pcw_instance *in[3];
    in[0] = create("zero", 10), in[1] = create("one", 11), in[2] = create("two", 12);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t n0 = (uint64_t)t0.tv_sec * 1000000000u + (uint64_t)t0.tv_nsec;
    uint64_t n1 = (uint64_t)t1.tv_sec * 1000000000u + (uint64_t)t1.tv_nsec;
    cr_assert_eq(s.count, 3);
    cr_assert_eq(s.data_size, 8);
    cr_assert(s.time_ns >= n0 && s.time_ns <= n1, "timestamp taken during the read");
    cr_assert_eq(s.nsources, 1);
    cr_assert_eq(s.sources[0].first, 0);
    cr_assert_eq(s.sources[0].count, 3);
    cr_assert_eq(s.sources[0].pid, getpid());
    cr_assert_eq(s.sources[0].provider_id, pcw_segment_provider(seg)->provider_id);
    cr_assert_neq(s.sources[0].provider_id, 0);
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(pcw_snapshot_id(&s, i), pcw_instance_id(in[i]));
        cr_assert_eq(pcw_snapshot_value(&s, i, &cs->counters[0]), 10 + i);
        cr_assert_eq(pcw_snapshot_source_of(&s, i), &s.sources[0]);
    }
    cr_assert_null(pcw_snapshot_source_of(&s, 3));
    cr_assert_str_eq(pcw_snapshot_name(&s, 1), "one");

    /* Appending a read without names to a snapshot with names: "". */
    cr_assert_eq(pcw_segment_read(seg, cs, &s, PCW_READ_APPEND | PCW_READ_NO_NAMES), PCW_OK);
    cr_assert_eq(s.count, 6);
    cr_assert_eq(s.nsources, 2);
    cr_assert_eq(pcw_snapshot_source_of(&s, 4), &s.sources[1]);
    cr_assert_str_eq(pcw_snapshot_name(&s, 1), "one");
    cr_assert_str_eq(pcw_snapshot_name(&s, 4), "");
    cr_assert_eq(pcw_snapshot_value(&s, 4, &cs->counters[0]), 11);

    /* Without names from the start: no name columns at all. */
    cr_assert_eq(pcw_segment_read(seg, cs, &s, PCW_READ_NO_NAMES), PCW_OK);
    cr_assert_null(s.name_off);
    cr_assert_str_eq(pcw_snapshot_name(&s, 0), "");
    cr_assert_eq(pcw_snapshot_name_len(&s, 0), 0);
    /* ...and then appending names: earlier rows get "". */
    cr_assert_eq(pcw_segment_read(seg, cs, &s, PCW_READ_APPEND), PCW_OK);
    cr_assert_str_eq(pcw_snapshot_name(&s, 0), "");
    cr_assert_str_eq(pcw_snapshot_name(&s, 5), "two");
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* The name cache: a read of the same instances reuses ids and names; any
 * change between reads - a new instance, a closed one, a slot reused by
 * another name - is seen. */
Test(snapshot, reused_names_follow_every_change)
{
    register_set("Set", 0);
    pcw_instance *in[64];
    char name[32];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "a%d", i);
        in[i] = create(name, (uint64_t)i);
    }
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Set");
    const pcw_counter *c = &cs->counters[0];
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, c, 64, "a", 0);
    /* Unchanged: the second read reuses the names, with fresh values. */
    for (int i = 0; i < 64; i++)
        *(uint64_t *)pcw_instance_block(in[i], 0) = 100 + (uint64_t)i;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, c, 64, "a", 100);
    /* A new instance. */
    pcw_instance *extra = create("a64", 164);
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, c, 65, "a", 100);
    /* A closed one. */
    pcw_close_instance(in[5]);
    in[5] = NULL;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, c, 64, "a", 100);
    /* Every slot closed and reused by instances of other names and values:
     * the grace period lets the provider reuse them once half the slots
     * wait in its limbo. */
    for (int i = 0; i < 64; i++)
        if (in[i])
            pcw_close_instance(in[i]);
    pcw_close_instance(extra);
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "b%d", i);
        in[i] = create(name, 1000 + (uint64_t)i);
    }
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, c, 64, "b", 1000);
    cr_assert_lt(pcw_snapshot_id(&s, 63), 128, "slots were reused");
    /* Another counterset into the same snapshot, and back. */
    pcw_registration *first = reg;
    register_set("Other", 0);
    create("o7", 7);
    cr_assert_eq(pcw_segment_refresh(seg, NULL), PCW_OK);
    cs = pcw_segment_find_counterset(seg, "Set");
    const pcw_counterset *other = pcw_segment_find_counterset(seg, "Other");
    cr_assert_eq(pcw_segment_read(seg, other, &s, 0), PCW_OK);
    expect_rows(&s, &other->counters[0], 1, "o", 0);
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, &cs->counters[0], 64, "b", 1000);
    /* A read without names in between, then with names again. */
    cr_assert_eq(pcw_segment_read(seg, cs, &s, PCW_READ_NO_NAMES), PCW_OK);
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, &cs->counters[0], 64, "b", 1000);
    (void)first;
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* The cache cannot go by the live bits alone: every slot of a chunk closed
 * and reused by other instances between two reads leaves the same bits.
 * The counterset's generation tells (R5 in read.c). */
Test(snapshot, reused_names_not_fooled_by_equal_live_bits)
{
    register_set("Set", 0);
    pcw_instance *in[64];
    char name[32];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "a%d", i);
        in[i] = create(name, (uint64_t)i);
    }
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, &cs->counters[0], 64, "a", 0);
    for (int i = 0; i < 64; i++)
        pcw_close_instance(in[i]);
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "b%d", i);
        in[i] = create(name, 1000 + (uint64_t)i);
        cr_assert_lt(pcw_instance_id(in[i]), 64, "the same 64 slots, the same live bits");
    }
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, &cs->counters[0], 64, "b", 1000);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* Reads without names cache the ids alone (read.c): the same live words
 * mean the same ids. Every row's value is 1000 + its instance's id here,
 * so a row whose id is not its slot's shows. A change between reads that
 * keeps the count - a slot closed and another filled - and a chunk linked
 * since, are noticed; so is a metadata reload (another counterset). */
static void expect_ids(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *s, size_t n)
{
    cr_assert_eq(pcw_segment_read(seg, cs, s, PCW_READ_NO_NAMES), PCW_OK);
    cr_assert_eq(s->count, n);
    for (size_t i = 0; i < s->count; i++)
        cr_assert_eq(pcw_snapshot_value(s, i, &cs->counters[0]), 1000 + (uint64_t)s->ids[i],
                     "row %zu: id %u", i, s->ids[i]);
}

static pcw_instance *create_by_id(const char *name)
{
    pcw_instance *in = create(name, 0);
    *(uint64_t *)pcw_instance_block(in, 0) = 1000 + (uint64_t)pcw_instance_id(in);
    return in;
}

Test(snapshot, reused_ids_without_names_follow_every_change)
{
    register_set("Set", 0);
    pcw_instance *in[64];
    char name[32];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "a%d", i);
        in[i] = create_by_id(name);
    }
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    expect_ids(seg, cs, &s, 3);
    expect_ids(seg, cs, &s, 3); /* the cached ids */
    /* The same count in other slots: slot 1 closed, a new instance in slot 3
     * (a closed slot waits out the grace period before reuse). */
    pcw_close_instance(in[1]);
    in[1] = create_by_id("b1");
    cr_assert_eq(pcw_instance_id(in[1]), 3);
    expect_ids(seg, cs, &s, 3);
    expect_ids(seg, cs, &s, 3);
    /* A second chunk: the first chunk's 64 slots filled, one more. */
    for (int i = 3; i < 64; i++) {
        snprintf(name, sizeof name, "c%d", i);
        in[i] = create_by_id(name);
    }
    expect_ids(seg, cs, &s, 64);
    pcw_instance *extra = create_by_id("d");
    cr_assert_geq(pcw_instance_id(extra), 64, "in the next chunk");
    expect_ids(seg, cs, &s, 65);
    /* That chunk's instance closed and another in its chunk: same count,
     * the first chunk's words unchanged. */
    pcw_close_instance(extra);
    extra = create_by_id("e");
    expect_ids(seg, cs, &s, 65);
    /* A metadata reload between reads: the cache does not outlive it. */
    register_set("Other", 0);
    cr_assert_eq(pcw_segment_refresh(seg, NULL), PCW_OK);
    cs = pcw_segment_find_counterset(seg, "Set");
    expect_ids(seg, cs, &s, 65);
    /* With names in between, and after. */
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_ids(seg, cs, &s, 65);
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 65);
    for (size_t i = 0; i < s.count; i++)
        cr_assert_eq(pcw_snapshot_value(&s, i, &cs->counters[0]), 1000 + (uint64_t)s.ids[i]);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* The same under a provider thread that closes and creates instances all
 * the while: every row a read without names returns carries its own id's
 * value (or 0, the initial data, before the owner stored it), whether the
 * read reused the last one's ids or not. */
typedef struct churner {
    atomic_int done;
    int ops;
} churner;

static void *churn_main(void *arg)
{
    churner *ch = arg;
    enum { LIVE = 200 };
    pcw_instance *in[LIVE];
    char name[32];
    for (int i = 0; i < LIVE; i++) {
        snprintf(name, sizeof name, "x%d", i);
        in[i] = create_by_id(name);
    }
    unsigned r = 12345;
    for (int op = 0; op < ch->ops; op++) {
        r = r * 1103515245u + 12345u;
        int k = (int)((r >> 8) % LIVE);
        pcw_close_instance(in[k]);
        snprintf(name, sizeof name, "y%d", op);
        in[k] = create_by_id(name);
    }
    for (int i = 0; i < LIVE; i++)
        pcw_close_instance(in[i]);
    atomic_store(&ch->done, 1);
    return NULL;
}

Test(snapshot, reused_ids_without_names_under_churn, .timeout = 120)
{
    register_set("Set", 0);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Set");
    churner ch = {.ops = 200000};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, churn_main, &ch), 0);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    uint64_t reads = 0, rows = 0;
    while (!atomic_load(&ch.done)) {
        cr_assert_eq(pcw_segment_read(seg, cs, &s, PCW_READ_NO_NAMES), PCW_OK);
        for (size_t i = 0; i < s.count; i++) {
            uint64_t v = pcw_snapshot_value(&s, i, &cs->counters[0]);
            cr_assert(v == 0 || v == 1000 + (uint64_t)s.ids[i],
                      "read %llu row %zu: id %u value %llu", (unsigned long long)reads, i, s.ids[i],
                      (unsigned long long)v);
        }
        reads++, rows += s.count;
    }
    pthread_join(th, NULL);
    cr_assert_gt(reads, 10, "the reads overlapped the churn");
    cr_log_info("%llu reads, %llu rows", (unsigned long long)reads, (unsigned long long)rows);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* PCW_REG_CACHELINE: every instance's data starts a cache line of its own,
 * and readers see the same values. */
Test(snapshot, cacheline_rows)
{
    register_set("Lines", PCW_REG_CACHELINE);
    pcw_instance *in[70];
    char name[32];
    for (int i = 0; i < 70; i++) {
        snprintf(name, sizeof name, "w%d", i);
        in[i] = create(name, (uint64_t)i);
        cr_assert_eq((uintptr_t)pcw_instance_block(in[i], 0) % 64, 0, "row %d aligned", i);
    }
    for (int i = 1; i < 70; i++) {
        uintptr_t a = (uintptr_t)pcw_instance_block(in[i - 1], 0);
        uintptr_t b = (uintptr_t)pcw_instance_block(in[i], 0);
        cr_assert(b > a ? b - a >= 64 : a - b >= 64, "rows %d and %d share a line", i - 1, i);
    }
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Lines");
    cr_assert(cs->flags & PCW_CSET_F_CACHELINE);
    cr_assert_eq(cs->data_size, 8, "the padding is not data");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    expect_rows(&s, &cs->counters[0], 70, "w", 0);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* Every word of every row arrives as it was stored, whatever the row's
 * width (odd widths start rows off 16-byte alignment, where the 16-byte
 * copy loads a word alone), its padding (PCW_REG_CACHELINE rows lie apart:
 * a row at a time) and the holes between stretches of live slots (each
 * stretch a copy of its own): the 16-byte copy on CPUs with AVX2, and the
 * 8-byte one (the baseline suite). */
static void copy_every_word(void)
{
    enum { NI = 1500 }; /* two runs of 1,024 slots at most */
    static const struct {
        uint32_t width, flags;
    } shape[] = {{1, 0},
                 {2, 0},
                 {3, 0},
                 {5, 0},
                 {8, 0},
                 {9, 0},
                 {17, 0},
                 {3, PCW_REG_CACHELINE},
                 {9, PCW_REG_CACHELINE}};
    pcw_instance **in = calloc(NI, sizeof *in);
    uint64_t *row = calloc(17, sizeof *row);
    cr_assert(in && row);
    for (size_t sh = 0; sh < sizeof shape / sizeof shape[0]; sh++) {
        const uint32_t w = shape[sh].width;
        char set[16], names[17][16];
        snprintf(set, sizeof set, "Words %zu", sh);
        pcw_counter_desc c[17];
        for (uint32_t k = 0; k < w; k++) {
            c[k] = pcw_counter_desc_default();
            snprintf(names[k], sizeof names[k], "c%u", k);
            c[k].id = k, c[k].name = names[k], c[k].offset = 8 * k, c[k].size = 8;
            c[k].type = PERF_COUNTER_LARGE_RAWCOUNT;
        }
        pcw_registration_info info = {.version = PCW_VERSION_1,
                                      .flags = shape[sh].flags,
                                      .name = set,
                                      .instance_type = PCW_MULTI_INSTANCE,
                                      .counter_count = w,
                                      .counters = c};
        pcw_registration *r;
        cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK, "%s", set);
        /* Word k of instance i: i and k in its low bits, all 64 bits used. */
        for (int i = 0; i < NI; i++) {
            char name[16];
            snprintf(name, sizeof name, "i%d", i);
            for (uint32_t k = 0; k < w; k++)
                row[k] = 0xA5A5000000000000ull ^ ((uint64_t)i << 8) ^ k ^ ((uint64_t)k << 59);
            pcw_data d = {row, 8 * w};
            cr_assert_eq(pcw_create_instance(&in[i], r, name, 1, &d), PCW_OK);
        }
        for (int i = 4; i < NI; i += 13) { /* holes */
            pcw_close_instance(in[i]);
            in[i] = NULL;
        }
        pcw_segment *seg;
        cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
        const pcw_counterset *cs = pcw_segment_find_counterset(seg, set);
        cr_assert_not_null(cs);
        pcw_snapshot snap = PCW_SNAPSHOT_INIT;
        cr_assert_eq(pcw_segment_read(seg, cs, &snap, PCW_READ_NO_NAMES), PCW_OK);
        size_t live = 0;
        for (int i = 0; i < NI; i++)
            live += in[i] != NULL;
        cr_assert_eq(snap.count, live, "%s", set);
        for (size_t j = 0; j < snap.count; j++) {
            int i = -1;
            for (int x = 0; x < NI; x++)
                if (in[x] && pcw_instance_id(in[x]) == pcw_snapshot_id(&snap, j)) {
                    i = x;
                    break;
                }
            cr_assert_geq(i, 0, "%s row %zu: id %u is no live instance's", set, j,
                          pcw_snapshot_id(&snap, j));
            const unsigned char *p = pcw_snapshot_row(&snap, j);
            for (uint32_t k = 0; k < w; k++) {
                uint64_t got;
                memcpy(&got, p + 8 * k, 8);
                uint64_t want =
                    0xA5A5000000000000ull ^ ((uint64_t)i << 8) ^ k ^ ((uint64_t)k << 59);
                cr_assert_eq(got, want, "%s row %zu word %u: %#llx, not %#llx", set, j, k,
                             (unsigned long long)got, (unsigned long long)want);
            }
        }
        pcw_snapshot_free(&snap);
        pcw_segment_close(seg);
        for (int i = 0; i < NI; i++)
            if (in[i])
                pcw_close_instance(in[i]);
        cr_assert_eq(pcw_unregister(r), PCW_OK);
    }
    free(row);
    free(in);
}

Test(snapshot, copy_every_word)
{
    copy_every_word();
}

Test(snapshot_baseline, copy_every_word)
{
    copy_every_word();
}

/* A dense counterset: every stretch of live slots is long (1,000 in a row),
 * so the ids are written by the vector loops (read.c fill_ids_vec, and
 * fill_ids without AVX2), whose tail and body must both give each row its
 * own instance's id. */
static void dense_ids(void)
{
    register_set("Dense", 0);
    enum { N = 1000 };
    static pcw_instance *in[N];
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "d%d", i);
        in[i] = create(name, (uint64_t)i);
    }
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Dense");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    for (unsigned flags = 0; flags <= PCW_READ_NO_NAMES; flags += PCW_READ_NO_NAMES) {
        cr_assert_eq(pcw_segment_read(seg, cs, &s, flags), PCW_OK);
        cr_assert_eq(s.count, N);
        for (size_t j = 0; j < N; j++) {
            uint64_t v = pcw_snapshot_value(&s, j, &cs->counters[0]);
            cr_assert_lt(v, N);
            cr_assert_eq(pcw_snapshot_id(&s, j), pcw_instance_id(in[v]),
                         "row %zu holds instance %llu's value under id %u", j,
                         (unsigned long long)v, pcw_snapshot_id(&s, j));
        }
    }
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    for (int i = 0; i < N; i++)
        pcw_close_instance(in[i]);
}

Test(snapshot, dense_ids)
{
    dense_ids();
}

Test(snapshot_baseline, dense_ids)
{
    dense_ids();
}

/* A read of more rows than a large cache holds writes the rest with
 * non-temporal stores (read.c, PCW__STREAM_FROM_BYTES, 32 MiB): every row
 * must still arrive whole and in order, both for packed rows and for
 * cache-line rows (stride 512 != data size 504), and a second read into the
 * same snapshot too. (Sanitizer builds do not stream; make test runs this
 * without them.) */
Test(snapshot, large_reads_keep_every_row, .timeout = 240)
{
    enum { N = 70000, C = 63 }; /* 70,000 x 504 bytes = 35.3 MB of rows */
    static const char *const sets[] = {"BigPacked", "BigLines"};
    static const uint32_t flags[] = {0, PCW_REG_CACHELINE};
    static pcw_counter_desc cd[C];
    static char cname[C][8];
    for (int c = 0; c < C; c++) {
        cd[c] = pcw_counter_desc_default();
        cd[c].id = (uint32_t)c, cd[c].offset = (uint32_t)(8 * c);
        snprintf(cname[c], sizeof cname[c], "c%d", c);
        cd[c].name = cname[c];
    }
    static uint64_t v[C];
    for (int k = 0; k < 2; k++) {
        pcw_registration_info info = {.version = PCW_VERSION_1,
                                      .flags = flags[k],
                                      .name = sets[k],
                                      .instance_type = PCW_MULTI_INSTANCE,
                                      .counter_count = C,
                                      .counters = cd};
        pcw_registration *r;
        cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK);
        char name[32];
        for (int i = 0; i < N; i++) {
            for (int c = 0; c < C; c++)
                v[c] = (uint64_t)i * 64 + (uint64_t)c;
            pcw_data d = {v, sizeof v};
            pcw_instance *in;
            snprintf(name, sizeof name, "r%d", i);
            cr_assert_eq(pcw_create_instance(&in, r, name, 1, &d), PCW_OK);
        }
        pcw_segment *seg;
        cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
        const pcw_counterset *cs = pcw_segment_find_counterset(seg, sets[k]);
        cr_assert_not_null(cs);
        cr_assert_gt((size_t)N * cs->data_size, (size_t)32 << 20, "more than the threshold");
        pcw_snapshot s = PCW_SNAPSHOT_INIT;
        for (int pass = 0; pass < 2; pass++) {
            cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
            cr_assert_eq(s.count, N);
            for (size_t i = 0; i < s.count; i++) {
                uint64_t first = pcw_snapshot_value(&s, i, &cs->counters[0]);
                cr_assert_eq(first % 64, 0, "row %zu", i);
                for (int c = 1; c < C; c++)
                    cr_assert_eq(pcw_snapshot_value(&s, i, &cs->counters[c]), first + (uint64_t)c,
                                 "row %zu counter %d", i, c);
                char want[32];
                snprintf(want, sizeof want, "r%llu", (unsigned long long)(first / 64));
                cr_assert_str_eq(pcw_snapshot_name(&s, i), want);
            }
            pcw_snapshot_clear(&s);
        }
        pcw_snapshot_free(&s);
        pcw_segment_close(seg);
    }
}

/* ---- the struct's ABI ------------------------------------------------------- */

/* pcw_snapshot as PCW_2 (libpcw.so.2) published it, private fields and
 * all: programs built then allocate this size and inline a
 * pcw_snapshot_clear that zeroes names_len and cache_seg. Hiding the
 * private part (issue 26) must not move a byte. */
typedef struct pcw2_snapshot {
    size_t count;
    uint32_t data_size, busy;
    uint32_t *ids;
    unsigned char *data;
    uint64_t *name_off;
    uint32_t *name_len;
    char *names;
    uint64_t time_ns;
    pcw_snapshot_source *sources;
    size_t nsources;
    size_t cap, data_cap, names_len, names_cap, sources_cap;
    uint64_t *name_off_buf;
    uint32_t *name_len_buf;
    uint64_t cache_seg;
    void *name_cache;
} pcw2_snapshot;

#define SAME_OFFSET(f) (offsetof(pcw_snapshot, f) == offsetof(pcw2_snapshot, f))
_Static_assert(sizeof(pcw_snapshot) == sizeof(pcw2_snapshot), "pcw_snapshot's size is PCW_2's");
_Static_assert(_Alignof(pcw_snapshot) == _Alignof(pcw2_snapshot),
               "pcw_snapshot's alignment is PCW_2's");
_Static_assert(SAME_OFFSET(count) && SAME_OFFSET(data_size) && SAME_OFFSET(busy) &&
                   SAME_OFFSET(ids) && SAME_OFFSET(data) && SAME_OFFSET(name_off) &&
                   SAME_OFFSET(name_len) && SAME_OFFSET(names) && SAME_OFFSET(time_ns) &&
                   SAME_OFFSET(sources) && SAME_OFFSET(nsources),
               "pcw_snapshot's public fields are where PCW_2 had them");
_Static_assert(offsetof(pcw_snapshot, reserved) == offsetof(pcw2_snapshot, cap),
               "the private part starts where PCW_2's private fields did");

/* A program built against PCW_2's header: its inlined clear zeroes
 * names_len and cache_seg in place, then the library reads into the
 * snapshot again - and gets the rows and names right, as a clear by the
 * library does. */
Test(snapshot, cleared_as_pcw2_programs_inline_it)
{
    register_set("Set", 0);
    pcw_instance *in[3];
    in[0] = create("n0", 10), in[1] = create("n1", 11), in[2] = create("n2", 12);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    for (int round = 0; round < 3; round++) {
        /* The second and third reads may reuse the first's names (cache_seg). */
        cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
        expect_rows(&s, &cs->counters[0], 3, "n", 10);
        /* PCW_2's inline pcw_snapshot_clear, on its view of the struct. */
        pcw2_snapshot *old = (pcw2_snapshot *)(void *)&s;
        old->cache_seg = 0;
        old->count = old->names_len = old->nsources = 0;
        old->busy = 0, old->time_ns = 0, old->name_off = NULL, old->name_len = NULL;
        cr_assert_eq(s.count, 0);
    }
    /* And the library's own clear, then a read appended to nothing. */
    pcw_snapshot_clear(&s);
    cr_assert_eq(pcw_segment_read(seg, cs, &s, PCW_READ_APPEND), PCW_OK);
    expect_rows(&s, &cs->counters[0], 3, "n", 10);
    pcw_snapshot_free(&s);
    for (int i = 0; i < 3; i++)
        pcw_close_instance(in[i]);
    pcw_segment_close(seg);
}
