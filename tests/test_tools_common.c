/* SPDX-License-Identifier: MIT */
/*
 * tests/test_tools_common.c - what every tool shares (tools/common): the
 * "did you mean" of a mistyped name (suggest.h). Which names are near, in
 * which order, at most three, escaped when printed (they come from other
 * processes), and bounded work for any length. End to end, pcwstat's and
 * pcwdump's messages are in test_pcwstat.c and test_pcwdump.c.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/common/suggest.h"

/* What suggest_print writes for typo among names[] ("" for nothing). */
static char *suggested(const char *typo, const char *const *names, size_t n)
{
    suggest s;
    suggest_init(&s, typo);
    for (size_t i = 0; i < n; i++)
        suggest_add(&s, names[i]);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    size_t k = suggest_print(f, &s);
    fclose(f);
    cr_assert_eq(k, s.n);
    return buf;
}

#define SUGGESTS(typo, want, ...)                                                                  \
    do {                                                                                           \
        const char *names_[] = {__VA_ARGS__};                                                      \
        char *got_ = suggested(typo, names_, sizeof names_ / sizeof names_[0]);                    \
        cr_assert_str_eq(got_, want, "for \"%s\"", typo);                                          \
        free(got_);                                                                                \
    } while (0)

Test(suggest, near_names_by_edits_case_and_prefix)
{
    /* A missing letter, a swap of neighbours, another case. */
    SUGGESTS("Geometric Wave", "did you mean \"Geometric Waves\"?", "Web Server",
             "Geometric Waves");
    SUGGESTS("Triangel", "did you mean \"Triangle\"?", "Square Wave", "Triangle");
    SUGGESTS("bytes snt", "did you mean \"Bytes Sent\"?", "Bytes Sent/sec", "Bytes Sent");
    /* The typed name as the start of longer ones, after closer names. */
    SUGGESTS("Bytes", "did you mean \"Bytez\", \"Bytes Sent\" or \"Bytes Received\"?", "Bytes Sent",
             "Requests", "Bytes Received", "Bytez");
    /* Case folding beyond ASCII, as names compare (pcw_fold). */
    SUGGESTS("ΣΦΑΛΜΑΤΑ", "did you mean \"σφάλματα\"?", "σφάλματα");
}

Test(suggest, nothing_when_far_or_equal)
{
    SUGGESTS("Requests", "", "Geometric Waves", "Triangle");
    SUGGESTS("Triangle", "", "triangle"); /* equal is not a suggestion */
    SUGGESTS("", "", "Triangle");
    SUGGESTS("ab", "", "xy");
}

Test(suggest, at_most_three_best_first_first_seen_among_equals)
{
    SUGGESTS("Level", "did you mean \"Levels\", \"Lever\" or \"Bevel\"?", "Levels", "Lever",
             "Bevel", "Revel", "Level Two");
    /* A name offered twice is kept once. */
    SUGGESTS("Levl", "did you mean \"Level\"?", "Level", "Level");
}

Test(suggest, hostile_names_are_escaped)
{
    /* A name one edit away that holds BEL and an OSC: shown, never raw. */
    char *got = suggested("Triangle", (const char *[]){"Tri\x07angle\x1b]0;x\x07"}, 1);
    cr_assert_str_eq(got, "");
    free(got);
    got = suggested("Triangle", (const char *[]){"Tri\x1bngle"}, 1);
    cr_assert_str_eq(got, "did you mean \"Tri\\x1bngle\"?");
    cr_assert_null(strchr(got, '\x1b'));
    free(got);
}

Test(suggest, long_names_bounded)
{
    /* Names longer than SUGGEST_MAX_CHARS compare by their prefixes: no
     * work or memory beyond that bound, and still a suggestion. */
    size_t n = 100000;
    char *a = malloc(n + 1), *b = malloc(n + 1);
    memset(a, 'x', n), memset(b, 'x', n);
    a[n] = b[n] = '\0';
    a[10] = 'y';
    char *got = suggested(a, (const char *[]){b}, 1);
    cr_assert(strncmp(got, "did you mean \"xxxx", 18) == 0, "%.40s", got);
    free(got), free(a), free(b);
}
