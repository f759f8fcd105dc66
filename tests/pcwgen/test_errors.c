/* SPDX-License-Identifier: MIT */
/*
 * test_errors.c - pcwgen run as a real process on bad manifests
 * (the files in tests/pcwgen/bad): each must exit 1 and say, on stderr,
 * "FILE:LINE: error: ..." with the right line and problem, and write no
 * output file. Usage errors exit 2.
 */
#define _GNU_SOURCE 1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <pcw/version.h>

#include "pcwgen_test.h"

#define BAD "tests/pcwgen/bad/"

static void expect_error(const char *file, unsigned line, const char *what)
{
    char out[] = "/tmp/pcwgen-err-XXXXXX";
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    close(fd);
    unlink(out); /* pcwgen must not create it */
    const char *args[] = {"-o", out, file, NULL};
    pcwgen_run r;
    pcwgen_exec(&r, args);
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s:%u: error: ", file, line);
    cr_expect_eq(r.status, 1, "%s: exit status %d, stderr: %s", file, r.status, r.err);
    cr_expect(strncmp(r.err, prefix, strlen(prefix)) == 0, "%s: expected \"%s...\", got: %s", file,
              prefix, r.err);
    cr_expect_not_null(strstr(r.err, what), "%s: expected \"%s\" in: %s", file, what, r.err);
    cr_expect_neq(access(out, F_OK), 0, "%s: output written despite the error", file);
    unlink(out);
    pcwgen_run_free(&r);
}

