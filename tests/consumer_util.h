/* SPDX-License-Identifier: MIT */
/*
 * tests/consumer_util.h - a consumer's steps, as Criterion assertions:
 * open and refresh one, find a counterset, and find an instance's row or
 * a counter's value in a snapshot by name. For tests that read callback
 * and segment countersets through libpcw (test_collect_many,
 * test_fidelity, test_pidns). Include after <criterion/criterion.h>.
 */
#ifndef PCW_TESTS_CONSUMER_UTIL_H
#define PCW_TESTS_CONSUMER_UTIL_H

#include <string.h>

#include "pcw/collect.h"

/* A consumer with this time limit (ms), its provider list read. */
static inline pcw_consumer *open_consumer(uint32_t timeout_ms)
{
    pcw_consumer *c;
    pcw_consumer_options o = {.timeout_ms = timeout_ms};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    return c;
}

static inline const pcw_merged_counterset *find_set(pcw_consumer *c, const char *name)
{
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, name);
    cr_assert(m, "no %s", name);
    return m;
}

/* The row of instance `name` (the test fails if there is none). */
static inline size_t row_named(const pcw_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(pcw_snapshot_name(s, i), name) == 0)
            return i;
    cr_assert_fail("no instance %s", name);
    return 0;
}

/* Counter `counter`'s value in instance `inst`'s row. */
static inline uint64_t value_of(const pcw_snapshot *s, const pcw_merged_counterset *m,
                                const char *inst, const char *counter)
{
    size_t r = row_named(s, inst);
    for (uint32_t k = 0; k < m->meta->counter_count; k++)
        if (strcmp(m->meta->counters[k].name, counter) == 0)
            return pcw_snapshot_value(s, r, &m->meta->counters[k]);
    cr_assert_fail("no counter %s", counter);
    return 0;
}

#endif
