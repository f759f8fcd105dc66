/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/read.c - read instances out of a segment into a snapshot.
 *
 * This is the consumer's hot loop. A counterset's slots live in chunks, each
 * a generation array, a name-reference array and an array of data rows
 * (pcw/layout.h). A read takes a run of slots of one chunk at a time and
 * validates the run as a whole with the chunk's close counter (the batched
 * protocol of pcw/layout.h, argued in docs/design.md §4):
 *
 *   R0  c1 = chunk.closes (acquire)
 *   R1  per slot: gen (acquire); a live slot's id, data row and name are
 *       copied with relaxed loads straight into the snapshot's columns
 *       (data rows with 16-byte loads on CPUs with AVX2: copy_vec_words, cvt_words)
 *   R3  fence(acquire)
 *   R4  c2 = chunk.closes (relaxed): if c1 == c2 the whole run stands; if
 *       not, the run is read again slot by slot with the per-slot seqlock
 *       (read_slot), which keeps a slot only if its gen did not change.
 *
 * Everything read from the mapping is bounded: chunks are validated once,
 * claimed (no two structures may share bytes: segment.c pcw__claim) and
 * cached privately, so a provider that rewrites a chunk header later
 * changes nothing; the instance names one read copies may not exceed the
 * segment's size in total. A read's work and memory are therefore linear in
 * the segment's size whatever its bytes say.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal.h"
#include "private.h"

/* clang says ThreadSanitizer with __has_feature, GCC with a macro. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PCW__HAS_TSAN_FEATURE 1
#endif
#endif
#ifndef PCW__HAS_TSAN_FEATURE
#define PCW__HAS_TSAN_FEATURE 0
#endif

/* What a snapshot remembers of the read that filled its ids (and names, if
 * it read them; the private cache_seg says which segment and metadata
 * load): the counterset, whether names were read, its generation and the
 * live-bit words the read saw. A later read of the same counterset with
 * the same words - so instances in the same slots - copies only the data
 * and keeps the ids as they are: an id is the slot's place in the chunk
 * list, which is this reader's private copy and only grows. Names need the
 * same generation too - the same instances, not only the same slots (R5
 * below; docs/design.md 4.4). */
struct pcw__name_cache {
    uint64_t cset_off, generation;
    size_t count, names_len;
    int names;
    uint64_t *words;
    size_t nwords, cap;
};

/* The readers' fences R2 and R3 (docs/design.md 4.2, 4.3, 4.6): they order
 * the copies (loads) before the re-check's loads. C11 needs seq_cst for the
 * stores of threads that issue no fence (4.6), and that is what every build
 * but one gets. On x86-64 the hardware orders a load after an earlier load
 * and stores in one total order (x86-TSO, Intel SDM vol. 3A 9.2.2), and C1
 * is a locked RMW, which nothing after it in its thread passes: so if a copy
 * read a store that C1 happens-before, the later load of closes or gen reads
 * C1 or later, fence or not. The acquire fence stays as the compiler
 * barrier that keeps the copies before the re-check (GCC emits no
 * instruction for it on x86). The mfence it replaces drained the store
 * buffer of the snapshot's rows: a tenth of a 1,000-instance read
 * (docs/performance.md). ThreadSanitizer builds keep seq_cst, the contract
 * TSan checks. */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !PCW__HAS_TSAN_FEATURE
#define PCW__READER_FENCE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#else
#define PCW__READER_FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* Slots per validated run. Small enough that a close somewhere in a big
 * chunk makes the reader redo little; large enough that R0/R3/R4 vanish in
 * the cost of the run. (private.h: a run's rows, for its callers.) */
#define RUN_SLOTS PCW__RUN_ROWS

uint64_t pcw__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pcw_snapshot_free(pcw_snapshot *s)
{
    if (!s)
        return;
    if (pcw__snap(s)->name_cache)
        free(pcw__snap(s)->name_cache->words);
    free(pcw__snap(s)->name_cache);
    free(s->ids);
    free(s->data);
    free(pcw__snap(s)->name_off_buf);
    free(pcw__snap(s)->name_len_buf);
    free(s->names);
    free(s->sources);
    memset(s, 0, sizeof *s);
}

void pcw_snapshot_clear(pcw_snapshot *snap)
{
    if (!snap)
        return;
    pcw__snap(snap)->cache_seg = 0; /* the rows go: what was known of them too */
    pcw__snap(snap)->names_len = 0;
    snap->count = snap->nsources = 0;
    snap->busy = 0;
    snap->time_ns = 0;
    snap->name_off = NULL;
    snap->name_len = NULL;
}

/* A capacity of at least `need` elements: doubling from 64. 0 on overflow. */
static size_t new_cap(size_t cap, size_t need, size_t elem)
{
    size_t n = cap ? cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return 0;
        n *= 2;
    }
    return n;
}

static int grow_bytes(void **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return PCW_OK;
    size_t n = new_cap(*cap, need, 1);
    void *m = n ? realloc(*buf, n) : NULL;
    if (!m)
        return PCW_E_NO_MEMORY;
    *buf = m;
    *cap = n;
    return PCW_OK;
}

/* The data column: on a 64-byte line boundary, as the segment's rows are
 * (PCW_SEG_ALIGN), so that the read's 32-byte stores of a chunk's rows
 * never straddle two lines, wherever malloc would have put the column (it
 * promises 16 bytes; a large one it maps lies 16 bytes past a page). Grown
 * by copying: realloc cannot keep the alignment. */
static int grow_data(pcw_snapshot *s, size_t need)
{
    size_t n = new_cap(pcw__snap(s)->data_cap, need, 1);
    n = n && n <= SIZE_MAX - 63 ? (n + 63) & ~(size_t)63 : 0;
    unsigned char *m = n ? aligned_alloc(64, n) : NULL;
    if (!m)
        return PCW_E_NO_MEMORY;
    if (s->data)
        memcpy(m, s->data, pcw__snap(s)->data_cap);
    free(s->data);
    s->data = m;
    pcw__snap(s)->data_cap = n;
    return PCW_OK;
}

int pcw__snapshot_reserve(pcw_snapshot *s, size_t rows, int names, size_t name_bytes)
{
    size_t need = s->count + rows;
    if (need < s->count)
        return PCW_E_NO_MEMORY;
    if (need > pcw__snap(s)->cap || (names && !pcw__snap(s)->name_off_buf)) {
        /* Each column grows to the new capacity; `cap` moves only once all
         * have (a column left larger than `cap` is harmless). */
        size_t n = new_cap(pcw__snap(s)->cap, need, sizeof(uint64_t)); /* >= 64 */
        if (!n)
            return PCW_E_NO_MEMORY;
        if (n > pcw__snap(s)->cap) {
            uint32_t *ids = realloc(s->ids, n * sizeof *ids);
            if (!ids)
                return PCW_E_NO_MEMORY;
            s->ids = ids;
        }
        if (names || pcw__snap(s)->name_off_buf) {
            uint64_t *no = realloc(pcw__snap(s)->name_off_buf, n * sizeof *no);
            if (!no)
                return PCW_E_NO_MEMORY;
            pcw__snap(s)->name_off_buf = no;
            uint32_t *nl = realloc(pcw__snap(s)->name_len_buf, n * sizeof *nl);
            if (!nl)
                return PCW_E_NO_MEMORY;
            pcw__snap(s)->name_len_buf = nl;
            if (s->name_off)
                s->name_off = no, s->name_len = nl;
        }
        pcw__snap(s)->cap = n;
    }
    size_t dneed = need * (size_t)s->data_size;
    if (s->data_size && dneed / s->data_size != need)
        return PCW_E_NO_MEMORY;
    if (dneed > pcw__snap(s)->data_cap) {
        int rc = grow_data(s, dneed);
        if (rc != PCW_OK)
            return rc;
    }
    if (pcw__snap(s)->names_len + name_bytes < pcw__snap(s)->names_len)
        return PCW_E_NO_MEMORY;
    return grow_bytes((void **)&s->names, &pcw__snap(s)->names_cap, pcw__snap(s)->names_len + name_bytes);
}

int pcw__snapshot_want_names(pcw_snapshot *s)
{
    if (s->name_off)
        return PCW_OK;
    int rc = pcw__snapshot_reserve(s, 0, 1, 1);
    if (rc != PCW_OK)
        return rc;
    /* Rows already there (read without names) get "". */
    uint64_t empty = pcw__snap(s)->names_len;
    s->names[pcw__snap(s)->names_len++] = 0;
    for (size_t i = 0; i < s->count; i++)
        pcw__snap(s)->name_off_buf[i] = empty, pcw__snap(s)->name_len_buf[i] = 0;
    s->name_off = pcw__snap(s)->name_off_buf;
    s->name_len = pcw__snap(s)->name_len_buf;
    return PCW_OK;
}

