/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_cook.c - golden tests of every counter type's formula,
 * from raw sample pairs whose expected values are worked out by hand from
 * Microsoft's definitions ("Calculations for Raw Counter Data"): each test
 * shows the arithmetic. Then the statuses (first sample, reset, zero and
 * negative intervals, missing base, zero frequency), PDH's formatting
 * (percent x100 and cap, scale, x1000), and how raw samples are taken from
 * rows (base, multi count, object time and frequency counters).
 *
 * pcw's time base: X and Y in nanoseconds of CLOCK_MONOTONIC, TB = 10^9.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "../lib/query/aggregate.h"
#include "../lib/query/cook.h"
#include "pcw/pdh.h"

#define TB    1000000000ull /* pcw's system frequency */
#define TB100 10000000ull   /* the 100 ns clock's */

static pcw_raw raw(uint64_t x, uint64_t y, uint64_t multi, uint64_t freq)
{
    pcw_raw r = {PCW_CSTATUS_VALID, x, y, multi, freq, 0};
    return r;
}

/* Cook with no scale and no flags; assert VALID and the value. */
static void golden(uint32_t type, pcw_raw now, const pcw_raw *prev, double want)
{
    double v = -1;
    int s = pcw_cook(type, &now, prev, 0, 0, &v);
    cr_assert_eq(s, PCW_CSTATUS_VALID, "%s: status %s", pcw_counter_type_name(type),
                 pcw_cstatus_str(s));
    cr_assert(fabs(v - want) <= 1e-9 * fmax(1.0, fabs(want)), "%s: got %.12g want %.12g",
              pcw_counter_type_name(type), v, want);
}

static void status_is(uint32_t type, pcw_raw now, const pcw_raw *prev, int want)
{
    double v = -1;
    int s = pcw_cook(type, &now, prev, 0, 0, &v);
    cr_assert_eq(s, want, "%s: status %s, want %s", pcw_counter_type_name(type), pcw_cstatus_str(s),
                 pcw_cstatus_str(want));
    if (s != PCW_CSTATUS_VALID)
        cr_assert_eq(v, 0.0, "no number without a valid status");
}

/* ---- counts and rates ---------------------------------------------------- */

Test(formula, counter_counter)
{
    /* (X1-X0)/((Y1-Y0)/TB) = (1500-1000)/((4e9-2e9)/1e9) = 500/2 = 250 /s */
    pcw_raw p = raw(1000, 2 * TB, 1, TB);
    golden(PERF_COUNTER_COUNTER, raw(1500, 4 * TB, 1, TB), &p, 250.0);
}

Test(formula, bulk_count)
{
    /* (1e12+3e9 - 1e12)/(1.5e9/1e9) = 3e9/1.5 = 2e9 /s */
    pcw_raw p = raw(1000000000000ull, 10 * TB, 1, TB);
    golden(PERF_COUNTER_BULK_COUNT, raw(1003000000000ull, 10 * TB + 1500000000ull, 1, TB), &p, 2e9);
}

Test(formula, sample_counter)
{
    /* A rate over the system time, as PERF_COUNTER_COUNTER:
     * (40-10)/(0.5e9/1e9) = 30/0.5 = 60 */
    pcw_raw p = raw(10, TB, 1, TB);
    golden(PERF_SAMPLE_COUNTER, raw(40, TB + TB / 2, 1, TB), &p, 60.0);
}

Test(formula, deltas)
{
    /* X1-X0 = 19-7 = 12 */
    pcw_raw p = raw(7, 0, 1, TB);
    golden(PERF_COUNTER_DELTA, raw(19, 0, 1, TB), &p, 12.0);
    /* 5e12+42 - 5e12 = 42 */
    pcw_raw p2 = raw(5000000000000ull, 0, 1, TB);
    golden(PERF_COUNTER_LARGE_DELTA, raw(5000000000042ull, 0, 1, TB), &p2, 42.0);
    /* no change: 0, valid */
    golden(PERF_COUNTER_DELTA, raw(7, 0, 1, TB), &p, 0.0);
}

/* ---- instantaneous ------------------------------------------------------- */

Test(formula, rawcounts)
{
    /* X, one sample, no previous needed */
    golden(PERF_COUNTER_RAWCOUNT, raw(1234, 0, 1, TB), NULL, 1234.0);
    golden(PERF_COUNTER_RAWCOUNT_HEX, raw(0xFFFFFFFFu, 0, 1, TB), NULL, 4294967295.0);
    /* 2^40 = 1099511627776 */
    golden(PERF_COUNTER_LARGE_RAWCOUNT, raw(1ull << 40, 0, 1, TB), NULL, 1099511627776.0);
    golden(PERF_COUNTER_LARGE_RAWCOUNT_HEX, raw(1ull << 40, 0, 1, TB), NULL, 1099511627776.0);
    /* The previous sample, when given, changes nothing. */
    pcw_raw p = raw(99999, 0, 1, TB);
    golden(PERF_COUNTER_RAWCOUNT, raw(5, 0, 1, TB), &p, 5.0);
}

/* ---- fractions ----------------------------------------------------------- */

Test(formula, raw_fraction)
{
    /* 100 * X / B = 100 * 25 / 200 = 12.5 % */
    golden(PERF_RAW_FRACTION, raw(25, 200, 1, TB), NULL, 12.5);
    /* 100 * 3e9 / 4e9 = 75 % */
    golden(PERF_LARGE_RAW_FRACTION, raw(3000000000ull, 4000000000ull, 1, TB), NULL, 75.0);
}

Test(formula, sample_fraction)
{
    /* 100 * (X1-X0)/(B1-B0) = 100 * (40-10)/(220-100) = 100 * 30/120 = 25 % */
    pcw_raw p = raw(10, 100, 1, TB);
    golden(PERF_SAMPLE_FRACTION, raw(40, 220, 1, TB), &p, 25.0);
}

/* ---- averages ------------------------------------------------------------ */

Test(formula, average_timer)
{
    /* ((X1-X0)/TB)/(B1-B0) = ((3e9-0)/1e9)/(16-10) = 3/6 = 0.5 s per operation */
    pcw_raw p = raw(0, 10, 1, TB);
    golden(PERF_AVERAGE_TIMER, raw(3 * TB, 16, 1, TB), &p, 0.5);
}

