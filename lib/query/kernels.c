/* SPDX-License-Identifier: MIT */
/*
 * lib/query/kernels.c - the SIMD kernels: rows of plain 8-byte values
 * converted to doubles into a sink (kernels.h).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "kernels.h"
#include "pcw/pdh.h"
#include "snaprows.h"

/* ---- plain 8-byte values, side by side --------------------------------
 *
 * The commonest set of all: every selected counter an instantaneous 8-byte
 * value without scaling, the counters one contiguous run of the row (a
 * struct of uint64_t). Cooking is then converting, every status VALID, and
 * the loop is the whole cost: it has no dispatch per value, converts four
 * values per vector operation (AVX2 where the CPU has it, else two per SSE2
 * operation, x86-64's baseline; GCC's generic vectors elsewhere) and keeps
 * everything it needs in registers.
 *
 * The conversion: for x < 2^52, the double whose bits are 2^52's exponent
 * with x as mantissa is exactly 2^52 + x, and minus 2^52 it is x - exactly
 * (double)x. A row with a value of 2^52 or more (the OR of its values says
 * so) is converted again one value at a time by the C conversion, so every
 * result is bit for bit pcw_cook's.
 */

typedef uint64_t pcw__q_u64x4 __attribute__((vector_size(32)));
typedef double pcw__q_f64x4 __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) void convert_row(double *v, const uint64_t *x,
                                                              size_t n)
{
    const pcw__q_u64x4 exp52 = {0x4330000000000000ull, 0x4330000000000000ull, 0x4330000000000000ull,
                                0x4330000000000000ull};
    const pcw__q_f64x4 two52 = {4503599627370496.0, 4503599627370496.0, 4503599627370496.0,
                                4503599627370496.0};
    pcw__q_u64x4 acc = {0, 0, 0, 0};
    size_t c = 0;
    for (; c + 4 <= n; c += 4) {
        pcw__q_u64x4 a;
        memcpy(&a, x + c, sizeof a); /* rows are 8-byte aligned, not 32 */
        acc |= a;
        pcw__q_f64x4 d = (pcw__q_f64x4)(a | exp52) - two52;
        memcpy(v + c, &d, sizeof d);
    }
    uint64_t any = acc[0] | acc[1] | acc[2] | acc[3];
    for (; c < n; c++) {
        uint64_t bits = x[c] | 0x4330000000000000ull;
        double d;
        memcpy(&d, &bits, sizeof d);
        v[c] = d - 4503599627370496.0;
        any |= x[c];
    }
    if (any >> 52)
        for (c = 0; c < n; c++)
            v[c] = (double)x[c];
}
/* One value a row, `stride` bytes apart (a column: cook_column, and
 * collect_column as it reads): what convert_row does, without its loops
 * over a row's values. */
static inline __attribute__((always_inline)) void convert_column(double *v, const unsigned char *x,
                                                                 size_t n, size_t stride)
{
    uint64_t any = 0;
    for (size_t r = 0; r < n; r++) {
        uint64_t w = *(const uint64_t *)(const void *)(x + r * stride);
        uint64_t bits = w | 0x4330000000000000ull;
        double d;
        memcpy(&d, &bits, sizeof d);
        v[r] = d - 4503599627370496.0;
        any |= w;
    }
    if (any >> 52)
        for (size_t r = 0; r < n; r++)
            v[r] = (double)*(const uint64_t *)(const void *)(x + r * stride);
}
/* Values converted at a time when rows lie back to back (cook_all). */
#define FLAT_VALUES 4096u

#if defined(__x86_64__) && defined(__GNUC__)
#define PCW__Q_STREAM 1
/* cook_all's output from 1 MB on (more than a core's L2 holds) is written
 * with streaming stores: it cannot stay in the caches anyway, and they
 * spare reading each line in before writing it (measured: the collection
 * of 100,000 x 16 into a 12.8 MB array 20 % faster). Blocks of 1,024
 * values are converted as convert_row does, and again by the C conversion
 * if one was 2^52 or more. */
#define STREAM_VALUES (128u * 1024u)

