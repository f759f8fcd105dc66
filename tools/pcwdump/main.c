/* SPDX-License-Identifier: MIT */
/*
 * pcwdump - print the providers, countersets, counters, instances and raw
 * values that pcw providers publish; check segments' integrity.
 *
 * main.c parses the options; dump.c walks the providers; text.c and json.c
 * print; check.c verifies. README.md documents usage, docs/pcwdump-json.md
 * the JSON schema.
 *
 * Exit status: 0 success; 1 failure (a segment that cannot be opened or
 * fails --check, a read error, a filter that matched nothing); 2 a usage
 * error.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/layout.h"
#include <pcw/version.h>

#include "../common/cli.h"
#include "pcwdump.h"

static const char usage_text[] =
    "Usage: pcwdump [OPTIONS]\n"
    "Print the performance counters that pcw providers publish: segment countersets,\n"
    "and callback countersets collected through their providers' control channels.\n"
    "\n"
    "Where to look:\n"
    "      --dir DIR            root directory (default: $PCW_DIR, else /dev/shm)\n"
    "      --all-users          also other users' providers (needs their opt-in, or root)\n"
    "      --containers         also providers in other mount namespaces (containers;\n"
    "                           needs root), each shown with its container\n"
    "      --segment PATH       read this segment file only (repeatable)\n"
    "\n"
    "What to show (repeat an option for alternatives; different options must all match):\n"
    "  -p, --provider PID|NAME  providers by pid, or by name (case-insensitive, * and ?)\n"
    "  -c, --counterset NAME    countersets by name (case-insensitive, * and ?)\n"
    "  -i, --instance NAME      instances by name (case-insensitive, * and ?)\n"
    "      --id N               instances by id\n"
    "      --counters LIST      only these counters: comma-separated names or ids\n"
    "      --merged             countersets merged across providers, as consumers see them\n"
    "      --no-values          list instances without their values\n"
    "      --timeout MS         wait at most MS for a callback provider (default 1000)\n"
    "\n"
    "How:\n"
    "      --json               JSON (schema: docs/pcwdump-json.md)\n"
    "      --compact            JSON on one line per document\n"
    "      --watch SECONDS      repeat every SECONDS (fractions allowed) until -n or Ctrl-C\n"
    "  -n, --count COUNT        stop after COUNT samples (every second unless --watch)\n"
    "\n"
    "Other actions:\n"
    "      --check              verify each segment: prints \"OK PATH\" or \"CORRUPT PATH: why\"\n"
    "      --remove-stale       remove segments whose provider has exited\n"
    "  -h, --help               this help\n"
    "      --version            version\n"
    "\n"
    "Exit status: 0 success, 1 failure (unreadable or corrupt segment, nothing matched\n"
    "a filter), 2 usage error.\n";

enum {
    OPT_DIR = 256,
    OPT_ALL_USERS,
    OPT_CONTAINERS,
    OPT_ID,
    OPT_COUNTERS,
    OPT_SEGMENT,
    OPT_MERGED,
    OPT_JSON,
    OPT_COMPACT,
    OPT_CHECK,
    OPT_WATCH,
    OPT_REMOVE_STALE,
    OPT_NO_VALUES,
    OPT_TIMEOUT,
    OPT_VERSION,
};

static const struct option long_opts[] = {
    {"dir", required_argument, NULL, OPT_DIR},
    {"all-users", no_argument, NULL, OPT_ALL_USERS},
    {"containers", no_argument, NULL, OPT_CONTAINERS},
    {"provider", required_argument, NULL, 'p'},
    {"counterset", required_argument, NULL, 'c'},
    {"instance", required_argument, NULL, 'i'},
    {"id", required_argument, NULL, OPT_ID},
    {"counters", required_argument, NULL, OPT_COUNTERS},
    {"segment", required_argument, NULL, OPT_SEGMENT},
    {"merged", no_argument, NULL, OPT_MERGED},
    {"json", no_argument, NULL, OPT_JSON},
    {"compact", no_argument, NULL, OPT_COMPACT},
    {"check", no_argument, NULL, OPT_CHECK},
    {"watch", required_argument, NULL, OPT_WATCH},
    {"count", required_argument, NULL, 'n'},
    {"remove-stale", no_argument, NULL, OPT_REMOVE_STALE},
    {"no-values", no_argument, NULL, OPT_NO_VALUES},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

/* The tools' one usage error (tools/common/cli.h), which ends pcwdump. */
#define usage_error(...) exit(cli_usage_error("pcwdump", __VA_ARGS__))

static void add(str_list *l, const char *s)
{
    const char **v = realloc(l->v, (l->n + 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "pcwdump: %s\n", pcw_status_str(PCW_E_NO_MEMORY));
        exit(EXIT_FAIL);
    }
    l->v = v;
    l->v[l->n++] = s;
}

static void add_nonempty(str_list *l, const char *opt, const char *s)
{
    if (!*s)
        usage_error("%s needs a non-empty argument", opt);
    add(l, s);
}

/* Copies of --counters arguments, freed at the end of main. */
static char **owned;
static size_t nowned;

