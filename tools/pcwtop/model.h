/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/model.h - pcwtop's data layer: what one refresh collects
 * (model.c) and how its rows are filtered, sorted and cut to the ones on
 * screen (view.c). Nothing here draws or reads the terminal, and nothing
 * here starts a thread, so the benchmark (bench/pcwtop.c) and batch mode
 * call it directly; the interactive program runs top_model_collect on its
 * collector thread (collector.c) and reads the model under its lock.
 *
 *   top_model   owns the query (pcw/pdh.h) and the counterset shown;
 *               top_model_collect takes one sample. Values stay in the
 *               query and are cooked when asked for: one row's
 *               (top_model_row_values, for the rows on screen) or one
 *               column of every instance (top_model_column, for sorting:
 *               one pass over the sample, kept until the next collection),
 *               or only the first rows of a column's order, ranked by the
 *               collection as it reads the rows (top_model_top: the
 *               window the last refresh showed). A refresh never
 *               materialises rows x counters values it will not show.
 *   top_frame   what the last collection found: the header's figures, the
 *               counterset list, the table of instances.
 *   top_table   the instances: one row per instance the query gives
 *               (totals first), plus the ones that just went away ("gone"
 *               rows, kept TOP_GONE_REFRESHES refreshes at the place they
 *               had). Rebuilt only when the query's instance list changes
 *               (pcw_pdh_instance_epoch): in a steady state a refresh
 *               copies no names.
 *   top_view    the viewer's choices (filter, sort column, totals) and
 *               the rows they give, of which only the window asked for is
 *               put in order (a bounded heap or a quickselect, never a
 *               sort of every row).
 *
 * Ownership: a top_model and what it returns belong to one thread at a
 * time (collector.c's lock); a top_table may be kept beyond the next
 * collection by reference (top_table_ref/unref, atomic). A top_view
 * belongs to one thread.
 */
#ifndef PCWTOP_MODEL_H
#define PCWTOP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <pcw/pdh.h>

/* How many refreshes a departed instance stays on screen, marked. */
#define TOP_GONE_REFRESHES 3u
/* ...and how many a new one stays marked as new. */
#define TOP_NEW_REFRESHES 3u

/* ---- what a collection found ---------------------------------------------- */

/* One counter of the shown counterset: a column of the table. */
typedef struct top_column {
    char *name, *description;
    char *base;     /* the base counter's name, "" if none */
    uint32_t index; /* in the counterset's counters */
    uint32_t id, type, aggregate, detail_level, attributes;
    int32_t scale;     /* default_scale */
    const char *unit;  /* "/s", "%", "s" or "" (from the type; a histogram's
                          from its statistic and unit) */
    uint32_t shape;    /* a histogram statistic's column: the shape
                          (pcw/histogram.h); else 0 */
    uint32_t stat_len; /* ...and the bytes of ":STAT" ending `name` */
} top_column;

/* One counterset in the list (merged across providers). */
typedef struct top_setinfo {
    char *name;
    uint32_t providers;     /* registrations merged: one per provider */
    uint32_t instance_type; /* pcw_instance_type */
    int callback;           /* produced by a callback (PCW_CALLBACK) */
} top_setinfo;

/* A row's state beyond its values. */
enum {
    TOP_ROW_LIVE = 0,
    TOP_ROW_GONE = 1,     /* went away (closed by its provider) */
    TOP_ROW_EXITED = 2,   /* went away with its provider */
    TOP_ROW_NOANSWER = 3, /* its provider did not answer in time: the row
                             stays, without values (callback countersets) */
};

/* One instance of the table. */
typedef struct top_row {
    uint64_t key;         /* identity: hash of (provider, id, kind, name) */
    uint64_t provider_id; /* 0 for totals */
    uint32_t name_off;    /* display name ("job#1", "_Total") in names */
    uint32_t name_len;
    uint32_t qi;          /* its index among the query's instances;
                             UINT32_MAX for a gone row */
    uint32_t instance_id; /* PCW_ANY_INSTANCE_ID for totals */
    int32_t pid;          /* 0 for totals */
    uint8_t kind;         /* pcw_pdh_kind */
    uint8_t state;        /* TOP_ROW_LIVE, _GONE, _EXITED (NOANSWER is per
                             refresh: top_row_state) */
    uint64_t born;        /* refresh it appeared in; 0: there from the start */
    uint64_t gone;        /* refresh it went away in; 0: live */
    char ctr[24];         /* its container's short name (--containers),
                             "" in pcwtop's own mount namespace */
    char pod[64];         /* its Kubernetes "<namespace>/<pod>" when the
                             runtime's config.json names it, cut to fit (the
                             pod's author's: drawn escaped); "" unknown */
} top_row;

typedef struct top_table {
    int refs;              /* atomic */
    uint64_t id;           /* never repeats */
    uint64_t epoch;        /* pcw_pdh_instance_epoch it was built at */
    size_t nrows, ntotals; /* _Total rows are the first ntotals */
    size_t nq;             /* rows that are query instances */
    size_t nghosts;        /* gone rows */
    top_row *rows;
    char *names;
    size_t names_len;
    top_column *cols;
    uint32_t ncols;
    uint32_t *hash; /* key -> row + 1, open addressing, hash_cap slots */
    size_t hash_cap;
    uint32_t *qi_row; /* query instance -> its row (nq entries): rows
                         follow the query's order, gone rows between */
} top_table;

void top_table_ref(top_table *t);
void top_table_unref(top_table *t);
static inline const char *top_row_name(const top_table *t, const top_row *r)
{
    return t->names + r->name_off;
}
/* The row of an instance key, or UINT32_MAX. */
uint32_t top_table_find(const top_table *t, uint64_t key);

/* The state of row r given its first value's status (a live row whose
 * provider did not answer is TOP_ROW_NOANSWER). */
static inline int top_row_state(const top_row *r, int first_status)
{
    if (r->state == TOP_ROW_LIVE && first_status == PCW_CSTATUS_PROVIDER_GONE)
        return TOP_ROW_NOANSWER;
    return r->state;
}

/* A provider that exited. */
typedef struct top_exit {
    int32_t pid;
    char name[64];
} top_exit;

typedef struct top_frame {
    uint64_t seq;     /* refresh number, from 1 */
    uint64_t mono_ns; /* CLOCK_MONOTONIC of the collection */
    uint64_t real_ns; /* CLOCK_REALTIME of the collection */
    uint64_t cost_ns; /* what the collection took: collect, providers, table */
    uint64_t interval_ns;
    int raw;        /* values are raw (PCW_FMT_RAW), not cooked */
    int advanced;   /* advanced counters are columns (top_model_set_advanced) */
    int containers; /* rows name their container: a CONTAINER column */
    int fused_col;  /* the column this collection converted as it read the
                       rows (the one the refresh before sorted by:
                       top_model_column gives it without reading them
                       again), or -1 */
    int ranked_col; /* the column this collection ranked as it read the
                       rows (pcw_pdh_collect_top: the first rows of the
                       order the refresh before showed; top_model_top
                       gives them), or -1 */
    size_t providers_live, providers_exited;
    top_exit *exits; /* providers that exited in this refresh */
    size_t nexits, exits_cap;
    top_setinfo *sets; /* sorted by name */
    size_t nsets, sets_cap;
    char *set_name; /* the counterset shown, or NULL */
    int set_index;  /* in sets, -1 if none */
    uint32_t instance_type;
    int set_callback;
    top_table *table;          /* NULL when no counterset is shown */
    size_t failed;             /* providers whose part is missing */
    size_t born_now, gone_now; /* instances that came / went this refresh */
    char message[512];         /* why nothing is shown, or an error */
    char note[256];            /* a standing explanation of the table (totals
                                  of counters without an aggregate attribute),
                                  or "" */
    /* Replaying a log (top_model_open_log): where in it this frame is.
     * log: the frame is a logged sample; log_end: the log has no sample
     * after this one; log_again: the collection found the end of the log,
     * this is the last sample again; log_damaged: a damaged block ends the
     * readable log (the message names it at log_end); log_index: the sample
     * shown, from 0, of log_samples; the log's time range, wall-clock and
     * monotonic. */
    int log, log_end, log_again, log_damaged;
    uint64_t log_index, log_samples;
    uint64_t log_first_real_ns, log_last_real_ns;
    uint64_t log_first_ns, log_last_ns;
} top_frame;

/* ---- the model ------------------------------------------------------------- */

typedef struct top_model top_model;

/* Open over the providers the options name (NULL: the defaults). */
int top_model_open(top_model **out, const pcw_consumer_options *opt);
void top_model_close(top_model *m);

/* Open over pcw logs instead (pcwtop --replay: pcw_pdh_open_log, read as
 * one log in the order given): each collection reads the next logged
 * sample, cooked as it was live; the counterset list is the log's. On
 * error a sentence naming the file goes into why. */
int top_model_open_log(top_model **out, const char *const *files, size_t nfiles, char *why,
                       size_t why_len);
/* A log model: the next collection shows sample `index` (from 0; past the
 * end: the last), cooked with the sample before it as it was live.
 * PCW_OK, PCW_E_INVALID_PARAMETER (not a log), or the log's read error. */
int top_model_seek(top_model *m, uint64_t index);
/* A log model: the log's mean time between samples (1 s when it holds
 * fewer than two). */
uint64_t top_model_log_interval(const top_model *m);
/* A log model: column k of row r at every logged sample, over the whole
 * log (the graph's span): v[i], i in [0, n), is the value of the last
 * sample whose time falls at i / (n - 1) of the log's time range, NaN where
 * none does. Reads the log once (O(its size)) with a query of its own, so
 * the replay's position does not move. PCW_OK or an error. */
int top_model_log_span(top_model *m, const top_row *r, uint32_t k, double *v, size_t n);
/* ...the first sample at or after wall-clock time real_ns (the first
 * sample for a time before the log, the last for one after it). */
int top_model_seek_time(top_model *m, uint64_t real_ns);

/* Show counterset `name` from the next collection on (NULL: none; then,
 * with want_first, the first counterset there is by name - which stays
 * shown while it exists). The name compares case-insensitively; a
 * counterset nobody publishes yet is waited for (the message says so). */
void top_model_want(top_model *m, const char *name, int want_first);
/* Raw values (PCW_FMT_RAW) instead of cooked ones, from now on. */
void top_model_set_raw(top_model *m, int raw);
/* Whether a collection converts the column the last refresh sorted by
 * while it reads the rows (pcw_pdh_collect_column; the default, 1), or
 * leaves it to top_model_column to cook after the read (0: what pcwtop
 * did before; the benchmark and the tests compare the two). */
void top_model_set_fused(top_model *m, int fused);
/* Advanced counters (detail level above standard) as columns too, from the
 * next collection on; perfmon hides them unless asked, and so does
 * pcwtop by default (pcw_pdh_set_detail). */
void top_model_set_advanced(top_model *m, int advanced);
/* Show only this container's instances (--container), selected by the
 * query itself: the counterset's path is \\<name>\Set(*)\* (docs/containers.md,
 * "Paths"), so that a name of no container or of two is the path's error,
 * and the totals are the container's. `name` is taken only if a path's
 * host part can name a container with it (12 to 64 hex digits of its id,
 * or ns:<inode>); returns 1 then, 0 for any other (pcwtop's row filter
 * selects those: "host", a shorter prefix). */
int top_model_set_container(top_model *m, const char *name);

/* Collect one sample. Returns PCW_OK, or an error (the frame's message
 * says it; its table is then NULL). interval_ns is only recorded. */
int top_model_collect(top_model *m, uint64_t interval_ns);
/* What the last collection found. */
const top_frame *top_model_frame(const top_model *m);

/* The values of row r (the table's ncols) in the last collection, cooked
 * or raw: v[k] and st[k] (pcw_cstatus). A gone row has none
 * (PCW_CSTATUS_NO_INSTANCE); a row whose provider did not answer,
 * PCW_CSTATUS_PROVIDER_GONE. */
void top_model_row_values(top_model *m, const top_row *r, double *v, uint8_t *st);
/* Column k of every query instance (instance qi is (*v)[qi]) in the last
 * collection, cooked in one pass and kept until the next collection or
 * raw/cooked switch. PCW_OK, PCW_E_NO_MEMORY or PCW_E_INVALID_PARAMETER. */
int top_model_column(top_model *m, uint32_t k, const double **v, const uint8_t **st);
/* top_model_column for a window top_model_top could not give this time:
 * the same, but the next collection is not asked to convert the column
 * (it ranks it instead, as top_model_top asked). */
int top_model_column_once(top_model *m, uint32_t k, const double **v, const uint8_t **st);
/* The first instances of column k in order (largest first when desc),
 * ties by query index, instances without a valid value left out, as the
 * last collection ranked them (pcw_pdh_collect_top: converted and ranked
 * as it read the rows, the column never materialised): *list holds *n of
 * them, the first *n of the whole order (of every instance, totals
 * included). 0, or -1 when the last collection did not rank column k in
 * that direction for at least `want` rows below the totals (then use
 * top_model_column). Either way it asks the next collection to rank
 * column k (direction desc) for `want` rows (the most asked of a
 * refresh, with room to scroll) unless top_model_column asked for the
 * whole column. Valid until the next collection. */
int top_model_top(top_model *m, uint32_t k, int desc, size_t want, const pcw_pdh_ranked **list,
                  size_t *n);
/* The interval's distribution behind column k (a histogram statistic) of
 * row r in the last collection (pcw_pdh_get_histogram): out->buckets is
 * valid until the next call or collection. PCW_OK (out->status says
 * whether there is one) or PCW_E_INVALID_PARAMETER (not a histogram
 * column, a gone row, a table that does not line up). */
int top_model_histogram(top_model *m, const top_row *r, uint32_t k, pcw_hist_dist *out);

/* ---- the view (view.c) ------------------------------------------------------ */

/* Sort columns beyond the counters (0..ncols-1). */
enum {
    TOP_SORT_NONE = -1, /* the query's order: totals, then provider by
                           provider, each provider's instances by id */
    TOP_SORT_NAME = -2,
    TOP_SORT_PID = -3,
};

typedef struct top_view {
    /* The viewer's choices. */
    char filter[256];   /* wildcard ('*', '?'); without one, a substring */
    int sort;           /* TOP_SORT_* or a counter column */
    int reverse;        /* the other direction than the column's default */
    int totals;         /* show _Total rows */
    char container[80]; /* only instances of this container (--container,
                           tc_name_match); "" all */
    /* What was computed (private: view.c). */
    uint64_t f_table;   /* the filtered list is for this table id... */
    char f_filter[256]; /* ...and filter */
    int f_totals;
    uint32_t *filtered;    /* instance rows passing, in table order */
    uint32_t *filtered_qi; /* their query indexes (the sort column's) */
    size_t nfiltered, filtered_cap, filtered_qi_cap;
    int qi_contig; /* filtered_qi[i] is filtered_qi[0] + i */
    uint32_t *shown_totals;
    size_t nshown_totals, shown_totals_cap;
    uint64_t k_seq, k_table;      /* the order is for this refresh, table... */
    int k_sort, k_reverse, k_raw; /* ...sort and values */
    int k_valid;
    void *keys;            /* sort keys (view.c) */
    size_t keys_cap;       /* in bytes */
    size_t nkeys;          /* keys held: the top sel_hi, or all */
    int all_keys;          /* every filtered row is in keys (quickselect) */
    size_t sel_lo, sel_hi; /* keys[sel_lo, sel_hi) are in final order */
} top_view;

void view_init(top_view *v);
void view_free(top_view *v);

/* How many rows the view has (shown totals + filtered instances). */
size_t view_count(top_view *v, top_model *m);
/* Rows [first, first + n) in display order into rows[] (table row
 * indexes); returns how many there are. */
size_t view_rows(top_view *v, top_model *m, size_t first, size_t n, uint32_t *rows);

/* The sort column a name means: a counter's name (case-insensitive),
 * "name" / "instance", "pid", "none". 0, or -1 if there is none such. */
int view_parse_sort(const top_frame *f, const char *name, int *sort);
/* "-s" (a column's name, '+' or '-' in front: descending or ascending,
 * else the column's default) into *sort and *reverse: 0, or -1 (unknown
 * column: *why lists the columns there are). */
int view_parse_sort_spec(const top_frame *f, const char *spec, int *sort, int *reverse, char *why,
                         size_t len);
/* Does filter `pattern` match a name? ('*' and '?' wildcards,
 * case-insensitive; a pattern without them matches as a substring.) */
int view_filter_match(const char *pattern, const char *name, size_t len);

#endif /* PCWTOP_MODEL_H */
