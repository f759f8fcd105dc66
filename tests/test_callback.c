/* SPDX-License-Identifier: MIT */
/*
 * tests/test_callback.c - callback countersets (PCW_CALLBACK,
 * pcw_add_instance), masks, control notifications (PERFLIB ControlCallback),
 * the time limit, and the Geometric Waves callback example, end to end
 * through the consumer library.
 *
 * Most tests run the provider in the test process (its control threads
 * serve the consumer in the same process, over the real socket); the
 * killed-consumer test forks a consumer; the time-limit tests and the
 * example run providers as separate programs.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdatomic.h>

#include "pcw/collect.h"
#include "pcw/provider.h"
#include "testutil.h"

TestSuite(callback, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* ---- an in-process provider with a recording callback ------------------- */

typedef struct rec {
    atomic_int calls[4]; /* per pcw_callback_type */
    atomic_int last_counter_index;
    atomic_int ignore_masks; /* unused: the callback always ignores them */
    atomic_int bad_mode;     /* 1: try invalid pcw_add_instance calls */
    atomic_int results[16];
    atomic_int return_status; /* what the callback returns */
    /* control callback */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char log[4096];
    int control_fail[6]; /* per pcw_control_request: status to return */
    int control_counts[6];
} rec;

static rec R;

static void rec_init(void)
{
    memset(&R, 0, sizeof R);
    pthread_mutex_init(&R.lock, NULL);
    pthread_cond_init(&R.cond, NULL);
}

static void rec_log(const char *s)
{
    pthread_mutex_lock(&R.lock);
    size_t n = strlen(R.log);
    snprintf(R.log + n, sizeof R.log - n, "%s ", s);
    pthread_cond_broadcast(&R.cond);
    pthread_mutex_unlock(&R.lock);
}

typedef struct wave {
    uint64_t a, b;
} wave;

static const char *const names[3] = {"Small Wave", "Medium Wave", "Large Wave"};

static int rec_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    atomic_fetch_add(&R.calls[type], 1);
    if (type == PCW_CALLBACK_ADD_COUNTER || type == PCW_CALLBACK_REMOVE_COUNTER) {
        atomic_store(&R.last_counter_index, (int)info->counter_index);
        rec_log(type == PCW_CALLBACK_ADD_COUNTER ? "cb-add" : "cb-remove");
        return PCW_OK;
    }
    rec_log(type == PCW_CALLBACK_COLLECT_DATA ? "cb-collect" : "cb-enum");
    if (atomic_load(&R.bad_mode)) {
        wave w = {1, 2};
        pcw_data ok = {&w, sizeof w}, small = {&w, 12}, two[2] = {ok, ok};
        char longname[1100];
        memset(longname, 'x', 1025);
        longname[1025] = 0;
        int k = 0;
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "a", 1, 1, &small));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "", 2, 1, &ok));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "b", 0xFFFFFFFEu, 1, &ok));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "b", 0xFFFFFFFFu, 1, &ok));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "dup", 3, 1, &ok));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "DUP", 4, 1, &ok));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "c", 5, 2, two));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, longname, 6, 1, &ok));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "\xC3\x28", 7, 1, &ok));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "c", 0xFFFFFFFDu, 0, NULL));
        atomic_store(&R.results[k++], pcw_add_instance(NULL, "d", 8, 0, NULL));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, NULL, 8, 0, NULL));
        atomic_store(&R.results[k++], pcw_add_instance(info->buffer, "e", 9, 1, NULL));
        return atomic_load(&R.return_status);
    }
    /* Ignores every mask on purpose: the library must apply them. */
    for (uint32_t i = 0; i < 3; i++) {
        wave w = {100 * (i + 1), 1000 + i};
        pcw_data d = {&w, sizeof w};
        int rc = type == PCW_CALLBACK_COLLECT_DATA
                     ? pcw_add_instance(info->buffer, names[i], 10 + i, 1, &d)
                     : pcw_add_instance(info->buffer, names[i], 10 + i, 0, NULL);
        cr_assert_eq(rc, PCW_OK);
    }
    return atomic_load(&R.return_status);
}

