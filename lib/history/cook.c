/* SPDX-License-Identifier: MIT */
/*
 * lib/history/cook.c - a logged sample cooked as the live query cooked it:
 * a provider's instance with pcw_cook from its two raw samples (the query's
 * cook_one), a total or aggregate from the value the query computed,
 * finished with the query's own last step (pcwq_finish_percent).
 */
#include "history.h"

#include "../query/internal.h"

int hist_cook(const hist_series *s, const hist_value *now, const hist_value *prev, unsigned flags,
              double *value)
{
    return hist_cook_as(s->kind, s->type, s->scale, now, prev, flags, value);
}

int hist_cook_as(uint32_t kind, uint32_t type, int32_t scale, const hist_value *now,
                 const hist_value *prev, unsigned flags, double *value)
{
    double dummy;
    if (!value)
        value = &dummy;
    *value = 0.0;
    if (kind == HIST_KIND_RAW) {
        const pcw_raw *p = prev && prev->raw.status == PCW_CSTATUS_VALID ? &prev->raw : NULL;
        return pcw_cook(type, &now->raw, p, scale, flags, value);
    }
    if (now->raw.status != PCW_CSTATUS_VALID)
        return now->raw.status;
    if (flags & PCW_FMT_RAW)
        return PCW_CSTATUS_NO_DATA;
    /* (Logged capped: capping again is the identity.) */
    return pcwq_finish_percent(type, now->computed, scale, flags, value);
}
