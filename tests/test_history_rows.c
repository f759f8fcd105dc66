/* SPDX-License-Identifier: MIT */
/*
 * tests/test_history_rows.c - the log's row samples (format 3,
 * docs/history.md "Row samples") and the recorder's raw rows
 * (lib/query/collect_raw.c):
 *
 *   - round trip: rows written and read back as the layouts say, through
 *     samples that change nothing, change everything, wrap, reset, lose
 *     and gain instances in the middle of a block, change a layout, mix
 *     in values given whole and value samples with a histogram;
 *   - a row sample cancelled half-way (a collection that started again)
 *     leaves the log as if it had never begun;
 *   - a format 2 log (tests/data/format2.pcwlog, written by the format 2
 *     writer) reads as it was written;
 *   - pcw__q_collect_raw: the rows it hands over are the instances' raw
 *     samples (pcw_pdh_raw_column) by the layouts pcw__q_raw_layout gives,
 *     while values change and instances come and go; and a recording of a
 *     live provider reads back as those raw samples.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <fcntl.h>

#include "pcw/histogram.h"
#include "pcw/pdh.h"

#include "../lib/history/codec.h"
#include "../lib/history/history.h"
#include "../lib/query/collect_raw.h"
#include "history_v2.h"

TestSuite(history_rows, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* ---- writing and reading rows ---------------------------------------------- */

#define W      5 /* words a row */
#define ROWS   4 /* rows at first; one more from sample 12 */
#define NSAMP  26
#define HSHAPE PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12)

/* Column k's layout (`alt`: column 0's after its identity changed). */
static pcw__hist_layout layout_of(uint32_t k, int alt)
{
    pcw__hist_layout l = {.status = PCW_CSTATUS_VALID, .first = k, .freq_const = 1000000000u};
    if (k == 0)
        l.second = alt ? PCW__HIST_SRC_CONST : PCW__HIST_SRC_TIME;
    if (k == 2)
        l.second = PCW__HIST_SRC_TIME100;
    if (k == 3) /* a fraction: its base in word 4, its multi in word 1 */
        l.second = PCW__HIST_SRC_WORD + 4, l.multi = PCW__HIST_SRC_WORD + 1;
    if (k == 4) /* its frequency a word's */
        l.freq = PCW__HIST_SRC_WORD + 1;
    l.words = pcw__hist_layout_words(&l, PCW_CSTATUS_LAST);
    return l;
}

/* What a reader must give for word row w under layout l at time t,
 * computed here field by field. */