static const char *const req_names[6] = {"?", "add", "remove", "enum", "start", "end"};

static int rec_control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)ctx;
    char s[128];
    snprintf(s, sizeof s, "%s", req_names[req]);
    if (req == PCW_CONTROL_ADD_COUNTER || req == PCW_CONTROL_REMOVE_COUNTER)
        snprintf(s, sizeof s, "%s:%u", req_names[req], info->counter_id);
    cr_assert_eq(info->pid, getpid() == info->pid ? getpid() : info->pid);
    cr_assert_eq(info->uid, geteuid());
    cr_assert(info->counterset && info->instance);
    rec_log(s);
    pthread_mutex_lock(&R.lock);
    R.control_counts[req]++;
    int rc = R.control_fail[req];
    pthread_mutex_unlock(&R.lock);
    return rc;
}

typedef struct env {
    pcw_provider *prov;
    pcw_registration *reg;
    pcw_consumer *cons;
    const pcw_merged_counterset *m;
} env;

static pcw_registration_info wave_info(pcw_counter_desc *c, pcw_callback cb)
{
    c[0] = pcw_counter_desc_default(), c[1] = pcw_counter_desc_default();
    c[0].id = 7, c[0].name = "A", c[0].offset = 0;
    c[1].id = 9, c[1].name = "B", c[1].offset = 8;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Waves",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 2,
                                  .counters = c,
                                  .callback = cb};
    return info;
}

static void env_open(env *e, int with_control, pcw_callback cb)
{
    rec_init();
    pcw_provider_options o = {0};
    if (with_control)
        o.control_callback = rec_control;
    cr_assert_eq(pcw_provider_open(&e->prov, &o), PCW_OK);
    pcw_counter_desc c[2];
    pcw_registration_info info = wave_info(c, cb);
    cr_assert_eq(pcw_register(&e->reg, e->prov, &info), PCW_OK);
    cr_assert_eq(pcw_consumer_open(&e->cons, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(e->cons, NULL), PCW_OK);
    e->m = pcw_consumer_find_counterset(e->cons, "waves");
    cr_assert(e->m);
}

static void env_close(env *e)
{
    pcw_consumer_close(e->cons);
    pcw_unregister(e->reg);
    pcw_provider_close(e->prov);
}

static size_t find(const pcw_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(pcw_snapshot_name(s, i), name) == 0)
            return i;
    return SIZE_MAX;
}

static uint64_t val(const pcw_snapshot *s, size_t x, const env *e, int counter)
{
    return pcw_snapshot_value(s, x, &e->m->meta->counters[counter]);
}

/* ---- tests ----------------------------------------------------------------- */

Test(callback, every_request_type)
{
    env e;
    env_open(&e, 0, rec_callback);
    cr_assert(e.m->meta->flags & PCW_CSET_F_CALLBACK);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};

    cr_assert_eq(pcw_consumer_enumerate(e.cons, e.m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0);
    cr_assert_eq(s.count, 3);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_ENUMERATE_INSTANCES]), 1);
    size_t x = find(&s, "Medium Wave");
    cr_assert_neq(x, SIZE_MAX);
    cr_assert_eq(pcw_snapshot_id(&s, x), 11);
    cr_assert_eq(val(&s, x, &e, 0), 0, "enumeration carries no values");

    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0);
    cr_assert_eq(s.count, 3);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_COLLECT_DATA]), 1);
    x = find(&s, "Large Wave");
    cr_assert_neq(x, SIZE_MAX);
    cr_assert_eq(pcw_snapshot_id(&s, x), 12);
    cr_assert_eq(val(&s, x, &e, 0), 300);
    cr_assert_eq(val(&s, x, &e, 1), 1002);

    cr_assert_eq(pcw_consumer_add_counter(e.cons, e.m, 1, NULL, NULL), PCW_OK);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_ADD_COUNTER]), 1);
    cr_assert_eq(atomic_load(&R.last_counter_index), 1);
    cr_assert_eq(pcw_consumer_remove_counter(e.cons, e.m, 1, NULL, NULL), PCW_OK);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_REMOVE_COUNTER]), 1);
    /* Not added (any more): nothing to tell, and the consumer hears so. */
    cr_assert_eq(pcw_consumer_remove_counter(e.cons, e.m, 1, NULL, NULL), PCW_E_NOT_FOUND);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_REMOVE_COUNTER]), 1);
    cr_assert_eq(pcw_consumer_add_counter(e.cons, e.m, 2, NULL, NULL), PCW_E_INVALID_PARAMETER);

    /* The single-segment call gives the same. */
    pcw_segment *seg = pcw_consumer_segment(e.cons, e.m->source_segment[0]);
    cr_assert_eq(pcw_segment_collect(seg, e.m->source_cset[0], NULL, &s, 0, 0, 1000, NULL), PCW_OK);
    cr_assert_eq(s.count, 3);
    pcw_snapshot_free(&s);
    env_close(&e);
}

