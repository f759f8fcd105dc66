/*
 * tests/test_fidelity.c - the provider's side of issue 13 (fidelity to
 * PCW and PERFLIB), through the consumer library against a real provider
 * process (tests/helpers/fidelity_provider.c) written as a ported
 * Windows provider is: counter masks indexed by counter id.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <inttypes.h>

#include "pcw/collect.h"
#include "testutil.h"

TestSuite(fidelity, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 90);

static void spawn(tu_child *c)
{
    const char *args[] = {NULL};
    cr_assert_eq(tu_spawn(c, "fidelity_provider", args), 0);
    char line[PATH_MAX + 16];
    cr_assert_geq(tu_readline(c, line, sizeof line, 10000), 0);
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
}

static void finish(tu_child *c)
{
    int st = tu_finish(c, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fidelity_provider: %d", st);
}

/* The value of KEY in the provider's "stats" line (hexadecimal). */
static uint64_t stat_of(tu_child *c, const char *key)
{
    char line[1024], pat[64];
    cr_assert_gt(tu_command(c, line, sizeof line, "stats"), 0);
    snprintf(pat, sizeof pat, " %s=", key);
    const char *at = strstr(line, pat);
    cr_assert(at, "no %s in %s", key, line);
    return strtoull(at + strlen(pat), NULL, 16);
}

static pcw_consumer *open_consumer(uint32_t timeout_ms)
{
    pcw_consumer *c;
    pcw_consumer_options o = {.timeout_ms = timeout_ms};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    return c;
}

static const pcw_merged_counterset *find_set(pcw_consumer *c, const char *name)
{
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, name);
    cr_assert(m, "no %s", name);
    return m;
}

static size_t row_named(const pcw_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(pcw_snapshot_name(s, i), name) == 0)
            return i;
    cr_assert_fail("no instance %s", name);
    return 0;
}

static uint64_t value_of(const pcw_snapshot *s, const pcw_merged_counterset *m, const char *inst,
                         const char *counter)
{
    size_t r = row_named(s, inst);
    for (uint32_t k = 0; k < m->meta->counter_count; k++)
        if (strcmp(m->meta->counters[k].name, counter) == 0)
            return pcw_snapshot_value(s, r, &m->meta->counters[k]);
    cr_assert_fail("no counter %s", counter);
    return 0;
}

/* ---- item 1: counter masks by counter id ---------------------------------- */

/* A KCS-style callback fills only the counters whose id bit is set; the
 * consumer asks (by position) for C5 and C9 (ids 5 and 9, positions 1
 * and 2) and must get exactly their values. */
Test(fidelity, id_masks_reach_a_kcs_style_callback)
{
    tu_child p;
    spawn(&p);
    pcw_consumer *c = open_consumer(5000);
    const pcw_merged_counterset *m = find_set(c, "Id Mask Set");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_query q = {(1ull << 1) | (1ull << 2), PCW_ANY_INSTANCE_ID, "*"};
    cr_assert_eq(pcw_consumer_collect(c, m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 2);
    cr_assert_eq(value_of(&s, m, "a", "C5"), 5);
    cr_assert_eq(value_of(&s, m, "a", "C9"), 9);
    cr_assert_eq(value_of(&s, m, "b", "C5"), 50);
    cr_assert_eq(value_of(&s, m, "b", "C9"), 90);
    cr_assert_eq(value_of(&s, m, "a", "C2"), 0, "C2 was not asked for");
    cr_assert_eq(value_of(&s, m, "a", "C70"), 0, "C70 was not asked for");
    cr_assert_eq(stat_of(&p, "collect_mask"), (1ull << 5) | (1ull << 9));

    /* Id 70 is above 63: bit 63 stands for it (and every id from 63 up). */
    q.counter_mask = 1ull << 3;
    cr_assert_eq(pcw_consumer_collect(c, m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(value_of(&s, m, "b", "C70"), 700);
    cr_assert_eq(value_of(&s, m, "b", "C2"), 0);
    cr_assert_eq(stat_of(&p, "collect_mask"), 1ull << 63);

    /* Every counter: ~0, whatever the ids. */
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(value_of(&s, m, "a", "C2"), 2);
    cr_assert_eq(value_of(&s, m, "a", "C70"), 70);
    cr_assert_eq(stat_of(&p, "collect_mask"), ~0ull);

    /* ADD/REMOVE_COUNTER: the one counter's id bit. */
    cr_assert_eq(pcw_consumer_add_counter(c, m, 2, NULL, NULL), PCW_OK);
    cr_assert_eq(stat_of(&p, "add_mask"), 1ull << 9);
    cr_assert_eq(pcw_consumer_remove_counter(c, m, 2, NULL, NULL), PCW_OK);
    cr_assert_eq(stat_of(&p, "remove_mask"), 1ull << 9);
    cr_assert_eq(pcw_consumer_add_counter(c, m, 3, NULL, NULL), PCW_OK);
    cr_assert_eq(stat_of(&p, "add_mask"), 1ull << 63);

    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish(&p);
}
