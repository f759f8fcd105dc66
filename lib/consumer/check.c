/*
 * lib/consumer/check.c - verify a whole segment (pcwdump --check).
 *
 * Reloads the metadata (which validates every counterset and counter),
 * then reads every counterset in full, which walks and range-checks every
 * chunk and every live slot, and finally checks what only a whole view can:
 * names are valid UTF-8 and unique case-insensitively, single-instance sets
 * have one unnamed instance.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "pcw/name.h"

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
            if (pcw_utf8_count(nm, nlen) < 0 || (multi ? nlen == 0 : nlen != 0)) {
                rc = fail(why, why_len, PCW_E_CORRUPT,
                          "counterset \"%s\": an instance has an invalid name", cs->name);
                break;
            }
            /* Quadratic, but only for --check. Duplicates may be a race with a
             * close-and-recreate, so only a stable duplicate would matter;
             * report it anyway as the tool's job is to be strict. */
            for (size_t k = 0; k < j && j < 20000; k++) {
                if (pcw_name_equal(nm, nlen, pcw_snapshot_name(&snap, k),
                                   pcw_snapshot_name_len(&snap, k))) {
                    rc = fail(why, why_len, PCW_E_CORRUPT,
                              "counterset \"%s\": two instances share a name", cs->name);
                    break;
                }
            }
            if (rc != PCW_OK)
                break;
        }
    }
    pcw_snapshot_free(&snap);
    if (rc == PCW_OK && why && why_len)
        snprintf(why, why_len, "ok");
    return rc;
}
