/* SPDX-License-Identifier: MIT */
/*
 * tests/test_names.c - pcw/name.h: UTF-8 decoding, case folding, name
 * equality and hashing, and the wildcard matcher (including hostile
 * patterns that must finish quickly).
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/name.h"

/* Decode s (n bytes) from 0; returns the code point, -1 if malformed. */
static int32_t dec(const char *s, size_t n, size_t *adv)
{
    size_t i = 0;
    int32_t c = pcw__utf8_next(s, n, &i);
    if (adv)
        *adv = i;
    return c;
}

Test(utf8, valid_sequences)
{
    size_t adv;
    cr_assert_eq(dec("A", 1, &adv), 'A');
    cr_assert_eq(adv, 1);
    cr_assert_eq(dec("\xC3\xA9", 2, &adv), 0xE9); /* é */
    cr_assert_eq(adv, 2);
    cr_assert_eq(dec("\xE2\x82\xAC", 3, &adv), 0x20AC); /* € */
    cr_assert_eq(adv, 3);
    cr_assert_eq(dec("\xF0\x9F\x98\x80", 4, &adv), 0x1F600);
    cr_assert_eq(adv, 4);
    cr_assert_eq(dec("\xF4\x8F\xBF\xBF", 4, NULL), 0x10FFFF); /* the last one */
    cr_assert_eq(dec("\xC2\x80", 2, NULL), 0x80);             /* smallest 2-byte */
    cr_assert_eq(dec("\xE0\xA0\x80", 3, NULL), 0x800);        /* smallest 3-byte */
    cr_assert_eq(dec("\xF0\x90\x80\x80", 4, NULL), 0x10000);  /* smallest 4-byte */
    cr_assert_eq(dec("\xED\x9F\xBF", 3, NULL), 0xD7FF);       /* just below surrogates */
    cr_assert_eq(dec("\xEE\x80\x80", 3, NULL), 0xE000);       /* just above */
}

Test(utf8, malformed)
{
    size_t adv = 99;
    /* Overlong forms of '/', NUL and U+07FF, U+FFFF. */
    cr_assert_eq(dec("\xC0\xAF", 2, &adv), -1);
    cr_assert_eq(adv, 0, "a failed decode must not advance");
    cr_assert_eq(dec("\xC1\xBF", 2, NULL), -1);
    cr_assert_eq(dec("\xC0\x80", 2, NULL), -1);
    cr_assert_eq(dec("\xE0\x9F\xBF", 3, NULL), -1);
    cr_assert_eq(dec("\xF0\x8F\xBF\xBF", 4, NULL), -1);
    /* Surrogates. */
    cr_assert_eq(dec("\xED\xA0\x80", 3, NULL), -1);
    cr_assert_eq(dec("\xED\xBF\xBF", 3, NULL), -1);
    /* Past U+10FFFF, and 5/6-byte and invalid lead bytes. */
    cr_assert_eq(dec("\xF4\x90\x80\x80", 4, NULL), -1);
    cr_assert_eq(dec("\xF7\xBF\xBF\xBF", 4, NULL), -1);
    cr_assert_eq(dec("\xF8\x88\x80\x80\x80", 5, NULL), -1);
    cr_assert_eq(dec("\xFC\x84\x80\x80\x80\x80", 6, NULL), -1);
    cr_assert_eq(dec("\xFE", 1, NULL), -1);
    cr_assert_eq(dec("\xFF", 1, NULL), -1);
    /* Lone continuation bytes. */
    cr_assert_eq(dec("\x80", 1, NULL), -1);
    cr_assert_eq(dec("\xBF", 1, NULL), -1);
    /* Truncated: the length limit cuts the sequence even if bytes follow. */
    cr_assert_eq(dec("\xC3", 1, NULL), -1);
    cr_assert_eq(dec("\xE2\x82", 2, NULL), -1);
    cr_assert_eq(dec("\xF0\x9F\x98", 3, NULL), -1);
    cr_assert_eq(dec("\xE2\x82\xAC", 2, NULL), -1);
    /* A bad continuation byte. */
    cr_assert_eq(dec("\xC3\x28", 2, NULL), -1);
    cr_assert_eq(dec("\xE2\x28\xA1", 3, NULL), -1);
    cr_assert_eq(dec("\xF0\x9F\x28\x80", 4, NULL), -1);
}

