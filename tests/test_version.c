/* SPDX-License-Identifier: MIT */
/*
 * tests/test_version.c - one version for the whole project, written once
 * in lib/pcw/version.h: the macros derive from its numbers, every tool's
 * --version prints it ("<tool> (pcw) X.Y.Z"), and the pkg-config templates
 * take it from the build rather than carrying a number of their own.
 * (scripts/install-test.sh checks the installed .pc files and header.)
 *
 * Run from the repository root, as make check does.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/version.h"
#include "testutil.h"

TestSuite(version, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 30);

/* "X.Y.Z" from the text of lib/pcw/version.h, as the Makefile reads it. */
static void version_from_header(char *out, size_t cap, unsigned v[3])
{
    size_t len;
    char *text = (char *)tu_read_file("lib/pcw/version.h", 1 << 16, &len);
    cr_assert_not_null(text, "run from the repository root");
    text = realloc(text, len + 1);
    cr_assert_not_null(text);
    text[len] = 0;
    static const char *const names[3] = {"MAJOR", "MINOR", "PATCH"};
    for (int i = 0; i < 3; i++) {
        char key[64];
        snprintf(key, sizeof key, "\n#define PCW_VERSION_%s ", names[i]);
        const char *p = strstr(text, key);
        cr_assert_not_null(p, "lib/pcw/version.h has no PCW_VERSION_%s", names[i]);
        cr_assert_eq(sscanf(p + strlen(key), "%u", &v[i]), 1);
    }
    free(text);
    snprintf(out, cap, "%u.%u.%u", v[0], v[1], v[2]);
}

Test(version, macros_derive_from_the_header)
{
    char want[64];
    unsigned v[3];
    version_from_header(want, sizeof want, v);
    cr_assert_str_eq(PCW_VERSION_STRING, want);
    cr_assert_eq(PCW_VERSION_NUMBER, PCW_VERSION_ENCODE(v[0], v[1], v[2]));
    cr_assert_lt(PCW_VERSION_ENCODE(0, 2, 0), PCW_VERSION_ENCODE(0, 10, 0));
    cr_assert_lt(PCW_VERSION_ENCODE(0, 255, 255), PCW_VERSION_ENCODE(1, 0, 0));
}

/* The first line `tool --version` prints. */
static void tool_version(const char *tool, char *line, size_t cap)
{
    const char *build = getenv("PCW_BUILD");
    char exe[PATH_MAX], out[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/%s", build && *build ? build : PCW_BUILD_DIR, tool);
    snprintf(out, sizeof out, "%s/%s.version", tu_root, tool);
    pid_t pid = tu_fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        execl(exe, exe, "--version", (char *)NULL);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s --version: status %d", exe, st);
    size_t len;
    char *text = (char *)tu_read_file(out, 1 << 16, &len);
    cr_assert_not_null(text);
    size_t n = 0;
    while (n < len && text[n] != '\n')
        n++;
    cr_assert_lt(n, cap);
    memcpy(line, text, n);
    line[n] = 0;
    free(text);
}

Test(version, every_tool_prints_it)
{
    char v[64], want[128], got[256];
    unsigned nums[3];
    version_from_header(v, sizeof v, nums);
    static const char *const tools[] = {"pcwdump", "pcwgen", "pcwstat"};
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
        snprintf(want, sizeof want, "%s (pcw) %s", tools[i], v);
        tool_version(tools[i], got, sizeof got);
        cr_assert_str_eq(got, want);
    }
}

/* The templates hold a placeholder the install fills from version.h; a
 * literal number there could drift. */
Test(version, pkg_config_templates_take_it_from_the_build)
{
    static const char *const files[] = {"lib/pcw.pc.in", "lib/pcw-provider.pc.in"};
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        char *text = (char *)tu_read_file(files[i], 1 << 16, &len);
        cr_assert_not_null(text, "%s", files[i]);
        text = realloc(text, len + 1);
        cr_assert_not_null(text);
        text[len] = 0;
        int versions = 0;
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
            if (strncmp(line, "Version:", 8) == 0) {
                versions++;
                cr_assert_str_eq(line, "Version: @PCW_VERSION@", "%s", files[i]);
            }
        cr_assert_eq(versions, 1, "%s", files[i]);
        free(text);
    }
}
