/* SPDX-License-Identifier: MIT */
/*
 * pcw/histogram.h - exponential histograms in an instance's data (a pcw
 * extension: Windows has no histogram counter type).
 *
 * A histogram counter (type PERF_PCW_HISTOGRAM) is a run of 64-bit words in
 * a data block, updated by the provider with plain stores like any counter:
 *
 *   word 0        sum of the observed values (mod 2^64, in the observed unit)
 *   word 1        the zero bucket: observations x <= 2^min_exp (and 0)
 *   word 2 + j    bucket i = min_index + 1 + j: observations with
 *                 2^((i-1)/2^schema) < x <= 2^(i/2^schema); the last one
 *                 (j = nbuckets - 1) also takes every x above 2^max_exp
 *
 * x is the value in the histogram's exported unit: the observed integer for
 * PCW_HIST_UNIT_ONE (bytes, items, ...), the observed nanoseconds times
 * 10^-9 for PCW_HIST_UNIT_NS (buckets, quantiles and sums are exported in
 * seconds). min_index = min_exp * 2^schema. The buckets are exactly
 * Prometheus' native-histogram buckets (and OpenTelemetry's base-2
 * exponential buckets with scale = schema): bucket i of schema s is the same
 * interval there, and word 1 is the zero bucket with zero_threshold
 * 2^min_exp, so an export is lossless. The count of observations is not
 * stored: it is word 1 plus the buckets (one store fewer per observation,
 * and the count can never disagree with the buckets).
 *
 * Relative error: a bucket spans a factor 2^(2^-schema): 9.05 % at schema 3,
 * 4.4 % at 4, 2.2 % at 5, 0.27 % at 8; a quantile estimated inside the bucket
 * that holds it is within that factor of the true value (docs/query.md).
 * Bytes: 8 * (2 + nbuckets), nbuckets = (max_exp - min_exp) * 2^schema; 1 ns
 * .. 1 h at schema 3 (min_exp -30, max_exp 12) is 336 buckets, 2,704 bytes.
 *
 * Declaring one (provider side):
 *
 *   PCW_HISTOGRAM_TYPE(web_latency, PCW_HIST_UNIT_NS, 3, -30, 12);
 *   struct web { uint64_t requests; web_latency latency; };
 *   static const pcw_counter_desc web_counters[] = {
 *       PCW_COUNTER(1, "Requests", PERF_COUNTER_BULK_COUNT, struct web, requests),
 *       PCW_HISTOGRAM_COUNTER(2, "Latency", struct web, latency, web_latency),
 *   };
 *   ...
 *   web_latency_observe(&w->latency, pcw_time_ns() - start);
 *
 * Concurrency: the observe functions follow the counter rule (pcw/provider.h):
 * one thread writes an instance's counters with plain (relaxed) stores, and
 * consumers read them while it does. A histogram's words are each exact; the
 * sum may be an observation ahead of or behind the buckets in a consumer's
 * copy (more if the consumer is preempted mid-row: docs/design.md section
 * 15), which a consumer's mean tolerates and the next copy corrects. *_observe_atomic may be called
 * from any number of threads at once (relaxed read-modify-writes, no lock);
 * for a hot multi-threaded path prefer one instance per thread (consumers
 * sum them: _Total merges buckets). Nothing here calls into a library, locks
 * or waits. The words live in shared memory: consumers treat every word as
 * hostile (lib/query/).
 */
#ifndef PCW_HISTOGRAM_H
#define PCW_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The unit of the observed integers (the shape's unit). */
enum {
    PCW_HIST_UNIT_ONE = 0, /* as observed: bytes, items, microseconds... */
    PCW_HIST_UNIT_NS = 1,  /* nanoseconds observed, seconds exported */
};

/* Limits of a shape (checked by pcw_register and by consumers). */
#define PCW_HIST_SCHEMA_MIN  (-4)
#define PCW_HIST_SCHEMA_MAX  8
#define PCW_HIST_EXP_MIN     (-64)
#define PCW_HIST_EXP_MAX     63
#define PCW_HIST_MAX_BUCKETS 8192u

/* A histogram's shape in one word (pcw_counter_desc.histogram and the
 * segment's counter record): unit, schema (-4..8: 2^schema buckets per
 * doubling, or one per 2^-schema doublings), and the range 2^min_exp ..
 * 2^max_exp of the exported unit that the regular buckets cover. For a
 * negative schema min_exp and max_exp are multiples of 2^-schema. Encoded as
 * schema + 8 | unit << 8 | (min_exp + 64) << 16 | (max_exp + 64) << 24, so
 * it is below 2^31 and fits an enum. A constant expression. */
#define PCW_HISTOGRAM_SHAPE(unit, schema, min_exp, max_exp)                                        \
    ((uint32_t)((schema) + 8) | ((uint32_t)(unit) << 8) | ((uint32_t)((min_exp) + 64) << 16) |     \
     ((uint32_t)((max_exp) + 64) << 24))

/* 2^schema as a factor (d * 2^schema, exact for a negative schema when d is a
 * multiple of 2^-schema). Constant expressions. */
/* pcw-private-begin: the public shape macros expand to it */
#define PCW__HIST_SCALE(d, schema)                                                                 \
    ((schema) >= 0 ? (d) * (1 << ((schema)&15)) : (d) / (1 << ((-(schema)) & 15)))
/* pcw-private-end */
/* Buckets and 64-bit words of a histogram of this shape. */
#define PCW_HISTOGRAM_NBUCKETS(schema, min_exp, max_exp)                                           \
    PCW__HIST_SCALE((max_exp) - (min_exp), schema)
#define PCW_HISTOGRAM_WORDS(schema, min_exp, max_exp)                                              \
    (2 + PCW_HISTOGRAM_NBUCKETS(schema, min_exp, max_exp))
