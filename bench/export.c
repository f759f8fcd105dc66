/* SPDX-License-Identifier: MIT */
/*
 * bench/export.c - pcw-exporter (tools/pcw-exporter), one scrape.
 *
 *   export/scrape/<instances>/<counters>
 *       end to end, as Prometheus sees it: GET /metrics from a pcw-exporter
 *       process over loopback, plain text (no gzip), on a kept-alive
 *       connection, until the whole body is read. The exporter runs on
 *       BU_CPU_MAIN, this client on BU_CPU_OTHER (beside the idle
 *       provider): a scraper is not on the exporter's CPU.
 *   export/format/<instances>/<counters>
 *       the baseline: the same scrape without HTTP - collector_scrape in
 *       this process into a reused buffer (catch up with the providers,
 *       collect, write every series and the exporter's own metrics).
 *   export/scrape_gzip/100000/1
 *       the scrape as Prometheus asks for it by default: gzip-compressed
 *       (ISA-L's igzip, level 1: tools/pcw-exporter/gzip.c); the body read
 *       is the compressed one.
 *   export/scrape_proto/<instances>/<counters>
 *       export/scrape in the protobuf format (length-delimited
 *       MetricFamily messages, as a Prometheus with native histograms
 *       asks for it), no gzip: its baseline is export/scrape.
 *   export/collect/<instances>/<counters>
 *       what that includes of the query layer: pcw_pdh_collect of
 *       "\Bench(*)\*" alone. format - collect is the writing; scrape -
 *       format is HTTP: copying the text to the socket, loopback TCP,
 *       and reading it on the other side.
 *
 * The scrapes report exporter_cpu_ns: the exporter process's CPU time per
 * scrape (all its threads: clock_getcpuclockid), beside the wall time the
 * client waits (the figure) and the client's own CPU time.
 *
 * The provider is bu_provider_get's: "Bench", instances x counters
 * 8-byte PERF_COUNTER_LARGE_RAWCOUNT values, so a series per value. Every
 * figure is primed (two scrapes) before timing: the steady state, in which
 * labels are built already and nothing is allocated.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tools/pcw-exporter/collector.h"
#include "../tools/pcw-exporter/log.h"
#include "benchutil.h"
#include "pcw/pdh.h"

/* ---- the exporter process ------------------------------------------------ */

static pid_t exporter_pid = -1;
static int exporter_port;

static void exporter_stop(void)
{
    if (exporter_pid > 0) {
        kill(exporter_pid, SIGTERM);
        waitpid(exporter_pid, NULL, 0);
    }
    exporter_pid = -1;
}

/* $PCW_EXPORTER, else pcw-exporter beside this binary's build folder
 * ($(BUILD)/bench/pcw_bench -> $(BUILD)/pcw-exporter). */
static const char *exporter_path(void)
{
    static char path[PATH_MAX];
    const char *env = getenv("PCW_EXPORTER");
    if (env && *env)
        return env;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return "pcw-exporter";
    self[n] = 0;
    snprintf(path, sizeof path, "%s/pcw-exporter", dirname(dirname(self)));
    return path;
}

