/* SPDX-License-Identifier: MIT */
/*
 * pcwstat - typeperf for pcw: sample counter paths at an interval and
 * write typeperf's CSV or TSV (or JSON lines); list counter paths.
 *
 * main.c parses the options and runs the sampling loop; output.c writes;
 * list.c lists (-q / -qx). README.md documents usage.
 *
 * As typeperf, the paths given are expanded once, at start, into the CSV
 * columns; a value whose instance or provider is gone is an empty field,
 * and instances that appear later are reported on stderr (typeperf cannot
 * add them either; JSON output, which has no columns, includes them, and
 * a log, -f BIN, makes them series of their own from then on). The
 * first sample is collected at start and not printed, so that every printed
 * rate covers a whole interval.
 *
 * Exit status: 0 success, 1 failure (a bad path, an unknown counterset, no
 * provider, an output file that exists without -y), 2 usage error.
 * Ctrl-C (SIGINT) or SIGTERM ends the run after the current sample with
 * the output complete; during the set-up, at once with status 130.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/name.h"

#include "../common/cli.h"
#include "../common/counterfile.h"
#include "../common/outfile.h"
#include "../common/output.h"
#include "pcwstat.h"

#include <pcw/version.h>

static const char usage_text[] =
    "Usage: pcwstat PATH... [OPTIONS]\n"
    "       pcwstat -cf FILE [OPTIONS]\n"
    "       pcwstat -q [COUNTERSET] | -qx [COUNTERSET]\n"
    "Sample pcw performance counters as typeperf does: PATH is\n"
    "\\Counterset(Instance)\\Counter, or \\Counterset\\Counter for a counterset without\n"
    "instances; '*' and '?' match any name, #n picks among instances of one name.\n"
    "\n"
    "  -cf, --counter-file FILE   counter paths, one per line ('#' starts a comment)\n"
    "  -si, --interval [[hh:]mm:]ss  time between samples (default 1 s; ss may have\n"
    "                             a fraction)\n"
    "  -sc, --samples N           stop after N samples (default: until Ctrl-C)\n"
    "  -f,  --format CSV|TSV|JSON|BIN  output format (default CSV; JSON: one object\n"
    "                             per sample per line; BIN: a pcw log of the raw\n"
    "                             samples, needs -o; read it with pcwrelog)\n"
    "  -o,  --output FILE         write to FILE (default standard output)\n"
    "       --log LOG             also record the columns' raw samples to the pcw log\n"
    "                             LOG (with -f CSV or TSV; pcwrelog reads it)\n"
    "       --flush [[hh:]mm:]ss  a log block spans this long at most (default 10 s;\n"
    "                             0: every sample): what a killed recorder can lose\n"
    "       --max-size SIZE       rotate the log once it is SIZE bytes (K, M, G: 100M):\n"
    "                             FILE becomes FILE.1, FILE.1 FILE.2...\n"
    "       --max-files N         files a rotated log keeps, FILE with them (default 4)\n"
    "  -y,  --yes                 overwrite FILE (and LOG) without asking\n"
    "  -q,  --query [COUNTERSET]  list counter paths (no instances) and exit\n"
    "  -qx, --query-instances [COUNTERSET]  list every path with its instances and exit\n"
    "  -a,  --advanced            wildcards and -q/-qx include advanced counters\n"
    "                             (hidden by default, as in perfmon)\n"
    "       --no-scale            do not apply counters' default scale\n"
    "       --dir DIR             root directory (default: $PCW_DIR, else /dev/shm)\n"
    "       --all-users           also other users' providers (needs their opt-in)\n"
    "       --containers          also providers in other mount namespaces (containers;\n"
    "                             needs root); JSON gives each value its \"container\"\n"
    "  -h,  --help                this help\n"
    "       --version             version\n"
    "\n"
    "Exit status: 0 success, 1 failure (bad path, unknown counterset, no provider,\n"
    "output file exists without -y), 2 usage error.\n";

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

#define usage_error(...) cli_usage_error("pcwstat", __VA_ARGS__)

/* A duration (tools/common/cli.h) above 0, at most 366 days: seconds, or
 * -1. */
static double parse_interval(const char *s)
{
    double secs;
    return cli_duration(s, 1, &secs) == 0 && secs > 0 && secs <= 366.0 * 24 * 3600 ? secs : -1;
}

/* A log file's rotation (--max-size, --max-files; docs/history.md). */
#define MIN_LOG_SIZE      4096ull
#define MAX_LOG_SIZE      (1ull << 50)
#define MAX_LOG_FILES     1000
#define DEFAULT_LOG_FILES 4

