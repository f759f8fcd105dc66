/* SPDX-License-Identifier: MIT */
/*
 * lib/query/histogram.c - a histogram's statistics (pcw/pdh.h,
 * "histograms"): their names, which a counter part selects, a bucket's
 * bounds, and the statistics of one distribution (pcw_hist_cook). Pure
 * functions; the distributions of a query's instances and totals are
 * hist_query.c's.
 *
 * Every word of a distribution comes from shared memory (hostile): counts
 * that overflow give PCW_CSTATUS_OVERFLOW, a sum the buckets cannot explain
 * PCW_CSTATUS_INCONSISTENT, and every statistic costs one pass over the
 * buckets at most.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cook.h"
#include "histogram.h"
#include "pcw/histogram.h"
#include "common/name.h"

/* The statistics a bare histogram name stands for, in column order. */
const pcw_hist_stat pcw__q_hist_defaults[PCW__Q_HIST_NDEFAULT] = {
    {PCW_HSTAT_RATE, 0},       {PCW_HSTAT_MEAN, 0},        {PCW_HSTAT_QUANTILE, 0.5},
    {PCW_HSTAT_QUANTILE, 0.9}, {PCW_HSTAT_QUANTILE, 0.99}, {PCW_HSTAT_QUANTILE, 0.999},
    {PCW_HSTAT_MAX, 0},
};

const pcw_hist_stat *pcw_hist_default_stats(size_t *n)
{
    if (n)
        *n = PCW__Q_HIST_NDEFAULT;
    return pcw__q_hist_defaults;
}

static const struct {
    const char *name;
    int kind;
} stat_names[] = {
    {"rate", PCW_HSTAT_RATE}, {"count", PCW_HSTAT_COUNT}, {"mean", PCW_HSTAT_MEAN},
    {"max", PCW_HSTAT_MAX},   {"sum", PCW_HSTAT_SUM},
};

/* "p" then digits, optionally '.' and digits: 0 < NN <= 100. At most 12
 * characters after the 'p' (p99.999999999 is finer than any bucket). */
static int parse_quantile(const char *t, double *q)
{
    if (t[0] != 'p' || !t[1] || strlen(t + 1) > 12)
        return -1;
    const char *p = t + 1;
    size_t ndig = 0, nfrac = 0;
    while (*p >= '0' && *p <= '9')
        p++, ndig++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, nfrac++;
        if (!nfrac)
            return -1;
    }
    if (*p || !ndig)
        return -1;
    /* "99.9e-2": strtod rounds q itself, so "p99.9" is exactly 0.999. */
    char buf[24];
    snprintf(buf, sizeof buf, "%se-2", t + 1);
    double pct = strtod(buf, NULL) * 100.0;
    if (!(pct > 0.0) || pct > 100.0)
        return -1;
    *q = strtod(buf, NULL);
    return 0;
}

int pcw_hist_stat_parse(const char *text, pcw_hist_stat *out)
{
    if (!text || !out)
        return PCW_E_INVALID_PARAMETER;
    for (size_t i = 0; i < sizeof stat_names / sizeof stat_names[0]; i++)
        if (strcmp(text, stat_names[i].name) == 0) {
            out->kind = stat_names[i].kind, out->q = 0;
            return PCW_OK;
        }
    double q;
    if (parse_quantile(text, &q))
        return PCW_E_INVALID_NAME;
    out->kind = PCW_HSTAT_QUANTILE, out->q = q;
    return PCW_OK;
}

