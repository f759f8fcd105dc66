/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/segment.c - open a provider's segment, validate its header,
 * keep the mapping in step with its growth, and load its counterset
 * metadata into private memory.
 *
 * Metadata is copied once, field by field into locals, then validated: a
 * hostile provider that rewrites it concurrently cannot make a checked value
 * change after the check (no double fetch).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "pcw/histogram.h"
#include "common/name.h"
#include "common/naming.h"

/* ---- mapping ------------------------------------------------------------ */

static int map_file(pcw_segment *seg, uint64_t want)
{
    struct stat st;
    if (fstat(seg->fd, &st) != 0)
        return PCW_E_IO;
    if ((uint64_t)st.st_size < want)
        return PCW_E_TRUNCATED;
    uint64_t len = (uint64_t)st.st_size;
    if (len > (1ull << 46))
        return PCW_E_CORRUPT;
    void *m;
    if (seg->map)
        m = mremap((void *)seg->map, seg->map_len, len, MREMAP_MAYMOVE);
    else
        m = mmap(NULL, len, PROT_READ, MAP_SHARED, seg->fd, 0);
    if (m == MAP_FAILED)
        return errno == ENOMEM ? PCW_E_NO_MEMORY : PCW_E_IO;
    seg->map = (const unsigned char *)m;
    seg->map_len = len;
    return PCW_OK;
}

struct sync_args {
    pcw_segment *seg;
    uint64_t size;
};

static int read_size(void *p)
{
    struct sync_args *a = (struct sync_args *)p;
    const pcw_seg_header *h = (const pcw_seg_header *)a->seg->map;
    /* Acquire pairs with the provider's release store of size after it
     * initialised the bytes below it. */
    a->size = __atomic_load_n(&h->size, __ATOMIC_ACQUIRE);
    return PCW_OK;
}

int pcw__segment_sync(pcw_segment *seg, uint64_t *size)
{
    struct sync_args a = {seg, 0};
    int rc = pcw__guarded(seg->map, seg->map_len, read_size, &a);
    if (rc != PCW_OK)
        return rc;
    if (a.size < sizeof(pcw_seg_header) || a.size > (1ull << 46))
        return PCW_E_CORRUPT;
    if (a.size > seg->map_len) {
        rc = map_file(seg, a.size);
        if (rc != PCW_OK)
            return rc == PCW_E_TRUNCATED ? PCW_E_CORRUPT : rc; /* size lies */
    }
    *size = a.size;
    return PCW_OK;
}

/* ---- ownership of the segment's bytes ----------------------------------- */

static _Thread_local char error_detail[sizeof((pcw_segment *)0)->why];

const char *pcw_error_detail(void)
{
    return error_detail;
}

int pcw__corrupt(pcw_segment *seg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(seg->why, sizeof seg->why, fmt, ap);
    va_end(ap);
    memcpy(error_detail, seg->why, sizeof error_detail);
    return PCW_E_CORRUPT;
}

int pcw__fail_detail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_detail, sizeof error_detail, fmt, ap);
    va_end(ap);
    return status;
}

/* Every structure the reader follows (the header, countersets, counter and
 * block arrays, strings, chunks) is allocated by the provider on its own
 * 64-byte lines (PCW_SEG_ALIGN), so in a well-formed segment no line holds
 * two of them. A claim takes a structure's lines; one that is taken
 * already means two structures share bytes - the amplification a hostile
 * segment needs (many countersets over one counter array, chunks over
 * chunks) - and the segment is refused. One bit per line: the bitmap is
 * 1/512 of the segment, and each line is claimed at most once, so all the
 * claims of a segment cost time linear in its size. */
