/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/collect.c - collect countersets from all their providers,
 * whether their instances live in the segment, come from a callback over
 * the control channel, or both; and the add/remove counter notifications.
 *
 * Parallelism with one thread: a call is a list of jobs, one per source
 * (provider registration) of each counterset asked for. Every job's
 * request is sent first - one connection per provider, several requests
 * pipelined on it, which the provider serves in order - then all the
 * sockets are polled together until the one deadline. Each job is
 * finished as soon as its answer is in (so a provider frozen by
 * COLLECT_START is released at once, not when the slowest one answers);
 * at the deadline the jobs still waiting fail with PCW_E_TIMEOUT, their
 * segments are read all the same (PERFLIB's rule: late callback data is
 * dropped, shared memory is not), and the call returns. The masks are
 * applied here to every instance from every source, so the result never
 * depends on a provider honouring them.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "common/name.h"

/* A full listen backlog is retried this often, until the deadline. */
#define CONNECT_RETRY_MS 5
/* A fire-and-forget COLLECT_END may take this long past the deadline to
 * be written (the provider's hold limit ends the collection otherwise). */
#define END_GRACE_MS 100
/* HOLD collections one connection carries at once: the default of the
 * provider's PCW_CTL_MAX_HELD (callback.h), past which it answers
 * PCW_E_BUSY. Further ones wait until an earlier one's COLLECT_END is
 * sent, so a provider with many countersets never sees more. */
#define MAX_HELD_PER_CONN 16

/* A query with the defaults filled in. */
typedef struct query {
    uint64_t counter_mask;
    uint32_t instance_id;
    const char *mask;
    size_t mask_len;
    int all_names; /* the mask is "*": nothing to match */
} query;

static query norm_query(const pcw_query *q)
{
    query n = {~0ull, PCW_ANY_INSTANCE_ID, "*", 1, 1};
    if (q) {
        n.counter_mask = q->counter_mask ? q->counter_mask : ~0ull;
        n.instance_id = q->instance_id;
        if (q->instance_mask)
            n.mask = q->instance_mask;
    }
    n.mask_len = strlen(n.mask);
    n.all_names = strcmp(n.mask, "*") == 0;
    return n;
}

static int match(const query *q, uint32_t id, const char *name, size_t len)
{
    if (q->instance_id != PCW_ANY_INSTANCE_ID && id != q->instance_id)
        return 0;
    return q->all_names || pcw__wildcard_match(q->mask, q->mask_len, name, len);
}

int pcw_query_match(const pcw_query *q, uint32_t id, const char *name, size_t name_len)
{
    if (!name && name_len)
        return 0;
    if (!name)
        name = "";
    query n = norm_query(q);
    return match(&n, id, name, name_len);
}

/* Zero the counters the query did not ask for. */
static void mask_counters(const query *q, const pcw_counterset *cs, unsigned char *data)
{
    if (q->counter_mask == ~0ull)
        return;
    for (uint32_t i = 0; i < cs->counter_count; i++)
        if (!pcw__ctl_counter_selected(q->counter_mask, i))
            memset(data + cs->counters[i].data_offset, 0, cs->counters[i].size);
}

/* Keep the rows [first, count) the query selects; mask their data. */
static void filter(pcw_snapshot *snap, size_t first, const query *q, const pcw_counterset *cs,
                   int zero_data)
{
    size_t w = first;
    const uint32_t dsize = snap->data_size;
    for (size_t i = first; i < snap->count; i++) {
        if (!match(q, snap->ids[i], pcw_snapshot_name(snap, i), pcw_snapshot_name_len(snap, i)))
            continue;
        unsigned char *d = snap->data + w * dsize;
        if (w != i) {
            snap->ids[w] = snap->ids[i];
            memmove(d, snap->data + i * dsize, dsize);
            if (snap->name_off)
                snap->name_off[w] = snap->name_off[i], snap->name_len[w] = snap->name_len[i];
        }
        if (zero_data)
            memset(d, 0, dsize);
        else
            mask_counters(q, cs, d);
        w++;
    }
    snap->count = w;
}

/* Append the instances of a COLLECT/ENUMERATE reply. PCW_E_PROTOCOL if the
 * reply is malformed (nothing from it is kept then). */
