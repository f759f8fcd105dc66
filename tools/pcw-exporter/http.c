/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/http.c - libmicrohttpd serving the exposition
 * (http.h).
 *
 * Each connection has its own thread (MHD_USE_THREAD_PER_CONNECTION), so
 * a landing-page request never waits behind a scrape; slow clients are
 * kept from holding the threads by the slots (slots.h). A scrape's body
 * is shared by the requests of one collection and handed to libmicrohttpd
 * without a copy; it is freed when the last response sending it is done
 * (body.h, which also bounds the memory of bodies in flight).
 */
#define _GNU_SOURCE 1
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pcw/version.h>

#include "auth.h"
#include "body.h"
#include "http.h"
#include "log.h"
#include "proto.h"
#include "slots.h"

#define MAX_LISTEN  16
#define STR_(x)     #x
#define STR(x)      STR_(x)
#define RETRY_AFTER STR(AUTH_REFILL_S)

struct http_server {
    http_options o;
    struct MHD_Daemon *d[MAX_LISTEN];
    size_t nd;
    auth *auth;
    slots *slots;
    char *cert, *key, *ca, *priorities;
    char *landing;
    size_t landing_len;
    bodies *bodies;
    /* Stopping (http_drain): requests in route() and whether new ones are
     * turned away. Written by connection threads and the stopping thread,
     * always under drain_lock; drained is broadcast when busy reaches 0. */
    pthread_mutex_t drain_lock;
    pthread_cond_t drained;
    unsigned busy;
    int stopping;
    int quiesced[MAX_LISTEN]; /* listen sockets taken back (MHD_quiesce_daemon), or -1 */
};

/* ---- negotiation ------------------------------------------------------------- */

/* One entry of an Accept or Accept-Encoding header: its type, q-value
 * and the parameters negotiation looks at (NULL when absent). */
typedef struct entry {
    const char *type;
    size_t type_len;
    double q;
    const char *version, *proto, *encoding;
    size_t version_len, proto_len, encoding_len;
} entry;

/* Walk a header's comma-separated entries: fn(entry) for each. */
static void each_entry(const char *h, void (*fn)(const entry *, void *), void *arg)
{
    while (h && *h) {
        const char *end = strchr(h, ',');
        if (!end)
            end = h + strlen(h);
        const char *p = h;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        entry e;
        memset(&e, 0, sizeof e);
        e.type = p;
        while (p < end && *p != ';' && *p != ' ' && *p != '\t')
            p++;
        e.type_len = (size_t)(p - e.type);
        e.q = 1.0;
        while (p < end) {
            while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
                p++;
            const char *k = p;
            while (p < end && *p != '=' && *p != ';')
                p++;
            size_t kl = (size_t)(p - k);
            if (p < end && *p == '=') {
                const char *v = ++p;
                while (p < end && *p != ';')
                    p++;
                size_t vlen = (size_t)(p - v);
                while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
                    vlen--;
                if (kl == 1 && (*k == 'q' || *k == 'Q'))
                    e.q = strtod(v, NULL);
                else if (kl == 7 && strncasecmp(k, "version", 7) == 0)
                    e.version = v, e.version_len = vlen;
                else if (kl == 5 && strncasecmp(k, "proto", 5) == 0)
                    e.proto = v, e.proto_len = vlen;
                else if (kl == 8 && strncasecmp(k, "encoding", 8) == 0)
                    e.encoding = v, e.encoding_len = vlen;
            }
        }
        if (!isfinite(e.q))
            e.q = 0;
        if (e.type_len)
            fn(&e, arg);
        h = *end ? end + 1 : end;
    }
}

typedef struct neg {
    double om, text, proto;
    const char *om_version;
} neg;

static int is(const char *t, size_t n, const char *s)
{
    return n == strlen(s) && strncasecmp(t, s, n) == 0;
}

