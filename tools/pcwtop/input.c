/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/input.c - the interactive event loop: keys, mouse, resize,
 * and reading the model into what the screen draws (ui_sync).
 *
 * The loop polls the terminal and the wake pipe (the collector writes to
 * it after each collection, the signal handlers on SIGINT/SIGTERM/SIGHUP
 * and SIGWINCH). Keys change the UI's state at once; whenever they change
 * which rows are shown, or a collection ends, the UI takes the model's
 * lock - for at most UI_LOCK_MS, so a collection that waits for a slow
 * provider never holds up a key - and reads the rows it will draw. If the
 * model is busy it draws what it read last and tries again shortly.
 *
 * Keys are htop's where htop has one (help screen: h, F1 or ?): F2 setup
 * (the columns), F3 search, F4 filter, F6 sort, F10 quit; F5, htop's
 * tree (instances have no tree), is perfmon's and Windows' "refresh now".
 * Two of pcwtop's own differ from htop: `/` filters (as it always did in
 * pcwtop; htop's `\` filters too), and Left/Right scroll the table's
 * columns, reaching the counterset list from the first column (Tab
 * switches panes).
 */
#define _GNU_SOURCE 1
#include <curses.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include "pcwtop.h"

/* How long the UI waits for the model before drawing what it has. */
#define UI_LOCK_MS 30
/* How long a message stays (refreshes). */
#define MESSAGE_REFRESHES 5

/* The intervals + and - step through, in seconds. */
static const double intervals[] = {0.1, 0.2, 0.5, 1,   2,   5,    10,  15,
                                   30,  60,  120, 300, 600, 1800, 3600};

__attribute__((format(printf, 2, 3))) static void say(top_ui *ui, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ui->message, sizeof ui->message, fmt, ap);
    va_end(ap);
    ui->message_seq = ui->seq;
    ui->dirty = 1;
}

int ui_marked(const top_ui *ui, uint64_t key)
{
    for (size_t i = 0; i < ui->nmarks; i++)
        if (ui->marks[i] == key)
            return 1;
    return 0;
}

uint64_t ui_series_key(const top_ui *ui, uint64_t key)
{
    /* The same instance key in another counterset, or raw against cooked,
     * is another series. */
    uint64_t h = 1469598103934665603ull ^ (uint64_t)ui->raw;
    for (const char *p = ui->hdr.set_name ? ui->hdr.set_name : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return key ^ (h * 0x9e3779b97f4a7c15ull);
}

/* ---- reading the model ------------------------------------------------------ */

static ui_cached *cache_find(ui_cached *c, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].key == key)
            return &c[i];
    return NULL;
}

/* Row r's values for this refresh: cooked once, compared with the refresh
 * before. Returns the entry (NULL when the cache is full: out holds them). */
static const ui_cached *row_values(top_ui *ui, top_model *m, const top_row *r, ui_cached *out)
{
    ui_cached *e = cache_find(ui->cache_cur, ui->ncur, r->key);
    if (e)
        return e;
    e = ui->ncur < UI_CACHE ? &ui->cache_cur[ui->ncur++] : out;
    uint32_t nc = ui->table->ncols;
    memset(e, 0, sizeof *e);
    e->key = r->key;
    e->raw = ui->raw;
    const ui_cached *before = cache_find(ui->cache_prev, ui->nprev, r->key);
    if (before && before->raw != ui->raw)
        before = NULL;
    if (r->qi == UINT32_MAX) { /* a gone row: no values ("gone" / "exited") */
        memset(e->st, PCW_CSTATUS_NO_INSTANCE, sizeof e->st);
        return e;
    }
    if (nc <= UI_MAX_COLS) {
        top_model_row_values(m, r, e->v, e->st);
    } else {
        double v[nc];
        uint8_t st[nc];
        top_model_row_values(m, r, v, st);
        memcpy(e->v, v, sizeof e->v);
        memcpy(e->st, st, sizeof e->st);
    }
    for (uint32_t k = 0; before && k < nc && k < UI_MAX_COLS; k++)
        if (e->st[k] != before->st[k] || (e->st[k] == PCW_CSTATUS_VALID && e->v[k] != before->v[k]))
            e->changed |= 1ull << k;
    return e;
}

/* The columns as published: every one shown, in its order. */
static void columns_reset(top_ui *ui)
{
    uint32_t nc = ui->table ? ui->table->ncols : 0;
    ui->ncol_order = nc < UI_MAX_COLS ? nc : UI_MAX_COLS;
    for (uint32_t i = 0; i < ui->ncol_order; i++) {
        ui->col_order[i] = i;
        ui->col_hidden[i] = 0;
    }
    ui->hscroll = 0;
    ui->setup_cursor = 0;
}

