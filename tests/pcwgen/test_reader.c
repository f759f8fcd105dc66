/* SPDX-License-Identifier: MIT */
/*
 * test_reader.c - the manifest reader as a function (mf_parse on a
 * buffer): type mapping, defaults, XML variations, the model it builds.
 */
#define _GNU_SOURCE 1

#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include <pcw/types.h>

#include "emit.h"
#include "manifest.h"

#define NS "http://schemas.microsoft.com/win/2005/12/counters"

/* A manifest with one counterset holding `counters` (XML text). */
static int parse_set(mf_manifest *m, mf_error *e, const char *set_attrs, const char *counters)
{
    char buf[16384];
    snprintf(buf, sizeof buf,
             "<counters xmlns='" NS "' schemaVersion='2.0'>\n"
             "<provider providerName='P' providerGuid='{11111111-2222-3333-4444-555555555555}'>\n"
             "<counterSet guid='{11111111-2222-3333-4444-000000000001}' uri='S' name='S' %s>\n"
             "%s\n"
             "</counterSet></provider></counters>\n",
             set_attrs, counters);
    return mf_parse(m, buf, strlen(buf), e);
}

static const mf_counterset *first_set(const mf_manifest *m)
{
    cr_assert_eq(m->nproviders, 1);
    cr_assert_geq(m->providers[0].nsets, 1);
    return &m->providers[0].sets[0];
}

Test(reader, every_type_maps_to_its_perf_value)
{
    size_t n;
    const mf_type_info *t = mf_type_table(&n);
    cr_assert_geq(n, 39);
    for (size_t i = 0; i < n; i++) {
        cr_assert(pcw_counter_type_known(t[i].value), "%s", t[i].name);
        cr_assert_eq(mf_type_lookup(t[i].name), &t[i]);
        /* The macro is the upper-cased name (the timestamp alias aside). */
        char up[64];
        size_t k = 0;
        for (; t[i].name[k]; k++)
            up[k] = (char)(t[i].name[k] >= 'a' && t[i].name[k] <= 'z' ? t[i].name[k] - 32
                                                                      : t[i].name[k]);
        up[k] = 0;
        cr_assert_str_eq(t[i].macro, up);
    }
    cr_assert_eq(mf_type_lookup("perf_counter_rawcount")->value, PERF_COUNTER_RAWCOUNT);
    cr_assert_eq(mf_type_lookup("perf_counter_large_rawcount")->value, PERF_COUNTER_LARGE_RAWCOUNT);
    cr_assert_eq(mf_type_lookup("perf_average_timer")->value, PERF_AVERAGE_TIMER);
    cr_assert_eq(mf_type_lookup("perf_100nsec_multi_timer_inv")->value,
                 PERF_100NSEC_MULTI_TIMER_INV);
    cr_assert_eq(mf_type_lookup("perf_counter_histogram_type")->value, PERF_COUNTER_HISTOGRAM_TYPE);
    cr_assert_null(mf_type_lookup("PERF_COUNTER_RAWCOUNT")); /* the schema is case-sensitive */
}

Test(reader, sizes_defaults_and_attributes)
{
    mf_manifest m;
    mf_error e;
    int rc = parse_set(&m, &e, "",
                       "<counter id='1' uri='a' name='a' type='perf_counter_rawcount'/>"
                       "<counter id='0x10' uri='b' name='b' type='perf_counter_bulk_count'"
                       " detailLevel=' advanced ' defaultScale='-10' aggregate='max'>"
                       "<counterAttributes><counterAttribute name='reference'/>"
                       "<counterAttribute name='noDigitGrouping'/>"
                       "<counterAttribute name='displayAsReal'/></counterAttributes></counter>");
    cr_assert_eq(rc, 0, "%lu: %s", e.line, e.msg);
    const mf_counterset *s = first_set(&m);
    cr_assert_eq(s->instance_type, PCW_SINGLE_INSTANCE, "instances defaults to single");
    cr_assert_str_eq(s->ident, "S");
    cr_assert_eq(s->kernel_style, 0);
    const mf_counter *a = &s->counters[0], *b = &s->counters[1];
    cr_assert_eq(a->size, 4);
    cr_assert_eq(a->detail_level, PCW_DETAIL_STANDARD);
    cr_assert_eq(a->aggregate, PCW_AGGREGATE_UNDEFINED);
    cr_assert_eq(a->base_id, PCW_NO_COUNTER);
    cr_assert_eq(b->id, 16);
    cr_assert_eq(b->size, 8);
    cr_assert_eq(b->detail_level, PCW_DETAIL_ADVANCED);
    cr_assert_eq(b->default_scale, -10);
    cr_assert_eq(b->aggregate, PCW_AGGREGATE_MAX);
    cr_assert_eq(b->attributes,
                 PCW_ATTR_REFERENCE | PCW_ATTR_NO_DIGIT_GROUPING | PCW_ATTR_DISPLAY_AS_REAL);
    cr_assert_str_eq(m.schema_version, "2.0");
    mf_free(&m);
}

