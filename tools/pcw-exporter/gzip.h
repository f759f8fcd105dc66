/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/gzip.h - a scrape body gzip-compressed (gzip.c):
 * Intel's ISA-L (igzip, Debian's libisal-dev), level 1.
 *
 * One gzip member for the whole body: some clients (curl 7.88's
 * --compressed among them) stop at the end of the first member of a
 * multi-member body without an error, so a body is never split into
 * members. Pure: any thread, one output buffer per thread.
 */
#ifndef PCW_EXPORTER_GZIP_H
#define PCW_EXPORTER_GZIP_H

#include <stddef.h>

#include "expo.h"

/* The n bytes at p as one gzip member, in out (replacing what it held);
 * 0, or -1 when memory ran out (out->failed) or the compressor failed. Work
 * and memory linear in n: the output grows as it fills, to about n/15 for
 * a scrape's text and a little more than n for incompressible bytes. */
int gzip_compress(const char *p, size_t n, ebuf *out);

#endif /* PCW_EXPORTER_GZIP_H */
