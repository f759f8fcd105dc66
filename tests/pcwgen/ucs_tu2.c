/* SPDX-License-Identifier: MIT */
/*
 * ucs_tu2.c - the second translation unit of test_ucs: the same header
 * generated from ucs.man (user-mode style: pcwgen's own value structs).
 */
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include "ucs.h"
#include "tu2.h"

pcw_registration *ucs_tu2_trig_handle(void)
{
    return TrignometricWave;
}

int ucs_tu2_create_trig(pcw_instance **inst)
{
    TrignometricWave_values v = {0};
    v.SineWave = 10;
    v.CosineWave = 20;
    v.ConstantValue = 30;
    v.ConstantNumber = 200;
    v.RawFraction = 50;
    return CreateTrignometricWave(inst, "", &v, NULL);
}
