/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwrelog/sinks.c - writing what pcwrelog selected (relog.h):
 *
 *   CSV, TSV  typeperf's, written by the pieces pcwstat writes them with
 *             (tools/common/typeperf.h): the same bytes as live;
 *   JSON      pcwstat -f JSON's lines (tools/common/jsonrow.h): one object
 *             per row, each series that had an instance at that sample;
 *   BIN       a new pcw log (lib/history's writer) of the selected series:
 *             the sample that primes the first row, then the rows, with
 *             each series' identity whenever it changes, so that
 *             `pcwrelog NEW` prints what this run printed.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../common/escape.h"
#include "../common/jsonrow.h"
#include "../common/typeperf.h"
#include "relog.h"

struct relog_sink {
    relog_run *run;
    FILE *out;
    unsigned flags;         /* PCW_FMT_* */
    const relog_col **cols; /* the selected columns, in order */
    /* BIN */
    pcw__hist_writer *w;
    relog_ident *written; /* per column: the identity last written */
    unsigned char *known;
    pcw__hist_value *vals;
    size_t per_block, in_block;
};

/* The value the live query showed for a cell: cooked against prev (the
 * sample the rate spans back to) when that was the same instance. */
static int cook(const relog_cell *now, const relog_cell *prev, unsigned flags, double *x)
{
    *x = 0.0;
    if (!now->present)
        return PCW_CSTATUS_NO_INSTANCE;
    pcw__hist_series s;
    ident_series(&s, &now->id);
    const pcw__hist_value *p =
        prev && prev->present && ident_same(&prev->id, &now->id) ? &prev->v : NULL;
    return pcw__hist_cook(&s, &now->v, p, flags, x);
}

static void free_sink(relog_sink *k)
{
    free(k->cols);
    free(k->written);
    free(k->known);
    free(k->vals);
    free(k);
}

/* ---- a new log ------------------------------------------------------------- */

/* Samples a block holds: about 8 MiB of values at most (a value other than
 * a histogram takes at most 64 bytes; a reader takes 16 MiB), at most 1024.
 * A histogram's words may take more: the writer then ends the block
 * sooner (pcw__hist_writer_sample). */
static size_t samples_per_block(size_t ncols)
{
    size_t n = (8u << 20) / (64 * ncols + 64);
    return n < 1 ? 1 : n > 1024 ? 1024 : n;
}

static int bin_open(relog_sink *k)
{
    size_t m = k->run->nselected;
    const char *file = k->run->o->output;
    char why[512];
    k->written = calloc(m ? m : 1, sizeof *k->written);
    k->known = calloc(m ? m : 1, 1);
    k->vals = calloc(m ? m : 1, sizeof *k->vals);
    if (!k->written || !k->known || !k->vals) {
        fprintf(stderr, "pcwrelog: out of memory\n");
        return -1;
    }
    int fd = dup(fileno(k->out));
    if (fd < 0) {
        fprintf(stderr, "pcwrelog: %s: %s\n", file, strerror(errno));
        return -1;
    }
    if (pcw__hist_writer_open(&k->w, fd, file, NULL, why, sizeof why)) {
        fprintf(stderr, "pcwrelog: %s\n", why);
        return -1;
    }
    for (size_t j = 0; j < m; j++)
        if (pcw__hist_writer_series(k->w, (uint32_t)j, k->cols[j]->path, k->cols[j]->kind)) {
            fprintf(stderr, "pcwrelog: %s: out of memory\n", file);
            return -1;
        }
    k->per_block = samples_per_block(m);
    return 0;
}

static int bin_sample(relog_sink *k, uint64_t mono, uint64_t real, const relog_cell *now)
{
    size_t m = k->run->nselected;
    char why[512];
    for (size_t j = 0; j < m; j++) {
        pcw__hist_value *hv = &k->vals[j];
        memset(hv, 0, sizeof *hv);
        hv->raw.status = PCW_CSTATUS_NO_INSTANCE;
        if (!now[j].present)
            continue;
        if (now[j].id.kind != k->cols[j]->kind) {
            hv->raw.status = PCW_CSTATUS_NO_DATA; /* another kind under this path */
            continue;
        }
        *hv = now[j].v;
        if (!k->known[j] || !ident_same(&k->written[j], &now[j].id)) {
            const relog_ident *id = &now[j].id;
            pcw__hist_series s;
            ident_series(&s, id);
            if (pcw__hist_writer_ident(k->w, (uint32_t)j, &s)) {
                fprintf(stderr, "pcwrelog: %s: out of memory\n", k->run->o->output);
                return -1;
            }
            k->written[j] = *id, k->known[j] = 1;
        }
    }
    if (pcw__hist_writer_sample(k->w, mono, real, k->vals, m)) {
        /* A block it ended could not be written (the flush says why), or
         * out of memory. */
        if (pcw__hist_writer_flush(k->w, why, sizeof why) == 0)
            snprintf(why, sizeof why, "%s: out of memory", k->run->o->output);
        fprintf(stderr, "pcwrelog: %s\n", why);
        return -1;
    }
    if (++k->in_block < k->per_block)
        return 0;
    k->in_block = 0;
    if (pcw__hist_writer_flush(k->w, why, sizeof why)) {
        fprintf(stderr, "pcwrelog: %s\n", why);
        return -1;
    }
    return 0;
}

/* ---- text ------------------------------------------------------------------- */

static void csv_header(relog_sink *k)
{
    int tsv = k->run->o->format == OUT_TSV, tty = esc_is_tty(k->out);
    typeperf_field(k->out, tsv ? "(PDH-TSV 4.0)" : "(PDH-CSV 4.0)", tty);
    for (size_t j = 0; j < k->run->nselected; j++) {
        fputc(tsv ? '\t' : ',', k->out);
        typeperf_field(k->out, k->cols[j]->path, tty);
    }
    fputc('\n', k->out);
}

static void csv_row(relog_sink *k, uint64_t real, const relog_cell *now, const relog_cell *prev)
{
    char ts[64], sep = k->run->o->format == OUT_TSV ? '\t' : ',';
    typeperf_time(real, ts, sizeof ts);
    typeperf_field(k->out, ts, 0);
    for (size_t j = 0; j < k->run->nselected; j++) {
        double x;
        int st = cook(&now[j], &prev[j], k->flags, &x);
        fputc(sep, k->out);
        typeperf_value(k->out, typeperf_has_number(st), x);
    }
    fputc('\n', k->out);
}

/* A computed series is a _Total or an aggregate instance (the log does
 * not say which: the query names its total "_Total"). */
static const char *kind_name(const relog_col *c, const relog_cell *cell)
{
    if (cell->id.kind != PCW__HIST_KIND_COMPUTED)
        return "instance";
    return strcasecmp(c->instance, "_Total") == 0 ? "total" : "aggregate";
}

static void json_row(relog_sink *k, uint64_t index, uint64_t real, const relog_cell *now,
                     const relog_cell *prev)
{
    jsonrow_begin(k->out, real, index);
    int first = 1;
    for (size_t j = 0; j < k->run->nselected; j++) {
        /* As live: a series whose instance was gone is not in the sample. */
        if (!now[j].present || now[j].v.raw.status == PCW_CSTATUS_NO_INSTANCE)
            continue;
        const relog_col *c = k->cols[j];
        double x;
        int st = cook(&now[j], &prev[j], k->flags, &x);
        jsonrow_val jv = {.path = c->path,
                          .counterset = c->counterset,
                          .instance = c->instance,
                          .counter = c->counter,
                          .kind = kind_name(c, &now[j]),
                          .pid = now[j].id.pid,
                          .provider_id = now[j].id.provider_id,
                          .has_number = typeperf_has_number(st),
                          .value = x,
                          .status = st};
        jsonrow_value(k->out, &jv, first);
        first = 0;
    }
    jsonrow_end(k->out);
}

/* ---- the interface ------------------------------------------------------------ */

relog_sink *sink_open(relog_run *run, FILE *out)
{
    relog_sink *k = calloc(1, sizeof *k);
    if (k)
        k->cols = calloc(run->nselected ? run->nselected : 1, sizeof *k->cols);
    if (!k || !k->cols) {
        fprintf(stderr, "pcwrelog: out of memory\n");
        if (k)
            free_sink(k);
        return NULL;
    }
    k->run = run, k->out = out;
    k->flags = run->o->no_scale ? PCW_FMT_NOSCALE : 0;
    for (size_t c = 0; c < run->ncols; c++)
        if (run->cols[c].selected)
            k->cols[run->cols[c].out] = &run->cols[c];
    if (run->o->format == OUT_BIN) {
        if (bin_open(k)) {
            if (k->w)
                pcw__hist_writer_close(k->w, NULL, 0);
            free_sink(k);
            return NULL;
        }
    } else if (run->o->format != OUT_JSON) {
        csv_header(k);
    }
    return k;
}

int sink_sample(relog_sink *k, uint64_t index, uint64_t mono_ns, uint64_t real_ns, int row,
                const relog_cell *now, const relog_cell *prev)
{
    switch (k->run->o->format) {
    case OUT_BIN:
        return bin_sample(k, mono_ns, real_ns, now);
    case OUT_JSON:
        if (row)
            json_row(k, index, real_ns, now, prev);
        return 0;
    default:
        if (row)
            csv_row(k, real_ns, now, prev);
        return 0;
    }
}

int sink_close(relog_sink *k)
{
    int rc = 0;
    if (k->w) {
        char why[512];
        if (pcw__hist_writer_close(k->w, why, sizeof why)) {
            fprintf(stderr, "pcwrelog: %s\n", why);
            rc = -1;
        }
    }
    free_sink(k);
    return rc;
}
