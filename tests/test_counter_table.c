/* SPDX-License-Identifier: MIT */
/*
 * tests/test_counter_table.c - counter tables as data (issue 12): a
 * static const table of PCW_COUNTER entries registers; a zero-filled
 * descriptor means no base, no time, no frequency, no multi counter,
 * default scale, standard detail, natural size; registration cross-checks
 * type and size and requires a base where the type needs one (the counter
 * after it by default, Windows' rule); pcw_register_error names the
 * counter and the rule it broke; PCW_COUNTER's compile-time check refuses
 * a field whose size does not suit the type (compiled as C and C++).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

static pcw_provider *prov;

static void setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
}

static void teardown(void)
{
    pcw_provider_close(prov);
    tu_root_teardown();
}

TestSuite(table, .init = setup, .fini = teardown, .timeout = 30);

struct web {
    uint64_t requests;
    uint32_t active;
    uint32_t hits;
    uint32_t lookups;
    uint32_t flags;
    uint64_t busy_time; /* precision timer */
    uint64_t timestamp; /* its timestamp (a base type) */
};

static const pcw_counter_desc web_table[] = {
    PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct web, requests),
    PCW_COUNTER(2, "Active", PERF_COUNTER_RAWCOUNT, struct web, active),
    PCW_COUNTER(3, "Hit Ratio", PERF_RAW_FRACTION, struct web, hits),
    PCW_COUNTER(4, "Lookups", PERF_RAW_BASE, struct web, lookups),
    PCW_COUNTER(5, "Flags", PERF_COUNTER_RAWCOUNT_HEX, struct web, flags),
    PCW_COUNTER(6, "Busy", PERF_PRECISION_100NS_TIMER, struct web, busy_time),
    PCW_COUNTER(7, "Busy Timestamp", PERF_PRECISION_TIMESTAMP, struct web, timestamp),
};

/* Register `counters`, then read the counterset back as a consumer. */
static const pcw_counterset *publish(const pcw_counter_desc *counters, uint32_t n,
                                     pcw_segment **seg)
{
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Table",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = n,
                                  .counters = counters};
    pcw_registration *r;
    char why[256];
    int rc = pcw_register(&r, prov, &info);
    cr_assert_eq(rc, PCW_OK, "%s", pcw_register_error(rc, &info, why, sizeof why));
    cr_assert_eq(pcw_segment_open(seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(*seg, "Table");
    cr_assert_not_null(cs);
    return cs;
}

Test(table, static_table_registers)
{
    pcw_segment *seg;
    const pcw_counterset *cs = publish(web_table, 7, &seg);
    cr_assert_eq(cs->counter_count, 7);
    const pcw_counter *c = cs->counters;
    cr_assert_eq(c[0].size, 8);
    cr_assert_eq(c[0].data_offset, offsetof(struct web, requests));
    cr_assert_eq(c[1].size, 4);
    cr_assert_eq(c[2].base_id, 4, "the counter after a fraction is its base");
    cr_assert_eq(c[5].base_id, 7, "a precision timer's timestamp follows it");
    for (int i = 0; i < 7; i++) {
        if (i != 2 && i != 5)
            cr_assert_eq(c[i].base_id, PCW_NO_COUNTER, "counter %d", i);
        cr_assert_eq(c[i].perf_time_id, PCW_NO_COUNTER);
        cr_assert_eq(c[i].perf_freq_id, PCW_NO_COUNTER);
        cr_assert_eq(c[i].multi_id, PCW_NO_COUNTER);
        cr_assert_eq(c[i].detail_level, PCW_DETAIL_STANDARD);
        cr_assert_eq(c[i].default_scale, 0);
    }
    cr_assert_eq(cs->data_size, sizeof(struct web));
    pcw_segment_close(seg);
}

/* PCW_COUNTER_EX: the manifest's aggregate, detail level and description
 * in a static table, beside PCW_COUNTER's zeros (issue 24 item 8). */
static const pcw_counter_desc ex_table[] = {
    PCW_COUNTER_EX(1, "Requests", PERF_COUNTER_BULK_COUNT, struct web, requests,
                   PCW_AGGREGATE_TOTAL, PCW_DETAIL_STANDARD, "Requests served"),
    PCW_COUNTER_IN_BLOCK_EX(0, 2, "Active", PERF_COUNTER_RAWCOUNT, struct web, active,
                            PCW_AGGREGATE_MAX, PCW_DETAIL_ADVANCED, NULL),
    PCW_COUNTER(3, "Flags", PERF_COUNTER_RAWCOUNT_HEX, struct web, flags),
};

Test(table, counter_ex_sets_aggregate_detail_and_description)
{
    pcw_segment *seg;
    const pcw_counterset *cs = publish(ex_table, 3, &seg);
    const pcw_counter *c = cs->counters;
    cr_assert_eq(c[0].aggregate, PCW_AGGREGATE_TOTAL);
    cr_assert_eq(c[0].detail_level, PCW_DETAIL_STANDARD);
    cr_assert_str_eq(c[0].description, "Requests served");
    cr_assert_eq(c[0].data_offset, offsetof(struct web, requests));
    cr_assert_eq(c[0].size, 8);
    cr_assert_eq(c[1].aggregate, PCW_AGGREGATE_MAX);
    cr_assert_eq(c[1].detail_level, PCW_DETAIL_ADVANCED);
    cr_assert_str_eq(c[1].description, "");
    cr_assert_eq(c[1].data_offset, offsetof(struct web, active));
    cr_assert_eq(c[2].aggregate, PCW_AGGREGATE_UNDEFINED);
    cr_assert_eq(c[2].detail_level, PCW_DETAIL_STANDARD);
    pcw_segment_close(seg);
}

/* Zero means none, even in a table that has a counter with id 0: before,
 * a zero base_id pointed every counter at counter 0. */
Test(table, zero_filled_descriptor)
{
    pcw_counter_desc c[2];
    memset(c, 0, sizeof c);
    c[0].name = "Zero"; /* id 0, PERF_COUNTER_RAWCOUNT_HEX (type 0), natural size */
    c[1].id = 1, c[1].name = "Large", c[1].type = PERF_COUNTER_LARGE_RAWCOUNT, c[1].offset = 8;
    pcw_segment *seg;
    const pcw_counterset *cs = publish(c, 2, &seg);
    cr_assert_eq(cs->counters[0].id, 0);
    cr_assert_eq(cs->counters[0].type, PERF_COUNTER_RAWCOUNT_HEX);
    cr_assert_eq(cs->counters[0].size, 4, "size 0: the type's natural size");
    cr_assert_eq(cs->counters[1].size, 8, "size 0: the type's natural size");
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(cs->counters[i].base_id, PCW_NO_COUNTER);
        cr_assert_eq(cs->counters[i].perf_time_id, PCW_NO_COUNTER);
        cr_assert_eq(cs->counters[i].perf_freq_id, PCW_NO_COUNTER);
        cr_assert_eq(cs->counters[i].multi_id, PCW_NO_COUNTER);
    }
    pcw_segment_close(seg);
}

