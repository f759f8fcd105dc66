/*
 * pcw/types.h - types shared by pcw's provider API and consumer library.
 *
 * Status codes, winperf.h counter types, counterset and counter descriptors.
 * Nothing here touches shared memory; see pcw/layout.h for the segment.
 *
 * Concurrency: plain data and pure functions; safe from any thread.
 */
#ifndef PCW_TYPES_H
#define PCW_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------
 * Status codes. Each PcwXxx NTSTATUS that pcw keeps has its own code; the
 * comment names the Windows status it stands for.
 */
typedef enum pcw_status {
    PCW_OK = 0,
    PCW_E_INVALID_PARAMETER = -1, /* STATUS_INVALID_PARAMETER(_2) */
    PCW_E_TOO_MANY_COUNTERS = -2, /* STATUS_INTEGER_OVERFLOW (PcwRegister) */
    PCW_E_NO_MEMORY = -3,         /* STATUS_NO_MEMORY */
    PCW_E_INVALID_COUNT = -4,     /* STATUS_INVALID_PARAMETER_4 (Count) */
    PCW_E_BUFFER_TOO_SMALL = -5,  /* STATUS_INVALID_BUFFER_SIZE */
    PCW_E_INTEGER_OVERFLOW = -6,  /* STATUS_INTEGER_OVERFLOW (sizes) */
    PCW_E_INVALID_NAME = -7,      /* empty, non-UTF-8 or misplaced name */
    PCW_E_NAME_TOO_LONG = -8,     /* instance name over 1024 characters */
    PCW_E_DUPLICATE_NAME = -9,    /* name already used (case-insensitive) */
    PCW_E_IO = -10,               /* a system call failed; see errno */
    PCW_E_CORRUPT = -11,          /* a segment failed validation */
    PCW_E_VERSION = -12,          /* unknown layout version or struct sizes */
    PCW_E_NOT_FOUND = -13,        /* no such provider, counterset, instance */
    PCW_E_PROVIDER_EXITED = -14,  /* the segment's provider is gone */
    PCW_E_TRUNCATED = -15,        /* the segment shrank under the reader */
    PCW_E_BUSY = -16,             /* a consistent read did not settle */
    PCW_E_PERMISSION = -17,       /* the peer or file is not allowed */
    PCW_E_TIMEOUT = -18,          /* the provider did not answer in time */
    PCW_E_LAYOUT_MISMATCH = -19,  /* same counterset name, other counters */
    PCW_E_SEGMENT_FULL = -20,     /* the segment reached its maximum size */
    PCW_E_PROTOCOL = -21,         /* a malformed control-channel message */
} pcw_status;

/* A short English sentence for a status; never NULL. */
static inline const char *pcw_status_str(int status)
{
    switch ((pcw_status)status) {
    case PCW_OK:
        return "success";
    case PCW_E_INVALID_PARAMETER:
        return "invalid parameter";
    case PCW_E_TOO_MANY_COUNTERS:
        return "too many counters";
    case PCW_E_NO_MEMORY:
        return "out of memory";
    case PCW_E_INVALID_COUNT:
        return "wrong number of data blocks";
    case PCW_E_BUFFER_TOO_SMALL:
        return "data block too small for the registered counters";
    case PCW_E_INTEGER_OVERFLOW:
        return "size overflows";
    case PCW_E_INVALID_NAME:
        return "invalid name (empty, not UTF-8, or not allowed here)";
    case PCW_E_NAME_TOO_LONG:
        return "instance name longer than 1024 characters";
    case PCW_E_DUPLICATE_NAME:
        return "name already in use (names compare case-insensitively)";
    case PCW_E_IO:
        return "system call failed";
    case PCW_E_CORRUPT:
        return "segment is corrupted or malformed";
    case PCW_E_VERSION:
        return "segment has an unsupported layout version";
    case PCW_E_NOT_FOUND:
        return "not found";
    case PCW_E_PROVIDER_EXITED:
        return "provider has exited";
    case PCW_E_TRUNCATED:
        return "segment was truncated while being read";
    case PCW_E_BUSY:
        return "instance kept changing; no consistent read";
    case PCW_E_PERMISSION:
        return "permission denied";
    case PCW_E_TIMEOUT:
        return "provider did not answer in time";
    case PCW_E_LAYOUT_MISMATCH:
        return "counterset registered twice with different counters";
    case PCW_E_SEGMENT_FULL:
        return "segment reached its maximum size";
    case PCW_E_PROTOCOL:
        return "malformed control-channel message";
    }
    return "unknown status";
}

