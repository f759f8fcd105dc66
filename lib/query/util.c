/* SPDX-License-Identifier: MIT */
/*
 * lib/query/util.c - the query layer's utilities (util.h).
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <time.h>

#include "util.h"

int pcw__q_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return -1;
        n *= 2;
    }
    void *p = realloc(*v, n * elem);
    if (!p)
        return -1;
    *v = p;
    *cap = n;
    return 0;
}

static uint64_t now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t pcw__q_mono_ns(void)
{
    return now_ns(CLOCK_MONOTONIC);
}

uint64_t pcw__q_real_ns(void)
{
    return now_ns(CLOCK_REALTIME);
}
