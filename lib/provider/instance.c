/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/instance.c - instances: slot chunks, instance names,
 * reuse after a grace period (the limbo), giving pages back (punching), and
 * the create and close protocol of design.md section 4 (C0, P0, P1, C1, C2).
 * Private (see internal.h).
 */
#include "internal.h"

static int pcw__vec_push(pcw__vec *a, uint64_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        uint64_t *v = (uint64_t *)realloc(a->v, cap * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        a->v = v, a->cap = cap;
    }
    a->v[a->n++] = x;
    return PCW_OK;
}

static int pcw__name_match(struct cds_lfht_node *node, const void *key)
{
    const pcw__inst *a = caa_container_of(node, pcw__inst, node);
    const pcw__inst *b = (const pcw__inst *)key;
    return pcw__name_equal(a->name, a->name_len, b->name, b->name_len);
}

/* Add a chunk of slots to r. r->lock held (takes prov->lock inside). */
static int pcw__add_chunk(pcw__reg *r)
{
    pcw__prov *p = r->prov;
    uint32_t n = r->slot_count < 64 ? 64 : r->slot_count;
    if (n > PCW_SEG_MAX_CHUNK_SLOTS)
        n = PCW_SEG_MAX_CHUNK_SLOTS;
    if ((uint64_t)r->slot_count + n > (uint64_t)PCW_MAX_INSTANCE_ID + 1)
        return PCW_E_SEGMENT_FULL;
    if (r->nchunks == r->chunks_cap) {
        size_t cap = r->chunks_cap ? r->chunks_cap * 2 : 8;
        pcw__chunk *c = (pcw__chunk *)realloc(r->chunks, cap * sizeof *c);
        if (!c)
            return PCW_E_NO_MEMORY;
        r->chunks = c, r->chunks_cap = cap;
    }
    /* Reserve free-list room for every slot there will be, so that neither
     * the pushes below nor a later reclaim can fail. */
    if (r->free_slots.cap < (size_t)r->slot_count + n) {
        size_t cap = (size_t)r->slot_count + n;
        uint64_t *v = (uint64_t *)realloc(r->free_slots.v, cap * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        r->free_slots.v = v, r->free_slots.cap = cap;
    }
    int rc;
    pthread_mutex_lock(&p->lock);
    uint64_t off = pcw__arena_alloc(p, pcw__seg_chunk_bytes(n, r->data_stride), &rc);
    if (off) {
        pcw_seg_chunk *ch = (pcw_seg_chunk *)(p->base + off);
        ch->first_slot = r->slot_count;
        ch->nslots = n;
        ch->cset_off = r->cset_off;
        /* Release pairs with the consumer's acquire of the link: the chunk
         * header above is visible before the chunk is reachable. Its arrays
         * are zero (gen 0 = free) from the fresh file pages. */
        if (r->last_chunk)
            __atomic_store_n(&((pcw_seg_chunk *)(p->base + r->last_chunk))->next, off,
                             __ATOMIC_RELEASE);
        else
            __atomic_store_n(&r->cset->chunk_head, off, __ATOMIC_RELEASE);
        __atomic_store_n(&r->cset->slot_count, r->slot_count + n, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&p->lock);
    if (!off)
        return rc;
    r->last_chunk = off;
    pcw__chunk *c = &r->chunks[r->nchunks++];
    memset(c, 0, sizeof *c);
    c->first = r->slot_count;
    c->n = n;
    c->nfree = n;
    c->hdr = (pcw_seg_chunk *)(p->base + off);
    c->live = (uint64_t *)(p->base + off + pcw__seg_chunk_live());
    c->gens = (uint64_t *)(p->base + off + pcw__seg_chunk_gens(n));
    c->names = (uint64_t *)(p->base + off + pcw__seg_chunk_names(n));
    c->rows = p->base + off + pcw__seg_chunk_rows(n);
    /* Lowest ids first: push in reverse so pops come out ascending. */
    for (uint32_t i = n; i-- > 0;)
        r->free_slots.v[r->free_slots.n++] = (uint64_t)r->slot_count + i;
    r->slot_count += n;
    return PCW_OK;
}

/* The chunk holding slot idx. Chunks double in size, so this is a short
 * scan from the end. r->lock held. */
static pcw__chunk *pcw__chunk_of(pcw__reg *r, uint32_t idx)
{
    for (size_t i = r->nchunks; i-- > 0;)
        if (idx >= r->chunks[i].first)
            return &r->chunks[i];
    return NULL;
}

/* Name storage: 16-byte size classes, reused after a grace period. */
static uint64_t pcw__name_alloc(pcw__prov *p, uint32_t len, int *rc)
{
    uint32_t cls = (len + 15) / 16;
    uint64_t off;
    pthread_mutex_lock(&p->lock);
    if (p->name_free[cls].n)
        off = p->name_free[cls].v[--p->name_free[cls].n];
    else
        off = pcw__arena_alloc_aligned(p, (uint64_t)cls * 16, 16, rc);
    pthread_mutex_unlock(&p->lock);
    return off;
}

/* Store name bytes as relaxed 8-byte atomics: a consumer may be reading a
 * stale name at this address (it will discard what it read, by the slot
 * generation), and the two must not be a data race. */
static void pcw__store_name(unsigned char *dst, const char *src, uint32_t len)
{
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        memcpy(&w, src + i, len - i < 8 ? len - i : 8);
        __atomic_store_n((uint64_t *)(void *)(dst + i), w, __ATOMIC_RELAXED);
    }
}

/* The pages of chunk c's arrays, past its header's page, page-aligned:
 * [*lo, *hi) in the segment. 0 if there is no whole page to give back. */
static int pcw__chunk_pages(const pcw__reg *r, const pcw__chunk *c, uint64_t *lo, uint64_t *hi)
{
    uint64_t off = (uint64_t)((unsigned char *)c->hdr - r->prov->base);
    *lo = pcw__align(off + sizeof(pcw_seg_chunk), 4096);
    *hi = (off + pcw__seg_chunk_bytes(c->n, r->data_stride)) & ~4095ull;
    return *lo < *hi;
}

/* Give the pages of a chunk with no instance back to the system
 * (fallocate PUNCH_HOLE: the file keeps its size, the range reads as
 * zeros, a later store allocates again). Every slot is free and was closed
 * more than a grace period ago, so no provider thread touches it; readers
 * may read it at any time and see zeros - all free - or, in the fallback
 * path, zero generations. Generations must never repeat (a reader stalled
 * since a slot's old occupant compares them), so the chunk remembers the
 * largest one: reuse continues above it (pcw_create_instance). r->lock
 * held. */
static void pcw__punch(pcw__reg *r, pcw__chunk *c)
{
    uint64_t lo, hi, floor = 0;
    if (!pcw__chunk_pages(r, c, &lo, &hi))
        return;
    for (uint32_t i = 0; i < c->n; i++) {
        uint64_t g = __atomic_load_n(&c->gens[i], __ATOMIC_RELAXED);
        floor = g > floor ? g : floor;
    }
    if (fallocate(r->prov->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
                  (off_t)(hi - lo)) != 0)
        return; /* not supported here: the pages stay, which is correct too */
    c->gen_floor = (floor + 2) & ~1ull;
    c->punched = 1;
}

/* Before reusing a slot of a punched chunk: reserve its pages again, so
 * that stores into them cannot SIGBUS on a full tmpfs. r->lock held. */
static int pcw__unpunch(pcw__reg *r, pcw__chunk *c)
{
    uint64_t lo, hi;
    if (!c->punched || !pcw__chunk_pages(r, c, &lo, &hi))
        return PCW_OK;
    int e = posix_fallocate(r->prov->fd, (off_t)lo, (off_t)(hi - lo));
    if (e != 0)
        return e == ENOSPC ? PCW_E_NO_MEMORY : PCW_E_IO;
    c->punched = 0;
    return PCW_OK;
}

/* After a grace period (the caller waited for one after taking `batch` out
 * of the limbo): no provider thread can still find these instances in the
 * name table, so their slots and names may be reused and their structs
 * freed. Consumers need no grace period: they check slot generations. */
PCW__PRIVATE void pcw__reclaim(pcw__reg *r, pcw__vec *batch)
{
    pcw__prov *p = r->prov;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < batch->n; i++) {
        pcw__inst *in = (pcw__inst *)(uintptr_t)batch->v[i];
        /* On failure the name block is leaked, never reused wrongly. */
        if (in->name_len)
            pcw__vec_push(&p->name_free[(in->name_len + 15) / 16], in->name_off);
    }
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < batch->n; i++) {
        pcw__inst *in = (pcw__inst *)(uintptr_t)batch->v[i];
        r->free_slots.v[r->free_slots.n++] = in->id; /* room reserved in add_chunk */
        pcw__chunk_of(r, in->id)->nfree++;
        free(in);
    }
    /* Most slots free (a mass close): whole chunks with no instance give
     * their pages back, and so does the segment's reserved tail. */
    int trim = r->free_slots.n >= r->slot_count / 2;
    if (trim)
        for (size_t c = 0; c < r->nchunks; c++)
            if (r->chunks[c].nfree == r->chunks[c].n && !r->chunks[c].punched)
                pcw__punch(r, &r->chunks[c]);
    pthread_mutex_unlock(&r->lock);
    if (trim) {
        pthread_mutex_lock(&p->lock);
        pcw__trim(p);
        pthread_mutex_unlock(&p->lock);
    }
    free(batch->v);
    memset(batch, 0, sizeof *batch);
}

