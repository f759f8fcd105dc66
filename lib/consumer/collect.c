/*
 * lib/consumer/collect.c - one call that collects a counterset from all its
 * providers, whether their instances live in the segment, come from a
 * callback over the control channel, or both; and the add/remove counter
 * notifications.
 *
 * Parallelism with one thread: every provider's request is sent first, then
 * all their sockets are polled together until the deadline. Each provider's
 * part is finished as soon as its answer is in (so a provider frozen by
 * COLLECT_START is released at once, not when the slowest one answers); a
 * provider still silent at the deadline fails with PCW_E_TIMEOUT and the
 * call returns. The masks are applied here to every instance from every
 * source, so the result never depends on a provider honouring them.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "control.h"
#include "pcw/name.h"

/* A full listen backlog is retried this often, until the deadline. */
#define CONNECT_RETRY_MS 5
/* A fire-and-forget COLLECT_END may take this long past the deadline to
 * be written (the provider's hold limit ends the collection otherwise). */
#define END_GRACE_MS 100

typedef struct job {
    pcw_segment *seg;
    const pcw_counterset *cs;
    uint32_t source;  /* segment index (pcw_snapshot_source.source) */
    pcw__ctl_conn *k; /* NULL: no control channel involved */
    int sent;         /* a request is awaited on k */
    int hold;         /* before send_all: ask for HOLD; after: COLLECT_END is owed */
    int finished;
    int status, cb_status;
} job;

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
    return q->all_names || pcw_wildcard_match(q->mask, q->mask_len, name, len);
}

int pcw_query_match(const pcw_query *q, uint32_t id, const char *name, size_t name_len)
{
    query n = norm_query(q);
    return match(&n, id, name, name_len);
}

/* Zero the counters the query did not ask for. */
static void mask_counters(const query *q, const pcw_counterset *cs, unsigned char *data)
{
    if (q->counter_mask == ~0ull)
        return;
    for (uint32_t i = 0; i < cs->counter_count; i++)
        if (!pcw_ctl_counter_selected(q->counter_mask, i))
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
    *cb_status = (int32_t)pcw_ctl_get_u32(&rd);
    uint32_t count = pcw_ctl_get_u32(&rd);
    uint32_t dsize = pcw_ctl_get_u32(&rd);
    uint32_t reserved = pcw_ctl_get_u32(&rd);
    if (rd.bad || reserved || dsize != cs->data_size)
        return PCW_E_PROTOCOL;
    pcw__snap_mark mark = pcw__snapshot_mark(snap);
    int names = !(flags & PCW_READ_NO_NAMES) || snap->name_off;
    int rc = names ? pcw__snapshot_want_names(snap) : PCW_OK;
    for (uint32_t i = 0; i < count && rc == PCW_OK; i++) {
        uint32_t id = pcw_ctl_get_u32(&rd), nlen = pcw_ctl_get_u32(&rd);
        uint32_t iflags = pcw_ctl_get_u32(&rd);
        if (rd.bad || nlen > PCW_MAX_INSTANCE_NAME_BYTES ||
            (iflags & ~(uint32_t)PCW_CTL_ITEM_DATA)) {
            rc = PCW_E_PROTOCOL;
            break;
        }
        const char *name = (const char *)pcw_ctl_take(&rd, nlen);
        const unsigned char *data = iflags & PCW_CTL_ITEM_DATA ? pcw_ctl_take(&rd, dsize) : NULL;
        if (rd.bad || pcw_utf8_count(name, nlen) < 0 || id >= PCW_ANY_INSTANCE_ID - 1) {
            rc = PCW_E_PROTOCOL;
            break;
        }
        if (!match(q, id, name, nlen))
            continue;
        if (pcw__snapshot_reserve(snap, 1, names, names ? (size_t)nlen + 1 : 0) != PCW_OK) {
            rc = PCW_E_NO_MEMORY;
            break;
        }
        size_t row = snap->count++;
        snap->ids[row] = id;
        unsigned char *d = snap->data + row * dsize;
        if (data && !enumerate)
            memcpy(d, data, dsize);
        else
            memset(d, 0, dsize);
        mask_counters(q, cs, d);
        if (names) {
            snap->name_off[row] = snap->names_len;
            snap->name_len[row] = nlen;
            memcpy(snap->names + snap->names_len, name, nlen);
            snap->names[snap->names_len + nlen] = 0;
            snap->names_len += nlen + 1;
        }
    }
    if (rc == PCW_OK && rd.pos != len)
        rc = PCW_E_PROTOCOL;
    if (rc != PCW_OK)
        pcw__snapshot_rollback(snap, mark);
    return rc;
}

