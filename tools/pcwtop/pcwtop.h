/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/pcwtop.h - pcwtop, the live viewer: what its parts share.
 *
 * Split as htop is, in layers; a file calls only files below it (the
 * layering check, `nm` of the objects, finds no loop of calls):
 *
 *   main.c               options, terminal set-up and restore, signals, and
 *                        THE event loop: it reads the keys' reaction flags
 *                        (REACT_*), posts requests to the collector, reads
 *                        the model into the snapshot and has the screen drawn
 *   input.c              keys and mouse: change the UI state (top_ui, its
 *                        only writer) and return reaction flags; never draw
 *   screen.c             drawing: header, counterset list, table, help,
 *                        details, function bar; from the UI state and the
 *                        snapshot (const), into top_layout (where things went)
 *   graph.c, heatmap.c   drawing the graph view and the heatmap
 *   batch.c              -b: each refresh as text
 *   ---- the core, libpcwtop.a (no terminal): tests and the bench link it
 *   snap.c               the snapshot: the model read under its lock (the
 *                        rows on screen, their values, the graph's series),
 *                        and the rings recorded from it (history, heatmap)
 *   heat.c               histograms: columns, a distribution's statistics,
 *                        batch mode's text form
 *   layout.c             geometry the input and the screen both need
 *   marks.c              the instances marked for the graph
 *   collector.c          the thread that collects, so input never waits
 *   history.c            the graph's per-series rings
 *   model.[ch], view.c   data: query, table of instances, filter, sort
 *                        (no terminal, no threads: bench/pcwtop.c runs it)
 *   format.[ch]          numbers, times, names at a fixed width
 *
 * State, each with one writer:
 *   top_ui       the viewer's choices and cursors: input.c
 *   top_snap     what the last sync read from the model: snap.c
 *   top_layout   where the last draw put things (the mouse reads it),
 *                and the terminal's capabilities: screen.c
 *
 * Threads: the UI thread (main, input, snap, screen, graph) and the
 * collector thread, which alone touches the top_model outside
 * collector_lock. They share only what collector.c guards with its mutex:
 * requests one way, finished frames the other.
 */
#ifndef PCWTOP_H
#define PCWTOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <wchar.h>

#include "../common/escape.h"
#include "format.h"
#include "model.h"

/* ---- options (main.c) ---------------------------------------------------- */

typedef struct top_options {
    double interval;       /* -d seconds */
    const char *set;       /* -c */
    const char *filter;    /* -f */
    const char *sort;      /* -s: column, with '+' (descending) or '-' prefix */
    long count;            /* -n: refreshes, 0 = until quit */
    int batch;             /* -b */
    const char *dir;       /* --dir */
    int all_users;         /* --all-users */
    int containers;        /* --containers */
    const char *container; /* --container: only its instances */
    double timeout;        /* --timeout: seconds a callback provider has */
    int advanced;          /* -a: advanced counters are columns too */
    const char *heat;      /* -H: the histogram counter whose distribution is
                              shown (interactive: the heatmap; -b: text) */
    const char *replay;    /* --replay: the log replayed instead of live */
} top_options;

/* Intervals +/- step through (seconds). */
#define TOP_MIN_INTERVAL 0.1
#define TOP_MAX_INTERVAL 3600.0

/* ---- history.c ------------------------------------------------------------ */

/* Points per series: ten minutes at one refresh a second. */
#define HIST_POINTS 600u
/* Series kept; the least recently recorded one makes room. */
#define HIST_SERIES 1024u

typedef struct hist_series {
    uint64_t key;   /* instance identity (with counterset, raw/cooked) */
    uint32_t k;     /* counter column */
    uint64_t first; /* first refresh recorded */
    uint64_t last;  /* last refresh recorded; 0: slot free */
    double *v;      /* [HIST_POINTS]: v[seq % HIST_POINTS], NaN = none */
} hist_series;

typedef struct top_history {
    uint64_t seq_time[HIST_POINTS]; /* CLOCK_MONOTONIC of refresh seq... */
    uint64_t seq_of[HIST_POINTS];   /* ...which is this one */
    hist_series s[HIST_SERIES];
    size_t n;
} top_history;

void hist_free(top_history *h);
/* Refresh `seq` was taken at mono_ns. */
void hist_time(top_history *h, uint64_t seq, uint64_t mono_ns);
/* Record value v (NaN: none) of series (key, k) at refresh seq. */
void hist_put(top_history *h, uint64_t key, uint32_t k, uint64_t seq, double v);
const hist_series *hist_get(const top_history *h, uint64_t key, uint32_t k);
/* The value a series has at refresh seq (NaN if none), and that refresh's
 * time (0 if unknown). */
double hist_at(const top_history *h, const hist_series *s, uint64_t seq, uint64_t *time_ns);

/* ---- collector.c ------------------------------------------------------------ */

typedef struct top_collector top_collector;

/* Start the collector thread over model m, which from then on is only
 * touched under collector_lock. It writes a byte to wake_fd after each
 * collection. */
int collector_start(top_collector **out, top_model *m, uint64_t interval_ns, int wake_fd);
/* Stop the thread: 0 when it ended within wait_ms (then joined and freed,
 * the model is the caller's again), -1 when it is still waiting for a
 * provider: it is left to end with the process, with the model. */
int collector_stop(top_collector *c, int wait_ms);
/* Requests, applied by the collector before its next collection (a new
 * counterset or raw/cooked: at once). */
void collector_set_interval(top_collector *c, uint64_t ns);
void collector_pause(top_collector *c, int paused);
void collector_want(top_collector *c, const char *set);
void collector_set_raw(top_collector *c, int raw);
/* Collect once now, paused or not (F5). */
void collector_refresh(top_collector *c);
/* Show advanced counters (detail level) or not: the next collection
 * rebuilds the columns (a, -a). */
void collector_set_advanced(top_collector *c, int advanced);
/* A log (--replay): collect sample `index` at once (paused or not), or the
 * first at or after wall-clock time real_ns. At the log's end the
 * collector waits for such a request. */
void collector_seek(top_collector *c, uint64_t index);
void collector_seek_time(top_collector *c, uint64_t real_ns);
/* Collections finished so far. */
uint64_t collector_seq(top_collector *c);
/* The model, locked - or NULL when the collector kept it longer than
 * timeout_ms (it is collecting). */
top_model *collector_lock(top_collector *c, int timeout_ms);
void collector_unlock(top_collector *c);

/* ---- the interactive UI ------------------------------------------------------ */

enum { FOCUS_SETS, FOCUS_TABLE };
enum { MODE_TABLE, MODE_HELP, MODE_DETAILS, MODE_GRAPH, MODE_SORT, MODE_SETUP, MODE_HEAT };
/* The prompt on the bottom line: none, the filter (F4, /, \), the search
 * (F3), the time to go to (--replay: b). */
enum { EDIT_NONE, EDIT_FILTER, EDIT_SEARCH, EDIT_GOTO };
/* Narrower terminals hide the counterset list unless `c` showed it. */
#define UI_NARROW_COLS 60

/* What a key asks of the event loop (main.c), htop's reaction flags: the
 * handler changes the UI state, the loop does the rest. */
enum {
    REACT_REDRAW = 1 << 0,     /* draw again */
    REACT_RESYNC = 1 << 1,     /* read the model again (rows, order, cursor) */
    REACT_QUIT = 1 << 2,       /* leave */
    REACT_CLEAR = 1 << 3,      /* repaint the whole terminal (^L) */
    REACT_COLLECT = 1 << 4,    /* collect now, paused or not (F5) */
    REACT_PAUSE = 1 << 5,      /* ui->paused changed */
    REACT_INTERVAL = 1 << 6,   /* ui->interval_ns changed */
    REACT_WANT = 1 << 7,       /* ui->want (the counterset) changed */
    REACT_RAW = 1 << 8,        /* ui->raw changed */
    REACT_ADVANCED = 1 << 9,   /* ui->advanced changed */
    REACT_SEEK = 1 << 10,      /* --replay: show sample ui->seek_index */
    REACT_SEEK_TIME = 1 << 11, /* --replay: show the sample at ui->seek_real_ns */
    REACT_SPEED = 1 << 12,     /* --replay: ui->speed changed */
};
/* --replay's speeds (+ and -): times the recorded pace; 0: as fast as
 * possible. */
#define UI_SPEEDS                                                                                  \
    {                                                                                              \
        1, 2, 4, 8, 16, 32, 64, 0                                                                  \
    }

/* Colour pairs (screen.c sets them up). */
enum {
    PAIR_HEADER = 1,
    PAIR_TITLE,   /* table and list titles */
    PAIR_CURSOR,  /* the selected row, pane not focused */
    PAIR_FOCUS,   /* the selected row in the focused pane */
    PAIR_CHANGED, /* a value that changed */
    PAIR_NEW,     /* a new instance */
    PAIR_GONE,    /* a gone instance */
    PAIR_WARN,    /* no answer, errors */
    PAIR_BAR,     /* function bar keys */
    PAIR_BARTEXT, /* function bar labels */
    PAIR_DIM,     /* secondary text */
    PAIR_SERIES0, /* graph series: PAIR_SERIES0 + i */
};
/* The header's lines above the body. */
#define UI_HEADER_LINES  3
#define GRAPH_MAX_SERIES 8
/* The heatmap's shades, lightest first: PAIR_HEAT0 + level - 1. */
#define PAIR_HEAT0  (PAIR_SERIES0 + GRAPH_MAX_SERIES)
#define HEAT_LEVELS 4

/* ---- marks.c: the instances marked for the graph (m, U) --------------------- */

typedef struct top_marks {
    uint64_t *keys; /* instance keys */
    size_t n, cap;
} top_marks;

int marks_has(const top_marks *mk, uint64_t key);
/* Mark key, or unmark it if it is marked: 1 marked, 0 unmarked, -1 not
 * marked (GRAPH_MAX_SERIES reached, or no memory). */
int marks_toggle(top_marks *mk, uint64_t key);
void marks_clear(top_marks *mk);
void marks_free(top_marks *mk);

/* ---- heat.c: a histogram's distribution per refresh ------------------------- */

/* Refreshes a heatmap keeps: wider than a screen's plot. Memory: HEAT_COLS
 * x (buckets + 1) x 8 bytes (2.7 MB at 1 ns .. 1 h, schema 3; at most
 * 16.8 MB at 8192 buckets), one ring at a time. */
#define HEAT_COLS 256u

typedef struct heat_col {
    uint64_t seq;     /* refresh; 0: none */
    uint64_t mono_ns; /* its time */
    int status;       /* pcw_cstatus of its distribution */
    uint64_t count;   /* observations in the interval */
    double rate, p50, p99, max;
    uint8_t p50_st, p99_st, max_st;
} heat_col;

/* One histogram of one instance, refresh after refresh (the snapshot's). */
typedef struct top_heat {
    uint64_t key;    /* snap_series_key of the instance */
    uint32_t index;  /* the counter's index in its counterset */
    uint32_t shape;  /* 0: nothing recorded */
    uint32_t nb;     /* buckets + 1: cell 0 is the zero bucket */
    uint64_t *cells; /* [HEAT_COLS][nb]: column seq % HEAT_COLS */
    heat_col col[HEAT_COLS];
} top_heat;

/* The first column at or after k (wrapping; dir -1: before) that is a
 * statistic of another histogram counter than column k's (of any, when k
 * is not one); -1 when the table has none. */
int heat_next_column(const top_table *t, int k, int dir);
/* The column of histogram counter `name` (its first statistic), or -1. */
int heat_find_column(const top_table *t, const char *name);
void heat_free(top_heat *h);
/* Record the last collection's distribution of column k of row r (the
 * model locked) at refresh seq, taken at mono_ns, into h, starting a new
 * ring when the series (key) or the counter changed. */
void heat_record(top_heat *h, top_model *m, const top_row *r, int k, uint64_t key, uint64_t seq,
                 uint64_t mono_ns);
/* Bounds of cell b (0: the zero bucket, else bucket b - 1). */
void heat_cell_bounds(uint32_t shape, uint32_t b, double *lo, double *hi);
/* The cell holding value v of an interval (a quantile). */
uint32_t heat_cell_of(uint32_t shape, uint32_t nb, double v);
/* A bound as a row label: "1.065ms"; the last bucket's upper one "+Inf". */
void heat_bound_text(char *buf, size_t cap, uint32_t shape, double v, int last);
/* "1000 obs  1000/s  p50 1.020ms  p99 19.80ms  max 20.26ms" (or what
 * the interval's status says). */
void heat_stats_text(char *buf, size_t cap, const heat_col *hc, uint32_t shape);
/* -b -H: the distribution of column k of each row of the view (rows[n]):
 * its count, rate, p50 and p99, and a line per non-empty bucket. */
void heat_print(FILE *out, top_model *m, const uint32_t *rows, size_t n, int k);

/* ---- the UI state (input.c alone changes it) --------------------------------- */

/* Counter columns kept per row on screen (wider sets are cut). */
#define UI_MAX_COLS 64

/* The viewer's choice of rows: copied into the snapshot's top_view. */
typedef struct top_choice {
    char filter[256];
    int sort, reverse, totals;
    char container[80];
} top_choice;

typedef struct top_ui {
    const top_options *opt;
    top_choice choice;
    int focus, mode;
    size_t set_cursor;
    size_t cursor, top;  /* table: selected row, first row shown */
    size_t sort_cursor;  /* the sort chooser's selection */
    int editing;         /* EDIT_*: the prompt open */
    char edit[256];      /* the filter or search being typed */
    char edit_undo[256]; /* the filter before (Esc goes back to it) */
    char search[256];    /* F3: the search (the filter's patterns) */
    size_t search_from;  /* where the search starts (view index) */
    int search_pending;  /* find it at the next sync (the model's lock) */
    int search_failed;   /* no instance matched */
    /* F2: the counter columns in the order shown, and which are hidden;
     * for the counterset shown (a new counterset starts as published). */
    uint32_t col_order[UI_MAX_COLS];
    uint8_t col_hidden[UI_MAX_COLS];
    uint32_t ncol_order;
    size_t setup_cursor;
    int hscroll;   /* first counter column shown, among the visible ones */
    int sets_pane; /* the counterset list: 1 shown, -1 hidden (c), 0 auto */
    int help_top;  /* the help's first line shown */
    char message[256];
    uint64_t message_seq; /* refresh the message was set at */
    int paused, raw, advanced;
    uint64_t interval_ns;
    int graph_col;     /* counter column the graph shows */
    int heat_col;      /* a column of the histogram the heatmap shows */
    int heat_pending;  /* -H: open the heatmap once the table is there */
    top_marks marks;   /* instance keys marked for the graph */
    uint64_t seen_seq; /* the snapshot's refresh last taken (messages' age) */
    long refreshes;    /* refreshes shown (for -n) */
    int last_frame;    /* -n reached: draw once more, then quit */
    int sort_pending;  /* -s waits for the first table */
    char *want;        /* counterset asked for (-c, or chosen) */
    /* --replay */
    int replay;            /* replaying a log: the keys below */
    int speed;             /* index in UI_SPEEDS */
    uint64_t seek_index;   /* the sample a step asked for... */
    uint64_t seek_seq;     /* ...when the snapshot was at this refresh */
    uint64_t seek_real_ns; /* the time `b` asked for */
} top_ui;

/* ---- snap.c: the snapshot the screen is drawn from ---------------------------- */

/* What the screen shows of one row: read from the model under its lock,
 * drawn without it. */
typedef struct ui_row {
    uint32_t row; /* in the snapshot's table */
    uint64_t key;
    int state;        /* TOP_ROW_* */
    int is_new;       /* appeared within TOP_NEW_REFRESHES refreshes */
    uint64_t changed; /* bit k: column k changed since the last refresh */
    double v[UI_MAX_COLS];
    uint8_t st[UI_MAX_COLS];
} ui_row;

/* Values the UI cooked, by instance key: a row is cooked once per
 * refresh, and the refresh before tells what changed. */
typedef struct ui_cached {
    uint64_t key;
    int raw;
    uint64_t changed;
    double v[UI_MAX_COLS];
    uint8_t st[UI_MAX_COLS];
} ui_cached;
#define UI_CACHE 1024u /* entries per refresh: several screens */

typedef struct top_snap {
    uint64_t seq, seq_before; /* shown refresh, and the one shown before */
    int set_changed;          /* the last refresh taken shows another counterset */
    top_frame hdr;            /* its header figures (no table, own sets) */
    top_table *table;         /* its table (referenced) */
    top_view view;            /* the rows the UI's choice gives */
    size_t count;             /* rows of the view */
    size_t nshown_totals;     /* of which totals, at the top */
    ui_row *rows;             /* rows [rows_first, rows_first + nrows) */
    size_t rows_first, nrows, rows_cap;
    ui_cached *cache_cur, *cache_prev; /* this refresh's, the one before */
    size_t ncur, nprev;
    uint32_t graph_rows[GRAPH_MAX_SERIES]; /* table rows the graph shows */
    size_t ngraph;
    top_history *hist; /* every value on screen, recorded */
    top_heat heat;     /* the heatmap's ring, for the instance under the cursor */
    int stale;         /* the model was busy: what is drawn is older */
    /* --replay's graph: each series over the whole log (top_model_log_span),
     * span_n points, kept while the series, column and width are the same. */
    double *span[GRAPH_MAX_SERIES];
    uint64_t span_key[GRAPH_MAX_SERIES];
    int span_col;
    size_t span_n;
} top_snap;

/* Allocate the rings and caches; 0, or -1 out of memory. */
int snap_init(top_snap *s);
void snap_free(top_snap *s);
/* Take the model's last collection if it is new (1; 0 if not): header,
 * table, the value caches turned over. */
int snap_take(top_snap *s, top_model *m);
/* Apply the UI's choice of rows and count them (s->count). */
void snap_view(top_snap *s, top_model *m, const top_choice *c);
/* F3: the first row at or after `from` (in the view's order, wrapping
 * around once) whose name matches `pattern`; -1 if none. O(rows). */
long snap_search(top_snap *s, top_model *m, const char *pattern, size_t from);
/* Read rows [top, top + h) and the graph's series (the marked instances,
 * else the first rows) of column graph_col; record them in the history
 * when the refresh is new (fresh). */
void snap_rows(top_snap *s, top_model *m, size_t top, size_t h, const top_marks *marks,
               int graph_col, int fresh);
/* --replay's graph: the graph's series of column k over the whole log, n
 * points (read from the log once per series, column and width). */
void snap_span(top_snap *s, top_model *m, int k, size_t n);
/* Record the heatmap's column k for the row at view index `cursor`. */
void snap_heat(top_snap *s, top_model *m, size_t cursor, int k);
/* The history key of an instance key (with counterset and raw/cooked). */
uint64_t snap_series_key(const top_snap *s, uint64_t key);
/* The model was busy: what is drawn is older (the header says so). */
void snap_mark_stale(top_snap *s);
/* The row at view index i, if it was read (else NULL). */
const ui_row *snap_row_at(const top_snap *s, size_t i);

/* ---- layout.c: geometry both the keys and the screen need --------------------- */

/* Rows of instances the table shows on a terminal of `nlines` lines. */
int layout_table_height(int nlines);
/* Is the counterset list shown (c, or the terminal's width)? */
int layout_sets_shown(const top_ui *ui, int cols);
/* The sort chooser's entries: TOP_SORT_NONE, NAME, PID, then counters. */
size_t layout_sort_choices(const top_table *t, int *out, size_t cap);
const char *layout_sort_label(const top_table *t, int sort);

/* ---- screen.c's output, input.c ------------------------------------------------ */

/* Where the last draw put things, and what the terminal can show: the
 * screen's (screen.c writes it, the mouse and scrolling read it). */
typedef struct top_layout {
    int colors, colors256;
    int utf8; /* braille and box-drawing characters available */
    int list_x, list_w, table_x, table_w, body_y, body_h;
    int hdr_x[UI_MAX_COLS + 2], hdr_sort[UI_MAX_COLS + 2], nhdr;
    /* The columns the last draw showed: visible ones [col_first, col_last]
     * of ncol_visible; the first scrolled to (ui->hscroll within what
     * fits) and the most it can be. */
    int col_first, col_last, ncol_visible, hscroll, hscroll_max;
    size_t set_top; /* the counterset list's first line */
    int help_top;   /* the help's first line (ui->help_top within the help) */
    int help_max;   /* ...and the last it can be */
} top_layout;

/* Set the UI up from the options. */
void ui_init(top_ui *ui, const top_options *o, uint64_t interval_ns);
void ui_free(top_ui *ui);
/* A key (is_key: a KEY_* code) or a character: REACT_* flags. */
int ui_key(top_ui *ui, const top_snap *s, const top_layout *lay, int is_key, wint_t c);
/* The snapshot took a new refresh: messages, the columns of a new
 * counterset, -s and -H once there is a table, -n. */
void ui_refreshed(top_ui *ui, const top_snap *s);
/* After snap_view: the search's result (snap_search, -1: none) and the
 * cursor kept in the rows, the window of h rows around it. */
void ui_found(top_ui *ui, long found);
void ui_clamp(top_ui *ui, const top_snap *s, size_t h);

/* ---- screen.c, graph.c, heatmap.c ------------------------------------------------ */

void screen_init_colors(top_layout *lay);
void screen_draw(const top_ui *ui, const top_snap *s, top_layout *lay);

#define GRAPH_AXIS_W 10 /* value labels and the axis line */
void graph_draw(const top_ui *ui, const top_snap *s, const top_layout *lay, int y, int x, int h,
                int w);
/* The time axis under a plot at px of pw columns, each per_col refreshes
 * (the graph: 2 dots a character; the heatmap: 1), labelled in time
 * before now. */
void graph_time_axis(const top_ui *ui, const top_layout *lay, int y, int px, int pw, int per_col);
void heat_draw(const top_ui *ui, const top_snap *s, const top_layout *lay, int y, int x, int h,
               int w);

/* ---- batch.c ------------------------------------------------------------------------ */

/* -b; returns the exit status. */
int batch_run(const top_options *o, top_model *m, volatile int *signalled);
/* Write the last collection as text: header (numbered `refresh`: the
 * refreshes printed, from 1) and every row of the view. */
void batch_print(FILE *out, top_model *m, top_view *v, long refresh);

#endif /* PCWTOP_H */
