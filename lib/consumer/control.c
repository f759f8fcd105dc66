/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/control.c - the consumer's end of a provider's control
 * socket: connect (checking who answers), send requests, wait for replies
 * with a deadline across several providers at once.
 *
 * Everything is non-blocking and bounded by the caller's deadline: a
 * provider whose callback hangs, or which stops reading, costs a consumer
 * at most its time limit. The provider is treated as untrusted input like
 * its segment: its identity is checked (peer.c: it must be the process
 * the segment names, in this pid namespace or one below it, running as
 * the segment's owner), reply sizes are capped and every field is
 * bounds-checked by the decoder.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "common/naming.h"

pcw__ctl_conn *pcw__ctl_new(const pcw_segment *seg)
{
    const pcw_provider_info *info = pcw_segment_provider(seg);
    struct stat st;
    if (fstat(seg->fd, &st) != 0)
        return NULL;
    pcw__ctl_conn *k = calloc(1, sizeof *k);
    if (!k || !(k->seg_path = strdup(info->path))) {
        free(k);
        return NULL;
    }
    k->seg_dev = st.st_dev;
    k->seg_ino = st.st_ino;
    k->fd = -1;
    k->rx_fd = -1;
    /* Only a provider that says it hands out reply areas is asked for one:
     * one built before them would close the connection on the request. */
    k->area_state = info->flags & PCW_SEG_F_AREA ? 0 : -1;
    k->pid = info->pid;
    k->uid = info->uid;
    k->owner = (uint32_t)st.st_uid;
    k->start_time = info->start_time;
    return k;
}

static void reset_rx(pcw__ctl_conn *k)
{
    free(k->pl);
    k->pl = NULL;
    k->pl_got = 0;
    k->hb_got = 0;
    k->rx_pos = k->rx_len = 0;
}

/* Take r off k's awaited list (it must be on it). */
static void unlink_req(pcw__ctl_conn *k, pcw__ctl_req *r)
{
    pcw__ctl_req **pp = &k->awaited, *prev = NULL;
    while (*pp && *pp != r)
        prev = *pp, pp = &(*pp)->next;
    if (*pp) {
        *pp = r->next;
        if (k->awaited_tail == r)
            k->awaited_tail = prev;
    }
    r->next = NULL;
    r->linked = 0;
}

/* r's answer is in (or it failed): status, and the reply payload if any. */
static void complete(pcw__ctl_req *r, int status, unsigned char *reply, uint32_t len)
{
    unlink_req(r->k, r);
    r->done = 1;
    r->status = status;
    r->reply = reply;
    r->reply_len = len;
}

static void drop_added(pcw__ctl_conn *k, size_t i)
{
    free(k->added[i].payload);
    k->added_bytes -= k->added[i].len;
    k->added[i] = k->added[--k->nadded];
}

/* Close the connection: every request awaited on it fails with rc. The
 * provider ends whatever the connection held (design.md 12), so no
 * COLLECT_END is owed any more; an ADD_COUNTER it never confirmed is
 * forgotten. */
static void fail(pcw__ctl_conn *k, int rc)
{
    for (size_t i = k->nadded; i-- > 0;)
        if (!k->added[i].confirmed)
            drop_added(k, i);
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
    k->holds = 0;
    reset_rx(k);
    /* The area goes with its connection: a new one gets a new area. */
    if (k->area)
        munmap((void *)k->area, k->area_size);
    k->area = NULL;
    k->area_size = 0;
    k->area_id = 0;
    if (k->rx_fd >= 0)
        close(k->rx_fd);
    k->rx_fd = -1;
    while (k->awaited)
        complete(k->awaited, rc, NULL, 0);
}

void pcw__ctl_disconnect(pcw__ctl_conn *k)
{
    fail(k, PCW_E_IO);
}

void pcw__ctl_free(pcw__ctl_conn *k)
{
    if (!k)
        return;
    pcw__ctl_disconnect(k);
    for (size_t i = 0; i < k->nadded; i++)
        free(k->added[i].payload);
    free(k->added);
    free(k->rx);
    free(k->seg_path);
    free(k);
}

void pcw__ctl_req_release(pcw__ctl_req *r)
{
    if (r->linked)
        unlink_req(r->k, r);
    free(r->reply);
    r->reply = NULL;
    r->reply_len = 0;
}

/* The socket beside segment `seg` (pcw/naming.h), in addr; through
 * /proc/self/fd for paths longer than sun_path (*dirfd is then opened). */
static int sock_addr(const char *seg, struct sockaddr_un *a, int *dirfd)
{
    char path[PATH_MAX];
    *dirfd = -1;
    if (pcw__sibling(seg, PCW_SOCK_SUFFIX, path, sizeof path) != 0)
        return PCW_E_NOT_FOUND;
    int rc = pcw__sock_addr(path, a, dirfd);
    return rc == PCW_E_INVALID_PARAMETER ? PCW_E_NOT_FOUND : rc;
}

/* May the open connection still be used? Not if it has been idle so long
 * that the provider may close it while a request is on its way. One the
 * provider closed for another reason is found by the send (EPIPE, then
 * pcw__ctl_send connects once anew), not by a recv here: that would be a
 * system call on every collection. */
static int still_open(const pcw__ctl_conn *k)
{
    long long bound = k->nadded ? PCW_CTL_ADDED_IDLE_TIMEOUT_MS : PCW_CTL_IDLE_TIMEOUT_MS;
    return pcw__ctl_now_ms() - k->last_send <= bound / 2;
}

/* Remember an ADD_COUNTER (its payload, and the id it went with) to add
 * it again on a new connection once confirmed; past the bounds it is not
 * (the provider would refuse it). */
static void remember_added(pcw__ctl_conn *k, const void *payload, size_t len, uint32_t id)
{
    if (k->nadded >= PCW__CTL_MAX_READD || len > PCW__CTL_MAX_READD_BYTES - k->added_bytes)
        return;
    if (k->nadded == k->added_cap) {
        size_t cap = k->added_cap ? 2 * k->added_cap : 8;
        pcw__ctl_added *v = realloc(k->added, cap * sizeof *v);
        if (!v)
            return;
        k->added = v, k->added_cap = cap;
    }
    unsigned char *p = malloc(len ? len : 1);
    if (!p)
        return;
    memcpy(p, payload, len);
    k->added[k->nadded++] = (pcw__ctl_added){p, len, id, 0};
    k->added_bytes += len;
}

/* The provider answered ADD_COUNTER `id`: confirmed, or forgotten. */
static void answered_added(pcw__ctl_conn *k, uint32_t id, int status)
{
    for (size_t i = 0; i < k->nadded; i++)
        if (!k->added[i].confirmed && k->added[i].id == id) {
            if (status == PCW_OK)
                k->added[i].confirmed = 1;
            else
                drop_added(k, i);
            return;
        }
}

/* A REMOVE_COUNTER: forget the ADD of the same payload (the layouts match:
 * control_proto.h). */
static void forget_added(pcw__ctl_conn *k, const void *payload, size_t len)
{
    for (size_t i = 0; i < k->nadded; i++)
        if (k->added[i].len == len && memcmp(k->added[i].payload, payload, len) == 0) {
            drop_added(k, i);
            return;
        }
}

/* A new connection: add the remembered counters again (in the list's
 * order, which drop_added does not keep: the provider does not care), not
 * awaited (their answers are dropped by id), before anything else goes on
 * it. */
static int readd(pcw__ctl_conn *k, long long deadline)
{
    int rc = PCW_OK;
    k->readding = 1;
    for (size_t i = 0; i < k->nadded && rc == PCW_OK; i++)
        rc = pcw__ctl_send(k, PCW_CTL_ADD_COUNTER, k->added[i].payload, k->added[i].len, NULL,
                           deadline);
    k->readding = 0;
    return rc;
}

int pcw__ctl_connect(pcw__ctl_conn *k, long long deadline)
{
    /* In use by the current call (requests are awaited on it): if it has
     * failed meanwhile, those requests have failed with it. */
    if (k->fd >= 0 && (k->awaited || still_open(k)))
        return PCW_OK;
    pcw__ctl_disconnect(k);
    struct sockaddr_un a;
    int dirfd, rc = sock_addr(k->seg_path, &a, &dirfd);
    if (rc != PCW_OK)
        return rc;
    /* Non-blocking: a Unix-socket connect never waits then; a provider
     * whose backlog is full is EAGAIN, not a hang. */
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        rc = PCW_E_IO;
    } else if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        rc = e == ENOENT                 ? PCW_E_NOT_FOUND
             : e == ECONNREFUSED         ? PCW_E_PROVIDER_EXITED
             : e == EAGAIN               ? PCW_E_CONNECTIONS_FULL
             : e == EACCES || e == EPERM ? PCW_E_PERMISSION
                                         : PCW_E_IO;
    } else {
        /* Whoever listens there must be the provider the segment names:
         * never send our queries to (or take data from) an impostor. */
        rc = pcw__ctl_peer_check(fd, k, deadline);
    }
    if (dirfd >= 0)
        close(dirfd);
    if (rc != PCW_OK) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    /* Blocking from now on, each call saying MSG_DONTWAIT where it must
     * not wait, and receives bounded by SO_RCVTIMEO: pcw__ctl_wait may
     * then wait for one connection's reply in its recv (one system call
     * where poll and recv were two). If either fails, it stays
     * non-blocking and pcw__ctl_wait polls. */
    struct timeval tv = {0, PCW__CTL_BLOCK_MS * 1000};
    k->blocking = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
                  fcntl(fd, F_SETFL, O_RDWR) == 0;
    k->fd = fd;
    k->epoch++;
    k->holds = 0;
    k->fresh = 1;
    k->refused = 0;
    reset_rx(k);
    k->area_asked = 0;
    return readd(k, deadline);
}

