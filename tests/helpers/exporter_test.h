/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/exporter_test.h - what the pcw-exporter tests share
 * (tests/test_exporter*.c): the provider they drive
 * (tests/helpers/exporter_provider.c), the exporter process, a small
 * HTTP/1.1 client, and running a command on a file. Include after
 * testutil.h and criterion.h.
 *
 * Processes are started with their log in a file of the test's private
 * root, and stopped by pid (SIGTERM, then SIGKILL after a deadline).
 * Waits poll an observable condition (a log line, a reply) with a
 * deadline; none is a bare sleep.
 */
#ifndef PCW_TESTS_EXPORTER_TEST_H
#define PCW_TESTS_EXPORTER_TEST_H

#include <arpa/inet.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* ---- the provider ----------------------------------------------------------- */

/* Start exporter_provider with args (NULL-terminated); wait for "ready". */
static inline void ep_start_args(tu_child *c, const char *const *args)
{
    cr_assert_eq(tu_spawn(c, "exporter_provider", args), 0);
    char line[256];
    cr_assert(tu_readline(c, line, sizeof line, 10000) > 0, "provider did not start");
    cr_assert(strncmp(line, "ready", 5) == 0, "provider: %s", line);
}

static inline void ep_start(tu_child *c, const char *name)
{
    const char *args[3] = {"--name", name, NULL};
    ep_start_args(c, args);
}

/* Send a command; assert "ok"; the rest of the reply into out (may be
 * NULL). */
__attribute__((format(printf, 3, 4))) static inline void ep_cmd(tu_child *c, char *out,
                                                                const char *fmt, ...)
{
    char buf[1024], reply[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cr_assert(tu_command(c, reply, sizeof reply, buf) > 0, "no reply to %s", buf);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", buf, reply);
    if (out)
        strcpy(out, reply[2] ? reply + 3 : "");
}

static inline void ep_stop(tu_child *c)
{
    tu_send(c, "quit");
    tu_finish(c, 10000);
}

/* ---- files and commands --------------------------------------------------- */

static inline char *ex_slurp(const char *path, size_t *len)
{
    size_t n = 0;
    unsigned char *b = tu_read_file(path, 64u << 20, &n);
    if (!b)
        return NULL;
    char *s = realloc(b, n + 1);
    if (!s) {
        free(b);
        return NULL;
    }
    s[n] = 0;
    if (len)
        *len = n;
    return s;
}

/* Run a shell command; its exit status (-1 if it did not exit). */
__attribute__((format(printf, 1, 2))) static inline int ex_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A path in the test's private root. */
static inline const char *ex_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tu_root, name);
    return buf;
}

/* ---- the exporter --------------------------------------------------------- */

typedef struct exporter {
    pid_t pid;
    int port;
    char log[320];
} exporter;

/* A command the exporter is started under, NULL-terminated, e.g. setpriv
 * with another uid ("setpriv", ..., "--"); NULL: none. */
static const char *const *ex_wrap;

/* Start build/pcw-exporter with args (NULL-terminated) and a listen
 * address of 127.0.0.1:0 unless args give one; wait for its
 * "Listening on" line (port) - or, when `expect_fail`, for it to exit,
 * returning its status. */
