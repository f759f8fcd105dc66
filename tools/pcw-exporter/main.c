/* SPDX-License-Identifier: MIT */
/*
 * pcw-exporter - every pcw provider's counters on this host, for
 * Prometheus (and anything that scrapes its formats: OpenTelemetry,
 * VictoriaMetrics), the way node_exporter and windows_exporter export
 * theirs.
 *
 *   main.c       flags, start, signals
 *   http.c       libmicrohttpd: routes, negotiation, gzip, TLS, auth
 *   slots.c      connection slots slow clients cannot keep
 *   body.c       scrape bodies shared by requests, under a memory limit
 *   webconfig.c  --web.config.file (exporter-toolkit's format, libyaml)
 *   auth.c       basic authentication against bcrypt hashes
 *   collector.c  one scrape: the query layer to the exposition
 *   mapping.c    counter types -> metric families: the one table
 *   expo.c       names, escaping, numbers
 *   log.c        logfmt / JSON logging
 *
 * README.md and docs/exporter.md document it. Exit status: 0 after SIGINT
 * or SIGTERM (within STOP_GRACE_NS and the time to close its connections),
 * 1 when it cannot start (the log says why), 2 usage error.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcw/types.h>
#include <pcw/version.h>

#include "../common/cli.h"
#include "classic.h"
#include "collector.h"
#include "http.h"
#include "log.h"
#include "webconfig.h"

/* The default port, from Prometheus' default port allocations
 * (docs/exporter.md says why this one). */
#define DEFAULT_LISTEN "127.0.0.1:10158"
#define MAX_PATTERNS   64
/* On SIGINT/SIGTERM, how long requests being served (a scrape waiting on
 * its collection) may take to finish before the exporter exits without
 * them (docs/exporter.md, "Stopping"; docs/design.md's limits). */
#define STOP_GRACE_NS (1000 * 1000000ull)

static const char usage_text[] =
    "Usage: pcw-exporter [FLAGS]\n"
    "Serve the counters of every pcw provider on this host to Prometheus.\n"
    "\n"
    "  --web.listen-address=ADDR     address to listen on, host:port, [ipv6]:port, or :port\n"
    "                                for every interface (default " DEFAULT_LISTEN ", loopback\n"
    "                                only); repeat for several\n"
    "  --web.telemetry-path=PATH     path of the metrics (default /metrics)\n"
    "  --web.config.file=FILE        TLS and basic authentication, in the exporter-toolkit's\n"
    "                                format (docs/exporter.md)\n"
    "  --web.max-requests=N          connections open at once (default 40; 0 = no limit);\n"
    "                                past it the one waiting longest for a request is closed\n"
    "  --web.request-timeout=DURATION  most a connection may take to send a whole request,\n"
    "                                from its accept or its previous response (default 10s)\n"
    "  --web.max-response-memory=SIZE  scrape bodies that responses in flight may hold;\n"
    "                                past it the responses sending longest are cut, and a\n"
    "                                scrape that cannot make room gets 503 (default 256MB)\n"
    "  --collector.counterset=PATTERN  export only countersets matching PATTERN ('*', '?',\n"
    "                                case-insensitive); repeat for several (default: all)\n"
    "  --collector.exclude=PATTERN   leave out countersets matching PATTERN; repeatable\n"
    "  --collector.timeout=DURATION  most a scrape waits for callback providers (default 10s;\n"
    "                                less when the scraper's X-Prometheus-Scrape-Timeout-\n"
    "                                Seconds minus the offset below is less)\n"
    "  --collector.timeout-offset=DURATION  kept for writing the response (default 0.5s)\n"
    "  --collector.dir=DIR           providers' root directory (default $PCW_DIR, else\n"
    "                                /dev/shm)\n"
    "  --collector.all-users         also other users' providers (those sharing with a group\n"
    "                                the exporter is in, or all when run as root)\n"
    "  --histogram.classic-buckets=N  finite le bounds of a histogram's classic buckets,\n"
    "                                at most (default 30; 8 to 8193): docs/exporter.md\n"
    "  --collector.containers        also providers in other mount namespaces (containers),\n"
    "                                labelled container_id, pod_uid, namespace, pod,\n"
    "                                container and host_pid (needs\n"
    "                                root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH)\n"
    "  --log.level=LEVEL             debug, info, warn or error (default info)\n"
    "  --log.format=FORMAT           logfmt or json (default logfmt)\n"
    "  -h, --help                    this help\n"
    "      --version                 version\n"
    "\n"
    "DURATION is seconds (1.5) or with a unit: 500ms, 2s, 1m. SIZE is bytes or with a\n"
    "unit: KB, MB, GB (powers of 1024, as Prometheus' sizes).\n";