/* Wait for fd to be ready for `ev` until deadline. 1 ready, 0 timeout. */
static int wait_fd(int fd, short ev, long long deadline)
{
    for (;;) {
        long long left = deadline - pcw__ctl_now_ms();
        if (left < 0)
            left = 0;
        struct pollfd p = {fd, ev, 0};
        int r = poll(&p, 1, (int)(left > INT_MAX ? INT_MAX : left));
        if (r < 0 && errno == EINTR)
            continue;
        return r > 0;
    }
}

static int pump(pcw__ctl_conn *k, long long deadline, int block);

/* May the reply to this request (encoded in w) be written to the area?
 * Only an awaited ENUMERATE or COLLECT, and only while no other request's
 * reply may be written there: the provider writes the area only for a
 * request that carries PCW_CTL_IN_AREA, so while one's reply is not read
 * off the stream yet (area_id), a second one - pipelined, or sent after
 * the first timed out - goes without it, and the provider never writes
 * the area while this consumer may be copying it out (docs/design.md, "The
 * reply area"). Sets or clears the flag in w; 1 if set. */
static int allow_area(pcw__ctl_conn *k, uint16_t type, pcw_ctl_writer *w, int awaited)
{
    size_t at = PCW_CTL_HEADER_SIZE + PCW_CTL_FLAGS_AT;
    if ((type != PCW_CTL_COLLECT && type != PCW_CTL_ENUMERATE) || w->bad || w->len < at + 4)
        return 0;
    int in = k->area && !k->area_id && awaited;
    if (in)
        w->buf[at] |= PCW_CTL_IN_AREA;
    else
        w->buf[at] &= (unsigned char)~PCW_CTL_IN_AREA;
    return in;
}

