/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/top_provider.c - a provider for pcwtop's tests
 * (tests/test_pcwtop.c).
 *
 *   top_provider [--set NAME] [--instances N] [--seed S] [--callback CBSET]
 *                [--plain 1]
 *
 * Registers counterset NAME (default "Top Test", multipleAggregate) with
 *
 *   index id name   type                          size off aggregate
 *   0     1  Value  PERF_COUNTER_LARGE_RAWCOUNT   8    0   max
 *   1     2  Index  PERF_COUNTER_LARGE_RAWCOUNT   8    8   sum
 *   2     3  Ops    PERF_COUNTER_BULK_COUNT       8    16  sum
 *
 * and creates instances "inst-000000".."inst-<N-1>" (default 0) with
 * Value = a pseudo-random number below 1000 drawn from seed S (so there
 * are many ties), Index = i, Ops = 0. With --plain 1 the counterset is
 * multipleInstance (no _Total) and Ops a PERF_COUNTER_LARGE_RAWCOUNT: every
 * counter a plain 8-byte value, the rows pcwtop's collection converts as
 * it reads them (pcw_pdh_collect_column). With --callback it also registers
 * a callback counterset CBSET (multiple instances; one counter "Calls",
 * PERF_COUNTER_LARGE_RAWCOUNT: the COLLECT_DATA calls so far) whose
 * callback adds "cb-0", "cb-1", "cb-2". Prints "ready <pid>", then serves
 * one command per stdin line, answering each with one line:
 *   create NAME VALUE        "ok <id>"  (NAME: any bytes but white space)
 *   close NAME               "ok"
 *   set NAME VALUE           "ok"       (Value := VALUE)
 *   ops NAME DELTA           "ok"       (Ops += DELTA)
 *   stall MS                 "ok"       (the callback sleeps MS ms before
 *                                        answering a collection; 0: not)
 *   quit
 * Errors answer "err <status>". It closes the provider and exits 0 on
 * "quit", at end of stdin, or on SIGTERM.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

typedef struct top_values {
    uint64_t value, index, ops;
} top_values;

typedef struct entry {
    char *name;
    pcw_instance *inst;
} entry;

static entry *insts;
static size_t ninst, cap;
static atomic_long stall_ms;
static atomic_int quitting;
static atomic_ulong calls;