typedef struct options {
    const char *listen[16];
    size_t nlisten;
    const char *telemetry_path;
    const char *web_config;
    unsigned max_requests;
    double request_timeout;
    size_t max_response_memory;
    const char *include[MAX_PATTERNS], *exclude[MAX_PATTERNS];
    size_t ninclude, nexclude;
    double timeout, offset;
    const char *dir;
    int all_users;
    unsigned classic_buckets;
    int containers;
    int log_level, log_json;
} options;

#define usage_error(...) cli_usage_error("pcw-exporter", __VA_ARGS__)

/* A duration (tools/common/cli.h) in seconds; -1 if malformed. */
static double parse_duration(const char *s)
{
    double v;
    return cli_duration(s, 1, &v) == 0 ? v : -1;
}

/* "1048576", "512KB", "256MB", "1GB" (also KiB, MiB, GiB; powers of 1024)
 * -> bytes; -1 if malformed. */
static double parse_size(const char *s)
{
    static const struct {
        const char *unit;
        double mult;
    } units[] = {
        {"", 1},           {"B", 1},           {"KB", 1024.0},       {"KiB", 1024.0},
        {"MB", 1048576.0}, {"MiB", 1048576.0}, {"GB", 1073741824.0}, {"GiB", 1073741824.0}};
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0)
            return v * units[i].mult;
    return -1;
}

