/* SPDX-License-Identifier: MIT */
/* Private names only in header-only code: passes. */
#ifndef CLEAN_H
#define CLEAN_H
typedef struct pcw__table {
    int v[4];
} pcw__table;
static const pcw__table pcw__tab = {{1, 2, 3, 4}};
static inline int pcw__pick(int i)
{
    return pcw__tab.v[i & 3];
}
static inline int pcw_pick(int i)
{
    return pcw__pick(i);
}
int pcw_public(void);
#endif