size_t pcw_hist_stat_name(const pcw_hist_stat *st, char *buf, size_t len)
{
    char tmp[32] = "";
    if (st && st->kind == PCW_HSTAT_QUANTILE) {
        /* The shortest decimal that reads back as the same q. */
        for (int prec = 0; prec <= 12; prec++) {
            snprintf(tmp, sizeof tmp, "p%.*f", prec, st->q * 100.0);
            pcw_hist_stat back;
            if (pcw_hist_stat_parse(tmp, &back) == PCW_OK && back.q - st->q < 1e-15 &&
                st->q - back.q < 1e-15)
                break;
        }
    } else if (st) {
        for (size_t i = 0; i < sizeof stat_names / sizeof stat_names[0]; i++)
            if (stat_names[i].kind == st->kind)
                snprintf(tmp, sizeof tmp, "%s", stat_names[i].name);
    }
    size_t n = strlen(tmp);
    if (buf && len) {
        size_t c = n < len - 1 ? n : len - 1;
        memcpy(buf, tmp, c);
        buf[c] = 0;
    }
    return n;
}

static int name_matches(const char *pat, size_t pl, int wild, const char *name, size_t nl)
{
    return wild ? pcw__wildcard_match(pat, pl, name, nl) : pcw__name_equal(pat, pl, name, nl);
}

int pcw__q_hist_select(const char *pat, int wild, const char *name, uint32_t type,
                       pcw_hist_stat *st, int *bad_stat)
{
    size_t pl = strlen(pat), nl = strlen(name);
    int hist = type == PERF_PCW_HISTOGRAM;
    if (bad_stat)
        *bad_stat = 0;
    /* The whole name first: a counter whose own name holds ':' is matched
     * exactly before any statistic is looked for. */
    if (name_matches(pat, pl, wild, name, nl)) {
        if (!hist) {
            st[0].kind = 0, st[0].q = 0;
            return 1;
        }
        memcpy(st, pcw__q_hist_defaults, sizeof pcw__q_hist_defaults);
        return PCW__Q_HIST_NDEFAULT;
    }
    const char *colon = strrchr(pat, ':');
    if (!hist || !colon || !name_matches(pat, (size_t)(colon - pat), wild, name, nl))
        return 0;
    if (pcw_hist_stat_parse(colon + 1, &st[0]) != PCW_OK) {
        if (bad_stat)
            *bad_stat = 1;
        return 0;
    }
    return 1;
}

/* ---- bounds --------------------------------------------------------------- */

/* 2^x without libm (libpcw links nothing but libc and pthread, and the
 * static library's users link no -lm): 2^e from the exponent bits, and
 * 2^(j/256) from pcw/histogram.h's own table of those mantissas (the
 * numbers the provider's bucket index compares with, so a bucket's bounds
 * here are the ones it was counted in), the rest below 1/256 of a
 * doubling by its series (5 terms: below 2^-50 relative). */
static double pow2i(int64_t e)
{
    if (e < -1022)
        return 0.0;
    if (e > 1023)
        return INFINITY;
    union {
        uint64_t u;
        double d;
    } x = {(uint64_t)(e + 1023) << 52};
    return x.d;
}

static double pow2(double x)
{
    if (!(x > -1100.0 && x < 1100.0))
        return x > 0 ? INFINITY : 0.0;
    int64_t e = (int64_t)x;
    if ((double)e > x)
        e--;
    double fr = x - (double)e; /* [0, 1) */
    int m = (int)(fr * 256.0);
    if (m > 255)
        m = 255;
    double y = (fr - m / 256.0) * 0.69314718055994530942; /* ln 2 */
    double series = 1.0 + y * (1.0 + y * (0.5 + y * (1.0 / 6 + y * (1.0 / 24))));
    double mant = (double)pcw__hist_table_one.th[m] * (1.0 / 9223372036854775808.0);
    return pow2i(e) * mant * series;
}

/* The upper bound of Prometheus bucket index i at schema s: 2^(i / 2^s). */
static double index_upper(int s, int64_t i)
{
    if (s <= 0)
        return pow2i(i * (1 << -s));
    /* i = e 2^s + r, 0 <= r < 2^s: a shift and a mask (floor, for a
     * negative i too), not two divisions. */
    int64_t r = i & (((int64_t)1 << s) - 1);
    int64_t e = i >= r ? (int64_t)((uint64_t)(i - r) >> s) : -(int64_t)((uint64_t)(r - i) >> s);
    return pow2i(e) *
           ((double)pcw__hist_table_one.th[r << (8 - s)] * (1.0 / 9223372036854775808.0));
}