/* Start the exporter (once), pinned to BU_CPU_MAIN; its port. 0 or -1. */
static int exporter_start(void)
{
    if (exporter_pid > 0)
        return 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    const char *path = exporter_path();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlives the suite */
        bu_pin(BU_CPU_MAIN);
        dup2(fds[1], 2);
        execl(path, "pcw-exporter", "--web.listen-address=127.0.0.1:0", "--log.level=info",
              (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    exporter_pid = pid;
    atexit(exporter_stop);
    /* Its log: "... msg="Listening on" address=127.0.0.1:PORT ...". */
    char buf[4096];
    size_t len = 0;
    uint64_t deadline = bu_now_ns() + 10000000000ull;
    while (bu_now_ns() < deadline && len < sizeof buf - 1) {
        struct pollfd p = {fds[0], POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t r = read(fds[0], buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = 0;
        const char *at = strstr(buf, "address=127.0.0.1:");
        if (at && strchr(at, '\n')) {
            exporter_port = atoi(at + 18);
            break;
        }
    }
    /* The rest of its log goes nowhere: it logs only when countersets come
     * and go, and a full pipe would block it. */
    close(fds[0]);
    if (!exporter_port) {
        fprintf(stderr, "pcw_bench: %s did not start: %s\n", path, buf);
        exporter_stop();
        return -1;
    }
    return 0;
}

/* The exporter's CPU time so far (every thread's, user and system), in
 * ns; 0 when the kernel does not tell. */
static double exporter_cpu_ns(void)
{
    clockid_t clk;
    struct timespec ts;
    if (clock_getcpuclockid(exporter_pid, &clk) != 0 || clock_gettime(clk, &ts) != 0)
        return 0;
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- a minimal HTTP/1.1 client ------------------------------------------ */

typedef struct client {
    int fd;
    char *buf;
    size_t cap;
} client;

static int client_connect(client *c, int port)
{
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return connect(c->fd, (struct sockaddr *)&a, sizeof a);
}

/* What a client asks for. */
enum { GET_TEXT, GET_GZIP, GET_PROTO };

/* GET /metrics as `what` says; the body's length, or -1. */
static long client_get(client *c, int what)
{
    static const char *const reqs[] = {
        [GET_TEXT] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Accept: text/plain;version=0.0.4\r\n\r\n",
        [GET_GZIP] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     "Accept: text/plain;version=0.0.4\r\n"
                     "Accept-Encoding: gzip\r\n\r\n",
        [GET_PROTO] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Accept: application/vnd.google.protobuf;"
                      "proto=io.prometheus.client.MetricFamily;encoding=delimited\r\n\r\n",
    };
    const char *rq = reqs[what];
    size_t rl = strlen(rq);
    if (write(c->fd, rq, rl) != (ssize_t)rl)
        return -1;
    size_t len = 0, head = 0;
    long body = -1;
    for (;;) {
        if (len == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 1 << 20;
            char *b = realloc(c->buf, cap);
            if (!b)
                return -1;
            c->buf = b, c->cap = cap;
        }
        ssize_t r = read(c->fd, c->buf + len, c->cap - len);
        if (r <= 0)
            return -1;
        len += (size_t)r;
        if (!head) {
            char *end = memmem(c->buf, len, "\r\n\r\n", 4);
            if (!end)
                continue;
            head = (size_t)(end - c->buf) + 4;
            *end = 0;
            if (strncmp(c->buf, "HTTP/1.1 200", 12) != 0)
                return -1;
            /* Not the text format measured in the protobuf's place. */
            if (what == GET_PROTO &&
                !strcasestr(c->buf, "\r\nContent-Type: application/vnd.google.protobuf"))
                return -1;
            const char *cl = strcasestr(c->buf, "\r\nContent-Length:");
            if (!cl)
                return -1;
            body = atol(cl + 17);
        }
        if (len >= head + (size_t)body)
            return body;
    }
}

/* ---- the benchmarks ------------------------------------------------------ */

enum { B_SCRAPE, B_FORMAT, B_COLLECT, B_SCRAPE_GZIP, B_SCRAPE_PROTO };

static void bm_export(gb_state *st, void *arg)
{
    int kind = (int)(intptr_t)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    /* Only this shape's provider: the exporter exports every provider. */
    bu_provider_stop_all();
    if (!bu_provider_get(n, c)) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    log_setup(LOG_WARN, 0);
    double bytes = 0;
    int bad = 0;
    if (kind == B_SCRAPE || kind == B_SCRAPE_GZIP || kind == B_SCRAPE_PROTO) {
        int what = kind == B_SCRAPE_GZIP ? GET_GZIP : kind == B_SCRAPE_PROTO ? GET_PROTO : GET_TEXT;
        int gz = what == GET_GZIP;
        if (exporter_start() != 0) {
            gb_skip_with_error(st, "cannot start pcw-exporter (make build/pcw-exporter)");
            return;
        }
        bu_pin(BU_CPU_OTHER);
        client cl = {-1, NULL, 0};
        long got = -1;
        if (client_connect(&cl, exporter_port) != 0 || (got = client_get(&cl, what)) < 0 ||
            (got = client_get(&cl, what)) < 0) {
            gb_skip_with_error(st, "the first scrapes failed");
        } else {
            bytes = (double)got;
            double cpu0 = exporter_cpu_ns();
            /* The body's length varies only with the exporter's own
             * metrics (a duration, a count). */
            while (gb_keep_running(st))
                bad |= labs(client_get(&cl, what) - got) > (gz ? got / 10 : 256);
            int64_t it = gb_state_iterations(st);
            if (cpu0 && it)
                gb_counter(st, "exporter_cpu_ns", (exporter_cpu_ns() - cpu0) / (double)it);
        }
        if (cl.fd >= 0)
            close(cl.fd);
        free(cl.buf);
        bu_pin(BU_CPU_MAIN);
    } else if (kind == B_FORMAT) {
        collector *coll;
        collector_options o = {0};
        if (collector_open(&coll, &o) != PCW_OK) {
            gb_skip_with_error(st, "collector_open");
            return;
        }
        ebuf out = {0};
        for (int i = 0; i < 2; i++) {
            out.len = 0;
            bad |= collector_scrape(coll, &out, EXPO_TEXT, mono_ns() + 10000000000ull) != 0;
        }
        bytes = (double)out.len;
        while (gb_keep_running(st)) {
            out.len = 0;
            bad |= collector_scrape(coll, &out, EXPO_TEXT, mono_ns() + 10000000000ull) != 0;
        }
        eb_free(&out);
        collector_close(coll);
    } else {
        pcw_pdh *q;
        pcw_pdh_counter *h;
        pcw_path_error err;
        if (pcw_pdh_open(&q, NULL) != PCW_OK ||
            pcw_pdh_add_counter(q, "\\Bench(*)\\*", &h, &err) != PCW_OK) {
            gb_skip_with_error(st, "pcw_pdh_open / add");
            return;
        }
        bad |= pcw_pdh_collect(q, NULL) != PCW_OK || pcw_pdh_collect(q, NULL) != PCW_OK;
        while (gb_keep_running(st))
            bad |= pcw_pdh_collect(q, NULL) != PCW_OK;
        bad |= pcw_pdh_raw_count(h) != (size_t)n;
        pcw_pdh_close(q);
    }
    if (bad)
        gb_skip_with_error(st, "a scrape failed or changed size");
    int64_t it = gb_state_iterations(st);
    gb_set_items_processed(st, it * n * c);
    if (bytes)
        gb_counter(st, "bytes", bytes);
    gb_counter(st, "series", (double)(n * c));
}

void bench_export_register(void)
{
    static const int64_t shapes[][2] = {{100000, 1}, {10000, 16}};
    static const char *const names[] = {"export/scrape", "export/format", "export/collect",
                                        "export/scrape_gzip", "export/scrape_proto"};
    for (int k = 0; k < 5; k++) {
        gb_bench *b = gb_register(names[k], bm_export, (void *)(intptr_t)k);
        gb_use_real_time(b);
        gb_unit_ns(b);
        for (size_t i = 0; i < (k == B_SCRAPE_GZIP ? 1 : sizeof shapes / sizeof shapes[0]); i++)
            gb_args(b, shapes[i], 2);
    }
}