Test(utf8, count)
{
    cr_assert_eq(pcw__utf8_count("", 0), 0);
    cr_assert_eq(pcw__utf8_count("abc", 3), 3);
    cr_assert_eq(pcw__utf8_count("\xC3\xA9t\xC3\xA9", 5), 3); /* été */
    cr_assert_eq(pcw__utf8_count("a\xF0\x9F\x98\x80z", 6), 3);
    /* An embedded NUL is not allowed in a name. */
    cr_assert_eq(pcw__utf8_count("a\0b", 3), -1);
    cr_assert_eq(pcw__utf8_count("\0", 1), -1);
    cr_assert_eq(pcw__utf8_count("ab\xC3", 3), -1);
    cr_assert_eq(pcw__utf8_count("ab\xED\xA0\x80", 5), -1);
    cr_assert_eq(pcw__utf8_count("\xC0\x80", 2), -1);
}

Test(fold, tables)
{
    cr_assert_eq(pcw__fold('A'), 'a');
    cr_assert_eq(pcw__fold('Z'), 'z');
    cr_assert_eq(pcw__fold('a'), 'a');
    cr_assert_eq(pcw__fold('@'), '@');
    cr_assert_eq(pcw__fold('['), '[');
    cr_assert_eq(pcw__fold(0xC9), 0xE9);   /* É -> é */
    cr_assert_eq(pcw__fold(0xD7), 0xD7);   /* × has no case */
    cr_assert_eq(pcw__fold(0xDF), 0xDF);   /* ß stays */
    cr_assert_eq(pcw__fold(0x100), 0x101); /* Ā -> ā */
    cr_assert_eq(pcw__fold(0x101), 0x101);
    cr_assert_eq(pcw__fold(0x139), 0x13A);   /* Ĺ -> ĺ (odd/even swapped range) */
    cr_assert_eq(pcw__fold(0x178), 0xFF);    /* Ÿ -> ÿ */
    cr_assert_eq(pcw__fold(0x17D), 0x17E);   /* Ž -> ž */
    cr_assert_eq(pcw__fold(0x391), 0x3B1);   /* Α -> α */
    cr_assert_eq(pcw__fold(0x3A3), 0x3C3);   /* Σ -> σ */
    cr_assert_eq(pcw__fold(0x3A2), 0x3A2);   /* unassigned stays */
    cr_assert_eq(pcw__fold(0x401), 0x451);   /* Ё -> ё */
    cr_assert_eq(pcw__fold(0x416), 0x436);   /* Ж -> ж */
    cr_assert_eq(pcw__fold(0x460), 0x461);   /* Ѡ -> ѡ */
    cr_assert_eq(pcw__fold(0xFF21), 0xFF41); /* Ａ -> ａ */
    cr_assert_eq(pcw__fold(0x4E2D), 0x4E2D); /* 中: no case */
    cr_assert_eq(pcw__fold(0x1F600), 0x1F600);
}

static int eq(const char *a, const char *b)
{
    return pcw__name_equal(a, strlen(a), b, strlen(b));
}

Test(name, equal_and_hash)
{
    static const char *pairs[][2] = {
        {"Processor", "PROCESSOR"},
        {"\xC3\x89"
         "COLE",
         "\xC3\xA9"
         "cole"},                                                 /* ÉCOLE / école */
        {"\xCE\xA3\xCE\x9F\xCE\xA6", "\xCF\x83\xCE\xBF\xCF\x86"}, /* ΣΟΦ / σοφ */
        {"\xD0\x9C\xD0\x98\xD0\xA0", "\xD0\xBC\xD0\xB8\xD1\x80"}, /* МИР / мир */
        {"\xEF\xBC\xA1"
         "b",
         "\xEF\xBD\x81"
         "B"}, /* Ａb / ａB */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *a = pairs[i][0], *b = pairs[i][1];
        cr_assert(eq(a, b), "pair %zu should compare equal", i);
        cr_assert_eq(pcw__name_hash(a, strlen(a)), pcw__name_hash(b, strlen(b)),
                     "equal names must hash equal (pair %zu)", i);
    }
    cr_assert_not(eq("abc", "abd"));
    cr_assert_not(eq("abc", "ab"));
    cr_assert_not(eq("ab", "abc"));
    cr_assert_not(eq("", "a"));
    cr_assert_not(eq("stra\xC3\x9F"
                     "e",
                     "strasse")); /* no full case folding */
    cr_assert_not(eq("\xE4\xB8\xAD", "\xE4\xB8\xAE"));
    /* Invalid UTF-8 never compares equal, even to itself. */
    cr_assert_not(pcw__name_equal("\xFF", 1, "\xFF", 1));
    cr_assert_neq(pcw__name_hash("abc", 3), pcw__name_hash("abd", 3));
}

