/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_tls.c - pcw-exporter's --web.config.file: TLS
 * (libmicrohttpd over GnuTLS, a self-signed certificate made here with
 * openssl), basic authentication (bcrypt hashes, libxcrypt), client
 * certificates, security headers. The client is curl.
 *
 * The bcrypt hash below is of the password "s3cret pass" (cost 10, made
 * with crypt(3)); the same hash with the $2y$ prefix htpasswd -B writes is
 * tested too.
 */
#define _GNU_SOURCE 1 /* unshare */
#include "testutil.h"

#include <criterion/criterion.h>
#include <sched.h>

#include "helpers/exporter_test.h"

TestSuite(exporter_tls, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

#define HASH_2B "$2b$10$Umu4BabAQWgnzsC4SzVIjuNBOmqXxw7j5SbqXxr1pYm76DR/NGKsS"
#define HASH_2Y "$2y$10$Umu4BabAQWgnzsC4SzVIjuNBOmqXxw7j5SbqXxr1pYm76DR/NGKsS"
#define PASS    "s3cret pass"

/* A self-signed certificate and key for 127.0.0.1: <root>/NAME.crt,
 * NAME.key. */
static void make_cert(const char *name)
{
    int rc = ex_sh("cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                   "-nodes -keyout %s.key -out %s.crt -days 2 -subj /CN=127.0.0.1 "
                   "-addext subjectAltName=IP:127.0.0.1 > %s.openssl.log 2>&1",
                   tu_root, name, name, name);
    cr_assert_eq(rc, 0, "openssl could not make a certificate");
}

/* Write web.yml (relative paths resolve against its folder); start the
 * exporter with it and the arguments `more` (NULL-terminated; may be
 * NULL). */
static void start_with_args(exporter *e, const char *yml, const char *const *more)
{
    char path[400], arg[440];
    ex_path(path, sizeof path, "web.yml");
    cr_assert_eq(tu_write_file(path, yml, strlen(yml), 0600), 0);
    snprintf(arg, sizeof arg, "--web.config.file=%s", path);
    const char *args[16] = {arg};
    for (size_t i = 0; more && more[i] && i < 14; i++)
        args[i + 1] = more[i];
    ex_start(e, args);
}

static void start_with(exporter *e, const char *yml)
{
    start_with_args(e, yml, NULL);
}

/* curl's HTTP status (0 when the connection or handshake failed); its
 * headers and body into <root>/curl.head and curl.body. */
__attribute__((format(printf, 2, 3))) static int curl(const exporter *e, const char *fmt, ...)
{
    char opts[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(opts, sizeof opts, fmt, ap);
    va_end(ap);
    char out[400];
    ex_path(out, sizeof out, "curl.code");
    ex_sh("cd %s && curl -s -m 20 -D curl.head -o curl.body -w '%%{http_code}' %s > %s 2>/dev/null",
          tu_root, opts, out);
    (void)e;
    char *code = ex_slurp(out, NULL);
    int c = code ? atoi(code) : 0;
    free(code);
    return c;
}

static char *root_file(const char *name)
{
    char p[400];
    return ex_slurp(ex_path(p, sizeof p, name), NULL);
}

Test(exporter_tls, tls_and_basic_auth)
{
    make_cert("server");
    exporter e;
    start_with(&e, "tls_server_config:\n"
                   "  cert_file: server.crt\n"
                   "  key_file: server.key\n"
                   "basic_auth_users:\n"
                   "  alice: " HASH_2B "\n"
                   "  bob: " HASH_2Y "\n");
    char *log = ex_slurp(e.log, NULL);
    cr_expect(log && strstr(log, "tls=true"), "%s", log);
    free(log);
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/metrics", e.port);
    /* No credentials, wrong ones, an unknown user: refused. */
    cr_expect_eq(curl(&e, "--cacert server.crt %s", url), 401);
    char *head = root_file("curl.head");
    cr_expect(head && strstr(head, "WWW-Authenticate: Basic realm=\"pcw-exporter\""), "%s", head);
    free(head);
    cr_expect_eq(curl(&e, "--cacert server.crt -u 'alice:wrong' %s", url), 401);
    cr_expect_eq(curl(&e, "--cacert server.crt -u 'mallory:" PASS "' %s", url), 401);
    /* The right ones: served, twice (the second from the verified cache),
     * for either hash prefix. */
    cr_expect_eq(curl(&e, "--cacert server.crt -u 'alice:" PASS "' %s", url), 200);
    cr_expect_eq(curl(&e, "--cacert server.crt -u 'alice:" PASS "' %s", url), 200);
    cr_expect_eq(curl(&e, "--cacert server.crt -u 'bob:" PASS "' %s", url), 200);
    char *body = root_file("curl.body");
    cr_assert(body);
    cr_expect_geq(ex_value(body, "pcw_exporter_errors_total{cause=\"auth\"}"), 3);
    free(body);
    /* The landing page is behind the same door. */
    snprintf(url, sizeof url, "https://127.0.0.1:%d/", e.port);
    cr_expect_eq(curl(&e, "--cacert server.crt %s", url), 401);
    /* Plain HTTP to the TLS port, and TLS older than 1.2: no answer. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", e.port);
    cr_expect_neq(curl(&e, "-u 'alice:" PASS "' %s", url), 200);
    snprintf(url, sizeof url, "https://127.0.0.1:%d/metrics", e.port);
    cr_expect_eq(
        curl(&e, "--cacert server.crt --tlsv1.0 --tls-max 1.1 -u 'alice:" PASS "' %s", url), 0,
        "TLS 1.1 accepted");
    /* A client that does not trust the certificate does not connect. */
    cr_expect_eq(curl(&e, "-u 'alice:" PASS "' %s", url), 0);
    ex_stop(&e);
}

Test(exporter_tls, basic_auth_without_tls_and_headers)
{
    exporter e;
    start_with(&e, "http_server_config:\n"
                   "  http2: false\n"
                   "  headers:\n"
                   "    X-Frame-Options: deny\n"
                   "    X-Content-Type-Options: nosniff\n"
                   "basic_auth_users:\n"
                   "  alice: " HASH_2B "\n");
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/metrics", e.port);
    cr_expect_eq(curl(&e, "%s", url), 401);
    cr_expect_eq(curl(&e, "-u 'alice:" PASS "' %s", url), 200);
    char *head = root_file("curl.head");
    cr_expect(head && strstr(head, "X-Frame-Options: deny"), "%s", head);
    cr_expect(head && strstr(head, "X-Content-Type-Options: nosniff"), "%s", head);
    free(head);
    ex_stop(&e);
}

Test(exporter_tls, client_certificates)
{
    make_cert("server");
    make_cert("client");
    make_cert("stranger");
    exporter e;
    start_with(&e, "tls_server_config:\n"
                   "  cert_file: server.crt\n"
                   "  key_file: server.key\n"
                   "  client_auth_type: RequireAndVerifyClientCert\n"
                   "  client_ca_file: client.crt\n"
                   "  min_version: TLS12\n"
                   "  max_version: TLS13\n");
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/metrics", e.port);
    int code = curl(&e, "--cacert server.crt %s", url);
    cr_expect(code == 403 || code == 0, "no client certificate: %d", code);
    code = curl(&e, "--cacert server.crt --cert stranger.crt --key stranger.key %s", url);
    cr_expect(code == 403 || code == 0, "a certificate the client CA did not sign: %d", code);
    cr_log_info("refused client certificates: HTTP %d", code);
    cr_expect_eq(curl(&e, "--cacert server.crt --cert client.crt --key client.key %s", url), 200);
    ex_stop(&e);
}

/* min_version and max_version reach GnuTLS' priorities. */
Test(exporter_tls, tls_versions)
{
    make_cert("server");
    exporter e;
    start_with(&e, "tls_server_config:\n"
                   "  cert_file: server.crt\n"
                   "  key_file: server.key\n"
                   "  min_version: TLS13\n");
    char url[128];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/metrics", e.port);
    cr_expect_eq(curl(&e, "--cacert server.crt --tls-max 1.2 %s", url), 0, "TLS 1.2 accepted");
    cr_expect_eq(curl(&e, "--cacert server.crt --tlsv1.3 %s", url), 200);
    ex_stop(&e);
    start_with(&e, "tls_server_config:\n"
                   "  cert_file: server.crt\n"
                   "  key_file: server.key\n"
                   "  max_version: TLS12\n");
    snprintf(url, sizeof url, "https://127.0.0.1:%d/metrics", e.port);
    cr_expect_eq(curl(&e, "--cacert server.crt --tlsv1.3 %s", url), 0, "TLS 1.3 accepted");
    cr_expect_eq(curl(&e, "--cacert server.crt --tls-max 1.2 %s", url), 200);
    ex_stop(&e);
}

/* A listen address that cannot be served says why: the port taken, an
 * address that is not this host's, or a key and certificate that do not
 * load (each checked on its own, before libmicrohttpd starts). */
Test(exporter_tls, listen_errors_say_which)
{
    char *log = NULL;
    exporter first, e;
    ex_start(&first, NULL);
    char arg[440];
    snprintf(arg, sizeof arg, "--web.listen-address=127.0.0.1:%d", first.port);
    const char *taken[] = {arg, NULL};
    cr_expect_eq(ex_start_status(&e, taken, 1), 1);
    log = ex_slurp(e.log, NULL);
    snprintf(arg, sizeof arg, "cannot listen on 127.0.0.1:%d: the address is in use", first.port);
    cr_expect(log && strstr(log, arg), "port taken: %s", log);
    cr_expect(log && !strstr(log, "TLS"), "port taken: %s", log);
    free(log);
    ex_stop(&first);
    /* 192.0.2.1 (TEST-NET-1) is no interface's address. */
    const char *foreign[] = {"--web.listen-address=192.0.2.1:0", NULL};
    cr_expect_eq(ex_start_status(&e, foreign, 1), 1);
    log = ex_slurp(e.log, NULL);
    cr_expect(log && strstr(log, "cannot listen on 192.0.2.1:0: not an address of this host"),
              "not local: %s", log);
    free(log);
    /* One certificate with the other's key; then a certificate that is not
     * PEM at all. */
    make_cert("one");
    make_cert("two");
    static const struct {
        const char *yml, *says;
    } tls[] = {
        {"tls_server_config:\n  cert_file: one.crt\n  key_file: two.key\n",
         "TLS certificate " /* root */},
        {"tls_server_config:\n  cert_file: web.yml\n  key_file: one.key\n", "TLS certificate "},
    };
    for (size_t i = 0; i < sizeof tls / sizeof tls[0]; i++) {
        char path[400], cfg[440];
        ex_path(path, sizeof path, "web.yml");
        cr_assert_eq(tu_write_file(path, tls[i].yml, strlen(tls[i].yml), 0600), 0);
        snprintf(cfg, sizeof cfg, "--web.config.file=%s", path);
        const char *args[] = {cfg, NULL};
        cr_expect_eq(ex_start_status(&e, args, 1), 1);
        log = ex_slurp(e.log, NULL);
        cr_expect(log && strstr(log, tls[i].says) && strstr(log, "do not load") &&
                      !strstr(log, "in use"),
                  "%s: %s", tls[i].yml, log);
        free(log);
    }
}

/* ---- basic authentication's cost and what it tells (issue 23, item 8) --- */

#define HASH_COST4  "$2b$04$jsi8UTN0VzgI6BTILz3D5umyfkuJOo.Vuwpdwd0u09ehHcoHNU4vS" /* PASS */
#define HASH_COST8  "$2b$08$kHsDAzHnBFcNyy6dcsGfjuk8jTHkZGAp19rmlSXTkq6j8xqq3Kxdq" /* PASS */
#define HASH_COST12 "$2b$12$tpEOg21Aaj3F//ZH02tKpO6NYV6FT4asCSHwyYrd5HJqV8zg1JHxS" /* PASS */

/* GET /metrics from `from` with "Authorization: Basic B64"; the status. */
static int get_basic(const exporter *e, const char *from, const char *b64, http_resp *r)
{
    char h[256];
    snprintf(h, sizeof h, "Authorization: Basic %s\r\n", b64);
    return http_request_from(from, e->port, "GET", "/metrics", h, 30000, r);
}

/* A password with a NUL byte is not cut short at it: "s3cret pass\0x" is
 * not "s3cret pass". */
Test(exporter_tls, password_with_nul_refused)
{
    exporter e;
    start_with(&e, "basic_auth_users:\n  alice: " HASH_2B "\n");
    http_resp r;
    /* base64 of "alice:s3cret pass\0x" */
    cr_expect_eq(get_basic(&e, NULL, "YWxpY2U6czNjcmV0IHBhc3MAeA==", &r), 401);
    http_free(&r);
    /* base64 of "alice:s3cret pass" */
    cr_expect_eq(get_basic(&e, NULL, "YWxpY2U6czNjcmV0IHBhc3M=", &r), 200);
    http_free(&r);
    /* ...and not even once the right one is remembered. */
    cr_expect_eq(get_basic(&e, NULL, "YWxpY2U6czNjcmV0IHBhc3MAeA==", &r), 401);
    http_free(&r);
    ex_stop(&e);
}

static double elapsed(const exporter *e, const char *from, const char *b64)
{
    http_resp r;
    long long t0 = tu_now_ms();
    cr_assert_eq(get_basic(e, from, b64, &r), 401);
    http_free(&r);
    return (double)(tu_now_ms() - t0) / 1e3;
}

static double median(double *t, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1], t[j - 1] = x;
        }
    return t[n / 2];
}

