/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwstat/pcwstat.h - pcwstat, typeperf for pcw: what main.c,
 * output.c and list.c share.
 */
#ifndef PCWSTAT_H
#define PCWSTAT_H

#include <stdint.h>
#include <stdio.h>

#include <pcw/pdh.h>

#include "../../lib/history/history.h"

#include "../common/escape.h"
#include "../common/grow.h"

enum { FMT_CSV, FMT_TSV, FMT_JSON, FMT_BIN };

typedef struct options {
    const char **paths; /* counter paths, from the command line and -cf */
    size_t npaths, paths_cap;
    char **owned; /* the ones read from -cf files (to free) */
    size_t nowned, owned_cap;
    double interval;    /* seconds between samples (-si) */
    long samples;       /* -sc; 0 = until Ctrl-C */
    int format;         /* FMT_* */
    const char *output; /* -o; NULL = stdout */
    const char *log;    /* --log: also record to this pcw log */
    double flush;       /* --flush: seconds a log block spans (-1: default) */
    uint64_t max_size;  /* --max-size: rotate the log at this size (0: never) */
    unsigned max_files; /* --max-files (0: the default) */
    int yes;            /* -y */
    int query;          /* 1: -q, 2: -qx */
    const char *query_set;
    int no_scale;
    int advanced; /* -a: wildcards include advanced counters */
    const char *dir;
    int all_users;
    int containers; /* --containers */
} options;

/* ---- output.c ---------------------------------------------------------- */

/* One column of CSV/TSV output: a concrete path and its handle. */
typedef struct column {
    char *path; /* with \\host, as the header shows it */
    pcw_pdh_counter *h;
} column;

/* Header and rows. */
void write_header(FILE *f, int format, const column *cols, size_t n);
void write_row(FILE *f, int format, uint64_t realtime_ns, const column *cols, size_t n,
               unsigned fmt_flags);
/* One JSON object for this sample: every value of every handle; with
 * `containers` (the query's consumer, or NULL) each value of a provider
 * in a container names it ("container": its short id). */
void write_json(FILE *f, uint64_t realtime_ns, uint64_t sample, pcw_pdh_counter *const *hs,
                size_t n, unsigned fmt_flags, pcw_consumer *containers);
/* A string as a JSON string literal. */
void json_string(FILE *f, const char *s);

/* A name (or a message quoting one) for stderr: escaped as every tool
 * escapes names (tools/common/escape.h), '\' kept (path separator). */
static inline const char *show(char *buf, size_t cap, const char *s)
{
    return esc_str(buf, cap, s, ESC_BACKSLASH_LITERAL);
}

/* ---- record.c: -f BIN, the columns' raw samples into a pcw log ---------- */

typedef struct recorder recorder;
/* Start a log on fd (the opened -o FILE; owned from now on, closed on
 * error) with one series per column, a block appended whole once it spans
 * flush_ns (0: every sample); NULL with why on error. */
recorder *record_open(int fd, const char *file, const column *cols, size_t n, uint64_t flush_ns,
                      char *why, size_t why_len);
/* The columns are now cols[0..n) (n at least as many as before; the array
 * may have moved): the new ones become series of the log from the next
 * sample on (their path set). 0, or -1 with why. */
int record_columns(recorder *r, const column *cols, size_t n, char *why, size_t why_len);
/* Log user handle h (of query q, collected) as a group: its instances'
 * rows as row samples, W series per instance (its counterset's counters,
 * which h must select all of, in order), new instances' series defined as
 * they appear, gone ones NO_INSTANCE (tools/pcwstat/record.c). 1: taken
 * (its series defined now, after those before); 0: h is not one whose
 * rows can be logged (give its values as columns); -1 with why. */
int record_group(recorder *r, pcw_pdh *q, pcw_pdh_counter *h, char *why, size_t why_len);
/* A block also ends after n samples (0: by its span alone): the bench's
 * recorder at one sample a second with --flush 10 (bench/history_record.c). */
void record_block_samples(recorder *r, unsigned n);
/* Rotate the log once a file reaches max_size bytes (0: never; checked at
 * the end of each block, so a file grows past it by one block at most):
 * FILE becomes FILE.1, FILE.1 FILE.2 ... keeping max_files files (at
 * least 2) with FILE, and FILE starts again (docs/history.md). */
void record_rotation(recorder *r, uint64_t max_size, unsigned max_files);
/* Move FILE.k to FILE.k+1 (k from max_files - 2 down to 1) and FILE to
 * FILE.1, the oldest replaced; names that do not exist are skipped. A
 * rotation, and a recorder's start with --max-size (the previous run's log
 * is kept as FILE.1). 0, or -1 with why. */
