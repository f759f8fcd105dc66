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
 * Prints "ready <segment path>" once published. Commands on stdin, one a
 * line: "stats" prints "stats KEY=VALUE ..." (below); runs until stdin
 * closes.
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

static void print_stats(void)
{
    printf("stats collect_mask=%" PRIx64 " add_mask=%" PRIx64 " remove_mask=%" PRIx64 "\n",
           atomic_load(&collect_mask), atomic_load(&add_mask), atomic_load(&remove_mask));
    fflush(stdout);
}

int main(void)
{
    pcw_provider *p;
    pcw_provider_options o = {.name = "fidelity"};
    int rc = pcw_provider_open(&p, &o);
    if (rc == PCW_OK)
        rc = reg_idmask(p);
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
    }
    pcw_provider_close(p);
    return 0;
}
