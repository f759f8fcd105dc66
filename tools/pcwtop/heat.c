/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/heat.c - a histogram counter's distribution, refresh after
 * refresh: which columns are histograms, the ring the heatmap draws
 * (heatmap.c) recorded from the model, the statistics and labels the
 * heatmap and batch mode both write, and batch mode's text form (-b -H).
 * No terminal here.
 *
 * The distribution is the query's (pcw_pdh_get_histogram: the interval's
 * per-bucket difference, a _Total's merged buckets); the statistics are
 * the query's too (pcw_hist_cook), so they are the columns' values. Work
 * per refresh: O(buckets).
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pcw/histogram.h>
#include "common/name.h"

#include "pcwtop.h"

int heat_next_column(const top_table *t, int k, int dir)
{
    if (!t || !t->ncols)
        return -1;
    int n = (int)t->ncols;
    int have = k >= 0 && k < n && t->cols[k].shape;
    uint32_t cur = have ? t->cols[k].index : UINT32_MAX;
    int from = k >= 0 && k < n ? k : 0;
    for (int i = have ? 1 : 0; i <= n; i++) {
        int c = ((from + (dir < 0 ? -i : i)) % n + n) % n;
        if (!t->cols[c].shape || t->cols[c].index == cur)
            continue;
        while (c > 0 && t->cols[c - 1].shape && t->cols[c - 1].index == t->cols[c].index)
            c--; /* its first statistic */
        return c;
    }
    return have ? k : -1;
}

int heat_find_column(const top_table *t, const char *name)
{
    for (uint32_t k = 0; t && k < t->ncols; k++) {
        const top_column *c = &t->cols[k];
        size_t len = strlen(c->name);
        if (c->shape && c->stat_len < len &&
            pcw__name_equal(name, strlen(name), c->name, len - c->stat_len))
            return (int)k;
    }
    return -1;
}

void heat_free(top_heat *h)
{
    free(h->cells);
    memset(h, 0, sizeof *h);
}

/* The statistics of a distribution, as the query cooks them. */
static void heat_fill(heat_col *hc, const pcw_hist_dist *d)
{
    hc->status = d->status;
    if (d->status != PCW_CSTATUS_VALID)
        return;
    hc->count = d->count;
    static const pcw_hist_stat rate = {PCW_HSTAT_RATE, 0}, p50 = {PCW_HSTAT_QUANTILE, 0.5},
                               p99 = {PCW_HSTAT_QUANTILE, 0.99}, max = {PCW_HSTAT_MAX, 0};
    double v;
    hc->rate = pcw_hist_cook(d, &rate, &v) == PCW_CSTATUS_VALID ? v : NAN;
    hc->p50_st = (uint8_t)pcw_hist_cook(d, &p50, &hc->p50);
    hc->p99_st = (uint8_t)pcw_hist_cook(d, &p99, &hc->p99);
    hc->max_st = (uint8_t)pcw_hist_cook(d, &max, &hc->max);
}

/* The ring of a series is recorded while the heatmap is open: it starts
 * empty when the instance or the counter changes. */
void heat_record(top_heat *h, top_model *m, const top_row *r, int k, uint64_t key, uint64_t seq,
                 uint64_t mono_ns)
{
    const top_table *t = top_model_frame(m)->table;
    if (!t || k < 0 || k >= (int)t->ncols || !t->cols[k].shape)
        return;
    const top_column *c = &t->cols[k];
    if (h->key != key || h->index != c->index || h->shape != c->shape || !h->cells) {
        heat_free(h);
        uint32_t nb = pcw_hist_nbuckets(c->shape) + 1;
        if (!(h->cells = calloc((size_t)HEAT_COLS * nb, sizeof *h->cells)))
            return;
        h->key = key, h->index = c->index, h->shape = c->shape, h->nb = nb;
    }
    heat_col *hc = &h->col[seq % HEAT_COLS];
    if (!seq || hc->seq == seq)
        return;
    uint64_t *cells = h->cells + (size_t)(seq % HEAT_COLS) * h->nb;
    memset(hc, 0, sizeof *hc);
    memset(cells, 0, h->nb * sizeof *cells);
    hc->seq = seq;
    hc->mono_ns = mono_ns;
    pcw_hist_dist d;
    if (top_model_histogram(m, r, (uint32_t)k, &d) != PCW_OK) {
        hc->status = PCW_CSTATUS_NO_INSTANCE;
        return;
    }
    if (d.status == PCW_CSTATUS_VALID && (d.shape != h->shape || d.nbuckets + 1 != h->nb))
        d.status = PCW_CSTATUS_NO_DATA; /* the counterset changed under us */
    heat_fill(hc, &d);
    if (hc->status != PCW_CSTATUS_VALID)
        return;
    cells[0] = d.zero;
    memcpy(cells + 1, d.buckets, (size_t)d.nbuckets * sizeof *cells);
}

