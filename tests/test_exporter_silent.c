/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_silent.c - a provider that never answers its
 * control channel costs only its own series (issue 23, item 10): another
 * user's provider publishing countersets under the names an honest
 * provider uses must not take the honest provider's series out of a
 * scrape, nor make the scrape overrun the scraper's timeout.
 *
 * Real processes: two tests/helpers/exporter_provider (the silent one with
 * --silent: its control callback holds every notification; as uid 65534
 * when the test runs as root, as CI does), build/pcw-exporter with
 * --collector.all-users, and curl as the scraper.
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "helpers/exporter_test.h"

TestSuite(exporter_silent, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* One scrape by curl, as Prometheus sends it (its timeout in the
 * X-Prometheus-Scrape-Timeout-Seconds header): the body into <root>/name.
 * Returns the HTTP status; *ms gets how long it took. */
static int scrape(const exporter *e, int timeout_s, const char *name, long long *ms)
{
    char body[320], code[320];
    ex_path(body, sizeof body, name);
    ex_path(code, sizeof code, "curl.code");
    long long t0 = tu_now_ms();
    int st = ex_sh("curl -s -m 30 -H 'X-Prometheus-Scrape-Timeout-Seconds: %d' -o %s "
                   "-w '%%{http_code}' http://127.0.0.1:%d/metrics > %s",
                   timeout_s, body, e->port, code);
    *ms = tu_now_ms() - t0;
    cr_assert_eq(st, 0, "curl failed");
    char *c = ex_slurp(code, NULL);
    cr_assert(c);
    int http = atoi(c);
    free(c);
    return http;
}

/* Series (not comments) of the scrape in <root>/name that carry the label
 * provider="who". */
static size_t series_of(const char *name, const char *who)
{
    char path[320], label[128];
    ex_path(path, sizeof path, name);
    snprintf(label, sizeof label, "provider=\"%s\"", who);
    char *body = ex_slurp(path, NULL);
    cr_assert(body, "no body in %s", path);
    size_t n = 0;
    for (char *line = body, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        n += line[0] != '#' && strstr(line, label) != NULL;
    }
    free(body);
    return n;
}

/* On 308ba66 the first scrape after a silent provider (another user's)
 * registered "Same", a name an honest provider uses, waited the whole
 * budget for its ADD_COUNTER answers and then collected nothing: all of
 * the honest provider's series were missing. Now catching up with new
 * providers and countersets may take half the budget, and the collection
 * - every provider at once - has the rest. */
Test(exporter_silent, silent_provider_costs_only_its_own_series)
{
    int other_user = geteuid() == 0;
    if (other_user) /* uid 65534 makes its provider folder in our root */
        cr_assert_eq(chmod(tu_root, 01777), 0);
    tu_child honest, silent;
    ep_start_args(&honest, (const char *const[]){"--name", "honest", NULL});
    ep_cmd(&honest, NULL, "kinds Same");
    for (int i = 0; i < 3; i++)
        ep_cmd(&honest, NULL, "create Same i%d", i);
    ep_cmd(&honest, NULL, "callback Cb");
    exporter e;
    ex_start(&e, (const char *const[]){"--collector.all-users", NULL});
    long long ms;
    /* The scraper's timeout is 3 s: the exporter's budget is 2.5 s (the
     * default offset is 0.5 s), and the answer is due within 3 s. */
    const int timeout_s = 3;
    const long long due_ms = 3000;
    cr_assert_eq(scrape(&e, timeout_s, "alone.txt", &ms), 200);
    size_t want = series_of("alone.txt", "honest");
    cr_assert_geq(want, 3 * 15 + 3 * 2, "%zu series of the honest provider", want);

    if (other_user)
        ep_start_args(
            &silent, (const char *const[]){"--name", "silent", "--silent", "--uid", "65534", NULL});
    else
        ep_start_args(&silent, (const char *const[]){"--name", "silent", "--silent", NULL});
    ep_cmd(&silent, NULL, "kinds Same"); /* the honest provider's names */
    ep_cmd(&silent, NULL, "create Same evil");
    ep_cmd(&silent, NULL, "callback Cb");
    ep_cmd(&silent, NULL, "kinds Quiet"); /* and one of its own */
    if (other_user) {
        char dir[320];
        struct stat st;
        cr_assert_eq(stat(ex_path(dir, sizeof dir, "pcw-65534"), &st), 0);
        cr_assert_eq(st.st_uid, 65534u, "the silent provider runs as another user");
    }
    /* The first scrape that meets it (new provider, new countersets), then
     * one in the steady state. */
    static const char *const names[] = {"met.txt", "steady.txt"};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(scrape(&e, timeout_s, names[i], &ms), 200);
        cr_log_info("%s: a scrape with a silent provider took %lld ms", names[i], ms);
        size_t got = series_of(names[i], "honest");
        cr_expect_eq(got, want, "%s: %zu of the honest provider's %zu series", names[i], got, want);
        cr_expect_lt(ms, due_ms, "%s: the scrape took %lld ms, the scraper waits %lld", names[i],
                     ms, due_ms);
    }
    ex_stop(&e);
    ep_stop(&silent);
    ep_stop(&honest);
}
