/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/mapping.c - the counter type -> metric families table
 * (mapping.h). docs/exporter.md shows the same table; change both.
 *
 * The time base TB is the raw sample's `freq`: 10^9 for pcw's system
 * time (CLOCK_MONOTONIC nanoseconds), 10^7 for the 100 ns types, the
 * perf_freq_id counter for object time and, when it names one, for the
 * types that count ticks of the system clock (docs/query.md, "pcw's time
 * base"). PERF_COUNTER_MULTI_TIMER's X counts ticks, as every timer's.
 */
#include <stddef.h>

#include <pcw/histogram.h>
#include <pcw/types.h>

#include "mapping.h"

#define FAM(infix, unit, type, value, count, help)                                                 \
    {                                                                                              \
        infix, unit, type, value, count, help                                                      \
    }
#define NONE 0

/* The families a base makes: their help, followed by the counter's
 * family name. */
#define BASE_HELP  "Base (denominator) of"
#define ITEMS_HELP "Items (the multi count) the time is summed over, of"
#define CLOCK_HELP "Timestamp in seconds (the base) of"

static const type_rule rules[] = {
    /* Instantaneous values: gauges. */
    {PERF_COUNTER_RAWCOUNT, 1, {FAM("", "", MT_GAUGE, V_X, NONE, NULL)}},
    {PERF_COUNTER_LARGE_RAWCOUNT, 1, {FAM("", "", MT_GAUGE, V_X, NONE, NULL)}},
    {PERF_COUNTER_RAWCOUNT_HEX, 1, {FAM("", "", MT_GAUGE, V_X, NONE, NULL)}},
    {PERF_COUNTER_LARGE_RAWCOUNT_HEX, 1, {FAM("", "", MT_GAUGE, V_X, NONE, NULL)}},
    /* Cumulative counts: counters (rate() is the /s PDH shows; increase()
     * the delta). */
    {PERF_COUNTER_COUNTER, 1, {FAM("", "", MT_COUNTER, V_X, NONE, NULL)}},
    {PERF_COUNTER_BULK_COUNT, 1, {FAM("", "", MT_COUNTER, V_X, NONE, NULL)}},
    {PERF_SAMPLE_COUNTER, 1, {FAM("", "", MT_COUNTER, V_X, NONE, NULL)}},
    {PERF_COUNTER_DELTA, 1, {FAM("", "", MT_COUNTER, V_X, NONE, NULL)}},
    {PERF_COUNTER_LARGE_DELTA, 1, {FAM("", "", MT_COUNTER, V_X, NONE, NULL)}},
    /* Fractions: numerator and base. */
    {PERF_RAW_FRACTION,
     2,
     {FAM("", "", MT_GAUGE, V_X, NONE, NULL), FAM("_base", "", MT_GAUGE, V_B, NONE, BASE_HELP)}},
    {PERF_LARGE_RAW_FRACTION,
     2,
     {FAM("", "", MT_GAUGE, V_X, NONE, NULL), FAM("_base", "", MT_GAUGE, V_B, NONE, BASE_HELP)}},
    {PERF_SAMPLE_FRACTION,
     2,
     {FAM("", "", MT_COUNTER, V_X, NONE, NULL),
      FAM("_base", "", MT_COUNTER, V_B, NONE, BASE_HELP)}},
    /* Averages: a summary's _sum and _count. */
    {PERF_AVERAGE_TIMER, 1, {FAM("", "_seconds", MT_SUMMARY, V_X_TB, V_B, NULL)}},
    {PERF_AVERAGE_BULK, 1, {FAM("", "", MT_SUMMARY, V_X, V_B, NULL)}},
    /* Timers: busy (or, _INV, idle) time in seconds; rate() is the busy
     * fraction (1 - rate() for _INV). */
    {PERF_COUNTER_TIMER, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    {PERF_COUNTER_TIMER_INV, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    {PERF_100NSEC_TIMER, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    {PERF_100NSEC_TIMER_INV, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    {PERF_OBJ_TIME_TIMER, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    /* Multi timers: time summed over items, and the items. */
    {PERF_COUNTER_MULTI_TIMER,
     2,
     {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL),
      FAM("_base", "", MT_GAUGE, V_MULTI, NONE, ITEMS_HELP)}},
    {PERF_COUNTER_MULTI_TIMER_INV,
     2,
     {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL),
      FAM("_base", "", MT_GAUGE, V_MULTI, NONE, ITEMS_HELP)}},
    {PERF_100NSEC_MULTI_TIMER,
     2,
     {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL),
      FAM("_base", "", MT_GAUGE, V_MULTI, NONE, ITEMS_HELP)}},
    {PERF_100NSEC_MULTI_TIMER_INV,
     2,
     {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL),
      FAM("_base", "", MT_GAUGE, V_MULTI, NONE, ITEMS_HELP)}},
    /* Precision timers: busy time and the timestamp it is measured
     * against (its own, or the clock its type names), both in seconds. */
    {PERF_PRECISION_SYSTEM_TIMER,
     2,
     {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL),
      FAM("_base", "_seconds", MT_COUNTER, V_B_TB, NONE, CLOCK_HELP)}},
    {PERF_PRECISION_100NS_TIMER,
     2,
     {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL),
      FAM("_base", "_seconds", MT_COUNTER, V_B_TB, NONE, CLOCK_HELP)}},
    {PERF_PRECISION_OBJECT_TIMER,
     2,
     {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL),
      FAM("_base", "_seconds", MT_COUNTER, V_B_TB, NONE, CLOCK_HELP)}},
    /* Queue lengths summed over time: rate() is the average length. */
    {PERF_COUNTER_QUEUELEN_TYPE, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    {PERF_COUNTER_LARGE_QUEUELEN_TYPE, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    {PERF_COUNTER_100NS_QUEUELEN_TYPE, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    {PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, 1, {FAM("", "_seconds", MT_COUNTER, V_X_TB, NONE, NULL)}},
    /* Elapsed time: seconds since the start the counter holds. */
    {PERF_ELAPSED_TIME, 1, {FAM("", "_seconds", MT_GAUGE, V_ELAPSED, NONE, NULL)}},
    /* Histograms: _bucket{le}, _sum and _count from the raw words, classic
     * and native (collector.c, classic.c, proto.c); the value fields are
     * unused. In the observed unit, or seconds when nanoseconds were
     * observed (hist_seconds below). */
    {PERF_PCW_HISTOGRAM, 1, {FAM("", "", MT_HISTOGRAM, V_X, NONE, NULL)}},
};

static const type_rule hist_seconds = {
    PERF_PCW_HISTOGRAM, 1, {FAM("", "_seconds", MT_HISTOGRAM, V_X, NONE, NULL)}};

const type_rule *mapping_find(uint32_t type)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].type == type)
            return &rules[i];
    return NULL;
}

const type_rule *mapping_counter(uint32_t type, uint32_t shape)
{
    if (type == PERF_PCW_HISTOGRAM && pcw_hist_unit(shape) == PCW_HIST_UNIT_NS)
        return &hist_seconds;
    return mapping_find(type);
}
