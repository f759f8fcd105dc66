/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/containers.h - providers in other mount namespaces
 * (containers): which namespaces there are, how each one's PCW_DIR is
 * reached without leaving its root, and who the providers in it are.
 * docs/containers.md says why it is built so.
 *
 * Cost: a walk of /proc stats /proc/<pid>/ns/mnt once per process
 * (O(processes)) and opens each namespace's root and PCW_DIR once, when the
 * namespace is first met (O(namespaces)). Walks happen at a consumer's
 * refresh only when one is due: a process was created since the last walk
 * (the last pid of /proc/loadavg moved), or the process a namespace was
 * reached by has exited (its pidfd). The steady-state check the query
 * layer makes at each collection (pcw__ctr_changed) is O(1) whatever the
 * number of namespaces: one epoll_wait over an inotify descriptor watching
 * every namespace's PCW_DIR and provider folders and over the pidfds, and
 * once per PCW__CTR_WALK_GAP_NS one read of /proc/loadavg.
 *
 * Concurrency: a pcw__ctr belongs to its pcw_consumer (one thread at a
 * time); nothing in it is shared.
 */
#ifndef PCW_CONSUMER_CONTAINERS_H
#define PCW_CONSUMER_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pcw/consumer.h"

/* The kernel's limit on lines of a uid_map (user_namespaces(7)). */
#define PCW__MAX_UID_EXTENTS 340
/* The most provider folders watched per namespace (pcw-<uid>: one per
 * user that ran a provider there); more are scanned, but a change in one
 * of those is seen only at the next refresh something else causes. */
#define PCW__CTR_MAX_FOLDERS 64
/* /proc/loadavg is looked at (has a process been created?) at most once
 * per this (1 s): a host that creates processes all the time is walked
 * once a second at most, never once per collection. */
#define PCW__CTR_WALK_GAP_NS 1000000000ull
/* The most bytes read of one /proc/<pid>/{cgroup,status,uid_map}. */
#define PCW__CTR_PROC_FILE_MAX 65536

/* The most bytes read of a runtime's config.json (annotations.c): a
 * container's spec holds its environment and mounts, tens of KiB. */
#define PCW__CTR_CONFIG_MAX (1024 * 1024)
/* The longest pod, namespace or container name taken from it: Kubernetes'
 * longest name (a DNS subdomain, 253). */
#define PCW__CTR_K8S_NAME_MAX 253

typedef struct pcw__uid_extent {
    uint32_t inner, outer, count;
} pcw__uid_extent;

/* One other mount namespace. */
typedef struct pcw__mntns {
    uint64_t ino, dev;     /* of /proc/<pid>/ns/mnt: the namespace */
    pid_t pid;             /* the process it is reached by */
    int pidfd;             /* that process (polled: has it exited?); -1 */
    int dirfd;             /* its PCW_DIR, opened inside its root; -1: none */
    char root[32];         /* "/proc/<pid>/root" */
    pcw__uid_extent *uids; /* its user namespace's uid_map */
    size_t nuids;          /* 0: the identity map (same user namespace) */
    pid_t *pids;           /* its processes at the last walk */
    pid_t *inner;          /* [npids] their innermost pids (NSpid); 0: unread */
    size_t npids, pids_cap;
    int seen; /* met by the walk in progress */
} pcw__mntns;

typedef struct pcw__ctr {
    char *dir;       /* PCW_DIR inside each namespace (absolute) */
    pcw__mntns **ns; /* stable pointers: segments refer to them */
    size_t n, cap;
    uint64_t self_ino, self_dev; /* the consumer's own mount namespace */
    long last_pid;               /* /proc/loadavg's last pid at the last walk */
    uint64_t walked_ns;          /* CLOCK_MONOTONIC of the last walk; 0: never */
    uint64_t checked_ns;         /* ...of the last look at /proc/loadavg */
    int epfd;                    /* epoll: infd and every namespace's pidfd; -1 */
    int infd;                    /* inotify: PCW_DIRs and provider folders; -1 */
} pcw__ctr;

/* A table for PCW_DIR `dir` inside each namespace (NULL: /dev/shm). */
int pcw__ctr_open(pcw__ctr **out, const char *dir);
void pcw__ctr_free(pcw__ctr *t);

/* Walk /proc if one is due (or `force`): find the namespaces, drop the
 * gone, reach the new. PCW_E_IO if /proc cannot be listed. */
int pcw__ctr_update(pcw__ctr *t, int force);

/* Cheap: 1 if a refresh may find something new (a walk is due, or a
 * namespace's folders changed since pcw__ctr_stamp), else 0. */
int pcw__ctr_changed(pcw__ctr *t);

/* Watch each namespace's folders from now on (call before scanning them,
 * so that a change made during the scan is seen next time). */
void pcw__ctr_stamp(pcw__ctr *t);

/* The uid outside of uid `inner` of ns's user namespace; (uid_t)-1 if it
 * is not mapped. */
uid_t pcw__ctr_map_uid(const pcw__mntns *ns, uid_t inner);

/* Who the provider of `seg`, found in ns, is: its container identity,
 * attached to the segment (pcw_segment_container). PCW_OK or
 * PCW_E_NO_MEMORY; what cannot be read is left "". */
int pcw__ctr_identify(pcw__mntns *ns, pcw_segment *seg);

/* Read at most cap - 1 bytes of a /proc file into buf, NUL-terminated
 * (bounded: a file's size says nothing about what /proc will give). Its
 * length, or -1. */
ssize_t pcw__read_proc(const char *path, char *buf, size_t cap);

/* Parse a cgroup path into runtime, container id and pod UID (identity.c,
 * docs/containers.md's table). Each out is a buffer of `cap` bytes, set
 * to "" when the path does not give it. */
void pcw__cgroup_ids(const char *cgroup, char *runtime, char *id, char *pod_uid, size_t cap);

/* The state root the runtimes' files are read below: "" (the host's /),
 * or $PCW_RUNTIME_ROOT if it is absolute (tests, a host root mounted
 * elsewhere: docs/containers.md). */
const char *pcw__ctr_state_root(void);

/* Kubernetes' names of container `id` of `runtime` (pcw__cgroup_ids'),
 * from the CRI annotations of the config.json the runtime keeps
 * (annotations.c): into pod, ns and name, PCW__CTR_K8S_NAME_MAX + 1 bytes
 * each, "" when not known. */
void pcw__ctr_k8s_names(const char *runtime, const char *id, char *pod, char *ns, char *name);

#endif /* PCW_CONSUMER_CONTAINERS_H */
