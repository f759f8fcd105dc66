/* SPDX-License-Identifier: MIT */
/*
 * bench/callback.c - a consumer's collection of a callback counterset over
 * the provider's control channel, end to end, beside a raw Unix-socket
 * round trip of the same size between the same kind of processes.
 *
 *   callback/collect/<instances>            pcw_consumer_collect of a
 *       callback counterset whose COLLECT_DATA callback adds <instances>
 *       instances ("inst0".., ids 0.., CB_COUNTERS u64 counters each), from
 *       a provider child process. Latency of every call; p50/p99/mean.
 *   callback/baseline_socket_roundtrip/<bytes>  the same request size out,
 *       <bytes> (= the collection's reply, header included) back, over a
 *       blocking Unix stream socket to an echo child; no pcw involved.
 *   callback/collect_concurrent             CB_CLIENTS consumer processes
 *       collecting <instances> = 100 from one provider for CB_PHASE_MS.
 *   callback/baseline_socket_concurrent     CB_CLIENTS socket clients
 *       against the echo child, the same way.
 *
 * Processes and CPUs: the provider / echo child runs on BU_CPU_OTHER (its
 * connection threads inherit that), every consumer on BU_CPU_MAIN: the
 * benchmark process for the single-consumer figures, the CB_CLIENTS child
 * processes (which then time-share CPU 0) for the concurrent ones. Each
 * child is spawned per benchmark run and stopped at its end, so a run
 * never sees another's provider; the provider removes its segment and
 * socket at pcw_provider_close, the echo child its socket.
 *
 * Latencies are clock_gettime(CLOCK_MONOTONIC) around each call, kept in
 * an array and sorted at the end: p50, p90 and p99 are nearest-rank percentiles
 * of every call of the run, reported as counters (p50_ns, p90_ns, p99_ns, mean_ns,
 * max_ns) beside Google Benchmark's own wall-clock mean per iteration.
 * server_cpu_ns is the CPU time all threads of the provider (or echo)
 * child ran per operation during the timed part (/proc/PID/task/schedstat).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "benchutil.h"
#include "pcw/collect.h"
#include "common/control_proto.h"
#include "common/layout.h"
#include "pcw/provider.h"

#define CB_CSET     "BenchCallback"
#define CB_COUNTERS 4
#define CB_CLIENTS  4
#define CB_PHASE_MS 1000
#define CB_TIMEOUT  5000 /* ms: a loaded machine must not time out */
/* Instances of the concurrent figures. */
#define CB_CONC_INSTANCES 100

/* ---- sizes on the wire (docs/control-channel.md) -------------------------- */

/* A COLLECT request with mask "*": header, reg_index, flags, counter_mask,
 * instance_id, str "*". */
static size_t request_bytes(void)
{
    return PCW_CTL_HEADER_SIZE + 4 + 4 + 8 + 4 + 4 + 1;
}

/* The reply to it: header, status, count, data_size, reserved, then per
 * instance id, name length, flags, name, data. */
static size_t reply_bytes(int64_t instances)
{
    size_t n = PCW_CTL_HEADER_SIZE + 16;
    char name[32];
    for (int64_t i = 0; i < instances; i++)
        n += 12 + (size_t)snprintf(name, sizeof name, "inst%d", (int)i) + 8 * CB_COUNTERS;
    return n;
}

/* ---- latencies ----------------------------------------------------------- */

typedef struct lat {
    uint64_t *v;
    size_t n, cap;
} lat;

static int lat_add(lat *l, uint64_t ns)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        uint64_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = ns;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p% of the values <= it. */
static double lat_pct(const lat *l, double p)
{
    if (!l->n)
        return 0;
    size_t rank = (size_t)ceil(p / 100.0 * (double)l->n);
    if (rank < 1)
        rank = 1;
    if (rank > l->n)
        rank = l->n;
    return (double)l->v[rank - 1];
}