/* An instance name for registration r (PcwCreateInstance and
 * PcwAddInstance both check it): valid UTF-8, at most 1024 characters,
 * empty exactly when the counterset has a single instance. *len gets its
 * length in bytes. */
PCW__PRIVATE int pcw__check_instance_name(const pcw__reg *r, const char *name, size_t *len)
{
    *len = strnlen(name, PCW_MAX_INSTANCE_NAME_BYTES + 1);
    /* ASCII (most names): valid, one character a byte - no decoding. */
    unsigned char any = 0;
    for (size_t i = 0; i < *len; i++)
        any |= (unsigned char)name[i];
    long chars = *len > PCW_MAX_INSTANCE_NAME_BYTES ? -2
                 : any < 0x80                       ? (long)*len
                                                    : pcw__utf8_count(name, *len);
    if (chars == -2 || chars > (long)PCW_MAX_INSTANCE_NAME_CHARS)
        return PCW_E_NAME_TOO_LONG;
    if (chars < 0)
        return PCW_E_INVALID_NAME;
    int multi = pcw_instance_type_is_multi(r->instance_type);
    if (multi ? *len == 0 : *len != 0)
        return PCW_E_INVALID_NAME;
    return PCW_OK;
}

/* From how many instances grow_names resizes: PCW__NAMES_GROW_FROM, or
 * the largest table liburcu 0.13.2's chain-length policy grows to here if
 * larger - 2^(10 + log2 of its CPU slots, rounded up), the slots counted
 * as it counts them: the highest CPU in /sys/devices/system/cpu/possible
 * plus one, else sysconf's configured CPUs (rculfhash.c's
 * ht_init_nr_cpus_mask). Computed once; any thread (a relaxed atomic: two
 * threads compute the same value). */
