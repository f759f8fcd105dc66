/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/fidelity_provider.c - a provider written the way a ported
 * Windows (KCS-style) provider is, for tests/test_fidelity.c (issue 13:
 * fidelity to PCW and PERFLIB, the provider's side).
 *
 *   fidelity_provider
 *
 * Registers (all multi-instance unless said otherwise):
 *   - "Id Mask Set": a callback counterset whose counters have the ids 2,
 *     5, 9 and 70 (C2, C5, C9, C70: u64 at 0, 8, 16, 24). Its callback
 *     is KCS-style: it fills only the counters whose id bit is set in
 *     the mask it is given (bit 63 for id 70: pcw_counter_mask_has), and
 *     adds "a" (values 2, 5, 9, 70 times 1) and "b" (times 10).
 *     ADD/REMOVE_COUNTER record the mask they were given.
 *   - "Single Set" (single-instance) and "Id Mask Set" record the
 *     collect_multiple their COLLECT_DATA saw (single_multi, multi_multi).
 *   - "Cancel Poll Set" / "Cancel Wait Set": a COLLECT_DATA that runs
 *     until cancelled (at most 30 s), polling pcw_cancelled(),
 *     resp. waiting in pcw_cancel_wait(); counts the callbacks
 *     begun (cancel_begun) and those that saw the cancel (cancel_seen).
 *   - "Slow Start Set", "Slow Add Set", "Denied Set": segment
 *     countersets (counter V, one instance "i"). The control callback
 *     blocks COLLECT_START of Slow Start Set until "release-start" and
 *     ADD_COUNTER of Slow Add Set until "release-add" (each at most 30 s),
 *     counts them (starts, ends, adds, removes: of those sets only), and
 *     refuses ADD_COUNTER and COLLECT_START of Denied Set with the Win32
 *     code 5 (ERROR_ACCESS_DENIED).
 *   - "Dup Set": a KCS-style callback (returns on the first error) that
 *     adds "x", "X" and "y"; dup_rc is what pcw_add_instance said to "X".
 * Prints "ready <segment path>" once published. Commands on stdin, one a
 * line: "stats" prints "stats KEY=VALUE ..." (values in hexadecimal),
 * "release-start", "release-add"; runs until stdin closes.
 */

/* The collection-hold limit is the provider's last resort; a long one
 * here shows that COLLECT_END comes from the protocol, not from it. */
#define PCW_CTL_HOLD_TIMEOUT_MS 600000
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Atomic uint64_t collect_mask, add_mask, remove_mask;
static atomic_int single_multi = -1, multi_multi = -1;
static atomic_int cancel_begun, cancel_seen, starts, ends, adds, removes, dup_rc = 1;

/* Gates the control callback waits at (at most 30 s). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int start_open, add_open; /* under lock */

static void wait_gate(int *gate)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&lock);
    while (!*gate)
        if (pthread_cond_timedwait(&cond, &lock, &until) != 0)
            break;
    pthread_mutex_unlock(&lock);
}

