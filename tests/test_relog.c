/* SPDX-License-Identifier: MIT */
/*
 * tests/test_relog.c - pcwrelog (tools/pcwrelog, docs/history.md), every
 * option, as a real process:
 *
 *   - CSV and TSV equal, byte for byte, what a real pcwstat printed live
 *     while it recorded the same collections (--log) of a real provider;
 *   - JSON equals pcwstat -f JSON's lines for the same collections
 *     (pcwstat's writer and recorder compiled in, as test_history does);
 *   - -c and -cf select by pattern: wildcards, case, #n as live, a parent
 *     ("(parent/instance)", a '*' not reaching across the '/');
 *     a pattern that selects nothing or is no path is an error naming it;
 *   - -b and -e in relog's and ISO 8601's forms select the rows the whole
 *     conversion prints for those times, -e keeping the row of the time
 *     written; a range without samples is an error;
 *   - -t N: every N-th sample, each rate cooked over the N intervals, and
 *     only against a sample of the same identity;
 *   - several logs (given out of order) are joined in time order, columns
 *     the union, rates cooked across the join; overlapping logs are refused;
 *   - -f BIN writes a log that converts to what the run printed; -q lists
 *     the logs and the selected paths;
 *   - a damaged log among several: its rows before the damage and the
 *     other logs' rows are written, the error names the file and offset;
 *   - bad input: clear errors and status 2 (usage) or 1;
 *   - a hostile log naming one path 400,000 times is listed in linear
 *     time; `pcwrelog LOG | head` ends by SIGPIPE at once;
 *   - histograms thinned with -t equal the log -t -f BIN writes of them;
 *     a log of wide histograms converts with -f BIN (its blocks within
 *     what a reader accepts).
 *
 * Synthetic logs (lib/history's writer) where exact arithmetic is the
 * point (-t's rates, the times of -b/-e); the pauses between collections
 * are the sampling interval, not synchronisation.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <strings.h>

#include "pcw/histogram.h"
#include "pcw/pdh.h"
#include "query_provider.h"

#include "../lib/history/codec.h"
#include <zlib.h>

/* Compiled in: pcwstat's JSON writer and its recording sink. */
#include "../tools/pcwstat/pcwstat.h"

TestSuite(relog, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

static char out_[PATH_MAX], err_[PATH_MAX];

/* Run build/TOOL to its end (a minute at most), stdout and stderr into
 * out_ and err_; its exit status. */
static int run(const char *tool, const char *const *args)
{
    snprintf(out_, sizeof out_, "%s/out", tu_root);
    snprintf(err_, sizeof err_, "%s/err", tu_root);
    int st = tu_run_tool(tool, args, out_, err_, 60000);
    cr_assert(st >= 0 && WIFEXITED(st), "%s did not exit by itself (status %d)", tool, st);
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    char *s = tu_read_text(path, 1 << 24);
    cr_assert(s, "cannot read %s", path);
    return s;
}

/* pcwrelog's stdout after a run that must succeed. */
static char *relog_ok(const char *const *args)
{
    int rc = run("pcwrelog", args);
    cr_assert_eq(rc, 0, "pcwrelog exit %d: %s", rc, slurp(err_));
    return slurp(out_);
}

/* A run that must fail with `status`, its stderr naming `want`. */
static void relog_fails(const char *const *args, int status, const char *want)
{
    int rc = run("pcwrelog", args);
    char *e = slurp(err_);
    cr_assert_eq(rc, status, "exit %d, not %d: %s", rc, status, e);
    cr_assert(strstr(e, want), "stderr lacks \"%s\": %s", want, e);
    free(e);
}

static char *path_in_root(const char *name)
{
    char *p = malloc(PATH_MAX);
    snprintf(p, PATH_MAX, "%s/%s", tu_root, name);
    return p;
}

static void pause_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL); /* the sampling interval, not synchronisation */
}

