/* SPDX-License-Identifier: MIT */
/*
 * lib/query/logcook.c - a logged sample cooked as the live query cooked it:
 * a provider's instance with pcw_cook from its two raw samples (the query's
 * cook_one), a histogram's statistic from the interval between its two
 * samples' words (the query's instance_dist and pcw__q_hist_value), a total
 * or aggregate from the value the query computed, finished with the
 * query's own last step (pcw__q_finish_percent).
 */
#include <math.h>
#include <string.h>

#include "../history/history.h"
#include "internal.h"
#include "logsource.h"
#include "pcw/histogram.h"

/* A histogram instance's statistic (now VALID, with its words). */
static int cook_histogram(const pcw__hist_series *s, const pcw__hist_value *now,
                          const pcw__hist_value *prev, unsigned flags, double *value)
{
    int cumulative = (flags & PCW_FMT_RAW) != 0;
    if (!cumulative && (!prev || prev->raw.status != PCW_CSTATUS_VALID || prev->hn != now->hn))
        return PCW_CSTATUS_NEW_DATA_NEEDED; /* the instance's first sample */
    uint64_t buckets[PCW_HIST_MAX_BUCKETS];
    pcw_hist_dist d;
    pcw__q_hspan sp;
    pcw__q_hist_interval(s->hshape, now->hwords, cumulative ? NULL : prev->hwords, buckets, &d,
                         &sp);
    if (!cumulative)
        d.interval_ns =
            now->raw.time_ns > prev->raw.time_ns ? now->raw.time_ns - prev->raw.time_ns : 0;
    else if (s->hstat.kind == PCW_HSTAT_RATE && d.status == PCW_CSTATUS_VALID)
        return PCW_CSTATUS_NO_DATA; /* no rate since the start */
    int rc = pcw__q_hist_cook(&d, &sp, &s->hstat, value);
    if ((rc == PCW_CSTATUS_VALID || rc == PCW_CSTATUS_ABOVE_RANGE) && (flags & PCW_FMT_1000))
        *value *= 1000.0;
    return rc;
}

int pcw__hist_cook(const pcw__hist_series *s, const pcw__hist_value *now,
                   const pcw__hist_value *prev, unsigned flags, double *value)
{
    double dummy;
    if (!value)
        value = &dummy;
    *value = 0.0;
    int hist = s->type == PERF_PCW_HISTOGRAM && s->hshape;
    if (s->kind == PCW__HIST_KIND_RAW) {
        if (hist && now->raw.status == PCW_CSTATUS_VALID && now->hn)
            return cook_histogram(s, now, prev, flags, value);
        const pcw_raw *p = prev && prev->raw.status == PCW_CSTATUS_VALID ? &prev->raw : NULL;
        return pcw_cook(s->type, &now->raw, p, s->scale, flags, value);
    }
    if (flags & PCW_FMT_RAW)
        return now->raw.status == PCW_CSTATUS_VALID ? PCW_CSTATUS_NO_DATA : now->raw.status;
    if (hist &&
        (now->raw.status == PCW_CSTATUS_VALID || now->raw.status == PCW_CSTATUS_ABOVE_RANGE)) {
        /* A histogram total's statistic, as pcw__q_hist_value finished it:
         * no scale, no cap; x1000 on request. The log is hostile: a number
         * that is not finite is none (as pcw__q_finish_percent says). */
        double x = now->computed * ((flags & PCW_FMT_1000) ? 1000.0 : 1.0);
        if (!isfinite(x))
            return PCW_CSTATUS_OVERFLOW;
        *value = x;
        return now->raw.status;
    }
    if (now->raw.status != PCW_CSTATUS_VALID)
        return now->raw.status;
    /* (Logged capped: capping again is the identity.) */
    return pcw__q_finish_percent(s->type, now->computed, s->scale, flags, value);
}

int pcw__hist_dist(const pcw__hist_series *s, const pcw__hist_value *now,
                   const pcw__hist_value *prev, unsigned flags, uint64_t *buckets,
                   pcw_hist_dist *out)
{
    memset(out, 0, sizeof *out);
    /* Buckets are logged for a provider's instance (version 2); a total's
     * statistics are logged as values, its merged buckets are not. */
    if (s->kind != PCW__HIST_KIND_RAW || s->type != PERF_PCW_HISTOGRAM || !s->hshape)
        return out->status = PCW_CSTATUS_NO_DATA;
    if (now->raw.status != PCW_CSTATUS_VALID)
        return out->status = now->raw.status;
    if (!now->hn)
        return out->status = PCW_CSTATUS_NO_DATA;
    int cumulative = (flags & PCW_HIST_CUMULATIVE) != 0;
    if (!cumulative && (!prev || prev->raw.status != PCW_CSTATUS_VALID || prev->hn != now->hn))
        return out->status = PCW_CSTATUS_NEW_DATA_NEEDED; /* as live: the first sample */
    pcw__q_hspan sp;
    int st = pcw__q_hist_interval(s->hshape, now->hwords, cumulative ? NULL : prev->hwords, buckets,
                                  out, &sp);
    if (st != PCW_CSTATUS_VALID) {
        memset(out, 0, sizeof *out);
        return out->status = st;
    }
    if (!cumulative) /* the instance's read times, as live */
        out->interval_ns =
            now->raw.time_ns > prev->raw.time_ns ? now->raw.time_ns - prev->raw.time_ns : 0;
    return st;
}

int pcwl_fast_kind(const pcw__hist_series *s)
{
    /* pcw__hist_cook's dispatch: a computed series, or a histogram's with
     * a shape, takes its own branches; everything else is pcw_cook's. */
    if (s->kind != PCW__HIST_KIND_RAW || (s->type == PERF_PCW_HISTOGRAM && s->hshape))
        return PCWL_FAST_GENERIC;
    int f = pcw__q_formula(s->type);
    int pct = (s->type & 0xF0000000u) == PCW_PERF_DISPLAY_PERCENT;
    if (f == PCW__Q_F_NONE)
        return PCWL_FAST_NO_DATA;
    if (f == PCW__Q_F_RAW && !pct)
        return PCWL_FAST_RAW;
    if (f == PCW__Q_F_RAW_FRACTION && pct)
        return PCWL_FAST_FRACTION;
    if (f == PCW__Q_F_RATE && !pct)
        return PCWL_FAST_RATE;
    return PCWL_FAST_GENERIC;
}
