/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_fast.c - the query layer's short paths (lib/query/values.c:
 * pcw_pdh_cook_all, pcw_pdh_visit, pcw_pdh_visit_rows and pcw_pdh_cook_column
 * in steady state)
 * give bit for bit what pcw_cook gives (pcw_pdh_get_value) on edge values:
 * 0, 2^52 - 1, 2^52, 2^52 + 1, 2^53 + 1, 2^63, UINT64_MAX (whose doubles
 * round), 4-byte counters, scaled counters (the counter's default_scale and
 * pcw_pdh_set_scale), every PCW_FMT_ flag, and rates with their statuses
 * (first sample, a counter that went down).
 *
 * The provider is this process (the query reads its segment like any
 * other): the test writes values straight into the instances' blocks.
 * "Edge Plain" is nine contiguous 8-byte PERF_COUNTER_LARGE_RAWCOUNT
 * values - the vectorised row conversion (two groups of four and a tail of
 * one); "Edge Mixed" mixes sizes, scales and a rate - the per-value path.
 * Each test runs twice: with the AVX2 loops where the CPU has them, and
 * with the baseline ones ($PCW_NO_AVX2).
 */
/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>

#include "pcw/provider.h"
#include "pcw/pdh.h"

static pcw_provider *prov;

static void setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
}

static void teardown(void)
{
    pcw_provider_close(prov);
    prov = NULL;
    tu_root_teardown();
}

static void setup_baseline(void)
{
    /* The baseline loops (SSE2 on x86-64), as on a CPU without AVX2. */
    setenv("PCW_NO_AVX2", "1", 1);
    setup();
}

TestSuite(query_fast, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(query_fast_baseline, .init = setup_baseline, .fini = teardown, .timeout = 60);

#define TWO52 4503599627370496ull
static const uint64_t edges[] = {0,          1,          TWO52 - 1, TWO52, TWO52 + 1, 2 * TWO52 + 1,
                                 1ull << 63, UINT64_MAX, 12345};
#define NEDGE (sizeof edges / sizeof edges[0])

#define PLAIN_CTRS 9
#define PLAIN_INST 12
#define MAXV       256

static pcw_registration *register_flagged(const char *name, uint32_t instance_type, uint32_t flags,
                                          const pcw_counter_desc *c, uint32_t n)
{
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .flags = flags,
                                  .name = name,
                                  .instance_type = instance_type,
                                  .counter_count = n,
                                  .counters = c};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK, "%s", name);
    return r;
}

static pcw_registration *register_typed(const char *name, uint32_t instance_type,
                                        const pcw_counter_desc *c, uint32_t n)
{
    return register_flagged(name, instance_type, 0, c, n);
}

static pcw_registration *register_set(const char *name, const pcw_counter_desc *c, uint32_t n)
{
    return register_typed(name, PCW_MULTI_INSTANCE, c, n);
}

/* Register `name` (of instance_type, with PCW_REG_ flags) with n 8-byte
 * counters "c0".. side by side, each of `type` and with `aggregate`: a
 * struct of uint64_t. */
static pcw_registration *register_u64s_flagged(const char *name, uint32_t instance_type,
                                               uint32_t flags, uint32_t n, uint32_t type,
                                               uint32_t aggregate)
{
    pcw_counter_desc *c = calloc(n, sizeof *c);
    char(*names)[16] = calloc(n, sizeof *names);
    cr_assert(c && names);
    for (uint32_t k = 0; k < n; k++) {
        c[k] = pcw_counter_desc_default();
        snprintf(names[k], sizeof names[k], "c%u", k);
        c[k].id = k, c[k].name = names[k], c[k].type = type, c[k].aggregate = aggregate;
        c[k].offset = 8 * k, c[k].size = 8;
    }
    pcw_registration *r = register_flagged(name, instance_type, flags, c, n);
    free(c);
    free(names);
    return r;
}

static pcw_registration *register_u64s(const char *name, uint32_t instance_type, uint32_t n,
                                       uint32_t type, uint32_t aggregate)
{
    return register_u64s_flagged(name, instance_type, 0, n, type, aggregate);
}

static pcw_registration *register_plain(const char *name, uint32_t n)
{
    return register_u64s(name, PCW_MULTI_INSTANCE, n, PERF_COUNTER_LARGE_RAWCOUNT, 0);
}

static pcw_instance *create(pcw_registration *r, const char *name, uint32_t bytes)
{
    pcw_instance *in;
    pcw_data d = {NULL, bytes};
    cr_assert_eq(pcw_create_instance(&in, r, name, 1, &d), PCW_OK, "%s", name);
    return in;
}

static void set64(pcw_instance *in, uint32_t off, uint64_t v)
{
    pcw_u64_set((uint64_t *)(void *)((unsigned char *)pcw_instance_block(in, 0) + off), v);
}

static void set32(pcw_instance *in, uint32_t off, uint32_t v)
{
    atomic_store_explicit(
        (_Atomic uint32_t *)(void *)((unsigned char *)pcw_instance_block(in, 0) + off), v,
        memory_order_relaxed);
}

static pcw_pdh_counter *add(pcw_pdh *q, const char *path)
{
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, path, &h, &err), PCW_OK, "%s: %s", path, err.message);
    return h;
}

/* What visit handed over, value by value. */
typedef struct seen {
    double v[MAXV];
    uint8_t st[MAXV];
    size_t rows;
} seen;

static int keep_row(const pcw_pdh_row *row, void *arg)
{
    seen *s = arg;
    cr_assert_leq(row->first + row->count, MAXV);
    memcpy(s->v + row->first, row->values, row->count * sizeof *row->values);
    memcpy(s->st + row->first, row->status, row->count);
    s->rows++;
    return 0;
}

/* What visit_rows handed over: values and statuses by index, and the
 * blocks' shape (each follows the last, holds whole instances of one
 * width, and at most 2,048 values unless it is one instance). */
typedef struct seen_rows {
    double *v;
    uint8_t *st;
    size_t cap, next, rows, blocks;
    size_t stop_after; /* return non-zero from this block on (0: never) */
} seen_rows;

/* The documented block size of pcw_pdh_visit_rows (lib/pcw/pdh.h). */
#define BLOCK_VALUES 2048u

static int keep_rows(const pcw_pdh_rows *b, void *arg)
{
    seen_rows *s = arg;
    cr_assert_eq(b->first, s->next, "block %zu starts at %zu, not where the last ended (%zu)",
                 s->blocks, b->first, s->next);
    cr_assert_gt(b->rows, 0, "an empty block");
    cr_assert_gt(b->count, 0, "a block of instances without values");
    cr_assert(b->rows == 1 || b->rows * b->count <= BLOCK_VALUES, "block of %zu x %u values",
              b->rows, b->count);
    size_t n = b->rows * b->count;
    cr_assert_leq(b->first + n, s->cap);
    memcpy(s->v + b->first, b->values, n * sizeof *b->values);
    memcpy(s->st + b->first, b->status, n);
    s->next = b->first + n;
    s->rows += b->rows;
    s->blocks++;
    return s->stop_after && s->blocks >= s->stop_after;
}

/* visit_rows of h with `flags` into s (arrays of cap values, poisoned
 * first), which is reset. */
static void visit_rows_into(const pcw_pdh_counter *h, unsigned flags, seen_rows *s)
{
    memset(s->st, 0xEE, s->cap);
    for (size_t i = 0; i < s->cap; i++)
        s->v[i] = -1234.5;
    s->next = s->rows = s->blocks = 0;
    cr_assert_eq(pcw_pdh_visit_rows(h, flags, keep_rows, s), PCW_OK);
}

#define INVALID_ARG PCW_E_INVALID_PARAMETER

static int count_blocks_of(const pcw_pdh_rows *b, void *arg)
{
    *(int *)arg += b->rows != 0;
    return 0;
}

static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Every way of reading h's values with `flags` agrees with pcw_cook's
 * (pcw_pdh_get_value), bit for bit, value for value. Returns how many
 * values are VALID. */