/* Line i (0: the header) of text, without its '\n' (a new string). */
static char *line_of(const char *text, size_t i)
{
    const char *p = text;
    for (size_t k = 0; k < i && p; k++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    cr_assert(p && *p, "no line %zu in:\n%s", i, text);
    return strndup(p, strcspn(p, "\n"));
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Field k of a CSV line (every field quoted, none holding a quote). */
static char *field(const char *line, size_t k)
{
    const char *p = line;
    for (size_t i = 0; i < k; i++) {
        p = strstr(p, "\",\"");
        cr_assert(p, "no field %zu in %s", k, line);
        p += 2;
    }
    cr_assert(*p == '"', "%s", line);
    p++;
    return strndup(p, strcspn(p, "\""));
}

/* Run a real pcwstat to its end with args. */
static void pcwstat_ok(const char *const *args)
{
    int rc = run("pcwstat", args);
    cr_assert_eq(rc, 0, "pcwstat exit %d: %s", rc, slurp(err_));
}

/* ---- live and replayed ---------------------------------------------------------- */

/* The provider the recordings take: rates, a count, a fraction, a level,
 * a _Total. */
static void start_rl(tu_child *p)
{
    qp_start(p, "Rl", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(p, "create x");
    qp_cmd(p, "create y");
    qp_cmd(p, "rate x %d 1000", QP_RATE);
    qp_cmd(p, "rate y %d 300", QP_COUNT);
    qp_cmd(p, "set x %d 1", QP_HIT);
    qp_cmd(p, "set x %d 3", QP_HIT_BASE);
    qp_cmd(p, "set y %d 42", QP_LEVEL);
}

Test(relog, csv_and_tsv_equal_live_pcwstat)
{
    tu_child p;
    start_rl(&p);
    char *log = path_in_root("a.pcwlog"), *live = path_in_root("live.csv");
    char *tlog = path_in_root("t.pcwlog"), *tlive = path_in_root("live.tsv");
    pcwstat_ok((const char *[]){"\\Rl(*)\\*", "-si", "0.02", "-sc", "12", "-f", "CSV", "-o", live,
                                "--log", log, NULL});
    pcwstat_ok((const char *[]){"\\Rl(*)\\*", "-si", "0.02", "-sc", "8", "-f", "TSV", "--no-scale",
                                "-o", tlive, "--log", tlog, NULL});
    qp_stop(&p);
    char *a = slurp(live), *b = relog_ok((const char *[]){log, "-f", "CSV", NULL});
    cr_assert_eq(count_lines(a), 13);
    cr_assert_str_eq(b, a, "pcwrelog:\n%s\nlive:\n%s", b, a);
    cr_assert(strstr(a, "\"33.333333\""), "no Hit Ratio:\n%s", a);
    free(a), free(b);
    a = slurp(tlive), b = relog_ok((const char *[]){tlog, "-f", "TSV", "--no-scale", NULL});
    cr_assert_eq(count_lines(a), 9);
    cr_assert_str_eq(b, a, "pcwrelog:\n%s\nlive:\n%s", b, a);
    free(a), free(b);
    free(log), free(live), free(tlog), free(tlive);
}

/* pcwstat -f JSON's lines and pcwrelog -f JSON's of the same collections:
 * the same bytes (one writer, tools/common/jsonrow.c, and the same cooked
 * values). */
Test(relog, json_equals_live_json)
{
    tu_child p;
    start_rl(&p);
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *user;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Rl(*)\\*", &user, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    size_t n = pcw_pdh_value_count(user);
    cr_assert_geq(n, 3 * 7);
    column *cols = calloc(n, sizeof *cols);
    for (size_t i = 0; i < n; i++) {
        char bare[4096], full[4096];
        pcw_pdh_value_path(user, i, 0, bare, sizeof bare);
        pcw_pdh_value_path(user, i, 1, full, sizeof full);
        cr_assert_eq(pcw_pdh_add_counter(q, bare, &cols[i].h, NULL), PCW_OK, "%s", bare);
        cols[i].path = strdup(full);
    }
    char *log = path_in_root("j.pcwlog"), *live = path_in_root("live.json"), why[512];
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    recorder *rec = record_open(fd, log, cols, n, 0, why, sizeof why);
    cr_assert(rec, "%s", why);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    FILE *js = fopen(live, "w");
    for (int s = 1; s <= 8; s++) {
        if (s == 5)
            qp_cmd(&p, "close y"); /* live JSON no longer lists it */
        pause_ms(15);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        write_json(js, pcw_pdh_realtime_ns(q), (uint64_t)s, &user, 1, 0, NULL);
        cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(fclose(js), 0);
    cr_assert_eq(record_finish(rec, why, sizeof why), 0, "%s", why);
    qp_stop(&p);
    char *a = slurp(live), *b = relog_ok((const char *[]){log, "-f", "JSON", NULL});
    cr_assert_str_eq(b, a, "pcwrelog:\n%s\nlive:\n%s", b, a);
    cr_assert(strstr(a, "\"kind\":\"total\"") && strstr(a, "\"value\":null"), "%s", a);
    char *l8 = line_of(a, 7);
    cr_assert(strstr(a, "Rl(y)") && !strstr(l8, "Rl(y)"), "%s", l8);
    free(l8);
    /* -t 2: the rows of samples 2, 4, 6, 8, numbered as live. */
    char *t = relog_ok((const char *[]){log, "-f", "JSON", "-t", "2", NULL});
    cr_assert_eq(count_lines(t), 4, "%s", t);
    cr_assert(strstr(t, "\"sample\":2,") && strstr(t, "\"sample\":8,") &&
                  !strstr(t, "\"sample\":3,"),
              "%s", t);
    free(t), free(a), free(b), free(log), free(live);
    for (size_t i = 0; i < n; i++)
        free(cols[i].path);
    free(cols);
    pcw_pdh_close(q);
}

/* ---- -c and -cf ------------------------------------------------------------------ */

/* The index of the column named `path` in header line h (0: the time). */
static size_t column_index(const char *h, const char *path)
{
    for (size_t k = 1;; k++) {
        char *f = field(h, k);
        int same = strcmp(f, path) == 0;
        free(f);
        if (same)
            return k;
    }
}

Test(relog, selects_paths)
{
    tu_child p1, p2;
    qp_start(&p1, "Sel", PCW_MULTI_INSTANCE, NULL);
    qp_start(&p2, "Sel", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p1, "create x");
    qp_cmd(&p2, "create x"); /* the second "x": x#1 */
    qp_cmd(&p1, "create y");
    qp_cmd(&p1, "set x %d 11", QP_LEVEL);
    qp_cmd(&p2, "set x %d 22", QP_LEVEL);
    qp_cmd(&p1, "set y %d 33", QP_LEVEL);
    char *log = path_in_root("s.pcwlog"), *cf = path_in_root("paths.txt");
    pcwstat_ok(
        (const char *[]){"\\Sel(*)\\*", "-si", "0.02", "-sc", "4", "-f", "BIN", "-o", log, NULL});
    qp_stop(&p1);
    qp_stop(&p2);
    char *all = relog_ok((const char *[]){log, NULL}), *h = line_of(all, 0);
    cr_assert(strstr(h, "\\Sel(x#1)\\Level"), "%s", h);
    const char *host = pcw_path_local_host();
    char x0[256], x1[256], y[256];
    snprintf(x0, sizeof x0, "\\\\%s\\Sel(x)\\Level", host);
    snprintf(x1, sizeof x1, "\\\\%s\\Sel(x#1)\\Level", host);
    snprintf(y, sizeof y, "\\\\%s\\Sel(y)\\Level", host);

    /* Case-insensitive; "(x)" is the first x only, as live. */
    char *s = relog_ok((const char *[]){log, "-c", "\\sel(X)\\LEVEL", NULL}), *sh = line_of(s, 0);
    char want[1024];
    snprintf(want, sizeof want, "\"(PDH-CSV 4.0)\",\"%s\"", x0);
    cr_assert_str_eq(sh, want);
    char *row = line_of(s, 1);
    cr_assert(strstr(row, ",\"11.000000\""), "%s", row);
    free(row), free(sh), free(s);

    /* #1, and two patterns after one -c, and a wildcard in the counter:
     * the columns in the log's order, each once. */
    s = relog_ok(
        (const char *[]){log, "-c", "\\Sel(y)\\Lev*", "\\Sel(x#1)\\Level", "\\Sel(Y)\\Le*", NULL});
    sh = line_of(s, 0);
    snprintf(want, sizeof want, "\"(PDH-CSV 4.0)\",\"%s\",\"%s\"",
             column_index(h, x1) < column_index(h, y) ? x1 : y,
             column_index(h, x1) < column_index(h, y) ? y : x1);
    cr_assert_str_eq(sh, want);
    /* The values are the whole conversion's. */
    for (size_t r = 1; r < count_lines(all); r++) {
        char *la = line_of(all, r), *ls = line_of(s, r);
        char *a1 = field(la, column_index(h, x1)), *b1 = field(ls, column_index(sh, x1));
        cr_assert_str_eq(a1, b1);
        free(a1), free(b1), free(la), free(ls);
    }
    free(sh), free(s);

    /* A wildcard instance takes every #n; -cf with a comment and -c. */
    const char *cft = "# levels\n  \\Sel(*)\\Level\r\n\n";
    cr_assert_eq(tu_write_file(cf, cft, strlen(cft), 0600), 0);
    s = relog_ok((const char *[]){log, "-cf", cf, "-c", "\\Sel(x)\\Level", NULL});
    sh = line_of(s, 0);
    cr_assert(strstr(sh, x0) && strstr(sh, x1) && strstr(sh, y), "%s", sh);
    cr_assert_eq(strstr(sh, "Peak"), NULL, "%s", sh);
    free(sh), free(s);

    /* The host: the log's, or any. */
    snprintf(want, sizeof want, "\\\\%s\\Sel(y)\\Level", host);
    s = relog_ok((const char *[]){log, "-c", want, "\\\\*\\Sel(x)\\Level", NULL});
    cr_assert_eq(count_lines(s), count_lines(all));
    sh = line_of(s, 0);
    cr_assert(strstr(sh, x0) && strstr(sh, y) && !strstr(sh, x1), "%s", sh);
    free(sh), free(s);

    relog_fails((const char *[]){log, "-c", "\\Sel(z)\\Level", NULL}, 1,
                "\"\\Sel(z)\\Level\" matches no counter");
    relog_fails((const char *[]){log, "-c", "\\\\otherhost\\Sel(x)\\Level", NULL}, 1,
                "matches no counter");
    relog_fails((const char *[]){log, "-c", "Sel(x)", NULL}, 1, "bad counter path \"Sel(x)\"");
    relog_fails((const char *[]){log, "-c", NULL}, 2, "-c needs a counter path");
    relog_fails((const char *[]){log, "-cf", "/nonexistent/paths", NULL}, 1,
                "/nonexistent/paths: No such file");
    /* -q lists what -c selects. */
    s = relog_ok((const char *[]){log, "-q", "-c", "\\Sel(*)\\Level", NULL});
    cr_assert(strstr(s, "Counters: 3\n") && strstr(s, "(x#1)\\Level  PERF_COUNTER_LARGE_RAWCOUNT"),
              "%s", s);
    free(s), free(h), free(all), free(log), free(cf);
}

/* ---- synthetic logs ------------------------------------------------------------- */

/* 2026-11-27T15:12:00.5Z: sample k is at this + k seconds. */
#define T0 (1795792320ull * 1000000000ull + 500000000ull)

/* A log of n samples, one a second from T0, of two PERF_COUNTER_COUNTER
 * series: "\\h\S(a)\R" counting k*k*100 at sample k, except sample `odd`
 * (an instance of other ids, its count 5); "\\h\S(b)\R" counting k*1000,
 * its instance replaced from sample `gone` on. */
static void synth_log(const char *path, int n, int odd, int gone)
{
    char why[512];
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, path, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(a)\\R", PCW__HIST_KIND_RAW), 0);
    cr_assert_eq(pcw__hist_writer_series(w, 1, "\\\\h\\S(b)\\R", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series ia = {.type = PERF_COUNTER_COUNTER, .provider_id = 7, .instance_id = 1};
    pcw__hist_series ib = {.type = PERF_COUNTER_COUNTER, .provider_id = 7, .instance_id = 2};
    for (int k = 0; k < n; k++) {
        if (k == 0 || k == odd || k == odd + 1) {
            ia.instance_id = k == odd ? 9 : 1;
            cr_assert_eq(pcw__hist_writer_ident(w, 0, &ia), 0);
        }
        if (k == 0 || k == gone) {
            ib.instance_id = k == gone ? 3 : 2;
            cr_assert_eq(pcw__hist_writer_ident(w, 1, &ib), 0);
        }
        uint64_t t = (uint64_t)k * 1000000000u;
        pcw__hist_value v[2] = {{.raw = {.status = PCW_CSTATUS_VALID,
                                         .first = k == odd ? 5 : (uint64_t)k * k * 100,
                                         .second = t,
                                         .freq = 1000000000u}},
                                {.raw = {.status = PCW_CSTATUS_VALID,
                                         .first = (uint64_t)k * 1000,
                                         .second = t,
                                         .freq = 1000000000u}}};
        cr_assert_eq(pcw__hist_writer_sample(w, 1000 + t, T0 + t, v, 2), 0);
        if (k % 4 == 3)
            cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
}

/* The value of column col in row r of csv, "" when empty. */
static char *cell(const char *csv, size_t r, size_t col)
{
    char *l = line_of(csv, r), *f = field(l, col);
    free(l);
    return f;
}

static void assert_cell(const char *csv, size_t r, size_t col, const char *want)
{
    char *f = cell(csv, r, col);
    cr_assert_str_eq(f, want, "row %zu column %zu:\n%s", r, col, csv);
    free(f);
}

Test(relog, thins_with_rates_over_the_longer_interval)
{
    char *log = path_in_root("thin.pcwlog");
    synth_log(log, 13, 7, 10);
    /* Every sample: the odd instance's row and the one after have no
     * rate (no previous sample of the same instance), as live. */
    char *all = relog_ok((const char *[]){log, NULL});
    cr_assert_eq(count_lines(all), 13);
    assert_cell(all, 6, 1, "1100.000000"); /* (36-25)*100 */
    assert_cell(all, 7, 1, "");
    assert_cell(all, 8, 1, "");
    assert_cell(all, 9, 1, "1700.000000");
    assert_cell(all, 10, 2, "");
    /* -t 3: samples 3, 6, 9, 12, each over 3 s; sample 9 is cooked from 6
     * (the same instance: the odd one at 7 is not seen); b's new instance
     * at 10 leaves sample 12 without a rate. */
    char *t = relog_ok((const char *[]){log, "-t", "3", NULL});
    cr_assert_eq(count_lines(t), 5, "%s", t);
    assert_cell(t, 1, 1, "300.000000");  /* (900-0)/3 */
    assert_cell(t, 2, 1, "900.000000");  /* (3600-900)/3 */
    assert_cell(t, 3, 1, "1500.000000"); /* (8100-3600)/3 */
    assert_cell(t, 4, 1, "2100.000000"); /* (14400-8100)/3 */
    assert_cell(t, 3, 2, "1000.000000");
    assert_cell(t, 4, 2, "");
    char *a3 = line_of(all, 3), *t1 = line_of(t, 1), *ta = field(a3, 0), *tt = field(t1, 0);
    cr_assert_str_eq(tt, ta); /* the row of sample 3 */
    free(a3), free(t1), free(ta), free(tt);
    /* -t 3 from -b: the first row is the first sample at -b or later,
     * cooked from the one 3 back (before -b). */
    setenv("TZ", "UTC", 1);
    char *b = relog_ok((const char *[]){log, "-t", "3", "-b", "2026-11-27T15:12:05", NULL});
    cr_assert_eq(count_lines(b), 4, "%s", b);
    assert_cell(b, 1, 1, "700.000000");  /* (2500-400)/3 */
    assert_cell(b, 2, 1, "1300.000000"); /* (6400-2500)/3 */
    assert_cell(b, 3, 1, "1900.000000"); /* (12100-6400)/3 */
    /* -t 1 is every sample; a -t longer than the log: no row. */
    char *one = relog_ok((const char *[]){log, "-t", "1", NULL});
    cr_assert_str_eq(one, all);
    char *none = relog_ok((const char *[]){log, "-t", "13", NULL});
    cr_assert_eq(count_lines(none), 1, "%s", none);
    free(none), free(one), free(b), free(t), free(all), free(log);
}

Test(relog, cuts_by_time)
{
    setenv("TZ", "UTC", 1); /* the CSV's and -b's local time */
    char *log = path_in_root("cut.pcwlog");
    synth_log(log, 13, 100, 100);
    char *all = relog_ok((const char *[]){log, NULL});
    /* Sample k is at 15:12:0k.500. relog's form from 3 PM on, the ISO
     * form with an offset up to the second of sample 7: that second's
     * sample is kept (-e ends at the end of the second written). */
    const char *forms_b[] = {"11/27/2026 3:12:03PM",   "11/27/2026 03:12:03 pm",
                             "11/27/2026 15:12:03",    "2026-11-27T15:12:03",
                             "2026-11-27 15:12:03Z",   "2026-11-27T16:12:03+01:00",
                             "11/27/2026 15:12:03.500"};
    for (size_t i = 0; i < sizeof forms_b / sizeof *forms_b; i++) {
        char *c = relog_ok(
            (const char *[]){log, "-b", forms_b[i], "-e", "2026-11-27T17:12:07+02:00", NULL});
        cr_assert_eq(count_lines(c), 6, "-b %s:\n%s", forms_b[i], c);
        for (size_t r = 1; r <= 5; r++) {
            char *la = line_of(all, r + 2), *lc = line_of(c, r);
            cr_assert_str_eq(lc, la, "-b %s", forms_b[i]);
            free(la), free(lc);
        }
        free(c);
    }
    /* A row's time as the CSV shows it, for -e, keeps that row; a
     * millisecond earlier does not. */
    char *l7 = line_of(all, 7), *t7 = field(l7, 0);
    char *c = relog_ok((const char *[]){log, "-e", t7, NULL});
    cr_assert_eq(count_lines(c), 8, "-e %s:\n%s", t7, c);
    free(c);
    c = relog_ok((const char *[]){log, "-e", "11/27/2026 15:12:07.499", NULL});
    cr_assert_eq(count_lines(c), 7, "%s", c);
    free(c);
    /* -e alone by the minute: all; the 12-hour clock's 12 AM and 12 PM. */
    c = relog_ok((const char *[]){log, "-e", "11/27/2026 3:12PM", NULL});
    cr_assert_str_eq(c, all);
    free(c);
    c = relog_ok((const char *[]){log, "-b", "11/27/2026 12:00:00AM", NULL});
    cr_assert_str_eq(c, all);
    free(c);
    c = relog_ok((const char *[]){log, "-b", "11/27/2026 12:30PM", NULL}); /* 12:30, not 24:30 */
    cr_assert_str_eq(c, all);
    free(c);
    relog_fails((const char *[]){log, "-e", "11/27/2026 12:30PM", NULL}, 1, "no sample between");
    /* No sample in the range: an error saying what the logs span. */
    relog_fails((const char *[]){log, "-b", "11/28/2026 00:00:00", NULL}, 1,
                "no sample between -b and -e (the logs span 11/27/2026 15:12:00.500 to "
                "11/27/2026 15:12:12.500)");
    relog_fails((const char *[]){log, "-b", "11/27/2026 15:13", "-e", "11/27/2026 15:12", NULL}, 2,
                "-b is after -e");
    const char *bad[] = {"2/30/2026 10:00:00",
                         "13/01/2026 10:00:00",
                         "11/27/2026 13:00:00PM",
                         "11/27/2026",
                         "2026-11-27",
                         "2026-11-27T15:12:00+25:00",
                         "11/27/2026 10:60:00",
                         "yesterday",
                         "11/27/2026 10:00:00.",
                         "2026-11-27T15:12:00.1234567891"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char want[128];
        snprintf(want, sizeof want, "bad time \"%s\" for -b", bad[i]);
        relog_fails((const char *[]){log, "-b", bad[i], NULL}, 2, want);
    }
    free(t7), free(l7), free(all), free(log);
}

/* ---- several logs ----------------------------------------------------------------- */

Test(relog, joins_logs_in_time_order)
{
    tu_child p;
    qp_start(&p, "Jn", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create x");
    qp_cmd(&p, "create y");
    qp_cmd(&p, "rate x %d 1000", QP_RATE);
    qp_cmd(&p, "set y %d 42", QP_LEVEL);
    char *a = path_in_root("a.pcwlog"), *b = path_in_root("b.pcwlog");
    pcwstat_ok(
        (const char *[]){"\\Jn(x)\\Rate", "-si", "0.02", "-sc", "5", "-f", "BIN", "-o", a, NULL});
    pcwstat_ok((const char *[]){"\\Jn(x)\\Rate", "\\Jn(y)\\Level", "-si", "0.02", "-sc", "4", "-f",
                                "BIN", "-o", b, NULL});
    qp_stop(&p);
    char *ca = relog_ok((const char *[]){a, NULL}), *cb = relog_ok((const char *[]){b, NULL});
    /* Given out of order: joined in time order. */
    char *j = relog_ok((const char *[]){b, a, NULL});
    cr_assert_eq(count_lines(j), 1 + 5 + 5, "%s", j); /* a: 6 samples, b: 5 */
    char *h = line_of(j, 0), *hb = line_of(cb, 0);
    cr_assert_str_eq(h, hb); /* x's Rate (a's), then y's Level */
    for (size_t r = 1; r <= 5; r++) {
        char *la = line_of(ca, r), *lj = line_of(j, r), want[4096];
        snprintf(want, sizeof want, "%s,\"\"", la); /* y is not in a */
        cr_assert_str_eq(lj, want);
        free(la), free(lj);
    }
    /* b's first sample is a row: its rate cooked from a's last sample
     * (the same instance); its other rows are b's own. */
    assert_cell(j, 6, 2, "42.000000");
    char *rate = cell(j, 6, 1);
    cr_assert(rate[0], "no rate across the join:\n%s", j);
    free(rate);
    for (size_t r = 1; r <= 4; r++) {
        char *lb = line_of(cb, r), *lj = line_of(j, 6 + r);
        cr_assert_str_eq(lj, lb);
        free(lb), free(lj);
    }
    /* -q: both logs in time order, the union of their counters. */
    char *q = relog_ok((const char *[]){b, a, "-q", NULL});
    char *qa = strstr(q, a), *qb = strstr(q, b);
    cr_assert(qa && qb && qa < qb, "%s", q);
    cr_assert(strstr(q, "Samples: 6\n") && strstr(q, "Samples: 5\n") && strstr(q, "Counters: 2\n"),
              "%s", q);
    /* Overlapping logs are two recordings at once: refused. */
    relog_fails((const char *[]){a, b, a, NULL}, 1, "overlap in time");
    free(q), free(h), free(hb), free(j), free(ca), free(cb), free(a), free(b);
}

/* ---- -f BIN ---------------------------------------------------------------------- */

/* JSON lines without their "sample":N, in place. */
static void drop_sample_numbers(char *s)
{
    for (char *p; (p = strstr(s, "\"sample\":"));) {
        char *e = p + 9;
        while (*e >= '0' && *e <= '9')
            e++;
        memmove(p, e + 1, strlen(e + 1) + 1); /* and its ',' */
    }
}

Test(relog, bin_output_converts_as_the_run_printed)
{
    setenv("TZ", "UTC", 1);
    char *log = path_in_root("src.pcwlog"), *nl = path_in_root("new.pcwlog");
    synth_log(log, 13, 7, 10);
    const char *opts[] = {"-c", "\\S(A)\\*", "-b", "11/27/2026 15:12:04", "-t", "2"};
    const char *args[12] = {log};
    for (size_t i = 0; i < 6; i++)
        args[1 + i] = opts[i];
    char *want = relog_ok(args);
    args[7] = "-f", args[8] = "BIN", args[9] = "-o", args[10] = nl;
    free(relog_ok(args));
    char *got = relog_ok((const char *[]){nl, NULL});
    cr_assert_str_eq(got, want);
    free(got);
    /* JSON too, but for "sample": the new log numbers its own samples
     * (the source's 4, 6... are its 1, 2...). */
    args[7] = "-f", args[8] = "JSON", args[9] = NULL;
    want = relog_ok(args);
    got = relog_ok((const char *[]){nl, "-f", "JSON", NULL});
    cr_assert(strstr(want, "\"sample\":6,") && strstr(got, "\"sample\":2,"), "%s", got);
    drop_sample_numbers(want);
    drop_sample_numbers(got);
    cr_assert_str_eq(got, want);
    char *q = relog_ok((const char *[]){nl, "-q", NULL});
    cr_assert(strstr(q, "Counters: 1\n\\\\h\\S(a)\\R  PERF_COUNTER_COUNTER\n"), "%s", q);
    cr_assert(strstr(q, "Samples: 6\n"), "%s", q); /* 2 primes 4; 4, 6, 8, 10, 12 */
    /* The output exists: not overwritten without -y; with it, yes. */
    args[7] = "-f", args[8] = "BIN", args[9] = "-o", args[10] = nl;
    relog_fails(args, 1, nl);
    args[11] = "-y";
    free(relog_ok((const char *[]){args[0], args[1], args[2], args[3], args[4], args[5], args[6],
                                   args[7], args[8], args[9], args[10], args[11], NULL}));
    relog_fails((const char *[]){log, "-f", "BIN", NULL}, 2, "-f BIN writes a log file");
    /* -o naming an input (by another spelling too) would truncate the log
     * before it is converted: refused, the log intact. */
    char alias[PATH_MAX];
    snprintf(alias, sizeof alias, "%s/./new.pcwlog", tu_root);
    size_t before = 0, after = 0;
    free(tu_read_file(nl, 1 << 20, &before));
    relog_fails((const char *[]){nl, "-f", "BIN", "-o", alias, "-y", NULL}, 1,
                "is also a log it reads");
    relog_fails((const char *[]){log, nl, "-o", nl, "-y", NULL}, 1, "is also a log it reads");
    free(tu_read_file(nl, 1 << 20, &after));
    cr_assert(before > 0 && after == before, "%zu bytes, then %zu", before, after);
    free(q), free(got), free(want), free(log), free(nl);
}

/* ---- damage ---------------------------------------------------------------------- */

Test(relog, damaged_log_among_several)
{
    setenv("TZ", "UTC", 1);
    char *a = path_in_root("a.pcwlog"), *b = path_in_root("b.pcwlog"), *bad = path_in_root("bad");
    synth_log(a, 12, 100, 100); /* blocks of 4 samples */
    {                           /* b: 100 s after a, another provider's "\\h\S(a)\R" */
        char why[512];
        int fd = open(b, O_WRONLY | O_CREAT | O_EXCL, 0600);
        pcw__hist_writer *w;
        cr_assert_eq(pcw__hist_writer_open(&w, fd, b, NULL, why, sizeof why), 0);
        cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(a)\\R", PCW__HIST_KIND_RAW), 0);
        pcw__hist_series ia = {.type = PERF_COUNTER_COUNTER, .provider_id = 8, .instance_id = 1};
        cr_assert_eq(pcw__hist_writer_ident(w, 0, &ia), 0);
        for (uint64_t k = 0; k < 3; k++) {
            pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID,
                                         .first = k * 10,
                                         .second = k * 1000000000u,
                                         .freq = 1000000000u}};
            cr_assert_eq(pcw__hist_writer_sample(w, k, T0 + (100 + k) * 1000000000u, &v, 1), 0);
        }
        cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    }
    /* a's second block (samples 4..7) damaged: a byte flipped. */
    size_t len = 0;
    unsigned char *buf = tu_read_file(a, 1 << 20, &len);
    cr_assert(buf);
    uint64_t off = PCW__HIST_FILE_HEADER;
    off += PCW__HIST_BLOCK_HEADER + pcw__hist_le32(buf + off + 4); /* the second block */
    buf[off + PCW__HIST_BLOCK_HEADER + 2] ^= 0x10;
    cr_assert_eq(tu_write_file(bad, buf, len, 0600), 0);
    free(buf);
    char want[256];
    snprintf(want, sizeof want, "%s: block at offset %llu: XXH3 check mismatch", bad,
             (unsigned long long)off);
    relog_fails((const char *[]){bad, b, NULL}, 1, want);
    char *o = slurp(out_);
    /* a's rows 1..3 (its samples before the damage), then b's 3 samples:
     * its first is a row (a's sample 3 precedes it) without a rate (another
     * provider). */
    cr_assert_eq(count_lines(o), 1 + 3 + 3, "%s", o);
    assert_cell(o, 4, 1, "");
    assert_cell(o, 5, 1, "10.000000");
    free(o);
    relog_fails((const char *[]){bad, "-f", "JSON", NULL}, 1, want);
    o = slurp(out_);
    cr_assert_eq(count_lines(o), 3, "%s", o);
    free(o);
    relog_fails((const char *[]){bad, "-q", NULL}, 1, want);
    o = slurp(out_);
    cr_assert(strstr(o, "Samples: 4\nDamaged: block at offset"), "%s", o);
    free(o), free(a), free(b), free(bad);
}

/* ---- bad input --------------------------------------------------------------------- */

Test(relog, bad_input_is_a_clear_error)
{
    char *log = path_in_root("x.pcwlog"), *junk = path_in_root("junk");
    synth_log(log, 3, 100, 100);
    cr_assert_eq(tu_write_file(junk, "hello\n", 6, 0600), 0);
    relog_fails((const char *[]){log, "--bogus", NULL}, 2, "unknown option --bogus");
    relog_fails((const char *[]){log, "-t", "0", NULL}, 2, "bad -t \"0\"");
    relog_fails((const char *[]){log, "-t", "-3", NULL}, 2, "bad -t \"-3\"");
    relog_fails((const char *[]){log, "--thin=2x", NULL}, 2, "bad --thin \"2x\"");
    relog_fails((const char *[]){log, "-t", NULL}, 2, "-t needs a number");
    relog_fails((const char *[]){log, "-b", "soon", NULL}, 2, "bad time \"soon\" for -b");
    relog_fails((const char *[]){log, "-e", NULL}, 2, "-e needs a time");
    relog_fails((const char *[]){log, "-f", "XML", NULL}, 2, "unsupported format");
    relog_fails((const char *[]){log, "-q", "-t", "2", NULL}, 2, "-q lists the logs whole");
    relog_fails((const char *[]){NULL}, 2, "no log file given");
    relog_fails((const char *[]){"-c", "\\S(a)\\R", log, NULL}, 2, "give the logs before it");
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/missing.pcwlog", tu_root);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "pcwrelog: %s: No such file or directory\n", missing);
    relog_fails((const char *[]){log, missing, NULL}, 1, want);
    relog_fails((const char *[]){junk, NULL}, 1, "junk: not a pcw log");
    /* A FIFO for a log (planted, or a typo): refused at once, not an open
     * that waits for a writer forever. */
    char fifo[PATH_MAX];
    snprintf(fifo, sizeof fifo, "%s/fifo", tu_root);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    snprintf(out_, sizeof out_, "%s/out", tu_root);
    snprintf(err_, sizeof err_, "%s/err", tu_root);
    int st = tu_run_tool("pcwrelog", (const char *[]){fifo, NULL}, out_, err_, 5000);
    cr_assert(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    char *e = slurp(err_);
    cr_assert(strstr(e, "fifo: not a regular file"), "%s", e);
    free(e);
    /* "--" ends the options: a log named like one. */
    relog_fails((const char *[]){"--", "-t", NULL}, 1, "-t: No such file");
    free(log), free(junk);
}

/* A hostile log that names one path 400,000 times: 400,000 columns (as a
 * log that holds a path twice has two), found in constant time each - the
 * work stays linear in the log (a walk along the path's columns for each
 * series was quadratic: minutes). */
Test(relog, one_path_many_times_is_linear)
{
    /* The log built by hand (one uncompressed block of series records, as
     * docs/history.md lays it out): lib/history's writer grows its tables
     * one series at a time, which under ASan is itself quadratic. */
    enum { N = 400000 };
    const char path[] = "\\\\h\\S(a)\\R";
    size_t cap =
        PCW__HIST_FILE_HEADER + PCW__HIST_BLOCK_HEADER + (size_t)N * (4 + 10 + sizeof path);
    unsigned char *b = calloc(1, cap), *p = b + PCW__HIST_FILE_HEADER + PCW__HIST_BLOCK_HEADER;
    memcpy(b, PCW__HIST_MAGIC, 8);
    pcw__hist_put_le32(b + 8, PCW__HIST_VERSION);
    for (uint32_t i = 0; i < N; i++) {
        p += pcw__hist_put_varint(p, PCW__HIST_REC_SERIES);
        p += pcw__hist_put_varint(p, i);
        p += pcw__hist_put_varint(p, PCW__HIST_KIND_RAW);
        p += pcw__hist_put_varint(p, sizeof path - 1);
        memcpy(p, path, sizeof path - 1);
        p += sizeof path - 1;
    }
    unsigned char *h = b + PCW__HIST_FILE_HEADER;
    uint32_t len = (uint32_t)(p - h - PCW__HIST_BLOCK_HEADER);
    pcw__hist_put_le32(h, PCW__HIST_BLOCK_MAGIC);
    pcw__hist_put_le32(h + 4, len);
    pcw__hist_put_le32(h + 8, len);
    pcw__hist_put_le32(
        h + 24, pcw__hist_block_check(PCW__HIST_VERSION, h, h + PCW__HIST_BLOCK_HEADER, len));
    char *log = path_in_root("same.pcwlog");
    cr_assert_eq(tu_write_file(log, b, (size_t)(p - b), 0600), 0);
    free(b);
    snprintf(out_, sizeof out_, "%s/out", tu_root);
    snprintf(err_, sizeof err_, "%s/err", tu_root);
    long long t0 = tu_now_ms();
    int st = tu_run_tool("pcwrelog", (const char *[]){log, "-q", NULL}, out_, err_, 20000);
    cr_assert(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "pcwrelog -q: status %d after %lld ms", st, tu_now_ms() - t0);
    char *q = slurp(out_);
    cr_assert(strstr(q, "Counters: 400000\n"), "%.200s", q);
    free(q), free(log);
}

/* "(parent/instance)" patterns match each side against its side, as the
 * query layer does; without a '/', the pattern takes the whole name. */
Test(relog, selects_parent_instances)
{
    char *log = path_in_root("parent.pcwlog"), why[512];
    const char *paths[] = {"\\\\h\\P(web/0)\\C", "\\\\h\\P(web/1)\\C", "\\\\h\\P(db/0)\\C",
                           "\\\\h\\P(web/0/1)\\C"};
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    pcw__hist_series id = {.type = PERF_COUNTER_RAWCOUNT};
    pcw__hist_value v[4];
    for (uint32_t i = 0; i < 4; i++) {
        cr_assert_eq(pcw__hist_writer_series(w, i, paths[i], PCW__HIST_KIND_RAW), 0);
        cr_assert_eq(pcw__hist_writer_ident(w, i, &id), 0);
        v[i] = (pcw__hist_value){.raw = {.status = PCW_CSTATUS_VALID, .first = i + 1}};
    }
    for (uint64_t k = 0; k < 2; k++)
        cr_assert_eq(pcw__hist_writer_sample(w, k, T0 + k * 1000000000u, v, 4), 0);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    struct {
        const char *pattern, *header;
    } cases[] = {
        {"\\P(web/*)\\C", "\"\\\\h\\P(web/0)\\C\",\"\\\\h\\P(web/1)\\C\",\"\\\\h\\P(web/0/1)\\C\""},
        {"\\p(*/0)\\c", "\"\\\\h\\P(web/0)\\C\",\"\\\\h\\P(db/0)\\C\""},
        {"\\P(w*)\\C", "\"\\\\h\\P(web/0)\\C\",\"\\\\h\\P(web/1)\\C\",\"\\\\h\\P(web/0/1)\\C\""},
        {"\\P(DB/0)\\C", "\"\\\\h\\P(db/0)\\C\""},
        /* The parent "web*" and the instance "1": not "web/0/1", whose
         * instance is "0/1" (a '*' does not reach across the '/'). */
        {"\\P(web*/1)\\C", "\"\\\\h\\P(web/1)\\C\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = relog_ok((const char *[]){log, "-c", cases[i].pattern, NULL}), *h = line_of(c, 0);
        char want[256];
        snprintf(want, sizeof want, "\"(PDH-CSV 4.0)\",%s", cases[i].header);
        cr_assert_str_eq(h, want, "-c %s", cases[i].pattern);
        free(h), free(c);
    }
    relog_fails((const char *[]){log, "-c", "\\P(web)\\C", NULL}, 1, "matches no counter");
    free(log);
}

/* `pcwrelog LOG | head -2`: once the reader is gone, pcwrelog ends as a
 * filter does - by SIGPIPE, silently - and at once, not after converting
 * the rest of the log into a closed pipe: it takes a fraction of the time
 * of the whole conversion (3 million rows). */
Test(relog, ends_as_a_filter_when_the_reader_goes)
{
    char *log = path_in_root("big.pcwlog"), *null = path_in_root("null"), why[512];
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S\\C", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_COUNTER_LARGE_RAWCOUNT};
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
    pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID, .first = 5}};
    int bad = 0;
    for (uint64_t k = 0; k < 3000000; k++) {
        bad |= pcw__hist_writer_sample(w, k * 1000, T0 + k * 1000000, &v, 1);
        if (k % 1000000 == 999999)
            bad |= pcw__hist_writer_flush(w, why, sizeof why);
    }
    cr_assert_eq(bad, 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    long long t0 = tu_now_ms();
    free(relog_ok((const char *[]){log, "-o", null, NULL}));
    long long whole = tu_now_ms() - t0;

    char path[PATH_MAX], err[PATH_MAX];
    snprintf(path, sizeof path, "%s/pcwrelog",
             getenv("PCW_BUILD") ? getenv("PCW_BUILD") : PCW_BUILD_DIR);
    snprintf(err, sizeof err, "%s/pipe.err", tu_root);
    int fds[2];
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    t0 = tu_now_ms();
    pid_t self = getpid();
    tu_child c = {.pid = fork(), .in = -1, .out = -1};
    cr_assert(c.pid >= 0);
    if (c.pid == 0) {
        tu_die_with_parent(self);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fds[1], 1), dup2(e, 2);
        execl(path, path, log, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[256];
    cr_assert_gt(read(fds[0], buf, sizeof buf), 0); /* the header, at least */
    close(fds[0]);                                  /* the reader goes */
    int st = tu_finish(&c, 60000);
    long long took = tu_now_ms() - t0;
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "status %d", st);
    char *e = slurp(err);
    cr_assert_str_eq(e, "");
    cr_assert_lt(took * 3, whole, "%lld ms after the reader went; the whole conversion %lld ms",
                 took, whole);
    free(e), free(log), free(null);
}

/* A histogram's statistics with -t 3: each row cooked from the words of
 * the sample 3 back, which the reader holds no more (pcwrelog keeps a copy
 * of them), equal the rows of the log -t 3 -f BIN writes (which holds
 * each row's own words); the columns hold numbers (the log keeps a
 * histogram's words: version 2). */
Test(relog, histograms_thinned)
{
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "top_hist_provider", (const char *[]){NULL}), 0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "top_hist_provider did not start");
    qp_cmd(&p, "create web");
    qp_cmd(&p, "create api");
    qp_cmd(&p, "pattern web 1500000 3 70000000 1");
    qp_cmd(&p, "pattern api 200000 5");
    char *log = path_in_root("h.pcwlog"), *thin = path_in_root("h3.pcwlog");
    pcwstat_ok((const char *[]){"\\Hist Test(*)\\Latency", "-si", "0.02", "-sc", "12", "-f", "BIN",
                                "-o", log, NULL});
    qp_stop(&p);
    char *a = relog_ok((const char *[]){log, "-t", "3", NULL});
    free(relog_ok((const char *[]){log, "-t", "3", "-f", "BIN", "-o", thin, NULL}));
    char *b = relog_ok((const char *[]){thin, NULL});
    cr_assert_eq(count_lines(a), 1 + 4, "%s", a);
    cr_assert_str_eq(b, a, "from the new log:\n%s\nthinned:\n%s", b, a);
    char *h = line_of(a, 0), path[256];
    snprintf(path, sizeof path, "\\\\%s\\Hist Test(web)\\Latency:rate", pcw_path_local_host());
    size_t col = column_index(h, path);
    for (size_t r = 1; r <= 4; r++) {
        char *f = cell(a, r, col);
        cr_assert(f[0], "row %zu has no rate:\n%s", r, a);
        free(f);
    }
    free(h);
    free(a), free(b), free(log), free(thin);
}

/* A valid log of one 8192-bucket histogram, blocks of 10 samples: -f BIN
 * gathers up to 1024 samples a block, ~16 KB each here, beyond what a
 * block may hold; the writer ends its blocks in time, and the new log
 * converts to what the old one does. */
Test(relog, wide_histograms_to_bin)
{
    char *log = path_in_root("wide.pcwlog"), *copy = path_in_root("wide2.pcwlog"), why[512];
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(i)\\Latency:p99", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_PCW_HISTOGRAM, .hshape = 0x20000010, .instance_id = 1};
    id.hstat.kind = PCW_HSTAT_QUANTILE, id.hstat.q = 0.99;
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
    uint32_t n = 2 + pcw_hist_nbuckets(id.hshape);
    uint64_t *words = calloc(n, sizeof *words);
    for (uint64_t k = 0; k < 1100; k++) {
        for (uint32_t j = 2; j < n; j++)
            words[j] += 1 + (j * 7 + k) % 5;
        words[0] += 1000 * k;
        pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID, .time_ns = k * 1000000000u},
                             .hwords = words,
                             .hn = n};
        cr_assert_eq(pcw__hist_writer_sample(w, k + 1, T0 + k * 1000000000u, &v, 1), 0);
        if (k % 10 == 9)
            cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    free(words);
    free(relog_ok((const char *[]){log, "-f", "BIN", "-o", copy, "-y", NULL}));
    char *a = relog_ok((const char *[]){log, NULL}), *b = relog_ok((const char *[]){copy, NULL});
    cr_assert_eq(count_lines(a), 1 + 1099, "%s", a); /* the first sample: no interval */
    cr_assert_str_eq(b, a);
    free(a), free(b), free(log), free(copy);
}

/* ---- -f BIN's row samples (record_group) ----------------------------------------- */

#define GR_SAMPLES 10
#define GR_MAXV    64

/* What the live query showed in one sample: each value's path and CSV cell. */
typedef struct live_row {
    char path[GR_MAXV][256];
    char cell[GR_MAXV][64];
    size_t n;
} live_row;

static void live_values(live_row *row, pcw_pdh_counter *h)
{
    for (size_t i = 0; i < pcw_pdh_value_count(h); i++) {
        pcw_pdh_value v;
        cr_assert_lt(row->n, GR_MAXV);
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
        pcw_pdh_value_path(h, i, 1, row->path[row->n], sizeof row->path[0]);
        if (v.status == PCW_CSTATUS_VALID)
            snprintf(row->cell[row->n], sizeof row->cell[0], "%.6f", v.value);
        else
            row->cell[row->n][0] = 0;
        row->n++;
    }
}

/* A recording of "\Rows Test(*)\*" (rows_provider plain: every counter
 * of its rows selected) as a group, beside columns (the other handles
 * given, one value each), while instances come and go; pcwrelog's CSV of
 * it holds, in each row, what the live query showed for every path then,
 * and nothing for the paths that were not there. */
static void group_reads_back_as_live(const char *name, const char *const *paths, size_t npaths,
                                     tu_child *hist)
{
    tu_child p, rl;
    cr_assert_eq(tu_spawn(&p, "rows_provider", (const char *[]){"plain", NULL}), 0);
    char line[128], why[512];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "provider did not start");
    start_rl(&rl);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "create b");
    pcw_pdh *q;
    pcw_pdh_counter *g;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Rows Test(*)\\*", &g, NULL), PCW_OK);
    column cols[4];
    for (size_t i = 0; i < npaths; i++)
        cr_assert_eq(pcw_pdh_add_counter(q, paths[i], &cols[i].h, NULL), PCW_OK, "%s", paths[i]);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    char *log = path_in_root(name);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    recorder *rec = record_open(fd, log, NULL, 0, 0, why, sizeof why);
    cr_assert(rec, "%s", why);
    cr_assert_eq(record_group(rec, q, g, why, sizeof why), 1, "not a group: %s", why);
    for (size_t i = 0; i < npaths; i++) {
        char full[256];
        pcw_pdh_value_path(cols[i].h, 0, 1, full, sizeof full);
        cols[i].path = strdup(full);
    }
    cr_assert_eq(record_columns(rec, cols, npaths, why, sizeof why), 0, "%s", why);
    cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    static live_row live[GR_SAMPLES + 1];
    memset(live, 0, sizeof live);
    for (int k = 1; k <= GR_SAMPLES; k++) {
        if (k == 3)
            qp_cmd(&p, "create c"); /* a new slot, in the sample it appears */
        if (k == 5)
            qp_cmd(&p, "close a"); /* its slot NO_INSTANCE */
        if (k == 6)
            qp_cmd(&p, "create d"); /* a slot of its own */
        if (k == 7)
            qp_cmd(&p, "close c"); /* c's slot between b's and d's gone */
        if (k == 8)
            qp_cmd(&p, "create a"); /* back: its slot again */
        if (k == 9)
            qp_cmd(&p, "create c"); /* back too */
        qp_cmd(&p, "set b 0 %d", 100 * k);
        qp_cmd(&p, "set b 1 %d", k % 3);
        if (k >= 3 && k != 7 && k != 8)
            qp_cmd(&p, "set c 2 %d", 5000 * k * k);
        if (k >= 6)
            qp_cmd(&p, "set d 1 %d", 3 * k);
        qp_cmd(&p, "set %s 0 %d", k < 5 || k >= 8 ? "a" : "b", 7 * k);
        qp_cmd(&rl, "set y %d %d", QP_LEVEL, 40 + k);
        if (hist)
            qp_cmd(hist, "pattern web %d 3", 100000 * k);
        pause_ms(15);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
        live_values(&live[k], g);
        for (size_t i = 0; i < npaths; i++)
            live_values(&live[k], cols[i].h);
    }
    cr_assert_eq(record_finish(rec, why, sizeof why), 0, "%s", why);
    qp_stop(&p);
    qp_stop(&rl);
    char *csv = relog_ok((const char *[]){log, "-f", "CSV", NULL});
    cr_assert_eq(count_lines(csv), 1 + GR_SAMPLES, "%s", csv);
    char *h = line_of(csv, 0);
    size_t ncol = 0;
    for (const char *x = h; (x = strstr(x, "\",\"")); x++)
        ncol++;
    cr_assert_eq(ncol, 4 * 3 + npaths, "a, b, c, d's 3 series and the columns:\n%s", h);
    int seen_c = 0;
    for (int k = 1; k <= GR_SAMPLES; k++) {
        unsigned char listed[GR_MAXV] = {0};
        for (size_t i = 0; i < live[k].n; i++) {
            size_t col = column_index(h, live[k].path[i]);
            cr_assert_leq(col, ncol);
            listed[col] = 1;
            assert_cell(csv, (size_t)k, col, live[k].cell[i]);
            seen_c |= strstr(live[k].path[i], "Rows Test(c)") && live[k].cell[i][0];
        }
        for (size_t col = 1; col <= ncol; col++)
            if (!listed[col])
                assert_cell(csv, (size_t)k, col, "");
    }
    cr_assert(seen_c, "c never had a value:\n%s", csv);
    free(h), free(csv), free(log);
    for (size_t i = 0; i < npaths; i++)
        free(cols[i].path);
    pcw_pdh_close(q);
}

Test(relog, group_with_total_reads_back_as_live)
{
    const char *paths[] = {"\\Rl(_Total)\\Level", "\\Rl(y)\\Level"};
    group_reads_back_as_live("group.pcwlog", paths, 2, NULL);
}

/* With a histogram's statistic among the columns every sample is a sample
 * record (a row sample holds no histogram): the group's rows made values. */
Test(relog, group_with_histogram_reads_back_as_live)
{
    tu_child hp;
    cr_assert_eq(tu_spawn(&hp, "top_hist_provider", (const char *[]){NULL}), 0);
    char line[256];
    cr_assert(tu_readline(&hp, line, sizeof line, 10000) > 0, "top_hist_provider did not start");
    qp_cmd(&hp, "create web");
    qp_cmd(&hp, "pattern web 1500000 3");
    const char *paths[] = {"\\Hist Test(web)\\Latency:rate", "\\Hist Test(web)\\Latency:p50",
                           "\\Rl(_Total)\\Level"};
    group_reads_back_as_live("mixed.pcwlog", paths, 3, &hp);
    qp_stop(&hp);
}

/* The samples of the log being written (its complete blocks), with
 * `want` (NULL: none) the path of a series: *value its raw value in the
 * last sample (-1: not valid there). */
static int log_samples(const char *log, const char *want, long long *value)
{
    pcw__hist_reader *r;
    char why[256];
    *value = -1;
    if (pcw__hist_reader_open(&r, log, why, sizeof why) != 0)
        return 0; /* (not there yet) */
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    int n = 0;
    while (pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why) == 1) {
        n++;
        *value = -1;
        for (size_t i = 0; want && i < nv; i++) {
            const pcw__hist_series *id = pcw__hist_reader_series(r, i);
            const char *tail = id && id->path ? strchr(id->path + 2, '\\') : NULL;
            if (tail && strcmp(tail, want) == 0 && v[i].raw.status == PCW_CSTATUS_VALID)
                *value = (long long)v[i].raw.first;
        }
    }
    pcw__hist_reader_close(r);
    return n;
}

/* A reader of log that has read every sample (its series all defined). */
static pcw__hist_reader *read_to_end(const char *log)
{
    pcw__hist_reader *r;
    char why[256];
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    int rc;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why)) == 1)
        ;
    cr_assert_eq(rc, 0, "%s", why);
    return r;
}

