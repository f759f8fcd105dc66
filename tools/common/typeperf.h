/* SPDX-License-Identifier: MIT */
/*
 * tools/common/typeperf.h - the pieces of typeperf's CSV and TSV that every
 * tool writing them shares (pcwstat live, pcwrelog from a log), so that
 * both write the same bytes: the time stamp, a quoted field, a value.
 */
#ifndef PCW_TOOLS_TYPEPERF_H
#define PCW_TOOLS_TYPEPERF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pcw/pdh.h>

/* "MM/dd/yyyy HH:mm:ss.fff" in local time, as typeperf writes it. */
void typeperf_time(uint64_t realtime_ns, char *buf, size_t len);

/* A field in double quotes (a quote inside doubled). On a terminal (tty),
 * its control characters are escaped visibly as well (escape.h; '\' kept,
 * it separates a path's parts): names come from providers. Into a file or
 * a pipe the CSV quoting alone, so the file has the names as they are. */
void typeperf_field(FILE *f, const char *s, int tty);

/* A value field: "%.6f" when valid (a pcw_cstatus of 0), else "" (no data:
 * first sample of a rate, instance gone, zero interval...). */
void typeperf_value(FILE *f, int valid, double v);

/* Does a value of this status have a number to write? A valid one, or a
 * histogram's quantile or max at the top of its range: the top bound, a
 * lower bound of the true value (pcwstat says so once on stderr). Live
 * (pcwstat) and replayed (pcwrelog) alike. */
static inline int typeperf_has_number(int status)
{
    return status == PCW_CSTATUS_VALID || status == PCW_CSTATUS_ABOVE_RANGE;
}

#endif /* PCW_TOOLS_TYPEPERF_H */
