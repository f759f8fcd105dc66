/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query.c - the query object against real provider processes
 * (tests/helpers/query_provider): values and statuses, rates, _Total and
 * globalAggregate across two providers, #n names that stay put, History
 * keeping a departed provider's contribution, providers that crash,
 * ADD_COUNTER / REMOVE_COUNTER notifications, path validation, expansion,
 * and a steady-state collection that allocates nothing.
 *
 * Every wait is on something observable: a provider's "ready"/"ok" line
 * (its segment is written before it answers), a log line, or an expected
 * value appearing. The only sleeps let time pass between two samples of a
 * rate, whose value is asserted within a tolerance, never as a timing.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <malloc.h>
#include <math.h>

#include "pcw/pdh.h"
#include "query_provider.h"

TestSuite(query, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

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
    int rc = pcw_pdh_add_counter(q, path, &h, &err);
    cr_assert_eq(rc, PCW_OK, "add %s: %s", path, err.message);
    return h;
}

/* Value of handle h for instance display name `inst` and counter `ctr`. */
static int find(const pcw_pdh_counter *h, const char *inst, const char *ctr, pcw_pdh_value *v)
{
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, v), PCW_OK);
        if (strcmp(v->instance, inst) == 0 && strcmp(v->counter, ctr) == 0)
            return 1;
    }
    return 0;
}

static pcw_pdh_value value(const pcw_pdh_counter *h, const char *inst, const char *ctr)
{
    pcw_pdh_value v;
    cr_assert(find(h, inst, ctr, &v), "no value %s\\%s", inst, ctr);
    return v;
}

/* The whole file, as a string ("" if missing). */
static const char *slurp(const char *path)
{
    static char buf[4096];
    size_t n = 0;
    unsigned char *d = tu_read_file(path, sizeof buf - 1, &n);
    memcpy(buf, d ? (const char *)d : "", d ? n : 0);
    buf[d ? n : 0] = 0;
    free(d);
    return buf;
}

static void collect(pcw_pdh *q)
{
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
}

Test(query, values_and_statuses)
{
    tu_child p;
    qp_start(&p, "Query Test", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "set a %d 42", QP_LEVEL);
    qp_cmd(&p, "set a %d 25", QP_HIT);
    qp_cmd(&p, "set a %d 200", QP_HIT_BASE);
    qp_cmd(&p, "create b");
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Query Test(*)\\*");
    collect(q);
    /* 2 instances x 7 counters (the base is used, never shown). */
    cr_assert_eq(pcw_pdh_value_count(h), 14);
    cr_assert_eq(pcw_pdh_instance_count(h), 2);
    cr_assert_eq(pcw_pdh_selected_counter_count(h), 7);
    pcw_pdh_value v = value(h, "a", "Level");
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    cr_assert_eq(v.value, 42.0);
    cr_assert_eq(v.raw.first, 42);
    cr_assert_eq(v.pid, p.pid);
    cr_assert_neq(v.provider_id, 0);
    cr_assert_eq(v.kind, PCW_PDH_INSTANCE);
    cr_assert_str_eq(v.counterset, "Query Test");
    /* 100 * 25 / 200 = 12.5 % */
    v = value(h, "a", "Hit Ratio");
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    cr_assert_eq(v.value, 12.5);
    /* b's base is 0: no ratio. */
    cr_assert_eq(value(h, "b", "Hit Ratio").status, PCW_CSTATUS_ZERO_DENOMINATOR);
    /* A rate needs two samples. */
    cr_assert_eq(value(h, "a", "Count").status, PCW_CSTATUS_NEW_DATA_NEEDED);
    collect(q);
    v = value(h, "a", "Count");
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "%s", pcw_cstatus_str(v.status));
    cr_assert_eq(v.value, 0.0);
    /* Paths of values. */
    char path[256];
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        pcw_pdh_get_value(h, i, 0, &v);
        pcw_pdh_value_path(h, i, 0, path, sizeof path);
        char want[256];
        snprintf(want, sizeof want, "\\Query Test(%s)\\%s", v.instance, v.counter);
        cr_assert_str_eq(path, want);
    }
    /* Instance-major order: a's counters first. */
    pcw_pdh_get_value(h, 0, 0, &v);
    cr_assert_str_eq(v.instance, "a");
    cr_assert_str_eq(v.counter, "Count");
    pcw_pdh_get_value(h, 7, 0, &v);
    cr_assert_str_eq(v.instance, "b");
    /* The column API gives the same numbers. */
    double col[2];
    uint8_t st[2];
    cr_assert_eq(pcw_pdh_cook_column(h, 1, 0, col, st), PCW_OK); /* Level */
    cr_assert_eq(col[0], 42.0);
    cr_assert_eq(st[0], PCW_CSTATUS_VALID);
    pcw_pdh_close(q);
    qp_stop(&p);
}

