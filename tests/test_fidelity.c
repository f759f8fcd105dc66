/* SPDX-License-Identifier: MIT */
/*
 * tests/test_fidelity.c - the provider's side of issue 13 (fidelity to
 * PCW and PERFLIB), through the consumer library against a real provider
 * process (tests/helpers/fidelity_provider.c) written as a ported
 * Windows provider is: counter masks indexed by counter id.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <inttypes.h>

#include "pcw/collect.h"
#include "consumer_util.h"
#include "testutil.h"

TestSuite(fidelity, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 90);

static void spawn(tu_child *c)
{
    const char *args[] = {NULL};
    cr_assert_eq(tu_spawn(c, "fidelity_provider", args), 0);
    char line[PATH_MAX + 16];
    cr_assert_geq(tu_readline(c, line, sizeof line, 10000), 0);
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
}

static void finish(tu_child *c)
{
    int st = tu_finish(c, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fidelity_provider: %d", st);
}

/* The value of KEY in the provider's "stats" line (hexadecimal). */
static uint64_t stat_of(tu_child *c, const char *key)
{
    char line[1024], pat[64];
    cr_assert_gt(tu_command(c, line, sizeof line, "stats"), 0);
    snprintf(pat, sizeof pat, " %s=", key);
    const char *at = strstr(line, pat);
    cr_assert(at, "no %s in %s", key, line);
    return strtoull(at + strlen(pat), NULL, 16);
}

/* ---- item 1: counter masks by counter id ---------------------------------- */

/* A KCS-style callback fills only the counters whose id bit is set; the
 * consumer asks (by position) for C5 and C9 (ids 5 and 9, positions 1
 * and 2) and must get exactly their values. */
Test(fidelity, id_masks_reach_a_kcs_style_callback)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(5000);
    const pcw_merged_counterset *m = find_set(c, "Id Mask Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_query q = {(1ull << 1) | (1ull << 2), PCW_ANY_INSTANCE_ID, "*"};
    cr_assert_eq(pcw_consumer_collect(c, m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 2);
    cr_assert_eq(value_of(&s, m, "a", "C5"), 5);
    cr_assert_eq(value_of(&s, m, "a", "C9"), 9);
    cr_assert_eq(value_of(&s, m, "b", "C5"), 50);
    cr_assert_eq(value_of(&s, m, "b", "C9"), 90);
    cr_assert_eq(value_of(&s, m, "a", "C2"), 0, "C2 was not asked for");
    cr_assert_eq(value_of(&s, m, "a", "C70"), 0, "C70 was not asked for");
    cr_assert_eq(stat_of(&p, "collect_mask"), (1ull << 5) | (1ull << 9));

    /* Id 70 is above 63: bit 63 stands for it (and every id from 63 up). */
    q.counter_mask = 1ull << 3;
    cr_assert_eq(pcw_consumer_collect(c, m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(value_of(&s, m, "b", "C70"), 700);
    cr_assert_eq(value_of(&s, m, "b", "C2"), 0);
    cr_assert_eq(stat_of(&p, "collect_mask"), 1ull << 63);

    /* Every counter: ~0, whatever the ids. */
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(value_of(&s, m, "a", "C2"), 2);
    cr_assert_eq(value_of(&s, m, "a", "C70"), 70);
    cr_assert_eq(stat_of(&p, "collect_mask"), ~0ull);

    /* ADD/REMOVE_COUNTER: the one counter's id bit. */
    cr_assert_eq(pcw_consumer_add_counter(c, m, 2, NULL, NULL), PCW_OK);
    cr_assert_eq(stat_of(&p, "add_mask"), 1ull << 9);
    cr_assert_eq(pcw_consumer_remove_counter(c, m, 2, NULL, NULL), PCW_OK);
    cr_assert_eq(stat_of(&p, "remove_mask"), 1ull << 9);
    cr_assert_eq(pcw_consumer_add_counter(c, m, 3, NULL, NULL), PCW_OK);
    cr_assert_eq(stat_of(&p, "add_mask"), 1ull << 63);

    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish(&p);
}

/* Wait (at most 10 s) until the provider's stat KEY is `want`. */
static void wait_stat(tu_child *c, const char *key, uint64_t want)
{
    long long until = tu_now_ms() + 10000;
    uint64_t v;
    while ((v = stat_of(c, key)) != want && tu_now_ms() < until) {
        struct timespec ts = {0, 5 * 1000 * 1000}; /* polling the provider's counts */
        nanosleep(&ts, NULL);
    }
    cr_assert_eq(v, want, "%s = %" PRIu64 ", want %" PRIu64, key, v, want);
}

/* ---- item 2: collect_multiple and the cancel signal ------------------------ */

Test(fidelity, collect_multiple_is_false_for_a_single_instance_counterset)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(5000);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_consumer_collect(c, find_set(c, "Single Set"), NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(stat_of(&p, "single_multi"), 0);
    cr_assert_eq(pcw_consumer_collect(c, find_set(c, "Id Mask Set"), NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(stat_of(&p, "multi_multi"), 1);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish(&p);
}

/* The consumer's time limit passes: a callback polling
 * pcw_cancelled, and one waiting in pcw_cancel_wait,
 * both stop early (they would run 30 s otherwise). */
Test(fidelity, cancel_when_the_consumer_gives_up)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(300);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(c, find_set(c, "Cancel Poll Set"), NULL, &s, 0, &rep),
                 PCW_OK);
    cr_assert_eq(rep.first_error, PCW_E_TIMEOUT);
    wait_stat(&p, "cancel_seen", 1);
    cr_assert_eq(pcw_consumer_collect(c, find_set(c, "Cancel Wait Set"), NULL, &s, 0, &rep),
                 PCW_OK);
    cr_assert_eq(rep.first_error, PCW_E_TIMEOUT);
    wait_stat(&p, "cancel_seen", 2);
    cr_assert_eq(stat_of(&p, "cancel_begun"), 2);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish(&p);
}

/* The consumer disconnects (is killed) long before its time limit: the
 * waiting callback is told at once. */
Test(fidelity, cancel_when_the_consumer_disconnects)
{
    tu_child p;
    spawn(&p);
    static const char *const sets[2] = {"Cancel Wait Set", "Cancel Poll Set"};
    for (int round = 0; round < 2; round++) {
        pid_t kid = tu_fork();
        cr_assert_geq(kid, 0);
        if (kid == 0) {
            pcw_consumer *c;
            pcw_consumer_options o = {.timeout_ms = 60000};
            if (pcw_consumer_open(&c, &o) != PCW_OK || pcw_consumer_refresh(c, NULL) != PCW_OK)
                _exit(1);
            const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, sets[round]);
            pcw_snapshot s = PCW_SNAPSHOT_INIT;
            if (m)
                pcw_consumer_collect(c, m, NULL, &s, 0, NULL);
            _exit(2);
        }
        wait_stat(&p, "cancel_begun", (uint64_t)round + 1);
        kill(kid, SIGKILL);
        int st;
        cr_assert_eq(waitpid(kid, &st, 0), kid);
        cr_assert(WIFSIGNALED(st), "the consumer ended early: %d", st);
        wait_stat(&p, "cancel_seen", (uint64_t)round + 1);
    }
    finish(&p);
}

/* ---- item 4: COLLECT_START/END pairs; no counter left behind -------------- */

/* COLLECT_START outlasts the consumer's time limit. The consumer stays
 * connected (and never collects again): the provider must still see the
 * COLLECT_END once START returns. The helper's hold limit is 10 minutes,
 * so that limit cannot be what ends it. */
Test(fidelity, slow_collect_start_is_still_ended)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(300);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_consumer_collect(c, find_set(c, "Slow Start Set"), NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 1, "the segment's instance is read all the same");
    cr_assert_eq(stat_of(&p, "starts"), 1);
    cr_assert_gt(tu_send(&p, "release-start\n") == 0, 0);
    wait_stat(&p, "ends", 1);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish(&p);
}

/* ADD_COUNTER outlasts the time limit: the consumer reports it failed, so
 * the provider must not keep the counter added (the consumer stays
 * connected: it would never be removed). */
Test(fidelity, slow_add_counter_is_not_left_added)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(300);
    cr_assert_eq(pcw_consumer_add_counter(c, find_set(c, "Slow Add Set"), 0, NULL, NULL),
                 PCW_E_TIMEOUT);
    cr_assert_eq(tu_send(&p, "release-add\n"), 0);
    wait_stat(&p, "adds", 1);
    wait_stat(&p, "removes", 1);
    pcw_consumer_close(c);
    finish(&p);
}

