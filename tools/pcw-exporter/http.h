/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/http.h - the HTTP side (libmicrohttpd): the landing
 * page at "/", the metrics at the telemetry path in the format the
 * scraper's Accept header asks for (text, OpenMetrics or protobuf),
 * gzip when it accepts it, TLS and basic authentication from
 * --web.config.file.
 *
 * Threads: libmicrohttpd's, one per connection (at most max_requests,
 * slow clients shed: slots.h); scrapes are serialised by the collector.
 */
#ifndef PCW_EXPORTER_HTTP_H
#define PCW_EXPORTER_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "webconfig.h"

typedef struct http_options {
    const char *const *listen; /* addresses: "host:port", "[v6]:port", ":port" */
    size_t nlisten;
    const char *telemetry_path;
    const web_config *web; /* NULL: plain HTTP, no authentication */
    collector *coll;
    double timeout;             /* the most a scrape waits for callback providers (s) */
    double timeout_offset;      /* subtracted from X-Prometheus-Scrape-Timeout-Seconds */
    unsigned max_requests;      /* connections at once; 0 = libmicrohttpd's limit */
    double request_timeout;     /* most a connection waits for a whole request (s) */
    size_t max_response_memory; /* bytes of bodies responses may hold (body.h) */
} http_options;

typedef struct http_server http_server;

/* Start serving; logs "Listening on" with each bound address (the actual
 * port when 0 was asked). Returns 0, or -1 with a sentence in err. */
int http_start(http_server **out, const http_options *o, char *err, size_t errlen);
/* Stopping, step 1: stop accepting connections, answer requests that
 * come in on open ones with 503, and wait up to grace_ns for the requests
 * being served (a scrape waiting on its collection) to finish. Returns how
 * many are still being served: 0, or more when the grace ran out - then
 * the caller exits without http_stop, which would wait for them. */
int http_drain(http_server *s, uint64_t grace_ns);
/* Stop serving and free the server: waits for every connection's thread
 * (after http_drain returned 0, none is in a collection). */
void http_stop(http_server *s);

/* Parse an Accept header: EXPO_PROTO when it prefers (or ranks as high as
 * the others) the protobuf format's delimited MetricFamily stream,
 * EXPO_OPENMETRICS when it prefers OpenMetrics (1.0.0 or 0.0.1) to the
 * text format, else EXPO_TEXT; *om_version gets the OpenMetrics version to
 * answer with. Exposed for the tests' sake. */
int http_negotiate(const char *accept, const char **om_version);
/* Does an Accept-Encoding header accept gzip? */
int http_accepts_gzip(const char *accept_encoding);

#endif /* PCW_EXPORTER_HTTP_H */
