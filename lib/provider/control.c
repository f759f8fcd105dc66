/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/control.c - the control channel's server: the
 * listener, one thread per connected consumer, requests, replies, and the
 * limits that keep a consumer from exhausting the provider. The protocol
 * is pcw/control_proto.h and docs/control-channel.md; what callbacks may
 * rely on is pcw/callback.h. Private (see internal.h).
 *
 * Lifetimes (why nothing is used after it is freed):
 *   - Connection threads find a registration in prov->regs under
 *     urcu_bp_read_lock() (pcw__conn_acquire) and, before leaving the
 *     read-side section, mark it busy (conn->busy, under ctl->lock).
 *     pcw_unregister unlinks the registration (under prov->lock), waits a
 *     grace period (after which no thread can newly find it, and every
 *     walk that saw it has ended) and then waits until no connection is
 *     busy on it (pcw__control_forget). So after pcw_unregister returns,
 *     its callback is not running and never runs again: its context may
 *     go.
 *   - Callbacks run with no lock held and outside any RCU read-side
 *     section (pcw/callback.h says what they may call).
 *   - pcw_provider_close stops the channel first: it wakes the listener,
 *     shuts every connection down (unblocking threads waiting for input)
 *     and joins every thread. A thread inside a user callback is waited
 *     for: close returns once the callback returns. Threads are joinable,
 *     never detached, so none outlives the provider.
 */
#include "internal.h"

/* The control channel's limits: what one provider grants its consumers,
 * so that no consumer can exhaust its memory or threads or stall it.
 * docs/design.md lists every limit in one table. A program may define any
 * of these in its implementation file, before it includes pcw/provider.h
 * with PCW_PROVIDER_IMPLEMENTATION (no other file uses them);
 * PCW_CTL_IDLE_TIMEOUT_MS and PCW_CTL_ADDED_IDLE_TIMEOUT_MS are in
 * pcw/control_proto.h, because consumers know them too.
 *
 * Slots: a consumer that finds all PCW_CTL_MAX_CONNS taken sheds the
 * connection that has waited longest for its next request, if that is at
 * least PCW_CTL_SHED_AFTER_MS, and is served; only when every connection
 * is busy or spoke more recently is it refused (PCW_E_CONNECTIONS_FULL).
 * So silent connections - idle ones, and those holding added counters,
 * which may stay PCW_CTL_ADDED_IDLE_TIMEOUT_MS - can never lock consumers
 * out, while a consumer that is actually asking keeps its place. The
 * consumer library reconnects a shed connection on its next call and adds
 * its counters again (lib/consumer/control.c). */
#ifndef PCW_CTL_MAX_CONNS
#define PCW_CTL_MAX_CONNS 128 /* consumers served at once; more: shed, or REFUSED */
#endif
#ifndef PCW_CTL_SHED_AFTER_MS
#define PCW_CTL_SHED_AFTER_MS 1000 /* silence before a connection may be shed */
#endif
#ifndef PCW_CTL_MAX_SHEDDING
#define PCW_CTL_MAX_SHEDDING 16 /* shed connections still finishing (threads) */
#endif
#ifndef PCW_CTL_BACKLOG
#define PCW_CTL_BACKLOG 64 /* connections not yet accepted; more: connect fails EAGAIN */
#endif
#ifndef PCW_CTL_MSG_TIMEOUT_MS
#define PCW_CTL_MSG_TIMEOUT_MS 5000 /* a request, from its first byte to its last */
#endif
#ifndef PCW_CTL_SEND_TIMEOUT_MS
#define PCW_CTL_SEND_TIMEOUT_MS 10000 /* a reply, from its first byte to its last */
#endif
#ifndef PCW_CTL_HOLD_TIMEOUT_MS
#define PCW_CTL_HOLD_TIMEOUT_MS 2000 /* COLLECT_START to COLLECT_END (HOLD) */
#endif
#ifndef PCW_CTL_MAX_HELD
#define PCW_CTL_MAX_HELD 16 /* collections one connection holds; more: PCW_E_BUSY */
#endif
#ifndef PCW_CTL_MAX_ADDED
#define PCW_CTL_MAX_ADDED 4096 /* counters one connection added; more: TOO_MANY_COUNTERS */
#endif
#ifndef PCW_CTL_AREA_BYTES
/* A connection's reply area (PCW_CTL_AREA): the largest reply written
 * there; a larger one goes on the socket. Pages are allocated as replies
 * touch them. */
#define PCW_CTL_AREA_BYTES (1u << 20)
#endif
/* The area's size: PCW_CTL_AREA_BYTES, which a program may set, kept within
 * a page and PCW_CTL_MAX_REPLY (the largest area a consumer accepts). */
#define PCW__CTL_AREA_SIZE                                                                         \
    ((PCW_CTL_AREA_BYTES) < 4096u               ? 4096u                                            \
     : (PCW_CTL_AREA_BYTES) > PCW_CTL_MAX_REPLY ? (uint32_t)PCW_CTL_MAX_REPLY                      \
                                                : (uint32_t)(PCW_CTL_AREA_BYTES))
#ifndef PCW_CTL_MAX_ADDED_BYTES
#define PCW_CTL_MAX_ADDED_BYTES (1u << 20) /* their instance masks, bytes */
#endif

/* ---- the channel's state ------------------------------------------------- */

typedef struct pcw__ctl pcw__ctl;

/* A counter a consumer added: told REMOVE when it goes. */
typedef struct pcw__added {
    uint32_t reg_index, counter_index, counter_id, instance_id;
    const char *cset_name; /* in the segment: lives as long as the provider */
    char *mask;
} pcw__added;

/* A collection a consumer holds open (COLLECT with PCW_CTL_HOLD). */
typedef struct pcw__held {
    uint32_t reg_index;
    const char *cset_name;
    long long deadline; /* ms, CLOCK_MONOTONIC: ended then at the latest */
} pcw__held;

typedef struct pcw__conn {
    pcw__ctl *ctl;
    struct pcw__conn *next; /* ctl->conns, under ctl->lock */
    int fd;                 /* closed by whoever joins the thread */
    pthread_t thread;
    int done;       /* the thread is finishing; under ctl->lock */
    int shed;       /* the listener shut it down to make room; under ctl->lock */
    pcw__reg *busy; /* whose callback it may run; under ctl->lock */
    /* Since when (ms, CLOCK_MONOTONIC) it has waited for its next request;
     * 0 while it reads or serves one. Written by its thread, read by the
     * listener (pcw__make_room), both relaxed: nothing else is published
     * with it, and a stale value only picks another victim, or sheds one
     * whose request has just come (its consumer then connects again). */
    long long idle_since;
    struct ucred cred;
    /* Thread-private. */
    pcw__added *added;
    size_t nadded, added_cap;
    size_t added_bytes; /* their masks, NULs included */
    pcw__held *held;
    size_t nheld, held_cap;
    /* Read ahead (pcw__conn_read): [rx_pos, rx_len) of rx not used yet. */
    unsigned char *rx;
    size_t rx_pos, rx_len;
    /* The reply area (PCW_CTL_AREA), PCW__CTL_AREA_SIZE mapped read-write;
     * NULL until asked for. Written by this thread only, and only while
     * serving a request that carries PCW_CTL_IN_AREA (docs/design.md,
     * "The reply area"). */
    unsigned char *area;
    long long rcvtimeo; /* SO_RCVTIMEO set on fd, ms; 0: none */
    /* Every ENUMERATE/COLLECT's callback output, in turn: its allocations
     * are kept between requests (buffer.c bounds them). */
    pcw_buffer buf;
} pcw__conn;