static size_t check_agree(const pcw_pdh_counter *h, unsigned flags, const char *what)
{
    size_t n = pcw_pdh_value_count(h), ninst = pcw_pdh_instance_count(h),
           nc = pcw_pdh_selected_counter_count(h);
    cr_assert_gt(n, 0, "%s", what);
    cr_assert_leq(n, MAXV, "%s", what);
    cr_assert_eq(n, ninst * nc, "%s", what);
    double all[MAXV], col[MAXV];
    uint8_t st[MAXV], cst[MAXV];
    memset(st, 0xEE, sizeof st);
    cr_assert_eq(pcw_pdh_cook_all(h, flags, all, st), PCW_OK);
    static seen s;
    memset(&s, 0, sizeof s);
    memset(s.st, 0xEE, sizeof s.st);
    cr_assert_eq(pcw_pdh_visit(h, flags, keep_row, &s), PCW_OK);
    cr_assert_eq(s.rows, ninst, "%s: one callback per instance", what);
    static double rv[MAXV];
    static uint8_t rst[MAXV];
    seen_rows sr = {rv, rst, MAXV, 0, 0, 0, 0};
    visit_rows_into(h, flags, &sr);
    cr_assert_eq(sr.rows, ninst, "%s: visit_rows handed over every instance", what);
    cr_assert_eq(sr.next, n, "%s: visit_rows handed over every value", what);
    size_t valid = 0;
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(h, i, flags, &v), PCW_OK);
        cr_assert_eq(st[i], v.status, "%s flags %#x value %zu (%s\\%s): status %d vs %d", what,
                     flags, i, v.instance, v.counter, st[i], v.status);
        cr_assert_eq(s.st[i], v.status, "%s flags %#x value %zu: visit status %d vs %d", what,
                     flags, i, s.st[i], v.status);
        cr_assert(same_double(all[i], v.value), "%s flags %#x value %zu (%s\\%s): %.17g vs %.17g",
                  what, flags, i, v.instance, v.counter, all[i], v.value);
        cr_assert(same_double(s.v[i], v.value), "%s flags %#x value %zu: visit %.17g vs %.17g",
                  what, flags, i, s.v[i], v.value);
        cr_assert_eq(rst[i], v.status, "%s flags %#x value %zu: visit_rows status %d vs %d", what,
                     flags, i, rst[i], v.status);
        cr_assert(same_double(rv[i], v.value), "%s flags %#x value %zu: visit_rows %.17g vs %.17g",
                  what, flags, i, rv[i], v.value);
        valid += v.status == PCW_CSTATUS_VALID;
    }
    for (size_t c = 0; c < nc; c++) {
        cr_assert_eq(pcw_pdh_cook_column(h, c, flags, col, cst), PCW_OK);
        for (size_t e = 0; e < ninst; e++) {
            cr_assert_eq(cst[e], st[e * nc + c], "%s column %zu", what, c);
            cr_assert(same_double(col[e], all[e * nc + c]), "%s column %zu instance %zu", what, c,
                      e);
        }
    }
    return valid;
}

static const unsigned all_flags[] = {0, PCW_FMT_NOSCALE, PCW_FMT_1000, PCW_FMT_RAW,
                                     PCW_FMT_NOSCALE | PCW_FMT_1000};

static void plain_rows_convert_exactly(void)
{
    pcw_registration *r = register_plain("Edge Plain", PLAIN_CTRS);
    pcw_instance *in[PLAIN_INST];
    for (int i = 0; i < PLAIN_INST; i++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", i);
        in[i] = create(r, name, 8 * PLAIN_CTRS);
    }
    /* Instances 0..8: the edge values rotated, so each lands in every
     * vector lane and in the tail; 9: all small (the fast conversion
     * alone); 10: one 2^52 among small ones; 11: all UINT64_MAX. */
    for (int i = 0; i < PLAIN_INST; i++)
        for (uint32_t k = 0; k < PLAIN_CTRS; k++) {
            uint64_t v = i < 9     ? edges[(i + k) % NEDGE]
                         : i == 9  ? (uint64_t)k * 1000003u
                         : i == 10 ? (k == 5 ? TWO52 : k)
                                   : UINT64_MAX;
            set64(in[i], 8 * k, v);
        }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Plain(*)\\*");
    pcw_pdh_counter *scaled = add(q, "\\Edge Plain(*)\\*");
    cr_assert_eq(pcw_pdh_set_scale(scaled, 7), PCW_OK);
    pcw_pdh_counter *down = add(q, "\\Edge Plain(*)\\*");
    cr_assert_eq(pcw_pdh_set_scale(down, -7), PCW_OK);
    for (int round = 0; round < 3; round++) {
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(pcw_pdh_instance_count(h), PLAIN_INST);
        for (size_t f = 0; f < sizeof all_flags / sizeof all_flags[0]; f++) {
            cr_assert_eq(check_agree(h, all_flags[f], "plain"), PLAIN_INST * PLAIN_CTRS);
            cr_assert_eq(check_agree(scaled, all_flags[f], "scale 10"), PLAIN_INST * PLAIN_CTRS);
            cr_assert_eq(check_agree(down, all_flags[f], "scale -10"), PLAIN_INST * PLAIN_CTRS);
        }
        /* And what pcw_cook gives is the C conversion of the value. */
        double all[MAXV];
        cr_assert_eq(pcw_pdh_cook_all(h, 0, all, NULL), PCW_OK);
        for (int i = 0; i < PLAIN_INST; i++)
            for (uint32_t k = 0; k < PLAIN_CTRS; k++) {
                uint64_t x =
                    *(const uint64_t *)(const void *)((const unsigned char *)pcw_instance_block(
                                                          in[i], 0) +
                                                      8 * k);
                cr_assert(same_double(all[i * PLAIN_CTRS + k], (double)x), "p%d v%u", i, k);
            }
        /* Next round: other edges in other places. */
        for (int i = 0; i < 9; i++)
            for (uint32_t k = 0; k < PLAIN_CTRS; k++)
                set64(in[i], 8 * k, edges[(i + k + 3 * (round + 1)) % NEDGE]);
    }
    pcw_pdh_close(q);
}

static void mixed_sizes_scales_and_rates(void)
{
    /* off size type                        scale */
    static const struct {
        uint32_t off, size, type;
        int32_t scale;
    } d[] = {
        {0, 8, PERF_COUNTER_LARGE_RAWCOUNT, 0},  {8, 4, PERF_COUNTER_RAWCOUNT, 0},
        {12, 4, PERF_COUNTER_RAWCOUNT, 3},       {16, 8, PERF_COUNTER_LARGE_RAWCOUNT, -3},
        {24, 8, PERF_COUNTER_LARGE_RAWCOUNT, 2}, {32, 8, PERF_COUNTER_BULK_COUNT, 0},
        {40, 4, PERF_COUNTER_COUNTER, -1},       {44, 4, PERF_COUNTER_RAWCOUNT_HEX, 0},
    };
    enum { NC = sizeof d / sizeof d[0], NI = 6, BYTES = 48 };
    pcw_counter_desc c[NC];
    char names[NC][8];
    for (uint32_t k = 0; k < NC; k++) {
        c[k] = pcw_counter_desc_default();
        snprintf(names[k], sizeof names[k], "m%u", k);
        c[k].id = k, c[k].name = names[k], c[k].type = d[k].type;
        c[k].offset = d[k].off, c[k].size = d[k].size, c[k].default_scale = d[k].scale;
    }
    pcw_registration *r = register_set("Edge Mixed", c, NC);
    pcw_instance *in[NI];
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        in[i] = create(r, name, BYTES);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Mixed(*)\\*");
    pcw_pdh_counter *scaled = add(q, "\\Edge Mixed(*)\\*");
    cr_assert_eq(pcw_pdh_set_scale(scaled, 7), PCW_OK);
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < NI; i++)
            for (uint32_t k = 0; k < NC; k++) {
                uint64_t e = edges[(size_t)(i + k + round) % NEDGE];
                if (d[k].type == PERF_COUNTER_BULK_COUNT || d[k].type == PERF_COUNTER_COUNTER)
                    /* Rates: rising, except instance 1 goes down in round 2
                     * (a reset) and instance 2 stays put. */
                    e = i == 1 && round == 2 ? 7
                        : i == 2             ? 99
                                             : (uint64_t)(round + 1) * 1000 * (i + 1);
                if (d[k].size == 8)
                    set64(in[i], d[k].off, e);
                else
                    set32(in[i], d[k].off, (uint32_t)(e ^ (e >> 32)));
            }
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        size_t valid = 0;
        for (size_t f = 0; f < sizeof all_flags / sizeof all_flags[0]; f++) {
            valid = check_agree(h, all_flags[f], "mixed");
            check_agree(scaled, all_flags[f], "mixed, scale 10");
        }
        /* The first sample of the two rates has no value yet; later, only
         * instance 1's reset does not (PCW_FMT_RAW, the last flags checked
         * but one, shows every value: check with 0 again). */
        valid = check_agree(h, 0, "mixed");
        if (round == 0)
            cr_assert_eq(valid, NI * (NC - 2));
        else if (round == 2)
            cr_assert_eq(valid, NI * NC - 2);
        else
            cr_assert_eq(valid, NI * NC);
    }
    pcw_pdh_close(q);
}

