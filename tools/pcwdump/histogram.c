/* SPDX-License-Identifier: MIT */
/*
 * histogram.c - a histogram counter's raw words (PERF_PCW_HISTOGRAM,
 * pcw/histogram.h) as pcwdump shows them, in text and JSON alike: the
 * shape's fields, the sum, the zero bucket, the count (zero bucket plus
 * buckets: it is not stored) and the non-empty buckets with their bounds.
 *
 * The words come from another process: the consumer library has checked
 * the shape (pcw_hist_shape_valid) and that the counter's size is the
 * shape's (pcw_counter.histogram is 0 otherwise), so the buckets lie
 * inside the row; their values are anything. The count saturates at
 * 2^64 - 1 and says so instead of wrapping. Work: O(buckets) per instance.
 */
#include <string.h>

#include <pcw/histogram.h>
#include <pcw/pdh.h>

#include "pcwdump.h"

int dump_hist_read(const pcw_snapshot *snap, size_t row, const pcw_counter *c, dump_hist *out)
{
    memset(out, 0, sizeof *out);
    uint32_t shape = c->histogram;
    if (c->type != PERF_PCW_HISTOGRAM || !pcw_hist_shape_valid(shape) ||
        c->size != pcw_hist_bytes(shape) || (uint64_t)c->data_offset + c->size > snap->data_size)
        return -1;
    const unsigned char *p = pcw_snapshot_row(snap, row) + c->data_offset;
    out->shape = shape;
    out->nbuckets = pcw_hist_nbuckets(shape);
    memcpy(&out->sum, p, 8);
    memcpy(&out->zero, p + 8, 8);
    out->buckets = p + 16;
    out->count = out->zero;
    for (uint32_t j = 0; j < out->nbuckets; j++) {
        uint64_t b = dump_hist_bucket(out, j);
        if (__builtin_add_overflow(out->count, b, &out->count)) {
            out->count = UINT64_MAX;
            out->count_overflow = 1;
        }
    }
    return 0;
}

uint64_t dump_hist_bucket(const dump_hist *h, uint32_t j)
{
    uint64_t b;
    memcpy(&b, h->buckets + 8u * (size_t)j,
           8); /* the row is 8-aligned; a copy says nothing of it */
    return b;
}

const char *dump_hist_unit(uint32_t shape)
{
    return pcw_hist_unit(shape) == PCW_HIST_UNIT_NS ? "ns" : "one";
}
