/*
 * test_kcs.c - a provider built on the header pcwgen generates from the
 * real kernel-mode sample manifest kcs.man (unmodified): the registration
 * carries what the manifest says, registers, and publishes counters.
 */
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include <criterion/criterion.h>

#include "provider_types.h"

#include "fake_add.h"
#include "kcs.h"
#include "pcwgen_test.h"
#include "tu2.h"

static pcw_provider *prov;

static void setup(void)
{
    pcwgen_testdir_setup();
    pcw_provider_options o = KcsKernelCountersSample_ProviderOptions();
    cr_assert_eq(pcw_provider_open(&prov, &o), PCW_OK);
}

static void teardown(void)
{
    KcsCounterCleanup();
    pcw_provider_close(prov);
    prov = NULL;
    pcwgen_testdir_teardown();
}

TestSuite(kcs, .init = setup, .fini = teardown);

Test(kcs, provider_attributes)
{
    cr_assert_str_eq(KcsKernelCountersSample_PROVIDER_NAME, "KernelCountersSample");
    cr_assert_str_eq(KcsKernelCountersSample_PROVIDER_GUID,
                     "{d2ffffff-965a-4cf9-9c07-fe25378c2a23}");
    cr_assert_str_eq(KcsKernelCountersSample_PROVIDER_TYPE, "kernelMode");
    cr_assert_str_eq(KcsKernelCountersSample_PROVIDER_CALLBACK, "custom");
    cr_assert_str_eq(KcsKernelCountersSample_APPLICATION_IDENTITY, "Kcs.sys");
    cr_assert_null(KcsKernelCountersSample_PROVIDER_SYMBOL);
    /* The segment is under our private PCW_DIR, not /dev/shm. */
    cr_assert_eq(strncmp(pcw_provider_path(prov), pcwgen_testdir(), strlen(pcwgen_testdir())), 0);
}

Test(kcs, geometric_registration_info)
{
    pcw_registration_info info;
    int ctx;
    KcsInitRegistrationInformationGeometricWave(NULL, &ctx, &info);
    cr_assert_eq(info.version, PCW_VERSION_1);
    cr_assert_str_eq(info.name, "Geometric Waves");
    cr_assert_str_eq(info.description, "This counter set displays a Triangle and a Square wave");
    cr_assert_str_eq(info.guid, "{d2ffffff-c923-4794-b696-70577630b5cf}");
    cr_assert_str_eq(info.uri, "Microsoft.Wdk.Samples.Kcs.GeometricWave");
    cr_assert_str_eq(info.symbol, "GeometricWave");
    cr_assert_eq(info.instance_type, PCW_MULTI_AGGREGATE);
    cr_assert_eq(info.callback_context, &ctx);
    cr_assert_eq(info.block_count, 1);
    cr_assert_eq(info.block_sizes[0], sizeof(GEOMETRIC_WAVE_VALUES));
    cr_assert_eq(info.counter_count, 2);

    const pcw_counter_desc *c = info.counters;
    cr_assert_eq(c[0].id, 1);
    cr_assert_eq(KcsGeometricWave_Triangle_ID, 1);
    cr_assert_str_eq(c[0].name, "Triangle");
    cr_assert_str_eq(c[0].uri, "Microsoft.Wdk.Samples.Kcs.GeometricWave.Triangle");
    cr_assert_str_eq(c[0].description, "This counter displays triangle wave");
    cr_assert_null(c[0].symbol);
    cr_assert_eq(c[0].type, PERF_COUNTER_RAWCOUNT);
    cr_assert_eq(c[0].block, 0);
    cr_assert_eq(c[0].offset, offsetof(GEOMETRIC_WAVE_VALUES, Triangle));
    cr_assert_eq(c[0].size, 4);
    cr_assert_eq(c[0].aggregate, PCW_AGGREGATE_AVERAGE);
    cr_assert_eq(c[0].detail_level, PCW_DETAIL_STANDARD);
    cr_assert_eq(c[0].attributes, 0);
    cr_assert_eq(c[0].default_scale, 0);
    cr_assert_eq(c[0].base_id, PCW_NO_COUNTER);
    cr_assert_eq(c[0].perf_time_id, PCW_NO_COUNTER);
    cr_assert_eq(c[0].perf_freq_id, PCW_NO_COUNTER);
    cr_assert_eq(c[0].multi_id, PCW_NO_COUNTER);

    cr_assert_eq(c[1].id, KcsGeometricWave_SquareWave_ID);
    cr_assert_eq(c[1].id, 2);
    cr_assert_str_eq(c[1].name, "Square Wave");
    cr_assert_eq(c[1].offset, offsetof(GEOMETRIC_WAVE_VALUES, Square));
    cr_assert_eq(c[1].aggregate, PCW_AGGREGATE_AVERAGE);
}

Test(kcs, trignometric_registration_info)
{
    pcw_registration_info info;
    KcsInitRegistrationInformationTrignometricWave(NULL, NULL, &info);
    cr_assert_str_eq(info.name, "Trignometric Waves");
    cr_assert_eq(info.instance_type, PCW_SINGLE_INSTANCE);
    cr_assert_eq(info.counter_count, 3);
    static const char *const names[] = {"Sine Wave", "Cosine Wave", "Constant Value"};
    static const uint32_t offsets[] = {offsetof(TRIGNOMETRIC_WAVE_VALUES, Sine),
                                       offsetof(TRIGNOMETRIC_WAVE_VALUES, Cosine),
                                       offsetof(TRIGNOMETRIC_WAVE_VALUES, Constant)};
    for (uint32_t i = 0; i < 3; i++) {
        const pcw_counter_desc *c = &info.counters[i];
        cr_assert_eq(c->id, i + 1);
        cr_assert_str_eq(c->name, names[i]);
        cr_assert_eq(c->offset, offsets[i], "offsetof, not manifest order");
        cr_assert_eq(c->attributes, PCW_ATTR_REFERENCE);
        cr_assert_eq(c->aggregate, PCW_AGGREGATE_UNDEFINED);
    }
}

