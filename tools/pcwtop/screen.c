/*
 * tools/pcwtop/screen.c - drawing the interactive screen from the UI's
 * snapshot (pcwtop.h): nothing here touches the model, so a redraw never
 * waits for a collection.
 *
 *   line 0          pcwtop, providers live/exited, countersets, instances,
 *                   the collection's cost, the interval, the time
 *   line 1          the counterset shown, its sort, filter, raw, paused
 *   line 2          the last event or message
 *   lines 3..n-2    the counterset list (left) and the table (right), or
 *                   the help, details, graph or sort chooser
 *   line n-1        the function bar (or the filter prompt)
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

#define HEADER_LINES 3
#define CELL_BYTES   (4 * 512 + 8) /* utf8_pad of up to 512 columns */

/* ---- colours ----------------------------------------------------------------- */

void screen_init_colors(top_ui *ui)
{
    const char *nc = getenv("NO_COLOR");
    ui->colors = 0;
    if ((nc && *nc) || !has_colors() || start_color() != OK)
        return;
    use_default_colors();
    ui->colors = 1;
    ui->colors256 = COLORS >= 256;
    int big = ui->colors256;
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
}

/* The attribute for a role: its colour pair, or `mono` without colours. */
static attr_t at(const top_ui *ui, int pair, attr_t mono)
{
    if (!ui->colors)
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

static void draw_header(top_ui *ui)
{
    const top_frame *h = &ui->hdr;
    char line[1024], clock[32], iv[32], cost[32];
    fmt_clock(clock, sizeof clock, h->real_ns);
    fmt_interval(iv, sizeof iv, ui->interval_ns);
    fmt_cost(cost, sizeof cost, h->cost_ns);
    size_t instances = ui->table ? ui->table->nq - ui->table->ntotals : 0;
    snprintf(line, sizeof line,
             "pcwtop  Providers: %zu live, %zu exited  Countersets: %zu  Instances: %zu  "
             "Cost: %s  Delay: %s",
             h->providers_live, h->providers_exited, h->nsets, instances, cost, iv);
    /* The time keeps the right edge; the rest is cut if it must be. */
    int cw = (int)strlen(clock) + 1;
    text(0, 0, COLS - cw, COLS, line, at(ui, PAIR_HEADER, A_BOLD), 0);
    text(0, COLS - cw, cw, COLS, clock, at(ui, PAIR_HEADER, A_BOLD), 1);

    size_t n = 0;
    line[0] = 0;
    if (h->set_name) {
        const top_setinfo *si = h->set_index >= 0 ? &h->sets[h->set_index] : NULL;
        n += (size_t)snprintf(line + n, sizeof line - n, "%s (%s, %u provider%s%s)", h->set_name,
                              fmt_instance_type(h->instance_type), si ? si->providers : 0,
                              si && si->providers == 1 ? "" : "s",
                              h->set_callback ? ", callback" : "");
    }
    if (ui->view.sort != TOP_SORT_NONE && n < sizeof line) {
        int desc = (ui->view.sort >= 0) != ui->view.reverse;
        n += (size_t)snprintf(line + n, sizeof line - n, "  sorted by %s %s",
                              screen_sort_label(ui, ui->view.sort),
                              desc ? "(descending)" : "(ascending)");
    }
    if (ui->view.filter[0] && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  filter \"%s\": %zu shown",
                              ui->view.filter, ui->count - ui->nshown_totals);
    if (ui->raw && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  RAW VALUES");
    if (ui->hdr.advanced && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  ADVANCED");
    if (ui->paused && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n, "  PAUSED");
    if (ui->stale && n < sizeof line)
        snprintf(line + n, sizeof line - n, "  (collecting...)");
    clear_line(1);
    text(1, 0, COLS, COLS, line, A_BOLD, 0);
    clear_line(2);
    if (ui->message[0])
        text(2, 0, COLS, COLS, ui->message, at(ui, PAIR_WARN, A_BOLD), 0);
}

/* ---- the function bar --------------------------------------------------------- */

static void draw_bar(top_ui *ui)
{
    int y = LINES - 1;
    clear_line(y);
    if (ui->editing) {
        char line[600];
        snprintf(line, sizeof line, "%s_", ui->edit);
        text(y, 0, 20, COLS, "Enter Done  Esc Undo", at(ui, PAIR_BAR, A_REVERSE), 0);
        text(y, 21, 8, COLS, "Filter:", A_BOLD, 0);
        text(y, 29, COLS - 29, COLS, line, A_NORMAL, 0);
        return;
    }
    const char *keys[][2] = {
        {"F1", "Help"},   {"/", "Filter"}, {"F6", "Sort"},
        {"r", "Reverse"}, {"t", "Totals"}, {"v", ui->raw ? "Cooked" : "Raw"},
        {"d", "Details"}, {"g", "Graph"},  {"Spc", ui->paused ? "Run" : "Pause"},
        {"+-", "Delay"},  {"F10", "Quit"},
    };
    if (ui->mode == MODE_GRAPH) {
        keys[0][0] = "<>", keys[0][1] = "Counter";
        keys[1][0] = "m", keys[1][1] = "Mark";
        keys[2][0] = "U", keys[2][1] = "Unmark";
        keys[6][0] = "Esc", keys[6][1] = "Table";
    }
    int x = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && x < COLS; i++) {
        int kw = (int)strlen(keys[i][0]), lw = (int)strlen(keys[i][1]);
        text(y, x, kw, COLS, keys[i][0], at(ui, PAIR_BARTEXT, A_BOLD), 0);
        text(y, x + kw, lw + 1, COLS, keys[i][1], at(ui, PAIR_BAR, A_REVERSE), 0);
        x += kw + lw + 2;
    }
}

/* ---- the counterset list ------------------------------------------------------ */

static int list_width(const top_ui *ui)
{
    int w = 14;
    for (size_t i = 0; i < ui->hdr.nsets; i++) {
        const char *n = ui->hdr.sets[i].name;
        int nw = utf8_width(n, strlen(n)) + 6;
        if (nw > w)
            w = nw;
    }
    if (w > 32)
        w = 32;
    if (w > COLS / 3)
        w = COLS / 3;
    return w;
}

int screen_table_height(const top_ui *ui)
{
    (void)ui;                             /* the same for every mode: the rows read stay valid */
    int h = LINES - HEADER_LINES - 1 - 1; /* header, bar, the table's title */
    return h > 0 ? h : 0;
}

static void draw_sets(top_ui *ui, int y, int x, int w, int h)
{
    text(y, x, w, x + w, ui->mode == MODE_SORT ? "Sort by" : "Countersets",
         at(ui, PAIR_TITLE, A_UNDERLINE | A_BOLD), 0);
    int rows = h - 1;
    if (ui->mode == MODE_SORT) {
        int choices[UI_MAX_COLS + 3];
        size_t n = screen_sort_choices(ui, choices, sizeof choices / sizeof choices[0]);
        for (int i = 0; i < rows; i++) {
            size_t k = (size_t)i;
            attr_t a = A_NORMAL;
            if (k < n && k == ui->sort_cursor)
                a = at(ui, PAIR_FOCUS, A_REVERSE);
            text(y + 1 + i, x, w, x + w, k < n ? screen_sort_label(ui, choices[k]) : "", a, 0);
        }
        return;
    }
    if (rows <= 0)
        return;
    if (ui->set_cursor < ui->set_top)
        ui->set_top = ui->set_cursor;
    if (ui->set_cursor >= ui->set_top + (size_t)rows)
        ui->set_top = ui->set_cursor - (size_t)rows + 1;
    for (int i = 0; i < rows; i++) {
        size_t k = ui->set_top + (size_t)i;
        if (k >= ui->hdr.nsets) {
            text(y + 1 + i, x, w, x + w, "", A_NORMAL, 0);
            continue;
        }
        const top_setinfo *s = &ui->hdr.sets[k];
        char count[24], name[CELL_BYTES];
        int cw = snprintf(count, sizeof count, " (%u)", s->providers);
        utf8_pad(name, sizeof name, s->name, strlen(s->name), w - cw > 1 ? w - cw : 1, 0);
        char line[CELL_BYTES + 32];
        snprintf(line, sizeof line, "%s%s", name, count);
        attr_t a = A_NORMAL;
        if (k == ui->set_cursor)
            a = ui->focus == FOCUS_SETS ? at(ui, PAIR_FOCUS, A_REVERSE)
                                        : at(ui, PAIR_CURSOR, A_BOLD);
        text(y + 1 + i, x, w, x + w, line, a, 0);
    }
}

/* ---- the table ------------------------------------------------------------------ */

const char *screen_sort_label(const top_ui *ui, int sort)
{
    switch (sort) {
    case TOP_SORT_NONE:
        return "(as published)";
    case TOP_SORT_NAME:
        return "INSTANCE";
    case TOP_SORT_PID:
        return "PID";
    }
    if (ui->table && sort >= 0 && (uint32_t)sort < ui->table->ncols)
        return ui->table->cols[sort].name;
    return "?";
}

size_t screen_sort_choices(const top_ui *ui, int *out, size_t cap)
{
    size_t n = 0;
    if (n < cap)
        out[n++] = TOP_SORT_NONE;
    if (n < cap)
        out[n++] = TOP_SORT_NAME;
    if (n < cap)
        out[n++] = TOP_SORT_PID;
    for (uint32_t k = 0; ui->table && k < ui->table->ncols && k < UI_MAX_COLS && n < cap; k++)
        out[n++] = (int)k;
    return n;
}

static void draw_table(top_ui *ui, int y, int x, int w, int h)
{
    const top_table *t = ui->table;
    int right = x + w;
    ui->nhdr = 0;
    for (int i = 0; i < h; i++)
        text(y + i, x, w, right, "", A_NORMAL, 0);
    if (!t) {
        text(y + 1, x + 2, w - 2, right,
             ui->hdr.message[0] ? ui->hdr.message : "waiting for the first collection...",
             at(ui, PAIR_WARN, A_BOLD), 0);
        return;
    }
    uint32_t nc = t->ncols < UI_MAX_COLS ? t->ncols : UI_MAX_COLS;
    int cw[UI_MAX_COLS], values_w = 0;
    for (uint32_t k = 0; k < nc; k++) {
        cw[k] = fmt_col_width(t->cols[k].name);
        values_w += cw[k] + 2;
    }
    /* The name column: as wide as the widest name on screen, within what
     * the values leave (at least 10). */
    int namew = 8;
    for (size_t i = 0; i < ui->nrows; i++) {
        const top_row *r = &t->rows[ui->rows[i].row];
        int nw = utf8_width(top_row_name(t, r), r->name_len);
        if (nw > namew)
            namew = nw;
    }
    int avail = w - 2 - 8 - values_w;
    if (namew > avail)
        namew = avail < 10 ? 10 : avail;
    /* The column titles (the sort column marked), clickable. */
    attr_t title = at(ui, PAIR_TITLE, A_UNDERLINE | A_BOLD);
    const char *up = ui->utf8 ? "\xe2\x96\xb2" : "^", *down = ui->utf8 ? "\xe2\x96\xbc" : "v";
    int desc = (ui->view.sort >= 0) != ui->view.reverse;
    char label[CELL_BYTES];
    text(y, x, w, right, "", title, 0);
    snprintf(label, sizeof label, "%sINSTANCE",
             ui->view.sort == TOP_SORT_NAME ? (desc ? down : up) : " ");
    text(y, x + 1, namew + 1, right, label, title | (ui->view.sort == TOP_SORT_NAME ? A_BOLD : 0),
         0);
    ui->hdr_x[ui->nhdr] = x, ui->hdr_sort[ui->nhdr++] = TOP_SORT_NAME;
    int cx = x + 2 + namew;
    snprintf(label, sizeof label, "%sPID", ui->view.sort == TOP_SORT_PID ? (desc ? down : up) : "");
    text(y, cx, 8, right, label, title, 1);
    ui->hdr_x[ui->nhdr] = cx, ui->hdr_sort[ui->nhdr++] = TOP_SORT_PID;
    cx += 8;
    for (uint32_t k = 0; k < nc; k++) {
        snprintf(label, sizeof label, "%s%s", ui->view.sort == (int)k ? (desc ? down : up) : "",
                 t->cols[k].name);
        text(y, cx, cw[k] + 2, right, label, title, 1);
        ui->hdr_x[ui->nhdr] = cx, ui->hdr_sort[ui->nhdr++] = (int)k;
        cx += cw[k] + 2;
    }
    /* The rows on screen. */
    if (ui->count == 0) {
        text(y + 1, x + 2, w - 2, right,
             ui->view.filter[0] ? "no instance matches the filter" : "no instances",
             at(ui, PAIR_DIM, A_DIM), 0);
        return;
    }
    for (int i = 0; i + 1 < h; i++) {
        size_t idx = ui->top + (size_t)i;
        if (idx >= ui->count)
            break;
        if (idx < ui->rows_first || idx >= ui->rows_first + ui->nrows)
            continue; /* not read yet (the model was busy) */
        const ui_row *u = &ui->rows[idx - ui->rows_first];
        const top_row *r = &t->rows[u->row];
        int yy = y + 1 + i;
        attr_t base = A_NORMAL;
        if (u->state == TOP_ROW_GONE || u->state == TOP_ROW_EXITED)
            base = at(ui, PAIR_GONE, A_DIM);
        else if (u->state == TOP_ROW_NOANSWER)
            base = at(ui, PAIR_WARN, A_BOLD);
        int selected = idx == ui->cursor;
        if (selected)
            base = ui->focus == FOCUS_TABLE ? at(ui, PAIR_FOCUS, A_REVERSE)
                                            : at(ui, PAIR_CURSOR, A_REVERSE);
        char mark[2] = {fmt_mark(u->state, u->is_new), 0};
        if (ui_marked(ui, u->key) && mark[0] == ' ')
            mark[0] = '*';
        text(yy, x, w, right, "", base, 0);
        attr_t ma = base;
        if (!selected && u->is_new && u->state == TOP_ROW_LIVE)
            ma = at(ui, PAIR_NEW, A_BOLD);
        text(yy, x, 1, right, mark, ma, 0);
        text(yy, x + 1, namew + 1, right, top_row_name(t, r), base | (r->kind ? A_BOLD : 0), 0);
        cx = x + 2 + namew;
        char num[64];
        if (r->kind == PCW_PDH_INSTANCE)
            snprintf(num, sizeof num, "%d", (int)r->pid);
        else
            snprintf(num, sizeof num, "-");
        text(yy, cx, 8, right, num, base, 1);
        cx += 8;
        for (uint32_t k = 0; k < nc; k++) {
            attr_t a = base;
            if (u->state == TOP_ROW_GONE || u->state == TOP_ROW_EXITED)
                snprintf(num, sizeof num, "%s", u->state == TOP_ROW_GONE ? "gone" : "exited");
            else
                fmt_cell(num, sizeof num, u->v[k], u->st[k], t->cols[k].unit, ui->raw);
            if (!selected && (u->changed >> k & 1) && u->state == TOP_ROW_LIVE)
                a = at(ui, PAIR_CHANGED, A_BOLD);
            text(yy, cx, cw[k] + 2, right, num, a, 1);
            cx += cw[k] + 2;
        }
    }
}

/* ---- help and details -------------------------------------------------------------- */

static void draw_help(top_ui *ui, int y, int h)
{
    static const char *const lines[] = {
        "pcwtop - the live viewer of pcw performance counters",
        "",
        "  Up Down PgUp PgDn Home End   move in the focused pane",
        "  Tab, Left, Right             switch between the counterset list and the table",
        "  /                            filter instances ('*' '?' wildcards; a word: contained)",
        "  s, F6                        choose the sort column (or click a column title)",
        "  r                            reverse the sort",
        "  + -                          longer / shorter interval",
        "  Space                        pause / go on",
        "  t                            show / hide _Total",
        "  v                            raw / cooked values",
        "  a                            show / hide advanced counters (hidden, as in perfmon)",
        "  d                            details: the counters' metadata, the selected instance",
        "  g                            graph of a counter over time (Left/Right: counter)",
        "  m, U                         mark the instance for the graph, unmark all",
        "  h, F1, ?                     this help",
        "  q, F10                       quit",
        "",
        "Marks:  + new instance   - gone   x its provider exited   ! no answer in time",
        "        * marked for the graph;  changed values are highlighted",
        "Values: cooked as PDH does (rates per second, percentages, averages);",
        "        k M G = 10^3 10^6 10^9;  ... = a second sample is needed",
        "",
        "Press any key to return.",
    };
    for (int i = 0; i < h; i++) {
        clear_line(y + i);
        if ((size_t)i < sizeof lines / sizeof lines[0])
            text(y + i, 1, COLS - 1, COLS, lines[i],
                 i == 0 ? at(ui, PAIR_HEADER, A_BOLD) : A_NORMAL, 0);
    }
}

static void draw_details(top_ui *ui, int y, int h)
{
    for (int i = 0; i < h; i++)
        clear_line(y + i);
    const top_table *t = ui->table;
    if (!t) {
        text(y, 1, COLS - 1, COLS, "no counterset shown", A_NORMAL, 0);
        return;
    }
    char line[2048];
    int yy = y;
    snprintf(line, sizeof line, "Counterset: %s (%s)", ui->hdr.set_name ? ui->hdr.set_name : "",
             fmt_instance_type(ui->hdr.instance_type));
    text(yy++, 1, COLS - 1, COLS, line, A_BOLD, 0);
    const ui_row *u = NULL;
    if (ui->cursor >= ui->rows_first && ui->cursor < ui->rows_first + ui->nrows)
        u = &ui->rows[ui->cursor - ui->rows_first];
    if (u) {
        const top_row *r = &t->rows[u->row];
        static const char *const kinds[] = {"instance", "_Total", "aggregate"};
        static const char *const states[] = {"live", "gone", "provider exited", "no answer"};
        snprintf(line, sizeof line, "Instance: %s  (%s, pid %d, id %u, provider %016llx)  %s",
                 top_row_name(t, r), kinds[r->kind < 3 ? r->kind : 0], (int)r->pid, r->instance_id,
                 (unsigned long long)r->provider_id, states[u->state & 3]);
        text(yy++, 1, COLS - 1, COLS, line, A_NORMAL, 0);
    }
    yy++;
    snprintf(line, sizeof line, "%-24s %-30s %12s  %-18s %5s  %-9s %s", "COUNTER", "TYPE",
             ui->raw ? "RAW" : "VALUE", "BASE", "SCALE", "AGGREGATE", "DETAIL");
    text(yy++, 1, COLS - 1, COLS, line, at(ui, PAIR_TITLE, A_UNDERLINE), 0);
    for (uint32_t k = 0; k < t->ncols && yy < y + h; k++) {
        const top_column *c = &t->cols[k];
        char val[64] = "";
        if (u && k < UI_MAX_COLS)
            fmt_cell(val, sizeof val, u->v[k], u->st[k], c->unit, ui->raw);
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
            text(yy++, 1, COLS - 1, COLS, line, at(ui, PAIR_DIM, A_DIM), 0);
        }
    }
    if (yy < y + h)
        text(y + h - 1, 1, COLS - 1, COLS, "Up/Down: another instance; any other key returns.",
             at(ui, PAIR_DIM, A_DIM), 0);
}

/* ---- all of it ------------------------------------------------------------------------ */

void screen_draw(top_ui *ui)
{
    erase();
    if (LINES < HEADER_LINES + 3 || COLS < 20) {
        mvaddstr(0, 0, "pcwtop: window too small");
        refresh();
        return;
    }
    draw_header(ui);
    int y = HEADER_LINES, h = LINES - HEADER_LINES - 1;
    ui->body_y = y;
    ui->body_h = h;
    ui->list_x = ui->list_w = 0;
    ui->table_x = 0;
    switch (ui->mode) {
    case MODE_HELP:
        draw_help(ui, y, h);
        break;
    case MODE_DETAILS:
        draw_details(ui, y, h);
        break;
    case MODE_GRAPH:
        graph_draw(ui, y, 0, h, COLS);
        break;
    default: {
        int lw = list_width(ui);
        ui->list_x = 0;
        ui->list_w = lw;
        draw_sets(ui, y, 0, lw, h);
        for (int i = 0; i < h; i++) /* U+2502: capture and copy keep it */
            text(y + i, lw, 1, COLS, ui->utf8 ? "\xe2\x94\x82" : "|", at(ui, PAIR_DIM, A_NORMAL),
                 0);
        ui->table_x = lw + 1;
        ui->table_w = COLS - lw - 1;
        draw_table(ui, y, lw + 1, COLS - lw - 1, h);
    }
    }
    draw_bar(ui);
    refresh();
}