static int send_req(pcw__ctl_conn *k, uint16_t type, const void *payload, size_t len,
                    pcw__ctl_req *r, long long deadline, uint32_t *sent_id);

int pcw__ctl_send(pcw__ctl_conn *k, uint16_t type, const void *payload, size_t len, pcw__ctl_req *r,
                  long long deadline)
{
    return send_req(k, type, payload, len, r, deadline, NULL);
}

/* pcw__ctl_send; *sent_id (if not NULL) gets the id it went with. */
static int send_req(pcw__ctl_conn *k, uint16_t type, const void *payload, size_t len,
                    pcw__ctl_req *r, long long deadline, uint32_t *sent_id)
{
    if (k->fd < 0)
        return PCW_E_IO;
    /* The reply area (docs/design.md 12.1): asked for before the
     * connection's first ENUMERATE or COLLECT, not awaited - its answer
     * (deliver, take_area) comes before this request's, which goes without
     * the area; the next ones may use it. Not on connect: most connections
     * (adding counters) never need one. */
    if ((type == PCW_CTL_COLLECT || type == PCW_CTL_ENUMERATE) && r && k->area_state == 0 &&
        !k->area_asked && !k->readding) {
        k->area_asked = 1;
        int rc = send_req(k, PCW_CTL_AREA, NULL, 0, NULL, deadline, &k->area_ask_id);
        if (rc != PCW_OK)
            return rc;
    }
    if (len > PCW_CTL_MAX_REQUEST)
        return PCW_E_INVALID_PARAMETER;
    /* Removed, as far as the caller knows, whether or not this reaches
     * the provider: never added again. */
    if (type == PCW_CTL_REMOVE_COUNTER)
        forget_added(k, payload, len);
    if (++k->next_id == 0)
        k->next_id = 1; /* 0 means "none" */
    /* Its own: a reconnection below sends the re-added counters first,
     * with ids of their own. */
    uint32_t id = k->next_id;
    unsigned char buf[PCW_CTL_HEADER_SIZE + 256];
    pcw_ctl_writer w = {buf, 0, sizeof buf, PCW_CTL_HEADER_SIZE + PCW_CTL_MAX_REQUEST, 0};
    pcw_ctl_header h = {PCW_CTL_MAGIC, PCW_CTL_VERSION, type, (uint32_t)len, id, 0, 0};
    /* The writer starts on the stack buffer; it may not realloc that. */
    unsigned char *heap = NULL;
    if (len > sizeof buf - PCW_CTL_HEADER_SIZE) {
        heap = malloc(PCW_CTL_HEADER_SIZE + len);
        if (!heap)
            return PCW_E_NO_MEMORY;
        w.buf = heap, w.cap = PCW_CTL_HEADER_SIZE + len;
    }
    pcw__ctl_put_header(&w, &h);
    pcw__ctl_put_bytes(&w, payload, len);
    int in_area = allow_area(k, type, &w, r != NULL);
    size_t done = 0;
    int rc = PCW_OK, retried = 0;
    while (done < w.len) {
        ssize_t s = send(k->fd, w.buf + done, w.len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (s > 0) {
            done += (size_t)s;
            continue;
        }
        if (s < 0 && errno == EINTR)
            continue;
        if (s < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(k->fd, POLLOUT, deadline))
                continue;
            rc = PCW_E_TIMEOUT;
        } else if (s < 0 && (errno == EPIPE || errno == ECONNRESET)) {
            /* The provider closed the connection before reading this. */
            if (done == 0 && !k->fresh && !retried && !k->awaited && !k->readding) {
                /* An old connection (closed while idle, or shed to make
                 * room for another consumer): once anew. */
                retried = 1;
                pcw__ctl_disconnect(k);
                rc = pcw__ctl_connect(k, deadline);
                if (rc == PCW_OK) {
                    in_area = allow_area(k, type, &w, r != NULL); /* the new one's area */
                    continue;
                }
                break;
            }
            /* A new one: if it was refused, the refusal is queued. */
            pump(k, deadline, 0);
            rc = k->refused ? k->refused : PCW_E_PROVIDER_EXITED;
        } else {
            rc = PCW_E_IO;
        }
        break;
    }
    free(heap);
    if (rc != PCW_OK) {
        /* A half-written request would desynchronise the stream. */
        fail(k, rc);
        return rc;
    }
    k->fresh = 0;
    k->last_send = pcw__ctl_now_ms();
    if (in_area)
        k->area_id = id;
    if (sent_id)
        *sent_id = id;
    if (type == PCW_CTL_ADD_COUNTER && !k->readding)
        remember_added(k, payload, len, id);
    if (r) {
        pcw__ctl_req_release(r);
        r->k = k;
        r->next = NULL;
        r->id = id;
        r->type = type;
        r->done = 0;
        r->status = PCW_E_TIMEOUT;
        r->linked = 1;
        if (k->awaited_tail)
            k->awaited_tail->next = r;
        else
            k->awaited = r;
        k->awaited_tail = r;
    }
    return PCW_OK;
}

