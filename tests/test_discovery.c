/* SPDX-License-Identifier: MIT */
/*
 * tests/test_discovery.c - what pcw_consumer_refresh will and will not
 * pick up from the root directory: only <root>/pcw-<uid> folders that are
 * real directories owned by that uid and writable by nobody else, and in
 * them only regular, correctly owned *.seg files not starting with a dot.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "common/layout.h"
#include "pcw/provider.h"
#include "testutil.h"

#define OTHER_UID 12345u

static unsigned char *seg;
static size_t seg_len;

/* A real segment's bytes, made under a scratch root so the provider's own
 * file is gone again before the test looks. */
static void make_segment_bytes(void)
{
    char scratch[PATH_MAX];
    snprintf(scratch, sizeof scratch, "%s/scratch", tu_root);
    cr_assert_eq(mkdir(scratch, 0700), 0);
    pcw_provider_options o = {.dir = scratch, .name = "disc"};
    pcw_provider *p;
    cr_assert_eq(pcw_provider_open(&p, &o), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "N", c.size = 8;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Disc",
                                  .instance_type = PCW_SINGLE_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    uint64_t v = 5;
    pcw_data d = {&v, 8};
    pcw_instance *in;
    cr_assert_eq(pcw_create_instance(&in, r, "", 1, &d), PCW_OK);
    size_t len;
    seg = tu_read_file(pcw_provider_path(p), 1u << 20, &len);
    uint64_t size;
    memcpy(&size, seg + offsetof(pcw_seg_header, size), 8);
    seg_len = (size_t)((size + 4095) & ~4095ull);
    pcw_provider_close(p);
}

static void setup(void)
{
    tu_root_setup();
}

static void teardown(void)
{
    free(seg);
    seg = NULL;
    tu_root_teardown();
}

TestSuite(discovery, .init = setup, .fini = teardown, .timeout = 30);

/* Make <root>/<dir> (mode, owner) unless it exists; return its path. */
static const char *mkdir_in_root(const char *dir, mode_t mode, uid_t owner)
{
    static char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tu_root, dir);
    if (mkdir(path, mode) == 0) {
        cr_assert_eq(chmod(path, mode), 0);
        cr_assert_eq(chown(path, owner, owner), 0);
    }
    return path;
}

/* Put a copy of the segment at <dir>/<name>. */
static void put_segment(const char *dir, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(tu_write_file(path, seg, seg_len, 0600), 0);
}

/* Refresh a consumer (all_users as given); return the segments found and
 * set *skipped. */
static size_t found(int all_users, size_t *skipped)
{
    pcw_consumer_options o = {.all_users = all_users};
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    size_t sk = 99;
    cr_assert_eq(pcw_consumer_refresh(c, &sk), PCW_OK);
    size_t n = pcw_consumer_segment_count(c);
    pcw_consumer_close(c);
    if (skipped)
        *skipped = sk;
    return n;
}

Test(discovery, empty_root)
{
    size_t sk;
    cr_assert_eq(found(0, &sk), 0);
    cr_assert_eq(sk, 0);
    cr_assert_eq(found(1, &sk), 0);
}

