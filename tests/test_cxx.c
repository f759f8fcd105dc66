/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cxx.c - pcw from C++ (issue 12): a C++ provider in two
 * translation units (tests/cxx/provider_main.cc, which defines
 * PCW_PROVIDER_IMPLEMENTATION, and web_counters.cc, a static PCW_COUNTER
 * table), built as C++17 and C++20, publishes; a C++ consumer
 * (tests/cxx/consumer.cc) reads what it published; the provider then tears
 * down in the documented order and removes its segment. The Makefile builds
 * the three programs as helpers with $(CXX) -Wall -Wextra -Werror
 * -Wmissing-field-initializers; `make check-cxx` compiles every header
 * with g++ and clang++ in both standards.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "testutil.h"

TestSuite(cxx, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* Run the provider built as `provider`, read it with the C++ consumer. */
static void provider_and_consumer(const char *provider)
{
    tu_child p, c;
    char line[PATH_MAX + 16], path[PATH_MAX + 16];
    cr_assert_eq(tu_spawn(&p, provider, NULL), 0);
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0, "%s did not start", provider);
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s: %s", provider, line);
    snprintf(path, sizeof path, "%s", line + 6);
    cr_assert_eq(access(path, F_OK), 0, "segment %s", path);

    cr_assert_eq(tu_spawn(&c, "cxx_consumer", NULL), 0);
    /* PCW_COUNTER: no aggregate, standard detail (100), no description;
     * PCW_COUNTER_EX: what it says. */
    const char *want[] = {"Requests = 42 base=-1 agg=0 detail=100 \"\"",
                          "Active = 1 base=-1 agg=0 detail=100 \"\"",
                          "Hit Ratio = 21 base=4 agg=0 detail=100 \"\"", /* the counter after it */
                          "Hit Ratio Base = 42 base=-1 agg=0 detail=100 \"\"",
                          "Errors = 0 base=-1 agg=1 detail=200 \"Failed requests\"",
                          /* 21 hits of 1 us, 21 misses of 1 ms */
                          "Latency = 42 in 336 buckets sum=21021000 agg=1 detail=100 \"\""};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cr_assert(tu_readline(&c, line, sizeof line, 10000) >= 0, "consumer: no line %zu", i);
        cr_assert_str_eq(line, want[i]);
    }
    int st = tu_finish(&c, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "consumer status %d", st);

    /* Teardown in order; the provider exits 0 only if every step did. */
    cr_assert_eq(tu_send(&p, "quit"), 0);
    st = tu_finish(&p, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s status %d", provider, st);
    cr_assert_neq(access(path, F_OK), 0, "the segment is removed at close");
}

Test(cxx, cxx17_provider_cxx_consumer)
{
    provider_and_consumer("cxx_provider17");
}

Test(cxx, cxx20_provider_designated_initialisers)
{
    provider_and_consumer("cxx_provider20");
}
