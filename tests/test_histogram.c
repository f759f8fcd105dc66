/* SPDX-License-Identifier: MIT */
/*
 * tests/test_histogram.c - the histogram counter's core (issue 27 section
 * 2): the integer bucket index equals ceil(2^schema * log2(x)) computed in
 * long double for every schema and both units, at and around every bucket
 * boundary; the word a value lands in (zero bucket, clamping); the typed
 * observers; registration of a histogram counter, its rules and messages;
 * and the consumer's view (shape, size, data offset) and its refusal of a
 * segment whose histogram record is damaged.
 */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <math.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

/* The reference: ceil(2^s * log2(x)) in long double (64-bit mantissa), for
 * x = v (unit one) or v * 1e-9 (unit ns). *sure is 0 when 2^s * log2(x)
 * lies within 1e-12 of an integer, where long double cannot decide; an
 * exact power of two of unit one is exact. */
static long ref_index(unsigned unit, int schema, uint64_t v, int *sure)
{
    if (unit == PCW_HIST_UNIT_ONE && (v & (v - 1)) == 0) {
        *sure = 1;
        return (long)ceill(ldexpl((long double)(63 - __builtin_clzll(v)), schema));
    }
    long double l = log2l((long double)v);
    if (unit == PCW_HIST_UNIT_NS)
        l -= log2l(1e9L);
    long double y = ldexpl(l, schema);
    *sure = fabsl(y - roundl(y)) > 1e-12L;
    return (long)ceill(y);
}

static void check_value(unsigned unit, int schema, uint64_t v)
{
    int sure;
    long want = ref_index(unit, schema, v, &sure);
    if (!sure)
        return;
    int m = schema < 0 ? 1 << -schema : 1;
    uint32_t shape = PCW_HISTOGRAM_SHAPE(unit, schema, -64 / m * m, -64 / m * m + 8 * m);
    cr_assert_eq(pcw_hist_index(shape, v), want, "unit %u schema %d v %llu: %d, want %ld", unit,
                 schema, (unsigned long long)v, pcw_hist_index(shape, v), want);
}

Test(histogram, index_matches_log2_everywhere)
{
    for (unsigned unit = 0; unit <= 1; unit++)
        for (int s = PCW_HIST_SCHEMA_MIN; s <= PCW_HIST_SCHEMA_MAX; s++) {
            for (uint64_t v = 1; v < 5000; v++)
                check_value(unit, s, v);
            /* around each boundary of schema 8 up to 2^63: the integers
             * nearest to 2^(k/256) (times 1e9 for ns) */
            for (int k = 0; k < 256 * 63; k += 7) {
                long double b = exp2l((long double)k / 256);
                if (unit == PCW_HIST_UNIT_NS)
                    b *= 1e9L;
                if (b > 9.0e18L)
                    break;
                uint64_t c = (uint64_t)b;
                for (uint64_t d = c > 2 ? c - 2 : 1; d <= c + 2; d++)
                    check_value(unit, s, d);
            }
            for (int i = 0; i < 64; i++)
                check_value(unit, s, UINT64_MAX >> i);
        }
    /* Whole powers of two seconds in ns (10^9 * 2^k, k >= -9): x is exactly
     * 2^k, an inclusive upper bound, which the long double reference cannot
     * decide; the index is k * 2^s, and one ns more is the next bucket. */
    for (int s = PCW_HIST_SCHEMA_MIN; s <= PCW_HIST_SCHEMA_MAX; s++) {
        int m = s < 0 ? 1 << -s : 1;
        uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, s, -64 / m * m, -64 / m * m + 8 * m);
        for (int k = -9; k <= 34; k++) {
            uint64_t v = k >= 0 ? 1000000000ull << k : 1000000000ull >> -k;
            long want = (long)ceill(ldexpl((long double)k, s));
            cr_assert_eq(pcw_hist_index(shape, v), want, "schema %d, 2^%d s", s, k);
            cr_assert_eq(pcw_hist_index(shape, v + 1), s >= 0 ? want + 1 : want + (k % m == 0),
                         "schema %d, 2^%d s + 1 ns", s, k);
        }
    }
}