/* "N", "NK", "NM", "NG" (powers of 1024) in bytes; 0 when bad or outside
 * MIN_LOG_SIZE..MAX_LOG_SIZE. */
static uint64_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M')
        shift = 20, end++;
    else if (*end == 'G')
        shift = 30, end++;
    if (errno || end == s || *end || v > (MAX_LOG_SIZE >> shift))
        return 0;
    v <<= shift;
    return v >= MIN_LOG_SIZE ? v : 0;
}

static int add_path(options *o, const char *p)
{
    if (grow(&o->paths, &o->paths_cap, o->npaths + 1, sizeof *o->paths))
        return -1;
    o->paths[o->npaths++] = p;
    return 0;
}

/* counterfile_read's add: the path is kept (to free) and added. */
static int add_owned_path(void *arg, char *path)
{
    options *o = arg;
    if (grow(&o->owned, &o->owned_cap, o->nowned + 1, sizeof *o->owned)) {
        free(path);
        return -1;
    }
    o->owned[o->nowned++] = path;
    return add_path(o, path);
}

/* Match an option in its typeperf (-si) or GNU (--interval) spelling. */
static int is(const char *arg, const char *dash, const char *gnu)
{
    return (dash && strcmp(arg, dash) == 0) || (gnu && strcmp(arg, gnu) == 0);
}

