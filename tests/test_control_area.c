/* SPDX-License-Identifier: MIT */
/*
 * tests/test_control_area.c - the control channel's reply area
 * (docs/design.md, "The reply area"): a COLLECT's reply written to a
 * shared-memory area the provider hands over per connection, the socket
 * carrying only the request and a completion.
 *
 * Real processes on both sides. The provider is a child of this test
 * (fork), compiled with a small area (PCW_CTL_AREA_BYTES, as a program may
 * define it) so a reply outgrows it quickly; the consumer is this process,
 * the library or a raw peer. The hostile providers are children that open
 * a provider (so the segment names them, and the consumer's peer check
 * passes) and then answer on their own socket, breaking one rule each.
 */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE        1
#define PCW_CTL_AREA_BYTES 8192
#include <criterion/criterion.h>

#include <dirent.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "rawpeer.h"
#include "testutil.h"

TestSuite(control_area, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* ---- a provider child ------------------------------------------------------ */

#define FEW  10  /* instances of "Few": its reply fits the area */
#define MANY 600 /* of "Many": its reply (~14 KB of items) does not */
#define FEW2 7   /* of "Few2", which fits too */

#define SLOW 13 /* of "Slow" (only when slow_gate is set): its callback waits */
/* The read end of a pipe "Slow"'s collection waits on (a byte per
 * collection): -1 - no "Slow" in the child. */
static int slow_gate = -1;

static int adds(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint32_t n = (uint32_t)(uintptr_t)ctx;
    char gate;
    if (n == SLOW && type == PCW_CALLBACK_COLLECT_DATA && read(slow_gate, &gate, 1) != 1)
        return PCW_E_IO;
    for (uint32_t i = 0; i < n; i++) {
        char name[16];
        uint64_t v = (uint64_t)n * 1000 + i; /* whose reply it is, and which instance */
        pcw_data d = {&v, sizeof v};
        snprintf(name, sizeof name, "i%u", i);
        int rc = pcw_add_instance(info->buffer, name, i, 1, &d);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

typedef struct child_info {
    uint32_t few, many, few2; /* reg_index of each */
    char sock[PATH_MAX];
} child_info;

static pcw_provider *h_provider; /* the child's provider (serve) */

typedef struct child {
    pid_t pid;
    int quit; /* closing it ends the child */
    child_info info;
} child;

static pcw_registration *reg(pcw_provider *p, const char *name, uint32_t n, uint32_t *index)
{
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = name,
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c,
                                  .callback = adds,
                                  .callback_context = (void *)(uintptr_t)n};
    pcw_registration *r;
    if (pcw_register(&r, p, &info) != PCW_OK)
        _exit(3);
    *index = ((pcw__reg *)pcw__handle_get(r, PCW__HANDLE_REGISTRATION))->cset->reg_index;
    return r;
}

/* Fork a child that runs `serve` (NULL: the real provider serves) after
 * opening a provider with Few and Many; returns once it is ready. */
static void spawn(child *ch, void (*serve)(child_info *, int arg), int arg)
{
    int ready[2], quit[2];
    cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(quit, O_CLOEXEC), 0);
    ch->pid = fork();
    cr_assert_geq(ch->pid, 0);
    if (ch->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(ready[0]), close(quit[1]);
        pcw_provider *p;
        pcw_provider_options o = {0};
        if (pcw_provider_open(&p, &o) != PCW_OK)
            _exit(2);
        child_info ci;
        memset(&ci, 0, sizeof ci);
        reg(p, "Few", FEW, &ci.few);
        reg(p, "Many", MANY, &ci.many);
        reg(p, "Few2", FEW2, &ci.few2);
        uint32_t slow;
        if (slow_gate >= 0)
            reg(p, "Slow", SLOW, &slow);
        snprintf(ci.sock, sizeof ci.sock, "%s", pcw_provider_path(p));
        strcpy(ci.sock + strlen(ci.sock) - strlen(PCW_SEG_SUFFIX), PCW_SOCK_SUFFIX);
        h_provider = p;
        if (serve)
            serve(&ci, arg); /* replaces the socket, answers until killed */
        if (write(ready[1], &ci, sizeof ci) != (ssize_t)sizeof ci)
            _exit(4);
        char b;
        while (read(quit[0], &b, 1) > 0)
            ;
        pcw_provider_close(p);
        _exit(0);
    }
    close(ready[1]), close(quit[0]);
    ch->quit = quit[1];
    cr_assert_eq(read(ready[0], &ch->info, sizeof ch->info), (ssize_t)sizeof ch->info,
                 "the provider child did not start");
    close(ready[0]);
}

static void stop(child *ch)
{
    close(ch->quit); /* it closes its provider (removing its files) and exits */
    int st;
    cr_assert_eq(waitpid(ch->pid, &st, 0), ch->pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the provider child failed: %#x", st);
}

/* ---- a raw peer that takes descriptors --------------------------------------- */

/* Read one message whole: header in *h, payload (malloc'd) returned; a
 * descriptor that came with it in *fd (-1: none). */
static unsigned char *raw_msg(int s, pcw_ctl_header *h, int *fd)
{
    unsigned char hb[PCW_CTL_HEADER_SIZE];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } cm;
    struct iovec iov = {hb, sizeof hb};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    m.msg_control = cm.buf, m.msg_controllen = sizeof cm.buf;
    cr_assert(readable(s, 10000), "no reply");
    cr_assert_eq(recvmsg(s, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC), (ssize_t)sizeof hb);
    *fd = -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (c && c->cmsg_type == SCM_RIGHTS)
        memcpy(fd, CMSG_DATA(c), sizeof *fd);
    cr_assert_eq(pcw__ctl_get_header(hb, h), 0);
    unsigned char *pl = malloc(h->length + 1);
    if (h->length)
        cr_assert_eq(recv(s, pl, h->length, MSG_WAITALL), (ssize_t)h->length);
    return pl;
}

/* Ask for the area: its descriptor, *size its size. */
static int raw_area(int s, uint32_t id, uint32_t *size)
{
    cr_assert_eq(raw_request(s, PCW_CTL_AREA, id, NULL, 0), 0);
    pcw_ctl_header h;
    int fd;
    unsigned char *pl = raw_msg(s, &h, &fd);
    cr_assert_eq(h.type, PCW_CTL_AREA | PCW_CTL_REPLY);
    cr_assert_eq(h.status, PCW_OK);
    cr_assert_eq(h.length, 4);
    *size = (uint32_t)pcw__ctl_get_le(pl, 4);
    free(pl);
    cr_assert_geq(fd, 0, "the area's descriptor came with the reply");
    return fd;
}

/* A COLLECT of reg_index with `flags`; its reply payload, from the area
 * (mapped at `area`) if the provider answered with a completion. */
static unsigned char *raw_collect(int s, uint32_t id, uint32_t reg_index, uint32_t flags,
                                  const unsigned char *area, uint32_t *len, int *in_area)
{
    unsigned char b[64];
    size_t n = collect_payload(b, sizeof b, reg_index, flags);
    cr_assert_eq(raw_request(s, PCW_CTL_COLLECT, id, b, n), 0);
    pcw_ctl_header h;
    int fd;
    unsigned char *pl = raw_msg(s, &h, &fd);
    cr_assert_eq(fd, -1);
    cr_assert_eq(h.id, id);
    cr_assert_eq(h.status, PCW_OK);
    *in_area = (h.type & PCW_CTL_AREA_DONE) != 0;
    cr_assert_eq(h.type & ~PCW_CTL_AREA_DONE, PCW_CTL_COLLECT | PCW_CTL_REPLY);
    if (!*in_area) {
        *len = h.length;
        return pl;
    }
    cr_assert_eq(h.length, 8);
    uint32_t off = (uint32_t)pcw__ctl_get_le(pl, 4);
    *len = (uint32_t)pcw__ctl_get_le(pl + 4, 4);
    free(pl);
    cr_assert_leq((uint64_t)off + *len, PCW_CTL_AREA_BYTES);
    unsigned char *copy = malloc(*len + 1);
    memcpy(copy, area + off, *len);
    return copy;
}

/* ---- the provider's side --------------------------------------------------- */

/* The area is what docs/design.md says: a sealed memfd of the size the
 * reply names, handed over read-only, and a reply through it is, byte for
 * byte, the reply the socket carries. A reply larger than the area, and
 * one to a request without PCW_CTL_IN_AREA (a consumer of the last
 * version), goes on the socket. */
Test(control_area, area_reply_equals_socket_reply)
{
    child ch;
    spawn(&ch, NULL, 0);
    int s = raw_connect(ch.info.sock);
    cr_assert_geq(s, 0);

    /* Before any area: the flag alone changes nothing. */
    uint32_t len0, len1;
    int in;
    unsigned char *before = raw_collect(s, 1, ch.info.few, PCW_CTL_IN_AREA, NULL, &len0, &in);
    cr_assert_eq(in, 0, "no area asked for: the reply is on the socket");

    uint32_t size;
    int fd = raw_area(s, 2, &size);
    cr_assert_eq(size, PCW_CTL_AREA_BYTES);
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_assert(S_ISREG(st.st_mode));
    cr_assert_eq(st.st_size, (off_t)size);
    cr_assert_eq(st.st_mode & 07777, 0400, "owner-read-only");
    cr_assert_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
    int seals = fcntl(fd, F_GET_SEALS);
    cr_assert_eq(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
                 F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    cr_assert_eq(mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED,
                 "the consumer cannot map it for writing");
    cr_assert_eq(write(fd, "x", 1), -1);
    if (geteuid() != 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        cr_assert_eq(open(path, O_RDWR), -1, "nor reopen it for writing");
    }
    const unsigned char *area = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert_neq(area, MAP_FAILED);
    close(fd);

    unsigned char *a = raw_collect(s, 3, ch.info.few, PCW_CTL_IN_AREA, area, &len1, &in);
    cr_assert_eq(in, 1, "a reply that fits goes through the area");
    uint32_t len2;
    unsigned char *b = raw_collect(s, 4, ch.info.few, 0, area, &len2, &in);
    cr_assert_eq(in, 0, "without the flag: on the socket");
    cr_assert_eq(len1, len2);
    cr_assert_eq(len0, len2);
    cr_assert_eq(memcmp(a, b, len1), 0, "the area's reply is the socket's");
    cr_assert_eq(memcmp(before, b, len1), 0);
    free(a), free(b), free(before);

    /* Larger than the area: on the socket, whole. */
    a = raw_collect(s, 5, ch.info.many, PCW_CTL_IN_AREA, area, &len1, &in);
    cr_assert_eq(in, 0, "a reply larger than the area goes on the socket");
    cr_assert_gt(len1, PCW_CTL_AREA_BYTES);
    b = raw_collect(s, 6, ch.info.many, 0, area, &len2, &in);
    cr_assert_eq(len1, len2);
    cr_assert_eq(memcmp(a, b, len1), 0);
    free(a), free(b);

    /* One area per connection. */
    cr_assert_eq(raw_request(s, PCW_CTL_AREA, 7, NULL, 0), 0);
    pcw_ctl_header h;
    unsigned char *pl = raw_msg(s, &h, &fd);
    cr_assert_eq(fd, -1);
    cr_assert_eq(h.status, PCW_E_INVALID_PARAMETER);
    free(pl);
    munmap((void *)area, size);
    close(s);
    stop(&ch);
}

/* The provider writes the area only for a request that allows it
 * (PCW_CTL_IN_AREA): a request without the flag - a pipelined one, while
 * the consumer may still be copying the last reply out - leaves the area
 * as it was, whatever its callback adds, though the connection's reply
 * buffer (kept between requests) is the same. A reply larger than the
 * area arrives whole on the socket, byte for byte what it is without the
 * flag. */
Test(control_area, only_a_request_that_allows_it_writes_the_area)
{
    child ch;
    spawn(&ch, NULL, 0);
    int s = raw_connect(ch.info.sock);
    cr_assert_geq(s, 0);
    uint32_t size;
    int fd = raw_area(s, 1, &size);
    const unsigned char *area = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert_neq(area, MAP_FAILED);
    close(fd);

    uint32_t len, len2;
    int in;
    unsigned char *a = raw_collect(s, 2, ch.info.few, PCW_CTL_IN_AREA, area, &len, &in);
    cr_assert_eq(in, 1);
    unsigned char *kept = malloc(size);
    memcpy(kept, area, size);
    uint32_t ids[2] = {ch.info.few2, ch.info.many};
    for (int k = 0; k < 2; k++) {
        unsigned char *b = raw_collect(s, 3 + (uint32_t)k, ids[k], 0, area, &len2, &in);
        cr_assert_eq(in, 0);
        cr_assert_eq(memcmp(kept, area, size), 0, "a request without the flag wrote the area");
        free(b);
    }
    free(a);

    a = raw_collect(s, 5, ch.info.many, PCW_CTL_IN_AREA, area, &len, &in);
    cr_assert_eq(in, 0);
    unsigned char *b = raw_collect(s, 6, ch.info.many, 0, area, &len2, &in);
    cr_assert_eq(len, len2);
    cr_assert_eq(memcmp(a, b, len), 0);
    free(a), free(b), free(kept);
    munmap((void *)area, size);
    close(s);
    stop(&ch);
}

/* The provider applies the request's instance mask itself (the consumer
 * does too, so only a raw peer sees it): "*" takes every name without a
 * match, any other mask only the names it matches, case-insensitively. */
Test(control_area, provider_applies_the_instance_mask)
{
    child ch;
    spawn(&ch, NULL, 0);
    int s = raw_connect(ch.info.sock);
    cr_assert_geq(s, 0);
    const char *masks[2] = {"I1?", "*"};
    uint32_t want[2] = {10, MANY};
    for (int k = 0; k < 2; k++) {
        unsigned char b[64];
        pcw_ctl_writer w = {b, 0, sizeof b, sizeof b, 0};
        pcw__ctl_put_u32(&w, ch.info.many);
        pcw__ctl_put_u32(&w, 0);
        pcw__ctl_put_u64(&w, ~0ull);
        pcw__ctl_put_u32(&w, PCW_ANY_INSTANCE_ID);
        pcw__ctl_put_str(&w, masks[k], strlen(masks[k]));
        cr_assert_eq(raw_request(s, PCW_CTL_COLLECT, 1 + (uint32_t)k, b, w.len), 0);
        pcw_ctl_header h;
        int fd;
        unsigned char *pl = raw_msg(s, &h, &fd);
        cr_assert_eq(h.status, PCW_OK);
        pcw_ctl_reader rd = {pl, h.length, 0, 0};
        (void)pcw__ctl_get_u32(&rd);
        uint32_t count = pcw__ctl_get_u32(&rd);
        (void)pcw__ctl_get_u32(&rd), (void)pcw__ctl_get_u32(&rd);
        cr_assert_eq(count, want[k], "mask %s: %u items", masks[k], count);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t id = pcw__ctl_get_u32(&rd), n = pcw__ctl_get_u32(&rd);
            uint32_t fl = pcw__ctl_get_u32(&rd);
            const char *name = (const char *)pcw__ctl_take(&rd, n);
            cr_assert(!rd.bad && name);
            cr_assert(pcw__wildcard_match(masks[k], strlen(masks[k]), name, n), "%.*s", (int)n,
                      name);
            cr_assert(k == 1 || (id >= 10 && id <= 19), "id %u", id);
            if (fl & PCW_CTL_ITEM_DATA)
                (void)pcw__ctl_take(&rd, 8);
        }
        cr_assert(!rd.bad && rd.pos == h.length);
        free(pl);
    }
    close(s);
    stop(&ch);
}

/* A collection of `name` (n instances) as the callbacks made it: every
 * instance there, each value its own (n * 1000 + id). */
static void check_collected(const pcw_snapshot *s, const pcw_collect_report *rep, const char *name,
                            uint32_t n, int round)
{
    cr_assert_eq(rep->failed, 0, "%s: %s", name, pcw_status_str(rep->first_error));
    cr_assert_eq(s->count, n, "round %d, %s", round, name);
    for (uint32_t i = 0; i < s->count; i++) {
        uint64_t v;
        memcpy(&v, s->data + i * 8, 8);
        cr_assert_eq(v, (uint64_t)n * 1000 + s->ids[i], "round %d, %s: instance %u", round, name,
                     s->ids[i]);
    }
}

/* A consumer of this process, its provider list read. */
static pcw_consumer *open_consumer(void)
{
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    return c;
}

/* The library's collections through the area (and past it, on the socket)
 * read what the callbacks added; every connection asks once. */
Test(control_area, library_collects_through_the_area)
{
    child ch;
    spawn(&ch, NULL, 0);
    pcw_consumer *c = open_consumer();
    const char *names[2] = {"Few", "Many"};
    uint32_t want[2] = {FEW, MANY};
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < 2; k++) {
            const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, names[k]);
            cr_assert(m);
            pcw_snapshot s = PCW_SNAPSHOT_INIT;
            pcw_collect_report rep = {0};
            cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
            check_collected(&s, &rep, names[k], want[k], round);
            pcw_snapshot_free(&s);
        }
    pcw_consumer_close(c);
    stop(&ch);
}

