/* SPDX-License-Identifier: MIT */
/*
 * pcwrelog - relog for pcw: read pcw logs (`pcwstat -f BIN -o FILE`,
 * docs/history.md) and write typeperf's CSV or TSV of them, cooked exactly
 * as the live pcwstat printed them, JSON lines as pcwstat -f JSON writes
 * them, or a new log; select counters (-c, -cf), cut by time (-b, -e),
 * thin (-t), join several logs; or list what the logs hold (-q).
 *
 * relog.h says which file does what. A damaged or incomplete block (a
 * recorder killed mid-write, a disk error, a hostile file) ends that log:
 * what came before it is written, then an error naming the file and the
 * block's offset, exit status 1.
 *
 * Exit status: 0 success, 1 failure (unreadable or damaged log, a path
 * that selects nothing, overlapping logs, output error), 2 usage error.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcw/version.h>

#include "../common/cli.h"
#include "../common/counterfile.h"
#include "../common/grow.h"
#include "../common/outfile.h"
#include "../common/output.h"
#include "relog.h"

static const char usage_text[] =
    "Usage: pcwrelog FILE... [-c PATH...] [-cf FILE] [-b TIME] [-e TIME] [-t N]\n"
    "                [-f CSV|TSV|JSON|BIN] [-o OUTPUT [-y]] [--no-scale]\n"
    "       pcwrelog FILE... -q [-c PATH...] [-cf FILE]\n"
    "Convert pcw logs (written by pcwstat -f BIN -o FILE) to typeperf's CSV or TSV,\n"
    "cooked as pcwstat printed them live, to JSON lines or to a new log; or list\n"
    "what the logs hold. Several logs are joined in time order.\n"
    "\n"
    "  -c, --counters PATH...   only these counter paths ('*' and '?' match any name;\n"
    "                           the arguments up to the next option)\n"
    "  -cf, --counter-file FILE counter paths, one per line ('#' starts a comment)\n"
    "  -b, --begin TIME         rows from TIME on: M/d/yyyy hh:mm:ss[AM|PM] or\n"
    "                           yyyy-mm-ddThh:mm:ss[Z|+hh:mm] (local time unless a zone)\n"
    "  -e, --end TIME           rows up to TIME (the same forms)\n"
    "  -t, --thin N             every N-th sample, rates over the N intervals\n"
    "  -f, --format CSV|TSV|JSON|BIN  output format (default CSV; BIN needs -o)\n"
    "  -o, --output OUTPUT      write to OUTPUT (default standard output)\n"
    "  -y, --yes                overwrite OUTPUT if it exists\n"
    "  -q, --query              list the logs: time ranges, samples, blocks, paths\n"
    "      --no-scale           do not apply counters' default scale\n"
    "  -h, --help               this help\n"
    "      --version            version\n"
    "\n"
    "Exit status: 0 success, 1 failure (unreadable or damaged log, a path that\n"
    "selects nothing, overlapping logs, output error), 2 usage error.\n";

/* The tools' one usage error (tools/common/cli.h): what is wrong, and the
 * argument it is about. */
#define usage_error(what, arg)                                                                     \
    cli_usage_error("pcwrelog", "%s%s%s", what, (arg) ? " " : "", (arg) ? (arg) : "")

static int add_pattern(void *arg, char *path)
{
    relog_opts *o = arg;
    if (grow(&o->patterns, &o->patterns_cap, o->npatterns + 1, sizeof *o->patterns)) {
        free(path);
        return -1;
    }
    o->patterns[o->npatterns++] = path;
    return 0;
}

static int is(const char *a, const char *dash, const char *gnu)
{
    return (dash && strcmp(a, dash) == 0) || (gnu && strcmp(a, gnu) == 0);
}

/* -t N: a whole number of samples, 1 or more. */
static int parse_thin(const char *s, uint64_t *n)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *s == '+' || *end || errno || v == 0)
        return -1;
    *n = v;
    return 0;
}

/* -b's start, or (end) -e's end: the last nanosecond of the last unit
 * written, so that "-e 03:13" keeps 03:13:59 and a row's time as the CSV
 * shows it (milliseconds) keeps that row. */
static int parse_time(const char *opt, const char *v, int end, uint64_t *ns)
{
    uint64_t unit;
    if (timearg_parse(v, ns, &unit) == 0) {
        if (end)
            *ns += unit - 1;
        return 0;
    }
    fprintf(stderr,
            "pcwrelog: bad time \"%s\" for %s (expected M/d/yyyy hh:mm:ss[AM|PM] or "
            "yyyy-mm-ddThh:mm:ss, local time; or with Z or +hh:mm)\nTry 'pcwrelog --help'.\n",
            v, opt);
    return 2;
}

static int parse(int argc, char **argv, relog_opts *o)
{
    int in_c = 0, only_files = 0, given_f = 0;
    o->thin = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_files || a[0] != '-' || !a[1]) {
            if (in_c) {
                char *p = strdup(a);
                if (!p || add_pattern(o, p))
                    return usage_error("out of memory", NULL);
            } else if (grow(&o->files, &o->files_cap, o->nfiles + 1, sizeof *o->files)) {
                return usage_error("out of memory", NULL);
            } else {
                o->files[o->nfiles++] = a;
            }
            continue;
        }
        in_c = 0;
        if (strcmp(a, "--") == 0) {
            only_files = 1;
            continue;
        }
        /* "--name=value" for the GNU spellings. */
        char name[64];
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL, *v = NULL;
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        if (eq)
            v = eq + 1;
