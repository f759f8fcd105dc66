/* SPDX-License-Identifier: MIT */
/*
 * bench/containers.c - discovery across mount namespaces
 * (docs/containers.md): 100 namespaces of 10 processes each (1,000
 * processes), made with real `unshare --mount --pid --fork --mount-proc`,
 * each with its own tmpfs on /dev/shm. Needs root (skipped otherwise).
 *
 *   containers/discover/100   a consumer opened with `containers`, its first
 *                             refresh (a walk of /proc, every namespace
 *                             reached: root, PCW_DIR, uid_map, pidfd), closed
 *   containers/walk/100       a walk of /proc with every namespace known
 *                             already (what a refresh costs when a process
 *                             was created since the last)
 *   containers/check/100      the steady-state check a query runs at each
 *                             collection (pcw__consumer_containers_changed):
 *                             one poll over the namespaces' pidfds, an fstat
 *                             per namespace and provider folder, and at most
 *                             once a second a read of /proc/loadavg
 *   containers/collect_off/1000/4, containers/collect_on/1000/4
 *                             one pcw_pdh_collect of \Bench(*)\* (1000
 *                             instances of 4 counters, a provider in this
 *                             namespace) without and with the option, the
 *                             100 namespaces present: the option's cost in
 *                             a steady state
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"
#include "consumer/containers.h"
#include "consumer/private.h"
#include "pcw/pdh.h"

#define NAMESPACES 100
#define PER_NS     10 /* unshare, and 9 processes inside */

typedef struct ns_child {
    pid_t pid;
    int in, out;
} ns_child;

static ns_child kids[NAMESPACES];
static int nkids, made;

static void stop_namespaces(void)
{
    for (int i = 0; i < nkids; i++) {
        close(kids[i].in); /* every cat inside reads it: all end */
        close(kids[i].out);
    }
    for (int i = 0; i < nkids; i++)
        waitpid(kids[i].pid, NULL, 0);
    nkids = 0;
}

/* One namespace: unshare, a shell that mounts a tmpfs on /dev/shm, starts
 * 8 cats reading the shared stdin, says "ready" and becomes the 9th. */
