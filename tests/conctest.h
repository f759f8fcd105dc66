/* SPDX-License-Identifier: MIT */
/*
 * tests/conctest.h - shared pieces of the concurrency tests (conc_*.c,
 * test_crash.c, test_stress_mp.c and their helper programs).
 *
 * Identity encoding. Every "ident" counterset has four u64 counters in one
 * block. The instance with serial S (S > 0, unique for the provider's life)
 * is named "i<S>" and carries
 *     w0 = S, w1 = ~S, w2 = conc_hash(S), w3 = S << 32 | iteration
 * from the moment it is created (the initial data passed to
 * pcw_create_instance) to the moment it is closed; its owner keeps storing
 * w3 with a new iteration. A reader that checks all five (name and four
 * words) against one S detects a sample that mixes two instances
 * (misattributed), a word read half-way through a reuse (torn) or a slot
 * published before its data (half-made: zeros fail w1 and w2).
 *
 * Moment encoding (seqcount countersets only): all four words equal the same
 * iteration number, written between pcw_instance_write_begin/end. A reader
 * that sees two different values read a torn update.
 *
 * Everything here is `static inline` so helpers and tests can each include
 * it without unused-function warnings.
 */
#ifndef PCW_TESTS_CONCTEST_H
#define PCW_TESTS_CONCTEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"

