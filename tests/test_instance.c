/* SPDX-License-Identifier: MIT */
/*
 * tests/test_instance.c - pcw_create_instance / pcw_close_instance and the
 * provider's lifecycle, checked from the consumer's side after each step:
 * what a consumer sees (names, ids, values) is what the provider made.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "pcw/consumer.h"
#include "pcw/provider.h"
#include "testutil.h"

typedef struct vals {
    uint64_t a;
    uint32_t b;
} vals;

static pcw_provider *prov;
static pcw_registration *reg; /* multi-instance, one block of 12 bytes */
static pcw_counter_desc cnt[2];

static pcw_registration *make_reg(uint32_t type, uint32_t flags)
{
    cnt[0] = pcw_counter_desc_default();
    cnt[1] = pcw_counter_desc_default();
    cnt[0].id = 1, cnt[0].name = "A", cnt[0].size = 8, cnt[0].offset = 0;
    cnt[1].id = 2, cnt[1].name = "B", cnt[1].size = 4, cnt[1].offset = 8;
    cnt[1].type = PERF_COUNTER_RAWCOUNT;
    uint32_t sizes[1] = {16};
    pcw_registration_info info = {
        .version = PCW_VERSION_1,
        .flags = flags,
        .name = type == PCW_SINGLE_INSTANCE ? "Single" : "Multi",
        .instance_type = type,
        .counter_count = 2,
        .counters = cnt,
        .block_count = 1,
        .block_sizes = sizes,
    };
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK);
    return r;
}

static void setup(void)
{
    tu_root_setup();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
    reg = make_reg(PCW_MULTI_INSTANCE, 0);
}

static void teardown(void)
{
    pcw_provider_close(prov); /* also unregisters reg */
    prov = NULL;
    tu_root_teardown();
}

TestSuite(instance, .init = setup, .fini = teardown, .timeout = 30);

static int create(pcw_instance **out, const char *name, uint64_t a, uint32_t b)
{
    vals v = {a, b};
    pcw_data d = {&v, sizeof v};
    return pcw_create_instance(out, reg, name, 1, &d);
}

/* What a consumer sees of counterset `set` in our segment right now. */
static pcw_snapshot snap = PCW_SNAPSHOT_INIT;
static const pcw_counterset *view(pcw_segment **seg, const char *set)
{
    cr_assert_eq(pcw_segment_open(seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = pcw_segment_find_counterset(*seg, set);
    cr_assert_not_null(cs, "counterset %s not published", set);
    cr_assert_eq(pcw_segment_read(*seg, cs, &snap, 0), PCW_OK);
    return cs;
}

/* The row named `name` in snap, or SIZE_MAX. */
static size_t sample(const char *name)
{
    for (size_t i = 0; i < snap.count; i++)
        if (strcmp(pcw_snapshot_name(&snap, i), name) == 0)
            return i;
    return SIZE_MAX;
}

Test(instance, argument_errors)
{
    pcw_instance *in = (pcw_instance *)&in;
    vals v = {0, 0};
    pcw_data d = {&v, sizeof v};
    cr_assert_eq(pcw_create_instance(NULL, reg, "x", 1, &d), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_create_instance(&in, NULL, "x", 1, &d), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_create_instance(&in, reg, NULL, 1, &d), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_create_instance(&in, reg, "x", 0, &d), PCW_E_INVALID_COUNT);
    cr_assert_null(in);
    pcw_data two[2] = {d, d}; /* one block too many */
    cr_assert_eq(pcw_create_instance(&in, reg, "x", 2, two), PCW_E_INVALID_COUNT);
    cr_assert_eq(pcw_create_instance(&in, reg, "x", 1, NULL), PCW_E_INVALID_COUNT);
    d.size = 11; /* B ends at 12 */
    cr_assert_eq(pcw_create_instance(&in, reg, "x", 1, &d), PCW_E_BUFFER_TOO_SMALL);
    d.size = 12, d.data = NULL; /* NULL data: zeros */
    cr_assert_eq(pcw_create_instance(&in, reg, "", 1, &d), PCW_E_INVALID_NAME);
    cr_assert_eq(pcw_create_instance(&in, reg, "bad\xC3", 1, &d), PCW_E_INVALID_NAME);
    cr_assert_eq(pcw_create_instance(&in, reg, "\xED\xA0\x80", 1, &d), PCW_E_INVALID_NAME);
    cr_assert_eq(pcw_create_instance(&in, reg, "\xC0\xAF", 1, &d), PCW_E_INVALID_NAME);
    /* Nothing was published by any of these. */
    pcw_segment *seg;
    view(&seg, "Multi");
    cr_assert_eq(snap.count, 0);
    pcw_segment_close(seg);
    cr_assert_eq(pcw_create_instance(&in, reg, "zeros", 1, &d), PCW_OK);
    view(&seg, "multi");
    cr_assert_eq(snap.count, 1);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &pcw_segment_counterset(seg, 0)->counters[0]), 0);
    pcw_segment_close(seg);
}