static void neg_entry(const entry *e, void *arg)
{
    neg *g = arg;
    const char *v = e->version;
    size_t vl = e->version_len;
    if (is(e->type, e->type_len, "application/openmetrics-text")) {
        const char *ver = !v || (vl == 5 && strncmp(v, "1.0.0", 5) == 0) ? "1.0.0"
                          : vl == 5 && strncmp(v, "0.0.1", 5) == 0       ? "0.0.1"
                                                                         : NULL;
        if (ver && e->q > g->om) {
            g->om = e->q;
            g->om_version = ver;
        }
    } else if (is(e->type, e->type_len, PROTO_MEDIA_TYPE)) {
        /* Only the delimited MetricFamily stream (not the protobuf text
         * or compact-text encodings Prometheus once knew). */
        if (e->proto && is(e->proto, e->proto_len, "io.prometheus.client.MetricFamily") &&
            e->encoding && is(e->encoding, e->encoding_len, "delimited") && e->q > g->proto)
            g->proto = e->q;
    } else if (is(e->type, e->type_len, "text/plain") || is(e->type, e->type_len, "text/*") ||
               is(e->type, e->type_len, "*/*")) {
        if ((!v || (vl == 5 && strncmp(v, "0.0.4", 5) == 0)) && e->q > g->text)
            g->text = e->q;
    }
}

int http_negotiate(const char *accept, const char **om_version)
{
    neg g = {0, 0, 0, "1.0.0"};
    each_entry(accept, neg_entry, &g);
    *om_version = g.om_version;
    /* The highest q; at equal q the richer format (protobuf carries native
     * histograms, OpenMetrics units and an end marker). */
    if (g.proto > 0 && g.proto >= g.om && g.proto >= g.text)
        return EXPO_PROTO;
    return g.om > 0 && g.om >= g.text ? EXPO_OPENMETRICS : EXPO_TEXT;
}

static void gzip_entry(const entry *e, void *arg)
{
    if (is(e->type, e->type_len, "gzip") && e->q > 0)
        *(int *)arg = 1;
}

int http_accepts_gzip(const char *accept_encoding)
{
    int yes = 0;
    each_entry(accept_encoding, gzip_entry, &yes);
    return yes;
}

/* ---- responses --------------------------------------------------------------- */

static void add_headers(http_server *s, struct MHD_Response *r)
{
    for (size_t i = 0; s->o.web && i < s->o.web->nheaders; i++)
        MHD_add_response_header(r, s->o.web->headers[i].name, s->o.web->headers[i].value);
}

static enum MHD_Result simple(http_server *s, struct MHD_Connection *conn, unsigned status,
                              const char *type, const char *body)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (status == MHD_HTTP_TOO_MANY_REQUESTS)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, RETRY_AFTER);
    add_headers(s, r);
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

/* The request's deadline, from `now` (its being whole): the scrape's
 * time, ours, or less when the scraper will give up sooner (its timeout
 * minus the offset the response needs). */
static uint64_t request_deadline(const http_server *s, struct MHD_Connection *conn, uint64_t now)
{
    double budget = s->o.timeout;
    const char *ts =
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Prometheus-Scrape-Timeout-Seconds");
    if (ts) {
        char *end;
        double t = strtod(ts, &end);
        if (end != ts && isfinite(t) && t > 0) {
            double b = t - s->o.timeout_offset;
            if (b <= 0)
                b = t / 2;
            if (b < budget)
                budget = b;
        }
    }
    return now + (uint64_t)(budget * 1e9);
}

