/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/pcwtop.h - pcwtop, the live viewer: what its parts share.
 *
 * Split as htop is:
 *   model.[ch], view.c   data: query, table of instances, filter, sort
 *                        (no terminal, no threads: bench/pcwtop.c runs it)
 *   format.[ch]          numbers, times, names at a fixed width
 *   history.c            the graph's per-series rings
 *   collector.c          the thread that collects, so input never waits
 *   screen.c             drawing: header, counterset list, table, help,
 *                        details, function bar
 *   graph.c              drawing the graph view (braille / ASCII)
 *   heatmap.c            a histogram's distribution over time: its ring,
 *                        the heatmap view, batch mode's text form
 *   input.c              keys and mouse: the event loop
 *   batch.c              -b: each refresh as text
 *   main.c               options, terminal set-up and restore, signals
 *
 * Threads: the UI thread (main, input, screen, graph) and the collector
 * thread, which alone touches the top_model. They share only what
 * collector.c guards with its mutex: requests one way, finished frames the
 * other. History, view and marks are the UI thread's.
 */
#ifndef PCWTOP_H
#define PCWTOP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
} top_options;

/* Intervals +/- step through (seconds). */
#define TOP_MIN_INTERVAL 0.1
#define TOP_MAX_INTERVAL 3600.0

/* Parse "-s" into the view (sort and direction); 0 or -1 (unknown column,
 * *why says so). */
int top_apply_sort(top_view *v, const top_frame *f, const char *spec, char *why, size_t len);

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
/* Collections finished so far. */
uint64_t collector_seq(top_collector *c);
/* The model, locked - or NULL when the collector kept it longer than
 * timeout_ms (it is collecting). */
top_model *collector_lock(top_collector *c, int timeout_ms);
void collector_unlock(top_collector *c);

/* ---- the interactive UI ------------------------------------------------------ */

enum { FOCUS_SETS, FOCUS_TABLE };
enum { MODE_TABLE, MODE_HELP, MODE_DETAILS, MODE_GRAPH, MODE_SORT, MODE_SETUP, MODE_HEAT };
/* The prompt on the bottom line: none, the filter (F4, /, \), the search (F3). */
enum { EDIT_NONE, EDIT_FILTER, EDIT_SEARCH };
/* Narrower terminals hide the counterset list unless `c` showed it. */
#define UI_NARROW_COLS 60

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
#define GRAPH_MAX_SERIES 8
/* The heatmap's shades, lightest first: PAIR_HEAT0 + level - 1. */
#define PAIR_HEAT0  (PAIR_SERIES0 + GRAPH_MAX_SERIES)
#define HEAT_LEVELS 4
/* ---- heatmap.c: a histogram's distribution per refresh ---------------------- */

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

/* One histogram of one instance, refresh after refresh (the UI thread's). */
typedef struct top_heat {
    uint64_t key;    /* ui_series_key of the instance */
    uint32_t index;  /* the counter's index in its counterset */
    uint32_t shape;  /* 0: nothing recorded */
    uint32_t nb;     /* buckets + 1: cell 0 is the zero bucket */
    uint64_t *cells; /* [HEAT_COLS][nb]: column seq % HEAT_COLS */
    heat_col col[HEAT_COLS];
} top_heat;

/* Counter columns kept per row on screen (wider sets are cut). */
#define UI_MAX_COLS 64

/* What the screen shows of one row: read from the model under its lock,
 * drawn without it. */