/* The De Bruijn count of leading zeros (baseline x86-64) and the one the
 * build selected agree with the builtin at every bit length, with all
 * lower bits clear, set, and mixed. */
Test(histogram, leading_zeros_both_ways)
{
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int b = 0; b < 64; b++) {
        uint64_t top = 1ull << b;
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        uint64_t v[] = {top, top | (top - 1), top | ((s * 0x2545F4914F6CDD1Dull) & (top - 1))};
        for (int i = 0; i < 3; i++) {
            cr_assert_eq(pcw__hist_clz64_portable(v[i]), __builtin_clzll(v[i]), "%llx",
                         (unsigned long long)v[i]);
            cr_assert_eq(pcw__hist_clz64(v[i]), __builtin_clzll(v[i]), "%llx",
                         (unsigned long long)v[i]);
        }
    }
}

Test(histogram, words_zero_bucket_and_clamping)
{
    /* unit ns, schema 0, 2^-30 s .. 2^2 s: 32 buckets */
    uint32_t sh = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 0, -30, 2);
    cr_assert(pcw_hist_shape_valid(sh));
    cr_assert_eq(pcw_hist_nbuckets(sh), 32);
    cr_assert_eq(pcw_hist_bytes(sh), 8 * 34);
    cr_assert_eq(pcw_hist_min_index(sh), -30);
    cr_assert_eq(pcw_hist_word(sh, 0), 1, "0 is in the zero bucket");
    /* 1 ns = 2^-29.9 s: index -29, the first bucket; below it only 0 */
    cr_assert_eq(pcw_hist_word(sh, 1), 2);
    /* 1 us = 2^-19.93 s: index ceil(-19.93) = -19, word 2 + (-19 + 30 - 1) */
    cr_assert_eq(pcw_hist_word(sh, 1000), 2 + 10);
    /* 1 s: index 0 (x <= 2^0 is bucket 0), word 2 + 29 */
    cr_assert_eq(pcw_hist_word(sh, 1000000000), 2 + 29);
    cr_assert_eq(pcw_hist_word(sh, 1000000001), 2 + 30);
    /* above 2^2 s: clamped into the last bucket */
    cr_assert_eq(pcw_hist_word(sh, 4000000000ull), 2 + 31);
    cr_assert_eq(pcw_hist_word(sh, 5000000000ull), 2 + 31);
    cr_assert_eq(pcw_hist_word(sh, UINT64_MAX), 2 + 31);
    /* negative schema: 4 doublings per bucket */
    uint32_t n2 = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_ONE, -2, 0, 64 - 4);
    cr_assert(pcw_hist_shape_valid(n2));
    cr_assert_eq(pcw_hist_nbuckets(n2), 15);
    cr_assert_eq(pcw_hist_word(n2, 1), 1);
    cr_assert_eq(pcw_hist_word(n2, 2), 2, "(1, 16] is bucket 1, the first");
    cr_assert_eq(pcw_hist_word(n2, 16), 2);
    cr_assert_eq(pcw_hist_word(n2, 17), 3);
}

Test(histogram, invalid_shapes)
{
    cr_assert_not(pcw_hist_shape_valid(0));
    cr_assert_not(pcw_hist_shape_valid(PCW_HISTOGRAM_SHAPE(2, 3, 0, 10)), "unit 2");
    cr_assert_not(pcw_hist_shape_valid(PCW_HISTOGRAM_SHAPE(0, 9, 0, 10)), "schema 9");
    cr_assert_not(pcw_hist_shape_valid(PCW_HISTOGRAM_SHAPE(0, -5, 0, 32)), "schema -5");
    cr_assert_not(pcw_hist_shape_valid(PCW_HISTOGRAM_SHAPE(0, 3, 10, 10)), "empty range");
    cr_assert_not(pcw_hist_shape_valid(PCW_HISTOGRAM_SHAPE(0, -2, 1, 9)), "not a multiple of 4");
    cr_assert_not(pcw_hist_shape_valid(PCW_HISTOGRAM_SHAPE(0, 8, 0, 33)), "8448 buckets");
    cr_assert(pcw_hist_shape_valid(PCW_HISTOGRAM_SHAPE(0, 8, 0, 32)), "8192 buckets");
    cr_assert_not(pcw_hist_shape_valid(0x80000000u | PCW_HISTOGRAM_SHAPE(0, 3, 0, 10)));
}

