/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pidns.c - callback countersets across pid namespaces: a
 * provider started with `unshare --pid` (and one in a user namespace too)
 * is collected by a consumer in this, the parent, namespace, and an
 * impostor in another pid namespace listening at its socket is refused at
 * once (docs/control-channel.md, "Who may answer").
 *
 * The providers share this test's PCW_DIR (a directory both sides see);
 * finding providers through other mount namespaces is not this file's.
 * Needs root (as CI runs it) to make the namespaces.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <grp.h>
#include <sched.h>
#include <stddef.h>

#include "consumer_util.h"
#include "pcw/collect.h"
#include "pcw/consumer.h"
#include "common/layout.h"
#include "testutil.h"

TestSuite(pidns, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* pid 1 of a new pid namespace (and its own /proc), killed if we die. */
static const char *const PIDNS[] = {"unshare",      "--pid", "--fork", "--kill-child",
                                    "--mount-proc", "--",    NULL};
/* The same in a new user namespace, root in it (as rootless runtimes). */
static const char *const USERNS[] = {"unshare",      "--user", "--map-root-user",
                                     "--pid",        "--fork", "--kill-child",
                                     "--mount-proc", "--",     NULL};

static void need_root(void)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to make pid namespaces");
}

/* callback_provider (tests/helpers) under `ns`; its segment's path in seg. */
static void spawn_provider(tu_child *c, const char *const *ns, const char *prefix, const char *base,
                           char *seg, size_t cap)
{
    const char *args[] = {prefix, base, "0", NULL};
    cr_assert_eq(tu_spawn_wrapped(c, ns, "callback_provider", args), 0);
    char line[PATH_MAX + 16];
    cr_assert_geq(tu_readline(c, line, sizeof line, 10000), 0, "the provider did not start");
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
    cr_assert_lt(strlen(line + 6), cap);
    memcpy(seg, line + 6, strlen(line + 6) + 1);
}

/* The impostor (tests/helpers/impostor_peer) in a pid namespace of its
 * own, listening in place of seg's provider. */
static void spawn_impostor(tu_child *c, const char *seg, const char *mode)
{
    const char *args[] = {seg, mode, NULL};
    cr_assert_eq(tu_spawn_wrapped(c, PIDNS, "impostor_peer", args), 0);
    char line[64];
    cr_assert_geq(tu_readline(c, line, sizeof line, 10000), 0, "the impostor did not start");
    cr_assert_str_eq(line, "ready");
}

/* Collect "Callback Test" twice from the providers in DIR (NULL:
 * $PCW_DIR): the callback's instances PREFIX-0..2 with ids BASE+i,
 * A = 100 (i + 1), and B counting the collections. 0, or -1
 * with what is wrong in why. (Plain checks: it also runs in a child that
 * has become another user.) */
static int check_collected(const char *dir, const char *prefix, uint32_t base, char *why,
                           size_t cap)
{
    pcw_consumer *c;
    pcw_consumer_options o = {.dir = dir};
    int rc = pcw_consumer_open(&c, &o), bad = 0;
    if (rc != PCW_OK) {
        snprintf(why, cap, "pcw_consumer_open: %d", rc);
        return -1;
    }
    const pcw_merged_counterset *m = NULL;
    if ((rc = pcw_consumer_refresh(c, NULL)) != PCW_OK || pcw_consumer_segment_count(c) != 1 ||
        !(m = pcw_consumer_find_counterset(c, "Callback Test"))) {
        snprintf(why, cap, "refresh %d, %zu segments, counterset %s", rc,
                 pcw_consumer_segment_count(c), m ? "found" : "missing");
        bad = 1;
    } else if (pcw_segment_provider(pcw_consumer_segment(c, 0))->pid != 1) {
        snprintf(why, cap, "the provider is pid %d, not 1 of its own namespace",
                 (int)pcw_segment_provider(pcw_consumer_segment(c, 0))->pid);
        bad = 1;
    }
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    for (uint64_t round = 1; !bad && round <= 2; round++) {
        pcw_collect_report rep = {0};
        rc = pcw_consumer_collect(c, m, NULL, &s, 0, &rep);
        if (rc != PCW_OK || rep.failed || s.count != 3) {
            snprintf(why, cap, "collect %d: status %d (%s), %zu instances", rc, rep.first_error,
                     pcw_error_detail(), s.count);
            bad = 1;
        }
        for (size_t i = 0; !bad && i < 3; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s-%zu", prefix, i);
            uint64_t a = pcw_snapshot_value(&s, i, &m->meta->counters[0]);
            uint64_t b = pcw_snapshot_value(&s, i, &m->meta->counters[1]);
            if (strcmp(pcw_snapshot_name(&s, i), name) != 0 || pcw_snapshot_id(&s, i) != base + i ||
                a != 100 * (i + 1) || b != round) {
                /* B: the callback ran for this collection. */
                snprintf(why, cap, "round %llu row %zu: %s id %u A %llu B %llu",
                         (unsigned long long)round, i, pcw_snapshot_name(&s, i),
                         pcw_snapshot_id(&s, i), (unsigned long long)a, (unsigned long long)b);
                bad = 1;
            }
        }
    }
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    return bad ? -1 : 0;
}