static void encode_mask_request(pcw_ctl_writer *w, const job *j, uint32_t flags, const query *q)
{
    pcw_ctl_put_u32(w, j->cs->reg_index);
    pcw_ctl_put_u32(w, flags);
    pcw_ctl_put_u64(w, q->counter_mask);
    pcw_ctl_put_u32(w, q->instance_id);
    pcw_ctl_put_str(w, q->mask, q->mask_len);
}

/* Connect (if needed) and send each job's request. */
static void send_all(job *jobs, size_t n, uint16_t type, const query *q, uint32_t counter_index,
                     long long deadline)
{
    for (size_t i = 0; i < n; i++) {
        job *j = &jobs[i];
        /* COLLECT_END is owed only for a HOLD request actually sent: a job
         * that fails below, or loses its connection, owes nothing. */
        int hold = j->hold;
        j->hold = 0;
        if (!j->k || j->status != PCW_OK)
            continue;
        int rc = pcw__ctl_connect(j->k);
        /* A full listen backlog (a burst of connections) clears as the
         * provider accepts: retry briefly within the deadline. */
        while (rc == PCW_E_BUSY && pcw__ctl_now_ms() + CONNECT_RETRY_MS < deadline) {
            struct timespec ts = {0, CONNECT_RETRY_MS * 1000 * 1000};
            nanosleep(&ts, NULL);
            rc = pcw__ctl_connect(j->k);
        }
        if (rc == PCW_E_NOT_FOUND && !(j->cs->flags & PCW_CSET_F_CALLBACK) &&
            type != PCW_CTL_ADD_COUNTER && type != PCW_CTL_REMOVE_COUNTER) {
            /* No socket (yet): nobody to tell; the segment still reads. */
            j->k = NULL;
            continue;
        }
        if (rc != PCW_OK) {
            j->status = rc;
            continue;
        }
        unsigned char buf[256];
        pcw_ctl_writer w = {buf, 0, sizeof buf, PCW_CTL_MAX_REQUEST, 0};
        unsigned char *heap = NULL;
        if (q->mask_len > 200) {
            heap = malloc(q->mask_len + 64);
            if (!heap) {
                j->status = PCW_E_NO_MEMORY;
                continue;
            }
            w.buf = heap, w.cap = q->mask_len + 64;
        }
        if (type == PCW_CTL_ADD_COUNTER || type == PCW_CTL_REMOVE_COUNTER) {
            pcw_ctl_put_u32(&w, j->cs->reg_index);
            pcw_ctl_put_u32(&w, counter_index);
            pcw_ctl_put_u32(&w, q->instance_id);
            pcw_ctl_put_str(&w, q->mask, q->mask_len);
        } else {
            encode_mask_request(&w, j, hold ? PCW_CTL_HOLD : 0, q);
        }
        rc = w.bad ? PCW_E_INVALID_PARAMETER : pcw__ctl_send(j->k, type, w.buf, w.len, 1, deadline);
        free(heap);
        if (rc != PCW_OK)
            j->status = rc;
        else
            j->sent = 1, j->hold = hold;
    }
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

/* Finish one collect/enumerate job whose answer is in (or failed). */
static int finish(job *j, pcw_snapshot *snap, const query *q, unsigned flags, int enumerate,
                  long long deadline)
{
    j->finished = 1;
    if (j->sent) {
        j->status = j->k->status;
        /* An error reply: no COLLECT_START took effect, or the provider
         * ended the collection itself. A timeout: the provider may yet
         * hold it (it serves requests in order, so a COLLECT_END sent now
         * ends it as soon as it does). */
        if (j->status != PCW_OK && !(j->status == PCW_E_TIMEOUT && j->k->fd >= 0))
            j->hold = 0;
    }
    j->status = confirm_exit(j, j->status);
    pcw__snap_mark mark = pcw__snapshot_mark(snap);
    int rc = PCW_OK;
    if (j->status == PCW_OK) {
        /* Names are needed to match a wildcard even if not wanted (the
         * rows then keep them). The read opens this provider's source
         * entry; its callback instances below join it. */
        unsigned rflags = (flags | PCW_READ_APPEND) & ~(q->all_names ? 0u : PCW_READ_NO_NAMES);
        int r = pcw_segment_read(j->seg, j->cs, snap, rflags);
        if (r == PCW_OK) {
            snap->sources[snap->nsources - 1].source = j->source;
            filter(snap, mark.count, q, j->cs, enumerate);
        } else if (r == PCW_E_NO_MEMORY) {
            rc = r;
        } else {
            j->status = r;
        }
    }
    if (j->hold) {
        /* The provider may have frozen its updates at COLLECT_START:
         * release it as soon as its segment is read (or at once, if it did
         * not answer in time). The reply is not awaited (it is dropped by
         * id later). */
        unsigned char ri[4];
        pcw_ctl_put_le(ri, j->cs->reg_index, 4);
        long long end = pcw__ctl_now_ms() + END_GRACE_MS;
        (void)pcw__ctl_send(j->k, PCW_CTL_COLLECT_END, ri, sizeof ri, 0,
                            end > deadline ? end : deadline);
        j->hold = 0;
    }
    if (rc == PCW_OK && j->status == PCW_OK && j->sent && j->k->reply) {
        int r = add_items(snap, j->k->reply, j->k->reply_len, q, j->cs, flags, enumerate,
                          &j->cb_status);
        if (r == PCW_E_NO_MEMORY)
            rc = r;
        else if (r != PCW_OK)
            j->status = r;
    }
    if (rc != PCW_OK || j->status != PCW_OK) /* none of a failed provider's part */
        pcw__snapshot_rollback(snap, mark);
    else if (snap->nsources > mark.nsources)
        snap->sources[snap->nsources - 1].count = snap->count - snap->sources[snap->nsources - 1].first;
    return rc;
}

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

/* The engine behind collect and enumerate, over prepared jobs. */
static int run_collect(job *jobs, size_t n, int enumerate, const pcw_query *pq, pcw_snapshot *snap,
                       unsigned flags, uint32_t timeout_ms)
{
    query q = norm_query(pq);
    long long deadline = pcw__ctl_now_ms() + timeout_ms;
    for (size_t i = 0; i < n; i++)
        jobs[i].hold = !enumerate && jobs[i].k &&
                       (pcw_segment_provider(jobs[i].seg)->flags & PCW_SEG_F_CONTROL);
    send_all(jobs, n, enumerate ? PCW_CTL_ENUMERATE : PCW_CTL_COLLECT, &q, 0, deadline);
    pcw__ctl_conn *stack[16], **ks = n <= 16 ? stack : malloc(n * sizeof *ks);
    if (!ks)
        return PCW_E_NO_MEMORY;
    int rc = PCW_OK;
    for (size_t i = 0; i < n; i++)
        ks[i] = jobs[i].sent ? jobs[i].k : NULL;
    for (;;) {
        /* Finish every job whose answer is in. */
        size_t pending = 0;
        for (size_t i = 0; i < n && rc == PCW_OK; i++) {
            job *j = &jobs[i];
            if (j->finished)
                continue;
            if (j->sent && !j->k->done) {
                pending++;
                continue;
            }
            rc = finish(j, snap, &q, flags, enumerate, deadline);
        }
        if (rc != PCW_OK || pending == 0)
            break;
        pcw__ctl_wait(ks, n, deadline, 1);
    }
    if (ks != stack)
        free(ks);
    return rc;
}

static int prepare_snapshot(const pcw_counterset *meta, pcw_snapshot *snap, unsigned flags)
{
    if (!(flags & PCW_READ_APPEND))
        pcw_snapshot_clear(snap);
    else if (snap->count && snap->data_size != meta->data_size)
        return PCW_E_INVALID_PARAMETER;
    snap->data_size = meta->data_size;
    return PCW_OK;
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
    pcw__ctl_conn *k = pcw__ctl_new(info);
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

/* One job per source of m. */
static job *make_jobs(pcw_consumer *c, const pcw_merged_counterset *m, int *rc)
{
    pcw__ctl_table *t = pcw__consumer_ctl(c);
    job *jobs = calloc(m->source_count ? m->source_count : 1, sizeof *jobs);
    if (!t || !jobs) {
        free(jobs);
        *rc = PCW_E_NO_MEMORY;
        return NULL;
    }
    prune(c, t);
    for (size_t i = 0; i < m->source_count; i++) {
        job *j = &jobs[i];
        j->source = m->source_segment[i];
        j->seg = pcw_consumer_segment(c, j->source);
        j->cs = m->source_cset[i];
        if (!j->seg) {
            j->status = PCW_E_INVALID_PARAMETER;
            continue;
        }
        if ((j->cs->flags & PCW_CSET_F_CALLBACK) ||
            (pcw_segment_provider(j->seg)->flags & PCW_SEG_F_CONTROL)) {
            j->k = conn_for(t, j->seg);
            if (!j->k) {
                free(jobs);
                *rc = PCW_E_NO_MEMORY;
                return NULL;
            }
        }
    }
    *rc = PCW_OK;
    return jobs;
}

static int consumer_collect(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                            pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep,
                            int enumerate)
{
    if (!c || !m || !snap)
        return PCW_E_INVALID_PARAMETER;
    int rc = prepare_snapshot(m->meta, snap, flags);
    if (rc != PCW_OK)
        return rc;
    job *jobs = make_jobs(c, m, &rc);
    if (!jobs)
        return rc;
    rc = run_collect(jobs, m->source_count, enumerate, q, snap, flags, pcw__consumer_timeout(c));
    report(rep, jobs, m->source_count);
    free(jobs);
    return rc;
}

int pcw_consumer_collect(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                         pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep)
{
    return consumer_collect(c, m, q, snap, flags, rep, 0);
}

int pcw_consumer_enumerate(pcw_consumer *c, const pcw_merged_counterset *m, const pcw_query *q,
                           pcw_snapshot *snap, unsigned flags, pcw_collect_report *rep)
{
    return consumer_collect(c, m, q, snap, flags, rep, 1);
}

static int add_remove(pcw_consumer *c, const pcw_merged_counterset *m, uint32_t counter_index,
                      const pcw_query *pq, pcw_collect_report *rep, uint16_t type)
{
    if (!c || !m || counter_index >= m->meta->counter_count)
        return PCW_E_INVALID_PARAMETER;
    int rc;
    job *jobs = make_jobs(c, m, &rc);
    if (!jobs)
        return rc;
    query q = norm_query(pq);
    size_t n = m->source_count;
    long long deadline = pcw__ctl_now_ms() + pcw__consumer_timeout(c);
    send_all(jobs, n, type, &q, counter_index, deadline);
    pcw__ctl_conn *stack[16], **ks = n <= 16 ? stack : malloc(n * sizeof *ks);
    if (!ks) {
        free(jobs);
        return PCW_E_NO_MEMORY;
    }
    for (size_t i = 0; i < n; i++)
        ks[i] = jobs[i].sent ? jobs[i].k : NULL;
    pcw__ctl_wait(ks, n, deadline, 0);
    rc = PCW_OK;
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].sent)
            jobs[i].status = jobs[i].k->status;
        jobs[i].status = confirm_exit(&jobs[i], jobs[i].status);
        if (rc == PCW_OK)
            rc = jobs[i].status;
    }
    report(rep, jobs, n);
    if (ks != stack)
        free(ks);
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

int pcw_segment_collect(pcw_segment *seg, const pcw_counterset *cs, const pcw_query *q,
                        pcw_snapshot *snap, unsigned flags, int enumerate, uint32_t timeout_ms,
                        int *callback_status)
{
    if (!seg || !cs || !snap)
        return PCW_E_INVALID_PARAMETER;
    int rc = prepare_snapshot(cs, snap, flags);
    if (rc != PCW_OK)
        return rc;
    job j;
    memset(&j, 0, sizeof j);
    j.seg = seg;
    j.cs = cs;
    if ((cs->flags & PCW_CSET_F_CALLBACK) ||
        (pcw_segment_provider(seg)->flags & PCW_SEG_F_CONTROL)) {
        j.k = pcw__ctl_new(pcw_segment_provider(seg));
        if (!j.k)
            return PCW_E_NO_MEMORY;
    }
    pcw__ctl_conn *k = j.k; /* run_collect may drop j.k (no socket) */
    rc = run_collect(&j, 1, enumerate, q, snap, flags, timeout_ms ? timeout_ms : 1000);
    pcw__ctl_free(k);
    if (callback_status)
        *callback_status = j.cb_status;
    return rc != PCW_OK ? rc : j.status;
}
