/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_totals.c - what a total (_Total, a global or per-name
 * aggregate) shows across the life of its members (docs/query.md,
 * "Totals"), and the query's PDH mappings (scale limits, statuses):
 *
 *   - a total whose provider goes away and comes back (the same instance,
 *     the same value) never shows a rate computed across the gap;
 *   - an instance joins a total's rate from its second sample, and a
 *     departure neither resets the total nor (History) drops its past;
 *     every aggregate function (sum, avg, min, max) of a rate is that of
 *     the members' own rates;
 *   - avg of a fraction is the mean of the members' fractions, sum the
 *     fraction of the sums; raw values are never rounded;
 *   - pcw_pdh_set_scale takes PDH's -7..7 only;
 *   - pcw_cstatus_pdh maps every status to PDH's.
 *
 * The provider is this process (the query reads its segment like any
 * other; closing it and opening another is a provider restart), and the
 * test writes values straight into the instances' blocks. A total is
 * checked against its members' values of the same collection, so no
 * timing is asserted.
 */
/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>

#include "pcw/provider.h"
#include "pcw/pdh.h"

TestSuite(query_totals, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* The counterset: 8-byte counters side by side. */
enum {
    C_COUNT,     /* PERF_COUNTER_BULK_COUNT, sum */
    C_AVG_RATE,  /* PERF_COUNTER_BULK_COUNT, avg */
    C_MIN_RATE,  /* PERF_COUNTER_BULK_COUNT, min */
    C_MAX_RATE,  /* PERF_COUNTER_BULK_COUNT, max */
    C_FRAC,      /* PERF_LARGE_RAW_FRACTION, avg */
    C_FRAC_BASE, /* PERF_LARGE_RAW_BASE (its fraction's) */
    C_HITS,      /* PERF_SAMPLE_FRACTION, sum (4 bytes, in an 8-byte slot) */
    C_HITS_BASE, /* PERF_SAMPLE_BASE (its fraction's; likewise) */
    C_LEVEL,     /* PERF_COUNTER_LARGE_RAWCOUNT, avg */
    C_N
};

static const struct {
    const char *name;
    uint32_t type, aggregate;
} ctrs[C_N] = {
    {"Count", PERF_COUNTER_BULK_COUNT, PCW_AGGREGATE_TOTAL},
    {"Avg Rate", PERF_COUNTER_BULK_COUNT, PCW_AGGREGATE_AVERAGE},
    {"Min Rate", PERF_COUNTER_BULK_COUNT, PCW_AGGREGATE_MIN},
    {"Max Rate", PERF_COUNTER_BULK_COUNT, PCW_AGGREGATE_MAX},
    {"Frac", PERF_LARGE_RAW_FRACTION, PCW_AGGREGATE_AVERAGE},
    {"Frac Base", PERF_LARGE_RAW_BASE, PCW_AGGREGATE_UNDEFINED},
    {"Hits", PERF_SAMPLE_FRACTION, PCW_AGGREGATE_TOTAL},
    {"Hits Base", PERF_SAMPLE_BASE, PCW_AGGREGATE_UNDEFINED},
    {"Level", PERF_COUNTER_LARGE_RAWCOUNT, PCW_AGGREGATE_AVERAGE},
};

static uint32_t size_of(uint32_t k)
{
    return k == C_HITS || k == C_HITS_BASE ? 4 : 8;
}

typedef struct prov {
    pcw_provider *p;
    pcw_registration *r;
} prov;

static prov open_set(const char *set, uint32_t instance_type)
{
    prov v;
    cr_assert_eq(pcw_provider_open(&v.p, NULL), PCW_OK);
    pcw_counter_desc c[C_N];
    for (uint32_t k = 0; k < C_N; k++) {
        c[k] = pcw_counter_desc_default();
        c[k].id = k, c[k].name = ctrs[k].name, c[k].type = ctrs[k].type;
        c[k].aggregate = ctrs[k].aggregate;
        c[k].offset = 8 * k, c[k].size = size_of(k);
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = set,
                                  .instance_type = instance_type,
                                  .counter_count = C_N,
                                  .counters = c};
    int rc = pcw_register(&v.r, v.p, &info);
    char why[256];
    cr_assert_eq(rc, PCW_OK, "%s: %s", set, pcw_register_error(rc, &info, why, sizeof why));
    return v;
}

static pcw_instance *create(prov *v, const char *name)
{
    pcw_instance *in;
    pcw_data d = {NULL, 8 * C_N};
    cr_assert_eq(pcw_create_instance(&in, v->r, name, 1, &d), PCW_OK, "%s", name);
    return in;
}

static void set(pcw_instance *in, uint32_t k, uint64_t x)
{
    unsigned char *p = (unsigned char *)pcw_instance_block(in, 0) + 8 * k;
    if (size_of(k) == 4)
        pcw_u32_set((uint32_t *)(void *)p, (uint32_t)x);
    else
        pcw_u64_set((uint64_t *)(void *)p, x);
}

static uint64_t get(pcw_instance *in, uint32_t k)
{
    const unsigned char *p = (const unsigned char *)pcw_instance_block(in, 0) + 8 * k;
    if (size_of(k) == 4)
        return *(const uint32_t *)(const void *)p;
    return *(const uint64_t *)(const void *)p;
}

/* Every rate counter of `in` advanced by `by` (and the sample fraction's
 * hits and samples by `by` and 2 x `by`). */
static void advance(pcw_instance *in, uint64_t by)
{
    for (uint32_t k = C_COUNT; k <= C_MAX_RATE; k++)
        set(in, k, get(in, k) + by);
    set(in, C_HITS, get(in, C_HITS) + by);
    set(in, C_HITS_BASE, get(in, C_HITS_BASE) + 2 * by);
}

static pcw_pdh *open_query(void)
{
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    return q;
}

static pcw_pdh_counter *add(pcw_pdh *q, const char *path)
{
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, path, &h, &err), PCW_OK, "%s: %s", path, err.message);
    return h;
}

