/* SPDX-License-Identifier: MIT */
/*
 * tests/test_register.c - pcw_register: every way to get it wrong is
 * refused with the documented status and publishes nothing; the right ways
 * publish what consumers then read back.
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
static pcw_counter_desc cnt[4];
static pcw_registration_info info;

/* A valid two-counter registration in a fresh provider; each test breaks
 * one thing. */
static void setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
    for (int i = 0; i < 4; i++)
        cnt[i] = pcw_counter_desc_default();
    cnt[0].id = 1, cnt[0].name = "Requests", cnt[0].offset = 0, cnt[0].size = 8;
    cnt[1].id = 2, cnt[1].name = "Errors", cnt[1].offset = 8, cnt[1].size = 4;
    cnt[1].type = PERF_COUNTER_RAWCOUNT;
    memset(&info, 0, sizeof info);
    info.version = PCW_VERSION_1;
    info.name = "Server";
    info.instance_type = PCW_MULTI_INSTANCE;
    info.counter_count = 2;
    info.counters = cnt;
}

static void teardown(void)
{
    pcw_provider_close(prov);
    prov = NULL;
    tu_root_teardown();
}

TestSuite(register, .init = setup, .fini = teardown, .timeout = 30);

/* How many countersets a consumer sees in our segment. */
static size_t published(void)
{
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    size_t n = pcw_segment_counterset_count(seg);
    pcw_segment_close(seg);
    return n;
}

/* Register `info` expecting `want`; a failure must leave *out NULL and
 * publish nothing. */
static void expect(int want, const char *what)
{
    pcw_registration *r = (pcw_registration *)&r; /* poison: must be reset */
    int rc = pcw_register(&r, prov, &info);
    cr_assert_eq(rc, want, "%s: got %d (%s), want %d", what, rc, pcw_status_str(rc), want);
    if (rc != PCW_OK) {
        cr_assert_null(r, "%s: *out not cleared", what);
        cr_assert_eq(published(), 0, "%s: a failed registration was published", what);
    } else {
        pcw_unregister(r);
    }
}

Test(register, null_arguments)
{
    pcw_registration *r;
    cr_assert_eq(pcw_register(NULL, prov, &info), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_register(&r, NULL, &info), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_register(&r, prov, NULL), PCW_E_INVALID_PARAMETER);
    info.counters = NULL;
    expect(PCW_E_INVALID_PARAMETER, "NULL counters");
}

Test(register, version_and_flags)
{
    info.version = 0;
    expect(PCW_E_INVALID_PARAMETER, "version 0");
    info.version = PCW_VERSION_1 + 1;
    expect(PCW_E_INVALID_PARAMETER, "version + 1");
    info.version = 0x300;
    expect(PCW_E_INVALID_PARAMETER, "version 3");
    info.version = PCW_VERSION_1;
    info.flags = 1u << 5;
    expect(PCW_E_INVALID_PARAMETER, "unknown flag");
    info.flags = 0x80000000u | PCW_REG_SEQCOUNT;
    expect(PCW_E_INVALID_PARAMETER, "known + unknown flag");
    info.flags = PCW_REG_SEQCOUNT;
    expect(PCW_OK, "seqcount flag");
}

/* PcwRegister's versions: PCW_VERSION_1 and PCW_VERSION_2 (0x200, which
 * CTRPP's PCW_CURRENT_VERSION is on current Windows) are both accepted. */
Test(register, version_2_and_current_version)
{
    cr_assert_eq(PCW_VERSION_2, 0x200u);
    cr_assert_eq(PCW_CURRENT_VERSION, PCW_VERSION_2);
    info.version = PCW_VERSION_2;
    expect(PCW_OK, "version 2");
    info.version = PCW_CURRENT_VERSION;
    info.flags = PCW_REG_SEQCOUNT | PCW_REG_CACHELINE;
    expect(PCW_OK, "current version with pcw's flags");
}

/* pcw's own flags stay out of the bits PCW defines: bit 0 is
 * PcwRegistrationSiloNeutral, accepted (and meaningless on Linux) with
 * PCW_VERSION_2, refused with PCW_VERSION_1 as Windows refuses it. */
