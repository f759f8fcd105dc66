/* SPDX-License-Identifier: MIT */
/*
 * tests/test_crossproc.c - real provider processes (tests/helpers/
 * provider_child) read by this process as a consumer: values and metadata
 * across the process boundary, merging of same-named countersets, the
 * generation counter, clean exit, SIGKILL and pid reuse.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "common/layout.h"
#include "testutil.h"

TestSuite(crossproc, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

static void spawn(tu_child *c, char *path, size_t cap, const char *const *args)
{
    cr_assert_eq(tu_spawn_provider(c, args, path, cap), 0, "provider_child did not start");
}

/* Close its stdin and check it closed its provider and exited cleanly
 * (an ASan report in the child makes it exit non-zero). */
static void finish_ok(tu_child *c)
{
    int st = tu_finish(c, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "provider_child status %#x", st);
}

static const pcw_counter *counter_named(const pcw_counterset *cs, const char *name)
{
    for (uint32_t i = 0; i < cs->counter_count; i++)
        if (strcmp(cs->counters[i].name, name) == 0)
            return &cs->counters[i];
    return NULL;
}

Test(crossproc, values_and_metadata)
{
    tu_child c;
    char path[PATH_MAX];
    const char *args[] = {"--set", "Cross Set", "--instances", "50", "--value-base",
                          "1000",  "--name",    "childprov",   NULL};
    spawn(&c, path, sizeof path, args);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    const pcw_provider_info *pi = pcw_segment_provider(seg);
    cr_assert_eq(pi->pid, c.pid);
    cr_assert_eq(pi->uid, geteuid());
    cr_assert_str_eq(pi->name, "childprov");
    cr_assert_str_eq(pi->path, path);
    cr_assert_eq(pcw_segment_alive(seg), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "cross SET");
    cr_assert_not_null(cs);
    cr_assert_str_eq(cs->name, "Cross Set");
    cr_assert_str_eq(cs->description, "Counters published by provider_child");
    cr_assert_eq(cs->instance_type, PCW_MULTI_INSTANCE);
    cr_assert_eq(cs->counter_count, 2);
    const pcw_counter *v = counter_named(cs, "Value"), *ix = counter_named(cs, "Index");
    cr_assert(v && ix);
    cr_assert_eq(v->id, 1);
    cr_assert_eq(v->type, PERF_COUNTER_LARGE_RAWCOUNT);
    cr_assert_eq(v->size, 8);
    cr_assert_str_eq(v->description, "The value");
    cr_assert_eq(ix->id, 2);
    cr_assert_eq(ix->type, PERF_COUNTER_RAWCOUNT);
    cr_assert_eq(ix->size, 4);
    cr_assert_str_eq(ix->description, "The instance number");
    cr_assert_eq(ix->detail_level, PCW_DETAIL_STANDARD);
    cr_assert_eq(ix->base_id, PCW_NO_COUNTER);

    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 50);
    int seen[50] = {0};
    for (size_t i = 0; i < s.count; i++) {
        size_t x = i;
        int k;
        cr_assert_eq(sscanf(pcw_snapshot_name(&s, x), "inst%d", &k), 1);
        cr_assert(k >= 0 && k < 50 && !seen[k]);
        seen[k] = 1;
        cr_assert_eq(pcw_snapshot_value(&s, x, v), 1000 + (uint64_t)k);
        cr_assert_eq(pcw_snapshot_value(&s, x, ix), (uint64_t)k);
        cr_assert_eq(pcw_snapshot_id(&s, x), (uint32_t)k, "ids are handed out lowest first");
    }
    /* A value the child changes is what we read next. */
    char reply[256];
    cr_assert_geq(tu_command(&c, reply, sizeof reply, "set inst7 99999"), 0);
    cr_assert_str_eq(reply, "ok");
    cr_assert_eq(pcw_segment_read_instance(seg, cs, 7, &s, 0), PCW_OK);
    cr_assert_eq(pcw_snapshot_value(&s, 0, v), 99999);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    finish_ok(&c);
}

