/* SPDX-License-Identifier: MIT */
/*
 * pcw/provider_impl/sync.h - the provider's concurrency primitives beyond
 * plain __atomic builtins: ThreadSanitizer annotations for RCU grace
 * periods, and the RCU registration list with C11 orders. Private (see
 * impl.h).
 */
#ifndef PCW_PROVIDER_IMPL_SYNC_H
#define PCW_PROVIDER_IMPL_SYNC_H

/* ThreadSanitizer cannot see that an RCU grace period orders every earlier
 * read-side section before what follows it (liburcu 0.13 is not
 * instrumented). Where pcw relies on that, it says so to TSan: a reader
 * releases on the list before leaving its read-side section, and the
 * updater acquires after urcu_bp_synchronize_rcu(). Compiled only in TSan
 * builds; elsewhere these are nothing. */
#if defined(__SANITIZE_THREAD__)
#define PCW__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PCW__TSAN 1
#endif
#endif
#ifdef PCW__TSAN
#include <sanitizer/tsan_interface.h>
#define PCW__TSAN_READER_DONE(addr)  __tsan_release((void *)(addr))
#define PCW__TSAN_GRACE_PERIOD(addr) __tsan_acquire((void *)(addr))
#else
#define PCW__TSAN_READER_DONE(addr)  ((void)0)
#define PCW__TSAN_GRACE_PERIOD(addr) ((void)0)
#endif

/* The registration list is liburcu's cds_list, changed under prov->lock and
 * walked by control-channel threads under urcu_bp_read_lock(). These are
 * cds_list_add_tail_rcu, cds_list_del_rcu and cds_list_for_each_entry_rcu
 * with the publishing store a C11 release and the walking loads acquires:
 * the same instructions on x86, and visible to ThreadSanitizer, which does
 * not see liburcu 0.13's barriers as ordering. The store releases the
 * node's fields; it pairs with the walker's acquire load of `next`. */
static void pcw__list_add_tail_rcu(struct cds_list_head *n, struct cds_list_head *head)
{
    n->next = head;
    n->prev = head->prev;
    __atomic_store_n(&head->prev->next, n, __ATOMIC_RELEASE);
    head->prev = n;
}

/* A removed node keeps its `next`, so a walker standing on it goes on;
 * its memory may be reused only after a grace period. */
static void pcw__list_del_rcu(struct cds_list_head *n)
{
    n->next->prev = n->prev;
    __atomic_store_n(&n->prev->next, n->next, __ATOMIC_RELEASE);
}

static struct cds_list_head *pcw__list_next_rcu(struct cds_list_head *n)
{
    return __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
}

#endif /* PCW_PROVIDER_IMPL_SYNC_H */