Test(reader, implicit_and_explicit_base)
{
    mf_manifest m;
    mf_error e;
    int rc = parse_set(&m, &e, "instances='multiple'",
                       "<counter id='5' uri='a' name='avg' type='perf_average_timer'/>"
                       "<counter id='9' uri='b' name='base' type='perf_average_base'/>"
                       "<counter id='1' uri='c' name='frac' type='perf_raw_fraction' baseID='3'/>"
                       "<counter id='2' uri='d' name='x' type='perf_counter_rawcount'/>"
                       "<counter id='3' uri='e' name='rb' type='perf_raw_base'/>");
    cr_assert_eq(rc, 0, "%lu: %s", e.line, e.msg);
    const mf_counterset *s = first_set(&m);
    cr_assert_eq(s->instance_type, PCW_MULTI_INSTANCE);
    cr_assert_eq(s->counters[0].base_id, 9);
    cr_assert(s->counters[0].base_implicit);
    cr_assert_eq(s->counters[2].base_id, 3);
    cr_assert(!s->counters[2].base_implicit);
    cr_assert_eq(s->counters[1].base_id, PCW_NO_COUNTER);
    mf_free(&m);
}

Test(reader, identifiers_from_names)
{
    mf_manifest m;
    mf_error e;
    int rc = parse_set(
        &m, &e, "symbol='Sym'",
        "<counter id='1' uri='a' name='% Processor time' type='perf_counter_rawcount'/>"
        "<counter id='2' uri='b' name='2nd value' type='perf_counter_rawcount'/>"
        "<counter id='3' uri='c' name='int' type='perf_counter_rawcount'/>"
        "<counter id='4' uri='d' name='Ünïcode x' type='perf_counter_rawcount'/>"
        "<counter id='5' uri='e' name='n' symbol='Custom' type='perf_counter_rawcount'/>");
    cr_assert_eq(rc, 0, "%lu: %s", e.line, e.msg);
    const mf_counterset *s = first_set(&m);
    cr_assert_str_eq(s->ident, "Sym");
    cr_assert_str_eq(s->counters[0].ident, "ProcessorTime");
    cr_assert_str_eq(s->counters[1].ident, "_2ndValue");
    cr_assert_str_eq(s->counters[2].ident, "int_");
    cr_assert_str_eq(s->counters[3].ident, "NCodeX");
    cr_assert_str_eq(s->counters[4].ident, "Custom");
    cr_assert_str_eq(s->counters[3].name, "Ünïcode x");
    mf_free(&m);
}

Test(reader, bom_prefixes_and_surrounding_content)
{
    /* A BOM, a namespace prefix instead of a default namespace, foreign
     * elements and text around and inside <counters>. */
    const char *xml =
        "\xEF\xBB\xBF<?xml version='1.0' encoding='utf-8'?>\n"
        "<root xmlns:c='" NS "' xmlns:o='urn:other'>\n"
        "<o:junk>text<c:notcounters/></o:junk>\n"
        "<c:counters schemaVersion='1.0'>\n"
        "<o:note>ignored</o:note>\n"
        "<c:provider providerName='P' providerGuid='11111111-2222-3333-4444-555555555555'>\n"
        "<c:counterSet guid='{11111111-2222-3333-4444-000000000001}' uri='S' name='S'>\n"
        "<c:counter id='1' uri='a' name='a' type='perf_counter_rawcount'/>\n"
        "</c:counterSet></c:provider></c:counters></root>\n";
    mf_manifest m;
    mf_error e;
    int rc = mf_parse(&m, xml, strlen(xml), &e);
    /* <c:notcounters> is in the counters namespace but outside <counters>. */
    cr_assert_eq(rc, -1);
    cr_assert_eq(e.line, 3);
    cr_assert(strstr(e.msg, "unknown element <notcounters>"), "%s", e.msg);
    mf_free(&m);

    const char *ok =
        "\xEF\xBB\xBF<root xmlns:c='" NS "' xmlns:o='urn:other'>\n"
        "<o:junk>text</o:junk>\n"
        "<c:counters schemaVersion='1.0'>\n"
        "<o:note>ignored</o:note>\n"
        "<c:provider providerName='P' providerGuid='11111111-2222-3333-4444-555555555555'>\n"
        "<c:counterSet guid='{11111111-2222-3333-4444-000000000001}' uri='S' name='S'>\n"
        "<c:counter id='1' uri='a' name='a' type='perf_counter_rawcount'/>\n"
        "</c:counterSet></c:provider></c:counters></root>\n";
    rc = mf_parse(&m, ok, strlen(ok), &e);
    cr_assert_eq(rc, 0, "%lu: %s", e.line, e.msg);
    cr_assert_eq(first_set(&m)->ncounters, 1);
    cr_assert_eq(first_set(&m)->line, 6);
    cr_assert_eq(first_set(&m)->counters[0].line, 7);
    mf_free(&m);
}

