/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/marks.c - the instances marked for the graph (m marks or
 * unmarks the selected one, U clears): a handful of instance keys, at most
 * GRAPH_MAX_SERIES, so a linear search. input.c changes them; the
 * snapshot (the graph's series) and the screen (the '*' mark) read them.
 */
#include <stdlib.h>

#include "pcwtop.h"

int marks_has(const top_marks *mk, uint64_t key)
{
    for (size_t i = 0; i < mk->n; i++)
        if (mk->keys[i] == key)
            return 1;
    return 0;
}

int marks_toggle(top_marks *mk, uint64_t key)
{
    for (size_t i = 0; i < mk->n; i++)
        if (mk->keys[i] == key) {
            mk->keys[i] = mk->keys[--mk->n];
            return 0;
        }
    if (mk->n >= GRAPH_MAX_SERIES)
        return -1;
    if (mk->n == mk->cap) {
        size_t cap = mk->cap ? 2 * mk->cap : 8;
        uint64_t *n = realloc(mk->keys, cap * sizeof *n);
        if (!n)
            return -1;
        mk->keys = n;
        mk->cap = cap;
    }
    mk->keys[mk->n++] = key;
    return 1;
}

void marks_clear(top_marks *mk)
{
    mk->n = 0;
}

void marks_free(top_marks *mk)
{
    free(mk->keys);
    mk->keys = NULL;
    mk->n = mk->cap = 0;
}
