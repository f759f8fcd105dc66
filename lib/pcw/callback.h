/* SPDX-License-Identifier: MIT */
/*
 * pcw/callback.h - callback countersets and control notifications: the
 * types a provider's callbacks receive (PCW_CALLBACK, PcwAddInstance,
 * PERFLIB's ControlCallback). Part of the provider API: pcw/provider.h
 * includes it, and the implementation is compiled where pcw/provider.h is
 * included with PCW_PROVIDER_IMPLEMENTATION defined. This header includes
 * no other provider header; it compiles on its own, in C and C++.
 *
 * A counterset registered with a pcw_callback has instances that exist only
 * when a consumer asks: the consumer's request travels over the provider's
 * control socket (<segment>.sock, protocol in pcw/control_proto.h and
 * docs/control-channel.md), a provider thread runs the callback, the
 * callback calls pcw_add_instance() once per instance, and the result goes
 * back to the consumer. A provider may also pass a pcw_control_callback in
 * its options to be told when consumers add or remove counters, enumerate,
 * and start and end collections.
 *
 * Threads. The channel runs one listener thread per provider (accept loop)
 * and one thread per connected consumer, which serves that consumer's
 * requests in order. Several consumers are served at once, so a callback
 * (counterset or control) may run concurrently with itself and with every
 * other provider call: it MUST be thread-safe. Provider threads block every
 * signal. The channel starts with pcw_provider_open when the options carry
 * a control callback, else with the first callback registration.
 *
 * Lifetimes. Callbacks run with no lock held and outside any RCU read-side
 * section, so they may call pcw_create_instance, pcw_close_instance,
 * pcw_register and even pcw_unregister of OTHER registrations. They must
 * not unregister their own registration or close the provider: that waits
 * for themselves. Once pcw_unregister returns, the registration's callback
 * is not running and never runs again: its context may go.
 * pcw_provider_close waits for a callback that is running and joins every
 * channel thread; none outlives the provider.
 *
 * Peers. A connecting process is served if its uid (SO_PEERCRED) is the
 * provider's effective uid, or 0 (root may read every segment anyway), or,
 * when the provider opted into group sharing, if the group is its primary
 * or one of its supplementary groups (SO_PEERGROUPS, taken at connect
 * time: no /proc race). Anyone else gets a PCW_CTL_REFUSED message with
 * PCW_E_PERMISSION and is disconnected. The socket file is 0600 (0660 and
 * the chosen group with share_with_group) inside the provider's 0700/0750
 * directory, so the credential check is the second of two walls.
 *
 * The channel's limits (what one provider grants its consumers) are in
 * lib/provider/control.c and docs/design.md's table of limits.
 */
#ifndef PCW_CALLBACK_H
#define PCW_CALLBACK_H

/* As pcw/provider.h: the implementation needs _GNU_SOURCE, which works
 * only when defined before the first system header. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdint.h>
#include <sys/types.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The provider API's functions are declared with PCW_PROVIDER_API (empty
 * by default: external linkage, default visibility). A program that builds
 * the implementation into a shared library and does not want to export it
 * may define it as __attribute__((visibility("hidden"))), the same in every
 * translation unit. */
#ifndef PCW_PROVIDER_API
#define PCW_PROVIDER_API
#endif

/* A callback's output: the instances of one request (pcw_add_instance). */
typedef struct pcw_buffer pcw_buffer;

/* A request's cancel signal (PCW_MASK_INFORMATION's CancelEvent). */
typedef struct pcw_cancel pcw_cancel;
struct pollfd;

/* PCW_DATA: one data block. For pcw_create_instance, `data` is the initial
 * contents (or NULL for zeros) and `size` the block size the caller expects;
 * for pcw_add_instance, the block to copy. */
typedef struct pcw_data {
    const void *data PCW__ZERO;
    uint32_t size PCW__ZERO;
} pcw_data;

/* ---- counterset callbacks (PCW_CALLBACK) -------------------------------- */

typedef enum pcw_callback_type {
    PCW_CALLBACK_ADD_COUNTER = 0,
    PCW_CALLBACK_REMOVE_COUNTER = 1,
    PCW_CALLBACK_ENUMERATE_INSTANCES = 2,
    PCW_CALLBACK_COLLECT_DATA = 3,
} pcw_callback_type;