Test(instance, single_instance_rules)
{
    pcw_registration *s = make_reg(PCW_SINGLE_INSTANCE, 0);
    vals v = {5, 6};
    pcw_data d = {&v, sizeof v};
    pcw_instance *a, *b;
    cr_assert_eq(pcw_create_instance(&a, s, "named", 1, &d), PCW_E_INVALID_NAME);
    cr_assert_eq(pcw_create_instance(&a, s, "", 1, &d), PCW_OK);
    cr_assert_eq(pcw_create_instance(&b, s, "", 1, &d), PCW_E_DUPLICATE_NAME,
                 "a single-instance set has one instance");
    pcw_segment *seg;
    const pcw_counterset *cs = view(&seg, "Single");
    cr_assert_eq(snap.count, 1);
    cr_assert_eq(pcw_snapshot_name_len(&snap, 0), 0);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[0]), 5);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[1]), 6);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_segment_close(seg);
    pcw_close_instance(a);
    cr_assert_eq(pcw_create_instance(&b, s, "", 1, &d), PCW_OK, "free again after close");
}

/* n copies of the UTF-8 character ch. */
static char *repeat(const char *ch, size_t n)
{
    size_t l = strlen(ch);
    char *s = malloc(n * l + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(s + i * l, ch, l);
    s[n * l] = 0;
    return s;
}

Test(instance, name_length_limits)
{
    static const char *chars[] = {"x", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};
    for (size_t k = 0; k < 4; k++) {
        char *ok = repeat(chars[k], PCW_MAX_INSTANCE_NAME_CHARS);
        char *bad = repeat(chars[k], PCW_MAX_INSTANCE_NAME_CHARS + 1);
        pcw_instance *in;
        cr_assert_eq(create(&in, ok, k, 0), PCW_OK, "1024 characters of %zu bytes", k + 1);
        cr_assert_eq(create(&in, bad, k, 0), PCW_E_NAME_TOO_LONG, "1025 characters");
        pcw_segment *seg;
        view(&seg, "Multi");
        size_t x = sample(ok);
        cr_assert_neq(x, SIZE_MAX, "consumer sees the long name");
        cr_assert_eq(pcw_snapshot_name_len(&snap, x), strlen(ok));
        pcw_segment_close(seg);
        free(ok);
        free(bad);
    }
    /* Way past every limit, unterminated for 4 KiB+. */
    char *huge = repeat("y", 100000);
    pcw_instance *in;
    cr_assert_eq(create(&in, huge, 0, 0), PCW_E_NAME_TOO_LONG);
    free(huge);
}

Test(instance, duplicates_case_insensitive)
{
    static const char *pairs[][2] = {
        {"Worker", "WORKER"},
        {"\xC3\x89"
         "COLE",
         "\xC3\xA9"
         "cole"}, /* ÉCOLE / école */
        {"\xCE\x91\xCE\x98\xCE\x97\xCE\x9D\xCE\x91",
         "\xCE\xB1\xCE\xB8\xCE\xB7\xCE\xBD\xCE\xB1"}, /* ΑΘΗΝΑ */
        {"\xD0\x9C\xD0\x9E\xD0\xA1\xD0\x9A\xD0\x92\xD0\x90",
         "\xD0\xBC\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0"}, /* МОСКВА / москва */
    };
    for (size_t i = 0; i < 4; i++) {
        pcw_instance *a, *b;
        cr_assert_eq(create(&a, pairs[i][0], i, 0), PCW_OK);
        cr_assert_eq(create(&b, pairs[i][1], i, 0), PCW_E_DUPLICATE_NAME, "pair %zu", i);
        cr_assert_eq(create(&b, pairs[i][0], i, 0), PCW_E_DUPLICATE_NAME, "pair %zu", i);
    }
    pcw_segment *seg;
    view(&seg, "Multi");
    cr_assert_eq(snap.count, 4);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_segment_close(seg);
}

Test(instance, close_makes_name_reusable)
{
    pcw_instance *a, *b;
    cr_assert_eq(create(&a, "job", 1, 0), PCW_OK);
    pcw_close_instance(a);
    cr_assert_eq(create(&b, "JOB", 2, 0), PCW_OK, "closed names are free at once");
    pcw_segment *seg;
    const pcw_counterset *cs = view(&seg, "Multi");
    cr_assert_eq(snap.count, 1);
    cr_assert_str_eq(pcw_snapshot_name(&snap, 0), "JOB");
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[0]), 2);
    pcw_segment_close(seg);
}

