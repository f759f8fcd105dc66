/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_gzip.c - pcw-exporter's gzip (tools/pcw-exporter/
 * gzip.c, ISA-L, linked from libpcw-exporter.a), decoded with zlib: every
 * size around the compressor's own boundaries (igzip's 32 KiB history and
 * 64 KiB buffers, the first output room gzip.c makes, n / 8 + 4096) gives
 * one gzip member - nothing after it, as clients that read one member
 * only need - that decodes to exactly its input, for a scrape's text and
 * for bytes that do not compress (the output outgrowing its first room).
 * The end-to-end paths (curl --compressed, Prometheus) are in
 * test_exporter.c and test_exporter_prometheus.c.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <zlib.h>

#include "../tools/pcw-exporter/expo.h"
#include "../tools/pcw-exporter/gzip.h"

/* n bytes of a scrape's text: series lines as the exporter writes them. */
static char *scrape_text(size_t n)
{
    char *p = malloc(n + 1);
    cr_assert(p);
    size_t at = 0;
    for (unsigned i = 0; at < n; i++) {
        char line[160];
        int l = snprintf(line, sizeof line,
                         "pcw_bench_c0{instance_name=\"inst-%07u\",provider=\"pcw_bench\","
                         "pid=\"644\"} %u\n",
                         i, i * 7919u);
        size_t take = (size_t)l < n - at ? (size_t)l : n - at;
        memcpy(p + at, line, take);
        at += take;
    }
    return p;
}

/* n bytes that do not compress (xorshift). */
static char *noise(size_t n)
{
    char *p = malloc(n + 1);
    cr_assert(p);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        p[i] = (char)(x >> 56);
    }
    return p;
}

/* gz must be one gzip member, with nothing after it, of exactly p[0..n). */
static void expect_gunzips_to(const ebuf *gz, const char *p, size_t n, const char *what)
{
    cr_assert_geq(gz->len, 18, "%s: %zu bytes is no gzip member", what, gz->len);
    cr_expect(gz->p[0] == '\x1f' && gz->p[1] == '\x8b', "%s: no gzip magic", what);
    char *back = malloc(n + 1);
    cr_assert(back);
    z_stream z;
    memset(&z, 0, sizeof z);
    cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz->p;
    z.avail_in = (uInt)gz->len;
    z.next_out = (Bytef *)back;
    z.avail_out = (uInt)n + 1; /* one more: a longer output shows */
    int rc = inflate(&z, Z_FINISH);
    cr_expect_eq(rc, Z_STREAM_END, "%s (%zu bytes): inflate %d (%s)", what, n, rc,
                 z.msg ? z.msg : "");
    cr_expect_eq(z.avail_in, 0, "%s (%zu bytes): %u bytes after the first member", what, n,
                 z.avail_in);
    cr_expect_eq(z.total_out, n, "%s: decoded %lu bytes of %zu", what, z.total_out, n);
    cr_expect(z.total_out != n || memcmp(back, p, n) == 0, "%s (%zu bytes): other bytes", what, n);
    inflateEnd(&z);
    free(back);
}

static const size_t sizes[] = {0,      1,      2,      4095,   4096,    4097,    32767,
                               32768,  32769,  65535,  65536,  65537,   131071,  131072,
                               131073, 262143, 262144, 262145, 1048575, 1048576, 1048577};

/* Every size of sizes[], made by make, round trips; compressed to less
 * than 1/shrink of its size above 64 KiB (0: no bound). */
static void round_trip_sizes(char *(*make)(size_t), const char *what, size_t shrink)
{
    ebuf gz = {0};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *p = make(sizes[i]);
        cr_assert_eq(gzip_compress(p, sizes[i], &gz), 0, "%s of %zu bytes", what, sizes[i]);
        expect_gunzips_to(&gz, p, sizes[i], what);
        if (shrink && sizes[i] > 65536)
            cr_expect_lt(gz.len, sizes[i] / shrink, "%s of %zu bytes compressed to %zu", what,
                         sizes[i], gz.len);
        free(p);
    }
    eb_free(&gz);
}

Test(exporter_gzip, text_at_every_boundary_is_one_member_of_exactly_it)
{
    round_trip_sizes(scrape_text, "text", 5);
}

Test(exporter_gzip, incompressible_bytes_outgrow_the_first_room)
{
    round_trip_sizes(noise, "noise", 0);
}

/* A scrape of 100,000 series is about 8 MB: many of igzip's blocks. */
Test(exporter_gzip, a_large_scrape)
{
    size_t n = 9u << 20;
    char *p = scrape_text(n);
    ebuf gz = {0};
    cr_assert_eq(gzip_compress(p, n, &gz), 0);
    expect_gunzips_to(&gz, p, n, "9 MiB of text");
    cr_expect_lt(gz.len, n / 10, "compressed to %zu", gz.len);
    free(p);
    eb_free(&gz);
}

/* The buffer is reused: a second body replaces the first. */
Test(exporter_gzip, the_output_is_replaced)
{
    ebuf gz = {0};
    char *big = noise(100000), *small = scrape_text(300);
    cr_assert_eq(gzip_compress(big, 100000, &gz), 0);
    cr_assert_eq(gzip_compress(small, 300, &gz), 0);
    expect_gunzips_to(&gz, small, 300, "second");
    free(big), free(small);
    eb_free(&gz);
}

/* The compressor's state comes from malloc, which may give back a block
 * freed dirty: nothing of it may be taken for input (igzip's init leaves
 * next_in and avail_in as they were). Freed blocks of its size, filled
 * with junk, before each call. */
Test(exporter_gzip, a_dirty_heap_is_not_input)
{
    ebuf gz = {0};
    for (size_t n = 0; n < 12; n++) {
        for (size_t size = 256 << 10; size <= 512 << 10; size += 32 << 10) {
            char *junk = malloc(size);
            cr_assert(junk);
            memset(junk, 0x5a, size);
            free(junk);
        }
        char *p = noise(n);
        cr_assert_eq(gzip_compress(p, n, &gz), 0, "%zu bytes", n);
        expect_gunzips_to(&gz, p, n, "after junk");
        free(p);
    }
    eb_free(&gz);
}

/* Memory that ran out (a buffer that failed to grow): -1, no output. */
Test(exporter_gzip, out_of_memory_is_an_error)
{
    ebuf gz = {0};
    gz.failed = 1;
    char *p = scrape_text(5000);
    cr_expect_eq(gzip_compress(p, 5000, &gz), -1);
    free(p);
}
