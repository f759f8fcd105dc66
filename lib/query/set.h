/* SPDX-License-Identifier: MIT */
/*
 * lib/query/set.h - the state the query keeps per counterset it
 * references (pcw__q_set) and the records it is made of: the sources of a
 * sample, the instances, their name groups, the totals. Written by the
 * module that owns each part (the comments say which), read by the rest.
 *
 * Everything here belongs to one thread at a time, as the pcw_pdh that
 * owns it.
 */
#ifndef PCW_QUERY_SET_H
#define PCW_QUERY_SET_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregate.h"
#include "cook.h"
#include "pcw/collect.h"
#include "pcw/consumer.h"

/* Histograms cooked as read (hist_fused.h). */
typedef struct pcw__q_hpre pcw__q_hpre;

/* One provider's part of a fetched sample (fetch.c). */
typedef struct pcw__q_src {
    size_t first, count; /* its rows in the snapshot */
    uint32_t seg;        /* segment index in the consumer at fetch time */
    uint32_t reg_index;  /* its registration in that segment */
    uint32_t k;          /* its index in the merged counterset's sources */
    uint32_t mf;         /* ...in the collected subset (pcw__q_set.mf) */
    int32_t pid;
    uint64_t start_time;  /* the provider's start time (/proc, clock ticks) */
    uint64_t provider_id; /* identity of the provider */
    uint64_t time_ns;     /* CLOCK_MONOTONIC when it was read */
    uint64_t gen_before;  /* segment generation before the read (0: none) */
    uint64_t gen_after;   /* ...and after it */
    int status;           /* PCW_OK, or why its part is missing */
    int alive;            /* its provider still runs */
} pcw__q_src;

/* An instance the query knows (instances.c). Its identity is (provider,
 * id, name); `dup` is its #n, kept while it lives. */
typedef struct pcw__q_inst {
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
} pcw__q_inst;

/* Instances sharing a name (case-insensitively): their #n numbering. */
typedef struct pcw__q_group {
    uint64_t hash;
    char *name; /* as first seen */
    uint32_t name_len;
    uint32_t nlive, next; /* members; next never-used index */
    uint32_t agg;         /* its total (instanceAggregate sets) */
    uint32_t *freed;      /* min-heap of indexes given back */
    uint32_t nfreed;
    size_t freed_cap;
} pcw__q_group;

/* A total: _Total, the global aggregate, or one name's aggregate. */
typedef struct pcw__q_agg {
    char *name;       /* "_Total", "", or the instances' name */
    uint32_t kind;    /* PCW_PDH_TOTAL or PCW_PDH_AGGREGATE */
    uint32_t sources; /* live instances in it this time */
    uint32_t name_len;
    uint32_t nlive;    /* member instances (instanceAggregate) */
    pcw__q_acc *hist;  /* History: departed contributions [ncounters] */
    pcw__q_vacc *hval; /* ...and their values, for the fractions [ncounters] */
    uint8_t active;    /* shown: has members, or history */
    uint8_t had_row;   /* it had a row in the previous collection */
    uint8_t has_row;   /* ...and in this one */
} pcw__q_agg;

/* One counter of one total this collection, before the percent, scale
 * and flags are applied (totals.c computes it, values.c finishes it). */
typedef struct pcw__q_tval {
    double v;   /* the formula's result over the members */
    double raw; /* PCW_FMT_RAW: the aggregate of the values X, unrounded */
    uint8_t status, raw_status;
} pcw__q_tval;

/* What a value refers to: entries are [totals][instances], an instance's
 * entry its index in inst[], a total's its index in aggs[] | this bit. */
#define PCW__Q_ENT_AGG 0x80000000u

/* A set's instances: written by instances.c alone (pcw__q_map_instances,
 * pcw__q_instances_free), read by the modules that look up an entry's
 * rows, name or provider. */
typedef struct pcw__q_instances {
    pcw__q_inst *inst;
    size_t ninst, inst_cap;
    uint32_t *free_inst;
    size_t nfree;
    uint32_t *hash; /* key -> instance + 1, open addressing */
    size_t hash_cap;
    pcw__q_group *groups;
    size_t ngroups, groups_cap;
    uint32_t *ghash; /* group hash -> group + 1 */
    size_t ghash_cap;
    size_t nempty;   /* groups without members (compacted when many) */
    size_t nstale;   /* instances whose provider did not answer */
    uint32_t *order; /* instances in value order: provider by provider */
    size_t norder, order_cap;
    size_t nread;  /* order[0..nread): the instances read this time; the
                      stale ones (provider did not answer) follow */
    int in_order;  /* order[k] is snapshot row k for every k < nread */
    int identity;  /* every instance's prev_row == row (nothing changed) */
    int have_prev; /* a sample was mapped before this one */
} pcw__q_instances;