Test(discovery, only_seg_files_without_dot)
{
    make_segment_bytes();
    char own[32];
    snprintf(own, sizeof own, "pcw-%u", (unsigned)geteuid());
    const char *dir = mkdir_in_root(own, 0700, geteuid());
    put_segment(dir, "100-a.seg");
    static const char *ignored[] = {"100-a.seg.bak", "100-a.txt",  "100-a.seg~",
                                    "100-a.SEG",     ".seg",       "seg",
                                    ".100-b.seg",    ".100-c.tmp", "100-a.sock"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        put_segment(dir, ignored[i]);
    size_t sk;
    cr_assert_eq(found(0, &sk), 1);
    cr_assert_eq(sk, 0, "ignored names are not even tried");
    cr_assert_eq(found(1, &sk), 1);
    cr_assert_eq(sk, 0);
}

Test(discovery, badly_named_dirs)
{
    make_segment_bytes();
    /* All owned by us, mode 0700, holding a valid segment; none is
     * pcw-<decimal uid> exactly. */
    static const char *names[] = {"pcw-abc",
                                  "pcw-",
                                  "pcw",
                                  "pcw-0x0",
                                  "pcw-+0",
                                  "pcw- 0",
                                  "pcw-00",
                                  "pcw-0-",
                                  "xpcw-0",
                                  "PCW-0",
                                  "pcw--0",
                                  "pcw-0.seg",
                                  "pcw-4294967296",
                                  "pcw-18446744073709551616"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        put_segment(mkdir_in_root(names[i], 0700, geteuid()), "1-x.seg");
    size_t sk;
    cr_assert_eq(found(1, &sk), 0);
    cr_assert_eq(sk, 0);
    cr_assert_eq(found(0, &sk), 0);
}

Test(discovery, symlinked_dir)
{
    make_segment_bytes();
    const char *real = mkdir_in_root("real", 0700, geteuid());
    put_segment(real, "1-x.seg");
    char link[PATH_MAX];
    snprintf(link, sizeof link, "%s/pcw-%u", tu_root, (unsigned)geteuid());
    cr_assert_eq(symlink(real, link), 0);
    cr_assert_eq(found(0, NULL), 0);
    cr_assert_eq(found(1, NULL), 0);
}

Test(discovery, dir_owner_must_match_name)
{
    make_segment_bytes();
    char own[32];
    snprintf(own, sizeof own, "pcw-%u", (unsigned)geteuid());
    put_segment(mkdir_in_root(own, 0700, OTHER_UID), "1-x.seg");
    char other[32];
    snprintf(other, sizeof other, "pcw-%u", OTHER_UID);
    put_segment(mkdir_in_root(other, 0700, geteuid()), "1-x.seg");
    cr_assert_eq(found(0, NULL), 0);
    cr_assert_eq(found(1, NULL), 0);
}

Test(discovery, writable_dirs)
{
    make_segment_bytes();
    char own[32];
    snprintf(own, sizeof own, "pcw-%u", (unsigned)geteuid());
    const char *dir = mkdir_in_root(own, 0700, geteuid());
    put_segment(dir, "1-x.seg");
    cr_assert_eq(found(0, NULL), 1);
    static const mode_t bad[] = {0777, 0770, 0702, 01777, 0720};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(chmod(dir, bad[i]), 0);
        cr_assert_eq(found(0, NULL), 0, "mode %o", (unsigned)bad[i]);
        cr_assert_eq(found(1, NULL), 0, "mode %o", (unsigned)bad[i]);
    }
    /* Group/other readable is fine (share_with_group makes 0750). */
    cr_assert_eq(chmod(dir, 0755), 0);
    cr_assert_eq(found(0, NULL), 1);
}

Test(discovery, all_users_finds_other_users)
{
    /* The other user's provider runs in a child that drops to OTHER_UID
     * before touching pcw (so nothing of ours is inherited half-made). */
    cr_assert_eq(chmod(tu_root, 0711), 0); /* they may pass through */
    char other[32];
    snprintf(other, sizeof other, "pcw-%u", OTHER_UID);
    mkdir_in_root(other, 0700, OTHER_UID);
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    pid_t pid = tu_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(pfd[0]);
        if (setgid(OTHER_UID) != 0 || setuid(OTHER_UID) != 0)
            _exit(2);
        pcw_provider *p;
        pcw_provider_options o = {.name = "someone else"};
        if (pcw_provider_open(&p, &o) != PCW_OK)
            _exit(3);
        pcw_counter_desc c = pcw_counter_desc_default();
        c.id = 1, c.name = "N", c.size = 8;
        pcw_registration_info info = {.version = PCW_VERSION_1,
                                      .name = "Disc",
                                      .instance_type = PCW_SINGLE_INSTANCE,
                                      .counter_count = 1,
                                      .counters = &c};
        pcw_registration *r;
        pcw_instance *in;
        uint64_t v = 9;
        pcw_data d = {&v, 8};
        if (pcw_register(&r, p, &info) != PCW_OK || pcw_create_instance(&in, r, "", 1, &d))
            _exit(4);
        /* Tell the parent we are published, then wait for it to finish. */
        char ch = 'r';
        if (write(pfd[1], &ch, 1) != 1)
            _exit(5);
        alarm(30); /* never outlive a parent that failed before killing us */
        pause();   /* until the parent kills us */
        _exit(0);
    }
    close(pfd[1]);
    char ch;
    cr_assert_eq(read(pfd[0], &ch, 1), 1, "the other user's provider did not start");
    close(pfd[0]);

    make_segment_bytes(); /* our own */
    char own[32];
    snprintf(own, sizeof own, "pcw-%u", (unsigned)geteuid());
    put_segment(mkdir_in_root(own, 0700, geteuid()), "1-mine.seg");

    cr_assert_eq(found(0, NULL), 1, "by default only our own folder");
    pcw_consumer_options o = {.all_users = 1};
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    size_t sk = 99;
    cr_assert_eq(pcw_consumer_refresh(c, &sk), PCW_OK);
    cr_assert_eq(sk, 0);
    cr_assert_eq(pcw_consumer_segment_count(c), 2);
    int saw_other = 0;
    for (size_t i = 0; i < 2; i++) {
        const pcw_provider_info *pi = pcw_segment_provider(pcw_consumer_segment(c, i));
        if (pi->uid == OTHER_UID) {
            saw_other = 1;
            cr_assert_eq(pi->pid, pid);
            cr_assert_str_eq(pi->name, "someone else");
            cr_assert_eq(pcw_segment_alive(pcw_consumer_segment(c, i)), PCW_OK);
        }
    }
    cr_assert(saw_other);
    /* Same-named sets of both users merge. */
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "disc");
    cr_assert_not_null(m);
    cr_assert_eq(m->source_count, 2);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_consumer_read(c, m, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 2);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

