/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/input.c - keys and mouse: each changes the UI state
 * (top_ui, which nothing else changes) and returns reaction flags
 * (REACT_*, htop's HTOP_REFRESH and friends) that the event loop in main.c
 * reads: redraw, read the model again, quit, and the requests the loop
 * posts to the collector (pause, interval, counterset, raw, advanced,
 * refresh now). Handlers read the snapshot (top_snap) and where the last
 * draw put things (top_layout, for the mouse and scrolling); they never
 * draw and never touch the model. ui_refreshed and ui_clamp are the UI's
 * side of a sync: what a new refresh means for the messages, the columns
 * and the cursor.
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
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "pcwtop.h"

/* How long a message stays (refreshes). */
#define MESSAGE_REFRESHES 5

/* The intervals + and - step through, in seconds. */
static const double intervals[] = {0.1, 0.2, 0.5, 1,   2,   5,    10,  15,
                                   30,  60,  120, 300, 600, 1800, 3600};

/* What a handler works with: the UI it changes, what it reads, and the
 * flags it returns. */
typedef struct key_ctx {
    top_ui *ui;
    const top_snap *s;
    const top_layout *lay;
    int flags;
} key_ctx;

__attribute__((format(printf, 2, 3))) static void say(top_ui *ui, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ui->message, sizeof ui->message, fmt, ap);
    va_end(ap);
    ui->message_seq = ui->seen_seq;
}

void ui_init(top_ui *ui, const top_options *o, uint64_t interval_ns)
{
    memset(ui, 0, sizeof *ui);
    ui->opt = o;
    ui->interval_ns = interval_ns;
    ui->focus = FOCUS_TABLE;
    ui->choice.sort = TOP_SORT_NONE;
    ui->choice.totals = 1;
    if (o->filter)
        snprintf(ui->choice.filter, sizeof ui->choice.filter, "%s", o->filter);
    if (o->container)
        snprintf(ui->choice.container, sizeof ui->choice.container, "%s", o->container);
    ui->sort_pending = o->sort != NULL;
    ui->heat_pending = o->heat != NULL;
    ui->heat_col = -1;
    ui->want = o->set ? strdup(o->set) : NULL;
    ui->replay = o->replay != NULL;
}

void ui_free(top_ui *ui)
{
    marks_free(&ui->marks);
    free(ui->want);
    ui->want = NULL;
}

/* ---- a sync --------------------------------------------------------------------- */

/* The columns as published: every one shown, in its order. */
static void columns_reset(top_ui *ui, uint32_t nc)
{
    ui->ncol_order = nc < UI_MAX_COLS ? nc : UI_MAX_COLS;
    for (uint32_t i = 0; i < ui->ncol_order; i++) {
        ui->col_order[i] = i;
        ui->col_hidden[i] = 0;
    }
    ui->hscroll = 0;
    ui->setup_cursor = 0;
}

