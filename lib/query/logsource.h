/* SPDX-License-Identifier: MIT */
/*
 * lib/query/logsource.h - the query layer reading pcw logs
 * (pcw_pdh_open_log, PDH's PdhBindInputDataSource; logsource.c). A query
 * opened on logs has q->log set, and each of its handles h->lsel: the
 * public functions of query.c and values.c hand such a query or handle to
 * the pcwl_* function of the same name as their first step (the only
 * hooks in the live code). Functions not hooked work on a log query
 * unchanged (the counter list, the scale, the times, the epoch) or find
 * nothing in it (the providers' raw instances: no live match).
 */
#ifndef PCW_QUERY_LOGSOURCE_H
#define PCW_QUERY_LOGSOURCE_H

#include "internal.h"

/* Identity changes (an identity record of a series, counted once per
 * block) one log file may put into a query's index (docs/history.md's
 * limits): each costs about 120 bytes there (the identity with its row layout), and a compressed block may
 * name a million. A sample beyond is damage at its block. A variable so
 * that tests reach the limit quickly (as the control channel's limits,
 * docs/design.md); nothing else writes it. */
#define PCWL_MAX_IDENT_CHANGES (1u << 24)
extern uint64_t pcwl_max_ident_changes;

/* How the walk over a handle's values (logsource.c) cooks a series of
 * this identity: the commonest formulas inline, computing exactly what
 * pcw__hist_cook computes in the same order of operations (so the same
 * bits), for a VALID value whose formula needs no status; anything else
 * (GENERIC, or a value that needs a status) through pcw__hist_cook. */
struct pcw__hist_series; /* lib/history/history.h */
enum {
    PCWL_FAST_GENERIC,  /* pcw__hist_cook */
    PCWL_FAST_NO_DATA,  /* no formula (a base, text): PCW_CSTATUS_NO_DATA, 0 */
    PCWL_FAST_RAW,      /* X, not a percentage */
    PCWL_FAST_FRACTION, /* 100 * X / B, a percentage */
    PCWL_FAST_RATE,     /* (X1 - X0) / ((Y1 - Y0) / TB), not a percentage */
};
int pcwl_fast_kind(const struct pcw__hist_series *s);
/* Nonzero: the walk cooks every value through pcw__hist_cook (the tests
 * compare the two ways); nothing else writes it. */
extern int pcwl_generic_cook;

/* Is q (h) a log query's (handle)? */
#define PCWL_Q(q) ((q) && (q)->log)
#define PCWL_H(h) ((h) && (h)->lsel)

void pcwl_close(pcw_pdh *q);
int pcwl_add_counter(pcw_pdh *q, const char *path, pcw_pdh_counter **out, pcw_path_error *err);
int pcwl_remove_counter(pcw_pdh *q, pcw_pdh_counter *ctr);
int pcwl_collect(pcw_pdh *q, size_t *failed);
int pcwl_expand(pcw_pdh *q, const char *path, int (*fn)(const char *path, void *arg), void *arg,
                pcw_path_error *err);
size_t pcwl_value_count(const pcw_pdh_counter *h);
int pcwl_get_value(const pcw_pdh_counter *h, size_t i, unsigned flags, pcw_pdh_value *out);
size_t pcwl_value_path(const pcw_pdh_counter *h, size_t i, int with_host, char *buf, size_t len);
size_t pcwl_instance_count(const pcw_pdh_counter *h);
size_t pcwl_selected_counter_count(const pcw_pdh_counter *h);
int pcwl_cook_column(const pcw_pdh_counter *h, size_t k, unsigned flags, double *values,
                     uint8_t *status);
int pcwl_cook_all(const pcw_pdh_counter *h, unsigned flags, double *values, uint8_t *status);
int pcwl_visit(const pcw_pdh_counter *h, unsigned flags,
               int (*fn)(const pcw_pdh_row *row, void *arg), void *arg);
int pcwl_visit_rows(const pcw_pdh_counter *h, unsigned flags,
                    int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg);
int pcwl_collect_rows(pcw_pdh *q, size_t *failed, pcw_pdh_counter *h, unsigned flags,
                      int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg);
int pcwl_get_histogram(const pcw_pdh_counter *h, size_t i, unsigned flags, pcw_hist_dist *out);

#endif /* PCW_QUERY_LOGSOURCE_H */
