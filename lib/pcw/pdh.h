/* SPDX-License-Identifier: MIT */
/*
 * pcw/pdh.h - libpcw's query layer, PDH for pcw: counter paths, a query
 * object that collects timestamped samples, and cooked (formatted) values
 * computed with Windows' formulas. Link with `pkg-config --libs pcw`.
 *
 *   paths    "\Counterset(Instance#n)\Counter", parsed, validated, built
 *            and expanded as PdhParseCounterPath / PdhMakeCounterPath /
 *            PdhExpandWildCardPath do.
 *   query    pcw_pdh_open, pcw_pdh_add_counter(path), pcw_pdh_collect, then
 *            read each counter's values per instance, raw or cooked, with a
 *            status per value (PdhOpenQuery, PdhAddCounter,
 *            PdhCollectQueryData, PdhGetFormattedCounterArray).
 *   cooking  pcw_cook: one value from two raw samples, as
 *            PdhCalculateCounterFromRawValue / PdhFormatFromRawValue.
 *
 * Time base: pcw's system time ("PerfTime") is CLOCK_MONOTONIC in
 * nanoseconds, so its frequency ("PerfFreq") is 10^9; the 100 ns time is the
 * same clock divided by 100. A counter whose type uses the object's time
 * (PERF_OBJ_TIME_TIMER, PERF_ELAPSED_TIME, PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE,
 * PERF_PRECISION_OBJECT_TIMER) takes it from the counter its perf_time_id
 * names, in ticks of the counter its perf_freq_id names; without them, from
 * the system time. A type that counts ticks of the system clock
 * (PERF_AVERAGE_TIMER, PERF_COUNTER_TIMER(_INV), PERF_COUNTER_MULTI_TIMER(_INV),
 * PERF_COUNTER_(LARGE_)QUEUELEN_TYPE, PERF_PRECISION_SYSTEM_TIMER) counts
 * them at the frequency of the counter its perf_freq_id names, as PDH uses
 * PerfFreq, and its raw samples carry the system time in those ticks;
 * without one, at 10^9 (nanoseconds: pcw_time_ns). docs/query.md has the
 * table of every formula.
 *
 * Instances are identified across collections by (provider, instance id,
 * name): an id that now carries another name is a new instance. Names that
 * several providers (or one provider's several registrations) publish are
 * told apart as PDH does, "name", "name#1", "name#2"..., and an instance
 * keeps its #n for as long as it lives. Aggregating countersets get their
 * totals here, from raw values, as their instance type says (see
 * pcw_pdh_value.kind).
 *
 * Concurrency: a pcw_pdh and everything it hands out (counter handles,
 * strings in values) belong to one thread at a time; distinct queries may
 * be used from distinct threads. Strings a value points to stay valid until
 * the next pcw_pdh_collect or pcw_pdh_remove_counter on that query. The
 * path functions and pcw_cook are pure and safe from any thread.
 *
 * NULL arguments: as pcw/consumer.h - PCW_E_INVALID_PARAMETER from a
 * function that returns a status (with *err filled, where there is one),
 * NULL, 0 or "" from a getter, nothing from pcw_pdh_close and
 * pcw_path_free; pointers documented as optional are just that.
 */
#ifndef PCW_PDH_H
#define PCW_PDH_H

#include <stddef.h>
#include <stdint.h>

#include "consumer.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- value status (PDH's CStatus) --------------------------------------- */

/* Every value carries one of these. Only PCW_CSTATUS_VALID has a number
 * (and PCW_CSTATUS_ABOVE_RANGE a lower bound); every other status leaves
 * value 0 and says why there is none, so a reset, a zero interval or a
 * missing base is never shown as a number. */
typedef enum pcw_cstatus {
    PCW_CSTATUS_VALID = 0,                /* PDH_CSTATUS_VALID_DATA / NEW_DATA
                                             (pcw_cstatus_pdh) */
    PCW_CSTATUS_NEW_DATA_NEEDED = 1,      /* first sample of a two-sample type (a
                                             rate...): collect once more
                                             (PDH_CSTATUS_INVALID_DATA) */
    PCW_CSTATUS_NO_DATA = 2,              /* the type has no value to show (base,
                                             text, histogram, nodata: PDH_NO_DATA) */
    PCW_CSTATUS_NO_INSTANCE = 3,          /* the instance is not in this sample
                                             (PDH_CSTATUS_NO_INSTANCE) */
    PCW_CSTATUS_PROVIDER_GONE = 4,        /* its provider exited or stopped
                                             answering (PDH_CSTATUS_NO_MACHINE) */
    PCW_CSTATUS_NO_BASE = 5,              /* the type needs a base (or time)
                                             counter the counterset lacks */
    PCW_CSTATUS_NEGATIVE_DENOMINATOR = 6, /* time or base went backwards
                                             (PDH_CALC_NEGATIVE_DENOMINATOR) */
    PCW_CSTATUS_ZERO_DENOMINATOR = 7,     /* zero interval or zero base: the
                                             ratio has no value */
    PCW_CSTATUS_BAD_TIMEBASE = 8,         /* zero frequency
                                             (PDH_CALC_NEGATIVE_TIMEBASE) */
    PCW_CSTATUS_RESET = 9,                /* a cumulative value went down: the counter was
                                             reset (PDH_CALC_NEGATIVE_VALUE) */
    PCW_CSTATUS_OVERFLOW = 10,            /* a total does not fit 64 bits, nor the
                                             time in the counterset's ticks, or
                                             the result is not a finite number */
    PCW_CSTATUS_NOT_AGGREGATED = 11,      /* a total of a counter whose aggregate
                                             attribute is undefined */
    PCW_CSTATUS_ABOVE_RANGE = 12,         /* a histogram quantile or max in its
                                             last bucket, which also holds every
                                             value above the range: the one status
                                             with a number, 2^max_exp, a lower
                                             bound of the true value */
    PCW_CSTATUS_INCONSISTENT = 13,        /* the data disagree with themselves: a
                                             histogram's sum outside what its
                                             buckets allow (a hostile or torn
                                             segment) */
} pcw_cstatus;
/* The highest pcw_cstatus (for tables indexed by status). */
#define PCW_CSTATUS_LAST PCW_CSTATUS_INCONSISTENT

/* A short English phrase for a pcw_cstatus; never NULL. */
const char *pcw_cstatus_str(int cstatus);

/* PDH's CStatus codes (pdhmsg.h), for pcw_cstatus_pdh. */
#define PCW_PDH_CSTATUS_VALID_DATA        0x00000000u
#define PCW_PDH_CSTATUS_NEW_DATA          0x00000001u
#define PCW_PDH_CSTATUS_NO_MACHINE        0x800007D0u
#define PCW_PDH_CSTATUS_NO_INSTANCE       0x800007D1u
#define PCW_PDH_NO_DATA                   0x800007D5u
#define PCW_PDH_CALC_NEGATIVE_DENOMINATOR 0x800007D6u
#define PCW_PDH_CALC_NEGATIVE_TIMEBASE    0x800007D7u
#define PCW_PDH_CALC_NEGATIVE_VALUE       0x800007D8u
#define PCW_PDH_CSTATUS_NO_COUNTER        0xC0000BB9u
#define PCW_PDH_CSTATUS_INVALID_DATA      0xC0000BBAu

