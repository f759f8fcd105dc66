/* SPDX-License-Identifier: MIT */
/*
 * pcw/consumer.h - libpcw, the consumer library: discover providers, read
 * their countersets and instances. Link with `pkg-config --libs pcw`.
 *
 * Two levels:
 *   - pcw_segment: one provider's segment, mapped read-only. Treated as
 *     hostile input: every offset, size and count is checked, loops are
 *     bounded, and a segment that shrinks under the reader yields
 *     PCW_E_TRUNCATED instead of SIGBUS.
 *   - pcw_consumer: every provider in a directory, with countersets of the
 *     same name merged across providers (as PCW merges registrations).
 *
 * Reads never lock and never write to a segment: a provider is never slowed
 * or blocked by a consumer. Values are read with the slot-generation
 * protocol of pcw/layout.h, so a value is never torn, never half-made and
 * never attributed to the wrong instance.
 *
 * Concurrency: a pcw_segment or pcw_consumer (and what it returns) belongs
 * to one thread at a time; distinct objects may be used from distinct
 * threads at once. Snapshots are caller-owned and reusable: once they have
 * grown to fit, reading allocates nothing.
 *
 * NULL arguments: a function given NULL for a pointer it needs returns
 * PCW_E_INVALID_PARAMETER (if it returns a status), NULL, 0 or "" (a
 * getter: "none"), or does nothing (close, free, clear); it never crashes.
 * Pointers documented as optional ("may be NULL") are just that.
 * tests/test_null_args.c calls every function so.
 *
 * SIGBUS: the first pcw_segment_open installs a SIGBUS handler (SA_SIGINFO,
 * SA_NODEFER, SA_ONSTACK) that turns a fault inside a read of a mapped
 * segment into PCW_E_TRUNCATED and passes every other SIGBUS to the handler
 * that was installed before it.
 */
#ifndef PCW_CONSUMER_H
#define PCW_CONSUMER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pcw_segment pcw_segment;
typedef struct pcw_consumer pcw_consumer;

/* A counter's metadata (a validated private copy of the segment's). */
typedef struct pcw_counter {
    uint32_t id, type, block, offset, size;
    uint32_t base_id, perf_time_id, perf_freq_id, multi_id;
    int32_t default_scale;
    uint32_t detail_level, aggregate, attributes;
    uint32_t data_offset; /* byte offset in a snapshot row: block + offset */
    uint32_t histogram;   /* PERF_PCW_HISTOGRAM: its shape (pcw/histogram.h),
                             checked valid and matching size; else 0 */
    uint32_t reserved0;
    const char *name, *description, *uri, *symbol; /* "" when absent */
} pcw_counter;

/* A counterset's metadata. */
typedef struct pcw_counterset {
    const char *name, *description, *guid, *uri, *symbol;
    uint32_t instance_type; /* pcw_instance_type */
    uint32_t flags;         /* PCW_CSET_F_* (pcw/layout.h) */
    uint32_t counter_count;
    uint32_t block_count;
    uint32_t data_size; /* bytes of data per instance */
    uint32_t reg_index; /* registration number within its segment */
    const pcw_counter *counters;
    const uint32_t *block_offsets, *block_sizes; /* [block_count] */
    /* The manifest's <provider> as registered; "" when absent. */
    const char *provider_name, *provider_guid, *provider_type, *provider_callback,
        *application_identity;
} pcw_counterset;

/* What a segment's header says about its provider. */
typedef struct pcw_provider_info {
    const char *path; /* the segment file */
    const char *name; /* provider name */
    int32_t pid;
    uint32_t uid;
    uint64_t start_time;
    uint64_t provider_id; /* random per provider: its identity */
    uint32_t flags;       /* PCW_SEG_F_* */
} pcw_provider_info;

/* ---- segments ----------------------------------------------------------- */