/* F3: the first instance at or after ui->search_from (in the view's
 * order, wrapping around once) whose name matches the search becomes the
 * cursor. O(rows), a window of rows at a time. */
static void search(top_ui *ui, top_model *m)
{
    enum { CHUNK = 256 };
    uint32_t rows[CHUNK];
    size_t n = ui->count;
    ui->search_failed = 1;
    if (!n)
        return;
    size_t start = ui->search_from < n ? ui->search_from : 0;
    for (size_t done = 0; done < n;) {
        size_t at = (start + done) % n;
        size_t want = n - at < CHUNK ? n - at : CHUNK;
        if (want > n - done)
            want = n - done;
        size_t got = view_rows(&ui->view, m, at, want, rows);
        if (!got)
            return;
        for (size_t i = 0; i < got; i++) {
            const top_row *r = &ui->table->rows[rows[i]];
            if (view_filter_match(ui->search, top_row_name(ui->table, r), r->name_len)) {
                ui->cursor = at + i;
                ui->search_failed = 0;
                return;
            }
        }
        done += got;
    }
}

/* A new refresh: header, table, messages. */
static void take_refresh(top_ui *ui, const top_frame *f)
{
    ui->seq_before = ui->seq;
    ui->seq = f->seq;
    /* This refresh's cache starts empty; the last one's tells changes. */
    ui_cached *t = ui->cache_prev;
    ui->cache_prev = ui->cache_cur;
    ui->nprev = ui->ncur;
    ui->cache_cur = t;
    ui->ncur = 0;
    /* The header: scalars, and copies of what the model will free. */
    for (size_t i = 0; i < ui->hdr.nsets; i++)
        free(ui->hdr.sets[i].name);
    top_setinfo *sets = ui->hdr.sets;
    size_t sets_cap = ui->hdr.sets_cap;
    top_exit *exits = ui->hdr.exits;
    size_t exits_cap = ui->hdr.exits_cap;
    char *set_name = ui->hdr.set_name;
    ui->hdr = *f;
    ui->hdr.table = NULL;
    ui->hdr.sets = sets, ui->hdr.sets_cap = sets_cap, ui->hdr.nsets = 0;
    ui->hdr.exits = exits, ui->hdr.exits_cap = exits_cap, ui->hdr.nexits = 0;
    int set_changed = !set_name || !f->set_name || strcmp(set_name, f->set_name) != 0;
    free(set_name);
    ui->hdr.set_name = f->set_name ? strdup(f->set_name) : NULL;
    if (f->nsets > ui->hdr.sets_cap) {
        top_setinfo *n = realloc(ui->hdr.sets, f->nsets * sizeof *n);
        if (n)
            ui->hdr.sets = n, ui->hdr.sets_cap = f->nsets;
    }
    for (size_t i = 0; i < f->nsets && i < ui->hdr.sets_cap; i++) {
        ui->hdr.sets[i] = f->sets[i];
        if (!(ui->hdr.sets[i].name = strdup(f->sets[i].name)))
            break;
        ui->hdr.nsets = i + 1;
    }
    if (ui->hdr.set_index >= (int)ui->hdr.nsets)
        ui->hdr.set_index = -1;
    top_table_unref(ui->table);
    ui->table = f->table;
    top_table_ref(ui->table);
    uint32_t nc = ui->table ? ui->table->ncols : 0;
    if (set_changed || ui->ncol_order != (nc < UI_MAX_COLS ? nc : UI_MAX_COLS))
        columns_reset(ui);
    /* The counterset list's cursor follows the counterset shown. */
    if (ui->hdr.set_index >= 0 && ui->focus != FOCUS_SETS)
        ui->set_cursor = (size_t)ui->hdr.set_index;
    if (ui->set_cursor >= ui->hdr.nsets)
        ui->set_cursor = ui->hdr.nsets ? ui->hdr.nsets - 1 : 0;
    /* Messages: what happened in this refresh. */
    if (f->nexits)
        say(ui, "provider %d (%s) exited%s", (int)f->exits[0].pid, f->exits[0].name,
            f->nexits > 1 ? " (and others)" : "");
    else if (f->born_now || f->gone_now)
        say(ui, "instances: %zu new, %zu gone", f->born_now, f->gone_now);
    else if (f->failed)
        say(ui, "%zu provider%s did not answer in time", f->failed, f->failed == 1 ? "" : "s");
    else if (f->message[0])
        say(ui, "%s", f->message);
    else if (!ui->message[0] || ui->seq - ui->message_seq >= MESSAGE_REFRESHES) {
        /* Nothing happened: the table's standing note, while the totals
         * it explains are shown. */
        if (f->note[0] && ui->view.totals)
            say(ui, "%s", f->note);
        else
            ui->message[0] = 0;
    }
    if (ui->sort_pending && ui->table) {
        char why[512];
        if (top_apply_sort(&ui->view, f, ui->opt->sort, why, sizeof why) != 0)
            say(ui, "%s", why);
        ui->sort_pending = 0;
    }
    if (ui->table && ui->graph_col >= (int)ui->table->ncols)
        ui->graph_col = 0;
    if (ui->heat_pending && ui->table) { /* -H */
        ui->heat_col = heat_find_column(ui->table, ui->opt->heat);
        if (ui->heat_col >= 0)
            ui->mode = MODE_HEAT;
        else
            say(ui, "-H: no histogram counter \"%s\" in this counterset", ui->opt->heat);
        ui->heat_pending = 0;
    }
    ui->refreshes++;
    if (ui->opt->count && ui->refreshes >= ui->opt->count)
        ui->last_frame = 1;
}