#define ERROR_TEST(name, line, what)                                                               \
    Test(errors, name)                                                                             \
    {                                                                                              \
        expect_error(BAD #name ".man", line, what);                                                \
    }

/* The error classes. */
ERROR_TEST(unknown_type, 11, "unknown type \"perf_counter_bogus\"")
ERROR_TEST(duplicate_id, 12, "duplicate counter id 2")
ERROR_TEST(duplicate_name, 11, "duplicate counter name \"queue LENGTH\"")
ERROR_TEST(base_id_unknown, 10, "baseID=\"9\" names no counter")
ERROR_TEST(perf_time_id_unknown, 10, "perfTimeID=\"7\" names no counter")
ERROR_TEST(perf_freq_id_unknown, 10, "perfFreqID=\"8\" names no counter")
ERROR_TEST(multi_id_unknown, 10, "multiCounterID=\"5\" names no counter")
ERROR_TEST(missing_base_last, 11, "\"Ratio\" (perf_raw_fraction) needs a base counter")
ERROR_TEST(missing_base_next_not_base, 10, "\"Avg\" (perf_average_timer) needs a base counter")
ERROR_TEST(bad_instances, 8, "instances=\"several\" is not one of")
ERROR_TEST(missing_counter_name, 10, "<counter> lacks the required attribute name")
ERROR_TEST(missing_counter_id, 10, "<counter> lacks the required attribute id")
ERROR_TEST(missing_counter_type, 10, "<counter> lacks the required attribute type")
ERROR_TEST(missing_set_guid, 8, "<counterSet> lacks the required attribute guid")
ERROR_TEST(missing_set_name, 8, "<counterSet> lacks the required attribute name")
ERROR_TEST(malformed_xml, 12, "malformed XML: mismatched tag")
ERROR_TEST(empty, 1, "malformed XML: no element found")
ERROR_TEST(
    field_without_struct, 10,
    "has field=\"A\" but no struct attribute, and counterSet \"Bad Set\" declares no <structs>")
ERROR_TEST(field_without_struct_two_structs, 12,
           "counter \"B\" has field=\"B\" but no struct attribute; counterSet \"S\" declares 2 "
           "structs, so struct= is needed")
ERROR_TEST(struct_without_field, 11, "has struct=\"V\" but no field attribute")
ERROR_TEST(unknown_struct, 11, "names struct \"W\", which <structs> of counterSet \"Bad Set\"")
ERROR_TEST(struct_undeclared, 10, "names struct \"W\"")
ERROR_TEST(mixed_styles, 12, "has no struct/field, but other counters")
ERROR_TEST(duplicate_struct, 9, "struct \"V\" is declared twice")
ERROR_TEST(no_counters, 3, "no <counters> section")
ERROR_TEST(wrong_namespace, 5,
           "<counters> is in namespace \"http://schemas.microsoft.com/win/2004/08/events\"")

/* More checks pcwgen makes. */
ERROR_TEST(base_not_base_type, 10, "which is not a base type")
ERROR_TEST(bad_detail_level, 10, "detailLevel=\"expert\" is not standard or advanced")
ERROR_TEST(bad_aggregate, 10, "aggregate=\"median\" is not one of")
ERROR_TEST(bad_default_scale, 10, "defaultScale=\"11\" is not an integer from -10 to 10")
ERROR_TEST(bad_counter_attribute, 11, "name=\"bold\" is not one of")
ERROR_TEST(bad_guid, 8, "guid \"{not-a-guid}\" is not a GUID")
ERROR_TEST(bad_id, 10, "id=\"one\" is not an integer")
ERROR_TEST(bad_symbol, 10, "symbol \"2fast\" is not a C identifier")
ERROR_TEST(empty_counterset, 8, "\"Bad Set\" has no counters")
ERROR_TEST(unknown_element, 10, "unknown element <countr> in the counters namespace")
ERROR_TEST(misplaced_counter, 8, "<counter> must be inside <counterSet>")
ERROR_TEST(ident_collision, 11, "both get the C identifier QueueLength")
ERROR_TEST(duplicate_counterset, 8, "has the same name as counterSet \"Requests\"")
ERROR_TEST(unsupported_schema, 5, "unsupported counters schemaVersion \"3.0\"")
ERROR_TEST(doctype, 2, "DOCTYPE declaration is not allowed")

/* Histogram counters (pcw's extension attributes, namespace urn:pcw). */
ERROR_TEST(histogram_bad_unit, 10, "pcw:histogram=\"us\" is not ns (nanoseconds observed")
ERROR_TEST(histogram_missing_schema, 10, "\"Lat\": pcw:histogram needs pcw:schema too")
ERROR_TEST(histogram_bad_schema, 10, "pcw:schema=\"9\" is not an integer from -4 to 8")
ERROR_TEST(histogram_bad_range, 10, "pcw:minExp=\"5\" is not below pcw:maxExp=\"5\"")
ERROR_TEST(histogram_bad_exp, 10, "pcw:maxExp=\"1e3\" must be integers from -64 to 63")
ERROR_TEST(histogram_negative_schema_range, 10,
           "at pcw:schema=\"-2\" pcw:minExp and pcw:maxExp must be multiples of 4")
ERROR_TEST(histogram_too_many_buckets, 10, "32512 buckets ((maxExp - minExp) * 2^schema)")
ERROR_TEST(histogram_wrong_type, 10,
           "type must be perf_counter_large_rawcount (what CTRPP sees: the sum of the "
           "observations), not \"perf_counter_bulk_count\"")
ERROR_TEST(histogram_unknown_attribute, 10, "unknown attribute pcw:schem (urn:pcw has")
ERROR_TEST(histogram_attribute_alone, 10, "without pcw:histogram")
ERROR_TEST(histogram_bad_aggregate, 10, "a histogram's aggregate is sum")
ERROR_TEST(histogram_base_id, 10, "a histogram refers to no other counter")
ERROR_TEST(histogram_name_collision, 11,
           "counter \"Lat hist\" and counter \"Lat\" (line 10) both make the C name "
           "BadSet_Lat_hist_observe")

Test(errors, unreadable_file)
{
    const char *args[] = {BAD "does-not-exist.man", NULL};
    pcwgen_run r;
    pcwgen_exec(&r, args);
    cr_expect_eq(r.status, 1);
    cr_expect_not_null(strstr(r.err, "does-not-exist.man: error: cannot read"), "%s", r.err);
    pcwgen_run_free(&r);
}

static void expect_usage(const char *const *args, const char *what)
{
    pcwgen_run r;
    pcwgen_exec(&r, args);
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect_not_null(strstr(r.err, what), "expected \"%s\" in: %s", what, r.err);
    cr_expect_eq(r.out_len, 0);
    pcwgen_run_free(&r);
}

Test(usage, no_manifest)
{
    const char *args[] = {NULL};
    expect_usage(args, "usage: pcwgen");
}

Test(usage, unknown_option)
{
    const char *args[] = {"-x", "examples/manifests/kcs.man", NULL};
    expect_usage(args, "unknown or incomplete option -x");
}

Test(usage, missing_option_argument)
{
    const char *args[] = {"examples/manifests/kcs.man", "-o", NULL};
    expect_usage(args, "unknown or incomplete option -o");
}

Test(usage, two_manifests)
{
    const char *args[] = {"examples/manifests/kcs.man", "examples/manifests/ucs.man", NULL};
    expect_usage(args, "more than one manifest");
}

Test(usage, bad_prefix)
{
    const char *args[] = {"-prefix", "1st", "examples/manifests/kcs.man", NULL};
    expect_usage(args, "-prefix \"1st\" is not a C identifier");
}

Test(usage, help)
{
    const char *args[] = {"--help", NULL};
    pcwgen_run r;
    pcwgen_exec(&r, args);
    cr_expect_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "usage: pcwgen"));
    pcwgen_run_free(&r);
}

Test(usage, version)
{
    const char *args[] = {"--version", NULL};
    pcwgen_run r;
    pcwgen_exec(&r, args);
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.out, "pcwgen (pcw) " PCW_VERSION_STRING "\n");
    pcwgen_run_free(&r);
}