static enum MHD_Result metrics(http_server *s, struct MHD_Connection *conn, uint64_t deadline)
{
    const char *omv;
    int format = http_negotiate(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept"), &omv);
    int gzip = http_accepts_gzip(
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
    int err = 0;
    scrape_body *b = bodies_get(s->bodies, format, deadline, &err);
    if (!b && err == BODY_BUSY)
        return simple(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                      "another scrape held the collector past this one's time\n");
    if (!b && err == BODY_MEMORY)
        return simple(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                      "responses not yet read by their clients hold the exporter's response "
                      "memory (--web.max-response-memory) and did not give it back in this "
                      "scrape's time; try again later\n");
    if (!b)
        return simple(s, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", "out of memory\n");
    const ebuf *out = body_text(b);
    if (gzip) {
        const ebuf *gz = body_gzip(b);
        if (gz) {
            out = gz;
        } else {
            gzip = 0;
            collector_count(s->o.coll, CAUSE_ENCODING);
        }
    }
    /* Each response holds a reference; libmicrohttpd drops it (body_unref)
     * when it is done with the response. */
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback_cls(out->len, out->p, body_unref, b);
    if (!r) {
        body_unref(b);
        return MHD_NO;
    }
    char type[128];
    if (format == EXPO_PROTO)
        snprintf(type, sizeof type, "%s", PROTO_CONTENT_TYPE);
    else if (format == EXPO_OPENMETRICS)
        snprintf(type, sizeof type, "application/openmetrics-text; version=%s; charset=utf-8", omv);
    else
        snprintf(type, sizeof type, "text/plain; version=0.0.4; charset=utf-8");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
    if (gzip)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
    add_headers(s, r);
    enum MHD_Result qr = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return qr;
}

/* With client_auth_type RequireAndVerifyClientCert: did the client present
 * a certificate that the client CA signed? */
static int client_cert_ok(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return 0;
    gnutls_session_t sess = (gnutls_session_t)ci->tls_session;
    unsigned n = 0, status = 0;
    if (!gnutls_certificate_get_peers(sess, &n) || n == 0)
        return 0;
    return gnutls_certificate_verify_peers2(sess, &status) == 0 && status == 0;
}

/* A whole request: its response. */
static enum MHD_Result route(http_server *s, struct MHD_Connection *conn, const char *url,
                             const char *method)
{
    xlog(LOG_DEBUG, "request", "method", method, "path", url, NULL);
    uint64_t now = mono_ns(), deadline = request_deadline(s, conn, now);
    if (s->o.web && s->o.web->client_auth == CLIENT_REQUIRE_VERIFY && !client_cert_ok(conn)) {
        collector_count(s->o.coll, CAUSE_AUTH);
        return simple(s, conn, MHD_HTTP_FORBIDDEN, "text/plain",
                      "a client certificate signed by the configured CA is required\n");
    }
    if (s->auth) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        /* The password check's wait ends at the request's deadline, and at
         * --web.request-timeout from now at most: a flood of guesses
         * queued for the one bcrypt holds no thread longer (auth.h). */
        uint64_t auth_deadline = now + (uint64_t)(s->o.request_timeout * 1e9);
        int rc = auth_check(
            s->auth, ci ? ci->client_addr : NULL,
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION),
            auth_deadline < deadline ? auth_deadline : deadline);
        if (rc == AUTH_LIMITED) {
            collector_count(s->o.coll, CAUSE_AUTH_LIMITED);
            return simple(s, conn, MHD_HTTP_TOO_MANY_REQUESTS, "text/plain",
                          "too many password checks from this address; try again later\n");
        }
        if (rc == AUTH_BUSY) {
            collector_count(s->o.coll, CAUSE_AUTH_BUSY);
            return simple(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                          "other password checks held the exporter past this request's time; "
                          "try again later\n");
        }
        if (rc != AUTH_OK) {
            collector_count(s->o.coll, CAUSE_AUTH);
            const char *body = "Unauthorized\n";
            struct MHD_Response *r =
                MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
            if (!r)
                return MHD_NO;
            MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
            add_headers(s, r);
            enum MHD_Result qr = MHD_queue_basic_auth_fail_response(conn, "pcw-exporter", r);
            MHD_destroy_response(r);
            return qr;
        }
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return simple(s, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
                      "only GET and HEAD are served\n");
    if (strcmp(url, s->o.telemetry_path) == 0)
        return metrics(s, conn, deadline);
    if (strcmp(url, "/") == 0)
        return simple(s, conn, MHD_HTTP_OK, "text/html; charset=utf-8", s->landing);
    return simple(s, conn, MHD_HTTP_NOT_FOUND, "text/plain", "Not Found\n");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **ctx)
{
    static int started;
    (void)version, (void)upload;
    http_server *s = cls;
    if (!*ctx) { /* headers in: wait for the (ignored) body */
        *ctx = &started;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    slots_serving(s->slots, conn); /* the request is whole */
    pthread_mutex_lock(&s->drain_lock);
    int stopping = s->stopping;
    s->busy += !stopping;
    pthread_mutex_unlock(&s->drain_lock);
    enum MHD_Result rc;
    if (stopping) { /* no new scrape once http_drain has begun */
        rc = simple(s, conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain",
                    "pcw-exporter is stopping\n");
    } else {
        rc = route(s, conn, url, method);
        pthread_mutex_lock(&s->drain_lock);
        if (--s->busy == 0)
            pthread_cond_broadcast(&s->drained);
        pthread_mutex_unlock(&s->drain_lock);
    }
    slots_sending(s->slots, conn);
    return rc;
}

/* ---- starting ---------------------------------------------------------------- */

__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = 0;
    xlog(LOG_DEBUG, "libmicrohttpd", "detail", msg, NULL);
}

static char *read_whole(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    ebuf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < (1u << 24))
        eb_put(&b, chunk, n);
    fclose(f);
    eb_put(&b, "", 1);
    if (b.failed) {
        snprintf(err, errlen, "%s: out of memory", path);
        eb_free(&b);
        return NULL;
    }
    return b.p;
}

/* "host:port", "[v6]:port" or ":port" -> a socket address; *any when the
 * host part is empty (every interface, both families). */
static int parse_listen(const char *a, struct sockaddr_storage *ss, int *any, char *err,
                        size_t errlen)
{
    char host[256];
    const char *port;
    memset(ss, 0, sizeof *ss);
    *any = 0;
    if (a[0] == '[') {
        const char *close = strchr(a, ']');
        if (!close || close[1] != ':' || (size_t)(close - a - 1) >= sizeof host)
            goto bad;
        memcpy(host, a + 1, (size_t)(close - a - 1));
        host[close - a - 1] = 0;
        port = close + 2;
    } else {
        const char *colon = strrchr(a, ':');
        if (!colon || (size_t)(colon - a) >= sizeof host || memchr(a, ':', (size_t)(colon - a)))
            goto bad;
        memcpy(host, a, (size_t)(colon - a));
        host[colon - a] = 0;
        port = colon + 1;
    }
    char *end;
    errno = 0;
    unsigned long p = strtoul(port, &end, 10);
    if (!*port || *end || errno || p > 65535)
        goto bad;
    if (!host[0]) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_addr = in6addr_any;
        s6->sin6_port = htons((uint16_t)p);
        *any = 1;
        return 0;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g != 0 || !res) {
        snprintf(err, errlen, "listen address \"%s\": %s", a, gai_strerror(g));
        return -1;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    return 0;
bad:
    snprintf(err, errlen,
             "listen address \"%s\" is not host:port, [ipv6]:port or :port (every interface)", a);
    return -1;
}

/* A listening socket on ss (`a` as the user wrote it), made here rather
 * than by libmicrohttpd so that a failure says which it is: libmicrohttpd
 * only says that it did not start. The options are the ones libmicrohttpd
 * sets: SO_REUSEADDR, and on IPv6 both families only for the wildcard
 * (`any`). The descriptor, or -1 with err set. */
static int listen_socket(const char *a, const struct sockaddr_storage *ss, int any, char *err,
                         size_t errlen)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int e = errno;
    if (fd >= 0) {
        int on = 1, v6only = !any;
        socklen_t len =
            ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) == 0 &&
            (ss->ss_family != AF_INET6 ||
             setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) == 0) &&
            bind(fd, (const struct sockaddr *)ss, len) == 0 && listen(fd, SOMAXCONN) == 0)
            return fd;
        e = errno;
        close(fd);
    }
    snprintf(err, errlen, "cannot listen on %s: %s", a,
             e == EADDRINUSE      ? "the address is in use (another program listens on that port)"
             : e == EADDRNOTAVAIL ? "not an address of this host"
             : e == EACCES        ? "permission denied (a port below 1024 needs "
                                    "CAP_NET_BIND_SERVICE)"
                                  : strerror(e));
    return -1;
}

