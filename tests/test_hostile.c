/* SPDX-License-Identifier: MIT */
/*
 * tests/test_hostile.c - the consumer against hostile segments.
 *
 * Each case takes the bytes of a real segment (made in-process with the
 * provider API), corrupts one thing, writes the result into the provider
 * directory and opens it: the consumer must answer with a specific error,
 * never crash, hang or read out of bounds (ASan watches the last).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <setjmp.h>
#include <sys/mman.h>

#include "pcw/consumer.h"
#include "common/layout.h"
#include "pcw/provider.h"
#include "testutil.h"

typedef struct vals {
    uint64_t value;
    uint32_t index;
} vals;

/* The pristine segment and where its parts are. */
static unsigned char *base;
static size_t base_len;
static uint64_t cset1, cset2, counters1, chunk1, nref0, rows0, stride;
static int ncase;

static uint64_t get64(const unsigned char *b, uint64_t off)
{
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
}
static uint32_t get32(const unsigned char *b, uint64_t off)
{
    uint32_t v;
    memcpy(&v, b + off, 4);
    return v;
}
static void put64(unsigned char *b, uint64_t off, uint64_t v)
{
    memcpy(b + off, &v, 8);
}
static void put32(unsigned char *b, uint64_t off, uint32_t v)
{
    memcpy(b + off, &v, 4);
}

#define HDR(f)   offsetof(pcw_seg_header, f)
#define CSET(f)  offsetof(pcw_seg_cset, f)
#define CNT(f)   offsetof(pcw_seg_counter, f)
#define CHUNK(f) offsetof(pcw_seg_chunk, f)

static void setup(void)
{
    tu_root_setup();
    pcw_provider *p;
    cr_assert_eq(pcw_provider_open(&p, NULL), PCW_OK);
    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "Value", c[0].size = 8;
    c[1].id = 2, c[1].name = "Index", c[1].size = 4, c[1].offset = 8;
    c[1].type = PERF_COUNTER_RAWCOUNT;
    /* A 256-byte block makes the slot chunk span several pages. */
    uint32_t sizes[1] = {256};
    /* A description long enough that the slot chunks start past the first
     * page, so shrunk_while_mapped can cut them off. */
    static char long_description[4001];
    memset(long_description, 'd', sizeof long_description - 1);
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Hostile",
                                  .description = long_description,
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 2,
                                  .counters = c,
                                  .block_count = 1,
                                  .block_sizes = sizes};
    pcw_registration *r1, *r2;
    cr_assert_eq(pcw_register(&r1, p, &info), PCW_OK);
    info.name = "Second";
    cr_assert_eq(pcw_register(&r2, p, &info), PCW_OK);
    static const char *names[] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++) {
        vals v = {100 + (uint64_t)i, (uint32_t)i};
        pcw_data d = {&v, sizeof v};
        pcw_instance *in;
        cr_assert_eq(pcw_create_instance(&in, r1, names[i], 1, &d), PCW_OK);
    }
    size_t len;
    unsigned char *b = tu_read_file(pcw_provider_path(p), 1u << 20, &len);
    cr_assert_not_null(b);
    uint64_t size = get64(b, HDR(size));
    base_len = (size_t)((size + 4095) & ~4095ull);
    cr_assert_leq(base_len, len);
    base = b;
    pcw_provider_close(p);
    cset1 = get64(base, HDR(cset_head));
    cset2 = get64(base, cset1 + CSET(next));
    counters1 = get64(base, cset1 + CSET(counters_off));
    chunk1 = get64(base, cset1 + CSET(chunk_head));
    stride = get32(base, cset1 + CSET(data_stride));
    uint32_t n = get32(base, chunk1 + CHUNK(nslots));
    nref0 = chunk1 + pcw__seg_chunk_names(n);
    rows0 = chunk1 + pcw__seg_chunk_rows(n);
    cr_assert(cset1 && cset2 && chunk1 && stride);
    cr_assert_gt(rows0 + n * stride, 8192, "the chunk must reach past two pages");
    cr_assert_geq(chunk1, 4096, "the chunk must start past the first page");
}

static void teardown(void)
{
    free(base);
    tu_root_teardown();
}

