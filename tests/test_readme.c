/* SPDX-License-Identifier: MIT */
/*
 * tests/test_readme.c - the README's provider, built from the README as a
 * reader would build it (its web.h, web.c and main.c blocks, cc -std=c11
 * -Wall -Wextra -Werror against lib/), run, and read back through the
 * query: a provider written from the README gets a _Total (issue 24 item
 * 8). scripts/install-test.sh builds the same blocks against an installed
 * tree; this one runs in make check.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <time.h>

#include "pcw/query.h"

#ifndef PCW_SOURCE_DIR
#define PCW_SOURCE_DIR "."
#endif

TestSuite(readme, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* Write each README code block preceded by "<!-- file: NAME -->" to
 * dir/NAME, as scripts/install-test.sh does; returns how many. */
static int extract(const char *dir)
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

Test(readme, provider_gets_a_total)
{
    char dir[] = "/tmp/pcw-readme-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_geq(extract(dir), 3);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && cc -std=c11 -Wall -Wextra -Werror -I%s/lib main.c web.c -o web "
             "-lurcu-bp -lurcu-cds -lurcu-common -lpthread",
             dir, PCW_SOURCE_DIR);
    cr_assert_eq(system(cmd), 0, "the README's provider does not build: %s", cmd);

    snprintf(cmd, sizeof cmd, "%s/web", dir);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        execl(cmd, "web", (char *)NULL);
        _exit(127);
    }
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = NULL;
    pcw_path_error err;
    pcw_pdh_value v = {0};
    long long deadline = tu_now_ms() + 10000;
    int rc = PCW_E_NOT_FOUND;
    /* The provider runs for 3 s: wait (bounded) until it has published,
     * then until its _Total has a rate. */
    while (tu_now_ms() < deadline) {
        if (!h)
            rc = pcw_pdh_add_counter(q, "\\Web Server(_Total)\\Requests", &h, &err);
        if (h) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            if (pcw_pdh_value_count(h) == 1 && pcw_pdh_get_value(h, 0, 0, &v) == PCW_OK &&
                v.status == PCW_CSTATUS_VALID)
                break;
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* pace the poll */
    }
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_not_null(h, "\\Web Server(_Total)\\Requests: %d %s", rc, err.message);
    cr_assert_eq(v.status, PCW_CSTATUS_VALID, "\\Web Server(_Total)\\Requests: %s",
                 pcw_cstatus_str(v.status));
    cr_assert_eq(v.kind, PCW_PDH_TOTAL);
    cr_assert_eq(v.sources, 1);
    pcw_pdh_close(q);
}
