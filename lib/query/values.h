/* SPDX-License-Identifier: MIT */
/*
 * lib/query/values.h - one value of a handle (values.c).
 */
#ifndef PCW_QUERY_VALUES_H
#define PCW_QUERY_VALUES_H

#include <stdint.h>

#include "pdh.h"
#include "rows.h"

/* The scale h's values of counter k are shown with. */
static inline int32_t pcw__q_scale_of(const pcw_pdh_counter *h, const pcw__q_set *s, uint32_t k)
{
    return h->scale_set ? h->scale : s->default_scale[k];
}

/* Counter k of entry e (its rows w) as statistic hs (kind 0: not a
 * histogram): *now its raw sample, *v its value with h's scale and
 * `flags`; returns the status. An instance's value is pcw_cook's of its
 * two samples; a total's was computed from its members' when it was
 * collected (totals.c) and is finished here. */
int pcw__q_cook_value(const pcw_pdh_counter *h, const pcw__q_set *s, const pcw__q_rows *w,
                      uint32_t e, uint32_t k, const pcw_hist_stat *hs, unsigned flags, pcw_raw *now,
                      double *v);

#endif /* PCW_QUERY_VALUES_H */
