/* SPDX-License-Identifier: MIT */
/*
 * tests/test_broken_pipe.c - a tool whose reader goes away (`pcwstat ... |
 * head -2`) ends as a filter does: killed by SIGPIPE, nothing on stderr
 * (issue 25: pcwstat printed "write error: Broken pipe" and exited 1).
 * The tools ignore SIGPIPE for their control sockets, so each must notice
 * EPIPE itself (tools/common/output.h).
 *
 * Each tool samples a provider at 0.1 s into a pipe; the test reads two
 * lines, closes the pipe's read end (the observable event: the next write
 * fails) and reaps the tool within a deadline.
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "pcw/pdh.h"
#include "query_provider.h"

TestSuite(broken_pipe, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

static void ends_as_a_filter(const char *tool, const char *const *args)
{
    tu_child p;
    qp_start(&p, "Piped", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create a");
    char path[PATH_MAX], err[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", PCW_BUILD_DIR, tool);
    snprintf(err, sizeof err, "%s/%s.err", tu_root, tool);
    const char *argv[16] = {path};
    for (size_t i = 0; args[i] && i < 14; i++)
        argv[i + 1] = args[i];
    int fds[2];
    cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
    tu_child c;
    memset(&c, 0, sizeof c);
    c.pid = tu_fork();
    cr_assert(c.pid >= 0);
    if (c.pid == 0) {
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fds[1], 1);
        dup2(e, 2);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    close(fds[1]);
    c.in = -1;
    c.out = fds[0];
    char line[8192];
    for (int i = 0; i < 2; i++)
        cr_assert(tu_readline(&c, line, sizeof line, 10000) >= 0, "%s: line %d", tool, i + 1);
    close(c.out); /* the reader goes away, as head(1) does */
    c.out = -1;
    int st = tu_finish(&c, 10000);
    size_t len = 0;
    char *text = (char *)tu_read_file(err, 1 << 16, &len);
    cr_assert_not_null(text);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE,
              "%s: wait status %#x (exit %d), stderr: %s", tool, (unsigned)st,
              WIFEXITED(st) ? WEXITSTATUS(st) : -1, text);
    cr_assert_eq(len, 0, "%s wrote to stderr: %s", tool, text);
    free(text);
    qp_stop(&p);
}

Test(broken_pipe, pcwstat)
{
    ends_as_a_filter("pcwstat", (const char *[]){"\\Piped(*)\\Level", "-si", "0.1", NULL});
}

Test(broken_pipe, pcwstat_json)
{
    ends_as_a_filter("pcwstat",
                     (const char *[]){"\\Piped(*)\\Level", "-si", "0.1", "-f", "JSON", NULL});
}

Test(broken_pipe, pcwtop_batch)
{
    ends_as_a_filter("pcwtop", (const char *[]){"-b", "-d", "0.1", "-c", "Piped", NULL});
}

Test(broken_pipe, pcwdump_watch)
{
    ends_as_a_filter("pcwdump", (const char *[]){"--watch", "0.1", "-c", "Piped", NULL});
}
