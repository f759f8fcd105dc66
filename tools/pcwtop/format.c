/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/format.c - numbers, times and names as pcwtop shows them
 * (format.h), for the screen and batch mode alike.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "common/name.h"

#include "../common/escape.h"
#include "format.h"
#include "model.h"

/* Suffixes of powers of 1000 above and below one. */
static const char big[] = {'k', 'M', 'G', 'T', 'P', 'E'};
static const char small_sfx[] = {'m', 'u', 'n'};

size_t fmt_number(char *buf, size_t cap, double v, int integral, int small)
{
    if (!isfinite(v))
        return (size_t)snprintf(buf, cap, "%s", v != v ? "nan" : v > 0 ? "inf" : "-inf");
    const char *sign = v < 0 ? "-" : "";
    double a = fabs(v);
    /* Integers below 100000 as they are: counts read best that way. */
    if (integral && a < 100000.0 && a == floor(a))
        return (size_t)snprintf(buf, cap, "%s%.0f", sign, a);
    if (a == 0.0)
        return (size_t)snprintf(buf, cap, "0");
    int e = 0; /* powers of 1000 */
    if (a >= 999.95) {
        while (e < (int)sizeof big && a >= 999.95) {
            a /= 1000.0;
            e++;
        }
    } else if (a < 0.9995 && small) {
        while (-e < (int)sizeof small_sfx && a < 0.9995) {
            a *= 1000.0;
            e--;
        }
    } else if (a < 0.0005) {
        return (size_t)snprintf(buf, cap, "%s%.1e", sign, a);
    }
    /* Four significant digits: 1.234, 12.34, 123.4 */
    int decimals = a >= 99.995 ? 1 : a >= 9.9995 ? 2 : 3;
    char suffix[2] = {0, 0};
    if (e > 0)
        suffix[0] = big[e - 1];
    else if (e < 0)
        suffix[0] = small_sfx[-e - 1];
    return (size_t)snprintf(buf, cap, "%s%.*f%s", sign, decimals, a, suffix);
}

size_t fmt_value(char *buf, size_t cap, double v, const char *unit, int raw)
{
    char num[32];
    if (raw) {
        /* Raw means exact: every digit, no suffix (a double holds every
         * integer below 2^53; a raw value is never fractional). */
        if (v == floor(v) && fabs(v) < 1e20)
            return (size_t)snprintf(buf, cap, "%.0f", v);
        fmt_number(num, sizeof num, v, 1, 0);
        return (size_t)snprintf(buf, cap, "%s", num);
    }
    int seconds = strcmp(unit, "s") == 0, percent = strcmp(unit, "%") == 0;
    if (percent && fabs(v) < 999.95) /* no k or m before a percent sign */
        snprintf(num, sizeof num, "%.*f", fabs(v) >= 99.995 ? 1 : fabs(v) >= 9.9995 ? 2 : 3, v);
    else
        fmt_number(num, sizeof num, v, v == floor(v) && !seconds, seconds);
    return (size_t)snprintf(buf, cap, "%s%s", num, unit);
}

const char *fmt_status(int status)
{
    switch (status) {
    case PCW_CSTATUS_VALID:
        return "";
    case PCW_CSTATUS_NEW_DATA_NEEDED:
        return "..."; /* the second sample is on its way */
    case PCW_CSTATUS_NO_INSTANCE:
        return "gone";
    case PCW_CSTATUS_PROVIDER_GONE:
        return "no answer";
    case PCW_CSTATUS_RESET:
        return "reset";
    case PCW_CSTATUS_OVERFLOW:
        return "overflow";
    case PCW_CSTATUS_INCONSISTENT:
        return "invalid";
    default:
        return "-";
    }
}