/* Sort, then report the latency counters. */
static void lat_report(gb_state *st, lat *l)
{
    qsort(l->v, l->n, sizeof *l->v, cmp_u64);
    double sum = 0;
    for (size_t i = 0; i < l->n; i++)
        sum += (double)l->v[i];
    gb_counter(st, "p50_ns", lat_pct(l, 50));
    gb_counter(st, "p90_ns", lat_pct(l, 90));
    gb_counter(st, "p99_ns", lat_pct(l, 99));
    gb_counter(st, "mean_ns", l->n ? sum / (double)l->n : 0);
    gb_counter(st, "max_ns", l->n ? (double)l->v[l->n - 1] : 0);
    gb_counter(st, "samples", (double)l->n);
}

/* CPU time (ns) every thread of process `pid` has run so far: the sum of
 * /proc/PID/task/TID/schedstat's first field. 0 if unavailable. Used to
 * report the provider's (or echo child's) CPU per operation. */
static uint64_t proc_cpu_ns(pid_t pid)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    uint64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[384];
        snprintf(path, sizeof path, "%s/%s/schedstat", dir, e->d_name);
        FILE *f = fopen(path, "r");
        unsigned long long ns;
        if (f && fscanf(f, "%llu", &ns) == 1)
            sum += ns;
        if (f)
            fclose(f);
    }
    closedir(d);
    return sum;
}

/* ---- I/O helpers --------------------------------------------------------- */

static int read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

static int recv_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, (char *)buf + got, n - got, MSG_WAITALL);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int send_full(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = send(fd, (const char *)buf + done, n - done, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        done += (size_t)w;
    }
    return 0;
}

/* Block until the parent closes our stdin. */
static void wait_for_eof(void)
{
    char b[64];
    for (;;) {
        ssize_t r = read(0, b, sizeof b);
        if (r == 0 || (r < 0 && errno != EINTR))
            return;
    }
}

/* ---- the callback provider child ------------------------------------------ */

typedef struct cb_ctx {
    int64_t instances;
    char (*names)[16];
} cb_ctx;

/* Thread-safe: touches only its context (read-only) and its stack. Values
 * are id * 1000 + counter index, so the consumer can check them. */
