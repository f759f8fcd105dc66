/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter.c - pcw-exporter against real providers: the
 * mapping of every counter kind, both formats (checked by promtool and by
 * the Prometheus client library's OpenMetrics parser), negotiation, gzip,
 * hostile names, routes, filters, a late callback provider, name
 * collisions, flags.
 *
 * The exporter and the providers are real processes
 * (tests/helpers/exporter_provider.c, build/pcw-exporter); the tests talk
 * HTTP to it on loopback.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <zlib.h>

#include "helpers/exporter_test.h"
#include "pcw/version.h"

TestSuite(exporter, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* exporter_provider's "kinds" counters, by index. */
enum {
    K_LEVEL,
    K_REQUESTS,
    K_HITS,
    K_HITS_BASE,
    K_SAMPLED,
    K_SAMPLED_BASE,
    K_LATENCY,
    K_LATENCY_BASE,
    K_SIZE,
    K_SIZE_BASE,
    K_BUSY,
    K_BUSY_FINE,
    K_IDLE,
    K_QUEUE,
    K_UPTIME,
    K_CHANGES,
    K_WORKERS_BUSY,
    K_WORKERS,
    K_PRECISE,
    K_PRECISE_STAMP,
};

static const char OM_ACCEPT[] = "Accept: application/openmetrics-text;version=1.0.0,"
                                "application/openmetrics-text;version=0.0.1;q=0.75,"
                                "text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n";

/* A provider "prov" with "Kinds" (instance alpha, known values) and "Solo"
 * (no instances). */
static void kinds_provider(tu_child *p)
{
    ep_start(p, "prov");
    ep_cmd(p, NULL, "kinds Kinds");
    ep_cmd(p, NULL, "create Kinds alpha");
    static const struct {
        int k;
        double v;
    } vals[] = {
        {K_LEVEL, 42},          {K_REQUESTS, 1000},  {K_HITS, 3},
        {K_HITS_BASE, 4},       {K_SAMPLED, 5},      {K_SAMPLED_BASE, 10},
        {K_LATENCY, 2e9},       {K_LATENCY_BASE, 4}, {K_SIZE, 100},
        {K_SIZE_BASE, 4},       {K_BUSY, 1.5e9},     {K_BUSY_FINE, 1.5e7},
        {K_IDLE, 2.5e8},        {K_QUEUE, 3e9},      {K_CHANGES, 7},
        {K_WORKERS_BUSY, 2e7},  {K_WORKERS, 4},      {K_PRECISE, 5e6},
        {K_PRECISE_STAMP, 2e7},
    };
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        ep_cmd(p, NULL, "set Kinds alpha %d %.0f", vals[i].k, vals[i].v);
    ep_cmd(p, NULL, "single Solo");
    ep_cmd(p, NULL, "set Solo - 0 9");
}

static void scrape(const exporter *e, const char *extra, http_resp *r)
{
    cr_assert_eq(http_get(e->port, "/metrics", extra, r), 200);
}

Test(exporter, text_format_maps_every_kind)
{
    tu_child p;
    kinds_provider(&p);
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    scrape(&e, NULL, &r);
    char h[256];
    cr_expect_str_eq(http_header(&r, "Content-Type", h, sizeof h),
                     "text/plain; version=0.0.4; charset=utf-8");
    char lab[128], line[512];
    snprintf(lab, sizeof lab, "{instance_name=\"alpha\",provider=\"prov\",pid=\"%d\"}", p.pid);
    static const struct {
        const char *name;
        const char *value;
    } want[] = {
        {"pcw_kinds_level", "42"},
        {"pcw_kinds_requests_total", "1000"},
        {"pcw_kinds_hits", "3"},
        {"pcw_kinds_hits_base", "4"},
        {"pcw_kinds_sampled_total", "5"},
        {"pcw_kinds_sampled_base_total", "10"},
        {"pcw_kinds_latency_seconds_sum", "2"},
        {"pcw_kinds_latency_seconds_count", "4"},
        {"pcw_kinds_size_sum", "100"},
        {"pcw_kinds_size_count", "4"},
        {"pcw_kinds_busy_seconds_total", "1.5"},
        {"pcw_kinds_busy_fine_seconds_total", "1.5"},
        {"pcw_kinds_idle_seconds_total", "0.25"},
        {"pcw_kinds_queue_seconds_total", "3"},
        {"pcw_kinds_changes_total", "7"},
        {"pcw_kinds_workers_busy_seconds_total", "2"},
        {"pcw_kinds_workers_busy_base", "4"},
        {"pcw_kinds_precise_seconds_total", "0.5"},
        {"pcw_kinds_precise_base_seconds_total", "2"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        snprintf(line, sizeof line, "%s%s %s", want[i].name, lab, want[i].value);
        cr_expect(ex_has_line(r.body, line), "missing: %s", line);
    }
    snprintf(line, sizeof line, "pcw_kinds_uptime_seconds%s", lab);
    cr_expect_gt(ex_value(r.body, line), 0, "an elapsed time in seconds");
    static const char *const heads[] = {
        "# TYPE pcw_kinds_level gauge",
        "# HELP pcw_kinds_level A level. (PERF_COUNTER_LARGE_RAWCOUNT)",
        "# TYPE pcw_kinds_requests_total counter",
        "# HELP pcw_kinds_requests_total Requests served. (PERF_COUNTER_BULK_COUNT)",
        "# TYPE pcw_kinds_hits_base gauge",
        "# HELP pcw_kinds_hits_base Base (denominator) of pcw_kinds_hits.",
        "# TYPE pcw_kinds_latency_seconds summary",
        "# TYPE pcw_kinds_busy_seconds_total counter",
        "# TYPE pcw_kinds_uptime_seconds gauge",
        "# TYPE pcw_solo_level gauge",
    };
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        cr_expect(ex_has_line(r.body, heads[i]), "missing: %s", heads[i]);
    /* A set without instances: no instance_name label. */
    snprintf(line, sizeof line, "pcw_solo_level{provider=\"prov\",pid=\"%d\"} 9", p.pid);
    cr_expect(ex_has_line(r.body, line), "missing: %s", line);
    /* Bases only as their counter's base; nodata not at all; no totals. */
    cr_expect(!strstr(r.body, "pcw_kinds_hits_base_base"));
    cr_expect(!strstr(r.body, "pcw_kinds_latency_base"));
    cr_expect(!strstr(r.body, "pcw_kinds_notes"));
    cr_expect(!strstr(r.body, "_Total"));
    cr_expect(ex_has_line(r.body, "pcw_exporter_build_info{version=\"" PCW_VERSION_STRING "\"} 1"));
    cr_expect_eq(ex_value(r.body, "pcw_exporter_providers"), 1);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_providers_up"), 1);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_countersets"), 2);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_late_countersets"), 0);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_scrape_duration_seconds"), 0);
    ex_promtool_ok(&r, "text format");
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

