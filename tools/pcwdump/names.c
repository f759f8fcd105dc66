/* SPDX-License-Identifier: MIT */
/*
 * names.c - numbers in a segment to the names people know them by: the
 * winperf.h macro names of counter types, and the counters manifest's
 * spellings of instance types, aggregates, detail levels and attributes.
 */
#include <string.h>

#include "common/layout.h"
#include <pcw/types.h>

#include "pcwdump.h"

/* types.h's one list of counter types (PERF_PRECISION_TIMESTAMP, an alias
 * of PERF_LARGE_RAW_BASE, is not in it), PERF_PCW_HISTOGRAM included. */
const char *name_counter_type(uint32_t type)
{
    return pcw__counter_type_name(type);
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
    static const char *const n[] = {"group", "control", "area"};
    return bit < sizeof n / sizeof n[0] ? n[bit] : NULL;
}

const char *name_cset_flag_bit(unsigned bit)
{
    static const char *const n[] = {"seqcount", "callback"};
    return bit < sizeof n / sizeof n[0] ? n[bit] : NULL;
}

uint64_t counter_value(const pcw_snapshot *snap, size_t row, const pcw_counter *c)
{
    if (c->type != PERF_PCW_HISTOGRAM)
        return pcw_snapshot_value(snap, row, c);
    /* The consumer library checked the shape and that size = 8 x (2 +
     * buckets): words 1 .. are the zero bucket and the buckets. */
    const unsigned char *w = pcw_snapshot_row(snap, row) + c->data_offset;
    uint64_t count = 0, b;
    for (uint32_t i = 1; i < c->size / 8; i++) {
        memcpy(&b, w + 8 * i, 8);
        count += b;
    }
    return count;
}

int counter_is_hex(const pcw_counter *c)
{
    return c->type == PERF_COUNTER_RAWCOUNT_HEX || c->type == PERF_COUNTER_LARGE_RAWCOUNT_HEX ||
           (c->attributes & PCW_ATTR_DISPLAY_AS_HEX);
}