int pcw__snapshot_begin_source(pcw_snapshot *s, const pcw_segment *seg, uint32_t source)
{
    if (s->nsources == pcw__snap(s)->sources_cap) {
        size_t n = new_cap(pcw__snap(s)->sources_cap, s->nsources + 1, sizeof *s->sources);
        pcw_snapshot_source *v = n ? realloc(s->sources, n * sizeof *v) : NULL;
        if (!v)
            return PCW_E_NO_MEMORY;
        s->sources = v;
        pcw__snap(s)->sources_cap = n;
    }
    pcw_snapshot_source *src = &s->sources[s->nsources++];
    memset(src, 0, sizeof *src);
    src->first = s->count;
    src->source = source;
    if (seg) {
        src->pid = seg->info.pid;
        src->provider_id = seg->info.provider_id;
    }
    src->time_ns = pcw__now_ns();
    if (s->nsources == 1)
        s->time_ns = src->time_ns;
    return PCW_OK;
}

const pcw_snapshot_source *pcw_snapshot_source_of(const pcw_snapshot *s, size_t row)
{
    if (!s || row >= s->count || !s->nsources)
        return NULL;
    size_t lo = 0, hi = s->nsources;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->sources[mid].first <= row)
            lo = mid;
        else
            hi = mid;
    }
    const pcw_snapshot_source *src = &s->sources[lo];
    return row - src->first < src->count ? src : NULL;
}

/* How a read uses the name cache. */
enum { CACHE_OFF, CACHE_RECORD, CACHE_REUSE };

struct read_args {
    pcw_segment *seg;
    pcw_cset_priv *cs;
    pcw_snapshot *snap;
    uint64_t size; /* checked bound: header.size, within the mapping */
    unsigned flags;
    int names;
    uint32_t only_id;    /* PCW_ANY_INSTANCE_ID = all */
    int found;           /* only_id: it was live */
    uint64_t name_bytes; /* name bytes this read has copied: never more
                            than the segment holds (a->size) */
    int cache;           /* CACHE_* */
    size_t nword;        /* live words seen so far (recorded or compared) */
    int streamed;        /* rows were written with non-temporal stores */
    pcw__run_fn run_fn;  /* pcw__segment_read_runs: each validated run */
    void *run_arg;
    pcw__copy_fn copy_fn; /* pcw__segment_read_runs_copy: the caller copies runs */
    int vec;          /* 16-byte loads (vec_cpu) */
    double *cvt;      /* and its conversion buffer (NULL: none, or not this CPU) */
    size_t cvt_cap;   /* doubles */
    int cvt_run;      /* this run's rows are converted as they are copied */
    size_t run_first; /* the run's first snapshot row */
    uint64_t cvt_or;  /* the OR of the words the run converted the fast way */
};

/* A REUSE read found the instances changed: it starts again, fresh. */
#define CACHE_MISS (-100)

/* Copy n bytes (a multiple of 8; src 8-aligned) with relaxed 64-bit loads:
 * no value is ever torn, and racing with the provider's stores is not a
 * data race in C11's terms. dst may be unaligned (names are packed back to
 * back), so it is written with memcpy, which compiles to a plain store. */
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
    /* Pairs with the provider's release store of size (pcw__arena_alloc). */
    uint64_t size = __atomic_load_n(&h->size, __ATOMIC_ACQUIRE);
    if (!pcw__in_range(off, len, size))
        return -1;
    if (!pcw__in_range(off, len, a->seg->map_len))
        return 0;
    a->size = size < a->seg->map_len ? size : a->seg->map_len;
    return 1;
}

/* What reading one slot, or a name, came to. */
enum { SLOT_SKIPPED = 1, SLOT_ADDED, SLOT_BUSY, SLOT_CORRUPT, SLOT_NOMEM, SLOT_RECHECK };

/* Check a name reference read from a slot: 0 if it may be copied, else
 * (all non-zero)
 * SLOT_RECHECK (out of bounds: a torn read of a slot being reused, which
 * the generation check will catch, or corruption), SLOT_SKIPPED (a name
 * newer than this read's mapping), SLOT_CORRUPT (the names of one read
 * exceed the segment's size: they must overlap). */
static inline int check_name(struct read_args *a, uint64_t ref, uint64_t *off, uint32_t *len)
{
    *off = PCW_SEG_NAME_OFF(ref);
    *len = PCW_SEG_NAME_LEN(ref);
    uint64_t rounded = (*len + 7ull) & ~7ull;
    if (*len > PCW_MAX_INSTANCE_NAME_BYTES || (*len && *off % 8))
        return SLOT_RECHECK;
    if (*len && !pcw__in_range(*off, rounded, a->size)) {
        int r = catch_up(a, *off, rounded); /* a name allocated since we began */
        if (r == 0)
            return SLOT_SKIPPED;
        if (r < 0)
            return SLOT_RECHECK;
    }
    if (a->name_bytes + rounded + 1 > a->size)
        return SLOT_CORRUPT;
    a->name_bytes += rounded + 1;
    return 0;
}

/* Copy a checked name into the snapshot as row `row`'s name. */
static inline int put_name(struct read_args *a, size_t row, uint64_t off, uint32_t len)
{
    pcw_snapshot *s = a->snap;
    uint64_t rounded = (len + 7ull) & ~7ull;
    if (pcw__snap(s)->names_cap - pcw__snap(s)->names_len < rounded + 1 &&
        pcw__snapshot_reserve(s, 0, 0, rounded + 1) != PCW_OK)
        return SLOT_NOMEM;
    if (len) /* an empty name's offset may be anything: never form map + off */
        copy_words((unsigned char *)s->names + pcw__snap(s)->names_len, a->seg->map + off, (uint32_t)rounded);
    s->name_off[row] = pcw__snap(s)->names_len;
    s->name_len[row] = len;
    s->names[pcw__snap(s)->names_len + len] = 0;
    pcw__snap(s)->names_len += len + 1;
    return 0;
}

/* One slot, by itself: the per-slot seqlock (and the seqcount protocol of
 * PCW_CSET_F_SEQCOUNT rows). The fallback of a run whose chunk saw a close,
 * and the only path for seqcount countersets. Appends at most one row. */
static int read_slot(struct read_args *a, const pcw_chunk_priv *c, uint32_t i)
{
    const unsigned char *map = a->seg->map;
    const uint64_t *gen =
        (const uint64_t *)(const void *)(map + c->off + pcw__seg_chunk_gens(c->n)) + i;
    const uint64_t *nref =
        (const uint64_t *)(const void *)(map + c->off + pcw__seg_chunk_names(c->n)) + i;
    const unsigned char *row =
        map + c->off + pcw__seg_chunk_rows(c->n) + (uint64_t)i * a->cs->data_stride;
    const uint64_t *seqp = (const uint64_t *)(const void *)row;
    const int seq = a->cs->row_data != 0;
    pcw_snapshot *s = a->snap;
    const uint32_t dsize = s->data_size;
    for (uint32_t attempt = 0; attempt < PCW_SEQ_TRIES; attempt++) {
        /* Pairs with the provider's release publish of gen. */
        uint64_t g1 = __atomic_load_n(gen, __ATOMIC_ACQUIRE);
        if (!PCW_SLOT_LIVE(g1))
            return SLOT_SKIPPED;
        uint64_t q1 = 0;
        if (seq) {
            /* Pairs with the provider's release in pcw_instance_write_end. */
            q1 = __atomic_load_n(seqp, __ATOMIC_ACQUIRE);
            if (q1 & 1)
                continue; /* a write is in progress */
        }
        size_t row_at = s->count;
        copy_words(s->data + row_at * dsize, row + a->cs->row_data, dsize);
        size_t names0 = pcw__snap(s)->names_len;
        uint64_t budget0 = a->name_bytes;
        if (a->names) {
            uint64_t noff;
            uint32_t nlen;
            int r = check_name(a, __atomic_load_n(nref, __ATOMIC_RELAXED), &noff, &nlen);
            if (r == SLOT_RECHECK) {
                /* Decide between a slot being reused and corruption (R2,
                 * as below). */
                PCW__READER_FENCE();
                if (__atomic_load_n(gen, __ATOMIC_RELAXED) != g1)
                    return SLOT_SKIPPED;
                return pcw__corrupt(a->seg,
                                    "counterset \"%s\": instance %u's name is outside "
                                    "the segment",
                                    a->cs->pub.name, c->first + i),
                       SLOT_CORRUPT;
            }
            if (r == SLOT_CORRUPT)
                return pcw__corrupt(a->seg,
                                    "counterset \"%s\": instance names exceed the "
                                    "segment's size (they overlap)",
                                    a->cs->pub.name),
                       SLOT_CORRUPT;
            if (r != 0)
                return r;
            if ((r = put_name(a, row_at, noff, nlen)) != 0)
                return r;
        }
        /* R2 of the per-slot protocol. Pairs with the provider's fences C0
         * and C2 (pcw_create_instance, pcw_close_instance) and the one in
         * pcw_instance_write_begin: if any load above saw a later store,
         * the loads below see the later gen/seq. seq_cst, as C2 is, for
         * stores by threads with no fence of their own (pcw_close_instance
         * says why; PCW__READER_FENCE: x86-64 needs no instruction). */
        PCW__READER_FENCE();
        int changed = __atomic_load_n(gen, __ATOMIC_RELAXED) != g1;
        if (!changed && seq && __atomic_load_n(seqp, __ATOMIC_RELAXED) != q1)
            changed = -1; /* the data moved under us: try again */
        if (changed) {
            pcw__snap(s)->names_len = names0;
            a->name_bytes = budget0;
            if (changed > 0)
                return SLOT_SKIPPED; /* closed (maybe reused) while we read */
            continue;
        }
        s->ids[row_at] = c->first + i;
        s->count = row_at + 1;
        return SLOT_ADDED;
    }
    return SLOT_BUSY;
}

