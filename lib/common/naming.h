/* SPDX-License-Identifier: MIT */
/*
 * common/naming.h - where a provider's files live, what they are called, which
 * folders may be trusted, and how a provider shows it is alive: the one
 * place these rules are written.
 *
 * pcw-internal: shared by the provider's implementation
 * (lib/provider/) and libpcw (lib/consumer/). Applications use
 * pcw_provider_open, pcw_consumer_* and pcw_consumer_discover instead.
 *
 *   <root>                      options' dir, else $PCW_DIR, else /dev/shm
 *   <root>/pcw-<uid>/           a provider folder: <uid> in canonical
 *                               decimal; trusted only if it is a real
 *                               directory owned by <uid> and not writable
 *                               by group or others
 *   .../<pid>-<nonce>.seg       a provider's segment (<nonce>: 16 hex
 *                               digits, random)
 *   .../<pid>-<nonce>.sock      its control socket, if it has one
 *   .../.<pid>-<nonce>.tmp      a segment being made, renamed to .seg once
 *                               its header is complete (only where the
 *                               provider cannot make it unnamed, O_TMPFILE,
 *                               and link it into place)
 *
 * <pid> is the provider's pid in its own pid namespace: a name, never
 * evidence. Whether a provider lives is shown by its liveness lock: an
 * open-file-description lock (F_OFD_SETLK, F_RDLCK, whole file) that the
 * provider takes on its segment right after creating it, before it writes
 * a byte or gives it a name, and holds until its last descriptor of the
 * file closes (its exit, or pcw_provider_close). The kernel drops it when
 * the process dies, whatever namespace either side is in. A consumer tests it with
 * F_OFD_GETLK on its own read-only descriptor: it neither writes to the
 * segment nor takes anything. (A process that can read the segment could
 * also take a read lock and so keep a dead provider's file from being
 * removed; it cannot make a live one look dead.)
 *
 * Concurrency: pure functions and system calls on caller-owned buffers;
 * any thread.
 */
#ifndef PCW_NAMING_H
#define PCW_NAMING_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "layout.h"
#include "../pcw/types.h"

#ifndef F_OFD_SETLK
#error "common/naming.h needs _GNU_SOURCE (for F_OFD_SETLK): define it before your first #include"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define PCW__DIR_PREFIX  "pcw-"
#define PCW__TMP_SUFFIX  ".tmp"
#define PCW__NONCE_CHARS 16

/* ---- the root ------------------------------------------------------------ */

/* The root directory: `dir` if set, else $PCW_DIR if set, else
 * PCW_DEFAULT_ROOT. */
static inline const char *pcw__root(const char *dir)
{
    if (dir && *dir)
        return dir;
    const char *env = getenv(PCW_DIR_ENV);
    return env && *env ? env : PCW_DEFAULT_ROOT;
}

/* ---- provider folders ----------------------------------------------------- */

