/* SPDX-License-Identifier: MIT */
/*
 * tests/test_control.c - the control channel's edges: the wire helpers,
 * the wildcard matcher callbacks use, malformed and truncated requests sent
 * straight to a provider's socket, and peers that must be refused (a
 * stranger uid, by the filesystem and by SO_PEERCRED; an impostor
 * listening in the provider's place).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <grp.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "testutil.h"

TestSuite(control, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* ---- wire helpers -------------------------------------------------------- */

Test(control, writer_reader_roundtrip_and_bounds)
{
    pcw_ctl_writer w = {NULL, 0, 0, 64, 0};
    pcw__ctl_put_u16(&w, 0xBEEF);
    pcw__ctl_put_u32(&w, 0x01020304u);
    pcw__ctl_put_u64(&w, 0x1122334455667788ull);
    pcw__ctl_put_str(&w, "héllo", strlen("héllo"));
    cr_assert_eq(w.bad, 0);
    cr_assert_eq(w.buf[2], 0x04, "little-endian on the wire");
    pcw_ctl_reader r = {w.buf, w.len, 0, 0};
    cr_assert_eq(pcw__ctl_get_u16(&r), 0xBEEF);
    cr_assert_eq(pcw__ctl_get_u32(&r), 0x01020304u);
    cr_assert_eq(pcw__ctl_get_u64(&r), 0x1122334455667788ull);
    uint32_t n;
    const char *s = pcw__ctl_get_str(&r, 100, &n);
    cr_assert(s && n == strlen("héllo") && memcmp(s, "héllo", n) == 0);
    cr_assert_eq(r.pos, w.len);
    cr_assert_eq(pcw__ctl_get_u32(&r), 0);
    cr_assert_eq(r.bad, 1, "reading past the end is caught");
    /* A string longer than allowed, or than the buffer. */
    pcw_ctl_reader r2 = {w.buf, w.len, 14, 0};
    cr_assert_null(pcw__ctl_get_str(&r2, 3, &n));
    cr_assert(r2.bad);
    unsigned char lie[8] = {0xFF, 0xFF, 0xFF, 0x7F, 'a'};
    pcw_ctl_reader r3 = {lie, sizeof lie, 0, 0};
    cr_assert_null(pcw__ctl_get_str(&r3, UINT32_MAX, &n));
    cr_assert(r3.bad);
    /* The writer's limit. */
    unsigned char big[100] = {0};
    pcw__ctl_put_bytes(&w, big, sizeof big);
    cr_assert(w.bad);
    pcw__ctl_writer_free(&w);
    /* Header checks. */
    pcw_ctl_writer h = {NULL, 0, 0, 64, 0};
    pcw_ctl_header hd = {PCW_CTL_MAGIC, PCW_CTL_VERSION, PCW_CTL_PING, 0, 7, 0, 0}, out;
    pcw__ctl_put_header(&h, &hd);
    cr_assert_eq(h.len, PCW_CTL_HEADER_SIZE);
    cr_assert_eq(pcw__ctl_get_header(h.buf, &out), 0);
    cr_assert_eq(out.id, 7);
    h.buf[4] = 2; /* version */
    cr_assert_neq(pcw__ctl_get_header(h.buf, &out), 0);
    pcw__ctl_writer_free(&h);
    /* Counter masks: bit 63 covers the rest. */
    cr_assert(pcw__ctl_counter_selected(1, 0));
    cr_assert(!pcw__ctl_counter_selected(1, 1));
    cr_assert(pcw__ctl_counter_selected(1ull << 63, 63));
    cr_assert(pcw__ctl_counter_selected(1ull << 63, 4000));
    cr_assert(!pcw__ctl_counter_selected(~0ull >> 1, 64));
}

/* ---- the wildcard matcher -------------------------------------------------- */

static int wm(const char *p, const char *n)
{
    return pcw__wildcard_match(p, strlen(p), n, strlen(n));
}

