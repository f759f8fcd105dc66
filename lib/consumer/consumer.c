/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/consumer.c - every provider in a directory: discovery,
 * refresh, countersets merged by name, stale-segment removal.
 *
 * Discovery trusts nothing it finds: a provider folder is used only if it is
 * a real directory (not a symlink), owned by the uid its name says, and not
 * writable by group or others; a segment only if it is a regular file owned
 * by that same uid (pcw__segment_open_at).
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containers.h"
#include "private.h"
#include "control.h"
#include "internal.h"
#include "common/name.h"
#include "common/naming.h"

struct pcw_consumer {
    char *root;
    int all_users;
    uint32_t timeout_ms;
    pcw_segment **segs;
    size_t nsegs;
    pcw_merged_counterset *merged;
    size_t nmerged;
    uint32_t *src_seg; /* storage behind merged[].source_segment */
    const pcw_counterset **src_cset;
    pcw__ctl_table *ctl; /* control connections (control.c), lazily */
    pcw__ctr *ctr;       /* other mount namespaces (containers.c); NULL: off */
};

int pcw_consumer_open(pcw_consumer **out, const pcw_consumer_options *opt)
{
    if (!out)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    pcw_consumer_options o = {0};
    if (opt)
        o = *opt;
    const char *root = pcw__root(o.dir);
    pcw_consumer *c = calloc(1, sizeof *c);
    if (!c || !(c->root = strdup(root))) {
        free(c);
        return PCW_E_NO_MEMORY;
    }
    c->all_users = o.all_users;
    c->timeout_ms = o.timeout_ms ? o.timeout_ms : 1000;
    if (o.containers) {
        int rc = pcw__ctr_open(&c->ctr, o.container_dir);
        if (rc != PCW_OK) {
            free(c->root);
            free(c);
            return rc;
        }
    }
    *out = c;
    return PCW_OK;
}

const char *pcw_root(const char *dir)
{
    return pcw__root(dir);
}

static void free_merged(pcw_consumer *c)
{
    free(c->merged);
    free(c->src_seg);
    free(c->src_cset);
    c->merged = NULL, c->src_seg = NULL, c->src_cset = NULL, c->nmerged = 0;
}

void pcw_consumer_close(pcw_consumer *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nsegs; i++)
        pcw_segment_close(c->segs[i]);
    free(c->segs);
    free_merged(c);
    pcw__ctl_table_free(c->ctl);
    pcw__ctr_free(c->ctr);
    free(c->root);
    free(c);
}

uint32_t pcw__consumer_timeout(const pcw_consumer *c)
{
    return c->timeout_ms;
}

pcw__ctl_table *pcw__consumer_ctl(pcw_consumer *c)
{
    if (!c->ctl)
        c->ctl = calloc(1, sizeof *c->ctl);
    return c->ctl;
}

void pcw_consumer_set_timeout(pcw_consumer *c, uint32_t ms)
{
    if (c)
        c->timeout_ms = ms ? ms : 1000;
}

/* A root to look in for provider folders: the consumer's own, or a
 * container's PCW_DIR (containers.c). */
typedef struct root_ref {
    int fd;           /* the container's PCW_DIR; AT_FDCWD: open `path` */
    const char *path; /* what paths and messages say */
    pcw__mntns *ns;   /* NULL: the consumer's own mount namespace */
} root_ref;

/* Open the provider folder `name` of r if it may be trusted
 * (pcw/naming.h); *uid gets the uid its name gives as this consumer sees
 * it (a container's user namespace mapped), *hdr_uid as its providers do.
 * -1 if it is not a provider folder's name (*refused = 0), does not exist
 * (0), or may not be trusted (*refused = 1, and why says so). */
static int open_provider_dir(const root_ref *r, const char *name, uid_t *uid, uid_t *hdr_uid,
                             int *refused, char *why, size_t why_len)
{
    *refused = 0;
    if (!pcw__parse_dir_name(name, hdr_uid))
        return -1;
    *uid = r->ns ? pcw__ctr_map_uid(r->ns, *hdr_uid) : *hdr_uid;
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", r->path, name) >= sizeof path)
        return -1;
    /* In a container's PCW_DIR, one component below a descriptor opened
     * inside its root: nothing can lead out of it. */
    int fd = r->ns ? openat(r->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                   : open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT) {
            *refused = 1;
            pcw__dir_open_why(errno, path, why, why_len);
        }
        return -1;
    }
    struct stat st;
    if (*uid == (uid_t)-1) {
        *refused = 1;
        pcw__say(why, why_len, path, " names a uid its container does not map", (char *)NULL);
        close(fd);
        return -1;
    }
    if (fstat(fd, &st) != 0 || pcw__dir_check(&st, *uid, path, why, why_len) != PCW_OK) {
        *refused = 1;
        close(fd);
        return -1;
    }
    return fd;
}

