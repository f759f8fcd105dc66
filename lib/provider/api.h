/* SPDX-License-Identifier: MIT */
/*
 * pcw/provider.h - the provider API.
 *
 * A provider process opens a pcw_provider (one shared-memory segment),
 * registers countersets in it (pcw_register, as PcwRegister) and creates
 * instances (pcw_create_instance, as PcwCreateInstance). Each instance's data
 * blocks live inside the segment: the provider updates a counter with a plain
 * store through the pointer pcw_instance_block() returns. Consumers in other
 * processes map the segment read-only (pcw/consumer.h).
 *
 * One implementation per program (stb's single-header convention). Include
 * this header wherever you use the API; in exactly ONE source file of the
 * program, define PCW_PROVIDER_IMPLEMENTATION first:
 *
 *     #define PCW_PROVIDER_IMPLEMENTATION
 *     #include <pcw/provider.h>
 *
 * That file compiles the implementation - registration, instances, the
 * control-channel server - in C11 or C++17/20; every other file gets only
 * declarations and the inline fast paths (pcw_instance_block,
 * pcw_instance_write_begin/end, the pcw_u64_* / pcw_u32_* updates). A
 * program where no file defines it fails to link with an undefined
 * reference to PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_
 * source_file; two files that define it, with a multiple definition of that
 * symbol (and of the API's functions). Link what `pkg-config --libs
 * pcw-provider` prints (liburcu-bp, liburcu-cds, pthread). The
 * implementation file needs _GNU_SOURCE, which this header defines when it
 * comes first; `pkg-config --cflags pcw-provider` passes it too.
 *
 * Handles. pcw_provider *, pcw_registration * and pcw_instance * are opaque
 * handles, not pointers to memory: each names an entry of a process-wide
 * table by index and generation. A handle is invalid once its object is
 * closed - by its own close, or by pcw_unregister / pcw_provider_close of
 * what contains it - and an invalid handle is recognised: the close calls
 * return PCW_E_INVALID_HANDLE and touch nothing, pcw_instance_block returns
 * NULL, pcw_instance_write_begin/end do nothing. So closing an instance
 * twice, or after its registration or provider, unregistering twice and
 * closing a provider twice are errors, never memory corruption. NULL is a
 * no-op for the close calls. Teardown order (README): close instances
 * (optional), unregister (optional), then pcw_provider_close, which does
 * both for whatever is still open.
 *
 * Concurrency contract, in short (each function says more):
 *   - pcw_create_instance / pcw_close_instance: any thread, concurrently
 *     with each other and with other registrations' calls. Never wait for a
 *     consumer; may wait for an RCU grace period of the process (slots
 *     reused) or for liburcu's resize of the names table, so not from
 *     inside an urcu-bp read-side critical section.
 *   - pcw_register / pcw_unregister / pcw_provider_close: any thread, but not
 *     concurrently with calls on the same registration (resp. provider) that
 *     they destroy, and not from inside an RCU read-side critical section.
 *   - Counter stores: the instance's owner, any time between create and
 *     close. Plain stores are what the hardware makes atomic for aligned 4-
 *     and 8-byte values; pcw_u64_add() and friends are the same
 *     instructions written as C11 relaxed atomics, for programs (and TSan
 *     runs) that want the language to agree; pcw_u64_add_atomic() is for a
 *     counter that several threads update.
 */
#ifndef PCW_PROVIDER_H
#define PCW_PROVIDER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <pcw/callback.h>
#include <pcw/histogram.h>
#include <pcw/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * Public API
 */

typedef struct pcw_provider pcw_provider;         /* a handle (above) */
typedef struct pcw_registration pcw_registration; /* a handle */
typedef struct pcw_instance pcw_instance;         /* a handle */

