/* SPDX-License-Identifier: MIT */
/*
 * ident.c - C identifiers: checking symbols, making them from names.
 */
#include <string.h>

#include "internal.h"

static int is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

int mf_is_c_ident(const char *s)
{
    if (!s || !is_alpha((unsigned char)*s))
        return 0;
    for (s++; *s; s++)
        if (!is_alpha((unsigned char)*s) && !is_digit((unsigned char)*s))
            return 0;
    return 1;
}

int mf_is_c_keyword(const char *s)
{
    /* C11's keywords, and C23's that a newer compiler would reject. */
    static const char *const kw[] = {
        "auto",         "break",     "case",           "char",
        "const",        "continue",  "default",        "do",
        "double",       "else",      "enum",           "extern",
        "float",        "for",       "goto",           "if",
        "inline",       "int",       "long",           "register",
        "restrict",     "return",    "short",          "signed",
        "sizeof",       "static",    "struct",         "switch",
        "typedef",      "union",     "unsigned",       "void",
        "volatile",     "while",     "_Alignas",       "_Alignof",
        "_Atomic",      "_Bool",     "_Complex",       "_Generic",
        "_Imaginary",   "_Noreturn", "_Static_assert", "_Thread_local",
        "bool",         "true",      "false",          "nullptr",
        "alignas",      "alignof",   "constexpr",      "static_assert",
        "thread_local", "typeof",    "typeof_unqual",
    };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
        if (strcmp(kw[i], s) == 0)
            return 1;
    return 0;
}

char *mf_make_ident(mf_manifest *m, const char *name)
{
    size_t n = strlen(name);
    /* Worst case: "_" + every byte + "_" + NUL. */
    char *out = mf_alloc(m, n + 3);
    if (!out)
        return NULL;
    size_t o = 0;
    int upper_next = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        if (is_alpha(*p) || is_digit(*p)) {
            if (o == 0 && is_digit(*p))
                out[o++] = '_';
            out[o++] = (char)(upper_next && *p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
            upper_next = 0;
        } else {
            /* Spaces, punctuation, and non-ASCII bytes (which C
             * identifiers cannot portably hold) start a new word. */
            upper_next = 1;
        }
    }
    out[o] = 0;
    if (o && mf_is_c_keyword(out))
        out[o++] = '_', out[o] = 0;
    return out;
}
