/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_viewer.c - what the query layer gives a viewer such as
 * pcwtop (pcw/pdh.h): PCW_FMT_RAW (raw values through the cooking
 * calls), pcw_pdh_cook_column (one counter of every instance, the same
 * numbers as pcw_pdh_get_value, on the short path in steady state too),
 * and pcw_pdh_instance_epoch (which moves when the instance list does).
 *
 * Providers are tests/helpers/query_provider processes; every wait is on
 * their "ok" answers or on what a collection returns.
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "pcw/pdh.h"
#include "query_provider.h"

TestSuite(query_viewer, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

static pcw_pdh_counter *add(pcw_pdh *q, const char *path)
{
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, path, &h, &err), PCW_OK, "%s: %s", path, err.message);
    return h;
}

/* Every value of h through pcw_pdh_cook_column and pcw_pdh_cook_all, with
 * `flags`, against pcw_pdh_get_value. */
static void columns_equal_values(pcw_pdh_counter *h, unsigned flags, const char *when)
{
    size_t ni = pcw_pdh_instance_count(h), nc = pcw_pdh_selected_counter_count(h);
    cr_assert_leq(ni * nc, 256);
    double all[256], col[64];
    uint8_t ast[256], cst[64];
    cr_assert_eq(pcw_pdh_cook_all(h, flags, all, ast), PCW_OK);
    for (size_t k = 0; k < nc; k++) {
        cr_assert_eq(pcw_pdh_cook_column(h, k, flags, col, cst), PCW_OK);
        for (size_t i = 0; i < ni; i++) {
            pcw_pdh_value v;
            cr_assert_eq(pcw_pdh_get_value(h, i * nc + k, flags, &v), PCW_OK);
            cr_assert_eq(cst[i], v.status, "%s: %s\\%s status %d vs %d", when, v.instance,
                         v.counter, cst[i], v.status);
            cr_assert(memcmp(&col[i], &v.value, sizeof v.value) == 0,
                      "%s: %s\\%s column %.17g vs %.17g", when, v.instance, v.counter, col[i],
                      v.value);
            cr_assert_eq(ast[i * nc + k], v.status);
            cr_assert(memcmp(&all[i * nc + k], &v.value, sizeof v.value) == 0);
            if (flags & PCW_FMT_RAW) {
                /* Raw: X as stored, whatever the type. */
                if (v.status == PCW_CSTATUS_VALID)
                    cr_assert_eq(v.value, (double)v.raw.first, "%s: %s\\%s", when, v.instance,
                                 v.counter);
                else
                    cr_assert_eq(v.status, v.raw.status);
            }
        }
    }
    cr_assert_eq(pcw_pdh_cook_column(h, nc, flags, col, cst), PCW_E_INVALID_PARAMETER);
}

Test(query_viewer, raw_values_and_columns_equal_single_values)
{
    tu_child a;
    qp_start(&a, "Viewer", PCW_MULTI_AGGREGATE, NULL);
    for (int i = 0; i < 6; i++) {
        qp_cmd(&a, "create v%d", i);
        qp_cmd(&a, "set v%d %d %d", i, QP_LEVEL, 100 * i + 7);
        qp_cmd(&a, "set v%d %d %d", i, QP_HIT, i);
        qp_cmd(&a, "set v%d %d %d", i, QP_HIT_BASE, 8);
        qp_cmd(&a, "set v%d %d %d", i, QP_COUNT, 1000 * i);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Viewer(*)\\*");
    for (int round = 0; round < 4; round++) {
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        if (round == 2)
            qp_cmd(&a, "set v1 %d 5", QP_COUNT); /* went down: a reset */
        char when[32];
        snprintf(when, sizeof when, "round %d", round);
        columns_equal_values(h, 0, when);
        columns_equal_values(h, PCW_FMT_RAW, when);
    }
    /* Raw against cooked for one instance: a fraction and a rate. */
    pcw_pdh_value v;
    size_t nc = pcw_pdh_selected_counter_count(h);
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
        if (strcmp(v.instance, "v3") != 0)
            continue;
        pcw_pdh_value r;
        cr_assert_eq(pcw_pdh_get_value(h, i, PCW_FMT_RAW, &r), PCW_OK);
        if (strcmp(v.counter, "Hit Ratio") == 0) {
            cr_assert_eq(v.value, 37.5); /* 100 * 3 / 8 */
            cr_assert_eq(r.value, 3.0);
        } else if (strcmp(v.counter, "Count") == 0) {
            cr_assert_eq(r.status, PCW_CSTATUS_VALID);
            cr_assert_eq(r.value, 3000.0); /* the count, not its rate */
        }
    }
    cr_assert_gt(nc, 0);
    /* The first sample of a rate has no cooked value but a raw one. */
    pcw_pdh_close(q);
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *fresh = add(q, "\\Viewer(v2)\\Count");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_get_value(fresh, 0, 0, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_NEW_DATA_NEEDED);
    cr_assert_eq(pcw_pdh_get_value(fresh, 0, PCW_FMT_RAW, &v), PCW_OK);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID);
    cr_assert_eq(v.value, 2000.0);
    /* pcw_cook itself. */
    pcw_raw now = {PCW_CSTATUS_VALID, 77, 1, 0, 0, 0};
    double x;
    cr_assert_eq(pcw_cook(PERF_COUNTER_COUNTER, &now, NULL, 3, PCW_FMT_RAW, &x), PCW_CSTATUS_VALID);
    cr_assert_eq(x, 77.0, "raw: no formula, no scale");
    cr_assert_eq(pcw_cook(PERF_RAW_BASE, &now, NULL, 0, PCW_FMT_RAW, &x), PCW_CSTATUS_NO_DATA);
    pcw_pdh_close(q);
    qp_stop(&a);
}

/* Collect until the epoch holds still over two collections (the query
 * may re-read the provider list for a moment after a change), and return
 * it. */
static uint64_t settled_epoch(pcw_pdh *q, pcw_pdh_counter *h)
{
    long long deadline = tu_now_ms() + 10000;
    uint64_t e;
    do {
        e = pcw_pdh_instance_epoch(h);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    } while (pcw_pdh_instance_epoch(h) != e && tu_now_ms() < deadline);
    cr_assert_eq(pcw_pdh_instance_epoch(h), e, "the epoch never settled");
    return e;
}

Test(query_viewer, instance_epoch_moves_with_the_instances)
{
    cr_assert_eq(pcw_pdh_instance_epoch(NULL), 0);
    tu_child a;
    qp_start(&a, "Epoch", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create one");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = add(q, "\\Epoch(*)\\*");
    uint64_t e0 = settled_epoch(q, h);
    cr_assert_neq(e0, 0);
    /* Values change, instances do not: the epoch stays. */
    qp_cmd(&a, "set one %d 9", QP_LEVEL);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_instance_epoch(h), e0);
    /* An instance comes: it moves, and never back to an old value. */
    qp_cmd(&a, "create two");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    uint64_t e1 = pcw_pdh_instance_epoch(h);
    cr_assert_gt(e1, e0);
    cr_assert_eq(pcw_pdh_instance_count(h), 2);
    e1 = settled_epoch(q, h);
    /* One goes. */
    qp_cmd(&a, "close one");
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_gt(pcw_pdh_instance_epoch(h), e1);
    cr_assert_eq(pcw_pdh_instance_count(h), 1);
    pcw_pdh_close(q);
    qp_stop(&a);
}