Test(formula, average_bulk)
{
    /* (X1-X0)/(B1-B0) = (5096-1000)/(6-2) = 4096/4 = 1024 bytes per operation */
    pcw_raw p = raw(1000, 2, 1, TB);
    golden(PERF_AVERAGE_BULK, raw(5096, 6, 1, TB), &p, 1024.0);
}

/* ---- timers -------------------------------------------------------------- */

Test(formula, counter_timer)
{
    /* 100*(X1-X0)/(Y1-Y0) = 100 * 0.25e9/(2e9-1e9) = 25 % */
    pcw_raw p = raw(0, TB, 1, TB);
    golden(PERF_COUNTER_TIMER, raw(TB / 4, 2 * TB, 1, TB), &p, 25.0);
}

Test(formula, counter_timer_inv)
{
    /* 100*(1-(X1-X0)/(Y1-Y0)) = 100 * (1 - 0.25e9/1e9) = 75 % */
    pcw_raw p = raw(0, TB, 1, TB);
    golden(PERF_COUNTER_TIMER_INV, raw(TB / 4, 2 * TB, 1, TB), &p, 75.0);
}

Test(formula, nsec100_timer)
{
    /* Y in 100 ns: 1 s = 1e7. 100*(6e6-0)/(2e7-1e7) = 100 * 0.6 = 60 % */
    pcw_raw p = raw(0, TB100, 1, TB100);
    golden(PERF_100NSEC_TIMER, raw(6000000, 2 * TB100, 1, TB100), &p, 60.0);
}

Test(formula, nsec100_timer_inv)
{
    /* 100*(1-(2.5e6/1e7)) = 100 * 0.75 = 75 % */
    pcw_raw p = raw(0, TB100, 1, TB100);
    golden(PERF_100NSEC_TIMER_INV, raw(2500000, 2 * TB100, 1, TB100), &p, 75.0);
}

Test(formula, counter_multi_timer)
{
    /* 100*((X1-X0)/(Y1-Y0))/B1 with X and Y in ticks of the same clock (the
     * Server 2003 reference: "time in units of ticks of the system
     * performance timer"): 3 s of busy time (3e9 ns) summed over B = 4
     * items in 2 s (2e9 ns). 3e9/2e9 = 1.5; 1.5/4 = 0.375; x100 = 37.5 %.
     * (Read as seconds, X/((Y1-Y0)/TB), a ported provider's ticks would
     * show 10^9 times too high.) */
    pcw_raw p = raw(0, 5 * TB, 4, TB);
    golden(PERF_COUNTER_MULTI_TIMER, raw(3 * TB, 7 * TB, 4, TB), &p, 37.5);
}

Test(formula, counter_multi_timer_inv)
{
    /* 100*(B1-((X1-X0)/(Y1-Y0)))/B1: 6 idle seconds (6e9 ticks) over 2 s,
     * B = 4. 6/2 = 3; (4-3)/4 = 0.25; x100 = 25 % */
    pcw_raw p = raw(10, 5 * TB, 4, TB);
    golden(PERF_COUNTER_MULTI_TIMER_INV, raw(10 + 6 * TB, 7 * TB, 4, TB), &p, 25.0);
}

Test(formula, nsec100_multi_timer)
{
    /* 100*((X1-X0)/(Y1-Y0))/B1: 3 s busy (3e7) over 2 s (2e7), B = 4.
     * 3e7/2e7 = 1.5; /4 = 0.375; x100 = 37.5 % */
    pcw_raw p = raw(0, TB100, 4, TB100);
    golden(PERF_100NSEC_MULTI_TIMER, raw(30000000, 3 * TB100, 4, TB100), &p, 37.5);
}

Test(formula, nsec100_multi_timer_inv)
{
    /* 100*(B1-((X1-X0)/(Y1-Y0)))/B1: 3 s idle over 2 s, B = 4.
     * (4 - 1.5)/4 = 0.625; x100 = 62.5 % */
    pcw_raw p = raw(0, TB100, 4, TB100);
    golden(PERF_100NSEC_MULTI_TIMER_INV, raw(30000000, 3 * TB100, 4, TB100), &p, 62.5);
}

Test(formula, obj_time_timer)
{
    /* 100*(X1-X0)/(Y1-Y0), Y the object's time: 100*(140-100)/(960-800) =
     * 100 * 40/160 = 25 % */
    pcw_raw p = raw(100, 800, 1, 1000);
    golden(PERF_OBJ_TIME_TIMER, raw(140, 960, 1, 1000), &p, 25.0);
}

Test(formula, precision_timers)
{
    /* 100*(X1-X0)/(B1-B0), B the counter's own timestamp:
     * 100*(1300-1000)/(6200-5000) = 100 * 300/1200 = 25 % */
    pcw_raw p = raw(1000, 5000, 1, TB);
    golden(PERF_PRECISION_SYSTEM_TIMER, raw(1300, 6200, 1, TB), &p, 25.0);
    golden(PERF_PRECISION_100NS_TIMER, raw(1300, 6200, 1, TB100), &p, 25.0);
    golden(PERF_PRECISION_OBJECT_TIMER, raw(1300, 6200, 1, 1000), &p, 25.0);
}

/* ---- queue lengths ------------------------------------------------------- */

Test(formula, queue_lengths)
{
    /* (X1-X0)/(Y1-Y0): X accumulates the queue length every tick.
     * (5e9-0)/(2e9-1e9) = 5 items on average */
    pcw_raw p = raw(0, TB, 1, TB);
    golden(PERF_COUNTER_QUEUELEN_TYPE, raw(5 * TB, 2 * TB, 1, TB), &p, 5.0);
    golden(PERF_COUNTER_LARGE_QUEUELEN_TYPE, raw(5 * TB, 2 * TB, 1, TB), &p, 5.0);
    /* 100 ns clock: (3e7-0)/(2e7-1e7) = 3 */
    pcw_raw q = raw(0, TB100, 1, TB100);
    golden(PERF_COUNTER_100NS_QUEUELEN_TYPE, raw(3 * TB100, 2 * TB100, 1, TB100), &q, 3.0);
    /* object time: (700-100)/(600-400) = 3 */
    pcw_raw o = raw(100, 400, 1, 1000);
    golden(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, raw(700, 600, 1, 1000), &o, 3.0);
}

