/*
 * pcw/layout.h - the shared-memory segment: what a provider publishes and a
 * consumer maps read-only.
 *
 * One segment per provider object: a file in the provider directory
 * (<root>/pcw-<uid>/<pid>-<nonce>.seg, root = $PCW_DIR or /dev/shm). Everything
 * in it is linked by byte offsets from the segment's start, never pointers.
 *
 *   +---------------------+ 0
 *   | pcw_seg_header      |
 *   +---------------------+ header.arena_off
 *   | arena: countersets, |  pcw_seg_cset + pcw_seg_counter[] + strings,
 *   | slot chunks, names  |  pcw_seg_chunk + slots, instance names,
 *   | ...                 |  bump-allocated; grows at the end
 *   +---------------------+ header.size (the file may be larger)
 *
 * Ownership: the provider is the only writer of every byte. A consumer never
 * writes (it maps PROT_READ) and never trusts a value: every offset, count and
 * size read from a segment is range-checked before use (lib/consumer/).
 *
 * Memory orders, per field, are listed below with the field. The one protocol
 * readers rely on is the slot generation (a seqlock per instance slot):
 *
 *   writer (provider; one writer per slot at a time)
 *     close:   gen += 1 (now even: free), relaxed; fence(release) [pairs with R2]
 *     reuse:   after a grace period, fill name and data with relaxed stores
 *     publish: gen += 1 (now odd: live), release                  [pairs with R1]
 *   reader (consumer, any process)
 *     R1: g1 = gen, acquire; skip the slot unless g1 is live
 *         copy id, name ref, name bytes, data with relaxed loads
 *     R2: fence(acquire); g2 = gen, relaxed; keep the copy only if g1 == g2
 *
 * If any relaxed load in the copy observed a store made after the provider's
 * close of the instance g1 named, the close's release fence and the reader's
 * acquire fence synchronise, so R2 sees a generation past g1 and the copy is
 * discarded. The full argument is in docs/design.md.
 */
#ifndef PCW_LAYOUT_H
#define PCW_LAYOUT_H

#include <stdint.h>
#include <stddef.h>
#ifdef __cplusplus
#include <atomic>
#define PCW_ATOMIC(T) std::atomic<T>
#else
#include <stdatomic.h>
#define PCW_ATOMIC(T) _Atomic(T)
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define PCW_SEG_MAGIC          0x3130474553574350ull /* "PCWSEG01", little-endian */
#define PCW_SEG_LAYOUT_VERSION 1u
#define PCW_SEG_BYTE_ORDER                                                                         \
    0x01020304u /* written natively; a reader on a                                                 \
                   host of other order sees it swapped */
#define PCW_SEG_SUFFIX   ".seg"
#define PCW_SOCK_SUFFIX  ".sock"
#define PCW_DIR_ENV      "PCW_DIR"
#define PCW_DEFAULT_ROOT "/dev/shm"
#define PCW_SEG_ALIGN    64u /* arena allocations are aligned to this */

/* header.state */
enum { PCW_SEG_STATE_LIVE = 1, PCW_SEG_STATE_CLOSED = 2 };

/* header.flags */
enum {
    PCW_SEG_F_GROUP = 1u << 0,  /* group-readable (provider opted in) */
    PCW_SEG_F_CONTROL = 1u << 1 /* a control socket sits beside it */
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
    uint32_t slot_size;      /* sizeof(pcw_seg_slot) */
    uint32_t flags;          /* PCW_SEG_F_* */
    int32_t pid;             /* provider process */
    uint32_t uid;            /* provider's effective uid */
    uint64_t start_time;     /* /proc/<pid>/stat field 22 (clock ticks after
                                boot): with pid, tells a restarted pid apart */
    uint64_t arena_off;      /* first arena byte */
    uint64_t max_size;       /* the provider never grows past this */
    char provider_name[64];  /* NUL-terminated UTF-8, may be empty */

    /* Written by the provider; read by consumers. */
    PCW_ATOMIC(uint64_t)
    size; /* bytes in use. Release after the file
             has grown (ftruncate) and the new bytes
             are initialised; readers acquire. */
    PCW_ATOMIC(uint64_t)
    cset_head; /* first pcw_seg_cset, 0 = none. Release
                  when a counterset is published. */
    PCW_ATOMIC(uint64_t)
    generation;                 /* bumped (release) whenever any instance
                                   or counterset appears or disappears:
                                   poll it to learn the lists changed */
    PCW_ATOMIC(uint32_t) state; /* PCW_SEG_STATE_*; release */
    uint32_t reserved0;
    uint64_t reserved[4];
} pcw_seg_header;