/* A provider's struct with a typed histogram, as the README shows. */
PCW_HISTOGRAM_TYPE(web_latency, PCW_HIST_UNIT_NS, 3, -30, 12);
struct web {
    uint64_t requests;
    web_latency latency;
    uint32_t active;
};
static const pcw_counter_desc web_counters[] = {
    PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct web, requests),
    PCW_HISTOGRAM_COUNTER(2, "Latency", struct web, latency, web_latency),
    PCW_COUNTER(3, "Active", PERF_COUNTER_RAWCOUNT, struct web, active),
};

Test(histogram, typed_observe)
{
    struct web w = {0};
    cr_assert_eq(sizeof w.latency, 8 * (2 + 336));
    web_latency_observe(&w.latency, 2000000); /* 2 ms */
    web_latency_observe(&w.latency, 2000000);
    web_latency_observe_atomic(&w.latency, 0);
    cr_assert_eq(w.latency.words[0], 4000000);
    cr_assert_eq(w.latency.words[1], 1);
    uint32_t word = pcw_hist_word(web_latency_shape, 2000000);
    cr_assert_eq(w.latency.words[word], 2);
    /* 2 ms = 2^-8.97 s: index ceil(8 * -8.97) = -71; word 2 + (-71 + 240 - 1) */
    cr_assert_eq(word, 2 + 168);
}

static pcw_provider *prov;
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

static int try_register(const pcw_counter_desc *c, uint32_t n, char *why, size_t len)
{
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Web",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = n,
                                  .counters = c};
    pcw_registration *r;
    int rc = pcw_register(&r, prov, &info);
    pcw_register_error(rc, &info, why, len);
    return rc;
}

Test(histogram, registers_and_consumer_sees_shape, .init = setup, .fini = teardown)
{
    char why[512];
    cr_assert_eq(try_register(web_counters, 3, why, sizeof why), PCW_OK, "%s", why);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Web");
    cr_assert_not_null(cs);
    const pcw_counter *c = &cs->counters[1];
    cr_assert_eq(c->type, PERF_PCW_HISTOGRAM);
    cr_assert_eq(c->histogram, (uint32_t)web_latency_shape);
    cr_assert_eq(c->size, sizeof(web_latency));
    cr_assert_eq(c->data_offset, offsetof(struct web, latency));
    cr_assert_eq(c->aggregate, PCW_AGGREGATE_TOTAL);
    cr_assert_eq(cs->counters[0].histogram, 0);
    pcw_segment_close(seg);
}

Test(histogram, registration_rules, .init = setup, .fini = teardown)
{
    char why[512];
    pcw_counter_desc c[1] = {web_counters[1]};
    c[0].histogram = PCW_HISTOGRAM_SHAPE(0, 9, 0, 10);
    cr_assert_eq(try_register(c, 1, why, sizeof why), PCW_E_INVALID_PARAMETER);
    cr_assert(strstr(why, "histogram shape"), "%s", why);
    c[0] = web_counters[1];
    c[0].size = 16;
    cr_assert_eq(try_register(c, 1, why, sizeof why), PCW_E_INVALID_PARAMETER);
    cr_assert(strstr(why, "2704 bytes"), "%s", why);
    c[0] = web_counters[1];
    c[0].size = 0; /* 0: the shape's size */
    cr_assert_eq(try_register(c, 1, why, sizeof why), PCW_OK, "%s", why);
    c[0].id = 9, c[0].name = "L2", c[0].offset = 4;
    cr_assert_eq(try_register(c, 1, why, sizeof why), PCW_E_INVALID_PARAMETER);
    cr_assert(strstr(why, "multiple of 8"), "%s", why);
    c[0] = web_counters[0];
    c[0].histogram = web_latency_shape;
    cr_assert_eq(try_register(c, 1, why, sizeof why), PCW_E_INVALID_PARAMETER);
    cr_assert(strstr(why, "not PERF_PCW_HISTOGRAM"), "%s", why);
    c[0] = web_counters[1];
    c[0].aggregate = PCW_AGGREGATE_MAX;
    cr_assert_eq(try_register(c, 1, why, sizeof why), PCW_E_INVALID_PARAMETER);
    cr_assert(strstr(why, "aggregate"), "%s", why);
}

