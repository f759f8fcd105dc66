/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_expo.c - pcw-exporter's pure pieces, directly:
 * metric-name parts, numbers, escaping, the type mapping table and a
 * histogram's classic buckets (tools/pcw-exporter/expo.c, mapping.c,
 * names.c, classic.c, linked from $(BUILD)/tools/libpcw-exporter.a).
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <math.h>
#include <pcw/histogram.h>

#include "../tools/pcw-exporter/classic.h"
#include "../tools/pcw-exporter/expo.h"
#include "../tools/pcw-exporter/mapping.h"
#include "../tools/pcw-exporter/names.h"
#include "pcw/types.h"

static const char *part(const char *in)
{
    static char out[NAMES_PART_MAX + 1];
    names_set(in, out);
    return out;
}

/* A counter's part, with the display rules (or without: full). */
static const char *cpart(const char *in, uint32_t type, int display)
{
    static char out[NAMES_PART_MAX + 1];
    names_counter(in, type, mapping_find(type), display, out, NULL);
    return out;
}

Test(exporter_expo, name_parts)
{
    cr_expect_str_eq(part("Web Server"), "web_server");
    cr_expect_str_eq(part("% Processor Time"), "percent_processor_time");
    cr_expect_str_eq(part("Bytes/sec"), "bytes_per_second");
    cr_expect_str_eq(part("  --Requests__Total!! "), "requests_total", "a set keeps total");
    cr_expect_str_eq(part("50%"), "50_percent");
    cr_expect_str_eq(part("Caf\xc3\xa9 Count"), "caf_count");
    cr_expect_str_eq(part("\xe6\x97\xa5\xe6\x9c\xac"), "", "no ASCII at all: nothing");
    cr_expect_str_eq(part("IOPS"), "iops");
    cr_expect_str_eq(part("Provider's Counters"), "providers_counters", "apostrophe joins");
    cr_expect_str_eq(part("Memory (MB) Counter"), "memory_megabytes",
                     "unit spelled, type word out");
    cr_expect_str_eq(part("Avg. Disk sec/Read"), "avg_disk_seconds_per_read");
    cr_expect_str_eq(part("Queue (100ns)"), "queue_100ns");
    char longname[400];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    cr_expect_eq(strlen(part(longname)), 0, "one word longer than the limit: nothing");
    for (int i = 0; i < 398; i += 2)
        longname[i + 1] = ' ';
    cr_expect_leq(strlen(part(longname)), NAMES_PART_MAX, "capped at a word");
    /* Every byte of the result is [a-z0-9_], never '_' at either end. */
    const char *odd = "\x01\x7f\"\\{}=,. a";
    const char *r = part(odd);
    cr_expect_str_eq(r, "a");
}