Test(register, pcw_flags_leave_pcws_bits_alone)
{
    cr_assert_eq(PCW_REG_SILO_NEUTRAL, 1u);
    cr_assert_eq(PCW_REG_SEQCOUNT & 0xFFFFu, 0u, "PCW_REG_SEQCOUNT in PCW's low bits");
    cr_assert_eq(PCW_REG_CACHELINE & 0xFFFFu, 0u, "PCW_REG_CACHELINE in PCW's low bits");
    info.version = PCW_VERSION_2;
    info.flags = PCW_REG_SILO_NEUTRAL;
    expect(PCW_OK, "silo neutral, version 2");
    info.version = PCW_VERSION_1;
    expect(PCW_E_INVALID_PARAMETER, "silo neutral, version 1");
    char why[256];
    pcw_register_error(PCW_E_INVALID_PARAMETER, &info, why, sizeof why);
    cr_assert(strstr(why, "PCW_VERSION_2"), "%s", why);
    info.version = PCW_VERSION_2;
    info.flags = 1u << 1;
    expect(PCW_E_INVALID_PARAMETER, "unknown PCW bit 1");
    /* Bit 0 does not switch the sequence count on (it did when
     * PCW_REG_SEQCOUNT was bit 0). */
    info.flags = PCW_REG_SILO_NEUTRAL;
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_counterset(seg, 0);
    cr_assert_not_null(cs);
    cr_assert_eq(cs->flags & PCW_CSET_F_SEQCOUNT, 0u, "silo-neutral bit became a seqcount");
    pcw_segment_close(seg);
    pcw_unregister(r);
}

Test(register, counterset_names_and_strings)
{
    static char big[PCW_MAX_STRING_BYTES + 2];
    memset(big, 'x', sizeof big - 1);
    info.name = NULL;
    expect(PCW_E_INVALID_PARAMETER, "NULL name");
    info.name = "";
    expect(PCW_E_INVALID_PARAMETER, "empty name");
    info.name = "bad\xC3";
    expect(PCW_E_INVALID_PARAMETER, "truncated UTF-8 name");
    info.name = "bad\xED\xA0\x80";
    expect(PCW_E_INVALID_PARAMETER, "surrogate in name");
    info.name = big;
    expect(PCW_E_INVALID_PARAMETER, "name over PCW_MAX_STRING_BYTES");
    big[PCW_MAX_STRING_BYTES] = 0; /* exactly the maximum */
    expect(PCW_OK, "name of PCW_MAX_STRING_BYTES bytes");
    big[PCW_MAX_STRING_BYTES] = 'x';
    info.name = "Server";
    info.description = big;
    expect(PCW_E_INVALID_PARAMETER, "description too long");
    info.description = "\xFF";
    expect(PCW_E_INVALID_PARAMETER, "description not UTF-8");
    info.description = NULL;
    info.guid = "\xC0\x80";
    expect(PCW_E_INVALID_PARAMETER, "guid overlong NUL");
    info.guid = NULL;
    info.uri = big;
    expect(PCW_E_INVALID_PARAMETER, "uri too long");
    info.uri = NULL;
    info.symbol = "\x80";
    expect(PCW_E_INVALID_PARAMETER, "symbol not UTF-8");
    info.symbol = NULL;
    expect(PCW_OK, "all optional strings NULL");
}

Test(register, instance_type)
{
    info.instance_type = PCW_INSTANCE_TYPE_MAX_ + 1;
    expect(PCW_E_INVALID_PARAMETER, "instance type past max");
    info.instance_type = 0xFFFFFFFFu;
    expect(PCW_E_INVALID_PARAMETER, "instance type ~0");
    for (uint32_t t = 0; t <= PCW_INSTANCE_TYPE_MAX_; t++) {
        info.instance_type = t;
        expect(PCW_OK, "every valid instance type");
    }
}