int pcw__claim(pcw_segment *seg, uint64_t off, uint64_t len, const char *what)
{
    if (len == 0)
        return PCW_OK;
    uint64_t first = off / PCW_SEG_ALIGN, last = (off + len - 1) / PCW_SEG_ALIGN;
    size_t need = (size_t)(last / 64 + 1);
    if (need > seg->owned_words) {
        size_t n = seg->owned_words ? seg->owned_words : 64;
        while (n < need)
            n *= 2;
        uint64_t *v = realloc(seg->owned, n * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        memset(v + seg->owned_words, 0, (n - seg->owned_words) * sizeof *v);
        seg->owned = v, seg->owned_words = n;
    }
    /* Test every line first, then take them: a refused claim leaves the
     * bitmap as it was. */
    for (int set = 0; set < 2; set++)
        for (uint64_t w = first / 64; w <= last / 64; w++) {
            uint64_t lo = w == first / 64 ? first % 64 : 0, hi = w == last / 64 ? last % 64 : 63;
            uint64_t mask = (hi == 63 ? ~0ull : (1ull << (hi + 1)) - 1) & ~((1ull << lo) - 1);
            if (set)
                seg->owned[w] |= mask;
            else if (seg->owned[w] & mask)
                return pcw__corrupt(seg, "%s at offset %llu overlaps another structure", what,
                                    (unsigned long long)off);
        }
    return PCW_OK;
}

/* ---- metadata ----------------------------------------------------------- */

/* Allocations of one metadata load, freed together. */
typedef struct meta_pool {
    void **v;
    size_t n, cap;
} meta_pool;

static void *pool_alloc(meta_pool *p, size_t n)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        void **v = realloc(p->v, cap * sizeof *v);
        if (!v)
            return NULL;
        p->v = v, p->cap = cap;
    }
    void *m = calloc(1, n ? n : 1);
    if (m)
        p->v[p->n++] = m;
    return m;
}

static void pool_free(meta_pool *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    p->v = NULL, p->n = p->cap = 0;
}

struct load_args {
    pcw_segment *seg;
    uint64_t size;  /* checked bound: header.size, within the mapping */
    int beyond_map; /* header.size has grown past the mapping */
    meta_pool pool;
    pcw_cset_priv *csets;
    size_t ncsets;
    uint64_t sig;
    int sig_only;
};

/* Copy a string out of the segment; "" for an empty one. */
static int copy_str(struct load_args *a, const pcw_seg_str *sp, const char **out)
{
    pcw_seg_str s;
    memcpy(&s, sp, sizeof s);
    if (s.len == 0) {
        *out = "";
        return PCW_OK;
    }
    if (s.len > PCW_MAX_STRING_BYTES || !pcw__in_range(s.off, s.len, a->size))
        return pcw__corrupt(a->seg, "a string lies outside the segment");
    int rc = pcw__claim(a->seg, s.off, (uint64_t)s.len + 1, "a string");
    if (rc != PCW_OK)
        return rc;
    char *m = pool_alloc(&a->pool, (size_t)s.len + 1);
    if (!m)
        return PCW_E_NO_MEMORY;
    memcpy(m, a->seg->map + s.off, s.len);
    m[s.len] = 0;
    *out = m;
    return PCW_OK;
}