/* pcwstat-recorder.service's path, "\*(*)\*": each counterset it
 * matches is a path of its own, so each is recorded as a group (its
 * series carry their row layouts: row samples), a counterset that
 * appears during the run too; and the log reads back as live. */
Test(relog, pcwstat_bin_splits_a_wildcard_counterset)
{
    tu_child p, late, rec;
    cr_assert_eq(tu_spawn(&p, "rows_provider", (const char *[]){"plain", NULL}), 0);
    char line[128];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "provider did not start");
    qp_cmd(&p, "create a");
    qp_cmd(&p, "create b");
    qp_cmd(&p, "set a 1 42");
    char *log = path_in_root("split.pcwlog"), tool[PATH_MAX];
    snprintf(tool, sizeof tool, "%s/pcwstat", PCW_BUILD_DIR);
    cr_assert_eq(tu_spawn_argv(&rec, (const char *[]){tool, "\\*(*)\\*", "-si", "0.02", "-f", "BIN",
                                                      "-o", log, "--flush", "0", NULL}),
                 0);
    long long v;
    long long deadline = tu_now_ms() + 20000;
    while (log_samples(log, NULL, &v) < 3 && tu_now_ms() < deadline)
        usleep(5000); /* (polling the log: the recorder's only output) */
    cr_assert_geq(log_samples(log, NULL, &v), 3, "no samples logged");
    /* A counterset that starts during the run, registered a few samples
     * before its first instance is created (pcwstat has seen it empty). */
    cr_assert_eq(tu_spawn(&late, "rows_provider", (const char *[]){"plain", "Late Rows", NULL}), 0);
    cr_assert(tu_readline(&late, line, sizeof line, 10000) > 0, "late provider did not start");
    int at = log_samples(log, NULL, &v);
    while (log_samples(log, NULL, &v) < at + 4 && tu_now_ms() < deadline)
        usleep(5000);
    qp_cmd(&late, "create z");
    qp_cmd(&late, "set z 1 9");
    while ((log_samples(log, "\\Late Rows(z)\\Level", &v), v != 9) && tu_now_ms() < deadline)
        usleep(5000);
    cr_assert_eq(v, 9, "the late counterset's value never logged");
    kill(rec.pid, SIGTERM);
    int st = tu_finish(&rec, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pcwstat status %d", st);
    qp_stop(&late);
    qp_stop(&p);
    /* Every series is a group's: its rows logged as rows. */
    pcw__hist_reader *r = read_to_end(log);
    size_t n = pcw__hist_reader_series_count(r);
    cr_assert_eq(n, 3 * 3, "series: a, b and z, 3 counters each: %zu", n);
    for (size_t i = 0; i < n; i++) {
        const pcw__hist_series *id = pcw__hist_reader_series(r, i);
        cr_assert(id->layout.words != 0, "%s: logged value by value, not as rows", id->path);
    }
    pcw__hist_reader_close(r);
    /* And as live: the last row has a's and z's levels. */
    char *csv = relog_ok((const char *[]){log, "-f", "CSV", NULL});
    char *head = line_of(csv, 0), *last = line_of(csv, count_lines(csv) - 1);
    for (size_t k = 1; k <= n; k++) {
        char *name = field(head, k), *cell = field(last, k);
        if (strstr(name, "Rows Test(a)\\Level"))
            cr_assert_str_eq(cell, "42.000000");
        if (strstr(name, "Late Rows(z)\\Level"))
            cr_assert_str_eq(cell, "9.000000");
        free(name), free(cell);
    }
    free(head), free(last), free(csv), free(log);
}

