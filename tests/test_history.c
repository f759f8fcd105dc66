/* SPDX-License-Identifier: MIT */
/*
 * tests/test_history.c - the pcw log (lib/history, docs/history.md),
 * `pcwstat -f BIN` and pcwrelog:
 *
 *   - replay equals live: pcwstat's own column and recording code (compiled
 *     in) collects a real provider, writing typeperf's CSV with pcwstat's
 *     write_row and the log with record_sample from the same collections,
 *     across rates, a fraction, a _Total, an instance closed and created
 *     again (a new identity: the live rate starts over) and a second
 *     provider that crashes; `pcwrelog LOG -f CSV` (a real process) must
 *     print the same bytes;
 *   - a real `pcwstat -f BIN -o LOG` killed with SIGKILL leaves a log that
 *     reads whole; cut inside its last block, or with a byte flipped in a
 *     middle block, it reads up to that block and pcwrelog names its
 *     offset;
 *   - the same with a real `pcwstat -f CSV --log LOG` killed with SIGKILL:
 *     pcwrelog's CSV is a prefix of what it printed live;
 *   - a new identity record restarts a series' rates, as live;
 *   - blocks span --flush (one block for a short run, smaller than one
 *     block per sample);
 *   - a full disk: pcwstat -o /dev/full fails with the reason; a writer that
 *     hits the file size limit mid-block leaves no partial block behind; a
 *     real recorder filling a 64 KiB tmpfs (root) and its file size limit
 *     stops with the reason, its log whole to the byte it names;
 *   - a block more compressible than a reader accepts is written plain;
 *   - wide histograms sampled without a flush: the writer ends a block
 *     before it would be more than a reader accepts, in bytes or in
 *     histogram words to decode;
 *   - hostile headers and lengths are refused naming the offset; the
 *     fuzzer's seeds are whole logs;
 *   - histograms (format version 2): every statistic of an instance and of
 *     the _Total replays as live, ABOVE_RANGE included; version 1 logs
 *     still read as version 1, and pcwrelog -q lists them so;
 *   - the recorder for days: --max-size rotates into FILE.1... keeping
 *     --max-files, files that follow on, a restart keeps the previous
 *     run's file; -f BIN logs instances that appear after the start.
 *
 * The recorder's output file is the signal the SIGKILL test waits on (with
 * a deadline), never a sleep; the pauses between collections are the
 * sampling interval, not synchronisation.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <zlib.h>

#include "pcw/histogram.h"
#include "pcw/pdh.h"
#include "query_provider.h"

#include "../lib/history/codec.h"
/* Compiled in: pcwstat's CSV writer and its recording sink. */
#include "../tools/pcwstat/pcwstat.h"

TestSuite(history, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

static const char *build_dir(void)
{
    const char *b = getenv("PCW_BUILD");
    return b && *b ? b : PCW_BUILD_DIR;
}

/* Run build/TOOL to its end (a minute at most); its exit status. */
static int run_tool(const char *tool, const char *const *args, const char *out, const char *err)
{
    int st = tu_run_tool(tool, args, out, err, 60000);
    cr_assert(st >= 0 && WIFEXITED(st), "%s did not exit by itself (status %d)", tool, st);
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    char *s = tu_read_text(path, 1 << 24);
    cr_assert(s, "cannot read %s", path);
    return s;
}

static void pause_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL); /* the sampling interval, not synchronisation */
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- replay equals live ----------------------------------------------------- */

