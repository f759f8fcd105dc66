/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwrelog/list.c - -q: what the logs hold (relog.h): each log (in
 * time order) with its own format version, blocks, first and last sample
 * times and samples, where it is damaged; then the counter paths (those
 * -c/-cf select) with their counter types.
 */
#include <string.h>

#include "../common/escape.h"
#include "../common/typeperf.h"
#include "relog.h"

void put_name(FILE *out, const char *s)
{
    if (esc_is_tty(out))
        esc_put(out, s, strlen(s), ESC_BACKSLASH_LITERAL);
    else
        fputs(s, out);
}

int list_logs(const relog_run *run, FILE *out)
{
    int status = 0;
    for (size_t i = 0; i < run->nlogs; i++) {
        const relog_log *l = &run->logs[i];
        char a[64], b[64];
        fputs("Log: ", out);
        put_name(out, l->file);
        fprintf(out, "\nFormat: pcw log version %u, %llu block%s, %llu bytes read\n", l->version,
                (unsigned long long)l->blocks, l->blocks == 1 ? "" : "s",
                (unsigned long long)l->bytes);
        if (l->samples) {
            typeperf_time(l->first_real, a, sizeof a);
            typeperf_time(l->last_real, b, sizeof b);
            fprintf(out, "Begin: %s\nEnd: %s\n", a, b);
        }
        fprintf(out, "Samples: %llu\n", (unsigned long long)l->samples);
        if (l->damaged) {
            fprintf(out, "Damaged: %s\n", l->why);
            fprintf(stderr, "pcwrelog: %s: %s\n", l->file, l->why);
            status = 1;
        }
    }
    fprintf(out, "Counters: %zu\n", run->nselected);
    for (size_t c = 0; c < run->ncols; c++) {
        const relog_col *col = &run->cols[c];
        if (!col->selected)
            continue;
        const char *t = pcw_counter_type_name(col->type);
        put_name(out, col->path);
        fprintf(out, "  %s\n", col->kind == PCW__HIST_KIND_COMPUTED ? "(computed)" : t ? t : "");
    }
    return status;
}
