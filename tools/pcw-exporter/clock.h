/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/clock.h - the exporter's one clock: every deadline
 * (scrape, request, collection, lock) is CLOCK_MONOTONIC nanoseconds.
 * A file of its own, below the collector and what the collector calls
 * (unreadable.c), so that they do not call each other through it.
 */
#ifndef PCW_EXPORTER_CLOCK_H
#define PCW_EXPORTER_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t mono_ns(void);

#endif /* PCW_EXPORTER_CLOCK_H */
