/* SPDX-License-Identifier: MIT */
/*
 * lib/history/history.h - pcw's counter log (issue 28): writing and reading
 * the file `pcwstat -f BIN -o FILE` records and pcwrelog reads. The format
 * (version PCW__HIST_VERSION) is docs/history.md's. Built into libpcw (the
 * query layer reads logs through it: lib/query/logsource.c) but private:
 * not installed, its hist_* functions not exported (libpcw.map); the tools
 * and tests that write logs link libpcw.a.
 *
 * What is logged is PDH's raw counter (pcw_raw: PDH_RAW_COUNTER), per
 * series - one concrete counter path, as pcwstat's columns are - with what
 * cooking needs beside it (the counter type and scale, and the instance's
 * identity: a new identity means the live query had no previous sample),
 * so that pcw__hist_cook computes exactly what the live query showed. A total
 * or aggregate instance is cooked by the query from its members, not from
 * its own raw sample: its series logs that value, capped but not scaled
 * (PCW__HIST_KIND_COMPUTED), and pcw__hist_cook finishes it as the query does.
 *
 * Not thread-safe: one writer or reader per thread.
 */
#ifndef PCW_HISTORY_H
#define PCW_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <pcw/pdh.h>

#define PCW__HIST_MAGIC         "PCWLOG\r\n" /* 8 bytes: a text-mode transfer shows */
#define PCW__HIST_VERSION       3u           /* what the writer writes */
#define PCW__HIST_VERSION_MIN   1u           /* the oldest a reader reads */
#define PCW__HIST_FILE_HEADER   16u          /* magic, version, flags */
#define PCW__HIST_BLOCK_MAGIC   0x42574350u  /* "PCWB" little-endian */
#define PCW__HIST_BLOCK_HEADER  32u
#define PCW__HIST_BLOCK_MAX_RAW (16u << 20) /* a block's payload, decompressed */
#define PCW__HIST_MAX_SERIES    (1u << 20)  /* series in one log */
#define PCW__HIST_MAX_STRING    16384u      /* a path or name (PCW_PATH_MAX) */
/* A logged scale beyond +-PCW__HIST_MAX_SCALE reads as that: the same cooked
 * value (10^400 overflows, 10^-400 underflows to 0). */
#define PCW__HIST_MAX_SCALE 400
/* Histogram words (2 + buckets per histogram series) one log may keep in
 * its decoding state: a few bytes of a sample cannot make a reader hold
 * megabytes per series (the writer refuses an identity beyond it). */
#define PCW__HIST_MAX_HWORDS (1u << 22)
/* Histogram words the values of one block may decode, counted per value
 * (2 + its shape's buckets, whatever few of them the value changes): a
 * reader calls a block beyond it damaged, so a few bytes a sample cannot
 * cost seconds of copying. The writer ends a block before its samples'
 * words reach it. */
#define PCW__HIST_MAX_BLOCK_WORDS (1u << 26)
/* A block's decompressed size may be at most this many times its stored
 * size, plus 64 KiB: a few bytes cannot make a reader decode megabytes (the
 * writer stores a block uncompressed rather than compress it further). */
#define PCW__HIST_MAX_RATIO 1024u
/* Values the row samples of one block may decode (version 3): at most
 * PCW__HIST_ROW_VALUES_BASE + PCW__HIST_ROW_VALUES_PER_BYTE per byte of
 * the block's (decompressed) payload. A row that did not change costs no
 * byte, so without it a few bytes could make a reader decode millions of
 * values; the writer ends a block before its row samples reach it. */
#define PCW__HIST_ROW_VALUES_BASE     (1u << 24)
#define PCW__HIST_ROW_VALUES_PER_BYTE 256u

/* Flags of a block header. */
enum { PCW__HIST_BLOCK_ZSTD = 1u << 0 };

/* Record types inside a block's payload (ROWS: version 3). */
enum {
    PCW__HIST_REC_SERIES = 1,
    PCW__HIST_REC_IDENT = 2,
    PCW__HIST_REC_SAMPLE = 3,
    PCW__HIST_REC_ROWS = 4,
};