void ui_sync(top_ui *ui, top_model *m)
{
    const top_frame *f = top_model_frame(m);
    int fresh = f->seq != ui->seq;
    if (fresh)
        take_refresh(ui, f);
    ui->raw = f->raw;
    ui->advanced = f->advanced;
    ui->count = ui->table ? view_count(&ui->view, m) : 0;
    ui->nshown_totals = ui->view.nshown_totals;
    if (ui->search_pending && ui->table) {
        search(ui, m);
        ui->search_pending = 0;
    }
    /* Keep the cursor inside the rows and the window around the cursor. */
    size_t h = (size_t)screen_table_height(ui);
    if (ui->cursor >= ui->count)
        ui->cursor = ui->count ? ui->count - 1 : 0;
    if (ui->cursor < ui->top)
        ui->top = ui->cursor;
    if (h && ui->cursor >= ui->top + h)
        ui->top = ui->cursor - h + 1;
    if (ui->top + h > ui->count)
        ui->top = ui->count > h ? ui->count - h : 0;
    if (h > ui->rows_cap) {
        ui_row *n = realloc(ui->rows, h * sizeof *n);
        if (!n)
            return;
        ui->rows = n;
        ui->rows_cap = h;
    }
    uint32_t rowbuf[h ? h : 1];
    ui->nrows = ui->table ? view_rows(&ui->view, m, ui->top, h, rowbuf) : 0;
    ui->rows_first = ui->top;
    ui_cached spare;
    uint32_t nc = ui->table ? ui->table->ncols : 0;
    for (size_t i = 0; i < ui->nrows; i++) {
        const top_row *r = &ui->table->rows[rowbuf[i]];
        const ui_cached *e = row_values(ui, m, r, &spare);
        ui_row *u = &ui->rows[i];
        u->row = rowbuf[i];
        u->key = r->key;
        u->state = top_row_state(r, nc ? e->st[0] : PCW_CSTATUS_VALID);
        u->is_new = r->born && ui->seq - r->born < TOP_NEW_REFRESHES;
        u->changed = e->changed;
        memcpy(u->v, e->v, sizeof u->v);
        memcpy(u->st, e->st, sizeof u->st);
    }
    /* The graph's instances: the marked ones, else the first rows. */
    ui->ngraph = 0;
    if (ui->table) {
        for (size_t i = 0; i < ui->nmarks && ui->ngraph < GRAPH_MAX_SERIES; i++) {
            uint32_t r = top_table_find(ui->table, ui->marks[i]);
            if (r != UINT32_MAX)
                ui->graph_rows[ui->ngraph++] = r;
        }
        if (!ui->nmarks)
            ui->ngraph =
                view_rows(&ui->view, m, ui->nshown_totals, GRAPH_MAX_SERIES, ui->graph_rows);
    }
    /* History: every value on screen, and the graph's series. */
    if (fresh && ui->table) {
        hist_time(ui->hist, ui->seq, ui->hdr.mono_ns);
        for (size_t i = 0; i < ui->nrows; i++) {
            const ui_row *u = &ui->rows[i];
            if (ui->table->rows[u->row].qi == UINT32_MAX)
                continue;
            for (uint32_t k = 0; k < nc && k < UI_MAX_COLS; k++)
                hist_put(ui->hist, ui_series_key(ui, u->key), k, ui->seq,
                         u->st[k] == PCW_CSTATUS_VALID ? u->v[k] : NAN);
        }
        for (size_t i = 0; i < ui->ngraph; i++) {
            const top_row *r = &ui->table->rows[ui->graph_rows[i]];
            if (r->qi == UINT32_MAX || ui->graph_col >= (int)nc)
                continue;
            const ui_cached *e = row_values(ui, m, r, &spare);
            int k = ui->graph_col;
            hist_put(ui->hist, ui_series_key(ui, r->key), (uint32_t)k, ui->seq,
                     e->st[k] == PCW_CSTATUS_VALID ? e->v[k] : NAN);
        }
    }
    if (ui->mode == MODE_HEAT)
        heat_sync(ui, m);
    ui->stale = 0;
    ui->resync = 0;
    ui->dirty = 1;
}

