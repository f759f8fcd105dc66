/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pidns.c - callback countersets across pid namespaces: a
 * provider started with `unshare --pid` (and one in a user namespace too)
 * is collected by a consumer in this, the parent, namespace
 * (docs/control-channel.md, "Who may answer").
 *
 * The providers share this test's PCW_DIR (a directory both sides see);
 * finding providers through other mount namespaces is not this file's.
 * Needs root (as CI runs it) to make the namespaces.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/collect.h"
#include "pcw/consumer.h"
#include "testutil.h"

TestSuite(pidns, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* pid 1 of a new pid namespace (and its own /proc), killed if we die. */
static const char *const PIDNS[] = {"unshare",      "--pid", "--fork", "--kill-child",
                                    "--mount-proc", "--",    NULL};
/* The same in a new user namespace, root in it (as rootless runtimes). */
static const char *const USERNS[] = {"unshare",      "--user", "--map-root-user",
                                     "--pid",        "--fork", "--kill-child",
                                     "--mount-proc", "--",     NULL};

static void need_root(void)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to make pid namespaces");
}

/* callback_provider (tests/helpers) under `ns`; its segment's path in seg. */
static void spawn_provider(tu_child *c, const char *const *ns, const char *prefix, const char *base,
                           char *seg, size_t cap)
{
    const char *args[] = {prefix, base, "0", NULL};
    cr_assert_eq(tu_spawn_wrapped(c, ns, "callback_provider", args), 0);
    char line[PATH_MAX + 16];
    cr_assert_geq(tu_readline(c, line, sizeof line, 10000), 0, "the provider did not start");
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
    cr_assert_lt(strlen(line + 6), cap);
    memcpy(seg, line + 6, strlen(line + 6) + 1);
}

/* Collect "Callback Test" twice: the callback's instances PREFIX-0..2 with
 * ids BASE+i, A = 100 (i + 1), and B counting the collections. */
static void assert_collected(const char *prefix, uint32_t base)
{
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 1);
    cr_assert_eq(pcw_segment_provider(pcw_consumer_segment(c, 0))->pid, 1,
                 "the provider is pid 1 of its own namespace");
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Callback Test");
    cr_assert(m);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    for (uint64_t round = 1; round <= 2; round++) {
        pcw_collect_report rep = {0};
        cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
        cr_assert_eq(rep.failed, 0, "status %d (%s)", rep.first_error, pcw_error_detail());
        cr_assert_eq(s.count, 3);
        for (size_t i = 0; i < 3; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s-%zu", prefix, i);
            cr_assert_str_eq(pcw_snapshot_name(&s, i), name);
            cr_assert_eq(pcw_snapshot_id(&s, i), base + i);
            cr_assert_eq(pcw_snapshot_value(&s, i, &m->meta->counters[0]), 100 * (i + 1));
            cr_assert_eq(pcw_snapshot_value(&s, i, &m->meta->counters[1]), round,
                         "the callback ran for this collection");
        }
    }
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
}

Test(pidns, callback_provider_in_a_pid_namespace_is_collected)
{
    need_root();
    tu_child p;
    char seg[PATH_MAX];
    spawn_provider(&p, PIDNS, "ns", "500", seg, sizeof seg);
    assert_collected("ns", 500);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}

Test(pidns, callback_provider_in_a_user_namespace_is_collected)
{
    need_root();
    tu_child p;
    char seg[PATH_MAX];
    spawn_provider(&p, USERNS, "user", "700", seg, sizeof seg);
    assert_collected("user", 700);
    cr_assert_eq(tu_finish(&p, 5000), 0);
}
