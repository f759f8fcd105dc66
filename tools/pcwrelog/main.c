/* SPDX-License-Identifier: MIT */
/*
 * pcwrelog - relog for pcw: read a pcw log (`pcwstat -f BIN -o FILE`,
 * docs/history.md) and write it as typeperf's CSV or TSV, cooked exactly
 * as the live pcwstat printed it, or list what it holds (-q).
 *
 * The CSV: the header names the log's series (pcwstat's columns); the
 * log's first sample primes the rates and is not printed, as live; every
 * later sample is a row, each value cooked from the sample and the
 * series' previous one (hist_cook: pcw_cook's formulas, the previous
 * sample only when the instance is the same one).
 *
 * A damaged or incomplete block (a recorder killed mid-write, a disk
 * error, a hostile file) ends the reading: what came before it is written,
 * then an error naming the block's offset, exit status 1.
 *
 * Exit status: 0 success, 1 failure (unreadable or damaged log, output
 * error), 2 usage error.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <pcw/version.h>

#include "../../lib/history/history.h"
#include "../common/cli.h"
#include "../common/outfile.h"
#include "../common/escape.h"
#include "../common/output.h"
#include "../common/typeperf.h"

static const char usage_text[] =
    "Usage: pcwrelog FILE [-f CSV|TSV] [-o OUTPUT [-y]] [--no-scale]\n"
    "       pcwrelog FILE -q\n"
    "Convert a pcw log (written by pcwstat -f BIN -o FILE) to typeperf's CSV or TSV,\n"
    "cooked as pcwstat printed it live, or list what the log holds.\n"
    "\n"
    "  -f, --format CSV|TSV   output format (default CSV)\n"
    "  -o, --output OUTPUT    write to OUTPUT (default standard output)\n"
    "  -y, --yes              overwrite OUTPUT if it exists\n"
    "  -q, --query            list the log's counter paths, time range and samples\n"
    "      --no-scale         do not apply counters' default scale\n"
    "  -h, --help             this help\n"
    "      --version          version\n"
    "\n"
    "Exit status: 0 success, 1 failure (unreadable or damaged log, output error),\n"
    "2 usage error.\n";

typedef struct options {
    const char *file, *output;
    int tsv, yes, query, no_scale;
} options;

/* The tools' one usage error (tools/common/cli.h): what is wrong, and the
 * argument it is about. */
#define usage_error(what, arg)                                                                     \
    cli_usage_error("pcwrelog", "%s%s%s", what, (arg) ? " " : "", (arg) ? (arg) : "")

static int parse(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "-?")) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (!strcmp(a, "--version")) {
            printf("pcwrelog (pcw) %s\n", PCW_VERSION_STRING);
            exit(0);
        } else if (!strcmp(a, "-f") || !strcmp(a, "--format")) {
            if (++i >= argc)
                return usage_error("-f needs CSV or TSV", NULL);
            if (!strcasecmp(argv[i], "csv"))
                o->tsv = 0;
            else if (!strcasecmp(argv[i], "tsv"))
                o->tsv = 1;
            else
                return usage_error("unsupported format (CSV or TSV):", argv[i]);
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (++i >= argc)
                return usage_error("-o needs a file name", NULL);
            o->output = argv[i];
        } else if (!strcmp(a, "-y") || !strcmp(a, "--yes")) {
            o->yes = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--query")) {
            o->query = 1;
        } else if (!strcmp(a, "--no-scale")) {
            o->no_scale = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option", a);
        } else if (o->file) {
            return usage_error("one log at a time; extra argument", a);
        } else {
            o->file = a;
        }
    }
    if (!o->file)
        return usage_error("no log file given", NULL);
    return 0;
}

/* -o: a new file, or overwritten only as tools/common/outfile.h allows. */
static FILE *open_output(const options *o)
{
    if (!o->output)
        return stdout;
    int fd = outfile_open("pcwrelog", o->output, o->yes);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f) {
        fprintf(stderr, "pcwrelog: %s: %s\n", o->output, strerror(errno));
        close(fd);
    }
    return f;
}

/* A path from the log for the terminal or a file: hostile bytes escaped. */
static void put_name(FILE *f, const char *s)
{
    if (esc_is_tty(f))
        esc_put(f, s, strlen(s), ESC_BACKSLASH_LITERAL);
    else
        fputs(s, f);
}

