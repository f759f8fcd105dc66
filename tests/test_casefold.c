/* SPDX-License-Identifier: MIT */
/*
 * tests/test_casefold.c - names fold by Unicode's simple case folding over
 * all of Unicode (lib/common/name.h, lib/common/casefold_table.h):
 *
 *   - the scripts issue 13 names (Vietnamese, Latin Extended-B, accented
 *     Greek capitals, final sigma, Armenian) and a few more with unusual
 *     foldings (titlecase, Cherokee, Deseret, Kelvin sign);
 *   - every C and S mapping of the installed CaseFolding.txt, and every
 *     other code point folding to itself, checked against pcw__fold,
 *     pcw__name_equal, pcw__name_hash and pcw__wildcard_match;
 *   - pcw__name_hash against a plain FNV-1a reference;
 *   - invalid UTF-8 handled as before;
 *   - a real provider refusing instance names that differ only by case, and
 *     a consumer finding countersets and instances of a provider process by
 *     differently-cased non-Latin names.
 *
 * The source holds UTF-8 literals; the utf8_literals test checks the file
 * was read as UTF-8, so a mangled file fails loudly rather than passing
 * vacuously.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/collect.h"
#include "pcw/consumer.h"
#include "common/name.h"
#include "pcw/provider.h"
#include "testutil.h"

#define UCD_CASEFOLDING_DEFAULT "/usr/share/unicode/CaseFolding.txt"

static int eq(const char *a, const char *b)
{
    return pcw__name_equal(a, strlen(a), b, strlen(b));
}

static uint64_t hash(const char *s)
{
    return pcw__name_hash(s, strlen(s));
}

static int wm(const char *pattern, const char *name)
{
    return pcw__wildcard_match(pattern, strlen(pattern), name, strlen(name));
}

/* Encode code point c as UTF-8 into out (at least 5 bytes), NUL-terminated. */
static size_t enc(uint32_t c, char *out)
{
    size_t n;
    if (c < 0x80) {
        out[0] = (char)c, n = 1;
    } else if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6), out[1] = (char)(0x80 | (c & 0x3F)), n = 2;
    } else if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12), out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F)), n = 3;
    } else {
        out[0] = (char)(0xF0 | c >> 18), out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((c >> 6) & 0x3F)), out[3] = (char)(0x80 | (c & 0x3F)), n = 4;
    }
    out[n] = 0;
    return n;
}

/* The first code point of a UTF-8 literal. */
static int32_t first(const char *s)
{
    size_t i = 0;
    return pcw__utf8_next(s, strlen(s), &i);
}

Test(casefold, utf8_literals)
{
    cr_assert_eq(first("Ạ"), 0x1EA0);
    cr_assert_eq(first("Ǎ"), 0x1CD);
    cr_assert_eq(first("Ά"), 0x386);
    cr_assert_eq(first("ς"), 0x3C2);
    cr_assert_eq(first("Ա"), 0x531);
    cr_assert_eq(pcw__utf8_count("ĐẠI HỌC", strlen("ĐẠI HỌC")), 7);
}

/* Names that must compare equal, each group all-pairs. */
static const char *const groups[][3] = {
    /* Vietnamese: Latin Extended Additional (Ạ U+1EA0, Ọ U+1ECC) and Đ. */
    {"ĐẠI HỌC", "đại học", "Đại Học"},
    {"VIỆT NAM", "việt nam", "Việt Nam"},
    /* Latin Extended-B: Ǎ U+01CD..., and the DŽ / Dž / dž titlecase trio. */
    {"ǍǏǑǓ", "ǎǐǒǔ", "ǍǐǑǔ"},
    {"DŽEP", "Džep", "džep"},
    /* Accented Greek capitals: Ά Έ Ή Ί Ό Ύ Ώ. */
    {"ΆΈΉΊΌΎΏ", "άέήίόύώ", "ΆέΉίΌύΏ"},
    {"ΆΘΩΣ", "άθως", "άθωσ"},
    /* Final sigma: ς, σ and Σ are one letter. */
    {"ΟΔΟΣ", "οδος", "οδοσ"},
    /* Armenian: Հ Ա Յ Ս Տ Ն. */
    {"ՀԱՅԱՍՏԱՆ", "հայաստան", "Հայաստան"},
    /* Further scripts and oddities the old table missed. */
    {"ᲡᲐᲥᲐᲠᲗᲕᲔᲚᲝ", "საქართველო",
     "ᲡაქარᲗველო"}, /* Georgian Mtavruli/Mkhedruli */
    {"ᏣᎳᎩ", "ꮳꮃꭹ", "Ꮳꮃꭹ"},  /* Cherokee folds to upper case */
    {"𐐔𐐇𐐝𐐀𐐡𐐇𐐓", "𐐼𐐯𐑅𐐨𐑉𐐯𐐻", "𐐔𐐯𐑅𐐨𐑉𐐯𐐻"},  /* Deseret, plane 1 */
    {"𞤀𞤣𞤤𞤢𞤥", "𞤢𞤣𞤤𞤢𞤥",
     "𞤀𞤣𞤤𞤢𞤥"}, /* Adlam, the last block that folds */
    {"\xE2\x84\xAA"
     "elvin",
     "kelvin", "KELVIN"},                   /* U+212A KELVIN SIGN folds to k */
    {"ΩMEGA", "ωmega", "\xE2\x84\xA6mega"}, /* U+2126 OHM SIGN folds to ω */
    {"ſ", "s", "S"},                        /* U+017F LONG S */
    {"ẞ", "ß", "ß"},                        /* U+1E9E CAPITAL SHARP S (simple: to ß) */
};