/* Options for pcw_provider_open; a zeroed struct (or NULL) gives defaults. */
typedef struct pcw_provider_options {
    const char *name PCW__ZERO;     /* shown to consumers; default: program name */
    const char *dir PCW__ZERO;      /* root directory; default $PCW_DIR, /dev/shm */
    int share_with_group PCW__ZERO; /* 1: group may read (segment 0640, dir 0750) */
    gid_t group PCW__ZERO;          /* with share_with_group: this group; 0 = own */
    uint64_t max_size PCW__ZERO;    /* segment size limit; default 16 GiB */
    pcw_control_callback control_callback PCW__ZERO; /* or NULL (pcw/callback.h) */
    void *control_context PCW__ZERO;
} pcw_provider_options;

/* Open a provider: create its segment (owner-only unless shared with a
 * group) in <root>/pcw-<uid>/. Returns PCW_OK and sets *out, or an error
 * (PCW_E_IO with errno set, PCW_E_PERMISSION if the directory is not ours
 * or is a symlink, PCW_E_NO_MEMORY). Any thread. */
PCW_PROVIDER_API int pcw_provider_open(pcw_provider **out, const pcw_provider_options *opt);

/* After pcw_provider_open failed with `rc`: a sentence saying what is
 * wrong and how to fix it, written into buf (len bytes); returns buf. For
 * PCW_E_PERMISSION it looks at the provider folder again (creating
 * nothing) and names it and what is wrong with it - a symlink, another
 * user's, writable by others - and the way out (remove it, or set
 * PCW_DIR to a directory only you can write, such as $XDG_RUNTIME_DIR);
 * for PCW_E_IO it adds strerror(errno), so call it before anything else
 * changes errno; otherwise it is pcw_status_str(rc). `opt` as given to
 * pcw_provider_open (may be NULL). Any thread. */
PCW_PROVIDER_API const char *pcw_provider_open_error(int rc, const pcw_provider_options *opt,
                                                     char *buf, size_t len);

/* Unregister every counterset, close every instance, mark the segment
 * closed and remove it; every handle of the provider becomes invalid.
 * PCW_OK; PCW_E_INVALID_HANDLE (nothing done) if `p` is closed already;
 * NULL: PCW_OK, nothing done. Not concurrently with other calls on `p`. */
PCW_PROVIDER_API int pcw_provider_close(pcw_provider *p);

/* Path of the provider's segment file (for tools and tests), valid until
 * the provider closes; NULL for an invalid handle. */
PCW_PROVIDER_API const char *pcw_provider_path(const pcw_provider *p);

/* PcwRegister's Version. Both are accepted; PCW_CURRENT_VERSION is what
 * CTRPP (and pcwgen) put in the generated code, PCW_VERSION_2 as on
 * current Windows. pcw treats the two alike, except that
 * PCW_REG_SILO_NEUTRAL needs PCW_VERSION_2 (as PcwRegister does). */
#define PCW_VERSION_1       0x100u
#define PCW_VERSION_2       0x200u
#define PCW_CURRENT_VERSION PCW_VERSION_2

/* Registration flags. The low 16 bits are PCW's (PCW_REGISTRATION_FLAGS):
 * a ported provider may pass them unchanged; pcw's own flags live in the
 * high 16 bits so that they never collide with a flag PCW defines. Any
 * other bit is refused (PCW_E_INVALID_PARAMETER). */
enum {
    /* PcwRegistrationSiloNeutral (PCW bit 0): visible in every server
     * silo. Linux has no silos; it is accepted with PCW_VERSION_2 and
     * changes nothing (a segment is visible to whoever may open its
     * directory). Refused with PCW_VERSION_1, as Windows refuses it. */
    PCW_REG_SILO_NEUTRAL = 1u << 0,
    PCW_REG_SEQCOUNT = 1u << 16, /* give each instance a data sequence count
                                    (pcw_instance_write_begin/end) so that a
                                    consumer reads all its counters at once */
    /* Put each instance's data on cache lines of its own (rows 64-byte
     * aligned and padded). Use it when instances are updated by different
     * threads at once (one instance per worker thread, queue or CPU): packed
     * rows share cache lines, and every update then steals the line from
     * the neighbour's core (false sharing; 2-5x slower updates). It costs
     * segment memory (rows round up to 64 bytes) and consumers read the
     * padding too (see docs/performance.md). */
    PCW_REG_CACHELINE = 1u << 17,
    PCW_REG_FLAGS_ALL_ = PCW_REG_SILO_NEUTRAL | PCW_REG_SEQCOUNT | PCW_REG_CACHELINE,
};

