/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_memory.c - pcw-exporter's memory under clients that
 * do not read (issue 23, item 3): concurrent requests of one collection
 * share its body, the bodies held by responses in flight are bounded by
 * --web.max-response-memory (past it the responses sending longest are
 * cut, and counted), and memory goes back after the clients leave.
 *
 * The provider (tests/helpers/exporter_provider.c) publishes 600
 * instances with 1000-byte names: a scrape of about 13 MB. The clients are
 * real sockets with a small receive buffer that read only the status
 * line; the exporter's memory is its VmRSS and VmHWM in /proc (bounds
 * asserted, not timings). Under ASan the exporter's quarantine is turned
 * off, so that freed memory is returned as it is in a plain build.
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "helpers/exporter_test.h"

static void no_quarantine(void)
{
    tu_root_setup();
    /* Only the exporter (a child) reads it: this process started with
     * its own options. */
    const char *old = getenv("ASAN_OPTIONS");
    char opts[512];
    snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0:thread_local_quarantine_size_kb=0",
             old ? old : "", old && *old ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
}

TestSuite(exporter_memory, .init = no_quarantine, .fini = tu_root_teardown, .timeout = 180);

#define MB (1024.0 * 1024.0)

/* A line of /proc/PID/status ("VmRSS", "VmHWM") in bytes. */
static double proc_status(pid_t pid, const char *key)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    char *s = ex_slurp(path, NULL);
    cr_assert(s, "cannot read %s", path);
    const char *at = strstr(s, key);
    double kb = at ? strtod(at + strlen(key) + 1, NULL) : NAN;
    free(s);
    return kb * 1024;
}

/* The big provider: "Big" with 600 instances of 1000-byte names. */
static void big_provider(tu_child *p)
{
    ep_start(p, "big");
    ep_cmd(p, NULL, "kinds Big");
    ep_cmd(p, NULL, "bulk Big 600 1000");
}

/* A client that sends a scrape and does not read it: the connection, with
 * the HTTP status read (0 when none came in 30 s). */
static int stalled_client(int port, const char *extra, int *status)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int small = 4096;
    cr_assert(fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small) == 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    char req[512];
    int n = snprintf(req, sizeof req, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n",
                     extra ? extra : "");
    cr_assert_eq(write(fd, req, (size_t)n), n);
    *status = 0;
    return fd;
}

/* Read the status line of a stalled client (12 bytes, nothing more). */
static int read_status(int fd)
{
    char b[13] = "";
    size_t got = 0;
    long long deadline = tu_now_ms() + 30000;
    while (got < 12 && tu_now_ms() < deadline) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 1000) <= 0)
            continue;
        ssize_t r = read(fd, b + got, 12 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got == 12 && strncmp(b, "HTTP/1.1 ", 9) == 0 ? atoi(b + 9) : 0;
}

/* A whole scrape (reading); its body length and scrapes_total. */
static size_t full_scrape(const exporter *e, const char *extra, double *scrapes)
{
    http_resp r;
    cr_assert_eq(http_request(e->port, "GET", "/metrics", extra, 30000, &r), 200);
    size_t n = r.body_len;
    if (scrapes)
        *scrapes = ex_value(r.body, "pcw_exporter_scrapes_total");
    http_free(&r);
    return n;
}

/* 20 requests that arrive while a collection is under way (a callback
 * provider holds it for the scrape's 2.5 s) are answered from that one
 * collection: one more scrape counted, not 20, and the exporter's peak
 * memory grows by about one body, not 20 (the clients do not read). The
 * old exporter collected for each in turn, and all but the first gave up
 * (503) waiting for the collector. */
