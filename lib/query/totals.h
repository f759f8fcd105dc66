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
int pcwq_totals(pcwq_set *s);
/* Free what t holds (its times stay). */
void pcwq_totals_free(pcwq_totals_state *t);
/* Whether s's totals pool counter k (sum of parts over sum of wholes: a
 * fraction of a base or multi count, summed) - else a total's value is
 * the function of its members' values. */
int pcwq_total_pools(const pcwq_set *s, uint32_t k);
/* A History total keeps the values of a member leaving with its last row. */
void pcwq_total_keep(pcwq_set *s, pcwq_agg *a, const unsigned char *last);

#endif /* PCW_QUERY_TOTALS_H */