/* How much of a connection's stream one recv reads ahead: a request's
 * header and payload (a COLLECT is 49 bytes) usually come in one. */
#define PCW__CONN_RX_BYTES 4096

struct pcw__ctl {
    pcw__prov *prov;
    int lfd;     /* listening socket */
    int wake[2]; /* pipe: stop, or a connection finished */
    pthread_t listener;
    pthread_mutex_t lock;
    pthread_cond_t idle; /* some conn->busy was cleared */
    pcw__conn *conns;
    size_t nconns; /* in conns, shed ones included; under lock */
    size_t nshed;  /* of them, shed and not yet reaped; under lock */
    int stopping;  /* under lock */
    uid_t uid;
    gid_t group;
    int use_group;
    char sock[PATH_MAX];
};

static pcw__ctl *pcw__ctl_of(pcw__prov *p)
{
    /* Acquire pairs with the release in pcw__control_run: a thread that
     * sees the pointer sees the channel initialised. */
    return (pcw__ctl *)__atomic_load_n(&p->control, __ATOMIC_ACQUIRE);
}

/* ---- peers --------------------------------------------------------------- */

static int pcw__peer_allowed(pcw__ctl *ctl, int fd, struct ucred *cr)
{
    socklen_t l = sizeof *cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &l) != 0 || l != sizeof *cr)
        return 0;
    if (cr->uid == ctl->uid || cr->uid == 0)
        return 1;
    if (!ctl->use_group)
        return 0;
    if (cr->gid == ctl->group)
        return 1;
    gid_t small[64], *g = small;
    socklen_t gl = sizeof small;
    int ok = 0;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &gl) != 0) {
        if (errno != ERANGE || gl == 0 || gl > 65536 * sizeof(gid_t) || !(g = (gid_t *)malloc(gl)))
            return 0;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &gl) != 0)
            gl = 0;
    }
    for (size_t i = 0; i < gl / sizeof(gid_t); i++)
        if (g[i] == ctl->group)
            ok = 1;
    if (g != small)
        free(g);
    return ok;
}

/* ---- I/O ----------------------------------------------------------------- */

static long long pcw__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the cancel signal (pcw/callback.h) --------------------------------- */

/* One request's cancel signal, on the connection thread's stack while its
 * callbacks run. Read-only for them. */
struct pcw_cancel {
    int fd;             /* the consumer's connection: POLLRDHUP when it goes */
    long long deadline; /* ms, CLOCK_MONOTONIC; LLONG_MAX: none */
};

/* The consumer hung up (or the provider shut the connection down to
 * close): poll with POLLRDHUP only, so that a pipelined request waiting
 * to be read (POLLIN) does not count. */
static int pcw__hung_up(int fd, int ms)
{
    struct pollfd pf = {fd, POLLRDHUP, 0};
    int r = poll(&pf, 1, ms);
    return r > 0 && pf.revents != 0;
}

int pcw_cancelled(const pcw_cancel *c)
{
    if (!c)
        return 0;
    return pcw__now_ms() >= c->deadline || pcw__hung_up(c->fd, 0);
}

int pcw_cancel_wait(const pcw_cancel *c, int timeout_ms)
{
    if (!c) {
        if (timeout_ms > 0) {
            struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
        }
        return 0;
    }
    long long until = timeout_ms < 0 ? LLONG_MAX : pcw__now_ms() + timeout_ms;
    for (;;) {
        long long now = pcw__now_ms();
        if (now >= c->deadline)
            return 1;
        if (now >= until)
            return 0;
        long long end = c->deadline < until ? c->deadline : until;
        long long left = end == LLONG_MAX ? -1 : end - now;
        if (pcw__hung_up(c->fd, left > INT_MAX ? INT_MAX : (int)left))
            return 1;
    }
}

