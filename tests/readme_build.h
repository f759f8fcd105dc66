/* SPDX-License-Identifier: MIT */
/*
 * tests/readme_build.h - the README's provider, built from the README as a
 * reader would build it: its web.h, web.c and main.c blocks extracted and
 * compiled with cc -std=c11 -Wall -Wextra -Werror against lib/
 * (test_readme.c, test_readme_latency.c, test_exporter_prometheus.c).
 * Include after testutil.h and criterion.h.
 */
#ifndef PCW_TESTS_README_BUILD_H
#define PCW_TESTS_README_BUILD_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PCW_SOURCE_DIR
#define PCW_SOURCE_DIR "."
#endif

/* Write each README code block preceded by "<!-- file: NAME -->" to
 * dir/NAME, as scripts/install-test.sh does; returns how many. */
static inline int readme_extract(const char *dir)
{
    FILE *in = fopen(PCW_SOURCE_DIR "/README.md", "r");
    cr_assert_not_null(in, "README.md: %s", strerror(errno));
    char line[1024], name[256] = "", path[600];
    FILE *out = NULL;
    int files = 0;
    while (fgets(line, sizeof line, in)) {
        if (!out && sscanf(line, "<!-- file: %255s -->", name) == 1)
            continue;
        if (!out && name[0] && strcmp(line, "```c\n") == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, name);
            out = fopen(path, "w");
            cr_assert_not_null(out, "%s: %s", path, strerror(errno));
            files++;
        } else if (out && strcmp(line, "```\n") == 0) {
            fclose(out);
            out = NULL;
            name[0] = 0;
        } else if (out) {
            fputs(line, out);
        }
    }
    fclose(in);
    cr_assert_null(out, "README.md: a code block does not end");
    return files;
}

/* Extract the README's blocks into a new temporary folder (dir, at least
 * 32 bytes) and build its provider there: dir/web. */
static inline void readme_build_web(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/pcw-readme-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_geq(readme_extract(dir), 3);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && cc -std=c11 -Wall -Wextra -Werror " PCW_TEST_INCLUDES " main.c web.c -o web "
             "-lurcu-bp -lurcu-cds -lurcu-common -lpthread",
             dir);
    cr_assert_eq(system(cmd), 0, "the README's provider does not build: %s", cmd);
}

/* Start dir/web (built by readme_build_web) as a child process, with the
 * argument `seconds` (its run time; NULL: the README's default, 3 s). */
static inline pid_t readme_start_web(const char *dir, const char *seconds)
{
    char exe[600];
    snprintf(exe, sizeof exe, "%s/web", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl(exe, "web", seconds, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Remove what readme_build_web made. */
static inline void readme_remove(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

#endif /* PCW_TESTS_README_BUILD_H */
