/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/internal.h - the provider implementation's private header
 * (SQLite's XInt.h): what every part includes, the records behind the
 * handles with who owns each field, and the functions one part offers to
 * the parts after it. Never installed; the generated <pcw/provider.h>
 * carries it in its implementation section (scripts/amalgamate.py).
 *
 * The parts, in the order they build on each other. A part calls only
 * functions of the parts above it (the Makefile's check-provider-order
 * tests it on the objects), so the amalgamation needs no forward
 * declarations between parts:
 *
 *   sync.c      TSan annotations for RCU, the RCU registration list
 *   handles.c   the handle table (api.h declares its entries)
 *   arena.c     the segment file: folder, growth, trimming, allocation
 *   instance.c  chunks, names, the limbo, punching, create and close
 *   buffer.c    pcw_buffer and pcw_add_instance
 *   control.c   the control channel's server (listener, connections)
 *   open.c      pcw_provider_open, pcw_provider_open_error
 *   register.c  pcw_register's rules and messages, publishing a counterset
 *   teardown.c  pcw_unregister, pcw_provider_close
 *
 * A part includes nothing but this header: the amalgamation puts the parts
 * inside one extern "C" block, where system headers must not be.
 *
 * PCW__PRIVATE marks a function one part offers the later ones: `static`
 * in the amalgamation (one translation unit), hidden in libpcw-provider.
 *
 * It compiles as C11 and, amalgamated, as C++17/20 (g++, clang++),
 * warning-free with -Wall -Wextra. Shared memory is touched only through
 * __atomic builtins (common/layout.h says why): no <stdatomic.h>, nothing
 * that means something else in C++.
 */
#ifndef PCW_PROVIDER_INTERNAL_H
#define PCW_PROVIDER_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* A system header included before pcw/provider.h fixed the feature set
 * without _GNU_SOURCE, so the declarations below are missing: say so
 * plainly, and compile nothing more (one error, not hundreds:
 * PCW__IMPLEMENTATION_READY stays undefined and the amalgamation skips
 * the parts). */
#if defined(__GLIBC__) && !defined(__USE_GNU)
#error                                                                                             \
    "the pcw provider implementation needs _GNU_SOURCE: define it before your first #include in the file that defines PCW_PROVIDER_IMPLEMENTATION, or compile with the flags of `pkg-config --cflags pcw-provider`"
#else

#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>
#include <urcu/rculist.h>

#include "../common/control_proto.h"
#include "../common/layout.h"
#include "../common/name.h"
#include "../common/naming.h"
#include "api.h"

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

#ifndef PCW__PRIVATE
#define PCW__PRIVATE __attribute__((visibility("hidden")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * The records behind the handles
 */
typedef struct pcw__prov pcw__prov; /* behind a pcw_provider handle */
typedef struct pcw__reg pcw__reg;   /* behind a pcw_registration handle */
typedef struct pcw__inst pcw__inst; /* behind a pcw_instance handle */

#define PCW__DEFAULT_MAX_SIZE (16ull << 30)
#define PCW__MIN_GROW         (1ull << 20)
#define PCW__MAX_GROW         (256ull << 20)
#define PCW__NAME_CLASSES     ((PCW_MAX_INSTANCE_NAME_BYTES + 15) / 16 + 1)
/* A registration's names table is resized by pcw_create_instance itself
 * at each power of two of its instances from this many, or from the
 * largest size liburcu's chain-length policy grows a table to on this
 * machine if that is more (instance.c's names_grow_from), so that it
 * never shrinks one. Below it a lost lazy resize leaves chains of 1,024
 * names on average at most. */
#define PCW__NAMES_GROW_FROM (1ull << 16)

/* A vector of uint64_t (free lists). */
typedef struct pcw__vec {
    uint64_t *v;
    size_t n, cap;
} pcw__vec;

/* A provider. Freed by pcw_provider_close. */
struct pcw__prov {
    void *handle;         /* its pcw_provider handle (handles.c) */
    pthread_mutex_t lock; /* arena, growth, free name lists, cset list */
    int fd;
    unsigned char *base; /* reserved address range; the file is mapped at its start */
    uint64_t max_size;   /* bytes reserved */
    uint64_t mapped;     /* bytes of file mapped (= file size) */
    uint64_t reserved;   /* bytes of file with pages reserved (fallocate), <=
                            mapped; the tail past it was given back */
    uint64_t used;       /* arena bump pointer (= header.size) */
    pcw_seg_header *hdr;
    uint64_t last_cset;                    /* offset of the last pcw_seg_cset, 0 = none */
    uint32_t nregs;                        /* registrations made, for reg_index */
    pcw__vec name_free[PCW__NAME_CLASSES]; /* freed name blocks by size class */
    /* Open registrations. Changed under `lock` (pcw__list_*_rcu); walked
     * by the control-channel threads under urcu_bp_read_lock(). */
    struct cds_list_head regs;
    void *control;            /* the control channel (control.c), or NULL */
    pcw_provider_options opt; /* as opened (strings not kept) */
    char path[PATH_MAX];
};

/* A chunk of slots, as the provider sees it (pcw/layout.h). */
typedef struct pcw__chunk {
    uint32_t first, n;
    uint32_t nfree;     /* slots in r->free_slots */
    int punched;        /* its pages went back to the system (pcw__punch) */
    uint64_t gen_floor; /* even, above every gen its slots had before the
                           punch zeroed them: reuse continues from here */
    pcw_seg_chunk *hdr;
    uint64_t *live;      /* live bits, (n + 63) / 64 words */
    uint64_t *gens;      /* gen[n] */
    uint64_t *names;     /* name ref[n] */
    unsigned char *rows; /* row[n], data_stride bytes each */
} pcw__chunk;

/* A registration. Freed by pcw_unregister (directly or from
 * pcw_provider_close), after a grace period. */
struct pcw__reg {
    void *handle; /* its pcw_registration handle (handles.c) */
    pcw__prov *prov;
    struct cds_list_head node; /* in prov->regs */
    pthread_mutex_t lock;      /* slot free list, chunk table */
    pcw_seg_cset *cset;
    uint64_t cset_off;
    uint32_t instance_type, flags;
    uint32_t counter_count, block_count;
    uint32_t data_size, data_stride, row_data; /* row_data: data's offset in a row */
    uint32_t *block_off, *block_size;          /* per block: offset in slot data, size */
    uint32_t *block_need;                      /* per block: end of its last counter */
    pcw_counter_desc *counters;                /* private copy (names not kept) */
    struct cds_lfht *names;                    /* open instances by folded name */
    uint64_t names_open;                       /* nodes in names: relaxed atomic, any
                                                  thread (instance.c's grow_names) */
    pcw__vec free_slots;                       /* slot indexes free for reuse */
    size_t reclaiming;                         /* instances in a batch being reclaimed */
    pthread_cond_t reclaimed;                  /* signalled when that batch is back */
    pcw__vec limbo;                            /* closed instances (pointers) waiting
                                                  for a grace period before their slot
                                                  and name are reused */
    pcw__chunk *chunks;
    size_t nchunks, chunks_cap;
    uint64_t last_chunk; /* offset of the last chunk, 0 = none */
    uint32_t slot_count;
    pcw_callback callback;
    void *callback_context;
};

/* An instance. Its handle is freed when it closes; the record itself
 * after a grace period (pcw__reclaim), because lookups in reg->names may
 * still hold it. */
struct pcw__inst {
    struct cds_lfht_node node; /* in reg->names */
    void *handle;              /* its pcw_instance handle (handles.c) */
    pcw__reg *reg;
    pcw_seg_chunk *chunk; /* its chunk (closes counter) */
    uint64_t *live;       /* the live-bit word of its slot */
    uint64_t live_bit;
    uint64_t *gen;       /* its slot's generation */
    uint64_t *seq;       /* its row's sequence count, NULL without
                            PCW_REG_SEQCOUNT */
    unsigned char *data; /* its data: blocks at reg->block_off[] */
    uint64_t name_off;
    uint32_t name_len, id;
    /* Private copy for lookups, allocated with the record, right after it
     * (a pointer, not a flexible array member: this header is compiled as
     * C++ too, where those are not standard). */
    char *name;
};

/* A callback's output (pcw/callback.h's opaque pcw_buffer): filled by
 * pcw_add_instance (buffer.c), sent by the control channel (control.c). */
struct pcw_buffer {
    pcw__reg *reg;
    int collect;           /* 1: COLLECT_DATA (values travel), 0: ENUMERATE */
    uint64_t counter_mask; /* the request's masks, applied here; this one
                              by position, as the wire carries it (the
                              callback sees it by id: pcw__id_mask) */
    uint32_t instance_id;
    const char *mask;
    size_t mask_len;
    int all_names;        /* the mask is "*": every valid name matches */
    pcw_ctl_writer items; /* encoded reply items (pcw/control_proto.h) */
    unsigned char *heap;  /* items' buffer, kept between requests (items.buf during one) */
    size_t heap_cap;
    uint32_t count;       /* items encoded */
    uint32_t duplicates;  /* names dropped as duplicates (pcw_add_instance) */
    /* Every name added (kept or dropped), for the duplicate check. */
    char *names;
    size_t names_len, names_cap;
    uint64_t *name_at; /* per name: offset << 32 | length */
    size_t nnames, name_at_cap;
    uint32_t *tab; /* open addressing over name_at, index + 1; 0 = empty */
    size_t tab_cap;
};

/* ===========================================================================
 * What each part offers the parts after it, in the parts' order
 */

/* sync.c: the RCU registration list, C11 orders (TSan sees them). */
PCW__PRIVATE void pcw__list_add_tail_rcu(struct cds_list_head *n, struct cds_list_head *head);
PCW__PRIVATE void pcw__list_del_rcu(struct cds_list_head *n);
PCW__PRIVATE struct cds_list_head *pcw__list_next_rcu(struct cds_list_head *n);

/* handles.c: the handle table. */
PCW__PRIVATE void *pcw__handle_new(uint32_t kind, void *obj);
PCW__PRIVATE void pcw__handle_set_instance(void *h, unsigned char *data, uint64_t *seq,
                                           const uint32_t *block_off, uint32_t block_count,
                                           uint32_t id);
PCW__PRIVATE void *pcw__handle_get(const void *h, uint32_t kind);
PCW__PRIVATE void *pcw__handle_claim(const void *h, uint32_t kind);

/* arena.c: the segment file and its allocator. */
PCW__PRIVATE uint64_t pcw__align(uint64_t x, uint64_t a);
PCW__PRIVATE uint64_t pcw__proc_start_time(void);
PCW__PRIVATE int pcw__provider_dir(char *dir, size_t cap, const char *root, int group, gid_t gid);
PCW__PRIVATE int pcw__grow(pcw__prov *p, uint64_t need);
PCW__PRIVATE void pcw__trim(pcw__prov *p);
PCW__PRIVATE uint64_t pcw__arena_alloc_aligned(pcw__prov *p, uint64_t n, uint64_t align, int *rc);
PCW__PRIVATE uint64_t pcw__arena_alloc(pcw__prov *p, uint64_t n, int *rc);
PCW__PRIVATE int pcw__arena_str(pcw__prov *p, const char *s, pcw_seg_str *out);
PCW__PRIVATE void pcw__bump_generation(pcw__prov *p);

/* instance.c: instances' slots, names and reuse. */
PCW__PRIVATE void pcw__reclaim(pcw__reg *r, pcw__vec *batch);
PCW__PRIVATE int pcw__check_instance_name(const pcw__reg *r, const char *name, size_t *len);
PCW__PRIVATE void pcw__close_record(pcw__inst *in);

/* buffer.c: a connection's pcw_buffer, made ready for each request
 * (zeroed before its first); its allocations are kept between requests up
 * to PCW__BUFFER_KEEP_BYTES each. */
PCW__PRIVATE int pcw__buffer_init(pcw_buffer *b, pcw__reg *r, int collect, uint64_t counter_mask,
                                  uint32_t instance_id, const char *mask);
PCW__PRIVATE void pcw__buffer_done(pcw_buffer *b);
PCW__PRIVATE void pcw__buffer_free(pcw_buffer *b);

/* control.c: the control channel starts with the provider (open.c) or its
 * first callback registration (register.c) and stops before the provider
 * closes (teardown.c). */
PCW__PRIVATE int pcw__control_start(pcw__prov *p);
/* Start the channel if it is not running (first callback registration). */
PCW__PRIVATE int pcw__control_ensure(pcw__prov *p);
/* After r left prov->regs and a grace period: wait for callbacks on r. */
PCW__PRIVATE void pcw__control_forget(pcw__reg *r);
PCW__PRIVATE void pcw__control_stop(pcw__prov *p);

/* register.c: free a registration's record (teardown.c). */
PCW__PRIVATE void pcw__free_registration(pcw__reg *r);

#ifdef __cplusplus
}
#endif

/* Everything compiled: the parts may follow (the amalgamation tests it). */
#define PCW__IMPLEMENTATION_READY 1

#endif /* _GNU_SOURCE */
#endif /* PCW_PROVIDER_INTERNAL_H */