int pcw_cancel_pollfd(const pcw_cancel *c, struct pollfd *pfd)
{
    if (!pfd)
        return -1;
    pfd->fd = c ? c->fd : -1;
    pfd->events = POLLRDHUP;
    pfd->revents = 0;
    if (!c || c->deadline == LLONG_MAX)
        return -1;
    long long left = c->deadline - pcw__now_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

static void pcw__conn_end_collect(pcw__conn *c, size_t i);

/* End every held collection whose time is up. Connection thread. */
static void pcw__conn_expire(pcw__conn *c, long long now)
{
    for (size_t i = c->nheld; i-- > 0;)
        if (c->held[i].deadline <= now)
            pcw__conn_end_collect(c, i);
}

/* Wait until fd is ready for `events` or `deadline` (ms, CLOCK_MONOTONIC;
 * LLONG_MAX: none) passes, ending held collections as their time comes
 * meanwhile. 1 ready, 0 deadline, -1 error. Connection thread. */
static int pcw__conn_poll(pcw__conn *c, short events, long long deadline)
{
    for (;;) {
        long long now = pcw__now_ms();
        pcw__conn_expire(c, now);
        if (now >= deadline)
            return 0;
        long long until = deadline;
        for (size_t i = 0; i < c->nheld; i++)
            if (c->held[i].deadline < until)
                until = c->held[i].deadline;
        long long left = until == LLONG_MAX ? -1 : until - now;
        struct pollfd pf = {c->fd, events, 0};
        int pr = poll(&pf, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (pr < 0 && errno != EINTR)
            return -1;
        if (pr > 0)
            return 1;
    }
}

/* Read exactly n bytes by `deadline`. Returns 1; 0 at a clean end of file
 * before the first byte; -1 on error, truncation or the deadline.
 *
 * The stream is read ahead into c->rx, so a request's header and payload
 * cost one recv between them (system calls are most of a collection's
 * cost); a part as large as the buffer is read straight into b. Bytes of
 * a next request stay in c->rx (pcw__conn_buffered). */
static int pcw__conn_read(pcw__conn *c, unsigned char *b, size_t n, long long deadline)
{
    size_t got = 0;
    while (got < n) {
        if (c->rx_pos < c->rx_len) {
            size_t m = c->rx_len - c->rx_pos < n - got ? c->rx_len - c->rx_pos : n - got;
            memcpy(b + got, c->rx + c->rx_pos, m);
            c->rx_pos += m, got += m;
            continue;
        }
        c->rx_pos = c->rx_len = 0;
        int direct = n - got >= PCW__CONN_RX_BYTES;
        unsigned char *dst = direct ? b + got : c->rx;
        size_t want = direct ? n - got : PCW__CONN_RX_BYTES;
        /* Read what is there first (usually the whole message): poll only
         * when nothing has arrived, which saves a system call per read. */
        ssize_t r = recv(c->fd, dst, want, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (pcw__conn_poll(c, POLLIN, deadline) != 1)
                return -1;
            continue;
        }
        if (r == 0 && got == 0)
            return 0;
        if (r <= 0)
            return -1;
        if (direct)
            got += (size_t)r;
        else
            c->rx_len = (size_t)r;
    }
    return 1;
}

/* Wait for the next request in the recv itself: a blocking recv into the
 * read-ahead buffer, bounded by SO_RCVTIMEO (set to idle_ms when it
 * differs from the last value: once per connection, and when it gains or
 * loses its added counters). One system call where poll and recv were two.
 * Only with nothing held: a held collection's end is a deadline of its
 * own, which the poll's timeout serves. 1 bytes read; 0 end of file, the
 * idle bound or an error; -1 SO_RCVTIMEO could not be set (poll then). */
static int pcw__conn_wait_recv(pcw__conn *c, long long idle_ms)
{
    if (c->rcvtimeo != idle_ms) {
        struct timeval tv = {(time_t)(idle_ms / 1000), (suseconds_t)(idle_ms % 1000) * 1000};
        if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
            return -1;
        c->rcvtimeo = idle_ms;
    }
    for (;;) {
        ssize_t r = recv(c->fd, c->rx, PCW__CONN_RX_BYTES, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0; /* EAGAIN: idle past the bound */
        c->rx_pos = 0, c->rx_len = (size_t)r;
        return 1;
    }
}

/* Has a next request (or part of one) been read ahead already? */
static int pcw__conn_buffered(const pcw__conn *c)
{
    return c->rx_pos < c->rx_len;
}

/* Send the iovecs whole by `deadline`: a consumer that stops reading, or
 * reads a byte now and then, holds this thread until then at most.
 * pass_fd >= 0 goes with the first bytes (SCM_RIGHTS). */
static int pcw__conn_send(pcw__conn *c, struct iovec *iov, int n, long long deadline, int pass_fd)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    while (n > 0) {
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = iov;
        m.msg_iovlen = (size_t)n;
        if (pass_fd >= 0) {
            memset(&cm, 0, sizeof cm);
            m.msg_control = cm.buf;
            m.msg_controllen = sizeof cm.buf;
            struct cmsghdr *h = CMSG_FIRSTHDR(&m);
            h->cmsg_level = SOL_SOCKET;
            h->cmsg_type = SCM_RIGHTS;
            h->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(h), &pass_fd, sizeof pass_fd);
        }
        /* MSG_NOSIGNAL: a consumer that went away is EPIPE, not SIGPIPE. */
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (pcw__conn_poll(c, POLLOUT, deadline) != 1)
                return -1;
            continue;
        }
        if (w <= 0)
            return -1;
        pass_fd = -1; /* it went with these bytes */
        size_t left = (size_t)w;
        while (n > 0 && left >= iov->iov_len)
            left -= iov->iov_len, iov++, n--;
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

/* Send a reply: header, then `pre` and `body` as its payload; pass_fd
 * (>= 0) goes with it. */
static int pcw__reply_fd(pcw__conn *c, uint16_t type, uint32_t id, int status, const void *pre,
                         size_t pre_len, const void *body, size_t body_len, int pass_fd)
{
    unsigned char hb[PCW_CTL_HEADER_SIZE];
    pcw_ctl_writer w = {hb, 0, sizeof hb, sizeof hb, 0};
    pcw_ctl_header h = {PCW_CTL_MAGIC,
                        PCW_CTL_VERSION,
                        (uint16_t)(type | PCW_CTL_REPLY),
                        (uint32_t)(pre_len + body_len),
                        id,
                        status,
                        0};
    pcw__ctl_put_header(&w, &h);
    struct iovec iov[3] = {{hb, sizeof hb}, {(void *)pre, pre_len}, {(void *)body, body_len}};
    int n = body_len ? 3 : pre_len ? 2 : 1;
    return pcw__conn_send(c, iov, n, pcw__now_ms() + PCW_CTL_SEND_TIMEOUT_MS, pass_fd);
}

static int pcw__reply(pcw__conn *c, uint16_t type, uint32_t id, int status, const void *pre,
                      size_t pre_len, const void *body, size_t body_len)
{
    return pcw__reply_fd(c, type, id, status, pre, pre_len, body, body_len, -1);
}

/* ---- the reply area (docs/design.md 12.1) ------------------ */

/* AREA: make the connection's reply area and hand the consumer a
 * read-only descriptor of it. A memfd: no name anybody else can open, gone
 * with the last descriptor and mapping (a provider that dies leaves
 * nothing behind). Its size is sealed (the consumer's mapping can never
 * fault past the end), its mode is owner-read-only and the descriptor
 * handed over is opened read-only (through /proc/self/fd): the consumer
 * can neither write it nor reopen it for writing (nor add seals, which
 * needs a writable descriptor). One per connection. */
static int pcw__conn_area(pcw__conn *c, uint32_t id)
{
    if (c->area)
        return pcw__reply(c, PCW_CTL_AREA, id, PCW_E_INVALID_PARAMETER, NULL, 0, NULL, 0);
    int rc = PCW_E_IO, ro = -1;
    int fd = memfd_create("pcw-reply", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    void *m = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, PCW__CTL_AREA_SIZE) == 0 && fchmod(fd, 0400) == 0 &&
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0 &&
        (m = mmap(NULL, PCW__CTL_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) !=
            MAP_FAILED) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ro = open(path, O_RDONLY | O_CLOEXEC);
        if (ro >= 0) {
            c->area = (unsigned char *)m;
            rc = PCW_OK;
        } else {
            munmap(m, PCW__CTL_AREA_SIZE);
        }
    }
    if (fd >= 0)
        close(fd); /* the mapping keeps the area */
    if (rc != PCW_OK)
        return pcw__reply(c, PCW_CTL_AREA, id, rc, NULL, 0, NULL, 0);
    unsigned char pl[4];
    pcw__ctl_put_le(pl, PCW__CTL_AREA_SIZE, 4);
    int sent = pcw__reply_fd(c, PCW_CTL_AREA, id, PCW_OK, pl, sizeof pl, NULL, 0, ro);
    close(ro); /* the consumer has its own now (or never will) */
    return sent;
}

/* Reply to an ENUMERATE/COLLECT that allowed it (PCW_CTL_IN_AREA) through
 * the area: `pre` and `body` written at offset 0, and a completion on the
 * socket naming them. The consumer sent this request only after it had
 * finished reading the area's last reply, and reads this one only once
 * the completion has arrived, so nobody reads the bytes while they are
 * written. The stores pair with the consumer's loads through the socket:
 * the sendmsg below (the kernel queues the completion under the socket's
 * lock) happens before the consumer's recvmsg returns it. 1: done (or
 * failed: -1 as pcw__reply); 0: too large, or no area: send it on the
 * socket. */
static int pcw__reply_in_area(pcw__conn *c, uint16_t type, uint32_t id, const void *pre,
                              size_t pre_len, const void *body, size_t body_len, int *sent)
{
    if (!c->area || pre_len > PCW__CTL_AREA_SIZE || body_len > PCW__CTL_AREA_SIZE - pre_len)
        return 0;
    memcpy(c->area, pre, pre_len);
    if (body_len)
        memcpy(c->area + pre_len, body, body_len);
    unsigned char done[8];
    pcw__ctl_put_le(done, 0, 4);
    pcw__ctl_put_le(done + 4, pre_len + body_len, 4);
    *sent =
        pcw__reply(c, (uint16_t)(type | PCW_CTL_AREA_DONE), id, PCW_OK, done, sizeof done, NULL, 0);
    return 1;
}

/* A COLLECT/ENUMERATE reply's payload before its items: status, count,
 * data_size, reserved (control_proto.h). */
#define PCW__REPLY_PRE 16

/* ---- registrations ------------------------------------------------------- */

/* Find the registration with this index and mark the connection busy on it
 * (see "Lifetimes" above). NULL if it is not registered.
 *
 * A lock-free walk inside an RCU read-side section: it never waits for a
 * thread that registers, unregisters or creates instances. pcw_unregister
 * unlinks, waits a grace period, then waits for connections busy on it. */
static pcw__reg *pcw__conn_acquire(pcw__conn *c, uint32_t reg_index)
{
    pcw__prov *p = c->ctl->prov;
    pcw__reg *found = NULL;
    urcu_bp_read_lock();
    for (struct cds_list_head *n = pcw__list_next_rcu(&p->regs); n != &p->regs;
         n = pcw__list_next_rcu(n)) {
        pcw__reg *r = caa_container_of(n, pcw__reg, node);
        if (r->cset->reg_index == reg_index) {
            found = r;
            break;
        }
    }
    if (found) {
        /* Busy before the read-side section ends: pcw_unregister's grace
         * period then finds it busy, or this walk never saw it. */
        pthread_mutex_lock(&c->ctl->lock);
        c->busy = found;
        pthread_mutex_unlock(&c->ctl->lock);
    }
    PCW__TSAN_READER_DONE(&p->regs); /* pairs with pcw_unregister's grace period */
    urcu_bp_read_unlock();
    return found;
}

static void pcw__conn_release(pcw__conn *c)
{
    pthread_mutex_lock(&c->ctl->lock);
    c->busy = NULL;
    pthread_cond_broadcast(&c->ctl->idle);
    pthread_mutex_unlock(&c->ctl->lock);
}

static const char *pcw__reg_name(const pcw__reg *r)
{
    /* The counterset's strings stay in the segment until it is removed. */
    return (const char *)r->prov->base + r->cset->name.off;
}

/* The consumer's counter mask, which the wire carries by position
 * (bit i = the i-th registered counter, bit 63 also every one after the
 * 64th: pcw__ctl_counter_selected), as the callbacks see it: by counter id
 * (pcw/callback.h, pcw_callback_info.counter_mask). */
static uint64_t pcw__id_mask(const pcw__reg *r, uint64_t by_position)
{
    if (by_position == ~0ull)
        return ~0ull;
    uint64_t m = 0;
    for (uint32_t i = 0; i < r->counter_count; i++)
        if (pcw__ctl_counter_selected(by_position, i))
            m |= 1ull << (r->counters[i].id < 63 ? r->counters[i].id : 63);
    return m;
}

static int pcw__control_notify(pcw__conn *c, pcw_control_request req, const char *cset,
                               uint32_t counter_index, uint32_t counter_id, const char *instance,
                               uint32_t instance_id, const pcw_cancel *cancel)
{
    pcw__prov *p = c->ctl->prov;
    if (!p->opt.control_callback)
        return PCW_OK;
    pcw_control_info info;
    memset(&info, 0, sizeof info);
    info.counterset = cset;
    info.counter_index = counter_index;
    info.counter_id = counter_id;
    info.instance = instance;
    info.instance_id = instance_id;
    info.pid = c->cred.pid;
    info.uid = c->cred.uid;
    info.cancel = cancel;
    return p->opt.control_callback(req, &info, p->opt.control_context);
}

/* ---- requests ------------------------------------------------------------ */

/* Parsed request fields. */
typedef struct pcw__req {
    uint32_t reg_index, counter_index, instance_id, flags;
    uint64_t counter_mask;
    long long deadline; /* the consumer's time limit (PCW_CTL_TIMEOUT), ms
                           CLOCK_MONOTONIC from when it was read; LLONG_MAX */
    char mask[PCW_MAX_INSTANCE_NAME_BYTES + 1];
} pcw__req;

static int pcw__get_mask(pcw_ctl_reader *rd, pcw__req *q)
{
    uint32_t n;
    const char *s = pcw__ctl_get_str(rd, PCW_MAX_INSTANCE_NAME_BYTES, &n);
    if (!s || memchr(s, 0, n))
        return -1;
    memcpy(q->mask, s, n);
    q->mask[n] = 0;
    return 0;
}

/* Parse a request payload; -1 if malformed (short, long, trailing bytes). */
static int pcw__parse_request(uint16_t type, const unsigned char *pl, uint32_t len, pcw__req *q)
{
    pcw_ctl_reader rd = {pl, len, 0, 0};
    memset(q, 0, offsetof(pcw__req, mask) + 1);
    q->counter_mask = ~0ull;
    q->instance_id = PCW_ANY_INSTANCE_ID;
    q->deadline = LLONG_MAX;
    switch (type) {
    case PCW_CTL_PING:
    case PCW_CTL_AREA:
        break;
    case PCW_CTL_ADD_COUNTER:
    case PCW_CTL_REMOVE_COUNTER:
        q->reg_index = pcw__ctl_get_u32(&rd);
        q->counter_index = pcw__ctl_get_u32(&rd);
        q->instance_id = pcw__ctl_get_u32(&rd);
        if (pcw__get_mask(&rd, q) != 0)
            return -1;
        break;
    case PCW_CTL_ENUMERATE:
    case PCW_CTL_COLLECT:
        q->reg_index = pcw__ctl_get_u32(&rd);
        q->flags = pcw__ctl_get_u32(&rd);
        q->counter_mask = pcw__ctl_get_u64(&rd);
        q->instance_id = pcw__ctl_get_u32(&rd);
        if (pcw__get_mask(&rd, q) != 0 ||
            (q->flags & ~(uint32_t)(PCW_CTL_HOLD | PCW_CTL_TIMEOUT | PCW_CTL_IN_AREA)))
            return -1;
        if (q->flags & PCW_CTL_TIMEOUT)
            q->deadline = pcw__now_ms() + pcw__ctl_get_u32(&rd);
        break;
    case PCW_CTL_COLLECT_END:
        q->reg_index = pcw__ctl_get_u32(&rd);
        break;
    default:
        return -1;
    }
    return rd.bad || rd.pos != len ? -1 : 0;
}

static int pcw__conn_add_counter(pcw__conn *c, const pcw__req *q)
{
    pcw__reg *r = pcw__conn_acquire(c, q->reg_index);
    if (!r)
        return PCW_E_NOT_FOUND;
    int rc = PCW_OK;
    size_t mask_bytes = strlen(q->mask) + 1;
    if (q->counter_index >= r->counter_count) {
        rc = PCW_E_INVALID_PARAMETER;
        goto out;
    }
    /* Per-connection state is bounded: a consumer cannot make the provider
     * keep more than this for it. */
    if (c->nadded >= PCW_CTL_MAX_ADDED || c->added_bytes + mask_bytes > PCW_CTL_MAX_ADDED_BYTES) {
        rc = PCW_E_TOO_MANY_COUNTERS;
        goto out;
    }
    if (c->nadded == c->added_cap) {
        size_t cap = c->added_cap ? c->added_cap * 2 : 8;
        pcw__added *a = (pcw__added *)realloc(c->added, cap * sizeof *a);
        if (!a) {
            rc = PCW_E_NO_MEMORY;
            goto out;
        }
        c->added = a, c->added_cap = cap;
    }
    pcw__added a;
    a.reg_index = q->reg_index;
    a.counter_index = q->counter_index;
    a.counter_id = r->counters[q->counter_index].id;
    a.instance_id = q->instance_id;
    a.cset_name = pcw__reg_name(r);
    if (!(a.mask = strdup(q->mask))) {
        rc = PCW_E_NO_MEMORY;
        goto out;
    }
    /* PERFLIB: an ADD_COUNTER error reaches the consumer. */
    pcw_cancel cancel; /* assigned, not initialised: the gotos above cross it (C++) */
    cancel.fd = c->fd;
    cancel.deadline = q->deadline;
    rc = pcw__control_notify(c, PCW_CONTROL_ADD_COUNTER, a.cset_name, a.counter_index, a.counter_id,
                             a.mask, a.instance_id, &cancel);
    if (rc != PCW_OK) {
        free(a.mask);
        goto out;
    }
    if (r->callback) {
        pcw_callback_info info;
        memset(&info, 0, sizeof info);
        info.counter_mask = 1ull << (a.counter_id < 63 ? a.counter_id : 63);
        info.instance_id = q->instance_id;
        info.instance_mask = a.mask;
        info.counter_index = q->counter_index;
        info.counter_id = a.counter_id;
        /* PCW: the callback's status is informational. */
        (void)r->callback(PCW_CALLBACK_ADD_COUNTER, &info, r->callback_context);
    }
    c->added[c->nadded++] = a;
    c->added_bytes += mask_bytes;
out:
    pcw__conn_release(c);
    return rc;
}

/* Tell the provider that added counter `a` is gone, and forget it. */
static void pcw__conn_remove_added(pcw__conn *c, size_t i)
{
    pcw__added a = c->added[i];
    c->added[i] = c->added[--c->nadded];
    c->added_bytes -= strlen(a.mask) + 1;
    pcw__reg *r = pcw__conn_acquire(c, a.reg_index);
    if (r) {
        if (r->callback) {
            pcw_callback_info info;
            memset(&info, 0, sizeof info);
            info.counter_mask = 1ull << (a.counter_id < 63 ? a.counter_id : 63);
            info.instance_id = a.instance_id;
            info.instance_mask = a.mask;
            info.counter_index = a.counter_index;
            info.counter_id = a.counter_id;
            (void)r->callback(PCW_CALLBACK_REMOVE_COUNTER, &info, r->callback_context);
        }
        pcw__conn_release(c);
    }
    /* The control callback heard ADD; it hears REMOVE even if the
     * counterset has been unregistered since. Errors are ignored. */
    (void)pcw__control_notify(c, PCW_CONTROL_REMOVE_COUNTER, a.cset_name, a.counter_index,
                              a.counter_id, a.mask, a.instance_id, NULL);
    free(a.mask);
}

static int pcw__conn_remove_counter(pcw__conn *c, const pcw__req *q)
{
    for (size_t i = 0; i < c->nadded; i++) {
        const pcw__added *a = &c->added[i];
        if (a->reg_index == q->reg_index && a->counter_index == q->counter_index &&
            a->instance_id == q->instance_id && strcmp(a->mask, q->mask) == 0) {
            pcw__conn_remove_added(c, i);
            return PCW_OK;
        }
    }
    return PCW_E_NOT_FOUND; /* not added by this consumer: nothing to tell */
}

static void pcw__conn_end_collect(pcw__conn *c, size_t i)
{
    pcw__held h = c->held[i];
    c->held[i] = c->held[--c->nheld];
    (void)pcw__control_notify(c, PCW_CONTROL_COLLECT_END, h.cset_name, 0, PCW_NO_COUNTER, "*",
                              PCW_ANY_INSTANCE_ID, NULL);
}

/* ENUMERATE or COLLECT: run the callbacks and reply with the items.
 *
 * A COLLECT whose COLLECT_START succeeded is always ended: at once unless
 * it holds (HOLD, the collection succeeded and its consumer still waits:
 * the consumer then owes a COLLECT_END), else by that COLLECT_END, by
 * PCW_CTL_HOLD_TIMEOUT_MS, or by the end of the connection, whichever
 * comes first. A failed collection, or one its consumer gave up on
 * (cancelled: its time limit passed during COLLECT_START or the
 * callback), is ended before its reply is sent: its consumer owes
 * nothing, and a provider that froze its updates at COLLECT_START is
 * released as soon as possible. A collection cancelled by the time
 * COLLECT_START returns skips the counterset callback: nobody waits for
 * its data. */
static int pcw__conn_collect(pcw__conn *c, uint16_t type, uint32_t id, const pcw__req *q)
{
    int collect = type == PCW_CTL_COLLECT;
    int hold = collect && (q->flags & PCW_CTL_HOLD);
    pcw__reg *r = pcw__conn_acquire(c, q->reg_index);
    if (!r)
        return pcw__reply(c, type, id, PCW_E_NOT_FOUND, NULL, 0, NULL, 0);
    const char *cset = pcw__reg_name(r);
    uint32_t data_size = r->data_size; /* r may go once released */
    pcw_cancel cancel = {c->fd, q->deadline};
    /* Built in the connection's buffer and copied into the area at the
     * reply, not written there in place as the callback adds items: that
     * made a third of the benchmark's runs 1.5x slower on both sides
     * (docs/performance.md, "Callback collections"). */
    pcw_buffer *bp = &c->buf;
    int rc = pcw__buffer_init(bp, r, collect, q->counter_mask, q->instance_id, q->mask);
    if (rc == PCW_OK && hold && c->nheld >= PCW_CTL_MAX_HELD)
        rc = PCW_E_BUSY;
    if (rc == PCW_OK && hold && c->nheld == c->held_cap) {
        size_t cap = c->held_cap ? c->held_cap * 2 : 4;
        pcw__held *h = (pcw__held *)realloc(c->held, cap * sizeof *h);
        if (h)
            c->held = h, c->held_cap = cap;
        else
            rc = PCW_E_NO_MEMORY;
    }
    /* PERFLIB: ENUM_INSTANCES and COLLECT_START errors reach the consumer. */
    if (rc == PCW_OK)
        rc =
            pcw__control_notify(c, collect ? PCW_CONTROL_COLLECT_START : PCW_CONTROL_ENUM_INSTANCES,
                                cset, 0, PCW_NO_COUNTER, q->mask, q->instance_id, &cancel);
    int started = rc == PCW_OK && collect;
    /* The deadline only: a consumer that hung up is found by the reply's
     * send (which ends the connection and what it holds); asking the
     * socket here would be a system call on every collection. */
    if (rc == PCW_OK && pcw__now_ms() >= cancel.deadline)
        rc = PCW_E_TIMEOUT; /* nobody waits for the data any more */
    int cb_status = PCW_OK;
    if (rc == PCW_OK && r->callback) {
        pcw_callback_info info;
        memset(&info, 0, sizeof info);
        info.buffer = bp;
        info.counter_mask = pcw__id_mask(r, q->counter_mask);
        info.instance_id = q->instance_id;
        info.instance_mask = q->mask;
        info.collect_multiple = pcw_instance_type_is_multi(r->cset->instance_type);
        info.cancel = &cancel;
        cb_status =
            r->callback(collect ? PCW_CALLBACK_COLLECT_DATA : PCW_CALLBACK_ENUMERATE_INSTANCES,
                        &info, r->callback_context);
    }
    pcw__conn_release(c);
    if (rc == PCW_OK && bp->items.bad)
        rc = PCW_E_NO_MEMORY;
    /* Duplicate names were dropped: the consumer sees it as the callback's
     * (informational) status, unless the callback reported an error of
     * its own. */
    if (cb_status == PCW_OK && bp->duplicates)
        cb_status = PCW_E_DUPLICATE_NAME;
    if (started && rc == PCW_OK && hold && pcw__now_ms() < cancel.deadline) {
        c->held[c->nheld].reg_index = q->reg_index;
        c->held[c->nheld].cset_name = cset;
        c->held[c->nheld++].deadline = pcw__now_ms() + PCW_CTL_HOLD_TIMEOUT_MS;
    } else if (started) {
        (void)pcw__control_notify(c, PCW_CONTROL_COLLECT_END, cset, 0, PCW_NO_COUNTER, q->mask,
                                  q->instance_id, NULL);
    }
    int sent;
    if (rc != PCW_OK) {
        sent = pcw__reply(c, type, id, rc, NULL, 0, NULL, 0);
    } else {
        unsigned char pre[PCW__REPLY_PRE];
        pcw_ctl_writer w = {pre, 0, sizeof pre, sizeof pre, 0};
        pcw__ctl_put_u32(&w, (uint32_t)cb_status);
        pcw__ctl_put_u32(&w, bp->count);
        pcw__ctl_put_u32(&w, data_size);
        pcw__ctl_put_u32(&w, 0);
        if (!(q->flags & PCW_CTL_IN_AREA) ||
            !pcw__reply_in_area(c, type, id, pre, sizeof pre, bp->items.buf, bp->items.len, &sent))
            sent = pcw__reply(c, type, id, PCW_OK, pre, sizeof pre, bp->items.buf, bp->items.len);
    }
    pcw__buffer_done(bp);
    return sent;
}

/* Serve one connection until it ends or the channel stops. */
static void *pcw__conn_main(void *arg)
{
    pcw__conn *c = (pcw__conn *)arg;
    unsigned char hb[PCW_CTL_HEADER_SIZE];
    unsigned char *pl = (unsigned char *)malloc(PCW_CTL_MAX_REQUEST);
    pcw__req *q = (pcw__req *)malloc(sizeof *q);
    c->rx = (unsigned char *)malloc(PCW__CONN_RX_BYTES);
    while (pl && q && c->rx) {
        /* Idle: wait for the next request. A connection with added
         * counters is kept PCW_CTL_ADDED_IDLE_TIMEOUT_MS (closing it
         * removes them, and its consumer adds them again when it comes
         * back), any other PCW_CTL_IDLE_TIMEOUT_MS, so forgotten
         * connections free their place. Meanwhile the listener may shed
         * it for a new consumer (pcw__make_room). */
        long long now = pcw__now_ms();
        long long idle_ms = c->nadded ? PCW_CTL_ADDED_IDLE_TIMEOUT_MS : PCW_CTL_IDLE_TIMEOUT_MS;
        long long idle = now + idle_ms;
        int got = -1;
        if (pcw__conn_buffered(c)) {
            pcw__conn_expire(c, now); /* what the poll would do */
        } else if (c->nheld == 0) {
            __atomic_store_n(&c->idle_since, now, __ATOMIC_RELAXED);
            got = pcw__conn_wait_recv(c, idle_ms);
            __atomic_store_n(&c->idle_since, 0, __ATOMIC_RELAXED);
            if (got == 0)
                break; /* end of file (or shed, or closing), or idle too long */
        }
        if (got < 0 && !pcw__conn_buffered(c)) {
            /* Held collections too: a consumer owes COLLECT_END within
             * the hold limit, and shedding ends them as an end of file
             * does. */
            __atomic_store_n(&c->idle_since, now, __ATOMIC_RELAXED);
            int ready = pcw__conn_poll(c, POLLIN, idle);
            __atomic_store_n(&c->idle_since, 0, __ATOMIC_RELAXED);
            if (ready != 1)
                break;
        }
        /* A request must arrive whole, however it is paced. */
        long long deadline = pcw__now_ms() + PCW_CTL_MSG_TIMEOUT_MS;
        if (pcw__conn_read(c, hb, sizeof hb, deadline) != 1)
            break; /* end of file, or a header cut short */
        pcw_ctl_header h;
        if (pcw__ctl_get_header(hb, &h) != 0 || h.length > PCW_CTL_MAX_REQUEST || h.status != 0 ||
            h.type == 0 || h.type > PCW_CTL_TYPE_MAX_) {
            /* Malformed: say so, then drop this connection only. */
            (void)pcw__reply(c, 0, h.id, PCW_E_PROTOCOL, NULL, 0, NULL, 0);
            break;
        }
        if (h.length && pcw__conn_read(c, pl, h.length, deadline) != 1)
            break; /* truncated */
        if (pcw__parse_request(h.type, pl, h.length, q) != 0) {
            (void)pcw__reply(c, h.type, h.id, PCW_E_PROTOCOL, NULL, 0, NULL, 0);
            break;
        }
        int sent;
        switch (h.type) {
        case PCW_CTL_PING:
            sent = pcw__reply(c, h.type, h.id, PCW_OK, NULL, 0, NULL, 0);
            break;
        case PCW_CTL_AREA:
            sent = pcw__conn_area(c, h.id);
            break;
        case PCW_CTL_ADD_COUNTER:
            sent = pcw__reply(c, h.type, h.id, pcw__conn_add_counter(c, q), NULL, 0, NULL, 0);
            break;
        case PCW_CTL_REMOVE_COUNTER:
            sent = pcw__reply(c, h.type, h.id, pcw__conn_remove_counter(c, q), NULL, 0, NULL, 0);
            break;
        case PCW_CTL_COLLECT_END: {
            int rc = PCW_E_NOT_FOUND;
            for (size_t i = 0; i < c->nheld; i++)
                if (c->held[i].reg_index == q->reg_index) {
                    pcw__conn_end_collect(c, i);
                    rc = PCW_OK;
                    break;
                }
            sent = pcw__reply(c, h.type, h.id, rc, NULL, 0, NULL, 0);
            break;
        }
        default:
            sent = pcw__conn_collect(c, h.type, h.id, q);
            break;
        }
        if (sent != 0)
            break; /* the consumer is gone or stopped reading */
    }
    free(pl);
    free(q);
    free(c->rx);
    c->rx = NULL;
    pcw__buffer_free(&c->buf);
    if (c->area)
        munmap(c->area, PCW__CTL_AREA_SIZE);
    c->area = NULL;
    /* The consumer exited, crashed or misbehaved: whatever it left open is
     * closed on its behalf, so the provider's counts stay balanced. */
    while (c->nheld)
        pcw__conn_end_collect(c, c->nheld - 1);
    while (c->nadded)
        pcw__conn_remove_added(c, c->nadded - 1);
    free(c->added);
    free(c->held);
    c->added = NULL, c->held = NULL;
    shutdown(c->fd, SHUT_RDWR); /* the consumer sees EOF now, not at reaping */
    pcw__ctl *ctl = c->ctl;
    pthread_mutex_lock(&ctl->lock);
    c->done = 1;
    pthread_mutex_unlock(&ctl->lock);
    /* Ask the listener to reap us. ctl outlives this: it is freed only
     * after every connection thread has been joined. */
    char one = 1;
    ssize_t wr = write(ctl->wake[1], &one, 1);
    (void)wr; /* a full pipe already holds a wake-up */
    return NULL;
}

/* ---- the listener -------------------------------------------------------- */

static void pcw__refuse(int fd, int status)
{
    unsigned char hb[PCW_CTL_HEADER_SIZE];
    pcw_ctl_writer w = {hb, 0, sizeof hb, sizeof hb, 0};
    pcw_ctl_header h = {PCW_CTL_MAGIC, PCW_CTL_VERSION, PCW_CTL_REFUSED, 0, 0, status, 0};
    pcw__ctl_put_header(&w, &h);
    ssize_t wr = send(fd, hb, sizeof hb, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)wr;
    close(fd);
}

/* Start a thread with every signal blocked (it inherits the mask). */
static int pcw__spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

/* Join and free finished connections (all of them when `all`). Listener
 * thread, or pcw__control_stop once the listener is gone. */
static void pcw__reap(pcw__ctl *ctl, int all)
{
    for (;;) {
        pcw__conn *c = NULL;
        pthread_mutex_lock(&ctl->lock);
        for (pcw__conn **pp = &ctl->conns; *pp; pp = &(*pp)->next)
            if ((*pp)->done || all) {
                c = *pp;
                *pp = c->next;
                ctl->nconns--;
                ctl->nshed -= c->shed != 0;
                break;
            }
        pthread_mutex_unlock(&ctl->lock);
        if (!c)
            return;
        pthread_join(c->thread, NULL);
        close(c->fd);
        free(c);
    }
}

/* Room for one more consumer? Under ctl->lock, listener thread. Below
 * PCW_CTL_MAX_CONNS served, yes; at it, the connection silent longest
 * (at least PCW_CTL_SHED_AFTER_MS) is shed - shut down: its
 * thread sees the end of file, removes what it added, ends and is reaped
 * like any other - unless PCW_CTL_MAX_SHEDDING shed ones are still
 * finishing (their threads count until reaped). */
static int pcw__make_room(pcw__ctl *ctl)
{
    if (ctl->nconns - ctl->nshed < PCW_CTL_MAX_CONNS)
        return ctl->nconns < PCW_CTL_MAX_CONNS + PCW_CTL_MAX_SHEDDING;
    if (ctl->nshed >= PCW_CTL_MAX_SHEDDING)
        return 0;
    long long oldest = pcw__now_ms() - PCW_CTL_SHED_AFTER_MS;
    pcw__conn *victim = NULL;
    for (pcw__conn *c = ctl->conns; c; c = c->next) {
        long long since = __atomic_load_n(&c->idle_since, __ATOMIC_RELAXED);
        if (!c->shed && !c->done && since && since <= oldest)
            victim = c, oldest = since;
    }
    if (!victim)
        return 0;
    victim->shed = 1;
    ctl->nshed++;
    shutdown(victim->fd, SHUT_RDWR);
    return 1;
}

/* The listener: the control channel's accept loop. The one function of
 * the server with an external name, so that a program can check it holds
 * exactly one implementation (`nm prog | grep -c pcw__listener_main`; make
 * install-test does). */
PCW_PROVIDER_API void *pcw__listener_main(void *arg);
void *pcw__listener_main(void *arg)
{
    pcw__ctl *ctl = (pcw__ctl *)arg;
    for (;;) {
        struct pollfd pf[2] = {{ctl->lfd, POLLIN, 0}, {ctl->wake[0], POLLIN, 0}};
        int pr = poll(pf, 2, -1);
        if (pr < 0 && errno != EINTR)
            break;
        if (pf[1].revents) {
            char drain[64];
            while (read(ctl->wake[0], drain, sizeof drain) > 0)
                ;
        }
        pcw__reap(ctl, 0);
        pthread_mutex_lock(&ctl->lock);
        int stopping = ctl->stopping;
        pthread_mutex_unlock(&ctl->lock);
        if (stopping)
            break;
        if (!(pf[0].revents & POLLIN))
            continue;
        int fd = accept4(ctl->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* Out of descriptors: back off instead of spinning. */
                struct timespec ts = {0, 10 * 1000 * 1000};
                nanosleep(&ts, NULL);
            }
            continue;
        }
        pcw__conn *c = (pcw__conn *)calloc(1, sizeof *c);
        if (!c) {
            pcw__refuse(fd, PCW_E_NO_MEMORY);
            continue;
        }
        c->ctl = ctl;
        c->fd = fd;
        if (!pcw__peer_allowed(ctl, fd, &c->cred)) {
            free(c);
            pcw__refuse(fd, PCW_E_PERMISSION);
            continue;
        }
        pthread_mutex_lock(&ctl->lock);
        if (!pcw__make_room(ctl)) {
            pthread_mutex_unlock(&ctl->lock);
            free(c);
            pcw__refuse(fd, PCW_E_CONNECTIONS_FULL);
            continue;
        }
        /* Link before starting: the thread may finish at once. */
        c->next = ctl->conns;
        ctl->conns = c;
        ctl->nconns++;
        if (pcw__spawn(&c->thread, pcw__conn_main, c) != 0) {
            ctl->conns = c->next;
            ctl->nconns--;
            pthread_mutex_unlock(&ctl->lock);
            free(c);
            pcw__refuse(fd, PCW_E_CONNECTIONS_FULL);
            continue;
        }
        pthread_mutex_unlock(&ctl->lock);
    }
    return NULL;
}