/* Collections pipelined on one connection (pcw_consumer_collect_many: both
 * requests are sent before either reply is read) each get their own reply:
 * only one at a time may use the area, so the second reply never
 * overwrites the first before it is copied. */
Test(control_area, pipelined_collections_get_their_own_replies)
{
    child ch;
    spawn(&ch, NULL, 0);
    pcw_consumer *c = open_consumer();
    const char *names[3] = {"Few", "Few2", "Few"};
    uint32_t want[3] = {FEW, FEW2, FEW};
    for (int round = 0; round < 50; round++) {
        pcw_snapshot s[3] = {PCW_SNAPSHOT_INIT, PCW_SNAPSHOT_INIT, PCW_SNAPSHOT_INIT};
        pcw_collect_report rep[3];
        pcw_collect_item it[3];
        memset(rep, 0, sizeof rep);
        for (int k = 0; k < 3; k++) {
            it[k] = (pcw_collect_item){pcw_consumer_find_counterset(c, names[k]), NULL, &s[k], 0,
                                       &rep[k]};
            cr_assert(it[k].m);
        }
        cr_assert_eq(pcw_consumer_collect_many(c, it, 3), PCW_OK);
        for (int k = 0; k < 3; k++) {
            check_collected(&s[k], &rep[k], names[k], want[k], round);
            pcw_snapshot_free(&s[k]);
        }
    }
    pcw_consumer_close(c);
    stop(&ch);
}