/* A counterset whose name holds a wildcard character cannot be named on
 * its own: "\\*(*)\\*" leaves it out and says so, and records the others. */
Test(relog, pcwstat_bin_split_leaves_out_a_wildcard_name)
{
    tu_child p, odd;
    cr_assert_eq(tu_spawn(&p, "rows_provider", (const char *[]){"plain", NULL}), 0);
    cr_assert_eq(tu_spawn(&odd, "rows_provider", (const char *[]){"plain", "Odd*Rows", NULL}), 0);
    char line[128];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "provider did not start");
    cr_assert(tu_readline(&odd, line, sizeof line, 10000) > 0, "provider did not start");
    qp_cmd(&p, "create a");
    qp_cmd(&odd, "create o");
    char *log = path_in_root("odd.pcwlog");
    pcwstat_ok((const char *[]){"\\*(*)\\*", "\\Rows Test(a)\\Busy", "-si", "0.02", "-sc", "3",
                                "-f", "BIN", "-o", log, NULL});
    char *e = slurp(err_);
    cr_assert(strstr(e, "counterset \"Odd*Rows\" is not recorded: a name with '*', '?'"), "%s", e);
    free(e);
    qp_stop(&odd);
    qp_stop(&p);
    char *csv = relog_ok((const char *[]){log, "-f", "CSV", NULL});
    char *head = line_of(csv, 0);
    cr_assert_null(strstr(head, "Odd"), "%s", head);
    /* The series in the order of the paths: the split path's, then the
     * other's. */
    const char *want[] = {"Count", "Level", "Busy", "Busy"};
    for (size_t k = 0; k < 4; k++) {
        char *f = field(head, k + 1), *tail = strstr(f, "\\Rows Test(a)\\");
        cr_assert(tail && strcmp(tail + strlen("\\Rows Test(a)\\"), want[k]) == 0,
                  "column %zu is %s, not Rows Test(a)'s %s:\n%s", k + 1, f, want[k], head);
        free(f);
    }
    size_t seps = 0;
    for (const char *q = head; (q = strstr(q, "\",\"")); q++)
        seps++;
    cr_assert_eq(seps, 4, "the time and 4 columns: %s", head);
    free(head), free(csv), free(log);
}