/* The PDH CStatus a program written for PDH should see for a pcw_cstatus
 * (docs/query.md, "Statuses"). PDH tells a valid value whose raw data
 * changed since the last sample (PDH_CSTATUS_NEW_DATA) from one that did
 * not (PDH_CSTATUS_VALID_DATA); pcw reports both as PCW_CSTATUS_VALID, so
 * `changed` says which (the raw value differs from the previous sample's:
 * the caller keeps that). pcw's statuses PDH does not have map to the PDH
 * status that means "no usable number": NO_BASE to PDH_CSTATUS_NO_COUNTER,
 * ZERO_DENOMINATOR (PDH would show 0), OVERFLOW, NOT_AGGREGATED,
 * ABOVE_RANGE and INCONSISTENT to PDH_CSTATUS_INVALID_DATA, as do unknown
 * statuses. */
static inline uint32_t pcw_cstatus_pdh(int cstatus, int changed)
{
    switch (cstatus) {
    case PCW_CSTATUS_VALID:
        return changed ? PCW_PDH_CSTATUS_NEW_DATA : PCW_PDH_CSTATUS_VALID_DATA;
    case PCW_CSTATUS_NO_DATA:
        return PCW_PDH_NO_DATA;
    case PCW_CSTATUS_NO_INSTANCE:
        return PCW_PDH_CSTATUS_NO_INSTANCE;
    case PCW_CSTATUS_PROVIDER_GONE:
        return PCW_PDH_CSTATUS_NO_MACHINE;
    case PCW_CSTATUS_NO_BASE:
        return PCW_PDH_CSTATUS_NO_COUNTER;
    case PCW_CSTATUS_NEGATIVE_DENOMINATOR:
        return PCW_PDH_CALC_NEGATIVE_DENOMINATOR;
    case PCW_CSTATUS_BAD_TIMEBASE:
        return PCW_PDH_CALC_NEGATIVE_TIMEBASE;
    case PCW_CSTATUS_RESET:
        return PCW_PDH_CALC_NEGATIVE_VALUE;
    default: /* NEW_DATA_NEEDED (PDH's first sample), ZERO_DENOMINATOR,
                OVERFLOW, NOT_AGGREGATED, ABOVE_RANGE, INCONSISTENT,
                unknown */
        return PCW_PDH_CSTATUS_INVALID_DATA;
    }
}

/* ---- cooking one value -------------------------------------------------- */

/* One raw sample of one counter of one instance (PDH_RAW_COUNTER). Which
 * numbers go where depends on the type (docs/query.md, "Raw samples"):
 * `first` is the counter's value; `second` its denominator - the time in
 * the type's time base, or the base counter's value; `multi` the multi
 * count of the *_MULTI_TIMER types; `freq` the ticks per second of the
 * time (the "TB" of Microsoft's formulas). */
typedef struct pcw_raw {
    int status;       /* PCW_CSTATUS_VALID, or why this sample has none */
    uint64_t first;   /* X, PDH FirstValue */
    uint64_t second;  /* Y or B, PDH SecondValue */
    uint64_t multi;   /* B of the multi timers, PDH MultiCount */
    uint64_t freq;    /* TB: ticks per second of `second` when it is a time */
    uint64_t time_ns; /* CLOCK_MONOTONIC when it was read */
} pcw_raw;

/* Formatting flags (PDH_FMT_*). */
enum {
    PCW_FMT_NOSCALE = 1u << 0,  /* do not apply the counter's scale */
    PCW_FMT_NOCAP100 = 1u << 1, /* percentages may exceed 100 */
    PCW_FMT_1000 = 1u << 2,     /* multiply the result by 1000 */
    PCW_FMT_RAW = 1u << 3,      /* no formula: the raw value X (pcw_raw.first,
                                   the counter's own value as stored) as a
                                   number, unscaled; the status is the
                                   sample's (NO_DATA for a type without a
                                   value). For viewers that toggle between
                                   raw and cooked values (pcwtop). */
};

/* Does this type need two samples (a rate, a delta, an interval ratio)? */
int pcw_cook_needs_two(uint32_t type);

/* The displayable value of a counter of `type` from its newer raw sample
 * `now` and the older `prev` (NULL for the first sample), as
 * PdhCalculateCounterFromRawValue: the type's formula, x100 for a
 * percentage (capped at 100 unless PCW_FMT_NOCAP100), times 10^scale
 * (unless PCW_FMT_NOSCALE), times 1000 with PCW_FMT_1000; with PCW_FMT_RAW
 * only now->first, as it is. Returns the pcw_cstatus; *value is the number
 * when that is PCW_CSTATUS_VALID, else 0. `value` may be NULL (the status
 * only); a NULL `now` is PCW_CSTATUS_NO_INSTANCE. Pure: any thread. */
int pcw_cook(uint32_t type, const pcw_raw *now, const pcw_raw *prev, int32_t scale, unsigned flags,
             double *value);

/* The counter type's winperf.h name ("PERF_COUNTER_COUNTER"), or NULL. */
const char *pcw_counter_type_name(uint32_t type);

/* ---- counter paths ------------------------------------------------------ */

/* Which part of a path an error is about. */
typedef enum pcw_path_part {
    PCW_PATH_SYNTAX = 0,     /* the path as a whole */
    PCW_PATH_HOST = 1,       /* \\host */
    PCW_PATH_COUNTERSET = 2, /* \Counterset */
    PCW_PATH_INSTANCE = 3,   /* (Instance) */
    PCW_PATH_INDEX = 4,      /* #n */
    PCW_PATH_COUNTER = 5,    /* \Counter */
} pcw_path_part;

/* What is wrong with a path: the part, where it starts, and a sentence
 * that names it ("counterset \"Web Srver\" does not exist"). */
typedef struct pcw_path_error {
    int status;    /* PCW_E_INVALID_NAME (malformed), PCW_E_NOT_FOUND (no such
                      counterset, counter or instance), PCW_E_NAME_TOO_LONG,
                      PCW_E_NO_MEMORY, PCW_E_INVALID_PARAMETER */
    int part;      /* pcw_path_part */
    size_t offset; /* byte offset of the part in the path */
    char message[320];
} pcw_path_error;

/* Longest path pcw_path_parse accepts, in bytes. */
#define PCW_PATH_MAX 16384u

/* A parsed path. The strings point into private storage that
 * pcw_path_free releases. Wildcards ('*', '?') may appear in the
 * counterset, the instance and the counter. `instance` is the whole
 * instance part without #n, parent included ("explorer/0"): the pcw
 * instance name it names; pcw_path_parent_instance and
 * pcw_path_object_instance split it. */
