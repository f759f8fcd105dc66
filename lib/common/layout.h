/* SPDX-License-Identifier: MIT */
/*
 * common/layout.h - the shared-memory segment: what a provider publishes and a
 * consumer maps read-only. Layout version 2.
 *
 * One segment per provider object: a file in the provider directory
 * (common/naming.h). Everything in it is linked by byte offsets from the
 * segment's start, never pointers.
 *
 *   +---------------------+ 0
 *   | pcw_seg_header      |
 *   +---------------------+ header.arena_off
 *   | arena: countersets, |  pcw_seg_cset + pcw_seg_counter[] + strings,
 *   | slot chunks, names  |  pcw_seg_chunk + its arrays, instance names,
 *   | ...                 |  bump-allocated; grows at the end
 *   +---------------------+ header.size (the file may be larger)
 *
 * A chunk holds `nslots` instance slots of one counterset as arrays, so
 * that a reader streams through exactly the bytes it needs:
 *
 *   +------------------+ chunk offset (64-byte aligned)
 *   | pcw_seg_chunk    |  64 bytes
 *   | live[nslots/64]  |  uint64_t: bit i%64 of word i/64 set = slot i live
 *   | gen[nslots]      |  uint64_t: the slot generation (below)
 *   | name[nslots]     |  uint64_t: PCW_SEG_NAME_REF(offset, length)
 *   +------------------+ pcw__seg_chunk_rows(): 64-byte aligned
 *   | row[nslots]      |  data_stride bytes each: [seq] + the instance's
 *   |                  |  data blocks at the counterset's block offsets
 *   +------------------+ pcw__seg_chunk_bytes()
 *
 * The slot's index (chunk.first_slot + i) is the instance id.
 *
 * Ownership: the provider is the only writer of every byte. A consumer never
 * writes (it maps PROT_READ) and never trusts a value: every offset, count and
 * size read from a segment is range-checked before use (lib/consumer/).
 *
 * Atomics, in C and C++ alike. Fields that change while consumers read them
 * are plain integer types here and are only ever accessed through the GCC/
 * Clang `__atomic` builtins, with the memory order written at each access.
 * The builtins are what C11's atomic_*_explicit and C++11's std::atomic
 * compile to, they apply to the same object representation in both
 * languages (a naturally aligned 4- or 8-byte integer, always lock-free on
 * the 64-bit targets pcw supports), and ThreadSanitizer understands them.
 * (`_Atomic` members would make this header mean something else in C++,
 * where std::atomic<T> is a different type and `__atomic` builtins do not
 * apply to it.)
 *
 * The protocol readers rely on: the slot generation, a seqlock per slot,
 * validated in batches with the chunk's close counter.
 *
 *   provider (pcw_create_instance / pcw_close_instance; one writer per slot)
 *     take:    a free slot (and name block), reused only after a grace period
 *     C0:      fence(release)                          [pairs with R3]
 *     fill:    name bytes, name ref, data words     (relaxed stores)
 *     publish: gen = 2k+1, release                      [pairs with R1]
 *     P1:      live bit set, RMW release                [pairs with R1']
 *     close:   live bit cleared, RMW relaxed; gen = 2k+2, relaxed
 *     C1:      chunk.closes += 1, RMW release           [pairs with R0]
 *     C2:      fence(seq_cst)                          [pairs with R3]
 *   reader (lib/consumer/read.c), for a run of slots of one chunk
 *     R0:  c1 = chunk.closes, acquire
 *     R1': per 64 slots: w = live word, acquire. All 64 bits set: copy the
 *          64 slots' name refs, names and data (relaxed loads). No bit
 *          set: none is live. Some: each slot whose bit is set is read by
 *          the per-slot seqlock below, which stands on its own.
 *     R3:  fence(seq_cst)
 *     R4:  c2 = chunk.closes, relaxed
 *          c1 == c2: keep every copy.
 *          c1 != c2: a slot of the run closed meanwhile: the run is read
 *          again with the per-slot seqlock.
 *   per-slot seqlock (the fallback, and seqcount countersets)
 *     R1: g = gen, acquire; skip unless odd; copy (relaxed loads);
 *     R2: fence(seq_cst); keep the copy only if gen (relaxed) == g.
 *   (C2, R3 and R2 are seq_cst rather than release/acquire for counter
 *   stores by application threads that fence nothing: design.md §4.6.)
 *
 * Why that is never wrong: R1' (or R1) acquires the publish, so a kept copy
 * is never half-made. If a copy saw any store made for a later occupant
 * (or a reused name block), that store follows the closing thread's C2 or
 * the reusing thread's C0, so that fence synchronises with R3 and the
 * close's C1 happens-before R4: c2 includes it. And c1 cannot include it:
 * an acquire R0 reading C1 (or later; `closes` changes only by RMW) would
 * make the close's bit clear visible to R1', which would then see the bit
 * clear - or set again by a later occupant's P1, whose data the copy then
 * holds, under the slot's id. The full argument is in docs/design.md §4,
 * and the Promela model in docs/model/ checks it.
 */
