/* SPDX-License-Identifier: MIT */
/*
 * tests/test_history_hostile.c - the log reader (lib/history/read.c) and
 * the query layer on a log (lib/query/logsource.c) given hostile or
 * changing files (docs/history.md, "Reading: damaged logs, hostile
 * input"), each a defect a review found:
 *
 *   - a log rewritten after pcw_pdh_open_log indexed it, with more series:
 *     the collect that meets it is PCW_E_CORRUPT, no write past the
 *     query's arrays (ASan);
 *   - identity records repeated within one sample: the reader lists each
 *     series once, not once per record (memory bounded by the series);
 *   - histogram words: a block whose samples decode more words than
 *     PCW__HIST_MAX_BLOCK_WORDS is damaged (work per byte bounded);
 *   - sample times whose deltas overflow int64 (UBSan);
 *   - identity changes beyond what one log may put into the query's
 *     index are damage;
 *   - a FIFO named as a log is refused at once, naming the file;
 *   - an identity the caller puts back that the reader cannot hold makes
 *     the next read a damaged one;
 *   - varints (codec.h): the unrolled decoder gives every value of every
 *     length as written, and refuses a 10th byte above 1, an 11th byte
 *     and one cut short, with 10 bytes left and with fewer.
 *
 * Logs are crafted block by block here (block()), as a hostile writer
 * would: a valid header, length, sequence number and CRC around records
 * the real writer never writes.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <zlib.h>
#include <zstd.h>

#include "pcw/histogram.h"
#include "pcw/query.h"

#include "../lib/history/codec.h"
#include "../lib/history/history.h"
#include "../lib/query/logsource.h" /* pcwl_max_ident_changes */

TestSuite(history_hostile, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 120);

/* ---- crafting logs ---------------------------------------------------------- */

typedef struct buf {
    unsigned char *b;
    size_t len, cap;
} buf;

static void put(buf *o, const void *p, size_t n)
{
    if (o->len + n > o->cap) {
        o->cap = (o->len + n) * 2;
        o->b = realloc(o->b, o->cap);
        cr_assert(o->b);
    }
    memcpy(o->b + o->len, p, n);
    o->len += n;
}

static void put_varint(buf *o, uint64_t v)
{
    unsigned char t[10];
    put(o, t, pcw__hist_put_varint(t, v));
}

static void file_header(buf *o)
{
    unsigned char h[PCW__HIST_FILE_HEADER] = {0};
    memcpy(h, PCW__HIST_MAGIC, 8);
    pcw__hist_put_le32(h + 8, PCW__HIST_VERSION);
    put(o, h, sizeof h);
}

/* Block `seq` holding `raw` into o: zstd when that is within the reader's
 * ratio (padded with a skippable frame where it compresses better). */
static void block(buf *o, uint64_t seq, const buf *raw)
{
    size_t cap = ZSTD_compressBound(raw->len) + raw->len / PCW__HIST_MAX_RATIO + 64;
    unsigned char *st = malloc(cap);
    cr_assert(st);
    size_t n = raw->len;
    int z = raw->len > 1000;
    if (z) {
        n = ZSTD_compress(st, cap, raw->b, raw->len, 3);
        cr_assert(!ZSTD_isError(n));
        size_t need = raw->len > 65536 ? (raw->len - 65536) / PCW__HIST_MAX_RATIO + 16 : 0;
        if (n < need) {
            size_t pad = need - n < 8 ? 8 : need - n;
            pcw__hist_put_le32(st + n, 0x184D2A50u); /* a skippable frame */
            pcw__hist_put_le32(st + n + 4, (uint32_t)(pad - 8));
            memset(st + n + 8, 0, pad - 8);
            n += pad;
        }
    } else {
        memcpy(st, raw->b, n);
    }
    unsigned char h[PCW__HIST_BLOCK_HEADER] = {0};
    pcw__hist_put_le32(h, PCW__HIST_BLOCK_MAGIC);
    pcw__hist_put_le32(h + 4, (uint32_t)n);
    pcw__hist_put_le32(h + 8, (uint32_t)raw->len);
    pcw__hist_put_le32(h + 12, z ? PCW__HIST_BLOCK_ZSTD : 0);
    pcw__hist_put_le64(h + 16, seq);
    /* (the version the log's file header, first in o, says) */
    pcw__hist_put_le32(h + 24, pcw__hist_block_check(pcw__hist_le32(o->b + 8), h, st, n));
    put(o, h, sizeof h);
    put(o, st, n);
    free(st);
}

