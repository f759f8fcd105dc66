/* SPDX-License-Identifier: MIT */
/*
 * tools/common/jsonrow.c - JSON lines of samples (jsonrow.h).
 */
#define _GNU_SOURCE 1
#include "jsonrow.h"

#include <string.h>
#include <time.h>

#include <pcw/pdh.h>

#include "escape.h"

static void str(FILE *f, const char *s)
{
    esc_json(f, s, strlen(s));
}

void jsonrow_begin(FILE *f, uint64_t realtime_ns, uint64_t sample)
{
    char ts[64];
    time_t secs = (time_t)(realtime_ns / 1000000000ull);
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (unsigned)(realtime_ns % 1000000000ull / 1000000ull));
    fprintf(f, "{\"time\":\"%s\",\"sample\":%llu,\"values\":[", ts, (unsigned long long)sample);
}

void jsonrow_value(FILE *f, const jsonrow_val *v, int first)
{
    fputs(first ? "{\"path\":" : ",{\"path\":", f);
    str(f, v->path);
    fputs(",\"counterset\":", f);
    str(f, v->counterset);
    fputs(",\"instance\":", f);
    str(f, v->instance);
    fputs(",\"counter\":", f);
    str(f, v->counter);
    fprintf(f, ",\"kind\":\"%s\",\"pid\":%d,\"provider_id\":\"%016llx\"", v->kind, (int)v->pid,
            (unsigned long long)v->provider_id);
    if (v->container) {
        fputs(",\"container\":", f);
        str(f, v->container);
        fprintf(f, ",\"host_pid\":%d", (int)v->host_pid);
        if (v->pod) { /* Kubernetes' (docs/containers.md, "Identity") */
            fputs(",\"namespace\":", f);
            str(f, v->pod_namespace);
            fputs(",\"pod\":", f);
            str(f, v->pod);
        }
    }
    if (v->has_number)
        fprintf(f, ",\"value\":%.17g", v->value);
    else
        fputs(",\"value\":null", f);
    fputs(",\"status\":", f);
    str(f, pcw_cstatus_str(v->status));
    fputc('}', f);
}

void jsonrow_end(FILE *f)
{
    fputs("]}\n", f);
}
