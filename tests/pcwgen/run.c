/* SPDX-License-Identifier: MIT */
/*
 * run.c - run pcwgen as a child process and capture what it prints, so
 * the tests check the real command line: exit status, stdout, stderr.
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pcwgen_test.h"

#ifndef PCWGEN_BIN
#define PCWGEN_BIN "build/pcwgen"
#endif

const char *pcwgen_bin(void)
{
    const char *e = getenv("PCWGEN");
    return e && *e ? e : PCWGEN_BIN;
}

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void append(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p)
            abort();
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void pcwgen_exec(pcwgen_run *r, const char *const *args)
{
    int po[2], pe[2];
    memset(r, 0, sizeof *r);
    if (pipe(po) != 0 || pipe(pe) != 0)
        abort();
    size_t n = 0;
    while (args[n])
        n++;
    const char **argv = calloc(n + 2, sizeof *argv);
    if (!argv)
        abort();
    argv[0] = pcwgen_bin();
    for (size_t i = 0; i < n; i++)
        argv[i + 1] = args[i];
    pid_t pid = fork();
    if (pid < 0)
        abort();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    free(argv);
    close(po[1]), close(pe[1]);
    buf out = {0}, err = {0};
    append(&out, "", 0);
    append(&err, "", 0);
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    /* Drain both pipes together: a child blocked on a full stderr pipe
     * while we wait on stdout would hang the test. */
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            abort();
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[4096];
            ssize_t got = read(fds[i].fd, chunk, sizeof chunk);
            if (got > 0) {
                append(i == 0 ? &out : &err, chunk, (size_t)got);
            } else if (got == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = out.p, r->out_len = out.n;
    r->err = err.p;
}

void pcwgen_run_free(pcwgen_run *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

char *pcwgen_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    buf b = {0};
    append(&b, "", 0);
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        append(&b, chunk, got);
    fclose(f);
    if (len)
        *len = b.n;
    return b.p;
}