__attribute__((target("avx2"))) static void flat_stream(double *v, const uint64_t *x, size_t n)
{
    const __m256i exp52 = _mm256_set1_epi64x(0x4330000000000000ll);
    const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
    size_t i = 0;
    for (; i < n && ((uintptr_t)(v + i) & 31); i++)
        v[i] = (double)x[i];
    while (i + 4 <= n) {
        size_t end = n - i > 1024 ? i + 1024 : n - (n - i) % 4;
        __m256i acc = _mm256_setzero_si256();
        for (size_t j = i; j < end; j += 4) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(x + j));
            acc = _mm256_or_si256(acc, a);
            _mm256_stream_pd(v + j,
                             _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a, exp52)), two52));
        }
        if (!_mm256_testz_si256(acc, _mm256_set1_epi64x((long long)0xFFF0000000000000ull)))
            for (size_t j = i; j < end; j++)
                v[j] = (double)x[j];
        i = end;
    }
    for (; i < n; i++)
        v[i] = (double)x[i];
    _mm_sfence(); /* the streaming stores are done before the caller reads */
}
#endif

/* The rows of cur from `x` (the first row's first counter), `stride` bytes
 * apart, nc values each, into the sink. visit converts a row and hands it
 * over at once: the callback's work (at least a dependent chain through
 * memory per row) overlaps the next row's loads. (Converting 32 rows at a
 * time and prefetching the next 32 during their callbacks measured the
 * same.) cook_all, when the selected counters are the whole row (stride
 * 8 x nc), converts the rows as one flat array. */
static inline __attribute__((always_inline)) void contig_body(const unsigned char *x, size_t nrows,
                                                              size_t stride, uint32_t nc,
                                                              pcw__q_sink *k, int stream)
{
    if (k->fn) {
        int (*fn)(const pcw_pdh_row *, void *) = k->fn;
        void *arg = k->arg;
        double *v = k->rv;
        const uint8_t *st = k->rs;
        size_t at = k->at;
        for (size_t r = 0; r < nrows; r++, x += stride) {
            convert_row(v, (const uint64_t *)(const void *)x, nc);
            pcw_pdh_row row = {at, nc, v, st};
            at += nc;
            if (fn(&row, arg)) {
                k->stop = 1;
                break;
            }
        }
        k->at = at;
        return;
    }
    if (k->fnb) {
        /* visit_rows: as many rows as the block holds, converted as one
         * array when they lie back to back, then handed over together. */
        size_t r = 0;
        while (r < nrows && !k->stop) {
            double *v = pcw__q_sink_values(k, nc);
            size_t room = (k->bcap - k->fill) / nc, m = nrows - r < room ? nrows - r : room;
            if (stride == 8 * (size_t)nc)
                convert_row(v, (const uint64_t *)(const void *)(x + r * stride), m * nc);
            else
                for (size_t j = 0; j < m; j++)
                    convert_row(v + j * nc, (const uint64_t *)(const void *)(x + (r + j) * stride),
                                nc);
            /* The statuses, all VALID: not written again where an earlier
             * block of this walk left VALID ones (k->valid). */
            size_t end = k->fill + m * nc, from = k->fill > k->valid ? k->fill : k->valid;
            if (end > from)
                memset(k->rs + from, PCW_CSTATUS_VALID, end - from);
            if (k->fill <= k->valid && end > k->valid)
                k->valid = end;
            k->fill = end, k->rows += m, k->at += m * nc;
            r += m;
        }
        return;
    }
    double *v = k->values + k->at;
    if (stride == 8 * (size_t)nc) {
#ifdef PCW__Q_STREAM
        if (stream && nrows * nc >= STREAM_VALUES) {
            flat_stream(v, (const uint64_t *)(const void *)x, nrows * nc);
            k->at += nrows * nc;
            return;
        }
#endif
        for (size_t i = 0, n = nrows * nc; i < n; i += FLAT_VALUES) {
            size_t m = n - i < FLAT_VALUES ? n - i : FLAT_VALUES;
            convert_row(v + i, (const uint64_t *)(const void *)x + i, m);
        }
    } else if (nc == 1) {
        convert_column(v, x, nrows, stride);
    } else {
        for (size_t r = 0; r < nrows; r++, x += stride, v += nc)
            convert_row(v, (const uint64_t *)(const void *)x, nc);
    }
    k->at += nrows * nc;
}