Test(instance, ids_unique_stable_and_values)
{
    enum { N = 200 };
    pcw_instance *in[N];
    char name[32];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "w%d", i);
        cr_assert_eq(create(&in[i], name, 1000 + (uint64_t)i, (uint32_t)i), PCW_OK);
        for (int j = 0; j < i; j++)
            cr_assert_neq(pcw_instance_id(in[i]), pcw_instance_id(in[j]));
    }
    /* Close every third; the others keep their ids. */
    for (int i = 0; i < N; i += 3)
        pcw_close_instance(in[i]), in[i] = NULL;
    pcw_instance *extra[N / 3 + 1];
    int ne = 0;
    for (int i = 0; i < N; i += 3) {
        snprintf(name, sizeof name, "again%d", i);
        cr_assert_eq(create(&extra[ne++], name, 7, 7), PCW_OK);
    }
    pcw_segment *seg;
    const pcw_counterset *cs = view(&seg, "Multi");
    cr_assert_eq(snap.count, (size_t)(N - (N + 2) / 3 + ne));
    for (int i = 0; i < N; i++) {
        if (!in[i])
            continue;
        snprintf(name, sizeof name, "w%d", i);
        size_t x = sample(name);
        cr_assert_neq(x, SIZE_MAX, "%s missing", name);
        cr_assert_eq(pcw_snapshot_id(&snap, x), pcw_instance_id(in[i]));
        cr_assert_eq(pcw_snapshot_value(&snap, x, &cs->counters[0]), 1000 + (uint64_t)i);
        cr_assert_eq(pcw_snapshot_value(&snap, x, &cs->counters[1]), (uint64_t)i);
        for (int k = 0; k < ne; k++)
            cr_assert_neq(pcw_instance_id(extra[k]), pcw_snapshot_id(&snap, x),
                          "id reused while open");
    }
    /* Every sample's id is unique. */
    for (size_t i = 0; i < snap.count; i++)
        for (size_t j = 0; j < i; j++)
            cr_assert_neq(pcw_snapshot_id(&snap, i), pcw_snapshot_id(&snap, j));
    /* Read by id. */
    pcw_snapshot one = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read_instance(seg, cs, pcw_instance_id(in[1]), &one, 0), PCW_OK);
    cr_assert_eq(one.count, 1);
    cr_assert_str_eq(pcw_snapshot_name(&one, 0), "w1");
    cr_assert_eq(pcw_segment_read_instance(seg, cs, 999999, &one, 0), PCW_E_NOT_FOUND);
    pcw_snapshot_free(&one);
    cr_assert_eq(pcw_segment_check(seg, NULL, 0), PCW_OK);
    pcw_segment_close(seg);
    /* A store through the block pointer is what the consumer reads. */
    vals *p = pcw_instance_block(in[1], 0);
    pcw_u64_set(&p->a, 424242);
    cs = view(&seg, "Multi");
    cr_assert_eq(pcw_snapshot_value(&snap, sample("w1"), &cs->counters[0]), 424242);
    pcw_segment_close(seg);
}

