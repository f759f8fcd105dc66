/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_prometheus.c - a real Prometheus server (Debian's
 * prometheus) scrapes pcw-exporter while a provider counts at a known
 * rate; Prometheus' HTTP API must give back that rate, the gauge, and a
 * fraction computed from the numerator and base series (also perfmon's
 * "Cache Hit %", named as docs/exporter.md says), with the labels the
 * exporter promises.
 *
 * Everything runs on loopback with its own configuration and storage in
 * the test's private root; Prometheus negotiates OpenMetrics, so its
 * strict parser reads the exporter's OpenMetrics. Synchronisation polls
 * Prometheus' API with a deadline. Every process is stopped by pid.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <sched.h>

#include "helpers/exporter_hist.h"
#include "helpers/exporter_test.h"
#include "readme_build.h"

TestSuite(exporter_prometheus, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 240);

typedef struct prom {
    pid_t pid;
    int port;
    char log[320];
} prom;

/* A port nobody listens on now (Prometheus takes no port 0). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    cr_assert(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
              getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void prom_stop(prom *p)
{
    if (p->pid <= 0)
        return;
    kill(p->pid, SIGTERM);
    long long deadline = tu_now_ms() + 30000;
    int st;
    while (waitpid(p->pid, &st, WNOHANG) != p->pid) {
        if (tu_now_ms() > deadline) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    p->pid = -1;
}

/* Start Prometheus scraping target every second; wait until it is ready
 * (GET /-/ready). `name` names its files in the test's root (several may
 * run at once); `feature` is an --enable-feature value, or NULL. A port
 * taken between free_port() and its bind is tried again with another. */
static void prom_start_as(prom *p, int target_port, const char *name, const char *feature)
{
    char cfg[400], data[400], file[64];
    snprintf(file, sizeof file, "%s.yml", name);
    ex_path(cfg, sizeof cfg, file);
    snprintf(file, sizeof file, "%s-data", name);
    ex_path(data, sizeof data, file);
    char yml[512];
    int n = snprintf(yml, sizeof yml,
                     "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                     "scrape_configs:\n  - job_name: pcw\n    static_configs:\n"
                     "      - targets: ['127.0.0.1:%d']\n",
                     target_port);
    cr_assert_eq(tu_write_file(cfg, yml, (size_t)n, 0600), 0);
    for (int attempt = 0; attempt < 5; attempt++) {
        memset(p, 0, sizeof *p);
        p->port = free_port();
        snprintf(file, sizeof file, "%s.log", name);
        ex_path(p->log, sizeof p->log, file);
        char listen[64], cfgarg[440], dataarg[440], featarg[128];
        snprintf(featarg, sizeof featarg, "--enable-feature=%s", feature ? feature : "");
        snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", p->port);
        snprintf(cfgarg, sizeof cfgarg, "--config.file=%s", cfg);
        snprintf(dataarg, sizeof dataarg, "--storage.tsdb.path=%s", data);
        p->pid = fork();
        cr_assert(p->pid >= 0);
        if (p->pid == 0) {
            int fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            dup2(fd, 1), dup2(fd, 2);
            int nul = open("/dev/null", O_RDONLY);
            dup2(nul, 0);
            execlp("prometheus", "prometheus", cfgarg, dataarg, listen, feature ? featarg : NULL,
                   (char *)NULL);
            _exit(127);
        }
        long long deadline = tu_now_ms() + 60000;
        for (;;) {
            int st;
            if (waitpid(p->pid, &st, WNOHANG) == p->pid) {
                p->pid = -1;
                break; /* exited: the port was taken, or worse (below) */
            }
            http_resp r;
            int code = http_request(p->port, "GET", "/-/ready", NULL, 2000, &r);
            http_free(&r);
            if (code == 200)
                return;
            cr_assert(tu_now_ms() < deadline, "Prometheus did not become ready");
            struct timespec ts = {0, 50 * 1000 * 1000}; /* polling its readiness */
            nanosleep(&ts, NULL);
        }
        char *log = ex_slurp(p->log, NULL);
        int taken = log && strstr(log, "address already in use");
        cr_assert(taken, "Prometheus exited: %s", log ? log : "(no log)");
        free(log);
    }
    cr_assert_fail("no free port for Prometheus");
}

