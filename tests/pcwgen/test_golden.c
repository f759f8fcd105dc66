/* SPDX-License-Identifier: MIT */
/*
 * test_golden.c - pcwgen's output compared byte for byte with
 * the golden headers listed in tests/pcwgen/golden/golden.list. After an intended
 * change to the generator, run `make pcwgen-golden` and review the diff.
 */
#define _GNU_SOURCE 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "pcwgen_test.h"

#ifndef PCWGEN_SHARED
#define PCWGEN_SHARED "../shared/manifests"
#endif

/* Report the first differing line, to make a failure readable. */
static void first_difference(const char *a, const char *b, char *msg, size_t cap)
{
    unsigned line = 1;
    size_t i = 0;
    while (a[i] && a[i] == b[i]) {
        if (a[i] == '\n')
            line++;
        i++;
    }
    size_t s = i;
    while (s > 0 && a[s - 1] != '\n')
        s--;
    snprintf(msg, cap, "line %u:\n  got:      %.*s\n  expected: %.*s", line,
             (int)strcspn(a + s, "\n"), a + s, (int)strcspn(b + s, "\n"), b + s);
}

static void check_golden(const char *man, const char *prefix, const char *golden)
{
    char out[] = "/tmp/pcwgen-golden-XXXXXX";
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    close(fd);
    const char *with[] = {"-prefix", prefix, "-o", out, man, NULL};
    const char *without[] = {"-o", out, man, NULL};
    pcwgen_run r;
    pcwgen_exec(&r, strcmp(prefix, "-") ? with : without);
    cr_assert_eq(r.status, 0, "%s: %s", man, r.err);
    cr_assert_eq(r.err[0], 0, "%s: unexpected diagnostics: %s", man, r.err);
    pcwgen_run_free(&r);
    size_t n1, n2;
    char *got = pcwgen_slurp(out, &n1);
    char *want = pcwgen_slurp(golden, &n2);
    unlink(out);
    cr_assert_not_null(got);
    cr_assert_not_null(want, "missing %s (make pcwgen-golden)", golden);
    if (n1 != n2 || memcmp(got, want, n1) != 0) {
        char msg[1024];
        first_difference(got, want, msg, sizeof msg);
        cr_assert_fail("%s differs from %s (regenerate with make pcwgen-golden if intended)\n%s",
                       man, golden, msg);
    }
    free(got);
    free(want);
}

Test(golden, all_listed_files)
{
    size_t n;
    char *list = pcwgen_slurp("tests/pcwgen/golden/golden.list", &n);
    cr_assert_not_null(list);
    int checked = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char man[256], prefix[64], golden[256];
        cr_assert_eq(sscanf(line, "%255s %63s %255s", man, prefix, golden), 3, "%s", line);
        check_golden(man, prefix, golden);
        checked++;
    }
    cr_assert_geq(checked, 5);
    free(list);
}

Test(golden, stdout_matches_file_output)
{
    const char *args[] = {"-prefix", "Kcs", "examples/manifests/kcs.man", NULL};
    pcwgen_run r;
    pcwgen_exec(&r, args);
    cr_assert_eq(r.status, 0);
    size_t n;
    char *want = pcwgen_slurp("tests/pcwgen/golden/kcs.h", &n);
    cr_assert_not_null(want);
    cr_assert_eq(r.out_len, n);
    cr_assert_eq(memcmp(r.out, want, n), 0);
    free(want);
    pcwgen_run_free(&r);
}

/* The examples are the shared manifests, unmodified (when ../shared is
 * there to compare with). */
Test(golden, example_copies_are_unmodified)
{
    static const char *const names[] = {"kcs.man", "ucs.man"};
    for (size_t i = 0; i < 2; i++) {
        char shared[512], ours[512];
        snprintf(shared, sizeof shared, "%s/%s", PCWGEN_SHARED, names[i]);
        snprintf(ours, sizeof ours, "examples/manifests/%s", names[i]);
        if (strcmp(PCWGEN_SHARED, "examples/manifests") == 0 || access(shared, R_OK) != 0)
            cr_skip_test("../shared/manifests is not available");
        size_t n1, n2;
        char *a = pcwgen_slurp(shared, &n1), *b = pcwgen_slurp(ours, &n2);
        cr_assert_not_null(a);
        cr_assert_not_null(b);
        cr_assert(n1 == n2 && memcmp(a, b, n1) == 0, "%s differs from %s", ours, shared);
        free(a);
        free(b);
    }
}

/* Deterministic: two runs, same bytes (no dates, no absolute paths). */
Test(golden, output_is_deterministic)
{
    const char *args[] = {"-prefix", "Net", "tests/pcwgen/manifests/netstack.man", NULL};
    pcwgen_run a, b;
    pcwgen_exec(&a, args);
    pcwgen_exec(&b, args);
    cr_assert_eq(a.status, 0);
    cr_assert_eq(a.out_len, b.out_len);
    cr_assert_eq(memcmp(a.out, b.out, a.out_len), 0);
    cr_assert_null(strstr(a.out, "/work/"));
    pcwgen_run_free(&a);
    pcwgen_run_free(&b);
}
