/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/webconfig.c - reading --web.config.file with libyaml
 * (webconfig.h). The document is loaded whole (libyaml's node API) and
 * walked; every key is checked against the ones implemented.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "webconfig.h"

typedef struct walk {
    yaml_document_t *doc;
    const char *path;
    char dir[PATH_MAX];
    char *err;
    size_t errlen;
} walk;

__attribute__((format(printf, 3, 4))) static int fail(walk *w, const yaml_node_t *at,
                                                      const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (at)
        snprintf(w->err, w->errlen, "%s:%lu: %s", w->path, (unsigned long)at->start_mark.line + 1,
                 msg);
    else
        snprintf(w->err, w->errlen, "%s: %s", w->path, msg);
    return -1;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A path relative to the configuration file's directory. */
static char *file_path(walk *w, const yaml_node_t *v, const char *key, char **out)
{
    const char *s = scalar(v);
    if (!s || !*s) {
        fail(w, v, "%s must be a file name", key);
        return NULL;
    }
    char buf[PATH_MAX * 2];
    if (s[0] == '/')
        snprintf(buf, sizeof buf, "%s", s);
    else
        snprintf(buf, sizeof buf, "%s/%s", w->dir, s);
    free(*out);
    *out = strdup(buf);
    if (!*out)
        fail(w, v, "out of memory");
    return *out;
}

static int tls_version(walk *w, const yaml_node_t *v, const char *key, int *out)
{
    static const char *names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
    const char *s = scalar(v);
    for (int i = 0; s && i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = 10 + i;
            return 0;
        }
    return fail(w, v, "%s must be TLS10, TLS11, TLS12 or TLS13, not \"%s\"", key, s ? s : "?");
}

static int bool_value(walk *w, const yaml_node_t *v, const char *key, int *out)
{
    const char *s = scalar(v);
    if (s && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)) {
        *out = s[0] == 't';
        return 0;
    }
    return fail(w, v, "%s must be true or false", key);
}

static int tls_config(walk *w, const yaml_node_t *m, web_config *c)
{
    if (m->type != YAML_MAPPING_NODE)
        return fail(w, m, "tls_server_config must be a mapping");
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        const char *k = scalar(kn);
        if (!k)
            return fail(w, kn, "keys must be names");
        if (strcmp(k, "cert_file") == 0) {
            if (!file_path(w, v, k, &c->cert_file))
                return -1;
        } else if (strcmp(k, "key_file") == 0) {
            if (!file_path(w, v, k, &c->key_file))
                return -1;
        } else if (strcmp(k, "client_ca_file") == 0) {
            if (!file_path(w, v, k, &c->client_ca_file))
                return -1;
        } else if (strcmp(k, "client_auth_type") == 0) {
            const char *s = scalar(v);
            if (s && strcmp(s, "NoClientCert") == 0)
                c->client_auth = CLIENT_NONE;
            else if (s && strcmp(s, "RequireAndVerifyClientCert") == 0)
                c->client_auth = CLIENT_REQUIRE_VERIFY;
            else
                return fail(w, v,
                            "client_auth_type \"%s\" is not supported by pcw-exporter "
                            "(NoClientCert or RequireAndVerifyClientCert)",
                            s ? s : "?");
        } else if (strcmp(k, "min_version") == 0) {
            if (tls_version(w, v, k, &c->min_version))
                return -1;
        } else if (strcmp(k, "max_version") == 0) {
            if (tls_version(w, v, k, &c->max_version))
                return -1;
        } else if (strcmp(k, "prefer_server_cipher_suites") == 0) {
            int b;
            if (bool_value(w, v, k, &b))
                return -1;
            /* GnuTLS servers choose by their own priorities: always true. */
            if (!b)
                return fail(w, v, "prefer_server_cipher_suites: false is not supported");
        } else {
            return fail(w, kn,
                        "tls_server_config.%s is not supported by pcw-exporter (cert_file, "
                        "key_file, client_auth_type, client_ca_file, min_version, max_version, "
                        "prefer_server_cipher_suites)",
                        k);
        }
    }
    if (!c->cert_file != !c->key_file)
        return fail(w, m, "tls_server_config needs both cert_file and key_file");
    if (!c->cert_file)
        return fail(w, m, "tls_server_config without cert_file and key_file");
    if (c->client_auth == CLIENT_REQUIRE_VERIFY && !c->client_ca_file)
        return fail(w, m, "client_auth_type RequireAndVerifyClientCert needs client_ca_file");
    if (c->client_ca_file && c->client_auth == CLIENT_NONE)
        return fail(w, m, "client_ca_file is given but client_auth_type does not verify clients");
    if (c->min_version && c->max_version && c->min_version > c->max_version)
        return fail(w, m, "min_version is above max_version");
    return 0;
}