/* Open and map a segment file read-only; validate its header and load its
 * countersets. Refuses a symlink (O_NOFOLLOW), a non-regular file, and a
 * header that claims another uid than the file's owner. (pcw_consumer's
 * discovery also requires the file to sit in a trusted provider folder of
 * that uid.) Errors: PCW_E_IO, PCW_E_PERMISSION, PCW_E_CORRUPT,
 * PCW_E_VERSION, PCW_E_TRUNCATED, PCW_E_NO_MEMORY. */
int pcw_segment_open(pcw_segment **out, const char *path);
void pcw_segment_close(pcw_segment *seg);

/* Catch up with the provider: remap if the segment grew, reload the
 * counterset list if it changed. Counterset pointers from before are
 * invalid after a refresh that returns PCW_OK with *changed = 1. */
int pcw_segment_refresh(pcw_segment *seg, int *changed);

const pcw_provider_info *pcw_segment_provider(const pcw_segment *seg);

/* PCW_OK while the provider lives; PCW_E_PROVIDER_EXITED once it closed
 * the segment or died: nobody holds the segment's liveness lock any more
 * (pcw/naming.h). Right in every pid namespace: the header's pid is the
 * provider's own namespace's and is not consulted. */
int pcw_segment_alive(const pcw_segment *seg);

/* Which container a provider runs in (docs/containers.md, "Identity"):
 * for segments found in another mount namespace (options' containers).
 * Strings are "" when not known; they were read from /proc at discovery
 * and are the kernel's, not the provider's, except where noted. */
typedef struct pcw_container_info {
    uint64_t mnt_ns;     /* inode number of its mount namespace */
    int32_t host_pid;    /* its pid in this consumer's pid namespace (found by
                            NSpid in /proc/<pid>/status); 0: not found */
    int32_t ns_pid;      /* its pid in its own pid namespace (the segment's) */
    const char *root;    /* "/proc/<pid>/root": the process it was reached by */
    const char *cgroup;  /* its cgroup (v2 path, or v1's first hierarchy's) */
    const char *runtime; /* "docker", "podman", "containerd", "cri-o", "" */
    const char *id;      /* the runtime's container id (hex), from the cgroup */
    const char *pod_uid; /* Kubernetes pod UID, from a kubepods cgroup */
    /* Kubernetes' names, from the CRI annotations of the config.json its
     * runtime (containerd, CRI-O) keeps on the host: written by the pod's
     * author, so escape them on output. */
    const char *pod;            /* io.kubernetes.pod.name */
    const char *pod_namespace;  /* io.kubernetes.pod.namespace ("namespace" is C++'s) */
    const char *container_name; /* io.kubernetes.container.name */
} pcw_container_info;

/* The container of a segment found in another mount namespace; NULL for
 * one in the consumer's own (or opened with pcw_segment_open), or NULL
 * seg. Valid as long as the segment. */
const pcw_container_info *pcw_segment_container(const pcw_segment *seg);

/* The segment's instance-list generation: changes whenever an instance or
 * counterset appears or disappears. One load; poll it. 0 on error. */
uint64_t pcw_segment_generation(pcw_segment *seg);

size_t pcw_segment_counterset_count(const pcw_segment *seg);
const pcw_counterset *pcw_segment_counterset(const pcw_segment *seg, size_t i);
/* Find a counterset by name (case-insensitive); NULL if none (or if seg
 * or name is NULL). */
const pcw_counterset *pcw_segment_find_counterset(const pcw_segment *seg, const char *name);

/* Why the calling thread's last libpcw call that met a malformed segment
 * returned PCW_E_CORRUPT: a sentence naming the structure and what is
 * wrong with it (for example "a counter array at offset 4416 overlaps
 * another structure"), or "" if none did. Also why a collection refused a
 * provider's control socket with PCW_E_PERMISSION (for example "control
 * socket served by pid 48230 (pid 1 in its own pid namespace), which does
 * not have the segment mapped for writing"). Read it right after the failing
 * call; later calls may replace it. Any thread. */
const char *pcw_error_detail(void);

/* Verify the whole segment's structure (every chunk, slot and name).
 * Returns PCW_OK or the first problem; `why` (may be NULL) receives a
 * sentence naming it. */
int pcw_segment_check(pcw_segment *seg, char *why, size_t why_len);

