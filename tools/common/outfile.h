/* SPDX-License-Identifier: MIT */
/*
 * tools/common/outfile.h - opening a tool's output file (-o, --log) safely.
 *
 * The file is created new (O_EXCL), or, when it exists and the user says
 * so (-y, or "y" at the prompt on a terminal), opened without following a
 * symbolic link (O_NOFOLLOW) and written only if it is a regular file with
 * no other hard link (truncated then), a character device or a FIFO with a
 * reader (O_NONBLOCK: a FIFO without one fails at once instead of blocking).
 * In a directory another user can write, a name checked and then opened
 * could be swapped for a link to a file of the victim's: O_EXCL and
 * O_NOFOLLOW decide at the open itself, and fstat checks what was opened.
 *
 * Concurrency: call from the tool's main thread; it may read the prompt's
 * answer from stdin.
 */
#ifndef PCW_TOOLS_OUTFILE_H
#define PCW_TOOLS_OUTFILE_H

/* Open `path` for writing by the rule above: a file descriptor (blocking,
 * close-on-exec), or -1 after a message "TOOL: PATH: why" on stderr. */
int outfile_open(const char *tool, const char *path, int yes);

#endif /* PCW_TOOLS_OUTFILE_H */