Test(casefold, issue_examples_fold)
{
    cr_assert_eq(pcw__fold(0x1EA0), 0x1EA1); /* Ạ -> ạ */
    cr_assert_eq(pcw__fold(0x1EA1), 0x1EA1);
    cr_assert_eq(pcw__fold(0x1CD), 0x1CE); /* Ǎ -> ǎ */
    cr_assert_eq(pcw__fold(0x1C4), 0x1C6); /* DŽ -> dž */
    cr_assert_eq(pcw__fold(0x1C5), 0x1C6); /* Dž -> dž */
    cr_assert_eq(pcw__fold(0x386), 0x3AC); /* Ά -> ά */
    cr_assert_eq(pcw__fold(0x38F), 0x3CE); /* Ώ -> ώ */
    cr_assert_eq(pcw__fold(0x3C2), 0x3C3); /* ς -> σ */
    cr_assert_eq(pcw__fold(0x3A3), 0x3C3); /* Σ -> σ */
    cr_assert_eq(pcw__fold(0x531), 0x561); /* Ա -> ա */
    cr_assert_eq(pcw__fold(0x556), 0x586); /* Ֆ -> ֆ, the last Armenian capital */
    cr_assert_eq(pcw__fold(0x13F8), 0x13F0);
    cr_assert_eq(pcw__fold(0xAB70), 0x13A0);
    cr_assert_eq(pcw__fold(0x10400), 0x10428);
    cr_assert_eq(pcw__fold(0x1E900), 0x1E922);
    cr_assert_eq(pcw__fold(0x1E921), 0x1E943);
    /* Not simple foldings: İ and ı (Turkic only), ß and ŉ (full only). */
    cr_assert_eq(pcw__fold(0x130), 0x130);
    cr_assert_eq(pcw__fold(0x131), 0x131);
    cr_assert_eq(pcw__fold(0xDF), 0xDF);
    cr_assert_eq(pcw__fold(0x149), 0x149);
    /* No case: CJK, emoji, the last code point. */
    cr_assert_eq(pcw__fold(0x4E2D), 0x4E2D);
    cr_assert_eq(pcw__fold(0x1F600), 0x1F600);
    cr_assert_eq(pcw__fold(0x10FFFF), 0x10FFFF);
}

Test(casefold, equal_names_hash_equal)
{
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                const char *a = groups[g][i], *b = groups[g][j];
                cr_assert(eq(a, b), "\"%s\" and \"%s\" (group %zu) should compare equal", a, b, g);
                cr_assert_eq(hash(a), hash(b), "\"%s\" and \"%s\" must hash equal", a, b);
            }
    /* Different letters stay different, accents included. */
    cr_assert_not(eq("ΆΘΩΣ", "ΑΘΩΣ")); /* Ά is not Α */
    cr_assert_not(eq("άθως", "αθως"));
    cr_assert_not(eq("ĐẠI", "DAI"));
    cr_assert_not(eq("ĐẠI", "ĐAI"));
    cr_assert_not(eq("ǎ", "a"));
    cr_assert_not(eq("Ա", "Բ"));
    cr_assert_not(eq("ı", "i"));
    cr_assert_not(eq("İ", "i"));
    cr_assert_not(eq("ß", "ss"));
    cr_assert_not(eq("ΟΔΟΣ", "ΟΔΟ"));
    cr_assert_neq(hash("ՀԱՅ"), hash("ՀԱՆ"));
}