/* --counters A,B,3: split at commas, trim blanks at both ends. */
static void add_counter_list(str_list *l, const char *arg)
{
    char *copy = strdup(arg);
    if (!copy) {
        fprintf(stderr, "pcwdump: %s\n", pcw_status_str(PCW_E_NO_MEMORY));
        exit(EXIT_FAIL);
    }
    char *p = copy;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        while (*p == ' ' || *p == '\t')
            p++;
        char *e = p + strlen(p);
        while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = 0;
        if (!*p)
            usage_error("--counters: empty counter name in '%s'", arg);
        add(l, p);
        if (!comma)
            break;
        p = comma + 1;
    }
    /* The list points into `copy`: keep it until main frees it. */
    char **v = realloc(owned, (nowned + 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "pcwdump: %s\n", pcw_status_str(PCW_E_NO_MEMORY));
        exit(EXIT_FAIL);
    }
    owned = v;
    owned[nowned++] = copy;
}

static unsigned long long parse_uint(const char *opt, const char *s, unsigned long long max)
{
    char *end;
    errno = 0;
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        usage_error("%s: '%s' is not a number", opt, s);
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        usage_error("%s: '%s' is not a number", opt, s);
    if (v > max)
        usage_error("%s: %s is too large (at most %llu)", opt, s, max);
    return v;
}

int main(int argc, char **argv)
{
    dump_opts o = {0};
    int have_count = 0;
    opterr = 0; /* our own messages */
    for (;;) {
        int prev = optind;
        int c = getopt_long(argc, argv, ":p:c:i:n:h", long_opts, NULL);
        if (c == -1)
            break;
        const char *arg = argv[optind - 1 >= prev ? optind - 1 : prev];
        switch (c) {
        case OPT_DIR:
            if (!*optarg)
                usage_error("--dir needs a non-empty argument");
            o.dir = optarg;
            break;
        case OPT_ALL_USERS:
            o.all_users = 1;
            break;
        case OPT_CONTAINERS:
            o.containers = 1;
            break;
        case 'p':
            add_nonempty(&o.providers, "--provider", optarg);
            break;
        case 'c':
            add_nonempty(&o.csets, "--counterset", optarg);
            break;
        case 'i':
            add_nonempty(&o.instances, "--instance", optarg);
            break;
        case OPT_ID: {
            uint32_t *v = realloc(o.ids, (o.nids + 1) * sizeof *v);
            if (!v)
                return EXIT_FAIL;
            o.ids = v;
            o.ids[o.nids++] = (uint32_t)parse_uint("--id", optarg, UINT32_MAX);
            break;
        }
        case OPT_COUNTERS:
            add_counter_list(&o.counters, optarg);
            break;
        case OPT_SEGMENT:
            add_nonempty(&o.segments, "--segment", optarg);
            break;
        case OPT_TIMEOUT: {
            /* A bare number is milliseconds, as it always was. */
            double secs;
            if (cli_duration(optarg, 0.001, &secs) != 0 || secs < 0.001 || secs > 3600)
                usage_error("--timeout: bad duration '%s' (1ms to 1h, a bare number in "
                            "milliseconds; " CLI_DURATION_FORMS ")",
                            optarg);
            o.timeout_ms = (uint32_t)(secs * 1000 + 0.5);
            break;
        }
        case OPT_MERGED:
            o.merged = 1;
            break;
        case OPT_JSON:
            o.json = 1;
            break;
        case OPT_COMPACT:
            o.compact = 1;
            break;
        case OPT_CHECK:
            o.check = 1;
            break;
        case OPT_WATCH: {
            double v;
            if (cli_duration(optarg, 1, &v) != 0 || v <= 0)
                usage_error("--watch: bad duration '%s' (" CLI_DURATION_FORMS ")", optarg);
            if (v > 31536000.0)
                usage_error("--watch: '%s' is too long (at most a year)", optarg);
            o.interval = v;
            break;
        }
        case 'n':
            o.count = (long)parse_uint("--count", optarg, 1000000000ull);
            if (o.count == 0)
                usage_error("--count: must be at least 1");
            have_count = 1;
            break;
        case OPT_REMOVE_STALE:
            o.remove_stale = 1;
            break;
        case OPT_NO_VALUES:
            o.no_values = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return EXIT_OK;
        case OPT_VERSION:
            printf("pcwdump (pcw) %s\nJSON schema %d, segment layout %u\n", PCW_VERSION_STRING,
                   PCWDUMP_JSON_VERSION, PCW_SEG_LAYOUT_VERSION);
            return EXIT_OK;
        case ':':
            if (optopt && optopt < 256)
                usage_error("option '-%c' needs an argument", optopt);
            usage_error("option '%s' needs an argument", arg);
        case '?':
        default:
            if (optopt && optopt < 256)
                usage_error("unknown option '-%c'", optopt);
            usage_error("unknown option '%s'", arg);
        }
    }
    if (optind < argc)
        usage_error("unexpected argument '%s'", argv[optind]);
    if (o.merged && o.segments.n)
        usage_error("--merged reads a directory; it cannot be combined with --segment");
    if (o.check && (o.merged || o.interval > 0 || have_count))
        usage_error("--check cannot be combined with --merged, --watch or --count");
    if (o.remove_stale && (o.check || o.merged || o.segments.n || o.interval > 0 || have_count))
        usage_error("--remove-stale cannot be combined with other actions or --segment");
    if (o.compact && !o.json)
        usage_error("--compact needs --json");
    if (have_count && o.interval == 0)
        o.interval = 1.0;

    int status;
    if (o.remove_stale)
        status = remove_stale_run(&o);
    else if (o.check)
        status = check_run(&o);
    else
        status = dump_run(&o);
    free(o.providers.v);
    free(o.csets.v);
    free(o.instances.v);
    free(o.counters.v);
    free(o.segments.v);
    free(o.ids);
    for (size_t i = 0; i < nowned; i++)
        free(owned[i]);
    free(owned);
    return status;
}