static void contig_generic(const unsigned char *x, size_t nrows, size_t stride, uint32_t nc,
                           pcw__q_sink *k)
{
    contig_body(x, nrows, stride, nc, k, 0);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* visit's loop, written out for AVX2: a row's check for values of 2^52
 * or more is one vptest, and what stays live across the callback fits in
 * the callee-saved registers. Computes what contig_body does. */
__attribute__((target("avx2"))) static void visit_avx2(const unsigned char *x, size_t nrows,
                                                       size_t stride, uint32_t nc, pcw__q_sink *k)
{
    int (*fn)(const pcw_pdh_row *, void *) = k->fn;
    void *arg = k->arg;
    double *v = k->rv;
    const uint8_t *st = k->rs;
    size_t at = k->at;
    const uint32_t n4 = nc & ~3u;
    const unsigned char *end = x + nrows * stride;
    for (; x != end; x += stride) {
        const uint64_t *p = (const uint64_t *)(const void *)x;
        const __m256i exp52 = _mm256_set1_epi64x(0x4330000000000000ll);
        const __m256d two52 = _mm256_set1_pd(4503599627370496.0);
        __m256i acc = _mm256_setzero_si256();
        uint32_t c = 0;
        for (; c < n4; c += 4) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p + c));
            acc = _mm256_or_si256(acc, a);
            _mm256_storeu_pd(v + c,
                             _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(a, exp52)), two52));
        }
        int big = !_mm256_testz_si256(acc, _mm256_set1_epi64x((long long)0xFFF0000000000000ull));
        for (; c < nc; c++) {
            v[c] = (double)p[c];
            big |= p[c] >> 52 != 0;
        }
        if (__builtin_expect(big, 0))
            for (c = 0; c < n4; c++)
                v[c] = (double)p[c];
        pcw_pdh_row row = {at, nc, v, st};
        at += nc;
        if (fn(&row, arg)) {
            k->stop = 1;
            break;
        }
    }
    k->at = at;
}

/* Decided once per process; a race between two first callers computes
 * the same answer. */
int pcw__q_use_avx2(void)
{
    static _Atomic int decided; /* 0: not yet; 1: no; 2: yes */
    int d = atomic_load_explicit(&decided, memory_order_relaxed);
    if (!d) {
        d = __builtin_cpu_supports("avx2") && !getenv("PCW_NO_AVX2") ? 2 : 1;
        atomic_store_explicit(&decided, d, memory_order_relaxed);
    }
    return d == 2;
}

__attribute__((target("avx2"))) static void contig_avx2(const unsigned char *x, size_t nrows,
                                                        size_t stride, uint32_t nc, pcw__q_sink *k)
{
    if (k->fn)
        visit_avx2(x, nrows, stride, nc, k);
    else
        contig_body(x, nrows, stride, nc, k, 1);
}
#endif

void pcw__q_rows_contig(const pcw_snapshot *cur, size_t from, size_t to, uint32_t off, uint32_t nc,
                        pcw__q_sink *k)
{
    size_t n = to - from;
    if (!n)
        return;
    /* The statuses: all VALID (0), written once (the visit callback's
     * row.status is const), or in one stretch of the caller's array. */
    if (k->fn)
        memset(k->rs, PCW_CSTATUS_VALID, nc);
    else if (k->status)
        memset(k->status + k->at, PCW_CSTATUS_VALID, n * nc);
    const unsigned char *x = pcw__q_row(cur, from) + off;
#ifdef PCW__Q_HAVE_AVX2
    if (pcw__q_use_avx2()) {
        contig_avx2(x, n, cur->data_size, nc, k);
        return;
    }
#endif
    contig_generic(x, n, cur->data_size, nc, k);
}