typedef struct pcw_path {
    const char *host;       /* NULL: no \\host prefix */
    const char *counterset; /* never NULL */
    const char *instance;   /* NULL: no (instance) part; the name without #n */
    uint32_t index;         /* #n, 0 when absent */
    int has_index;          /* an explicit #n was written */
    const char *counter;    /* never NULL */
    unsigned wild;          /* PCW_PATH_WILD_* */
    char *storage_;         /* private */
    const char *container;  /* the host part when it names a container (12 to
                               64 hex digits of its id, or "ns:<inode>");
                               NULL otherwise */
} pcw_path;
enum {
    PCW_PATH_WILD_COUNTERSET = 1u << 0,
    PCW_PATH_WILD_INSTANCE = 1u << 1,
    PCW_PATH_WILD_COUNTER = 1u << 2,
    PCW_PATH_WILD_HOST = 1u << 3, /* \\*: every provider, containers' too */
};

/* Parse `text` (PdhParseCounterPath):
 * [\\host]\Counterset[([Parent/]Instance[#n])]\Counter.
 * The counter is what follows the last '\'; the instance runs from the first
 * '(' to the ')' that ends the counterset part, so instance names may hold
 * parentheses and backslashes; a trailing "#digits" is the index (write
 * "name#3#0" for an instance literally named "name#3"). The host, when
 * given, names this machine ("localhost", ".", or its host name,
 * case-insensitively: every provider the query finds, as without it),
 * "*" (the same, every provider, containers' too), or a container: 12 to
 * 64 hex digits of its id (a unique prefix, as docker accepts) or
 * "ns:<inode>" (p->container is then set; pcw_pdh_add_counter resolves
 * it, docs/containers.md). Returns PCW_OK or the error's status, and fills
 * *err (may be NULL). On error *out holds nothing to free. */
int pcw_path_parse(const char *text, pcw_path *out, pcw_path_error *err);
void pcw_path_free(pcw_path *p);

/* PDH's szParentInstance and szInstanceName (PDH_COUNTER_PATH_ELEMENTS) of
 * a path pcw_path_parse filled: its instance part split at the first '/'
 * ("(explorer/0#1)": parent "explorer", object instance "0", index 1;
 * "(a/b/c)": "a" and "b/c"). The parent is NULL when the instance part has
 * no '/', both are NULL without an instance part. A pcw instance name maps
 * the same way (docs/query.md, "Parent instances"): the pattern
 * "(parent/instance)" matches each side against its side of the name, so
 * a wildcard never matches across the '/'. The strings live in p's
 * storage. */
const char *pcw_path_parent_instance(const pcw_path *p);
const char *pcw_path_object_instance(const pcw_path *p);

/* Build a path (PdhMakeCounterPath) into buf (len bytes, NUL-terminated):
 * "\\host" when host is non-NULL, "\counterset", "(instance)" when instance
 * is non-NULL - with "#index" when index > 0 -, "\counter". Returns the
 * length the path needs (without the NUL), like snprintf; the output is
 * truncated when that is >= len (buf may be NULL when len is 0, or to
 * measure only). A NULL counterset or counter makes no path: 0, and ""
 * in buf. An instance with a parent is passed whole, "parent/instance"
 * (pcw_path_parent_instance says how it parses back). */
size_t pcw_path_build(char *buf, size_t len, const char *host, const char *counterset,
                      const char *instance, uint32_t index, const char *counter);

/* This machine's name as paths carry it (gethostname; "localhost" if that
 * fails). */
const char *pcw_path_local_host(void);

/* ---- the query ---------------------------------------------------------- */

typedef struct pcw_pdh pcw_pdh;                 /* PDH_HQUERY */
typedef struct pcw_pdh_counter pcw_pdh_counter; /* PDH_HCOUNTER */

/* Open a query over the providers the consumer options name (NULL: the
 * defaults of pcw_consumer_open: $PCW_DIR or /dev/shm, this user, 1 s time
 * limit for providers' answers). */
int pcw_pdh_open(pcw_pdh **out, const pcw_consumer_options *opt);
/* Close it: counters still added are removed (REMOVE_COUNTER is sent). */
void pcw_pdh_close(pcw_pdh *q);

/* The query's consumer (to look at countersets and providers directly).
 * Do not refresh or close it. */
pcw_consumer *pcw_pdh_consumer(pcw_pdh *q);

/* Add a counter path, wildcards allowed. The path is validated against the
 * countersets published now: an unknown counterset or counter, an instance
 * part where the counterset has none (or none where it has instances), a
 * base counter named directly - each is refused with PCW_E_NOT_FOUND or
 * PCW_E_INVALID_NAME and *err names the part. Instances need not exist yet:
 * wildcards and names are matched again on every collection. Every provider
 * of the counterset that has a control channel is sent ADD_COUNTER for each
 * counter the path selects (with the instance part as the instance mask),
 * and so is every provider that appears later. *out receives the handle
 * (may be NULL when the caller only wants the values through
 * pcw_pdh_counter_at). */
int pcw_pdh_add_counter(pcw_pdh *q, const char *path, pcw_pdh_counter **out, pcw_path_error *err);
/* Remove a counter (REMOVE_COUNTER to the providers told of it). */
int pcw_pdh_remove_counter(pcw_pdh *q, pcw_pdh_counter *ctr);

size_t pcw_pdh_counter_count(const pcw_pdh *q);
pcw_pdh_counter *pcw_pdh_counter_at(const pcw_pdh *q, size_t i);
/* The path as added. */
const char *pcw_pdh_counter_path(const pcw_pdh_counter *ctr);

/* Collect one sample of everything the query references: re-reads the
 * provider list when it changed, reads segment countersets lock-free,
 * collects callback countersets from their providers (at most the time
 * limit in total), re-expands wildcards, and computes totals. Returns
 * PCW_OK (providers that failed show as statuses in their values),
 * PCW_E_NO_MEMORY, or PCW_E_INVALID_PARAMETER. In steady state - the same
 * providers and instances as last time - a collection allocates nothing.
 * *failed (may be NULL) counts the providers whose part is missing. */
int pcw_pdh_collect(pcw_pdh *q, size_t *failed);

/* The time limit of one pcw_pdh_collect, pcw_pdh_refresh, pcw_pdh_expand,
 * pcw_pdh_add_counter or pcw_pdh_remove_counter, in milliseconds (0: the
 * default, 1000; pcw_consumer_options.timeout_ms sets it at open): what
 * such a call waits for providers' answers (callback countersets,
 * ADD/REMOVE_COUNTER), in total. Callback countersets are collected
 * together (pcw_consumer_collect_many) with what is left of the limit;
 * providers that do not answer in time, or are not asked because it is
 * spent, fail with PCW_E_TIMEOUT (pcw_pdh_get_source says which). ADD/REMOVE_COUNTER
 * requests are always sent; past the limit the call waits at most 1 ms
 * for each answer. In pcw_pdh_collect those answers may take half the
 * limit at most, so a provider that never answers costs its own part,
 * not the collection of the others. Use this rather than
 * pcw_consumer_set_timeout on pcw_pdh_consumer(). */
