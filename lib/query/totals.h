/* SPDX-License-Identifier: MIT */
/*
 * lib/query/totals.h - a counterset's totals for the current sample
 * (totals.c).
 */
#ifndef PCW_QUERY_TOTALS_H
#define PCW_QUERY_TOTALS_H

#include <stdint.h>

#include "set.h"

/* The totals' raw rows and values of the current sample. */
int pcw__q_totals(pcw__q_set *s);
/* Free what t holds (its times stay). */
void pcw__q_totals_free(pcw__q_totals_state *t);
/* Whether s's totals pool counter k (sum of parts over sum of wholes: a
 * fraction of a base or multi count, summed) - else a total's value is
 * the function of its members' values. */
int pcw__q_total_pools(const pcw__q_set *s, uint32_t k);
/* A History total keeps the values of a member leaving with its last row. */
void pcw__q_total_keep(pcw__q_set *s, pcw__q_agg *a, const unsigned char *last);

#endif /* PCW_QUERY_TOTALS_H */
