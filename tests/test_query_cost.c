/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_cost.c - the query layer's cost model, counted, not
 * timed (issue 23 item 5): adding a counter handle for one named instance
 * costs the same whatever the counterset's size, and so does bringing it
 * up to date after the instances changed. pcwstat's `\Set(*)\*` with CSV
 * output adds one such handle per column, so a linear scan per handle made
 * its set-up quadratic (4.9 s at 5,000 instances, over 120 s at 50,000).
 *
 * The work is q->entry_tests (lib/query/pdh.h): the entries the
 * handles' matches examined. And an instanceAggregate set's per-name
 * aggregates, s->agg_tests: a scan of every aggregate slot for a free
 * one made the first collection of unique names quadratic (2.8 s at
 * 100,000 instances, 0.15 s at 25,000). The handles must also still select exactly
 * what the scan selected: names case-insensitively, #n, totals.
 */
/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>

#include "../lib/query/fetch.h"
#include "../lib/query/pdh.h"
#include "pcw/provider.h"
#include "pcw/pdh.h"

#define N 5000

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

TestSuite(query_cost, .init = setup, .fini = teardown, .timeout = 120);

static pcw_registration *register_cost(pcw_provider *p)
{
    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "c0", c[0].type = PERF_COUNTER_LARGE_RAWCOUNT;
    c[0].offset = 0, c[0].size = 8, c[0].aggregate = PCW_AGGREGATE_TOTAL;
    c[1].id = 2, c[1].name = "c1", c[1].type = PERF_COUNTER_LARGE_RAWCOUNT;
    c[1].offset = 8, c[1].size = 8, c[1].aggregate = PCW_AGGREGATE_TOTAL;
    pcw_registration_info info = {
        .version = PCW_VERSION_1,
        .name = "Cost",
        .guid = "{0c05a2e1-7a31-4f0c-9d55-3b8f2b4e6a10}",
        .instance_type = PCW_MULTI_AGGREGATE,
        .counter_count = 2,
        .counters = c,
    };
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    return r;
}

static pcw_instance *create(pcw_registration *r, const char *name, uint64_t v)
{
    uint64_t block[2] = {v, 0};
    pcw_data d = {block, sizeof block};
    pcw_instance *in;
    cr_assert_eq(pcw_create_instance(&in, r, name, 1, &d), PCW_OK, "%s", name);
    return in;
}

static pcw_pdh_counter *add(pcw_pdh *q, const char *path)
{
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, path, &h, &err), PCW_OK, "%s: %s", path, err.message);
    return h;
}

/* h selects one value, of instance `inst` (as its path shows it), and it
 * is the value the scan of every entry (the wildcard handle `all`) finds at
 * that path: the index selects what the scan selected. */
static void one_value(pcw_pdh_counter *h, pcw_pdh_counter *all, const char *inst)
{
    cr_assert_eq(pcw_pdh_value_count(h), 1, "%s: %zu values", pcw_pdh_counter_path(h),
                 pcw_pdh_value_count(h));
    pcw_pdh_value val, ref;
    cr_assert_eq(pcw_pdh_get_value(h, 0, 0, &val), PCW_OK);
    char path[512], want[512], other[512];
    pcw_pdh_value_path(h, 0, 0, path, sizeof path);
    snprintf(want, sizeof want, "\\Cost(%s)\\c0", inst);
    cr_assert_str_eq(path, want);
    if (val.status == PCW_CSTATUS_NO_INSTANCE)
        return;
    size_t n = pcw_pdh_value_count(all), i;
    for (i = 0; i < n; i++) {
        pcw_pdh_value_path(all, i, 0, other, sizeof other);
        if (strcmp(other, path) == 0)
            break;
    }
    cr_assert(i < n, "%s is not among the wildcard's values", path);
    cr_assert_eq(pcw_pdh_get_value(all, i, 0, &ref), PCW_OK);
    cr_assert(val.status == ref.status && val.value == ref.value, "%s: %.17g, the scan %.17g", path,
              val.value, ref.value);
}