static int add_items(pcw_snapshot *snap, const unsigned char *pl, uint32_t len, const query *q,
                     const pcw_counterset *cs, unsigned flags, int enumerate, int *cb_status)
{
    pcw_ctl_reader rd = {pl, len, 0, 0};
    *cb_status = (int32_t)pcw__ctl_get_u32(&rd);
    uint32_t count = pcw__ctl_get_u32(&rd);
    uint32_t dsize = pcw__ctl_get_u32(&rd);
    uint32_t reserved = pcw__ctl_get_u32(&rd);
    if (rd.bad || reserved || dsize != cs->data_size)
        return PCW_E_PROTOCOL;
    /* Every item takes at least 12 bytes: a count the payload cannot hold
     * is malformed, and one that it can is bounded by the reply's size. */
    if (count > (len - rd.pos) / 12)
        return PCW_E_PROTOCOL;
    pcw__snap_mark mark = pcw__snapshot_mark(snap);
    int names = !(flags & PCW_READ_NO_NAMES) || snap->name_off;
    int rc = names ? pcw__snapshot_want_names(snap) : PCW_OK;
    /* Room for every item at once, not one reservation a row: a name's
     * bytes and its NUL fit in its item's, so the payload's length bounds
     * the names. */
    if (rc == PCW_OK)
        rc = pcw__snapshot_reserve(snap, count, names, names ? len : 0);
    for (uint32_t i = 0; i < count && rc == PCW_OK; i++) {
        uint32_t id = pcw__ctl_get_u32(&rd), nlen = pcw__ctl_get_u32(&rd);
        uint32_t iflags = pcw__ctl_get_u32(&rd);
        if (rd.bad || nlen > PCW_MAX_INSTANCE_NAME_BYTES ||
            (iflags & ~(uint32_t)PCW_CTL_ITEM_DATA)) {
            rc = PCW_E_PROTOCOL;
            break;
        }
        const char *name = (const char *)pcw__ctl_take(&rd, nlen);
        const unsigned char *data = iflags & PCW_CTL_ITEM_DATA ? pcw__ctl_take(&rd, dsize) : NULL;
        if (rd.bad || pcw__utf8_count(name, nlen) < 0 || id >= PCW_ANY_INSTANCE_ID - 1) {
            rc = PCW_E_PROTOCOL;
            break;
        }
        if (!match(q, id, name, nlen))
            continue;
        size_t row = snap->count++;
        snap->ids[row] = id;
        unsigned char *d = snap->data + row * dsize;
        if (data && !enumerate)
            memcpy(d, data, dsize);
        else
            memset(d, 0, dsize);
        mask_counters(q, cs, d);
        if (names) {
            snap->name_off[row] = pcw__snap(snap)->names_len;
            snap->name_len[row] = nlen;
            memcpy(snap->names + pcw__snap(snap)->names_len, name, nlen);
            snap->names[pcw__snap(snap)->names_len + nlen] = 0;
            pcw__snap(snap)->names_len += nlen + 1;
        }
    }
    if (rc == PCW_OK && rd.pos != len)
        rc = PCW_E_PROTOCOL;
    if (rc != PCW_OK)
        pcw__snapshot_rollback(snap, mark);
    return rc;
}

/* ---- the engine: jobs ---------------------------------------------------- */

/* One counterset of a call: what to collect and where it goes. */
typedef struct item_ctx {
    query q;
    pcw_snapshot *snap;
    unsigned flags;
    int enumerate;
    size_t first_job, njobs; /* its jobs: [first_job, first_job + njobs) */
} item_ctx;

/* A job's progress. */
enum {
    J_READY,    /* nothing to send (no control channel, or it failed): finish */
    J_QUEUED,   /* connected, its request not sent yet */
    J_SENT,     /* its request is awaited (job.req) */
    J_FINISHED, /* its part is in the snapshot, or its status says why not */
};

