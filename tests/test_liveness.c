/* SPDX-License-Identifier: MIT */
/*
 * tests/test_liveness.c - whether a segment's provider is alive is decided
 * by something both sides can check whatever their pid namespaces: the
 * lock the provider holds on its segment file for its whole life. A
 * provider in another pid namespace (a container) survives
 * `pcwdump --remove-stale`; once it is killed its segment goes; and files
 * someone still holds locked are never removed, whatever pid their names
 * carry.
 *
 * The namespace test runs the provider under `unshare --pid --fork
 * --mount-proc` (root, as CI runs), so its header records pid 1.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "common/layout.h"
#include "testutil.h"

TestSuite(liveness, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

static const char *build_dir(void)
{
    const char *b = getenv("PCW_BUILD");
    return b && *b ? b : PCW_BUILD_DIR;
}

/* Run pcwdump with one argument; return its exit status, stdout in out. */
static int pcwdump(const char *arg, char *out, size_t cap)
{
    char exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/pcwdump", build_dir());
    tu_child c;
    cr_assert_eq(tu_spawn_argv(&c, (const char *const[]){exe, arg, NULL}), 0);
    close(c.in);
    c.in = -1;
    size_t n = 0;
    for (;;) {
        struct pollfd p = {c.out, POLLIN, 0};
        cr_assert_eq(poll(&p, 1, 20000), 1, "pcwdump %s hangs", arg);
        ssize_t r = read(c.out, out + n, cap - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    out[n] = 0;
    int st = tu_finish(&c, 10000);
    cr_assert(WIFEXITED(st), "pcwdump %s: status %d", arg, st);
    return WEXITSTATUS(st);
}

/* On 9ef2b5d the consumer judged liveness by the header's pid: 1, which in
 * its own namespace is init, with another start time - "exited" - and
 * --remove-stale deleted the live provider's segment. */
Test(liveness, provider_in_another_pid_namespace_survives_remove_stale)
{
    cr_assert_eq(geteuid(), 0, "needs root for unshare --pid (CI runs as root)");
    char helper[PATH_MAX];
    snprintf(helper, sizeof helper, "%s/tests/helpers/provider_child", build_dir());
    tu_child p;
    cr_assert_eq(
        tu_spawn_argv(&p, (const char *const[]){"unshare", "--pid", "--fork", "--mount-proc",
                                                "--kill-child", helper, "--instances", "2", NULL}),
        0);
    char line[PATH_MAX + 16];
    cr_assert_geq(tu_readline(&p, line, sizeof line, 20000), 0, "no provider in the namespace");
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
    char path[sizeof line];
    snprintf(path, sizeof path, "%s", line + 6);

    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    cr_assert_eq(pcw_segment_provider(seg)->pid, 1, "the header names the namespace's pid");
    cr_assert_eq(pcw_segment_alive(seg), PCW_OK);
    pcw_segment_close(seg);

    char out[4096];
    cr_assert_eq(pcwdump("--remove-stale", out, sizeof out), 0);
    cr_assert_str_eq(out, "removed 0 stale segments\n");
    cr_assert_eq(access(path, F_OK), 0, "the live provider's segment was removed");
    cr_assert_eq(pcwdump("--json", out, sizeof out), 0);
    cr_assert(strstr(out, "\"alive\": true"), "%s", out);

    /* Killed (--kill-child passes SIGKILL on): its lock goes with it. Its
     * end shows as the end of its output. */
    kill(p.pid, SIGKILL);
    while (tu_readline(&p, line, sizeof line, 20000) >= 0)
        ;
    tu_finish(&p, 10000);
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED);
    pcw_segment_close(seg);
    cr_assert_eq(pcwdump("--remove-stale", out, sizeof out), 0);
    cr_assert_str_eq(out, "removed 1 stale segment\n");
    cr_assert_neq(access(path, F_OK), 0);
}

/* ---- files named for pids that do not exist here ------------------------- */

/* A pid no process has in this namespace. */
static int absent_pid(void)
{
    size_t len;
    unsigned char *b = tu_read_file("/proc/sys/kernel/pid_max", 64, &len);
    cr_assert(b && len > 0);
    b[len - 1] = 0;
    int pid = atoi((char *)b) + 1;
    free(b);
    return pid;
}

/* Create dir/name with `size` bytes; with `lock`, hold the liveness lock
 * on it (as a provider does) through the returned descriptor. */
static int make_file(const char *dir, const char *name, size_t size, int lock)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    cr_assert_geq(fd, 0, "%s", path);
    cr_assert_eq(ftruncate(fd, (off_t)size), 0);
    if (lock) {
        struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        cr_assert_eq(fcntl(fd, F_OFD_SETLK, &l), 0);
    }
    return fd;
}

static int exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* On 9ef2b5d a half-made segment (.tmp) or an unreadable one was removed
 * when the pid in its name did not exist here - which is every pid of a
 * provider in another namespace. Now only what is provably dead goes: a
 * file nobody holds the lock on (and, for a .tmp, one its maker had begun
 * to fill: a maker locks before it writes a byte). */
Test(liveness, locked_files_are_never_removed)
{
    const char *dir = tu_provider_dir(geteuid());
    int pid = absent_pid();
    char tmp_locked[64], tmp_dead[64], tmp_empty[64], seg_locked[64], seg_dead[64];
    snprintf(tmp_locked, sizeof tmp_locked, ".%d-00000000000000a1.tmp", pid);
    snprintf(tmp_dead, sizeof tmp_dead, ".%d-00000000000000a2.tmp", pid);
    snprintf(tmp_empty, sizeof tmp_empty, ".%d-00000000000000a3.tmp", pid);
    snprintf(seg_locked, sizeof seg_locked, "%d-00000000000000b1.seg", pid);
    snprintf(seg_dead, sizeof seg_dead, "%d-00000000000000b2.seg", pid);
    int held[2];
    held[0] = make_file(dir, tmp_locked, 1 << 20, 1);
    close(make_file(dir, tmp_dead, 1 << 20, 0));
    close(make_file(dir, tmp_empty, 0, 0));
    held[1] = make_file(dir, seg_locked, 4096, 1); /* zeros: unreadable */
    close(make_file(dir, seg_dead, 4096, 0));

    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    size_t removed = 0;
    cr_assert_eq(pcw_consumer_remove_stale(c, &removed), PCW_OK);
    cr_assert(exists(dir, tmp_locked), "a locked .tmp was removed");
    cr_assert(exists(dir, seg_locked), "a locked segment was removed");
    cr_assert(exists(dir, tmp_empty), "a .tmp its maker may not have locked yet was removed");
    cr_assert(!exists(dir, tmp_dead));
    cr_assert(!exists(dir, seg_dead));
    cr_assert_eq(removed, 2);

    /* The holder goes: now they are provably dead. */
    close(held[0]);
    close(held[1]);
    cr_assert_eq(pcw_consumer_remove_stale(c, &removed), PCW_OK);
    cr_assert_eq(removed, 2);
    cr_assert(!exists(dir, tmp_locked) && !exists(dir, seg_locked));
    cr_assert(exists(dir, tmp_empty));
    pcw_consumer_close(c);
}
