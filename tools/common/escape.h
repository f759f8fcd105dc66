/* SPDX-License-Identifier: MIT */
/*
 * tools/common/escape.h - how every pcw tool writes a name it did not
 * choose (a counterset, instance, counter or provider name comes from
 * another process and may hold ESC, OSC, CSI...): the one rule for which
 * characters are never written raw, and the escapes for a terminal and
 * for JSON. The Makefile links tools/common into every tool
 * (tools/common/escape.c); docs/testing.md says how the terminal attack is tested.
 *
 * Where each tool uses which (the decision, tools' READMEs):
 *   - text a person reads (pcwdump's text, pcwtop -b, pcwstat -q/-qx, every
 *     message on stderr): esc_put/esc_str always - the escape is the only
 *     quoting these formats have;
 *   - pcwstat's CSV/TSV: esc_put on a terminal; into a file or a pipe the
 *     CSV quoting alone, so the file holds the names exactly;
 *   - JSON (pcwstat, pcwdump): esc_json, which escapes the same characters
 *     as \uXXXX - lossless, and safe on a terminal;
 *   - interactive pcwtop (curses cells): each such character drawn as '?'
 *     (tools/pcwtop/format.c, through esc_is_control).
 */
#ifndef PCW_TOOLS_ESCAPE_H
#define PCW_TOOLS_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The rule: C0 controls (ESC, BEL, CR, LF, TAB...), DEL, C1 controls
 * (U+0080-U+009F: CSI, OSC, ST... for terminals that take them as 8-bit
 * sequences), bidirectional overrides and isolates (U+202A-U+202E,
 * U+2066-U+2069: a name that reorders what follows it) and the line and
 * paragraph separators U+2028/U+2029. */
int esc_is_control(int32_t cp);

/* Keep '\' as it is (for counter paths, whose separator it is); by default
 * it is doubled, so that every escape is unambiguous. */
#define ESC_BACKSLASH_LITERAL 1u

/* Write s[0..n) to out with every character esc_is_control() names and
 * every byte that is not UTF-8 escaped visibly: \n \t \r, \x1b (below
 * U+0080, and stray bytes), \u009b. With out NULL, only measure. Returns
 * the columns written (code points; no East Asian widths, so the result
 * does not depend on the locale). */
size_t esc_put(FILE *out, const char *s, size_t n, unsigned flags);

/* The same escape of the NUL-terminated s into buf (cap bytes, always
 * NUL-terminated, cut on a whole escape when too small): for a name inside
 * an fprintf. Returns buf. */
const char *esc_str(char *buf, size_t cap, const char *s, unsigned flags);

/* s[0..n) as a JSON string literal, quotes included: '"' and '\' escaped,
 * control characters as \n, \t... or \u00XX, every other character of the
 * rule as \uXXXX, each byte that is not UTF-8 as \ufffd (valid JSON from
 * any bytes). */
void esc_json(FILE *out, const char *s, size_t n);

/* 1 when f is a terminal. */
int esc_is_tty(FILE *f);

#endif /* PCW_TOOLS_ESCAPE_H */
