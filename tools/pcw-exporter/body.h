/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/body.h - scrape bodies: one per collection, shared by
 * every request that arrives while it is under way, and bounded in the
 * memory that responses in flight hold (body.c).
 *
 * A request for a format (text, OpenMetrics or protobuf) joins the collection of
 * that format under way, if there is one, and waits for it to finish -
 * until the earlier of its own deadline and the collection's, plus the
 * time writing takes (JOIN_GRACE_NS); otherwise it starts one (looking
 * again after making room, so that one format has one collection under
 * way at most). When the bodies that responses still hold
 * (clients that have not read them yet) reach the limit, the responses
 * that have been sending longest are cut first (make_room: their
 * connections closed, counted as errors_total{cause="memory"}) until the
 * bodies hold less; only if that cannot be done within the request's
 * time is the request refused (BODY_MEMORY: 503, counted the same). A
 * stalled client therefore never keeps a scraper out. A body is freed when
 * the last response that sends it is done, so the memory of bodies is at
 * most the limit plus, for each format, the one collection being written
 * and its gzip copy.
 *
 * Concurrency: any thread. bodies.lock guards building[], held, and each
 * body's refs, done, rc and bytes; a body's text is written by the thread
 * that collects it before it sets done under the lock, and only read after
 * (the lock orders the two); its gzip copy is made once, under gz_lock.
 */
#ifndef PCW_EXPORTER_BODY_H
#define PCW_EXPORTER_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "expo.h"

enum { BODY_NOMEM = -1, BODY_BUSY = -2, BODY_MEMORY = -3 };

typedef struct bodies bodies;
typedef struct scrape_body scrape_body;

/* limit: bytes of bodies responses may hold before new collections make
 * room; make_room(room_arg) cuts the response sending longest, 1 when it
 * cut one (slots_cut_sender). */
int bodies_open(bodies **out, collector *coll, size_t limit, int (*make_room)(void *),
                void *room_arg);
/* After every response is done. */
void bodies_close(bodies *bs);

/* A body of `format` with a reference for the caller (body_unref), or
 * NULL and *err: BODY_BUSY (another scrape held the collector past
 * deadline_ns), BODY_MEMORY (the limit), BODY_NOMEM. */
scrape_body *bodies_get(bodies *bs, int format, uint64_t deadline_ns, int *err);
/* The exposition. */
const ebuf *body_text(scrape_body *b);
/* The exposition gzip-compressed (made once per body), or NULL when
 * compressing failed. */
const ebuf *body_gzip(scrape_body *b);
/* Drop a reference (libmicrohttpd's free callback: cls is the body). */
void body_unref(void *b);

#endif /* PCW_EXPORTER_BODY_H */
