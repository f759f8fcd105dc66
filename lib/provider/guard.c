/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/guard.c - the symbol every translation unit that includes
 * pcw/provider.h refers to (api.h): defined here, once per program, by the
 * implementation section or by libpcw-provider. A part of its own, and the
 * first: every other part refers to it, so it may call none of them
 * (check-layering: in open.c it made open.c and every part it calls call
 * each other in a loop).
 */
#include "internal.h"

const char PCW_PROVIDER_IMPLEMENTATION_must_be_defined_in_exactly_one_source_file = 1;
