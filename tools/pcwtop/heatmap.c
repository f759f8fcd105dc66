/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/heatmap.c - a histogram counter's distribution over time
 * (H): the latency heatmap. Rows are the histogram's buckets, coarsened to
 * the rows the screen has (g adjacent buckets a row, the range the shown
 * intervals populate, highest values at the top), columns are refreshes
 * (the newest at the right, on the graph's time axis), a cell's shade is
 * how many observations of that interval fell in that row's buckets, on a
 * log scale (one observation is visible next to a thousand). The legend
 * gives the shades' counts, the newest interval's count, rate, p50, p99
 * and max, and marks the rows holding its p50 and p99.
 *
 * The distribution is the query's (pcw_pdh_get_histogram: the interval's
 * per-bucket difference, a _Total's merged buckets); the statistics are
 * the query's too (pcw_hist_cook), so they are the columns' values. The
 * ring (top_heat) is recorded for the instance under the cursor while the
 * view is open: it starts empty when the instance or the counter changes.
 * Work per refresh: O(buckets); per draw: O(columns x buckets).
 *
 * Batch mode (-b -H COUNTER) prints the same distribution as text after
 * each refresh's table.
 */
#define _GNU_SOURCE 1
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pcw/histogram.h>
#include "common/name.h"

#include "pcwtop.h"

#define MARK_W 9 /* "◀ p50 p99" right of the plot */

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
            pcw_name_equal(name, strlen(name), c->name, len - c->stat_len))
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