Test(casefold, wildcard_across_cases)
{
    cr_assert(wm("ĐẠI*", "đại học"));
    cr_assert(wm("*HỌC", "đại học"));
    cr_assert(wm("đ?i h?c", "ĐẠI HỌC"));
    cr_assert(wm("ǍǏ?Ǔ", "ǎǐǒǔ"));
    cr_assert(wm("dž*", "DŽEP"));
    cr_assert(wm("Ά*Σ", "άθως"));
    cr_assert(wm("*ς", "ΟΔΟΣ"));
    cr_assert(wm("ο*σ", "ΟΔΟς"));
    cr_assert(wm("Հ?Յ*Ն", "հայաստան"));
    cr_assert(wm("*ԱՍՏ*", "հայաստան"));
    cr_assert(wm("?𐐯*", "𐐼𐐯𐑅"));
    cr_assert_not(wm("Ά*", "αθως"));
    cr_assert_not(wm("*Ն", "հայաստա"));
    cr_assert_not(wm("ǍǏ?", "ǎǐǒǔ"));
}

/* pcw__name_hash as defined: 64-bit FNV-1a over the four little-endian bytes
 * of each folded code point, up to the first invalid sequence. */
static uint64_t hash_reference(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n;) {
        int32_t c = pcw__utf8_next(s, n, &i);
        if (c < 0)
            break;
        uint32_t f = pcw__fold((uint32_t)c);
        for (int k = 0; k < 4; k++) {
            h ^= (f >> (8 * k)) & 0xFF;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

Test(casefold, hash_is_fnv1a_over_folded_code_points)
{
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        for (int i = 0; i < 3; i++)
            cr_assert_eq(hash(groups[g][i]), hash_reference(groups[g][i], strlen(groups[g][i])));
    static const char *more[] = {"",
                                 "a",
                                 "Processor",
                                 "inst-0001234",
                                 "\xC3\xBF",
                                 "Ā",
                                 "\xFF",
                                 "ab\xFF"
                                 "cd",
                                 "É\xC3"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        cr_assert_eq(hash(more[i]), hash_reference(more[i], strlen(more[i])), "\"%s\"", more[i]);
    /* Random mixes of 1- to 4-byte characters. */
    static const uint32_t pool[] = {'a',   'Z',   '-',    0xC9,   0xFF,   0x100,   0x1CD,  0x3A3,
                                    0x3C2, 0x531, 0x1EA0, 0x4E2D, 0xFF21, 0x10400, 0x1F600};
    srandom(13);
    for (int t = 0; t < 2000; t++) {
        char s[64 * 4 + 1];
        size_t n = 0;
        int len = (int)(random() % 64);
        for (int k = 0; k < len; k++)
            n += enc(pool[random() % (sizeof pool / sizeof pool[0])], s + n);
        cr_assert_eq(pcw__name_hash(s, n), hash_reference(s, n), "trial %d", t);
    }
}

Test(casefold, invalid_utf8_unchanged)
{
    /* Invalid never compares equal, not even to itself or after a letter
     * that folds. */
    cr_assert_not(pcw__name_equal("Ά\xFF", 3, "ά\xFF", 3));
    cr_assert_not(pcw__name_equal("\xCE", 1, "\xCE", 1));                 /* Ά cut short */
    cr_assert_not(pcw__name_equal("\xC1\x81", 2, "a", 1));                /* overlong 'A' */
    cr_assert_not(pcw__name_equal("\xED\xA0\x80", 3, "\xED\xA0\x80", 3)); /* a surrogate */
    cr_assert_not(pcw__name_equal("\xF4\x90\x80\x80", 4, "\xF4\x90\x80\x80", 4));
    /* The hash stops at the first invalid sequence. */
    cr_assert_eq(pcw__name_hash("ΆΣ\xFFxyz", 8), hash("ΆΣ"));
    cr_assert_eq(pcw__name_hash("Ա\xC0\x80", 4), hash("Ա"));
    /* The matcher never matches invalid UTF-8. */
    cr_assert_not(pcw__wildcard_match("*", 1, "Ա\xFF", 3));
    cr_assert_not(pcw__wildcard_match("?", 1, "\xD4", 1));
    cr_assert_not(pcw__wildcard_match("Ա*\xFF", 5, "ա\xFF", 3));
    /* Counting still refuses it. */
    cr_assert_eq(pcw__utf8_count("Ạ\xFF", 4), -1);
}

/* ---- every mapping of the Unicode Character Database -------------------- */

Test(casefold, every_simple_folding_of_the_ucd, .timeout = 120)
{
    const char *path = getenv("PCW_UCD_CASEFOLDING");
    if (!path || !*path)
        path = UCD_CASEFOLDING_DEFAULT;
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s (%s): install Debian's unicode-data (make deps)", path,
                       strerror(errno));
    uint32_t *want = malloc(sizeof *want * 0x110000);
    cr_assert_not_null(want);
    for (uint32_t c = 0; c < 0x110000; c++)
        want[c] = c;
    char line[512], version[32] = "";
    size_t mappings = 0, lines = 0;
    while (fgets(line, sizeof line, f)) {
        int major, minor, update;
        if (lines++ == 0) {
            cr_assert_eq(sscanf(line, "# CaseFolding-%d.%d.%d.txt", &major, &minor, &update), 3,
                         "%s does not start with its version line", path);
            snprintf(version, sizeof version, "%d.%d.%d", major, minor, update);
        }
        if (line[0] == '#' || line[0] == '\n')
            continue;
        unsigned src, dst;
        char status;
        cr_assert_eq(sscanf(line, "%x; %c; %x;", &src, &status, &dst), 3, "%s: %s", path, line);
        if (status != 'C' && status != 'S')
            continue;
        cr_assert(src < 0x110000 && dst < 0x110000);
        want[src] = dst;
        mappings++;
    }
    fclose(f);
    cr_assert_str_eq(version, PCW_CASEFOLD_UNICODE_VERSION,
                     "%s is Unicode %s but lib/common/casefold_table.h was made from %s: "
                     "run 'make casefold-table'",
                     path, version, PCW_CASEFOLD_UNICODE_VERSION);
    cr_assert_gt(mappings, 1400, "only %zu C/S mappings read from %s", mappings, path);

    size_t folding = 0;
    for (uint32_t c = 0; c < 0x110000; c++) {
        if (c >= 0xD800 && c <= 0xDFFF)
            continue;
        uint32_t w = want[c];
        cr_assert_eq(pcw__fold(c), w, "U+%04X folds to U+%04X, CaseFolding.txt says U+%04X", c,
                     pcw__fold(c), w);
        if (w == c)
            continue;
        folding++;
        cr_assert_eq(pcw__fold(w), w, "U+%04X's folding U+%04X must fold to itself", c, w);
        /* As one-character names, and inside longer ones. */
        char a[16], b[16];
        size_t an = enc(c, a), bn = enc(w, b);
        cr_assert(pcw__name_equal(a, an, b, bn), "U+%04X and U+%04X must compare equal", c, w);
        cr_assert_eq(pcw__name_hash(a, an), pcw__name_hash(b, bn), "U+%04X / U+%04X hash", c, w);
        cr_assert(pcw__wildcard_match(a, an, b, bn) && pcw__wildcard_match(b, bn, a, an));
        char la[32], lb[32];
        int lan = snprintf(la, sizeof la, "x%sY%s", a, a),
            lbn = snprintf(lb, sizeof lb, "X%sy%s", b, a);
        cr_assert(pcw__name_equal(la, (size_t)lan, lb, (size_t)lbn), "U+%04X in a name", c);
        cr_assert_eq(pcw__name_hash(la, (size_t)lan), pcw__name_hash(lb, (size_t)lbn));
    }
    cr_assert_eq(folding, mappings, "every C/S mapping is checked once");

    /* pcw__name_equal agrees with the folding everywhere, not just on the
     * mapped pairs: each code point against its neighbours and against the
     * neighbours of its folding. */
    for (uint32_t c = 0; c < 0x110000; c++) {
        if (c >= 0xD800 && c <= 0xDFFF)
            continue;
        const uint32_t others[4] = {c ^ 1, c + 1, want[c] ^ 1, c ^ 0x20};
        char a[16], b[16];
        size_t an = enc(c, a);
        for (int k = 0; k < 4; k++) {
            uint32_t o = others[k];
            if (o >= 0x110000 || (o >= 0xD800 && o <= 0xDFFF))
                continue;
            size_t bn = enc(o, b);
            int same = want[c] == want[o];
            cr_assert_eq(pcw__name_equal(a, an, b, bn), same, "U+%04X vs U+%04X", c, o);
            if (same)
                cr_assert_eq(pcw__name_hash(a, an), pcw__name_hash(b, bn));
        }
    }
    free(want);
}

/* ---- a real provider, and a consumer in another process ----------------- */

static pcw_provider *prov;
static pcw_registration *reg;

static void provider_setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
}

static void provider_teardown(void)
{
    pcw_provider_close(prov);
    prov = NULL;
    tu_root_teardown();
}

TestSuite(casefold_provider, .init = provider_setup, .fini = provider_teardown, .timeout = 60);

/* A counterset of two u64 counters; `cb` (may be NULL) its callback. */
static int register_set_cb(const char *name, const char *c1, const char *c2, pcw_callback cb)
{
    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = c1, c[0].size = 8, c[0].offset = 0;
    c[1].id = 2, c[1].name = c2, c[1].size = 8, c[1].offset = 8;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = name,
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 2,
                                  .counters = c,
                                  .callback = cb};
    return pcw_register(&reg, prov, &info);
}

