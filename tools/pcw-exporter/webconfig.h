/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/webconfig.h - --web.config.file: TLS and basic
 * authentication in the Prometheus exporter-toolkit's format
 * (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md):
 *
 *   tls_server_config:
 *     cert_file: server.crt         # paths relative to this file
 *     key_file: server.key
 *     client_auth_type: RequireAndVerifyClientCert   # or NoClientCert
 *     client_ca_file: ca.crt
 *     min_version: TLS12            # TLS10..TLS13; default TLS12
 *     max_version: TLS13
 *   http_server_config:
 *     http2: false                  # HTTP/1.1 only: true is refused
 *     headers:                      # the toolkit's five security headers
 *       X-Frame-Options: deny
 *   basic_auth_users:
 *     alice: $2y$10$...             # bcrypt hashes only
 *
 * Keys pcw-exporter does not implement are refused by name, never
 * ignored: a configuration means what it says or the exporter does not
 * start. The file is bounded: at most WEB_CONFIG_MAX_BYTES, collections
 * nested at most WEB_CONFIG_MAX_DEPTH deep (the format needs 3).
 */
#ifndef PCW_EXPORTER_WEBCONFIG_H
#define PCW_EXPORTER_WEBCONFIG_H

#include <stddef.h>

#define WEB_CONFIG_MAX_BYTES (1 << 20)
#define WEB_CONFIG_MAX_DEPTH 32

enum { CLIENT_NONE = 0, CLIENT_REQUIRE_VERIFY = 1 };

typedef struct web_user {
    char *name, *hash;
} web_user;

typedef struct web_header {
    char *name, *value;
} web_header;

typedef struct web_config {
    char *cert_file, *key_file, *client_ca_file; /* absolute or as given */
    int client_auth;                             /* CLIENT_* */
    int min_version, max_version;                /* 10..13 (TLS1.x); 0 = default */
    web_user *users;
    size_t nusers;
    web_header *headers;
    size_t nheaders;
} web_config;

/* Load and check `path`. Returns 0, or -1 with a sentence in err naming
 * the file, line and what is wrong. */
int web_config_load(const char *path, web_config *out, char *err, size_t errlen);
void web_config_free(web_config *c);

/* Is TLS on (cert_file and key_file given)? */
static inline int web_config_tls(const web_config *c)
{
    return c && c->cert_file;
}

#endif /* PCW_EXPORTER_WEBCONFIG_H */