/* ---- snapshots ---------------------------------------------------------- */

/* Where a snapshot's rows came from: one entry per segment (or provider)
 * read into it, in row order. */
typedef struct pcw_snapshot_source {
    size_t first, count;   /* its rows: [first, first + count) */
    uint32_t source;       /* segment index in the pcw_consumer; 0 for a
                              pcw_segment_read */
    int32_t pid;           /* the provider's pid, in its own pid namespace */
    uint64_t provider_id;  /* the provider's identity (pcw_provider_info) */
    uint64_t time_ns;      /* CLOCK_MONOTONIC when this source was read */
    uint32_t registration; /* the pcw_counterset.reg_index read: with
                              `source`, which registration the rows are of
                              (a provider may register a name twice) */
} pcw_snapshot_source;

/* A caller-owned, reusable result: one row per instance, as columns.
 * Zero-initialise it (PCW_SNAPSHOT_INIT); free with pcw_snapshot_free. Once
 * grown to fit, reading into it again allocates nothing.
 *
 * Every field is read-only for callers; use the accessors below. Row i has
 * id ids[i] and data_size bytes of data at data + i * data_size (8-byte
 * aligned; counters at pcw_counter.data_offset), and, when read with names,
 * the NUL-terminated name names + name_off[i] of name_len[i] bytes. */
typedef struct pcw_snapshot {
    size_t count;        /* rows */
    uint32_t data_size;  /* bytes per row: the counterset's data_size */
    uint32_t busy;       /* instances left out: kept changing (seqcount) */
    uint32_t *ids;       /* [count] instance ids */
    unsigned char *data; /* [count * data_size] */
    uint64_t *name_off;  /* [count] into names; NULL: read without names */
    uint32_t *name_len;  /* [count] bytes, without the NUL */
    char *names;
    uint64_t time_ns; /* CLOCK_MONOTONIC at the read (its first source) */
    pcw_snapshot_source *sources;
    size_t nsources;
    /* libpcw's own: its buffers' capacities and what its last read knows
     * of the rows. Never read or write it (PCW_SNAPSHOT_INIT zeroes it,
     * pcw_snapshot_free frees what it holds). Its members' types are
     * those of the fields it replaced, so the struct's size, alignment
     * and offsets are PCW_2's on every ABI. */
    struct {
        size_t r0[5];
        void *r1[2];
        uint64_t r2;
        void *r3;
    } reserved;
} pcw_snapshot;
#ifdef __cplusplus /* {0} would be a -Wmissing-field-initializers warning */
#define PCW_SNAPSHOT_INIT                                                                          \
    {                                                                                              \
    }
#else
#define PCW_SNAPSHOT_INIT                                                                          \
    {                                                                                              \
        0                                                                                          \
    }
#endif

/* Free its buffers (it may be reused, as a PCW_SNAPSHOT_INIT one). NULL:
 * nothing. */
void pcw_snapshot_free(pcw_snapshot *snap);
/* Empty it, keeping its buffers. NULL: nothing. (A function since 0.3:
 * programs built before inlined it, which stays right, as the private
 * part's layout has not changed.) */
void pcw_snapshot_clear(pcw_snapshot *snap);

/* Row accessors. `row` must be below s->count: it is not checked (they
 * are the hot path of every reader). A NULL snapshot (or counter) gives
 * 0, NULL or "". */
static inline uint32_t pcw_snapshot_id(const pcw_snapshot *s, size_t row)
{
    return s ? s->ids[row] : 0;
}
/* The row's data (data_size bytes, 8-byte aligned). */
static inline const unsigned char *pcw_snapshot_row(const pcw_snapshot *s, size_t row)
{
    return s ? s->data + row * s->data_size : NULL;
}
/* A counter's value in a row (4-byte counters zero-extended). */
static inline uint64_t pcw_snapshot_value(const pcw_snapshot *s, size_t row, const pcw_counter *c)
{
    if (!s || !c)
        return 0;
    const unsigned char *p = s->data + row * s->data_size + c->data_offset;
    if (c->size == 8)
        return *(const uint64_t *)(const void *)p;
    return *(const uint32_t *)(const void *)p;
}
/* The row's instance name; "" when the snapshot was read without names. */
static inline const char *pcw_snapshot_name(const pcw_snapshot *s, size_t row)
{
    return s && s->name_off ? s->names + s->name_off[row] : "";
}
static inline uint32_t pcw_snapshot_name_len(const pcw_snapshot *s, size_t row)
{
    return s && s->name_len ? s->name_len[row] : 0;
}
/* The source a row came from (a binary search over snap->sources); NULL if
 * row is out of range. */