/* Slots [lo, hi) of chunk c, one at a time. */
static int read_slots(struct read_args *a, const pcw_chunk_priv *c, uint32_t lo, uint32_t hi)
{
    for (uint32_t i = lo; i < hi; i++) {
        int r = read_slot(a, c, i);
        if (r == SLOT_ADDED)
            a->found = 1;
        else if (r == SLOT_BUSY)
            a->snap->busy++;
        else if (r == SLOT_CORRUPT)
            return PCW_E_CORRUPT;
        else if (r == SLOT_NOMEM)
            return PCW_E_NO_MEMORY;
    }
    return PCW_OK;
}

/* Non-temporal stores for the rows of a read larger than the last-level
 * cache: such a snapshot leaves the caches anyway, and a plain store first
 * reads the line it writes (a third of the memory traffic of the copy;
 * memcpy avoids it the same way). A snapshot that fits stays in the cache
 * with plain stores, because its consumer reads it next (cooking, a
 * table, an exporter's text: streaming those rows made the query layer's
 * and pcwtop's passes over them as much slower as the read got faster;
 * docs/performance.md). The loads stay relaxed 64-bit atomic loads: the
 * stores only concern the snapshot, which is private. Not in sanitizer
 * builds, whose checks do not see these stores. The read ends with an
 * sfence (do_read) so that the rows are ordered before whatever the
 * caller does next - a plain store that publishes the snapshot to another
 * thread does not order non-temporal ones. */
#if defined(__SSE2__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) &&                  \
    !defined(__SANITIZE_THREAD__)
#define PCW__STREAM_ROWS 1
#else
#define PCW__STREAM_ROWS 0
#endif
/* Rows already in this read before it streams: the size of a large
 * last-level cache (a server's is 16-64 MiB; this VM's 32 MiB). A fixed
 * figure, not sysconf(_SC_LEVEL3_CACHE_SIZE): that said 256 MiB here,
 * where sysfs says 32. */
#define PCW__STREAM_FROM_BYTES ((size_t)32 << 20)
/* ... except a read that converts its rows as it copies them
 * (pcw__segment_read_runs with a buffer, the query layer's collection):
 * its caller reads the converted values, in the buffer, not the rows, and
 * the query alternates two snapshots, so one collection's rows, the
 * segment's and the last sample's are three times the rows' size. Plain
 * stores there evicted the segment and read every line before writing it
 * (query/collect_cooked/100000/16, 25.6 MB of rows: 1.8-2.1x the snapshot
 * with plain stores, 1.1-1.45x streamed; docs/performance.md). From 1 MiB
 * (a core's L2 here): smaller reads measured the same either way, and
 * their rows stay in the cache for a caller that reads them after all
 * (pcw_pdh_visit after the collection). */
#define PCW__STREAM_CVT_FROM_BYTES ((size_t)1 << 20)

/* One word of a row into the snapshot: a plain or (nt) a non-temporal
 * store. nt is a constant at each call of copy_rows, so each loop
 * compiles to one kind of store. */
static inline void put_word(uint64_t *dst, uint64_t v, int nt)
{
#if PCW__STREAM_ROWS
    if (nt) {
        _mm_stream_si64((long long *)(void *)dst, (long long)v);
        return;
    }
#endif
    (void)nt;
    *dst = v;
}

/* Copy n 8-byte words with relaxed loads into 8-aligned private memory:
 * each value is read whole (never torn), and racing with the provider's
 * stores is not a data race in C11's terms. Relaxed atomic loads are not
 * merged into vector loads by the compiler, so the loop is unrolled by
 * hand: eight loads and stores per iteration. */
static inline void copy_row_words(uint64_t *dst, const uint64_t *src, size_t n, int nt)
{
    size_t w = 0;
    for (; w + 8 <= n; w += 8) {
#pragma GCC unroll 8
        for (size_t j = 0; j < 8; j++)
            put_word(&dst[w + j], __atomic_load_n(&src[w + j], __ATOMIC_RELAXED), nt);
    }
    for (; w < n; w++)
        put_word(&dst[w], __atomic_load_n(&src[w], __ATOMIC_RELAXED), nt);
}

/* len rows of `words` words, `stride` bytes apart in the segment, into
 * consecutive snapshot rows. */
static inline void copy_rows(uint64_t *dst, const unsigned char *src, size_t words, size_t stride,
                             uint32_t len, int nt)
{
    if (stride == words * 8) /* rows back to back: one contiguous copy */
        copy_row_words(dst, (const uint64_t *)(const void *)src, len * words, nt);
    else
        for (uint32_t j = 0; j < len; j++)
            copy_row_words(dst + j * words,
                           (const uint64_t *)(const void *)(src + (size_t)j * stride), words, nt);
}

/* ids[0..n) = id, id + 1, ...: private memory, so plain (vector) stores. */
static inline void fill_ids(uint32_t *ids, uint32_t id, uint32_t n)
{
    uint32_t j = 0;
#if defined(__SSE2__)
    __m128i v = _mm_add_epi32(_mm_set1_epi32((int)id), _mm_set_epi32(3, 2, 1, 0));
    const __m128i c4 = _mm_set1_epi32(4);
    for (; j + 16 <= n; j += 16) {
        _mm_storeu_si128((__m128i *)(void *)(ids + j), v);
        v = _mm_add_epi32(v, c4);
        _mm_storeu_si128((__m128i *)(void *)(ids + j + 4), v);
        v = _mm_add_epi32(v, c4);
        _mm_storeu_si128((__m128i *)(void *)(ids + j + 8), v);
        v = _mm_add_epi32(v, c4);
        _mm_storeu_si128((__m128i *)(void *)(ids + j + 12), v);
        v = _mm_add_epi32(v, c4);
    }
#endif
    for (; j < n; j++)
        ids[j] = id + j;
}

/* ---- 16-byte loads (CPUs with AVX2) -------------------------------------
 *
 * On x86-64 CPUs with AVX2 the rows are copied with 16-byte loads and
 * 32-byte stores instead of 8-byte ones: half the operations of the
 * scalar loop, whose loads and stores, not the memory, were what bound
 * it (docs/performance.md: the read of 100,000 x 16 about 25 % faster).
 * For pcw__segment_read_runs a loop of the same loads also converts each
 * word to a double, in the pass that copies it (the query layer's
 * collection: cvt_words).
 *
 * The loads are VMOVDQA of 16 aligned bytes. Intel (SDM vol. 3A,
 * "Guaranteed Atomic Operations") and AMD (APM vol. 2, 7.3.2 "Access
 * Atomicity") guarantee, since 2021 and for every processor with AVX
 * before and after, that such a load of cacheable memory is one atomic
 * access - GCC's libatomic and LLVM implement C's 16-byte atomic loads
 * with it - so each 8-byte word is read whole, at least as the relaxed
 * 64-bit loads of copy_row_words read it. They are asm so that the
 * compiler neither merges, splits nor drops them; the asm names the
 * memory it reads and is volatile, so it stays between the run's acquire
 * loads of live words (R1') and its fence (R3) as the relaxed loads do,
 * and x86 does not reorder loads with loads. A word off 16-byte alignment
 * at the start or end of a stretch is a relaxed 64-bit load, as before.
 *
 * Not in ThreadSanitizer builds: TSan does not see asm, and the
 * concurrency tests it runs (tests/conc_*.c) check the protocol with C11's
 * relaxed loads, which these loads follow one for one. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__) &&                   \
    !PCW__HAS_TSAN_FEATURE
#define PCW__VEC_COPY 1

/* One whole 16-byte load of p (16-aligned): two words. */
__attribute__((target("avx2"))) static inline __m128i load16(const uint64_t *p)
{
    __m128i v;
    __asm__ volatile("vmovdqa %1, %0" : "=x"(v) : "m"(*(const __m128i *)(const void *)p));
    return v;
}