/* One source (a provider's registration) of one item. */
typedef struct job {
    item_ctx *it;
    pcw_segment *seg;
    const pcw_counterset *cs;
    uint32_t source;  /* segment index (pcw_snapshot_source.source) */
    pcw__ctl_conn *k; /* NULL: no control channel involved */
    pcw__ctl_req req;
    int state;
    int want_hold; /* ask for HOLD (the provider has a control callback) */
    int owes_end;  /* a HOLD request went out on k at epoch: COLLECT_END owed */
    uint32_t epoch;
    int status, cb_status;
} job;

/* The request a job sends: its type's payload (control-channel.md).
 * `forget`: its reply is not awaited (dropped by id when it comes). */
static int send_job(job *j, uint16_t type, uint32_t counter_index, long long deadline, int forget)
{
    const query *q = &j->it->q;
    unsigned char buf[256];
    pcw_ctl_writer w = {buf, 0, sizeof buf, PCW_CTL_MAX_REQUEST, 0};
    unsigned char *heap = NULL;
    if (q->mask_len > 200) {
        heap = malloc(q->mask_len + 64);
        if (!heap)
            return PCW_E_NO_MEMORY;
        w.buf = heap, w.cap = q->mask_len + 64;
    }
    pcw__ctl_put_u32(&w, j->cs->reg_index);
    if (type == PCW_CTL_ADD_COUNTER || type == PCW_CTL_REMOVE_COUNTER) {
        pcw__ctl_put_u32(&w, counter_index);
    } else {
        pcw__ctl_put_u32(&w, (j->want_hold ? PCW_CTL_HOLD : 0) | PCW_CTL_TIMEOUT);
        pcw__ctl_put_u64(&w, q->counter_mask);
    }
    pcw__ctl_put_u32(&w, q->instance_id);
    pcw__ctl_put_str(&w, q->mask, q->mask_len);
    if (type != PCW_CTL_ADD_COUNTER && type != PCW_CTL_REMOVE_COUNTER) {
        /* The time left: the provider cancels the request then (its
         * callbacks' cancel signal), counting from when it reads it. */
        long long left = deadline - pcw__ctl_now_ms();
        pcw__ctl_put_u32(&w, left <= 0 ? 0 : left > UINT32_MAX ? UINT32_MAX : (uint32_t)left);
    }
    int rc = w.bad ? PCW_E_INVALID_PARAMETER
                   : pcw__ctl_send(j->k, type, w.buf, w.len, forget ? NULL : &j->req, deadline);
    free(heap);
    return rc;
}

/* Connect every job that has a control channel; a job that cannot be
 * connected is READY with the reason in its status. */
static void connect_all(job *jobs, size_t n, uint16_t type, long long deadline)
{
    for (size_t i = 0; i < n; i++) {
        job *j = &jobs[i];
        j->state = J_READY;
        if (!j->k || j->status != PCW_OK)
            continue;
        int rc = pcw__ctl_connect(j->k, deadline);
        /* A full listen backlog (a burst of connections) clears as the
         * provider accepts: retry briefly within the deadline. */
        while (rc == PCW_E_CONNECTIONS_FULL && pcw__ctl_now_ms() + CONNECT_RETRY_MS < deadline) {
            struct timespec ts = {0, CONNECT_RETRY_MS * 1000 * 1000};
            nanosleep(&ts, NULL);
            rc = pcw__ctl_connect(j->k, deadline);
        }
        if (rc == PCW_E_NOT_FOUND && !(j->cs->flags & PCW_CSET_F_CALLBACK) &&
            type != PCW_CTL_ADD_COUNTER && type != PCW_CTL_REMOVE_COUNTER) {
            /* No socket (yet): nobody to tell; the segment still reads. */
            j->k = NULL;
            continue;
        }
        if (rc != PCW_OK)
            j->status = rc;
        else
            j->state = J_QUEUED;
    }
}

/* Send the queued requests, in job order, each connection carrying its
 * requests one after another (pipelined); a HOLD request waits while its
 * connection already carries MAX_HELD_PER_CONN. Returns how many went. */
