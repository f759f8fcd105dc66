/* SPDX-License-Identifier: MIT */
/*
 * tests/test_provider_root.c - a provider whose folder someone else has
 * taken (pre-created in a shared root, a symlink, opened up to others) is
 * refused, and the error says what is wrong and how to fix it - in the
 * program's own message (examples/geometric_waves, run as a real process)
 * and in pcwdump's warning.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/provider.h"
#include "testutil.h"

TestSuite(provider_root, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

typedef struct ran {
    int status; /* exit status, or -1 */
    char err[8192];
} ran;

/* Run build/<rel> with arg (may be NULL), stdin closed; collect stderr.
 * A program still running after 10 s is killed (status -1). */
static ran run(const char *rel, const char *arg)
{
    const char *b = getenv("PCW_BUILD");
    char exe[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/%s", b && *b ? b : PCW_BUILD_DIR, rel);
    int perr[2];
    cr_assert_eq(pipe2(perr, O_CLOEXEC), 0);
    pid_t pid = tu_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1), dup2(perr[1], 2);
        execl(exe, exe, arg, (char *)NULL);
        _exit(127);
    }
    close(perr[1]);
    ran r = {.status = -1};
    size_t n = 0;
    int ended = 0; /* its stderr closed: it is exiting */
    long long deadline = tu_now_ms() + 10000;
    while (!ended) {
        long long left = deadline - tu_now_ms();
        struct pollfd p = {perr[0], POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) != 1)
            break;
        ssize_t got = read(perr[0], r.err + n, sizeof r.err - 1 - n);
        ended = got <= 0;
        n += got > 0 ? (size_t)got : 0;
    }
    r.err[n] = 0;
    close(perr[0]);
    if (!ended)
        kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    r.status = ended && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

/* The provider folder this test's provider would use. */
static const char *own_dir(void)
{
    static char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/pcw-%u", tu_root, (unsigned)geteuid());
    return dir;
}

static void expect_refusal(const char *what, const char *fragment)
{
    ran r = run("examples/geometric_waves", NULL);
    cr_assert_neq(r.status, 0, "%s: the provider started", what);
    cr_assert_neq(r.status, -1, "%s: the provider did not stop", what);
    cr_assert(strstr(r.err, own_dir()), "%s: the folder is not named: %s", what, r.err);
    cr_assert(strstr(r.err, fragment), "%s: what is wrong is not said: %s", what, r.err);
    cr_assert(strstr(r.err, "PCW_DIR"), "%s: how to fix it is not said: %s", what, r.err);
    /* pcwdump warns that the folder's segments are ignored, and why. */
    r = run("pcwdump", NULL);
    cr_assert(strstr(r.err, own_dir()) && strstr(r.err, fragment), "%s: pcwdump: %s", what, r.err);
}

/* On 9ef2b5d all the program could say was "permission denied". */
Test(provider_root, taken_folder_is_explained)
{
    /* Opened up to others. */
    cr_assert_eq(mkdir(own_dir(), 0700), 0);
    cr_assert_eq(chmod(own_dir(), 0777), 0);
    expect_refusal("mode 0777", "writable by others");
    cr_assert_eq(rmdir(own_dir()), 0);

    /* A symlink to elsewhere. */
    char elsewhere[PATH_MAX];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", tu_root);
    cr_assert_eq(mkdir(elsewhere, 0700), 0);
    cr_assert_eq(symlink(elsewhere, own_dir()), 0);
    expect_refusal("symlink", "symbolic link");
    cr_assert_eq(unlink(own_dir()), 0);

    /* Pre-created by another user, as anyone may in a shared /dev/shm. */
    cr_assert_eq(geteuid(), 0, "needs root to make a folder owned by another uid (CI is root)");
    cr_assert_eq(mkdir(own_dir(), 0700), 0);
    cr_assert_eq(chown(own_dir(), 65534, 65534), 0);
    expect_refusal("another user's", "owned by uid 65534");
}

/* The same sentence from the API, for programs of their own. */
Test(provider_root, open_error_sentence)
{
    cr_assert_eq(mkdir(own_dir(), 0700), 0);
    cr_assert_eq(chmod(own_dir(), 0757), 0);
    pcw_provider *p;
    int rc = pcw_provider_open(&p, NULL);
    cr_assert_eq(rc, PCW_E_PERMISSION);
    char why[1024];
    cr_assert_eq(pcw_provider_open_error(rc, NULL, why, sizeof why), why);
    cr_assert(strstr(why, own_dir()) && strstr(why, "writable by others") && strstr(why, "PCW_DIR"),
              "%s", why);
    /* Other statuses: pcw_status_str's sentence. */
    cr_assert_str_eq(pcw_provider_open_error(PCW_E_NO_MEMORY, NULL, why, sizeof why),
                     pcw_status_str(PCW_E_NO_MEMORY));
}
