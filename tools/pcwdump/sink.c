/* SPDX-License-Identifier: MIT */
/*
 * sink.c - what the walk (dump.c) and the output formats (text.c, json.c)
 * share, kept below both so that neither calls up into the other: a sink's
 * state freed, a status as text. The sink interface is pcwdump.h's
 * dump_sink.
 */
#include <stdlib.h>

#include "pcwdump.h"

const char *dump_status(int status)
{
    static char buf[96];
    return pcw_status_describe(status, buf, sizeof buf);
}

void sink_free(void *st)
{
    free(st);
}
