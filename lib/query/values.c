/*
 * lib/query/values.c - what a counter handle selects (entries x counters)
 * and its values: raw samples from the current and previous rows, cooked
 * with pcw_cook, and their paths.
 *
 * A counterset's entries are its visible totals (active ones, in creation
 * order) followed by its instances in value order; a globalAggregate or
 * instanceAggregate set shows only its totals. A handle's match in a set
 * keeps the entries its instance pattern selects, recomputed only when the
 * set's entries change (its epoch).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pcw/name.h"
#include "snaprows.h"

/* Rebuild s->ent if the set changed since. */
static int entries(pcwq_set *s)
{
    if (s->ent && s->ent_epoch == s->epoch)
        return 0;
    size_t need = s->nagg + s->norder + 1;
    if (pcwq_grow((void **)&s->ent, &s->ent_cap, need, sizeof *s->ent))
        return -1;
    size_t n = 0;
    for (size_t a = 0; a < s->nagg; a++)
        if (s->aggs[a].active)
            s->ent[n++] = (uint32_t)a | PCWQ_ENT_AGG;
    if (!s->it.global && !s->it.by_name)
        for (size_t o = 0; o < s->norder; o++)
            s->ent[n++] = s->order[o];
    s->nent = n;
    s->ent_epoch = s->epoch;
    return 0;
}

size_t pcwq_entry_count(const pcwq_set *s)
{
    return s->nent;
}

/* An entry's name (without #n) and #n. */
static const char *entry_name(const pcwq_set *s, uint32_t e, uint32_t *len, uint32_t *dup)
{
    if (e & PCWQ_ENT_AGG) {
        const pcwq_agg *a = &s->aggs[e & ~PCWQ_ENT_AGG];
        *len = a->name_len, *dup = 0;
        return a->name;
    }
    const pcwq_inst *x = &s->inst[e];
    *len = x->name_len, *dup = x->dup;
    return x->name;
}

static int entry_matches(const pcw_path *p, const char *name, uint32_t len, uint32_t dup)
{
    if (!p->instance)
        return len == 0 && dup == 0;
    if (!pcw_wildcard_match(p->instance, strlen(p->instance), name, len))
        return 0;
    if (p->has_index)
        return dup == p->index;
    return (p->wild & PCW_PATH_WILD_INSTANCE) ? 1 : dup == 0;
}

/* Is counter k of s selected by pattern `c`? Wildcards skip base counters
 * (used, never shown) and PERF_COUNTER_NODATA. */
int pcwq_counter_selected(const pcwq_set *s, const pcw_path *p, uint32_t k)
{
    const char *name = s->counter_names[k];
    if (p->wild & PCW_PATH_WILD_COUNTER) {
        uint32_t t = s->counter_types[k];
        if (pcw_counter_type_is_base(t) || t == PERF_COUNTER_NODATA)
            return 0;
        return pcw_wildcard_match(p->counter, strlen(p->counter), name, strlen(name));
    }
    return pcw_name_equal(p->counter, strlen(p->counter), name, strlen(name));
}

/* Is a previously matched instance's provider still among s's live ones? */
static int provider_present(const pcwq_set *s, uint64_t provider)
{
    int b = s->cur;
    for (size_t i = 0; i < s->nsrc[b]; i++)
        if (s->src[b][i].provider_id == provider)
            return s->src[b][i].alive;
    return 0;
}

int pcwq_match_update(pcw_pdh_counter *h, pcwq_match *mt)
{
    pcwq_set *s = mt->set;
    if (entries(s))
        return PCW_E_NO_MEMORY;
    if (mt->epoch == s->epoch && mt->ctr)
        return PCW_OK;
    /* Counters (they may differ after the set was registered again). */
    uint32_t *ctr = realloc(mt->ctr, (s->ncounters ? s->ncounters : 1) * sizeof *ctr);
    if (!ctr)
        return PCW_E_NO_MEMORY;
    mt->ctr = ctr;
    mt->nctr = 0;
    for (uint32_t k = 0; k < s->ncounters; k++)
        if (pcwq_counter_selected(s, &h->path, k))
            mt->ctr[mt->nctr++] = k;
    /* Entries. */
    const pcw_path *p = &h->path;
    mt->all = p->instance && strcmp(p->instance, "*") == 0 && !p->has_index &&
              (s->it.named || s->it.global);
    mt->nents = 0;
    if (!mt->all) {
        if (pcwq_grow((void **)&mt->ents, &mt->ents_cap, s->nent + 1, sizeof *mt->ents))
            return PCW_E_NO_MEMORY;
        for (size_t e = 0; e < s->nent; e++) {
            uint32_t len, dup;
            const char *name = entry_name(s, s->ent[e], &len, &dup);
            if (entry_matches(p, name, len, dup))
                mt->ents[mt->nents++] = (uint32_t)e;
        }
    } else {
        mt->nents = s->nent;
    }
    /* A named instance that is not there shows as one value saying why. */
    mt->placeholder = 0;
    if (!(p->wild & PCW_PATH_WILD_INSTANCE) && mt->nents == 0 && mt->nctr) {
        mt->placeholder = 1;
        mt->placeholder_status = mt->last_provider && !provider_present(s, mt->last_provider)
                                     ? PCW_CSTATUS_PROVIDER_GONE
                                     : PCW_CSTATUS_NO_INSTANCE;
        if (!s->m && mt->last_provider)
            mt->placeholder_status = PCW_CSTATUS_PROVIDER_GONE;
    } else if (mt->nents) {
        uint32_t e = s->ent[mt->all ? 0 : mt->ents[0]];
        mt->last_provider = (e & PCWQ_ENT_AGG) ? 0 : s->inst[e].provider_id;
    }
    mt->epoch = s->epoch;
    return PCW_OK;
}