/* Version 3: the most words a logged row may have (a row sample's width). */
#define PCW__HIST_ROW_WORDS 64u

/* Version 3: where a field of a series' raw sample comes from, in a row
 * sample (PCW__HIST_REC_ROWS): a constant (second 0, multi 1, freq the
 * layout's freq_const), the row's time, that time / 100 (a 100 ns clock),
 * or word j of the row (PCW__HIST_SRC_WORD + j). */
enum {
    PCW__HIST_SRC_CONST = 0,
    PCW__HIST_SRC_TIME = 1,
    PCW__HIST_SRC_TIME100 = 2,
    PCW__HIST_SRC_WORD = 3,
};

/* Version 3: how a series' pcw_raw is made from the row of 8-byte words
 * it is logged in (the query's recipe, pcw__q_recipe, for the recipes
 * that need no more than this: lib/query/collect_raw.c): status, first
 * from word `first`, second / multi / freq from PCW__HIST_SRC_*, time_ns
 * the row's time. `words` 0: the series has no layout (it is never in a
 * row sample). */
typedef struct pcw__hist_layout {
    uint32_t words; /* the row's words it reads at most (1 + the largest index); 0: none */
    uint32_t status;
    uint32_t first;
    uint32_t second, multi, freq; /* PCW__HIST_SRC_* */
    uint64_t freq_const;
} pcw__hist_layout;

/* What a series logs. */
enum {
    PCW__HIST_KIND_RAW = 0,      /* a provider's instance: its pcw_raw */
    PCW__HIST_KIND_COMPUTED = 1, /* a _Total or aggregate: the query's value */
};

/* One series: a concrete counter path and what cooking it needs. */
typedef struct pcw__hist_series {
    char *path;    /* as the CSV header shows it, "\\host\Set(i)\Ctr" */
    uint32_t kind; /* PCW__HIST_KIND_* */
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
    /* Version 3: how its raw sample is made from a row (words 0: none).
     * Part of the identity: a provider restarted may lay its rows out
     * anew. */
    pcw__hist_layout layout;
} pcw__hist_series;

/* One series' value in one sample.
 *
 * A histogram's (a PCW__HIST_KIND_RAW series of type PERF_PCW_HISTOGRAM, raw
 * status VALID, version 2): raw.time_ns is the instance's read time (the
 * interval is the difference of two samples' times, as live) and `hwords`
 * its words as the provider wrote them, cumulative since the instance
 * began: hwords[0] the sum, hwords[1] the zero bucket, hwords[2 + j]
 * bucket j; hn = 2 + pcw_hist_nbuckets(hshape). pcw__hist_cook takes the
 * interval between two samples' words, as the live query does. From the
 * reader, hwords stays valid until the series' next-but-one sample: a
 * caller that keeps the previous sample's pcw__hist_value (a shallow copy) can
 * cook with it. hn 0: no words (version 1, other types, other statuses). */
typedef struct pcw__hist_value {
    pcw_raw raw;     /* PCW__HIST_KIND_RAW: the raw sample (status always set) */
    double computed; /* PCW__HIST_KIND_COMPUTED, when raw.status is VALID (or,
                        version 2, ABOVE_RANGE: a histogram's top bound) */
    const uint64_t *hwords;
    uint32_t hn;
} pcw__hist_value;

/* A computed series logs the value the query gives with these flags: the
 * percentage x100 and its cap applied, the scale not. The rest of the
 * query's last step (10^scale, x1000, the finiteness check) is exact to
 * apply afterwards, the cap again changes nothing, and an infinite ratio
 * capped to 100 stays 100 as live. PCW_FMT_NOCAP100 cannot be replayed
 * (pcwstat has no such option): a replayed percentage total is capped. */
#define PCW__HIST_COMPUTED_FLAGS PCW_FMT_NOSCALE

/* ---- writing (write.c) ---------------------------------------------------- */

typedef struct pcw__hist_writer pcw__hist_writer;