Test(exporter, openmetrics_format)
{
    tu_child p;
    kinds_provider(&p);
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    scrape(&e, OM_ACCEPT, &r);
    char h[256];
    cr_expect_str_eq(http_header(&r, "Content-Type", h, sizeof h),
                     "application/openmetrics-text; version=1.0.0; charset=utf-8");
    cr_expect(r.body_len > 6 && strcmp(r.body + r.body_len - 6, "# EOF\n") == 0, "ends with # EOF");
    char lab[128], line[512];
    snprintf(lab, sizeof lab, "{instance_name=\"alpha\",provider=\"prov\",pid=\"%d\"}", p.pid);
    snprintf(line, sizeof line, "pcw_kinds_requests_total%s 1000", lab);
    cr_expect(ex_has_line(r.body, line), "missing: %s", line);
    cr_expect(ex_has_line(r.body, "# TYPE pcw_kinds_requests counter"));
    cr_expect(ex_has_line(r.body, "# HELP pcw_kinds_requests Requests served. "
                                  "(PERF_COUNTER_BULK_COUNT)"));
    cr_expect(ex_has_line(r.body, "# TYPE pcw_kinds_busy_seconds counter"));
    cr_expect(ex_has_line(r.body, "# UNIT pcw_kinds_busy_seconds seconds"));
    cr_expect(ex_has_line(r.body, "# TYPE pcw_exporter_scrapes counter"));
    ex_openmetrics_ok(&r, "OpenMetrics");
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

/* Nothing published: the exporter's own metrics alone, valid both ways. */
Test(exporter, no_providers)
{
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    scrape(&e, NULL, &r);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_providers"), 0);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_series"), 0);
    ex_promtool_ok(&r, "no providers, text");
    http_free(&r);
    scrape(&e, OM_ACCEPT, &r);
    ex_openmetrics_ok(&r, "no providers, OpenMetrics");
    http_free(&r);
    ex_stop(&e);
}

