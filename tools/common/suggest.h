/* SPDX-License-Identifier: MIT */
/*
 * tools/common/suggest.h - "did you mean": the names nearest to one that
 * matched nothing (a mistyped counterset or counter in a path, in
 * pcwdump's --counters or -c). Every tool that reports such a name gathers
 * the names it could have meant here and prints them the one way.
 *
 * Nearest: case-insensitively (pcw__fold, as names compare), by the optimal
 * string alignment distance over code points (insertions, deletions,
 * substitutions and swaps of neighbours: "Triangel" is 1 from "Triangle"),
 * at most max(1, len/4) edits for a typed name of len code points (at most
 * 3); or the typed name as the start of a longer one ("Bytes" for "Bytes
 * Sent"), scored as 1 edit past the longest distance. The three best are
 * kept, the first seen first among equals. Names past SUGGEST_MAX_CHARS code
 * points are compared by their prefixes only. Work per candidate is
 * bounded by SUGGEST_MAX_CHARS^2; memory is the struct.
 *
 * Concurrency: a suggest belongs to one thread.
 */
#ifndef PCW_TOOLS_SUGGEST_H
#define PCW_TOOLS_SUGGEST_H

#include <stddef.h>
#include <stdio.h>

#define SUGGEST_MAX_CHARS 64
#define SUGGEST_KEEP      3

typedef struct suggest {
    const char *typo;
    const char *name[SUGGEST_KEEP]; /* the candidates' own strings, not copied */
    unsigned score[SUGGEST_KEEP];
    size_t n;
} suggest;

/* Start gathering for `typo` (kept by pointer: it must outlive s). */
void suggest_init(suggest *s, const char *typo);

/* Offer a name the user could have meant (kept by pointer, if kept). A
 * name equal to the typo, or already kept, is skipped. */
void suggest_add(suggest *s, const char *candidate);

/* Write `did you mean "A", "B" or "C"?` to out, each name escaped
 * (tools/common/escape.h: it comes from another process), or nothing when
 * no name was near (s->n == 0). Returns the number of names written. */
size_t suggest_print(FILE *out, const suggest *s);

#endif /* PCW_TOOLS_SUGGEST_H */
