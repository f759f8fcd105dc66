/* SPDX-License-Identifier: MIT */
/*
 * tests/test_collect_faults.c - a consumer's collection against providers
 * whose control channel is missing, refusing or hostile: it must neither
 * crash, overrun its time limit, nor report a live provider as exited.
 *
 * Providers run in the test process (the segment's pid is then ours, so a
 * socket the test binds in the provider's place passes the consumer's
 * SO_PEERCRED check) or as helper processes.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
/* Longer than any wait here: a held collection ends only because the
 * consumer (or its connection) ends it. */
#define PCW_CTL_HOLD_TIMEOUT_MS 30000
/* Idle peers are not shed for a new consumer within the test: it plays
 * every slot really in use (test_control_limits sheds). */
#define PCW_CTL_SHED_AFTER_MS 30000
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "rawpeer.h"
#include "testutil.h"

TestSuite(collect_faults, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* ---- an in-process provider ---------------------------------------------- */

static atomic_int starts, ends;
static int end_pipe[2] = {-1, -1}; /* a byte per COLLECT_END */
static atomic_int callback_ms;     /* how long a COLLECT_DATA takes */

static int count_control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)info, (void)ctx;
    if (req == PCW_CONTROL_COLLECT_START)
        atomic_fetch_add(&starts, 1);
    if (req == PCW_CONTROL_COLLECT_END) {
        atomic_fetch_add(&ends, 1);
        if (end_pipe[1] >= 0 && write(end_pipe[1], "e", 1) != 1)
            abort();
    }
    return PCW_OK;
}

static int one_instance(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    if (type == PCW_CALLBACK_COLLECT_DATA && atomic_load(&callback_ms)) {
        struct timespec ts = {0, atomic_load(&callback_ms) * 1000000L};
        nanosleep(&ts, NULL); /* a slow callback: the consumer gives up first */
    }
    uint64_t v = 5;
    pcw_data d = {&v, sizeof v};
    return pcw_add_instance(info->buffer, "cb", 1, type == PCW_CALLBACK_COLLECT_DATA, &d);
}

typedef struct env {
    pcw_provider *prov;
    pcw_registration *seg_reg; /* "Segment Set": one instance in the segment */
    pcw_registration *cb_reg;  /* "Callback Set", or NULL */
    pcw_instance *inst;
    char sock[PATH_MAX];
} env;

static void env_open(env *e, int control, int callback_set)
{
    memset(e, 0, sizeof *e);
    atomic_store(&starts, 0);
    atomic_store(&ends, 0);
    atomic_store(&callback_ms, 0);
    cr_assert_eq(pipe2(end_pipe, O_CLOEXEC), 0);
    pcw_provider_options o = {.control_callback = control ? count_control : NULL};
    cr_assert_eq(pcw_provider_open(&e->prov, &o), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Segment Set",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    cr_assert_eq(pcw_register(&e->seg_reg, e->prov, &info), PCW_OK);
    uint64_t v = 9;
    pcw_data d = {&v, sizeof v};
    cr_assert_eq(pcw_create_instance(&e->inst, e->seg_reg, "seg", 1, &d), PCW_OK);
    if (callback_set) {
        info.name = "Callback Set";
        info.callback = one_instance;
        cr_assert_eq(pcw_register(&e->cb_reg, e->prov, &info), PCW_OK);
    }
    snprintf(e->sock, sizeof e->sock, "%s", pcw_provider_path(e->prov));
    strcpy(e->sock + strlen(e->sock) - strlen(PCW_SEG_SUFFIX), PCW_SOCK_SUFFIX);
}

static void env_close(env *e)
{
    pcw_provider_close(e->prov);
    close(end_pipe[0]), close(end_pipe[1]);
    end_pipe[0] = end_pipe[1] = -1;
}

/* ---- item 1: the segment says "control socket", none is there ------------ */

/* pcw_provider_close removes the socket before the segment: a consumer
 * collecting meanwhile finds the flag and no socket. It must read the
 * segment (nobody is left to bracket the read) and not crash: on 9ef2b5d
 * finish() sent COLLECT_END through the connection send_all had dropped. */
Test(collect_faults, control_flag_without_socket)
{
    env e;
    env_open(&e, 1, 1);
    cr_assert_eq(unlink(e.sock), 0);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Segment Set");
    cr_assert(m);
    cr_assert(pcw_segment_provider(pcw_consumer_segment(c, 0))->flags & PCW_SEG_F_CONTROL);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0, "status %d", rep.first_error);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(pcw_snapshot_value(&s, 0, &m->meta->counters[0]), 9);

    /* One segment, directly (pcwdump's path). */
    pcw_segment *seg = pcw_consumer_segment(c, 0);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Segment Set");
    cr_assert_eq(pcw_segment_collect(seg, cs, NULL, &s, 0, 0, 500, NULL), PCW_OK);
    cr_assert_eq(s.count, 1);

    /* A callback counterset has nobody to ask: its part fails, cleanly. */
    m = pcw_consumer_find_counterset(c, "Callback Set");
    cr_assert(m);
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 1);
    cr_assert_eq(rep.first_error, PCW_E_NOT_FOUND);
    cr_assert_eq(s.count, 0);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    env_close(&e);
}

