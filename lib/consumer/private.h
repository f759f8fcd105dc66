/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/private.h - lib/consumer's private interface: what it
 * offers the other libraries of libpcw (lib/query) beyond the public
 * pcw/consumer.h. They include this header ("consumer/private.h") and no
 * other of lib/consumer; lib/consumer's own files include it where they
 * define what it declares.
 *
 * Private: not installed (the Makefile installs lib/pcw only), not
 * exported (pcw__ names: libpcw.map exports pcw_[a-z0-9]* alone), free
 * to change with any release.
 *
 *   - a segment read that hands each validated run of rows to a function
 *     while the rows are still in the cache, and can convert them to
 *     doubles as it copies them (read.c; the query layer's collection
 *     that visits as it reads, pcw_pdh_collect_rows, and its histograms
 *     cooked as read);
 *   - whether a refresh would find something new in a container
 *     (consumer.c; the query layer's change detection).
 */
#ifndef PCW_CONSUMER_PRIVATE_H
#define PCW_CONSUMER_PRIVATE_H

#include <stddef.h>

#include "pcw/consumer.h"

/* The most rows one run holds (the read validates this many slots of a
 * chunk at a time): a conversion buffer of PCW__RUN_ROWS x words doubles
 * takes every run of a counterset whose rows have `words` 8-byte words. */
#define PCW__RUN_ROWS 1024u

/* Rows [from, to) of snap are a validated run: each row is one consistent
 * copy of an instance that was live while it was copied, with its id.
 * They stay as they are unless the read fails after this call (then the
 * read rolls every row back). Runs come in row order, but not every row
 * is in one: rows read slot by slot (after a close raced the run's copy,
 * or in seqcount countersets) are not handed over, and a read with names
 * that finds its name cache stale starts over from its first row, so a
 * caller that needs every row once checks that `from` continues where the
 * last `to` ended.
 *
 * cvt: NULL, or the run's words converted to doubles as it was copied -
 * cvt[(r - from) * words + w] is (double) of word w of row r, exactly as
 * C converts a uint64_t (words = snap->data_size / 8). */
typedef void (*pcw__run_fn)(void *arg, const pcw_snapshot *snap, size_t from, size_t to,
                            const double *cvt);

/* pcw_segment_read, calling fn(arg, ...) after each validated run.
 *
 * cvt, cvt_cap: NULL and 0, or room for cvt_cap doubles, 32-byte aligned.
 * Then a run of at most cvt_cap words in all is converted as it is
 * copied, where the read copies with 16-byte loads (CPUs with AVX2, not
 * in TSan builds nor with $PCW_NO_AVX2: read.c, vec_cpu) - one pass over
 * the rows instead of two - and fn gets it in cvt; a run that does not
 * fit, a read that streams its rows (larger than the last-level cache), a
 * run in which a word of 2^52 or more went through the fast conversion
 * (exact only below) and the 8-byte copy give fn cvt == NULL. The buffer
 * is overwritten by each run.
 *
 * Concurrency: fn runs on the calling thread, inside the read and its
 * SIGBUS guard (lib/consumer/guard.c): it must return (no longjmp out),
 * must not touch the segment's mapping, and must not use snap except to
 * read rows [0, to). It may read other segments (guards nest). */
int pcw__segment_read_runs(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                           unsigned flags, pcw__run_fn fn, void *arg, double *cvt, size_t cvt_cap);

/* pcw__segment_read_runs where the caller copies each run's rows itself
 * (the query layer's histograms, lib/query/hist_fused.c, to take their
 * deltas in the pass that copies them): copy(arg, snap, first, src,
 * stride, len) copies the live rows [0, len) at src (stride bytes apart
 * in the mapping) into snap's rows [first, first + len), with
 * pcw__copy_delta_words (or _span) or pcw__copy_cmp_rows only, and returns
 * 1; or copies nothing and returns 0 (the read copies them). Called only
 * where the read copies with 16-byte loads (pcw__segment_read_runs says
 * where); like fn it runs inside the read, before the run is validated:
 * what it makes of the rows holds only once fn is called for them (a run
 * that fails is read again slot by slot, not through copy, and never
 * handed to fn). */
typedef int (*pcw__copy_fn)(void *arg, pcw_snapshot *snap, size_t first, const unsigned char *src,
                            size_t stride, uint32_t len);
int pcw__segment_read_runs_copy(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                                unsigned flags, pcw__run_fn fn, pcw__copy_fn copy, void *arg);
/* For copy: dst[0, n) = src[0, n), src read as the read reads the mapping
 * (whole words), dst written with non-temporal stores where it can (the
 * read ends with an sfence). With prev (n words of the last copy, private
 * memory): delta[i] = src[i] - prev[i], *sum = their sum mod 2^64, and the
 * OR of every delta[i] | prev[i] is returned (the caller's cheap check
 * that nothing went down: lib/query/histogram.c); without, 0. */
uint64_t pcw__copy_delta_words(uint64_t *dst, const uint64_t *src, const uint64_t *prev,
                               uint64_t *delta, size_t n, uint64_t *sum);
/* pcw__copy_delta_words with prev, and where the deltas are non-zero:
 * span[0] the first such i, span[1] 1 + the last (none: n and 0) - found
 * in the copy's loop, so the caller need not scan delta again. n < 2^32. */
uint64_t pcw__copy_delta_span(uint64_t *dst, const uint64_t *src, const uint64_t *prev,
                              uint64_t *delta, size_t n, uint64_t *sum, uint32_t span[2]);

/* For copy: nrows rows of `words` words, `stride` bytes apart at src, to
 * dst (side by side) as pcw__copy_delta_words copies them (plain stores),
 * each compared in the same pass with prev's row of its index (side by
 * side): bit at + j of changed (changed[(at + j) / 64] >> (at + j) % 64)
 * set when row j's copy differs from prev's row j in a word, cleared when
 * not (a recorder's change detection, lib/query/collect_raw.c). Returns
 * the rows that differ. */
size_t pcw__copy_cmp_rows(uint64_t *dst, const unsigned char *src, size_t stride,
                          const uint64_t *prev, size_t words, size_t nrows, uint64_t *changed,
                          size_t at);

/* For the query layer's change detection (lib/query/fetch.c): would a
 * pcw_consumer_refresh of c find something new in a container? 0 if c
 * does not look in containers (consumer.c). Cheap: no walk of /proc
 * (containers.h says what it costs). */
int pcw__consumer_containers_changed(pcw_consumer *c);

#endif /* PCW_CONSUMER_PRIVATE_H */
