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
#include "testutil.h"

#include <criterion/criterion.h>

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
 * exporter with it. */
static void start_with(exporter *e, const char *yml)
{
    char path[400], arg[440];
    ex_path(path, sizeof path, "web.yml");
    cr_assert_eq(tu_write_file(path, yml, strlen(yml), 0600), 0);
    snprintf(arg, sizeof arg, "--web.config.file=%s", path);
    const char *args[] = {arg, NULL};
    ex_start(e, args);
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
