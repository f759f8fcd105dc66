/* SPDX-License-Identifier: MIT */
/*
 * tests/control_area_sized.h - a provider program built with its own reply
 * area size (PCW_CTL_AREA_BYTES, lib/provider/control.c) serves N callback
 * instances through three collections, each checked value by value. The
 * including test defines PCW_CTL_AREA_BYTES and N before it, and
 * PCW_PROVIDER_IMPLEMENTATION (test_control_area_small.c, _large.c).
 *
 * Real processes: the provider is a child of the test (tu_fork), the
 * consumer the test's process, through the library.
 */
#ifndef PCW_TESTS_CONTROL_AREA_SIZED_H
#define PCW_TESTS_CONTROL_AREA_SIZED_H

#include <sys/wait.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "testutil.h"

static int adds(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    for (uint32_t i = 0; i < N; i++) {
        char name[16];
        uint64_t v = 1000 + i;
        pcw_data d = {&v, sizeof v};
        snprintf(name, sizeof name, "i%u", i);
        int rc = pcw_add_instance(info->buffer, name, i, 1, &d);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

/* The provider child, three collections of its N instances, its exit. */
static void collections_work(void)
{
    int ready[2], quit[2];
    cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(quit, O_CLOEXEC), 0);
    pid_t pid = tu_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(ready[0]), close(quit[1]);
        pcw_provider *p;
        pcw_provider_options o = {0};
        if (pcw_provider_open(&p, &o) != PCW_OK)
            _exit(2);
        pcw_counter_desc c = pcw_counter_desc_default();
        c.id = 1, c.name = "V";
        pcw_registration_info info = {.version = PCW_VERSION_1,
                                      .name = "Sized",
                                      .instance_type = PCW_MULTI_INSTANCE,
                                      .counter_count = 1,
                                      .counters = &c,
                                      .callback = adds};
        pcw_registration *r;
        if (pcw_register(&r, p, &info) != PCW_OK)
            _exit(3);
        if (write(ready[1], "r", 1) != 1)
            _exit(4);
        char b;
        while (read(quit[0], &b, 1) > 0)
            ;
        pcw_provider_close(p);
        _exit(0);
    }
    close(ready[1]), close(quit[0]);
    char b;
    cr_assert_eq(read(ready[0], &b, 1), 1, "the provider child did not start");
    close(ready[0]);

    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Sized");
    cr_assert(m);
    /* The first collection asks for the area; the next ones may use it. */
    for (int round = 0; round < 3; round++) {
        pcw_snapshot s = PCW_SNAPSHOT_INIT;
        pcw_collect_report rep = {0};
        cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
        cr_assert_eq(rep.failed, 0, "round %d: %s", round, pcw_status_str(rep.first_error));
        cr_assert_eq(s.count, N, "round %d", round);
        for (uint32_t i = 0; i < s.count; i++) {
            uint64_t v;
            memcpy(&v, s.data + i * 8, 8);
            cr_assert_eq(v, 1000 + (uint64_t)s.ids[i], "round %d: instance %u", round, s.ids[i]);
        }
        pcw_snapshot_free(&s);
    }
    pcw_consumer_close(c);

    close(quit[1]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the provider child failed: %#x", st);
}

#endif