/* The option's value: "--opt=VALUE" or the next argument. */
static const char *value_of(int argc, char **argv, int *i, const char *eq)
{
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int parse(int argc, char **argv, options *o)
{
    o->interval = 1.0;
    o->flush = -1;
    int only_paths = 0;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (only_paths || arg[0] != '-' || !arg[1]) {
            if (add_path(o, arg))
                return 1;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_paths = 1;
            continue;
        }
        char name[64];
        const char *eq = NULL;
        if (arg[1] == '-' && (eq = strchr(arg, '=')) != NULL) {
            snprintf(name, sizeof name, "%.*s", (int)(eq - arg), arg);
        } else {
            snprintf(name, sizeof name, "%s", arg);
        }
        const char *v;
        if (is(name, "-h", "--help") || strcmp(name, "-?") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (is(name, NULL, "--version")) {
            printf("pcwstat (pcw) %s\n", PCW_VERSION_STRING);
            exit(0);
        } else if (is(name, "-cf", "--counter-file")) {
            if (!(v = value_of(argc, argv, &i, eq)))
                return usage_error("%s needs a file name", name);
            int r = counterfile_read("pcwstat", v, add_owned_path, o);
            if (r)
                return r;
        } else if (is(name, "-si", "--interval")) {
            if (!(v = value_of(argc, argv, &i, eq)) || (o->interval = parse_interval(v)) <= 0)
                return usage_error("bad interval \"%s\" (a duration, " CLI_DURATION_FORMS ")",
                                   v ? v : "");
        } else if (is(name, "-sc", "--samples")) {
            char *end;
            if (!(v = value_of(argc, argv, &i, eq)))
                return usage_error("%s needs a number", name);
            errno = 0;
            o->samples = strtol(v, &end, 10);
            if (*end || end == v || errno || o->samples <= 0)
                return usage_error("bad sample count \"%s\" (expected a positive number)", v);
        } else if (is(name, "-f", "--format")) {
            if (!(v = value_of(argc, argv, &i, eq)))
                return usage_error("%s needs CSV, TSV or JSON", name);
            if (strcasecmp(v, "csv") == 0)
                o->format = FMT_CSV;
            else if (strcasecmp(v, "tsv") == 0)
                o->format = FMT_TSV;
            else if (strcasecmp(v, "json") == 0)
                o->format = FMT_JSON;
            else if (strcasecmp(v, "bin") == 0)
                o->format = FMT_BIN;
            else if (strcasecmp(v, "sql") == 0)
                return usage_error("format %s is typeperf's, not supported by pcwstat (CSV, "
                                   "TSV, JSON or BIN)",
                                   v);
            else
                return usage_error("unknown format \"%s\" (CSV, TSV, JSON or BIN)", v);
        } else if (is(name, "-o", "--output")) {
            if (!(v = value_of(argc, argv, &i, eq)))
                return usage_error("%s needs a file name", name);
            o->output = v;
        } else if (is(name, NULL, "--flush")) {
            if (!(v = value_of(argc, argv, &i, eq)) ||
                (strcmp(v, "0") != 0 && (o->flush = parse_interval(v)) <= 0))
                return usage_error(
                    "bad flush time \"%s\" (a duration, " CLI_DURATION_FORMS ", or 0)", v ? v : "");
            if (strcmp(v, "0") == 0)
                o->flush = 0;
        } else if (is(name, NULL, "--max-size")) {
            if (!(v = value_of(argc, argv, &i, eq)) || !(o->max_size = parse_size(v)))
                return usage_error("bad size \"%s\" (expected a number of bytes, %llu or more, "
                                   "with K, M or G: 100M)",
                                   v ? v : "", (unsigned long long)MIN_LOG_SIZE);
        } else if (is(name, NULL, "--max-files")) {
            char *end;
            errno = 0;
            long n = (v = value_of(argc, argv, &i, eq)) ? strtol(v, &end, 10) : 0;
            if (!v || errno || end == v || *end || n < 2 || n > MAX_LOG_FILES)
                return usage_error("bad number of files \"%s\" (expected 2 to %d)", v ? v : "",
                                   MAX_LOG_FILES);
            o->max_files = (unsigned)n;
        } else if (is(name, NULL, "--log")) {
            if (!(v = value_of(argc, argv, &i, eq)))
                return usage_error("%s needs a file name", name);
            o->log = v;
        } else if (is(name, "-y", "--yes")) {
            o->yes = 1;
        } else if (is(name, "-q", "--query") || is(name, "-qx", "--query-instances")) {
            o->query = strcmp(name, "-qx") == 0 || strcmp(name, "--query-instances") == 0 ? 2 : 1;
            if (eq)
                o->query_set = eq + 1;
            else if (i + 1 < argc && argv[i + 1][0] != '-' && argv[i + 1][0] != '\\')
                o->query_set = argv[++i];
        } else if (is(name, "-a", "--advanced")) {
            o->advanced = 1;
        } else if (is(name, NULL, "--no-scale")) {
            o->no_scale = 1;
        } else if (is(name, NULL, "--dir")) {
            if (!(o->dir = value_of(argc, argv, &i, eq)))
                return usage_error("%s needs a directory", name);
        } else if (is(name, NULL, "--all-users")) {
            o->all_users = 1;
        } else if (is(name, NULL, "--containers")) {
            o->containers = 1;
        } else {
            return usage_error("unknown option %s", arg);
        }
    }
    if (!o->query && !o->npaths)
        return usage_error("%s", "no counter path given (PATH... or -cf FILE)");
    if (o->format == FMT_BIN && !o->query && !o->output)
        return usage_error("%s", "-f BIN writes a log file: give it with -o FILE");
    if (o->max_files && !o->max_size)
        return usage_error("%s", "--max-files needs --max-size (when to rotate)");
    if (o->max_size && o->format != FMT_BIN && !o->log)
        return usage_error("%s", "--max-size rotates a log: -f BIN -o FILE or --log LOG");
    if (o->log && (o->format == FMT_JSON || o->format == FMT_BIN))
        return usage_error("%s",
                           "--log records the columns of -f CSV or TSV (-f BIN is the log alone)");
    return 0;
}

/* -o FILE: created new, or overwritten only as tools/common/outfile.h
 * allows. */
static FILE *open_output(const options *o)
{
    if (!o->output)
        return stdout;
    int fd = outfile_open("pcwstat", o->output, o->yes);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fd >= 0 && !f) {
        fprintf(stderr, "pcwstat: %s: %s\n", o->output, strerror(errno));
        close(fd);
    }
    return f;
}

/* ---- columns and new matches ------------------------------------------- */

typedef struct strset {
    char **v;
    size_t n;
} strset;

static int strset_has(const strset *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return 1;
    return 0;
}

static int strset_add(strset *s, const char *x)
{
    char **v = realloc(s->v, (s->n + 1) * sizeof *v);
    if (!v || !(v[s->n] = strdup(x))) {
        if (v)
            s->v = v;
        return -1;
    }
    s->v = v;
    s->n++;
    return 0;
}