Test(exporter, negotiation_and_gzip)
{
    tu_child p;
    kinds_provider(&p);
    exporter e;
    ex_start(&e, NULL);
    static const struct {
        const char *accept;
        const char *type;
    } cases[] = {
        {"", "text/plain; version=0.0.4; charset=utf-8"},
        {"Accept: */*\r\n", "text/plain; version=0.0.4; charset=utf-8"},
        {"Accept: text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5\r\n",
         "text/plain; version=0.0.4; charset=utf-8"},
        {"Accept: application/openmetrics-text; version=0.0.1\r\n",
         "application/openmetrics-text; version=0.0.1; charset=utf-8"},
        {"Accept: application/openmetrics-text;version=2.0.0,text/plain;q=0.1\r\n",
         "text/plain; version=0.0.4; charset=utf-8"},
        {"Accept: application/openmetrics-text\r\n",
         "application/openmetrics-text; version=1.0.0; charset=utf-8"},
    };
    http_resp r;
    char h[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scrape(&e, cases[i].accept, &r);
        cr_expect_str_eq(http_header(&r, "Content-Type", h, sizeof h), cases[i].type, "%s",
                         cases[i].accept);
        http_free(&r);
    }
    /* gzip: the same exposition, compressed. */
    scrape(&e, "Accept-Encoding: gzip, deflate\r\n", &r);
    cr_expect_str_eq(http_header(&r, "Content-Encoding", h, sizeof h), "gzip");
    char f[400], out[400];
    ex_save(&r, "metrics.gz", f, sizeof f);
    ex_path(out, sizeof out, "gunzipped.txt");
    cr_assert_eq(ex_sh("gzip -dc < %s > %s", f, out), 0, "not gzip");
    size_t n;
    char *plain = ex_slurp(out, &n);
    cr_assert(plain);
    cr_expect_gt(n, r.body_len, "compressed");
    char line[256];
    snprintf(line, sizeof line,
             "pcw_kinds_level{instance_name=\"alpha\",provider=\"prov\",pid=\"%d\"} 42", p.pid);
    cr_expect(ex_has_line(plain, line));
    free(plain);
    http_free(&r);
    scrape(&e, "Accept-Encoding: gzip;q=0, identity\r\n", &r);
    cr_expect_str_eq(http_header(&r, "Content-Encoding", h, sizeof h), "", "gzip;q=0 refuses");
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

/* text without the exporter's own series (pcw_exporter_*: a duration and
 * counts that differ between two scrapes), in a new string. */
static char *without_self(const char *text, size_t n)
{
    char *out = malloc(n + 1);
    cr_assert(out);
    size_t len = 0;
    for (const char *line = text; line < text + n;) {
        const char *nl = memchr(line, '\n', (size_t)(text + n - line));
        const char *end = nl ? nl + 1 : text + n;
        if (!memmem(line, (size_t)(end - line), "pcw_exporter_", 13)) {
            memcpy(out + len, line, (size_t)(end - line));
            len += (size_t)(end - line);
        }
        line = end;
    }
    out[len] = 0;
    return out;
}

/* A gzip body: one member, nothing after it (clients that read one member
 * only see all of it), decoded by zlib; NULL when it is not. */
static char *gunzip_one_member(const char *gz, size_t n, size_t *len)
{
    size_t cap = 64 * n + 4096;
    char *out = malloc(cap + 1);
    cr_assert(out);
    z_stream z;
    memset(&z, 0, sizeof z);
    cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    int rc = inflate(&z, Z_FINISH);
    *len = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END || z.avail_in != 0) {
        free(out);
        return NULL;
    }
    out[*len] = 0;
    return out;
}