/* A consumer that asks for the area, sends a COLLECT and goes without
 * reading the completion costs the provider nothing: the next consumer is
 * served. */
Test(control_area, consumer_that_leaves_mid_reply)
{
    child ch;
    spawn(&ch, NULL, 0);
    unsigned char b[64];
    size_t n = collect_payload(b, sizeof b, ch.info.few, PCW_CTL_IN_AREA);
    for (int i = 0; i < 20; i++) {
        int s = raw_connect(ch.info.sock);
        cr_assert_geq(s, 0);
        cr_assert_eq(raw_request(s, PCW_CTL_AREA, 1, NULL, 0), 0);
        for (uint32_t id = 2; id < 6; id++)
            cr_assert_eq(raw_request(s, PCW_CTL_COLLECT, id, b, n), 0);
        close(s);
    }
    int s = raw_connect(ch.info.sock);
    uint32_t size, len;
    int in, fd = raw_area(s, 1, &size);
    const unsigned char *area = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    unsigned char *a = raw_collect(s, 2, ch.info.few, PCW_CTL_IN_AREA, area, &len, &in);
    cr_assert_eq(in, 1);
    cr_assert_gt(len, 16);
    free(a);
    munmap((void *)area, size);
    close(s);
    stop(&ch);
}

/* A collection whose reply is due in the area times out (its callback
 * still runs); the next collections on that connection - sent while the
 * provider may still write the late reply to the area - get their own
 * replies, and the late one is dropped, not taken for theirs or for a
 * protocol error. Then the area serves again. */
