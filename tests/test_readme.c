/* SPDX-License-Identifier: MIT */
/*
 * tests/test_readme.c - the README's provider, built from the README as a
 * reader would build it (its web.h, web.c and main.c blocks, cc -std=c11
 * -Wall -Wextra -Werror against lib/), run, and read back through the
 * query: a provider written from the README gets a _Total (issue 24 item
 * 8). scripts/install-test.sh builds the same blocks against an installed
 * tree; this one runs in make check.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <time.h>

#include "pcw/query.h"
#include "readme_build.h"

TestSuite(readme, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

Test(readme, provider_gets_a_total)
{
    char dir[64], cmd[2048];
    readme_build_web(dir, sizeof dir);
    snprintf(cmd, sizeof cmd, "%s/web", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl(cmd, "web", (char *)NULL);
        _exit(127);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = NULL;
    pcw_path_error err;
    pcw_pdh_value v = {0};
    long long deadline = tu_now_ms() + 10000;
    int rc = PCW_E_NOT_FOUND;
    /* The provider runs for 3 s: wait (bounded) until it has published,
     * then until its _Total has a rate. */
    while (tu_now_ms() < deadline) {
        if (!h)
            rc = pcw_pdh_add_counter(q, "\\Web Server(_Total)\\Requests", &h, &err);
        if (h) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            if (pcw_pdh_value_count(h) == 1 && pcw_pdh_get_value(h, 0, 0, &v) == PCW_OK &&
                v.status == PCW_CSTATUS_VALID)
                break;
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* pace the poll */
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    readme_remove(dir);
    cr_assert_not_null(h, "\\Web Server(_Total)\\Requests: %d %s", rc, err.message);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "\\Web Server(_Total)\\Requests: %s",
                 pcw_cstatus_str(v.status));
    cr_assert_eq(v.kind, PCW_PDH_TOTAL);
    cr_assert_eq(v.sources, 1);
    pcw_pdh_close(q);
}
