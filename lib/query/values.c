/* SPDX-License-Identifier: MIT */
/*
 * lib/query/values.c - a handle's values one at a time: which value i is
 * (entries x columns, match by match), its raw sample and cooked value,
 * its path, its histogram. The whole handle at once is walk.c's.
 */
#include <stdint.h>
#include <string.h>

#include "cook.h"
#include "hist_query.h"
#include "match.h"
#include "path.h"
#include "rows.h"
#include "values.h"
#include "logsource.h"

/* ---- locating value i ---------------------------------------------------- */

typedef struct locus {
    const pcw__q_match *mt;
    size_t ent; /* index into the set's entries; SIZE_MAX: placeholder */
    uint32_t k; /* counter index in the set */
    uint32_t c; /* column in the match */
} locus;

static size_t match_values(const pcw__q_match *mt)
{
    if (mt->placeholder)
        return mt->nctr;
    return mt->nents * mt->nctr;
}

static int locate(const pcw_pdh_counter *h, size_t i, locus *l)
{
    for (size_t j = 0; j < h->nm; j++) {
        const pcw__q_match *mt = &h->m[j];
        size_t n = match_values(mt);
        if (i >= n) {
            i -= n;
            continue;
        }
        l->mt = mt;
        size_t e = i / mt->nctr;
        l->c = (uint32_t)(i % mt->nctr);
        l->k = mt->ctr[l->c];
        l->ent = mt->placeholder ? SIZE_MAX : (mt->all ? e : mt->ents[e]);
        return 0;
    }
    return -1;
}

uint64_t pcw_pdh_instance_epoch(const pcw_pdh_counter *ctr)
{
    return ctr ? ctr->epoch : 0;
}

size_t pcw_pdh_value_count(const pcw_pdh_counter *ctr)
{
    if (PCWL_H(ctr))
        return pcwl_value_count(ctr);
    size_t n = 0;
    if (ctr)
        for (size_t j = 0; j < ctr->nm; j++)
            n += match_values(&ctr->m[j]);
    return n;
}

int pcw__q_cook_value(const pcw_pdh_counter *h, const pcw__q_set *s, const pcw__q_rows *w,
                      uint32_t e, uint32_t k, const pcw_hist_stat *hs, unsigned flags, pcw_raw *now,
                      double *v)
{
    pcw_raw prev;
    if (hs && hs->kind) {
        memset(now, 0, sizeof *now);
        now->status = w->row ? PCW_CSTATUS_VALID : w->status;
        now->time_ns = w->t;
        return pcw__q_hist_value(h, s, e, k, hs, flags, v);
    }
    pcw__q_rows_raw(s, w, k, now, &prev);
    if (!(e & PCW__Q_ENT_AGG))
        return pcw_cook(s->counter_types[k], now, prev.status == PCW_CSTATUS_VALID ? &prev : NULL,
                        pcw__q_scale_of(h, s, k), flags, v);
    const pcw__q_tval *t = &s->tot.tval[(size_t)(e & ~PCW__Q_ENT_AGG) * s->ncounters + k];
    *v = 0.0;
    if (flags & PCW_FMT_RAW) {
        if (t->raw_status == PCW_CSTATUS_VALID)
            *v = t->raw;
        return t->raw_status;
    }
    if (t->status != PCW_CSTATUS_VALID)
        return t->status;
    return pcw__q_finish(s->counter_types[k], t->v, pcw__q_scale_of(h, s, k), flags, v);
}

