/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_churn.c - pcw_pdh_collect_rows against a provider that
 * creates and closes instances all the while (helpers/churn_provider, in
 * another process; its instance "i<S>" carries w0 = S, tests/conctest.h).
 *
 * Every value handed over must belong to the instance it is attributed
 * to: the blocks that come while the collection reads (attributed to the
 * last sample's instances, by position) - also those a restart block
 * voids afterwards - and the blocks after the read or after a restart
 * (attributed to the instances of the collection as it ended). A value
 * misattributed by one row names another instance's serial.
 *
 * The churn is slowed down (-d) so that there are quiet stretches (a
 * collection planned from a steady sample hands its blocks over during the
 * read: asserted to happen) as well as instances created and closed
 * between and during the reads. How often a change lands in the middle of
 * a read is up to timing and is only reported; test_query_fast makes that
 * happen deterministically.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <signal.h>

#include "conctest.h"
#include "pcw/pdh.h"

#define COLLECTIONS 2000
#define WORDS       4 /* w0..w3 of the ident counterset */

/* A value handed over: its instance (row) index, w0, and whether a
 * restart block came after it in the same call. */
typedef struct kept {
    size_t row;
    double w0;
    uint8_t status;
} kept;

typedef struct seen {
    const pcw_pdh *q;
    uint64_t collections; /* the query's count before the call */
    kept *v;
    size_t n, cap;
    size_t voided; /* v[0..voided) came before the last restart block */
    size_t during; /* blocks handed over during the read */
    size_t restarts;
} seen;

static int keep(const pcw_pdh_rows *b, void *arg)
{
    seen *s = arg;
    if (!b->rows) {
        s->restarts++;
        s->voided = s->n;
        return 0;
    }
    cr_assert_eq(b->count, WORDS);
    cr_assert_eq(b->first % WORDS, 0);
    if (pcw_pdh_collections(s->q) == s->collections)
        s->during++;
    for (size_t r = 0; r < b->rows; r++) {
        if (s->n == s->cap) {
            s->cap = s->cap ? 2 * s->cap : 4096;
            s->v = realloc(s->v, s->cap * sizeof *s->v);
            cr_assert_not_null(s->v);
        }
        s->v[s->n++] = (kept){b->first / WORDS + r, b->values[r * WORDS], b->status[r * WORDS]};
    }
    return 0;
}

/* The serial of value i's instance ("i<S>"), or 0. */
static uint64_t serial_of(const pcw_pdh_counter *h, size_t i)
{
    pcw_pdh_value v;
    if (pcw_pdh_get_value(h, i, 0, &v) != PCW_OK || !v.instance || v.instance[0] != 'i')
        return 0;
    return strtoull(v.instance + 1, NULL, 10);
}

Test(query_churn, collect_rows_attributes_every_value, .timeout = 120)
{
    cr_assert_not_null(conc_private_dir());
    char prog[512];
    conc_helper("churn_provider", prog, sizeof prog);
    /* 2 threads over a window of 8192 slots: 4,000 operations at full
     * speed (a few thousand live instances), then each sleeping 10 ms
     * after each create or close. */
    char *pargv[] = {prog,   "-t", "2",     "-k", "8192", "-r", "1", "-w",
                     "4000", "-d", "10000", "-p", "4000", "-f", NULL};
    conc_lines pl = {0};
    pid_t prov = conc_spawn(pargv, &pl.fd);
    cr_assert_gt(prov, 0);
    char line[4096];
    cr_assert_eq(conc_readline(&pl, line, sizeof line, 30), 1, "provider printed no path");
    cr_assert_eq(strncmp(line, "path ", 5), 0, "provider said: %s", line);
    /* Its first 4,000 operations made a few thousand instances: several
     * blocks of rows per collection. */
    cr_assert_eq(conc_readline(&pl, line, sizeof line, 60), 1, "no progress from the provider");
    cr_assert_eq(strncmp(line, "ops ", 4), 0, "provider said: %s", line);

    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h;
    pcw_path_error err;
    cr_assert_eq(pcw_pdh_add_counter(q, "\\ident.0(*)\\*", &h, &err), PCW_OK, "%s", err.message);
    seen s = {0};
    s.q = q;
    uint64_t *prev = NULL; /* the last collection's serial per row */
    size_t nprev = 0, checked = 0, fused = 0, restarts = 0;
    for (int c = 0; c < COLLECTIONS; c++) {
        s.n = s.voided = s.during = s.restarts = 0;
        s.collections = pcw_pdh_collections(q);
        cr_assert_eq(pcw_pdh_collect_rows(q, NULL, h, 0, keep, &s), PCW_OK);
        size_t rows = pcw_pdh_instance_count(h);
        cr_assert_eq(pcw_pdh_selected_counter_count(h), rows ? WORDS : 0u);
        uint64_t *now = malloc((rows ? rows : 1) * sizeof *now);
        cr_assert_not_null(now);
        for (size_t r = 0; r < rows; r++)
            now[r] = serial_of(h, r * WORDS);
        /* After the last restart: this collection's instances, each once,
         * in order. */
        cr_assert_eq(s.n - s.voided, rows, "collection %d: %zu values after the restart, %zu rows",
                     c, s.n - s.voided, rows);
        for (size_t i = s.voided; i < s.n; i++) {
            const kept *k = &s.v[i];
            cr_assert_eq(k->row, i - s.voided, "collection %d: rows out of order", c);
            cr_assert_eq(k->status, PCW_CSTATUS_VALID);
            cr_assert(now[k->row] && k->w0 == (double)now[k->row],
                      "collection %d row %zu: w0 %.0f, but the instance is i%" PRIu64, c, k->row,
                      k->w0, now[k->row]);
        }
        /* Before it: the last collection's instances, by position. */
        for (size_t i = 0; i < s.voided; i++) {
            const kept *k = &s.v[i];
            cr_assert_lt(k->row, nprev, "collection %d: a voided row past the last sample", c);
            cr_assert(k->w0 == (double)prev[k->row],
                      "collection %d row %zu (voided): w0 %.0f, but the last sample's instance "
                      "there was i%" PRIu64,
                      c, k->row, k->w0, prev[k->row]);
        }
        checked += s.n;
        fused += s.during > 0;
        restarts += s.restarts;
        free(prev);
        prev = now, nprev = rows;
    }
    kill(prov, SIGTERM);
    int st;
    cr_assert_eq(conc_wait(prov, &st, 30), 1, "the provider did not exit");
    cr_log_info("query_churn: %zu values checked; %zu of %d collections handed blocks over "
                "during the read, %zu restarts",
                checked, fused, COLLECTIONS, restarts);
    cr_assert_gt(fused, 0, "no collection handed its blocks over during the read");
    cr_assert_gt(checked, 0);
    free(prev);
    free(s.v);
    pcw_pdh_close(q);
}