#ifndef PCW_LAYOUT_H
#define PCW_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCW_SEG_MAGIC          0x3130474553574350ull /* "PCWSEG01", little-endian */
#define PCW_SEG_LAYOUT_VERSION 2u
/* Written natively: a reader on a host of the other byte order sees it
 * swapped and refuses the segment. */
#define PCW_SEG_BYTE_ORDER 0x01020304u
#define PCW_SEG_ALIGN      64u /* arena structures are aligned to this */
#define PCW_SEG_SUFFIX     ".seg"
#define PCW_SOCK_SUFFIX    ".sock"
#define PCW_DIR_ENV        "PCW_DIR"
#define PCW_DEFAULT_ROOT   "/dev/shm"

/* header.state */
enum { PCW_SEG_STATE_LIVE = 1, PCW_SEG_STATE_CLOSED = 2 };

/* header.flags */
enum {
    PCW_SEG_F_GROUP = 1u << 0,   /* group-readable (provider opted in) */
    PCW_SEG_F_CONTROL = 1u << 1, /* a control socket sits beside it */
    PCW_SEG_F_AREA = 1u << 2     /* its control channel hands out reply
                                    areas (PCW_CTL_AREA, control_proto.h);
                                    consumers before it ignore the bit */
};

typedef struct pcw_seg_header {
    /* Immutable after the segment is made visible (it is created under a
     * temporary name and renamed into place): plain reads. */
    uint64_t magic;          /* PCW_SEG_MAGIC */
    uint32_t layout_version; /* PCW_SEG_LAYOUT_VERSION */
    uint32_t byte_order;     /* PCW_SEG_BYTE_ORDER */
    uint32_t header_size;    /* sizeof(pcw_seg_header) */
    uint32_t cset_size;      /* sizeof(pcw_seg_cset) */
    uint32_t counter_size;   /* sizeof(pcw_seg_counter) */
    uint32_t chunk_size;     /* sizeof(pcw_seg_chunk) */
    uint32_t flags;          /* PCW_SEG_F_* */
    int32_t pid;             /* provider process, in its own pid namespace */
    uint32_t uid;            /* provider's effective uid */
    uint32_t reserved_h;
    uint64_t start_time;    /* /proc/self/stat field 22 (clock ticks after
                               boot, in the provider's time namespace): with
                               pid, tells a restarted pid apart */
    uint64_t provider_id;   /* random, per pcw_provider_open; also in the file
                               name: the provider's identity across pid
                               namespaces and restarts */
    uint64_t arena_off;     /* first arena byte */
    uint64_t max_size;      /* the provider never grows past this */
    char provider_name[64]; /* NUL-terminated UTF-8, may be empty */

    /* Written by the provider while consumers read (`__atomic` only). */
    uint64_t size;       /* bytes in use. Release (pcw__arena_alloc) after
                            the file has grown and the new bytes are
                            initialised; readers acquire. */
    uint64_t cset_head;  /* first pcw_seg_cset, 0 = none. Release when a
                            counterset is published (pcw_register). */
    uint64_t generation; /* release RMW whenever any instance or counterset
                            appears or disappears; readers acquire and poll
                            it to learn the lists changed */
    uint32_t state;      /* PCW_SEG_STATE_*; release (pcw_provider_close) */
    uint32_t reserved0;
    uint64_t reserved[4];
} pcw_seg_header;

/* pcw_seg_cset.state */
enum { PCW_CSET_LIVE = 1, PCW_CSET_DEAD = 2 };
/* pcw_seg_cset.flags */
enum {
    PCW_CSET_F_SEQCOUNT = 1u << 0,  /* rows start with a data sequence count */
    PCW_CSET_F_CALLBACK = 1u << 1,  /* values also come from a callback */
    PCW_CSET_F_CACHELINE = 1u << 2, /* rows are 64-byte aligned and padded */
    PCW_CSET_F_ALL_ = (1u << 3) - 1
};

/* A string in the segment: offset and length in bytes (a NUL follows). */
typedef struct pcw_seg_str {
    uint64_t off;
    uint32_t len;
    uint32_t reserved;
} pcw_seg_str;

/* One registered counterset. Everything but `next`, `state`, `chunk_head`,
 * `slot_count` and `generation` is written before the counterset is
 * published (release on header.cset_head or the previous counterset's next)
 * and never changes after. */
typedef struct pcw_seg_cset {
    uint64_t next;          /* next counterset, 0 = end; release */
    uint32_t state;         /* PCW_CSET_*; release on unregister */
    uint32_t flags;         /* PCW_CSET_F_* */
    uint32_t instance_type; /* pcw_instance_type */
    uint32_t counter_count;
    uint64_t counters_off; /* pcw_seg_counter[counter_count] */
    uint32_t block_count;  /* data blocks per instance */
    uint32_t data_size;    /* bytes of data per instance (multiple of 8) */
    uint64_t blocks_off;   /* uint32_t[block_count * 2]: each block's
                              offset in the instance's data, and its size */
    uint32_t data_stride;  /* bytes per row: pcw__seg_row_stride() */
    uint32_t reg_index;    /* registration number within the segment */
    pcw_seg_str name, description, guid, uri, symbol;
    pcw_seg_str provider_name, provider_guid, provider_type, provider_callback,
        application_identity; /* the manifest's <provider>, "" if none */
    uint64_t chunk_head;      /* first pcw_seg_chunk, 0 = none; release */
    uint32_t slot_count;      /* slots in all chunks; release (informational) */
    uint32_t reserved0;
    uint64_t generation; /* release RMW when one of its instances appears or
                            disappears */
    uint64_t reserved[2];
} pcw_seg_cset;