/* PCW_REGISTRATION_INFORMATION. Everything is copied; nothing need outlive
 * the call. Members left zero take their defaults, in C and C++. */
typedef struct pcw_registration_info {
    uint32_t version PCW__ZERO;        /* PCW_VERSION_1 or _2 (PCW_CURRENT_VERSION) */
    uint32_t flags PCW__ZERO;          /* PCW_REG_* */
    const char *name PCW__ZERO;        /* non-empty UTF-8; case-insensitive */
    const char *description PCW__ZERO; /* or NULL */
    const char *guid PCW__ZERO, *uri PCW__ZERO, *symbol PCW__ZERO; /* manifest metadata */
    uint32_t instance_type PCW__ZERO;                              /* pcw_instance_type */
    uint32_t counter_count PCW__ZERO;                              /* 1..PCW_MAX_COUNTERS */
    const pcw_counter_desc *counters PCW__ZERO;                    /* may be a static const table */
    uint32_t block_count PCW__ZERO;        /* data blocks per instance; 0 = derive */
    const uint32_t *block_sizes PCW__ZERO; /* NULL = derive (end of last counter) */
    pcw_callback callback PCW__ZERO;       /* or NULL */
    void *callback_context PCW__ZERO;
    /* The manifest's <provider>, which CTRPP compiles into every counterset
     * (pcwgen fills these); consumers see them with the counterset. NULL
     * when absent. */
    const char *provider_name PCW__ZERO;        /* providerName */
    const char *provider_guid PCW__ZERO;        /* providerGuid */
    const char *provider_type PCW__ZERO;        /* providerType: "userMode", "kernelMode" */
    const char *provider_callback PCW__ZERO;    /* callback: "custom" or "default" */
    const char *application_identity PCW__ZERO; /* applicationIdentity */
} pcw_registration_info;

/* PcwRegister. Validates `info` and publishes the counterset. Errors:
 * PCW_E_INVALID_PARAMETER for a bad version, flags, name, instance type or
 * counter: a type pcw does not know, a size that does not suit the type
 * (PCW_COUNTER_SIZE_OK), a duplicate counter id or name, a reference
 * (base_ref, perf_time_ref, perf_freq_ref, multi_ref) that names no
 * counter, a type that needs a base without one (pcw_counter_desc says
 * where the base comes from), a base that is not of a base type, a block
 * index past block_count, a counter past its block, a misaligned offset;
 * PCW_E_TOO_MANY_COUNTERS; PCW_E_NO_MEMORY; PCW_E_SEGMENT_FULL;
 * PCW_E_INVALID_HANDLE for a closed provider. pcw_register_error() says
 * which counter broke which rule. Any thread. */
PCW_PROVIDER_API int pcw_register(pcw_registration **out, pcw_provider *p,
                                  const pcw_registration_info *info);

/* After pcw_register(..., info) failed with `rc`: a sentence naming the
 * field or counter (its index, id and name) and the rule it broke, written
 * into buf (len bytes); returns buf. It validates `info` again, so pass
 * the same (unchanged) info; for failures that do not come from `info`
 * (PCW_E_NO_MEMORY, PCW_E_SEGMENT_FULL, PCW_E_INVALID_HANDLE...) it is
 * pcw_status_str(rc). The companion of pcw_provider_open_error. Any
 * thread. */
PCW_PROVIDER_API const char *pcw_register_error(int rc, const pcw_registration_info *info,
                                                char *buf, size_t len);

