/* SPDX-License-Identifier: MIT */
/*
 * tests/test_testutil.c - the test harness itself (testutil.h): a program a
 * test starts does not outlive the test process, however that ends (a failed
 * assertion or a Criterion timeout runs no clean-up). A tool left running -
 * pcwstat -si 0.1 for a quarter of an hour after a failed test_pcwstat -
 * loads the machine for every test after it.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <sys/syscall.h>

Test(testutil, a_spawned_program_dies_with_the_test_that_started_it)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t test = fork(); /* stands for the test process */
    cr_assert(test >= 0);
    if (test == 0) {
        close(fds[0]);
        tu_child c;
        const char *argv[] = {"sleep", "1000", NULL};
        if (tu_spawn_argv(&c, argv) != 0)
            _exit(2);
        ssize_t w = write(fds[1], &c.pid, sizeof c.pid);
        _exit(w == (ssize_t)sizeof c.pid ? 1 : 3); /* as a failed assertion: no clean-up */
    }
    close(fds[1]);
    pid_t child = 0;
    cr_assert_eq(read(fds[0], &child, sizeof child), (ssize_t)sizeof child);
    close(fds[0]);
    int st;
    cr_assert_eq(waitpid(test, &st, 0), test);
    /* The child is not ours to wait for (the test process was its parent):
     * its pidfd becomes readable when it ends. ESRCH: it already has. */
    int pfd = (int)syscall(SYS_pidfd_open, child, 0);
    cr_assert(pfd >= 0 || errno == ESRCH, "pidfd_open: %s", strerror(errno));
    int left = 0;
    if (pfd >= 0) {
        struct pollfd p = {.fd = pfd, .events = POLLIN};
        left = poll(&p, 1, 10000) != 1;
        close(pfd);
    }
    if (left)
        kill(child, SIGKILL);
    cr_assert(!left, "the program the test started (pid %d) outlived it", (int)child);
}