Test(control_area, collections_after_a_timed_out_one_get_their_own_replies)
{
    int gate[2];
    cr_assert_eq(pipe2(gate, O_CLOEXEC), 0);
    slow_gate = gate[0];
    child ch;
    spawn(&ch, NULL, 0);
    close(gate[0]);
    slow_gate = -1;
    pcw_consumer *c;
    pcw_consumer_options o = {0};
    o.timeout_ms = 300;
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *few = pcw_consumer_find_counterset(c, "Few"),
                                *slow = pcw_consumer_find_counterset(c, "Slow");
    cr_assert(few && slow);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    /* The connection and its area. */
    cr_assert_eq(pcw_consumer_collect(c, few, NULL, &s, 0, &rep), PCW_OK);
    check_collected(&s, &rep, "Few", FEW, 0);
    for (int round = 1; round <= 3; round++) {
        /* Allowed the area; times out: the gate stays shut. */
        memset(&rep, 0, sizeof rep);
        pcw_consumer_collect(c, slow, NULL, &s, 0, &rep);
        cr_assert_eq(rep.failed, 1, "round %d: the slow collection did not time out", round);
        cr_assert_eq(rep.first_error, PCW_E_TIMEOUT, "round %d: %s", round,
                     pcw_status_str(rep.first_error));
        /* Let it finish: its reply goes to the area while (or before)
         * the next request is on its way. */
        cr_assert_eq(write(gate[1], "x", 1), 1);
        for (int k = 0; k < 2; k++) {
            memset(&rep, 0, sizeof rep);
            cr_assert_eq(pcw_consumer_collect(c, few, NULL, &s, 0, &rep), PCW_OK);
            check_collected(&s, &rep, "Few", FEW, round);
        }
    }
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    close(gate[1]);
    stop(&ch);
}

