/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/snapshot_reader.c - a consumer process that snapshots
 * continuously and checks every sample (tests/conctest.h), for
 * test_stress_mp and test_crash.
 *
 *   snapshot_reader -p SEGMENT        read one segment until its provider
 *                                     has exited (closed or died)
 *   snapshot_reader -d -P PID         discover segments in $PCW_DIR with
 *                                     pcw_consumer; read those of PID until
 *                                     it has exited (or never made one and
 *                                     is gone)
 *   [-a SECONDS]  each pass must finish within this (alarm: a hang kills us
 *                 with SIGALRM, which the test sees); default 10
 *   [-m SECONDS]  give up after this long (exit 3); default 120
 *
 * Last line: "stats snapshots S samples N violations V busy B errors E
 * exited X" (X = 1 if pcw_segment_alive reported PCW_E_PROVIDER_EXITED).
 * Exit 0 if no violation, 1 if any (the first is printed), 2 on bad
 * arguments, 3 on timeout.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "conctest.h"

static conc_read_stats st;
static int exited;

static void report(void)
{
    if (st.violations)
        printf("violation %s\n", st.first_violation);
    if (st.errors)
        printf("error %s\n", pcw_status_str(st.last_error));
    printf("stats snapshots %" PRIu64 " samples %" PRIu64 " violations %" PRIu64 " busy %" PRIu64
           " errors %" PRIu64 " exited %d\n",
           st.snapshots, st.samples, st.violations, st.busy, st.errors, exited);
    fflush(stdout);
}

/* Follow one segment file until its provider is gone. */
static int follow_segment(const char *path, unsigned pass_s, double end)
{
    pcw_segment *seg;
    int rc = pcw_segment_open(&seg, path);
    if (rc != PCW_OK) {
        fprintf(stderr, "snapshot_reader: open %s: %s\n", path, pcw_status_str(rc));
        return 2;
    }
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    while (conc_now() < end) {
        /* Decide before the pass, so the pass after the exit is read too. */
        int gone = pcw_segment_alive(seg) == PCW_E_PROVIDER_EXITED;
        alarm(pass_s);
        conc_read_once(seg, &snap, &st);
        alarm(0);
        if (gone) {
            exited = 1;
            break;
        }
    }
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    return exited ? 0 : 3;
}

/* Discover PID's segments through pcw_consumer and read them. */
static int follow_pid(pid_t pid, unsigned pass_s, double end)
{
    pcw_consumer *c;
    int rc = pcw_consumer_open(&c, NULL);
    if (rc != PCW_OK) {
        fprintf(stderr, "snapshot_reader: consumer: %s\n", pcw_status_str(rc));
        return 2;
    }
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    int done = 0;
    while (!done && conc_now() < end) {
        /* Is the provider gone (reaped)? Then this is the last pass. */
        int reaped = kill(pid, 0) != 0 && errno == ESRCH;
        alarm(pass_s);
        rc = pcw_consumer_refresh(c, NULL);
        if (rc != PCW_OK)
            st.errors++, st.last_error = rc;
        for (size_t i = 0; i < pcw_consumer_segment_count(c); i++) {
            pcw_segment *seg = pcw_consumer_segment(c, i);
            if (pcw_segment_provider(seg)->pid != pid)
                continue;
            int gone = pcw_segment_alive(seg) == PCW_E_PROVIDER_EXITED;
            conc_read_once(seg, &snap, &st);
            if (gone)
                exited = 1, done = 1;
        }
        alarm(0);
        if (reaped)
            done = 1;
    }
    pcw_snapshot_free(&snap);
    pcw_consumer_close(c);
    return done ? 0 : 3;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    pid_t pid = 0;
    int discover = 0;
    unsigned pass_s = 10, max_s = 120;
    int o;
    while ((o = getopt(argc, argv, "p:dP:a:m:")) != -1) {
        switch (o) {
        case 'p':
            path = optarg;
            break;
        case 'd':
            discover = 1;
            break;
        case 'P':
            pid = (pid_t)atoi(optarg);
            break;
        case 'a':
            pass_s = (unsigned)atoi(optarg);
            break;
        case 'm':
            max_s = (unsigned)atoi(optarg);
            break;
        default:
            return 2;
        }
    }
    if (discover ? pid <= 0 : !path)
        return 2;
    double end = conc_now() + max_s;
    int rc = discover ? follow_pid(pid, pass_s, end) : follow_segment(path, pass_s, end);
    report();
    if (rc != 0)
        return rc;
    return st.violations ? 1 : 0;
}