static int collect_cb(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    const cb_ctx *c = ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint64_t v[CB_COUNTERS];
    pcw_data d = {v, sizeof v};
    for (int64_t i = 0; i < c->instances; i++) {
        for (int k = 0; k < CB_COUNTERS; k++)
            v[k] = (uint64_t)i * 1000 + (uint64_t)k;
        int rc = type == PCW_CALLBACK_COLLECT_DATA
                     ? pcw_add_instance(info->buffer, c->names[i], (uint32_t)i, 1, &d)
                     : pcw_add_instance(info->buffer, c->names[i], (uint32_t)i, 0, NULL);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

/* callback-provider N: the callback counterset, then wait. */
static int child_provider(int64_t n)
{
    static cb_ctx ctx;
    ctx.instances = n;
    ctx.names = calloc((size_t)(n ? n : 1), sizeof *ctx.names);
    for (int64_t i = 0; i < n; i++)
        snprintf(ctx.names[i], sizeof ctx.names[i], "inst%d", (int)i);
    pcw_provider *p;
    pcw_provider_options o = {.name = "pcw_bench-callback"};
    int rc = pcw_provider_open(&p, &o);
    if (rc != PCW_OK) {
        printf("error provider_open %s\n", pcw_status_str(rc));
        return 1;
    }
    pcw_counter_desc cd[CB_COUNTERS];
    static const char *const names[CB_COUNTERS] = {"c0", "c1", "c2", "c3"};
    for (int k = 0; k < CB_COUNTERS; k++) {
        cd[k] = pcw_counter_desc_default();
        cd[k].id = (uint32_t)k;
        cd[k].offset = (uint32_t)(8 * k);
        cd[k].name = names[k];
    }
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .name = CB_CSET,
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = CB_COUNTERS,
                                .counters = cd,
                                .callback = collect_cb,
                                .callback_context = &ctx};
    pcw_registration *r;
    if ((rc = pcw_register(&r, p, &ri)) != PCW_OK) {
        printf("error register %s\n", pcw_status_str(rc));
        return 1;
    }
    printf("ready %s\n", pcw_provider_path(p));
    fflush(stdout);
    wait_for_eof();
    /* Stops the channel (joins its threads), removes segment and socket. */
    pcw_provider_close(p);
    free(ctx.names);
    return 0;
}

/* ---- the echo child (the baseline's server) ------------------------------- */

typedef struct echo_conn {
    int fd;
    size_t req, reply;
    const unsigned char *out;
} echo_conn;

/* One thread per connection, as the provider's channel has. */
static void *echo_main(void *arg)
{
    echo_conn *e = arg;
    unsigned char *in = malloc(e->req ? e->req : 1);
    while (in && recv_full(e->fd, in, e->req) == 0 && send_full(e->fd, e->out, e->reply) == 0)
        ;
    free(in);
    close(e->fd);
    free(e);
    return NULL;
}

static void echo_addr(struct sockaddr_un *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    snprintf(a->sun_path, sizeof a->sun_path, "%s", path);
}

/* callback-echo REQ REPLY: read REQ bytes, answer REPLY bytes, per
 * connection, until stdin closes. */
static int child_echo(size_t req, size_t reply)
{
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    if ((size_t)snprintf(path, sizeof path, "%s/echo-%d.sock", bu_root(), (int)getpid()) >=
        sizeof path) {
        printf("error socket path too long\n");
        return 1;
    }
    unsigned char *out = calloc(1, reply ? reply : 1);
    for (size_t i = 0; out && i < reply; i++)
        out[i] = (unsigned char)i;
    struct sockaddr_un a;
    echo_addr(&a, path);
    int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!out || lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(lfd, 64) != 0) {
        printf("error echo socket: %s\n", strerror(errno));
        return 1;
    }
    printf("ready %s\n", path);
    fflush(stdout);
    for (;;) {
        struct pollfd pf[2] = {{lfd, POLLIN, 0}, {0, POLLIN, 0}};
        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            break; /* end of file (or a stray byte): the parent is done */
        if (!(pf[0].revents & POLLIN))
            continue;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        echo_conn *e = malloc(sizeof *e);
        pthread_t t;
        if (!e) {
            close(fd);
            continue;
        }
        *e = (echo_conn){fd, req, reply, out};
        if (pthread_create(&t, NULL, echo_main, e) != 0) {
            close(fd);
            free(e);
            continue;
        }
        pthread_detach(t);
    }
    unlink(path);
    /* Connection threads may still be blocked on their sockets. */
    _exit(0);
}

/* ---- the two kinds of client ---------------------------------------------- */

/* A pcw consumer with the callback counterset found and one collection
 * made (connected, snapshot grown, values checked). */
typedef struct pcw_client {
    pcw_consumer *c;
    const pcw_merged_counterset *m;
    pcw_snapshot snap;
    int64_t instances;
} pcw_client;

/* The collection itself; 0 if it worked and had every instance. */
static int pcw_client_collect(pcw_client *k)
{
    pcw_collect_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = pcw_consumer_collect(k->c, k->m, NULL, &k->snap, PCW_READ_NO_NAMES, &rep);
    return rc == PCW_OK && rep.failed == 0 && (int64_t)k->snap.count == k->instances ? 0 : -1;
}

static void pcw_client_close(pcw_client *k)
{
    pcw_snapshot_free(&k->snap);
    if (k->c)
        pcw_consumer_close(k->c);
    memset(k, 0, sizeof *k);
}

/* NULL, or why it failed. */
static const char *pcw_client_open(pcw_client *k, int64_t instances)
{
    memset(k, 0, sizeof *k);
    k->instances = instances;
    pcw_consumer_options o = {.timeout_ms = CB_TIMEOUT};
    if (pcw_consumer_open(&k->c, &o) != PCW_OK)
        return "pcw_consumer_open failed";
    if (pcw_consumer_refresh(k->c, NULL) != PCW_OK)
        return "pcw_consumer_refresh failed";
    k->m = pcw_consumer_find_counterset(k->c, CB_CSET);
    if (!k->m || k->m->source_count != 1)
        return "the callback counterset is missing (or has several providers)";
    if (!(k->m->meta->flags & PCW_CSET_F_CALLBACK))
        return "the counterset is not a callback counterset";
    if (pcw_client_collect(k) != 0)
        return "the first collection failed or missed instances";
    /* Every value is what the callback put there. */
    for (size_t i = 0; i < k->snap.count; i++) {
        size_t x = i;
        for (uint32_t c = 0; c < k->m->meta->counter_count; c++)
            if (pcw_snapshot_value(&k->snap, x, &k->m->meta->counters[c]) !=
                (uint64_t)pcw_snapshot_id(&k->snap, x) * 1000 + c)
                return "a collected value is wrong";
    }
    return NULL;
}

