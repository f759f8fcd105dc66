/* SPDX-License-Identifier: MIT */
/*
 * tests/test_control_area_small.c - a provider program that defines its
 * reply area (PCW_CTL_AREA_BYTES, lib/provider/control.c) smaller than a
 * reply's fixed part: its collections still work. The area is a knob a
 * program may set; a value the channel cannot use must not make the
 * provider write past the area, nor make its consumers' collections fail
 * (the test: tests/control_area_sized.h).
 */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE        1
#define PCW_CTL_AREA_BYTES 8 /* less than a reply's 16-byte head */
#include <criterion/criterion.h>

#define N 300 /* instances: a reply of ~7 KB, more than a page */
#include "control_area_sized.h"

TestSuite(control_area_small, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

Test(control_area_small, collections_work_with_an_area_too_small_for_a_reply)
{
    collections_work();
}