void heat_sync(top_ui *ui, top_model *m)
{
    const top_table *t = ui->table;
    if (!t)
        return;
    int k = ui->heat_col;
    if (k < 0 || k >= (int)t->ncols || !t->cols[k].shape)
        k = ui->heat_col = heat_next_column(t, -1, 1);
    if (k < 0 || ui->cursor < ui->rows_first || ui->cursor >= ui->rows_first + ui->nrows)
        return;
    const top_row *r = &t->rows[ui->rows[ui->cursor - ui->rows_first].row];
    const top_column *c = &t->cols[k];
    top_heat *h = &ui->heat;
    uint64_t key = ui_series_key(ui, r->key);
    if (h->key != key || h->index != c->index || h->shape != c->shape || !h->cells) {
        heat_free(h);
        uint32_t nb = pcw_hist_nbuckets(c->shape) + 1;
        if (!(h->cells = calloc((size_t)HEAT_COLS * nb, sizeof *h->cells)))
            return;
        h->key = key, h->index = c->index, h->shape = c->shape, h->nb = nb;
    }
    heat_col *hc = &h->col[ui->seq % HEAT_COLS];
    if (!ui->seq || hc->seq == ui->seq)
        return;
    uint64_t *cells = h->cells + (size_t)(ui->seq % HEAT_COLS) * h->nb;
    memset(hc, 0, sizeof *hc);
    memset(cells, 0, h->nb * sizeof *cells);
    hc->seq = ui->seq;
    hc->mono_ns = ui->hdr.mono_ns;
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
static void cell_bounds(uint32_t shape, uint32_t b, double *lo, double *hi)
{
    pcw_hist_bucket_bounds(shape, b ? b - 1 : UINT32_MAX, lo, hi);
}

/* A bound as a row label: "1.065ms"; the last bucket's upper one, which
 * also holds every value above, "+Inf" (Prometheus' le). */
static void bound_text(char *buf, size_t cap, uint32_t shape, double v, int last)
{
    if (last)
        snprintf(buf, cap, "+Inf");
    else
        fmt_value(buf, cap, v, pcw_hist_unit(shape) == PCW_HIST_UNIT_NS ? "s" : "", 0);
}

/* "1000 obs  1000/s  p50 1.020ms  p99 19.80ms  max 20.26ms" (or what
 * the interval's status says). */
static void stats_text(char *buf, size_t cap, const heat_col *hc, uint32_t shape)
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
static uint32_t cell_of(uint32_t shape, uint32_t nb, double v)
{
    for (uint32_t b = 0; b < nb; b++) {
        double lo, hi;
        cell_bounds(shape, b, &lo, &hi);
        if (v <= hi || b + 1 == nb)
            return b;
    }
    return 0;
}

/* s at (y, x), cut or padded to w columns, control characters shown as '?'
 * (names come from other processes). */
static void put_text(int y, int x, int w, const char *s, attr_t a)
{
    if (w <= 0)
        return;
    char buf[4 * 512 + 8];
    utf8_pad(buf, sizeof buf, s, strlen(s), w > 512 ? 512 : w, 0);
    attrset(a);
    mvaddstr(y, x, buf);
    attrset(A_NORMAL);
}

void heat_draw(top_ui *ui, int y, int x, int h, int w)
{
    for (int i = 0; i < h; i++) {
        move(y + i, x);
        clrtoeol();
    }
    const top_table *t = ui->table;
    int k = ui->heat_col;
    if (!t || k < 0 || k >= (int)t->ncols || !t->cols[k].shape) {
        put_text(y + 1, x + 2, w - 2, "no histogram counter in this counterset", A_NORMAL);
        return;
    }
    const top_column *c = &t->cols[k];
    const top_heat *hm = &ui->heat;
    const char *iname = "";
    int ilen = 0;
    if (ui->cursor >= ui->rows_first && ui->cursor < ui->rows_first + ui->nrows) {
        const top_row *r = &t->rows[ui->rows[ui->cursor - ui->rows_first].row];
        iname = top_row_name(t, r);
        ilen = (int)r->name_len;
    }
    int nhist = 0, which = 0;
    for (uint32_t j = 0; j < t->ncols; j++)
        if (t->cols[j].shape &&
            (j == 0 || t->cols[j - 1].index != t->cols[j].index || !t->cols[j - 1].shape)) {
            nhist++;
            which += t->cols[j].index <= c->index;
        }
    int pw = w - GRAPH_AXIS_W - 1 - MARK_W, ph = h - 4;
    char line[1024], span[32];
    fmt_interval(span, sizeof span, (uint64_t)(pw > 0 ? pw : 0) * ui->interval_ns);
    snprintf(
        line, sizeof line,
        "\\%s(%.*s)\\%.*s  distribution per refresh, last %s  (Left/Right: histogram %d of %d, "
        "Up/Down: instance)",
        ui->hdr.set_name ? ui->hdr.set_name : "", ilen, iname, (int)(strlen(c->name) - c->stat_len),
        c->name, span, which, nhist);
    put_text(y, x, w, line, A_BOLD);
    if (pw < 10 || ph < 3) {
        put_text(y + 1, x + 2, w - 2, "window too small for the heatmap", A_NORMAL);
        return;
    }
    /* The ring's columns on screen: x by time, as the graph places them. */
    int slot[512];
    if (pw > 512)
        pw = 512;
    for (int i = 0; i < pw; i++)
        slot[i] = -1;
    uint64_t now = ui->hdr.mono_ns, step = ui->interval_ns ? ui->interval_ns : 1000000000ull;
    uint32_t nb = hm->nb, lo = UINT32_MAX, hi = 0;
    int newest = -1, valid = 0;
    for (uint32_t s = 0; hm->cells && s < HEAT_COLS; s++) {
        const heat_col *hc = &hm->col[s];
        if (!hc->seq || hc->mono_ns > now)
            continue;
        int cx = pw - 1 - (int)llround((double)(now - hc->mono_ns) / (double)step);
        if (cx < 0)
            continue;
        if (slot[cx] < 0 || hm->col[slot[cx]].seq < hc->seq)
            slot[cx] = (int)s;
    }
    for (int i = 0; i < pw; i++) {
        if (slot[i] < 0)
            continue;
        newest = slot[i];
        if (hm->col[slot[i]].status != PCW_CSTATUS_VALID)
            continue;
        valid++;
        const uint64_t *cells = hm->cells + (size_t)slot[i] * nb;
        for (uint32_t b = 0; b < nb; b++)
            if (cells[b]) {
                lo = b < lo ? b : lo;
                hi = b > hi ? b : hi;
            }
    }
    int py = y + 1, px = x + GRAPH_AXIS_W + 1;
    graph_time_axis(ui, py + ph, px, pw, 1);
    if (lo == UINT32_MAX) {
        put_text(py + ph / 2, px + 2, pw - 2,
                 valid ? "no observations in the intervals shown"
                       : "collecting: a column per refresh...",
                 A_NORMAL);
        return;
    }
    /* Rows: g buckets each, the populated range centred in what ph rows of
     * g buckets cover, within the histogram. */
    uint32_t span_b = hi - lo + 1, g = (span_b + (uint32_t)ph - 1) / (uint32_t)ph;
    uint32_t total = g * (uint32_t)ph, bottom = 0, top = nb - 1;
    if (total < nb) {
        uint32_t extra = (total - span_b) / 2;
        bottom = lo > extra ? lo - extra : 0;
        top = bottom + total - 1;
        if (top > nb - 1) {
            top = nb - 1;
            bottom = top + 1 - total;
        }
    }
    /* Counts per cell, and the largest for the shades' scale. */
    uint64_t *grid = calloc((size_t)ph * (size_t)pw, sizeof *grid), gmax = 0;
    if (!grid) {
        put_text(py, px, pw, "out of memory", A_NORMAL);
        return;
    }
    for (int i = 0; i < pw; i++) {
        if (slot[i] < 0 || hm->col[slot[i]].status != PCW_CSTATUS_VALID)
            continue;
        const uint64_t *cells = hm->cells + (size_t)slot[i] * nb;
        for (uint32_t b = bottom; b <= top && b < nb; b++) {
            uint64_t *gc = &grid[(size_t)((top - b) / g) * (size_t)pw + (size_t)i];
            *gc = *gc + cells[b] < *gc ? UINT64_MAX : *gc + cells[b];
            gmax = *gc > gmax ? *gc : gmax;
        }
    }
    static const char *const shade_u[HEAT_LEVELS] = {"\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
                                                     "\xe2\x96\x88"};
    static const char *const shade_a[HEAT_LEVELS] = {".", ":", "*", "#"};
    const char *const *shade = ui->utf8 ? shade_u : shade_a;
    double lmax = log1p((double)gmax);
    for (int r = 0; r < ph; r++) {
        if ((int64_t)top - (int64_t)r * g < (int64_t)bottom)
            break;
        uint32_t rb_top = top - (uint32_t)r * g;
        double blo, bhi;
        cell_bounds(hm->shape, rb_top, &blo, &bhi);
        char label[32];
        bound_text(label, sizeof label, hm->shape, bhi, rb_top + 1 == nb);
        attrset(ui->colors ? COLOR_PAIR(PAIR_DIM) : A_NORMAL);
        mvprintw(py + r, x, "%*s ", GRAPH_AXIS_W - 1, label);
        mvaddstr(py + r, x + GRAPH_AXIS_W, ui->utf8 ? "\xe2\x94\x82" : "|");
        attrset(A_NORMAL);
        for (int i = 0; i < pw; i++) {
            uint64_t n = grid[(size_t)r * (size_t)pw + (size_t)i];
            if (!n)
                continue;
            int level = 1 + (int)(HEAT_LEVELS * log1p((double)n) / (lmax > 0 ? lmax : 1));
            level = level > HEAT_LEVELS ? HEAT_LEVELS : level;
            attrset(ui->colors ? COLOR_PAIR(PAIR_HEAT0 + level - 1) : level >= 3 ? A_BOLD : 0);
            mvaddstr(py + r, px + i, shade[level - 1]);
            attrset(A_NORMAL);
        }
    }
    free(grid);
    /* p50 and p99 of the newest interval: their rows marked. */
    const heat_col *last = newest >= 0 ? &hm->col[newest] : NULL;
    if (last && last->status == PCW_CSTATUS_VALID) {
        int r50 = -1, r99 = -1;
        if (last->p50_st == PCW_CSTATUS_VALID || last->p50_st == PCW_CSTATUS_ABOVE_RANGE)
            r50 = (int)((top - cell_of(hm->shape, nb, last->p50)) / g);
        if (last->p99_st == PCW_CSTATUS_VALID || last->p99_st == PCW_CSTATUS_ABOVE_RANGE)
            r99 = (int)((top - cell_of(hm->shape, nb, last->p99)) / g);
        const char *arrow = ui->utf8 ? "\xe2\x97\x80" : "<";
        for (int r = 0; r < ph; r++) {
            if (r != r50 && r != r99)
                continue;
            snprintf(line, sizeof line, "%s%s%s", arrow, r == r50 ? " p50" : "",
                     r == r99 ? " p99" : "");
            put_text(py + r, px + pw, MARK_W, line, A_BOLD);
        }
    }
    /* The legend: what each shade counts, the rows' width, the newest
     * interval's statistics. */
    int ly = py + ph + 1;
    char *p = line, *end = line + sizeof line;
    p += snprintf(p, (size_t)(end - p), "shades (observations a cell, log):");
    for (int l = 1; l <= HEAT_LEVELS && p < end; l++) {
        double from = l == 1 ? 1 : ceil(expm1(lmax * (l - 1) / HEAT_LEVELS));
        char num[32];
        fmt_number(num, sizeof num, from, 1, 0);
        p += snprintf(p, (size_t)(end - p), " %s %s+", shade[l - 1], num);
    }
    if (p < end)
        snprintf(p, (size_t)(end - p), "   rows: %u bucket%s", g, g == 1 ? "" : "s");
    put_text(ly, x, w, line, ui->colors ? COLOR_PAIR(PAIR_DIM) : A_NORMAL);
    if (last) {
        char stats[256];
        stats_text(stats, sizeof stats, last, hm->shape);
        snprintf(line, sizeof line, "last interval: %s", stats);
        put_text(ly + 1, x, w, line, A_NORMAL);
    }
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
        stats_text(stats, sizeof stats, &hc, c->shape);
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
            cell_bounds(d.shape, b, &lo, &hi);
            bound_text(l, sizeof l, d.shape, lo, 0);
            bound_text(u, sizeof u, d.shape, hi, b == d.nbuckets);
            int len = (int)ceil(40.0 * (double)cnt / (double)big);
            memset(bar, '#', (size_t)len);
            bar[len] = 0;
            int pad = 22 - (int)strlen(l) - (int)strlen(u); /* the counts in a column */
            fprintf(out, "    %s%s, %s]%*s %12llu  %s\n", b ? "(" : "[", b ? l : "0", u,
                    pad > 0 ? pad : 0, "", (unsigned long long)cnt, bar);
        }
    }
}