Test(register, counter_count)
{
    info.counter_count = 0;
    expect(PCW_E_INVALID_PARAMETER, "no counters");
    info.counter_count = PCW_MAX_COUNTERS + 1;
    expect(PCW_E_TOO_MANY_COUNTERS, "PCW_MAX_COUNTERS + 1");
    info.counter_count = 0xFFFFFFFFu;
    expect(PCW_E_TOO_MANY_COUNTERS, "~0 counters");
}

Test(register, max_counters_ok)
{
    pcw_counter_desc *many = calloc(PCW_MAX_COUNTERS, sizeof *many);
    char(*names)[16] = calloc(PCW_MAX_COUNTERS, 16);
    for (uint32_t i = 0; i < PCW_MAX_COUNTERS; i++) {
        many[i] = pcw_counter_desc_default();
        snprintf(names[i], 16, "c%u", i);
        many[i].id = i, many[i].name = names[i], many[i].offset = 8 * (i % 1024);
        many[i].block = i / 1024;
    }
    info.counters = many;
    info.counter_count = PCW_MAX_COUNTERS;
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_counterset(seg, 0);
    cr_assert_eq(cs->counter_count, PCW_MAX_COUNTERS);
    cr_assert_eq(cs->block_count, 4);
    cr_assert_str_eq(cs->counters[4095].name, "c4095");
    cr_assert_eq(cs->counters[4095].data_offset, 3 * 8192 + 8 * 1023);
    pcw_segment_close(seg);
    pcw_unregister(r);
    free(many);
    free(names);
}

Test(register, counter_fields)
{
    cnt[1].size = 2;
    expect(PCW_E_INVALID_PARAMETER, "size 2");
    cnt[1].size = 16;
    expect(PCW_E_INVALID_PARAMETER, "size 16");
    cnt[1].size = 8;
    cnt[1].type = PERF_COUNTER_COUNTER;
    expect(PCW_E_INVALID_PARAMETER, "a 32-bit rate in 8 bytes");
    cnt[1].type = PERF_COUNTER_RAWCOUNT;
    cnt[1].size = 4;
    cnt[1].offset = 10;
    expect(PCW_E_INVALID_PARAMETER, "4-byte counter at offset 10");
    cnt[1].offset = 8;
    cnt[0].offset = 4;
    expect(PCW_E_INVALID_PARAMETER, "8-byte counter at offset 4");
    cnt[0].offset = PCW_MAX_BLOCK_SIZE;
    expect(PCW_E_INVALID_PARAMETER, "offset past the largest block");
    cnt[0].offset = 0xFFFFFFF8u;
    expect(PCW_E_INVALID_PARAMETER, "offset near 2^32");
    cnt[0].offset = 0;
    cnt[1].type = 0x12345678u;
    expect(PCW_E_INVALID_PARAMETER, "unknown counter type");
    cnt[1].type = PERF_COUNTER_RAWCOUNT;
    cnt[1].aggregate = PCW_AGGREGATE_MAX_ + 1;
    expect(PCW_E_INVALID_PARAMETER, "bad aggregate");
    cnt[1].aggregate = PCW_AGGREGATE_MAX;
    cnt[1].attributes = PCW_ATTR_ALL_ + 1;
    expect(PCW_E_INVALID_PARAMETER, "unknown attribute bit");
    cnt[1].attributes = PCW_ATTR_ALL_;
    cnt[1].detail_level = 150;
    expect(PCW_E_INVALID_PARAMETER, "bad detail level");
    cnt[1].detail_level = PCW_DETAIL_WIZARD;
    cnt[1].default_scale = 11;
    expect(PCW_E_INVALID_PARAMETER, "default_scale 11");
    cnt[1].default_scale = -11;
    expect(PCW_E_INVALID_PARAMETER, "default_scale -11");
    cnt[1].default_scale = -10;
    cnt[1].id = PCW_NO_COUNTER;
    expect(PCW_E_INVALID_PARAMETER, "counter id PCW_NO_COUNTER");
    cnt[1].id = 2;
    cnt[1].name = NULL;
    expect(PCW_E_INVALID_PARAMETER, "NULL counter name");
    cnt[1].name = "";
    expect(PCW_E_INVALID_PARAMETER, "empty counter name");
    cnt[1].name = "Err\xF8";
    expect(PCW_E_INVALID_PARAMETER, "counter name not UTF-8");
    cnt[1].name = "Errors";
    cnt[1].description = "\xE2\x82";
    expect(PCW_E_INVALID_PARAMETER, "counter description truncated");
    cnt[1].description = NULL;
    cnt[1].uri = "\xFE";
    expect(PCW_E_INVALID_PARAMETER, "counter uri");
    cnt[1].uri = NULL;
    cnt[1].symbol = "\xFE";
    expect(PCW_E_INVALID_PARAMETER, "counter symbol");
    cnt[1].symbol = NULL;
    /* Every field at its extreme valid value is accepted and published. */
    expect(PCW_OK, "extreme valid values");
}