/* gzip bodies from small to many MB (igzip's blocks, the output growing)
 * decode - with zlib as one member, and with curl --compressed, a real
 * client - to exactly the plain body (but for the exporter's own series,
 * which differ between two scrapes); a client that does not ask for gzip
 * gets plain text. */
Test(exporter, gzip_bodies_decode_to_the_plain_body)
{
    tu_child p;
    ep_start(&p, "gz");
    /* Raw counters only: their values stay while the test scrapes. */
    ep_cmd(&p, NULL, "pair Gz Requests Bytes");
    exporter e;
    ex_start(&e, NULL);
    /* Instances added before each round (names of other lengths than
     * those before): the body grows from about 5 kB to about 5 MB. */
    static const char *const grow[] = {NULL, "bulk Gz 40 100", "bulk Gz 400 200",
                                       "bulk Gz 8000 250"};
    for (size_t i = 0; i < sizeof grow / sizeof grow[0]; i++) {
        if (grow[i])
            ep_cmd(&p, NULL, "%s", grow[i]);
        http_resp plain, gz;
        char h[256];
        scrape(&e, NULL, &plain);
        cr_expect_str_eq(http_header(&plain, "Content-Encoding", h, sizeof h), "",
                         "round %zu: gzip not asked for", i);
        scrape(&e, "Accept-Encoding: gzip\r\n", &gz);
        cr_expect_str_eq(http_header(&gz, "Content-Encoding", h, sizeof h), "gzip", "round %zu", i);
        size_t n;
        char *text = gunzip_one_member(gz.body, gz.body_len, &n);
        cr_assert(text, "round %zu: %zu bytes are not one gzip member", i, gz.body_len);
        if (i > 0)
            cr_expect_lt(gz.body_len, n / 4, "round %zu: %zu bytes compressed to %zu", i, n,
                         gz.body_len);
        char *want = without_self(plain.body, plain.body_len), *got = without_self(text, n);
        static const size_t least[] = {100, 10000, 100000, 2000000};
        cr_expect_gt(strlen(want), least[i], "round %zu: a body of %zu bytes", i, strlen(want));
        cr_expect(strcmp(got, want) == 0,
                  "round %zu: the gzip body (%zu bytes) is not the plain one (%zu)", i, strlen(got),
                  strlen(want));
        free(got), free(text);

        /* curl as a client: the same text. */
        char body[400], head[400];
        ex_path(body, sizeof body, "curl.body");
        ex_path(head, sizeof head, "curl.head");
        cr_assert_eq(ex_sh("curl -sS --compressed -D %s -o %s http://127.0.0.1:%d/metrics", head,
                           body, e.port),
                     0);
        char *heads = ex_slurp(head, NULL), *curled = ex_slurp(body, &n);
        cr_assert(heads && curled);
        cr_expect(strcasestr(heads, "\r\nContent-Encoding: gzip\r\n"), "curl was sent: %s", heads);
        got = without_self(curled, n);
        cr_expect(strcmp(got, want) == 0, "round %zu: curl read %zu bytes, not the plain %zu", i,
                  strlen(got), strlen(want));
        free(got), free(curled), free(heads), free(want);
        http_free(&plain), http_free(&gz);
    }
    ex_stop(&e);
    ep_stop(&p);
}

/* Names no text format can take as they are: quotes, backslashes,
 * newlines, bytes that are not UTF-8 (only a hostile segment has those),
 * in instance and provider names. */
