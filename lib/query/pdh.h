/* SPDX-License-Identifier: MIT */
/*
 * lib/query/pdh.h - the query object (struct pcw_pdh), its counter
 * handles (struct pcw_pdh_counter, opaque in pcw/pdh.h) and what a
 * handle selects in each counterset (pcw__q_match). query.c owns the query
 * and its handles, match.c a match.
 */
#ifndef PCW_QUERY_PDH_H
#define PCW_QUERY_PDH_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/pdh.h"
#include "set.h"

/* One counterset a counter handle matches, and what it selects there. */
typedef struct pcw__q_match {
    pcw__q_set *set;
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
} pcw__q_match;

struct pcw_pdh_counter {
    pcw_pdh *q;
    struct pcw__q_hcache *hc; /* made when a match selects a histogram (hist_query.h) */
    char *text;
    pcw_path path;
    int32_t scale;
    int scale_set;
    uint32_t detail; /* the query's detail level when it was added */
    pcw__q_match *m;
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

/* What takes one set's rows as they are read (fetch.h). */
typedef struct pcw__q_row_sink pcw__q_row_sink;

struct pcw_pdh {
    pcw_consumer *c;
    char *root;
    int all_users;
    pcw__q_set **sets;
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
    /* During pcw_pdh_collect_rows only: what takes the rows of one set
     * as they are read (fetch.h; NULL otherwise). */
    pcw__q_row_sink *rows;
    /* pcw_pdh_collect_rows' conversion buffer (a run of rows as doubles,
     * lib/consumer/private.h), kept to allocate nothing; 64-aligned. */
    double *cvt;
    size_t cvt_cap;
    /* pcw_pdh_collect_top's candidates (lib/query/rank.h), kept to
     * allocate nothing in a steady refresh. */
    pcw_pdh_ranked *rank;
    size_t rank_cap;
    /* Entries the handles' matches examined (pcw__q_match_update): a count
     * of work, not API, that tests/test_query_cost.c holds to the cost
     * model (linear set-up and churn). */
    uint64_t entry_tests;
    struct pcwl_log *log; /* pcw_pdh_open_log's source (logsource.h); NULL live */
};

#endif /* PCW_QUERY_PDH_H */
