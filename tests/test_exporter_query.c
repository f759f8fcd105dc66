/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_query.c - what the query layer gives pcw-exporter:
 * one time limit for a whole collection, whatever the number of callback
 * countersets (pcw_pdh_set_timeout); the raw view (pcw_pdh_raw_*),
 * histograms' words too.
 *
 * Providers are real processes (tests/helpers/exporter_provider.c).
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "pcw/pdh.h"
#include "helpers/exporter_hist.h"
#include "helpers/exporter_test.h"
#include "query_provider.h"

TestSuite(exporter_query, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

static int ep_collects(tu_child *c, const char *set)
{
    char n[64];
    ep_cmd(c, n, "collects %s", set);
    return atoi(n);
}

/* Two callback countersets whose providers do not answer: both are asked
 * at once (pcw_consumer_collect_many), so one time limit covers them both
 * and each provider's part fails with PCW_E_TIMEOUT - a collection never
 * waits longer than the limit in total. (Before collect_many, the limit
 * was spent on the first and the second was not asked at all.) */
Test(exporter_query, time_limit_covers_every_callback_counterset)
{
    tu_child a, b;
    ep_start(&a, "slow-a");
    ep_start(&b, "slow-b");
    ep_cmd(&a, NULL, "callback SlowA");
    ep_cmd(&b, NULL, "callback SlowB");
    ep_cmd(&a, NULL, "block SlowA");
    ep_cmd(&b, NULL, "block SlowB");
    pcw_consumer_options o = {0};
    o.timeout_ms = 300;
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, &o), PCW_OK);
    pcw_path_error err;
    pcw_pdh_counter *ha, *hb;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\SlowA(*)\\*", &ha, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\SlowB(*)\\*", &hb, &err), PCW_OK, "%s", err.message);
    size_t failed = 0;
    cr_assert_eq(pcw_pdh_collect(q, &failed), PCW_OK);
    cr_expect_eq(failed, 2, "both providers' parts are missing");
    cr_expect_eq(ep_collects(&a, "SlowA"), 1, "the first counterset was asked");
    cr_expect_eq(ep_collects(&b, "SlowB"), 1, "the second was asked in the same wait");
    pcw_pdh_source src;
    cr_assert_eq(pcw_pdh_source_count(ha), 1);
    cr_assert_eq(pcw_pdh_get_source(ha, 0, &src), PCW_OK);
    cr_expect_eq(src.status, PCW_E_TIMEOUT);
    cr_assert_eq(pcw_pdh_source_count(hb), 1);
    cr_assert_eq(pcw_pdh_get_source(hb, 0, &src), PCW_OK);
    cr_expect_eq(src.status, PCW_E_TIMEOUT);
    ep_cmd(&a, NULL, "release SlowA");
    ep_cmd(&b, NULL, "release SlowB");
    pcw_pdh_close(q);
    ep_stop(&a);
    ep_stop(&b);
}

/* The raw value of every instance, by name (NULL when absent). */
static const pcw_raw *raw_of(pcw_pdh_counter *h, uint32_t counter, const char *name, pcw_raw *buf,
                             size_t cap)
{
    size_t n = pcw_pdh_raw_count(h);
    cr_assert(n <= cap);
    cr_assert_eq(pcw_pdh_raw_column(h, counter, buf), PCW_OK);
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_raw_instance ri;
        cr_assert_eq(pcw_pdh_raw_instance_at(h, i, &ri), PCW_OK);
        if (strcmp(ri.name, name) == 0)
            return &buf[i];
    }
    return NULL;
}

/* Indexes of exporter_provider's "kinds" counters used here. */
enum { K_LEVEL = 0, K_HITS = 2, K_PRECISE = 18 };

