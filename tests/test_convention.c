/* SPDX-License-Identifier: MIT */
/*
 * tests/test_convention.c - the provider header's one-implementation rule
 * (pcw/provider.h, "stb's convention"): a C program whose files include
 * <pcw/provider.h> links when exactly one of them defines
 * PCW_PROVIDER_IMPLEMENTATION, and fails to link, with an error that names
 * PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file,
 * when none does or when two do; and that none need define it when the
 * program links libpcw-provider.a instead. (scripts/install-test.sh checks the same
 * from the installed headers, in C++, and counts the server's copies with
 * nm.)
 *
 * The programs are compiled by the system's cc from this checkout's
 * headers, as a user's build would.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#define SYMBOL "PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file"

/* Two files of one program: a.c uses the API, main.c holds main(). */
static const char a_c[] = "#include <pcw/provider.h>\n"
                          "const char *provider_path(pcw_provider *p);\n"
                          "const char *provider_path(pcw_provider *p)\n"
                          "{\n"
                          "    return pcw_provider_path(p);\n"
                          "}\n";
static const char main_c[] = "#include <pcw/provider.h>\n"
                             "const char *provider_path(pcw_provider *p);\n"
                             "int main(void)\n"
                             "{\n"
                             "    pcw_provider *p;\n"
                             "    if (pcw_provider_open(&p, NULL) != PCW_OK)\n"
                             "        return 1;\n"
                             "    int ok = provider_path(p) != NULL;\n"
                             "    return pcw_provider_close(p) == PCW_OK && ok ? 0 : 1;\n"
                             "}\n";

/* The sanitizer this test runs under: a program linked with the build's
 * libpcw-provider.a needs its runtime too. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZE " -fsanitize=address,undefined"
#elif defined(__SANITIZE_THREAD__)
#define SANITIZE " -fsanitize=thread"
#else
#define SANITIZE ""
#endif

/* Write a.c and main.c (each with PCW_PROVIDER_IMPLEMENTATION defined first
 * if asked), compile and link them into `prog`, with libpcw-provider.a if
 * `linked`; the exit status of cc, and its output in *out (malloc'd). */
static int build_with(int impl_in_a, int impl_in_main, int linked, char **out, char *prog,
                      size_t prog_len)
{
    char dir[512]; /* under the test's root, removed with it */
    snprintf(dir, sizeof dir, "%s/build-XXXXXX", tu_root);
    cr_assert_not_null(mkdtemp(dir));
    const char *def = "#define PCW_PROVIDER_IMPLEMENTATION\n";
    char path[PATH_MAX], text[4096], log[PATH_MAX], cmd[4 * PATH_MAX];
    const struct {
        const char *name, *body;
        int impl;
    } files[] = {{"a.c", a_c, impl_in_a}, {"main.c", main_c, impl_in_main}};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        size_t dl = files[i].impl ? strlen(def) : 0, bl = strlen(files[i].body);
        cr_assert_lt(dl + bl, sizeof text);
        memcpy(text, def, dl);
        memcpy(text + dl, files[i].body, bl);
        cr_assert_eq(tu_write_file(path, text, dl + bl, 0600), 0);
    }
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(prog, prog_len, "%s/prog", dir);
    snprintf(cmd, sizeof cmd,
             "cd %s && cc -std=c11 -Wall -Wextra -Werror" SANITIZE " " PCW_TEST_INCLUDES
             " a.c main.c -o prog %s -lurcu-bp -lurcu-cds -lurcu-common -lpthread > log 2>&1",
             dir, linked ? PCW_BUILD_DIR "/libpcw-provider.a" : "");
    int st = system(cmd);
    cr_assert(WIFEXITED(st), "cc did not run: %s", cmd);
    size_t len;
    *out = (char *)tu_read_file(log, 1 << 20, &len);
    cr_assert_not_null(*out);
    return WEXITSTATUS(st);
}

static int build(int impl_in_a, int impl_in_main, char **out, char *prog, size_t prog_len)
{
    return build_with(impl_in_a, impl_in_main, 0, out, prog, prog_len);
}

TestSuite(convention, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* The harness itself: with the definition in one file the program links
 * and runs (opens and closes a provider). */
Test(convention, one_implementation_links_and_runs)
{
    char *out, prog[PATH_MAX];
    cr_assert_eq(build(0, 1, &out, prog, sizeof prog), 0, "cc failed:\n%s", out);
    free(out);
    cr_assert_eq(system(prog), 0, "%s did not open and close a provider", prog);
}

Test(convention, no_implementation_names_the_macro)
{
    char *out, prog[PATH_MAX];
    cr_assert_neq(build(0, 0, &out, prog, sizeof prog), 0,
                  "a program without the implementation linked");
    cr_assert(strstr(out, "undefined reference") && strstr(out, SYMBOL),
              "the link error does not name " SYMBOL ":\n%s", out);
    free(out);
}

Test(convention, two_implementations_name_the_macro)
{
    char *out, prog[PATH_MAX];
    cr_assert_neq(build(1, 1, &out, prog, sizeof prog), 0,
                  "a program with two implementations linked");
    cr_assert(strstr(out, "multiple definition") && strstr(out, SYMBOL),
              "the link error does not name " SYMBOL ":\n%s", out);
    free(out);
}

/* The same code as a library: a program whose files all include
 * <pcw/provider.h> without PCW_PROVIDER_IMPLEMENTATION links with
 * libpcw-provider.a, runs, and holds one control-channel server (the
 * library's). */
Test(convention, linked_library_links_and_runs)
{
    char *out, prog[PATH_MAX], cmd[PATH_MAX + 64];
    cr_assert_eq(build_with(0, 0, 1, &out, prog, sizeof prog), 0, "cc failed:\n%s", out);
    free(out);
    cr_assert_eq(system(prog), 0, "%s did not open and close a provider", prog);
    snprintf(cmd, sizeof cmd, "test \"$(nm %s | grep -c ' T pcw__listener_main$')\" = 1", prog);
    cr_assert_eq(system(cmd), 0, "%s does not hold exactly one pcw__listener_main", prog);
}