static uint64_t names_grow_from(void)
{
    static uint64_t from;
    uint64_t f = __atomic_load_n(&from, __ATOMIC_RELAXED);
    if (f)
        return f;
    long slots = 0;
    FILE *fp = fopen("/sys/devices/system/cpu/possible", "re");
    if (fp) {
        /* "0-3" or "0,2-5,8": the last number is the highest CPU. */
        char buf[256];
        size_t n = fread(buf, 1, sizeof buf - 1, fp);
        buf[n] = 0;
        long last = -1, cur = -1;
        for (size_t i = 0; i < n; i++) {
            if (buf[i] >= '0' && buf[i] <= '9')
                cur = (cur < 0 ? 0 : cur) * 10 + (buf[i] - '0');
            else if (cur >= 0)
                last = cur, cur = -1;
            if (cur > 1000000)
                break;
        }
        if (cur >= 0)
            last = cur;
        slots = last >= 0 && last < 1000000 ? last + 1 : 0;
        fclose(fp);
    }
    if (slots <= 0)
        slots = sysconf(_SC_NPROCESSORS_CONF);
    unsigned order = 0;
    while (slots > 1 && order < 40 && (1l << order) < slots)
        order++;
    if (slots <= 0)
        order = 4; /* liburcu's DEFAULT_SPLIT_COUNT_MASK: 16 slots */
    f = PCW__NAMES_GROW_FROM;
    if (10 + order < 48 && (1ull << (10 + order)) > f)
        f = 1ull << (10 + order);
    __atomic_store_n(&from, f, __ATOMIC_RELAXED);
    return f;
}