/* ---- hostile providers ------------------------------------------------------ */

enum {
    H_OLD,    /* a provider before the area: PCW_E_PROTOCOL to AREA, closes */
    H_RANGE,  /* a completion naming bytes past the area's end */
    H_PIPE,   /* a pipe for an area */
    H_HUGE,   /* an area larger than PCW_CTL_MAX_REPLY */
    H_NOSEAL, /* an area that may shrink under the consumer's mapping */
    H_TWOFDS, /* two descriptors */
    H_SIZE,   /* an area smaller than the reply says */
    H_CHANGE, /* an area rewritten all the time */
    H_MODES_
};

/* The hostile child writes 'A' per AREA asked, 'F' per request that let
 * it use the area (PCW_CTL_IN_AREA). */
static int h_report = -1;

/* Send b with descriptors; a consumer that hung up is found by the next
 * recv. */
static void send_fds(int s, const unsigned char *b, size_t n, const int *fds, int nfds)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(2 * sizeof(int))];
    } cm;
    memset(&cm, 0, sizeof cm);
    struct iovec iov = {(void *)b, n};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        m.msg_control = cm.buf, m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
        memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
    }
    (void)sendmsg(s, &m, MSG_NOSIGNAL);
}

static size_t put_reply(unsigned char *b, uint16_t type, uint32_t id, int32_t status,
                        const unsigned char *pl, uint32_t len)
{
    pcw_ctl_writer w = {b, 0, PCW_CTL_HEADER_SIZE + len, PCW_CTL_HEADER_SIZE + len, 0};
    pcw_ctl_header h = {PCW_CTL_MAGIC, PCW_CTL_VERSION, type, len, id, status, 0};
    pcw__ctl_put_header(&w, &h);
    pcw__ctl_put_bytes(&w, pl, len);
    return w.len;
}

