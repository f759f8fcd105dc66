/* SPDX-License-Identifier: MIT */
/*
 * bench/query.c - the query layer (pcw/pdh.h) collecting and cooking.
 *
 *   query/collect_cooked/<instances>/<counters>
 *       one collection of "\Bench(*)\*" (the same provider child and
 *       counterset as snapshot/pcw/<instances>/<counters>: instances x
 *       counters 8-byte PERF_COUNTER_LARGE_RAWCOUNT values) with every
 *       value cooked and handed over a block of instances at a time as the
 *       collection reads them (pcw_pdh_collect_rows; the consumer adds up
 *       one value per instance in a register). The baselines are
 *       snapshot/pcw/<instances>/<counters> (the raw read, which nobody
 *       reads; the target is at most 1.5x) and
 *       snapshot/pcw_then_sum (the raw read and one pass over it: what a
 *       consumer of a snapshot taken first pays at least).
 *   query/collect_then_rows/<instances>/<counters>
 *       pcw_pdh_collect, then pcw_pdh_visit_rows: the same values, read
 *       again after the collection.
 *   query/collect_visit/<instances>/<counters>
 *       the same, handed over instance by instance (pcw_pdh_visit; the
 *       callback adds one value into memory: a chain of a store and a
 *       dependent load per instance).
 *   query/collect_cook_all/<instances>/<counters>
 *       the same, but every value stored into one reused array
 *       (pcw_pdh_cook_all): the cost of materialising 8 bytes per value.
 *
 * The query is made and primed (two collections) before timing, so the
 * timed collections are the steady state: the same providers and
 * instances, no allocation (tests/test_query.c counts them).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdlib.h>

#include "benchutil.h"
#include "pcw/pdh.h"

/* The consumers take one value per instance, so that the figure is the
 * cooking, not the consumer's arithmetic. */
static int add_row(const pcw_pdh_row *row, void *arg)
{
    double *sum = arg;
    *sum += row->values[row->count - 1];
    return 0;
}

static int add_rows(const pcw_pdh_rows *b, void *arg)
{
    if (!b->rows) { /* a restart: forget what was handed over */
        *(double *)arg = 0;
        return 0;
    }
    /* Four partial sums: not a chain of dependent additions. */
    double s[4] = {0, 0, 0, 0};
    const double *v = b->values + b->count - 1;
    size_t r = 0;
    for (; r + 4 <= b->rows; r += 4, v += 4 * (size_t)b->count) {
        s[0] += v[0];
        s[1] += v[b->count];
        s[2] += v[2 * (size_t)b->count];
        s[3] += v[3 * (size_t)b->count];
    }
    for (; r < b->rows; r++, v += b->count)
        s[0] += *v;
    *(double *)arg += (s[0] + s[1]) + (s[2] + s[3]);
    return 0;
}

enum { AS_READ, BY_BLOCK, BY_INSTANCE, INTO_ARRAY };

static void bm_collect(gb_state *st, void *arg)
{
    int how = *(const int *)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    /* Only this shape's provider: providers of other shapes publish "Bench"
     * with as many counters too, and a query merges them all. (Other
     * benchmarks start theirs again when they need them.) */
    bu_provider_stop_all();
    if (!bu_provider_get(n, c)) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    pcw_pdh *q;
    pcw_pdh_counter *h;
    if (pcw_pdh_open(&q, NULL) != PCW_OK) {
        gb_skip_with_error(st, "pcw_pdh_open");
        return;
    }
    pcw_path_error err;
    if (pcw_pdh_add_counter(q, "\\Bench(*)\\*", &h, &err) != PCW_OK) {
        gb_skip_with_error(st, err.message);
        pcw_pdh_close(q);
        return;
    }
    double *values = NULL;
    uint8_t *status = NULL;
    int bad = pcw_pdh_collect(q, NULL) != PCW_OK || pcw_pdh_collect(q, NULL) != PCW_OK;
    size_t inst = pcw_pdh_instance_count(h), ctrs = pcw_pdh_selected_counter_count(h);
    if (!bad && (ctrs != (size_t)c || inst != (size_t)n))
        bad = 1;
    if (!bad) {
        values = malloc(inst * ctrs * sizeof *values);
        status = malloc(inst * ctrs);
        bad = !values || !status;
    }
    if (bad) {
        gb_skip_with_error(st, "first collections failed or missed values");
        free(values), free(status), pcw_pdh_close(q);
        return;
    }
    double sum = 0;
    while (gb_keep_running(st)) {
        if (how == AS_READ) {
            bad |= pcw_pdh_collect_rows(q, NULL, h, 0, add_rows, &sum) != PCW_OK;
            bad |= pcw_pdh_instance_count(h) != inst;
            gb_do_not_optimize(&sum);
            continue;
        }
        bad |= pcw_pdh_collect(q, NULL) != PCW_OK;
        bad |= pcw_pdh_instance_count(h) != inst;
        if (how == INTO_ARRAY) {
            pcw_pdh_cook_all(h, 0, values, status);
            sum += values[inst * ctrs - 1];
        } else if (how == BY_INSTANCE) {
            pcw_pdh_visit(h, 0, add_row, &sum);
        } else {
            pcw_pdh_visit_rows(h, 0, add_rows, &sum);
        }
        gb_do_not_optimize(&sum);
    }
    if (bad)
        gb_skip_with_error(st, "a collection failed or missed instances");
    int64_t it = gb_state_iterations(st);
    gb_set_items_processed(st, it * (int64_t)inst * c);
    gb_counter_rate(st, "instances_per_second", (double)(it * (int64_t)inst));
    gb_counter(st, "instances", (double)inst);
    gb_counter(st, "counters", (double)c);
    free(values);
    free(status);
    pcw_pdh_close(q);
}

void bench_query_register(void)
{
    /* 6250 x 16: 100,000 series, history/record's shape (its baseline). */
    static const int64_t shapes[][2] = {{1000, 16}, {6250, 16}, {100000, 16}};
    static int how[4] = {AS_READ, BY_BLOCK, BY_INSTANCE, INTO_ARRAY};
    const char *names[4] = {"query/collect_cooked", "query/collect_then_rows",
                            "query/collect_visit", "query/collect_cook_all"};
    for (int k = 0; k < 4; k++) {
        gb_bench *b = gb_register(names[k], bm_collect, &how[k]);
        gb_use_real_time(b);
        gb_unit_ns(b);
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            gb_args(b, shapes[i], 2);
    }
}
