/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwrelog/timearg.c - the times -b and -e take (relog.h):
 *
 *   relog's      M/d/yyyy hh[:mm[:ss[.fff]]][AM|PM]   11/27/2026 3:12:00PM
 *                (the CSV's own "11/27/2026 15:12:00.481" reads too)
 *   ISO 8601     yyyy-mm-ddThh:mm[:ss[.fff]][Z|+hh:mm|-hh:mm]
 *                (a space for the 'T'; JSON's "2026-11-27T15:12:00.481Z")
 *
 * Local time, as the CSV shows it, unless a zone is given. A time is a
 * span as long as its last unit written (11/27/2026 03:12 the minute,
 * 03:12:00.481 the millisecond): -b takes its start and -e its end, so
 * that -e with a row's time as the CSV shows it keeps that row. A local time
 * the clock skips (the hour a daylight-saving change leaves out) is no
 * time; for one it shows twice, the C library picks (an offset says
 * which: ISO 8601's +hh:mm).
 */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <strings.h>
#include <time.h>

#include "relog.h"

/* Digits at *s, at least min and at most max of them, into *v. */
static int num(const char **s, int min, int max, int *v)
{
    int n = 0, x = 0;
    while (n < max && isdigit((unsigned char)**s)) {
        x = x * 10 + (**s - '0');
        (*s)++, n++;
    }
    if (n < min || isdigit((unsigned char)**s))
        return -1;
    *v = x;
    return 0;
}

/* ":ss[.fffffffff]" after the minutes, each optional; *unit: the length
 * of the last unit written (it stays a minute without seconds). */
static int seconds(const char **s, int *sec, long *ns, uint64_t *unit)
{
    *sec = 0, *ns = 0;
    if (**s != ':')
        return 0;
    (*s)++;
    if (num(s, 2, 2, sec))
        return -1;
    *unit = 1000000000ull;
    if (**s != '.')
        return 0;
    (*s)++;
    long scale = 100000000;
    int digits = 0;
    while (isdigit((unsigned char)**s)) {
        if (++digits > 9)
            return -1;
        *ns += (**s - '0') * scale;
        scale /= 10;
        *unit /= 10;
        (*s)++;
    }
    return digits ? 0 : -1;
}

/* Calendar fields to ns since the epoch: local time (zone 0), or UTC
 * shifted by off_min minutes (zone 1). The fields must name a real time:
 * mktime/timegm normalise "February 30" and a skipped local hour, so the
 * result is converted back and compared. */
static int to_ns(int y, int mo, int d, int h, int mi, int sec, long ns, int zone, int off_min,
                 uint64_t *out)
{
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
        return -1;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = sec,
                    .tm_isdst = -1};
    struct tm back;
    time_t t;
    if (zone) {
        t = timegm(&tm);
        if (t == (time_t)-1 || !gmtime_r(&t, &back))
            return -1;
    } else {
        t = mktime(&tm);
        if (t == (time_t)-1 || !localtime_r(&t, &back))
            return -1;
    }
    if (back.tm_year != y - 1900 || back.tm_mon != mo - 1 || back.tm_mday != d ||
        back.tm_hour != h || back.tm_min != mi || back.tm_sec != sec)
        return -1;
    long long secs = (long long)t - (long long)off_min * 60;
    if (secs < 0)
        return -1;
    *out = (uint64_t)secs * 1000000000ull + (uint64_t)ns;
    return 0;
}

static int iso(const char *s, uint64_t *out, uint64_t *unit)
{
    int y, mo, d, h, mi, sec, zone = 0, off = 0;
    *unit = 60000000000ull;
    long ns;
    if (num(&s, 4, 4, &y) || *s++ != '-' || num(&s, 2, 2, &mo) || *s++ != '-' ||
        num(&s, 2, 2, &d) || (*s != 'T' && *s != 't' && *s != ' '))
        return -1;
    s++;
    if (num(&s, 2, 2, &h) || *s++ != ':' || num(&s, 2, 2, &mi) || seconds(&s, &sec, &ns, unit))
        return -1;
    if (*s == 'Z' || *s == 'z') {
        zone = 1, s++;
    } else if (*s == '+' || *s == '-') {
        int sign = *s++ == '-' ? -1 : 1, oh, om;
        if (num(&s, 2, 2, &oh))
            return -1;
        if (*s == ':')
            s++;
        if (num(&s, 2, 2, &om) || oh > 23 || om > 59)
            return -1;
        zone = 1, off = sign * (oh * 60 + om);
    }
    return *s ? -1 : to_ns(y, mo, d, h, mi, sec, ns, zone, off, out);
}

static int relog_form(const char *s, uint64_t *out, uint64_t *unit)
{
    int y, mo, d, h, mi = 0, sec = 0;
    long ns = 0;
    *unit = 3600000000000ull;
    if (num(&s, 1, 2, &mo) || *s++ != '/' || num(&s, 1, 2, &d) || *s++ != '/' ||
        num(&s, 4, 4, &y) || *s++ != ' ')
        return -1;
    while (*s == ' ')
        s++;
    if (num(&s, 1, 2, &h))
        return -1;
    if (*s == ':') {
        s++;
        *unit = 60000000000ull;
        if (num(&s, 2, 2, &mi) || seconds(&s, &sec, &ns, unit))
            return -1;
    }
    if (*s == ' ')
        s++;
    if (*s) { /* AM or PM: a 12-hour clock, 12AM is midnight */
        int pm = strcasecmp(s, "PM") == 0;
        if (!pm && strcasecmp(s, "AM") != 0)
            return -1;
        if (h < 1 || h > 12)
            return -1;
        h = h % 12 + (pm ? 12 : 0);
    }
    return to_ns(y, mo, d, h, mi, sec, ns, 0, 0, out);
}

int timearg_parse(const char *s, uint64_t *ns, uint64_t *unit_ns)
{
    return iso(s, ns, unit_ns) == 0 || relog_form(s, ns, unit_ns) == 0 ? 0 : -1;
}

int in_range(const relog_opts *o, uint64_t t)
{
    return (!o->has_begin || t >= o->begin_ns) && (!o->has_end || t <= o->end_ns);
}
