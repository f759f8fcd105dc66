/* SPDX-License-Identifier: MIT */
/*
 * fuzz_manifest.c - libFuzzer target for pcwgen's manifest reader and
 * header emitter: any input must parse or fail cleanly, without a crash,
 * a leak or undefined behaviour; whatever parses must emit.
 *
 *   make pcwgen-fuzz    (builds with clang -fsanitize=fuzzer,address,undefined)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"
#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    mf_manifest m;
    mf_error err;
    if (mf_parse(&m, (const char *)data, size, &err) == 0) {
        emit_options o = {"Fz", "fuzz.man"};
        if (sink)
            emit_header(sink, &m, &o);
    } else {
        /* The message is always a terminated string. */
        if (strlen(err.msg) >= sizeof err.msg)
            __builtin_trap();
    }
    mf_free(&m);
    return 0;
}