TestSuite(hostile, .init = setup, .fini = teardown, .timeout = 30);

/* A private copy of the pristine segment to corrupt. */
static unsigned char *copy(void)
{
    unsigned char *b = malloc(base_len);
    memcpy(b, base, base_len);
    return b;
}

/* Write b[0, len) as a new segment file; return its path. */
static const char *place(const unsigned char *b, size_t len)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d-case%d.seg", tu_provider_dir(geteuid()), getpid(), ncase++);
    cr_assert_eq(tu_write_file(path, b, len, 0600), 0);
    return path;
}

/* Open b; the status of the open, or (if it opened) of reading every
 * counterset and then of pcw_segment_check. Frees b. */
static int try_segment(unsigned char *b, size_t len, int *stage)
{
    pcw_segment *seg;
    int rc = pcw_segment_open(&seg, place(b, len));
    free(b);
    *stage = 0;
    if (rc != PCW_OK)
        return rc;
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    *stage = 1;
    for (size_t i = 0; rc == PCW_OK && i < pcw_segment_counterset_count(seg); i++)
        rc = pcw_segment_read(seg, pcw_segment_counterset(seg, i), &s, 0);
    if (rc == PCW_OK) {
        *stage = 2;
        char why[256];
        rc = pcw_segment_check(seg, why, sizeof why);
    }
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    return rc;
}

/* The open must fail with want. */
#define OPEN_FAILS(b, len, want, what)                                                             \
    do {                                                                                           \
        int st_, rc_ = try_segment((b), (len), &st_);                                              \
        cr_assert_eq(rc_, (want), "%s: got %d (%s) at stage %d", (what), rc_, pcw_status_str(rc_), \
                     st_);                                                                         \
        cr_assert_eq(st_, 0, "%s: the open should have failed", (what));                           \
    } while (0)

/* The open must succeed and reading or checking fail with want. */
#define READ_FAILS(b, len, want, what)                                                             \
    do {                                                                                           \
        int st_, rc_ = try_segment((b), (len), &st_);                                              \
        cr_assert_eq(rc_, (want), "%s: got %d (%s) at stage %d", (what), rc_, pcw_status_str(rc_), \
                     st_);                                                                         \
        cr_assert_neq(st_, 0, "%s: the open should have succeeded", (what));                       \
    } while (0)

Test(hostile, pristine_copy_reads)
{
    int st;
    cr_assert_eq(try_segment(copy(), base_len, &st), PCW_OK);
    cr_assert_eq(st, 2);
}

Test(hostile, truncated_files)
{
    OPEN_FAILS(copy(), 0, PCW_E_CORRUPT, "empty file");
    OPEN_FAILS(copy(), 100, PCW_E_CORRUPT, "shorter than the header");
    OPEN_FAILS(copy(), sizeof(pcw_seg_header) - 1, PCW_E_CORRUPT, "header minus one");
    OPEN_FAILS(copy(), cset1 + 16, PCW_E_CORRUPT, "mid-counterset, size lies");
    OPEN_FAILS(copy(), rows0 + 3 * stride, PCW_E_CORRUPT, "mid-chunk, size lies");
    /* The same with header.size agreeing with the short file. */
    unsigned char *b = copy();
    put64(b, HDR(size), cset1 + 16);
    OPEN_FAILS(b, cset1 + 16, PCW_E_CORRUPT, "mid-counterset, consistent size");
    b = copy();
    put64(b, HDR(size), rows0 + 3 * stride);
    READ_FAILS(b, rows0 + 3 * stride, PCW_E_CORRUPT, "mid-chunk, consistent size");
}

Test(hostile, random_bytes)
{
    srand(12345);
    unsigned char *b = copy();
    for (size_t i = 0; i < base_len; i++)
        b[i] = (unsigned char)rand();
    OPEN_FAILS(b, base_len, PCW_E_CORRUPT, "all random");
    /* A valid header over a random arena. */
    for (int round = 0; round < 20; round++) {
        b = copy();
        for (size_t i = sizeof(pcw_seg_header); i < base_len; i++)
            b[i] = (unsigned char)rand();
        int st, rc = try_segment(b, base_len, &st);
        cr_assert_eq(rc, PCW_E_CORRUPT, "random arena %d: %d at stage %d", round, rc, st);
    }
    /* Random bytes sprinkled over a valid segment: anything but a crash. */
    for (int round = 0; round < 200; round++) {
        b = copy();
        for (int k = 0; k < 8; k++)
            b[(size_t)rand() % base_len] = (unsigned char)rand();
        int st, rc = try_segment(b, base_len, &st);
        cr_assert(rc == PCW_OK || rc == PCW_E_CORRUPT || rc == PCW_E_VERSION ||
                      rc == PCW_E_PERMISSION,
                  "sprinkled %d: %d", round, rc);
    }
}

