/* SPDX-License-Identifier: MIT */
/*
 * fuzz/history/fuzz_history.c - libFuzzer target for the pcw log reader
 * (lib/history/read.c): any bytes as a log. The reader must hand out
 * samples and then end cleanly or with a sentence naming an offset inside
 * the input, never read past it, and every sample must cook (pcw__hist_cook, as
 * pcwrelog does) to a known status, a finite number only when valid.
 *
 * A mutated block almost never passes its CRC, and then nothing inside it
 * is decoded: so the input is read twice, as it is (the checks of the
 * block headers) and with every block's CRC made right first (the records'
 * decoding and cooking).
 *
 * The same bytes are then read through the query layer
 * (pcw_pdh_open_log on a memfd, lib/query/logsource.c), as pcwtop --replay
 * reads a log: every logged path through a wildcard, each sample
 * collected and cooked, seeks by index and by time, the listing; every
 * value must have a known status, a finite number only when valid, and a
 * collect must end with PCW_PDH_END_OF_LOG or PCW_E_CORRUPT.
 *
 * Seeds: real logs made at build time (fuzz/history/make_seeds.c). Built
 * and run, bounded, by `make check-fuzz`.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <zlib.h>

#include "../../lib/history/codec.h"
#include "../../lib/history/history.h"
#include "pcw/pdh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every whole block's CRC set to what its bytes give. */
static void fix_crcs(unsigned char *b, size_t size)
{
    size_t off = PCW__HIST_FILE_HEADER;
    while (off + PCW__HIST_BLOCK_HEADER <= size) {
        unsigned char *h = b + off;
        size_t stored = pcw__hist_le32(h + 4);
        if (stored > size - off - PCW__HIST_BLOCK_HEADER)
            return;
        pcw__hist_put_le32(h + 24, pcw__hist_block_check(pcw__hist_le32(b + 8), h,
                                                         h + PCW__HIST_BLOCK_HEADER, stored));
        off += PCW__HIST_BLOCK_HEADER + stored;
    }
}

/* A known status, a finite number only with the statuses that have one
 * (VALID; ABOVE_RANGE: a histogram statistic's top bound). */
static int status_ok(int st, double x)
{
    int number = st == PCW_CSTATUS_VALID || st == PCW_CSTATUS_ABOVE_RANGE;
    return st >= 0 && st <= PCW_CSTATUS_LAST && (number ? isfinite(x) : x == 0.0);
}

static void read_log(const uint8_t *data, size_t size)
{
    pcw__hist_reader *r;
    char why[512];
    if (pcw__hist_reader_open_mem(&r, data, size, why, sizeof why)) {
        if (!why[0])
            abort();
        return;
    }
    pcw__hist_value *prev = NULL;
    uint64_t *epoch = NULL;
    size_t have = 0;
    uint64_t mono, real;
    const pcw__hist_value *v;
    size_t n;
    int rc;
    while ((rc = pcw__hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why)) == 1) {
        if (n != pcw__hist_reader_series_count(r))
            abort();
        if (n > have) {
            prev = realloc(prev, n * sizeof *prev);
            epoch = realloc(epoch, n * sizeof *epoch);
            if (!prev || !epoch)
                abort();
            for (size_t i = have; i < n; i++)
                epoch[i] = UINT64_MAX;
            have = n;
        }
        for (size_t i = 0; i < n; i++) {
            const pcw__hist_series *s = pcw__hist_reader_series(r, i);
            double x;
            int st = pcw__hist_cook(s, &v[i], epoch[i] == s->epoch ? &prev[i] : NULL, 0, &x);
            if (!status_ok(st, x))
                abort();
            prev[i] = v[i];
            epoch[i] = s->epoch;
        }
    }
    if (pcw__hist_reader_offset(r) > size || (rc < 0 && !strstr(why, "offset")))
        abort();
    free(prev);
    free(epoch);
    pcw__hist_reader_close(r);
}

/* Every value of h now: a known status, a finite number only when valid. */
static void check_values(pcw_pdh_counter *h)
{
    size_t n = pcw_pdh_value_count(h);
    for (size_t i = 0; i < n; i++) {
        pcw_pdh_value v;
        if (pcw_pdh_get_value(h, i, 0, &v) != PCW_OK)
            abort();
        if (!status_ok(v.status, v.value) || !v.counterset || !v.counter || !v.instance)
            abort();
        char path[256];
        pcw_pdh_value_path(h, i, 1, path, sizeof path);
    }
    double *vals = malloc((n ? n : 1) * sizeof *vals);
    if (!vals || pcw_pdh_cook_all(h, PCW_FMT_NOSCALE, vals, NULL) != PCW_OK)
        abort();
    free(vals);
}

/* The bytes as a log opened by the query layer. */
static void query_log(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz.pcwlog", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return;
    }
    char file[64], why[512];
    snprintf(file, sizeof file, "/proc/self/fd/%d", fd);
    const char *files[] = {file};
    pcw_pdh *q;
    int rc = pcw_pdh_open_log(&q, files, 1, why, sizeof why);
    close(fd);
    if (rc != PCW_OK) {
        if (!why[0])
            abort();
        return;
    }
    pcw_pdh_log_info info;
    if (pcw_pdh_get_log_info(q, &info) != PCW_OK || info.series != pcw_pdh_log_series_count(q))
        abort();
    for (size_t i = 0; i < info.series; i++) {
        pcw_pdh_log_series s;
        if (pcw_pdh_log_series_at(q, i, &s) != PCW_OK || !s.path || !s.counterset || !s.counter)
            abort();
    }
    pcw_pdh_counter *h = NULL;
    (void)pcw_pdh_add_counter(q, "\\\\*\\*(*)\\*", &h, NULL);
    uint64_t got = 0;
    while ((rc = pcw_pdh_collect(q, NULL)) == PCW_OK) {
        got++;
        if (h)
            check_values(h);
    }
    if ((rc != PCW_PDH_END_OF_LOG && rc != PCW_E_CORRUPT) || got != info.samples ||
        (rc == PCW_E_CORRUPT && !strstr(pcw_pdh_log_error(q), "offset")))
        abort();
    /* Seeks: the middle by index, the middle by time, back to the start. */
    if (pcw_pdh_log_seek(q, info.samples / 2) != PCW_OK ||
        pcw_pdh_log_seek(q, info.samples + 1) != PCW_E_INVALID_PARAMETER)
        abort();
    for (int k = 0; k < 3 && pcw_pdh_collect(q, NULL) == PCW_OK; k++)
        if (h)
            check_values(h);
    if (pcw_pdh_log_seek_time(q, info.first_real_ns / 2 + info.last_real_ns / 2) != PCW_OK)
        abort();
    for (int k = 0; k < 3 && pcw_pdh_collect(q, NULL) == PCW_OK; k++)
        if (h)
            check_values(h);
    pcw_pdh_close(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_log(data, size);
    query_log(data, size);
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_crcs(copy, size);
    read_log(copy, size);
    query_log(copy, size);
    free(copy);
    return 0;
}