Test(instance, block_pointers_aligned_and_inside)
{
    uint32_t sizes[3] = {12, 4, 24};
    pcw_counter_desc c[3] = {pcw_counter_desc_default(), pcw_counter_desc_default(),
                             pcw_counter_desc_default()};
    c[0].id = 1, c[0].name = "a", c[0].size = 8;
    c[1].id = 2, c[1].name = "b", c[1].size = 4, c[1].block = 1, c[1].type = PERF_COUNTER_RAWCOUNT;
    c[2].id = 3, c[2].name = "c", c[2].size = 8, c[2].block = 2, c[2].offset = 16;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Blocks",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 3,
                                  .counters = c,
                                  .block_count = 3,
                                  .block_sizes = sizes};
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK);
    uint64_t b0[2] = {11, 0}, b2[3] = {0, 0, 33};
    uint32_t b1 = 22;
    pcw_data d[3] = {{b0, 12}, {&b1, 4}, {b2, 24}};
    struct stat st;
    cr_assert_eq(stat(pcw_provider_path(prov), &st), 0);
    for (int i = 0; i < 100; i++) {
        char name[16];
        snprintf(name, sizeof name, "i%d", i);
        pcw_instance *in;
        cr_assert_eq(pcw_create_instance(&in, r, name, 3, d), PCW_OK);
        for (uint32_t b = 0; b < 3; b++) {
            uintptr_t p = (uintptr_t)pcw_instance_block(in, b);
            cr_assert_eq(p % 8, 0, "block %u not 8-aligned", b);
            cr_assert_not_null((void *)p);
        }
        cr_assert_null(pcw_instance_block(in, 3));
        cr_assert_eq(*(uint64_t *)pcw_instance_block(in, 0), 11);
        cr_assert_eq(*(uint32_t *)pcw_instance_block(in, 1), 22);
        cr_assert_eq(((uint64_t *)pcw_instance_block(in, 2))[2], 33);
    }
    /* Inside the segment: a consumer reading the file sees them. */
    pcw_segment *seg;
    const pcw_counterset *cs = view(&seg, "Blocks");
    cr_assert_eq(snap.count, 100);
    for (size_t i = 0; i < snap.count; i++) {
        cr_assert_eq(pcw_snapshot_value(&snap, i, &cs->counters[0]), 11);
        cr_assert_eq(pcw_snapshot_value(&snap, i, &cs->counters[1]), 22);
        cr_assert_eq(pcw_snapshot_value(&snap, i, &cs->counters[2]), 33);
    }
    pcw_segment_close(seg);
}

Test(instance, unregister_closes_open_instances)
{
    pcw_instance *a, *b;
    cr_assert_eq(create(&a, "a", 1, 1), PCW_OK);
    cr_assert_eq(create(&b, "b", 2, 2), PCW_OK);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    uint64_t g0 = pcw_segment_generation(seg);
    pcw_unregister(reg);
    reg = NULL;
    cr_assert_neq(pcw_segment_generation(seg), g0);
    int changed;
    cr_assert_eq(pcw_segment_refresh(seg, &changed), PCW_OK);
    cr_assert_eq(changed, 1);
    cr_assert_eq(pcw_segment_counterset_count(seg), 0);
    pcw_segment_close(seg);
    /* The name is free for a new registration. */
    reg = make_reg(PCW_MULTI_INSTANCE, 0);
    cr_assert_eq(create(&a, "a", 3, 3), PCW_OK);
    view(&seg, "Multi");
    cr_assert_eq(snap.count, 1);
    pcw_segment_close(seg);
}