/* Is this a valid shape? A constant expression. */
#define PCW_HISTOGRAM_SHAPE_OK(unit, schema, min_exp, max_exp)                                     \
    ((unit) >= 0 && (unit) <= PCW_HIST_UNIT_NS && (schema) >= PCW_HIST_SCHEMA_MIN &&               \
     (schema) <= PCW_HIST_SCHEMA_MAX && (min_exp) >= PCW_HIST_EXP_MIN &&                           \
     (max_exp) <= PCW_HIST_EXP_MAX && (min_exp) < (max_exp) &&                                     \
     ((schema) >= 0 || ((min_exp) % (1 << ((-(schema)) & 15)) == 0 &&                              \
                        (max_exp) % (1 << ((-(schema)) & 15)) == 0)) &&                            \
     PCW_HISTOGRAM_NBUCKETS(schema, min_exp, max_exp) <= (int)PCW_HIST_MAX_BUCKETS)

/* The fields of a shape word. */
static inline int pcw_hist_schema(uint32_t shape)
{
    return (int)(shape & 0xFFu) - 8;
}
static inline unsigned pcw_hist_unit(uint32_t shape)
{
    return (shape >> 8) & 0xFFu;
}
static inline int pcw_hist_min_exp(uint32_t shape)
{
    return (int)((shape >> 16) & 0xFFu) - 64;
}
static inline int pcw_hist_max_exp(uint32_t shape)
{
    return (int)(shape >> 24) - 64;
}
/* Does `shape` decode to a valid shape (and re-encode to itself)? Consumers
 * call this on every shape a segment holds. */
static inline int pcw_hist_shape_valid(uint32_t shape)
{
    int s = pcw_hist_schema(shape), lo = pcw_hist_min_exp(shape), hi = pcw_hist_max_exp(shape);
    int u = (int)pcw_hist_unit(shape);
    return shape < (1u << 31) && PCW_HISTOGRAM_SHAPE_OK(u, s, lo, hi) &&
           PCW_HISTOGRAM_SHAPE(u, s, lo, hi) == shape;
}
/* Buckets (without the zero bucket), words and bytes of a valid shape. */
static inline uint32_t pcw_hist_nbuckets(uint32_t shape)
{
    return (uint32_t)PCW_HISTOGRAM_NBUCKETS(pcw_hist_schema(shape), pcw_hist_min_exp(shape),
                                            pcw_hist_max_exp(shape));
}
static inline uint32_t pcw_hist_bytes(uint32_t shape)
{
    return 8u * (2u + pcw_hist_nbuckets(shape));
}
/* The Prometheus index of the zero bucket's upper bound: bucket
 * pcw_hist_min_index + 1 + j is word 2 + j. */
static inline int32_t pcw_hist_min_index(uint32_t shape)
{
    return (int32_t)PCW__HIST_SCALE(pcw_hist_min_exp(shape), pcw_hist_schema(shape));
}

/* ---------------------------------------------------------------------------
 * The bucket of a value: integers only, no search (see
 * scripts/gen-histogram-tables.py for why one compare suffices).
 */
/* pcw-private-begin: the inline observers (pcw_hist_index) read these tables */
typedef struct pcw__hist_table {
    int32_t offset;   /* C: 256 * log2(unit divisor), rounded down */
    uint64_t th[257]; /* T_j, and a sentinel above every mantissa */
    uint16_t lo[512]; /* T_j below the start of each 1/512 of an octave */
} pcw__hist_table;

