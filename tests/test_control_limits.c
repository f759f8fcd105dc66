/* SPDX-License-Identifier: MIT */
/*
 * tests/test_control_limits.c - a hostile consumer cannot starve a
 * provider's control channel: per-connection state is bounded, a request
 * must arrive whole within a deadline, idle connections are closed, and a
 * held collection (COLLECT_START without COLLECT_END) ends by itself.
 *
 * The provider runs in this process, compiled with small limits (defined
 * before pcw/provider.h, as a program may), so each limit is reached
 * quickly; the peers are raw sockets speaking the wire format. Times are
 * deadlines that end a wait, never the signal the test waits for.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE                   1
#define PCW_CTL_MAX_ADDED             64
#define PCW_CTL_MAX_ADDED_BYTES       8192
#define PCW_CTL_MSG_TIMEOUT_MS        500
#define PCW_CTL_IDLE_TIMEOUT_MS       2000
#define PCW_CTL_HOLD_TIMEOUT_MS       300
#define PCW_CTL_MAX_CONNS             8
#define PCW_CTL_SHED_AFTER_MS         200
#define PCW_CTL_ADDED_IDLE_TIMEOUT_MS 4000
#include <criterion/criterion.h>

#include <pthread.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "rawpeer.h"
#include "testutil.h"

TestSuite(control_limits, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* ---- a provider that records its control notifications ------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int counts[6];   /* per pcw_control_request, under lock */
static int hold_starts; /* COLLECT_START waits while set (at most 30 s); under lock */
static int refuse_adds; /* ADD_COUNTER fails while set; under lock */

static int control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)info, (void)ctx;
    pthread_mutex_lock(&lock);
    counts[req]++;
    pthread_cond_broadcast(&cond);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    while (req == PCW_CONTROL_COLLECT_START && hold_starts)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            break;
    int rc = req == PCW_CONTROL_ADD_COUNTER && refuse_adds ? 5 /* ERROR_ACCESS_DENIED */ : PCW_OK;
    pthread_mutex_unlock(&lock);
    return rc;
}

static void set_hold_starts(int on)
{
    pthread_mutex_lock(&lock);
    hold_starts = on;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static int count(pcw_control_request req)
{
    pthread_mutex_lock(&lock);
    int n = counts[req];
    pthread_mutex_unlock(&lock);
    return n;
}

/* Wait until counts[req] >= n, at most timeout_ms. Returns the count. */
static int wait_count(pcw_control_request req, int n, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000)
        until.tv_sec++, until.tv_nsec -= 1000000000;
    pthread_mutex_lock(&lock);
    while (counts[req] < n)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            break;
    int got = counts[req];
    pthread_mutex_unlock(&lock);
    return got;
}

/* A callback counterset whose reply outgrows PCW_CTL_MAX_REPLY: instances
 * of 1 MiB each (one counter at the end of a 1 MiB block). */
#define HUGE_BLOCK (1u << 20)

static int huge(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA)
        return PCW_OK;
    static unsigned char zeros[HUGE_BLOCK];
    pcw_data d = {zeros, sizeof zeros};
    for (uint32_t i = 0;; i++) {
        char name[16];
        snprintf(name, sizeof name, "h%u", i);
        int rc = pcw_add_instance(info->buffer, name, i, 1, &d);
        if (rc != PCW_OK)
            return rc;
    }
}

typedef struct env {
    pcw_provider *prov;
    pcw_registration *seg_reg, *huge_reg;
    uint32_t seg_index, huge_index; /* reg_index of each */
    char sock[PATH_MAX];
} env;

