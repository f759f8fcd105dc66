/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_slow.c - pcw-exporter against slow clients (issue
 * 23, item 2): connections that send a partial request and then a byte
 * now and then, or nothing at all, must neither keep their slot past the
 * request deadline (--web.request-timeout) nor lock out a client that
 * sends its request at once, as Prometheus does.
 *
 * The attackers are real sockets from other loopback addresses
 * (tests/helpers/exporter_test.h, ex_attack); the exporter is the real
 * process. test_exporter_tls.c has the half-sent TLS record,
 * test_exporter_prometheus.c a real Prometheus scraping during an attack.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <sched.h>

#include "helpers/exporter_test.h"

TestSuite(exporter_slow, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* Wait until the exporter closes fd, sending one byte every 100 ms while
 * `trickle` (never inactive); the milliseconds it took, or -1 when still
 * open at max_ms. */
static long long time_to_close(int fd, int trickle, int max_ms)
{
    long long t0 = tu_now_ms();
    while (tu_now_ms() - t0 < max_ms) {
        struct pollfd p = {fd, POLLIN, 0};
        char b[512];
        if (poll(&p, 1, 100) > 0 && read(fd, b, sizeof b) <= 0)
            return tu_now_ms() - t0;
        if (trickle && send(fd, "a", 1, MSG_NOSIGNAL) != 1)
            return tu_now_ms() - t0;
    }
    return -1;
}

/* A request must be whole within --web.request-timeout however it is
 * paced: a connection that sends a byte every 100 ms (libmicrohttpd's
 * inactivity timeout, 120 s, never fires) and one that sends nothing are
 * closed at the deadline (10 s by default), and counted. */
Test(exporter_slow, request_deadline_separate_from_inactivity)
{
    exporter e;
    ex_start(&e, NULL); /* the default deadline, 10 s */
    int trickler = ex_connect(NULL, e.port), idle = ex_connect(NULL, e.port);
    cr_assert(trickler >= 0 && idle >= 0);
    cr_assert_eq(send(trickler, EX_SLOW_HEADER, strlen(EX_SLOW_HEADER), MSG_NOSIGNAL),
                 (ssize_t)strlen(EX_SLOW_HEADER));
    long long t = time_to_close(trickler, 1, 20000);
    cr_expect(t >= 0, "a trickling request was still open after 20 s (deadline 10 s)");
    cr_log_info("trickling request closed after %lld ms", t);
    t = time_to_close(idle, 0, 2000);
    cr_expect(t >= 0, "an idle connection was still open 2 s after the trickling one closed");
    close(trickler);
    close(idle);
    http_resp r;
    cr_assert_eq(http_get(e.port, "/metrics", NULL, &r), 200);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"request_timeout\"}"), 2);
    http_free(&r);
    ex_stop(&e);
}

/* 100 slow connections (more than the 40 slots and the 80 libmicrohttpd accepts)
 * from 127.0.0.2, reopened as soon as they are closed: every scrape a
 * client sends whole, with Prometheus' headers, is served - the slow ones
 * waiting longest make room (shed). The old exporter refused them all. */
Test(exporter_slow, slow_clients_do_not_lock_out)
{
    exporter e;
    ex_start(&e, NULL);
    ex_attack a;
    ex_attack_start(&a, e.port, "127.0.0.2", 100, EX_SLOW_HEADER, strlen(EX_SLOW_HEADER), 200,
                    60000);
    /* The attack has taken every slot once it has opened 100. */
    long long deadline = tu_now_ms() + 20000;
    while (atomic_load(&a.opened) < 100) {
        cr_assert_lt(tu_now_ms(), deadline, "the attack could not open its connections");
        sched_yield();
    }
    int served = 0;
    for (int i = 0; i < 20; i++) {
        http_resp r;
        int code =
            http_request_from("127.0.0.1", e.port, "GET", "/metrics", EX_PROM_ACCEPT, 5000, &r);
        served += code == 200 && r.body_len > 0;
        http_free(&r);
    }
    ex_attack_stop(&a);
    cr_expect_eq(served, 20, "%d of 20 scrapes served during the attack", served);
    http_resp r;
    cr_assert_eq(http_get(e.port, "/metrics", NULL, &r), 200);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"shed\"}"), 20);
    http_free(&r);
    ex_stop(&e);
}

/* The same with connections that send nothing at all. */
Test(exporter_slow, idle_clients_do_not_lock_out)
{
    exporter e;
    ex_start(&e, NULL);
    ex_attack a;
    ex_attack_start(&a, e.port, "127.0.0.3", 100, "", 0, 200, 60000);
    long long deadline = tu_now_ms() + 20000;
    while (atomic_load(&a.opened) < 100) {
        cr_assert_lt(tu_now_ms(), deadline, "the attack could not open its connections");
        sched_yield();
    }
    int served = 0;
    for (int i = 0; i < 10; i++) {
        http_resp r;
        served += http_request_from("127.0.0.1", e.port, "GET", "/metrics", EX_PROM_ACCEPT, 5000,
                                    &r) == 200;
        http_free(&r);
    }
    ex_attack_stop(&a);
    cr_expect_eq(served, 10, "%d of 10 scrapes served while idle connections held on", served);
    ex_stop(&e);
}

/* Clients that send a whole scrape of a 12 MB body and then do not read
 * it hold their connections while libmicrohttpd waits to send; with all
 * --web.max-requests (8 here) taken by them, a new scrape is still served:
 * the response sending longest gives up its slot (shed). */
Test(exporter_slow, slow_readers_do_not_lock_out)
{
    tu_child p;
    ep_start(&p, "big");
    ep_cmd(&p, NULL, "kinds Big");
    ep_cmd(&p, NULL, "bulk Big 600 1000");
    exporter e;
    const char *args[] = {"--web.max-requests=8", NULL};
    ex_start(&e, args);
    int fd[8];
    for (int i = 0; i < 8; i++) {
        fd[i] = ex_connect("127.0.0.4", e.port);
        int small = 4096;
        cr_assert(fd[i] >= 0 &&
                  setsockopt(fd[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof small) == 0);
        static const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        cr_assert_eq(send(fd[i], req, sizeof req - 1, MSG_NOSIGNAL), (ssize_t)(sizeof req - 1));
        /* Its response has begun: the status line is in. */
        struct pollfd pf = {fd[i], POLLIN, 0};
        char b[12];
        cr_assert(poll(&pf, 1, 30000) > 0 && read(fd[i], b, sizeof b) > 0, "client %d", i);
    }
    http_resp r;
    int code = http_request_from("127.0.0.1", e.port, "GET", "/metrics", EX_PROM_ACCEPT, 30000, &r);
    cr_expect_eq(code, 200, "a scrape got %d while slow readers held every slot", code);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"shed\"}"), 1);
    http_free(&r);
    for (int i = 0; i < 8; i++)
        close(fd[i]);
    ex_stop(&e);
    ep_stop(&p);
}