static void large_cook_all_converts_exactly(void)
{
    /* More than 128 Ki values: cook_all writes them with streaming stores
     * (on x86-64 with AVX2) in blocks of 1,024, each converted again the
     * plain way if it holds a value of 2^52 or more - here into an array
     * that starts 8 bytes past a 32-byte boundary. */
    enum { NI = 16384 };
    pcw_registration *r = register_plain("Edge Large", PLAIN_CTRS);
    uint64_t *expect = malloc((size_t)NI * PLAIN_CTRS * sizeof *expect);
    cr_assert_not_null(expect);
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "l%d", i);
        pcw_instance *in = create(r, name, 8 * PLAIN_CTRS);
        for (uint32_t k = 0; k < PLAIN_CTRS; k++) {
            /* Stretches of 1,000 rows: small values; every edge; now and
             * then a value in [2^52, 2^63); once a value past 2^62. */
            static const uint64_t mid[] = {TWO52, TWO52 + 1, 2 * TWO52 + 1};
            uint64_t v = (uint64_t)i * PLAIN_CTRS + k;
            int kind = (i / 1000) % 4;
            if (kind == 1)
                v = edges[(size_t)(i + k) % NEDGE];
            else if (kind == 2 && k == (uint32_t)i % PLAIN_CTRS)
                v = mid[i % 3];
            else if (kind == 3 && i % 1000 == 500 && k == 4)
                v = (1ull << 62) + 1;
            expect[(size_t)i * PLAIN_CTRS + k] = v;
            set64(in, 8 * k, v);
        }
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Large(*)\\*");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    size_t n = pcw_pdh_value_count(h);
    cr_assert_eq(n, (size_t)NI * PLAIN_CTRS);
    double *buf = aligned_alloc(32, (n + 4) * sizeof *buf);
    uint8_t *st = malloc(n);
    cr_assert(buf && st);
    double *all = buf + 1;
    cr_assert_eq(pcw_pdh_cook_all(h, 0, all, st), PCW_OK);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(st[i], PCW_CSTATUS_VALID, "value %zu", i);
        cr_assert(same_double(all[i], (double)expect[i]), "value %zu: %.17g vs %llu", i, all[i],
                  (unsigned long long)expect[i]);
    }
    /* visit_rows hands over the same values, block by block. */
    seen_rows sr = {malloc(n * sizeof(double)), malloc(n), n, 0, 0, 0, 0};
    cr_assert(sr.v && sr.st);
    visit_rows_into(h, 0, &sr);
    cr_assert_eq(sr.next, n);
    cr_assert_eq(sr.rows, (size_t)NI);
    cr_assert_eq(sr.blocks,
                 ((size_t)NI + BLOCK_VALUES / PLAIN_CTRS - 1) / (BLOCK_VALUES / PLAIN_CTRS),
                 "full blocks of %u instances", BLOCK_VALUES / PLAIN_CTRS);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(sr.st[i], PCW_CSTATUS_VALID, "visit_rows value %zu", i);
        cr_assert(same_double(sr.v[i], all[i]), "visit_rows value %zu: %.17g vs %.17g", i, sr.v[i],
                  all[i]);
    }
    /* A non-zero return stops the walk: no block after it. */
    sr.stop_after = 2;
    visit_rows_into(h, 0, &sr);
    cr_assert_eq(sr.blocks, 2, "visit_rows went on after the callback said stop");
    free(sr.v);
    free(sr.st);
    /* And pcw_cook agrees (every 7th value: get_value is the slow way). */
    for (size_t i = 0; i < n; i += 7) {
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
        cr_assert(same_double(all[i], v.value), "value %zu", i);
    }
    free(buf);
    free(st);
    free(expect);
    pcw_pdh_close(q);
}

/* visit_rows over a multipleAggregate set: the _Total (the general path,
 * with statuses of its own) and then the instances (the short path) share
 * blocks; the values agree with get_value, each block's statuses too
 * (those the short path leaves VALID across blocks are not stale). A rate
 * counter's first sample puts NEW_DATA statuses between VALID ones. */
