/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/collector.h - one scrape: collect every exported
 * counterset through the query layer and write the exposition
 * (collector.c). No HTTP here: http.c serves what this writes, and the
 * benchmark (bench/export.c) calls it directly.
 *
 * Concurrency: a collector serialises scrapes with its own lock (a
 * pcw_pdh belongs to one thread at a time); any thread may call
 * collector_scrape. A scrape that cannot take the lock before its deadline
 * gives up.
 */
#ifndef PCW_EXPORTER_COLLECTOR_H
#define PCW_EXPORTER_COLLECTOR_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "expo.h"

typedef struct collector_options {
    const char *dir;      /* providers' root: NULL = $PCW_DIR or /dev/shm */
    int all_users;        /* also other users' providers (their opt-in) */
    int containers;       /* also other mount namespaces', labelled */
    const char **include; /* counterset wildcards; none = every counterset */
    size_t ninclude;
    const char **exclude; /* counterset wildcards left out */
    size_t nexclude;
    unsigned classic_buckets; /* a histogram's finite classic bounds, at most
                                 (CLASSIC_MIN.. CLASSIC_MAX: classic.h) */
} collector_options;

typedef struct collector collector;

/* Errors the exporter counts (pcw_exporter_errors_total{cause=...}). */
enum {
    CAUSE_COLLECT,         /* a collection failed as a whole (out of memory) */
    CAUSE_PROVIDER,        /* a provider's part failed (not a timeout) */
    CAUSE_COLLISION,       /* a metric family left out: its name is taken */
    CAUSE_DUPLICATE,       /* a series left out: its labels are taken */
    CAUSE_BUSY,            /* a scrape waited for another past its deadline */
    CAUSE_ENCODING,        /* compressing a response failed */
    CAUSE_AUTH,            /* a request with wrong or no credentials */
    CAUSE_AUTH_LIMITED,    /* refused: its address used its bcrypts (auth.h) */
    CAUSE_AUTH_BUSY,       /* refused: the bcrypt queue past its deadline */
    CAUSE_REQUEST_TIMEOUT, /* a connection closed: no whole request in time */
    CAUSE_SHED,            /* a connection closed: its slot went to a newer one */
    CAUSE_MEMORY,          /* a scrape refused: responses held the memory limit */
    CAUSE_COUNT_
};

int collector_open(collector **out, const collector_options *o);
void collector_close(collector *c);

/* One scrape into `out` (appended) in `format` (EXPO_TEXT,
 * EXPO_OPENMETRICS or EXPO_PROTO): catch up with providers, collect, write every series,
 * then the exporter's own metrics. Callback countersets are waited for
 * until `deadline_ns` (CLOCK_MONOTONIC); what is late is left out and
 * counted. Returns 0; -1 when out of memory; -2 when another scrape held
 * the collector until the deadline (nothing written). */
int collector_scrape(collector *c, ebuf *out, int format, uint64_t deadline_ns);

/* Count an error seen outside a scrape (the HTTP layer's). Any thread. */
void collector_count(collector *c, int cause);

/* mono_ns(): CLOCK_MONOTONIC in nanoseconds (clock.h). */

/* Lock m, waiting until deadline_ns (CLOCK_MONOTONIC) at most: 0, or
 * non-zero (ETIMEDOUT) when it is still held then. */
int lock_until(pthread_mutex_t *m, uint64_t deadline_ns);

#endif /* PCW_EXPORTER_COLLECTOR_H */
