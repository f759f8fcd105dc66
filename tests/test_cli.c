/* SPDX-License-Identifier: MIT */
/*
 * tests/test_cli.c - the tools' one duration grammar and one usage error
 * (tools/common/cli.h, docs/cli.md), end to end: each tool's duration
 * options, run as the user runs them, take every form (a number, units,
 * [[hh:]mm:]ss) and refuse a malformed one the same way, and every tool's
 * usage error reads "TOOL: what is wrong" then "Try 'TOOL --help'.".
 *
 * A duration that is taken is followed by an unknown option: options are
 * read in order, so the tool then stops at that option (status 2, "unknown
 * option"), having taken the duration, without starting to sample, draw
 * or serve.
 */
#include "testutil.h"

#include <criterion/criterion.h>

static void setup(void)
{
    tu_root_setup();
}

static void teardown(void)
{
    tu_root_teardown();
}

TestSuite(cli, .init = setup, .fini = teardown, .timeout = 60);

/* Run tool with args; its exit status, and its stderr in *err (malloc'd). */
static int run(const char *tool, const char *const *args, char **err)
{
    char out[300], errf[300];
    snprintf(out, sizeof out, "%s/cli.out", tu_root);
    snprintf(errf, sizeof errf, "%s/cli.err", tu_root);
    int st = tu_run_tool(tool, args, out, errf, 20000);
    *err = tu_read_text(errf, 1 << 16);
    cr_assert_not_null(*err);
    cr_assert(st >= 0 && WIFEXITED(st), "%s did not exit: %d", tool, st);
    return WEXITSTATUS(st);
}

/* The one usage error: "TOOL: " what is wrong, then the pointer to --help. */
static void assert_usage_error(const char *tool, const char *err, const char *what)
{
    char head[64], tail[96];
    snprintf(head, sizeof head, "%s: ", tool);
    snprintf(tail, sizeof tail, "\nTry '%s --help'.\n", tool);
    size_t n = strlen(err), t = strlen(tail);
    cr_assert(strncmp(err, head, strlen(head)) == 0, "%s: does not start with \"%s\": %s", tool,
              head, err);
    cr_assert(n >= t && strcmp(err + n - t, tail) == 0, "%s: does not end with %s: %s", tool, tail,
              err);
    cr_assert(strstr(err, what), "%s: \"%s\" lacks \"%s\"", tool, err, what);
}

typedef struct {
    const char *tool;
    const char *args[6];
} cli_case;

/* Each tool's duration options, with one value of each form; the tool's
 * message for an unknown option --bogus. */
static const cli_case taken[] = {
    {"pcwstat", {"\\A(*)\\B", "-si", "500ms", "--bogus"}},
    {"pcwstat", {"\\A(*)\\B", "-si", "1m30s", "--bogus"}},
    {"pcwstat", {"\\A(*)\\B", "-si", "0.5", "--bogus"}},
    {"pcwstat", {"\\A(*)\\B", "-si", "01:30", "--bogus"}},
    {"pcwstat", {"\\A(*)\\B", "--flush", "2s", "--bogus"}},
    {"pcwtop", {"-d", "500ms", "--bogus"}},
    {"pcwtop", {"-d", "1.5", "--bogus"}},
    {"pcwtop", {"-d", "0:02", "--bogus"}},
    {"pcwtop", {"--timeout", "250ms", "--bogus"}},
    {"pcwdump", {"--watch", "500ms", "--bogus"}},
    {"pcwdump", {"--watch", "2", "--bogus"}},
    {"pcwdump", {"--watch", "01:00", "--bogus"}},
    {"pcwdump", {"--timeout", "2s", "--bogus"}},
    {"pcwdump", {"--timeout", "1500", "--bogus"}}, /* milliseconds, as always */
    {"pcw-exporter", {"--collector.timeout=1m", "--bogus"}},
    {"pcw-exporter", {"--collector.timeout=10", "--bogus"}},
    {"pcw-exporter", {"--web.request-timeout=01:30", "--bogus"}},
    {"pcw-exporter", {"--collector.timeout-offset=500ms", "--bogus"}},
};

Test(cli, every_duration_form_is_taken)
{
    for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) {
        char *err;
        int st = run(taken[i].tool, taken[i].args, &err);
        cr_expect_eq(st, 2, "%s %s %s: exit %d", taken[i].tool, taken[i].args[0], taken[i].args[1],
                     st);
        cr_expect(strstr(err, "--bogus"), "%s %s %s: refused before --bogus: %s", taken[i].tool,
                  taken[i].args[0], taken[i].args[1], err);
        free(err);
    }
}

/* A malformed duration: status 2, the option and the value named, the
 * forms the grammar takes shown. */
static const cli_case refused[] = {
    {"pcwstat", {"\\A(*)\\B", "-si", "1m30"}},
    {"pcwstat", {"\\A(*)\\B", "--flush", "30s1m"}},
    {"pcwtop", {"-d", "1m30"}},
    {"pcwtop", {"--timeout", "1e3"}},
    {"pcwdump", {"--watch", "1m30"}},
    {"pcwdump", {"--timeout", "-5"}},
    {"pcw-exporter", {"--collector.timeout=1m30"}},
    {"pcw-exporter", {"--web.request-timeout=soon"}},
};

Test(cli, malformed_durations_are_one_usage_error)
{
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const char *value = refused[i].args[0][0] == '\\' ? refused[i].args[2] : refused[i].args[1];
        const char *eq = strchr(refused[i].args[0], '=');
        if (eq)
            value = eq + 1;
        char *err;
        int st = run(refused[i].tool, refused[i].args, &err);
        cr_expect_eq(st, 2, "%s %s: exit %d", refused[i].tool, value, st);
        assert_usage_error(refused[i].tool, err, value);
        cr_expect(strstr(err, "500ms, 1m30s or 01:30"), "%s %s: the forms not shown: %s",
                  refused[i].tool, value, err);
        free(err);
    }
}

Test(cli, every_tool_has_the_one_usage_error)
{
    static const char *const tools[] = {"pcwstat", "pcwtop", "pcwdump", "pcw-exporter", "pcwrelog"};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        const char *args[] = {"--bogus", NULL};
        char *err;
        int st = run(tools[i], args, &err);
        cr_expect_eq(st, 2, "%s: exit %d", tools[i], st);
        assert_usage_error(tools[i], err, "--bogus");
        free(err);
    }
}