static void visit_rows_total_and_blocks(void)
{
    enum { NI = 700, NC = 9 };
    pcw_registration *r = register_u64s("Edge Total", PCW_MULTI_AGGREGATE, NC,
                                        PERF_COUNTER_LARGE_RAWCOUNT, PCW_AGGREGATE_TOTAL);
    /* And a set with a rate, whose first sample has no value. */
    pcw_counter_desc rc[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    rc[0].id = 0, rc[0].name = "level", rc[0].type = PERF_COUNTER_LARGE_RAWCOUNT;
    rc[0].offset = 0, rc[0].size = 8;
    rc[1].id = 1, rc[1].name = "rate", rc[1].type = PERF_COUNTER_BULK_COUNT;
    rc[1].offset = 8, rc[1].size = 8;
    pcw_registration *rr = register_set("Edge Rate", rc, 2);
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        pcw_instance *in = create(r, name, 8 * NC);
        for (uint32_t k = 0; k < NC; k++)
            set64(in, 8 * k, (uint64_t)i * NC + k + (i == 300 && k == 2 ? TWO52 : 0));
        pcw_instance *ri = create(rr, name, 16);
        set64(ri, 0, (uint64_t)i);
        set64(ri, 8, 1000u * (uint64_t)i);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Total(*)\\*");
    pcw_pdh_counter *hr = add(q, "\\Edge Rate(*)\\*");
    size_t n = (NI + 1) * NC, nr = NI * 2;
    seen_rows sr = {malloc(n * sizeof(double)), malloc(n), n, 0, 0, 0, 0};
    cr_assert(sr.v && sr.st);
    for (int round = 0; round < 3; round++) {
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(pcw_pdh_value_count(h), n, "700 instances and _Total");
        cr_assert_eq(pcw_pdh_value_count(hr), nr);
        for (size_t f = 0; f < sizeof all_flags / sizeof all_flags[0]; f++) {
            visit_rows_into(h, all_flags[f], &sr);
            cr_assert_eq(sr.next, n);
            cr_assert_eq(sr.rows, (size_t)NI + 1);
            cr_assert_gt(sr.blocks, 3, "several blocks");
            for (size_t i = 0; i < n; i++) {
                pcw_pdh_value v;
                cr_assert_eq(pcw_pdh_get_value(h, i, all_flags[f], &v), PCW_OK);
                cr_assert_eq(sr.st[i], v.status, "round %d flags %#x value %zu (%s)", round,
                             all_flags[f], i, v.instance);
                cr_assert(same_double(sr.v[i], v.value),
                          "round %d flags %#x value %zu (%s): %.17g vs %.17g", round, all_flags[f],
                          i, v.instance, sr.v[i], v.value);
            }
            visit_rows_into(hr, all_flags[f], &sr);
            cr_assert_eq(sr.next, nr);
            size_t fresh = 0;
            for (size_t i = 0; i < nr; i++) {
                pcw_pdh_value v;
                cr_assert_eq(pcw_pdh_get_value(hr, i, all_flags[f], &v), PCW_OK);
                cr_assert_eq(sr.st[i], v.status, "rate round %d value %zu", round, i);
                cr_assert(same_double(sr.v[i], v.value), "rate round %d value %zu", round, i);
                fresh += v.status == PCW_CSTATUS_NEW_DATA_NEEDED;
            }
            if (round == 0 && !(all_flags[f] & PCW_FMT_RAW))
                cr_assert_eq(fresh, (size_t)NI, "the first sample of every rate");
        }
    }
    free(sr.v);
    free(sr.st);
    pcw_pdh_close(q);
}

/* visit_rows over one path matching three countersets, "Vr A" (plain),
 * "Vr B" (a rate that goes down every sample: a status that is not VALID
 * on the general path) and "Vr C" (plain again), each of another width:
 * a block each; C's VALID statuses are written again after B's, not
 * taken as left over from A's block. */
static void visit_rows_across_countersets(void)
{
    enum { NI = 50 };
    static const uint32_t width[3] = {3, 1, 5};
    static const char *const set[3] = {"Vr A", "Vr B", "Vr C"};
    pcw_instance *in[3][NI];
    for (int j = 0; j < 3; j++) {
        pcw_registration *r =
            register_u64s(set[j], PCW_MULTI_INSTANCE, width[j],
                          j == 1 ? PERF_COUNTER_BULK_COUNT : PERF_COUNTER_LARGE_RAWCOUNT, 0);
        for (int i = 0; i < NI; i++) {
            char name[16];
            snprintf(name, sizeof name, "i%d", i);
            in[j][i] = create(r, name, 8 * width[j]);
        }
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Vr ?(*)\\*");
    size_t n = NI * (3 + 1 + 5);
    seen_rows sr = {malloc(n * sizeof(double)), malloc(n), n, 0, 0, 0, 0};
    cr_assert(sr.v && sr.st);
    for (int round = 0; round < 3; round++) {
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < NI; i++)
                for (uint32_t k = 0; k < width[j]; k++)
                    set64(in[j][i], 8 * k,
                          j == 1 ? 1000000u - 1000u * (uint64_t)round : (uint64_t)(i + k + round));
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(pcw_pdh_value_count(h), n);
        visit_rows_into(h, 0, &sr);
        cr_assert_eq(sr.next, n);
        cr_assert_eq(sr.blocks, 3, "a block per counterset (their widths differ)");
        size_t gone_down = 0;
        for (size_t i = 0; i < n; i++) {
            pcw_pdh_value v;
            cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
            cr_assert_eq(sr.st[i], v.status, "round %d value %zu (%s\\%s)", round, i, v.instance,
                         v.counter);
            cr_assert(same_double(sr.v[i], v.value), "round %d value %zu", round, i);
            gone_down += v.status != PCW_CSTATUS_VALID;
        }
        cr_assert_eq(gone_down, NI, "round %d: Vr B's rate has no value, the rest have", round);
    }
    free(sr.v);
    free(sr.st);
    pcw_pdh_close(q);
}

Test(query_fast, visit_rows_across_countersets)
{
    visit_rows_across_countersets();
}

Test(query_fast_baseline, visit_rows_across_countersets)
{
    visit_rows_across_countersets();
}

/* Instances of more values than a block holds: one instance per block
 * (the block then comes from the heap). */
static void visit_rows_wide_instances(void)
{
    enum { NC = 3000, NI = 3 };
    pcw_registration *r = register_plain("Edge Wide", NC);
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        pcw_instance *in = create(r, name, 8 * NC);
        for (uint32_t k = 0; k < NC; k++)
            set64(in, 8 * k, (uint64_t)i * NC + k);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Wide(*)\\*");
    size_t n = (size_t)NI * NC;
    seen_rows sr = {malloc(n * sizeof(double)), malloc(n), n, 0, 0, 0, 0};
    cr_assert(sr.v && sr.st);
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        visit_rows_into(h, 0, &sr);
        cr_assert_eq(sr.next, n);
        cr_assert_eq(sr.blocks, (size_t)NI, "one instance per block");
        for (size_t i = 0; i < n; i++) {
            cr_assert_eq(sr.st[i], PCW_CSTATUS_VALID, "value %zu", i);
            cr_assert(same_double(sr.v[i], (double)i), "value %zu: %.17g", i, sr.v[i]);
        }
    }
    free(sr.v);
    free(sr.st);
    pcw_pdh_close(q);
}

Test(query_fast, visit_rows_wide_instances)
{
    visit_rows_wide_instances();
}

/* ---- pcw_pdh_collect_rows ------------------------------------------------ */

/* What collect_rows handed over: the blocks (as keep_rows), the restarts,
 * and how many blocks came while the collection was still reading (the
 * query's collection count not yet incremented). An action may run at the
 * first block (it changes the provider's instances mid-read). */
typedef struct seen_fused {
    seen_rows r;
    const pcw_pdh *q;
    uint64_t collections; /* before the call */
    size_t during, restarts;
    void (*at_first)(void);
} seen_fused;

static int keep_fused(const pcw_pdh_rows *b, void *arg)
{
    seen_fused *f = arg;
    if (b->rows == 0) {
        cr_assert_eq(b->first, 0, "a restart block starts at 0");
        f->restarts++;
        f->r.next = f->r.rows = f->r.blocks = 0;
        return 0;
    }
    if (pcw_pdh_collections(f->q) == f->collections) {
        f->during++;
        if (f->during == 1 && f->at_first)
            f->at_first();
    }
    return keep_rows(b, &f->r);
}

/* collect_rows into f; then every value f kept agrees with get_value. */
static void collect_rows_check(pcw_pdh *q, pcw_pdh_counter *h, unsigned flags, seen_fused *f,
                               const char *what)
{
    memset(f->r.st, 0xEE, f->r.cap);
    f->r.next = f->r.rows = f->r.blocks = 0;
    f->during = f->restarts = 0;
    f->q = q;
    f->collections = pcw_pdh_collections(q);
    cr_assert_eq(pcw_pdh_collect_rows(q, NULL, h, flags, keep_fused, f), PCW_OK, "%s", what);
    cr_assert_eq(pcw_pdh_collections(q), f->collections + 1, "%s: one collection", what);
    size_t n = pcw_pdh_value_count(h);
    cr_assert_eq(f->r.next, n, "%s: every value handed over (%zu of %zu)", what, f->r.next, n);
    cr_assert_eq(f->r.rows, pcw_pdh_instance_count(h), "%s", what);
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(h, i, flags, &v), PCW_OK);
        cr_assert_eq(f->r.st[i], v.status, "%s value %zu (%s)", what, i, v.instance);
        cr_assert(same_double(f->r.v[i], v.value), "%s value %zu (%s): %.17g vs %.17g", what, i,
                  v.instance, f->r.v[i], v.value);
    }
}

/* The at_first hooks' counterset, its width and the instance they add. */
static pcw_registration *fused_reg;
static uint32_t fused_width;
static pcw_instance *fused_extra;

static void create_one_more(void)
{
    fused_extra = create(fused_reg, "late", 8 * fused_width);
    set64(fused_extra, 0, 777);
}

static void close_the_extra(void)
{
    pcw_close_instance(fused_extra);
    fused_extra = NULL;
}

/* In steady state the blocks come while the collection reads (the rows
 * still in the cache) and are what collect + visit_rows would give, bit
 * for bit; the first collections, a changed instance list and an instance
 * created or closed in the middle of the read give them after it, with a
 * restart block when some had come before. */
