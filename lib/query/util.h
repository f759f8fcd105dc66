/* SPDX-License-Identifier: MIT */
/*
 * lib/query/util.h - what every module of the query layer may use: the
 * growth of an array and the clock. Calls nothing else of lib/query.
 */
#ifndef PCW_QUERY_UTIL_H
#define PCW_QUERY_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Grow *v (an array of *cap elements of `elem` bytes) to hold `need`:
 * the capacity doubles (from 8), so n appends cost O(n). 0, or -1 (out of
 * memory, or more than SIZE_MAX bytes; *v and *cap are then as they were). */
int pcw__q_grow(void **v, size_t *cap, size_t need, size_t elem);

/* Now, in nanoseconds: CLOCK_MONOTONIC (pcw's system time base) and
 * CLOCK_REALTIME. */
uint64_t pcw__q_mono_ns(void);
uint64_t pcw__q_real_ns(void);

#endif /* PCW_QUERY_UTIL_H */
