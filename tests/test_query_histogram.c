/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_histogram.c - histograms in the query layer (issue 27
 * section 2, docs/query.md "Histograms"):
 *
 *   - quantiles of known distributions (uniform, log-normal, bimodal;
 *     observations from a fixed-seed PRNG) are within the documented
 *     relative error 2^(2^-schema) - 1 of the exact quantile of the sorted
 *     data, through pcw_hist_cook and through counter paths;
 *   - statistics' names, a bare histogram name and wildcards expanding to
 *     the default statistics, a counter whose own name holds ':', a wrong
 *     statistic refused naming it;
 *   - statuses: first sample, no observations, reset (a bucket went down),
 *     the top bucket (ABOVE_RANGE), a sum the buckets cannot hold
 *     (INCONSISTENT), counts that overflow, not aggregated;
 *   - _Total of two instances is the histogram of their union;
 *   - hostile words (buckets going backwards, huge values, a wrong sum)
 *     give statuses, never a crash (the ASan build runs this too).
 *
 * The provider is this process, writing its instances' words directly
 * (as tests/test_query_totals.c): the query reads its segment as any
 * other's, and every number is known.
 */
#define PCW_PROVIDER_IMPLEMENTATION
#include "testutil.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcw/histogram.h"
#include "pcw/provider.h"
#include "hist_dist.h"
#include "pcw/pdh.h"

TestSuite(query_histogram, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* Latency: ns, schema 3 (9.05 %), 1 ns .. 4096 s. Size: unit one, schema
 * 0, 1 .. 2^20, no aggregate. "Odd:max": a counter whose name holds ':'. */
PCW_HISTOGRAM_TYPE(lat_hist, PCW_HIST_UNIT_NS, 3, -30, 12);
PCW_HISTOGRAM_TYPE(size_hist, PCW_HIST_UNIT_ONE, 0, 0, 20);

typedef struct hdata {
    uint64_t requests;
    lat_hist latency;
    size_hist size;
    uint64_t odd;
} hdata;

static const pcw_counter_desc hcounters[] = {
    PCW_COUNTER_EX(1, "Requests", PERF_COUNTER_BULK_COUNT, hdata, requests, PCW_AGGREGATE_TOTAL, 0,
                   NULL),
    PCW_HISTOGRAM_COUNTER(2, "Latency", hdata, latency, lat_hist),
    PCW_HISTOGRAM_COUNTER_EX(3, "Size", hdata, size, size_hist, PCW_AGGREGATE_UNDEFINED, 0, NULL),
    PCW_COUNTER(4, "Odd:max", PERF_COUNTER_LARGE_RAWCOUNT, hdata, odd),
};

typedef struct prov {
    pcw_provider *p;
    pcw_registration *r;
} prov;

static prov open_set(const char *set)
{
    prov v;
    cr_assert_eq(pcw_provider_open(&v.p, NULL), PCW_OK);
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = set,
                                  .instance_type = PCW_MULTI_AGGREGATE,
                                  .counter_count = sizeof hcounters / sizeof hcounters[0],
                                  .counters = hcounters};
    int rc = pcw_register(&v.r, v.p, &info);
    char why[256];
    cr_assert_eq(rc, PCW_OK, "%s: %s", set, pcw_register_error(rc, &info, why, sizeof why));
    return v;
}

static hdata *create(prov *v, const char *name, pcw_instance **out)
{
    pcw_data d = {NULL, sizeof(hdata)};
    cr_assert_eq(pcw_create_instance(out, v->r, name, 1, &d), PCW_OK, "%s", name);
    return (hdata *)pcw_instance_block(*out, 0);
}

static pcw_pdh *open_query(void)
{
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    return q;
}

static pcw_pdh_counter *add(pcw_pdh *q, const char *path)
{
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, path, &h, &err), PCW_OK, "%s: %s", path, err.message);
    return h;
}

static void collect(pcw_pdh *q)
{
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
}

/* Value (instance, counter column name) of h. */
static pcw_pdh_value value(const pcw_pdh_counter *h, const char *inst, const char *counter,
                           size_t *index)
{
    pcw_pdh_value v;
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
        if (strcmp(v.instance, inst) == 0 && strcmp(v.counter, counter) == 0) {
            if (index)
                *index = i;
            return v;
        }
    }
    cr_assert_fail("no value %s\\%s", inst, counter);
    return v;
}

/* ---- known distributions ------------------------------------------------- */

/* Known distributions (tests/hist_dist.h), in ns: uniform 1 us .. 100
 * ms; log-normal around 2 ms (sigma 1); bimodal: 80 % around 300 us, 20 %
 * around 40 ms. */
enum { D_UNIFORM, D_LOGNORMAL, D_BIMODAL, D_N };
static const char *const dists[D_N] = {"uniform:1000:100000000", "lognormal:2000000:1",
                                       "bimodal:300000:40000000:0.8"};

static double exact_quantile(const uint64_t *sorted, size_t n, double q)
{
    return (double)hd_quantile(sorted, n, q) * 1e-9;
}

static const double qs[] = {0.5, 0.9, 0.99, 0.999};

static void check_quantile(const char *what, double got, double want, int schema)
{
    double err = fabs(got / want - 1.0);
    cr_assert(err <= hd_bound(schema) + 1e-12, "%s: %.9g, exact %.9g: error %.4f > bound %.4f",
              what, got, want, err, hd_bound(schema));
}

