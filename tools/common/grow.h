/* SPDX-License-Identifier: MIT */
/*
 * tools/common/grow.h - arrays that grow by doubling, for every tool.
 *
 * Concurrency: none of its own; the caller owns the array.
 */
#ifndef PCW_TOOLS_GROW_H
#define PCW_TOOLS_GROW_H

#include <stddef.h>

/* Make room for `need` elements of `elem` bytes in the array whose pointer
 * `v` points to (capacity *cap), doubling from 16: amortised O(1) an
 * element (one more each time copied n^2/2 of them). 0, or -1 when out of
 * memory or the size overflows (the array is then as it was). */
int grow(void *v, size_t *cap, size_t need, size_t elem);

#endif /* PCW_TOOLS_GROW_H */