static void strset_free(strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

/* Say once per path and reason (in `told`), on stderr, why value i of h
 * has no number - or a bound rather than the number - when the reason
 * lies with the provider rather than the moment: a _Total of a counter
 * without an aggregate attribute stays empty for as long as the provider
 * runs (docs/query.md, "Totals"); a histogram's statistic at the top of
 * its range is the top bound; a histogram whose sum its buckets cannot
 * hold has no mean (docs/query.md, "Histograms"). */
static void explain(strset *told, pcw_pdh_counter *h, size_t i)
{
    pcw_pdh_value v;
    if (pcw_pdh_get_value(h, i, 0, &v) != PCW_OK ||
        (v.status != PCW_CSTATUS_NOT_AGGREGATED && v.status != PCW_CSTATUS_ABOVE_RANGE &&
         v.status != PCW_CSTATUS_INCONSISTENT))
        return;
    char path[8192], key[8256];
    pcw_pdh_value_path(h, i, 1, path, sizeof path);
    snprintf(key, sizeof key, "%d %s", v.status, path);
    if (strset_has(told, key) || strset_add(told, key))
        return;
    fputs("pcwstat: ", stderr);
    esc_put(stderr, path, strlen(path), ESC_BACKSLASH_LITERAL);
    if (v.status == PCW_CSTATUS_ABOVE_RANGE) {
        fprintf(stderr,
                ": at or above the histogram's range: %g is its top bound, the true value may "
                "be higher (the provider can raise the histogram's max_exp)\n",
                v.value);
        return;
    }
    if (v.status == PCW_CSTATUS_INCONSISTENT) {
        fputs(": the histogram's sum disagrees with its buckets (a damaged or hostile segment): "
              "no mean or sum\n",
              stderr);
        return;
    }
    fputs(": no total: counter \"", stderr);
    esc_put(stderr, v.counter, strlen(v.counter), 0);
    fputs("\" has no aggregate attribute (sum, avg, min or max), so its ", stderr);
    esc_put(stderr, v.instance, strlen(v.instance), 0);
    fputs(" combines nothing and stays empty; the provider sets one (manifest aggregate=, or "
          "PCW_COUNTER_EX)\n",
          stderr);
}

static void explain_handles(strset *told, pcw_pdh_counter *const *hs, size_t n)
{
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < pcw_pdh_value_count(hs[j]); i++)
            explain(told, hs[j], i);
}

/* Expand every path into concrete columns (each its own handle), after
 * those in *out already: 0, -1
 * (out of memory), or 1 when Ctrl-C (SIGINT, SIGTERM) came meanwhile - a
 * set-up of many columns must not make the user wait. */
static int make_columns(pcw_pdh *q, pcw_pdh_counter **user, size_t nuser, column **out,
                        size_t *nout, size_t *ncap, newmatch *known)
{
    column *cols = *out;
    size_t n = *nout, cap = *ncap;
    for (size_t u = 0; u < nuser; u++) {
        size_t nv = pcw_pdh_value_count(user[u]);
        char shown[PCW_PATH_MAX], why[1024];
        if (!nv)
            fprintf(stderr, "pcwstat: %s matches nothing now\n",
                    show(shown, sizeof shown, pcw_pdh_counter_path(user[u])));
        for (size_t i = 0; i < nv && !stopping; i++) {
            char bare[8192], full[8192];
            pcw_pdh_value v;
            pcw_pdh_get_value(user[u], i, 0, &v);
            pcw_pdh_value_path(user[u], i, 0, bare, sizeof bare);
            pcw_pdh_value_path(user[u], i, 1, full, sizeof full);
            if (v.status == PCW_CSTATUS_NO_INSTANCE || v.status == PCW_CSTATUS_PROVIDER_GONE)
                fprintf(stderr, "pcwstat: %s: %s (an empty column until it appears)\n",
                        show(shown, sizeof shown, bare), pcw_cstatus_str(v.status));
            if (grow(&cols, &cap, n + 1, sizeof *cols))
                goto nomem;
            *ncap = cap;
            pcw_path_error err;
            if (pcw_pdh_add_counter(q, bare, &cols[n].h, &err) != PCW_OK) {
                fprintf(stderr, "pcwstat: %s: %s\n", show(shown, sizeof shown, bare),
                        show(why, sizeof why, err.message));
                continue;
            }
            if (!(cols[n].path = strdup(full)) || nm_add_column(known, bare))
                goto nomem;
            n++;
        }
    }
    *out = cols;
    *nout = n;
    return stopping ? 1 : 0;
nomem:
    fprintf(stderr, "pcwstat: out of memory\n");
    *out = cols;
    *nout = n;
    return -1;
}

/* -f BIN: the user's paths' matches that are not columns yet (gathered in
 * known->cur by this sample's expansion) become columns, their handles
 * added now; their paths (with the host, as the query names them) and
 * their series come after the next collection (name_new_columns). The
 * log is not a CSV: its series may grow (docs/history.md, "Recording").
 * 0, or -1 out of memory. */
