/* SPDX-License-Identifier: MIT */
/*
 * lib/history/history.h - pcw's counter log (issue 28): writing and reading
 * the file `pcwstat -f BIN -o FILE` records and pcwrelog reads. The format
 * (version HIST_VERSION) is docs/history.md's; this header is private to
 * the tools and tests (not installed, not in libpcw.so) until the query
 * layer reads logs itself.
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
#define HIST_VERSION       2u           /* what the writer writes */
#define HIST_VERSION_MIN   1u           /* the oldest a reader reads */
#define HIST_FILE_HEADER   16u          /* magic, version, flags */
#define HIST_BLOCK_MAGIC   0x42574350u  /* "PCWB" little-endian */
#define HIST_BLOCK_HEADER  32u
#define HIST_BLOCK_MAX_RAW (16u << 20) /* a block's payload, decompressed */
#define HIST_MAX_SERIES    (1u << 20)  /* series in one log */
#define HIST_MAX_STRING    16384u      /* a path or name (PCW_PATH_MAX) */
/* Histogram words (2 + buckets per histogram series) one log may keep in
 * its decoding state: a few bytes of a sample cannot make a reader hold
 * megabytes per series (the writer refuses an identity beyond it). */
#define HIST_MAX_HWORDS (1u << 22)
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
    /* A histogram (type PERF_PCW_HISTOGRAM; version 2): its shape
     * (pcw/histogram.h) and the statistic the series' path names
     * ("Latency:p99": kind QUANTILE, q 0.99). 0 for other types. */
    uint32_t hshape;
    pcw_hist_stat hstat;
} hist_series;

/* One series' value in one sample.
 *
 * A histogram's (a HIST_KIND_RAW series of type PERF_PCW_HISTOGRAM, raw
 * status VALID, version 2): raw.time_ns is the instance's read time (the
 * interval is the difference of two samples' times, as live) and `hwords`
 * its words as the provider wrote them, cumulative since the instance
 * began: hwords[0] the sum, hwords[1] the zero bucket, hwords[2 + j]
 * bucket j; hn = 2 + pcw_hist_nbuckets(hshape). hist_cook takes the
 * interval between two samples' words, as the live query does. From the
 * reader, hwords stays valid until the series' next-but-one sample: a
 * caller that keeps the previous sample's hist_value (a shallow copy) can
 * cook with it. hn 0: no words (version 1, other types, other statuses). */
typedef struct hist_value {
    pcw_raw raw;     /* HIST_KIND_RAW: the raw sample (status always set) */
    double computed; /* HIST_KIND_COMPUTED, when raw.status is VALID (or,
                        version 2, ABOVE_RANGE: a histogram's top bound) */
    const uint64_t *hwords;
    uint32_t hn;
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
/* Define series `id` (ids are 0, 1, 2... in order). A series may be
 * defined at any time, between samples: the samples before it hold no
 * value of it (a reader gives PCW_CSTATUS_NO_INSTANCE). */
int hist_writer_series(hist_writer *w, uint32_t id, const char *path, uint32_t kind);
/* Series id's identity from now on (type, scale, provider, instance;
 * a histogram's shape and statistic): write one whenever it changes, and
 * before the first sample. -1 for an unknown id, a histogram shape that is
 * not valid, or beyond HIST_MAX_HWORDS. */
int hist_writer_ident(hist_writer *w, uint32_t id, const hist_series *ident);
/* A sample: monotonic and real time of the collection, the values of
 * series 0..n-1 (n may be less than the series defined: the rest have no
 * value). A histogram series' VALID value must carry its words (hn = 2 +
 * the buckets of the shape its identity gave), else -1. */
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
/* The file's length up to the end of the last block written whole. */
uint64_t hist_writer_bytes(const hist_writer *w);

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
/* The log's format version (HIST_VERSION_MIN..HIST_VERSION). */
uint32_t hist_reader_version(const hist_reader *r);

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

#endif /* PCW_HISTORY_H */