Test(query, rate_of_a_counter)
{
    tu_child p;
    qp_start(&p, "Query Test", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "rate a %d 1000", QP_RATE); /* PERF_COUNTER_COUNTER at 1000/s */
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Query Test(a)\\Rate");
    collect(q);
    cr_assert_eq(value(h, "a", "Rate").status, PCW_CSTATUS_NEW_DATA_NEEDED);
    usleep(500 * 1000); /* time passes between the two samples */
    collect(q);
    pcw_pdh_value v = value(h, "a", "Rate");
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    cr_assert(fabs(v.value - 1000.0) < 200.0, "rate %.1f/s, want 1000", v.value);
    pcw_pdh_close(q);
    qp_stop(&p);
}

Test(query, total_across_two_providers_and_stable_names)
{
    tu_child a, b;
    qp_start(&a, "Agg", PCW_MULTI_AGGREGATE, NULL);
    qp_start(&b, "Agg", PCW_MULTI_AGGREGATE, NULL);
    /* Both publish "w"; a also "x". */
    qp_cmd(&a, "create w");
    qp_cmd(&a, "set w %d 10", QP_LEVEL);
    qp_cmd(&a, "set w %d 5", QP_PEAK);
    qp_cmd(&a, "set w %d 5", QP_LOW);
    qp_cmd(&a, "set w %d 1", QP_HIT);
    qp_cmd(&a, "set w %d 4", QP_HIT_BASE);
    qp_cmd(&a, "set w %d 7", QP_PLAIN);
    qp_cmd(&a, "set w %d 100", QP_COUNT);
    qp_cmd(&b, "create w");
    qp_cmd(&b, "set w %d 20", QP_LEVEL);
    qp_cmd(&b, "set w %d 9", QP_PEAK);
    qp_cmd(&b, "set w %d 2", QP_LOW);
    qp_cmd(&b, "set w %d 3", QP_HIT);
    qp_cmd(&b, "set w %d 4", QP_HIT_BASE);
    qp_cmd(&b, "set w %d 1000", QP_COUNT);
    qp_cmd(&a, "create x");
    qp_cmd(&a, "set x %d 30", QP_LEVEL);
    qp_cmd(&a, "set x %d 1", QP_PEAK);
    qp_cmd(&a, "set x %d 8", QP_LOW);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Agg(*)\\*");
    collect(q);
    /* _Total first, then a's instances, then b's. */
    pcw_pdh_value v;
    pcw_pdh_get_value(h, 0, 0, &v);
    cr_assert_str_eq(v.instance, "_Total");
    cr_assert_eq(v.kind, PCW_PDH_TOTAL);
    cr_assert_eq(v.pid, 0);
    cr_assert_eq(v.sources, 3);
    /* Duplicate names across providers: w (a's, first found) and w#1. */
    v = value(h, "w", "Level");
    cr_assert_eq(v.pid, a.pid);
    cr_assert_eq(v.value, 10.0);
    v = value(h, "w#1", "Level");
    cr_assert_eq(v.pid, b.pid);
    cr_assert_eq(v.dup_index, 1);
    cr_assert_str_eq(v.instance_name, "w");
    cr_assert_eq(v.value, 20.0);
    /* _Total by each counter's aggregate function, from raw values:
     * Level avg (10+20+30)/3 = 20; Peak max(5,9,1) = 9; Low min(5,2,8) = 2;
     * Hit Ratio 100 * (1+3+0)/(4+4+0) = 50 %; Plain: undefined. */
    cr_assert_eq(value(h, "_Total", "Level").value, 20.0);
    cr_assert_eq(value(h, "_Total", "Peak").value, 9.0);
    cr_assert_eq(value(h, "_Total", "Low").value, 2.0);
    cr_assert_eq(value(h, "_Total", "Hit Ratio").value, 50.0);
    cr_assert_eq(value(h, "_Total", "Plain").status, PCW_CSTATUS_NOT_AGGREGATED);
    cr_assert_eq(value(h, "_Total", "Count").raw.first, 1100);
    /* Paths name them the same way. */
    char path[128];
    pcw_pdh_counter *w1 = add(q, "\\Agg(w#1)\\Level");
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(w1), 1);
    pcw_pdh_value_path(w1, 0, 0, path, sizeof path);
    cr_assert_str_eq(path, "\\Agg(w#1)\\Level");
    cr_assert_eq(value(w1, "w#1", "Level").pid, b.pid);
    /* a's "w" closes: b's keeps #1 (Windows would renumber it to "w"). */
    qp_cmd(&a, "close w");
    collect(q);
    cr_assert(!find(h, "w", "Level", &v), "w is gone");
    v = value(h, "w#1", "Level");
    cr_assert_eq(v.pid, b.pid);
    cr_assert_eq(value(w1, "w#1", "Level").value, 20.0);
    /* A new "w" takes the free #0. */
    qp_cmd(&a, "create w");
    qp_cmd(&a, "set w %d 11", QP_LEVEL);
    collect(q);
    cr_assert_eq(value(h, "w", "Level").value, 11.0);
    cr_assert_eq(value(h, "w", "Level").pid, a.pid);
    cr_assert_eq(value(h, "w#1", "Level").pid, b.pid);
    /* Without History the total loses what departs: b exits. */
    cr_assert_eq(value(h, "_Total", "Count").raw.first, 1000);
    qp_stop(&b);
    collect(q);
    cr_assert(!find(h, "w#1", "Level", &v));
    cr_assert_eq(value(h, "_Total", "Count").raw.first, 0);
    /* The handle naming w#1 now says its provider is gone. */
    cr_assert_eq(pcw_pdh_value_count(w1), 1);
    pcw_pdh_get_value(w1, 0, 0, &v);
    cr_assert_eq(v.status, PCW_CSTATUS_PROVIDER_GONE, "%s", pcw_cstatus_str(v.status));
    pcw_pdh_close(q);
    qp_stop(&a);
}

