/* SPDX-License-Identifier: MIT */
/*
 * tests/conc_threads.c - provider and consumer threads in one process.
 *
 * Provider threads create and close instances concurrently (on one and on
 * two registrations, while other countersets are registered and
 * unregistered) and a seqcount instance is rewritten continuously; consumer
 * threads, each with its own pcw_segment on the provider's file, snapshot
 * all the while and check every sample's identity (tests/conctest.h).
 *
 * Also built and run under TSan (make check-tsan): TSan sees the provider's
 * own synchronisation (free lists, chunk table, name table, deferred
 * reclaim) and the consumer library's per-thread state. It cannot see the
 * provider/consumer ordering through the segment, because the two map the
 * file at different addresses: that is what the identity checks are for.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: provider.h needs it */
#include <pthread.h>

#include "conctest.h"

/* Fewer operations under TSan, which is 5-15x slower. */
#if defined(__SANITIZE_THREAD__)
#define SCALE 10
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SCALE 10
#endif
#endif
#ifndef SCALE
#define SCALE 20
#endif

#define NREADERS 2

#define CONC_EQ(a, b, ...) CONC_ASSERT((a) == (b), __VA_ARGS__)
#define CONC_NN(a, ...)    CONC_ASSERT((a) != NULL, __VA_ARGS__)
#define CONC_LE(a, b, ...) CONC_ASSERT((a) <= (b), __VA_ARGS__)
#define CONC_GE(a, b, ...) CONC_ASSERT((a) >= (b), __VA_ARGS__)
#define CONC_GT(a, b, ...) CONC_ASSERT((a) > (b), __VA_ARGS__)

typedef struct reader {
    pthread_t th;
    const char *path;
    atomic_int *stop;
    int open_rc;
    conc_read_stats st;
    atomic_uint_fast64_t progress; /* st.samples, for other threads to poll */
} reader;

static void *reader_main(void *arg)
{
    reader *r = (reader *)arg;
    pcw_segment *seg = NULL;
    r->open_rc = pcw_segment_open(&seg, r->path);
    if (r->open_rc != PCW_OK)
        return NULL;
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    /* At least one pass after the writers stopped, so a fast run still
     * reads something. */
    int last = 0;
    while (!last) {
        last = atomic_load(r->stop);
        conc_read_once(seg, &snap, &r->st);
        atomic_store_explicit(&r->progress, r->st.samples, memory_order_relaxed);
    }
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    return NULL;
}

static void start_readers(reader *rd, const char *path, atomic_int *stop)
{
    for (int i = 0; i < NREADERS; i++) {
        memset(&rd[i], 0, sizeof rd[i]);
        rd[i].path = path;
        rd[i].stop = stop;
        CONC_EQ(pthread_create(&rd[i].th, NULL, reader_main, &rd[i]), 0);
    }
}

/* Join the readers and assert they read a lot and saw nothing wrong. */
static void finish_readers(reader *rd, uint64_t min_samples)
{
    for (int i = 0; i < NREADERS; i++) {
        pthread_join(rd[i].th, NULL);
        conc_read_stats *st = &rd[i].st;
        CONC_EQ(rd[i].open_rc, PCW_OK, "reader %d: open: %s", i, pcw_status_str(rd[i].open_rc));
        CONC_EQ(st->violations, 0, "reader %d: %" PRIu64 " bad samples of %" PRIu64 "; first: %s",
                i, st->violations, st->samples, st->first_violation);
        CONC_EQ(st->errors, 0, "reader %d: %" PRIu64 " failed reads, last %s", i, st->errors,
                pcw_status_str(st->last_error));
        CONC_GE(st->samples, min_samples, "reader %d: only %" PRIu64 " samples", i, st->samples);
    }
}

static pcw_provider *open_provider(void)
{
    CONC_NN(conc_private_dir());
    pcw_provider *p = NULL;
    CONC_EQ(pcw_provider_open(&p, NULL), PCW_OK);
    return p;
}

/* nthreads churners over regs[0..nregs), ops each; readers throughout. */
static void churn_and_read(pcw_provider *p, pcw_registration **regs, unsigned nregs,
                           unsigned nthreads, uint64_t ops, unsigned window)
{
    atomic_int stop = 0;
    reader rd[NREADERS];
    start_readers(rd, pcw_provider_path(p), &stop);
    conc_churn ch[8];
    pthread_t th[8];
    CONC_LE(nthreads, 8);
    for (unsigned t = 0; t < nthreads; t++) {
        ch[t] = (conc_churn){.regs = regs,
                             .nregs = nregs,
                             .tid = t,
                             .nthreads = nthreads,
                             .window = window,
                             .ops = ops};
        CONC_EQ(pthread_create(&th[t], NULL, conc_churn_thread, &ch[t]), 0);
    }
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        CONC_EQ(ch[t].error, PCW_OK, "churn thread %u: create of serial %" PRIu64 ": %s", t,
                ch[t].error_serial, pcw_status_str(ch[t].error));
        CONC_EQ(ch[t].done, ops);
    }
    atomic_store(&stop, 1);
    finish_readers(rd, 100);
}

static void one_registration(void)
{
    pcw_provider *p = open_provider();
    pcw_registration *r;
    CONC_EQ(conc_register(&r, p, CONC_IDENT_PREFIX, 0, 0), PCW_OK);
    churn_and_read(p, &r, 1, 4, 10000 * SCALE, 16);
    pcw_unregister(r);
    pcw_provider_close(p);
}

