/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_silent.c - a provider that never answers its control
 * channel costs a query only its own part (issue 23, item 10): a
 * pcw_pdh_collect that meets it (it publishes a counterset name the query
 * collects, so the query tells it of the counters added) still collects
 * every other provider within the call's time limit.
 *
 * Real processes: tests/helpers/exporter_provider, the silent one with
 * --silent (its control callback holds every notification).
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "helpers/exporter_test.h"
#include "pcw/pdh.h"

TestSuite(query_silent, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* The status of the source of h whose provider is `name`; -1000 if none. */
static int source_status(const pcw_pdh_counter *h, const char *name, size_t *instances)
{
    for (size_t i = 0; i < pcw_pdh_source_count(h); i++) {
        pcw_pdh_source s;
        cr_assert_eq(pcw_pdh_get_source(h, i, &s), PCW_OK);
        if (strcmp(s.provider, name) == 0) {
            *instances = s.instances;
            return s.status;
        }
    }
    return -1000;
}

/* On 308ba66 the collection that met the silent provider spent its whole
 * limit waiting for the ADD_COUNTER answer, then asked nobody: the honest
 * provider's callback instances were missing too. Now notifications may
 * take half of a collection's limit. */
Test(query_silent, new_silent_provider_costs_only_its_own_part)
{
    tu_child honest, silent;
    ep_start_args(&honest, (const char *const[]){"--name", "honest", NULL});
    ep_cmd(&honest, NULL, "callback Cb");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    const uint32_t limit_ms = 1000;
    cr_assert_eq(pcw_pdh_set_timeout(q, limit_ms), PCW_OK);
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Cb(*)\\Items", &h, &err), PCW_OK, "%s", err.message);
    size_t failed = 99, n = 0;
    cr_assert_eq(pcw_pdh_collect(q, &failed), PCW_OK);
    cr_assert_eq(failed, 0);
    cr_assert_eq(source_status(h, "honest", &n), PCW_OK);
    cr_assert_eq(n, 3);

    ep_start_args(&silent, (const char *const[]){"--name", "silent", "--silent", NULL});
    ep_cmd(&silent, NULL, "callback Cb");
    for (int round = 0; round < 2; round++) {
        long long t0 = tu_now_ms();
        cr_assert_eq(pcw_pdh_collect(q, &failed), PCW_OK);
        long long took = tu_now_ms() - t0;
        cr_expect_eq(pcw_pdh_source_count(h), 2, "round %d: the silent provider is met", round);
        int st = source_status(h, "honest", &n);
        cr_expect_eq(st, PCW_OK, "round %d: honest provider: %s", round, pcw_status_str(st));
        cr_expect_eq(n, 3, "round %d: %zu of the honest provider's instances", round, n);
        st = source_status(h, "silent", &n);
        cr_expect_eq(st, PCW_E_TIMEOUT, "round %d: silent provider: %s", round, pcw_status_str(st));
        cr_expect_eq(failed, 1, "round %d", round);
        /* The limit, and scheduling slack: never twice the limit. */
        cr_expect_lt(took, limit_ms + 500, "round %d took %lld ms", round, took);
    }
    pcw_pdh_close(q);
    ep_stop(&silent);
    ep_stop(&honest);
}
