/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/unreadable.h - the providers the exporter cannot read
 * (unreadable.c): segments, or whole provider folders, that discovery
 * finds but may not open - most often a provider that did not share with
 * the exporter's group. Each is logged once, with why and what to do, when
 * it is first seen (again after it went away and came back), and counted
 * (pcw_exporter_providers_unreadable).
 *
 * Concurrency: one thread at a time (the collector calls it under its
 * scrape lock).
 */
#ifndef PCW_EXPORTER_UNREADABLE_H
#define PCW_EXPORTER_UNREADABLE_H

#include <stddef.h>

#include <pcw/consumer.h>

typedef struct unreadable unreadable;

/* NULL when out of memory. */
unreadable *unreadable_open(void);
void unreadable_close(unreadable *u);

/* Walk what `con` reads (pcw_consumer_discover: it opens every segment, so
 * the collector calls this only when the provider folders changed), log
 * what is new among what cannot be read, and forget what went away. 0, or
 * -1 when out of memory (the previous list is kept). */
int unreadable_check(unreadable *u, pcw_consumer *con);

/* How many segments and folders could not be read at the last check. */
size_t unreadable_count(const unreadable *u);

#endif /* PCW_EXPORTER_UNREADABLE_H */