typedef struct ui_row {
    uint32_t row; /* in ui->table */
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

typedef struct top_ui {
    top_collector *col;
    const top_options *opt;
    top_view view;
    top_history *hist;
    /* The last collection as read (the snapshot the screen is drawn from). */
    uint64_t seq, seq_before; /* shown refresh, and the one shown before */
    top_frame hdr;            /* its header figures (no table, own sets) */
    top_table *table;         /* its table (referenced) */
    size_t count;             /* rows of the view */
    size_t nshown_totals;     /* of which totals, at the top */
    ui_row *rows;             /* rows [rows_first, rows_first + nrows) */
    size_t rows_first, nrows, rows_cap;
    ui_cached *cache_cur, *cache_prev; /* this refresh's, the one before */
    size_t ncur, nprev;
    uint32_t graph_rows[GRAPH_MAX_SERIES]; /* table rows the graph shows */
    size_t ngraph;
    /* The screen. */
    int scr_lines, scr_cols;
    int focus, mode;
    size_t set_cursor, set_top;
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
    int hscroll;     /* first counter column shown, among the visible ones */
    int hscroll_max; /* the last draw's limit: the last column is in view */
    int sets_pane;   /* the counterset list: 1 shown, -1 hidden (c), 0 auto */
    int help_top;    /* the help's first line shown */
    char message[256];
    uint64_t message_seq; /* refresh the message was set at */
    int paused, raw, advanced;
    uint64_t interval_ns;
    int graph_col;    /* counter column the graph shows */
    int heat_col;     /* a column of the histogram the heatmap shows */
    top_heat heat;    /* ...its ring, for the instance under the cursor */
    int heat_pending; /* -H: open the heatmap once the table is there */
    uint64_t *marks;  /* instance keys marked for the graph */
    size_t nmarks, marks_cap;
    int colors, colors256;
    int utf8; /* braille and box-drawing characters available */
    int quit;
    int dirty;        /* redraw */
    int resync;       /* read the model again (rows, order...) */
    int stale;        /* the model was busy: sync again when it is free */
    long refreshes;   /* refreshes shown (for -n) */
    int last_frame;   /* -n reached: draw once more, then quit */
    int sort_pending; /* -s waits for the first table */
    char *want;       /* counterset asked for (-c, or chosen) */
    /* Where the last draw put things (for the mouse). */
    int list_x, list_w, table_x, table_w, body_y, body_h;
    int hdr_x[UI_MAX_COLS + 2], hdr_sort[UI_MAX_COLS + 2], nhdr;
    /* The columns the last draw showed: visible ones [col_first, col_last]
     * of ncol_visible. */
    int col_first, col_last, ncol_visible;
} top_ui;

/* input.c: the event loop; returns the exit status. */
int input_loop(top_ui *ui, int wake_fd, volatile int *signalled, volatile int *winched);
/* Read the model (locked) into the UI's snapshot. */
void ui_sync(top_ui *ui, top_model *m);
/* Is instance `key` marked for the graph? */
int ui_marked(const top_ui *ui, uint64_t key);

/* screen.c */
void screen_init_colors(top_ui *ui);
/* Is the counterset list shown (c, or the terminal's width)? */
int screen_sets_shown(const top_ui *ui);
void screen_draw(top_ui *ui);
/* Rows of instances the table shows. */
int screen_table_height(const top_ui *ui);
/* The sort chooser's entries: TOP_SORT_NONE, NAME, PID, then counters. */
size_t screen_sort_choices(const top_ui *ui, int *out, size_t cap);
const char *screen_sort_label(const top_ui *ui, int sort);

/* graph.c */
#define GRAPH_AXIS_W 10 /* value labels and the axis line */
void graph_draw(top_ui *ui, int y, int x, int h, int w);
/* The time axis under a plot at px of pw columns, each per_col refreshes
 * (the graph: 2 dots a character; the heatmap: 1), labelled in time
 * before now. */
void graph_time_axis(const top_ui *ui, int y, int px, int pw, int per_col);

/* heatmap.c */
/* The first column at or after k (wrapping; dir -1: before) that is a
 * statistic of another histogram counter than column k's (of any, when k
 * is not one); -1 when the table has none. */
int heat_next_column(const top_table *t, int k, int dir);
/* The column of histogram counter `name` (its first statistic), or -1. */
int heat_find_column(const top_table *t, const char *name);
/* Record the last collection's distribution of ui->heat_col for the
 * instance under the cursor (the model locked), starting a new ring when
 * the instance or the counter changed. */
void heat_sync(top_ui *ui, top_model *m);
void heat_free(top_heat *h);
void heat_draw(top_ui *ui, int y, int x, int h, int w);
/* -b -H: the distribution of column k of each row of the view (rows[n]):
 * its count, rate, p50 and p99, and a line per non-empty bucket. */
void heat_print(FILE *out, top_model *m, const uint32_t *rows, size_t n, int k);
/* The history key of an instance key (with counterset and raw/cooked). */
uint64_t ui_series_key(const top_ui *ui, uint64_t key);

/* batch.c: -b; returns the exit status. */
int batch_run(const top_options *o, top_model *m, volatile int *signalled);
/* Write the last collection as text: header (numbered `refresh`: the
 * refreshes printed, from 1) and every row of the view. */
void batch_print(FILE *out, top_model *m, top_view *v, long refresh);

#endif /* PCWTOP_H */