#define VALUE(what)                                                                                \
    do {                                                                                           \
        if (!v && i + 1 < argc)                                                                    \
            v = argv[++i];                                                                         \
        if (!v)                                                                                    \
            return usage_error(name, "needs " what);                                               \
    } while (0)
        if (is(name, "-h", "--help") || strcmp(name, "-?") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (is(name, NULL, "--version")) {
            printf("pcwrelog (pcw) %s\n", PCW_VERSION_STRING);
            exit(0);
        } else if (is(name, "-c", "--counters")) {
            if (v) {
                char *p = strdup(v);
                if (!p || add_pattern(o, p))
                    return usage_error("out of memory", NULL);
            } else if (i + 1 >= argc || argv[i + 1][0] == '-') {
                return usage_error(name, "needs a counter path");
            }
            in_c = 1;
        } else if (is(name, "-cf", "--counter-file")) {
            VALUE("a file name");
            if (counterfile_read("pcwrelog", v, add_pattern, o))
                return 1;
        } else if (is(name, "-b", "--begin")) {
            VALUE("a time");
            if (parse_time(name, v, 0, &o->begin_ns))
                return 2;
            o->has_begin = 1;
        } else if (is(name, "-e", "--end")) {
            VALUE("a time");
            if (parse_time(name, v, 1, &o->end_ns))
                return 2;
            o->has_end = 1;
        } else if (is(name, "-t", "--thin")) {
            VALUE("a number");
            if (parse_thin(v, &o->thin)) {
                fprintf(stderr,
                        "pcwrelog: bad %s \"%s\" (expected a whole number of samples, 1 or "
                        "more)\nTry 'pcwrelog --help'.\n",
                        name, v);
                return 2;
            }
        } else if (is(name, "-f", "--format")) {
            VALUE("CSV, TSV, JSON or BIN");
            given_f = 1;
            if (!strcasecmp(v, "csv"))
                o->format = OUT_CSV;
            else if (!strcasecmp(v, "tsv"))
                o->format = OUT_TSV;
            else if (!strcasecmp(v, "json"))
                o->format = OUT_JSON;
            else if (!strcasecmp(v, "bin"))
                o->format = OUT_BIN;
            else
                return usage_error("unsupported format (CSV, TSV, JSON or BIN):", v);
        } else if (is(name, "-o", "--output")) {
            VALUE("a file name");
            o->output = v;
        } else if (is(name, "-y", "--yes")) {
            o->yes = 1;
        } else if (is(name, "-q", "--query")) {
            o->query = 1;
        } else if (is(name, NULL, "--no-scale")) {
            o->no_scale = 1;
        } else {
            return usage_error("unknown option", a);
        }
#undef VALUE
    }
    if (!o->nfiles)
        return usage_error(o->npatterns ? "no log file given (-c takes every argument up to the "
                                          "next option: give the logs before it)"
                                        : "no log file given",
                           NULL);
    if (o->query && (given_f || o->has_begin || o->has_end || o->thin != 1))
        return usage_error("-q lists the logs whole: -f, -b, -e and -t do not apply to it", NULL);
    if (o->format == OUT_BIN && !o->output)
        return usage_error("-f BIN writes a log file: give it with -o OUTPUT", NULL);
    if (o->has_begin && o->has_end && o->begin_ns > o->end_ns)
        return usage_error("-b is after -e", NULL);
    return 0;
}

/* -o: a new file, or overwritten only as tools/common/outfile.h allows. */
static FILE *open_output(const relog_opts *o)
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

/* -o naming one of the logs (by any spelling or link) would truncate it
 * before it is converted: refuse it while nothing is written. (A file
 * that appears between this check and the open is outfile_open's: it
 * takes no existing file without -y.) */
static int output_is_input(const relog_opts *o)
{
    struct stat so, si;
    if (!o->output || stat(o->output, &so) != 0 || !S_ISREG(so.st_mode))
        return 0;
    for (size_t i = 0; i < o->nfiles; i++)
        if (stat(o->files[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
            fprintf(stderr, "pcwrelog: %s: the output is also a log it reads (%s)\n", o->output,
                    o->files[i]);
            return 1;
        }
    return 0;
}

static int run_relog(relog_opts *o)
{
    relog_run run = {.o = o};
    run.logs = calloc(o->nfiles, sizeof *run.logs);
    if (!run.logs) {
        fprintf(stderr, "pcwrelog: out of memory\n");
        return 1;
    }
    run.nlogs = o->nfiles;
    for (size_t i = 0; i < o->nfiles; i++)
        run.logs[i].file = o->files[i];
    int rc = output_is_input(o) ? 1 : inputs_scan(&run);
    if (rc == 0)
        rc = select_columns(&run);
    FILE *out = rc == 0 ? open_output(o) : NULL;
    if (rc == 0 && !out)
        rc = 1;
    if (rc == 0)
        rc = o->query ? list_logs(&run, out) : convert_run(&run, out);
    if (out && (fflush(out) != 0 || ferror(out))) {
        out_end_if_reader_gone(errno);
        fprintf(stderr, "pcwrelog: write error: %s\n", strerror(errno));
        rc = 1;
    }
    if (out && out != stdout && fclose(out) != 0) {
        fprintf(stderr, "pcwrelog: %s: %s\n", o->output, strerror(errno));
        rc = 1;
    }
    inputs_free(&run);
    free(run.logs);
    return rc;
}

int main(int argc, char **argv)
{
    relog_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc == 0) {
        signal(SIGPIPE, SIG_IGN);
        rc = run_relog(&o);
    }
    for (size_t i = 0; i < o.npatterns; i++)
        free(o.patterns[i]);
    free(o.patterns);
    free(o.files);
    return rc;
}
