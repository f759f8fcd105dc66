/* SPDX-License-Identifier: MIT */
/*
 * tests/conc_histogram.c - histograms observed by several threads at once
 * while a consumer reads them (README, "Histograms on hot multi-threaded
 * paths"; docs/design.md section 15):
 *
 * - one "shared" instance that every writer thread observes into with
 *   _observe_atomic: no observation may be lost;
 * - one instance per writer thread, observed with the plain _observe (the
 *   per-thread recipe): merged, they must equal the shared one;
 * - a reader thread with its own mapping of the segment reads all the
 *   while: every word it sees only grows, never past the final total.
 *
 * Also run under TSan (make check-tsan): the shared words' concurrent
 * read-modify-writes and the per-thread plain stores are C11 atomics.
 */
#define PCW_PROVIDER_IMPLEMENTATION /* this file compiles the provider */
#define _GNU_SOURCE                 1
#include <pthread.h>

#include "conctest.h"

#if defined(__SANITIZE_THREAD__)
#define OBS 200000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define OBS 200000
#endif
#endif
#ifndef OBS
#define OBS 2000000 /* observations per writer thread */
#endif
#define WRITERS 3

/* Values as observed, one bucket per doubling, 1 .. 2^12. */
PCW_HISTOGRAM_TYPE(ch_hist, PCW_HIST_UNIT_ONE, 0, 0, 12);
#define NWORDS (2 + 12)

struct ch_block {
    ch_hist h;
};

static pcw_instance *shared_inst, *own_inst[WRITERS];
static atomic_int writers_done;
static pthread_barrier_t start; /* the writers begin together */

/* Writer t observes the values 1, 2, ... 4096 in turn (value i % 4096 + 1):
 * every bucket, the zero bucket (1 = 2^0) included. */
static uint64_t value_of(uint64_t i)
{
    return i % 4096 + 1;
}

static void *writer_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    struct ch_block *shared = pcw_instance_block(shared_inst, 0);
    struct ch_block *own = pcw_instance_block(own_inst[t], 0);
    pthread_barrier_wait(&start);
    for (uint64_t i = 0; i < OBS; i++) {
        ch_hist_observe_atomic(&shared->h, value_of(i));
        ch_hist_observe(&own->h, value_of(i));
    }
    atomic_fetch_add(&writers_done, 1);
    return NULL;
}

typedef struct hist_reader {
    const char *path;
    const char *set;
    uint64_t samples;
    char failure[256];
} hist_reader;

/* Every word of every instance only grows, and no bucket count exceeds what
 * all writers together will have observed. */
static void *reader_main(void *arg)
{
    hist_reader *r = arg;
    pcw_segment *seg = NULL;
    if (pcw_segment_open(&seg, r->path) != PCW_OK) {
        snprintf(r->failure, sizeof r->failure, "cannot open the segment");
        return NULL;
    }
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, r->set);
    if (!cs || cs->counters[0].type != PERF_PCW_HISTOGRAM) {
        snprintf(r->failure, sizeof r->failure, "no histogram counterset");
        pcw_segment_close(seg);
        return NULL;
    }
    uint32_t off = cs->counters[0].data_offset;
    uint64_t last[1 + WRITERS][NWORDS] = {{0}};
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    int final = 0;
    while (!final && !r->failure[0]) {
        final = atomic_load(&writers_done) == WRITERS;
        if (pcw_segment_read(seg, cs, &snap, 0) != PCW_OK) {
            snprintf(r->failure, sizeof r->failure, "a read failed");
            break;
        }
        for (size_t row = 0; row < snap.count; row++) {
            uint32_t id = pcw_snapshot_id(&snap, row);
            if (id > WRITERS)
                continue;
            uint64_t total = 0;
            for (uint32_t w = 0; w < NWORDS; w++) {
                uint64_t v;
                memcpy(&v, pcw_snapshot_row(&snap, row) + off + 8 * w, 8);
                if (v < last[id][w])
                    snprintf(r->failure, sizeof r->failure,
                             "instance %u word %u went back from %" PRIu64 " to %" PRIu64, id, w,
                             last[id][w], v);
                last[id][w] = v;
                total += w ? v : 0;
            }
            if (total > (uint64_t)WRITERS * OBS)
                snprintf(r->failure, sizeof r->failure,
                         "instance %u counts %" PRIu64 " observations", id, total);
        }
        r->samples++;
    }
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    return NULL;
}