/* Copy n words from src (8-aligned) to dst. */
__attribute__((target("avx2"))) static void copy_vec_words(uint64_t *dst, const uint64_t *src,
                                                           size_t n)
{
    size_t w = 0;
    if (n && ((uintptr_t)src & 15)) { /* one word, to 16-byte alignment */
        dst[0] = __atomic_load_n(src, __ATOMIC_RELAXED);
        w = 1;
    }
    /* Two 32-byte stores an iteration: with one, the loop's own
     * instructions, not the loads, bounded the copy (an 8 KB read 20 %
     * slower; docs/performance.md). */
    for (; w + 8 <= n; w += 8) {
        __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(src + w)),
                                            load16(src + w + 2), 1);
        __m256i b = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(src + w + 4)),
                                            load16(src + w + 6), 1);
        _mm256_storeu_si256((__m256i *)(void *)(dst + w), a);
        _mm256_storeu_si256((__m256i *)(void *)(dst + w + 4), b);
    }
    for (; w + 4 <= n; w += 4) {
        __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(src + w)),
                                            load16(src + w + 2), 1);
        _mm256_storeu_si256((__m256i *)(void *)(dst + w), a);
    }
    for (; w < n; w++)
        dst[w] = __atomic_load_n(&src[w], __ATOMIC_RELAXED);
}

/* How far ahead a large read's conversion prefetches the segment's rows:
 * 16 KB. The hardware's prefetch alone left the loop waiting on its first
 * load of each line (half its samples in perf); 4, 8 and 16 KB ahead
 * measured better each (query/collect_cooked/100000/16: 1.09x the
 * snapshot without, 0.88x at 16 KB; medians of 4 runs). */
#define CVT_PREFETCH_WORDS 2048

/* One 32-byte store of v to d: non-temporal if nt (d then 32-aligned). */
__attribute__((target("avx2"), always_inline)) static inline void put32(uint64_t *d, __m256i v,
                                                                        const int nt)
{
    if (nt)
        _mm256_stream_si256((__m256i *)(void *)d, v);
    else
        _mm256_storeu_si256((__m256i *)(void *)d, v);
}

/* copy_vec_words converting (the query layer's collection): each word also
 * written to cv as a double - (double)x for words loaded one at a time,
 * for the others x's bits under 2^52's exponent minus 2^52, exact for
 * x < 2^52; returns the OR of those others, for the caller to check that
 * they were all below 2^52. The rows are streamed if `nt` (dst 16-aligned
 * where src is): then one 16-byte step first if dst is not 32-aligned, so
 * that the loop's stores are whole 32-byte ones. Eight words an iteration,
 * pointers advanced (fewer instructions a word than four). If `far`, each
 * iteration prefetches the line CVT_PREFETCH_WORDS ahead (docs/performance.md).
 * `nt` and `far` are constants at each call. */
__attribute__((target("avx2"), always_inline)) static inline uint64_t
cvt_words(uint64_t *dst, const uint64_t *src, size_t n, double *cv, const int nt, const int far)
{
    const uint64_t *s = src, *end = src + n;
    if (s != end && ((uintptr_t)s & 15)) { /* one word, to 16-byte alignment */
        uint64_t v = __atomic_load_n(s++, __ATOMIC_RELAXED);
        *dst++ = v, *cv++ = (double)v;
    }
    if (nt && end - s >= 2 && ((uintptr_t)dst & 31)) { /* two words, to 32 */
        __m128i a = load16(s);
        _mm_stream_si128((__m128i *)(void *)dst, a);
        cv[0] = (double)(uint64_t)_mm_cvtsi128_si64(a);
        cv[1] = (double)(uint64_t)_mm_extract_epi64(a, 1);
        s += 2, dst += 2, cv += 2;
    }
    const __m256i exp52 = _mm256_set1_epi64x(0x4330000000000000ll);
    const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
    __m256i acc = _mm256_setzero_si256();
    for (; end - s >= 8; s += 8, dst += 8, cv += 8) {
        if (far) /* a hint: never faults, past the mapping neither (an
                    address computed as an integer: no pointer past the rows) */
            _mm_prefetch((const char *)((uintptr_t)s + 8 * CVT_PREFETCH_WORDS), _MM_HINT_T0);
        __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(s)), load16(s + 2), 1);
        __m256i b =
            _mm256_inserti128_si256(_mm256_castsi128_si256(load16(s + 4)), load16(s + 6), 1);
        put32(dst, a, nt);
        put32(dst + 4, b, nt);
        acc = _mm256_or_si256(acc, _mm256_or_si256(a, b));
        _mm256_storeu_pd(cv, _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a, exp52)), two52));
        _mm256_storeu_pd(cv + 4,
                         _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(b, exp52)), two52));
    }
    if (end - s >= 4) {
        __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(s)), load16(s + 2), 1);
        put32(dst, a, nt);
        acc = _mm256_or_si256(acc, a);
        _mm256_storeu_pd(cv, _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a, exp52)), two52));
        s += 4, dst += 4, cv += 4;
    }
    for (; s != end; s++) {
        uint64_t v = __atomic_load_n(s, __ATOMIC_RELAXED);
        *dst++ = v, *cv++ = (double)v;
    }
    __m128i o = _mm_or_si128(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    return (uint64_t)_mm_cvtsi128_si64(o) | (uint64_t)_mm_extract_epi64(o, 1);
}

/* A large read's rows (`big`: past PCW__STREAM_CVT_FROM_BYTES) prefetched
 * and streamed where dst is 16-aligned with src, else stored; a small
 * read's stored, not prefetched (they are in the cache, mostly). */
__attribute__((target("avx2"))) static uint64_t copy_cvt_words(uint64_t *dst, const uint64_t *src,
                                                               size_t n, double *cv, int big)
{
    if (!big)
        return cvt_words(dst, src, n, cv, 0, 0);
    if (PCW__STREAM_ROWS && !(((uintptr_t)dst ^ (uintptr_t)src) & 15))
        return cvt_words(dst, src, n, cv, 1, 1);
    return cvt_words(dst, src, n, cv, 0, 1);
}

/* fill_ids with 32-byte stores: half the stores of the SSE2 loop, which
 * bound it (a 1,000-instance read writes 4 KB of ids beside 8 KB of rows). */
__attribute__((target("avx2"))) static void fill_ids_vec(uint32_t *ids, uint32_t id, uint32_t n)
{
    uint32_t j = 0;
    __m256i v =
        _mm256_add_epi32(_mm256_set1_epi32((int)id), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i c8 = _mm256_set1_epi32(8);
    for (; j + 16 <= n; j += 16) {
        _mm256_storeu_si256((__m256i *)(void *)(ids + j), v);
        v = _mm256_add_epi32(v, c8);
        _mm256_storeu_si256((__m256i *)(void *)(ids + j + 8), v);
        v = _mm256_add_epi32(v, c8);
    }
    for (; j < n; j++)
        ids[j] = id + j;
}

/* pcw__copy_delta_words (private.h): the read's 16-byte loads, each
 * word's delta against the last copy computed in the loop that copies it.
 * The new words go out with non-temporal stores (PCW__STREAM_ROWS) where
 * dst is 16-aligned with src: the line written is then not read first, so
 * the pass moves what a plain copy moves, the last copy being read in its
 * stead. has_prev, span (NULL or not) and nt are constants at each call.
 *
 * With span, where the deltas are non-zero, as it goes and without a
 * branch: each lane holds 1 + its word's index in its low 32 bits (n <=
 * 2^32 - 2), made all ones where the delta is 0 for the minimum, 0 for
 * the maximum. The loop waits on its loads; these operations fill the
 * wait. */
struct delta_acc {
    __m128i or, sum, lo1, hi; /* lo1, hi: 32-bit lanes 0 and 2 */
};

/* Words [w, w + 2) of delta_words, 16-aligned at src and dst. */
__attribute__((target("avx2"), always_inline)) static inline void
delta_step2(uint64_t *dst, const uint64_t *src, const uint64_t *prev, uint64_t *delta, size_t w,
            struct delta_acc *c, const int span, const int has_prev, const int nt)
{
    __m128i a = load16(src + w);
    if (nt)
        _mm_stream_si128((__m128i *)(void *)(dst + w), a);
    else
        _mm_storeu_si128((__m128i *)(void *)(dst + w), a);
    if (!has_prev)
        return;
    __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(prev + w));
    __m128i x = _mm_sub_epi64(a, b);
    c->or = _mm_or_si128(c->or, _mm_or_si128(x, b));
    c->sum = _mm_add_epi64(c->sum, x);
    _mm_storeu_si128((__m128i *)(void *)(delta + w), x);
    if (span) {
        __m128i z = _mm_cmpeq_epi64(x, _mm_setzero_si128());
        __m128i i1 = _mm_set_epi64x((long long)w + 2, (long long)w + 1);
        c->lo1 = _mm_min_epu32(c->lo1, _mm_or_si128(i1, z));
        c->hi = _mm_max_epu32(c->hi, _mm_andnot_si128(z, i1));
    }
}