/* ---- item 5: a control callback's Win32 error code --------------------------- */

Test(fidelity, win32_error_codes_reach_the_consumer)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(5000);
    const pcw_merged_counterset *m = find_set(c, "Denied Set");
    cr_assert_eq(pcw_consumer_add_counter(c, m, 0, NULL, NULL), 5);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    pcw_consumer_collect(c, m, NULL, &s, 0, &rep);
    cr_assert_eq(rep.first_error, 5);
    /* The connection is still good: the code was not a protocol error. */
    cr_assert_eq(pcw_consumer_collect(c, find_set(c, "Single Set"), NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.first_error, PCW_OK);
    char buf[128];
    cr_assert_str_eq(pcw_status_describe(5, buf, sizeof buf),
                     "provider error 5 (ERROR_ACCESS_DENIED)");
    cr_assert_str_eq(pcw_status_describe(4242, buf, sizeof buf), "provider error 4242");
    cr_assert_str_eq(pcw_status_describe(PCW_E_TIMEOUT, buf, sizeof buf),
                     pcw_status_str(PCW_E_TIMEOUT));
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish(&p);
}

/* pcwdump shows the code. */
Test(fidelity, pcwdump_prints_the_providers_error_code)
{
    tu_child p;
    spawn(&p);
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd, "%s/pcwdump --counterset 'Denied Set' 2>&1",
             getenv("PCW_BUILD") ? getenv("PCW_BUILD") : PCW_BUILD_DIR);
    FILE *f = popen(cmd, "r");
    cr_assert(f);
    char out[8192];
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    pclose(f);
    cr_assert(strstr(out, "provider error 5 (ERROR_ACCESS_DENIED)"), "%s", out);
    finish(&p);
}

/* ---- item 6 (issue item 7): duplicate names inside a callback ---------------- */

/* A KCS-style callback returns on the first error: the duplicate "X" must
 * not be one, so "y" after it is not lost; the consumer is told once. */
Test(fidelity, duplicate_name_in_a_callback_loses_nothing_after_it)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(5000);
    const pcw_merged_counterset *m = find_set(c, "Dup Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    int cb[1] = {12345};
    pcw_collect_report rep = {.callback_status = cb};
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.first_error, PCW_OK);
    cr_assert_eq(s.count, 2);
    cr_assert_eq(value_of(&s, m, "x", "V"), 1, "the first of the two names is kept");
    cr_assert_eq(value_of(&s, m, "y", "V"), 3);
    cr_assert_eq(stat_of(&p, "dup_rc"), PCW_OK);
    cr_assert_eq(cb[0], PCW_E_DUPLICATE_NAME, "callback status %d", cb[0]);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish(&p);
}
