/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/internal.h - libpcw's private structures and helpers.
 *
 * A pcw_segment owns a read-only mapping of one provider's segment and a
 * validated private copy of its counterset metadata. Everything read from
 * the mapping goes through the range checks below and runs under the SIGBUS
 * guard (guard.c).
 */
#ifndef PCW_CONSUMER_INTERNAL_H
#define PCW_CONSUMER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "pcw/consumer.h"
#include "common/layout.h"

/* The most chunks a counterset may have (chunks double, up to
 * PCW_SEG_MAX_CHUNK_SLOTS slots: 2^32 ids fit in far fewer). Bounds every
 * chunk walk. */
#define PCW_MAX_CHUNKS 70000u
/* The most countersets one segment may hold (bounds the list walk). */
#define PCW_MAX_CSETS 65536u
/* Attempts at a consistent read of one seqcount instance. */
#define PCW_SEQ_TRIES 64u

/* A chunk the reader has validated and claimed (its bytes belong to no
 * other structure). Immutable in the segment once linked, so this private
 * copy is what reads use: a provider rewriting the header later changes
 * nothing for us. */
typedef struct pcw_chunk_priv {
    uint64_t off; /* its pcw_seg_chunk */
    uint32_t first, n;
} pcw_chunk_priv;

typedef struct pcw_cset_priv {
    pcw_counterset pub; /* first: pcw_counterset* casts to this */
    uint64_t off;       /* its pcw_seg_cset in the segment */
    uint32_t data_stride, row_data;
    uint32_t state;
    /* Chunks validated so far (read.c extends the list as the provider
     * links more); bounded by PCW_MAX_CHUNKS. */
    pcw_chunk_priv *chunks;
    size_t nchunks, chunks_cap;
} pcw_cset_priv;

struct pcw_segment {
    uint64_t serial; /* unique among this process's segments and their
                        metadata loads (never 0; segment.c new_serial) */
    int fd;
    const unsigned char *map; /* PROT_READ, MAP_SHARED */
    uint64_t map_len;
    pcw_provider_info info;
    char *path;
    char name[65];
    /* Metadata: csets, and the allocations its strings and arrays use. */
    pcw_cset_priv *csets;
    size_t ncsets;
    void **meta_v;
    size_t meta_n;
    uint64_t meta_sig; /* signature of the cset list it came from */
    /* Which 64-byte lines of the segment belong to a structure the reader
     * has validated (header, countersets, counter and block arrays,
     * strings, chunks): one bit per line. A structure whose lines are
     * taken overlaps another: corrupt. Rebuilt with the metadata. */
    uint64_t *owned;
    size_t owned_words;
    /* Why the last PCW_E_CORRUPT was returned (pcw_segment_check). */
    char why[160];
    /* Its container, when found in another mount namespace (identity.c);
     * NULL otherwise. One allocation with its strings. */
    pcw_container_info *container;
};

/* Is [off, off+len) inside [0, limit)? Overflow-safe. */
static inline int pcw__in_range(uint64_t off, uint64_t len, uint64_t limit)
{
    return off <= limit && len <= limit - off;
}

/* ---- the SIGBUS guard (guard.c) ---------------------------------------- */

/* Run fn(arg) with a SIGBUS inside [lo, lo+len) turned into a return of
 * PCW_E_TRUNCATED. fn must not leave resources half-acquired if it is cut
 * short (it only reads the mapping into caller memory). Nests. */
int pcw__guarded(const void *lo, uint64_t len, int (*fn)(void *), void *arg);
/* Install the handler once per process. */
void pcw__guard_init(void);

/* ---- segment.c --------------------------------------------------------- */

/* Make sure the mapping covers header.size; remaps if it grew. Under the
 * guard. Sets *size to the validated header.size. */
int pcw__segment_sync(pcw_segment *seg, uint64_t *size);

/* Open the segment `name` in directory `dirfd` (AT_FDCWD: a path); the file
 * must be owned by `owner` unless that is (uid_t)-1. `path` is what
 * pcw_provider_info.path will say. */
int pcw__segment_open_at(pcw_segment **out, int dirfd, const char *name, const char *path,
                         uid_t owner);
/* The same, for a segment whose header's uid is `hdr_uid` (the provider's
 * uid in its own user namespace) while the file is owned by `owner` (that
 * uid as this consumer's namespace sees it): a container's. */
int pcw__segment_open_as(pcw_segment **out, int dirfd, const char *name, const char *path,
                         uid_t owner, uid_t hdr_uid);