int record_shift(const char *file, unsigned max_files, char *why, size_t why_len);
/* pcw_pdh_collect(q, failed) for record_sample: a group's rows (the first
 * whose instances' series follow each other in order) compared with the
 * log's last words in the pass that copies them, so that record_sample
 * need not compare them again (lib/query's pcw__q_collect_raw_cmp). */
int record_collect(recorder *r, pcw_pdh *q, size_t *failed);
/* Log the last collection of q, appending the block if it is due (and
 * rotating if the file is full). 0, or -1 with why (ENOSPC...: the log
 * stays readable up to the last block). */
int record_sample(recorder *r, pcw_pdh *q, char *why, size_t why_len);
/* Sync and close the log, and free r: 0 or -1 with why. */
int record_finish(recorder *r, char *why, size_t why_len);
void record_close(recorder *r);

/* ---- newmatch.c: matches that appear after the start ---------------- */

typedef struct newmatch {
    char **cols; /* the columns' paths (without \\host), sorted */
    size_t ncols, cols_cap;
    char **prev; /* the previous sample's matches that are not columns, sorted */
    size_t nprev, prev_cap;
    char **cur; /* this sample's, as nm_see gathers them */
    size_t ncur, cur_cap;
    int failed;        /* out of memory once: the report missed some */
    uint64_t compares; /* string comparisons: the cost tests count them */
} newmatch;

/* Add a column's path (before nm_columns_done); 0 or -1 out of memory. */
int nm_add_column(newmatch *t, const char *path);
void nm_columns_done(newmatch *t);
/* pcw_pdh_expand's callback (arg: the newmatch): gathers one match. */
int nm_see(const char *path, void *arg);
/* The sample's matches are all seen: write one line naming the new ones
 * (not in the previous sample; in the first, every match that is not a
 * column) to err (if not NULL and there are any); returns how many. */
size_t nm_sample_end(newmatch *t, FILE *err);
void nm_free(newmatch *t);

/* ---- split.c: a wildcard counterset part, one path per counterset ----- */

/* The countersets one path is split into over a run, at most (split.c):
 * names of up to 4 KiB each, so 16 MiB at most of them. */
#define SPLIT_MAX_SETS 4096u

struct split_seen {
    char *name;   /* a counterset the pattern matched, as first published */
    uint64_t sig; /* its counters when last tried (split.c's set_sig) */
    int added;    /* its path is a handle */
};

typedef struct splitter {
    char *text;              /* the user's path; NULL: not split */
    size_t set_at, set_len;  /* its counterset part in text */
    char *pattern;           /* that part */
    struct split_seen *seen; /* sorted by name, case-insensitively */
    size_t nseen, seen_cap;
    int full; /* SPLIT_MAX_SETS reached (and said) */
} splitter;

/* -f BIN: is `text` a path to split (its counterset part a wildcard)? 1
 * (s holds it), 0 (s holds nothing, split_new does nothing), -1 out of
 * memory. */
int split_init(splitter *s, const char *text);
/* fn(arg, path) for each counterset c publishes now that the pattern
 * matches and that was not split off before: path is the user's with the
 * counterset's name in place of the pattern. fn returns 1 (taken), 0 (the
 * query refused the path: tried again when the counterset's counters
 * change) or -1 (an error). 0, or -1 (out of memory, or fn's -1). Reads
 * c's list only: the caller refreshes it. Costs a wildcard match and a
 * binary search a counterset published, each call. */
int split_new(splitter *s, pcw_consumer *c, int (*fn)(void *arg, const char *path), void *arg);
void split_free(splitter *s);

/* ---- list.c ------------------------------------------------------------ */

/* -q / -qx: print counter paths, one per line, the counters a wildcard
 * selects at detail level `detail` (pcw_pdh_set_detail). Returns the exit
 * status. */
int list_paths(pcw_pdh *q, int with_instances, const char *set, uint32_t detail, FILE *out);

/* After a path (or -q's COUNTERSET) that names no counterset, or no counter
 * of its counterset: a line "pcwstat: did you mean ...?" with the nearest
 * names (tools/common/suggest.h), or nothing when none is near. `set` and
 * `counter` are what the user wrote; counter NULL for a counterset. */
void suggest_names(pcw_pdh *q, const char *set, const char *counter, FILE *out);
/* The same from a path and the error pcw_pdh_add_counter gave for it. */
void suggest_for_path(pcw_pdh *q, const char *path, const pcw_path_error *err, FILE *out);

#endif /* PCWSTAT_H */
