/* SPDX-License-Identifier: MIT */
/*
 * bench/benchutil.h - what the benchmark files share: the private
 * directories, CPU pinning, and child processes (a provider holding N
 * instances for a consumer benchmark to read, readers snapshotting a
 * provider's segment, an MMV writer).
 *
 * Children are this same binary re-executed (/proc/self/exe) with
 * "--bu-child KIND ARGS...": a fresh process, so no lock, thread or liburcu
 * state of the benchmark process leaks into it through fork. A child
 * prints one line on its stdout when ready, then lives until its stdin
 * reaches end of file (or it is killed), so a child never outlives the
 * benchmark process.
 */
#ifndef PCW_BENCH_BENCHUTIL_H
#define PCW_BENCH_BENCHUTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gbench.h"

/* CPUs: the benchmark (consumer) process runs on BU_CPU_MAIN, the other
 * side (provider, readers) on BU_CPU_OTHER, when the machine has two. */
#define BU_CPU_MAIN  0
#define BU_CPU_OTHER 1

/* Pin the calling process (every thread it starts later, too) to `cpu`;
 * ignored when the CPU does not exist. */
void bu_pin(int cpu);

/* Monotonic clock in nanoseconds. */
uint64_t bu_now_ns(void);

/* header.size of the segment at `path`, read through a read-only mapping
 * as a consumer would; 0 on error. */
uint64_t bu_segment_size(const char *path);

/* The private root made by main.c ($PCW_DIR); "" before. */
const char *bu_root(void);

/* A child process. */
typedef struct bu_child {
    pid_t pid;
    int in;                    /* its stdin: closing it tells the child to exit */
    int out;                   /* its stdout */
    char line[PATH_MAX + 128]; /* its ready line */
} bu_child;

/* Start "--bu-child <args...>" (NULL-terminated), pinned to `cpu`; wait for
 * its ready line (into c->line, without the newline). 0 or -1. */
int bu_spawn(bu_child *c, int cpu, const char *const *args);
/* Close its stdin, then wait for it (SIGKILL after 10 s). */
void bu_stop(bu_child *c);

/* Entry point of a child: main() calls this when argv[1] is "--bu-child". */
int bu_child_main(int argc, char **argv);

/* ---- the shared provider children --------------------------------------- */

/* A provider child holding `instances` instances of a counterset with
 * `counters` 8-byte counters, named "inst-%07d" (12 bytes each), created
 * once per process and shared by every benchmark that asks for the same
 * shape. The counterset is named "Bench". */
typedef struct bu_provider {
    int64_t instances, counters;
    uint32_t flags; /* its registration's PCW_REG_* */
    bu_child child;
    char path[PATH_MAX];  /* its segment */
    uint64_t size_before; /* header.size after registering, before the
                             first instance */
} bu_provider;

#define BU_NAME_FMT "inst-%07d"
#define BU_NAME_LEN 12

/* The provider of that shape (started on first use, pinned to
 * BU_CPU_OTHER); NULL on failure (reported on stderr). */
const bu_provider *bu_provider_get(int64_t instances, int64_t counters);
/* The same, registered with PCW_REG_* flags. */
const bu_provider *bu_provider_get_flags(int64_t instances, int64_t counters, uint32_t flags);
/* Stop every provider child. */
void bu_provider_stop_all(void);
/* Stop every provider child but the one of this shape (started or not):
 * a figure that must see only its own shape's "Bench" keeps the child an
 * earlier figure of that shape started (a million instances take minutes
 * to create on a loaded machine). */
void bu_provider_keep_only(int64_t instances, int64_t counters);
/* A child a file keeps for its own figures, outside the shared providers
 * (histogram_query.c's, history_record.c's): both functions above also
 * call stop() (registered once; at most 8), so that a figure that counts
 * every provider alive - the exporter's scrape, pcwtop's refresh - sees
 * only its own in a full run too (without, the scrape carried the 10,000
 * histograms' child: 35.9 MB of text instead of 8.2). */
void bu_on_stop_all(void (*stop)(void));

/* ---- registration, one per file ----------------------------------------- */

void bench_update_register(void);
void bench_histogram_register(void);
void bench_snapshot_register(void);
void bench_lifecycle_register(void);
void bench_lookup_register(void);
void bench_segment_register(void);
void bench_callback_register(void);
void bench_mmv_register(void);
void bench_query_register(void);
void bench_history_register(void); /* bench/history_record.c */
void bench_history_pcwstat_register(void); /* bench/history_pcwstat.c */
void bench_export_register(void);
void bench_containers_register(void);
/* mmv.c's child: an MMV writer with N instances. */
int bench_mmv_child(int argc, char **argv);
/* callback.c's children ("--bu-child callback-KIND ..."): the callback
 * provider, the socket echo server and the concurrent consumers. */
int bench_callback_child(int argc, char **argv);
/* bench/history_record.c: the provider whose values advance each sample. */
int bench_history_churn_child(int argc, char **argv);
/* bench/histogram_query.c's provider child: `instances` histograms. */
int bench_histogram_child(int64_t instances);

#endif /* PCW_BENCH_BENCHUTIL_H */