/* PCW_CALLBACK_INFORMATION: PCW_COUNTER_INFORMATION for ADD/REMOVE_COUNTER,
 * PCW_MASK_INFORMATION for ENUMERATE_INSTANCES/COLLECT_DATA.
 *
 * counter_mask is indexed by counter ID, as PCW documents it: bit x set
 * means the counter whose id is x is wanted, so a ported callback's
 * `if (mask & (1ull << id))` works unchanged. ~0 means every counter.
 * Ids above 63 have no bit of their own: bit 63 stands for every id from
 * 63 up (it is set when any of them is wanted), so a callback testing
 * pcw_counter_mask_has(mask, id) never leaves out a counter that was
 * asked for - at worst it fills one more, which the provider then drops
 * (pcw_add_instance applies the consumer's own mask whatever the
 * callback filled). Windows cannot express such ids in its ULONG64
 * either; CTRPP manifests number counters from 1 up. */
typedef struct pcw_callback_info {
    pcw_buffer *buffer;        /* ENUMERATE/COLLECT: pass to pcw_add_instance */
    uint64_t counter_mask;     /* bit x = counter with ID x (above); ~0 = all */
    uint32_t instance_id;      /* PCW_ANY_INSTANCE_ID = any */
    const char *instance_mask; /* wildcard, "*" = all (pcw__wildcard_match) */
    uint32_t counter_index;    /* ADD/REMOVE_COUNTER: which counter (its position) */
    uint32_t counter_id;       /* ADD/REMOVE_COUNTER: its id */
    /* ENUMERATE/COLLECT: PCW's CollectMultiple. 0 when the consumer treats
     * the counterset as single-instance (it is registered so): the
     * consumer keeps one instance, so the callback may stop after adding
     * it. 1 otherwise. 0 for ADD/REMOVE_COUNTER. */
    int collect_multiple;
    /* PCW's CancelEvent: signalled when the consumer gave up on this
     * request (its time limit passed) or disconnected, or the provider is
     * closing. Poll it with pcw_cancelled, wait on it with
     * pcw_cancel_wait, or add it to your own poll with
     * pcw_cancel_pollfd. NULL for ADD/REMOVE_COUNTER (never cancelled). */
    const pcw_cancel *cancel;
} pcw_callback_info;

/* Is the counter with this id in `mask` (a pcw_callback_info's
 * counter_mask)? Bit x is the counter whose id is x, as in PCW; bit 63
 * also stands for every id above 63 (see counter_mask). */
static inline int pcw_counter_mask_has(uint64_t mask, uint32_t id)
{
    return (int)((mask >> (id < 63 ? id : 63)) & 1u);
}

/* ---- the cancel signal (CancelEvent) ------------------------------------ */

/* A slow callback (or control callback) may stop early once the consumer
 * no longer waits for it: whatever it adds after that is thrown away.
 * The signal is set when
 *   - the consumer's time limit for the request has passed (the consumer
 *     sends it with ENUMERATE and COLLECT; the provider counts it from
 *     when it reads the request, so a request queued behind a slow one is
 *     cancelled late, never early), or
 *   - the consumer closed its connection (exited, crashed, gave up), or
 *   - the provider is closing (pcw_provider_close).
 * `c` NULL is a signal that is never set. Only on the thread running the
 * callback that received `c`, during that call. */

/* 1 if the request is cancelled, else 0. Costs a clock read and a poll()
 * with no wait: call it between items, not for every counter. */
PCW_PROVIDER_API int pcw_cancelled(const pcw_cancel *c);

/* Wait until the request is cancelled (1) or timeout_ms pass (0); a
 * negative timeout_ms waits for the cancel alone (with `c` NULL it
 * returns 0 at once). A sleep the consumer can cut short. */
PCW_PROVIDER_API int pcw_cancel_wait(const pcw_cancel *c, int timeout_ms);

/* For a callback that waits on descriptors of its own: fills *pfd with
 * the descriptor and events that report the consumer's disconnection
 * (POLLRDHUP; poll() reports POLLHUP/POLLERR too: any revents means
 * cancelled) and returns the milliseconds left until the consumer's time
 * limit (0: passed; -1: none), to use as (or bound) poll()'s timeout.
 * With `c` NULL, pfd->fd is -1 (poll ignores it) and it returns -1. Do
 * not read from, write to or close the descriptor. */
PCW_PROVIDER_API int pcw_cancel_pollfd(const pcw_cancel *c, struct pollfd *pfd);

/* Deprecated (pcw 2.x keeps them; a future soname bump may drop them):
 * second names for pcw_cancelled(info->cancel) and
 * pcw_cancel_wait(info->cancel, timeout_ms). One operation has one name:
 * the pcw_cancel_* functions take the signal, which callbacks and control
 * callbacks both receive. */
