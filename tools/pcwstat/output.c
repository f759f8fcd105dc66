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
 * JSON: one object per sample per line (docs/query.md shows it), strings
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

/* A value with a number to write: a valid one, or a histogram's quantile
 * or max at the top of its range - the top bound, a lower bound of the
 * true value (pcwstat says so once on stderr, main.c's explain). */
static int has_number(int status)
{
    return status == PCW_CSTATUS_VALID || status == PCW_CSTATUS_ABOVE_RANGE;
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
                    has_number(v.status);
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
    char ts[64];
    time_t secs = (time_t)(realtime_ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (unsigned)(realtime_ns % 1000000000ull / 1000000ull));
    fprintf(f, "{\"time\":\"%s\",\"sample\":%llu,\"values\":[", ts, (unsigned long long)sample);
    int first = 1;
    char path[4096];
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < pcw_pdh_value_count(hs[j]); i++) {
            pcw_pdh_value v;
            if (pcw_pdh_get_value(hs[j], i, fmt_flags, &v) != PCW_OK)
                continue;
            pcw_pdh_value_path(hs[j], i, 1, path, sizeof path);
            fputs(first ? "{" : ",{", f);
            first = 0;
            fputs("\"path\":", f);
            json_string(f, path);
            fputs(",\"counterset\":", f);
            json_string(f, v.counterset);
            fputs(",\"instance\":", f);
            json_string(f, v.instance);
            fputs(",\"counter\":", f);
            json_string(f, v.counter);
            fprintf(f, ",\"kind\":\"%s\",\"pid\":%d,\"provider_id\":\"%016llx\"", kind_name(v.kind),
                    (int)v.pid, (unsigned long long)v.provider_id);
            const pcw_container_info *ci =
                containers ? tc_container(containers, v.provider_id, &hint) : NULL;
            if (ci) {
                char name[64];
                tc_container_name(ci, name, sizeof name);
                fputs(",\"container\":", f);
                json_string(f, name);
                fprintf(f, ",\"host_pid\":%d", (int)ci->host_pid);
                if (ci->pod[0]) { /* Kubernetes' (docs/containers.md, "Identity") */
                    fputs(",\"namespace\":", f);
                    json_string(f, ci->pod_namespace);
                    fputs(",\"pod\":", f);
                    json_string(f, ci->pod);
                }
            }
            if (has_number(v.status))
                fprintf(f, ",\"value\":%.17g", v.value);
            else
                fputs(",\"value\":null", f);
            fputs(",\"status\":", f);
            json_string(f, pcw_cstatus_str(v.status));
            fputc('}', f);
        }
    fputs("]}\n", f);
}
