/*
 * lib/consumer/read_hook.h - libpcw-internal: a segment read that hands
 * each validated run of rows to a function while the rows are still in
 * the cache (the query layer's collection that visits as it reads,
 * pcw_pdh_collect_rows in lib/query/fused.c). Not installed.
 */
#ifndef PCW_CONSUMER_READ_HOOK_H
#define PCW_CONSUMER_READ_HOOK_H

#include <stddef.h>

#include "pcw/consumer.h"

/* Rows [from, to) of snap are a validated run: each row is one consistent
 * copy of an instance that was live while it was copied, with its id.
 * They stay as they are unless the read fails after this call (then the
 * read rolls every row back). Runs come in row order, but not every row
 * is in one: rows read slot by slot (after a close raced the run's copy,
 * or in seqcount countersets) are not handed over, and a read with names
 * that finds its name cache stale starts over from its first row, so a
 * caller that needs every row once checks that `from` continues where the
 * last `to` ended. */
typedef void (*pcw__run_fn)(void *arg, const pcw_snapshot *snap, size_t from, size_t to);

/* pcw_segment_read, calling fn(arg, ...) after each validated run.
 *
 * Concurrency: fn runs on the calling thread, inside the read and its
 * SIGBUS guard (lib/consumer/guard.c): it must return (no longjmp out),
 * must not touch the segment's mapping, and must not use snap except to
 * read rows [0, to). It may read other segments (guards nest). */
int pcw__segment_read_runs(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                           unsigned flags, pcw__run_fn fn, void *arg);

#endif
