/* SPDX-License-Identifier: MIT */
/*
 * tests/test_hist_deltas.c - the copy loop that takes a histogram's deltas
 * as the read copies its row (pcw__copy_delta_words and
 * pcw__copy_delta_span, lib/consumer/read.c, used by
 * lib/query/hist_fused.c) against a word-by-word reference: the copy, the
 * deltas, their sum, the OR the caller's reset check reads, and where the
 * deltas are non-zero - at every length, alignment of source and
 * destination, and with hostile words (buckets that went down, words of
 * 2^50 and more). And that span is the one the statistics would find
 * themselves (pcw__q_hist_interval, lib/query/histogram.c).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "consumer/private.h"
#include "pcw/histogram.h"
#include "query/histogram.h"

/* Is the copy loop built and usable here? As lib/consumer/read.c says:
 * x86-64 with AVX2, not in ThreadSanitizer builds (elsewhere the read
 * never calls it, and it aborts). */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) && !defined(TSAN_BUILD)
#define TSAN_BUILD 1
#endif
static void need_copy_loop(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(TSAN_BUILD)
    if (__builtin_cpu_supports("avx2"))
        return;
#endif
    cr_skip_test("the copy loop needs x86-64 with AVX2 (the read's 16-byte loads), not TSan");
}

/* A small xorshift: the same words every run. */
static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* n words of prev and src: most deltas 0 (empty buckets, as in a real
 * interval), some runs of zeros at either end, and - when hostile - words
 * that went down or are 2^50 and more. */
static void fill(uint64_t *seed, uint64_t *prev, uint64_t *src, size_t n, int hostile)
{
    size_t lo = n ? rng(seed) % (n + 1) : 0, hi = n ? rng(seed) % (n + 1) : 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng(seed);
        prev[i] = r % 4 ? r % 1000 : 0;
        src[i] = prev[i];
        if (i >= lo && i < hi && r % 3 == 0)
            src[i] += 1 + (r >> 40) % 50;
        if (hostile && r % 11 == 0)
            src[i] = prev[i] ? prev[i] - 1 : 0; /* went down */
        if (hostile && r % 13 == 0)
            src[i] = (uint64_t)1 << (50 + r % 14); /* enormous */
    }
}

/* Every length 0..70, source at 0 or 1 word off 16-byte alignment,
 * destination 0..3 words off it (with the source: non-temporal stores;
 * 32-byte aligned or not; or not aligned with it: plain stores). */
static void check_all(int hostile)
{
    need_copy_loop();
    enum { MAXN = 70 };
    _Alignas(64) uint64_t srcb[MAXN + 4], dstb[MAXN + 8], prev[MAXN], delta[MAXN + 1],
        want_delta[MAXN];
    uint64_t seed = hostile ? 0x9e3779b97f4a7c15ull : 12345;
    for (size_t n = 0; n <= MAXN; n++)
        for (int so = 0; so < 2; so++)
            for (int doff = 0; doff < 4; doff++)
                for (int rep = 0; rep < 8; rep++) {
                    uint64_t *src = srcb + so, *dst = dstb + so + doff;
                    fill(&seed, prev, src, n, hostile);
                    uint64_t want_sum = 0, want_or = 0;
                    uint32_t want_lo = (uint32_t)n, want_hi = 0;
                    for (size_t i = 0; i < n; i++) {
                        want_delta[i] = src[i] - prev[i];
                        want_sum += want_delta[i];
                        want_or |= want_delta[i] | prev[i];
                        if (want_delta[i]) {
                            want_lo = want_lo < i ? want_lo : (uint32_t)i;
                            want_hi = (uint32_t)i + 1;
                        }
                    }
                    uint64_t sum = 7, ors;
                    uint32_t span[2] = {99, 99};
                    memset(dstb, 0xAB, sizeof dstb);
                    delta[n] = 0xD1D1; /* not written past n */
                    ors = pcw__copy_delta_span(dst, src, prev, delta, n, &sum, span);
                    cr_assert_eq(memcmp(dst, src, n * 8), 0, "n %zu so %d doff %d: copy", n, so,
                                 doff);
                    cr_assert_eq(dst[n], 0xABABABABABABABABull, "n %zu: wrote past the end", n);
                    cr_assert_eq(memcmp(delta, want_delta, n * 8), 0, "n %zu: deltas", n);
                    cr_assert_eq(delta[n], 0xD1D1, "n %zu: a delta past the end", n);
                    cr_assert_eq(sum, want_sum, "n %zu so %d doff %d: sum", n, so, doff);
                    cr_assert_eq(ors, want_or, "n %zu so %d doff %d: or", n, so, doff);
                    cr_assert_eq(span[0], want_lo, "n %zu so %d doff %d: span %u, want %u", n, so,
                                 doff, span[0], want_lo);
                    cr_assert_eq(span[1], want_hi, "n %zu so %d doff %d: span end %u, want %u", n,
                                 so, doff, span[1], want_hi);
                    /* Without the span: the same numbers. */
                    memset(dstb, 0xAB, sizeof dstb);
                    sum = 7;
                    ors = pcw__copy_delta_words(dst, src, prev, delta, n, &sum);
                    cr_assert_eq(memcmp(dst, src, n * 8), 0, "n %zu: copy (words)", n);
                    cr_assert_eq(memcmp(delta, want_delta, n * 8), 0, "n %zu: deltas (words)", n);
                    cr_assert_eq(sum, want_sum, "n %zu: sum (words)", n);
                    cr_assert_eq(ors, want_or, "n %zu: or (words)", n);
                    /* And the plain copy. */
                    memset(dstb, 0xAB, sizeof dstb);
                    pcw__copy_delta_words(dst, src, NULL, NULL, n, NULL);
                    cr_assert_eq(memcmp(dst, src, n * 8), 0, "n %zu: copy (plain)", n);
                    cr_assert_eq(dst[n], 0xABABABABABABABABull, "n %zu: plain past the end", n);
                }
}