__attribute__((target("avx2"), always_inline)) static inline uint64_t
delta_words(uint64_t *dst, const uint64_t *src, const uint64_t *prev, uint64_t *delta, size_t n,
            uint64_t *sum, uint32_t *span, const int has_prev, const int nt)
{
    size_t w = 0;
    uint64_t ors = 0, total = 0;
    uint32_t lo1 = UINT32_MAX, hi = 0; /* span: 1 + the first, 1 + the last non-zero delta */
    if (n && ((uintptr_t)src & 15)) { /* one word, to 16-byte alignment */
        uint64_t v = __atomic_load_n(src, __ATOMIC_RELAXED), b = has_prev ? prev[0] : 0;
        dst[0] = v;
        if (has_prev)
            delta[0] = v - b, ors = (v - b) | b, total = v - b;
        if (span && v != b)
            lo1 = hi = 1;
        w = 1;
    }
    struct delta_acc c = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_set1_epi32(-1),
                          _mm_setzero_si128()};
    /* Two words to 32-byte alignment of dst (a 32-byte non-temporal
     * store's), then four at a time: half the operations of 16-byte steps,
     * so the core has more loads in flight. */
    if (w + 4 <= n && ((uintptr_t)(dst + w) & 16))
        delta_step2(dst, src, prev, delta, w, &c, span != NULL, has_prev, nt), w += 2;
    __m256i vor = _mm256_setzero_si256(), vsum = _mm256_setzero_si256();
    __m256i vlo1 = _mm256_set1_epi32(-1), vhi = _mm256_setzero_si256();
    __m256i vi1 =
        _mm256_set_epi64x((long long)w + 4, (long long)w + 3, (long long)w + 2, (long long)w + 1);
    for (; w + 4 <= n; w += 4) {
        __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(src + w)),
                                            load16(src + w + 2), 1);
        if (nt)
            _mm256_stream_si256((__m256i *)(void *)(dst + w), a);
        else
            _mm256_storeu_si256((__m256i *)(void *)(dst + w), a);
        if (has_prev) {
            __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(prev + w));
            __m256i x = _mm256_sub_epi64(a, b);
            vor = _mm256_or_si256(vor, _mm256_or_si256(x, b));
            vsum = _mm256_add_epi64(vsum, x);
            _mm256_storeu_si256((__m256i *)(void *)(delta + w), x);
            if (span) {
                __m256i z = _mm256_cmpeq_epi64(x, _mm256_setzero_si256());
                vlo1 = _mm256_min_epu32(vlo1, _mm256_or_si256(vi1, z));
                vhi = _mm256_max_epu32(vhi, _mm256_andnot_si256(z, vi1));
                vi1 = _mm256_add_epi64(vi1, _mm256_set1_epi64x(4));
            }
        }
    }
    if (w + 2 <= n)
        delta_step2(dst, src, prev, delta, w, &c, span != NULL, has_prev, nt), w += 2;
    for (; w < n; w++) {
        uint64_t v = __atomic_load_n(&src[w], __ATOMIC_RELAXED), b = has_prev ? prev[w] : 0;
        dst[w] = v;
        if (has_prev)
            delta[w] = v - b, ors |= (v - b) | b, total += v - b;
        if (span && v != b) {
            lo1 = lo1 < w + 1 ? lo1 : (uint32_t)w + 1;
            hi = (uint32_t)w + 1;
        }
    }
    if (!has_prev)
        return 0;
    c.or = _mm_or_si128(
             c.or, _mm_or_si128(_mm256_castsi256_si128(vor), _mm256_extracti128_si256(vor, 1)));
    c.sum = _mm_add_epi64(
        c.sum, _mm_add_epi64(_mm256_castsi256_si128(vsum), _mm256_extracti128_si256(vsum, 1)));
    if (span) {
        uint32_t l[4], h[4];
        c.lo1 = _mm_min_epu32(
            c.lo1, _mm_min_epu32(_mm256_castsi256_si128(vlo1), _mm256_extracti128_si256(vlo1, 1)));
        c.hi = _mm_max_epu32(
            c.hi, _mm_max_epu32(_mm256_castsi256_si128(vhi), _mm256_extracti128_si256(vhi, 1)));
        _mm_storeu_si128((__m128i *)(void *)l, c.lo1);
        _mm_storeu_si128((__m128i *)(void *)h, c.hi);
        lo1 = lo1 < l[0] ? lo1 : l[0], lo1 = lo1 < l[2] ? lo1 : l[2];
        hi = hi > h[0] ? hi : h[0], hi = hi > h[2] ? hi : h[2];
        span[0] = hi ? lo1 - 1 : (uint32_t)n, span[1] = hi;
    }
    ors |= (uint64_t)_mm_cvtsi128_si64(c.or) | (uint64_t)_mm_extract_epi64(c.or, 1);
    *sum = total + (uint64_t)_mm_cvtsi128_si64(c.sum) + (uint64_t)_mm_extract_epi64(c.sum, 1);
    return ors;
}

__attribute__((target("avx2"))) uint64_t pcw__copy_delta_words(uint64_t *dst, const uint64_t *src,
                                                               const uint64_t *prev,
                                                               uint64_t *delta, size_t n,
                                                               uint64_t *sum)
{
    /* Non-temporal stores where dst is 16-aligned once src is. */
    if (PCW__STREAM_ROWS && !(((uintptr_t)dst ^ (uintptr_t)src) & 15))
        return prev ? delta_words(dst, src, prev, delta, n, sum, NULL, 1, 1)
                    : delta_words(dst, src, NULL, NULL, n, NULL, NULL, 0, 1);
    return prev ? delta_words(dst, src, prev, delta, n, sum, NULL, 1, 0)
                : delta_words(dst, src, NULL, NULL, n, NULL, NULL, 0, 0);
}

__attribute__((target("avx2"))) uint64_t pcw__copy_delta_span(uint64_t *dst, const uint64_t *src,
                                                              const uint64_t *prev, uint64_t *delta,
                                                              size_t n, uint64_t *sum,
                                                              uint32_t span[2])
{
    if (PCW__STREAM_ROWS && !(((uintptr_t)dst ^ (uintptr_t)src) & 15))
        return delta_words(dst, src, prev, delta, n, sum, span, 1, 1);
    return delta_words(dst, src, prev, delta, n, sum, span, 1, 0);
}

/* pcw__copy_cmp_rows (private.h): the read's 16-byte loads, each row
 * compared with the caller's last row of its index in the loop that
 * copies it (a recorder's change detection, lib/query/collect_raw.c): the
 * new words are XORed with the old ones as they pass through the
 * registers, so that a row costs its copy and one read of its old words,
 * not a second pass over both. Plain stores: the recorder reads the rows
 * that changed right after (non-temporal ones made history/record 15 %
 * slower). */
__attribute__((target("avx2"), always_inline)) static inline uint64_t
cmp_words(uint64_t *dst, const uint64_t *src, const uint64_t *prev, size_t n)
{
    size_t w = 0;
    uint64_t d = 0;
    if (n && ((uintptr_t)src & 15)) { /* one word, to 16-byte alignment */
        uint64_t v = __atomic_load_n(src, __ATOMIC_RELAXED);
        dst[0] = v, d = v ^ prev[0];
        w = 1;
    }
    __m256i acc = _mm256_setzero_si256();
    for (; w + 4 <= n; w += 4) {
        __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(load16(src + w)),
                                            load16(src + w + 2), 1);
        _mm256_storeu_si256((__m256i *)(void *)(dst + w), a);
        acc = _mm256_or_si256(
            acc,
            _mm256_xor_si256(a, _mm256_loadu_si256((const __m256i *)(const void *)(prev + w))));
    }
    for (; w < n; w++) {
        uint64_t v = __atomic_load_n(&src[w], __ATOMIC_RELAXED);
        dst[w] = v, d |= v ^ prev[w];
    }
    return d | (uint64_t)!_mm256_testz_si256(acc, acc);
}

