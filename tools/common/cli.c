/* SPDX-License-Identifier: MIT */
/*
 * tools/common/cli.c - the tools' one duration grammar and one usage error
 * (cli.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* digits [. digits] or . digits, at *p: its value, and *p past it; -1 if
 * there is no number. Digits at most 15 before and 15 after the point, so
 * the sum is exact enough and bounded. */
static double number(const char **p)
{
    const char *s = *p;
    double v = 0, scale = 1;
    int n = 0, frac = 0;
    for (; *s >= '0' && *s <= '9'; s++, n++)
        v = v * 10 + (*s - '0');
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++, frac++)
            v += (*s - '0') * (scale /= 10);
    }
    if (n + frac == 0 || n > 15 || frac > 15)
        return -1;
    *p = s;
    return v;
}

/* [[hh:]mm:]ss, with at least one colon. */
static double clock_form(const char *s)
{
    double part[3];
    int n = 0;
    for (;;) {
        const char *start = s;
        double v = number(&s);
        if (v < 0 || n == 3)
            return -1;
        part[n++] = v;
        if (*s != ':')
            break;
        if (memchr(start, '.', (size_t)(s - start))) /* hours and minutes are whole */
            return -1;
        s++;
    }
    if (*s || n < 2 || part[n - 1] >= 60 || (n == 3 && part[1] >= 60))
        return -1;
    double secs = 0;
    for (int i = 0; i < n; i++)
        secs = secs * 60 + part[i];
    return secs;
}

/* NUMBER UNIT ..., units largest first, each once. */
static double unit_form(const char *s)
{
    static const struct {
        const char *name;
        double secs;
    } units[] = {{"d", 86400}, {"h", 3600}, {"ms", 0.001}, {"m", 60}, {"s", 1}};
    static const int rank[] = {0, 1, 4, 2, 3}; /* d h m s ms, by units[] index */
    double secs = 0;
    int last = -1;
    while (*s) {
        double v = number(&s);
        if (v < 0)
            return -1;
        size_t u = 0;
        while (u < sizeof units / sizeof units[0] &&
               strncmp(s, units[u].name, strlen(units[u].name)) != 0)
            u++;
        if (u == sizeof units / sizeof units[0] || rank[u] <= last)
            return -1;
        last = rank[u];
        s += strlen(units[u].name);
        secs += v * units[u].secs;
    }
    return last < 0 ? -1 : secs;
}

int cli_duration(const char *s, double bare_unit, double *secs)
{
    if (!s || !*s)
        return -1;
    double v;
    const char *p = s;
    double bare = number(&p);
    if (bare >= 0 && !*p)
        v = bare * bare_unit;
    else if (strchr(s, ':'))
        v = clock_form(s);
    else
        v = unit_form(s);
    if (!(v >= 0) || v > CLI_DURATION_MAX)
        return -1;
    *secs = v;
    return 0;
}

int cli_usage_error(const char *tool, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", tool);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s --help'.\n", tool);
    return CLI_EXIT_USAGE;
}