static pcw_raw expect_raw(const pcw__hist_layout *l, const uint64_t *w, uint64_t t)
{
    pcw_raw r = {.status = (int)l->status,
                 .first = w[l->first],
                 .multi = 1,
                 .freq = l->freq_const,
                 .time_ns = t};
    if (l->second == PCW__HIST_SRC_TIME)
        r.second = t;
    else if (l->second == PCW__HIST_SRC_TIME100)
        r.second = t / 100;
    else if (l->second >= PCW__HIST_SRC_WORD)
        r.second = w[l->second - PCW__HIST_SRC_WORD];
    if (l->multi >= PCW__HIST_SRC_WORD)
        r.multi = w[l->multi - PCW__HIST_SRC_WORD];
    if (l->freq >= PCW__HIST_SRC_WORD)
        r.freq = w[l->freq - PCW__HIST_SRC_WORD];
    return r;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Sample k's words of row r, column c (rows kept between calls). */
static void next_words(uint64_t words[ROWS + 1][W], int k, uint64_t *seed)
{
    for (int r = 0; r < ROWS + 1; r++)
        for (int c = 0; c < W; c++) {
            uint64_t *x = &words[r][c];
            if (k == 0)
                *x = (uint64_t)(r * 100 + c);
            else if (k <= 2)
                ; /* all unchanged */
            else if (k == 3)
                *x += 1000 + (uint64_t)c; /* all changed */
            else if (k == 4)
                *x = UINT64_MAX - (uint64_t)c; /* a wrap next: */
            else if (k == 5)
                *x = (uint64_t)c + 3;
            else if (k == 6)
                *x = 0; /* a reset */
            else if (rnd(seed) % 3 == 0)
                *x += rnd(seed) >> (rnd(seed) % 64); /* some change, by any amount */
        }
}

typedef struct expect {
    pcw_raw raw[(ROWS + 1) * W + 1];
    uint64_t hw[2 + 4096];
    uint64_t mono, real;
} expect;

/* Write the scenario into fd's log; e[k]: what sample k must read as. */
static void write_scenario(int fd, expect *e, uint32_t *nseries_out)
{
    char why[256];
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, "rows", NULL, why, sizeof why), 0, "%s", why);
    uint32_t S = ROWS * W, H = S; /* the histogram: series S, before the new row */
    for (uint32_t i = 0; i < S; i++) {
        char path[32];
        snprintf(path, sizeof path, "\\\\h\\R(%u)\\c%u", i / W, i % W);
        pcw__hist_series id = {
            .type = PERF_COUNTER_BULK_COUNT, .instance_id = i / W, .layout = layout_of(i % W, 0)};
        cr_assert_eq(pcw__hist_writer_series(w, i, path, PCW__HIST_KIND_RAW), 0);
        cr_assert_eq(pcw__hist_writer_ident(w, i, &id), 0);
    }
    pcw__hist_series hid = {
        .type = PERF_PCW_HISTOGRAM, .hshape = HSHAPE, .hstat = {.kind = PCW_HSTAT_SUM}};
    cr_assert_eq(pcw__hist_writer_series(w, H, "\\\\h\\R(h)\\Lat:sum", PCW__HIST_KIND_RAW), 0);
    cr_assert_eq(pcw__hist_writer_ident(w, H, &hid), 0);
    /* A layout that is no layout is refused (a word beyond the row). */
    pcw__hist_series badid = hid;
    badid.type = PERF_COUNTER_BULK_COUNT;
    badid.layout = layout_of(0, 0);
    badid.layout.first = PCW__HIST_ROW_WORDS;
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &badid), -1);
    badid.layout = layout_of(0, 0); /* nor a layout for a histogram */
    badid.type = PERF_PCW_HISTOGRAM;
    cr_assert_eq(pcw__hist_writer_ident(w, H, &badid), -1);
    static uint64_t hwords[2 + 4096];
    uint64_t words[ROWS + 1][W], seed = 12345;
    uint32_t nh = 2 + pcw_hist_nbuckets(HSHAPE);
    cr_assert_leq(nh, 2 + 4096);
    uint32_t n = S + 1;
    int alt = 0;
    for (int k = 0; k < NSAMP; k++) {
        uint64_t t = 1000000000ull * (uint64_t)(k + 1), mono = t + 7, real = t + 99;
        next_words(words, k, &seed);
        if (k == 12) { /* a new instance in the middle of the block */
            for (uint32_t j = 0; j < W; j++) {
                pcw__hist_series id = {
                    .type = PERF_COUNTER_BULK_COUNT, .instance_id = 9, .layout = layout_of(j, 0)};
                cr_assert_eq(pcw__hist_writer_series(w, n + j, "\\\\h\\R(new)\\c", 0), 0);
                cr_assert_eq(pcw__hist_writer_ident(w, n + j, &id), 0);
            }
            n += W;
        }
        if (k == 15) { /* row 1's column 0 gets another layout mid-block */
            alt = 1;
            pcw__hist_series id = {
                .type = PERF_COUNTER_RAWCOUNT, .instance_id = 1, .layout = layout_of(0, 1)};
            cr_assert_eq(pcw__hist_writer_ident(w, W, &id), 0);
        }
        expect *x = &e[k];
        x->mono = mono, x->real = real;
        /* Rows 0-1 at t, rows 2-3 at t + 5 (another provider), the
         * histogram (no value in a row sample), the new row at t + 9. */
        for (uint32_t i = 0; i < S; i++) {
            uint32_t r = i / W, c = i % W;
            pcw__hist_layout l = layout_of(c, alt && r == 1);
            x->raw[i] = expect_raw(&l, words[r], r < 2 ? t : t + 5);
        }
        x->raw[H] = (pcw_raw){.status = PCW_CSTATUS_NO_INSTANCE};
        for (uint32_t j = 0; j < W && n > S + 1; j++) {
            pcw__hist_layout l = layout_of(j, 0);
            x->raw[S + 1 + j] = expect_raw(&l, words[ROWS], t + 9);
        }
        if (k == 20 || k == 21) {
            /* Value samples in the same block, the histogram with words. */
            pcw__hist_value v[(ROWS + 1) * W + 1];
            for (uint32_t i = 0; i < n; i++)
                v[i] = (pcw__hist_value){.raw = x->raw[i]};
            hwords[0] += 10, hwords[2 + (unsigned)k % 3] += 2;
            v[H].raw = (pcw_raw){.status = PCW_CSTATUS_VALID, .time_ns = t};
            v[H].hwords = hwords, v[H].hn = nh;
            x->raw[H] = v[H].raw;
            memcpy(x->hw, hwords, sizeof hwords);
            cr_assert_eq(pcw__hist_writer_sample(w, mono, real, v, n), 0);
        } else {
            cr_assert_eq(pcw__hist_writer_rows_begin(w, n), 0);
            if (k >= 8 && k <= 9) { /* instances 2-3 gone for two samples */
                cr_assert_eq(pcw__hist_writer_rows(w, words, sizeof words[0], 2, W, t), 0);
                cr_assert_eq(pcw__hist_writer_rows_absent(w, 2 * W, PCW_CSTATUS_NO_INSTANCE), 0);
                for (uint32_t i = 2 * W; i < S; i++)
                    x->raw[i] = (pcw_raw){.status = PCW_CSTATUS_NO_INSTANCE};
            } else if (k == 17) { /* row 0 given as values */
                pcw__hist_value v[W];
                for (uint32_t j = 0; j < W; j++)
                    v[j] = (pcw__hist_value){.raw = x->raw[j]};
                cr_assert_eq(pcw__hist_writer_rows_values(w, v, W), 0);
                cr_assert_eq(pcw__hist_writer_rows(w, words[1], sizeof words[0], 1, W, t), 0);
                cr_assert_eq(pcw__hist_writer_rows(w, words[2], sizeof words[0], 2, W, t + 5), 0);
            } else {
                cr_assert_eq(pcw__hist_writer_rows(w, words, sizeof words[0], 2, W, t), 0);
                cr_assert_eq(pcw__hist_writer_rows(w, words[2], sizeof words[0], 2, W, t + 5), 0);
            }
            /* No histogram in a row sample: its value is absent. */
            pcw__hist_value hv = {.raw = {.status = PCW_CSTATUS_VALID}, .hwords = hwords, .hn = nh};
            cr_assert_eq(pcw__hist_writer_rows_values(w, &hv, 1), -1);
            cr_assert_eq(pcw__hist_writer_rows_absent(w, 1, PCW_CSTATUS_NO_INSTANCE), 0);
            if (n > S + 1)
                cr_assert_eq(pcw__hist_writer_rows(w, words[ROWS], sizeof words[0], 1, W, t + 9),
                             0);
            cr_assert_eq(pcw__hist_writer_rows_end(w, mono, real), 0);
        }
        if (k % 10 == 9 || k == 13)
            cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    *nseries_out = n;
}