/* clang-format off */
/* BEGIN GENERATED by scripts/gen-histogram-tables.py: do not edit */
static const pcw__hist_table pcw__hist_table_one = {
    0,
    {
        0x8000000000000000ull, 0x8058d7d2d5e5f6b0ull, 0x80b1ed4fd999ab6cull,
        0x810b40a1d81406d4ull, 0x8164d1f3bc030773ull, 0x81bea1708dde6055ull,
        0x8218af4373fc25ebull, 0x8272fb97b2a5894cull, 0x82cd8698ac2ba1d7ull,
        0x83285071e0fc4546ull, 0x8383594eefb6ee36ull, 0x83dea15b9541b132ull,
        0x843a28c3acde4046ull, 0x8495efb3303efd2full, 0x84f1f656379c1a29ull,
        0x854e3cd8f9c8c95dull, 0x85aac367cc487b14ull, 0x86078a2f23642a9full,
        0x8664915b923fba03ull, 0x86c1d919caef5c87ull, 0x871f61969e8d1010ull,
        0x877d2afefd4e256cull, 0x87db357ff698d791ull, 0x88398146b919f1d4ull,
        0x88980e8092da8527ull, 0x88f6dd5af155ac6bull, 0x8955ee03618e5fdcull,
        0x89b540a7902557a3ull, 0x8a14d575496efd9aull, 0x8a74ac9a79896e46ull,
        0x8ad4c6452c728924ull, 0x8b3522a38e1e1031ull, 0x8b95c1e3ea8bd6e6ull,
        0x8bf6a434adde0084ull, 0x8c57c9c4646f4dddull, 0x8cb932c1bae97a95ull,
        0x8d1adf5b7e5ba9e5ull, 0x8d7ccfc09c50e2f7ull, 0x8ddf042022e69cd5ull,
        0x8e417ca940e35a01ull, 0x8ea4398b45cd53c0ull, 0x8f073af5a2013520ull,
        0x8f6a8117e6c8e5c4ull, 0x8fce0c21c6726481ull, 0x9031dc431466b1dcull,
        0x9095f1abc540ca6bull, 0x90fa4c8beee4b12aull, 0x915eed13c89689d3ull,
        0x91c3d373ab11c336ull, 0x9228ffdc10a051acull, 0x928e727d9531f9acull,
        0x92f42b88f673aa7cull, 0x935a2b2f13e6e92bull, 0x93c071a0eef94bc0ull,
        0x9426ff0fab1c04b6ull, 0x948dd3ac8ddb7ed3ull, 0x94f4efa8fef70961ull,
        0x955c5336887894d5ull, 0x95c3fe86d6cc7feeull, 0x962bf1cbb8d9755full,
        0x96942d3720185a00ull, 0x96fcb0fb20ac4ba2ull, 0x97657d49f17ab08eull,
        0x97ce9255ec4357abull, 0x9837f0518db8a96full, 0x98a1976f7597e995ull,
        0x990b87e266c189a9ull, 0x9975c1dd47518c77ull, 0x99e0459320b7fa64ull,
        0x9a4b13371fd166caull, 0x9ab62afc94ff864aull, 0x9b218d16f441d63cull,
        0x9b8d39b9d54e5538ull, 0x9bf93118f3aa4cc1ull, 0x9c6573682ec32c2dull,
        0x9cd200db8a0774caull, 0x9d3ed9a72cffb750ull, 0x9dabfdff6367a2a9ull,
        0x9e196e189d472420ull, 0x9e872a276f0b98ffull, 0x9ef5326091a111adull,
        0x9f6386f8e28ba650ull, 0x9fd228256400dd05ull, 0xa041161b3d0121bdull,
        0xa0b0510fb9714fc2ull, 0xa11fd9384a344cf7ull, 0xa18faeca8544b6e3ull,
        0xa1ffd1fc25cea188ull, 0xa27043030c496818ull, 0xa2e102153e918f9eull,
        0xa3520f68e802bb92ull, 0xa3c36b345991b47bull, 0xa43515ae09e6809eull,
        0xa4a70f0c95768ec4ull, 0xa5195786be9ef339ull, 0xa58bef536dbeb6edull,
        0xa5fed6a9b15138eaull, 0xa6720dc0be08a20bull, 0xa6e594cfeee86b1dull,
        0xa7596c0ec55ff55bull, 0xa7cd93b4e9653569ull, 0xa8420bfa298f70d1ull,
        0xa8b6d5167b320e08ull, 0xa92bef41fa77771bull, 0xa9a15ab4ea7c0ef8ull,
        0xaa1717a7b5693979ull, 0xaa8d2652ec907629ull, 0xab0386ef48868de0ull,
        0xab7a39b5a93ed337ull, 0xabf13edf162675e8ull, 0xac6896a4be3fe929ull,
        0xace0413ff83e5d03ull, 0xad583eea42a14ac6ull, 0xadd08fdd43d01491ull,
        0xae493452ca35b80eull, 0xaec22c84cc5c9465ull, 0xaf3b78ad690a4374ull,
        0xafb51906e75b8661ull, 0xb02f0dcbb6e04583ull, 0xb0a957366fb7a3c9ull,
        0xb123f581d2ac258full, 0xb19ee8e8c94feb08ull, 0xb21a31a66618fe3bull,
        0xb295cff5e47db4a3ull, 0xb311c412a9112489ull, 0xb38e0e38419fae17ull,
        0xb40aaea2654b9840ull, 0xb487a58cf4a9c180ull, 0xb504f333f9de6484ull,
        0xb58297d3a8b9f0d1ull, 0xb60093a85ed5f76bull, 0xb67ee6eea3b22b8full,
        0xb6fd91e328d17791ull, 0xb77c94c2c9d725e8ull, 0xb7fbefca8ca41e7cull,
        0xb87ba337a1743833ull, 0xb8fbaf4762fb9ee9ull, 0xb97c143756844dbeull,
        0xb9fcd2452c0b9deaull, 0xba7de9aebe5fea08ull, 0xbaff5ab2133e45fbull,
        0xbb81258d5b704b6full, 0xbc034a7ef2e9fb0cull, 0xbc85c9c560e7b269ull,
        0xbd08a39f580c36beull, 0xbd8bd84bb67ed482ull, 0xbe0f6809860993e2ull,
        0xbe935317fc378237ull, 0xbf1799b67a731082ull, 0xbf9c3c248e2486f8ull,
        0xc0213aa1f0d08db0ull, 0xc0a6956e8836ca8cull, 0xc12c4cca66709456ull,
        0xc1b260f5ca0fbb33ull, 0xc238d2311e3d6672ull, 0xc2bfa0bcfad907c8ull,
        0xc346ccda24976407ull, 0xc3ce56c98d21b15dull, 0xc4563ecc5334cb32ull,
        0xc4de8523c2c07baaull, 0xc5672a115506daddull, 0xc5f02dd6b0bbc3d9ull,
        0xc67990b5aa245f79ull, 0xc70352f04336c51dull, 0xc78d74c8abb9b15cull,
        0xc817f681416452b2ull, 0xc8a2d85c8ffe2c45ull, 0xc92e1a9d517f0ecbull,
        0xc9b9bd866e2f27a2ull, 0xca45c15afcc72623ull, 0xcad2265e4290774dull,
        0xcb5eecd3b38597c8ull, 0xcbec14fef2727c5cull, 0xcc799f23d11510e5ull,
        0xcd078b86503dcdd1ull, 0xcd95da6a9ff06444ull, 0xce248c151f8480e3ull,
        0xceb3a0ca5dc6a55dull, 0xcf4318cf191918c1ull, 0xcfd2f4683f94eeb5ull,
        0xd06333daef2b2594ull, 0xd0f3d76c75c5db8cull, 0xd184df6251699ac6ull,
        0xd2164c023056bcabull, 0xd2a81d91f12ae45aull, 0xd33a5457a3029054ull,
        0xd3ccf099859ac379ull, 0xd45ff29e0972c560ull, 0xd4f35aabcfedfa1full,
        0xd5872909ab75d189ull, 0xd61b5dfe9f9bce06ull, 0xd6aff9d1e13ba2fdull,
        0xd744fccad69d6af4ull, 0xd7da67311797f569ull, 0xd870394c6db32c84ull,
        0xd9067364d44a929bull, 0xd99d15c278afd7b5ull, 0xda3420adba4d8704ull,
        0xdacb946f2ac9cc71ull, 0xdb63714f8e295255ull, 0xdbfbb797daf23755ull,
        0xdc9467913a4f1c91ull, 0xdd2d818508324c20ull, 0xddc705bcd378f7f0ull,
        0xde60f4825e0e9123ull, 0xdefb4e1f9d1037f1ull, 0xdf9612deb8f04420ull,
        0xe031430a0d99e627ull, 0xe0ccdeec2a94e111ull, 0xe168e6cfd3295d23ull,
        0xe2055afffe83d368ull, 0xe2a23bc7d7d91225ull, 0xe33f8972be8a5a51ull,
        0xe3dd444c46499618ull, 0xe47b6ca0373da88dull, 0xe51a02ba8e26d680ull,
        0xe5b906e77c8348a8ull, 0xe658797368b3a716ull, 0xe6f85aaaee1fce22ull,
        0xe798aadadd5b9cbeull, 0xe8396a503c4bdc68ull, 0xe8da9958464b42aaull,
        0xe97c38406c4f8c56ull, 0xea1e4756550eb27bull, 0xeac0c6e7dd24392eull,
        0xeb63b7431736983full, 0xec0718b64c1cbddcull, 0xecaaeb8ffb03ab40ull,
        0xed4f301ed9942b84ull, 0xedf3e6b1d418a491ull, 0xee990f980da3025bull,
        0xef3eab20e032bc6bull, 0xefe4b99bdcdaf5cbull, 0xf08b3b58cbe8b76aull,
        0xf13230a7ad094509ull, 0xf1d999d8b7708cc1ull, 0xf281773c59ffb139ull,
        0xf329c9233b6bae9cull, 0xf3d28fde3a641a5aull, 0xf47bcbbe6db9fddeull,
        0xf5257d152486cc2cull, 0xf5cfa433e6537290ull, 0xf67a416c733f846dull,
        0xf7255510c4288238ull, 0xf7d0df730ad13bb8ull, 0xf87ce0e5b2094d9bull,
        0xf92959bb5dd4ba74ull, 0xf9d64a46eb939f35ull, 0xfa83b2db722a033aull,
        0xfb3193cc4227c3f4ull, 0xfbdfed6ce5f09c48ull, 0xfc8ec01121e447bbull,
        0xfd3e0c0cf486c174ull, 0xfdedd1b496a89f34ull, 0xfe9e115c7b8f884bull,
        0xff4ecb59511ec8a5ull, 0xffffffffffffffffull,
    },
    {
        0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 8,
        9, 10, 10, 11, 12, 13, 13, 14, 15, 15, 16, 17,
        17, 18, 19, 19, 20, 21, 22, 22, 23, 24, 24, 25,
        26, 26, 27, 28, 28, 29, 30, 30, 31, 32, 32, 33,
        34, 34, 35, 36, 36, 37, 38, 38, 39, 39, 40, 41,
        41, 42, 43, 43, 44, 45, 45, 46, 47, 47, 48, 48,
        49, 50, 50, 51, 52, 52, 53, 53, 54, 55, 55, 56,
        57, 57, 58, 58, 59, 60, 60, 61, 62, 62, 63, 63,
        64, 65, 65, 66, 66, 67, 68, 68, 69, 69, 70, 71,
        71, 72, 72, 73, 74, 74, 75, 75, 76, 77, 77, 78,
        78, 79, 79, 80, 81, 81, 82, 82, 83, 83, 84, 85,
        85, 86, 86, 87, 88, 88, 89, 89, 90, 90, 91, 91,
        92, 93, 93, 94, 94, 95, 95, 96, 97, 97, 98, 98,
        99, 99, 100, 100, 101, 101, 102, 103, 103, 104, 104, 105,
        105, 106, 106, 107, 107, 108, 109, 109, 110, 110, 111, 111,
        112, 112, 113, 113, 114, 114, 115, 115, 116, 117, 117, 118,
        118, 119, 119, 120, 120, 121, 121, 122, 122, 123, 123, 124,
        124, 125, 125, 126, 126, 127, 127, 128, 128, 129, 129, 130,
        130, 131, 132, 132, 133, 133, 134, 134, 135, 135, 136, 136,
        137, 137, 138, 138, 139, 139, 140, 140, 141, 141, 141, 142,
        142, 143, 143, 144, 144, 145, 145, 146, 146, 147, 147, 148,
        148, 149, 149, 150, 150, 151, 151, 152, 152, 153, 153, 154,
        154, 155, 155, 156, 156, 156, 157, 157, 158, 158, 159, 159,
        160, 160, 161, 161, 162, 162, 163, 163, 163, 164, 164, 165,
        165, 166, 166, 167, 167, 168, 168, 169, 169, 169, 170, 170,
        171, 171, 172, 172, 173, 173, 174, 174, 174, 175, 175, 176,
        176, 177, 177, 178, 178, 178, 179, 179, 180, 180, 181, 181,
        182, 182, 182, 183, 183, 184, 184, 185, 185, 186, 186, 186,
        187, 187, 188, 188, 189, 189, 189, 190, 190, 191, 191, 192,
        192, 192, 193, 193, 194, 194, 195, 195, 195, 196, 196, 197,
        197, 198, 198, 198, 199, 199, 200, 200, 201, 201, 201, 202,
        202, 203, 203, 203, 204, 204, 205, 205, 206, 206, 206, 207,
        207, 208, 208, 208, 209, 209, 210, 210, 210, 211, 211, 212,
        212, 213, 213, 213, 214, 214, 215, 215, 215, 216, 216, 217,
        217, 217, 218, 218, 219, 219, 219, 220, 220, 221, 221, 221,
        222, 222, 223, 223, 223, 224, 224, 224, 225, 225, 226, 226,
        226, 227, 227, 228, 228, 228, 229, 229, 230, 230, 230, 231,
        231, 232, 232, 232, 233, 233, 233, 234, 234, 235, 235, 235,
        236, 236, 236, 237, 237, 238, 238, 238, 239, 239, 240, 240,
        240, 241, 241, 241, 242, 242, 243, 243, 243, 244, 244, 244,
        245, 245, 246, 246, 246, 247, 247, 247, 248, 248, 248, 249,
        249, 250, 250, 250, 251, 251, 251, 252, 252, 253, 253, 253,
        254, 254, 254, 255, 255, 255, 256, 256,
    },
};
static const pcw__hist_table pcw__hist_table_ns = {
    7653,
    {
        0x804026622026259bull, 0x80992abb83a534a2ull, 0x80f26cddfc86b3f4ull,
        0x814becf46d36de50ull, 0x81a5ab29d5e5e7d3ull, 0x81ffa7a9549ca6e3ull,
        0x8259e29e25514b70ull, 0x82b45c33a1fc249bull, 0x830f149542ac74c1ull,
        0x836a0bee9d9d5401ull, 0x83c5426b674aa13eull, 0x8420b837728601a6ull,
        0x847c6d7eb08beed7ull, 0x84d8626d3118d396ull, 0x8534972f227e3735ull,
        0x85910bf0d1b7f7a3ull, 0x85edc0deaa819242ull, 0x864ab625376b7b77ull,
        0x86a7ebf121f08516ull, 0x8705626f328b539full, 0x876319cc50cbe265ull,
        0x87c11235836d16a3ull, 0x881f4bd7f06a618aull, 0x887dc6e0dd157151ull,
        0x88dc837dae2bf159ull, 0x893b81dbe7ed5966ull, 0x899ac2292e30cbf6ull,
        0x89fa4493447b03d3ull, 0x8a5a09480e1450d0ull, 0x8aba10758e1ea3cfull,
        0x8b1a5a49e7abaa17ull, 0x8b7ae6f35dd2f7f9ull, 0x8bdbb6a053c842e5ull,
        0x8c3cc97f4cf1aaddull, 0x8c9e1fbeecfe136full, 0x8cffb98df7fb8c27ull,
        0x8d61971b526dc891ull, 0x8dc3b8960164a7d9ull, 0x8e261e2d2a92cc07ull,
        0x8e88c810146440eeull, 0x8eebb66e261532d1ull, 0x8f4ee976e7c8b4ccull,
        0x8fb2615a029f970eull, 0x90161e4740cf4ceeull, 0x907a206e8db8e2dbull,
        0x90de67fff600044cull, 0x9142f52ba7a2119cull, 0x91a7c821f20d45f4ull,
        0x920ce1134637ed43ull, 0x9272403036b7aa56ull, 0x92d7e5a977d8cd12ull,
        0x933dd1afdfb5b8e4ull, 0x93a40474664e5b70ull, 0x940a7e28259fb382ull,
        0x94713efc59bb6863ull, 0x94d8472260df7178ull, 0x953f96cbbb8dce5full,
        0x95a72e2a0ca44f7cull, 0x960f0d6f19746f02ull, 0x967734ccc9db3a92ull,
        0x96dfa47528594d72ull, 0x97485c9a622adb60ull, 0x97b15d6ec75fcc23ull,
        0x981aa724caf3e7c7ull, 0x988439ef02e713b0ull, 0x98ee16002855a076ull,
        0x99583b8b1790a8a3ull, 0x99c2aac2d0368057ull, 0x9a2d63da754b35edull,
        0x9a9867054d512391ull, 0x9b03b476c26191f4ull, 0x9b6f4c6262456c0eull,
        0x9bdb2efbde8e040dull, 0x9c475c770cade96dull, 0x9cb3d507e611d055ull,
        0x9d2098e288398a37ull, 0x9d8da83b34d10fccull, 0x9dfb034651c99c68ull,
        0x9e68aa386972dac2ull, 0x9ed69d462a942332ull, 0x9f44dca46885cb79ull,
        0x9fb368881b4a8811ull, 0xa02241265fa8df27ull, 0xa09166b47744ad34ull,
        0xa100d967c8b8bb54ull, 0xa1709975dfb06757ull, 0xa1e0a7146d015dafull,
        0xa251027946c56529ull, 0xa2c1abda68743c96ull, 0xa332a36df2fd8a6aull,
        0xa3a3e96a2ce2de55ull, 0xa4157e058251c4f0ull, 0xa4876176853ded7bull,
        0xa4f993f3ed7b61caull, 0xa56c15b498d8d05dull, 0xa5dee6ef8b39e8c1ull,
        0xa65207dbeeb1ca2eull, 0xa6c578b1139d848cull, 0xa73939a670beabd8ull,
        0xa7ad4af3a355fdf8ull, 0xa821acd06f3e1b13ull, 0xa8965f74bf065071ull,
        0xa90b6318a40d75f7ull, 0xa980b7f4569cde45ull, 0xa9f65e403603598bull,
        0xaa6c5634c8b04b16ull, 0xaae2a00abc4ed1b4ull, 0xab593bfae5e102e9ull,
        0xabd02a3e41db390dull, 0xac476b0df43f745full, 0xacbefea348b8cf18ull,
        0xad36e537b2b7048dull, 0xadaf1f04cd8a0b6aull, 0xae27ac445c7dc318ull,
        0xaea08d304af5b45aull, 0xaf19c202ac88e526ull, 0xaf934af5bd1dbfd9ull,
        0xb00d2843e1060dc2ull, 0xb0875a27a51b0517ull, 0xb101e0dbbed96a6eull,
        0xb17cbc9b0c7dc5abull, 0xb1f7eda09520aa93ull, 0xb273742788d314f4ull,
        0xb2ef506b40bad885ull, 0xb36b82a73f2f247dull, 0xb3e80b172fd51af7ull,
        0xb464e9f6e7bc7c2full, 0xb4e21f82657c65a1ull, 0xb55fabf5d1502524ull,
        0xb5dd8f8d7d341ffdull, 0xb65bca85e502ce07ull, 0xb6da5d1bae91c8faull,
        0xb759478ba9ceefdaull, 0xb7d88a12d0dd9ea0ull, 0xb85824ee4833fa2cull,
        0xb8d8185b5eb8508cull, 0xb95864978dde8da6ull, 0xb9d909e079c5c456ull,
        0xba5a0873f155cc08ull, 0xbadb608fee5cf2e4ull, 0xbb5d127295adc498ull,
        0xbbdf1e5a373ce5c6ull, 0xbc6184854e3f0431ull, 0xbce445328146dbb2ull,
        0xbd6760a0a2634fffull, 0xbdead70eaf3d9b5aull, 0xbe6ea8bbd137922eull,
        0xbef2d5e75d89fbb7ull, 0xbf775ed0d562ffafull, 0xbffc43b7e604a922ull,
        0xc08184dc68e37e6aull, 0xc107227e63c52e6cull, 0xc18d1cde08df531bull,
        0xc213743bb6f64957ull, 0xc29a28d7f97c1e36ull, 0xc3213af388af91c0ull,
        0xc3a8aacf49bb2f35ull, 0xc43078ac4ed47ae7ull, 0xc4b8a4cbd75b35b9ull,
        0xc5412f6f4ff8b64aull, 0xc5ca18d852bf57f2ull, 0xc6536148a749ff7dull,
        0xc6dd090242dbb5d7ull, 0xc7671047487f5899ull, 0xc7f1775a092760a6ull,
        0xc87c3e7d03cdbec3ull, 0xc90765f2e593ce5bull, 0xc992edfe89e25e6aull,
        0xca1ed6e2fa89d0a3ull, 0xcaab20e36fe24ee5ull, 0xcb37cc4350ec1709ull,
        0xcbc4d946336fdd19ull, 0xcc52482fdc1f4407ull, 0xcce019443eb56ce4ull,
        0xcd6e4cc77e179cbcull, 0xcdfce2fdec75f913ull, 0xce8bdc2c0b6c5b1bull,
        0xcf1b38968c2339b8ull, 0xcfaaf8824f70aa54ull, 0xd03b1c3465f978a8ull,
        0xd0cba3f21052556bull, 0xd15c9000bf211c1full, 0xd1ede0a6133e2fdfull,
        0xd27f9627ddd5ef69ull, 0xd311b0cc208a4053ull, 0xd3a430d90d943190ull,
        0xd437169507e5b548ull, 0xd4ca6246a34b721aull, 0xd55e1434a48eabddull,
        0xd5f22ca6019743e0ull, 0xd686abe1e18dd0caull, 0xd71b922f9cfdce24ull,
        0xd7b0dfd6bdf7e39aull, 0xd846951f0034440aull, 0xd8dcb2505135246bull,
        0xd97337b2d0694aa4ull, 0xda0a258ecf4eb45dull, 0xdaa17c2cd19555dbull,
        0xdb393bd58d41f0fdull, 0xdbd164d1ead1046aull, 0xdc69f76b0559d2f7ull,
        0xdd02f3ea2ab18362ull, 0xdd9c5a98db8e586full, 0xde362bc0cbab0174ull,
        0xded067abe1ea0368ull, 0xdf6b0ea438793a89ull, 0xe00620f41cf574a5ull,
        0xe0a19ee6108e2417ull, 0xe13d88c4c8292b90ull, 0xe1d9dedb2c86c2b2ull,
        0xe276a1745a65739full, 0xe313d0dba2a63176ull, 0xe3b16d5c8a7087e7ull,
        0xe44f7742cb56e3ddull, 0xe4edeeda537af560ull, 0xe58cd46f45b22aacull,
        0xe62c284df9aa44a5ull, 0xe6cbeac2fc0e04aaull, 0xe76c1c1b0ea9f3dbull,
        0xe80cbca3289143ebull, 0xe8adcca87642c986ull, 0xe94f4c7859ce1066ull,
        0xe9f13c606af88922ull, 0xea939cae7762d0caull, 0xeb366db082ae1265ull,
        0xebd9afb4c6a18262ull, 0xec7d6309b34ff407ull, 0xed2187fdef3d8902ull,
        0xedc61ee057857b14ull, 0xee6b280000000000ull, 0xef10a3ac336847c4ull,
        0xefb6923473829532ull, 0xf05cf3e8794270f6ull, 0xf103c91834f0f723ull,
        0xf1ab1213ce533f59ull, 0xf252cf2ba4d0df88ull, 0xf2fb00b04f9a897eull,
        0xf3a3a6f29dd0c333ull, 0xf44cc24396aab9ffull, 0xf4f652f4799d30c2ull,
        0xf5a05956be818907ull, 0xf64ad5bc15bce751ull, 0xf6f5c87668677280ull,
        0xf7a131d7d873ae82ull, 0xf84d1232c0d5f250ull, 0xf8f969d9b5abf948ull,
        0xf9a6391f8464900aull, 0xfa53805733e75cd8ull, 0xfb013fd404bcc38eull,
        0xfbaf77e97135e555ull, 0xfc5e28eb2d94bc11ull, 0xfd0d532d283451a6ull,
        0xfdbcf70389b1132full, 0xfe6d14c2b5114024ull, 0xff1dacbf47ed75a0ull,
        0xffcebf4e1a9955beull, 0xffffffffffffffffull,
    },
    {
        0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8,
        8, 9, 10, 10, 11, 12, 13, 13, 14, 15, 15, 16,
        17, 17, 18, 19, 19, 20, 21, 21, 22, 23, 24, 24,
        25, 26, 26, 27, 28, 28, 29, 30, 30, 31, 32, 32,
        33, 34, 34, 35, 36, 36, 37, 37, 38, 39, 39, 40,
        41, 41, 42, 43, 43, 44, 45, 45, 46, 46, 47, 48,
        48, 49, 50, 50, 51, 52, 52, 53, 53, 54, 55, 55,
        56, 57, 57, 58, 58, 59, 60, 60, 61, 61, 62, 63,
        63, 64, 64, 65, 66, 66, 67, 67, 68, 69, 69, 70,
        70, 71, 72, 72, 73, 73, 74, 75, 75, 76, 76, 77,
        78, 78, 79, 79, 80, 80, 81, 82, 82, 83, 83, 84,
        84, 85, 86, 86, 87, 87, 88, 88, 89, 90, 90, 91,
        91, 92, 92, 93, 94, 94, 95, 95, 96, 96, 97, 97,
        98, 99, 99, 100, 100, 101, 101, 102, 102, 103, 103, 104,
        105, 105, 106, 106, 107, 107, 108, 108, 109, 109, 110, 111,
        111, 112, 112, 113, 113, 114, 114, 115, 115, 116, 116, 117,
        117, 118, 118, 119, 119, 120, 121, 121, 122, 122, 123, 123,
        124, 124, 125, 125, 126, 126, 127, 127, 128, 128, 129, 129,
        130, 130, 131, 131, 132, 132, 133, 133, 134, 134, 135, 135,
        136, 136, 137, 137, 138, 138, 139, 139, 140, 140, 141, 141,
        142, 142, 143, 143, 144, 144, 145, 145, 146, 146, 147, 147,
        148, 148, 149, 149, 150, 150, 150, 151, 151, 152, 152, 153,
        153, 154, 154, 155, 155, 156, 156, 157, 157, 158, 158, 159,
        159, 159, 160, 160, 161, 161, 162, 162, 163, 163, 164, 164,
        165, 165, 166, 166, 166, 167, 167, 168, 168, 169, 169, 170,
        170, 171, 171, 171, 172, 172, 173, 173, 174, 174, 175, 175,
        176, 176, 176, 177, 177, 178, 178, 179, 179, 180, 180, 180,
        181, 181, 182, 182, 183, 183, 184, 184, 184, 185, 185, 186,
        186, 187, 187, 187, 188, 188, 189, 189, 190, 190, 190, 191,
        191, 192, 192, 193, 193, 193, 194, 194, 195, 195, 196, 196,
        196, 197, 197, 198, 198, 199, 199, 199, 200, 200, 201, 201,
        201, 202, 202, 203, 203, 204, 204, 204, 205, 205, 206, 206,
        206, 207, 207, 208, 208, 209, 209, 209, 210, 210, 211, 211,
        211, 212, 212, 213, 213, 213, 214, 214, 215, 215, 215, 216,
        216, 217, 217, 217, 218, 218, 219, 219, 219, 220, 220, 221,
        221, 221, 222, 222, 223, 223, 223, 224, 224, 225, 225, 225,
        226, 226, 227, 227, 227, 228, 228, 228, 229, 229, 230, 230,
        230, 231, 231, 232, 232, 232, 233, 233, 233, 234, 234, 235,
        235, 235, 236, 236, 237, 237, 237, 238, 238, 238, 239, 239,
        240, 240, 240, 241, 241, 241, 242, 242, 243, 243, 243, 244,
        244, 244, 245, 245, 246, 246, 246, 247, 247, 247, 248, 248,
        248, 249, 249, 250, 250, 250, 251, 251, 251, 252, 252, 253,
        253, 253, 254, 254, 254, 255, 255, 255,
    },
};
/* END GENERATED */
/* clang-format on */