/* A series record: id, kind, a one-letter path. */
static void rec_series(buf *o, uint32_t id, uint32_t kind)
{
    put_varint(o, PCW__HIST_REC_SERIES);
    put_varint(o, id);
    put_varint(o, kind);
    put_varint(o, 1);
    put(o, "x", 1);
}

/* Read the log in b to its end: the last pcw__hist_reader_next's result. */
static int read_all(const buf *b, uint64_t *samples, char *why, size_t cap)
{
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open_mem(&r, b->b, b->len, why, cap), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t n;
    int rc;
    *samples = 0;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &n, why, cap)) == 1)
        ++*samples;
    pcw__hist_reader_close(r);
    return rc;
}

/* A real writer's log of `nser` raw series and two samples. */
static void write_log(const char *file, unsigned nser)
{
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert_geq(fd, 0, "%s: %s", file, strerror(errno));
    pcw__hist_writer *w;
    char why[256];
    cr_assert_eq(pcw__hist_writer_open(&w, fd, file, NULL, why, sizeof why), 0, "%s", why);
    pcw__hist_value *v = calloc(nser, sizeof *v);
    cr_assert(v);
    for (unsigned i = 0; i < nser; i++) {
        char p[64];
        snprintf(p, sizeof p, "\\\\h\\S(i%u)\\C", i);
        cr_assert_eq(pcw__hist_writer_series(w, i, p, PCW__HIST_KIND_RAW), 0);
        pcw__hist_series s = {0};
        s.type = PERF_COUNTER_RAWCOUNT;
        s.instance_id = i + 1;
        cr_assert_eq(pcw__hist_writer_ident(w, i, &s), 0);
        v[i].raw.status = PCW_CSTATUS_VALID;
        v[i].raw.first = i;
    }
    cr_assert_eq(pcw__hist_writer_sample(w, 1000, 2000, v, nser), 0);
    cr_assert_eq(pcw__hist_writer_sample(w, 2000, 3000, v, nser), 0);
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);
    free(v);
}

/* ---- a log that changes after it was indexed ---------------------------------- */

/* pcw_pdh_open_log indexed a log of one series; the file is then rewritten
 * in place with 4000. The reader must not define new series into the
 * tables the query sized at open (it wrote 4000 values into an array of
 * one, and its series table moved under the query's pointers): the
 * collect that reads the changed block is PCW_E_CORRUPT. */
Test(history_hostile, log_rewritten_after_open_is_damage)
{
    char log[PATH_MAX];
    snprintf(log, sizeof log, "%s/a.pcwlog", tu_root);
    write_log(log, 1);
    pcw_pdh *q;
    char why[256];
    const char *files[] = {log};
    cr_assert_eq(pcw_pdh_open_log(&q, files, 1, why, sizeof why), PCW_OK, "%s", why);
    write_log(log, 4000);
    size_t failed;
    int rc = pcw_pdh_collect(q, &failed);
    cr_assert_eq(rc, PCW_E_CORRUPT, "collect: %d", rc);
    const char *e = pcw_pdh_log_error(q);
    cr_assert(e && strstr(e, log) && strstr(e, "block at offset 16"), "%s", e ? e : "(none)");
    pcw_pdh_close(q);
}

/* ---- identity records --------------------------------------------------------- */

/* One block of 2 million identity records of the one series before a
 * sample: the reader's list of changed series holds it once (it held one
 * entry per record: 16 MiB here, and it grows over every block until the
 * next sample). */
Test(history_hostile, identity_records_are_listed_once)
{
    buf b = {0}, raw = {0};
    file_header(&b);
    rec_series(&raw, 0, PCW__HIST_KIND_RAW);
    block(&b, 0, &raw);
    raw.len = 0;
    while (raw.len + 16 < PCW__HIST_BLOCK_MAX_RAW) {
        /* (the last 0: no row layout, version 3) */
        static const unsigned char ident[9] = {PCW__HIST_REC_IDENT, 0, 0, 0, 0, 0, 0, 0, 0};
        put(&raw, ident, sizeof ident);
    }
    put(&raw, (unsigned char[]){PCW__HIST_REC_SAMPLE, 0, 0, 0}, 4);
    block(&b, 1, &raw);
    pcw__hist_reader *r;
    char why[256];
    cr_assert_eq(pcw__hist_reader_open_mem(&r, b.b, b.len, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t n, nc;
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why), 1, "%s", why);
    const uint32_t *ch = pcw__hist_reader_changed(r, &nc);
    cr_assert_eq(nc, 1, "the one series listed %zu times", nc);
    cr_assert_eq(ch[0], 0);
    pcw__hist_reader_close(r);
    free(b.b);
    free(raw.b);
}

