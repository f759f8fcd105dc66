/* SPDX-License-Identifier: MIT */
/*
 * lib/query/cook.c - cooked values: Microsoft's formulas for every counter
 * type, and how a raw sample is taken from a row of counter values.
 *
 * Sources (docs/query.md has the table):
 *   - "Calculations for Raw Counter Data" (Platform SDK, Performance
 *     Monitoring; the Windows CE "Supported PERF Types" pages repeat it):
 *     the formula of each type, with X = the counter's value, Y = the time
 *     in the type's time base, B = the base counter, TB = the time base's
 *     frequency, 0/1 = older/newer sample.
 *   - The Windows Server 2003 "Counter Types" reference for
 *     PERF_SAMPLE_COUNTER (a rate over the system time; no base) and the
 *     precision timers (the denominator is the counter's own timestamp,
 *     the next counter).
 *   - PdhCalculateCounterFromRawValue / PdhGetFormattedCounterValue for
 *     what happens after the formula: a PERF_DISPLAY_PERCENT type is x100
 *     and capped at 100 unless PDH_FMT_NOCAP100; then x 10^scale unless
 *     PDH_FMT_NOSCALE; then x1000 with PDH_FMT_1000; and for the statuses
 *     (negative denominator, negative value...).
 *
 * Where pcw departs from PDH, it is on purpose and written down: a zero
 * interval or zero base gives PCW_CSTATUS_ZERO_DENOMINATOR (PDH shows 0),
 * so a ratio with nothing to divide by is never shown as a number; a
 * cumulative value that went down is PCW_CSTATUS_RESET (PDH's
 * PDH_CALC_NEGATIVE_VALUE), also for 4-byte counters, whose wrap-around
 * cannot be told from a reset.
 */
#include <math.h>
#include <string.h>

#include "cook.h"

const char *pcw_cstatus_str(int s)
{
    switch ((pcw_cstatus)s) {
    case PCW_CSTATUS_VALID:
        return "valid";
    case PCW_CSTATUS_NEW_DATA_NEEDED:
        return "new data needed (first sample)";
    case PCW_CSTATUS_NO_DATA:
        return "no data (type has no displayable value)";
    case PCW_CSTATUS_NO_INSTANCE:
        return "no such instance in this sample";
    case PCW_CSTATUS_PROVIDER_GONE:
        return "provider gone";
    case PCW_CSTATUS_NO_BASE:
        return "base counter missing";
    case PCW_CSTATUS_NEGATIVE_DENOMINATOR:
        return "negative denominator (time or base went backwards)";
    case PCW_CSTATUS_ZERO_DENOMINATOR:
        return "zero denominator (no time passed, or zero base)";
    case PCW_CSTATUS_BAD_TIMEBASE:
        return "zero time base frequency";
    case PCW_CSTATUS_RESET:
        return "counter reset (value went down)";
    case PCW_CSTATUS_OVERFLOW:
        return "overflow";
    case PCW_CSTATUS_NOT_AGGREGATED:
        return "not aggregated (aggregate function undefined)";
    case PCW_CSTATUS_ABOVE_RANGE:
        return "above range (at least the histogram's top bound)";
    case PCW_CSTATUS_INCONSISTENT:
        return "inconsistent data (sum outside the buckets' bounds)";
    }
    return "unknown status";
}

/* ---- type table --------------------------------------------------------- */

const char *pcw_counter_type_name(uint32_t type)
{
    return pcw__counter_type_name(type); /* the list is pcw/types.h's */
}