/* ---- elapsed time -------------------------------------------------------- */

Test(formula, elapsed_time)
{
    /* (Y-X)/TB: started at 5e9 ns, now 65e9 ns: (65e9-5e9)/1e9 = 60 s */
    golden(PERF_ELAPSED_TIME, raw(5 * TB, 65 * TB, 1, TB), NULL, 60.0);
    /* An object clock of 1000 Hz: (4500-1000)/1000 = 3.5 s */
    golden(PERF_ELAPSED_TIME, raw(1000, 4500, 1, 1000), NULL, 3.5);
    /* Just started: 0 s, valid. */
    golden(PERF_ELAPSED_TIME, raw(7, 7, 1, 1000), NULL, 0.0);
}

/* ---- types with no displayable value ------------------------------------ */

Test(formula, no_value_types)
{
    const uint32_t none[] = {
        PERF_SAMPLE_BASE,    PERF_AVERAGE_BASE,           PERF_COUNTER_MULTI_BASE,
        PERF_RAW_BASE,       PERF_LARGE_RAW_BASE,         PERF_COUNTER_TEXT,
        PERF_COUNTER_NODATA, PERF_COUNTER_HISTOGRAM_TYPE, 0x12345678u};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        pcw_raw p = raw(1, 1, 1, TB);
        status_is(none[i], raw(2, 2, 1, TB), &p, PCW_CSTATUS_NO_DATA);
        cr_assert_eq(pcw_cook_needs_two(none[i]), 0);
    }
}

Test(formula, every_known_type_is_covered)
{
    /* Every type in types.h either has a formula (these two lists) or is
     * a no-value type (no_value_types): 24 + 7 + 8 = the 39 types of
     * pcw_counter_type_known. */
    const uint32_t two[] = {PERF_COUNTER_COUNTER,
                            PERF_COUNTER_BULK_COUNT,
                            PERF_SAMPLE_COUNTER,
                            PERF_COUNTER_DELTA,
                            PERF_COUNTER_LARGE_DELTA,
                            PERF_SAMPLE_FRACTION,
                            PERF_AVERAGE_TIMER,
                            PERF_AVERAGE_BULK,
                            PERF_COUNTER_TIMER,
                            PERF_COUNTER_TIMER_INV,
                            PERF_100NSEC_TIMER,
                            PERF_100NSEC_TIMER_INV,
                            PERF_COUNTER_MULTI_TIMER,
                            PERF_COUNTER_MULTI_TIMER_INV,
                            PERF_100NSEC_MULTI_TIMER,
                            PERF_100NSEC_MULTI_TIMER_INV,
                            PERF_OBJ_TIME_TIMER,
                            PERF_PRECISION_SYSTEM_TIMER,
                            PERF_PRECISION_100NS_TIMER,
                            PERF_PRECISION_OBJECT_TIMER,
                            PERF_COUNTER_QUEUELEN_TYPE,
                            PERF_COUNTER_LARGE_QUEUELEN_TYPE,
                            PERF_COUNTER_100NS_QUEUELEN_TYPE,
                            PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE};
    const uint32_t one[] = {PERF_COUNTER_RAWCOUNT,     PERF_COUNTER_LARGE_RAWCOUNT,
                            PERF_COUNTER_RAWCOUNT_HEX, PERF_COUNTER_LARGE_RAWCOUNT_HEX,
                            PERF_RAW_FRACTION,         PERF_LARGE_RAW_FRACTION,
                            PERF_ELAPSED_TIME};
    for (size_t i = 0; i < sizeof two / sizeof two[0]; i++) {
        cr_assert(pcw_counter_type_known(two[i]));
        cr_assert_eq(pcw_cook_needs_two(two[i]), 1, "%s", pcw_counter_type_name(two[i]));
        /* First sample of a two-sample type: new data needed. */
        status_is(two[i], raw(5, 5, 1, TB), NULL, PCW_CSTATUS_NEW_DATA_NEEDED);
    }
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        cr_assert(pcw_counter_type_known(one[i]));
        cr_assert_eq(pcw_cook_needs_two(one[i]), 0, "%s", pcw_counter_type_name(one[i]));
    }
    cr_assert_eq(sizeof two / sizeof two[0] + sizeof one / sizeof one[0] + 8, 39);
    cr_assert_str_eq(pcw_counter_type_name(PERF_100NSEC_MULTI_TIMER_INV),
                     "PERF_100NSEC_MULTI_TIMER_INV");
    cr_assert_null(pcw_counter_type_name(0x12345678u));
}

/* ---- statuses ------------------------------------------------------------ */

Test(status, reset_is_a_status_not_a_number)
{
    /* A cumulative value went down (provider restarted its counter). */
    pcw_raw p = raw(1000, TB, 1, TB);
    status_is(PERF_COUNTER_COUNTER, raw(10, 2 * TB, 1, TB), &p, PCW_CSTATUS_RESET);
    status_is(PERF_COUNTER_DELTA, raw(10, 0, 1, TB), &p, PCW_CSTATUS_RESET);
    status_is(PERF_COUNTER_TIMER, raw(10, 2 * TB, 1, TB), &p, PCW_CSTATUS_RESET);
    status_is(PERF_AVERAGE_BULK, raw(10, 2 * TB, 1, TB), &p, PCW_CSTATUS_RESET);
    /* A 4-byte counter that wrapped looks the same and is reported so. */
    pcw_raw w = raw(0xFFFFFFF0u, TB, 1, TB);
    status_is(PERF_COUNTER_COUNTER, raw(0x10, 2 * TB, 1, TB), &w, PCW_CSTATUS_RESET);
}

