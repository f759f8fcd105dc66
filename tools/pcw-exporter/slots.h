/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/slots.h - connection slots that slow clients cannot
 * keep (slots.c).
 *
 * libmicrohttpd closes a connection that is *inactive* for a while, but a
 * client that sends a byte now and then is never inactive: 40 of them
 * held every slot for as long as they liked. So each connection here is
 * either
 *   - waiting for a whole request: from its accept (which includes the TLS
 *     handshake) or from the end of its previous response (keep-alive),
 *     however paced; or
 *   - serving one: from the request's last byte to its response's end
 *     (sending, from when the response is queued).
 * A waiting connection is closed when it has waited `request_timeout`
 * (the reaper thread; counted as request_timeout), and when a new
 * connection would make more than `max` open, the one that has waited
 * longest is closed to make room; when no other waits, the one that has
 * been sending its response longest (a client that does not read it);
 * the new one itself only when every other is collecting (counted as
 * shed). A client that sends its request at once, as Prometheus does, is
 * served however many slow ones there are.
 *
 * When the scrape bodies that responses hold reach their limit (body.h),
 * the response that has been sending longest is cut the same way.
 *
 * Closing is shutdown(2) of the connection's socket: its thread wakes,
 * sees the end, and libmicrohttpd closes it as any other. The socket is
 * only touched under `lock` while the connection is in the table, and
 * libmicrohttpd tells of the close (MHD_CONNECTION_NOTIFY_CLOSED, which
 * removes it) before it closes the socket, so the descriptor is never
 * another connection's.
 *
 * Concurrency: the callbacks come from libmicrohttpd's threads (the
 * listening thread for STARTED, each connection's thread for the rest);
 * everything is under slots.lock.
 */
#ifndef PCW_EXPORTER_SLOTS_H
#define PCW_EXPORTER_SLOTS_H

#include <microhttpd.h>

#include "collector.h"

typedef struct slots slots;

/* max: connections open at once (0: no shedding, libmicrohttpd's limit);
 * request_timeout: seconds a connection may wait for a whole request. */
int slots_open(slots **out, unsigned max, double request_timeout, collector *coll);
void slots_close(slots *s);

/* MHD_OPTION_NOTIFY_CONNECTION's callback; cls is the slots. */
void slots_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                  enum MHD_ConnectionNotificationCode code);
/* The request is whole (headers and body): the connection is serving. */
void slots_serving(slots *s, struct MHD_Connection *conn);
/* A response is queued: libmicrohttpd sends it from now on. */
void slots_sending(slots *s, struct MHD_Connection *conn);
/* Cut the response that has been sending longest - a client that does not
 * read it holds its body (body.h) - counted as cause "memory"; 1 when
 * there was one, else 0. arg is the slots (body.h's make_room). */
int slots_cut_sender(void *arg);
/* MHD_OPTION_NOTIFY_COMPLETED's callback: the response is done; the
 * connection waits for its next request. */
void slots_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                     enum MHD_RequestTerminationCode toe);

#endif /* PCW_EXPORTER_SLOTS_H */
