/* SPDX-License-Identifier: MIT */
/*
 * hist_tu2.c - the second translation unit of test_hist: includes the
 * header generated from tests/pcwgen/manifests/histogram.man again.
 */
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include "provider_types.h"

#include "histogram.h"
#include "tu2.h"

pcw_registration *hist_tu2_handle(void)
{
    return HistWebRequests;
}

void hist_tu2_observe_latency(pcw_instance *inst, uint64_t ns)
{
    HistWebRequests_Latency_observe(HistWebRequests_values_of(inst), ns);
}
