/* SPDX-License-Identifier: MIT */
/*
 * lib/query/snaprows.h - the only place the query layer looks inside a
 * pcw_snapshot: a row's data, id and name, and which segment it came from.
 */
#ifndef PCW_QUERY_SNAPROWS_H
#define PCW_QUERY_SNAPROWS_H

#include "pcw/consumer.h"

static inline const unsigned char *pcw__q_row(const pcw_snapshot *s, size_t r)
{
    return pcw_snapshot_row(s, r);
}

static inline uint32_t pcw__q_row_id(const pcw_snapshot *s, size_t r)
{
    return pcw_snapshot_id(s, r);
}

static inline const char *pcw__q_row_name(const pcw_snapshot *s, size_t r, uint32_t *len)
{
    *len = pcw_snapshot_name_len(s, r);
    return pcw_snapshot_name(s, r);
}

/* The segment index a row of a pcw_consumer_collect result came from. */
static inline uint32_t pcw__q_row_segment(const pcw_snapshot *s, size_t r)
{
    const pcw_snapshot_source *src = pcw_snapshot_source_of(s, r);
    return src ? src->source : UINT32_MAX;
}

#endif /* PCW_QUERY_SNAPROWS_H */
