/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_body.c - pcw-exporter's scrape bodies
 * (tools/pcw-exporter/body.c, linked from libpcw-exporter.a) against a
 * collector of the test's own: its collection blocks on a gate the test
 * opens, so the orders of two requests that a real exporter meets only by
 * chance are made here on purpose.
 *
 * The hooks: body.c's collector (collector_scrape, collector_count,
 * mono_ns) is defined here, so the link takes these instead of the
 * library's collector.o and clock.o; its make_room callback is the
 * test's; body_join_grace_ns is shortened so that a bounded join ends
 * within the test's time (body_int.h, which also gives the structures).
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <sched.h>

#include "../tools/pcw-exporter/body_int.h"
#include "../tools/pcw-exporter/collector.h"
#include "../tools/pcw-exporter/expo.h"

static void shorten_grace(void)
{
    body_join_grace_ns = 100 * 1000000ull;
}

TestSuite(exporter_body, .init = shorten_grace, .timeout = 60);

/* ---- the test's collector --------------------------------------------------- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open = 1; /* under gate_lock: collections may finish */
static int collections;   /* under gate_lock: collector_scrape calls */

uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A collection: counted, then held until the gate is open. */
int collector_scrape(collector *c, ebuf *out, int format, uint64_t deadline_ns)
{
    (void)c, (void)format, (void)deadline_ns;
    pthread_mutex_lock(&gate_lock);
    collections++;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    eb_str(out, "x 1\n");
    return 0;
}

void collector_count(collector *c, int cause)
{
    (void)c, (void)cause;
}

static void set_gate(int open)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = open;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

/* Wait (10 s at most) until `n` collections have begun. */
static void await_collections(int n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    pthread_mutex_lock(&gate_lock);
    int rc = 0;
    while (collections < n && rc == 0)
        rc = pthread_cond_timedwait(&gate_cond, &gate_lock, &ts);
    int got = collections;
    pthread_mutex_unlock(&gate_lock);
    cr_assert_geq(got, n, "%d collections began, not %d", got, n);
}

/* ---- requests on threads ----------------------------------------------------- */

typedef struct request {
    bodies *bs;
    uint64_t deadline_ns;
    scrape_body *b;
    int err;
    pthread_t t;
} request;

static void *request_run(void *arg)
{
    request *r = arg;
    r->b = bodies_get(r->bs, EXPO_TEXT, r->deadline_ns, &r->err);
    return NULL;
}

static void request_start(request *r, bodies *bs, uint64_t deadline_ns)
{
    r->bs = bs;
    r->deadline_ns = deadline_ns;
    cr_assert_eq(pthread_create(&r->t, NULL, request_run, r), 0);
}

/* Join the request's thread within 10 s; 0, or -1 when it is still
 * waiting (its thread is then left to the process's end). */
static int request_join(request *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 10;
    return pthread_timedjoin_np(r->t, NULL, &ts) == 0 ? 0 : -1;
}

/* ---- two builders of one format --------------------------------------------- */

/* The make_room callback of the race: the first request made room for its
 * collection (the bodies held the limit), and while it had the lock let
 * go, another request of the same format found room and began that
 * collection. */
static struct {
    bodies *bs;
    scrape_body *held; /* the body that fills the limit */
    request other;
    int calls;
} race;

static int race_make_room(void *arg)
{
    (void)arg;
    if (race.calls++)
        return 0;
    body_unref(race.held); /* "cut": the limit has room again */
    request_start(&race.other, race.bs, mono_ns() + 60 * 1000000000ull);
    await_collections(2); /* the held body's, and the other request's */
    return 1;
}

/* Wait (10 s at most) until the request that made room is past it: it
 * joined the collection under way (2 references) or began its own (a
 * third collection). Polled: neither path has a signal of its own. */
static void await_past_room(bodies *bs)
{
    long long deadline = tu_now_ms() + 10000;
    for (;;) {
        pthread_mutex_lock(&bs->lock);
        scrape_body *b = bs->building[EXPO_TEXT];
        int joined = b && b->refs >= 2;
        pthread_mutex_unlock(&bs->lock);
        pthread_mutex_lock(&gate_lock);
        int began = collections >= 3;
        pthread_mutex_unlock(&gate_lock);
        if (joined || began)
            return;
        cr_assert_lt(tu_now_ms(), deadline, "the request that made room neither joined nor began");
        sched_yield();
    }
}

/* The request that made room joins the collection another request began
 * meanwhile: one collection and one body for both, and no collection
 * left marked under way. */
Test(exporter_body, room_made_while_another_began_joins_it)
{
    bodies *bs;
    cr_assert_eq(bodies_open(&bs, NULL, 1, race_make_room, NULL), 0);
    race.bs = bs;
    int err = 0;
    race.held = bodies_get(bs, EXPO_TEXT, mono_ns() + 60 * 1000000000ull, &err);
    cr_assert(race.held, "err %d", err);
    cr_assert_eq(collections, 1);
    set_gate(0);
    request first;
    request_start(&first, bs, mono_ns() + 60 * 1000000000ull);
    await_collections(2);
    await_past_room(bs);
    set_gate(1);
    cr_assert_eq(request_join(&first), 0, "the request that made room did not finish");
    cr_assert_eq(request_join(&race.other), 0);
    cr_assert(first.b && race.other.b, "errs %d %d", first.err, race.other.err);
    cr_expect_eq(collections, 2, "one collection for the requests that overlapped");
    cr_expect_eq(first.b, race.other.b, "two bodies built for one collection's requests");
    body_unref(first.b); /* each holds a reference, shared or not */
    body_unref(race.other.b);
    pthread_mutex_lock(&bs->lock);
    cr_expect_eq(bs->held, 0, "every body freed");
    for (int f = 0; f < EXPO_FORMATS; f++)
        cr_expect_null(bs->building[f], "format %d still marked under way", f);
    pthread_mutex_unlock(&bs->lock);
    bodies_close(bs);
}

/* ---- a join bounded by the builder's deadline ------------------------------ */

/* A request that joins a collection gives up when the collection's own
 * deadline (and the grace for writing) has passed, even when its own
 * deadline is far later: it is answered 503 rather than held as long as
 * its own deadline allows. */
Test(exporter_body, join_bounded_by_builders_deadline)
{
    bodies *bs;
    cr_assert_eq(bodies_open(&bs, NULL, 1u << 20, NULL, NULL), 0);
    set_gate(0);
    request builder, joiner;
    request_start(&builder, bs, mono_ns() + 100 * 1000000ull);
    await_collections(1);
    request_start(&joiner, bs, mono_ns() + 3600 * 1000000000ull);
    int joined = request_join(&joiner);
    set_gate(1);
    cr_assert_eq(joined, 0, "the joiner waited past the builder's deadline");
    cr_expect_null(joiner.b);
    cr_expect_eq(joiner.err, BODY_BUSY);
    cr_assert_eq(request_join(&builder), 0);
    cr_assert(builder.b, "err %d", builder.err);
    body_unref(builder.b);
    bodies_close(bs);
}