static int parse(int argc, char **argv, options *o)
{
    o->telemetry_path = "/metrics";
    o->max_requests = 40;
    o->request_timeout = 10;
    o->max_response_memory = (size_t)256 << 20;
    o->timeout = 10;
    o->offset = 0.5;
    o->classic_buckets = CLASSIC_DEFAULT;
    o->log_level = LOG_INFO;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        }
        if (strcmp(arg, "--version") == 0) {
            printf("pcw-exporter (pcw) %s\n", PCW_VERSION_STRING);
            exit(0);
        }
        if (strncmp(arg, "--", 2) != 0)
            return usage_error("unexpected argument \"%s\"", arg);
        /* --name=value or --name value */
        char name[64];
        const char *eq = strchr(arg, '='), *v = NULL;
        size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nl >= sizeof name)
            return usage_error("unknown flag %s", arg);
        memcpy(name, arg, nl);
        name[nl] = 0;
        if (strcmp(name, "--collector.all-users") == 0 ||
            strcmp(name, "--collector.containers") == 0) {
            if (eq)
                return usage_error("%s takes no value", name);
            *(strcmp(name, "--collector.containers") == 0 ? &o->containers : &o->all_users) = 1;
            continue;
        }
        static const char *const valued[] = {
            "--web.listen-address",   "--web.telemetry-path",
            "--web.config.file",      "--web.max-requests",
            "--web.request-timeout",  "--web.max-response-memory",
            "--collector.counterset", "--collector.exclude",
            "--collector.timeout",    "--collector.timeout-offset",
            "--collector.dir",        "--log.level",
            "--log.format",           "--histogram.classic-buckets",
        };
        size_t k = 0;
        while (k < sizeof valued / sizeof valued[0] && strcmp(name, valued[k]) != 0)
            k++;
        if (k == sizeof valued / sizeof valued[0])
            return usage_error("unknown flag %s", name);
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[++i];
        else
            return usage_error("%s needs a value", name);
        if (strcmp(name, "--web.listen-address") == 0) {
            if (o->nlisten == sizeof o->listen / sizeof o->listen[0])
                return usage_error("at most %zu listen addresses",
                                   sizeof o->listen / sizeof o->listen[0]);
            o->listen[o->nlisten++] = v;
        } else if (strcmp(name, "--web.telemetry-path") == 0) {
            if (v[0] != '/' || strcmp(v, "/") == 0 || strpbrk(v, "?# \t\r\n"))
                return usage_error("--web.telemetry-path must be a path such as /metrics, not "
                                   "\"%s\"",
                                   v);
            o->telemetry_path = v;
        } else if (strcmp(name, "--web.config.file") == 0) {
            o->web_config = v;
        } else if (strcmp(name, "--web.max-requests") == 0) {
            char *end;
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (!*v || *end || errno || n > 100000 || v[0] == '-')
                return usage_error("--web.max-requests needs a number, not \"%s\"", v);
            o->max_requests = (unsigned)n;
        } else if (strcmp(name, "--histogram.classic-buckets") == 0) {
            char *end;
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (!*v || *end || errno || v[0] == '-' || n < CLASSIC_MIN || n > CLASSIC_MAX)
                return usage_error("--histogram.classic-buckets needs a number from %u to %u, "
                                   "not \"%s\"",
                                   CLASSIC_MIN, CLASSIC_MAX, v);
            o->classic_buckets = (unsigned)n;
        } else if (strcmp(name, "--collector.counterset") == 0 ||
                   strcmp(name, "--collector.exclude") == 0) {
            int inc = name[12] == 'c';
            size_t *n = inc ? &o->ninclude : &o->nexclude;
            if (!*v)
                return usage_error("%s needs a pattern", name);
            if (*n == MAX_PATTERNS)
                return usage_error("at most %d patterns for %s", MAX_PATTERNS, name);
            (inc ? o->include : o->exclude)[(*n)++] = v;
        } else if (strcmp(name, "--web.max-response-memory") == 0) {
            double b = parse_size(v);
            if (b < (1 << 20) || b > (double)((size_t)1 << 40))
                return usage_error("--web.max-response-memory: bad size \"%s\" (1MB to 1TB, "
                                   "e.g. 256MB)",
                                   v);
            o->max_response_memory = (size_t)b;
        } else if (strcmp(name, "--web.request-timeout") == 0) {
            double d = parse_duration(v);
            if (d < 0.1 || d > 3600)
                return usage_error("--web.request-timeout: bad duration \"%s\" (0.1s to 1h; "
                                   "a duration, " CLI_DURATION_FORMS ")",
                                   v);
            o->request_timeout = d;
        } else if (strcmp(name, "--collector.timeout") == 0 ||
                   strcmp(name, "--collector.timeout-offset") == 0) {
            double d = parse_duration(v);
            int off = strcmp(name, "--collector.timeout-offset") == 0;
            if (d < 0 || (!off && (d < 0.001 || d > 3600)) || (off && d > 60))
                return usage_error("%s: bad duration \"%s\" (" CLI_DURATION_FORMS ")", name, v);
            *(off ? &o->offset : &o->timeout) = d;
        } else if (strcmp(name, "--collector.dir") == 0) {
            o->dir = v;
        } else if (strcmp(name, "--log.level") == 0) {
            if ((o->log_level = log_level_parse(v)) < 0)
                return usage_error("--log.level must be debug, info, warn or error, not \"%s\"", v);
        } else if (strcmp(name, "--log.format") == 0) {
            if (strcmp(v, "logfmt") != 0 && strcmp(v, "json") != 0)
                return usage_error("--log.format must be logfmt or json, not \"%s\"", v);
            o->log_json = v[0] == 'j';
        }
    }
    if (!o->nlisten)
        o->listen[o->nlisten++] = DEFAULT_LISTEN;
    return 0;
}