static void prom_start(prom *p, int target_port)
{
    prom_start_as(p, target_port, "prometheus", NULL);
}

/* GET /api/v1/query?query=... (URL-encoded here); the body. */
static char *prom_query(const prom *p, const char *q)
{
    char path[2048] = "/api/v1/query?query=";
    size_t n = strlen(path);
    for (const unsigned char *s = (const unsigned char *)q; *s && n + 4 < sizeof path; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
            strchr("-_.~", *s))
            path[n++] = (char)*s;
        else
            n += (size_t)snprintf(path + n, 4, "%%%02X", *s);
    }
    path[n] = 0;
    http_resp r;
    int code = http_request(p->port, "GET", path, NULL, 10000, &r);
    char *body = code == 200 && r.body ? strdup(r.body) : NULL;
    http_free(&r);
    return body;
}

/* The value of the only sample of an instant vector result, NAN when the
 * result is empty (or not one sample). Its labels into labels (a JSON
 * object's text). */
static double one_value(const char *json, char *labels, size_t cap)
{
    if (!json || !strstr(json, "\"status\":\"success\""))
        return NAN;
    const char *v = strstr(json, "\"value\":[");
    if (!v || strstr(v + 1, "\"value\":["))
        return NAN;
    const char *m = strstr(json, "\"metric\":{");
    if (m && labels) {
        const char *end = strchr(m, '}');
        snprintf(labels, cap, "%.*s", end ? (int)(end - m - 9) : 0, m + 9);
    }
    const char *q = strchr(v + 9, ',');
    return q && q[1] == '"' ? strtod(q + 2, NULL) : NAN;
}

/* Poll a query until it has one sample for which ok(value) holds; the
 * value (NAN at the deadline). */
static double poll_query(const prom *p, const char *q, long long deadline, double lo, double hi,
                         char *labels, size_t cap)
{
    double v = NAN;
    while (tu_now_ms() < deadline) {
        char *body = prom_query(p, q);
        v = one_value(body, labels, cap);
        free(body);
        if (v >= lo && v <= hi)
            return v;
        struct timespec ts = {0, 200 * 1000 * 1000}; /* between polls of the API */
        nanosleep(&ts, NULL);
    }
    return v;
}

