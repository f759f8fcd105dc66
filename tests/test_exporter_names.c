/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_names.c - pcw-exporter's metric names on real
 * counter names: every counterset of the CTRPP manifests in
 * ../shared/manifests (or their copies in examples/manifests), pcwgen's
 * test manifests and tests/manifests/exporter_names.man (perfmon's naming
 * habits, the README's provider, the examples), each published by a real
 * provider (tests/helpers/manifest_provider.c, pcwgen's reader), scraped
 * from the real exporter and checked with `promtool check metrics` - the
 * lint Prometheus users run - and by name (docs/exporter.md, "Metric
 * names and labels").
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <glob.h>

#include "helpers/exporter_test.h"

TestSuite(exporter_names, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

#define MAX_PROVIDERS 32

static size_t start_providers(tu_child *p)
{
    static const char *const patterns[] = {
        PCW_SOURCE_DIR "/../shared/manifests/*.man",
        PCW_SOURCE_DIR "/tests/pcwgen/manifests/*.man",
        PCW_SOURCE_DIR "/tests/manifests/*.man",
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        glob_t g;
        int rc = glob(patterns[i], 0, NULL, &g);
        if (rc == GLOB_NOMATCH && i == 0) /* no ../shared: its copies */
            rc = glob(PCW_SOURCE_DIR "/examples/manifests/*.man", 0, NULL, &g);
        cr_assert_eq(rc, 0, "no manifests: %s", patterns[i]);
        for (size_t k = 0; k < g.gl_pathc; k++) {
            cr_assert_lt(n, MAX_PROVIDERS);
            const char *args[] = {g.gl_pathv[k], NULL};
            cr_assert_eq(tu_spawn(&p[n], "manifest_provider", args), 0);
            char line[1200];
            cr_assert(tu_readline(&p[n], line, sizeof line, 10000) > 0, "%s", g.gl_pathv[k]);
            cr_assert(strncmp(line, "ready", 5) == 0, "%s: %s", g.gl_pathv[k], line);
            n++;
        }
        globfree(&g);
    }
    return n;
}

/* The TYPE line of a family, in the text format. */
static void has_type(const char *body, const char *name, const char *type)
{
    char line[256];
    snprintf(line, sizeof line, "# TYPE %s %s", name, type);
    cr_expect(ex_has_line(body, line), "missing: %s", line);
}

Test(exporter_names, real_counter_names_pass_promtool)
{
    tu_child p[MAX_PROVIDERS];
    size_t np = start_providers(p);
    exporter e;
    ex_start(&e, NULL);
    http_resp r;
    cr_assert_eq(http_get(e.port, "/metrics", NULL, &r), 200);
    char f[400], out[400];
    ex_path(f, sizeof f, "metrics.txt");
    ex_path(out, sizeof out, "promtool.out");
    cr_assert_eq(tu_write_file(f, r.body, r.body_len, 0600), 0);
    int rc = ex_sh("promtool check metrics < %s > %s 2>&1", f, out);
    char *lint = ex_slurp(out, NULL);
    cr_expect_eq(rc, 0, "promtool check metrics on every real counter name:\n%s", lint);
    cr_expect(lint && !lint[0], "promtool said:\n%s", lint);
    free(lint);
    /* Every counterset is there (the corpus reached the exporter). */
    cr_expect_geq(ex_value(r.body, "pcw_exporter_countersets"), 12);
    cr_expect_eq(ex_value(r.body, "pcw_exporter_errors_total{cause=\"name_collision\"}"), 0,
                 "no family left out");
    /* perfmon's habits (tests/manifests/exporter_names.man). */
    has_type(r.body, "pcw_web_service_requests_total", "counter"); /* Requests/sec */
    has_type(r.body, "pcw_web_service_bytes_total", "counter");    /* Bytes Total/sec */
    has_type(r.body, "pcw_web_service_cache_hit", "gauge");        /* Cache Hit % */
    has_type(r.body, "pcw_web_service_cache_hit_base", "gauge");   /* its base */
    has_type(r.body, "pcw_web_service_processor_time_seconds_total", "counter");
    has_type(r.body, "pcw_web_service_handle", "gauge");                 /* Handle Count */
    has_type(r.body, "pcw_web_service_latency_seconds", "gauge");        /* Latency (sec) */
    has_type(r.body, "pcw_web_service_connections_per_second", "gauge"); /* a gauge's /sec */
    has_type(r.body, "pcw_web_service_hit_total", "counter");            /* Hit Ratio */
    has_type(r.body, "pcw_web_service_hit_base_total", "counter");
    has_type(r.body, "pcw_web_service_error_total", "counter");   /* Error Counter */
    has_type(r.body, "pcw_web_service_percent_used", "gauge");    /* a gauge's own % */
    has_type(r.body, "pcw_web_server_requests_total", "counter"); /* the README's */
    has_type(r.body, "pcw_web_server_bytes_sent_total", "counter");
    has_type(r.body, "pcw_churn_updates_total", "counter");
    /* A name only its rate suffix tells apart keeps the suffix, spelled
     * out, whichever comes first: the plain name is the plain counter's. */
    has_type(r.body, "pcw_web_collisions_bytes", "gauge");
    has_type(r.body, "pcw_web_collisions_bytes_per_second_total", "counter");
    has_type(r.body, "pcw_web_collisions_items_total", "counter");
    has_type(r.body, "pcw_web_collisions_items_per_second_total", "counter");
    char line[256];
    snprintf(line, sizeof line, "pcw_web_collisions_items_total{instance_name=\"x\",");
    const char *at = strstr(r.body, line);
    cr_expect(at && strncmp(strchr(at, '}') + 2, "4000\n", 5) == 0,
              "the plain name is \"Items\"'s (the fourth counter: 4000)");
    /* The percentage of a fraction is PromQL's: numerator 3000, base 4000. */
    snprintf(line, sizeof line, "pcw_web_service_cache_hit{instance_name=\"x\",");
    at = strstr(r.body, line);
    cr_expect(at && strncmp(strchr(at, '}') + 2, "3000\n", 5) == 0, "the numerator");
    cr_expect(!strstr(r.body, "_per_sec_") && !strstr(r.body, "_per_sec "), "no abbreviated rate");
    cr_expect(!strstr(r.body, "cache_hit_percent"), "no percent on a fraction");
    http_free(&r);
    ex_stop(&e);
    for (size_t i = 0; i < np; i++) {
        tu_send(&p[i], "quit");
        tu_finish(&p[i], 10000);
    }
}