/* PcwUnregister: closes every instance still open (their handles become
 * invalid), then removes the counterset. PCW_OK; PCW_E_INVALID_HANDLE
 * (nothing done) if `r` was unregistered already or its provider closed;
 * NULL: PCW_OK. Waits for an RCU grace period; not from a read-side
 * section, not concurrently with other calls on `r`. */
PCW_PROVIDER_API int pcw_unregister(pcw_registration *r);

/* PcwCreateInstance. `name`: NUL-terminated UTF-8; empty for a single-
 * instance counterset, else non-empty, at most 1024 characters, unique
 * case-insensitively among the registration's open instances. `count` must
 * equal the registration's block count (else PCW_E_INVALID_COUNT); each
 * data[i].size must cover the registered counters of block i (else
 * PCW_E_BUFFER_TOO_SMALL); a larger block (a struct with private fields
 * after the counters) is accepted and only the registered block size
 * copied.
 *
 * The deliberate difference from Windows: PcwCreateInstance keeps
 * pointers to the provider's own blocks and reads them in place until
 * PcwCloseInstance, so the provider updates its own struct. pcw COPIES
 * data[i] into the shared segment (the initial values) and never looks
 * at the provider's memory again: consumers in other processes read the
 * segment, which the provider's private memory cannot be. Update the
 * counters through pcw_instance_block() instead. The one-line porting
 * change, after the create:
 *     MY_VALUES *values = pcw_instance_block(inst, 0);  // update *values
 * (pcwgen's CreateXxx and Xxx_*_of(inst) do the same.) The instance becomes visible to consumers
 * only once its name and initial data are in place. Its id is assigned: unique among the
 * registration's open instances, stable for the instance's life. PCW_E_INVALID_HANDLE for an
 * unregistered registration. Any thread, concurrently with any other create/close, not inside an
 * urcu-bp read-side critical section: it may wait for a grace period (closed slots reused) or for
 * liburcu's resize of the names table (grown here at each power of two of the instances from
 * 65,536, docs/design.md). */
PCW_PROVIDER_API int pcw_create_instance(pcw_instance **out, pcw_registration *r, const char *name,
                                         uint32_t count, const pcw_data *data);

/* PcwCloseInstance: consumers stop seeing the instance at once; its slot
 * and name are reused only after an RCU grace period. The handle and the
 * pointers from pcw_instance_block() are invalid afterwards. PCW_OK;
 * PCW_E_INVALID_HANDLE (nothing done) for an instance closed already, by
 * this call or by pcw_unregister / pcw_provider_close; NULL: PCW_OK. Any
 * thread. */
PCW_PROVIDER_API int pcw_close_instance(pcw_instance *inst);

/* ---- the fast paths (inline, in every translation unit) ----------------- */

/* pcw-private-begin: the inline fast paths below (pcw_instance_block, pcw_instance_write_begin/end) look handles up in the table without a call */
/* Private: the process-wide handle table (lib/provider/handles.c),
 * declared here because the inline functions below read it. An entry is
 * written under the table's lock by the implementation; these functions
 * only read it, with atomic loads, so that even a handle used after its
 * close is a well-defined (and refused) read. Entries of page k are
 * [2^(k+8) - 256, 2^(k+9) - 256); pages are allocated as needed and never
 * freed or moved. */
typedef struct pcw__handle_entry {
    uint32_t gen;              /* generation; handles carry it, +1 when freed */
    uint32_t kind;             /* PCW__HANDLE_* (0: free) */
    void *obj;                 /* the implementation's record */
    unsigned char *data;       /* instance: its row's data, in the segment */
    uint64_t *seq;             /* instance: its row's sequence count, or NULL */
    const uint32_t *block_off; /* instance: its blocks' offsets in the data */
    uint32_t block_count;      /* instance: how many blocks */
    uint32_t id;               /* instance: its id */
    uint32_t next_free;        /* free: index + 1 of the next free entry */
} pcw__handle_entry;

