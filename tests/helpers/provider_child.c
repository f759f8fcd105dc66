/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/provider_child.c - a provider process the tests drive.
 *
 *   provider_child [--set NAME] [--instances N] [--value-base B] [--seqcount]
 *                  [--alt] [--single] [--hold-seconds S] [--name PROVIDER]
 *
 * Registers counterset NAME (default "Test Set") with two counters,
 *   id 1 "Value" (PERF_COUNTER_LARGE_RAWCOUNT, 8 bytes at 0)
 *   id 2 "Index" (PERF_COUNTER_RAWCOUNT, 4 bytes at 8)
 * or with --alt one other counter (id 7 "Other", 8 bytes at 0), creates
 * instances "inst0".."inst<N-1>" with Value = B + i and Index = i (with
 * --single: one unnamed instance, Value = B), prints "ready <segment path>"
 * and then serves commands, one per stdin line, answering each with one
 * line ("ok [id]" or "err <status>"):
 *   create NAME VALUE | close NAME | set NAME VALUE | quit
 * It closes the provider and exits 0 on "quit", at end of stdin, on SIGTERM
 * or SIGINT, or after --hold-seconds.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <poll.h>
#include <signal.h>

typedef struct values {
    uint64_t value;
    uint32_t index;
    uint32_t pad;
} values;

#define MAX_INST 4096

static struct {
    char *name;
    pcw_instance *inst;
} insts[MAX_INST];
static int seqcount;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int find(const char *name)
{
    for (int i = 0; i < MAX_INST; i++)
        if (insts[i].inst && strcmp(insts[i].name, name) == 0)
            return i;
    return -1;
}

static int create(pcw_registration *reg, const char *name, uint64_t v, uint32_t index, uint32_t *id)
{
    int slot = -1;
    for (int i = 0; i < MAX_INST && slot < 0; i++)
        if (!insts[i].inst)
            slot = i;
    if (slot < 0)
        return PCW_E_NO_MEMORY;
    values init = {v, index, 0};
    pcw_data d = {&init, sizeof init};
    int rc = pcw_create_instance(&insts[slot].inst, reg, name, 1, &d);
    if (rc != PCW_OK)
        return rc;
    insts[slot].name = strdup(name);
    *id = pcw_instance_id(insts[slot].inst);
    return PCW_OK;
}

static void set_value(pcw_instance *in, uint64_t v)
{
    values *p = (values *)pcw_instance_block(in, 0);
    if (seqcount)
        pcw_instance_write_begin(in);
    pcw_u64_set(&p->value, v);
    if (seqcount)
        pcw_instance_write_end(in);
}

static void serve(pcw_registration *reg)
{
    char buf[8192];
    size_t len = 0;
    while (!stop) {
        struct pollfd p = {0, POLLIN, 0};
        /* The timeout only bounds how late a signal or --hold-seconds is
         * noticed; commands are answered as soon as they arrive. */
        int r = poll(&p, 1, 100);
        if (r <= 0)
            continue;
        ssize_t got = read(0, buf + len, sizeof buf - 1 - len);
        if (got <= 0)
            return;
        len += (size_t)got;
        char *nl;
        while ((nl = memchr(buf, '\n', len)) != NULL) {
            *nl = 0;
            char cmd[16] = "", name[4096] = "";
            unsigned long long v = 0;
            int n = sscanf(buf, "%15s %4095s %llu", cmd, name, &v);
            if (n >= 1 && strcmp(cmd, "quit") == 0)
                return;
            if (n >= 3 && strcmp(cmd, "create") == 0) {
                uint32_t id = 0;
                int rc = create(reg, name, v, 0, &id);
                if (rc == PCW_OK)
                    printf("ok %u\n", id);
                else
                    printf("err %d\n", rc);
            } else if (n >= 2 && strcmp(cmd, "close") == 0) {
                int i = find(name);
                if (i < 0) {
                    printf("err %d\n", PCW_E_NOT_FOUND);
                } else {
                    pcw_close_instance(insts[i].inst);
                    insts[i].inst = NULL;
                    free(insts[i].name);
                    insts[i].name = NULL;
                    printf("ok\n");
                }
            } else if (n >= 3 && strcmp(cmd, "set") == 0) {
                int i = find(name);
                if (i < 0) {
                    printf("err %d\n", PCW_E_NOT_FOUND);
                } else {
                    set_value(insts[i].inst, v);
                    printf("ok\n");
                }
            } else {
                printf("err %d\n", PCW_E_INVALID_PARAMETER);
            }
            fflush(stdout);
            size_t used = (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len - used);
            len -= used;
        }
        if (len == sizeof buf - 1)
            return; /* a line too long to be a command */
    }
}

