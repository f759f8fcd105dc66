/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_detail.c - counters' detail levels (the manifest's
 * detailLevel, issue 24 item 6), as perfmon treats them: a wildcard counter
 * part leaves advanced counters out unless the query asks for them; a
 * counter named explicitly is always there. Against a real provider
 * process (tests/helpers/query_provider, its "Plain" made advanced).
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "pcw/pdh.h"
#include "query_provider.h"

TestSuite(detail, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* query_provider publishing `set` (multiple instances) with counter
 * QP_PLAIN advanced and one instance "a". */
static void start(tu_child *p, const char *set)
{
    cr_assert_eq(
        tu_spawn(p, "query_provider", (const char *const[]){"--set", set, "--advanced", "7", NULL}),
        0);
    char line[256];
    cr_assert(tu_readline(p, line, sizeof line, 10000) > 0, "provider did not start");
    cr_assert(strncmp(line, "ready", 5) == 0, "provider: %s", line);
    qp_cmd(p, "create a");
}

static int collect_path(const char *path, void *arg)
{
    strcat((char *)arg, path);
    strcat((char *)arg, "|");
    return 0;
}

/* Does handle h select a counter named `name`? */
static int selects(pcw_pdh *q, pcw_pdh_counter *h, const char *name)
{
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
        if (strcmp(v.counter, name) == 0)
            return 1;
    }
    return 0;
}

Test(detail, wildcards_leave_advanced_counters_out)
{
    tu_child p;
    start(&p, "Det");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *all, *plain;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Det(*)\\*", &all, &err), PCW_OK, "%s", err.message);
    /* Count, Level, Peak, Low, Hit Ratio, Rate: not the base, not Plain. */
    cr_assert_eq(pcw_pdh_selected_counter_count(all), 6);
    cr_assert(selects(q, all, "Level"));
    cr_assert(!selects(q, all, "Plain"), "an advanced counter in \\Det(*)\\*");
    /* Named, it is always there (perfmon adds it by name). */
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Det(a)\\Plain", &plain, &err), PCW_OK, "%s",
                 err.message);
    cr_assert(selects(q, plain, "Plain"));
    /* Expansion as well. */
    static char got[4096];
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\Det(a)\\*", collect_path, got, &err), PCW_OK);
    cr_assert(strstr(got, "\\Det(a)\\Level|"), "%s", got);
    cr_assert(!strstr(got, "Plain"), "%s", got);
    /* A pattern that only advanced counters match says so. */
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Det(*)\\Pl*", &h, &err), PCW_E_NOT_FOUND);
    cr_assert(strstr(err.message, "advanced"), "%s", err.message);
    cr_assert_eq(err.part, PCW_PATH_COUNTER);
    pcw_pdh_close(q);
    qp_stop(&p);
}

Test(detail, set_detail_includes_advanced_counters)
{
    tu_child p;
    start(&p, "Det");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *before, *after, *only;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Det(*)\\*", &before, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_set_detail(q, 150), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_set_detail(NULL, PCW_DETAIL_ADVANCED), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_pdh_set_detail(q, PCW_DETAIL_ADVANCED), PCW_OK);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Det(*)\\*", &after, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Det(*)\\Pl*", &only, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_selected_counter_count(after), 7);
    cr_assert(selects(q, after, "Plain"));
    cr_assert(selects(q, only, "Plain"));
    /* A handle keeps the level it was added at. */
    cr_assert_eq(pcw_pdh_selected_counter_count(before), 6);
    static char got[4096];
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\Det(a)\\*", collect_path, got, &err), PCW_OK);
    cr_assert(strstr(got, "\\Det(a)\\Plain|"), "%s", got);
    /* Back to standard. */
    cr_assert_eq(pcw_pdh_set_detail(q, PCW_DETAIL_STANDARD), PCW_OK);
    got[0] = 0;
    cr_assert_eq(pcw_pdh_expand(q, "\\Det(a)\\*", collect_path, got, &err), PCW_OK);
    cr_assert(!strstr(got, "Plain"), "%s", got);
    /* The rule tools share. */
    cr_assert(pcw_counter_in_wildcard(PERF_COUNTER_RAWCOUNT, 0, PCW_DETAIL_STANDARD));
    cr_assert(
        !pcw_counter_in_wildcard(PERF_COUNTER_RAWCOUNT, PCW_DETAIL_ADVANCED, PCW_DETAIL_STANDARD));
    cr_assert(
        pcw_counter_in_wildcard(PERF_COUNTER_RAWCOUNT, PCW_DETAIL_ADVANCED, PCW_DETAIL_ADVANCED));
    cr_assert(!pcw_counter_in_wildcard(PERF_RAW_BASE, 0, PCW_DETAIL_WIZARD));
    pcw_pdh_close(q);
    qp_stop(&p);
}