Test(callback, masks_apply_when_the_callback_ignores_them)
{
    env e;
    env_open(&e, 0, rec_callback);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;

    pcw_query q = {1, PCW_ANY_INSTANCE_ID, "*"}; /* counter A only */
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 3);
    for (size_t i = 0; i < s.count; i++) {
        cr_assert_neq(val(&s, i, &e, 0), 0);
        cr_assert_eq(val(&s, i, &e, 1), 0, "counter B was not asked for");
    }
    q = (pcw_query){~0ull, 11, "*"};
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 1);
    cr_assert_str_eq(pcw_snapshot_name(&s, 0), "Medium Wave");
    cr_assert_eq(val(&s, 0, &e, 1), 1001);

    struct {
        const char *mask;
        size_t n;
    } cases[] = {{"*large*", 1}, {"s?ALL WAVE", 1}, {"*Wave", 3}, {"*e*e*", 2},
                 {"nothing", 0}, {"", 0},           {"**", 3},    {"?????? Wave", 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        q = (pcw_query){~0ull, PCW_ANY_INSTANCE_ID, cases[k].mask};
        cr_assert_eq(pcw_consumer_collect(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
        cr_assert_eq(s.count, cases[k].n, "mask \"%s\": %zu instances", cases[k].mask, s.count);
        cr_assert_eq(pcw_consumer_enumerate(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
        cr_assert_eq(s.count, cases[k].n, "enumerate \"%s\"", cases[k].mask);
    }
    /* Everything at once: id and name must both match. */
    q = (pcw_query){2, 12, "*wave"};
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 1);
    cr_assert_eq(val(&s, 0, &e, 0), 0);
    cr_assert_eq(val(&s, 0, &e, 1), 1002);
    q = (pcw_query){~0ull, 12, "small*"};
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 0);
    pcw_snapshot_free(&s);
    env_close(&e);
}

Test(callback, add_instance_validation_and_informational_status)
{
    env e;
    env_open(&e, 0, rec_callback);
    atomic_store(&R.bad_mode, 1);
    atomic_store(&R.return_status, PCW_E_IO); /* informational only */
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    int st[1], cb[1];
    pcw_collect_report rep = {.source_status = st, .callback_status = cb};
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, NULL, &s, 0, &rep), PCW_OK);
    int expect[] = {PCW_E_BUFFER_TOO_SMALL,
                    PCW_E_INVALID_NAME,
                    PCW_E_INVALID_PARAMETER,
                    PCW_E_INVALID_PARAMETER,
                    PCW_OK,
                    PCW_OK, /* "DUP": a duplicate is dropped, not an error */
                    PCW_E_INVALID_COUNT,
                    PCW_E_NAME_TOO_LONG,
                    PCW_E_INVALID_NAME,
                    PCW_OK,
                    PCW_E_INVALID_PARAMETER,
                    PCW_E_INVALID_PARAMETER,
                    PCW_E_INVALID_COUNT};
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        cr_assert_eq(atomic_load(&R.results[i]), expect[i], "call %zu: %d", i,
                     atomic_load(&R.results[i]));
    /* The request proceeded despite the callback's error: the two valid
     * instances arrived, and the status was passed along as information. */
    cr_assert_eq(st[0], PCW_OK);
    cr_assert_eq(cb[0], PCW_E_IO);
    cr_assert_eq(s.count, 2);
    size_t x = find(&s, "dup");
    cr_assert_neq(x, SIZE_MAX);
    cr_assert_eq(val(&s, x, &e, 0), 1);
    cr_assert_eq(val(&s, x, &e, 1), 2);
    x = find(&s, "c");
    cr_assert_neq(x, SIZE_MAX);
    cr_assert_eq(pcw_snapshot_id(&s, x), 0xFFFFFFFDu);
    cr_assert_eq(val(&s, x, &e, 0), 0, "no data: zeros");
    pcw_snapshot_free(&s);
    env_close(&e);
}