Test(query, global_aggregate)
{
    tu_child a, b;
    qp_start(&a, "Glob", PCW_GLOBAL_AGGREGATE, NULL);
    qp_start(&b, "Glob", PCW_GLOBAL_AGGREGATE, NULL);
    qp_cmd(&a, "create -");
    qp_cmd(&a, "set - %d 300", QP_COUNT);
    qp_cmd(&a, "set - %d 4", QP_LEVEL);
    qp_cmd(&b, "create -");
    qp_cmd(&b, "set - %d 45", QP_COUNT);
    qp_cmd(&b, "set - %d 8", QP_LEVEL);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Glob\\*");
    collect(q);
    /* One instance, combined from both providers: 7 values. */
    cr_assert_eq(pcw_pdh_value_count(h), 7);
    pcw_pdh_value v = value(h, "", "Count");
    cr_assert_eq(v.kind, PCW_PDH_AGGREGATE);
    cr_assert_eq(v.sources, 2);
    cr_assert_eq(v.raw.first, 345);                 /* 300 + 45 */
    cr_assert_eq(value(h, "", "Level").value, 6.0); /* (4 + 8) / 2 */
    char path[128];
    pcw_pdh_value_path(h, 0, 0, path, sizeof path);
    cr_assert_str_eq(path, "\\Glob\\Count");
    /* An instance part is refused for a set without instances. */
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Glob(x)\\Count", NULL, &err), PCW_E_INVALID_NAME);
    cr_assert_eq(err.part, PCW_PATH_INSTANCE);
    cr_assert(strstr(err.message, "has no instances"), "%s", err.message);
    /* Without History, a's exit drops its part. */
    qp_stop(&a);
    collect(q);
    cr_assert_eq(value(h, "", "Count").raw.first, 45);
    pcw_pdh_close(q);
    qp_stop(&b);
}

Test(query, history_keeps_a_departed_provider)
{
    tu_child a, b;
    qp_start(&a, "Hist", PCW_GLOBAL_AGGREGATE_HISTORY, NULL);
    qp_start(&b, "Hist", PCW_GLOBAL_AGGREGATE_HISTORY, NULL);
    qp_cmd(&a, "create -");
    qp_cmd(&a, "set - %d 300", QP_COUNT);
    qp_cmd(&b, "create -");
    qp_cmd(&b, "set - %d 45", QP_COUNT);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Hist\\Count");
    collect(q);
    cr_assert_eq(value(h, "", "Count").raw.first, 345);
    qp_cmd(&a, "set - %d 500", QP_COUNT);
    collect(q);
    cr_assert_eq(value(h, "", "Count").raw.first, 545);
    /* a exits cleanly mid-run: its last 500 stays in the total. */
    qp_stop(&a);
    qp_cmd(&b, "set - %d 60", QP_COUNT);
    collect(q);
    pcw_pdh_value v = value(h, "", "Count");
    cr_assert_eq(v.raw.first, 560); /* 500 (a, departed) + 60 */
    cr_assert_eq(v.sources, 1);
    /* The cumulative total never dropped, so its rate is valid, not a
     * reset: (560 - 545) counts over the interval. */
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "%s", pcw_cstatus_str(v.status));
    cr_assert(v.value > 0);
    pcw_pdh_close(q);
    qp_stop(&b);
}

