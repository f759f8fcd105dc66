/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/containers.c - find the other mount namespaces (containers)
 * and reach each one's PCW_DIR without ever leaving its root
 * (containers.h; docs/containers.md, "Security").
 *
 * A container is hostile: everything under /proc/<pid>/root is its to
 * arrange. Its PCW_DIR is opened with openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) below the root's descriptor,
 * so no symlink is followed and ".." stays inside; everything under it is
 * opened one component at a time with O_NOFOLLOW (consumer.c, segment.c).
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "containers.h"
#include "internal.h"
#include "common/layout.h"
#include "common/naming.h"

int pcw__ctr_open(pcw__ctr **out, const char *dir)
{
    *out = NULL;
    if (!dir || !*dir)
        dir = PCW_DEFAULT_ROOT;
    if (dir[0] != '/')
        return PCW_E_INVALID_PARAMETER; /* a path inside each root */
    pcw__ctr *t = calloc(1, sizeof *t);
    if (!t || !(t->dir = strdup(dir))) {
        free(t);
        return PCW_E_NO_MEMORY;
    }
    /* Without them (the inotify limits reached), every check says "changed":
     * container folders are then scanned at each refresh, /proc walked
     * no more often than with them. */
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    t->infd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    if (t->epfd >= 0 && t->infd >= 0)
        (void)epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->infd, &ev);
    *out = t;
    return PCW_OK;
}

static void ns_free(pcw__mntns *ns)
{
    if (ns->pidfd >= 0)
        close(ns->pidfd);
    if (ns->dirfd >= 0)
        close(ns->dirfd);
    free(ns->uids);
    free(ns->pids);
    free(ns->inner);
    free(ns);
}

void pcw__ctr_free(pcw__ctr *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        ns_free(t->ns[i]);
    free(t->ns);
    free(t->dir);
    if (t->epfd >= 0)
        close(t->epfd);
    if (t->infd >= 0)
        close(t->infd);
    free(t);
}

/* ---- reading /proc -------------------------------------------------------- */

ssize_t pcw__read_proc(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n < cap - 1) {
        ssize_t k = read(fd, buf + n, cap - 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    close(fd);
    buf[n] = 0;
    return (ssize_t)n;
}

/* The pid most recently created in this pid namespace: the last field of
 * /proc/loadavg. It moves whenever any process is created anywhere below
 * (a child namespace's pid is also one here). -1 if unreadable. */
static long last_pid(void)
{
    char buf[128];
    if (pcw__read_proc("/proc/loadavg", buf, sizeof buf) <= 0)
        return -1;
    const char *sp = strrchr(buf, ' ');
    return sp ? strtol(sp + 1, NULL, 10) : -1;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A /proc entry's name as a pid; 0 if it is not one. */
static pid_t parse_pid(const char *s)
{
    long v = 0;
    if (!*s)
        return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || (v = v * 10 + (*s - '0')) > INT32_MAX)
            return 0;
    }
    return (pid_t)v;
}

/* ---- the walk ------------------------------------------------------------- */

static int ns_cmp(const void *a, const void *b)
{
    const pcw__mntns *x = (const pcw__mntns *)a, *y = (const pcw__mntns *)b;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return x->dev < y->dev ? -1 : x->dev > y->dev;
}

static void no_free(void *p)
{
    (void)p;
}

static pcw__mntns *ns_add(pcw__ctr *t, const struct stat *st)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        pcw__mntns **v = realloc(t->ns, cap * sizeof *v);
        if (!v)
            return NULL;
        t->ns = v, t->cap = cap;
    }
    pcw__mntns *ns = calloc(1, sizeof *ns);
    if (!ns)
        return NULL;
    ns->ino = (uint64_t)st->st_ino, ns->dev = (uint64_t)st->st_dev;
    ns->pidfd = ns->dirfd = -1;
    t->ns[t->n++] = ns;
    return ns;
}

static int ns_push_pid(pcw__mntns *ns, pid_t pid)
{
    if (ns->npids == ns->pids_cap) {
        size_t cap = ns->pids_cap ? ns->pids_cap * 2 : 8;
        pid_t *v = realloc(ns->pids, cap * sizeof *v);
        if (!v)
            return -1;
        ns->pids = v;
        pid_t *w = realloc(ns->inner, cap * sizeof *w);
        if (!w)
            return -1;
        ns->inner = w, ns->pids_cap = cap;
    }
    ns->inner[ns->npids] = 0;
    ns->pids[ns->npids++] = pid;
    return 0;
}