/* When the log is forced to disk (fdatasync): after every `sync_blocks`
 * blocks or `sync_ns` nanoseconds since the last sync, whichever comes
 * first (0: that rule off). pcw__hist_writer_close always syncs. */
typedef struct pcw__hist_sync_policy {
    uint32_t sync_blocks;
    uint64_t sync_ns;
} pcw__hist_sync_policy;
#define PCW__HIST_SYNC_DEFAULT                                                                     \
    {                                                                                              \
        16u, 10000000000ull                                                                        \
    }

/* Start a log on fd, open for writing at its end (an empty file, or one
 * the caller truncated: the caller decides about creating, overwriting and
 * links), named `name` in messages; the writer owns fd from now on. Writes
 * the file header. NULL `policy`: PCW__HIST_SYNC_DEFAULT. On error returns -1
 * (fd closed) and puts a sentence into why naming the file and the reason. */
int pcw__hist_writer_open(pcw__hist_writer **out, int fd, const char *name,
                          const pcw__hist_sync_policy *policy, char *why, size_t why_len);
/* Define series `id` (ids are 0, 1, 2... in order). A series may be
 * defined at any time, between samples: the samples before it hold no
 * value of it (a reader gives PCW_CSTATUS_NO_INSTANCE). */
int pcw__hist_writer_series(pcw__hist_writer *w, uint32_t id, const char *path, uint32_t kind);
/* Series id's identity from now on (type, scale, provider, instance;
 * a histogram's shape and statistic; version 3, its row layout): write
 * one whenever it changes, and before the first sample. -1 for an
 * unknown id, a histogram shape that is not valid, or beyond
 * PCW__HIST_MAX_HWORDS, a layout that is not one (history.h's
 * pcw__hist_layout: words as its indices say, at most
 * PCW__HIST_ROW_WORDS; only for a provider's instance that is no
 * histogram), or between rows_begin and rows_end. */
int pcw__hist_writer_ident(pcw__hist_writer *w, uint32_t id, const pcw__hist_series *ident);
/* A sample: monotonic and real time of the collection, the values of
 * series 0..n-1 (n may be less than the series defined: the rest have no
 * value). A histogram series' VALID value must carry its words (hn = 2 +
 * the buckets of the shape its identity gave), else -1. The writer ends
 * the block first (pcw__hist_writer_flush) when the sample could take it
 * beyond PCW__HIST_BLOCK_MAX_RAW bytes or PCW__HIST_MAX_BLOCK_WORDS words,
 * so a caller flushing by time or count never writes a block a reader
 * refuses; -1 too when that block could not be written (then
 * pcw__hist_writer_flush gives the reason). */
int pcw__hist_writer_sample(pcw__hist_writer *w, uint64_t mono_ns, uint64_t real_ns,
                            const pcw__hist_value *v, size_t n);
/* ---- row samples (version 3): the recorder's fused path ---- *
 *
 * A row sample is the same sample as pcw__hist_writer_sample's, given in
 * pieces as the query reads them (lib/query/collect_raw.c): the series
 * [0, n) in order, as runs of rows (each row `width` series, whose raw
 * samples their layouts make from the row's 8-byte words and the row's
 * time), series without a value (a status), and values given whole. A
 * row is compared with the same series' words of the previous row sample
 * in the block: a run of rows that did not change costs a count, a row
 * that did a mask of its changed words and their deltas
 * (docs/history.md, "Row samples"). A histogram's series is never in
 * a row sample: a sample with histograms is a pcw__hist_writer_sample.
 *
 * rows_begin: a row sample of series [0, n) (n <= the series defined;
 * their identities written, a layout for every series given in rows),
 * ending the block first if it could take the block beyond what a reader
 * accepts. The times come at the end (rows_end), when the collection
 * knows them. -1 for n beyond the series, or a block not written. */
int pcw__hist_writer_rows_begin(pcw__hist_writer *w, size_t n);
/* The next nrows rows: row r at rows + r * stride, `width` (1 ..
 * PCW__HIST_ROW_WORDS) little-endian-host 8-byte words, read at time_ns;
 * series at, at + 1, ... (row-major). -1 beyond n, or for a series in
 * them whose layout reads more words than width (or has none). */