static void collect_rows_hands_over_as_it_reads(void)
{
    enum { NI = 3000 }; /* several runs of 1,024 slots */
    fused_reg = register_plain("Edge Fused", PLAIN_CTRS);
    fused_width = PLAIN_CTRS;
    pcw_instance **in = calloc(NI, sizeof *in);
    cr_assert_not_null(in);
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        in[i] = create(fused_reg, name, 8 * PLAIN_CTRS);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Fused(*)\\*");
    size_t cap = (size_t)(NI + 1) * PLAIN_CTRS;
    seen_fused f = {
        {malloc(cap * sizeof(double)), malloc(cap), cap, 0, 0, 0, 0}, NULL, 0, 0, 0, NULL};
    cr_assert(f.r.v && f.r.st);
    /* Per round: what happens at the first block handed over during the
     * read, and what the blocks then look like. */
    enum { AFTER, STEADY, RESTART };
    static const struct {
        void (*at_first)(void);
        int expect;
    } plan[] = {
        {NULL, AFTER},  /* the first collection knows no instances */
        {NULL, AFTER},  /* the second reads names (a new set's first sample) */
        {NULL, STEADY}, /* the same instances: blocks during the read */
        {create_one_more, RESTART},
        {NULL, AFTER}, /* the last sample changed: not planned as steady */
        {NULL, STEADY},
        {close_the_extra, RESTART},
        {NULL, AFTER},
        {NULL, STEADY},
    };
    for (size_t round = 0; round < sizeof plan / sizeof plan[0]; round++) {
        /* New values each round, edges among them (2^52 and up are
         * converted again one by one). */
        for (int i = 0; i < NI; i++)
            for (uint32_t k = 0; k < PLAIN_CTRS; k++)
                set64(in[i], 8 * k,
                      i % 500 == 7 ? edges[(i + k + round) % NEDGE]
                                   : (uint64_t)i * 1000 + k + (uint64_t)round * 7);
        f.at_first = plan[round].at_first;
        char what[32];
        snprintf(what, sizeof what, "round %zu", round);
        collect_rows_check(q, h, 0, &f, what);
        if (plan[round].expect == AFTER) {
            cr_assert_eq(f.during, 0, "%s: blocks during the read", what);
            cr_assert_eq(f.restarts, 0, "%s", what);
        } else if (plan[round].expect == RESTART) {
            /* What came during the read is void, then every value again,
             * the new instance with them (or without the closed one). */
            cr_assert_gt(f.during, 0, "%s", what);
            cr_assert_eq(f.restarts, 1, "%s: one restart", what);
            cr_assert_eq(pcw_pdh_instance_count(h), fused_extra ? NI + 1u : (size_t)NI, "%s", what);
        } else {
            /* Every block during the read but the last (which waits for
             * the read to end to be known as the last), no restart. */
            cr_assert_eq(f.during + 1, f.r.blocks, "%s: %zu of %zu blocks during the read", what,
                         f.during, f.r.blocks);
            cr_assert_eq(f.restarts, 0, "%s", what);
        }
    }
    /* Other flags: PCW_FMT_RAW is a plain conversion too; a scale is not
     * (after the read, no restart needed as nothing came before). */
    collect_rows_check(q, h, PCW_FMT_RAW, &f, "raw");
    cr_assert_eq(f.during + 1, f.r.blocks, "raw: during the read");
    cr_assert_eq(pcw_pdh_set_scale(h, 2), PCW_OK);
    collect_rows_check(q, h, 0, &f, "scaled");
    cr_assert_eq(f.during, 0, "scaled: after the read");
    cr_assert_eq(f.restarts, 0);
    cr_assert_eq(pcw_pdh_set_scale(h, 0), PCW_OK);
    /* A non-zero return stops the visit, not the collection. */
    collect_rows_check(q, h, 0, &f, "after the scale");
    f.r.stop_after = 2;
    uint64_t before = pcw_pdh_collections(q);
    f.r.next = f.r.rows = f.r.blocks = 0;
    cr_assert_eq(pcw_pdh_collect_rows(q, NULL, h, 0, keep_fused, &f), PCW_OK);
    cr_assert_eq(f.r.blocks, 2, "stopped after the second block");
    cr_assert_eq(pcw_pdh_collections(q), before + 1);
    cr_assert_eq(pcw_pdh_instance_count(h), (size_t)NI);
    free(f.r.v);
    free(f.r.st);
    for (int i = 0; i < NI; i++)
        pcw_close_instance(in[i]);
    free(in);
    pcw_pdh_close(q);
}

Test(query_fast, collect_rows_hands_over_as_it_reads)
{
    collect_rows_hands_over_as_it_reads();
}

Test(query_fast_baseline, collect_rows_hands_over_as_it_reads)
{
    collect_rows_hands_over_as_it_reads();
}

/* Whether the read converts rows as it copies them (lib/consumer/private.h): with
 * AVX2, not in the baseline suite, and for rows of at most 32 values. */
static int converts_as_copied(uint32_t width)
{
#if defined(__x86_64__) && defined(__GNUC__)
    return __builtin_cpu_supports("avx2") && !getenv("PCW_NO_AVX2") && width <= 32;
#else
    (void)width;
    return 0;
#endif
}

/* The shape of a counterset for converts_as_copied_shapes. */
typedef struct cvt_shape {
    uint32_t width, flags;
} cvt_shape;

/* In steady state with the whole row selected, the read converts each run
 * as it copies it, and every block comes during the read - the last too.
 * Bit for bit what get_value gives, whatever the row's width (odd widths
 * start rows off 16-byte alignment; 33 values are too wide to convert as
 * copied), its padding (PCW_REG_CACHELINE rows lie apart) and its values
 * (a run with one of 2^52 or more is converted again, from its rows); an
 * instance created or closed during the read gives a restart and every
 * value again. ni instances of each shape, a hole every 97. */
static void converts_as_copied_shapes(int ni, const cvt_shape *shape, size_t nshape)
{
    pcw_instance **in = calloc((size_t)ni, sizeof *in);
    cr_assert_not_null(in);
    for (size_t sh = 0; sh < nshape; sh++) {
        const uint32_t w = shape[sh].width;
        char set[32], path[48];
        snprintf(set, sizeof set, "Cvt %zu", sh);
        snprintf(path, sizeof path, "\\%s(*)\\*", set);
        pcw_registration *r = register_u64s_flagged(set, PCW_MULTI_INSTANCE, shape[sh].flags, w,
                                                    PERF_COUNTER_LARGE_RAWCOUNT, 0);
        fused_reg = r, fused_width = w;
        for (int i = 0; i < ni; i++) {
            char name[16];
            snprintf(name, sizeof name, "x%d", i);
            in[i] = create(r, name, 8 * w);
        }
        /* Holes: a run copies several stretches of live slots. */
        for (int i = 5; i < ni - 1; i += 97) {
            pcw_close_instance(in[i]);
            in[i] = NULL;
        }
        pcw_pdh *q;
        cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
        pcw_pdh_counter *h = add(q, path);
        size_t cap = ((size_t)ni + 1) * w;
        seen_fused f = {
            {malloc(cap * sizeof(double)), malloc(cap), cap, 0, 0, 0, 0}, NULL, 0, 0, 0, NULL};
        cr_assert(f.r.v && f.r.st);
        /* Rounds 0 and 1 are not steady (no instances known, then names
         * read); from 2 on: small values, then an edge in a middle run
         * (the runs after it converted as copied again), then one in the
         * last run (its blocks after the read, as without AVX2); then an
         * instance created, and closed, at the first block handed over
         * (a restart; the round after is not steady). */
        enum { SMALL, EDGE_MIDDLE, EDGE_LAST, CREATE, CLOSE };
        static const int plan[] = {SMALL,  SMALL, SMALL, EDGE_MIDDLE, SMALL, EDGE_LAST, SMALL,
                                   CREATE, SMALL, SMALL, CLOSE,       SMALL, SMALL};
        for (size_t round = 0; round < sizeof plan / sizeof plan[0]; round++) {
            for (int i = 0; i < ni; i++)
                for (uint32_t k = 0; in[i] && k < w; k++)
                    set64(in[i], 8 * k, (uint64_t)i * 4099 + k * 7 + round * 1000003);
            int edge_at = plan[round] == EDGE_MIDDLE ? ni * 3 / 5
                          : plan[round] == EDGE_LAST ? ni - 1
                                                     : -1;
            if (edge_at >= 0)
                for (uint32_t k = 0; k < w; k++)
                    set64(in[edge_at], 8 * k, edges[(k + round) % NEDGE]);
            f.at_first = plan[round] == CREATE  ? create_one_more
                         : plan[round] == CLOSE ? close_the_extra
                                                : NULL;
            char what[64];
            snprintf(what, sizeof what, "%s round %zu", set, round);
            collect_rows_check(q, h, 0, &f, what);
            if (f.at_first) {
                cr_assert_gt(f.during, 0, "%s", what);
                cr_assert_eq(f.restarts, 1, "%s: one restart", what);
                cr_assert_eq(pcw_pdh_instance_count(h),
                             (size_t)(ni - (ni - 7) / 97 - 1) + !!fused_extra, "%s", what);
                continue;
            }
            cr_assert_eq(f.restarts, 0, "%s", what);
            if (round < 2 || plan[round - 1] == CREATE || plan[round - 1] == CLOSE) {
                cr_assert_eq(f.during, 0, "%s: not steady yet", what);
            } else if (!converts_as_copied(w)) {
                cr_assert_eq(f.during + 1, f.r.blocks, "%s: the last block after the read", what);
            } else if (plan[round] != EDGE_LAST) {
                cr_assert_eq(f.during, f.r.blocks, "%s: every block during the read (%zu of %zu)",
                             what, f.during, f.r.blocks);
            } /* (EDGE_LAST: the last run is converted again if the edge
                 was in a vector lane - not in rows of 3 apart - and its
                 last block comes after the read; the values agree.) */
        }
        free(f.r.v);
        free(f.r.st);
        pcw_pdh_close(q);
        for (int i = 0; i < ni; i++)
            if (in[i])
                pcw_close_instance(in[i]);
        cr_assert_eq(pcw_unregister(r), PCW_OK);
    }
    free(in);
}

