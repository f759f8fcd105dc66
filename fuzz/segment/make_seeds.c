/* SPDX-License-Identifier: MIT */
/*
 * fuzz/segment/make_seeds.c - writes the seed corpus of fuzz_segment: real
 * segments made with the provider API, copied and cut to header.size
 * (rounded up to 4096; a provider's file starts at 1 MiB).
 *
 * The Makefile builds and runs it whenever a header changes, into
 * $(BUILD)/fuzz/segment-seeds, so the seeds always have the current
 * layout (committed seeds went stale once, and the fuzzer then exercised
 * nothing but header parsing). By hand:
 *
 *   make build/fuzz/segment-seeds/.stamp
 *
 * Every seed opens and passes pcw_segment_check (tests/test_fuzz_corpus.c
 * checks that, and what the seeds reach). Keep each below the fuzzer's
 * -max_len (FUZZ_MAX_LEN in the Makefile).
 *
 *   make_seeds --regressions fuzz/segment/regressions
 *
 * instead remakes, in the current layout, the regression inputs whose bug
 * has a shape a seed can be bent into (regressions[] below): after a
 * layout change, since an input made for an older layout stops at the
 * version check and exercises nothing (tests/test_fuzz_corpus.c fails on
 * one). Commit what it writes.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <pcw/provider.h>

static char root[] = "/tmp/pcw-seeds-XXXXXX";

/* Copy the provider's segment, cut to its used size, to outdir/name. */
static void save(pcw_provider *p, const char *outdir, const char *name)
{
    int in = open(pcw_provider_path(p), O_RDONLY);
    pcw_seg_header h; /* this process is the provider, and idle: read it from the file */
    if (in < 0 || pread(in, &h, sizeof h, 0) != (ssize_t)sizeof h) {
        perror("read segment header");
        exit(1);
    }
    uint64_t size = (h.size + 4095) & ~4095ull;
    char *buf = malloc(size);
    if (in < 0 || !buf || read(in, buf, size) != (ssize_t)size) {
        perror("read segment");
        exit(1);
    }
    close(in);
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s/%s", outdir, name);
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0) {
        perror(out);
        exit(1);
    }
    printf("%s: %llu bytes\n", out, (unsigned long long)size);
    free(buf);
}

static pcw_registration *reg(pcw_provider *p, const char *name, uint32_t type, uint32_t flags,
                             uint32_t nblocks)
{
    pcw_counter_desc c[3] = {pcw_counter_desc_default(), pcw_counter_desc_default(),
                             pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "Total", c[0].size = 8, c[0].description = "All of them";
    c[1].id = 2, c[1].name = "Fraction", c[1].size = 4, c[1].offset = 8;
    c[1].type = PERF_RAW_FRACTION, c[1].base_ref = PCW_REF(3);
    c[2].id = 3, c[2].name = "Base", c[2].size = 4, c[2].offset = 12, c[2].type = PERF_RAW_BASE;
    if (nblocks > 1)
        c[2].block = 1, c[2].offset = 0;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .flags = flags,
                                  .name = name,
                                  .description = "seed",
                                  .guid = "{1}",
                                  .uri = "urn:seed",
                                  .symbol = "SEED",
                                  .instance_type = type,
                                  .counter_count = 3,
                                  .counters = c};
    pcw_registration *r;
    if (pcw_register(&r, p, &info) != PCW_OK)
        exit(1);
    return r;
}

static pcw_instance *inst(pcw_registration *r, const char *name, uint32_t nblocks)
{
    uint64_t b0[2] = {123456789, 0x0000000a00000003ull}, b1 = 10;
    pcw_data d[2] = {{b0, nblocks > 1 ? 12 : 16}, {&b1, 4}};
    pcw_instance *in;
    if (pcw_create_instance(&in, r, name, nblocks, d) != PCW_OK)
        exit(1);
    return in;
}

static int control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)req, (void)info, (void)ctx;
    return PCW_OK;
}

static int callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)type, (void)info, (void)ctx;
    return PCW_OK;
}

PCW_HISTOGRAM_TYPE(seed_latency, PCW_HIST_UNIT_NS, 2, -20, -4);
PCW_HISTOGRAM_TYPE(seed_sizes, PCW_HIST_UNIT_ONE, -1, 0, 16);
struct seed_hist {
    uint64_t requests;
    seed_latency latency;
    seed_sizes sizes;
};

