/* SPDX-License-Identifier: MIT */
/*
 * common/name.h - names: UTF-8 validation, case-insensitive comparison and
 * hashing, and the instance-name wildcard matcher.
 *
 * Names compare case-insensitively, as in PCW, by Unicode's simple case
 * folding (CaseFolding.txt, statuses C and S) over all of Unicode: one code
 * point folds to one code point, so "Ά" equals "ά", "ς" equals "σ" and "Σ",
 * but "ß" does not equal "ss" (that is full folding). The table is generated
 * from the Unicode Character Database (common/casefold_table.h names the
 * version) and compiled in, so folding never depends on the process locale.
 *
 * One fold for everything: pcw__name_equal, pcw__name_hash and
 * pcw__wildcard_match all go through pcw__fold, and both the provider's
 * implementation and libpcw compile this header, so a provider and a consumer
 * built from the same pcw agree on which names are equal.
 *
 * Concurrency: pure functions; any thread.
 */
#ifndef PCW_NAME_H
#define PCW_NAME_H

#include <stddef.h>
#include <stdint.h>

#include "casefold_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decode one UTF-8 code point at s[*i] (n bytes in all), advance *i. Returns
 * the code point, or -1 for malformed, overlong, surrogate or >U+10FFFF. */
static inline int32_t pcw__utf8_next(const char *s, size_t n, size_t *i)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t at = *i;
    if (at >= n)
        return -1;
    uint32_t c = p[at], need, min;
    if (c < 0x80) {
        *i = at + 1;
        return (int32_t)c;
    } else if ((c & 0xE0) == 0xC0) {
        need = 1, min = 0x80, c &= 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        need = 2, min = 0x800, c &= 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        need = 3, min = 0x10000, c &= 0x07;
    } else {
        return -1;
    }
    /* Every continuation byte is read only after its index is checked
     * against n, in a form the compiler's bounds analysis can follow. */
    for (uint32_t k = 1; k <= need; k++) {
        if (at + k >= n)
            return -1;
        unsigned char b = p[at + k];
        if ((b & 0xC0) != 0x80)
            return -1;
        c = (c << 6) | (b & 0x3Fu);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return -1;
    *i = at + need + 1;
    return (int32_t)c;
}

/* Count the code points of a UTF-8 string of n bytes; -1 if it is not valid
 * UTF-8 or contains a NUL. */
static inline long pcw__utf8_count(const char *s, size_t n)
{
    long chars = 0;
    for (size_t i = 0; i < n;) {
        int32_t c = pcw__utf8_next(s, n, &i);
        if (c <= 0)
            return -1;
        chars++;
    }
    return chars;
}

/* Unicode simple case folding of one code point (see the file comment):
 * the folded form of c, c itself when it has none. ASCII takes a branch of
 * its own (names are mostly ASCII); everything else costs two loads from
 * the two-stage table in common/casefold_table.h (its size is stated there). */
static inline uint32_t pcw__fold(uint32_t c)
{
    if (c < 0x80)
        return c - 'A' < 26u ? c + 32 : c;
    if (c >= PCW__CASEFOLD_LIMIT)
        return c;
    uint32_t block = pcw__casefold_stage1[c >> PCW__CASEFOLD_SHIFT];
    uint32_t delta = pcw__casefold_stage2[(block << PCW__CASEFOLD_SHIFT) |
                                          (c & ((1u << PCW__CASEFOLD_SHIFT) - 1))];
    /* The delta is modulo 2^16: every simple folding stays in its plane. */
    return (c & ~0xFFFFu) | ((c + delta) & 0xFFFFu);
}

/* Case-insensitive equality of two valid UTF-8 strings (lengths in bytes). */
static inline int pcw__name_equal(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        uint32_t x = (unsigned char)a[i], y = (unsigned char)b[j];
        if ((x | y) < 0x80) { /* both ASCII, the common case: no decoding */
            if (pcw__fold(x) != pcw__fold(y))
                return 0;
            i++, j++;
            continue;
        }
        int32_t ca = pcw__utf8_next(a, an, &i), cb = pcw__utf8_next(b, bn, &j);
        if (ca < 0 || cb < 0)
            return 0;
        if (pcw__fold((uint32_t)ca) != pcw__fold((uint32_t)cb))
            return 0;
    }
    return i == an && j == bn;
}

/* A hash of the folded name: 64-bit FNV-1a over the four little-endian
 * bytes of each folded code point, so names that compare equal hash equal.
 * It stops at the first invalid sequence. The value lives only in process
 * memory (hash tables of the provider and of libpcw), never in a segment.
 * A code point below 256 has three zero high bytes, and an FNV-1a round
 * over a zero byte is a bare multiply by the prime, so its four rounds are
 * one multiply by the prime to the fourth: the same value for a quarter of
 * the multiplies on the common (ASCII) path. pcw__name_hash_from starts
 * from another state than FNV's: pcw_name_index starts from a random one,
 * so that names from a segment cannot be made to collide in it
 * (lib/consumer/index.c). */
static inline uint64_t pcw__name_hash_from(uint64_t h, const char *s, size_t n)
{
    const uint64_t prime = 0x100000001b3ull, prime4 = 0x9ffaac085635bc91ull; /* prime^4 mod 2^64 */
    for (size_t i = 0; i < n;) {
        int32_t c = pcw__utf8_next(s, n, &i);
        if (c < 0)
            break;
        uint32_t f = pcw__fold((uint32_t)c);
        if (f < 0x100) {
            h = (h ^ f) * prime4;
            continue;
        }
        for (int k = 0; k < 4; k++) {
            h ^= (f >> (8 * k)) & 0xFFu;
            h *= prime;
        }
    }
    return h;
}

static inline uint64_t pcw__name_hash(const char *s, size_t n)
{
    return pcw__name_hash_from(0xcbf29ce484222325ull, s, n);
}

/* Does `name` (n bytes) match the wildcard `pattern` (m bytes)? '*' matches
 * any run of characters (also none), '?' exactly one character, all else
 * itself, case-insensitively. "*" matches every name, the empty one too.
 * Runs in O(n*m) at worst without recursion (greedy with one backtrack
 * point), so a hostile pattern cannot blow the stack. Invalid UTF-8 in
 * either string never matches. */
static inline int pcw__wildcard_match(const char *pattern, size_t m, const char *name, size_t n)
{
    size_t p = 0, s = 0, star_p = (size_t)-1, star_s = 0;
    while (s < n) {
        if (p < m && pattern[p] == '*') {
            while (p < m && pattern[p] == '*')
                p++;
            if (p == m)
                return pcw__utf8_count(name + s, n - s) >= 0;
            star_p = p, star_s = s;
            continue;
        }
        size_t p2 = p, s2 = s;
        int32_t cs = pcw__utf8_next(name, n, &s2);
        if (cs < 0)
            return 0;
        if (p < m) {
            int32_t cp = pcw__utf8_next(pattern, m, &p2);
            if (cp < 0)
                return 0;
            if (cp == '?' || pcw__fold((uint32_t)cp) == pcw__fold((uint32_t)cs)) {
                p = p2, s = s2;
                continue;
            }
        }
        if (star_p == (size_t)-1)
            return 0;
        /* Let the last '*' swallow one more character and retry. */
        p = star_p;
        size_t t = star_s;
        if (pcw__utf8_next(name, n, &t) < 0)
            return 0;
        s = star_s = t;
    }
    while (p < m && pattern[p] == '*')
        p++;
    return p == m;
}

#ifdef __cplusplus
}
#endif
#endif /* PCW_NAME_H */