Test(query_histogram, quantiles_of_known_distributions_within_the_bound)
{
    enum { N = 200000 };
    uint64_t *obs = malloc(N * sizeof *obs);
    cr_assert(obs);
    for (int s = -1; s <= 8; s += 3) {
        int m = s < 0 ? 1 << -s : 1;
        /* (schema 8: 2^-20 .. 2^12 s, 8192 buckets, the most there are) */
        uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, s, s == 8 ? -20 : -30 / m * m, 12);
        uint32_t nw = 2 + pcw_hist_nbuckets(shape);
        uint64_t *w = calloc(nw, sizeof *w);
        cr_assert(w);
        for (int d = 0; d < D_N; d++) {
            memset(w, 0, nw * sizeof *w);
            hd_rng r = {42 + (uint64_t)d};
            for (size_t i = 0; i < N; i++) {
                cr_assert_eq(hd_draw(&r, dists[d], &obs[i]), 0);
                pcw_histogram_observe(w, shape, obs[i]);
            }
            qsort(obs, N, sizeof *obs, hd_cmp_u64);
            pcw_hist_dist dist = {PCW_CSTATUS_VALID, shape, nw - 2, w[1], w + 2, N, w[0],
                                  1000000000};
            for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
                pcw_hist_stat st = {PCW_HSTAT_QUANTILE, qs[k]};
                double v;
                cr_assert_eq(pcw_hist_cook(&dist, &st, &v), PCW_CSTATUS_VALID);
                char what[64];
                snprintf(what, sizeof what, "schema %d %s p%g", s, dists[d], qs[k] * 100);
                check_quantile(what, v, exact_quantile(obs, N, qs[k]), s);
            }
            /* The mean is exact (the sum is), the max the top bucket's bound. */
            pcw_hist_stat mean = {PCW_HSTAT_MEAN, 0}, max = {PCW_HSTAT_MAX, 0};
            double v, sum = 0;
            for (size_t i = 0; i < N; i++)
                sum += (double)obs[i];
            cr_assert_eq(pcw_hist_cook(&dist, &mean, &v), PCW_CSTATUS_VALID);
            cr_assert(fabs(v - sum * 1e-9 / N) <= 1e-9 * v, "mean %.9g", v);
            cr_assert_eq(pcw_hist_cook(&dist, &max, &v), PCW_CSTATUS_VALID);
            check_quantile("max", v, (double)obs[N - 1] * 1e-9, s);
            cr_assert_geq(v, (double)obs[N - 1] * 1e-9);
        }
        free(w);
    }
    free(obs);
}

/* The interpolation itself: log-linear in a bucket, linear in the zero
 * bucket, the top bound for max, 2^max_exp above the range. */