static size_t send_queued(job *jobs, size_t n, uint16_t type, uint32_t counter_index,
                          long long deadline)
{
    size_t sent = 0;
    for (size_t i = 0; i < n; i++) {
        job *j = &jobs[i];
        if (j->state != J_QUEUED)
            continue;
        if (j->k->fd < 0) {
            /* The connection failed since (an earlier send on it, which
             * failed the requests awaited on it): a new one for this. */
            int rc = pcw__ctl_connect(j->k, deadline);
            if (rc != PCW_OK) {
                j->status = rc, j->state = J_READY;
                continue;
            }
        }
        if (j->want_hold && j->k->holds >= MAX_HELD_PER_CONN)
            continue;
        int rc = send_job(j, type, counter_index, deadline, 0);
        if (rc != PCW_OK) {
            j->status = rc, j->state = J_READY;
            continue;
        }
        j->state = J_SENT;
        sent++;
        if (j->want_hold) {
            j->owes_end = 1;
            j->epoch = j->k->epoch;
            j->k->holds++;
        }
    }
    return sent;
}

/* A connection refused, or closed without an answer, is no proof that the
 * provider exited (a socket file left without a listener, a connection
 * the provider dropped): only its segment can say so. */
static int confirm_exit(const job *j, int status)
{
    if (status == PCW_E_PROVIDER_EXITED && pcw_segment_alive(j->seg) == PCW_OK)
        return PCW_E_IO;
    return status;
}

/* Release a provider frozen at COLLECT_START: COLLECT_END, not awaited
 * (its reply is dropped by id), on the connection the COLLECT went on. A
 * connection that failed since owes nothing: the provider ended what it
 * held when the connection ended. */
static void end_hold(job *j, long long deadline)
{
    if (!j->owes_end)
        return;
    j->owes_end = 0;
    pcw__ctl_conn *k = j->k;
    if (k->fd < 0 || k->epoch != j->epoch)
        return;
    if (k->holds)
        k->holds--;
    unsigned char ri[4];
    pcw__ctl_put_le(ri, j->cs->reg_index, 4);
    long long end = pcw__ctl_now_ms() + END_GRACE_MS;
    (void)pcw__ctl_send(k, PCW_CTL_COLLECT_END, ri, sizeof ri, NULL,
                        end > deadline ? end : deadline);
}

/* Finish one collect/enumerate job whose answer is in, or will not come:
 * read its segment, add its callback instances, release its provider.
 *
 * PERFLIB's one-second rule: a provider that did not answer in time has
 * its callback instances missing (status PCW_E_TIMEOUT; the late answer
 * is dropped), but its segment instances are read all the same - a
 * segment-only registration then has its whole part, and status PCW_OK. */
static void finish(job *j, long long deadline)
{
    item_ctx *it = j->it;
    pcw_snapshot *snap = it->snap;
    int sent = j->state == J_SENT;
    j->state = J_FINISHED;
    if (sent)
        j->status = j->req.status;
    j->status = confirm_exit(j, j->status);
    pcw__snap_mark mark = pcw__snapshot_mark(snap);
    /* The same for a provider that had no connection slot for us: only
     * what it would have said is missing. `late` is that status, or 0. */
    int late = j->status == PCW_E_TIMEOUT || j->status == PCW_E_CONNECTIONS_FULL ? j->status : 0;
    if (j->status == PCW_OK || late) {
        /* Names are needed to match a wildcard even if not wanted (the
         * rows then keep them). The read opens this provider's source
         * entry; its callback instances below join it. */
        unsigned rflags =
            (it->flags | PCW_READ_APPEND) & ~(it->q.all_names ? 0u : PCW_READ_NO_NAMES);
        int r = pcw_segment_read(j->seg, j->cs, snap, rflags);
        if (r == PCW_OK) {
            snap->sources[snap->nsources - 1].source = j->source;
            filter(snap, mark.count, &it->q, j->cs, it->enumerate);
        } else {
            j->status = r;
        }
    }
    /* As soon as its segment is read (or at once, if it did not answer in
     * time: it serves requests in order, so the COLLECT_END ends the
     * collection as soon as it has started it). */
    end_hold(j, deadline);
    if (j->status == PCW_OK && sent && j->req.reply) {
        int r = add_items(snap, j->req.reply, j->req.reply_len, &it->q, j->cs, it->flags,
                          it->enumerate, &j->cb_status);
        if (r != PCW_OK)
            j->status = r;
    }
    pcw__ctl_req_release(&j->req);
    if (late && j->status == late && !(j->cs->flags & PCW_CSET_F_CALLBACK))
        j->status = PCW_OK; /* nothing of it is missing */
    if (j->status != PCW_OK && !(late && j->status == late))
        pcw__snapshot_rollback(snap, mark); /* none of a failed provider's part */
    else if (snap->nsources > mark.nsources)
        snap->sources[snap->nsources - 1].count =
            snap->count - snap->sources[snap->nsources - 1].first;
}