Test(status, zero_and_negative_intervals)
{
    pcw_raw p = raw(1000, 2 * TB, 1, TB);
    status_is(PERF_COUNTER_COUNTER, raw(2000, 2 * TB, 1, TB), &p, PCW_CSTATUS_ZERO_DENOMINATOR);
    status_is(PERF_COUNTER_COUNTER, raw(2000, TB, 1, TB), &p, PCW_CSTATUS_NEGATIVE_DENOMINATOR);
    /* A base that did not move: no operations, no average. */
    pcw_raw b = raw(1000, 6, 1, TB);
    status_is(PERF_AVERAGE_BULK, raw(1000, 6, 1, TB), &b, PCW_CSTATUS_ZERO_DENOMINATOR);
    status_is(PERF_SAMPLE_FRACTION, raw(1000, 5, 1, TB), &b, PCW_CSTATUS_NEGATIVE_DENOMINATOR);
    /* Zero base of a raw fraction. */
    status_is(PERF_RAW_FRACTION, raw(0, 0, 1, TB), NULL, PCW_CSTATUS_ZERO_DENOMINATOR);
    /* Elapsed time whose start is after now. */
    status_is(PERF_ELAPSED_TIME, raw(10, 5, 1, TB), NULL, PCW_CSTATUS_NEGATIVE_DENOMINATOR);
    /* Multi timers with a zero item count. */
    pcw_raw m = raw(0, TB100, 0, TB100);
    status_is(PERF_100NSEC_MULTI_TIMER, raw(5, 2 * TB100, 0, TB100), &m,
              PCW_CSTATUS_ZERO_DENOMINATOR);
    status_is(PERF_100NSEC_MULTI_TIMER_INV, raw(5, 2 * TB100, 0, TB100), &m,
              PCW_CSTATUS_ZERO_DENOMINATOR);
}

Test(status, zero_frequency)
{
    pcw_raw p = raw(0, TB, 1, 0);
    status_is(PERF_COUNTER_COUNTER, raw(10, 2 * TB, 1, 0), &p, PCW_CSTATUS_BAD_TIMEBASE);
    status_is(PERF_AVERAGE_TIMER, raw(10, 2 * TB, 1, 0), &p, PCW_CSTATUS_BAD_TIMEBASE);
    status_is(PERF_COUNTER_MULTI_TIMER, raw(10, 2 * TB, 1, 0), &p, PCW_CSTATUS_BAD_TIMEBASE);
    status_is(PERF_ELAPSED_TIME, raw(1, 5, 1, 0), NULL, PCW_CSTATUS_BAD_TIMEBASE);
}

Test(status, sample_status_propagates)
{
    pcw_raw now = raw(1, 1, 1, TB), prev = raw(0, 0, 1, TB);
    now.status = PCW_CSTATUS_NO_BASE;
    status_is(PERF_RAW_FRACTION, now, NULL, PCW_CSTATUS_NO_BASE);
    /* A previous sample that was not valid: the rate needs another one. */
    now.status = PCW_CSTATUS_VALID;
    prev.status = PCW_CSTATUS_NO_INSTANCE;
    status_is(PERF_COUNTER_COUNTER, now, &prev, PCW_CSTATUS_NEW_DATA_NEEDED);
    cr_assert_eq(pcw_cook(PERF_COUNTER_RAWCOUNT, NULL, NULL, 0, 0, NULL), PCW_CSTATUS_NO_INSTANCE);
}

Test(status, inverse_timers_clamp_rounding_only)
{
    /* Idle 1.05 s of a 1 s interval (two clocks disagree a little):
     * 1 - 1.05 = -0.05 -> 0 %, valid. */
    pcw_raw p = raw(0, TB, 1, TB);
    golden(PERF_COUNTER_TIMER_INV, raw(1050000000ull, 2 * TB, 1, TB), &p, 0.0);
    /* Idle 1.5 s of 1 s: 1 - 1.5 = -0.5, not rounding: an error. */
    status_is(PERF_COUNTER_TIMER_INV, raw(1500000000ull, 2 * TB, 1, TB), &p,
              PCW_CSTATUS_NEGATIVE_DENOMINATOR);
    /* Multi: B = 2, 2.05 idle-seconds per second: 2 - 2.05 = -0.05 -> 0 */
    pcw_raw m = raw(0, TB100, 2, TB100);
    golden(PERF_100NSEC_MULTI_TIMER_INV, raw(20500000, 2 * TB100, 2, TB100), &m, 0.0);
}

Test(status, strings)
{
    for (int s = 0; s <= PCW_CSTATUS_LAST; s++)
        cr_assert(strcmp(pcw_cstatus_str(s), "unknown status") != 0, "%d", s);
    cr_assert_str_eq(pcw_cstatus_str(999), "unknown status");
}

/* ---- formatting ---------------------------------------------------------- */