Test(register, every_known_type_accepted)
{
    static const uint32_t types[] = {PERF_COUNTER_COUNTER,        PERF_COUNTER_TIMER,
                                     PERF_COUNTER_BULK_COUNT,     PERF_COUNTER_TEXT,
                                     PERF_COUNTER_NODATA,         PERF_ELAPSED_TIME,
                                     PERF_COUNTER_HISTOGRAM_TYPE, PERF_PRECISION_OBJECT_TIMER};
    cnt[0].size = 0; /* each type's natural size */
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        cnt[0].type = types[i];
        expect(PCW_OK, "known type");
    }
}

Test(register, duplicate_counters)
{
    cnt[1].id = 1;
    expect(PCW_E_INVALID_PARAMETER, "duplicate counter id");
    cnt[1].id = 2;
    cnt[1].name = "REQUESTS";
    expect(PCW_E_INVALID_PARAMETER, "counter names differing only by case");
    cnt[0].name = "\xC3\x89"
                  "v\xC3\xA9nements";         /* Événements */
    cnt[1].name = "\xC3\xA9V\xC3\x89NEMENTS"; /* éVÉNEMENTS */
    expect(PCW_E_INVALID_PARAMETER, "non-ASCII counter names differing by case");
    cnt[1].name = "Errors";
    expect(PCW_OK, "distinct names");
}

Test(register, references_must_name_a_counter)
{
    uint32_t *fields[4] = {&cnt[0].base_ref, &cnt[0].perf_time_ref, &cnt[0].perf_freq_ref,
                           &cnt[0].multi_ref};
    for (int k = 0; k < 4; k++) {
        *fields[k] = PCW_REF(99);
        expect(PCW_E_INVALID_PARAMETER, "reference to no counter");
        *fields[k] = PCW_REF(2);
        expect(PCW_OK, "reference to counter 2");
        *fields[k] = 0;
    }
}

Test(register, blocks)
{
    uint32_t sizes[3] = {16, 8, 64};
    cnt[1].block = 1;
    cnt[1].offset = 0;
    info.block_count = 1;
    expect(PCW_E_INVALID_PARAMETER, "counter in block 1 of 1");
    info.block_count = PCW_MAX_BLOCKS + 1;
    expect(PCW_E_INVALID_PARAMETER, "too many blocks");
    cnt[1].block = PCW_MAX_BLOCKS;
    info.block_count = 0;
    expect(PCW_E_INVALID_PARAMETER, "block index past PCW_MAX_BLOCKS");
    cnt[1].block = 1;
    info.block_count = 0;
    info.block_sizes = sizes;
    expect(PCW_E_INVALID_PARAMETER, "block sizes with block_count 0");
    info.block_count = 2;
    sizes[0] = 4;
    expect(PCW_E_INVALID_PARAMETER, "block 0 smaller than its counter");
    sizes[0] = 8, sizes[1] = 2;
    expect(PCW_E_INVALID_PARAMETER, "block 1 smaller than its counter");
    sizes[1] = PCW_MAX_BLOCK_SIZE + 1;
    expect(PCW_E_INVALID_PARAMETER, "block over PCW_MAX_BLOCK_SIZE");
    sizes[1] = 4;
    expect(PCW_OK, "exact block sizes");
}