/* ---- histogram words ------------------------------------------------------------ */

/* A histogram of 8192 buckets and a block of samples each naming no change
 * (a few bytes a sample): every value still decodes its 8194 words. The
 * block is damaged once its words pass PCW__HIST_MAX_BLOCK_WORDS (it took
 * seconds of CPU for 16 KiB of file). */
Test(history_hostile, histogram_words_per_block_are_bounded)
{
    uint32_t shape = PCW_HISTOGRAM_SHAPE(0, 8, -16, 16);
    cr_assert(pcw_hist_shape_valid(shape));
    uint32_t words = 2 + pcw_hist_nbuckets(shape);
    cr_assert_eq(words, 8194);
    buf b = {0}, raw = {0};
    file_header(&b);
    rec_series(&raw, 0, PCW__HIST_KIND_RAW);
    put_varint(&raw, PCW__HIST_REC_IDENT);
    put_varint(&raw, 0);
    put_varint(&raw, PERF_PCW_HISTOGRAM);
    for (int i = 0; i < 5; i++) /* scale, provider, instance, pid, dup */
        put_varint(&raw, 0);
    put_varint(&raw, shape);
    put_varint(&raw, PCW_HSTAT_SUM);
    put_varint(&raw, 0);
    put_varint(&raw, 0); /* no row layout (version 3) */
    block(&b, 0, &raw);
    raw.len = 0;
    uint64_t samples = 0;
    while (raw.len + 32 < PCW__HIST_BLOCK_MAX_RAW) {
        /* sample: times, one value VALID, its five fields, its words */
        put(&raw, (unsigned char[]){PCW__HIST_REC_SAMPLE, 0, 0, 1, 0, 0, 0, 0, 0, 0}, 10);
        put_varint(&raw, words);
        put(&raw, (unsigned char[]){0, 0, 0}, 3);
        samples++;
    }
    cr_assert_gt(samples * words, (uint64_t)PCW__HIST_MAX_BLOCK_WORDS);
    block(&b, 1, &raw);
    char why[256] = "";
    uint64_t read;
    cr_assert_eq(read_all(&b, &read, why, sizeof why), -1, "read %llu samples",
                 (unsigned long long)read);
    cr_assert(strstr(why, "block at offset") && strstr(why, "histogram words"), "%s", why);
    cr_assert_leq(read * words, (uint64_t)PCW__HIST_MAX_BLOCK_WORDS);
    free(b.b);
    free(raw.b);
}

/* ---- sample times ---------------------------------------------------------------- */

/* Time deltas of INT64_MAX, summed: wrapped times, not undefined
 * behaviour (UBSan aborted the read). */
Test(history_hostile, sample_time_deltas_wrap)
{
    buf b = {0}, raw = {0};
    file_header(&b);
    for (int k = 0; k < 3; k++) {
        put_varint(&raw, PCW__HIST_REC_SAMPLE);
        put_varint(&raw, pcw__hist_zigzag(INT64_MAX));
        put_varint(&raw, pcw__hist_zigzag(INT64_MAX));
        put_varint(&raw, 0);
    }
    block(&b, 0, &raw);
    char why[256] = "";
    uint64_t read;
    cr_assert_eq(read_all(&b, &read, why, sizeof why), 0, "%s", why);
    cr_assert_eq(read, 3);
    free(b.b);
    free(raw.b);
}

/* ---- what a log file is ------------------------------------------------------------ */

/* A FIFO named as a log: open() for reading waited for a writer forever.
 * Refused at once (the alarm fails the test if not), naming the file. */
Test(history_hostile, fifo_log_is_refused_at_once)
{
    char fifo[PATH_MAX];
    snprintf(fifo, sizeof fifo, "%s/fifo.pcwlog", tu_root);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    alarm(10);
    pcw_pdh *q = NULL;
    char why[512] = "";
    const char *files[] = {fifo};
    int rc = pcw_pdh_open_log(&q, files, 1, why, sizeof why);
    alarm(0);
    cr_assert_neq(rc, PCW_OK);
    cr_assert_null(q);
    cr_assert(strstr(why, fifo) && strstr(why, "not a regular file"), "%s", why);
}