/* One entry of a trusted provider folder: its name, its path, the folder
 * (dfd), the uid it belongs to (as owner of its files, and as its
 * providers' headers say) and its container's namespace (NULL: ours). */
typedef struct dir_entry {
    int dfd;
    uid_t uid, hdr_uid;
    const char *name, *path;
    pcw__mntns *ns;
} dir_entry;

/* What to do in each provider folder: fn for every entry of a trusted one,
 * refused (may be NULL) for one that is not trusted. Either returns
 * PCW_OK to go on. */
typedef struct dir_visit {
    int (*fn)(pcw_consumer *, const dir_entry *, void *);
    int (*refused)(pcw_consumer *, const char *path, uid_t, const char *why, void *);
    void *arg;
} dir_visit;

static int visit_entries(pcw_consumer *c, int dfd, const char *dpath, const dir_entry *tmpl,
                         const dir_visit *v)
{
    int fd2 = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
    if (!d) {
        if (fd2 >= 0)
            close(fd2);
        return PCW_E_IO;
    }
    struct dirent *e;
    int rc = PCW_OK;
    while (rc == PCW_OK && (e = readdir(d)) != NULL) {
        char path[PATH_MAX];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dpath, e->d_name) >= sizeof path)
            continue;
        dir_entry de = *tmpl;
        de.dfd = dfd, de.name = e->d_name, de.path = path;
        rc = v->fn(c, &de, v->arg);
    }
    closedir(d);
    return rc;
}

static int visit_dir(pcw_consumer *c, const root_ref *r, const char *name, const dir_visit *v)
{
    uid_t uid, hdr_uid;
    int refused;
    char why[PATH_MAX + 512], dpath[PATH_MAX];
    int fd = open_provider_dir(r, name, &uid, &hdr_uid, &refused, why, sizeof why);
    snprintf(dpath, sizeof dpath, "%s/%s", r->path, name);
    if (fd < 0)
        return refused && v->refused ? v->refused(c, dpath, uid, why, v->arg) : PCW_OK;
    dir_entry tmpl = {fd, uid, r->ns ? hdr_uid : (uid_t)-1, NULL, NULL, r->ns};
    int rc = visit_entries(c, fd, dpath, &tmpl, v);
    close(fd);
    return rc;
}

/* Visit every provider folder of a container's PCW_DIR. */
static int visit_container(pcw_consumer *c, pcw__mntns *ns, const dir_visit *v)
{
    char path[PATH_MAX];
    if (ns->dirfd < 0 ||
        (size_t)snprintf(path, sizeof path, "%s%s", ns->root, c->ctr->dir) >= sizeof path)
        return PCW_OK;
    root_ref r = {ns->dirfd, path, ns};
    int fd = openat(ns->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return PCW_OK; /* its PCW_DIR is no longer listable: nothing there */
    }
    struct dirent *e;
    int rc = PCW_OK;
    while (rc == PCW_OK && (e = readdir(d)) != NULL)
        rc = visit_dir(c, &r, e->d_name, v);
    closedir(d);
    return rc;
}

/* Visit every provider folder this consumer reads: its own root's, and
 * with `containers` those of every other mount namespace. */
static int for_each_dir(pcw_consumer *c, const dir_visit *v, int containers)
{
    root_ref own = {AT_FDCWD, c->root, NULL};
    int rc = PCW_OK;
    if (!c->all_users) {
        char name[32];
        if (pcw__dir_name(name, sizeof name, geteuid()) != 0)
            return PCW_E_INVALID_PARAMETER;
        rc = visit_dir(c, &own, name, v); /* none yet: no provider has run */
    } else {
        DIR *d = opendir(c->root);
        if (!d)
            return PCW_E_IO;
        struct dirent *e;
        while (rc == PCW_OK && (e = readdir(d)) != NULL)
            rc = visit_dir(c, &own, e->d_name, v);
        closedir(d);
    }
    for (size_t i = 0; containers && c->ctr && rc == PCW_OK && i < c->ctr->n; i++)
        rc = visit_container(c, c->ctr->ns[i], v);
    return rc;
}

/* Open the segment an entry names, as discovery does; a container's gets
 * its identity. */
