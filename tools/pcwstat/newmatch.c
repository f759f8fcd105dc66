/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwstat/newmatch.c - which matches of the user's paths are new
 * this sample (they cannot become CSV columns: columns are fixed at start,
 * as typeperf's), and one line on stderr that says so.
 *
 * The columns' paths are kept sorted; each sample the paths the user's
 * paths expand to that are not columns are gathered, sorted and compared
 * with the previous sample's: a path is new when the previous sample did
 * not have it. Only the current and the previous sample's are kept, so
 * memory follows the instances there are, not all that ever were, and a
 * sample costs O(m log m) for its m matches however long pcwstat runs (a
 * list of every path ever seen, searched linearly, made CPU grow without
 * bound under churn). The first three new paths are named, then "and N
 * more": one line per sample whatever the churn.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>

#include "pcwstat.h"

static int cmp(const void *a, const void *b, void *arg)
{
    ((newmatch *)arg)->compares++;
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* v may be NULL when n is 0: qsort_r must not be given it. */
static void sort(newmatch *t, char **v, size_t n)
{
    if (n > 1)
        qsort_r(v, n, sizeof *v, cmp, t);
}

/* Is x in v[0..n) (sorted)? */
static int has(newmatch *t, char *const *v, size_t n, const char *x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        t->compares++;
        int c = strcmp(v[mid], x);
        if (c == 0)
            return 1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static void free_all(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int nm_add_column(newmatch *t, const char *path)
{
    char *copy = strdup(path);
    if (!copy || grow(&t->cols, &t->cols_cap, t->ncols + 1, sizeof *t->cols)) {
        free(copy);
        return -1;
    }
    t->cols[t->ncols++] = copy;
    return 0;
}

void nm_columns_done(newmatch *t)
{
    sort(t, t->cols, t->ncols);
}

int nm_see(const char *path, void *arg)
{
    newmatch *t = arg;
    if (has(t, t->cols, t->ncols, path))
        return 0;
    char *copy = strdup(path);
    if (!copy || grow(&t->cur, &t->cur_cap, t->ncur + 1, sizeof *t->cur)) {
        free(copy);
        t->failed = 1;
        return 0; /* keep expanding: a report is best effort */
    }
    t->cur[t->ncur++] = copy;
    return 0;
}

size_t nm_sample_end(newmatch *t, FILE *err)
{
    sort(t, t->cur, t->ncur);
    const char *named[3];
    size_t fresh = 0;
    for (size_t i = 0; i < t->ncur; i++) {
        if (has(t, t->prev, t->nprev, t->cur[i]))
            continue;
        if (fresh < 3)
            named[fresh] = t->cur[i];
        fresh++;
    }
    if (fresh && err) {
        char shown[1024];
        fputs("pcwstat: new: ", err);
        for (size_t i = 0; i < fresh && i < 3; i++)
            fprintf(err, "%s%s", i ? ", " : "", show(shown, sizeof shown, named[i]));
        if (fresh > 3)
            fprintf(err, " and %zu more", fresh - 3);
        fputs(fresh == 1 ? " (not a column: columns are fixed at start)\n"
                         : " (not columns: columns are fixed at start)\n",
              err);
    }
    free_all(t->prev, t->nprev);
    t->prev = t->cur, t->nprev = t->ncur, t->prev_cap = t->cur_cap;
    t->cur = NULL, t->ncur = t->cur_cap = 0;
    return fresh;
}

void nm_free(newmatch *t)
{
    free_all(t->cols, t->ncols);
    free_all(t->prev, t->nprev);
    free_all(t->cur, t->ncur);
    memset(t, 0, sizeof *t);
}