Test(exporter, hostile_names)
{
    tu_child p;
    ep_start(&p, "pro\"v\\x");
    ep_cmd(&p, NULL, "kinds Hostile");
    ep_cmd(&p, NULL, "create Hostile q\\\"uo\\\\te\\nnew\\sline");
    ep_cmd(&p, NULL, "create Hostile badutf");
    /* "b", 0xFF, "d", an overlong 0xC0 0xAF, a lone 0xEE. */
    ep_cmd(&p, NULL, "poke Hostile badutf 62ff64c0afee");
    ep_cmd(&p, NULL, "create Hostile caf\\xc3\\xa9");
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    scrape(&e, NULL, &r);
    char line[512];
    snprintf(line, sizeof line,
             "pcw_hostile_level{instance_name=\"q\\\"uo\\\\te\\nnew line\",provider=\"pro\\\"v\\\\"
             "x\",pid=\"%d\"} 0",
             p.pid);
    cr_expect(ex_has_line(r.body, line), "missing: %s", line);
    snprintf(line, sizeof line,
             "pcw_hostile_level{instance_name=\"b\xef\xbf\xbd"
             "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\",provider=\"pro\\\"v\\\\x\",pid=\"%d\"} 0",
             p.pid);
    cr_expect(ex_has_line(r.body, line), "invalid UTF-8 replaced by U+FFFD: %s", line);
    snprintf(
        line, sizeof line,
        "pcw_hostile_level{instance_name=\"caf\xc3\xa9\",provider=\"pro\\\"v\\\\x\",pid=\"%d\"} "
        "0",
        p.pid);
    cr_expect(ex_has_line(r.body, line), "valid UTF-8 kept: %s", line);
    ex_promtool_ok(&r, "hostile names, text");
    http_free(&r);
    scrape(&e, OM_ACCEPT, &r);
    ex_openmetrics_ok(&r, "hostile names, OpenMetrics");
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

Test(exporter, routes)
{
    exporter e;
    const char *args[] = {"--web.telemetry-path=/pcw/metrics", NULL};
    ex_start(&e, args);
    http_resp r;
    char h[128];
    cr_expect_eq(http_get(e.port, "/", NULL, &r), 200);
    cr_expect_str_eq(http_header(&r, "Content-Type", h, sizeof h), "text/html; charset=utf-8");
    cr_expect(strstr(r.body, "<a href=\"/pcw/metrics\">"), "the landing page links the metrics");
    cr_expect(strstr(r.body, PCW_VERSION_STRING));
    http_free(&r);
    cr_expect_eq(http_get(e.port, "/pcw/metrics", NULL, &r), 200);
    cr_expect(strstr(r.body, "pcw_exporter_scrapes_total"));
    http_free(&r);
    cr_expect_eq(http_get(e.port, "/metrics", NULL, &r), 404);
    http_free(&r);
    cr_expect_eq(http_request(e.port, "POST", "/pcw/metrics", NULL, 10000, &r), 405);
    cr_expect_str_eq(http_header(&r, "Allow", h, sizeof h), "GET, HEAD");
    http_free(&r);
    cr_expect_eq(http_request(e.port, "HEAD", "/pcw/metrics", NULL, 10000, &r), 200);
    cr_expect_eq(r.body_len, 0);
    cr_expect_neq(atol(http_header(&r, "Content-Length", h, sizeof h)), 0);
    http_free(&r);
    ex_stop(&e);
}

Test(exporter, counterset_filters)
{
    tu_child p;
    ep_start(&p, "filt");
    ep_cmd(&p, NULL, "kinds Alpha\\sOne");
    ep_cmd(&p, NULL, "kinds Alpha\\sTwo");
    ep_cmd(&p, NULL, "kinds Beta");
    exporter e;
    const char *args[] = {"--collector.counterset=alpha*", "--collector.counterset", "Beta",
                          "--collector.exclude=*two", NULL};
    ex_start(&e, args);
    http_resp r;
    scrape(&e, NULL, &r);
    cr_expect(strstr(r.body, "# TYPE pcw_alpha_one_level gauge"));
    cr_expect(strstr(r.body, "# TYPE pcw_beta_level gauge"));
    cr_expect(!strstr(r.body, "pcw_alpha_two_"), "excluded");
    cr_expect_eq(ex_value(r.body, "pcw_exporter_countersets"), 2);
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

/* A callback provider that does not answer in time is left out of the
 * scrape and counted; the rest is served, within the scraper's timeout. */
Test(exporter, late_callback_provider_left_out)
{
    tu_child p, cb;
    kinds_provider(&p);
    ep_start(&cb, "slowpoke");
    ep_cmd(&cb, NULL, "callback Slow");
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    scrape(&e, NULL, &r);
    cr_expect(strstr(r.body, "pcw_slow_items_total{instance_name=\"cb-0\""), "answers at first");
    http_free(&r);
    ep_cmd(&cb, NULL, "block Slow");
    /* The scraper gives up after 1 s: the exporter waits 0.5 s (1 s minus
     * the default offset), then serves what it has. */
    long long t0 = tu_now_ms();
    scrape(&e, "X-Prometheus-Scrape-Timeout-Seconds: 1\r\n", &r);
    long long took = tu_now_ms() - t0;
    char n[16];
    ep_cmd(&cb, n, "collects Slow");
    cr_expect_geq(atoi(n), 2, "the callback was asked");
    cr_expect(!strstr(r.body, "pcw_slow_items_total{"), "the late provider's series left out");
    cr_expect(strstr(r.body, "# TYPE pcw_slow_items_total counter"), "its family still described");
    cr_expect(strstr(r.body, "pcw_kinds_level{instance_name=\"alpha\""), "the rest served");
    cr_expect_eq(ex_value(r.body, "pcw_exporter_late_countersets"), 1);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_callback_timeouts_total"), 1);
    cr_expect_lt(ex_value(r.body, "pcw_exporter_scrape_budget_seconds"), 0.6);
    cr_log_info("a scrape with a provider that never answered took %lld ms", took);
    ex_promtool_ok(&r, "late provider");
    http_free(&r);
    ep_cmd(&cb, NULL, "release Slow");
    /* Answering again: back in. */
    long long deadline = tu_now_ms() + 20000;
    for (;;) {
        scrape(&e, "X-Prometheus-Scrape-Timeout-Seconds: 10\r\n", &r);
        int back = strstr(r.body, "pcw_slow_items_total{instance_name=\"cb-0\"") != NULL;
        http_free(&r);
        if (back)
            break;
        cr_assert_lt(tu_now_ms(), deadline, "the provider never came back");
    }
    ex_stop(&e);
    ep_stop(&cb);
    ep_stop(&p);
}

/* Two counter names that sanitise alike: one family, counted; two
 * instance names that are the same once made valid: one series, counted. */
Test(exporter, collisions_and_duplicates)
{
    tu_child p;
    ep_start(&p, "coll");
    ep_cmd(&p, NULL, "pair Dup Items/Run Items\\sper\\sRun");
    ep_cmd(&p, NULL, "create Dup x1");
    ep_cmd(&p, NULL, "create Dup x2");
    ep_cmd(&p, NULL, "poke Dup x1 78ff");
    ep_cmd(&p, NULL, "poke Dup x2 78fe");
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    scrape(&e, NULL, &r);
    const char *fam = "# TYPE pcw_dup_items_per_run gauge";
    const char *first = strstr(r.body, fam);
    cr_expect(first && !strstr(first + 1, fam), "one family pcw_dup_items_per_run");
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"name_collision\"}"), 1);
    cr_expect_geq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"duplicate_series\"}"), 1);
    size_t series = 0;
    for (const char *s = strstr(r.body, "\npcw_dup_items_per_run{"); s;
         s = strstr(s + 1, "\npcw_dup_items_per_run{"))
        series++;
    cr_expect_eq(series, 1, "x\\xff and x\\xfe are one label value: one series");
    ex_promtool_ok(&r, "collisions");
    http_free(&r);
    scrape(&e, OM_ACCEPT, &r);
    ex_openmetrics_ok(&r, "collisions, OpenMetrics");
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