/* One counter of a counterset: immutable, published with the counterset. */
typedef struct pcw_seg_counter {
    uint32_t id, type, block, offset, size;
    uint32_t base_id, perf_time_id, perf_freq_id, multi_id;
    int32_t default_scale;
    uint32_t detail_level, aggregate, attributes;
    uint32_t histogram; /* PERF_PCW_HISTOGRAM: its shape (pcw/histogram.h); else 0 */
    pcw_seg_str name, description, uri, symbol;
} pcw_seg_counter;

/* A chunk of instance slots of one counterset, followed by its arrays (see
 * the picture above). Chunks are appended, never removed while the segment
 * lives. Immutable once linked but for `next` and `closes`. */
typedef struct pcw_seg_chunk {
    uint64_t next;        /* next chunk of the counterset, 0 = end; release */
    uint32_t first_slot;  /* index (id) of this chunk's first slot */
    uint32_t nslots;      /* 1..PCW_SEG_MAX_CHUNK_SLOTS */
    uint64_t cset_off;    /* the counterset this chunk belongs to */
    uint64_t closes;      /* closes of its slots: RMW release (C1) */
    uint64_t reserved[4]; /* the arrays start on the next cache line */
} pcw_seg_chunk;

/* The most slots one chunk may hold (chunks double up to this). */
#define PCW_SEG_MAX_CHUNK_SLOTS 65536u

/* gen: odd = live (published), even = free; +1 on every publish and close,
 * so it never repeats for the life of the segment. */
#define PCW_SLOT_LIVE(gen) (((gen)&1u) != 0)

/* An instance name reference: a 48-bit offset (8-byte aligned) and a
 * 16-bit byte length in one word, so one relaxed load reads both. */
#define PCW_SEG_NAME_REF(off, len) (((uint64_t)(off) << 16) | (uint64_t)(len))
#define PCW_SEG_NAME_OFF(ref)      ((uint64_t)(ref) >> 16)
#define PCW_SEG_NAME_LEN(ref)      ((uint32_t)((ref)&0xFFFFu))

/* The rows of a counterset with these flags and data_size: the row starts
 * with an 8-byte sequence count when PCW_CSET_F_SEQCOUNT is set, then the
 * data; rows are 8-byte aligned, or 64-byte aligned (each on its own cache
 * lines) with PCW_CSET_F_CACHELINE. */
static inline uint32_t pcw__seg_row_data(uint32_t flags)
{
    return (flags & PCW_CSET_F_SEQCOUNT) ? 8u : 0u;
}
static inline uint64_t pcw__seg_row_stride(uint32_t flags, uint64_t data_size)
{
    uint64_t a = (flags & PCW_CSET_F_CACHELINE) ? 64u : 8u;
    return (pcw__seg_row_data(flags) + data_size + a - 1) & ~(a - 1);
}

/* Where a chunk's arrays are, relative to the chunk, for `n` slots. */
static inline uint64_t pcw__seg_chunk_live(void)
{
    return sizeof(pcw_seg_chunk);
}
static inline uint64_t pcw__seg_chunk_gens(uint64_t n)
{
    return sizeof(pcw_seg_chunk) + 8 * ((n + 63) / 64);
}
static inline uint64_t pcw__seg_chunk_names(uint64_t n)
{
    return pcw__seg_chunk_gens(n) + 8 * n;
}
static inline uint64_t pcw__seg_chunk_rows(uint64_t n)
{
    return (pcw__seg_chunk_names(n) + 8 * n + 63) & ~(uint64_t)63;
}
/* The whole chunk, for `n` slots of `stride` bytes. */
static inline uint64_t pcw__seg_chunk_bytes(uint64_t n, uint64_t stride)
{
    return pcw__seg_chunk_rows(n) + n * stride;
}

#ifdef __cplusplus
#define PCW__STATIC_ASSERT static_assert
#else
#define PCW__STATIC_ASSERT _Static_assert
#endif
PCW__STATIC_ASSERT(sizeof(pcw_seg_chunk) == 64, "chunk header is one cache line");
PCW__STATIC_ASSERT(sizeof(pcw_seg_header) % 8 == 0, "header is 8-aligned");
PCW__STATIC_ASSERT(sizeof(pcw_seg_cset) % 8 == 0, "cset is 8-aligned");
PCW__STATIC_ASSERT(sizeof(pcw_seg_counter) % 8 == 0, "counter is 8-aligned");
#undef PCW__STATIC_ASSERT

#ifdef __cplusplus
}
#endif
#endif /* PCW_LAYOUT_H */