int pcw_pdh_set_timeout(pcw_pdh *q, uint32_t ms);

/* The detail level of the counters a wildcard counter part selects
 * (PERF_DETAIL_*, as PdhBrowseCounters' and PdhEnumObjectItems'
 * dwDetailLevel): a counter whose detail level (the manifest's
 * detailLevel) is above `level` is left out of "\Set(*)\*", of other
 * counter patterns and of pcw_pdh_expand, as perfmon hides advanced
 * counters unless asked. The default is PCW_DETAIL_STANDARD (novice);
 * PCW_DETAIL_ADVANCED or above includes the advanced counters. A counter
 * named without wildcards is always selected, whatever its level. Applies
 * to the paths added and expanded after the call. Returns PCW_OK, or
 * PCW_E_INVALID_PARAMETER for a level that is not a PCW_DETAIL_* value. */
int pcw_pdh_set_detail(pcw_pdh *q, uint32_t level);

/* Does a wildcard counter part at detail level `level` select a counter of
 * this type and detail level (0 meaning standard)? Not a base counter or
 * PERF_COUNTER_NODATA (used by others, no value of their own), and not a
 * counter above the level. The rule pcw_pdh_add_counter and
 * pcw_pdh_expand apply, for tools that list counters themselves. */
static inline int pcw_counter_in_wildcard(uint32_t type, uint32_t detail_level, uint32_t level)
{
    if (pcw_counter_type_is_base(type) || type == PERF_COUNTER_NODATA)
        return 0;
    return (detail_level ? detail_level : (uint32_t)PCW_DETAIL_STANDARD) <= level;
}

/* Catch up with the providers now, as pcw_pdh_collect does first: re-read
 * the provider list if a provider or counterset came or went (then
 * pcw_consumer_counterset_count(pcw_pdh_consumer(q)) lists what is
 * published), match wildcard counterset paths to new countersets and tell
 * new providers of the counters added. Returns 1 when the list changed, 0
 * when not, or an error (PCW_E_NO_MEMORY...). Pointers into the
 * consumer's countersets from before a return of 1 are invalid. */
int pcw_pdh_refresh(pcw_pdh *q);

/* CLOCK_MONOTONIC and CLOCK_REALTIME (ns) of the last collection; 0 before
 * the first. */
uint64_t pcw_pdh_time_ns(const pcw_pdh *q);
uint64_t pcw_pdh_realtime_ns(const pcw_pdh *q);
/* How many collections have been made. */
uint64_t pcw_pdh_collections(const pcw_pdh *q);

/* ---- reading values ----------------------------------------------------- */

/* What an instance of a value is. */
typedef enum pcw_pdh_kind {
    PCW_PDH_INSTANCE = 0,  /* one provider's instance */
    PCW_PDH_TOTAL = 1,     /* _Total of a multipleAggregate(History) set */
    PCW_PDH_AGGREGATE = 2, /* instances combined: the one instance of a
                              globalAggregate(History) set, or one name of an
                              instanceAggregate(History) set */
} pcw_pdh_kind;

/* One value: a counter of an instance in the last collection. */
typedef struct pcw_pdh_value {
    int status;   /* pcw_cstatus */
    double value; /* cooked; 0 unless status is PCW_CSTATUS_VALID */
    pcw_raw raw;  /* the newer raw sample it was cooked from */
    const char *counterset;
    const char *counter;
    uint32_t counter_index; /* in the counterset's counters */
    uint32_t counter_type;
    const char *instance;      /* display name, with #n: "job#1"; "" for a
                                  set without instances; "_Total" */
    const char *instance_name; /* as published, without #n */
    uint32_t dup_index;        /* the n of #n (0: none) */
    uint32_t instance_id;      /* the provider's id; PCW_ANY_INSTANCE_ID for
                                  totals and aggregates */
    int32_t pid;               /* its provider's pid; 0 for totals and
                                  aggregates */
    uint64_t provider_id;      /* its provider's identity; 0 likewise */
    uint32_t kind;             /* pcw_pdh_kind */
    uint32_t sources;          /* live instances combined into it (1 for
                                  PCW_PDH_INSTANCE) */
} pcw_pdh_value;

/* The values a counter handle selects in the last collection: one per
 * (instance, counter) pair its path matches, instance-major (every
 * selected counter of the first instance, then of the second...), in a
 * stable order: the aggregate instances first, then provider by provider
 * in discovery order, each provider's instances in id order. A path
 * naming one instance that is absent gives one value with status
 * PCW_CSTATUS_NO_INSTANCE (or PCW_CSTATUS_PROVIDER_GONE). */
size_t pcw_pdh_value_count(const pcw_pdh_counter *ctr);
/* Value i, cooked with `flags` (PCW_FMT_*). Returns PCW_OK or
 * PCW_E_INVALID_PARAMETER (i out of range). */
int pcw_pdh_get_value(const pcw_pdh_counter *ctr, size_t i, unsigned flags, pcw_pdh_value *out);
/* A number that changes whenever the handle's list of instances may have
 * changed since the last collection: an instance appeared or went (or its
 * provider did not answer), a total appeared, the counterset was registered
 * again, a counterset new to a wildcard path was matched. While it stays the
 * same, value i * counters + k names the same instance as before - so a
 * viewer keeps what it knows per instance (names, marks, history) by index
 * and looks at names again only when it changes. It may also change when
 * nothing did (a provider list re-read); it never repeats. 0 for NULL. */
uint64_t pcw_pdh_instance_epoch(const pcw_pdh_counter *ctr);

/* The full path of value i ("\Set(job#1)\Counter", with "\\host" when
 * with_host; always with "\\<container>" when the handle's path named a
 * container), into buf like pcw_path_build. */
size_t pcw_pdh_value_path(const pcw_pdh_counter *ctr, size_t i, int with_host, char *buf,
                          size_t len);

/* The fast way to read many values: how many instances and counters the
 * handle selects now (pcw_pdh_value_count = instances x counters), and one
 * counter's cooked values for all those instances at once into caller
 * arrays of pcw_pdh_instance_count() entries (status may be NULL). Value
 * (i, k) is the same as pcw_pdh_get_value(ctr, i * counters + k). */
size_t pcw_pdh_instance_count(const pcw_pdh_counter *ctr);
size_t pcw_pdh_selected_counter_count(const pcw_pdh_counter *ctr);
int pcw_pdh_cook_column(const pcw_pdh_counter *ctr, size_t k, unsigned flags, double *values,
                        uint8_t *status);

/* Every value of the handle at once, cooked with `flags`, in the order of
 * pcw_pdh_get_value: values[i] (and status[i], may be NULL) for i below
 * pcw_pdh_value_count(). Reads each instance's row once: the fastest way
 * to read a whole handle. */