/* PCW_REF(0) names counter 0. */
Test(table, references_to_counter_zero)
{
    pcw_counter_desc c[3];
    memset(c, 0, sizeof c);
    c[0].name = "Base", c[0].type = PERF_LARGE_RAW_BASE;
    c[1].id = 1, c[1].name = "Fraction", c[1].type = PERF_LARGE_RAW_FRACTION, c[1].offset = 8;
    c[1].base_ref = PCW_REF(0);
    c[2].id = 2, c[2].name = "Elapsed", c[2].type = PERF_ELAPSED_TIME, c[2].offset = 16;
    c[2].perf_time_ref = PCW_REF(0), c[2].perf_freq_ref = PCW_REF(1);
    pcw_segment *seg;
    const pcw_counterset *cs = publish(c, 3, &seg);
    cr_assert_eq(cs->counters[1].base_id, 0);
    cr_assert_eq(cs->counters[2].perf_time_id, 0);
    cr_assert_eq(cs->counters[2].perf_freq_id, 1);
    cr_assert_eq(cs->counters[2].base_id, PCW_NO_COUNTER);
    pcw_segment_close(seg);
}

/* Register `c` expecting failure `want`; the message must contain every
 * string of `parts`. */
static void refused(const pcw_counter_desc *c, uint32_t n, int want, const char *const *parts)
{
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Table",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = n,
                                  .counters = c};
    pcw_registration *r = (pcw_registration *)&r;
    int rc = pcw_register(&r, prov, &info);
    cr_assert_eq(rc, want);
    cr_assert_null(r);
    char why[256];
    const char *m = pcw_register_error(rc, &info, why, sizeof why);
    cr_assert_eq(m, why);
    for (; *parts; parts++)
        cr_assert(strstr(m, *parts), "\"%s\" lacks \"%s\"", m, *parts);
}