/* ---------------------------------------------------------------------------
 * Counter types: winperf.h's numeric values, built from its bit fields so
 * that cooked-value maths can follow Windows exactly.
 */
#define PCW_PERF_SIZE_DWORD        0x00000000u
#define PCW_PERF_SIZE_LARGE        0x00000100u
#define PCW_PERF_SIZE_ZERO         0x00000200u
#define PCW_PERF_SIZE_VARIABLE_LEN 0x00000300u
#define PCW_PERF_TYPE_NUMBER       0x00000000u
#define PCW_PERF_TYPE_COUNTER      0x00000400u
#define PCW_PERF_TYPE_TEXT         0x00000800u
#define PCW_PERF_TYPE_ZERO         0x00000C00u
#define PCW_PERF_NUMBER_HEX        0x00000000u
#define PCW_PERF_NUMBER_DECIMAL    0x00010000u
#define PCW_PERF_NUMBER_DEC_1000   0x00020000u
#define PCW_PERF_COUNTER_VALUE     0x00000000u
#define PCW_PERF_COUNTER_RATE      0x00010000u
#define PCW_PERF_COUNTER_FRACTION  0x00020000u
#define PCW_PERF_COUNTER_BASE      0x00030000u
#define PCW_PERF_COUNTER_ELAPSED   0x00040000u
#define PCW_PERF_COUNTER_QUEUELEN  0x00050000u
#define PCW_PERF_COUNTER_HISTOGRAM 0x00060000u
#define PCW_PERF_COUNTER_PRECISION 0x00070000u
#define PCW_PERF_TEXT_UNICODE      0x00000000u
#define PCW_PERF_TEXT_ASCII        0x00010000u
#define PCW_PERF_TIMER_TICK        0x00000000u
#define PCW_PERF_TIMER_100NS       0x00100000u
#define PCW_PERF_OBJECT_TIMER      0x00200000u
#define PCW_PERF_DELTA_COUNTER     0x00400000u
#define PCW_PERF_DELTA_BASE        0x00800000u
#define PCW_PERF_INVERSE_COUNTER   0x01000000u
#define PCW_PERF_MULTI_COUNTER     0x02000000u
#define PCW_PERF_DISPLAY_NO_SUFFIX 0x00000000u
#define PCW_PERF_DISPLAY_PER_SEC   0x10000000u
#define PCW_PERF_DISPLAY_PERCENT   0x20000000u
#define PCW_PERF_DISPLAY_SECONDS   0x30000000u
#define PCW_PERF_DISPLAY_NOSHOW    0x40000000u