Test(exporter_prometheus, prometheus_scrapes_rate_gauge_and_fraction)
{
    enum { K_LEVEL = 0, K_REQUESTS = 1, K_HITS = 2, K_HITS_BASE = 3 };
    const double per_sec = 200;
    tu_child pv;
    ep_start(&pv, "rater");
    ep_cmd(&pv, NULL, "kinds Web");
    ep_cmd(&pv, NULL, "create Web site");
    ep_cmd(&pv, NULL, "set Web site %d 4242", K_LEVEL);
    ep_cmd(&pv, NULL, "set Web site %d 3", K_HITS);
    ep_cmd(&pv, NULL, "set Web site %d 4", K_HITS_BASE);
    ep_cmd(&pv, NULL, "rate Web site %d %.0f", K_REQUESTS, per_sec);
    /* A body of a few MB: Prometheus asks for gzip (always), so its parser
     * reads every series of a compressed body made of many of igzip's
     * blocks (tools/pcw-exporter/gzip.c). */
    ep_cmd(&pv, NULL, "pair Bulk Requests Bytes");
    ep_cmd(&pv, NULL, "bulk Bulk 20000 100");
    /* perfmon's "Cache Hit %" (PERF_RAW_FRACTION): 3000 of 4000. */
    tu_child names;
    const char *man[] = {PCW_SOURCE_DIR "/tests/manifests/exporter_names.man", NULL};
    cr_assert_eq(tu_spawn(&names, "manifest_provider", man), 0);
    char ready[256];
    cr_assert(tu_readline(&names, ready, sizeof ready, 10000) > 0 &&
                  strncmp(ready, "ready", 5) == 0,
              "manifest_provider: %s", ready);
    exporter e;
    ex_start(&e, NULL);
    prom p;
    prom_start(&p, e.port);
    long long deadline = tu_now_ms() + 120000;
    char labels[512] = "";
    /* The target is up (its scrapes parse). */
    double up = poll_query(&p, "up{job=\"pcw\"}", deadline, 1, 1, NULL, 0);
    cr_expect_eq(up, 1, "Prometheus' scrape of the exporter failed; its log: %s",
                 ex_slurp(p.log, NULL));
    /* Scraped for longer than the 10 s window: rate() extrapolates only
     * within the samples' span, so a window the series does not cover
     * yet gives a lower rate. 12 samples 1 s apart cover 11 s. */
    double count =
        poll_query(&p, "count_over_time(pcw_web_requests_total[12s])", deadline, 12, 1e9, NULL, 0);
    cr_expect_geq(count, 12, "too few samples: %g", count);
    double rate = poll_query(&p, "rate(pcw_web_requests_total[10s])", deadline, 0, 1e12, labels,
                             sizeof labels);
    cr_expect(fabs(rate - per_sec) <= 0.1 * per_sec, "rate() = %g, the provider counts %g/s", rate,
              per_sec);
    cr_log_info("Prometheus: rate() = %g for %g/s, labels %s", rate, per_sec, labels);
    char want[256];
    snprintf(want, sizeof want, "\"instance_name\":\"site\"");
    cr_expect(strstr(labels, want), "labels: %s", labels);
    cr_expect(strstr(labels, "\"provider\":\"rater\""), "labels: %s", labels);
    snprintf(want, sizeof want, "\"pid\":\"%d\"", pv.pid);
    cr_expect(strstr(labels, want), "labels: %s", labels);
    double level = poll_query(&p, "pcw_web_level", deadline, 4242, 4242, NULL, 0);
    cr_expect_eq(level, 4242, "the gauge: %g", level);
    double ratio =
        poll_query(&p, "pcw_web_hits / pcw_web_hits_base", deadline, 0.75, 0.75, NULL, 0);
    cr_expect_eq(ratio, 0.75, "a fraction from its numerator and base: %g", ratio);
    /* Named as docs/exporter.md says: the numerator without the percent
     * its name had, and its base; the fraction is their ratio. */
    ratio = poll_query(&p, "pcw_web_service_cache_hit / pcw_web_service_cache_hit_base", deadline,
                       0.75, 0.75, NULL, 0);
    cr_expect_eq(ratio, 0.75, "\"Cache Hit %%\" from its numerator and base: %g", ratio);
    double bulk = poll_query(&p, "count(pcw_bulk_requests)", deadline, 20000, 20000, NULL, 0);
    cr_expect_eq(bulk, 20000, "series of the large body: %g", bulk);
    prom_stop(&p);
    ex_stop(&e);
    ep_stop(&pv);
    tu_send(&names, "quit");
    tu_finish(&names, 10000);
}

/* Issue 27: the README's provider - 1,000 requests a second, each timed
 * with pcw_time_ns() into an 8-byte PERF_AVERAGE_TIMER and its base, each
 * a 250 us busy wait - scraped by Prometheus for more than a minute:
 * rate(_sum[1m]) / rate(_count[1m]) is the latency, with no counter reset
 * (a 4-byte numerator wrapped every 17 s here, and read 1.4x to 8x low). */
