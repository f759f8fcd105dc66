/*
 * pcw/provider.h - the provider API, header-only.
 *
 * A provider process opens a pcw_provider (one shared-memory segment),
 * registers countersets in it (pcw_register, as PcwRegister) and creates
 * instances (pcw_create_instance, as PcwCreateInstance). Each instance's data
 * blocks live inside the segment: the provider updates a counter with a plain
 * store through the pointer pcw_instance_block() returns. Consumers in other
 * processes map the segment read-only (pcw/consumer.h).
 *
 * It needs _GNU_SOURCE, which it defines itself when it is the first
 * header; otherwise define it at the top of the file or compile with
 * `pkg-config --cflags pcw-provider` (which passes -D_GNU_SOURCE).
 *
 * Include it from any number of translation units: every function is
 * `static inline`, all state lives in the objects the API returns, and the
 * only libraries to link are the ones `pkg-config --libs pcw-provider`
 * prints (liburcu-bp, liburcu-cds, pthread).
 *
 * Concurrency contract, in short (each function says more):
 *   - pcw_create_instance / pcw_close_instance: any thread, concurrently
 *     with each other and with other registrations' calls. Never wait for a
 *     consumer.
 *   - pcw_register / pcw_unregister / pcw_provider_close: any thread, but not
 *     concurrently with calls on the same registration (resp. provider) that
 *     they destroy, and not from inside an RCU read-side critical section.
 *   - Counter stores: the instance's owner, any time between create and
 *     close. Plain stores are what the hardware makes atomic for aligned 4-
 *     and 8-byte values; pcw_u64_add() and friends are the same stores as C11
 *     relaxed atomics, for programs that want the language to agree.
 */
#ifndef PCW_PROVIDER_H
#define PCW_PROVIDER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* A system header included before this one fixed the feature set without
 * _GNU_SOURCE, so the declarations below are missing: say so plainly. */
#if defined(__GLIBC__) && !defined(__USE_GNU)
#error                                                                                             \
    "pcw/provider.h needs _GNU_SOURCE: define it before your first #include, or compile with the flags of `pkg-config --cflags pcw-provider`"
#endif

#include <urcu/urcu-bp.h>
#include <urcu/rculfhash.h>
#include <urcu/rculist.h>

#include "layout.h"
#include "name.h"
#include "naming.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ===========================================================================
 * Public API
 */

typedef struct pcw_provider pcw_provider;
typedef struct pcw_registration pcw_registration;
typedef struct pcw_instance pcw_instance;
typedef struct pcw_buffer pcw_buffer; /* a callback's output (pcw/callback.h) */

/* PERFLIB's ControlCallback (pcw/callback.h): what a consumer is doing. */
typedef enum pcw_control_request {
    PCW_CONTROL_ADD_COUNTER = 1,    /* PERF_ADD_COUNTER */
    PCW_CONTROL_REMOVE_COUNTER = 2, /* PERF_REMOVE_COUNTER */
    PCW_CONTROL_ENUM_INSTANCES = 3, /* PERF_ENUM_INSTANCES */
    PCW_CONTROL_COLLECT_START = 4,  /* PERF_COLLECT_START */
    PCW_CONTROL_COLLECT_END = 5,    /* PERF_COLLECT_END */
} pcw_control_request;

typedef struct pcw_control_info {
    const char *counterset; /* the counterset's name */
    uint32_t counter_index; /* ADD/REMOVE: index in the registration */
    uint32_t counter_id;    /* ADD/REMOVE: its id; else PCW_NO_COUNTER */
    const char *instance;   /* ADD/REMOVE/ENUM/COLLECT: instance wildcard */
    uint32_t instance_id;   /* PCW_ANY_INSTANCE_ID = any */
    pid_t pid;              /* the consumer process (PERFLIB: machine name) */
    uid_t uid;              /* its user */
} pcw_control_info;

/* A non-zero return from ADD_COUNTER, ENUM_INSTANCES or COLLECT_START is
 * the consumer's error (return a pcw_status); others are ignored. Runs on
 * control-channel threads: must be thread-safe. */
typedef int (*pcw_control_callback)(pcw_control_request req, const pcw_control_info *info,
                                    void *ctx);

/* Options for pcw_provider_open; a zeroed struct (or NULL) gives defaults. */
typedef struct pcw_provider_options {
    const char *name;                      /* shown to consumers; default: program name */
    const char *dir;                       /* root directory; default $PCW_DIR, /dev/shm */
    int share_with_group;                  /* 1: group may read (segment 0640, dir 0750) */
    gid_t group;                           /* with share_with_group: this group; 0 = own */
    uint64_t max_size;                     /* segment size limit; default 16 GiB */
    pcw_control_callback control_callback; /* or NULL (pcw/callback.h) */
    void *control_context;
} pcw_provider_options;

/* Open a provider: create its segment (owner-only unless shared with a
 * group) in <root>/pcw-<uid>/. Returns PCW_OK and sets *out, or an error
 * (PCW_E_IO with errno set, PCW_E_PERMISSION if the directory is not ours
 * or is a symlink, PCW_E_NO_MEMORY). Any thread. */
static inline int pcw_provider_open(pcw_provider **out, const pcw_provider_options *opt);

/* After pcw_provider_open failed with `rc`: a sentence saying what is
 * wrong and how to fix it, written into buf (len bytes); returns buf. For
 * PCW_E_PERMISSION it looks at the provider folder again (creating
 * nothing) and names it and what is wrong with it - a symlink, another
 * user's, writable by others - and the way out (remove it, or set
 * PCW_DIR to a directory only you can write, such as $XDG_RUNTIME_DIR);
 * for PCW_E_IO it adds strerror(errno), so call it before anything else
 * changes errno; otherwise it is pcw_status_str(rc). `opt` as given to
 * pcw_provider_open (may be NULL). Any thread. */
static inline const char *pcw_provider_open_error(int rc, const pcw_provider_options *opt,
                                                  char *buf, size_t len);

/* Unregister every counterset, close every instance, mark the segment
 * closed and remove it. Not concurrently with other calls on `p`. */
static inline void pcw_provider_close(pcw_provider *p);

/* Path of the provider's segment file (for tools and tests). */
static inline const char *pcw_provider_path(const pcw_provider *p);

