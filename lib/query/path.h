/* SPDX-License-Identifier: MIT */
/*
 * lib/query/path.h - path.c's side for the other modules: errors, instance
 * patterns, what a host part names (pcw/pdh.h has the path grammar).
 */
#ifndef PCW_QUERY_PATH_H
#define PCW_QUERY_PATH_H

#include <stddef.h>

#include "pcw/pdh.h"

/* Fill *err (may be NULL) and return status. */
int pcw__q_fail(pcw_path_error *err, int status, int part, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void pcw__q_path_error_clear(pcw_path_error *err);
/* Does an instance pattern (a path's instance part without #n) match an
 * instance name (len bytes)? A pattern with a '/' is PDH's
 * "parent/instance": each side matches its side of the name split at the
 * name's first '/' (a name without one has no parent and does not match),
 * so a wildcard never reaches across the parent's '/'. A pattern without
 * '/' matches the whole name: (*) is every instance, parent or not. */
int pcw__q_instance_match(const char *pat, const char *name, size_t len);
/* What a path's host part (n bytes) names: this machine (".", "localhost",
 * its host name: every provider the query finds, as always), every
 * provider ("*", the same set, said explicitly), or a container (12 to 64
 * hex digits of its id, or "ns:<inode>"); -1 none of them. */
enum { PCW__Q_HOST_LOCAL = 0, PCW__Q_HOST_ANY = 1, PCW__Q_HOST_CONTAINER = 2 };
int pcw__q_host_kind(const char *h, size_t n);

#endif /* PCW_QUERY_PATH_H */