/* ---- keys ------------------------------------------------------------------------ */

static void move_cursor(size_t *cursor, size_t count, long delta)
{
    if (!count)
        return;
    long c = (long)*cursor + delta;
    if (c < 0)
        c = 0;
    if ((size_t)c >= count)
        c = (long)count - 1;
    *cursor = (size_t)c;
}

static void choose_set(top_ui *ui, size_t i)
{
    if (i >= ui->hdr.nsets)
        return;
    ui->set_cursor = i;
    if (ui->hdr.set_name && strcmp(ui->hdr.set_name, ui->hdr.sets[i].name) == 0)
        return;
    free(ui->want);
    ui->want = strdup(ui->hdr.sets[i].name);
    collector_want(ui->col, ui->want);
    ui->cursor = ui->top = 0;
    ui->view.sort = TOP_SORT_NONE; /* columns differ from one set to the next */
    ui->view.reverse = 0;
    ui->graph_col = 0;
}

static void set_interval(top_ui *ui, int dir)
{
    double now = (double)ui->interval_ns / 1e9, next = now;
    size_t n = sizeof intervals / sizeof intervals[0];
    if (dir > 0) {
        for (size_t i = 0; i < n; i++)
            if (intervals[i] > now + 1e-9) {
                next = intervals[i];
                break;
            }
    } else {
        for (size_t i = n; i-- > 0;)
            if (intervals[i] < now - 1e-9) {
                next = intervals[i];
                break;
            }
    }
    ui->interval_ns = (uint64_t)(next * 1e9 + 0.5);
    collector_set_interval(ui->col, ui->interval_ns);
    char iv[32];
    fmt_interval(iv, sizeof iv, ui->interval_ns);
    say(ui, "delay %s", iv);
}

static void toggle_mark(top_ui *ui)
{
    if (ui->cursor < ui->rows_first || ui->cursor >= ui->rows_first + ui->nrows)
        return;
    uint64_t key = ui->rows[ui->cursor - ui->rows_first].key;
    for (size_t i = 0; i < ui->nmarks; i++)
        if (ui->marks[i] == key) {
            ui->marks[i] = ui->marks[--ui->nmarks];
            return;
        }
    if (ui->nmarks >= GRAPH_MAX_SERIES) {
        say(ui, "at most %d instances are marked for the graph", GRAPH_MAX_SERIES);
        return;
    }
    if (ui->nmarks == ui->marks_cap) {
        size_t cap = ui->marks_cap ? 2 * ui->marks_cap : 8;
        uint64_t *n = realloc(ui->marks, cap * sizeof *n);
        if (!n)
            return;
        ui->marks = n;
        ui->marks_cap = cap;
    }
    ui->marks[ui->nmarks++] = key;
}

/* The filter and search prompts: wide characters in, UTF-8 kept. */
static void edit_key(top_ui *ui, int is_key, wint_t c)
{
    size_t n = strlen(ui->edit);
    int searching = ui->editing == EDIT_SEARCH;
    if ((is_key && c == KEY_ENTER) || (!is_key && (c == L'\r' || c == L'\n'))) {
        ui->editing = EDIT_NONE;
    } else if (!is_key && c == 27) { /* Esc: back to the filter as it was */
        ui->editing = EDIT_NONE;
        if (!searching)
            memcpy(ui->view.filter, ui->edit_undo, sizeof ui->view.filter);
    } else if (searching && is_key && c == KEY_F(3)) { /* the next match */
        ui->search_from = ui->cursor + 1;
        ui->search_pending = 1;
        ui->resync = 1;
        return;
    } else if (is_key && c != KEY_BACKSPACE) {
        return; /* other keys: nothing (htop's prompts) */
    } else if ((is_key && c == KEY_BACKSPACE) || (!is_key && (c == 127 || c == 8))) {
        while (n > 0 && ((unsigned char)ui->edit[n - 1] & 0xC0) == 0x80)
            n--; /* a whole UTF-8 character */
        if (n > 0)
            n--;
        ui->edit[n] = 0;
    } else if (!is_key && c == 21) { /* ^U */
        ui->edit[0] = 0;
    } else if (!is_key && c >= 0x20 && c != 0x7f) {
        char mb[MB_LEN_MAX + 1];
        mbstate_t st;
        memset(&st, 0, sizeof st);
        size_t k = wcrtomb(mb, (wchar_t)c, &st);
        if (k != (size_t)-1 && n + k < sizeof ui->edit) {
            memcpy(ui->edit + n, mb, k);
            ui->edit[n + k] = 0;
        }
    }
    ui->resync = 1;
    if (searching) {
        /* The search follows what is typed, from where it started. */
        if (ui->editing && strcmp(ui->search, ui->edit) != 0) {
            memcpy(ui->search, ui->edit, sizeof ui->search);
            ui->search_pending = ui->search[0] != 0;
            ui->search_failed = 0;
        }
        return;
    }
    if (ui->editing) {
        /* The filter follows what is typed (as htop's). */
        memcpy(ui->view.filter, ui->edit, sizeof ui->view.filter);
    }
    ui->cursor = ui->top = 0;
}