Test(query_histogram, interpolation_is_log_linear)
{
    /* unit one, schema 0, 2^0 .. 2^4: zero bucket [0, 1], buckets (1,2]
     * (2,4] (4,8] (8,16] */
    uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_ONE, 0, 0, 4);
    uint64_t b[4] = {0, 4, 0, 0};
    pcw_hist_dist d = {PCW_CSTATUS_VALID, shape, 4, 0, b, 4, 12, 0};
    pcw_hist_stat p50 = {PCW_HSTAT_QUANTILE, 0.5}, p100 = {PCW_HSTAT_QUANTILE, 1.0};
    pcw_hist_stat p25 = {PCW_HSTAT_QUANTILE, 0.25}, max = {PCW_HSTAT_MAX, 0};
    double v;
    /* rank 2 of 4 in (2, 4]: half way on the log scale, 2 * 2^0.5 */
    cr_assert_eq(pcw_hist_cook(&d, &p50, &v), PCW_CSTATUS_VALID);
    cr_assert(fabs(v - 2.0 * sqrt(2.0)) < 1e-12, "p50 %.17g", v);
    cr_assert_eq(pcw_hist_cook(&d, &p25, &v), PCW_CSTATUS_VALID);
    cr_assert(fabs(v - 2.0 * pow(2.0, 0.25)) < 1e-12, "p25 %.17g", v);
    cr_assert_eq(pcw_hist_cook(&d, &p100, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 4.0);
    cr_assert_eq(pcw_hist_cook(&d, &max, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 4.0);
    /* the zero bucket: linear from 0 to 2^min_exp */
    uint64_t z[4] = {0, 0, 0, 0};
    pcw_hist_dist dz = {PCW_CSTATUS_VALID, shape, 4, 4, z, 4, 2, 0};
    cr_assert_eq(pcw_hist_cook(&dz, &p50, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 0.5);
    cr_assert_eq(pcw_hist_cook(&dz, &max, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 1.0);
    /* the last bucket: 2^max_exp, above the range */
    uint64_t t[4] = {0, 0, 0, 3};
    pcw_hist_dist dt = {PCW_CSTATUS_VALID, shape, 4, 0, t, 3, 100, 0};
    cr_assert_eq(pcw_hist_cook(&dt, &p50, &v), PCW_CSTATUS_ABOVE_RANGE);
    cr_assert_eq(v, 16.0);
    /* a count the struct gets wrong is counted again */
    d.count = 1000;
    cr_assert_eq(pcw_hist_cook(&d, &p50, &v), PCW_CSTATUS_VALID);
    cr_assert(fabs(v - 2.0 * sqrt(2.0)) < 1e-12, "p50 %.17g", v);
    /* bounds */
    double lo, hi;
    pcw_hist_bucket_bounds(shape, 2, &lo, &hi);
    cr_assert(lo == 4.0 && hi == 8.0, "%g %g", lo, hi);
    pcw_hist_bucket_bounds(shape, UINT32_MAX, &lo, &hi);
    cr_assert(lo == 0.0 && hi == 1.0, "%g %g", lo, hi);
    pcw_hist_bucket_bounds(PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12), 0, &lo, &hi);
    cr_assert(fabs(lo - exp2(-30)) < 1e-24 && fabs(hi / exp2(-30 + 0.125) - 1) < 1e-15, "%g %g", lo,
              hi);
}

/* The same through counter paths: a provider's instance observes a
 * log-normal sample in an interval; the query's p50..p99.9 are within the
 * bound of the interval's exact quantiles (and the observations before the
 * interval do not count). */
Test(query_histogram, quantiles_through_paths_are_the_intervals)
{
    enum { N = 20000 };
    prov v = open_set("HQ Paths");
    pcw_instance *in;
    hdata *a = create(&v, "a", &in);
    for (int i = 0; i < 5000; i++)
        lat_hist_observe(&a->latency, 1000000000ull); /* 1 s, before the interval */
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\HQ Paths(a)\\Latency");
    collect(q);
    uint64_t *obs = malloc(N * sizeof *obs);
    hd_rng rg = {7};
    for (size_t i = 0; i < N; i++) {
        hd_draw(&rg, dists[D_LOGNORMAL], &obs[i]);
        lat_hist_observe(&a->latency, obs[i]);
    }
    collect(q);
    qsort(obs, N, sizeof *obs, hd_cmp_u64);
    static const char *const cols[] = {"Latency:p50", "Latency:p90", "Latency:p99",
                                       "Latency:p99.9"};
    for (size_t k = 0; k < 4; k++) {
        pcw_pdh_value x = value(h, "a", cols[k], NULL);
        cr_assert_eq(x.status, PCW_CSTATUS_VALID, "%s: %s", cols[k], pcw_cstatus_str(x.status));
        check_quantile(cols[k], x.value, exact_quantile(obs, N, qs[k]), 3);
    }
    pcw_pdh_value r = value(h, "a", "Latency:rate", NULL);
    cr_assert_eq(r.status, PCW_CSTATUS_VALID);
    cr_assert_gt(r.value, 0.0);
    /* The distribution itself: N observations in the interval, 5000 + N
     * since the start. */
    size_t i;
    value(h, "a", "Latency:p99", &i);
    pcw_hist_dist d;
    cr_assert_eq(pcw_pdh_get_histogram(h, i, 0, &d), PCW_OK);
    cr_assert_eq(d.status, PCW_CSTATUS_VALID);
    cr_assert_eq(d.count, (uint64_t)N);
    cr_assert_eq(d.shape, (uint32_t)lat_hist_shape);
    cr_assert_gt(d.interval_ns, 0);
    cr_assert_eq(pcw_pdh_get_histogram(h, i, PCW_HIST_CUMULATIVE, &d), PCW_OK);
    cr_assert_eq(d.count, (uint64_t)N + 5000);
    free(obs);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* ---- names and paths ----------------------------------------------------- */

Test(query_histogram, statistic_names_parse_and_print_back)
{
    static const struct {
        const char *text;
        int kind;
        double q;
    } ok[] = {
        {"rate", PCW_HSTAT_RATE, 0},
        {"count", PCW_HSTAT_COUNT, 0},
        {"mean", PCW_HSTAT_MEAN, 0},
        {"max", PCW_HSTAT_MAX, 0},
        {"sum", PCW_HSTAT_SUM, 0},
        {"p50", PCW_HSTAT_QUANTILE, 0.5},
        {"p99", PCW_HSTAT_QUANTILE, 0.99},
        {"p99.9", PCW_HSTAT_QUANTILE, 0.999},
        {"p100", PCW_HSTAT_QUANTILE, 1.0},
        {"p0.1", PCW_HSTAT_QUANTILE, 0.001},
        {"p99.99", PCW_HSTAT_QUANTILE, 0.9999},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        pcw_hist_stat st;
        cr_assert_eq(pcw_hist_stat_parse(ok[i].text, &st), PCW_OK, "%s", ok[i].text);
        cr_assert_eq(st.kind, ok[i].kind, "%s", ok[i].text);
        cr_assert(fabs(st.q - ok[i].q) < 1e-12, "%s: q %g", ok[i].text, st.q);
        char back[32];
        pcw_hist_stat_name(&st, back, sizeof back);
        cr_assert_str_eq(back, ok[i].text);
    }
    static const char *const bad[] = {
        "",    "p",   "p0",   "p101", "p100.1", "p-1",  "p1e2", "p.5",
        "p5.", "P99", "Rate", "avg",  "p99.9x", " p99", "p 99", "p99999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pcw_hist_stat st;
        cr_assert_eq(pcw_hist_stat_parse(bad[i], &st), PCW_E_INVALID_NAME, "\"%s\"", bad[i]);
    }
    cr_assert_eq(pcw_hist_stat_parse(NULL, NULL), PCW_E_INVALID_PARAMETER);
}

static int collect_path(const char *path, void *arg)
{
    char *buf = arg;
    strcat(buf, path);
    strcat(buf, "\n");
    return 0;
}

Test(query_histogram, paths_select_statistics)
{
    prov v = open_set("HQ Names");
    pcw_instance *in;
    create(&v, "a", &in);
    pcw_pdh *q = open_query();
    /* The bare name: the default statistics, in order. */
    pcw_pdh_counter *h = add(q, "\\HQ Names(a)\\Latency");
    static const char *const defaults[] = {"Latency:rate", "Latency:mean", "Latency:p50",
                                           "Latency:p90",  "Latency:p99",  "Latency:p99.9",
                                           "Latency:max"};
    cr_assert_eq(pcw_pdh_value_count(h), 7);
    for (size_t i = 0; i < 7; i++) {
        pcw_pdh_value x;
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &x), PCW_OK);
        cr_assert_str_eq(x.counter, defaults[i]);
        cr_assert_eq(x.counter_type, PERF_PCW_HISTOGRAM);
        char path[256], want[256];
        pcw_pdh_value_path(h, i, 0, path, sizeof path);
        snprintf(want, sizeof want, "\\HQ Names(a)\\%s", defaults[i]);
        cr_assert_str_eq(path, want);
    }
    /* One statistic. */
    h = add(q, "\\HQ Names(a)\\Latency:p99.9");
    cr_assert_eq(pcw_pdh_value_count(h), 1);
    pcw_pdh_value x;
    pcw_pdh_get_value(h, 0, 0, &x);
    cr_assert_str_eq(x.counter, "Latency:p99.9");
    /* Names are case-insensitive as every counter name; statistics not. */
    h = add(q, "\\HQ Names(a)\\latency:count");
    cr_assert_eq(pcw_pdh_value_count(h), 1);
    /* A counter whose own name holds ':' is itself. */
    h = add(q, "\\HQ Names(a)\\Odd:max");
    cr_assert_eq(pcw_pdh_value_count(h), 1);
    pcw_pdh_get_value(h, 0, 0, &x);
    cr_assert_str_eq(x.counter, "Odd:max");
    cr_assert_eq(x.counter_type, PERF_COUNTER_LARGE_RAWCOUNT);
    /* A wildcard: every counter, a histogram's default statistics. */
    h = add(q, "\\HQ Names(a)\\*");
    cr_assert_eq(pcw_pdh_value_count(h), 1 + 7 + 7 + 1);
    /* A wildcard with a statistic: that statistic of each histogram. */
    h = add(q, "\\HQ Names(a)\\*:p99");
    cr_assert_eq(pcw_pdh_value_count(h), 2);
    pcw_pdh_get_value(h, 1, 0, &x);
    cr_assert_str_eq(x.counter, "Size:p99");
    /* Expansion names each statistic. */
    char buf[4096] = "";
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_expand(q, "\\HQ Names(*)\\Latency", collect_path, buf, &err), PCW_OK);
    cr_assert_str_eq(buf, "\\HQ Names(_Total)\\Latency:rate\n\\HQ Names(_Total)\\Latency:mean\n"
                          "\\HQ Names(_Total)\\Latency:p50\n\\HQ Names(_Total)\\Latency:p90\n"
                          "\\HQ Names(_Total)\\Latency:p99\n\\HQ Names(_Total)\\Latency:p99.9\n"
                          "\\HQ Names(_Total)\\Latency:max\n"
                          "\\HQ Names(a)\\Latency:rate\n\\HQ Names(a)\\Latency:mean\n"
                          "\\HQ Names(a)\\Latency:p50\n\\HQ Names(a)\\Latency:p90\n"
                          "\\HQ Names(a)\\Latency:p99\n\\HQ Names(a)\\Latency:p99.9\n"
                          "\\HQ Names(a)\\Latency:max\n");
    /* A wrong statistic is refused, naming it and the histogram. */
    pcw_pdh_counter *bad;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\HQ Names(a)\\Latency:p101", &bad, &err),
                 PCW_E_INVALID_NAME);
    cr_assert_eq(err.part, PCW_PATH_COUNTER);
    cr_assert(strstr(err.message, "\"p101\" is not a statistic of histogram \"Latency\""), "%s",
              err.message);
    /* Statistics have no wildcards. */
    cr_assert_eq(pcw_pdh_add_counter(q, "\\HQ Names(a)\\Latency:*", &bad, &err),
                 PCW_E_INVALID_NAME);
    cr_assert(strstr(err.message, "\"*\" is not a statistic"), "%s", err.message);
    /* A statistic of a counter that is no histogram is no counter. */
    cr_assert_eq(pcw_pdh_add_counter(q, "\\HQ Names(a)\\Requests:p99", &bad, &err),
                 PCW_E_NOT_FOUND);
    cr_assert(strstr(err.message, "no counter \"Requests:p99\""), "%s", err.message);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* ---- statuses -------------------------------------------------------------- */