/* ---- identities put back ------------------------------------------------------------ */

/* pcw__hist_reader_set_ident (the query layer's seek) puts back
 * histogram identities beyond PCW__HIST_MAX_HWORDS: the reader cannot hold
 * their words, and the next read is a damaged one (it read on, decoding
 * those series' values as if they were no histograms). */
Test(history_hostile, identity_put_back_beyond_limits_is_damage)
{
    char log[PATH_MAX], why[256];
    snprintf(log, sizeof log, "%s/h.pcwlog", tu_root);
    uint32_t shape = PCW_HISTOGRAM_SHAPE(0, 8, -16, 16);
    unsigned nser = PCW__HIST_MAX_HWORDS / (2 + pcw_hist_nbuckets(shape)) + 2;
    write_log(log, nser);
    pcw__hist_reader *r;
    cr_assert_eq(pcw__hist_reader_open(&r, log, why, sizeof why), 0, "%s", why);
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t n;
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why), 1, "%s", why);
    pcw__hist_reader_seek(r, PCW__HIST_FILE_HEADER, 0);
    pcw__hist_series id = {0};
    id.type = PERF_PCW_HISTOGRAM;
    id.hshape = shape;
    id.hstat.kind = PCW_HSTAT_SUM;
    for (unsigned i = 0; i < nser; i++)
        pcw__hist_reader_set_ident(r, i, &id);
    cr_assert_eq(pcw__hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why), -1);
    cr_assert(strstr(why, "damaged"), "%s", why);
    pcw__hist_reader_close(r);
}

/* ---- identity changes in the query's index ------------------------------------ */

/* Every block names the one series' identity anew: each is a change the
 * index keeps (about 90 bytes), and a compressed block may name a million
 * series. Beyond pcwl_max_ident_changes (lowered here, as the control
 * channel's tests lower its limits) the file's readable part ends at the
 * sample that passes it: the samples before read, the collect that
 * reaches it is PCW_E_CORRUPT naming the limit and the block. */
Test(history_hostile, identity_changes_per_log_are_bounded)
{
    char log[PATH_MAX], why[256];
    snprintf(log, sizeof log, "%s/i.pcwlog", tu_root);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert_geq(fd, 0);
    pcw__hist_writer *w;
    cr_assert_eq(pcw__hist_writer_open(&w, fd, log, NULL, why, sizeof why), 0, "%s", why);
    cr_assert_eq(pcw__hist_writer_series(w, 0, "\\\\h\\S(i)\\C", PCW__HIST_KIND_RAW), 0);
    pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID}};
    for (unsigned k = 0; k < 150; k++) {
        pcw__hist_series s = {.type = PERF_COUNTER_RAWCOUNT, .instance_id = k + 1};
        cr_assert_eq(pcw__hist_writer_ident(w, 0, &s), 0);
        cr_assert_eq(pcw__hist_writer_sample(w, 1000 + k, 2000 + k, &v, 1), 0);
        cr_assert_eq(pcw__hist_writer_flush(w, why, sizeof why), 0, "%s", why);
    }
    cr_assert_eq(pcw__hist_writer_close(w, why, sizeof why), 0, "%s", why);

    pcwl_max_ident_changes = 100;
    pcw_pdh *q;
    const char *files[] = {log};
    cr_assert_eq(pcw_pdh_open_log(&q, files, 1, why, sizeof why), PCW_OK, "%s", why);
    pcw_pdh_log_info info;
    cr_assert_eq(pcw_pdh_get_log_info(q, &info), PCW_OK);
    cr_assert_eq(info.samples, 100);
    cr_assert(info.damaged);
    for (int k = 0; k < 100; k++)
        cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_OK, "sample %d", k);
    cr_assert_eq(pcw_pdh_collect(q, NULL), PCW_E_CORRUPT);
    const char *e = pcw_pdh_log_error(q);
    cr_assert(strstr(e, log) && strstr(e, "block at offset") &&
                  strstr(e, "more than 100 identity changes"),
              "%s", e);
    pcw_pdh_close(q);
}

/* ---- row samples (format 3) ------------------------------------------------------ */

/* A log of `version` whose block 0 defines series 0 (with a layout: its
 * row's word 0) and 1 (without), and whose block 1 is one row sample:
 * its record type, n = 2, then the bytes of `piece`, then the times. */