static void open_filter(top_ui *ui)
{
    ui->editing = EDIT_FILTER;
    memcpy(ui->edit, ui->view.filter, sizeof ui->edit);
    memcpy(ui->edit_undo, ui->view.filter, sizeof ui->edit_undo);
}

static void open_search(top_ui *ui)
{
    ui->editing = EDIT_SEARCH;
    ui->focus = FOCUS_TABLE;
    ui->edit[0] = ui->search[0] = 0;
    ui->search_failed = 0;
    ui->search_from = ui->cursor;
}

/* c, Tab: the counterset list shown or hidden (by choice from then on). */
static void show_sets(top_ui *ui, int show)
{
    ui->sets_pane = show ? 1 : -1;
    if (!show && ui->focus == FOCUS_SETS)
        ui->focus = FOCUS_TABLE;
}

static void sort_by(top_ui *ui, int sort)
{
    if (ui->view.sort == sort) {
        ui->view.reverse = !ui->view.reverse;
    } else {
        ui->view.sort = sort;
        ui->view.reverse = 0;
    }
    if (sort >= 0)
        ui->graph_col = sort;
    ui->resync = 1;
}

static void mouse(top_ui *ui)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        long d = (ev.bstate & BUTTON4_PRESSED) ? -3 : 3;
        if (ev.x < ui->list_x + ui->list_w && ui->mode == MODE_TABLE) {
            size_t c = ui->set_cursor;
            move_cursor(&c, ui->hdr.nsets, d);
            choose_set(ui, c);
        } else {
            move_cursor(&ui->cursor, ui->count, d);
        }
        ui->resync = 1;
        return;
    }
    if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) || ui->mode != MODE_TABLE)
        return;
    if (ev.y < ui->body_y || ev.y >= ui->body_y + ui->body_h)
        return;
    if (ev.x >= ui->list_x && ev.x < ui->list_x + ui->list_w) {
        /* The counterset list: its title, then one line per set. */
        ui->focus = FOCUS_SETS;
        int line = ev.y - ui->body_y - 1;
        if (line >= 0)
            choose_set(ui, ui->set_top + (size_t)line);
    } else if (ev.x >= ui->table_x) {
        ui->focus = FOCUS_TABLE;
        if (ev.y == ui->body_y) { /* the header: sort by the column clicked */
            for (int i = ui->nhdr - 1; i >= 0; i--)
                if (ev.x >= ui->hdr_x[i]) {
                    sort_by(ui, ui->hdr_sort[i]);
                    break;
                }
        } else {
            size_t row = ui->top + (size_t)(ev.y - ui->body_y - 1);
            if (row < ui->count)
                ui->cursor = row;
        }
    }
    ui->resync = 1;
}