static void assert_collected(const char *prefix, uint32_t base)
{
    char why[512] = "";
    cr_assert_eq(check_collected(NULL, prefix, base, why, sizeof why), 0, "%s", why);
}

Test(pidns, callback_provider_in_a_pid_namespace_is_collected)
{
    need_root();
    tu_child p;
    char seg[PATH_MAX];
    spawn_provider(&p, PIDNS, "ns", "500", seg, sizeof seg);
    assert_collected("ns", 500);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}

Test(pidns, callback_provider_in_a_user_namespace_is_collected)
{
    need_root();
    tu_child p;
    char seg[PATH_MAX];
    spawn_provider(&p, USERNS, "user", "700", seg, sizeof seg);
    assert_collected("user", 700);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}

/* A callback provider in a pid namespace, and an impostor_peer in `mode`
 * in another taking its socket over: the consumer refuses the impostor at
 * once, saying why (`why` in pcw_error_detail). */
static void assert_impostor_refused(const char *mode, const char *why)
{
    need_root();
    tu_child p, imp;
    char seg[PATH_MAX];
    spawn_provider(&p, PIDNS, "ns", "500", seg, sizeof seg);
    spawn_impostor(&imp, seg, mode);
    pcw_consumer *c = open_consumer(0);
    const pcw_merged_counterset *m = find_set(c, "Callback Test");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    long long t0 = tu_now_ms();
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_lt(tu_now_ms() - t0, 500, "refused at once, no waiting for an answer");
    cr_assert_eq(rep.first_error, PCW_E_PERMISSION, "status %d", rep.first_error);
    cr_assert_eq(s.count, 0);
    cr_assert(strstr(pcw_error_detail(), why), "%s", pcw_error_detail());
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    cr_assert_eq(tu_finish(&imp, 5000), 0);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}

/* Pid 1 of another namespace, so the pid the header names, and able to
 * read (and map) the segment: not its provider all the same. */
Test(pidns, impostor_with_the_providers_pid_that_can_read_the_segment_is_refused)
{
    assert_impostor_refused("reader", "mapped for writing");
}

/* Mapping the segment for writing is not enough either: the listener must
 * also be the process the header names. */
Test(pidns, impostor_with_the_segment_mapped_for_writing_but_another_pid_is_refused)
{
    assert_impostor_refused("writer", "in its own pid namespace");
}

/* Rootless: an unprivileged user's provider in a user and pid namespace
 * of its own (uid mapped to itself), collected by a consumer of that same
 * user in the parent namespaces: it may read the provider's
 * /proc/<pid>/maps (its own process, in a namespace it owns). Root, which
 * that namespace does not map, is refused by the provider. */
