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
 * from its members, before the scale (HIST_COMPUTED_FLAGS). A histogram's
 * statistic ("Latency:p99") of an instance logs the histogram's words as
 * they stand (PCW_HIST_CUMULATIVE), from which hist_cook takes the
 * interval as the query did; its identity names the shape and the
 * statistic. Samples gather in a block
 * that is appended whole once it spans `flush_ns` (pcwstat's --flush,
 * default 10 s; 0: every sample is a block): a recorder killed at any
 * moment loses at most the samples of that span, and more samples in a
 * block are what lets the deltas and zstd make the log small. The log is
 * synced as HIST_SYNC_DEFAULT says.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcw/histogram.h>

#include "pcwstat.h"

struct recorder {
    hist_writer *w;
    const column *cols;
    size_t n;
    hist_series *last; /* per column: the identity last logged */
    unsigned char *known, *kind;
    hist_value *v;
    uint64_t **hw;        /* per column: a histogram's words (NULL: none yet) */
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
    for (size_t i = 0; r->hw && i < r->n; i++)
        free(r->hw[i]);
    free(r->hw);
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
        r->hw = calloc(n ? n : 1, sizeof *r->hw);
    }
    if (!r || !r->last || !r->known || !r->kind || !r->v || !r->hw) {
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

/* The counter's metadata (the counterset's first registration's, which
 * every merged one shares: the default scale as the query applies it, a
 * histogram's shape), or NULL. */
static const pcw_counter *meta_of(pcw_pdh *q, const pcw_pdh_value *v)
{
    const pcw_merged_counterset *m =
        pcw_consumer_find_counterset(pcw_pdh_consumer(q), v->counterset);
    if (!m || v->counter_index >= m->meta->counter_count)
        return NULL;
    return &m->meta->counters[v->counter_index];
}

/* A histogram column's identity: the shape and the statistic its counter
 * name ends with ("Latency:p99"; the statistic's name has no ':'). */
static void histogram_ident(const pcw_counter *c, const pcw_pdh_value *v, hist_series *s)
{
    s->hshape = c ? c->histogram : 0;
    memset(&s->hstat, 0, sizeof s->hstat);
    const char *colon = strrchr(v->counter, ':');
    if (!colon || pcw_hist_stat_parse(colon + 1, &s->hstat) != PCW_OK)
        s->hshape = 0; /* not a statistic: hist_writer_ident refuses it */
}

/* Column i's histogram words as they stand into r->hw[i] and hv (its value
 * VALID): the words the provider wrote, sum and zero bucket first. A
 * histogram whose count since the start does not fit 64 bits has no
 * distribution to take them from: OVERFLOW. */
static int histogram_words(recorder *r, size_t i, uint32_t shape, hist_value *hv)
{
    pcw_hist_dist d;
    if (pcw_pdh_get_histogram(r->cols[i].h, 0, PCW_HIST_CUMULATIVE, &d) != PCW_OK)
        return -1;
    if (d.status != PCW_CSTATUS_VALID || d.shape != shape) {
        hv->raw.status = d.status == PCW_CSTATUS_VALID ? PCW_CSTATUS_NO_DATA : d.status;
        return 0;
    }
    uint32_t n = 2 + d.nbuckets;
    if (!r->hw[i] && !(r->hw[i] = malloc((size_t)(2 + PCW_HIST_MAX_BUCKETS) * sizeof **r->hw)))
        return -1;
    r->hw[i][0] = d.sum, r->hw[i][1] = d.zero;
    memcpy(r->hw[i] + 2, d.buckets, (size_t)d.nbuckets * sizeof *d.buckets);
    hv->hwords = r->hw[i], hv->hn = n;
    return 0;
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
            const pcw_counter *c = meta_of(q, &v);
            uint32_t shape = c && v.counter_type == PERF_PCW_HISTOGRAM ? c->histogram : 0;
            if (!r->known[i] || s->provider_id != v.provider_id ||
                s->instance_id != v.instance_id || s->dup_index != v.dup_index ||
                s->type != v.counter_type || s->hshape != shape) {
                s->type = v.counter_type;
                s->scale = c ? c->default_scale : 0;
                histogram_ident(c, &v, s);
                s->provider_id = v.provider_id;
                s->instance_id = v.instance_id;
                s->pid = v.pid;
                s->dup_index = v.dup_index;
                r->known[i] = 1;
                if (hist_writer_ident(r->w, (uint32_t)i, s)) {
                    snprintf(why, why_len,
                             "column %zu: its histograms' buckets are more than a log may keep "
                             "(%u words), or out of memory",
                             i + 1, HIST_MAX_HWORDS);
                    return -1;
                }
            }
            if (s->hshape && r->kind[i] == HIST_KIND_RAW &&
                histogram_words(r, i, s->hshape, hv) != 0) {
                snprintf(why, why_len, "out of memory");
                return -1;
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
