/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_histogram.c - pcw-exporter's histograms (issue 27):
 * the classic form in the text format (checked by promtool), the choice
 * of the protobuf format from the Accept header (curl, as a scraper sends
 * it), and the protobuf body decoded with the protobuf-c code generated
 * from client_model's metrics.proto: every family there, a histogram's
 * classic and native fields equal to the buckets the core's own index
 * gives the known observations. Prometheus itself reading both forms is
 * tests/test_exporter_prometheus.c's.
 *
 * The provider (tests/helpers/exporter_hist_provider.c) and the exporter
 * are real processes; the observations come from a fixed seed.
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "helpers/exporter_hist.h"
#include "io/prometheus/client/metrics.pb-c.h"

TestSuite(exporter_histogram, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

#define PROTO_ACCEPT EX_PROTO_TYPE
#define LAT          "pcw_hist_test_latency_seconds"

typedef struct fixture {
    uint64_t *v;
    tu_child pv;
    exporter e;
} fixture;

/* The provider after one round of EH_N observations, and an exporter. */
static void start(fixture *f, const char *const *exporter_args)
{
    f->v = malloc(EH_N * sizeof *f->v);
    cr_assert_not_null(f->v);
    eh_values(f->v, EH_N);
    eh_provider(&f->pv, f->v, EH_N);
    char reply[64];
    cr_assert(tu_command(&f->pv, reply, sizeof reply, "round") > 0 &&
                  strcmp(reply, "ok 20000") == 0,
              "round: %s", reply);
    ex_start(&f->e, exporter_args);
}

static void stop(fixture *f)
{
    ex_stop(&f->e);
    ep_stop(&f->pv);
    free(f->v);
}

/* The same observations in a histogram of the provider's shape, by the
 * core's observe (pcw/histogram.h): what the exporter must hand on. */
static uint64_t *reference(const uint64_t *v)
{
    uint64_t *w = calloc(pcw_hist_bytes(EH_SHAPE) / 8, sizeof *w);
    cr_assert_not_null(w);
    for (size_t i = 0; i < EH_N; i++)
        pcw_histogram_observe(w, EH_SHAPE, v[i]);
    return w;
}

/* The reference's sum in seconds as the exact decimal fraction. */
static const char *ref_sum(const uint64_t *ref)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "%llu.%09llu", (unsigned long long)(ref[0] / 1000000000u),
             (unsigned long long)(ref[0] % 1000000000u));
    return buf;
}

/* curl with an Accept header (none when NULL): the response's
 * Content-Type; the body into the root's file `body`. */
static void curl_type(const exporter *e, const char *accept, char *type, size_t cap)
{
    char out[400], body[400];
    ex_path(out, sizeof out, "curl.out");
    ex_path(body, sizeof body, "body");
    int rc = accept ? ex_sh("curl -sS -o %s -w '%%{content_type}' -H 'Accept: %s' "
                            "http://127.0.0.1:%d/metrics > %s 2>&1",
                            body, accept, e->port, out)
                    : ex_sh("curl -sS -o %s -w '%%{content_type}' http://127.0.0.1:%d/metrics "
                            "> %s 2>&1",
                            body, e->port, out);
    char *t = ex_slurp(out, NULL);
    cr_assert_eq(rc, 0, "curl: %s", t ? t : "?");
    snprintf(type, cap, "%s", t ? t : "");
    free(t);
}

/* The next length-delimited MetricFamily of a protobuf body at *p (before
 * end), decoded by the generated protobuf-c code; *p moves past it. */
static Io__Prometheus__Client__MetricFamily *next_family(const uint8_t **p, const uint8_t *end)
{
    uint64_t len = 0;
    int shift = 0;
    while (*p < end && (**p & 0x80) && shift < 63)
        len |= (uint64_t)(*(*p)++ & 0x7f) << shift, shift += 7;
    cr_assert(*p < end, "truncated length");
    len |= (uint64_t) * (*p)++ << shift;
    cr_assert_leq(len, (uint64_t)(end - *p), "a message past the body's end");
    Io__Prometheus__Client__MetricFamily *mf =
        io__prometheus__client__metric_family__unpack(NULL, len, *p);
    cr_assert_not_null(mf, "a family does not decode");
    *p += len;
    return mf;
}

/* The Accept header picks the format: the protobuf stream when it ranks
 * first (or equal first), as Prometheus with native histograms asks;
 * the text format or OpenMetrics when they rank higher, when the
 * protobuf entry is not the delimited MetricFamily stream, and without
 * a header. gzip applies to the protobuf body as to the others. */