static int status_of(const pcw_pdh_counter *h, const char *inst, const char *counter, double *v)
{
    pcw_pdh_value x = value(h, inst, counter, NULL);
    if (v)
        *v = x.value;
    return x.status;
}

/* Every value of h is the statistic of its own distribution
 * (pcw_pdh_get_histogram, cooked after the collection) - whether it was
 * cooked as the rows were read (a steady set: lib/query/hist_fused.c) or
 * after. Returns how many values were valid. */
static size_t check_values_are_their_distributions(const pcw_pdh_counter *h)
{
    size_t valid = 0;
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        pcw_pdh_value x;
        pcw_hist_dist d;
        pcw_hist_stat st;
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &x), PCW_OK);
        cr_assert_eq(pcw_pdh_get_histogram(h, i, 0, &d), PCW_OK);
        cr_assert_eq(pcw_hist_stat_parse(strchr(x.counter, ':') + 1, &st), PCW_OK);
        double want = 0.0;
        int ws = d.status == PCW_CSTATUS_VALID ? pcw_hist_cook(&d, &st, &want) : d.status;
        cr_assert_eq(x.status, ws, "%s\\%s: %s, its distribution's %s", x.instance, x.counter,
                     pcw_cstatus_str(x.status), pcw_cstatus_str(ws));
        cr_assert_eq(x.value, want, "%s\\%s: %.17g, its distribution's %.17g", x.instance,
                     x.counter, x.value, want);
        valid += x.status == PCW_CSTATUS_VALID;
    }
    return valid;
}

/* Values cooked as they are read are those cooked after: through steady
 * collections, an instance closing (the rows after it move), a reset,
 * a statistic two handles share, and two histograms of a set whose
 * statistics the handles ask in turns. */
static void values_cooked_as_read(void)
{
    prov v = open_set("HQ Fused");
    pcw_instance *in[4];
    hdata *x[4];
    static const char *const names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++)
        x[i] = create(&v, names[i], &in[i]);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *all = add(q, "\\HQ Fused(*)\\Latency");
    pcw_pdh_counter *size = add(q, "\\HQ Fused(*)\\Size");
    pcw_pdh_counter *more = add(q, "\\HQ Fused(*)\\Latency:p75");
    pcw_pdh_counter *again = add(q, "\\HQ Fused(*)\\Latency:p99");
    collect(q);
    hd_rng rg = {11};
    size_t valid = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 4; i++) {
            if (!x[i])
                continue;
            for (int n = 0; n < 200 * (i + 1); n++) {
                uint64_t ns;
                hd_draw(&rg, dists[(i + round) % D_N], &ns);
                lat_hist_observe(&x[i]->latency, ns);
                size_hist_observe(&x[i]->size, ns % 5000);
            }
        }
        if (round == 2) { /* b leaves: c and d move up a row */
            cr_assert_eq(pcw_close_instance(in[1]), PCW_OK);
            x[1] = NULL;
        }
        if (round == 4) { /* a bucket of c goes down: a reset */
            size_t j = 2;
            while (!x[2]->latency.words[j])
                j++;
            x[2]->latency.words[j]--;
        }
        collect(q);
        valid += check_values_are_their_distributions(all);
        valid += check_values_are_their_distributions(more);
        valid += check_values_are_their_distributions(size);
        valid += check_values_are_their_distributions(again);
    }
    cr_assert_eq(status_of(again, "c", "Latency:p99", NULL), PCW_CSTATUS_RESET);
    cr_assert_gt(valid, 100);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* With 16-byte loads (CPUs with AVX2), each row's deltas are taken as the
 * read copies it (lib/query/hist_fused.c, copy_run); with the baseline
 * loops ($PCW_NO_AVX2) after each run's copy (cook_run). */