Test(query_cost, named_instances_cost_the_same_at_any_size)
{
    pcw_registration *r = register_cost(prov);
    static pcw_instance *inst[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "i%d", i);
        inst[i] = create(r, name, (uint64_t)i);
    }
    /* Three instances of one name (#0, #1, #2: one per provider) and a
     * name that differs by case only. */
    pcw_provider *p2, *p3;
    cr_assert_eq(pcw_provider_open(&p2, NULL), PCW_OK);
    cr_assert_eq(pcw_provider_open(&p3, NULL), PCW_OK);
    create(r, "dup", 1000001);
    create(register_cost(p2), "dup", 1000002);
    create(register_cost(p3), "dup", 1000003);
    create(r, "Mixed", 77);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    /* As pcwstat: the user's wildcard path, collected, then one handle per
     * instance it matched. */
    pcw_pdh_counter *all = add(q, "\\Cost(*)\\*");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_value_count(all), 2 * (N + 5));
    static pcw_pdh_counter *h[N];
    uint64_t before = q->entry_tests;
    for (int i = 0; i < N; i++) {
        char path[64];
        snprintf(path, sizeof path, "\\Cost(i%d)\\c0", i);
        h[i] = add(q, path);
    }
    pcw_pdh_counter *d1 = add(q, "\\Cost(dup#1)\\c0"), *d0 = add(q, "\\Cost(DUP)\\c0"),
                    *d2 = add(q, "\\Cost(Dup#2)\\c0"), *mx = add(q, "\\Cost(mIXED)\\c0"),
                    *tot = add(q, "\\Cost(_total)\\c0"), *gone = add(q, "\\Cost(nobody)\\c0");
    uint64_t setup_cost = q->entry_tests - before;
    /* ...and memory: what each handle keeps is what it selected. */
    size_t kept = 0;
    for (int i = 0; i < N; i++)
        for (size_t j = 0; j < h[i]->nm; j++)
            kept += h[i]->m[j].ents_cap;
    cr_assert_leq(kept, 16ull * N, "%d named handles keep room for %zu entries", N, kept);
    /* The scan examined every entry for every handle: N * N. */
    cr_assert_leq(setup_cost, 8ull * N, "adding %d named handles examined %llu entries", N,
                  (unsigned long long)setup_cost);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    for (int i = 0; i < N; i += 97) {
        char name[32];
        snprintf(name, sizeof name, "i%d", i);
        one_value(h[i], all, name);
    }
    one_value(d0, all, "dup");
    one_value(d1, all, "dup#1");
    one_value(d2, all, "dup#2");
    one_value(mx, all, "Mixed");
    one_value(tot, all, "_Total");
    one_value(gone, all, "nobody");
    pcw_pdh_value v;
    cr_assert_eq(pcw_pdh_get_value(gone, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_NO_INSTANCE);
    /* Churn: a tenth of the instances go, as many come; every handle is
     * brought up to date by the next collection, at a cost that does not
     * grow with handles x entries either. */
    for (int i = 0; i < N; i += 10)
        pcw_close_instance(inst[i]);
    for (int i = 0; i < N / 10; i++) {
        char name[32];
        snprintf(name, sizeof name, "new%d", i);
        create(r, name, 5);
    }
    before = q->entry_tests;
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    uint64_t churn_cost = q->entry_tests - before;
    cr_assert_leq(churn_cost, 8ull * N, "one collection after churn examined %llu entries",
                  (unsigned long long)churn_cost);
    cr_assert_eq(pcw_pdh_value_count(h[10]), 1);
    cr_assert_eq(pcw_pdh_get_value(h[10], 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_NO_INSTANCE, "a closed instance's handle");
    one_value(h[11], all, "i11");
    pcw_pdh_close(q);
    pcw_provider_close(p3);
    pcw_provider_close(p2);
}

/* An instanceAggregate set has one aggregate per name: finding a slot for
 * a new name must not examine every other name's (N * N / 2 for N unique
 * names), and the slots of names that left are still reused,
 * so that memory stays bounded under churn of unique names. */
Test(query_cost, per_name_aggregates_cost_the_same_at_any_size)
{
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "c0", c.type = PERF_COUNTER_LARGE_RAWCOUNT;
    c.offset = 0, c.size = 8, c.aggregate = PCW_AGGREGATE_TOTAL;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "ByName",
                                  .instance_type = PCW_INSTANCE_AGGREGATE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK);
    static pcw_instance *inst[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        uint64_t v = (uint64_t)i;
        pcw_data d = {&v, sizeof v};
        snprintf(name, sizeof name, "n%d", i);
        cr_assert_eq(pcw_create_instance(&inst[i], r, name, 1, &d), PCW_OK);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *all = add(q, "\\ByName(*)\\c0");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_value_count(all), N);
    pcw__q_set *s = pcw__q_set_get(q, "ByName", 0);
    cr_assert_not_null(s);
    cr_assert_eq(s->nagg, N);
    cr_assert_leq(s->agg_tests, 4ull * N, "%d names' aggregates examined %llu slots", N,
                  (unsigned long long)s->agg_tests);
    /* Churn: every other name leaves, as many new ones come. Their
     * aggregates take the freed slots (none is added), the lowest first,
     * and each still costs the same. */
    for (int i = 0; i < N; i += 2)
        pcw_close_instance(inst[i]);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_value_count(all), N / 2);
    for (int i = 0; i < N / 2; i++) {
        uint64_t v = 1000000u + (uint64_t)i;
        pcw_data d = {&v, sizeof v};
        snprintf(name, sizeof name, "m%d", i);
        cr_assert_eq(pcw_create_instance(&inst[2 * i], r, name, 1, &d), PCW_OK);
    }
    uint64_t before = s->agg_tests;
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_leq(s->agg_tests - before, 4ull * N, "%d new names examined %llu slots", N / 2,
                  (unsigned long long)(s->agg_tests - before));
    cr_assert_eq(s->nagg, N, "the slots of names that left are not reused: %zu", s->nagg);
    /* Every value is its own instance's, under its own name. */
    cr_assert_eq(pcw_pdh_value_count(all), N);
    for (size_t i = 0; i < N; i++) {
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(all, i, 0, &v), PCW_OK);
        cr_assert_eq(v.status, PCW_CSTATUS_VALID);
        cr_assert_eq(v.kind, PCW_PDH_AGGREGATE);
        if (v.instance[0] == 'm')
            snprintf(name, sizeof name, "m%d", (int)(v.value - 1000000));
        else
            snprintf(name, sizeof name, "n%d", (int)v.value);
        cr_assert_str_eq(v.instance, name);
    }
    pcw_pdh_close(q);
}