Test(table, size_must_suit_the_type)
{
    pcw_counter_desc c[2];
    memset(c, 0, sizeof c);
    c[0].id = 10, c[0].name = "Requests", c[0].type = PERF_COUNTER_BULK_COUNT, c[0].size = 4;
    refused(c, 1, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"counter 0 (id 10, \"Requests\")", "PERF_COUNTER_BULK_COUNT",
                                  "64-bit", "8 bytes, not 4", NULL});
    c[0].type = PERF_COUNTER_COUNTER, c[0].size = 8;
    refused(c, 1, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"\"Requests\"", "PERF_COUNTER_COUNTER", "32-bit",
                                  "4 bytes, not 8", NULL});
    c[0].type = PERF_RAW_BASE; /* a 32-bit base in 8 bytes */
    refused(c, 1, PCW_E_INVALID_PARAMETER, (const char *const[]){"PERF_RAW_BASE", NULL});
    c[0].size = 3;
    refused(c, 1, PCW_E_INVALID_PARAMETER, (const char *const[]){"size 3", "4 or 8", NULL});
    /* A plain 32-bit number may be stored in 8 bytes (Windows providers do:
     * microsoft/xdp-for-windows). */
    c[0].type = PERF_COUNTER_RAWCOUNT, c[0].size = 8;
    pcw_segment *seg;
    const pcw_counterset *cs = publish(c, 1, &seg);
    cr_assert_eq(cs->counters[0].size, 8);
    pcw_segment_close(seg);
}

/* Register `c` as "Ticks", return the size its counter 0 is published
 * with, and unregister. */
static uint32_t published_size(const pcw_counter_desc *c, uint32_t n)
{
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Ticks",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = n,
                                  .counters = c};
    pcw_registration *r;
    char why[256];
    int rc = pcw_register(&r, prov, &info);
    cr_assert_eq(rc, PCW_OK, "%s", pcw_register_error(rc, &info, why, sizeof why));
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Ticks");
    cr_assert_not_null(cs);
    uint32_t size = cs->counters[0].size;
    pcw_segment_close(seg);
    pcw_unregister(r);
    return size;
}

/* Issue 27: a tick type whose 4-byte field wraps in seconds (4.3 s of
 * summed time at the default 10^9 ticks per second) may be 8 bytes - a pcw
 * extension - and is refused in 4 bytes unless the counterset gives it a
 * coarser clock (perf_freq_ref), with a message that says both. */
Test(table, tick_types_may_be_8_bytes_and_4_must_not_wrap)
{
    static const uint32_t ticks[] = {PERF_AVERAGE_TIMER, PERF_COUNTER_QUEUELEN_TYPE};
    for (size_t i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        pcw_counter_desc c[3];
        memset(c, 0, sizeof c);
        c[0].id = 1, c[0].name = "Latency", c[0].type = ticks[i], c[0].size = 8;
        c[1].id = 2, c[1].name = "Latency Base", c[1].type = PERF_AVERAGE_BASE, c[1].offset = 8;
        c[2].id = 3, c[2].name = "Ticks Per Second", c[2].type = PERF_COUNTER_LARGE_RAWCOUNT;
        c[2].offset = 16;
        cr_assert_eq(published_size(c, 3), 8, "%s in 8 bytes", pcw__counter_type_name(ticks[i]));
        c[0].size = 4;
        refused(c, 3, PCW_E_INVALID_PARAMETER,
                (const char *const[]){"\"Latency\"", pcw__counter_type_name(ticks[i]), "4.3 s",
                                      "uint64_t", "perf_freq_ref", NULL});
        c[0].size = 0; /* the natural size is 4 */
        refused(c, 3, PCW_E_INVALID_PARAMETER, (const char *const[]){"uint64_t", NULL});
        /* With a frequency counter the provider chose its ticks: 4 bytes. */
        c[0].perf_freq_ref = PCW_REF(3);
        cr_assert_eq(published_size(c, 3), 4);
    }
}

Test(table, a_type_that_needs_a_base)
{
    pcw_counter_desc c[3];
    memset(c, 0, sizeof c);
    c[0].id = 1, c[0].name = "Hits", c[0].type = PERF_RAW_FRACTION;
    refused(c, 1, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"counter 0 (id 1, \"Hits\")", "PERF_RAW_FRACTION",
                                  "needs a base counter", "right after it", NULL});
    c[1].id = 2, c[1].name = "Misses", c[1].type = PERF_COUNTER_RAWCOUNT, c[1].offset = 4;
    refused(c, 2, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"\"Hits\"", "the counter after it", "\"Misses\"",
                                  "PERF_COUNTER_RAWCOUNT", "not a base type", NULL});
    c[2].id = 3, c[2].name = "Lookups", c[2].type = PERF_RAW_BASE, c[2].offset = 8;
    c[0].base_ref = PCW_REF(2); /* names a counter, not a base */
    refused(c, 3, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"base_ref", "\"Misses\"", "not a base type", NULL});
    c[0].base_ref = PCW_REF(9);
    refused(c, 3, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"base_ref names counter id 9", "PCW_REF", NULL});
    c[0].base_ref = PCW_REF(3);
    pcw_segment *seg;
    const pcw_counterset *cs = publish(c, 3, &seg);
    cr_assert_eq(cs->counters[0].base_id, 3);
    pcw_segment_close(seg);
}