int pcw_pdh_cook_all(const pcw_pdh_counter *ctr, unsigned flags, double *values, uint8_t *status);

/* One instance's values, as pcw_pdh_visit hands them over: values[c] is
 * value first + c of the handle (pcw_pdh_get_value(ctr, first + c) says
 * whose), status[c] its pcw_cstatus. Valid during the callback only. */
typedef struct pcw_pdh_row {
    size_t first;
    uint32_t count;
    const double *values;
    const uint8_t *status;
} pcw_pdh_row;

/* Cook every value of the handle, instance by instance, and hand each
 * instance's values to fn (in the order of pcw_pdh_get_value) without
 * storing them all: the cheapest way to consume a whole handle (an
 * exporter writing them out). A non-zero return from fn stops the walk.
 * Returns PCW_OK, PCW_E_INVALID_PARAMETER or PCW_E_NO_MEMORY. */
int pcw_pdh_visit(const pcw_pdh_counter *ctr, unsigned flags,
                  int (*fn)(const pcw_pdh_row *row, void *arg), void *arg);

/* Several instances' values, as pcw_pdh_visit_rows hands them over:
 * `rows` instances of `count` values each, instance by instance, so value
 * first + r * count + c is values[r * count + c] (pcw_pdh_get_value(ctr,
 * first + r * count + c) says whose), status[...] its pcw_cstatus. Valid
 * during the callback only. */
typedef struct pcw_pdh_rows {
    size_t first;
    size_t rows;
    uint32_t count;
    const double *values;
    const uint8_t *status;
} pcw_pdh_rows;

/* pcw_pdh_visit in blocks: the same values, in the same order, handed
 * over a block of instances at a time (up to 2,048 values, or one
 * instance's if it has more; the instances of a block all have the same
 * number of values). A call per block instead of per instance, and the
 * conversion of back-to-back rows as one array: the fastest way to
 * consume a whole handle when the consumer loops over instances itself.
 * A non-zero return from fn stops the walk. Returns PCW_OK,
 * PCW_E_INVALID_PARAMETER or PCW_E_NO_MEMORY. Calls fn from the calling
 * thread only; fn must not collect, refresh or change the query. */
int pcw_pdh_visit_rows(const pcw_pdh_counter *ctr, unsigned flags,
                       int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg);

/* pcw_pdh_collect(q, failed) and then pcw_pdh_visit_rows(ctr, flags, fn,
 * arg), in one pass over the rows where it can: in steady state (the same
 * instances as the last collection, no _Total, the selected counters
 * plain 8-byte values side by side in a segment counterset) each block is
 * cooked and handed over while the collection reads it, still in the
 * cache, instead of read again from memory afterwards - for a large
 * handle, the cheapest way to collect and consume it.
 *
 * fn sees what pcw_pdh_visit_rows would show after pcw_pdh_collect, with
 * one exception: when blocks were handed over during the read and the
 * instances then turned out to have changed (or the collection failed),
 * fn gets an empty block (rows == 0, first == 0), meaning "forget the
 * blocks so far", and then every value again from the collection as it
 * ended (none if it failed). A non-zero return from fn stops the visit,
 * not the collection (after a restart block the visit starts over, even if
 * fn had asked to stop). Returns what pcw_pdh_collect returns, or
 * PCW_E_INVALID_PARAMETER (ctr not q's, or no fn) or PCW_E_NO_MEMORY.
 *
 * Concurrency: as pcw_pdh_collect (one thread per query); fn runs on the
 * calling thread, possibly in the middle of the collection, so it must
 * not call into q (collect, refresh, add, remove, get a value) and must
 * return (no longjmp out of it). It may take its time: the provider is
 * never waited for or slowed down, but values read later in a long visit
 * are that much later. */
int pcw_pdh_collect_rows(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, unsigned flags,
                         int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg);

/* pcw_pdh_collect(q, failed) and then pcw_pdh_cook_column(ctr, k, flags,
 * values, status), in one pass over the rows where it can: in the steady
 * state pcw_pdh_collect_rows fuses (and for the same reasons never
 * attributes a value to the wrong instance), counter k of each row is
 * converted in the loop that reads it, instead of every row being read
 * again from memory afterwards - what a viewer sorting a large handle by
 * one column needs each refresh. values and status (may be NULL) have room
 * for `cap` instances. *count is the handle's instance count after the
 * collection (0 if it failed); when it exceeds cap, values and status
 * hold nothing usable: grow them and call pcw_pdh_cook_column. Works on a
 * log query too (collect, then cook). Returns what pcw_pdh_collect
 * returns, else what pcw_pdh_cook_column returns (PCW_E_INVALID_PARAMETER
 * for k out of range), or PCW_E_INVALID_PARAMETER (ctr not q's, no values
 * or count). Concurrency: as pcw_pdh_collect. Since 0.5.0 (PCW_2.2). */
int pcw_pdh_collect_column(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, size_t k,
                           unsigned flags, double *values, uint8_t *status, size_t cap,
                           size_t *count);

/* One instance of a ranked column (pcw_pdh_collect_top). */
typedef struct pcw_pdh_ranked {
    double value;    /* its value of the column, as pcw_pdh_cook_column gives it */
    size_t instance; /* its index among the handle's instances (its value
                        of counter k is value index instance * counters + k) */
} pcw_pdh_ranked;

/* What pcw_pdh_collect_top is asked, and what it found. */
typedef struct pcw_pdh_top {
    size_t counter;         /* in: the selected counter (column) k */
    unsigned flags;         /* in: PCW_FMT_* */
    int descending;         /* in: largest first (else smallest first) */
    double bound;           /* in: NaN, or a value that at least `cap`
                               instances reach (>= it descending, <= it
                               ascending): a hint, e.g. the cap-th value of
                               the last collection */
    pcw_pdh_ranked *ranked; /* in: room for cap entries */
    size_t cap;             /* in: how many are wanted (at most
                               PCW_PDH_TOP_MAX) */
    size_t count;           /* out: entries written (at most cap) */
    int fused;              /* out: 1 if they were picked as the read read
                               the rows (the bound held, or there was none) */
} pcw_pdh_top;

/* The most a pcw_pdh_top may ask for (its memory: 32 bytes an entry). */
#define PCW_PDH_TOP_MAX (1u << 20)