Test(hist_deltas, copy_deltas_sum_or_and_span_are_the_words)
{
    check_all(0);
}

Test(hist_deltas, hostile_words_copy_deltas_sum_or_and_span_are_the_words)
{
    check_all(1);
}

/* The span found in the copy's loop is the one pcw__q_hist_interval
 * finds from the deltas (the statistics' contract: every bucket outside
 * it empty, the max at its top), and the distribution built from it
 * (pcw__q_hist_from_deltas, as hist_fused.c does) is the same, status
 * and all - for distributions whose non-empty buckets are anywhere,
 * none at all, and hostile ones (a reset, an overflow). */
Test(hist_deltas, span_from_the_copy_is_the_distributions)
{
    need_copy_loop();
    const uint32_t shape = PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12);
    enum { NB = PCW_HISTOGRAM_NBUCKETS(3, -30, 12), W = NB + 2 };
    _Alignas(64) static uint64_t now[W], prev[W], dst[W], d1[NB], d2[NB];
    uint64_t seed = 77;
    for (int rep = 0; rep < 400; rep++) {
        int hostile = rep % 4 == 3;
        fill(&seed, prev, now, W, hostile);
        if (rep % 50 == 0)
            memcpy(now, prev, sizeof now); /* an empty interval */
        pcw_hist_dist want, got;
        pcw__q_hspan wsp, gsp;
        pcw__q_hist_interval(shape, now, prev, d1, &want, &wsp);
        uint64_t count = 0;
        uint32_t span[2];
        uint64_t ors = pcw__copy_delta_span(dst + 2, now + 2, prev + 2, d2, NB, &count, span);
        pcw__q_hspan known = {span[0], span[1]};
        pcw__q_hist_from_deltas(shape, now, prev, d2, ors >> 50 == 0, count, &known, &got, &gsp);
        cr_assert_eq(gsp.lo, wsp.lo, "rep %d: span [%u, %u), want [%u, %u)", rep, gsp.lo, gsp.hi,
                     wsp.lo, wsp.hi);
        cr_assert_eq(gsp.hi, wsp.hi, "rep %d: span [%u, %u), want [%u, %u)", rep, gsp.lo, gsp.hi,
                     wsp.lo, wsp.hi);
        cr_assert_eq(got.status, want.status, "rep %d", rep);
        cr_assert_eq(got.count, want.count, "rep %d", rep);
        cr_assert_eq(memcmp(d1, d2, sizeof d1), 0, "rep %d", rep);
        /* Every statistic of the two, the same. */
        static const pcw_hist_stat sts[] = {{PCW_HSTAT_MAX, 0},
                                            {PCW_HSTAT_MEAN, 0},
                                            {PCW_HSTAT_QUANTILE, .5},
                                            {PCW_HSTAT_QUANTILE, .99},
                                            {PCW_HSTAT_QUANTILE, .001}};
        for (size_t i = 0; i < sizeof sts / sizeof sts[0]; i++) {
            double a, b;
            int ra = pcw__q_hist_cook(&want, &wsp, &sts[i], &a);
            int rb = pcw__q_hist_cook(&got, &gsp, &sts[i], &b);
            cr_assert_eq(ra, rb, "rep %d stat %zu", rep, i);
            cr_assert_eq(a, b, "rep %d stat %zu: %.17g, want %.17g", rep, i, b, a);
        }
    }
}