static void collect_rows_converts_as_it_copies(void)
{
    /* Runs of 1,024, 1,024 and 452 rows. */
    static const cvt_shape shape[] = {{1, 0},  {3, 0},  {PLAIN_CTRS, 0},       {16, 0},
                                      {32, 0}, {33, 0}, {3, PCW_REG_CACHELINE}};
    converts_as_copied_shapes(2500, shape, sizeof shape / sizeof shape[0]);
}

Test(query_fast, collect_rows_converts_as_it_copies)
{
    collect_rows_converts_as_it_copies();
}

Test(query_fast_baseline, collect_rows_converts_as_it_copies)
{
    collect_rows_converts_as_it_copies();
}

/* Reads of more than 1 MiB of rows (lib/consumer/read.c's
 * PCW__STREAM_CVT_FROM_BYTES) stream the rows they convert as they copy
 * them: the values handed over, and the sample's rows after (get_value),
 * are the same. 9,000 instances: 1.1 MB of rows of 16 values; rows of 15
 * lie off 16-byte alignment every other row (those stored, the others
 * streamed), and with PCW_REG_CACHELINE apart (copied row by row). */
static void collect_rows_streams_large_reads(void)
{
    static const cvt_shape shape[] = {{16, 0}, {15, 0}, {15, PCW_REG_CACHELINE}, {32, 0}};
    converts_as_copied_shapes(9000, shape, sizeof shape / sizeof shape[0]);
}

Test(query_fast, collect_rows_streams_large_reads)
{
    collect_rows_streams_large_reads();
}

Test(query_fast_baseline, collect_rows_streams_large_reads)
{
    collect_rows_streams_large_reads();
}

/* A steady collect_rows allocates nothing: the conversion buffer is the
 * query's, made at the first use and kept (an ASan build counts every
 * allocation; other builds check nothing here). */
static void collect_rows_allocates_nothing(void)
{
#ifdef TU_HAVE_MALLOC_HOOKS
    enum { NI = 2000, NC = 16 };
    pcw_registration *r = register_plain("Alloc Rows", NC);
    pcw_instance **in = calloc(NI, sizeof *in);
    cr_assert_not_null(in);
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "a%d", i);
        in[i] = create(r, name, 8 * NC);
        for (uint32_t k = 0; k < NC; k++)
            set64(in[i], 8 * k, (uint64_t)i + k);
    }
    /* The provider folder's last change well in the past: the query looks
     * at a folder again while it may still change (fetch.c,
     * PCW__Q_DIR_SETTLE_NS), and that look allocates. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", pcw_provider_path(prov));
    char *slash = strrchr(dir, '/');
    cr_assert_not_null(slash);
    *slash = 0;
    struct timespec past[2];
    clock_gettime(CLOCK_REALTIME, &past[0]);
    past[0].tv_sec -= 10;
    past[1] = past[0];
    cr_assert_eq(utimensat(AT_FDCWD, dir, past, 0), 0, "%s: %s", dir, strerror(errno));
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Alloc Rows(*)\\*");
    int blocks = 0;
    for (int i = 0; i < 3; i++) /* grow everything */
        cr_assert_eq(pcw_pdh_collect_rows(q, NULL, h, 0, count_blocks_of, &blocks), PCW_OK);
    cr_assert(tu_alloc_count_start(), "the allocation hooks are not installed");
    for (int i = 0; i < 20; i++)
        cr_assert_eq(pcw_pdh_collect_rows(q, NULL, h, 0, count_blocks_of, &blocks), PCW_OK);
    long allocations = tu_alloc_count_stop();
    cr_assert_eq(allocations, 0, "%ld allocations in 20 steady collect_rows", allocations);
    cr_assert_eq(pcw_pdh_instance_count(h), (size_t)NI);
    pcw_pdh_close(q);
    for (int i = 0; i < NI; i++)
        pcw_close_instance(in[i]);
    free(in);
#endif
}

Test(query_fast, collect_rows_allocates_nothing)
{
    collect_rows_allocates_nothing();
}

Test(query_fast_baseline, collect_rows_allocates_nothing)
{
    collect_rows_allocates_nothing();
}

/* Handles collect_rows cannot hand over as it reads (a _Total, a rate, a
 * callback-free mix of sizes) give what collect + visit_rows gives, with
 * no restart; and its arguments are checked. */
static void collect_rows_other_handles(void)
{
    pcw_pdh *q, *q2;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_open(&q2, NULL), PCW_OK);
    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 0, c[0].name = "n", c[0].type = PERF_COUNTER_LARGE_RAWCOUNT, c[0].size = 8;
    c[0].aggregate = PCW_AGGREGATE_TOTAL;
    c[1].id = 1, c[1].name = "r", c[1].type = PERF_COUNTER_BULK_COUNT, c[1].size = 8;
    c[1].offset = 8;
    pcw_registration *r = register_typed("Edge Other", PCW_MULTI_AGGREGATE, c, 2);
    pcw_instance *in[40];
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf(name, sizeof name, "o%d", i);
        in[i] = create(r, name, 16);
    }
    pcw_pdh_counter *h = add(q, "\\Edge Other(*)\\*");
    enum { CAP = 41 * 2 };
    static double v[CAP];
    static uint8_t st[CAP];
    seen_fused f = {{v, st, CAP, 0, 0, 0, 0}, NULL, 0, 0, 0, NULL};
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 40; i++) {
            set64(in[i], 0, (uint64_t)i);
            set64(in[i], 8, (uint64_t)(round + 1) * 100 * (i + 1));
        }
        collect_rows_check(q, h, 0, &f, "total and rate");
        cr_assert_eq(f.during, 0);
        cr_assert_eq(f.restarts, 0);
    }
    int blocks = 0;
    cr_assert_eq(pcw_pdh_collect_rows(NULL, NULL, h, 0, count_blocks_of, &blocks), INVALID_ARG);
    cr_assert_eq(pcw_pdh_collect_rows(q, NULL, NULL, 0, count_blocks_of, &blocks), INVALID_ARG);
    cr_assert_eq(pcw_pdh_collect_rows(q, NULL, h, 0, NULL, &blocks), INVALID_ARG);
    cr_assert_eq(pcw_pdh_collect_rows(q2, NULL, h, 0, count_blocks_of, &blocks), INVALID_ARG,
                 "a handle of another query");
    cr_assert_eq(blocks, 0);
    size_t failed = 99;
    cr_assert_eq(pcw_pdh_collect_rows(q, &failed, h, 0, count_blocks_of, &blocks), PCW_OK);
    cr_assert_eq(failed, 0);
    cr_assert_gt(blocks, 0);
    pcw_pdh_close(q2);
    pcw_pdh_close(q);
}

