/* SPDX-License-Identifier: MIT */
/*
 * lib/query/rows.h - where an entry's raw values are (rows.c).
 */
#ifndef PCW_QUERY_ROWS_H
#define PCW_QUERY_ROWS_H

#include <stdint.h>

#include "cook.h"
#include "set.h"

/* Where entry e's current and previous raw values are. */
typedef struct pcw__q_rows {
    const unsigned char *row, *prow; /* prow NULL: no previous sample */
    pcw__q_layout lay;
    uint64_t t, pt;
    const uint8_t *st; /* totals: per-counter statuses */
    int status;        /* the row's absence, else VALID */
} pcw__q_rows;
void pcw__q_entry_rows(const pcw__q_set *s, uint32_t e, pcw__q_rows *w);
/* now and prev (prev->status says if there is one) of counter k. */
void pcw__q_rows_raw(const pcw__q_set *s, const pcw__q_rows *w, uint32_t k, pcw_raw *now,
                     pcw_raw *prev);

#endif /* PCW_QUERY_ROWS_H */