const pcw_snapshot_source *pcw_snapshot_source_of(const pcw_snapshot *s, size_t row);

/* Read flags. */
enum {
    PCW_READ_NO_NAMES = 1u << 0, /* skip instance names (faster) */
    PCW_READ_APPEND = 1u << 1,   /* add to the snapshot, don't clear it */
};

/* Read every live instance of `cs` into `snap` (one new source entry,
 * timestamped). Returns PCW_OK, PCW_E_TRUNCATED, PCW_E_CORRUPT (read nothing
 * trustworthy), or PCW_E_NO_MEMORY (growing the snapshot). An instance being
 * closed during the read is left out; one that kept changing under a
 * seqcount is left out and counted in snap->busy. A failed read leaves the
 * snapshot as it was. */
int pcw_segment_read(pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                     unsigned flags);

/* Read one instance by id into `snap` (appends one row). PCW_E_NOT_FOUND
 * if no live instance has that id. */
int pcw_segment_read_instance(pcw_segment *seg, const pcw_counterset *cs, uint32_t id,
                              pcw_snapshot *snap, unsigned flags);

/* ---- finding instances by name ----------------------------------------- */

/* A name -> id index over one snapshot (read with names), for consumers that
 * look instances up by name repeatedly. Build it again when
 * pcw_segment_generation() changes. Lookups are case-insensitive and
 * allocation-free. Belongs to one thread at a time. */
typedef struct pcw_name_index pcw_name_index;

/* Index the rows of `snap` (which must have been read with names). A row
 * whose name an earlier row holds (in any case) is not indexed: lookups
 * find the first. PCW_E_INTEGER_OVERFLOW if the names collide in the
 * index beyond its bound (docs/design.md's limits: names a segment made
 * to collide; never seen otherwise). */
int pcw_name_index_build(pcw_name_index **out, const pcw_snapshot *snap);
/* PCW_OK and *row = the row of `snap` holding the instance named `name`
 * (len bytes), or PCW_E_NOT_FOUND. */
int pcw_name_index_find(const pcw_name_index *ix, const char *name, size_t len, size_t *row);
void pcw_name_index_free(pcw_name_index *ix);

/* ---- all providers ------------------------------------------------------ */

typedef struct pcw_consumer_options { /* PCW__ZERO: pcw/types.h */
    const char *dir PCW__ZERO;        /* root directory; default $PCW_DIR, /dev/shm */
    int all_users PCW__ZERO;          /* 1: also scan other users' provider folders
                                         (needs their group opt-in, or root) */
    uint32_t timeout_ms PCW__ZERO;    /* callback countersets: default 1000 */
    /* 1: also find providers in other mount namespaces (containers), through
     * /proc/<pid>/root of their processes (docs/containers.md). Needs the
     * privilege to read other processes' roots (root, or CAP_SYS_PTRACE and
     * CAP_DAC_READ_SEARCH); without it a consumer finds what it could
     * reach before, and no more. */
    int containers PCW__ZERO;
    /* The root providers use inside each other namespace; default
     * PCW_DEFAULT_ROOT (/dev/shm): a container's $PCW_DIR cannot be known
     * from outside it. */
    const char *container_dir PCW__ZERO;
} pcw_consumer_options;

int pcw_consumer_open(pcw_consumer **out, const pcw_consumer_options *opt);

/* The root directory providers and consumers use: `dir` if set, else
 * $PCW_DIR if set, else /dev/shm (docs/design.md, "Choosing the root"). */