Test(callback, control_notifications_and_bracketing)
{
    env e;
    env_open(&e, 1, rec_callback);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert(pcw_segment_provider(pcw_consumer_segment(e.cons, 0))->flags & PCW_SEG_F_CONTROL);
    cr_assert_eq(pcw_consumer_add_counter(e.cons, e.m, 1, NULL, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_enumerate(e.cons, e.m, NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 3);
    cr_assert_eq(pcw_consumer_remove_counter(e.cons, e.m, 1, NULL, NULL), PCW_OK);
    /* COLLECT_END is not awaited by the consumer: wait for it here. */
    pthread_mutex_lock(&R.lock);
    while (!strstr(R.log, "remove:9"))
        pthread_cond_wait(&R.cond, &R.lock);
    pthread_mutex_unlock(&R.lock);
    cr_assert_str_eq(R.log, "add:9 cb-add enum cb-enum start cb-collect end cb-remove remove:9 ");

    /* Errors of ADD_COUNTER, ENUM_INSTANCES and COLLECT_START reach the
     * consumer; REMOVE_COUNTER and COLLECT_END errors are ignored. */
    pthread_mutex_lock(&R.lock);
    R.control_fail[PCW_CONTROL_ADD_COUNTER] = PCW_E_BUSY;
    R.control_fail[PCW_CONTROL_ENUM_INSTANCES] = PCW_E_NOT_FOUND;
    R.control_fail[PCW_CONTROL_COLLECT_START] = PCW_E_PERMISSION;
    R.control_fail[PCW_CONTROL_REMOVE_COUNTER] = PCW_E_IO;
    R.control_fail[PCW_CONTROL_COLLECT_END] = PCW_E_IO;
    pthread_mutex_unlock(&R.lock);
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_add_counter(e.cons, e.m, 0, NULL, &rep), PCW_E_BUSY);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_ADD_COUNTER]), 1, "refused: not added");
    cr_assert_eq(pcw_consumer_enumerate(e.cons, e.m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 1);
    cr_assert_eq(rep.first_error, PCW_E_NOT_FOUND);
    cr_assert_eq(s.count, 0);
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.first_error, PCW_E_PERMISSION);
    cr_assert_eq(s.count, 0);
    pthread_mutex_lock(&R.lock);
    R.control_fail[PCW_CONTROL_COLLECT_START] = 0;
    R.control_fail[PCW_CONTROL_ADD_COUNTER] = 0;
    pthread_mutex_unlock(&R.lock);
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0, "COLLECT_END's error is ignored");
    cr_assert_eq(s.count, 3);
    cr_assert_eq(pcw_consumer_add_counter(e.cons, e.m, 0, NULL, &rep), PCW_OK);
    cr_assert_eq(pcw_consumer_remove_counter(e.cons, e.m, 0, NULL, &rep), PCW_OK,
                 "REMOVE_COUNTER's error is ignored");
    pcw_snapshot_free(&s);
    env_close(&e);
}

/* Segment-only counterset with a control callback: START freezes the value
 * at "consistent", END lets it move on; the consumer must read between. */
