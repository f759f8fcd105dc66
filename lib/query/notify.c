/* SPDX-License-Identifier: MIT */
/*
 * lib/query/notify.c - PERFLIB's ADD_COUNTER / REMOVE_COUNTER: a provider
 * with a control channel is told of each counter a query adds (and, when
 * the handle goes, removes), once per provider, including providers that
 * appear after the counter was added.
 *
 * The instance mask sent is the path's instance name (without #n), or "*"
 * when the values need every instance: a total, a global or per-name
 * aggregate is computed here from all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "fetch.h"
#include "notify.h"
#include "path.h"
#include "common/layout.h"
#include "common/name.h"
#include "util.h"

static int told(const pcw__q_match *mt, uint64_t id)
{
    for (size_t i = 0; i < mt->ntold; i++)
        if (mt->told[i] == id)
            return 1;
    return 0;
}

void pcw__q_notify_forget(pcw__q_match *mt)
{
    mt->ntold = 0;
}

/* The mask is the path's instance pattern whole: a name whose parent and
 * instance match the sides of "parent/instance" (pcw__q_instance_match)
 * matches the pattern as one string too, so the provider is asked for a
 * superset of what the handle shows. */
static const char *mask_of(const pcw_pdh_counter *h, const pcw__q_set *s)
{
    const char *p = h->path.instance;
    if (!p || !s->it.named || s->it.by_name || s->it.global)
        return "*";
    if (s->it.total && pcw__q_instance_match(p, "_Total", 6))
        return "*";
    return p;
}

void pcw__q_notify(pcw_pdh *q, pcw_pdh_counter *h, pcw__q_match *mt, int add)
{
    pcw__q_set *s = mt->set;
    if (!s->m || !mt->nctr) {
        if (!add)
            pcw__q_notify_forget(mt);
        return;
    }
    size_t n = s->m->source_count;
    uint32_t stack_seg[16], *segs = n <= 16 ? stack_seg : malloc(n * sizeof *segs);
    const pcw_counterset *stack_cs[16], **css = n <= 16 ? stack_cs : malloc(n * sizeof *css);
    uint64_t stack_id[16], *ids = n <= 16 ? stack_id : malloc(n * sizeof *ids);
    size_t k = 0;
    if (!segs || !css || !ids)
        goto out; /* out of memory: the notification is best effort */
    for (size_t i = 0; i < n; i++) {
        pcw_segment *seg = pcw_consumer_segment(q->c, s->m->source_segment[i]);
        if (!seg)
            continue;
        const pcw_provider_info *info = pcw_segment_provider(seg);
        if (!(info->flags & PCW_SEG_F_CONTROL) &&
            !(s->m->source_cset[i]->flags & PCW_CSET_F_CALLBACK))
            continue; /* nobody to tell */
        uint64_t id = pcw__q_provider_id(info);
        if (add == told(mt, id))
            continue;
        segs[k] = s->m->source_segment[i], css[k] = s->m->source_cset[i], ids[k++] = id;
    }
    if (k) {
        pcw_merged_counterset sub = {s->m->meta, k, segs, css, 0};
        pcw_query mask = {~0ull, PCW_ANY_INSTANCE_ID, mask_of(h, s)};
        for (uint32_t c = 0; c < mt->nctr; c++) {
            if (c && mt->ctr[c] == mt->ctr[c - 1])
                continue; /* another statistic of the same histogram */
            /* Within the call's time limit for notifications (half of it
             * in a collection: budget.h); a request is always sent (the
             * provider must hear it), only the wait for its answer is cut
             * to 1 ms once the limit is spent. */
            pcw__q_budget_arm_notify(q);
            if (add)
                (void)pcw_consumer_add_counter(q->c, &sub, mt->ctr[c], &mask, NULL);
            else
                (void)pcw_consumer_remove_counter(q->c, &sub, mt->ctr[c], &mask, NULL);
        }
    }
    if (!add) {
        pcw__q_notify_forget(mt);
    } else if (k && pcw__q_grow((void **)&mt->told, &mt->told_cap, mt->ntold + k,
                                sizeof *mt->told) == 0) {
        memcpy(mt->told + mt->ntold, ids, k * sizeof *ids);
        mt->ntold += k;
    }
out:
    if (segs != stack_seg)
        free(segs);
    if (css != stack_cs)
        free(css);
    if (ids != stack_id)
        free(ids);
}
