/* SPDX-License-Identifier: MIT */
/*
 * lib/query/totals.c - the raw rows of a counterset's totals for the
 * current sample: _Total (multipleAggregate), the one instance of a
 * globalAggregate set, one per name of an instanceAggregate set.
 *
 * Each counter is totalled with its aggregate function over the instances
 * read now; a History set adds what departed instances last showed, and
 * an instance whose provider did not answer this time counts with its last
 * values (only History sets keep them). The result is a row in the "wide"
 * layout (every counter 8 bytes), cooked like any instance's row.
 */
#include <string.h>

#include "internal.h"
#include "snaprows.h"

int pcwq_totals(pcwq_set *s)
{
    if (!s->nagg)
        return PCW_OK;
    int b = s->cur;
    uint32_t nc = s->ncounters;
    size_t cells = s->nagg * (size_t)(nc ? nc : 1);
    if (pcwq_grow((void **)&s->arow[b], &s->arow_cap[b], cells, sizeof *s->arow[b]) ||
        pcwq_grow((void **)&s->ast[b], &s->ast_cap[b], cells, sizeof *s->ast[b]))
        return PCW_E_NO_MEMORY;
    if (pcwq_grow((void **)&s->acc, &s->acc_cap, cells, sizeof *s->acc))
        return PCW_E_NO_MEMORY;
    for (size_t i = 0; i < cells; i++)
        pcwq_acc_reset(&s->acc[i]);
    for (size_t a = 0; a < s->nagg; a++)
        s->aggs[a].sources = 0;
    const pcw_snapshot *snap = pcwq_snap(s, b);
    pcwq_layout lay = {s->off, s->size};
    for (size_t o = 0; o < s->norder; o++) {
        pcwq_inst *x = &s->inst[s->order[o]];
        const unsigned char *row = NULL;
        if (x->row >= 0) {
            row = pcwq_row(snap, (size_t)x->row);
            if (x->last)
                memcpy(x->last, row, s->data_size);
        } else if (x->stale) {
            row = x->last;
        }
        if (!row)
            continue;
        size_t g = s->it.by_name ? x->agg : 0;
        pcwq_acc *acc = &s->acc[g * nc];
        for (uint32_t k = 0; k < nc; k++)
            pcwq_acc_add(&acc[k], pcwq_load(row, &lay, k));
        s->aggs[g].sources++;
    }
    uint64_t t = 0;
    for (size_t i = 0; i < s->nsrc[b]; i++)
        if (s->src[b][i].time_ns > t)
            t = s->src[b][i].time_ns;
    s->atime[b] = t;
    for (size_t a = 0; a < s->nagg; a++) {
        pcwq_agg *g = &s->aggs[a];
        pcwq_acc *acc = &s->acc[a * nc];
        if (g->hist)
            for (uint32_t k = 0; k < nc; k++)
                pcwq_acc_merge(&acc[k], &g->hist[k]);
        for (uint32_t k = 0; k < nc; k++)
            s->ast[b][a * nc + k] =
                (uint8_t)pcwq_acc_result(&acc[k], s->aggfn[k], &s->arow[b][a * nc + k]);
        g->had_row = g->has_row;
        g->has_row = g->active;
    }
    return PCW_OK;
}