static int add_new_columns(pcw_pdh *q, newmatch *known, column **cols, size_t *n, size_t *cap)
{
    size_t added = 0;
    for (size_t j = 0; j < known->ncur; j++) {
        if (grow(cols, cap, *n + 1, sizeof **cols))
            return -1;
        column *c = &(*cols)[*n];
        if (pcw_pdh_add_counter(q, known->cur[j], &c->h, NULL) != PCW_OK)
            continue; /* gone again, or no longer a valid path: the next expansion says */
        c->path = NULL;
        if (nm_add_column(known, known->cur[j]))
            return -1;
        (*n)++, added++;
    }
    if (added)
        nm_columns_done(known);
    return 0;
}

/* -f BIN, after a collection: each user handle's values whose list may
 * have changed (its instance epoch; epochs[] the last seen) into known's
 * matches, as pcw_pdh_expand would give them. A handle the recorder logs
 * as a group (record_group) follows its instances itself. */
static void see_matches(pcw_pdh_counter *const *user, uint64_t *epochs,
                        const unsigned char *grouped, size_t n, newmatch *known)
{
    for (size_t u = 0; u < n; u++) {
        uint64_t e = pcw_pdh_instance_epoch(user[u]);
        if (grouped[u] || e == epochs[u])
            continue;
        epochs[u] = e;
        for (size_t i = 0; i < pcw_pdh_value_count(user[u]); i++) {
            pcw_pdh_value v;
            char bare[8192];
            if (pcw_pdh_get_value(user[u], i, PCW_FMT_RAW, &v) != PCW_OK ||
                v.status == PCW_CSTATUS_NO_INSTANCE || v.status == PCW_CSTATUS_PROVIDER_GONE ||
                pcw_pdh_value_path(user[u], i, 0, bare, sizeof bare) >= sizeof bare)
                continue;
            nm_see(bare, known);
        }
    }
}

/* After a collection: the paths of the columns add_new_columns added, and
 * the recorder told of them. 0, or -1 with why. */
static int name_new_columns(recorder *rec, column *cols, size_t n, char *why, size_t why_len)
{
    for (size_t i = 0; i < n; i++) {
        if (cols[i].path)
            continue;
        char full[8192];
        if (!pcw_pdh_value_count(cols[i].h) ||
            pcw_pdh_value_path(cols[i].h, 0, 1, full, sizeof full) >= sizeof full)
            snprintf(full, sizeof full, "%s", pcw_pdh_counter_path(cols[i].h));
        if (!(cols[i].path = strdup(full))) {
            snprintf(why, why_len, "out of memory");
            return -1;
        }
    }
    return record_columns(rec, cols, n, why, why_len);
}

/* -f BIN: the handles the user's paths became, in order - a path whose
 * counterset part is a wildcard one a counterset (split.c), those of
 * countersets that appear later after them - with what the recording
 * knows of each. */
enum { UH_COLUMNS = 0, UH_GROUP = 1, UH_NEW = 2 };
typedef struct uhandles {
    pcw_pdh_counter **h;
    uint64_t *epochs;     /* see_matches: the instance epoch last seen */
    unsigned char *state; /* UH_GROUP: record_group took it; UH_COLUMNS: its
                             values are columns; UH_NEW: a counterset's path
                             (split.c) not settled yet (settle_new) */
    size_t n, h_cap, e_cap, s_cap;
    pcw_pdh *q; /* (uh_add_path's) */
} uhandles;

static int uh_add(uhandles *u, pcw_pdh_counter *h, unsigned char state)
{
    if (grow(&u->h, &u->h_cap, u->n + 1, sizeof *u->h) ||
        grow(&u->epochs, &u->e_cap, u->n + 1, sizeof *u->epochs) ||
        grow(&u->state, &u->s_cap, u->n + 1, sizeof *u->state))
        return -1;
    u->h[u->n] = h, u->epochs[u->n] = 0, u->state[u->n] = state;
    u->n++;
    return 0;
}

/* split_new's callback: a counterset's path as a handle, settled once it
 * has values (settle_new). A path the query refuses (the counterset has
 * none of the counters the pattern names, or went again) is no match of
 * the user's: skipped. */
static int uh_add_path(void *arg, const char *path)
{
    uhandles *u = arg;
    pcw_pdh_counter *h;
    if (pcw_pdh_add_counter(u->q, path, &h, NULL) != PCW_OK)
        return 0;
    return uh_add(u, h, UH_NEW) ? -1 : 1;
}

static void uh_free(uhandles *u)
{
    free(u->h);
    free(u->epochs);
    free(u->state);
}

/* What run() set up for the user's paths, freed (their handles are q's). */
static void paths_free(pcw_pdh_counter **user, splitter *split, size_t npaths, uhandles *uh)
{
    for (size_t j = 0; split && j < npaths; j++)
        split_free(&split[j]);
    free(user);
    free(split);
    uh_free(uh);
}