Test(crossproc, merged_across_providers)
{
    tu_child a, b, x;
    char pa[PATH_MAX], pb[PATH_MAX], px[PATH_MAX];
    const char *aa[] = {"--set", "Shared", "--instances", "3", "--value-base", "100", NULL};
    const char *ab[] = {"--set", "SHARED", "--instances", "4", "--value-base", "200", NULL};
    const char *ax[] = {"--set", "shared", "--instances", "5", "--alt", NULL};
    spawn(&a, pa, sizeof pa, aa);
    spawn(&b, pb, sizeof pb, ab);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    size_t skipped = 99;
    cr_assert_eq(pcw_consumer_refresh(c, &skipped), PCW_OK);
    cr_assert_eq(skipped, 0);
    cr_assert_eq(pcw_consumer_segment_count(c), 2);
    /* The mismatching provider arrives last: the set's layout is already
     * decided by those before it and must not flip. */
    spawn(&x, px, sizeof px, ax);
    cr_assert_eq(pcw_consumer_refresh(c, &skipped), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 3);
    cr_assert_eq(pcw_consumer_counterset_count(c), 1);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Shared");
    cr_assert_not_null(m);
    cr_assert_eq(m->source_count, 2);
    cr_assert_eq(m->mismatched, 1);
    cr_assert_not_null(counter_named(m->meta, "Value"));
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    size_t failed = 99;
    cr_assert_eq(pcw_consumer_read(c, m, &s, 0, &failed), PCW_OK);
    cr_assert_eq(failed, 0);
    cr_assert_eq(s.count, 7);
    const pcw_counter *v = counter_named(m->meta, "Value");
    uint32_t src_a = UINT32_MAX, src_b = UINT32_MAX;
    for (size_t i = 0; i < s.count; i++) {
        size_t p = i;
        uint64_t val = pcw_snapshot_value(&s, p, v);
        pcw_segment *seg = pcw_consumer_segment(c, pcw_snapshot_source_of(&s, p)->source);
        cr_assert_not_null(seg);
        const char *sp = pcw_segment_provider(seg)->path;
        if (val >= 200) {
            cr_assert_str_eq(sp, pb);
            src_b = pcw_snapshot_source_of(&s, p)->source;
        } else {
            cr_assert(val >= 100 && val < 103);
            cr_assert_str_eq(sp, pa);
            src_a = pcw_snapshot_source_of(&s, p)->source;
        }
    }
    cr_assert_neq(src_a, src_b, "samples of different providers have different sources");
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish_ok(&a);
    finish_ok(&b);
    finish_ok(&x);
}

Test(crossproc, generation_follows_instances)
{
    tu_child c;
    char path[PATH_MAX], reply[256];
    const char *args[] = {"--instances", "1", NULL};
    spawn(&c, path, sizeof path, args);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    const pcw_counterset *cs = pcw_segment_counterset(seg, 0);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    uint64_t g0 = pcw_segment_generation(seg);
    cr_assert_neq(g0, 0);
    cr_assert_geq(tu_command(&c, reply, sizeof reply, "create extra 5"), 0);
    cr_assert_str_eq(reply, "ok 1");
    uint64_t g1 = pcw_segment_generation(seg);
    cr_assert_neq(g1, g0, "create must change the generation");
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 2);
    /* A value change is not a list change. */
    cr_assert_geq(tu_command(&c, reply, sizeof reply, "set extra 6"), 0);
    cr_assert_eq(pcw_segment_generation(seg), g1);
    cr_assert_geq(tu_command(&c, reply, sizeof reply, "create EXTRA 5"), 0);
    cr_assert_str_eq(reply, "err -9", "duplicate name across processes' view: %s", reply);
    cr_assert_eq(pcw_segment_generation(seg), g1, "a failed create changes nothing");
    cr_assert_geq(tu_command(&c, reply, sizeof reply, "close extra"), 0);
    cr_assert_str_eq(reply, "ok");
    uint64_t g2 = pcw_segment_generation(seg);
    cr_assert_neq(g2, g1, "close must change the generation");
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 1);
    cr_assert_str_eq(pcw_snapshot_name(&s, 0), "inst0");
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    finish_ok(&c);
}

Test(crossproc, clean_exit_removes_segment)
{
    tu_child c;
    char path[PATH_MAX], reply[64];
    const char *args[] = {"--instances", "2", NULL};
    spawn(&c, path, sizeof path, args);
    pcw_consumer *con;
    cr_assert_eq(pcw_consumer_open(&con, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(con, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(con), 1);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    cr_assert_eq(tu_send(&c, "quit"), 0);
    cr_assert_eq(tu_readline(&c, reply, sizeof reply, 10000), -1, "EOF after quit");
    finish_ok(&c);
    cr_assert_eq(access(path, F_OK), -1, "segment removed on close");
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED);
    pcw_segment_close(seg);
    cr_assert_eq(pcw_consumer_refresh(con, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(con), 0);
    cr_assert_eq(pcw_consumer_counterset_count(con), 0);
    pcw_consumer_close(con);
}

Test(crossproc, sigkill_leaves_stale_segment)
{
    tu_child c;
    char path[PATH_MAX];
    const char *args[] = {"--instances", "2", "--seqcount", NULL};
    spawn(&c, path, sizeof path, args);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    cr_assert_eq(pcw_segment_alive(seg), PCW_OK);
    cr_assert_eq(kill(c.pid, SIGKILL), 0);
    int st;
    cr_assert_eq(waitpid(c.pid, &st, 0), c.pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    close(c.in), close(c.out);
    cr_assert_eq(access(path, F_OK), 0, "a killed provider leaves its file");
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED);
    /* Its data is still readable. */
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, pcw_segment_counterset(seg, 0), &s, 0), PCW_OK);
    cr_assert_eq(s.count, 2);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    pcw_consumer *con;
    cr_assert_eq(pcw_consumer_open(&con, NULL), PCW_OK);
    size_t removed = 99;
    cr_assert_eq(pcw_consumer_remove_stale(con, &removed), PCW_OK);
    cr_assert_eq(removed, 1);
    cr_assert_eq(access(path, F_OK), -1);
    cr_assert_eq(pcw_consumer_refresh(con, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(con), 0);
    pcw_consumer_close(con);
}

Test(crossproc, zombie_counts_as_exited)
{
    tu_child c;
    char path[PATH_MAX];
    const char *args[] = {"--instances", "1", NULL};
    spawn(&c, path, sizeof path, args);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    cr_assert_eq(kill(c.pid, SIGKILL), 0);
    /* Not reaped yet: wait until it is a zombie (waitid with WNOWAIT leaves
     * it one). */
    siginfo_t si;
    memset(&si, 0, sizeof si);
    cr_assert_eq(waitid(P_PID, (id_t)c.pid, &si, WEXITED | WNOWAIT), 0);
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED);
    pcw_segment_close(seg);
    tu_finish(&c, 10000); /* reaps the SIGKILLed child */
}