static void shared_and_per_thread(void)
{
    CONC_ASSERT(conc_private_dir() != NULL, "no private directory");
    pcw_provider *p = NULL;
    CONC_ASSERT(pcw_provider_open(&p, NULL) == PCW_OK, "provider");
    static const pcw_counter_desc c[] = {
        PCW_HISTOGRAM_COUNTER(1, "Size", struct ch_block, h, ch_hist),
    };
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .flags = PCW_REG_CACHELINE,
                                  .name = "Conc Histogram",
                                  .instance_type = PCW_MULTI_AGGREGATE,
                                  .counter_count = 1,
                                  .counters = c};
    pcw_registration *reg;
    CONC_ASSERT(pcw_register(&reg, p, &info) == PCW_OK, "register");
    pcw_data zeros = {NULL, sizeof(struct ch_block)};
    CONC_ASSERT(pcw_create_instance(&shared_inst, reg, "shared", 1, &zeros) == PCW_OK, "shared");
    for (int t = 0; t < WRITERS; t++) {
        char name[16];
        snprintf(name, sizeof name, "worker-%d", t);
        CONC_ASSERT(pcw_create_instance(&own_inst[t], reg, name, 1, &zeros) == PCW_OK, "%s", name);
    }
    CONC_ASSERT(pcw_instance_id(shared_inst) == 0, "the first instance's id");

    hist_reader r = {.path = pcw_provider_path(p), .set = "Conc Histogram"};
    pthread_t rt, wt[WRITERS];
    CONC_ASSERT(pthread_barrier_init(&start, NULL, WRITERS) == 0, "barrier");
    CONC_ASSERT(pthread_create(&rt, NULL, reader_main, &r) == 0, "reader thread");
    for (int t = 0; t < WRITERS; t++)
        CONC_ASSERT(pthread_create(&wt[t], NULL, writer_main, (void *)(intptr_t)t) == 0, "writer");
    for (int t = 0; t < WRITERS; t++)
        pthread_join(wt[t], NULL);
    pthread_join(rt, NULL);
    pthread_barrier_destroy(&start);
    CONC_ASSERT(r.failure[0] == 0, "reader: %s", r.failure);
    CONC_ASSERT(r.samples > 1, "%" PRIu64 " samples", r.samples);

    /* Nothing lost: the shared histogram has every observation, and so do
     * the per-thread ones merged, bucket by bucket. */
    uint64_t sum_one = 0; /* one writer's sum */
    for (uint64_t i = 0; i < OBS; i++)
        sum_one += value_of(i);
    const uint64_t *shared = ((struct ch_block *)pcw_instance_block(shared_inst, 0))->h.words;
    uint64_t merged[NWORDS] = {0}, count = 0;
    for (int t = 0; t < WRITERS; t++) {
        const uint64_t *own = ((struct ch_block *)pcw_instance_block(own_inst[t], 0))->h.words;
        CONC_ASSERT(own[0] == sum_one, "worker-%d's sum", t);
        for (uint32_t w = 0; w < NWORDS; w++)
            merged[w] += own[w];
    }
    for (uint32_t w = 0; w < NWORDS; w++) {
        CONC_ASSERT(shared[w] == merged[w], "word %u: shared %" PRIu64 ", merged %" PRIu64, w,
                    shared[w], merged[w]);
        count += w ? shared[w] : 0;
    }
    CONC_ASSERT(shared[0] == WRITERS * sum_one, "shared sum %" PRIu64, shared[0]);
    CONC_ASSERT(count == (uint64_t)WRITERS * OBS, "shared count %" PRIu64, count);
    /* value 1 = 2^0 is the zero bucket's; 4096 = 2^12 the last bucket's. */
    CONC_ASSERT(shared[1] == (uint64_t)WRITERS * (OBS / 4096 + (OBS % 4096 > 0)),
                "zero bucket %" PRIu64, shared[1]);
    pcw_unregister(reg);
    pcw_provider_close(p);
}

int main(void)
{
    static const conc_test tests[] = {
        {"shared_and_per_thread", shared_and_per_thread, 120},
    };
    return conc_run("conc_histogram", tests, sizeof tests / sizeof tests[0]);
}