/* "pcw-<uid>" into buf; -1 if it does not fit. */
static inline int pcw__dir_name(char *buf, size_t cap, uid_t uid)
{
    int n = snprintf(buf, cap, PCW__DIR_PREFIX "%u", (unsigned)uid);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* Is `name` a provider folder's name? Only the canonical decimal form a
 * provider makes ("pcw-0", "pcw-1000"; not "pcw-+0", "pcw- 0", "pcw-00",
 * "pcw--1"). Sets *uid. */
static inline int pcw__parse_dir_name(const char *name, uid_t *uid)
{
    size_t pl = strlen(PCW__DIR_PREFIX);
    if (strncmp(name, PCW__DIR_PREFIX, pl) != 0)
        return 0;
    const char *d = name + pl;
    if (*d < '0' || *d > '9' || (*d == '0' && d[1]))
        return 0;
    uint64_t u = 0;
    for (; *d; d++) {
        if (*d < '0' || *d > '9')
            return 0;
        u = u * 10 + (uint64_t)(*d - '0');
        if (u > UINT32_MAX)
            return 0;
    }
    *uid = (uid_t)u;
    return 1;
}

/* Build a message in buf (cap bytes) from NULL-terminated pieces, cut
 * short if need be (no format string, so no path can be misread as one). */
static inline void pcw__say(char *buf, size_t cap, ...)
{
    if (!buf || !cap)
        return;
    size_t n = 0;
    va_list ap;
    va_start(ap, cap);
    for (const char *s; (s = va_arg(ap, const char *)) != NULL;) {
        size_t k = strlen(s);
        if (k > cap - 1 - n)
            k = cap - 1 - n;
        memcpy(buf + n, s, k);
        n += k;
    }
    va_end(ap);
    buf[n] = 0;
}

/* A number as text, for pcw__say. */
typedef struct pcw__num {
    char s[24];
} pcw__num;

static inline pcw__num pcw__u(unsigned long long v, int octal)
{
    pcw__num n;
    snprintf(n.s, sizeof n.s, octal ? "%03llo" : "%llu", v);
    return n;
}

/* What to do about an untrusted provider folder. */
#define PCW__DIR_FIX                                                                               \
    "remove it (as root if it is not yours), or set PCW_DIR to a directory only you can "          \
    "write, such as $XDG_RUNTIME_DIR"

/* May a provider folder, opened with O_DIRECTORY | O_NOFOLLOW (so not a
 * symlink) and fstat'ed into *st, be trusted as <uid>'s? PCW_OK, or
 * PCW_E_PERMISSION with a sentence in why (may be NULL) saying what is
 * wrong and how to fix it; `path` names the folder in it. */
static inline int pcw__dir_check(const struct stat *st, uid_t uid, const char *path, char *why,
                                 size_t cap)
{
    if (S_ISDIR(st->st_mode) && st->st_uid == uid && !(st->st_mode & 0022))
        return PCW_OK;
    pcw__num owner = pcw__u(st->st_uid, 0), want = pcw__u(uid, 0);
    pcw__num mode = pcw__u(st->st_mode & 0777, 1);
    if (!S_ISDIR(st->st_mode))
        pcw__say(why, cap, path, " is not a directory: " PCW__DIR_FIX, (char *)NULL);
    else if (st->st_uid != uid)
        pcw__say(why, cap, path, " is owned by uid ", owner.s, ", not uid ", want.s,
                 ": someone else created it, perhaps to block or spoof uid ", want.s,
                 "'s providers; " PCW__DIR_FIX, (char *)NULL);
    else
        pcw__say(why, cap, path, " is writable by ", (st->st_mode & 0002) ? "others" : "its group",
                 " (mode ", mode.s,
                 "), so they could plant files in it: chmod go-w it, or " PCW__DIR_FIX,
                 (char *)NULL);
    return PCW_E_PERMISSION;
}

/* The sentence for a provider folder that open(O_DIRECTORY | O_NOFOLLOW)
 * refused with errno `e`. */
static inline void pcw__dir_open_why(int e, const char *path, char *why, size_t cap)
{
    if (e == ELOOP || e == ENOTDIR)
        pcw__say(why, cap, path,
                 " is a symbolic link or not a directory, perhaps planted to redirect "
                 "providers' files; " PCW__DIR_FIX,
                 (char *)NULL);
    else
        pcw__say(why, cap, path, ": ", strerror(e), (char *)NULL);
}

/* ---- file names ---------------------------------------------------------- */

/* "<pid>-<nonce>.seg" (or .sock) / ".<pid>-<nonce>.tmp" into buf; -1 if
 * it does not fit. */
static inline int pcw__file_name(char *buf, size_t cap, pid_t pid, uint64_t nonce,
                                 const char *suffix)
{
    int tmp = strcmp(suffix, PCW__TMP_SUFFIX) == 0;
    int n = snprintf(buf, cap, "%s%d-%016llx%s", tmp ? "." : "", (int)pid,
                     (unsigned long long)nonce, suffix);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static inline int pcw__has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n > s && strcmp(name + n - s, suffix) == 0;
}

/* A segment's name (not a dot-file)? */
static inline int pcw__is_seg_name(const char *name)
{
    return name[0] != '.' && pcw__has_suffix(name, PCW_SEG_SUFFIX);
}

/* A segment being made? */
static inline int pcw__is_tmp_name(const char *name)
{
    return name[0] == '.' && pcw__has_suffix(name, PCW__TMP_SUFFIX);
}

/* The pid a segment's (or .tmp's) name starts with; 0 if none. A name,
 * not evidence: it is the pid in the provider's own namespace. */
static inline pid_t pcw__name_pid(const char *name)
{
    const char *p = name[0] == '.' ? name + 1 : name;
    long v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        if ((v = v * 10 + (*p - '0')) > INT_MAX)
            return 0;
    return *p == '-' ? (pid_t)v : 0;
}

/* A segment's path (or name) with .seg replaced by `suffix`; -1 if `seg`
 * is not a segment's or the result does not fit. */
static inline int pcw__sibling(const char *seg, const char *suffix, char *out, size_t cap)
{
    size_t n = strlen(seg), sl = strlen(PCW_SEG_SUFFIX);
    if (!pcw__has_suffix(seg, PCW_SEG_SUFFIX) || n - sl + strlen(suffix) >= cap)
        return -1;
    memcpy(out, seg, n - sl);
    strcpy(out + n - sl, suffix);
    return 0;
}

/* ---- another mount namespace's files ------------------------------------ */

/* Without openat2 (Linux before 5.6): one component at a time, each with
 * O_NOFOLLOW, refusing "..". */
static inline int pcw__open_by_components(int rootfd, const char *rel, int flags)
{
    int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    for (const char *p = rel; fd >= 0;) {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        const char *rest = p + n;
        while (*rest == '/')
            rest++;
        char comp[NAME_MAX + 1];
        if (n == 0 || n > NAME_MAX || (n == 2 && p[0] == '.' && p[1] == '.')) {
            close(fd);
            errno = n == 2 ? EXDEV : EINVAL;
            return -1;
        }
        memcpy(comp, p, n);
        comp[n] = 0;
        int last = !*rest;
        int nfd = openat(fd, comp, (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        if (last)
            return nfd;
        fd = nfd, p = rest;
    }
    return -1;
}

/* Open `rel` inside the directory rootfd - another mount namespace's root
 * (/proc/<pid>/root), hostile - as if it were "/": no symbolic link is
 * followed (a container's absolute symlink would resolve against our
 * root) and ".." stays inside. O_NOFOLLOW and O_CLOEXEC are added to
 * flags. -1 with errno. docs/containers.md, "Security". */
static inline int pcw__open_beneath(int rootfd, const char *rel, int flags)
{
    while (*rel == '/')
        rel++;
    if (!*rel)
        rel = ".";
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
    if (fd < 0 && errno == ENOSYS)
        return pcw__open_by_components(rootfd, rel, flags);
    return (int)fd;
}

/* Is `path` one under another mount namespace's root, "/proc/<pid>/root/..."
 * (as container discovery names segments)? The length of that root
 * ("/proc/<pid>/root"), or 0. */
static inline size_t pcw__ns_root_len(const char *path)
{
    if (strncmp(path, "/proc/", 6) != 0)
        return 0;
    const char *p = path + 6;
    while (*p >= '0' && *p <= '9')
        p++;
    if (p == path + 6 || strncmp(p, "/root/", 6) != 0)
        return 0;
    return (size_t)(p + 5 - path);
}

/* A connectable address for an existing socket under another namespace's
 * root: the socket opened O_PATH beneath that root, without following a
 * symlink, checked to be a socket, and named /proc/self/fd/<fd> (*fd:
 * close it after connect). */
static inline int pcw__ns_sock_addr(const char *path, size_t root_len, struct sockaddr_un *a,
                                    int *fd)
{
    char root[64], dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (root_len >= sizeof root || (size_t)(slash - path) < root_len ||
        (size_t)(slash - path - root_len) >= sizeof dir)
        return PCW_E_INVALID_PARAMETER;
    memcpy(root, path, root_len), root[root_len] = 0;
    memcpy(dir, path + root_len, (size_t)(slash - path) - root_len);
    dir[slash - path - root_len] = 0;
    int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int dfd = rfd >= 0 ? pcw__open_beneath(rfd, dir, O_PATH | O_DIRECTORY) : -1;
    int e = errno;
    if (rfd >= 0)
        close(rfd);
    *fd = dfd >= 0 ? openat(dfd, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC) : -1;
    e = dfd >= 0 ? errno : e;
    if (dfd >= 0)
        close(dfd);
    struct stat st;
    if (*fd < 0)
        return e == ENOENT                ? PCW_E_NOT_FOUND
               : e == ELOOP || e == EXDEV ? PCW_E_PERMISSION
                                          : PCW_E_IO;
    if (fstat(*fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        close(*fd);
        *fd = -1;
        return PCW_E_PERMISSION; /* a symlink, a FIFO, a file: not a socket */
    }
    snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d", *fd);
    return PCW_OK;
}

/* Fill a sockaddr_un for the socket at `path`; a path too long for
 * sun_path goes through /proc/self/fd/<dirfd>/<name> (*dirfd is opened
 * then: close it after bind or connect; else it is -1). A path under
 * another mount namespace's root (a container's provider) must name an
 * existing socket, reached without leaving that root
 * (pcw__ns_sock_addr; *dirfd is then the socket's). */
static inline int pcw__sock_addr(const char *path, struct sockaddr_un *a, int *dirfd)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    *dirfd = -1;
    size_t root_len = pcw__ns_root_len(path);
    if (root_len)
        return pcw__ns_sock_addr(path, root_len, a, dirfd);
    size_t n = strlen(path);
    if (n < sizeof a->sun_path) {
        memcpy(a->sun_path, path, n + 1);
        return PCW_OK;
    }
    const char *slash = strrchr(path, '/');
    if (!slash)
        return PCW_E_INVALID_PARAMETER;
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path) >= sizeof dir)
        return PCW_E_INVALID_PARAMETER;
    *dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (*dirfd < 0)
        return errno == ENOENT ? PCW_E_NOT_FOUND : PCW_E_IO;
    if ((size_t)snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/%s", *dirfd,
                         slash + 1) >= sizeof a->sun_path) {
        close(*dirfd);
        *dirfd = -1;
        return PCW_E_INVALID_PARAMETER;
    }
    return PCW_OK;
}

/* ---- the liveness lock ----------------------------------------------------- */

/* Provider: take the liveness lock on the segment being made (fd open for
 * reading). 0, or -1 with errno. */
static inline int pcw__live_lock(int fd)
{
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = F_RDLCK;
    l.l_whence = SEEK_SET; /* l_start = l_len = 0: the whole file */
    return fcntl(fd, F_OFD_SETLK, &l);
}

/* Consumer: does someone hold the liveness lock of the file open on fd
 * (read-only is enough)? 1 held, 0 not (its provider is gone), -1 cannot
 * tell (the file system has no such locks). */
static inline int pcw__live_test(int fd)
{
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = F_WRLCK; /* conflicts with any lock */
    l.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &l) != 0)
        return -1;
    return l.l_type != F_UNLCK;
}

#ifdef __cplusplus
}
#endif
#endif /* PCW_NAMING_H */