static void row_log(buf *b, uint32_t version, const unsigned char *piece, size_t len)
{
    buf raw = {0};
    b->len = 0;
    file_header(b);
    pcw__hist_put_le32(b->b + 8, version);
    for (uint32_t id = 0; id < 2; id++) {
        rec_series(&raw, id, PCW__HIST_KIND_RAW);
        put_varint(&raw, PCW__HIST_REC_IDENT);
        for (int i = 0; i < 7; i++) /* id, type, scale, provider, instance, pid, dup */
            put_varint(&raw, i == 0 ? id : 0);
        if (version < 3)
            continue;
        put_varint(&raw, id == 0); /* a layout: status 0, first word 0, constants */
        for (int i = 0; i < 6 && id == 0; i++)
            put_varint(&raw, 0);
    }
    block(b, 0, &raw);
    raw.len = 0;
    put_varint(&raw, PCW__HIST_REC_ROWS);
    put_varint(&raw, 2);
    put(&raw, piece, len);
    put(&raw, (unsigned char[]){0, 0}, 2);
    block(b, 1, &raw);
    free(raw.b);
}

/* Each row sample that breaks a rule of the format is a damaged block,
 * named by its offset; the block before reads. */
Test(history_hostile, bad_row_samples_are_damage)
{
    /* tag = count << 2 | kind (0 absent, 1 values, 2 rows, 3 whole) */
    static const struct {
        unsigned char piece[16];
        size_t len;
        const char *what;
    } cases[] = {
        {{1 << 2 | 2, 0, 0, 0}, 4, "bad row sample"},                      /* width 0 */
        {{1 << 2 | 2, 65, 0, 0}, 4, "bad row sample"},                     /* width 65 */
        {{3 << 2 | 0, 1}, 2, "bad row sample"},                            /* 3 of 2 series */
        {{2 << 2 | 2, 1, 0, 0, 0x02, 1, 1, 0x01, 1}, 9, "bad row sample"}, /* mask beyond width */
        {{2 << 2 | 2, 1, 0, 0, 0x00}, 5, "bad row sample"}, /* a changed row, no change */
        {{1 << 2 | 2, 2, 0, 1}, 4, "without a layout"},     /* series 1 in a row */
        {{2 << 2 | 3, 1, 0, 1, 2, 3}, 6, "cut short"},      /* whole words cut */
        {{2 << 2 | 0, 0}, 2, "unknown value status"},       /* absent, VALID */
    };
    buf b = {0};
    char why[256];
    uint64_t read;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        row_log(&b, PCW__HIST_VERSION, cases[i].piece, cases[i].len);
        cr_assert_eq(read_all(&b, &read, why, sizeof why), -1, "case %zu read", i);
        cr_assert(strstr(why, "block at offset") && strstr(why, cases[i].what), "case %zu: %s", i,
                  why);
    }
    /* A good one reads: series 0 unchanged from zero, series 1 absent. */
    static const unsigned char good[] = {1 << 2 | 2, 1, 0, 1, 1 << 2 | 0, 3};
    row_log(&b, PCW__HIST_VERSION, good, sizeof good);
    cr_assert_eq(read_all(&b, &read, why, sizeof why), 0, "%s", why);
    cr_assert_eq(read, 1);
    /* A row sample in a version 2 log is no record of it. */
    row_log(&b, 2, good, sizeof good);
    cr_assert_eq(read_all(&b, &read, why, sizeof why), -1);
    cr_assert(strstr(why, "unknown record type"), "%s", why);
    free(b.b);
}

/* Rows that did not change cost no byte, nor do absent series: a block of
 * row samples of 2^16 series each a few bytes long is damaged once its
 * values pass PCW__HIST_ROW_VALUES_BASE + PCW__HIST_ROW_VALUES_PER_BYTE a
 * byte (without the bound, 16 KiB could make a reader write 10^10 values). */