/* clang-format off */
#define PERF_COUNTER_COUNTER        (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PER_SEC)
#define PERF_COUNTER_TIMER          (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_COUNTER_QUEUELEN_TYPE  (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_QUEUELEN | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_LARGE_QUEUELEN_TYPE (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_QUEUELEN | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_100NS_QUEUELEN_TYPE (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_QUEUELEN | PCW_PERF_TIMER_100NS | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_QUEUELEN | PCW_PERF_OBJECT_TIMER | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_BULK_COUNT     (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PER_SEC)
#define PERF_COUNTER_TEXT           (PCW_PERF_SIZE_VARIABLE_LEN | PCW_PERF_TYPE_TEXT | PCW_PERF_TEXT_UNICODE | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_RAWCOUNT       (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_NUMBER | PCW_PERF_NUMBER_DECIMAL | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_LARGE_RAWCOUNT (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_NUMBER | PCW_PERF_NUMBER_DECIMAL | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_RAWCOUNT_HEX   (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_NUMBER | PCW_PERF_NUMBER_HEX | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_LARGE_RAWCOUNT_HEX (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_NUMBER | PCW_PERF_NUMBER_HEX | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_SAMPLE_FRACTION        (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_FRACTION | PCW_PERF_DELTA_COUNTER | PCW_PERF_DELTA_BASE | PCW_PERF_DISPLAY_PERCENT)
#define PERF_SAMPLE_COUNTER         (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_NODATA         (PCW_PERF_SIZE_ZERO | PCW_PERF_DISPLAY_NOSHOW)
#define PERF_COUNTER_TIMER_INV      (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_INVERSE_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_SAMPLE_BASE            (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_BASE | PCW_PERF_DISPLAY_NOSHOW | 0x00000001u)
#define PERF_AVERAGE_TIMER          (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_FRACTION | PCW_PERF_DISPLAY_SECONDS)
#define PERF_AVERAGE_BASE           (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_BASE | PCW_PERF_DISPLAY_NOSHOW | 0x00000002u)
#define PERF_AVERAGE_BULK           (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_FRACTION | PCW_PERF_DISPLAY_NOSHOW)
#define PERF_OBJ_TIME_TIMER         (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_OBJECT_TIMER | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_100NSEC_TIMER          (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_100NS | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_100NSEC_TIMER_INV      (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_100NS | PCW_PERF_DELTA_COUNTER | PCW_PERF_INVERSE_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_COUNTER_MULTI_TIMER    (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_DELTA_COUNTER | PCW_PERF_TIMER_TICK | PCW_PERF_MULTI_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_COUNTER_MULTI_TIMER_INV (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_DELTA_COUNTER | PCW_PERF_MULTI_COUNTER | PCW_PERF_TIMER_TICK | PCW_PERF_INVERSE_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_COUNTER_MULTI_BASE     (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_BASE | PCW_PERF_MULTI_COUNTER | PCW_PERF_DISPLAY_NOSHOW)
#define PERF_100NSEC_MULTI_TIMER    (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_DELTA_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_100NS | PCW_PERF_MULTI_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_100NSEC_MULTI_TIMER_INV (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_DELTA_COUNTER | PCW_PERF_COUNTER_RATE | PCW_PERF_TIMER_100NS | PCW_PERF_MULTI_COUNTER | PCW_PERF_INVERSE_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_RAW_FRACTION           (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_FRACTION | PCW_PERF_DISPLAY_PERCENT)
#define PERF_LARGE_RAW_FRACTION     (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_FRACTION | PCW_PERF_DISPLAY_PERCENT)
#define PERF_RAW_BASE               (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_BASE | PCW_PERF_DISPLAY_NOSHOW | 0x00000003u)
#define PERF_LARGE_RAW_BASE         (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_BASE | PCW_PERF_DISPLAY_NOSHOW)
#define PERF_ELAPSED_TIME           (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_ELAPSED | PCW_PERF_OBJECT_TIMER | PCW_PERF_DISPLAY_SECONDS)
#define PERF_COUNTER_HISTOGRAM_TYPE 0x80000000u
#define PERF_COUNTER_DELTA          (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_VALUE | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_COUNTER_LARGE_DELTA    (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_VALUE | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_NO_SUFFIX)
#define PERF_PRECISION_SYSTEM_TIMER (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_PRECISION | PCW_PERF_TIMER_TICK | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_PRECISION_100NS_TIMER  (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_PRECISION | PCW_PERF_TIMER_100NS | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_PRECISION_OBJECT_TIMER (PCW_PERF_SIZE_LARGE | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_PRECISION | PCW_PERF_OBJECT_TIMER | PCW_PERF_DELTA_COUNTER | PCW_PERF_DISPLAY_PERCENT)
#define PERF_PRECISION_TIMESTAMP    PERF_LARGE_RAW_BASE
/* clang-format on */

/* Is `type` one of the counter types above? */
static inline int pcw_counter_type_known(uint32_t type)
{
    static const uint32_t known[] = {
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
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i] == type)
            return 1;
    return 0;
}

/* Does a counter of this type need a base counter (a *_BASE type) to be
 * cooked? Windows takes the counter registered right after it, or baseID. */
static inline int pcw_counter_type_needs_base(uint32_t type)
{
    return type == PERF_SAMPLE_FRACTION || type == PERF_AVERAGE_TIMER ||
           type == PERF_AVERAGE_BULK || type == PERF_RAW_FRACTION ||
           type == PERF_LARGE_RAW_FRACTION || type == PERF_COUNTER_MULTI_TIMER ||
           type == PERF_COUNTER_MULTI_TIMER_INV || type == PERF_100NSEC_MULTI_TIMER ||
           type == PERF_100NSEC_MULTI_TIMER_INV;
}