Test(kcs, publishes_counters_from_two_translation_units)
{
    /* Register through the other translation unit: this one must see the
     * same handle (one weak definition survives the link). */
    cr_assert_eq(kcs_tu2_initialize(prov), PCW_OK);
    cr_assert_not_null(KcsGeometricWave);
    cr_assert_not_null(KcsTrignometricWave);
    cr_assert_eq(kcs_tu2_geometric_handle(), KcsGeometricWave);

    pcw_instance *small, *medium, *large;
    GEOMETRIC_WAVE_VALUES init = {40, 60};
    cr_assert_eq(KcsCreateGeometricWave(&small, "Small Wave", &init), PCW_OK);
    cr_assert_eq(kcs_tu2_create_wave(&medium, "Medium Wave", 30, 40), PCW_OK);
    cr_assert_eq(KcsCreateGeometricWave(&large, "Large Wave", NULL), PCW_OK);
    cr_assert_neq(pcw_instance_id(small), pcw_instance_id(medium));

    /* Initial values arrived in the segment. */
    GEOMETRIC_WAVE_VALUES *s = KcsGeometricWave_GeometricWaveValues_of(small);
    cr_assert_eq(s->Triangle, 40);
    cr_assert_eq(s->Square, 60);
    GEOMETRIC_WAVE_VALUES *m = KcsGeometricWave_GeometricWaveValues_of(medium);
    cr_assert_eq(m->Triangle, 50);
    cr_assert_eq(m->Square, 70);
    cr_assert_eq(KcsGeometricWave_GeometricWaveValues_of(large)->Square, 0);

    /* Updates through the typed pointer are what a reader of the block
     * finds at the registered offsets. */
    pcw_u32_set(&s->Triangle, 41);
    pcw_u32_add(&s->Square, 2);
    pcw_registration_info info;
    KcsInitRegistrationInformationGeometricWave(NULL, NULL, &info);
    const unsigned char *raw = pcw_instance_block(small, 0);
    uint32_t tri, sq;
    memcpy(&tri, raw + info.counters[0].offset, 4);
    memcpy(&sq, raw + info.counters[1].offset, 4);
    cr_assert_eq(tri, 41);
    cr_assert_eq(sq, 62);

    /* Instance names are unique case-insensitively within the set. */
    pcw_instance *dup;
    cr_assert_eq(KcsCreateGeometricWave(&dup, "SMALL WAVE", NULL), PCW_E_DUPLICATE_NAME);

    /* Single instance: the empty name only (the instance type reached
     * the registration). */
    pcw_instance *trig, *bad;
    TRIGNOMETRIC_WAVE_VALUES tv = {.Sine = 1, .Cosine = 2, .Constant = 3};
    cr_assert_eq(KcsCreateTrignometricWave(&bad, "named", &tv), PCW_E_INVALID_NAME);
    cr_assert_eq(KcsCreateTrignometricWave(&trig, "", &tv), PCW_OK);
    TRIGNOMETRIC_WAVE_VALUES *t = KcsTrignometricWave_TrignometricWaveValues_of(trig);
    cr_assert_eq(t->Sine, 1);
    cr_assert_eq(t->Cosine, 2);
    cr_assert_eq(t->Constant, 3);

    KcsCloseGeometricWave(small);
    KcsCloseGeometricWave(medium);
    KcsCloseGeometricWave(large);
    KcsCloseTrignometricWave(trig);
    KcsCounterCleanup();
    cr_assert_null(KcsGeometricWave);
    cr_assert_null(kcs_tu2_geometric_handle());
}

Test(kcs, create_before_register_fails)
{
    pcw_instance *inst;
    cr_assert_null(KcsGeometricWave);
    cr_assert_neq(KcsCreateGeometricWave(&inst, "x", NULL), PCW_OK);
}

Test(kcs, register_twice_in_one_provider)
{
    /* Each Register call is a pcw_register; the handle is the last. */
    cr_assert_eq(KcsRegisterGeometricWave(prov, NULL, NULL), PCW_OK);
    KcsUnregisterGeometricWave();
    cr_assert_null(KcsGeometricWave);
    cr_assert_eq(KcsRegisterGeometricWave(prov, NULL, NULL), PCW_OK);
}

Test(kcs, add_passes_blocks_to_pcw_add_instance)
{
    if (!kcs_tu2_add_is_fake())
        cr_skip_test("a real pcw_add_instance exists: covered by its own tests");
    pcw_buffer *buffer = (pcw_buffer *)&buffer; /* opaque, only passed on */
    cr_assert_eq(kcs_tu2_add_wave(buffer, "Small Wave", 7, 1), PCW_OK);
    cr_assert_eq(pcw_fake_add_last.buffer, (void *)buffer);
    cr_assert_str_eq(pcw_fake_add_last.name, "Small Wave");
    cr_assert_eq(pcw_fake_add_last.id, 7);
    cr_assert_eq(pcw_fake_add_last.count, 1);
    cr_assert_not_null(pcw_fake_add_last.data0);
    cr_assert_eq(pcw_fake_add_last.size0, sizeof(GEOMETRIC_WAVE_VALUES));
    /* Enumeration: no values, no data blocks (count 0, as PCW allows). */
    cr_assert_eq(kcs_tu2_add_wave(buffer, "Medium Wave", 1, 0), PCW_OK);
    cr_assert_eq(pcw_fake_add_last.count, 0);
    cr_assert_null(pcw_fake_add_last.data0);
}