Test(history, replay_equals_live)
{
    tu_child p1, p2;
    qp_start(&p1, "Hist", PCW_MULTI_AGGREGATE, NULL);
    qp_start(&p2, "Hist", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&p1, "create a");
    qp_cmd(&p1, "create b");
    qp_cmd(&p2, "create c");
    qp_cmd(&p1, "rate a %d 1000", QP_RATE);
    qp_cmd(&p1, "rate b %d 250", QP_RATE);
    qp_cmd(&p1, "rate a %d 5000", QP_COUNT);
    qp_cmd(&p2, "rate c %d 777", QP_RATE);
    qp_cmd(&p1, "set a %d 7", QP_HIT);
    qp_cmd(&p1, "set a %d 9", QP_HIT_BASE);
    qp_cmd(&p1, "set b %d 42", QP_LEVEL);
    qp_cmd(&p2, "set c %d 5", QP_PEAK);

    /* As pcwstat's run(): the user's path, the priming collection, one
     * handle per concrete path, the log's first (priming) sample. */
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *user;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Hist(*)\\*", &user, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    size_t n = pcw_pdh_value_count(user);
    cr_assert_geq(n, 4 * 7, "values: %zu", n);
    column *cols = calloc(n, sizeof *cols);
    for (size_t i = 0; i < n; i++) {
        char bare[4096], full[4096];
        pcw_pdh_value_path(user, i, 0, bare, sizeof bare);
        pcw_pdh_value_path(user, i, 1, full, sizeof full);
        cr_assert_eq(pcw_pdh_add_counter(q, bare, &cols[i].h, NULL), PCW_OK, "%s", bare);
        cols[i].path = strdup(full);
    }
    pcw_pdh_remove_counter(q, user);
    char log[PATH_MAX], live[PATH_MAX], out[PATH_MAX], err[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/rec.pcwlog", tu_root);
    snprintf(live, sizeof live, "%s/live.csv", tu_root);
    snprintf(out, sizeof out, "%s/relog.csv", tu_root);
    snprintf(err, sizeof err, "%s/relog.err", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0);
    recorder *rec = record_open(fd, log, cols, n, 0, why, sizeof why);
    cr_assert(rec, "%s", why);
    cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    char live_tsv[PATH_MAX];
    snprintf(live_tsv, sizeof live_tsv, "%s/live.tsv", tu_root);
    FILE *csv = fopen(live, "w"), *tsv = fopen(live_tsv, "w");
    cr_assert(csv && tsv);
    write_header(csv, FMT_CSV, cols, n);
    write_header(tsv, FMT_TSV, cols, n);
    for (int s = 0; s < 24; s++) {
        if (s == 8) {
            /* "a" again under a new instance id, its Count far above the
             * old one's: a new identity, whose first rate is no number
             * live (not a rate against the old instance's count). */
            qp_cmd(&p1, "close a");
            qp_cmd(&p1, "create tmp");
            qp_cmd(&p1, "create a");
            qp_cmd(&p1, "close tmp");
            qp_cmd(&p1, "set a %d 4000000000", QP_COUNT);
            qp_cmd(&p1, "rate a %d 3000", QP_RATE);
        }
        if (s == 12)
            qp_cmd(&p1, "set a %d 0", QP_HIT_BASE); /* a zero base: no value */
        if (s == 16) {                              /* a crashed provider: its columns go empty */
            tu_send(&p2, "crash");
            tu_finish(&p2, 10000);
        }
        pause_ms(15);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        write_row(csv, FMT_CSV, pcw_pdh_realtime_ns(q), cols, n, 0);
        write_row(tsv, FMT_TSV, pcw_pdh_realtime_ns(q), cols, n, PCW_FMT_NOSCALE);
        cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(fclose(csv), 0);
    cr_assert_eq(fclose(tsv), 0);
    cr_assert_eq(record_finish(rec, why, sizeof why), 0, "%s", why);
    qp_stop(&p1);

    const char *args[] = {log, "-f", "CSV", NULL};
    cr_assert_eq(run_tool("pcwrelog", args, out, err), 0, "stderr: %s", slurp(err));
    char *a = slurp(live), *b = slurp(out);
    cr_assert_eq(count_lines(a), 25);
    cr_assert_str_eq(b, a, "pcwrelog:\n%s\nlive:\n%s", b, a);
    /* The scenario did reach the values it means to compare: a rate, a
     * number and an empty field all appear. */
    cr_assert(strstr(a, ",\"\""), "no empty field:\n%s", a);
    cr_assert(strstr(a, "\"42.000000\""), "no Level:\n%s", a);
    /* TSV, unscaled (pcwstat --no-scale), likewise. */
    const char *targs[] = {log, "-f", "TSV", "--no-scale", NULL};
    cr_assert_eq(run_tool("pcwrelog", targs, out, err), 0, "stderr: %s", slurp(err));
    char *c = slurp(live_tsv), *d = slurp(out);
    cr_assert_str_eq(d, c, "pcwrelog:\n%s\nlive:\n%s", d, c);
    free(c);
    free(d);
    free(a);
    free(b);
    for (size_t i = 0; i < n; i++)
        free(cols[i].path);
    free(cols);
    pcw_pdh_close(q);
}

/* A series whose instance changed identity (a provider restarted, an id
 * that now names another instance) has no previous sample: its first rate
 * is no number, as live (PCW_CSTATUS_NEW_DATA_NEEDED), not a rate against
 * the old instance's count. The recorder logs the change as an identity
 * record; pcwrelog must honour it. */
Test(history, new_identity_restarts_rates)
{
    char log[PATH_MAX], out[PATH_MAX], err[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/ident.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(x)\\Rate", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_COUNTER_COUNTER, .provider_id = 1, .instance_id = 1};
    uint64_t firsts[4] = {100, 300, 5000, 5400};
    for (int i = 0; i < 4; i++) {
        if (i == 0 || i == 2) {
            id.instance_id = (uint32_t)i + 1;
            cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
        }
        pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID,
                                     .first = firsts[i],
                                     .second = (uint64_t)(i + 1) * 1000000000u,
                                     .freq = 1000000000u}};
        cr_assert_eq(pcw__hist_writer_sample(w, (uint64_t)(i + 1) * 1000000000u,
                                             1700000000000000000ull + (uint64_t)i * 1000000000u, &v,
                                             1),
                     0);
        cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    cr_assert_eq(run_tool("pcwrelog", (const char *[]){log, NULL}, out, err), 0, "%s", slurp(err));
    char *csv = slurp(out);
    const char *row = strchr(csv, '\n') + 1;
    /* rows: 200/s; none (new instance); 400/s */
    cr_assert(strstr(row, ",\"200.000000\"\n"), "%s", csv);
    row = strchr(row, '\n') + 1;
    cr_assert(strstr(row, ",\"\"\n") == strchr(row, ','), "%s", csv);
    row = strchr(row, '\n') + 1;
    cr_assert(strstr(row, ",\"400.000000\"\n"), "%s", csv);
    free(csv);
}

/* ---- a real recorder killed with SIGKILL, damaged logs -------------------- */

/* Samples readable in log now (0 while it has no header yet). */
static uint64_t samples_in(const char *log, uint64_t *offsets, size_t cap)
{
    pcw__hist_reader *r;
    char why[256];
    if (pcw__hist_reader_open(&r, log, why, sizeof why))
        return 0;
    uint64_t mono, real, n = 0;
    const pcw__hist_value *v;
    size_t nv;
    while (pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why) == 1) {
        if (n < cap)
            offsets[n] = pcw__hist_reader_offset(r); /* one block per sample */
        n++;
    }
    pcw__hist_reader_close(r);
    return n;
}

/* Run a real pcwstat with args (stderr to err) until the log it records
 * holds `want` samples (a deadline of 30 s), then kill it with SIGKILL. */
static void record_then_kill(const char *const *args, const char *log, const char *err,
                             uint64_t want)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/pcwstat", build_dir());
    const char *argv[32] = {path};
    for (size_t i = 0; args[i] && i < 30; i++)
        argv[i + 1] = args[i];
    pid_t self = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        tu_die_with_parent(self);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(e, 2);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    long long deadline = tu_now_ms() + 30000;
    while (samples_in(log, NULL, 0) < want) {
        cr_assert(tu_now_ms() < deadline, "the recorder wrote no %llu samples: %s",
                  (unsigned long long)want, slurp(err));
        pause_ms(10);
    }
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFSIGNALED(st));
}