Test(reader, utf16_manifest)
{
    /* expat reads UTF-16 with a BOM; strings come out as UTF-8. */
    const char *ascii = "<counters xmlns='" NS "'><provider providerName='P\xC3\xA9' "
                        "providerGuid='11111111-2222-3333-4444-555555555555'>"
                        "<counterSet guid='11111111-2222-3333-4444-000000000001' uri='S' name='S'>"
                        "<counter id='1' uri='a' name='a' type='perf_counter_rawcount'/>"
                        "</counterSet></provider></counters>";
    char buf[2048];
    size_t n = 0;
    buf[n++] = (char)0xFF, buf[n++] = (char)0xFE;
    for (const unsigned char *p = (const unsigned char *)ascii; *p; p++) {
        unsigned cp = *p;
        if (*p == 0xC3) /* the one two-byte sequence above: é */
            cp = 0xE9, p++;
        buf[n++] = (char)(cp & 0xFF), buf[n++] = (char)(cp >> 8);
    }
    mf_manifest m;
    mf_error e;
    cr_assert_eq(mf_parse(&m, buf, n, &e), 0, "%lu: %s", e.line, e.msg);
    cr_assert_str_eq(m.providers[0].name, "P\xC3\xA9");
    mf_free(&m);
}

Test(reader, history_attribute_warns)
{
    mf_manifest m;
    mf_error e;
    int rc = parse_set(&m, &e, "",
                       "<counter id='1' uri='a' name='a' type='perf_counter_rawcount'>"
                       "<counterAttributes><counterAttribute name='history'/></counterAttributes>"
                       "</counter>");
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(m.nwarnings, 1);
    cr_assert(strstr(m.warnings[0].msg, "history"));
    cr_assert_eq(first_set(&m)->counters[0].attributes, 0);
    mf_free(&m);
}

Test(reader, strings_are_escaped_in_the_header)
{
    mf_manifest m;
    mf_error e;
    int rc = parse_set(&m, &e, "description='say \"hi\" \\ ?\?= */ &#9;tab'",
                       "<counter id='1' uri='a' name='a' type='perf_counter_rawcount'/>");
    cr_assert_eq(rc, 0, "%s", e.msg);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    emit_options o = {"", "x.man"};
    cr_assert_eq(emit_header(f, &m, &o), 0);
    fclose(f);
    cr_assert(strstr(text, "info->description = \"say \\\"hi\\\" \\\\ ?\\?= */ \\ttab\";"), "%s",
              strstr(text, "info->description"));
    free(text);
    mf_free(&m);
}

Test(reader, schema_versions)
{
    static const char *const good[] = {"1.0", "1.1", "1.12", "2.0", " 2.0 "};
    static const char *const bad[] = {"3.0", "1.", "2.1", "x", ""};
    for (size_t i = 0; i < 10; i++) {
        int ok = i < 5;
        const char *v = ok ? good[i] : bad[i - 5];
        char buf[1024];
        snprintf(
            buf, sizeof buf,
            "<counters xmlns='" NS "' schemaVersion='%s'><provider providerName='P' "
            "providerGuid='11111111-2222-3333-4444-555555555555'><counterSet "
            "guid='11111111-2222-3333-4444-000000000001' uri='S' name='S'><counter id='1' "
            "uri='a' name='a' type='perf_counter_rawcount'/></counterSet></provider></counters>",
            v);
        mf_manifest m;
        mf_error e;
        cr_expect_eq(mf_parse(&m, buf, strlen(buf), &e), ok ? 0 : -1, "\"%s\": %s", v, e.msg);
        mf_free(&m);
    }
}

