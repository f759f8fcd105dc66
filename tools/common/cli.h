/* SPDX-License-Identifier: MIT */
/*
 * tools/common/cli.h - what every tool's command line shares: the one
 * grammar of durations and the one usage error (docs/cli.md).
 *
 * A duration, wherever a tool takes one (pcwstat -si and --flush,
 * pcwtop -d and --timeout, pcwdump --watch and --timeout, pcw-exporter's
 * --web.request-timeout and --collector.timeout...), is any of:
 *   - a number: 5, 1.5, .25 - in the option's unit, seconds everywhere
 *     but where the option's name says otherwise (pcwdump --timeout:
 *     milliseconds, as it always was);
 *   - numbers with units, largest first, each unit once, as Prometheus
 *     and Go write them: 500ms, 2s, 1.5s, 1m30s, 1h30m, 2d (units ms, s,
 *     m, h, d);
 *   - typeperf's [[hh:]mm:]ss: 01:30, 1:00:00, 0:0.5 (hours and minutes
 *     whole, minutes and seconds below 60 after a colon, the seconds may
 *     have a fraction).
 * Digits and '.' only: no sign, exponent, space, "inf" or "nan", and
 * the locale's decimal point is not used (always '.'). Each option then
 * bounds the value (its man page says how).
 *
 * Concurrency: none; no state.
 */
#ifndef PCW_TOOLS_CLI_H
#define PCW_TOOLS_CLI_H

/* The exit status of a usage error, in every tool. */
#define CLI_EXIT_USAGE 2

/* Examples of the grammar, for the tools' messages. */
#define CLI_DURATION_FORMS "e.g. 5, 0.5, 500ms, 1m30s or 01:30"

/* The longest duration the grammar takes: 10 years (each option has its
 * own, smaller, limit). */
#define CLI_DURATION_MAX (3650.0 * 24 * 3600)

/* Parse duration s (the grammar above); a bare number is in units of
 * `bare_unit` seconds (1: seconds; 0.001: milliseconds). 0 and *secs, or
 * -1 when s is not a duration or is longer than CLI_DURATION_MAX. */
int cli_duration(const char *s, double bare_unit, double *secs);

/* "TOOL: MESSAGE" and "Try 'TOOL --help'." on stderr; returns
 * CLI_EXIT_USAGE. */
__attribute__((format(printf, 2, 3))) int cli_usage_error(const char *tool, const char *fmt, ...);

#endif /* PCW_TOOLS_CLI_H */
