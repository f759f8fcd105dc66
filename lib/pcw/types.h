/* SPDX-License-Identifier: MIT */
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
#include <stdio.h>

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
    PCW_E_INVALID_HANDLE = -22,   /* STATUS_INVALID_HANDLE: closed, or not that kind */
    PCW_E_CONNECTIONS_FULL = -23, /* the provider serves no more consumers now */
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
    case PCW_E_INVALID_HANDLE:
        return "invalid handle (already closed, or not a handle of this kind)";
    case PCW_E_CONNECTIONS_FULL:
        return "provider's control-channel connection slots are full";
    }
    return "unknown status";
}

/* A provider's own error code: a control callback (PERFLIB's
 * ControlCallback) may return a Win32 error code, a positive int; it
 * travels to the consumer unchanged and the consumer functions return it
 * as it is (pcw_status values are zero or negative, so the two never
 * mix). The names of the common ones, else NULL. */
static inline const char *pcw_win32_error_name(int code)
{
    switch (code) {
    case 1:
        return "ERROR_INVALID_FUNCTION";
    case 2:
        return "ERROR_FILE_NOT_FOUND";
    case 5:
        return "ERROR_ACCESS_DENIED";
    case 6:
        return "ERROR_INVALID_HANDLE";
    case 8:
        return "ERROR_NOT_ENOUGH_MEMORY";
    case 13:
        return "ERROR_INVALID_DATA";
    case 14:
        return "ERROR_OUTOFMEMORY";
    case 21:
        return "ERROR_NOT_READY";
    case 31:
        return "ERROR_GEN_FAILURE";
    case 50:
        return "ERROR_NOT_SUPPORTED";
    case 87:
        return "ERROR_INVALID_PARAMETER";
    case 122:
        return "ERROR_INSUFFICIENT_BUFFER";
    case 170:
        return "ERROR_BUSY";
    case 183:
        return "ERROR_ALREADY_EXISTS";
    case 234:
        return "ERROR_MORE_DATA";
    case 1168:
        return "ERROR_NOT_FOUND";
    case 1460:
        return "ERROR_TIMEOUT";
    }
    return NULL;
}

/* Any status, as a tool shows it, into buf (len bytes); returns buf. A
 * positive code is "provider error 5 (ERROR_ACCESS_DENIED)" (the name when
 * pcw_win32_error_name knows it); anything else is pcw_status_str. */
