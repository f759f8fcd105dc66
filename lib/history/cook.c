/* SPDX-License-Identifier: MIT */
/*
 * lib/history/cook.c - a logged sample cooked as the live query cooked it:
 * a provider's instance with pcw_cook from its two raw samples (the query's
 * cook_one), a total or aggregate from the value the query computed,
 * finished with the query's own last step (pcwq_finish_percent).
 */
#include <string.h>

#include "history.h"

#include "../query/internal.h"

int hist_cook(const hist_series *s, const hist_value *now, const hist_value *prev, unsigned flags,
              double *value)
{
    double dummy;
    if (!value)
        value = &dummy;
    *value = 0.0;
    if (s->kind == HIST_KIND_RAW) {
        const pcw_raw *p = prev && prev->raw.status == PCW_CSTATUS_VALID ? &prev->raw : NULL;
        return pcw_cook(s->type, &now->raw, p, s->scale, flags, value);
    }
    if (now->raw.status != PCW_CSTATUS_VALID)
        return now->raw.status;
    if (flags & PCW_FMT_RAW)
        return PCW_CSTATUS_NO_DATA;
    /* (Logged capped: capping again is the identity.) */
    return pcwq_finish_percent(s->type, now->computed, s->scale, flags, value);
}

int hist_dist(const hist_series *s, const hist_value *now, const hist_value *prev, unsigned flags,
              uint64_t *buckets, pcw_hist_dist *out)
{
    memset(out, 0, sizeof *out);
#if HIST_VERSION >= 2
    /* Buckets are logged for a provider's instance (version 2); a total's
     * statistics are logged as values, its merged buckets are not. */
    if (s->kind != HIST_KIND_RAW || s->type != PERF_PCW_HISTOGRAM || !s->hshape)
        return out->status = PCW_CSTATUS_NO_DATA;
    if (now->raw.status != PCW_CSTATUS_VALID)
        return out->status = now->raw.status;
    if (!now->hn)
        return out->status = PCW_CSTATUS_NO_DATA;
    int cumulative = (flags & PCW_HIST_CUMULATIVE) != 0;
    if (!cumulative && (!prev || prev->raw.status != PCW_CSTATUS_VALID || prev->hn != now->hn))
        return out->status = PCW_CSTATUS_NEW_DATA_NEEDED; /* as live: the first sample */
    pcwq_hspan sp;
    int st = pcwq_hist_interval(s->hshape, now->hwords, cumulative ? NULL : prev->hwords, buckets,
                                out, &sp);
    if (st != PCW_CSTATUS_VALID) {
        memset(out, 0, sizeof *out);
        return out->status = st;
    }
    if (!cumulative) /* the instance's read times, as live */
        out->interval_ns =
            now->raw.time_ns > prev->raw.time_ns ? now->raw.time_ns - prev->raw.time_ns : 0;
    return st;
#else
    /* Format version 1 logs a histogram's status only: no buckets. (The
     * version 2 format of the histogram branch, h-hrec, compiles the code
     * above once merged.) */
    (void)s, (void)now, (void)prev, (void)flags, (void)buckets;
    return out->status = PCW_CSTATUS_NO_DATA;
#endif
}