const char *pcw_root(const char *dir);
void pcw_consumer_close(pcw_consumer *c);

/* Rescan the directory: open new segments, drop removed ones, refresh the
 * rest, rebuild the merged counterset list. Segments that fail to open are
 * skipped and counted in *skipped (may be NULL). With `containers`, every
 * other mount namespace's PCW_DIR too; /proc is walked again only when a
 * process was created since the last walk or the process a namespace is
 * reached by exited (docs/containers.md, "Cost"). */
int pcw_consumer_refresh(pcw_consumer *c, size_t *skipped);

size_t pcw_consumer_segment_count(const pcw_consumer *c);
pcw_segment *pcw_consumer_segment(const pcw_consumer *c, size_t i);

/* A counterset as consumers see it: every registration of the name, from
 * any provider, with the same counters. */
typedef struct pcw_merged_counterset {
    const pcw_counterset *meta; /* the first registration's metadata */
    size_t source_count;
    const uint32_t *source_segment;           /* [source_count] segment index */
    const pcw_counterset *const *source_cset; /* [source_count] */
    size_t mismatched; /* registrations of the name left out: other counters */
} pcw_merged_counterset;

size_t pcw_consumer_counterset_count(const pcw_consumer *c);
const pcw_merged_counterset *pcw_consumer_counterset(const pcw_consumer *c, size_t i);
/* By name (case-insensitive); NULL if none (or if c or name is NULL). */
const pcw_merged_counterset *pcw_consumer_find_counterset(const pcw_consumer *c, const char *name);

/* Read every instance of a merged counterset from all its providers (one
 * source entry per provider, pcw_snapshot_source_of()). A provider whose segment fails
 * is skipped and counted in *failed (may be NULL); the others still
 * arrive. */
int pcw_consumer_read(pcw_consumer *c, const pcw_merged_counterset *m, pcw_snapshot *snap,
                      unsigned flags, size_t *failed);

/* One thing discovery met: a segment file (opened, or why not), or a
 * provider folder it refuses to trust. */
typedef struct pcw_discovered {
    const char *path; /* the segment file, or the provider folder */
    uid_t uid;        /* the uid the folder's name gives */
    int32_t name_pid; /* the pid the segment's name starts with (0 for a
                         folder): a name, not evidence of anything */
    int is_folder;    /* 1: a provider folder discovery refuses (status
                         PCW_E_PERMISSION); nothing in it was looked at */
    int status;       /* PCW_OK: seg is open; else why it is not */
    const char *why;  /* status != PCW_OK: a sentence saying what is wrong
                         and, where it can, how to fix it */
    pcw_segment *seg; /* opened as pcw_consumer_refresh would, or NULL. The
                         callback may keep it (set this to NULL, close it
                         later); otherwise it is closed after the call */
} pcw_discovered;

typedef int (*pcw_discover_fn)(pcw_discovered *d, void *arg);

/* Walk what pcw_consumer_refresh would look at (this user's provider
 * folder, or with all_users every pcw-<uid> folder of the root), with the
 * same rules (pcw/naming.h), calling fn for every segment file - opened,
 * or with the reason it cannot be - and for every provider folder that is
 * refused (a symlink, someone else's, writable by others). For tools that
 * audit, such as pcwdump --check. fn returns PCW_OK to go on; anything
 * else ends the walk and is returned. PCW_E_IO if the root cannot be
 * listed (all_users). */
int pcw_consumer_discover(pcw_consumer *c, pcw_discover_fn fn, void *arg);

/* Remove segments (and their sockets) whose provider has provably exited:
 * nobody holds the liveness lock (pcw/naming.h). A segment this library
 * cannot read goes only if it is also unlocked and the pid its name gives
 * does not exist here; a segment being made (.tmp) only once its maker had
 * locked and begun to fill it. Only files the caller may unlink.
 * *removed (may be NULL) counts them. */
int pcw_consumer_remove_stale(pcw_consumer *c, size_t *removed);

#ifdef __cplusplus
}
#endif
#endif /* PCW_CONSUMER_H */