static void share_one_body(const char *accept)
{
    tu_child p, cb;
    big_provider(&p);
    ep_start(&cb, "slow");
    ep_cmd(&cb, NULL, "callback Slow");
    ep_cmd(&cb, NULL, "block Slow");
    exporter e;
    ex_start(&e, NULL);
    char hold[256];
    snprintf(hold, sizeof hold, "X-Prometheus-Scrape-Timeout-Seconds: 3\r\n%s",
             accept ? accept : "");
    double s0;
    size_t body = full_scrape(&e, "X-Prometheus-Scrape-Timeout-Seconds: 3\r\n", &s0);
    if (accept) /* the body of the format asked for */
        body = full_scrape(&e, hold, NULL), s0++;
    double hwm0 = proc_status(e.pid, "VmHWM");
    int fd[20], st[20];
    for (int i = 0; i < 20; i++)
        fd[i] = stalled_client(e.port, hold, &st[i]);
    int ok = 0;
    for (int i = 0; i < 20; i++)
        ok += (st[i] = read_status(fd[i])) == 200;
    cr_expect_eq(ok, 20, "%d of 20 concurrent scrapes served (first status %d, last %d)", ok, st[0],
                 st[19]);
    double hwm = proc_status(e.pid, "VmHWM");
    for (int i = 0; i < 20; i++)
        close(fd[i]);
    ep_cmd(&cb, NULL, "release Slow");
    double s1;
    full_scrape(&e, NULL, &s1);
    cr_expect_eq(s1, s0 + 2, "20 concurrent requests made %g collections, not 1", s1 - s0 - 1);
    cr_log_info("body %.1f MB; peak %.1f MB before, %.1f MB with 20 stalled clients",
                (double)body / MB, hwm0 / MB, hwm / MB);
    cr_expect_leq(hwm - hwm0, 2.0 * (double)body + 16 * MB,
                  "20 clients of one collection raised the peak by %.1f MB (a body is %.1f MB)",
                  (hwm - hwm0) / MB, (double)body / MB);
    ex_stop(&e);
    ep_stop(&cb);
    ep_stop(&p);
}

Test(exporter_memory, concurrent_scrapes_share_one_body)
{
    share_one_body(NULL);
}

/* The same for the protobuf format (issue 27): its requests share their
 * own collection. */
Test(exporter_memory, concurrent_protobuf_scrapes_share_one_body)
{
    share_one_body(EX_PROTO_ACCEPT);
}

/* 8 clients in turn that do not read, each its own collection: when they
 * have gone, the exporter's memory is back within 16 MB of what it was
 * after one scrape. The old exporter kept four bodies in a pool. */
Test(exporter_memory, memory_returned_after_load)
{
    tu_child p;
    big_provider(&p);
    exporter e;
    ex_start(&e, NULL);
    size_t body = full_scrape(&e, NULL, NULL);
    full_scrape(&e, NULL, NULL);
    double rss0 = proc_status(e.pid, "VmRSS");
    int fd[8], st;
    for (int i = 0; i < 8; i++) {
        fd[i] = stalled_client(e.port, NULL, &st);
        cr_expect_eq(read_status(fd[i]), 200, "client %d", i);
    }
    double loaded = proc_status(e.pid, "VmRSS");
    for (int i = 0; i < 8; i++)
        close(fd[i]);
    /* The exporter frees a body when libmicrohttpd has closed its
     * connection: poll its RSS, with a deadline. */
    long long deadline = tu_now_ms() + 15000;
    double rss = loaded;
    while ((rss = proc_status(e.pid, "VmRSS")) > rss0 + 16 * MB && tu_now_ms() < deadline) {
        struct timespec ts = {0, 50 * 1000 * 1000}; /* polling /proc: no event to wait on */
        nanosleep(&ts, NULL);
    }
    cr_log_info("body %.1f MB; RSS %.1f MB after a scrape, %.1f MB with 8 stalled clients, %.1f "
                "MB after they left",
                (double)body / MB, rss0 / MB, loaded / MB, rss / MB);
    cr_expect_leq(rss, rss0 + 16 * MB, "%.1f MB still held after the clients left",
                  (rss - rss0) / MB);
    ex_stop(&e);
    ep_stop(&p);
}

/* With --web.max-response-memory=32MB, 10 clients in turn that do not
 * read: each is served, and to make room the responses sending longest
 * are cut (their connections closed, counted as cause="memory"), so the
 * exporter's peak stays within the limit plus about two bodies; the last
 * clients' responses are still open. The old exporter held every body. */