/* Collect (or enumerate) every job: send every request first, then poll
 * every connection together until the deadline, finishing each job as
 * soon as its answer is in. Every job is FINISHED on return, and every
 * COLLECT_END owed has been sent. */
static void run_jobs(job *jobs, size_t n, long long deadline)
{
    uint16_t type = n && jobs[0].it->enumerate ? PCW_CTL_ENUMERATE : PCW_CTL_COLLECT;
    connect_all(jobs, n, type, deadline);
    pcw__ctl_req *stack[16], **rs = n <= 16 ? stack : malloc(n * sizeof *rs);
    for (size_t i = 0; rs && i < n; i++)
        rs[i] = &jobs[i].req;
    for (;;) {
        /* Finish what is in (a finished HOLD job makes room for a queued
         * one), send what may go, and see what is left. */
        for (size_t i = 0; i < n; i++)
            if (jobs[i].state == J_READY || (jobs[i].state == J_SENT && jobs[i].req.done))
                finish(&jobs[i], deadline);
        if (pcw__ctl_now_ms() < deadline)
            send_queued(jobs, n, type, 0, deadline);
        size_t pending = 0, queued = 0, ready = 0;
        for (size_t i = 0; i < n; i++) {
            const job *j = &jobs[i];
            ready += j->state == J_READY || (j->state == J_SENT && j->req.done);
            pending += j->state == J_SENT && !j->req.done;
            queued += j->state == J_QUEUED;
        }
        if (ready)
            continue;
        if (!pending && !queued)
            break;
        if (!rs || !pending || pcw__ctl_now_ms() >= deadline) {
            /* Out of time (or memory; or queued requests with nothing in
             * flight to make room, which cannot happen, but the loop stays
             * bounded): what is still queued was never asked, what is
             * awaited times out (its late answer is dropped by id). */
            int st = rs ? PCW_E_TIMEOUT : PCW_E_NO_MEMORY;
            for (size_t i = 0; i < n; i++) {
                job *j = &jobs[i];
                if (j->state == J_SENT)
                    pcw__ctl_req_release(&j->req);
                if (j->state == J_SENT || j->state == J_QUEUED)
                    j->status = st, j->state = J_READY;
            }
            continue;
        }
        pcw__ctl_wait(rs, n, deadline, 1);
    }
    if (rs != stack)
        free(rs);
}

/* ---- preparing a call ------------------------------------------------------ */

static void report(pcw_collect_report *rep, const job *jobs, size_t n)
{
    if (!rep)
        return;
    rep->sources = n;
    rep->failed = rep->timed_out = 0;
    rep->first_error = PCW_OK;
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].status != PCW_OK) {
            rep->failed++;
            if (jobs[i].status == PCW_E_TIMEOUT)
                rep->timed_out++;
            if (rep->first_error == PCW_OK)
                rep->first_error = jobs[i].status;
        }
        if (rep->source_status)
            rep->source_status[i] = jobs[i].status;
        if (rep->callback_status)
            rep->callback_status[i] = jobs[i].cb_status;
    }
}

/* The consumer's connection to seg's provider, made on first use; drops
 * connections to providers that are gone. NULL: out of memory. */
static pcw__ctl_conn *conn_for(pcw__ctl_table *t, pcw_segment *seg)
{
    const pcw_provider_info *info = pcw_segment_provider(seg);
    for (size_t i = 0; i < t->n; i++) {
        pcw__ctl_conn *k = t->v[i];
        if (strcmp(k->seg_path, info->path) != 0)
            continue;
        if (k->pid == info->pid && k->start_time == info->start_time && k->uid == info->uid)
            return k;
        pcw__ctl_free(k); /* another provider now: start afresh */
        t->v[i] = t->v[--t->n];
        break;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        pcw__ctl_conn **v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return NULL;
        t->v = v, t->cap = cap;
    }
    pcw__ctl_conn *k = pcw__ctl_new(seg);
    if (k)
        t->v[t->n++] = k;
    return k;
}

