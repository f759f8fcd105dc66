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
typedef struct pcwq_rows {
    const unsigned char *row, *prow; /* prow NULL: no previous sample */
    pcwq_layout lay;
    uint64_t t, pt;
    const uint8_t *st; /* totals: per-counter statuses */
    int status;        /* the row's absence, else VALID */
} pcwq_rows;
void pcwq_entry_rows(const pcwq_set *s, uint32_t e, pcwq_rows *w);
/* now and prev (prev->status says if there is one) of counter k. */
void pcwq_rows_raw(const pcwq_set *s, const pcwq_rows *w, uint32_t k, pcw_raw *now, pcw_raw *prev);

#endif /* PCW_QUERY_ROWS_H */
