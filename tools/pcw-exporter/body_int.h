/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/body_int.h - the inside of body.c (body.h is its
 * interface), for body.c and the test that drives it
 * (tests/test_exporter_body.c, which links body.o with a collector of its
 * own and reads these structures under their lock).
 */
#ifndef PCW_EXPORTER_BODY_INT_H
#define PCW_EXPORTER_BODY_INT_H

#include <pthread.h>

#include "body.h"

/* How long past its deadline a join may wait for the exposition to be
 * written: 30 s. The test shortens it before it starts a thread (read
 * only after, so no lock). */
extern uint64_t body_join_grace_ns;

struct scrape_body {
    bodies *owner;
    unsigned refs;           /* under owner->lock */
    int done, rc;            /* under owner->lock: the collection finished, its result */
    uint64_t deadline_ns;    /* its collection's (the builder's); set before it is published */
    size_t bytes;            /* counted in owner->held; under owner->lock */
    ebuf text;               /* the collecting thread's until done, then read-only */
    pthread_mutex_t gz_lock; /* guards gz_state, gz */
    int gz_state;            /* 0 not made, 1 made, -1 failed */
    ebuf gz;
};

struct bodies {
    pthread_mutex_t lock;
    pthread_cond_t done;                 /* a collection finished (broadcast) */
    pthread_cond_t freed;                /* a body was freed: held went down (broadcast) */
    scrape_body *building[EXPO_FORMATS]; /* the collection under way, per format */
    size_t held, limit;                  /* bytes of bodies alive */
    collector *coll;
    int (*make_room)(void *); /* cut the response sending longest (slots_cut_sender) */
    void *room_arg;
};

#endif /* PCW_EXPORTER_BODY_INT_H */
