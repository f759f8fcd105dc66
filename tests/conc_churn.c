/* SPDX-License-Identifier: MIT */
/*
 * tests/conc_churn.c - slot and name reuse under readers, in one process.
 *
 * Four provider threads each keep only four instances open and close and
 * recreate them as fast as they can, so every slot and every name block is
 * reused thousands of times, each time after a grace period. Two consumer
 * threads snapshot all the while. Asserts:
 *   - every sample passes the identity check (tests/conctest.h): a read
 *     that raced with a reuse was discarded, never returned mixed;
 *   - reuse really happened under the readers: they saw the same id carry
 *     different instances (serials) over time;
 *   - the ids stay small and header.size stays put after warm-up: slots and
 *     names are recycled, not leaked.
 * Also built and run under TSan (see conc_threads.c for what TSan can and
 * cannot see here).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: provider.h needs it */
#include <pthread.h>

#include "conctest.h"

#if defined(__SANITIZE_THREAD__)
#define OPS_PER_THREAD 60000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OPS_PER_THREAD 60000
#endif
#endif
#ifndef OPS_PER_THREAD
#define OPS_PER_THREAD 250000
#endif
#define NTHREADS 4
#define WINDOW   4
#define MAX_IDS  4096

typedef struct reuse_reader {
    pthread_t th;
    const char *path;
    atomic_int *stop;
    int open_rc;
    conc_read_stats st;
    uint64_t last_serial[MAX_IDS]; /* per id, the serial last seen there */
    uint64_t reuse_seen, max_id;
} reuse_reader;

static void *reuse_main(void *arg)
{
    reuse_reader *r = (reuse_reader *)arg;
    pcw_segment *seg;
    r->open_rc = pcw_segment_open(&seg, r->path);
    if (r->open_rc != PCW_OK)
        return NULL;
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, CONC_IDENT_PREFIX ".0");
    int last = 0;
    while (cs && !last) {
        last = atomic_load(r->stop);
        int rc = pcw_segment_read(seg, cs, &snap, 0);
        if (rc != PCW_OK) {
            r->st.errors++, r->st.last_error = rc;
            continue;
        }
        r->st.snapshots++;
        for (size_t j = 0; j < snap.count; j++) {
            size_t x = j;
            uint32_t id = pcw_snapshot_id(&snap, x);
            char why[256];
            r->st.samples++;
            if (!conc_check_ident(&snap, x, why, sizeof why)) {
                conc_note(&r->st, why);
                continue;
            }
            if (id > r->max_id)
                r->max_id = id;
            if (id < MAX_IDS) {
                uint64_t s;
                memcpy(&s, pcw_snapshot_row(&snap, x), 8); /* w0 = serial */
                if (r->last_serial[id] && r->last_serial[id] != s)
                    r->reuse_seen++;
                r->last_serial[id] = s;
            }
        }
    }
    if (!cs)
        r->open_rc = PCW_E_NOT_FOUND;
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    return NULL;
}

static void slots_and_names_are_reused(void)
{
    CONC_ASSERT(conc_private_dir() != NULL);
    pcw_provider *p;
    CONC_ASSERT(pcw_provider_open(&p, NULL) == PCW_OK);
    pcw_registration *reg;
    CONC_ASSERT(conc_register(&reg, p, CONC_IDENT_PREFIX, 0, 0) == PCW_OK);

    atomic_int stop = 0;
    static reuse_reader rd[2];
    for (int i = 0; i < 2; i++) {
        memset(&rd[i], 0, sizeof rd[i]);
        rd[i].path = pcw_provider_path(p);
        rd[i].stop = &stop;
        CONC_ASSERT(pthread_create(&rd[i].th, NULL, reuse_main, &rd[i]) == 0);
    }
    /* Warm-up: the first round of slots and names gets allocated. */
    conc_churn ch[NTHREADS];
    pthread_t th[NTHREADS];
    atomic_uint_fast64_t progress = 0;
    for (unsigned t = 0; t < NTHREADS; t++) {
        ch[t] = (conc_churn){.regs = &reg,
                             .nregs = 1,
                             .tid = t,
                             .nthreads = NTHREADS,
                             .window = WINDOW,
                             .ops = OPS_PER_THREAD,
                             .progress = &progress};
        CONC_ASSERT(pthread_create(&th[t], NULL, conc_churn_thread, &ch[t]) == 0);
    }
    uint64_t warm = 0;
    while (!warm) {
        if (atomic_load(&progress) >= (uint64_t)NTHREADS * OPS_PER_THREAD / 10)
            warm = conc_segment_size(pcw_provider_path(p));
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    for (unsigned t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        CONC_ASSERT(ch[t].error == PCW_OK, "thread %u: %s", t, pcw_status_str(ch[t].error));
    }
    uint64_t end = conc_segment_size(pcw_provider_path(p));
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) {
        pthread_join(rd[i].th, NULL);
        reuse_reader *r = &rd[i];
        CONC_ASSERT(r->open_rc == PCW_OK, "reader %d: %s", i, pcw_status_str(r->open_rc));
        CONC_ASSERT(r->st.violations == 0, "reader %d: %" PRIu64 " bad samples; first: %s", i,
                    r->st.violations, r->st.first_violation);
        CONC_ASSERT(r->st.errors == 0, "reader %d: %" PRIu64 " failed reads (%s)", i, r->st.errors,
                    pcw_status_str(r->st.last_error));
        CONC_ASSERT(r->st.samples > 1000, "reader %d: %" PRIu64 " samples", i, r->st.samples);
        CONC_ASSERT(r->reuse_seen > 10, "reader %d saw ids reused only %" PRIu64 " times", i,
                    r->reuse_seen);
        /* 16 live instances; closed ones wait a grace period: a few
         * chunks of 64 at most. */
        CONC_ASSERT(r->max_id < 1024, "reader %d saw id %" PRIu64 ": slots are not reused", i,
                    r->max_id);
        printf("  reader %d: %" PRIu64 " snapshots, %" PRIu64 " samples, %" PRIu64
               " id reuses seen, max id %" PRIu64 "\n",
               i, r->st.snapshots, r->st.samples, r->reuse_seen, r->max_id);
    }
    printf("  header.size %" PRIu64 " after warm-up, %" PRIu64 " at the end\n", warm, end);
    CONC_ASSERT(end <= warm + 64 * 1024, "segment grew from %" PRIu64 " to %" PRIu64, warm, end);
    pcw_unregister(reg);
    pcw_provider_close(p);
}

int main(void)
{
    static const conc_test tests[] = {
        {"slots_and_names_are_reused", slots_and_names_are_reused, 120},
    };
    return conc_run("conc_churn", tests, sizeof tests / sizeof tests[0]);
}