/* Do the certificate and key (and the client CA) load, and does the key
 * match the certificate? Checked with GnuTLS, which libmicrohttpd uses,
 * because libmicrohttpd only says that it did not start. 0, or -1 with err
 * set naming the files. */
static int tls_check(const http_server *s, const web_config *w, char *err, size_t errlen)
{
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    gnutls_datum_t cert = {(unsigned char *)s->cert, (unsigned)strlen(s->cert)};
    gnutls_datum_t key = {(unsigned char *)s->key, (unsigned)strlen(s->key)};
    int rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key, GNUTLS_X509_FMT_PEM);
    if (rc < 0)
        snprintf(err, errlen, "TLS certificate %s and key %s do not load: %s", w->cert_file,
                 w->key_file, gnutls_strerror(rc));
    if (rc >= 0 && s->ca) {
        gnutls_datum_t ca = {(unsigned char *)s->ca, (unsigned)strlen(s->ca)};
        rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
        if (rc <= 0)
            snprintf(err, errlen, "TLS client_ca_file %s: certificates do not load: %s",
                     w->client_ca_file, rc < 0 ? gnutls_strerror(rc) : "none found");
        rc = rc <= 0 ? -1 : 0;
    }
    gnutls_certificate_free_credentials(cred);
    return rc < 0 ? -1 : 0;
}

