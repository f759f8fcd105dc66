/* SPDX-License-Identifier: MIT */
/*
 * pcw/collect.h - libpcw: collect countersets whatever their model (segment
 * instances, callback instances, or both), with PCW's masks, and the
 * consumer's side of PERFLIB's query notifications. Link with
 * `pkg-config --libs pcw`.
 *
 * A callback counterset (PCW_CSET_F_CALLBACK) has its instances produced on
 * demand by the provider's callback: these calls ask each provider over its
 * control socket, in parallel, and wait at most the consumer's time limit
 * (pcw_consumer_options.timeout_ms, default 1000 ms). A provider that does
 * not answer in time, refuses, or whose control callback fails, has its part
 * of the result missing and its status says why; the other providers' parts
 * arrive regardless. A provider with a control callback (PCW_SEG_F_CONTROL)
 * is told COLLECT_START before its segment is read and COLLECT_END after.
 *
 * Masks are applied to every instance from every source: the snapshot holds
 * only instances whose id and name match, and counters outside the counter
 * mask read as zero, whatever the provider's callback did.
 *
 * Connections persist in the pcw_consumer between calls: counters added by
 * pcw_consumer_add_counter stay added at the provider until removed, the
 * consumer is closed, or its process ends (the provider sees the
 * connection close and removes them). A connection the provider closes
 * meanwhile - silent for PCW_CTL_ADDED_IDLE_TIMEOUT_MS, or shed to make
 * room for another consumer (docs/control-channel.md, "Connection slots")
 * - is made again on the next call, which first adds again every counter
 * the provider had accepted on it: the provider sees REMOVE_COUNTER, then
 * ADD_COUNTER, and the caller nothing.
 *
 * Concurrency: as pcw/consumer.h - one thread at a time per pcw_consumer.
 * NULL arguments: as pcw/consumer.h - PCW_E_INVALID_PARAMETER for a NULL
 * pcw_consumer, counterset, segment or snapshot; a NULL query is
 * PCW_QUERY_ALL, a NULL report or status pointer is not written.
 */
#ifndef PCW_COLLECT_H
#define PCW_COLLECT_H

#include "consumer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What to collect (PCW_MASK_INFORMATION). */
typedef struct pcw_query {               /* PCW__ZERO: pcw/types.h */
    uint64_t counter_mask PCW__ZERO;     /* bit i = the counterset's i-th counter; bit
                                            63 also covers every counter after the
                                            64th. ~0 (or 0, read as ~0) = all */
    uint32_t instance_id PCW__ZERO;      /* PCW_ANY_INSTANCE_ID = any */
    const char *instance_mask PCW__ZERO; /* wildcard ('*', '?', case-insensitive,
                                            pcw__wildcard_match); NULL or "*" = all */
} pcw_query;
#define PCW_QUERY_ALL                                                                              \
    {                                                                                              \
        ~0ull, 0xFFFFFFFFu, "*"                                                                    \
    }

/* Per-provider outcome of one call. */
typedef struct pcw_collect_report { /* PCW__ZERO: pcw/types.h */
    size_t sources PCW__ZERO;       /* providers asked (the merged counterset's sources) */
    size_t failed PCW__ZERO;        /* providers whose part is missing */
    size_t timed_out PCW__ZERO;     /* ...of which: no answer within the time limit */
    int first_error PCW__ZERO;      /* the first failed provider's status, PCW_OK if none */
    /* Optional, caller-owned, [sources] entries: each source's status
     * (PCW_OK, PCW_E_TIMEOUT, PCW_E_PERMISSION, PCW_E_PROVIDER_EXITED,
     * PCW_E_CONNECTIONS_FULL, PCW_E_PROTOCOL, or the error a control
     * callback returned) and its
     * counterset callback's informational return value. */
    int *source_status PCW__ZERO;
    int *callback_status PCW__ZERO;
} pcw_collect_report;

/* Collect every instance of a merged counterset that matches `q` (NULL =
 * PCW_QUERY_ALL) from all its providers into `snap` (flags: PCW_READ_*).
 * Each sample's `source` is its segment index. Returns PCW_OK when the call
 * itself worked, even if some providers failed (see `rep`, may be NULL);
 * PCW_E_INVALID_PARAMETER (nothing is asked, `snap` is untouched) or
 * PCW_E_NO_MEMORY otherwise. Segment instances and callback instances of
 * one counterset both appear (mixed model); ids are the provider's
 * business and may coincide between the two.
 *
 * The one-second rule, as PERFLIB applies it: a provider that does not
 * answer within the time limit has its callback instances missing (its
 * status is PCW_E_TIMEOUT, and its late answer is dropped when it comes),
 * but its segment instances are read all the same. A registration without
 * a callback then has its whole part, and status PCW_OK, even if its
 * provider (one with a control callback) never answered the COLLECT_START
 * that brackets the read. The same for a provider that refused the
 * consumer because its connection slots are full (PCW_E_CONNECTIONS_FULL).
 * */