/* -f BIN: the log's series, path by path in the order given: a path whose
 * instances' rows the recorder can log whole is a group of its own
 * (record_group: row samples, docs/history.md); the others' values are
 * columns, each its own handle, logged value by value as with --log;
 * a counterset's path (UH_NEW, split.c) likewise once it has values (until
 * then settle_new waits for them).
 * 0, or -1 (said on stderr; interrupted: status 130 is not needed, the
 * log is merely short). */
static int bin_series(pcw_pdh *q, recorder *rec, pcw_pdh_counter **user, unsigned char *grouped,
                      size_t nuser, column **cols, size_t *ncols, size_t *cap, newmatch *known,
                      char *why, size_t why_len)
{
    for (size_t u = 0; u < nuser && !stopping; u++) {
        if (grouped[u] == UH_NEW && !pcw_pdh_value_count(user[u]))
            continue;
        int g = record_group(rec, q, user[u], why, why_len);
        if (g < 0) {
            fprintf(stderr, "pcwstat: %s\n", why);
            return -1;
        }
        grouped[u] = (unsigned char)g;
        if (!g && make_columns(q, &user[u], 1, cols, ncols, cap, known) < 0)
            return -1;
        if (!g && record_columns(rec, *cols, *ncols, why, why_len)) {
            fprintf(stderr, "pcwstat: %s\n", why);
            return -1;
        }
    }
    nm_columns_done(known);
    return 0;
}

/* -f BIN, after a collection: the countersets' paths (split.c) added
 * since the start that have values now become groups or columns, in
 * order, as bin_series makes them; one without values yet (a counterset
 * registered before its instances are created) waits, so that it is a
 * group once they are there. 0, or -1 (said on stderr). */
static int settle_new(pcw_pdh *q, recorder *rec, uhandles *u, column **cols, size_t *ncols,
                      size_t *cap, newmatch *known)
{
    for (size_t i = 0; i < u->n; i++) {
        if (u->state[i] != UH_NEW)
            continue; /* (bin_series leaves one without values waiting) */
        char why[1024];
        if (bin_series(q, rec, &u->h[i], &u->state[i], 1, cols, ncols, cap, known, why, sizeof why))
            return -1;
    }
    return 0;
}

/* ---- the sampling loop --------------------------------------------------- */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep until `deadline` (CLOCK_MONOTONIC ns); 0, or -1 when a signal asks
 * to stop. */
static int sleep_until(uint64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    while (!stopping) {
        int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (r == 0)
            return 0;
        if (r != EINTR)
            return 0;
    }
    return -1;
}

/* Does a path's host part name a container, or every provider (\\*)?
 * Then containers are looked into as with --containers (docs/containers.md,
 * "Paths"). A path that does not parse is left to pcw_pdh_add_counter's
 * error. */
static int paths_want_containers(const options *o)
{
    for (size_t i = 0; i < o->npaths; i++) {
        pcw_path p;
        if (pcw_path_parse(o->paths[i], &p, NULL) != PCW_OK)
            continue;
        int want = p.container || (p.wild & PCW_PATH_WILD_HOST);
        pcw_path_free(&p);
        if (want)
            return 1;
    }
    return 0;
}