/* An unknown user costs what the costliest known user costs: the bcrypt
 * the exporter runs for it has that cost (its log says which), and the
 * answers take as long, within a wide margin (a factor of 2.5, for a
 * machine shared with other work: the old fixed cost 10 against a cost-8
 * user is a factor of 4). Medians of 7, the two kinds alternating so that
 * both see the same load, from different addresses so that the limiter
 * stays out of it. */
Test(exporter_tls, unknown_user_costs_like_known_ones)
{
    exporter e;
    start_with(&e, "basic_auth_users:\n  fast: " HASH_COST4 "\n  slow: " HASH_COST8 "\n");
    char *log = ex_slurp(e.log, NULL);
    cr_expect(log && strstr(log, "unknown_user_cost=8"), "%s", log);
    free(log);
    double tu[7], tk[7];
    for (int i = 0; i < 7; i++) {
        tu[i] = elapsed(&e, "127.0.0.2", "bm9ib2R5Ondyb25n"); /* nobody:wrong */
        tk[i] = elapsed(&e, "127.0.0.3", "c2xvdzp3cm9uZw=="); /* slow:wrong */
    }
    double unknown = median(tu, 7), known = median(tk, 7);
    cr_log_info("unknown user %.4f s, cost-8 user %.4f s", unknown, known);
    cr_expect(unknown < 2.5 * known && known < 2.5 * unknown,
              "an unknown user takes %.4f s, a known one %.4f s: timing tells them apart", unknown,
              known);
    ex_stop(&e);
}

