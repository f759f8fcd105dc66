/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/slow_provider.c - a provider whose callbacks answer only
 * when the test lets them, for the tests of the time limit across several
 * providers and countersets (tests/test_collect_many.c).
 *
 *   slow_provider NAME NSETS blocked|free [control] [dup] [mixed]
 *
 * Opens a provider named NAME and registers:
 *   - "Slow Set 1" ... "Slow Set NSETS": callback countersets (counters
 *     A = u64 at 0, B = u64 at 8). A COLLECT_DATA adds one instance, named
 *     NAME-i, id 1, with A = i and B = the number of COLLECT_DATA calls of
 *     that counterset so far. With "dup", set 2 is registered as
 *     "SLOW SET 1" instead: a second registration of set 1's name (its
 *     instance is NAME-2, A = 2).
 *   - "Slow Segment": a segment counterset (counter V = u64 at 0) with one
 *     instance, NAME, id 1, V = 42.
 * With "control", the provider also has a control callback that counts
 * COLLECT_START and COLLECT_END. With "mixed", set 1 also has a segment
 * instance (mixed model): NAME-seg (its id assigned), A = 7, B = 0.
 *
 * While blocked, a COLLECT_DATA waits (at most 30 s) until the test sends
 * "release"; "block" makes later ones wait again. "stats" prints
 * "stats STARTS ENDS COLLECTS" (control notifications and COLLECT_DATA
 * calls begun so far); "paired MS" prints the same once every
 * COLLECT_START has had its COLLECT_END, or after MS milliseconds (the
 * control callback signals each one: the test waits on that, not on a
 * sleep). Prints "ready <segment path>" once published; runs
 * until its stdin closes (which releases every waiting callback).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define MAX_SETS 24

static const char *name;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int blocked; /* under lock */
/* Signalled (under lock) by every COLLECT_START and COLLECT_END. */
static pthread_cond_t notified = PTHREAD_COND_INITIALIZER;
static atomic_int starts, ends, collects;
static atomic_ulong calls[MAX_SETS + 1];

static void wait_released(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30; /* bounded, whatever the test does */
    pthread_mutex_lock(&lock);
    while (blocked)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            break;
    pthread_mutex_unlock(&lock);
}

static int set_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    uintptr_t set = (uintptr_t)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint64_t v[2] = {set, 0};
    if (type == PCW_CALLBACK_COLLECT_DATA) {
        atomic_fetch_add(&collects, 1);
        v[1] = atomic_fetch_add(&calls[set], 1) + 1;
        wait_released();
    }
    char inst[128];
    snprintf(inst, sizeof inst, "%s-%u", name, (unsigned)set);
    pcw_data d = {v, sizeof v};
    return pcw_add_instance(info->buffer, inst, 1, type == PCW_CALLBACK_COLLECT_DATA, &d);
}

static int control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)info, (void)ctx;
    if (req != PCW_CONTROL_COLLECT_START && req != PCW_CONTROL_COLLECT_END)
        return PCW_OK;
    pthread_mutex_lock(&lock);
    atomic_fetch_add(req == PCW_CONTROL_COLLECT_START ? &starts : &ends, 1);
    pthread_cond_broadcast(&notified);
    pthread_mutex_unlock(&lock);
    return PCW_OK;
}

/* "paired MS": wait until the COLLECT_ENDs have caught up with the
 * COLLECT_STARTs, at most ms. */
static void wait_paired(long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L)
        until.tv_sec++, until.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&lock);
    while (atomic_load(&starts) != atomic_load(&ends))
        if (pthread_cond_timedwait(&notified, &lock, &until) != 0)
            break;
    pthread_mutex_unlock(&lock);
}

static void set_blocked(int b)
{
    pthread_mutex_lock(&lock);
    blocked = b;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: slow_provider NAME NSETS blocked|free [control] [dup] [mixed]\n");
        return 2;
    }
    name = argv[1];
    unsigned nsets = (unsigned)strtoul(argv[2], NULL, 10);
    blocked = strcmp(argv[3], "blocked") == 0;
    int with_control = 0, dup = 0, mixed = 0;
    for (int i = 4; i < argc; i++) {
        with_control |= strcmp(argv[i], "control") == 0;
        dup |= strcmp(argv[i], "dup") == 0;
        mixed |= strcmp(argv[i], "mixed") == 0;
    }
    if (nsets > MAX_SETS)
        return 2;
    pcw_provider *p;
    pcw_provider_options o = {.name = name, .control_callback = with_control ? control : NULL};
    int rc = pcw_provider_open(&p, &o);
    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "A", c[0].offset = 0;
    c[1].id = 2, c[1].name = "B", c[1].offset = 8;
    pcw_registration *regs[MAX_SETS + 1];
    for (unsigned i = 1; rc == PCW_OK && i <= nsets; i++) {
        char set[32];
        snprintf(set, sizeof set, dup && i == 2 ? "SLOW SET 1" : "Slow Set %u", i);
        pcw_registration_info info = {.version = PCW_VERSION_1,
                                      .name = set,
                                      .instance_type = PCW_MULTI_INSTANCE,
                                      .counter_count = 2,
                                      .counters = c,
                                      .callback = set_callback,
                                      .callback_context = (void *)(uintptr_t)i};
        rc = pcw_register(&regs[i], p, &info);
    }
    pcw_counter_desc v = pcw_counter_desc_default();
    v.id = 1, v.name = "V";
    pcw_registration_info seg_info = {.version = PCW_VERSION_1,
                                      .name = "Slow Segment",
                                      .instance_type = PCW_MULTI_INSTANCE,
                                      .counter_count = 1,
                                      .counters = &v};
    pcw_registration *seg_reg;
    pcw_instance *inst;
    uint64_t value = 42;
    pcw_data d = {&value, sizeof value};
    if (rc == PCW_OK && (rc = pcw_register(&seg_reg, p, &seg_info)) == PCW_OK)
        rc = pcw_create_instance(&inst, seg_reg, name, 1, &d);
    uint64_t mixed_v[2] = {7, 0};
    pcw_data md = {mixed_v, sizeof mixed_v};
    char mixed_name[128];
    snprintf(mixed_name, sizeof mixed_name, "%s-seg", name);
    pcw_instance *minst;
    if (rc == PCW_OK && mixed && nsets >= 1)
        rc = pcw_create_instance(&minst, regs[1], mixed_name, 1, &md);
    if (rc != PCW_OK) {
        fprintf(stderr, "slow_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    printf("ready %s\n", pcw_provider_path(p));
    fflush(stdout);
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "release", 7) == 0)
            set_blocked(0);
        else if (strncmp(line, "block", 5) == 0)
            set_blocked(1);
        else if (strncmp(line, "paired ", 7) == 0 || strncmp(line, "stats", 5) == 0) {
            if (line[0] == 'p')
                wait_paired(strtol(line + 7, NULL, 10));
            printf("stats %d %d %d\n", atomic_load(&starts), atomic_load(&ends),
                   atomic_load(&collects));
            fflush(stdout);
        }
    }
    set_blocked(0);
    pcw_provider_close(p); /* waits for the callbacks, ends what consumers held */
    return 0;
}