static int list(hist_reader *r, FILE *out, const char *file)
{
    uint64_t mono, real, first_real = 0, last_real = 0, samples = 0;
    const hist_value *v;
    size_t n;
    char why[512], a[64], b[64];
    int rc;
    while ((rc = hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why)) == 1) {
        if (!samples++)
            first_real = real;
        last_real = real;
    }
    fputs("Log: ", out);
    put_name(out, file);
    uint64_t blocks = hist_reader_blocks(r);
    fprintf(out, "\nFormat: pcw log version %u, %llu block%s, %llu bytes read\n", HIST_VERSION,
            (unsigned long long)blocks, blocks == 1 ? "" : "s",
            (unsigned long long)hist_reader_offset(r));
    typeperf_time(first_real, a, sizeof a);
    typeperf_time(last_real, b, sizeof b);
    if (samples)
        fprintf(out, "Begin: %s\nEnd: %s\n", a, b);
    fprintf(out, "Samples: %llu\nCounters: %zu\n", (unsigned long long)samples,
            hist_reader_series_count(r));
    for (size_t i = 0; i < hist_reader_series_count(r); i++) {
        const hist_series *s = hist_reader_series(r, i);
        const char *t = pcw_counter_type_name(s->type);
        put_name(out, s->path);
        fprintf(out, "  %s\n", s->kind == HIST_KIND_COMPUTED ? "(computed)" : t ? t : "");
    }
    if (rc < 0)
        fprintf(stderr, "pcwrelog: %s: %s\n", file, why);
    return rc < 0;
}

static int convert(hist_reader *r, FILE *out, const options *o)
{
    char why[512], ts[64], sep = o->tsv ? '\t' : ',';
    unsigned flags = o->no_scale ? PCW_FMT_NOSCALE : 0;
    uint64_t mono, real, samples = 0;
    const hist_value *v;
    size_t n, ncols = 0;
    hist_value *prev = NULL;
    uint64_t *epoch = NULL;
    int rc;
    while ((rc = hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why)) == 1) {
        if (samples++ == 0) {
            /* The columns are the series of the first sample (pcwstat's). */
            ncols = n;
            prev = calloc(ncols ? ncols : 1, sizeof *prev);
            epoch = calloc(ncols ? ncols : 1, sizeof *epoch);
            if (!prev || !epoch) {
                snprintf(why, sizeof why, "out of memory");
                rc = -1;
                break;
            }
            int tty = esc_is_tty(out);
            typeperf_field(out, o->tsv ? "(PDH-TSV 4.0)" : "(PDH-CSV 4.0)", tty);
            for (size_t i = 0; i < ncols; i++) {
                fputc(sep, out);
                typeperf_field(out, hist_reader_series(r, i)->path, tty);
            }
            fputc('\n', out);
        } else {
            typeperf_time(real, ts, sizeof ts);
            typeperf_field(out, ts, 0);
            for (size_t i = 0; i < ncols; i++) {
                const hist_series *s = hist_reader_series(r, i);
                double x;
                int st = hist_cook(s, &v[i], epoch[i] == s->epoch ? &prev[i] : NULL, flags, &x);
                fputc(sep, out);
                typeperf_value(out, st == PCW_CSTATUS_VALID, x);
            }
            fputc('\n', out);
        }
        for (size_t i = 0; i < ncols; i++) {
            prev[i] = v[i];
            epoch[i] = hist_reader_series(r, i)->epoch;
        }
        if (ferror(out))
            break;
    }
    free(prev);
    free(epoch);
    if (rc < 0)
        fprintf(stderr, "pcwrelog: %s: %s (%llu samples before it were converted)\n", o->file, why,
                (unsigned long long)samples);
    return rc < 0;
}

int main(int argc, char **argv)
{
    options o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN);
    char why[512];
    hist_reader *r;
    if (hist_reader_open(&r, o.file, why, sizeof why)) {
        fprintf(stderr, "pcwrelog: %s: %s\n", o.file, why);
        return 1;
    }
    FILE *out = open_output(&o);
    if (!out) {
        hist_reader_close(r);
        return 1;
    }
    rc = o.query ? list(r, out, o.file) : convert(r, out, &o);
    hist_reader_close(r);
    if (fflush(out) != 0 || ferror(out)) {
        out_end_if_reader_gone(errno);
        fprintf(stderr, "pcwrelog: write error: %s\n", strerror(errno));
        rc = 1;
    }
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "pcwrelog: %s: %s\n", o.output, strerror(errno));
        rc = 1;
    }
    return rc;
}