/* 2^((i + f) / 2^s): a point f of the way through bucket i + 1, on the
 * log scale (log-linear interpolation). Divided by 2^s as multiplied by
 * 2^-s (exact, so the same double), without a division's latency. */
static double index_point(int s, int64_t i, double f)
{
    return pow2(((double)i + f) * pow2i(-s));
}

void pcw_hist_bucket_bounds(uint32_t shape, uint32_t j, double *lower, double *upper)
{
    double lo = 0.0, hi = 0.0;
    if (pcw_hist_shape_valid(shape)) {
        int s = pcw_hist_schema(shape);
        int64_t i0 = pcw_hist_min_index(shape); /* the zero bucket's top */
        if (j == UINT32_MAX) {
            hi = index_upper(s, i0);
        } else if (j < pcw_hist_nbuckets(shape)) {
            lo = index_upper(s, i0 + (int64_t)j);
            hi = index_upper(s, i0 + (int64_t)j + 1);
        }
    }
    if (lower)
        *lower = lo;
    if (upper)
        *upper = hi;
}

/* ---- statistics of one distribution ----------------------------------------- */

/* The sum in the exported unit. */
static double exported(uint32_t shape, uint64_t v)
{
    return pcw_hist_unit(shape) == PCW_HIST_UNIT_NS ? (double)v * 1e-9 : (double)v;
}

/* The non-empty buckets of a distribution's span [sp->lo, sp->hi) as bits
 * (bit i of bits[i / 64]: bucket sp->lo + i), set without a branch per
 * bucket: the walks below visit the non-empty buckets only, one ctz each,
 * where a test of every bucket mispredicted at each non-empty one (a
 * typical interval has a few non-empty buckets spread over a wide span). */
typedef struct span_bits {
    uint64_t w[PCW_HIST_MAX_BUCKETS / 64];
    uint32_t base, nw; /* sp->lo; words of w in use */
} span_bits;

static void span_bits_make(const pcw_hist_dist *d, const pcw__q_hspan *sp, span_bits *b)
{
    uint32_t n = sp->hi > sp->lo ? sp->hi - sp->lo : 0;
    if (n > PCW_HIST_MAX_BUCKETS) /* never: a span lies in a valid shape's buckets */
        n = PCW_HIST_MAX_BUCKETS;
    const uint64_t *v = d->buckets + sp->lo;
    b->base = sp->lo, b->nw = (n + 63) / 64;
    for (uint32_t k = 0; k < b->nw; k++) {
        uint32_t e = n - 64 * k < 64 ? n - 64 * k : 64;
        uint64_t m = 0;
        for (uint32_t i = 0; i < e; i++)
            m |= (uint64_t)(v[64 * k + i] != 0) << i;
        b->w[k] = m;
    }
}

/* The non-empty buckets of b in increasing order: it = {0, 0} first; 1 and
 * *j, or 0 after the last. */
typedef struct span_iter {
    uint32_t k;
    uint64_t m; /* what is left of word k - 1 */
} span_iter;

static int span_next(const span_bits *b, span_iter *it, uint32_t *j)
{
    while (!it->m) {
        if (it->k >= b->nw)
            return 0;
        it->m = b->w[it->k++];
    }
    *j = b->base + 64 * (it->k - 1) + (uint32_t)__builtin_ctzll(it->m);
    it->m &= it->m - 1;
    return 1;
}

/* Is `sum` (exported unit) one the buckets can hold? Each observation of
 * bucket j lies in (lower_j, upper_j], so the sum lies between the sums of
 * the bounds - give or take two observations of the highest non-empty
 * bucket: a provider's bucket and sum are two stores, and a copy may see
 * one without the other at either end of the interval (pcw/histogram.h).
 * Anything above the last bucket's bound is possible once it holds any.
 * bits: d's span_bits, or NULL (made here). */