/* ---- item 9: a provider that floods late replies --------------------------- */

/* Listens in the provider's place (same process, so SO_PEERCRED matches
 * the segment) and, to every connection, streams well-formed replies to a
 * request id the consumer never sent, until told to stop. */
typedef struct flooder {
    int lfd;
    atomic_int fd; /* the connection, once accepted */
    atomic_int stop;
    pthread_t thread;
} flooder;

static void *flood_main(void *arg)
{
    flooder *f = arg;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    atomic_store(&f->fd, fd);
    int big = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
    /* Header-only replies, 43,690 to a send: each costs the consumer a
     * receive, the flooder a 24-byte copy. */
    size_t nframes = (1 << 20) / PCW_CTL_HEADER_SIZE, len = nframes * PCW_CTL_HEADER_SIZE;
    unsigned char *frame = calloc(1, len);
    pcw_ctl_writer w = {frame, 0, len, len, 0};
    pcw_ctl_header h = {
        PCW_CTL_MAGIC, PCW_CTL_VERSION, PCW_CTL_COLLECT | PCW_CTL_REPLY, 0, 0x7FFFFFFF, PCW_OK, 0};
    for (size_t i = 0; i < nframes; i++)
        pcw__ctl_put_header(&w, &h);
    long long until = tu_now_ms() + 10000; /* the old consumer drained all of it */
    while (!atomic_load(&f->stop) && tu_now_ms() < until)
        if (send(fd, frame, len, MSG_NOSIGNAL) < 0)
            break;
    free(frame);
    return NULL; /* fd is closed by flooder_stop */
}

static void flooder_start(flooder *f, const char *sock)
{
    memset(f, 0, sizeof *f);
    atomic_store(&f->fd, -1);
    f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    cr_assert_lt(strlen(sock), sizeof a.sun_path);
    strcpy(a.sun_path, sock);
    cr_assert_eq(bind(f->lfd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(f->lfd, 8), 0);
    cr_assert_eq(pthread_create(&f->thread, NULL, flood_main, f), 0);
}

static void flooder_stop(flooder *f)
{
    atomic_store(&f->stop, 1);
    shutdown(f->lfd, SHUT_RDWR);
    int fd = atomic_load(&f->fd);
    if (fd >= 0)
        shutdown(fd, SHUT_RDWR); /* a send blocked on a full socket returns */
    pthread_join(f->thread, NULL);
    if ((fd = atomic_load(&f->fd)) >= 0)
        close(fd);
    close(f->lfd);
}

/* On 9ef2b5d pump() read until EAGAIN without looking at the clock: a
 * provider that keeps the socket full held the consumer for as long as it
 * liked (here 10 s against a 300 ms limit). */
Test(collect_faults, flooding_provider_costs_only_the_time_limit)
{
    env e;
    env_open(&e, 0, 1);
    cr_assert_eq(unlink(e.sock), 0);
    flooder f;
    flooder_start(&f, e.sock);
    pcw_consumer *c;
    pcw_consumer_options o = {.timeout_ms = 300};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Callback Set");
    cr_assert(m);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    long long t0 = tu_now_ms();
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    long long took = tu_now_ms() - t0;
    flooder_stop(&f);
    cr_assert_lt(took, 2500, "took %lld ms against a limit of 300", took);
    cr_assert_eq(rep.first_error, PCW_E_TIMEOUT);
    cr_assert_eq(s.count, 0);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    env_close(&e);
}

/* ---- item 6: a provider with every connection taken ------------------------- */

/* PING on fd: 1 served, 0 refused (REFUSED), -1 otherwise. */
static int raw_ping(int fd)
{
    /* The send fails if the provider refused and closed first; the
     * refusal is queued for us then. */
    (void)raw_request(fd, PCW_CTL_PING, 1, NULL, 0);
    pcw_ctl_header h;
    if (raw_read(fd, &h) != 0)
        return -1;
    if (h.type == PCW_CTL_REFUSED)
        return h.status == PCW_E_CONNECTIONS_FULL ? 0 : -1;
    return h.type == (PCW_CTL_PING | PCW_CTL_REPLY) && h.status == PCW_OK ? 1 : -1;
}

/* Every connection the provider serves is taken (by peers that are not
 * shed, here): a consumer is refused, and must say so
 * (PCW_E_CONNECTIONS_FULL; PCW_E_BUSY, "instance kept changing", until
 * issue 23) - never that the provider, whose segment is alive, has exited
 * (as 9ef2b5d did for a provider with a control callback). Its segment
 * countersets miss nothing: they are read all the same. */
Test(collect_faults, refused_consumer_does_not_report_a_live_provider_as_exited)
{
    env e;
    env_open(&e, 1, 1);
    int fds[1024], n = 0, last;
    for (;;) {
        cr_assert_lt(n, 1024, "the provider never refused a connection");
        fds[n] = raw_connect(e.sock);
        cr_assert_geq(fds[n], 0);
        last = raw_ping(fds[n]);
        cr_assert_geq(last, 0, "connection %d: neither served nor refused", n);
        if (last == 0)
            break;
        n++;
    }
    close(fds[n]);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    cr_assert_eq(pcw_segment_alive(pcw_consumer_segment(c, 0)), PCW_OK);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    static const char *const sets[] = {"Segment Set", "Callback Set"};
    for (int round = 0; round < 20; round++) {
        const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, sets[round % 2]);
        cr_assert(m);
        pcw_collect_report rep = {0};
        cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
        if (round % 2 == 0) {
            cr_assert_eq(rep.failed, 0, "round %d: %s", round, pcw_status_str(rep.first_error));
            cr_assert_eq(s.count, 1, "round %d: the segment's instance", round);
            continue;
        }
        cr_assert_eq(rep.failed, 1, "round %d", round);
        cr_assert_eq(rep.first_error, PCW_E_CONNECTIONS_FULL, "round %d: %s", round,
                     pcw_status_str(rep.first_error));
    }
    /* One connection freed: served again. */
    close(fds[0]);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Callback Set");
    pcw_collect_report rep = {0};
    int served = 0;
    long long deadline = tu_now_ms() + 10000;
    while (!served && tu_now_ms() < deadline) {
        /* The provider frees the slot when it sees the EOF: retry until. */
        cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
        served = rep.failed == 0;
        cr_assert(served || rep.first_error == PCW_E_CONNECTIONS_FULL, "%s",
                  pcw_status_str(rep.first_error));
    }
    cr_assert(served);
    cr_assert_eq(s.count, 1);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    for (int i = 1; i < n; i++)
        close(fds[i]);
    env_close(&e);
}