__attribute__((target("avx2"))) size_t pcw__copy_cmp_rows(uint64_t *dst, const unsigned char *src,
                                                          size_t stride, const uint64_t *prev,
                                                          size_t words, size_t nrows,
                                                          uint64_t *changed, size_t at)
{
    size_t nchanged = 0;
    /* The bits of up to 64 rows gathered in a register, one store each. */
    for (size_t j = 0; j < nrows;) {
        size_t b = at + j, sh = b % 64, m = 64 - sh < nrows - j ? 64 - sh : nrows - j;
        uint64_t bits = 0;
        for (size_t k = 0; k < m; k++, j++) {
            const uint64_t *row = (const uint64_t *)(const void *)(src + j * stride);
            bits |= (uint64_t)(cmp_words(dst + j * words, row, prev + j * words, words) != 0) << k;
        }
        uint64_t keep = ~((m == 64 ? ~0ull : (1ull << m) - 1) << sh);
        changed[b / 64] = (changed[b / 64] & keep) | bits << sh;
        nchanged += (size_t)__builtin_popcountll(bits);
    }
    return nchanged;
}

/* copy_rows with 16-byte loads; with cv, converting too (row j's words go
 * to cv + j * words, and a->cvt_or collects what the check needs), the
 * way copy_cvt_words copies a large read's rows if big. */
static void copy_vec_rows(struct read_args *a, uint64_t *dst, const unsigned char *src,
                          size_t words, size_t stride, uint32_t len, double *cv, int big)
{
    if (stride == words * 8) { /* rows back to back: one stretch */
        const uint64_t *w = (const uint64_t *)(const void *)src;
        if (cv)
            a->cvt_or |= copy_cvt_words(dst, w, len * words, cv, big);
        else
            copy_vec_words(dst, w, len * words);
        return;
    }
    for (uint32_t j = 0; j < len; j++) {
        const uint64_t *w = (const uint64_t *)(const void *)(src + (size_t)j * stride);
        if (cv)
            a->cvt_or |= copy_cvt_words(dst + j * words, w, words, cv + j * words, big);
        else
            copy_vec_words(dst + j * words, w, words);
    }
}

/* Whether to copy with 16-byte loads: the CPU has AVX2 (so AVX's atomic
 * 16-byte loads) and $PCW_NO_AVX2 is unset (the tests run the 8-byte loop
 * with it, as on other CPUs). Decided once; two first callers compute the
 * same answer. */
static int vec_cpu(void)
{
    static int decided; /* 0: not yet; 1: no; 2: yes (relaxed atomics) */
    int d = __atomic_load_n(&decided, __ATOMIC_RELAXED);
    if (!d) {
        d = __builtin_cpu_supports("avx2") && !getenv("PCW_NO_AVX2") ? 2 : 1;
        __atomic_store_n(&decided, d, __ATOMIC_RELAXED);
    }
    return d == 2;
}
#else
#define PCW__VEC_COPY 0
static int vec_cpu(void)
{
    return 0;
}

uint64_t pcw__copy_delta_words(uint64_t *dst, const uint64_t *src, const uint64_t *prev,
                               uint64_t *delta, size_t n, uint64_t *sum)
{
    (void)dst, (void)src, (void)prev, (void)delta, (void)n, (void)sum;
    abort(); /* never called: copy_fn is used only where vec_cpu() says yes */
}

size_t pcw__copy_cmp_rows(uint64_t *dst, const unsigned char *src, size_t stride,
                          const uint64_t *prev, size_t words, size_t nrows, uint64_t *changed,
                          size_t at)
{
    (void)dst, (void)src, (void)stride, (void)prev, (void)words, (void)nrows, (void)changed,
        (void)at;
    abort(); /* never called: copy_fn is used only where vec_cpu() says yes */
}

uint64_t pcw__copy_delta_span(uint64_t *dst, const uint64_t *src, const uint64_t *prev,
                              uint64_t *delta, size_t n, uint64_t *sum, uint32_t span[2])
{
    (void)span;
    return pcw__copy_delta_words(dst, src, prev, delta, n, sum);
}
#endif

/* Copy the live slots [from, from + len) of chunk c into the snapshot's
 * columns: data rows, ids, and names. PCW_OK, or -1 if a name needs the
 * run read slot by slot. */
static inline int put_rows(struct read_args *a, const pcw_chunk_priv *c, const uint64_t *nrefs,
                           const unsigned char *rows, uint32_t from, uint32_t len)
{
    pcw_snapshot *s = a->snap;
    uint64_t *data = (uint64_t *)(void *)s->data; /* rows are 8-byte aligned */
    const size_t words = s->data_size / 8, stride = a->cs->data_stride, k = s->count;
    const unsigned char *src = rows + (size_t)from * stride;
    if (a->copy_fn && a->vec && a->copy_fn(a->run_arg, s, k, src, stride, len)) {
        a->streamed |= PCW__STREAM_ROWS; /* the sfence at the read's end */
        a->cvt_run = 0;
#if PCW__VEC_COPY
    } else if (a->vec && a->cvt_run) {
        /* Converted as copied; from PCW__STREAM_CVT_FROM_BYTES on the rows
         * prefetched and streamed (the sfence at the read's end). */
        int big = (k + len) * s->data_size > PCW__STREAM_CVT_FROM_BYTES;
        a->streamed |= big && PCW__STREAM_ROWS;
        copy_vec_rows(a, data + k * words, src, words, stride, len,
                      a->cvt + (k - a->run_first) * words, big);
#endif
    } else if (PCW__STREAM_ROWS && (k + len) * s->data_size > PCW__STREAM_FROM_BYTES) {
        a->streamed = 1;
        a->cvt_run = 0; /* streamed rows are not converted */
        copy_rows(data + k * words, src, words, stride, len, 1);
#if PCW__VEC_COPY
    } else if (a->vec) {
        copy_vec_rows(a, data + k * words, src, words, stride, len, NULL, 0);
#endif
    } else {
        copy_rows(data + k * words, src, words, stride, len, 0);
    }
    if (a->cache == CACHE_REUSE) {
        s->count = k + len; /* the ids and names are there already */
        return PCW_OK;
    }
#if PCW__VEC_COPY
    if (a->vec)
        fill_ids_vec(s->ids + k, c->first + from, len);
    else
#endif
        fill_ids(s->ids + k, c->first + from, len);
    for (uint32_t j = 0; a->names && j < len; j++) {
        uint64_t noff;
        uint32_t nlen;
        if (check_name(a, __atomic_load_n(&nrefs[from + j], __ATOMIC_RELAXED), &noff, &nlen) != 0 ||
            put_name(a, k + j, noff, nlen) != 0)
            return -1;
    }
    s->count = k + len;
    return PCW_OK;
}

/* The run's rows: the batched protocol's R1' and copies (pcw/layout.h). One
 * acquire load of a live-bit word decides for 64 slots; consecutive live
 * slots, across words (a whole chunk, in a dense counterset), are then
 * copied as one stretch, without a branch per slot. Returns PCW_OK, or -1
 * if a name needs the whole run read slot by slot. */
static inline int run_rows(struct read_args *a, const pcw_chunk_priv *c, const uint64_t *live,
                           const uint64_t *nrefs, const unsigned char *rows, uint32_t lo,
                           uint32_t hi)
{
    uint32_t from = 0, len = 0; /* the stretch of live slots not copied yet */
    for (uint32_t i = lo; i < hi; i += 64) {
        uint32_t n = hi - i < 64 ? hi - i : 64;
        /* R1'. Pairs with the provider's release RMW that set each bit (P1
         * in pcw_create_instance): a set bit's slot is filled. The copy of
         * a slot always follows the load of its word. */
        uint64_t w = __atomic_load_n(&live[i / 64], __ATOMIC_ACQUIRE) >> (i % 64);
        if (n < 64)
            w &= (1ull << n) - 1;
        if (a->cache != CACHE_OFF) {
            struct pcw__name_cache *nc = pcw__snap(a->snap)->name_cache;
            if (a->cache == CACHE_RECORD)
                nc->words[a->nword++] = w; /* room reserved in read_chunks */
            else if (a->nword >= nc->nwords || nc->words[a->nword++] != w)
                return CACHE_MISS; /* other instances than the cached read's */
        }
        while (w) {
            /* The next stretch of live slots in this word: [i + b, + l). */
            uint32_t b = (uint32_t)__builtin_ctzll(w);
            uint64_t rest = ~(w >> b);
            uint32_t l = rest ? (uint32_t)__builtin_ctzll(rest) : 64 - b;
            w = l + b >= 64 ? 0 : w & ~0ull << (b + l);
            if (len && from + len == i + b) {
                len += l; /* continues the stretch */
                continue;
            }
            if (len && put_rows(a, c, nrefs, rows, from, len) != PCW_OK)
                return -1;
            from = i + b, len = l;
        }
    }
    return len ? put_rows(a, c, nrefs, rows, from, len) : PCW_OK;
}