/* The names table holds n nodes now (one was just added): at each power
 * of two from names_grow_from(), make it n buckets here rather than trust
 * liburcu's lazy resize alone. liburcu 0.13.2 queues a lazy resize before
 * it marks one as initiated (__cds_lfht_resize_lazy_launch); a worker run
 * that ends in between clears the mark first, the mark stays set, and no
 * lazy resize is launched again - the chains then grow with the instances
 * (one try in ten made 1,000,000 creates take minutes, docs/design.md
 * "Instance names"). cds_lfht_resize resizes in this thread and clears the
 * mark when it is done. n is at least the size liburcu's own policy picks
 * for n nodes (by chain length up to names_grow_from(), then the count
 * itself at powers of two of the count), so it does not shrink a table
 * that is right: when the lazy resize works, this finds the table at n
 * already and only takes and drops liburcu's resize mutex. That mutex is
 * also held by liburcu's worker while it waits for grace periods (a
 * shrink), so pcw_create_instance is not called inside a read-side
 * section (api.h). Log2 of the instances calls that resize, each
 * proportional to the table: amortised O(1) a create, paid by the create
 * that reaches the power of two (liburcu may start helper threads for a
 * large step). */
static void grow_names(pcw__reg *r, uint64_t n)
{
    if (!(n & (n - 1)) && n >= names_grow_from())
        cds_lfht_resize(r->names, (unsigned long)n);
}