/* A set's entries, as match.c selects from them: written by match.c
 * (rebuilt when the set's epoch moved), emptied with the instances
 * (pcw__q_entries_free). */
typedef struct pcw__q_entries {
    uint32_t *ent; /* entries: totals (PCW__Q_ENT_AGG | index), then instances */
    size_t nent, ent_cap;
    uint64_t ent_epoch;
    /* The entries by (name, #n), for handles that name one instance
     * open addressing over pcw__q_ent_key, entry position + 1;
     * ent_key[e] is entry e's key. Built from ent when such a handle needs
     * it after the entries changed (nidx_epoch), so that naming an
     * instance costs O(1), not a scan of every entry. */
    uint32_t *nidx;
    uint64_t *ent_key;
    size_t nidx_cap, ent_key_cap;
    uint64_t nidx_epoch;
} pcw__q_entries;

static inline void pcw__q_entries_free(pcw__q_entries *e)
{
    free(e->ent), free(e->nidx), free(e->ent_key);
    memset(e, 0, sizeof *e);
}

/* A set's totals of the current sample and their scratch: written by
 * totals.c alone (pcw__q_totals, pcw__q_totals_free), read by rows.c and
 * hist_query.c (a total's row) and values.c (its value). */
typedef struct pcw__q_totals_state {
    pcw__q_acc *acc; /* scratch [nagg * ncounters] */
    size_t acc_cap;
    uint64_t *arow[2]; /* totals' raw rows, wide layout [nagg * ncounters] */
    uint8_t *ast[2];   /* their per-counter statuses */
    size_t arow_cap[2], ast_cap[2];
    uint64_t atime[2];
    pcw__q_tval *tval; /* totals' values this collection [nagg * ncounters] */
    pcw__q_vacc *vacc; /* scratch: their members' values [nagg * ncounters] */
    uint8_t *vst;      /* scratch: the first member status that was not VALID */
    uint8_t *tway;     /* scratch: how a member's value is had [ncounters] */
    size_t tval_cap, vacc_cap, vst_cap, tway_cap;
} pcw__q_totals_state;

/* One counterset the query references (by name). */
typedef struct pcw__q_set {
    char *name;
    const pcw_merged_counterset *m; /* NULL while nobody publishes it */
    /* Bound metadata (copies: they outlive consumer refreshes). */
    uint32_t ncounters, data_size, instance_type, flags;
    char **counter_names;
    uint32_t *counter_types;
    int32_t *default_scale;
    uint32_t *detail; /* detail levels (pcw_counter_in_wildcard) */
    pcw__q_recipe *recipes;
    uint32_t *aggfn;
    uint32_t *off, *woff;
    uint8_t *size, *wsize;
    uint32_t *counter_ids; /* to tell a re-registration with other counters */
    uint32_t *hshape;      /* PERF_PCW_HISTOGRAM: its shape; else 0 */
    pcw__q_itype it;
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
    pcw__q_src *src[2];
    size_t nsrc[2], src_cap[2];
    int cur;
    pcw__q_instances ins;   /* instances.c's */
    pcw__q_entries entries; /* match.c's */
    /* Totals. */
    pcw__q_agg *aggs;
    size_t nagg, agg_cap;
    uint32_t *agg_free; /* min-heap of slots given back (instanceAggregate) */
    uint32_t nagg_free;
    size_t agg_free_cap;
    pcw__q_totals_state tot; /* totals.c's */
    pcw__q_hpre *hpre;       /* histograms cooked as read (hist_fused.c); NULL: none */
    /* Bookkeeping. */
    uint64_t epoch;   /* bumps whenever the entries change */
    uint64_t src_sig; /* its providers when last bound (pcw__q_bind) */
    size_t refs;      /* matches that use it: fetched only when > 0 */
    /* Only the expansion in progress holds it: pcw_pdh_expand sets it,
     * pcw__q_fetch_new reads the set again, pcw_pdh_expand clears it. */
    int expand_only;
    /* Aggregate slots agg_new examined to find one to reuse: a count of
     * work, not API, that tests/test_query_cost.c holds to the cost model
     * (one name's aggregate costs the same whatever the set's size). */
    uint64_t agg_tests;
} pcw__q_set;

/* The snapshot fetch b read into. */
static inline const pcw_snapshot *pcw__q_snap(const pcw__q_set *s, int b)
{
    return &s->snap[s->two ? b : 0];
}

#endif /* PCW_QUERY_SET_H */