/* A valid COLLECT reply of one instance ("x", id 1, value 7). */
static uint32_t one_item(unsigned char *b)
{
    pcw_ctl_writer w = {b, 0, 64, 64, 0};
    uint32_t v[7] = {0, 1, 8, 0, 1, 1, PCW_CTL_ITEM_DATA};
    for (int i = 0; i < 7; i++)
        pcw__ctl_put_u32(&w, v[i]);
    pcw__ctl_put_bytes(&w, "x", 1);
    pcw__ctl_put_u64(&w, 7);
    return (uint32_t)w.len;
}

static int memfd_of(off_t size, int seal)
{
    int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, size) != 0)
        _exit(6);
    if (seal && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
        _exit(6);
    return fd;
}

static volatile unsigned char *flip_area;

/* Rewrite the area all the time: the valid reply, then one of its bytes
 * changed, over and over, every byte and many values. */
static void *flipper(void *arg)
{
    (void)arg;
    unsigned char item[64];
    uint32_t len = one_item(item);
    for (unsigned i = 0;; i++) {
        for (uint32_t j = 0; j < len; j++)
            flip_area[j] = item[j];
        flip_area[i % len] = (unsigned char)(i * 131u >> 3);
    }
    return NULL;
}

static int h_listener = -1, h_mode;

static void *hostile_loop(void *arg);

/* Replace the provider's socket with one answered by hostile_loop, in a
 * thread of the provider's process (so the consumer's peer check passes),
 * as `mode` says. */
static void hostile_serve(child_info *ci, int mode)
{
    if (mode == H_OLD) {
        /* A provider before the area does not say it has one (white box:
         * the header is this process's to write). */
        pcw__prov *pp = (pcw__prov *)pcw__handle_get(h_provider, PCW__HANDLE_PROVIDER);
        pp->hdr->flags &= ~(uint32_t)PCW_SEG_F_AREA;
    }
    unlink(ci->sock);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(ci->sock) >= sizeof a.sun_path)
        _exit(7);
    memcpy(a.sun_path, ci->sock, strlen(ci->sock) + 1);
    h_listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    h_mode = mode;
    if (bind(h_listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(h_listener, 8) != 0)
        _exit(7);
    pthread_t t;
    if (pthread_create(&t, NULL, hostile_loop, NULL) != 0)
        _exit(7);
}

