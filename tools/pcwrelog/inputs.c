/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwrelog/inputs.c - the logs pcwrelog reads: their order, what
 * they hold, the columns (relog.h).
 *
 * Several logs are one recording cut into files (a recorder's successive
 * logs): they are joined in the order of their first samples' times, a
 * series of the same path in two logs is one column, and a rate at the
 * start of a log is cooked from the previous log's last sample when the
 * instance is the same one (as the recorder saw it live). Logs whose times
 * overlap are not one recording but two at once, and refused: interleaving
 * their samples would make rows half empty and rates between two
 * recorders' samples.
 */
#define _GNU_SOURCE 1
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/grow.h"
#include "../common/typeperf.h"
#include "relog.h"

void ident_of(relog_ident *id, const pcw__hist_series *s)
{
    *id = (relog_ident){.kind = s->kind,
                        .type = s->type,
                        .scale = s->scale,
                        .provider_id = s->provider_id,
                        .instance_id = s->instance_id,
                        .pid = s->pid,
                        .dup_index = s->dup_index};
    id->hshape = s->hshape, id->hstat = s->hstat;
}

void ident_series(pcw__hist_series *s, const relog_ident *id)
{
    *s = (pcw__hist_series){.kind = id->kind,
                            .type = id->type,
                            .scale = id->scale,
                            .provider_id = id->provider_id,
                            .instance_id = id->instance_id,
                            .pid = id->pid,
                            .dup_index = id->dup_index};
    s->hshape = id->hshape, s->hstat = id->hstat;
}

/* The same identity: the live query would have cooked one against the
 * other. Compared by content, not by the reader's epoch, so that it holds
 * across logs and over -t's longer interval (an instance that went and
 * came back in between is the same one when its ids are). */
int ident_same(const relog_ident *a, const relog_ident *b)
{
    int same = a->kind == b->kind && a->type == b->type && a->scale == b->scale &&
               a->provider_id == b->provider_id && a->instance_id == b->instance_id &&
               a->pid == b->pid && a->dup_index == b->dup_index;
    return same && a->hshape == b->hshape && a->hstat.kind == b->hstat.kind &&
           a->hstat.q == b->hstat.q;
}

/* Open a log, or say why not: "pcwrelog: FILE: why" (the reader's
 * sentence names the file itself when the open failed). A log is a
 * regular file: a FIFO's open would wait for a writer without end, a
 * device's reads are not a file's. (A FIFO swapped in between the stat
 * and the reader's open still blocks: that open would need O_NONBLOCK.) */
static pcw__hist_reader *open_log(const char *file)
{
    pcw__hist_reader *r;
    char why[512];
    struct stat st;
    if (stat(file, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "pcwrelog: %s: not a regular file (a pcw log is one)\n", file);
        return NULL;
    }
    if (pcw__hist_reader_open(&r, file, why, sizeof why) == 0)
        return r;
    size_t n = strlen(file);
    if (strncmp(why, file, n) == 0 && why[n] == ':')
        fprintf(stderr, "pcwrelog: %s\n", why);
    else
        fprintf(stderr, "pcwrelog: %s: %s\n", file, why);
    return NULL;
}

pcw__hist_reader *inputs_open(const relog_run *run, size_t i)
{
    return open_log(run->logs[i].file);
}

/* ---- columns --------------------------------------------------------------- */

/* A path's columns: a chain first..last (relog_col.next_same), and the
 * last one handed to a log's series, so that the next series of the same
 * log with this path takes the next column of the chain at once: the work
 * stays constant per series however often a (hostile) log repeats a path. */
typedef struct path_key {
    const char *path; /* the first column's (owned by it) */
    size_t first, last;
    size_t cursor, cursor_log; /* the column log cursor_log - 1 took last */
} path_key;

static int key_cmp(const void *a, const void *b)
{
    return strcmp(((const path_key *)a)->path, ((const path_key *)b)->path);
}

/* A new column for series s (after `last` in its path's chain); its index,
 * or SIZE_MAX out of memory. */
static size_t new_column(relog_run *run, const pcw__hist_series *s)
{
    if (grow(&run->cols, &run->cols_cap, run->ncols + 1, sizeof *run->cols))
        return SIZE_MAX;
    relog_col *c = &run->cols[run->ncols];
    memset(c, 0, sizeof *c);
    if (!(c->path = strdup(s->path)))
        return SIZE_MAX;
    c->kind = s->kind, c->type = s->type;
    c->next_same = SIZE_MAX;
    return run->ncols++;
}

/* The column of log li's series of this path: the next column of the
 * path that no series of this log maps to yet (a log may hold one path
 * twice: two columns, as pcwstat printed), else a new one. Returns it, or
 * SIZE_MAX out of memory. */