/* Close connections whose segment the consumer no longer has. */
static void prune(pcw_consumer *c, pcw__ctl_table *t)
{
    size_t nseg = pcw_consumer_segment_count(c);
    for (size_t i = 0; i < t->n;) {
        int keep = 0;
        for (size_t s = 0; s < nseg && !keep; s++)
            keep = strcmp(pcw_segment_provider(pcw_consumer_segment(c, s))->path,
                          t->v[i]->seg_path) == 0;
        if (keep) {
            i++;
            continue;
        }
        pcw__ctl_free(t->v[i]);
        t->v[i] = t->v[--t->n];
    }
}

/* Set up the job of source i of m (for item it). PCW_E_NO_MEMORY if its
 * connection cannot be made. */
static int make_job(pcw_consumer *c, pcw__ctl_table *t, item_ctx *it,
                    const pcw_merged_counterset *m, size_t i, job *j)
{
    memset(j, 0, sizeof *j);
    j->it = it;
    j->source = m->source_segment[i];
    j->seg = pcw_consumer_segment(c, j->source);
    j->cs = m->source_cset[i];
    if (!j->seg || !j->cs) {
        j->status = PCW_E_INVALID_PARAMETER;
        return PCW_OK;
    }
    int control = pcw_segment_provider(j->seg)->flags & PCW_SEG_F_CONTROL;
    if ((j->cs->flags & PCW_CSET_F_CALLBACK) || control) {
        if (!(j->k = conn_for(t, j->seg)))
            return PCW_E_NO_MEMORY;
        j->want_hold = !it->enumerate && control;
    }
    return PCW_OK;
}

/* Empty the snapshot (unless PCW_READ_APPEND) and give it meta's rows. */
static int prepare_snapshot(const pcw_counterset *meta, pcw_snapshot *snap, unsigned flags)
{
    if (!(flags & PCW_READ_APPEND))
        pcw_snapshot_clear(snap);
    else if (snap->count && snap->data_size != meta->data_size)
        return PCW_E_INVALID_PARAMETER;
    snap->data_size = meta->data_size;
    return PCW_OK;
}

typedef struct snap_use {
    const pcw_snapshot *snap;
    uint32_t data_size;
} snap_use;

static int cmp_snap_use(const void *a, const void *b)
{
    const pcw_snapshot *x = ((const snap_use *)a)->snap, *y = ((const snap_use *)b)->snap;
    return x < y ? -1 : x > y;
}

/* Every item is something to collect into a snapshot that can take it;
 * items sharing a snapshot agree on its rows' size. Nothing is changed
 * unless every item passes. */
static int check_items(const pcw_collect_item *items, size_t n)
{
    if (!items && n)
        return PCW_E_INVALID_PARAMETER;
    for (size_t i = 0; i < n; i++) {
        const pcw_collect_item *x = &items[i];
        if (!x->m || !x->m->meta || !x->snap ||
            (x->m->source_count && (!x->m->source_segment || !x->m->source_cset)))
            return PCW_E_INVALID_PARAMETER;
        if ((x->flags & PCW_READ_APPEND) && x->snap->count &&
            x->snap->data_size != x->m->meta->data_size)
            return PCW_E_INVALID_PARAMETER;
    }
    if (n < 2)
        return PCW_OK;
    snap_use *u = malloc(n * sizeof *u);
    if (!u)
        return PCW_E_NO_MEMORY;
    for (size_t i = 0; i < n; i++)
        u[i].snap = items[i].snap, u[i].data_size = items[i].m->meta->data_size;
    qsort(u, n, sizeof *u, cmp_snap_use);
    int rc = PCW_OK;
    for (size_t i = 1; i < n && rc == PCW_OK; i++)
        if (u[i].snap == u[i - 1].snap && u[i].data_size != u[i - 1].data_size)
            rc = PCW_E_INVALID_PARAMETER;
    free(u);
    return rc;
}