/* Bounds of cell b (0: the zero bucket, else bucket b - 1). */
void heat_cell_bounds(uint32_t shape, uint32_t b, double *lo, double *hi)
{
    pcw_hist_bucket_bounds(shape, b ? b - 1 : UINT32_MAX, lo, hi);
}

/* A bound as a row label: "1.065ms"; the last bucket's upper one, which
 * also holds every value above, "+Inf" (Prometheus' le). */
void heat_bound_text(char *buf, size_t cap, uint32_t shape, double v, int last)
{
    if (last)
        snprintf(buf, cap, "+Inf");
    else
        fmt_value(buf, cap, v, pcw_hist_unit(shape) == PCW_HIST_UNIT_NS ? "s" : "", 0);
}

/* "1000 obs  1000/s  p50 1.020ms  p99 19.80ms  max 20.26ms" (or what
 * the interval's status says). */
void heat_stats_text(char *buf, size_t cap, const heat_col *hc, uint32_t shape)
{
    if (hc->status != PCW_CSTATUS_VALID) {
        snprintf(buf, cap, "%s",
                 hc->status == PCW_CSTATUS_NEW_DATA_NEEDED ? "... (a second sample is needed)"
                                                           : pcw_cstatus_str(hc->status));
        return;
    }
    const char *unit = pcw_hist_unit(shape) == PCW_HIST_UNIT_NS ? "s" : "";
    char rate[32] = "-", p50[32], p99[32], max[32];
    if (!isnan(hc->rate))
        fmt_value(rate, sizeof rate, hc->rate, "/s", 0);
    fmt_cell(p50, sizeof p50, hc->p50, hc->p50_st, unit, 0);
    fmt_cell(p99, sizeof p99, hc->p99, hc->p99_st, unit, 0);
    fmt_cell(max, sizeof max, hc->max, hc->max_st, unit, 0);
    snprintf(buf, cap, "%llu obs  %s  p50 %s  p99 %s  max %s", (unsigned long long)hc->count, rate,
             p50, p99, max);
}

/* The cell holding value v of an interval (a quantile): the bucket whose
 * bounds hold it. */
uint32_t heat_cell_of(uint32_t shape, uint32_t nb, double v)
{
    for (uint32_t b = 0; b < nb; b++) {
        double lo, hi;
        heat_cell_bounds(shape, b, &lo, &hi);
        if (v <= hi || b + 1 == nb)
            return b;
    }
    return 0;
}

void heat_print(FILE *out, top_model *m, const uint32_t *rows, size_t n, int k)
{
    const top_frame *f = top_model_frame(m);
    const top_table *t = f->table;
    if (!t || k < 0 || k >= (int)t->ncols || !t->cols[k].shape)
        return;
    const top_column *c = &t->cols[k];
    fputs("\nDistribution of ", out);
    esc_put(out, c->name, strlen(c->name) - c->stat_len, 0);
    fputs(" (the interval's non-empty buckets):\n", out);
    for (size_t i = 0; i < n; i++) {
        const top_row *r = &t->rows[rows[i]];
        pcw_hist_dist d;
        heat_col hc;
        memset(&hc, 0, sizeof hc);
        if (top_model_histogram(m, r, (uint32_t)k, &d) != PCW_OK)
            d.status = PCW_CSTATUS_NO_INSTANCE;
        heat_fill(&hc, &d);
        char stats[256];
        heat_stats_text(stats, sizeof stats, &hc, c->shape);
        fputs("  ", out);
        esc_put(out, top_row_name(t, r), r->name_len, 0);
        fprintf(out, ": %s\n", stats);
        if (d.status != PCW_CSTATUS_VALID)
            continue;
        uint64_t big = d.zero;
        for (uint32_t j = 0; j < d.nbuckets; j++)
            big = d.buckets[j] > big ? d.buckets[j] : big;
        for (uint32_t b = 0; b <= d.nbuckets; b++) {
            uint64_t cnt = b ? d.buckets[b - 1] : d.zero;
            if (!cnt)
                continue;
            double lo, hi;
            char l[32], u[32], bar[41];
            heat_cell_bounds(d.shape, b, &lo, &hi);
            heat_bound_text(l, sizeof l, d.shape, lo, 0);
            heat_bound_text(u, sizeof u, d.shape, hi, b == d.nbuckets);
            int len = (int)ceil(40.0 * (double)cnt / (double)big);
            memset(bar, '#', (size_t)len);
            bar[len] = 0;
            int pad = 22 - (int)strlen(l) - (int)strlen(u); /* the counts in a column */
            fprintf(out, "    %s%s, %s]%*s %12llu  %s\n", b ? "(" : "[", b ? l : "0", u,
                    pad > 0 ? pad : 0, "", (unsigned long long)cnt, bar);
        }
    }
}