void ui_refreshed(top_ui *ui, const top_snap *s)
{
    const top_frame *f = &s->hdr;
    ui->seen_seq = s->seq;
    uint32_t nc = s->table ? s->table->ncols : 0;
    if (s->set_changed || ui->ncol_order != (nc < UI_MAX_COLS ? nc : UI_MAX_COLS))
        columns_reset(ui, nc);
    /* The counterset list's cursor follows the counterset shown. */
    if (f->set_index >= 0 && ui->focus != FOCUS_SETS)
        ui->set_cursor = (size_t)f->set_index;
    if (ui->set_cursor >= f->nsets)
        ui->set_cursor = f->nsets ? f->nsets - 1 : 0;
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
    else if (!ui->message[0] || s->seq - ui->message_seq >= MESSAGE_REFRESHES) {
        /* Nothing happened: the table's standing note, while the totals
         * it explains are shown. */
        if (f->note[0] && ui->choice.totals)
            say(ui, "%s", f->note);
        else
            ui->message[0] = 0;
    }
    if (ui->sort_pending && s->table) {
        char why[512];
        top_frame with_table = *f;
        with_table.table = s->table;
        if (view_parse_sort_spec(&with_table, ui->opt->sort, &ui->choice.sort, &ui->choice.reverse,
                                 why, sizeof why) != 0)
            say(ui, "%s", why);
        ui->sort_pending = 0;
    }
    if (s->table && ui->graph_col >= (int)s->table->ncols)
        ui->graph_col = 0;
    if (ui->heat_pending && s->table) { /* -H */
        ui->heat_col = heat_find_column(s->table, ui->opt->heat);
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

void ui_found(top_ui *ui, long found)
{
    if (found >= 0)
        ui->cursor = (size_t)found;
    ui->search_failed = found < 0;
    ui->search_pending = 0;
}

void ui_clamp(top_ui *ui, const top_snap *s, size_t h)
{
    ui->raw = s->hdr.raw;
    ui->advanced = s->hdr.advanced;
    /* Keep the cursor inside the rows and the window around the cursor. */
    if (ui->cursor >= s->count)
        ui->cursor = s->count ? s->count - 1 : 0;
    if (ui->cursor < ui->top)
        ui->top = ui->cursor;
    if (h && ui->cursor >= ui->top + h)
        ui->top = ui->cursor - h + 1;
    if (ui->top + h > s->count)
        ui->top = s->count > h ? s->count - h : 0;
    /* The heatmap's histogram: the first there is, when it has none. */
    const top_table *t = s->table;
    if (ui->mode == MODE_HEAT && t &&
        (ui->heat_col < 0 || ui->heat_col >= (int)t->ncols || !t->cols[ui->heat_col].shape))
        ui->heat_col = heat_next_column(t, -1, 1);
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

static void choose_set(key_ctx *k, size_t i)
{
    top_ui *ui = k->ui;
    if (i >= k->s->hdr.nsets)
        return;
    ui->set_cursor = i;
    if (k->s->hdr.set_name && strcmp(k->s->hdr.set_name, k->s->hdr.sets[i].name) == 0)
        return;
    free(ui->want);
    ui->want = strdup(k->s->hdr.sets[i].name);
    k->flags |= REACT_WANT;
    ui->cursor = ui->top = 0;
    ui->choice.sort = TOP_SORT_NONE; /* columns differ from one set to the next */
    ui->choice.reverse = 0;
    ui->graph_col = 0;
}

static void set_interval(key_ctx *k, int dir)
{
    top_ui *ui = k->ui;
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
    k->flags |= REACT_INTERVAL;
    char iv[32];
    fmt_interval(iv, sizeof iv, ui->interval_ns);
    say(ui, "delay %s", iv);
}

static void toggle_mark(key_ctx *k)
{
    const ui_row *u = snap_row_at(k->s, k->ui->cursor);
    if (u && marks_toggle(&k->ui->marks, u->key) < 0 && k->ui->marks.n >= GRAPH_MAX_SERIES)
        say(k->ui, "at most %d instances are marked for the graph", GRAPH_MAX_SERIES);
}

/* The filter and search prompts: wide characters in, UTF-8 kept. */
/* The time prompt (--replay, b): Enter goes there, Esc does not. */
static void goto_key(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
    size_t n = strlen(ui->edit);
    if ((is_key && c == KEY_ENTER) || (!is_key && (c == L'\r' || c == L'\n'))) {
        ui->editing = EDIT_NONE;
        if (fmt_parse_time(ui->edit, k->s->hdr.log_first_real_ns, &ui->seek_real_ns) == 0)
            k->flags |= REACT_SEEK_TIME;
        else
            say(ui, "not a time: \"%s\" (HH:MM:SS, or YYYY-MM-DD HH:MM:SS)", ui->edit);
    } else if (!is_key && c == 27) {
        ui->editing = EDIT_NONE;
    } else if ((is_key && c == KEY_BACKSPACE) || (!is_key && (c == 127 || c == 8))) {
        if (n > 0)
            ui->edit[n - 1] = 0;
    } else if (!is_key && c == 21) { /* ^U */
        ui->edit[0] = 0;
    } else if (!is_key &&
               ((c >= L'0' && c <= L'9') || c == L':' || c == L'-' || c == L' ' || c == L'T') &&
               n + 1 < sizeof ui->edit) {
        ui->edit[n] = (char)c;
        ui->edit[n + 1] = 0;
    }
}

static void edit_key(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
    if (ui->editing == EDIT_GOTO) {
        goto_key(k, is_key, c);
        return;
    }
    size_t n = strlen(ui->edit);
    int searching = ui->editing == EDIT_SEARCH;
    if ((is_key && c == KEY_ENTER) || (!is_key && (c == L'\r' || c == L'\n'))) {
        ui->editing = EDIT_NONE;
    } else if (!is_key && c == 27) { /* Esc: back to the filter as it was */
        ui->editing = EDIT_NONE;
        if (!searching)
            memcpy(ui->choice.filter, ui->edit_undo, sizeof ui->choice.filter);
    } else if (searching && is_key && c == KEY_F(3)) { /* the next match */
        ui->search_from = ui->cursor + 1;
        ui->search_pending = 1;
        k->flags |= REACT_RESYNC;
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
        size_t len = wcrtomb(mb, (wchar_t)c, &st);
        if (len != (size_t)-1 && n + len < sizeof ui->edit) {
            memcpy(ui->edit + n, mb, len);
            ui->edit[n + len] = 0;
        }
    }
    k->flags |= REACT_RESYNC;
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
        memcpy(ui->choice.filter, ui->edit, sizeof ui->choice.filter);
    }
    ui->cursor = ui->top = 0;
}

static void open_filter(top_ui *ui)
{
    ui->editing = EDIT_FILTER;
    memcpy(ui->edit, ui->choice.filter, sizeof ui->edit);
    memcpy(ui->edit_undo, ui->choice.filter, sizeof ui->edit_undo);
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

static void sort_by(key_ctx *k, int sort)
{
    top_ui *ui = k->ui;
    if (ui->choice.sort == sort) {
        ui->choice.reverse = !ui->choice.reverse;
    } else {
        ui->choice.sort = sort;
        ui->choice.reverse = 0;
    }
    if (sort >= 0)
        ui->graph_col = sort;
    k->flags |= REACT_RESYNC;
}

static void mouse(key_ctx *k)
{
    top_ui *ui = k->ui;
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        long d = (ev.bstate & BUTTON4_PRESSED) ? -3 : 3;
        if (ev.x < k->lay->list_x + k->lay->list_w && ui->mode == MODE_TABLE) {
            size_t c = ui->set_cursor;
            move_cursor(&c, k->s->hdr.nsets, d);
            choose_set(k, c);
        } else {
            move_cursor(&ui->cursor, k->s->count, d);
        }
        k->flags |= REACT_RESYNC;
        return;
    }
    if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) || ui->mode != MODE_TABLE)
        return;
    if (ev.y < k->lay->body_y || ev.y >= k->lay->body_y + k->lay->body_h)
        return;
    if (ev.x >= k->lay->list_x && ev.x < k->lay->list_x + k->lay->list_w) {
        /* The counterset list: its title, then one line per set. */
        ui->focus = FOCUS_SETS;
        int line = ev.y - k->lay->body_y - 1;
        if (line >= 0)
            choose_set(k, k->lay->set_top + (size_t)line);
    } else if (ev.x >= k->lay->table_x) {
        ui->focus = FOCUS_TABLE;
        if (ev.y == k->lay->body_y) { /* the header: sort by the column clicked */
            for (int i = k->lay->nhdr - 1; i >= 0; i--)
                if (ev.x >= k->lay->hdr_x[i]) {
                    sort_by(k, k->lay->hdr_sort[i]);
                    break;
                }
        } else {
            size_t row = ui->top + (size_t)(ev.y - k->lay->body_y - 1);
            if (row < k->s->count)
                ui->cursor = row;
        }
    }
    k->flags |= REACT_RESYNC;
}