static void collect(pcw_pdh *q)
{
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
}

/* The value of instance `inst` (display name) and counter k; 0 if absent. */
static int find(const pcw_pdh_counter *h, const char *inst, uint32_t k, pcw_pdh_value *v)
{
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, v), PCW_OK);
        if (strcmp(v->instance, inst) == 0 && v->counter_index == k)
            return 1;
    }
    return 0;
}

static pcw_pdh_value value(const pcw_pdh_counter *h, const char *inst, uint32_t k)
{
    pcw_pdh_value v;
    cr_assert(find(h, inst, k, &v), "no value %s\\%s", inst, ctrs[k].name);
    return v;
}

static void near(double got, double want, const char *what)
{
    cr_assert(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want)), "%s: %.17g, want %.17g", what, got,
              want);
}

/* Total `name`'s Count is VALID and `want`. */
static void total_is_named(const pcw_pdh_counter *h, const char *name, double want,
                           const char *when)
{
    pcw_pdh_value t = value(h, name, C_COUNT);
    cr_assert_eq(t.kind, PCW_PDH_AGGREGATE);
    cr_assert_eq(t.status, PCW_CSTATUS_VALID, "%s: %s is %s", when, name,
                 pcw_cstatus_str(t.status));
    near(t.value, want, when);
}

/* _Total's counter k is VALID and `want`. */
static void total_is(const pcw_pdh_counter *h, uint32_t k, double want, const char *when)
{
    pcw_pdh_value t = value(h, "_Total", k);
    cr_assert_eq(t.status, PCW_CSTATUS_VALID, "%s: _Total %s is %s", when, ctrs[k].name,
                 pcw_cstatus_str(t.status));
    near(t.value, want, when);
}

/* What the rate counters of _Total must be, from the members' own values
 * (those listed; each VALID). */
static void totals_of_members(const pcw_pdh_counter *h, const char *const *members, size_t n,
                              const char *when)
{
    double sum[C_N] = {0}, lo[C_N], hi[C_N];
    for (uint32_t k = 0; k < C_N; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t m = 0; m < n; m++)
        for (uint32_t k = C_COUNT; k <= C_MAX_RATE; k++) {
            pcw_pdh_value v = value(h, members[m], k);
            cr_assert_eq(v.status, PCW_CSTATUS_VALID, "%s: %s %s is %s", when, members[m],
                         ctrs[k].name, pcw_cstatus_str(v.status));
            sum[k] += v.value;
            lo[k] = fmin(lo[k], v.value), hi[k] = fmax(hi[k], v.value);
        }
    total_is(h, C_COUNT, sum[C_COUNT], when);
    total_is(h, C_AVG_RATE, sum[C_AVG_RATE] / (double)n, when);
    total_is(h, C_MIN_RATE, lo[C_MIN_RATE], when);
    total_is(h, C_MAX_RATE, hi[C_MAX_RATE], when);
}