/* bcrypt work per client address is bounded: AUTH_BURST (10) checks, then
 * 429 without a bcrypt; other addresses are not affected, nor is a
 * password already verified. */
Test(exporter_tls, bcrypt_limited_per_address)
{
    exporter e;
    start_with(&e, "basic_auth_users:\n  fast: " HASH_COST4 "\n");
    http_resp r;
    char h[64];
    /* base64 of "fast:wrong" */
    for (int i = 0; i < 10; i++) {
        cr_expect_eq(get_basic(&e, "127.0.0.4", "ZmFzdDp3cm9uZw==", &r), 401, "guess %d", i);
        http_free(&r);
    }
    int limited = 0;
    for (int i = 0; i < 20; i++) {
        limited += get_basic(&e, "127.0.0.4", "ZmFzdDp3cm9uZw==", &r) == 429;
        if (i == 0)
            cr_expect_str_eq(http_header(&r, "Retry-After", h, sizeof h), "6");
        http_free(&r);
    }
    cr_expect_geq(limited, 19, "%d of 20 guesses past the burst refused", limited);
    /* Another address: checked. base64 of "fast:s3cret pass". */
    cr_expect_eq(get_basic(&e, "127.0.0.5", "ZmFzdDpzM2NyZXQgcGFzcw==", &r), 200);
    http_free(&r);
    /* The limited address with the password now verified: served. */
    cr_expect_eq(get_basic(&e, "127.0.0.4", "ZmFzdDpzM2NyZXQgcGFzcw==", &r), 200);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"auth_limited\"}"), 19);
    http_free(&r);
    ex_stop(&e);
}

