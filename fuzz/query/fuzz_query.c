/* SPDX-License-Identifier: MIT */
/*
 * fuzz/query/fuzz_query.c - libFuzzer target for the query layer's pure
 * functions on arbitrary input:
 *
 *   first byte even: the rest is a counter path. pcw_path_parse must
 *     either fail with an error that names a part, or succeed; a parsed
 *     path built again with pcw_path_build must parse to the same parts.
 *   first byte odd: the rest is a counter type and two raw samples.
 *     pcw_cook must return a known status, a finite number with
 *     PCW_CSTATUS_VALID and 0 with any other status.
 *
 * Built and run, bounded, by `make check-fuzz`.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pcw/pdh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void path_case(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return;
    memcpy(text, data, size);
    text[size] = 0;
    pcw_path p;
    pcw_path_error err;
    int rc = pcw_path_parse(text, &p, &err);
    if (rc != PCW_OK) {
        if (err.status != rc || err.part < PCW_PATH_SYNTAX || err.part > PCW_PATH_COUNTER ||
            !err.message[0] || err.offset > size)
            abort();
        free(text);
        return;
    }
    size_t need = pcw_path_build(NULL, 0, p.host, p.counterset, p.instance, p.index, p.counter);
    char *again = malloc(need + 8);
    if (again) {
        /* An explicit index - also #0 - keeps a name ending in #digits. */
        if (p.instance && p.has_index && p.index == 0) {
            size_t n =
                pcw_path_build(again, need + 8, p.host, p.counterset, p.instance, 0, p.counter);
            (void)n;
            char *close = strrchr(again, '\\');
            /* insert "#0" before the ')' that precedes the counter */
            if (close && close > again && close[-1] == ')') {
                memmove(close + 1, close - 1, strlen(close - 1) + 1);
                close[-1] = '#', close[0] = '0';
            }
        } else {
            pcw_path_build(again, need + 1, p.host, p.counterset, p.instance, p.index, p.counter);
        }
        pcw_path q;
        if (pcw_path_parse(again, &q, NULL) != PCW_OK || strcmp(q.counterset, p.counterset) ||
            strcmp(q.counter, p.counter) || !q.instance != !p.instance ||
            (p.instance && strcmp(q.instance, p.instance)) || q.index != p.index ||
            q.wild != p.wild)
            abort();
        pcw_path_free(&q);
        free(again);
    }
    pcw_path_free(&p);
    free(text);
}

static uint64_t take(const uint8_t **d, size_t *n)
{
    uint64_t v = 0;
    size_t k = *n < 8 ? *n : 8;
    memcpy(&v, *d, k);
    *d += k, *n -= k;
    return v;
}

static void cook_case(const uint8_t *d, size_t n)
{
    uint32_t type = (uint32_t)take(&d, &n);
    pcw_raw now = {PCW_CSTATUS_VALID, take(&d, &n), take(&d, &n), take(&d, &n), take(&d, &n), 0};
    pcw_raw prev = {PCW_CSTATUS_VALID, take(&d, &n), take(&d, &n), take(&d, &n), take(&d, &n), 0};
    uint64_t extra = take(&d, &n);
    int32_t scale = (int32_t)(extra % 21) - 10;
    unsigned flags = (unsigned)(extra >> 8) & 7u;
    double v = -1;
    int s = pcw_cook(type, &now, (extra >> 16) & 1 ? NULL : &prev, scale, flags, &v);
    if (s < PCW_CSTATUS_VALID || s > PCW_CSTATUS_NOT_AGGREGATED)
        abort();
    if (s == PCW_CSTATUS_VALID ? !isfinite(v) : v != 0.0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        cook_case(data + 1, size - 1);
    else
        path_case(data + 1, size - 1);
    return 0;
}