/* The AREA reply (h, payload pl): map the area handed over with it. The
 * provider is hostile like its segment: the descriptor must be a regular
 * file (a memfd) of the size the reply says, at most PCW_CTL_MAX_REPLY,
 * owned by the segment's owner and sealed against shrinking (a mapping of
 * a file that shrinks faults: SIGBUS); anything else is refused
 * (PCW_E_PROTOCOL, the descriptor closed). A refusal comes without one. */
static int take_area(pcw__ctl_conn *k, const pcw_ctl_header *h, const unsigned char *pl)
{
    int fd = k->rx_fd;
    k->rx_fd = -1;
    if (h->status != PCW_OK) {
        if (fd >= 0)
            close(fd);
        return fd >= 0 ? PCW_E_PROTOCOL : PCW_OK;
    }
    struct stat st;
    uint32_t size = h->length == 4 ? (uint32_t)pcw__ctl_get_le(pl, 4) : 0;
    int seals = fd >= 0 ? fcntl(fd, F_GET_SEALS) : -1;
    void *m = MAP_FAILED;
    if (fd >= 0 && !k->area && size > 0 && size <= PCW_CTL_MAX_REPLY && fstat(fd, &st) == 0 &&
        S_ISREG(st.st_mode) && st.st_size == (off_t)size && (uint32_t)st.st_uid == k->owner &&
        seals >= 0 && (seals & F_SEAL_SHRINK))
        m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (fd >= 0)
        close(fd); /* the mapping keeps it */
    if (m == MAP_FAILED)
        return PCW_E_PROTOCOL;
    k->area = m;
    k->area_size = size;
    return PCW_OK;
}

