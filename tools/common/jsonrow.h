/* SPDX-License-Identifier: MIT */
/*
 * tools/common/jsonrow.h - the JSON lines of `pcwstat -f JSON` and
 * `pcwrelog -f JSON`, written by one rule so that a jq filter reads both:
 * one object per sample per line,
 *
 *   {"time":"2026-11-27T03:12:00.481Z","sample":3,"values":[{...},...]}
 *
 * the time in UTC (ISO 8601, milliseconds), each value an object with
 * "path", "counterset", "instance", "counter", "kind" ("instance",
 * "total" or "aggregate"), "pid", "provider_id" (16 hex digits), the
 * container's fields when known, "value" (a number, or null without one)
 * and "status" (pcw_cstatus_str). docs/query.md and docs/history.md show it.
 *
 * Concurrency: none of its own; the caller owns the FILE.
 */
#ifndef PCW_TOOLS_JSONROW_H
#define PCW_TOOLS_JSONROW_H

#include <stdint.h>
#include <stdio.h>

typedef struct jsonrow_value {
    const char *path, *counterset, *instance, *counter;
    const char *kind; /* "instance", "total", "aggregate" */
    int32_t pid;
    uint64_t provider_id;
    const char *container; /* NULL: none known; else its name, and: */
    int32_t host_pid;
    const char *pod_namespace, *pod; /* NULL: not a Kubernetes pod */
    int has_number;                  /* 0: "value":null */
    double value;
    int status; /* pcw_cstatus */
} jsonrow_val;

/* The object's start: time and sample number. */
void jsonrow_begin(FILE *f, uint64_t realtime_ns, uint64_t sample);
/* One value; `first`: the first of this object's. */
void jsonrow_value(FILE *f, const jsonrow_val *v, int first);
/* The object's end and its newline. */
void jsonrow_end(FILE *f);

#endif /* PCW_TOOLS_JSONROW_H */