static int spawn_namespace(ns_child *k)
{
    static const char script[] = "mount -t tmpfs tmpfs /dev/shm || exit 1; "
                                 "for i in 1 2 3 4 5 6 7 8; do cat >/dev/null & done; "
                                 "echo ready; exec cat >/dev/null";
    int pin[2], pout[2];
    if (pipe2(pin, O_CLOEXEC) != 0 || pipe2(pout, O_CLOEXEC) != 0)
        return -1;
    k->pid = fork();
    if (k->pid < 0)
        return -1;
    if (k->pid == 0) {
        dup2(pin[0], 0), dup2(pout[1], 1);
        execl("/usr/bin/unshare", "unshare", "--mount", "--pid", "--fork", "--mount-proc", "--",
              "/bin/sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    close(pin[0]), close(pout[1]);
    k->in = pin[1], k->out = pout[0];
    char buf[16];
    ssize_t n = read(k->out, buf, sizeof buf); /* blocks until "ready" or exit */
    return n >= 5 && memcmp(buf, "ready", 5) == 0 ? 0 : -1;
}

static int make_namespaces(gb_state *st)
{
    if (made)
        return nkids == NAMESPACES ? 0 : -1;
    made = 1;
    if (geteuid() != 0) {
        gb_skip_with_error(st, "needs root (namespaces)");
        return -1;
    }
    for (; nkids < NAMESPACES; nkids++)
        if (spawn_namespace(&kids[nkids]) != 0) {
            gb_skip_with_error(st, "cannot make a namespace");
            stop_namespaces();
            return -1;
        }
    atexit(stop_namespaces);
    return 0;
}

static void bm_discover(gb_state *st, void *arg)
{
    (void)arg;
    if (make_namespaces(st) != 0)
        return;
    pcw_consumer_options o = {.containers = 1};
    size_t found = 0;
    while (gb_keep_running(st)) {
        pcw_consumer *c;
        if (pcw_consumer_open(&c, &o) != PCW_OK || pcw_consumer_refresh(c, NULL) != PCW_OK) {
            gb_skip_with_error(st, "refresh failed");
            return;
        }
        found = pcw_consumer_segment_count(c);
        pcw_consumer_close(c);
    }
    gb_do_not_optimize(&found);
    gb_counter(st, "namespaces", NAMESPACES);
    gb_counter(st, "processes", NAMESPACES * PER_NS);
}

static void bm_walk(gb_state *st, void *arg)
{
    (void)arg;
    if (make_namespaces(st) != 0)
        return;
    pcw__ctr *t;
    if (pcw__ctr_open(&t, NULL) != PCW_OK || pcw__ctr_update(t, 1) != PCW_OK) {
        gb_skip_with_error(st, "walk failed");
        return;
    }
    size_t known = t->n;
    while (gb_keep_running(st))
        if (pcw__ctr_update(t, 1) != PCW_OK) {
            gb_skip_with_error(st, "walk failed");
            break;
        }
    gb_counter(st, "namespaces_known", (double)known);
    pcw__ctr_free(t);
}

static void bm_check(gb_state *st, void *arg)
{
    (void)arg;
    if (make_namespaces(st) != 0)
        return;
    pcw_consumer *c;
    pcw_consumer_options o = {.containers = 1};
    if (pcw_consumer_open(&c, &o) != PCW_OK || pcw_consumer_refresh(c, NULL) != PCW_OK) {
        gb_skip_with_error(st, "refresh failed");
        return;
    }
    int64_t k, due = 0;
    while ((k = gb_keep_running_batch(st, 64)) > 0)
        for (int64_t i = 0; i < k; i++)
            due += pcw__consumer_containers_changed(c);
    /* Other processes of the machine start all the time: a walk is then due
     * once a second. The fraction of checks that said so: */
    gb_counter(st, "due_fraction", (double)due / (double)gb_state_iterations(st));
    pcw_consumer_close(c);
}

static void collect(gb_state *st, int containers)
{
    if (make_namespaces(st) != 0)
        return;
    int64_t n = gb_range(st, 0), ctrs = gb_range(st, 1);
    const bu_provider *p = bu_provider_get(n, ctrs);
    if (!p) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    pcw_pdh *q;
    pcw_pdh_counter *h;
    pcw_consumer_options o = {.containers = containers};
    if (pcw_pdh_open(&q, &o) != PCW_OK ||
        pcw_pdh_add_counter(q, "\\Bench(*)\\*", &h, NULL) != PCW_OK ||
        pcw_pdh_collect(q, NULL) != PCW_OK) {
        gb_skip_with_error(st, "cannot collect");
        return;
    }
    while (gb_keep_running(st))
        if (pcw_pdh_collect(q, NULL) != PCW_OK) {
            gb_skip_with_error(st, "collect failed");
            break;
        }
    gb_set_items_processed(st, gb_state_iterations(st) * n);
    pcw_pdh_close(q);
}

static void bm_collect_off(gb_state *st, void *arg)
{
    (void)arg;
    collect(st, 0);
}

static void bm_collect_on(gb_state *st, void *arg)
{
    (void)arg;
    collect(st, 1);
}

void bench_containers_register(void)
{
    gb_bench *b = gb_register("containers/discover/100", bm_discover, NULL);
    gb_unit_ns(b);
    b = gb_register("containers/walk/100", bm_walk, NULL);
    gb_unit_ns(b);
    b = gb_register("containers/check/100", bm_check, NULL);
    gb_unit_ns(b);
    b = gb_register("containers/collect_off", bm_collect_off, NULL);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){1000, 4}, 2);
    b = gb_register("containers/collect_on", bm_collect_on, NULL);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){1000, 4}, 2);
}