Test(query_fast, collect_rows_other_handles)
{
    collect_rows_other_handles();
}

Test(query_fast, visit_rows_total_and_blocks)
{
    visit_rows_total_and_blocks();
}

Test(query_fast_baseline, visit_rows_total_and_blocks)
{
    visit_rows_total_and_blocks();
}

Test(query_fast, plain_rows_convert_exactly)
{
    plain_rows_convert_exactly();
}

Test(query_fast_baseline, plain_rows_convert_exactly)
{
    plain_rows_convert_exactly();
}

Test(query_fast, mixed_sizes_scales_and_rates)
{
    mixed_sizes_scales_and_rates();
}

Test(query_fast_baseline, mixed_sizes_scales_and_rates)
{
    mixed_sizes_scales_and_rates();
}

Test(query_fast, large_cook_all_converts_exactly)
{
    large_cook_all_converts_exactly();
}

Test(query_fast_baseline, large_cook_all_converts_exactly)
{
    large_cook_all_converts_exactly();
}

/* collect_column into v/st (room for cap), then: the instance count, and
 * column k of every instance bit for bit what get_value gives. */
static void collect_column_check(pcw_pdh *q, pcw_pdh_counter *h, size_t k, unsigned flags,
                                 double *v, uint8_t *st, size_t cap, const char *what)
{
    uint64_t before = pcw_pdh_collections(q);
    size_t n = 12345;
    memset(st, 0xEE, cap);
    cr_assert_eq(pcw_pdh_collect_column(q, NULL, h, k, flags, v, st, cap, &n), PCW_OK, "%s", what);
    cr_assert_eq(pcw_pdh_collections(q), before + 1, "%s: one collection", what);
    cr_assert_eq(n, pcw_pdh_instance_count(h), "%s: the instance count", what);
    cr_assert_leq(n, cap, "%s", what);
    size_t nc = pcw_pdh_selected_counter_count(h);
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_value x;
        cr_assert_eq(pcw_pdh_get_value(h, i * nc + k, flags, &x), PCW_OK);
        cr_assert_eq(st[i], x.status, "%s: instance %zu (%s)", what, i, x.instance);
        cr_assert(same_double(v[i], x.value), "%s: instance %zu (%s): %.17g vs %.17g", what, i,
                  x.instance, v[i], x.value);
    }
}

/* pcw_pdh_collect_column is pcw_pdh_collect and pcw_pdh_cook_column, bit
 * for bit, whichever way it goes: converted as the read copies the rows
 * (steady state, plain counters), or cooked after it - the first
 * collections, an instance created or closed since the last one (the
 * read finds the segment's generation moved), a scale, more instances
 * than the arrays hold (the count says how many; cook_column then). */
static void collect_column_converts_as_it_reads(void)
{
    enum { NI = 3000 }; /* several runs of 1,024 slots */
    fused_reg = register_plain("Edge Column", PLAIN_CTRS);
    fused_width = PLAIN_CTRS;
    pcw_instance **in = calloc(NI, sizeof *in);
    cr_assert_not_null(in);
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        in[i] = create(fused_reg, name, 8 * PLAIN_CTRS);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Column(*)\\*");
    size_t cap = NI + 1;
    double *v = malloc(cap * sizeof *v);
    uint8_t *st = malloc(cap);
    cr_assert(v && st);
    for (size_t round = 0; round < 12; round++) {
        for (int i = 0; i < NI; i++)
            for (uint32_t k = 0; k < PLAIN_CTRS; k++)
                set64(in[i], 8 * k,
                      i % 500 == 7 ? edges[(i + k + round) % NEDGE]
                                   : (uint64_t)i * 1000 + k + (uint64_t)round * 7);
        if (round == 4)
            create_one_more(); /* between two collections */
        if (round == 7)
            close_the_extra();
        char what[32];
        snprintf(what, sizeof what, "round %zu", round);
        size_t k = round % PLAIN_CTRS; /* first, middle and last columns */
        collect_column_check(q, h, k, round == 9 ? PCW_FMT_RAW : 0, v, st, cap, what);
    }
    cr_assert_eq(pcw_pdh_instance_count(h), (size_t)NI);
    /* A scale: cooked after the read, and scaled. */
    cr_assert_eq(pcw_pdh_set_scale(h, 2), PCW_OK);
    collect_column_check(q, h, 1, 0, v, st, cap, "scaled");
    cr_assert_eq(pcw_pdh_set_scale(h, 0), PCW_OK);
    collect_column_check(q, h, PLAIN_CTRS - 1, 0, v, st, cap, "unscaled");
    /* Without statuses. */
    size_t n = 0;
    cr_assert_eq(pcw_pdh_collect_column(q, NULL, h, 2, 0, v, NULL, cap, &n), PCW_OK);
    cr_assert_eq(n, (size_t)NI);
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_value x;
        cr_assert_eq(pcw_pdh_get_value(h, i * PLAIN_CTRS + 2, 0, &x), PCW_OK);
        cr_assert(same_double(v[i], x.value), "no statuses: instance %zu", i);
    }
    /* Arrays too small: the collection is made, the count says how many
     * (nothing is written past cap: the guard values stay). */
    v[10] = -1.0;
    st[10] = 0xEE;
    uint64_t before = pcw_pdh_collections(q);
    cr_assert_eq(pcw_pdh_collect_column(q, NULL, h, 0, 0, v, st, 10, &n), PCW_OK);
    cr_assert_eq(pcw_pdh_collections(q), before + 1);
    cr_assert_eq(n, (size_t)NI);
    cr_assert_eq(v[10], -1.0, "written past cap");
    cr_assert_eq(st[10], 0xEE, "written past cap");
    /* Then a steady collection into room enough is right again. */
    collect_column_check(q, h, 0, 0, v, st, cap, "after too small");
    /* A column out of range: collected, then refused as cook_column does. */
    before = pcw_pdh_collections(q);
    cr_assert_eq(pcw_pdh_collect_column(q, NULL, h, PLAIN_CTRS, 0, v, st, cap, &n),
                 PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collections(q), before + 1);
    /* Bad arguments: no collection. */
    before = pcw_pdh_collections(q);
    cr_assert_eq(pcw_pdh_collect_column(NULL, NULL, h, 0, 0, v, st, cap, &n),
                 PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collect_column(q, NULL, NULL, 0, 0, v, st, cap, &n),
                 PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collect_column(q, NULL, h, 0, 0, NULL, st, cap, &n),
                 PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collect_column(q, NULL, h, 0, 0, v, st, cap, NULL),
                 PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collections(q), before);
    free(v);
    free(st);
    for (int i = 0; i < NI; i++)
        pcw_close_instance(in[i]);
    free(in);
    pcw_pdh_close(q);
}

Test(query_fast, collect_column_converts_as_it_reads)
{
    collect_column_converts_as_it_reads();
}

Test(query_fast_baseline, collect_column_converts_as_it_reads)
{
    collect_column_converts_as_it_reads();
}

/* The reference order of pcw_pdh_collect_top: column k cooked after the
 * collection, every valid value, sorted (value in the direction, then
 * instance). */