static void key_table(top_ui *ui, int is_key, wint_t c)
{
    if (ui->focus == FOCUS_SETS && !screen_sets_shown(ui))
        ui->focus = FOCUS_TABLE; /* the terminal got narrow: no keys for a hidden list */
    size_t page = (size_t)screen_table_height(ui);
    size_t *cur = ui->focus == FOCUS_SETS ? &ui->set_cursor : &ui->cursor;
    size_t count = ui->focus == FOCUS_SETS ? ui->hdr.nsets : ui->count;
    long delta = 0;
    int moved = 0;
    if (is_key) {
        switch (c) {
        case KEY_UP:
            delta = -1, moved = 1;
            break;
        case KEY_DOWN:
            delta = 1, moved = 1;
            break;
        case KEY_PPAGE:
            delta = -(long)(page ? page : 1), moved = 1;
            break;
        case KEY_NPAGE:
            delta = (long)(page ? page : 1), moved = 1;
            break;
        case KEY_HOME:
            delta = -(long)count, moved = 1;
            break;
        case KEY_END:
            delta = (long)count, moved = 1;
            break;
        case KEY_LEFT: /* scroll; from the first column, to the list */
            if (ui->focus == FOCUS_TABLE && ui->hscroll > 0)
                ui->hscroll--;
            else if (screen_sets_shown(ui))
                ui->focus = FOCUS_SETS;
            break;
        case KEY_RIGHT:
            if (ui->focus == FOCUS_SETS)
                ui->focus = FOCUS_TABLE;
            else if (ui->hscroll < ui->hscroll_max)
                ui->hscroll++;
            break;
        case KEY_F(1):
            ui->mode = MODE_HELP;
            ui->help_top = 0;
            break;
        case KEY_F(2):
            ui->mode = MODE_SETUP;
            break;
        case KEY_F(3):
            open_search(ui);
            break;
        case KEY_F(4):
            open_filter(ui);
            break;
        case KEY_F(5):
            collector_refresh(ui->col);
            say(ui, "refreshed");
            break;
        case KEY_F(6):
            ui->mode = MODE_SORT;
            ui->sort_cursor = 0;
            break;
        case KEY_F(10):
            ui->quit = 1;
            break;
        case KEY_MOUSE:
            mouse(ui);
            break;
        case KEY_ENTER:
            ui->focus = FOCUS_TABLE;
            break;
        }
    } else {
        switch (c) {
        case L'\t':
            if (!screen_sets_shown(ui))
                show_sets(ui, 1);
            ui->focus = ui->focus == FOCUS_SETS ? FOCUS_TABLE : FOCUS_SETS;
            break;
        case L'c':
            show_sets(ui, !screen_sets_shown(ui));
            say(ui, "%s",
                screen_sets_shown(ui) ? "counterset list shown"
                                      : "counterset list hidden (c shows it)");
            break;
        case L'\r':
        case L'\n':
            ui->focus = FOCUS_TABLE;
            break;
        case L'q':
            ui->quit = 1;
            break;
        case L'h':
        case L'?':
            ui->mode = MODE_HELP;
            ui->help_top = 0;
            break;
        case L'/':
        case L'\\':
            open_filter(ui);
            break;
        case L's':
            ui->mode = MODE_SORT;
            ui->sort_cursor = 0;
            break;
        case L'r':
            ui->view.reverse = !ui->view.reverse;
            ui->resync = 1;
            break;
        case L'+':
        case L'=':
            set_interval(ui, 1);
            break;
        case L'-':
        case L'_':
            set_interval(ui, -1);
            break;
        case L' ':
            ui->paused = !ui->paused;
            collector_pause(ui->col, ui->paused);
            say(ui, "%s", ui->paused ? "paused (space to go on)" : "running");
            break;
        case L't':
            ui->view.totals = !ui->view.totals;
            ui->resync = 1;
            say(ui, "%s", ui->view.totals ? "totals shown" : "totals hidden");
            break;
        case L'a':
            ui->advanced = !ui->advanced;
            collector_set_advanced(ui->col, ui->advanced);
            say(ui, "%s", ui->advanced ? "advanced counters shown" : "advanced counters hidden");
            break;
        case L'v':
            ui->raw = !ui->raw;
            collector_set_raw(ui->col, ui->raw);
            say(ui, "%s", ui->raw ? "raw values" : "cooked values");
            break;
        case L'd':
            ui->mode = MODE_DETAILS;
            break;
        case L'g':
            ui->mode = MODE_GRAPH;
            if (ui->view.sort >= 0)
                ui->graph_col = ui->view.sort;
            ui->resync = 1;
            break;
        case L'H': /* the heatmap: the sort column's histogram, else the first */
            ui->heat_col = ui->view.sort >= 0 && ui->table &&
                                   ui->view.sort < (int)ui->table->ncols &&
                                   ui->table->cols[ui->view.sort].shape
                               ? ui->view.sort
                               : heat_next_column(ui->table, -1, 1);
            if (ui->heat_col < 0)
                say(ui, "%s", "no histogram counter in this counterset");
            else
                ui->mode = MODE_HEAT;
            ui->resync = 1;
            break;
        case L'm':
            toggle_mark(ui);
            ui->resync = 1;
            break;
        case L'U':
            ui->nmarks = 0;
            ui->resync = 1;
            break;
        case 12: /* ^L */
            clearok(curscr, TRUE);
            break;
        }
    }
    if (moved) {
        move_cursor(cur, count, delta);
        if (ui->focus == FOCUS_SETS)
            choose_set(ui, ui->set_cursor);
        ui->resync = 1;
    }
}

