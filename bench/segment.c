/* SPDX-License-Identifier: MIT */
/*
 * bench/segment.c - segment/bytes_per_instance: the segment's memory per
 * instance beyond the instance's name and data.
 *
 * The provider child (benchutil.c) reads header.size through a read-only
 * mapping after registering its counterset and before creating any
 * instance; this benchmark reads it again once the child holds its 1,000,000
 * instances (12-byte names, one 8-byte counter), subtracts the name bytes
 * and the data bytes, and divides by the instance count. What remains is
 * the slot header, name padding and alignment, and unused slots of the
 * last chunk. Not a timing: the figure is the `bytes_per_instance` counter.
 */
#include "benchutil.h"

#define N 1000000

static void bm_bytes_per_instance(gb_state *st, void *arg)
{
    (void)arg;
    const bu_provider *p = bu_provider_get(N, 1);
    uint64_t after = p ? bu_segment_size(p->path) : 0;
    if (!p || !after || after < p->size_before) {
        gb_skip_with_error(st, "cannot read the provider's segment");
        return;
    }
    while (gb_keep_running(st)) {
    }
    double grown = (double)(after - p->size_before);
    double names = (double)N * BU_NAME_LEN, data = (double)N * 8 * (double)p->counters;
    gb_counter(st, "bytes_per_instance", (grown - names - data) / N);
    gb_counter(st, "segment_bytes_per_instance", grown / N);
    gb_counter(st, "name_bytes", BU_NAME_LEN);
    gb_counter(st, "data_bytes", 8.0 * (double)p->counters);
    gb_counter(st, "instances", N);
}

void bench_segment_register(void)
{
    gb_bench *b = gb_register("segment/bytes_per_instance", bm_bytes_per_instance, NULL);
    gb_iterations(b, 1);
}
