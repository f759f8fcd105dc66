/*
 * pcw/name.h - names: UTF-8 validation, case-insensitive comparison and
 * hashing, and the instance-name wildcard matcher.
 *
 * Names compare case-insensitively, as in PCW. Folding is Unicode simple
 * lowercase mapping for the scripts that have case and are common in counter
 * names (ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic, fullwidth Latin),
 * done by table here so it never depends on the process locale; characters of
 * other scripts compare exactly.
 *
 * Concurrency: pure functions; any thread.
 */
#ifndef PCW_NAME_H
#define PCW_NAME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Decode one UTF-8 code point at s[*i] (n bytes in all), advance *i. Returns
 * the code point, or -1 for malformed, overlong, surrogate or >U+10FFFF. */
static inline int32_t pcw_utf8_next(const char *s, size_t n, size_t *i)
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
static inline long pcw_utf8_count(const char *s, size_t n)
{
    long chars = 0;
    for (size_t i = 0; i < n;) {
        int32_t c = pcw_utf8_next(s, n, &i);
        if (c <= 0)
            return -1;
        chars++;
    }
    return chars;
}

/* Simple lowercase mapping of one code point (see the file comment). */
static inline uint32_t pcw_fold(uint32_t c)
{
    if (c < 0x80)
        return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
        return c + 32;
    if (c >= 0x100 && c <= 0x17F) {
        if (c == 0x130 || c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F)
            return c;
        if (c == 0x178)
            return 0xFF;
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
            return (c & 1) ? c + 1 : c;
        return (c & 1) ? c : c + 1;
    }
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2)
        return c + 32;
    if (c >= 0x400 && c <= 0x40F)
        return c + 80;
    if (c >= 0x410 && c <= 0x42F)
        return c + 32;
    if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF))
        return (c & 1) ? c : c + 1;
    if (c >= 0xFF21 && c <= 0xFF3A)
        return c + 32;
    return c;
}

/* Case-insensitive equality of two valid UTF-8 strings (lengths in bytes). */
static inline int pcw_name_equal(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        int32_t ca = pcw_utf8_next(a, an, &i), cb = pcw_utf8_next(b, bn, &j);
        if (ca < 0 || cb < 0)
            return 0;
        if (pcw_fold((uint32_t)ca) != pcw_fold((uint32_t)cb))
            return 0;
    }
    return i == an && j == bn;
}

/* A hash of the folded name (FNV-1a over folded code points); names that
 * compare equal hash equal. */
static inline uint64_t pcw_name_hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n;) {
        int32_t c = pcw_utf8_next(s, n, &i);
        if (c < 0)
            break;
        uint32_t f = pcw_fold((uint32_t)c);
        for (int k = 0; k < 4; k++) {
            h ^= (f >> (8 * k)) & 0xFFu;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/* Does `name` (n bytes) match the wildcard `pattern` (m bytes)? '*' matches
 * any run of characters (also none), '?' exactly one character, all else
 * itself, case-insensitively. "*" matches every name, the empty one too.
 * Runs in O(n*m) at worst without recursion (greedy with one backtrack
 * point), so a hostile pattern cannot blow the stack. Invalid UTF-8 in
 * either string never matches. */
static inline int pcw_wildcard_match(const char *pattern, size_t m, const char *name, size_t n)
{
    size_t p = 0, s = 0, star_p = (size_t)-1, star_s = 0;
    while (s < n) {
        if (p < m && pattern[p] == '*') {
            while (p < m && pattern[p] == '*')
                p++;
            if (p == m)
                return pcw_utf8_count(name + s, n - s) >= 0;
            star_p = p, star_s = s;
            continue;
        }
        size_t p2 = p, s2 = s;
        int32_t cs = pcw_utf8_next(name, n, &s2);
        if (cs < 0)
            return 0;
        if (p < m) {
            int32_t cp = pcw_utf8_next(pattern, m, &p2);
            if (cp < 0)
                return 0;
            if (cp == '?' || pcw_fold((uint32_t)cp) == pcw_fold((uint32_t)cs)) {
                p = p2, s = s2;
                continue;
            }
        }
        if (star_p == (size_t)-1)
            return 0;
        /* Let the last '*' swallow one more character and retry. */
        p = star_p;
        size_t t = star_s;
        if (pcw_utf8_next(name, n, &t) < 0)
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
