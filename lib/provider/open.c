/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/open.c - opening a provider: its folder, its segment
 * (made unnamed, locked, then linked into place), and the sentence that
 * says why an open failed. pcw_provider_close is in teardown.c. Private
 * (see internal.h).
 */
#include "internal.h"

int pcw_provider_open(pcw_provider **out, const pcw_provider_options *opt)
{
    pcw_provider_options o = {0};
    if (opt)
        o = *opt;
    if (!out)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    /* Declared before the first goto (C++ may not jump past an
     * initialisation). */
    char dir[PATH_MAX], tmp[PATH_MAX], seg_name[64], tmp_name[64];
    int named = 0; /* the dot-name exists (and is ours to remove on failure) */
    int rc;
    uint64_t nonce = 0;
    mode_t mode = o.share_with_group ? 0640 : 0600;
    void *r;
    pcw_seg_header *h;
    const char *pname;
    const char *root = pcw__root(o.dir);
    uint64_t max = o.max_size ? pcw__align(o.max_size, 4096) : PCW__DEFAULT_MAX_SIZE;
    if (max < PCW__MIN_GROW)
        max = PCW__MIN_GROW;

    pcw__prov *p = (pcw__prov *)calloc(1, sizeof *p);
    if (!p)
        return PCW_E_NO_MEMORY;
    p->fd = -1;
    p->max_size = max;
    p->opt = o;
    p->opt.name = p->opt.dir = NULL;
    CDS_INIT_LIST_HEAD(&p->regs);
    pthread_mutex_init(&p->lock, NULL);
    p->handle = pcw__handle_new(PCW__HANDLE_PROVIDER, p);
    if (!p->handle) {
        rc = PCW_E_NO_MEMORY;
        goto fail;
    }

    rc = pcw__provider_dir(dir, sizeof dir, root, o.share_with_group, o.group);
    if (rc != PCW_OK)
        goto fail;
    if (getrandom(&nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        nonce = (uint64_t)(uintptr_t)p ^ (uint64_t)getpid() << 32;
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
    r = mmap(NULL, max, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED) {
        rc = PCW_E_NO_MEMORY;
        goto fail;
    }
    p->base = (unsigned char *)r;
    rc = pcw__grow(p, PCW__MIN_GROW);
    if (rc != PCW_OK)
        goto fail;
    h = (pcw_seg_header *)p->base;
    p->hdr = h;
    h->magic = PCW_SEG_MAGIC;
    h->layout_version = PCW_SEG_LAYOUT_VERSION;
    h->byte_order = PCW_SEG_BYTE_ORDER;
    h->header_size = sizeof(pcw_seg_header);
    h->cset_size = sizeof(pcw_seg_cset);
    h->counter_size = sizeof(pcw_seg_counter);
    h->chunk_size = sizeof(pcw_seg_chunk);
    h->provider_id = nonce;
    h->flags = (o.share_with_group ? PCW_SEG_F_GROUP : 0) |
               (o.control_callback ? PCW_SEG_F_CONTROL : 0) | PCW_SEG_F_AREA;
    h->pid = (int32_t)getpid();
    h->uid = (uint32_t)geteuid();
    h->start_time = pcw__proc_start_time();
    h->arena_off = pcw__align(sizeof *h, PCW_SEG_ALIGN);
    h->max_size = max;
    pname = o.name;
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
    *out = (pcw_provider *)p->handle;
    return PCW_OK;
fail:
    if (p->handle)
        pcw__handle_claim(p->handle, PCW__HANDLE_PROVIDER);
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

const char *pcw_provider_path(const pcw_provider *h)
{
    const pcw__prov *p = (const pcw__prov *)pcw__handle_get(h, PCW__HANDLE_PROVIDER);
    return p ? p->path : NULL;
}

const char *pcw_provider_open_error(int rc, const pcw_provider_options *opt, char *buf, size_t len)
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