Test(instance, provider_close_with_open_registrations)
{
    pcw_registration *s = make_reg(PCW_SINGLE_INSTANCE, PCW_REG_SEQCOUNT);
    pcw_instance *a, *b;
    cr_assert_eq(create(&a, "a", 1, 1), PCW_OK);
    vals v = {1, 2};
    pcw_data d = {&v, sizeof v};
    cr_assert_eq(pcw_create_instance(&b, s, "", 1, &d), PCW_OK);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", pcw_provider_path(prov));
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, path), PCW_OK);
    cr_assert_eq(pcw_segment_alive(seg), PCW_OK);
    pcw_provider_close(prov);
    prov = NULL;
    cr_assert_eq(access(path, F_OK), -1, "segment file removed");
    cr_assert_eq(pcw_segment_alive(seg), PCW_E_PROVIDER_EXITED, "state says closed");
    pcw_segment_close(seg);
    /* Reopen for teardown. */
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
}

static mode_t seg_mode(void)
{
    struct stat st;
    cr_assert_eq(stat(pcw_provider_path(prov), &st), 0);
    return st.st_mode & 07777;
}

Test(instance, file_modes)
{
    cr_assert_eq(seg_mode(), 0600);
    struct stat st;
    cr_assert_eq(stat(tu_provider_dir(geteuid()), &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0700);
    pcw_provider_close(prov);
    tu_root_teardown();
    tu_root_setup();
    pcw_provider_options o = {.share_with_group = 1};
    cr_assert_eq(pcw_provider_open(&prov, &o), PCW_OK);
    cr_assert_eq(seg_mode(), 0640);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    cr_assert(pcw_segment_provider(seg)->flags & PCW_SEG_F_GROUP);
    pcw_segment_close(seg);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/pcw-%u", tu_root, (unsigned)geteuid());
    cr_assert_eq(stat(dir, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0750);
}

/* Replace <root>/pcw-<uid> by something hostile, then try to open. */
static int open_with_dir(void (*make)(const char *dir))
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/pcw-%u", tu_root, (unsigned)geteuid());
    make(dir);
    pcw_provider *p = (pcw_provider *)&p;
    int rc = pcw_provider_open(&p, NULL);
    if (rc == PCW_OK)
        pcw_provider_close(p);
    else
        cr_assert_null(p);
    return rc;
}

static void fresh_root(void)
{
    pcw_provider_close(prov);
    prov = NULL;
    tu_root_teardown();
    tu_root_setup();
}

static void make_symlink(const char *dir)
{
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s/elsewhere", tu_root);
    cr_assert_eq(mkdir(target, 0700), 0);
    cr_assert_eq(symlink(target, dir), 0);
}
static void make_foreign(const char *dir)
{
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chown(dir, 12345, 12345), 0);
}
static void make_group_writable(const char *dir)
{
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, 0770), 0);
}
static void make_other_writable(const char *dir)
{
    cr_assert_eq(mkdir(dir, 0700), 0);
    cr_assert_eq(chmod(dir, 01777), 0);
}
static void make_file(const char *dir)
{
    cr_assert_eq(tu_write_file(dir, "x", 1, 0600), 0);
}

Test(instance, hostile_provider_dir)
{
    fresh_root();
    cr_assert_eq(open_with_dir(make_symlink), PCW_E_PERMISSION, "symlink");
    fresh_root();
    cr_assert_eq(open_with_dir(make_foreign), PCW_E_PERMISSION, "owned by another uid");
    fresh_root();
    cr_assert_eq(open_with_dir(make_group_writable), PCW_E_PERMISSION, "group-writable");
    fresh_root();
    cr_assert_eq(open_with_dir(make_other_writable), PCW_E_PERMISSION, "world-writable");
    fresh_root();
    int rc = open_with_dir(make_file);
    cr_assert(rc == PCW_E_PERMISSION || rc == PCW_E_IO, "a file: %d", rc);
    fresh_root();
    cr_assert_eq(pcw_provider_open(&prov, NULL), PCW_OK);
}