static int open_entry(const dir_entry *de, pcw_segment **seg)
{
    int rc = pcw__segment_open_as(seg, de->dfd, de->name, de->path, de->uid, de->hdr_uid);
    if (rc == PCW_OK && de->ns && (rc = pcw__ctr_identify(de->ns, *seg)) != PCW_OK) {
        pcw_segment_close(*seg);
        *seg = NULL;
    }
    return rc;
}

struct scan {
    pcw_segment **next;
    size_t n, cap;
    char *seen; /* which of c->segs are still there */
    size_t skipped;
};

static int scan_entry(pcw_consumer *c, const dir_entry *de, void *arg)
{
    struct scan *s = (struct scan *)arg;
    if (!pcw__is_seg_name(de->name))
        return PCW_OK;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        pcw_segment **v = realloc(s->next, cap * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        s->next = v, s->cap = cap;
    }
    pcw_segment *seg = NULL;
    /* The same path in the same namespace (a pid in a path may have been
     * reused by another container's process). */
    uint64_t ns = de->ns ? de->ns->ino : 0;
    for (size_t i = 0; i < c->nsegs; i++)
        if (!s->seen[i] && strcmp(c->segs[i]->path, de->path) == 0 &&
            (c->segs[i]->container ? c->segs[i]->container->mnt_ns : 0) == ns) {
            s->seen[i] = 1;
            if (pcw_segment_refresh(c->segs[i], NULL) == PCW_OK)
                seg = c->segs[i];
            else
                s->seen[i] = 0, s->skipped++; /* closed below */
            break;
        }
    if (!seg && open_entry(de, &seg) != PCW_OK) {
        s->skipped++;
        return PCW_OK;
    }
    if (seg)
        s->next[s->n++] = seg;
    return PCW_OK;
}

static int same_counters(const pcw_counterset *a, const pcw_counterset *b)
{
    if (a->counter_count != b->counter_count || a->data_size != b->data_size ||
        a->instance_type != b->instance_type)
        return 0;
    for (uint32_t i = 0; i < a->counter_count; i++) {
        const pcw_counter *x = &a->counters[i], *y = &b->counters[i];
        /* A histogram's shape gives its words' bounds: same size is not
         * enough. */
        if (x->id != y->id || x->type != y->type || x->size != y->size ||
            x->data_offset != y->data_offset || x->histogram != y->histogram)
            return 0;
    }
    return 1;
}

static int build_merged(pcw_consumer *c)
{
    free_merged(c);
    size_t total = 0;
    for (size_t i = 0; i < c->nsegs; i++)
        total += pcw_segment_counterset_count(c->segs[i]);
    if (!total)
        return PCW_OK;
    c->merged = calloc(total, sizeof *c->merged);
    c->src_seg = calloc(total, sizeof *c->src_seg);
    c->src_cset = calloc(total, sizeof *c->src_cset);
    size_t *owner = calloc(total, sizeof *owner); /* merged index of source k */
    if (!c->merged || !c->src_seg || !c->src_cset || !owner) {
        free(owner);
        free_merged(c);
        return PCW_E_NO_MEMORY;
    }
    /* Pass 1: decide each registration's merged counterset. */
    size_t k = 0;
    for (size_t i = 0; i < c->nsegs; i++)
        for (size_t j = 0; j < pcw_segment_counterset_count(c->segs[i]); j++) {
            const pcw_counterset *cs = pcw_segment_counterset(c->segs[i], j);
            size_t m;
            for (m = 0; m < c->nmerged; m++)
                if (pcw__name_equal(c->merged[m].meta->name, strlen(c->merged[m].meta->name),
                                    cs->name, strlen(cs->name)))
                    break;
            if (m == c->nmerged)
                c->merged[c->nmerged++].meta = cs;
            if (!same_counters(c->merged[m].meta, cs)) {
                c->merged[m].mismatched++;
                owner[k++] = SIZE_MAX;
                continue;
            }
            c->src_seg[k] = (uint32_t)i;
            c->src_cset[k] = cs;
            owner[k++] = m;
            c->merged[m].source_count++;
        }
    /* Pass 2: lay the sources out contiguously per merged counterset. */
    uint32_t *seg2 = calloc(total, sizeof *seg2);
    const pcw_counterset **cs2 = calloc(total, sizeof *cs2);
    if (!seg2 || !cs2) {
        free(seg2), free(cs2), free(owner);
        free_merged(c);
        return PCW_E_NO_MEMORY;
    }
    size_t at = 0;
    for (size_t m = 0; m < c->nmerged; m++) {
        c->merged[m].source_segment = seg2 + at;
        c->merged[m].source_cset = cs2 + at;
        for (size_t q = 0; q < k; q++)
            if (owner[q] == m)
                seg2[at] = c->src_seg[q], cs2[at++] = c->src_cset[q];
    }
    free(owner);
    free(c->src_seg);
    free(c->src_cset);
    c->src_seg = seg2;
    c->src_cset = cs2;
    return PCW_OK;
}