/* Serve the consumer's connections one after another. */
static void *hostile_loop(void *arg)
{
    (void)arg;
    int l = h_listener, mode = h_mode;
    static unsigned char pl[PCW_CTL_MAX_REQUEST];
    unsigned char *area = NULL;
    for (;;) {
        int s = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        if (s < 0)
            _exit(8);
        for (;;) {
            unsigned char hb[PCW_CTL_HEADER_SIZE], out[256], item[64];
            pcw_ctl_header h;
            if (recv(s, hb, sizeof hb, MSG_WAITALL) != (ssize_t)sizeof hb ||
                pcw__ctl_get_header(hb, &h) != 0 || h.length > sizeof pl ||
                (h.length && recv(s, pl, h.length, MSG_WAITALL) != (ssize_t)h.length))
                break;
            if (h.type == PCW_CTL_AREA) {
                if (write(h_report, "A", 1) != 1)
                    _exit(9);
                unsigned char sz[4];
                uint32_t size = 4096;
                int fds[2] = {-1, -1}, nfds = 1;
                switch (mode) {
                case H_OLD: {
                    size_t n = put_reply(out, PCW_CTL_REPLY, h.id, PCW_E_PROTOCOL, NULL, 0);
                    send_fds(s, out, n, NULL, 0);
                    goto drop;
                }
                case H_PIPE:
                    if (pipe(fds) != 0)
                        _exit(6);
                    break;
                case H_HUGE:
                    size = PCW_CTL_MAX_REPLY + 4096;
                    fds[0] = memfd_of(size, 1);
                    break;
                case H_NOSEAL:
                    fds[0] = memfd_of(size, 0);
                    break;
                case H_TWOFDS:
                    fds[0] = memfd_of(size, 1), fds[1] = memfd_of(size, 1), nfds = 2;
                    break;
                case H_SIZE:
                    fds[0] = memfd_of(size, 1);
                    size = 2 * 4096;
                    break;
                default:
                    fds[0] = memfd_of(size, 1);
                    area = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
                    if (area == MAP_FAILED)
                        _exit(6);
                    if (mode == H_CHANGE) {
                        flip_area = area;
                        pthread_t t;
                        pthread_create(&t, NULL, flipper, NULL);
                    }
                }
                pcw__ctl_put_le(sz, size, 4);
                size_t n = put_reply(out, PCW_CTL_AREA | PCW_CTL_REPLY, h.id, PCW_OK, sz, 4);
                send_fds(s, out, n, fds, nfds);
                continue;
            }
            if (h.type != PCW_CTL_COLLECT && h.type != PCW_CTL_ENUMERATE) {
                size_t n = put_reply(out, h.type | PCW_CTL_REPLY, h.id, PCW_OK, NULL, 0);
                send_fds(s, out, n, NULL, 0);
                continue;
            }
            uint32_t len = one_item(item);
            uint32_t flags = (uint32_t)pcw__ctl_get_le(pl + PCW_CTL_FLAGS_AT, 4);
            if ((flags & PCW_CTL_IN_AREA) && write(h_report, "F", 1) != 1)
                _exit(9);
            if (area && (flags & PCW_CTL_IN_AREA)) {
                unsigned char done[8];
                /* Out of range: far out (a read there faults), then by one
                 * byte (ASan sees it; the item is there but for its last). */
                static int ranges;
                uint32_t off = mode != H_RANGE     ? 0
                               : ranges++ % 2 == 0 ? 0x7ffff000u
                                                   : 4096 - len + 1;
                if (mode == H_RANGE)
                    memcpy(area + 4096 - len, item, len);
                else if (mode != H_CHANGE)
                    memcpy(area, item, len);
                pcw__ctl_put_le(done, off, 4);
                pcw__ctl_put_le(done + 4, len, 4);
                size_t n = put_reply(out, (uint16_t)(h.type | PCW_CTL_REPLY | PCW_CTL_AREA_DONE),
                                     h.id, PCW_OK, done, 8);
                send_fds(s, out, n, NULL, 0);
            } else {
                size_t n = put_reply(out, h.type | PCW_CTL_REPLY, h.id, PCW_OK, item, len);
                send_fds(s, out, n, NULL, 0);
            }
        }
    drop:
        close(s);
    }
    return NULL;
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Collect "Few" from a hostile child `rounds` times: each status in st[]
 * (the report's first error, or PCW_OK), its instance count in cnt[]. */
static void hostile_collects(int mode, int rounds, int *st, uint32_t *cnt, int *asked, int *flagged)
{
    int rep_pipe[2];
    cr_assert_eq(pipe2(rep_pipe, O_CLOEXEC | O_NONBLOCK), 0);
    h_report = rep_pipe[1];
    child ch;
    spawn(&ch, hostile_serve, mode);
    close(rep_pipe[1]);
    int fds0 = open_fds();
    pcw_consumer *c = open_consumer();
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Few");
    cr_assert(m);
    for (int i = 0; i < rounds; i++) {
        pcw_snapshot s = PCW_SNAPSHOT_INIT;
        pcw_collect_report rep = {0};
        cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
        st[i] = rep.failed ? rep.first_error : PCW_OK;
        cnt[i] = (uint32_t)s.count;
        if (st[i] == PCW_OK && s.count == 1) {
            uint64_t v;
            memcpy(&v, s.data, 8);
            cr_assert(mode == H_CHANGE || (v == 7 && s.ids[0] == 1));
        }
        pcw_snapshot_free(&s);
    }
    pcw_consumer_close(c);
    cr_assert_eq(open_fds(), fds0, "every descriptor handed over was closed");
    char a[512];
    ssize_t n = read(rep_pipe[0], a, sizeof a);
    *asked = *flagged = 0;
    for (ssize_t i = 0; i < n; i++)
        *asked += a[i] == 'A', *flagged += a[i] == 'F';
    close(rep_pipe[0]);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (fgets(line, sizeof line, maps))
        cr_assert_null(strstr(line, "memfd:hostile"), "an area still mapped: %s", line);
    fclose(maps);
    stop(&ch);
}

/* Collect from a hostile child of `mode` three times: the area is asked
 * for `asked` times and never used; the first collection fails with
 * `first` (the area refused closes the connection its COLLECT went on),
 * the others are served on the socket. */
static void expect_socket_replies(int mode, const char *what, int want_asked, int first)
{
    int st[3], asked, flagged;
    uint32_t cnt[3];
    hostile_collects(mode, 3, st, cnt, &asked, &flagged);
    for (int i = 0; i < 3; i++) {
        int want = i == 0 ? first : PCW_OK;
        cr_assert_eq(st[i], want, "%s, collection %d: %s", what, i, pcw_status_str(st[i]));
        cr_assert_eq(cnt[i], want == PCW_OK, "%s: read from the socket instead", what);
    }
    cr_assert_eq(asked, want_asked, "%s: asked once at most, not on every connection", what);
    cr_assert_eq(flagged, 0, "%s: never told to use an area it has not got", what);
}

/* A provider of the last version (its segment header does not have
 * PCW_SEG_F_AREA) is never asked - it would close the connection on the
 * unknown request - and its replies come on the socket. */
Test(control_area, provider_without_the_area)
{
    expect_socket_replies(H_OLD, "a provider before the area", 0, PCW_OK);
}

/* Descriptors the consumer refuses: not a sealed regular file of the
 * size the reply says, at most PCW_CTL_MAX_REPLY, one of them. Each is
 * closed, never mapped: PCW_E_PROTOCOL for the collection whose request
 * followed the AREA, and the consumer goes on without the area. */
Test(control_area, bad_area_descriptors_are_refused)
{
    int modes[] = {H_HUGE, H_PIPE, H_NOSEAL, H_TWOFDS, H_SIZE};
    const char *what[] = {"a huge area", "a pipe", "an unsealed area", "two descriptors",
                          "a smaller area than said"};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++)
        expect_socket_replies(modes[k], what[k], 1, PCW_E_PROTOCOL);
}

/* A completion naming bytes past the area's end: PCW_E_PROTOCOL. A
 * connection's first collection goes on the socket (its AREA answer comes
 * with it), the second through the area: so collections 1 and 3 are the
 * bad completions, far out and one byte past the end. */
Test(control_area, completion_outside_the_area)
{
    int st[4], asked, flagged;
    uint32_t cnt[4];
    hostile_collects(H_RANGE, 4, st, cnt, &asked, &flagged);
    for (int i = 0; i < 4; i++) {
        int want = i % 2 ? PCW_E_PROTOCOL : PCW_OK;
        cr_assert_eq(st[i], want, "collection %d: %s", i, pcw_status_str(st[i]));
        cr_assert_eq(cnt[i], want == PCW_OK);
    }
    cr_assert_eq(flagged, 2);
}

/* An area rewritten while the consumer reads it: each collection is a
 * reply (the bytes copied out once, then validated) or PCW_E_PROTOCOL,
 * never a crash or a read past the copy (ASan). */
Test(control_area, area_changing_under_the_consumer)
{
    enum { N = 200 };
    int st[N], asked, flagged;
    uint32_t cnt[N];
    hostile_collects(H_CHANGE, N, st, cnt, &asked, &flagged);
    for (int i = 0; i < N; i++) {
        cr_assert(st[i] == PCW_OK || st[i] == PCW_E_PROTOCOL, "collection %d: %s", i,
                  pcw_status_str(st[i]));
        cr_assert_leq(cnt[i], 1);
    }
    cr_assert_gt(flagged, 0, "the area was used");
}