static pcw_instance *bracket_inst;
static int bracket_control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)info, (void)ctx;
    uint64_t *v = pcw_instance_block(bracket_inst, 0);
    if (req == PCW_CONTROL_COLLECT_START) {
        pcw_u64_set(&v[0], 42), pcw_u64_set(&v[1], 42);
        rec_log("start");
    } else if (req == PCW_CONTROL_COLLECT_END) {
        pcw_u64_set(&v[0], 7), pcw_u64_set(&v[1], 8);
        rec_log("end");
    }
    return PCW_OK;
}

Test(callback, collect_start_and_end_bracket_the_segment_read)
{
    rec_init();
    pcw_provider *p;
    pcw_registration *r;
    pcw_provider_options o = {.control_callback = bracket_control};
    cr_assert_eq(pcw_provider_open(&p, &o), PCW_OK);
    pcw_counter_desc c[2];
    pcw_registration_info info = wave_info(c, NULL);
    cr_assert_eq(pcw_register(&r, p, &info), PCW_OK);
    wave w0 = {1, 2};
    pcw_data d = {&w0, sizeof w0};
    cr_assert_eq(pcw_create_instance(&bracket_inst, r, "seg", 1, &d), PCW_OK);
    pcw_consumer *cons;
    cr_assert_eq(pcw_consumer_open(&cons, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(cons, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(cons, "Waves");
    cr_assert(m);
    cr_assert_eq(m->meta->flags & PCW_CSET_F_CALLBACK, 0);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    for (int round = 0; round < 3; round++) {
        pcw_collect_report rep = {0};
        cr_assert_eq(pcw_consumer_collect(cons, m, NULL, &s, 0, &rep), PCW_OK);
        cr_assert_eq(rep.failed, 0);
        cr_assert_eq(s.count, 1);
        cr_assert_eq(pcw_snapshot_value(&s, 0, &m->meta->counters[0]), 42);
        cr_assert_eq(pcw_snapshot_value(&s, 0, &m->meta->counters[1]), 42);
        pthread_mutex_lock(&R.lock);
        while (strlen(R.log) < (size_t)(round + 1) * 10)
            pthread_cond_wait(&R.cond, &R.lock);
        pthread_mutex_unlock(&R.lock);
    }
    cr_assert_str_eq(R.log, "start end start end start end ");
    pcw_snapshot_free(&s);
    pcw_consumer_close(cons);
    pcw_close_instance(bracket_inst);
    pcw_unregister(r);
    pcw_provider_close(p);
}

/* Mixed model: segment instances plus callback instances, one call. */
Test(callback, mixed_model)
{
    env e;
    env_open(&e, 0, rec_callback);
    pcw_instance *in;
    wave w0 = {5, 6};
    pcw_data d = {&w0, sizeof w0};
    cr_assert_eq(pcw_create_instance(&in, e.reg, "Segment Wave", 1, &d), PCW_OK);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 4);
    size_t x = find(&s, "Segment Wave");
    cr_assert_neq(x, SIZE_MAX);
    cr_assert_eq(val(&s, x, &e, 1), 6);
    pcw_query q = {~0ull, PCW_ANY_INSTANCE_ID, "seg*"};
    cr_assert_eq(pcw_consumer_collect(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 1);
    q = (pcw_query){2, PCW_ANY_INSTANCE_ID, "*"};
    cr_assert_eq(pcw_consumer_enumerate(e.cons, e.m, &q, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 4);
    x = find(&s, "Segment Wave");
    cr_assert_eq(val(&s, x, &e, 1), 0, "enumeration: no values");
    pcw_close_instance(in);
    pcw_snapshot_free(&s);
    env_close(&e);
}

/* A consumer process that dies holding added counters: the provider is told
 * REMOVE_COUNTER for each, through both callbacks. */
Test(callback, killed_consumer_counters_are_removed)
{
    env e;
    env_open(&e, 1, rec_callback);
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        pcw_consumer *c;
        int ok = pcw_consumer_open(&c, NULL) == PCW_OK && pcw_consumer_refresh(c, NULL) == PCW_OK;
        const pcw_merged_counterset *m = ok ? pcw_consumer_find_counterset(c, "Waves") : NULL;
        ok = m && pcw_consumer_add_counter(c, m, 0, NULL, NULL) == PCW_OK &&
             pcw_consumer_add_counter(c, m, 1, NULL, NULL) == PCW_OK;
        char b = ok ? 'y' : 'n';
        if (write(pfd[1], &b, 1) != 1)
            _exit(2);
        for (;;)
            pause();
    }
    close(pfd[1]);
    char b = 0;
    cr_assert_eq(read(pfd[0], &b, 1), 1);
    cr_assert_eq(b, 'y');
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_ADD_COUNTER]), 2);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_REMOVE_COUNTER]), 0);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&R.lock);
    while (R.control_counts[PCW_CONTROL_REMOVE_COUNTER] < 2)
        if (pthread_cond_timedwait(&R.cond, &R.lock, &until) != 0)
            break;
    int removed = R.control_counts[PCW_CONTROL_REMOVE_COUNTER];
    pthread_mutex_unlock(&R.lock);
    cr_assert_eq(removed, 2);
    cr_assert_eq(atomic_load(&R.calls[PCW_CALLBACK_REMOVE_COUNTER]), 2);
    cr_assert(strstr(R.log, "remove:7") && strstr(R.log, "remove:9"), "%s", R.log);
    close(pfd[0]);
    env_close(&e);
}