Test(pidns, unprivileged_consumer_collects_its_provider_in_a_user_namespace)
{
    need_root();
    const uid_t U = 43219; /* nobody's */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", tu_provider_dir(U));
    cr_assert_eq(chown(dir, U, U), 0);
    cr_assert_eq(chmod(tu_root, 0755), 0);
    static const char *const ROOTLESS[] = {
        "setpriv", "--reuid=43219", "--regid=43219",      "--clear-groups",
        "unshare", "--user",        "--map-current-user", "--pid",
        "--fork",  "--kill-child",  "--mount-proc",       "--",
        NULL};
    /* The unprivileged user runs a copy of the helper in the (0755) test
     * root: the build tree may be where it cannot go (a package build's
     * mktemp -d folder is 0700). */
    char helper[PATH_MAX], exe[PATH_MAX], line[PATH_MAX + 16];
    tu_helper_path("callback_provider", helper, sizeof helper);
    snprintf(exe, sizeof exe, "%s/callback_provider", tu_root);
    size_t len;
    unsigned char *bytes = tu_read_file(helper, 64u << 20, &len);
    cr_assert_not_null(bytes, "%s", helper);
    cr_assert_eq(tu_write_file(exe, bytes, len, 0755), 0, "%s", exe);
    free(bytes);
    cr_assert_eq(chmod(exe, 0755), 0);
    const char *argv[32];
    size_t n = 0;
    for (; ROOTLESS[n]; n++)
        argv[n] = ROOTLESS[n];
    const char *rest[] = {exe, "rootless", "900", "0", NULL};
    for (size_t k = 0; rest[k]; k++)
        argv[n++] = rest[k];
    argv[n] = NULL;
    tu_child p;
    char seg[PATH_MAX];
    cr_assert_eq(tu_spawn_argv(&p, argv), 0);
    cr_assert_geq(tu_readline(&p, line, sizeof line, 10000), 0, "the provider did not start");
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
    cr_assert_lt(strlen(line + 6), sizeof seg);
    memcpy(seg, line + 6, strlen(line + 6) + 1);
    cr_assert(strncmp(seg, dir, strlen(dir)) == 0, "%s", seg);
    pid_t pid = fork();
    if (pid == 0) {
        char why[512] = "";
        if (setgroups(0, NULL) != 0 || setgid(U) != 0 || setuid(U) != 0)
            _exit(2);
        int rc = check_collected(NULL, "rootless", 900, why, sizeof why);
        if (rc != 0)
            fprintf(stderr, "unprivileged consumer: %s\n", why);
        _exit(rc == 0 ? 0 : 1);
    }
    int st = -1;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the consumer of uid %u failed (stderr)",
              (unsigned)U);
    /* Root here is not mapped in the provider's user namespace: the
     * provider sees the overflow uid and refuses it, and the consumer
     * says so (its own check would have passed: root may read maps). */
    pcw_consumer *c;
    pcw_consumer_options o = {.all_users = 1};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(c, find_set(c, "Callback Test"), NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.first_error, PCW_E_PERMISSION, "status %d", rep.first_error);
    cr_assert(strstr(pcw_error_detail(), "the provider refused this consumer"), "'%s'",
              pcw_error_detail());
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}

/* The pid here of unshare's (pid's) only child: the provider. */
static pid_t only_child(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
    size_t n = 0;
    char *kids = (char *)tu_read_file(path, 64, &n);
    cr_assert(kids && n > 0 && n < 64);
    kids[n] = 0;
    pid_t child = (pid_t)strtol(kids, NULL, 10);
    free(kids);
    return child;
}

/* Field 22 of /proc/<pid>/stat as this process reads it, 0 if none. */
static unsigned long long start_time_of(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    size_t n = 0;
    unsigned char *b = tu_read_file(path, 4096, &n);
    unsigned long long v = 0;
    char *p = b && n < 4096 ? (b[n] = 0, strrchr((char *)b, ')')) : NULL;
    for (int field = 2; p && *p && field < 22; p++)
        field += *p == ' ';
    if (p)
        v = strtoull(p, NULL, 10);
    free(b);
    return v;
}

/* A provider in a pid namespace that kept its parent's /proc (`unshare
 * --pid --fork` without --mount-proc): /proc/<its pid> there is another
 * process (its pid 1 is the host's init), so the header's start time must
 * come from /proc/self, which is always the caller. */