int pcw_pdh_get_value(const pcw_pdh_counter *ctr, size_t i, unsigned flags, pcw_pdh_value *out)
{
    if (PCWL_H(ctr))
        return pcwl_get_value(ctr, i, flags, out);
    locus l;
    if (!ctr || !out || locate(ctr, i, &l))
        return PCW_E_INVALID_PARAMETER;
    const pcw__q_set *s = l.mt->set;
    memset(out, 0, sizeof *out);
    out->counterset = s->name;
    out->counter = l.mt->cname[l.c] ? l.mt->cname[l.c] : s->counter_names[l.k];
    out->counter_index = l.k;
    out->counter_type = s->counter_types[l.k];
    out->instance_id = PCW_ANY_INSTANCE_ID;
    if (l.ent == SIZE_MAX) {
        out->status = l.mt->placeholder_status;
        out->raw.status = out->status;
        out->instance = out->instance_name = ctr->path.instance ? ctr->path.instance : "";
        out->dup_index = ctr->path.index;
        return PCW_OK;
    }
    uint32_t e = s->entries.ent[l.ent];
    pcw__q_rows w;
    pcw__q_entry_rows(s, e, &w);
    out->status =
        pcw__q_cook_value(ctr, s, &w, e, l.k, &l.mt->hst[l.c], flags, &out->raw, &out->value);

    if (e & PCW__Q_ENT_AGG) {
        const pcw__q_agg *a = &s->aggs[e & ~PCW__Q_ENT_AGG];
        out->instance = out->instance_name = a->name;
        out->kind = a->kind;
        out->sources = a->sources;
    } else {
        const pcw__q_inst *x = &s->ins.inst[e];
        out->instance = x->disp;
        out->instance_name = x->name;
        out->dup_index = x->dup;
        out->instance_id = x->id;
        out->pid = x->pid;
        out->provider_id = x->provider_id;
        out->kind = PCW_PDH_INSTANCE;
        out->sources = 1;
    }
    return PCW_OK;
}

size_t pcw_pdh_value_path(const pcw_pdh_counter *ctr, size_t i, int with_host, char *buf,
                          size_t len)
{
    if (PCWL_H(ctr))
        return pcwl_value_path(ctr, i, with_host, buf, len);
    locus l;
    if (!ctr || locate(ctr, i, &l)) {
        if (len && buf)
            buf[0] = 0;
        return 0;
    }
    const pcw__q_set *s = l.mt->set;
    /* A container's value keeps the container its path named: the path
     * read back selects the same value. */
    const char *host = ctr->path.container ? ctr->path.container
                       : with_host         ? pcw_path_local_host()
                                           : NULL;
    const char *inst = NULL;
    uint32_t dup = 0;
    if (l.ent == SIZE_MAX) {
        inst = ctr->path.instance;
        dup = ctr->path.index;
    } else {
        uint32_t e = s->entries.ent[l.ent], nlen;
        inst = pcw__q_entry_name(s, e, &nlen, &dup);
    }
    /* A set without instance names writes its first instance without
     * parentheses and the others as (#n). */
    if (!s->it.named && inst && !inst[0] && dup == 0)
        inst = NULL;
    return pcw_path_build(buf, len, host, s->name, inst, dup,
                          l.mt->cname[l.c] ? l.mt->cname[l.c] : s->counter_names[l.k]);
}

/* ---- a handle of one counterset ----------------------------------------- */

size_t pcw_pdh_instance_count(const pcw_pdh_counter *ctr)
{
    if (PCWL_H(ctr))
        return pcwl_instance_count(ctr);
    const pcw__q_match *mt = pcw__q_match_single(ctr);
    if (!mt)
        return 0;
    return mt->placeholder ? 1 : mt->nents;
}

size_t pcw_pdh_selected_counter_count(const pcw_pdh_counter *ctr)
{
    if (PCWL_H(ctr))
        return pcwl_selected_counter_count(ctr);
    const pcw__q_match *mt = pcw__q_match_single(ctr);
    return mt ? mt->nctr : 0;
}

/* ---- histograms ------------------------------------------------------------ */

int pcw_pdh_get_histogram(const pcw_pdh_counter *ctr, size_t i, unsigned flags, pcw_hist_dist *out)
{
    if (PCWL_H(ctr))
        return pcwl_get_histogram(ctr, i, flags, out);
    locus l;
    if (!ctr || !out || locate(ctr, i, &l))
        return PCW_E_INVALID_PARAMETER;
    memset(out, 0, sizeof *out);
    const pcw__q_set *s = l.mt->set;
    if (!l.mt->hst[l.c].kind) {
        out->status = PCW_CSTATUS_NO_DATA; /* not a histogram */
        return PCW_OK;
    }
    if (l.ent == SIZE_MAX) {
        out->status = l.mt->placeholder_status;
        return PCW_OK;
    }
    const pcw__q_hcache *hc =
        pcw__q_hist_entry(ctr, s, s->entries.ent[l.ent], l.k, (flags & PCW_HIST_CUMULATIVE) != 0);
    if (!hc)
        return PCW_E_NO_MEMORY;
    const pcw_hist_dist *d = &hc->d;
    if (d->status == PCW_CSTATUS_VALID)
        *out = *d;
    else
        out->status = d->status;
    return PCW_OK;
}