Test(table, messages_name_field_and_rule)
{
    pcw_counter_desc c[2];
    memset(c, 0, sizeof c);
    c[0].id = 1, c[0].name = "A";
    c[1].id = 1, c[1].name = "B", c[1].offset = 4;
    refused(c, 2, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"counter 1 (id 1, \"B\")", "also counter 0", NULL});
    c[1].id = 2, c[1].name = "a";
    refused(c, 2, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"counter 1 (id 2, \"a\")", "case-insensitively", NULL});
    c[1].name = NULL;
    refused(c, 2, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"counter 1 (id 2)", "name is missing", NULL});
    c[1].name = "B", c[1].offset = 2;
    refused(c, 2, PCW_E_INVALID_PARAMETER,
            (const char *const[]){"offset 2", "multiple of its size", NULL});
    c[1].offset = 4, c[1].type = 0x12345678u;
    refused(c, 2, PCW_E_INVALID_PARAMETER, (const char *const[]){"0x12345678", NULL});
    c[1].type = 0, c[1].detail_level = 150;
    refused(c, 2, PCW_E_INVALID_PARAMETER, (const char *const[]){"detail_level 150", NULL});
    c[1].detail_level = 0;
    /* Counterset-level rules. */
    pcw_registration_info info = {.version = 0x300,
                                  .name = "Table",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 2,
                                  .counters = c};
    pcw_registration *r;
    char why[256];
    int rc = pcw_register(&r, prov, &info);
    cr_assert_eq(rc, PCW_E_INVALID_PARAMETER);
    cr_assert(strstr(pcw_register_error(rc, &info, why, sizeof why), "PCW_CURRENT_VERSION"), "%s",
              why);
    info.version = PCW_VERSION_1, info.counter_count = PCW_MAX_COUNTERS + 1;
    rc = pcw_register(&r, prov, &info);
    cr_assert_eq(rc, PCW_E_TOO_MANY_COUNTERS);
    cr_assert(strstr(pcw_register_error(rc, &info, why, sizeof why), "at most 4096"), "%s", why);
    /* A failure that is not info's: the status in words. */
    info.counter_count = 2;
    cr_assert_str_eq(pcw_register_error(PCW_E_NO_MEMORY, &info, why, sizeof why),
                     pcw_status_str(PCW_E_NO_MEMORY));
    cr_assert_str_eq(pcw_register_error(PCW_E_INVALID_HANDLE, &info, why, sizeof why),
                     pcw_status_str(PCW_E_INVALID_HANDLE));
    /* A short buffer is cut, never overrun. */
    c[1].id = 1;
    char tiny[8];
    cr_assert_eq(strlen(pcw_register_error(PCW_E_INVALID_PARAMETER, &info, tiny, sizeof tiny)), 7);
    cr_assert_str_eq(pcw_register_error(PCW_E_INVALID_PARAMETER, &info, tiny, 0), "");
}

/* PCW_COUNTER's compile-time check: a mismatched field does not compile,
 * and the error names the field (C) and the rule the field breaks for its
 * type (issue 25: it said "a LARGE type is 8 bytes", which does not tell a
 * user that PERF_COUNTER_BULK_COUNT is one). `bad` is the counter type
 * given to the field `field` of struct s; `good` is one its size suits. */
#define TABLE_SRC                                                                                  \
    "#include <pcw/types.h>\n"                                                                     \
    "struct s { uint32_t small; uint64_t big; uint16_t tiny; };\n"                                 \
    "extern const pcw_counter_desc t[];\n"                                                         \
    "const pcw_counter_desc t[] = {\n"                                                             \
    "    PCW_COUNTER(1, \"Ok\", PERF_COUNTER_LARGE_RAWCOUNT, struct s, big),\n"                    \
    "    PCW_COUNTER(2, \"Tried\", %s, struct s, %s),\n"                                           \
    "};\n"
