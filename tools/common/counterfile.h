/* SPDX-License-Identifier: MIT */
/*
 * tools/common/counterfile.h - a counter file (-cf FILE, typeperf's and
 * relog's): counter paths, one a line; blank lines and lines starting with
 * '#' (after blanks) skipped; leading blanks and a trailing '\r' dropped.
 * pcwstat and pcwrelog read it with this one rule.
 *
 * A counter file is a short list of paths: its size (CF_MAX_BYTES) and
 * each line (CF_MAX_LINE) are bounded (docs/design.md's limits table), so
 * /dev/zero or an endless pipe is refused instead of read until memory
 * runs out.
 *
 * Concurrency: none of its own; call from one thread.
 */
#ifndef PCW_TOOLS_COUNTERFILE_H
#define PCW_TOOLS_COUNTERFILE_H

#include <pcw/pdh.h>

#define CF_MAX_BYTES (1u << 20)
#define CF_MAX_LINE  PCW_PATH_MAX

/* Read `file`: each path, a new malloc'd string, goes to add(arg, path),
 * which owns it from then on (and returns 0, or -1 when out of memory).
 * Returns 0, or 1 after a message "TOOL: FILE: why" on stderr. */
int counterfile_read(const char *tool, const char *file, int (*add)(void *arg, char *path),
                     void *arg);

#endif /* PCW_TOOLS_COUNTERFILE_H */
