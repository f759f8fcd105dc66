/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwstat/record.c - `pcwstat -f BIN -o FILE`: the columns' raw
 * samples into a pcw log (lib/history, docs/history.md), from which
 * pcwrelog cooks what the live CSV would have shown.
 *
 * One series per column. A column whose value is a provider's instance
 * logs its raw sample (pcw_pdh_value.raw) and, whenever it changes, its
 * identity (provider, instance id, #n) with the counter type and scale: the
 * live query cooks a sample against the previous one of the same instance
 * only. A _Total or aggregate column logs the value the query computed
 * from its members, before the scale (HIST_COMPUTED_FLAGS). Samples gather in a block
 * that is appended whole once it spans `flush_ns` (pcwstat's --flush,
 * default 10 s; 0: every sample is a block): a recorder killed at any
 * moment loses at most the samples of that span, and more samples in a
 * block are what lets the deltas and zstd make the log small. The log is
 * synced as HIST_SYNC_DEFAULT says.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcwstat.h"

struct recorder {
    hist_writer *w;
    const column *cols;
    size_t n;
    hist_series *last; /* per column: the identity last logged */
    unsigned char *known, *kind;
    hist_value *v;
    uint64_t flush_ns;    /* a block spans this much time at most */
    uint64_t block_start; /* the open block's first sample's time; 0: none */
};

void record_close(recorder *r)
{
    if (!r)
        return;
    free(r->last);
    free(r->known);
    free(r->kind);
    free(r->v);
    free(r);
}

/* The kind of column i's value, from what the query says it is now (an
 * empty column is taken for a provider's instance). */
static uint32_t kind_of(const column *c)
{
    pcw_pdh_value v;
    if (pcw_pdh_value_count(c->h) > 0 && pcw_pdh_get_value(c->h, 0, 0, &v) == PCW_OK &&
        v.kind != PCW_PDH_INSTANCE)
        return HIST_KIND_COMPUTED;
    return HIST_KIND_RAW;
}

recorder *record_open(int fd, const char *file, const column *cols, size_t n, uint64_t flush_ns,
                      char *why, size_t why_len)
{
    recorder *r = calloc(1, sizeof *r);
    if (r) {
        r->last = calloc(n ? n : 1, sizeof *r->last);
        r->known = calloc(n ? n : 1, 1);
        r->kind = calloc(n ? n : 1, 1);
        r->v = calloc(n ? n : 1, sizeof *r->v);
    }
    if (!r || !r->last || !r->known || !r->kind || !r->v) {
        snprintf(why, why_len, "out of memory");
        record_close(r);
        close(fd);
        return NULL;
    }
    r->cols = cols, r->n = n, r->flush_ns = flush_ns;
    if (hist_writer_open(&r->w, fd, file, NULL, why, why_len)) {
        record_close(r);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        r->kind[i] = (unsigned char)kind_of(&cols[i]);
        if (hist_writer_series(r->w, (uint32_t)i, cols[i].path, r->kind[i])) {
            snprintf(why, why_len, "%s: out of memory", file);
            hist_writer_close(r->w, NULL, 0);
            r->w = NULL;
            record_close(r);
            return NULL;
        }
    }
    return r;
}

/* The counter's default scale, as the query applies it (the counterset's
 * first registration's metadata, which every merged one shares). */
static int32_t scale_of(pcw_pdh *q, const pcw_pdh_value *v)
{
    const pcw_merged_counterset *m =
        pcw_consumer_find_counterset(pcw_pdh_consumer(q), v->counterset);
    if (!m || v->counter_index >= m->meta->counter_count)
        return 0;
    return m->meta->counters[v->counter_index].default_scale;
}

int record_sample(recorder *r, pcw_pdh *q, char *why, size_t why_len)
{
    for (size_t i = 0; i < r->n; i++) {
        hist_value *hv = &r->v[i];
        memset(hv, 0, sizeof *hv);
        hv->raw.status = PCW_CSTATUS_NO_INSTANCE;
        pcw_pdh_value v;
        unsigned flags = r->kind[i] == HIST_KIND_COMPUTED ? HIST_COMPUTED_FLAGS : 0;
        if (pcw_pdh_value_count(r->cols[i].h) == 0 ||
            pcw_pdh_get_value(r->cols[i].h, 0, flags, &v) != PCW_OK)
            continue;
        if ((v.kind != PCW_PDH_INSTANCE) != (r->kind[i] == HIST_KIND_COMPUTED)) {
            hv->raw.status = PCW_CSTATUS_NO_DATA; /* changed kind: not logged */
            continue;
        }
        if (r->kind[i] == HIST_KIND_COMPUTED) {
            hv->raw.status = v.status;
            hv->computed = v.value;
        } else {
            hv->raw = v.raw;
        }
        hist_series *s = &r->last[i];
        if (v.raw.status == PCW_CSTATUS_VALID || r->kind[i] == HIST_KIND_COMPUTED) {
            if (!r->known[i] || s->provider_id != v.provider_id ||
                s->instance_id != v.instance_id || s->dup_index != v.dup_index ||
                s->type != v.counter_type) {
                s->type = v.counter_type;
                s->scale = scale_of(q, &v);
                s->provider_id = v.provider_id;
                s->instance_id = v.instance_id;
                s->pid = v.pid;
                s->dup_index = v.dup_index;
                r->known[i] = 1;
                if (hist_writer_ident(r->w, (uint32_t)i, s)) {
                    snprintf(why, why_len, "out of memory");
                    return -1;
                }
            }
        }
    }
    uint64_t now = pcw_pdh_time_ns(q);
    if (hist_writer_sample(r->w, now, pcw_pdh_realtime_ns(q), r->v, r->n)) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    if (!r->block_start)
        r->block_start = now;
    if (now - r->block_start < r->flush_ns)
        return 0;
    r->block_start = 0;
    return hist_writer_flush(r->w, why, why_len);
}

int record_finish(recorder *r, char *why, size_t why_len)
{
    int rc = hist_writer_close(r->w, why, why_len);
    r->w = NULL;
    record_close(r);
    return rc;
}