static void compile_fails(const char *compiler, const char *ext, const char *bad, const char *good,
                          const char *field, const char *want)
{
    char dir[] = "/tmp/pcw-ctc-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char src[PATH_MAX], cmd[2 * PATH_MAX + 256], log[PATH_MAX];
    snprintf(src, sizeof src, "%s/t.%s", dir, ext);
    snprintf(log, sizeof log, "%s/log", dir);
    char text[1024];
    snprintf(text, sizeof text, TABLE_SRC, bad, field);
    cr_assert_eq(tu_write_file(src, text, strlen(text), 0600), 0);
    snprintf(cmd, sizeof cmd, "%s -std=%s -fsyntax-only " PCW_TEST_INCLUDES " %s > %s 2>&1",
             compiler, strcmp(ext, "c") ? "c++17" : "c11", src, log);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 0, "%s accepted %s in %s", compiler, bad, field);
    size_t len;
    char *out = (char *)tu_read_file(log, 1 << 20, &len);
    cr_assert_not_null(out);
    cr_assert(strstr(out, want), "%s: no \"%s\" in:\n%s", compiler, want, out);
    free(out);
    /* The same file with a type the field suits compiles: the failure
     * above is the check, not the harness. */
    if (good) {
        snprintf(text, sizeof text, TABLE_SRC, good, field);
        cr_assert_eq(tu_write_file(src, text, strlen(text), 0600), 0);
        st = system(cmd);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s refused %s in %s", compiler, good,
                  field);
    }
    unlink(src), unlink(log), rmdir(dir);
}

Test(table, pcw_counter_checks_sizes_at_compile_time_c)
{
    compile_fails("cc", "c", "PERF_COUNTER_BULK_COUNT", "PERF_COUNTER_COUNTER", "small",
                  "struct s.small: its size does not suit the counter type: this type is 64-bit "
                  "(PCW_PERF_SIZE_LARGE: PERF_COUNTER_BULK_COUNT");
    compile_fails("cc", "c", "PERF_COUNTER_COUNTER", "PERF_COUNTER_BULK_COUNT", "big",
                  "struct s.big: its size does not suit the counter type: this type is 32-bit");
    /* A tick type may be 8 bytes (issue 27): PERF_AVERAGE_TIMER compiles in big. */
    compile_fails("cc", "c", "PERF_AVERAGE_BASE", "PERF_AVERAGE_TIMER", "big",
                  "this type is 32-bit (only PERF_COUNTER_RAWCOUNT, PERF_COUNTER_RAWCOUNT_HEX and "
                  "the tick types PERF_AVERAGE_TIMER and PERF_COUNTER_QUEUELEN_TYPE may also be 8 "
                  "bytes)");
    compile_fails("cc", "c", "PERF_COUNTER_RAWCOUNT", NULL, "tiny",
                  "struct s.tiny: its size does not suit the counter type: a counter field is 4 "
                  "or 8 bytes");
}

/* A 4-byte tick type in PCW_COUNTER (which sets no perf_freq_ref) would be
 * refused by pcw_register: the compiler says so first, and what to do. */
Test(table, pcw_counter_refuses_a_4_byte_tick_type_at_compile_time)
{
    static const char *const want =
        "a 4-byte PERF_AVERAGE_TIMER or PERF_COUNTER_QUEUELEN_TYPE counts nanoseconds and wraps "
        "after 4.3 s of summed time: declare the field uint64_t";
    compile_fails("cc", "c", "PERF_AVERAGE_TIMER", "PERF_COUNTER_RAWCOUNT", "small", want);
    compile_fails("cc", "c", "PERF_COUNTER_QUEUELEN_TYPE", NULL, "small", want);
    compile_fails("c++", "cc", "PERF_AVERAGE_TIMER", "PERF_COUNTER_RAWCOUNT", "small", want);
}

Test(table, pcw_counter_checks_sizes_at_compile_time_cxx)
{
    compile_fails("c++", "cc", "PERF_COUNTER_BULK_COUNT", "PERF_COUNTER_COUNTER", "small",
                  "PCW_COUNTER: the field's size does not suit the counter type: this type is "
                  "64-bit (PCW_PERF_SIZE_LARGE: PERF_COUNTER_BULK_COUNT");
    compile_fails("c++", "cc", "PERF_COUNTER_COUNTER", "PERF_COUNTER_BULK_COUNT", "big",
                  "PCW_COUNTER: the field's size does not suit the counter type: this type is "
                  "32-bit");
    compile_fails("c++", "cc", "PERF_COUNTER_RAWCOUNT", NULL, "tiny",
                  "a counter field is 4 or 8 bytes");
}
