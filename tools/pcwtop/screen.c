/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/screen.c - drawing the interactive screen from the UI state
 * and the snapshot (pcwtop.h), both read-only: nothing here touches the
 * model, so a redraw never waits for a collection, and nothing here
 * changes what the keys act on. Where things went (for the mouse, and the
 * scroll positions as they fit) is written to top_layout.
 *
 *   line 0          pcwtop, providers live/exited, countersets, instances,
 *                   the collection's cost, the interval, the time
 *   line 1          the counterset shown, its sort, filter, raw, paused
 *   line 2          the last event or message
 *   lines 3..n-2    the counterset list (left; `c` hides it, and it hides
 *                   itself below UI_NARROW_COLS columns) and the table
 *                   (right), or the help, details or graph; the sort
 *                   chooser and the column setup (F2) take the list's place
 *   line n-1        the function bar (or the filter / search prompt)
 *
 * The table: the instance name and PID stay; the counter columns shown
 * are the ones F2 leaves visible, in its order, from ui->hscroll on (Left
 * and Right scroll by a column), and only whole columns: a title is cut
 * to its column, which keeps one space before it.
 *
 * Names are drawn at their width in terminal columns (wide characters take
 * two), cut with an ellipsis; only the rows on screen are drawn. Colours:
 * 256 when the terminal has them, 8 otherwise, none when it has none or
 * NO_COLOR is set (then bold, reverse and underline carry the meaning).
 */
#define _GNU_SOURCE 1
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcwtop.h"

#define CELL_BYTES (4 * 512 + 8) /* utf8_pad of up to 512 columns */

/* ---- colours ----------------------------------------------------------------- */

void screen_init_colors(top_layout *lay)
{
    const char *nc = getenv("NO_COLOR");
    lay->colors = 0;
    if ((nc && *nc) || !has_colors() || start_color() != OK)
        return;
    use_default_colors();
    lay->colors = 1;
    lay->colors256 = COLORS >= 256;
    int big = lay->colors256;
    init_pair(PAIR_HEADER, COLOR_CYAN, -1);
    init_pair(PAIR_TITLE, COLOR_BLACK, COLOR_GREEN);
    init_pair(PAIR_CURSOR, COLOR_BLACK, COLOR_WHITE);
    init_pair(PAIR_FOCUS, COLOR_BLACK, COLOR_CYAN);
    init_pair(PAIR_CHANGED, big ? 214 : COLOR_YELLOW, -1);
    init_pair(PAIR_NEW, COLOR_GREEN, -1);
    init_pair(PAIR_GONE, COLOR_RED, -1);
    init_pair(PAIR_WARN, COLOR_YELLOW, -1);
    init_pair(PAIR_BAR, COLOR_BLACK, COLOR_CYAN);
    init_pair(PAIR_BARTEXT, -1, -1);
    init_pair(PAIR_DIM, big ? 245 : COLOR_BLUE, -1);
    static const short c256[GRAPH_MAX_SERIES] = {39, 208, 40, 199, 226, 51, 141, 196};
    static const short c8[GRAPH_MAX_SERIES] = {COLOR_GREEN,   COLOR_YELLOW, COLOR_CYAN,
                                               COLOR_MAGENTA, COLOR_RED,    COLOR_BLUE,
                                               COLOR_WHITE,   COLOR_GREEN};
    for (int i = 0; i < GRAPH_MAX_SERIES; i++)
        init_pair((short)(PAIR_SERIES0 + i), big ? c256[i] : c8[i], -1);
    /* The heatmap's shades: cold to hot. */
    static const short h256[HEAT_LEVELS] = {24, 37, 214, 196};
    static const short h8[HEAT_LEVELS] = {COLOR_BLUE, COLOR_CYAN, COLOR_YELLOW, COLOR_RED};
    for (int i = 0; i < HEAT_LEVELS; i++)
        init_pair((short)(PAIR_HEAT0 + i), big ? h256[i] : h8[i], -1);
}

/* The attribute for a role: its colour pair, or `mono` without colours. */
static attr_t at(const top_layout *lay, int pair, attr_t mono)
{
    if (!lay->colors)
        return mono;
    attr_t a = COLOR_PAIR(pair);
    if (pair == PAIR_CHANGED || pair == PAIR_HEADER || pair == PAIR_WARN)
        a |= A_BOLD;
    return a;
}

/* ---- text -------------------------------------------------------------------- */