static size_t column_for(relog_run *run, size_t li, const pcw__hist_series *s)
{
    path_key k = {.path = s->path}, **found = tfind(&k, &run->by_path, key_cmp);
    if (!found) {
        path_key *nk = malloc(sizeof *nk);
        size_t c = nk ? new_column(run, s) : SIZE_MAX;
        if (c != SIZE_MAX) {
            *nk = (path_key){.path = run->cols[c].path,
                             .first = c,
                             .last = c,
                             .cursor = c,
                             .cursor_log = li + 1};
            if (tsearch(nk, &run->by_path, key_cmp))
                return c;
            free(run->cols[c].path); /* (the column is dropped again) */
            run->ncols--;
        }
        free(nk);
        return SIZE_MAX;
    }
    path_key *pk = *found;
    size_t c = pk->cursor_log == li + 1 ? run->cols[pk->cursor].next_same : pk->first;
    if (c == SIZE_MAX) {
        if ((c = new_column(run, s)) == SIZE_MAX)
            return SIZE_MAX;
        run->cols[pk->last].next_same = c;
        pk->last = c;
    }
    pk->cursor = c, pk->cursor_log = li + 1;
    return c;
}

/* ---- order ---------------------------------------------------------------- */

/* The time of log l's first sample (UINT64_MAX: none, or unreadable: it
 * goes last, and the scan says why). 0, or 1 when it is no log at all. */
static int first_time(relog_log *l, uint64_t *t)
{
    pcw__hist_reader *r = open_log(l->file);
    char why[512];
    if (!r)
        return 1;
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t n;
    *t = pcw__hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why) == 1 ? real : UINT64_MAX;
    pcw__hist_reader_close(r);
    return 0;
}

static int by_first_time(const void *a, const void *b)
{
    const relog_log *x = a, *y = b;
    if (x->first_real != y->first_real)
        return x->first_real < y->first_real ? -1 : 1;
    return x->first_index < y->first_index ? -1 : x->first_index > y->first_index; /* stable */
}

/* ---- the scan ------------------------------------------------------------- */

/* Read log li whole: its samples' times and count, damage, its series'
 * columns; the first row as it passes (run->total: samples before it). */
static int scan_one(relog_run *run, size_t li)
{
    relog_log *l = &run->logs[li];
    pcw__hist_reader *r = inputs_open(run, li);
    if (!r)
        return 1;
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t n;
    int rc;
    l->first_index = run->total;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &n, l->why, sizeof l->why)) == 1) {
        if (!l->samples)
            l->first_real = real;
        l->last_real = real;
        uint64_t g = run->total + l->samples++;
        if (!run->has_rows && g >= run->o->thin && in_range(run->o, real)) {
            run->has_rows = 1;
            run->first_row = g, run->prime_row = g - run->o->thin;
        }
    }
    l->damaged = rc < 0;
    l->version = pcw__hist_reader_version(r);
    l->blocks = pcw__hist_reader_blocks(r);
    l->bytes = pcw__hist_reader_offset(r);
    l->nseries = pcw__hist_reader_series_count(r);
    l->col = calloc(l->nseries ? l->nseries : 1, sizeof *l->col);
    rc = l->col ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < l->nseries; i++) {
        const pcw__hist_series *s = pcw__hist_reader_series(r, i);
        if ((l->col[i] = column_for(run, li, s)) == SIZE_MAX)
            rc = -1;
        else if (!run->cols[l->col[i]].type)
            run->cols[l->col[i]].type = s->type; /* its identity came later */
    }
    pcw__hist_reader_close(r);
    run->total += l->samples;
    if (rc) {
        fprintf(stderr, "pcwrelog: out of memory\n");
        return 1;
    }
    return 0;
}

static void say_span(const relog_log *l)
{
    char a[64], b[64];
    typeperf_time(l->first_real, a, sizeof a);
    typeperf_time(l->last_real, b, sizeof b);
    fprintf(stderr, "%s (%s to %s)", l->file, a, b);
}

int inputs_scan(relog_run *run)
{
    for (size_t i = 0; i < run->nlogs; i++) {
        run->logs[i].first_index = i;
        if (first_time(&run->logs[i], &run->logs[i].first_real))
            return 1;
    }
    qsort(run->logs, run->nlogs, sizeof *run->logs, by_first_time);
    const relog_log *prev = NULL;
    for (size_t i = 0; i < run->nlogs; i++) {
        relog_log *l = &run->logs[i];
        l->first_real = 0;
        if (scan_one(run, i))
            return 1;
        if (!l->samples)
            continue;
        if (prev && l->first_real <= prev->last_real) {
            fputs("pcwrelog: ", stderr);
            say_span(prev);
            fputs(" and ", stderr);
            say_span(l);
            fputs(" overlap in time: pcwrelog joins logs one after the other (a recorder's "
                  "successive files), not side by side: convert them one at a time\n",
                  stderr);
            return 1;
        }
        prev = l;
    }
    if (!run->has_rows && (run->o->has_begin || run->o->has_end)) {
        fputs("pcwrelog: no sample between -b and -e", stderr);
        if (prev) {
            char a[64], b[64];
            typeperf_time(run->logs[0].first_real, a, sizeof a);
            typeperf_time(prev->last_real, b, sizeof b);
            fprintf(stderr, " (the logs span %s to %s)", a, b);
        }
        fputc('\n', stderr);
        return 1;
    }
    return 0;
}

static void free_key(void *k)
{
    free(k);
}

void inputs_free(relog_run *run)
{
    for (size_t i = 0; i < run->nlogs; i++)
        free(run->logs[i].col);
    for (size_t i = 0; i < run->ncols; i++) {
        free(run->cols[i].path);
        free(run->cols[i].counterset);
        free(run->cols[i].instance);
        free(run->cols[i].counter);
    }
    free(run->cols);
    tdestroy(run->by_path, free_key);
}
