/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwstat/list.c - `-q [COUNTERSET]` lists counter paths as
 * typeperf -q does: one per counter, "(*)" for a counterset with instances;
 * `-qx [COUNTERSET]` lists every concrete path: one per instance (totals
 * included) and counter. Base counters are never listed, advanced ones
 * only with -a (the counters "\Set(*)\*" selects, pcw_counter_in_wildcard).
 * Countersets in name order; COUNTERSET is a name or a wildcard,
 * case-insensitive.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>

#include "common/name.h"

#include "../common/suggest.h"
#include "pcwstat.h"

static int by_name(const void *a, const void *b)
{
    const pcw_merged_counterset *x = *(const pcw_merged_counterset *const *)a;
    const pcw_merged_counterset *y = *(const pcw_merged_counterset *const *)b;
    return strcmp(x->meta->name, y->meta->name);
}

/* One path a line, escaped (tools/common/escape.h): the listing is text for
 * a person and has no quoting of its own; a path without control
 * characters - any a person can type - is written as it is. */
static int print_path(const char *path, void *arg)
{
    esc_put((FILE *)arg, path, strlen(path), ESC_BACKSLASH_LITERAL);
    fputc('\n', (FILE *)arg);
    return 0;
}

int list_paths(pcw_pdh *q, int with_instances, const char *set, uint32_t detail, FILE *out)
{
    pcw_consumer *c = pcw_pdh_consumer(q);
    if (pcw_consumer_refresh(c, NULL) != PCW_OK) {
        fprintf(stderr, "pcwstat: cannot read the providers\n");
        return 1;
    }
    size_t n = pcw_consumer_counterset_count(c), k = 0;
    const pcw_merged_counterset **v = calloc(n ? n : 1, sizeof *v);
    if (!v) {
        fprintf(stderr, "pcwstat: out of memory\n");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        const pcw_merged_counterset *m = pcw_consumer_counterset(c, i);
        if (!set || pcw__wildcard_match(set, strlen(set), m->meta->name, strlen(m->meta->name)))
            v[k++] = m;
    }
    qsort(v, k, sizeof *v, by_name);
    int rc = 0;
    if (set && !k) {
        char shown[1024];
        fprintf(stderr, "pcwstat: counterset \"%s\" does not exist (no provider publishes it)\n",
                show(shown, sizeof shown, set));
        suggest_names(q, set, NULL, stderr);
        rc = 1;
    }
    /* Copy the names first: expanding may refresh the consumer. */
    char **names = calloc(k ? k : 1, sizeof *names);
    for (size_t i = 0; names && i < k; i++)
        names[i] = strdup(v[i]->meta->name);
    for (size_t i = 0; !with_instances && i < k; i++) {
        const pcw_counterset *cs = v[i]->meta;
        int named = pcw_instance_type_is_multi(cs->instance_type);
        for (uint32_t j = 0; j < cs->counter_count; j++) {
            const pcw_counter *ctr = &cs->counters[j];
            if (!pcw_counter_in_wildcard(ctr->type, ctr->detail_level, detail))
                continue;
            char path[8192];
            if (ctr->type == PERF_PCW_HISTOGRAM) {
                /* A histogram: the statistics "\Set(*)\Latency" selects. */
                size_t nst;
                const pcw_hist_stat *st = pcw_hist_default_stats(&nst);
                for (size_t s = 0; s < nst; s++) {
                    char name[4096], stat[32];
                    pcw_hist_stat_name(&st[s], stat, sizeof stat);
                    snprintf(name, sizeof name, "%s:%s", ctr->name, stat);
                    pcw_path_build(path, sizeof path, NULL, cs->name, named ? "*" : NULL, 0, name);
                    print_path(path, out);
                }
                continue;
            }
            pcw_path_build(path, sizeof path, NULL, cs->name, named ? "*" : NULL, 0, ctr->name);
            print_path(path, out);
        }
    }
    for (size_t i = 0; with_instances && names && i < k; i++) {
        char path[8192];
        pcw_path_error err;
        pcw_path_build(path, sizeof path, NULL, names[i], "*", 0, "*");
        int r = pcw_pdh_expand(q, path, print_path, out, &err);
        if (r != PCW_OK && r != PCW_E_NOT_FOUND) {
            char shown[1024], why[1024];
            fprintf(stderr, "pcwstat: %s: %s\n", show(shown, sizeof shown, names[i]),
                    show(why, sizeof why, err.message));
            rc = 1;
        }
    }
    if (!names)
        rc = 1;
    for (size_t i = 0; names && i < k; i++)
        free(names[i]);
    free(names);
    free(v);
    return rc;
}

void suggest_names(pcw_pdh *q, const char *set, const char *counter, FILE *out)
{
    pcw_consumer *c = pcw_pdh_consumer(q);
    size_t n = c ? pcw_consumer_counterset_count(c) : 0;
    suggest sg;
    suggest_init(&sg, counter ? counter : set);
    for (size_t i = 0; i < n; i++) {
        const pcw_counterset *cs = pcw_consumer_counterset(c, i)->meta;
        if (!counter) {
            suggest_add(&sg, cs->name);
            continue;
        }
        if (!pcw__wildcard_match(set, strlen(set), cs->name, strlen(cs->name)))
            continue;
        for (uint32_t j = 0; j < cs->counter_count; j++)
            if (!pcw_counter_type_is_base(cs->counters[j].type))
                suggest_add(&sg, cs->counters[j].name);
    }
    if (!sg.n)
        return;
    fputs("pcwstat: ", out);
    suggest_print(out, &sg);
    fputc('\n', out);
}

void suggest_for_path(pcw_pdh *q, const char *path, const pcw_path_error *err, FILE *out)
{
    if (err->status != PCW_E_NOT_FOUND ||
        (err->part != PCW_PATH_COUNTERSET && err->part != PCW_PATH_COUNTER))
        return;
    pcw_path p;
    if (pcw_path_parse(path, &p, NULL) != PCW_OK)
        return;
    if (err->part == PCW_PATH_COUNTERSET && !(p.wild & PCW_PATH_WILD_COUNTERSET))
        suggest_names(q, p.counterset, NULL, out);
    else if (err->part == PCW_PATH_COUNTER && !(p.wild & PCW_PATH_WILD_COUNTER))
        suggest_names(q, p.counterset, p.counter, out);
    pcw_path_free(&p);
}
