/* SPDX-License-Identifier: MIT */
/*
 * tests/test_tools_common.c - what every tool shares (tools/common): the
 * "did you mean" of a mistyped name (suggest.h). Which names are near, in
 * which order, at most three, escaped when printed (they come from other
 * processes), and bounded work for any length. End to end, pcwstat's and
 * pcwdump's messages are in test_pcwstat.c and test_pcwdump.c.
 * And the command line's one duration grammar and one usage error (cli.h),
 * which each tool's suite also meets through its own options.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tools/common/cli.h"
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
    /* Case folding beyond ASCII, as names compare (pcw__fold). */
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

/* ---- cli.h: durations ------------------------------------------------------ */

static void dur_is(const char *s, double unit, double want)
{
    double got = -1;
    cr_assert_eq(cli_duration(s, unit, &got), 0, "\"%s\" refused", s);
    cr_assert_float_eq(got, want, 1e-9, "\"%s\": %g, want %g", s, got, want);
}

Test(cli, durations_of_every_form)
{
    /* A bare number, in the option's unit. */
    dur_is("5", 1, 5);
    dur_is("1.5", 1, 1.5);
    dur_is(".25", 1, 0.25);
    dur_is("0", 1, 0);
    dur_is("500", 0.001, 0.5); /* pcwdump --timeout: milliseconds */
    /* Units, largest first (Prometheus, Go). */
    dur_is("500ms", 1, 0.5);
    dur_is("500ms", 0.001, 0.5); /* a unit overrides the bare unit */
    dur_is("2s", 1, 2);
    dur_is("1.5s", 1, 1.5);
    dur_is("1m30s", 1, 90);
    dur_is("1h30m", 1, 5400);
    dur_is("2d", 1, 172800);
    dur_is("1m0s500ms", 1, 60.5);
    /* typeperf's [[hh:]mm:]ss. */
    dur_is("01:30", 1, 90);
    dur_is("1:00:00", 1, 3600);
    dur_is("0:0.5", 1, 0.5);
    dur_is("01:30", 0.001, 90); /* not in the bare unit */
}

Test(cli, malformed_durations_refused)
{
    static const char *const bad[] = {
        "",        "-1",    "+1",   " 1",    "1 ",   "1e3",     "inf",
        "nan",     "0x10",  "1,5",  ".",     "s",    "ms",      "1x",
        "1m30",    "30s1m", "1s1s", "1ms1s", "1:75", "1:60:00", "1.5:00",
        "1:2:3:4", ":30",   "1:",   "1::2",  "1:-2", "1m:30",   "1234567890123456",
        "3651d",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v = 42;
        cr_expect_eq(cli_duration(bad[i], 1, &v), -1, "\"%s\" taken as %g", bad[i], v);
        cr_expect_eq(v, 42, "\"%s\": the result written on failure", bad[i]);
    }
    cr_expect_eq(cli_duration(NULL, 1, &(double){0}), -1);
}

/* ---- cli.h: the usage error ------------------------------------------------ */

Test(cli, usage_error_names_tool_and_help)
{
    char path[] = "/tmp/pcw-cli-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    int rc = cli_usage_error("pcwtool", "bad delay \"%s\"", "x");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[256] = {0};
    cr_assert_gt(pread(fd, buf, sizeof buf - 1, 0), 0);
    close(fd);
    cr_expect_eq(rc, CLI_EXIT_USAGE);
    cr_expect_eq(CLI_EXIT_USAGE, 2);
    cr_expect_str_eq(buf, "pcwtool: bad delay \"x\"\nTry 'pcwtool --help'.\n");
}
