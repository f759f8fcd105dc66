/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/body.c - scrape bodies shared by the requests of one
 * collection, under a memory limit (body.h).
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "body_int.h"
#include "gzip.h"

uint64_t body_join_grace_ns = 30 * 1000000000ull;
/* How long a cut response's connection may take to close and free its
 * body before the next is cut: libmicrohttpd's thread sees the shutdown at
 * once; this only bounds the wait. */
#define CUT_WAIT_NS (200 * 1000000ull)

int bodies_open(bodies **out, collector *coll, size_t limit, int (*make_room)(void *),
                void *room_arg)
{
    bodies *bs = calloc(1, sizeof *bs);
    if (!bs)
        return -1;
    bs->coll = coll;
    bs->limit = limit;
    bs->make_room = make_room;
    bs->room_arg = room_arg;
    pthread_mutex_init(&bs->lock, NULL);
    pthread_condattr_t ca; /* deadlines are CLOCK_MONOTONIC (mono_ns) */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&bs->done, &ca);
    pthread_cond_init(&bs->freed, &ca);
    pthread_condattr_destroy(&ca);
    *out = bs;
    return 0;
}

void bodies_close(bodies *bs)
{
    if (!bs)
        return;
    pthread_cond_destroy(&bs->done);
    pthread_cond_destroy(&bs->freed);
    pthread_mutex_destroy(&bs->lock);
    free(bs);
}

void body_unref(void *arg)
{
    scrape_body *b = arg;
    bodies *bs = b->owner;
    pthread_mutex_lock(&bs->lock);
    int last = --b->refs == 0;
    if (last) {
        bs->held -= b->bytes;
        pthread_cond_broadcast(&bs->freed);
    }
    pthread_mutex_unlock(&bs->lock);
    if (!last)
        return;
    eb_free(&b->text);
    eb_free(&b->gz);
    pthread_mutex_destroy(&b->gz_lock);
    free(b);
}

/* Give back what doubling left unused: the body is kept while clients
 * read it, and the limit counts what it holds. */
static void shrink(ebuf *e)
{
    char *p = e->len ? realloc(e->p, e->len) : NULL;
    if (p) {
        e->p = p;
        e->cap = e->len;
    }
}

/* The bodies hold the limit: cut the responses that have been sending
 * longest, one at a time, each time waiting until a body is freed (its
 * connection closes) - at most CUT_WAIT_NS for each, and until the
 * deadline in all - until they hold less. 0, or -1 when they still hold
 * the limit (nothing left to cut, or the deadline). Under bs->lock. */
static int make_room(bodies *bs, uint64_t deadline_ns)
{
    while (bs->held >= bs->limit) {
        pthread_mutex_unlock(&bs->lock);
        int cut = bs->make_room && bs->make_room(bs->room_arg);
        pthread_mutex_lock(&bs->lock);
        uint64_t now = mono_ns();
        if (!cut || now >= deadline_ns)
            return bs->held >= bs->limit ? -1 : 0;
        uint64_t until = now + CUT_WAIT_NS < deadline_ns ? now + CUT_WAIT_NS : deadline_ns;
        struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
        size_t before = bs->held;
        int rc = 0;
        while (bs->held >= before && bs->held >= bs->limit && rc == 0)
            rc = pthread_cond_timedwait(&bs->freed, &bs->lock, &ts);
    }
    return 0;
}

/* Join b, under way: wait for it, and take it (0), or the error. Under
 * bs->lock, which it releases. */
static scrape_body *join(bodies *bs, scrape_body *b, uint64_t deadline_ns, int *err)
{
    /* The collection is bounded by its own deadline and its writing by the
     * providers' size; the wait has its own bound all the same: past the
     * earlier of this request's deadline and the builder's by the time
     * writing an exposition can take. Not the joiner's alone: a joiner
     * with a later deadline must not wait on a collection that has
     * already overrun its own. */
    b->refs++;
    uint64_t until =
        (deadline_ns < b->deadline_ns ? deadline_ns : b->deadline_ns) + body_join_grace_ns;
    struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
    int rc = 0;
    while (!b->done && rc == 0)
        rc = pthread_cond_timedwait(&bs->done, &bs->lock, &ts);
    rc = b->done ? b->rc : -2;
    pthread_mutex_unlock(&bs->lock);
    if (rc == 0)
        return b;
    body_unref(b);
    *err = rc == -2 ? BODY_BUSY : BODY_NOMEM;
    return NULL;
}

scrape_body *bodies_get(bodies *bs, int format, uint64_t deadline_ns, int *err)
{
    pthread_mutex_lock(&bs->lock);
    scrape_body *b = bs->building[format];
    if (b)
        return join(bs, b, deadline_ns, err);
    if (bs->held >= bs->limit && make_room(bs, deadline_ns) != 0) {
        pthread_mutex_unlock(&bs->lock);
        collector_count(bs->coll, CAUSE_MEMORY);
        *err = BODY_MEMORY;
        return NULL;
    }
    /* make_room let go of the lock: another request may have begun this
     * format's collection meanwhile. Join it rather than build a second. */
    if ((b = bs->building[format]) != NULL)
        return join(bs, b, deadline_ns, err);
    b = calloc(1, sizeof *b);
    if (!b) {
        pthread_mutex_unlock(&bs->lock);
        *err = BODY_NOMEM;
        return NULL;
    }
    b->owner = bs;
    b->refs = 1;
    b->deadline_ns = deadline_ns;
    pthread_mutex_init(&b->gz_lock, NULL);
    bs->building[format] = b;
    pthread_mutex_unlock(&bs->lock);

    int rc = collector_scrape(bs->coll, &b->text, format, deadline_ns);
    if (rc == 0)
        shrink(&b->text);

    pthread_mutex_lock(&bs->lock);
    b->done = 1;
    b->rc = rc;
    bs->building[format] = NULL;
    b->bytes = b->text.cap;
    bs->held += b->bytes;
    pthread_cond_broadcast(&bs->done);
    pthread_mutex_unlock(&bs->lock);
    if (rc == 0)
        return b;
    body_unref(b);
    *err = rc == -2 ? BODY_BUSY : BODY_NOMEM;
    return NULL;
}

const ebuf *body_text(scrape_body *b)
{
    return &b->text;
}

const ebuf *body_gzip(scrape_body *b)
{
    pthread_mutex_lock(&b->gz_lock);
    if (b->gz_state == 0) {
        b->gz_state = gzip_compress(b->text.p, b->text.len, &b->gz) == 0 ? 1 : -1;
        if (b->gz_state == 1)
            shrink(&b->gz);
        bodies *bs = b->owner;
        pthread_mutex_lock(&bs->lock);
        b->bytes += b->gz.cap;
        bs->held += b->gz.cap;
        pthread_mutex_unlock(&bs->lock);
    }
    int ok = b->gz_state == 1;
    pthread_mutex_unlock(&b->gz_lock);
    return ok ? &b->gz : NULL;
}