Test(history, sigkill_then_damage)
{
    tu_child p;
    qp_start(&p, "Kill", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create x");
    qp_cmd(&p, "set x %d 42", QP_LEVEL);
    qp_cmd(&p, "rate x %d 1000", QP_RATE);
    char log[PATH_MAX], out[PATH_MAX], err[PATH_MAX], cut[PATH_MAX], bad[PATH_MAX];
    snprintf(log, sizeof log, "%s/kill.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    snprintf(cut, sizeof cut, "%s/cut.pcwlog", tu_root);
    snprintf(bad, sizeof bad, "%s/bad.pcwlog", tu_root);
    record_then_kill((const char *[]){"\\Kill(x)\\Level", "\\Kill(x)\\Rate", "-si", "0.02",
                                      "--flush", "0", "-f", "BIN", "-o", log, NULL},
                     log, err, 8);
    uint64_t offs[4096];
    qp_stop(&p);

    /* Whole: every sample the recorder finished is there, no error. */
    uint64_t total = samples_in(log, offs, 4096);
    cr_assert_geq(total, 8);
    cr_assert_leq(total, 4096, "offsets kept for 4096 samples only");
    const char *q_args[] = {log, "-q", NULL};
    cr_assert_eq(run_tool("pcwrelog", q_args, out, err), 0, "%s", slurp(err));
    char *listing = slurp(out);
    cr_assert(strstr(listing, "\\Kill(x)\\Level  PERF_COUNTER_LARGE_RAWCOUNT\n"), "%s", listing);
    char want[64];
    snprintf(want, sizeof want, "Samples: %llu\n", (unsigned long long)total);
    cr_assert(strstr(listing, want), "%s", listing);
    free(listing);
    const char *c_args[] = {log, NULL};
    cr_assert_eq(run_tool("pcwrelog", c_args, out, err), 0, "%s", slurp(err));
    char *csv = slurp(out);
    cr_assert_eq(count_lines(csv), total, "%s", csv); /* header + total - 1 rows */
    cr_assert(strstr(csv, "\"42.000000\""), "%s", csv);
    free(csv);

    /* Cut inside the last block: the samples before it, and its offset. */
    size_t len = 0;
    unsigned char *b = tu_read_file(log, 1 << 24, &len);
    cr_assert(b && len == offs[total - 1], "file %zu, last block ends %llu", len,
              (unsigned long long)offs[total - 1]);
    uint64_t last = offs[total - 2]; /* where the last block starts */
    cr_assert_eq(tu_write_file(cut, b, (size_t)last + 10, 0600), 0);
    cr_assert_eq(run_tool("pcwrelog", (const char *[]){cut, NULL}, out, err), 1);
    char *e = slurp(err);
    snprintf(want, sizeof want, "offset %llu", (unsigned long long)last);
    cr_assert(strstr(e, want) && strstr(e, "incomplete"), "%s", e);
    free(e);
    csv = slurp(out);
    cr_assert_eq(count_lines(csv), total - 1, "%s", csv);
    free(csv);

    /* A byte flipped inside the 4th block: three samples, then its offset. */
    b[offs[2] + PCW__HIST_BLOCK_HEADER + 1] ^= 0x40;
    cr_assert_eq(tu_write_file(bad, b, len, 0600), 0);
    cr_assert_eq(run_tool("pcwrelog", (const char *[]){bad, NULL}, out, err), 1);
    e = slurp(err);
    snprintf(want, sizeof want, "block at offset %llu: XXH3 check mismatch",
             (unsigned long long)offs[2]);
    cr_assert(strstr(e, want), "%s", e);
    free(e);
    csv = slurp(out);
    cr_assert_eq(count_lines(csv), 3, "%s", csv); /* header + 2 rows of 3 samples */
    free(csv);
    free(b);
}

/* The acceptance test of issue 28: a real pcwstat prints the live CSV and
 * records the same collections (--log), and is killed with SIGKILL
 * mid-run; pcwrelog's CSV of the log is the live CSV, line for line, up to
 * the last sample the log holds (the live file may have more rows: those
 * of the block the kill cut off). */
Test(history, killed_recorder_replays_as_printed_live)
{
    tu_child p;
    qp_start(&p, "Live", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&p, "create x");
    qp_cmd(&p, "create y");
    qp_cmd(&p, "rate x %d 1000", QP_RATE);
    qp_cmd(&p, "rate y %d 300", QP_COUNT);
    qp_cmd(&p, "set x %d 1", QP_HIT);
    qp_cmd(&p, "set x %d 3", QP_HIT_BASE);
    char log[PATH_MAX], live[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(log, sizeof log, "%s/live.pcwlog", tu_root);
    snprintf(live, sizeof live, "%s/live.csv", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    record_then_kill((const char *[]){"\\Live(*)\\*", "-si", "0.02", "--flush", "0.1", "-f", "CSV",
                                      "-o", live, "--log", log, NULL},
                     log, err, 12);
    qp_stop(&p);
    uint64_t samples = samples_in(log, NULL, 0);
    cr_assert_eq(run_tool("pcwrelog", (const char *[]){log, "-f", "CSV", NULL}, out, err), 0, "%s",
                 slurp(err));
    char *a = slurp(live), *b = slurp(out);
    size_t rows = count_lines(b);
    cr_assert_eq(rows, samples, "%s", b); /* the header, and every sample but the first */
    cr_assert_geq(count_lines(a), rows);  /* (rows of the block the kill cut off) */
    cr_assert(strncmp(a, b, strlen(b)) == 0, "pcwrelog:\n%s\nlive:\n%s", b, a);
    cr_assert(strstr(a, "\"33.333333\""), "no Hit Ratio:\n%s", a);
    free(a);
    free(b);
}

/* A block spans --flush (10 s by default): a short run is one block, and
 * smaller than the same samples one block each (--flush 0), whose values
 * are all written whole. */
Test(history, blocks_span_the_flush_time)
{
    tu_child p;
    qp_start(&p, "Flush", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create x");
    qp_cmd(&p, "rate x %d 1000", QP_RATE);
    char a[PATH_MAX], b[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(a, sizeof a, "%s/a.pcwlog", tu_root);
    snprintf(b, sizeof b, "%s/b.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    const char *one[] = {"\\Flush(x)\\*", "-sc", "6", "-si", "0.02", "-f", "BIN", "-o", a, NULL};
    const char *each[] = {"\\Flush(x)\\*", "-sc", "6", "-si", "0.02", "--flush", "0", "-f",
                          "BIN",           "-o",  b,   NULL};
    cr_assert_eq(run_tool("pcwstat", one, out, err), 0, "%s", slurp(err));
    cr_assert_eq(run_tool("pcwstat", each, out, err), 0, "%s", slurp(err));
    const char *bad[] = {"\\Flush(x)\\*", "--flush", "-1", "-f", "BIN", "-o", b, NULL};
    cr_assert_eq(run_tool("pcwstat", bad, out, err), 2);
    qp_stop(&p);
    cr_assert_eq(run_tool("pcwrelog", (const char *[]){a, "-q", NULL}, out, err), 0);
    char *q = slurp(out);
    cr_assert(strstr(q, ", 1 block, ") && strstr(q, "Samples: 7\n"), "%s", q);
    free(q);
    cr_assert_eq(run_tool("pcwrelog", (const char *[]){b, "-q", NULL}, out, err), 0);
    q = slurp(out);
    cr_assert(strstr(q, ", 7 blocks, ") && strstr(q, "Samples: 7\n"), "%s", q);
    free(q);
    struct stat sa, sb;
    cr_assert(stat(a, &sa) == 0 && stat(b, &sb) == 0);
    cr_assert_lt(sa.st_size, sb.st_size);
}

/* ---- full disk ------------------------------------------------------------------ */

Test(history, full_disk_is_a_clear_error)
{
    tu_child p;
    qp_start(&p, "Full", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create x");
    char out[PATH_MAX], err[PATH_MAX];
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    const char *args[] = {"\\Full(x)\\Level", "-sc", "2", "-si", "0.01", "-f", "BIN", "-o",
                          "/dev/full",        "-y",  NULL};
    cr_assert_eq(run_tool("pcwstat", args, out, err), 1);
    char *e = slurp(err);
    cr_assert(strstr(e, "/dev/full: No space left on device"), "%s", e);
    free(e);
    qp_stop(&p);
}

/* The file size limit hit in the middle of a block (EFBIG, as ENOSPC would
 * be): the writer reports it and cuts the partial block off, so the log
 * reads to its end, cleanly, with every block written before. */
Test(history, short_write_leaves_no_partial_block)
{
    char log[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/limit.pcwlog", tu_root);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {6000, 6000};
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\S\\C", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_COUNTER_LARGE_RAWCOUNT};
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
    int rc = 0;
    uint64_t blocks = 0;
    for (int i = 0; i < 10000 && rc == 0; i++) {
        pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID}};
        for (int k = 0; k < 20 && rc == 0; k++) {
            /* values that do not compress: blocks of some hundred bytes */
            v.raw.first = (uint64_t)rand() * 2654435761u;
            rc = pcw__hist_writer_sample(w, 1000 + (uint64_t)(i * 20 + k), 2000, &v, 1);
        }
        blocks = pcw__hist_writer_blocks(w);
        if (rc == 0)
            rc = pcw__hist_writer_flush(w, why, sizeof why);
    }
    cr_assert_eq(rc, -1);
    cr_assert(strstr(why, "File too large") && strstr(why, "complete up to byte"), "%s", why);
    pcw__hist_writer_close(w, NULL, 0);
    rl.rlim_cur = rl.rlim_max;
    struct stat st;
    cr_assert_eq(stat(log, &st), 0);
    cr_assert_leq(st.st_size, 6000);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real, n = 0;
    const pcw__hist_value *v;
    size_t nv;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why)) == 1)
        n++;
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(pcw__hist_reader_blocks(r), blocks);
    cr_assert_eq(n, blocks * 20);
    cr_assert_eq(pcw__hist_reader_offset(r), (uint64_t)st.st_size);
    pcw__hist_reader_close(r);
}

/* A block that compresses more than a reader accepts (PCW__HIST_MAX_RATIO: a
 * constant counter, sampled often) is written uncompressed instead, and
 * reads back: the writer never writes what its reader refuses. */
Test(history, very_compressible_block_reads_back)
{
    char log[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/flat.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S\\Flat", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_COUNTER_LARGE_RAWCOUNT};
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
    pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID, .first = 5}};
    for (uint64_t k = 0; k < 200000; k++)
        cr_assert_eq(pcw__hist_writer_sample(w, k * 1000, k * 1000, &v, 1), 0);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real, n = 0;
    const pcw__hist_value *got;
    size_t nv;
    int rc;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &got, &nv, why, sizeof why)) == 1) {
        cr_assert_eq(got[0].raw.first, 5);
        cr_assert_eq(mono, n * 1000);
        n++;
    }
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(n, 200000);
    pcw__hist_reader_close(r);
}