static void key_sort(top_ui *ui, int is_key, wint_t c)
{
    int choices[UI_MAX_COLS + 3];
    size_t n = screen_sort_choices(ui, choices, sizeof choices / sizeof choices[0]);
    if (is_key && c == KEY_UP && ui->sort_cursor > 0)
        ui->sort_cursor--;
    else if (is_key && c == KEY_DOWN && ui->sort_cursor + 1 < n)
        ui->sort_cursor++;
    else if (is_key && c == KEY_HOME)
        ui->sort_cursor = 0;
    else if (is_key && c == KEY_END && n)
        ui->sort_cursor = n - 1;
    else if ((is_key && c == KEY_ENTER) || (!is_key && (c == L'\r' || c == L'\n'))) {
        if (ui->sort_cursor < n) {
            ui->view.sort = choices[ui->sort_cursor];
            ui->view.reverse = 0;
            if (ui->view.sort >= 0)
                ui->graph_col = ui->view.sort;
        }
        ui->mode = MODE_TABLE;
        ui->resync = 1;
    } else if ((is_key && (c == KEY_F(6) || c == KEY_F(10))) ||
               (!is_key && (c == 27 || c == L's' || c == L'q'))) {
        ui->mode = MODE_TABLE;
        if ((is_key && c == KEY_F(10)) || (!is_key && c == L'q'))
            ui->quit = 1;
    }
}

/* Columns i and j of the order change places (with their hidden flags). */
static void column_swap(top_ui *ui, size_t i, size_t j)
{
    uint32_t k = ui->col_order[i];
    uint8_t hidden = ui->col_hidden[i];
    ui->col_order[i] = ui->col_order[j];
    ui->col_hidden[i] = ui->col_hidden[j];
    ui->col_order[j] = k;
    ui->col_hidden[j] = hidden;
}

/* F2: the columns; Space shows or hides one, F7/F8 (or [ ]) move it. */
static void key_setup(top_ui *ui, int is_key, wint_t c)
{
    size_t n = ui->ncol_order, *cur = &ui->setup_cursor;
    if (is_key && c == KEY_UP && *cur > 0)
        (*cur)--;
    else if (is_key && c == KEY_DOWN && *cur + 1 < n)
        (*cur)++;
    else if (is_key && c == KEY_HOME)
        *cur = 0;
    else if (is_key && c == KEY_END && n)
        *cur = n - 1;
    else if (!is_key && c == L' ' && *cur < n)
        ui->col_hidden[*cur] = !ui->col_hidden[*cur];
    else if (((is_key && c == KEY_F(7)) || (!is_key && c == L'[')) && *cur > 0 && *cur < n) {
        column_swap(ui, *cur, *cur - 1);
        (*cur)--;
    } else if (((is_key && c == KEY_F(8)) || (!is_key && c == L']')) && *cur + 1 < n) {
        column_swap(ui, *cur, *cur + 1);
        (*cur)++;
    } else if ((is_key && (c == KEY_F(2) || c == KEY_F(10) || c == KEY_ENTER)) ||
               (!is_key && (c == 27 || c == L'q' || c == L'\r' || c == L'\n'))) {
        ui->mode = MODE_TABLE;
        if ((is_key && c == KEY_F(10)) || (!is_key && c == L'q'))
            ui->quit = 1;
    }
    ui->resync = 1;
}

/* The keys the graph and the heatmap share: Up/Down another instance,
 * Space pause, + - the interval, the mouse ignored. 1 if c was one. */
static int plot_key(top_ui *ui, int is_key, wint_t c)
{
    if (is_key && (c == KEY_UP || c == KEY_DOWN)) {
        move_cursor(&ui->cursor, ui->count, c == KEY_UP ? -1 : 1);
    } else if (!is_key && c == L' ') {
        ui->paused = !ui->paused;
        collector_pause(ui->col, ui->paused);
    } else if (!is_key && (c == L'+' || c == L'-')) {
        set_interval(ui, c == L'+' ? 1 : -1);
    } else if (is_key && c == KEY_MOUSE) {
        MEVENT ev;
        getmouse(&ev);
    } else {
        return 0;
    }
    return 1;
}