/* Record why the segment is corrupt (seg->why) and return PCW_E_CORRUPT. */
int pcw__corrupt(pcw_segment *seg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record why a call failed for pcw_error_detail (the calling thread's),
 * where no segment keeps it: a control socket's listener refused (peer.c).
 * Returns `status`. */
int pcw__fail_detail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Claim [off, off+len) for a structure: PCW_OK, or PCW_E_CORRUPT (with
 * seg->why) if any of its 64-byte lines is taken already, or
 * PCW_E_NO_MEMORY. `what` names the structure in the reason. */
int pcw__claim(pcw_segment *seg, uint64_t off, uint64_t len, const char *what);

/* ---- reading (read.c) -------------------------------------------------- */

/* Room for `rows` more rows (ids, data, and name columns when `names`) and
 * `name_bytes` more name bytes. */
int pcw__snapshot_reserve(pcw_snapshot *s, size_t rows, int names, size_t name_bytes);
/* Start a new source entry at the snapshot's current end (a read's rows
 * go into it). */
int pcw__snapshot_begin_source(pcw_snapshot *s, const pcw_segment *seg, uint32_t source);
/* Turn on the name columns (for rows already there: ""). */
int pcw__snapshot_want_names(pcw_snapshot *s);
uint64_t pcw__now_ns(void);

/* A snapshot's private part, in its `reserved` member (pcw/consumer.h),
 * which has the same member types in the same order: capacities, the name
 * columns' buffers (name_off and name_len point at them while the rows
 * have names), and what the last read knows about them (read.c). Programs
 * built when these fields were public inline a pcw_snapshot_clear that
 * zeroes names_len and cache_seg at these offsets: the asserts below keep
 * them where they were. may_alias: the library reaches `reserved`, whose
 * declared type is the header's, only through this type, which the
 * compiler must then not assume distinct from it (strict aliasing). */
typedef struct __attribute__((may_alias)) pcw__snapshot_priv {
    size_t cap, data_cap, names_len, names_cap, sources_cap;
    uint64_t *name_off_buf;
    uint32_t *name_len_buf;
    uint64_t cache_seg; /* the rows' ids and names are a read of this
                           segment (serial) that read.c may reuse; 0 = no */
    struct pcw__name_cache *name_cache;
} pcw__snapshot_priv;

#define PCW__SNAP_RESERVED(m) offsetof(pcw_snapshot, reserved) + offsetof(pcw__snapshot_priv, m)
_Static_assert(sizeof(pcw__snapshot_priv) == sizeof(((pcw_snapshot *)0)->reserved),
               "pcw_snapshot.reserved holds the private part exactly");
_Static_assert(_Alignof(pcw__snapshot_priv) == _Alignof(__typeof__(((pcw_snapshot *)0)->reserved)),
               "pcw_snapshot.reserved is aligned as the private part");
_Static_assert(PCW__SNAP_RESERVED(names_len) ==
                       offsetof(pcw_snapshot, reserved) + 2 * sizeof(size_t) &&
                   PCW__SNAP_RESERVED(name_off_buf) ==
                       offsetof(pcw_snapshot, reserved.r1) &&
                   PCW__SNAP_RESERVED(cache_seg) == offsetof(pcw_snapshot, reserved.r2) &&
                   PCW__SNAP_RESERVED(name_cache) == offsetof(pcw_snapshot, reserved.r3),
               "the private fields sit where PCW_2's public ones did");

/* The private part of snapshot s (const if s is). */
#define pcw__snap(s)                                                                               \
    _Generic((s),                                                                                  \
        const pcw_snapshot *: (const pcw__snapshot_priv *)(const void *)&(s)->reserved,            \
        default: (pcw__snapshot_priv *)(void *)&(s)->reserved)

/* Where a snapshot stood, to roll a failed part back to. */
typedef struct pcw__snap_mark {
    size_t count, names_len, nsources;
    uint32_t busy;
    int had_names;
} pcw__snap_mark;

static inline pcw__snap_mark pcw__snapshot_mark(const pcw_snapshot *s)
{
    pcw__snap_mark m = {s->count, pcw__snap(s)->names_len, s->nsources, s->busy, s->name_off != NULL};
    return m;
}

static inline void pcw__snapshot_rollback(pcw_snapshot *s, pcw__snap_mark m)
{
    s->count = m.count, pcw__snap(s)->names_len = m.names_len, s->nsources = m.nsources, s->busy = m.busy;
    if (!m.had_names)
        s->name_off = NULL, s->name_len = NULL;
}

/* index.c's test hook: when set, the hash of every name in a name index. */
extern uint64_t (*pcw__index_test_hash)(const char *name, size_t len);

#endif /* PCW_CONSUMER_INTERNAL_H */