/* A log of one histogram series of 8192 buckets (2 + 8192 words), `samples`
 * samples and no flush but the close's: each bucket grows by 1..5 a sample
 * when `busy`, else none does. Returns the blocks the writer had ended
 * before the close; the close must succeed. */
static uint64_t wide_histogram_log(const char *log, int samples, int busy)
{
    char why[512];
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(i)\\Latency:p99", PCW__HIST_KIND_RAW), 0);
    pcw__hist_series id = {.type = PERF_PCW_HISTOGRAM, .hshape = 0x20000010, .instance_id = 1};
    id.hstat.kind = PCW_HSTAT_QUANTILE, id.hstat.q = 0.99;
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
    uint32_t n = 2 + pcw_hist_nbuckets(id.hshape);
    cr_assert_eq(n, 8194);
    uint64_t *words = calloc(n, sizeof *words);
    for (int k = 0; k < samples; k++) {
        for (uint32_t j = 2; j < n && busy; j++)
            words[j] += 1 + (j * 7 + (uint32_t)k) % 5;
        words[0] += 1000;
        pcw__hist_value v = {
            .raw = {.status = PCW_CSTATUS_VALID, .time_ns = (uint64_t)k}, .hwords = words, .hn = n};
        cr_assert_eq(pcw__hist_writer_sample(w, (uint64_t)k + 1, (uint64_t)k + 1, &v, 1), 0);
    }
    uint64_t blocks = pcw__hist_writer_blocks(w);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    /* It reads back whole, the last sample's words as written. */
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *got;
    size_t nv;
    int rc, read = 0;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &got, &nv, why, sizeof why)) == 1) {
        cr_assert_eq(mono, (uint64_t)++read);
        cr_assert_eq(got[0].hn, n);
    }
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(read, samples);
    cr_assert_eq(memcmp(got[0].hwords, words, n * sizeof *words), 0);
    pcw__hist_reader_close(r);
    free(words);
    return blocks;
}

/* Wide histograms, busy: a sample takes ~16 KB, so a block of 1100 (a
 * recorder flushing on time, a relog's block) would be beyond what a
 * reader accepts (PCW__HIST_BLOCK_MAX_RAW): the writer ends the block
 * before a sample that would not fit. */
Test(history, wide_histograms_end_blocks_by_size)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/wide.pcwlog", tu_root);
    cr_assert_geq(wide_histogram_log(log, 1100, 1), 1);
}

/* Idle, the same histograms cost a few bytes a sample but 8194 words a
 * reader decodes: the writer ends the block before its samples' words
 * reach PCW__HIST_MAX_BLOCK_WORDS. */
Test(history, wide_histograms_end_blocks_by_words)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/idle.pcwlog", tu_root);
    uint64_t per_block = PCW__HIST_MAX_BLOCK_WORDS / 8194, samples = per_block + 100;
    cr_assert_eq(wide_histogram_log(log, (int)samples, 0), 1);
}

/* ---- hostile input ---------------------------------------------------------------- */

static int read_all(const unsigned char *b, size_t len, char *why, size_t cap)
{
    pcw__hist_reader *r;
    if (pcw__hist_reader_open_mem(&r, b, len, why, cap))
        return -2;
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t n;
    int rc;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &n, why, cap)) == 1)
        ;
    pcw__hist_reader_close(r);
    return rc;
}

Test(history, hostile_headers)
{
    unsigned char b[PCW__HIST_FILE_HEADER + PCW__HIST_BLOCK_HEADER] = {0};
    char why[256];
    cr_assert_eq(read_all(b, sizeof b, why, sizeof why), -2);
    cr_assert(strstr(why, "not a pcw log"), "%s", why);
    memcpy(b, PCW__HIST_MAGIC, 8);
    pcw__hist_put_le32(b + 8, PCW__HIST_VERSION + 1);
    cr_assert_eq(read_all(b, sizeof b, why, sizeof why), -2);
    cr_assert(strstr(why, "version 4, this reader knows versions 1 to 3"), "%s", why);
    pcw__hist_put_le32(b + 8, 0);
    cr_assert_eq(read_all(b, sizeof b, why, sizeof why), -2);
    cr_assert(strstr(why, "version 0"), "%s", why);
    pcw__hist_put_le32(b + 8, PCW__HIST_VERSION);
    cr_assert_eq(read_all(b, PCW__HIST_FILE_HEADER, why, sizeof why), 0); /* empty log */
    unsigned char *h = b + PCW__HIST_FILE_HEADER;
    pcw__hist_put_le32(h, PCW__HIST_BLOCK_MAGIC);
    pcw__hist_put_le32(h + 4, 100);                     /* stored */
    pcw__hist_put_le32(h + 8, PCW__HIST_BLOCK_MAX_RAW); /* a zstd bomb's claim */
    pcw__hist_put_le32(h + 12, PCW__HIST_BLOCK_ZSTD);
    cr_assert_eq(read_all(b, sizeof b, why, sizeof why), -1);
    cr_assert(strstr(why, "block at offset 16: bad lengths"), "%s", why);
    pcw__hist_put_le32(h + 8, 100);
    pcw__hist_put_le64(h + 16, 5);
    cr_assert_eq(read_all(b, sizeof b, why, sizeof why), -1);
    cr_assert(strstr(why, "sequence number 5, expected 0"), "%s", why);
}