static int sum_consistent(const pcw_hist_dist *d, const pcw__q_hspan *sp, const span_bits *bits,
                          double sum)
{
    int s = pcw_hist_schema(d->shape);
    int64_t i0 = pcw_hist_min_index(d->shape);
    double lo = 0.0, hi = 0.0, top = 0.0;
    span_bits own;
    if (!bits)
        span_bits_make(d, sp, &own), bits = &own;
    if (d->zero)
        hi = (double)d->zero * index_upper(s, i0), top = index_upper(s, i0);
    span_iter it = {0, 0};
    uint32_t j;
    while (span_next(bits, &it, &j)) {
        double n = (double)d->buckets[j];
        top = index_upper(s, i0 + (int64_t)j + 1);
        lo += n * index_upper(s, i0 + (int64_t)j);
        hi += n * top;
    }
    if (d->nbuckets && d->buckets[d->nbuckets - 1])
        hi = INFINITY;
    return sum >= lo - 2.0 * top && sum <= hi + 2.0 * top;
}

int pcw_hist_cook(const pcw_hist_dist *d, const pcw_hist_stat *st, double *value)
{
    if (value)
        *value = 0.0;
    if (!d || !st)
        return PCW_CSTATUS_NO_DATA;
    if (d->status != PCW_CSTATUS_VALID)
        return d->status;
    if (!pcw_hist_shape_valid(d->shape) || d->nbuckets != pcw_hist_nbuckets(d->shape) ||
        (d->nbuckets && !d->buckets))
        return PCW_CSTATUS_NO_DATA;
    /* The count again from the buckets: the struct may be anyone's. */
    pcw_hist_dist c = *d;
    pcw__q_hspan sp = {d->nbuckets, 0};
    c.count = d->zero;
    for (uint32_t j = 0; j < d->nbuckets; j++) {
        if (__builtin_add_overflow(c.count, d->buckets[j], &c.count))
            return PCW_CSTATUS_OVERFLOW;
        if (d->buckets[j]) {
            sp.lo = sp.lo < j ? sp.lo : j;
            sp.hi = j + 1;
        }
    }
    return pcw__q_hist_cook(&c, &sp, st, value);
}

/* The quantile's bucket: the first j whose cumulative count reaches the
 * rank, and the count below it. In integers (a cumulative count reaches
 * the rank when it reaches its ceiling), from the top for a high quantile
 * (p99 looks at the few buckets above it, not the many below), and only
 * over the non-empty span (rank > zero: some bucket holds it). */
static uint32_t rank_bucket(const pcw_hist_dist *d, const pcw__q_hspan *sp, double rank,
                            uint64_t *below)
{
    uint32_t last = sp->hi - 1;
    uint64_t r = (uint64_t)rank;
    r += (double)r < rank;
    if (r <= d->count / 2) {
        uint64_t b = d->zero;
        uint32_t j = sp->lo;
        for (; j < last; j++) {
            uint64_t n = d->buckets[j];
            if (n && b + n >= r)
                break;
            b += n;
        }
        *below = b;
        return j;
    }
    /* cum(j) >= r <=> above(j) <= count - r, above(j) growing as j goes
     * down: the lowest such j (it is non-empty, or it would not be the
     * lowest). */
    uint64_t above = 0, room = d->count - r;
    uint32_t j = last;
    while (j > sp->lo && above + d->buckets[j] <= room)
        above += d->buckets[j--];
    *below = d->count - above - d->buckets[j];
    return j;
}

/* What one walk over a distribution's buckets found for a statistic
 * (pcw__q_hist_cook_many), or NULL: cook() looks itself. */
typedef struct walked {
    int consistent; /* sum_consistent's answer */
    uint32_t j;     /* a quantile's bucket (rank above the zero bucket) */
    uint64_t below; /* and the count below it */
} walked;

/* The quantile's rank, q * count (at most count). */
static double quantile_rank(const pcw_hist_dist *d, double q)
{
    double rank = q * (double)d->count;
    return rank > (double)d->count ? (double)d->count : rank;
}