static int load_cset(struct load_args *a, uint64_t off, pcw_cset_priv *out)
{
    const pcw_seg_cset *sc = (const pcw_seg_cset *)(a->seg->map + off);
    pcw_counterset *cs = &out->pub;
    uint32_t counter_count = sc->counter_count, block_count = sc->block_count;
    uint32_t data_size = sc->data_size, stride = sc->data_stride, flags = sc->flags;
    uint64_t counters_off = sc->counters_off, blocks_off = sc->blocks_off;
    if (counter_count == 0 || counter_count > PCW_MAX_COUNTERS || block_count > PCW_MAX_BLOCKS ||
        data_size % 8 || data_size > (uint64_t)PCW_MAX_BLOCKS * PCW_MAX_BLOCK_SIZE ||
        (flags & ~(uint32_t)PCW_CSET_F_ALL_) || stride != pcw__seg_row_stride(flags, data_size) ||
        sc->instance_type > PCW_INSTANCE_TYPE_MAX_)
        return pcw__corrupt(a->seg, "counterset at offset %llu: bad counts, sizes or flags",
                            (unsigned long long)off);
    uint64_t counters_len = (uint64_t)counter_count * sizeof(pcw_seg_counter);
    if (counters_off % 8 || !pcw__in_range(counters_off, counters_len, a->size) || blocks_off % 4 ||
        !pcw__in_range(blocks_off, 8ull * block_count, a->size))
        return pcw__corrupt(a->seg, "counterset at offset %llu: arrays outside the segment",
                            (unsigned long long)off);
    int rc;
    if ((rc = pcw__claim(a->seg, off, sizeof(pcw_seg_cset), "a counterset")) != PCW_OK ||
        (rc = pcw__claim(a->seg, counters_off, counters_len, "a counter array")) != PCW_OK ||
        (rc = pcw__claim(a->seg, blocks_off, 8ull * block_count, "a block array")) != PCW_OK)
        return rc;
    out->off = off;
    out->data_stride = stride;
    out->row_data = pcw__seg_row_data(flags);
    cs->instance_type = sc->instance_type;
    cs->flags = flags;
    cs->counter_count = counter_count;
    cs->block_count = block_count;
    cs->data_size = data_size;
    cs->reg_index = sc->reg_index;
    if ((rc = copy_str(a, &sc->name, &cs->name)) ||
        (rc = copy_str(a, &sc->description, &cs->description)) ||
        (rc = copy_str(a, &sc->guid, &cs->guid)) || (rc = copy_str(a, &sc->uri, &cs->uri)) ||
        (rc = copy_str(a, &sc->symbol, &cs->symbol)) ||
        (rc = copy_str(a, &sc->provider_name, &cs->provider_name)) ||
        (rc = copy_str(a, &sc->provider_guid, &cs->provider_guid)) ||
        (rc = copy_str(a, &sc->provider_type, &cs->provider_type)) ||
        (rc = copy_str(a, &sc->provider_callback, &cs->provider_callback)) ||
        (rc = copy_str(a, &sc->application_identity, &cs->application_identity)))
        return rc;
    if (!*cs->name)
        return pcw__corrupt(a->seg, "counterset at offset %llu has no name",
                            (unsigned long long)off);
    uint32_t *blocks = pool_alloc(&a->pool, 8ull * (block_count ? block_count : 1));
    pcw_counter *cnt = pool_alloc(&a->pool, sizeof(pcw_counter) * counter_count);
    if (!blocks || !cnt)
        return PCW_E_NO_MEMORY;
    const uint32_t *sb = (const uint32_t *)(const void *)(a->seg->map + blocks_off);
    for (uint32_t b = 0; b < block_count; b++) {
        blocks[b] = sb[2 * b];
        blocks[block_count + b] = sb[2 * b + 1];
        if (blocks[b] % 8 || (uint64_t)blocks[b] + blocks[block_count + b] > data_size)
            return pcw__corrupt(a->seg, "counterset \"%s\": block %u is outside the data", cs->name,
                                b);
    }
    cs->block_offsets = blocks;
    cs->block_sizes = blocks + block_count;
    const pcw_seg_counter *scn =
        (const pcw_seg_counter *)(const void *)(a->seg->map + counters_off);
    for (uint32_t i = 0; i < counter_count; i++) {
        pcw_seg_counter c;
        memcpy(&c, &scn[i], sizeof c);
        int hist = c.type == PERF_PCW_HISTOGRAM;
        if (hist ? !pcw_hist_shape_valid(c.histogram) || c.size != pcw_hist_bytes(c.histogram)
                 : c.histogram != 0)
            return pcw__corrupt(a->seg,
                                "counterset \"%s\": counter %u has a bad histogram shape "
                                "0x%08x for its type and size",
                                cs->name, i, c.histogram);
        if ((!hist && c.size != 4 && c.size != 8) || c.block >= block_count ||
            c.offset % (hist ? 8u : c.size) ||
            (uint64_t)c.offset + c.size > cs->block_sizes[c.block])
            return pcw__corrupt(a->seg, "counterset \"%s\": counter %u is outside its block",
                                cs->name, i);
        pcw_counter *o = &cnt[i];
        o->id = c.id, o->type = c.type, o->block = c.block, o->offset = c.offset;
        o->size = c.size, o->base_id = c.base_id, o->perf_time_id = c.perf_time_id;
        o->perf_freq_id = c.perf_freq_id, o->multi_id = c.multi_id;
        o->default_scale = c.default_scale, o->detail_level = c.detail_level;
        o->aggregate = c.aggregate, o->attributes = c.attributes;
        o->data_offset = cs->block_offsets[c.block] + c.offset;
        o->histogram = c.histogram;
        if ((rc = copy_str(a, &scn[i].name, &o->name)) ||
            (rc = copy_str(a, &scn[i].description, &o->description)) ||
            (rc = copy_str(a, &scn[i].uri, &o->uri)) ||
            (rc = copy_str(a, &scn[i].symbol, &o->symbol)))
            return rc;
    }
    cs->counters = cnt;
    return PCW_OK;
}

/* Walk the counterset list: compute its signature (offsets and states) and,
 * unless sig_only, load every live counterset. */
/* Called right after acquiring the link to a counterset. The provider grew
 * header.size (release) before it allocated the counterset, its counters
 * and strings, and linked it (release): this acquire load of the size
 * covers all of them. A walk that began with an older size would otherwise
 * take a counterset registered meanwhile for corruption. Bounded by the
 * mapping: what lies past it is newer than this refresh. */