/* ---- locating value i ---------------------------------------------------- */

typedef struct locus {
    const pcwq_match *mt;
    size_t ent; /* index into the set's entries; SIZE_MAX: placeholder */
    uint32_t k; /* counter index in the set */
} locus;

static size_t match_values(const pcwq_match *mt)
{
    if (mt->placeholder)
        return mt->nctr;
    return mt->nents * mt->nctr;
}

static int locate(const pcw_pdh_counter *h, size_t i, locus *l)
{
    for (size_t j = 0; j < h->nm; j++) {
        const pcwq_match *mt = &h->m[j];
        size_t n = match_values(mt);
        if (i >= n) {
            i -= n;
            continue;
        }
        l->mt = mt;
        size_t e = i / mt->nctr;
        l->k = mt->ctr[i % mt->nctr];
        l->ent = mt->placeholder ? SIZE_MAX : (mt->all ? e : mt->ents[e]);
        return 0;
    }
    return -1;
}

size_t pcw_pdh_value_count(const pcw_pdh_counter *ctr)
{
    size_t n = 0;
    if (ctr)
        for (size_t j = 0; j < ctr->nm; j++)
            n += match_values(&ctr->m[j]);
    return n;
}

/* ---- raw samples of an entry --------------------------------------------- */

/* The status a total's raw sample has for counter k: its own, or that of
 * a counter its recipe reads. */
static int agg_status(const pcwq_set *s, const uint8_t *st, uint32_t k)
{
    const pcwq_recipe *r = &s->recipes[k];
    int32_t refs[5] = {(int32_t)k, r->base, r->multi, r->time, r->freq_ctr};
    for (int i = 0; i < 5; i++)
        if (refs[i] >= 0 && st[refs[i]] != PCW_CSTATUS_VALID)
            return st[refs[i]];
    return PCW_CSTATUS_VALID;
}

/* now and prev (prev->status says if there is one) of entry e, counter k. */
static void entry_raw(const pcwq_set *s, uint32_t e, uint32_t k, pcw_raw *now, pcw_raw *prev)
{
    int b = s->cur, pb = b ^ 1;
    const pcwq_recipe *r = &s->recipes[k];
    prev->status = PCW_CSTATUS_NO_INSTANCE;
    if (e & PCWQ_ENT_AGG) {
        uint32_t a = e & ~PCWQ_ENT_AGG, nc = s->ncounters;
        const pcwq_agg *g = &s->aggs[a];
        pcwq_layout wl = {s->woff, s->wsize};
        pcwq_raw_from_row(r, (const unsigned char *)(s->arow[b] + (size_t)a * nc), &wl, s->atime[b],
                          now);
        if (now->status == PCW_CSTATUS_VALID)
            now->status = agg_status(s, s->ast[b] + (size_t)a * nc, k);
        if (g->had_row && s->arow[pb] && (size_t)(a + 1) * nc <= s->arow_cap[pb]) {
            pcwq_raw_from_row(r, (const unsigned char *)(s->arow[pb] + (size_t)a * nc), &wl,
                              s->atime[pb], prev);
            if (prev->status == PCW_CSTATUS_VALID)
                prev->status = agg_status(s, s->ast[pb] + (size_t)a * nc, k);
        }
        return;
    }
    const pcwq_inst *x = &s->inst[e];
    pcwq_layout lay = {s->off, s->size};
    if (x->row < 0) {
        memset(now, 0, sizeof *now);
        now->status = x->stale ? PCW_CSTATUS_PROVIDER_GONE : PCW_CSTATUS_NO_INSTANCE;
        return;
    }
    pcwq_raw_from_row(r, pcwq_row(&s->snap[b], (size_t)x->row), &lay, s->src[b][x->src].time_ns,
                      now);
    int32_t prow = s->identity ? x->row : x->prev_row;
    int32_t psrc = s->identity ? x->src : x->prev_src;
    if (prow >= 0 && psrc >= 0)
        pcwq_raw_from_row(r, pcwq_row(&s->snap[pb], (size_t)prow), &lay, s->src[pb][psrc].time_ns,
                          prev);
}

