/* SPDX-License-Identifier: MIT */
/*
 * fuzz/history/fuzz_history.c - libFuzzer target for the pcw log reader
 * (lib/history/read.c): any bytes as a log. The reader must hand out
 * samples and then end cleanly or with a sentence naming an offset inside
 * the input, never read past it, and every sample must cook (hist_cook, as
 * pcwrelog does) to a known status, a finite number only when valid.
 *
 * A mutated block almost never passes its CRC, and then nothing inside it
 * is decoded: so the input is read twice, as it is (the checks of the
 * block headers) and with every block's CRC made right first (the records'
 * decoding and cooking).
 *
 * Seeds: real logs made at build time (fuzz/history/make_seeds.c). Built
 * and run, bounded, by `make check-fuzz`.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "../../lib/history/codec.h"
#include "../../lib/history/history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every whole block's CRC set to what its bytes give. */
static void fix_crcs(unsigned char *b, size_t size)
{
    size_t off = HIST_FILE_HEADER;
    while (off + HIST_BLOCK_HEADER <= size) {
        unsigned char *h = b + off;
        size_t stored = hist_le32(h + 4);
        if (stored > size - off - HIST_BLOCK_HEADER)
            return;
        uLong crc = crc32(crc32(0L, Z_NULL, 0), h, 24);
        crc = crc32(crc, h + HIST_BLOCK_HEADER, (uInt)stored);
        hist_put_le32(h + 24, (uint32_t)crc);
        off += HIST_BLOCK_HEADER + stored;
    }
}

static void read_log(const uint8_t *data, size_t size)
{
    hist_reader *r;
    char why[512];
    if (hist_reader_open_mem(&r, data, size, why, sizeof why)) {
        if (!why[0])
            abort();
        return;
    }
    hist_value *prev = NULL;
    uint64_t *epoch = NULL;
    size_t have = 0;
    uint64_t mono, real;
    const hist_value *v;
    size_t n;
    int rc;
    while ((rc = hist_reader_next(r, &mono, &real, &v, &n, why, sizeof why)) == 1) {
        if (n != hist_reader_series_count(r))
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
            const hist_series *s = hist_reader_series(r, i);
            double x;
            int st = hist_cook(s, &v[i], epoch[i] == s->epoch ? &prev[i] : NULL, 0, &x);
            /* A number only with VALID and (a histogram's top bound)
             * ABOVE_RANGE, always finite. */
            int number = st == PCW_CSTATUS_VALID || st == PCW_CSTATUS_ABOVE_RANGE;
            if (st < 0 || st > PCW_CSTATUS_LAST || (number && !isfinite(x)) ||
                (!number && x != 0.0))
                abort();
            prev[i] = v[i];
            epoch[i] = s->epoch;
        }
    }
    if (hist_reader_offset(r) > size || (rc < 0 && !strstr(why, "offset")))
        abort();
    free(prev);
    free(epoch);
    hist_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_log(data, size);
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_crcs(copy, size);
    read_log(copy, size);
    free(copy);
    return 0;
}