/* The fuzzer's seeds (made at build time by fuzz/history/make_seeds.c,
 * which make run-tests builds) are real logs that read to their clean end,
 * cook, and between them hold a zstd block: a seed the reader refused at
 * the header would let the fuzzer exercise nothing else. */
Test(history, fuzz_seeds_are_whole_logs)
{
    const char *names[] = {"recorded.pcwlog", "compressed.pcwlog", "rows.pcwlog"};
    int zstd = 0;
    for (size_t i = 0; i < 3; i++) {
        char path[PATH_MAX], why[512];
        snprintf(path, sizeof path, "%s/fuzz/history-seeds/%s", build_dir(), names[i]);
        size_t len = 0;
        unsigned char *b = tu_read_file(path, 1 << 20, &len);
        cr_assert(b && len > PCW__HIST_FILE_HEADER, "no seed %s (make %s/.stamp)", path, path);
        for (size_t off = PCW__HIST_FILE_HEADER; off + PCW__HIST_BLOCK_HEADER <= len;
             off += PCW__HIST_BLOCK_HEADER + pcw__hist_le32(b + off + 4))
            zstd |= (pcw__hist_le32(b + off + 12) & PCW__HIST_BLOCK_ZSTD) != 0;
        cr_assert_eq(read_all(b, len, why, sizeof why), 0, "%s: %s", names[i], why);
        pcw__hist_reader *r;
        cr_assert_eq(pcw__hist_reader_open_mem(&r, b, len, why, sizeof why), 0);
        uint64_t mono, real, n = 0;
        const pcw__hist_value *v;
        size_t nv;
        while (pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why) == 1)
            n++;
        cr_assert_geq(n, 10, "%s: %llu samples", names[i], (unsigned long long)n);
        cr_assert_geq(pcw__hist_reader_series_count(r), 2);
        pcw__hist_reader_close(r);
        free(b);
    }
    cr_assert(zstd, "no seed holds a zstd block");
}

/* pcwrelog -o NAME -y where NAME is a FIFO another user planted, with no
 * reader: the open must not block (it did: O_WRONLY|O_TRUNC on a FIFO waits
 * for a reader forever) and the error names the file. pcwstat's -o has
 * the rule (tools/common/outfile.c); pcwrelog and pcwstat --log share it. */
