/* SPDX-License-Identifier: MIT */
/*
 * emit.h - writes the C header for a parsed manifest.
 */
#ifndef PCWGEN_EMIT_H
#define PCWGEN_EMIT_H

#include <stdio.h>

#include "manifest.h"

typedef struct emit_options {
    const char *prefix; /* C identifier or "" (CTRPP's -prefix) */
    const char *source; /* the manifest's name as shown in the header */
} emit_options;

/* Write the header. The manifest must have parsed without error (the
 * emitter trusts every check mf_parse made). Returns 0, or -1 if a write
 * failed (errno set by stdio). */
int emit_header(FILE *out, const mf_manifest *m, const emit_options *opt);

#endif /* PCWGEN_EMIT_H */
