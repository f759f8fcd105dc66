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

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "pcw/consumer.h"
#include "pcw/layout.h"

/* The most chunks a counterset may have (chunks double, up to 65536 slots:
 * 2^32 ids fit in far fewer). Bounds every chunk walk. */
#define PCW_MAX_CHUNKS      70000u
#define PCW_MAX_CHUNK_SLOTS 65536u
/* The most countersets one segment may hold (bounds the list walk). */
#define PCW_MAX_CSETS 65536u
/* Attempts at a consistent read of one seqcount instance. */
#define PCW_SEQ_TRIES 64u

typedef struct pcw_cset_priv {
    pcw_counterset pub; /* first: pcw_counterset* casts to this */
    uint64_t off;       /* its pcw_seg_cset in the segment */
    uint32_t slot_stride;
    uint32_t state;
} pcw_cset_priv;

struct pcw_segment {
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

/* ---- reading (read.c) -------------------------------------------------- */

int pcw__snapshot_reserve(pcw_snapshot *s, size_t samples, size_t data, size_t names);

#endif /* PCW_CONSUMER_INTERNAL_H */
