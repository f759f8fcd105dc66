/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/log.h - the exporter's log, as Prometheus exporters
 * write it: one line per event on stderr, logfmt
 * (ts=... level=info msg="Listening on" address=127.0.0.1:10158) or JSON,
 * below a level set by --log.level.
 *
 * Concurrency: any thread; each line is one write(2).
 */
#ifndef PCW_EXPORTER_LOG_H
#define PCW_EXPORTER_LOG_H

enum { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Set once, before threads start. */
void log_setup(int level, int json);
/* "debug", "info", "warn", "error" -> LOG_*; -1 if none. */
int log_level_parse(const char *s);
int log_enabled(int level);
/* One event: msg, then key/value string pairs, NULL-terminated:
 * xlog(LOG_INFO, "Listening on", "address", addr, NULL). */
void xlog(int level, const char *msg, ...) __attribute__((sentinel));

#endif /* PCW_EXPORTER_LOG_H */
