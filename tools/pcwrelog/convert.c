/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwrelog/convert.c - the logs' samples, in order, cut and thinned
 * (relog.h).
 *
 * The logs' samples are numbered 0, 1, 2... across the logs, in time
 * order. The first row is the first sample within -b and -e that has a
 * sample N back (-t N; N = 1 without -t), found by inputs_scan; the rows
 * are that one and every N-th after it within -b and -e, each cooked from
 * the sample N back when that was the same instance - the longer interval
 * the live query would have cooked over at N times the interval. So the
 * log's first sample is not a row (it primes the rates, as pcwstat's
 * first collection did), and a cut with -b prints the rows the whole
 * conversion prints for those times, the first one included.
 *
 * Memory: two samples' cells of the selected columns (this one, and the
 * last one a row may be cooked from).
 */
#include <stdlib.h>
#include <string.h>

#include "relog.h"

/* Is merged sample g one the output needs: the one that primes the first
 * row, or a row's place (every N-th from the first row)? */
static int kept(const relog_run *run, uint64_t g)
{
    if (!run->has_rows || g < run->prime_row)
        return 0;
    return g == run->prime_row || (g >= run->first_row && (g - run->first_row) % run->o->thin == 0);
}

/* Log li's values v (n series) into the selected columns' cells. */
static void fill(const relog_run *run, const relog_log *l, pcw__hist_reader *r,
                 const pcw__hist_value *v, size_t n, relog_cell *cells)
{
    for (size_t j = 0; j < run->nselected; j++)
        cells[j].present = 0;
    for (size_t i = 0; i < n && i < l->nseries; i++) {
        const relog_col *c = &run->cols[l->col[i]];
        if (!c->selected)
            continue;
        relog_cell *cell = &cells[c->out];
        cell->v = v[i];
        ident_of(&cell->id, pcw__hist_reader_series(r, i));
        cell->present = 1;
    }
}

/* Keep this sample's cells as the ones the next kept sample is cooked
 * from. A copy, not the reader's memory: they must outlive the reader's
 * next samples (-t N skips N - 1 of them) and the reader itself (the first
 * rate of the next log is cooked from them). Everything a pcw__hist_value
 * points to is copied here, in this one place. */
static int keep(const relog_run *run, relog_cell *prev, const relog_cell *now)
{
    for (size_t j = 0; j < run->nselected; j++) {
        relog_cell *p = &prev[j];
        p->v = now[j].v, p->id = now[j].id, p->present = now[j].present;
        if (p->v.hn) { /* a histogram's words: the reader's until its next samples */
            if (p->words_cap < p->v.hn) {
                uint64_t *w = realloc(p->words, p->v.hn * sizeof *w);
                if (!w)
                    return -1;
                p->words = w, p->words_cap = p->v.hn;
            }
            memcpy(p->words, p->v.hwords, p->v.hn * sizeof *p->words);
            p->v.hwords = p->words;
        }
    }
    return 0;
}

/* Convert log li; 0, or 1 (it is damaged, it changed since the scan, or
 * the output failed: *fatal then). */
static int convert_log(relog_run *run, size_t li, relog_sink *k, FILE *out, relog_cell *now,
                       relog_cell *prev, int *fatal)
{
    const relog_log *l = &run->logs[li];
    pcw__hist_reader *r = NULL;
    int status = 0;
    /* A log wholly before the sample that primes the first row is not
     * read again (its damage, if any, is still reported below). */
    if (run->has_rows && l->first_index + l->samples > run->prime_row) {
        if (!(r = inputs_open(run, li)))
            return 1;
    }
    for (uint64_t j = 0; r && j < l->samples; j++) {
        uint64_t mono, real;
        const pcw__hist_value *v;
        size_t n;
        char why[512];
        if (pcw__hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why) != 1) {
            fprintf(stderr, "pcwrelog: %s: the log changed while pcwrelog read it\n", l->file);
            status = 1;
            break;
        }
        uint64_t g = l->first_index + j;
        if (!kept(run, g))
            continue;
        fill(run, l, r, v, n, now);
        int row = g >= run->first_row && in_range(run->o, real);
        if (sink_sample(k, g, mono, real, row, now, g == run->prime_row ? NULL : prev)) {
            *fatal = 1;
            status = 1;
            break;
        }
        if (keep(run, prev, now)) {
            fprintf(stderr, "pcwrelog: out of memory\n");
            *fatal = 1;
            status = 1;
            break;
        }
        if (ferror(out)) { /* (the reader gone: main ends as a filter does) */
            *fatal = 1;
            break;
        }
    }
    pcw__hist_reader_close(r);
    if (l->damaged && !*fatal) {
        fprintf(stderr, "pcwrelog: %s: %s (the %llu samples before it were read)\n", l->file,
                l->why, (unsigned long long)l->samples);
        status = 1;
    }
    return status;
}

int convert_run(relog_run *run, FILE *out)
{
    relog_sink *k = sink_open(run, out);
    if (!k)
        return 1;
    size_t m = run->nselected ? run->nselected : 1;
    relog_cell *now = calloc(m, sizeof *now), *prev = calloc(m, sizeof *prev);
    int status = 0, fatal = 0;
    if (!now || !prev) {
        fprintf(stderr, "pcwrelog: out of memory\n");
        status = 1, fatal = 1;
    }
    for (size_t li = 0; !fatal && li < run->nlogs; li++) {
        status |= convert_log(run, li, k, out, now, prev, &fatal);
    }
    if (sink_close(k))
        status = 1;
    for (size_t j = 0; prev && j < run->nselected; j++)
        free(prev[j].words);
    free(now);
    free(prev);
    return status;
}