/* Item 1 of issue 24: the provider goes away (two collections without
 * it) and comes back with the same instance and value. */
static void gap_and_restart(uint32_t instance_type, int history)
{
    prov p = open_set("Gap", instance_type);
    pcw_instance *w = create(&p, "w");
    set(w, C_COUNT, 1000);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Gap(*)\\Count");
    collect(q);
    collect(q);
    total_is(h, C_COUNT, 0.0, "steady, nothing counted");
    pcw_provider_close(p.p);
    /* Nothing happened while nobody published: 0/s, never a reset or a
     * rate over the query's whole life. */
    for (int i = 0; i < 2; i++) {
        collect(q);
        pcw_pdh_value t;
        if (find(h, "_Total", C_COUNT, &t)) {
            cr_assert_eq(t.status, PCW_CSTATUS_VALID, "gap %d: _Total is %s", i,
                         pcw_cstatus_str(t.status));
            cr_assert_eq(t.value, 0.0, "gap %d", i);
        } else {
            cr_assert(!history, "a History total stays shown");
        }
    }
    p = open_set("Gap", instance_type);
    w = create(&p, "w");
    set(w, C_COUNT, 1000);
    collect(q);
    /* w is new: its rate needs another sample, and so does the total's
     * (it has no member with a rate): not a number over the gap. */
    pcw_pdh_value t = value(h, "_Total", C_COUNT);
    cr_assert_eq(t.status, PCW_CSTATUS_NEW_DATA_NEEDED, "restart: _Total is %s (%g)",
                 pcw_cstatus_str(t.status), t.value);
    cr_assert_eq(value(h, "w", C_COUNT).status, PCW_CSTATUS_NEW_DATA_NEEDED);
    set(w, C_COUNT, 1500);
    collect(q);
    pcw_pdh_value m = value(h, "w", C_COUNT);
    cr_assert_eq(m.status, PCW_CSTATUS_VALID);
    cr_assert_gt(m.value, 0.0);
    total_is(h, C_COUNT, m.value, "after the restart");
    if (history) /* the first w's 1000 stays in the cumulative total */
        cr_assert_eq(value(h, "_Total", C_COUNT).raw.first, 2500);
    pcw_pdh_close(q);
    pcw_provider_close(p.p);
}

Test(query_totals, provider_gap_and_restart)
{
    gap_and_restart(PCW_MULTI_AGGREGATE, 0);
}

Test(query_totals, provider_gap_and_restart_history)
{
    gap_and_restart(PCW_MULTI_AGGREGATE_HISTORY, 1);
}

/* Item 2: a member joining with a large cumulative value, then leaving. */
static void join_and_leave(uint32_t instance_type, int history)
{
    prov p = open_set("Join", instance_type);
    pcw_instance *w = create(&p, "w");
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Join(*)\\*");
    collect(q);
    advance(w, 100);
    collect(q);
    const char *only_w[] = {"w"}, *both[] = {"w", "x"};
    totals_of_members(h, only_w, 1, "w alone");
    /* x appears with 1e6 counted before anyone saw it. */
    pcw_instance *x = create(&p, "x");
    advance(x, 1000000);
    advance(w, 100);
    collect(q);
    cr_assert_eq(value(h, "x", C_COUNT).status, PCW_CSTATUS_NEW_DATA_NEEDED);
    totals_of_members(h, only_w, 1, "x's first sample");
    advance(w, 100);
    advance(x, 300);
    collect(q);
    totals_of_members(h, both, 2, "x's second sample");
    /* x leaves: no reset, the total is w's again. */
    uint64_t x_count = get(x, C_COUNT);
    pcw_close_instance(x);
    advance(w, 200);
    collect(q);
    totals_of_members(h, only_w, 1, "after x left");
    /* History: x's past stays in the cumulative value. */
    uint64_t want = get(w, C_COUNT) + (history ? x_count : 0);
    cr_assert_eq(value(h, "_Total", C_COUNT).raw.first, want);
    advance(w, 50);
    collect(q);
    totals_of_members(h, only_w, 1, "the collection after");
    pcw_pdh_close(q);
    pcw_provider_close(p.p);
}

