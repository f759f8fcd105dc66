/* SPDX-License-Identifier: MIT */
/*
 * tools/common/output.c - end as a filter when the output's reader is gone
 * (output.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

void out_end_if_reader_gone(int err)
{
    if (err != EPIPE)
        return;
    signal(SIGPIPE, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGPIPE);
    _exit(128 + SIGPIPE); /* not reached: SIGPIPE's default action ends the process */
}