/* Callback countersets (PCW_CALLBACK); see pcw/callback.h for the types. */
typedef enum pcw_callback_type {
    PCW_CALLBACK_ADD_COUNTER = 0,
    PCW_CALLBACK_REMOVE_COUNTER = 1,
    PCW_CALLBACK_ENUMERATE_INSTANCES = 2,
    PCW_CALLBACK_COLLECT_DATA = 3,
} pcw_callback_type;

typedef struct pcw_callback_info {
    pcw_buffer *buffer;        /* ENUMERATE/COLLECT: pass to pcw_add_instance */
    uint64_t counter_mask;     /* bit i = i-th registered counter; ~0 = all */
    uint32_t instance_id;      /* PCW_ANY_INSTANCE_ID = any */
    const char *instance_mask; /* wildcard, "*" = all (pcw_wildcard_match) */
    uint32_t counter_index;    /* ADD/REMOVE_COUNTER: which counter */
    uint32_t reserved;
} pcw_callback_info;

/* A provider callback; must be thread-safe (several consumers may be served
 * at once). Its return value is informational, as in PCW. */
typedef int (*pcw_callback)(pcw_callback_type type, const pcw_callback_info *info, void *ctx);

/* PcwRegister's Version. */
#define PCW_VERSION_1 0x100u

