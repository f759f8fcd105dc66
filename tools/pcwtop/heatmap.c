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
 * It draws the ring heat.c records for the instance under the cursor
 * (the snapshot's, snap_heat) while the view is open. Work per draw:
 * O(columns x buckets).
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

void heat_draw(const top_ui *ui, const top_snap *s, const top_layout *lay, int y, int x, int h,
               int w)
{
    for (int i = 0; i < h; i++) {
        move(y + i, x);
        clrtoeol();
    }
    const top_table *t = s->table;
    int k = ui->heat_col;
    if (!t || k < 0 || k >= (int)t->ncols || !t->cols[k].shape) {
        put_text(y + 1, x + 2, w - 2, "no histogram counter in this counterset", A_NORMAL);
        return;
    }
    const top_column *c = &t->cols[k];
    const top_heat *hm = &s->heat;
    const char *iname = "";
    int ilen = 0;
    const ui_row *u = snap_row_at(s, ui->cursor);
    if (u) {
        const top_row *r = &t->rows[u->row];
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
        s->hdr.set_name ? s->hdr.set_name : "", ilen, iname, (int)(strlen(c->name) - c->stat_len),
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
    uint64_t now = s->hdr.mono_ns, step = ui->interval_ns ? ui->interval_ns : 1000000000ull;
    uint32_t nb = hm->nb, lo = UINT32_MAX, hi = 0;
    int newest = -1, valid = 0;
    for (uint32_t j = 0; hm->cells && j < HEAT_COLS; j++) {
        const heat_col *hc = &hm->col[j];
        if (!hc->seq || hc->mono_ns > now)
            continue;
        int cx = pw - 1 - (int)llround((double)(now - hc->mono_ns) / (double)step);
        if (cx < 0)
            continue;
        if (slot[cx] < 0 || hm->col[slot[cx]].seq < hc->seq)
            slot[cx] = (int)j;
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
    graph_time_axis(ui, lay, py + ph, px, pw, 1);
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
    const char *const *shade = lay->utf8 ? shade_u : shade_a;
    double lmax = log1p((double)gmax);
    for (int r = 0; r < ph; r++) {
        if ((int64_t)top - (int64_t)r * g < (int64_t)bottom)
            break;
        uint32_t rb_top = top - (uint32_t)r * g;
        double blo, bhi;
        heat_cell_bounds(hm->shape, rb_top, &blo, &bhi);
        char label[32];
        heat_bound_text(label, sizeof label, hm->shape, bhi, rb_top + 1 == nb);
        attrset(lay->colors ? COLOR_PAIR(PAIR_DIM) : A_NORMAL);
        mvprintw(py + r, x, "%*s ", GRAPH_AXIS_W - 1, label);
        mvaddstr(py + r, x + GRAPH_AXIS_W, lay->utf8 ? "\xe2\x94\x82" : "|");
        attrset(A_NORMAL);
        for (int i = 0; i < pw; i++) {
            uint64_t n = grid[(size_t)r * (size_t)pw + (size_t)i];
            if (!n)
                continue;
            int level = 1 + (int)(HEAT_LEVELS * log1p((double)n) / (lmax > 0 ? lmax : 1));
            level = level > HEAT_LEVELS ? HEAT_LEVELS : level;
            attrset(lay->colors ? COLOR_PAIR(PAIR_HEAT0 + level - 1) : level >= 3 ? A_BOLD : 0);
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
            r50 = (int)((top - heat_cell_of(hm->shape, nb, last->p50)) / g);
        if (last->p99_st == PCW_CSTATUS_VALID || last->p99_st == PCW_CSTATUS_ABOVE_RANGE)
            r99 = (int)((top - heat_cell_of(hm->shape, nb, last->p99)) / g);
        const char *arrow = lay->utf8 ? "\xe2\x97\x80" : "<";
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
    put_text(ly, x, w, line, lay->colors ? COLOR_PAIR(PAIR_DIM) : A_NORMAL);
    if (last) {
        char stats[256];
        heat_stats_text(stats, sizeof stats, last, hm->shape);
        snprintf(line, sizeof line, "last interval: %s", stats);
        put_text(ly + 1, x, w, line, A_NORMAL);
    }
}