/* A completion's payload (pl, *len bytes): the reply is area[offset,
 * offset + length). The provider may change the area at any moment, so
 * the bytes are copied out first, once, and only the copy is decoded (and
 * validated, like a reply from the socket). NULL if the payload or the
 * range is bad (or no memory). */
static unsigned char *area_copy(const pcw__ctl_conn *k, const unsigned char *pl, uint32_t *len)
{
    if (!k->area || *len != 8)
        return NULL;
    uint32_t off = (uint32_t)pcw__ctl_get_le(pl, 4), n = (uint32_t)pcw__ctl_get_le(pl + 4, 4);
    if (off > k->area_size || n > k->area_size - off)
        return NULL;
    unsigned char *copy = malloc(n ? n : 1);
    if (copy)
        memcpy(copy, k->area + off, n);
    *len = n;
    return copy;
}

/* A whole message is in (k->h, k->pl): hand it to the request awaiting
 * it, or drop it. */
static void deliver(pcw__ctl_conn *k)
{
    pcw_ctl_header *h = &k->h;
    unsigned char *pl = k->pl;
    k->pl = NULL;
    k->pl_got = 0;
    k->hb_got = 0;
    if (h->type == (PCW_CTL_AREA | PCW_CTL_REPLY) && take_area(k, h, pl) != PCW_OK) {
        /* An area refused: never asked of this provider again. */
        k->area_state = -1;
        free(pl);
        fail(k, PCW_E_PROTOCOL);
        return;
    }
    if (h->type == PCW_CTL_REPLY && h->id && h->id == k->area_ask_id)
        k->area_state = -1; /* it did not know the request after all */
    if ((h->type & PCW_CTL_REPLY) && (h->type & PCW_CTL_AREA_DONE)) {
        /* A completion: only for the one request allowed the area. */
        unsigned char *copy = NULL;
        if (k->area_id && h->id == k->area_id && h->status == PCW_OK)
            copy = area_copy(k, pl, &h->length);
        free(pl);
        if (!copy) {
            fail(k, PCW_E_PROTOCOL);
            return;
        }
        pl = copy;
        h->type &= (uint16_t)~PCW_CTL_AREA_DONE;
    }
    /* Any reply to the request allowed the area: the provider is done
     * with it, and (the copy above taken) so is this consumer. */
    if (k->area_id && h->id == k->area_id)
        k->area_id = 0;
    if (h->type == PCW_CTL_REFUSED) {
        free(pl);
        /* Every slot taken (PCW_E_BUSY from providers built before
         * PCW_E_CONNECTIONS_FULL), or a stranger. */
        k->refused = h->status == PCW_E_CONNECTIONS_FULL || h->status == PCW_E_BUSY
                         ? PCW_E_CONNECTIONS_FULL
                         : PCW_E_PERMISSION;
        if (k->refused == PCW_E_PERMISSION)
            pcw__fail_detail(PCW_E_PERMISSION,
                             "the provider refused this consumer: it serves its own uid, root and "
                             "an opted-in group, as its user namespace sees them (uid %u here is "
                             "not one)",
                             (unsigned)geteuid());
        fail(k, k->refused);
        return;
    }
    if (h->type == (PCW_CTL_ADD_COUNTER | PCW_CTL_REPLY))
        answered_added(k, h->id, h->status);
    /* Replies come in request order, so this is nearly always the first. */
    pcw__ctl_req *r = k->awaited;
    while (r && r->id != h->id)
        r = r->next;
    if (r && (h->type == (r->type | PCW_CTL_REPLY) || h->type == PCW_CTL_REPLY)) {
        int bad = h->type == PCW_CTL_REPLY; /* the provider could not parse us */
        /* A positive status is the provider's own error code (a Win32
         * code its control callback returned): passed on as it is
         * (pcw_status_describe shows it). */
        complete(r, bad ? PCW_E_PROTOCOL : h->status, pl, h->length);
        if (bad)
            fail(k, PCW_E_PROTOCOL); /* it closes the connection after saying so */
        return;
    }
    free(pl); /* late (its request timed out) or fire-and-forget */
}

