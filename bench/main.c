/* SPDX-License-Identifier: MIT */
/*
 * bench/main.c - pcw's benchmark suite (bench/README.md).
 *
 * Makes a private root directory for every segment and MMV file the suite
 * creates ($PCW_DIR, $PCP_TMP_DIR), pins itself to BU_CPU_MAIN, registers
 * every benchmark and hands argv to Google Benchmark. The same binary, run
 * as "--bu-child ...", is the provider and reader processes (benchutil.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "benchutil.h"

static char root[PATH_MAX];

void bench_pcwtop_register(void); /* bench/pcwtop.c */
void bench_histogram_query_register(void); /* bench/histogram_query.c */
void bench_history_read_register(void);    /* bench/history_read.c */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--bu-child") == 0)
        return bu_child_main(argc, argv);

    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/pcw-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        perror("pcw_bench: mkdtemp");
        return 1;
    }
    char pcp[PATH_MAX + 16];
    snprintf(pcp, sizeof pcp, "%s/pcp", root);
    mkdir(pcp, 0700);
    char mmvdir[PATH_MAX + 32];
    snprintf(mmvdir, sizeof mmvdir, "%s/mmv", pcp);
    mkdir(mmvdir, 0700);
    /* Before anything opens a provider, consumer or MMV file; the children
     * inherit both. */
    setenv("PCW_DIR", root, 1);
    setenv("PCP_TMP_DIR", pcp, 1);
    bu_pin(BU_CPU_MAIN);

    bench_update_register();
    bench_histogram_register();
    bench_snapshot_register();
    bench_lifecycle_register();
    bench_lookup_register();
    bench_callback_register();
    bench_segment_register();
    bench_mmv_register();
    bench_query_register();
    bench_history_register();
    bench_history_pcwstat_register();
    bench_histogram_query_register();
    bench_history_read_register();
    bench_pcwtop_register();
    bench_export_register();
    bench_containers_register();

    int rc = gb_main(argc, argv);
    bu_provider_stop_all();
    nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
