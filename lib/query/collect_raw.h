/* SPDX-License-Identifier: MIT */
/*
 * lib/query/collect_raw.h - a collection that hands a recorder the raw
 * rows of one handle's counterset as the read validates them
 * (collect_raw.c; issue 28's recorder, lib/history's row samples).
 *
 * Private (pcw__q_ names, not exported, not installed): the recorders in
 * this tree (bench/history_record.c) include it.
 */
#ifndef PCW_QUERY_COLLECT_RAW_H
#define PCW_QUERY_COLLECT_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "../history/history.h"
#include "pcw/pdh.h"

/* A run of a handle's instances: `nrows` rows of `stride` bytes, each the
 * instance's counters as 8-byte words (word k is counter k), read at
 * time_ns (CLOCK_MONOTONIC: its provider's read). rows NULL: nrows
 * instances without a value this time (their provider did not answer).
 * Runs come in the order of the handle's instances (pcw_pdh_get_value's
 * i / pcw_pdh_counter_count... the instance part of value i * counters). */
typedef struct pcw__q_raw_rows {
    const unsigned char *rows;
    size_t nrows;
    uint32_t stride;
    uint64_t time_ns;
    /* NULL, or (pcw__q_collect_raw_cmp) which rows differ from the
     * caller's last rows: bit changed_at + j (changed[(changed_at + j) /
     * 64] >> (changed_at + j) % 64) set when row j differs in a word from
     * prev's row of its index, clear when it is the same. */
    const uint64_t *changed;
    size_t changed_at;
} pcw__q_raw_rows;

/* pcw_pdh_collect, handing ctr's rows to fn as they are read when the
 * counterset is steady (the same instances as at the last sample, read
 * without names: collect_rows.c's conditions), else after the collection
 * from its sample. A call with nrows 0 and rows NULL: forget the runs
 * handed over so far (the collection did not end as it began); the rows
 * follow again. fn returning non-zero stops the handover (not the
 * collection).
 *
 * ctr must select counters of one counterset whose counters are all
 * 8-byte words side by side (at most PCW__HIST_ROW_WORDS, no histogram):
 * a row is all of them, selected or not (a fraction's base among them),
 * and the recorder logs a series for each. Else PCW_E_INVALID_PARAMETER
 * before collecting (the recorder logs such handles value by value).
 * Totals of the handle come as instances without a value (rows NULL: the
 * recorder logs them value by value). Returns pcw_pdh_collect's status. */
int pcw__q_collect_raw(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr,
                       int (*fn)(const pcw__q_raw_rows *rows, void *arg), void *arg);

/* pcw__q_collect_raw, each row handed over during the read also compared
 * with prev's row of its index in the pass that copies it (one pass over
 * the rows instead of a copy and a compare): a run so compared comes with
 * `changed` (pcw__q_raw_rows), bits in the caller's `changed` (room for
 * prev_rows bits), which stay until the caller's next use of it. prev:
 * prev_rows rows of prev_words words, side by side (a recorder's words of
 * the last sample: lib/history's pcw__hist_writer_words); a read whose
 * rows are of another width (the counterset changed since the caller
 * sized prev) compares nothing, so prev is never read past its end; rows
 * beyond prev_rows, and runs handed over
 * after the read (a restart, a sample not steady), come without. fn may
 * change prev's rows of the runs it was handed, no others (the rows after
 * are compared when they are read). prev or changed NULL:
 * pcw__q_collect_raw. */
int pcw__q_collect_raw_cmp(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, const uint64_t *prev,
                           size_t prev_rows, size_t prev_words, uint64_t *changed,
                           int (*fn)(const pcw__q_raw_rows *rows, void *arg), void *arg);

/* The rows of ctr from the last collection, handed to fn as
 * pcw__q_collect_raw hands them when it cannot do so during the read (runs
 * in the order of the handle's instances; rows NULL: no value). For a
 * recorder of several handles: one collection fuses one handle's rows,
 * the others are handed over after it. fn returning non-zero stops.
 * PCW_E_INVALID_PARAMETER as pcw__q_collect_raw (nothing handed over). */
int pcw__q_raw_sample(const pcw_pdh_counter *ctr, int (*fn)(const pcw__q_raw_rows *rows, void *arg),
                      void *arg);

/* Can ctr's rows be handed over (its counterset bound now)? The width of
 * its rows in words (the counterset's counters), or 0. */
uint32_t pcw__q_raw_width(const pcw_pdh_counter *ctr);

/* 1 when ctr's rows from the last collection are its sources' rows whole
 * and in order (the steady state), so that pcw__q_raw_sample hands them
 * over a run a source without a look at each instance; 0 when it walks
 * the handle's instances. For the tests: the runs are the same either
 * way, only the work differs. Any thread that may use the pcw_pdh. */
int pcw__q_raw_by_source(const pcw_pdh_counter *ctr);

/* Counter k's raw sample as lib/history's row layout (its recipe: the
 * counter's word, the second value's clock or word, multi, frequency,
 * status): 0, or -1 when the recipe needs more than a layout says (a
 * system time in a counterset's own ticks: pcw_raw's second computed from
 * a frequency) - such a handle is logged value by value. */
int pcw__q_raw_layout(const pcw_pdh_counter *ctr, uint32_t k, pcw__hist_layout *out);

#endif /* PCW_QUERY_COLLECT_RAW_H */
