/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/control.h - libpcw's side of the provider control channel
 * (private; the wire format is pcw/control_proto.h).
 *
 * A pcw__ctl_conn is one connection to one provider's control socket. It
 * carries any number of awaited requests at once, pipelined: the provider
 * serves a connection's requests in order, and each awaited request is a
 * pcw__ctl_req its caller owns, linked on the connection until its reply
 * is in, the connection fails, or the deadline passes. Every other reply
 * that arrives - a late answer to a request that timed out, or the answer
 * to a fire-and-forget COLLECT_END - is recognised by its id and
 * discarded. Receiving is a resumable state machine, so a reply cut by a
 * deadline is picked up where it stopped on the next wait and the stream
 * never loses its framing.
 *
 * Concurrency: a connection, and the requests awaited on it, belong to
 * the pcw_consumer (or call) that made them; one thread at a time.
 */
#ifndef PCW_CONSUMER_CONTROL_H
#define PCW_CONSUMER_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "internal.h"
#include "pcw/collect.h"
#include "common/control_proto.h"

struct pcw__ctl_conn;

/* One awaited request. Zero-initialise it; pcw__ctl_send fills it; it is
 * done once its reply (or a failure) is in; pcw__ctl_req_release frees its
 * reply and unlinks it if it is still awaited. */
typedef struct pcw__ctl_req {
    struct pcw__ctl_conn *k;   /* the connection it was sent on */
    struct pcw__ctl_req *next; /* the connection's awaited list, in send order */
    uint32_t id;               /* its request id; 0 = never sent */
    uint16_t type;
    int linked;           /* on k's awaited list */
    int done;             /* the reply (or a failure) is in */
    int status;           /* the reply's status, or why there is none */
    unsigned char *reply; /* payload, owned */
    uint32_t reply_len;
} pcw__ctl_req;

/* How much of the stream one recv reads ahead (a reply's header and its
 * payload usually arrive together). */
#define PCW__CTL_RX_BYTES 16384

/* A blocking recv's time limit (SO_RCVTIMEO), ms: pcw__ctl_wait waits in
 * the recv while the deadline is at least this plus the slack away (the
 * kernel rounds the limit up to its clock tick), polls for the rest. */
#define PCW__CTL_BLOCK_MS       100
#define PCW__CTL_BLOCK_SLACK_MS 20

/* The counters added on a connection that are added again on the next
 * one (the provider's default per-connection limits, PCW_CTL_MAX_ADDED and
 * PCW_CTL_MAX_ADDED_BYTES: past them it refuses the ADD anyway). */
#define PCW__CTL_MAX_READD       4096
#define PCW__CTL_MAX_READD_BYTES (1u << 20)

/* One ADD_COUNTER sent and not removed: its payload; the id it was first
 * sent with, and whether the provider has answered PCW_OK to it. One not
 * confirmed is dropped if the provider refuses it or the connection fails
 * first (its caller saw an error: it was not added). */
typedef struct pcw__ctl_added {
    unsigned char *payload;
    size_t len;
    uint32_t id;
    int confirmed;
} pcw__ctl_added;

typedef struct pcw__ctl_conn {
    int fd;         /* -1: not connected (reconnect on next use) */
    int blocking;   /* fd is blocking, receives bounded by PCW__CTL_BLOCK_MS */
    char *seg_path; /* the segment this socket sits beside */
    int32_t pid;    /* its provider, as the segment header says */
    uint32_t uid;   /* ...and its uid, in its own user namespace */
    uint32_t owner; /* the segment file's owner as this consumer sees it:
                       what SO_PEERCRED's uid is compared with (peer.c) */
    uint64_t start_time;
    dev_t seg_dev; /* the segment file this consumer has open (peer.c) */
    ino_t seg_ino;
    uint32_t next_id;
    uint32_t epoch;      /* bumped at every connect: a COLLECT_END is owed
                            only on the connection its COLLECT went on */
    uint32_t holds;      /* HOLD collections sent on this connection whose
                            COLLECT_END is not sent yet (collect.c) */
    int fresh;           /* connected, nothing sent yet */
    long long last_send; /* ms, CLOCK_MONOTONIC */
    int refused;         /* the status of a PCW_CTL_REFUSED received, else 0 */
    /* The counters added through it (ADD_COUNTER sent, no REMOVE since),
     * at most PCW__CTL_MAX_READD (and _BYTES): the provider removes them
     * when a connection ends - it closed one silent too long, or shed it to
     * make room for another consumer - so each new connection adds them
     * again before anything else (pcw__ctl_connect). */
    pcw__ctl_added *added;
    size_t nadded, added_cap, added_bytes;
    int readding; /* pcw__ctl_connect is sending them */
    /* receiving */
    unsigned char hb[PCW_CTL_HEADER_SIZE];
    size_t hb_got;
    pcw_ctl_header h; /* valid once hb_got == PCW_CTL_HEADER_SIZE */
    unsigned char *pl;
    size_t pl_got;
    unsigned char *rx; /* PCW__CTL_RX_BYTES read ahead, [rx_pos, rx_len) unused */
    size_t rx_pos, rx_len;
    /* The reply area (docs/design.md 12.1): the provider's, mapped
     * read-only, area_size bytes; NULL: none on this connection.
     * area_state: 0 ask for one; -1 this provider does not know
     * PCW_CTL_AREA, never ask. area_id: the request sent with
     * PCW_CTL_IN_AREA whose reply is not read off the stream yet (0: none;
     * only then may another request let the provider write the area).
     * rx_fd: a descriptor received and not claimed yet (-1). */
    int area_state;
    int area_asked;       /* asked on this connection */
    uint32_t area_ask_id; /* the AREA request's id */
    const unsigned char *area;
    size_t area_size;
    uint32_t area_id;
    int rx_fd;
    /* the awaited requests, oldest first */
    pcw__ctl_req *awaited, *awaited_tail;
    size_t slot; /* scratch for pcw__ctl_wait */
} pcw__ctl_conn;

