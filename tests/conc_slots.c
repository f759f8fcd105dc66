/* SPDX-License-Identifier: MIT */
/*
 * tests/conc_slots.c - consumers contending for a provider's control
 * channel slots (built and run under TSan too): the listener sheds silent
 * connections (PCW_CTL_SHED_AFTER_MS) while their threads serve requests,
 * end and are reaped, and consumers reconnect and re-add their counters.
 *
 * The provider in this process has 2 slots and sheds after 2 ms of
 * silence; CONSUMERS threads, each with its own pcw_consumer, add and
 * remove a counter and enumerate a callback counterset in a loop, pausing
 * now and then (so that they get shed). Every call must end as served,
 * refused for full slots, or cut by a shed (PCW_E_IO, the documented
 * window) - never anything else; and once every consumer has gone, every
 * counter the provider saw added has been removed (shed connections
 * included).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE           1
#define PCW_CTL_MAX_CONNS     2
#define PCW_CTL_SHED_AFTER_MS 2
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "conctest.h"
#include "pcw/collect.h"
#include "pcw/provider.h"

#define CONSUMERS 6
#define SECONDS   2.0

static atomic_int stop;
static atomic_long adds, removes, served, refused;
static atomic_int last_bad; /* the last unacceptable status, for the report */

static int callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type == PCW_CALLBACK_ADD_COUNTER)
        atomic_fetch_add(&adds, 1);
    if (type == PCW_CALLBACK_REMOVE_COUNTER)
        atomic_fetch_add(&removes, 1);
    if (type != PCW_CALLBACK_ENUMERATE_INSTANCES && type != PCW_CALLBACK_COLLECT_DATA)
        return PCW_OK;
    return pcw_add_instance(info->buffer, "cb", 1, 0, NULL);
}

static int control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)req, (void)info, (void)ctx;
    return PCW_OK;
}

/* Served, refused for full slots, or cut by a shed: nothing else. */
static int acceptable(int status)
{
    if (!(status == PCW_OK || status == PCW_E_CONNECTIONS_FULL || status == PCW_E_IO ||
          status == PCW_E_TIMEOUT))
        atomic_store(&last_bad, status);
    return status == PCW_OK || status == PCW_E_CONNECTIONS_FULL || status == PCW_E_IO ||
           status == PCW_E_TIMEOUT;
}

static void *consumer_main(void *arg)
{
    long *bad = (long *)arg;
    pcw_consumer *c;
    if (pcw_consumer_open(&c, NULL) != PCW_OK || pcw_consumer_refresh(c, NULL) != PCW_OK) {
        (*bad)++;
        return NULL;
    }
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Slots");
    if (!m) {
        (*bad)++;
        pcw_consumer_close(c);
        return NULL;
    }
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (unsigned round = 0; !atomic_load(&stop); round++) {
        int rc = pcw_consumer_add_counter(c, m, 0, NULL, NULL);
        if (!acceptable(rc))
            (*bad)++;
        pcw_collect_report rep = {0};
        if (pcw_consumer_enumerate(c, m, NULL, &s, 0, &rep) != PCW_OK ||
            (rep.failed && !acceptable(rep.first_error)))
            (*bad)++;
        atomic_fetch_add(rep.failed ? &refused : &served, 1);
        /* NOT_FOUND: its ADD was refused or cut, so it was never added. */
        int rr = round % 2 ? pcw_consumer_remove_counter(c, m, 0, NULL, NULL) : PCW_OK;
        if (rr != PCW_E_NOT_FOUND && !acceptable(rr))
            (*bad)++;
        /* Silent for a while now and then: long enough to be shed. */
        if (rand_r(&seed) % 4 == 0)
            usleep(1000 * (useconds_t)(rand_r(&seed) % 8));
    }
    pcw_snapshot_free(&s);
    pcw_consumer_close(c); /* the provider removes what this one added */
    return NULL;
}

static void slots_shed_and_refill(void)
{
    CONC_ASSERT(conc_private_dir() != NULL);
    pcw_provider_options o = {.control_callback = control};
    pcw_provider *p;
    CONC_ASSERT(pcw_provider_open(&p, &o) == PCW_OK);
    pcw_counter_desc cd = pcw_counter_desc_default();
    cd.id = 1, cd.name = "A";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Slots",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &cd,
                                  .callback = callback};
    pcw_registration *r;
    CONC_ASSERT(pcw_register(&r, p, &info) == PCW_OK);
    pthread_t th[CONSUMERS];
    long bad[CONSUMERS] = {0};
    for (int i = 0; i < CONSUMERS; i++)
        CONC_ASSERT(pthread_create(&th[i], NULL, consumer_main, &bad[i]) == 0);
    double until = conc_now_() + SECONDS;
    while (conc_now_() < until)
        usleep(10000); /* the test's length, not a synchronisation */
    atomic_store(&stop, 1);
    long nbad = 0;
    for (int i = 0; i < CONSUMERS; i++) {
        pthread_join(th[i], NULL);
        nbad += bad[i];
    }
    /* Every connection has ended once the channel stops: all removed. */
    pcw_provider_close(p);
    CONC_ASSERT(nbad == 0, "%ld calls ended otherwise than served, refused or cut (last: %s)", nbad,
                pcw_status_str(atomic_load(&last_bad)));
    CONC_ASSERT(atomic_load(&served) > 0, "nobody was served");
    CONC_ASSERT(atomic_load(&adds) == atomic_load(&removes), "%ld added, %ld removed",
                atomic_load(&adds), atomic_load(&removes));
    printf("  %ld served, %ld refused, %ld added and removed\n", atomic_load(&served),
           atomic_load(&refused), atomic_load(&adds));
}

int main(void)
{
    static const conc_test tests[] = {
        {"slots_shed_and_refill", slots_shed_and_refill, 120},
    };
    return conc_run("conc_slots", tests, sizeof tests / sizeof tests[0]);
}