/* Take up to n bytes of the stream from src into the message being
 * received (header, then payload); a whole message is delivered. Returns
 * the bytes taken, with *done set when a message was delivered; or -1
 * after fail() (a malformed header, no memory, a refusal). */
static ssize_t take(pcw__ctl_conn *k, const unsigned char *src, size_t n, int *done)
{
    size_t used = 0;
    if (k->hb_got < PCW_CTL_HEADER_SIZE) {
        size_t m = PCW_CTL_HEADER_SIZE - k->hb_got;
        if (m > n)
            m = n;
        memcpy(k->hb + k->hb_got, src, m);
        k->hb_got += m, used = m;
        if (k->hb_got < PCW_CTL_HEADER_SIZE)
            return (ssize_t)used;
        if (pcw__ctl_get_header(k->hb, &k->h) != 0 || k->h.length > PCW_CTL_MAX_REPLY ||
            !(k->h.type & PCW_CTL_REPLY || k->h.type == PCW_CTL_REFUSED)) {
            fail(k, PCW_E_PROTOCOL);
            return -1;
        }
        k->pl = malloc(k->h.length ? k->h.length : 1);
        if (!k->pl) {
            fail(k, PCW_E_NO_MEMORY);
            return -1;
        }
        k->pl_got = 0;
    }
    size_t m = k->h.length - k->pl_got;
    if (m > n - used)
        m = n - used;
    if (m)
        memcpy(k->pl + k->pl_got, src + used, m);
    k->pl_got += m, used += m;
    if (k->pl_got == k->h.length) {
        int refused = k->h.type == PCW_CTL_REFUSED;
        deliver(k);
        *done = 1;
        if (refused)
            return -1;
    }
    return (ssize_t)used;
}

/* recvmsg into dst, taking a descriptor that comes with the bytes: one
 * is kept until the AREA reply claims it (deliver); a second, or a
 * truncated list, is a protocol error, all of them closed. -2 then. */
static ssize_t rx(pcw__ctl_conn *k, void *dst, size_t want, int flags)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(4 * sizeof(int))];
    } cm;
    struct iovec iov = {dst, want};
    struct msghdr m;
    memset(&m, 0, sizeof m);
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = cm.buf;
    m.msg_controllen = sizeof cm.buf;
    ssize_t r = recvmsg(k->fd, &m, flags | MSG_CMSG_CLOEXEC);
    if (r < 0)
        return r;
    int bad = (m.msg_flags & MSG_CTRUNC) != 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
            if (k->rx_fd < 0 && !bad)
                k->rx_fd = fd;
            else
                close(fd), bad = 1;
        }
    }
    return bad ? -2 : r;
}

/* Read what is available, until the deadline: a provider that keeps the
 * socket full (a flood of late replies) must not hold the consumer past
 * it. Returns 0, or -1 after fail().
 *
 * System calls are most of a collection's cost, so the stream is read in
 * blocks of PCW__CTL_RX_BYTES (a header and its payload usually in one
 * recv), a payload larger than that straight into its buffer, and once a
 * message was delivered and nothing else is awaited, without the recv
 * that would only say EAGAIN. With `block` (a blocking connection, at
 * least PCW__CTL_BLOCK_MS before the deadline), the first recv waits for
 * data, SO_RCVTIMEO bounding it; every other recv does not wait. */