/* ---- other processes --------------------------------------------------------- */

static void spawn_cb(tu_child *c, const char *prefix, const char *base, const char *sleep_ms,
                     const char *mode)
{
    const char *args[] = {prefix, base, sleep_ms, mode, NULL};
    cr_assert_eq(tu_spawn(c, "callback_provider", args), 0);
    char line[PATH_MAX + 16];
    cr_assert_geq(tu_readline(c, line, sizeof line, 10000), 0);
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
}

Test(callback, hanging_callback_costs_only_the_time_limit)
{
    tu_child hang, good;
    spawn_cb(&hang, "hang", "100", "10000", NULL);
    spawn_cb(&good, "good", "200", "0", NULL);
    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Callback Test");
    cr_assert(m);
    cr_assert_eq(m->source_count, 2);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    int st[2];
    pcw_collect_report rep = {.source_status = st};
    for (int round = 0; round < 2; round++) {
        long long t0 = tu_now_ms();
        cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
        long long took = tu_now_ms() - t0;
        cr_assert(took >= 900 && took < 1800, "took %lld ms", took);
        cr_assert_eq(rep.failed, 1);
        cr_assert_eq(rep.timed_out, 1);
        cr_assert_eq(rep.first_error, PCW_E_TIMEOUT);
        cr_assert_eq(s.count, 3, "the answering provider's data arrives");
        for (size_t i = 0; i < s.count; i++)
            cr_assert(strncmp(pcw_snapshot_name(&s, i), "good-", 5) == 0);
    }
    /* A shorter limit, per consumer. */
    pcw_consumer_set_timeout(c, 300);
    long long t0 = tu_now_ms();
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_lt(tu_now_ms() - t0, 900);
    cr_assert_eq(rep.timed_out, 1);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    /* The stuck provider still exits promptly once asked. */
    cr_assert_eq(tu_finish(&hang, 5000), 0);
    cr_assert_eq(tu_finish(&good, 5000), 0);
}

Test(callback, late_answer_is_discarded)
{
    tu_child slow;
    spawn_cb(&slow, "slow", "0", "1500", "first");
    pcw_consumer *c;
    pcw_consumer_options o = {.timeout_ms = 500};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Callback Test");
    cr_assert(m);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    pcw_collect_report rep = {0};
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.timed_out, 1);
    cr_assert_eq(s.count, 0);
    /* The first answer (B = 1) arrives late and must not be taken for the
     * second (B = 2). */
    pcw_consumer_set_timeout(c, 5000);
    cr_assert_eq(pcw_consumer_collect(c, m, NULL, &s, 0, &rep), PCW_OK);
    cr_assert_eq(rep.failed, 0);
    cr_assert_eq(s.count, 3);
    for (size_t i = 0; i < s.count; i++)
        cr_assert_eq(pcw_snapshot_value(&s, i, &m->meta->counters[1]), 2);
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    cr_assert_eq(tu_finish(&slow, 5000), 0);
}

