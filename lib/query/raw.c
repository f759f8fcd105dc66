/* SPDX-License-Identifier: MIT */
/*
 * lib/query/raw.c - the providers' own instances of a handle's counterset,
 * raw (pcw_pdh_raw_*), and the providers of its last collection
 * (pcw_pdh_get_source): what an exporter writes out.
 *
 * The instances are the set's order[0..nread): every row of the last
 * fetch, provider by provider, before the stale instances (whose provider
 * did not answer) and whatever entries the path selects (totals,
 * aggregates, #n). Each value is made from the row with the counter's
 * recipe, as every other value is (cook.c).
 */
#include <string.h>

#include "cook.h"
#include "pdh.h"
#include "snaprows.h"

/* The one set the handle matches; NULL otherwise. */
static const pcw__q_set *one_set(const pcw_pdh_counter *ctr)
{
    return ctr && ctr->nm == 1 ? ctr->m[0].set : NULL;
}

/* The name of the provider of segment `seg` (consumer index). */
static const char *provider_name(const pcw_pdh *q, uint32_t seg)
{
    pcw_segment *sg = pcw_consumer_segment(q->c, seg);
    const pcw_provider_info *info = sg ? pcw_segment_provider(sg) : NULL;
    return info && info->name ? info->name : "";
}

size_t pcw_pdh_raw_count(const pcw_pdh_counter *ctr)
{
    const pcw__q_set *s = one_set(ctr);
    return s ? s->ins.nread : 0;
}

uint64_t pcw_pdh_raw_epoch(const pcw_pdh_counter *ctr)
{
    const pcw__q_set *s = one_set(ctr);
    return s ? s->epoch : 0;
}

int pcw_pdh_raw_instance_at(const pcw_pdh_counter *ctr, size_t i, pcw_pdh_raw_instance *out)
{
    const pcw__q_set *s = one_set(ctr);
    if (!s || !out || i >= s->ins.nread)
        return PCW_E_INVALID_PARAMETER;
    const pcw__q_inst *x = &s->ins.inst[s->ins.order[i]];
    memset(out, 0, sizeof *out);
    out->name = x->name;
    out->name_len = x->name_len;
    out->dup_index = x->dup;
    out->instance_id = x->id;
    out->pid = x->pid;
    out->provider_id = x->provider_id;
    out->provider = x->src >= 0 && (size_t)x->src < s->nsrc[s->cur]
                        ? provider_name(ctr->q, s->src[s->cur][x->src].seg)
                        : "";
    return PCW_OK;
}

int pcw_pdh_raw_column(const pcw_pdh_counter *ctr, uint32_t counter_index, pcw_raw *out)
{
    const pcw__q_set *s = one_set(ctr);
    if (!s || counter_index >= s->ncounters || (!out && s->ins.nread))
        return PCW_E_INVALID_PARAMETER;
    int b = s->cur;
    const pcw_snapshot *snap = pcw__q_snap(s, b);
    const pcw__q_recipe *rc = &s->recipes[counter_index];
    pcw__q_layout lay = {s->off, s->size};
    if (s->ins.in_order) {
        /* Instance i is row i: walk the rows provider by provider, without
         * touching the instance records (the steady state of a segment
         * counterset). */
        for (size_t k = 0; k < s->nsrc[b]; k++) {
            const pcw__q_src *x = &s->src[b][k];
            for (size_t r = x->first; r < x->first + x->count && r < s->ins.nread; r++)
                pcw__q_raw_from_row(rc, pcw__q_row(snap, r), &lay, x->time_ns, &out[r]);
        }
        return PCW_OK;
    }
    for (size_t i = 0; i < s->ins.nread; i++) {
        const pcw__q_inst *x = &s->ins.inst[s->ins.order[i]];
        if (x->row < 0 || (size_t)x->row >= snap->count || x->src < 0 ||
            (size_t)x->src >= s->nsrc[b]) {
            /* Only after a collection that failed half-way. */
            memset(&out[i], 0, sizeof out[i]);
            out[i].status = PCW_CSTATUS_NO_INSTANCE;
            continue;
        }
        pcw__q_raw_from_row(rc, pcw__q_row(snap, (size_t)x->row), &lay, s->src[b][x->src].time_ns,
                            &out[i]);
    }
    return PCW_OK;
}

int pcw_pdh_raw_histogram(const pcw_pdh_counter *ctr, uint32_t counter_index, size_t i,
                          uint64_t *words, size_t nwords)
{
    const pcw__q_set *s = one_set(ctr);
    if (!s || !words || counter_index >= s->ncounters || i >= s->ins.nread ||
        s->counter_types[counter_index] != PERF_PCW_HISTOGRAM || nwords < 2 ||
        s->off[counter_index] > s->data_size || nwords > (s->data_size - s->off[counter_index]) / 8)
        return PCW_E_INVALID_PARAMETER;
    int b = s->cur;
    const pcw_snapshot *snap = pcw__q_snap(s, b);
    size_t row = i;
    if (!s->ins.in_order) {
        const pcw__q_inst *x = &s->ins.inst[s->ins.order[i]];
        if (x->row < 0 || (size_t)x->row >= snap->count)
            return PCW_E_NOT_FOUND; /* only after a collection that failed half-way */
        row = (size_t)x->row;
    }
    /* memcpy: the row is 8-byte aligned, the offset a segment's (hostile). */
    memcpy(words, pcw__q_row(snap, row) + s->off[counter_index], nwords * 8);
    return PCW_OK;
}

size_t pcw_pdh_source_count(const pcw_pdh_counter *ctr)
{
    size_t n = 0;
    if (ctr)
        for (size_t j = 0; j < ctr->nm; j++)
            n += ctr->m[j].set->nsrc[ctr->m[j].set->cur];
    return n;
}

int pcw_pdh_get_source(const pcw_pdh_counter *ctr, size_t i, pcw_pdh_source *out)
{
    if (!ctr || !out)
        return PCW_E_INVALID_PARAMETER;
    for (size_t j = 0; j < ctr->nm; j++) {
        const pcw__q_set *s = ctr->m[j].set;
        size_t n = s->nsrc[s->cur];
        if (i >= n) {
            i -= n;
            continue;
        }
        const pcw__q_src *x = &s->src[s->cur][i];
        memset(out, 0, sizeof *out);
        out->pid = x->pid;
        out->provider_id = x->provider_id;
        out->provider = provider_name(ctr->q, x->seg);
        out->status = x->status;
        out->instances = x->count;
        return PCW_OK;
    }
    return PCW_E_INVALID_PARAMETER;
}