int pcw__q_formula(uint32_t type)
{
    switch (type) {
    case PERF_COUNTER_RAWCOUNT:
    case PERF_COUNTER_LARGE_RAWCOUNT:
    case PERF_COUNTER_RAWCOUNT_HEX:
    case PERF_COUNTER_LARGE_RAWCOUNT_HEX:
        return PCW__Q_F_RAW;
    case PERF_RAW_FRACTION:
    case PERF_LARGE_RAW_FRACTION:
        return PCW__Q_F_RAW_FRACTION;
    case PERF_ELAPSED_TIME:
        return PCW__Q_F_ELAPSED;
    case PERF_COUNTER_COUNTER:
    case PERF_COUNTER_BULK_COUNT:
    case PERF_SAMPLE_COUNTER:
        return PCW__Q_F_RATE;
    case PERF_COUNTER_DELTA:
    case PERF_COUNTER_LARGE_DELTA:
        return PCW__Q_F_DELTA;
    case PERF_COUNTER_TIMER:
    case PERF_100NSEC_TIMER:
    case PERF_OBJ_TIME_TIMER:
    case PERF_PRECISION_SYSTEM_TIMER:
    case PERF_PRECISION_100NS_TIMER:
    case PERF_PRECISION_OBJECT_TIMER:
    case PERF_COUNTER_QUEUELEN_TYPE:
    case PERF_COUNTER_LARGE_QUEUELEN_TYPE:
    case PERF_COUNTER_100NS_QUEUELEN_TYPE:
    case PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE:
    case PERF_SAMPLE_FRACTION:
    case PERF_AVERAGE_BULK:
        return PCW__Q_F_RATIO;
    case PERF_AVERAGE_TIMER:
        return PCW__Q_F_AVERAGE_TIMER;
    case PERF_COUNTER_TIMER_INV:
    case PERF_100NSEC_TIMER_INV:
        return PCW__Q_F_INVERSE;
    case PERF_COUNTER_MULTI_TIMER: /* X in ticks of Y's clock (docs/query.md) */
    case PERF_100NSEC_MULTI_TIMER:
        return PCW__Q_F_MULTI;
    case PERF_COUNTER_MULTI_TIMER_INV:
    case PERF_100NSEC_MULTI_TIMER_INV:
        return PCW__Q_F_MULTI_INV;
    }
    return PCW__Q_F_NONE; /* bases, text, nodata, histogram, unknown */
}

int pcw_cook_needs_two(uint32_t type)
{
    int f = pcw__q_formula(type);
    return f != PCW__Q_F_NONE && f != PCW__Q_F_RAW && f != PCW__Q_F_RAW_FRACTION &&
           f != PCW__Q_F_ELAPSED;
}

/* ---- the formulas ------------------------------------------------------- */

/* After the formula: percent, cap, scale, x1000, finiteness. */
int pcw__q_finish(uint32_t type, double v, int32_t scale, unsigned flags, double *value)
{
    if ((type & 0xF0000000u) == PCW_PERF_DISPLAY_PERCENT)
        v *= 100.0;
    return pcw__q_finish_percent(type, v, scale, flags, value);
}

int pcw__q_finish_percent(uint32_t type, double v, int32_t scale, unsigned flags, double *value)
{
    if ((type & 0xF0000000u) == PCW_PERF_DISPLAY_PERCENT && !(flags & PCW_FMT_NOCAP100) &&
        v > 100.0)
        v = 100.0;
    if (!(flags & PCW_FMT_NOSCALE) && scale != 0)
        v *= pcw__q_pow10(scale);
    if (flags & PCW_FMT_1000)
        v *= 1000.0;
    if (!isfinite(v))
        return PCW_CSTATUS_OVERFLOW;
    *value = v;
    return PCW_CSTATUS_VALID;
}

