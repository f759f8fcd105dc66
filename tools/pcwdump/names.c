/* SPDX-License-Identifier: MIT */
/*
 * names.c - numbers in a segment to the names people know them by: the
 * winperf.h macro names of counter types, and the counters manifest's
 * spellings of instance types, aggregates, detail levels and attributes.
 */
#include <pcw/layout.h>
#include <pcw/types.h>

#include "pcwdump.h"

#define T(macro)                                                                                   \
    {                                                                                              \
        macro, #macro                                                                              \
    }

/* First match wins: PERF_PRECISION_TIMESTAMP is PERF_LARGE_RAW_BASE's
 * alias, so it is left out. */
static const struct {
    uint32_t type;
    const char *name;
} counter_types[] = {
    T(PERF_COUNTER_COUNTER),
    T(PERF_COUNTER_TIMER),
    T(PERF_COUNTER_QUEUELEN_TYPE),
    T(PERF_COUNTER_LARGE_QUEUELEN_TYPE),
    T(PERF_COUNTER_100NS_QUEUELEN_TYPE),
    T(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE),
    T(PERF_COUNTER_BULK_COUNT),
    T(PERF_COUNTER_TEXT),
    T(PERF_COUNTER_RAWCOUNT),
    T(PERF_COUNTER_LARGE_RAWCOUNT),
    T(PERF_COUNTER_RAWCOUNT_HEX),
    T(PERF_COUNTER_LARGE_RAWCOUNT_HEX),
    T(PERF_SAMPLE_FRACTION),
    T(PERF_SAMPLE_COUNTER),
    T(PERF_COUNTER_NODATA),
    T(PERF_COUNTER_TIMER_INV),
    T(PERF_SAMPLE_BASE),
    T(PERF_AVERAGE_TIMER),
    T(PERF_AVERAGE_BASE),
    T(PERF_AVERAGE_BULK),
    T(PERF_OBJ_TIME_TIMER),
    T(PERF_100NSEC_TIMER),
    T(PERF_100NSEC_TIMER_INV),
    T(PERF_COUNTER_MULTI_TIMER),
    T(PERF_COUNTER_MULTI_TIMER_INV),
    T(PERF_COUNTER_MULTI_BASE),
    T(PERF_100NSEC_MULTI_TIMER),
    T(PERF_100NSEC_MULTI_TIMER_INV),
    T(PERF_RAW_FRACTION),
    T(PERF_LARGE_RAW_FRACTION),
    T(PERF_RAW_BASE),
    T(PERF_LARGE_RAW_BASE),
    T(PERF_ELAPSED_TIME),
    T(PERF_COUNTER_HISTOGRAM_TYPE),
    T(PERF_COUNTER_DELTA),
    T(PERF_COUNTER_LARGE_DELTA),
    T(PERF_PRECISION_SYSTEM_TIMER),
    T(PERF_PRECISION_100NS_TIMER),
    T(PERF_PRECISION_OBJECT_TIMER),
    T(PERF_PCW_HISTOGRAM),
};

const char *name_counter_type(uint32_t type)
{
    for (size_t i = 0; i < sizeof counter_types / sizeof counter_types[0]; i++)
        if (counter_types[i].type == type)
            return counter_types[i].name;
    return NULL;
}

const char *name_instance_type(uint32_t t)
{
    return pcw_instance_type_name(t);
}

const char *name_aggregate(uint32_t a)
{
    static const char *const n[] = {"undefined", "sum", "avg", "min", "max"};
    return a < sizeof n / sizeof n[0] ? n[a] : NULL;
}

const char *name_detail_level(uint32_t d)
{
    switch (d) {
    case 0: /* "standard" in the API: the default, novice */
    case PCW_DETAIL_NOVICE:
        return "novice";
    case PCW_DETAIL_ADVANCED:
        return "advanced";
    case PCW_DETAIL_EXPERT:
        return "expert";
    case PCW_DETAIL_WIZARD:
        return "wizard";
    }
    return NULL;
}

const char *name_attribute_bit(unsigned bit)
{
    static const char *const n[] = {"reference", "noDisplay", "noDigitGrouping", "displayAsHex",
                                    "displayAsReal"};
    return bit < sizeof n / sizeof n[0] ? n[bit] : NULL;
}

const char *name_seg_flag_bit(unsigned bit)
{
    static const char *const n[] = {"group", "control"};
    return bit < sizeof n / sizeof n[0] ? n[bit] : NULL;
}

const char *name_cset_flag_bit(unsigned bit)
{
    static const char *const n[] = {"seqcount", "callback"};
    return bit < sizeof n / sizeof n[0] ? n[bit] : NULL;
}

int counter_is_hex(const pcw_counter *c)
{
    return c->type == PERF_COUNTER_RAWCOUNT_HEX || c->type == PERF_COUNTER_LARGE_RAWCOUNT_HEX ||
           (c->attributes & PCW_ATTR_DISPLAY_AS_HEX);
}