static void open_gate(int *gate)
{
    pthread_mutex_lock(&lock);
    *gate = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

/* ---- item 1: a KCS-style callback that honours id masks ---------------- */

typedef struct idvals {
    uint64_t c2, c5, c9, c70;
} idvals;

static int add_idvals(pcw_buffer *b, const char *name, uint32_t id, uint64_t mask, uint64_t k)
{
    idvals v;
    memset(&v, 0, sizeof v);
    /* As a Windows callback does: CounterMask bit x = counter id x. */
    if (mask & (1ull << 2))
        v.c2 = 2 * k;
    if (mask & (1ull << 5))
        v.c5 = 5 * k;
    if (mask & (1ull << 9))
        v.c9 = 9 * k;
    if (pcw_counter_mask_has(mask, 70))
        v.c70 = 70 * k;
    pcw_data d = {&v, sizeof v};
    return pcw_add_instance(b, name, id, 1, &d);
}

static int idmask_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    int rc;
    switch (type) {
    case PCW_CALLBACK_ADD_COUNTER:
        atomic_store(&add_mask, info->counter_mask);
        return PCW_OK;
    case PCW_CALLBACK_REMOVE_COUNTER:
        atomic_store(&remove_mask, info->counter_mask);
        return PCW_OK;
    case PCW_CALLBACK_ENUMERATE_INSTANCES:
        if ((rc = pcw_add_instance(info->buffer, "a", 1, 0, NULL)) != PCW_OK)
            return rc;
        return pcw_add_instance(info->buffer, "b", 2, 0, NULL);
    case PCW_CALLBACK_COLLECT_DATA:
        atomic_store(&collect_mask, info->counter_mask);
        atomic_store(&multi_multi, info->collect_multiple);
        if ((rc = add_idvals(info->buffer, "a", 1, info->counter_mask, 1)) != PCW_OK)
            return rc;
        return add_idvals(info->buffer, "b", 2, info->counter_mask, 10);
    }
    return PCW_OK;
}

static int reg_idmask(pcw_provider *p)
{
    static const uint32_t ids[4] = {2, 5, 9, 70};
    static const char *const names[4] = {"C2", "C5", "C9", "C70"};
    pcw_counter_desc c[4];
    for (int i = 0; i < 4; i++) {
        c[i] = pcw_counter_desc_default();
        c[i].id = ids[i], c[i].name = names[i], c[i].offset = 8u * (uint32_t)i;
    }
    pcw_registration_info info = {.version = PCW_CURRENT_VERSION,
                                  .name = "Id Mask Set",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 4,
                                  .counters = c,
                                  .callback = idmask_callback};
    pcw_registration *r;
    return pcw_register(&r, p, &info);
}

/* ---- item 2: collect_multiple and the cancel signal ------------------- */

static int single_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    if (type == PCW_CALLBACK_COLLECT_DATA)
        atomic_store(&single_multi, info->collect_multiple);
    uint64_t v = 1;
    pcw_data d = {&v, sizeof v};
    return pcw_add_instance(info->buffer, "", 0, 1, &d);
}

static int cancel_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    if (type != PCW_CALLBACK_COLLECT_DATA)
        return PCW_OK;
    atomic_fetch_add(&cancel_begun, 1);
    int seen = 0;
    if (ctx) { /* Cancel Wait Set */
        seen = pcw_cancel_wait(info->cancel, 30000);
    } else { /* Cancel Poll Set: a slow loop that looks now and then */
        for (int i = 0; i < 30000 && !(seen = pcw_cancelled(info->cancel)); i++) {
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (seen)
        atomic_fetch_add(&cancel_seen, 1);
    uint64_t v = 1;
    pcw_data d = {&v, sizeof v};
    return pcw_add_instance(info->buffer, "late", 1, 1, &d);
}

/* ---- items 4 and 5: control notifications ------------------------------ */

static int control(pcw_control_request req, const pcw_control_info *info, void *ctx)
{
    (void)ctx;
    int slow_start = strcmp(info->counterset, "Slow Start Set") == 0;
    int slow_add = strcmp(info->counterset, "Slow Add Set") == 0;
    int denied = strcmp(info->counterset, "Denied Set") == 0;
    switch (req) {
    case PCW_CONTROL_COLLECT_START:
        if (denied)
            return 5; /* ERROR_ACCESS_DENIED */
        if (slow_start) {
            atomic_fetch_add(&starts, 1);
            wait_gate(&start_open);
        }
        break;
    case PCW_CONTROL_COLLECT_END:
        if (slow_start)
            atomic_fetch_add(&ends, 1);
        break;
    case PCW_CONTROL_ADD_COUNTER:
        if (denied)
            return 5;
        if (slow_add) {
            wait_gate(&add_open);
            atomic_fetch_add(&adds, 1);
        }
        break;
    case PCW_CONTROL_REMOVE_COUNTER:
        if (slow_add)
            atomic_fetch_add(&removes, 1);
        break;
    default:
        break;
    }
    return PCW_OK;
}

/* ---- item 6: duplicate names in a KCS-style callback -------------------- */

static int dup_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA && type != PCW_CALLBACK_ENUMERATE_INSTANCES)
        return PCW_OK;
    static const char *const names[3] = {"x", "X", "y"};
    for (uint32_t i = 0; i < 3; i++) {
        uint64_t v = i + 1;
        pcw_data d = {&v, sizeof v};
        int rc = pcw_add_instance(info->buffer, names[i], i, 1, &d);
        if (i == 1)
            atomic_store(&dup_rc, rc);
        if (rc != PCW_OK)
            return rc; /* as the KCS sample does */
    }
    return PCW_OK;
}

