/* SPDX-License-Identifier: MIT */
/*
 * tests/rawpeer.h - a raw control-channel peer for the tests that play a
 * consumer the library would never be: connect to a provider's socket,
 * send any request, read replies. Every wait ends within 10 s.
 * Include after pcw/provider.h (or pcw/control_proto.h) and testutil.h.
 */
#ifndef PCW_TEST_RAWPEER_H
#define PCW_TEST_RAWPEER_H

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/control_proto.h"

/* Connect to the socket at path: the descriptor, or -1. */
static inline int raw_connect(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return -1;
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Wait up to timeout_ms for fd to be readable (or at end of file). */
static inline int readable(int fd, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1;
}

/* Read one message's header, skipping its payload: 0; -1 at end of file,
 * on a bad header, or after 10 s. */
static inline int raw_read(int fd, pcw_ctl_header *h)
{
    unsigned char b[PCW_CTL_HEADER_SIZE];
    for (size_t got = 0; got < sizeof b;) {
        if (!readable(fd, 10000))
            return -1;
        ssize_t r = recv(fd, b + got, sizeof b - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    if (pcw__ctl_get_header(b, h) != 0)
        return -1;
    for (uint32_t left = h->length; left;) {
        static char skip[1 << 16];
        if (!readable(fd, 10000))
            return -1;
        ssize_t r = recv(fd, skip, left < sizeof skip ? left : sizeof skip, 0);
        if (r <= 0)
            return -1;
        left -= (uint32_t)r;
    }
    return 0;
}

/* Send a request: header, then len payload bytes. 0, or -1 if the
 * provider has closed the connection. */
static inline int raw_request(int fd, uint16_t type, uint32_t id, const unsigned char *pl,
                              size_t len)
{
    unsigned char *b = malloc(PCW_CTL_HEADER_SIZE + len);
    pcw_ctl_writer w = {b, 0, PCW_CTL_HEADER_SIZE + len, PCW_CTL_HEADER_SIZE + len, 0};
    pcw_ctl_header h = {PCW_CTL_MAGIC, PCW_CTL_VERSION, type, (uint32_t)len, id, 0, 0};
    pcw__ctl_put_header(&w, &h);
    pcw__ctl_put_bytes(&w, pl, len);
    int rc = send(fd, b, w.len, MSG_NOSIGNAL) == (ssize_t)w.len ? 0 : -1;
    free(b);
    return rc;
}

/* An ENUMERATE/COLLECT payload for counterset reg_index: every counter
 * and instance, `flags` (PCW_CTL_HOLD, PCW_CTL_IN_AREA...); its length. */
static inline size_t collect_payload(unsigned char *b, size_t cap, uint32_t reg, uint32_t flags)
{
    pcw_ctl_writer w = {b, 0, cap, cap, 0};
    pcw__ctl_put_u32(&w, reg);
    pcw__ctl_put_u32(&w, flags);
    pcw__ctl_put_u64(&w, ~0ull);
    pcw__ctl_put_u32(&w, PCW_ANY_INSTANCE_ID);
    pcw__ctl_put_str(&w, "*", 1);
    return w.len;
}

#endif /* PCW_TEST_RAWPEER_H */
