/* SPDX-License-Identifier: MIT */
/*
 * lib/query/fetch.h - the per-collection fetch (fetch.c): change
 * detection, binding the query's countersets, one sample of each.
 */
#ifndef PCW_QUERY_FETCH_H
#define PCW_QUERY_FETCH_H

#include <stdint.h>

#include "pcw/consumer.h"
#include "pdh.h"

/* What takes one set's rows as they are read (pcw_pdh_collect_rows,
 * collect_rows.c, sets q->rows for the length of one collection). The
 * fetch calls it and is never called back: when it reads `set` without
 * names, it reads each source with k->read - as pcw_segment_read,
 * appending to snap, with `gen` its segment's generation at the last
 * sample - and any other read of `set` (with names, a source not read)
 * it tells with k->cannot. */
struct pcw__q_row_sink {
    const pcw__q_set *set;
    int (*read)(pcw__q_row_sink *k, pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                unsigned flags, uint64_t gen);
    void (*cannot)(pcw__q_row_sink *k);
};

/* Re-read the provider list if it changed (or `force`), and bind every
 * set again: 1 when it was re-read, PCW_OK when nothing changed, or an
 * error. */
int pcw__q_refresh_if_changed(pcw_pdh *q, int force);
/* One sample of every referenced set into its snap[cur] (cur flipped). */
int pcw__q_fetch(pcw_pdh *q);
/* The same, for the referenced sets pcw__q_fetch_new_picks. */
int pcw__q_fetch_new(pcw_pdh *q);
/* The sets an expansion reads: those with no sample yet, and those only
 * the expansion holds (no handle's rates span their samples). */
static inline int pcw__q_fetch_new_picks(const pcw__q_set *s)
{
    return s->refs && (!s->ins.have_prev || s->expand_only);
}
/* Can s keep last time's instance mapping? Only if every provider read
 * now is the one read last time, in the same place, with the same row
 * count, and its segment's instance list did not change from before the
 * last read to after this one (generations only grow). */
int pcw__q_unchanged(const pcw__q_set *s);
/* The identity of a provider: its own provider_id, or made of its pid
 * and start time. Never 0. */
uint64_t pcw__q_provider_id(const pcw_provider_info *info);
/* Bind s to the counterset of its name the consumer knows now (copies
 * of its metadata; s->m NULL if none). */
int pcw__q_bind(pcw_pdh *q, pcw__q_set *s);
void pcw__q_set_free(pcw__q_set *s);
/* The set of that name (case-insensitively), created when `create`;
 * NULL: none, or out of memory. */
pcw__q_set *pcw__q_set_get(pcw_pdh *q, const char *name, int create);

#endif /* PCW_QUERY_FETCH_H */