/* A socket file nobody listens on, beside a live provider's segment (its
 * listener gone, or the file replaced): connect is refused. That is no
 * proof the provider exited - its segment says it lives - so the consumer
 * must not say so (9ef2b5d did). */
Test(collect_faults, dead_socket_of_a_live_provider_is_not_exited)
{
    env e;
    env_open(&e, 1, 1);
    cr_assert_eq(unlink(e.sock), 0);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strcpy(a.sun_path, e.sock);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    close(fd); /* the file stays; connecting to it is ECONNREFUSED */
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    static const char *const sets[] = {"Segment Set", "Callback Set"};
    for (int i = 0; i < 2; i++) {
        const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, sets[i]);
        pcw_collect_report rep = {0};
        cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
        cr_assert_eq(rep.failed, 1);
        cr_assert_neq(rep.first_error, PCW_E_PROVIDER_EXITED, "%s", sets[i]);
        cr_assert_eq(pcw_consumer_add_counter(c, m, 0, NULL, &rep) == PCW_E_PROVIDER_EXITED, 0);
    }
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    env_close(&e);
}

/* ---- item 7: the consumer's side of a held collection ------------------------ */

/* The consumer asked for a held collection and gave up waiting (its time
 * limit) before the provider answered. The provider then holds the
 * collection (COLLECT_START) once its callback returns; the consumer must
 * still end it: on 9ef2b5d it sent no COLLECT_END, and the provider stayed
 * in COLLECT_START as long as the connection lived. */
Test(collect_faults, timed_out_held_collection_is_ended_by_the_consumer)
{
    env e;
    env_open(&e, 1, 1);
    atomic_store(&callback_ms, 600);
    pcw_consumer *c;
    pcw_consumer_options o = {.timeout_ms = 200};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Callback Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.first_error, PCW_E_TIMEOUT);
    /* The consumer stays connected; the provider ends the collection once
     * its callback is done and it reads the consumer's COLLECT_END. */
    struct pollfd p = {end_pipe[0], POLLIN, 0};
    cr_assert_eq(poll(&p, 1, 10000), 1, "the held collection was never ended");
    cr_assert_eq(atomic_load(&starts), 1);
    cr_assert_eq(atomic_load(&ends), 1);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    env_close(&e);
}