Test(query, crashed_provider)
{
    tu_child a;
    qp_start(&a, "Crash", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create k");
    qp_cmd(&a, "set k %d 5", QP_LEVEL);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Crash(k)\\Level");
    collect(q);
    cr_assert_eq(value(h, "k", "Level").value, 5.0);
    tu_send(&a, "crash"); /* exits without closing: the segment stays */
    tu_finish(&a, 10000);
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(h), 1);
    pcw_pdh_value v;
    pcw_pdh_get_value(h, 0, 0, &v);
    cr_assert_eq(v.status, PCW_CSTATUS_PROVIDER_GONE, "%s", pcw_cstatus_str(v.status));
    pcw_pdh_close(q);
}

Test(query, single_instance_from_two_providers)
{
    tu_child a, b;
    qp_start(&a, "Solo", PCW_SINGLE_INSTANCE, NULL);
    qp_start(&b, "Solo", PCW_SINGLE_INSTANCE, NULL);
    qp_cmd(&a, "create -");
    qp_cmd(&a, "set - %d 1", QP_LEVEL);
    qp_cmd(&b, "create -");
    qp_cmd(&b, "set - %d 2", QP_LEVEL);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *one = add(q, "\\Solo\\Level");
    pcw_pdh_counter *all = add(q, "\\Solo(*)\\Level");
    pcw_pdh_counter *second = add(q, "\\Solo(#1)\\Level");
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(one), 1);
    cr_assert_eq(value(one, "", "Level").value, 1.0);
    cr_assert_eq(pcw_pdh_value_count(all), 2);
    cr_assert_eq(value(all, "#1", "Level").value, 2.0);
    cr_assert_eq(value(second, "#1", "Level").pid, b.pid);
    char path[64];
    pcw_pdh_value_path(all, 0, 0, path, sizeof path);
    cr_assert_str_eq(path, "\\Solo\\Level");
    pcw_pdh_value_path(all, 1, 0, path, sizeof path);
    cr_assert_str_eq(path, "\\Solo(#1)\\Level");
    pcw_pdh_close(q);
    qp_stop(&a);
    qp_stop(&b);
}

Test(query, instances_and_providers_appear_later)
{
    tu_child a, b;
    qp_start(&a, "Late", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create one");
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Late(*)\\Level");
    pcw_pdh_counter *named = add(q, "\\Late(two)\\Level");
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(h), 1);
    pcw_pdh_value v;
    pcw_pdh_get_value(named, 0, 0, &v);
    cr_assert_eq(v.status, PCW_CSTATUS_NO_INSTANCE);
    qp_cmd(&a, "create two");
    qp_cmd(&a, "set two %d 2", QP_LEVEL);
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(h), 2);
    cr_assert_eq(value(named, "two", "Level").value, 2.0);
    /* A whole provider appears: picked up by the next collection. */
    qp_start(&b, "Late", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&b, "create three");
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(h), 3);
    cr_assert_eq(value(h, "three", "Level").pid, b.pid);
    /* And a counterset that did not exist when a wildcard path was added. */
    pcw_pdh_counter *wild = add(q, "\\La*(*)\\Level");
    tu_child c;
    qp_start(&c, "Lateral", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&c, "create z");
    collect(q);
    cr_assert(find(wild, "z", "Level", &v));
    cr_assert_str_eq(v.counterset, "Lateral");
    pcw_pdh_close(q);
    qp_stop(&a);
    qp_stop(&b);
    qp_stop(&c);
}

Test(query, path_validation)
{
    tu_child a;
    qp_start(&a, "Valid", PCW_MULTI_INSTANCE, NULL);
    pcw_pdh *q = open_query();
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Nope(*)\\Level", NULL, &err), PCW_E_NOT_FOUND);
    cr_assert_eq(err.part, PCW_PATH_COUNTERSET);
    cr_assert(strstr(err.message, "\"Nope\" does not exist"), "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\No*(*)\\Level", NULL, &err), PCW_E_NOT_FOUND);
    cr_assert(strstr(err.message, "no counterset matches"), "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Valid(*)\\Levels", NULL, &err), PCW_E_NOT_FOUND);
    cr_assert_eq(err.part, PCW_PATH_COUNTER);
    cr_assert_eq(err.offset, 10);
    cr_assert(strstr(err.message, "has no counter \"Levels\""), "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Valid(*)\\X*", NULL, &err), PCW_E_NOT_FOUND);
    cr_assert(strstr(err.message, "matches"), "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Valid(*)\\Hit Ratio Base", NULL, &err),
                 PCW_E_INVALID_NAME);
    cr_assert(strstr(err.message, "base counter"), "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Valid\\Level", NULL, &err), PCW_E_INVALID_NAME);
    cr_assert_eq(err.part, PCW_PATH_INSTANCE);
    cr_assert(strstr(err.message, "has instances"), "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Valid(\\Level", NULL, &err), PCW_E_INVALID_NAME);
    cr_assert_eq(err.part, PCW_PATH_INSTANCE);
    /* Names compare case-insensitively. */
    pcw_pdh_counter *h = add(q, "\\vALID(*)\\level");
    cr_assert_str_eq(pcw_pdh_counter_path(h), "\\vALID(*)\\level");
    cr_assert_eq(pcw_pdh_counter_count(q), 1);
    cr_assert_eq(pcw_pdh_counter_at(q, 0), h);
    cr_assert_eq(pcw_pdh_remove_counter(q, h), PCW_OK);
    cr_assert_eq(pcw_pdh_counter_count(q), 0);
    cr_assert_eq(pcw_pdh_remove_counter(q, h), PCW_E_INVALID_PARAMETER);
    pcw_pdh_close(q);
    qp_stop(&a);
}