enum { PCW__HANDLE_PROVIDER = 1, PCW__HANDLE_REGISTRATION = 2, PCW__HANDLE_INSTANCE = 3 };
#define PCW__HANDLE_PAGE0_BITS 8
#define PCW__HANDLE_PAGES      25 /* 2^32 entries */

PCW_PROVIDER_API extern pcw__handle_entry *pcw__handle_pages[PCW__HANDLE_PAGES];

/* Every translation unit that includes this header refers to a symbol only
 * the implementation defines: the link error that names it says what to do. */
PCW_PROVIDER_API extern const char
    PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file;
__attribute__((used)) static const char *const pcw__implementation_check =
    &PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file;

/* The live entry a handle names, if it is of this kind; else NULL. A
 * handle is (generation << 32) | (index + 1). */
static inline const pcw__handle_entry *pcw__handle_find(const void *h, uint32_t kind)
{
    uint64_t v = (uint64_t)(uintptr_t)h;
    uint32_t slot = (uint32_t)v;
    if (slot == 0)
        return NULL;
    uint64_t n = (uint64_t)slot - 1 + (1u << PCW__HANDLE_PAGE0_BITS);
    unsigned page = (unsigned)(63 - __builtin_clzll(n)) - PCW__HANDLE_PAGE0_BITS;
    /* Acquire pairs with the release that published the page
     * (pcw__handle_new). */
    const pcw__handle_entry *pg = __atomic_load_n(&pcw__handle_pages[page], __ATOMIC_ACQUIRE);
    if (!pg)
        return NULL;
    const pcw__handle_entry *e = &pg[n - ((uint64_t)1 << (page + PCW__HANDLE_PAGE0_BITS))];
    /* Acquire pairs with pcw__handle_new's release store of gen: an entry
     * seen with this handle's generation shows the fields written for it. */
    if (__atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) != (uint32_t)(v >> 32) ||
        __atomic_load_n(&e->kind, __ATOMIC_RELAXED) != kind)
        return NULL;
    return e;
}
/* pcw-private-end */

/* The instance's data block `block` inside the segment (8-byte aligned),
 * valid until the instance is closed. Store counter values into it. NULL
 * for a block past the registration's, or a closed instance. Keep the
 * pointer: this lookup costs a few loads, the store through it none. */
static inline void *pcw_instance_block(const pcw_instance *inst, uint32_t block)
{
    const pcw__handle_entry *e = pcw__handle_find(inst, PCW__HANDLE_INSTANCE);
    if (!e || block >= __atomic_load_n(&e->block_count, __ATOMIC_RELAXED))
        return NULL;
    return __atomic_load_n(&e->data, __ATOMIC_RELAXED) +
           __atomic_load_n(&e->block_off, __ATOMIC_RELAXED)[block];
}

/* The instance's assigned id; PCW_ANY_INSTANCE_ID for a closed instance. */
static inline uint32_t pcw_instance_id(const pcw_instance *inst)
{
    const pcw__handle_entry *e = pcw__handle_find(inst, PCW__HANDLE_INSTANCE);
    return e ? __atomic_load_n(&e->id, __ATOMIC_RELAXED) : PCW_ANY_INSTANCE_ID;
}

/* With PCW_REG_SEQCOUNT: bracket a group of counter updates so a consumer
 * reads them all from one moment. Calls for one instance must not overlap
 * (one writer at a time); never blocks. They do nothing for an instance
 * registered without the flag, or closed. */
