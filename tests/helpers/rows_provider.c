/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/rows_provider.c - a provider whose rows a recorder can log
 * as rows (tests/test_history_rows.c: every counter 8 bytes side by side,
 * multiple instances, no totals).
 *
 *   rows_provider [plain [NAME]]
 *
 * Registers "Rows Test" (or NAME) with
 *
 *   index id name        type                      off
 *   0     1  Count       PERF_COUNTER_BULK_COUNT   0   (second: the read's time)
 *   1     2  Level       PERF_COUNTER_LARGE_RAWCOUNT 8
 *   2     3  Busy        PERF_100NSEC_TIMER        16  (second: the time / 100)
 *   3     4  Ratio       PERF_LARGE_RAW_FRACTION   24  (second: word 4)
 *   4     5  Ratio Base  PERF_LARGE_RAW_BASE       32
 *
 * (plain: the first three only, so that "\Rows Test(*)\*" selects every
 * counter of its rows: pcwstat's recorder logs it as row samples), prints
 * "ready", then serves one command per stdin line, answering "ok"
 * (or "err <status>"):
 *   create NAME | close NAME | set NAME INDEX VALUE | quit
 * It exits 0 on "quit" or at end of stdin.
 */
#define _GNU_SOURCE 1
#define PCW_PROVIDER_IMPLEMENTATION
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcw/provider.h"

#define MAX_INST 64
#define NCTR     5

static struct {
    char name[64];
    pcw_instance *inst;
} insts[MAX_INST];

static int find(const char *name)
{
    for (int i = 0; i < MAX_INST; i++)
        if (insts[i].inst && strcmp(insts[i].name, name) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    uint32_t nctr = argc > 1 && strcmp(argv[1], "plain") == 0 ? 3 : NCTR;
    pcw_provider *p;
    pcw_provider_options po = {.name = "rows_provider"};
    if (pcw_provider_open(&p, &po) != PCW_OK)
        return 1;
    static const char *names[NCTR] = {"Count", "Level", "Busy", "Ratio", "Ratio Base"};
    static const uint32_t types[NCTR] = {PERF_COUNTER_BULK_COUNT, PERF_COUNTER_LARGE_RAWCOUNT,
                                         PERF_100NSEC_TIMER, PERF_LARGE_RAW_FRACTION,
                                         PERF_LARGE_RAW_BASE};
    pcw_counter_desc c[NCTR];
    for (uint32_t i = 0; i < NCTR; i++) {
        c[i] = pcw_counter_desc_default();
        c[i].id = i + 1, c[i].name = names[i], c[i].type = types[i];
        c[i].size = 8, c[i].offset = 8 * i;
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = argc > 2 ? argv[2] : "Rows Test",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = nctr,
                                  .counters = c};
    pcw_registration *r;
    if (pcw_register(&r, p, &info) != PCW_OK)
        return 1;
    printf("ready\n");
    fflush(stdout);
    char line[256], a[64];
    while (fgets(line, sizeof line, stdin)) {
        unsigned idx;
        unsigned long long v;
        int rc = PCW_OK, i;
        if (strncmp(line, "quit", 4) == 0)
            break;
        if (sscanf(line, "create %63s", a) == 1) {
            for (i = 0; i < MAX_INST && insts[i].inst; i++)
                ;
            uint64_t zero[NCTR] = {0};
            pcw_data d = {zero, 8 * (size_t)nctr};
            if (i == MAX_INST)
                rc = PCW_E_NO_MEMORY;
            else if ((rc = pcw_create_instance(&insts[i].inst, r, a, 1, &d)) == PCW_OK)
                snprintf(insts[i].name, sizeof insts[i].name, "%s", a);
        } else if (sscanf(line, "close %63s", a) == 1) {
            if ((i = find(a)) < 0)
                rc = PCW_E_NOT_FOUND;
            else
                pcw_close_instance(insts[i].inst), insts[i].inst = NULL;
        } else if (sscanf(line, "set %63s %u %llu", a, &idx, &v) == 3 && idx < nctr) {
            if ((i = find(a)) < 0) {
                rc = PCW_E_NOT_FOUND;
            } else {
                uint64_t *w = pcw_instance_block(insts[i].inst, 0);
                pcw_instance_write_begin(insts[i].inst);
                pcw_u64_set(&w[idx], v);
                pcw_instance_write_end(insts[i].inst);
            }
        } else {
            rc = PCW_E_INVALID_PARAMETER;
        }
        if (rc == PCW_OK)
            printf("ok\n");
        else
            printf("err %d\n", rc);
        fflush(stdout);
    }
    pcw_provider_close(p);
    return 0;
}
