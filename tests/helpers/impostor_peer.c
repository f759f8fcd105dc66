/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/impostor_peer.c - a process that takes a provider's
 * control socket over: it removes the socket beside SEGMENT, listens at
 * its path itself and accepts every connection, reading requests and
 * answering none (tests/test_pidns.c: a consumer must refuse it at once).
 *
 *   impostor_peer SEGMENT MODE
 *
 * MODE "reader": maps the segment read-only first, as any process that may
 * read it can. Run as pid 1 of a pid namespace of its own, it has the pid
 * the segment's header names (its provider's, pid 1 of another one).
 * MODE "writer": opens the segment for writing and maps it so (as only its
 * owner could), from a child it forks: the one that listens is pid 2 of
 * its namespace, not the pid the header names.
 *
 * Prints "ready" once listening, then serves until its stdin closes.
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CONNS 64

static int serve(const char *seg, int writer)
{
    int sfd = open(seg, (writer ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    void *m =
        sfd < 0 ? MAP_FAILED
                : mmap(NULL, 4096, writer ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, sfd, 0);
    if (m == MAP_FAILED) {
        perror("impostor_peer: segment");
        return 1;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(seg);
    if (n < 4 || n + 1 >= sizeof a.sun_path || strcmp(seg + n - 4, ".seg") != 0) {
        fprintf(stderr, "impostor_peer: %s: not a short .seg path\n", seg);
        return 1;
    }
    memcpy(a.sun_path, seg, n - 4);
    memcpy(a.sun_path + n - 4, ".sock", 6);
    unlink(a.sun_path);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 8) != 0) {
        perror("impostor_peer: socket");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    struct pollfd p[2 + MAX_CONNS] = {{0, POLLIN, 0}, {lfd, POLLIN, 0}};
    size_t np = 2;
    for (;;) {
        if (poll(p, np, -1) < 0)
            continue;
        if (p[0].revents)
            return 0; /* stdin closed: done */
        if (p[1].revents && np < 2 + MAX_CONNS) {
            int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0)
                p[np++] = (struct pollfd){c, POLLIN, 0};
        }
        for (size_t i = 2; i < np; i++) {
            char b[4096];
            if (p[i].revents && read(p[i].fd, b, sizeof b) <= 0) {
                close(p[i].fd);
                p[i--] = p[--np];
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[2], "reader") != 0 && strcmp(argv[2], "writer") != 0)) {
        fprintf(stderr, "usage: impostor_peer SEGMENT reader|writer\n");
        return 2;
    }
    if (strcmp(argv[2], "reader") == 0)
        return serve(argv[1], 0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(serve(argv[1], 1));
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