static void env_open(env *e)
{
    memset(counts, 0, sizeof counts);
    hold_starts = refuse_adds = 0;
    pcw_provider_options o = {.control_callback = control};
    cr_assert_eq(pcw_provider_open(&e->prov, &o), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Segment Set",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    cr_assert_eq(pcw_register(&e->seg_reg, e->prov, &info), PCW_OK);
    c.offset = HUGE_BLOCK - 8;
    info.name = "Huge Set";
    info.callback = huge;
    cr_assert_eq(pcw_register(&e->huge_reg, e->prov, &info), PCW_OK);
    /* White box: the records behind the handles. */
    e->seg_index =
        ((pcw__reg *)pcw__handle_get(e->seg_reg, PCW__HANDLE_REGISTRATION))->cset->reg_index;
    e->huge_index =
        ((pcw__reg *)pcw__handle_get(e->huge_reg, PCW__HANDLE_REGISTRATION))->cset->reg_index;
    snprintf(e->sock, sizeof e->sock, "%s", pcw_provider_path(e->prov));
    strcpy(e->sock + strlen(e->sock) - strlen(PCW_SEG_SUFFIX), PCW_SOCK_SUFFIX);
}

static void env_close(env *e)
{
    pcw_provider_close(e->prov);
}

/* ---- raw peers (tests/rawpeer.h) ------------------------------------------ */

/* Send a request and return its reply's status. */
static int32_t raw_call(int fd, uint16_t type, uint32_t id, const unsigned char *pl, size_t len)
{
    cr_assert_eq(raw_request(fd, type, id, pl, len), 0, "request %u not sent", id);
    pcw_ctl_header h;
    cr_assert_eq(raw_read(fd, &h), 0, "no reply to request %u", id);
    cr_assert_eq(h.id, id);
    return h.status;
}

static size_t add_counter_payload(unsigned char *b, size_t cap, uint32_t reg, const char *mask)
{
    pcw_ctl_writer w = {b, 0, cap, cap, 0};
    pcw__ctl_put_u32(&w, reg);
    pcw__ctl_put_u32(&w, 0);
    pcw__ctl_put_u32(&w, PCW_ANY_INSTANCE_ID);
    pcw__ctl_put_str(&w, mask, strlen(mask));
    cr_assert(!w.bad);
    return w.len;
}

/* A consumer of this process, its provider list read. */ static pcw_consumer *open_consumer(void)
{
    pcw_consumer *cons;
    cr_assert_eq(pcw_consumer_open(&cons, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(cons, NULL), PCW_OK);
    return cons;
}

/* ---- item 5: per-connection state ------------------------------------------ */

/* On 9ef2b5d every ADD_COUNTER was kept: 50,000 with 4 KB masks took the
 * provider from 1.9 MB to 204 MB. Now a connection's added counters are
 * capped in number and in mask bytes, and the rest are refused. */
Test(control_limits, added_counters_are_bounded_per_connection)
{
    env e;
    env_open(&e);
    unsigned char b[2048];
    int fd = raw_connect(e.sock);
    cr_assert_geq(fd, 0);
    size_t n = add_counter_payload(b, sizeof b, e.seg_index, "*");
    for (uint32_t i = 1; i <= PCW_CTL_MAX_ADDED; i++)
        cr_assert_eq(raw_call(fd, PCW_CTL_ADD_COUNTER, i, b, n), PCW_OK, "request %u", i);
    for (uint32_t i = 1; i <= 100; i++)
        cr_assert_eq(raw_call(fd, PCW_CTL_ADD_COUNTER, 1000 + i, b, n), PCW_E_TOO_MANY_COUNTERS);
    cr_assert_eq(count(PCW_CONTROL_ADD_COUNTER), PCW_CTL_MAX_ADDED);
    /* Removing one makes room for one. */
    cr_assert_eq(raw_call(fd, PCW_CTL_REMOVE_COUNTER, 2000, b, n), PCW_OK);
    cr_assert_eq(raw_call(fd, PCW_CTL_ADD_COUNTER, 2001, b, n), PCW_OK);
    cr_assert_eq(raw_call(fd, PCW_CTL_ADD_COUNTER, 2002, b, n), PCW_E_TOO_MANY_COUNTERS);

    /* Mask bytes: 1000-byte masks fit PCW_CTL_MAX_ADDED_BYTES / 1000 times. */
    int fd2 = raw_connect(e.sock);
    cr_assert_geq(fd2, 0);
    char mask[1001];
    memset(mask, 'm', 1000);
    mask[1000] = 0;
    n = add_counter_payload(b, sizeof b, e.seg_index, mask);
    uint32_t fits = PCW_CTL_MAX_ADDED_BYTES / 1000;
    for (uint32_t i = 1; i <= fits; i++)
        cr_assert_eq(raw_call(fd2, PCW_CTL_ADD_COUNTER, i, b, n), PCW_OK, "request %u", i);
    cr_assert_eq(raw_call(fd2, PCW_CTL_ADD_COUNTER, 99, b, n), PCW_E_TOO_MANY_COUNTERS);
    close(fd2);
    close(fd);
    /* Every counter that was added is removed when its connection ends. */
    int want = PCW_CTL_MAX_ADDED + 1 + (int)fits;
    cr_assert_eq(wait_count(PCW_CONTROL_REMOVE_COUNTER, want, 10000), want);
    env_close(&e);
}

/* ---- item 6: whole-message deadline, idle timeout ----------------------------- */

/* One byte every 100 ms: on 9ef2b5d the 5 s limit applied to each gap, so
 * such a sender held its connection (and thread) forever. The whole
 * request must now arrive within PCW_CTL_MSG_TIMEOUT_MS of its first
 * byte. */
Test(control_limits, slow_sender_is_dropped)
{
    env e;
    env_open(&e);
    unsigned char b[PCW_CTL_HEADER_SIZE];
    pcw_ctl_writer w = {b, 0, sizeof b, sizeof b, 0};
    pcw_ctl_header h = {PCW_CTL_MAGIC, PCW_CTL_VERSION, PCW_CTL_PING, 0, 1, 0, 0};
    pcw__ctl_put_header(&w, &h);
    int fd = raw_connect(e.sock);
    cr_assert_geq(fd, 0);
    int dropped = 0;
    for (size_t i = 0; i < sizeof b && !dropped; i++) {
        if (send(fd, b + i, 1, MSG_NOSIGNAL) != 1) {
            dropped = 1;
            break;
        }
        /* The pace of the attack; also where an end of file shows. */
        if (readable(fd, 100)) {
            char c;
            dropped = recv(fd, &c, 1, 0) <= 0;
            cr_assert(dropped, "the provider answered a request it should have dropped");
        }
    }
    cr_assert(dropped, "a request dribbled over 2.4 s was served");
    close(fd);
    env_close(&e);
}

/* Connections the provider has (white box: its channel's count, which
 * drops once a finished connection's thread has been joined). */
static size_t connections(env *e)
{
    pcw__ctl *ctl = pcw__ctl_of((pcw__prov *)pcw__handle_get(e->prov, PCW__HANDLE_PROVIDER));
    pthread_mutex_lock(&ctl->lock);
    size_t n = ctl->nconns;
    pthread_mutex_unlock(&ctl->lock);
    return n;
}

/* Wait until the provider has n connections, at most timeout_ms. */
static size_t wait_connections(env *e, size_t n, int timeout_ms)
{
    long long deadline = tu_now_ms() + timeout_ms;
    while (connections(e) != n && tu_now_ms() < deadline)
        usleep(10000); /* polling a count: there is nothing to wait on */
    return connections(e);
}

/* On 9ef2b5d an idle connection stayed forever: 128 of them locked every
 * other consumer out. Now it is closed after PCW_CTL_IDLE_TIMEOUT_MS
 * without a request; one that keeps asking stays. */
Test(control_limits, idle_connection_is_closed)
{
    env e;
    env_open(&e);
    int fd = raw_connect(e.sock);
    cr_assert_geq(fd, 0);
    /* Busy for 1.5 idle periods: it stays. */
    long long until = tu_now_ms() + PCW_CTL_IDLE_TIMEOUT_MS * 3 / 2;
    for (uint32_t id = 1; tu_now_ms() < until; id++) {
        cr_assert_eq(raw_call(fd, PCW_CTL_PING, id, NULL, 0), PCW_OK);
        cr_assert(!readable(fd, 50), "closed while in use");
    }
    /* Then silent: the provider closes it. */
    cr_assert(readable(fd, PCW_CTL_IDLE_TIMEOUT_MS + 10000), "an idle connection stays open");
    char c;
    cr_assert_eq(recv(fd, &c, 1, 0), 0, "end of file");
    close(fd);

    /* A consumer whose connection was closed while idle reconnects by
     * itself: no error, and certainly not "provider has exited". */
    cr_assert_eq(wait_connections(&e, 0, 10000), 0);
    pcw_consumer *cons = open_consumer();
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(cons, "Segment Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(cons, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0);
    cr_assert_eq(connections(&e), 1, "the consumer keeps its connection");
    /* The provider ends that connection when it has been idle long enough. */
    cr_assert_eq(wait_connections(&e, 0, PCW_CTL_IDLE_TIMEOUT_MS + 10000), 0,
                 "the idle consumer's connection was not closed");
    cr_assert_eq(pcw_consumer_collect(cons, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0, "%s", pcw_status_str(rep.first_error));
    pcw_snapshot_free(&s);
    pcw_consumer_close(cons);
    env_close(&e);
}

/* ---- item 7: held collections ---------------------------------------------- */

/* COLLECT with HOLD and no COLLECT_END: on 9ef2b5d the provider stayed in
 * COLLECT_START (frozen, for providers that freeze) as long as the
 * connection lived. Now the hold ends after PCW_CTL_HOLD_TIMEOUT_MS, the
 * connection staying usable; and at the end of the connection. */
Test(control_limits, held_collection_ends_by_itself)
{
    env e;
    env_open(&e);
    unsigned char b[256];
    size_t n = collect_payload(b, sizeof b, e.seg_index, PCW_CTL_HOLD);
    int fd = raw_connect(e.sock);
    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_call(fd, PCW_CTL_COLLECT, 1, b, n), PCW_OK);
    cr_assert_eq(count(PCW_CONTROL_COLLECT_START), 1);
    cr_assert_eq(wait_count(PCW_CONTROL_COLLECT_END, 1, PCW_CTL_HOLD_TIMEOUT_MS + 10000), 1,
                 "a held collection was never ended");
    /* The connection is still served; a late COLLECT_END finds nothing. */
    cr_assert_eq(raw_call(fd, PCW_CTL_PING, 2, NULL, 0), PCW_OK);
    unsigned char ri[4];
    pcw__ctl_put_le(ri, e.seg_index, 4);
    cr_assert_eq(raw_call(fd, PCW_CTL_COLLECT_END, 3, ri, 4), PCW_E_NOT_FOUND);
    cr_assert_eq(count(PCW_CONTROL_COLLECT_END), 1);
    /* Held, then the consumer goes: ended at once. */
    cr_assert_eq(raw_call(fd, PCW_CTL_COLLECT, 4, b, n), PCW_OK);
    close(fd);
    cr_assert_eq(wait_count(PCW_CONTROL_COLLECT_END, 2, 10000), 2);
    cr_assert_eq(count(PCW_CONTROL_COLLECT_START), 2);
    env_close(&e);
}

/* COLLECT_START succeeded but the collection failed afterwards (here the
 * callback's reply outgrew PCW_CTL_MAX_REPLY): the consumer gets an error
 * and owes no COLLECT_END, so the provider must end the collection itself
 * before it replies. On 9ef2b5d it stayed held. */
Test(control_limits, failed_collection_is_ended_before_the_reply, .timeout = 120)
{
    env e;
    env_open(&e);
    unsigned char b[256];
    size_t n = collect_payload(b, sizeof b, e.huge_index, PCW_CTL_HOLD);
    int fd = raw_connect(e.sock);
    cr_assert_geq(fd, 0);
    cr_assert_eq(raw_call(fd, PCW_CTL_COLLECT, 1, b, n), PCW_E_NO_MEMORY);
    cr_assert_eq(count(PCW_CONTROL_COLLECT_START), 1);
    cr_assert_eq(count(PCW_CONTROL_COLLECT_END), 1, "COLLECT_END owed after a failed collection");
    close(fd);
    env_close(&e);
}

/* ---- issue 23 item 4: connection slots ---------------------------------------- */

/* Take every slot with a raw peer that adds a counter and falls silent.
 * Returns how many ADD_COUNTERs the provider has seen. */
static int fill_with_silent_adders(env *e, int *fds, int n)
{
    unsigned char b[256];
    size_t len = add_counter_payload(b, sizeof b, e->seg_index, "*");
    for (int i = 0; i < n; i++) {
        fds[i] = raw_connect(e->sock);
        cr_assert_geq(fds[i], 0);
        cr_assert_eq(raw_call(fds[i], PCW_CTL_ADD_COUNTER, 1, b, len), PCW_OK, "peer %d", i);
    }
    return count(PCW_CONTROL_ADD_COUNTER);
}

/* Ask the provider (enumerate its callback set: only the provider can
 * answer) until it serves the consumer (rep.failed 0), at most
 * timeout_ms (at least once); returns whether it did. Refusals meanwhile
 * must say what they are. */
static int collect_until_served(pcw_consumer *cons, int timeout_ms)
{
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(cons, "Huge Set");
    cr_assert(m);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    long long deadline = tu_now_ms() + timeout_ms;
    int served = 0;
    do {
        pcw_collect_report rep = {0};
        cr_assert_eq(pcw_consumer_enumerate(cons, m, NULL, &s, 0, &rep), PCW_OK);
        served = rep.failed == 0;
        cr_assert(served || rep.first_error != PCW_E_BUSY, "refused as \"%s\"",
                  pcw_status_str(rep.first_error));
    } while (!served && tu_now_ms() < deadline);
    pcw_snapshot_free(&s);
    return served;
}

/* Wait until one of fds[] is at end of file (the provider closed it), at
 * most timeout_ms; returns how many are. */
static int closed_by_provider(const int *fds, int n, int timeout_ms)
{
    long long deadline = tu_now_ms() + timeout_ms;
    int closed = 0;
    do {
        for (int i = 0; i < n; i++) {
            char c;
            closed += readable(fds[i], 0) && recv(fds[i], &c, 1, MSG_PEEK) == 0;
        }
        if (!closed)
            (void)readable(fds[0], 10); /* the pace of the poll, not a signal */
    } while (!closed && tu_now_ms() < deadline);
    return closed;
}

/* On 308ba66 a connection that had added a counter never idled out:
 * PCW_CTL_MAX_CONNS of them, silent, refused every other consumer for as
 * long as they liked (as "instance kept changing"). Now a new consumer
 * finding every slot taken sheds the connection silent longest (at least
 * PCW_CTL_SHED_AFTER_MS), whose added counters are removed on its
 * behalf. */
/* Every slot is taken by the silent peers fds[]: a new consumer is served
 * within served_ms, and exactly one peer was shed for it, its counter
 * removed. Closes everything. */
static void newcomer_sheds_one(env *e, int *fds, int served_ms)
{
    cr_assert_eq(connections(e), PCW_CTL_MAX_CONNS);
    pcw_consumer *cons = open_consumer();
    cr_assert(collect_until_served(cons, served_ms), "every slot stays taken by silent peers");
    cr_assert_eq(closed_by_provider(fds, PCW_CTL_MAX_CONNS, 5000), 1, "one silent peer makes room");
    cr_assert_eq(wait_count(PCW_CONTROL_REMOVE_COUNTER, 1, 5000), 1,
                 "the shed peer's counter is removed");
    pcw_consumer_close(cons);
    for (int i = 0; i < PCW_CTL_MAX_CONNS; i++)
        close(fds[i]);
    env_close(e);
}

Test(control_limits, silent_adders_make_room_for_a_new_consumer)
{
    env e;
    env_open(&e);
    int fds[PCW_CTL_MAX_CONNS];
    cr_assert_eq(fill_with_silent_adders(&e, fds, PCW_CTL_MAX_CONNS), PCW_CTL_MAX_CONNS);
    newcomer_sheds_one(&e, fds, 10000);
}

/* The same when each silent peer also holds a collection it never ends
 * (COLLECT with HOLD, no COLLECT_END): the hold ends by itself after
 * PCW_CTL_HOLD_TIMEOUT_MS, and must not keep the slot taken. On the first
 * version of the fix a connection that began waiting with a hold was never
 * shed (until its 4 s bound, here). */
Test(control_limits, silent_holders_make_room_for_a_new_consumer)
{
    env e;
    env_open(&e);
    int fds[PCW_CTL_MAX_CONNS];
    fill_with_silent_adders(&e, fds, PCW_CTL_MAX_CONNS);
    unsigned char b[256];
    size_t len = collect_payload(b, sizeof b, e.seg_index, PCW_CTL_HOLD);
    for (int i = 0; i < PCW_CTL_MAX_CONNS; i++)
        cr_assert_eq(raw_call(fds[i], PCW_CTL_COLLECT, 2, b, len), PCW_OK, "peer %d", i);
    /* Before the 4 s bound of connections with counters added. */
    newcomer_sheds_one(&e, fds, PCW_CTL_IDLE_TIMEOUT_MS);
}

/* Silent for good: a connection with counters added is closed after
 * PCW_CTL_ADDED_IDLE_TIMEOUT_MS without a request (not after the 2 s of one
 * without), and its counters removed. */
Test(control_limits, silent_adder_is_closed_after_its_own_bound)
{
    env e;
    env_open(&e);
    int fd;
    long long t0 = tu_now_ms();
    fill_with_silent_adders(&e, &fd, 1);
    cr_assert(!readable(fd, PCW_CTL_IDLE_TIMEOUT_MS + 500),
              "closed at the bound of a connection without counters");
    cr_assert(readable(fd, PCW_CTL_ADDED_IDLE_TIMEOUT_MS + 10000), "a silent adder stays forever");
    long long took = tu_now_ms() - t0;
    char c;
    cr_assert_eq(recv(fd, &c, 1, 0), 0, "end of file");
    cr_assert_geq(took, PCW_CTL_ADDED_IDLE_TIMEOUT_MS - 100, "closed after %lld ms", took);
    cr_assert_eq(wait_count(PCW_CONTROL_REMOVE_COUNTER, 1, 5000), 1);
    close(fd);
    env_close(&e);
}

/* The library's consumer, shed while silent, reconnects by itself on its
 * next call and adds its counters again: the provider sees them added, and
 * the collection is served. */
Test(control_limits, shed_consumer_reconnects_and_adds_its_counters_again)
{
    env e;
    env_open(&e);
    pcw_consumer *cons = open_consumer();
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(cons, "Segment Set");
    pcw_query all = {~0ull, PCW_ANY_INSTANCE_ID, "*"};
    cr_assert_eq(pcw_consumer_add_counter(cons, m, 0, &all, NULL), PCW_OK);
    /* The rest of the slots, then one more peer: the consumer's connection
     * is the one silent longest. */
    int fds[PCW_CTL_MAX_CONNS];
    cr_assert_eq(fill_with_silent_adders(&e, fds, PCW_CTL_MAX_CONNS - 1), PCW_CTL_MAX_CONNS);
    /* Refused until the consumer has been silent PCW_CTL_SHED_AFTER_MS. */
    long long deadline = tu_now_ms() + 10000;
    int extra = -1, served = 0;
    while (!served && tu_now_ms() < deadline) {
        if (extra >= 0)
            close(extra);
        extra = raw_connect(e.sock);
        cr_assert_geq(extra, 0);
        (void)raw_request(extra, PCW_CTL_PING, 1, NULL, 0); /* a refusal is queued */
        pcw_ctl_header h;
        cr_assert_eq(raw_read(extra, &h), 0, "neither served nor refused");
        served = h.type == (PCW_CTL_PING | PCW_CTL_REPLY);
        cr_assert(served || h.status == PCW_E_CONNECTIONS_FULL, "refused with %d", h.status);
    }
    cr_assert(served, "the extra peer was never served");
    cr_assert_eq(wait_count(PCW_CONTROL_REMOVE_COUNTER, 1, 5000), 1, "nobody was shed");
    cr_assert(!closed_by_provider(fds, PCW_CTL_MAX_CONNS - 1, 0), "a raw peer was shed");
    close(extra); /* a slot for the consumer again */
    cr_assert_eq(wait_connections(&e, PCW_CTL_MAX_CONNS - 1, 5000), PCW_CTL_MAX_CONNS - 1);
    /* Its next call reconnects and is served: no error, no retry. */
    cr_assert(collect_until_served(cons, 0), "the shed consumer's next call fails");
    cr_assert_eq(wait_count(PCW_CONTROL_ADD_COUNTER, PCW_CTL_MAX_CONNS + 1, 5000),
                 PCW_CTL_MAX_CONNS + 1, "its counter is not added again");
    pcw_consumer_close(cons);
    for (int i = 0; i < PCW_CTL_MAX_CONNS - 1; i++)
        close(fds[i]);
    env_close(&e);
}

/* An ADD_COUNTER the provider refused was not added: a new connection
 * must not add it after all. */
Test(control_limits, refused_counter_is_not_added_again)
{
    env e;
    env_open(&e);
    pcw_consumer *cons = open_consumer();
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(cons, "Segment Set");
    pthread_mutex_lock(&lock);
    refuse_adds = 1;
    pthread_mutex_unlock(&lock);
    cr_assert_eq(pcw_consumer_add_counter(cons, m, 0, NULL, NULL), 5);
    pthread_mutex_lock(&lock);
    refuse_adds = 0;
    pthread_mutex_unlock(&lock);
    /* The provider closes the idle connection; the next call connects
     * anew. */
    cr_assert_eq(wait_connections(&e, 0, PCW_CTL_IDLE_TIMEOUT_MS + 5000), 0);
    cr_assert(collect_until_served(cons, 0));
    cr_assert_eq(count(PCW_CONTROL_ADD_COUNTER), 1, "the refused counter was added again");
    pcw_consumer_close(cons);
    env_close(&e);
}

/* Every slot busy (each peer inside a callback: nothing to shed): the
 * consumer is refused, and told so - not "instance kept changing" - and
 * the segment's instances are read all the same: a segment counterset
 * misses nothing (PERFLIB's rule for a provider that does not answer). */
Test(control_limits, refused_consumer_is_told_the_slots_are_full)
{
    env e;
    env_open(&e);
    uint64_t v = 7;
    pcw_data d = {&v, sizeof v};
    pcw_instance *seg;
    cr_assert_eq(pcw_create_instance(&seg, e.seg_reg, "seg", 1, &d), PCW_OK);
    set_hold_starts(1);
    unsigned char b[256];
    size_t len = collect_payload(b, sizeof b, e.seg_index, 0);
    int fds[PCW_CTL_MAX_CONNS];
    for (int i = 0; i < PCW_CTL_MAX_CONNS; i++) {
        fds[i] = raw_connect(e.sock);
        cr_assert_geq(fds[i], 0);
        cr_assert_eq(raw_request(fds[i], PCW_CTL_COLLECT, 1, b, len), 0);
    }
    cr_assert_eq(wait_count(PCW_CONTROL_COLLECT_START, PCW_CTL_MAX_CONNS, 10000),
                 PCW_CTL_MAX_CONNS);
    pcw_consumer *cons = open_consumer();
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(cons, "Segment Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(cons, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0, "refused as \"%s\"", pcw_status_str(rep.first_error));
    cr_assert_eq(s.count, 1, "the segment's instance is read all the same");
    /* What needs the provider is refused, and says why. */
    int rc = pcw_consumer_add_counter(cons, m, 0, NULL, &rep);
    const char *why = pcw_status_str(rc);
    cr_assert(strstr(why, "connection slots are full"), "refused as \"%s\"", why);
    set_hold_starts(0);
    pcw_snapshot_free(&s);
    pcw_consumer_close(cons);
    for (int i = 0; i < PCW_CTL_MAX_CONNS; i++)
        close(fds[i]);
    env_close(&e);
}
