/* SPDX-License-Identifier: MIT */
/*
 * lib/query/internal.h - the query layer's private structures and helpers
 * (pcw/query.h is the public side).
 *
 *   path.c       path grammar, errors, this machine's name
 *   cook.c       formulas (pcw_cook), raw samples from rows (recipes)
 *   aggregate.c  sum/avg/min/max of raw values and of values, with history
 *   totals.c     the totals of a sample: raw rows and values
 *
 * Everything here belongs to one thread at a time, as the pcw_pdh that
 * owns it.
 */
#ifndef PCW_QUERY_INTERNAL_H
#define PCW_QUERY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/query.h"

/* pcw's system time base: CLOCK_MONOTONIC nanoseconds. */
#define PCWQ_SYS_FREQ   1000000000ull
#define PCWQ_100NS_FREQ 10000000ull

/* ---- path.c ------------------------------------------------------------- */

/* Fill *err (may be NULL) and return status. */
int pcwq_fail(pcw_path_error *err, int status, int part, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void pcwq_path_error_clear(pcw_path_error *err);
/* Does an instance pattern (a path's instance part without #n) match an
 * instance name (len bytes)? A pattern with a '/' is PDH's
 * "parent/instance": each side matches its side of the name split at the
 * name's first '/' (a name without one has no parent and does not match),
 * so a wildcard never reaches across the parent's '/'. A pattern without
 * '/' matches the whole name: (*) is every instance, parent or not. */
int pcwq_instance_match(const char *pat, const char *name, size_t len);
/* What a path's host part (n bytes) names: this machine (".", "localhost",
 * its host name: every provider the query finds, as always), every
 * provider ("*", the same set, said explicitly), or a container (12 to 64
 * hex digits of its id, or "ns:<inode>"); -1 none of them. */
enum { PCWQ_HOST_LOCAL = 0, PCWQ_HOST_ANY = 1, PCWQ_HOST_CONTAINER = 2 };
int pcwq_host_kind(const char *h, size_t n);

/* ---- cook.c ------------------------------------------------------------- */

/* The formula families of pcw_cook. */
enum {
    PCWQ_F_NONE = 0,      /* no displayable value */
    PCWQ_F_RAW,           /* X */
    PCWQ_F_RAW_FRACTION,  /* X / B */
    PCWQ_F_ELAPSED,       /* (Y - X) / TB */
    PCWQ_F_RATE,          /* (X1 - X0) / ((Y1 - Y0) / TB) */
    PCWQ_F_DELTA,         /* X1 - X0 */
    PCWQ_F_RATIO,         /* (X1 - X0) / (Y1 - Y0) */
    PCWQ_F_AVERAGE_TIMER, /* ((X1 - X0) / TB) / (B1 - B0) */
    PCWQ_F_INVERSE,       /* 1 - (X1 - X0) / (Y1 - Y0) */
    PCWQ_F_MULTI,         /* ((X1 - X0) / (Y1 - Y0)) / B1 */
    PCWQ_F_MULTI_INV,     /* (B1 - (X1 - X0) / (Y1 - Y0)) / B1 */
};
int pcwq_formula(uint32_t type);
double pcwq_pow10(int32_t e);
/* Formula family f (PCWQ_F_*) on now and prev (NULL: none), before the
 * percent, cap, scale and x1000 of pcw_cook: the value is *part / *whole,
 * where whole is the base (B, B1 - B0, the multi count, Y1 - Y0 of a ratio)
 * and 1 for a formula that is not a fraction. A total pools parts and
 * wholes (totals.c). Returns the pcw_cstatus; now->status is not looked at. */
int pcwq_cook_parts(int f, const pcw_raw *now, const pcw_raw *prev, double *part, double *whole);
/* pcw_cook's last step: x100 and cap for a percentage, 10^scale, x1000. */
int pcwq_finish(uint32_t type, double v, int32_t scale, unsigned flags, double *value);
/* pcwq_finish after its x100: the cap, 10^scale, x1000 (a logged total's
 * value, lib/history/cook.c, is finished with it). */
int pcwq_finish_percent(uint32_t type, double v, int32_t scale, unsigned flags, double *value);

/* Where a sample's denominator ("second") comes from. */
enum {
    PCWQ_Y_NONE = 0,
    PCWQ_Y_SYSTIME, /* the read's CLOCK_MONOTONIC ns */
    PCWQ_Y_100NS,   /* the same / 100 */
    PCWQ_Y_COUNTER, /* the perf_time_id counter (object time) */
    PCWQ_Y_BASE,    /* the base counter */
};

/* How to make a pcw_raw for one counter from a row of values. */
typedef struct pcwq_recipe {
    uint32_t type;
    uint8_t formula; /* PCWQ_F_* */
    uint8_t second;  /* PCWQ_Y_* */
    int status;      /* PCW_CSTATUS_VALID, or NO_BASE when a reference is missing */
    int32_t value, base, multi, time, freq_ctr; /* counter indexes; -1 = none */
    uint64_t freq;                              /* constant TB when freq_ctr < 0 */
} pcwq_recipe;
void pcwq_recipe_build(const pcw_counterset *cs, uint32_t k, pcwq_recipe *r);

/* Where counter k sits in a row: byte offset and size (4 or 8). The
 * snapshot's rows use the counterset's layout; totals use a "wide" one,
 * every counter 8 bytes at 8 * k, since a sum of 4-byte values needs 8. */
typedef struct pcwq_layout {
    const uint32_t *off;
    const uint8_t *size;
} pcwq_layout;

static inline uint64_t pcwq_load(const unsigned char *row, const pcwq_layout *l, uint32_t k)
{
    const unsigned char *p = row + l->off[k];
    if (l->size[k] == 8)
        return *(const uint64_t *)(const void *)p;
    return *(const uint32_t *)(const void *)p;
}

void pcwq_raw_from_row(const pcwq_recipe *r, const unsigned char *row, const pcwq_layout *lay,
                       uint64_t time_ns, pcw_raw *out);

/* ---- histogram.c --------------------------------------------------------- */

/* The statistics a bare histogram name (or a wildcard) selects, in order:
 * rate mean p50 p90 p99 p99.9 max. */
#define PCWQ_HIST_NDEFAULT 7
extern const pcw_hist_stat pcwq_hist_defaults[PCWQ_HIST_NDEFAULT];
/* How the counter part `pat` (with wildcards when `wild`) selects the
 * counter `name` of `type`: 0 not at all; 1 as itself (st[0].kind 0: not
 * a histogram) or one statistic of a histogram ("Latency:p99", st[0]);
 * PCWQ_HIST_NDEFAULT, the default statistics of a histogram the whole
 * pattern names (st[PCWQ_HIST_NDEFAULT]). The whole name is tried first,
 * so a counter named "a:max" is itself. *bad_stat (may be NULL) is set
 * when the pattern names the histogram but what follows ':' is no
 * statistic. */
int pcwq_hist_select(const char *pat, int wild, const char *name, uint32_t type, pcw_hist_stat *st,
                     int *bad_stat);
/* Where a distribution's non-empty buckets lie: every bucket below lo and
 * from hi on is empty (lo = nbuckets, hi = 0: all are). The statistics
 * look at [lo, hi) only: a p99 or a max does not walk the empty top of
 * the range, nor a p50 its empty bottom. */
typedef struct pcwq_hspan {
    uint32_t lo, hi;
} pcwq_hspan;
/* The distribution between two copies of a histogram's words (prev NULL:
 * now as it stands) into d, its buckets into `buckets` (nbuckets of the
 * shape) and where they are non-empty into sp: RESET if a bucket went
 * down, OVERFLOW if the count does not fit 64 bits. Returns d->status. */
int pcwq_hist_interval(uint32_t shape, const uint64_t *now, const uint64_t *prev, uint64_t *buckets,
                       pcw_hist_dist *d, pcwq_hspan *sp);
/* pcw_hist_cook of a distribution the query made (shape, count and span
 * trusted: pcwq_hist_interval's, pcwq_hist_add's). */
int pcwq_hist_cook(const pcw_hist_dist *d, const pcwq_hspan *sp, const pcw_hist_stat *st,
                   double *value);
/* n (at most PCWQ_HIST_COOK_MANY) statistics of one distribution, each
 * into v[i] and its status into rc[i]: pcwq_hist_cook's numbers, from one
 * walk up the buckets for all the quantiles and one sum check. */
#define PCWQ_HIST_COOK_MANY 16
void pcwq_hist_cook_many(const pcw_hist_dist *d, const pcwq_hspan *sp, const pcw_hist_stat *st,
                         uint32_t n, double *v, int *rc);
/* acc += d (same shape; acc's buckets are acc_buckets, writable, its span
 * acc_sp; d's span dsp): VALID or OVERFLOW (a bucket or the count
 * wrapped). */
int pcwq_hist_add(pcw_hist_dist *acc, uint64_t *acc_buckets, pcwq_hspan *acc_sp,
                  const pcw_hist_dist *d, const pcwq_hspan *dsp);

/* ---- hist_fused.c -------------------------------------------------------- */

/* Histograms' statistics cooked as the rows are read: the (counter,
 * statistic) pairs of a set the query's handles select, at most this many
 * (the rest are cooked after the collection). Like the rest of a set, a
 * pcwq_hpre belongs to the query: used by one thread at a time (the
 * read's run callback runs on the collecting thread), no atomics. */
#define PCWQ_HPRE_MAX 16
typedef struct pcwq_hpre_sum {
    uint64_t count; /* the interval's observations */
    uint8_t status; /* its distribution's status */
} pcwq_hpre_sum;
typedef struct pcwq_hpre_cell {
    double v;
    uint8_t status;
} pcwq_hpre_cell;
typedef struct pcwq_hpre {
    uint64_t gen; /* rows stamped with it were cooked by the set's last read */
    uint32_t nk, nplan;
    uint32_t ks[PCWQ_HPRE_MAX];        /* the histogram counters cooked */
    pcw_hist_stat plan[PCWQ_HPRE_MAX]; /* and their statistics (not rate/count) */
    uint32_t plan_k[PCWQ_HPRE_MAX];
    uint64_t *stamp;      /* [rows] gen when row r was cooked (this read's
                             rows are all stamped: gen or 0) */
    pcwq_hpre_sum *sum;   /* [rows][nk] by ks */
    pcwq_hpre_cell *cell; /* [rows][nplan] by plan */
    size_t stamp_cap, sum_cap, cell_cap;
    uint64_t *scratch; /* one interval's buckets */
    uint32_t scratch_cap;
    /* During a read. */
    const struct pcwq_set *set;
    size_t next; /* the next row expected */
    int abort, active;
} pcwq_hpre;
void pcwq_hpre_free(pcwq_hpre *p);

/* ---- aggregate.c -------------------------------------------------------- */

/* An accumulator of raw values for one counter of one total. */
typedef struct pcwq_acc {
    uint64_t sum, min, max, n;
    uint32_t overflow; /* sum wrapped */
} pcwq_acc;

void pcwq_acc_reset(pcwq_acc *a);
void pcwq_acc_add(pcwq_acc *a, uint64_t v);
/* a += b (history folded into a live total). */
void pcwq_acc_merge(pcwq_acc *a, const pcwq_acc *b);
/* The total of `fn` (pcw_aggregate) over what a holds: PCW_CSTATUS_VALID
 * and *out, or NOT_AGGREGATED (fn undefined), OVERFLOW (the sum wrapped),
 * NO_INSTANCE (average, minimum or maximum of nothing). The average is
 * rounded to the nearest integer: it is the raw sample shown
 * (pcw_pdh_value.raw), never what a value is computed from (pcwq_tval). */
int pcwq_acc_result(const pcwq_acc *a, uint32_t fn, uint64_t *out);

/* What a total makes of its members' values of one counter (totals.c):
 * each member's formula as part / whole (pcwq_cook_parts), summed, and
 * the values part / whole summed, with their minimum and maximum. */
typedef struct pcwq_vacc {
    double part, whole;   /* sums of the members' parts and wholes */
    double sum, min, max; /* of the members' values part / whole */
    uint64_t n;           /* members counted */
} pcwq_vacc;

void pcwq_vacc_reset(pcwq_vacc *a);
/* (Inline: a total adds one per member and counter.) */
static inline void pcwq_vacc_add(pcwq_vacc *a, double part, double whole)
{
    double v = part / whole;
    a->part += part, a->whole += whole, a->sum += v;
    if (v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
    a->n++;
}
void pcwq_vacc_merge(pcwq_vacc *a, const pcwq_vacc *b);
/* The total of `fn` over what a holds (n > 0): sum - pooled, the sum of
 * the parts over the sum of the wholes (ZERO_DENOMINATOR when that is 0),
 * or else the sum of the values -, avg, min or max of the values. */
int pcwq_vacc_result(const pcwq_vacc *a, uint32_t fn, int pooled, double *out);

/* The aggregate function each counter of cs is totalled with: its own
 * attribute, or - when that is undefined - the function of a counter that
 * uses it as base or multi count, or "max" for a time or frequency
 * counter (perf_time_id / perf_freq_id). fn[cs->counter_count]. */
void pcwq_aggregate_functions(const pcw_counterset *cs, uint32_t *fn);

/* What a counterset's instance type means for the query. */
typedef struct pcwq_itype {
    uint8_t named;   /* instances have names (paths need "(instance)") */
    uint8_t total;   /* a _Total over every instance */
    uint8_t global;  /* every instance combined into one, unnamed */
    uint8_t by_name; /* instances of one name combined */
    uint8_t history; /* totals keep departed instances' contributions */
    uint8_t known;   /* a type this layer understands */
} pcwq_itype;
pcwq_itype pcwq_instance_type(uint32_t instance_type);

/* ---- the query's state ------------------------------------------------- */

#include "pcw/collect.h"

/* One provider's part of a fetched sample (fetch.c). */
typedef struct pcwq_src {
    size_t first, count; /* its rows in the snapshot */
    uint32_t seg;        /* segment index in the consumer at fetch time */
    uint32_t reg_index;  /* its registration in that segment */
    uint32_t k;          /* its index in the merged counterset's sources */
    uint32_t mf;         /* ...in the collected subset (pcwq_set.mf) */
    int32_t pid;
    uint64_t start_time;  /* the provider's start time (/proc, clock ticks) */
    uint64_t provider_id; /* identity of the provider */
    uint64_t time_ns;     /* CLOCK_MONOTONIC when it was read */
    uint64_t gen_before;  /* segment generation before the read (0: none) */
    uint64_t gen_after;   /* ...and after it */
    int status;           /* PCW_OK, or why its part is missing */
    int alive;            /* its provider still runs */
} pcwq_src;

/* An instance the query knows (instances.c). Its identity is (provider,
 * id, name); `dup` is its #n, kept while it lives. */
typedef struct pcwq_inst {
    uint64_t provider_id;
    uint64_t key; /* hash of (provider_id, id, name) */
    uint32_t id;
    int32_t pid;
    char *name; /* as published; NUL-terminated */
    char *disp; /* "name" or "name#n" */
    uint32_t name_len;
    uint32_t dup;
    uint32_t group;        /* its name group (dup numbering) */
    uint32_t agg;          /* its aggregate (instanceAggregate); else 0 */
    int32_t row, prev_row; /* in the current / previous snapshot; -1 none */
    int32_t src, prev_src; /* source index in the current / previous fetch */
    uint32_t seen;         /* collection number it was last read in */
    uint8_t live;          /* slot in use */
    uint8_t stale;         /* its provider's part is missing this time */
    unsigned char *last;   /* History sets: its last raw row (data_size) */
} pcwq_inst;

/* Instances sharing a name (case-insensitively): their #n numbering. */
typedef struct pcwq_group {
    uint64_t hash;
    char *name; /* as first seen */
    uint32_t name_len;
    uint32_t nlive, next; /* members; next never-used index */
    uint32_t agg;         /* its total (instanceAggregate sets) */
    uint32_t *freed;      /* min-heap of indexes given back */
    uint32_t nfreed;
    size_t freed_cap;
} pcwq_group;

/* A total: _Total, the global aggregate, or one name's aggregate. */
typedef struct pcwq_agg {
    char *name;       /* "_Total", "", or the instances' name */
    uint32_t kind;    /* PCW_PDH_TOTAL or PCW_PDH_AGGREGATE */
    uint32_t sources; /* live instances in it this time */
    uint32_t name_len;
    uint32_t nlive;  /* member instances (instanceAggregate) */
    pcwq_acc *hist;  /* History: departed contributions [ncounters] */
    pcwq_vacc *hval; /* ...and their values, for the fractions [ncounters] */
    uint8_t active;  /* shown: has members, or history */
    uint8_t had_row; /* it had a row in the previous collection */
    uint8_t has_row; /* ...and in this one */
} pcwq_agg;

/* One counter of one total this collection, before the percent, scale
 * and flags are applied (totals.c computes it, values.c finishes it). */
typedef struct pcwq_tval {
    double v;   /* the formula's result over the members */
    double raw; /* PCW_FMT_RAW: the aggregate of the values X, unrounded */
    uint8_t status, raw_status;
} pcwq_tval;

/* What a value refers to: entries are [totals][instances], an instance's
 * entry its index in inst[], a total's its index in aggs[] | this bit. */
#define PCWQ_ENT_AGG 0x80000000u

/* One counterset the query references (by name). */
typedef struct pcwq_set {
    char *name;
    const pcw_merged_counterset *m; /* NULL while nobody publishes it */
    /* Bound metadata (copies: they outlive consumer refreshes). */
    uint32_t ncounters, data_size, instance_type, flags;
    char **counter_names;
    uint32_t *counter_types;
    int32_t *default_scale;
    uint32_t *detail; /* detail levels (pcw_counter_in_wildcard) */
    pcwq_recipe *recipes;
    uint32_t *aggfn;
    uint32_t *off, *woff;
    uint8_t *size, *wsize;
    uint32_t *counter_ids; /* to tell a re-registration with other counters */
    uint32_t *hshape;      /* PERF_PCW_HISTOGRAM: its shape; else 0 */
    pcwq_itype it;
    int callback; /* collected over the control channel */
    /* The sources read this time (alive providers only). */
    pcw_merged_counterset mf;
    uint32_t *mf_seg;
    const pcw_counterset **mf_cset;
    size_t mf_cap;
    int *mf_status; /* each collected source's status */
    size_t mf_status_cap;
    pcw_collect_report rep;
    /* Two snapshots, current and previous, and their sources. A set none
     * of whose counters compares two samples (two = 0) reads into snap[0]
     * every time: the buffer stays warm in the cache. */
    pcw_snapshot snap[2];
    int two;
    uint32_t busy[2]; /* snap's busy count of each fetch */
    pcwq_src *src[2];
    size_t nsrc[2], src_cap[2];
    int cur;
    uint32_t *order; /* instances in value order: provider by provider */
    size_t norder, order_cap;
    size_t nread;  /* order[0..nread): the instances read this time; the
                      stale ones (provider did not answer) follow */
    int in_order;  /* order[k] is snapshot row k for every k < nread */
    uint32_t *ent; /* entries: totals (PCWQ_ENT_AGG | index), then instances */
    size_t nent, ent_cap;
    uint64_t ent_epoch;
    /* The entries by (name, #n), for handles that name one instance
     * (values.c): open addressing over pcwq_ent_key, entry position + 1;
     * ent_key[e] is entry e's key. Built from ent when such a handle needs
     * it after the entries changed (nidx_epoch), so that naming an
     * instance costs O(1), not a scan of every entry. */
    uint32_t *nidx;
    uint64_t *ent_key;
    size_t nidx_cap, ent_key_cap;
    uint64_t nidx_epoch;
    int identity; /* every instance's prev_row == row (nothing changed) */
    int have_prev;
    /* Instances. */
    pcwq_inst *inst;
    size_t ninst, inst_cap;
    uint32_t *free_inst;
    size_t nfree;
    uint32_t *hash; /* key -> instance + 1, open addressing */
    size_t hash_cap;
    pcwq_group *groups;
    size_t ngroups, groups_cap;
    uint32_t *ghash; /* group hash -> group + 1 */
    size_t ghash_cap;
    size_t nempty; /* groups without members (compacted when many) */
    size_t nstale; /* instances whose provider did not answer */
    /* Totals. */
    pcwq_agg *aggs;
    size_t nagg, agg_cap;
    uint32_t *agg_free; /* min-heap of slots given back (instanceAggregate) */
    uint32_t nagg_free;
    size_t agg_free_cap;
    pcwq_acc *acc; /* scratch [nagg * ncounters] */
    size_t acc_cap;
    uint64_t *arow[2]; /* totals' raw rows, wide layout [nagg * ncounters] */
    uint8_t *ast[2];   /* their per-counter statuses */
    size_t arow_cap[2], ast_cap[2];
    uint64_t atime[2];
    pcwq_tval *tval; /* totals' values this collection [nagg * ncounters] */
    pcwq_vacc *vacc; /* scratch: their members' values [nagg * ncounters] */
    uint8_t *vst;    /* scratch: the first member status that was not VALID */
    uint8_t *tway;   /* scratch: how a member's value is had [ncounters] */
    size_t tval_cap, vacc_cap, vst_cap, tway_cap;
    pcwq_hpre *hpre; /* histograms cooked as read (hist_fused.c); NULL: none */
    /* Bookkeeping. */
    uint64_t epoch;   /* bumps whenever the entries change */
    uint64_t src_sig; /* its providers when last bound (pcwq_bind) */
    size_t refs;      /* matches that use it: fetched only when > 0 */
    /* Aggregate slots agg_new examined to find one to reuse: a count of
     * work, not API, that tests/test_query_cost.c holds to the cost model
     * (one name's aggregate costs the same whatever the set's size). */
    uint64_t agg_tests;
} pcwq_set;

/* One counterset a counter handle matches, and what it selects there. */
typedef struct pcwq_match {
    pcwq_set *set;
    uint32_t *ctr; /* selected counter indexes: the columns */
    uint32_t nctr;
    /* Per column: the histogram statistic (kind 0: not a histogram) and
     * its name, "Latency:p99" (NULL: not a histogram; the counter's). A
     * histogram's statistics are consecutive columns of the same k. */
    pcw_hist_stat *hst;
    char **cname;
    uint32_t *ents; /* selected entries; NULL with all = 1 */
    size_t nents, ents_cap;
    int all;         /* every entry (an instance part of "*") */
    uint64_t epoch;  /* of the set when ents was computed */
    int placeholder; /* one missing-instance value (named instance absent) */
    int placeholder_status;
    uint64_t last_provider; /* provider of the instance last matched */
    /* Providers told ADD_COUNTER for this match (notify.c). */
    uint64_t *told;
    size_t ntold, told_cap;
} pcwq_match;

/* The last distribution a handle computed (hist_query.c): a value's
 * statistics, cooked one after the other, share it, and
 * pcw_pdh_get_histogram hands out its buckets. */
typedef struct pcwq_hcache {
    int have;
    uint64_t collections, epoch; /* of the query and set it was made in */
    const void *set;
    uint32_t e, k, cumulative;
    pcw_hist_dist d;
    pcwq_hspan sp;       /* d's non-empty buckets */
    uint64_t *buf, *tmp; /* d's buckets; a member's (totals) */
    size_t cap;
} pcwq_hcache;

struct pcw_pdh_counter {
    pcw_pdh *q;
    pcwq_hcache *hc; /* made when a match selects a histogram */
    char *text;
    pcw_path path;
    int32_t scale;
    int scale_set;
    uint32_t detail; /* the query's detail level when it was added */
    pcwq_match *m;
    size_t nm, m_cap;
    uint64_t epoch; /* pcw_pdh_instance_epoch: +1 whenever a match's
                       entries or counters are selected again */
    /* The container its path's host names (path.container), resolved when
     * it was added (container.c): its full id, or "" and its mount
     * namespace for one no runtime named. */
    char ctr_id[65];
    uint64_t ctr_ns;
    struct pcwl_sel *lsel; /* a log query's handle (logsource.h); NULL live */
};

/* A collection that hands one handle's rows over as it reads them
 * (pcw_pdh_collect_rows, values.c); the fetch sees it through q->fused. */
typedef struct pcwq_fused pcwq_fused;

struct pcw_pdh {
    pcw_consumer *c;
    char *root;
    int all_users;
    pcwq_set **sets;
    size_t nsets, sets_cap;
    pcw_pdh_counter **ctrs;
    size_t nctrs, ctrs_cap;
    uint64_t time_ns, realtime_ns, collections;
    /* Change detection (fetch.c). */
    char **dirs;
    uint64_t *dir_stamp;
    size_t ndirs;
    uint64_t root_stamp;
    int refreshed; /* the consumer was refreshed at least once */
    /* The collection's items (fetch.c), kept to allocate nothing. */
    pcw_collect_item *items;
    size_t items_cap;
    /* The time limit of one collect, add or remove (pcw_pdh_set_timeout)
     * and, during one, its deadline (CLOCK_MONOTONIC ns; 0 outside). */
    uint32_t timeout_ms;
    uint64_t deadline_ns;
    /* pcw_pdh_set_detail: what wildcard counter parts select. */
    uint32_t detail;
    uint64_t notify_deadline_ns; /* ADD/REMOVE_COUNTER answers: not past it */
    /* During pcw_pdh_collect_rows only: the set whose rows it hands over
     * as they are read (NULL otherwise). */
    pcwq_fused *fused;
    /* pcw_pdh_collect_rows' conversion buffer (a run of rows as doubles,
     * lib/consumer/read_hook.h), kept to allocate nothing; 64-aligned. */
    double *cvt;
    size_t cvt_cap;
    /* Entries the handles' matches examined (pcwq_match_update): a count
     * of work, not API, that tests/test_query_cost.c holds to the cost
     * model (linear set-up and churn). */
    uint64_t entry_tests;
    struct pcwl_log *log; /* pcw_pdh_open_log's source (logsource.h); NULL live */
};

/* The snapshot fetch b read into. */
static inline const pcw_snapshot *pcwq_snap(const pcwq_set *s, int b)
{
    return &s->snap[s->two ? b : 0];
}

/* values.c: the fetch's side of pcw_pdh_collect_rows. Whether f hands
 * over s's rows; the read of one source of s, appended to snap (as
 * pcw_segment_read; gen: its segment's generation at the previous
 * sample), that hands each run of rows over as it is read
 * (lib/consumer/read_hook.h); and "this set's rows cannot be handed over
 * as they are read" (a read with names, a provider not read). */
int pcwq_fused_wants(const pcwq_fused *f, const pcwq_set *s);
int pcwq_fused_read(pcwq_fused *f, pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                    unsigned flags, uint64_t gen);
void pcwq_fused_abort(pcwq_fused *f);

/* fetch.c */
/* One time limit for everything a public call waits for: start sets the
 * deadline (now + timeout_ms); arm sets the consumer's limit to what is
 * left and returns 1, or returns 0 when less than a millisecond is left
 * (with `at_least_1ms`, it then sets 1 ms and returns 1: for requests that
 * must be sent); end restores the consumer's limit.
 *
 * Notifications (ADD/REMOVE_COUNTER, notify.c) wait for answers until the
 * notify deadline at most (arm_notify: at least 1 ms, they must be sent).
 * It is the deadline itself, unless the call collects after notifying
 * (pcw_pdh_collect), where it is half-way (start_collect): a provider that
 * does not answer its notifications must not leave the collection, and so
 * every other provider's answer, without time (issue 23, item 10). */
void pcwq_budget_start(pcw_pdh *q);
void pcwq_budget_start_collect(pcw_pdh *q);
int pcwq_budget_arm(pcw_pdh *q, int at_least_1ms);
void pcwq_budget_arm_notify(pcw_pdh *q);
void pcwq_budget_end(pcw_pdh *q);
int pcwq_refresh_if_changed(pcw_pdh *q, int force);
/* One sample of every referenced set into its snap[cur] (cur flipped). */
int pcwq_fetch(pcw_pdh *q);
/* The same, for the referenced sets that have no sample yet. */
int pcwq_fetch_new(pcw_pdh *q);
/* Can s keep last time's instance mapping? Only if every provider read
 * now is the one read last time, in the same place, with the same row
 * count, and its segment's instance list did not change from before the
 * last read to after this one (generations only grow). */
int pcwq_unchanged(const pcwq_set *s);
uint64_t pcwq_provider_id(const pcw_provider_info *info);
int pcwq_bind(pcw_pdh *q, pcwq_set *s);
void pcwq_set_free(pcwq_set *s);
pcwq_set *pcwq_set_get(pcw_pdh *q, const char *name, int create);

/* instances.c: map the current rows to instances; departures, #n. */
int pcwq_map_instances(pcwq_set *s, int fast);
void pcwq_instances_free(pcwq_set *s);
/* totals.c: the totals' raw rows and values of the current sample. */
int pcwq_totals(pcwq_set *s);
/* Whether s's totals pool counter k (sum of parts over sum of wholes: a
 * fraction of a base or multi count, summed) - else a total's value is
 * the function of its members' values. */
int pcwq_total_pools(const pcwq_set *s, uint32_t k);
/* A History total keeps the values of a member leaving with its last row. */
void pcwq_total_keep(pcwq_set *s, pcwq_agg *a, const unsigned char *last);
/* values.c: where entry e's current and previous raw values are. */
typedef struct pcwq_rows {
    const unsigned char *row, *prow; /* prow NULL: no previous sample */
    pcwq_layout lay;
    uint64_t t, pt;
    const uint8_t *st; /* totals: per-counter statuses */
    int status;        /* the row's absence, else VALID */
} pcwq_rows;
void pcwq_entry_rows(const pcwq_set *s, uint32_t e, pcwq_rows *w);
/* now and prev (prev->status says if there is one) of counter k. */
void pcwq_rows_raw(const pcwq_set *s, const pcwq_rows *w, uint32_t k, pcw_raw *now, pcw_raw *prev);
/* values.c */
size_t pcwq_entry_count(const pcwq_set *s);
int pcwq_counter_selected(const pcwq_set *s, const pcw_path *p, uint32_t level, uint32_t k,
                          pcw_hist_stat *st);
/* Free a match's columns (ctr, hst, cname). */
void pcwq_match_free(pcwq_match *mt);
int pcwq_match_update(pcw_pdh_counter *h, pcwq_match *mt);

/* ---- container.c -------------------------------------------------------- */

/* Resolve h->path.container to one container among the consumer's
 * providers (h->ctr_id, h->ctr_ns): PCW_OK, or PCW_E_NOT_FOUND (none) or
 * PCW_E_INVALID_NAME (a prefix of two containers' ids) with *err. */
int pcwq_container_resolve(pcw_pdh *q, pcw_pdh_counter *h, pcw_path_error *err);
/* Is the provider `provider_id` in h's container? *hint (start at 0)
 * remembers the last one's segment: entries come provider by provider. */
int pcwq_in_container(const pcw_pdh_counter *h, uint64_t provider_id, size_t *hint);
/* hist_query.c: the distribution of counter k (a histogram) of entry e
 * of s, in h's cache (NULL: out of memory); and value (e, k) as statistic
 * st, with `flags` (PCW_FMT_RAW: of the distribution since the start). */
const pcwq_hcache *pcwq_hist_entry(const pcw_pdh_counter *h, const pcwq_set *s, uint32_t e,
                                   uint32_t k, int cumulative);
int pcwq_hist_value(const pcw_pdh_counter *h, const pcwq_set *s, uint32_t e, uint32_t k,
                    const pcw_hist_stat *st, unsigned flags, double *v);
void pcwq_hcache_free(pcwq_hcache *hc);
/* hist_fused.c: before a read of s with `flags`, whether it cooks the
 * histograms of its handles as it reads (then read each source with
 * pcwq_hpre_read, and call pcwq_hpre_end after the last); after any read
 * of s, pcwq_hpre_end. pcwq_hpre_value: 1 and *v, *status when value
 * (e, k, st) was cooked as read, else 0. */
int pcwq_hpre_begin(const pcw_pdh *q, pcwq_set *s, unsigned flags);
int pcwq_hpre_read(pcwq_set *s, pcw_segment *seg, const pcw_counterset *cs, pcw_snapshot *snap,
                   unsigned flags);
void pcwq_hpre_end(pcwq_set *s);
int pcwq_hpre_value(const pcwq_set *s, uint32_t e, uint32_t k, const pcw_hist_stat *st,
                    unsigned flags, double *v, int *status);
/* notify.c */
void pcwq_notify(pcw_pdh *q, pcw_pdh_counter *h, pcwq_match *mt, int add);
void pcwq_notify_forget(pcwq_match *mt);

/* Grow an array to hold `need` elements; 0 or -1. */
int pcwq_grow(void **v, size_t *cap, size_t need, size_t elem);

#endif /* PCW_QUERY_INTERNAL_H */