static int histograms(pcw_provider *p)
{
    static const pcw_counter_desc c[] = {
        PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct seed_hist, requests),
        PCW_HISTOGRAM_COUNTER(2, "Latency", struct seed_hist, latency, seed_latency),
        PCW_HISTOGRAM_COUNTER_EX(3, "Sizes", struct seed_hist, sizes, seed_sizes,
                                 PCW_AGGREGATE_UNDEFINED, PCW_DETAIL_ADVANCED, "bytes"),
    };
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Histograms",
                                  .instance_type = PCW_MULTI_AGGREGATE,
                                  .counter_count = 3,
                                  .counters = c};
    pcw_registration *r;
    int rc = pcw_register(&r, p, &info);
    for (int i = 0; rc == PCW_OK && i < 2; i++) {
        static struct seed_hist h[2];
        for (uint64_t v = 0; v < 40; v++) {
            seed_latency_observe(&h[i].latency, v * v * 997 * (uint64_t)(i + 1));
            seed_sizes_observe(&h[i].sizes, v << v % 20);
        }
        h[i].requests = 40;
        pcw_data d = {&h[i], sizeof h[i]};
        pcw_instance *in;
        rc = pcw_create_instance(&in, r, i ? "h1" : "h0", 1, &d);
    }
    return rc;
}

/* Remove the private root and the provider folder made in it. */
static void remove_root(const pcw_provider_options *o)
{
    char pdir[PATH_MAX], name[32];
    if (pcw__dir_name(name, sizeof name, geteuid()) == 0 &&
        (size_t)snprintf(pdir, sizeof pdir, "%s/%s", o->dir, name) < sizeof pdir)
        rmdir(pdir);
    rmdir(root);
}

/* ---- regression inputs ------------------------------------------------------ */

/* ubsan-unnamed-slot-name-offset.seg (found by the fuzzer on layout 1): a
 * live slot with an empty name whose name reference carries a wild offset
 * (the largest, not 8-byte aligned). read_slot formed map + offset
 * although it copied nothing; an empty name's offset must never be used.
 * (With layout 2's 48-bit offsets the sum no longer wraps, so UBSan cannot
 * see the old mistake; the input keeps the path covered.) */
static void unnamed_slot_name_offset(pcw_provider_options *o, const char *outdir)
{
    pcw_provider *p;
    if (pcw_provider_open(&p, o) != PCW_OK)
        exit(1);
    pcw_registration *r = reg(p, "Single", PCW_SINGLE_INSTANCE, PCW_REG_SEQCOUNT, 1);
    pcw__inst *in = (pcw__inst *)pcw__handle_get(inst(r, "", 1), PCW__HANDLE_INSTANCE);
    /* The name references follow the generations, one per slot. */
    uint64_t *name_ref = in->gen + in->chunk->nslots;
    __atomic_store_n(name_ref, PCW_SEG_NAME_REF(0xFFFFFFFFFFFFull, 0), __ATOMIC_RELAXED);
    save(p, outdir, "ubsan-unnamed-slot-name-offset.seg");
    pcw_provider_close(p);
}

static const struct {
    void (*make)(pcw_provider_options *o, const char *outdir);
} regressions[] = {{unnamed_slot_name_offset}};