/* Register and return what a consumer sees of it. */
static const pcw_counterset *register_and_read(pcw_registration **r, pcw_segment **seg)
{
    cr_assert_eq(pcw_register(r, prov, &info), PCW_OK);
    cr_assert_eq(pcw_segment_open(seg, pcw_provider_path(prov)), PCW_OK);
    cr_assert_eq(pcw_segment_counterset_count(*seg), 1);
    return pcw_segment_counterset(*seg, 0);
}

Test(register, derived_block_size)
{
    pcw_registration *r;
    pcw_segment *seg;
    const pcw_counterset *cs = register_and_read(&r, &seg);
    cr_assert_eq(cs->block_count, 1);
    cr_assert_eq(cs->block_sizes[0], 12, "end of the last counter");
    cr_assert_eq(cs->data_size, 16, "rounded up to 8");
    cr_assert_str_eq(cs->name, "Server");
    cr_assert_eq(cs->instance_type, PCW_MULTI_INSTANCE);
    cr_assert_eq(cs->counters[1].detail_level, PCW_DETAIL_STANDARD);
    pcw_segment_close(seg);
    pcw_unregister(r);
}

Test(register, explicit_and_multiple_blocks)
{
    uint32_t sizes[3] = {100, 4, 32};
    cnt[1].block = 2, cnt[1].offset = 28;
    cnt[2] = pcw_counter_desc_default();
    cnt[2].id = 3, cnt[2].name = "Small", cnt[2].block = 1, cnt[2].size = 4;
    cnt[2].type = PERF_COUNTER_RAWCOUNT;
    info.counter_count = 3;
    info.block_count = 3;
    info.block_sizes = sizes;
    info.description = "A server";
    info.guid = "{ab}";
    info.uri = "urn:x";
    info.symbol = "SERVER";
    pcw_registration *r;
    pcw_segment *seg;
    const pcw_counterset *cs = register_and_read(&r, &seg);
    cr_assert_eq(cs->block_count, 3);
    cr_assert_eq(cs->block_sizes[0], 100);
    cr_assert_eq(cs->block_sizes[1], 4);
    cr_assert_eq(cs->block_sizes[2], 32);
    cr_assert_eq(cs->block_offsets[0], 0);
    cr_assert_eq(cs->block_offsets[1], 104, "blocks start 8-aligned");
    cr_assert_eq(cs->block_offsets[2], 112);
    cr_assert_eq(cs->data_size, 144);
    cr_assert_eq(cs->counters[1].data_offset, 140);
    cr_assert_eq(cs->counters[2].data_offset, 104);
    cr_assert_str_eq(cs->description, "A server");
    cr_assert_str_eq(cs->guid, "{ab}");
    cr_assert_str_eq(cs->uri, "urn:x");
    cr_assert_str_eq(cs->symbol, "SERVER");
    pcw_segment_close(seg);
    pcw_unregister(r);
}

Test(register, same_name_twice_in_one_provider)
{
    pcw_registration *a, *b;
    cr_assert_eq(pcw_register(&a, prov, &info), PCW_OK);
    info.name = "SERVER";
    cr_assert_eq(pcw_register(&b, prov, &info), PCW_OK);
    cr_assert_eq(published(), 2);
    pcw_unregister(a);
    cr_assert_eq(published(), 1);
    pcw_unregister(b);
    cr_assert_eq(published(), 0);
}

Test(register, status_strings_distinct)
{
    const char *seen[32];
    int n = 0;
    for (int s = PCW_OK; s >= PCW_E_CONNECTIONS_FULL; s--) {
        const char *m = pcw_status_str(s);
        cr_assert_not_null(m);
        cr_assert_str_neq(m, "unknown status", "status %d has no message", s);
        for (int k = 0; k < n; k++)
            cr_assert_str_neq(m, seen[k], "status %d repeats a message", s);
        seen[n++] = m;
    }
    cr_assert_str_eq(pcw_status_str(1), "unknown status");
    cr_assert_str_eq(pcw_status_str(PCW_E_CONNECTIONS_FULL - 1), "unknown status");
}