static int run(const options *o)
{
    pcw_consumer_options co = {0};
    co.dir = o->dir;
    co.all_users = o->all_users;
    int containers = o->containers || paths_want_containers(o);
    co.containers = containers;
    pcw_pdh *q;
    int rc = pcw_pdh_open(&q, &co);
    if (rc != PCW_OK) {
        fprintf(stderr, "pcwstat: %s\n", pcw_status_str(rc));
        return 1;
    }
    /* Advanced counters: only when asked for (pcw_pdh_set_detail), as
     * perfmon shows them. */
    uint32_t detail = o->advanced ? PCW_DETAIL_WIZARD : PCW_DETAIL_STANDARD;
    pcw_pdh_set_detail(q, detail);
    if (o->query) {
        rc = list_paths(q, o->query == 2, o->query_set, detail, stdout);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            out_end_if_reader_gone(errno);
            fprintf(stderr, "pcwstat: write error: %s\n", strerror(errno));
            rc = 1;
        }
        pcw_pdh_close(q);
        return rc;
    }
    pcw_pdh_counter **user = calloc(o->npaths, sizeof *user);
    splitter *split = calloc(o->npaths ? o->npaths : 1, sizeof *split); /* -f BIN */
    uhandles uh = {.q = q};
    if (!user || !split) {
        paths_free(user, split, o->npaths, &uh);
        pcw_pdh_close(q);
        return 1;
    }
    for (size_t i = 0; i < o->npaths; i++) {
        pcw_path_error err;
        if (pcw_pdh_add_counter(q, o->paths[i], &user[i], &err) != PCW_OK) {
            fprintf(stderr, "pcwstat: %s\n", o->paths[i]);
            char why[1024];
            fprintf(stderr, "pcwstat: %*s^ %s\n", (int)(err.offset > 200 ? 200 : err.offset), "",
                    show(why, sizeof why, err.message));
            suggest_for_path(q, o->paths[i], &err, stderr);
            paths_free(user, split, o->npaths, &uh);
            pcw_pdh_close(q);
            return 1;
        }
    }
    /* -f BIN: a wildcard counterset part split into a path a counterset
     * (each its own group), the user's handle only checked the path. */
    for (size_t i = 0; o->format == FMT_BIN && i < o->npaths; i++) {
        int r = split_init(&split[i], o->paths[i]);
        if (r < 0 || (r ? split_new(&split[i], pcw_pdh_consumer(q), uh_add_path, &uh)
                        : uh_add(&uh, user[i], UH_COLUMNS))) {
            fprintf(stderr, "pcwstat: out of memory\n");
            paths_free(user, split, o->npaths, &uh);
            pcw_pdh_close(q);
            return 1;
        }
        if (r) {
            pcw_pdh_remove_counter(q, user[i]);
            user[i] = NULL;
        }
    }
    /* The first sample primes rates; it is not printed. */
    if ((rc = pcw_pdh_collect(q, NULL)) != PCW_OK) {
        fprintf(stderr, "pcwstat: %s\n", pcw_status_str(rc));
        paths_free(user, split, o->npaths, &uh);
        pcw_pdh_close(q);
        return 1;
    }
    column *cols = NULL;
    size_t ncols = 0, cols_cap = 0;

    newmatch known = {0};
    strset told = {0};
    int status = 0;
    if (o->format != FMT_JSON && o->format != FMT_BIN) {
        int r = make_columns(q, user, o->npaths, &cols, &ncols, &cols_cap, &known);
        if (r > 0) {
            fprintf(stderr, "pcwstat: interrupted during the set-up; nothing written\n");
            status = 130;
        } else if (r < 0)
            status = 1;
        else if (!ncols && o->format != FMT_BIN) {
            fprintf(stderr, "pcwstat: no valid counters\n");
            status = 1;
        }
        nm_columns_done(&known);
        /* The user's paths are only expanded again to report new matches
         * (an expansion reads a set no column holds: it sees its new
         * instances). */
        for (size_t i = 0; i < o->npaths; i++)
            pcw_pdh_remove_counter(q, user[i]);
    }
    char why[1024];
    /* A rotated log (--max-size) keeps the previous run's file as FILE.1
     * rather than overwrite it: a recorder restarted loses nothing. */
    const char *logfile = o->format == FMT_BIN ? o->output : o->log;
    struct stat lst;
    if (status == 0 && o->max_size && lstat(logfile, &lst) == 0 && S_ISREG(lst.st_mode) &&
        record_shift(logfile, o->max_files ? o->max_files : DEFAULT_LOG_FILES, why, sizeof why) !=
            0) {
        fprintf(stderr, "pcwstat: %s\n", why);
        status = 1;
    }
    FILE *out = status == 0 ? open_output(o) : NULL;
    if (!out && status == 0)
        status = 1;
    unsigned flags = o->no_scale ? PCW_FMT_NOSCALE : 0;
    recorder *rec = NULL;
    if (status == 0 && (o->format == FMT_BIN || o->log)) {
        /* The log starts with the priming sample: pcwrelog cooks the first
         * row's rates from it, as the live CSV did. -f BIN logs into -o's
         * file; --log into a file of its own, created new (or truncated
         * with -y), never through a symbolic link. */
        int fd = o->format == FMT_BIN ? dup(fileno(out)) : outfile_open("pcwstat", o->log, o->yes);
        const char *name = o->format == FMT_BIN ? o->output : o->log;
        if (fd < 0)
            snprintf(why, sizeof why, "%s: %s", name,
                     o->format == FMT_BIN ? strerror(errno) : "not opened (above)");
        double flush = o->flush < 0 ? 10.0 : o->flush; /* docs/history.md */
        rec = fd >= 0 ? record_open(fd, name, cols, ncols, (uint64_t)(flush * 1e9), why, sizeof why)
                      : NULL;
        if (rec && o->max_size)
            record_rotation(rec, o->max_size, o->max_files ? o->max_files : DEFAULT_LOG_FILES);
        if (rec && o->format == FMT_BIN &&
            bin_series(q, rec, uh.h, uh.state, uh.n, &cols, &ncols, &cols_cap, &known, why,
                       sizeof why))
            status = 1;
        if (status == 0 && (!rec || record_sample(rec, q, why, sizeof why) != 0)) {
            fprintf(stderr, "pcwstat: %s\n", why);
            status = 1;
        }
    }
    if (status == 0) {
        if (o->format == FMT_CSV || o->format == FMT_TSV)
            write_header(out, o->format, cols, ncols);
        fflush(out);
        uint64_t step = (uint64_t)(o->interval * 1e9), deadline = mono_ns() + step;
        for (long n = 0; !stopping && (o->samples == 0 || n < o->samples); n++) {
            if (sleep_until(deadline) != 0)
                break;
            uint64_t now = mono_ns();
            deadline += step;
            if (deadline < now)
                deadline = now + step; /* fell behind: do not burst */
            rc = rec ? record_collect(rec, q, NULL) : pcw_pdh_collect(q, NULL);
            if (rc != PCW_OK) {
                fprintf(stderr, "pcwstat: %s\n", pcw_status_str(rc));
                status = 1;
                break;
            }
            if (o->format == FMT_JSON) {
                explain_handles(&told, user, o->npaths);
                write_json(out, pcw_pdh_realtime_ns(q), (uint64_t)n + 1, user, o->npaths, flags,
                           containers ? pcw_pdh_consumer(q) : NULL);
            } else {
                for (size_t i = 0; i < ncols; i++)
                    explain(&told, cols[i].h, 0);
                if (o->format != FMT_BIN)
                    write_row(out, o->format, pcw_pdh_realtime_ns(q), cols, ncols, flags);
                if (o->format == FMT_BIN &&
                    settle_new(q, rec, &uh, &cols, &ncols, &cols_cap, &known) != 0) {
                    status = 1; /* (said) */
                    break;
                }
                if (rec && ((o->format == FMT_BIN &&
                             name_new_columns(rec, cols, ncols, why, sizeof why) != 0) ||
                            record_sample(rec, q, why, sizeof why) != 0)) {
                    fprintf(stderr, "pcwstat: %s\n", why);
                    status = 1;
                    break;
                }
                if (o->format == FMT_BIN)
                    see_matches(uh.h, uh.epochs, uh.state, uh.n, &known);
                else
                    for (size_t i = 0; i < o->npaths; i++)
                        (void)pcw_pdh_expand(q, o->paths[i], nm_see, &known, NULL);
                int split_failed = 0; /* (countersets that appeared: settle_new) */
                for (size_t i = 0; o->format == FMT_BIN && i < o->npaths; i++)
                    split_failed |= split_new(&split[i], pcw_pdh_consumer(q), uh_add_path, &uh);
                if (o->format == FMT_BIN &&
                    (split_failed || add_new_columns(q, &known, &cols, &ncols, &cols_cap) != 0)) {
                    fprintf(stderr, "pcwstat: out of memory\n");
                    status = 1;
                    break;
                }
                nm_sample_end(&known, o->format == FMT_BIN ? NULL : stderr);
            }
            if (fflush(out) != 0) {
                out_end_if_reader_gone(errno);
                fprintf(stderr, "pcwstat: write error: %s\n", strerror(errno));
                status = 1;
                break;
            }
        }
    }
    if (rec && record_finish(rec, why, sizeof why) != 0) {
        fprintf(stderr, "pcwstat: %s\n", why);
        status = 1;
    }
    if (out && out != stdout && fclose(out) != 0) {
        fprintf(stderr, "pcwstat: %s: %s\n", o->output, strerror(errno));
        status = 1;
    }
    for (size_t i = 0; i < ncols; i++)
        free(cols[i].path);
    free(cols);
    nm_free(&known);
    strset_free(&told);
    paths_free(user, split, o->npaths, &uh);
    pcw_pdh_close(q); /* removes the counters: REMOVE_COUNTER to providers */
    return status;
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc) {
        free(o.paths);
        for (size_t i = 0; i < o.nowned; i++)
            free(o.owned[i]);
        free(o.owned);
        return rc;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: the sleep returns EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = run(&o);
    free(o.paths);
    for (size_t i = 0; i < o.nowned; i++)
        free(o.owned[i]);
    free(o.owned);
    return rc;
}
