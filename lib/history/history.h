/* SPDX-License-Identifier: MIT */
/*
 * lib/history/history.h - pcw's counter log (issue 28): writing and reading
 * the file `pcwstat -f BIN -o FILE` records and pcwrelog reads. The format
 * (version HIST_VERSION) is docs/history.md's. Built into libpcw (the
 * query layer reads logs through it: lib/query/logsource.c) but private:
 * not installed, its hist_* functions not exported (libpcw.map); the tools
 * and tests that write logs link libpcw.a.
 *
 * What is logged is PDH's raw counter (pcw_raw: PDH_RAW_COUNTER), per
 * series - one concrete counter path, as pcwstat's columns are - with what
 * cooking needs beside it (the counter type and scale, and the instance's
 * identity: a new identity means the live query had no previous sample),
 * so that hist_cook computes exactly what the live query showed. A total
 * or aggregate instance is cooked by the query from its members, not from
 * its own raw sample: its series logs that value, capped but not scaled
 * (HIST_KIND_COMPUTED), and hist_cook finishes it as the query does.
 *
 * Not thread-safe: one writer or reader per thread.
 */
#ifndef PCW_HISTORY_H
#define PCW_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <pcw/query.h>

#define HIST_MAGIC         "PCWLOG\r\n" /* 8 bytes: a text-mode transfer shows */
#define HIST_VERSION       1u
#define HIST_FILE_HEADER   16u         /* magic, version, flags */
#define HIST_BLOCK_MAGIC   0x42574350u /* "PCWB" little-endian */
#define HIST_BLOCK_HEADER  32u
#define HIST_BLOCK_MAX_RAW (16u << 20) /* a block's payload, decompressed */
#define HIST_MAX_SERIES    (1u << 20)  /* series in one log */
#define HIST_MAX_STRING    16384u      /* a path or name (PCW_PATH_MAX) */
/* A block's decompressed size may be at most this many times its stored
 * size, plus 64 KiB: a few bytes cannot make a reader decode megabytes (the
 * writer stores a block uncompressed rather than compress it further). */
#define HIST_MAX_RATIO 1024u

/* Flags of a block header. */
enum { HIST_BLOCK_ZSTD = 1u << 0 };

/* Record types inside a block's payload. */
enum { HIST_REC_SERIES = 1, HIST_REC_IDENT = 2, HIST_REC_SAMPLE = 3 };

/* What a series logs. */
enum {
    HIST_KIND_RAW = 0,      /* a provider's instance: its pcw_raw */
    HIST_KIND_COMPUTED = 1, /* a _Total or aggregate: the query's value */
};

/* One series: a concrete counter path and what cooking it needs. */
typedef struct hist_series {
    char *path;    /* as the CSV header shows it, "\\host\Set(i)\Ctr" */
    uint32_t kind; /* HIST_KIND_* */
    uint32_t type; /* the counter type (PERF_*) */
    int32_t scale; /* the counter's default scale */
    uint64_t provider_id;
    uint32_t instance_id;
    int32_t pid;
    uint32_t dup_index;
    uint64_t epoch; /* counts identity records: a change breaks the series */
} hist_series;

/* One series' value in one sample. */
typedef struct hist_value {
    pcw_raw raw;     /* HIST_KIND_RAW: the raw sample (status always set) */
    double computed; /* HIST_KIND_COMPUTED, when raw.status is VALID */
} hist_value;

/* A computed series logs the value the query gives with these flags: the
 * percentage x100 and its cap applied, the scale not. The rest of the
 * query's last step (10^scale, x1000, the finiteness check) is exact to
 * apply afterwards, the cap again changes nothing, and an infinite ratio
 * capped to 100 stays 100 as live. PCW_FMT_NOCAP100 cannot be replayed
 * (pcwstat has no such option): a replayed percentage total is capped. */
#define HIST_COMPUTED_FLAGS PCW_FMT_NOSCALE

/* ---- writing (write.c) ---------------------------------------------------- */

typedef struct hist_writer hist_writer;

/* When the log is forced to disk (fdatasync): after every `sync_blocks`
 * blocks or `sync_ns` nanoseconds since the last sync, whichever comes
 * first (0: that rule off). hist_writer_close always syncs. */
typedef struct hist_sync_policy {
    uint32_t sync_blocks;
    uint64_t sync_ns;
} hist_sync_policy;
#define HIST_SYNC_DEFAULT                                                                          \
    {                                                                                              \
        16u, 10000000000ull                                                                        \
    }

/* Start a log on fd, open for writing at its end (an empty file, or one
 * the caller truncated: the caller decides about creating, overwriting and
 * links), named `name` in messages; the writer owns fd from now on. Writes
 * the file header. NULL `policy`: HIST_SYNC_DEFAULT. On error returns -1
 * (fd closed) and puts a sentence into why naming the file and the reason. */