/* Warn when a file of the web configuration - password hashes, a private
 * key - can be read or changed by users other than its owner and group:
 * the exporter still starts (the operator may mean it), but says so. */
static void warn_if_open(const char *path, const char *what)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || !(st.st_mode & (S_IROTH | S_IWOTH)))
        return;
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
    xlog(LOG_WARN, "file is readable or writable by other users: chmod o-rw it", "file", path,
         "what", what, "mode", mode, NULL);
}

int main(int argc, char **argv)
{
    options o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    log_setup(o.log_level, o.log_json);
    /* Signals are taken by sigwait below; block them before any thread
     * starts, so that every thread inherits the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* Scrape bodies can be tens of megabytes and come and go with their
     * clients: a fixed mmap threshold (which also turns off glibc's
     * raising it after each free) gives every buffer of 1 MiB or more its
     * own mapping, returned to the system when it is freed, rather than a
     * heap that keeps its peak. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    xlog(LOG_INFO, "Starting pcw-exporter", "version", PCW_VERSION_STRING, NULL);
    web_config wc;
    memset(&wc, 0, sizeof wc);
    char err[1024];
    if (o.web_config && web_config_load(o.web_config, &wc, err, sizeof err) != 0) {
        xlog(LOG_ERROR, "bad web configuration", "err", err, NULL);
        return 1;
    }
    if (o.web_config) {
        warn_if_open(o.web_config, "web configuration");
        warn_if_open(wc.key_file, "TLS key");
    }
    collector_options co = {.dir = o.dir,
                            .all_users = o.all_users,
                            .containers = o.containers,
                            .include = o.include,
                            .ninclude = o.ninclude,
                            .exclude = o.exclude,
                            .nexclude = o.nexclude,
                            .classic_buckets = o.classic_buckets};
    collector *coll;
    if ((rc = collector_open(&coll, &co)) != PCW_OK) {
        xlog(LOG_ERROR, "cannot read pcw providers", "err", pcw_status_str(rc), NULL);
        web_config_free(&wc);
        return 1;
    }
    http_options ho = {.listen = o.listen,
                       .nlisten = o.nlisten,
                       .telemetry_path = o.telemetry_path,
                       .web = o.web_config ? &wc : NULL,
                       .coll = coll,
                       .timeout = o.timeout,
                       .timeout_offset = o.offset,
                       .max_requests = o.max_requests,
                       .request_timeout = o.request_timeout,
                       .max_response_memory = o.max_response_memory};
    http_server *srv;
    if (http_start(&srv, &ho, err, sizeof err) != 0) {
        xlog(LOG_ERROR, "cannot serve", "err", err, NULL);
        collector_close(coll);
        web_config_free(&wc);
        return 1;
    }
    if (!o.web_config)
        xlog(LOG_INFO, "TLS is disabled.", "http2", "false", NULL);
    int sig = 0;
    sigwait(&stop, &sig);
    xlog(LOG_INFO, "Stopping", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM", NULL);
    int busy = http_drain(srv, STOP_GRACE_NS);
    if (busy > 0) {
        /* A scrape still waits on its collection (a provider that does not
         * answer holds it up to --collector.timeout): its thread cannot be
         * stopped, and waiting for it is what SIGTERM must not do. Exit
         * now; the kernel closes its connection, and the providers see
         * the control channel close as after any consumer's exit. */
        char n[16];
        snprintf(n, sizeof n, "%d", busy);
        xlog(LOG_WARN, "Stopped without waiting for scrapes still collecting", "scrapes", n, NULL);
        _exit(0);
    }
    http_stop(srv);
    collector_close(coll);
    web_config_free(&wc);
    return 0;
}
