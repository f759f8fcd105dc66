/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/churn_provider.c - a provider that churns instances, for
 * test_stress_mp and test_crash.
 *
 *   churn_provider [-t threads] [-n total_ops] [-k window] [-r regs] [-s]
 *                  [-p progress_every] [-f] [-g] [-d pause_us] [-w warm_ops]
 *
 * Registers ident.0 .. ident.<regs-1> (with -s, ident.1 has a seqcount),
 * prints "path <segment>", then runs `threads` churn workers
 * (tests/conctest.h) for `total_ops` create+close operations in all, each
 * keeping `window` live instances. Prints "ops <n>" every progress_every
 * operations and "done <n>" at the end, then closes the provider.
 * -f: run until killed (ops ignored). -g: also register, fill and
 * unregister "noise" countersets with long names from the main thread, so
 * the segment keeps growing (a SIGKILL then lands in pcw_register or in
 * segment growth as often as in instance churn). -d: each worker sleeps
 * pause_us after each operation once the workers made warm_ops in all
 * (-w; a population first, then a slow churn, so that a reader sees both
 * quiet stretches and changes: test_query_churn).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <pthread.h>
#include <unistd.h>

#include "conctest.h"

#define MAX_THREADS 16
#define MAX_REGS    8

/* Register a noise counterset, give it instances with long names (growth),
 * close half, unregister every other one. */
static void grow_step(pcw_provider *p, unsigned k, pcw_registration **keep)
{
    pcw_registration *r;
    if (conc_register(&r, p, CONC_NOISE_PREFIX, k, 0) != PCW_OK)
        return;
    char name[600];
    for (unsigned i = 0; i < 40; i++) {
        pcw_instance *in;
        int n = snprintf(name, sizeof name, "noise-%u-%u-", k, i);
        memset(name + n, 'x', (size_t)(100 + (k * 37 + i * 11) % 400));
        name[n + 100 + (k * 37 + i * 11) % 400] = 0;
        if (conc_create(&in, r, (uint64_t)k * 1000 + i + 1) == PCW_OK && i % 2)
            pcw_close_instance(in);
    }
    if (*keep)
        pcw_unregister(*keep);
    *keep = k % 2 ? NULL : r;
    if (k % 2)
        pcw_unregister(r);
}

int main(int argc, char **argv)
{
    unsigned threads = 4, window = 32, nregs = 1, seq = 0, forever = 0, grow = 0;
    uint64_t ops = 100000, every = 50000;
    long pause_us = 0;
    uint64_t warm_ops = 0;
    int o;
    while ((o = getopt(argc, argv, "t:n:k:r:sp:fgd:w:")) != -1) {
        switch (o) {
        case 't':
            threads = (unsigned)atoi(optarg);
            break;
        case 'n':
            ops = strtoull(optarg, NULL, 10);
            break;
        case 'k':
            window = (unsigned)atoi(optarg);
            break;
        case 'r':
            nregs = (unsigned)atoi(optarg);
            break;
        case 's':
            seq = 1;
            break;
        case 'p':
            every = strtoull(optarg, NULL, 10);
            break;
        case 'f':
            forever = 1;
            break;
        case 'g':
            grow = 1;
            break;
        case 'd':
            pause_us = atol(optarg);
            break;
        case 'w':
            warm_ops = strtoull(optarg, NULL, 10);
            break;
        default:
            fprintf(stderr, "churn_provider: bad option\n");
            return 2;
        }
    }
    if (threads < 1 || threads > MAX_THREADS || nregs < 1 || nregs > MAX_REGS || !every)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);

    pcw_provider *p;
    int rc = pcw_provider_open(&p, NULL);
    if (rc != PCW_OK) {
        fprintf(stderr, "churn_provider: open: %s\n", pcw_status_str(rc));
        return 1;
    }
    pcw_registration *regs[MAX_REGS];
    for (unsigned i = 0; i < nregs; i++) {
        rc = conc_register(&regs[i], p, CONC_IDENT_PREFIX, i, seq && i == 1 ? PCW_REG_SEQCOUNT : 0);
        if (rc != PCW_OK) {
            fprintf(stderr, "churn_provider: register: %s\n", pcw_status_str(rc));
            return 1;
        }
    }
    printf("path %s\n", pcw_provider_path(p));

    atomic_int stop = 0;
    atomic_uint_fast64_t progress = 0;
    conc_churn ch[MAX_THREADS];
    pthread_t th[MAX_THREADS];
    for (unsigned t = 0; t < threads; t++) {
        /* Split ops so the total is exact. */
        uint64_t mine = forever ? 0 : ops / threads + (t < ops % threads);
        ch[t] = (conc_churn){.regs = regs,
                             .nregs = nregs,
                             .tid = t,
                             .nthreads = threads,
                             .window = window,
                             .ops = mine,
                             .stop = &stop,
                             .progress = &progress,
                             .pause_us = pause_us,
                             .pause_after = warm_ops / threads};
        if (!forever && mine == 0)
            ch[t].ops = 1; /* 0 would mean "until stop" */
        pthread_create(&th[t], NULL, conc_churn_thread, &ch[t]);
    }
    uint64_t next = every;
    unsigned k = 0;
    pcw_registration *keep = NULL;
    for (;;) {
        uint64_t n = atomic_load_explicit(&progress, memory_order_relaxed);
        while (n >= next) {
            printf("ops %" PRIu64 "\n", next);
            next += every;
        }
        if (!forever && n >= ops)
            break;
        if (grow)
            grow_step(p, k++, &keep);
        else {
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    atomic_store(&stop, 1);
    uint64_t total = 0;
    for (unsigned t = 0; t < threads; t++) {
        pthread_join(th[t], NULL);
        if (ch[t].error) {
            fprintf(stderr, "churn_provider: thread %u: create serial %" PRIu64 ": %s\n", t,
                    ch[t].error_serial, pcw_status_str(ch[t].error));
            return 1;
        }
        total += ch[t].done;
    }
    printf("done %" PRIu64 "\n", total);
    if (keep)
        pcw_unregister(keep);
    pcw_provider_close(p);
    return 0;
}