/* The first column shown, as the last draw could show it (several keys
 * may come before the next draw). */
static int hscroll(const key_ctx *k)
{
    int h = k->ui->hscroll;
    h = h > k->lay->hscroll_max ? k->lay->hscroll_max : h;
    return h > 0 ? h : 0;
}

/* --replay's keys: `.` one sample forward, `,` or `T` (atop -r's) one back,
 * `b` (atop's "branch") a time to go to, + and - the speed; atop's `t`
 * forward is pcwtop's totals. 1 if c was one. Steps count from the sample
 * a step already asked for while the snapshot has not moved on, so that
 * keys typed ahead of the screen add up. */
static int replay_key(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
    static const int speeds[] = UI_SPEEDS;
    const int nspeeds = (int)(sizeof speeds / sizeof speeds[0]);
    if (!ui->replay || is_key)
        return 0;
    if (c == L'.' || c == L',' || c == L'T') {
        uint64_t at = ui->seek_seq == k->s->seq ? ui->seek_index : k->s->hdr.log_index;
        if (c == L'.')
            at++;
        else if (at)
            at--;
        ui->seek_index = at;
        ui->seek_seq = k->s->seq;
        k->flags |= REACT_SEEK;
    } else if (c == L'b') {
        ui->editing = EDIT_GOTO;
        ui->edit[0] = 0;
    } else if (c == L'+' || c == L'=' || c == L'-' || c == L'_') {
        int up = c == L'+' || c == L'=';
        if (up && ui->speed + 1 < nspeeds)
            ui->speed++;
        else if (!up && ui->speed > 0)
            ui->speed--;
        k->flags |= REACT_SPEED;
        if (speeds[ui->speed])
            say(ui, "speed %dx", speeds[ui->speed]);
        else
            say(ui, "%s", "speed: as fast as possible");
    } else {
        return 0;
    }
    return 1;
}