int hist_writer_open(hist_writer **out, int fd, const char *name, const hist_sync_policy *policy,
                     char *why, size_t why_len);
/* Define series `id` (ids are 0, 1, 2... in order). */
int hist_writer_series(hist_writer *w, uint32_t id, const char *path, uint32_t kind);
/* Series id's identity from now on (type, scale, provider, instance):
 * write one whenever it changes, and before the first sample. */
int hist_writer_ident(hist_writer *w, uint32_t id, const hist_series *ident);
/* A sample: monotonic and real time of the collection, the values of
 * series 0..n-1. */
int hist_writer_sample(hist_writer *w, uint64_t mono_ns, uint64_t real_ns, const hist_value *v,
                       size_t n);
/* End the block: compress, append it whole with one write(), sync as the
 * policy says. After an error (ENOSPC...) nothing of the failed block counts:
 * the file is cut back to the end of the last good block, and the writer
 * refuses further work. Returns 0 or -1 with why. */
int hist_writer_flush(hist_writer *w, char *why, size_t why_len);
/* Flush, fdatasync, close; 0 or -1 with why. Frees w either way. */
int hist_writer_close(hist_writer *w, char *why, size_t why_len);
/* Blocks written so far. */
uint64_t hist_writer_blocks(const hist_writer *w);

/* ---- reading (read.c) ----------------------------------------------------- */

typedef struct hist_reader hist_reader;

/* Open a log; -1 with why for a file that is not one (or a newer version). */
int hist_reader_open(hist_reader **out, const char *file, char *why, size_t why_len);
void hist_reader_close(hist_reader *r);
/* The next sample: 1 with the sample's times and values (of
 * hist_reader_series_count() series; valid until the next call), 0 at the
 * clean end of the log, -1 at a damaged or incomplete block (why names its
 * offset; what was read before stays valid). */
int hist_reader_next(hist_reader *r, uint64_t *mono_ns, uint64_t *real_ns, const hist_value **v,
                     size_t *n, char *why, size_t why_len);
size_t hist_reader_series_count(const hist_reader *r);
const hist_series *hist_reader_series(const hist_reader *r, size_t i);
/* Blocks read whole so far, and the offset just past the last of them. */
uint64_t hist_reader_blocks(const hist_reader *r);
uint64_t hist_reader_offset(const hist_reader *r);

/* The offset of the block the last sample came from. */
uint64_t hist_reader_block_offset(const hist_reader *r);
/* Read on from the block at offset `off`, sequence number `seq` (an
 * offset and number a reading before found: the query's block index,
 * lib/query/logsource.c). The series stay defined (a series record read
 * again is skipped); their identities stay as they were: the caller puts
 * back those in force at that block with hist_reader_set_ident. */
void hist_reader_seek(hist_reader *r, uint64_t off, uint64_t seq);
void hist_reader_set_ident(hist_reader *r, size_t id, const hist_series *ident);
/* Decode the next samples' values into out (room for
 * hist_reader_series_count() values; NULL: the reader's own array): a
 * caller that keeps two samples swaps two arrays instead of copying. */
void hist_reader_set_output(hist_reader *r, hist_value *out);
/* The series whose identity record was read since the last
 * hist_reader_next was called (for the sample it returned; may repeat). */
const uint32_t *hist_reader_changed(const hist_reader *r, size_t *n);

/* The same over a buffer (the fuzz target): the reader keeps no pointer to
 * it after hist_reader_close. */
int hist_reader_open_mem(hist_reader **out, const void *data, size_t len, char *why,
                         size_t why_len);

/* ---- cooking (cook.c) ----------------------------------------------------- */

/* The value the live query showed for a series: `now`, and `prev` the
 * series' previous sample when its identity was the same then (else NULL),
 * cooked with `flags` (PCW_FMT_*; PCW_FMT_RAW is not logged for computed
 * series: PCW_CSTATUS_NO_DATA). Returns the pcw_cstatus. */
int hist_cook(const hist_series *s, const hist_value *now, const hist_value *prev, unsigned flags,
              double *value);
/* The distribution behind a histogram series' value (pcw_pdh_get_histogram
 * on a log query): the interval between `prev` (the series' previous
 * sample of the same identity, else NULL) and `now`, or with
 * PCW_HIST_CUMULATIVE in flags `now` as it stands, as the live query
 * computes it; its buckets into `buckets` (room for PCW_HIST_MAX_BUCKETS).
 * Returns out->status: PCW_CSTATUS_NO_DATA for a series that logs no
 * buckets (not a histogram, or format version 1). */
int hist_dist(const hist_series *s, const hist_value *now, const hist_value *prev, unsigned flags,
              uint64_t *buckets, pcw_hist_dist *out);

#endif /* PCW_HISTORY_H */
