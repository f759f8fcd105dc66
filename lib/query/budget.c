/* SPDX-License-Identifier: MIT */
/*
 * lib/query/budget.c - the time limit of one public call (budget.h): one
 * deadline for everything the call waits for, handed to the consumer as
 * what is left of it before each wait.
 */
#include "budget.h"
#include "pcw/consumer.h"
#include "util.h"

void pcw__q_budget_start(pcw_pdh *q)
{
    q->deadline_ns = pcw__q_mono_ns() + (uint64_t)q->timeout_ms * 1000000ull;
    q->notify_deadline_ns = q->deadline_ns;
}

void pcw__q_budget_start_collect(pcw_pdh *q)
{
    pcw__q_budget_start(q);
    q->notify_deadline_ns = q->deadline_ns - (uint64_t)q->timeout_ms * 500000ull;
}

/* Set the consumer's limit to what is left until `deadline` (see
 * budget.h). */
static int arm_until(pcw_pdh *q, uint64_t deadline, int at_least_1ms)
{
    if (!q->deadline_ns)
        return 1; /* not inside a public call: the consumer's own limit */
    uint64_t now = pcw__q_mono_ns();
    uint64_t left_ms = deadline > now ? (deadline - now) / 1000000ull : 0;
    if (left_ms == 0) {
        if (!at_least_1ms)
            return 0;
        left_ms = 1;
    }
    /* Rounded down: the consumer's deadline is never past ours. */
    pcw_consumer_set_timeout(q->c, (uint32_t)left_ms);
    return 1;
}

int pcw__q_budget_arm(pcw_pdh *q, int at_least_1ms)
{
    return arm_until(q, q->deadline_ns, at_least_1ms);
}

void pcw__q_budget_arm_notify(pcw_pdh *q)
{
    (void)arm_until(q, q->notify_deadline_ns, 1);
}

void pcw__q_budget_end(pcw_pdh *q)
{
    q->deadline_ns = q->notify_deadline_ns = 0;
    pcw_consumer_set_timeout(q->c, q->timeout_ms);
}
