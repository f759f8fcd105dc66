/* SPDX-License-Identifier: MIT */
/*
 * fuzz/history/make_seeds.c - writes the seed corpus of fuzz_history: real
 * pcw logs, recorded as `pcwstat -f BIN` records them (its recording sink,
 * tools/pcwstat/record.c, compiled in) from a provider this program runs
 * itself (rates, a fraction with its base, a _Total, an instance that goes
 * and comes back under a new id), and one log of many samples per block so
 * that the seeds hold zstd-compressed blocks too.
 *
 * The Makefile builds and runs it into $(BUILD)/fuzz/history-seeds, so the
 * seeds always have the current format:
 *
 *   make build/fuzz/history-seeds/.stamp
 */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <pcw/provider.h>
#include <pcw/pdh.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../tools/pcwstat/pcwstat.h"

static char root[] = "/tmp/pcw-hist-seeds-XXXXXX";

static void die(const char *what)
{
    fprintf(stderr, "make_seeds: %s\n", what);
    exit(1);
}

static pcw_instance *make(pcw_registration *r, const char *name)
{
    uint64_t data[3] = {0};
    pcw_data d = {data, sizeof data};
    pcw_instance *in;
    if (pcw_create_instance(&in, r, name, 1, &d) != PCW_OK)
        die("create instance");
    return in;
}

/* Advance every instance: a count, a fraction 3/4 and its base. */
static void step(pcw_instance **in, size_t n, uint64_t k)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t *b = pcw_instance_block(in[i], 0);
        pcw_u64_set(&b[0], k * (i + 1) * 1000);
        uint32_t *f = (uint32_t *)&b[1];
        pcw_u32_set(&f[0], (uint32_t)(3 * k));
        pcw_u32_set(&f[1], (uint32_t)(4 * k));
    }
}

/* A recording like pcwstat's: every value of "\Seed(*)\*" a column. */
static void recorded(pcw_instance **in, pcw_registration *reg, const char *file)
{
    pcw_pdh *q;
    pcw_pdh_counter *user;
    if (pcw_pdh_open(&q, NULL) != PCW_OK ||
        pcw_pdh_add_counter(q, "\\Seed(*)\\*", &user, NULL) != PCW_OK ||
        pcw_pdh_collect(q, NULL) != PCW_OK)
        die("query");
    size_t n = pcw_pdh_value_count(user);
    column *cols = calloc(n, sizeof *cols);
    for (size_t i = 0; i < n; i++) {
        char bare[1024], full[1024];
        pcw_pdh_value_path(user, i, 0, bare, sizeof bare);
        pcw_pdh_value_path(user, i, 1, full, sizeof full);
        if (pcw_pdh_add_counter(q, bare, &cols[i].h, NULL) != PCW_OK ||
            !(cols[i].path = strdup(full)))
            die("column");
    }
    char why[512];
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    recorder *r = fd >= 0 ? record_open(fd, file, cols, n, 0, why, sizeof why) : NULL;
    if (!r || record_sample(r, q, why, sizeof why))
        die(why);
    for (uint64_t k = 1; k <= 12; k++) {
        if (k == 6) { /* "b" goes and comes back under a new id */
            pcw_instance *tmp = make(reg, "tmp");
            pcw_close_instance(in[1]);
            in[1] = make(reg, "b");
            pcw_close_instance(tmp);
        }
        step(in, 2, k);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL); /* a sampling interval */
        if (pcw_pdh_collect(q, NULL) != PCW_OK || record_sample(r, q, why, sizeof why))
            die(why);
    }
    if (record_finish(r, why, sizeof why))
        die(why);
    for (size_t i = 0; i < n; i++)
        free(cols[i].path);
    free(cols);
    pcw_pdh_close(q);
    printf("%s\n", file);
}

/* Many samples per block, so that zstd compresses them. */
static void compressed(const char *file)
{
    char why[512];
    pcw__hist_writer *w;
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || pcw__hist_writer_open(&w, fd, file, NULL, why, sizeof why))
        die("compressed log");
    pcw__hist_series id = {.type = PERF_COUNTER_COUNTER, .provider_id = 7, .instance_id = 1};
    pcw__hist_value v[2] = {{.raw = {.status = PCW_CSTATUS_VALID, .freq = 1000000000}},
                            {.raw = {.status = PCW_CSTATUS_VALID}, .computed = 1.5}};
    if (pcw__hist_writer_series(w, 0, "\\\\seed\\Seed(a)\\Count", PCW__HIST_KIND_RAW) ||
        pcw__hist_writer_series(w, 1, "\\\\seed\\Seed(_Total)\\Count", PCW__HIST_KIND_COMPUTED) ||
        pcw__hist_writer_ident(w, 0, &id) || pcw__hist_writer_ident(w, 1, &id))
        die("series");
    for (uint64_t k = 0; k < 600; k++) {
        v[0].raw.first = k * 1000, v[0].raw.second = v[0].raw.time_ns = k * 1000000000;
        v[1].computed = (double)(k % 7);
        if (pcw__hist_writer_sample(w, k * 1000000000, 1700000000000000000ull + k * 1000000000, v,
                                    2))
            die("sample");
        if (k % 200 == 199 && pcw__hist_writer_flush(w, why, sizeof why))
            die(why);
    }
    if (pcw__hist_writer_close(w, why, sizeof why))
        die(why);
    printf("%s\n", file);
}