static int reg_one(pcw_provider *p, const char *name, uint32_t type, pcw_callback cb, void *ctx)
{
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = name,
                                  .instance_type = type,
                                  .counter_count = 1,
                                  .counters = &c,
                                  .callback = cb,
                                  .callback_context = ctx};
    pcw_registration *r;
    int rc = pcw_register(&r, p, &info);
    if (rc == PCW_OK && !cb) {
        pcw_instance *in;
        uint64_t v = 1;
        pcw_data d = {&v, sizeof v};
        rc = pcw_create_instance(&in, r, "i", 1, &d);
    }
    return rc;
}

static void print_stats(void)
{
    printf("stats collect_mask=%" PRIx64 " add_mask=%" PRIx64 " remove_mask=%" PRIx64
           " single_multi=%x multi_multi=%x cancel_begun=%x cancel_seen=%x starts=%x ends=%x"
           " adds=%x removes=%x dup_rc=%x\n",
           atomic_load(&collect_mask), atomic_load(&add_mask), atomic_load(&remove_mask),
           (unsigned)atomic_load(&single_multi), (unsigned)atomic_load(&multi_multi),
           (unsigned)atomic_load(&cancel_begun), (unsigned)atomic_load(&cancel_seen),
           (unsigned)atomic_load(&starts), (unsigned)atomic_load(&ends),
           (unsigned)atomic_load(&adds), (unsigned)atomic_load(&removes),
           (unsigned)atomic_load(&dup_rc));
    fflush(stdout);
}

int main(void)
{
    pcw_provider *p;
    pcw_provider_options o = {.name = "fidelity", .control_callback = control};
    int rc = pcw_provider_open(&p, &o);
    if (rc == PCW_OK)
        rc = reg_idmask(p);
    if (rc == PCW_OK)
        rc = reg_one(p, "Single Set", PCW_SINGLE_INSTANCE, single_callback, NULL);
    if (rc == PCW_OK)
        rc = reg_one(p, "Cancel Poll Set", PCW_MULTI_INSTANCE, cancel_callback, NULL);
    if (rc == PCW_OK)
        rc = reg_one(p, "Cancel Wait Set", PCW_MULTI_INSTANCE, cancel_callback, (void *)1);
    if (rc == PCW_OK)
        rc = reg_one(p, "Dup Set", PCW_MULTI_INSTANCE, dup_callback, NULL);
    static const char *const seg_sets[3] = {"Slow Start Set", "Slow Add Set", "Denied Set"};
    for (int i = 0; i < 3 && rc == PCW_OK; i++)
        rc = reg_one(p, seg_sets[i], PCW_MULTI_INSTANCE, NULL, NULL);
    if (rc != PCW_OK) {
        fprintf(stderr, "fidelity_provider: %s\n", pcw_status_str(rc));
        return 1;
    }
    printf("ready %s\n", pcw_provider_path(p));
    fflush(stdout);
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "stats", 5) == 0)
            print_stats();
        else if (strncmp(line, "release-start", 13) == 0)
            open_gate(&start_open);
        else if (strncmp(line, "release-add", 11) == 0)
            open_gate(&add_open);
    }
    open_gate(&start_open);
    open_gate(&add_open);
    pcw_provider_close(p);
    return 0;
}