Test(control, wildcard_matcher)
{
    /* "*" and the empty name */
    cr_assert(wm("*", ""));
    cr_assert(wm("*", "anything"));
    cr_assert(wm("", ""));
    cr_assert(!wm("", "a"));
    cr_assert(!wm("?", ""));
    cr_assert(wm("**", ""));
    /* case-insensitive, also beyond ASCII */
    cr_assert(wm("small wave", "Small Wave"));
    cr_assert(wm("SMALL*", "small wave"));
    cr_assert(wm("ÉTÉ", "été"));
    cr_assert(wm("привет", "ПРИВЕТ"));
    cr_assert(!wm("small", "smalls"));
    /* '?' is one character, also a multi-byte one */
    cr_assert(wm("?", "é"));
    cr_assert(wm("a?c", "abc"));
    cr_assert(!wm("a?c", "ac"));
    cr_assert(!wm("a?c", "abbc"));
    cr_assert(wm("??", "日本"));
    cr_assert(!wm("???", "日本"));
    /* runs of '*', backtracking */
    cr_assert(wm("a***b", "ab"));
    cr_assert(wm("a*b*c", "aXbYbZc"));
    cr_assert(!wm("a*b*c", "aXbYbZ"));
    cr_assert(wm("*a*a*a*", "banana a"));
    cr_assert(wm("*?", "x"));
    cr_assert(!wm("*?", ""));
    cr_assert(wm("*ab", "aab"));
    cr_assert(wm("*aab", "aaab"));
    cr_assert(!wm("*x*", "abc"));
    /* invalid UTF-8 never matches */
    cr_assert(!wm("*", "\xC3\x28"));
    cr_assert(!wm("\xC3\x28", "\xC3\x28"));
    /* long names, hostile patterns: no recursion, bounded time */
    static char name[4097], pat[4097];
    memset(name, 'a', 4096);
    memset(pat, '*', 4096);
    pat[4094] = 'b', pat[4095] = '*';
    cr_assert(!wm(pat, name));
    for (int i = 0; i < 4096; i += 2)
        pat[i] = 'A', pat[i + 1] = '*';
    cr_assert(wm(pat, name));
    name[4095] = 'b';
    memset(pat, 0, sizeof pat);
    memset(pat, '?', 4095);
    pat[4095] = 'B';
    cr_assert(wm(pat, name));
    pat[4094] = 0;
    cr_assert(!wm(pat, name));
}

/* ---- a provider in this process ------------------------------------------- */

static int cb(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint64_t v = 5;
    pcw_data d = {&v, sizeof v};
    return pcw_add_instance(info->buffer, "one", 1, 1, &d);
}

typedef struct env {
    pcw_provider *prov;
    pcw_registration *reg;
    char sock[PATH_MAX];
} env;

static void env_open(env *e, const pcw_provider_options *o)
{
    cr_assert_eq(pcw_provider_open(&e->prov, o), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Ctl",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c,
                                  .callback = cb};
    cr_assert_eq(pcw_register(&e->reg, e->prov, &info), PCW_OK);
    snprintf(e->sock, sizeof e->sock, "%s", pcw_provider_path(e->prov));
    strcpy(e->sock + strlen(e->sock) - strlen(PCW_SEG_SUFFIX), PCW_SOCK_SUFFIX);
    struct stat st;
    cr_assert_eq(lstat(e->sock, &st), 0);
    cr_assert(S_ISSOCK(st.st_mode));
    cr_assert_eq(st.st_mode & 0777, o && o->share_with_group ? 0660 : 0600);
}

static void env_close(env *e)
{
    pcw_unregister(e->reg);
    pcw_provider_close(e->prov);
    cr_assert_eq(access(e->sock, F_OK), -1, "the socket goes with the provider");
}

/* A normal consumer still gets served. */
static void assert_serves(void)
{
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Ctl");
    cr_assert(m);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0, "status %d", rep.first_error);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(pcw_snapshot_value(&s, 0, &m->meta->counters[0]), 5);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
}

static struct sockaddr_un addr_of(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    cr_assert_lt(n, sizeof a.sun_path, "test root path too long for sun_path");
    memcpy(a.sun_path, path, n + 1);
    return a;
}

