/* SPDX-License-Identifier: MIT */
/* A private member, an extern private object, a private function: fails. */
#ifndef LEAKY_H
#define LEAKY_H
struct pcw__cache;
typedef struct pcw_thing {
    int n;
    struct pcw__cache *cache;
} pcw_thing;
extern int pcw__pages[4];
int pcwq_grow(void *v);
#ifdef PCW_PROVIDER_IMPLEMENTATION
int pcw__only_in_the_implementation(void);
#endif
#endif