/* The leading zeros of v > 0. Where the target has lzcnt (-mlzcnt,
 * -march=x86-64-v3, and every non-x86 target's clz) the builtin is one
 * cheap instruction. Baseline x86-64 would get bsr, which AMD's cores run
 * slowly: on the bench machine (AMD EPYC) it was 5 of the 6.8 ns an
 * observation took (docs/performance.md, "Histograms: observe"). There the
 * bits below the top one are smeared and a De Bruijn multiply names it:
 * nine one-cycle operations, a multiply and a load from a 64-byte table.
 * (Asking the CPU at run time would need cpuid: clang's
 * __builtin_cpu_supports does not know lzcnt.) */
static const uint8_t pcw__hist_clz_table[64] = {
    /* [(2^(i+1) - 1) * 0x03f79d71b4cb0a89 >> 58] = 63 - i */
    63, 16, 62, 7,  15, 36, 61, 3,  6,  14, 22, 26, 35, 47, 60, 2,  9,  5,  28, 11, 13, 21,
    42, 19, 25, 31, 34, 40, 46, 52, 59, 1,  17, 8,  37, 4,  23, 27, 48, 10, 29, 12, 43, 20,
    32, 41, 53, 18, 38, 24, 49, 30, 44, 33, 54, 39, 50, 45, 55, 51, 56, 57, 58, 0,
};
static inline int pcw__hist_clz64_portable(uint64_t v)
{
    v |= v >> 1, v |= v >> 2, v |= v >> 4, v |= v >> 8, v |= v >> 16, v |= v >> 32;
    return pcw__hist_clz_table[(v * 0x03f79d71b4cb0a89ull) >> 58];
}
static inline int pcw__hist_clz64(uint64_t v)
{
#if defined(__x86_64__) && !defined(__LZCNT__)
    return pcw__hist_clz64_portable(v);
#else
    return __builtin_clzll(v);
#endif
}