/* Is this a base type (only ever used as another counter's denominator)? */
static inline int pcw_counter_type_is_base(uint32_t type)
{
    return (type & 0x00070C00u) == (PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_BASE);
}

/* ---------------------------------------------------------------------------
 * Counterset and counter descriptors (PCW_REGISTRATION_INFORMATION,
 * PCW_COUNTER_DESCRIPTOR, and the manifest attributes CTRPP compiles in).
 */

/* Counterset instance types (the manifest's `instances` attribute).
 *
 * pcw numbers them 0, 1, 2... in the order they were added: the value is
 * stored in segments (pcw_seg_cset.instance_type), so existing values
 * never change and new ones are appended. PERFLIB's InstanceType
 * (PERF_COUNTERSET_INFO, perflib.h) is a bit set instead: FLAG_MULTIPLE 2,
 * FLAG_AGGREGATE 4, FLAG_HISTORY 8, FLAG_INSTANCE 16. The mapping:
 *
 *   pcw                              manifest                  PERFLIB
 *   PCW_SINGLE_INSTANCE              single                    0    SINGLE_INSTANCE
 *   PCW_MULTI_INSTANCE               multiple                  2    MULTI_INSTANCES
 *   PCW_GLOBAL_AGGREGATE             globalAggregate           4    SINGLE_AGGREGATE
 *   PCW_MULTI_AGGREGATE              multipleAggregate         6    MULTI_AGGREGATE
 *   PCW_GLOBAL_AGGREGATE_HISTORY     globalAggregateHistory    0xC  SINGLE_AGGREGATE_HISTORY
 *   PCW_INSTANCE_AGGREGATE           instanceAggregate         0x16 INSTANCE_AGGREGATE
 *   PCW_MULTI_AGGREGATE_HISTORY      multipleAggregateHistory  (0xE: perflib.h names none)
 *   PCW_INSTANCE_AGGREGATE_HISTORY   instanceAggregateHistory  (0x1E: perflib.h names none)
 *
 * The last two PERFLIB values are the flags composed the same way; no
 * PERF_COUNTERSET_* constant is documented for them. instanceAggregate
 * combines the instances of one name across providers (by each counter's
 * aggregate function: IExplore, IExplore#1... become one IExplore) rather
 * than all of them into one _Total; the History forms keep an aggregate's
 * values after an instance goes away. pcw records the type for consumers;
 * computing aggregates is the consumer's business. */
typedef enum pcw_instance_type {
    PCW_SINGLE_INSTANCE = 0,            /* "single" */
    PCW_MULTI_INSTANCE = 1,             /* "multiple" */
    PCW_GLOBAL_AGGREGATE = 2,           /* "globalAggregate" */
    PCW_MULTI_AGGREGATE = 3,            /* "multipleAggregate" */
    PCW_GLOBAL_AGGREGATE_HISTORY = 4,   /* "globalAggregateHistory" */
    PCW_INSTANCE_AGGREGATE = 5,         /* "instanceAggregate" */
    PCW_MULTI_AGGREGATE_HISTORY = 6,    /* "multipleAggregateHistory" */
    PCW_INSTANCE_AGGREGATE_HISTORY = 7, /* "instanceAggregateHistory" */
    PCW_INSTANCE_TYPE_MAX_ = PCW_INSTANCE_AGGREGATE_HISTORY,
} pcw_instance_type;

/* Does a counterset of this type have named instances? Single-instance and
 * global-aggregate sets (with or without history) have exactly one
 * instance, with an empty name; every other type has named instances. */
static inline int pcw_instance_type_is_multi(uint32_t t)
{
    return t == PCW_MULTI_INSTANCE || t == PCW_MULTI_AGGREGATE || t == PCW_INSTANCE_AGGREGATE ||
           t == PCW_MULTI_AGGREGATE_HISTORY || t == PCW_INSTANCE_AGGREGATE_HISTORY;
}

/* Counter detail levels (the manifest's detailLevel). */
enum {
    PCW_DETAIL_NOVICE = 100,
    PCW_DETAIL_ADVANCED = 200,
    PCW_DETAIL_EXPERT = 300,
    PCW_DETAIL_WIZARD = 400,
    PCW_DETAIL_STANDARD = PCW_DETAIL_NOVICE
};

