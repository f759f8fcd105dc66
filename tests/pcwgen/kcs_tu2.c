/* SPDX-License-Identifier: MIT */
/*
 * kcs_tu2.c - the second translation unit of test_kcs: the same header
 * generated from kcs.man, used as the KCS sample's driver uses it.
 */
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include "provider_types.h"

#include "kcs.h"
#include "tu2.h"

pcw_registration *kcs_tu2_geometric_handle(void)
{
    return KcsGeometricWave;
}

int kcs_tu2_initialize(pcw_provider *prov)
{
    return KcsCounterInitialize(prov, NULL, NULL);
}

/* As KcsAddGeometricInstance in the sample, without the clock. */
int kcs_tu2_create_wave(pcw_instance **inst, const char *name, uint32_t min, uint32_t amplitude)
{
    GEOMETRIC_WAVE_VALUES v;
    v.Triangle = min + amplitude / 2;
    v.Square = min + amplitude;
    return KcsCreateGeometricWave(inst, name, &v, NULL);
}

int kcs_tu2_add_wave(pcw_buffer *buffer, const char *name, uint32_t id, int with_values)
{
    static GEOMETRIC_WAVE_VALUES v = {7, 8};
    return KcsAddGeometricWave(buffer, name, id, with_values ? &v : NULL);
}
