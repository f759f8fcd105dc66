/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/slots.c - connection slots that slow clients cannot
 * keep (slots.h).
 *
 * The table is a list in the order connections began to wait (accept, or
 * the end of a response) or to send: its first waiting entry is the one to
 * shed, and the one whose request deadline comes first, so the reaper
 * sleeps until exactly then; its first sending entry is the response to
 * cut when the bodies need memory.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "slots.h"

typedef struct slot {
    struct slot *prev, *next;
    int fd;
    uint64_t since_ns; /* when it began to wait, or to send (not while serving) */
    int serving;       /* its request is whole; its response not done */
    int sending;       /* ...and queued: libmicrohttpd is sending it */
    int closing;       /* shut down by us: no longer counted */
} slot;

struct slots {
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t wake;  /* the reaper's: a new deadline, or stop */
    slot *head, *tail;    /* by since_ns of when each began to wait */
    unsigned open;        /* entries not closing */
    unsigned max;
    uint64_t timeout_ns;
    int stop;
    pthread_t reaper;
    collector *coll;
};

static void unlink_slot(slots *s, slot *x)
{
    if (x->prev)
        x->prev->next = x->next;
    else
        s->head = x->next;
    if (x->next)
        x->next->prev = x->prev;
    else
        s->tail = x->prev;
    x->prev = x->next = NULL;
}

static void append(slots *s, slot *x)
{
    x->prev = s->tail;
    x->next = NULL;
    if (s->tail)
        s->tail->next = x;
    else
        s->head = x;
    s->tail = x;
}

/* Close x's connection (its thread sees the end). Under lock. */
static void close_slot(slots *s, slot *x, int cause)
{
    shutdown(x->fd, SHUT_RDWR);
    x->closing = 1;
    s->open--;
    collector_count(s->coll, cause);
}

/* The first waiting entry: the longest waiting. Under lock. */
static slot *oldest_waiting(slots *s)
{
    for (slot *x = s->head; x; x = x->next)
        if (!x->serving && !x->closing)
            return x;
    return NULL;
}

/* The first sending entry: the response longest in sending. Under lock. */
static slot *oldest_sending(slots *s)
{
    for (slot *x = s->head; x; x = x->next)
        if (x->sending && !x->closing)
            return x;
    return NULL;
}

static void *reaper_main(void *arg)
{
    slots *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        uint64_t now = mono_ns();
        slot *x;
        while ((x = oldest_waiting(s)) != NULL && x->since_ns + s->timeout_ns <= now)
            close_slot(s, x, CAUSE_REQUEST_TIMEOUT);
        /* Sleep until the next deadline (or a second, when nothing waits:
         * a new waiter signals). */
        uint64_t until = x ? x->since_ns + s->timeout_ns : now + 1000000000u;
        struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
        pthread_cond_timedwait(&s->wake, &s->lock, &ts);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int slots_open(slots **out, unsigned max, double request_timeout, collector *coll)
{
    slots *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->max = max;
    s->timeout_ns = (uint64_t)(request_timeout * 1e9);
    s->coll = coll;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&s->reaper, NULL, reaper_main, s) != 0) {
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* After every daemon has stopped: the table is empty. */
void slots_close(slots *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->reaper, NULL);
    while (s->head) {
        slot *x = s->head;
        unlink_slot(s, x);
        free(x);
    }
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void slots_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                  enum MHD_ConnectionNotificationCode code)
{
    slots *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        slot *x = *socket_context;
        if (!x)
            return;
        pthread_mutex_lock(&s->lock);
        unlink_slot(s, x);
        if (!x->closing)
            s->open--;
        pthread_mutex_unlock(&s->lock);
        free(x);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    slot *x = ci ? calloc(1, sizeof *x) : NULL;
    *socket_context = x;
    if (!x)
        return; /* untracked: libmicrohttpd's own limits still hold */
    x->fd = ci->connect_fd;
    x->since_ns = mono_ns();
    pthread_mutex_lock(&s->lock);
    append(s, x);
    s->open++;
    if (s->max && s->open > s->max) {
        /* The connection waiting longest for its request; when x is the
         * only one waiting, the response sending longest (a client that
         * does not read); x itself only when every other is collecting. */
        slot *victim = oldest_waiting(s);
        if (victim == x && oldest_sending(s))
            victim = oldest_sending(s);
        close_slot(s, victim, CAUSE_SHED);
    }
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

static slot *slot_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Put conn's entry in a state; `restart`: it begins to wait or to send
 * now (to the end of the list, and the reaper recomputes its sleep). */
static void set_state(slots *s, struct MHD_Connection *conn, int serving, int sending, int restart)
{
    slot *x = slot_of(conn);
    if (!x)
        return;
    pthread_mutex_lock(&s->lock);
    x->serving = serving;
    x->sending = sending;
    if (restart) {
        x->since_ns = mono_ns();
        unlink_slot(s, x);
        append(s, x);
        pthread_cond_signal(&s->wake);
    }
    pthread_mutex_unlock(&s->lock);
}

void slots_serving(slots *s, struct MHD_Connection *conn)
{
    set_state(s, conn, 1, 0, 0);
}

void slots_sending(slots *s, struct MHD_Connection *conn)
{
    set_state(s, conn, 1, 1, 1);
}

int slots_cut_sender(void *arg)
{
    slots *s = arg;
    pthread_mutex_lock(&s->lock);
    slot *x = oldest_sending(s);
    if (x)
        close_slot(s, x, CAUSE_MEMORY);
    pthread_mutex_unlock(&s->lock);
    return x != NULL;
}

void slots_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                     enum MHD_RequestTerminationCode toe)
{
    (void)con_cls, (void)toe;
    set_state(cls, conn, 0, 0, 1);
}
