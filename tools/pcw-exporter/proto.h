/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/proto.h - Prometheus' protobuf exposition format
 * (proto.c): length-delimited io.prometheus.client.MetricFamily messages,
 * encoded with protobuf-c from client_model's metrics.proto (the encoder
 * is generated at build time from Debian's
 * golang-github-prometheus-client-model-dev; nothing of it is copied
 * here). The only format that carries native histograms.
 *
 * A family is built metric by metric (proto_add_*) and written whole
 * (proto_fam_end). The strings handed in (names, help, label values) are
 * kept by pointer until proto_fam_end and must be valid UTF-8 (expo.h's
 * expo_utf8). One builder per thread.
 */
#ifndef PCW_EXPORTER_PROTO_H
#define PCW_EXPORTER_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "classic.h"
#include "expo.h"

/* The Content-Type of the format, and the media type a scraper's Accept
 * header names it with. */
#define PROTO_CONTENT_TYPE                                                                         \
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "                   \
    "encoding=delimited"
#define PROTO_MEDIA_TYPE "application/vnd.google.protobuf"

typedef struct proto_fam proto_fam;

typedef struct proto_label {
    const char *name, *value;
} proto_label;

/* A histogram's metric: the classic buckets (plan->n finite bounds with
 * their cumulative counts cum[0..n); the +Inf bucket is the count) and
 * the native ones (bucket j of `buckets` has index first_index + j). */
typedef struct proto_hist {
    uint64_t count; /* below 2^63 */
    double sum;
    const classic *plan;
    const uint64_t *cum;
    int schema;
    double zero_threshold;
    uint64_t zero_count;
    const uint64_t *buckets;
    uint32_t nbuckets;
    int32_t first_index;
} proto_hist;

proto_fam *proto_fam_new(void);
void proto_fam_free(proto_fam *f);
/* Start a family of metric type mt (MT_*, mapping.h). */
void proto_fam_begin(proto_fam *f, const char *name, const char *help, int mt);
/* A metric of a counter or gauge family. 0, or -1 when out of memory. */
int proto_add_number(proto_fam *f, const proto_label *l, size_t nl, double v);
/* A metric of a summary family (no quantiles). */
int proto_add_summary(proto_fam *f, const proto_label *l, size_t nl, uint64_t count, double sum);
/* A metric of a histogram family. */
int proto_add_histogram(proto_fam *f, const proto_label *l, size_t nl, const proto_hist *h);
/* Append the family, length-delimited, to out (nothing when it has no
 * metric), and forget it. */
void proto_fam_end(proto_fam *f, ebuf *out);

#endif /* PCW_EXPORTER_PROTO_H */