Test(pidns, provider_without_its_own_proc_records_its_own_start_time)
{
    need_root();
    static const char *const BARE[] = {"unshare", "--pid", "--fork", "--kill-child", "--", NULL};
    tu_child p;
    char seg[PATH_MAX];
    spawn_provider(&p, BARE, "bare", "100", seg, sizeof seg);
    pid_t host_pid = only_child(p.pid);
    pcw_segment *s;
    cr_assert_eq(pcw_segment_open(&s, seg), PCW_OK);
    cr_assert_eq(pcw_segment_provider(s)->pid, 1);
    cr_assert_neq(start_time_of(host_pid), 0);
    cr_assert_eq(pcw_segment_provider(s)->start_time, start_time_of(host_pid),
                 "the header holds the start time of another process (host pid 1: %llu)",
                 start_time_of(1));
    pcw_segment_close(s);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}

/* In a child of ours that made a pid namespace and kept our /proc: collect
 * "Callback Test" once; 0 if refused with PCW_E_PERMISSION for a listener
 * outside its namespace, else 1 (what happened on stderr). */
static int refused_from_a_child_namespace(void)
{
    pcw_consumer *c;
    const pcw_merged_counterset *m = NULL;
    if (pcw_consumer_open(&c, NULL) != PCW_OK)
        return 1;
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    int rc = pcw_consumer_refresh(c, NULL) == PCW_OK &&
                     (m = pcw_consumer_find_counterset(c, "Callback Test")) != NULL
                 ? pcw_consumer_collect(c, m, NULL, &s, 0, &rep)
                 : PCW_E_NOT_FOUND;
    int ok = rc == PCW_OK && rep.first_error == PCW_E_PERMISSION && s.count == 0 &&
             strstr(pcw_error_detail(), "outside this consumer's pid namespace");
    if (!ok)
        fprintf(stderr, "collect %d: status %d (%s), %zu instances\n", rc, rep.first_error,
                pcw_error_detail(), s.count);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    return !ok;
}

/* A consumer in a pid namespace below the provider's sees the listener as
 * pid 0 (SO_PEERCRED: not visible here). A header claiming pid 0 must not
 * make that an equality: nothing is proven, refused. */
Test(pidns, listener_outside_the_consumers_pid_namespace_is_refused)
{
    need_root();
    tu_child p;
    char seg[PATH_MAX];
    spawn_provider(&p, NULL, "up", "100", seg, sizeof seg);
    /* The header's pid, as only the segment's owner could write it. */
    int fd = open(seg, O_RDWR | O_CLOEXEC);
    int32_t zero = 0;
    cr_assert_eq(pwrite(fd, &zero, sizeof zero, offsetof(pcw_seg_header, pid)), sizeof zero);
    close(fd);
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWPID) != 0)
            _exit(2);
        pid_t inner = fork(); /* pid 1 of the new namespace */
        if (inner == 0)
            _exit(refused_from_a_child_namespace());
        int st = -1;
        _exit(inner > 0 && waitpid(inner, &st, 0) == inner && WIFEXITED(st) ? WEXITSTATUS(st) : 3);
    }
    int st = -1;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d (stderr says what happened)",
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}

/* As a container: the provider in a mount and pid namespace of its own,
 * with its own tmpfs over the directory, which this namespace therefore
 * does not see; the consumer reads it through /proc/<pid>/root (finding
 * such providers is discovery's, not this test's). */
Test(pidns, callback_provider_in_a_mount_and_pid_namespace_is_collected_through_proc_root)
{
    need_root();
    char script[PATH_MAX + 64];
    snprintf(script, sizeof script, "mount -t tmpfs pcw-test \"$PCW_DIR\" && exec \"$0\" \"$@\"");
    const char *const CONTAINER[] = {"unshare",      "--mount",      "--pid", "--fork",
                                     "--kill-child", "--mount-proc", "--",    "sh",
                                     "-c",           script,         NULL};
    tu_child p;
    char seg[PATH_MAX];
    spawn_provider(&p, CONTAINER, "box", "300", seg, sizeof seg);
    struct stat st;
    cr_assert_eq(stat(seg, &st), -1, "the segment is on the provider's own tmpfs, not here");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "/proc/%d/root%s", (int)only_child(p.pid), tu_root);
    char why[512] = "";
    cr_assert_eq(check_collected(dir, "box", 300, why, sizeof why), 0, "%s", why);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}