static void landing_page(http_server *s)
{
    ebuf b = {0};
    eb_str(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pcw exporter</title>"
               "</head>\n<body>\n<h1>pcw exporter</h1>\n<p>Performance counters of the pcw "
               "providers on this host, for Prometheus.</p>\n<p>Version ");
    eb_str(&b, PCW_VERSION_STRING);
    eb_str(&b, "</p>\n<ul><li><a href=\"");
    for (const char *p = s->o.telemetry_path; *p; p++) {
        if (*p == '&')
            eb_str(&b, "&amp;");
        else if (*p == '"')
            eb_str(&b, "&quot;");
        else if (*p == '<')
            eb_str(&b, "&lt;");
        else
            eb_put(&b, p, 1);
    }
    eb_str(&b, "\">Metrics</a></li></ul>\n</body></html>\n");
    eb_put(&b, "", 1);
    s->landing = b.p;
    s->landing_len = b.len ? b.len - 1 : 0;
}

int http_start(http_server **out, const http_options *o, char *err, size_t errlen)
{
    *out = NULL;
    if (o->nlisten == 0 || o->nlisten > MAX_LISTEN) {
        snprintf(err, errlen, "between 1 and %d listen addresses", MAX_LISTEN);
        return -1;
    }
    http_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->o = *o;
    pthread_mutex_init(&s->drain_lock, NULL);
    pthread_condattr_t ca; /* the drain's deadline is CLOCK_MONOTONIC (mono_ns) */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->drained, &ca);
    pthread_condattr_destroy(&ca);
    for (size_t i = 0; i < MAX_LISTEN; i++)
        s->quiesced[i] = -1;
    landing_page(s);
    const web_config *w = o->web;
    int tls = web_config_tls(w);
    if (tls) {
        if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
            snprintf(err, errlen, "this libmicrohttpd has no TLS support");
            goto fail;
        }
        if (!(s->cert = read_whole(w->cert_file, err, errlen)) ||
            !(s->key = read_whole(w->key_file, err, errlen)))
            goto fail;
        if (w->client_ca_file && !(s->ca = read_whole(w->client_ca_file, err, errlen)))
            goto fail;
        if (tls_check(s, w, err, errlen))
            goto fail;
        int lo = w->min_version ? w->min_version : 12, hi = w->max_version ? w->max_version : 13;
        ebuf p = {0};
        eb_str(&p, "NORMAL:-VERS-ALL");
        for (int v = hi; v >= lo; v--)
            eb_printf(&p, ":+VERS-TLS1.%d", v - 10);
        eb_put(&p, "", 1);
        s->priorities = p.p;
    }
    if (auth_open(&s->auth, w) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (s->auth) {
        char users[24], cost[8];
        snprintf(users, sizeof users, "%zu", w->nusers);
        snprintf(cost, sizeof cost, "%d", auth_dummy_cost(s->auth));
        /* The cost every unknown user's request pays, as the costliest
         * known user's does (auth.h). */
        xlog(LOG_INFO, "Basic authentication", "users", users, "unknown_user_cost", cost, NULL);
    }
    if (slots_open(&s->slots, o->max_requests, o->request_timeout, o->coll) != 0 ||
        bodies_open(&s->bodies, o->coll, o->max_response_memory, slots_cut_sender, s->slots) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < o->nlisten; i++) {
        struct sockaddr_storage ss;
        int any;
        int fd;
        if (parse_listen(o->listen[i], &ss, &any, err, errlen) ||
            (fd = listen_socket(o->listen[i], &ss, any, err, errlen)) < 0)
            goto fail;
        /* MHD_USE_ITC: MHD_quiesce_daemon needs it in this mode (http_drain). */
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                         MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_USE_ITC;
        if (ss.ss_family == AF_INET6)
            flags |= MHD_USE_IPv6;
        if (any)
            flags |= MHD_USE_DUAL_STACK;
        if (tls)
            flags |= MHD_USE_TLS;
        struct MHD_OptionItem opts[16];
        int k = 0;
        opts[k++] = (struct MHD_OptionItem){MHD_OPTION_LISTEN_SOCKET, fd, NULL};
        opts[k++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, 120, NULL};
        opts[k++] = (struct MHD_OptionItem){MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL};
        opts[k++] =
            (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)slots_notify, s->slots};
        opts[k++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)slots_completed,
                                            s->slots};
        /* The slots shed connections beyond max_requests (slots.h); room
         * above it for those being closed, so that a new one is accepted
         * (and one that waits is shed) rather than refused. */
        if (o->max_requests)
            opts[k++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT,
                                                (intptr_t)o->max_requests * 2, NULL};
        if (tls) {
            opts[k++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, s->cert};
            opts[k++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, s->key};
            opts[k++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, s->priorities};
            if (s->ca)
                opts[k++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0, s->ca};
        }
        opts[k++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
        struct MHD_Daemon *d = MHD_start_daemon(flags, 0, NULL, NULL, handle, s, MHD_OPTION_ARRAY,
                                                opts, MHD_OPTION_END);
        if (!d) {
            /* The socket, key and certificate were checked above: what is
             * left is libmicrohttpd's own (threads, memory; its log says).
             * fd is not closed here: whether libmicrohttpd closed it on its
             * way out is not said, and the exporter exits. */
            snprintf(err, errlen, "cannot serve %s: libmicrohttpd did not start", o->listen[i]);
            goto fail;
        }
        s->d[s->nd++] = d;
        const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
        char addr[300], host[INET6_ADDRSTRLEN] = "";
        unsigned port = di ? di->port : 0;
        if (any)
            snprintf(addr, sizeof addr, "[::]:%u", port);
        else if (ss.ss_family == AF_INET6)
            snprintf(
                addr, sizeof addr, "[%s]:%u",
                inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof host),
                port);
        else
            snprintf(addr, sizeof addr, "%s:%u",
                     inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof host),
                     port);
        xlog(LOG_INFO, "Listening on", "address", addr, "tls", tls ? "true" : "false", NULL);
    }
    *out = s;
    return 0;