Test(exporter_prometheus, readme_latency_over_a_minute)
{
    char dir[64], exe[600];
    readme_build_web(dir, sizeof dir);
    snprintf(exe, sizeof exe, "%s/web", dir);
    pid_t web = fork();
    cr_assert_geq(web, 0);
    if (web == 0) {
        execl(exe, "web", "150", (char *)NULL);
        _exit(127);
    }
    exporter e;
    ex_start(&e, NULL);
    prom p;
    prom_start(&p, e.port);
    long long deadline = tu_now_ms() + 170000;
#define SITE "{instance_name=\"example.org\"}"
    /* 71 scrapes 1 s apart: the 1 m windows below are covered. */
    double n =
        poll_query(&p, "count_over_time(pcw_web_server_avg_latency_seconds_sum" SITE "[71s])",
                   deadline, 71, 1e9, NULL, 0);
    cr_assert_geq(n, 71, "too few samples: %g; Prometheus' log: %s", n, ex_slurp(p.log, NULL));
    double lat = poll_query(&p,
                            "rate(pcw_web_server_avg_latency_seconds_sum" SITE "[1m]) / "
                            "rate(pcw_web_server_avg_latency_seconds_count" SITE "[1m])",
                            deadline, 0, 1, NULL, 0);
    double rps = poll_query(&p, "rate(pcw_web_server_requests_total" SITE "[1m])", deadline, 0, 1e9,
                            NULL, 0);
    double resets = poll_query(&p, "resets(pcw_web_server_avg_latency_seconds_sum" SITE "[70s])",
                               deadline, 0, 1e9, NULL, 0);
#undef SITE
    cr_log_info("Prometheus: latency %g s at %g requests/s, %g resets", lat, rps, resets);
    /* Each request busy-waits 250 us; a loaded machine preempts some. */
    cr_expect(lat >= 250e-6 && lat <= 500e-6, "rate(sum)/rate(count) = %g s, want 250 us", lat);
    cr_expect(fabs(rps - 1000) <= 100, "rate(requests) = %g/s, want 1000", rps);
    cr_expect_eq(resets, 0, "the numerator was reset (wrapped) %g times", resets);
    prom_stop(&p);
    ex_stop(&e);
    kill(web, SIGTERM);
    waitpid(web, NULL, 0);
    readme_remove(dir);
}

/* Prometheus' own scrapes are all served while 100 slow connections from
 * 127.0.0.2 - more than the exporter's 40 slots - trickle partial headers
 * and reopen as soon as they are closed (issue 23, item 2): up is 1 for
 * every one of 15 scrapes. The old exporter refused every scrape. */
Test(exporter_prometheus, prometheus_served_during_slow_client_attack)
{
    exporter e;
    ex_start(&e, NULL);
    ex_attack a;
    ex_attack_start(&a, e.port, "127.0.0.2", 100, EX_SLOW_HEADER, strlen(EX_SLOW_HEADER), 200,
                    180000);
    long long deadline = tu_now_ms() + 20000;
    while (atomic_load(&a.opened) < 100) {
        cr_assert_lt(tu_now_ms(), deadline, "the attack could not open its connections");
        sched_yield();
    }
    prom p;
    prom_start(&p, e.port);
    deadline = tu_now_ms() + 120000;
    double n = poll_query(&p, "count_over_time(up{job=\"pcw\"}[1m])", deadline, 15, 1e9, NULL, 0);
    cr_expect_geq(n, 15, "Prometheus scraped %g times", n);
    char *body = prom_query(&p, "min_over_time(up{job=\"pcw\"}[1m])");
    double min_up = one_value(body, NULL, 0);
    free(body);
    ex_attack_stop(&a);
    cr_expect_eq(min_up, 1, "a scrape failed during the attack (min of up = %g); Prometheus: %s",
                 min_up, ex_slurp(p.log, NULL));
    cr_expect_geq(atomic_load(&a.closed), 20, "slow connections closed: %d",
                  atomic_load(&a.closed));
    prom_stop(&p);
    ex_stop(&e);
}