static int cook(const pcw_hist_dist *d, const pcw__q_hspan *sp, const pcw_hist_stat *st,
                const walked *w, double *value)
{
    double v = 0.0;
    if (value)
        *value = 0.0;
    if (d->status != PCW_CSTATUS_VALID)
        return d->status;
    uint64_t count = d->count;
    int s = pcw_hist_schema(d->shape), rc = PCW_CSTATUS_VALID;
    int64_t i0 = pcw_hist_min_index(d->shape);
    uint32_t last = d->nbuckets - 1;
    switch (st->kind) {
    case PCW_HSTAT_RATE:
        if (!d->interval_ns)
            return PCW_CSTATUS_ZERO_DENOMINATOR;
        v = (double)count / ((double)d->interval_ns / (double)PCW__Q_SYS_FREQ);
        break;
    case PCW_HSTAT_COUNT:
        v = (double)count;
        break;
    case PCW_HSTAT_SUM:
    case PCW_HSTAT_MEAN: {
        double sum = exported(d->shape, d->sum);
        if (st->kind == PCW_HSTAT_MEAN && !count)
            return PCW_CSTATUS_NO_DATA;
        if (!(w ? w->consistent : sum_consistent(d, sp, NULL, sum)))
            return PCW_CSTATUS_INCONSISTENT;
        v = st->kind == PCW_HSTAT_SUM ? sum : sum / (double)count;
        break;
    }
    case PCW_HSTAT_MAX: {
        if (!count)
            return PCW_CSTATUS_NO_DATA;
        uint32_t j = sp->hi; /* 1 + the highest non-empty bucket */
        if (j == 0)
            v = index_upper(s, i0); /* the zero bucket only */
        else
            v = index_upper(s, i0 + (int64_t)j);
        if (j == last + 1)
            rc = PCW_CSTATUS_ABOVE_RANGE;
        break;
    }
    case PCW_HSTAT_QUANTILE: {
        if (!(st->q > 0.0) || st->q > 1.0)
            return PCW_CSTATUS_NO_DATA;
        if (!count)
            return PCW_CSTATUS_NO_DATA;
        /* The bucket that holds observation number ceil(q * count), and
         * where in it: the same bucket as the true quantile's, so the
         * relative error is below the bucket's width, 2^(2^-s) - 1. */
        double rank = quantile_rank(d, st->q);
        if (rank <= (double)d->zero) {
            v = index_upper(s, i0) * (rank / (double)d->zero); /* linear from 0 */
            break;
        }
        uint64_t below = w ? w->below : 0;
        uint32_t j = w ? w->j : rank_bucket(d, sp, rank, &below);
        if (j == last) {
            v = index_upper(s, i0 + (int64_t)d->nbuckets);
            rc = PCW_CSTATUS_ABOVE_RANGE;
            break;
        }
        double f = (rank - below) / (double)d->buckets[j];
        v = index_point(s, i0 + (int64_t)j, f > 1.0 ? 1.0 : f);
        break;
    }
    default:
        return PCW_CSTATUS_NO_DATA;
    }
    if (!isfinite(v))
        return PCW_CSTATUS_OVERFLOW;
    if (value)
        *value = v;
    return rc;
}

int pcw__q_hist_cook(const pcw_hist_dist *d, const pcw__q_hspan *sp, const pcw_hist_stat *st,
                     double *value)
{
    return cook(d, sp, st, NULL, value);
}