int pcw__hist_writer_rows(pcw__hist_writer *w, const void *rows, size_t stride, size_t nrows,
                          uint32_t width, uint64_t time_ns);
/* pcw__hist_writer_rows of rows the caller compared already with the
 * words the writer holds for them (lib/query's pcw__q_collect_raw_cmp):
 * bit at + r of changed (changed[(at + r) / 64] >> (at + r) % 64) set if
 * row r differs in a word from pcw__hist_writer_words' row of the same
 * series, clear if not - the writer then takes the rows whose bit is clear
 * as unchanged without a look. changed NULL: pcw__hist_writer_rows. */
int pcw__hist_writer_rows_cmp(pcw__hist_writer *w, const void *rows, size_t stride, size_t nrows,
                              uint32_t width, uint64_t time_ns, const uint64_t *changed, size_t at);
/* The words the writer holds for series from, from + 1, ... (*n of them;
 * NULL and 0 beyond the series defined, and at a block's start, whose
 * first rows are written whole): each series' last word written in this
 * block, what a row of them is compared with. The pointer is valid
 * until a series is defined (pcw__hist_writer_series); the words change
 * as rows of them are written. */
const uint64_t *pcw__hist_writer_words(const pcw__hist_writer *w, size_t from, size_t *n);
/* The next count series have no value: status (not VALID, not ABOVE_RANGE). */
int pcw__hist_writer_rows_absent(pcw__hist_writer *w, size_t count, uint32_t status);
/* The next count series' values, as pcw__hist_writer_sample writes them
 * (no histogram's: -1). */
int pcw__hist_writer_rows_values(pcw__hist_writer *w, const pcw__hist_value *v, size_t count);
/* The sample's times; every series of [0, n) must have been given (else
 * -1 and the sample is cancelled). */
int pcw__hist_writer_rows_end(pcw__hist_writer *w, uint64_t mono_ns, uint64_t real_ns);
/* Forget the row sample begun (a collection that started again): the
 * block is as it was before rows_begin. */
void pcw__hist_writer_rows_cancel(pcw__hist_writer *w);

/* End the block: compress, append it whole with one write(), sync as the
 * policy says. After an error (ENOSPC...) nothing of the failed block counts:
 * the file is cut back to the end of the last good block, and the writer
 * refuses further work. Returns 0 or -1 with why. */
int pcw__hist_writer_flush(pcw__hist_writer *w, char *why, size_t why_len);
/* Flush, fdatasync, close; 0 or -1 with why. Frees w either way. */
int pcw__hist_writer_close(pcw__hist_writer *w, char *why, size_t why_len);
/* Blocks written so far. */
uint64_t pcw__hist_writer_blocks(const pcw__hist_writer *w);
/* The file's length up to the end of the last block written whole. */
uint64_t pcw__hist_writer_bytes(const pcw__hist_writer *w);

/* ---- reading (read.c) ----------------------------------------------------- */

typedef struct pcw__hist_reader pcw__hist_reader;

/* Open a log; -1 with why for a file that is not one (or a newer version). */
int pcw__hist_reader_open(pcw__hist_reader **out, const char *file, char *why, size_t why_len);
void pcw__hist_reader_close(pcw__hist_reader *r);
/* The next sample: 1 with the sample's times and values (of
 * pcw__hist_reader_series_count() series; valid until the next call), 0 at the
 * clean end of the log, -1 at a damaged or incomplete block (why names its
 * offset; what was read before stays valid). */
int pcw__hist_reader_next(pcw__hist_reader *r, uint64_t *mono_ns, uint64_t *real_ns,
                          const pcw__hist_value **v, size_t *n, char *why, size_t why_len);