static int raw_connect(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = addr_of(path);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Read one message header (and skip its payload). 0 or -1 (EOF). */
static int raw_read(int fd, pcw_ctl_header *h)
{
    unsigned char b[PCW_CTL_HEADER_SIZE];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t r = recv(fd, b + got, sizeof b - got, 0);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    if (pcw__ctl_get_header(b, h) != 0)
        return -2;
    for (uint32_t left = h->length; left;) {
        char skip[512];
        ssize_t r = recv(fd, skip, left < sizeof skip ? left : sizeof skip, 0);
        if (r <= 0)
            return -1;
        left -= (uint32_t)r;
    }
    return 0;
}

static void raw_send(int fd, const void *b, size_t n)
{
    cr_assert_eq(send(fd, b, n, MSG_NOSIGNAL), (ssize_t)n);
}

static size_t header(unsigned char *b, uint16_t type, uint32_t len, uint32_t id)
{
    pcw_ctl_writer w = {b, 0, PCW_CTL_HEADER_SIZE, PCW_CTL_HEADER_SIZE, 0};
    pcw_ctl_header h = {PCW_CTL_MAGIC, PCW_CTL_VERSION, type, len, id, 0, 0};
    pcw__ctl_put_header(&w, &h);
    return w.len;
}

/* Expect a PCW_E_PROTOCOL reply, then the end of the connection. */
static void expect_protocol_then_eof(int fd, const char *what)
{
    pcw_ctl_header h;
    cr_assert_eq(raw_read(fd, &h), 0, "%s: a reply", what);
    cr_assert_eq(h.status, PCW_E_PROTOCOL, "%s: status %d", what, h.status);
    cr_assert_eq(raw_read(fd, &h), -1, "%s: then EOF", what);
    close(fd);
}

Test(control, malformed_and_truncated_requests)
{
    env e;
    env_open(&e, NULL);
    unsigned char b[256];
    /* An idle connection that never sends anything must not block others. */
    int idle = raw_connect(e.sock);
    cr_assert_geq(idle, 0);
    /* A good request first: PING. */
    int fd = raw_connect(e.sock);
    raw_send(fd, b, header(b, PCW_CTL_PING, 0, 1));
    pcw_ctl_header h;
    cr_assert_eq(raw_read(fd, &h), 0);
    cr_assert_eq(h.type, PCW_CTL_PING | PCW_CTL_REPLY);
    cr_assert_eq(h.id, 1);
    cr_assert_eq(h.status, PCW_OK);
    close(fd);

    /* Bad magic. */
    fd = raw_connect(e.sock);
    header(b, PCW_CTL_PING, 0, 2);
    b[0] ^= 0xFF;
    raw_send(fd, b, PCW_CTL_HEADER_SIZE);
    expect_protocol_then_eof(fd, "magic");
    /* Unknown version. */
    fd = raw_connect(e.sock);
    header(b, PCW_CTL_PING, 0, 2);
    b[4] = 99;
    raw_send(fd, b, PCW_CTL_HEADER_SIZE);
    expect_protocol_then_eof(fd, "version");
    /* Oversized length. */
    fd = raw_connect(e.sock);
    raw_send(fd, b, header(b, PCW_CTL_COLLECT, PCW_CTL_MAX_REQUEST + 1, 3));
    expect_protocol_then_eof(fd, "length");
    /* Unknown type. */
    fd = raw_connect(e.sock);
    raw_send(fd, b, header(b, 77, 0, 4));
    expect_protocol_then_eof(fd, "type");
    /* A reply sent as a request. */
    fd = raw_connect(e.sock);
    raw_send(fd, b, header(b, PCW_CTL_PING | PCW_CTL_REPLY, 0, 4));
    expect_protocol_then_eof(fd, "reply type");
    /* Payload too short for its type. */
    fd = raw_connect(e.sock);
    size_t n = header(b, PCW_CTL_COLLECT, 4, 5);
    memset(b + n, 0, 4);
    raw_send(fd, b, n + 4);
    expect_protocol_then_eof(fd, "short payload");
    /* Trailing bytes after a complete payload. */
    fd = raw_connect(e.sock);
    n = header(b, PCW_CTL_COLLECT_END, 5, 6);
    memset(b + n, 0, 5);
    raw_send(fd, b, n + 5);
    expect_protocol_then_eof(fd, "trailing");
    /* A string length that lies. */
    fd = raw_connect(e.sock);
    pcw_ctl_writer w = {b, 0, sizeof b, sizeof b, 0};
    pcw_ctl_header hh = {PCW_CTL_MAGIC, PCW_CTL_VERSION, PCW_CTL_ENUMERATE, 0, 7, 0, 0};
    pcw__ctl_put_header(&w, &hh);
    pcw__ctl_put_u32(&w, 0), pcw__ctl_put_u32(&w, 0), pcw__ctl_put_u64(&w, ~0ull);
    pcw__ctl_put_u32(&w, PCW_ANY_INSTANCE_ID), pcw__ctl_put_u32(&w, 1000);
    pcw__ctl_put_bytes(&w, "*", 1);
    pcw__ctl_patch_length(&w, 0);
    raw_send(fd, b, w.len);
    expect_protocol_then_eof(fd, "string length");
    /* Unknown flags. */
    fd = raw_connect(e.sock);
    w.len = 0;
    pcw__ctl_put_header(&w, &hh);
    pcw__ctl_put_u32(&w, 0), pcw__ctl_put_u32(&w, 0x80), pcw__ctl_put_u64(&w, ~0ull);
    pcw__ctl_put_u32(&w, PCW_ANY_INSTANCE_ID), pcw__ctl_put_str(&w, "*", 1);
    pcw__ctl_patch_length(&w, 0);
    raw_send(fd, b, w.len);
    expect_protocol_then_eof(fd, "flags");
    /* Truncated header, then the client goes. */
    fd = raw_connect(e.sock);
    raw_send(fd, b, 10);
    close(fd);
    /* Truncated payload, then the client goes. */
    fd = raw_connect(e.sock);
    raw_send(fd, b, header(b, PCW_CTL_COLLECT, 100, 8) + 20);
    close(fd);
    /* Unknown counterset: an error reply, and the connection stays. */
    fd = raw_connect(e.sock);
    w.len = 0;
    pcw__ctl_put_header(&w, &hh);
    pcw__ctl_put_u32(&w, 12345), pcw__ctl_put_u32(&w, 0), pcw__ctl_put_u64(&w, ~0ull);
    pcw__ctl_put_u32(&w, PCW_ANY_INSTANCE_ID), pcw__ctl_put_str(&w, "*", 1);
    pcw__ctl_patch_length(&w, 0);
    raw_send(fd, b, w.len);
    cr_assert_eq(raw_read(fd, &h), 0);
    cr_assert_eq(h.status, PCW_E_NOT_FOUND);
    raw_send(fd, b, header(b, PCW_CTL_PING, 0, 9));
    cr_assert_eq(raw_read(fd, &h), 0);
    cr_assert_eq(h.status, PCW_OK);
    close(fd);
    /* Random garbage, many times. */
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 200; round++) {
        fd = raw_connect(e.sock);
        cr_assert_geq(fd, 0);
        size_t len = 1 + round % 200;
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            b[i] = (unsigned char)x;
        }
        if (round % 3 == 0) /* a valid header in front of garbage */
            header(b, (uint16_t)(1 + round % 6), (uint32_t)(len > 24 ? len - 24 : 0), 1);
        send(fd, b, len, MSG_NOSIGNAL);
        close(fd);
    }
    assert_serves();
    close(idle);
    assert_serves();
    env_close(&e);
}

