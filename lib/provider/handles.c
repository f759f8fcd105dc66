/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/handles.c - the process-wide handle table behind
 * pcw_provider *, pcw_registration * and pcw_instance *. Private (see
 * internal.h); the entry layout and the lookup are in api.h (the public
 * part of pcw/provider.h), because the inline fast paths read them.
 *
 * Why. A handle is (generation << 32) | (index + 1), not a pointer, so that
 * a handle kept past its object's end is recognised instead of followed:
 * closing an instance twice, or after its registration was unregistered
 * or its provider closed, unregistering twice and closing a provider twice
 * find an entry whose generation moved on (or whose kind differs), and
 * fail with PCW_E_INVALID_HANDLE without touching anything.
 *
 * Ownership and order.
 *   - Freeing an entry moves its generation on (a compare-and-swap, which
 *     only one of several frees of one handle wins), so every handle of
 *     the old generation is refused from then on; an entry whose
 *     generation would wrap is retired, never reused, so a generation
 *     never repeats. Free entries wait on a lock-free stack; only taking
 *     an entry never used before (and a new page) is under
 *     pcw__handles_lock.
 *   - Pages are allocated once, published with a release store, never
 *     moved or freed (they are reachable from pcw__handle_pages until the
 *     process exits): a lookup with any handle value reads valid memory.
 *   - The fields of a live entry are written by the thread that owns the
 *     handle before it returns it (the create or open call); every field
 *     is written and read with __atomic builtins, so even a lookup racing
 *     with a free (a program's bug) is a well-defined read.
 *   - A claim (pcw__handle_claim) checks and frees in one step: of two
 *     closes of one handle, exactly one gets the object.
 */
#include "internal.h"

#ifdef __cplusplus
static_assert(sizeof(void *) == 8, "pcw handles need 64-bit pointers");
#else
_Static_assert(sizeof(void *) == 8, "pcw handles need 64-bit pointers");
#endif

PCW_PROVIDER_API pcw__handle_entry *pcw__handle_pages[PCW__HANDLE_PAGES];

/* Growth (new pages, entries never used before) is under this lock; the
 * free list is lock-free. */
static pthread_mutex_t pcw__handles_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pcw__handles_made; /* entries ever used: [0, made); under the lock */
/* The free list, a Treiber stack: (tag << 32) | (index + 1) of its first
 * entry, 0 in the low half when empty; entries link through next_free. The
 * tag changes with every push and pop, so a pop that read an old head
 * cannot succeed after the stack changed under it (no ABA). */
static uint64_t pcw__handles_free;

/* The entry at `idx`, whose page exists. */
static pcw__handle_entry *pcw__handle_at(uint64_t idx)
{
    uint64_t n = idx + (1u << PCW__HANDLE_PAGE0_BITS);
    unsigned page = (unsigned)(63 - __builtin_clzll(n)) - PCW__HANDLE_PAGE0_BITS;
    pcw__handle_entry *pg = __atomic_load_n(&pcw__handle_pages[page], __ATOMIC_ACQUIRE);
    return &pg[n - ((uint64_t)1 << (page + PCW__HANDLE_PAGE0_BITS))];
}

/* Take a free entry's index, or -1 if there is none. */
static int64_t pcw__handle_pop(void)
{
    /* Acquire pairs with pcw__handle_push's release: the popped entry's
     * next_free and its cleared fields are visible. */
    uint64_t head = __atomic_load_n(&pcw__handles_free, __ATOMIC_ACQUIRE);
    for (;;) {
        uint32_t first = (uint32_t)head;
        if (first == 0)
            return -1;
        /* Entries are never freed: reading a stale one is harmless, and
         * the tag makes the CAS fail if the stack changed. */
        uint32_t next = __atomic_load_n(&pcw__handle_at(first - 1)->next_free, __ATOMIC_RELAXED);
        uint64_t want = ((head >> 32) + 1) << 32 | next;
        if (__atomic_compare_exchange_n(&pcw__handles_free, &head, want, 1, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE))
            return first - 1;
    }
}

/* Give entry `idx` back to the free list. */
static void pcw__handle_push(uint64_t idx)
{
    pcw__handle_entry *e = pcw__handle_at(idx);
    uint64_t head = __atomic_load_n(&pcw__handles_free, __ATOMIC_RELAXED);
    for (;;) {
        __atomic_store_n(&e->next_free, (uint32_t)head, __ATOMIC_RELAXED);
        uint64_t want = ((head >> 32) + 1) << 32 | (idx + 1);
        /* Release pairs with pcw__handle_pop's acquire. */
        if (__atomic_compare_exchange_n(&pcw__handles_free, &head, want, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            return;
    }
}

/* A new handle of `kind` naming `obj`; NULL when out of memory (or after
 * 2^32 - 1 entries). */
PCW__PRIVATE void *pcw__handle_new(uint32_t kind, void *obj)
{
    int64_t idx = pcw__handle_pop();
    if (idx < 0) {
        /* No free entry: use a new one, on a new page if need be. */
        pthread_mutex_lock(&pcw__handles_lock);
        if (pcw__handles_made < UINT32_MAX) {
            uint64_t n = pcw__handles_made + (1u << PCW__HANDLE_PAGE0_BITS);
            unsigned page = (unsigned)(63 - __builtin_clzll(n)) - PCW__HANDLE_PAGE0_BITS;
            if (!pcw__handle_pages[page]) {
                pcw__handle_entry *pg = (pcw__handle_entry *)calloc(
                    (size_t)1 << (page + PCW__HANDLE_PAGE0_BITS), sizeof *pg);
                if (pg)
                    /* Release pairs with the acquire in pcw__handle_find
                     * and pcw__handle_at: the page is seen zeroed. */
                    __atomic_store_n(&pcw__handle_pages[page], pg, __ATOMIC_RELEASE);
            }
            if (pcw__handle_pages[page])
                idx = (int64_t)pcw__handles_made++;
        }
        pthread_mutex_unlock(&pcw__handles_lock);
        if (idx < 0)
            return NULL;
    }
    /* The entry is ours alone: free (kind 0), on no list. */
    pcw__handle_entry *e = pcw__handle_at((uint64_t)idx);
    __atomic_store_n(&e->next_free, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->obj, obj, __ATOMIC_RELAXED);
    __atomic_store_n(&e->data, (unsigned char *)NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, (uint64_t *)NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&e->block_off, (const uint32_t *)NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&e->block_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->id, PCW_ANY_INSTANCE_ID, __ATOMIC_RELAXED);
    __atomic_store_n(&e->kind, kind, __ATOMIC_RELAXED);
    uint32_t gen = __atomic_load_n(&e->gen, __ATOMIC_RELAXED);
    /* Release pairs with the acquire load of gen in pcw__handle_find. */
    __atomic_store_n(&e->gen, gen, __ATOMIC_RELEASE);
    return (void *)(uintptr_t)((uint64_t)gen << 32 | (uint64_t)(idx + 1));
}

/* An instance's fast-path fields, before its handle is returned. */
PCW__PRIVATE void pcw__handle_set_instance(void *h, unsigned char *data, uint64_t *seq,
                                           const uint32_t *block_off, uint32_t block_count,
                                           uint32_t id)
{
    pcw__handle_entry *e = (pcw__handle_entry *)pcw__handle_find(h, PCW__HANDLE_INSTANCE);
    if (!e)
        return;
    __atomic_store_n(&e->data, data, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, seq, __ATOMIC_RELAXED);
    __atomic_store_n(&e->block_off, block_off, __ATOMIC_RELAXED);
    __atomic_store_n(&e->block_count, block_count, __ATOMIC_RELAXED);
    __atomic_store_n(&e->id, id, __ATOMIC_RELAXED);
}

/* The object a live handle of `kind` names, or NULL. Lock-free: valid
 * while the caller keeps the object from being closed, as the API's
 * concurrency contract requires. */
PCW__PRIVATE void *pcw__handle_get(const void *h, uint32_t kind)
{
    const pcw__handle_entry *e = pcw__handle_find(h, kind);
    return e ? __atomic_load_n(&e->obj, __ATOMIC_RELAXED) : NULL;
}

/* Check and free: if `h` is a live handle of `kind`, free its entry (every
 * copy of the handle is refused from now on) and return the object; else
 * NULL. Of several claims of one handle, exactly one wins: the one whose
 * compare-and-swap moves the generation on. */
PCW__PRIVATE void *pcw__handle_claim(const void *h, uint32_t kind)
{
    pcw__handle_entry *e = (pcw__handle_entry *)pcw__handle_find(h, kind);
    if (!e)
        return NULL;
    uint32_t gen = (uint32_t)((uint64_t)(uintptr_t)h >> 32);
    void *obj = __atomic_load_n(&e->obj, __ATOMIC_RELAXED);
    if (!__atomic_compare_exchange_n(&e->gen, &gen, gen + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return NULL; /* another claim won */
    __atomic_store_n(&e->kind, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->obj, (void *)NULL, __ATOMIC_RELAXED);
    if (gen + 1 != UINT32_MAX)
        pcw__handle_push((uint32_t)(uintptr_t)h - 1); /* else retired: never reused */
    return obj;
}