/* Registration flags. */
enum {
    PCW_REG_SEQCOUNT = 1u << 0, /* give each instance a data sequence count
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
    PCW_REG_FLAGS_ALL_ = PCW_REG_SEQCOUNT | PCW_REG_CACHELINE,
};

/* PCW_REGISTRATION_INFORMATION. Everything is copied; nothing need outlive
 * the call. */
typedef struct pcw_registration_info {
    uint32_t version;                /* PCW_VERSION_1 */
    uint32_t flags;                  /* PCW_REG_* */
    const char *name;                /* non-empty UTF-8; compared case-insensitively */
    const char *description;         /* or NULL */
    const char *guid, *uri, *symbol; /* manifest metadata, or NULL */
    uint32_t instance_type;          /* pcw_instance_type */
    uint32_t counter_count;          /* 1..PCW_MAX_COUNTERS */
    const pcw_counter_desc *counters;
    uint32_t block_count;        /* data blocks per instance; 0 = derive */
    const uint32_t *block_sizes; /* NULL = derive (end of the last counter) */
    pcw_callback callback;       /* or NULL */
    void *callback_context;
    /* The manifest's <provider>, which CTRPP compiles into every counterset
     * (pcwgen fills these); consumers see them with the counterset. NULL
     * when absent. */
    const char *provider_name;        /* providerName */
    const char *provider_guid;        /* providerGuid */
    const char *provider_type;        /* providerType: "userMode", "kernelMode" */
    const char *provider_callback;    /* callback: "custom" or "default" */
    const char *application_identity; /* applicationIdentity */
} pcw_registration_info;

/* PcwRegister. Validates `info` (PCW_E_INVALID_PARAMETER for a bad version,
 * flags, name, instance type, counter, duplicate counter id or name, a
 * base/perfTime/perfFreq/multi id that names no counter, a block index past
 * block_count, a counter past its block, a misaligned offset;
 * PCW_E_TOO_MANY_COUNTERS; PCW_E_NO_MEMORY) and publishes the counterset.
 * Any thread. */
static inline int pcw_register(pcw_registration **out, pcw_provider *p,
                               const pcw_registration_info *info);

/* PcwUnregister: closes every instance still open, then removes the
 * counterset. Waits for an RCU grace period; not from a read-side section,
 * not concurrently with other calls on `r`. */
static inline void pcw_unregister(pcw_registration *r);

/* PCW_DATA: one data block. For pcw_create_instance, `data` is the initial
 * contents (or NULL for zeros) and `size` the block size the caller expects;
 * for pcw_add_instance, the block to copy. */
typedef struct pcw_data {
    const void *data;
    uint32_t size;
} pcw_data;

/* PcwCreateInstance. `name`: NUL-terminated UTF-8; empty for a single-
 * instance counterset, else non-empty, at most 1024 characters, unique
 * case-insensitively among the registration's open instances. `count` must
 * equal the registration's block count (else PCW_E_INVALID_COUNT); each
 * data[i].size must cover the registered counters of block i (else
 * PCW_E_BUFFER_TOO_SMALL) and not exceed the registered block size (else
 * PCW_E_INTEGER_OVERFLOW). The instance becomes visible to consumers only
 * once its name and initial data are in place. Its id is assigned: unique
 * among the registration's open instances, stable for the instance's life.
 * Any thread, concurrently with any other create/close. */

static inline int pcw_create_instance(pcw_instance **out, pcw_registration *r, const char *name,
                                      uint32_t count, const pcw_data *data);

/* PcwCloseInstance: consumers stop seeing the instance at once; its slot
 * and name are reused only after an RCU grace period. The pointers from
 * pcw_instance_block() are invalid afterwards. Any thread, once per
 * instance. */
static inline void pcw_close_instance(pcw_instance *inst);

/* The instance's data block `block` inside the segment (8-byte aligned),
 * valid until the instance is closed. Store counter values into it. */
static inline void *pcw_instance_block(const pcw_instance *inst, uint32_t block);
/* The instance's assigned id. */
static inline uint32_t pcw_instance_id(const pcw_instance *inst);

/* With PCW_REG_SEQCOUNT: bracket a group of counter updates so a consumer
 * reads them all from one moment. Calls for one instance must not overlap
 * (one writer at a time); never blocks. */
static inline void pcw_instance_write_begin(pcw_instance *inst);
static inline void pcw_instance_write_end(pcw_instance *inst);

/* Relaxed atomic updates of a counter in a data block: the same machine
 * stores as a plain `*p += v`, but data-race-free in C11's terms. */
static inline void pcw_u64_add(uint64_t *p, uint64_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline void pcw_u64_set(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
static inline void pcw_u32_add(uint32_t *p, uint32_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
static inline void pcw_u32_set(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* ===========================================================================
 * Implementation. Names starting with pcw__ are private.
 */

/* The control channel (pcw/callback.h) starts with the provider and stops
 * before it closes. */
static inline int pcw__control_start(pcw_provider *p);
static inline void pcw__control_stop(pcw_provider *p);
/* Start the channel if it is not running (first callback registration). */
static inline int pcw__control_ensure(pcw_provider *p);
/* After r left prov->regs and a grace period: wait for callbacks on r. */
static inline void pcw__control_forget(pcw_registration *r);

#define PCW__DEFAULT_MAX_SIZE (16ull << 30)
#define PCW__MIN_GROW         (1ull << 20)
#define PCW__MAX_GROW         (256ull << 20)
#define PCW__NAME_CLASSES     ((PCW_MAX_INSTANCE_NAME_BYTES + 15) / 16 + 1)

/* A vector of uint64_t (free lists). */
typedef struct pcw__vec {
    uint64_t *v;
    size_t n, cap;
} pcw__vec;

static inline int pcw__vec_push(pcw__vec *a, uint64_t x)
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

struct pcw_provider {
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
    void *control;            /* the control channel (pcw/callback.h), or NULL */
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

struct pcw_registration {
    pcw_provider *prov;
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

struct pcw_instance {
    struct cds_lfht_node node; /* in reg->names */
    pcw_registration *reg;
    pcw_seg_chunk *chunk; /* its chunk (closes counter) */
    uint64_t *live;       /* the live-bit word of its slot */
    uint64_t live_bit;
    uint64_t *gen;       /* its slot's generation */
    uint64_t *seq;       /* its row's sequence count, NULL without
                            PCW_REG_SEQCOUNT */
    unsigned char *data; /* its data: blocks at reg->block_off[] */
    uint64_t name_off;
    uint32_t name_len, id;
    char name[]; /* private copy for lookups */
};

/* ---- small helpers ------------------------------------------------------ */

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
static inline void pcw__list_add_tail_rcu(struct cds_list_head *n, struct cds_list_head *head)
{
    n->next = head;
    n->prev = head->prev;
    __atomic_store_n(&head->prev->next, n, __ATOMIC_RELEASE);
    head->prev = n;
}

/* A removed node keeps its `next`, so a walker standing on it goes on;
 * its memory may be reused only after a grace period. */
static inline void pcw__list_del_rcu(struct cds_list_head *n)
{
    n->next->prev = n->prev;
    __atomic_store_n(&n->prev->next, n->next, __ATOMIC_RELEASE);
}

static inline struct cds_list_head *pcw__list_next_rcu(struct cds_list_head *n)
{
    return __atomic_load_n(&n->next, __ATOMIC_ACQUIRE);
}

static inline uint64_t pcw__align(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

/* /proc/self/stat field 22: the process start time in clock ticks. */
static inline uint64_t pcw__proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* comm may hold spaces and parens */
    if (!p)
        return 0;
    p++;
    for (int field = 2; field < 22 && *p; p++)
        if (*p == ' ')
            field++;
    return strtoull(p, NULL, 10);
}

/* Make (or check) <root>/pcw-<uid>: a real directory we own, mode 0700 or
 * 0750, that nobody else may write (the rule is pcw/naming.h's). Refuses a
 * symlink or a directory owned by someone else: an attacker may create
 * names in a shared /dev/shm before we do. */
static inline int pcw__provider_dir(char *dir, size_t cap, const char *root, int group)
{
    uid_t uid = geteuid();
    char name[32];
    if (pcw__dir_name(name, sizeof name, uid) != 0 ||
        (size_t)snprintf(dir, cap, "%s/%s", root, name) >= cap)
        return PCW_E_INVALID_PARAMETER;
    mode_t mode = group ? 0750 : 0700;
    if (mkdir(dir, mode) != 0 && errno != EEXIST)
        return PCW_E_IO;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ELOOP || errno == ENOTDIR ? PCW_E_PERMISSION : PCW_E_IO;
    struct stat st;
    int rc = PCW_OK;
    if (fstat(dfd, &st) != 0)
        rc = PCW_E_IO;
    else if (pcw__dir_check(&st, uid, dir, NULL, 0) != PCW_OK)
        rc = PCW_E_PERMISSION; /* not ours, or others may plant files */
    else if (group && (st.st_mode & 0050) != 0050 && fchmod(dfd, 0750) != 0)
        rc = PCW_E_IO;
    close(dfd);
    return rc;
}

/* Grow the mapped file so that [0, need) is backed. prov->lock held. */
static inline int pcw__grow(pcw_provider *p, uint64_t need)
{
    if (need <= p->reserved)
        return PCW_OK;
    if (need <= p->mapped) {
        /* The tail was given back (pcw__trim): reserve it again. */
        int e = posix_fallocate(p->fd, (off_t)p->reserved, (off_t)(p->mapped - p->reserved));
        if (e != 0) {
            errno = e;
            return e == ENOSPC ? PCW_E_NO_MEMORY : PCW_E_IO;
        }
        p->reserved = p->mapped;
        return PCW_OK;
    }
    if (need > p->max_size)
        return PCW_E_SEGMENT_FULL;
    /* A quarter of the current size (at least 1 MiB, at most 256 MiB): few
     * growths, and reserved but unused memory stays under a quarter of what
     * is in use (doubling reserved up to twice the segment). */
    uint64_t step = p->mapped / 4 < PCW__MIN_GROW ? PCW__MIN_GROW : p->mapped / 4;
    if (step > PCW__MAX_GROW)
        step = PCW__MAX_GROW;
    uint64_t size = pcw__align(need > p->mapped + step ? need : p->mapped + step, 4096);
    if (size > p->max_size)
        size = p->max_size;
    /* Reserve the pages now: tmpfs would otherwise SIGBUS on a later store
     * when it is full. */
    int e = posix_fallocate(p->fd, (off_t)p->reserved, (off_t)(size - p->reserved));
    if (e != 0) {
        errno = e;
        return e == ENOSPC ? PCW_E_NO_MEMORY : PCW_E_IO;
    }
    void *m = mmap(p->base + p->mapped, size - p->mapped, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED, p->fd, (off_t)p->mapped);
    if (m == MAP_FAILED)
        return PCW_E_IO;
    p->mapped = p->reserved = size;
    return PCW_OK;
}

/* Give back the reserved pages past the arena's end (after a mass close:
 * the growth step reserved up to a quarter more than is in use). The next
 * growth reserves them again. prov->lock held. */
static inline void pcw__trim(pcw_provider *p)
{
    uint64_t lo = pcw__align(p->used, 4096);
    if (lo < p->reserved && fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
                                      (off_t)(p->reserved - lo)) == 0)
        p->reserved = lo;
}

/* Bump-allocate `n` bytes of zeroed arena aligned to `align` (a power of
 * two). Returns the offset or 0 (and *rc). prov->lock held. */
static inline uint64_t pcw__arena_alloc_aligned(pcw_provider *p, uint64_t n, uint64_t align,
                                                int *rc)
{
    uint64_t off = pcw__align(p->used, align);
    if (n > p->max_size || off + n > p->max_size) {
        *rc = PCW_E_SEGMENT_FULL;
        return 0;
    }
    *rc = pcw__grow(p, off + n);
    if (*rc != PCW_OK)
        return 0;
    p->used = off + n;
    /* Release: consumers that acquire header.size see the bytes below it
     * initialised (the file's fresh pages are zeros). Pairs with the
     * consumer's acquire load of header.size. */
    __atomic_store_n(&p->hdr->size, p->used, __ATOMIC_RELEASE);
    return off;
}

/* Structures: 64-byte (cache-line) aligned. */
static inline uint64_t pcw__arena_alloc(pcw_provider *p, uint64_t n, int *rc)
{
    return pcw__arena_alloc_aligned(p, n, PCW_SEG_ALIGN, rc);
}

/* Copy a string into the arena; returns its pcw_seg_str (len 0 for NULL). */
static inline int pcw__arena_str(pcw_provider *p, const char *s, pcw_seg_str *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !*s)
        return PCW_OK;
    size_t n = strlen(s);
    int rc;
    uint64_t off = pcw__arena_alloc(p, n + 1, &rc);
    if (!off)
        return rc;
    memcpy(p->base + off, s, n + 1);
    out->off = off;
    out->len = (uint32_t)n;
    return PCW_OK;
}

static inline void pcw__bump_generation(pcw_provider *p)
{
    /* Release: a consumer that sees the new generation (acquire) and then
     * rescans sees the change that caused it. */
    __atomic_fetch_add(&p->hdr->generation, 1, __ATOMIC_RELEASE);
}

/* ---- provider ----------------------------------------------------------- */

static inline int pcw_provider_open(pcw_provider **out, const pcw_provider_options *opt)
{
    pcw_provider_options o = {0};
    if (opt)
        o = *opt;
    if (!out)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    const char *root = pcw__root(o.dir);
    uint64_t max = o.max_size ? pcw__align(o.max_size, 4096) : PCW__DEFAULT_MAX_SIZE;
    if (max < PCW__MIN_GROW)
        max = PCW__MIN_GROW;

    pcw_provider *p = (pcw_provider *)calloc(1, sizeof *p);
    if (!p)
        return PCW_E_NO_MEMORY;
    p->fd = -1;
    p->max_size = max;
    p->opt = o;
    p->opt.name = p->opt.dir = NULL;
    CDS_INIT_LIST_HEAD(&p->regs);
    pthread_mutex_init(&p->lock, NULL);

    char dir[PATH_MAX], tmp[PATH_MAX];
    int named = 0; /* the dot-name exists (and is ours to remove on failure) */
    int rc = pcw__provider_dir(dir, sizeof dir, root, o.share_with_group);
    if (rc != PCW_OK)
        goto fail;
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        nonce = (uint64_t)(uintptr_t)p ^ (uint64_t)getpid() << 32;
    char seg_name[64], tmp_name[64];
    pcw__file_name(seg_name, sizeof seg_name, getpid(), nonce, PCW_SEG_SUFFIX);
    pcw__file_name(tmp_name, sizeof tmp_name, getpid(), nonce, PCW__TMP_SUFFIX);
    if ((size_t)snprintf(p->path, sizeof p->path, "%s/%s", dir, seg_name) >= sizeof p->path ||
        (size_t)snprintf(tmp, sizeof tmp, "%s/%s", dir, tmp_name) >= sizeof tmp) {
        rc = PCW_E_INVALID_PARAMETER; /* root directory path too long */
        goto fail;
    }
    /* The segment is made as an unnamed file in the folder (O_TMPFILE) and
     * linked into place once complete and locked: a provider killed before
     * that leaves nothing behind. Where the file system (or a missing
     * /proc) does not allow that: under its dot-name, renamed into place. */
    mode_t mode = o.share_with_group ? 0640 : 0600;
    p->fd = access("/proc/self/fd", X_OK) == 0
                ? open(dir, O_TMPFILE | O_RDWR | O_NOFOLLOW | O_CLOEXEC, mode)
                : -1;
    if (p->fd < 0) {
        p->fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        named = p->fd >= 0;
    }
    if (p->fd < 0) {
        rc = PCW_E_IO;
        goto fail;
    }
    /* The liveness lock (pcw/naming.h), before the file has a byte: held
     * until p->fd closes, it tells consumers in any pid namespace that
     * this provider lives. */
    if (pcw__live_lock(p->fd) != 0) {
        rc = PCW_E_IO;
        goto fail;
    }
    if (o.share_with_group) {
        if ((o.group && fchown(p->fd, (uid_t)-1, o.group) != 0) || fchmod(p->fd, mode) != 0) {
            rc = PCW_E_PERMISSION;
            goto fail;
        }
    }
    /* Reserve the whole range once, so the provider's block pointers stay
     * valid as the file grows into it. */
    void *r = mmap(NULL, max, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        rc = PCW_E_NO_MEMORY;
        goto fail;
    }
    p->base = (unsigned char *)r;
    rc = pcw__grow(p, PCW__MIN_GROW);
    if (rc != PCW_OK)
        goto fail;
    pcw_seg_header *h = (pcw_seg_header *)p->base;
    p->hdr = h;
    h->magic = PCW_SEG_MAGIC;
    h->layout_version = PCW_SEG_LAYOUT_VERSION;
    h->byte_order = PCW_SEG_BYTE_ORDER;
    h->header_size = sizeof(pcw_seg_header);
    h->cset_size = sizeof(pcw_seg_cset);
    h->counter_size = sizeof(pcw_seg_counter);
    h->chunk_size = sizeof(pcw_seg_chunk);
    h->provider_id = nonce;
    h->flags =
        (o.share_with_group ? PCW_SEG_F_GROUP : 0) | (o.control_callback ? PCW_SEG_F_CONTROL : 0);
    h->pid = (int32_t)getpid();
    h->uid = (uint32_t)geteuid();
    h->start_time = pcw__proc_start_time(getpid());
    h->arena_off = pcw__align(sizeof *h, PCW_SEG_ALIGN);
    h->max_size = max;
    const char *pname = o.name;
    if (!pname)
        pname = program_invocation_short_name;
    if (pname)
        snprintf(h->provider_name, sizeof h->provider_name, "%s", pname);
    p->used = h->arena_off;
    __atomic_store_n(&h->size, p->used, __ATOMIC_RELAXED);
    __atomic_store_n(&h->state, PCW_SEG_STATE_LIVE, __ATOMIC_RELAXED);
    /* The link (or rename) publishes a fully initialised, locked segment:
     * a consumer can only open the file by its final name. */
    if (named) {
        if (rename(tmp, p->path) != 0) {
            rc = PCW_E_IO;
            goto fail;
        }
        named = 0;
    } else {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", p->fd);
        if (linkat(AT_FDCWD, self, AT_FDCWD, p->path, AT_SYMLINK_FOLLOW) != 0) {
            rc = PCW_E_IO;
            goto fail;
        }
    }
    rc = pcw__control_start(p);
    if (rc != PCW_OK) {
        unlink(p->path);
        goto fail;
    }
    *out = p;
    return PCW_OK;
fail:
    if (named)
        unlink(tmp);
    if (p->base)
        munmap(p->base, p->max_size);
    if (p->fd >= 0)
        close(p->fd);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return rc;
}

static inline const char *pcw_provider_path(const pcw_provider *p)
{
    return p->path;
}

static inline const char *pcw_provider_open_error(int rc, const pcw_provider_options *opt,
                                                  char *buf, size_t len)
{
    int e = errno;
    if (!buf || !len)
        return "";
    if (rc == PCW_E_PERMISSION) {
        char name[32], dir[PATH_MAX];
        int n = snprintf(dir, sizeof dir, "%s/", pcw__root(opt ? opt->dir : NULL));
        if (n > 0 && (size_t)n < sizeof dir && pcw__dir_name(name, sizeof name, geteuid()) == 0 &&
            (size_t)n + strlen(name) < sizeof dir) {
            strcat(dir, name);
            int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            struct stat st;
            if (dfd < 0 && errno != ENOENT) {
                pcw__dir_open_why(errno, dir, buf, len);
                return buf;
            }
            int bad = dfd >= 0 && fstat(dfd, &st) == 0 &&
                      pcw__dir_check(&st, geteuid(), dir, buf, len) != PCW_OK;
            if (dfd >= 0)
                close(dfd);
            if (bad)
                return buf;
        }
        if (opt && opt->share_with_group) {
            pcw__num g = pcw__u(opt->group ? opt->group : getegid(), 0);
            pcw__say(buf, len, "permission denied: the segment could not be given to group ", g.s,
                     " (a process may give its files only to groups it is in): choose one "
                     "of yours",
                     (char *)NULL);
            return buf;
        }
    }
    pcw__say(buf, len, pcw_status_str(rc), rc == PCW_E_IO ? ": " : "",
             rc == PCW_E_IO ? strerror(e) : "", (char *)NULL);
    return buf;
}

/* ---- registration ------------------------------------------------------- */

static inline int pcw__valid_string(const char *s, int required)
{
    if (!s)
        return !required;
    size_t n = strnlen(s, PCW_MAX_STRING_BYTES + 1);
    if (n > PCW_MAX_STRING_BYTES || (required && n == 0))
        return 0;
    return pcw_utf8_count(s, n) >= 0;
}

static inline const pcw_counter_desc *pcw__find_counter(const pcw_registration_info *in,
                                                        uint32_t id)
{
    for (uint32_t i = 0; i < in->counter_count; i++)
        if (in->counters[i].id == id)
            return &in->counters[i];
    return NULL;
}

/* Validate `in` as PcwRegister does, and derive the block layout. */
static inline int pcw__validate_registration(const pcw_registration_info *in, uint32_t *nblocks,
                                             uint32_t *need)
{
    if (in->version != PCW_VERSION_1 || (in->flags & ~(uint32_t)PCW_REG_FLAGS_ALL_))
        return PCW_E_INVALID_PARAMETER;
    if (!pcw__valid_string(in->name, 1) || !pcw__valid_string(in->description, 0) ||
        !pcw__valid_string(in->guid, 0) || !pcw__valid_string(in->uri, 0) ||
        !pcw__valid_string(in->symbol, 0) || !pcw__valid_string(in->provider_name, 0) ||
        !pcw__valid_string(in->provider_guid, 0) || !pcw__valid_string(in->provider_type, 0) ||
        !pcw__valid_string(in->provider_callback, 0) ||
        !pcw__valid_string(in->application_identity, 0))
        return PCW_E_INVALID_PARAMETER;
    if (in->instance_type > PCW_INSTANCE_TYPE_MAX_)
        return PCW_E_INVALID_PARAMETER;
    if (in->counter_count > PCW_MAX_COUNTERS)
        return PCW_E_TOO_MANY_COUNTERS;
    if (in->counter_count == 0 || !in->counters)
        return PCW_E_INVALID_PARAMETER;
    uint32_t blocks = in->block_count;
    if (blocks > PCW_MAX_BLOCKS || (in->block_sizes && blocks == 0))
        return PCW_E_INVALID_PARAMETER;
    uint32_t maxblock = 0;
    for (uint32_t i = 0; i < in->counter_count; i++)
        if (in->counters[i].block + 1 > maxblock)
            maxblock = in->counters[i].block + 1;
    if (maxblock > PCW_MAX_BLOCKS)
        return PCW_E_INVALID_PARAMETER;
    if (blocks == 0)
        blocks = maxblock;
    else if (maxblock > blocks)
        return PCW_E_INVALID_PARAMETER;
    for (uint32_t b = 0; b < blocks; b++)
        need[b] = 0;
    for (uint32_t i = 0; i < in->counter_count; i++) {
        const pcw_counter_desc *c = &in->counters[i];
        if (c->size != 4 && c->size != 8)
            return PCW_E_INVALID_PARAMETER;
        if (c->offset % c->size != 0 || c->offset > PCW_MAX_BLOCK_SIZE - c->size)
            return PCW_E_INVALID_PARAMETER;
        if (!pcw_counter_type_known(c->type) || c->aggregate > PCW_AGGREGATE_MAX_ ||
            (c->attributes & ~(uint32_t)PCW_ATTR_ALL_) || c->default_scale < -10 ||
            c->default_scale > 10 || c->id >= PCW_NO_COUNTER)
            return PCW_E_INVALID_PARAMETER;
        if (c->detail_level != 0 && c->detail_level != PCW_DETAIL_NOVICE &&
            c->detail_level != PCW_DETAIL_ADVANCED && c->detail_level != PCW_DETAIL_EXPERT &&
            c->detail_level != PCW_DETAIL_WIZARD)
            return PCW_E_INVALID_PARAMETER;
        if (!pcw__valid_string(c->name, 1) || !pcw__valid_string(c->description, 0) ||
            !pcw__valid_string(c->uri, 0) || !pcw__valid_string(c->symbol, 0))
            return PCW_E_INVALID_PARAMETER;
        const uint32_t refs[4] = {c->base_id, c->perf_time_id, c->perf_freq_id, c->multi_id};
        for (int k = 0; k < 4; k++)
            if (refs[k] != PCW_NO_COUNTER && !pcw__find_counter(in, refs[k]))
                return PCW_E_INVALID_PARAMETER;
        for (uint32_t j = 0; j < i; j++) {
            const pcw_counter_desc *d = &in->counters[j];
            if (d->id == c->id ||
                pcw_name_equal(d->name, strlen(d->name), c->name, strlen(c->name)))
                return PCW_E_INVALID_PARAMETER;
        }
        if (c->offset + c->size > need[c->block])
            need[c->block] = c->offset + c->size;
    }
    if (in->block_sizes)
        for (uint32_t b = 0; b < blocks; b++)
            if (in->block_sizes[b] < need[b] || in->block_sizes[b] > PCW_MAX_BLOCK_SIZE)
                return PCW_E_INVALID_PARAMETER;
    *nblocks = blocks;
    return PCW_OK;
}

static inline void pcw__free_registration(pcw_registration *r)
{
    if (r->names)
        cds_lfht_destroy(r->names, NULL);
    free(r->block_off);
    free(r->counters);
    free(r->free_slots.v);
    free(r->limbo.v);
    free(r->chunks);
    pthread_cond_destroy(&r->reclaimed);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static inline int pcw_register(pcw_registration **out, pcw_provider *p,
                               const pcw_registration_info *in)
{
    if (!out || !p || !in)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    uint32_t need[PCW_MAX_BLOCKS], nblocks = 0;
    int rc = pcw__validate_registration(in, &nblocks, need);
    if (rc != PCW_OK)
        return rc;
    /* A callback counterset is served through the control channel: have it
     * listening before consumers can see the counterset. */
    if (in->callback && (rc = pcw__control_ensure(p)) != PCW_OK)
        return rc;

    pcw_registration *r = (pcw_registration *)calloc(1, sizeof *r);
    if (!r)
        return PCW_E_NO_MEMORY;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->reclaimed, NULL);
    r->prov = p;
    r->instance_type = in->instance_type;
    r->flags = in->flags;
    r->counter_count = in->counter_count;
    r->block_count = nblocks;
    r->callback = in->callback;
    r->callback_context = in->callback_context;
    r->block_off = (uint32_t *)calloc(3 * (size_t)(nblocks ? nblocks : 1), sizeof(uint32_t));
    r->counters = (pcw_counter_desc *)calloc(in->counter_count, sizeof *r->counters);
    r->names = cds_lfht_new_flavor(64, 64, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                                   &urcu_bp_flavor, NULL);
    if (!r->block_off || !r->counters || !r->names) {
        pcw__free_registration(r);
        return PCW_E_NO_MEMORY;
    }
    r->block_size = r->block_off + nblocks;
    r->block_need = r->block_size + nblocks;
    uint32_t data = 0;
    for (uint32_t b = 0; b < nblocks; b++) {
        uint32_t sz = in->block_sizes ? in->block_sizes[b] : need[b];
        r->block_off[b] = data;
        r->block_size[b] = sz;
        r->block_need[b] = need[b];
        data += (uint32_t)pcw__align(sz, 8);
    }
    uint32_t cset_flags = (in->flags & PCW_REG_SEQCOUNT ? PCW_CSET_F_SEQCOUNT : 0) |
                          (in->flags & PCW_REG_CACHELINE ? PCW_CSET_F_CACHELINE : 0) |
                          (in->callback ? PCW_CSET_F_CALLBACK : 0);
    r->data_size = data;
    r->row_data = pcw_seg_row_data(cset_flags);
    r->data_stride = (uint32_t)pcw_seg_row_stride(cset_flags, data);
    for (uint32_t i = 0; i < in->counter_count; i++) {
        r->counters[i] = in->counters[i];
        r->counters[i].name = r->counters[i].description = NULL;
        r->counters[i].uri = r->counters[i].symbol = NULL;
    }

    pthread_mutex_lock(&p->lock);
    uint64_t off = pcw__arena_alloc(p, sizeof(pcw_seg_cset), &rc);
    uint64_t coff = off ? pcw__arena_alloc(p, sizeof(pcw_seg_counter) * in->counter_count, &rc) : 0;
    uint64_t boff = coff ? pcw__arena_alloc(p, 8 * (uint64_t)(nblocks ? nblocks : 1), &rc) : 0;
    if (boff) {
        pcw_seg_cset *cs = (pcw_seg_cset *)(p->base + off);
        /* Strings first (each may grow the arena; pointers into it stay
         * valid because the mapping never moves). */
        rc = pcw__arena_str(p, in->name, &cs->name);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->description, &cs->description);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->guid, &cs->guid);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->uri, &cs->uri);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->symbol, &cs->symbol);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_name, &cs->provider_name);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_guid, &cs->provider_guid);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_type, &cs->provider_type);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_callback, &cs->provider_callback);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->application_identity, &cs->application_identity);
        pcw_seg_counter *sc = (pcw_seg_counter *)(p->base + coff);
        for (uint32_t i = 0; rc == PCW_OK && i < in->counter_count; i++) {
            const pcw_counter_desc *c = &in->counters[i];
            sc[i].id = c->id, sc[i].type = c->type, sc[i].block = c->block;
            sc[i].offset = c->offset, sc[i].size = c->size, sc[i].base_id = c->base_id;
            sc[i].perf_time_id = c->perf_time_id, sc[i].perf_freq_id = c->perf_freq_id;
            sc[i].multi_id = c->multi_id, sc[i].default_scale = c->default_scale;
            sc[i].detail_level = c->detail_level ? c->detail_level : PCW_DETAIL_STANDARD;
            sc[i].aggregate = c->aggregate, sc[i].attributes = c->attributes;
            rc = pcw__arena_str(p, c->name, &sc[i].name);
            if (rc == PCW_OK)
                rc = pcw__arena_str(p, c->description, &sc[i].description);
            if (rc == PCW_OK)
                rc = pcw__arena_str(p, c->uri, &sc[i].uri);
            if (rc == PCW_OK)
                rc = pcw__arena_str(p, c->symbol, &sc[i].symbol);
        }
        if (rc == PCW_OK) {
            uint32_t *bl = (uint32_t *)(p->base + boff);
            for (uint32_t b = 0; b < nblocks; b++)
                bl[2 * b] = r->block_off[b], bl[2 * b + 1] = r->block_size[b];
            cs->flags = cset_flags;
            cs->instance_type = in->instance_type;
            cs->counter_count = in->counter_count;
            cs->counters_off = coff;
            cs->block_count = nblocks;
            cs->data_size = r->data_size;
            cs->blocks_off = boff;
            cs->data_stride = r->data_stride;
            cs->reg_index = p->nregs++;
            __atomic_store_n(&cs->state, PCW_CSET_LIVE, __ATOMIC_RELAXED);
            /* Publish: the release makes every field above visible to a
             * consumer that acquires the link (header.cset_head or the
             * previous counterset's next). */
            if (p->last_cset)
                __atomic_store_n(&((pcw_seg_cset *)(p->base + p->last_cset))->next, off,
                                 __ATOMIC_RELEASE);
            else
                __atomic_store_n(&p->hdr->cset_head, off, __ATOMIC_RELEASE);
            p->last_cset = off;
            r->cset = cs;
            r->cset_off = off;
            pcw__list_add_tail_rcu(&r->node, &p->regs);
            pcw__bump_generation(p);
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (rc != PCW_OK) {
        /* Arena bytes taken by a failed registration stay unused: they are
         * unreachable from the header, so consumers never see them. */
        pcw__free_registration(r);
        return rc;
    }
    *out = r;
    return PCW_OK;
}

