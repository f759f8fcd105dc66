/* SPDX-License-Identifier: MIT */
/*
 * pcwdump.h - pcwdump's internal interfaces: options, selection filters,
 * name tables, and the two output formats (text.c, json.c) driven by the
 * walk in dump.c.
 */
#ifndef PCWDUMP_H
#define PCWDUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pcw/consumer.h>

/* The JSON schema's version (docs/pcwdump-json.md): bump on incompatible
 * changes; adding members is compatible. */
#define PCWDUMP_JSON_VERSION 1

/* Exit statuses. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

typedef struct str_list {
    const char **v;
    size_t n;
} str_list;

typedef struct dump_opts {
    const char *dir;    /* --dir, else $PCW_DIR, else /dev/shm */
    int all_users;      /* --all-users */
    int containers;     /* --containers */
    str_list providers; /* -p: PID or name wildcard */
    str_list csets;     /* -c: name wildcard */
    str_list instances; /* -i: instance-name wildcard */
    uint32_t *ids;      /* --id */
    size_t nids;
    str_list counters; /* --counters: names or ids (split at commas) */
    str_list segments; /* --segment */
    int merged, json, compact, check, remove_stale, no_values;
    uint32_t timeout_ms; /* --timeout: wait for callback providers; 0 = 1000 */
    double interval;     /* --watch seconds; 0 = once */
    long count;          /* -n; 0 = forever when watching */
} dump_opts;

/* The root directory the consumer scans. */
const char *dump_root(const dump_opts *o);

/* A status as pcwdump shows it (sink.c): pcw_status_describe (a
 * provider's own error code is "provider error 5 (ERROR_ACCESS_DENIED)"),
 * in a buffer that lasts until the next call (pcwdump is single-threaded). */
const char *dump_status(int status);

/* ---- select.c: filters ----------------------------------------------- */

int sel_any_provider_filter(const dump_opts *o);
int sel_provider(const dump_opts *o, const pcw_provider_info *p);
int sel_cset(const dump_opts *o, const pcw_counterset *cs);
int sel_instance(const dump_opts *o, uint32_t id, const char *name, size_t len);
/* Fill shown[counter_count] with 1 for each counter to print; returns how
 * many. Without --counters, every counter. */
size_t sel_counters(const dump_opts *o, const pcw_counterset *cs, unsigned char *shown);
/* For each -c value that matches no counterset, and each --counters name
 * that names no counter of the countersets -c selects, a line on err with
 * the nearest names (tools/common/suggest.h), when some are near. */
void sel_explain_unmatched(const dump_opts *o, pcw_segment *const *segs, size_t nsegs, FILE *err);

/* ---- names.c: numbers to the manifest's and winperf.h's names ----------- */

const char *name_counter_type(uint32_t type); /* "PERF_COUNTER_RAWCOUNT" or NULL */
const char *name_instance_type(uint32_t t);   /* "multiple"... or NULL */
const char *name_aggregate(uint32_t a);       /* "sum"... or NULL */
const char *name_detail_level(uint32_t d);    /* "novice"... or NULL */
/* Attribute i's name (i = bit index), NULL for an unknown bit. */
const char *name_attribute_bit(unsigned bit);
const char *name_seg_flag_bit(unsigned bit);
const char *name_cset_flag_bit(unsigned bit);
/* Is the counter's raw value best shown in hex? */
int counter_is_hex(const pcw_counter *c);
/* The raw value shown for a counter of row `row`: its value, or for a
 * histogram the count of observations (its buckets' sum; mod 2^64). */
uint64_t counter_value(const pcw_snapshot *snap, size_t row, const pcw_counter *c);

/* ---- histogram.c: a histogram counter's raw words ---------------------- */

typedef struct dump_hist {
    uint32_t shape, nbuckets;
    uint64_t sum, zero;           /* words 0 and 1 */
    uint64_t count;               /* zero + every bucket, saturated at UINT64_MAX */
    int count_overflow;           /* ...which it was */
    const unsigned char *buckets; /* [nbuckets] words, in the snapshot */
} dump_hist;

/* The histogram counter c of a snapshot's row: 0, or -1 when c is not a
 * histogram with a valid shape that fits the row. */
int dump_hist_read(const pcw_snapshot *snap, size_t row, const pcw_counter *c, dump_hist *out);
/* Bucket j's count (j < nbuckets). */
uint64_t dump_hist_bucket(const dump_hist *h, uint32_t j);
/* "ns" (PCW_HIST_UNIT_NS: bounds in seconds) or "one". */
const char *dump_hist_unit(uint32_t shape);

/* ---- the walk (dump.c) and its outputs --------------------------------- */
/* The walk calls the sinks; the sinks call nothing of the walk (what both
 * use is in sink.c), so the files make no loop (make check-layering). */

/* The segment index (pcw_consumer_segment) a snapshot row came from. */
static inline uint32_t row_source(const pcw_snapshot *snap, size_t row)
{
    const pcw_snapshot_source *s = pcw_snapshot_source_of(snap, row);
    return s ? s->source : 0;
}

/* One counterset as printed: its metadata, which counters to show, and the
 * instances to show (rows of snap, sorted). */
typedef struct cset_view {
    const pcw_counterset *cs;
    const unsigned char *shown; /* [cs->counter_count] */
    size_t nshown;
    const pcw_snapshot *snap;
    const size_t *order;
    size_t ninst;
    int read_rc; /* PCW_OK, or why nothing could be read */
    /* Each provider's status: [nsources] with --merged, else [1]. A
     * provider that failed has its part missing (or, for a callback
     * counterset that also keeps segment instances, its callback's part). */
    const int *source_status;
    /* --merged only (else NULL / 0): */
    const pcw_merged_counterset *merged;
    const pcw_consumer *consumer; /* row_source() -> provider */
    const size_t *sources;        /* indexes into merged->source_* shown */
    size_t nsources;
} cset_view;

typedef struct dump_sink {
    void (*doc_begin)(void *st, const dump_opts *o, unsigned sample, uint64_t time_ns);
    /* ci: its container (NULL: in pcwdump's own mount namespace) */
    void (*provider_begin)(void *st, const pcw_provider_info *p, const pcw_container_info *ci,
                           int alive);
    void (*cset)(void *st, const dump_opts *o, const cset_view *v);
    void (*provider_end)(void *st);
    /* Returns 0, or -1 if writing failed. */
    int (*doc_end)(void *st, const dump_opts *o, size_t nproviders, size_t ncsets);
} dump_sink;

extern const dump_sink text_sink;
extern const dump_sink json_sink;
void *text_sink_new(FILE *out);
void *json_sink_new(FILE *out, int pretty, int merged);
void sink_free(void *st); /* either sink's state (sink.c) */

/* Text helpers shared with check.c: print s[0..n) with control characters
 * and invalid UTF-8 escaped (never raw to a terminal). Returns the number
 * of columns written (code points). */
size_t text_put(FILE *out, const char *s, size_t n);

/* Run the dump (and --watch loop). Returns an exit status. */
int dump_run(const dump_opts *o);
/* --check and --remove-stale (check.c). */
int check_run(const dump_opts *o);
int remove_stale_run(const dump_opts *o);

#endif /* PCWDUMP_H */