__attribute__((deprecated("use pcw_cancelled(info->cancel)"))) static inline int
pcw_callback_cancelled(const pcw_callback_info *info)
{
    return info ? pcw_cancelled(info->cancel) : 0;
}
__attribute__((deprecated("use pcw_cancel_wait(info->cancel, timeout_ms)"))) static inline int
pcw_callback_wait_cancel(const pcw_callback_info *info, int timeout_ms)
{
    return pcw_cancel_wait(info ? info->cancel : NULL, timeout_ms);
}

/* A provider callback; must be thread-safe (several consumers may be served
 * at once). Its return value is informational, as in PCW. */
typedef int (*pcw_callback)(pcw_callback_type type, const pcw_callback_info *info, void *ctx);

/* PcwAddInstance: from a pcw_callback handling ENUMERATE_INSTANCES or
 * COLLECT_DATA, add one instance to the request's buffer.
 *   name   NUL-terminated UTF-8; non-empty for a multi-instance counterset,
 *          empty for a single-instance one, at most 1024 characters:
 *          PCW_E_INVALID_NAME, PCW_E_NAME_TOO_LONG. A name equal
 *          (case-insensitively) to one already added to this buffer is
 *          dropped and PCW_OK returned, so that a callback which stops at
 *          its first error (the KCS sample does) keeps the instances after
 *          it; the first instance of the name is kept, and the consumer
 *          sees PCW_E_DUPLICATE_NAME as the callback's status
 *          (pcw_collect_report.callback_status) unless the callback
 *          returned an error of its own.
 *   id     below 0xFFFFFFFE (PCW_E_INVALID_PARAMETER). Should be stable and
 *          unique; not enforced.
 *   count, data  0 and NULL: no values (enumeration; in a collection the
 *          consumer sees zeros). Otherwise count must be the registration's
 *          block count (PCW_E_INVALID_COUNT) and each data[i].size must
 *          cover the registered counters of block i
 *          (PCW_E_BUFFER_TOO_SMALL); bytes past the registered block size
 *          are ignored; data[i].data NULL means zeros.
 * Instances outside the request's masks are accepted (PCW_OK) and dropped;
 * counters outside its counter mask reach the consumer as zeros.
 * PCW_E_NO_MEMORY past PCW_CTL_MAX_REPLY bytes of reply.
 * Concurrency: the thread running the callback that received `buffer`,
 * during that call only. */
PCW_PROVIDER_API int pcw_add_instance(pcw_buffer *buffer, const char *name, uint32_t id,
                                      uint32_t count, const pcw_data *data);

/* ---- control notifications (PERFLIB's ControlCallback) ------------------ */

/* What a consumer is doing. */
typedef enum pcw_control_request {
    PCW_CONTROL_ADD_COUNTER = 1,    /* PERF_ADD_COUNTER */
    PCW_CONTROL_REMOVE_COUNTER = 2, /* PERF_REMOVE_COUNTER */
    PCW_CONTROL_ENUM_INSTANCES = 3, /* PERF_ENUM_INSTANCES */
    PCW_CONTROL_COLLECT_START = 4,  /* PERF_COLLECT_START */
    PCW_CONTROL_COLLECT_END = 5,    /* PERF_COLLECT_END */
} pcw_control_request;

typedef struct pcw_control_info {
    const char *counterset;   /* the counterset's name */
    uint32_t counter_index;   /* ADD/REMOVE: index in the registration */
    uint32_t counter_id;      /* ADD/REMOVE: its id; else PCW_NO_COUNTER */
    const char *instance;     /* ADD/REMOVE/ENUM/COLLECT: instance wildcard */
    uint32_t instance_id;     /* PCW_ANY_INSTANCE_ID = any */
    pid_t pid;                /* the consumer process (PERFLIB: machine name) */
    uid_t uid;                /* its user */
    const pcw_cancel *cancel; /* ENUM_INSTANCES, COLLECT_START, ADD_COUNTER: the
                                 request's cancel signal (above); else NULL */
} pcw_control_info;

/* A non-zero return from ADD_COUNTER, ENUM_INSTANCES or COLLECT_START is
 * the consumer's error; others are ignored. Return a pcw_status
 * (negative) or, as a ported PERFLIB provider does, a Win32 error code
 * (positive, e.g. 5 for ERROR_ACCESS_DENIED): it reaches the consumer
 * unchanged - pcw_consumer_add_counter returns it, a collection reports
 * it as the provider's status - and tools show it as "provider error 5
 * (ERROR_ACCESS_DENIED)" (pcw_status_describe). Runs on
 * control-channel threads: must be thread-safe. Passed in
 * pcw_provider_options.control_callback. */
typedef int (*pcw_control_callback)(pcw_control_request req, const pcw_control_info *info,
                                    void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* PCW_CALLBACK_H */