Test(hostile, header_fields)
{
    unsigned char *b = copy();
    put64(b, HDR(magic), PCW_SEG_MAGIC + 1);
    OPEN_FAILS(b, base_len, PCW_E_CORRUPT, "bad magic");
    static const size_t version_fields[] = {
        HDR(layout_version), HDR(byte_order), HDR(header_size), HDR(cset_size),
        HDR(counter_size),   HDR(chunk_size)};
    for (size_t i = 0; i < sizeof version_fields / sizeof version_fields[0]; i++) {
        b = copy();
        put32(b, version_fields[i], get32(b, version_fields[i]) + 8);
        OPEN_FAILS(b, base_len, PCW_E_VERSION, "version/struct size field");
    }
    b = copy();
    put32(b, HDR(byte_order), 0x04030201u);
    OPEN_FAILS(b, base_len, PCW_E_VERSION, "other byte order");
    b = copy();
    put64(b, HDR(arena_off), 8);
    OPEN_FAILS(b, base_len, PCW_E_CORRUPT, "arena inside the header");
    b = copy();
    put64(b, HDR(arena_off), 1ull << 50);
    OPEN_FAILS(b, base_len, PCW_E_CORRUPT, "arena far away");
    b = copy();
    put64(b, HDR(size), base_len + 4096);
    OPEN_FAILS(b, base_len, PCW_E_CORRUPT, "size larger than the file");
    b = copy();
    put64(b, HDR(size), 1ull << 50);
    OPEN_FAILS(b, base_len, PCW_E_CORRUPT, "huge size");
    b = copy();
    put64(b, HDR(size), 16);
    OPEN_FAILS(b, base_len, PCW_E_CORRUPT, "size smaller than the header");
    b = copy();
    put32(b, HDR(uid), 12345);
    OPEN_FAILS(b, base_len, PCW_E_PERMISSION, "header claims another uid");
    /* A closed segment opens, but its provider is gone. */
    b = copy();
    put32(b, HDR(state), PCW_SEG_STATE_CLOSED);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, place(b, base_len)), PCW_OK);
    free(b);
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED);
    pcw_segment_close(seg);
}

