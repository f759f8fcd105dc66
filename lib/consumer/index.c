/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/index.c - pcw_name_index: find a snapshot's instance by name.
 *
 * An open-addressing hash table (linear probing, load factor at most 1/2)
 * built once over a snapshot. Each entry carries 32 bits of the name's hash
 * and the name's place in the snapshot's name buffer, so a lookup touches
 * the table (usually one cache line) and the candidate's name bytes, never
 * the snapshot's sample array. The key is pcw__name_hash_from() of the name,
 * which hashes the case-folded code points, finished with a 64-bit mixer:
 * FNV-1a's low bits (the ones that pick the bucket) only ever see the
 * inputs' low bits, and names such as "disk-0001" differ in few of them.
 *
 * The names come from other processes. With a fixed hash a segment could
 * hold names made to collide, and each lookup would compare them all; the
 * hash therefore starts from a random state drawn for each index, and
 * whatever the names, neither a lookup nor an insertion looks at more than
 * MAX_PROBE entries (docs/design.md's limits table). A build whose names
 * would need more draws a new state, a few times, then fails with
 * PCW_E_INTEGER_OVERFLOW (names that do not collide never get there: at
 * most half the entries are used).
 *
 * The index points into the snapshot it was built from: the snapshot must
 * not be read into, cleared or freed while the index is used.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>

#include "internal.h"
#include "common/name.h"

#define EMPTY_SAMPLE UINT32_MAX
/* Tables this big are mapped with transparent huge pages requested: random
 * lookups in a million-instance table otherwise miss the TLB every time. */
#define HUGE_TABLE_BYTES (4u << 20)
/* Entries a lookup or an insertion may look at, from the home entry on. */
#define MAX_PROBE 1024
/* Builds with a fresh hash state before the build gives up. */
#define MAX_BUILDS 4

/* Bytes of a name kept in its entry: a lookup of a name this short, in
 * the case it was published in, compares with the entry alone and touches
 * one cache line. */
#define INLINE_NAME 16

typedef struct ix_entry {
    uint32_t tag;          /* high 32 bits of the mixed hash */
    uint32_t sample;       /* row of the snapshot, EMPTY_SAMPLE = free */
    uint64_t name;         /* name offset in snap->names << 16 | name length */
    char inl[INLINE_NAME]; /* the name's first bytes, as published */
} ix_entry;                /* 32 bytes: two per cache line */

struct pcw_name_index {
    const char *names; /* the snapshot's name buffer */
    ix_entry *table;
    size_t mask;   /* table size - 1 (a power of two) */
    uint64_t seed; /* the hash's starting state */
    size_t bytes;  /* table allocation */
    int mapped;    /* table came from mmap */
};

/* Largest name offset the packed entry holds (2^48: far beyond any buffer). */
#define NAME_OFF_MAX (((uint64_t)1 << 48) - 1)

/* murmur3's fmix64: every output bit depends on every input bit. */
static inline uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* Test hook (tests/test_name_index.c): when set, the index's hash of every
 * name, to make names collide at will. */
uint64_t (*pcw__index_test_hash)(const char *name, size_t len);

static inline uint64_t key_hash(const pcw_name_index *ix, const char *name, size_t len)
{
    if (pcw__index_test_hash)
        return pcw__index_test_hash(name, len);
    return mix64(pcw__name_hash_from(ix->seed, name, len));
}

static uint64_t random_seed(void)
{
    uint64_t s;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        /* No entropy yet (early boot): the clock, which a segment cannot
         * know to the nanosecond either. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = mix64((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
    }
    return s;
}

static void table_free(pcw_name_index *ix)
{
    if (ix->mapped)
        munmap(ix->table, ix->bytes);
    else
        free(ix->table);
}

static int table_alloc(pcw_name_index *ix, size_t entries)
{
    ix->bytes = entries * sizeof(ix_entry);
    ix->mapped = 0;
    if (ix->bytes >= HUGE_TABLE_BYTES) {
        void *m = mmap(NULL, ix->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m != MAP_FAILED) {
            (void)madvise(m, ix->bytes, MADV_HUGEPAGE); /* a hint; fine if refused */
            ix->table = (ix_entry *)m;
            ix->mapped = 1;
        }
    }
    if (!ix->mapped) {
        ix->table = (ix_entry *)aligned_alloc(64, ix->bytes);
        if (!ix->table)
            return PCW_E_NO_MEMORY;
    }
    /* All-ones bytes: every entry's sample is EMPTY_SAMPLE. */
    memset(ix->table, 0xFF, ix->bytes);
    return PCW_OK;
}

/* Insert row s: 0 if done (or the name was there: the first row keeps it),
 * -1 if no free entry lies within MAX_PROBE. */
