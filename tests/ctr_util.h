/* SPDX-License-Identifier: MIT */
/*
 * tests/ctr_util.h - containers for the tests (test_containers.c,
 * test_exporter_containers.c): `unshare --mount --pid --fork --mount-proc`
 * (with more flags, a user namespace too) with a tmpfs of its own on
 * /dev/shm, started in a cgroup named as a container runtime names it.
 * Include after criterion.h and testutil.h. Needs root.
 */
#ifndef PCW_TESTS_CTR_UTIL_H
#define PCW_TESTS_CTR_UTIL_H

#include <sys/stat.h>

static char cg_base[PATH_MAX]; /* this test's cgroup folder; "" none */

/* The cgroup v2 hierarchy: /sys/fs/cgroup itself, or a hybrid host's
 * /sys/fs/cgroup/unified. */
static inline const char *cgroup2_root(void)
{
    return access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? "/sys/fs/cgroup"
                                                                  : "/sys/fs/cgroup/unified";
}

/* mkdir -p <cg_base>/<rel>; its path into out. A test that needs a cgroup
 * is skipped (saying why) where the cgroup v2 hierarchy cannot be written
 * (a CI runner inside a container with a read-only /sys/fs/cgroup). */
static inline void make_cgroup(const char *rel, char *out, size_t cap)
{
    if (!cg_base[0])
        cr_skip_test("no writable cgroup v2 hierarchy here (%s): the runtime's cgroup cannot "
                     "be made",
                     cgroup2_root());
    cr_assert_lt((size_t)snprintf(out, cap, "%s/%s", cg_base, rel), cap);
    for (char *p = out + strlen(cg_base) + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(out, 0755);
            *p = '/';
        }
    cr_assert(mkdir(out, 0755) == 0 || errno == EEXIST, "mkdir %s", out);
}

/* The setup every container's shell runs first: its own tmpfs on
 * /dev/shm, and no PCW_DIR of ours. */
#define CTR_SHM "mount -t tmpfs -o mode=1777 tmpfs /dev/shm || exit 1; unset PCW_DIR; "

/* Start a container: in cgroup `cg` (a path, or NULL), with extra unshare
 * flags `us` ("" or "--user --map-root-user"), running shell `script` (after
 * CTR_SHM) with "$@" = args. */
static inline void ctr_spawn(tu_child *c, const char *cg, const char *us, const char *script,
                             const char *const *args)
{
    static const char outer[] =
        "cg=\"$1\"; us=\"$2\"; in=\"$3\"; shift 3; "
        "if [ -n \"$cg\" ]; then echo $$ > \"$cg/cgroup.procs\" || exit 1; "
        "fi; exec unshare $us --mount --pid --fork --mount-proc -- /bin/sh -c \"$in\" "
        "sh \"$@\"";
    char inner[4096];
    snprintf(inner, sizeof inner, "%s%s", CTR_SHM, script);
    const char *argv[32] = {"/bin/sh", "-c", outer, "sh", cg ? cg : "", us, inner};
    size_t n = 7;
    for (; args && *args && n < 31; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    cr_assert_eq(tu_spawn_argv(c, argv), 0);
}

/* Start top_provider in a container; wait for its "ready 1" (pid 1 of its
 * own pid namespace). */
static inline void ctr_provider(tu_child *c, const char *cg, const char *us, const char *instances)
{
    char helper[PATH_MAX], line[256];
    tu_helper_path("top_provider", helper, sizeof helper);
    ctr_spawn(c, cg, us, "exec \"$@\"",
              (const char *[]){helper, "--set", "Ctr Test", "--instances", instances, NULL});
    cr_assert(tu_readline(c, line, sizeof line, 30000) > 0, "the container did not start");
    cr_assert_str_eq(line, "ready 1", "its provider is not pid 1 of its namespace: %s", line);
}

/* Start callback_provider (tests/helpers; counterset "Callback Test",
 * instances <prefix>-0..2 served over its control socket) in a container;
 * wait for its "ready <segment>" and check the segment is pid 1's of its
 * own pid namespace, in the container's /dev/shm. */
static inline void ctr_callback_provider(tu_child *c, const char *cg, const char *us,
                                         const char *prefix)
{
    char helper[PATH_MAX], line[PATH_MAX + 16];
    tu_helper_path("callback_provider", helper, sizeof helper);
    ctr_spawn(c, cg, us, "exec \"$@\"", (const char *[]){helper, prefix, "10", "0", NULL});
    cr_assert(tu_readline(c, line, sizeof line, 30000) > 0, "the container did not start");
    cr_assert(strncmp(line, "ready /dev/shm/pcw-", 19) == 0 && strstr(line, "/1-"),
              "its callback provider is not pid 1 of its namespace in its /dev/shm: %s", line);
}

/* Container ids and a pod UID of this test process's own: their first 8
 * hex digits are its pid, so that tests running at once (each sees every
 * container on the machine) never share one. Set by ctr_setup. */
static char id_docker[65], id_cri[65], id_podman[65], pod_uid[37];
static char short_docker[13], short_cri[13]; /* as pcwtop shows them */

static inline void ctr_ids(void)
{
    unsigned p = (unsigned)getpid();
    snprintf(id_docker, sizeof id_docker, "%08x%s", p,
             "a7b94f3c8e2a6b5d9c0f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a");
    snprintf(id_cri, sizeof id_cri, "%08x%s", p,
             "6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819");
    snprintf(id_podman, sizeof id_podman, "%08x%s", p,
             "c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e");
    snprintf(pod_uid, sizeof pod_uid, "%08x-3b1d-4e8f-9a7b-1c2d3e4f5a6b", p);
    snprintf(short_docker, sizeof short_docker, "%.12s", id_docker);
    snprintf(short_cri, sizeof short_cri, "%.12s", id_cri);
}

/* Each test: root, a private PCW_DIR, and a cgroup folder of its own. */
static inline void ctr_setup(void)
{
    cr_assert_eq(geteuid(), 0, "these tests make namespaces and cgroups: run them as root");
    tu_root_setup();
    ctr_ids();
    snprintf(cg_base, sizeof cg_base, "%s/pcwtest-%d", cgroup2_root(), (int)getpid());
    if (mkdir(cg_base, 0755) != 0)
        cg_base[0] = 0; /* make_cgroup skips the tests that need one */
}

static inline void ctr_teardown(void)
{
    tu_root_teardown();
    if (cg_base[0])
        nftw(cg_base, tu__rm, 16, FTW_DEPTH | FTW_PHYS); /* rmdir: the files stay */
    cg_base[0] = 0;
}

/* mkdir -p of path's folders, then write `text` there (a container
 * runtime's config.json under a fake PCW_RUNTIME_ROOT). */
static inline void ctr_write_file(const char *path, const char *text)
{
    char d[PATH_MAX];
    size_t n = strlen(path);
    cr_assert_lt(n, sizeof d, "%s", path);
    memcpy(d, path, n + 1);
    for (char *p = d + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(d, 0755);
            *p = '/';
        }
    cr_assert_eq(tu_write_file(path, text, strlen(text), 0644), 0, "%s", path);
}

#endif /* PCW_TESTS_CTR_UTIL_H */
