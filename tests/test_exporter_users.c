/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_users.c - pcw-exporter as its own user, reading
 * other users' providers (--collector.all-users), as the packaged unit
 * runs it: the providers it cannot read are logged once each, with why,
 * and counted (pcw_exporter_providers_unreadable); a provider that shares
 * with the exporter's group is read.
 *
 * Real second users: the test runs as root (CI), and starts the providers
 * and the exporter under uids of their own (exporter_provider --as, and
 * setpriv for the exporter), none of which needs an /etc/passwd entry.
 * Not root: skipped.
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "helpers/exporter_test.h"

TestSuite(exporter_users, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* uids and the group the test uses: alice's provider is owner-only, bob
 * shares one provider with the group and not another; the exporter runs as
 * its own uid in that group. */
#define ALICE    "64101"
#define BOB      "64102"
#define EXPORTER "64103"
#define GROUP    "64104"
#define GROUP2   "64105" /* a second group of the exporter's, in some tests */
#define MALLORY  "64106" /* plants a symlink */

static void provider_as(tu_child *p, const char *name, const char *who, const char *share)
{
    char as[64];
    snprintf(as, sizeof as, "%s:%s", who, who);
    const char *args[] = {"--name", name, "--as", as, share ? "--share" : NULL, share, NULL};
    cr_assert_eq(tu_spawn(p, "exporter_provider", args), 0);
    char line[256];
    cr_assert(tu_readline(p, line, sizeof line, 10000) > 0, "provider %s did not start", name);
    cr_assert(strncmp(line, "ready", 5) == 0, "provider %s: %s", name, line);
}

/* Scrape until `want` is the value of `metric` (each scrape catches up
 * with the providers); the last body. */
static char *scrape_until(const exporter *e, const char *metric, double want)
{
    long long deadline = tu_now_ms() + 20000;
    for (;;) {
        http_resp r;
        cr_assert_eq(http_get(e->port, "/metrics", NULL, &r), 200);
        if (ex_value(r.body, metric) == want) {
            char *body = r.body;
            r.body = NULL;
            http_free(&r);
            return body;
        }
        http_free(&r);
        cr_assert_lt(tu_now_ms(), deadline, "%s never became %g; the exporter's log:\n%s", metric,
                     want, ex_slurp(e->log, NULL));
    }
}

/* Lines of the exporter's log that contain every one of the strings. */
static size_t log_lines(const exporter *e, const char *a, const char *b, const char *c)
{
    char *log = ex_slurp(e->log, NULL);
    cr_assert(log);
    size_t n = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
        n += strstr(line, a) && (!b || strstr(line, b)) && (!c || strstr(line, c));
    free(log);
    return n;
}

/* A root other users can reach and make their folders in, as /dev/shm:
 * <root>/shm into shm, and PCW_DIR. Not root: the test is skipped. */
static void shared_root(char *shm, size_t cap)
{
    if (geteuid() != 0)
        cr_skip_test("needs root, to run the providers and the exporter as other users");
    ex_path(shm, cap, "shm");
    cr_assert_eq(mkdir(shm, 0700), 0);
    cr_assert_eq(chmod(shm, 01777), 0);
    cr_assert_eq(chmod(tu_root, 0711), 0);
    setenv("PCW_DIR", shm, 1);
}

/* Start the exporter as its own uid in `groups` ("--groups=..."),
 * reading every user's providers, and wait until a scrape counts no
 * provider it cannot read. */
static void start_exporter_as(exporter *e, const char *groups)
{
    const char *const wrap[] = {
        "/usr/bin/setpriv", "--reuid=" EXPORTER, "--regid=" EXPORTER, groups, "--", NULL};
    ex_wrap = wrap;
    const char *args[] = {"--collector.all-users", "--log.level=debug", NULL};
    ex_start(e, args);
    ex_wrap = NULL;
    free(scrape_until(e, "pcw_exporter_providers_unreadable", 0));
}

Test(exporter_users, unreadable_providers_logged_once_and_counted)
{
    char shm[400];
    shared_root(shm, sizeof shm);
    static const char *const wrap[] = {"/usr/bin/setpriv",
                                       "--reuid=" EXPORTER,
                                       "--regid=" EXPORTER,
                                       "--groups=" GROUP,
                                       "--",
                                       NULL};
    const char *args[] = {"--collector.all-users", "--log.level=debug", NULL};
    exporter e;
    start_exporter_as(&e, "--groups=" GROUP);

    /* alice's provider appears after the exporter started: owner-only. */
    tu_child alice, bob_shared, bob_private;
    provider_as(&alice, "alice-web", ALICE, NULL);
    ep_cmd(&alice, NULL, "single Alice\\sSet");
    ep_cmd(&alice, NULL, "set Alice\\sSet - 0 7");
    char *body = scrape_until(&e, "pcw_exporter_providers_unreadable", 1);
    cr_expect(!strstr(body, "pcw_alice_set"), "alice's counters cannot be read");
    free(body);
    /* Logged once, however many scrapes, naming the folder and why. */
    free(scrape_until(&e, "pcw_exporter_providers_unreadable", 1));
    char folder[460];
    snprintf(folder, sizeof folder, "%s/pcw-" ALICE, shm);
    cr_expect_eq(log_lines(&e, "cannot read", folder, "owner-only"), 1,
                 "one line for alice's folder: %s", ex_slurp(e.log, NULL));
    cr_expect_eq(log_lines(&e, "level=warn", folder, NULL), 1);

    /* bob shares one provider with the exporter's group: it is read. */
    provider_as(&bob_shared, "bob-shared", BOB, GROUP);
    ep_cmd(&bob_shared, NULL, "single Bob\\sShared");
    ep_cmd(&bob_shared, NULL, "set Bob\\sShared - 0 9");
    body = scrape_until(&e, "pcw_exporter_countersets", 1);
    char line[256];
    snprintf(line, sizeof line, "pcw_bob_shared_level{provider=\"bob-shared\",pid=\"%d\"} 9",
             bob_shared.pid);
    cr_expect(ex_has_line(body, line), "missing: %s", line);
    cr_expect_eq(ex_value(body, "pcw_exporter_providers_unreadable"), 1);
    free(body);
    /* ...and not another: its segment is owner-only in a folder the group
     * may read; logged with its pid. */
    provider_as(&bob_private, "bob-private", BOB, NULL);
    ep_cmd(&bob_private, NULL, "single Bob\\sPrivate");
    free(scrape_until(&e, "pcw_exporter_providers_unreadable", 2));
    char pid[64];
    snprintf(pid, sizeof pid, "pid=%d", bob_private.pid);
    cr_expect_eq(log_lines(&e, "cannot read", pid, "owner-only"), 1, "%s", ex_slurp(e.log, NULL));

    /* Gone, then back: logged again when it appears. (alice's folder
     * stays: it cannot be listed, so it counts while it exists.) */
    ep_stop(&bob_private);
    free(scrape_until(&e, "pcw_exporter_providers_unreadable", 1));
    provider_as(&bob_private, "bob-private", BOB, NULL);
    free(scrape_until(&e, "pcw_exporter_providers_unreadable", 2));
    snprintf(pid, sizeof pid, "pid=%d", bob_private.pid);
    cr_expect_eq(log_lines(&e, "cannot read", pid, "owner-only"), 1);
    cr_expect_eq(log_lines(&e, "cannot read", folder, NULL), 1, "alice's folder: still once");
    /* At start: an exporter started now says it before it listens. */
    exporter second;
    ex_wrap = wrap;
    ex_start(&second, args);
    ex_wrap = NULL;
    cr_expect_eq(log_lines(&second, "cannot read", folder, "owner-only"), 1, "at start: %s",
                 ex_slurp(second.log, NULL));
    cr_expect_eq(log_lines(&second, "cannot read", pid, "owner-only"), 1);
    ex_stop(&second);
    ep_stop(&alice);
    ep_stop(&bob_private);
    ep_stop(&bob_shared);
    ex_stop(&e);
}

/* The exporter in several groups: the reason it logs names them, not its
 * own primary group (getgroups with room for one fails for two). */
Test(exporter_users, reason_names_the_exporters_groups)
{
    char shm[400];
    shared_root(shm, sizeof shm);
    exporter e;
    start_exporter_as(&e, "--groups=" GROUP "," GROUP2);
    tu_child alice;
    provider_as(&alice, "alice-web", ALICE, NULL);
    ep_cmd(&alice, NULL, "single Alice\\sSet");
    free(scrape_until(&e, "pcw_exporter_providers_unreadable", 1));
    char folder[460];
    snprintf(folder, sizeof folder, "%s/pcw-" ALICE, shm);
    cr_expect_eq(log_lines(&e, folder, "did not share with group " GROUP " or " GROUP2, NULL), 1,
                 "%s", ex_slurp(e.log, NULL));
    cr_expect_eq(log_lines(&e, folder, "group " EXPORTER, NULL), 0);
    ep_stop(&alice);
    ex_stop(&e);
}

/* A provider folder that is a symlink someone planted in the root: the
 * reason logged is discovery's (a symlink, refused); what it points to -
 * here a folder of root's with an odd mode - is neither followed nor
 * described. */
Test(exporter_users, planted_symlink_not_followed)
{
    char shm[400], target[400], link[460];
    shared_root(shm, sizeof shm);
    ex_path(target, sizeof target, "elsewhere");
    cr_assert_eq(mkdir(target, 0701), 0);
    cr_assert_eq(chmod(target, 0701), 0);
    exporter e;
    start_exporter_as(&e, "--groups=" GROUP);
    snprintf(link, sizeof link, "%s/pcw-" MALLORY, shm);
    cr_assert_eq(symlink(target, link), 0);
    free(scrape_until(&e, "pcw_exporter_providers_unreadable", 1));
    cr_expect_eq(log_lines(&e, "cannot read", link, "symbolic link"), 1, "%s",
                 ex_slurp(e.log, NULL));
    cr_expect_eq(log_lines(&e, link, "701", NULL), 0, "the target's mode was reported: %s",
                 ex_slurp(e.log, NULL));
    ex_stop(&e);
}

/* The check of what cannot be read runs under the collector's lock, and
 * within the scrape's time: a scrape whose time is already over when the
 * providers changed logs nothing yet (the check is cut short and kept
 * for the next scrape), and the next scrape logs it, once. */
Test(exporter_users, unreadable_check_within_scrape_time)
{
    char shm[400];
    shared_root(shm, sizeof shm);
    exporter e;
    start_exporter_as(&e, "--groups=" GROUP);
    tu_child alice;
    provider_as(&alice, "alice-web", ALICE, NULL);
    ep_cmd(&alice, NULL, "single Alice\\sSet");
    char folder[460];
    snprintf(folder, sizeof folder, "%s/pcw-" ALICE, shm);
    http_resp r;
    cr_assert_eq(
        http_get(e.port, "/metrics", "X-Prometheus-Scrape-Timeout-Seconds: 0.000001\r\n", &r), 200);
    http_free(&r);
    cr_expect_eq(log_lines(&e, "cannot read", folder, NULL), 0,
                 "checked past the scrape's time: %s", ex_slurp(e.log, NULL));
    free(scrape_until(&e, "pcw_exporter_providers_unreadable", 1));
    cr_expect_eq(log_lines(&e, "cannot read", folder, "owner-only"), 1, "%s",
                 ex_slurp(e.log, NULL));
    ep_stop(&alice);
    ex_stop(&e);
}