/* Lines of <root>/NAME that start with `code` (an HTTP status curl wrote
 * with -w). */
static int lines_with_code(const char *name, const char *code)
{
    char *s = root_file(name);
    cr_assert(s, "no %s", name);
    int n = 0;
    for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n"))
        n += strncmp(l, code, strlen(code)) == 0;
    free(s);
    return n;
}

/* The wait for the one bcrypt at a time has a deadline: the request's
 * (--web.request-timeout from the request's arrival, or the scrape's time
 * if that is shorter). Six concurrent wrong guesses of a cost-12 hash
 * (0.25 s to 1 s each on this machine, quiet or loaded) queue for longer
 * than a 0.5 s request time: the first is answered 401 after its bcrypt,
 * the ones still waiting at their deadline 503 with no bcrypt, counted as
 * auth_busy. Real clients (curl), started at once. */
Test(exporter_tls, bcrypt_wait_bounded_by_request_time)
{
    exporter e;
    const char *more[] = {"--web.request-timeout=0.5s", NULL};
    start_with_args(&e, "basic_auth_users:\n  alice: " HASH_COST12 "\n", more);
    cr_assert_eq(ex_sh("cd %s && for i in 1 2 3 4 5 6; do curl -s -m 60 -o /dev/null "
                       "-w '%%{http_code} %%{time_total}\\n' -u 'alice:wrong' "
                       "http://127.0.0.1:%d/metrics >> codes & done; wait",
                       tu_root, e.port),
                 0);
    int denied = lines_with_code("codes", "401"), busy = lines_with_code("codes", "503");
    char *codes = root_file("codes");
    cr_expect_eq(denied + busy, 6, "every guess answered 401 or 503: %s", codes);
    cr_expect_geq(denied, 1, "%s", codes);
    cr_expect_geq(busy, 1, "no guess was refused at its deadline: %s", codes);
    free(codes);
    http_resp r;
    /* alice:PASS, from an address whose bcrypts are not used up */
    cr_assert_eq(get_basic(&e, "127.0.0.9", "YWxpY2U6czNjcmV0IHBhc3M=", &r), 200);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"auth_busy\"}"), busy);
    http_free(&r);
    ex_stop(&e);
}