fail:
    http_stop(s);
    return -1;
}

int http_drain(http_server *s, uint64_t grace_ns)
{
    /* Refuse new connections first: a quiesced daemon no longer accepts,
     * and its socket is ours to close once it has stopped (http_stop);
     * shutdown(2) of a listening socket makes Linux stop listening on it,
     * so connects are refused rather than left in the backlog. */
    for (size_t i = 0; i < s->nd; i++)
        if (s->quiesced[i] < 0 && (s->quiesced[i] = MHD_quiesce_daemon(s->d[i])) >= 0)
            shutdown(s->quiesced[i], SHUT_RDWR);
    uint64_t until = mono_ns() + grace_ns;
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    pthread_mutex_lock(&s->drain_lock);
    s->stopping = 1;
    int rc = 0;
    while (s->busy && rc == 0)
        rc = pthread_cond_timedwait(&s->drained, &s->drain_lock, &ts);
    unsigned left = s->busy;
    pthread_mutex_unlock(&s->drain_lock);
    return (int)left;
}

void http_stop(http_server *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nd; i++) {
        MHD_stop_daemon(s->d[i]);
        if (s->quiesced[i] >= 0)
            close(s->quiesced[i]);
    }
    slots_close(s->slots); /* after the daemons: no connection is left */
    auth_close(s->auth);
    bodies_close(s->bodies); /* every response is done with its body */
    if (s->key)
        explicit_bzero(s->key, strlen(s->key));
    free(s->cert);
    free(s->key);
    free(s->ca);
    free(s->priorities);
    free(s->landing);
    pthread_cond_destroy(&s->drained);
    pthread_mutex_destroy(&s->drain_lock);
    free(s);
}