/* ---- instances ---------------------------------------------------------- */

static inline int pcw__name_match(struct cds_lfht_node *node, const void *key)
{
    const pcw_instance *a = caa_container_of(node, pcw_instance, node);
    const pcw_instance *b = (const pcw_instance *)key;
    return pcw_name_equal(a->name, a->name_len, b->name, b->name_len);
}

/* Add a chunk of slots to r. r->lock held (takes prov->lock inside). */
static inline int pcw__add_chunk(pcw_registration *r)
{
    pcw_provider *p = r->prov;
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
    uint64_t off = pcw__arena_alloc(p, pcw_seg_chunk_bytes(n, r->data_stride), &rc);
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
    c->live = (uint64_t *)(p->base + off + pcw_seg_chunk_live());
    c->gens = (uint64_t *)(p->base + off + pcw_seg_chunk_gens(n));
    c->names = (uint64_t *)(p->base + off + pcw_seg_chunk_names(n));
    c->rows = p->base + off + pcw_seg_chunk_rows(n);
    /* Lowest ids first: push in reverse so pops come out ascending. */
    for (uint32_t i = n; i-- > 0;)
        r->free_slots.v[r->free_slots.n++] = (uint64_t)r->slot_count + i;
    r->slot_count += n;
    return PCW_OK;
}