/* The bucket index of v > 0 at schema 8: ceil(256 * log2(x)). */
static inline int32_t pcw__hist_index8(unsigned unit, uint64_t v)
{
    const pcw__hist_table *t =
        unit == PCW_HIST_UNIT_NS ? &pcw__hist_table_ns : &pcw__hist_table_one;
    int lz = pcw__hist_clz64(v);
    uint64_t m = v << lz;
    unsigned k = t->lo[(m >> 54) & 511u];
    k += m > t->th[k];
    return (int32_t)(256u * (unsigned)(63 - lz) + k) - t->offset;
}
/* pcw-private-end */

/* The Prometheus bucket index of v > 0 at the shape's schema:
 * ceil(2^schema * log2(x)), from the schema-8 index since
 * ceil(ceil(y) / n) = ceil(y / n). The bias keeps the shifted value
 * positive (index8 >= -7653 - 256 * 0), and is a multiple of 2^12. */
static inline int32_t pcw_hist_index(uint32_t shape, uint64_t v)
{
    int sh = 8 - pcw_hist_schema(shape);
    int32_t b = 1 << 20;
    return ((pcw__hist_index8(pcw_hist_unit(shape), v) + b + (1 << sh) - 1) >> sh) - (b >> sh);
}

/* The word of the histogram that counts v: 1 (the zero bucket) or 2 + j. */
static inline uint32_t pcw_hist_word(uint32_t shape, uint64_t v)
{
    if (v == 0)
        return 1;
    int32_t j = pcw_hist_index(shape, v) - pcw_hist_min_index(shape) - 1;
    uint32_t n = pcw_hist_nbuckets(shape);
    if (j < 0)
        return 1;
    return 2u + ((uint32_t)j < n ? (uint32_t)j : n - 1);
}

