/* SPDX-License-Identifier: MIT */
/*
 * test_kcs.c - a provider built on the header pcwgen generates from the
 * real kernel-mode sample manifest kcs.man (unmodified): the registration
 * carries what the manifest says, registers, and publishes counters.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include <criterion/criterion.h>

#include "provider_types.h"

#include "kcs.h"
#include "pcw/collect.h"
#include "pcw/consumer.h"
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
    cr_assert_eq(info.version, PCW_CURRENT_VERSION);
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
    cr_assert_eq(c[0].base_ref, 0);
    cr_assert_eq(c[0].perf_time_ref, 0);
    cr_assert_eq(c[0].perf_freq_ref, 0);
    cr_assert_eq(c[0].multi_ref, 0);

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
    GEOMETRIC_WAVE_VALUES *small_block = NULL;
    cr_assert_eq(KcsCreateGeometricWave(&small, "Small Wave", &init, &small_block), PCW_OK);
    /* The block it hands back is the instance's, in the segment (issue 13,
     * item 8: the provider updates through it, not through `init`). */
    cr_assert_eq(small_block, pcw_instance_block(small, 0));
    cr_assert_neq(small_block, &init);
    cr_assert_eq(kcs_tu2_create_wave(&medium, "Medium Wave", 30, 40), PCW_OK);
    cr_assert_eq(KcsCreateGeometricWave(&large, "Large Wave", NULL, NULL), PCW_OK);
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
    GEOMETRIC_WAVE_VALUES *dup_block = &init;
    cr_assert_eq(KcsCreateGeometricWave(&dup, "SMALL WAVE", NULL, &dup_block),
                 PCW_E_DUPLICATE_NAME);
    cr_assert_null(dup_block, "a failed create hands back no block");

    /* Single instance: the empty name only (the instance type reached
     * the registration). */
    pcw_instance *trig, *bad;
    TRIGNOMETRIC_WAVE_VALUES tv = {.Sine = 1, .Cosine = 2, .Constant = 3};
    cr_assert_eq(KcsCreateTrignometricWave(&bad, "named", &tv, NULL), PCW_E_INVALID_NAME);
    cr_assert_eq(KcsCreateTrignometricWave(&trig, "", &tv, NULL), PCW_OK);
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
    cr_assert_neq(KcsCreateGeometricWave(&inst, "x", NULL, NULL), PCW_OK);
}

Test(kcs, register_twice_in_one_provider)
{
    /* Each Register call is a pcw_register; the handle is the last. */
    cr_assert_eq(KcsRegisterGeometricWave(prov, NULL, NULL), PCW_OK);
    KcsUnregisterGeometricWave();
    cr_assert_null(KcsGeometricWave);
    cr_assert_eq(KcsRegisterGeometricWave(prov, NULL, NULL), PCW_OK);
}

/* The generated Add, called from a real callback (in the other translation
 * unit), collected by the consumer library through the control channel. */
static int kcs_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    int values = type == PCW_CALLBACK_COLLECT_DATA;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    int rc = kcs_tu2_add_wave(info->buffer, "Small Wave", 7, values);
    if (rc == PCW_OK)
        rc = kcs_tu2_add_wave(info->buffer, "Medium Wave", 1, values);
    return rc;
}

Test(kcs, add_from_a_callback_reaches_the_consumer)
{
    cr_assert_eq(KcsRegisterGeometricWave(prov, kcs_callback, NULL), PCW_OK);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *gw = pcw_segment_find_counterset(seg, "Geometric Waves");
    cr_assert_not_null(gw);
    cr_assert(gw->flags & PCW_CSET_F_CALLBACK);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    pcw_query q = PCW_QUERY_ALL;
    cr_assert_eq(pcw_segment_collect(seg, gw, &q, &snap, 0, 0, 2000, NULL), PCW_OK);
    cr_assert_eq(snap.count, 2);
    for (size_t i = 0; i < snap.count; i++) {
        size_t x = i;
        const char *name = pcw_snapshot_name(&snap, x);
        cr_assert(pcw_snapshot_id(&snap, x) == 7 ? !strcmp(name, "Small Wave")
                                                 : !strcmp(name, "Medium Wave"));
        /* kcs_tu2_add_wave's values: Triangle 7, Square 8. */
        cr_assert_eq(pcw_snapshot_value(&snap, x, &gw->counters[0]), 7);
        cr_assert_eq(pcw_snapshot_value(&snap, x, &gw->counters[1]), 8);
    }
    /* Enumeration: the Add passes no blocks; the instances arrive, zeroed. */
    cr_assert_eq(pcw_segment_collect(seg, gw, &q, &snap, 0, 1, 2000, NULL), PCW_OK);
    cr_assert_eq(snap.count, 2);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &gw->counters[0]), 0);
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
}