size_t fmt_interval(char *buf, size_t cap, uint64_t ns)
{
    double s = (double)ns / 1e9;
    if (s < 10 && s != floor(s))
        return (size_t)snprintf(buf, cap, "%.1fs", s);
    if (s < 120)
        return (size_t)snprintf(buf, cap, "%.0fs", s);
    if (s < 7200)
        return (size_t)snprintf(buf, cap, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    return (size_t)snprintf(buf, cap, "%.0fh%02.0fm", floor(s / 3600), floor(fmod(s, 3600) / 60));
}

size_t fmt_cost(char *buf, size_t cap, uint64_t ns)
{
    if (ns < 1000000)
        return (size_t)snprintf(buf, cap, "%.0f us", (double)ns / 1e3);
    if (ns < 10000000)
        return (size_t)snprintf(buf, cap, "%.2f ms", (double)ns / 1e6);
    if (ns < 1000000000)
        return (size_t)snprintf(buf, cap, "%.0f ms", (double)ns / 1e6);
    return (size_t)snprintf(buf, cap, "%.2f s", (double)ns / 1e9);
}

size_t fmt_clock(char *buf, size_t cap, uint64_t real_ns)
{
    time_t t = (time_t)(real_ns / 1000000000ull);
    struct tm tm;
    localtime_r(&t, &tm);
    return strftime(buf, cap, "%H:%M:%S", &tm);
}

size_t fmt_datetime(char *buf, size_t cap, uint64_t real_ns)
{
    time_t t = (time_t)(real_ns / 1000000000ull);
    struct tm tm;
    localtime_r(&t, &tm);
    size_t n = strftime(buf, cap, "%Y-%m-%d %H:%M:%S", &tm);
    if (n && n < cap)
        n += (size_t)snprintf(buf + n, cap - n, ".%03u",
                              (unsigned)(real_ns % 1000000000ull / 1000000u));
    return n;
}

int fmt_parse_time(const char *s, uint64_t day_of, uint64_t *real_ns)
{
    static const char *const full[] = {"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
                                       "%Y-%m-%dT%H:%M"};
    static const char *const clock[] = {"%H:%M:%S", "%H:%M"};
    while (*s == ' ')
        s++;
    struct tm tm;
    for (size_t i = 0; i < sizeof full / sizeof full[0] + sizeof clock / sizeof clock[0]; i++) {
        int is_full = i < sizeof full / sizeof full[0];
        time_t day = (time_t)(day_of / 1000000000ull);
        memset(&tm, 0, sizeof tm);
        if (!is_full)
            localtime_r(&day, &tm), tm.tm_sec = 0; /* the date: the log's first day */
        const char *fmt = is_full ? full[i] : clock[i - sizeof full / sizeof full[0]];
        const char *end = strptime(s, fmt, &tm);
        if (!end)
            continue;
        while (*end == ' ')
            end++;
        if (*end)
            continue;
        tm.tm_isdst = -1;
        time_t t = mktime(&tm);
        if (t == (time_t)-1 || t < 0)
            return -1;
        *real_ns = (uint64_t)t * 1000000000ull;
        return 0;
    }
    return -1;
}

/* ---- names on a terminal --------------------------------------------------- */

int fmt_ascii;

int utf8_char_width(uint32_t c)
{
    /* A control character (the tools' one rule, tools/common/escape.h), or
     * not ASCII on a terminal that is not UTF-8: drawn as '?'. */
    if (esc_is_control((int32_t)c) || (fmt_ascii && c >= 0x80))
        return -1;
    int w = wcwidth((wchar_t)c);
    return w < 0 ? 1 : w;
}

size_t utf8_fit(const char *s, size_t len, int cols, int *width)
{
    size_t i = 0, fit = 0;
    int w = 0;
    while (i < len) {
        size_t at = i;
        int32_t c = pcw__utf8_next(s, len, &i);
        int cw = c < 0 ? 1 : utf8_char_width((uint32_t)c);
        if (c < 0)
            i = at + 1; /* a stray byte: one column ('?') */
        if (cw < 0)
            cw = 1;
        if (w + cw > cols)
            break;
        w += cw;
        fit = i;
    }
    if (width)
        *width = w;
    return fit;
}

int utf8_width(const char *s, size_t len)
{
    int w;
    utf8_fit(s, len, 1 << 30, &w);
    return w;
}

size_t utf8_pad(char *buf, size_t cap, const char *s, size_t len, int cols, int right)
{
    int w;
    /* One column kept for the ellipsis when the name does not fit. */
    size_t fit = utf8_fit(s, len, cols, &w);
    int cut = fit < len;
    if (cut)
        fit = utf8_fit(s, len, cols - 1, &w);
    size_t need = fit + (size_t)(cols - w) + (cut ? 3 : 0) + 1, n = 0;
    if (need > cap)
        return 0;
    int pad = cols - w - cut;
    if (right)
        for (; pad > 0; pad--)
            buf[n++] = ' ';
    for (size_t i = 0; i < fit;) {
        size_t at = i;
        int32_t c = pcw__utf8_next(s, fit, &i);
        if (c < 0 || utf8_char_width((uint32_t)c) < 0) {
            buf[n++] = '?';
            if (c < 0)
                i = at + 1;
        } else {
            memcpy(buf + n, s + at, i - at);
            n += i - at;
        }
    }
    if (cut && fmt_ascii) {
        buf[n++] = '~';
    } else if (cut) {
        memcpy(buf + n, "\xe2\x80\xa6", 3); /* U+2026 */
        n += 3;
    }
    for (; pad > 0; pad--)
        buf[n++] = ' ';
    buf[n] = 0;
    return n;
}

/* ---- table cells ----------------------------------------------------------- */

int fmt_col_width(const char *name)
{
    int w = utf8_width(name, strlen(name));
    return w < FMT_MIN_CELL ? FMT_MIN_CELL : w > FMT_MAX_CELL ? FMT_MAX_CELL : w;
}

size_t fmt_col_title(char *buf, size_t cap, const char *name, uint32_t stat_len, int cols)
{
    size_t len = strlen(name);
    int w = utf8_width(name, len);
    if (w <= cols || stat_len == 0 || stat_len >= len || cols <= (int)stat_len + 1)
        return (size_t)snprintf(buf, cap, "%s", name);
    /* The counter's name cut with an ellipsis, so the statistic stays. */
    char head[4 * 512 + 8];
    if (cols > 512)
        cols = 512;
    utf8_pad(head, sizeof head, name, len - stat_len, cols - (int)stat_len, 0);
    return (size_t)snprintf(buf, cap, "%s%s", head, name + len - stat_len);
}

size_t fmt_cell(char *buf, size_t cap, double v, int status, const char *unit, int raw)
{
    if (status == PCW_CSTATUS_VALID)
        return fmt_value(buf, cap, v, unit, raw);
    if (status == PCW_CSTATUS_ABOVE_RANGE) { /* v is a lower bound */
        buf[0] = '>';
        return cap > 1 ? 1 + fmt_value(buf + 1, cap - 1, v, unit, raw) : 0;
    }
    return (size_t)snprintf(buf, cap, "%s", fmt_status(status));
}

char fmt_mark(int state, int is_new)
{
    switch (state) {
    case TOP_ROW_GONE:
        return '-';
    case TOP_ROW_EXITED:
        return 'x';
    case TOP_ROW_NOANSWER:
        return '!';
    }
    return is_new ? '+' : ' ';
}

const char *fmt_instance_type(uint32_t t)
{
    const char *n = pcw_instance_type_name(t);
    return n ? n : "unknown";
}

const char *fmt_aggregate(uint32_t a)
{
    static const char *const n[] = {"undefined", "sum", "avg", "min", "max"};
    return a < sizeof n / sizeof n[0] ? n[a] : "unknown";
}