static int register_set(const char *name, const char *c1, const char *c2)
{
    return register_set_cb(name, c1, c2, NULL);
}

Test(casefold_provider, duplicate_instance_names_in_every_script)
{
    cr_assert_eq(register_set("Scripts", "Count", "Total"), PCW_OK);
    uint64_t block[2] = {0, 0};
    pcw_data d = {block, sizeof block};
    size_t created = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        pcw_instance *in;
        cr_assert_eq(pcw_create_instance(&in, reg, groups[g][0], 1, &d), PCW_OK, "%s",
                     groups[g][0]);
        created++;
        for (int k = 0; k < 3; k++)
            cr_assert_eq(pcw_create_instance(&in, reg, groups[g][k], 1, &d), PCW_E_DUPLICATE_NAME,
                         "\"%s\" after \"%s\" must be refused", groups[g][k], groups[g][0]);
    }
    /* What a consumer sees: one instance per group, spelled as created. */
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "SCRIPTS");
    cr_assert_not_null(cs);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, created);
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    size_t at;
    cr_assert_eq(pcw_name_index_find(ix, "άθωσ", strlen("άθωσ"), &at), PCW_OK);
    cr_assert_str_eq(pcw_snapshot_name(&s, at), "ΆΘΩΣ");
    cr_assert_eq(pcw_name_index_find(ix, "Հայաստան", strlen("Հայաստան"), &at), PCW_OK);
    cr_assert_str_eq(pcw_snapshot_name(&s, at), "ՀԱՅԱՍՏԱՆ");
    cr_assert_eq(pcw_name_index_find(ix, "ΑΘΩΣ", strlen("ΑΘΩΣ"), &at), PCW_E_NOT_FOUND);
    pcw_name_index_free(ix);
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
}

