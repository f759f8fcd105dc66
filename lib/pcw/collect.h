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
 * connection close and removes them).
 *
 * Concurrency: as pcw/consumer.h - one thread at a time per pcw_consumer.
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
                                            pcw_wildcard_match); NULL or "*" = all */
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
     * PCW_E_PROTOCOL, or the error a control callback returned) and its
     * counterset callback's informational return value. */
    int *source_status PCW__ZERO;
    int *callback_status PCW__ZERO;
} pcw_collect_report;

/* Collect every instance of a merged counterset that matches `q` (NULL =
 * PCW_QUERY_ALL) from all its providers into `snap` (flags: PCW_READ_*).
 * Each sample's `source` is its segment index. Returns PCW_OK when the call
 * itself worked, even if some providers failed (see `rep`, may be NULL);
 * PCW_E_INVALID_PARAMETER or PCW_E_NO_MEMORY otherwise. Segment instances
 * and callback instances of one counterset both appear (mixed model); ids
 * are the provider's business and may coincide between the two. */
int pcw_consumer_collect(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                         pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep);

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

/* Change the time limit for providers' answers (ms; 0 = the 1000 default). */
void pcw_consumer_set_timeout(pcw_consumer *c, uint32_t ms);

/* One segment, one counterset, one call: as pcw_consumer_collect (or, with
 * `enumerate`, pcw_consumer_enumerate) over a connection made for the call
 * and closed after it. For tools that open a single segment. Returns the
 * provider's status (PCW_E_TIMEOUT etc.); *callback_status (may be NULL)
 * gets its callback's informational return value. */
int pcw_segment_collect(pcw_segment *seg, const pcw_counterset *cs, const pcw_query *q,
                        pcw_snapshot *snap, unsigned flags, int enumerate, uint32_t timeout_ms,
                        int *callback_status);

/* Does this sample match the query? (Used on every source; exported for
 * tools that filter snapshots themselves.) */
int pcw_query_match(const pcw_query *q, uint32_t id, const char *name, size_t name_len);

#ifdef __cplusplus
}
#endif
#endif /* PCW_COLLECT_H */
