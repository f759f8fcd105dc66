/* SPDX-License-Identifier: MIT */
/*
 * tests/test_amplify.c - regression tests for issue 9 item 2: a small
 * hostile segment must not make a consumer work or allocate more than a
 * small multiple of its size. Structures that share bytes are what such a
 * segment needs (ten countersets over one 4096-counter array whose strings
 * all point at one 4 KB string: 665 MB from a 487 KB file; chunks laid over
 * chunks), so the consumer refuses overlap, and pcwdump --check names it.
 *
 * Each case builds a real segment with the provider API, then rewrites a
 * few offsets the way an attacker would, using only fields that layout
 * versions 1 and 2 share, and measures the consumer in a child process
 * (its peak RSS) so that one case's allocations do not hide another's.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pcw/consumer.h"
#include "common/layout.h"
#include "pcw/provider.h"
#include "testutil.h"

TestSuite(amplify, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

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

#define CSET(f)  offsetof(pcw_seg_cset, f)
#define CNT(f)   offsetof(pcw_seg_counter, f)
#define CHUNK(f) offsetof(pcw_seg_chunk, f)

/* The counterset list of segment b, in order. */
static size_t csets_of(const unsigned char *b, uint64_t *out, size_t max)
{
    size_t n = 0;
    for (uint64_t off = get64(b, offsetof(pcw_seg_header, cset_head)); off && n < max;
         off = get64(b, off + CSET(next)))
        out[n++] = off;
    return n;
}

/* Open `path` in a child, read every counterset and check the segment; the
 * child reports the status of the first failure and its peak RSS growth
 * in bytes. */
typedef struct outcome {
    int rc;
    long long rss_growth;
    char why[256];
} outcome;

static outcome consume(const char *path)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = tu_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        struct rusage r0, r1;
        getrusage(RUSAGE_SELF, &r0);
        outcome o = {0};
        pcw_segment *seg;
        o.rc = pcw_segment_open(&seg, path);
        if (o.rc == PCW_OK) {
            pcw_snapshot s = PCW_SNAPSHOT_INIT;
            for (size_t i = 0; o.rc == PCW_OK && i < pcw_segment_counterset_count(seg); i++)
                o.rc = pcw_segment_read(seg, pcw_segment_counterset(seg, i), &s, 0);
            if (o.rc == PCW_OK)
                o.rc = pcw_segment_check(seg, o.why, sizeof o.why);
            pcw_snapshot_free(&s);
            pcw_segment_close(seg);
        }
        getrusage(RUSAGE_SELF, &r1);
        o.rss_growth = (r1.ru_maxrss - r0.ru_maxrss) * 1024LL;
        if (write(fds[1], &o, sizeof o) != (ssize_t)sizeof o)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    outcome o;
    cr_assert_eq(read(fds[0], &o, sizeof o), (ssize_t)sizeof o, "the consumer child crashed");
    close(fds[0]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    return o;
}

/* The bound of docs/design.md §9: a few times the segment, plus slack for
 * the process itself. */
static void assert_bounded(const outcome *o, size_t file_len, const char *what)
{
    long long limit = 4LL * (long long)file_len + (8LL << 20);
    cr_assert_leq(o->rss_growth, limit, "%s: the consumer grew by %lld bytes for a %zu-byte file",
                  what, o->rss_growth, file_len);
}

/* pcwdump --check over the provider folder: its output. */
static char *pcwdump_check(void)
{
    static char out[8192];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "PCW_DIR=%s %s/pcwdump --check 2>&1", tu_root, PCW_BUILD_DIR);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    pclose(f);
    return out;
}

/* Ten countersets over one 4096-counter array whose strings all point at
 * one 4 KB string. */
Test(amplify, countersets_sharing_a_counter_array_and_strings)
{
    pcw_provider *p;
    cr_assert_eq(pcw_provider_open(&p, NULL), PCW_OK);
    static pcw_counter_desc big[4096];
    static char names[4096][8];
    for (uint32_t i = 0; i < 4096; i++) {
        big[i] = pcw_counter_desc_default();
        big[i].id = i;
        big[i].offset = 8 * i;
        snprintf(names[i], sizeof names[i], "c%u", i);
        big[i].name = names[i];
    }
    static char desc[4097];
    memset(desc, 'x', 4096);
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "S0",
                                  .description = desc,
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 4096,
                                  .counters = big};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    char nm[10][8];
    for (int k = 1; k < 10; k++) {
        snprintf(nm[k], sizeof nm[k], "S%d", k);
        info.name = nm[k];
        cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    }
    size_t len;
    unsigned char *b = tu_read_file(pcw_provider_path(p), 64u << 20, &len);
    cr_assert_not_null(b);
    pcw_provider_close(p);

    uint64_t cs[10];
    cr_assert_eq(csets_of(b, cs, 10), 10);
    uint64_t arr = get64(b, cs[0] + CSET(counters_off));
    pcw_seg_str big_str;
    memcpy(&big_str, b + cs[0] + CSET(description), sizeof big_str);
    cr_assert_eq(big_str.len, 4096);
    /* Every counterset uses the first one's counters; every string of
     * every counter is the 4 KB description. The other countersets' own
     * arrays become unused bytes, then the file is cut to what is used. */
    for (int k = 1; k < 10; k++)
        put64(b, cs[k] + CSET(counters_off), arr);
    for (uint32_t i = 0; i < 4096; i++) {
        uint64_t c = arr + (uint64_t)i * sizeof(pcw_seg_counter);
        memcpy(b + c + CNT(name), &big_str, sizeof big_str);
        memcpy(b + c + CNT(description), &big_str, sizeof big_str);
        memcpy(b + c + CNT(uri), &big_str, sizeof big_str);
        memcpy(b + c + CNT(symbol), &big_str, sizeof big_str);
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d-0000000000000001.seg", tu_provider_dir(geteuid()), getpid());
    cr_assert_eq(tu_write_file(path, b, len, 0600), 0);
    free(b);

    outcome o = consume(path);
    cr_assert_eq(o.rc, PCW_E_CORRUPT, "shared counter arrays and strings: got %d (%s)", o.rc,
                 pcw_status_str(o.rc));
    assert_bounded(&o, len, "shared counter arrays");
    char *out = pcwdump_check();
    cr_assert(strstr(out, "CORRUPT") && strstr(out, "overlap"), "pcwdump --check says:\n%s", out);
}