/* The limiter buckets an IPv6 client by its /64, the block one host or
 * site is given: rotating addresses within it does not buy more bcrypts;
 * another /64 has its own. Real IPv6 addresses in a network namespace of
 * the test's own (root: skipped otherwise); curl binds each source
 * address. */
Test(exporter_tls, bcrypt_limited_per_ipv6_64)
{
    if (geteuid() != 0)
        cr_skip_test("needs root, for a network namespace with addresses of its own");
    if (unshare(CLONE_NEWNET) != 0)
        cr_skip_test("cannot make a network namespace: %s", strerror(errno));
    cr_assert_eq(ex_sh("ip link set lo up && for i in 1 2 3 4 5 6 7 8 9 a b; do "
                       "ip -6 addr add 2001:db8:1:2::$i/128 dev lo nodad || exit 1; done && "
                       "ip -6 addr add 2001:db8:1:3::1/128 dev lo nodad"),
                 0);
    exporter e;
    const char *more[] = {"--web.listen-address=[::1]:0", NULL};
    start_with_args(&e, "basic_auth_users:\n  fast: " HASH_COST4 "\n", more);
    /* Ten guesses, each from another address of 2001:db8:1:2::/64: the
     * burst. The eleventh, from yet another: refused. */
    cr_assert_eq(ex_sh("cd %s && for i in 1 2 3 4 5 6 7 8 9 a b; do curl -s -m 30 -o /dev/null "
                       "-w '%%{http_code}\\n' --interface 2001:db8:1:2::$i -u 'fast:wrong' "
                       "'http://[::1]:%d/metrics' >> codes; done",
                       tu_root, e.port),
                 0);
    char *codes = root_file("codes");
    cr_expect_eq(lines_with_code("codes", "401"), 10, "%s", codes);
    cr_expect_eq(lines_with_code("codes", "429"), 1, "an address of the same /64: %s", codes);
    free(codes);
    /* Another /64: its own bucket. */
    cr_expect_eq(
        curl(&e, "--interface 2001:db8:1:3::1 -u 'fast:wrong' 'http://[::1]:%d/metrics'", e.port),
        401);
    ex_stop(&e);
}