int main(int argc, char **argv)
{
    const char *set = "Test Set", *pname = "provider_child";
    long ninst = 0, hold = 0;
    unsigned long long base = 0;
    int alt = 0, single = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--set") == 0 && v)
            set = v, i++;
        else if (strcmp(a, "--instances") == 0 && v)
            ninst = strtol(v, NULL, 10), i++;
        else if (strcmp(a, "--value-base") == 0 && v)
            base = strtoull(v, NULL, 10), i++;
        else if (strcmp(a, "--hold-seconds") == 0 && v)
            hold = strtol(v, NULL, 10), i++;
        else if (strcmp(a, "--name") == 0 && v)
            pname = v, i++;
        else if (strcmp(a, "--seqcount") == 0)
            seqcount = 1;
        else if (strcmp(a, "--alt") == 0)
            alt = 1;
        else if (strcmp(a, "--single") == 0)
            single = 1;
        else {
            fprintf(stderr, "provider_child: bad argument %s\n", a);
            return 2;
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (hold > 0)
        alarm((unsigned)hold);

    pcw_counter_desc c[2] = {pcw_counter_desc_default(), pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "Value", c[0].description = "The value";
    c[0].type = PERF_COUNTER_LARGE_RAWCOUNT, c[0].size = 8, c[0].offset = 0;
    c[1].id = 2, c[1].name = "Index", c[1].description = "The instance number";
    c[1].type = PERF_COUNTER_RAWCOUNT, c[1].size = 4, c[1].offset = 8;
    if (alt) {
        c[0].id = 7, c[0].name = "Other", c[0].description = "Another layout";
        c[1] = c[0];
        c[1].id = 8, c[1].name = "Other Index", c[1].offset = 8;
    }
    const uint32_t block_sizes[1] = {sizeof(values)};
    pcw_registration_info info = {
        .version = PCW_VERSION_1,
        .flags = seqcount ? PCW_REG_SEQCOUNT : 0,
        .name = set,
        .description = "Counters published by provider_child",
        .instance_type = single ? PCW_SINGLE_INSTANCE : PCW_MULTI_INSTANCE,
        .counter_count = 2,
        .counters = c,
        .block_count = 1,
        .block_sizes = block_sizes,
    };
    pcw_provider_options opt = {.name = pname};
    pcw_provider *prov;
    pcw_registration *reg;
    int rc = pcw_provider_open(&prov, &opt);
    if (rc != PCW_OK) {
        fprintf(stderr, "provider_child: open: %s\n", pcw_status_str(rc));
        return 1;
    }
    if ((rc = pcw_register(&reg, prov, &info)) != PCW_OK) {
        fprintf(stderr, "provider_child: register: %s\n", pcw_status_str(rc));
        pcw_provider_close(prov);
        return 1;
    }
    if (single)
        ninst = 1;
    for (long i = 0; i < ninst; i++) {
        char name[32];
        if (single)
            name[0] = 0; /* a single-instance set's one instance is unnamed */
        else
            snprintf(name, sizeof name, "inst%ld", i);
        uint32_t id;
        if ((rc = create(reg, name, base + (uint64_t)i, (uint32_t)i, &id)) != PCW_OK) {
            fprintf(stderr, "provider_child: create %s: %s\n", name, pcw_status_str(rc));
            pcw_provider_close(prov);
            return 1;
        }
    }
    printf("ready %s\n", pcw_provider_path(prov));
    fflush(stdout);
    serve(reg);
    pcw_provider_close(prov);
    for (int i = 0; i < MAX_INST; i++)
        free(insts[i].name);
    return 0;
}
