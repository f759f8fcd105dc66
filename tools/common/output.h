/* SPDX-License-Identifier: MIT */
/*
 * tools/common/output.h - when the reader of a tool's output goes away.
 *
 * `pcwstat ... | head -2`: after head exits, the next write fails with
 * EPIPE. A filter such as cat or seq is killed by SIGPIPE there, and the
 * shell prints nothing. The pcw tools ignore SIGPIPE (a provider's control
 * socket that closes must not kill them), so each write error comes back
 * as EPIPE instead; this ends the tool the way a filter ends: by SIGPIPE,
 * silently (exit status 128 + 13 in a shell).
 *
 * Concurrency: call from the thread that writes the output; it does not
 * return when it ends the process.
 */
#ifndef PCW_TOOLS_OUTPUT_H
#define PCW_TOOLS_OUTPUT_H

/* If err is EPIPE, end the process by SIGPIPE (restoring its default
 * action first); otherwise return, and the caller reports err. */
void out_end_if_reader_gone(int err);

#endif /* PCW_TOOLS_OUTPUT_H */
