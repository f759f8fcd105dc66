/* SPDX-License-Identifier: MIT */
/*
 * lib/query/sink.h - where a walk over a handle's values puts them
 * (walk.c, kernels.c, collect_rows.c): the caller's whole arrays
 * (pcw_pdh_cook_all), one instance's values at a time handed to a
 * callback (pcw_pdh_visit), or blocks of instances handed to a callback
 * (pcw_pdh_visit_rows, pcw_pdh_collect_rows). Inline: a walk calls these
 * once per instance.
 */
#ifndef PCW_QUERY_SINK_H
#define PCW_QUERY_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/pdh.h"

typedef struct pcw__q_sink {
    double *values;                                  /* cook_all: the whole arrays */
    uint8_t *status;                                 /* (may be NULL) */
    int (*fn)(const pcw_pdh_row *row, void *arg);    /* visit */
    int (*fnb)(const pcw_pdh_rows *rows, void *arg); /* visit_rows */
    void *arg;
    double *rv; /* visit: one instance's values; visit_rows: the block */
    uint8_t *rs;
    size_t at;      /* values so far */
    int stop;       /* the callback asked to stop */
    size_t bcap;    /* visit_rows: the block's room, in values */
    size_t fill;    /* visit_rows: values in the block */
    size_t rows;    /* visit_rows: instances in the block */
    uint32_t width; /* visit_rows: values per instance in the block */
    size_t valid;   /* visit_rows: statuses [0, valid) of the block are
                       VALID from an earlier block (not written again) */
    size_t calls;   /* visit_rows: blocks handed over */
} pcw__q_sink;

/* visit_rows: hand the block's instances over, and start an empty one. */
static inline int pcw__q_sink_flush(pcw__q_sink *k)
{
    if (k->rows && !k->stop) {
        pcw_pdh_rows b = {k->at - k->fill, k->rows, k->width, k->rv, k->rs};
        k->calls++;
        k->stop = k->fnb(&b, k->arg) != 0;
    }
    k->fill = k->rows = 0;
    return k->stop;
}

/* Where the next instance's n values go: the caller's arrays, the row
 * buffer, or the block (handed over first if they would not fit, or if
 * its instances have another number of values). */
static inline double *pcw__q_sink_values(pcw__q_sink *k, uint32_t n)
{
    if (k->fnb) {
        if (k->fill + n > k->bcap || (k->rows && k->width != n))
            pcw__q_sink_flush(k);
        k->width = n;
        return k->rv + k->fill;
    }
    return k->fn ? k->rv : k->values + k->at;
}

/* The statuses of those values (after sink_values). */
static inline uint8_t *pcw__q_sink_status(pcw__q_sink *k)
{
    if (k->fnb) {
        if (k->valid > k->fill)
            k->valid = k->fill; /* the caller writes statuses from here */
        return k->rs + k->fill;
    }
    return k->fn ? k->rs : k->status ? k->status + k->at : NULL;
}

/* One instance's n values are written: hand them over (visit), or count
 * them into the block (visit_rows). */
static inline int pcw__q_sink_row(pcw__q_sink *k, uint32_t n)
{
    if (k->fnb) {
        k->fill += n, k->rows++;
    } else if (k->fn) {
        pcw_pdh_row row = {k->at, n, k->rv, k->rs};
        k->stop = k->fn(&row, k->arg);
    }
    k->at += n;
    return k->stop;
}

#endif /* PCW_QUERY_SINK_H */
