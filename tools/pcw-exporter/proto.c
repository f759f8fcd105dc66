/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/proto.c - the protobuf exposition (proto.h).
 *
 * protobuf-c's messages point to their parts (repeated fields are arrays
 * of pointers), so a family's metrics, labels and buckets are carved from
 * an arena of blocks kept from family to family: after the first scrape a
 * family costs no allocation. Native buckets become spans of the
 * non-empty buckets and their deltas, as Prometheus' client libraries
 * write them.
 */
#include <stdlib.h>
#include <string.h>

#include "io/prometheus/client/metrics.pb-c.h"
#include "mapping.h"
#include "proto.h"

typedef Io__Prometheus__Client__MetricFamily MetricFamily;
typedef Io__Prometheus__Client__Metric Metric;
typedef Io__Prometheus__Client__LabelPair LabelPair;
typedef Io__Prometheus__Client__Histogram Histogram;
typedef Io__Prometheus__Client__Bucket Bucket;
typedef Io__Prometheus__Client__BucketSpan BucketSpan;

/* ---- the arena ------------------------------------------------------------ */

typedef struct block {
    struct block *next;
    size_t cap, used;
    _Alignas(16) unsigned char mem[];
} block;

struct proto_fam {
    block *head, *cur; /* blocks, and the one being carved */
    MetricFamily mf;
    Metric **metric; /* mf.metric's array, grown by realloc */
    size_t cap;
    int mt;
    int failed;
};

static void *carve(proto_fam *f, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    /* The next kept block, when this one is full (each starts empty). */
    while (f->cur && f->cur->cap - f->cur->used < n && f->cur->next) {
        f->cur = f->cur->next;
        f->cur->used = 0;
    }
    if (!f->cur || f->cur->cap - f->cur->used < n) { /* f->cur is the last */
        size_t cap = n > 65536 ? n : 65536;
        block *b = malloc(sizeof *b + cap);
        if (!b) {
            f->failed = 1;
            return NULL;
        }
        b->next = NULL;
        b->cap = cap;
        b->used = 0;
        if (f->cur)
            f->cur->next = b;
        else
            f->head = b;
        f->cur = b;
    }
    void *p = f->cur->mem + f->cur->used;
    f->cur->used += n;
    memset(p, 0, n);
    return p;
}

proto_fam *proto_fam_new(void)
{
    return calloc(1, sizeof(proto_fam));
}