Test(query_totals, join_counts_from_second_sample_and_leave_does_not_reset)
{
    join_and_leave(PCW_MULTI_AGGREGATE, 0);
}

Test(query_totals, join_and_leave_history)
{
    join_and_leave(PCW_MULTI_AGGREGATE_HISTORY, 1);
}

/* Item 3: avg of fractions and of raw values, unrounded. */
Test(query_totals, averaged_fractions_and_values)
{
    prov p = open_set("Avg", PCW_MULTI_AGGREGATE);
    pcw_instance *a = create(&p, "a"), *b = create(&p, "b");
    set(a, C_FRAC, 1), set(a, C_FRAC_BASE, 3);
    set(b, C_FRAC, 2), set(b, C_FRAC_BASE, 4);
    set(a, C_LEVEL, 1), set(b, C_LEVEL, 2);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Avg(*)\\*");
    collect(q);
    /* avg: the mean of the members' fractions, (1/3 + 2/4) / 2. */
    total_is(h, C_FRAC, 100.0 * (1.0 / 3.0 + 2.0 / 4.0) / 2.0, "avg of 1/3 and 2/4");
    /* avg of 1 and 2 is 1.5, not rounded. */
    total_is(h, C_LEVEL, 1.5, "avg of 1 and 2");
    /* sum of a sample fraction: the fraction of the sums over the
     * interval, (1 + 3) / (4 + 4). */
    set(a, C_HITS, get(a, C_HITS) + 1), set(a, C_HITS_BASE, get(a, C_HITS_BASE) + 4);
    set(b, C_HITS, get(b, C_HITS) + 3), set(b, C_HITS_BASE, get(b, C_HITS_BASE) + 4);
    collect(q);
    total_is(h, C_HITS, 50.0, "sum of 1/4 and 3/4");
    near(value(h, "a", C_HITS).value, 25.0, "a's own");
    /* min/max of a fraction (aggregate attribute on the counter): the
     * members' own; a member with a zero base has no fraction and is not
     * counted. */
    set(b, C_FRAC_BASE, 0);
    collect(q);
    total_is(h, C_FRAC, 100.0 / 3.0, "b has no fraction");
    pcw_pdh_close(q);
    pcw_provider_close(p.p);
}

/* History keeps a departed member's fraction (and value) in the avg. */
Test(query_totals, history_keeps_departed_fractions)
{
    prov p = open_set("HAvg", PCW_MULTI_AGGREGATE_HISTORY);
    pcw_instance *a = create(&p, "a"), *b = create(&p, "b");
    set(a, C_FRAC, 1), set(a, C_FRAC_BASE, 3), set(a, C_LEVEL, 1);
    set(b, C_FRAC, 2), set(b, C_FRAC_BASE, 4), set(b, C_LEVEL, 2);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\HAvg(*)\\*");
    collect(q);
    pcw_close_instance(b);
    collect(q);
    total_is(h, C_FRAC, 100.0 * (1.0 / 3.0 + 2.0 / 4.0) / 2.0, "b departed");
    total_is(h, C_LEVEL, 1.5, "b departed");
    cr_assert_eq(value(h, "_Total", C_FRAC).sources, 1);
    pcw_pdh_close(q);
    pcw_provider_close(p.p);
}

/* A global aggregate combines every provider's instance the same way. */
Test(query_totals, global_aggregate_rates)
{
    prov p1 = open_set("Glob", PCW_GLOBAL_AGGREGATE);
    pcw_instance *a = create(&p1, "");
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Glob\\Count");
    collect(q);
    advance(a, 10);
    collect(q);
    pcw_pdh_value t = value(h, "", C_COUNT);
    cr_assert_eq(t.status, PCW_CSTATUS_VALID);
    cr_assert_gt(t.value, 0.0);
    /* A second provider joins with a large count: not a rate yet. */
    prov p2 = open_set("Glob", PCW_GLOBAL_AGGREGATE);
    pcw_instance *b = create(&p2, "");
    set(b, C_COUNT, 1000000000);
    collect(q);
    t = value(h, "", C_COUNT);
    cr_assert_eq(t.status, PCW_CSTATUS_VALID, "%s", pcw_cstatus_str(t.status));
    cr_assert_eq(t.value, 0.0, "a joined 1e9 is not a rate: %g", t.value);
    pcw_pdh_close(q);
    pcw_provider_close(p2.p);
    pcw_provider_close(p1.p);
}