static int http_config(walk *w, const yaml_node_t *m, web_config *c)
{
    static const char *allowed[] = {"Content-Security-Policy", "X-Frame-Options",
                                    "X-Content-Type-Options", "X-XSS-Protection",
                                    "Strict-Transport-Security"};
    if (m->type != YAML_MAPPING_NODE)
        return fail(w, m, "http_server_config must be a mapping");
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        const char *k = scalar(kn);
        if (k && strcmp(k, "http2") == 0) {
            int b;
            if (bool_value(w, v, k, &b))
                return -1;
            if (b)
                return fail(w, v, "http2: true is not supported (pcw-exporter speaks HTTP/1.1)");
        } else if (k && strcmp(k, "headers") == 0) {
            if (v->type != YAML_MAPPING_NODE)
                return fail(w, v, "headers must be a mapping");
            for (yaml_node_pair_t *h = v->data.mapping.pairs.start; h < v->data.mapping.pairs.top;
                 h++) {
                const char *hn = scalar(yaml_document_get_node(w->doc, h->key));
                const yaml_node_t *hvn = yaml_document_get_node(w->doc, h->value);
                const char *hv = scalar(hvn);
                size_t i = 0;
                while (hn && i < sizeof allowed / sizeof allowed[0] && strcasecmp(hn, allowed[i]))
                    i++;
                if (!hn || i == sizeof allowed / sizeof allowed[0])
                    return fail(w, hvn,
                                "header \"%s\" is not allowed (Content-Security-Policy, "
                                "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
                                "Strict-Transport-Security)",
                                hn ? hn : "?");
                if (!hv || strpbrk(hv, "\r\n"))
                    return fail(w, hvn, "header %s needs a one-line value", hn);
                web_header *nh = realloc(c->headers, (c->nheaders + 1) * sizeof *nh);
                if (!nh)
                    return fail(w, hvn, "out of memory");
                c->headers = nh;
                nh[c->nheaders].name = strdup(allowed[i]);
                nh[c->nheaders].value = strdup(hv);
                c->nheaders++;
                if (!nh[c->nheaders - 1].name || !nh[c->nheaders - 1].value)
                    return fail(w, hvn, "out of memory");
            }
        } else {
            return fail(w, kn, "http_server_config.%s is not supported (http2, headers)",
                        k ? k : "?");
        }
    }
    return 0;
}

/* A bcrypt hash, as crypt(3) writes it: $2a$, $2b$ or $2y$, a two-digit
 * cost, '$', and 53 characters of bcrypt's base64. */
static int is_bcrypt(const char *h)
{
    if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
        h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' || h[6] != '$')
        return 0;
    for (const char *p = h + 7; *p; p++)
        if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", *p))
            return 0;
    int cost = (h[4] - '0') * 10 + (h[5] - '0');
    return cost >= 4 && cost <= 31;
}

static int users(walk *w, const yaml_node_t *m, web_config *c)
{
    if (m->type != YAML_MAPPING_NODE)
        return fail(w, m, "basic_auth_users must map user names to bcrypt hashes");
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
        const yaml_node_t *v = yaml_document_get_node(w->doc, p->value);
        const char *u = scalar(kn), *h = scalar(v);
        if (!u || !*u || strchr(u, ':'))
            return fail(w, kn, "a user name must be a non-empty name without ':'");
        if (!h || !is_bcrypt(h))
            return fail(w, v,
                        "the password of \"%s\" must be a bcrypt hash ($2y$10$... as htpasswd "
                        "-B writes it)",
                        u);
        for (size_t i = 0; i < c->nusers; i++)
            if (strcmp(c->users[i].name, u) == 0)
                return fail(w, kn, "user \"%s\" is given twice", u);
        web_user *nu = realloc(c->users, (c->nusers + 1) * sizeof *nu);
        if (!nu)
            return fail(w, v, "out of memory");
        c->users = nu;
        nu[c->nusers].name = strdup(u);
        nu[c->nusers].hash = strdup(h);
        c->nusers++;
        if (!nu[c->nusers - 1].name || !nu[c->nusers - 1].hash)
            return fail(w, v, "out of memory");
    }
    return 0;
}