Test(exporter_query, raw_instances_values_and_sources)
{
    tu_child p;
    ep_start(&p, "prov-one");
    ep_cmd(&p, NULL, "kinds Kinds");
    ep_cmd(&p, NULL, "create Kinds alpha");
    ep_cmd(&p, NULL, "create Kinds beta");
    ep_cmd(&p, NULL, "set Kinds alpha %d 5", K_LEVEL);
    ep_cmd(&p, NULL, "set Kinds beta %d 7", K_LEVEL);
    ep_cmd(&p, NULL, "set Kinds alpha %d 3", K_HITS);
    ep_cmd(&p, NULL, "set Kinds alpha %d 4", K_HITS + 1);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_path_error err;
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Kinds(*)\\*", &h, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_raw_count(h), 2);
    pcw_pdh_raw_instance ri;
    cr_assert_eq(pcw_pdh_raw_instance_at(h, 0, &ri), PCW_OK);
    cr_expect_str_eq(ri.provider, "prov-one");
    cr_expect_eq(ri.pid, p.pid);
    cr_expect_eq(ri.name_len, strlen(ri.name));
    cr_expect_eq(pcw_pdh_raw_instance_at(h, 2, &ri), PCW_E_INVALID_PARAMETER);
    pcw_raw buf[8];
    const pcw_raw *r = raw_of(h, K_LEVEL, "alpha", buf, 8);
    cr_assert(r);
    cr_expect_eq(r->status, PCW_CSTATUS_VALID);
    cr_expect_eq(r->first, 5);
    cr_expect_eq(raw_of(h, K_LEVEL, "beta", buf, 8)->first, 7);
    r = raw_of(h, K_HITS, "alpha", buf, 8);
    cr_expect_eq(r->first, 3, "a fraction's numerator");
    cr_expect_eq(r->second, 4, "...and its base");
    cr_expect_eq(pcw_pdh_raw_column(h, 9999, buf), PCW_E_INVALID_PARAMETER);
    /* A precision timer's own timestamp is in its type's clock: 100 ns. */
    r = raw_of(h, K_PRECISE, "alpha", buf, 8);
    cr_expect_eq(r->freq, 10000000u, "a 100 ns precision timer's time base is 10^7, not %llu",
                 (unsigned long long)r->freq);
    cr_assert_eq(pcw_pdh_source_count(h), 1);
    pcw_pdh_source src;
    cr_assert_eq(pcw_pdh_get_source(h, 0, &src), PCW_OK);
    cr_expect_eq(src.status, PCW_OK);
    cr_expect_eq(src.pid, p.pid);
    cr_expect_eq(src.instances, 2);
    cr_expect_str_eq(src.provider, "prov-one");
    cr_expect_eq(pcw_pdh_get_source(h, 1, &src), PCW_E_INVALID_PARAMETER);
    pcw_pdh_close(q);
    ep_stop(&p);
}

/* Totals and aggregates are the query's, not the providers': the raw view
 * leaves out _Total and shows each instance an aggregating set combines. */
Test(exporter_query, raw_leaves_out_totals_and_shows_combined_instances)
{
    tu_child a, b, t;
    qp_start(&a, "Global", PCW_GLOBAL_AGGREGATE, NULL);
    qp_start(&b, "Global", PCW_GLOBAL_AGGREGATE, NULL);
    qp_start(&t, "Totalled", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&a, "create -");
    qp_cmd(&b, "create -");
    qp_cmd(&a, "set - %d 11", QP_LEVEL);
    qp_cmd(&b, "set - %d 31", QP_LEVEL);
    qp_cmd(&t, "create x");
    qp_cmd(&t, "create y");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_path_error err;
    pcw_pdh_counter *g, *tt;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Global\\Level", &g, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Totalled(*)\\Level", &tt, &err), PCW_OK, "%s",
                 err.message);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_expect_eq(pcw_pdh_value_count(g), 1, "the query shows one aggregate");
    cr_assert_eq(pcw_pdh_raw_count(g), 2, "the raw view shows both providers' instances");
    pcw_raw v[2];
    cr_assert_eq(pcw_pdh_raw_column(g, QP_LEVEL, v), PCW_OK);
    pcw_pdh_raw_instance ri;
    for (size_t i = 0; i < 2; i++) {
        /* Each value with its own provider's instance. */
        cr_assert_eq(pcw_pdh_raw_instance_at(g, i, &ri), PCW_OK);
        cr_expect_str_eq(ri.name, "");
        cr_expect(ri.pid == a.pid || ri.pid == b.pid);
        cr_expect_eq(v[i].first, ri.pid == a.pid ? 11u : 31u);
    }
    cr_expect_eq(pcw_pdh_value_count(tt), 3, "_Total, x, y");
    cr_assert_eq(pcw_pdh_raw_count(tt), 2, "x and y only");
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(pcw_pdh_raw_instance_at(tt, i, &ri), PCW_OK);
        cr_expect(strcmp(ri.name, "x") == 0 || strcmp(ri.name, "y") == 0, "%s", ri.name);
    }
    cr_expect_eq(pcw_pdh_source_count(g), 2);
    pcw_pdh_close(q);
    qp_stop(&a);
    qp_stop(&b);
    qp_stop(&t);
}