static int insert(pcw_name_index *ix, uint32_t s, const char *name, uint32_t name_len,
                  uint64_t name_off)
{
    uint64_t h = key_hash(ix, name, name_len);
    uint32_t tag = (uint32_t)(h >> 32);
    size_t i = h & ix->mask;
    for (size_t probe = 0; probe < MAX_PROBE && probe <= ix->mask;
         probe++, i = (i + 1) & ix->mask) {
        ix_entry *e = &ix->table[i];
        if (e->sample == EMPTY_SAMPLE) {
            e->tag = tag;
            e->sample = s;
            e->name = name_off << 16 | name_len;
            memset(e->inl, 0, sizeof e->inl);
            memcpy(e->inl, name, name_len < INLINE_NAME ? name_len : INLINE_NAME);
            return 0;
        }
        /* A name seen before (a merged read may hold one name from
         * several providers): the first sample keeps it. */
        if (e->tag == tag && pcw__name_equal(ix->names + (e->name >> 16),
                                             (size_t)(e->name & 0xFFFF), name, name_len))
            return 0;
    }
    return -1;
}

int pcw_name_index_build(pcw_name_index **out, const pcw_snapshot *snap)
{
    if (!out)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    if (!snap)
        return PCW_E_INVALID_PARAMETER;
    if (snap->count >= EMPTY_SAMPLE)
        return PCW_E_INTEGER_OVERFLOW;
    if (snap->count && !snap->name_off)
        return PCW_E_INVALID_PARAMETER; /* read without names */
    /* The snapshot is the caller's: check that every name lies inside its
     * buffer (with the NUL the reader appends) before using any. */
    for (size_t s = 0; s < snap->count; s++)
        if (snap->name_len[s] > PCW_MAX_INSTANCE_NAME_BYTES || snap->name_off[s] > NAME_OFF_MAX ||
            !pcw__in_range(snap->name_off[s], (uint64_t)snap->name_len[s] + 1,
                           pcw__snap(snap)->names_len))
            return PCW_E_INVALID_PARAMETER;
    size_t entries = 16;
    while (entries < 2 * snap->count)
        entries *= 2;
    pcw_name_index *ix = (pcw_name_index *)calloc(1, sizeof *ix);
    if (!ix)
        return PCW_E_NO_MEMORY;
    ix->names = snap->names;
    int rc = PCW_E_INTEGER_OVERFLOW;
    for (int build = 0; build < MAX_BUILDS; build++) {
        ix->seed = random_seed();
        if ((rc = table_alloc(ix, entries)) != PCW_OK)
            break;
        ix->mask = entries - 1;
        size_t s = 0;
        while (s < snap->count && insert(ix, (uint32_t)s, snap->names + snap->name_off[s],
                                         snap->name_len[s], snap->name_off[s]) == 0)
            s++;
        if (s == snap->count)
            break;
        /* MAX_PROBE full entries in a row in a table at most half full:
         * names that collide. Another state. */
        table_free(ix);
        rc = PCW_E_INTEGER_OVERFLOW;
    }
    if (rc != PCW_OK) {
        free(ix);
        return rc;
    }
    *out = ix;
    return PCW_OK;
}

int pcw_name_index_find(const pcw_name_index *ix, const char *name, size_t len, size_t *sample)
{
    if (!ix || (!name && len) || !sample)
        return PCW_E_INVALID_PARAMETER;
    if (len > PCW_MAX_INSTANCE_NAME_BYTES)
        return PCW_E_NOT_FOUND;
    if (!name)
        name = "";
    uint64_t h = key_hash(ix, name, len);
    uint32_t tag = (uint32_t)(h >> 32);
    /* Ends: an empty entry, or MAX_PROBE entries, past which no insertion
     * went. */
    size_t i = h & ix->mask;
    for (size_t probe = 0; probe < MAX_PROBE && probe <= ix->mask;
         probe++, i = (i + 1) & ix->mask) {
        const ix_entry *e = &ix->table[i];
        if (e->sample == EMPTY_SAMPLE)
            return PCW_E_NOT_FOUND;
        if (e->tag != tag)
            continue;
        size_t elen = (size_t)(e->name & 0xFFFF);
        /* The name as published, from the entry alone; else (another
         * case, or a long name) from the snapshot. */
        if ((elen == len && len <= INLINE_NAME && memcmp(e->inl, name, len) == 0) ||
            pcw__name_equal(ix->names + (e->name >> 16), elen, name, len)) {
            *sample = e->sample;
            return PCW_OK;
        }
    }
    return PCW_E_NOT_FOUND;
}

void pcw_name_index_free(pcw_name_index *ix)
{
    if (!ix)
        return;
    table_free(ix);
    free(ix);
}