/* Row samples (format 3, the recorder's fused path): rows whole and as
 * deltas, a series absent, values given whole, a layout that changes,
 * blocks of a few samples. */
static void rows(const char *file)
{
    char why[512];
    pcw__hist_writer *w;
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || pcw__hist_writer_open(&w, fd, file, NULL, why, sizeof why))
        die("rows log");
    enum { WORDS = 3, NROWS = 3, N = WORDS * NROWS + 1 };
    for (uint32_t i = 0; i < N; i++) {
        pcw__hist_series id = {.type = PERF_COUNTER_BULK_COUNT, .instance_id = i / WORDS};
        if (i < WORDS * NROWS) /* a count, its time; a fraction of word 2 */
            id.layout = (pcw__hist_layout){.words = i % WORDS ? 3 : 1,
                                           .first = i % WORDS,
                                           .second = i % WORDS == 1 ? PCW__HIST_SRC_WORD + 2
                                                                    : PCW__HIST_SRC_TIME,
                                           .freq_const = 1000000000};
        char path[64];
        snprintf(path, sizeof path, "\\\\seed\\Rows(%u)\\c%u", i / WORDS, i % WORDS);
        if (pcw__hist_writer_series(w, i, path, PCW__HIST_KIND_RAW) ||
            pcw__hist_writer_ident(w, i, &id))
            die("rows series");
    }
    uint64_t words[NROWS][WORDS] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
    for (uint64_t k = 0; k < 40; k++) {
        uint64_t t = (k + 1) * 1000000000;
        words[k % NROWS][k % WORDS] += k * k;
        if (k == 20) {
            pcw__hist_series id = {.type = PERF_COUNTER_RAWCOUNT,
                                   .layout = {.words = 1, .first = 0, .freq_const = 1}};
            if (pcw__hist_writer_ident(w, 0, &id))
                die("rows ident");
        }
        pcw__hist_value v = {.raw = {.status = PCW_CSTATUS_VALID, .first = k, .time_ns = t}};
        if (pcw__hist_writer_rows_begin(w, N) ||
            pcw__hist_writer_rows(w, words, sizeof words[0], k % 5 == 3 ? 1 : 2, WORDS, t) ||
            (k % 5 == 3 ? pcw__hist_writer_rows_absent(w, WORDS, PCW_CSTATUS_NO_INSTANCE) : 0) ||
            pcw__hist_writer_rows(w, words[2], sizeof words[0], 1, WORDS, t + 3) ||
            pcw__hist_writer_rows_values(w, &v, 1) ||
            pcw__hist_writer_rows_end(w, t, 1700000000000000000ull + t))
            die("rows sample");
        if (k % 7 == 6 && pcw__hist_writer_flush(w, why, sizeof why))
            die(why);
    }
    if (pcw__hist_writer_close(w, why, sizeof why))
        die(why);
    printf("%s\n", file);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: make_seeds OUTDIR");
    if (!mkdtemp(root))
        die("mkdtemp");
    setenv("PCW_DIR", root, 1);
    pcw_provider_options o = {.dir = root};
    pcw_provider *p;
    if (pcw_provider_open(&p, &o) != PCW_OK)
        die("provider");
    pcw_counter_desc c[3] = {pcw_counter_desc_default(), pcw_counter_desc_default(),
                             pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "Count", c[0].size = 8, c[0].type = PERF_COUNTER_BULK_COUNT;
    c[0].aggregate = PCW_AGGREGATE_TOTAL;
    c[1].id = 2, c[1].name = "Fraction", c[1].size = 4, c[1].offset = 8;
    c[1].type = PERF_RAW_FRACTION, c[1].aggregate = PCW_AGGREGATE_TOTAL;
    c[2].id = 3, c[2].name = "Base", c[2].size = 4, c[2].offset = 12, c[2].type = PERF_RAW_BASE;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Seed",
                                  .instance_type = PCW_MULTI_AGGREGATE,
                                  .counter_count = 3,
                                  .counters = c};
    pcw_registration *reg;
    if (pcw_register(&reg, p, &info) != PCW_OK)
        die("register");
    pcw_instance *in[2] = {make(reg, "a"), make(reg, "b")};
    char file[4096];
    snprintf(file, sizeof file, "%s/recorded.pcwlog", argv[1]);
    recorded(in, reg, file);
    snprintf(file, sizeof file, "%s/compressed.pcwlog", argv[1]);
    compressed(file);
    snprintf(file, sizeof file, "%s/rows.pcwlog", argv[1]);
    rows(file);
    pcw_provider_close(p);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