static void key_table(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
    if (ui->focus == FOCUS_SETS && !layout_sets_shown(ui, COLS))
        ui->focus = FOCUS_TABLE; /* the terminal got narrow: no keys for a hidden list */
    size_t page = (size_t)layout_table_height(LINES);
    size_t *cur = ui->focus == FOCUS_SETS ? &ui->set_cursor : &ui->cursor;
    size_t count = ui->focus == FOCUS_SETS ? k->s->hdr.nsets : k->s->count;
    long delta = 0;
    int moved = 0;
    if (replay_key(k, is_key, c)) {
        k->flags |= REACT_RESYNC;
    } else if (is_key) {
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
            if (ui->focus == FOCUS_TABLE && hscroll(k) > 0)
                ui->hscroll = hscroll(k) - 1;
            else if (layout_sets_shown(ui, COLS))
                ui->focus = FOCUS_SETS;
            break;
        case KEY_RIGHT:
            if (ui->focus == FOCUS_SETS)
                ui->focus = FOCUS_TABLE;
            else if (hscroll(k) < k->lay->hscroll_max)
                ui->hscroll = hscroll(k) + 1;
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
            k->flags |= REACT_COLLECT;
            say(ui, "refreshed");
            break;
        case KEY_F(6):
            ui->mode = MODE_SORT;
            ui->sort_cursor = 0;
            break;
        case KEY_F(10):
            k->flags |= REACT_QUIT;
            break;
        case KEY_MOUSE:
            mouse(k);
            break;
        case KEY_ENTER:
            ui->focus = FOCUS_TABLE;
            break;
        }
    } else {
        switch (c) {
        case L'\t':
            if (!layout_sets_shown(ui, COLS))
                show_sets(ui, 1);
            ui->focus = ui->focus == FOCUS_SETS ? FOCUS_TABLE : FOCUS_SETS;
            break;
        case L'c':
            show_sets(ui, !layout_sets_shown(ui, COLS));
            say(ui, "%s",
                layout_sets_shown(ui, COLS) ? "counterset list shown"
                                            : "counterset list hidden (c shows it)");
            break;
        case L'\r':
        case L'\n':
            ui->focus = FOCUS_TABLE;
            break;
        case L'q':
            k->flags |= REACT_QUIT;
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
            ui->choice.reverse = !ui->choice.reverse;
            k->flags |= REACT_RESYNC;
            break;
        case L'+':
        case L'=':
            set_interval(k, 1);
            break;
        case L'-':
        case L'_':
            set_interval(k, -1);
            break;
        case L' ':
            ui->paused = !ui->paused;
            k->flags |= REACT_PAUSE;
            say(ui, "%s", ui->paused ? "paused (space to go on)" : "running");
            break;
        case L't':
            ui->choice.totals = !ui->choice.totals;
            k->flags |= REACT_RESYNC;
            say(ui, "%s", ui->choice.totals ? "totals shown" : "totals hidden");
            break;
        case L'a':
            ui->advanced = !ui->advanced;
            k->flags |= REACT_ADVANCED;
            say(ui, "%s", ui->advanced ? "advanced counters shown" : "advanced counters hidden");
            break;
        case L'v':
            ui->raw = !ui->raw;
            k->flags |= REACT_RAW;
            say(ui, "%s", ui->raw ? "raw values" : "cooked values");
            break;
        case L'd':
            ui->mode = MODE_DETAILS;
            break;
        case L'g':
            ui->mode = MODE_GRAPH;
            if (ui->choice.sort >= 0)
                ui->graph_col = ui->choice.sort;
            k->flags |= REACT_RESYNC;
            break;
        case L'H': /* the heatmap: the sort column's histogram, else the first */
            ui->heat_col = ui->choice.sort >= 0 && k->s->table &&
                                   ui->choice.sort < (int)k->s->table->ncols &&
                                   k->s->table->cols[ui->choice.sort].shape
                               ? ui->choice.sort
                               : heat_next_column(k->s->table, -1, 1);
            if (ui->heat_col < 0)
                say(ui, "%s", "no histogram counter in this counterset");
            else
                ui->mode = MODE_HEAT;
            k->flags |= REACT_RESYNC;
            break;
        case L'm':
            toggle_mark(k);
            k->flags |= REACT_RESYNC;
            break;
        case L'U':
            marks_clear(&ui->marks);
            k->flags |= REACT_RESYNC;
            break;
        case 12: /* ^L */
            k->flags |= REACT_CLEAR;
            break;
        }
    }
    if (moved) {
        move_cursor(cur, count, delta);
        if (ui->focus == FOCUS_SETS)
            choose_set(k, ui->set_cursor);
        k->flags |= REACT_RESYNC;
    }
}