static void meta_catch_up(struct load_args *a)
{
    const pcw_seg_header *h = (const pcw_seg_header *)a->seg->map;
    uint64_t fresh = __atomic_load_n(&h->size, __ATOMIC_ACQUIRE);
    if (fresh > a->size) {
        a->beyond_map = fresh > a->seg->map_len;
        a->size = a->beyond_map ? a->seg->map_len : fresh;
    }
}

static int load_meta(void *p)
{
    struct load_args *a = (struct load_args *)p;
    const pcw_seg_header *h = (const pcw_seg_header *)a->seg->map;
    uint64_t arena = h->arena_off;
    if (arena > a->size)
        return pcw__corrupt(a->seg, "the arena starts past the end of the segment");
    if (!a->sig_only) {
        int rc = pcw__claim(a->seg, 0, arena, "the header");
        if (rc != PCW_OK)
            return rc;
    }
    /* Acquire pairs with the provider's release when it linked the
     * counterset (pcw_register): its fields are visible. */
    uint64_t off = __atomic_load_n(&h->cset_head, __ATOMIC_ACQUIRE);
    uint64_t prev = 0, sig = 1469598103934665603ull;
    size_t n = 0, cap = 0;
    while (off) {
        meta_catch_up(a);
        /* Offsets only grow along the list (bump allocation), so this loop
         * ends within size / sizeof(cset) steps even on a hostile segment. */
        if (off <= prev || off < arena || off % 8 || n >= PCW_MAX_CSETS)
            return pcw__corrupt(a->seg, "the counterset list is damaged at offset %llu",
                                (unsigned long long)off);
        if (!pcw__in_range(off, sizeof(pcw_seg_cset), a->size)) {
            if (a->beyond_map)
                break; /* registered after this refresh mapped the segment */
            return pcw__corrupt(a->seg, "a counterset lies past the end of the segment");
        }
        const pcw_seg_cset *sc = (const pcw_seg_cset *)(a->seg->map + off);
        uint32_t state = __atomic_load_n(&sc->state, __ATOMIC_ACQUIRE);
        sig = (sig ^ off ^ ((uint64_t)state << 56)) * 1099511628211ull;
        if (state == PCW_CSET_LIVE && !a->sig_only) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 8;
                pcw_cset_priv *v = realloc(a->csets, nc * sizeof *v);
                if (!v)
                    return PCW_E_NO_MEMORY;
                a->csets = v, cap = nc;
            }
            memset(&a->csets[n], 0, sizeof a->csets[n]);
            int rc = load_cset(a, off, &a->csets[n]);
            if (rc == PCW_E_CORRUPT && a->beyond_map)
                break; /* parts of it lie past the mapping: newer than us */
            if (rc != PCW_OK)
                return rc;
            a->csets[n].state = state;
            n++;
        } else if (state != PCW_CSET_LIVE && state != PCW_CSET_DEAD) {
            return pcw__corrupt(a->seg, "counterset at offset %llu has an unknown state",
                                (unsigned long long)off);
        }
        prev = off;
        off = __atomic_load_n(&sc->next, __ATOMIC_ACQUIRE);
    }
    a->ncsets = n;
    a->sig = sig;
    return PCW_OK;
}

static void free_csets(pcw_cset_priv *csets, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(csets[i].chunks);
    free(csets);
}

static void free_meta(pcw_segment *seg)
{
    meta_pool pool = {seg->meta_v, seg->meta_n, seg->meta_n};
    pool_free(&pool);
    free_csets(seg->csets, seg->ncsets);
    seg->csets = NULL, seg->ncsets = 0, seg->meta_v = NULL, seg->meta_n = 0;
}

static int reload_at(pcw_segment *seg, int *changed, uint64_t size);

/* Remap to the current size, then walk the counterset list (load_meta
 * catches up with countersets registered during the walk). */
static int reload(pcw_segment *seg, int *changed)
{
    uint64_t size;
    int rc = pcw__segment_sync(seg, &size);
    return rc == PCW_OK ? reload_at(seg, changed, size) : rc;
}

/* A serial no segment of this process had: a segment gets one when opened
 * and a new one whenever its metadata is loaded again, so that what a
 * snapshot remembers of a read (read.c's row cache, keyed by the serial)
 * never outlives the counterset and chunk lists it was read through. */