Test(format, percent_cap)
{
    /* 100 * 1.5e9/1e9 = 150 % -> capped at 100 unless NOCAP100. */
    pcw_raw p = raw(0, TB, 1, TB), n = raw(1500000000ull, 2 * TB, 1, TB);
    double v;
    cr_assert_eq(pcw_cook(PERF_COUNTER_TIMER, &n, &p, 0, 0, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 100.0);
    cr_assert_eq(pcw_cook(PERF_COUNTER_TIMER, &n, &p, 0, PCW_FMT_NOCAP100, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 150.0);
    /* A rate is not a percentage: never capped. 1.5e9/1 = 1.5e9 /s */
    cr_assert_eq(pcw_cook(PERF_COUNTER_BULK_COUNT, &n, &p, 0, 0, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 1.5e9);
}

Test(format, scale_and_1000)
{
    /* 250 /s (see counter_counter) with default scale -3: 250 * 10^-3 = 0.25 */
    pcw_raw p = raw(1000, 2 * TB, 1, TB), n = raw(1500, 4 * TB, 1, TB);
    double v;
    cr_assert_eq(pcw_cook(PERF_COUNTER_COUNTER, &n, &p, -3, 0, &v), PCW_CSTATUS_VALID);
    cr_assert_float_eq(v, 0.25, 1e-12);
    cr_assert_eq(pcw_cook(PERF_COUNTER_COUNTER, &n, &p, -3, PCW_FMT_NOSCALE, &v),
                 PCW_CSTATUS_VALID);
    cr_assert_eq(v, 250.0);
    /* 250 * 10^2 = 25000; x1000 = 25,000,000 */
    cr_assert_eq(pcw_cook(PERF_COUNTER_COUNTER, &n, &p, 2, PCW_FMT_1000, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 25000000.0);
    /* The cap applies before the scale (PDH's order): 150 % -> 100 -> x10 */
    pcw_raw tp = raw(0, TB, 1, TB), tn = raw(1500000000ull, 2 * TB, 1, TB);
    cr_assert_eq(pcw_cook(PERF_COUNTER_TIMER, &tn, &tp, 1, 0, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 1000.0);
    cr_assert_eq(pcw__q_pow10(-10), 1e-10);
    cr_assert_eq(pcw__q_pow10(20), 1e20);
    cr_assert_eq(pcw__q_pow10(-20), 1e-20);
}

/* A segment's counter carries its default scale as an int32 that a hostile
 * provider chooses; pcw_cook takes it as given. INT32_MIN recursed without
 * end in the power of ten (-e is INT32_MIN again): a crash. Any scale gives
 * a status and, when valid, a finite value. */
Test(format, any_scale_is_a_status)
{
    pcw_raw p = raw(1000, 2 * TB, 1, TB), n = raw(1500, 4 * TB, 1, TB);
    const int32_t scales[] = {INT32_MIN, INT32_MIN + 1, -100000, -400, 400, 100000, INT32_MAX};
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++) {
        double v = -1;
        int st = pcw_cook(PERF_COUNTER_COUNTER, &n, &p, scales[i], 0, &v);
        if (scales[i] < 0) {
            cr_assert_eq(st, PCW_CSTATUS_VALID, "scale %d", scales[i]);
            cr_assert_eq(v, 0.0, "scale %d: %g", scales[i], v); /* 250 x 10^-huge */
        } else {
            cr_assert_eq(st, PCW_CSTATUS_OVERFLOW, "scale %d", scales[i]);
        }
    }
    cr_assert_eq(pcw__q_pow10(INT32_MIN), 0.0);
    cr_assert_eq(pcw__q_pow10(INT32_MAX), HUGE_VAL);
}

/* ---- raw samples from rows ----------------------------------------------- */

/* A counterset built by hand: counters at 8-byte offsets unless size 4. */
static pcw_counter ctrs[8];
static pcw_counterset cset;

static void add_counter(uint32_t id, uint32_t type, uint32_t size, uint32_t off)
{
    pcw_counter *c = &ctrs[cset.counter_count++];
    memset(c, 0, sizeof *c);
    c->id = id, c->type = type, c->size = size, c->offset = off, c->data_offset = off;
    c->base_id = c->perf_time_id = c->perf_freq_id = c->multi_id = PCW_NO_COUNTER;
    c->name = c->description = c->uri = c->symbol = "";
}

static void reset_set(void)
{
    memset(&cset, 0, sizeof cset);
    cset.counters = ctrs;
    cset.name = "Hand";
}

static uint32_t offs[8];
static uint8_t sizes[8];
static pcw__q_layout layout(void)
{
    for (uint32_t k = 0; k < cset.counter_count; k++)
        offs[k] = ctrs[k].data_offset, sizes[k] = (uint8_t)ctrs[k].size;
    pcw__q_layout l = {offs, sizes};
    return l;
}

Test(recipe, base_is_next_counter_or_base_id)
{
    reset_set();
    add_counter(1, PERF_RAW_FRACTION, 4, 0);
    add_counter(2, PERF_RAW_BASE, 4, 4); /* next: Windows' rule */
    add_counter(3, PERF_AVERAGE_BULK, 8, 8);
    add_counter(4, PERF_COUNTER_RAWCOUNT, 4, 16);
    add_counter(5, PERF_AVERAGE_BASE, 4, 20);
    ctrs[2].base_id = 5;                            /* explicit */
    add_counter(6, PERF_LARGE_RAW_FRACTION, 8, 24); /* no base at all */
    unsigned char row[32];
    uint32_t v32;
    uint64_t v64;
    v32 = 30, memcpy(row + 0, &v32, 4);
    v32 = 120, memcpy(row + 4, &v32, 4);
    v64 = 4096, memcpy(row + 8, &v64, 8);
    v32 = 999, memcpy(row + 16, &v32, 4);
    v32 = 4, memcpy(row + 20, &v32, 4);
    v64 = 1, memcpy(row + 24, &v64, 8);
    pcw__q_layout l = layout();
    pcw__q_recipe r;
    pcw_raw s;
    double v;

    pcw__q_recipe_build(&cset, 0, &r);
    cr_assert_eq(r.base, 1);
    pcw__q_raw_from_row(&r, row, &l, 5 * TB, &s);
    cr_assert_eq(s.first, 30);
    cr_assert_eq(s.second, 120);
    /* 100 * 30/120 = 25 % */
    cr_assert_eq(pcw_cook(PERF_RAW_FRACTION, &s, NULL, 0, 0, &v), PCW_CSTATUS_VALID);
    cr_assert_eq(v, 25.0);

    pcw__q_recipe_build(&cset, 2, &r);
    cr_assert_eq(r.base, 4, "baseID wins over the next counter");
    pcw__q_raw_from_row(&r, row, &l, 5 * TB, &s);
    cr_assert_eq(s.second, 4);

    pcw__q_recipe_build(&cset, 5, &r);
    cr_assert_eq(r.status, PCW_CSTATUS_NO_BASE);
    pcw__q_raw_from_row(&r, row, &l, 5 * TB, &s);
    cr_assert_eq(pcw_cook(PERF_LARGE_RAW_FRACTION, &s, NULL, 0, 0, &v), PCW_CSTATUS_NO_BASE);
}

Test(recipe, time_bases)
{
    reset_set();
    add_counter(1, PERF_COUNTER_COUNTER, 4, 0);
    add_counter(2, PERF_100NSEC_TIMER, 8, 8);
    add_counter(3, PERF_ELAPSED_TIME, 8, 16);
    add_counter(4, PERF_COUNTER_LARGE_RAWCOUNT, 8, 24); /* object time */
    add_counter(5, PERF_COUNTER_LARGE_RAWCOUNT, 8, 32); /* object freq */
    add_counter(6, PERF_ELAPSED_TIME, 8, 40);           /* no object clock */
    ctrs[2].perf_time_id = 4, ctrs[2].perf_freq_id = 5;
    unsigned char row[48] = {0};
    uint64_t v;
    v = 7, memcpy(row + 0, &v, 4);
    v = 1000, memcpy(row + 16, &v, 8);   /* started at object tick 1000 */
    v = 4500, memcpy(row + 24, &v, 8);   /* object time now: 4500 */
    v = 1000, memcpy(row + 32, &v, 8);   /* 1000 ticks per second */
    v = 5 * TB, memcpy(row + 40, &v, 8); /* started at 5 s (CLOCK_MONOTONIC) */
    pcw__q_layout l = layout();
    pcw__q_recipe r;
    pcw_raw s;
    double d;

    pcw__q_recipe_build(&cset, 0, &r);
    pcw__q_raw_from_row(&r, row, &l, 3 * TB + 17, &s);
    cr_assert_eq(s.second, 3 * TB + 17, "system time: the read's CLOCK_MONOTONIC ns");
    cr_assert_eq(s.freq, TB);

    pcw__q_recipe_build(&cset, 1, &r);
    pcw__q_raw_from_row(&r, row, &l, 3 * TB + 170, &s);
    cr_assert_eq(s.second, 3 * TB100 + 1, "100 ns time: ns / 100");
    cr_assert_eq(s.freq, TB100);

    pcw__q_recipe_build(&cset, 2, &r);
    pcw__q_raw_from_row(&r, row, &l, 3 * TB, &s);
    cr_assert_eq(s.first, 1000);
    cr_assert_eq(s.second, 4500);
    cr_assert_eq(s.freq, 1000);
    /* (4500 - 1000)/1000 = 3.5 s */
    cr_assert_eq(pcw_cook(PERF_ELAPSED_TIME, &s, NULL, 0, 0, &d), PCW_CSTATUS_VALID);
    cr_assert_eq(d, 3.5);

    pcw__q_recipe_build(&cset, 5, &r);
    pcw__q_raw_from_row(&r, row, &l, 65 * TB, &s);
    /* (65e9 - 5e9)/1e9 = 60 s */
    cr_assert_eq(pcw_cook(PERF_ELAPSED_TIME, &s, NULL, 0, 0, &d), PCW_CSTATUS_VALID);
    cr_assert_eq(d, 60.0);
}

Test(recipe, multi_count_and_precision)
{
    reset_set();
    add_counter(1, PERF_100NSEC_MULTI_TIMER, 8, 0);
    add_counter(2, PERF_COUNTER_MULTI_BASE, 8, 8);
    add_counter(3, PERF_COUNTER_MULTI_TIMER_INV, 8, 16);
    add_counter(4, PERF_COUNTER_RAWCOUNT, 4, 24);
    ctrs[2].multi_id = 4;
    add_counter(5, PERF_PRECISION_100NS_TIMER, 8, 32);
    add_counter(6, PERF_PRECISION_TIMESTAMP, 8, 40);
    add_counter(7, PERF_PRECISION_SYSTEM_TIMER, 8, 48); /* no timestamp */
    add_counter(8, PERF_COUNTER_MULTI_TIMER, 8, 56);    /* no count at all */
    unsigned char row[64] = {0};
    uint64_t v;
    v = 3, memcpy(row + 8, &v, 8);
    v = 6, memcpy(row + 24, &v, 4);
    v = 77, memcpy(row + 40, &v, 8);
    pcw__q_layout l = layout();
    pcw__q_recipe r;
    pcw_raw s;

    pcw__q_recipe_build(&cset, 0, &r);
    pcw__q_raw_from_row(&r, row, &l, TB, &s);
    cr_assert_eq(s.multi, 3, "multi count from the MULTI_BASE that follows");
    cr_assert_eq(s.second, TB100);
    pcw__q_recipe_build(&cset, 2, &r);
    pcw__q_raw_from_row(&r, row, &l, TB, &s);
    cr_assert_eq(s.multi, 6, "multiCounterID names the count");
    cr_assert_eq(s.second, TB);
    pcw__q_recipe_build(&cset, 4, &r);
    pcw__q_raw_from_row(&r, row, &l, TB, &s);
    cr_assert_eq(s.second, 77, "precision timer: its own timestamp");
    pcw__q_recipe_build(&cset, 6, &r);
    pcw__q_raw_from_row(&r, row, &l, 9 * TB, &s);
    cr_assert_eq(s.second, 9 * TB, "without a timestamp: the system time");
    pcw__q_recipe_build(&cset, 7, &r);
    cr_assert_eq(r.status, PCW_CSTATUS_NO_BASE);
}

/* Issue 27: the tick-counting types take their ticks per second from the
 * counterset's frequency counter (perf_freq_id) when it names one, as PDH
 * takes PerfFreq; the system time (Y) is then read in those ticks. Here
 * the provider counts milliseconds: F = 1000. */
Test(recipe, tick_types_take_the_counterset_frequency)
{
    reset_set();
    add_counter(1, PERF_AVERAGE_TIMER, 8, 0);
    add_counter(2, PERF_AVERAGE_BASE, 4, 8);
    add_counter(3, PERF_COUNTER_LARGE_RAWCOUNT, 8, 16); /* the frequency */
    add_counter(4, PERF_COUNTER_TIMER, 8, 24);
    add_counter(5, PERF_COUNTER_MULTI_TIMER, 8, 32);
    add_counter(6, PERF_COUNTER_MULTI_BASE, 8, 40);
    add_counter(7, PERF_AVERAGE_TIMER, 8, 48); /* no frequency counter */
    add_counter(8, PERF_AVERAGE_BASE, 4, 56);
    ctrs[0].perf_freq_id = 3, ctrs[3].perf_freq_id = 3, ctrs[4].perf_freq_id = 3;
    unsigned char row0[64] = {0}, row1[64] = {0};
    uint64_t v;
    v = 1000, memcpy(row0 + 16, &v, 8), memcpy(row1 + 16, &v, 8);
    v = 2, memcpy(row0 + 40, &v, 8), memcpy(row1 + 40, &v, 8);
    v = 3000, memcpy(row1 + 0, &v, 8);    /* 3 s of summed latency, in ms */
    v = 4, memcpy(row1 + 8, &v, 4);       /* over 4 requests */
    v = 1000, memcpy(row1 + 24, &v, 8);   /* 1 s busy, in ms */
    v = 2000, memcpy(row1 + 32, &v, 8);   /* 2 s busy over 2 items, in ms */
    v = 3 * TB, memcpy(row1 + 48, &v, 8); /* 3 s in ns (the default) */
    v = 4, memcpy(row1 + 56, &v, 4);
    pcw__q_layout l = layout();
    pcw__q_recipe r;
    pcw_raw s0, s1;
    double d;

    pcw__q_recipe_build(&cset, 0, &r);
    pcw__q_raw_from_row(&r, row0, &l, 1 * TB, &s0);
    pcw__q_raw_from_row(&r, row1, &l, 3 * TB, &s1);
    cr_assert_eq(s1.freq, 1000, "PERF_AVERAGE_TIMER: TB is the frequency counter's value");
    /* ((3000 - 0)/1000)/(4 - 0) = 0.75 s */
    cr_assert_eq(pcw_cook(PERF_AVERAGE_TIMER, &s1, &s0, 0, 0, &d), PCW_CSTATUS_VALID);
    cr_assert_eq(d, 0.75);

    pcw__q_recipe_build(&cset, 3, &r);
    pcw__q_raw_from_row(&r, row0, &l, 1 * TB, &s0);
    pcw__q_raw_from_row(&r, row1, &l, 3 * TB, &s1);
    cr_assert_eq(s1.second - s0.second, 2000, "Y: the system time in the provider's ticks");
    /* 100 * (1000 - 0)/(3000 - 1000) = 50 % */
    cr_assert_eq(pcw_cook(PERF_COUNTER_TIMER, &s1, &s0, 0, 0, &d), PCW_CSTATUS_VALID);
    cr_assert_eq(d, 50.0);

    pcw__q_recipe_build(&cset, 4, &r);
    pcw__q_raw_from_row(&r, row0, &l, 1 * TB, &s0);
    pcw__q_raw_from_row(&r, row1, &l, 3 * TB, &s1);
    /* 100 * ((2000 - 0)/(3000 - 1000))/2 = 50 % */
    cr_assert_eq(pcw_cook(PERF_COUNTER_MULTI_TIMER, &s1, &s0, 0, 0, &d), PCW_CSTATUS_VALID);
    cr_assert_eq(d, 50.0);

    pcw__q_recipe_build(&cset, 6, &r);
    pcw__q_raw_from_row(&r, row0, &l, 1 * TB, &s0);
    pcw__q_raw_from_row(&r, row1, &l, 3 * TB, &s1);
    cr_assert_eq(s1.freq, TB, "without a frequency counter: 10^9 (nanoseconds)");
    /* (3e9/1e9)/4 = 0.75 s */
    cr_assert_eq(pcw_cook(PERF_AVERAGE_TIMER, &s1, &s0, 0, 0, &d), PCW_CSTATUS_VALID);
    cr_assert_eq(d, 0.75);

    /* A hostile frequency: 0 is a bad time base, not a division by zero;
     * 2^64 - 1 gives some status, never a trap (UBSan: no overflowing
     * conversion). */
    v = 0, memcpy(row0 + 16, &v, 8), memcpy(row1 + 16, &v, 8);
    pcw__q_recipe_build(&cset, 0, &r);
    pcw__q_raw_from_row(&r, row0, &l, 1 * TB, &s0);
    pcw__q_raw_from_row(&r, row1, &l, 3 * TB, &s1);
    cr_assert_eq(pcw_cook(PERF_AVERAGE_TIMER, &s1, &s0, 0, 0, &d), PCW_CSTATUS_BAD_TIMEBASE);
    for (int k = 3; k <= 4; k++) {
        pcw__q_recipe_build(&cset, (uint32_t)k, &r);
        pcw__q_raw_from_row(&r, row0, &l, 1 * TB, &s0);
        pcw__q_raw_from_row(&r, row1, &l, 3 * TB, &s1);
        cr_assert_neq(pcw_cook(ctrs[k].type, &s1, &s0, 0, 0, &d), PCW_CSTATUS_VALID);
    }
    /* 10^19 ticks a second: 2 s are more ticks than 64 bits count, so
     * their difference wrapped into a smaller, valid-looking one. */
    for (int big = 0; big < 2; big++) {
        v = big ? UINT64_MAX : 10000000000000000000ull;
        memcpy(row0 + 16, &v, 8), memcpy(row1 + 16, &v, 8);
        for (int k = 0; k <= 4; k++) {
            pcw__q_recipe_build(&cset, (uint32_t)k, &r);
            pcw__q_raw_from_row(&r, row0, &l, 1 * TB + 999999999, &s0);
            pcw__q_raw_from_row(&r, row1, &l, 3 * TB + 999999999, &s1);
            int st = pcw_cook(ctrs[k].type, &s1, &s0, 0, 0, &d);
            /* The types timed by the system time (3, 4): its ticks since the
             * start do not fit 64 bits, a status, not a number made of a
             * wrapped product. The average timer divides by the frequency
             * only: a tiny number, but the right one. */
            if (k == 3 || k == 4)
                cr_assert_neq(st, PCW_CSTATUS_VALID, "frequency %llu, counter %d: %g",
                              (unsigned long long)v, k, d);
        }
    }

    /* A frequency counter named but missing: no base, not a guess. */
    ctrs[0].perf_freq_id = 99;
    pcw__q_recipe_build(&cset, 0, &r);
    cr_assert_eq(r.status, PCW_CSTATUS_NO_BASE);
}

/* ---- aggregation maths --------------------------------------------------- */

Test(aggregate, functions)
{
    pcw__q_acc a;
    pcw__q_acc_reset(&a);
    uint64_t out;
    /* Nothing: sum 0; avg/min/max have no value. */
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_TOTAL, &out), PCW_CSTATUS_VALID);
    cr_assert_eq(out, 0);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_AVERAGE, &out), PCW_CSTATUS_NO_INSTANCE);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_MIN, &out), PCW_CSTATUS_NO_INSTANCE);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_MAX, &out), PCW_CSTATUS_NO_INSTANCE);
    /* 3, 4, 10: sum 17, avg 17/3 = 5.67 -> 6, min 3, max 10 */
    pcw__q_acc_add(&a, 3), pcw__q_acc_add(&a, 4), pcw__q_acc_add(&a, 10);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_TOTAL, &out), PCW_CSTATUS_VALID);
    cr_assert_eq(out, 17);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_AVERAGE, &out), PCW_CSTATUS_VALID);
    cr_assert_eq(out, 6);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_MIN, &out), PCW_CSTATUS_VALID);
    cr_assert_eq(out, 3);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_MAX, &out), PCW_CSTATUS_VALID);
    cr_assert_eq(out, 10);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_UNDEFINED, &out), PCW_CSTATUS_NOT_AGGREGATED);
    /* Averages round to nearest: (3+4)/2 = 3.5 -> 4; (3+3+4)/3 = 3.33 -> 3 */
    pcw__q_acc b;
    pcw__q_acc_reset(&b);
    pcw__q_acc_add(&b, 3), pcw__q_acc_add(&b, 4);
    pcw__q_acc_result(&b, PCW_AGGREGATE_AVERAGE, &out);
    cr_assert_eq(out, 4);
    pcw__q_acc_add(&b, 3);
    pcw__q_acc_result(&b, PCW_AGGREGATE_AVERAGE, &out);
    cr_assert_eq(out, 3);
    /* No overflow in the rounding near the top of the range. */
    pcw__q_acc c;
    pcw__q_acc_reset(&c);
    pcw__q_acc_add(&c, UINT64_MAX - 1);
    pcw__q_acc_result(&c, PCW_AGGREGATE_AVERAGE, &out);
    cr_assert_eq(out, UINT64_MAX - 1);
}