/* A blocking socket connected to the echo child. */
typedef struct sock_client {
    int fd;
    unsigned char *req, *reply;
    size_t req_len, reply_len;
} sock_client;

static int sock_client_roundtrip(sock_client *s)
{
    return send_full(s->fd, s->req, s->req_len) == 0 &&
                   recv_full(s->fd, s->reply, s->reply_len) == 0
               ? 0
               : -1;
}

static void sock_client_close(sock_client *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->req);
    free(s->reply);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

static const char *sock_client_open(sock_client *s, const char *path, size_t req, size_t reply)
{
    memset(s, 0, sizeof *s);
    s->req_len = req, s->reply_len = reply;
    s->req = calloc(1, req ? req : 1);
    s->reply = malloc(reply ? reply : 1);
    struct sockaddr_un a;
    echo_addr(&a, path);
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (!s->req || !s->reply || s->fd < 0)
        return "no memory or socket";
    if (connect(s->fd, (struct sockaddr *)&a, sizeof a) != 0)
        return "cannot connect to the echo child";
    if (sock_client_roundtrip(s) != 0)
        return "the first round trip failed";
    return NULL;
}

/* ---- concurrent client children ------------------------------------------- */

/* What a client child sends back after its phase, then `n` latencies. */
typedef struct phase_result {
    uint64_t n, errors, elapsed_ns;
} phase_result;

/* Wait for the parent's go byte, run for ms, send the result. */
static int run_phase(int (*once)(void *), void *arg, long ms)
{
    char go;
    if (read_full(0, &go, 1) != 0)
        return 0; /* the parent gave up */
    lat l = {0};
    phase_result res = {0, 0, 0};
    uint64_t start = bu_now_ns(), end = start + (uint64_t)ms * 1000000u, now = start;
    while (now < end) {
        uint64_t t0 = bu_now_ns();
        int bad = once(arg);
        now = bu_now_ns();
        if (bad)
            res.errors++;
        else if (lat_add(&l, now - t0) != 0)
            res.errors++;
    }
    res.n = l.n;
    res.elapsed_ns = now - start;
    int rc =
        write_full(1, &res, sizeof res) == 0 && write_full(1, l.v, l.n * sizeof *l.v) == 0 ? 0 : 1;
    free(l.v);
    wait_for_eof();
    return rc;
}

static int pcw_once(void *arg)
{
    return pcw_client_collect(arg);
}

static int sock_once(void *arg)
{
    return sock_client_roundtrip(arg);
}

