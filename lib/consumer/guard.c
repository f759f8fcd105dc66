/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/guard.c - turn a SIGBUS from a shrunken segment into an
 * error.
 *
 * A provider (or anyone who can write the file) may truncate a segment while
 * a consumer has it mapped; touching a page past the new end raises SIGBUS.
 * There is no way to stop the truncation, so reads run under a guard: a
 * thread-local record of the mapping being read and a sigjmp_buf. The
 * handler jumps back only for a fault inside that range on that thread;
 * every other SIGBUS goes to whatever handler was there before (or the
 * default action, which kills the process as it would have).
 *
 * SA_NODEFER: we leave the handler by siglongjmp without restoring the
 * signal mask (sigsetjmp(..., 0) is cheap), so SIGBUS must not be blocked
 * while the handler runs, or the next one would kill the process.
 */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>

#include "internal.h"

struct guard {
    sigjmp_buf jb;
    const unsigned char *lo;
    uint64_t len;
    struct guard *prev;
};

static _Thread_local struct guard *volatile current;
static struct sigaction previous;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    struct guard *g = current;
    const unsigned char *a = (const unsigned char *)si->si_addr;
    for (; g; g = g->prev)
        if (a >= g->lo && (uint64_t)(a - g->lo) < g->len)
            siglongjmp(g->jb, 1);
    /* Not ours: behave as if we had never been installed. */
    if (previous.sa_flags & SA_SIGINFO) {
        if (previous.sa_sigaction) {
            previous.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    /* Default action: restore it; returning re-executes the faulting access,
     * which now terminates the process with SIGBUS as it should. */
    signal(SIGBUS, SIG_DFL);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &previous);
}

void pcw__guard_init(void)
{
    pthread_once(&once, install);
}

int pcw__guarded(const void *lo, uint64_t len, int (*fn)(void *), void *arg)
{
    struct guard g;
    g.lo = (const unsigned char *)lo;
    g.len = len;
    g.prev = current;
    if (sigsetjmp(g.jb, 0)) {
        /* Came back from the handler: fn was cut short. */
        current = g.prev;
        return PCW_E_TRUNCATED;
    }
    current = &g;
    int rc = fn(arg);
    current = g.prev;
    return rc;
}