void pcw__q_hist_cook_many(const pcw_hist_dist *d, const pcw__q_hspan *sp, const pcw_hist_stat *st,
                           uint32_t n, double *v, int *rc)
{
    walked w[PCW__Q_HIST_COOK_MANY] = {{0}};
    uint64_t rank[PCW__Q_HIST_COOK_MANY];
    uint32_t order[PCW__Q_HIST_COOK_MANY], nq = 0;
    int consistent = -1;
    if (n > PCW__Q_HIST_COOK_MANY)
        n = PCW__Q_HIST_COOK_MANY; /* (the caller's plan is never longer) */
    /* The quantiles' ranks (as rank_bucket has them) above the zero
     * bucket, in increasing order, found in one walk up the non-empty
     * buckets: the first bucket whose cumulative count reaches each - what
     * rank_bucket finds from either end, the same integers. */
    for (uint32_t i = 0; i < n && d->status == PCW_CSTATUS_VALID && d->count; i++) {
        if (st[i].kind != PCW_HSTAT_QUANTILE || !(st[i].q > 0.0) || st[i].q > 1.0)
            continue;
        double r = quantile_rank(d, st[i].q);
        if (r <= (double)d->zero)
            continue;
        rank[i] = (uint64_t)r;
        rank[i] += (double)rank[i] < r;
        uint32_t at = nq++;
        for (; at > 0 && rank[order[at - 1]] > rank[i]; at--)
            order[at] = order[at - 1];
        order[at] = i;
    }
    span_bits bits;
    int have_bits = 0;
    if (nq) {
        span_bits_make(d, sp, &bits), have_bits = 1;
        uint64_t cum = d->zero;
        uint32_t next = 0, j;
        span_iter it = {0, 0};
        while (next < nq && span_next(&bits, &it, &j)) {
            uint64_t nj = d->buckets[j];
            cum += nj;
            for (; next < nq && cum >= rank[order[next]]; next++)
                w[order[next]].j = j, w[order[next]].below = cum - nj;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        if ((st[i].kind == PCW_HSTAT_MEAN || st[i].kind == PCW_HSTAT_SUM) && consistent < 0)
            consistent =
                d->status == PCW_CSTATUS_VALID &&
                sum_consistent(d, sp, have_bits ? &bits : NULL, exported(d->shape, d->sum));
        w[i].consistent = consistent > 0;
        rc[i] = cook(d, sp, &st[i], &w[i], &v[i]);
    }
}

/* ---- distributions from words ---------------------------------------------- */

/* Where buckets[0, n) are non-empty: scanned four words at a time (they
 * were just written, so they are in the L1 cache), from each end, so an
 * empty top or bottom costs a quarter of a load per bucket and the
 * non-empty middle nothing. */
static void find_span(const uint64_t *buckets, uint32_t n, pcw__q_hspan *sp)
{
    uint32_t lo = 0, hi = n;
    while (lo + 4 <= n && !(buckets[lo] | buckets[lo + 1] | buckets[lo + 2] | buckets[lo + 3]))
        lo += 4;
    while (lo < n && !buckets[lo])
        lo++;
    while (hi >= lo + 4 && !(buckets[hi - 1] | buckets[hi - 2] | buckets[hi - 3] | buckets[hi - 4]))
        hi -= 4;
    while (hi > lo && !buckets[hi - 1])
        hi--;
    sp->lo = lo < hi ? lo : n;
    sp->hi = hi > lo ? hi : 0;
}

/* Buckets [0, n) of now - prev (prev NULL: now) into buckets, the fast
 * way: 1 if every delta and every word of prev is below 2^50 - then no
 * bucket went down (a - b would have wrapped to 2^64 - 2^50 or more) and
 * the sum of at most 8,192 deltas fits 64 bits - with *count their sum;
 * else 0 (hostile or enormous words: pcw__q_hist_interval checks them
 * exactly). Five vector operations per two words, so the pass runs at
 * the speed of its loads. */
static int deltas_fast(uint32_t n, const uint64_t *now, const uint64_t *prev, uint64_t *buckets,
                       uint64_t *count)
{
    typedef uint64_t u64x2 __attribute__((vector_size(16)));
    u64x2 vsum = {0, 0}, vor = {0, 0};
    uint32_t j = 0;
    for (; j + 2 <= n; j += 2) {
        u64x2 a, b = {0, 0};
        memcpy(&a, now + j, 16);
        if (prev)
            memcpy(&b, prev + j, 16);
        u64x2 x = a - b;
        vor |= x | b;
        vsum += x;
        memcpy(buckets + j, &x, 16);
    }
    uint64_t sum = vsum[0] + vsum[1], or = vor[0] | vor[1];
    for (; j < n; j++) {
        uint64_t b = prev ? prev[j] : 0, x = now[j] - b;
        or |= x | b;
        sum += x;
        buckets[j] = x;
    }
    *count = sum;
    return or >> 50 == 0;
}

int pcw__q_hist_interval(uint32_t shape, const uint64_t *now, const uint64_t *prev,
                         uint64_t *buckets, pcw_hist_dist *d, pcw__q_hspan *sp)
{
    uint64_t count;
    int fast =
        deltas_fast(pcw_hist_nbuckets(shape), now + 2, prev ? prev + 2 : NULL, buckets, &count);
    return pcw__q_hist_from_deltas(shape, now, prev, buckets, fast, count, NULL, d, sp);
}

int pcw__q_hist_from_deltas(uint32_t shape, const uint64_t *now, const uint64_t *prev,
                            uint64_t *buckets, int fast, uint64_t count, const pcw__q_hspan *span,
                            pcw_hist_dist *d, pcw__q_hspan *sp)
{
    uint32_t n = pcw_hist_nbuckets(shape);
    memset(d, 0, sizeof *d);
    d->shape = shape, d->nbuckets = n, d->buckets = buckets;
    uint64_t went_down = 0;
    int over = 0;
    d->sum = prev ? now[0] - prev[0] : now[0];
    d->zero = prev ? now[1] - prev[1] : now[1];
    went_down |= prev && now[1] < prev[1];
    if (fast) {
        over = __builtin_add_overflow(count, d->zero, &count);
    } else {
        /* Every word again, exactly: a bucket that went down is a reset
         * (the provider restarted its instance, or a hostile writer), and
         * the count is kept as two sums of 32-bit halves (each below 2^46
         * for 8,194 words), so that nothing in the loop depends on the
         * previous word's carry. From the deltas: a bucket now is its
         * delta plus its word before, mod 2^64. */
        uint64_t lo = 0, hi = 0;
        for (uint32_t j = 0; j < n; j++) {
            uint64_t b = prev ? prev[2 + j] : 0, x = buckets[j];
            went_down |= x + b < b;
            lo += x & 0xFFFFFFFFu, hi += x >> 32;
        }
        hi += lo >> 32;
        over = hi >> 32 != 0 ||
               __builtin_add_overflow((hi << 32) | (lo & 0xFFFFFFFFu), d->zero, &count);
    }
    if (span)
        *sp = *span;
    else
        find_span(buckets, n, sp);
    d->count = count;
    d->status = went_down ? PCW_CSTATUS_RESET : over ? PCW_CSTATUS_OVERFLOW : PCW_CSTATUS_VALID;
    return d->status;
}

int pcw__q_hist_add(pcw_hist_dist *acc, uint64_t *acc_buckets, pcw__q_hspan *acc_sp,
                    const pcw_hist_dist *d, const pcw__q_hspan *dsp)
{
    int over = __builtin_add_overflow(acc->zero, d->zero, &acc->zero);
    /* Only the member's non-empty buckets: the rest add nothing. */
    for (uint32_t j = dsp->lo; j < dsp->hi; j++)
        over |= __builtin_add_overflow(acc_buckets[j], d->buckets[j], &acc_buckets[j]);
    if (dsp->lo < dsp->hi) {
        acc_sp->lo = acc_sp->lo < dsp->lo ? acc_sp->lo : dsp->lo;
        acc_sp->hi = acc_sp->hi > dsp->hi ? acc_sp->hi : dsp->hi;
    }
    over |= __builtin_add_overflow(acc->count, d->count, &acc->count);
    acc->sum += d->sum; /* mod 2^64, as the provider's */
    return over ? PCW_CSTATUS_OVERFLOW : PCW_CSTATUS_VALID;
}