Test(query_histogram, values_cooked_as_read_are_their_distributions)
{
    values_cooked_as_read();
}

static void setup_baseline(void)
{
    setenv("PCW_NO_AVX2", "1", 1);
    tu_root_setup();
}

Test(query_histogram, values_cooked_as_read_are_their_distributions_baseline,
     .init = setup_baseline)
{
    values_cooked_as_read();
}

/* How many values of h but _Total's have status `want`; *sum (may be
 * NULL) their values' sum. */
static size_t statuses(const pcw_pdh_counter *h, int want, double *sum)
{
    size_t n = 0;
    if (sum)
        *sum = 0;
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        pcw_pdh_value x;
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &x), PCW_OK);
        if (strcmp(x.instance, "_Total") == 0)
            continue;
        cr_assert_eq(x.status, want, "%s\\%s: %s", x.instance, x.counter,
                     pcw_cstatus_str(x.status));
        n++;
        if (sum)
            *sum += x.value;
    }
    return n;
}

/* Instances closed and others of the same names created in their slots
 * between two samples (all 64 of a chunk, so that even the live bits are
 * the same: tests/test_snapshot.c) are new instances: their first values
 * are "new data needed", never an interval against the old instances'
 * words (here larger than theirs, so such an interval would be a reset,
 * and its count wrong); the next interval is their own. */
Test(query_histogram, instances_replaced_in_their_slots_are_not_their_predecessors)
{
    prov v = open_set("HQ Replace");
    enum { N = 64 };
    pcw_instance *in[N];
    hdata *x[N];
    char name[16];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "i%d", i);
        x[i] = create(&v, name, &in[i]);
    }
    pcw_pdh *q = open_query();
    pcw_pdh_counter *count = add(q, "\\HQ Replace(*)\\Latency:count");
    pcw_pdh_counter *p99 = add(q, "\\HQ Replace(*)\\Latency:p99");
    collect(q);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            for (int n = 0; n < 100; n++)
                lat_hist_observe(&x[i]->latency, 1000000 + (uint64_t)n * 1000);
        collect(q);
    }
    double c;
    cr_assert_eq(status_of(count, "i7", "Latency:count", &c), PCW_CSTATUS_VALID);
    cr_assert_eq(c, 100.0);
    for (int i = 0; i < N; i++)
        cr_assert_eq(pcw_close_instance(in[i]), PCW_OK);
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "i%d", i);
        x[i] = create(&v, name, &in[i]);
        cr_assert_lt(pcw_instance_id(in[i]), N, "the same slots, the same live bits");
        for (int n = 0; n < 7; n++)
            lat_hist_observe(&x[i]->latency, 1000);
    }
    collect(q);
    /* (By count, not name: they may be listed as i<n>#1 beside the closed i<n>.) */
    cr_assert_eq(statuses(count, PCW_CSTATUS_NEW_DATA_NEEDED, NULL), N);
    cr_assert_eq(statuses(p99, PCW_CSTATUS_NEW_DATA_NEEDED, NULL), N);
    for (int i = 0; i < N; i++)
        for (int n = 0; n < 5; n++)
            lat_hist_observe(&x[i]->latency, 2000);
    collect(q);
    cr_assert_eq(statuses(count, PCW_CSTATUS_VALID, &c), N);
    cr_assert_eq(c, 5.0 * N);
    cr_assert_geq(check_values_are_their_distributions(p99), N);
    collect(q);
    cr_assert_eq(statuses(count, PCW_CSTATUS_VALID, &c), N);
    cr_assert_eq(c, 0.0);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* A read of a steady set that fails half-way (the segment cut short
 * under it: the runs before the cut were handed over and cooked, the
 * rest fault) gives no value cooked from the rows it did read, and the
 * reads after it recover: once the segment is whole again, every value
 * is its distribution's and, two collections on, valid. */
Test(query_histogram, a_read_that_fails_half_way_and_the_next_that_recovers)
{
    prov v = open_set("HQ Cut");
    enum { N = 3000 };
    pcw_instance **in = calloc(N, sizeof *in);
    hdata **x = calloc(N, sizeof *x);
    cr_assert(in && x);
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "i%d", i);
        x[i] = create(&v, name, &in[i]);
    }
    pcw_pdh *q = open_query();
    pcw_pdh_counter *p99 = add(q, "\\HQ Cut(*)\\Latency:p99");
    collect(q);
    hd_rng rg = {5};
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            for (int n = 0; n < 3; n++) {
                uint64_t ns;
                hd_draw(&rg, dists[D_BIMODAL], &ns);
                lat_hist_observe(&x[i]->latency, ns);
            }
        collect(q);
    }
    cr_assert_geq(check_values_are_their_distributions(p99), N); /* and _Total's */
    /* Cut the segment in the middle of its rows, read, put it back. */
    const char *path = pcw_provider_path(v.p);
    int fd = open(path, O_RDWR);
    cr_assert_geq(fd, 0, "%s", path);
    struct stat sb;
    cr_assert_eq(fstat(fd, &sb), 0);
    size_t len = (size_t)sb.st_size;
    unsigned char *saved = malloc(len);
    cr_assert_not_null(saved);
    cr_assert_eq(pread(fd, saved, len, 0), (ssize_t)len);
    cr_assert_eq(ftruncate(fd, (off_t)(len / 2 & ~(size_t)4095)), 0);
    pcw_pdh_collect(q, NULL); /* fails for the set, whatever it reports */
    cr_assert_eq(ftruncate(fd, (off_t)len), 0);
    cr_assert_eq(pwrite(fd, saved, len, 0), (ssize_t)len);
    close(fd);
    free(saved);
    size_t valid = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            uint64_t ns;
            hd_draw(&rg, dists[D_UNIFORM], &ns);
            lat_hist_observe(&x[i]->latency, ns);
        }
        collect(q);
        valid = check_values_are_their_distributions(p99);
    }
    cr_assert_geq(valid, N);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
    free(in);
    free(x);
}