size_t pcw__hist_reader_series_count(const pcw__hist_reader *r);
const pcw__hist_series *pcw__hist_reader_series(const pcw__hist_reader *r, size_t i);
/* Blocks read whole so far, and the offset just past the last of them. */
uint64_t pcw__hist_reader_blocks(const pcw__hist_reader *r);
uint64_t pcw__hist_reader_offset(const pcw__hist_reader *r);
/* The log's format version (PCW__HIST_VERSION_MIN..PCW__HIST_VERSION). */
uint32_t pcw__hist_reader_version(const pcw__hist_reader *r);

/* The offset of the block the last sample came from. */
uint64_t pcw__hist_reader_block_offset(const pcw__hist_reader *r);
/* Read on from the block at offset `off`, sequence number `seq` (an
 * offset and number a reading before found: the query's block index,
 * lib/query/logsource.c). The series stay defined (a series record read
 * again is skipped); their identities stay as they were: the caller puts
 * back those in force at that block with pcw__hist_reader_set_ident. */
void pcw__hist_reader_seek(pcw__hist_reader *r, uint64_t off, uint64_t seq);
void pcw__hist_reader_set_ident(pcw__hist_reader *r, size_t id, const pcw__hist_series *ident);
/* No series from now on: the caller sized its tables to the series count
 * and keeps pointers to them (the query's index, after reading the log
 * once). A series record of a new series is then a damaged block (the
 * file changed since), so the table never moves and no sample holds more
 * values than the count. */
void pcw__hist_reader_freeze(pcw__hist_reader *r);
/* Decode the next samples' values into out (room for
 * pcw__hist_reader_series_count() values; NULL: the reader's own array): a
 * caller that keeps two samples swaps two arrays instead of copying.
 * `tail`: out's values from there on already say PCW_CSTATUS_NO_INSTANCE
 * (as pcw__hist_reader_sample_values left them; the series count when not
 * known): the reader writes the sample's values and clears only up to
 * tail, so that a sample's work is its bytes, not the series defined. */
void pcw__hist_reader_set_output(pcw__hist_reader *r, pcw__hist_value *out, size_t tail);
/* How many values the last sample held (series 0..n-1; the rest, up to
 * the series count, have no instance). */
size_t pcw__hist_reader_sample_values(const pcw__hist_reader *r);
/* The series whose identity record was read since the last
 * pcw__hist_reader_next was called (for the sample it returned), each once:
 * at most the series count, however many records named them. */
const uint32_t *pcw__hist_reader_changed(const pcw__hist_reader *r, size_t *n);

/* The same over a buffer (the fuzz target): the reader keeps no pointer to
 * it after pcw__hist_reader_close. */
int pcw__hist_reader_open_mem(pcw__hist_reader **out, const void *data, size_t len, char *why,
                              size_t why_len);

/* ---- cooking (lib/query/logcook.c) ---------------------------------------- *
 *
 * Defined by the query layer, whose formulas they are: lib/history calls
 * nothing above it (docs/design.md, the map), and the query layer reads
 * logs through the functions above (lib/query/logsource.c). */

/* The value the live query showed for a series: `now`, and `prev` the
 * series' previous sample when its identity was the same then (else NULL),
 * cooked with `flags` (PCW_FMT_*; PCW_FMT_RAW is not logged for computed
 * series: PCW_CSTATUS_NO_DATA). Returns the pcw_cstatus. */
int pcw__hist_cook(const pcw__hist_series *s, const pcw__hist_value *now,
                   const pcw__hist_value *prev, unsigned flags, double *value);
/* The distribution behind a histogram series' value (pcw_pdh_get_histogram
 * on a log query): the interval between `prev` (the series' previous
 * sample of the same identity, else NULL) and `now`, or with
 * PCW_HIST_CUMULATIVE in flags `now` as it stands, as the live query
 * computes it; its buckets into `buckets` (room for PCW_HIST_MAX_BUCKETS).
 * Returns out->status: PCW_CSTATUS_NO_DATA for a series that logs no
 * buckets (not a histogram, or format version 1). */
int pcw__hist_dist(const pcw__hist_series *s, const pcw__hist_value *now,
                   const pcw__hist_value *prev, unsigned flags, uint64_t *buckets,
                   pcw_hist_dist *out);

#endif /* PCW_HISTORY_H */