static inline void pcw_instance_write_begin(pcw_instance *inst)
{
    const pcw__handle_entry *e = pcw__handle_find(inst, PCW__HANDLE_INSTANCE);
    uint64_t *seq = e ? __atomic_load_n(&e->seq, __ATOMIC_RELAXED) : NULL;
    if (!seq)
        return; /* registered without PCW_REG_SEQCOUNT */
    uint64_t q = __atomic_load_n(seq, __ATOMIC_RELAXED);
    __atomic_store_n(seq, q + 1, __ATOMIC_RELAXED);
    /* Pairs with the reader's acquire fence before it re-reads seq: a
     * reader that saw any update below sees seq odd or changed. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void pcw_instance_write_end(pcw_instance *inst)
{
    const pcw__handle_entry *e = pcw__handle_find(inst, PCW__HANDLE_INSTANCE);
    uint64_t *seq = e ? __atomic_load_n(&e->seq, __ATOMIC_RELAXED) : NULL;
    if (!seq)
        return;
    uint64_t q = __atomic_load_n(seq, __ATOMIC_RELAXED);
    /* Release pairs with the reader's acquire load of seq: a reader that
     * sees the even value sees every update above. */
    __atomic_store_n(seq, q + 1, __ATOMIC_RELEASE);
}

/* Counter updates through a data-block pointer, race-free in C11's terms
 * (consumers read the words with relaxed atomic loads).
 *
 * pcw_u64_add / pcw_u32_add: ONE writer per counter (the usual case: the
 * instance's owner thread). A relaxed load and a relaxed store: the same
 * instructions as a plain `*p += v`, no lock prefix. Two threads adding to
 * one counter this way lose updates.
 *
 * pcw_u64_add_atomic / pcw_u32_add_atomic: any number of writers. An
 * atomic read-modify-write (x86: `lock add`, several times the cost, and
 * the cache line moves between the writers' cores).
 *
 * pcw_u64_set / pcw_u32_set: store a value (relaxed). */
/* GCC 12 warns (-Wstringop-overflow) when these are inlined on a path
 * where the pointer is a constant such as &((T *)NULL)->field, e.g. right
 * after pcw_instance_block() returned NULL; the program's own check or
 * crash there is the answer, not a warning inside pcw. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline void pcw_u64_add(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}
static inline void pcw_u64_add_atomic(uint64_t *p, uint64_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline void pcw_u64_set(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
static inline void pcw_u32_add(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}
static inline void pcw_u32_add_atomic(uint32_t *p, uint32_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline void pcw_u32_set(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* pcw_time_ns: CLOCK_MONOTONIC in nanoseconds - the clock of the tick
 * types' default frequency, 10^9 (PERF_AVERAGE_TIMER, PERF_COUNTER_TIMER,
 * the multi timers and queue lengths without a perf_freq_ref), and pcw's
 * system time, which consumers read the same clock for. Time a request as
 *
 *   uint64_t start = pcw_time_ns();
 *   ... the work ...
 *   pcw_u64_add(&c->latency_ns, pcw_time_ns() - start); // PERF_AVERAGE_TIMER, 8 bytes
 *   pcw_u32_add(&c->latency_base, 1);                   // its PERF_AVERAGE_BASE
 *
 * Cost: clock_gettime is answered in user space by the kernel's vDSO, no
 * system call: 20-30 ns on x86-64 with the TSC clock source (a few
 * hundred ns where the vDSO cannot read the clock, e.g. some virtual
 * machines' clock sources; /sys/devices/system/clock/clocksource0 says
 * which). Never fails for CLOCK_MONOTONIC on Linux. */
/* pcw-private-begin: the inline pcw_time_ns reads this clock */
#ifdef CLOCK_MONOTONIC
#define PCW__CLOCK_MONOTONIC CLOCK_MONOTONIC
#else
/* <time.h> came before this header without POSIX (the _GNU_SOURCE above
 * was too late): glibc's declaration, whose clockid_t is int, and Linux's
 * CLOCK_MONOTONIC. */
extern int clock_gettime(int, struct timespec *);
#define PCW__CLOCK_MONOTONIC 1
#endif
/* pcw-private-end */
static inline uint64_t pcw_time_ns(void)
{
    struct timespec ts;
    clock_gettime(PCW__CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef __cplusplus
}
#endif

#endif /* PCW_PROVIDER_H */
