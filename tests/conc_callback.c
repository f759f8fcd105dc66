/* SPDX-License-Identifier: MIT */
/*
 * tests/conc_callback.c - concurrent consumers of callback countersets
 * (built and run under TSan too).
 *
 * One provider in this process serves CONSUMERS threads, each with its own
 * pcw_consumer, collecting, enumerating and adding/removing counters in a
 * loop, while a mutator thread creates and closes segment instances of the
 * same (mixed-model) counterset and registers and unregisters a second
 * callback counterset whose callback the consumers may be running at that
 * moment. Every collection must be complete and consistent: the callback's
 * three instances carry A == id * 10 and B == ~A.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "conctest.h"
#include "pcw/collect.h"
#include "pcw/provider.h"

#define CONSUMERS 4
#define SECONDS   2.0

static atomic_int stop;
static atomic_long adds, removes, controls;

static int callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type == PCW_CALLBACK_ADD_COUNTER) {
        atomic_fetch_add(&adds, 1);
        return PCW_OK;
    }
    if (type == PCW_CALLBACK_REMOVE_COUNTER) {
        atomic_fetch_add(&removes, 1);
        return PCW_OK;
    }
    for (uint32_t i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "cb%u", i);
        uint64_t v[2] = {1000u + i * 10, ~(uint64_t)(1000u + i * 10)};
        pcw_data d = {v, sizeof v};
        int rc = pcw_add_instance(info->buffer, name, 1000 + i, 1, &d);
        if (rc != PCW_OK)
            return rc;
    }
    return PCW_OK;
}

static int control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)req, (void)info, (void)ctx;
    atomic_fetch_add(&controls, 1);
    return PCW_OK;
}

static pcw_registration_info reg_info(pcw_counter_desc *c, const char *name)
{
    c[0] = pcw_counter_desc_default(), c[1] = pcw_counter_desc_default();
    c[0].id = 1, c[0].name = "A", c[0].offset = 0;
    c[1].id = 2, c[1].name = "B", c[1].offset = 8;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = name,
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 2,
                                  .counters = c,
                                  .callback = callback};
    return info;
}

static void *consumer_main(void *arg)
{
    long *bad = (long *)arg;
    pcw_consumer *c;
    if (pcw_consumer_open(&c, NULL) != PCW_OK || pcw_consumer_refresh(c, NULL) != PCW_OK) {
        (*bad)++;
        return NULL;
    }
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    long added = 0; /* counters this consumer has added and not removed */
    for (unsigned round = 0; !atomic_load(&stop); round++) {
        if (round % 8 == 0 && pcw_consumer_refresh(c, NULL) != PCW_OK)
            (*bad)++;
        const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Mixed");
        if (!m) {
            (*bad)++;
            break;
        }
        pcw_collect_report rep = {0};
        pcw_query q = {~0ull, PCW_ANY_INSTANCE_ID, "cb*"};
        if (pcw_consumer_collect(c, m, &q, &s, 0, &rep) != PCW_OK || rep.failed || s.count != 3) {
            (*bad)++;
            continue;
        }
        for (size_t i = 0; i < s.count; i++) {
            uint64_t a = pcw_snapshot_value(&s, i, &m->meta->counters[0]);
            uint64_t b = pcw_snapshot_value(&s, i, &m->meta->counters[1]);
            if (a != 1000 + (pcw_snapshot_id(&s, i) - 1000) * 10 || b != ~a)
                (*bad)++;
        }
        /* All instances: segment ones come and go; never a torn one. */
        if (pcw_consumer_collect(c, m, NULL, &s, 0, &rep) != PCW_OK || rep.failed)
            (*bad)++;
        if (pcw_consumer_enumerate(c, m, NULL, &s, 0, &rep) != PCW_OK || rep.failed)
            (*bad)++;
        if (pcw_consumer_add_counter(c, m, round % 2, NULL, NULL) != PCW_OK)
            (*bad)++;
        else
            added++;
        /* One in three is removed, and, past 1000 left added, every one: a
         * provider keeps at most PCW_CTL_MAX_ADDED (4096) per connection,
         * and a consumer that ran more than about 6,100 rounds in SECONDS
         * (a fast or lightly loaded machine) hit that limit. */
        if (round % 3 == 0 || added > 1000) {
            if (pcw_consumer_remove_counter(c, m, round % 2, NULL, NULL) != PCW_OK)
                (*bad)++;
            else
                added--;
        }
        /* The churning counterset may be there or not; it must not fail
         * in any other way than being gone. */
        const pcw_merged_counterset *m2 = pcw_consumer_find_counterset(c, "Churn");
        if (m2 && pcw_consumer_collect(c, m2, NULL, &s, 0, &rep) != PCW_OK)
            (*bad)++;
        if (m2 && rep.failed && rep.first_error != PCW_E_NOT_FOUND)
            (*bad)++;
    }
    pcw_snapshot_free(&s);
    pcw_consumer_close(c); /* the provider removes what this one added */
    return NULL;
}