static void two_registrations_one_seqcount(void)
{
    pcw_provider *p = open_provider();
    pcw_registration *r[2];
    CONC_EQ(conc_register(&r[0], p, CONC_IDENT_PREFIX, 0, 0), PCW_OK);
    CONC_EQ(conc_register(&r[1], p, CONC_IDENT_PREFIX, 1, PCW_REG_SEQCOUNT), PCW_OK);
    churn_and_read(p, r, 2, 4, 10000 * SCALE, 16);
    pcw_unregister(r[0]);
    pcw_unregister(r[1]);
    pcw_provider_close(p);
}

/* ---- registration churn beside instance churn ---------------------------- */

typedef struct regchurn {
    pcw_provider *p;
    atomic_int *stop;
    unsigned rounds;
    int error;
} regchurn;

/* Register a counterset, give it instances, close them, unregister; again.
 * Odd rounds register ident countersets, so readers check instances of a
 * counterset that comes and goes; even rounds plain noise. */
static void *regchurn_main(void *arg)
{
    regchurn *g = (regchurn *)arg;
    uint64_t serial = 1;
    while (!atomic_load(g->stop)) {
        unsigned k = 100 + g->rounds;
        pcw_registration *r;
        int rc = conc_register(&r, g->p, g->rounds & 1 ? CONC_IDENT_PREFIX : CONC_NOISE_PREFIX, k,
                               g->rounds % 4 == 1 ? PCW_REG_SEQCOUNT : 0);
        if (rc != PCW_OK) {
            g->error = rc;
            break;
        }
        pcw_instance *in[4] = {0};
        for (int i = 0; i < 4 && rc == PCW_OK; i++)
            rc = conc_create(&in[i], r, serial++);
        for (int i = 0; i < 4; i++)
            if (in[i] && i % 2)
                pcw_close_instance(in[i]);
        /* Leave half the instances for pcw_unregister to close. */
        pcw_unregister(r);
        if (rc != PCW_OK) {
            g->error = rc;
            break;
        }
        g->rounds++;
    }
    return NULL;
}

static void register_unregister_while_churning(void)
{
    pcw_provider *p = open_provider();
    pcw_registration *r;
    CONC_EQ(conc_register(&r, p, CONC_IDENT_PREFIX, 0, 0), PCW_OK);
    atomic_int stop = 0;
    regchurn g = {.p = p, .stop = &stop};
    pthread_t gt;
    CONC_EQ(pthread_create(&gt, NULL, regchurn_main, &g), 0);
    churn_and_read(p, &r, 1, 3, 8000 * SCALE, 16);
    atomic_store(&stop, 1);
    pthread_join(gt, NULL);
    CONC_EQ(g.error, PCW_OK, "register/unregister: %s", pcw_status_str(g.error));
    CONC_GT(g.rounds, 10, "only %u register/unregister rounds", g.rounds);
    pcw_unregister(r);
    pcw_provider_close(p);
}

/* ---- seqcount: all counters from one moment ------------------------------ */

typedef struct moment_writer {
    pcw_instance *in[2];
    atomic_int *stop;
    uint64_t iterations;
} moment_writer;

static void *moment_main(void *arg)
{
    moment_writer *m = (moment_writer *)arg;
    while (!atomic_load(m->stop)) {
        uint64_t it = ++m->iterations;
        for (int k = 0; k < 2; k++) {
            uint64_t *w = (uint64_t *)pcw_instance_block(m->in[k], 0);
            pcw_instance_write_begin(m->in[k]);
            for (int i = 0; i < CONC_WORDS; i++)
                pcw_u64_set(&w[i], it);
            pcw_instance_write_end(m->in[k]);
        }
    }
    return NULL;
}

static void seqcount_reads_one_moment(void)
{
    pcw_provider *p = open_provider();
    pcw_registration *r;
    CONC_EQ(conc_register(&r, p, CONC_MOMENT_PREFIX, 0, PCW_REG_SEQCOUNT), PCW_OK);
    moment_writer m = {0};
    atomic_int stop = 0;
    m.stop = &stop;
    pcw_data d = {(uint64_t[CONC_WORDS]){0}, 8 * CONC_WORDS};
    CONC_EQ(pcw_create_instance(&m.in[0], r, "m0", 1, &d), PCW_OK);
    CONC_EQ(pcw_create_instance(&m.in[1], r, "m1", 1, &d), PCW_OK);
    pthread_t wt;
    CONC_EQ(pthread_create(&wt, NULL, moment_main, &m), 0);

    /* Readers here run until they have many samples; the writer never
     * pauses, so each sample had to pass the seqcount retry. */
    reader rd[NREADERS];
    atomic_int rstop = 0;
    start_readers(rd, pcw_provider_path(p), &rstop);
    double deadline = conc_now() + 30;
    uint64_t want = 2000 * SCALE;
    for (;;) {
        uint64_t got = UINT64_MAX;
        for (int i = 0; i < NREADERS; i++) {
            uint64_t s = atomic_load_explicit(&rd[i].progress, memory_order_relaxed);
            got = s < got ? s : got;
        }
        if (got >= want || conc_now() > deadline)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&rstop, 1);
    atomic_store(&stop, 1);
    pthread_join(wt, NULL);
    finish_readers(rd, want);
    CONC_GT(m.iterations, 1000);
    pcw_unregister(r);
    pcw_provider_close(p);
}

int main(void)
{
    static const conc_test tests[] = {
        {"one_registration", one_registration, 120},
        {"two_registrations_one_seqcount", two_registrations_one_seqcount, 120},
        {"register_unregister_while_churning", register_unregister_while_churning, 120},
        {"seqcount_reads_one_moment", seqcount_reads_one_moment, 120},
    };
    return conc_run("conc_threads", tests, sizeof tests / sizeof tests[0]);
}
