/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/query_provider.c - a provider the query-layer tests drive.
 *
 *   query_provider [--set NAME] [--type N] [--control LOG] [--advanced INDEX]...
 *
 * Registers counterset NAME (default "Query Test") with instance type N
 * (pcw_instance_type, default 1 = multiple) and these counters, 48 bytes:
 *
 *   index id name             type                        size off aggregate
 *   0     1  Count            PERF_COUNTER_BULK_COUNT     8    0   sum
 *   1     2  Level            PERF_COUNTER_LARGE_RAWCOUNT 8    8   avg
 *   2     3  Peak             PERF_COUNTER_RAWCOUNT       4    16  max
 *   3     4  Low              PERF_COUNTER_RAWCOUNT       4    20  min
 *   4     5  Hit Ratio        PERF_RAW_FRACTION           4    24  sum
 *   5     6  Hit Ratio Base   PERF_RAW_BASE               4    28  (its fraction's)
 *   6     7  Rate             PERF_COUNTER_COUNTER        4    32  sum
 *   7     8  Plain            PERF_COUNTER_LARGE_RAWCOUNT 8    40  undefined
 *
 * --advanced INDEX makes counter INDEX's detail level PCW_DETAIL_ADVANCED
 * (standard otherwise). With --control LOG it has a control callback that appends one line per
 * ADD_COUNTER / REMOVE_COUNTER to LOG ("add <counter index> <mask>") before
 * answering. Prints "ready <pid>", then serves one command per stdin line,
 * answering each with one line:
 *   create NAME              "ok <id>" (NAME "-" = the empty name)
 *   close NAME               "ok"
 *   set NAME INDEX VALUE     "ok"      (counter INDEX := VALUE)
 *   rate NAME INDEX PER_SEC  "ok"      (a thread keeps counter INDEX at
 *                                       PER_SEC x seconds since this command,
 *                                       computed from CLOCK_MONOTONIC every
 *                                       millisecond)
 *   quit
 * It closes the provider and exits 0 on "quit", at end of stdin, or on
 * SIGTERM; "crash" exits at once without closing (a crashed provider).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/callback.h>
#include <pcw/provider.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_INST 64
#define DATA     48

static struct {
    char name[128];
    pcw_instance *inst;
    unsigned char *block;
} insts[MAX_INST];

static const uint32_t offs[8] = {0, 8, 16, 20, 24, 28, 32, 40};
static const uint32_t sizes[8] = {8, 8, 4, 4, 4, 4, 4, 8};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    unsigned char *block;
    uint32_t index;
    double per_sec;
    uint64_t start_ns;
} rate;
static atomic_int stop;
static const char *control_log;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void store(unsigned char *block, uint32_t index, uint64_t v)
{
    if (sizes[index] == 8)
        pcw_u64_set((uint64_t *)(void *)(block + offs[index]), v);
    else
        atomic_store_explicit((_Atomic uint32_t *)(void *)(block + offs[index]), (uint32_t)v,
                              memory_order_relaxed);
}

static void *rate_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        pthread_mutex_lock(&lock);
        if (rate.block) {
            double secs = (double)(now_ns() - rate.start_ns) / 1e9;
            store(rate.block, rate.index, (uint64_t)(rate.per_sec * secs));
        }
        pthread_mutex_unlock(&lock);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)ctx;
    if (req != PCW_CONTROL_ADD_COUNTER && req != PCW_CONTROL_REMOVE_COUNTER)
        return PCW_OK;
    FILE *f = fopen(control_log, "a");
    if (f) {
        fprintf(f, "%s %u %s\n", req == PCW_CONTROL_ADD_COUNTER ? "add" : "remove",
                (unsigned)info->counter_index, info->instance ? info->instance : "*");
        fclose(f);
    }
    return PCW_OK;
}

static void on_term(int sig)
{
    (void)sig;
    atomic_store(&stop, 1);
}