static int wm(const char *pattern, const char *name)
{
    return pcw__wildcard_match(pattern, strlen(pattern), name, strlen(name));
}

Test(wildcard, basics)
{
    cr_assert(wm("*", ""));
    cr_assert(wm("*", "anything at all"));
    cr_assert(wm("**", ""));
    cr_assert(wm("***", "x"));
    cr_assert(wm("", ""));
    cr_assert_not(wm("", "a"));
    cr_assert_not(wm("?", ""));
    cr_assert(wm("?", "a"));
    cr_assert_not(wm("?", "ab"));
    cr_assert(wm("a*", "a"));
    cr_assert(wm("a*", "abc"));
    cr_assert_not(wm("a*", "ba"));
    cr_assert(wm("*c", "abc"));
    cr_assert_not(wm("*c", "abcd"));
    cr_assert(wm("a*c", "ac"));
    cr_assert(wm("a*c", "abbbbc"));
    cr_assert(wm("a**c", "abc"));
    cr_assert(wm("a*?c", "abc"));
    cr_assert_not(wm("a*?c", "ac"));
    cr_assert(wm("*b*d*", "abcde"));
    cr_assert_not(wm("*b*d*", "abce"));
    cr_assert(wm("a?c", "abc"));
    cr_assert(wm("*ab", "aab")); /* needs the backtrack */
    cr_assert(wm("*aab", "aaab"));
    cr_assert(wm("Worker*", "worker 12"));
    cr_assert(wm("WORKER ?2", "worker 12"));
    cr_assert(wm("\xC3\x89"
                 "cole*",
                 "\xC3\xA9"
                 "cole 1")); /* É vs é */
    cr_assert(wm("\xD0\x9C*", "\xD0\xBC\xD0\xB8\xD1\x80"));
}

Test(wildcard, question_mark_is_one_code_point)
{
    cr_assert(wm("?", "\xC3\xA9"));         /* é: 2 bytes, 1 character */
    cr_assert(wm("?", "\xF0\x9F\x98\x80")); /* 4 bytes, 1 character */
    cr_assert_not(wm("??", "\xC3\xA9"));
    cr_assert(wm("a?b", "a\xE2\x82\xAC"
                        "b"));
    cr_assert(wm("*?", "\xE2\x82\xAC"));
    cr_assert_not(wm("???", "\xE2\x82\xAC"));
}

Test(wildcard, invalid_utf8_never_matches)
{
    cr_assert_not(pcw__wildcard_match("*", 1, "a\xFF", 2));
    cr_assert_not(pcw__wildcard_match("?", 1, "\xC3", 1));
    cr_assert_not(pcw__wildcard_match("\xFF", 1, "\xFF", 1));
    cr_assert_not(pcw__wildcard_match("a*\xFF", 3, "abc", 3));
}

Test(wildcard, long_and_adversarial, .timeout = 10)
{
    enum { N = 4096 };
    char *name = malloc(N + 1), *pat = malloc(N + 1);
    memset(name, 'a', N);
    name[N] = 0;
    /* "*a*a*a...*b" against "aaaa...": exponential for a naive
     * backtracker, O(n*m) here. */
    size_t m = 0;
    while (m + 2 < 400)
        pat[m++] = '*', pat[m++] = 'a';
    pat[m++] = 'b';
    pat[m] = 0;
    long long t0 = (long long)clock();
    cr_assert_not(pcw__wildcard_match(pat, m, name, N));
    pat[m - 1] = 'a';
    cr_assert(pcw__wildcard_match(pat, m, name, N));
    /* "a?a?a?...": as long as the name. */
    for (size_t i = 0; i < N; i++)
        pat[i] = (i & 1) ? '?' : 'A';
    pat[N] = 0;
    cr_assert(pcw__wildcard_match(pat, N, name, N));
    name[N - 1] = 'b'; /* a '?' covers it */
    cr_assert(pcw__wildcard_match(pat, N, name, N));
    name[N - 2] = 'b'; /* an 'A' does not */
    cr_assert_not(pcw__wildcard_match(pat, N, name, N));
    /* A 4096-byte pattern of stars. */
    memset(pat, '*', N);
    cr_assert(pcw__wildcard_match(pat, N, name, N));
    cr_assert(pcw__wildcard_match(pat, N, "", 0));
    double secs = (double)((long long)clock() - t0) / CLOCKS_PER_SEC;
    cr_assert_lt(secs, 2.0, "hostile patterns took %.2f s", secs);
    free(name);
    free(pat);
}
