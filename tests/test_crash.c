/* SPDX-License-Identifier: MIT */
/*
 * tests/test_crash.c - a provider killed with SIGKILL at random points.
 *
 * Each round starts helpers/churn_provider (instance churn on two threads;
 * every other round also registering, filling and unregistering countersets
 * with long names from its main thread, so the segment keeps growing) and a
 * helpers/snapshot_reader that discovers it through pcw_consumer and checks
 * every sample. After a random 0-200 ms the provider gets SIGKILL: in
 * pcw_provider_open, pcw_register, segment growth or instance churn,
 * wherever it happens to be. Asserts, every round:
 *   - the reader neither crashed nor hung (it exits by itself, normally,
 *     within a deadline; each of its passes runs under alarm()),
 *   - it saw no bad sample and no failed read, and reported the provider
 *     exited if a segment had appeared;
 *   - the test's own pcw_segment_open of the dead segment works and
 *     pcw_segment_alive says PCW_E_PROVIDER_EXITED;
 *   - pcw_consumer_remove_stale removes it.
 * The seed is printed; PCW_CRASH_SEED=<n> replays a run.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: provider.h needs it */
#include <criterion/criterion.h>
#include <dirent.h>

#include "conctest.h"

#define ROUNDS 20

/* Segment files (and leftover temporaries) in the provider directory. */
static size_t list_segments(const char *dir, char paths[][600], size_t cap, size_t *tmps)
{
    size_t n = 0;
    *tmps = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' && len > 4 && strcmp(e->d_name + len - 4, ".tmp") == 0)
            (*tmps)++;
        else if (len > 4 && strcmp(e->d_name + len - 4, PCW_SEG_SUFFIX) == 0 && n < cap)
            snprintf(paths[n++], 600, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

Test(crash, sigkill_at_random_points, .timeout = 240)
{
    const char *root = conc_private_dir();
    cr_assert_not_null(root);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/pcw-%u", root, (unsigned)geteuid());
    const char *env = getenv("PCW_CRASH_SEED");
    unsigned seed =
        env ? (unsigned)strtoul(env, NULL, 10) : (unsigned)time(NULL) ^ (unsigned)getpid();
    cr_log_info("PCW_CRASH_SEED=%u", seed);
    srand(seed);
    char prog[512], rprog[512];
    conc_helper("churn_provider", prog, sizeof prog);
    conc_helper("snapshot_reader", rprog, sizeof rprog);
    size_t with_segment = 0, leftover_tmps = 0;

    for (int round = 0; round < ROUNDS; round++) {
        char *pargv[] = {prog, "-t", "2",  "-k", "32",         "-r",
                         "2",  "-s", "-f", "-p", "1000000000", round % 2 ? "-g" : NULL,
                         NULL};
        int pout;
        pid_t prov = conc_spawn(pargv, &pout);
        cr_assert_gt(prov, 0);
        char pidbuf[32];
        snprintf(pidbuf, sizeof pidbuf, "%d", (int)prov);
        char *rargv[] = {rprog, "-d", "-P", pidbuf, "-a", "10", "-m", "60", NULL};
        conc_lines rl = {0};
        pid_t rd = conc_spawn(rargv, &rl.fd);
        cr_assert_gt(rd, 0);

        struct timespec ts = {0, (long)(rand() % 201) * 1000 * 1000};
        nanosleep(&ts, NULL);
        cr_assert_eq(kill(prov, SIGKILL), 0);
        int status;
        cr_assert(conc_wait(prov, &status, 10), "round %d: provider not reaped", round);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "round %d: provider ended otherwise (%#x)", round, status);
        close(pout);

        /* The reader notices the exit by itself: no signal from us. */
        conc_read_stats st = {0};
        int exited = 0, have = 0;
        char line[4096], viol[4096] = "";
        while (conc_readline(&rl, line, sizeof line, 45) == 1) {
            if (strncmp(line, "violation ", 10) == 0 || strncmp(line, "error ", 6) == 0)
                snprintf(viol, sizeof viol, "%s", line);
            have |= conc_parse_stats(line, &st, &exited);
        }
        close(rl.fd);
        int rstatus;
        int reaped = conc_wait(rd, &rstatus, 15);
        if (!reaped)
            kill(rd, SIGKILL), waitpid(rd, &rstatus, 0);
        cr_assert(reaped, "round %d: the reader hung after the provider died", round);
        cr_assert(WIFEXITED(rstatus), "round %d: the reader died of signal %d%s", round,
                  WTERMSIG(rstatus), WTERMSIG(rstatus) == SIGALRM ? " (a read hung)" : "");
        cr_assert(have, "round %d: reader printed no stats", round);
        cr_assert_eq(st.violations + st.errors, 0, "round %d: %s", round, viol);
        cr_assert_eq(WEXITSTATUS(rstatus), 0, "round %d: reader exit %d", round,
                     WEXITSTATUS(rstatus));

        char segs[4][600];
        size_t tmps;
        size_t n = list_segments(dir, segs, 4, &tmps);
        cr_assert_leq(n, 1, "round %d: %zu segments", round, n);
        leftover_tmps += tmps;
        if (n) {
            with_segment++;
            cr_assert_eq(exited, 1, "round %d: reader did not report the provider exited", round);
            pcw_segment *seg;
            int rc = pcw_segment_open(&seg, segs[0]);
            cr_assert_eq(rc, PCW_OK, "round %d: open dead segment: %s", round, pcw_status_str(rc));
            cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED, "round %d", round);
            char why[256] = "";
            rc = pcw_segment_check(seg, why, sizeof why);
            cr_assert_eq(rc, PCW_OK, "round %d: dead segment fails its check: %s", round, why);
            pcw_segment_close(seg);
        }
        pcw_consumer *c;
        cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
        size_t removed = 0;
        cr_assert_eq(pcw_consumer_remove_stale(c, &removed), PCW_OK);
        pcw_consumer_close(c);
        /* Stale segments and the temporary files of providers killed inside
         * pcw_provider_open are both removed. */
        cr_assert_eq(removed, n + tmps, "round %d: removed %zu of %zu stale files", round, removed,
                     n + tmps);
        cr_assert_eq(list_segments(dir, segs, 4, &tmps), 0, "round %d: a segment is left", round);
        cr_assert_eq(tmps, 0, "round %d: a temporary file is left", round);
    }
    cr_log_info("%zu of %d rounds had a segment; %zu temporary files were left by providers "
                "killed before publishing one, and removed",
                with_segment, ROUNDS, leftover_tmps);
    cr_assert_geq(with_segment, ROUNDS / 4, "the provider rarely got to publish a segment");
}
