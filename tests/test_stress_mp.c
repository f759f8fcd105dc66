/* SPDX-License-Identifier: MIT */
/*
 * tests/test_stress_mp.c - the churn stress test, across processes.
 *
 * helpers/churn_provider runs 4 threads making 1,000,000 create+close
 * operations in all over two countersets (one with a seqcount), each thread
 * keeping 64 instance slots busy, every instance's data encoding its own
 * identity (tests/conctest.h). Two helpers/snapshot_reader processes
 * snapshot it all the while and check every sample. Asserts: no sample was
 * ever misattributed, torn or half-made; the readers made progress; they
 * saw the provider exit; and memory stayed bounded - the segment's
 * header.size after 1,000,000 operations is within a small slack of its
 * size after 100,000, because slots and names are reused after their grace
 * period.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: provider.h needs it */
#include <criterion/criterion.h>

#include "conctest.h"

#define OPS      1000000
#define WARM_OPS 100000
#define NREADERS 2
/* Growth allowed after warm-up: a couple of 64-slot chunks and some names.
 * Unbounded reuse failure would add ~64 bytes per create: megabytes. */
#define SIZE_SLACK (64u * 1024)

Test(stress_mp, million_ops_churn, .timeout = 240)
{
    cr_assert_not_null(conc_private_dir());
    char prog[512], rprog[512];
    conc_helper("churn_provider", prog, sizeof prog);
    conc_helper("snapshot_reader", rprog, sizeof rprog);
    char ops[32], every[32];
    snprintf(ops, sizeof ops, "%d", OPS);
    snprintf(every, sizeof every, "%d", WARM_OPS);
    char *pargv[] = {prog, "-t", "4", "-n", ops, "-k", "64", "-r", "2", "-s", "-p", every, NULL};
    conc_lines pl = {0};
    pid_t prov = conc_spawn(pargv, &pl.fd);
    cr_assert_gt(prov, 0);

    char line[4096], path[4096];
    cr_assert_eq(conc_readline(&pl, line, sizeof line, 30), 1, "provider printed no path");
    cr_assert_eq(strncmp(line, "path ", 5), 0, "provider said: %s", line);
    snprintf(path, sizeof path, "%s", line + 5);

    pid_t rd[NREADERS];
    conc_lines rl[NREADERS];
    for (int i = 0; i < NREADERS; i++) {
        char *rargv[] = {rprog, "-p", path, "-a", "20", "-m", "200", NULL};
        memset(&rl[i], 0, sizeof rl[i]);
        rd[i] = conc_spawn(rargv, &rl[i].fd);
        cr_assert_gt(rd[i], 0);
    }

    /* Follow the provider's progress; sample header.size as it goes. */
    uint64_t warm = 0, last = 0, done = 0;
    int r;
    while ((r = conc_readline(&pl, line, sizeof line, 180)) == 1) {
        uint64_t n;
        if (sscanf(line, "ops %" SCNu64, &n) == 1) {
            uint64_t size = conc_segment_size(path);
            cr_assert_gt(size, 0, "cannot read header.size of %s", path);
            if (n == WARM_OPS)
                warm = size;
            last = size;
        } else if (sscanf(line, "done %" SCNu64, &n) == 1) {
            done = n;
        }
    }
    cr_assert_eq(r, 0, "provider stalled");
    int status;
    cr_assert(conc_wait(prov, &status, 60), "provider did not exit");
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "provider status %#x", status);
    cr_assert_eq(done, OPS, "provider made %" PRIu64 " operations", done);

    for (int i = 0; i < NREADERS; i++) {
        conc_read_stats st = {0};
        int exited = 0, have = 0;
        char viol[4096] = "";
        while (conc_readline(&rl[i], line, sizeof line, 60) == 1) {
            if (strncmp(line, "violation ", 10) == 0)
                snprintf(viol, sizeof viol, "%s", line + 10);
            have |= conc_parse_stats(line, &st, &exited);
        }
        cr_assert(conc_wait(rd[i], &status, 30), "reader %d did not exit", i);
        cr_assert(WIFEXITED(status), "reader %d died (signal %d%s)", i,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                  WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? ": a read hung" : "");
        cr_assert(have, "reader %d printed no stats", i);
        cr_assert_eq(st.violations, 0, "reader %d: %" PRIu64 " bad samples; first: %s", i,
                     st.violations, viol);
        cr_assert_eq(st.errors, 0, "reader %d: %" PRIu64 " failed reads", i, st.errors);
        cr_assert_eq(WEXITSTATUS(status), 0, "reader %d exit %d", i, WEXITSTATUS(status));
        cr_assert(exited, "reader %d never saw the provider exit", i);
        cr_assert_geq(st.snapshots, 100, "reader %d: only %" PRIu64 " snapshots", i, st.snapshots);
        cr_assert_geq(st.samples, 5000, "reader %d: only %" PRIu64 " samples", i, st.samples);
        cr_log_info("reader %d: %" PRIu64 " snapshots, %" PRIu64 " samples, %" PRIu64 " busy", i,
                    st.snapshots, st.samples, st.busy);
    }
    cr_log_info("header.size: %" PRIu64 " after %d ops, %" PRIu64 " after %d", warm, WARM_OPS, last,
                OPS);
    cr_assert_gt(warm, 0);
    cr_assert_leq(last, warm + SIZE_SLACK,
                  "segment grew from %" PRIu64 " to %" PRIu64 " bytes under steady churn", warm,
                  last);
}
