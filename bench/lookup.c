/* SPDX-License-Identifier: MIT */
/*
 * bench/lookup.c - lookup/by_name/<instances>: pcw_name_index_find of a
 * random existing instance among <instances>.
 *
 * The provider child holds the instances (one 8-byte counter each); this
 * process reads them once with names, builds the index once (not timed),
 * and looks up names drawn at random from a pre-generated array of 64 Ki
 * names, so every lookup hashes a name and probes a table far larger than
 * the caches, as a consumer resolving names it was given would.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "pcw/consumer.h"

#define KEYS 65536 /* a power of two */

typedef struct lookup_state {
    int64_t n;
    pcw_segment *seg;
    pcw_snapshot snap;
    pcw_name_index *ix;
    char (*keys)[16];
} lookup_state;

static lookup_state ls;

static int setup(gb_state *st, int64_t n)
{
    if (ls.ix && ls.n == n)
        return 0;
    const bu_provider *p = bu_provider_get(n, 1);
    if (!p) {
        gb_skip_with_error(st, "cannot start the provider child");
        return -1;
    }
    if (pcw_segment_open(&ls.seg, p->path) != PCW_OK) {
        gb_skip_with_error(st, "cannot open the segment");
        return -1;
    }
    const pcw_counterset *cs = pcw_segment_find_counterset(ls.seg, "Bench");
    if (!cs || pcw_segment_read(ls.seg, cs, &ls.snap, 0) != PCW_OK || (int64_t)ls.snap.count != n) {
        gb_skip_with_error(st, "cannot read the instances");
        return -1;
    }
    if (pcw_name_index_build(&ls.ix, &ls.snap) != PCW_OK) {
        gb_skip_with_error(st, "cannot build the index");
        return -1;
    }
    ls.keys = malloc(sizeof *ls.keys * KEYS);
    if (!ls.keys) {
        gb_skip_with_error(st, "no memory");
        return -1;
    }
    srandom(1);
    for (int i = 0; i < KEYS; i++)
        snprintf(ls.keys[i], sizeof ls.keys[i], BU_NAME_FMT, (int)(random() % n));
    ls.n = n;
    return 0;
}

static void bm_by_name(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0);
    if (setup(st, n) != 0)
        return;
    /* Check every key once before timing: the figure is of hits. */
    for (int i = 0; i < KEYS; i++) {
        size_t at;
        if (pcw_name_index_find(ls.ix, ls.keys[i], BU_NAME_LEN, &at) != PCW_OK ||
            strcmp(pcw_snapshot_name(&ls.snap, at), ls.keys[i]) != 0) {
            gb_skip_with_error(st, "a lookup missed");
            return;
        }
    }
    int64_t k;
    uint64_t j = 0;
    while ((k = gb_keep_running_batch(st, 256)) > 0)
        for (int64_t i = 0; i < k; i++) {
            size_t at;
            int rc = pcw_name_index_find(ls.ix, ls.keys[j++ & (KEYS - 1)], BU_NAME_LEN, &at);
            gb_do_not_optimize(&rc);
            gb_do_not_optimize(&at);
        }
    gb_set_items_processed(st, gb_state_iterations(st));
    gb_counter(st, "instances", (double)n);
}

void bench_lookup_register(void)
{
    gb_bench *b = gb_register("lookup/by_name", bm_by_name, NULL);
    gb_unit_ns(b);
    gb_args(b, (const int64_t[]){1000000}, 1);
}
