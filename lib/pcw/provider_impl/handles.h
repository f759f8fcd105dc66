/*
 * pcw/provider_impl/handles.h - the process-wide handle table behind
 * pcw_provider *, pcw_registration * and pcw_instance *. Private (see
 * impl.h); the entry layout and the lookup are in pcw/provider.h, because
 * the inline fast paths read them.
 *
 * Why. A handle is (generation << 32) | (index + 1), not a pointer, so that
 * a handle kept past its object's end is recognised instead of followed:
 * closing an instance twice, or after its registration was unregistered
 * or its provider closed, unregistering twice and closing a provider twice
 * find an entry whose generation moved on (or whose kind differs), and
 * fail with PCW_E_INVALID_HANDLE without touching anything.
 *
 * Ownership and order.
 *   - Entries are made and freed under pcw__handles_lock (the free list,
 *     the page directory, an entry's kind and generation). Freeing bumps
 *     the generation, so every handle of the old generation is refused
 *     from then on; an entry whose generation would wrap is retired, never
 *     reused, so a generation never repeats.
 *   - Pages are allocated once, published with a release store, never
 *     moved or freed (they are reachable from pcw__handle_pages until the
 *     process exits): a lookup with any handle value reads valid memory.
 *   - The fields of a live entry are written by the thread that owns the
 *     handle before it returns it (the create or open call); every field
 *     is written and read with __atomic builtins, so even a lookup racing
 *     with a free (a program's bug) is a well-defined read.
 *   - A claim (pcw__handle_claim) checks and frees in one step under the
 *     lock: of two closes of one handle, exactly one gets the object.
 */
#ifndef PCW_PROVIDER_IMPL_HANDLES_H
#define PCW_PROVIDER_IMPL_HANDLES_H

#ifdef __cplusplus
static_assert(sizeof(void *) == 8, "pcw handles need 64-bit pointers");
#else
_Static_assert(sizeof(void *) == 8, "pcw handles need 64-bit pointers");
#endif

PCW_PROVIDER_API pcw__handle_entry *pcw__handle_pages[PCW__HANDLE_PAGES];

static pthread_mutex_t pcw__handles_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t pcw__handles_free; /* index + 1 of the first free entry; 0: none */
static uint64_t pcw__handles_made; /* entries ever used: [0, made) are on pages */

/* The entry at `idx`, whose page exists. */
static pcw__handle_entry *pcw__handle_at(uint64_t idx)
{
    uint64_t n = idx + (1u << PCW__HANDLE_PAGE0_BITS);
    unsigned page = (unsigned)(63 - __builtin_clzll(n)) - PCW__HANDLE_PAGE0_BITS;
    return &pcw__handle_pages[page][n - ((uint64_t)1 << (page + PCW__HANDLE_PAGE0_BITS))];
}

/* A new handle of `kind` naming `obj`; NULL when out of memory (or after
 * 2^32 - 1 entries). */
static void *pcw__handle_new(uint32_t kind, void *obj)
{
    pthread_mutex_lock(&pcw__handles_lock);
    uint64_t idx;
    pcw__handle_entry *e = NULL;
    if (pcw__handles_free) {
        idx = pcw__handles_free - 1;
        e = pcw__handle_at(idx);
        pcw__handles_free = __atomic_load_n(&e->next_free, __ATOMIC_RELAXED);
    } else if (pcw__handles_made < UINT32_MAX) {
        idx = pcw__handles_made;
        uint64_t n = idx + (1u << PCW__HANDLE_PAGE0_BITS);
        unsigned page = (unsigned)(63 - __builtin_clzll(n)) - PCW__HANDLE_PAGE0_BITS;
        if (!pcw__handle_pages[page]) {
            pcw__handle_entry *pg = (pcw__handle_entry *)calloc(
                (size_t)1 << (page + PCW__HANDLE_PAGE0_BITS), sizeof *pg);
            if (pg)
                /* Release pairs with the acquire in pcw__handle_find: a
                 * lookup that finds the page sees it zeroed. */
                __atomic_store_n(&pcw__handle_pages[page], pg, __ATOMIC_RELEASE);
        }
        if (pcw__handle_pages[page]) {
            pcw__handles_made++;
            e = pcw__handle_at(idx);
        }
    }
    if (!e) {
        pthread_mutex_unlock(&pcw__handles_lock);
        return NULL;
    }
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
    pthread_mutex_unlock(&pcw__handles_lock);
    return (void *)(uintptr_t)((uint64_t)gen << 32 | (idx + 1));
}

/* An instance's fast-path fields, before its handle is returned. */
static void pcw__handle_set_instance(void *h, unsigned char *data, uint64_t *seq,
                                     const uint32_t *block_off, uint32_t block_count, uint32_t id)
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
static void *pcw__handle_get(const void *h, uint32_t kind)
{
    const pcw__handle_entry *e = pcw__handle_find(h, kind);
    return e ? __atomic_load_n(&e->obj, __ATOMIC_RELAXED) : NULL;
}

/* Check and free: if `h` is a live handle of `kind`, free its entry (every
 * copy of the handle is refused from now on) and return the object; else
 * NULL. */
static void *pcw__handle_claim(const void *h, uint32_t kind)
{
    void *obj = NULL;
    pthread_mutex_lock(&pcw__handles_lock);
    pcw__handle_entry *e = (pcw__handle_entry *)pcw__handle_find(h, kind);
    if (e) {
        obj = __atomic_load_n(&e->obj, __ATOMIC_RELAXED);
        uint32_t gen = __atomic_load_n(&e->gen, __ATOMIC_RELAXED);
        __atomic_store_n(&e->kind, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&e->obj, (void *)NULL, __ATOMIC_RELAXED);
        __atomic_store_n(&e->gen, gen + 1, __ATOMIC_RELAXED);
        if (gen + 1 != UINT32_MAX) {
            /* Reusable; an entry at the last generation is retired. */
            __atomic_store_n(&e->next_free, pcw__handles_free, __ATOMIC_RELAXED);
            pcw__handles_free = (uint32_t)((uint32_t)(uintptr_t)h);
        }
    }
    pthread_mutex_unlock(&pcw__handles_lock);
    return obj;
}

#endif /* PCW_PROVIDER_IMPL_HANDLES_H */