/* ---- refused peers --------------------------------------------------------- */

/* In a child that drops to uid/gid 65534 (and the given supplementary
 * groups): connect, send PING, report. 0 served, 1 refused by the
 * provider (PCW_E_PERMISSION), 2 connect failed with EACCES, 3 other. */
static int stranger_ping(const char *sock, const gid_t *groups, size_t ngroups)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (setgroups(ngroups, groups) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
            _exit(10);
        int fd = raw_connect(sock);
        if (fd < 0)
            _exit(errno == EACCES ? 2 : 3);
        unsigned char b[PCW_CTL_HEADER_SIZE];
        header(b, PCW_CTL_PING, 0, 1);
        send(fd, b, sizeof b, MSG_NOSIGNAL);
        pcw_ctl_header h;
        if (raw_read(fd, &h) != 0)
            _exit(4);
        if (h.type == PCW_CTL_REFUSED && h.status == PCW_E_PERMISSION)
            _exit(raw_read(fd, &h) == -1 ? 1 : 5);
        _exit(h.status == PCW_OK ? 0 : 6);
    }
    int st;
    waitpid(pid, &st, 0);
    cr_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

Test(control, stranger_is_refused)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to become another user");
    env e;
    env_open(&e, NULL);
    /* The normal case: the directories keep strangers out altogether. */
    cr_assert_eq(chmod(tu_root, 0755), 0);
    cr_assert_eq(stranger_ping(e.sock, NULL, 0), 2);
    /* Simulate a permission mistake that lets the stranger reach the
     * socket: the credential check alone must refuse it. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", e.sock);
    *strrchr(dir, '/') = 0;
    cr_assert_eq(chmod(dir, 0711), 0);
    cr_assert_eq(chmod(e.sock, 0666), 0);
    cr_assert_eq(stranger_ping(e.sock, NULL, 0), 1);
    assert_serves();
    env_close(&e);
}

Test(control, group_opt_in)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to become another user");
    const gid_t G = 54321; /* a group nobody else is in */
    pcw_provider_options o = {.share_with_group = 1, .group = G};
    env e;
    env_open(&e, &o);
    struct stat st;
    cr_assert_eq(lstat(e.sock, &st), 0);
    cr_assert_eq(st.st_gid, G);
    cr_assert_eq(chmod(tu_root, 0755), 0);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", e.sock);
    *strrchr(dir, '/') = 0;
    /* The provider directory belongs to root's group; let the group's
     * members traverse it (as a deployment would with a shared group). */
    cr_assert_eq(chmod(dir, 0751), 0);
    gid_t in[1] = {G};
    cr_assert_eq(stranger_ping(e.sock, in, 1), 0, "a member of the opted-in group is served");
    cr_assert_eq(stranger_ping(e.sock, NULL, 0), 2, "others cannot even connect");
    /* And if the socket were world-writable, credentials still decide. */
    cr_assert_eq(chmod(e.sock, 0666), 0);
    cr_assert_eq(stranger_ping(e.sock, NULL, 0), 1);
    env_close(&e);
}

/* Someone else listening where the provider's socket should be: the
 * consumer must refuse to talk to it (SO_PEERCRED pid check). */
Test(control, impostor_provider_is_refused)
{
    env e;
    env_open(&e, NULL);
    cr_assert_eq(unlink(e.sock), 0);
    int ready[2];
    cr_assert_eq(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = addr_of(e.sock);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0)
            _exit(1);
        if (write(ready[1], "y", 1) != 1)
            _exit(1);
        for (;;) {
            int c = accept(fd, NULL, NULL);
            unsigned char b[PCW_CTL_HEADER_SIZE];
            if (c >= 0 && recv(c, b, sizeof b, 0) > 0)
                header(b, 0, 0, 0); /* never answers properly */
        }
    }
    char y;
    cr_assert_eq(read(ready[0], &y, 1), 1);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Ctl");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    long long t0 = tu_now_ms();
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_lt(tu_now_ms() - t0, 500, "refused at once, no waiting");
    cr_assert_eq(rep.first_error, PCW_E_PERMISSION);
    cr_assert_eq(s.count, 0);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlink(e.sock);
    pcw_unregister(e.reg);
    pcw_provider_close(e.prov);
}