/* Run the exporter with args; its exit status and log. */
static int run_exporter(const char *const *args, char **log)
{
    exporter e;
    int st = ex_start_status(&e, args, 1);
    *log = ex_slurp(e.log, NULL);
    return st;
}

Test(exporter, flags)
{
    char out[400];
    ex_path(out, sizeof out, "help.out");
    char bin[400];
    snprintf(bin, sizeof bin, "%s/pcw-exporter",
             getenv("PCW_BUILD") ? getenv("PCW_BUILD") : PCW_BUILD_DIR);
    cr_expect_eq(ex_sh("%s --help > %s 2>&1", bin, out), 0);
    char *text = ex_slurp(out, NULL);
    cr_expect(text && strstr(text, "--web.listen-address") && strstr(text, "127.0.0.1:10158"));
    free(text);
    cr_expect_eq(ex_sh("%s --version > %s 2>&1", bin, out), 0);
    text = ex_slurp(out, NULL);
    cr_expect(text && strcmp(text, "pcw-exporter (pcw) " PCW_VERSION_STRING "\n") == 0);
    free(text);
    static const struct {
        const char *arg;
        const char *says;
    } usage[] = {
        {"--no-such-flag", "unknown flag --no-such-flag"},
        {"--web.telemetry-path=metrics", "--web.telemetry-path must be a path"},
        {"--collector.timeout=soon", "bad duration"},
        {"--log.level=loud", "--log.level must be"},
        {"stray", "unexpected argument"},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        cr_expect_eq(ex_sh("%s %s > %s 2>&1", bin, usage[i].arg, out), 2, "%s", usage[i].arg);
        text = ex_slurp(out, NULL);
        cr_expect(text && strstr(text, usage[i].says), "%s: %s", usage[i].arg, text);
        free(text);
    }
    char *log;
    const char *bad_addr[] = {"--web.listen-address=127.0.0.1", NULL};
    cr_expect_eq(run_exporter(bad_addr, &log), 1);
    cr_expect(log && strstr(log, "is not host:port"), "%s", log);
    free(log);
    /* The port is taken: by an exporter already listening on it. */
    exporter first;
    ex_start(&first, NULL);
    char taken[64];
    snprintf(taken, sizeof taken, "--web.listen-address=127.0.0.1:%d", first.port);
    const char *busy[] = {taken, NULL};
    cr_expect_eq(run_exporter(busy, &log), 1);
    cr_expect(log && strstr(log, "cannot listen on"), "%s", log);
    free(log);
    ex_stop(&first);
}