/* pcw_seg_cset.state */
enum { PCW_CSET_LIVE = 1, PCW_CSET_DEAD = 2 };
/* pcw_seg_cset.flags */
enum {
    PCW_CSET_F_SEQCOUNT = 1u << 0, /* slots carry a data sequence count */
    PCW_CSET_F_CALLBACK = 1u << 1  /* values also come from a callback */
};

/* A string in the segment: offset and length in bytes (a NUL follows). */
typedef struct pcw_seg_str {
    uint64_t off;
    uint32_t len;
    uint32_t reserved;
} pcw_seg_str;

/* One registered counterset. Everything but the atomics is written before the
 * counterset is published (release on header.cset_head or the previous
 * counterset's next) and never changes after. */
typedef struct pcw_seg_cset {
    PCW_ATOMIC(uint64_t) next;  /* next counterset, 0 = end; release */
    PCW_ATOMIC(uint32_t) state; /* PCW_CSET_*; release on unregister */
    uint32_t flags;             /* PCW_CSET_F_* */
    uint32_t instance_type;     /* pcw_instance_type */
    uint32_t counter_count;
    uint64_t counters_off; /* pcw_seg_counter[counter_count] */
    uint32_t block_count;  /* data blocks per instance */
    uint32_t data_size;    /* bytes of data per slot (multiple of 8) */
    uint64_t blocks_off;   /* uint32_t[block_count * 2]: each block's
                              offset in the slot data, and its size */
    uint32_t slot_stride;  /* sizeof(pcw_seg_slot) + data_size */
    uint32_t reg_index;    /* registration number within the segment */
    pcw_seg_str name, description, guid, uri, symbol;
    pcw_seg_str provider_name, provider_guid, provider_type, provider_callback,
        application_identity;        /* the manifest's <provider>, "" if none */
    PCW_ATOMIC(uint64_t) chunk_head; /* first pcw_seg_chunk, 0 = none; release */
    PCW_ATOMIC(uint32_t) slot_count; /* slots in all chunks; release */
    uint32_t reserved0;
    PCW_ATOMIC(uint64_t)
    generation; /* bumped (release) when one of its
                   instances appears or disappears */
    uint64_t reserved[2];
} pcw_seg_cset;

/* One counter of a counterset: immutable, published with the counterset. */
typedef struct pcw_seg_counter {
    uint32_t id, type, block, offset, size;
    uint32_t base_id, perf_time_id, perf_freq_id, multi_id;
    int32_t default_scale;
    uint32_t detail_level, aggregate, attributes;
    uint32_t reserved0;
    pcw_seg_str name, description, uri, symbol;
} pcw_seg_counter;

/* A chunk of instance slots of one counterset. Chunks are appended, never
 * removed while the segment lives. Immutable once linked but for `next`. */
typedef struct pcw_seg_chunk {
    PCW_ATOMIC(uint64_t) next; /* next chunk, 0 = end; release */
    uint32_t first_slot;       /* index of this chunk's first slot */
    uint32_t nslots;
    uint64_t cset_off; /* the counterset this chunk belongs to */
    uint64_t reserved;
} pcw_seg_chunk;

/* gen: odd = live (published), even = free; +1 on every publish and close,
 * so it never repeats for the life of the segment. */
#define PCW_SLOT_LIVE(gen) (((gen)&1u) != 0)

/* An instance slot, followed immediately by cset.data_size bytes of data
 * (the instance's data blocks at the cset's block offsets). The slot's index
 * is the instance id. */
typedef struct pcw_seg_slot {
    PCW_ATOMIC(uint64_t) gen; /* see the protocol above */
    PCW_ATOMIC(uint64_t)
    seq;                           /* optional data seqcount: even = stable.
                                      Provider: ++ relaxed, fence(release)
                                      before writing data; fence(release), ++
                                      after. Reader: acquire, copy,
                                      fence(acquire), relaxed re-read. */
    PCW_ATOMIC(uint64_t) name_off; /* instance name bytes; relaxed, under gen */
    PCW_ATOMIC(uint32_t) name_len; /* bytes; relaxed, under gen */
    uint32_t reserved;
} pcw_seg_slot;

#ifndef __cplusplus
_Static_assert(sizeof(pcw_seg_slot) == 32, "slot header is 32 bytes");
_Static_assert(sizeof(pcw_seg_chunk) == 32, "chunk header is 32 bytes");
_Static_assert(sizeof(pcw_seg_header) % 8 == 0, "header is 8-aligned");
_Static_assert(sizeof(pcw_seg_cset) % 8 == 0, "cset is 8-aligned");
_Static_assert(sizeof(pcw_seg_counter) % 8 == 0, "counter is 8-aligned");
#endif

#ifdef __cplusplus
}
#endif
#endif /* PCW_LAYOUT_H */
