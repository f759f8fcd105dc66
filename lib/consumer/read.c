/*
 * lib/consumer/read.c - read instances out of a segment into a snapshot.
 *
 * This is the consumer's hot loop. Per live slot: one acquire load of the
 * generation, relaxed word loads of the name and data, one acquire fence and
 * a relaxed re-load of the generation (the seqlock read of pcw/layout.h).
 * Slots are contiguous in their chunk, so a counterset reads sequentially.
 */
#include <stdlib.h>

#include "internal.h"

void pcw_snapshot_free(pcw_snapshot *s)
{
    if (!s)
        return;
    free(s->samples);
    free(s->data);
    free(s->names);
    memset(s, 0, sizeof *s);
}

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return PCW_OK;
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return PCW_E_NO_MEMORY;
        n *= 2;
    }
    void *m = realloc(*buf, n * elem);
    if (!m)
        return PCW_E_NO_MEMORY;
    *buf = m;
    *cap = n;
    return PCW_OK;
}

int pcw__snapshot_reserve(pcw_snapshot *s, size_t samples, size_t data, size_t names)
{
    int rc = grow((void **)&s->samples, &s->cap, s->count + samples, sizeof(pcw_sample));
    if (rc == PCW_OK)
        rc = grow((void **)&s->data, &s->data_cap, s->data_len + data, 1);
    if (rc == PCW_OK)
        rc = grow((void **)&s->names, &s->names_cap, s->names_len + names, 1);
    return rc;
}

struct read_args {
    pcw_segment *seg;
    const pcw_cset_priv *cs;
    pcw_snapshot *snap;
    uint64_t size;
    unsigned flags;
    uint32_t only_id; /* PCW_ANY_INSTANCE_ID = all */
    int found;
    uint64_t empty_name; /* offset of a "" in snap->names, for NO_NAMES */
};

/* Copy n bytes (a multiple of 8; src 8-aligned) with relaxed 64-bit
 * loads: no value is ever torn, and racing with the provider's stores is
 * not a data race in C11's terms. dst may be unaligned (instance names are
 * packed back to back in the snapshot), so it is written with memcpy,
 * which compiles to a plain store. */
static inline void copy_words(unsigned char *dst, const unsigned char *src, uint32_t n)
{
    const uint64_t *s = (const uint64_t *)(const void *)src;
    for (uint32_t i = 0; i < n / 8; i++) {
        uint64_t w = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
        memcpy(dst + 8 * (size_t)i, &w, 8);
    }
}

/* The provider may have grown the arena since this read loaded header.size
 * (do_read, before the walk): a chunk linked or a name published since then
 * lies past a->size, yet is valid. Its link or the slot's gen was stored
 * (release) after the provider stored the larger size (release), and the
 * reader acquired that link or gen, so a fresh acquire load of size covers
 * it. Returns 1 if [off, off+len) is inside header.size and the mapping now
 * (a->size raised), 0 if it is past the mapping (newer than this read: the
 * next read remaps), -1 if past header.size even now (corrupt). */
static int catch_up(struct read_args *a, uint64_t off, uint64_t len)
{
    const pcw_seg_header *h = (const pcw_seg_header *)(const void *)a->seg->map;
    uint64_t size = atomic_load_explicit(&h->size, memory_order_acquire);
    if (!pcw__in_range(off, len, size))
        return -1;
    if (!pcw__in_range(off, len, a->seg->map_len))
        return 0;
    a->size = size < a->seg->map_len ? size : a->seg->map_len;
    return 1;
}

/* What read_slot did with a slot. */
enum {
    SLOT_SKIPPED, /* free, or closed while we read it */
    SLOT_ADDED,   /* a sample was appended */
    SLOT_BUSY,    /* kept changing under its seqcount */
    SLOT_CORRUPT, /* a name reference outside the segment */
    SLOT_NOMEM
};

/* Where the next sample and its data go. A local copy of the snapshot's
 * counters, written back once per chunk: the data copies store bytes, which
 * may alias anything, so fields read through `snap` would be reloaded after
 * every store in this, the consumer's hottest loop. */
typedef struct cursor {
    pcw_sample *samples;
    unsigned char *data;
    size_t count, dlen;
} cursor;