/* An instanceAggregate set's per-name total, the same way: a provider's
 * "w" joining with a large count, then leaving, changes nothing while
 * the counts stand still. */
Test(query_totals, instance_aggregate_join_and_leave)
{
    prov p1 = open_set("ByName", PCW_INSTANCE_AGGREGATE);
    pcw_instance *a = create(&p1, "w");
    set(a, C_COUNT, 500);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\ByName(w)\\Count");
    collect(q);
    collect(q);
    total_is_named(h, "w", 0.0, "steady");
    prov p2 = open_set("ByName", PCW_INSTANCE_AGGREGATE);
    pcw_instance *b = create(&p2, "w");
    set(b, C_COUNT, 1000000000);
    collect(q);
    total_is_named(h, "w", 0.0, "a second w joins with 1e9");
    collect(q);
    total_is_named(h, "w", 0.0, "both counted");
    pcw_provider_close(p2.p);
    collect(q);
    total_is_named(h, "w", 0.0, "the second w left");
    pcw_pdh_close(q);
    pcw_provider_close(p1.p);
}

/* Item 5: PdhSetCounterScaleFactor's range, -7..7. */
Test(query_totals, scale_factor_range)
{
    prov p = open_set("Scale", PCW_MULTI_INSTANCE);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Scale(*)\\Count");
    cr_assert_eq(pcw_pdh_set_scale(h, -7), PCW_OK);
    cr_assert_eq(pcw_pdh_set_scale(h, 7), PCW_OK);
    cr_assert_eq(pcw_pdh_set_scale(h, 0), PCW_OK);
    cr_assert_eq(pcw_pdh_set_scale(h, 8), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_set_scale(h, -8), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_set_scale(h, 10), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_set_scale(NULL, 0), PCW_E_INVALID_PARAMETER);
    pcw_pdh_close(q);
    pcw_provider_close(p.p);
}
/* Item 7: every status's PDH CStatus (docs/query.md, "Statuses"). */
Test(query_totals, status_mapping_to_pdh)
{
    const struct {
        int status;
        uint32_t unchanged, changed;
    } map[] = {
        {PCW_CSTATUS_VALID, 0x00000000u /* VALID_DATA */, 0x00000001u /* NEW_DATA */},
        /* The rest do not depend on `changed`. */
        {PCW_CSTATUS_NEW_DATA_NEEDED, 0xC0000BBAu, 0xC0000BBAu}, /* INVALID_DATA */
        {PCW_CSTATUS_NO_DATA, 0x800007D5u, 0x800007D5u},         /* PDH_NO_DATA */
        {PCW_CSTATUS_NO_INSTANCE, 0x800007D1u, 0x800007D1u},     /* NO_INSTANCE */
        {PCW_CSTATUS_PROVIDER_GONE, 0x800007D0u, 0x800007D0u},   /* NO_MACHINE */
        {PCW_CSTATUS_NO_BASE, 0xC0000BB9u, 0xC0000BB9u},         /* NO_COUNTER */
        {PCW_CSTATUS_NEGATIVE_DENOMINATOR, 0x800007D6u, 0x800007D6u},
        {PCW_CSTATUS_ZERO_DENOMINATOR, 0xC0000BBAu, 0xC0000BBAu},
        {PCW_CSTATUS_BAD_TIMEBASE, 0x800007D7u, 0x800007D7u},
        {PCW_CSTATUS_RESET, 0x800007D8u, 0x800007D8u},
        {PCW_CSTATUS_OVERFLOW, 0xC0000BBAu, 0xC0000BBAu},
        {PCW_CSTATUS_NOT_AGGREGATED, 0xC0000BBAu, 0xC0000BBAu},
        {PCW_CSTATUS_ABOVE_RANGE, 0xC0000BBAu, 0xC0000BBAu},
        {PCW_CSTATUS_INCONSISTENT, 0xC0000BBAu, 0xC0000BBAu},
        {99, 0xC0000BBAu, 0xC0000BBAu},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        cr_assert_eq(pcw_cstatus_pdh(map[i].status, 0), map[i].unchanged, "%d unchanged: %#x",
                     map[i].status, pcw_cstatus_pdh(map[i].status, 0));
        cr_assert_eq(pcw_cstatus_pdh(map[i].status, 1), map[i].changed, "%d changed: %#x",
                     map[i].status, pcw_cstatus_pdh(map[i].status, 1));
    }
}