static uint64_t new_serial(void)
{
    static uint64_t serials;
    return __atomic_add_fetch(&serials, 1, __ATOMIC_RELAXED);
}

static int reload_at(pcw_segment *seg, int *changed, uint64_t size)
{
    int rc;
    struct load_args a = {.seg = seg, .size = size, .sig_only = 1};
    if (seg->meta_v) {
        rc = pcw__guarded(seg->map, seg->map_len, load_meta, &a);
        if (rc != PCW_OK)
            return rc;
        if (a.sig == seg->meta_sig) {
            if (changed)
                *changed = 0;
            return PCW_OK;
        }
    }
    /* A fresh ownership bitmap: the new metadata claims its bytes, and the
     * chunk caches (which go with the old metadata) start again. */
    uint64_t *old_owned = seg->owned;
    size_t old_words = seg->owned_words;
    seg->owned = NULL, seg->owned_words = 0;
    a.sig_only = 0;
    rc = pcw__guarded(seg->map, seg->map_len, load_meta, &a);
    if (rc == PCW_OK && !a.pool.v && !(a.pool.v = malloc(sizeof(void *))))
        rc = PCW_E_NO_MEMORY; /* keep meta_v non-NULL: "loaded" */
    if (rc != PCW_OK) {
        pool_free(&a.pool);
        free_csets(a.csets, a.ncsets);
        free(seg->owned);
        seg->owned = old_owned, seg->owned_words = old_words;
        return rc;
    }
    free(old_owned);
    free_meta(seg);
    seg->meta_v = a.pool.v;
    seg->meta_n = a.pool.n;
    seg->csets = a.csets;
    seg->ncsets = a.ncsets;
    seg->meta_sig = a.sig;
    seg->serial = new_serial();
    if (changed)
        *changed = 1;
    return PCW_OK;
}

/* ---- header ------------------------------------------------------------- */

struct header_args {
    pcw_segment *seg;
    pcw_seg_header h;
};

static int copy_header(void *p)
{
    struct header_args *a = (struct header_args *)p;
    memcpy(&a->h, a->seg->map, sizeof a->h);
    return PCW_OK;
}

static int check_header(const pcw_seg_header *h)
{
    if (h->magic != PCW_SEG_MAGIC)
        return PCW_E_CORRUPT;
    if (h->byte_order != PCW_SEG_BYTE_ORDER || h->layout_version != PCW_SEG_LAYOUT_VERSION ||
        h->header_size != sizeof(pcw_seg_header) || h->cset_size != sizeof(pcw_seg_cset) ||
        h->counter_size != sizeof(pcw_seg_counter) || h->chunk_size != sizeof(pcw_seg_chunk))
        return PCW_E_VERSION;
    if (h->arena_off < sizeof(pcw_seg_header) || h->arena_off > (1ull << 46))
        return PCW_E_CORRUPT;
    return PCW_OK;
}

int pcw_segment_open(pcw_segment **out, const char *path)
{
    return pcw__segment_open_at(out, AT_FDCWD, path, path, (uid_t)-1);
}

int pcw__segment_open_at(pcw_segment **out, int dirfd, const char *name, const char *path,
                         uid_t owner)
{
    return pcw__segment_open_as(out, dirfd, name, path, owner, (uid_t)-1);
}

int pcw__segment_open_as(pcw_segment **out, int dirfd, const char *name, const char *path,
                         uid_t owner, uid_t hdr_uid)
{
    if (!out || !name || !path)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    pcw__guard_init();
    /* O_NOFOLLOW: never follow a symlink someone planted in place of a
     * segment; O_NONBLOCK: never hang on a FIFO planted there. */
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ELOOP || errno == EACCES ? PCW_E_PERMISSION : PCW_E_IO;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return PCW_E_IO;
    }
    if (!S_ISREG(st.st_mode) || (owner != (uid_t)-1 && st.st_uid != owner)) {
        close(fd);
        return PCW_E_PERMISSION;
    }
    if ((uint64_t)st.st_size < sizeof(pcw_seg_header)) {
        close(fd);
        return PCW_E_CORRUPT;
    }
    pcw_segment *seg = calloc(1, sizeof *seg);
    if (!seg || !(seg->path = strdup(path))) {
        free(seg);
        close(fd);
        return PCW_E_NO_MEMORY;
    }
    seg->serial = new_serial();
    seg->fd = fd;
    int rc = map_file(seg, sizeof(pcw_seg_header));
    struct header_args ha = {seg, {0}};
    if (rc == PCW_OK)
        rc = pcw__guarded(seg->map, seg->map_len, copy_header, &ha);
    if (rc == PCW_OK)
        rc = check_header(&ha.h);
    if (rc == PCW_OK && ha.h.uid != (uint32_t)(hdr_uid == (uid_t)-1 ? st.st_uid : hdr_uid))
        rc = PCW_E_PERMISSION; /* claims to be someone else's */
    if (rc == PCW_OK)
        rc = reload(seg, NULL);
    if (rc != PCW_OK) {
        pcw_segment_close(seg);
        return rc;
    }
    memcpy(seg->name, ha.h.provider_name, 64);
    seg->name[64] = 0;
    seg->info.path = seg->path;
    seg->info.name = seg->name;
    seg->info.pid = ha.h.pid;
    seg->info.uid = ha.h.uid;
    seg->info.start_time = ha.h.start_time;
    seg->info.provider_id = ha.h.provider_id;
    seg->info.flags = ha.h.flags;
    *out = seg;
    return PCW_OK;
}

