/*
 * fake_add.h - a recording stand-in for pcw_add_instance() (fake_add.c).
 *
 * <pcw/callback.h> is another engineer's work in progress; until it has
 * pcw_add_instance, the provider tests link this weak fake so that the
 * generated Add functions can be checked. Deliberately free of pcw
 * headers: whatever callback.h declares, this file cannot clash with it.
 */
#ifndef PCWGEN_TEST_FAKE_ADD_H
#define PCWGEN_TEST_FAKE_ADD_H

#include <stdint.h>

typedef struct pcw_fake_add_call {
    int calls;
    const void *buffer;
    const char *name;
    uint32_t id, count;
    const void *data0;
    uint32_t size0;
    const void *data1;
    uint32_t size1;
} pcw_fake_add_call;

extern pcw_fake_add_call pcw_fake_add_last;

typedef void (*pcw_fake_fn)(void);
/* The fake's address: a test compares it with &pcw_add_instance as its
 * translation unit sees it, and runs only when they are the same. */
pcw_fake_fn pcw_fake_add_fn(void);

#endif
