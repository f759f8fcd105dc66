/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/format.h - how pcwtop writes numbers, times and names
 * (format.c): the screen and batch mode share it, so both show a value the
 * same way.
 *
 * Numbers: four significant digits with a power-of-1000 suffix (k M G T P E;
 * m u n for seconds below one), so every value fits a fixed width: "48",
 * "1.234k", "12.35M", "999.9G", "-3.500", "0.125", "120.0ms". Integers
 * below 100000 are written whole. Cooked values carry their unit ("/s",
 * "%", "s"); raw values are exact integers, every digit, without one
 * (the screen widens a column to its widest value).
 *
 * Names: UTF-8, measured in terminal columns (wcwidth: CJK characters take
 * two), cut with an ellipsis to fit; control characters and bytes that are
 * not UTF-8 are shown as '?'.
 *
 * Pure functions over the caller's buffers; fmt_ascii is set once by main
 * before any thread starts.
 */
#ifndef PCWTOP_FORMAT_H
#define PCWTOP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <pcw/pdh.h>

/* 1: the terminal's locale is not UTF-8: names are shown in ASCII ('?'
 * for anything else) and cut with '~'. */
extern int fmt_ascii;

/* v with four significant digits and a suffix ("1.234k"); integral: v is
 * an integer (written whole below 100000); small: below one, use m u n
 * ("12.00m") - for seconds; else three decimals. Returns the length
 * (snprintf's). */
size_t fmt_number(char *buf, size_t cap, double v, int integral, int small);
/* A value as a table cell: raw values as exact integers; cooked ones with their
 * unit: "12.35k/s", "45.20%" (never a prefix before %), "1.500ms". */
size_t fmt_value(char *buf, size_t cap, double v, const char *unit, int raw);
/* What a cell without a number shows for its pcw_cstatus. */
const char *fmt_status(int status);
/* "1.5s", "30s", "2m00s", "1h05m". */
size_t fmt_interval(char *buf, size_t cap, uint64_t ns);
/* A duration in us / ms / s: "250 us", "1.25 ms". */
size_t fmt_cost(char *buf, size_t cap, uint64_t ns);
/* Local time of day, "HH:MM:SS". */
size_t fmt_clock(char *buf, size_t cap, uint64_t real_ns);
/* Local date and time to the millisecond, "2026-11-27 03:12:05.250" (a
 * replayed sample's time). */
size_t fmt_datetime(char *buf, size_t cap, uint64_t real_ns);
/* A time typed at the replay's prompt, local time: "HH:MM[:SS]" (on the day
 * of `day_of`, a CLOCK_REALTIME ns) or "YYYY-MM-DD[ T]HH:MM[:SS]". 0 and
 * *real_ns, or -1 for anything else. */
int fmt_parse_time(const char *s, uint64_t day_of, uint64_t *real_ns);

/* Terminal columns of code point c (wcwidth), -1 for a control character. */
int utf8_char_width(uint32_t c);
/* Columns of a UTF-8 string of len bytes. */
int utf8_width(const char *s, size_t len);
/* The longest prefix of s (len bytes) that fits `cols` columns: its bytes,
 * and its columns in *width (may be NULL). */
size_t utf8_fit(const char *s, size_t len, int cols, int *width);
/* s cut (with an ellipsis) or padded with spaces to exactly `cols` columns,
 * left-aligned (or right-aligned when `right`), into buf (cap bytes; at
 * most 4 * cols + 4 are needed). Returns the bytes written, 0 if cap is
 * too small. */
size_t utf8_pad(char *buf, size_t cap, const char *s, size_t len, int cols, int right);

/* ---- table cells (screen and batch alike) ------------------------------- */

/* Width of a counter column named `name`: its width, at least
 * FMT_MIN_CELL (a value with unit fits) and at most FMT_MAX_CELL. */
#define FMT_MIN_CELL 9
#define FMT_MAX_CELL 14
int fmt_col_width(const char *name);
/* A column's title within `cols` columns (the screen and batch pad it): a
 * histogram statistic's ("Request Latency:p99.9", stat_len 6) keeps its
 * ":STAT" and cuts the counter's name ("Request…:p99.9"); any other is
 * left whole (utf8_pad cuts it at its end). */
size_t fmt_col_title(char *buf, size_t cap, const char *name, uint32_t stat_len, int cols);
/* A cell: the value with its unit, or what its status says (">4.096ks":
 * a histogram quantile at or above its range, PCW_CSTATUS_ABOVE_RANGE). */
size_t fmt_cell(char *buf, size_t cap, double v, int status, const char *unit, int raw);
/* The one-character mark of a row state (TOP_ROW_*) and newness:
 * ' ' live, '+' new, '-' gone, 'x' provider exited, '!' no answer. */
char fmt_mark(int state, int is_new);
/* "multipleAggregate"... for a pcw_instance_type. */
const char *fmt_instance_type(uint32_t t);
/* "sum", "avg", "min", "max", "undefined". */
const char *fmt_aggregate(uint32_t a);

#endif /* PCWTOP_FORMAT_H */