/* ---- start, stop --------------------------------------------------------- */

static void pcw__control_free(pcw__ctl *ctl)
{
    if (ctl->lfd >= 0)
        close(ctl->lfd);
    if (ctl->wake[0] >= 0)
        close(ctl->wake[0]);
    if (ctl->wake[1] >= 0)
        close(ctl->wake[1]);
    pthread_cond_destroy(&ctl->idle);
    pthread_mutex_destroy(&ctl->lock);
    free(ctl);
}

/* Create the socket and the listener. p->control must be NULL; callers
 * serialise (open, or pcw__control_ensure under prov->lock). */
static int pcw__control_run(pcw__prov *p)
{
    pcw__ctl *ctl = (pcw__ctl *)calloc(1, sizeof *ctl);
    if (!ctl)
        return PCW_E_NO_MEMORY;
    ctl->prov = p;
    ctl->lfd = ctl->wake[0] = ctl->wake[1] = -1;
    pthread_mutex_init(&ctl->lock, NULL);
    pthread_cond_init(&ctl->idle, NULL);
    ctl->uid = geteuid();
    ctl->use_group = p->opt.share_with_group;
    ctl->group = p->opt.group ? p->opt.group : getegid();
    if (pcw__sibling(p->path, PCW_SOCK_SUFFIX, ctl->sock, sizeof ctl->sock) != 0) {
        pcw__control_free(ctl);
        return PCW_E_INVALID_PARAMETER;
    }

    struct sockaddr_un a;
    int dirfd, rc = pcw__sock_addr(ctl->sock, &a, &dirfd);
    if (rc != PCW_OK) {
        pcw__control_free(ctl);
        return rc;
    }
    rc = PCW_E_IO;
    mode_t mode = ctl->use_group ? 0660 : 0600;
    ctl->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ctl->lfd >= 0 && bind(ctl->lfd, (struct sockaddr *)&a, sizeof a) == 0) {
        /* bind made the file with the umask's mode; nobody can connect
         * before listen(), so fixing mode and group now leaves no window. */
        if (chmod(a.sun_path, mode) == 0 &&
            (!ctl->use_group || !p->opt.group || lchown(a.sun_path, (uid_t)-1, ctl->group) == 0) &&
            listen(ctl->lfd, PCW_CTL_BACKLOG) == 0 && pipe2(ctl->wake, O_CLOEXEC | O_NONBLOCK) == 0)
            rc = PCW_OK;
        else
            unlink(a.sun_path);
    }
    if (dirfd >= 0)
        close(dirfd);
    if (rc != PCW_OK) {
        pcw__control_free(ctl);
        return rc;
    }
    if (pcw__spawn(&ctl->listener, pcw__listener_main, ctl) != 0) {
        unlink(ctl->sock);
        pcw__control_free(ctl);
        return PCW_E_NO_MEMORY;
    }
    /* Release pairs with pcw__ctl_of's acquire. */
    __atomic_store_n(&p->control, (void *)ctl, __ATOMIC_RELEASE);
    return PCW_OK;
}

