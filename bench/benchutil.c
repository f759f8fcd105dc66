/* SPDX-License-Identifier: MIT */
/*
 * bench/benchutil.c - pinning, child processes and the shared provider
 * children (see benchutil.h).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "pcw/consumer.h"
#include "pcw/provider.h"

void bu_pin(int cpu)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpu < 0 || cpu >= n)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)sched_setaffinity(0, sizeof set, &set);
}

uint64_t bu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *bu_root(void)
{
    const char *r = getenv("PCW_DIR");
    return r ? r : "";
}

uint64_t bu_segment_size(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    void *m = mmap(NULL, sizeof(pcw_seg_header), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    /* Acquire pairs with the provider's release of header.size. */
    uint64_t size = __atomic_load_n(&((const pcw_seg_header *)m)->size, __ATOMIC_ACQUIRE);
    munmap(m, sizeof(pcw_seg_header));
    return size;
}

/* ---- children ----------------------------------------------------------- */

int bu_spawn(bu_child *c, int cpu, const char *const *args)
{
    int pin[2], pout[2];
    memset(c, 0, sizeof *c);
    c->pid = -1;
    if (pipe2(pin, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(pout, O_CLOEXEC) != 0) {
        close(pin[0]), close(pin[1]);
        return -1;
    }
    const char *argv[32];
    size_t n = 0;
    argv[n++] = "pcw_bench";
    argv[n++] = "--bu-child";
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0) {
        close(pin[0]), close(pin[1]), close(pout[0]), close(pout[1]);
        return -1;
    }
    if (pid == 0) {
        /* dup2 clears O_CLOEXEC on the new descriptors. */
        if (dup2(pin[0], 0) < 0 || dup2(pout[1], 1) < 0)
            _exit(127);
        bu_pin(cpu);
        execv("/proc/self/exe", (char *const *)argv);
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    c->pid = pid;
    c->in = pin[1];
    c->out = pout[0];
    /* The ready line. */
    size_t len = 0;
    while (len < sizeof c->line - 1) {
        ssize_t r = read(c->out, c->line + len, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (c->line[len] == '\n')
            break;
        len++;
    }
    int ok = len < sizeof c->line - 1 && c->line[len] == '\n';
    c->line[len] = 0;
    if (!ok || strncmp(c->line, "ready", 5) != 0) {
        fprintf(stderr, "pcw_bench: child %s failed: %s\n", args[0], c->line);
        bu_stop(c);
        return -1;
    }
    return 0;
}

void bu_stop(bu_child *c)
{
    if (c->pid <= 0)
        return;
    close(c->in);
    for (int i = 0; i < 1000; i++) {
        if (waitpid(c->pid, NULL, WNOHANG) == c->pid)
            goto done;
        usleep(10000);
    }
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
done:
    close(c->out);
    c->pid = -1;
}

/* Has our stdin reached end of file (the parent's request to exit)? */
static int parent_says_stop(void)
{
    struct pollfd p = {.fd = 0, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

static void wait_for_parent(void)
{
    char b[64];
    while (read(0, b, sizeof b) > 0 || errno == EINTR)
        errno = 0;
}

/* provider N C [FLAGS]: N instances of C counters registered with FLAGS,
 * then wait. */
static int child_provider(int64_t n, int64_t c, uint32_t flags)
{
    pcw_provider *p;
    pcw_provider_options o = {.name = "pcw_bench"};
    int rc = pcw_provider_open(&p, &o);
    if (rc != PCW_OK) {
        printf("error provider_open %s\n", pcw_status_str(rc));
        return 1;
    }
    pcw_counter_desc *cd = calloc((size_t)c, sizeof *cd);
    char(*names)[16] = calloc((size_t)c, sizeof *names);
    for (int64_t i = 0; i < c; i++) {
        cd[i] = pcw_counter_desc_default();
        cd[i].id = (uint32_t)i;
        cd[i].offset = (uint32_t)(8 * i);
        snprintf(names[i], sizeof names[i], "c%d", (int)i);
        cd[i].name = names[i];
    }
    pcw_registration_info ri = {.version = PCW_VERSION_1,
                                .flags = flags,
                                .name = "Bench",
                                .instance_type = PCW_MULTI_INSTANCE,
                                .counter_count = (uint32_t)c,
                                .counters = cd};
    pcw_registration *r;
    if ((rc = pcw_register(&r, p, &ri)) != PCW_OK) {
        printf("error register %s\n", pcw_status_str(rc));
        return 1;
    }
    uint64_t before = bu_segment_size(pcw_provider_path(p));
    uint64_t *init = calloc((size_t)c, 8);
    pcw_data d = {init, (uint32_t)(8 * c)};
    char name[32];
    for (int64_t i = 0; i < n; i++) {
        for (int64_t k = 0; k < c; k++)
            init[k] = (uint64_t)(i + k);
        snprintf(name, sizeof name, BU_NAME_FMT, (int)i);
        pcw_instance *in;
        if ((rc = pcw_create_instance(&in, r, name, 1, &d)) != PCW_OK) {
            printf("error create %s\n", pcw_status_str(rc));
            return 1;
        }
    }
    printf("ready %llu %s\n", (unsigned long long)before, pcw_provider_path(p));
    fflush(stdout);
    wait_for_parent();
    /* Closing a million instances one by one would only slow the exit. */
    unlink(pcw_provider_path(p));
    _exit(0);
}

/* reader PATH: snapshot the "Bench" counterset of PATH, as fast as it can,
 * until told to stop. */
static int child_reader(const char *path)
{
    pcw_segment *seg;
    int rc = pcw_segment_open(&seg, path);
    if (rc != PCW_OK) {
        printf("error segment_open %s\n", pcw_status_str(rc));
        return 1;
    }
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Bench");
    if (!cs) {
        printf("error no counterset\n");
        return 1;
    }
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    if ((rc = pcw_segment_read(seg, cs, &s, 0)) != PCW_OK) {
        printf("error read %s\n", pcw_status_str(rc));
        return 1;
    }
    printf("ready %zu\n", s.count);
    fflush(stdout);
    /* A failed read is counted and reported, not fatal: the figure is the
     * provider's cost with readers running (see docs/performance.md on the
     * PCW_E_CORRUPT a reader can get while the segment grows). */
    uint64_t n = 0, failed = 0;
    int last_rc = PCW_OK;
    for (;;) {
        rc = pcw_segment_read(seg, cs, &s, 0);
        n++;
        if (rc != PCW_OK)
            failed++, last_rc = rc;
        if (n % 16 == 0 && parent_says_stop())
            break;
    }
    if (failed)
        fprintf(stderr, "pcw_bench reader: %llu of %llu reads failed (last: %s)\n",
                (unsigned long long)failed, (unsigned long long)n, pcw_status_str(last_rc));
    pcw_snapshot_free(&s);
    pcw_segment_close(seg);
    return 0;
}

int bu_child_main(int argc, char **argv)
{
    /* argv: prog --bu-child KIND ARGS... */
    if (argc >= 5 && strcmp(argv[2], "provider") == 0)
        return child_provider(strtoll(argv[3], NULL, 10), strtoll(argv[4], NULL, 10),
                              argc >= 6 ? (uint32_t)strtoul(argv[5], NULL, 0) : 0);
    if (argc >= 4 && strcmp(argv[2], "reader") == 0)
        return child_reader(argv[3]);
    if (argc >= 3 && strcmp(argv[2], "mmv") == 0)
        return bench_mmv_child(argc - 2, argv + 2);
    if (argc >= 3 && strncmp(argv[2], "callback-", 9) == 0)
        return bench_callback_child(argc - 2, argv + 2);
    if (argc >= 3 && strcmp(argv[2], "history-churn") == 0)
        return bench_history_churn_child(argc - 2, argv + 2);
    if (argc >= 4 && strcmp(argv[2], "histogram-provider") == 0)
        return bench_histogram_child(strtoll(argv[3], NULL, 10));
    printf("error unknown child\n");
    return 2;
}

/* ---- the shared providers ------------------------------------------------ */

/* One per shape a run asks for (snapshot: 7 shapes, each plain and with
 * PCW_REG_CACHELINE; lookup, segment, query...): 8 was one too few once
 * the cache-line shapes came, and their benchmarks failed to start. */
static bu_provider provs[32];
static size_t nprovs;

const bu_provider *bu_provider_get(int64_t instances, int64_t counters)
{
    return bu_provider_get_flags(instances, counters, 0);
}

const bu_provider *bu_provider_get_flags(int64_t instances, int64_t counters, uint32_t flags)
{
    for (size_t i = 0; i < nprovs; i++)
        if (provs[i].instances == instances && provs[i].counters == counters &&
            provs[i].flags == flags)
            return &provs[i];
    if (nprovs == sizeof provs / sizeof provs[0])
        return NULL;
    bu_provider *p = &provs[nprovs];
    char n[32], c[32], f[32];
    snprintf(n, sizeof n, "%lld", (long long)instances);
    snprintf(c, sizeof c, "%lld", (long long)counters);
    snprintf(f, sizeof f, "%u", (unsigned)flags);
    const char *args[] = {"provider", n, c, f, NULL};
    if (bu_spawn(&p->child, BU_CPU_OTHER, args) != 0)
        return NULL;
    unsigned long long before;
    int used = 0;
    if (sscanf(p->child.line, "ready %llu %n", &before, &used) != 1 || !used) {
        bu_stop(&p->child);
        return NULL;
    }
    size_t len = strlen(p->child.line + used);
    if (len >= sizeof p->path) {
        bu_stop(&p->child);
        return NULL;
    }
    memcpy(p->path, p->child.line + used, len + 1);
    p->size_before = before;
    p->instances = instances;
    p->counters = counters;
    p->flags = flags;
    nprovs++;
    return p;
}

static void (*stop_fns[8])(void);

void bu_on_stop_all(void (*stop)(void))
{
    size_t i = 0;
    while (i < 8 && stop_fns[i] && stop_fns[i] != stop)
        i++;
    if (i < 8)
        stop_fns[i] = stop;
}

static void stop_others(void)
{
    for (size_t i = 0; i < 8 && stop_fns[i]; i++)
        stop_fns[i]();
}

void bu_provider_stop_all(void)
{
    stop_others();
    for (size_t i = 0; i < nprovs; i++)
        bu_stop(&provs[i].child);
    nprovs = 0;
}

void bu_provider_keep_only(int64_t instances, int64_t counters)
{
    stop_others();
    size_t kept = 0;
    for (size_t i = 0; i < nprovs; i++) {
        if (provs[i].instances == instances && provs[i].counters == counters && !provs[i].flags)
            provs[kept++] = provs[i];
        else
            bu_stop(&provs[i].child);
    }
    nprovs = kept;
}
