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
 * from its members, before the scale (PCW__HIST_COMPUTED_FLAGS). A histogram's
 * statistic ("Latency:p99") of an instance logs the histogram's words as
 * they stand (PCW_HIST_CUMULATIVE), from which pcw__hist_cook takes the
 * interval as the query did; its identity names the shape and the
 * statistic. Samples gather in a block
 * that is appended whole once it spans `flush_ns` (pcwstat's --flush,
 * default 10 s; 0: every sample is a block): a recorder killed at any
 * moment loses at most the samples of that span, and more samples in a
 * block are what lets the deltas and zstd make the log small. The log is
 * synced as PCW__HIST_SYNC_DEFAULT says.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcw/histogram.h>

#include "pcwstat.h"

struct recorder {
    pcw__hist_writer *w;
    char *file; /* the log's name: the file being written */
    const column *cols;
    size_t n, cap;          /* series (columns) logged; room in the arrays below */
    pcw__hist_series *last; /* per column: the identity last logged */
    unsigned char *known, *kind;
    pcw__hist_value *v;
    uint64_t **hw;        /* per column: a histogram's words (NULL: none yet) */
    uint64_t flush_ns;    /* a block spans this much time at most */
    uint64_t block_start; /* the open block's first sample's time; 0: none */
    uint64_t max_size;    /* rotate once the file is this long (0: never) */
    unsigned max_files;   /* files kept: FILE, FILE.1 .. FILE.(max_files - 1) */
    uint64_t mono, real;  /* the last sample's times */
};

void record_close(recorder *r)
{
    if (!r)
        return;
    free(r->last);
    free(r->known);
    free(r->kind);
    free(r->v);
    for (size_t i = 0; r->hw && i < r->cap; i++)
        free(r->hw[i]);
    free(r->hw);
    free(r->file);
    free(r);
}

/* The kind of column i's value, from what the query says it is now (an
 * empty column is taken for a provider's instance). */
static uint32_t kind_of(const column *c)
{
    pcw_pdh_value v;
    if (pcw_pdh_value_count(c->h) > 0 && pcw_pdh_get_value(c->h, 0, 0, &v) == PCW_OK &&
        v.kind != PCW_PDH_INSTANCE)
        return PCW__HIST_KIND_COMPUTED;
    return PCW__HIST_KIND_RAW;
}

/* Room for n columns in the per-column arrays (new ones zero). */
static int room(recorder *r, size_t n)
{
    if (n <= r->cap)
        return 0;
    size_t cap = r->cap ? r->cap : 16;
    while (cap < n)
        cap *= 2;
    pcw__hist_series *l = realloc(r->last, cap * sizeof *l);
    if (l)
        r->last = l;
    unsigned char *k = l ? realloc(r->known, cap) : NULL;
    if (k)
        r->known = k;
    unsigned char *d = k ? realloc(r->kind, cap) : NULL;
    if (d)
        r->kind = d;
    pcw__hist_value *v = d ? realloc(r->v, cap * sizeof *v) : NULL;
    if (v)
        r->v = v;
    uint64_t **hw = v ? realloc(r->hw, cap * sizeof *hw) : NULL;
    if (!hw)
        return -1;
    r->hw = hw;
    size_t more = cap - r->cap;
    memset(r->last + r->cap, 0, more * sizeof *r->last);
    memset(r->known + r->cap, 0, more);
    memset(r->kind + r->cap, 0, more);
    memset(r->v + r->cap, 0, more * sizeof *r->v);
    memset(r->hw + r->cap, 0, more * sizeof *r->hw);
    r->cap = cap;
    return 0;
}

/* Series [from, r->n) into the log. */
static int define_series(recorder *r, size_t from, char *why, size_t why_len)
{
    for (size_t i = from; i < r->n; i++)
        if (pcw__hist_writer_series(r->w, (uint32_t)i, r->cols[i].path, r->kind[i]))
            return snprintf(why, why_len,
                            "%s: cannot define series %zu (more than %u, or out of "
                            "memory)",
                            r->file, i + 1, PCW__HIST_MAX_SERIES),
                   -1;
    return 0;
}

