/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/log.c - logfmt / JSON lines on stderr (log.h).
 */
#define _GNU_SOURCE 1
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "expo.h"
#include "log.h"

static int min_level = LOG_INFO;
static int as_json;

void log_setup(int level, int json)
{
    min_level = level;
    as_json = json;
}

int log_level_parse(const char *s)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

int log_enabled(int level)
{
    return level >= min_level;
}

/* A value: bare when it is one logfmt word, else quoted; JSON always
 * quoted. Control characters and non-ASCII bytes are escaped as \xHH
 * (logfmt) or \u00HH (JSON): a log line stays one line of ASCII. */
static void value(ebuf *b, const char *v)
{
    int bare = !as_json && *v && !strpbrk(v, " =\"\\");
    for (const unsigned char *p = (const unsigned char *)v; bare && *p; p++)
        bare = *p > 0x20 && *p < 0x7f;
    if (bare) {
        eb_str(b, v);
        return;
    }
    eb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            eb_put(b, e, 2);
        } else if (*p < 0x20 || *p >= 0x7f) {
            eb_printf(b, as_json ? "\\u%04x" : "\\x%02x", *p);
        } else {
            eb_put(b, p, 1);
        }
    }
    eb_put(b, "\"", 1);
}

static void field(ebuf *b, const char *k, const char *v, int first)
{
    if (as_json) {
        eb_str(b, first ? "{\"" : ",\"");
        eb_str(b, k);
        eb_str(b, "\":");
    } else {
        if (!first)
            eb_put(b, " ", 1);
        eb_str(b, k);
        eb_put(b, "=", 1);
    }
    value(b, v);
}

void xlog(int level, const char *msg, ...)
{
    if (level < min_level)
        return;
    static const char *names[] = {"debug", "info", "warn", "error"};
    char ts[40];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r(&now.tv_sec, &tm);
    size_t n = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + n, sizeof ts - n, ".%03ldZ", now.tv_nsec / 1000000);
    ebuf b = {0}; /* logs are rare: a heap buffer per line */
    field(&b, "ts", ts, 1);
    field(&b, "level", names[level < 0 ? 0 : level > 3 ? 3 : level], 0);
    field(&b, "msg", msg, 0);
    va_list ap;
    va_start(ap, msg);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        const char *v = va_arg(ap, const char *);
        field(&b, k, v ? v : "", 0);
    }
    va_end(ap);
    eb_str(&b, as_json ? "}\n" : "\n");
    if (!b.failed)
        (void)!write(2, b.p, b.len);
    eb_free(&b);
}
