/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/unreadable.h - the providers the exporter cannot read
 * (unreadable.c): segments, or whole provider folders, that discovery
 * finds but may not open - most often a provider that did not share with
 * the exporter's group. Each is logged once, with why and what to do, when
 * it is first seen (again after it went away and came back), and counted
 * (pcw_exporter_providers_unreadable). The reason is judged from the
 * file's own mode (a symlink is never followed) and the exporter's user
 * and every group it is in.
 *
 * Concurrency: one thread at a time (the collector calls it under its
 * scrape lock).
 */
#ifndef PCW_EXPORTER_UNREADABLE_H
#define PCW_EXPORTER_UNREADABLE_H

#include <stddef.h>
#include <stdint.h>

#include <pcw/consumer.h>

typedef struct unreadable unreadable;

/* NULL when out of memory. */
unreadable *unreadable_open(void);
void unreadable_close(unreadable *u);

/* Walk what `con` reads (pcw_consumer_discover: it opens every segment, so
 * the collector calls this only when the provider folders changed), log
 * what is new among what cannot be read, and forget what went away - until
 * deadline_ns (CLOCK_MONOTONIC) at most. 0; 1 when the deadline cut the
 * walk short (nothing logged, the previous list kept: call again later);
 * -1 when out of memory (the previous list is kept). */
int unreadable_check(unreadable *u, pcw_consumer *con, uint64_t deadline_ns);

/* How many segments and folders could not be read at the last check. */
size_t unreadable_count(const unreadable *u);

#endif /* PCW_EXPORTER_UNREADABLE_H */
