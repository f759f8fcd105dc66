/* SPDX-License-Identifier: MIT */
/*
 * lib/query/rank.c - a column's first instances in order, from a stream
 * (rank.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rank.h"

static int key_less(const pcw_pdh_ranked *a, const pcw_pdh_ranked *b)
{
    return a->value < b->value || (a->value == b->value && a->instance < b->instance);
}

static int key_cmp(const void *a, const void *b)
{
    return key_less(a, b) ? -1 : key_less(b, a) ? 1 : 0;
}

void pcw__q_rank_start(pcw__q_rank *r, pcw_pdh_ranked *buf, size_t room, size_t want,
                       int descending, double bound)
{
    memset(r, 0, sizeof *r);
    r->buf = buf;
    r->room = room;
    r->want = want;
    r->s = descending ? -1.0 : 1.0;
    r->tv = INFINITY;
    r->ti = SIZE_MAX;
    r->rng = 0x9e3779b97f4a7c15ull;
    if (!isnan(bound)) {
        r->tv = r->s * bound;
        r->bounded = 1;
    }
}

static size_t rnd(pcw__q_rank *r, size_t n)
{
    r->rng ^= r->rng << 13;
    r->rng ^= r->rng >> 7;
    r->rng ^= r->rng << 17;
    return (size_t)(r->rng % n);
}

/* Rearrange a[0, n) so that a[k] is the key of rank k, smaller keys before
 * it. Pivots: the median of three keys drawn at pseudo-random places, so
 * that no order of the values (a provider's choice) is a worst case by
 * construction; three-way partitions, so equal keys cost nothing extra. */
static void select_key(pcw__q_rank *r, pcw_pdh_ranked *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 16) {
        pcw_pdh_ranked x = a[lo + rnd(r, hi - lo)], y = a[lo + rnd(r, hi - lo)],
                       z = a[lo + rnd(r, hi - lo)], p;
        if (key_less(&x, &y))
            p = key_less(&y, &z) ? y : (key_less(&x, &z) ? z : x);
        else
            p = key_less(&x, &z) ? x : (key_less(&y, &z) ? z : y);
        size_t lt = lo, i = lo, gt = hi; /* < p | == p | unseen | > p */
        while (i < gt) {
            pcw_pdh_ranked t = a[i];
            if (key_less(&t, &p)) {
                a[i++] = a[lt];
                a[lt++] = t;
            } else if (key_less(&p, &t)) {
                a[i] = a[--gt];
                a[gt] = t;
            } else {
                i++;
            }
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return;
    }
    qsort(a + lo, hi - lo, sizeof *a, key_cmp);
}

void pcw__q_rank_cut(pcw__q_rank *r)
{
    select_key(r, r->buf, r->n, r->want - 1);
    r->n = r->want;
    /* The want-th key (the ones before it are smaller): anything after it
     * in the order is dropped from now on. */
    r->tv = r->buf[r->want - 1].value;
    r->ti = r->buf[r->want - 1].instance;
    r->cut = 1;
}

size_t pcw__q_rank_end(pcw__q_rank *r, pcw_pdh_ranked *out)
{
    size_t n = r->n;
    if (n > r->want) {
        select_key(r, r->buf, n, r->want - 1);
        n = r->want;
    }
    qsort(r->buf, n, sizeof *r->buf, key_cmp);
    for (size_t i = 0; i < n; i++) {
        out[i].value = r->s * r->buf[i].value; /* exact: a negation or nothing */
        out[i].instance = r->buf[i].instance;
    }
    return n;
}

void pcw__q_rank_plain(pcw__q_rank *r, const unsigned char *x, size_t nrows, size_t stride,
                       size_t first)
{
    /* (double)w is what the kernels' conversion gives bit for bit
     * (kernels.c: exact below 2^52, the C conversion above). One compare
     * rejects a value beyond the threshold: with a good bound, nearly all. */
    const double s = r->s;
    for (size_t i = 0; i < nrows; i++, x += stride) {
        uint64_t w;
        memcpy(&w, x, sizeof w);
        double k = s * (double)w;
        if (k > r->tv)
            continue;
        pcw__q_rank_offer(r, (double)w, first + i);
    }
}