static int callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint64_t n = 0;
    if (type == PCW_CALLBACK_COLLECT_DATA) {
        n = atomic_fetch_add(&calls, 1) + 1;
        /* Sleep in slices, so that quitting never waits for it. */
        for (long t = 0; t < atomic_load(&stall_ms) && !atomic_load(&quitting); t += 10) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    for (uint32_t i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "cb-%u", i);
        pcw_data d = {&n, sizeof n};
        int rc = type == PCW_CALLBACK_COLLECT_DATA
                     ? pcw_add_instance(info->buffer, name, i, 1, &d)
                     : pcw_add_instance(info->buffer, name, i, 0, NULL);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

static entry *find(const char *name)
{
    for (size_t i = 0; i < ninst; i++)
        if (insts[i].inst && strcmp(insts[i].name, name) == 0)
            return &insts[i];
    return NULL;
}

static int add(pcw_registration *r, const char *name, uint64_t value, uint64_t index, uint32_t *id)
{
    if (ninst == cap) {
        size_t n = cap ? 2 * cap : 64;
        entry *e = realloc(insts, n * sizeof *e);
        if (!e)
            return PCW_E_NO_MEMORY;
        insts = e, cap = n;
    }
    top_values v = {value, index, 0};
    pcw_data d = {&v, sizeof v};
    entry *e = &insts[ninst];
    int rc = pcw_create_instance(&e->inst, r, name, 1, &d);
    if (rc != PCW_OK)
        return rc;
    e->name = strdup(name);
    ninst++;
    if (id)
        *id = pcw_instance_id(e->inst);
    return PCW_OK;
}

int main(int argc, char **argv)
{
    const char *set = "Top Test", *cbset = NULL;
    long n = 0;
    int plain = 0;
    unsigned long long seed = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--set") == 0)
            set = argv[i + 1];
        else if (strcmp(argv[i], "--instances") == 0)
            n = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--callback") == 0)
            cbset = argv[i + 1];
        else if (strcmp(argv[i], "--plain") == 0)
            plain = atoi(argv[i + 1]) != 0;
    }
    signal(SIGTERM, SIG_DFL);
    pcw_provider *p;
    pcw_provider_options po = {.name = "top_provider"};
    int rc = pcw_provider_open(&p, &po);
    if (rc != PCW_OK) {
        printf("err %d\n", rc);
        return 1;
    }
    static const char *names[3] = {"Value", "Index", "Ops"};
    const uint32_t types[3] = {PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT,
                               plain ? PERF_COUNTER_LARGE_RAWCOUNT : PERF_COUNTER_BULK_COUNT};
    static const uint32_t aggs[3] = {PCW_AGGREGATE_MAX, PCW_AGGREGATE_TOTAL, PCW_AGGREGATE_TOTAL};
    pcw_counter_desc c[3];
    for (int i = 0; i < 3; i++) {
        c[i] = pcw_counter_desc_default();
        c[i].id = (uint32_t)i + 1, c[i].name = names[i], c[i].type = types[i];
        c[i].size = 8, c[i].offset = 8u * (uint32_t)i, c[i].aggregate = aggs[i];
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = set,
                                  .instance_type = plain ? PCW_MULTI_INSTANCE : PCW_MULTI_AGGREGATE,
                                  .counter_count = 3,
                                  .counters = c};
    pcw_registration *r;
    if ((rc = pcw_register(&r, p, &info)) != PCW_OK) {
        printf("err %d\n", rc);
        return 1;
    }
    pcw_registration *cbr = NULL;
    if (cbset) {
        pcw_counter_desc cc = pcw_counter_desc_default();
        cc.id = 1, cc.name = "Calls", cc.type = PERF_COUNTER_LARGE_RAWCOUNT, cc.size = 8;
        pcw_registration_info ci = {.version = PCW_VERSION_1,
                                    .name = cbset,
                                    .instance_type = PCW_MULTI_INSTANCE,
                                    .counter_count = 1,
                                    .counters = &cc,
                                    .callback = callback};
        if ((rc = pcw_register(&cbr, p, &ci)) != PCW_OK) {
            printf("err %d\n", rc);
            return 1;
        }
    }
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (long i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        char name[32];
        snprintf(name, sizeof name, "inst-%06ld", i);
        if ((rc = add(r, name, x % 1000, (uint64_t)i, NULL)) != PCW_OK) {
            printf("err %d\n", rc);
            return 1;
        }
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[1024];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16], name[512];
        unsigned long long v = 0;
        int k = sscanf(line, "%15s %511s %llu", cmd, name, &v);
        entry *e = k >= 2 ? find(name) : NULL;
        if (k >= 1 && strcmp(cmd, "quit") == 0)
            break;
        if (k == 3 && strcmp(cmd, "create") == 0 && !e) {
            uint32_t id = 0;
            rc = add(r, name, v, ninst, &id);
            if (rc == PCW_OK)
                printf("ok %u\n", id);
            else
                printf("err %d\n", rc);
        } else if (k == 2 && strcmp(cmd, "close") == 0 && e) {
            pcw_close_instance(e->inst);
            e->inst = NULL;
            printf("ok\n");
        } else if (k == 3 && (strcmp(cmd, "set") == 0 || strcmp(cmd, "ops") == 0) && e) {
            top_values *tv = pcw_instance_block(e->inst, 0);
            if (strcmp(cmd, "set") == 0)
                pcw_u64_set(&tv->value, v);
            else
                pcw_u64_add(&tv->ops, v);
            printf("ok\n");
        } else if (k >= 2 && strcmp(cmd, "stall") == 0) {
            atomic_store(&stall_ms, atol(name));
            printf("ok\n");
        } else {
            printf("err bad command\n");
        }
        fflush(stdout);
    }
    atomic_store(&quitting, 1);
    if (cbr)
        pcw_unregister(cbr);
    pcw_provider_close(p);
    return 0;
}
