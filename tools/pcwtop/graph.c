/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/graph.c - the graph view (perfmon's default): one counter of
 * the shown counterset over the last minutes, one line per instance - the
 * ones marked with m, else the first rows of the table in its sort order -
 * each in its own colour, with the value axis scaled to what is shown and
 * labelled, the time axis labelled in seconds before now, and a legend with
 * each line's last, minimum, average and maximum (perfmon's four).
 *
 * Lines are drawn in Unicode braille (2 x 4 dots per character cell) when
 * the terminal's locale is UTF-8, else with '*'. One dot column is one
 * refresh at the current interval; the values come from the history rings
 * (history.c). Where two lines cross in one character cell, the cell takes
 * the colour of the later line.
 */
#define _GNU_SOURCE 1
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcwtop.h"

#define AXIS_W GRAPH_AXIS_W

typedef struct point {
    int x;    /* dot column, 0 = oldest shown */
    double v; /* value */
    uint64_t seq;
} point;

/* A round upper bound for an axis: 1, 2, 2.5 or 5 times a power of ten. */
static double nice_ceil(double v)
{
    if (v <= 0)
        return 1;
    double p = pow(10, floor(log10(v)));
    static const double steps[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (v <= steps[i] * p * (1 + 1e-12))
            return steps[i] * p;
    return 10 * p;
}

static void put_dot(uint8_t *bits, uint8_t *color, int pw, int ph, int dx, int dy, int series)
{
    if (dx < 0 || dy < 0 || dx >= 2 * pw || dy >= 4 * ph)
        return;
    static const uint8_t map[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
    size_t cell = (size_t)(dy / 4) * (size_t)pw + (size_t)(dx / 2);
    bits[cell] |= map[dx % 2][dy % 4];
    color[cell] = (uint8_t)(series + 1);
}

static void line_dots(uint8_t *bits, uint8_t *color, int pw, int ph, int x0, int y0, int x1, int y1,
                      int series)
{
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        put_dot(bits, color, pw, ph, x0, y0, series);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy)
            err += dy, x0 += sx;
        if (e2 <= dx)
            err += dx, y0 += sy;
    }
}

/* The points of one series that fall in the plot, oldest first. */
static size_t series_points(const top_ui *ui, const top_snap *snap, const hist_series *s, int ndots,
                            point *out)
{
    uint64_t now = snap->hdr.mono_ns, step = ui->interval_ns ? ui->interval_ns : 1000000000ull;
    size_t n = 0;
    if (!s)
        return 0;
    for (uint64_t seq = s->last + 1; seq-- > s->first && n < HIST_POINTS;) {
        uint64_t t;
        double v = hist_at(snap->hist, s, seq, &t);
        if (!t || t > now)
            continue;
        double back = (double)(now - t) / (double)step;
        int x = ndots - 1 - (int)llround(back);
        if (x < 0)
            break;
        if (isnan(v))
            continue;
        out[n++] = (point){x, v, seq};
    }
    for (size_t i = 0; i < n / 2; i++) { /* oldest first */
        point p = out[i];
        out[i] = out[n - 1 - i];
        out[n - 1 - i] = p;
    }
    return n;
}

/* --replay: the points of a series over the whole log (snap_span), each
 * joined to the one before (they are the logged samples). */
static size_t span_points(const double *v, int ndots, point *out)
{
    size_t n = 0;
    for (int x = 0; v && x < ndots; x++)
        if (!isnan(v[x]))
            out[n++] = (point){x, v[x], (uint64_t)n}; /* consecutive: joined */
    return n;
}

/* --replay: the time axis of the whole log, labelled with clock times, and
 * the sample shown marked under it. */
static void span_axis(const top_snap *snap, const top_layout *lay, int y, int px, int pw)
{
    const top_frame *h = &snap->hdr;
    attrset(lay->colors ? COLOR_PAIR(PAIR_DIM) : A_NORMAL);
    for (int c = 0; c < pw; c++)
        mvaddstr(y, px + c, lay->utf8 ? "\xe2\x94\x80" : "-");
    int marks = pw / 20 > 4 ? 4 : pw / 20;
    for (int i = 0; i <= marks; i++) {
        int c = marks ? i * (pw - 1) / marks : 0;
        char label[32];
        uint64_t span = h->log_last_real_ns - h->log_first_real_ns;
        fmt_clock(label, sizeof label,
                  h->log_first_real_ns + (uint64_t)((double)span * c / (pw > 1 ? pw - 1 : 1)));
        int lx = px + c - (i == marks ? (int)strlen(label) - 1 : i ? (int)strlen(label) / 2 : 0);
        mvaddstr(y, lx < px ? px : lx, label);
    }
    attrset(A_NORMAL);
    if (h->log_last_ns > h->log_first_ns && h->mono_ns >= h->log_first_ns) {
        int c = (int)((double)(h->mono_ns - h->log_first_ns) /
                      (double)(h->log_last_ns - h->log_first_ns) * (pw - 1));
        attrset(A_BOLD);
        mvaddstr(y - 1, px + (c < pw ? c : pw - 1), lay->utf8 ? "\xe2\x96\xb2" : "^");
        attrset(A_NORMAL);
    }
}

