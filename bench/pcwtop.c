/* SPDX-License-Identifier: MIT */
/*
 * bench/pcwtop.c - one refresh of pcwtop's data layer (tools/pcwtop/
 * model.h), without a terminal.
 *
 *   pcwtop/refresh/<instances>
 *       top_model_collect (the query's collection of the counterset, the
 *       providers' liveness, the counterset list, the instance table),
 *       then the view pcwtop draws from: sorted by a counter (descending),
 *       every instance passing an empty filter, the first 40 rows put in
 *       order (view_rows), and those 40 rows' values cooked
 *       (top_model_row_values). The window comes ranked by the collection,
 *       in the loop that reads each row (pcw_pdh_collect_top: the view
 *       showed it the refresh before; the 'ranked' counter says so): the
 *       sort column is never materialised. The provider is the
 *       same child as snapshot/pcw/<instances>/4 (instances x 4 8-byte
 *       counters); that raw read of the same counterset, from the same
 *       run, is the baseline. Issue 30's target: at most 2x.
 *
 *   pcwtop/refresh_unfused/<instances>
 *       the same, with the sort column cooked after the read
 *       (top_model_set_fused(m, 0): every row read a second time), as
 *       pcwtop refreshed before; the fused path's gain.
 *
 * It links pcwtop's core, libpcwtop.a (bench/bench.mk builds it with the
 * suite's flags), as the tool does: the data layer has no terminal code.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdlib.h>

#include "benchutil.h"

#include "../tools/pcwtop/model.h"

#define SCREEN_ROWS 40

static void bm_refresh(gb_state *st, void *arg)
{
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = 4;
    /* Only this shape's provider publishes "Bench" (as bench/query.c);
     * snapshot/pcw/<n>/4's child, if it ran, is this one. */
    bu_provider_keep_only(n, c);
    if (!bu_provider_get(n, c)) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    top_model *m;
    if (top_model_open(&m, NULL) != PCW_OK) {
        gb_skip_with_error(st, "top_model_open");
        return;
    }
    top_model_want(m, "Bench", 0);
    top_model_set_fused(m, arg == NULL);
    top_view v;
    view_init(&v);
    v.sort = 0; /* the first counter, largest first */
    uint32_t rows[SCREEN_ROWS];
    double vals[16];
    uint8_t sts[16];
    /* Two collections before timing: the table is built, rates primed. */
    int bad = top_model_collect(m, 1000000000ull) != PCW_OK ||
              top_model_collect(m, 1000000000ull) != PCW_OK;
    const top_frame *f = top_model_frame(m);
    if (bad || !f->table || f->table->nq != (size_t)n || f->table->ncols != (uint32_t)c) {
        gb_skip_with_error(st, "first collections failed or missed instances");
        view_free(&v);
        top_model_close(m);
        return;
    }
    double sum = 0;
    while (gb_keep_running(st)) {
        bad |= top_model_collect(m, 1000000000ull) != PCW_OK;
        bad |= view_count(&v, m) != (size_t)n;
        size_t got = view_rows(&v, m, 0, SCREEN_ROWS, rows);
        bad |= got != SCREEN_ROWS;
        for (size_t i = 0; i < got; i++) {
            top_model_row_values(m, &f->table->rows[rows[i]], vals, sts);
            sum += vals[0];
        }
        gb_do_not_optimize(&sum);
    }
    if (bad)
        gb_skip_with_error(st, "a refresh failed or missed instances");
    /* The view must be the largest values first: the provider's counter 0
     * of instance i is i. */
    else if (f->table->rows[rows[0]].qi != (uint32_t)(n - 1))
        gb_skip_with_error(st, "the first row is not the largest value");
    int64_t it = gb_state_iterations(st);
    gb_set_items_processed(st, it * n * c);
    gb_counter_rate(st, "instances_per_second", (double)(it * n));
    gb_counter(st, "instances", (double)n);
    gb_counter(st, "counters", (double)c);
    /* 1: the last refresh's sort column came converted by the read. */
    gb_counter(st, "fused", f->fused_col == v.sort);
    /* 1: ...ranked by the read (pcw_pdh_collect_top: the column never
     * materialised). */
    gb_counter(st, "ranked", f->ranked_col == v.sort);
    view_free(&v);
    top_model_close(m);
}

void bench_pcwtop_register(void); /* called by main.c */
void bench_pcwtop_register(void)
{
    static int unfused;
    gb_bench *b = gb_register("pcwtop/refresh", bm_refresh, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){1000000}, 1);
    b = gb_register("pcwtop/refresh_unfused", bm_refresh, &unfused);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){1000000}, 1);
}