static inline const char *pcw_status_describe(int status, char *buf, size_t len)
{
    if (!buf || !len)
        return pcw_status_str(status);
    if (status > 0) {
        const char *name = pcw_win32_error_name(status);
        if (name)
            snprintf(buf, len, "provider error %d (%s)", status, name);
        else
            snprintf(buf, len, "provider error %d", status);
    } else {
        snprintf(buf, len, "%s", pcw_status_str(status));
    }
    return buf;
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
/* pcw's extension: an exponential histogram, a run of 64-bit words whose
 * shape pcw_counter_desc.histogram gives (pcw/histogram.h). Built from
 * winperf.h's reserved PERF_COUNTER_HISTOGRAM subtype, which no Windows
 * type uses; a variable-length counter, so consumers that do not know it
 * read no number from it. */
#define PERF_PCW_HISTOGRAM          (PCW_PERF_SIZE_VARIABLE_LEN | PCW_PERF_TYPE_COUNTER | PCW_PERF_COUNTER_HISTOGRAM | PCW_PERF_DISPLAY_NO_SUFFIX)
/* clang-format on */

/* Every counter type above, once: X(PERF_...) for each. The list behind
 * pcw_counter_type_known() and the names the provider's error messages
 * use. */
/* clang-format off */
#define PCW_COUNTER_TYPE_LIST(X) \
    X(PERF_COUNTER_COUNTER) X(PERF_COUNTER_TIMER) X(PERF_COUNTER_QUEUELEN_TYPE) \
    X(PERF_COUNTER_LARGE_QUEUELEN_TYPE) X(PERF_COUNTER_100NS_QUEUELEN_TYPE) \
    X(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE) X(PERF_COUNTER_BULK_COUNT) X(PERF_COUNTER_TEXT) \
    X(PERF_COUNTER_RAWCOUNT) X(PERF_COUNTER_LARGE_RAWCOUNT) X(PERF_COUNTER_RAWCOUNT_HEX) \
    X(PERF_COUNTER_LARGE_RAWCOUNT_HEX) X(PERF_SAMPLE_FRACTION) X(PERF_SAMPLE_COUNTER) \
    X(PERF_COUNTER_NODATA) X(PERF_COUNTER_TIMER_INV) X(PERF_SAMPLE_BASE) X(PERF_AVERAGE_TIMER) \
    X(PERF_AVERAGE_BASE) X(PERF_AVERAGE_BULK) X(PERF_OBJ_TIME_TIMER) X(PERF_100NSEC_TIMER) \
    X(PERF_100NSEC_TIMER_INV) X(PERF_COUNTER_MULTI_TIMER) X(PERF_COUNTER_MULTI_TIMER_INV) \
    X(PERF_COUNTER_MULTI_BASE) X(PERF_100NSEC_MULTI_TIMER) X(PERF_100NSEC_MULTI_TIMER_INV) \
    X(PERF_RAW_FRACTION) X(PERF_LARGE_RAW_FRACTION) X(PERF_RAW_BASE) X(PERF_LARGE_RAW_BASE) \
    X(PERF_ELAPSED_TIME) X(PERF_COUNTER_HISTOGRAM_TYPE) X(PERF_COUNTER_DELTA) \
    X(PERF_COUNTER_LARGE_DELTA) X(PERF_PRECISION_SYSTEM_TIMER) X(PERF_PRECISION_100NS_TIMER) \
    X(PERF_PRECISION_OBJECT_TIMER) X(PERF_PCW_HISTOGRAM)
/* clang-format on */

/* Is `type` one of the counter types above? */
static inline int pcw_counter_type_known(uint32_t type)
{
/* pcw-private-begin: a macro for the switch below, undefined after it */
#define PCW__TYPE_CASE(t) case t:
/* pcw-private-end */
    switch (type) {
        PCW_COUNTER_TYPE_LIST(PCW__TYPE_CASE)
        return 1;
    }
#undef PCW__TYPE_CASE
    return 0;
}

/* pcw-private-begin: the provider's messages and libpcw share it (static inline) */
/* The PERF_* name of a counter type ("PERF_COUNTER_BULK_COUNT"), or NULL
 * for a value that is none. (libpcw exports it as pcw_counter_type_name,
 * pcw/pdh.h; the provider's messages use this one.) */
static inline const char *pcw__counter_type_name(uint32_t type)
{
#define PCW__TYPE_NAME(t)                                                                          \
    case t:                                                                                        \
        return #t;
    switch (type) {
        PCW_COUNTER_TYPE_LIST(PCW__TYPE_NAME)
    }
#undef PCW__TYPE_NAME
    return NULL;
}
/* pcw-private-end */

/* The size a counter of this type has: 8 bytes for the PCW_PERF_SIZE_LARGE
 * types (and the variable-length text type, whose size bits include it), 4
 * for every other. A constant expression. */
#define PCW_COUNTER_NATURAL_SIZE(type) (((type)&PCW_PERF_SIZE_LARGE) ? 8u : 4u)

/* Does a counter of this type count ticks of a clock in a 32-bit field -
 * PERF_AVERAGE_TIMER and PERF_COUNTER_QUEUELEN_TYPE - which at pcw's
 * default 10^9 ticks per second (nanoseconds, pcw_time_ns) wraps after
 * 4.3 s of summed time? Such a counter may be 8 bytes (a pcw extension),
 * and pcw_register refuses it in 4 bytes unless perf_freq_ref gives it a
 * coarser clock (docs/query.md, "pcw's time base"). */
#define PCW_COUNTER_TYPE_TICKS_32(type)                                                            \
    ((type) == PERF_AVERAGE_TIMER || (type) == PERF_COUNTER_QUEUELEN_TYPE)

/* May a counter of this type be `size` bytes? Its natural size always; and
 * 8 bytes for the 32-bit plain numbers PERF_COUNTER_RAWCOUNT and
 * PERF_COUNTER_RAWCOUNT_HEX, which are shown as stored (Windows providers
 * declare UINT64 fields under perf_counter_rawcount, e.g.
 * microsoft/xdp-for-windows), and for the 32-bit tick types
 * (PCW_COUNTER_TYPE_TICKS_32), whose formulas take differences and so read
 * 8 bytes as they read 4. Any other mismatch is refused: a 64-bit type
 * in 4 bytes wraps at 2^32 where consumers expect 2^64, and a 32-bit rate,
 * fraction or base in 8 bytes is not what its type tells consumers. The
 * rule pcw_register applies and PCW_COUNTER checks at compile time; a
 * constant expression. */
#define PCW_COUNTER_SIZE_OK(type, size)                                                            \
    ((size) == PCW_COUNTER_NATURAL_SIZE(type) ||                                                   \
     ((size) == 8u && (((type)&0x00000F00u) == (PCW_PERF_SIZE_DWORD | PCW_PERF_TYPE_NUMBER) ||     \
                       PCW_COUNTER_TYPE_TICKS_32(type))))

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

/* The manifest's name of an instance type ("multipleAggregate"...), or
 * NULL for a value that names none. Pure. */
static inline const char *pcw_instance_type_name(uint32_t t)
{
    static const char *const n[] = {"single",
                                    "multiple",
                                    "globalAggregate",
                                    "multipleAggregate",
                                    "globalAggregateHistory",
                                    "instanceAggregate",
                                    "multipleAggregateHistory",
                                    "instanceAggregateHistory"};
    return t < sizeof n / sizeof n[0] ? n[t] : NULL;
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

/* "No such counter": what a segment's counter records (pcw_seg_counter,
 * and pcw_counter for consumers) in base_id, perf_time_id, perf_freq_id and
 * multi_id when there is none. Not a valid counter id. */
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

/* Members of the structs a program fills in (pcw_counter_desc, and the
 * provider's pcw_registration_info and pcw_provider_options) end with
 * PCW__ZERO: in C++ it gives each a default member initialiser, so that a
 * designated or partial initialiser leaves the rest zero without a
 * -Wmissing-field-initializers warning, as C does. Nothing in C. */
/* pcw-private-begin: the public structs' members use it */
#ifdef __cplusplus
#define PCW__ZERO = {}
#else
#define PCW__ZERO
#endif
/* pcw-private-end */

/* A reference from one counter to another (base_ref and the three after
 * it): 0 means none (or, for base_ref, the default below), PCW_REF(id) the
 * counter with that id. Stored as id + 1 so that a zero-filled descriptor
 * refers to nothing, even in a counterset that has a counter 0. */
#define PCW_REF(id) ((uint32_t)(id) + 1u)

/* One counter (PCW_COUNTER_DESCRIPTOR plus the manifest's attributes).
 *
 * Counter tables are data: every member may be left zero, and a zeroed
 * descriptor means "no base, no time, no frequency, no multi counter,
 * default scale, standard detail level, natural size". A table of
 * PCW_COUNTER() entries (below) or of designated initialisers works as a
 * `static const` array.
 *
 * The base of a counter whose type needs one (pcw_counter_type_needs_base:
 * fractions, averages, multi timers) is base_ref when set, else - Windows'
 * rule - the counter registered right after it, which must then have a
 * base type (pcw_counter_type_is_base). A precision timer
 * (PERF_PRECISION_*) likewise takes the following counter as its timestamp
 * when that one has a base type, unless base_ref says otherwise. Other types
 * have no base unless base_ref names one. pcw_register resolves the rule
 * and records the base's id in the segment, so consumers need not know it. */
typedef struct pcw_counter_desc {
    uint32_t id PCW__ZERO;             /* unique within the counterset, not PCW_NO_COUNTER */
    uint32_t type PCW__ZERO;           /* a PERF_* type above */
    uint32_t block PCW__ZERO;          /* data-block index (PCW's StructIndex) */
    uint32_t offset PCW__ZERO;         /* byte offset in that block; aligned to size */
    uint32_t size PCW__ZERO;           /* 4 or 8 (PCW_COUNTER_SIZE_OK); 0: natural size */
    uint32_t base_ref PCW__ZERO;       /* 0: the rule above; PCW_REF(id): that counter */
    uint32_t perf_time_ref PCW__ZERO;  /* 0: none; PCW_REF(id) */
    uint32_t perf_freq_ref PCW__ZERO;  /* 0: none; PCW_REF(id) */
    uint32_t multi_ref PCW__ZERO;      /* 0: none; PCW_REF(id) */
    int32_t default_scale PCW__ZERO;   /* power of ten, -10..10 */
    uint32_t detail_level PCW__ZERO;   /* PCW_DETAIL_*; 0 means standard */
    uint32_t aggregate PCW__ZERO;      /* pcw_aggregate */
    uint32_t attributes PCW__ZERO;     /* PCW_ATTR_* */
    const char *name PCW__ZERO;        /* UTF-8, non-empty, unique case-insensitively */
    const char *description PCW__ZERO; /* UTF-8 or NULL */
    const char *uri PCW__ZERO;         /* or NULL */
    const char *symbol PCW__ZERO;      /* or NULL */
    uint32_t histogram PCW__ZERO;      /* PERF_PCW_HISTOGRAM: its shape
                                          (PCW_HISTOGRAM_SHAPE, pcw/histogram.h);
                                          0 for every other type */
} pcw_counter_desc;

/* A descriptor with the defaults: zero everywhere (see above), and the type
 * PERF_COUNTER_LARGE_RAWCOUNT (8 bytes). */
static inline pcw_counter_desc pcw_counter_desc_default(void)
{
    pcw_counter_desc d = {0};
    d.type = PERF_COUNTER_LARGE_RAWCOUNT;
    return d;
}

/* PCW_COUNTER(id, name, type, struct_type, field): the descriptor of a
 * counter stored in `field` of data block 0, laid out as `struct_type`:
 *
 *   struct web { uint64_t requests; uint32_t active; };
 *   static const pcw_counter_desc web_counters[] = {
 *       PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct web, requests),
 *       PCW_COUNTER(2, "Active", PERF_COUNTER_RAWCOUNT, struct web, active),
 *   };
 *
 * offset and size come from offsetof and sizeof; the field's size is
 * checked against the type (PCW_COUNTER_SIZE_OK; and a 32-bit tick type
 * must be 8 bytes here, PCW_COUNTER_TYPE_TICKS_32) and its offset against
 * its size at compile time (C11 _Static_assert, C++ static_assert). Everything
 * else is zero: no aggregate, standard detail level, no description, the
 * default base (the counter after it, for the types that need one).
 * PCW_COUNTER_IN_BLOCK(block, ...) is the same for data block `block`.
 *
 * PCW_COUNTER_EX(id, name, type, struct_type, field, aggregate,
 * detail_level, description) also sets the manifest's aggregate (a
 * pcw_aggregate: how a _Total or aggregate instance combines the
 * instances; without one a total shows PCW_CSTATUS_NOT_AGGREGATED),
 * detailLevel (PCW_DETAIL_*, 0 = standard; advanced counters are hidden
 * from wildcards unless a consumer asks) and description (or NULL):
 *
 *       PCW_COUNTER_EX(1, "Requests", PERF_COUNTER_BULK_COUNT, struct web, requests,
 *                      PCW_AGGREGATE_TOTAL, PCW_DETAIL_STANDARD, "Requests served"),
 *
 * PCW_COUNTER_IN_BLOCK_EX(block, ...) is the same for data block `block`.
 * For the other members (base_ref, default_scale, attributes...) write
 * the descriptor with designated initialisers. Constant expressions in C
 * and C++, so tables may be static. */
#define PCW_COUNTER(id, name, type, struct_type, field)                                            \
    PCW_COUNTER_IN_BLOCK_EX(0, id, name, type, struct_type, field, 0, 0, NULL)
#define PCW_COUNTER_IN_BLOCK(block, id, name, type, struct_type, field)                            \
    PCW_COUNTER_IN_BLOCK_EX(block, id, name, type, struct_type, field, 0, 0, NULL)
#define PCW_COUNTER_EX(id, name, type, struct_type, field, aggregate, detail_level, description)   \
    PCW_COUNTER_IN_BLOCK_EX(0, id, name, type, struct_type, field, aggregate, detail_level,        \
                            description)
#define PCW_COUNTER_IN_BLOCK_EX(block, id, name, type, struct_type, field, aggregate,              \
                                detail_level, description)                                         \
    {                                                                                              \
        (uint32_t)(id), (uint32_t)(type), (uint32_t)(block),                                       \
            (uint32_t)offsetof(struct_type, field),                                                \
            PCW__CHECKED_SIZE(type, struct_type, field, #struct_type "." #field), 0, 0, 0, 0, 0,   \
            (uint32_t)(detail_level), (uint32_t)(aggregate), 0, (name), (description), NULL, NULL, \
            0                                                                                      \
    }

/* pcw-private-begin: PCW_COUNTER's compile-time checks, which the public macros expand to */
#define PCW__FIELD_SIZE(struct_type, field) sizeof(((struct_type *)0)->field)
/* PCW_COUNTER_SIZE_OK split by the rule a field breaks, so that the
 * compiler's message names that rule (the three together are exactly
 * PCW_COUNTER_SIZE_OK): a 64-bit type in 4 bytes, a 32-bit type in 8, or
 * a field of another size. PCW__SIZE_TICKS_FIT adds pcw_register's rule
 * for a tick type without perf_freq_ref, which PCW_COUNTER cannot set. */
#define PCW__SIZE_FITS_64(type, size) ((size) != 4u || PCW_COUNTER_NATURAL_SIZE(type) == 4u)
#define PCW__SIZE_FITS_32(type, size) ((size) != 8u || PCW_COUNTER_SIZE_OK(type, 8u))
#define PCW__SIZE_4_OR_8(size) ((size) == 4u || (size) == 8u)
/* PCW_COUNTER sets no perf_freq_ref, so a 4-byte tick type there counts
 * nanoseconds and pcw_register would refuse it (PCW_COUNTER_TYPE_TICKS_32). */
#define PCW__SIZE_TICKS_FIT(type, size) ((size) != 4u || !PCW_COUNTER_TYPE_TICKS_32(type))
#define PCW__MSG_NEEDS_64                                                                          \
    "this type is 64-bit (PCW_PERF_SIZE_LARGE: PERF_COUNTER_BULK_COUNT, "                          \
    "PERF_COUNTER_LARGE_RAWCOUNT, PERF_100NSEC_TIMER, PERF_COUNTER_TIMER, PERF_ELAPSED_TIME, ...): " \
    "declare the field uint64_t (PCW_COUNTER_SIZE_OK)"
#define PCW__MSG_NEEDS_32                                                                          \
    "this type is 32-bit (only PERF_COUNTER_RAWCOUNT, PERF_COUNTER_RAWCOUNT_HEX and the tick "     \
    "types PERF_AVERAGE_TIMER and PERF_COUNTER_QUEUELEN_TYPE may also be 8 bytes): declare the "   \
    "field uint32_t, or take the type's 64-bit form (PERF_COUNTER_COUNTER "                        \
    "-> PERF_COUNTER_BULK_COUNT, PERF_RAW_FRACTION -> PERF_LARGE_RAW_FRACTION, ...; "              \
    "PCW_COUNTER_SIZE_OK)"
#define PCW__MSG_4_OR_8 "a counter field is 4 or 8 bytes (uint32_t or uint64_t)"
#define PCW__MSG_TICKS_64                                                                          \
    "a 4-byte PERF_AVERAGE_TIMER or PERF_COUNTER_QUEUELEN_TYPE counts nanoseconds and wraps "      \
    "after 4.3 s of summed time: declare the field uint64_t (or, for a coarser clock, describe "   \
    "the counter with perf_freq_ref instead of PCW_COUNTER)"
#ifndef __cplusplus
/* A _Static_assert inside an expression: the declaration of an unnamed
 * struct in sizeof (standard C11, accepted by gcc and clang with
 * -Wpedantic). */
#define PCW__CHECKED_SIZE(type, struct_type, field, what)                                          \
    ((uint32_t)(PCW__FIELD_SIZE(struct_type, field) +                                              \
                0 * sizeof(struct {                                                                \
                    _Static_assert(                                                                \
                        PCW__SIZE_FITS_64(type, PCW__FIELD_SIZE(struct_type, field)),              \
                        what ": its size does not suit the counter type: " PCW__MSG_NEEDS_64);     \
                    _Static_assert(                                                                \
                        PCW__SIZE_FITS_32(type, PCW__FIELD_SIZE(struct_type, field)),              \
                        what ": its size does not suit the counter type: " PCW__MSG_NEEDS_32);     \
                    _Static_assert(PCW__SIZE_4_OR_8(PCW__FIELD_SIZE(struct_type, field)), what     \
                                   ": its size does not suit the counter type: " PCW__MSG_4_OR_8); \
                    _Static_assert(                                                                \
                        PCW__SIZE_TICKS_FIT(type, PCW__FIELD_SIZE(struct_type, field)),            \
                        what ": its size does not suit the counter type: " PCW__MSG_TICKS_64);     \
                    _Static_assert(                                                                \
                        offsetof(struct_type, field) % PCW__FIELD_SIZE(struct_type, field) == 0,   \
                        what ": a counter must be aligned to its size");                           \
                    char pcw__unused;                                                              \
                })))
#else
#define PCW__CHECKED_SIZE(type, struct_type, field, what)                                          \
    (::pcw__counter_field<(uint32_t)(type), PCW__FIELD_SIZE(struct_type, field),                   \
                          offsetof(struct_type, field)>::size)
#endif

#ifdef __cplusplus
} /* extern "C" */

/* PCW_COUNTER's compile-time checks in C++ (templates cannot be extern "C").
 * A failing check names this template and, in the instantiation context,
 * the PCW_COUNTER line. */
template <uint32_t Type, size_t Size, size_t Offset> struct pcw__counter_field {
    static_assert(PCW__SIZE_FITS_64(Type, Size),
                  "PCW_COUNTER: the field's size does not suit the counter type: " PCW__MSG_NEEDS_64);
    static_assert(PCW__SIZE_FITS_32(Type, Size),
                  "PCW_COUNTER: the field's size does not suit the counter type: " PCW__MSG_NEEDS_32);
    static_assert(PCW__SIZE_4_OR_8(Size),
                  "PCW_COUNTER: the field's size does not suit the counter type: " PCW__MSG_4_OR_8);
    static_assert(
        PCW__SIZE_TICKS_FIT(Type, Size),
        "PCW_COUNTER: the field's size does not suit the counter type: " PCW__MSG_TICKS_64);
    static_assert(Size != 0 && Offset % Size == 0,
                  "PCW_COUNTER: a counter must be aligned to its size");
    static constexpr uint32_t size = (uint32_t)Size;
};
#endif
/* pcw-private-end */
#endif /* PCW_TYPES_H */