static inline int ex_start_status(exporter *e, const char *const *args, int expect_fail)
{
    static int serial;
    memset(e, 0, sizeof *e);
    snprintf(e->log, sizeof e->log, "%s/exporter-%d.log", tu_root, serial++);
    const char *build = getenv("PCW_BUILD");
    char bin[PATH_MAX];
    snprintf(bin, sizeof bin, "%s/pcw-exporter", build && *build ? build : PCW_BUILD_DIR);
    const char *argv[64];
    size_t n = 0, has_listen = 0;
    for (size_t i = 0; ex_wrap && ex_wrap[i] && n < 16; i++)
        argv[n++] = ex_wrap[i];
    argv[n++] = bin;
    for (size_t i = 0; args && args[i] && n < 60; i++) {
        has_listen |= strncmp(args[i], "--web.listen-address", 20) == 0;
        argv[n++] = args[i];
    }
    if (!has_listen)
        argv[n++] = "--web.listen-address=127.0.0.1:0";
    argv[n] = NULL;
    e->pid = tu_fork(); /* dies with the test, however it ends */
    cr_assert(e->pid >= 0);
    if (e->pid == 0) {
        int fd = open(e->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        dup2(fd, 2);
        int nul = open("/dev/null", O_RDWR);
        dup2(nul, 0), dup2(nul, 1);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    long long deadline = tu_now_ms() + 20000;
    for (;;) {
        int st;
        if (waitpid(e->pid, &st, WNOHANG) == e->pid) {
            e->pid = -1;
            cr_assert(expect_fail, "pcw-exporter exited: %s", ex_slurp(e->log, NULL));
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        }
        if (!expect_fail) {
            char *log = ex_slurp(e->log, NULL);
            const char *at = log ? strstr(log, "msg=\"Listening on\" address=") : NULL;
            if (at && strchr(at, '\n')) {
                const char *colon = strchr(at + 27, ']');
                colon = colon ? colon + 1 : strchr(at + 27, ':');
                e->port = atoi(colon + 1);
                free(log);
                return 0;
            }
            free(log);
        }
        cr_assert(tu_now_ms() < deadline, "pcw-exporter did not start");
        struct timespec ts = {0, 5 * 1000 * 1000}; /* polling its log: no fd to wait on */
        nanosleep(&ts, NULL);
    }
}

static inline void ex_start(exporter *e, const char *const *args)
{
    ex_start_status(e, args, 0);
}

/* SIGTERM; assert it exits 0 (a clean shutdown) within 10 s. */
static inline void ex_stop(exporter *e)
{
    if (e->pid <= 0)
        return;
    kill(e->pid, SIGTERM);
    long long deadline = tu_now_ms() + 10000;
    int st = 0;
    while (waitpid(e->pid, &st, WNOHANG) != e->pid) {
        if (tu_now_ms() > deadline) {
            kill(e->pid, SIGKILL);
            waitpid(e->pid, &st, 0);
            cr_assert_fail("pcw-exporter did not stop on SIGTERM");
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    e->pid = -1;
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pcw-exporter exited with status %d", st);
}

/* ---- HTTP ----------------------------------------------------------------- */

typedef struct http_resp {
    int status;
    char *head; /* status line and headers, NUL-terminated */
    char *body; /* NUL-terminated (may hold NULs before) */
    size_t body_len;
} http_resp;

static inline void http_free(http_resp *r)
{
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

/* A header's value ("" when absent), into buf. */
static inline const char *http_header(const http_resp *r, const char *name, char *buf, size_t cap)
{
    buf[0] = 0;
    size_t nl = strlen(name);
    for (const char *p = strstr(r->head, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
            const char *v = p + 3 + nl;
            while (*v == ' ')
                v++;
            const char *end = strstr(v, "\r\n");
            size_t n = end ? (size_t)(end - v) : strlen(v);
            snprintf(buf, cap, "%.*s", (int)n, v);
            break;
        }
    }
    return buf;
}

/* A TCP connection to 127.0.0.1:port from the loopback address `from`
 * ("127.0.0.2": the tests tell clients apart by address; NULL: any), or
 * -1. */
static inline int ex_connect(const char *from, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    if (fd >= 0 && from) {
        inet_pton(AF_INET, from, &a.sin_addr);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            close(fd);
            return -1;
        }
    }
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* One request on a fresh connection (Connection: close) from the
 * loopback address `from` (NULL: any); extra header lines
 * ("Name: value\r\n"...) may be NULL. Returns the status, or -1 when the
 * connection failed or nothing came within timeout_ms. */
static inline int http_request_from(const char *from, int port, const char *method,
                                    const char *path, const char *extra, int timeout_ms,
                                    http_resp *r)
{
    memset(r, 0, sizeof *r);
    r->status = -1;
    int fd = ex_connect(from, port);
    if (fd < 0)
        return -1;
    char req[4096];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sConnection: close\r\n\r\n", method,
                     path, extra ? extra : "");
    if (write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    long long deadline = tu_now_ms() + timeout_ms;
    for (;;) {
        long long left = deadline - tu_now_ms();
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        if (len + 1 >= cap)
            buf = realloc(buf, cap *= 2);
        ssize_t got = read(fd, buf + len, cap - len - 1);
        if (got <= 0) {
            if (got == 0) {
                buf[len] = 0;
                char *end = memmem(buf, len, "\r\n\r\n", 4);
                if (end) {
                    size_t hl = (size_t)(end - buf);
                    r->head = strndup(buf, hl + 2);
                    r->body_len = len - hl - 4;
                    r->body = malloc(r->body_len + 1);
                    memcpy(r->body, end + 4, r->body_len);
                    r->body[r->body_len] = 0;
                    r->status = atoi(buf + 9);
                }
            }
            break;
        }
        len += (size_t)got;
    }
    free(buf);
    close(fd);
    return r->status;
}

static inline int http_request(int port, const char *method, const char *path, const char *extra,
                               int timeout_ms, http_resp *r)
{
    return http_request_from(NULL, port, method, path, extra, timeout_ms, r);
}

static inline int http_get(int port, const char *path, const char *extra, http_resp *r)
{
    return http_request(port, "GET", path, extra, 30000, r);
}

/* ---- slow clients ------------------------------------------------------ */

/* Connections an attack opens per round: a burst the size of the
 * exporter's slots between an honest client's connect and its request
 * could shed it (docs/exporter.md, "Slow clients"); a steady churn of
 * slow clients is the attack tested. */
#define EX_ATTACK_RECONNECTS 10

/* An attack of `n` connections from the loopback address `from` that
 * never finish their request: each sends `prefix` (a partial header, a
 * partial TLS record, or nothing) at connect, then one more byte every
 * period_ms - never inactive long - and is opened again when the exporter
 * closes it (at most EX_ATTACK_RECONNECTS a round, after the first). It runs in a thread until
 * ex_attack_stop or until_ms. The pacing is the attack's, not a wait for anything. */
typedef struct ex_attack {
    int port, n, period_ms;
    const char *from, *prefix;
    size_t prefix_len;
    long long until_ms;
    int fds[128];
    atomic_int stop;
    atomic_int closed; /* connections the exporter closed */
    atomic_int opened;
    pthread_t th;
} ex_attack;

static inline void *ex_attack_main(void *arg)
{
    ex_attack *a = arg;
    for (int i = 0; i < a->n; i++)
        a->fds[i] = -1;
    while (!atomic_load(&a->stop) && tu_now_ms() < a->until_ms) {
        int reconnects = 0;
        for (int i = 0; i < a->n; i++) {
            if (a->fds[i] < 0) {
                if (atomic_load(&a->opened) >= a->n && reconnects++ >= EX_ATTACK_RECONNECTS)
                    continue;
                a->fds[i] = ex_connect(a->from, a->port);
                if (a->fds[i] < 0)
                    continue;
                atomic_fetch_add(&a->opened, 1);
                if (a->prefix_len)
                    (void)send(a->fds[i], a->prefix, a->prefix_len, MSG_NOSIGNAL);
                continue;
            }
            struct pollfd p = {a->fds[i], POLLIN, 0};
            char b[512];
            int gone = poll(&p, 1, 0) > 0 && read(a->fds[i], b, sizeof b) <= 0;
            if (!gone && a->prefix_len && send(a->fds[i], "a", 1, MSG_NOSIGNAL) != 1)
                gone = 1;
            if (gone) {
                close(a->fds[i]);
                a->fds[i] = -1;
                atomic_fetch_add(&a->closed, 1);
            }
        }
        struct timespec ts = {0, (long)a->period_ms * 1000000L}; /* the attack's pace */
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < a->n; i++)
        if (a->fds[i] >= 0)
            close(a->fds[i]);
    return NULL;
}

static inline void ex_attack_start(ex_attack *a, int port, const char *from, int n,
                                   const char *prefix, size_t prefix_len, int period_ms, int max_ms)
{
    memset(a, 0, sizeof *a);
    cr_assert(n <= (int)(sizeof a->fds / sizeof a->fds[0]));
    a->port = port, a->from = from, a->n = n, a->period_ms = period_ms;
    a->prefix = prefix, a->prefix_len = prefix_len;
    a->until_ms = tu_now_ms() + max_ms;
    cr_assert_eq(pthread_create(&a->th, NULL, ex_attack_main, a), 0);
}

static inline void ex_attack_stop(ex_attack *a)
{
    atomic_store(&a->stop, 1);
    pthread_join(a->th, NULL);
}

/* The partial request line and header a slow client sends first. */
#define EX_SLOW_HEADER "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "

/* Prometheus' Accept header (its scrape_protocols default). */
#define EX_PROM_ACCEPT                                                                             \
    "Accept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;"             \
    "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"

/* The media type of the protobuf exposition, as Prometheus asks for it
 * with native histograms (docs/exporter.md, "Routes"), and the header. */
#define EX_PROTO_TYPE                                                                              \
    "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
#define EX_PROTO_ACCEPT "Accept: " EX_PROTO_TYPE "\r\n"

/* The value of the first series line that starts with `prefix` (a metric
 * name with its labels), or NAN. */
static inline double ex_value(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, prefix, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return NAN;
}

/* Does text contain this whole line? */
static inline int ex_has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == 0))
            return 1;
    return 0;
}

/* ---- checking an exposition ---------------------------------------------- */

/* Write body to a file of the root; its path into buf. */
static inline const char *ex_save(const http_resp *r, const char *name, char *buf, size_t cap)
{
    ex_path(buf, cap, name);
    cr_assert_eq(tu_write_file(buf, r->body, r->body_len, 0600), 0);
    return buf;
}

/* promtool check metrics passes on the text format. */
static inline void ex_promtool_ok(const http_resp *r, const char *what)
{
    char f[400], out[400];
    ex_save(r, "metrics.txt", f, sizeof f);
    ex_path(out, sizeof out, "promtool.out");
    int rc = ex_sh("promtool check metrics < %s > %s 2>&1", f, out);
    char *msg = ex_slurp(out, NULL);
    cr_expect_eq(rc, 0, "%s: promtool check metrics: %s", what, msg ? msg : "?");
    free(msg);
}

/* The OpenMetrics format passes the Prometheus client library's strict
 * OpenMetrics parser, and promtool - whose parser reads the text format
 * only - finds nothing but what OpenMetrics names differently: a counter
 * family "x" (its HELP and TYPE) whose samples are "x_total". */
static inline void ex_openmetrics_ok(const http_resp *r, const char *what)
{
    char f[400], out[400];
    ex_save(r, "metrics.om", f, sizeof f);
    ex_path(out, sizeof out, "om.out");
    int rc = ex_sh("/usr/bin/python3 -c 'import sys; from prometheus_client.openmetrics.parser "
                   "import text_string_to_metric_families as p; "
                   "n = len(list(p(open(sys.argv[1], encoding=\"utf-8\").read()))); "
                   "print(n, \"families\")' %s > %s 2>&1",
                   f, out);
    char *msg = ex_slurp(out, NULL);
    cr_expect_eq(rc, 0, "%s: the OpenMetrics parser refused it: %s", what, msg ? msg : "?");
    free(msg);
    rc = ex_sh("promtool check metrics < %s > %s 2>&1", f, out);
    msg = ex_slurp(out, NULL);
    cr_assert(msg);
    for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
        char name[256] = "";
        size_t n = 0;
        if (sscanf(line, "%255s no help text", name) != 1 || !strstr(line, "no help text") ||
            (n = strlen(name)) <= 6 || strcmp(name + n - 6, "_total") != 0) {
            cr_expect_fail("%s: promtool: %s", what, line);
            continue;
        }
        name[n - 6] = 0;
        char want[320];
        snprintf(want, sizeof want, "# TYPE %s counter", name);
        cr_expect(strstr(r->body, want), "%s: promtool: %s (not an OpenMetrics counter)", what,
                  line);
    }
    free(msg);
}

#endif /* PCW_TESTS_EXPORTER_TEST_H */
