/* SPDX-License-Identifier: MIT */
/* tools/pcw-exporter/clock.c - see clock.h. */
#define _GNU_SOURCE 1
#include <time.h>

#include "clock.h"

uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
