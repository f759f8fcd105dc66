/* SPDX-License-Identifier: MIT */
/*
 * lib/query/kernels.h - the SIMD kernels (kernels.c): rows of plain
 * 8-byte values converted to doubles, bit for bit what pcw_cook gives.
 */
#ifndef PCW_QUERY_KERNELS_H
#define PCW_QUERY_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "pcw/consumer.h"
#include "sink.h"

#if defined(__x86_64__) && defined(__GNUC__)
/* This build has the AVX2 loops (taken when pcw__q_use_avx2()). */
#define PCW__Q_HAVE_AVX2 1
/* Whether to take the AVX2 loops: the CPU has AVX2 and $PCW_NO_AVX2
 * is unset (the tests run the baseline loops with it). */
int pcw__q_use_avx2(void);
#endif

/* Rows [from, to) of cur: nc plain 8-byte values from offset `off` on,
 * every status VALID, into the sink. */
void pcw__q_rows_contig(const pcw_snapshot *cur, size_t from, size_t to, uint32_t off, uint32_t nc,
                        pcw__q_sink *k);

#endif /* PCW_QUERY_KERNELS_H */