void pcw_segment_close(pcw_segment *seg)
{
    if (!seg)
        return;
    free_meta(seg);
    free(seg->owned);
    if (seg->map)
        munmap((void *)seg->map, seg->map_len);
    if (seg->fd >= 0)
        close(seg->fd);
    free(seg->path);
    free(seg->container);
    free(seg);
}

int pcw_segment_refresh(pcw_segment *seg, int *changed)
{
    if (changed)
        *changed = 0;
    if (!seg)
        return PCW_E_INVALID_PARAMETER;
    return reload(seg, changed);
}

const pcw_provider_info *pcw_segment_provider(const pcw_segment *seg)
{
    return seg ? &seg->info : NULL;
}

const pcw_container_info *pcw_segment_container(const pcw_segment *seg)
{
    return seg ? seg->container : NULL;
}

struct state_args {
    const pcw_segment *seg;
    uint32_t state;
    uint64_t gen;
};

static int read_state(void *p)
{
    struct state_args *a = (struct state_args *)p;
    const pcw_seg_header *h = (const pcw_seg_header *)a->seg->map;
    a->state = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE);
    /* Acquire pairs with the provider's release increment: a rescan after
     * seeing a new value sees the change that made it. */
    a->gen = __atomic_load_n(&h->generation, __ATOMIC_ACQUIRE);
    return PCW_OK;
}

int pcw_segment_alive(const pcw_segment *seg)
{
    if (!seg)
        return PCW_E_INVALID_PARAMETER;
    struct state_args a = {seg, 0, 0};
    int rc = pcw__guarded(seg->map, seg->map_len, read_state, &a);
    if (rc != PCW_OK)
        return PCW_E_PROVIDER_EXITED; /* truncated: its provider is gone */
    if (a.state != PCW_SEG_STATE_LIVE)
        return PCW_E_PROVIDER_EXITED;
    /* The provider holds its liveness lock (pcw/naming.h) from before the
     * segment was published until it exits: nobody holds it, nobody is
     * left. The header's pid is not consulted: it is the pid in the
     * provider's namespace, which in ours may be free, or another
     * process's (a container's provider is often pid 1). A file system
     * without such locks cannot tell: alive, as nothing proves otherwise. */
    return pcw__live_test(seg->fd) == 0 ? PCW_E_PROVIDER_EXITED : PCW_OK;
}

uint64_t pcw_segment_generation(pcw_segment *seg)
{
    struct state_args a = {seg, 0, 0};
    if (!seg || pcw__guarded(seg->map, seg->map_len, read_state, &a) != PCW_OK)
        return 0;
    return a.gen;
}

size_t pcw_segment_counterset_count(const pcw_segment *seg)
{
    return seg ? seg->ncsets : 0;
}

const pcw_counterset *pcw_segment_counterset(const pcw_segment *seg, size_t i)
{
    return seg && i < seg->ncsets ? &seg->csets[i].pub : NULL;
}

const pcw_counterset *pcw_segment_find_counterset(const pcw_segment *seg, const char *name)
{
    if (!seg || !name)
        return NULL;
    size_t n = strlen(name);
    for (size_t i = 0; i < seg->ncsets; i++) {
        const char *cn = seg->csets[i].pub.name;
        if (pcw__name_equal(cn, strlen(cn), name, n))
            return &seg->csets[i].pub;
    }
    return NULL;
}