static inline int read_slot(struct read_args *a, cursor *cur, const pcw_seg_slot *s, uint32_t id)
{
    pcw_snapshot *snap = a->snap;
    const uint32_t dsize = a->cs->pub.data_size;
    const int seq = (a->cs->pub.flags & PCW_CSET_F_SEQCOUNT) != 0;
    const int names = !(a->flags & PCW_READ_NO_NAMES);
    for (uint32_t attempt = 0; attempt < PCW_SEQ_TRIES; attempt++) {
        /* R1. Acquire pairs with the provider's release publish of gen. */
        uint64_t g1 = atomic_load_explicit(&s->gen, memory_order_acquire);
        if (!PCW_SLOT_LIVE(g1))
            return SLOT_SKIPPED;
        uint64_t q1 = 0;
        if (seq) {
            /* Pairs with the provider's release in write_end. */
            q1 = atomic_load_explicit(&s->seq, memory_order_acquire);
            if (q1 & 1)
                continue; /* a write is in progress */
        }
        copy_words(cur->data + cur->dlen, (const unsigned char *)(s + 1), dsize);
        uint64_t name_at = a->empty_name; /* with PCW_READ_NO_NAMES: "" */
        uint32_t nlen = 0;
        if (names) {
            uint64_t noff = atomic_load_explicit(&s->name_off, memory_order_relaxed);
            nlen = atomic_load_explicit(&s->name_len, memory_order_relaxed);
            uint64_t rounded = (nlen + 7ull) & ~7ull;
            int bad = nlen > PCW_MAX_INSTANCE_NAME_BYTES || (nlen && noff % 8);
            if (!bad && nlen && !pcw__in_range(noff, rounded, a->size)) {
                /* A name allocated since this read loaded header.size. */
                int r = catch_up(a, noff, rounded);
                if (r == 0)
                    return SLOT_SKIPPED; /* created after the read began */
                bad = r < 0;
            }
            if (bad) {
                /* Either a torn read of a slot being reused (the gen
                 * check would catch it) or corruption: decide below. */
                atomic_thread_fence(memory_order_acquire);
                if (atomic_load_explicit(&s->gen, memory_order_relaxed) != g1)
                    return SLOT_SKIPPED;
                return SLOT_CORRUPT;
            }
            if (snap->names_cap - snap->names_len < rounded + 1 &&
                pcw__snapshot_reserve(snap, 0, 0, rounded + 1) != PCW_OK)
                return SLOT_NOMEM;
            name_at = snap->names_len;
            /* An empty name's offset is not checked: never form map + it. */
            if (rounded)
                copy_words((unsigned char *)snap->names + name_at, a->seg->map + noff,
                           (uint32_t)rounded);
        }
        /* R2. Pairs with the provider's release fence at close and at
         * write_begin: if any load above saw a later store, the loads below
         * see the later gen/seq. */
        atomic_thread_fence(memory_order_acquire);
        if (seq && atomic_load_explicit(&s->seq, memory_order_relaxed) != q1) {
            if (atomic_load_explicit(&s->gen, memory_order_relaxed) != g1)
                return SLOT_SKIPPED;
            continue;
        }
        if (atomic_load_explicit(&s->gen, memory_order_relaxed) != g1)
            return SLOT_SKIPPED; /* closed (maybe reused) while we read */
        if (names) {
            snap->names[name_at + nlen] = 0;
            snap->names_len = name_at + nlen + 1;
        }
        cur->samples[cur->count++] =
            (pcw_sample){.id = id, .name_len = nlen, .name_off = name_at, .data_off = cur->dlen};
        cur->dlen += dsize;
        return SLOT_ADDED;
    }
    return SLOT_BUSY;
}