double pcw__q_pow10(int32_t e)
{
    static const double p[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (e >= 0 && e < 16)
        return p[e];
    if (e < 0 && e > -16)
        return 1.0 / p[-e];
    /* A segment's scale is the provider's int32: past +-400 the result is
     * 0 or infinite already (and -INT32_MIN, the recursion below, does not
     * exist). */
    if (e < -400)
        return 0.0;
    if (e > 400)
        return HUGE_VAL;
    /* Beyond the table (no counter scale is: -10..10), without libm:
     * powers of ten are exact up to 1e22, and 1/x is correctly rounded. */
    if (e < 0)
        return 1.0 / pcw__q_pow10(-e);
    return e > 308 ? HUGE_VAL : p[15] * pcw__q_pow10(e - 15);
}

/* Y1 - Y0 as a positive double, or the status that forbids it. */
static int interval(const pcw_raw *now, const pcw_raw *prev, double *d)
{
    if (now->second < prev->second)
        return PCW_CSTATUS_NEGATIVE_DENOMINATOR;
    if (now->second == prev->second)
        return PCW_CSTATUS_ZERO_DENOMINATOR;
    *d = (double)(now->second - prev->second);
    return PCW_CSTATUS_VALID;
}

/* X1 - X0, or PCW_CSTATUS_RESET. */
static int numerator(const pcw_raw *now, const pcw_raw *prev, double *d)
{
    if (now->first < prev->first)
        return PCW_CSTATUS_RESET;
    *d = (double)(now->first - prev->first);
    return PCW_CSTATUS_VALID;
}

/* An inverse timer's "not in use" fraction: clamp a small negative result
 * (rounding between two clocks) to 0 as PDH does - below -0.1 it is an
 * error, not noise. */
static int inverse(double v, double *out)
{
    if (v < 0.0) {
        if (v < -0.1)
            return PCW_CSTATUS_NEGATIVE_DENOMINATOR;
        v = 0.0;
    }
    *out = v;
    return PCW_CSTATUS_VALID;
}

int pcw__q_cook_parts(int f, const pcw_raw *now, const pcw_raw *prev, double *part, double *whole)
{
    double num = 0.0, den = 0.0;
    int s;
    *part = 0.0, *whole = 1.0;
    switch (f) {
    case PCW__Q_F_NONE:
        return PCW_CSTATUS_NO_DATA;
    case PCW__Q_F_RAW: /* X */
        *part = (double)now->first;
        return PCW_CSTATUS_VALID;
    case PCW__Q_F_RAW_FRACTION: /* 100 * X / B */
        if (now->second == 0)
            return PCW_CSTATUS_ZERO_DENOMINATOR;
        *part = (double)now->first, *whole = (double)now->second;
        return PCW_CSTATUS_VALID;
    case PCW__Q_F_ELAPSED: /* (Y - X) / TB */
        if (now->freq == 0)
            return PCW_CSTATUS_BAD_TIMEBASE;
        if (now->second < now->first)
            return PCW_CSTATUS_NEGATIVE_DENOMINATOR;
        *part = (double)(now->second - now->first) / (double)now->freq;
        return PCW_CSTATUS_VALID;
    }
    /* Every other formula compares two samples. */
    if (!prev || prev->status != PCW_CSTATUS_VALID)
        return PCW_CSTATUS_NEW_DATA_NEEDED;
    if (f == PCW__Q_F_DELTA) /* X1 - X0 */
        return numerator(now, prev, part);
    if ((s = interval(now, prev, &den)) != PCW_CSTATUS_VALID ||
        (s = numerator(now, prev, &num)) != PCW_CSTATUS_VALID)
        return s;
    switch (f) {
    case PCW__Q_F_RATE: /* (X1 - X0) / ((Y1 - Y0) / TB) */
        if (now->freq == 0)
            return PCW_CSTATUS_BAD_TIMEBASE;
        *part = num / (den / (double)now->freq);
        return PCW_CSTATUS_VALID;
    case PCW__Q_F_RATIO: /* (X1 - X0) / (Y1 - Y0), x100 when a percentage */
        *part = num, *whole = den;
        return PCW_CSTATUS_VALID;
    case PCW__Q_F_AVERAGE_TIMER: /* ((X1 - X0) / TB) / (B1 - B0) */
        if (now->freq == 0)
            return PCW_CSTATUS_BAD_TIMEBASE;
        *part = num / (double)now->freq, *whole = den;
        return PCW_CSTATUS_VALID;
    case PCW__Q_F_INVERSE: /* 100 * (1 - (X1 - X0) / (Y1 - Y0)) */
        return inverse(1.0 - num / den, part);
    case PCW__Q_F_MULTI:    /* 100 * ((X1 - X0) / (Y1 - Y0)) / B1 */
        if (now->freq == 0) /* a frequency counter at 0: no clock to tick */
            return PCW_CSTATUS_BAD_TIMEBASE;
        if (now->multi == 0)
            return PCW_CSTATUS_ZERO_DENOMINATOR;
        *part = num / den, *whole = (double)now->multi;
        return PCW_CSTATUS_VALID;
    case PCW__Q_F_MULTI_INV: /* 100 * (B1 - ((X1 - X0) / (Y1 - Y0))) / B1 */
        if (now->freq == 0)
            return PCW_CSTATUS_BAD_TIMEBASE;
        if (now->multi == 0)
            return PCW_CSTATUS_ZERO_DENOMINATOR;
        *whole = (double)now->multi;
        return inverse((double)now->multi - num / den, part);
    }
    return PCW_CSTATUS_NO_DATA;
}

int pcw_cook(uint32_t type, const pcw_raw *now, const pcw_raw *prev, int32_t scale, unsigned flags,
             double *value)
{
    double dummy;
    if (!value)
        value = &dummy;
    *value = 0.0;
    int f = pcw__q_formula(type);
    if (f == PCW__Q_F_NONE)
        return PCW_CSTATUS_NO_DATA;
    if (!now)
        return PCW_CSTATUS_NO_INSTANCE;
    if (now->status != PCW_CSTATUS_VALID)
        return now->status;
    if (flags & PCW_FMT_RAW) { /* X, no formula, no scale */
        *value = (double)now->first;
        return PCW_CSTATUS_VALID;
    }
    double part, whole;
    int s = pcw__q_cook_parts(f, now, prev, &part, &whole);
    if (s != PCW_CSTATUS_VALID)
        return s;
    /* (whole is 1 where the formula is not a fraction: x / 1.0 is x.) */
    return pcw__q_finish(type, part / whole, scale, flags, value);
}

/* ---- raw samples from rows ---------------------------------------------- */

static int find_counter(const pcw_counterset *cs, uint32_t id)
{
    for (uint32_t i = 0; i < cs->counter_count; i++)
        if (cs->counters[i].id == id)
            return (int)i;
    return -1;
}

/* The base of counter k: baseID, else the next counter when it has a base
 * type (Windows' rule); -1 if none. */
static int find_base(const pcw_counterset *cs, uint32_t k)
{
    const pcw_counter *c = &cs->counters[k];
    if (c->base_id != PCW_NO_COUNTER)
        return find_counter(cs, c->base_id);
    if (k + 1 < cs->counter_count && pcw_counter_type_is_base(cs->counters[k + 1].type))
        return (int)k + 1;
    return -1;
}

/* A type that counts ticks of the system clock (PCW_PERF_TIMER_TICK: the
 * timers, queue lengths, PERF_AVERAGE_TIMER) counts them at the
 * counterset's frequency - the counter perf_freq_id names, Windows'
 * PerfFreq - when it names one, as PDH takes PerfFreq; else at pcw's
 * system frequency, 10^9 (nanoseconds, pcw_time_ns()). The system time
 * is then read in those ticks (pcw__q_raw_from_row), so that X and Y share
 * a clock as the formulas expect. A named counter that is not there is
 * PCW_CSTATUS_NO_BASE, not a guess. */
static void tick_freq(pcw__q_recipe *r, const pcw_counter *c, int obj_freq)
{
    if (c->perf_freq_id == PCW_NO_COUNTER)
        return;
    r->freq_ctr = obj_freq;
    if (obj_freq < 0)
        r->status = PCW_CSTATUS_NO_BASE;
}

/* CLOCK_MONOTONIC nanoseconds in ticks of `freq` per second: exact for
 * 10^9, and otherwise whole seconds exactly and the fraction in double
 * (a hostile frequency wraps, never traps). */
/* 0, or -1 when the ticks do not fit 64 bits (a frequency from the
 * segment, so any value: 2^64-1 ticks a second wrap within a second). */
static int ns_to_ticks(uint64_t ns, uint64_t freq, uint64_t *ticks)
{
    if (freq == PCW__Q_SYS_FREQ) {
        *ticks = ns;
        return 0;
    }
    uint64_t s = ns / PCW__Q_SYS_FREQ, rem = ns % PCW__Q_SYS_FREQ;
    double frac = (double)rem * (double)freq / (double)PCW__Q_SYS_FREQ; /* < freq */
    uint64_t whole = frac < 0x1p64 ? (uint64_t)frac : UINT64_MAX;
    if (freq && s > (UINT64_MAX - whole) / freq)
        return -1;
    *ticks = s * freq + whole;
    return 0;
}

void pcw__q_recipe_build(const pcw_counterset *cs, uint32_t k, pcw__q_recipe *r)
{
    const pcw_counter *c = &cs->counters[k];
    memset(r, 0, sizeof *r);
    r->type = c->type;
    r->formula = (uint8_t)pcw__q_formula(c->type);
    r->value = k;
    r->base = r->multi = r->time = r->freq_ctr = -1;
    r->freq = PCW__Q_SYS_FREQ;
    r->status = PCW_CSTATUS_VALID;
    int obj_time = c->perf_time_id != PCW_NO_COUNTER ? find_counter(cs, c->perf_time_id) : -1;
    int obj_freq = c->perf_freq_id != PCW_NO_COUNTER ? find_counter(cs, c->perf_freq_id) : -1;
    int base = find_base(cs, k);
    switch (c->type) {
    case PERF_COUNTER_COUNTER:
    case PERF_COUNTER_BULK_COUNT:
    case PERF_SAMPLE_COUNTER:
        r->second = PCW__Q_Y_SYSTIME;
        break;
    case PERF_COUNTER_TIMER:
    case PERF_COUNTER_TIMER_INV:
    case PERF_COUNTER_QUEUELEN_TYPE:
    case PERF_COUNTER_LARGE_QUEUELEN_TYPE:
        r->second = PCW__Q_Y_SYSTIME;
        tick_freq(r, c, obj_freq);
        break;
    case PERF_100NSEC_TIMER:
    case PERF_100NSEC_TIMER_INV:
    case PERF_COUNTER_100NS_QUEUELEN_TYPE:
        r->second = PCW__Q_Y_100NS, r->freq = PCW__Q_100NS_FREQ;
        break;
    case PERF_COUNTER_MULTI_TIMER:
    case PERF_COUNTER_MULTI_TIMER_INV:
    case PERF_100NSEC_MULTI_TIMER:
    case PERF_100NSEC_MULTI_TIMER_INV:
        if (c->type == PERF_100NSEC_MULTI_TIMER || c->type == PERF_100NSEC_MULTI_TIMER_INV)
            r->second = PCW__Q_Y_100NS, r->freq = PCW__Q_100NS_FREQ;
        else
            r->second = PCW__Q_Y_SYSTIME, tick_freq(r, c, obj_freq);
        r->multi = c->multi_id != PCW_NO_COUNTER ? find_counter(cs, c->multi_id) : base;
        if (r->multi < 0)
            r->status = PCW_CSTATUS_NO_BASE;
        break;
    case PERF_OBJ_TIME_TIMER:
    case PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE:
    case PERF_ELAPSED_TIME:
        r->second = obj_time >= 0 ? PCW__Q_Y_COUNTER : PCW__Q_Y_SYSTIME;
        r->time = obj_time;
        r->freq_ctr = obj_freq;
        if (c->perf_time_id != PCW_NO_COUNTER && obj_time < 0)
            r->status = PCW_CSTATUS_NO_BASE;
        if (c->perf_freq_id != PCW_NO_COUNTER && obj_freq < 0)
            r->status = PCW_CSTATUS_NO_BASE;
        break;
    case PERF_PRECISION_SYSTEM_TIMER:
    case PERF_PRECISION_100NS_TIMER:
    case PERF_PRECISION_OBJECT_TIMER:
        /* The counter's own timestamp (its base) when it has one, else the
         * clock the type names. Either way `freq` is the ticks per second
         * of that clock (the formula does not use it; raw samples carry
         * it, for consumers that convert to seconds). */
        if (base >= 0) {
            r->second = PCW__Q_Y_BASE, r->base = base;
            if (c->type == PERF_PRECISION_100NS_TIMER)
                r->freq = PCW__Q_100NS_FREQ;
            else if (c->type == PERF_PRECISION_OBJECT_TIMER)
                r->freq_ctr = obj_freq;
        } else if (c->type == PERF_PRECISION_100NS_TIMER) {
            r->second = PCW__Q_Y_100NS, r->freq = PCW__Q_100NS_FREQ;
        } else if (c->type == PERF_PRECISION_OBJECT_TIMER && obj_time >= 0) {
            r->second = PCW__Q_Y_COUNTER, r->time = obj_time, r->freq_ctr = obj_freq;
        } else {
            r->second = PCW__Q_Y_SYSTIME;
            if (c->type == PERF_PRECISION_SYSTEM_TIMER)
                tick_freq(r, c, obj_freq);
        }
        break;
    case PERF_SAMPLE_FRACTION:
    case PERF_RAW_FRACTION:
    case PERF_LARGE_RAW_FRACTION:
    case PERF_AVERAGE_TIMER:
    case PERF_AVERAGE_BULK:
        r->second = PCW__Q_Y_BASE, r->base = base;
        if (base < 0)
            r->status = PCW_CSTATUS_NO_BASE;
        if (c->type == PERF_AVERAGE_TIMER)
            tick_freq(r, c, obj_freq);
        break;
    default:
        r->second = PCW__Q_Y_NONE;
        break;
    }
}

void pcw__q_raw_from_row(const pcw__q_recipe *r, const unsigned char *row, const pcw__q_layout *lay,
                         uint64_t time_ns, pcw_raw *out)
{
    out->status = r->status;
    out->first = pcw__q_load(row, lay, (uint32_t)r->value);
    out->second = 0;
    out->multi = 1;
    out->freq = r->freq;
    out->time_ns = time_ns;
    if (r->freq_ctr >= 0)
        out->freq = pcw__q_load(row, lay, (uint32_t)r->freq_ctr);
    switch (r->second) {
    case PCW__Q_Y_SYSTIME: /* in the counterset's ticks when it has a frequency */
        out->second = time_ns;
        if (r->freq_ctr >= 0 && ns_to_ticks(time_ns, out->freq, &out->second) != 0)
            out->status = PCW_CSTATUS_OVERFLOW; /* no clock at that frequency */
        break;
    case PCW__Q_Y_100NS:
        out->second = time_ns / 100;
        break;
    case PCW__Q_Y_COUNTER:
        out->second = pcw__q_load(row, lay, (uint32_t)r->time);
        break;
    case PCW__Q_Y_BASE:
        if (r->base >= 0)
            out->second = pcw__q_load(row, lay, (uint32_t)r->base);
        break;
    }
    if (r->multi >= 0)
        out->multi = pcw__q_load(row, lay, (uint32_t)r->multi);
}
