/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_stop.c - pcw-exporter stops on SIGTERM within its
 * documented bound (docs/exporter.md, "Stopping") even while a scrape
 * waits on a callback provider that never answers: systemd sends SIGTERM
 * and waits before SIGKILL, and a service that ignores it for its whole
 * collector timeout is one that does not stop.
 *
 * Real processes: tests/helpers/exporter_provider --silent (its control
 * callback holds every notification; "held" tells when one is held, that
 * is, when the scrape is waiting on it), build/pcw-exporter, and a raw
 * HTTP client.
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "helpers/exporter_test.h"

TestSuite(exporter_stop, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* docs/exporter.md: in-flight scrapes get 1 s to finish, then the
 * exporter exits; 2 s covers that and the rest of stopping. */
#define STOP_BOUND_MS 2000

/* On b94d8c1 the exporter waited for the scrape's whole collection
 * (--collector.timeout, 60 s here) before it exited. */
Test(exporter_stop, sigterm_during_a_blocked_scrape_exits_0_promptly)
{
    exporter e;
    ex_start(&e, (const char *const[]){"--collector.timeout=60s", NULL});
    tu_child silent;
    ep_start_args(&silent, (const char *const[]){"--name", "silent", "--silent", NULL});
    ep_cmd(&silent, NULL, "callback Cb");
    char held[64];
    ep_cmd(&silent, held, "held");
    cr_assert_eq(atoi(held), 0);

    int fd = ex_connect(NULL, e.port);
    cr_assert_geq(fd, 0, "cannot connect to the exporter");
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Connection: close\r\n\r\n";
    cr_assert_eq(write(fd, req, sizeof req - 1), (ssize_t)(sizeof req - 1));
    /* The scrape is under way when the provider holds its notification. */
    long long deadline = tu_now_ms() + 10000;
    for (;;) {
        ep_cmd(&silent, held, "held");
        if (atoi(held) > 0)
            break;
        cr_assert(tu_now_ms() < deadline, "the scrape never reached the silent provider");
        struct timespec ts = {0, 2 * 1000 * 1000}; /* polling "held": no event to wait on */
        nanosleep(&ts, NULL);
    }

    long long t0 = tu_now_ms();
    cr_assert_eq(kill(e.pid, SIGTERM), 0);
    int st = 0;
    while (waitpid(e.pid, &st, WNOHANG) != e.pid) {
        if (tu_now_ms() - t0 > STOP_BOUND_MS) {
            kill(e.pid, SIGKILL);
            waitpid(e.pid, &st, 0);
            e.pid = -1;
            close(fd);
            ep_stop(&silent);
            cr_assert_fail("pcw-exporter did not stop within %d ms of SIGTERM", STOP_BOUND_MS);
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    long long ms = tu_now_ms() - t0;
    e.pid = -1;
    cr_log_info("stopped %lld ms after SIGTERM", ms);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pcw-exporter exited with status %d", st);
    char *log = ex_slurp(e.log, NULL);
    cr_assert(log);
    cr_expect(strstr(log, "msg=Stopping signal=SIGTERM"), "no Stopping line in: %s", log);
    free(log);
    close(fd);
    ep_stop(&silent);
}
