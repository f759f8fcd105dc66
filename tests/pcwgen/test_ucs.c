/* SPDX-License-Identifier: MIT */
/*
 * test_ucs.c - a provider built on the header pcwgen generates (no
 * -prefix) from the real user-mode sample manifest ucs.man, unmodified.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include <criterion/criterion.h>

#include "pcwgen_test.h"
#include "tu2.h"
#include "ucs.h"

static pcw_provider *prov;

static void setup(void)
{
    pcwgen_testdir_setup();
    pcw_provider_options o = UserModeCountersSample_ProviderOptions();
    cr_assert_eq(pcw_provider_open(&prov, &o), PCW_OK);
}

static void teardown(void)
{
    CounterCleanup();
    pcw_provider_close(prov);
    pcwgen_testdir_teardown();
}

TestSuite(ucs, .init = setup, .fini = teardown);

Test(ucs, generated_value_structs)
{
    /* One field per counter, 4 bytes for DWORD types. */
    cr_assert_eq(sizeof(GeometricWave_values), 8);
    cr_assert_eq(sizeof(TrignometricWave_values), 20);
    cr_assert_eq(offsetof(TrignometricWave_values, RawFraction), 16);
}

Test(ucs, geometric_registration_info)
{
    pcw_registration_info info;
    InitRegistrationInformationGeometricWave(NULL, NULL, &info);
    cr_assert_str_eq(info.name, "Geometric Waves");
    cr_assert_str_eq(info.guid, "{ffeeaadd-c923-4794-b696-70577630b5cf}");
    cr_assert_eq(info.instance_type, PCW_MULTI_AGGREGATE);
    cr_assert_eq(info.counter_count, 2);
    cr_assert_eq(info.block_count, 1);
    cr_assert_eq(info.block_sizes[0], sizeof(GeometricWave_values));
    cr_assert_str_eq(info.counters[0].name, "Triangle Wave");
    cr_assert_eq(info.counters[0].aggregate, PCW_AGGREGATE_TOTAL); /* sum */
    cr_assert_str_eq(info.counters[1].name, "Square Wave");
    cr_assert_eq(info.counters[1].aggregate, PCW_AGGREGATE_AVERAGE);
    cr_assert_eq(info.counters[1].size, 4);
    cr_assert_eq(info.counters[1].offset, 4);
}

Test(ucs, trignometric_registration_info)
{
    pcw_registration_info info;
    InitRegistrationInformationTrignometricWave(NULL, NULL, &info);
    cr_assert_eq(info.instance_type, PCW_SINGLE_INSTANCE);
    cr_assert_eq(info.counter_count, 5);
    const pcw_counter_desc *c = info.counters;
    cr_assert_eq(c[2].default_scale, 1);
    cr_assert_str_eq(c[3].name, "Constant Number");
    cr_assert_eq(c[3].type, PERF_RAW_BASE);
    cr_assert_eq(c[3].attributes, PCW_ATTR_NO_DISPLAY);
    cr_assert_eq(c[4].id, TrignometricWave_RawFraction_ID);
    cr_assert_eq(c[4].type, PERF_RAW_FRACTION);
    cr_assert_eq(c[4].base_ref, PCW_REF(4), "baseID=\"4\"");
    cr_assert_eq(c[4].attributes, PCW_ATTR_REFERENCE);
    cr_assert_str_eq(c[4].description, "RawFraction ; Takes counter with ID = 4 as base counter");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(c[i].attributes, PCW_ATTR_REFERENCE);
}

Test(ucs, publishes_counters)
{
    cr_assert_eq(CounterInitialize(prov, NULL, NULL), PCW_OK);
    cr_assert_eq(ucs_tu2_trig_handle(), TrignometricWave);

    pcw_instance *trig;
    cr_assert_eq(ucs_tu2_create_trig(&trig), PCW_OK);
    TrignometricWave_values *v = TrignometricWave_values_of(trig);
    cr_assert_eq(v->RawFraction, 50);
    cr_assert_eq(v->ConstantNumber, 200);
    v->SineWave = 11;
    uint32_t sine;
    memcpy(&sine,
           (const char *)pcw_instance_block(trig, 0) + offsetof(TrignometricWave_values, SineWave),
           4);
    cr_assert_eq(sine, 11);

    pcw_instance *a, *b;
    GeometricWave_values g = {.TriangleWave = 3, .SquareWave = 4};
    cr_assert_eq(CreateGeometricWave(&a, "first", &g, NULL), PCW_OK);
    cr_assert_eq(CreateGeometricWave(&b, "second", NULL, NULL), PCW_OK);
    cr_assert_eq(GeometricWave_values_of(a)->SquareWave, 4);
    cr_assert_eq(GeometricWave_values_of(b)->SquareWave, 0);
    pcw_u32_add(&GeometricWave_values_of(b)->TriangleWave, 5);
    cr_assert_eq(GeometricWave_values_of(b)->TriangleWave, 5);
    CloseGeometricWave(a);
    CloseGeometricWave(b);
    CloseTrignometricWave(trig);
}

Test(ucs, initialize_failure_leaves_no_handle)
{
    cr_assert_eq(CounterInitialize(NULL, NULL, NULL), PCW_E_INVALID_PARAMETER);
    cr_assert_null(GeometricWave);
    cr_assert_null(TrignometricWave);
    cr_assert_eq(RegisterGeometricWave(prov, NULL, NULL), PCW_OK);
    cr_assert_not_null(GeometricWave);
    CounterCleanup();
    cr_assert_null(GeometricWave);
    cr_assert_null(TrignometricWave);
}
