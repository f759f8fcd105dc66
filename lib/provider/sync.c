/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/sync.c - the provider's concurrency primitives beyond
 * plain __atomic builtins: ThreadSanitizer annotations for RCU grace
 * periods, and the RCU registration list with C11 orders. Private (see
 * internal.h).
 */
#include "internal.h"

/* PCW__TSAN_READER_DONE and PCW__TSAN_GRACE_PERIOD are in internal.h
 * (they include a system header). */

/* The registration list is liburcu's cds_list, changed under prov->lock and
 * walked by control-channel threads under urcu_bp_read_lock(). These are
 * cds_list_add_tail_rcu, cds_list_del_rcu and cds_list_for_each_entry_rcu
 * with the publishing store a C11 release and the walking loads acquires:
 * the same instructions on x86, and visible to ThreadSanitizer, which does
 * not see liburcu 0.13's barriers as ordering. The store releases the
 * node's fields; it pairs with the walker's acquire load of `next`. */
PCW__PRIVATE void pcw__list_add_tail_rcu(struct cds_list_head *n, struct cds_list_head *head)
{
    n->next = head;
    n->prev = head->prev;
    __atomic_store_n(&head->prev->next, n, __ATOMIC_RELEASE);
    head->prev = n;
}

/* A removed node keeps its `next`, so a walker standing on it goes on;
 * its memory may be reused only after a grace period. */
PCW__PRIVATE void pcw__list_del_rcu(struct cds_list_head *n)
{
    n->next->prev = n->prev;
    __atomic_store_n(&n->prev->next, n->next, __ATOMIC_RELEASE);
}

PCW__PRIVATE struct cds_list_head *pcw__list_next_rcu(struct cds_list_head *n)
{
    return __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
}
