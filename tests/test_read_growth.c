/* SPDX-License-Identifier: MIT */
/*
 * tests/test_read_growth.c - regression test (found by bench/lifecycle.c):
 * a consumer reading a counterset while its provider, in another process,
 * keeps adding instances (so new slot chunks and names are appended to the
 * segment) must never get PCW_E_CORRUPT. A chunk linked after the reader
 * loaded header.size lies past that size; that is growth, not corruption.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

#define CREATES 200000

/* Child: register, report the segment path, create CREATES instances,
 * report "done", wait for the parent to close the pipe. */
static void grow_child(int to_parent, int from_parent)
{
    pcw_provider *p;
    pcw_registration *r;
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "v";
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .name = "Growth",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = 1,
                                .counters = &c};
    int rc;
    if ((rc = pcw_provider_open(&p, NULL)) != PCW_OK || (rc = pcw_register(&r, p, &ri)) != PCW_OK) {
        fprintf(stderr, "grow_child: open/register: %s\n", pcw_status_str(rc));
        _exit(1);
    }
    dprintf(to_parent, "%s\n", pcw_provider_path(p));
    char name[32];
    pcw_data d = {NULL, 8};
    for (int i = 0; i < CREATES; i++) {
        pcw_instance *in;
        snprintf(name, sizeof name, "growing-instance-%d", i);
        if ((rc = pcw_create_instance(&in, r, name, 1, &d)) != PCW_OK) {
            /* Say why: a failure here (seen once, in a package build on a
             * loaded machine) is otherwise only an exit status. */
            fprintf(stderr, "grow_child: instance %d: %s\n", i, pcw_status_str(rc));
            _exit(2);
        }
    }
    dprintf(to_parent, "done\n");
    char b;
    while (read(from_parent, &b, 1) > 0) {
    }
    pcw_provider_close(p);
    _exit(0);
}

Test(read_growth, no_corruption_while_the_provider_grows, .init = tu_root_setup,
     .fini = tu_root_teardown, .timeout = 60)
{
    int up[2], down[2];
    cr_assert_eq(pipe(up), 0);
    cr_assert_eq(pipe(down), 0);
    pid_t pid = tu_fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(up[0]), close(down[1]);
        grow_child(up[1], down[0]);
    }
    close(up[1]), close(down[0]);
    FILE *f = fdopen(up[0], "r");
    char path[4096];
    cr_assert_not_null(fgets(path, sizeof path, f));
    path[strcspn(path, "\n")] = 0;

    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Growth");
    cr_assert_not_null(cs);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    size_t reads = 0, last = 0;
    struct pollfd pfd = {.fd = up[0], .events = POLLIN};
    for (;;) {
        int rc = pcw_segment_read(seg, cs, &s, 0);
        cr_assert_eq(rc, PCW_OK, "read %zu (after %zu instances): %s (%s)", reads, last,
                     pcw_status_str(rc), seg->why);
        cr_assert_geq(s.count, last, "instances are only added");
        last = s.count;
        reads++;
        if (poll(&pfd, 1, 0) > 0)
            break; /* "done" */
    }
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, CREATES);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    fclose(f);
    close(down[1]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
