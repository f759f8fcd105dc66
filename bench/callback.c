/*
 * bench/callback.c - callback/collect/<instances> and
 * callback/collect_concurrent: a consumer's collection of a callback
 * counterset over the provider's control channel (issue 3).
 *
 * Not yet measured: the consumer side of the control channel has no public
 * API yet, so nothing is registered here (docs/performance.md says so).
 */
#include "benchutil.h"

void bench_callback_register(void) {}
