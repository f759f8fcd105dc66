/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwstat/output.c - typeperf's CSV and TSV, and JSON lines.
 *
 * CSV/TSV exactly as typeperf writes them: a header row
 *   "(PDH-CSV 4.0)","\\host\Set(inst)\Counter",...
 * then one row per sample: the local time "MM/dd/yyyy HH:mm:ss.fff" and
 * each value with six decimals, every field in double quotes (a quote
 * inside is doubled), fields separated by ',' (CSV) or a tab (TSV, whose
 * header says "(PDH-TSV 4.0)"). A value without data - first sample of a
 * rate, instance or provider gone, a zero interval... - is an empty field.
 * Lines end with "\n".
 *
 * JSON: one object per sample per line (docs/query.md shows it), written by
 * tools/common/jsonrow.h (pcwrelog -f JSON writes the same lines), strings
 * escaped by the tools' one JSON escape (tools/common/escape.h).
 *
 * Names are never written raw to a terminal: see typeperf_field()
 * (tools/common/typeperf.h, shared with pcwrelog).
 */
#define _GNU_SOURCE 1
#include <string.h>
#include <time.h>

#include "common/name.h"

#include "../common/container.h"
#include "../common/jsonrow.h"
#include "../common/typeperf.h"
#include "pcwstat.h"

void write_header(FILE *f, int format, const column *cols, size_t n)
{
    char sep = format == FMT_TSV ? '\t' : ',';
    int tty = esc_is_tty(f);
    typeperf_field(f, format == FMT_TSV ? "(PDH-TSV 4.0)" : "(PDH-CSV 4.0)", tty);
    for (size_t i = 0; i < n; i++) {
        fputc(sep, f);
        typeperf_field(f, cols[i].path, tty);
    }
    fputc('\n', f);
}

void write_row(FILE *f, int format, uint64_t realtime_ns, const column *cols, size_t n,
               unsigned fmt_flags)
{
    char sep = format == FMT_TSV ? '\t' : ',', ts[64];
    typeperf_time(realtime_ns, ts, sizeof ts);
    typeperf_field(f, ts, 0);
    for (size_t i = 0; i < n; i++) {
        fputc(sep, f);
        pcw_pdh_value v;
        int valid = pcw_pdh_value_count(cols[i].h) > 0 &&
                    pcw_pdh_get_value(cols[i].h, 0, fmt_flags, &v) == PCW_OK &&
                    typeperf_has_number(v.status);
        typeperf_value(f, valid, valid ? v.value : 0.0);
    }
    fputc('\n', f);
}

void json_string(FILE *f, const char *s)
{
    esc_json(f, s, strlen(s));
}

static const char *kind_name(uint32_t k)
{
    return k == PCW_PDH_TOTAL ? "total" : k == PCW_PDH_AGGREGATE ? "aggregate" : "instance";
}

void write_json(FILE *f, uint64_t realtime_ns, uint64_t sample, pcw_pdh_counter *const *hs,
                size_t n, unsigned fmt_flags, pcw_consumer *containers)
{
    size_t hint = 0;
    jsonrow_begin(f, realtime_ns, sample);
    int first = 1;
    char path[4096], name[64];
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < pcw_pdh_value_count(hs[j]); i++) {
            pcw_pdh_value v;
            if (pcw_pdh_get_value(hs[j], i, fmt_flags, &v) != PCW_OK)
                continue;
            pcw_pdh_value_path(hs[j], i, 1, path, sizeof path);
            jsonrow_val jv = {.path = path,
                              .counterset = v.counterset,
                              .instance = v.instance,
                              .counter = v.counter,
                              .kind = kind_name(v.kind),
                              .pid = (int32_t)v.pid,
                              .provider_id = v.provider_id,
                              .has_number = typeperf_has_number(v.status),
                              .value = v.value,
                              .status = v.status};
            const pcw_container_info *ci =
                containers ? tc_container(containers, v.provider_id, &hint) : NULL;
            if (ci) {
                tc_container_name(ci, name, sizeof name);
                jv.container = name;
                jv.host_pid = (int32_t)ci->host_pid;
                if (ci->pod[0])
                    jv.pod_namespace = ci->pod_namespace, jv.pod = ci->pod;
            }
            jsonrow_value(f, &jv, first);
            first = 0;
        }
    jsonrow_end(f);
}
