/* SPDX-License-Identifier: MIT */
/*
 * tools/common/typeperf.c - typeperf's CSV/TSV fields (typeperf.h).
 */
#define _GNU_SOURCE 1
#include "typeperf.h"

#include <string.h>
#include <time.h>

#include "escape.h"

void typeperf_time(uint64_t realtime_ns, char *buf, size_t len)
{
    time_t secs = (time_t)(realtime_ns / 1000000000ull);
    unsigned ms = (unsigned)(realtime_ns % 1000000000ull / 1000000ull);
    struct tm tm;
    localtime_r(&secs, &tm);
    snprintf(buf, len, "%02d/%02d/%04d %02d:%02d:%02d.%03u", tm.tm_mon + 1, tm.tm_mday,
             tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

void typeperf_field(FILE *f, const char *s, int tty)
{
    fputc('"', f);
    for (const char *q; *s; s = q) {
        q = s + strcspn(s, "\"");
        if (tty)
            esc_put(f, s, (size_t)(q - s), ESC_BACKSLASH_LITERAL);
        else
            fwrite(s, 1, (size_t)(q - s), f);
        if (*q == '"') {
            fputs("\"\"", f);
            q++;
        }
    }
    fputc('"', f);
}

void typeperf_value(FILE *f, int valid, double v)
{
    if (valid)
        fprintf(f, "\"%.6f\"", v);
    else
        fputs("\"\"", f);
}