/* Chunks laid over chunks: each link points into the previous chunk. */
Test(amplify, overlapping_chunks)
{
    pcw_provider *p;
    cr_assert_eq(pcw_provider_open(&p, NULL), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "v";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Chunks",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    static char name[1001];
    memset(name, 'n', 1000);
    for (int i = 0; i < 64; i++) {
        pcw_instance *in;
        snprintf(name + 990, 10, "%09d", i);
        pcw_data d = {NULL, 8};
        cr_assert_eq(pcw_create_instance(&in, r, name, 1, &d), PCW_OK);
    }
    size_t len;
    unsigned char *b = tu_read_file(pcw_provider_path(p), 64u << 20, &len);
    cr_assert_not_null(b);
    pcw_provider_close(p);
    uint64_t cs[1];
    cr_assert_eq(csets_of(b, cs, 1), 1);
    uint64_t ch = get64(b, cs[0] + CSET(chunk_head));
    uint32_t n = get32(b, ch + CHUNK(nslots));
    cr_assert_eq(n, 64);
    /* 300 chunk headers, each 64 bytes past the last, each claiming the
     * 64 slots that follow it: every slot is read hundreds of times. */
    uint64_t prev = ch;
    uint32_t first = n;
    for (int k = 0; k < 300; k++) {
        uint64_t next = prev + 64;
        if (next + sizeof(pcw_seg_chunk) > len)
            break;
        put64(b, prev + CHUNK(next), next);
        put64(b, next + CHUNK(next), 0);
        put32(b, next + CHUNK(first_slot), first);
        put32(b, next + CHUNK(nslots), n);
        put64(b, next + CHUNK(cset_off), cs[0]);
        first += n;
        prev = next;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d-0000000000000002.seg", tu_provider_dir(geteuid()), getpid());
    cr_assert_eq(tu_write_file(path, b, len, 0600), 0);
    free(b);
    outcome o = consume(path);
    cr_assert_eq(o.rc, PCW_E_CORRUPT, "overlapping chunks: got %d (%s)", o.rc,
                 pcw_status_str(o.rc));
    assert_bounded(&o, len, "overlapping chunks");
    char *out = pcwdump_check();
    cr_assert(strstr(out, "CORRUPT"), "pcwdump --check says:\n%s", out);
}

/* A second counterset's chunk laid over the first one's: its slots are the
 * first's, read again under another name. */
Test(amplify, countersets_sharing_chunk_bytes)
{
    pcw_provider *p;
    cr_assert_eq(pcw_provider_open(&p, NULL), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "v";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "A",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *ra, *rb;
    cr_assert_eq(pcw_register(&ra, p, &info), PCW_OK);
    info.name = "B";
    cr_assert_eq(pcw_register(&rb, p, &info), PCW_OK);
    pcw_data d = {NULL, 8};
    pcw_instance *in;
    char name[16];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "a%d", i);
        cr_assert_eq(pcw_create_instance(&in, ra, name, 1, &d), PCW_OK);
    }
    size_t len;
    unsigned char *b = tu_read_file(pcw_provider_path(p), 64u << 20, &len);
    cr_assert_not_null(b);
    pcw_provider_close(p);
    uint64_t cs[2];
    cr_assert_eq(csets_of(b, cs, 2), 2);
    /* B's first chunk: a header written 1216 bytes into A's chunk, over
     * its data (so A's own names and generations stay intact). */
    uint64_t ach = get64(b, cs[0] + CSET(chunk_head)), fake = ach + 1216;
    put64(b, cs[1] + CSET(chunk_head), fake);
    put64(b, fake + CHUNK(next), 0);
    put32(b, fake + CHUNK(first_slot), 0);
    put32(b, fake + CHUNK(nslots), 8);
    put64(b, fake + CHUNK(cset_off), cs[1]);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%d-0000000000000003.seg", tu_provider_dir(geteuid()), getpid());
    cr_assert_eq(tu_write_file(path, b, len, 0600), 0);
    free(b);
    outcome o = consume(path);
    cr_assert_eq(o.rc, PCW_E_CORRUPT, "a chunk over another counterset's: got %d (%s)", o.rc,
                 pcw_status_str(o.rc));
    char *out = pcwdump_check();
    cr_assert(strstr(out, "CORRUPT") && strstr(out, "overlap"), "pcwdump --check says:\n%s", out);
}