Test(history, planted_fifo_output_is_refused_at_once)
{
    char log[PATH_MAX], fifo[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(log, sizeof log, "%s/fuzz/history-seeds/recorded.pcwlog", build_dir());
    snprintf(fifo, sizeof fifo, "%s/planted", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    cr_assert_eq(mkfifo(fifo, 0666), 0);
    const char *args[] = {log, "-f", "CSV", "-o", fifo, "-y", NULL};
    cr_assert_neq(run_tool("pcwrelog", args, out, err), 0);
    char *e = slurp(err);
    cr_assert(strstr(e, fifo), "%s", e);
    free(e);
}

/* ---- histograms (format version 2) ------------------------------------------- */

__attribute__((format(printf, 2, 3))) static void hp_cmd(tu_child *c, const char *fmt, ...)
{
    char cmd[256], reply[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    cr_assert(tu_command(c, reply, sizeof reply, cmd) > 0, "no reply to %s", cmd);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", cmd, reply);
}

/* A histogram counter's statistics (pcwstat's columns "Latency:rate",
 * ":mean", ":p99"... of each instance and of the _Total, which merges the
 * instances' buckets) replay exactly as pcwstat printed them live: the log
 * keeps each sample's buckets. Across a steady pattern, an interval
 * without observations (no mean or quantile), a value above the range
 * (ABOVE_RANGE: the top bound is printed, for an instance and the _Total)
 * and a new instance mid-run (its first interval is no value). */
Test(history, histogram_replays_as_live)
{
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "top_hist_provider", (const char *[]){NULL}), 0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "top_hist_provider did not start");
    hp_cmd(&p, "create web");
    hp_cmd(&p, "create api");
    hp_cmd(&p, "pattern web 1500000 3 70000000 1");
    char log[PATH_MAX], live[PATH_MAX], out[PATH_MAX], err[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/hist.pcwlog", tu_root);
    snprintf(live, sizeof live, "%s/hist.csv", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);

    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    const char *paths[] = {"\\Hist Test(*)\\Latency", "\\Hist Test(*)\\Latency:count",
                           "\\Hist Test(*)\\Latency:sum", "\\Hist Test(new)\\Latency"};
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    column cols[64];
    size_t n = 0;
    for (size_t u = 0; u < 4; u++) {
        pcw_pdh_counter *user;
        cr_assert_eq(pcw_pdh_add_counter(q, paths[u], &user, NULL), PCW_OK, "%s", paths[u]);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        for (size_t i = 0; i < pcw_pdh_value_count(user) && n < 64; i++, n++) {
            char bare[4096], full[4096];
            pcw_pdh_value_path(user, i, 0, bare, sizeof bare);
            pcw_pdh_value_path(user, i, 1, full, sizeof full);
            cr_assert_eq(pcw_pdh_add_counter(q, bare, &cols[n].h, NULL), PCW_OK, "%s", bare);
            cols[n].path = strdup(full);
        }
        pcw_pdh_remove_counter(q, user);
    }
    cr_assert_geq(n, 3 * 7 + 3 * 2 + 7, "columns: %zu", n);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert(fd >= 0);
    recorder *rec = record_open(fd, log, cols, n, 50000000, why, sizeof why);
    cr_assert(rec, "%s", why);
    cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    FILE *csv = fopen(live, "w");
    cr_assert(csv);
    write_header(csv, FMT_CSV, cols, n);
    for (int s = 0; s < 16; s++) {
        if (s == 5)
            hp_cmd(&p, "pattern web"); /* an interval without observations */
        if (s == 7)
            hp_cmd(&p, "observe api 9000000000000 2"); /* 9000 s: above 2^12 s */
        if (s == 9) {
            hp_cmd(&p, "create new");
            hp_cmd(&p, "pattern new 3000 5");
        }
        pause_ms(15);
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
        write_row(csv, FMT_CSV, pcw_pdh_realtime_ns(q), cols, n, 0);
        cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(fclose(csv), 0);
    cr_assert_eq(record_finish(rec, why, sizeof why), 0, "%s", why);
    tu_send(&p, "quit");
    cr_assert_eq(tu_finish(&p, 10000), 0);

    cr_assert_eq(run_tool("pcwrelog", (const char *[]){log, "-f", "CSV", NULL}, out, err), 0,
                 "stderr: %s", slurp(err));
    char *a = slurp(live), *b = slurp(out);
    cr_assert_str_eq(b, a, "pcwrelog:\n%s\nlive:\n%s", b, a);
    /* The scenario reached what it means to compare: a top bound (4096 s)
     * and numbers beside empty fields. */
    cr_assert(strstr(a, "\"4096.000000\""), "no value above the range:\n%s", a);
    cr_assert(strstr(a, ",\"\""), "no empty field:\n%s", a);
    free(a);
    free(b);
    for (size_t i = 0; i < n; i++)
        free(cols[i].path);
    pcw_pdh_close(q);
}

/* A version 1 log (before histograms) still reads as version 1 encoded
 * it: an identity of a histogram type without the shape and statistic,
 * a histogram value without words, a computed ABOVE_RANGE without a
 * number. Read as version 2, the same bytes are damaged. */
static size_t v1_log(unsigned char *b, uint32_t version)
{
    unsigned char pay[256];
    size_t n = 0;
    const uint64_t recs[] = {
        PCW__HIST_REC_SERIES,           0, PCW__HIST_KIND_RAW,      4,
        /* path */ PCW__HIST_REC_IDENT, 0, PERF_PCW_HISTOGRAM,      0, 7, 1, 2, 0,
        PCW__HIST_REC_SERIES,           1, PCW__HIST_KIND_COMPUTED, 4};
    for (size_t i = 0; i < sizeof recs / sizeof *recs; i++) {
        n += pcw__hist_put_varint(pay + n, recs[i]);
        if (i == 3 || i == 15)
            memcpy(pay + n, "\\S\\C", 4), n += 4;
    }
    for (int s = 0; s < 2; s++) { /* two samples: the raw value VALID, then ABOVE_RANGE */
        const uint64_t smp[] = {PCW__HIST_REC_SAMPLE, s ? 2 : 1000, 0, 2, 0, 0, 0, 0, 0, 0, 12};
        for (size_t i = 0; i < sizeof smp / sizeof *smp; i++)
            n += pcw__hist_put_varint(pay + n, smp[i]);
    }
    memcpy(b, PCW__HIST_MAGIC, 8);
    pcw__hist_put_le32(b + 8, version);
    pcw__hist_put_le32(b + 12, 0);
    unsigned char *h = b + PCW__HIST_FILE_HEADER;
    memset(h, 0, PCW__HIST_BLOCK_HEADER);
    pcw__hist_put_le32(h, PCW__HIST_BLOCK_MAGIC);
    pcw__hist_put_le32(h + 4, (uint32_t)n);
    pcw__hist_put_le32(h + 8, (uint32_t)n);
    memcpy(h + PCW__HIST_BLOCK_HEADER, pay, n);
    pcw__hist_put_le32(h + 24, pcw__hist_block_check(version, h, pay, n));
    return PCW__HIST_FILE_HEADER + PCW__HIST_BLOCK_HEADER + n;
}

Test(history, version1_logs_still_read)
{
    unsigned char b[512];
    char why[256];
    size_t len = v1_log(b, 1);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open_mem(&r, b, len, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_reader_version(r), 1);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    int rc, samples = 0;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why)) == 1) {
        samples++;
        cr_assert_eq(nv, 2);
        cr_assert_eq(v[0].raw.status, PCW_CSTATUS_VALID);
        cr_assert_eq(v[0].hn, 0);
        cr_assert_eq(v[1].raw.status, PCW_CSTATUS_ABOVE_RANGE);
        double x;
        cr_assert_eq(pcw__hist_cook(pcw__hist_reader_series(r, 1), &v[1], NULL, 0, &x),
                     PCW_CSTATUS_ABOVE_RANGE);
    }
    cr_assert_eq(rc, 0, "%s", why);
    cr_assert_eq(samples, 2);
    cr_assert_eq(pcw__hist_reader_series(r, 0)->hshape, 0);
    pcw__hist_reader_close(r);
    /* The same bytes claiming version 2: the identity lacks its shape. */
    len = v1_log(b, 2);
    cr_assert_eq(pcw__hist_reader_open_mem(&r, b, len, why, sizeof why), 0, "%s", why);
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why)) == 1)
        ;
    cr_assert_eq(rc, -1);
    cr_assert(strstr(why, "block at offset 16"), "%s", why);
    pcw__hist_reader_close(r);
}

/* pcwrelog -q names each log's own format version, not the one it writes. */
Test(history, version1_log_listed_as_version1)
{
    unsigned char b[512];
    char log[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(log, sizeof log, "%s/v1.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    size_t len = v1_log(b, 1);
    cr_assert_eq(tu_write_file(log, b, len, 0600), 0);
    cr_assert_eq(run_tool("pcwrelog", (const char *[]){log, "-q", NULL}, out, err), 0, "%s",
                 slurp(err));
    char *o = slurp(out);
    cr_assert(strstr(o, "\nFormat: pcw log version 1, 1 block, "), "%s", o);
    free(o);
}

/* ---- the recorder for days: rotation, new instances ---------------------------- */

/* Every sample of a log: its count, and the real times of the first and
 * last into *first, *last (0 when none); -1 if it does not read to a clean
 * end. */
static long log_samples(const char *log, uint64_t *first, uint64_t *last)
{
    pcw__hist_reader *r;
    char why[256];
    *first = *last = 0;
    if (pcw__hist_reader_open(&r, log, why, sizeof why))
        return -1;
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    long n = 0;
    int rc;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why)) == 1) {
        if (!n++)
            *first = real;
        *last = real;
    }
    pcw__hist_reader_close(r);
    return rc == 0 ? n : -1;
}

/* --max-size rotates: FILE, FILE.1, FILE.2 (--max-files 3) are each a
 * whole log no longer than the size and one block; the oldest is gone
 * (no FILE.3); each file's first sample is the previous file's last (it
 * primes the rates), so pcwrelog's rows of FILE.2, FILE.1 and FILE follow
 * on without a gap or a repeat, and the first row of a file has its rate. */