static void key_sort(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
    int choices[UI_MAX_COLS + 3];
    size_t n = layout_sort_choices(k->s->table, choices, sizeof choices / sizeof choices[0]);
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
            ui->choice.sort = choices[ui->sort_cursor];
            ui->choice.reverse = 0;
            if (ui->choice.sort >= 0)
                ui->graph_col = ui->choice.sort;
        }
        ui->mode = MODE_TABLE;
        k->flags |= REACT_RESYNC;
    } else if ((is_key && (c == KEY_F(6) || c == KEY_F(10))) ||
               (!is_key && (c == 27 || c == L's' || c == L'q'))) {
        ui->mode = MODE_TABLE;
        if ((is_key && c == KEY_F(10)) || (!is_key && c == L'q'))
            k->flags |= REACT_QUIT;
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
static void key_setup(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
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
            k->flags |= REACT_QUIT;
    }
    k->flags |= REACT_RESYNC;
}

/* The keys the graph and the heatmap share: Up/Down another instance,
 * Space pause, + - the interval, the mouse ignored. 1 if c was one. */
static int plot_key(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
    if (replay_key(k, is_key, c)) {
        return 1;
    } else if (is_key && (c == KEY_UP || c == KEY_DOWN)) {
        move_cursor(&ui->cursor, k->s->count, c == KEY_UP ? -1 : 1);
    } else if (!is_key && c == L' ') {
        ui->paused = !ui->paused;
        k->flags |= REACT_PAUSE;
    } else if (!is_key && (c == L'+' || c == L'-')) {
        set_interval(k, c == L'+' ? 1 : -1);
    } else if (is_key && c == KEY_MOUSE) {
        MEVENT ev;
        getmouse(&ev);
    } else {
        return 0;
    }
    return 1;
}