static inline double conc_now_(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- a minimal harness for conc_*.c --------------------------------------
 * The conc_* tests run under TSan too, and Criterion cannot start there (its
 * BoxFort inheritable arena fails to map beside TSan's shadow memory:
 * "Could not initialize inheritable arena", Snaipe/Criterion#274). So they
 * are plain programs: CONC_TEST functions run in turn in one process, each
 * under alarm() as its timeout; the first failed CONC_ASSERT prints where
 * and why and exits 1. Arguments (the Makefile passes --jobs 2) are
 * ignored. */
#define CONC_ASSERT(cond, ...)                                                                     \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: %s: assertion failed: %s\n  ", __FILE__, __LINE__,             \
                    conc_current_test, #cond);                                                     \
            fprintf(stderr, " " __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char *conc_current_test = "";

typedef struct conc_test {
    const char *name;
    void (*fn)(void);
    unsigned timeout_s;
} conc_test;

/* Run every test; print one line each and a closing summary. */
static inline int conc_run(const char *suite, const conc_test *t, size_t n)
{
    double t0 = conc_now_();
    for (size_t i = 0; i < n; i++) {
        conc_current_test = t[i].name;
        double s = conc_now_();
        alarm(t[i].timeout_s); /* SIGALRM kills a hung test: a failure */
        t[i].fn();
        alarm(0);
        printf("[PASS] %s::%s (%.2fs)\n", suite, t[i].name, conc_now_() - s);
        fflush(stdout);
    }
    printf("[====] %s: %zu tests passed in %.1fs\n", suite, n, conc_now_() - t0);
    return 0;
}

#define CONC_WORDS         4
#define CONC_IDENT_PREFIX  "ident"
#define CONC_NOISE_PREFIX  "noise"
#define CONC_MOMENT_PREFIX "moment"

/* splitmix64's finaliser: a hash no stale or zeroed word can match. */
static inline uint64_t conc_hash(uint64_t s)
{
    uint64_t z = s + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* xorshift64*: per-thread randomness without locks. */
static inline uint64_t conc_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static inline double conc_now(void)
{
    return conc_now_();
}

/* A private PCW_DIR (tests never touch /dev/shm or see each other).
 * Returns the directory, in static storage, or NULL. */
static inline const char *conc_private_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/pcw-conc-XXXXXX");
    if (!mkdtemp(dir))
        return NULL;
    setenv(PCW_DIR_ENV, dir, 1);
    return dir;
}

/* Register "<prefix>.<k>": four u64 counters w0..w3 in one 32-byte block. */
static inline int conc_register(pcw_registration **out, pcw_provider *p, const char *prefix,
                                unsigned k, uint32_t flags)
{
    static const char *const names[CONC_WORDS] = {"w0", "w1", "w2", "w3"};
    pcw_counter_desc c[CONC_WORDS];
    for (unsigned i = 0; i < CONC_WORDS; i++) {
        c[i] = pcw_counter_desc_default();
        c[i].id = i;
        c[i].type = PERF_COUNTER_LARGE_RAWCOUNT;
        c[i].offset = 8 * i;
        c[i].size = 8;
        c[i].name = names[i];
    }
    char name[64];
    snprintf(name, sizeof name, "%s.%u", prefix, k);
    pcw_registration_info info = {0};
    info.version = PCW_VERSION_1;
    info.flags = flags;
    info.name = name;
    info.description = "pcw concurrency test counterset";
    info.instance_type = PCW_MULTI_INSTANCE;
    info.counter_count = CONC_WORDS;
    info.counters = c;
    return pcw_register(out, p, &info);
}

/* Create instance "i<serial>" with its identity as initial data. */
static inline int conc_create(pcw_instance **out, pcw_registration *r, uint64_t serial)
{
    char name[32];
    snprintf(name, sizeof name, "i%" PRIu64, serial);
    uint64_t w[CONC_WORDS] = {serial, ~serial, conc_hash(serial), serial << 32};
    pcw_data d = {w, sizeof w};
    return pcw_create_instance(out, r, name, 1, &d);
}

/* The owner's continuous update of w3 (relaxed atomic store). */
static inline void conc_touch(pcw_instance *in, uint64_t serial, uint64_t iteration)
{
    uint64_t *w = (uint64_t *)pcw_instance_block(in, 0);
    pcw_u64_set(&w[3], serial << 32 | (iteration & 0xffffffffu));
}

/* Is `cs` one of ours, i.e. four u64 counters named w0..w3? */
static inline int conc_is_ident(const pcw_counterset *cs)
{
    if (strncmp(cs->name, CONC_IDENT_PREFIX ".", strlen(CONC_IDENT_PREFIX) + 1) != 0)
        return 0;
    if (cs->counter_count != CONC_WORDS)
        return 0;
    for (unsigned i = 0; i < CONC_WORDS; i++)
        if (cs->counters[i].size != 8 || cs->counters[i].data_offset != 8 * i)
            return 0;
    return 1;
}

/* Check one sample of an ident counterset. Returns 1 when it is whole and
 * self-consistent, else 0 with a description in why. */
static inline int conc_check_ident(const pcw_snapshot *s, size_t x, char *why, size_t whylen)
{
    const char *name = pcw_snapshot_name(s, x);
    const unsigned char *d = pcw_snapshot_row(s, x);
    uint64_t w[CONC_WORDS];
    memcpy(w, d, sizeof w);
    char *end = NULL;
    uint64_t ser = 0;
    int name_ok = name[0] == 'i' && name[1] >= '1' && name[1] <= '9' &&
                  (ser = strtoull(name + 1, &end, 10), *end == 0) &&
                  pcw_snapshot_name_len(s, x) == strlen(name);
    if (name_ok && w[0] == ser && w[1] == ~ser && w[2] == conc_hash(ser) &&
        w[3] >> 32 == (ser & 0xffffffffu))
        return 1;
    snprintf(why, whylen,
             "id %" PRIu32 " name \"%.40s\" (len %" PRIu32 ") words %016" PRIx64 " %016" PRIx64
             " %016" PRIx64 " %016" PRIx64 ": %s",
             pcw_snapshot_id(s, x), name, pcw_snapshot_name_len(s, x), w[0], w[1], w[2], w[3],
             !name_ok                                 ? "bad name"
             : w[0] == 0 && w[1] == 0                 ? "half-made (zero data)"
             : w[0] != ser                            ? "misattributed (w0 names another instance)"
             : w[1] != ~ser || w[2] != conc_hash(ser) ? "torn (w1/w2 do not match)"
                                                      : "misattributed w3");
    return 0;
}

/* Check one sample of a moment (seqcount) counterset: all words equal. */
static inline int conc_check_moment(const pcw_snapshot *s, size_t x, char *why, size_t whylen)
{
    uint64_t w[CONC_WORDS];
    memcpy(w, pcw_snapshot_row(s, x), sizeof w);
    if (w[0] == w[1] && w[1] == w[2] && w[2] == w[3])
        return 1;
    snprintf(why, whylen,
             "seqcount instance \"%.40s\" torn: %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
             pcw_snapshot_name(s, x), w[0], w[1], w[2], w[3]);
    return 0;
}

/* ---- the churn worker ----------------------------------------------------
 * One provider thread: keeps `window` live instances, spread over `nregs`
 * registrations; each step closes one at random and creates its
 * replacement (two operations), and stores a new w3 into another one. */

typedef struct conc_churn {
    /* in */
    pcw_registration **regs;
    unsigned nregs;
    unsigned tid, nthreads;
    unsigned window;
    uint64_t ops;                   /* create + close operations; 0: until *stop */
    atomic_int *stop;               /* may be NULL when ops > 0 */
    atomic_uint_fast64_t *progress; /* shared op count, may be NULL */
    long pause_us;                  /* sleep after each operation (a rate, not a sync)... */
    uint64_t pause_after;           /* ...once this thread made this many */
    /* out */
    uint64_t done;
    int error; /* first failing pcw_status, 0 = none */
    uint64_t error_serial;
} conc_churn;

static inline void *conc_churn_thread(void *arg)
{
    conc_churn *c = (conc_churn *)arg;
    unsigned k = c->window ? c->window : 1;
    pcw_instance **live = (pcw_instance **)calloc(k, sizeof *live);
    uint64_t *serial = (uint64_t *)calloc(k, sizeof *serial);
    uint64_t rnd = 0x9e3779b97f4a7c15ull ^ ((uint64_t)c->tid + 1) * 0x2545f4914f6cdd1dull;
    uint64_t next = 0, iter = 0;
    if (!live || !serial) {
        c->error = PCW_E_NO_MEMORY;
        goto out;
    }
    for (;;) {
        if (c->ops ? c->done >= c->ops : atomic_load(c->stop) != 0)
            break;
        unsigned i = (unsigned)(conc_rand(&rnd) % k);
        if (live[i]) {
            pcw_close_instance(live[i]);
            live[i] = NULL;
            c->done++;
        } else {
            /* Serials interleave across threads, unique and never 0. */
            uint64_t s = 1 + c->tid + (uint64_t)c->nthreads * next++;
            unsigned rg = (unsigned)(conc_rand(&rnd) % (c->nregs ? c->nregs : 1));
            int rc = conc_create(&live[i], c->regs[rg], s);
            if (rc != PCW_OK) {
                c->error = rc, c->error_serial = s;
                break;
            }
            serial[i] = s;
            c->done++;
        }
        unsigned j = (unsigned)(conc_rand(&rnd) % k);
        if (live[j])
            conc_touch(live[j], serial[j], ++iter);
        if (c->progress)
            atomic_fetch_add_explicit(c->progress, 1, memory_order_relaxed);
        if (c->pause_us > 0 && c->done >= c->pause_after) {
            struct timespec ts = {c->pause_us / 1000000, (c->pause_us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
    }
    for (unsigned i = 0; i < k; i++)
        if (live[i])
            pcw_close_instance(live[i]);
out:
    free(live);
    free(serial);
    return NULL;
}

/* ---- the reader's loop ---------------------------------------------------
 * Reads every ident counterset of one segment once, checks every sample.
 * Counts go to `st`; the first violation's text is kept. */

typedef struct conc_read_stats {
    uint64_t snapshots, samples, violations, busy, errors;
    int last_error;
    char first_violation[256];
} conc_read_stats;

static inline void conc_note(conc_read_stats *st, const char *why)
{
    if (st->violations++ == 0)
        snprintf(st->first_violation, sizeof st->first_violation, "%s", why);
}

/* One pass over `seg`: refresh, then read and check each counterset. The
 * snapshot is the caller's, reused. */
static inline void conc_read_once(pcw_segment *seg, pcw_snapshot *snap, conc_read_stats *st)
{
    int rc = pcw_segment_refresh(seg, NULL);
    if (rc != PCW_OK) {
        st->errors++, st->last_error = rc;
        return;
    }
    for (size_t i = 0; i < pcw_segment_counterset_count(seg); i++) {
        const pcw_counterset *cs = pcw_segment_counterset(seg, i);
        int ident = conc_is_ident(cs);
        int moment = !ident && strncmp(cs->name, CONC_MOMENT_PREFIX ".", 7) == 0;
        /* Other countersets (noise, being unregistered) are read too: the
         * read must succeed, only their values are not checked. */
        rc = pcw_segment_read(seg, cs, snap, 0);
        if (rc != PCW_OK) {
            st->errors++, st->last_error = rc;
            continue;
        }
        if (!ident && !moment)
            continue;
        st->snapshots++;
        st->busy += snap->busy;
        for (size_t j = 0; j < snap->count; j++) {
            char why[256];
            size_t x = j;
            st->samples++;
            if (ident ? !conc_check_ident(snap, x, why, sizeof why)
                      : !conc_check_moment(snap, x, why, sizeof why))
                conc_note(st, why);
        }
    }
}

/* header.size of a segment file, read through a private read-only map as a
 * consumer would; 0 on error. Used to show memory stays bounded. */
static inline uint64_t conc_segment_size(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    void *m = mmap(NULL, sizeof(pcw_seg_header), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    uint64_t size = __atomic_load_n(&((const pcw_seg_header *)m)->size, __ATOMIC_ACQUIRE);
    munmap(m, sizeof(pcw_seg_header));
    return size;
}

/* ---- child processes (test_*.c) ------------------------------------------ */

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

/* Path of a helper program: $PCW_BUILD (or PCW_BUILD_DIR)/tests/helpers/NAME. */
static inline const char *conc_helper(const char *name, char *buf, size_t cap)
{
    const char *b = getenv("PCW_BUILD");
#ifdef PCW_BUILD_DIR
    if (!b || !*b)
        b = PCW_BUILD_DIR;
#endif
    snprintf(buf, cap, "%s/tests/helpers/%s", b ? b : "build", name);
    return buf;
}

/* fork+exec argv with its stdout on a pipe (*out, non-blocking reads via
 * conc_readline). Returns the pid, or -1. */
static inline pid_t conc_spawn(char *const argv[], int *out)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    *out = fds[0];
    return pid;
}

/* A line reader over a pipe with a deadline. */
typedef struct conc_lines {
    int fd;
    char buf[4096];
    size_t len;
} conc_lines;

/* Next line (without '\n') into line; 1 = got one, 0 = EOF, -1 = timeout. */
static inline int conc_readline(conc_lines *l, char *line, size_t cap, double timeout_s)
{
    double end = conc_now_() + timeout_s;
    for (;;) {
        char *nl = (char *)memchr(l->buf, '\n', l->len);
        if (nl) {
            size_t n = (size_t)(nl - l->buf);
            snprintf(line, cap, "%.*s", (int)n, l->buf);
            memmove(l->buf, nl + 1, l->len - n - 1);
            l->len -= n + 1;
            return 1;
        }
        double left = end - conc_now_();
        if (left <= 0)
            return -1;
        struct pollfd pf = {l->fd, POLLIN, 0};
        if (poll(&pf, 1, (int)(left * 1000) + 1) <= 0)
            continue;
        if (l->len == sizeof l->buf - 1)
            l->len = 0; /* an absurd line: drop it */
        ssize_t r = read(l->fd, l->buf + l->len, sizeof l->buf - 1 - l->len);
        if (r <= 0)
            return r == 0 ? 0 : -1;
        l->len += (size_t)r;
    }
}

/* waitpid with a deadline: 1 = reaped (*status set), 0 = still running. */
static inline int conc_wait(pid_t pid, int *status, double timeout_s)
{
    double end = conc_now_() + timeout_s;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 1;
        if (r < 0 || conc_now_() > end)
            return 0;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The reader helper's closing line, parsed. */
static inline int conc_parse_stats(const char *line, conc_read_stats *st, int *exited)
{
    return sscanf(line,
                  "stats snapshots %" SCNu64 " samples %" SCNu64 " violations %" SCNu64
                  " busy %" SCNu64 " errors %" SCNu64 " exited %d",
                  &st->snapshots, &st->samples, &st->violations, &st->busy, &st->errors,
                  exited) == 6;
}

#endif /* PCW_TESTS_CONCTEST_H */
