/* SPDX-License-Identifier: MIT */
/*
 * lib/query/match.h - what a counter handle selects in a counterset:
 * its entries and its counters (match.c).
 */
#ifndef PCW_QUERY_MATCH_H
#define PCW_QUERY_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "pdh.h"

size_t pcw__q_entry_count(const pcw__q_set *s);
/* An entry's name (without #n) and its #n. */
const char *pcw__q_entry_name(const pcw__q_set *s, uint32_t e, uint32_t *len, uint32_t *dup);
/* How many columns counter k of s gives for path p at detail level
 * `level` (0: not selected), their statistics into st. */
int pcw__q_counter_selected(const pcw__q_set *s, const pcw_path *p, uint32_t level, uint32_t k,
                            pcw_hist_stat *st);
/* Free a match's columns (ctr, hst, cname). */
void pcw__q_match_free(pcw__q_match *mt);
/* Select mt's entries and columns again if its set changed. */
int pcw__q_match_update(pcw_pdh_counter *h, pcw__q_match *mt);

/* The handle's one match (NULL: none, or several). */
static inline const pcw__q_match *pcw__q_match_single(const pcw_pdh_counter *ctr)
{
    return ctr && ctr->nm == 1 ? &ctr->m[0] : NULL;
}

#endif /* PCW_QUERY_MATCH_H */