/* A counterset is followed by name, as the query matches names: one the
 * user's pattern selects no counter of is tried again when it is
 * registered with other counters, and one whose merged name changes case
 * (the registration that named it exits) is not recorded twice. */
Test(relog, pcwstat_bin_split_follows_countersets_by_name)
{
    tu_child p, later, a, b, rec;
    char line[128];
    cr_assert_eq(tu_spawn(&p, "rows_provider", (const char *[]){"full", NULL}), 0);
    cr_assert_eq(tu_spawn(&later, "rows_provider", (const char *[]){"plain", "Later", NULL}), 0);
    cr_assert_eq(tu_spawn(&a, "rows_provider", (const char *[]){"plain", "Case Rows", NULL}), 0);
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "provider did not start");
    cr_assert(tu_readline(&later, line, sizeof line, 10000) > 0, "provider did not start");
    cr_assert(tu_readline(&a, line, sizeof line, 10000) > 0, "provider did not start");
    /* (Started after "Case Rows", which names the merged counterset.) */
    cr_assert_eq(tu_spawn(&b, "rows_provider", (const char *[]){"plain", "CASE ROWS", NULL}), 0);
    cr_assert(tu_readline(&b, line, sizeof line, 10000) > 0, "provider did not start");
    qp_cmd(&p, "create a");
    qp_cmd(&later, "create l");
    qp_cmd(&a, "create x");
    qp_cmd(&b, "create y");
    char *log = path_in_root("byname.pcwlog"), tool[PATH_MAX];
    snprintf(tool, sizeof tool, "%s/pcwstat", PCW_BUILD_DIR);
    /* "Ratio": "Rows Test" has it, "Later" (plain) not. "*Rows": "Case
     * Rows" and "CASE ROWS" are one counterset. */
    cr_assert_eq(
        tu_spawn_argv(&rec, (const char *[]){tool, "\\*(*)\\Ratio", "\\*Rows(*)\\Level", "-si",
                                             "0.02", "-f", "BIN", "-o", log, "--flush", "0", NULL}),
        0);
    long long v, deadline = tu_now_ms() + 20000;
    while (log_samples(log, NULL, &v) < 3 && tu_now_ms() < deadline)
        usleep(5000); /* (polling the log: the recorder's only output) */
    cr_assert_geq(log_samples(log, NULL, &v), 3, "no samples logged");
    /* "Later" registered again, now with "Ratio"; "Case Rows", which named
     * the merged counterset, exits. */
    qp_stop(&later);
    qp_stop(&a);
    cr_assert_eq(tu_spawn(&later, "rows_provider", (const char *[]){"full", "Later", NULL}), 0);
    cr_assert(tu_readline(&later, line, sizeof line, 10000) > 0, "provider did not start");
    qp_cmd(&later, "create m");
    qp_cmd(&later, "set m 3 77");
    while ((log_samples(log, "\\Later(m)\\Ratio", &v), v != 77) && tu_now_ms() < deadline)
        usleep(5000);
    cr_assert_eq(v, 77, "\\Later(m)\\Ratio never logged");
    int at = log_samples(log, NULL, &v);
    while (log_samples(log, NULL, &v) < at + 4 && tu_now_ms() < deadline)
        usleep(5000);
    kill(rec.pid, SIGTERM);
    int st = tu_finish(&rec, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pcwstat status %d", st);
    qp_stop(&later);
    qp_stop(&b);
    qp_stop(&p);
    /* No path twice, whatever its case. */
    pcw__hist_reader *r = read_to_end(log);
    size_t n = pcw__hist_reader_series_count(r);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            cr_assert(strcasecmp(pcw__hist_reader_series(r, i)->path,
                                 pcw__hist_reader_series(r, j)->path) != 0,
                      "%s logged twice", pcw__hist_reader_series(r, j)->path);
    pcw__hist_reader_close(r);
    free(log);
}

