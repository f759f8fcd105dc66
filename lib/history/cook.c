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
    /* Format version 1 logs a histogram's status only: no buckets. */
    (void)s, (void)now, (void)prev, (void)flags, (void)buckets;
    memset(out, 0, sizeof *out);
    out->status = PCW_CSTATUS_NO_DATA;
    return out->status;
}