/* pcw_pdh_collect(q, failed) and then the first t->cap instances of
 * counter t->counter's column in order - largest value first when
 * t->descending, else smallest first; equal values by instance index,
 * ascending; instances whose value's status is not PCW_CSTATUS_VALID (or
 * whose value is NaN) are not ranked - into t->ranked: t->count =
 * min(cap, instances ranked). What a viewer showing the first screenful
 * of a large handle sorted by one column needs, without the column.
 *
 * In the steady state pcw_pdh_collect_rows fuses (plain 8-byte values, no
 * _Total, the same instances as the last collection; the same attribution
 * checks), each run of rows is ranked in the loop that reads it: only the
 * values that reach the bound (or, without one, the best so far) are
 * kept, in a buffer of at most 2 x max(cap, 4,096) entries the query
 * keeps (t->fused = 1). Anywhere else - a _Total, rates, a changed
 * instance list, a log, a bound fewer than cap instances reach - the
 * column is ranked in one pass after the read, without the bound: a wrong
 * bound costs time, never a wrong answer. O(instances) time whatever the
 * values' order.
 *
 * Returns what pcw_pdh_collect returns (nothing ranked when it fails),
 * PCW_E_INVALID_PARAMETER (ctr not q's, no t, t->ranked NULL with cap > 0,
 * cap > PCW_PDH_TOP_MAX, t->counter out of range: the collection was made
 * then) or PCW_E_NO_MEMORY (nothing collected). Never writes past
 * t->ranked[cap - 1]. Concurrency: as pcw_pdh_collect. Since 0.5.0 (PCW_2.2). */
int pcw_pdh_collect_top(pcw_pdh *q, size_t *failed, pcw_pdh_counter *ctr, pcw_pdh_top *t);

/* ---- the providers' own instances, raw (exporters) ----------------------- *
 *
 * An exporter hands raw values on (a monitoring system computes rates and
 * sums itself) and labels each series with the instance's name, its
 * provider and pid, never #n. These functions see, for a handle that
 * matches exactly one counterset (0 or PCW_E_INVALID_PARAMETER otherwise),
 * every provider's own instance read by the last collection - whatever
 * the path's instance part: no _Total, no aggregate, each instance a
 * globalAggregate or instanceAggregate set combines shown as itself - in
 * value order (provider by provider). Instances whose provider did not
 * answer this time are left out (pcw_pdh_get_source says why). Strings
 * stay valid until the next collect, refresh or remove. */

/* One provider's instance. */
typedef struct pcw_pdh_raw_instance {
    const char *name;     /* as published, without #n; "" in a set without
                             instances. Not checked: a hostile segment may
                             give bytes that are not UTF-8 */
    uint32_t name_len;    /* bytes */
    uint32_t dup_index;   /* its #n in this query (0: none) */
    uint32_t instance_id; /* the provider's id */
    int32_t pid;          /* its provider's pid */
    uint64_t provider_id; /* its provider's identity */
    const char *provider; /* its provider's name (the segment's header;
                             not checked either) */
} pcw_pdh_raw_instance;

/* How many instances; and a number that changes whenever the instances,
 * or their order, change - and sometimes when they did not (a re-read
 * provider list) - so that a caller may cache per-instance work, such as
 * labels, by position while it stays the same. */
size_t pcw_pdh_raw_count(const pcw_pdh_counter *ctr);
uint64_t pcw_pdh_raw_epoch(const pcw_pdh_counter *ctr);
/* Instance i (below pcw_pdh_raw_count). */
int pcw_pdh_raw_instance_at(const pcw_pdh_counter *ctr, size_t i, pcw_pdh_raw_instance *out);
/* The newer raw sample of counter `counter_index` (its index in the
 * counterset, pcw_counterset.counters: any counter, selected by the path
 * or not, bases included) of every instance: out[pcw_pdh_raw_count()], as
 * pcw_pdh_value.raw (PdhGetRawCounterArray). */
int pcw_pdh_raw_column(const pcw_pdh_counter *ctr, uint32_t counter_index, pcw_raw *out);

/* The raw words of histogram counter `counter_index` (PERF_PCW_HISTOGRAM,
 * shape pcw_counter.histogram) of instance i (below pcw_pdh_raw_count) in
 * the last collection, as the provider wrote them (pcw/histogram.h: the
 * sum, the zero bucket, the buckets; cumulative since the instance began),
 * copied into words[nwords]; nwords is the shape's 2 + nbuckets. An
 * exporter hands them on (Prometheus computes rates); the words come from
 * a segment and are not checked. Returns PCW_OK; PCW_E_INVALID_PARAMETER
 * when the handle does not match one counterset, the counter is not a
 * histogram, i is out of range or nwords words do not fit in the row
 * after the counter's offset; or
 * PCW_E_NOT_FOUND when the instance has no row (only after a collection
 * that failed half-way). O(nwords). */
int pcw_pdh_raw_histogram(const pcw_pdh_counter *ctr, uint32_t counter_index, size_t i,
                          uint64_t *words, size_t nwords);

/* One provider of a counterset a handle matches, in the last collection. */
typedef struct pcw_pdh_source {
    int32_t pid;
    uint64_t provider_id;
    const char *provider; /* its name (segment header; not checked) */
    int status;           /* PCW_OK; PCW_E_TIMEOUT: it did not answer in
                             time, or the time limit was spent before it was
                             asked; PCW_E_PROVIDER_EXITED; or the error its
                             read or collection failed with */
    size_t instances;     /* instances read from it */
} pcw_pdh_source;
/* Every provider of every counterset the handle matches. */
size_t pcw_pdh_source_count(const pcw_pdh_counter *ctr);
int pcw_pdh_get_source(const pcw_pdh_counter *ctr, size_t i, pcw_pdh_source *out);

/* Use another power-of-ten scale than the counter's default_scale for this
 * handle's values (PdhSetCounterScaleFactor). PDH's range, -7..7
 * (PDH_MIN_SCALE..PDH_MAX_SCALE); anything else is PCW_E_INVALID_PARAMETER
 * and leaves the scale as it was. */
int pcw_pdh_set_scale(pcw_pdh_counter *ctr, int32_t scale);

/* ---- histograms (PERF_PCW_HISTOGRAM, pcw/histogram.h) -------------------
 *
 * A histogram counter is read through statistics of the interval's
 * distribution (the per-bucket difference of the two last samples, as a
 * rate is the difference of two counts), each a value of its own with its
 * status: "\Set(inst)\Latency:p99". The bare name "\Set(inst)\Latency"
 * (and a wildcard counter part) selects the default statistics, in this
 * order: rate mean p50 p90 p99 p99.9 max. pcw_pdh_value.counter is then
 * "Latency:p99". docs/query.md, "Histograms", has the rules; in short:
 *
 *   rate     observations per second over the interval (0 when none)
 *   count    observations in the interval
 *   mean     interval sum / count, in the exported unit (seconds for
 *            PCW_HIST_UNIT_NS)
 *   pNN[.N]  quantile NN % (0 < NN <= 100): the bucket that holds the
 *            rank, log-linear interpolation inside it (linear in the zero
 *            bucket); relative error below 2^(2^-schema) - 1
 *   max      upper bound of the highest non-empty bucket
 *   sum      interval sum, exported unit
 *
 * Statuses: NEW_DATA_NEEDED on the first sample; NO_DATA for mean,
 * quantiles and max of an interval without observations; RESET when any
 * bucket went down; ABOVE_RANGE for a quantile or max in the last bucket
 * (value 2^max_exp); INCONSISTENT for a mean outside the non-empty
 * buckets' bounds; OVERFLOW when a count does not fit 64 bits. A _Total
 * (or aggregate) of a counter whose aggregate is PCW_AGGREGATE_TOTAL
 * merges the members' interval buckets; otherwise NOT_AGGREGATED. Work is
 * O(buckets) per value. */