int pcw_consumer_collect(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                         pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep);

/* One counterset of a pcw_consumer_collect_many call: the arguments of a
 * pcw_consumer_collect. */
typedef struct pcw_collect_item {
    const pcw_merged_counterset *m; /* a pcw_consumer_counterset(), or a copy
                                       with a subset of its sources */
    const pcw_query *q;             /* NULL = PCW_QUERY_ALL */
    pcw_snapshot *snap;             /* receives its instances */
    unsigned flags;                 /* PCW_READ_* */
    pcw_collect_report *rep;        /* may be NULL */
} pcw_collect_item;

/* Collect several countersets in one pass, each as pcw_consumer_collect
 * would, with one deadline for all: every provider is asked for every
 * item first - over one connection per provider, its requests sent one
 * after another and served in that order - then all the sockets are
 * polled together, each part being stored as soon as it is in. So a
 * collection waits at most the time limit in total, however many slow
 * providers and countersets it spans. (A provider with a control callback
 * holds at most 16 collections open per connection, PCW_CTL_MAX_HELD: its
 * later countersets are asked as earlier ones are released.)
 *
 * Items may share a snapshot only if their countersets have the same
 * data_size (their rows then follow each other, each provider's
 * contiguous). Returns PCW_OK when the call itself worked, whatever the
 * providers did (every item's `rep` says); PCW_E_INVALID_PARAMETER, before
 * anything is asked or any snapshot touched, for a NULL `c`, NULL `items`
 * with n > 0, an item without `m` or `snap`, or snapshots that cannot take
 * their items' rows; PCW_E_NO_MEMORY if some part could not be stored
 * (every item is still completed; the source that failed has status
 * PCW_E_NO_MEMORY in its report). n = 0 does nothing. */
int pcw_consumer_collect_many(pcw_consumer *c, const pcw_collect_item *items, size_t n);

/* Enumerate instances (ids and names) without values: as collect, but the
 * providers' callbacks are asked ENUMERATE_INSTANCES, their control
 * callbacks ENUM_INSTANCES, and every sample's data is zero. */
int pcw_consumer_enumerate(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                           pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep);

/* Add counter `counter_index` of `m` (for the instances `q` selects) to
 * this consumer's query: every provider of `m` that has a control channel
 * is told (its counterset callback gets ADD_COUNTER, its control callback
 * ADD_COUNTER). Returns PCW_OK or the first provider's error - a control
 * callback's error reaches the consumer, as in PERFLIB; `rep` details each.
 * Remove tells REMOVE_COUNTER for a counter added with the same arguments
 * (PCW_E_NOT_FOUND from a provider where it was not added). */
int pcw_consumer_add_counter(pcw_consumer *c, const pcw_merged_counterset *m,
                             uint32_t counter_index, const pcw_query *q, pcw_collect_report *rep);
int pcw_consumer_remove_counter(pcw_consumer *c, const pcw_merged_counterset *m,
                                uint32_t counter_index, const pcw_query *q,
                                pcw_collect_report *rep);

/* Change the time limit for providers' answers (ms; 0 = the 1000
 * default). NULL c: nothing. */
void pcw_consumer_set_timeout(pcw_consumer *c, uint32_t ms);

/* One segment, one counterset, one call: as pcw_consumer_collect (or, with
 * `enumerate`, pcw_consumer_enumerate) over a connection made for the call
 * and closed after it. For tools that open a single segment. Returns the
 * provider's status (PCW_E_TIMEOUT etc.); *callback_status (may be NULL)
 * gets its callback's informational return value. */
int pcw_segment_collect(pcw_segment *seg, const pcw_counterset *cs, const pcw_query *q,
                        pcw_snapshot *snap, unsigned flags, int enumerate, uint32_t timeout_ms,
                        int *callback_status);

/* Does this sample match the query (NULL: everything)? A NULL name is ""
 * when name_len is 0, and matches nothing otherwise. (Used on every
 * source; exported for tools that filter snapshots themselves.) */
int pcw_query_match(const pcw_query *q, uint32_t id, const char *name, size_t name_len);

#ifdef __cplusplus
}
#endif
#endif /* PCW_COLLECT_H */
