/* SPDX-License-Identifier: MIT */
/*
 * tools/common/grow.c - arrays that grow by doubling (grow.h).
 */
#define _GNU_SOURCE 1
#include <stdlib.h>

#include "grow.h"

/* One element more each time made pcwstat's reading of 65,536 paths or
 * set-up of 150,000 columns copy n^2/2 pointers (realloc moves the block,
 * always under ASan). */
int grow(void *v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *p = reallocarray(*(void **)v, n, elem);
    if (!p)
        return -1;
    *(void **)v = p;
    *cap = n;
    return 0;
}