/* Issue 27: a histogram whose observations are known (log-normal, median
 * 2 ms, from a fixed seed) scraped by two Prometheus servers: one with
 * native histograms (it negotiates the protobuf format) and one without
 * (OpenMetrics: classic buckets). histogram_quantile(0.99, ...) of the
 * rate over the scrapes before and after one round of 20,000
 * observations lies in the bucket that holds the true p99: the native
 * bucket (schema 3, 9 % wide) and the classic one (the default 30 bounds
 * over 2^-30 .. 2^12 s are schema -1: a factor 4). Prometheus 2.42 keeps
 * only the native form of a histogram that has one, hence two servers. */
Test(exporter_prometheus, histogram_quantile_classic_and_native)
{
    uint64_t *v = malloc(EH_N * sizeof *v);
    cr_assert_not_null(v);
    eh_values(v, EH_N);
    uint64_t p99 = eh_quantile(v, EH_N, 0.99);
    tu_child pv;
    eh_provider(&pv, v, EH_N);
    exporter e;
    ex_start(&e, NULL);
    prom nat, cls;
    prom_start_as(&nat, e.port, "prom-native", "native-histograms");
    prom_start_as(&cls, e.port, "prom-classic", NULL);
    long long deadline = tu_now_ms() + 120000;
#define LAT "pcw_hist_test_latency_seconds"
    /* A sample before the round in both: rate() sees all of it and only it
     * (its first sample in the window is before, its last after). */
    double n0 = poll_query(&nat, "histogram_count(" LAT ")", deadline, 0, 0, NULL, 0);
    double c0 = poll_query(&cls, LAT "_count", deadline, 0, 0, NULL, 0);
    cr_assert(n0 == 0 && c0 == 0, "no sample before the round: native %g, classic %g; logs: %s %s",
              n0, c0, ex_slurp(nat.log, NULL), ex_slurp(cls.log, NULL));
    char reply[64];
    cr_assert(tu_command(&pv, reply, sizeof reply, "round") > 0 && strcmp(reply, "ok 20000") == 0,
              "round: %s", reply);
    double n1 = poll_query(&nat, "histogram_count(" LAT ")", deadline, EH_N, EH_N, NULL, 0);
    double c1 = poll_query(&cls, LAT "_count", deadline, EH_N, EH_N, NULL, 0);
    cr_assert(n1 == EH_N && c1 == EH_N, "after the round: native %g, classic %g", n1, c1);
    double qn =
        poll_query(&nat, "histogram_quantile(0.99, rate(" LAT "[1m]))", deadline, 0, 1e9, NULL, 0);
    double qc = poll_query(&cls, "histogram_quantile(0.99, rate(" LAT "_bucket[1m]))", deadline, 0,
                           1e9, NULL, 0);
    /* The native server has no classic series, the classic no native one. */
    char *none = prom_query(&nat, "count(" LAT "_bucket)");
    cr_expect(none && strstr(none, "\"result\":[]"), "native server: %s", none);
    free(none);
#undef LAT
    double nlo, nhi, clo, chi;
    eh_bucket(3, p99, &nlo, &nhi);
    eh_bucket(-1, p99, &clo, &chi);
    cr_log_info("p99: true %.9g s; native %.9g in (%.9g, %.9g]; classic %.9g in (%.9g, %.9g]",
                (double)p99 / 1e9, qn, nlo, nhi, qc, clo, chi);
    cr_expect(qn >= nlo * (1 - 1e-12) && qn <= nhi * (1 + 1e-12),
              "native p99 %.9g outside the true p99's bucket (%.9g, %.9g]", qn, nlo, nhi);
    cr_expect(qc >= clo * (1 - 1e-12) && qc <= chi * (1 + 1e-12),
              "classic p99 %.9g outside the true p99's classic bucket (%.9g, %.9g]", qc, clo, chi);
    prom_stop(&nat);
    prom_stop(&cls);
    ex_stop(&e);
    ep_stop(&pv);
    free(v);
}
