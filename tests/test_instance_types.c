/* SPDX-License-Identifier: MIT */
/*
 * tests/test_instance_types.c - every pcw_instance_type (<pcw/types.h>),
 * the manifest's instances forms including instanceAggregate and the
 * History forms: values stay what segments store, each registers, instance
 * names follow pcw_instance_type_is_multi, consumers read the type back,
 * pcwdump names it and --check accepts the segment.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

static pcw_provider *prov;

static void setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
}

static void teardown(void)
{
    pcw_provider_close(prov);
    prov = NULL;
    tu_root_teardown();
}

TestSuite(instance_types, .init = setup, .fini = teardown, .timeout = 60);

/* Indexed by type: its manifest name, and whether its instances are named. */
static const struct {
    uint32_t type;
    const char *manifest;
    int multi;
} types[] = {
    {PCW_SINGLE_INSTANCE, "single", 0},
    {PCW_MULTI_INSTANCE, "multiple", 1},
    {PCW_GLOBAL_AGGREGATE, "globalAggregate", 0},
    {PCW_MULTI_AGGREGATE, "multipleAggregate", 1},
    {PCW_GLOBAL_AGGREGATE_HISTORY, "globalAggregateHistory", 0},
    {PCW_INSTANCE_AGGREGATE, "instanceAggregate", 1},
    {PCW_MULTI_AGGREGATE_HISTORY, "multipleAggregateHistory", 1},
    {PCW_INSTANCE_AGGREGATE_HISTORY, "instanceAggregateHistory", 1},
};
#define NTYPES (sizeof types / sizeof types[0])

/* The values are stored in segments: they are appended, never renumbered. */
Test(instance_types, values_are_stable_and_multi_is_right)
{
    cr_assert_eq(NTYPES, PCW_INSTANCE_TYPE_MAX_ + 1);
    for (uint32_t t = 0; t < NTYPES; t++) {
        cr_assert_eq(types[t].type, t, "%s", types[t].manifest);
        cr_assert_eq(pcw_instance_type_is_multi(t), types[t].multi, "%s", types[t].manifest);
    }
    cr_assert_not(pcw_instance_type_is_multi(PCW_INSTANCE_TYPE_MAX_ + 1));
}

/* Run pcwdump with args (NULL-terminated); returns its exit status and
 * puts its stdout in *out (malloc'd). */
static int pcwdump(char **out, const char *const *args)
{
    const char *build = getenv("PCW_BUILD");
    char exe[PATH_MAX], path[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/pcwdump", build && *build ? build : PCW_BUILD_DIR);
    snprintf(path, sizeof path, "%s/pcwdump.out", tu_root);
    const char *argv[16] = {exe};
    size_t n = 1;
    for (; args[n - 1] && n < 15; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = tu_fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            _exit(126);
        dup2(fd, 1);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 127, "cannot run %s", exe);
    size_t len;
    unsigned char *b = tu_read_file(path, 1 << 20, &len);
    cr_assert_not_null(b);
    *out = realloc(b, len + 1);
    cr_assert_not_null(*out);
    (*out)[len] = 0;
    return WEXITSTATUS(st);
}

Test(instance_types, every_type_registers_and_reads_back)
{
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "Items", c.offset = 0, c.size = 8;
    pcw_registration *reg[NTYPES];
    char names[NTYPES][64];
    for (uint32_t t = 0; t < NTYPES; t++) {
        snprintf(names[t], sizeof names[t], "Form %s", types[t].manifest);
        pcw_registration_info info = {.version = PCW_VERSION_1,
                                      .name = names[t],
                                      .instance_type = t,
                                      .counter_count = 1,
                                      .counters = &c};
        cr_assert_eq(pcw_register(&reg[t], prov, &info), PCW_OK, "%s", names[t]);
        pcw_instance *inst;
        const char *good = types[t].multi ? "queue 0" : "", *bad = types[t].multi ? "" : "queue 0";
        uint64_t v = 100 + t;
        pcw_data d = {&v, sizeof v};
        cr_assert_eq(pcw_create_instance(&inst, reg[t], bad, 1, &d), PCW_E_INVALID_NAME, "%s",
                     names[t]);
        cr_assert_eq(pcw_create_instance(&inst, reg[t], good, 1, &d), PCW_OK, "%s", names[t]);
    }

    pcw_consumer *con;
    cr_assert_eq(pcw_consumer_open(&con, NULL), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(con, NULL), PCW_OK);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    for (uint32_t t = 0; t < NTYPES; t++) {
        const pcw_merged_counterset *m = pcw_consumer_find_counterset(con, names[t]);
        cr_assert_not_null(m, "%s", names[t]);
        cr_assert_eq(m->meta->instance_type, t, "%s", names[t]);
        cr_assert_eq(pcw_consumer_read(con, m, &snap, 0, NULL), PCW_OK);
        cr_assert_eq(snap.count, 1);
        cr_assert_str_eq(pcw_snapshot_name(&snap, 0), types[t].multi ? "queue 0" : "");
        cr_assert_eq(pcw_snapshot_value(&snap, 0, &m->meta->counters[0]), 100 + t);
    }
    pcw_snapshot_free(&snap);
    pcw_consumer_close(con);

    /* pcwdump names each type as the manifest does, and --check accepts
     * the segment (named instances exactly where the type has them). */
    char *out;
    cr_assert_eq(pcwdump(&out, (const char *[]){"--json", "--compact", NULL}), 0, "%s", out);
    for (uint32_t t = 0; t < NTYPES; t++) {
        char want[96];
        snprintf(want, sizeof want, "\"instance_type\":\"%s\"", types[t].manifest);
        cr_assert_not_null(strstr(out, want), "no %s in: %s", want, out);
    }
    free(out);
    cr_assert_eq(pcwdump(&out, (const char *[]){"--check", NULL}), 0, "%s", out);
    cr_assert_not_null(strstr(out, "OK "), "%s", out);
    free(out);
}