/* callback-consumer N MS */
static int child_consumer(int64_t n, long ms)
{
    pcw_client k;
    const char *why = pcw_client_open(&k, n);
    if (why) {
        printf("error %s\n", why);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    int rc = run_phase(pcw_once, &k, ms);
    pcw_client_close(&k);
    return rc;
}

/* callback-sockclient PATH REQ REPLY MS */
static int child_sockclient(const char *path, size_t req, size_t reply, long ms)
{
    sock_client s;
    const char *why = sock_client_open(&s, path, req, reply);
    if (why) {
        printf("error %s\n", why);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    int rc = run_phase(sock_once, &s, ms);
    sock_client_close(&s);
    return rc;
}

int bench_callback_child(int argc, char **argv)
{
    /* argv[0] is "callback-KIND". */
    if (argc >= 2 && strcmp(argv[0], "callback-provider") == 0)
        return child_provider(strtoll(argv[1], NULL, 10));
    if (argc >= 3 && strcmp(argv[0], "callback-echo") == 0)
        return child_echo(strtoull(argv[1], NULL, 10), strtoull(argv[2], NULL, 10));
    if (argc >= 3 && strcmp(argv[0], "callback-consumer") == 0)
        return child_consumer(strtoll(argv[1], NULL, 10), strtol(argv[2], NULL, 10));
    if (argc >= 5 && strcmp(argv[0], "callback-sockclient") == 0)
        return child_sockclient(argv[1], strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10),
                                strtol(argv[4], NULL, 10));
    printf("error unknown callback child\n");
    return 2;
}

/* ---- the server children, from the benchmark process ----------------------- */

static int start_provider(gb_state *st, bu_child *c, int64_t n)
{
    char ns[32];
    snprintf(ns, sizeof ns, "%lld", (long long)n);
    const char *args[] = {"callback-provider", ns, NULL};
    if (bu_spawn(c, BU_CPU_OTHER, args) != 0) {
        gb_skip_with_error(st, "cannot start the callback provider child");
        return -1;
    }
    return 0;
}

/* The echo child; its socket path is after "ready ". */
static const char *start_echo(gb_state *st, bu_child *c, size_t req, size_t reply)
{
    char rq[32], rp[32];
    snprintf(rq, sizeof rq, "%zu", req);
    snprintf(rp, sizeof rp, "%zu", reply);
    const char *args[] = {"callback-echo", rq, rp, NULL};
    if (bu_spawn(c, BU_CPU_OTHER, args) != 0) {
        gb_skip_with_error(st, "cannot start the echo child");
        return NULL;
    }
    return c->line + 6;
}

/* ---- single-consumer figures ---------------------------------------------- */

static void bm_collect(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0);
    bu_child prov;
    if (start_provider(st, &prov, n) != 0)
        return;
    pcw_client k;
    const char *why = pcw_client_open(&k, n);
    lat l = {0};
    if (why) {
        gb_skip_with_error(st, why);
    } else {
        int bad = 0;
        uint64_t cpu0 = proc_cpu_ns(prov.pid);
        while (gb_keep_running(st)) {
            uint64_t t0 = bu_now_ns();
            bad |= pcw_client_collect(&k);
            bad |= lat_add(&l, bu_now_ns() - t0);
        }
        uint64_t cpu1 = proc_cpu_ns(prov.pid);
        if (bad) {
            gb_skip_with_error(st, "a collection failed or missed instances");
        } else {
            int64_t it = gb_state_iterations(st);
            gb_set_items_processed(st, it);
            gb_counter_rate(st, "instances_per_second", (double)(it * n));
            gb_counter(st, "instances", (double)n);
            gb_counter(st, "reply_bytes", (double)reply_bytes(n));
            gb_counter(st, "server_cpu_ns", it ? (double)(cpu1 - cpu0) / (double)it : 0);
            lat_report(st, &l);
        }
    }
    free(l.v);
    pcw_client_close(&k);
    bu_stop(&prov);
}

static void bm_socket(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    size_t bytes = (size_t)gb_range(st, 0);
    bu_child echo;
    const char *path = start_echo(st, &echo, request_bytes(), bytes);
    if (!path)
        return;
    sock_client s;
    const char *why = sock_client_open(&s, path, request_bytes(), bytes);
    lat l = {0};
    if (why) {
        gb_skip_with_error(st, why);
    } else {
        int bad = 0;
        uint64_t cpu0 = proc_cpu_ns(echo.pid);
        while (gb_keep_running(st)) {
            uint64_t t0 = bu_now_ns();
            bad |= sock_client_roundtrip(&s);
            bad |= lat_add(&l, bu_now_ns() - t0);
        }
        uint64_t cpu1 = proc_cpu_ns(echo.pid);
        if (bad) {
            gb_skip_with_error(st, "a round trip failed");
        } else {
            int64_t it = gb_state_iterations(st);
            gb_set_items_processed(st, it);
            gb_set_bytes_processed(st, it * (int64_t)bytes);
            gb_counter(st, "request_bytes", (double)request_bytes());
            gb_counter(st, "reply_bytes", (double)bytes);
            gb_counter(st, "server_cpu_ns", it ? (double)(cpu1 - cpu0) / (double)it : 0);
            lat_report(st, &l);
        }
    }
    free(l.v);
    sock_client_close(&s);
    bu_stop(&echo);
}