/* A statistic of a histogram: the part of a path after ':'. */
typedef enum pcw_hist_stat_kind {
    PCW_HSTAT_RATE = 1,
    PCW_HSTAT_COUNT = 2,
    PCW_HSTAT_MEAN = 3,
    PCW_HSTAT_QUANTILE = 4, /* q in (0, 1] */
    PCW_HSTAT_MAX = 5,
    PCW_HSTAT_SUM = 6,
} pcw_hist_stat_kind;

typedef struct pcw_hist_stat {
    int kind; /* pcw_hist_stat_kind */
    double q; /* PCW_HSTAT_QUANTILE: 0.99 for "p99"; else 0 */
} pcw_hist_stat;

/* Parse a statistic's name ("rate", "count", "mean", "max", "sum", "p99",
 * "p99.9", "p100"; exactly these spellings, lower case). Returns PCW_OK,
 * PCW_E_INVALID_NAME (not a statistic, or a quantile outside (0, 100]) or
 * PCW_E_INVALID_PARAMETER. */
int pcw_hist_stat_parse(const char *text, pcw_hist_stat *out);
/* The default statistics (what a bare histogram name selects), in column
 * order: rate mean p50 p90 p99 p99.9 max; *n (may be NULL) their number. */
const pcw_hist_stat *pcw_hist_default_stats(size_t *n);
/* The name of a statistic into buf (len bytes, like snprintf): "p99.9". */
size_t pcw_hist_stat_name(const pcw_hist_stat *st, char *buf, size_t len);

/* One interval's distribution of one histogram of one instance (or a
 * total's merged one). Bucket j (0 <= j < nbuckets) is Prometheus' native
 * bucket of index pcw_hist_min_index(shape) + 1 + j, in the exported unit
 * (pcw_hist_bucket_upper says its bounds); `zero` the zero bucket (values
 * <= 2^min_exp). */
typedef struct pcw_hist_dist {
    int status;              /* pcw_cstatus of the distribution as a whole:
                                VALID, NEW_DATA_NEEDED (first sample), RESET
                                (a bucket went down), NO_INSTANCE,
                                PROVIDER_GONE, NOT_AGGREGATED, OVERFLOW (a
                                merged bucket or the count does not fit 64
                                bits), NO_DATA (not a histogram). The fields
                                below are 0 / NULL unless VALID */
    uint32_t shape;          /* pcw/histogram.h shape word */
    uint32_t nbuckets;       /* pcw_hist_nbuckets(shape) */
    uint64_t zero;           /* observations in the zero bucket */
    const uint64_t *buckets; /* [nbuckets] observations per bucket */
    uint64_t count;          /* zero + every bucket */
    uint64_t sum;            /* sum of the observed values, in the observed
                                unit (nanoseconds for PCW_HIST_UNIT_NS), mod
                                2^64 as the provider keeps it */
    uint64_t interval_ns;    /* the interval's length (0 with
                                PCW_HIST_CUMULATIVE) */
} pcw_hist_dist;

/* pcw_pdh_get_histogram's flags. */
enum {
    PCW_HIST_CUMULATIVE = 1u << 0, /* the newer sample as it stands (every
                                      observation since the instance
                                      started) instead of the interval */
};

/* The distribution behind value i of a handle (as pcw_pdh_get_value's i;
 * the value must be a statistic of a histogram counter - any statistic of
 * it gives the same distribution). out->buckets points into storage of
 * the handle, valid until the next pcw_pdh_get_histogram on it or the
 * next collect, refresh or remove. Returns PCW_OK (out->status says
 * whether there is a distribution), PCW_E_INVALID_PARAMETER (i out of
 * range, NULL out) or PCW_E_NO_MEMORY. O(buckets) (a total: O(members x
 * buckets)). */
int pcw_pdh_get_histogram(const pcw_pdh_counter *ctr, size_t i, unsigned flags, pcw_hist_dist *out);

/* A statistic of a distribution (d->status VALID; otherwise that status is
 * returned), as the query cooks it: returns the pcw_cstatus and *value
 * (0 unless VALID or ABOVE_RANGE). For PCW_HSTAT_RATE and a
 * cumulative distribution (interval_ns 0): ZERO_DENOMINATOR. Pure: any
 * thread; O(nbuckets). */
int pcw_hist_cook(const pcw_hist_dist *d, const pcw_hist_stat *st, double *value);

/* Bounds of bucket j of a shape in the exported unit: lower (exclusive)
 * and upper (inclusive); j == UINT32_MAX is the zero bucket (0 ..
 * 2^min_exp). The last bucket's upper bound is 2^max_exp although it also
 * holds the values above. */
void pcw_hist_bucket_bounds(uint32_t shape, uint32_t j, double *lower, double *upper);

/* Expand a wildcard path into the concrete paths that exist now, as the
 * query names them (PdhExpandWildCardPath): fn is called once per path
 * (without host), in value order; a non-zero return stops the walk.
 * Refreshes the provider list and reads the instances of the countersets
 * the path matches (no values are cooked). Returns PCW_OK (also when
 * nothing matched: check with fn), or the path's error with *err. */
int pcw_pdh_expand(pcw_pdh *q, const char *path, int (*fn)(const char *path, void *arg), void *arg,
                   pcw_path_error *err);