/* Count v in the histogram at `words` (8-byte aligned, pcw_hist_bytes of
 * them) of this shape. The single-writer form: plain (relaxed) loads and
 * stores, for the one thread that writes this instance's counters. */
static inline void pcw_histogram_observe(uint64_t *words, uint32_t shape, uint64_t v)
{
    uint64_t *b = &words[pcw_hist_word(shape, v)];
    __atomic_store_n(b, __atomic_load_n(b, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&words[0], __atomic_load_n(&words[0], __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}
/* The same for any number of threads at once: relaxed read-modify-writes
 * (a lock-prefixed add each; no lock, no wait). */
static inline void pcw_histogram_observe_atomic(uint64_t *words, uint32_t shape, uint64_t v)
{
    __atomic_fetch_add(&words[pcw_hist_word(shape, v)], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&words[0], v, __ATOMIC_RELAXED);
}

/* pcw-private-begin: PCW_HISTOGRAM_TYPE expands to it */
#ifdef __cplusplus
#define PCW__HIST_STATIC_ASSERT static_assert
#else
#define PCW__HIST_STATIC_ASSERT _Static_assert
#endif
/* pcw-private-end */

/* PCW_HISTOGRAM_TYPE(name, unit, schema, min_exp, max_exp): a histogram
 * type for a provider's data struct, with its shape and typed observers:
 *
 *   typedef struct name { uint64_t words[2 + nbuckets]; } name;
 *   enum { name_shape = PCW_HISTOGRAM_SHAPE(...) };
 *   static inline void name_observe(name *h, uint64_t v);        (one writer)
 *   static inline void name_observe_atomic(name *h, uint64_t v); (any threads)
 *
 * The shape's constants fold into the observers: a bucket costs a count of
 * leading zeros, two table loads, a compare and a few shifts. The shape is
 * checked at compile time. Use at file scope, once per name, in a header or
 * a source file: the observers are marked unused (clang warns about an
 * unused static inline function of the main file). */
#define PCW_HISTOGRAM_TYPE(name, unit, schema, min_exp, max_exp)                                   \
    PCW__HIST_STATIC_ASSERT(PCW_HISTOGRAM_SHAPE_OK(unit, schema, min_exp, max_exp),                \
                            #name ": invalid histogram shape (pcw/histogram.h: schema -4..8, "     \
                                  "min_exp < max_exp within -64..63, at most 8192 buckets)");      \
    typedef struct name {                                                                          \
        uint64_t words[PCW_HISTOGRAM_WORDS(schema, min_exp, max_exp)];                             \
    } name;                                                                                        \
    enum { name##_shape = (int)PCW_HISTOGRAM_SHAPE(unit, schema, min_exp, max_exp) };              \
    __attribute__((unused)) static inline void name##_observe(name *h, uint64_t v)                 \
    {                                                                                              \
        pcw_histogram_observe(h->words, (uint32_t)name##_shape, v);                                \
    }                                                                                              \
    __attribute__((unused)) static inline void name##_observe_atomic(name *h, uint64_t v)          \
    {                                                                                              \
        pcw_histogram_observe_atomic(h->words, (uint32_t)name##_shape, v);                         \
    }                                                                                              \
    PCW__HIST_STATIC_ASSERT(1, "")

/* PCW_HISTOGRAM_COUNTER(id, name, struct_type, field, hist_type): the
 * descriptor of a histogram stored in `field` (of type hist_type, made by
 * PCW_HISTOGRAM_TYPE) of data block 0, laid out as `struct_type`. Its
 * aggregate is PCW_AGGREGATE_TOTAL (a _Total merges the instances' buckets);
 * the field's type and its 8-byte alignment are checked at compile time.
 * PCW_HISTOGRAM_COUNTER_EX adds aggregate (PCW_AGGREGATE_TOTAL or
 * PCW_AGGREGATE_UNDEFINED), detail level and description, as PCW_COUNTER_EX;
 * PCW_HISTOGRAM_COUNTER_IN_BLOCK_EX(block, ...) is for data block `block`.
 * Constant expressions, so tables may be static. */
#define PCW_HISTOGRAM_COUNTER(id, name, struct_type, field, hist_type)                             \
    PCW_HISTOGRAM_COUNTER_IN_BLOCK_EX(0, id, name, struct_type, field, hist_type,                  \
                                      PCW_AGGREGATE_TOTAL, 0, NULL)
#define PCW_HISTOGRAM_COUNTER_EX(id, name, struct_type, field, hist_type, aggregate, detail_level, \
                                 description)                                                      \
    PCW_HISTOGRAM_COUNTER_IN_BLOCK_EX(0, id, name, struct_type, field, hist_type, aggregate,       \
                                      detail_level, description)
#define PCW_HISTOGRAM_COUNTER_IN_BLOCK_EX(block, id, name, struct_type, field, hist_type,          \
                                          aggregate, detail_level, description)                    \
    {                                                                                              \
        (uint32_t)(id), PERF_PCW_HISTOGRAM, (uint32_t)(block),                                     \
            (uint32_t)offsetof(struct_type, field),                                                \
            PCW__HIST_CHECKED_SIZE(struct_type, field, hist_type), 0, 0, 0, 0, 0,                  \
            (uint32_t)(detail_level), (uint32_t)(aggregate), 0, (name), (description), NULL, NULL, \
            (uint32_t)hist_type##_shape                                                            \
    }
/* pcw-private-begin: PCW_HISTOGRAM_COUNTER's compile-time checks, which it expands to */
#ifndef __cplusplus
#define PCW__HIST_CHECKED_SIZE(struct_type, field, hist_type)                                      \
    ((uint32_t)(sizeof(((struct_type *)0)->field) +                                                \
                0 * sizeof(struct {                                                                \
                    _Static_assert(sizeof(((struct_type *)0)->field) == sizeof(hist_type),         \
                                   #struct_type "." #field ": not a " #hist_type);                 \
                    _Static_assert(offsetof(struct_type, field) % 8 == 0,                          \
                                   #struct_type "." #field ": a histogram is 8-byte aligned");     \
                    char pcw__unused;                                                              \
                })))
#else
#define PCW__HIST_CHECKED_SIZE(struct_type, field, hist_type)                                      \
    (::pcw__histogram_field<sizeof(((struct_type *)0)->field), sizeof(hist_type),                  \
                            offsetof(struct_type, field)>::size)
#endif

#ifdef __cplusplus
} /* extern "C" */

/* PCW_HISTOGRAM_COUNTER's compile-time checks in C++. */
template <size_t Size, size_t TypeSize, size_t Offset> struct pcw__histogram_field {
    static_assert(Size == TypeSize,
                  "PCW_HISTOGRAM_COUNTER: the field is not of the histogram type");
    static_assert(Offset % 8 == 0, "PCW_HISTOGRAM_COUNTER: a histogram is 8-byte aligned");
    static constexpr uint32_t size = (uint32_t)Size;
};
#endif
/* pcw-private-end */
#endif /* PCW_HISTOGRAM_H */