Test(exporter_memory, response_memory_limit)
{
    tu_child p;
    big_provider(&p);
    exporter e;
    const char *args[] = {"--web.max-response-memory=32MB", NULL};
    ex_start(&e, args);
    size_t body = full_scrape(&e, NULL, NULL);
    double hwm0 = proc_status(e.pid, "VmHWM");
    int fd[10], st, ok = 0;
    for (int i = 0; i < 10; i++) {
        fd[i] = stalled_client(e.port, NULL, &st);
        ok += read_status(fd[i]) == 200;
    }
    double hwm = proc_status(e.pid, "VmHWM");
    /* Which were cut: read each until it ends (EOF or reset: cut, with no
     * more than the socket buffers held) or until it has delivered half a
     * body (not cut: the exporter is still sending it whole). A poll that
     * does not wait lost the race with the exporter's close on a loaded
     * machine; each read here waits, with a deadline. */
    int cut = 0;
    for (int i = 0; i < 10; i++) {
        char b[65536];
        size_t got = 0;
        long long deadline = tu_now_ms() + 20000;
        for (;;) {
            struct pollfd pf = {fd[i], POLLIN, 0};
            long long left = deadline - tu_now_ms();
            cr_assert(left > 0 && poll(&pf, 1, (int)left) > 0,
                      "response %d neither ended nor went on after %zu bytes", i, got);
            ssize_t n = read(fd[i], b, sizeof b);
            if (n <= 0) {
                cut++;
                break;
            }
            if ((got += (size_t)n) >= body / 2)
                break;
        }
    }
    for (int i = 0; i < 10; i++)
        close(fd[i]);
    cr_log_info("body %.1f MB: %d served, %d cut; peak %.1f MB, was %.1f MB", (double)body / MB, ok,
                cut, hwm / MB, hwm0 / MB);
    cr_expect_eq(ok, 10, "%d of 10 served", ok);
    cr_expect_geq(cut, 5, "responses cut to make room: %d", cut);
    cr_expect_leq(hwm - hwm0, 32 * MB + 2.0 * (double)body + 16 * MB,
                  "the peak grew by %.1f MB (limit 32 MB, a body %.1f MB)", (hwm - hwm0) / MB,
                  (double)body / MB);
    http_resp r;
    cr_assert_eq(http_get(e.port, "/metrics", NULL, &r), 200);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"memory\"}"), 5);
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

/* Clients that send a scrape and then stall, holding all of
 * --web.max-response-memory, do not keep an honest scraper out: its
 * scrape is served, and the stalled responses waiting longest are cut
 * (counted as cause="memory") to make room, the peak staying within the
 * limit plus about two bodies. The stalled clients and the scraper ask for
 * `stalled` and `honest` (Accept headers): the text formats, or the
 * protobuf one (issue 27), whose bodies count against the same limit. */
static void stalled_readers(const char *stalled, const char *honest)
{
    tu_child p;
    big_provider(&p);
    exporter e;
    const char *args[] = {"--web.max-response-memory=32MB", NULL};
    ex_start(&e, args);
    size_t body = full_scrape(&e, NULL, NULL), proto = full_scrape(&e, EX_PROTO_ACCEPT, NULL);
    body = proto > body ? proto : body;
    double hwm0 = proc_status(e.pid, "VmHWM");
    int fd[6], st;
    for (int i = 0; i < 6; i++) {
        fd[i] = stalled_client(e.port, stalled, &st);
        read_status(fd[i]);
    }
    http_resp r;
    int code = http_request(e.port, "GET", "/metrics", honest, 30000, &r);
    cr_expect_eq(code, 200, "an honest scrape got %d while stalled clients held the memory", code);
    http_free(&r);
    cr_assert_eq(http_request(e.port, "GET", "/metrics", EX_PROM_ACCEPT, 30000, &r), 200);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"memory\"}"), 1);
    http_free(&r);
    double hwm = proc_status(e.pid, "VmHWM");
    cr_log_info("body %.1f MB; peak %.1f MB, was %.1f MB", (double)body / MB, hwm / MB, hwm0 / MB);
    cr_expect_leq(hwm - hwm0, 32 * MB + 2.0 * (double)body + 16 * MB,
                  "the peak grew by %.1f MB (limit 32 MB, a body %.1f MB)", (hwm - hwm0) / MB,
                  (double)body / MB);
    for (int i = 0; i < 6; i++)
        close(fd[i]);
    ex_stop(&e);
    ep_stop(&p);
}

Test(exporter_memory, stalled_readers_do_not_lock_out_scrapes)
{
    stalled_readers(NULL, EX_PROM_ACCEPT);
}

Test(exporter_memory, stalled_protobuf_readers_do_not_lock_out_scrapes)
{
    stalled_readers(EX_PROTO_ACCEPT, EX_PROM_ACCEPT);
    stalled_readers(NULL, EX_PROTO_ACCEPT);
}