/* Fill every item's report with `status` for each source (a call that
 * could not start). */
static void report_all(const pcw_collect_item *items, size_t n, int status)
{
    for (size_t i = 0; i < n; i++) {
        pcw_collect_report *rep = items[i].rep;
        if (!rep)
            continue;
        size_t ns = items[i].m->source_count;
        rep->sources = ns, rep->failed = ns, rep->timed_out = 0;
        rep->first_error = ns ? status : PCW_OK;
        for (size_t s = 0; s < ns; s++) {
            if (rep->source_status)
                rep->source_status[s] = status;
            if (rep->callback_status)
                rep->callback_status[s] = PCW_OK;
        }
    }
}

static int collect_items(pcw_consumer *c, const pcw_collect_item *items, size_t n, int enumerate)
{
    if (!c)
        return PCW_E_INVALID_PARAMETER;
    int rc = check_items(items, n);
    if (rc != PCW_OK)
        return rc;
    size_t njobs = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].m->source_count > SIZE_MAX / sizeof(job) - njobs - 1)
            return PCW_E_NO_MEMORY;
        njobs += items[i].m->source_count;
    }
    pcw__ctl_table *t = pcw__consumer_ctl(c);
    item_ctx *its = calloc(n ? n : 1, sizeof *its);
    job *jobs = calloc(njobs ? njobs : 1, sizeof *jobs);
    if (!t || !its || !jobs) {
        free(its), free(jobs);
        report_all(items, n, PCW_E_NO_MEMORY);
        return PCW_E_NO_MEMORY;
    }
    prune(c, t);
    size_t at = 0;
    for (size_t i = 0; i < n && rc == PCW_OK; i++) {
        const pcw_collect_item *x = &items[i];
        item_ctx *it = &its[i];
        it->q = norm_query(x->q);
        it->snap = x->snap;
        it->flags = x->flags;
        it->enumerate = enumerate;
        it->first_job = at;
        it->njobs = x->m->source_count;
        prepare_snapshot(x->m->meta, x->snap, x->flags);
        for (size_t s = 0; s < x->m->source_count && rc == PCW_OK; s++)
            rc = make_job(c, t, it, x->m, s, &jobs[at++]);
    }
    if (rc != PCW_OK) {
        free(its), free(jobs);
        report_all(items, n, rc);
        return rc;
    }
    run_jobs(jobs, njobs, pcw__ctl_now_ms() + pcw__consumer_timeout(c));
    for (size_t i = 0; i < n; i++) {
        report(items[i].rep, jobs + its[i].first_job, its[i].njobs);
        for (size_t k = 0; k < its[i].njobs; k++)
            if (jobs[its[i].first_job + k].status == PCW_E_NO_MEMORY)
                rc = PCW_E_NO_MEMORY;
    }
    free(its);
    free(jobs);
    return rc;
}

int pcw_consumer_collect_many(pcw_consumer *c, const pcw_collect_item *items, size_t n)
{
    return collect_items(c, items, n, 0);
}

int pcw_consumer_collect(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                         pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep)
{
    pcw_collect_item it = {m, q, snap, flags, rep};
    return collect_items(c, &it, 1, 0);
}

int pcw_consumer_enumerate(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                           pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep)
{
    pcw_collect_item it = {m, q, snap, flags, rep};
    return collect_items(c, &it, 1, 1);
}

/* ---- adding and removing counters ------------------------------------------ */