/* Has the process ns is reached by exited? */
static int ns_rep_gone(const pcw__mntns *ns)
{
    if (ns->pidfd < 0)
        return 1;
    struct pollfd p = {ns->pidfd, POLLIN, 0};
    return poll(&p, 1, 0) != 0;
}

/* Parse a uid_map; nuids = 0 for the identity map. */
static void read_uid_map(pcw__mntns *ns, pid_t pid)
{
    char path[64], *buf = malloc(PCW__CTR_PROC_FILE_MAX);
    free(ns->uids);
    ns->uids = NULL, ns->nuids = 0;
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    if (!buf || pcw__read_proc(path, buf, PCW__CTR_PROC_FILE_MAX) <= 0) {
        free(buf);
        return;
    }
    pcw__uid_extent e[PCW__MAX_UID_EXTENTS];
    size_t n = 0;
    for (char *line = buf; *line && n < PCW__MAX_UID_EXTENTS;) {
        unsigned long a, b, c;
        if (sscanf(line, "%lu %lu %lu", &a, &b, &c) == 3)
            e[n++] = (pcw__uid_extent){(uint32_t)a, (uint32_t)b, (uint32_t)c};
        char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    free(buf);
    if (n == 1 && e[0].inner == 0 && e[0].outer == 0 && e[0].count == UINT32_MAX)
        return; /* the initial user namespace's: identity */
    /* Unmapped (n == 0) stays an empty, non-NULL map: nothing maps. */
    ns->uids = malloc((n ? n : 1) * sizeof *ns->uids);
    if (ns->uids) {
        memcpy(ns->uids, e, n * sizeof *e);
        ns->nuids = n ? n : 1;
        if (!n)
            ns->uids[0] = (pcw__uid_extent){0, 0, 0};
    }
}

uid_t pcw__ctr_map_uid(const pcw__mntns *ns, uid_t inner)
{
    if (!ns || !ns->uids)
        return inner;
    for (size_t i = 0; i < ns->nuids; i++) {
        const pcw__uid_extent *e = &ns->uids[i];
        if ((uint64_t)inner >= e->inner && (uint64_t)inner < (uint64_t)e->inner + e->count)
            return (uid_t)(e->outer + (inner - e->inner));
    }
    return (uid_t)-1;
}

/* Reach ns through one of its processes: a pidfd first (so the pid cannot
 * be another process's while we look), its root, its namespace checked
 * again, then its PCW_DIR below the root. */
static void ns_reach(pcw__ctr *t, pcw__mntns *ns)
{
    if (ns->pidfd >= 0)
        close(ns->pidfd);
    if (ns->dirfd >= 0)
        close(ns->dirfd);
    ns->pidfd = ns->dirfd = -1;
    for (size_t i = 0; i < ns->npids; i++) {
        pid_t pid = ns->pids[i];
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
        int rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
        struct stat st;
        ns->pidfd = pidfd;
        if (rootfd < 0 || stat(path, &st) != 0 || (uint64_t)st.st_ino != ns->ino ||
            (uint64_t)st.st_dev != ns->dev || ns_rep_gone(ns)) {
            if (rootfd >= 0)
                close(rootfd);
            close(pidfd);
            ns->pidfd = -1;
            continue;
        }
        ns->pid = pid;
        snprintf(ns->root, sizeof ns->root, "/proc/%d/root", (int)pid);
        struct epoll_event ev = {.events = EPOLLIN};
        if (t->epfd >= 0) /* closing the pidfd takes it out again */
            (void)epoll_ctl(t->epfd, EPOLL_CTL_ADD, pidfd, &ev);
        ns->dirfd = pcw__open_beneath(rootfd, t->dir, O_RDONLY | O_DIRECTORY);
        close(rootfd);
        read_uid_map(ns, pid);
        return;
    }
}

/* A walk is due: never made, a process created since, or a reached
 * namespace's process gone. (One that could not be reached - none of its
 * processes let us in - is tried again at the next walk, not a cause of
 * one: else it would make every refresh walk.) */
static int walk_due(const pcw__ctr *t)
{
    if (!t->walked_ns || last_pid() != t->last_pid)
        return 1;
    for (size_t i = 0; i < t->n; i++)
        if (t->ns[i]->pidfd >= 0 && ns_rep_gone(t->ns[i]))
            return 1;
    return 0;
}

/* Drop the namespaces the walk did not meet; reach the new ones and those
 * whose process has gone. */
static void settle(pcw__ctr *t)
{
    size_t at = 0;
    for (size_t i = 0; i < t->n; i++) {
        pcw__mntns *ns = t->ns[i];
        if (!ns->seen) {
            ns_free(ns);
            continue;
        }
        if (ns_rep_gone(ns))
            ns_reach(t, ns);
        t->ns[at++] = ns;
    }
    t->n = at;
}

int pcw__ctr_update(pcw__ctr *t, int force)
{
    if (!force && !walk_due(t))
        return PCW_OK;
    long lp = last_pid();
    struct stat self;
    if (stat("/proc/self/ns/mnt", &self) != 0)
        return PCW_E_IO;
    t->self_ino = (uint64_t)self.st_ino, t->self_dev = (uint64_t)self.st_dev;
    DIR *d = opendir("/proc");
    if (!d)
        return PCW_E_IO;
    void *tree = NULL;
    int rc = PCW_OK;
    for (size_t i = 0; i < t->n; i++) {
        t->ns[i]->seen = 0, t->ns[i]->npids = 0;
        if (!tsearch(t->ns[i], &tree, ns_cmp))
            rc = PCW_E_NO_MEMORY;
    }
    struct dirent *e;
    while (rc == PCW_OK && (e = readdir(d)) != NULL) {
        pid_t pid = parse_pid(e->d_name);
        if (!pid)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
        struct stat st;
        /* Fails (EACCES) for a process this consumer may not ptrace-read:
         * it stays unseen, as it was before. */
        if (stat(path, &st) != 0 ||
            ((uint64_t)st.st_ino == t->self_ino && (uint64_t)st.st_dev == t->self_dev))
            continue;
        pcw__mntns key = {.ino = (uint64_t)st.st_ino, .dev = (uint64_t)st.st_dev};
        void **hit = tfind(&key, &tree, ns_cmp);
        pcw__mntns *ns = hit ? (pcw__mntns *)*hit : ns_add(t, &st);
        if (!ns || (!hit && !tsearch(ns, &tree, ns_cmp)) || ns_push_pid(ns, pid) != 0) {
            rc = PCW_E_NO_MEMORY;
            break;
        }
        ns->seen = 1;
    }
    closedir(d);
    tdestroy(tree, no_free);
    if (rc != PCW_OK)
        return rc;
    settle(t);
    t->last_pid = lp;
    t->walked_ns = t->checked_ns = mono_ns();
    return PCW_OK;
}

/* ---- change detection ----------------------------------------------------- */

/* What changes a namespace's folders: a provider's segment (or socket, or
 * folder) made, renamed into place, or removed. */
#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF)

/* Watch the directory open on fd (through our own /proc/self/fd link,
 * which leads to the directory opened inside the root, not to a path the
 * container could change). */
static void watch_fd(pcw__ctr *t, int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    (void)inotify_add_watch(t->infd, path, WATCH_MASK | IN_ONLYDIR);
}

void pcw__ctr_stamp(pcw__ctr *t)
{
    if (t->infd < 0)
        return;
    /* Drain first: what happens from now on is seen next time. */
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    while (read(t->infd, buf, sizeof buf) > 0)
        ;
    for (size_t i = 0; i < t->n; i++) {
        pcw__mntns *ns = t->ns[i];
        if (ns->dirfd < 0)
            continue;
        watch_fd(t, ns->dirfd);
        int fd = openat(ns->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        struct dirent *e;
        size_t k = 0;
        while ((e = readdir(d)) != NULL && k < PCW__CTR_MAX_FOLDERS) {
            if (strncmp(e->d_name, "pcw-", 4) != 0)
                continue;
            int ffd = openat(ns->dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (ffd >= 0) {
                watch_fd(t, ffd); /* the watch stays on the folder */
                close(ffd);
                k++;
            }
        }
        closedir(d);
    }
}

int pcw__ctr_changed(pcw__ctr *t)
{
    if (!t->walked_ns || t->epfd < 0 || t->infd < 0)
        return 1;
    /* One call for every namespace: a folder changed (inotify), or a
     * process a namespace was reached by exited (its pidfd). */
    struct epoll_event ev[4];
    if (epoll_wait(t->epfd, ev, 4, 0) > 0)
        return 1;
    /* New namespaces: only if a process was created since the walk, looked
     * at once per PCW__CTR_WALK_GAP_NS. */
    uint64_t now = mono_ns();
    if (now - t->checked_ns < PCW__CTR_WALK_GAP_NS)
        return 0;
    t->checked_ns = now;
    return last_pid() != t->last_pid;
}