void proto_fam_free(proto_fam *f)
{
    if (!f)
        return;
    for (block *b = f->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(f->metric);
    free(f);
}

void proto_fam_begin(proto_fam *f, const char *name, const char *help, int mt)
{
    f->cur = f->head;
    if (f->head)
        f->head->used = 0;
    f->failed = 0;
    f->mt = mt;
    io__prometheus__client__metric_family__init(&f->mf);
    f->mf.name = (char *)name;
    f->mf.help = (char *)help;
    f->mf.has_type = 1;
    f->mf.type = mt == MT_COUNTER     ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER
                 : mt == MT_SUMMARY   ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__SUMMARY
                 : mt == MT_HISTOGRAM ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM
                                      : IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE;
    f->mf.n_metric = 0;
    f->mf.metric = f->metric;
}

/* A new metric with its labels; NULL when out of memory. */
static Metric *metric(proto_fam *f, const proto_label *l, size_t nl)
{
    if (f->failed)
        return NULL;
    if (f->mf.n_metric == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        Metric **v = realloc(f->metric, cap * sizeof *v);
        if (!v) {
            f->failed = 1;
            return NULL;
        }
        f->metric = f->mf.metric = v;
        f->cap = cap;
    }
    Metric *m = carve(f, sizeof *m);
    LabelPair *lp = carve(f, nl * sizeof *lp + 1);
    LabelPair **lv = carve(f, nl * sizeof *lv + 1);
    if (!m || !lp || !lv)
        return NULL;
    io__prometheus__client__metric__init(m);
    for (size_t i = 0; i < nl; i++) {
        io__prometheus__client__label_pair__init(&lp[i]);
        lp[i].name = (char *)l[i].name;
        lp[i].value = (char *)l[i].value;
        lv[i] = &lp[i];
    }
    m->n_label = nl;
    m->label = lv;
    f->mf.metric[f->mf.n_metric++] = m;
    return m;
}

int proto_add_number(proto_fam *f, const proto_label *l, size_t nl, double v)
{
    Metric *m = metric(f, l, nl);
    if (!m)
        return -1;
    if (f->mt == MT_COUNTER) {
        Io__Prometheus__Client__Counter *c = carve(f, sizeof *c);
        if (!c)
            return -1;
        io__prometheus__client__counter__init(c);
        c->has_value = 1;
        c->value = v;
        m->counter = c;
    } else {
        Io__Prometheus__Client__Gauge *g = carve(f, sizeof *g);
        if (!g)
            return -1;
        io__prometheus__client__gauge__init(g);
        g->has_value = 1;
        g->value = v;
        m->gauge = g;
    }
    return 0;
}

int proto_add_summary(proto_fam *f, const proto_label *l, size_t nl, uint64_t count, double sum)
{
    Metric *m = metric(f, l, nl);
    Io__Prometheus__Client__Summary *s = m ? carve(f, sizeof *s) : NULL;
    if (!s)
        return -1;
    io__prometheus__client__summary__init(s);
    s->has_sample_count = s->has_sample_sum = 1;
    s->sample_count = count;
    s->sample_sum = sum;
    m->summary = s;
    return 0;
}

/* The spans and deltas of the non-empty native buckets. */
static int native(proto_fam *f, Histogram *h, const proto_hist *x)
{
    uint32_t nonempty = 0, spans = 0;
    for (uint32_t j = 0; j < x->nbuckets; j++)
        if (x->buckets[j]) {
            spans += nonempty == 0 || !x->buckets[j - 1];
            nonempty++;
        }
    BucketSpan *sp = carve(f, spans * sizeof *sp + 1);
    BucketSpan **spv = carve(f, spans * sizeof *spv + 1);
    int64_t *d = carve(f, nonempty * sizeof *d + 1);
    if (!sp || !spv || !d)
        return -1;
    uint32_t k = 0, n = 0;
    int32_t next = 0; /* the index after the previous span */
    uint64_t prev = 0;
    for (uint32_t j = 0; j < x->nbuckets; j++) {
        if (!x->buckets[j])
            continue;
        int32_t idx = x->first_index + (int32_t)j;
        if (n == 0 || !x->buckets[j - 1]) {
            io__prometheus__client__bucket_span__init(&sp[k]);
            sp[k].has_offset = sp[k].has_length = 1;
            /* The first span starts at its index; each next one at the
             * gap after the previous one. */
            sp[k].offset = k == 0 ? idx : idx - next;
            spv[k] = &sp[k];
            k++;
        }
        sp[k - 1].length++;
        next = idx + 1;
        /* Counts below 2^63 (the caller's count is): the difference fits. */
        d[n++] = (int64_t)x->buckets[j] - (int64_t)prev;
        prev = x->buckets[j];
    }
    h->n_positive_span = spans;
    h->positive_span = spv;
    h->n_positive_delta = nonempty;
    h->positive_delta = d;
    return 0;
}

int proto_add_histogram(proto_fam *f, const proto_label *l, size_t nl, const proto_hist *x)
{
    Metric *m = metric(f, l, nl);
    Histogram *h = m ? carve(f, sizeof *h) : NULL;
    uint32_t nb = x->plan->n;
    Bucket *b = h ? carve(f, nb * sizeof *b + 1) : NULL;
    Bucket **bv = b ? carve(f, nb * sizeof *bv + 1) : NULL;
    if (!bv)
        return -1;
    io__prometheus__client__histogram__init(h);
    h->has_sample_count = h->has_sample_sum = 1;
    h->sample_count = x->count;
    h->sample_sum = x->sum;
    /* Classic: the finite bounds (the +Inf bucket is the count). */
    for (uint32_t k = 0; k < nb; k++) {
        io__prometheus__client__bucket__init(&b[k]);
        b[k].has_cumulative_count = b[k].has_upper_bound = 1;
        b[k].cumulative_count = x->cum[k];
        b[k].upper_bound = x->plan->bound[k];
        bv[k] = &b[k];
    }
    h->n_bucket = nb;
    h->bucket = bv;
    /* Native. */
    h->has_schema = h->has_zero_threshold = h->has_zero_count = 1;
    h->schema = x->schema;
    h->zero_threshold = x->zero_threshold;
    h->zero_count = x->zero_count;
    if (native(f, h, x))
        return -1;
    m->histogram = h;
    return 0;
}

/* v as a base-128 varint; its length. */
static size_t varint(unsigned char *at, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        at[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    at[n++] = (unsigned char)v;
    return n;
}

void proto_fam_end(proto_fam *f, ebuf *out)
{
    if (f->failed) {
        out->failed = 1;
        return;
    }
    if (!f->mf.n_metric)
        return;
    size_t n = io__prometheus__client__metric_family__get_packed_size(&f->mf);
    if (!eb_need(out, n + 10))
        return;
    unsigned char *at = (unsigned char *)out->p + out->len;
    size_t h = varint(at, n);
    size_t w = io__prometheus__client__metric_family__pack(&f->mf, at + h);
    out->len += h + w;
}