/* The counter rules: rate suffixes, percent, reserved endings, units. */
Test(exporter_expo, counter_name_parts)
{
    static const struct {
        const char *name;
        uint32_t type;
        int display;
        const char *part;
    } cases[] = {
        {"Requests/sec", PERF_COUNTER_COUNTER, 1, "requests"},
        {"Requests/sec", PERF_COUNTER_COUNTER, 0, "requests_per_second"},
        {"Bytes Total/sec", PERF_COUNTER_BULK_COUNT, 1, "bytes"},
        {"Connections/sec", PERF_COUNTER_RAWCOUNT, 1, "connections_per_second"}, /* its own */
        {"Cache Hit %", PERF_RAW_FRACTION, 1, "cache_hit"},
        {"Cache Hit %", PERF_RAW_FRACTION, 0, "cache_hit_percent"},
        {"Hit Ratio", PERF_SAMPLE_FRACTION, 1, "hit"},
        {"% Processor Time", PERF_100NSEC_TIMER, 1, "processor_time"},
        {"% Used", PERF_COUNTER_RAWCOUNT, 1, "percent_used"}, /* a gauge's own % */
        {"Handle Count", PERF_COUNTER_RAWCOUNT, 1, "handle"},
        {"Latency (ms)", PERF_COUNTER_RAWCOUNT, 1, "latency_milliseconds"},
        {"Uptime Seconds", PERF_ELAPSED_TIME, 1, "uptime"}, /* the unit follows */
        {"Error Counter", PERF_COUNTER_BULK_COUNT, 1, "error"},
        {"%", PERF_RAW_FRACTION, 1, ""},
        {"Total", PERF_COUNTER_RAWCOUNT, 1, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_str_eq(cpart(cases[i].name, cases[i].type, cases[i].display), cases[i].part,
                         "%s (display %d)", cases[i].name, cases[i].display);
}

static const char *ratio(uint64_t x, uint64_t tb, int neg)
{
    static char out[EXPO_NUM_MAX + 1];
    *expo_ratio(out, x, tb, neg) = 0;
    return out;
}

Test(exporter_expo, numbers)
{
    char buf[EXPO_NUM_MAX + 1];
    *expo_u64(buf, 0) = 0;
    cr_expect_str_eq(buf, "0");
    *expo_u64(buf, 18446744073709551615ull) = 0;
    cr_expect_str_eq(buf, "18446744073709551615");
    *expo_u64(buf, 1000) = 0;
    cr_expect_str_eq(buf, "1000");
    cr_expect_str_eq(ratio(1500000000, 1000000000, 0), "1.5");
    cr_expect_str_eq(ratio(123, 1000000000, 0), "0.000000123");
    cr_expect_str_eq(ratio(7000000000, 1000000000, 0), "7");
    cr_expect_str_eq(ratio(15, 10000000, 1), "-0.0000015");
    cr_expect_str_eq(ratio(0, 1000, 1), "0", "no negative zero");
    cr_expect_str_eq(ratio(18446744073709551615ull, 10000000, 0), "1844674407370.9551615");
    cr_expect_str_eq(ratio(5, 1, 0), "5");
    /* Not a power of ten: 17 significant digits, which parse back to the
     * same double. */
    cr_expect_eq(strtod(ratio(1, 3, 0), NULL), 1.0 / 3.0);
}

static const char *esc(const char *s, size_t n, int help, int format)
{
    static ebuf b;
    b.len = 0;
    if (help)
        expo_help_text(&b, s, n, format);
    else
        expo_label_value(&b, s, n);
    eb_put(&b, "", 1);
    return b.p;
}

Test(exporter_expo, escaping)
{
    cr_expect_str_eq(esc("a\"b\\c\nd", 7, 0, 0), "a\\\"b\\\\c\\nd");
    cr_expect_str_eq(esc("a\"b\\c\nd", 7, 1, EXPO_TEXT), "a\"b\\\\c\\nd", "text HELP keeps '\"'");
    cr_expect_str_eq(esc("a\"b\\c\nd", 7, 1, EXPO_OPENMETRICS), "a\\\"b\\\\c\\nd");
    cr_expect_str_eq(esc("caf\xc3\xa9", 5, 0, 0), "caf\xc3\xa9");
    cr_expect_str_eq(esc("\xff", 1, 0, 0), "\xef\xbf\xbd");
    cr_expect_str_eq(esc("a\0b", 3, 0, 0),
                     "a\xef\xbf\xbd"
                     "b",
                     "NUL replaced");
    cr_expect_str_eq(esc("\xc0\xaf", 2, 0, 0), "\xef\xbf\xbd\xef\xbf\xbd", "overlong");
    cr_expect_str_eq(esc("\xed\xa0\x80", 3, 0, 0), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
                     "a surrogate");
    cr_expect_str_eq(esc("\xe2\x82", 2, 0, 0), "\xef\xbf\xbd\xef\xbf\xbd", "cut short");
    cr_expect_str_eq(esc("\xf0\x9f\x98\x80", 4, 0, 0), "\xf0\x9f\x98\x80", "4-byte kept");
    /* The worst case fits the bound the writer reserves: 3 bytes each. */
    char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (char)i;
    cr_expect_leq(strlen(esc(all, sizeof all, 0, 0)), 3 * sizeof all);
}

/* Every known type is either exported or deliberately not: bases, text,
 * nodata, histogram. */
Test(exporter_expo, mapping_covers_every_type)
{
    static const uint32_t types[] = {
        PERF_COUNTER_COUNTER,
        PERF_COUNTER_TIMER,
        PERF_COUNTER_QUEUELEN_TYPE,
        PERF_COUNTER_LARGE_QUEUELEN_TYPE,
        PERF_COUNTER_100NS_QUEUELEN_TYPE,
        PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE,
        PERF_COUNTER_BULK_COUNT,
        PERF_COUNTER_TEXT,
        PERF_COUNTER_RAWCOUNT,
        PERF_COUNTER_LARGE_RAWCOUNT,
        PERF_COUNTER_RAWCOUNT_HEX,
        PERF_COUNTER_LARGE_RAWCOUNT_HEX,
        PERF_SAMPLE_FRACTION,
        PERF_SAMPLE_COUNTER,
        PERF_COUNTER_NODATA,
        PERF_COUNTER_TIMER_INV,
        PERF_SAMPLE_BASE,
        PERF_AVERAGE_TIMER,
        PERF_AVERAGE_BASE,
        PERF_AVERAGE_BULK,
        PERF_OBJ_TIME_TIMER,
        PERF_100NSEC_TIMER,
        PERF_100NSEC_TIMER_INV,
        PERF_COUNTER_MULTI_TIMER,
        PERF_COUNTER_MULTI_TIMER_INV,
        PERF_COUNTER_MULTI_BASE,
        PERF_100NSEC_MULTI_TIMER,
        PERF_100NSEC_MULTI_TIMER_INV,
        PERF_RAW_FRACTION,
        PERF_LARGE_RAW_FRACTION,
        PERF_RAW_BASE,
        PERF_LARGE_RAW_BASE,
        PERF_ELAPSED_TIME,
        PERF_COUNTER_HISTOGRAM_TYPE,
        PERF_COUNTER_DELTA,
        PERF_COUNTER_LARGE_DELTA,
        PERF_PRECISION_SYSTEM_TIMER,
        PERF_PRECISION_100NS_TIMER,
        PERF_PRECISION_OBJECT_TIMER,
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        uint32_t type = types[i];
        cr_assert(pcw_counter_type_known(type));
        const type_rule *r = mapping_find(type);
        int silent = pcw_counter_type_is_base(type) || type == PERF_COUNTER_TEXT ||
                     type == PERF_COUNTER_NODATA || type == PERF_COUNTER_HISTOGRAM_TYPE;
        cr_expect_eq(r == NULL, silent, "type 0x%08x", type);
        if (!r)
            continue;
        /* A type whose formula needs a base exports it. */
        if (pcw_counter_type_needs_base(type) && r->fam[0].type != MT_SUMMARY)
            cr_expect_eq(r->nfam, 2, "type 0x%08x has a base family", type);
        for (int j = 0; j < r->nfam; j++)
            cr_expect((r->fam[j].help == NULL) == (j == 0), "type 0x%08x", type);
    }
    cr_expect_null(mapping_find(0x12345678u));
}

/* A _seconds family is a time in seconds: X or B divided by its ticks per
 * second, never a raw tick count (issue 27: PERF_COUNTER_MULTI_TIMER's X
 * is ticks, and exported as it was it read 10^9 times too high). */
Test(exporter_expo, seconds_families_divide_ticks_by_the_frequency){
#define PCW__SECONDS_CHECK(t)                                                                      \
    {                                                                                              \
        const type_rule *r = mapping_find(t);                                                      \
        for (int j = 0; r && j < r->nfam; j++)                                                     \
            if (strcmp(r->fam[j].unit, "_seconds") == 0)                                           \
                cr_expect(r->fam[j].value == V_X_TB || r->fam[j].value == V_B_TB ||                \
                              r->fam[j].value == V_ELAPSED,                                        \
                          "%s family %d is _seconds but not divided by TB", #t, j);                \
    }
    PCW_COUNTER_TYPE_LIST(PCW__SECONDS_CHECK)
#undef PCW__SECONDS_CHECK
}

/* The classic bounds of the usual latency shape (1 ns .. 1 h at schema 3):
 * at most 30 is schema -1, 2^-30 s and every 2nd power of two below
 * 2^12 s (which only +Inf may count: the last bucket holds the overflow);
 * at most 45 is schema 0; each bound's word range and label. */
Test(exporter_expo, classic_bounds_of_a_latency_shape)
{
    uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12);
    classic p;
    cr_assert_eq(classic_plan(&p, shape, 30), 0);
    cr_expect_eq(p.schema, -1);
    cr_assert_eq(p.n, 21);
    for (uint32_t k = 0; k < p.n; k++) {
        cr_expect_eq(p.bound[k], exp2(-30 + 2 * (int)k));
        /* Bound 2^e counts the zero bucket and the buckets up to index
         * 8e: words 1 .. 2 + (8e - (-240) - 1). */
        cr_expect_eq(p.end[k], (uint32_t)(16 * k + 2));
        cr_expect_eq(strtod(p.le + p.le_off[k], NULL), p.bound[k], "le %s", p.le + p.le_off[k]);
    }
    cr_expect_str_eq(p.le + p.le_off[0], "9.313225746154785e-10");
    cr_expect_str_eq(p.le + p.le_off[20], "1024");
    cr_expect_str_eq(p.le + p.le_off[21], "+Inf");
    cr_expect_eq(p.end[21], 2 + 336);
    classic_free(&p);
    cr_assert_eq(classic_plan(&p, shape, 45), 0);
    cr_expect_eq(p.schema, 0);
    cr_expect_eq(p.n, 42);
    classic_free(&p);
    /* The limit is exact: 1 .. 2^20 at schema 0 has 20 bounds below 2^20. */
    shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_ONE, 0, 0, 20);
    cr_assert_eq(classic_plan(&p, shape, 20), 0);
    cr_expect(p.schema == 0 && p.n == 20, "schema %d, %u bounds", p.schema, p.n);
    classic_free(&p);
    cr_assert_eq(classic_plan(&p, shape, 19), 0);
    cr_expect(p.schema == -1 && p.n == 10, "schema %d, %u bounds", p.schema, p.n);
    classic_free(&p);
}

/* Every shape has a plan within its limit: at most `max` finite bounds,
 * rising, each a bound of the plan's schema and of the histogram's own,
 * the first the zero bucket's, word ranges rising to all of them; 8 is
 * enough even for the widest range. */
Test(exporter_expo, classic_plans_stay_within_the_limit)
{
    static const int ranges[][2] = {{-64, 63}, {-30, 12}, {0, 20}, {-32, 32}, {-8, 8}, {5, 6}};
    static const unsigned maxes[] = {CLASSIC_MIN, 30, 100};
    for (int s = PCW_HIST_SCHEMA_MIN; s <= PCW_HIST_SCHEMA_MAX; s++)
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
            for (size_t m = 0; m < sizeof maxes / sizeof maxes[0]; m++) {
                uint32_t shape = PCW_HISTOGRAM_SHAPE(0, s, ranges[r][0], ranges[r][1]);
                if (!pcw_hist_shape_valid(shape))
                    continue;
                classic p;
                cr_assert_eq(classic_plan(&p, shape, maxes[m]), 0);
                cr_expect_leq(p.n, maxes[m], "schema %d %d..%d: %u bounds", s, ranges[r][0],
                              ranges[r][1], p.n);
                cr_expect_leq(p.schema, s);
                cr_expect_eq(p.bound[0], exp2(ranges[r][0]));
                cr_expect_eq(p.end[0], 2u);
                for (uint32_t k = 1; k <= p.n; k++) {
                    cr_expect_gt(p.bound[k], p.bound[k - 1]);
                    cr_expect_gt(p.end[k], p.end[k - 1]);
                }
                cr_expect_eq(p.end[p.n], 2 + pcw_hist_nbuckets(shape));
                cr_expect(isinf(p.bound[p.n]));
                classic_free(&p);
            }
}

/* Cumulative counts from the words; counts that overflow 64 bits (a
 * hostile segment) are refused, not wrapped. */
Test(exporter_expo, classic_counts_and_overflow)
{
    uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_ONE, 0, 0, 4); /* 1, 2, 4, 8, 16 */
    classic p;
    cr_assert_eq(classic_plan(&p, shape, 30), 0);
    cr_assert_eq(p.n, 4); /* 1 2 4 8, +Inf */
    uint64_t w[6] = {100, 1, 2, 3, 4, 5}, cum[5];
    cr_assert_eq(classic_counts(&p, w, 6, cum), 0);
    uint64_t want[5] = {1, 3, 6, 10, 15};
    for (int k = 0; k < 5; k++)
        cr_expect_eq(cum[k], want[k], "bound %d", k);
    w[3] = UINT64_MAX - 2;
    cr_expect_eq(classic_counts(&p, w, 6, cum), -1);
    classic_free(&p);
}
