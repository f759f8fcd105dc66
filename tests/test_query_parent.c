/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_parent.c - parent instances (PDH's
 * "(ParentInstance/ObjectInstance#InstanceIndex)", issue 24 item 4): a pcw
 * instance name is split at its first '/' into parent and instance, a path's
 * instance part likewise, and a wildcard never matches across that '/'.
 * Expansion against a real provider process (tests/helpers/query_provider).
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "pcw/pdh.h"
#include "query_provider.h"

TestSuite(parent, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

static int collect_path(const char *path, void *arg)
{
    char *out = arg;
    strcat(out, path);
    strcat(out, "|");
    return 0;
}

/* The concrete paths `path` expands to, '|'-separated. */
static const char *expand(pcw_pdh *q, const char *path)
{
    static char got[4096];
    got[0] = 0;
    pcw_path_error err;
    int rc = pcw_pdh_expand(q, path, collect_path, got, &err);
    cr_assert_eq(rc, PCW_OK, "expand %s: %s", path, err.message);
    return got;
}

Test(parent, wildcards_match_parent_and_instance_separately)
{
    tu_child p, p2;
    qp_start(&p, "Thr", PCW_MULTI_INSTANCE, NULL);
    qp_start(&p2, "Thr", PCW_MULTI_INSTANCE, NULL);
    /* parent "a" instance "b/c"; "x"/"c"; "a"/"c"; no parent "c"; and from
     * a second provider another "a/c" (#1). */
    qp_cmd(&p, "create a/b/c");
    qp_cmd(&p, "create x/c");
    qp_cmd(&p, "create a/c");
    qp_cmd(&p, "create c");
    qp_cmd(&p2, "create a/c");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);

    /* No '/' in the pattern: the whole name, as PDH's (*) expands to every
     * instance with its parent. */
    cr_assert_str_eq(expand(q, "\\Thr(*)\\Plain"), "\\Thr(a/b/c)\\Plain|\\Thr(x/c)\\Plain|"
                                                   "\\Thr(a/c)\\Plain|\\Thr(c)\\Plain|"
                                                   "\\Thr(a/c#1)\\Plain|");
    /* Every instance that has a parent. */
    cr_assert_str_eq(expand(q, "\\Thr(*/*)\\Plain"), "\\Thr(a/b/c)\\Plain|\\Thr(x/c)\\Plain|"
                                                     "\\Thr(a/c)\\Plain|\\Thr(a/c#1)\\Plain|");
    /* Instance "c" of any parent: not a/b/c, whose instance is "b/c". */
    cr_assert_str_eq(expand(q, "\\Thr(*/c)\\Plain"),
                     "\\Thr(x/c)\\Plain|\\Thr(a/c)\\Plain|\\Thr(a/c#1)\\Plain|");
    /* A wildcard in the parent does not reach past the parent's '/'. */
    cr_assert_str_eq(expand(q, "\\Thr(*b/c)\\Plain"), "");
    cr_assert_str_eq(expand(q, "\\Thr(?/c)\\Plain"),
                     "\\Thr(x/c)\\Plain|\\Thr(a/c)\\Plain|\\Thr(a/c#1)\\Plain|");
    /* Every instance of parent "a". */
    cr_assert_str_eq(expand(q, "\\Thr(a/*)\\Plain"),
                     "\\Thr(a/b/c)\\Plain|\\Thr(a/c)\\Plain|\\Thr(a/c#1)\\Plain|");
    /* #index with a parent, with and without wildcards. */
    cr_assert_str_eq(expand(q, "\\Thr(a/c#1)\\Plain"), "\\Thr(a/c#1)\\Plain|");
    cr_assert_str_eq(expand(q, "\\Thr(*/c#1)\\Plain"), "\\Thr(a/c#1)\\Plain|");
    cr_assert_str_eq(expand(q, "\\Thr(a/b/c)\\Plain"), "\\Thr(a/b/c)\\Plain|");

    /* A handle selects the same instances as expansion. */
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\Thr(*/c)\\Plain", &h, &err), PCW_OK, "%s", err.message);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
    cr_assert_eq(pcw_pdh_value_count(h), 3);
    pcw_pdh_value v;
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(pcw_pdh_get_value(h, i, 0, &v), PCW_OK);
        cr_assert_str_neq(v.instance_name, "a/b/c");
    }
    pcw_pdh_close(q);
    qp_stop(&p);
    qp_stop(&p2);
}
