/* SPDX-License-Identifier: MIT */
/*
 * tools/common/escape.c - the one rule for names from other processes,
 * and its terminal and JSON escapes (escape.h).
 */
#define _GNU_SOURCE 1
#include "escape.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "common/name.h"

int esc_is_control(int32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
}

/* The escape of the character at s[*i] (advancing *i), into esc (at least
 * 16 bytes); its length, or 0 when the character is written as it is. */
static int escape_one(const char *s, size_t n, size_t *i, char *esc, unsigned flags)
{
    size_t j = *i;
    int32_t cp = pcw__utf8_next(s, n, &j);
    int len = 0;
    if (cp < 0) {
        len = snprintf(esc, 16, "\\x%02x", (unsigned char)s[*i]);
        j = *i + 1;
    } else if (cp == '\\' && !(flags & ESC_BACKSLASH_LITERAL)) {
        len = snprintf(esc, 16, "\\\\");
    } else if (cp == '\t') {
        len = snprintf(esc, 16, "\\t");
    } else if (cp == '\n') {
        len = snprintf(esc, 16, "\\n");
    } else if (cp == '\r') {
        len = snprintf(esc, 16, "\\r");
    } else if (esc_is_control(cp)) {
        len = cp < 0x80 ? snprintf(esc, 16, "\\x%02x", (unsigned)cp)
                        : snprintf(esc, 16, "\\u%04x", (unsigned)cp);
    }
    *i = j;
    return len;
}

size_t esc_put(FILE *out, const char *s, size_t n, unsigned flags)
{
    size_t cols = 0;
    char esc[16];
    for (size_t i = 0; i < n;) {
        size_t at = i;
        int len = escape_one(s, n, &i, esc, flags);
        if (len == 0) {
            if (out)
                fwrite(s + at, 1, i - at, out);
            cols++;
        } else {
            if (out)
                fwrite(esc, 1, (size_t)len, out);
            cols += (size_t)len;
        }
    }
    return cols;
}

const char *esc_str(char *buf, size_t cap, const char *s, unsigned flags)
{
    size_t n = strlen(s), used = 0;
    char esc[16];
    if (!cap)
        return buf;
    for (size_t i = 0; i < n;) {
        size_t at = i;
        int len = escape_one(s, n, &i, esc, flags);
        const char *piece = len ? esc : s + at;
        size_t plen = len ? (size_t)len : i - at;
        if (used + plen >= cap)
            break;
        memcpy(buf + used, piece, plen);
        used += plen;
    }
    buf[used] = 0;
    return buf;
}

void esc_json(FILE *out, const char *s, size_t n)
{
    putc('"', out);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int32_t cp = pcw__utf8_next(s, n, &j);
        if (cp < 0) {
            /* One replacement per byte that starts no valid sequence:
             * resynchronise on the next byte. */
            fputs("\\ufffd", out);
            i++;
            continue;
        }
        const char *short_esc = cp == '"'    ? "\\\""
                                : cp == '\\' ? "\\\\"
                                : cp == '\b' ? "\\b"
                                : cp == '\f' ? "\\f"
                                : cp == '\n' ? "\\n"
                                : cp == '\r' ? "\\r"
                                : cp == '\t' ? "\\t"
                                             : NULL;
        if (short_esc)
            fputs(short_esc, out);
        else if (esc_is_control(cp))
            fprintf(out, "\\u%04" PRIx32, (uint32_t)cp);
        else
            fwrite(s + i, 1, j - i, out);
        i = j;
    }
    putc('"', out);
}

int esc_is_tty(FILE *f)
{
    return isatty(fileno(f));
}