Test(aggregate, overflow_and_merge)
{
    pcw__q_acc a, h;
    pcw__q_acc_reset(&a);
    pcw__q_acc_reset(&h);
    uint64_t out;
    pcw__q_acc_add(&a, UINT64_MAX);
    pcw__q_acc_add(&a, 1); /* wraps */
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_TOTAL, &out), PCW_CSTATUS_OVERFLOW);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_AVERAGE, &out), PCW_CSTATUS_OVERFLOW);
    cr_assert_eq(pcw__q_acc_result(&a, PCW_AGGREGATE_MAX, &out), PCW_CSTATUS_VALID);
    cr_assert_eq(out, UINT64_MAX);
    /* History: a departed instance's last values (100, then 7) folded into
     * the live total (5): sum 112, min 5, max 100, avg 112/3 = 37.3 -> 37 */
    pcw__q_acc live;
    pcw__q_acc_reset(&live);
    pcw__q_acc_add(&live, 5);
    pcw__q_acc_add(&h, 100);
    pcw__q_acc_add(&h, 7);
    pcw__q_acc_merge(&live, &h);
    pcw__q_acc_result(&live, PCW_AGGREGATE_TOTAL, &out);
    cr_assert_eq(out, 112);
    pcw__q_acc_result(&live, PCW_AGGREGATE_MIN, &out);
    cr_assert_eq(out, 5);
    pcw__q_acc_result(&live, PCW_AGGREGATE_MAX, &out);
    cr_assert_eq(out, 100);
    pcw__q_acc_result(&live, PCW_AGGREGATE_AVERAGE, &out);
    cr_assert_eq(out, 37);
    /* Merging an empty history changes nothing; merging a wrapped one
     * carries the overflow. */
    pcw__q_acc e;
    pcw__q_acc_reset(&e);
    pcw__q_acc_merge(&live, &e);
    cr_assert_eq(live.n, 3);
    pcw__q_acc_merge(&live, &a);
    cr_assert(live.overflow);
}