/* ---- concurrent figures ------------------------------------------------- */

/* Start CB_CLIENTS children with `args`, run one phase, report. The
 * benchmark process only starts and waits for them. */
static void concurrent(gb_state *st, const char *const *args, int64_t per_op_instances,
                       pid_t server)
{
    bu_child kids[CB_CLIENTS];
    int started = 0, ok = 1;
    for (; started < CB_CLIENTS; started++)
        if (bu_spawn(&kids[started], BU_CPU_MAIN, args) != 0) {
            ok = 0;
            break;
        }
    lat all = {0};
    uint64_t errors = 0;
    double rate = 0;
    if (!ok)
        gb_skip_with_error(st, "cannot start the client children");
    uint64_t cpu0 = proc_cpu_ns(server), cpu1 = cpu0;
    while (ok && gb_keep_running(st)) {
        /* Every client has connected and collected once: start them
         * together (within the few µs of four writes). */
        for (int i = 0; i < CB_CLIENTS; i++)
            ok &= write_full(kids[i].in, "g", 1) == 0;
        for (int i = 0; ok && i < CB_CLIENTS; i++) {
            phase_result r;
            ok = read_full(kids[i].out, &r, sizeof r) == 0;
            for (uint64_t j = 0; ok && j < r.n; j++) {
                uint64_t v;
                ok = read_full(kids[i].out, &v, sizeof v) == 0 && lat_add(&all, v) == 0;
            }
            if (ok) {
                errors += r.errors;
                rate += r.elapsed_ns ? (double)r.n * 1e9 / (double)r.elapsed_ns : 0;
            }
        }
        if (!ok)
            gb_skip_with_error(st, "lost a client child");
        cpu1 = proc_cpu_ns(server);
    }
    if (ok && errors)
        gb_skip_with_error(st, "some collections failed or missed instances");
    else if (ok) {
        gb_counter(st, "clients", CB_CLIENTS);
        gb_counter(st, "ops_per_second", rate);
        if (per_op_instances)
            gb_counter(st, "instances_per_second", rate * (double)per_op_instances);
        gb_counter(st, "server_cpu_ns", all.n ? (double)(cpu1 - cpu0) / (double)all.n : 0);
        lat_report(st, &all);
    }
    free(all.v);
    for (int i = 0; i < started; i++)
        bu_stop(&kids[i]);
}

static void bm_collect_concurrent(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    bu_child prov;
    if (start_provider(st, &prov, CB_CONC_INSTANCES) != 0)
        return;
    char ns[32], ms[32];
    snprintf(ns, sizeof ns, "%d", CB_CONC_INSTANCES);
    snprintf(ms, sizeof ms, "%d", CB_PHASE_MS);
    const char *args[] = {"callback-consumer", ns, ms, NULL};
    concurrent(st, args, CB_CONC_INSTANCES, prov.pid);
    bu_stop(&prov);
}

static void bm_socket_concurrent(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    size_t reply = reply_bytes(CB_CONC_INSTANCES);
    bu_child echo;
    const char *path = start_echo(st, &echo, request_bytes(), reply);
    if (!path)
        return;
    char rq[32], rp[32], ms[32];
    snprintf(rq, sizeof rq, "%zu", request_bytes());
    snprintf(rp, sizeof rp, "%zu", reply);
    snprintf(ms, sizeof ms, "%d", CB_PHASE_MS);
    const char *args[] = {"callback-sockclient", path, rq, rp, ms, NULL};
    concurrent(st, args, 0, echo.pid);
    bu_stop(&echo);
}

void bench_callback_register(void)
{
    gb_bench *b = gb_register("callback/collect", bm_collect, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){100}, 1);

    b = gb_register("callback/baseline_socket_roundtrip", bm_socket, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){(int64_t)reply_bytes(100)}, 1);

    /* One iteration = one phase of CB_PHASE_MS in every client. */
    b = gb_register("callback/collect_concurrent", bm_collect_concurrent, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_iterations(b, 1);

    b = gb_register("callback/baseline_socket_concurrent", bm_socket_concurrent, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_iterations(b, 1);
}
