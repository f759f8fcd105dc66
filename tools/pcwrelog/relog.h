/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwrelog/relog.h - pcwrelog, relog for pcw: what its files share.
 *
 *   main.c     options, and the run: order, select, convert or list
 *   inputs.c   the logs: their order in time, what each holds, the columns
 *   select.c   -c / -cf: which columns a path pattern selects
 *   timearg.c  -b / -e: the times the user writes, and whether a sample is within them
 *   convert.c  the samples of the logs, in order, cut (-b/-e) and thinned (-t)
 *   sinks.c    writing the rows: typeperf's CSV/TSV, JSON lines, a new log
 *   list.c     -q
 *
 * The logs are read three times: once for the first sample's time (the
 * order), once whole in that order (what they hold: series, time range,
 * damage; the columns; overlaps; which sample primes the first row), and
 * once to convert. Memory: one block per log being read, the columns, and
 * two samples' values of each selected column; work linear in the logs.
 */
#ifndef PCW_RELOG_H
#define PCW_RELOG_H

#include <stdint.h>
#include <stdio.h>

#include "../../lib/history/history.h"

enum { OUT_CSV, OUT_TSV, OUT_JSON, OUT_BIN };

typedef struct relog_opts {
    const char **files;
    size_t nfiles, files_cap;
    char **patterns; /* -c and -cf paths (owned) */
    size_t npatterns, patterns_cap;
    int has_begin, has_end;
    uint64_t begin_ns, end_ns; /* -b, -e: real time (ns since the epoch) */
    uint64_t thin;             /* -t N, 1 = every sample */
    int format;                /* OUT_* */
    const char *output;        /* -o; NULL = stdout */
    int yes, query, no_scale;
} relog_opts;

/* A series' identity: what the previous sample must share to cook a rate
 * against it (docs/history.md, "What is logged"). */
typedef struct relog_ident {
    uint32_t kind, type;
    int32_t scale;
    uint64_t provider_id;
    uint32_t instance_id;
    int32_t pid;
    uint32_t dup_index;
    uint32_t hshape; /* a histogram's shape and statistic (version 2) */
    pcw_hist_stat hstat;
} relog_ident;

/* One column: a concrete path, the union over the logs (a series of the
 * same path in two logs is one column). */
typedef struct relog_col {
    char *path;
    uint32_t kind, type; /* of the first series seen with this path */
    size_t next_same;    /* the next column of the same path (SIZE_MAX: none) */
    int selected;
    size_t out; /* its index among the selected columns */
    /* Its parts, for JSON (select.c, parsed once). */
    char *counterset, *instance, *counter;
} relog_col;

/* One input log. */
typedef struct relog_log {
    const char *file;
    uint64_t first_real, last_real; /* of its samples */
    uint64_t samples;               /* read whole (before any damage) */
    uint64_t blocks, bytes;
    uint32_t version;     /* its format version (-q) */
    uint64_t first_index; /* the merged index of its first sample */
    int damaged;          /* the scan stopped at a damaged block: */
    char why[512];        /* ... the reader's sentence */
    size_t *col;          /* its series i's column */
    size_t nseries;
} relog_log;

typedef struct relog_run {
    relog_opts *o;
    relog_log *logs; /* in time order after inputs_scan */
    size_t nlogs;
    relog_col *cols;
    size_t ncols, cols_cap;
    void *by_path; /* tsearch tree: path -> first column */
    size_t nselected;
    uint64_t total;                /* samples of all logs */
    int has_rows;                  /* some sample is a row: */
    uint64_t first_row, prime_row; /* its merged index, and the one N back */
} relog_run;

/* ---- inputs.c ------------------------------------------------------------ */

/* Order the logs by their first sample's time, read each whole: its
 * series into the columns, its time range, where it is damaged; refuse
 * overlapping logs; find the first row (run->first_row, prime_row: the
 * first sample at -b or later with a sample N back) and refuse -b/-e that
 * select no sample. 0, or 1 after a message on stderr. */
int inputs_scan(relog_run *run);
void inputs_free(relog_run *run);
/* Open log i again to convert it; NULL after a message. */
pcw__hist_reader *inputs_open(const relog_run *run, size_t i);
/* Copy a series' identity. */
void ident_of(relog_ident *id, const pcw__hist_series *s);
int ident_same(const relog_ident *a, const relog_ident *b);

/* ---- select.c ------------------------------------------------------------ */

/* Mark the columns the patterns select (all without patterns), number
 * them, and split their paths for JSON. 0, or 1 after a message naming a
 * pattern that is malformed or selects nothing. */
int select_columns(relog_run *run);

/* ---- timearg.c ----------------------------------------------------------- */

/* "M/d/yyyy hh[:mm[:ss[.fff]]][ ][AM|PM]" or ISO 8601
 * "yyyy-mm-ddThh:mm[:ss[.fff]][Z|+hh:mm|-hh:mm]", local time unless a zone
 * is given, into ns since the epoch, and the length of its last unit
 * written (an hour, a minute, a second, 10^-k s): -e ends at ns + unit - 1.
 * 0, or -1 (not such a time). */
int timearg_parse(const char *s, uint64_t *ns, uint64_t *unit_ns);
/* Is a sample at real time t within -b and -e? */
int in_range(const relog_opts *o, uint64_t t);

/* ---- convert.c / sinks.c ------------------------------------------------- */

/* Write the selected columns' rows to out; the exit status. */
int convert_run(relog_run *run, FILE *out);

/* A column's value in one sample: the series' value and identity, or
 * absent (the column's series is not in this log, or not yet defined). */
typedef struct relog_cell {
    pcw__hist_value v;
    relog_ident id;
    int present;
    uint64_t *words; /* a kept cell's own copy of what v points to */
    size_t words_cap;
} relog_cell;
/* The series of a cell, for pcw__hist_cook and the writer. */
void ident_series(pcw__hist_series *s, const relog_ident *id);

typedef struct relog_sink relog_sink;
/* Start writing (the header); NULL after a message. */
relog_sink *sink_open(relog_run *run, FILE *out);
/* A sample the output keeps: `row` 1 for a row, 0 for the sample that
 * primes the first row (only a log writes it). now/prev: the selected
 * columns' cells (prev: the sample N back, NULL for the priming one).
 * `index`: the merged sample index. 0, or -1 after a message. */
int sink_sample(relog_sink *k, uint64_t index, uint64_t mono_ns, uint64_t real_ns, int row,
                const relog_cell *now, const relog_cell *prev);
/* Finish (a log: its last block, sync); 0, or -1 after a message. Frees k. */
int sink_close(relog_sink *k);

/* ---- list.c -------------------------------------------------------------- */

/* -q: the logs and the selected columns; the exit status. */
int list_logs(const relog_run *run, FILE *out);

/* A name from a log for out: escaped on a terminal (escape.h). */
void put_name(FILE *out, const char *s);

#endif /* PCW_RELOG_H */