static void key_mode(top_ui *ui, int is_key, wint_t c)
{
    /* Help and details: any key returns (q and F10 quit); the graph keeps
     * its own keys. */
    int quit = (is_key && c == KEY_F(10)) || (!is_key && c == L'q');
    if (ui->mode == MODE_HEAT) {
        if (is_key && (c == KEY_LEFT || c == KEY_RIGHT))
            ui->heat_col = heat_next_column(ui->table, ui->heat_col, c == KEY_LEFT ? -1 : 1);
        else if (!plot_key(ui, is_key, c))
            ui->mode = MODE_TABLE;
    } else if (ui->mode == MODE_GRAPH) {
        uint32_t nc = ui->table ? ui->table->ncols : 0;
        if (is_key && c == KEY_LEFT && nc)
            ui->graph_col = (ui->graph_col + (int)nc - 1) % (int)nc;
        else if (is_key && c == KEY_RIGHT && nc)
            ui->graph_col = (ui->graph_col + 1) % (int)nc;
        else if (!is_key && c == L'm')
            toggle_mark(ui);
        else if (!is_key && c == L'U')
            ui->nmarks = 0;
        else if (!plot_key(ui, is_key, c))
            ui->mode = MODE_TABLE;
    } else if (ui->mode == MODE_HELP && is_key &&
               (c == KEY_UP || c == KEY_DOWN || c == KEY_PPAGE || c == KEY_NPAGE || c == KEY_HOME ||
                c == KEY_END)) {
        /* Scroll (screen.c keeps it within the help). */
        int page = ui->body_h > 1 ? ui->body_h - 1 : 1;
        ui->help_top += c == KEY_UP      ? -1
                        : c == KEY_DOWN  ? 1
                        : c == KEY_PPAGE ? -page
                        : c == KEY_NPAGE ? page
                        : c == KEY_HOME  ? -(1 << 20)
                                         : 1 << 20;
    } else if (ui->mode == MODE_DETAILS && is_key && (c == KEY_UP || c == KEY_DOWN)) {
        move_cursor(&ui->cursor, ui->count, c == KEY_UP ? -1 : 1);
    } else if (!(is_key && c == KEY_MOUSE)) {
        ui->mode = MODE_TABLE;
    } else {
        MEVENT ev;
        getmouse(&ev);
    }
    if (quit)
        ui->quit = 1;
    ui->resync = 1;
}

static void handle_key(top_ui *ui, int is_key, wint_t c)
{
    ui->dirty = 1;
    if (is_key && c == KEY_RESIZE)
        return; /* SIGWINCH did it */
    if (ui->editing)
        edit_key(ui, is_key, c);
    else if (ui->mode == MODE_SORT)
        key_sort(ui, is_key, c);
    else if (ui->mode == MODE_SETUP)
        key_setup(ui, is_key, c);
    else if (ui->mode != MODE_TABLE)
        key_mode(ui, is_key, c);
    else
        key_table(ui, is_key, c);
}

static void resize(top_ui *ui)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resize_term(ws.ws_row, ws.ws_col);
    clearok(curscr, TRUE);
    ui->resync = 1;
    ui->dirty = 1;
}

int input_loop(top_ui *ui, int wake_fd, volatile int *signalled, volatile int *winched)
{
    ui->scr_lines = LINES;
    ui->scr_cols = COLS;
    ui->resync = ui->dirty = 1;
    uint64_t synced_seq = 0;
    while (!ui->quit && !*signalled) {
        if (*winched) {
            *winched = 0;
            resize(ui);
        }
        ui->scr_lines = LINES;
        ui->scr_cols = COLS;
        uint64_t seq = collector_seq(ui->col);
        if (seq != synced_seq || ui->resync || ui->stale) {
            top_model *m = collector_lock(ui->col, UI_LOCK_MS);
            if (m) {
                ui_sync(ui, m);
                collector_unlock(ui->col);
                synced_seq = seq;
            } else {
                ui->stale = 1; /* collecting: draw what we have, retry soon */
            }
        }
        screen_draw(ui);
        ui->dirty = 0;
        if (ui->last_frame)
            break;
        struct pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_fd, POLLIN, 0}};
        int timeout = ui->stale ? 50 : 1000; /* 1 s: the clock in the header */
        if (poll(p, 2, timeout) < 0 && errno != EINTR)
            break;
        if (p[1].revents & POLLIN) {
            char buf[64];
            while (read(wake_fd, buf, sizeof buf) > 0) {
            }
        }
        if (p[0].revents & (POLLHUP | POLLERR))
            break; /* the terminal went away */
        wint_t c;
        int r;
        while ((r = get_wch(&c)) != ERR) {
            handle_key(ui, r == KEY_CODE_YES, c);
            if (ui->quit)
                break;
        }
    }
    return 0;
}