/* --web.config.file mistakes: each refused, naming the line and the key. */
Test(exporter, web_config_errors)
{
    static const struct {
        const char *yaml;
        const char *says;
    } cases[] = {
        {"tls_server_config:\n  cert_file: a.crt\n", "needs both cert_file and key_file"},
        {"basic_auth_users:\n  alice: plaintext\n", ":2: the password of "},
        {"tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: [x]\n",
         ":4: tls_server_config.cipher_suites is not supported"},
        {"basic_auth_users: {}\nweb_typo: 1\n", ":2: unknown key "},
        {"http_server_config:\n  http2: true\n", "http2: true is not supported"},
        {"http_server_config:\n  headers:\n    Server: pcw\n", ":3: header "},
        {"tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: SSL3\n",
         "min_version must be TLS10"},
        {"basic_auth_users:\n  - alice\n", "must map user names"},
        {"tls_server_config: [\n", "web.yml:"},
        {"tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n", "missing.crt"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[400], arg[440];
        ex_path(path, sizeof path, "web.yml");
        cr_assert_eq(tu_write_file(path, cases[i].yaml, strlen(cases[i].yaml), 0600), 0);
        snprintf(arg, sizeof arg, "--web.config.file=%s", path);
        const char *args[] = {arg, NULL};
        char *log;
        cr_expect_eq(run_exporter(args, &log), 1, "%s", cases[i].yaml);
        cr_expect(log && strstr(log, cases[i].says), "%s -> %s", cases[i].yaml, log);
        free(log);
    }
}

/* Scrapes and page views at once, from several connections: each served
 * whole (the scrapes take turns in the collector; buffers go back to the
 * pool as responses finish). Run against a ThreadSanitizer build of the
 * exporter too (docs/exporter.md, "Testing"). */
typedef struct hammer {
    int port, ok, n;
    pthread_t th;
} hammer;

static void *hammer_run(void *arg)
{
    hammer *h = arg;
    for (int i = 0; i < h->n; i++) {
        http_resp r;
        const char *path = i % 3 == 2 ? "/" : "/metrics";
        const char *extra = i % 2 ? "Accept-Encoding: gzip\r\n" : NULL;
        if (http_request(h->port, "GET", path, extra, 30000, &r) == 200 &&
            (strcmp(path, "/") == 0 || r.body_len > 1000))
            h->ok++;
        http_free(&r);
    }
    return NULL;
}

Test(exporter, concurrent_requests)
{
    tu_child p;
    kinds_provider(&p);
    exporter e;
    ex_start(&e, NULL);
    hammer h[4];
    for (int i = 0; i < 4; i++) {
        h[i].port = e.port, h[i].ok = 0, h[i].n = 12;
        cr_assert_eq(pthread_create(&h[i].th, NULL, hammer_run, &h[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(h[i].th, NULL);
        cr_expect_eq(h[i].ok, h[i].n, "client %d: %d of %d requests served", i, h[i].ok, h[i].n);
    }
    http_resp r;
    scrape(&e, NULL, &r);
    /* 32 scrapes and this one, in at most 33 collections: requests that
     * arrive during a collection of their format share it (body.h). */
    double collections = ex_value(r.body, "pcw_exporter_scrapes_total");
    cr_expect(collections >= 2 && collections <= 33, "%g collections", collections);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"busy\"}"), 0);
    http_free(&r);
    ex_stop(&e);
    ep_stop(&p);
}

/* Advanced counters (detailLevel), which pcwstat and pcwtop hide unless
 * asked, are exported like the others: a scrape keeps everything (issue 24
 * item 6, docs/exporter.md), even in a counterset whose counters are all
 * advanced (\Det(*)\* would select none at the standard level). */
Test(exporter, exports_advanced_counters)
{
    tu_child p;
    cr_assert_eq(
        tu_spawn(&p, "query_provider",
                 (const char *const[]){"--set", "Det", "--advanced", "0", "--advanced", "1",
                                       "--advanced", "2", "--advanced", "3", "--advanced", "4",
                                       "--advanced", "6", "--advanced", "7", NULL}),
        0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0 && strncmp(line, "ready", 5) == 0);
    cr_assert(tu_command(&p, line, sizeof line, "create a") > 0 && strncmp(line, "ok", 2) == 0);
    cr_assert(tu_command(&p, line, sizeof line, "set a 7 9") > 0 && strncmp(line, "ok", 2) == 0);
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    scrape(&e, NULL, &r);
    char want[256];
    snprintf(want, sizeof want,
             "pcw_det_plain{instance_name=\"a\",provider=\"query_provider\",pid=\"%d\"} 9", p.pid);
    cr_expect(ex_has_line(r.body, want), "missing: %s\n%s", want, r.body);
    http_free(&r);
    ex_stop(&e);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}

/* A web configuration nested 100,000 deep ("[[[[..."), which libyaml takes
 * tens of seconds to refuse: refused at once, naming the depth. (run_exporter
 * waits at most 20 s for the exit.) */
Test(exporter, web_config_deep_nesting_refused)
{
    size_t n = 100000;
    char *yaml = malloc(n + 1);
    cr_assert(yaml);
    memset(yaml, '[', n);
    yaml[n] = '\n';
    char path[400], arg[440];
    ex_path(path, sizeof path, "deep.yml");
    cr_assert_eq(tu_write_file(path, yaml, n + 1, 0600), 0);
    free(yaml);
    snprintf(arg, sizeof arg, "--web.config.file=%s", path);
    const char *args[] = {arg, NULL};
    char *log;
    long long t0 = tu_now_ms();
    cr_expect_eq(run_exporter(args, &log), 1);
    cr_log_info("refused in %lld ms", tu_now_ms() - t0);
    cr_expect(log && strstr(log, "deep.yml:1: nested deeper than"), "%s", log);
    free(log);
}