static void assert_raw_eq(const pcw_raw *got, const pcw_raw *want, int k, size_t i)
{
    cr_assert_eq(got->status, want->status, "sample %d series %zu: status %d, want %d", k, i,
                 got->status, want->status);
    if (want->status != PCW_CSTATUS_VALID)
        return;
    cr_assert(got->first == want->first && got->second == want->second &&
                  got->multi == want->multi && got->freq == want->freq &&
                  got->time_ns == want->time_ns,
              "sample %d series %zu: {%llu %llu %llu %llu %llu}, want {%llu %llu %llu %llu %llu}",
              k, i, (unsigned long long)got->first, (unsigned long long)got->second,
              (unsigned long long)got->multi, (unsigned long long)got->freq,
              (unsigned long long)got->time_ns, (unsigned long long)want->first,
              (unsigned long long)want->second, (unsigned long long)want->multi,
              (unsigned long long)want->freq, (unsigned long long)want->time_ns);
}

Test(history_rows, round_trip)
{
    char log[PATH_MAX], why[256];
    snprintf(log, sizeof log, "%s/rows.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    cr_assert_geq(fd, 0);
    static expect e[NSAMP];
    uint32_t n;
    write_scenario(fd, e, &n);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_reader_version(r), 3);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    int k = 0, rc;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why)) == 1) {
        cr_assert_lt(k, NSAMP);
        cr_assert_eq(mono, e[k].mono, "sample %d", k);
        cr_assert_eq(real, e[k].real, "sample %d", k);
        size_t want_n = k >= 12 ? n : (size_t)ROWS * W + 1;
        for (size_t i = 0; i < nv; i++)
            assert_raw_eq(&v[i].raw,
                          i < want_n ? &e[k].raw[i] : &(pcw_raw){.status = PCW_CSTATUS_NO_INSTANCE},
                          k, i);
        size_t H = ROWS * W;
        if (v[H].raw.status == PCW_CSTATUS_VALID) {
            cr_assert_eq(v[H].hn, 2 + pcw_hist_nbuckets(HSHAPE));
            cr_assert_arr_eq(v[H].hwords, e[k].hw, v[H].hn * sizeof *v[H].hwords);
        }
        /* The layout in force: column 0 of row 1 from sample 15 on. */
        const pcw__hist_series *s = pcw__hist_reader_series(r, W);
        cr_assert_eq(s->layout.second, k >= 15 ? PCW__HIST_SRC_CONST : PCW__HIST_SRC_TIME);
        k++;
    }
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(k, NSAMP);
    pcw__hist_reader_close(r);
}

/* A row sample cancelled half-way (pcw__q_collect_raw's restart) leaves
 * the block as it was: the sample given again reads as given, and so do
 * the next ones, whose deltas are taken from what the reader saw. */
