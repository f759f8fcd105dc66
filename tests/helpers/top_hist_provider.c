/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/top_hist_provider.c - a provider with a histogram counter
 * whose distribution the test knows, for pcwtop's and pcwdump's tests
 * (tests/test_pcwtop.c, tests/test_pcwdump.c).
 *
 *   top_hist_provider [--set NAME]
 *
 * Registers counterset NAME (default "Hist Test", multipleAggregate) with
 *
 *   index id name      type                 notes
 *   0     1  Requests  PERF_COUNTER_BULK_COUNT   observations so far (sum)
 *   1     2  Latency   PERF_PCW_HISTOGRAM   PCW_HIST_UNIT_NS, schema 3,
 *                                           2^-30 .. 2^12 s (336 buckets)
 *
 * Prints "ready <pid>", then serves one command per stdin line, answering
 * each with one line ("ok ..." or "err ..."):
 *   create NAME                    an instance, without observations
 *   pattern NAME NS COUNT [NS COUNT]...
 *                                  every millisecond, observe NS
 *                                  nanoseconds COUNT times, for each pair
 *                                  (a steady, known distribution; no pairs:
 *                                  stop)
 *   observe NAME NS COUNT          observe NS nanoseconds COUNT times, once
 *   poke NAME WORD VALUE           store VALUE into the histogram's word
 *                                  WORD (0 sum, 1 zero bucket, 2.. buckets:
 *                                  hostile content)
 *   quit
 * It exits 0 on "quit", at end of stdin, or on SIGTERM.
 *
 * One thread writes the counters (pcw/provider.h's rule): the observer
 * thread; the command loop changes instances and patterns under `lock`,
 * which the observer holds while it observes.
 */
#define _GNU_SOURCE 1
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/histogram.h>
#include <pcw/provider.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

PCW_HISTOGRAM_TYPE(hist_latency, PCW_HIST_UNIT_NS, 3, -30, 12);

typedef struct hist_values {
    uint64_t requests;
    hist_latency latency;
} hist_values;

#define MAX_PAIRS     8
#define MAX_INSTANCES 64

typedef struct entry {
    char name[128];
    pcw_instance *inst;
    size_t npairs;
    uint64_t ns[MAX_PAIRS], count[MAX_PAIRS];
} entry;

static entry insts[MAX_INSTANCES];
static size_t ninst;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int quitting;

static void observe(entry *e, uint64_t ns, uint64_t count)
{
    hist_values *v = pcw_instance_block(e->inst, 0);
    for (uint64_t i = 0; i < count; i++)
        hist_latency_observe(&v->latency, ns);
    pcw_u64_add(&v->requests, count);
}

static void *observer(void *arg)
{
    (void)arg;
    while (!atomic_load(&quitting)) {
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < ninst; i++)
            for (size_t j = 0; j < insts[i].npairs; j++)
                observe(&insts[i], insts[i].ns[j], insts[i].count[j]);
        pthread_mutex_unlock(&lock);
        struct timespec ts = {0, 1000 * 1000}; /* the pace of the pattern */
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static entry *find(const char *name)
{
    for (size_t i = 0; i < ninst; i++)
        if (strcmp(insts[i].name, name) == 0)
            return &insts[i];
    return NULL;
}

/* One command line; the answer is printed. Called with `lock` held. */
static void command(pcw_registration *r, char *line)
{
    char *save = NULL, *cmd = strtok_r(line, " \t\n", &save);
    char *name = cmd ? strtok_r(NULL, " \t\n", &save) : NULL;
    entry *e = name ? find(name) : NULL;
    uint64_t a[2 * MAX_PAIRS + 1];
    size_t n = 0;
    for (char *t; n < sizeof a / sizeof a[0] && (t = strtok_r(NULL, " \t\n", &save));)
        a[n++] = strtoull(t, NULL, 0);
    if (!cmd || !name) {
        printf("err bad command\n");
    } else if (strcmp(cmd, "create") == 0 && !e && ninst < MAX_INSTANCES &&
               strlen(name) < sizeof insts[0].name) {
        hist_values v;
        memset(&v, 0, sizeof v);
        pcw_data d = {&v, sizeof v};
        e = &insts[ninst];
        int rc = pcw_create_instance(&e->inst, r, name, 1, &d);
        if (rc != PCW_OK) {
            printf("err %d\n", rc);
            return;
        }
        snprintf(e->name, sizeof e->name, "%s", name);
        ninst++;
        printf("ok %u\n", pcw_instance_id(e->inst));
    } else if (e && strcmp(cmd, "pattern") == 0 && n % 2 == 0 && n <= 2 * MAX_PAIRS) {
        e->npairs = n / 2;
        for (size_t j = 0; j < e->npairs; j++)
            e->ns[j] = a[2 * j], e->count[j] = a[2 * j + 1];
        printf("ok\n");
    } else if (e && strcmp(cmd, "observe") == 0 && n == 2) {
        observe(e, a[0], a[1]);
        printf("ok\n");
    } else if (e && strcmp(cmd, "poke") == 0 && n == 2 &&
               a[0] < sizeof(hist_latency) / sizeof(uint64_t)) {
        hist_values *v = pcw_instance_block(e->inst, 0);
        pcw_u64_set(&v->latency.words[a[0]], a[1]);
        printf("ok\n");
    } else {
        printf("err bad command\n");
    }
}

int main(int argc, char **argv)
{
    const char *set = "Hist Test";
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--set") == 0)
            set = argv[i + 1];
    signal(SIGTERM, SIG_DFL);
    pcw_provider *p;
    pcw_provider_options po = {.name = "top_hist_provider"};
    int rc = pcw_provider_open(&p, &po);
    if (rc != PCW_OK) {
        printf("err %d\n", rc);
        return 1;
    }
    static const pcw_counter_desc c[] = {
        PCW_COUNTER_EX(1, "Requests", PERF_COUNTER_BULK_COUNT, hist_values, requests,
                       PCW_AGGREGATE_TOTAL, 0, NULL),
        PCW_HISTOGRAM_COUNTER(2, "Latency", hist_values, latency, hist_latency),
    };
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = set,
                                  .instance_type = PCW_MULTI_AGGREGATE,
                                  .counter_count = 2,
                                  .counters = c};
    pcw_registration *r;
    if ((rc = pcw_register(&r, p, &info)) != PCW_OK) {
        printf("err %d\n", rc);
        return 1;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, observer, NULL) != 0) {
        printf("err thread\n");
        return 1;
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[1024];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "quit", 4) == 0)
            break;
        pthread_mutex_lock(&lock);
        command(r, line);
        pthread_mutex_unlock(&lock);
        fflush(stdout);
    }
    atomic_store(&quitting, 1);
    pthread_join(th, NULL);
    for (size_t i = 0; i < ninst; i++)
        pcw_close_instance(insts[i].inst);
    pcw_unregister(r);
    pcw_provider_close(p);
    return 0;
}
