/* SPDX-License-Identifier: MIT */
/*
 * tests/query_provider.h - driving tests/helpers/query_provider from a
 * Criterion test (test_query.c, test_pcwstat.c). Include after
 * testutil.h and criterion.h.
 */
#ifndef PCW_TESTS_QUERY_PROVIDER_H
#define PCW_TESTS_QUERY_PROVIDER_H

/* Counter indexes of the helper's counterset (its file comment). */
enum { QP_COUNT, QP_LEVEL, QP_PEAK, QP_LOW, QP_HIT, QP_HIT_BASE, QP_RATE, QP_PLAIN };

/* Start a provider of counterset `set` with instance type `type` (and a
 * control-callback log when `log` is not NULL); returns once it is ready. */
static inline void qp_start(tu_child *c, const char *set, int type, const char *log)
{
    char t[16];
    snprintf(t, sizeof t, "%d", type);
    const char *args[8] = {"--set", set, "--type", t, NULL, NULL, NULL};
    if (log)
        args[4] = "--control", args[5] = log;
    cr_assert_eq(tu_spawn(c, "query_provider", args), 0);
    char line[256];
    cr_assert(tu_readline(c, line, sizeof line, 10000) > 0, "provider did not start");
    cr_assert(strncmp(line, "ready", 5) == 0, "provider: %s", line);
}

/* Send one command; assert that the provider answered "ok". */
__attribute__((format(printf, 2, 3))) static inline void qp_cmd(tu_child *c, const char *fmt, ...)
{
    char buf[512], reply[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cr_assert(tu_command(c, reply, sizeof reply, buf) > 0, "no reply to %s", buf);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", buf, reply);
}

/* Ask it to close the provider and exit; reap it. */
static inline void qp_stop(tu_child *c)
{
    tu_send(c, "quit");
    tu_finish(c, 10000);
}

#endif /* PCW_TESTS_QUERY_PROVIDER_H */