int pcw_consumer_refresh(pcw_consumer *c, size_t *skipped)
{
    if (!c)
        return PCW_E_INVALID_PARAMETER;
    struct scan s = {0};
    s.seen = calloc(c->nsegs + 1, 1);
    if (!s.seen)
        return PCW_E_NO_MEMORY;
    dir_visit v = {scan_entry, NULL, &s};
    int rc = PCW_OK;
    if (c->ctr && (rc = pcw__ctr_update(c->ctr, 0)) == PCW_OK)
        pcw__ctr_stamp(c->ctr); /* before the scan: a change during it is seen next time */
    if (rc == PCW_OK)
        rc = for_each_dir(c, &v, 1);
    if (rc != PCW_OK) {
        /* Keep the old state; close only what this scan opened anew. */
        for (size_t i = 0; i < s.n; i++) {
            size_t j;
            for (j = 0; j < c->nsegs && c->segs[j] != s.next[i]; j++)
                ;
            if (j == c->nsegs)
                pcw_segment_close(s.next[i]);
        }
        free(s.next);
        free(s.seen);
        return rc;
    }
    /* Segments we already had go first, in their old order, new ones after
     * them: a merged counterset's metadata (its first registration's) and
     * the segment indexes then stay put as other providers come and go,
     * whatever order readdir returns. */
    size_t at = 0;
    for (size_t i = 0; i < c->nsegs; i++) {
        if (!s.seen[i]) {
            pcw_segment_close(c->segs[i]);
            continue;
        }
        size_t j;
        for (j = at; j < s.n && s.next[j] != c->segs[i]; j++)
            ;
        if (j == s.n)
            continue; /* cannot happen: seen means it is in next */
        memmove(s.next + at + 1, s.next + at, (j - at) * sizeof *s.next);
        s.next[at++] = c->segs[i];
    }
    free(c->segs);
    free(s.seen);
    c->segs = s.next;
    c->nsegs = s.n;
    if (skipped)
        *skipped = s.skipped;
    return build_merged(c);
}

size_t pcw_consumer_segment_count(const pcw_consumer *c)
{
    return c ? c->nsegs : 0;
}

pcw_segment *pcw_consumer_segment(const pcw_consumer *c, size_t i)
{
    return c && i < c->nsegs ? c->segs[i] : NULL;
}

size_t pcw_consumer_counterset_count(const pcw_consumer *c)
{
    return c ? c->nmerged : 0;
}

const pcw_merged_counterset *pcw_consumer_counterset(const pcw_consumer *c, size_t i)
{
    return c && i < c->nmerged ? &c->merged[i] : NULL;
}

const pcw_merged_counterset *pcw_consumer_find_counterset(const pcw_consumer *c, const char *name)
{
    if (!c || !name)
        return NULL;
    size_t n = strlen(name);
    for (size_t i = 0; i < c->nmerged; i++)
        if (pcw__name_equal(c->merged[i].meta->name, strlen(c->merged[i].meta->name), name, n))
            return &c->merged[i];
    return NULL;
}

int pcw_consumer_read(pcw_consumer *c, const pcw_merged_counterset *m, pcw_snapshot *snap,
                      unsigned flags, size_t *failed)
{
    if (!c || !m || !snap)
        return PCW_E_INVALID_PARAMETER;
    if (!(flags & PCW_READ_APPEND))
        pcw_snapshot_clear(snap);
    size_t bad = 0;
    for (size_t i = 0; i < m->source_count; i++) {
        /* pcw_segment_read refuses a segment index or registration that
         * is not this consumer's (a caller-made subset may hold one). */
        int rc = pcw_segment_read(pcw_consumer_segment(c, m->source_segment[i]), m->source_cset[i],
                                  snap, flags | PCW_READ_APPEND);
        if (rc == PCW_E_NO_MEMORY)
            return rc;
        if (rc != PCW_OK) {
            bad++;
            continue;
        }
        snap->sources[snap->nsources - 1].source = m->source_segment[i];
    }
    if (failed)
        *failed = bad;
    return PCW_OK;
}

struct stale {
    size_t removed;
};