/* The chunk holding slot idx. Chunks double in size, so this is a short
 * scan from the end. r->lock held. */
static inline pcw__chunk *pcw__chunk_of(pcw_registration *r, uint32_t idx)
{
    for (size_t i = r->nchunks; i-- > 0;)
        if (idx >= r->chunks[i].first)
            return &r->chunks[i];
    return NULL;
}

/* Name storage: 16-byte size classes, reused after a grace period. */
static inline uint64_t pcw__name_alloc(pcw_provider *p, uint32_t len, int *rc)
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
static inline void pcw__store_name(unsigned char *dst, const char *src, uint32_t len)
{
    for (uint32_t i = 0; i < len; i += 8) {
        uint64_t w = 0;
        memcpy(&w, src + i, len - i < 8 ? len - i : 8);
        __atomic_store_n((uint64_t *)(void *)(dst + i), w, __ATOMIC_RELAXED);
    }
}

/* The pages of chunk c's arrays, past its header's page, page-aligned:
 * [*lo, *hi) in the segment. 0 if there is no whole page to give back. */
static inline int pcw__chunk_pages(const pcw_registration *r, const pcw__chunk *c, uint64_t *lo,
                                   uint64_t *hi)
{
    uint64_t off = (uint64_t)((unsigned char *)c->hdr - r->prov->base);
    *lo = pcw__align(off + sizeof(pcw_seg_chunk), 4096);
    *hi = (off + pcw_seg_chunk_bytes(c->n, r->data_stride)) & ~4095ull;
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
static inline void pcw__punch(pcw_registration *r, pcw__chunk *c)
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
static inline int pcw__unpunch(pcw_registration *r, pcw__chunk *c)
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
static inline void pcw__reclaim(pcw_registration *r, pcw__vec *batch)
{
    pcw_provider *p = r->prov;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < batch->n; i++) {
        pcw_instance *in = (pcw_instance *)(uintptr_t)batch->v[i];
        /* On failure the name block is leaked, never reused wrongly. */
        if (in->name_len)
            pcw__vec_push(&p->name_free[(in->name_len + 15) / 16], in->name_off);
    }
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < batch->n; i++) {
        pcw_instance *in = (pcw_instance *)(uintptr_t)batch->v[i];
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
static inline int pcw__check_instance_name(const pcw_registration *r, const char *name, size_t *len)
{
    *len = strnlen(name, PCW_MAX_INSTANCE_NAME_BYTES + 1);
    long chars = *len > PCW_MAX_INSTANCE_NAME_BYTES ? -2 : pcw_utf8_count(name, *len);
    if (chars == -2 || chars > (long)PCW_MAX_INSTANCE_NAME_CHARS)
        return PCW_E_NAME_TOO_LONG;
    if (chars < 0)
        return PCW_E_INVALID_NAME;
    int multi = pcw_instance_type_is_multi(r->instance_type);
    if (multi ? *len == 0 : *len != 0)
        return PCW_E_INVALID_NAME;
    return PCW_OK;
}

static inline int pcw_create_instance(pcw_instance **out, pcw_registration *r, const char *name,
                                      uint32_t count, const pcw_data *data)
{
    if (!out || !r || !name)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    if (count != r->block_count || (count && !data))
        return PCW_E_INVALID_COUNT;
    for (uint32_t b = 0; b < count; b++) {
        if (data[b].size < r->block_need[b])
            return PCW_E_BUFFER_TOO_SMALL;
        if (data[b].size > r->block_size[b])
            return PCW_E_INTEGER_OVERFLOW;
    }
    size_t len;
    int rc = pcw__check_instance_name(r, name, &len);
    if (rc != PCW_OK)
        return rc;

    pcw_instance *in = (pcw_instance *)calloc(1, sizeof *in + len + 1);
    if (!in)
        return PCW_E_NO_MEMORY;
    memcpy(in->name, name, len + 1);
    in->name_len = (uint32_t)len;
    in->reg = r;
    cds_lfht_node_init(&in->node);
    unsigned long hash = (unsigned long)pcw_name_hash(name, len);

    /* Claim the name first: a duplicate fails before anything is touched. */
    urcu_bp_read_lock();
    struct cds_lfht_node *dup = cds_lfht_add_unique(r->names, hash, pcw__name_match, in, &in->node);
    urcu_bp_read_unlock();
    if (dup != &in->node) {
        free(in);
        return PCW_E_DUPLICATE_NAME;
    }

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
    uint32_t idx = 0;
    pcw__chunk *ch = NULL;
    uint64_t gen_floor = 0;
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
        for (uint32_t k = 0; k < full; k += 8) {
            uint64_t w = 0;
            if (data[b].data && k < data[b].size)
                memcpy(&w, (const unsigned char *)data[b].data + k,
                       data[b].size - k < 8 ? data[b].size - k : 8);
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
    *out = in;
    return PCW_OK;

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
    /* Nobody but lookups in the table can hold `in`; let them finish. */
    urcu_bp_synchronize_rcu();
    free(in);
    return rc;
}

static inline void pcw_close_instance(pcw_instance *in)
{
    if (!in)
        return;
    pcw_registration *r = in->reg;
    urcu_bp_read_lock();
    cds_lfht_del(r->names, &in->node);
    urcu_bp_read_unlock();
    /* Unpublish: the live bit goes, gen becomes even (free) and one
     * higher. C1: the chunk's close counter, a release RMW, pairs with the
     * reader's acquire load of it (R0 in read.c): a reader that sees this
     * close's count sees the bit clear and the new gen too. C2 pairs with
     * the reader's fence (R3 / R2 in read.c): once the slot is refilled, a
     * reader that saw any of the new bytes sees this close counted (R4) or
     * the slot's new gen. It is seq_cst, not just release, as R3 and R2
     * are: a counter of the next occupant may be stored by an application
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

static inline void *pcw_instance_block(const pcw_instance *in, uint32_t block)
{
    if (!in || block >= in->reg->block_count)
        return NULL;
    return in->data + in->reg->block_off[block];
}

static inline uint32_t pcw_instance_id(const pcw_instance *in)
{
    return in->id;
}

static inline void pcw_instance_write_begin(pcw_instance *in)
{
    if (!in->seq)
        return; /* registered without PCW_REG_SEQCOUNT */
    uint64_t q = __atomic_load_n(in->seq, __ATOMIC_RELAXED);
    __atomic_store_n(in->seq, q + 1, __ATOMIC_RELAXED);
    /* Pairs with the reader's acquire fence before it re-reads seq: a
     * reader that saw any update below sees seq odd or changed. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void pcw_instance_write_end(pcw_instance *in)
{
    if (!in->seq)
        return;
    uint64_t q = __atomic_load_n(in->seq, __ATOMIC_RELAXED);
    /* Release pairs with the reader's acquire load of seq: a reader that
     * sees the even value sees every update above. */
    __atomic_store_n(in->seq, q + 1, __ATOMIC_RELEASE);
}

/* ---- teardown ----------------------------------------------------------- */

static inline void pcw_unregister(pcw_registration *r)
{
    if (!r)
        return;
    pcw_provider *p = r->prov;
    struct cds_lfht_iter it;
    struct cds_lfht_node *node;
    urcu_bp_read_lock();
    cds_lfht_first(r->names, &it);
    while ((node = cds_lfht_iter_get_node(&it)) != NULL) {
        cds_lfht_next(r->names, &it);
        pcw_instance *in = caa_container_of(node, pcw_instance, node);
        urcu_bp_read_unlock();
        pcw_close_instance(in);
        urcu_bp_read_lock();
    }
    urcu_bp_read_unlock();
    /* Reuse nothing any more, but free the closed instances after the
     * grace period that makes them unreachable. */
    pthread_mutex_lock(&r->lock);
    pcw__vec batch = r->limbo;
    memset(&r->limbo, 0, sizeof r->limbo);
    pthread_mutex_unlock(&r->lock);
    urcu_bp_synchronize_rcu();
    pcw__reclaim(r, &batch);
    pthread_mutex_lock(&p->lock);
    /* The counterset's segment memory stays (consumers may be reading it);
     * marking it dead hides it. */
    __atomic_store_n(&r->cset->state, PCW_CSET_DEAD, __ATOMIC_RELEASE);
    pcw__list_del_rcu(&r->node);
    pcw__bump_generation(p);
    pthread_mutex_unlock(&p->lock);
    /* Control-channel threads may still be walking past r. */
    urcu_bp_synchronize_rcu();
    PCW__TSAN_GRACE_PERIOD(&p->regs); /* after every walk that could see r */
    /* ...or running its callback, which they found before the grace period. */
    pcw__control_forget(r);
    pcw__free_registration(r);
}

static inline void pcw_provider_close(pcw_provider *p)
{
    if (!p)
        return;
    pcw__control_stop(p);
    while (!cds_list_empty(&p->regs))
        pcw_unregister(cds_list_entry(p->regs.next, pcw_registration, node));
    __atomic_store_n(&p->hdr->state, PCW_SEG_STATE_CLOSED, __ATOMIC_RELEASE);
    unlink(p->path);
    munmap(p->base, p->max_size);
    close(p->fd);
    for (size_t i = 0; i < PCW__NAME_CLASSES; i++)
        free(p->name_free[i].v);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

#ifdef __cplusplus
}
#endif

#include "callback.h"

#endif /* PCW_PROVIDER_H */
