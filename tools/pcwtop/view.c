/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/view.c - filtering and sorting the rows of the model's last
 * collection, and cutting out the ones on screen (model.h, top_view).
 *
 * Display order: the _Total rows first when shown, in the query's order;
 * then the instance rows that pass the filter, in the sort column's order
 * (ties by the query's order, so equal values never swap places from one
 * refresh to the next), or in the query's order when unsorted. Rows
 * without a value in the sort column (no data yet, gone...) come last in
 * either direction.
 *
 * Scale: the filter runs once per table (a table lives as long as the
 * instances do) and pattern. Sorting reads the sort column, cooked once per
 * refresh (top_model_column; converted by the collection as it read the
 * rows, when the refresh before sorted by it too), and puts in order only
 * the rows asked for:
 * a window that ends within the first TOP_HEAP_MAX rows - the screen a
 * viewer looks at - is the smallest keys of one pass with a bounded
 * buffer of candidates;
 * a window further down is a quickselect to its first rank, another to its
 * last, and a sort of the window. Either way a screenful of a million rows
 * costs O(rows), never a sort of all of them, and asking again for rows
 * inside the window last put in order costs nothing.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/name.h"

#include "../common/container.h"
#include "../common/grow.h"
#include "model.h"

/* Windows ending within this many rows are found in one pass over the
 * rows (a bounded buffer of candidates); further down, by quickselect over
 * every key. */
#define TOP_HEAP_MAX 4096u

/* A sort key: the value as it sorts (ascending), and its table row. Name
 * order uses the row alone (the comparison reads the names). */
typedef struct nkey {
    double v;
    uint32_t row;
} nkey;

void view_init(top_view *v)
{
    memset(v, 0, sizeof *v);
    v->sort = TOP_SORT_NONE;
    v->totals = 1;
}