Test(aggregate, inherited_functions)
{
    reset_set();
    add_counter(1, PERF_RAW_FRACTION, 4, 0);
    add_counter(2, PERF_RAW_BASE, 4, 4);
    add_counter(3, PERF_OBJ_TIME_TIMER, 8, 8);
    add_counter(4, PERF_COUNTER_LARGE_RAWCOUNT, 8, 16);
    add_counter(5, PERF_COUNTER_LARGE_RAWCOUNT, 8, 24);
    add_counter(6, PERF_COUNTER_RAWCOUNT, 4, 32);
    ctrs[0].aggregate = PCW_AGGREGATE_TOTAL;
    ctrs[2].aggregate = PCW_AGGREGATE_TOTAL;
    ctrs[2].perf_time_id = 4, ctrs[2].perf_freq_id = 5;
    ctrs[5].aggregate = PCW_AGGREGATE_MIN;
    uint32_t fn[8];
    pcw__q_aggregate_functions(&cset, fn);
    cr_assert_eq(fn[0], PCW_AGGREGATE_TOTAL);
    cr_assert_eq(fn[1], PCW_AGGREGATE_TOTAL, "a base follows its fraction");
    cr_assert_eq(fn[3], PCW_AGGREGATE_MAX, "an object time takes the latest");
    cr_assert_eq(fn[4], PCW_AGGREGATE_MAX, "an object frequency likewise");
    cr_assert_eq(fn[5], PCW_AGGREGATE_MIN);
    /* A base with its own attribute keeps it. */
    ctrs[1].aggregate = PCW_AGGREGATE_AVERAGE;
    pcw__q_aggregate_functions(&cset, fn);
    cr_assert_eq(fn[1], PCW_AGGREGATE_AVERAGE);
}

