/* SPDX-License-Identifier: MIT */
/*
 * lib/query/notify.h - PERFLIB's ADD_COUNTER / REMOVE_COUNTER (notify.c).
 */
#ifndef PCW_QUERY_NOTIFY_H
#define PCW_QUERY_NOTIFY_H

#include "pdh.h"

/* Tell the providers of mt's set with a control channel that h's
 * counters were added (`add`) or removed: once per provider. */
void pcw__q_notify(pcw_pdh *q, pcw_pdh_counter *h, pcw__q_match *mt, int add);
void pcw__q_notify_forget(pcw__q_match *mt);

#endif /* PCW_QUERY_NOTIFY_H */
