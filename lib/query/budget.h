/* SPDX-License-Identifier: MIT */
/*
 * lib/query/budget.h - the time limit of one public call (budget.c).
 */
#ifndef PCW_QUERY_BUDGET_H
#define PCW_QUERY_BUDGET_H

#include "pdh.h"

/* One time limit for everything a public call waits for: start sets the
 * deadline (now + timeout_ms); arm sets the consumer's limit to what is
 * left and returns 1, or returns 0 when less than a millisecond is left
 * (with `at_least_1ms`, it then sets 1 ms and returns 1: for requests that
 * must be sent); end restores the consumer's limit.
 *
 * Notifications (ADD/REMOVE_COUNTER, notify.c) wait for answers until the
 * notify deadline at most (arm_notify: at least 1 ms, they must be sent).
 * It is the deadline itself, unless the call collects after notifying
 * (pcw_pdh_collect), where it is half-way (start_collect): a provider that
 * does not answer its notifications must not leave the collection, and so
 * every other provider's answer, without time (issue 23, item 10). */
void pcw__q_budget_start(pcw_pdh *q);
void pcw__q_budget_start_collect(pcw_pdh *q);
int pcw__q_budget_arm(pcw_pdh *q, int at_least_1ms);
void pcw__q_budget_arm_notify(pcw_pdh *q);
void pcw__q_budget_end(pcw_pdh *q);

#endif /* PCW_QUERY_BUDGET_H */
