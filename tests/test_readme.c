/* SPDX-License-Identifier: MIT */
/*
 * tests/test_readme.c - the README's provider, built from the README as a
 * reader would build it (its web.h, web.c and main.c blocks, cc -std=c11
 * -Wall -Wextra -Werror against lib/), run, and read back through the
 * query: a provider written from the README gets a _Total (issue 24 item
 * 8). scripts/install-test.sh builds the same blocks against an installed
 * tree; this one runs in make check.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcw/consumer.h"
#include "pcw/histogram.h"

#include "pcw/pdh.h"
#include "readme_build.h"

TestSuite(readme, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

Test(readme, provider_gets_a_total)
{
    char dir[64];
    readme_build_web(dir, sizeof dir);
    pid_t pid = readme_start_web(dir, NULL);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = NULL;
    pcw_path_error err;
    pcw_pdh_value v = {0};
    long long deadline = tu_now_ms() + 10000;
    int rc = PCW_E_NOT_FOUND;
    /* The provider runs for 3 s: wait (bounded) until it has published,
     * then until its _Total has a rate. */
    while (tu_now_ms() < deadline) {
        if (!h)
            rc = pcw_pdh_add_counter(q, "\\Web Server(_Total)\\Requests", &h, &err);
        if (h) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            if (pcw_pdh_value_count(h) == 1 && pcw_pdh_get_value(h, 0, 0, &v) == PCW_OK &&
                v.status == PCW_CSTATUS_VALID)
                break;
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* pace the poll */
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    readme_remove(dir);
    cr_assert_not_null(h, "\\Web Server(_Total)\\Requests: %d %s", rc, err.message);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "\\Web Server(_Total)\\Requests: %s",
                 pcw_cstatus_str(v.status));
    cr_assert_eq(v.kind, PCW_PDH_TOTAL);
    cr_assert_eq(v.sources, 1);
    pcw_pdh_close(q);
}

/* The README's "Latency" histogram (issue 27 section 2): its words read
 * through the consumer library while the provider runs hold every request
 * once (the buckets' count follows "Requests", which the program adds
 * right after observing) and put the median in the bucket of the busy
 * wait's 250 us (up to twice that on a loaded machine). */
Test(readme, latency_histogram)
{
    char dir[64];
    readme_build_web(dir, sizeof dir);
    pid_t pid = readme_start_web(dir, NULL);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    const pcw_counter *lat = NULL, *req = NULL;
    uint64_t count = 0, requests = 0, sum = 0, *words = NULL;
    long long deadline = tu_now_ms() + 10000;
    while (tu_now_ms() < deadline && requests < 200) {
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* pace the poll */
        cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
        const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Web Server");
        if (!m || pcw_consumer_read(c, m, &snap, 0, NULL) != PCW_OK || snap.count != 1)
            continue;
        for (uint32_t i = 0; i < m->meta->counter_count; i++) {
            const pcw_counter *k = &m->meta->counters[i];
            if (k->id == 5)
                lat = k;
            if (k->id == 1)
                req = k;
        }
        cr_assert(lat && req);
        cr_assert_eq(lat->type, PERF_PCW_HISTOGRAM);
        cr_assert_eq(lat->histogram, PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12));
        cr_assert_eq(lat->aggregate, PCW_AGGREGATE_TOTAL);
        uint32_t nw = 2 + pcw_hist_nbuckets(lat->histogram);
        free(words);
        words = malloc(8u * nw);
        cr_assert_not_null(words);
        memcpy(words, pcw_snapshot_row(&snap, 0) + lat->data_offset, 8u * nw);
        requests = pcw_snapshot_value(&snap, 0, req);
        sum = words[0];
        count = 0;
        for (uint32_t w = 1; w < nw; w++)
            count += words[w];
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    readme_remove(dir);
    cr_assert_geq(requests, 200, "the README's provider served %llu requests",
                  (unsigned long long)requests);
    /* Observed before Requests is added: the same, or one ahead. */
    cr_assert(count == requests || count == requests + 1, "count %llu, requests %llu",
              (unsigned long long)count, (unsigned long long)requests);
    cr_assert_geq(sum, count * 250000, "sum %llu ns for %llu requests of 250 us",
                  (unsigned long long)sum, (unsigned long long)count);
    /* The median's bucket: its upper bound 2^(i/8) s is at least 250 us and
     * at most that of the bucket holding 500 us (530.6 us). */
    uint64_t seen = 0;
    uint32_t w = 1;
    while (seen + words[w] < (count + 1) / 2)
        seen += words[w++];
    cr_assert_geq(w, 2, "the median is in the zero bucket");
    int32_t i = pcw_hist_min_index(lat->histogram) + 1 + (int32_t)(w - 2);
    double upper = exp2(i / 8.0);
    cr_expect(upper >= 250e-6 && upper <= 531e-6, "median bucket %d, upper bound %g s", i, upper);
    free(words);
    pcw_snapshot_free(&snap);
    pcw_consumer_close(c);
}