/* The whole file, at most WEB_CONFIG_MAX_BYTES. */
static char *read_bounded(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(WEB_CONFIG_MAX_BYTES + 1);
    size_t n = text ? fread(text, 1, WEB_CONFIG_MAX_BYTES + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!text || bad || n > WEB_CONFIG_MAX_BYTES) {
        if (!text)
            snprintf(err, errlen, "%s: out of memory", path);
        else if (bad)
            snprintf(err, errlen, "%s: cannot read it", path);
        else
            snprintf(err, errlen, "%s: larger than %d bytes", path, WEB_CONFIG_MAX_BYTES);
        free(text);
        return NULL;
    }
    *len = n;
    return text;
}

/* libyaml has no depth limit, and its scanner's work grows with the
 * square of the nesting (each token looks at every open level's possible
 * simple key): 100,000 '[' take tens of seconds. Walk the events first
 * and stop at WEB_CONFIG_MAX_DEPTH open collections, which costs at most
 * that many levels' work; the document itself is loaded afterwards. */
static int check_depth(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int depth = 0, rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev))
            break; /* the load below reports it, with its line */
        yaml_event_type_t t = ev.type;
        unsigned long line = (unsigned long)ev.start_mark.line + 1;
        yaml_event_delete(&ev);
        if (t == YAML_STREAM_END_EVENT)
            break;
        if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) {
            if (++depth > WEB_CONFIG_MAX_DEPTH) {
                snprintf(err, errlen, "%s:%lu: nested deeper than %d levels", path, line,
                         WEB_CONFIG_MAX_DEPTH);
                rc = -1;
                break;
            }
        } else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) {
            depth--;
        }
    }
    yaml_parser_delete(&p);
    return rc;
}

int web_config_load(const char *path, web_config *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    walk w = {NULL, path, "", err, errlen};
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(w.dir, sizeof w.dir, "%s", dirname(tmp));
    size_t len;
    char *text = read_bounded(path, &len, err, errlen);
    if (!text)
        return -1;
    if (check_depth(path, text, len, err, errlen) != 0) {
        free(text);
        return -1;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        free(text);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, errlen, "%s:%lu: %s", path, (unsigned long)parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "YAML error");
        yaml_parser_delete(&parser);
        free(text);
        return -1;
    }
    w.doc = &doc;
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root && !(root->type == YAML_SCALAR_NODE && !root->data.scalar.length)) {
        if (root->type != YAML_MAPPING_NODE) {
            rc = fail(&w, root,
                      "expected a mapping (tls_server_config, http_server_config, "
                      "basic_auth_users)");
        } else {
            for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
                 rc == 0 && p < root->data.mapping.pairs.top; p++) {
                const yaml_node_t *kn = yaml_document_get_node(&doc, p->key);
                const yaml_node_t *v = yaml_document_get_node(&doc, p->value);
                const char *k = scalar(kn);
                if (k && strcmp(k, "tls_server_config") == 0)
                    rc = tls_config(&w, v, out);
                else if (k && strcmp(k, "http_server_config") == 0)
                    rc = http_config(&w, v, out);
                else if (k && strcmp(k, "basic_auth_users") == 0)
                    rc = users(&w, v, out);
                else
                    rc = fail(&w, kn,
                              "unknown key \"%s\" (tls_server_config, http_server_config, "
                              "basic_auth_users)",
                              k ? k : "?");
            }
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    free(text);
    if (rc)
        web_config_free(out);
    return rc;
}

void web_config_free(web_config *c)
{
    if (!c)
        return;
    free(c->cert_file);
    free(c->key_file);
    free(c->client_ca_file);
    for (size_t i = 0; i < c->nusers; i++) {
        free(c->users[i].name);
        if (c->users[i].hash) /* not secret, but need not linger */
            explicit_bzero(c->users[i].hash, strlen(c->users[i].hash));
        free(c->users[i].hash);
    }
    free(c->users);
    for (size_t i = 0; i < c->nheaders; i++) {
        free(c->headers[i].name);
        free(c->headers[i].value);
    }
    free(c->headers);
    memset(c, 0, sizeof *c);
}
