/* SPDX-License-Identifier: MIT */
/*
 * tests/test_null_args.c - every public libpcw function (pcw/consumer.h,
 * pcw/collect.h, pcw/pdh.h), called with each pointer argument NULL in
 * turn, returns what its header documents - PCW_E_INVALID_PARAMETER, NULL,
 * 0, "" or nothing - and never crashes (issue 13, item 15). The other
 * arguments are valid: a provider in this process publishes "Null Set"
 * (one counter, one instance) for them to refer to.
 *
 * The list follows the headers in order; a function added to them belongs
 * here too.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "pcw/pdh.h"
#include "testutil.h"

TestSuite(null_args, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

#define INVALID PCW_E_INVALID_PARAMETER

typedef struct env {
    pcw_provider *prov;
    pcw_registration *reg;
    pcw_instance *inst;
    pcw_consumer *c;
    const pcw_merged_counterset *m;
    pcw_segment *seg;
    const pcw_counterset *cs;
    pcw_snapshot snap;
} env;

static void env_open(env *e)
{
    memset(e, 0, sizeof *e);
    cr_assert_eq(pcw_provider_open(&e->prov, NULL), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Null Set",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    cr_assert_eq(pcw_register(&e->reg, e->prov, &info), PCW_OK);
    uint64_t v = 5;
    pcw_data d = {&v, sizeof v};
    cr_assert_eq(pcw_create_instance(&e->inst, e->reg, "one", 1, &d), PCW_OK);
    cr_assert_eq(pcw_consumer_open(&e->c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(e->c, NULL), PCW_OK);
    cr_assert(e->m = pcw_consumer_find_counterset(e->c, "Null Set"));
    cr_assert_eq(pcw_segment_open(&e->seg, pcw_provider_path(e->prov)), PCW_OK);
    cr_assert(e->cs = pcw_segment_find_counterset(e->seg, "Null Set"));
    e->snap = (pcw_snapshot)PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(e->seg, e->cs, &e->snap, 0), PCW_OK);
    cr_assert_eq(e->snap.count, 1);
}

static void env_close(env *e)
{
    pcw_snapshot_free(&e->snap);
    pcw_segment_close(e->seg);
    pcw_consumer_close(e->c);
    pcw_provider_close(e->prov);
}

static int visit_none(pcw_discovered *d, void *arg)
{
    (void)d, (void)arg;
    return PCW_OK;
}

Test(null_args, consumer_h)
{
    env e;
    env_open(&e);
    const char *path = pcw_provider_path(e.prov);
    pcw_segment *seg = NULL;
    int changed;
    size_t n;
    uint64_t row;

    /* segments */
    cr_assert_eq(pcw_segment_open(NULL, path), INVALID);
    cr_assert_eq(pcw_segment_open(&seg, NULL), INVALID);
    cr_assert_null(seg);
    pcw_segment_close(NULL);
    cr_assert_eq(pcw_segment_refresh(NULL, &changed), INVALID);
    cr_assert_eq(pcw_segment_refresh(e.seg, NULL), PCW_OK); /* documented optional */
    cr_assert_null(pcw_segment_provider(NULL));
    cr_assert_null(pcw_segment_container(NULL));
    cr_assert_eq(pcw_segment_alive(NULL), INVALID);
    cr_assert_eq(pcw_segment_generation(NULL), 0);
    cr_assert_eq(pcw_segment_counterset_count(NULL), 0);
    cr_assert_null(pcw_segment_counterset(NULL, 0));
    cr_assert_null(pcw_segment_find_counterset(NULL, "Null Set"));
    cr_assert_null(pcw_segment_find_counterset(e.seg, NULL));
    cr_assert_not_null(pcw_error_detail());
    char why[64];
    cr_assert_eq(pcw_segment_check(NULL, why, sizeof why), INVALID);
    cr_assert_eq(pcw_segment_check(e.seg, NULL, 0), PCW_OK);

    /* snapshots */
    pcw_snapshot_free(NULL);
    pcw_snapshot_clear(NULL);
    cr_assert_eq(pcw_snapshot_id(NULL, 0), 0);
    cr_assert_null(pcw_snapshot_row(NULL, 0));
    cr_assert_eq(pcw_snapshot_value(NULL, 0, &e.cs->counters[0]), 0);
    cr_assert_eq(pcw_snapshot_value(&e.snap, 0, NULL), 0);
    cr_assert_str_eq(pcw_snapshot_name(NULL, 0), "");
    cr_assert_eq(pcw_snapshot_name_len(NULL, 0), 0);
    cr_assert_null(pcw_snapshot_source_of(NULL, 0));
    cr_assert_eq(pcw_segment_read(NULL, e.cs, &e.snap, 0), INVALID);
    cr_assert_eq(pcw_segment_read(e.seg, NULL, &e.snap, 0), INVALID);
    cr_assert_eq(pcw_segment_read(e.seg, e.cs, NULL, 0), INVALID);
    cr_assert_eq(pcw_segment_read_instance(NULL, e.cs, 0, &e.snap, 0), INVALID);
    cr_assert_eq(pcw_segment_read_instance(e.seg, NULL, 0, &e.snap, 0), INVALID);
    cr_assert_eq(pcw_segment_read_instance(e.seg, e.cs, 0, NULL, 0), INVALID);
    cr_assert_eq(e.snap.count, 1, "the failed calls left the snapshot alone");

    /* name index */
    pcw_name_index *ix = NULL;
    size_t r;
    cr_assert_eq(pcw_name_index_build(NULL, &e.snap), INVALID);
    cr_assert_eq(pcw_name_index_build(&ix, NULL), INVALID);
    cr_assert_null(ix);
    cr_assert_eq(pcw_name_index_build(&ix, &e.snap), PCW_OK);
    cr_assert_eq(pcw_name_index_find(NULL, "one", 3, &r), INVALID);
    cr_assert_eq(pcw_name_index_find(ix, NULL, 3, &r), INVALID);
    cr_assert_eq(pcw_name_index_find(ix, "one", 3, NULL), INVALID);
    cr_assert_eq(pcw_name_index_find(ix, "one", 3, &r), PCW_OK);
    pcw_name_index_free(ix);
    pcw_name_index_free(NULL);

    /* all providers */
    pcw_consumer *c = NULL;
    pcw_consumer_options o = {0};
    cr_assert_eq(pcw_consumer_open(NULL, &o), INVALID);
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK); /* documented: defaults */
    pcw_consumer_close(c);
    cr_assert_not_null(pcw_root(NULL)); /* documented: $PCW_DIR or /dev/shm */
    pcw_consumer_close(NULL);
    cr_assert_eq(pcw_consumer_refresh(NULL, &n), INVALID);
    cr_assert_eq(pcw_consumer_refresh(e.c, NULL), PCW_OK);
    e.m = pcw_consumer_find_counterset(e.c, "Null Set");
    cr_assert_eq(pcw_consumer_segment_count(NULL), 0);
    cr_assert_null(pcw_consumer_segment(NULL, 0));
    cr_assert_eq(pcw_consumer_counterset_count(NULL), 0);
    cr_assert_null(pcw_consumer_counterset(NULL, 0));
    cr_assert_null(pcw_consumer_find_counterset(NULL, "x"));
    cr_assert_null(pcw_consumer_find_counterset(e.c, NULL));
    cr_assert_eq(pcw_consumer_read(NULL, e.m, &e.snap, 0, &n), INVALID);
    cr_assert_eq(pcw_consumer_read(e.c, NULL, &e.snap, 0, &n), INVALID);
    cr_assert_eq(pcw_consumer_read(e.c, e.m, NULL, 0, &n), INVALID);
    cr_assert_eq(pcw_consumer_read(e.c, e.m, &e.snap, 0, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_discover(NULL, visit_none, NULL), INVALID);
    cr_assert_eq(pcw_consumer_discover(e.c, NULL, NULL), INVALID);
    cr_assert_eq(pcw_consumer_discover(e.c, visit_none, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_remove_stale(NULL, &n), INVALID);
    cr_assert_eq(pcw_consumer_remove_stale(e.c, NULL), PCW_OK);
    (void)row;
    env_close(&e);
}

Test(null_args, collect_h)
{
    env e;
    env_open(&e);
    pcw_query q = PCW_QUERY_ALL;
    pcw_collect_report rep = {0};
    int cb;
    cr_assert_eq(pcw_consumer_collect(NULL, e.m, &q, &e.snap, 0, &rep), INVALID);
    cr_assert_eq(pcw_consumer_collect(e.c, NULL, &q, &e.snap, 0, &rep), INVALID);
    cr_assert_eq(pcw_consumer_collect(e.c, e.m, &q, NULL, 0, &rep), INVALID);
    cr_assert_eq(pcw_consumer_collect(e.c, e.m, NULL, &e.snap, 0, NULL), PCW_OK);
    cr_assert_eq(e.snap.count, 1);
    pcw_collect_item it = {e.m, NULL, &e.snap, 0, NULL};
    cr_assert_eq(pcw_consumer_collect_many(NULL, &it, 1), INVALID);
    cr_assert_eq(pcw_consumer_collect_many(e.c, NULL, 1), INVALID);
    cr_assert_eq(pcw_consumer_collect_many(e.c, NULL, 0), PCW_OK);
    cr_assert_eq(pcw_consumer_enumerate(NULL, e.m, &q, &e.snap, 0, &rep), INVALID);
    cr_assert_eq(pcw_consumer_enumerate(e.c, NULL, &q, &e.snap, 0, &rep), INVALID);
    cr_assert_eq(pcw_consumer_enumerate(e.c, e.m, &q, NULL, 0, &rep), INVALID);
    cr_assert_eq(pcw_consumer_enumerate(e.c, e.m, NULL, &e.snap, 0, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_add_counter(NULL, e.m, 0, &q, &rep), INVALID);
    cr_assert_eq(pcw_consumer_add_counter(e.c, NULL, 0, &q, &rep), INVALID);
    cr_assert_eq(pcw_consumer_add_counter(e.c, e.m, 0, NULL, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_remove_counter(NULL, e.m, 0, &q, &rep), INVALID);
    cr_assert_eq(pcw_consumer_remove_counter(e.c, NULL, 0, &q, &rep), INVALID);
    cr_assert_eq(pcw_consumer_remove_counter(e.c, e.m, 0, NULL, NULL), PCW_OK);
    pcw_consumer_set_timeout(NULL, 10);
    cr_assert_eq(pcw_segment_collect(NULL, e.cs, &q, &e.snap, 0, 0, 100, &cb), INVALID);
    cr_assert_eq(pcw_segment_collect(e.seg, NULL, &q, &e.snap, 0, 0, 100, &cb), INVALID);
    cr_assert_eq(pcw_segment_collect(e.seg, e.cs, &q, NULL, 0, 0, 100, &cb), INVALID);
    cr_assert_eq(pcw_segment_collect(e.seg, e.cs, NULL, &e.snap, 0, 0, 100, NULL), PCW_OK);
    cr_assert_eq(e.snap.count, 1);
    cr_assert_eq(pcw_query_match(NULL, 1, "one", 3), 1); /* NULL = everything */
    pcw_query named = {~0ull, PCW_ANY_INSTANCE_ID, "o*"};
    cr_assert_eq(pcw_query_match(&named, 1, NULL, 0), 0); /* a NULL name is "" */
    cr_assert_eq(pcw_query_match(&named, 1, NULL, 5), 0);
    cr_assert_eq(pcw_query_match(NULL, 1, NULL, 0), 1);
    env_close(&e);
}

static int count_paths(const char *path, void *arg)
{
    (void)path;
    ++*(int *)arg;
    return 0;
}

static int count_rows(const pcw_pdh_row *row, void *arg)
{
    (void)row;
    if (arg)
        ++*(int *)arg;
    return 0;
}

static int count_blocks(const pcw_pdh_rows *b, void *arg)
{
    if (arg)
        *(int *)arg += (int)b->rows;
    return 0;
}

Test(null_args, query_h)
{
    env e;
    env_open(&e);
    cr_assert_not_null(pcw_cstatus_str(-12345));
    double v = 1;
    pcw_raw now = {PCW_CSTATUS_VALID, 7, 0, 0, 0, 1};
    cr_assert_eq(pcw_cook(PERF_COUNTER_RAWCOUNT, NULL, NULL, 0, 0, &v), PCW_CSTATUS_NO_INSTANCE);
    cr_assert_eq(v, 0);
    cr_assert_eq(pcw_cook(PERF_COUNTER_RAWCOUNT, &now, NULL, 0, 0, NULL), PCW_CSTATUS_VALID);
    cr_assert_eq(pcw_cook(PERF_COUNTER_COUNTER, &now, NULL, 0, 0, &v), PCW_CSTATUS_NEW_DATA_NEEDED);

    /* paths */
    pcw_path p;
    pcw_path_error err;
    cr_assert_eq(pcw_path_parse(NULL, &p, &err), INVALID);
    cr_assert_eq(err.status, INVALID);
    cr_assert_eq(pcw_path_parse("\\Null Set(*)\\V", NULL, &err), INVALID);
    cr_assert_eq(pcw_path_parse("\\Null Set(*)\\V", &p, NULL), PCW_OK);
    pcw_path_free(&p);
    pcw_path_free(NULL);
    char buf[64];
    cr_assert_eq(pcw_path_build(NULL, 0, NULL, "S", NULL, 0, "C"), 4); /* "\S\C" */
    cr_assert_eq(pcw_path_build(buf, sizeof buf, NULL, NULL, NULL, 0, "C"), 0);
    cr_assert_str_eq(buf, "");
    cr_assert_eq(pcw_path_build(buf, sizeof buf, NULL, "S", NULL, 0, NULL), 0);
    cr_assert_str_eq(buf, "");
    cr_assert_not_null(pcw_path_local_host());
    cr_assert_null(pcw_path_parent_instance(NULL));
    cr_assert_null(pcw_path_object_instance(NULL));

    /* the query */
    pcw_pdh *q = NULL;
    cr_assert_eq(pcw_pdh_open(NULL, NULL), INVALID);
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_close(NULL);
    cr_assert_null(pcw_pdh_consumer(NULL));
    pcw_pdh_counter *h = NULL;
    cr_assert_eq(pcw_pdh_add_counter(NULL, "\\Null Set(*)\\V", &h, &err), INVALID);
    cr_assert_eq(pcw_pdh_add_counter(q, NULL, &h, &err), INVALID);
    cr_assert_eq(err.status, INVALID);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Null Set(*)\\V", NULL, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Null Set(*)\\*", &h, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_remove_counter(NULL, h), INVALID);
    cr_assert_eq(pcw_pdh_remove_counter(q, NULL), INVALID);
    cr_assert_eq(pcw_pdh_counter_count(NULL), 0);
    cr_assert_null(pcw_pdh_counter_at(NULL, 0));
    cr_assert_null(pcw_pdh_counter_path(NULL));
    cr_assert_eq(pcw_pdh_collect(NULL, NULL), INVALID);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_time_ns(NULL), 0);
    cr_assert_eq(pcw_pdh_realtime_ns(NULL), 0);
    cr_assert_eq(pcw_pdh_collections(NULL), 0);

    /* values */
    pcw_pdh_value val;
    cr_assert_eq(pcw_pdh_value_count(NULL), 0);
    cr_assert_eq(pcw_pdh_value_count(h), 1);
    cr_assert_eq(pcw_pdh_get_value(NULL, 0, 0, &val), INVALID);
    cr_assert_eq(pcw_pdh_get_value(h, 0, 0, NULL), INVALID);
    cr_assert_eq(pcw_pdh_value_path(NULL, 0, 0, buf, sizeof buf), 0);
    size_t need = pcw_pdh_value_path(h, 0, 0, NULL, 0);
    cr_assert_eq(need, strlen("\\Null Set(one)\\V"));
    cr_assert_eq(pcw_pdh_instance_count(NULL), 0);
    cr_assert_eq(pcw_pdh_selected_counter_count(NULL), 0);
    double vals[4];
    uint8_t st[4];
    cr_assert_eq(pcw_pdh_cook_column(NULL, 0, 0, vals, st), INVALID);
    cr_assert_eq(pcw_pdh_cook_column(h, 0, 0, NULL, st), INVALID);
    cr_assert_eq(pcw_pdh_cook_column(h, 0, 0, vals, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_cook_all(NULL, 0, vals, st), INVALID);
    cr_assert_eq(pcw_pdh_cook_all(h, 0, NULL, st), INVALID);
    cr_assert_eq(pcw_pdh_cook_all(h, 0, vals, NULL), PCW_OK);
    cr_assert_eq(vals[0], 5);
    int rows = 0;
    cr_assert_eq(pcw_pdh_visit(NULL, 0, count_rows, &rows), INVALID);
    cr_assert_eq(pcw_pdh_visit(h, 0, NULL, &rows), INVALID);
    cr_assert_eq(pcw_pdh_visit(h, 0, count_rows, NULL), PCW_OK); /* arg is the caller's */
    cr_assert_eq(pcw_pdh_visit_rows(NULL, 0, count_blocks, &rows), INVALID);
    cr_assert_eq(pcw_pdh_visit_rows(h, 0, NULL, &rows), INVALID);
    cr_assert_eq(pcw_pdh_visit_rows(h, 0, count_blocks, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_set_scale(NULL, 1), INVALID);
    cr_assert_eq(pcw_pdh_set_detail(NULL, PCW_DETAIL_ADVANCED), INVALID);
    int paths = 0;
    cr_assert_eq(pcw_pdh_expand(NULL, "\\Null Set(*)\\V", count_paths, &paths, &err), INVALID);
    cr_assert_eq(pcw_pdh_expand(q, NULL, count_paths, &paths, &err), INVALID);
    cr_assert_eq(pcw_pdh_expand(q, "\\Null Set(*)\\V", NULL, &paths, &err), INVALID);
    cr_assert_eq(pcw_pdh_expand(q, "\\Null Set(*)\\V", count_paths, &paths, NULL), PCW_OK);
    cr_assert_eq(paths, 1);
    pcw_pdh_close(q);
    env_close(&e);
}
