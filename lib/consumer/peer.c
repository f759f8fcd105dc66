/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/peer.c - who listens on a provider's control socket: the
 * proof that it is the segment's provider, in this pid namespace or in one
 * below it (docs/control-channel.md, "Who may answer", has the argument).
 *
 * The kernel names the listener (SO_PEERCRED: its uid, and its pid as
 * this consumer's pid namespace numbers it). The segment's header names
 * its provider by uid and by its pid in the provider's own namespace.
 *
 *   - same uid, always: the listener's (translated into this consumer's
 *     user namespace by the kernel) is the segment file's owner's (as this
 *     consumer's namespace sees it, from fstat). Not the header's: that is
 *     the provider's own namespace's view, which differs under a
 *     non-identity uid map (rootless podman's root is the host's 1000).
 *     The header's uid was checked against the owner, through the map,
 *     when the segment was opened;
 *   - a listener whose pid here is the header's is taken, as before
 *     namespaces, without reading /proc;
 *   - any other in this pid namespace (its /proc/<pid>/status NSpid has one
 *     level) is refused;
 *   - a listener in a pid namespace below this one must have the header's
 *     pid in its own (NSpid's last level) AND have the segment mapped for
 *     writing (a shared writable mapping of the same device and inode in
 *     its /proc/<pid>/maps). Those who can write the segment already
 *     decide everything a consumer reads from it; nobody else has such a
 *     mapping, whatever pid it has in whatever namespace.
 *   - a listener outside this namespace (SO_PEERCRED pid 0), one in a
 *     namespace below whose maps this consumer may not read, and any
 *     other where /proc cannot tell the levels (none mounted, another pid
 *     namespace's, status unreadable) is refused.
 *
 * /proc/<pid> is opened once and status and maps are read through that
 * descriptor, so both describe one process (a reused pid makes the reads
 * fail, not mix two processes).
 *
 * Concurrency: system calls on the caller's buffers; any thread.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "control.h"

/* The deepest pid namespace nesting Linux allows (MAX_PID_NS_LEVEL). */
#define NS_LEVELS 32
/* maps lines read between deadline checks. */
#define MAPS_BATCH 256

/* Is /proc this process's pid namespace's? /proc/self names our pid as
 * the mount's namespace numbers it; another namespace's /proc (a process
 * that made a pid namespace without mounting its own) would show other
 * processes under our peers' numbers. */
static int proc_is_ours(void)
{
    char buf[32];
    ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *end;
    long v = strtol(buf, &end, 10);
    return *end == 0 && v == (long)getpid();
}

/* The NSpid line of /proc/<pid>/status (proc: its directory): the pid
 * from this namespace's level down to the process's own. Its level count,
 * 0 if it cannot be read; a kernel without the line (before 4.1, no
 * nested view) gives one level, `pid`. */
static int ns_pids(int proc, pid_t pid, long out[NS_LEVELS])
{
    int fd = openat(proc, "status", O_RDONLY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char line[512]; /* NSpid: at most 32 pids of 10 digits */
    int n = -1;
    while (n < 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, "NSpid:", 6) != 0)
            continue;
        n = 0;
        for (char *p = line + 6, *end; n < NS_LEVELS; p = end) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            out[n++] = v;
        }
    }
    int complete = !ferror(f);
    fclose(f);
    if (n < 0 && complete) {
        out[0] = pid;
        n = 1;
    }
    return n < 0 ? 0 : n;
}

/* Does /proc/<pid>/maps (proc: its directory) have a shared writable
 * mapping of the file (dev, ino)? 1 yes, 0 no, -1 cannot tell (errno:
 * EACCES when we may not read it, ETIMEDOUT at the deadline, EIO). Work: one
 * line per mapping of the process, at most vm.max_map_count of them. */
static int mapped_for_writing(int proc, dev_t dev, ino_t ino, long long deadline)
{
    int fd = openat(proc, "maps", O_RDONLY | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int found = 0, late = 0;
    unsigned long lines = 0;
    while (!found && !late && getline(&line, &cap, f) > 0) {
        /* start-end perms offset major:minor inode [path]: the path is the
         * process's to choose (the kernel escapes newlines in it), never
         * parsed. */
        char perms[5];
        unsigned int maj, min;
        unsigned long long off, inode;
        if (sscanf(line, "%*x-%*x %4s %llx %x:%x %llu", perms, &off, &maj, &min, &inode) == 5 &&
            perms[1] == 'w' && perms[3] == 's' && maj == major(dev) && min == minor(dev) &&
            inode == (unsigned long long)ino)
            found = 1;
        late = ++lines % MAPS_BATCH == 0 && pcw__ctl_now_ms() >= deadline;
    }
    /* getline's -1 is the end or an error: only ferror tells them apart. */
    int failed = !found && !late && ferror(f);
    free(line);
    fclose(f);
    errno = late ? ETIMEDOUT : EIO;
    return found ? 1 : late || failed ? -1 : 0;
}

int pcw__ctl_peer_check(int fd, const pcw__ctl_conn *k, long long deadline)
{
    struct ucred cr;
    socklen_t l = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) != 0 || l != sizeof cr)
        return PCW_E_IO;
    if ((uint32_t)cr.uid != k->owner)
        return pcw__fail_detail(PCW_E_PERMISSION,
                                "control socket served by uid %u, not the segment's owner (uid %u)",
                                (unsigned)cr.uid, (unsigned)k->owner);
    if (cr.pid <= 0)
        return pcw__fail_detail(PCW_E_PERMISSION,
                                "control socket served by a process outside this consumer's pid "
                                "namespace");
    /* The process the header names, in this namespace: the rule from before
     * namespaces, and no /proc to read (a new connection for every
     * pcw_segment_collect: reading status would double its cost). */
    if (cr.pid == k->pid)
        return PCW_OK;
    char dir[32];
    snprintf(dir, sizeof dir, "/proc/%d", (int)cr.pid);
    int proc = proc_is_ours() ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    long ns[NS_LEVELS];
    int levels = proc >= 0 ? ns_pids(proc, cr.pid, ns) : 0;
    int rc = PCW_OK;
    if (levels == 0) {
        /* No /proc of ours to look through: nothing more to prove it. */
        rc = pcw__fail_detail(PCW_E_PERMISSION,
                              "control socket served by pid %d, not the segment's provider (pid "
                              "%d), and no /proc of this pid namespace to look further",
                              (int)cr.pid, (int)k->pid);
    } else if (ns[0] != cr.pid) {
        rc = pcw__fail_detail(PCW_E_PERMISSION, "/proc/%d/status names pid %ld: not this process",
                              (int)cr.pid, ns[0]);
    } else if (levels == 1) {
        /* In our pid namespace, where the header's pid is another's. */
        rc = pcw__fail_detail(PCW_E_PERMISSION,
                              "control socket served by pid %d, not the segment's provider (pid "
                              "%d)",
                              (int)cr.pid, (int)k->pid);
    } else if (ns[levels - 1] != k->pid) {
        rc = pcw__fail_detail(PCW_E_PERMISSION,
                              "control socket served by pid %d (pid %ld in its own pid "
                              "namespace), not the segment's provider (pid %d in its own)",
                              (int)cr.pid, ns[levels - 1], (int)k->pid);
    } else {
        int m = mapped_for_writing(proc, k->seg_dev, k->seg_ino, deadline);
        if (m == 0)
            rc = pcw__fail_detail(PCW_E_PERMISSION,
                                  "control socket served by pid %d (pid %ld in its own pid "
                                  "namespace), which does not have the segment mapped for writing",
                                  (int)cr.pid, ns[levels - 1]);
        else if (m < 0 && errno == ETIMEDOUT)
            rc = PCW_E_TIMEOUT;
        else if (m < 0)
            rc = pcw__fail_detail(PCW_E_PERMISSION,
                                  "cannot read /proc/%d/maps (%s) to prove that this listener, in "
                                  "another pid namespace, is the segment's provider",
                                  (int)cr.pid, strerror(errno));
    }
    if (proc >= 0)
        close(proc);
    return rc;
}
