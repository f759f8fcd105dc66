/*
 * lib/query/snaprows.h - the only place the query layer looks inside a
 * pcw_snapshot: a row's data, id and name.
 */
#ifndef PCW_QUERY_SNAPROWS_H
#define PCW_QUERY_SNAPROWS_H

#include "pcw/consumer.h"

static inline const unsigned char *pcwq_row(const pcw_snapshot *s, size_t r)
{
    return s->data + s->samples[r].data_off;
}

static inline uint32_t pcwq_row_id(const pcw_snapshot *s, size_t r)
{
    return s->samples[r].id;
}

static inline const char *pcwq_row_name(const pcw_snapshot *s, size_t r, uint32_t *len)
{
    *len = s->samples[r].name_len;
    return s->names + s->samples[r].name_off;
}

/* The segment index a row of a pcw_consumer_collect result came from. */
static inline uint32_t pcwq_row_segment(const pcw_snapshot *s, size_t r)
{
    return s->samples[r].source;
}

#endif /* PCW_QUERY_SNAPROWS_H */