/* Querying the README's histogram by path as pcwstat does: the query layer
 * kept a counter's size in a byte, so a 2,704-byte histogram never matched
 * its own bound metadata, adding a counter re-bound the set, and the
 * wildcard's next value was read from freed memory (pcwstat "\Web
 * Server(*)\Latency" -sc 2 died of SIGSEGV in check-doc-examples). */
Test(readme, latency_histogram_query_as_pcwstat)
{
    char dir[64];
    readme_build_web(dir, sizeof dir);
    pid_t pid = readme_start_web(dir, NULL);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = NULL;
    pcw_path_error err;
    long long deadline = tu_now_ms() + 10000;
    int rc = PCW_E_NOT_FOUND, collected = 0;
    while (tu_now_ms() < deadline && collected < 4) {
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL); /* pace the poll */
        if (!h && (rc = pcw_pdh_add_counter(q, "\\Web Server(*)\\Latency", &h, &err)) != PCW_OK)
            continue;
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        /* What pcwstat does to make its columns: each value of the
         * wildcard path becomes a counter of its own, added while the
         * wildcard's values are read. */
        for (size_t i = 0; i < pcw_pdh_value_count(h) && i < 8; i++) {
            pcw_pdh_value v;
            char bare[PCW_PATH_MAX];
            pcw_pdh_counter *one;
            cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
            cr_assert_gt(pcw_pdh_value_path(h, i, 0, bare, sizeof bare), 0);
            cr_assert_eq(pcw_pdh_add_counter(q, bare, &one, &err), PCW_OK, "%s: %s", bare,
                         err.message);
        }
        collected += pcw_pdh_value_count(h) > 0;
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    readme_remove(dir);
    cr_assert_not_null(h, "\\Web Server(*)\\Latency: %d %s", rc, err.message);
    cr_assert_eq(collected, 4);
    pcw_pdh_close(q);
}

/* pcwdump on the README's provider: the histogram counter's type is named
 * (it printed 0x00060700, its own table of names lacking the type) and its
 * count of observations follows Requests (it printed the low 4 bytes of
 * the sum: a counter's value is read as 4 bytes unless it is 8). In JSON a
 * histogram's value is an object (docs/pcwdump-json.md): its count is
 * "count", after "sum" and "zero". */
Test(readme, pcwdump_shows_the_histogram)
{
    char dir[64];
    readme_build_web(dir, sizeof dir);
    pid_t pid = readme_start_web(dir, NULL);
    char cmd[PATH_MAX + 64], out[1 << 16];
    snprintf(cmd, sizeof cmd, "%s/pcwdump --counterset 'Web Server' --json --compact",
             PCW_BUILD_DIR);
    unsigned long long requests = 0, latency = 0;
    const char *at = NULL;
    long long deadline = tu_now_ms() + 10000;
    while (tu_now_ms() < deadline && requests < 100) {
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL); /* pace the poll */
        FILE *f = popen(cmd, "r");
        cr_assert_not_null(f);
        size_t n = fread(out, 1, sizeof out - 1, f);
        out[n] = 0;
        pclose(f);
        if ((at = strstr(out, "\"values\":{\"Requests\":")) != NULL)
            sscanf(at, "\"values\":{\"Requests\":%llu", &requests);
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    readme_remove(dir);
    cr_assert_geq(requests, 100, "pcwdump:\n%s", out);
    cr_assert_not_null(
        strstr(out, "\"type\":395008,\"type_name\":\"PERF_PCW_HISTOGRAM\",\"size\":2704"), "%s",
        out);
    const char *l = strstr(at, "\"Latency\":{\"sum\":");
    cr_assert_not_null(l, "%s", out);
    l = strstr(l, "\"count\":");
    cr_assert_not_null(l, "%s", out);
    sscanf(l, "\"count\":%llu", &latency);
    cr_assert(latency == requests || latency == requests + 1, "Latency %llu, Requests %llu",
              latency, requests);
}