Test(exporter_histogram, accept_negotiates_protobuf)
{
    fixture f;
    start(&f, NULL);
    static const struct {
        const char *accept; /* NULL: no header */
        const char *type;   /* the Content-Type's start */
    } cases[] = {
        {PROTO_ACCEPT ";q=0.7,application/openmetrics-text;version=1.0.0;q=0.5,"
                      "application/openmetrics-text;version=0.0.1;q=0.4,"
                      "text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
         "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
         "encoding=delimited"},
        {PROTO_ACCEPT, "application/vnd.google.protobuf;"},
        {"text/plain;version=0.0.4;q=0.5, " PROTO_ACCEPT ";q=0.5",
         "application/vnd.google.protobuf;"},
        {PROTO_ACCEPT ";q=0.2,text/plain;version=0.0.4;q=0.9", "text/plain; version=0.0.4"},
        {PROTO_ACCEPT ";q=0.5,application/openmetrics-text;version=1.0.0",
         "application/openmetrics-text; version=1.0.0"},
        {"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text",
         "text/plain; version=0.0.4"},
        {"application/vnd.google.protobuf;proto=other.Message;encoding=delimited",
         "text/plain; version=0.0.4"},
        {PROTO_ACCEPT ";q=0", "text/plain; version=0.0.4"},
        {NULL, "text/plain; version=0.0.4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char type[256];
        curl_type(&f.e, cases[i].accept, type, sizeof type);
        cr_expect(strncmp(type, cases[i].type, strlen(cases[i].type)) == 0,
                  "Accept: %s\n  Content-Type %s, want %s...", cases[i].accept, type,
                  cases[i].type);
    }
    /* gzip, as Prometheus asks for it, applies to the protobuf body too. */
    http_resp r;
    cr_assert_eq(http_get(f.e.port, "/metrics", EX_PROTO_ACCEPT "Accept-Encoding: gzip\r\n", &r),
                 200);
    char h[256];
    cr_expect_str_eq(http_header(&r, "Content-Encoding", h, sizeof h), "gzip");
    cr_expect(strncmp(http_header(&r, "Content-Type", h, sizeof h),
                      "application/vnd.google.protobuf;", 32) == 0,
              "Content-Type %s", h);
    cr_expect(r.body_len > 2 && (uint8_t)r.body[0] == 0x1f && (uint8_t)r.body[1] == 0x8b,
              "not a gzip body");
    http_free(&r);
    stop(&f);
}

/* The text format: a histogram family with cumulative _bucket{le} series
 * ending in +Inf, _sum and _count (and OpenMetrics: the same, with its
 * UNIT line, read by the client library's strict parser); the classic bounds are every 2nd power
 * of two (schema -1: 21 bounds of at most 30 over 2^-30 .. 2^12 s), each
 * count exact; promtool accepts it. --histogram.classic-buckets=45 gives
 * every power of two (42 bounds). */
static void text_classic(const char *const *args, int bounds, int schema)
{
    fixture f;
    start(&f, args);
    http_resp r;
    cr_assert_eq(http_get(f.e.port, "/metrics", NULL, &r), 200);
    cr_expect(ex_has_line(r.body, "# TYPE " LAT " histogram"), "no histogram TYPE line");
    cr_expect(ex_has_line(r.body, "# TYPE pcw_hist_test_size histogram"), "no Size histogram");
    uint64_t *ref = reference(f.v);
    int n = 0;
    double prev = 0;
    for (const char *p = strstr(r.body, LAT "_bucket{"); p; p = strstr(p + 1, LAT "_bucket{")) {
        const char *le = strstr(p, "le=\"");
        cr_assert_not_null(le);
        double bound = strtod(le + 4, NULL);
        double count = strtod(strchr(le, '}') + 2, NULL);
        cr_expect_gt(bound, prev, "le values rise");
        prev = bound;
        /* The reference's count at or below the bound. */
        uint64_t want = ref[1];
        for (uint32_t j = 0; j < pcw_hist_nbuckets(EH_SHAPE); j++) {
            double up = exp2((double)(pcw_hist_min_index(EH_SHAPE) + 1 + (int32_t)j) / 8);
            if (up <= bound * (1 + 1e-12))
                want += ref[2 + j];
        }
        cr_expect_eq(count, (double)want, "le=\"%g\": %g, want %llu", bound, count,
                     (unsigned long long)want);
        if (isfinite(bound)) {
            double e = log2(bound) / exp2(-schema);
            cr_expect(fabs(e - round(e)) < 1e-9, "le %g is not a bound of schema %d", bound,
                      schema);
        }
        n++;
    }
    cr_expect_eq(n, bounds + 1, "%d _bucket series, want %d and +Inf", n, bounds);
    cr_expect(isinf(prev), "the last le is +Inf");
    char count[200], sum[200];
    snprintf(count, sizeof count,
             LAT "_count{instance_name=\"api\",provider=\"exporter_hist_provider\",pid=\"%d\"}",
             f.pv.pid);
    snprintf(sum, sizeof sum,
             LAT "_sum{instance_name=\"api\",provider=\"exporter_hist_provider\",pid=\"%d\"}",
             f.pv.pid);
    cr_expect_eq(ex_value(r.body, count), EH_N, "%s", count);
    /* Exactly the nanoseconds' sum in seconds (a decimal fraction). */
    cr_expect_eq(ex_value(r.body, sum), strtod(ref_sum(ref), NULL), "%s", sum);
    ex_promtool_ok(&r, "text format");
    http_free(&r);
    /* OpenMetrics: the same histogram, through its strict parser. */
    cr_assert_eq(http_get(f.e.port, "/metrics", EX_PROM_ACCEPT, &r), 200);
    cr_expect(ex_has_line(r.body, "# UNIT " LAT " seconds"), "no UNIT line");
    ex_openmetrics_ok(&r, "OpenMetrics");
    free(ref);
    http_free(&r);
    stop(&f);
}

Test(exporter_histogram, text_classic_default)
{
    text_classic(NULL, 21, -1);
}

Test(exporter_histogram, text_classic_flag)
{
    const char *args[] = {"--histogram.classic-buckets=45", NULL};
    text_classic(args, 42, 0);
}

/* A bad --histogram.classic-buckets is refused, naming the flag. */
Test(exporter_histogram, classic_buckets_flag_checked)
{
    static const char *const bad[] = {"7", "8194", "x", "-1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char arg[64];
        snprintf(arg, sizeof arg, "--histogram.classic-buckets=%s", bad[i]);
        const char *args[] = {arg, NULL};
        exporter e;
        int st = ex_start_status(&e, args, 1);
        char *log = ex_slurp(e.log, NULL);
        cr_expect_neq(st, 0, "%s accepted", arg);
        cr_expect(log && strstr(log, "--histogram.classic-buckets"), "%s: %s", arg, log);
        free(log);
    }
}

/* The protobuf body: length-delimited MetricFamily messages that
 * protobuf-c's generated decoder reads to the end; counters and gauges
 * are there too; the latency histogram carries the classic buckets and
 * the native ones: schema 3, zero threshold 2^-30 s, zero count, and
 * spans and deltas that give back exactly the reference's buckets. */
Test(exporter_histogram, protobuf_decodes)
{
    fixture f;
    start(&f, NULL);
    http_resp r;
    cr_assert_eq(http_get(f.e.port, "/metrics", EX_PROTO_ACCEPT, &r), 200);
    uint64_t *ref = reference(f.v);
    const uint8_t *p = (const uint8_t *)r.body, *end = p + r.body_len;
    int families = 0, seen_hist = 0, seen_counter = 0, seen_gauge = 0, seen_errors = 0;
    while (p < end) {
        Io__Prometheus__Client__MetricFamily *mf = next_family(&p, end);
        families++;
        cr_expect(mf->n_metric > 0, "%s: no metric", mf->name);
        if (strcmp(mf->name, "pcw_hist_test_requests_total") == 0) {
            seen_counter = 1;
            cr_expect_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
            cr_expect_eq(mf->metric[0]->counter->value, EH_N);
            cr_expect_eq(mf->metric[0]->n_label, 3);
            cr_expect_str_eq(mf->metric[0]->label[0]->name, "instance_name");
            cr_expect_str_eq(mf->metric[0]->label[0]->value, "api");
            cr_expect_str_eq(mf->metric[0]->label[1]->value, "exporter_hist_provider");
            char pid[16];
            snprintf(pid, sizeof pid, "%d", f.pv.pid);
            cr_expect_str_eq(mf->metric[0]->label[2]->value, pid);
        } else if (strcmp(mf->name, "pcw_exporter_providers") == 0) {
            seen_gauge = 1;
            cr_expect_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
            cr_expect_eq(mf->metric[0]->gauge->value, 1);
        } else if (strcmp(mf->name, "pcw_exporter_errors_total") == 0) {
            seen_errors = 1;
            cr_expect_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
            cr_expect_gt(mf->n_metric, 5);
            cr_expect_str_eq(mf->metric[0]->label[0]->name, "cause");
        } else if (strcmp(mf->name, LAT) == 0) {
            seen_hist = 1;
            cr_expect_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
            const Io__Prometheus__Client__Histogram *h = mf->metric[0]->histogram;
            cr_assert_not_null(h);
            cr_expect_eq(h->sample_count, EH_N);
            cr_expect(fabs(h->sample_sum - (double)ref[0] / 1e9) < 1e-9, "sum %g", h->sample_sum);
            cr_expect(h->has_schema && h->schema == 3, "schema %d", h->schema);
            cr_expect_eq(h->zero_threshold, exp2(-30));
            cr_expect_eq(h->zero_count, ref[1]);
            /* Native: every bucket back from the spans and deltas. */
            uint64_t *got = calloc(pcw_hist_nbuckets(EH_SHAPE), sizeof *got);
            int32_t idx = 0;
            int64_t count = 0;
            size_t d = 0;
            for (size_t s = 0; s < h->n_positive_span; s++) {
                idx += h->positive_span[s]->offset;
                for (uint32_t k = 0; k < h->positive_span[s]->length; k++, idx++) {
                    cr_assert_lt(d, h->n_positive_delta);
                    count += h->positive_delta[d++];
                    int32_t j = idx - pcw_hist_min_index(EH_SHAPE) - 1;
                    cr_assert(j >= 0 && (uint32_t)j < pcw_hist_nbuckets(EH_SHAPE),
                              "bucket index %d outside the shape", idx);
                    got[j] = (uint64_t)count;
                }
            }
            cr_expect_eq(d, h->n_positive_delta);
            for (uint32_t j = 0; j < pcw_hist_nbuckets(EH_SHAPE); j++)
                cr_expect_eq(got[j], ref[2 + j], "native bucket %d: %llu, want %llu",
                             pcw_hist_min_index(EH_SHAPE) + 1 + (int32_t)j,
                             (unsigned long long)got[j], (unsigned long long)ref[2 + j]);
            free(got);
            /* Classic: the same bounds as the text format, cumulative. */
            cr_expect_eq(h->n_bucket, 21);
            uint64_t prev = 0;
            for (size_t k = 0; k < h->n_bucket; k++) {
                cr_expect_geq(h->bucket[k]->cumulative_count, prev);
                prev = h->bucket[k]->cumulative_count;
            }
            cr_expect_eq(h->bucket[0]->upper_bound, exp2(-30));
            cr_expect_eq(h->bucket[h->n_bucket - 1]->upper_bound, exp2(10));
            cr_expect_eq(prev, EH_N, "every observation is below 1024 s");
        }
        io__prometheus__client__metric_family__free_unpacked(mf, NULL);
    }
    cr_expect(seen_hist && seen_counter && seen_gauge && seen_errors,
              "families: histogram %d, counter %d, gauge %d, errors %d (of %d)", seen_hist,
              seen_counter, seen_gauge, seen_errors, families);
    free(ref);
    http_free(&r);
    stop(&f);
}

/* A histogram whose words count 2^63 observations or more - only a
 * hostile or corrupt segment holds that - is left out for that instance
 * in every format (its counts cannot be written as they are); the
 * scrape, the other counters and the other histogram are served, the
 * text still passes promtool and the protobuf still decodes. */
Test(exporter_histogram, hostile_counts_left_out)
{
    fixture f;
    start(&f, NULL);
    char reply[64];
    cr_assert(tu_command(&f.pv, reply, sizeof reply, "poke latency 2 9223372036854775808") > 0 &&
                  strcmp(reply, "ok") == 0,
              "poke: %s", reply);
    http_resp r;
    cr_assert_eq(http_get(f.e.port, "/metrics", NULL, &r), 200);
    cr_expect(ex_has_line(r.body, "# TYPE " LAT " histogram"), "the family's lines stay");
    cr_expect_null(strstr(r.body, LAT "_bucket{"), "the hostile histogram was written");
    cr_expect_null(strstr(r.body, LAT "_count{"), "the hostile histogram was written");
    cr_expect_not_null(strstr(r.body, "pcw_hist_test_size_bucket{"), "Size left out too");
    cr_expect_not_null(strstr(r.body, "pcw_hist_test_requests_total{"), "Requests left out");
    ex_promtool_ok(&r, "a hostile histogram");
    http_free(&r);
    cr_assert_eq(http_get(f.e.port, "/metrics", EX_PROTO_ACCEPT, &r), 200);
    const uint8_t *p = (const uint8_t *)r.body, *end = p + r.body_len;
    int size = 0;
    while (p < end) {
        Io__Prometheus__Client__MetricFamily *mf = next_family(&p, end);
        cr_expect_str_neq(mf->name, LAT, "the hostile histogram was encoded");
        size += strcmp(mf->name, "pcw_hist_test_size") == 0;
        io__prometheus__client__metric_family__free_unpacked(mf, NULL);
    }
    cr_expect_eq(size, 1, "the Size histogram is there");
    http_free(&r);
    stop(&f);
}