int pcw_create_instance(pcw_instance **out, pcw_registration *rh, const char *name, uint32_t count,
                        const pcw_data *data)
{
    if (!out || !rh || !name)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    pcw__reg *r = (pcw__reg *)pcw__handle_get(rh, PCW__HANDLE_REGISTRATION);
    if (!r)
        return PCW_E_INVALID_HANDLE;
    if (count != r->block_count || (count && !data))
        return PCW_E_INVALID_COUNT;
    for (uint32_t b = 0; b < count; b++) {
        if (data[b].size < r->block_need[b])
            return PCW_E_BUFFER_TOO_SMALL;
        /* A larger block (a struct with the provider's own fields after
         * the counters) is fine: only the registered block is copied. */
    }
    size_t len;
    int rc = pcw__check_instance_name(r, name, &len);
    if (rc != PCW_OK)
        return rc;

    pcw__inst *in = (pcw__inst *)calloc(1, sizeof *in + len + 1);
    if (!in)
        return PCW_E_NO_MEMORY;
    in->name = (char *)(in + 1);
    memcpy(in->name, name, len + 1);
    in->name_len = (uint32_t)len;
    in->reg = r;
    /* The handle first: pcw_unregister finds the instance in r->names and
     * closes it through its handle. */
    in->handle = pcw__handle_new(PCW__HANDLE_INSTANCE, in);
    if (!in->handle) {
        free(in);
        return PCW_E_NO_MEMORY;
    }
    cds_lfht_node_init(&in->node);
    unsigned long hash = (unsigned long)pcw__name_hash(name, len);
    /* Declared before the first goto (C++ may not jump past an
     * initialisation). */
    uint32_t idx = 0;
    pcw__chunk *ch = NULL;
    uint64_t gen_floor = 0;

    /* Claim the name first: a duplicate fails before anything is touched. */
    urcu_bp_read_lock();
    struct cds_lfht_node *dup = cds_lfht_add_unique(r->names, hash, pcw__name_match, in, &in->node);
    urcu_bp_read_unlock();
    if (dup != &in->node) {
        pcw__handle_claim(in->handle, PCW__HANDLE_INSTANCE);
        free(in);
        return PCW_E_DUPLICATE_NAME;
    }
    grow_names(r, __atomic_add_fetch(&r->names_open, 1, __ATOMIC_RELAXED));

    rc = PCW_OK;
    if (len) {
        in->name_off = pcw__name_alloc(r->prov, (uint32_t)len, &rc);
        if (!in->name_off)
            goto undo;
    }

    pthread_mutex_lock(&r->lock);
    /* Half the slots are closed but not yet reusable (in the limbo, or in
     * a batch another thread is waiting a grace period for): wait for them
     * rather than grow. This bounds the segment at about twice the live
     * instances under steady churn. Without counting the batch in flight,
     * every create racing with one reclaim saw an empty free list and a
     * small limbo, and grew the registration by a doubling chunk. */
    while (r->free_slots.n == 0 && r->limbo.n + r->reclaiming >= 64 &&
           r->limbo.n + r->reclaiming >= r->slot_count / 2) {
        if (r->reclaiming) {
            pthread_cond_wait(&r->reclaimed, &r->lock);
            continue;
        }
        pcw__vec batch = r->limbo;
        memset(&r->limbo, 0, sizeof r->limbo);
        r->reclaiming = batch.n;
        pthread_mutex_unlock(&r->lock);
        urcu_bp_synchronize_rcu();
        pcw__reclaim(r, &batch);
        pthread_mutex_lock(&r->lock);
        r->reclaiming = 0;
        pthread_cond_broadcast(&r->reclaimed);
    }
    if (r->free_slots.n == 0)
        rc = pcw__add_chunk(r);
    if (rc == PCW_OK) {
        idx = (uint32_t)r->free_slots.v[r->free_slots.n - 1];
        ch = pcw__chunk_of(r, idx);
        rc = pcw__unpunch(r, ch);
    }
    if (rc == PCW_OK) {
        r->free_slots.n--;
        ch->nfree--;
        gen_floor = ch->gen_floor;
    }
    pthread_mutex_unlock(&r->lock);
    if (rc != PCW_OK)
        goto undo_name;

    { /* a block: the undo labels below are not in its scope */
        uint32_t i = idx - ch->first;
        unsigned char *row = ch->rows + (size_t)i * r->data_stride;
        in->id = idx;
        in->chunk = ch->hdr;
        in->gen = &ch->gens[i];
        in->live = &ch->live[i / 64];
        in->live_bit = 1ull << (i % 64);
        in->seq = r->row_data ? (uint64_t *)(void *)row : NULL;
        in->data = row + r->row_data;
        uint64_t gen = __atomic_load_n(in->gen, __ATOMIC_RELAXED);
        if (gen < gen_floor)
            gen = gen_floor; /* the chunk was punched: its gens read 0 now */
        /* C0 (pcw/layout.h). The slot and the name block may have been closed
         * by another thread; the grace period ordered that close before this
         * point but does not make our stores below follow the closer's release
         * fence. This fence does: a reader whose copy sees any store below
         * synchronises, through its acquire fence (R3 in read.c), with this
         * fence, so the earlier close is visible to it and the copy is
         * dropped. */
        __atomic_thread_fence(__ATOMIC_RELEASE);
        /* The slot is free (gen even) and no reader keeps what it reads from a
         * free slot. Fill it with relaxed stores, then publish. */
        if (len)
            pcw__store_name(r->prov->base + in->name_off, name, (uint32_t)len);
        __atomic_store_n(&ch->names[i], PCW_SEG_NAME_REF(in->name_off, len), __ATOMIC_RELAXED);
        for (uint32_t b = 0; b < count; b++) {
            unsigned char *blk = in->data + r->block_off[b];
            uint32_t full = (uint32_t)pcw__align(r->block_size[b], 8);
            /* Never past the registered block: bytes after it are the
             * provider's private fields, not for consumers. */
            uint32_t have = data[b].size < r->block_size[b] ? data[b].size : r->block_size[b];
            for (uint32_t k = 0; k < full; k += 8) {
                uint64_t w = 0;
                if (data[b].data && k < have)
                    memcpy(&w, (const unsigned char *)data[b].data + k,
                           have - k < 8 ? have - k : 8);
                __atomic_store_n((uint64_t *)(void *)(blk + k), w, __ATOMIC_RELAXED);
            }
        }
        /* Publish. Release pairs with the reader's acquire load of gen (R1 in
         * read.c): a reader that sees the instance live sees its name and
         * data. */
        __atomic_store_n(in->gen, gen + 1, __ATOMIC_RELEASE);
        /* P0. The counterset's generation counts this instance before its live
         * bit appears: a reader that sees the bit (R1') sees the new count when
         * it re-checks the generation (R5 in read.c, which keeps a snapshot's
         * names only while the count stands). */
        __atomic_fetch_add(&r->cset->generation, 1, __ATOMIC_RELEASE);
        /* P1. Release pairs with the reader's acquire load of the live word
         * (R1' in read.c): a reader that sees the bit sees the slot filled. */
        __atomic_fetch_or(in->live, in->live_bit, __ATOMIC_RELEASE);
        pcw__bump_generation(r->prov);
        pcw__handle_set_instance(in->handle, in->data, in->seq, r->block_off, r->block_count,
                                 in->id);
        *out = (pcw_instance *)in->handle;
        return PCW_OK;
    }

undo_name:
    if (len) {
        pthread_mutex_lock(&r->prov->lock);
        pcw__vec_push(&r->prov->name_free[(len + 15) / 16], in->name_off);
        pthread_mutex_unlock(&r->prov->lock);
    }
undo:
    urcu_bp_read_lock();
    cds_lfht_del(r->names, &in->node);
    urcu_bp_read_unlock();
    __atomic_sub_fetch(&r->names_open, 1, __ATOMIC_RELAXED);
    pcw__handle_claim(in->handle, PCW__HANDLE_INSTANCE);
    /* Nobody but lookups in the table can hold `in`; let them finish. */
    urcu_bp_synchronize_rcu();
    free(in);
    return rc;
}