/* Copy the segment at src into the provider dir under a new name, with its
 * header's pid and start_time replaced. */
static void forge(const char *src, const char *dst, int32_t pid, uint64_t start_time)
{
    size_t len;
    unsigned char *b = tu_read_file(src, 1u << 20, &len);
    cr_assert(b && len >= sizeof(pcw_seg_header));
    memcpy(b + offsetof(pcw_seg_header, pid), &pid, sizeof pid);
    memcpy(b + offsetof(pcw_seg_header, start_time), &start_time, sizeof start_time);
    cr_assert_eq(tu_write_file(dst, b, len, 0600), 0);
    free(b);
}

/* Liveness is the segment's liveness lock (pcw/naming.h), never the
 * header's pid: that is the pid in the provider's own namespace, so a live
 * pid with the right start time proves nothing, and a pid that does not
 * exist here does not prove death. */
Test(crossproc, liveness_is_the_lock_not_the_pid)
{
    tu_child c;
    char path[PATH_MAX], forged[PATH_MAX + 32];
    const char *args[] = {"--instances", "1", NULL};
    spawn(&c, path, sizeof path, args);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    uint64_t child_start = pcw_segment_provider(seg)->start_time;
    cr_assert_neq(child_start, 0);
    cr_assert_eq(pcw_segment_alive(seg), PCW_OK, "the child holds its lock");
    pcw_segment_close(seg);
    /* A copy with our own (live) pid and start time: nobody holds its
     * lock, so nobody is behind it. */
    char stat_path[64], buf[1024];
    snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", getpid());
    size_t n = 0;
    unsigned char *raw = tu_read_file(stat_path, sizeof buf - 1, &n);
    cr_assert_not_null(raw, "cannot read %s", stat_path);
    memcpy(buf, raw, n);
    buf[n] = 0;
    free(raw);
    char *p = strrchr(buf, ')') + 1;
    for (int field = 2; field < 22 && *p; p++)
        if (*p == ' ')
            field++;
    snprintf(forged, sizeof forged, "%s/%d-forged.seg", tu_provider_dir(geteuid()), getpid());
    forge(path, forged, getpid(), strtoull(p, NULL, 10));
    cr_assert_eq(pcw_segment_open(&seg, forged), PCW_OK);
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED, "a live pid proves nothing");
    pcw_segment_close(seg);
    /* A pid that cannot exist here, its lock held (as by a provider in
     * another pid namespace): alive. */
    forge(path, forged, 0x7FFFFFF0, child_start);
    int held = open(forged, O_RDONLY | O_CLOEXEC);
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    cr_assert_eq(fcntl(held, F_OFD_SETLK, &l), 0);
    cr_assert_eq(pcw_segment_open(&seg, forged), PCW_OK);
    cr_assert_eq(pcw_segment_alive(seg), PCW_OK, "an absent pid proves nothing");
    pcw_segment_close(seg);
    pcw_consumer *con;
    cr_assert_eq(pcw_consumer_open(&con, NULL), PCW_OK);
    size_t removed = 0;
    cr_assert_eq(pcw_consumer_remove_stale(con, &removed), PCW_OK);
    cr_assert_eq(removed, 0);
    /* Let go: remove_stale takes the forged one, not the live child's. */
    close(held);
    cr_assert_eq(pcw_consumer_remove_stale(con, &removed), PCW_OK);
    cr_assert_eq(removed, 1);
    cr_assert_eq(access(forged, F_OK), -1);
    cr_assert_eq(access(path, F_OK), 0);
    pcw_consumer_close(con);
    finish_ok(&c);
}

Test(crossproc, single_instance_and_seqcount_child)
{
    tu_child c;
    char path[PATH_MAX];
    const char *args[] = {"--set", "Solo", "--single", "--seqcount", "--value-base", "77", NULL};
    spawn(&c, path, sizeof path, args);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "solo");
    cr_assert_not_null(cs);
    cr_assert_eq(cs->instance_type, PCW_SINGLE_INSTANCE);
    cr_assert(cs->flags & PCW_CSET_F_SEQCOUNT);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(pcw_snapshot_name_len(&s, 0), 0);
    cr_assert_eq(pcw_snapshot_value(&s, 0, counter_named(cs, "Value")), 77);
    pcw_snapshot_free(&s);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_segment_close(seg);
    finish_ok(&c);
}
