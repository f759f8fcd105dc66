/* SPDX-License-Identifier: MIT */
/*
 * tests/test_control_area_large.c - a provider program that defines its
 * reply area (PCW_CTL_AREA_BYTES, lib/provider/control.c) larger than
 * consumers accept (PCW_CTL_MAX_REPLY): its collections still work. The
 * area is a knob a program may set; a value the channel cannot use must
 * not make the provider write past the area, nor make its consumers'
 * collections fail
 * (the test: tests/control_area_sized.h).
 */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE        1
#define PCW_CTL_AREA_BYTES ((64u << 20) + 4096) /* more than a consumer accepts */
#include <criterion/criterion.h>

#define N 10
#include "control_area_sized.h"

TestSuite(control_area_large, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

Test(control_area_large, collections_work_with_an_area_larger_than_consumers_accept)
{
    collections_work();
}
