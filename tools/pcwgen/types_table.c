/* SPDX-License-Identifier: MIT */
/*
 * types_table.c - manifest counter type names and the pcw/types.h values
 * they stand for.
 *
 * The spellings are the counters schema's enumeration (lower-case winperf.h
 * names). The values come from types.h itself, so pcwgen and the library
 * can never disagree; the macro names are what the generated header writes,
 * so the header stays readable.
 */
#include <string.h>

#include <pcw/types.h>

#include "manifest.h"

#define T(name, macro)                                                                             \
    {                                                                                              \
        name, #macro, macro                                                                        \
    }

static const mf_type_info types[] = {
    T("perf_counter_counter", PERF_COUNTER_COUNTER),
    T("perf_counter_timer", PERF_COUNTER_TIMER),
    T("perf_counter_queuelen_type", PERF_COUNTER_QUEUELEN_TYPE),
    T("perf_counter_large_queuelen_type", PERF_COUNTER_LARGE_QUEUELEN_TYPE),
    T("perf_counter_100ns_queuelen_type", PERF_COUNTER_100NS_QUEUELEN_TYPE),
    T("perf_counter_obj_time_queuelen_type", PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE),
    T("perf_counter_bulk_count", PERF_COUNTER_BULK_COUNT),
    T("perf_counter_text", PERF_COUNTER_TEXT),
    T("perf_counter_rawcount", PERF_COUNTER_RAWCOUNT),
    T("perf_counter_large_rawcount", PERF_COUNTER_LARGE_RAWCOUNT),
    T("perf_counter_rawcount_hex", PERF_COUNTER_RAWCOUNT_HEX),
    T("perf_counter_large_rawcount_hex", PERF_COUNTER_LARGE_RAWCOUNT_HEX),
    T("perf_sample_fraction", PERF_SAMPLE_FRACTION),
    T("perf_sample_counter", PERF_SAMPLE_COUNTER),
    T("perf_counter_nodata", PERF_COUNTER_NODATA),
    T("perf_counter_timer_inv", PERF_COUNTER_TIMER_INV),
    T("perf_sample_base", PERF_SAMPLE_BASE),
    T("perf_average_timer", PERF_AVERAGE_TIMER),
    T("perf_average_base", PERF_AVERAGE_BASE),
    T("perf_average_bulk", PERF_AVERAGE_BULK),
    T("perf_obj_time_timer", PERF_OBJ_TIME_TIMER),
    T("perf_100nsec_timer", PERF_100NSEC_TIMER),
    T("perf_100nsec_timer_inv", PERF_100NSEC_TIMER_INV),
    T("perf_counter_multi_timer", PERF_COUNTER_MULTI_TIMER),
    T("perf_counter_multi_timer_inv", PERF_COUNTER_MULTI_TIMER_INV),
    T("perf_counter_multi_base", PERF_COUNTER_MULTI_BASE),
    T("perf_100nsec_multi_timer", PERF_100NSEC_MULTI_TIMER),
    T("perf_100nsec_multi_timer_inv", PERF_100NSEC_MULTI_TIMER_INV),
    T("perf_raw_fraction", PERF_RAW_FRACTION),
    T("perf_large_raw_fraction", PERF_LARGE_RAW_FRACTION),
    T("perf_raw_base", PERF_RAW_BASE),
    T("perf_large_raw_base", PERF_LARGE_RAW_BASE),
    T("perf_elapsed_time", PERF_ELAPSED_TIME),
    T("perf_counter_histogram_type", PERF_COUNTER_HISTOGRAM_TYPE),
    T("perf_counter_delta", PERF_COUNTER_DELTA),
    T("perf_counter_large_delta", PERF_COUNTER_LARGE_DELTA),
    T("perf_precision_system_timer", PERF_PRECISION_SYSTEM_TIMER),
    T("perf_precision_100ns_timer", PERF_PRECISION_100NS_TIMER),
    T("perf_precision_object_timer", PERF_PRECISION_OBJECT_TIMER),
    /* winperf.h's alias for the precision timers' timestamp base; not in
     * the schema's enumeration, accepted for hand-written manifests. */
    T("perf_precision_timestamp", PERF_PRECISION_TIMESTAMP),
};

const mf_type_info *mf_type_lookup(const char *name)
{
    /* Case-sensitive, as the schema's enumeration is. */
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(types[i].name, name) == 0)
            return &types[i];
    return NULL;
}

const mf_type_info *mf_type_table(size_t *n)
{
    *n = sizeof types / sizeof types[0];
    return types;
}