Test(history_rows, cancelled_sample_leaves_no_trace)
{
    char log[PATH_MAX], why[256];
    snprintf(log, sizeof log, "%s/cancel.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    for (uint32_t i = 0; i < 2 * W; i++) {
        pcw__hist_series id = {.type = PERF_COUNTER_BULK_COUNT, .layout = layout_of(i % W, 0)};
        cr_assert_eq(pcw__hist_writer_series(w, i, "\\\\h\\R(a)\\c", 0), 0);
        cr_assert_eq(pcw__hist_writer_ident(w, i, &id), 0);
    }
    uint64_t a[2][W] = {{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}}, b[2][W], c[2][W];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < W; j++)
            b[i][j] = a[i][j] * 7, c[i][j] = a[i][j] + 1;
    /* sample 0: a; sample 1: b given, cancelled (after a row and after
     * values), then c; sample 2: c again (deltas from c, not b). */
    cr_assert_eq(pcw__hist_writer_rows_begin(w, 2 * W), 0);
    cr_assert_eq(pcw__hist_writer_rows(w, a, sizeof a[0], 2, W, 10), 0);
    cr_assert_eq(pcw__hist_writer_rows_end(w, 10, 10), 0);
    cr_assert_eq(pcw__hist_writer_rows_begin(w, 2 * W), 0);
    cr_assert_eq(pcw__hist_writer_rows(w, b, sizeof b[0], 1, W, 20), 0);
    pcw__hist_value vb[W];
    for (int j = 0; j < W; j++) {
        pcw__hist_layout l = layout_of((uint32_t)j, 0);
        vb[j] = (pcw__hist_value){.raw = expect_raw(&l, b[1], 20)};
    }
    cr_assert_eq(pcw__hist_writer_rows_values(w, vb, W), 0);
    pcw__hist_writer_rows_cancel(w);
    cr_assert_eq(pcw__hist_writer_rows_end(w, 20, 20), -1); /* none begun */
    cr_assert_eq(pcw__hist_writer_rows_begin(w, 2 * W), 0);
    cr_assert_eq(pcw__hist_writer_rows(w, c, sizeof c[0], 2, W, 20), 0);
    cr_assert_eq(pcw__hist_writer_rows_end(w, 20, 20), 0);
    /* An incomplete sample is refused, and cancelled. */
    cr_assert_eq(pcw__hist_writer_rows_begin(w, 2 * W), 0);
    cr_assert_eq(pcw__hist_writer_rows(w, b, sizeof b[0], 1, W, 25), 0);
    cr_assert_eq(pcw__hist_writer_rows_end(w, 25, 25), -1);
    cr_assert_eq(pcw__hist_writer_rows_begin(w, 2 * W), 0);
    /* Row 1 as values again: their deltas from sample 0's, not from the
     * cancelled values'. */
    pcw__hist_value vc[W];
    for (int j = 0; j < W; j++) {
        pcw__hist_layout l = layout_of((uint32_t)j, 0);
        vc[j] = (pcw__hist_value){.raw = expect_raw(&l, c[1], 30)};
    }
    cr_assert_eq(pcw__hist_writer_rows(w, c[0], sizeof c[0], 1, W, 30), 0);
    cr_assert_eq(pcw__hist_writer_rows_values(w, vc, W), 0);
    cr_assert_eq(pcw__hist_writer_rows_end(w, 30, 30), 0);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);

    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    const uint64_t(*want[3])[W] = {a, c, c};
    const uint64_t t[3] = {10, 20, 30};
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), 1, "%s",
                     why);
        cr_assert_eq(mono, t[k]);
        for (size_t i = 0; i < 2 * W; i++) {
            pcw__hist_layout l = layout_of((uint32_t)(i % W), 0);
            pcw_raw x = expect_raw(&l, want[k][i / W], t[k]);
            assert_raw_eq(&v[i].raw, &x, k, i);
        }
    }
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), 0, "%s", why);
    pcw__hist_reader_close(r);
}

/* ---- format 2 --------------------------------------------------------------- */

/* A log the format 2 writer wrote (tests/data/format2.pcwlog, by
 * tests/history_v2.h's values) reads with today's reader as written. */
Test(history_rows, format2_log_reads_as_written)
{
    char why[256];
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, "tests/data/format2.pcwlog", why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(pcw__hist_reader_version(r), 2);
    uint64_t mono, real, words[V2_SERIES][4096];
    const pcw__hist_value *v;
    size_t nv;
    int k = 0, rc;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why)) == 1) {
        cr_assert_eq(nv, V2_SERIES);
        cr_assert_eq(mono, (uint64_t)(k + 1) * 1000000000u);
        cr_assert_eq(real, 1700000000000000000ull + (uint64_t)k * 1000000000u);
        for (int s = 0; s < V2_SERIES; s++) {
            pcw__hist_value x = v2_value(s, k, words[s]);
            const pcw__hist_series *id = pcw__hist_reader_series(r, (size_t)s);
            pcw__hist_series want = v2_ident(s, k);
            cr_assert_str_eq(id->path, v2_paths[s]);
            cr_assert(id->type == want.type && id->provider_id == want.provider_id &&
                          id->pid == want.pid && id->hshape == want.hshape && id->layout.words == 0,
                      "sample %d series %d: identity", k, s);
            if (s == 2) {
                cr_assert_eq(v[s].raw.status, PCW_CSTATUS_VALID);
                cr_assert_eq(v[s].computed, x.computed);
                continue;
            }
            assert_raw_eq(&v[s].raw, &x.raw, k, (size_t)s);
            if (x.hn) {
                cr_assert_eq(v[s].hn, x.hn);
                cr_assert_arr_eq(v[s].hwords, x.hwords, x.hn * sizeof *x.hwords);
            }
        }
        k++;
    }
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(k, V2_SAMPLES);
    pcw__hist_reader_close(r);
}