Test(instance, seqcount_write_begin_end)
{
    pcw_registration *s = make_reg(PCW_MULTI_INSTANCE, PCW_REG_SEQCOUNT);
    pcw_unregister(reg);
    reg = s;
    pcw_instance *in;
    cr_assert_eq(create(&in, "q", 1, 1), PCW_OK);
    pcw_segment *seg;
    const pcw_counterset *cs = view(&seg, "Multi");
    cr_assert(cs->flags & PCW_CSET_F_SEQCOUNT);
    cr_assert_eq(snap.count, 1);
    vals *p = pcw_instance_block(in, 0);
    pcw_instance_write_begin(in);
    pcw_u64_set(&p->a, 77);
    pcw_u32_set(&p->b, 78);
    /* Mid-write: the consumer retries, gives up, and counts it busy. */
    cr_assert_eq(pcw_segment_read(seg, cs, &snap, 0), PCW_OK);
    cr_assert_eq(snap.count, 0);
    cr_assert_eq(snap.busy, 1);
    pcw_instance_write_end(in);
    cr_assert_eq(pcw_segment_read(seg, cs, &snap, 0), PCW_OK);
    cr_assert_eq(snap.count, 1);
    cr_assert_eq(snap.busy, 0);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[0]), 77);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[1]), 78);
    pcw_u64_add(&p->a, 3);
    pcw_u32_add(&p->b, 2);
    cr_assert_eq(pcw_segment_read(seg, cs, &snap, 0), PCW_OK);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[0]), 80);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[1]), 80);
    pcw_segment_close(seg);
    pcw_snapshot_free(&snap);
}

/* A block larger than the counters need - a struct with private fields
 * after the counters, whose block size pcw_register derived from the last
 * counter - is accepted (issue 13, item 8); only the registered block is
 * copied into the segment, never the private bytes after it. */
Test(instance, larger_block_with_private_fields)
{
    cnt[0] = pcw_counter_desc_default();
    cnt[1] = pcw_counter_desc_default();
    cnt[0].id = 1, cnt[0].name = "A", cnt[0].size = 8, cnt[0].offset = 0;
    cnt[1].id = 2, cnt[1].name = "B", cnt[1].size = 4, cnt[1].offset = 8;
    cnt[1].type = PERF_COUNTER_RAWCOUNT;
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Derived",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 2,
                                  .counters = cnt}; /* block size derived: 12 */
    pcw_registration *r;
    cr_assert_eq(pcw_register(&r, prov, &info), PCW_OK);
    struct with_private {
        uint64_t a;
        uint32_t b;
        uint32_t secret; /* the provider's own, past the counters */
        char more[40];
    } v;
    memset(&v, 0xAB, sizeof v);
    v.a = 7, v.b = 9;
    pcw_data d = {&v, sizeof v};
    pcw_instance *in;
    cr_assert_eq(pcw_create_instance(&in, r, "x", 1, &d), PCW_OK);
    pcw_segment *seg;
    const pcw_counterset *cs = view(&seg, "Derived");
    cr_assert_eq(snap.count, 1);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[0]), 7);
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[1]), 9);
    /* The row's bytes past the registered block are zeros, not 0xAB. */
    const unsigned char *row = snap.data;
    for (uint32_t k = 12; k < snap.data_size; k++)
        cr_assert_eq(row[k], 0, "byte %u of the row leaked the private fields", k);
    pcw_segment_close(seg);
    /* The pointer the provider updates through is the segment's block. */
    uint64_t *live = (uint64_t *)pcw_instance_block(in, 0);
    pcw_u64_set(live, 8);
    cs = view(&seg, "Derived");
    cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[0]), 8);
    pcw_segment_close(seg);
}