void view_free(top_view *v)
{
    free(v->filtered);
    free(v->filtered_qi);
    free(v->shown_totals);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

static int has_wildcard(const char *p)
{
    return strpbrk(p, "*?") != NULL;
}

int view_filter_match(const char *pattern, const char *name, size_t len)
{
    size_t m = strlen(pattern);
    if (!m)
        return 1;
    if (has_wildcard(pattern))
        return pcw__wildcard_match(pattern, m, name, len);
    /* A plain word: a case-insensitive substring (as htop's filter). */
    char buf[sizeof((top_view *)0)->filter + 2];
    if (m + 2 >= sizeof buf)
        m = sizeof buf - 3;
    buf[0] = '*';
    memcpy(buf + 1, pattern, m);
    buf[m + 1] = '*';
    return pcw__wildcard_match(buf, m + 2, name, len);
}

/* The filtered rows of the table (again only when table or filter moved). */
static int filter(top_view *v, const top_table *t)
{
    if (v->f_table == t->id && v->f_totals == v->totals && strcmp(v->f_filter, v->filter) == 0)
        return 0;
    v->nfiltered = v->nshown_totals = 0;
    v->k_valid = 0;
    v->f_table = 0;
    if (grow((void **)&v->filtered, &v->filtered_cap, t->nrows + 1, sizeof *v->filtered) ||
        grow((void **)&v->filtered_qi, &v->filtered_qi_cap, t->nrows + 1, sizeof *v->filtered_qi) ||
        grow((void **)&v->shown_totals, &v->shown_totals_cap, t->ntotals + 1,
             sizeof *v->shown_totals))
        return -1;
    if (v->totals)
        for (size_t r = 0; r < t->ntotals; r++)
            v->shown_totals[v->nshown_totals++] = (uint32_t)r;
    int all = v->filter[0] == 0;
    for (size_t r = t->ntotals; r < t->nrows; r++) {
        const top_row *row = &t->rows[r];
        if ((all || view_filter_match(v->filter, top_row_name(t, row), row->name_len)) &&
            (!v->container[0] || tc_name_match(row->ctr, v->container))) {
            v->filtered_qi[v->nfiltered] = row->qi;
            v->filtered[v->nfiltered++] = (uint32_t)r;
        }
    }
    /* The query's instances in order (no filter, no gone row among them):
     * the sort column is read in order, without filtered_qi. */
    v->qi_contig = v->nfiltered > 0;
    for (size_t i = 0; v->qi_contig && i < v->nfiltered; i++)
        v->qi_contig =
            v->filtered_qi[i] != UINT32_MAX && v->filtered_qi[i] == v->filtered_qi[0] + i;
    v->f_table = t->id;
    v->f_totals = v->totals;
    memcpy(v->f_filter, v->filter, sizeof v->f_filter);
    return 0;
}

size_t view_count(top_view *v, top_model *m)
{
    const top_frame *f = top_model_frame(m);
    if (!f->table || filter(v, f->table))
        return 0;
    return v->nshown_totals + v->nfiltered;
}

/* ---- comparing ------------------------------------------------------------ */

static int nkey_less(const nkey *a, const nkey *b)
{
    return a->v < b->v || (a->v == b->v && a->row < b->row);
}

/* Names: ASCII case-insensitively, then by length; 0 for equal names. */
static int name_cmp(const top_table *t, uint32_t a, uint32_t b)
{
    const top_row *x = &t->rows[a], *y = &t->rows[b];
    const unsigned char *p = (const unsigned char *)top_row_name(t, x);
    const unsigned char *q = (const unsigned char *)top_row_name(t, y);
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    for (size_t i = 0; i < n; i++) {
        int c = p[i] >= 'A' && p[i] <= 'Z' ? p[i] + 32 : p[i];
        int d = q[i] >= 'A' && q[i] <= 'Z' ? q[i] + 32 : q[i];
        if (c != d)
            return c - d;
    }
    if (x->name_len != y->name_len)
        return x->name_len < y->name_len ? -1 : 1;
    return 0;
}

/* The table and direction of this thread's current name sort. */
static _Thread_local const top_table *cmp_table;
static _Thread_local int cmp_desc;

/* Name order in the sort's direction; equal names by row, ascending. */
static int name_less(const uint32_t *a, const uint32_t *b)
{
    int c = name_cmp(cmp_table, *a, *b);
    if (c)
        return cmp_desc ? c > 0 : c < 0;
    return *a < *b;
}

/* ---- selection -------------------------------------------------------------
 *
 * Generic over the key type (nkey, or a row for names) by a macro: the
 * bounded heap (the smallest n of a stream, in order) and quickselect with
 * a median-of-three pivot drawn at pseudo-random places, so no input order
 * is a worst case by construction. Keys form a total order (ties by row). */

static _Thread_local uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static size_t rnd(size_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (size_t)(rng_state % n);
}

#define SELECTION(T, LESS, SUFFIX)                                                                 \
    /* Max-heap of at most cap keys: offer x. */                                                   \
    static void heap_offer_##SUFFIX(T *h, size_t *n, size_t cap, T x)                              \
    {                                                                                              \
        size_t i;                                                                                  \
        if (*n < cap) {                                                                            \
            i = (*n)++;                                                                            \
            while (i > 0 && LESS(&h[(i - 1) / 2], &x)) {                                           \
                h[i] = h[(i - 1) / 2];                                                             \
                i = (i - 1) / 2;                                                                   \
            }                                                                                      \
            h[i] = x;                                                                              \
            return;                                                                                \
        }                                                                                          \
        if (!LESS(&x, &h[0]))                                                                      \
            return; /* not among the smallest cap: the usual case, one compare */                  \
        i = 0;                                                                                     \
        for (;;) {                                                                                 \
            size_t c = 2 * i + 1;                                                                  \
            if (c >= *n)                                                                           \
                break;                                                                             \
            if (c + 1 < *n && LESS(&h[c], &h[c + 1]))                                              \
                c++;                                                                               \
            if (!LESS(&x, &h[c]))                                                                  \
                break;                                                                             \
            h[i] = h[c];                                                                           \
            i = c;                                                                                 \
        }                                                                                          \
        h[i] = x;                                                                                  \
    }                                                                                              \
    /* Sort a[0, n) (insertion sort for small n, else heapsort in place). */                       \
    static void sort_##SUFFIX(T *a, size_t n)                                                      \
    {                                                                                              \
        if (n <= 32) {                                                                             \
            for (size_t i = 1; i < n; i++) {                                                       \
                T x = a[i];                                                                        \
                size_t j = i;                                                                      \
                while (j > 0 && LESS(&x, &a[j - 1])) {                                             \
                    a[j] = a[j - 1];                                                               \
                    j--;                                                                           \
                }                                                                                  \
                a[j] = x;                                                                          \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        size_t m = 0;                                                                              \
        for (size_t i = 0; i < n; i++)                                                             \
            heap_offer_##SUFFIX(a, &m, n, a[i]);                                                   \
        while (m > 1) { /* pop the largest to the end */                                           \
            T top = a[0], last = a[--m];                                                           \
            size_t i = 0;                                                                          \
            for (;;) {                                                                             \
                size_t c = 2 * i + 1;                                                              \
                if (c >= m)                                                                        \
                    break;                                                                         \
                if (c + 1 < m && LESS(&a[c], &a[c + 1]))                                           \
                    c++;                                                                           \
                if (!LESS(&last, &a[c]))                                                           \
                    break;                                                                         \
                a[i] = a[c];                                                                       \
                i = c;                                                                             \
            }                                                                                      \
            a[i] = last;                                                                           \
            a[m] = top;                                                                            \
        }                                                                                          \
    }                                                                                              \
    /* Rearrange a[0, n) so that a[k] is the key of rank k, smaller ones                           \
     * before it and larger after. */                                                              \
    static void select_##SUFFIX(T *a, size_t n, size_t k)                                          \
    {                                                                                              \
        size_t lo = 0, hi = n;                                                                     \
        while (hi - lo > 32) {                                                                     \
            T x = a[lo + rnd(hi - lo)], y = a[lo + rnd(hi - lo)], z = a[lo + rnd(hi - lo)], p;     \
            if (LESS(&x, &y))                                                                      \
                p = LESS(&y, &z) ? y : (LESS(&x, &z) ? z : x);                                     \
            else                                                                                   \
                p = LESS(&x, &z) ? x : (LESS(&y, &z) ? z : y);                                     \
            size_t lt = lo, i = lo, gt = hi; /* < p | == p | > p */                                \
            while (i < gt) {                                                                       \
                if (LESS(&a[i], &p)) {                                                             \
                    T t = a[lt];                                                                   \
                    a[lt++] = a[i];                                                                \
                    a[i++] = t;                                                                    \
                } else if (LESS(&p, &a[i])) {                                                      \
                    T t = a[--gt];                                                                 \
                    a[gt] = a[i];                                                                  \
                    a[i] = t;                                                                      \
                } else {                                                                           \
                    i++;                                                                           \
                }                                                                                  \
            }                                                                                      \
            if (k < lt)                                                                            \
                hi = lt;                                                                           \
            else if (k >= gt)                                                                      \
                lo = gt;                                                                           \
            else                                                                                   \
                return;                                                                            \
        }                                                                                          \
        sort_##SUFFIX(a + lo, hi - lo);                                                            \
    }

#define NKEY_LESS(a, b) nkey_less((a), (b))
#define NAME_LESS(a, b) name_less((a), (b))
SELECTION(nkey, NKEY_LESS, num)
SELECTION(uint32_t, NAME_LESS, name)

/* ---- ordering a window ------------------------------------------------------ */

static int desc_by_default(int sort)
{
    return sort >= 0; /* counters: largest first; name and pid: ascending */
}

/* The key of the i-th filtered row: its sort value as it sorts ascending
 * (rows without one last, in either direction). Counters read the cooked
 * column through the row's query index, without touching the table. */
static inline nkey key_of(const top_view *v, const top_table *t, size_t i, int desc,
                          const double *cv, const uint8_t *cs)
{
    nkey k = {INFINITY, v->filtered[i]};
    if (v->sort == TOP_SORT_PID) {
        double p = (double)t->rows[v->filtered[i]].pid;
        k.v = desc ? -p : p;
    } else {
        uint32_t q = v->filtered_qi[i];
        if (q != UINT32_MAX && cs[q] == PCW_CSTATUS_VALID)
            k.v = desc ? -cv[q] : cv[q];
    }
    return k;
}

/* The first hi filtered rows in order from the collection's ranking of
 * the sort column (top_model_top), when every instance row is shown (no
 * filter): its order - value, then query index - is the keys' order -
 * value, then row - because rows follow the query's order. 0, or -1
 * (not ranked, or not enough rows with a value: the column is needed). */
static int window_from_ranking(top_view *v, top_model *m, const top_table *t, size_t hi, int desc)
{
    const pcw_pdh_ranked *rk;
    size_t n, h = 0;
    if (top_model_top(m, (uint32_t)v->sort, desc, hi, &rk, &n) != 0 ||
        grow(&v->keys, &v->keys_cap, (hi + 1) * sizeof(nkey), 1))
        return -1;
    nkey *k = v->keys;
    double sgn = desc ? -1.0 : 1.0; /* exact, as key_of's */
    for (size_t i = 0; i < n && h < hi; i++) {
        if (rk[i].instance >= t->nq)
            return -1;
        uint32_t row = t->qi_row[rk[i].instance];
        if (row < t->ntotals)
            continue; /* a _Total: not among the filtered rows */
        k[h].v = sgn * rk[i].value;
        k[h].row = row;
        if (k[h].v == INFINITY)
            return -1; /* ties with the rows without a value: key_of's order */
        h++;
    }
    if (h < hi)
        return -1;
    v->nkeys = h;
    v->all_keys = 0;
    v->sel_lo = 0;
    v->sel_hi = h;
    return 0;
}

/* Put the window [lo, hi) of the filtered rows in order into keys. */
static int order_window(top_view *v, top_model *m, size_t lo, size_t hi)
{
    const top_frame *f = top_model_frame(m);
    const top_table *t = f->table;
    size_t n = v->nfiltered;
    int names = v->sort == TOP_SORT_NAME;
    int desc = desc_by_default(v->sort) != v->reverse;
    const double *cv = NULL;
    const uint8_t *cs = NULL;
    /* A window the collection can rank: the ranking, else the column this
     * once (the next collection ranks). */
    int rankable = v->sort >= 0 && hi <= TOP_HEAP_MAX && !v->filter[0] && !v->container[0];
    if (rankable && window_from_ranking(v, m, t, hi, desc) == 0)
        return 0;
    if (v->sort >= 0 && (rankable ? top_model_column_once : top_model_column)(m, (uint32_t)v->sort,
                                                                              &cv, &cs) != PCW_OK)
        return -1;
    cmp_table = t;
    cmp_desc = desc;
    size_t elem = names ? sizeof(uint32_t) : sizeof(nkey);
    if (hi <= TOP_HEAP_MAX) {
        /* One pass keeping the smallest hi keys: keys no worse than the
         * hi-th best so far go into a buffer of `cap`; a full buffer is
         * cut back to its best hi by a quickselect. The threshold starts
         * as the hi-th best of an evenly spaced sample - at least hi keys
         * are no worse than it, so every one of the best hi passes - and
         * then few keys pass at all, whatever order the rows come in
         * (rows sorted by the sort column, as ids often are, would
         * otherwise all pass). O(rows). */
        size_t cap = 4 * hi > 4096 ? 4 * hi : 4096;
        if (grow(&v->keys, &v->keys_cap, (cap + 1) * elem, 1))
            return -1;
        size_t h = 0, step = n > cap ? n / cap : 0;
        if (names) {
            uint32_t *k = v->keys, thr = 0;
            int have = 0;
            if (step) {
                for (size_t i = 0; i < cap; i++)
                    k[i] = v->filtered[i * step];
                select_name(k, cap, hi - 1);
                thr = k[hi - 1];
                have = 1;
            }
            for (size_t i = 0; i < n; i++) {
                uint32_t x = v->filtered[i];
                if (have && name_less(&thr, &x))
                    continue;
                k[h++] = x;
                if (h == cap) {
                    select_name(k, h, hi - 1);
                    h = hi;
                    thr = k[hi - 1];
                    have = 1;
                }
            }
            sort_name(k, h);
        } else {
            nkey *k = v->keys, thr = {INFINITY, UINT32_MAX};
            if (step) {
                for (size_t i = 0; i < cap; i++)
                    k[i] = key_of(v, t, i * step, desc, cv, cs);
                select_num(k, cap, hi - 1);
                thr = k[hi - 1];
            }
            /* A counter: the value alone rejects most rows, so the pass
             * reads the column (in order, when the filtered rows are the
             * query's instances in order: no filter) and a row index
             * only for the few that pass. */
            const uint32_t *fq = v->filtered_qi;
            uint32_t base = v->qi_contig ? fq[0] : 0;
            double sgn = desc ? -1.0 : 1.0; /* exact, as a negation */
            for (size_t i = 0; i < n; i++) {
                nkey x;
                if (v->sort == TOP_SORT_PID) {
                    x = key_of(v, t, i, desc, cv, cs);
                } else {
                    uint32_t q = v->qi_contig ? base + (uint32_t)i : fq[i];
                    x.v = q != UINT32_MAX && cs[q] == PCW_CSTATUS_VALID ? sgn * cv[q] : INFINITY;
                    if (x.v > thr.v)
                        continue;
                    x.row = v->filtered[i];
                }
                if (x.v > thr.v || nkey_less(&thr, &x))
                    continue;
                k[h++] = x;
                if (h == cap) {
                    select_num(k, h, hi - 1);
                    h = hi;
                    thr = k[hi - 1];
                }
            }
            sort_num(k, h);
        }
        if (h > hi)
            h = hi;
        v->nkeys = h;
        v->all_keys = 0;
        v->sel_lo = 0;
        v->sel_hi = h;
        return 0;
    }
    /* Every key, then a quickselect to each end of the window. */
    if (!v->all_keys) {
        if (grow(&v->keys, &v->keys_cap, (n + 1) * elem, 1))
            return -1;
        if (names) {
            memcpy(v->keys, v->filtered, n * sizeof(uint32_t));
        } else {
            nkey *k = v->keys;
            for (size_t i = 0; i < n; i++)
                k[i] = key_of(v, t, i, desc, cv, cs);
        }
        v->nkeys = n;
        v->all_keys = 1;
    }
    if (names) {
        uint32_t *k = v->keys;
        if (lo > 0)
            select_name(k, n, lo);
        if (hi < n)
            select_name(k + lo, n - lo, hi - lo);
        sort_name(k + lo, hi - lo);
    } else {
        nkey *k = v->keys;
        if (lo > 0)
            select_num(k, n, lo);
        if (hi < n)
            select_num(k + lo, n - lo, hi - lo);
        sort_num(k + lo, hi - lo);
    }
    v->sel_lo = lo;
    v->sel_hi = hi;
    return 0;
}

size_t view_rows(top_view *v, top_model *m, size_t first, size_t n, uint32_t *rows)
{
    size_t count = view_count(v, m);
    if (first >= count || !n)
        return 0;
    const top_frame *f = top_model_frame(m);
    size_t end = first + n < count ? first + n : count, out = 0;
    size_t nt = v->nshown_totals;
    for (size_t i = first; i < end && i < nt; i++)
        rows[out++] = v->shown_totals[i];
    if (end <= nt)
        return out;
    size_t lo = first > nt ? first - nt : 0, hi = end - nt;
    if (v->sort == TOP_SORT_NONE || (v->sort >= 0 && (uint32_t)v->sort >= f->table->ncols)) {
        for (size_t i = lo; i < hi; i++)
            rows[out++] = v->filtered[i];
        return out;
    }
    if (!v->k_valid || v->k_seq != f->seq || v->k_table != f->table->id || v->k_sort != v->sort ||
        v->k_reverse != v->reverse || v->k_raw != f->raw) {
        v->k_valid = 1;
        v->k_seq = f->seq;
        v->k_table = f->table->id;
        v->k_sort = v->sort;
        v->k_reverse = v->reverse;
        v->k_raw = f->raw;
        v->all_keys = 0;
        v->sel_lo = v->sel_hi = 0;
    }
    if (!(lo >= v->sel_lo && hi <= v->sel_hi) && order_window(v, m, lo, hi) != 0) {
        v->k_valid = 0;
        return out;
    }
    if (v->sort == TOP_SORT_NAME) {
        const uint32_t *k = v->keys;
        for (size_t i = lo; i < hi; i++)
            rows[out++] = k[i];
    } else {
        const nkey *k = v->keys;
        for (size_t i = lo; i < hi; i++)
            rows[out++] = k[i].row;
    }
    return out;
}

int view_parse_sort(const top_frame *f, const char *name, int *sort)
{
    size_t n = strlen(name);
    if (!n || pcw__name_equal(name, n, "none", 4)) {
        *sort = TOP_SORT_NONE;
        return 0;
    }
    if (pcw__name_equal(name, n, "name", 4) || pcw__name_equal(name, n, "instance", 8)) {
        *sort = TOP_SORT_NAME;
        return 0;
    }
    if (pcw__name_equal(name, n, "pid", 3)) {
        *sort = TOP_SORT_PID;
        return 0;
    }
    const top_table *t = f ? f->table : NULL;
    for (uint32_t k = 0; t && k < t->ncols; k++)
        if (pcw__name_equal(name, n, t->cols[k].name, strlen(t->cols[k].name))) {
            *sort = (int)k;
            return 0;
        }
    return -1;
}

int view_parse_sort_spec(const top_frame *f, const char *spec, int *sort, int *reverse, char *why,
                         size_t len)
{
    int dir = 0; /* 1 descending, -1 ascending, 0 the column's default */
    if (*spec == '+' || *spec == '-')
        dir = *spec++ == '+' ? 1 : -1;
    if (view_parse_sort(f, spec, sort) != 0) {
        size_t n = (size_t)snprintf(why, len, "no column \"%s\" in \"%s\" (columns: name, pid",
                                    spec, f->set_name ? f->set_name : "");
        for (uint32_t k = 0; f->table && k < f->table->ncols && n < len; k++)
            n += (size_t)snprintf(why + n, len - n, ", %s", f->table->cols[k].name);
        if (n < len)
            snprintf(why + n, len - n, ")");
        return -1;
    }
    int desc_default = *sort >= 0;
    *reverse = dir == 0 ? 0 : (dir > 0) != desc_default;
    return 0;
}