/* A web configuration (password hashes) or TLS key that other users can
 * read gets a warning in the log; one only its owner reads does not. */
Test(exporter_tls, loose_file_modes_warned)
{
    make_cert("server");
    exporter e;
    const char *yml = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
                      "basic_auth_users:\n  alice: " HASH_2B "\n";
    char path[400], key[400];
    ex_path(key, sizeof key, "server.key");
    cr_assert_eq(chmod(key, 0600), 0);
    start_with(&e, yml);
    char *log = ex_slurp(e.log, NULL);
    cr_expect(log && !strstr(log, "readable or writable by other users"), "%s", log);
    free(log);
    ex_stop(&e);
    ex_path(path, sizeof path, "web.yml");
    cr_assert_eq(chmod(path, 0666), 0);
    cr_assert_eq(chmod(key, 0644), 0);
    char arg[440];
    snprintf(arg, sizeof arg, "--web.config.file=%s", path);
    const char *args[] = {arg, NULL};
    ex_start(&e, args);
    log = ex_slurp(e.log, NULL);
    cr_expect(log && strstr(log, "level=warn msg=\"file is readable or writable by other users"),
              "%s", log);
    cr_expect(log && strstr(log, "what=\"web configuration\" mode=0666"), "%s", log);
    cr_expect(log && strstr(log, "what=\"TLS key\" mode=0644"), "%s", log);
    free(log);
    ex_stop(&e);
}

/* A TLS connection that sends a record header announcing a 512-byte
 * ClientHello and then one byte every 100 ms (never inactive), and one
 * that sends nothing: both closed at --web.request-timeout (10 s by
 * default), which covers the handshake (issue 23, item 2). */
Test(exporter_tls, half_sent_tls_record_closed)
{
    make_cert("server");
    exporter e;
    start_with(&e, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
    int slow = ex_connect(NULL, e.port), idle = ex_connect(NULL, e.port);
    cr_assert(slow >= 0 && idle >= 0);
    /* handshake (22), TLS 1.0 record version, length 512; ClientHello (1) */
    static const char head[] = "\x16\x03\x01\x02\x00\x01";
    cr_assert_eq(send(slow, head, sizeof head - 1, MSG_NOSIGNAL), (ssize_t)(sizeof head - 1));
    int open_slow = 1, open_idle = 1;
    long long t0 = tu_now_ms();
    while ((open_slow || open_idle) && tu_now_ms() - t0 < 20000) {
        struct pollfd p[2] = {{slow, POLLIN, 0}, {idle, POLLIN, 0}};
        char b[512];
        poll(p, 2, 100);
        if (open_slow && p[0].revents && read(slow, b, sizeof b) <= 0)
            open_slow = 0;
        if (open_idle && p[1].revents && read(idle, b, sizeof b) <= 0)
            open_idle = 0;
        if (open_slow && send(slow, "\x00", 1, MSG_NOSIGNAL) != 1)
            open_slow = 0;
    }
    cr_log_info("closed after %lld ms", tu_now_ms() - t0);
    cr_expect(!open_slow, "a half-sent TLS record was still open after 20 s (deadline 10 s)");
    cr_expect(!open_idle, "a silent TLS connection was still open after 20 s (deadline 10 s)");
    close(slow);
    close(idle);
    ex_stop(&e);
}
