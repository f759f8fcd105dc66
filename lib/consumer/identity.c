/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/identity.c - who a provider in another mount namespace is:
 * its pid here (NSpid), its cgroup, and what the container runtimes'
 * cgroup naming conventions say of it (docs/containers.md, "Identity").
 *
 * Everything comes from the kernel's /proc files of the provider's
 * process, not from the provider's segment, except the pid in its own
 * namespace and its start time, which only choose among the processes
 * the kernel lists in its mount namespace.
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "containers.h"
#include "internal.h"

/* ---- cgroup naming conventions ------------------------------------------ */

static int is_hex_id(const char *s, size_t n)
{
    if (n != 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

static void put(char *out, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(out, s, n);
    out[n] = 0;
}

/* Unit prefixes that end in a container id (systemd cgroup driver:
 * "<prefix><id>.scope"; cgroupfs drivers: "<prefix><id>"). The conmon
 * units ("libpod-conmon-", "crio-conmon-") are the monitor, not the
 * container: their id does not match is_hex_id after the prefix. */
static const struct {
    const char *prefix, *runtime;
} unit_prefixes[] = {
    {"docker-", "docker"}, {"libpod-", "podman"},      {"cri-containerd-", "containerd"},
    {"crio-", "cri-o"},    {"nerdctl-", "containerd"},
};

/* A Kubernetes pod UID in a component: "pod<uid>" (cgroupfs driver) or
 * "kubepods-<qos>-pod<uid>.slice" with '_' for '-' (systemd driver). */
static int pod_uid_of(const char *c, size_t n, char *out, size_t cap)
{
    const char *p = NULL;
    if (n > 3 && strncmp(c, "pod", 3) == 0)
        p = c + 3;
    for (size_t i = 0; !p && i + 4 < n; i++)
        if (strncmp(c + i, "-pod", 4) == 0)
            p = c + i + 4;
    if (!p || (size_t)(c + n - p) < 36)
        return 0;
    char uid[37];
    for (int i = 0; i < 36; i++) {
        char ch = p[i] == '_' ? '-' : p[i];
        int dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? ch != '-' : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return 0;
        uid[i] = ch;
    }
    uid[36] = 0;
    put(out, cap, uid, 36);
    return 1;
}

/* The outermost component that names a container wins: those are the
 * runtime's, while a container given a cgroup subtree of its own (a
 * delegated cgroup namespace) may create children named as it likes,
 * another container's id included. */
void pcw__cgroup_ids(const char *cgroup, char *runtime, char *id, char *pod_uid, size_t cap)
{
    runtime[0] = id[0] = pod_uid[0] = 0;
    const char *prev = NULL;
    size_t prev_n = 0;
    for (const char *c = cgroup; *c && !id[0];) {
        while (*c == '/')
            c++;
        size_t n = strcspn(c, "/");
        if (!n)
            break;
        size_t m = n;
        if (m > 6 && strncmp(c + m - 6, ".scope", 6) == 0)
            m -= 6;
        if (!pod_uid[0])
            pod_uid_of(c, n, pod_uid, cap);
        for (size_t i = 0; i < sizeof unit_prefixes / sizeof *unit_prefixes; i++) {
            size_t pl = strlen(unit_prefixes[i].prefix);
            if (m > pl && strncmp(c, unit_prefixes[i].prefix, pl) == 0 &&
                is_hex_id(c + pl, m - pl)) {
                put(runtime, cap, unit_prefixes[i].runtime, strlen(unit_prefixes[i].runtime));
                put(id, cap, c + pl, m - pl);
            }
        }
        if (is_hex_id(c, m)) { /* cgroupfs driver: a bare id */
            put(id, cap, c, m);
            /* Docker's cgroupfs driver puts it under /docker/. */
            if (prev && prev_n == 6 && strncmp(prev, "docker", 6) == 0)
                put(runtime, cap, "docker", 6);
            else
                runtime[0] = 0;
        }
        prev = c, prev_n = n;
        c += n;
    }
}

/* ---- the provider's process ---------------------------------------------- */

/* Its innermost pid (the last NSpid field of /proc/<pid>/status); -1 if
 * unreadable. */
static pid_t inner_pid(pid_t pid, char *buf)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (pcw__read_proc(path, buf, PCW__CTR_PROC_FILE_MAX) <= 0)
        return -1;
    const char *l = strstr(buf, "\nNSpid:");
    if (!l)
        return -1;
    l += 7;
    long v = -1;
    for (;;) {
        char *end;
        long x = strtol(l, &end, 10);
        if (end == l)
            break;
        v = x, l = end;
    }
    return (pid_t)v;
}

/* Field 22 of /proc/<pid>/stat: the start time the provider wrote in its
 * header (pcw/layout.h). 0 if unreadable. */
static uint64_t start_time(pid_t pid, char *buf)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (pcw__read_proc(path, buf, PCW__CTR_PROC_FILE_MAX) <= 0)
        return 0;
    const char *p = strrchr(buf, ')'); /* comm may hold anything but ')' last */
    for (int f = 2; p && f < 22; f++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The pid here of the process of ns whose innermost pid is `inner` and
 * which started at `start` (the header's); failing that, the only one
 * whose innermost pid is `inner` (a provider whose pid namespace has no
 * /proc of its own read another process's start time). 0 if none is. */
static pid_t host_pid(pcw__mntns *ns, pid_t inner, uint64_t start, char *buf)
{
    pid_t only = 0;
    size_t matches = 0;
    for (size_t i = 0; i < ns->npids; i++) {
        if (!ns->inner[i])
            ns->inner[i] = inner_pid(ns->pids[i], buf);
        if (ns->inner[i] != inner)
            continue;
        if (start_time(ns->pids[i], buf) == start)
            return ns->pids[i];
        only = ns->pids[i], matches++;
    }
    return matches == 1 ? only : 0;
}

/* Its cgroup: the path that names a container, cgroup v2's ("0::<path>")
 * tried first, then each v1 hierarchy's (a hybrid host's runtime may use
 * only those); else v2's path, else the first line's. The ids go into
 * runtime, id and pod (cap bytes each). */
static void cgroup_of(pid_t pid, char *buf, char *out, size_t outcap, char *runtime, char *id,
                      char *pod, size_t cap)
{
    char path[64];
    out[0] = runtime[0] = id[0] = pod[0] = 0;
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    if (pcw__read_proc(path, buf, PCW__CTR_PROC_FILE_MAX) <= 0)
        return;
    for (int pass = 0; pass < 2; pass++)
        for (char *l = buf; *l;) {
            size_t n = strcspn(l, "\n");
            const char *at = memchr(l, ':', n);
            at = at ? memchr(at + 1, ':', n - (size_t)(at + 1 - l)) : NULL;
            int v2 = strncmp(l, "0::", 3) == 0;
            if (at && v2 == !pass) {
                at++;
                char cg[4096];
                put(cg, sizeof cg, at, n - (size_t)(at - l));
                if (!out[0] || v2)
                    put(out, outcap, cg, strlen(cg));
                pcw__cgroup_ids(cg, runtime, id, pod, cap);
                if (id[0]) {
                    put(out, outcap, cg, strlen(cg));
                    return;
                }
            }
            l += n + (l[n] == '\n');
        }
    runtime[0] = pod[0] = 0;
}

int pcw__ctr_identify(pcw__mntns *ns, pcw_segment *seg)
{
    char *buf = malloc(PCW__CTR_PROC_FILE_MAX);
    char cg[4096], runtime[80], id[80], pod[80];
    char kpod[PCW__CTR_K8S_NAME_MAX + 1], kns[sizeof kpod], kname[sizeof kpod];
    if (!buf)
        return PCW_E_NO_MEMORY;
    pid_t host = host_pid(ns, seg->info.pid, seg->info.start_time, buf);
    cgroup_of(host ? host : ns->pid, buf, cg, sizeof cg, runtime, id, pod, sizeof id);
    free(buf);
    pcw__ctr_k8s_names(runtime, id, kpod, kns, kname);
    size_t lr = strlen(ns->root) + 1, lc = strlen(cg) + 1, lt = strlen(runtime) + 1,
           li = strlen(id) + 1, lp = strlen(pod) + 1, lkp = strlen(kpod) + 1, lkn = strlen(kns) + 1,
           lkc = strlen(kname) + 1;
    pcw_container_info *ci = calloc(1, sizeof *ci + lr + lc + lt + li + lp + lkp + lkn + lkc);
    if (!ci)
        return PCW_E_NO_MEMORY;
    char *s = (char *)(ci + 1);
    ci->root = memcpy(s, ns->root, lr), s += lr;
    ci->cgroup = memcpy(s, cg, lc), s += lc;
    ci->runtime = memcpy(s, runtime, lt), s += lt;
    ci->id = memcpy(s, id, li), s += li;
    ci->pod_uid = memcpy(s, pod, lp), s += lp;
    ci->pod = memcpy(s, kpod, lkp), s += lkp;
    ci->pod_namespace = memcpy(s, kns, lkn), s += lkn;
    ci->container_name = memcpy(s, kname, lkc);
    ci->mnt_ns = ns->ino;
    ci->host_pid = host;
    ci->ns_pid = seg->info.pid;
    free(seg->container);
    seg->container = ci;
    return PCW_OK;
}
