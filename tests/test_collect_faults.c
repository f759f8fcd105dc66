/*
 * tests/test_collect_faults.c - a consumer's collection against providers
 * whose control channel is missing, refusing or hostile: it must neither
 * crash, overrun its time limit, nor report a live provider as exited.
 *
 * Providers run in the test process (the segment's pid is then ours, so a
 * socket the test binds in the provider's place passes the consumer's
 * SO_PEERCRED check) or as helper processes.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "testutil.h"

TestSuite(collect_faults, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* ---- an in-process provider ---------------------------------------------- */

static atomic_int starts, ends;

static int count_control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)info, (void)ctx;
    if (req == PCW_CONTROL_COLLECT_START)
        atomic_fetch_add(&starts, 1);
    if (req == PCW_CONTROL_COLLECT_END)
        atomic_fetch_add(&ends, 1);
    return PCW_OK;
}

static int one_instance(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    uint64_t v = 5;
    pcw_data d = {&v, sizeof v};
    return pcw_add_instance(info->buffer, "cb", 1, type == PCW_CALLBACK_COLLECT_DATA, &d);
}

typedef struct env {
    pcw_provider *prov;
    pcw_registration *seg_reg; /* "Segment Set": one instance in the segment */
    pcw_registration *cb_reg;  /* "Callback Set", or NULL */
    pcw_instance *inst;
    char sock[PATH_MAX];
} env;

static void env_open(env *e, int control, int callback_set)
{
    memset(e, 0, sizeof *e);
    atomic_store(&starts, 0);
    atomic_store(&ends, 0);
    pcw_provider_options o = {.control_callback = control ? count_control : NULL};
    cr_assert_eq(pcw_provider_open(&e->prov, &o), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Segment Set",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    cr_assert_eq(pcw_register(&e->seg_reg, e->prov, &info), PCW_OK);
    uint64_t v = 9;
    pcw_data d = {&v, sizeof v};
    cr_assert_eq(pcw_create_instance(&e->inst, e->seg_reg, "seg", 1, &d), PCW_OK);
    if (callback_set) {
        info.name = "Callback Set";
        info.callback = one_instance;
        cr_assert_eq(pcw_register(&e->cb_reg, e->prov, &info), PCW_OK);
    }
    snprintf(e->sock, sizeof e->sock, "%s", pcw_provider_path(e->prov));
    strcpy(e->sock + strlen(e->sock) - strlen(PCW_SEG_SUFFIX), PCW_SOCK_SUFFIX);
}

static void env_close(env *e)
{
    pcw_provider_close(e->prov);
}

/* ---- item 1: the segment says "control socket", none is there ------------ */

/* pcw_provider_close removes the socket before the segment: a consumer
 * collecting meanwhile finds the flag and no socket. It must read the
 * segment (nobody is left to bracket the read) and not crash: on 9ef2b5d
 * finish() sent COLLECT_END through the connection send_all had dropped. */
Test(collect_faults, control_flag_without_socket)
{
    env e;
    env_open(&e, 1, 1);
    cr_assert_eq(unlink(e.sock), 0);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Segment Set");
    cr_assert(m);
    cr_assert(pcw_segment_provider(pcw_consumer_segment(c, 0))->flags & PCW_SEG_F_CONTROL);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0, "status %d", rep.first_error);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(pcw_sample_value(&s, &s.samples[0], &m->meta->counters[0]), 9);

    /* One segment, directly (pcwdump's path). */
    pcw_segment *seg = pcw_consumer_segment(c, 0);
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, "Segment Set");
    cr_assert_eq(pcw_segment_collect(seg, cs, NULL, &s, 0, 0, 500, NULL), PCW_OK);
    cr_assert_eq(s.count, 1);

    /* A callback counterset has nobody to ask: its part fails, cleanly. */
    m = pcw_consumer_find_counterset(c, "Callback Set");
    cr_assert(m);
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 1);
    cr_assert_eq(rep.first_error, PCW_E_NOT_FOUND);
    cr_assert_eq(s.count, 0);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    env_close(&e);
}