/* Text at (y, x), exactly `w` columns (cut or padded), clipped at `right`. */
static void text(int y, int x, int w, int right, const char *s, attr_t a, int align_right)
{
    if (x >= right || w <= 0)
        return;
    if (x + w > right)
        w = right - x;
    static char buf[CELL_BYTES];
    if (w > 512)
        w = 512;
    utf8_pad(buf, sizeof buf, s, strlen(s), w, align_right);
    attrset(a);
    mvaddstr(y, x, buf);
    attrset(A_NORMAL);
}

static void clear_line(int y)
{
    move(y, 0);
    clrtoeol();
}

/* ---- header ------------------------------------------------------------------ */

static void draw_header(const top_ui *ui, const top_snap *s, top_layout *lay)
{
    const top_frame *h = &s->hdr;
    char line[1024], clock[32], iv[32], cost[32];
    fmt_clock(clock, sizeof clock, h->real_ns);
    fmt_interval(iv, sizeof iv, ui->interval_ns);
    fmt_cost(cost, sizeof cost, h->cost_ns);
    size_t instances = s->table ? s->table->nq - s->table->ntotals : 0;
    /* The fields in the order shown; `drop` is the order in which they are
     * left out when the line is too wide (Cost first, the name, the
     * number of countersets the list shows anyway), so that 80 columns
     * show the rest whole. */
    char f[6][96];
    snprintf(f[0], sizeof f[0], "pcwtop");
    snprintf(f[1], sizeof f[1], "Providers: %zu live, %zu exited", h->providers_live,
             h->providers_exited);
    snprintf(f[2], sizeof f[2], "Countersets: %zu", h->nsets);
    snprintf(f[3], sizeof f[3], "Instances: %zu", instances);
    snprintf(f[4], sizeof f[4], "Cost: %s", cost);
    snprintf(f[5], sizeof f[5], "Delay: %s", iv);
    if (h->log) { /* a replay: where in the log, how fast; the clock has the date */
        static const int speeds[] = UI_SPEEDS;
        int x = speeds[ui->speed];
        snprintf(f[1], sizeof f[1], "Replay: sample %llu of %llu",
                 (unsigned long long)h->log_index + 1, (unsigned long long)h->log_samples);
        if (x)
            snprintf(f[5], sizeof f[5], "Speed: %dx", x);
        else
            snprintf(f[5], sizeof f[5], "Speed: max");
        fmt_datetime(clock, sizeof clock, h->real_ns);
        clock[19] = 0; /* to the second */
    }
    static const int drop[] = {4, 0, 2};
    int shown[6] = {1, 1, 1, 1, 1, 1};
    int cw = (int)strlen(clock) + 1;
    for (size_t d = 0;; d++) {
        size_t n = 0;
        line[0] = 0;
        for (int i = 0; i < 6; i++)
            if (shown[i])
                n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", n ? "  " : "", f[i]);
        if ((int)n <= COLS - cw || d == sizeof drop / sizeof drop[0])
            break;
        shown[drop[d]] = 0;
    }
    /* The time keeps the right edge; the rest is cut if it must be. */
    text(0, 0, COLS - cw, COLS, line, at(lay, PAIR_HEADER, A_BOLD), 0);
    text(0, COLS - cw, cw, COLS, clock, at(lay, PAIR_HEADER, A_BOLD), 1);

    size_t n = 0;
    line[0] = 0;
    if (h->set_name) {
        const top_setinfo *si = h->set_index >= 0 ? &h->sets[h->set_index] : NULL;
        if (h->log)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s (%s, from the log)", h->set_name,
                                  fmt_instance_type(h->instance_type));
        else
            n += (size_t)snprintf(line + n, sizeof line - n, "%s (%s, %u provider%s%s)",
                                  h->set_name, fmt_instance_type(h->instance_type),
                                  si ? si->providers : 0, si && si->providers == 1 ? "" : "s",
                                  h->set_callback ? ", callback" : "");
    }
    if (ui->choice.sort != TOP_SORT_NONE && n < sizeof line) {
        int desc = (ui->choice.sort >= 0) != ui->choice.reverse;
        n += (size_t)snprintf(line + n, sizeof line - n, "  sorted by %s %s",
                              layout_sort_label(s->table, ui->choice.sort),
                              desc ? "(descending)" : "(ascending)");
    }
    if (ui->choice.filter[0] && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  filter \"%s\": %zu shown",
                              ui->choice.filter, s->count - s->nshown_totals);
    if (s->hdr.raw && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  RAW VALUES");
    if (s->hdr.advanced && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  ADVANCED");
    if (ui->paused && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  PAUSED");
    if (h->log && h->log_end && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  END OF LOG");
    if (ui->mode == MODE_TABLE && s->table && lay->ncol_visible &&
        (lay->col_first > 0 || lay->col_last + 1 < lay->ncol_visible) && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  columns %d-%d of %d (Left/Right)",
                              lay->col_first + 1, lay->col_last + 1, lay->ncol_visible);
    if (s->stale && n < sizeof line)
        snprintf(line + n, sizeof line - n, "  (collecting...)");
    clear_line(1);
    text(1, 0, COLS, COLS, line, A_BOLD, 0);
    clear_line(2);
    if (ui->message[0])
        text(2, 0, COLS, COLS, ui->message, at(lay, PAIR_WARN, A_BOLD), 0);
}

/* ---- the function bar --------------------------------------------------------- */

/* One "KeyLabel" entry of the bar at x; returns the next x. */
static int bar_entry(const top_layout *lay, int y, int x, const char *key, const char *label)
{
    int kw = (int)strlen(key), lw = (int)strlen(label);
    text(y, x, kw, COLS, key, at(lay, PAIR_BARTEXT, A_BOLD), 0);
    text(y, x + kw, lw + 1, COLS, label, at(lay, PAIR_BAR, A_REVERSE), 0);
    return x + kw + lw + 2;
}

static void draw_bar(const top_ui *ui, const top_snap *s, top_layout *lay)
{
    int y = LINES - 1;
    clear_line(y);
    if (ui->editing) {
        int search = ui->editing == EDIT_SEARCH;
        char line[600];
        snprintf(line, sizeof line, "%s_%s", ui->edit,
                 search && ui->search_failed ? "   (no instance matches)" : "");
        int go = ui->editing == EDIT_GOTO;
        const char *hint = search ? "F3 Next  Enter Done "
                           : go   ? "Enter Go  Esc Cancel"
                                  : "Enter Done  Esc Undo";
        text(y, 0, 20, COLS, hint, at(lay, PAIR_BAR, A_REVERSE), 0);
        text(y, 21, 8, COLS, search ? "Search:" : go ? "Go to:" : "Filter:", A_BOLD, 0);
        text(y, 29, COLS - 29, COLS, line, A_NORMAL, 0);
        return;
    }
    /* htop's order; F10Quit keeps its place at the end and the entries
     * that do not fit before it are left out (the help has them all). */
    int hist = heat_next_column(s->table, -1, 1) >= 0; /* H has something to show */
    const char *keys[][2] = {
        {"F1", "Help"},
        {"F2", "Setup"},
        {"F3", "Search"},
        {"F4", "Filter"},
        {"F5", "Refresh"},
        {"F6", "Sort"},
        {"v", s->hdr.raw ? "Cooked" : "Raw"},
        {"g", "Graph"},
        {hist ? "H" : "", hist ? "Heatmap" : ""},
        {"Spc", ui->paused ? "Run" : "Pause"},
        {"d", "Details"},
        {"c", "Sets"},
        {"t", "Totals"},
        {"r", "Reverse"},
        {"+-", "Delay"},
    };
    size_t n = sizeof keys / sizeof keys[0];
    if (s->hdr.log) { /* a replay: no refresh to ask for, a pace instead of a delay */
        keys[4][0] = "b", keys[4][1] = "GoTo";
        keys[14][1] = "Speed";
        keys[12][0] = ".,", keys[12][1] = "Step";
    }
    if (ui->mode == MODE_GRAPH) {
        static const char *const graph[][2] = {
            {"<>", "Counter"}, {"m", "Mark"},    {"U", "Unmark"}, {"Esc", "Table"},
            {"v", "Raw"},      {"Spc", "Pause"}, {"+-", "Delay"},
        };
        n = sizeof graph / sizeof graph[0];
        memcpy(keys, graph, sizeof graph);
        if (s->hdr.raw)
            keys[4][1] = "Cooked";
        if (ui->paused)
            keys[5][1] = "Run";
        if (s->hdr.log)
            keys[6][1] = "Speed";
    } else if (ui->mode == MODE_HEAT) {
        static const char *const heat[][2] = {
            {"<>", "Histogram"}, {"Up/Dn", "Instance"}, {"Esc", "Table"},
            {"Spc", "Pause"},    {"+-", "Delay"},
        };
        n = sizeof heat / sizeof heat[0];
        memcpy(keys, heat, sizeof heat);
        if (ui->paused)
            keys[3][1] = "Run";
        if (s->hdr.log)
            keys[4][1] = "Speed";
    } else if (ui->mode == MODE_SETUP) {
        static const char *const setup[][2] = {
            {"Spc", "Show/Hide"}, {"F7", "MoveUp"}, {"F8", "MoveDn"}, {"Esc", "Done"}};
        n = sizeof setup / sizeof setup[0];
        memcpy(keys, setup, sizeof setup);
    }
    const int quit_w = 9; /* "F10Quit " */
    int x = 0;
    for (size_t i = 0; i < n; i++) {
        if (!keys[i][0][0])
            continue; /* not for this counterset */
        int w = (int)(strlen(keys[i][0]) + strlen(keys[i][1])) + 2;
        if (x + w + quit_w > COLS)
            break;
        x = bar_entry(lay, y, x, keys[i][0], keys[i][1]);
    }
    bar_entry(lay, y, x, "F10", "Quit");
}

/* ---- the counterset list ------------------------------------------------------ */

static int list_width(const top_ui *ui, const top_snap *s)
{
    int w = 14;
    for (size_t i = 0; i < s->hdr.nsets; i++) {
        const char *n = s->hdr.sets[i].name;
        int nw = utf8_width(n, strlen(n)) + 6;
        if (nw > w)
            w = nw;
    }
    for (uint32_t i = 0; ui->mode == MODE_SETUP && s->table && i < ui->ncol_order; i++) {
        const char *n = s->table->cols[ui->col_order[i]].name;
        int nw = utf8_width(n, strlen(n)) + 5; /* "[x] " */
        if (nw > w)
            w = nw;
    }
    if (w > 32)
        w = 32;
    if (w > COLS / 3)
        w = COLS / 3;
    return w;
}

static void draw_sets(const top_ui *ui, const top_snap *s, top_layout *lay, int y, int x, int w,
                      int h)
{
    text(y, x, w, x + w,
         ui->mode == MODE_SORT    ? "Sort by"
         : ui->mode == MODE_SETUP ? "Columns"
                                  : "Countersets",
         at(lay, PAIR_TITLE, A_UNDERLINE | A_BOLD), 0);
    int rows = h - 1;
    if (ui->mode == MODE_SETUP) {
        /* The cursor's line kept in view (the list scrolls). */
        size_t first =
            ui->setup_cursor >= (size_t)rows && rows > 0 ? ui->setup_cursor - (size_t)rows + 1 : 0;
        for (int i = 0; i < rows; i++) {
            size_t k = first + (size_t)i;
            char line[CELL_BYTES];
            line[0] = 0;
            if (s->table && k < ui->ncol_order)
                snprintf(line, sizeof line, "[%c] %s", ui->col_hidden[k] ? ' ' : 'x',
                         s->table->cols[ui->col_order[k]].name);
            attr_t a = k < ui->ncol_order && k == ui->setup_cursor ? at(lay, PAIR_FOCUS, A_REVERSE)
                                                                   : A_NORMAL;
            text(y + 1 + i, x, w, x + w, line, a, 0);
        }
        return;
    }
    if (ui->mode == MODE_SORT) {
        int choices[UI_MAX_COLS + 3];
        size_t n = layout_sort_choices(s->table, choices, sizeof choices / sizeof choices[0]);
        for (int i = 0; i < rows; i++) {
            size_t k = (size_t)i;
            attr_t a = A_NORMAL;
            if (k < n && k == ui->sort_cursor)
                a = at(lay, PAIR_FOCUS, A_REVERSE);
            text(y + 1 + i, x, w, x + w, k < n ? layout_sort_label(s->table, choices[k]) : "", a,
                 0);
        }
        return;
    }
    if (rows <= 0)
        return;
    if (ui->set_cursor < lay->set_top)
        lay->set_top = ui->set_cursor;
    if (ui->set_cursor >= lay->set_top + (size_t)rows)
        lay->set_top = ui->set_cursor - (size_t)rows + 1;
    for (int i = 0; i < rows; i++) {
        size_t k = lay->set_top + (size_t)i;
        if (k >= s->hdr.nsets) {
            text(y + 1 + i, x, w, x + w, "", A_NORMAL, 0);
            continue;
        }
        const top_setinfo *si = &s->hdr.sets[k];
        char count[24], name[CELL_BYTES];
        int cw = s->hdr.log ? (count[0] = 0) /* a log does not say */
                            : snprintf(count, sizeof count, " (%u)", si->providers);
        utf8_pad(name, sizeof name, si->name, strlen(si->name), w - cw > 1 ? w - cw : 1, 0);
        char line[CELL_BYTES + 32];
        snprintf(line, sizeof line, "%s%s", name, count);
        attr_t a = A_NORMAL;
        if (k == ui->set_cursor)
            a = ui->focus == FOCUS_SETS ? at(lay, PAIR_FOCUS, A_REVERSE)
                                        : at(lay, PAIR_CURSOR, A_BOLD);
        text(y + 1 + i, x, w, x + w, line, a, 0);
    }
}

/* ---- the table ------------------------------------------------------------------ */

/* Cell k of row u as text: its value, or why it has none. */
static void cell_text(const top_snap *s, const ui_row *u, uint32_t k, char *num, size_t cap)
{
    if (u->state == TOP_ROW_GONE || u->state == TOP_ROW_EXITED)
        snprintf(num, cap, "%s", u->state == TOP_ROW_GONE ? "gone" : "exited");
    else
        fmt_cell(num, cap, u->v[k], u->st[k], s->table->cols[k].unit, s->hdr.raw);
}

static void draw_table(const top_ui *ui, const top_snap *s, top_layout *lay, int y, int x, int w,
                       int h)
{
    const top_table *t = s->table;
    int right = x + w;
    lay->nhdr = 0;
    for (int i = 0; i < h; i++)
        text(y + i, x, w, right, "", A_NORMAL, 0);
    if (!t) {
        text(y + 1, x + 2, w - 2, right,
             s->hdr.message[0] ? s->hdr.message : "waiting for the first collection...",
             at(lay, PAIR_WARN, A_BOLD), 0);
        return;
    }
    uint32_t nc = t->ncols < UI_MAX_COLS ? t->ncols : UI_MAX_COLS;
    /* The visible columns, in F2's order. */
    uint32_t vis[UI_MAX_COLS];
    int nvis = 0;
    for (uint32_t i = 0; i < ui->ncol_order; i++)
        if (!ui->col_hidden[i] && ui->col_order[i] < nc)
            vis[nvis++] = ui->col_order[i];
    int cw[UI_MAX_COLS], values_w = 0;
    char num[64];
    for (int i = 0; i < nvis; i++) {
        uint32_t k = vis[i];
        /* As wide as its title (within limits) or its widest value on
         * screen: a raw value is never cut. */
        cw[k] = fmt_col_width(t->cols[k].name);
        for (size_t r = 0; r < s->nrows; r++) {
            cell_text(s, &s->rows[r], k, num, sizeof num);
            int vw = (int)strlen(num);
            if (vw > cw[k])
                cw[k] = vw;
        }
        values_w += cw[k] + 2;
    }
    /* The name column: as wide as the widest name on screen, within what
     * the values leave (at least 10). */
    int namew = 8;
    for (size_t i = 0; i < s->nrows; i++) {
        const top_row *r = &t->rows[s->rows[i].row];
        int nw = utf8_width(top_row_name(t, r), r->name_len);
        if (nw > namew)
            namew = nw;
    }
    /* PID, and with --containers CONTAINER: fixed columns after the name. */
    int fixw = 8 + (s->hdr.containers ? 14 : 0);
    int avail = w - 2 - fixw - values_w;
    if (namew > avail)
        namew = avail < 10 ? 10 : avail;
    /* Whole columns from hscroll on; hscroll stops where the last column
     * is in view. */
    int room = w - 2 - namew - fixw, sum = 0, first_max = nvis;
    while (first_max > 0 && sum + cw[vis[first_max - 1]] + 2 <= room)
        sum += cw[vis[--first_max]] + 2;
    if (first_max > nvis - 1)
        first_max = nvis > 0 ? nvis - 1 : 0;
    lay->hscroll_max = first_max;
    lay->hscroll = ui->hscroll > first_max ? first_max : ui->hscroll < 0 ? 0 : ui->hscroll;
    int first = lay->hscroll, last = first - 1;
    for (int i = first, used = 0; i < nvis && used + cw[vis[i]] + 2 <= room; i++) {
        used += cw[vis[i]] + 2;
        last = i;
    }
    lay->col_first = first;
    lay->col_last = last;
    lay->ncol_visible = nvis;
    /* The column titles (the sort column marked), clickable. */
    attr_t title = at(lay, PAIR_TITLE, A_UNDERLINE | A_BOLD);
    const char *up = lay->utf8 ? "\xe2\x96\xb2" : "^", *down = lay->utf8 ? "\xe2\x96\xbc" : "v";
    int desc = (ui->choice.sort >= 0) != ui->choice.reverse;
    char label[CELL_BYTES];
    text(y, x, w, right, "", title, 0);
    snprintf(label, sizeof label, "%sINSTANCE",
             ui->choice.sort == TOP_SORT_NAME ? (desc ? down : up) : " ");
    text(y, x + 1, namew + 1, right, label, title | (ui->choice.sort == TOP_SORT_NAME ? A_BOLD : 0),
         0);
    lay->hdr_x[lay->nhdr] = x, lay->hdr_sort[lay->nhdr++] = TOP_SORT_NAME;
    int cx = x + 2 + namew;
    snprintf(label, sizeof label, "%sPID",
             ui->choice.sort == TOP_SORT_PID ? (desc ? down : up) : "");
    text(y, cx, 8, right, label, title, 1);
    lay->hdr_x[lay->nhdr] = cx, lay->hdr_sort[lay->nhdr++] = TOP_SORT_PID;
    cx += 8;
    if (s->hdr.containers) {
        text(y, cx + 1, 13, right, "CONTAINER", title, 0);
        cx += 14;
    }
    for (int i = first; i <= last; i++) {
        uint32_t k = vis[i];
        char name[CELL_BYTES - 8]; /* and the arrow */
        fmt_col_title(name, sizeof name, t->cols[k].name, t->cols[k].stat_len,
                      cw[k] - (ui->choice.sort == (int)k));
        snprintf(label, sizeof label, "%s%s", ui->choice.sort == (int)k ? (desc ? down : up) : "",
                 name);
        /* One column before the title stays blank: titles never touch. */
        text(y, cx + 1, cw[k] + 1, right, label, title, 1);
        lay->hdr_x[lay->nhdr] = cx, lay->hdr_sort[lay->nhdr++] = (int)k;
        cx += cw[k] + 2;
    }
    /* The rows on screen. */
    if (s->count == 0) {
        text(y + 1, x + 2, w - 2, right,
             ui->choice.filter[0] ? "no instance matches the filter" : "no instances",
             at(lay, PAIR_DIM, A_DIM), 0);
        return;
    }
    for (int i = 0; i + 1 < h; i++) {
        size_t idx = ui->top + (size_t)i;
        if (idx >= s->count)
            break;
        if (idx < s->rows_first || idx >= s->rows_first + s->nrows)
            continue; /* not read yet (the model was busy) */
        const ui_row *u = &s->rows[idx - s->rows_first];
        const top_row *r = &t->rows[u->row];
        int yy = y + 1 + i;
        attr_t base = A_NORMAL;
        if (u->state == TOP_ROW_GONE || u->state == TOP_ROW_EXITED)
            base = at(lay, PAIR_GONE, A_DIM);
        else if (u->state == TOP_ROW_NOANSWER)
            base = at(lay, PAIR_WARN, A_BOLD);
        int selected = idx == ui->cursor;
        if (selected)
            base = ui->focus == FOCUS_TABLE ? at(lay, PAIR_FOCUS, A_REVERSE)
                                            : at(lay, PAIR_CURSOR, A_REVERSE);
        char mark[2] = {fmt_mark(u->state, u->is_new), 0};
        if (marks_has(&ui->marks, u->key) && mark[0] == ' ')
            mark[0] = '*';
        text(yy, x, w, right, "", base, 0);
        attr_t ma = base;
        if (!selected && u->is_new && u->state == TOP_ROW_LIVE)
            ma = at(lay, PAIR_NEW, A_BOLD);
        text(yy, x, 1, right, mark, ma, 0);
        text(yy, x + 1, namew + 1, right, top_row_name(t, r), base | (r->kind ? A_BOLD : 0), 0);
        cx = x + 2 + namew;
        if (r->kind == PCW_PDH_INSTANCE)
            snprintf(num, sizeof num, "%d", (int)r->pid);
        else
            snprintf(num, sizeof num, "-");
        text(yy, cx, 8, right, num, base, 1);
        cx += 8;
        if (s->hdr.containers) { /* hex digits or "ns:<n>" */
            text(yy, cx + 1, 13, right, r->ctr[0] ? r->ctr : "-", base, 0);
            cx += 14;
        }
        for (int j = first; j <= last; j++) {
            uint32_t k = vis[j];
            attr_t a = base;
            cell_text(s, u, k, num, sizeof num);
            if (!selected && (u->changed >> k & 1) && u->state == TOP_ROW_LIVE)
                a = at(lay, PAIR_CHANGED, A_BOLD);
            text(yy, cx, cw[k] + 2, right, num, a, 1);
            cx += cw[k] + 2;
        }
    }
}

/* ---- help and details -------------------------------------------------------------- */

/* The help: at most 79 columns wide, so 80 columns show it whole; longer
 * than a screen, so it scrolls (input.c: Up Down PgUp PgDn Home End). */
static const char *const help_lines[] = {
    "pcwtop - the live viewer of pcw performance counters",
    "",
    "  Up Down PgUp PgDn  move in the focused pane (Home End: first, last)",
    "  Tab               switch between the counterset list and the table",
    "  Left Right        scroll the table's columns (the name and PID stay);",
    "                    Left at the first column goes to the counterset list,",
    "                    Right from the list to the table",
    "  c                 hide / show the counterset list (hidden by itself",
    "                    below 60 columns)",
    "  F1 h ?            this help",
    "  F2                setup: show, hide and order the columns",
    "                    (Space: show/hide, F7 F8 or [ ]: move up/down)",
    "  F3                search: go to the next instance that matches as you",
    "                    type (F3 again: the next one; Enter or Esc: done)",
    "  F4 / \\            filter: show only the instances that match",
    "                    ('*' '?' wildcards; a word: names containing it)",
    "  F5                refresh now (also when paused)",
    "  F6 s              choose the sort column (or click a column title)",
    "  r                 reverse the sort",
    "  + -               longer / shorter interval",
    "  Space             pause / go on",
    "  t                 show / hide _Total",
    "  v                 raw / cooked values (raw: exact integers)",
    "  a                 show / hide advanced counters (hidden, as in perfmon)",
    "  d                 details: the counters' metadata, the selected instance",
    "  g                 graph of a counter over time (Left/Right: counter)",
    "  H                 heatmap of a histogram over time (Left/Right: histogram)",
    "  m U               mark the instance for the graph, unmark all",
    "  F10 q             quit",
    "",
    "Marks:  + new instance   - gone   x its provider exited   ! no answer",
    "        * marked for the graph;  changed values are highlighted",
    "Values: cooked as PDH does (rates per second, percentages, averages);",
    "        k M G = 10^3 10^6 10^9;  ... = a second sample is needed",
    "",
    "Press any key to return.  (Up Down PgUp PgDn Home End scroll this help.)",
};

/* A replay's keys, after the others' (--replay only: live, the help keeps
 * its length). */
static const char *const replay_lines[] = {
    "Replaying a log (--replay): + - are the speed, and",
    "  . , T             the next sample; the one before (, or atop's T)",
    "  b                 go to a time (HH:MM:SS, or YYYY-MM-DD HH:MM:SS)",
};
#define HELP_KEYS_END 29 /* help_lines' "F10 q quit" line, + 1 */

/* Line k of the help (replay: with replay_lines after the keys). */
static const char *help_line(int k, int replay)
{
    int nr = replay ? (int)(sizeof replay_lines / sizeof replay_lines[0]) : 0;
    if (k < HELP_KEYS_END)
        return help_lines[k];
    if (k < HELP_KEYS_END + nr)
        return replay_lines[k - HELP_KEYS_END];
    return help_lines[k - nr];
}

static void draw_help(const top_ui *ui, top_layout *lay, int y, int h)
{
    int n = (int)(sizeof help_lines / sizeof help_lines[0]) +
            (ui->replay ? (int)(sizeof replay_lines / sizeof replay_lines[0]) : 0);
    lay->help_max = n - h;
    lay->help_top = ui->help_top > n - h ? n - h : ui->help_top;
    if (lay->help_top < 0)
        lay->help_top = 0;
    for (int i = 0; i < h; i++) {
        int k = lay->help_top + i;
        clear_line(y + i);
        if (k < n)
            text(y + i, 1, COLS - 1, COLS, help_line(k, ui->replay),
                 k == 0 ? at(lay, PAIR_HEADER, A_BOLD) : A_NORMAL, 0);
    }
    /* More below or above: said on the last line, where the eye looks. */
    if (lay->help_top + h < n && h > 1)
        text(y + h - 1, 1, COLS - 1, COLS, "-- more: Down, PgDn, End --",
             at(lay, PAIR_DIM, A_REVERSE), 0);
}

static void draw_details(const top_ui *ui, const top_snap *s, top_layout *lay, int y, int h)
{
    for (int i = 0; i < h; i++)
        clear_line(y + i);
    const top_table *t = s->table;
    if (!t) {
        text(y, 1, COLS - 1, COLS, "no counterset shown", A_NORMAL, 0);
        return;
    }
    char line[2048];
    int yy = y;
    snprintf(line, sizeof line, "Counterset: %s (%s)", s->hdr.set_name ? s->hdr.set_name : "",
             fmt_instance_type(s->hdr.instance_type));
    text(yy++, 1, COLS - 1, COLS, line, A_BOLD, 0);
    const ui_row *u = NULL;
    if (ui->cursor >= s->rows_first && ui->cursor < s->rows_first + s->nrows)
        u = &s->rows[ui->cursor - s->rows_first];
    if (u) {
        const top_row *r = &t->rows[u->row];
        static const char *const kinds[] = {"instance", "_Total", "aggregate"};
        static const char *const states[] = {"live", "gone", "provider exited", "no answer"};
        snprintf(line, sizeof line, "Instance: %s  (%s, pid %d, id %u, provider %016llx)  %s",
                 top_row_name(t, r), kinds[r->kind < 3 ? r->kind : 0], (int)r->pid, r->instance_id,
                 (unsigned long long)r->provider_id, states[u->state & 3]);
        text(yy++, 1, COLS - 1, COLS, line, A_NORMAL, 0);
        if (r->ctr[0]) { /* the pod's name is its author's: text() shows
                            control characters as '?' */
            snprintf(line, sizeof line, "Container: %s%s%s", r->ctr, r->pod[0] ? "  pod " : "",
                     r->pod);
            text(yy++, 1, COLS - 1, COLS, line, A_NORMAL, 0);
        }
    }
    yy++;
    snprintf(line, sizeof line, "%-24s %-30s %12s  %-18s %5s  %-9s %s", "COUNTER", "TYPE",
             s->hdr.raw ? "RAW" : "VALUE", "BASE", "SCALE", "AGGREGATE", "DETAIL");
    text(yy++, 1, COLS - 1, COLS, line, at(lay, PAIR_TITLE, A_UNDERLINE), 0);
    for (uint32_t k = 0; k < t->ncols && yy < y + h; k++) {
        const top_column *c = &t->cols[k];
        char val[64] = "";
        if (u && k < UI_MAX_COLS)
            fmt_cell(val, sizeof val, u->v[k], u->st[k], c->unit, s->hdr.raw);
        const char *type = pcw_counter_type_name(c->type);
        char typebuf[32];
        if (!type)
            snprintf(typebuf, sizeof typebuf, "0x%08x", c->type), type = typebuf;
        char name[4 * 24 + 8];
        utf8_pad(name, sizeof name, c->name, strlen(c->name), 24, 0);
        unsigned detail = c->detail_level ? c->detail_level : 100;
        snprintf(line, sizeof line, "%s %-30s %12s  %-18s %5d  %-9s %s", name, type, val,
                 c->base[0] ? c->base : "-", (int)c->scale, fmt_aggregate(c->aggregate),
                 detail <= 100   ? "novice"
                 : detail <= 200 ? "advanced"
                 : detail <= 300 ? "expert"
                                 : "wizard");
        text(yy++, 1, COLS - 1, COLS, line, A_NORMAL, 0);
        if (c->description[0] && yy < y + h) {
            snprintf(line, sizeof line, "    %s", c->description);
            text(yy++, 1, COLS - 1, COLS, line, at(lay, PAIR_DIM, A_DIM), 0);
        }
    }
    if (yy < y + h)
        text(y + h - 1, 1, COLS - 1, COLS, "Up/Down: another instance; any other key returns.",
             at(lay, PAIR_DIM, A_DIM), 0);
}

/* ---- all of it ------------------------------------------------------------------------ */

void screen_draw(const top_ui *ui, const top_snap *s, top_layout *lay)
{
    erase();
    if (LINES < UI_HEADER_LINES + 3 || COLS < 20) {
        mvaddstr(0, 0, "pcwtop: window too small");
        refresh();
        return;
    }
    int y = UI_HEADER_LINES, h = LINES - UI_HEADER_LINES - 1;
    lay->body_y = y;
    lay->body_h = h;
    lay->list_x = lay->list_w = 0;
    lay->table_x = 0;
    switch (ui->mode) {
    case MODE_HELP:
        draw_help(ui, lay, y, h);
        break;
    case MODE_DETAILS:
        draw_details(ui, s, lay, y, h);
        break;
    case MODE_GRAPH:
        graph_draw(ui, s, lay, y, 0, h, COLS);
        break;
    case MODE_HEAT:
        heat_draw(ui, s, lay, y, 0, h, COLS);
        break;
    default: {
        int lw = 0;
        if (layout_sets_shown(ui, COLS)) {
            lw = list_width(ui, s);
            lay->list_x = 0;
            lay->list_w = lw;
            draw_sets(ui, s, lay, y, 0, lw, h);
            for (int i = 0; i < h; i++) /* U+2502: capture and copy keep it */
                text(y + i, lw, 1, COLS, lay->utf8 ? "\xe2\x94\x82" : "|",
                     at(lay, PAIR_DIM, A_NORMAL), 0);
            lw++;
        }
        lay->table_x = lw;
        lay->table_w = COLS - lw;
        draw_table(ui, s, lay, y, lw, COLS - lw, h);
    }
    }
    draw_header(ui, s, lay); /* after the table: it says which columns are shown */
    draw_bar(ui, s, lay);
    refresh();
}