/* Two providers register "Web" with histograms of the same size at the same
 * offset but different shapes (here the unit): a consumer must not merge
 * them, or it would read one's buckets with the other's bounds. */
PCW_HISTOGRAM_TYPE(web_sizes, PCW_HIST_UNIT_ONE, 3, -30, 12);
struct web_other {
    uint64_t requests;
    web_sizes latency;
    uint32_t active;
};
static const pcw_counter_desc other_counters[] = {
    PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct web_other, requests),
    PCW_HISTOGRAM_COUNTER(2, "Latency", struct web_other, latency, web_sizes),
    PCW_COUNTER(3, "Active", PERF_COUNTER_RAWCOUNT, struct web_other, active),
};

Test(histogram, other_shape_is_not_merged, .init = setup, .fini = teardown)
{
    char why[512];
    cr_assert_eq(try_register(web_counters, 3, why, sizeof why), PCW_OK, "%s", why);
    pcw_provider *first = prov;
    pcw_provider_options o = {.name = "second"};
    cr_assert_eq(pcw_provider_open(&prov, &o), PCW_OK);
    cr_assert_eq(sizeof(struct web_other), sizeof(struct web));
    cr_assert_eq(try_register(other_counters, 3, why, sizeof why), PCW_OK, "%s", why);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 2);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Web");
    cr_assert_not_null(m);
    cr_assert_eq(m->source_count, 1);
    cr_assert_eq(m->mismatched, 1, "a histogram of another shape is another layout");
    pcw_consumer_close(c);
    pcw_provider_close(prov);
    prov = first;
}

/* A histogram type declared in a source file (not a header), of which the
 * file uses one observer only, compiles clean with every compiler's
 * -Wall -Wextra -Werror: clang warns about an unused static inline function
 * defined in the main file (gcc does not), so PCW_HISTOGRAM_TYPE's
 * observers are marked unused-is-fine. */
Test(histogram, type_in_a_source_file_compiles_clean)
{
    static const char *const src =
        "#include <pcw/provider.h>\n"
        "PCW_HISTOGRAM_TYPE(lat, PCW_HIST_UNIT_NS, 3, -30, 12);\n"
        "struct w { uint64_t n; lat latency; };\n"
        "void f(struct w *w, uint64_t ns);\n"
        "void f(struct w *w, uint64_t ns) { lat_observe(&w->latency, ns); }\n";
    static const char *const compilers[][2] = {
        {"cc", "c"}, {"clang", "c"}, {"c++", "cc"}, {"clang++", "cc"}};
    char dir[] = "/tmp/pcw-hist-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof compilers / sizeof compilers[0]; i++) {
        char file[64], log[64], cmd[1024];
        /* A package build has gcc only (make test); make check has clang. */
        snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", compilers[i][0]);
        if (system(cmd) != 0) {
            cr_log_info("%s is not installed: not tried", compilers[i][0]);
            continue;
        }
        snprintf(file, sizeof file, "%s/t.%s", dir, compilers[i][1]);
        snprintf(log, sizeof log, "%s/log", dir);
        cr_assert_eq(tu_write_file(file, src, strlen(src), 0600), 0);
        snprintf(cmd, sizeof cmd,
                 "%s -std=%s -Wall -Wextra -Werror -fsyntax-only " PCW_TEST_INCLUDES " %s > %s 2>&1",
                 compilers[i][0], strcmp(compilers[i][1], "c") ? "c++17" : "c11", file, log);
        int st = system(cmd);
        size_t len;
        char *out = (char *)tu_read_file(log, 1 << 20, &len);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s:\n%s", compilers[i][0],
                  out ? out : "");
        free(out);
        unlink(file), unlink(log);
    }
    rmdir(dir);
}
