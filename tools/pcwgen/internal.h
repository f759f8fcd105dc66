/* SPDX-License-Identifier: MIT */
/*
 * internal.h - helpers shared by the manifest reader's files (not part of
 * the reader's interface; see manifest.h for that).
 */
#ifndef PCWGEN_INTERNAL_H
#define PCWGEN_INTERNAL_H

#include <stddef.h>

#include "manifest.h"

/* ---- arena.c: every allocation of a manifest, freed at once by mf_free,
 * so that no error path has to unwind partial structures. */

/* `n` zeroed bytes, or NULL when out of memory. */
void *mf_alloc(mf_manifest *m, size_t n);
/* A copy of `s`, or NULL when out of memory. */
char *mf_strdup(mf_manifest *m, const char *s);
/* Make room for one more element in *arr (holding `n`, room for *cap).
 * Returns 0, or -1 when out of memory (the array is then unchanged). */
int mf_reserve(mf_manifest *m, void **arr, size_t *cap, size_t n, size_t elem);
/* Record a warning (best effort: dropped when out of memory). */
void mf_warn(mf_manifest *m, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void mf_set_error(mf_error *e, unsigned long line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- ident.c: C identifiers for the generated header. */

/* Longest symbol, struct name or type, field, or made-up identifier
 * accepted: generated names stay well within what compilers and humans
 * handle. */
#define MF_MAX_IDENT 200

int mf_is_c_ident(const char *s);
int mf_is_c_keyword(const char *s);
/* An identifier made from a display name: letters, digits and underscores
 * kept, a letter after a dropped character upper-cased ("Square wave" ->
 * "SquareWave"); "_" before a leading digit, "_" after a C keyword. ""
 * when nothing is left; NULL when out of memory. */
char *mf_make_ident(mf_manifest *m, const char *name);

/* ---- check.c: the checks that need a whole counterSet or manifest. */

/* Resolve structs, base counters and references of a finished counterSet;
 * check ids, names and identifiers. 0 or -1 with *err set. */
int mf_check_counterset(mf_manifest *m, mf_counterset *s, mf_error *err);
/* Checks across countersets and providers, once the document is read. */
int mf_check_manifest(mf_manifest *m, mf_error *err);

#endif /* PCWGEN_INTERNAL_H */