PCW__PRIVATE int pcw__control_start(pcw__prov *p)
{
    return p->opt.control_callback ? pcw__control_run(p) : PCW_OK;
}

PCW__PRIVATE int pcw__control_ensure(pcw__prov *p)
{
    if (pcw__ctl_of(p))
        return PCW_OK;
    pthread_mutex_lock(&p->lock);
    int rc = pcw__ctl_of(p) ? PCW_OK : pcw__control_run(p);
    pthread_mutex_unlock(&p->lock);
    return rc;
}

PCW__PRIVATE void pcw__control_forget(pcw__reg *r)
{
    pcw__ctl *ctl = pcw__ctl_of(r->prov);
    if (!ctl)
        return;
    pthread_mutex_lock(&ctl->lock);
    for (;;) {
        int busy = 0;
        for (pcw__conn *c = ctl->conns; c; c = c->next)
            if (c->busy == r)
                busy = 1;
        if (!busy)
            break;
        pthread_cond_wait(&ctl->idle, &ctl->lock);
    }
    pthread_mutex_unlock(&ctl->lock);
}

PCW__PRIVATE void pcw__control_stop(pcw__prov *p)
{
    pcw__ctl *ctl = pcw__ctl_of(p);
    if (!ctl)
        return;
    /* Consumers can no longer find the socket... */
    unlink(ctl->sock);
    pthread_mutex_lock(&ctl->lock);
    ctl->stopping = 1;
    pthread_mutex_unlock(&ctl->lock);
    char one = 1;
    ssize_t wr = write(ctl->wake[1], &one, 1);
    (void)wr;
    /* ...nor connect: the listener is gone once joined. */
    pthread_join(ctl->listener, NULL);
    /* Wake connection threads blocked on input; one in a callback finishes
     * it, fails to read the next request and ends. */
    pthread_mutex_lock(&ctl->lock);
    for (pcw__conn *c = ctl->conns; c; c = c->next)
        shutdown(c->fd, SHUT_RDWR);
    pthread_mutex_unlock(&ctl->lock);
    pcw__reap(ctl, 1);
    __atomic_store_n(&p->control, NULL, __ATOMIC_RELEASE);
    pcw__control_free(ctl);
}