/* Slots [lo, hi) of chunk c as one validated run (pcw/layout.h). */
static int read_run(struct read_args *a, const pcw_chunk_priv *c, uint32_t lo, uint32_t hi)
{
    const unsigned char *base = a->seg->map + c->off;
    const pcw_seg_chunk *ch = (const pcw_seg_chunk *)(const void *)base;
    const uint64_t *live = (const uint64_t *)(const void *)(base + pcw__seg_chunk_live());
    const uint64_t *nrefs = (const uint64_t *)(const void *)(base + pcw__seg_chunk_names(c->n));
    const unsigned char *rows = base + pcw__seg_chunk_rows(c->n) + a->cs->row_data;
    pcw_snapshot *s = a->snap;
    size_t count0 = s->count, names0 = pcw__snap(s)->names_len;
    uint32_t busy0 = s->busy;
    uint64_t budget0 = a->name_bytes;
    /* R0. Pairs with the provider's release RMW of closes (C1 in
     * pcw_close_instance): if this load sees a close, R1 sees its gen. */
    uint64_t c1 = __atomic_load_n(&ch->closes, __ATOMIC_ACQUIRE);
    /* Converted as copied if the caller has room for the whole run. */
    a->cvt_run = a->cvt && (size_t)(hi - lo) * (s->data_size / 8) <= a->cvt_cap;
    a->run_first = count0, a->cvt_or = 0;
    int rc = run_rows(a, c, live, nrefs, rows, lo, hi);
    /* R3. Pairs with the provider's fences C2 (pcw_close_instance) and C0
     * (pcw_create_instance): if any copy above saw a store made after a
     * close, R4 sees that close counted. seq_cst, as C2 is, for stores by
     * application threads with no fence of their own (pcw_close_instance
     * says why): one fence per run of up to 1,024 slots, no instruction
     * on x86-64 (PCW__READER_FENCE). */
    PCW__READER_FENCE();
    uint64_t c2 = __atomic_load_n(&ch->closes, __ATOMIC_RELAXED); /* R4 */
    if (rc == PCW_OK && c1 == c2) {
        if (s->count > count0) {
            a->found = 1;
            if (a->run_fn)
                a->run_fn(a->run_arg, s, count0, s->count,
                          a->cvt_run && !(a->cvt_or >> 52) ? a->cvt : NULL);
        }
        return PCW_OK;
    }
    if (rc != PCW_OK && rc != -1)
        return rc;
    if (a->cache == CACHE_REUSE)
        return CACHE_MISS; /* a close: the cached names may not fit */
    /* A slot of this chunk closed during the run (or a name needs a closer
     * look): read the run again, slot by slot. What the read saw is then
     * no longer one moment's instance set: nothing to cache. */
    a->cache = CACHE_OFF;
    s->count = count0, pcw__snap(s)->names_len = names0, s->busy = busy0;
    a->name_bytes = budget0;
    return read_slots(a, c, lo, hi);
}

/* Validate the chunk at `off` (the next of cs's list) and cache it. 1 if
 * cached, 0 if it lies past this read's mapping (linked since: the next
 * read takes it), or an error. */