Test(hostile, counterset_list)
{
    uint64_t size = get64(base, HDR(size));
    struct {
        uint64_t off, val;
        const char *what;
    } cases[] = {
        {HDR(cset_head), size + 64, "cset_head past size"},
        {HDR(cset_head), 1ull << 60, "cset_head huge"},
        {HDR(cset_head), 64, "cset_head inside the header"},
        {HDR(cset_head), cset1 + 4, "cset_head misaligned"},
        {HDR(cset_head), size - 8, "cset straddles the end"},
        {cset1 + CSET(next), cset1, "cset list cycle (self)"},
        {cset2 + CSET(next), cset1, "cset list cycle (back)"},
        {cset1 + CSET(next), size + 8, "cset next past size"},
        {cset1 + CSET(counters_off), 1ull << 40, "counters_off out of range"},
        {cset1 + CSET(counters_off), counters1 + 4, "counters_off misaligned"},
        {cset1 + CSET(counters_off), size - 16, "counters straddle the end"},
        {cset1 + CSET(blocks_off), size + 8, "blocks_off out of range"},
        {cset1 + CSET(name) + offsetof(pcw_seg_str, off), size + 1, "name_off out of range"},
        {cset1 + CSET(name) + offsetof(pcw_seg_str, off), ~0ull - 2, "name_off wraps"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *b = copy();
        put64(b, cases[i].off, cases[i].val);
        OPEN_FAILS(b, base_len, PCW_E_CORRUPT, cases[i].what);
    }
    struct {
        uint64_t off;
        uint32_t val;
        const char *what;
    } c32[] = {
        {cset1 + CSET(counter_count), 0xFFFFFFFFu, "counter_count ~0"},
        {cset1 + CSET(counter_count), PCW_MAX_COUNTERS + 1, "counter_count > max"},
        {cset1 + CSET(counter_count), 3000, "counter_count past the segment"},
        {cset1 + CSET(counter_count), 0, "counter_count 0"},
        {cset1 + CSET(block_count), 0xFFFFFFFFu, "block_count huge"},
        {cset1 + CSET(block_count), 0, "block_count 0 (counters name block 0)"},
        {cset1 + CSET(data_size), 0xFFFFFFF8u, "data_size huge"},
        {cset1 + CSET(data_size), 7, "data_size not a multiple of 8"},
        {cset1 + CSET(data_size), 8, "data_size smaller than the block"},
        {cset1 + CSET(data_stride), 8, "data_stride inconsistent"},
        {cset1 + CSET(flags), 1u << 20, "unknown counterset flag"},
        {cset1 + CSET(instance_type), 99, "instance type"},
        {cset1 + CSET(state), 7, "cset state"},
        {cset1 + CSET(name) + offsetof(pcw_seg_str, len), 0, "empty counterset name"},
        {cset1 + CSET(name) + offsetof(pcw_seg_str, len), 0xFFFFFFFFu, "name len huge"},
        {counters1 + CNT(size), 3, "counter size 3"},
        {counters1 + CNT(block), 5, "counter block past block_count"},
        {counters1 + CNT(offset), 256, "counter past its block"},
        {counters1 + CNT(offset), 4, "counter misaligned"},
        {counters1 + CNT(name) + offsetof(pcw_seg_str, len), 1u << 20, "counter name len"},
    };
    for (size_t i = 0; i < sizeof c32 / sizeof c32[0]; i++) {
        unsigned char *b = copy();
        put32(b, c32[i].off, c32[i].val);
        OPEN_FAILS(b, base_len, PCW_E_CORRUPT, c32[i].what);
    }
    /* A dead counterset is skipped, not loaded. */
    unsigned char *b = copy();
    put32(b, cset1 + CSET(state), PCW_CSET_DEAD);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, place(b, base_len)), PCW_OK);
    free(b);
    cr_assert_eq(pcw_segment_counterset_count(seg), 1);
    cr_assert_str_eq(pcw_segment_counterset(seg, 0)->name, "Second");
    pcw_segment_close(seg);
}

Test(hostile, chunks_and_slots)
{
    uint64_t size = get64(base, HDR(size));
    struct {
        uint64_t off, val;
        const char *what;
    } cases[] = {
        {cset1 + CSET(chunk_head), size + 64, "chunk_head past size"},
        {cset1 + CSET(chunk_head), 1ull << 62, "chunk_head huge"},
        {cset1 + CSET(chunk_head), chunk1 + 4, "chunk_head misaligned"},
        {cset1 + CSET(chunk_head), cset2, "chunk_head at another counterset"},
        {chunk1 + CHUNK(next), size + 64, "chunk next past size"},
        {chunk1 + CHUNK(next), chunk1, "chunk list cycle (self)"},
        {chunk1 + CHUNK(next), cset1, "chunk list goes backwards"},
        {chunk1 + CHUNK(cset_off), cset2, "chunk of another counterset"},
        {nref0, PCW_SEG_NAME_REF(size + 8, 5), "instance name past size"},
        {nref0, PCW_SEG_NAME_REF((1ull << 48) - 8, 5), "instance name offset wraps"},
        {nref0, get64(base, nref0) + (1u << 16), "instance name misaligned"},
        {nref0, (get64(base, nref0) & ~0xFFFFull) | (PCW_MAX_INSTANCE_NAME_BYTES + 1),
         "instance name too long"},
        {nref0, get64(base, nref0) | 0xFFFF, "instance name len huge"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *b = copy();
        put64(b, cases[i].off, cases[i].val);
        READ_FAILS(b, base_len, PCW_E_CORRUPT, cases[i].what);
    }
    struct {
        uint64_t off;
        uint32_t val;
        const char *what;
    } c32[] = {
        {chunk1 + CHUNK(nslots), 0xFFFFFFFFu, "nslots huge"},
        {chunk1 + CHUNK(nslots), 70000, "nslots over the chunk limit"},
        {chunk1 + CHUNK(nslots), 0, "nslots 0"},
        {chunk1 + CHUNK(nslots), 65536, "nslots past the segment"},
        {chunk1 + CHUNK(first_slot), 5, "first_slot not 0"},
    };
    for (size_t i = 0; i < sizeof c32 / sizeof c32[0]; i++) {
        unsigned char *b = copy();
        put32(b, c32[i].off, c32[i].val);
        READ_FAILS(b, base_len, PCW_E_CORRUPT, c32[i].what);
    }
    /* slot_count is informational: a lie changes nothing a reader does. */
    unsigned char *b = copy();
    put32(b, cset1 + CSET(slot_count), 0xFFFFFFFFu);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, place(b, base_len)), PCW_OK);
    free(b);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, pcw_segment_find_counterset(seg, "Hostile"), &s, 0), PCW_OK);
    cr_assert_eq(s.count, 3);
    pcw_snapshot_free(&s);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_segment_close(seg);
}