/* Is the file `name` in dfd, owned by `uid`, provably abandoned: nobody
 * holds its liveness lock, and (for a .tmp) it has bytes, which its maker
 * writes only after taking the lock? Never follows a symlink. */
static int abandoned(int dfd, const char *name, uid_t uid, int need_bytes)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int dead = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid &&
               (!need_bytes || st.st_size > 0) && pcw__live_test(fd) == 0;
    close(fd);
    return dead;
}

static int stale_entry(pcw_consumer *c, const dir_entry *de, void *arg)
{
    (void)c;
    struct stale *st = (struct stale *)arg;
    if (pcw__is_tmp_name(de->name)) {
        /* A segment being made: left behind only if its provider died
         * inside pcw_provider_open. An empty one may be a maker that has
         * not locked it yet: it stays (it costs nothing). */
        if (abandoned(de->dfd, de->name, de->uid, 1) && unlinkat(de->dfd, de->name, 0) == 0)
            st->removed++;
        return PCW_OK;
    }
    if (!pcw__is_seg_name(de->name))
        return PCW_OK;
    pcw_segment *seg;
    int rc = pcw__segment_open_at(&seg, de->dfd, de->name, de->path, de->uid);
    int dead = 0;
    if (rc == PCW_OK) {
        dead = pcw_segment_alive(seg) == PCW_E_PROVIDER_EXITED;
        pcw_segment_close(seg);
    } else if (rc == PCW_E_CORRUPT || rc == PCW_E_VERSION) {
        /* Unreadable (damaged, or another layout version, perhaps from
         * before the liveness lock): unlocked, and the pid its name gives
         * is gone too. A pid that exists here may be another namespace's
         * provider's: it stays. */
        pid_t pid = pcw__name_pid(de->name);
        dead = abandoned(de->dfd, de->name, de->uid, 0) && pid > 0 && kill(pid, 0) != 0 &&
               errno == ESRCH;
    }
    if (!dead)
        return PCW_OK;
    if (unlinkat(de->dfd, de->name, 0) == 0)
        st->removed++;
    /* Its control socket, if any, shares its name. */
    char sock[NAME_MAX + 1];
    if (pcw__sibling(de->name, PCW_SOCK_SUFFIX, sock, sizeof sock) == 0)
        unlinkat(de->dfd, sock, 0);
    return PCW_OK;
}

int pcw_consumer_remove_stale(pcw_consumer *c, size_t *removed)
{
    if (!c)
        return PCW_E_INVALID_PARAMETER;
    struct stale st = {0};
    dir_visit v = {stale_entry, NULL, &st};
    /* Not in containers: their files are their own providers' and
     * consumers' to clean up (docs/containers.md). */
    int rc = for_each_dir(c, &v, 0);
    if (removed)
        *removed = st.removed;
    return rc;
}

/* ---- discovery, for tools that audit ------------------------------------- */

struct discover {
    pcw_discover_fn fn;
    void *arg;
};

static int discover_refused(pcw_consumer *c, const char *path, uid_t uid, const char *why,
                            void *arg)
{
    (void)c;
    struct discover *dv = (struct discover *)arg;
    pcw_discovered d = {path, uid, 0, 1, PCW_E_PERMISSION, why, NULL};
    return dv->fn(&d, dv->arg);
}

static int discover_entry(pcw_consumer *c, const dir_entry *de, void *arg)
{
    (void)c;
    struct discover *dv = (struct discover *)arg;
    if (!pcw__is_seg_name(de->name))
        return PCW_OK;
    pcw_discovered x = {de->path, de->uid, pcw__name_pid(de->name), 0, PCW_OK, NULL, NULL};
    x.status = open_entry(de, &x.seg);
    if (x.status != PCW_OK)
        x.why = pcw_status_str(x.status);
    int rc = dv->fn(&x, dv->arg);
    pcw_segment_close(x.seg);
    return rc;
}

int pcw_consumer_discover(pcw_consumer *c, pcw_discover_fn fn, void *arg)
{
    if (!c || !fn)
        return PCW_E_INVALID_PARAMETER;
    struct discover dv = {fn, arg};
    dir_visit v = {discover_entry, discover_refused, &dv};
    if (c->ctr) {
        int rc = pcw__ctr_update(c->ctr, 0);
        if (rc != PCW_OK)
            return rc;
    }
    return for_each_dir(c, &v, 1);
}

int pcw__consumer_containers_changed(pcw_consumer *c)
{
    return c && c->ctr ? pcw__ctr_changed(c->ctr) : 0;
}
