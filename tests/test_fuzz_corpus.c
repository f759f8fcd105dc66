/* SPDX-License-Identifier: MIT */
/*
 * tests/test_fuzz_corpus.c - the segment fuzzer's inputs, replayed in
 * make check under ASan+UBSan through the fuzz harness itself
 * (fuzz/segment/fuzz_segment.c):
 *
 *   - the seeds, made at build time from the current layout by
 *     fuzz/segment/make_seeds ($PCW_BUILD/fuzz/segment-seeds, or
 *     $PCW_FUZZ_SEEDS), must take the fuzzer past header parsing: every
 *     one opens, and together they hold live and dead countersets,
 *     instances, several blocks, a seqcount set, a callback set, a
 *     control-socket flag and segments far larger than 16 KiB;
 *   - every input in fuzz/segment/regressions (each once a crash or a
 *     hang) gets past the segment's version check (one made for an older
 *     layout exercises nothing) and runs through the harness cleanly.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <dirent.h>

#include "testutil.h" /* first: the harness's globals are named path and dir */
#include "../fuzz/segment/fuzz_segment.c"

TestSuite(fuzz_corpus, .timeout = 120);

typedef void (*input_fn)(const char *name, const uint8_t *data, size_t size, void *arg);

/* Call fn for every regular file in dir but README.md; returns how many. */
static size_t for_each_input(const char *folder, input_fn fn, void *arg)
{
    DIR *d = opendir(folder);
    cr_assert(d, "no directory %s", folder);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        char file[PATH_MAX];
        snprintf(file, sizeof file, "%s/%s", folder, e->d_name);
        size_t len;
        unsigned char *b = tu_read_file(file, 64u << 20, &len);
        cr_assert(b, "cannot read %s", file);
        fn(e->d_name, b, len, arg);
        free(b);
        n++;
    }
    closedir(d);
    return n;
}

typedef struct reach {
    size_t files, big, csets, dead_or_gaps, instances, multi_block, seqcount, callback, control;
} reach;

static void survey(const char *name, const uint8_t *data, size_t size, void *arg)
{
    reach *r = arg;
    cr_assert_eq(setup(), 0);
    write_input(data, size); /* as the fuzzer sees it */
    pcw_segment *seg;
    int rc = pcw_segment_open(&seg, path);
    cr_assert_eq(rc, PCW_OK, "seed %s does not open: %s (made for another layout?)", name,
                 pcw_status_str(rc));
    r->files++;
    r->big += size > 64 * 1024;
    r->control += (pcw_segment_provider(seg)->flags & PCW_SEG_F_CONTROL) != 0;
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    for (size_t i = 0; i < pcw_segment_counterset_count(seg); i++) {
        const pcw_counterset *cs = pcw_segment_counterset(seg, i);
        r->csets++;
        r->multi_block += cs->block_count > 1;
        r->seqcount += (cs->flags & PCW_CSET_F_SEQCOUNT) != 0;
        r->callback += (cs->flags & PCW_CSET_F_CALLBACK) != 0;
        cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK, "seed %s", name);
        r->instances += s.count;
    }
    char why[256];
    cr_assert_eq(pcw_segment_check(seg, why, sizeof why), PCW_OK, "seed %s: %s", name, why);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    /* And the whole harness, as the fuzzer runs it. */
    LLVMFuzzerTestOneInput(data, size);
}

/* On 9ef2b5d the seeds were committed files made for an older layout
 * (another counterset size): none opened, so the fuzzer only ever
 * exercised header parsing. */
Test(fuzz_corpus, seeds_match_the_current_layout)
{
    const char *seeds = getenv("PCW_FUZZ_SEEDS");
    char buf[PATH_MAX];
    if (!seeds || !*seeds) {
        const char *b = getenv("PCW_BUILD");
        snprintf(buf, sizeof buf, "%s/fuzz/segment-seeds", b && *b ? b : PCW_BUILD_DIR);
        seeds = buf;
    }
    reach r = {0};
    for_each_input(seeds, survey, &r);
    cr_assert_geq(r.files, 4, "%zu seeds in %s", r.files, seeds);
    cr_assert_gt(r.instances, 1000);
    cr_assert_gt(r.big, 0, "no seed larger than 64 KiB");
    cr_assert_gt(r.multi_block, 0);
    cr_assert_gt(r.seqcount, 0);
    cr_assert_gt(r.callback, 0);
    cr_assert_gt(r.control, 0);
}

/* A regression input made for an older layout stops at the version check
 * and exercises nothing of what it once found: each must get past it (it
 * may still be refused later - most are malformed on purpose). */
static void replay(const char *name, const uint8_t *data, size_t size, void *arg)
{
    (void)arg;
    cr_assert_eq(setup(), 0);
    write_input(data, size); /* as the fuzzer sees it */
    pcw_segment *seg = NULL;
    int rc = pcw_segment_open(&seg, path);
    cr_assert_neq(rc, PCW_E_VERSION,
                  "regression input %s is refused at the version check (made for another "
                  "layout?): remake it with make_seeds --regressions (fuzz/segment/regressions/"
                  "README.md)",
                  name);
    if (rc == PCW_OK)
        pcw_segment_close(seg);
    LLVMFuzzerTestOneInput(data, size); /* ASan, UBSan or a hang would end the test */
}

Test(fuzz_corpus, regressions_run_clean)
{
    for_each_input("fuzz/segment/regressions", replay, NULL);
}