Test(discovery, skipped_count)
{
    make_segment_bytes();
    char own[32];
    snprintf(own, sizeof own, "pcw-%u", (unsigned)geteuid());
    const char *d = mkdir_in_root(own, 0700, geteuid());
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", d);
    put_segment(dir, "1-good.seg");
    seg[0] ^= 0xFF; /* bad magic */
    put_segment(dir, "2-bad.seg");
    seg[0] ^= 0xFF;
    put_segment(dir, "3-foreign.seg");
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/3-foreign.seg", dir);
    cr_assert_eq(chown(path, OTHER_UID, OTHER_UID), 0);
    snprintf(path, sizeof path, "%s/4-short.seg", dir);
    cr_assert_eq(tu_write_file(path, seg, 64, 0600), 0);

    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    size_t sk = 0;
    cr_assert_eq(pcw_consumer_refresh(c, &sk), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 1);
    cr_assert_eq(sk, 3);
    /* Every refresh retries them, and counts them again. */
    cr_assert_eq(pcw_consumer_refresh(c, &sk), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 1);
    cr_assert_eq(sk, 3);
    /* Fixed or gone: no longer skipped. */
    snprintf(path, sizeof path, "%s/2-bad.seg", dir);
    cr_assert_eq(tu_write_file(path, seg, seg_len, 0600), 0);
    snprintf(path, sizeof path, "%s/3-foreign.seg", dir);
    cr_assert_eq(unlink(path), 0);
    snprintf(path, sizeof path, "%s/4-short.seg", dir);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(pcw_consumer_refresh(c, &sk), PCW_OK);
    cr_assert_eq(sk, 0);
    cr_assert_eq(pcw_consumer_segment_count(c), 2);
    pcw_consumer_close(c);
}