/* ---- the recorder's raw rows ---------------------------------------------- */

#include "query_provider.h" /* (qp_cmd) */

#define PW 5 /* rows_provider's counters */

/* Start tests/helpers/rows_provider with its first n instances of "a",
 * "b", "c" created; returns once it has answered. */
static void rows_start(tu_child *p, int n)
{
    cr_assert_eq(tu_spawn(p, "rows_provider", (const char *const[]){NULL}), 0);
    char line[128];
    cr_assert(tu_readline(p, line, sizeof line, 10000) > 0, "provider did not start");
    for (int i = 0; i < n; i++)
        qp_cmd(p, "create %c", "abc"[i]);
}

/* A query of path (one handle), collected once. */
static pcw_pdh_counter *rows_query(pcw_pdh **q, const char *path)
{
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_open(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_add_counter(*q, path, &h, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(*q, NULL), PCW_OK);
    return h;
}

typedef struct got {
    uint64_t rows[16][PW];
    uint64_t time[16];
    size_t n, runs, restarts;
} got;

static int take_rows(const pcw__q_raw_rows *run, void *arg)
{
    got *g = arg;
    if (!run->nrows) {
        g->n = 0, g->restarts++;
        return 0;
    }
    cr_assert_eq(run->stride, PW * 8);
    for (size_t i = 0; i < run->nrows && g->n < 16; i++, g->n++) {
        cr_assert_not_null(run->rows);
        memcpy(g->rows[g->n], run->rows + i * run->stride, sizeof g->rows[0]);
        g->time[g->n] = run->time_ns;
    }
    g->runs++;
    return 0;
}

/* The rows handed over, made raw samples by their layouts, are what
 * pcw_pdh_raw_column gives for each instance, sample after sample, as
 * values change and instances come and go. */
static void check_rows(pcw_pdh_counter *h, const got *g)
{
    size_t n = pcw_pdh_raw_count(h);
    cr_assert_eq(g->n, n, "%zu rows handed over, %zu instances", g->n, n);
    pcw_raw col[16];
    for (uint32_t k = 0; k < PW; k++) {
        pcw__hist_layout l;
        cr_assert_eq(pcw__q_raw_layout(h, k, &l), 0);
        cr_assert_eq(pcw_pdh_raw_column(h, k, col), PCW_OK);
        for (size_t i = 0; i < n; i++) {
            pcw_raw x;
            pcw__hist_row_raw(&l, g->rows[i], g->time[i], &x);
            assert_raw_eq(&x, &col[i], (int)k, i);
        }
    }
}

Test(history_rows, collect_raw_hands_the_raw_samples)
{
    tu_child p;
    rows_start(&p, 2);
    pcw_pdh *q;
    pcw_pdh_counter *h = rows_query(&q, "\\Rows Test(*)\\*");
    cr_assert_eq(pcw__q_raw_width(h), PW);
    for (int k = 0; k < 8; k++) {
        if (k == 3)
            qp_cmd(&p, "create c"); /* a new instance: the sample read whole */
        if (k == 5)
            qp_cmd(&p, "close a");
        qp_cmd(&p, "set b 0 %d", 100 * k);
        qp_cmd(&p, "set b 3 %d", k);
        qp_cmd(&p, "set b 4 %d", 2 * k + 1);
        got g = {0};
        cr_assert_eq(pcw__q_collect_raw(q, NULL, h, take_rows, &g), PCW_OK);
        check_rows(h, &g);
        /* Steady samples are handed over as they are read: one run,
         * no restart. */
        if (k == 2 || k == 7)
            cr_assert(g.runs == 1 && g.restarts == 0, "sample %d: %zu runs, %zu restarts", k,
                      g.runs, g.restarts);
    }
    /* A handle of an instance that is not there is refused. */
    pcw_pdh_counter *one;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Rows Test(zz)\\Level", &one, NULL), PCW_OK);
    got g = {0};
    cr_assert_eq(pcw__q_collect_raw(q, NULL, one, take_rows, &g), PCW_E_INVALID_PARAMETER);
    pcw_pdh_close(q);
    qp_stop(&p);
}

/* A handle naming one instance of several: the rows handed over are its
 * instance's only (the handle's entries, not the counterset's), through
 * the collection and after it. */
Test(history_rows, raw_rows_are_the_handles_instances_only)
{
    tu_child p;
    rows_start(&p, 2);
    qp_cmd(&p, "set a 1 11");
    qp_cmd(&p, "set b 1 22");
    pcw_pdh *q;
    pcw_pdh_counter *h = rows_query(&q, "\\Rows Test(b)\\*");
    cr_assert_eq(pcw_pdh_instance_count(h), 1);
    for (int k = 0; k < 3; k++) {
        got g = {0};
        if (pcw__q_raw_width(h) == 0)
            break; /* (not handed over at all: also right) */
        cr_assert_eq(k ? pcw__q_collect_raw(q, NULL, h, take_rows, &g)
                       : pcw__q_raw_sample(h, take_rows, &g),
                     PCW_OK);
        cr_assert_eq(g.n, 1, "sample %d: %zu rows for one instance", k, g.n);
        cr_assert_eq(g.rows[0][1], 22, "sample %d: not b's row", k);
    }
    pcw_pdh_close(q);
    qp_stop(&p);
}

/* Regression (pcwstat's recorder at 1.7x the collection in full bench
 * runs, 1.2x alone): with the set's providers at segment indexes other
 * than 0 - here two providers of the counterset, so one of them is not
 * index 0 - a steady sample's rows are still its sources' rows whole, a
 * run a source (pcw__q_raw_by_source), not walked instance by instance.
 * The snapshot of a lock-free read says source 0 for every source it
 * read; the set's own list of sources says where the rows are. */
Test(history_rows, steady_rows_go_by_source_at_any_segment_index)
{
    tu_child p1, p2;
    rows_start(&p1, 2);
    rows_start(&p2, 3);
    pcw_pdh *q;
    pcw_pdh_counter *h = rows_query(&q, "\\Rows Test(*)\\*");
    for (int k = 0; k < 3; k++) {
        qp_cmd(&p1, "set a 0 %d", 10 * k);
        qp_cmd(&p2, "set c 0 %d", 20 * k);
        got g = {0};
        cr_assert_eq(pcw__q_collect_raw(q, NULL, h, take_rows, &g), PCW_OK);
        check_rows(h, &g);
        cr_assert_eq(g.n, 5);
        if (k == 0)
            continue; /* (the first sample after the handle's: maybe not steady) */
        cr_assert(pcw__q_raw_by_source(h), "sample %d: rows walked instance by instance", k);
        got s = {0};
        cr_assert_eq(pcw__q_raw_sample(h, take_rows, &s), PCW_OK);
        check_rows(h, &s);
        cr_assert_eq(s.runs, 2, "sample %d: %zu runs for two sources", k, s.runs);
    }
    pcw_pdh_close(q);
    qp_stop(&p1);
    qp_stop(&p2);
}

/* pcw__q_collect_raw_cmp's runs written as they come (the fused
 * recorder: bench/history_record.c's loop), each run's bits checked
 * against the writer's words as they were before the collection. */
typedef struct fused_rec {
    pcw__hist_writer *w;
    uint64_t before[3 * PW];
    size_t n, cmp_runs, changed;
} fused_rec;

static int write_run(const pcw__q_raw_rows *run, void *arg)
{
    fused_rec *f = arg;
    if (!run->nrows) { /* a restart: the sample again from its start */
        pcw__hist_writer_rows_cancel(f->w);
        cr_assert_eq(pcw__hist_writer_rows_begin(f->w, 3 * PW), 0);
        f->n = 0;
        return 0;
    }
    cr_assert_not_null(run->rows);
    if (run->changed) {
        f->cmp_runs++;
        cr_assert_eq(run->changed_at, f->n);
        for (size_t j = 0; j < run->nrows; j++) {
            size_t b = run->changed_at + j;
            int bit = (int)(run->changed[b / 64] >> (b % 64) & 1);
            int want = memcmp(run->rows + j * run->stride, &f->before[(f->n + j) * PW],
                              PW * sizeof(uint64_t)) != 0;
            cr_assert_eq(bit, want, "row %zu: changed bit %d, the row %s", f->n + j, bit,
                         want ? "changed" : "did not change");
            f->changed += (size_t)bit;
        }
    }
    cr_assert_eq(pcw__hist_writer_rows_cmp(f->w, run->rows, run->stride, run->nrows, PW,
                                           run->time_ns, run->changed, run->changed_at),
                 0);
    f->n += run->nrows;
    return 0;
}

/* A live provider recorded into row samples, through pcw__q_collect_raw
 * (fused 0) or with each row compared as it is copied
 * (pcw__q_collect_raw_cmp and pcw__hist_writer_rows_cmp: fused 1), reads
 * back as the raw samples the live query had. fused 2: the caller's words
 * said to be rows of another width than the read's (as if the counterset
 * had changed since it sized them): nothing is compared, the recording
 * is still right. */
static void record_live(int fused)
{
    tu_child p;
    rows_start(&p, 3);
    char why[256], log[PATH_MAX];
    pcw_pdh *q;
    pcw_pdh_counter *h = rows_query(&q, "\\Rows Test(*)\\*");
    snprintf(log, sizeof log, "%s/live.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    for (uint32_t i = 0; i < 3 * PW; i++) {
        pcw__hist_series id = {.type = PERF_COUNTER_BULK_COUNT};
        cr_assert_eq(pcw__q_raw_layout(h, i % PW, &id.layout), 0);
        cr_assert_eq(pcw__hist_writer_series(w, i, "\\\\h\\Rows Test(x)\\c", 0), 0);
        cr_assert_eq(pcw__hist_writer_ident(w, i, &id), 0);
    }
    enum { K = 12 };
    static pcw_raw want[K][3][PW];
    fused_rec f = {w};
    for (int k = 0; k < K; k++) {
        qp_cmd(&p, "set %c 0 %d", "abc"[k % 3], 1000 * k);
        qp_cmd(&p, "set b 1 %d", k % 4 == 0 ? k : 3);
        cr_assert_eq(pcw__hist_writer_rows_begin(w, 3 * PW), 0);
        if (fused) {
            size_t nw;
            const uint64_t *words = pcw__hist_writer_words(w, 0, &nw);
            /* (None at a block's start: its rows are written whole.) */
            cr_assert(words ? nw == 3 * PW : nw == 0 && k % 5 == 0, "sample %d: %zu words", k, nw);
            if (words)
                memcpy(f.before, words, sizeof f.before);
            f.n = 0;
            uint64_t bits[1];
            size_t pw = fused == 2 ? PW - 1 : PW;
            cr_assert_eq(
                pcw__q_collect_raw_cmp(q, NULL, h, words, nw / pw, pw, bits, write_run, &f),
                PCW_OK);
            cr_assert_eq(f.n, 3);
        } else {
            got g = {0};
            cr_assert_eq(pcw__q_collect_raw(q, NULL, h, take_rows, &g), PCW_OK);
            cr_assert_eq(g.n, 3);
            cr_assert_eq(pcw__hist_writer_rows(w, g.rows, sizeof g.rows[0], 3, PW, g.time[0]), 0);
        }
        cr_assert_eq(pcw__hist_writer_rows_end(w, pcw_pdh_time_ns(q), pcw_pdh_realtime_ns(q)), 0);
        for (uint32_t c = 0; c < PW; c++) {
            pcw_raw col[3];
            cr_assert_eq(pcw_pdh_raw_column(h, c, col), PCW_OK);
            for (int i = 0; i < 3; i++)
                want[k][i][c] = col[i];
        }
        if (k % 5 == 4)
            cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    /* Steady samples were compared in the copy (where the read copies
     * with 16-byte loads: not under $PCW_NO_AVX2), both rows that changed
     * and rows that did not. */
    if (fused == 1 && __builtin_cpu_supports("avx2") && !getenv("PCW_NO_AVX2"))
        cr_assert(f.cmp_runs >= K / 2 && f.changed > 0 && f.changed < 3 * f.cmp_runs,
                  "%zu runs compared in the copy, %zu rows changed", f.cmp_runs, f.changed);
    if (fused == 2)
        cr_assert_eq(f.cmp_runs, 0, "%zu runs compared with rows of another width", f.cmp_runs);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    pcw_pdh_close(q);
    qp_stop(&p);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    for (int k = 0; k < K; k++) {
        cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), 1, "%s",
                     why);
        for (size_t i = 0; i < 3 * PW; i++)
            assert_raw_eq(&v[i].raw, &want[k][i / PW][i % PW], k, i);
    }
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), 0, "%s", why);
    pcw__hist_reader_close(r);
}