void graph_time_axis(const top_ui *ui, const top_layout *lay, int y, int px, int pw, int per_col)
{
    attrset(lay->colors ? COLOR_PAIR(PAIR_DIM) : A_NORMAL);
    for (int c = 0; c < pw; c++)
        mvaddstr(y, px + c, lay->utf8 ? "\xe2\x94\x80" : "-");
    int marks = pw / 20 > 4 ? 4 : pw / 20;
    for (int i = 0; i <= marks; i++) {
        int c = marks ? pw - 1 - i * (pw - 1) / marks : pw - 1;
        char label[32];
        if (i == 0)
            snprintf(label, sizeof label, "now");
        else {
            char iv[24];
            fmt_interval(iv, sizeof iv, (uint64_t)(per_col * (pw - 1 - c)) * ui->interval_ns);
            snprintf(label, sizeof label, "-%s", iv);
        }
        int lx = px + c - (int)strlen(label) + 1;
        if (lx < px)
            lx = px;
        mvaddstr(y, lx, label);
    }
    attrset(A_NORMAL);
}

void graph_draw(const top_ui *ui, const top_snap *snap, const top_layout *lay, int y, int x, int h,
                int w)
{
    for (int i = 0; i < h; i++) {
        move(y + i, x);
        clrtoeol();
    }
    const top_table *t = snap->table;
    if (!t || !t->ncols) {
        mvaddstr(y + 1, x + 2, "no counter to graph");
        return;
    }
    int k = ui->graph_col < (int)t->ncols ? ui->graph_col : 0;
    const top_column *col = &t->cols[k];
    size_t ns = snap->ngraph;
    int legend = (int)ns + 1;
    int pw = w - AXIS_W - 1, ph = h - 2 - legend;
    char line[1024];
    char span[32];
    fmt_interval(span, sizeof span, (uint64_t)(2 * (pw > 0 ? pw : 0)) * ui->interval_ns);
    if (snap->hdr.log)
        snprintf(span, sizeof span, "the whole log");
    snprintf(line, sizeof line, "\\%s(*)\\%s%s%s  over %s%s  (Left/Right: counter %d of %u)",
             snap->hdr.set_name ? snap->hdr.set_name : "", col->name, col->unit[0] ? " in " : "",
             snap->hdr.raw ? "" : col->unit, snap->hdr.log ? "" : "the last ", span, k + 1,
             t->ncols);
    attrset(A_BOLD);
    mvaddnstr(y, x, line, w);
    attrset(A_NORMAL);
    if (pw < 10 || ph < 3) {
        mvaddstr(y + 1, x + 2, "window too small for the graph");
        return;
    }
    /* Points of every series, and the value range. */
    int ndots = 2 * pw;
    /* --replay: the series over the whole log (snap_span), when read for
     * this column and width. */
    int spans = snap->hdr.log && snap->span_col == k && snap->span_n == (size_t)ndots;
    size_t cap = (size_t)ndots > HIST_POINTS ? (size_t)ndots : HIST_POINTS; /* points a series */
    point *pts = malloc((ns ? ns : 1) * cap * sizeof *pts);
    size_t npts[GRAPH_MAX_SERIES] = {0};
    double vmin = 0, vmax = 0;
    int any = 0;
    for (size_t i = 0; pts && i < ns; i++) {
        const top_row *r = &t->rows[snap->graph_rows[i]];
        const hist_series *s = hist_get(snap->hist, snap_series_key(snap, r->key), (uint32_t)k);
        npts[i] = spans ? span_points(snap->span[i], ndots, pts + i * cap)
                        : series_points(ui, snap, s, ndots, pts + i * cap);
        for (size_t j = 0; j < npts[i]; j++) { /* the axis starts at 0 */
            vmin = fmin(vmin, pts[i * cap + j].v);
            vmax = fmax(vmax, pts[i * cap + j].v);
            any = 1;
        }
    }
    double top = nice_ceil(vmax > 0 ? vmax : 1), bottom = vmin < 0 ? -nice_ceil(-vmin) : 0;
    uint8_t *bits = calloc((size_t)pw * (size_t)ph, 1), *color = calloc((size_t)pw * (size_t)ph, 1);
    if (!pts || !bits || !color) {
        free(pts), free(bits), free(color);
        mvaddstr(y + 1, x + 2, "out of memory");
        return;
    }
    int ydots = 4 * ph;
    for (size_t i = 0; i < ns; i++) {
        const point *p = pts + i * cap;
        for (size_t j = 0; j < npts[i]; j++) {
            int yd = ydots - 1 - (int)llround((p[j].v - bottom) / (top - bottom) * (ydots - 1));
            if (j > 0 && p[j].seq == p[j - 1].seq + 1) {
                int yp =
                    ydots - 1 - (int)llround((p[j - 1].v - bottom) / (top - bottom) * (ydots - 1));
                line_dots(bits, color, pw, ph, p[j - 1].x, yp, p[j].x, yd, (int)i);
            } else {
                put_dot(bits, color, pw, ph, p[j].x, yd, (int)i);
            }
        }
    }
    /* The axis: round values (the top, the bottom, quarters when there
     * is room), each on the row whose dots hold it. */
    int py = y + 1, px = x + AXIS_W + 1;
    int ticks = ph >= 12 ? 4 : ph >= 5 ? 2 : 1;
    int tick_row[5];
    double tick_value[5];
    for (int i = 0; i <= ticks; i++) {
        tick_value[i] = top - (top - bottom) * i / ticks;
        int dot = (int)llround((double)(ydots - 1) * i / ticks);
        tick_row[i] = dot / 4;
    }
    for (int r = 0; r < ph; r++) {
        char label[32] = "";
        for (int i = 0; i <= ticks; i++)
            if (tick_row[i] == r)
                fmt_number(label, sizeof label, tick_value[i],
                           tick_value[i] == floor(tick_value[i]),
                           strcmp(col->unit, "s") == 0 && !snap->hdr.raw);
        attrset(lay->colors ? COLOR_PAIR(PAIR_DIM) : A_NORMAL);
        mvprintw(py + r, x, "%*s ", AXIS_W - 1, label);
        if (lay->utf8)
            mvaddstr(py + r, x + AXIS_W, label[0] ? "\xe2\x94\xa4" : "\xe2\x94\x82");
        else
            mvaddch(py + r, x + AXIS_W, label[0] ? '+' : '|');
        attrset(A_NORMAL);
        for (int c = 0; c < pw; c++) {
            size_t cell = (size_t)r * (size_t)pw + (size_t)c;
            if (!bits[cell])
                continue;
            attr_t a = lay->colors ? COLOR_PAIR(PAIR_SERIES0 + color[cell] - 1) : A_BOLD;
            attrset(a);
            if (lay->utf8) {
                char ch[4] = {(char)0xE2, (char)(0xA0 | (bits[cell] >> 6)),
                              (char)(0x80 | (bits[cell] & 0x3F)), 0};
                mvaddstr(py + r, px + c, ch);
            } else {
                mvaddch(py + r, px + c, '*');
            }
            attrset(A_NORMAL);
        }
    }
    /* The time axis: seconds before now. */
    int ay = py + ph;
    if (spans)
        span_axis(snap, lay, ay, px, pw);
    else
        graph_time_axis(ui, lay, ay, px, pw, 2);
    /* The legend: perfmon's Last, Minimum, Average, Maximum. */
    int ly = ay + 1;
    attrset(A_UNDERLINE);
    mvprintw(ly++, x, "   %-30s %10s %10s %10s %10s", ui->marks.n ? "MARKED" : "TOP BY SORT",
             "LAST", "MIN", "AVG", "MAX");
    attrset(A_NORMAL);
    for (size_t i = 0; i < ns && ly < y + h; i++, ly++) {
        const top_row *r = &t->rows[snap->graph_rows[i]];
        const point *p = pts + i * cap;
        char name[4 * 31 + 8], last[32] = "-", mn[32] = "-", avg[32] = "-", mx[32] = "-";
        utf8_pad(name, sizeof name, top_row_name(t, r), r->name_len, 30, 0);
        if (npts[i]) {
            double lo = p[0].v, hi = p[0].v, sum = 0;
            for (size_t j = 0; j < npts[i]; j++) {
                lo = p[j].v < lo ? p[j].v : lo;
                hi = p[j].v > hi ? p[j].v : hi;
                sum += p[j].v;
            }
            fmt_value(last, sizeof last, p[npts[i] - 1].v, col->unit, snap->hdr.raw);
            fmt_value(mn, sizeof mn, lo, col->unit, snap->hdr.raw);
            fmt_value(avg, sizeof avg, sum / (double)npts[i], col->unit, snap->hdr.raw);
            fmt_value(mx, sizeof mx, hi, col->unit, snap->hdr.raw);
        }
        attrset(lay->colors ? COLOR_PAIR(PAIR_SERIES0 + (int)i) | A_BOLD : A_BOLD);
        mvaddstr(ly, x + 1, lay->utf8 ? "\xe2\x96\xa0" : "#");
        attrset(A_NORMAL);
        mvprintw(ly, x + 3, "%s %10s %10s %10s %10s", name, last, mn, avg, mx);
    }
    if (!any)
        mvaddstr(py + ph / 2, px + 2, "collecting history: a point per refresh...");
    free(pts), free(bits), free(color);
}
