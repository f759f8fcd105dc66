/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/arena.c - the provider's segment memory: the provider
 * folder, the file's growth into its reserved range, trimming, and the
 * bump allocator (design.md section 2). Private (see internal.h).
 */
#include "internal.h"

PCW__PRIVATE uint64_t pcw__align(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

/* /proc/self/stat field 22: the process start time in clock ticks. Not
 * /proc/<getpid()>: in a pid namespace that kept its parent's /proc, that
 * is another process (our pid 1 is the parent namespace's init there);
 * /proc/self is the caller in every /proc. */
PCW__PRIVATE uint64_t pcw__proc_start_time(void)
{
    char buf[1024];
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
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
 * names in a shared /dev/shm before we do. A provider that shares with a
 * group (`group`; `gid`, 0 for its own) gives the folder to that group
 * too: its members must list the folder to find the segment. */
PCW__PRIVATE int pcw__provider_dir(char *dir, size_t cap, const char *root, int group, gid_t gid)
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
    else if (group && gid && st.st_gid != gid && fchown(dfd, (uid_t)-1, gid) != 0)
        rc = PCW_E_PERMISSION; /* not a group of ours: pcw_provider_open_why says */
    close(dfd);
    return rc;
}

/* Grow the mapped file so that [0, need) is backed. prov->lock held. */
PCW__PRIVATE int pcw__grow(pcw__prov *p, uint64_t need)
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
PCW__PRIVATE void pcw__trim(pcw__prov *p)
{
    uint64_t lo = pcw__align(p->used, 4096);
    if (lo < p->reserved && fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo,
                                      (off_t)(p->reserved - lo)) == 0)
        p->reserved = lo;
}

/* Bump-allocate `n` bytes of zeroed arena aligned to `align` (a power of
 * two). Returns the offset or 0 (and *rc). prov->lock held. */
PCW__PRIVATE uint64_t pcw__arena_alloc_aligned(pcw__prov *p, uint64_t n, uint64_t align, int *rc)
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
PCW__PRIVATE uint64_t pcw__arena_alloc(pcw__prov *p, uint64_t n, int *rc)
{
    return pcw__arena_alloc_aligned(p, n, PCW_SEG_ALIGN, rc);
}

/* Copy a string into the arena; returns its pcw_seg_str (len 0 for NULL). */
PCW__PRIVATE int pcw__arena_str(pcw__prov *p, const char *s, pcw_seg_str *out)
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

PCW__PRIVATE void pcw__bump_generation(pcw__prov *p)
{
    /* Release: a consumer that sees the new generation (acquire) and then
     * rescans sees the change that caused it. */
    __atomic_fetch_add(&p->hdr->generation, 1, __ATOMIC_RELEASE);
}