static void key_mode(key_ctx *k, int is_key, wint_t c)
{
    top_ui *ui = k->ui;
    /* Help and details: any key returns (q and F10 quit); the graph keeps
     * its own keys. */
    int quit = (is_key && c == KEY_F(10)) || (!is_key && c == L'q');
    if (ui->mode == MODE_HEAT) {
        if (is_key && (c == KEY_LEFT || c == KEY_RIGHT))
            ui->heat_col = heat_next_column(k->s->table, ui->heat_col, c == KEY_LEFT ? -1 : 1);
        else if (!plot_key(k, is_key, c))
            ui->mode = MODE_TABLE;
    } else if (ui->mode == MODE_GRAPH) {
        uint32_t nc = k->s->table ? k->s->table->ncols : 0;
        if (is_key && c == KEY_LEFT && nc)
            ui->graph_col = (ui->graph_col + (int)nc - 1) % (int)nc;
        else if (is_key && c == KEY_RIGHT && nc)
            ui->graph_col = (ui->graph_col + 1) % (int)nc;
        else if (!is_key && c == L'm')
            toggle_mark(k);
        else if (!is_key && c == L'U')
            marks_clear(&ui->marks);
        else if (!plot_key(k, is_key, c))
            ui->mode = MODE_TABLE;
    } else if (ui->mode == MODE_HELP && is_key &&
               (c == KEY_UP || c == KEY_DOWN || c == KEY_PPAGE || c == KEY_NPAGE || c == KEY_HOME ||
                c == KEY_END)) {
        /* Scroll (screen.c keeps it within the help). */
        int page = k->lay->body_h > 1 ? k->lay->body_h - 1 : 1;
        int top = ui->help_top > k->lay->help_max ? k->lay->help_max : ui->help_top;
        ui->help_top = (top > 0 ? top : 0) + (c == KEY_UP      ? -1
                                              : c == KEY_DOWN  ? 1
                                              : c == KEY_PPAGE ? -page
                                              : c == KEY_NPAGE ? page
                                              : c == KEY_HOME  ? -(1 << 20)
                                                               : 1 << 20);
    } else if (ui->mode == MODE_DETAILS && is_key && (c == KEY_UP || c == KEY_DOWN)) {
        move_cursor(&ui->cursor, k->s->count, c == KEY_UP ? -1 : 1);
    } else if (!(is_key && c == KEY_MOUSE)) {
        ui->mode = MODE_TABLE;
    } else {
        MEVENT ev;
        getmouse(&ev);
    }
    if (quit)
        k->flags |= REACT_QUIT;
    k->flags |= REACT_RESYNC;
}

int ui_key(top_ui *ui, const top_snap *s, const top_layout *lay, int is_key, wint_t c)
{
    key_ctx k = {ui, s, lay, REACT_REDRAW};
    if (is_key && c == KEY_RESIZE)
        return k.flags; /* SIGWINCH did it */
    if (ui->editing)
        edit_key(&k, is_key, c);
    else if (ui->mode == MODE_SORT)
        key_sort(&k, is_key, c);
    else if (ui->mode == MODE_SETUP)
        key_setup(&k, is_key, c);
    else if (ui->mode != MODE_TABLE)
        key_mode(&k, is_key, c);
    else
        key_table(&k, is_key, c);
    return k.flags;
}