/* Close an instance whose handle was claimed (pcw_close_instance,
 * pcw_unregister). */
PCW__PRIVATE void pcw__close_record(pcw__inst *in)
{
    pcw__reg *r = in->reg;
    urcu_bp_read_lock();
    cds_lfht_del(r->names, &in->node);
    urcu_bp_read_unlock();
    __atomic_sub_fetch(&r->names_open, 1, __ATOMIC_RELAXED);
    /* Unpublish: the live bit goes, gen becomes even (free) and one
     * higher. C1: the chunk's close counter, a release RMW, pairs with the
     * reader's acquire load of it (R0 in read.c): a reader that sees this
     * close's count sees the bit clear and the new gen too. C2 pairs with
     * the reader's fence (R3 / R2 in read.c): once the slot is refilled, a
     * reader that saw any of the new bytes sees this close counted (R4) or
     * the slot's new gen. It is seq_cst, not just release, as R3 and R2
     * are in the C11 model (on x86-64 the readers compile them as acquire
     * fences, no instruction: x86-TSO keeps their loads in order and this
     * fence is an mfence; PCW__READER_FENCE in read.c, design.md 4.6): a
     * counter of the next occupant may be stored by an application
     * thread that got the instance from its creator, with no fence of its
     * own. Between two seq_cst fences the close is still ordered before the
     * reader's re-check (C++20 [atomics.order] p4.4: C2 happens-before that
     * store, which the reader's load saw before its fence, so C2 precedes
     * R3 in the single total order, and a re-check that missed C1 would
     * put R3 first). The model's "app-writer" variant (docs/model) is the
     * counterexample with release/acquire fences. */
    uint64_t gen = __atomic_load_n(in->gen, __ATOMIC_RELAXED);
    __atomic_fetch_and(in->live, ~in->live_bit, __ATOMIC_RELAXED);
    __atomic_store_n(in->gen, gen + 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&in->chunk->closes, 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_fetch_add(&r->cset->generation, 1, __ATOMIC_RELEASE);
    pcw__bump_generation(r->prov);
    pthread_mutex_lock(&r->lock);
    int rc = pcw__vec_push(&r->limbo, (uint64_t)(uintptr_t)in);
    /* A mass close: once the limbo holds at least as many instances as
     * remain open, this close takes them through a grace period now (as a
     * create would), so that their memory can go back to the system without
     * waiting for the next create. Closing n instances costs about log2(n)
     * grace periods; steady churn one per as many closes as are open. */
    if (rc == PCW_OK && !r->reclaiming && r->limbo.n >= 64 &&
        r->limbo.n >= (r->slot_count - r->free_slots.n) / 2) {
        pcw__vec batch = r->limbo;
        memset(&r->limbo, 0, sizeof r->limbo);
        r->reclaiming = batch.n;
        pthread_mutex_unlock(&r->lock);
        urcu_bp_synchronize_rcu();
        pcw__reclaim(r, &batch);
        pthread_mutex_lock(&r->lock);
        r->reclaiming = 0;
        pthread_cond_broadcast(&r->reclaimed);
    }
    pthread_mutex_unlock(&r->lock);
    if (rc != PCW_OK) {
        /* No memory to defer it: wait for the grace period here. */
        pcw__vec one = {NULL, 0, 0};
        urcu_bp_synchronize_rcu();
        if (pcw__vec_push(&one, (uint64_t)(uintptr_t)in) == PCW_OK)
            pcw__reclaim(r, &one);
    }
}

int pcw_close_instance(pcw_instance *h)
{
    if (!h)
        return PCW_OK;
    /* Check and invalidate the handle in one step: a second close, or a
     * close after pcw_unregister or pcw_provider_close (which claimed it),
     * finds it gone and touches nothing. */
    pcw__inst *in = (pcw__inst *)pcw__handle_claim(h, PCW__HANDLE_INSTANCE);
    if (!in)
        return PCW_E_INVALID_HANDLE;
    pcw__close_record(in);
    return PCW_OK;
}