int main(int argc, char **argv)
{
    int remake = argc == 3 && strcmp(argv[1], "--regressions") == 0;
    if (argc != 2 && !remake) {
        fprintf(stderr, "usage: make_seeds OUTDIR\n"
                        "       make_seeds --regressions fuzz/segment/regressions\n");
        return 2;
    }
    if (!mkdtemp(root))
        return 1;
    pcw_provider_options o = {.dir = root, .name = "seed"};
    pcw_provider *p;
    if (remake) {
        for (size_t i = 0; i < sizeof regressions / sizeof regressions[0]; i++)
            regressions[i].make(&o, argv[2]);
        remove_root(&o);
        return 0;
    }

    /* 1: a provider with nothing registered. */
    if (pcw_provider_open(&p, &o) != PCW_OK)
        return 1;
    save(p, argv[1], "empty.seg");
    pcw_provider_close(p);

    /* 2: one multi-instance set, three instances. */
    pcw_provider_open(&p, &o);
    pcw_registration *r = reg(p, "Multi", PCW_MULTI_INSTANCE, 0, 1);
    inst(r, "first", 1), inst(r, "Second \xC3\xA9", 1), inst(r, "third", 1);
    save(p, argv[1], "multi.seg");
    pcw_provider_close(p);

    /* 3: a single-instance seqcount set and a two-block set. */
    pcw_provider_open(&p, &o);
    r = reg(p, "Single", PCW_SINGLE_INSTANCE, PCW_REG_SEQCOUNT, 1);
    inst(r, "", 1);
    r = reg(p, "Blocks", PCW_MULTI_AGGREGATE, 0, 2);
    inst(r, "a", 2), inst(r, "b", 2);
    save(p, argv[1], "single_blocks.seg");
    pcw_provider_close(p);

    /* 4: churn: a dead set, closed and reused slots, 70 instances (two
     * chunks). */
    pcw_provider_open(&p, &o);
    r = reg(p, "Gone", PCW_MULTI_INSTANCE, 0, 1);
    inst(r, "x", 1);
    pcw_unregister(r);
    r = reg(p, "Churn", PCW_MULTI_INSTANCE, 0, 1);
    pcw_instance *keep[70];
    for (int i = 0; i < 70; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        keep[i] = inst(r, name, 1);
    }
    for (int i = 0; i < 70; i += 2)
        pcw_close_instance(keep[i]);
    urcu_bp_barrier(); /* let closed slots be reused */
    inst(r, "reborn", 1);
    save(p, argv[1], "churn.seg");
    pcw_provider_close(p);

    /* 5: big: three sets, 2,000 instances with names of 1 to 60
     * characters (some not ASCII), every third closed and some reused:
     * far larger than 16 KiB, many chunks, a populated name free list. */
    pcw_provider_open(&p, &o);
    pcw_registration *sets[3] = {reg(p, "Big One", PCW_MULTI_INSTANCE, 0, 1),
                                 reg(p, "Big Two", PCW_MULTI_INSTANCE, PCW_REG_SEQCOUNT, 1),
                                 reg(p, "Big Three", PCW_MULTI_AGGREGATE, 0, 2)};
    static pcw_instance *many[2000];
    for (int i = 0; i < 2000; i++) {
        char name[128];
        int len = 1 + (i * 7) % 60;
        snprintf(name, sizeof name, "%s%0*d", i % 5 ? "n" : "\xC3\xA9t\xC3\xA9-", len, i);
        many[i] = inst(sets[i % 3], name, i % 3 == 2 ? 2 : 1);
    }
    for (int i = 0; i < 2000; i += 3)
        pcw_close_instance(many[i]);
    urcu_bp_barrier();
    for (int i = 0; i < 100; i++) {
        char name[32];
        snprintf(name, sizeof name, "again%d", i);
        inst(sets[i % 3], name, i % 3 == 2 ? 2 : 1);
    }
    save(p, argv[1], "big.seg");
    pcw_provider_close(p);

    /* 6: a provider with a control callback (header flag: a socket sits
     * beside it) and a callback counterset with segment instances too
     * (the mixed model): what reaches pcw_segment_collect's paths. */
    pcw_provider_options oc = o;
    oc.control_callback = control;
    pcw_provider_open(&p, &oc);
    r = reg(p, "Plain", PCW_MULTI_INSTANCE, 0, 1);
    inst(r, "p", 1);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "Cb";
    pcw_registration_info ci = {.version = PCW_VERSION_1,
                                .name = "Callback",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = 1,
                                .counters = &c,
                                .callback = callback};
    if (pcw_register(&r, p, &ci) != PCW_OK)
        return 1;
    uint64_t v = 1;
    pcw_data d = {&v, sizeof v};
    pcw_instance *in;
    if (pcw_create_instance(&in, r, "mixed", 1, &d) != PCW_OK)
        return 1;
    save(p, argv[1], "callback.seg");
    pcw_provider_close(p);

    /* 7: histogram counters (pcw/histogram.h) beside a plain one: two
     * instances with observations in the zero, regular and overflow
     * buckets, so the fuzzer bends shape words, sizes and bucket words. */
    pcw_provider_open(&p, &o);
    if (histograms(p) != PCW_OK)
        return 1;
    save(p, argv[1], "histogram.seg");
    pcw_provider_close(p);
    remove_root(&o);
    return 0;
}