/* Every spelling of every group, added by a callback: pcw_add_instance's
 * duplicate table (lib/provider/buffer.c, a hash of its own) keeps the
 * first of each group and drops the others, and keeps every group. */
static int add_every_spelling(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA)
        return PCW_OK;
    uint64_t block[2] = {0, 0};
    pcw_data d = {block, sizeof block};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        for (int k = 0; k < 3; k++) {
            block[0] = g * 10 + (uint64_t)k;
            int rc =
                pcw_add_instance(info->buffer, groups[g][k], (uint32_t)(g * 10 + (size_t)k), 1, &d);
            if (rc != PCW_OK)
                return rc;
        }
    return PCW_OK;
}

Test(casefold_provider, callback_duplicates_in_every_script)
{
    cr_assert_eq(register_set_cb("ScriptsCb", "Count", "Total", add_every_spelling), PCW_OK);
    pcw_consumer *con;
    cr_assert_eq(pcw_consumer_open(&con, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(con, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(con, "SCRIPTSCB");
    cr_assert_not_null(m);
    size_t n = sizeof groups / sizeof groups[0];
    for (int round = 0; round < 2; round++) { /* the second reuses the table */
        pcw_snapshot s = PCW_SNAPSHOT_INIT;
        int cb[1] = {0};
        pcw_collect_report rep = {.callback_status = cb};
        cr_assert_eq(pcw_consumer_collect(con, m, NULL, &s, 0, &rep), PCW_OK);
        cr_assert_eq(rep.failed, 0);
        cr_assert_eq(cb[0], PCW_E_DUPLICATE_NAME);
        cr_assert_eq(s.count, n, "one instance a group, not %zu", s.count);
        for (size_t i = 0; i < s.count; i++) {
            size_t g = s.ids[i] / 10;
            cr_assert_eq(s.ids[i] % 10, 0, "the first spelling is kept (%u)", s.ids[i]);
            cr_assert_str_eq(pcw_snapshot_name(&s, i), groups[g][0]);
        }
        pcw_snapshot_free(&s);
    }
    pcw_consumer_close(con);
}

Test(casefold_provider, counter_names_differing_by_case_refused)
{
    cr_assert_eq(register_set("Bad", "Ǎ", "ǎ"), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(register_set("Bad", "ΟΔΟΣ", "οδος"), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(register_set("Bad", "Ա", "ա"), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(register_set("Good", "Ա", "Բ"), PCW_OK);
}

static void spawn(tu_child *c, char *path, size_t cap, const char *const *args)
{
    cr_assert_eq(tu_spawn_provider(c, args, path, cap), 0, "provider_child did not start");
}

static void finish_ok(tu_child *c)
{
    int st = tu_finish(c, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "provider_child status %#x", st);
}

/* Provider processes publish Armenian/Greek/Vietnamese-named countersets and
 * instances; this consumer finds them by other spellings, merges the
 * countersets two providers spell differently, and the providers refuse
 * differently-cased duplicates. */
TestSuite(casefold_crossproc, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

Test(casefold_crossproc, consumer_finds_by_other_case_across_processes)
{
    tu_child a, b;
    char pa[PATH_MAX], pb[PATH_MAX], reply[256], want[32];
    const char *aa[] = {"--set", "ՀԱՅԱՍՏԱՆ ΟΔΟΣ", "--instances", "2", NULL};
    const char *ab[] = {"--set", "հայաստան οδος", "--instances", "3", "--value-base", "100", NULL};
    spawn(&a, pa, sizeof pa, aa);
    spawn(&b, pb, sizeof pb, ab);

    cr_assert_geq(tu_command(&a, reply, sizeof reply, "create ĐẠI 7"), 0);
    cr_assert_str_eq(reply, "ok 2");
    cr_assert_geq(tu_command(&a, reply, sizeof reply, "create đại 8"), 0);
    snprintf(want, sizeof want, "err %d", PCW_E_DUPLICATE_NAME);
    cr_assert_str_eq(reply, want, "the provider process must refuse \"đại\": %s", reply);
    cr_assert_geq(tu_command(&a, reply, sizeof reply, "create ǍǏǑǓ 9"), 0);
    cr_assert_str_eq(reply, "ok 3");

    /* One segment by itself. */
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pa), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Հայաստան Οδος");
    cr_assert_not_null(cs, "found by another spelling");
    cr_assert_str_eq(cs->name, "ՀԱՅԱՍՏԱՆ ΟΔΟΣ");
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, cs, &s, 0), PCW_OK);
    cr_assert_eq(s.count, 4);
    pcw_name_index *ix;
    cr_assert_eq(pcw_name_index_build(&ix, &s), PCW_OK);
    size_t at;
    cr_assert_eq(pcw_name_index_find(ix, "đại", strlen("đại"), &at), PCW_OK);
    cr_assert_str_eq(pcw_snapshot_name(&s, at), "ĐẠI");
    cr_assert_eq(pcw_name_index_find(ix, "ǎǐǒǔ", strlen("ǎǐǒǔ"), &at), PCW_OK);
    cr_assert_str_eq(pcw_snapshot_name(&s, at), "ǍǏǑǓ");
    pcw_name_index_free(ix);
    pcw_segment_close(seg);

    /* All providers: the two spellings are one counterset. */
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_segment_count(c), 2);
    cr_assert_eq(pcw_consumer_counterset_count(c), 1);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "ՀաՅաՍտաՆ ΟΔΟς");
    cr_assert_not_null(m);
    cr_assert_eq(m->source_count, 2);
    size_t failed = 99;
    cr_assert_eq(pcw_consumer_read(c, m, &s, 0, &failed), PCW_OK);
    cr_assert_eq(failed, 0);
    cr_assert_eq(s.count, 4 + 3);
    cr_assert_null(pcw_consumer_find_counterset(c, "ՀԱՅԱՍՏԱՆ ΟΔΟ"));
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    finish_ok(&a);
    finish_ok(&b);
}