static int read_chunks(void *p)
{
    struct read_args *a = (struct read_args *)p;
    const pcw_cset_priv *cs = a->cs;
    const unsigned char *map = a->seg->map;
    const pcw_seg_cset *sc = (const pcw_seg_cset *)(map + cs->off);
    pcw_snapshot *snap = a->snap;
    uint64_t stride = cs->slot_stride;
    /* Acquire pairs with the provider's release when it linked the chunk. */
    uint64_t off = atomic_load_explicit(&sc->chunk_head, memory_order_acquire);
    uint64_t prev = 0;
    uint32_t expect_first = 0;
    for (uint32_t nch = 0; off; nch++) {
        /* Chunk offsets grow along the list (bump allocation): the walk
         * ends even on a hostile segment. */
        if (nch >= PCW_MAX_CHUNKS || off <= prev || off % 8)
            return PCW_E_CORRUPT;
        if (!pcw__in_range(off, sizeof(pcw_seg_chunk), a->size)) {
            int r = catch_up(a, off, sizeof(pcw_seg_chunk));
            if (r <= 0)
                return r == 0 ? PCW_OK : PCW_E_CORRUPT; /* 0: linked after we began */
        }
        const pcw_seg_chunk *ch = (const pcw_seg_chunk *)(map + off);
        uint32_t first = ch->first_slot, n = ch->nslots;
        if (first != expect_first || n == 0 || n > PCW_MAX_CHUNK_SLOTS || ch->cset_off != cs->off)
            return PCW_E_CORRUPT;
        if (!pcw__in_range(off + sizeof(pcw_seg_chunk), (uint64_t)n * stride, a->size)) {
            int r = catch_up(a, off + sizeof(pcw_seg_chunk), (uint64_t)n * stride);
            if (r <= 0)
                return r == 0 ? PCW_OK : PCW_E_CORRUPT;
        }
        const unsigned char *slots = map + off + sizeof(pcw_seg_chunk);
        uint32_t lo = 0, hi = n;
        if (a->only_id != PCW_ANY_INSTANCE_ID) {
            if (a->only_id < first || a->only_id - first >= n)
                goto next;
            lo = a->only_id - first, hi = lo + 1;
        }
        if (pcw__snapshot_reserve(snap, hi - lo, (uint64_t)(hi - lo) * cs->pub.data_size, 0) !=
            PCW_OK)
            return PCW_E_NO_MEMORY;
        /* The cursor's pointers stay valid through the loop: read_slot grows
         * only the names buffer (reserving names never moves samples or
         * data, whose room for hi - lo more is reserved just above). */
        cursor cur = {snap->samples, snap->data, snap->count, snap->data_len};
        int r = SLOT_SKIPPED;
        for (uint32_t i = lo; i < hi; i++) {
            r = read_slot(a, &cur, (const pcw_seg_slot *)(slots + (uint64_t)i * stride), first + i);
            if (r == SLOT_ADDED)
                a->found = 1;
            else if (r == SLOT_BUSY)
                snap->busy++;
            else if (r == SLOT_CORRUPT || r == SLOT_NOMEM)
                break;
        }
        snap->count = cur.count;
        snap->data_len = cur.dlen;
        if (r == SLOT_CORRUPT)
            return PCW_E_CORRUPT;
        if (r == SLOT_NOMEM)
            return PCW_E_NO_MEMORY;
    next:
        expect_first = first + n;
        prev = off;
        off = atomic_load_explicit(&ch->next, memory_order_acquire);
    }
    return PCW_OK;
}

static int do_read(pcw_segment *seg, const pcw_counterset *pub, pcw_snapshot *snap, unsigned flags,
                   uint32_t only_id, int *found)
{
    if (!seg || !pub || !snap)
        return PCW_E_INVALID_PARAMETER;
    const pcw_cset_priv *cs = (const pcw_cset_priv *)pub;
    if (cs < seg->csets || cs >= seg->csets + seg->ncsets)
        return PCW_E_INVALID_PARAMETER; /* not this segment's */
    if (!(flags & PCW_READ_APPEND))
        pcw_snapshot_clear(snap);
    else if (snap->count && snap->data_size != cs->pub.data_size)
        return PCW_E_INVALID_PARAMETER;
    snap->data_size = cs->pub.data_size;
    uint64_t size;
    int rc = pcw__segment_sync(seg, &size);
    if (rc != PCW_OK)
        return rc;
    size_t count0 = snap->count, data0 = snap->data_len, names0 = snap->names_len;
    /* One "" that every nameless sample of this read points to. */
    if (pcw__snapshot_reserve(snap, 0, 0, 1) != PCW_OK)
        return PCW_E_NO_MEMORY;
    snap->names[snap->names_len] = 0;
    struct read_args a = {seg, cs, snap, size, flags, only_id, 0, snap->names_len++};
    rc = pcw__guarded(seg->map, seg->map_len, read_chunks, &a);
    if (rc != PCW_OK) {
        /* Drop a partial result: nothing half-read is returned. */
        snap->count = count0, snap->data_len = data0, snap->names_len = names0;
        return rc;
    }
    if (found)
        *found = a.found;
    return PCW_OK;
}

int pcw_segment_read(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap, unsigned flags)
{
    return do_read(seg, cs, snap, flags, PCW_ANY_INSTANCE_ID, NULL);
}

int pcw_segment_read_instance(pcw_segment *seg, const pcw_counterset *cs, uint32_t id,
                              pcw_snapshot *snap, unsigned flags)
{
    if (id >= PCW_ANY_INSTANCE_ID)
        return PCW_E_INVALID_PARAMETER;
    int found = 0;
    int rc = do_read(seg, cs, snap, flags, id, &found);
    if (rc == PCW_OK && !found)
        return PCW_E_NOT_FOUND;
    return rc;
}