int record_columns(recorder *r, const column *cols, size_t n, char *why, size_t why_len)
{
    if (n < r->n || room(r, n)) {
        snprintf(why, why_len, "out of memory");
        return -1;
    }
    size_t from = r->n;
    r->cols = cols;
    for (size_t i = from; i < n; i++)
        r->kind[i] = (unsigned char)kind_of(&cols[i]);
    r->n = n;
    return define_series(r, from, why, why_len);
}

void record_rotation(recorder *r, uint64_t max_size, unsigned max_files)
{
    r->max_size = max_size;
    r->max_files = max_files < 2 ? 2 : max_files;
}

recorder *record_open(int fd, const char *file, const column *cols, size_t n, uint64_t flush_ns,
                      char *why, size_t why_len)
{
    recorder *r = calloc(1, sizeof *r);
    if (!r || !(r->file = strdup(file))) {
        snprintf(why, why_len, "out of memory");
        free(r);
        close(fd);
        return NULL;
    }
    r->flush_ns = flush_ns;
    if (pcw__hist_writer_open(&r->w, fd, file, NULL, why, why_len)) {
        record_close(r);
        return NULL;
    }
    if (record_columns(r, cols, n, why, why_len)) {
        pcw__hist_writer_close(r->w, NULL, 0);
        record_close(r);
        return NULL;
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
static void histogram_ident(const pcw_counter *c, const pcw_pdh_value *v, pcw__hist_series *s)
{
    s->hshape = c ? c->histogram : 0;
    memset(&s->hstat, 0, sizeof s->hstat);
    const char *colon = strrchr(v->counter, ':');
    if (!colon || pcw_hist_stat_parse(colon + 1, &s->hstat) != PCW_OK)
        s->hshape = 0; /* not a statistic: pcw__hist_writer_ident refuses it */
}

/* Column i's histogram words as they stand into r->hw[i] and hv (its value
 * VALID): the words the provider wrote, sum and zero bucket first. A
 * histogram whose count since the start does not fit 64 bits has no
 * distribution to take them from: OVERFLOW. */
static int histogram_words(recorder *r, size_t i, uint32_t shape, pcw__hist_value *hv)
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

/* FILE.k's name into buf (k 0: FILE). */
static int numbered(char *buf, size_t len, const char *file, unsigned k)
{
    int n = k ? snprintf(buf, len, "%s.%u", file, k) : snprintf(buf, len, "%s", file);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The file reached max_size at the end of a block: close it (synced), move
 * FILE.k to FILE.k+1 and FILE to FILE.1 (the oldest, FILE.(max_files-1),
 * replaced), and start FILE again: every series defined anew, every known
 * identity, then the last sample once more - the new file's first sample
 * primes its rates as a log's first sample does, so FILE.1's rows and
 * FILE's follow on without a gap or a repeat. FILE is created new
 * (O_EXCL, O_NOFOLLOW): a name planted in between is an error. */
int record_shift(const char *file, unsigned max_files, char *why, size_t why_len)
{
    char from[PATH_MAX], to[PATH_MAX];
    for (unsigned k = (max_files < 2 ? 2 : max_files) - 1; k >= 1; k--) {
        if (numbered(from, sizeof from, file, k - 1) || numbered(to, sizeof to, file, k))
            return snprintf(why, why_len, "%s: name too long to rotate", file), -1;
        if (rename(from, to) != 0 && errno != ENOENT)
            return snprintf(why, why_len, "%s: cannot rotate to %s: %s", from, to, strerror(errno)),
                   -1;
    }
    return 0;
}

static int rotate(recorder *r, char *why, size_t why_len)
{
    int rc = pcw__hist_writer_close(r->w, why, why_len);
    r->w = NULL;
    if (rc || record_shift(r->file, r->max_files, why, why_len))
        return -1;
    int fd = open(r->file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        return snprintf(why, why_len, "%s: cannot start the next file: %s", r->file,
                        strerror(errno)),
               -1;
    if (pcw__hist_writer_open(&r->w, fd, r->file, NULL, why, why_len) ||
        define_series(r, 0, why, why_len))
        return -1;
    for (size_t i = 0; i < r->n; i++)
        if (r->known[i] && pcw__hist_writer_ident(r->w, (uint32_t)i, &r->last[i]))
            return snprintf(why, why_len, "%s: out of memory", r->file), -1;
    if (pcw__hist_writer_sample(r->w, r->mono, r->real, r->v, r->n))
        return snprintf(why, why_len, "%s: out of memory", r->file), -1;
    r->block_start = r->mono;
    return 0;
}

int record_sample(recorder *r, pcw_pdh *q, char *why, size_t why_len)
{
    if (!r->w)
        return snprintf(why, why_len, "%s: an earlier error ended the log", r->file), -1;
    for (size_t i = 0; i < r->n; i++) {
        pcw__hist_value *hv = &r->v[i];
        memset(hv, 0, sizeof *hv);
        hv->raw.status = PCW_CSTATUS_NO_INSTANCE;
        pcw_pdh_value v;
        unsigned flags = r->kind[i] == PCW__HIST_KIND_COMPUTED ? PCW__HIST_COMPUTED_FLAGS : 0;
        if (pcw_pdh_value_count(r->cols[i].h) == 0 ||
            pcw_pdh_get_value(r->cols[i].h, 0, flags, &v) != PCW_OK)
            continue;
        if ((v.kind != PCW_PDH_INSTANCE) != (r->kind[i] == PCW__HIST_KIND_COMPUTED)) {
            hv->raw.status = PCW_CSTATUS_NO_DATA; /* changed kind: not logged */
            continue;
        }
        if (r->kind[i] == PCW__HIST_KIND_COMPUTED) {
            hv->raw.status = v.status;
            hv->computed = v.value;
        } else {
            hv->raw = v.raw;
        }
        pcw__hist_series *s = &r->last[i];
        if (v.raw.status == PCW_CSTATUS_VALID || r->kind[i] == PCW__HIST_KIND_COMPUTED) {
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
                if (pcw__hist_writer_ident(r->w, (uint32_t)i, s)) {
                    snprintf(why, why_len,
                             "column %zu: its histograms' buckets are more than a log may keep "
                             "(%u words), or out of memory",
                             i + 1, PCW__HIST_MAX_HWORDS);
                    return -1;
                }
            }
            if (s->hshape && r->kind[i] == PCW__HIST_KIND_RAW &&
                histogram_words(r, i, s->hshape, hv) != 0) {
                snprintf(why, why_len, "out of memory");
                return -1;
            }
        }
    }
    uint64_t now = pcw_pdh_time_ns(q);
    r->mono = now, r->real = pcw_pdh_realtime_ns(q);
    if (pcw__hist_writer_sample(r->w, now, r->real, r->v, r->n)) {
        /* A block it ended could not be written (the flush says why), or
         * out of memory. */
        if (pcw__hist_writer_flush(r->w, why, why_len) == 0)
            snprintf(why, why_len, "out of memory");
        return -1;
    }
    if (!r->block_start)
        r->block_start = now;
    if (now - r->block_start < r->flush_ns)
        return 0;
    r->block_start = 0;
    if (pcw__hist_writer_flush(r->w, why, why_len))
        return -1;
    if (r->max_size && pcw__hist_writer_bytes(r->w) >= r->max_size)
        return rotate(r, why, why_len);
    return 0;
}

int record_finish(recorder *r, char *why, size_t why_len)
{
    int rc = r->w ? pcw__hist_writer_close(r->w, why, why_len) : 0;
    r->w = NULL;
    record_close(r);
    return rc;
}