Test(query_histogram, statuses)
{
    prov v = open_set("HQ Status");
    pcw_instance *in;
    hdata *a = create(&v, "a", &in);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *p99 = add(q, "\\HQ Status(a)\\Latency:p99");
    pcw_pdh_counter *max = add(q, "\\HQ Status(a)\\Latency:max");
    pcw_pdh_counter *mean = add(q, "\\HQ Status(a)\\Latency:mean");
    pcw_pdh_counter *rate = add(q, "\\HQ Status(a)\\Latency:rate");
    pcw_pdh_counter *sum = add(q, "\\HQ Status(a)\\Latency:sum");
    collect(q);
    /* The first sample: no interval yet. */
    cr_assert_eq(status_of(p99, "a", "Latency:p99", NULL), PCW_CSTATUS_NEW_DATA_NEEDED);
    cr_assert_eq(status_of(rate, "a", "Latency:rate", NULL), PCW_CSTATUS_NEW_DATA_NEEDED);
    /* No observations: a rate of 0, no quantile, mean or max. */
    collect(q);
    double x;
    cr_assert_eq(status_of(rate, "a", "Latency:rate", &x), PCW_CSTATUS_VALID);
    cr_assert_eq(x, 0.0);
    cr_assert_eq(status_of(p99, "a", "Latency:p99", NULL), PCW_CSTATUS_NO_DATA);
    cr_assert_eq(status_of(mean, "a", "Latency:mean", NULL), PCW_CSTATUS_NO_DATA);
    cr_assert_eq(status_of(max, "a", "Latency:max", NULL), PCW_CSTATUS_NO_DATA);
    cr_assert_eq(status_of(sum, "a", "Latency:sum", &x), PCW_CSTATUS_VALID);
    cr_assert_eq(x, 0.0);
    /* Everything in the top bucket (above 2^12 s): at least 4096 s. */
    lat_hist_observe(&a->latency, 5000ull * 1000000000ull);
    collect(q);
    cr_assert_eq(status_of(p99, "a", "Latency:p99", &x), PCW_CSTATUS_ABOVE_RANGE);
    cr_assert_eq(x, 4096.0);
    cr_assert_eq(status_of(max, "a", "Latency:max", &x), PCW_CSTATUS_ABOVE_RANGE);
    cr_assert_eq(x, 4096.0);
    cr_assert_eq(status_of(mean, "a", "Latency:mean", &x), PCW_CSTATUS_VALID);
    cr_assert_eq(x, 5000.0);
    /* A bucket went down: reset, for every statistic. */
    a->latency.words[PCW_HISTOGRAM_NBUCKETS(3, -30, 12) + 1] -= 1; /* the top bucket */
    collect(q);
    cr_assert_eq(status_of(p99, "a", "Latency:p99", NULL), PCW_CSTATUS_RESET);
    cr_assert_eq(status_of(rate, "a", "Latency:rate", NULL), PCW_CSTATUS_RESET);
    size_t i;
    value(p99, "a", "Latency:p99", &i);
    pcw_hist_dist d;
    cr_assert_eq(pcw_pdh_get_histogram(p99, i, 0, &d), PCW_OK);
    cr_assert_eq(d.status, PCW_CSTATUS_RESET);
    cr_assert_null(d.buckets);
    /* A sum the buckets cannot hold: 10 observations of 1 ms, a sum of 1 h. */
    for (int k = 0; k < 10; k++)
        lat_hist_observe(&a->latency, 1000000);
    a->latency.words[0] += 3600ull * 1000000000ull;
    collect(q);
    cr_assert_eq(status_of(mean, "a", "Latency:mean", NULL), PCW_CSTATUS_INCONSISTENT);
    cr_assert_eq(status_of(sum, "a", "Latency:sum", NULL), PCW_CSTATUS_INCONSISTENT);
    cr_assert_eq(status_of(p99, "a", "Latency:p99", NULL), PCW_CSTATUS_VALID);
    /* ... and one that fits, give or take the observation a copy may see
     * without its sum (pcw/histogram.h): valid. */
    for (int k = 0; k < 10; k++)
        lat_hist_observe(&a->latency, 1000000);
    a->latency.words[0] -= 1000000;
    collect(q);
    cr_assert_eq(status_of(mean, "a", "Latency:mean", NULL), PCW_CSTATUS_VALID);
    /* Counts that overflow 64 bits: two buckets of 2^63 each. */
    a->latency.words[2 + 50] += 1ull << 63;
    a->latency.words[2 + 60] += 1ull << 63;
    collect(q);
    cr_assert_eq(status_of(p99, "a", "Latency:p99", NULL), PCW_CSTATUS_OVERFLOW);
    cr_assert_eq(status_of(rate, "a", "Latency:rate", NULL), PCW_CSTATUS_OVERFLOW);
    cr_assert_eq(pcw_pdh_get_histogram(p99, i, 0, &d), PCW_OK);
    cr_assert_eq(d.status, PCW_CSTATUS_OVERFLOW);
    /* Statuses have their phrases. */
    cr_assert(strstr(pcw_cstatus_str(PCW_CSTATUS_ABOVE_RANGE), "above range"));
    cr_assert(strstr(pcw_cstatus_str(PCW_CSTATUS_INCONSISTENT), "inconsistent"));
    cr_assert_eq(pcw_cstatus_pdh(PCW_CSTATUS_ABOVE_RANGE, 0), PCW_PDH_CSTATUS_INVALID_DATA);
    cr_assert_eq(pcw_cstatus_pdh(PCW_CSTATUS_INCONSISTENT, 0), PCW_PDH_CSTATUS_INVALID_DATA);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* Hostile words, many at once: every statistic of every instance has a
 * status, and nothing reads outside the words (ASan). */
Test(query_histogram, hostile_words_give_statuses)
{
    prov v = open_set("HQ Hostile");
    pcw_instance *in[4];
    hdata *x[4];
    for (int k = 0; k < 4; k++) {
        char name[8];
        snprintf(name, sizeof name, "h%d", k);
        x[k] = create(&v, name, &in[k]);
    }
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\HQ Hostile(*)\\*");
    collect(q);
    hd_rng rg = {99};
    for (int round = 0; round < 20; round++) {
        for (int k = 0; k < 4; k++) {
            uint64_t *w = x[k]->latency.words;
            size_t nw = sizeof x[k]->latency.words / sizeof w[0];
            for (int j = 0; j < 8; j++) {
                uint64_t r = hd_next(&rg);
                size_t at = r % nw;
                switch ((r >> 32) % 4) {
                case 0:
                    w[at] = hd_next(&rg); /* anything */
                    break;
                case 1:
                    w[at] = UINT64_MAX - (r & 3);
                    break;
                case 2:
                    w[at] = w[at] ? w[at] - 1 : 0; /* backwards */
                    break;
                default:
                    w[at] += r >> 40; /* forwards, a lot */
                }
            }
            uint64_t *s = x[k]->size.words;
            s[hd_next(&rg) % (sizeof x[k]->size.words / sizeof s[0])] = hd_next(&rg);
        }
        collect(q);
        size_t n = pcw_pdh_value_count(h);
        double *vals = malloc(n * sizeof *vals);
        uint8_t *st = malloc(n);
        cr_assert_eq(pcw_pdh_cook_all(h, 0, vals, st), PCW_OK);
        for (size_t i = 0; i < n; i++) {
            cr_assert_leq(st[i], PCW_CSTATUS_LAST);
            cr_assert(isfinite(vals[i]));
            if (st[i] != PCW_CSTATUS_VALID && st[i] != PCW_CSTATUS_ABOVE_RANGE)
                cr_assert_eq(vals[i], 0.0);
        }
        free(vals);
        free(st);
    }
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* ---- totals ------------------------------------------------------------------ */

Test(query_histogram, total_is_the_histogram_of_the_union)
{
    prov v = open_set("HQ Total");
    pcw_instance *ia, *ib;
    hdata *a = create(&v, "a", &ia), *b = create(&v, "b", &ib);
    lat_hist_observe(&a->latency, 123456); /* before the interval */
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\HQ Total(*)\\Latency");
    pcw_pdh_counter *size = add(q, "\\HQ Total(_Total)\\Size:p50");
    collect(q);
    cr_assert_eq(status_of(h, "_Total", "Latency:p99", NULL), PCW_CSTATUS_NEW_DATA_NEEDED);
    lat_hist union_h = {{0}};
    hd_rng r = {5};
    for (int i = 0; i < 30000; i++) {
        uint64_t ns;
        hd_draw(&r, dists[i % 2 ? D_LOGNORMAL : D_UNIFORM], &ns);
        lat_hist_observe(i % 2 ? &a->latency : &b->latency, ns);
        lat_hist_observe(&union_h, ns);
    }
    size_hist_observe(&a->size, 1000);
    collect(q);
    size_t i;
    value(h, "_Total", "Latency:p50", &i);
    pcw_hist_dist d;
    cr_assert_eq(pcw_pdh_get_histogram(h, i, 0, &d), PCW_OK);
    cr_assert_eq(d.status, PCW_CSTATUS_VALID, "%s", pcw_cstatus_str(d.status));
    cr_assert_eq(d.zero, union_h.words[1]);
    cr_assert_eq(d.sum, union_h.words[0]);
    cr_assert_eq(d.count, 30000);
    for (uint32_t j = 0; j < d.nbuckets; j++)
        cr_assert_eq(d.buckets[j], union_h.words[2 + j], "bucket %u", j);
    /* Its statistics are the union's. */
    pcw_hist_dist u = {PCW_CSTATUS_VALID, lat_hist_shape, d.nbuckets,       union_h.words[1],
                       union_h.words + 2, 30000,          union_h.words[0], d.interval_ns};
    static const char *const cols[] = {"Latency:mean", "Latency:p50",   "Latency:p90",
                                       "Latency:p99",  "Latency:p99.9", "Latency:max"};
    for (size_t k = 0; k < 6; k++) {
        pcw_hist_stat st;
        cr_assert_eq(pcw_hist_stat_parse(strchr(cols[k], ':') + 1, &st), PCW_OK);
        double want, got;
        cr_assert_eq(pcw_hist_cook(&u, &st, &want), PCW_CSTATUS_VALID);
        cr_assert_eq(status_of(h, "_Total", cols[k], &got), PCW_CSTATUS_VALID);
        cr_assert_eq(got, want, "%s: %.9g, union %.9g", cols[k], got, want);
    }
    /* A histogram without an aggregate is not totalled. */
    cr_assert_eq(status_of(size, "_Total", "Size:p50", NULL), PCW_CSTATUS_NOT_AGGREGATED);
    /* A member that resets leaves the interval; the other still counts. */
    size_t j = 2;
    while (!b->latency.words[j])
        j++;
    b->latency.words[j]--;
    for (int k = 0; k < 7; k++)
        lat_hist_observe(&a->latency, 2000000);
    collect(q);
    cr_assert_eq(status_of(h, "b", "Latency:p50", NULL), PCW_CSTATUS_RESET);
    cr_assert_eq(pcw_pdh_get_histogram(h, i, 0, &d), PCW_OK);
    cr_assert_eq(d.status, PCW_CSTATUS_VALID);
    cr_assert_eq(d.count, 7);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* A member whose interval is not valid (it reset) is left out of a
 * histogram's total as out of every other counter's total, and the total
 * stays valid (docs/query.md, "Totals"): its Latency:count and the
 * Requests rate both count the other member only. */
Test(query_histogram, a_total_leaves_out_a_member_that_reset_as_every_counter)
{
    prov v = open_set("HQ Parity");
    pcw_instance *ia, *ib;
    hdata *a = create(&v, "a", &ia), *b = create(&v, "b", &ib);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\HQ Parity(*)\\Latency:count");
    pcw_pdh_counter *r = add(q, "\\HQ Parity(*)\\Requests");
    a->requests = 1000, b->requests = 1000;
    lat_hist_observe(&b->latency, 5000);
    collect(q);
    a->requests += 100, b->requests += 50;
    for (int i = 0; i < 7; i++)
        lat_hist_observe(&a->latency, 2000000);
    for (int i = 0; i < 3; i++)
        lat_hist_observe(&b->latency, 3000000);
    collect(q);
    double n, ra, rt;
    cr_assert_eq(status_of(h, "_Total", "Latency:count", &n), PCW_CSTATUS_VALID);
    cr_assert_eq(n, 10.0);
    /* b restarts: its count and a bucket go down. */
    b->requests = 0;
    size_t j = 2;
    while (!b->latency.words[j])
        j++;
    b->latency.words[j]--;
    a->requests += 20;
    for (int i = 0; i < 5; i++)
        lat_hist_observe(&a->latency, 2000000);
    collect(q);
    cr_assert_eq(status_of(h, "b", "Latency:count", NULL), PCW_CSTATUS_RESET);
    cr_assert_eq(status_of(r, "b", "Requests", NULL), PCW_CSTATUS_RESET);
    cr_assert_eq(status_of(h, "_Total", "Latency:count", &n), PCW_CSTATUS_VALID);
    cr_assert_eq(n, 5.0);
    cr_assert_eq(status_of(r, "a", "Requests", &ra), PCW_CSTATUS_VALID);
    int ts = status_of(r, "_Total", "Requests", &rt);
    cr_assert_eq(ts, PCW_CSTATUS_VALID, "%s", pcw_cstatus_str(ts));
    cr_assert_eq(rt, ra, "_Total %.9g, a %.9g", rt, ra);
    pcw_pdh_close(q);
    pcw_provider_close(v.p);
}

/* Another provider coming (a consumer refresh, which binds every set
 * again) changes nothing of a set with a histogram: the same instances
 * (pcw_pdh_instance_epoch), and the interval still there. (The set's bound
 * counter sizes were kept in a byte, so a histogram's never matched the
 * segment's again: every refresh made its set new, its samples lost.) */
Test(query_histogram, a_refresh_keeps_a_histogram_set)
{
    prov v = open_set("HQ Refresh");
    pcw_instance *in;
    hdata *a = create(&v, "a", &in);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\HQ Refresh(a)\\Latency:p99");
    collect(q);
    collect(q);
    uint64_t epoch = pcw_pdh_instance_epoch(h);
    prov other = open_set("HQ Refresh Other");
    lat_hist_observe(&a->latency, 1000000);
    collect(q);
    cr_assert_eq(pcw_pdh_instance_epoch(h), epoch, "the set was made new");
    cr_assert_eq(status_of(h, "a", "Latency:p99", NULL), PCW_CSTATUS_VALID);
    pcw_pdh_close(q);
    pcw_provider_close(other.p);
    pcw_provider_close(v.p);
}

/* ---- a provider process (tests/helpers/hist_provider) ----------------------- */

static void hp_cmd(tu_child *c, const char *cmd)
{
    char reply[256];
    cr_assert(tu_command(c, reply, sizeof reply, cmd) > 0, "no reply to %s", cmd);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", cmd, reply);
}

/* Two instances of another process observe known distributions; each
 * instance's quantiles and the _Total's (the union's) are within the bound
 * of the exact ones, and every value of the first sample says so. */
Test(query_histogram, a_provider_process_and_its_total)
{
    tu_child p;
    const char *args[] = {"--set", "HQ Proc", "--instances", "2", NULL};
    cr_assert_eq(tu_spawn(&p, "hist_provider", args), 0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0 && strncmp(line, "ready", 5) == 0,
              "hist_provider: %s", line);
    pcw_pdh *q = open_query();
    pcw_pdh_counter *h = add(q, "\\HQ Proc(*)\\Latency");
    pcw_pdh_counter *count = add(q, "\\HQ Proc(*)\\Latency:count");
    collect(q);
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        pcw_pdh_value v;
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
        cr_assert_eq(v.status, PCW_CSTATUS_NEW_DATA_NEEDED, "%s %s", v.instance, v.counter);
    }
    static const char *const d0 = "lognormal:2000000:1", *const d1 = "bimodal:300000:40000000:0.8";
    char cmd[256];
    snprintf(cmd, sizeof cmd, "observe 0 Latency %s 30000 3", d0);
    hp_cmd(&p, cmd);
    snprintf(cmd, sizeof cmd, "observe 1 Latency %s 10000 4", d1);
    hp_cmd(&p, cmd);
    collect(q);
    uint64_t *a = hd_sorted(d0, 30000, 3), *b = hd_sorted(d1, 10000, 4);
    uint64_t *u = malloc(40000 * sizeof *u);
    cr_assert(a && b && u);
    memcpy(u, a, 30000 * sizeof *u);
    memcpy(u + 30000, b, 10000 * sizeof *u);
    qsort(u, 40000, sizeof *u, hd_cmp_u64);
    static const struct {
        const char *inst;
        size_t n;
    } who[] = {{"inst0", 30000}, {"inst1", 10000}, {"_Total", 40000}};
    const uint64_t *sorted[] = {a, b, u};
    static const char *const cols[] = {"Latency:p50", "Latency:p90", "Latency:p99",
                                       "Latency:p99.9"};
    for (size_t w = 0; w < 3; w++) {
        for (size_t k = 0; k < 4; k++) {
            pcw_pdh_value x = value(h, who[w].inst, cols[k], NULL);
            cr_assert_eq(x.status, PCW_CSTATUS_VALID, "%s %s: %s", who[w].inst, cols[k],
                         pcw_cstatus_str(x.status));
            char what[64];
            snprintf(what, sizeof what, "%s %s", who[w].inst, cols[k]);
            check_quantile(what, x.value, exact_quantile(sorted[w], who[w].n, qs[k]), 3);
        }
        pcw_pdh_value c = value(count, who[w].inst, "Latency:count", NULL);
        cr_assert_eq(c.status, PCW_CSTATUS_VALID);
        cr_assert_eq(c.value, (double)who[w].n, "%s count %g", who[w].inst, c.value);
    }
    free(a);
    free(b);
    free(u);
    pcw_pdh_close(q);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}