/* ---- a log as the data source (PdhBindInputDataSource) -------------------
 *
 * A query opened on pcw logs (`pcwstat -f BIN -o FILE`, docs/history.md)
 * instead of the live providers: the same pcw_pdh_add_counter (paths and
 * wildcards matched against the logged series' paths; "_Total" is the
 * logged total, an aggregate the logged aggregate), pcw_pdh_collect reads
 * the next logged sample instead of the providers, and the values,
 * statuses, pcw_pdh_time_ns and pcw_pdh_realtime_ns are the logged ones,
 * cooked exactly as the live query cooked them (a sample is cooked with the
 * previous one of the same instance identity, as live: a provider restart
 * or another instance behind the same path has no previous sample).
 * docs/history.md, "The query layer on a log", has the details.
 *
 * Everything that reads values works on a log query: pcw_pdh_value_count,
 * pcw_pdh_get_value, pcw_pdh_value_path, pcw_pdh_instance_epoch,
 * pcw_pdh_instance_count, pcw_pdh_selected_counter_count,
 * pcw_pdh_cook_column, pcw_pdh_cook_all, pcw_pdh_visit(_rows),
 * pcw_pdh_collect_rows, pcw_pdh_collect_column, pcw_pdh_get_histogram (a logged histogram's
 * interval; NO_DATA when the log holds no buckets for it), pcw_pdh_expand
 * (the logged paths a pattern matches), pcw_pdh_set_scale,
 * pcw_pdh_counter_count/at/path, pcw_pdh_remove_counter, pcw_pdh_collections.
 * What only a live query has: pcw_pdh_consumer is NULL; pcw_pdh_refresh
 * returns 0 (the log's series do not change under it); pcw_pdh_set_timeout
 * and pcw_pdh_set_detail are accepted and change nothing (the log holds
 * what was recorded); a log has no providers' raw instances, so
 * pcw_pdh_raw_count, pcw_pdh_raw_epoch and pcw_pdh_source_count are 0 and
 * pcw_pdh_raw_instance_at, pcw_pdh_raw_column, pcw_pdh_raw_histogram and
 * pcw_pdh_get_source return PCW_E_INVALID_PARAMETER (as for a handle that
 * matches nothing). Values of a log query carry no consumer
 * metadata: pcw_pdh_value.counter_index is the counter's position among the
 * log's counters of its counterset, and `sources` is 1 for an instance and
 * 0 for a logged total or aggregate (the log does not say how many).
 *
 * Several files are read one after the other, as one log, in the order
 * given (time order: the caller sorts). At a file boundary every series
 * starts again without a previous sample, as a recorder that was
 * restarted did.
 *
 * Damage: the first damaged or incomplete block ends the readable part of
 * the log; the samples before it are read as usual, and the collect that
 * reaches it returns PCW_E_CORRUPT, pcw_pdh_log_error naming the file and
 * the block's offset. Opening reads the whole log once (block headers,
 * then each block's records, to index the samples' times and the series:
 * linear in the log's size, memory one block and the index), so the
 * sample count and time range are known at once and a seek costs a binary
 * search and the decoding of one block.
 */

/* pcw_pdh_collect on a log query: every sample has been read (no values
 * change; the last sample's values stay readable). Positive: not an
 * error, but not PCW_OK either, so a loop `while (pcw_pdh_collect(q, 0)
 * == PCW_OK)` ends at the end of the log. */
#define PCW_PDH_END_OF_LOG 1

/* Open a query on the logs files[0..nfiles-1] (read as one log, in that
 * order). Returns PCW_OK; PCW_E_NOT_FOUND or PCW_E_PERMISSION (a file
 * cannot be opened), PCW_E_VERSION (a newer format), PCW_E_CORRUPT (not a
 * pcw log), PCW_E_NO_MEMORY, PCW_E_INVALID_PARAMETER; on error a sentence
 * naming the file and what is wrong goes into why (why_len bytes; may be
 * NULL). A log whose end is damaged opens (PCW_OK): its readable part is
 * what the query reads, pcw_pdh_log_error says where it ends. */
int pcw_pdh_open_log(pcw_pdh **out, const char *const *files, size_t nfiles, char *why,
                     size_t why_len);

/* 1 for a query opened by pcw_pdh_open_log, 0 otherwise (and for NULL). */
int pcw_pdh_is_log(const pcw_pdh *q);

/* What a log query's log holds. */
typedef struct pcw_pdh_log_info {
    uint64_t samples;       /* readable samples, in every file */
    uint64_t next;          /* the index of the sample the next
                               pcw_pdh_collect reads (samples: at the end) */
    uint64_t first_ns;      /* CLOCK_MONOTONIC of the first sample (0: none) */
    uint64_t last_ns;       /* and of the last one */
    uint64_t first_real_ns; /* CLOCK_REALTIME of the first sample */
    uint64_t last_real_ns;  /* and of the last one */
    uint64_t blocks;        /* readable blocks */
    size_t series;          /* logged series (pcw_pdh_log_series_count) */
    size_t files;
    int damaged; /* 1: a damaged or incomplete block ends the readable part
                    (pcw_pdh_log_error names it) */
} pcw_pdh_log_info;
/* Returns PCW_OK, or PCW_E_INVALID_PARAMETER (q not a log query, NULL out). */
int pcw_pdh_get_log_info(const pcw_pdh *q, pcw_pdh_log_info *out);

/* A sentence about the log's first damaged block ("waves.pcwlog: block at
 * offset 338: XXH3 check mismatch (damaged)"), or the last read error; ""
 * when there is none (and for a live query). Valid until the next call on
 * q. */
const char *pcw_pdh_log_error(const pcw_pdh *q);

/* Position the log so that the next pcw_pdh_collect reads sample `index`
 * (0-based, below pcw_pdh_get_log_info's samples; `samples` itself: at
 * the end). As after pcw_pdh_add_counter live, that sample has no previous
 * one: its rates are PCW_CSTATUS_NEW_DATA_NEEDED (seek to index - 1 and
 * collect twice for its cooked rates). Returns PCW_OK, PCW_E_INVALID_PARAMETER
 * (index past the end, not a log query), PCW_E_CORRUPT or PCW_E_IO (the
 * block holding it could not be read again: pcw_pdh_log_error). Cost: a
 * binary search over the block index and decoding the samples of one
 * block up to it. */
int pcw_pdh_log_seek(pcw_pdh *q, uint64_t index);
/* The same to the first sample whose wall-clock time (CLOCK_REALTIME ns,
 * as pcw_pdh_realtime_ns gives it) is at or after realtime_ns: the log's
 * first sample for a time before the log, the end (the next collect
 * returns PCW_PDH_END_OF_LOG) for a time after it. The search assumes the
 * logged wall-clock times ascend (a clock set backwards during the
 * recording makes it land on one of the samples where the time passes
 * realtime_ns). Returns as pcw_pdh_log_seek. */
int pcw_pdh_log_seek_time(pcw_pdh *q, uint64_t realtime_ns);

/* One logged series: a concrete counter path and what it is, for a
 * browser that lists what the log holds (countersets, their instances and
 * counters). Strings stay valid until pcw_pdh_close. */
typedef struct pcw_pdh_log_series {
    const char *path;          /* as logged: "\\host\Set(job#1)\Counter" */
    const char *host;          /* "" when the path has none */
    const char *counterset;    /* "Set" */
    const char *instance;      /* display name with #n ("job#1"), "" for a
                                  set without instances, "_Total" */
    const char *instance_name; /* without #n */
    uint32_t dup_index;        /* the n of #n */
    const char *counter;       /* "Counter" (a histogram's "Latency:p99") */
    uint32_t counter_type;     /* of the series' last identity in the log (0:
                                  it logged none: never a value) */
    int32_t scale;             /* its default scale */
    uint32_t kind;             /* pcw_pdh_kind */
} pcw_pdh_log_series;
/* How many series the log holds (0 for a live query), and series i, in the
 * log's order (the recorder's columns, in every file: a path logged in
 * several files is one series). pcw_pdh_log_series_at returns PCW_OK or
 * PCW_E_INVALID_PARAMETER. Names come from the log: hostile, not checked
 * (escape them before a terminal shows them). */
size_t pcw_pdh_log_series_count(const pcw_pdh *q);
int pcw_pdh_log_series_at(const pcw_pdh *q, size_t i, pcw_pdh_log_series *out);

#ifdef __cplusplus
}
#endif
#endif /* PCW_PDH_H */
