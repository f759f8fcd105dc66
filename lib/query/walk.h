/* SPDX-License-Identifier: MIT */
/*
 * lib/query/walk.h - a handle's values all at once (walk.c), for the
 * collection that hands them over as it reads (collect_rows.c).
 */
#ifndef PCW_QUERY_WALK_H
#define PCW_QUERY_WALK_H

#include <stdint.h>

#include "pdh.h"
#include "sink.h"

/* visit_rows' block, in values: 128 instances of 16 counters, 16 KB of
 * values and 2 KB of statuses, which stay in the L1 cache between the
 * conversion and the callback. */
#define PCW__Q_BLOCK_VALUES 2048u

/* visit_rows' block (and visit's one instance): on the stack (18 KB, it
 * stays in the L1 cache while the callback reads it), or, for instances
 * of more values than it holds, one instance's worth from the heap. */
typedef struct pcw__q_block {
    double stack_v[PCW__Q_BLOCK_VALUES];
    uint8_t stack_s[PCW__Q_BLOCK_VALUES];
    double *v;
    uint8_t *s;
    size_t cap;
} pcw__q_block;

/* bl's room for the handle's widest instance (PCW_E_NO_MEMORY: none);
 * close frees what open took; the sink of blocks handed to fn. */
int pcw__q_block_open(pcw__q_block *bl, const pcw_pdh_counter *ctr);
void pcw__q_block_close(pcw__q_block *bl);
pcw__q_sink pcw__q_block_sink(pcw__q_block *bl, int (*fn)(const pcw_pdh_rows *, void *), void *arg);

/* Every value of the handle, instance by instance, into the sink: all
 * its selected counters, or (col >= 0) only the col-th of them. */
void pcw__q_cook_handle(const pcw_pdh_counter *ctr, int col, unsigned flags, pcw__q_sink *k);

/* ctr's one match, if its values are rows pcw__q_rows_contig converts: a
 * segment set in steady state without totals whose selected counters
 * (with these flags) are plain 8-byte values side by side; *off is the
 * first one's offset in the row. */
const pcw__q_match *pcw__q_contig_match(const pcw_pdh_counter *ctr, unsigned flags, uint32_t *off);

#endif /* PCW_QUERY_WALK_H */