static pcw_registration *mixed_reg;

static void *mutator_main(void *arg)
{
    pcw_provider *p = (pcw_provider *)arg;
    pcw_registration *mixed = mixed_reg;
    for (unsigned round = 0; !atomic_load(&stop); round++) {
        pcw_counter_desc c[2];
        pcw_registration_info info = reg_info(c, "Churn");
        pcw_registration *r;
        if (pcw_register(&r, p, &info) == PCW_OK) {
            pcw_instance *in[4] = {0};
            for (int i = 0; i < 4; i++) {
                char name[32];
                snprintf(name, sizeof name, "seg%u-%d", round, i);
                uint64_t v[2] = {7, ~7ull};
                pcw_data d = {v, sizeof v};
                pcw_create_instance(&in[i], mixed, name, 1, &d);
            }
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
            for (int i = 0; i < 4; i++)
                pcw_close_instance(in[i]);
            pcw_unregister(r);
        }
    }
    return NULL;
}

static void consumers_and_registrations_race(void)
{
    CONC_ASSERT(conc_private_dir() != NULL);
    pcw_provider *p;
    pcw_provider_options o = {.control_callback = control};
    CONC_ASSERT(pcw_provider_open(&p, &o) == PCW_OK);
    pcw_counter_desc c[2];
    pcw_registration_info info = reg_info(c, "Mixed");
    pcw_registration *r;
    CONC_ASSERT(pcw_register(&r, p, &info) == PCW_OK);
    mixed_reg = r;

    pthread_t cons[CONSUMERS], mut;
    long bad[CONSUMERS] = {0};
    for (int i = 0; i < CONSUMERS; i++)
        CONC_ASSERT(pthread_create(&cons[i], NULL, consumer_main, &bad[i]) == 0);
    CONC_ASSERT(pthread_create(&mut, NULL, mutator_main, p) == 0);
    struct timespec ts = {(time_t)SECONDS, 0};
    nanosleep(&ts, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_join(cons[i], NULL);
    pthread_join(mut, NULL);
    for (int i = 0; i < CONSUMERS; i++)
        CONC_ASSERT(bad[i] == 0, "consumer %d: %ld bad results", i, bad[i]);
    CONC_ASSERT(atomic_load(&adds) > 0);
    CONC_ASSERT(atomic_load(&controls) > 0);
    /* Closing the provider first stops the channel, which waits for the
     * connection threads: each removed what its consumer left added
     * (while "Mixed" was still registered); then it unregisters. */
    pcw_provider_close(p);
    CONC_ASSERT(atomic_load(&adds) == atomic_load(&removes), "%ld added, %ld removed",
                atomic_load(&adds), atomic_load(&removes));
}

int main(void)
{
    static const conc_test tests[] = {
        {"consumers_and_registrations_race", consumers_and_registrations_race, 120},
    };
    return conc_run("conc_callback", tests, sizeof tests / sizeof tests[0]);
}