Test(history_rows, recording_reads_back_as_live)
{
    record_live(0);
}

Test(history_rows, recording_compared_in_the_copy_reads_back_as_live)
{
    record_live(1);
}

Test(history_rows, words_of_another_width_are_not_compared)
{
    record_live(2);
}

#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#include "../lib/consumer/private.h"

/* pcw__copy_cmp_rows: every word copied, and each row's bit (at any bit
 * offset, across the bitmap's words) says whether it differs from the old
 * row, whichever word differs and however the rows are aligned; the bits
 * of other rows are left as they were. */
Test(history_rows, copy_cmp_rows_bits)
{
    if (!__builtin_cpu_supports("avx2"))
        cr_skip_test("no AVX2: the read does not call it");
    enum { NR = 150, MAXW = 19 };
    static uint64_t src[NR * (MAXW + 1) + 2], dst[NR * MAXW], prev[NR * MAXW];
    uint64_t seed = 12345;
    for (uint32_t words = 1; words <= MAXW; words++)
        for (size_t stride = 8 * words; stride <= 8 * words + 8; stride += 8)
            for (int off = 0; off < 2; off++) /* src 16-aligned or not */
                for (size_t at = 0; at < 130; at += 61) {
                    const unsigned char *s = (const unsigned char *)(src + off);
                    int want[NR];
                    for (size_t j = 0; j < NR; j++)
                        for (uint32_t k = 0; k < words; k++) {
                            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                            uint64_t x = seed >> 11;
                            memcpy((unsigned char *)(src + off) + j * stride + 8 * k, &x, 8);
                            prev[j * words + k] = x;
                        }
                    size_t nchanged = 0;
                    for (size_t j = 0; j < NR; j++) {
                        want[j] = (seed >> (j % 61)) % 3 == 0;
                        if (want[j]) { /* one word of it differs, in one bit */
                            prev[j * words + (j * 7) % words] ^= 1ull << (j % 64);
                            nchanged++;
                        }
                    }
                    uint64_t bits[6];
                    memset(bits, 0xa5, sizeof bits);
                    cr_assert_eq(pcw__copy_cmp_rows(dst, s, stride, prev, words, NR, bits, at),
                                 nchanged);
                    for (size_t j = 0; j < NR; j++) {
                        cr_assert_arr_eq(dst + j * words, s + j * stride, 8 * words);
                        size_t b = at + j;
                        cr_assert_eq((int)(bits[b / 64] >> (b % 64) & 1), want[j],
                                     "words %u stride %zu off %d at %zu row %zu", words, stride,
                                     off, at, j);
                    }
                    for (size_t b = 0; b < 64 * 6; b++)
                        if (b < at || b >= at + NR)
                            cr_assert_eq(bits[b / 64] >> (b % 64) & 1, 0xa5ull >> (b % 8) & 1,
                                         "bit %zu outside the rows changed", b);
                }
}
#endif

