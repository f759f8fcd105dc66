/* SPDX-License-Identifier: MIT */
/*
 * tests/test_readme_latency.c - the README's provider (its web.h, web.c and
 * main.c blocks, built as test_readme.c builds them) times 1,000 requests a
 * second into "Avg Latency", a PERF_AVERAGE_TIMER and its base (issue 27
 * section 1): the query library, pcwstat -si 1 and pcwtop in a real
 * terminal (tmux) read back its latency. test_exporter_prometheus.c reads
 * the same program through Prometheus.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <poll.h>
#include <time.h>

#include "pcw/pdh.h"
#include "readme_build.h"
#include "tmux_util.h"

/* The README's requests take 250 us (a busy wait) at 1,000 a second: an
 * average read back below that is wrong (a wrapped numerator read 0.28 ms
 * for 2 ms). Above it is a loaded machine: a request preempted during its
 * busy wait lasts a time slice longer, so the average grows with the load
 * (it read 0.5 ms and more at a load average of 12). The upper bound only
 * catches a wrong unit or frequency (x1000 and beyond), which no load can
 * give: 25 ms is a hundred times the truth. */
#define LAT_LO 250e-6
#define LAT_HI 25e-3

static void latency_setup(void)
{
    tu_root_setup();
    snprintf(sock, sizeof sock, "readme-test-%d", (int)getpid());
}

/* The seconds in the first line of the screen matching `pattern`, whose
 * groups 1 and 2 are the number and its SI prefix (u or m); -1 if none. */
static double screen_seconds(const char *pattern)
{
    regex_t re;
    regmatch_t m[3];
    cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE), 0, "%s", pattern);
    const char *text = screen();
    double s = -1;
    if (regexec(&re, text, 3, m, 0) == 0)
        s = strtod(text + m[1].rm_so, NULL) * (text[m[2].rm_so] == 'u' ? 1e-6 : 1e-3);
    regfree(&re);
    return s;
}

TestSuite(readme_latency, .init = latency_setup, .fini = tmux_teardown, .timeout = 120);

/* The same program read back by the query library, pcwstat (every sample
 * of -si 1 valid and right) and pcwtop in a real terminal. */
Test(readme_latency, reads_back_in_the_query_pcwstat_and_pcwtop)
{
    char dir[64];
    readme_build_web(dir, sizeof dir);
    pid_t pid = readme_start_web(dir, "20");
    pcw_pdh *q;
    cr_assert_eq(pcw_pdh_open(&q, NULL), PCW_OK);
    pcw_pdh_counter *h = NULL;
    pcw_path_error err;
    pcw_pdh_value v = {0};
    long long deadline = tu_now_ms() + 10000;
    while (tu_now_ms() < deadline) {
        if (!h)
            pcw_pdh_add_counter(q, "\\Web Server(example.org)\\Avg Latency", &h, &err);
        if (h) {
            cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK);
            if (pcw_pdh_value_count(h) == 1 && pcw_pdh_get_value(h, 0, 0, &v) == PCW_OK &&
                v.status == PCW_CSTATUS_VALID)
                break;
        }
        nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL); /* pace the poll */
    }
    cr_expect_eq(v.status, PCW_CSTATUS_VALID, "query: %s", pcw_cstatus_str(v.status));
    cr_expect(v.value >= LAT_LO && v.value <= LAT_HI, "query: Avg Latency %g s", v.value);
    pcw_pdh_close(q);

    /* pcwstat -si 1: three samples, each valid and right. */
    char exe[PATH_MAX], out[1 << 14], errs[4096];
    snprintf(exe, sizeof exe, "%s/pcwstat", build_dir());
    int rc = run((const char *const[]){exe, "\\Web Server(example.org)\\Avg Latency", "-si", "1",
                                       "-sc", "3", "-f", "JSON", NULL},
                 out, sizeof out, errs, sizeof errs);
    cr_expect_eq(rc, 0, "pcwstat: %s", errs);
    int samples = 0;
    for (const char *at = out; (at = strstr(at, "\"value\":")); at++, samples++) {
        double x = strtod(at + 8, NULL);
        cr_expect(x >= LAT_LO && x <= LAT_HI, "pcwstat: Avg Latency %g s in\n%s", x, out);
        cr_expect(strncmp(strstr(at, "\"status\":"), "\"status\":\"valid\"", 16) == 0,
                  "pcwstat: %s", out);
    }
    cr_expect_eq(samples, 3, "pcwstat:\n%s", out);

    /* pcwtop in a terminal: the instance's Avg Latency column, in us. */
    session(100, 12);
    cr_assert(screen_wait("PCWTEST$", 0, 20000), "no shell prompt:\n%s", screen());
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "%s/pcwtop -d 1 -c 'Web Server'", build_dir());
    type(cmd);
    WAIT_RE("Avg Latency");
    const char *row = "example\\.org +[0-9]+ +[0-9.]+/s +[0-9.]+k/s +([0-9.]+)(u|m)s";
    WAIT_RE(row);
    double shown = screen_seconds(row);
    cr_expect(shown >= LAT_LO && shown <= LAT_HI, "pcwtop: Avg Latency %g s\n%s", shown, screen());
    keys("q");
    WAIT_FOR("PCWTEST$");
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    readme_remove(dir);
}