/* What a consumer reads back is what the manifest says: names, ids, types,
 * aggregate, attributes, the provider's attributes, and the values. */
Test(kcs, consumer_reads_the_manifest_back)
{
    cr_assert_eq(KcsCounterInitialize(prov, NULL, NULL), PCW_OK);
    pcw_instance *small, *trig;
    GEOMETRIC_WAVE_VALUES init = {52, 60};
    TRIGNOMETRIC_WAVE_VALUES tv = {.Sine = 7, .Cosine = 8, .Constant = 9};
    GEOMETRIC_WAVE_VALUES *small_block = NULL;
    cr_assert_eq(KcsCreateGeometricWave(&small, "Small Wave", &init, &small_block), PCW_OK);
    /* The block it hands back is the instance's, in the segment (issue 13,
     * item 8: the provider updates through it, not through `init`). */
    cr_assert_eq(small_block, pcw_instance_block(small, 0));
    cr_assert_neq(small_block, &init);
    cr_assert_eq(KcsCreateTrignometricWave(&trig, "", &tv, NULL), PCW_OK);

    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *gw = pcw_segment_find_counterset(seg, "geometric waves");
    cr_assert_not_null(gw);
    cr_assert_str_eq(gw->name, "Geometric Waves");
    cr_assert_str_eq(gw->description, "This counter set displays a Triangle and a Square wave");
    cr_assert_str_eq(gw->guid, "{d2ffffff-c923-4794-b696-70577630b5cf}");
    cr_assert_str_eq(gw->uri, "Microsoft.Wdk.Samples.Kcs.GeometricWave");
    cr_assert_str_eq(gw->symbol, "GeometricWave");
    cr_assert_eq(gw->instance_type, PCW_MULTI_AGGREGATE);
    cr_assert_str_eq(gw->provider_name, "KernelCountersSample");
    cr_assert_str_eq(gw->provider_guid, "{d2ffffff-965a-4cf9-9c07-fe25378c2a23}");
    cr_assert_str_eq(gw->provider_type, "kernelMode");
    cr_assert_str_eq(gw->provider_callback, "custom");
    cr_assert_str_eq(gw->application_identity, "Kcs.sys");
    cr_assert_eq(gw->counter_count, 2);
    cr_assert_eq(gw->counters[0].id, KcsGeometricWave_Triangle_ID);
    cr_assert_str_eq(gw->counters[0].name, "Triangle");
    cr_assert_eq(gw->counters[0].type, PERF_COUNTER_RAWCOUNT);
    cr_assert_eq(gw->counters[0].aggregate, PCW_AGGREGATE_AVERAGE);
    cr_assert_eq(gw->counters[0].detail_level, PCW_DETAIL_STANDARD);
    cr_assert_eq(gw->counters[1].id, KcsGeometricWave_SquareWave_ID);
    cr_assert_str_eq(gw->counters[1].name, "Square Wave");
    cr_assert_str_eq(gw->counters[1].uri, "Microsoft.Wdk.Samples.Kcs.GeometricWave.Square");

    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(seg, gw, &snap, 0), PCW_OK);
    cr_assert_eq(snap.count, 1);
    cr_assert_str_eq(pcw_snapshot_name(&snap, 0), "Small Wave");
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &gw->counters[0]), 52);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &gw->counters[1]), 60);

    const pcw_counterset *tw = pcw_segment_find_counterset(seg, "Trignometric Waves");
    cr_assert_not_null(tw);
    cr_assert_eq(tw->instance_type, PCW_SINGLE_INSTANCE);
    cr_assert_eq(tw->counter_count, 3);
    for (uint32_t i = 0; i < 3; i++)
        cr_assert_eq(tw->counters[i].attributes, PCW_ATTR_REFERENCE, "counter %u", i);
    cr_assert_eq(pcw_segment_read(seg, tw, &snap, 0), PCW_OK);
    cr_assert_eq(snap.count, 1);
    cr_assert_eq(pcw_snapshot_name_len(&snap, 0), 0);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &tw->counters[2]), 9);

    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    KcsCloseGeometricWave(small);
    KcsCloseTrignometricWave(trig);
}