Test(reader, field_without_struct_uses_the_only_struct)
{
    /* microsoft/xdp-for-windows' xdppcw.man gives field= alone when the
     * counterset has one <struct>; CTRPP takes that struct. */
    mf_manifest m;
    mf_error e;
    int rc = parse_set(&m, &e, "",
                       "<structs><struct name='Vals' type='VALS'/></structs>"
                       "<counter id='1' uri='a' name='a' type='perf_counter_rawcount' field='A'/>"
                       "<counter id='2' uri='b' name='b' type='perf_counter_bulk_count'"
                       " struct='Vals' field='B'/>");
    cr_assert_eq(rc, 0, "%lu: %s", e.line, e.msg);
    const mf_counterset *s = first_set(&m);
    cr_assert(s->kernel_style);
    cr_assert_eq(s->nstructs, 1);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_str_eq(s->counters[i].struct_name, "Vals");
        cr_assert_eq(s->counters[i].block, 0);
    }
    cr_assert_str_eq(s->counters[0].field, "A");
    mf_free(&m);
}

Test(reader, field_without_struct_among_several_structs)
{
    mf_manifest m;
    mf_error e;
    int rc = parse_set(&m, &e, "",
                       "<structs><struct name='V' type='VALS'/><struct name='W' type='WALS'/>"
                       "</structs>\n"
                       "<counter id='1' uri='a' name='Alpha' type='perf_counter_rawcount'"
                       " struct='V' field='A'/>\n"
                       "<counter id='2' uri='b' name='Beta' type='perf_counter_rawcount'"
                       " field='B'/>");
    cr_assert_eq(rc, -1);
    cr_assert_eq(e.line, 6);
    cr_assert(strstr(e.msg, "counter \"Beta\" has field=\"B\" but no struct attribute"), "%s",
              e.msg);
    cr_assert(strstr(e.msg, "2 structs"), "%s", e.msg);
    cr_assert(strstr(e.msg, "struct= is needed"), "%s", e.msg);
    mf_free(&m);
}

Test(reader, every_instances_form)
{
    static const struct {
        const char *name, *macro;
        uint32_t type;
    } forms[] = {
        {"single", "PCW_SINGLE_INSTANCE", PCW_SINGLE_INSTANCE},
        {"multiple", "PCW_MULTI_INSTANCE", PCW_MULTI_INSTANCE},
        {"globalAggregate", "PCW_GLOBAL_AGGREGATE", PCW_GLOBAL_AGGREGATE},
        {"multipleAggregate", "PCW_MULTI_AGGREGATE", PCW_MULTI_AGGREGATE},
        {"globalAggregateHistory", "PCW_GLOBAL_AGGREGATE_HISTORY", PCW_GLOBAL_AGGREGATE_HISTORY},
        {"instanceAggregate", "PCW_INSTANCE_AGGREGATE", PCW_INSTANCE_AGGREGATE},
        {"multipleAggregateHistory", "PCW_MULTI_AGGREGATE_HISTORY", PCW_MULTI_AGGREGATE_HISTORY},
        {"instanceAggregateHistory", "PCW_INSTANCE_AGGREGATE_HISTORY",
         PCW_INSTANCE_AGGREGATE_HISTORY},
    };
    cr_assert_eq(sizeof forms / sizeof forms[0], PCW_INSTANCE_TYPE_MAX_ + 1);
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        char attrs[128];
        snprintf(attrs, sizeof attrs, "instances=' %s '", forms[i].name);
        mf_manifest m;
        mf_error e;
        int rc = parse_set(&m, &e, attrs,
                           "<counter id='1' uri='a' name='a' type='perf_counter_rawcount'/>");
        cr_assert_eq(rc, 0, "%s: %lu: %s", forms[i].name, e.line, e.msg);
        const mf_counterset *s = first_set(&m);
        cr_assert_eq(s->instance_type, forms[i].type, "%s", forms[i].name);
        cr_assert_str_eq(s->instances, forms[i].name);
        cr_assert_str_eq(s->instance_macro, forms[i].macro);
        mf_free(&m);
    }
    /* The schema is case-sensitive; the error lists every accepted form. */
    mf_manifest m;
    mf_error e;
    int rc = parse_set(&m, &e, "instances='InstanceAggregate'",
                       "<counter id='1' uri='a' name='a' type='perf_counter_rawcount'/>");
    cr_assert_eq(rc, -1);
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        cr_assert(strstr(e.msg, forms[i].name), "%s missing from: %s", forms[i].name, e.msg);
    mf_free(&m);
}