static int collect_path(const char *path, void *arg)
{
    char *out = arg;
    strcat(out, path);
    strcat(out, "|");
    return 0;
}

Test(query, expand)
{
    tu_child a, b;
    qp_start(&a, "Exp", PCW_MULTI_AGGREGATE, NULL);
    qp_start(&b, "Exp", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&a, "create i");
    qp_cmd(&b, "create i");
    pcw_pdh *q = open_query();
    static char got[4096];
    got[0] = 0;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_expand(q, "\\Exp(*)\\Lev*", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\Exp(_Total)\\Level|\\Exp(i)\\Level|\\Exp(i#1)\\Level|");
    /* Expansion adds nothing to the query. */
    cr_assert_eq(pcw_pdh_counter_count(q), 0);
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\Exp(i#1)\\Level", collect_path, got, &err), PCW_OK);
    cr_assert_str_eq(got, "\\Exp(i#1)\\Level|");
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\Exp(nobody)\\Level", collect_path, got, &err), PCW_OK);
    cr_assert_str_eq(got, "");
    cr_assert_eq(pcw_pdh_expand(q, "\\Exp(*)\\Nope", collect_path, got, &err), PCW_E_NOT_FOUND);
    pcw_pdh_close(q);
    qp_stop(&a);
    qp_stop(&b);
}

/* Like PdhExpandWildCardPath, which enumerates the instances there are
 * each time it is called: a counterset no handle of the query holds
 * expands to the instances live now, however often it was expanded
 * before. */
Test(query, expand_sees_instances_of_an_unheld_set_that_came_later)
{
    tu_child a;
    qp_start(&a, "ExpNew", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create i");
    pcw_pdh *q = open_query();
    static char got[4096];
    got[0] = 0;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_expand(q, "\\ExpNew(*)\\Level", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\ExpNew(i)\\Level|");
    /* The provider answers "ok" once the instance is published. */
    qp_cmd(&a, "create j");
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\ExpNew(*)\\Level", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\ExpNew(i)\\Level|\\ExpNew(j)\\Level|");
    qp_cmd(&a, "close i");
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\ExpNew(*)\\Level", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\ExpNew(j)\\Level|");
    pcw_pdh_close(q);
    qp_stop(&a);
}

/* A counterset a handle holds is not read by an expansion (that would
 * shorten the interval of the handle's rates), even one expanded before
 * the handle held it, nor by the expansion of another counterset: it
 * expands to the instances of the query's last collection, and the
 * handle's next rate spans the two collections. */
Test(query, expand_leaves_a_held_set_to_collections)
{
    tu_child a, b;
    qp_start(&a, "ExpHeld", PCW_MULTI_INSTANCE, NULL);
    qp_start(&b, "ExpOther", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create i");
    qp_cmd(&a, "set i %d 100", QP_RATE);
    qp_cmd(&b, "create o");
    pcw_pdh *q = open_query();
    static char got[4096];
    got[0] = 0;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_expand(q, "\\ExpHeld(*)\\Level", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\ExpHeld(i)\\Level|");
    pcw_pdh_counter *h = add(q, "\\ExpHeld(i)\\Rate");
    collect(q);
    qp_cmd(&a, "create j");
    qp_cmd(&a, "set i %d 300", QP_RATE);
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\ExpOther(*)\\Level", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\ExpOther(o)\\Level|");
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\ExpHeld(*)\\Level", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\ExpHeld(i)\\Level|");
    collect(q);
    pcw_pdh_value v = value(h, "i", "Rate");
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    /* 100 -> 300 between the collections: had the expansion read the set
     * in between, the handle would see 300 -> 300, a rate of 0. */
    cr_assert_gt(v.value, 0.0);
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\ExpHeld(*)\\Level", collect_path, got, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_str_eq(got, "\\ExpHeld(i)\\Level|\\ExpHeld(j)\\Level|");
    pcw_pdh_close(q);
    qp_stop(&a);
    qp_stop(&b);
}

Test(query, add_and_remove_counter_notifications)
{
    char log[512];
    snprintf(log, sizeof log, "%s/control.log", tu_root);
    tu_child a;
    qp_start(&a, "Notified", PCW_MULTI_INSTANCE, log);
    qp_cmd(&a, "create w");
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Notified(w)\\Level");
    /* The provider answered ADD_COUNTER before add returned. */
    cr_assert_str_eq(slurp(log), "add 1 w\n");
    collect(q);
    cr_assert_eq(value(h, "w", "Level").status, PCW_CSTATUS_VALID);
    /* A provider that appears later is told too, once. */
    char log2[512];
    snprintf(log2, sizeof log2, "%s/control2.log", tu_root);
    tu_child b;
    qp_start(&b, "Notified", PCW_MULTI_INSTANCE, log2);
    collect(q);
    collect(q);
    cr_assert_str_eq(slurp(log2), "add 1 w\n");
    cr_assert_eq(pcw_pdh_remove_counter(q, h), PCW_OK);
    cr_assert_str_eq(slurp(log), "add 1 w\nremove 1 w\n");
    cr_assert_str_eq(slurp(log2), "add 1 w\nremove 1 w\n");
    /* A _Total needs every instance: the mask is "*". */
    tu_child c;
    char log3[512];
    snprintf(log3, sizeof log3, "%s/control3.log", tu_root);
    qp_start(&c, "NotifiedAgg", PCW_MULTI_AGGREGATE, log3);
    add(q, "\\NotifiedAgg(_Total)\\Count");
    cr_assert_str_eq(slurp(log3), "add 0 *\n");
    /* Closing the query removes what is still added. */
    pcw_pdh_close(q);
    cr_assert_str_eq(slurp(log3), "add 0 *\nremove 0 *\n");
    qp_stop(&a);
    qp_stop(&b);
    qp_stop(&c);
}

Test(query, steady_state_collection_allocates_nothing)
{
    tu_child a, b;
    qp_start(&a, "Steady", PCW_MULTI_AGGREGATE, NULL);
    qp_start(&b, "Steady", PCW_MULTI_AGGREGATE, NULL);
    for (int i = 0; i < 20; i++) {
        qp_cmd(&a, "create i%d", i);
        qp_cmd(&b, "create i%d", i);
    }
    qp_cmd(&a, "rate i3 %d 500", QP_COUNT);
    qp_cmd(&a, "set i4 %d 7", QP_LEVEL);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Steady(*)\\*");
    /* Grow everything, and let the provider folder's mtime settle (the
     * query looks again at a folder changed less than 100 ms ago). */
    collect(q);
    usleep(200 * 1000);
    collect(q);
    collect(q);
    size_t n = pcw_pdh_value_count(h);
    cr_assert_eq(n, 41 * 7);
#ifdef TU_HAVE_MALLOC_HOOKS
    cr_assert(tu_alloc_count_start(), "the allocation hooks are not installed");
#else
    struct mallinfo2 before = mallinfo2();
#endif
    double sum = 0;
    for (int r = 0; r < 20; r++) {
        size_t failed = 1;
        cr_assert_eq(pcw_pdh_collect(q, &failed), PCW_OK);
        cr_assert_eq(failed, 0);
        for (size_t i = 0; i < n; i++) {
            pcw_pdh_value v;
            pcw_pdh_get_value(h, i, 0, &v);
            sum += v.value;
        }
    }
#ifdef TU_HAVE_MALLOC_HOOKS
    long allocations = tu_alloc_count_stop();
    cr_assert_eq(allocations, 0, "%ld allocations in 20 steady-state collections", allocations);
#else
    struct mallinfo2 after = mallinfo2();
    cr_assert_eq(after.uordblks, before.uordblks, "heap in use changed");
#endif
    cr_assert(sum > 0);
    pcw_pdh_close(q);
    qp_stop(&a);
    qp_stop(&b);
}

static int visit_row(const pcw_pdh_row *row, void *arg)
{
    double *out = arg;
    for (uint32_t c = 0; c < row->count; c++)
        out[row->first + c] = row->status[c] == PCW_CSTATUS_VALID ? row->values[c] : -1.0;
    return 0;
}

Test(query, bulk_reads_equal_single_reads)
{
    /* cook_all and visit take a short path in steady state for raw values
     * and rates: it must give exactly what pcw_pdh_get_value gives. */
    tu_child a;
    qp_start(&a, "Bulk", PCW_MULTI_AGGREGATE, NULL);
    for (int i = 0; i < 5; i++) {
        qp_cmd(&a, "create b%d", i);
        qp_cmd(&a, "set b%d %d %d", i, QP_LEVEL, 10 * i + 1);
        qp_cmd(&a, "set b%d %d %d", i, QP_HIT, i);
        qp_cmd(&a, "set b%d %d %d", i, QP_HIT_BASE, 4);
    }
    qp_cmd(&a, "rate b2 %d 1000", QP_COUNT);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\Bulk(*)\\*");
    pcw_pdh_counter *one = add(q, "\\Bulk(b3)\\*");
    for (int round = 0; round < 4; round++) {
        collect(q);
        if (round == 1)
            qp_cmd(&a, "set b0 %d 500", QP_COUNT);
        if (round == 2)
            qp_cmd(&a, "set b0 %d 5", QP_COUNT); /* went down: a reset */
        pcw_pdh_counter *hs[2] = {h, one};
        for (int j = 0; j < 2; j++) {
            size_t n = pcw_pdh_value_count(hs[j]);
            double all[64], seen[64];
            uint8_t st[64];
            cr_assert_leq(n, 64);
            cr_assert_eq(pcw_pdh_cook_all(hs[j], 0, all, st), PCW_OK);
            cr_assert_eq(pcw_pdh_visit(hs[j], 0, visit_row, seen), PCW_OK);
            for (size_t i = 0; i < n; i++) {
                pcw_pdh_value v;
                pcw_pdh_get_value(hs[j], i, 0, &v);
                cr_assert_eq(st[i], v.status, "value %zu: %d vs %d", i, st[i], v.status);
                cr_assert(memcmp(&all[i], &v.value, sizeof v.value) == 0,
                          "round %d value %zu (%s\\%s): %.17g vs %.17g", round, i, v.instance,
                          v.counter, all[i], v.value);
                cr_assert_eq(seen[i], v.status == PCW_CSTATUS_VALID ? v.value : -1.0);
            }
        }
    }
    /* A rate really was computed on the short path: b2's Count. */
    pcw_pdh_value v = value(h, "b2", "Count");
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    pcw_pdh_close(q);
    qp_stop(&a);
}

Test(query, instance_aggregate)
{
    tu_child a, b;
    qp_start(&a, "IA", PCW_INSTANCE_AGGREGATE, NULL);
    qp_start(&b, "IA", PCW_INSTANCE_AGGREGATE, NULL);
    qp_cmd(&a, "create w");
    qp_cmd(&a, "set w %d 10", QP_LEVEL);
    qp_cmd(&a, "set w %d 100", QP_COUNT);
    qp_cmd(&a, "create x");
    qp_cmd(&a, "set x %d 30", QP_LEVEL);
    qp_cmd(&b, "create w");
    qp_cmd(&b, "set w %d 20", QP_LEVEL);
    qp_cmd(&b, "set w %d 1000", QP_COUNT);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\IA(*)\\*");
    pcw_pdh_counter *w = add(q, "\\IA(w)\\Count");
    collect(q);
    /* One instance per name, combined across providers: w and x. */
    cr_assert_eq(pcw_pdh_value_count(h), 2 * 7);
    pcw_pdh_value v = value(h, "w", "Level");
    cr_assert_eq(v.kind, PCW_PDH_AGGREGATE);
    cr_assert_eq(v.sources, 2);
    cr_assert_eq(v.pid, 0);
    cr_assert_eq(v.value, 15.0); /* avg(10, 20) */
    cr_assert_eq(value(h, "w", "Count").raw.first, 1100);
    cr_assert_eq(value(h, "x", "Level").value, 30.0);
    cr_assert(!find(h, "w#1", "Level", &v), "no #n: one instance per name");
    cr_assert_eq(pcw_pdh_value_count(w), 1);
    cr_assert_eq(value(w, "w", "Count").raw.first, 1100);
    /* Without History: b's exit takes its part; x's close takes x. */
    qp_stop(&b);
    qp_cmd(&a, "close x");
    collect(q);
    cr_assert_eq(value(w, "w", "Count").raw.first, 100);
    cr_assert(!find(h, "x", "Level", &v), "x is gone");
    pcw_pdh_close(q);
    qp_stop(&a);
}

Test(query, instance_aggregate_history)
{
    tu_child a, b;
    qp_start(&a, "IAH", PCW_INSTANCE_AGGREGATE_HISTORY, NULL);
    qp_start(&b, "IAH", PCW_INSTANCE_AGGREGATE_HISTORY, NULL);
    qp_cmd(&a, "create w");
    qp_cmd(&a, "set w %d 100", QP_COUNT);
    qp_cmd(&a, "create x");
    qp_cmd(&a, "set x %d 7", QP_COUNT);
    qp_cmd(&b, "create w");
    qp_cmd(&b, "set w %d 1000", QP_COUNT);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\IAH(*)\\Count");
    collect(q);
    cr_assert_eq(value(h, "w", "Count").raw.first, 1100);
    qp_stop(&b);
    qp_cmd(&a, "close x");
    qp_cmd(&a, "set w %d 150", QP_COUNT);
    collect(q);
    /* b's last 1000 stays in w; x stays with its last 7. */
    pcw_pdh_value v = value(h, "w", "Count");
    cr_assert_eq(v.raw.first, 1150);
    cr_assert_eq(v.sources, 1);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "%s", pcw_cstatus_str(v.status));
    v = value(h, "x", "Count");
    cr_assert_eq(v.raw.first, 7);
    cr_assert_eq(v.sources, 0);
    pcw_pdh_close(q);
    qp_stop(&a);
}

Test(query, multiple_aggregate_history)
{
    tu_child a, b;
    qp_start(&a, "MAH", PCW_MULTI_AGGREGATE_HISTORY, NULL);
    qp_start(&b, "MAH", PCW_MULTI_AGGREGATE_HISTORY, NULL);
    qp_cmd(&a, "create i1");
    qp_cmd(&a, "set i1 %d 100", QP_COUNT);
    qp_cmd(&b, "create i2");
    qp_cmd(&b, "set i2 %d 50", QP_COUNT);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\MAH(*)\\Count");
    collect(q);
    cr_assert_eq(value(h, "_Total", "Count").raw.first, 150);
    cr_assert_eq(pcw_pdh_value_count(h), 3);
    /* b exits: i2 leaves the list, its 50 stays in _Total. */
    qp_stop(&b);
    qp_cmd(&a, "set i1 %d 120", QP_COUNT);
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(h), 2);
    pcw_pdh_value v = value(h, "_Total", "Count");
    cr_assert_eq(v.raw.first, 170);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "a cumulative _Total never drops");
    pcw_pdh_close(q);
    qp_stop(&a);
}