/* A real `pcwstat -f BIN` takes the wildcard path as a group (its series
 * in the order given, before the next path's) and logs what live shows. */
Test(relog, pcwstat_bin_records_a_group)
{
    tu_child p, rl;
    cr_assert_eq(tu_spawn(&p, "rows_provider", (const char *[]){"plain", NULL}), 0);
    char line[128];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "provider did not start");
    start_rl(&rl);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "create b");
    qp_cmd(&p, "set a 1 42");
    qp_cmd(&p, "set b 1 7");
    char *log = path_in_root("bin.pcwlog");
    pcwstat_ok((const char *[]){"\\Rows Test(*)\\*", "\\Rl(y)\\Level", "-si", "0.02", "-sc", "4",
                                "-f", "BIN", "-o", log, NULL});
    qp_stop(&p);
    qp_stop(&rl);
    char *csv = relog_ok((const char *[]){log, "-f", "CSV", NULL});
    cr_assert_eq(count_lines(csv), 1 + 4, "%s", csv);
    char want[1024];
    const char *host = pcw_path_local_host();
    snprintf(want, sizeof want,
             "\"\\\\%s\\Rows Test(a)\\Count\",\"\\\\%s\\Rows Test(a)\\Level\",\"\\\\%s\\Rows "
             "Test(a)\\Busy\",\"\\\\%s\\Rows Test(b)\\Count\",\"\\\\%s\\Rows Test(b)\\Level\","
             "\"\\\\%s\\Rows Test(b)\\Busy\",\"\\\\%s\\Rl(y)\\Level\"\n",
             host, host, host, host, host, host, host);
    cr_assert(strstr(csv, want), "header:\n%s\nwant:\n%s", csv, want);
    for (size_t r = 1; r <= 4; r++) {
        assert_cell(csv, r, 2, "42.000000");
        assert_cell(csv, r, 5, "7.000000");
        assert_cell(csv, r, 7, "42.000000");
    }
    free(csv), free(log);
}