static int32_t scale_of(const pcw_pdh_counter *h, const pcwq_set *s, uint32_t k)
{
    return h->scale_set ? h->scale : s->default_scale[k];
}

int pcw_pdh_get_value(const pcw_pdh_counter *ctr, size_t i, unsigned flags, pcw_pdh_value *out)
{
    locus l;
    if (!ctr || !out || locate(ctr, i, &l))
        return PCW_E_INVALID_PARAMETER;
    const pcwq_set *s = l.mt->set;
    memset(out, 0, sizeof *out);
    out->counterset = s->name;
    out->counter = s->counter_names[l.k];
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
    uint32_t e = s->ent[l.ent];
    pcw_raw prev;
    entry_raw(s, e, l.k, &out->raw, &prev);
    out->status =
        pcw_cook(s->counter_types[l.k], &out->raw, prev.status == PCW_CSTATUS_VALID ? &prev : NULL,
                 scale_of(ctr, s, l.k), flags, &out->value);
    if (e & PCWQ_ENT_AGG) {
        const pcwq_agg *a = &s->aggs[e & ~PCWQ_ENT_AGG];
        out->instance = out->instance_name = a->name;
        out->kind = a->kind;
        out->sources = a->sources;
    } else {
        const pcwq_inst *x = &s->inst[e];
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
    locus l;
    if (!ctr || locate(ctr, i, &l)) {
        if (len)
            buf[0] = 0;
        return 0;
    }
    const pcwq_set *s = l.mt->set;
    const char *host = with_host ? pcw_path_local_host() : NULL;
    const char *inst = NULL;
    uint32_t dup = 0;
    if (l.ent == SIZE_MAX) {
        inst = ctr->path.instance;
        dup = ctr->path.index;
    } else {
        uint32_t e = s->ent[l.ent], nlen;
        inst = entry_name(s, e, &nlen, &dup);
    }
    /* A set without instance names writes its first instance without
     * parentheses and the others as (#n). */
    if (!s->it.named && inst && !inst[0] && dup == 0)
        inst = NULL;
    return pcw_path_build(buf, len, host, s->name, inst, dup, s->counter_names[l.k]);
}

/* ---- the fast way -------------------------------------------------------- */

static const pcwq_match *single(const pcw_pdh_counter *ctr)
{
    return ctr && ctr->nm == 1 ? &ctr->m[0] : NULL;
}

size_t pcw_pdh_instance_count(const pcw_pdh_counter *ctr)
{
    const pcwq_match *mt = single(ctr);
    if (!mt)
        return 0;
    return mt->placeholder ? 1 : mt->nents;
}

size_t pcw_pdh_selected_counter_count(const pcw_pdh_counter *ctr)
{
    const pcwq_match *mt = single(ctr);
    return mt ? mt->nctr : 0;
}

int pcw_pdh_cook_column(const pcw_pdh_counter *ctr, size_t kk, unsigned flags, double *values,
                        uint8_t *status)
{
    const pcwq_match *mt = single(ctr);
    if (!mt || kk >= mt->nctr || !values)
        return PCW_E_INVALID_PARAMETER;
    const pcwq_set *s = mt->set;
    uint32_t k = mt->ctr[kk];
    if (mt->placeholder) {
        values[0] = 0;
        if (status)
            status[0] = (uint8_t)mt->placeholder_status;
        return PCW_OK;
    }
    uint32_t type = s->counter_types[k];
    int32_t scale = scale_of(ctr, s, k);
    for (size_t i = 0; i < mt->nents; i++) {
        uint32_t e = s->ent[mt->all ? i : mt->ents[i]];
        pcw_raw now, prev;
        entry_raw(s, e, k, &now, &prev);
        int st = pcw_cook(type, &now, prev.status == PCW_CSTATUS_VALID ? &prev : NULL, scale, flags,
                          &values[i]);
        if (status)
            status[i] = (uint8_t)st;
    }
    return PCW_OK;
}