static int top_ref_desc;
static int top_ref_cmp(const void *a, const void *b)
{
    const pcw_pdh_ranked *x = a, *y = b;
    if (x->value != y->value)
        return (x->value < y->value) != top_ref_desc ? -1 : 1;
    return x->instance < y->instance ? -1 : x->instance > y->instance;
}

/* collect_top of cap (t's) into room for cap + 4 guard entries: the first
 * cap of the reference order, nothing written past cap, one collection. */
static double collect_top_check(pcw_pdh *q, pcw_pdh_counter *h, pcw_pdh_top *t, int fused,
                                const char *what)
{
    size_t cap = t->cap;
    pcw_pdh_ranked *out = malloc((cap + 4) * sizeof *out);
    cr_assert_not_null(out);
    memset(out, 0xA5, (cap + 4) * sizeof *out);
    t->ranked = out;
    uint64_t before = pcw_pdh_collections(q);
    cr_assert_eq(pcw_pdh_collect_top(q, NULL, h, t), PCW_OK, "%s", what);
    cr_assert_eq(pcw_pdh_collections(q), before + 1, "%s: one collection", what);
    if (fused >= 0)
        cr_assert_eq(t->fused, fused, "%s: fused %d", what, t->fused);
    for (size_t i = cap; i < cap + 4; i++) {
        const unsigned char *g = (const unsigned char *)&out[i];
        for (size_t b = 0; b < sizeof *out; b++)
            cr_assert_eq(g[b], 0xA5, "%s: written past cap", what);
    }
    size_t n = pcw_pdh_instance_count(h), nc = pcw_pdh_selected_counter_count(h), nv = 0;
    double *v = malloc((n + 1) * sizeof *v);
    uint8_t *st = malloc(n + 1);
    pcw_pdh_ranked *ref = malloc((n + 1) * sizeof *ref);
    cr_assert(v && st && ref);
    cr_assert_eq(pcw_pdh_cook_column(h, t->counter, t->flags, v, st), PCW_OK);
    for (size_t i = 0; i < n; i++)
        if (st[i] == PCW_CSTATUS_VALID && v[i] == v[i])
            ref[nv++] = (pcw_pdh_ranked){v[i], i};
    top_ref_desc = t->descending;
    qsort(ref, nv, sizeof *ref, top_ref_cmp);
    cr_assert_eq(t->count, nv < cap ? nv : cap, "%s: count %zu of %zu", what, t->count, nv);
    for (size_t i = 0; i < t->count; i++)
        cr_assert(out[i].instance == ref[i].instance && same_double(out[i].value, ref[i].value),
                  "%s: rank %zu: instance %zu (%.17g) vs %zu (%.17g)", what, i, out[i].instance,
                  out[i].value, ref[i].instance, ref[i].value);
    (void)nc;
    double cut = t->count && t->count == cap ? out[cap - 1].value : NAN;
    free(v);
    free(st);
    free(ref);
    free(out);
    return cut; /* the cutoff: a bound for the next collection */
}

/* pcw_pdh_collect_top gives the first cap instances of the order the
 * cooked column gives - ties (many equal values, values of 2^52 and more
 * that convert to the same double) by instance - ranked as the read
 * copies the rows (steady state, plain counters) whatever the bound's
 * worth: none, the cutoff of the last collection, one no value reaches
 * (ranked again after the read), one every value reaches (the buffer cut
 * back again and again); or after the read: the first collections, an
 * instance created or closed, a scale; cap larger than the instances, 1,
 * 0; never a byte past cap. */
static void collect_top_ranks_as_it_reads(void)
{
    enum { NI = 9000 }; /* several runs of 1,024 slots, more than 8,192 candidates */
    fused_reg = register_plain("Edge Top", PLAIN_CTRS);
    fused_width = PLAIN_CTRS;
    pcw_instance **in = calloc(NI, sizeof *in);
    cr_assert_not_null(in);
    for (int i = 0; i < NI; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        in[i] = create(fused_reg, name, 8 * PLAIN_CTRS);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Edge Top(*)\\*");
    double cut = NAN;
    for (size_t round = 0; round < 16; round++) {
        for (int i = 0; i < NI; i++)
            for (uint32_t k = 0; k < PLAIN_CTRS; k++)
                set64(in[i], 8 * k,
                      i % 500 == 7 ? edges[(i + k + round) % NEDGE]
                      : k == 1     ? (uint64_t)(i % 13) /* ties */
                                   : (uint64_t)((i * 7919u + round * 31u) % 10007u));
        if (round == 5)
            create_one_more();
        if (round == 8)
            close_the_extra();
        char what[48];
        snprintf(what, sizeof what, "round %zu", round);
        pcw_pdh_top t = {.counter = round % 3, .descending = round % 4 != 3, .cap = 100};
        int fused = round >= 2 && round != 5 && round != 6 && round != 8 && round != 9 ? 1 : -1;
        t.bound = round % 3 == 0 ? cut : NAN;
        if (!isnan(t.bound)) /* another column's cutoff: right or not */
            fused = round >= 2 && round != 5 && round != 6 && round != 8 && round != 9 ? -1 : fused;
        if (round == 11) /* a bound no value reaches: ranked again after the read */
            t.bound = t.descending ? 1e300 : -1e300, fused = 0;
        if (round == 12) /* one every value reaches */
            t.bound = t.descending ? -1e300 : 1e300;
        if (round == 13)
            t.cap = NI + 50; /* more than there are */
        if (round == 14)
            t.cap = 1;
        if (round == 15)
            t.flags = PCW_FMT_RAW;
        /* The next bound: this cutoff (right for the next round's values
         * only by chance: a hint). */
        cut = collect_top_check(q, h, &t, fused, what);
    }
    /* A scale: ranked after the read, scaled. */
    cr_assert_eq(pcw_pdh_set_scale(h, 2), PCW_OK);
    pcw_pdh_top t = {.counter = 1, .descending = 1, .cap = 50, .bound = NAN};
    collect_top_check(q, h, &t, 0, "scaled");
    cr_assert_eq(pcw_pdh_set_scale(h, 0), PCW_OK);
    /* cap 0: a collection, nothing ranked, nothing written. */
    pcw_pdh_top z = {.counter = 0, .cap = 0, .bound = NAN};
    uint64_t before = pcw_pdh_collections(q);
    cr_assert_eq(pcw_pdh_collect_top(q, NULL, h, &z), PCW_OK);
    cr_assert_eq(z.count, 0);
    cr_assert_eq(pcw_pdh_collections(q), before + 1);
    /* A column out of range: collected, then refused. */
    pcw_pdh_ranked r1[4];
    pcw_pdh_top bad = {.counter = PLAIN_CTRS, .ranked = r1, .cap = 4, .bound = NAN};
    before = pcw_pdh_collections(q);
    cr_assert_eq(pcw_pdh_collect_top(q, NULL, h, &bad), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collections(q), before + 1);
    cr_assert_eq(bad.count, 0);
    /* Bad arguments: no collection. */
    before = pcw_pdh_collections(q);
    pcw_pdh_top ok = {.counter = 0, .ranked = r1, .cap = 4, .bound = NAN};
    cr_assert_eq(pcw_pdh_collect_top(NULL, NULL, h, &ok), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collect_top(q, NULL, NULL, &ok), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collect_top(q, NULL, h, NULL), PCW_E_INVALID_PARAMETER);
    ok.ranked = NULL;
    cr_assert_eq(pcw_pdh_collect_top(q, NULL, h, &ok), PCW_E_INVALID_PARAMETER);
    ok.ranked = r1;
    ok.cap = PCW_PDH_TOP_MAX + 1;
    cr_assert_eq(pcw_pdh_collect_top(q, NULL, h, &ok), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_collections(q), before);
    for (int i = 0; i < NI; i++)
        pcw_close_instance(in[i]);
    free(in);
    pcw_pdh_close(q);
}

Test(query_fast, collect_top_ranks_as_it_reads)
{
    collect_top_ranks_as_it_reads();
}

Test(query_fast_baseline, collect_top_ranks_as_it_reads)
{
    collect_top_ranks_as_it_reads();
}