Test(history, rotation_keeps_max_files_that_follow_on)
{
    tu_child p;
    qp_start(&p, "Rot", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create x");
    qp_cmd(&p, "rate x %d 1000", QP_RATE);
    char log[PATH_MAX], name[PATH_MAX + 8], out[PATH_MAX], err[PATH_MAX];
    snprintf(log, sizeof log, "%s/rot.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    const char *args[] = {"\\Rot(x)\\*", "-sc",         "150", "-si", "0.005", "--flush",
                          "0",           "-f",          "BIN", "-o",  log,     "--max-size",
                          "4096",        "--max-files", "3",   NULL};
    cr_assert_eq(run_tool("pcwstat", args, out, err), 0, "%s", slurp(err));
    long total = 0;
    uint64_t prev_last = 0;
    for (int k = 2; k >= 0; k--) {
        if (k)
            snprintf(name, sizeof name, "%s.%d", log, k);
        else
            snprintf(name, sizeof name, "%s", log);
        struct stat st;
        cr_assert_eq(stat(name, &st), 0, "%s: %s", name, strerror(errno));
        cr_assert_leq(st.st_size, 4096 + 512, "%s: %lld bytes", name, (long long)st.st_size);
        uint64_t first, last;
        long n = log_samples(name, &first, &last);
        cr_assert_gt(n, 1, "%s", name);
        if (prev_last)
            cr_assert_eq(first, prev_last, "%s does not start with the last sample before it",
                         name);
        prev_last = last;
        total += n - 1;
        /* Its rows: the first one has a rate (primed by the repeated sample). */
        cr_assert_eq(run_tool("pcwrelog", (const char *[]){name, "-f", "CSV", NULL}, out, err), 0,
                     "%s", slurp(err));
        char *csv = slurp(out);
        cr_assert_eq(count_lines(csv), (size_t)n, "%s", csv);
        char *row = strchr(csv, '\n') + 1;
        cr_assert(strncmp(strchr(row, ',') + 1, "\"\"", 2) != 0, "no first rate: %s", row);
        free(csv);
    }
    snprintf(name, sizeof name, "%s.3", log);
    cr_assert_neq(access(name, F_OK), 0, "%s kept beyond --max-files", name);
    cr_assert_leq(total, 150);
    cr_assert_gt(total, 30, "the three files hold %ld rows", total);
    /* Started again (no -y): the previous run's file is kept as FILE.1. */
    uint64_t was_first, was_last, first, last;
    cr_assert_gt(log_samples(log, &was_first, &was_last), 1);
    const char *again[] = {"\\Rot(x)\\*", "-sc", "2",          "-si",  "0.005",       "-f", "BIN",
                           "-o",          log,   "--max-size", "4096", "--max-files", "3",  NULL};
    cr_assert_eq(run_tool("pcwstat", again, out, err), 0, "%s", slurp(err));
    snprintf(name, sizeof name, "%s.1", log);
    cr_assert_gt(log_samples(name, &first, &last), 1);
    cr_assert_eq(first, was_first, "the previous run's log is not %s", name);
    cr_assert_eq(log_samples(log, &first, &last), 3);
    qp_stop(&p);
    /* Bad values are usage errors. */
    const char *bad1[] = {"\\Rot(x)\\*", "-f", "BIN", "-o", log, "--max-size", "1x", NULL};
    cr_assert_eq(run_tool("pcwstat", bad1, out, err), 2);
    const char *bad2[] = {"\\Rot(x)\\*", "-f", "BIN",         "-o", log,
                          "--max-size",  "1M", "--max-files", "1",  NULL};
    cr_assert_eq(run_tool("pcwstat", bad2, out, err), 2);
    const char *bad3[] = {"\\Rot(x)\\*", "--max-size", "1M", NULL};
    cr_assert_eq(run_tool("pcwstat", bad3, out, err), 2);
    char *e = slurp(err);
    cr_assert(strstr(e, "--max-size rotates a log"), "%s", e);
    free(e);
}

/* -f BIN re-expands the wildcards every sample: an instance that appears
 * after the start becomes a series of the log from then on (the format
 * defines series anywhere); the samples before hold no value of it. The
 * recorder starts with nothing to record yet (the service's case at boot:
 * a counterset wildcard, no instance), which is not an error for -f BIN.
 * A real pcwstat, the log polled (with a deadline) as the synchronisation. */
Test(history, new_instances_become_series)
{
    tu_child p;
    qp_start(&p, "Grow", PCW_MULTI_INSTANCE, NULL);
    char log[PATH_MAX], err[PATH_MAX], path[PATH_MAX];
    snprintf(log, sizeof log, "%s/grow.pcwlog", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    snprintf(path, sizeof path, "%s/pcwstat", build_dir());
    pid_t self = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        tu_die_with_parent(self);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(e, 2);
        execl(path, path, "\\*(*)\\Level", "-si", "0.02", "-sc", "3000", "--flush", "0", "-f",
              "BIN", "-o", log, (char *)NULL);
        _exit(127);
    }
    long long deadline = tu_now_ms() + 30000;
    while (samples_in(log, NULL, 0) < 3) {
        cr_assert(tu_now_ms() < deadline, "no samples: %s", slurp(err));
        pause_ms(10);
    }
    qp_cmd(&p, "create b");
    qp_cmd(&p, "set b %d 9", QP_LEVEL);
    /* Until the log holds a sample with b's value. */
    int seen = 0;
    while (!seen) {
        cr_assert(tu_now_ms() < deadline, "b never logged: %s", slurp(err));
        pause_ms(10);
        pcw__hist_reader *r;
        char why[256];
        if (pcw__hist_reader_open(&r, log, why, sizeof why))
            continue;
        uint64_t mono, real;
        const pcw__hist_value *v;
        size_t nv;
        int before = 0;
        while (!seen && pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why) == 1) {
            for (size_t i = 0; i < nv; i++) {
                const pcw__hist_series *s = pcw__hist_reader_series(r, i);
                if (!strstr(s->path, "\\Grow(b)\\Level"))
                    continue;
                if (v[i].raw.status == PCW_CSTATUS_VALID) {
                    cr_assert_eq(v[i].raw.first, 9);
                    seen = 1;
                }
            }
            before += !seen;
        }
        if (seen)
            cr_assert_geq(before, 3, "b's series should start after the first samples");
        pcw__hist_reader_close(r);
    }
    kill(pid, SIGTERM);
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, slurp(err));
    char *e = slurp(err);
    cr_assert(!strstr(e, "not a column"), "-f BIN logs new instances: %s", e);
    free(e);
    qp_stop(&p);
}

/* ---- a real recorder on a full disk -------------------------------------------- */

/* A real pcwstat recording into `log` until the disk (or the file size
 * limit) is full: status 1, the reason and how much of the log is
 * complete on stderr, and the log reads to a clean end exactly there -
 * never a partial block. */
static void record_until_full(const char *log, const char *reason)
{
    char out[PATH_MAX], err[PATH_MAX];
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    const char *args[] = {"\\Fill(*)\\*", "-si", "0.001", "-sc", "100000", "--flush", "0",
                          "-f",           "BIN", "-o",    log,   NULL};
    cr_assert_eq(run_tool("pcwstat", args, out, err), 1, "pcwstat did not fail: %s", slurp(err));
    char *e = slurp(err);
    cr_assert(strstr(e, reason) && strstr(e, "the log is complete up to byte"), "%s", e);
    unsigned long long complete = 0;
    cr_assert(sscanf(strstr(e, "up to byte") + 10, "%llu", &complete) == 1, "%s", e);
    free(e);
    struct stat st;
    cr_assert_eq(stat(log, &st), 0);
    cr_assert_eq((unsigned long long)st.st_size, complete, "a partial block was left behind");
    uint64_t first, last;
    cr_assert_gt(log_samples(log, &first, &last), 10, "the log does not read to a clean end");
}