/* The ported KCS sample, read through the library with each mask. */
Test(callback, geometric_waves_callback_example)
{
    const char *build = getenv("PCW_BUILD");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/examples/geometric_waves_callback",
             build && *build ? build : PCW_BUILD_DIR);
    tu_child ex;
    memset(&ex, 0, sizeof ex);
    int pin[2], pout[2];
    cr_assert_eq(pipe2(pin, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(pout, O_CLOEXEC), 0);
    ex.pid = fork();
    if (ex.pid == 0) {
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        execl(path, path, "60", (char *)NULL);
        _exit(127);
    }
    close(pin[0]), close(pout[1]);
    ex.in = pin[1], ex.out = pout[0];
    char line[PATH_MAX + 64];
    cr_assert_geq(tu_readline(&ex, line, sizeof line, 10000), 0);
    cr_assert(strstr(line, "publishing in"), "%s", line);

    pcw_consumer *c;
    cr_assert_eq(pcw_consumer_open(&c, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    const pcw_merged_counterset *m = pcw_consumer_find_counterset(c, "Geometric Waves");
    cr_assert(m);
    cr_assert(m->meta->flags & PCW_CSET_F_CALLBACK);
    pcw_snapshot s = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_consumer_enumerate(c, m, NULL, &s, 0, NULL), PCW_OK);
    cr_assert_eq(s.count, 3);
    static const struct {
        const char *name;
        uint32_t id, min, amp;
    } w[] = {{"Small Wave", 0, 40, 20}, {"Medium Wave", 1, 30, 40}, {"Large Wave", 2, 20, 60}};
    struct {
        pcw_query q;
        size_t n;
    } cases[] = {
        {{~0ull, PCW_ANY_INSTANCE_ID, "*"}, 3},  {{1, PCW_ANY_INSTANCE_ID, "*"}, 3},
        {{2, PCW_ANY_INSTANCE_ID, "*"}, 3},      {{~0ull, 1, "*"}, 1},
        {{~0ull, PCW_ANY_INSTANCE_ID, "l*"}, 1}, {{~0ull, PCW_ANY_INSTANCE_ID, "*WAVE"}, 3}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint32_t before = (uint32_t)(time(NULL) % 10);
        cr_assert_eq(pcw_consumer_collect(c, m, &cases[k].q, &s, 0, NULL), PCW_OK);
        uint32_t after = (uint32_t)(time(NULL) % 10);
        cr_assert_eq(s.count, cases[k].n, "case %zu", k);
        for (size_t i = 0; i < s.count; i++) {
            size_t x = i;
            uint32_t id = pcw_snapshot_id(&s, x);
            cr_assert_lt(id, 3);
            cr_assert_str_eq(pcw_snapshot_name(&s, x), w[id].name);
            uint64_t tri = pcw_snapshot_value(&s, x, &m->meta->counters[0]);
            uint64_t sq = pcw_snapshot_value(&s, x, &m->meta->counters[1]);
            int okk = 0;
            for (uint32_t idx = before;; idx = (idx + 1) % 10) {
                uint32_t t = w[id].min + w[id].amp * (uint32_t)abs(5 - (int)idx) / 5;
                uint32_t q2 = w[id].min + w[id].amp * (idx < 5);
                okk |= ((cases[k].q.counter_mask & 1) ? tri == t : tri == 0) &&
                       ((cases[k].q.counter_mask & 2) ? sq == q2 : sq == 0);
                if (idx == after)
                    break;
            }
            cr_assert(okk, "case %zu: %s: %lu %lu", k, w[id].name, (unsigned long)tri,
                      (unsigned long)sq);
        }
    }
    pcw_snapshot_free(&s);
    pcw_consumer_close(c);
    kill(ex.pid, SIGTERM);
    cr_assert_eq(tu_finish(&ex, 5000), 0);
}