Test(history_hostile, row_values_per_block_are_bounded)
{
    const uint32_t nser = 1u << 16;
    buf b = {0}, raw = {0};
    file_header(&b);
    for (uint32_t id = 0; id < nser; id++)
        rec_series(&raw, id, PCW__HIST_KIND_RAW);
    block(&b, 0, &raw);
    raw.len = 0;
    uint64_t samples = 0;
    while (samples * nser <= PCW__HIST_ROW_VALUES_BASE + 4096u * PCW__HIST_ROW_VALUES_PER_BYTE) {
        put_varint(&raw, PCW__HIST_REC_ROWS);
        put_varint(&raw, nser);
        put_varint(&raw, (uint64_t)nser << 2 | PCW__HIST_SEG_ABSENT);
        put_varint(&raw, PCW_CSTATUS_NO_INSTANCE);
        put(&raw, (unsigned char[]){0, 0}, 2);
        samples++;
    }
    cr_assert_lt(raw.len, 4096);
    block(&b, 1, &raw);
    char why[256];
    uint64_t read;
    cr_assert_eq(read_all(&b, &read, why, sizeof why), -1, "read %llu samples",
                 (unsigned long long)read);
    cr_assert(strstr(why, "more row values in one block"), "%s", why);
    cr_assert_lt(read, samples);
    free(b.b);
    free(raw.b);
}

/* A varint decoded byte by byte (LEB128 as docs/history.md states it):
 * the reference for pcw__hist_get_varint's unrolled path. */
static int ref_varint(const unsigned char *p, size_t len, uint64_t *v, size_t *used)
{
    uint64_t x = 0;
    for (size_t i = 0; i < len && i < 10; i++) {
        if (i == 9 && p[i] > 1)
            return -1;
        x |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            *v = x, *used = i + 1;
            return 0;
        }
    }
    return -1;
}

/* Decode [b, b + len) both ways, with `room` bytes after it (0: the
 * bounds-checked path, >= 10 the unrolled one) and compare. */
static void varint_both(const unsigned char *b, size_t len, size_t room)
{
    unsigned char vb[32];
    cr_assert(len + room <= sizeof vb);
    memset(vb, 0xff, sizeof vb); /* continuation bits beyond: must not be read as more */
    memcpy(vb, b, len);
    const unsigned char *p = vb;
    uint64_t v = 0, want = 0;
    size_t used = 0;
    int rc = pcw__hist_get_varint(&p, vb + len + room, &v);
    int want_rc = ref_varint(vb, len + room, &want, &used);
    cr_assert_eq(rc, want_rc, "len %zu room %zu: %d, want %d", len, room, rc, want_rc);
    if (!rc) {
        cr_assert_eq(v, want, "len %zu room %zu: %llu, want %llu", len, room, (unsigned long long)v,
                     (unsigned long long)want);
        cr_assert_eq((size_t)(p - vb), used, "len %zu room %zu", len, room);
    }
}

Test(history_hostile, varints_decode_as_written)
{
    uint64_t x = 1;
    for (unsigned k = 0; k <= 64; k++) {
        uint64_t vals[4] = {k ? (k == 64 ? UINT64_MAX : (1ull << k) - 1) : 0,
                            k < 64 ? 1ull << k : 0, 0, 0};
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        vals[2] = k < 64 ? x >> (64 - (k ? k : 1)) : x;
        vals[3] = vals[0] ^ (vals[0] >> 3);
        for (int j = 0; j < 4; j++) {
            unsigned char b[16];
            size_t n = pcw__hist_put_varint(b, vals[j]);
            for (size_t room = 0; room <= 12; room += 12) {
                varint_both(b, n, room);
                unsigned char tail[32];
                memcpy(tail, b, n);
                const unsigned char *p = tail;
                uint64_t v;
                cr_assert_eq(pcw__hist_get_varint(&p, tail + n + room, &v), 0);
                cr_assert_eq(v, vals[j], "%llu (%zu bytes, room %zu): %llu",
                             (unsigned long long)vals[j], n, room, (unsigned long long)v);
                cr_assert_eq((size_t)(p - tail), n);
                if (n > 1) /* cut short, the end right after */
                    varint_both(b, n - 1, 0);
            }
        }
    }
    /* Hostile: a 10th byte above 1 (beyond 64 bits), 11 bytes, every
     * byte with its continuation bit, with and without room. */
    unsigned char over[11];
    memset(over, 0x80, sizeof over);
    for (unsigned last = 0; last < 256; last++) {
        over[9] = (unsigned char)last;
        varint_both(over, 10, 0);
        varint_both(over, 10, 12);
    }
    memset(over, 0x80, sizeof over);
    over[10] = 0;
    varint_both(over, 11, 0);
    varint_both(over, 11, 12);
    const unsigned char *p = over;
    uint64_t v;
    cr_assert_eq(pcw__hist_get_varint(&p, over + 11, &v), -1, "an 11-byte varint");
}