Test(hostile, instance_names_checked)
{
    /* Names are whatever bytes the provider wrote: --check rejects
     * invalid UTF-8 and duplicates; plain reads return them. */
    uint64_t n0 = PCW_SEG_NAME_OFF(get64(base, nref0));
    uint64_t n1 = PCW_SEG_NAME_OFF(get64(base, nref0 + 8));
    unsigned char *b = copy();
    b[n0] = 0xFF;
    int st, rc = try_segment(b, base_len, &st);
    cr_assert_eq(rc, PCW_E_CORRUPT);
    cr_assert_eq(st, 2, "only the check sees a bad name");
    b = copy();
    memcpy(b + n1, "ALPHA", 5); /* "beta" -> "ALPH" (len 4)... */
    put64(b, nref0 + 8, PCW_SEG_NAME_REF(n1, 5));
    rc = try_segment(b, base_len, &st);
    cr_assert_eq(rc, PCW_E_CORRUPT, "duplicate names");
    cr_assert_eq(st, 2);
    b = copy();
    put64(b, nref0, PCW_SEG_NAME_REF(n0, 0));
    rc = try_segment(b, base_len, &st);
    cr_assert_eq(rc, PCW_E_CORRUPT, "empty name in a multi-instance set");
    b = copy();
    put32(b, cset1 + CSET(instance_type), PCW_SINGLE_INSTANCE);
    rc = try_segment(b, base_len, &st);
    cr_assert_eq(rc, PCW_E_CORRUPT, "several instances in a single-instance set");
    cr_assert_eq(st, 2);
}

Test(hostile, not_regular_files, .timeout = 20)
{
    const char *dir = tu_provider_dir(geteuid());
    char good[PATH_MAX], link[PATH_MAX], fifo[PATH_MAX], sub[PATH_MAX];
    snprintf(good, sizeof good, "%s", place(base, base_len));
    snprintf(link, sizeof link, "%s/1-link.seg", dir);
    snprintf(fifo, sizeof fifo, "%s/2-fifo.seg", dir);
    snprintf(sub, sizeof sub, "%s/3-dir.seg", dir);
    cr_assert_eq(symlink(good, link), 0);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    pcw_segment *seg = NULL;
    cr_assert_eq(pcw_segment_open(&seg, link), PCW_E_PERMISSION, "symlink");
    cr_assert_null(seg);
    long long t0 = tu_now_ms();
    cr_assert_eq(pcw_segment_open(&seg, fifo), PCW_E_PERMISSION, "FIFO");
    cr_assert_eq(pcw_segment_open(&seg, sub), PCW_E_PERMISSION, "directory");
    cr_assert_lt(tu_now_ms() - t0, 2000, "no hang on a FIFO");
    /* A file owned by someone else in our directory. */
    char other[PATH_MAX];
    snprintf(other, sizeof other, "%s", place(base, base_len));
    cr_assert_eq(chown(other, 12345, 12345), 0);
    cr_assert_eq(pcw_segment_open(&seg, other), PCW_E_PERMISSION, "foreign owner");
    /* The consumer opens only the good one and counts the rest. */
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    size_t skipped = 0;
    cr_assert_eq(pcw_consumer_refresh(c, &skipped), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 1);
    cr_assert_str_eq(pcw_segment_provider(pcw_consumer_segment(c, 0))->path, good);
    cr_assert_eq(skipped, 4, "symlink, FIFO, directory, foreign file");
    pcw_consumer_close(c);
}