static int find(const char *name)
{
    for (int i = 0; i < MAX_INST; i++)
        if (insts[i].inst && strcmp(insts[i].name, name) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv)
{
    const char *set = "Query Test";
    uint32_t type = PCW_MULTI_INSTANCE;
    uint32_t advanced = 0; /* bit k: counter k is PCW_DETAIL_ADVANCED */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--set") == 0 && i + 1 < argc)
            set = argv[++i];
        else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc)
            type = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--control") == 0 && i + 1 < argc)
            control_log = argv[++i];
        else if (strcmp(argv[i], "--advanced") == 0 && i + 1 < argc)
            advanced |= 1u << (strtoul(argv[++i], NULL, 10) & 7);
        else {
            fprintf(stderr, "query_provider: bad argument %s\n", argv[i]);
            return 2;
        }
    }
    static const char *names[8] = {"Count",     "Level",          "Peak", "Low",
                                   "Hit Ratio", "Hit Ratio Base", "Rate", "Plain"};
    static const uint32_t types[8] = {PERF_COUNTER_BULK_COUNT, PERF_COUNTER_LARGE_RAWCOUNT,
                                      PERF_COUNTER_RAWCOUNT,   PERF_COUNTER_RAWCOUNT,
                                      PERF_RAW_FRACTION,       PERF_RAW_BASE,
                                      PERF_COUNTER_COUNTER,    PERF_COUNTER_LARGE_RAWCOUNT};
    static const uint32_t aggs[8] = {
        PCW_AGGREGATE_TOTAL, PCW_AGGREGATE_AVERAGE,   PCW_AGGREGATE_MAX,   PCW_AGGREGATE_MIN,
        PCW_AGGREGATE_TOTAL, PCW_AGGREGATE_UNDEFINED, PCW_AGGREGATE_TOTAL, PCW_AGGREGATE_UNDEFINED};
    pcw_counter_desc c[8];
    for (int i = 0; i < 8; i++) {
        c[i] = pcw_counter_desc_default();
        c[i].id = (uint32_t)i + 1, c[i].name = names[i], c[i].type = types[i];
        c[i].size = sizes[i], c[i].offset = offs[i], c[i].aggregate = aggs[i];
        if (advanced & (1u << i))
            c[i].detail_level = PCW_DETAIL_ADVANCED;
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = set,
                                  .instance_type = type,
                                  .counter_count = 8,
                                  .counters = c};
    pcw_provider_options po = {0};
    if (control_log)
        po.control_callback = control;
    pcw_provider *p;
    pcw_registration *r;
    int rc = pcw_provider_open(&p, &po);
    if (rc == PCW_OK && (rc = pcw_register(&r, p, &info)) != PCW_OK)
        pcw_provider_close(p);
    if (rc != PCW_OK) {
        fprintf(stderr, "query_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    pthread_t th;
    pthread_create(&th, NULL, rate_thread, NULL);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[512];
    while (!atomic_load(&stop) && fgets(line, sizeof line, stdin)) {
        char cmd[16], name[128];
        unsigned idx = 0;
        double v = 0;
        int n = sscanf(line, "%15s %127s %u %lf", cmd, name, &idx, &v);
        if (n >= 2 && strcmp(name, "-") == 0)
            name[0] = 0;
        if (n >= 1 && strcmp(cmd, "quit") == 0)
            break;
        if (n >= 1 && strcmp(cmd, "crash") == 0)
            _exit(0);
        int i = n >= 2 ? find(name) : -1;
        if (n == 2 && strcmp(cmd, "create") == 0 && i < 0) {
            for (i = 0; i < MAX_INST && insts[i].inst; i++)
                ;
            pcw_data d = {NULL, DATA};
            if (i == MAX_INST ||
                (rc = pcw_create_instance(&insts[i].inst, r, name, 1, &d)) != PCW_OK) {
                printf("err %d\n", i == MAX_INST ? PCW_E_NO_MEMORY : rc);
            } else {
                snprintf(insts[i].name, sizeof insts[i].name, "%s", name);
                insts[i].block = pcw_instance_block(insts[i].inst, 0);
                printf("ok %u\n", (unsigned)pcw_instance_id(insts[i].inst));
            }
        } else if (n == 2 && strcmp(cmd, "close") == 0 && i >= 0) {
            pthread_mutex_lock(&lock);
            if (rate.block == insts[i].block)
                rate.block = NULL;
            pthread_mutex_unlock(&lock);
            pcw_close_instance(insts[i].inst);
            insts[i].inst = NULL;
            printf("ok\n");
        } else if (n == 4 && strcmp(cmd, "set") == 0 && i >= 0 && idx < 8) {
            store(insts[i].block, idx, (uint64_t)v);
            printf("ok\n");
        } else if (n == 4 && strcmp(cmd, "rate") == 0 && i >= 0 && idx < 8) {
            pthread_mutex_lock(&lock);
            rate.block = insts[i].block, rate.index = idx, rate.per_sec = v;
            rate.start_ns = now_ns();
            pthread_mutex_unlock(&lock);
            printf("ok\n");
        } else {
            printf("err bad command\n");
        }
        fflush(stdout);
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    pcw_provider_close(p);
    return 0;
}