static int add_remove(pcw_consumer *c, const pcw_merged_counterset *m, uint32_t counter_index,
                      const pcw_query *pq, pcw_collect_report *rep, uint16_t type)
{
    if (!c || !m || !m->meta || counter_index >= m->meta->counter_count ||
        (m->source_count && (!m->source_segment || !m->source_cset)))
        return PCW_E_INVALID_PARAMETER;
    size_t n = m->source_count;
    pcw__ctl_table *t = pcw__consumer_ctl(c);
    job *jobs = calloc(n ? n : 1, sizeof *jobs);
    pcw__ctl_req *stack[16], **rs = n <= 16 ? stack : malloc(n * sizeof *rs);
    item_ctx it = {.q = norm_query(pq)};
    int rc = t && jobs && rs ? PCW_OK : PCW_E_NO_MEMORY;
    if (rc == PCW_OK)
        prune(c, t);
    for (size_t i = 0; i < n && rc == PCW_OK; i++) {
        rc = make_job(c, t, &it, m, i, &jobs[i]);
        jobs[i].want_hold = 0; /* no collection to hold */
    }
    if (rc != PCW_OK) {
        free(jobs);
        if (rs != stack)
            free(rs);
        return rc;
    }
    long long deadline = pcw__ctl_now_ms() + pcw__consumer_timeout(c);
    connect_all(jobs, n, type, deadline);
    send_queued(jobs, n, type, counter_index, deadline);
    for (size_t i = 0; i < n; i++)
        rs[i] = &jobs[i].req;
    pcw__ctl_wait(rs, n, deadline, 0);
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].state == J_SENT)
            jobs[i].status = jobs[i].req.status;
        /* An ADD_COUNTER that did not answer in time failed, as far as
         * the caller knows: take it back, so that the provider does not
         * keep a counter nobody will remove. The provider serves the
         * connection in order, so the REMOVE comes after the ADD however
         * late that finishes (a REMOVE of what was never added is
         * PCW_E_NOT_FOUND there, and ignored). Not awaited. */
        if (type == PCW_CTL_ADD_COUNTER && jobs[i].state == J_SENT &&
            jobs[i].status == PCW_E_TIMEOUT && jobs[i].k && jobs[i].k->fd >= 0)
            (void)send_job(&jobs[i], PCW_CTL_REMOVE_COUNTER, counter_index,
                           pcw__ctl_now_ms() + END_GRACE_MS, 1);
        jobs[i].status = confirm_exit(&jobs[i], jobs[i].status);
        pcw__ctl_req_release(&jobs[i].req);
        if (rc == PCW_OK)
            rc = jobs[i].status;
    }
    report(rep, jobs, n);
    if (rs != stack)
        free(rs);
    free(jobs);
    return rc;
}

int pcw_consumer_add_counter(pcw_consumer *c, const pcw_merged_counterset *m,
                             uint32_t counter_index, const pcw_query *q, pcw_collect_report *rep)
{
    return add_remove(c, m, counter_index, q, rep, PCW_CTL_ADD_COUNTER);
}

int pcw_consumer_remove_counter(pcw_consumer *c, const pcw_merged_counterset *m,
                                uint32_t counter_index, const pcw_query *q, pcw_collect_report *rep)
{
    return add_remove(c, m, counter_index, q, rep, PCW_CTL_REMOVE_COUNTER);
}

/* ---- one segment ------------------------------------------------------------- */

int pcw_segment_collect(pcw_segment *seg, const pcw_counterset *cs, const pcw_query *q,
                        pcw_snapshot *snap, unsigned flags, int enumerate, uint32_t timeout_ms,
                        int *callback_status)
{
    if (callback_status)
        *callback_status = PCW_OK;
    if (!seg || !cs || !snap)
        return PCW_E_INVALID_PARAMETER;
    int rc = prepare_snapshot(cs, snap, flags);
    if (rc != PCW_OK)
        return rc;
    item_ctx it = {.q = norm_query(q), .snap = snap, .flags = flags, .enumerate = enumerate};
    job j;
    memset(&j, 0, sizeof j);
    j.it = &it;
    j.seg = seg;
    j.cs = cs;
    pcw__ctl_conn *k = NULL; /* a connection for this call only */
    int control = pcw_segment_provider(seg)->flags & PCW_SEG_F_CONTROL;
    if ((cs->flags & PCW_CSET_F_CALLBACK) || control) {
        if (!(k = j.k = pcw__ctl_new(seg)))
            return PCW_E_NO_MEMORY;
        j.want_hold = !enumerate && control;
    }
    run_jobs(&j, 1, pcw__ctl_now_ms() + (timeout_ms ? timeout_ms : 1000));
    pcw__ctl_free(k); /* run_jobs may have dropped j.k (no socket) */
    if (callback_status)
        *callback_status = j.cb_status;
    return j.status;
}
