/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/collector.c - the collector thread: it collects the model
 * at the interval, so that a collection - which may wait up to the
 * consumer's time limit for a callback provider that does not answer -
 * never holds up a key press.
 *
 * Two locks, never held together by one thread:
 *   `mu` guards the requests (UI -> collector: interval, pause, counterset,
 *     raw/cooked, refresh now, a log's seek, quit) and `seq`, the number of the last finished
 *     collection. It is only ever held for a few instructions, so the UI
 *     can always post a request at once. A change of counterset or of
 *     raw/cooked is collected at once; the collector waits on `cv` (with
 *     mu) between collections.
 *   `model_mu` guards the model: the collector holds it while it collects;
 *     the UI takes it (collector_lock, with a deadline) to read the last
 *     collection and cook the rows it draws. When the collector is in a
 *     long collection the UI's attempt times out and it draws what it
 *     read before; it is woken when the collection ends.
 * After each collection the collector writes one byte to the UI's wake
 * pipe (the UI polls it beside the terminal).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcwtop.h"

/* After a change of counterset, the second sample (rates need two) is
 * taken this soon, if the interval is longer. */
#define FIRST_RATE_NS 500000000ull

struct top_collector {
    pthread_t th;
    pthread_mutex_t mu; /* requests and seq */
    pthread_cond_t cv;
    pthread_mutex_t model_mu; /* the model */
    top_model *m;
    int wake_fd;
    /* Requests (mu). */
    uint64_t interval_ns;
    int paused, quit;
    char *want;
    int want_changed;
    int raw, raw_changed;
    int refresh_now; /* F5: collect at once, even paused */
    int advanced, advanced_changed;
    int seek; /* a log: 1 seek to seek_index, 2 to seek_time */
    uint64_t seek_index, seek_time;
    uint64_t seq; /* collections finished */
    int done;     /* the thread left its loop */
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *arg)
{
    top_collector *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->quit) {
        /* Take the requests, then collect without holding mu. */
        int want_changed = c->want_changed, raw_changed = c->raw_changed, raw = c->raw;
        int advanced_changed = c->advanced_changed, advanced = c->advanced;
        int seek = c->seek;
        uint64_t seek_index = c->seek_index, seek_time = c->seek_time;
        char *want = want_changed && c->want ? strdup(c->want) : NULL;
        c->want_changed = c->raw_changed = c->refresh_now = c->advanced_changed = c->seek = 0;
        uint64_t interval = c->interval_ns;
        pthread_mutex_unlock(&c->mu);

        pthread_mutex_lock(&c->model_mu);
        if (want_changed)
            top_model_want(c->m, want, want == NULL);
        if (raw_changed)
            top_model_set_raw(c->m, raw);
        if (advanced_changed)
            top_model_set_advanced(c->m, advanced);
        if (seek == 1)
            top_model_seek(c->m, seek_index);
        else if (seek == 2)
            top_model_seek_time(c->m, seek_time);
        const top_frame *f = top_model_frame(c->m);
        char *before = f->set_name ? strdup(f->set_name) : NULL;
        top_model_collect(c->m, interval);
        int switched = f->set_name && (!before || strcmp(before, f->set_name) != 0);
        /* A log's end: nothing to collect until a request (a seek). */
        int at_end = f->log && f->log_end;
        pthread_mutex_unlock(&c->model_mu);
        free(before);
        free(want);

        pthread_mutex_lock(&c->mu);
        c->seq++;
        ssize_t w = write(c->wake_fd, "c", 1);
        (void)w; /* a full pipe already holds a wake-up */
        uint64_t wait = interval;
        if (switched && wait > FIRST_RATE_NS)
            wait = FIRST_RATE_NS;
        uint64_t start = mono_ns(), deadline = start + wait;
        while (!c->quit && !c->want_changed && !c->raw_changed && !c->refresh_now &&
               !c->advanced_changed && !c->seek && (c->paused || at_end || mono_ns() < deadline)) {
            if (c->paused || at_end) {
                pthread_cond_wait(&c->cv, &c->mu);
                deadline = 0; /* resumed: collect at once */
                continue;
            }
            struct timespec ts = {(time_t)(deadline / 1000000000ull),
                                  (long)(deadline % 1000000000ull)};
            pthread_cond_timedwait(&c->cv, &c->mu, &ts);
            if (c->interval_ns != interval) { /* the new interval counts from the last */
                interval = wait = c->interval_ns;
                deadline = start + wait;
            }
        }
    }
    c->done = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int collector_start(top_collector **out, top_model *m, uint64_t interval_ns, int wake_fd)
{
    top_collector *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    c->m = m;
    c->wake_fd = wake_fd;
    c->interval_ns = interval_ns;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->model_mu, NULL);
    pthread_cond_init(&c->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* The UI thread takes the terminal's signals (SIGWINCH, SIGINT...):
     * the collector starts with them blocked. */
    sigset_t sigs, old;
    sigemptyset(&sigs);
    int terminal[] = {SIGINT, SIGTERM, SIGHUP, SIGWINCH, SIGQUIT, SIGTSTP, SIGCONT};
    for (size_t i = 0; i < sizeof terminal / sizeof terminal[0]; i++)
        sigaddset(&sigs, terminal[i]);
    pthread_sigmask(SIG_BLOCK, &sigs, &old);
    int rc = pthread_create(&c->th, NULL, run, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_mutex_destroy(&c->mu);
        pthread_mutex_destroy(&c->model_mu);
        pthread_cond_destroy(&c->cv);
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

int collector_stop(top_collector *c, int wait_ms)
{
    if (!c)
        return 0;
    uint64_t deadline = mono_ns() + (uint64_t)wait_ms * 1000000ull;
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    pthread_mutex_lock(&c->mu);
    c->quit = 1;
    pthread_cond_broadcast(&c->cv);
    while (!c->done && pthread_cond_timedwait(&c->cv, &c->mu, &ts) != ETIMEDOUT) {
    }
    int done = c->done;
    pthread_mutex_unlock(&c->mu);
    if (!done) {
        /* Still waiting for a provider's answer: leave it to the end of
         * the process (it holds the model and this structure). */
        pthread_detach(c->th);
        return -1;
    }
    pthread_join(c->th, NULL);
    free(c->want);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->model_mu);
    pthread_cond_destroy(&c->cv);
    free(c);
    return 0;
}

/* Post a request: f changes it under mu, and the collector wakes. */
#define REQUEST(c, stmt)                                                                           \
    do {                                                                                           \
        pthread_mutex_lock(&(c)->mu);                                                              \
        stmt;                                                                                      \
        pthread_cond_broadcast(&(c)->cv);                                                          \
        pthread_mutex_unlock(&(c)->mu);                                                            \
    } while (0)

void collector_set_interval(top_collector *c, uint64_t ns)
{
    REQUEST(c, c->interval_ns = ns);
}

void collector_pause(top_collector *c, int paused)
{
    REQUEST(c, c->paused = paused);
}

void collector_want(top_collector *c, const char *set)
{
    char *w = set ? strdup(set) : NULL;
    REQUEST(c, (free(c->want), c->want = w, c->want_changed = 1));
}

void collector_set_raw(top_collector *c, int raw)
{
    REQUEST(c, (c->raw = raw, c->raw_changed = 1));
}

void collector_refresh(top_collector *c)
{
    REQUEST(c, c->refresh_now = 1);
}

void collector_seek(top_collector *c, uint64_t index)
{
    REQUEST(c, (c->seek = 1, c->seek_index = index));
}

void collector_seek_time(top_collector *c, uint64_t real_ns)
{
    REQUEST(c, (c->seek = 2, c->seek_time = real_ns));
}

void collector_set_advanced(top_collector *c, int advanced)
{
    REQUEST(c, (c->advanced = advanced, c->advanced_changed = 1));
}

uint64_t collector_seq(top_collector *c)
{
    pthread_mutex_lock(&c->mu);
    uint64_t s = c->seq;
    pthread_mutex_unlock(&c->mu);
    return s;
}

top_model *collector_lock(top_collector *c, int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* pthread_mutex_timedlock's clock */
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    ts.tv_sec += timeout_ms / 1000 + ts.tv_nsec / 1000000000L;
    ts.tv_nsec %= 1000000000L;
    return pthread_mutex_timedlock(&c->model_mu, &ts) == 0 ? c->m : NULL;
}

void collector_unlock(top_collector *c)
{
    pthread_mutex_unlock(&c->model_mu);
}