Test(query, instance_aggregate_names_come_and_go)
{
    /* A name whose instances all left gives its total up; another name
     * then takes that slot; the first name coming back gets its own.
     * (Regression: both names shared one total.) */
    tu_child a;
    qp_start(&a, "IAC", PCW_INSTANCE_AGGREGATE, NULL);
    qp_cmd(&a, "create p");
    qp_cmd(&a, "set p %d 1", QP_LEVEL);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\IAC(*)\\Level");
    collect(q);
    cr_assert_eq(value(h, "p", "Level").value, 1.0);
    qp_cmd(&a, "close p");
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(h), 0);
    qp_cmd(&a, "create q");
    qp_cmd(&a, "set q %d 2", QP_LEVEL);
    collect(q);
    qp_cmd(&a, "create p");
    qp_cmd(&a, "set p %d 3", QP_LEVEL);
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(h), 2);
    cr_assert_eq(value(h, "q", "Level").value, 2.0);
    cr_assert_eq(value(h, "p", "Level").value, 3.0);
    cr_assert_eq(value(h, "q", "Level").sources, 1);
    cr_assert_eq(value(h, "p", "Level").sources, 1);
    pcw_pdh_close(q);
    qp_stop(&a);
}

/* A named instance that closed, and then its provider exited with no other
 * instance in the set: the handle's status follows (provider gone), though
 * no instance of the set changed - the set's providers did (pcw__q_bind). */
Test(query, missing_instance_learns_its_provider_exited)
{
    tu_child a, b;
    qp_start(&a, "Gone", PCW_MULTI_INSTANCE, NULL);
    qp_start(&b, "Gone", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create stays");
    qp_cmd(&b, "create x");
    pcw_pdh *q = open_query();
    pcw_pdh_counter *all = add(q, "\\Gone(*)\\Level"), *x = add(q, "\\Gone(x)\\Level");
    collect(q);
    collect(q);
    pcw_pdh_value v;
    cr_assert_eq(pcw_pdh_get_value(x, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "%s", pcw_cstatus_str(v.status));
    qp_cmd(&b, "close x");
    collect(q);
    cr_assert_eq(pcw_pdh_get_value(x, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_NO_INSTANCE, "%s", pcw_cstatus_str(v.status));
    qp_stop(&b);
    collect(q);
    cr_assert_eq(pcw_pdh_value_count(all), 1, "a's instance stays");
    cr_assert_eq(pcw_pdh_get_value(x, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_PROVIDER_GONE, "%s", pcw_cstatus_str(v.status));
    pcw_pdh_close(q);
    qp_stop(&a);
}