/* A connection for seg's provider (not connected yet). NULL: no memory,
 * or seg's file cannot be stat'ed. */
pcw__ctl_conn *pcw__ctl_new(const pcw_segment *seg);
/* Close and free it; requests awaited on it fail with PCW_E_IO. */
void pcw__ctl_free(pcw__ctl_conn *k);
/* Connect if not connected, or if the connection cannot be trusted to be
 * open still (it has been idle for half of PCW_CTL_IDLE_TIMEOUT_MS - of
 * PCW_CTL_ADDED_IDLE_TIMEOUT_MS with counters added - after which the
 * provider may close it at any moment; one it closed earlier is
 * reconnected by pcw__ctl_send when the send fails). A connection with
 * requests awaited is in use and kept as it is. Checks the peer is the
 * segment's provider (pcw__ctl_peer_check). On a new connection, the
 * counters added through the old ones are added again first (not awaited;
 * by `deadline`). PCW_OK, PCW_E_NOT_FOUND (no socket),
 * PCW_E_PROVIDER_EXITED (refused: nobody listens), PCW_E_CONNECTIONS_FULL
 * (backlog full), PCW_E_PERMISSION, PCW_E_IO, or a failed send's status. */
int pcw__ctl_connect(pcw__ctl_conn *k, long long deadline);
/* Close the connection; requests awaited on it fail with PCW_E_IO. */
void pcw__ctl_disconnect(pcw__ctl_conn *k);
/* Send one request. `r` (NULL: fire-and-forget) becomes an awaited
 * request (its last reply is freed first). Fails if it cannot be written
 * by `deadline` (ms, CLOCK_MONOTONIC); the connection is then closed and
 * the requests awaited on it fail with the same status. A connection the
 * provider has closed is made again once (if nothing is awaited on it); a
 * new one it refused gives the refusal's status (PCW_E_CONNECTIONS_FULL,
 * PCW_E_PERMISSION). An ADD_COUNTER sent is remembered, to be added again
 * on a new connection, until a REMOVE_COUNTER of the same payload. */
int pcw__ctl_send(pcw__ctl_conn *k, uint16_t type, const void *payload, size_t len, pcw__ctl_req *r,
                  long long deadline);
/* Wait until every request in rs[] that is awaited (NULL entries and done
 * ones skipped) has its reply - or, with `any`, until at least one more
 * has - or the deadline passes. At the deadline, those left get
 * PCW_E_TIMEOUT and are unlinked (their late replies will be dropped).
 * Returns how many are still awaited. */
size_t pcw__ctl_wait(pcw__ctl_req *const *rs, size_t n, long long deadline, int any);
/* Free r's reply; if it is still awaited, stop awaiting it (its reply
 * will be dropped when it comes). r may then be reused or freed. */
void pcw__ctl_req_release(pcw__ctl_req *r);
/* CLOCK_MONOTONIC in milliseconds, the clock of every deadline here.
 * Inline: control.c and peer.c both read it, and peer.c is called by
 * control.c, so a function of either would make them call each other
 * (make check-layering). */
static inline long long pcw__ctl_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* peer.c: is the process listening on the connected socket fd the
 * provider of k's segment (in this pid namespace or one below it)? PCW_OK;
 * PCW_E_PERMISSION when it is not, or cannot be proven to be (the reason
 * in pcw_error_detail); PCW_E_TIMEOUT at the deadline; PCW_E_IO. */
int pcw__ctl_peer_check(int fd, const pcw__ctl_conn *k, long long deadline);

/* The consumer's connections (consumer.c keeps the pointer). */
typedef struct pcw__ctl_table {
    pcw__ctl_conn **v;
    size_t n, cap;
} pcw__ctl_table;

void pcw__ctl_table_free(pcw__ctl_table *t);

/* consumer.c */
uint32_t pcw__consumer_timeout(const pcw_consumer *c);
pcw__ctl_table *pcw__consumer_ctl(pcw_consumer *c); /* NULL: no memory */

#endif /* PCW_CONSUMER_CONTROL_H */