/* Rows checked against their layouts once are checked again when a layout
 * among them changes: a series whose new layout reads a word beyond the
 * rows' width is refused in the next rows (the writer remembers the last
 * rows that fit: lib/history/write.c, layouts_fit). */
Test(history_rows, changed_layout_is_checked_again)
{
    char why[256], log[PATH_MAX];
    snprintf(log, sizeof log, "%s/fit.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    pcw__hist_series id = {.type = PERF_COUNTER_LARGE_RAWCOUNT};
    for (uint32_t i = 0; i < 4; i++) {
        id.layout = (pcw__hist_layout){.status = PCW_CSTATUS_VALID, .first = i % 2};
        id.layout.words = pcw__hist_layout_words(&id.layout, PCW_CSTATUS_LAST);
        cr_assert_eq(pcw__hist_writer_series(w, i, "\\\\h\\S(x)\\c", 0), 0);
        cr_assert_eq(pcw__hist_writer_ident(w, i, &id), 0);
    }
    uint64_t rows[2][2] = {{1, 2}, {3, 4}};
    cr_assert_eq(pcw__hist_writer_rows_begin(w, 4), 0);
    cr_assert_eq(pcw__hist_writer_rows(w, rows, sizeof rows[0], 2, 2, 10), 0);
    cr_assert_eq(pcw__hist_writer_rows_end(w, 10, 10), 0);
    cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    /* Series 3 now reads word 2: rows of 2 words do not hold it. */
    id.layout = (pcw__hist_layout){.status = PCW_CSTATUS_VALID, .first = 2};
    id.layout.words = pcw__hist_layout_words(&id.layout, PCW_CSTATUS_LAST);
    cr_assert_eq(id.layout.words, 3);
    cr_assert_eq(pcw__hist_writer_ident(w, 3, &id), 0);
    cr_assert_eq(pcw__hist_writer_rows_begin(w, 4), 0);
    cr_assert_eq(pcw__hist_writer_rows(w, rows, sizeof rows[0], 2, 2, 20), -1,
                 "rows accepted for a layout that reads beyond them");
    pcw__hist_writer_rows_cancel(w);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
}

/* A block whose check fails is named by its offset and the check that
 * failed: XXH3 in format 3, CRC-32 in formats 1 and 2 (the message said
 * "CRC mismatch" for both). */
static void damaged_message(const unsigned char *log, size_t len, const char *check)
{
    unsigned char *b = malloc(len);
    cr_assert(b);
    memcpy(b, log, len);
    uint64_t at = PCW__HIST_FILE_HEADER;
    b[at + PCW__HIST_BLOCK_HEADER + 3] ^= 0x20; /* a byte of the first block's payload */
    char why[256] = "", want[128];
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open_mem(&r, b, len, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), -1);
    snprintf(want, sizeof want, "block at offset %llu: %s mismatch (damaged)",
             (unsigned long long)at, check);
    cr_assert(strstr(why, want), "\"%s\" does not say \"%s\"", why, want);
    pcw__hist_reader_close(r);
    free(b);
}

Test(history_rows, damaged_block_names_its_check)
{
    size_t len = 0;
    unsigned char *v2 = tu_read_file("tests/data/format2.pcwlog", 1 << 20, &len);
    cr_assert(v2 && len > PCW__HIST_FILE_HEADER + PCW__HIST_BLOCK_HEADER + 4);
    damaged_message(v2, len, "CRC-32");
    free(v2);
    char why[256], log[PATH_MAX];
    snprintf(log, sizeof log, "%s/check.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(x)\\c", 0), 0);
    pcw__hist_value x = {.raw = {.status = PCW_CSTATUS_VALID, .first = 12345}};
    cr_assert_eq(pcw__hist_writer_sample(w, 10, 10, &x, 1), 0);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    unsigned char *v3 = tu_read_file(log, 1 << 20, &len);
    cr_assert(v3 && len > PCW__HIST_FILE_HEADER + PCW__HIST_BLOCK_HEADER + 4);
    damaged_message(v3, len, "XXH3 check");
    free(v3);
}
