/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/check.c - verify a whole segment (pcwdump --check).
 *
 * Reloads the metadata (which validates every counterset and counter),
 * then reads every counterset in full, which walks and range-checks every
 * chunk and every live slot, and finally checks what only a whole view can:
 * names are valid UTF-8 and unique case-insensitively, single-instance sets
 * have one unnamed instance.
 *
 * Work is O(n log n) in the instances (times the name length per
 * comparison): names are sorted by (hash, folded code points), so equal
 * names end up side by side whatever a hostile segment does to the hash.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "common/name.h"

__attribute__((format(printf, 4, 5))) static int fail(char *why, size_t n, int rc, const char *fmt,
                                                      ...)
{
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* An instance name, for the duplicate check. */
typedef struct name_key {
    uint64_t hash; /* pcw__name_hash: names that compare equal hash equal */
    const char *s;
    size_t len;
} name_key;

/* Order two valid UTF-8 names by their case-folded code points: 0 exactly
 * when pcw__name_equal says they are equal (both fold with pcw__fold). */
static int fold_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        uint32_t fa = pcw__fold((uint32_t)pcw__utf8_next(a, an, &i));
        uint32_t fb = pcw__fold((uint32_t)pcw__utf8_next(b, bn, &j));
        if (fa != fb)
            return fa < fb ? -1 : 1;
    }
    return (i < an) - (j < bn);
}

static int cmp_key(const void *x, const void *y)
{
    const name_key *a = x, *b = y;
    if (a->hash != b->hash)
        return a->hash < b->hash ? -1 : 1;
    return fold_cmp(a->s, a->len, b->s, b->len);
}

/* Do two of the snapshot's names (valid UTF-8) compare equal? -1 if out of
 * memory. */
static int has_duplicate(const pcw_snapshot *snap)
{
    if (snap->count < 2)
        return 0;
    name_key *k = malloc(snap->count * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < snap->count; i++) {
        k[i].s = pcw_snapshot_name(snap, i);
        k[i].len = pcw_snapshot_name_len(snap, i);
        k[i].hash = pcw__name_hash(k[i].s, k[i].len);
    }
    qsort(k, snap->count, sizeof *k, cmp_key);
    int dup = 0;
    for (size_t i = 1; i < snap->count && !dup; i++)
        dup = k[i].hash == k[i - 1].hash &&
              pcw__name_equal(k[i].s, k[i].len, k[i - 1].s, k[i - 1].len);
    free(k);
    return dup;
}

int pcw_segment_check(pcw_segment *seg, char *why, size_t why_len)
{
    if (!seg)
        return PCW_E_INVALID_PARAMETER;
    int changed;
    seg->why[0] = 0;
    int rc = pcw_segment_refresh(seg, &changed);
    if (rc != PCW_OK)
        return fail(why, why_len, rc, "header or counterset metadata: %s",
                    seg->why[0] ? seg->why : pcw_status_str(rc));
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    for (size_t i = 0; rc == PCW_OK && i < seg->ncsets; i++) {
        const pcw_counterset *cs = &seg->csets[i].pub;
        seg->why[0] = 0;
        rc = pcw_segment_read(seg, cs, &snap, 0);
        if (rc != PCW_OK) {
            if (seg->why[0])
                rc = fail(why, why_len, rc, "%s", seg->why);
            else
                rc = fail(why, why_len, rc, "counterset \"%s\": instance directory is damaged",
                          cs->name);
            break;
        }
        int multi = pcw_instance_type_is_multi(cs->instance_type);
        if (!multi && snap.count > 1) {
            rc = fail(why, why_len, PCW_E_CORRUPT,
                      "single-instance counterset \"%s\" has several instances", cs->name);
            break;
        }
        for (size_t j = 0; j < snap.count; j++) {
            const char *nm = pcw_snapshot_name(&snap, j);
            uint32_t nlen = pcw_snapshot_name_len(&snap, j);
            if (pcw__utf8_count(nm, nlen) < 0 || (multi ? nlen == 0 : nlen != 0)) {
                rc = fail(why, why_len, PCW_E_CORRUPT,
                          "counterset \"%s\": an instance has an invalid name", cs->name);
                break;
            }
        }
        /* Duplicates may be a race with a close-and-recreate, so only a
         * stable duplicate would matter; report it anyway as the tool's
         * job is to be strict. */
        int dup = rc == PCW_OK ? has_duplicate(&snap) : 0;
        if (dup < 0)
            rc = fail(why, why_len, PCW_E_NO_MEMORY, "%s", pcw_status_str(PCW_E_NO_MEMORY));
        else if (dup)
            rc = fail(why, why_len, PCW_E_CORRUPT, "counterset \"%s\": two instances share a name",
                      cs->name);
    }
    pcw_snapshot_free(&snap);
    if (rc == PCW_OK && why && why_len)
        snprintf(why, why_len, "ok");
    return rc;
}