Test(aggregate, instance_types)
{
    pcw__q_itype t = pcw__q_instance_type(PCW_SINGLE_INSTANCE);
    cr_assert(!t.named && !t.total && !t.global && t.known);
    t = pcw__q_instance_type(PCW_MULTI_INSTANCE);
    cr_assert(t.named && !t.total && !t.by_name);
    t = pcw__q_instance_type(PCW_GLOBAL_AGGREGATE);
    cr_assert(!t.named && t.global && !t.history);
    t = pcw__q_instance_type(PCW_GLOBAL_AGGREGATE_HISTORY);
    cr_assert(t.global && t.history);
    t = pcw__q_instance_type(PCW_MULTI_AGGREGATE);
    cr_assert(t.named && t.total && !t.history);
    t = pcw__q_instance_type(PCW_MULTI_AGGREGATE_HISTORY);
    cr_assert(t.named && t.total && t.history);
    t = pcw__q_instance_type(PCW_INSTANCE_AGGREGATE);
    cr_assert(t.named && t.by_name && !t.total && !t.history);
    t = pcw__q_instance_type(PCW_INSTANCE_AGGREGATE_HISTORY);
    cr_assert(t.named && t.by_name && t.history);
    t = pcw__q_instance_type(99);
    cr_assert(t.named && !t.known);
}