/* Aggregate functions (the manifest's aggregate attribute). */
typedef enum pcw_aggregate {
    PCW_AGGREGATE_UNDEFINED = 0,
    PCW_AGGREGATE_TOTAL = 1, /* "sum" */
    PCW_AGGREGATE_AVERAGE = 2,
    PCW_AGGREGATE_MIN = 3,
    PCW_AGGREGATE_MAX = 4,
    PCW_AGGREGATE_MAX_ = PCW_AGGREGATE_MAX,
} pcw_aggregate;

/* Counter attributes (the manifest's counterAttribute names). */
enum {
    PCW_ATTR_REFERENCE = 1u << 0,
    PCW_ATTR_NO_DISPLAY = 1u << 1,
    PCW_ATTR_NO_DIGIT_GROUPING = 1u << 2,
    PCW_ATTR_DISPLAY_AS_HEX = 1u << 3,
    PCW_ATTR_DISPLAY_AS_REAL = 1u << 4,
    PCW_ATTR_ALL_ = (1u << 5) - 1,
};

/* "no such counter" for base_id, perf_time_id, perf_freq_id, multi_id. */
#define PCW_NO_COUNTER 0xFFFFFFFFu

/* The maximum number of counters in one counterset (PcwRegister fails with
 * STATUS_INTEGER_OVERFLOW beyond its maximum; pcw's is this). */
#define PCW_MAX_COUNTERS 4096u
/* The maximum number of data blocks an instance may have. */
#define PCW_MAX_BLOCKS 64u
/* The maximum size of one data block. */
#define PCW_MAX_BLOCK_SIZE (1u << 20)
/* Instance names: at most this many characters (code points) of UTF-8. */
#define PCW_MAX_INSTANCE_NAME_CHARS 1024u
#define PCW_MAX_INSTANCE_NAME_BYTES (4u * PCW_MAX_INSTANCE_NAME_CHARS)
/* Counterset and counter names, descriptions: at most this many bytes. */
#define PCW_MAX_STRING_BYTES 4096u

/* Instance ids at or above this are reserved (PCW_ANY_INSTANCE_ID...). */
#define PCW_ANY_INSTANCE_ID 0xFFFFFFFFu
#define PCW_MAX_INSTANCE_ID 0xFFFFFFFDu

/* One counter (PCW_COUNTER_DESCRIPTOR plus the manifest's attributes). */
typedef struct pcw_counter_desc {
    uint32_t id;             /* unique within the counterset */
    uint32_t type;           /* a PERF_* type above */
    uint32_t block;          /* data-block index (PCW's StructIndex) */
    uint32_t offset;         /* byte offset in that block; aligned to size */
    uint32_t size;           /* 4 or 8 */
    uint32_t base_id;        /* PCW_NO_COUNTER, or the id of its base */
    uint32_t perf_time_id;   /* PCW_NO_COUNTER, or a counter id */
    uint32_t perf_freq_id;   /* PCW_NO_COUNTER, or a counter id */
    uint32_t multi_id;       /* PCW_NO_COUNTER, or a counter id */
    int32_t default_scale;   /* power of ten, -10..10 */
    uint32_t detail_level;   /* PCW_DETAIL_*; 0 means standard */
    uint32_t aggregate;      /* pcw_aggregate */
    uint32_t attributes;     /* PCW_ATTR_* */
    const char *name;        /* UTF-8, non-empty, unique case-insensitively */
    const char *description; /* UTF-8 or NULL */
    const char *uri;         /* or NULL */
    const char *symbol;      /* or NULL */
} pcw_counter_desc;

/* Fill a descriptor with the defaults (no base, standard detail...). */
static inline pcw_counter_desc pcw_counter_desc_default(void)
{
    pcw_counter_desc d = {0};
    d.base_id = d.perf_time_id = d.perf_freq_id = d.multi_id = PCW_NO_COUNTER;
    d.detail_level = PCW_DETAIL_STANDARD;
    d.type = PERF_COUNTER_LARGE_RAWCOUNT;
    d.size = 8;
    return d;
}

#ifdef __cplusplus
}
#endif
#endif /* PCW_TYPES_H */
