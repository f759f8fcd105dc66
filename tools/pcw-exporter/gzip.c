/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/gzip.c - a scrape body gzip-compressed (gzip.h).
 *
 * Why ISA-L: for the 8 MB text of 100,000 series, zlib level 1 takes
 * 11 ms of CPU, libdeflate level 1 6.6 ms, igzip level 1 2.3 ms for about
 * the same ratio (15.4 against zlib's 15.6) - a scrape's text is long
 * runs of the same label names, which igzip's level 1 finds with one hash
 * probe and SIMD compares (docs/performance.md, "gzip scrapes"). Level 0
 * is hardly faster (2.0 ms) and compresses half as well; level 3 is
 * slower than zlib. One thread: zlib in chunks on both CPUs (pigz's way)
 * would still take 5.5 ms at best, and igzip's 2.3 ms is no longer the
 * larger part of a gzip scrape - a second thread would add CPU time and a
 * handoff to save at most half of that.
 */
#include <isa-l/igzip_lib.h>
#include <stdint.h>
#include <stdlib.h>

#include "gzip.h"

/* The input is given to igzip (a 32-bit avail_in) in slices of this at
 * most. */
#define SLICE (1u << 30)

/* igzip's state (82 KB: its history buffer) and level 1's hash table and
 * token buffer (ISA-L's suggested size, about 280 KB): on the heap, for the
 * one call - the caller may be a libmicrohttpd thread with a small stack. */
typedef struct compressor {
    struct isal_zstream s;
    uint8_t level_buf[ISAL_DEF_LVL1_DEFAULT];
} compressor;

int gzip_compress(const char *p, size_t n, ebuf *out)
{
    compressor *c = malloc(sizeof *c);
    if (!c)
        return -1;
    struct isal_zstream *s = &c->s;
    isal_deflate_init(s);
    /* isal_deflate_init leaves the input as it was: here, malloc's junk. */
    s->next_in = NULL;
    s->avail_in = 0;
    s->level = 1;
    s->level_buf = c->level_buf;
    s->level_buf_size = sizeof c->level_buf;
    s->gzip_flag = IGZIP_GZIP; /* a gzip header and trailer (CRC-32, size) */
    s->flush = NO_FLUSH;       /* blocks as igzip chooses; one final block last */
    out->len = 0;
    size_t given = 0;
    int rc = -1;
    for (;;) {
        if (s->avail_in == 0 && given < n) {
            size_t piece = n - given < SLICE ? n - given : SLICE;
            s->next_in = (uint8_t *)(uintptr_t)(p + given);
            s->avail_in = (uint32_t)piece;
            given += piece;
        }
        s->end_of_stream = given == n;
        /* Room for a scrape's text at its usual ratio in one go; more
         * (doubling) when the input compresses worse. Each round takes
         * input or writes output - a round that does neither is an error,
         * not a loop - so the rounds are bounded by n. */
        if (!eb_need(out, n / 8 + 4096))
            break;
        size_t room = out->cap - out->len;
        s->next_out = (uint8_t *)out->p + out->len;
        s->avail_out = room < UINT32_MAX ? (uint32_t)room : UINT32_MAX;
        uint32_t before = s->avail_out, unread = s->avail_in;
        if (isal_deflate(s) != COMP_OK)
            break;
        out->len += before - s->avail_out;
        if (s->internal_state.state == ZSTATE_END) {
            rc = 0;
            break;
        }
        if (s->avail_out == before && s->avail_in == unread)
            break;
    }
    free(c);
    return rc;
}