Test(hostile, consumer_skips_every_corrupt_file)
{
    place(base, base_len);
    unsigned char *b = copy();
    put64(b, HDR(magic), 0);
    place(b, base_len);
    put64(b, HDR(magic), PCW_SEG_MAGIC);
    put32(b, HDR(layout_version), 99);
    place(b, base_len);
    place(b, 10);
    free(b);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    size_t skipped = 0;
    cr_assert_eq(pcw_consumer_refresh(c, &skipped), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 1);
    cr_assert_eq(skipped, 3);
    cr_assert_eq(pcw_consumer_counterset_count(c), 2);
    pcw_consumer_close(c);
}

Test(hostile, shrunk_while_mapped)
{
    const char *path = place(base, base_len);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Hostile");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 3);
    cr_assert_eq(truncate(path, 4096), 0);
    /* The chunk lies past 4096: touching it raises SIGBUS, which the
     * guard turns into an error. */
    int rc = pcw_segment_read(seg, cs, &s, 0);
    cr_assert(rc == PCW_E_TRUNCATED || rc == PCW_E_CORRUPT, "read after shrink: %d", rc);
    cr_assert_eq(s.count, 0, "nothing half-read is returned");
    rc = pcw_segment_read_instance(seg, cs, 2, &s, 0);
    cr_assert(rc == PCW_E_TRUNCATED || rc == PCW_E_CORRUPT, "read_instance: %d", rc);
    rc = pcw_segment_check(seg, NULL, 0);
    cr_assert(rc == PCW_E_TRUNCATED || rc == PCW_E_CORRUPT, "check after shrink: %d", rc);
    /* Shrunk to nothing: even the header faults. */
    cr_assert_eq(truncate(path, 0), 0);
    int changed;
    rc = pcw_segment_refresh(seg, &changed);
    cr_assert(rc == PCW_E_TRUNCATED || rc == PCW_E_CORRUPT, "refresh: %d", rc);
    cr_assert_eq(pcw_segment_generation(seg), 0);
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* In a child: SIGBUS from a mapping pcw does not guard. */
static void unrelated_sigbus(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/victim", tu_root);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 8192) != 0)
        _exit(3);
    volatile unsigned char *m = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED || ftruncate(fd, 0) != 0)
        _exit(4);
    (void)m[4096]; /* past the end of the file: SIGBUS */
    _exit(5);
}

static void exit_42(int sig)
{
    (void)sig;
    _exit(42);
}

/* Fork a child that installs `prev` as SIGBUS handler, has pcw install its
 * guard on top (by opening a segment), checks that the guard still works,
 * then faults outside any segment. Returns its wait status. */
static int sigbus_child(void (*prev)(int))
{
    const char *path = place(base, base_len);
    pid_t pid = tu_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = prev;
        sigaction(SIGBUS, &sa, NULL);
        pcw_segment *seg;
        if (pcw_segment_open(&seg, path) != PCW_OK)
            _exit(10);
        pcw_snapshot s = PCW_SNAPSHOT_INIT;
        if (truncate(path, 4096) != 0)
            _exit(11);
        int rc = pcw_segment_read(seg, pcw_segment_find_counterset(seg, "Hostile"), &s, 0);
        if (rc != PCW_E_TRUNCATED && rc != PCW_E_CORRUPT)
            _exit(12);
        unrelated_sigbus();
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return st;
}

Test(hostile, unrelated_sigbus_still_kills)
{
    /* This worker must not have installed the guard before the fork: the
     * child's pcw guard then records SIG_DFL (or exit_42) as previous. */
    int st = sigbus_child(SIG_DFL);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS, "child should die of SIGBUS; status %#x",
              st);
    st = sigbus_child(exit_42);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 42, "the previous handler should run; status %#x",
              st);
}