/* ENOSPC on a real file system: a 64 KiB tmpfs (as root; CI runs as root).
 * Not root, the same through the file size limit (EFBIG), which needs no
 * privilege: something real runs either way. */
Test(history, full_disk_real_recorder_leaves_whole_log)
{
    tu_child p;
    qp_start(&p, "Fill", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "create b");
    qp_cmd(&p, "rate a %d 1000", QP_RATE);
    char dir[PATH_MAX / 2], log[PATH_MAX];
    snprintf(log, sizeof log, "%s/limit.pcwlog", tu_root);
    /* The file size limit, inherited by pcwstat (SIGXFSZ ignored: EFBIG). */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, rl = {8192, 8192};
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    rl.rlim_max = old.rlim_max;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    record_until_full(log, "File too large");
    rl.rlim_cur = old.rlim_cur;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
    if (geteuid() == 0) {
        snprintf(dir, sizeof dir, "%s/small", tu_root);
        cr_assert_eq(mkdir(dir, 0700), 0);
        cr_assert_eq(mount("tmpfs", dir, "tmpfs", 0, "size=64k"), 0, "mount: %s", strerror(errno));
        snprintf(log, sizeof log, "%s/full.pcwlog", dir);
        record_until_full(log, "No space left on device");
        cr_assert_eq(umount(dir), 0, "umount: %s", strerror(errno));
    } else {
        cr_log_info("not root: the tmpfs part (ENOSPC) needs root");
    }
    qp_stop(&p);
}

/* A histogram total's logged number is hostile input like the rest: an
 * infinite or NaN top bound (ABOVE_RANGE) or statistic is no number
 * (OVERFLOW, as the query's own finishing step says), never handed on. */
Test(history, histogram_total_nonfinite_is_no_number)
{
    char log[PATH_MAX], why[512];
    snprintf(log, sizeof log, "%s/inf.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL, 0600);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\S(_Total)\\H:max", PCW__HIST_KIND_COMPUTED), 0);
    cr_assert_eq(pcw__hist_writer_series(w, 1, "\\S(_Total)\\H:mean", PCW__HIST_KIND_COMPUTED), 0);
    pcw__hist_series id = {.type = PERF_PCW_HISTOGRAM,
                           .hshape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12),
                           .hstat = {.kind = PCW_HSTAT_MAX}};
    cr_assert_eq(pcw__hist_writer_ident(w, 0, &id), 0);
    id.hstat.kind = PCW_HSTAT_MEAN;
    cr_assert_eq(pcw__hist_writer_ident(w, 1, &id), 0);
    pcw__hist_value v[2] = {{.raw = {.status = PCW_CSTATUS_ABOVE_RANGE}, .computed = INFINITY},
                            {.raw = {.status = PCW_CSTATUS_VALID}, .computed = NAN}};
    cr_assert_eq(pcw__hist_writer_sample(w, 1000, 2000, v, 2), 0);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *got;
    size_t n;
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &got, &n, why, sizeof why), 1, "%s", why);
    for (size_t i = 0; i < 2; i++) {
        double x = 1;
        int st = pcw__hist_cook(pcw__hist_reader_series(r, i), &got[i], NULL, 0, &x);
        cr_assert_eq(st, PCW_CSTATUS_OVERFLOW, "series %zu: status %d, value %g", i, st, x);
        cr_assert_eq(x, 0.0);
    }
    pcw__hist_reader_close(r);
}

/* ---- pcwstat's recorder, its rows compared as they are read ------------------ */

/* pcwstat's loop (record_collect, record_sample) on a group whose rows
 * change in some samples and stay in others, blocks of 4 samples: the log
 * reads back as the raw samples the live query had, sample by sample - a
 * row that changed is never taken for one that did not, in the block's
 * first samples (rows whole) and the others (compared in the read). */
Test(history, record_collect_reads_back_as_live)
{
    enum { K = 14, NI = 4, NW = 3 };
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "rows_provider", (const char *const[]){"plain", NULL}), 0);
    char line[128], why[512], log[PATH_MAX];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "provider did not start");
    for (int i = 0; i < NI; i++)
        qp_cmd(&p, "create %c", 'a' + i);
    pcw_pdh *q;
    pcw_pdh_counter *h;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Rows Test(*)\\*", &h, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    snprintf(log, sizeof log, "%s/collect.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    cr_assert_geq(fd, 0);
    recorder *rec = record_open(fd, log, NULL, 0, UINT64_MAX, why, sizeof why);
    cr_assert(rec, "%s", why);
    record_block_samples(rec, 4);
    cr_assert_eq(record_group(rec, q, h, why, sizeof why), 1, "%s", why);
    cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
    static pcw_raw want[K][NI][NW];
    for (int k = 0; k < K; k++) {
        /* Sample k changes instance k % 5 (none when 4) in word k % 3,
         * and c's last word every third sample. */
        if (k % 5 < NI)
            qp_cmd(&p, "set %c %d %d", 'a' + k % 5, k % 3, 100 + k);
        if (k % 3 == 0)
            qp_cmd(&p, "set c %d %d", NW - 1, k);
        cr_assert_eq(record_collect(rec, q, NULL), PCW_OK);
        cr_assert_eq(record_sample(rec, q, why, sizeof why), 0, "%s", why);
        for (uint32_t c = 0; c < NW; c++) {
            pcw_raw col[NI];
            cr_assert_eq(pcw_pdh_raw_column(h, c, col), PCW_OK);
            for (int i = 0; i < NI; i++)
                want[k][i][c] = col[i];
        }
    }
    cr_assert_eq(record_finish(rec, why, sizeof why), 0, "%s", why);
    pcw_pdh_close(q);
    qp_stop(&p);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t nv;
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), 1, "%s", why);
    for (int k = 0; k < K; k++) {
        cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), 1, "%s",
                     why);
        cr_assert_eq(nv, (size_t)NI * NW);
        for (size_t i = 0; i < nv; i++) {
            const pcw_raw *g = &v[i].raw, *x = &want[k][i / NW][i % NW];
            cr_assert(g->status == x->status && g->first == x->first && g->second == x->second &&
                          g->multi == x->multi && g->freq == x->freq && g->time_ns == x->time_ns,
                      "sample %d series %zu: first %llu, want %llu", k, i,
                      (unsigned long long)g->first, (unsigned long long)x->first);
        }
    }
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &nv, why, sizeof why), 0, "%s", why);
    pcw__hist_reader_close(r);
}