static int pump(pcw__ctl_conn *k, long long deadline, int block)
{
    int delivered = 0;
    for (;;) {
        while (k->rx_pos < k->rx_len) {
            ssize_t t = take(k, k->rx + k->rx_pos, k->rx_len - k->rx_pos, &delivered);
            if (t < 0)
                return -1;
            k->rx_pos += (size_t)t;
        }
        k->rx_pos = k->rx_len = 0;
        if (delivered && !k->awaited && k->hb_got == 0)
            return 0;
        if (pcw__ctl_now_ms() >= deadline)
            return 0; /* the rest waits for the next wait's deadline */
        if (!k->rx && !(k->rx = malloc(PCW__CTL_RX_BYTES))) {
            fail(k, PCW_E_NO_MEMORY);
            return -1;
        }
        int direct =
            k->hb_got == PCW_CTL_HEADER_SIZE && k->h.length - k->pl_got >= PCW__CTL_RX_BYTES;
        unsigned char *dst = direct ? k->pl + k->pl_got : k->rx;
        size_t want = direct ? k->h.length - k->pl_got : PCW__CTL_RX_BYTES;
        /* Once something was delivered, the caller may want it now. */
        ssize_t r = rx(k, dst, want, block && !delivered ? 0 : MSG_DONTWAIT);
        block = 0;
        if (r == -2) {
            k->area_state = -1; /* descriptors come only with an area */
            fail(k, PCW_E_PROTOCOL);
            return -1;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (r <= 0) {
            fail(k, r == 0 ? PCW_E_PROVIDER_EXITED : PCW_E_IO);
            return -1;
        }
        if (direct) {
            k->pl_got += (size_t)r;
            if (k->pl_got == k->h.length) {
                int refused = k->h.type == PCW_CTL_REFUSED;
                deliver(k);
                delivered = 1;
                if (refused)
                    return -1;
            }
        } else {
            k->rx_len = (size_t)r;
        }
    }
}

size_t pcw__ctl_wait(pcw__ctl_req *const *rs, size_t n, long long deadline, int any)
{
    /* One pollfd per connection with something awaited (several requests
     * may await one connection: conn->slot finds its entry). */
    struct pollfd stack[16], *pf = n <= 16 ? stack : malloc(n * sizeof *pf);
    pcw__ctl_conn *kstack[16], **kv = n <= 16 ? kstack : malloc(n * sizeof *kv);
    size_t pending = 0;
    for (int first = 1;; first = 0) {
        size_t m = 0, waiting = 0;
        for (size_t i = 0; pf && kv && i < n; i++) {
            pcw__ctl_req *r = rs[i];
            if (!r || !r->linked)
                continue;
            pcw__ctl_conn *k = r->k;
            waiting++;
            if (k->slot < m && kv[k->slot] == k)
                continue;
            k->slot = m;
            kv[m] = k;
            pf[m].fd = k->fd, pf[m].events = POLLIN, pf[m].revents = 0;
            m++;
        }
        if (waiting == 0 || (any && !first && waiting < pending))
            break;
        pending = waiting;
        long long left = deadline - pcw__ctl_now_ms();
        if (left <= 0)
            break;
        if (m == 1 && kv[0]->blocking && left >= PCW__CTL_BLOCK_MS + PCW__CTL_BLOCK_SLACK_MS) {
            /* One connection: wait in its recv, which SO_RCVTIMEO ends
             * well before the deadline. */
            pump(kv[0], deadline, 1);
            continue;
        }
        int rc = poll(pf, m, (int)(left > INT_MAX ? INT_MAX : left));
        if (rc < 0 && errno != EINTR)
            break;
        for (size_t j = 0; rc > 0 && j < m; j++)
            if (pf[j].revents)
                pump(kv[j], deadline, 0);
    }
    /* At the deadline (or out of memory), whatever has no answer times
     * out. Its connection stays; the late answer is dropped by id. */
    int late = pcw__ctl_now_ms() >= deadline || !pf || !kv;
    size_t left = 0;
    for (size_t i = 0; i < n; i++) {
        pcw__ctl_req *r = rs[i];
        if (!r || !r->linked)
            continue;
        if (late)
            complete(r, pf && kv ? PCW_E_TIMEOUT : PCW_E_NO_MEMORY, NULL, 0);
        else
            left++;
    }
    if (pf != stack)
        free(pf);
    if (kv != kstack)
        free(kv);
    return left;
}

void pcw__ctl_table_free(pcw__ctl_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        pcw__ctl_free(t->v[i]);
    free(t->v);
    free(t);
}