/* Wait until the provider list has settled: a folder changed less than
 * 100 ms ago is re-read on every call (fetch.c), and a re-read moves every
 * epoch. Polls the observable answer, with a deadline. */
static void settle(pcw_pdh *q)
{
    long long deadline = tu_now_ms() + 10000;
    while (pcw_pdh_refresh(q) != 0) {
        cr_assert(tu_now_ms() < deadline, "the provider list never settled");
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The epoch stays while nothing changes and moves when the instances, or
 * their order, change - and values always follow their instance. (It may
 * also move when nothing did: a re-read provider list re-binds every
 * counterset; settle() waits that out.) */
Test(exporter_query, raw_epoch_follows_instances_and_order)
{
    tu_child p, c;
    ep_start(&p, "epochs");
    ep_start(&c, "reorders");
    ep_cmd(&p, NULL, "kinds Kinds");
    ep_cmd(&p, NULL, "create Kinds one");
    ep_cmd(&c, NULL, "callback Cb alt");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_path_error err;
    pcw_pdh_counter *h, *cb;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Kinds(*)\\*", &h, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Cb(*)\\*", &cb, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    settle(q);
    uint64_t e1 = pcw_pdh_raw_epoch(h);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_expect_eq(pcw_pdh_raw_epoch(h), e1, "nothing changed");
    ep_cmd(&p, NULL, "create Kinds two");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_expect_neq(pcw_pdh_raw_epoch(h), e1, "an instance came");
    cr_expect_eq(pcw_pdh_raw_count(h), 2);
    /* The callback adds cb-0..cb-2 in the opposite order every other time. */
    settle(q);
    uint64_t last = 0;
    for (int round = 0; round < 4; round++) {
        if (round)
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(pcw_pdh_raw_count(cb), 3);
        pcw_raw depth[3];
        cr_assert_eq(pcw_pdh_raw_column(cb, 1, depth), PCW_OK);
        char first[16] = "";
        for (size_t i = 0; i < 3; i++) {
            pcw_pdh_raw_instance ri;
            cr_assert_eq(pcw_pdh_raw_instance_at(cb, i, &ri), PCW_OK);
            cr_expect_eq(depth[i].first, (uint64_t)(ri.name[3] - '0') + 1,
                         "round %d: %s has Depth %llu", round, ri.name,
                         (unsigned long long)depth[i].first);
            if (i == 0)
                snprintf(first, sizeof first, "%s", ri.name);
        }
        uint64_t e = pcw_pdh_raw_epoch(cb);
        if (round)
            cr_expect_neq(e, last, "round %d: the order changed (%s first), the epoch did not",
                          round, first);
        last = e;
    }
    pcw_pdh_close(q);
    ep_stop(&p);
    ep_stop(&c);
}

/* A provider that stops answering: its instances are left out of the raw
 * view, and its source says it timed out. */
Test(exporter_query, raw_leaves_out_late_providers)
{
    tu_child c;
    ep_start(&c, "late");
    ep_cmd(&c, NULL, "callback Late");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_set_timeout(q, 200), PCW_OK);
    pcw_path_error err;
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Late(*)\\*", &h, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_raw_count(h), 3);
    ep_cmd(&c, NULL, "block Late");
    size_t failed = 0;
    cr_assert_eq(pcw_pdh_collect(q, &failed), PCW_OK);
    cr_expect_eq(failed, 1);
    cr_expect_eq(pcw_pdh_raw_count(h), 0);
    cr_expect_eq(pcw_pdh_value_count(h), 6, "the query keeps them, stale");
    pcw_pdh_source src;
    cr_assert_eq(pcw_pdh_get_source(h, 0, &src), PCW_OK);
    cr_expect_eq(src.status, PCW_E_TIMEOUT);
    cr_expect_eq(src.pid, c.pid);
    ep_cmd(&c, NULL, "release Late");
    pcw_pdh_close(q);
    ep_stop(&c);
}

/* pcw_pdh_refresh sees a counterset that appeared, before any collect. */
Test(exporter_query, refresh_lists_new_countersets)
{
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    cr_expect_geq(pcw_pdh_refresh(q), 0);
    cr_expect_eq(pcw_consumer_counterset_count(pcw_pdh_consumer(q)), 0);
    tu_child p;
    ep_start(&p, "newcomer");
    ep_cmd(&p, NULL, "kinds Fresh");
    cr_expect_eq(pcw_pdh_refresh(q), 1);
    cr_expect(pcw_consumer_find_counterset(pcw_pdh_consumer(q), "fresh") != NULL);
    ep_stop(&p);
    pcw_pdh_close(q);
    cr_expect_eq(pcw_pdh_refresh(NULL), PCW_E_INVALID_PARAMETER);
    cr_expect_eq(pcw_pdh_set_timeout(NULL, 1), PCW_E_INVALID_PARAMETER);
}

/* pcw_pdh_raw_histogram hands on a histogram counter's words as the
 * provider wrote them (the same as the core's observe of the same values
 * gives), and refuses what is not a histogram of that size: another
 * counter, more words than the row holds after it, an instance or a
 * counter out of range. */
Test(exporter_query, raw_histogram_words)
{
    uint64_t *v = malloc(EH_N * sizeof *v);
    cr_assert_not_null(v);
    eh_values(v, EH_N);
    tu_child pv;
    eh_provider(&pv, v, EH_N);
    char reply[64];
    cr_assert(tu_command(&pv, reply, sizeof reply, "round") > 0 && strcmp(reply, "ok 20000") == 0);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_path_error err;
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Hist Test(*)\\*", &h, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_raw_count(h), 1);
    size_t nw = pcw_hist_bytes(EH_SHAPE) / 8;
    uint64_t *want = calloc(nw, sizeof *want), *got = calloc(nw + 64, sizeof *got);
    cr_assert(want && got);
    for (size_t i = 0; i < EH_N; i++)
        pcw_histogram_observe(want, EH_SHAPE, v[i]);
    /* Counters: Requests (0), Latency (1), Size (2). */
    cr_assert_eq(pcw_pdh_raw_histogram(h, 1, 0, got, nw), PCW_OK);
    cr_expect_arr_eq(got, want, nw * sizeof *got);
    cr_expect_eq(pcw_pdh_raw_histogram(h, 0, 0, got, 2), PCW_E_INVALID_PARAMETER, "Requests");
    cr_expect_eq(pcw_pdh_raw_histogram(h, 2, 0, got, nw + 64), PCW_E_INVALID_PARAMETER,
                 "Size is last: no words after it");
    cr_expect_eq(pcw_pdh_raw_histogram(h, 1, 1, got, nw), PCW_E_INVALID_PARAMETER, "instance 1");
    cr_expect_eq(pcw_pdh_raw_histogram(h, 3, 0, got, nw), PCW_E_INVALID_PARAMETER, "counter 3");
    cr_expect_eq(pcw_pdh_raw_histogram(h, 1, 0, NULL, nw), PCW_E_INVALID_PARAMETER);
    cr_expect_eq(pcw_pdh_raw_histogram(NULL, 1, 0, got, nw), PCW_E_INVALID_PARAMETER);
    free(want);
    free(got);
    pcw_pdh_close(q);
    ep_stop(&pv);
    free(v);
}