static int take_chunk(struct read_args *a, uint64_t off)
{
    pcw_cset_priv *cs = a->cs;
    const pcw_chunk_priv *last = cs->nchunks ? &cs->chunks[cs->nchunks - 1] : NULL;
    uint32_t expect_first = last ? last->first + last->n : 0;
    uint64_t prev_end = last ? last->off + pcw__seg_chunk_bytes(last->n, cs->data_stride) : 0;
    if (cs->nchunks >= PCW_MAX_CHUNKS || off % PCW_SEG_ALIGN || off < prev_end)
        return pcw__corrupt(a->seg, "counterset \"%s\": chunk list is damaged at offset %llu",
                            cs->pub.name, (unsigned long long)off);
    if (!pcw__in_range(off, sizeof(pcw_seg_chunk), a->size)) {
        int r = catch_up(a, off, sizeof(pcw_seg_chunk));
        if (r <= 0)
            return r == 0 ? 0
                          : pcw__corrupt(a->seg, "counterset \"%s\": a chunk lies past the end",
                                         cs->pub.name);
    }
    const pcw_seg_chunk *ch = (const pcw_seg_chunk *)(const void *)(a->seg->map + off);
    /* Immutable once linked: copied once, then only the copy is used. */
    uint32_t first = ch->first_slot, n = ch->nslots;
    uint64_t cset_off = ch->cset_off;
    if (first != expect_first || n == 0 || n > PCW_SEG_MAX_CHUNK_SLOTS || cset_off != cs->off)
        return pcw__corrupt(a->seg, "counterset \"%s\": chunk at offset %llu has a bad header",
                            cs->pub.name, (unsigned long long)off);
    uint64_t bytes = pcw__seg_chunk_bytes(n, cs->data_stride);
    if (!pcw__in_range(off, bytes, a->size)) {
        int r = catch_up(a, off, bytes);
        if (r <= 0)
            return r == 0 ? 0
                          : pcw__corrupt(a->seg, "counterset \"%s\": a chunk lies past the end",
                                         cs->pub.name);
    }
    int rc = pcw__claim(a->seg, off, bytes, "a chunk");
    if (rc != PCW_OK)
        return rc;
    if (cs->nchunks == cs->chunks_cap) {
        size_t cap = cs->chunks_cap ? cs->chunks_cap * 2 : 8;
        pcw_chunk_priv *v = realloc(cs->chunks, cap * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        cs->chunks = v, cs->chunks_cap = cap;
    }
    cs->chunks[cs->nchunks++] = (pcw_chunk_priv){off, first, n};
    return 1;
}

/* Take the chunks the provider linked since the last read. */
static int take_new_chunks(struct read_args *a)
{
    pcw_cset_priv *cs = a->cs;
    const unsigned char *map = a->seg->map;
    for (;;) {
        const uint64_t *link =
            cs->nchunks
                ? &((const pcw_seg_chunk *)(const void *)(map + cs->chunks[cs->nchunks - 1].off))
                       ->next
                : &((const pcw_seg_cset *)(const void *)(map + cs->off))->chunk_head;
        /* Acquire pairs with the provider's release when it linked the
         * chunk (pcw__add_chunk): the chunk's header is visible. */
        uint64_t off = __atomic_load_n(link, __ATOMIC_ACQUIRE);
        if (!off)
            return PCW_OK;
        int r = take_chunk(a, off);
        if (r <= 0)
            return r; /* 0: linked after this read began */
    }
}

static int read_chunks(void *p)
{
    struct read_args *a = (struct read_args *)p;
    int rc = take_new_chunks(a);
    if (rc != PCW_OK)
        return rc;
    const pcw_cset_priv *cs = a->cs;
    const int seq = cs->row_data != 0;
    const int whole = a->only_id == PCW_ANY_INSTANCE_ID;
    if (whole) {
        /* Room for a row per slot of every chunk at once (each slot is at
         * least 8 bytes of the segment: bounded by its size), and, for a
         * read that records them, for every live word it will see. */
        size_t slots = 0, need = 0;
        for (size_t ci = 0; ci < cs->nchunks; ci++)
            slots += cs->chunks[ci].n, need += (cs->chunks[ci].n + 63) / 64;
        rc = pcw__snapshot_reserve(a->snap, slots, a->names, 0);
        if (rc != PCW_OK)
            return rc;
        struct pcw__name_cache *nc = pcw__snap(a->snap)->name_cache;
        if (a->cache == CACHE_RECORD && need > nc->cap) {
            uint64_t *v = realloc(nc->words, need * sizeof *v);
            if (!v)
                a->cache = CACHE_OFF; /* a read still, just not cached */
            else
                nc->words = v, nc->cap = need;
        }
    }
    for (size_t ci = 0; ci < cs->nchunks; ci++) {
        const pcw_chunk_priv *c = &cs->chunks[ci];
        uint32_t lo = 0, hi = c->n;
        if (a->only_id != PCW_ANY_INSTANCE_ID) {
            if (a->only_id < c->first || a->only_id - c->first >= c->n)
                continue;
            lo = a->only_id - c->first, hi = lo + 1;
        }
        if (!whole && (rc = pcw__snapshot_reserve(a->snap, hi - lo, a->names, 0)) != PCW_OK)
            return rc;
        for (uint32_t r = lo; r < hi; r += RUN_SLOTS) {
            uint32_t end = hi - r > RUN_SLOTS ? r + RUN_SLOTS : hi;
            /* One instance, or seqcount rows: slot by slot. */
            rc = seq || a->only_id != PCW_ANY_INSTANCE_ID ? read_slots(a, c, r, end)
                                                          : read_run(a, c, r, end);
            if (rc != PCW_OK)
                return rc;
        }
    }
    return PCW_OK;
}

/* The counterset's generation, in the segment. R5: acquire at the start of
 * a read; pairs with the provider's release RMW of it (P0 in
 * pcw_create_instance, and pcw_close_instance). */
struct gen_args {
    const pcw_segment *seg;
    const pcw_cset_priv *cs;
    int order;
    uint64_t gen;
};

static int load_generation(void *p)
{
    struct gen_args *g = (struct gen_args *)p;
    const pcw_seg_cset *sc = (const pcw_seg_cset *)(const void *)(g->seg->map + g->cs->off);
    g->gen = __atomic_load_n(&sc->generation, g->order);
    return PCW_OK;
}

static int cset_generation(const pcw_segment *seg, const pcw_cset_priv *cs, int order,
                           uint64_t *gen)
{
    struct gen_args g = {seg, cs, order, 0};
    int rc = pcw__guarded(seg->map, seg->map_len, load_generation, &g);
    *gen = g.gen;
    return rc;
}

/* One pass of a read into snap (already prepared): the rows, then, for a
 * read that records or reuses the name cache, R5's re-check. */
static int read_pass(struct read_args *a, uint64_t gen0)
{
    int rc = pcw__guarded(a->seg->map, a->seg->map_len, read_chunks, a);
    if (rc != PCW_OK || a->cache == CACHE_OFF)
        return rc;
    if (a->names) {
        /* R5. After the copies (every live word was acquired), the
         * generation again: an instance that appeared during the read was
         * counted before its bit could be seen (P0), and one that went was
         * counted after its bit was cleared, so an unchanged generation and
         * unchanged words mean the same instances in the same slots. A
         * read without names needs only the slots: its words. */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        uint64_t gen1;
        rc = cset_generation(a->seg, a->cs, __ATOMIC_RELAXED, &gen1);
        if (rc != PCW_OK)
            return rc;
        if (gen1 != gen0)
            return a->cache == CACHE_REUSE ? CACHE_MISS : (a->cache = CACHE_OFF, PCW_OK);
    }
    struct pcw__name_cache *nc = pcw__snap(a->snap)->name_cache;
    if (a->cache == CACHE_REUSE && (a->nword != nc->nwords || a->snap->count != nc->count))
        return CACHE_MISS; /* fewer words: a chunk fewer than the cached read's */
    return PCW_OK;
}

static int do_read(pcw_segment *seg, const pcw_counterset *pub, pcw_snapshot *snap, unsigned flags,
                   uint32_t only_id, int *found, pcw__run_fn run_fn, void *run_arg, double *cvt,
                   size_t cvt_cap, pcw__copy_fn copy_fn)
{
    if (!seg || !pub || !snap)
        return PCW_E_INVALID_PARAMETER;
    pcw_cset_priv *cs = (pcw_cset_priv *)pub;
    if (cs < seg->csets || cs >= seg->csets + seg->ncsets)
        return PCW_E_INVALID_PARAMETER; /* not this segment's */
    int names = !(flags & PCW_READ_NO_NAMES);
    /* Whole reads of segment countersets remember what they read, so the
     * next read of the same instances skips their ids (and names). */
    int cacheable =
        !(flags & PCW_READ_APPEND) && only_id == PCW_ANY_INSTANCE_ID && cs->row_data == 0;
    int reuse = cacheable && pcw__snap(snap)->cache_seg == seg->serial &&
                pcw__snap(snap)->name_cache && pcw__snap(snap)->name_cache->cset_off == cs->off &&
                pcw__snap(snap)->name_cache->names == names;
    pcw__snap(snap)->cache_seg = 0;
    if (!(flags & PCW_READ_APPEND))
        pcw_snapshot_clear(snap);
    else if (snap->count && snap->data_size != cs->pub.data_size)
        return PCW_E_INVALID_PARAMETER;
    uint64_t size;
    int rc = pcw__segment_sync(seg, &size);
    if (rc != PCW_OK)
        return rc;
    uint64_t gen0 = 0;
    if (cacheable && names && (rc = cset_generation(seg, cs, __ATOMIC_ACQUIRE, &gen0)) != PCW_OK)
        return rc;
    if (cacheable && !pcw__snap(snap)->name_cache && !(pcw__snap(snap)->name_cache = calloc(1, sizeof *pcw__snap(snap)->name_cache)))
        cacheable = 0;
    if (reuse && names && gen0 != pcw__snap(snap)->name_cache->generation)
        reuse = 0;
    pcw__snap_mark mark = pcw__snapshot_mark(snap);
    size_t count0 = snap->count;
    snap->data_size = cs->pub.data_size;
    if (names && (rc = pcw__snapshot_want_names(snap)) != PCW_OK)
        return rc;
    if ((rc = pcw__snapshot_begin_source(snap, seg, 0)) != PCW_OK)
        return rc;
    snap->sources[snap->nsources - 1].registration = cs->pub.reg_index;
    size_t names_start = pcw__snap(snap)->names_len;
    struct read_args a = {.seg = seg,
                          .cs = cs,
                          .snap = snap,
                          .size = size,
                          .flags = flags,
                          .names = names,
                          .only_id = only_id,
                          .cache = reuse       ? CACHE_REUSE
                                   : cacheable ? CACHE_RECORD
                                               : CACHE_OFF,
                          .run_fn = run_fn,
                          .run_arg = run_arg,
                          .copy_fn = copy_fn,
                          .vec = vec_cpu(),
                          .cvt = cvt && vec_cpu() ? cvt : NULL,
                          .cvt_cap = cvt_cap};
    if (reuse) {
        rc = read_pass(&a, gen0);
        if (rc == PCW_OK) {
            /* The ids and names of the cached read are the rows' still. */
            pcw__snap(snap)->names_len = pcw__snap(snap)->name_cache->names_len;
        } else if (rc == CACHE_MISS) {
            /* Not the same instances any more: read them afresh. */
            snap->count = count0, pcw__snap(snap)->names_len = names_start, snap->busy = 0;
            a.cache = CACHE_RECORD, a.nword = 0, a.found = 0, a.name_bytes = 0;
            rc = read_pass(&a, gen0);
        }
    } else {
        rc = read_pass(&a, gen0);
    }
    if (rc == PCW_OK && !names && snap->name_off && snap->count > count0) {
        /* Rows without names in a snapshot that has names: "". */
        if ((rc = pcw__snapshot_reserve(snap, 0, 1, 1)) == PCW_OK) {
            uint64_t empty = pcw__snap(snap)->names_len;
            snap->names[pcw__snap(snap)->names_len++] = 0;
            for (size_t i = count0; i < snap->count; i++)
                snap->name_off[i] = empty, snap->name_len[i] = 0;
        }
    }
#if PCW__STREAM_ROWS
    if (a.streamed)
        _mm_sfence(); /* the rows' non-temporal stores before anything after the read */
#endif
    if (rc != PCW_OK) {
        /* Drop a partial result: nothing half-read is returned. */
        pcw__snapshot_rollback(snap, mark);
        return rc;
    }
    if (a.cache != CACHE_OFF) {
        struct pcw__name_cache *nc = pcw__snap(snap)->name_cache;
        nc->cset_off = cs->off, nc->generation = gen0, nc->names = names;
        nc->count = snap->count, nc->names_len = pcw__snap(snap)->names_len, nc->nwords = a.nword;
        pcw__snap(snap)->cache_seg = seg->serial;
    }
    pcw_snapshot_source *src = &snap->sources[snap->nsources - 1];
    src->count = snap->count - src->first;
    if (found)
        *found = a.found;
    return PCW_OK;
}

int pcw_segment_read(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap, unsigned flags)
{
    return do_read(seg, cs, snap, flags, PCW_ANY_INSTANCE_ID, NULL, NULL, NULL, NULL, 0, NULL);
}

int pcw__segment_read_runs(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                           unsigned flags, pcw__run_fn fn, void *arg, double *cvt, size_t cvt_cap)
{
    return do_read(seg, cs, snap, flags, PCW_ANY_INSTANCE_ID, NULL, fn, arg, cvt, cvt_cap, NULL);
}

int pcw__segment_read_runs_copy(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                                unsigned flags, pcw__run_fn fn, pcw__copy_fn copy, void *arg)
{
    return do_read(seg, cs, snap, flags, PCW_ANY_INSTANCE_ID, NULL, fn, arg, NULL, 0, copy);
}

int pcw_segment_read_instance(pcw_segment *seg, const pcw_counterset *cs, uint32_t id,
                              pcw_snapshot *snap, unsigned flags)
{
    if (id >= PCW_ANY_INSTANCE_ID)
        return PCW_E_INVALID_PARAMETER;
    int found = 0;
    int rc = do_read(seg, cs, snap, flags, id, &found, NULL, NULL, NULL, 0, NULL);
    if (rc == PCW_OK && !found)
        return PCW_E_NOT_FOUND;
    return rc;
}
