/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pcwdump.c - the pcwdump tool, run as a real program
 * ($PCW_BUILD/pcwdump) against real provider processes
 * (tests/helpers/dump_provider), each test in its own $PCW_DIR.
 *
 * JSON output is checked by a strict RFC 8259 validator below (structure,
 * escapes, UTF-8) and then by exact substrings of the --compact form, whose
 * layout is fixed. The JSON string writer is also tested directly on bytes
 * the provider API cannot produce (invalid UTF-8).
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1
#include <criterion/criterion.h>

#include "testutil.h"

#include "common/layout.h"
#include "common/name.h"
#include <pcw/provider.h>

#include "../tools/common/escape.h"
#include "../tools/pcwdump/json_writer.h"

TestSuite(pcwdump, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 60);

/* ---- running pcwdump ---------------------------------------------------- */

typedef struct result {
    int status; /* exit status, or -1 if it did not exit normally */
    char *out, *err;
} result;

static char *slurp(const char *path)
{
    size_t len;
    unsigned char *b = tu_read_file(path, 1 << 22, &len);
    cr_assert(b, "cannot read %s", path);
    char *s = realloc(b, len + 1);
    cr_assert(s);
    s[len] = 0;
    return s;
}

/* Run pcwdump with args (NULL-terminated); stdout and stderr to files. */
static result run(const char *const *args)
{
    const char *build = getenv("PCW_BUILD");
    char exe[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/pcwdump", build && *build ? build : PCW_BUILD_DIR);
    snprintf(out, sizeof out, "%s/out.txt", tu_root);
    snprintf(err, sizeof err, "%s/err.txt", tu_root);
    const char *argv[64] = {exe};
    size_t n = 1;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    pid_t pid = tu_fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0)
            _exit(126);
        dup2(o, 1), dup2(e, 2);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    result r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(out), slurp(err)};
    cr_assert_neq(r.status, 127, "cannot run %s", exe);
    return r;
}

static void result_free(result *r)
{
    free(r->out), free(r->err);
}

typedef struct provider {
    tu_child c;
    char path[PATH_MAX];
    char pid[16];
} provider;

/* Start dump_provider with these args; wait until its segment is ready. */
static void start(provider *p, const char *const *args)
{
    cr_assert_eq(tu_spawn(&p->c, "dump_provider", args), 0);
    char line[PATH_MAX];
    cr_assert(tu_readline(&p->c, line, sizeof line, 10000) > 0, "dump_provider did not start");
    cr_assert(strncmp(line, "ready ", 6) == 0, "dump_provider said: %s", line);
    snprintf(p->path, sizeof p->path, "%s", line + 6);
    snprintf(p->pid, sizeof p->pid, "%d", (int)p->c.pid);
}

static void stop(provider *p)
{
    int st = tu_finish(&p->c, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "dump_provider failed: %d", st);
}

/* The line of `text` containing `needle`, copied into line; 0 if none. */
static int line_with(const char *text, const char *needle, char *line, size_t cap)
{
    const char *at = strstr(text, needle);
    if (!at)
        return 0;
    const char *b = at, *e = strchr(at, '\n');
    while (b > text && b[-1] != '\n')
        b--;
    size_t n = (size_t)((e ? e : at + strlen(at)) - b);
    n = n < cap - 1 ? n : cap - 1;
    memcpy(line, b, n);
    line[n] = 0;
    return 1;
}

/* ---- a strict JSON validator (RFC 8259) --------------------------------- */

typedef struct jp {
    const char *s;
    size_t i, n;
} jp;

static void jp_ws(jp *p)
{
    while (p->i < p->n && strchr(" \t\r\n", p->s[p->i]))
        p->i++;
}

static int jp_lit(jp *p, const char *lit)
{
    size_t k = strlen(lit);
    if (p->n - p->i < k || memcmp(p->s + p->i, lit, k) != 0)
        return 0;
    p->i += k;
    return 1;
}

static int jp_digits(jp *p)
{
    size_t start = p->i;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
        p->i++;
    return p->i > start;
}

static int jp_number(jp *p)
{
    if (p->i < p->n && p->s[p->i] == '-')
        p->i++;
    if (p->i < p->n && p->s[p->i] == '0')
        p->i++;
    else if (!jp_digits(p))
        return 0;
    if (p->i < p->n && p->s[p->i] == '.') {
        p->i++;
        if (!jp_digits(p))
            return 0;
    }
    if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
        p->i++;
        if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
            p->i++;
        if (!jp_digits(p))
            return 0;
    }
    return 1;
}

static int jp_string(jp *p)
{
    if (p->i >= p->n || p->s[p->i] != '"')
        return 0;
    p->i++;
    while (p->i < p->n) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            return 1;
        }
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            if (++p->i >= p->n)
                return 0;
            char e = p->s[p->i++];
            if (e == 'u') {
                for (int k = 0; k < 4; k++, p->i++)
                    if (p->i >= p->n || !strchr("0123456789abcdefABCDEF", p->s[p->i]))
                        return 0;
            } else if (!strchr("\"\\/bfnrt", e) || !e) {
                return 0;
            }
            continue;
        }
        if (pcw__utf8_next(p->s, p->n, &p->i) < 0)
            return 0;
    }
    return 0;
}

static int jp_value(jp *p, int depth)
{
    if (depth > 64)
        return 0;
    jp_ws(p);
    if (p->i >= p->n)
        return 0;
    char c = p->s[p->i];
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        p->i++;
        jp_ws(p);
        if (p->i < p->n && p->s[p->i] == close) {
            p->i++;
            return 1;
        }
        for (;;) {
            if (c == '{') {
                jp_ws(p);
                if (!jp_string(p))
                    return 0;
                jp_ws(p);
                if (p->i >= p->n || p->s[p->i++] != ':')
                    return 0;
            }
            if (!jp_value(p, depth + 1))
                return 0;
            jp_ws(p);
            if (p->i >= p->n)
                return 0;
            if (p->s[p->i] == close) {
                p->i++;
                return 1;
            }
            if (p->s[p->i++] != ',')
                return 0;
        }
    }
    if (c == '"')
        return jp_string(p);
    if (jp_lit(p, "true") || jp_lit(p, "false") || jp_lit(p, "null"))
        return 1;
    return jp_number(p);
}

/* A stream of one or more JSON texts separated by whitespace. Returns how
 * many, or -1 if any is invalid. */
static int json_documents(const char *s)
{
    jp p = {s, 0, strlen(s)};
    int docs = 0;
    for (;;) {
        jp_ws(&p);
        if (p.i == p.n)
            return docs ? docs : -1;
        if (!jp_value(&p, 0))
            return -1;
        docs++;
    }
}

Test(pcwdump, validator_self_check)
{
    cr_assert_eq(json_documents("{\"a\":[1,-2.5e3,true,null,\"x\\u00e9\"]}"), 1);
    cr_assert_eq(json_documents("{} []"), 2);
    cr_assert_eq(json_documents("{\"a\":1,}"), -1);
    cr_assert_eq(json_documents("\"tab\there\""), -1);
    cr_assert_eq(json_documents("\"\xff\""), -1);
    cr_assert_eq(json_documents("[01]"), -1);
    cr_assert_eq(json_documents(""), -1);
}

/* ---- the JSON writer, unit level ---------------------------------------- */

static char *escaped(const char *s, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    jw_write_escaped(f, s, n);
    fclose(f);
    return buf;
}

Test(pcwdump, json_writer_escapes_everything)
{
    static const struct {
        const char *in;
        size_t n;
        const char *out;
    } cases[] = {
        {"plain", 5, "\"plain\""},
        {"q\"b\\s/", 6, "\"q\\\"b\\\\s/\""},
        {"\t\n\r\b\f", 5, "\"\\t\\n\\r\\b\\f\""},
        {"\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\""},
        {"a\0b", 3, "\"a\\u0000b\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14,
         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"\xff", 1, "\"\\ufffd\""},
        {"\x80x", 2, "\"\\ufffdx\""},
        {"\xc0\xaf", 2, "\"\\ufffd\\ufffd\""},                       /* overlong '/' */
        {"\xe2\x82", 2, "\"\\ufffd\\ufffd\""},                       /* truncated */
        {"\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\""},            /* surrogate */
        {"\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* > U+10FFFF */
        {"\xe2\x80\xa8", 3, "\"\\u2028\""},
        {"", 0, "\"\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = escaped(cases[i].in, cases[i].n);
        cr_expect_str_eq(got, cases[i].out, "case %zu", i);
        cr_expect_eq(json_documents(got), 1, "case %zu: %s", i, got);
        free(got);
    }
    /* Every byte value in every position still yields valid JSON. */
    char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (char)(255 - i);
    char *got = escaped(all, sizeof all);
    cr_assert_eq(json_documents(got), 1);
    free(got);
}

Test(pcwdump, json_writer_structure)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jw w;
    jw_init(&w, f, 1);
    jw_begin_object(&w);
    jw_kv_u64(&w, "big", UINT64_MAX);
    jw_kv_i64(&w, "neg", INT64_MIN);
    jw_key(&w, "list");
    jw_begin_array(&w);
    jw_bool(&w, 1);
    jw_null(&w);
    jw_string(&w, NULL);
    jw_begin_object(&w);
    jw_end_object(&w);
    jw_end_array(&w);
    jw_key_n(&w, "k\xff\"", 3);
    jw_string_n(&w, "v", 1);
    jw_end_object(&w);
    cr_assert_eq(jw_finish(&w), 0);
    fclose(f);
    cr_assert_eq(json_documents(buf), 1, "%s", buf);
    cr_assert(strstr(buf, "\"big\": 18446744073709551615"));
    cr_assert(strstr(buf, "\"neg\": -9223372036854775808"));
    cr_assert(strstr(buf, "\"k\\ufffd\\\"\": \"v\""));
    free(buf);

    /* Misuse is reported, not silently written. */
    buf = NULL;
    f = open_memstream(&buf, &len);
    jw_init(&w, f, 0);
    jw_begin_object(&w);
    jw_u64(&w, 1); /* a value without a key */
    jw_end_object(&w);
    cr_assert_eq(jw_finish(&w), -1);
    jw_init(&w, f, 0);
    jw_begin_array(&w);
    cr_assert_eq(jw_finish(&w), -1); /* unclosed */
    fclose(f);
    free(buf);
}

/* ---- text output -------------------------------------------------------- */

Test(pcwdump, text_lists_providers_countersets_instances_values)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Test Set", "alpha=5,1", "beta=70000000000,255", NULL});
    result r = run((const char *[]){NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char line[1024];
    cr_assert(line_with(r.out, "Provider \"Dump A\"", line, sizeof line), "%s", r.out);
    cr_assert(strstr(line, a.pid) && strstr(line, "alive"), "%s", line);
    cr_assert(strstr(r.out, a.path));
    cr_assert(line_with(r.out, "Counterset \"Test Set\"", line, sizeof line));
    cr_assert(strstr(line, "multiple"));
    cr_assert(strstr(r.out, "guid: {ab2e8dd5-6d3c-4a68-8b6b-4d2f3a1e0c11}"));
    cr_assert(line_with(r.out, "PERF_COUNTER_LARGE_RAWCOUNT", line, sizeof line));
    cr_assert(strstr(line, "Count") && strstr(line, "How many"), "%s", line);
    cr_assert(line_with(r.out, "PERF_RAW_FRACTION", line, sizeof line));
    cr_assert(strstr(line, "base=4") && strstr(line, "sum"), "%s", line);
    cr_assert(line_with(r.out, "PERF_RAW_BASE", line, sizeof line));
    cr_assert(strstr(line, "attributes=noDisplay") && strstr(line, "detail=advanced"), "%s", line);
    cr_assert(strstr(r.out, "instances (2):"));
    /* Rows: id, name, Count, Flags (hex), Hits, Hits Base. */
    cr_assert(line_with(r.out, "alpha", line, sizeof line));
    int id;
    char name[64], flags[32];
    unsigned long long count, hits, base;
    cr_assert_eq(
        sscanf(line, "%d %63s %llu %31s %llu %llu", &id, name, &count, flags, &hits, &base), 6,
        "%s", line);
    cr_assert_eq(count, 5);
    cr_assert_str_eq(flags, "0x1");
    cr_assert_eq(hits, 2);
    cr_assert_eq(base, 5);
    cr_assert(line_with(r.out, "beta", line, sizeof line));
    cr_assert(strstr(line, "70000000000") && strstr(line, "0xff"), "%s", line);
    /* Columns line up: each value ends where its header ends. */
    char header[1024];
    cr_assert(line_with(strstr(r.out, "instances ("), "Hits Base", header, sizeof header));
    cr_assert(line_with(r.out, "alpha", line, sizeof line));
    cr_assert_eq(strlen(header), strlen(line), "\n%s\n%s", header, line);
    result_free(&r);

    r = run((const char *[]){"--no-values", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(line_with(r.out, "alpha", line, sizeof line));
    cr_assert_null(strstr(line, "0x1"), "%s", line);
    result_free(&r);
    stop(&a);
}

/* A counterset with no instances is listed, with none, in every form
 * (issue 9: UBSan aborted pcwdump on qsort_r(NULL, 0, ...)). */
Test(pcwdump, counterset_without_instances)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Empty Set", NULL});
    static const char *const forms[][3] = {
        {NULL}, {"--merged", NULL}, {"--json", NULL}, {"--merged", "--json", NULL}};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        result r = run(forms[i]);
        cr_assert_eq(r.status, 0, "form %zu: status %d, stderr: %s", i, r.status, r.err);
        cr_assert(strstr(r.out, "Empty Set"), "form %zu: %s", i, r.out);
        result_free(&r);
    }
    stop(&a);
}

Test(pcwdump, hostile_names_are_escaped)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Test Set", "q\"b\\s\tt=1", "\x1b[31mred=2", NULL});
    result r = run((const char *[]){NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "q\"b\\\\s\\tt"), "%s", r.out);
    cr_assert(strstr(r.out, "\\x1b[31mred"), "%s", r.out);
    cr_assert_null(strchr(r.out, '\x1b'), "raw escape reached the terminal");
    cr_assert_null(strchr(r.out, '\t'), "raw tab in the output");
    result_free(&r);

    r = run((const char *[]){"--json", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(json_documents(r.out), 1, "%s", r.out);
    cr_assert(strstr(r.out, "\"name\": \"q\\\"b\\\\s\\tt\""), "%s", r.out);
    cr_assert(strstr(r.out, "\"name\": \"\\u001b[31mred\""), "%s", r.out);
    result_free(&r);
    stop(&a);
}

/* ---- JSON --------------------------------------------------------------- */

Test(pcwdump, json_is_valid_and_complete)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Test Set", "alpha=5,1", "beta=18446744073709551615,255",
                               NULL});
    result r = run((const char *[]){"--json", "--compact", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_documents(r.out), 1, "%s", r.out);
    cr_assert(strncmp(r.out, "{\"pcwdump_version\":1,", 21) == 0, "%s", r.out);
    char want[PATH_MAX + 256];
    snprintf(want, sizeof want, "{\"path\":\"%s\",\"name\":\"Dump A\",\"pid\":%s,\"uid\":%u,",
             a.path, a.pid, (unsigned)geteuid());
    cr_assert(strstr(r.out, want), "%s\nnot in\n%s", want, r.out);
    cr_assert(strstr(r.out, "\"alive\":true,\"flags\":[\"area\"],\"countersets\":[{\"name\":\"Test Set\","
                            "\"description\":\"pcwdump test counterset\","
                            "\"guid\":\"{ab2e8dd5-6d3c-4a68-8b6b-4d2f3a1e0c11}\","
                            "\"instance_type\":\"multiple\""),
              "%s", r.out);
    cr_assert(strstr(r.out, "{\"id\":1,\"name\":\"Count\",\"description\":\"How many\","
                            "\"type\":65792,\"type_name\":\"PERF_COUNTER_LARGE_RAWCOUNT\","
                            "\"size\":8,\"block\":0,\"offset\":0,\"detail_level\":100,"
                            "\"aggregate\":\"undefined\",\"attributes\":[],\"default_scale\":0}"),
              "%s", r.out);
    cr_assert(strstr(r.out, "\"name\":\"Hits\",") && strstr(r.out, "\"base_id\":4,"), "%s", r.out);
    cr_assert(strstr(r.out, "\"type_name\":\"PERF_RAW_BASE\",\"size\":4,\"block\":0,"
                            "\"offset\":16,\"detail_level\":200,\"aggregate\":\"undefined\","
                            "\"attributes\":[\"noDisplay\"]"),
              "%s", r.out);
    /* base_id appears only where it is set: once. */
    cr_assert_null(strstr(strstr(r.out, "\"base_id\"") + 1, "\"base_id\""));
    cr_assert(strstr(r.out, "{\"id\":0,\"name\":\"alpha\",\"values\":{\"Count\":5,\"Flags\":1,"
                            "\"Hits\":2,\"Hits Base\":5}}"),
              "%s", r.out);
    cr_assert(strstr(r.out,
                     "{\"id\":1,\"name\":\"beta\",\"values\":{\"Count\":18446744073709551615,"
                     "\"Flags\":255,"),
              "%s", r.out);
    result_free(&r);

    /* Pretty JSON is the same document. */
    r = run((const char *[]){"--json", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(json_documents(r.out), 1);
    cr_assert(strstr(r.out, "\n  \"providers\": [\n"), "%s", r.out);
    result_free(&r);
    stop(&a);
}

Test(pcwdump, json_with_no_providers_is_empty_and_succeeds)
{
    result r = run((const char *[]){"--json", "--compact", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(json_documents(r.out), 1);
    cr_assert(strstr(r.out, "\"providers\":[]}"), "%s", r.out);
    result_free(&r);
    r = run((const char *[]){NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.err, "no providers"), "%s", r.err);
    result_free(&r);
}

/* ---- filters ------------------------------------------------------------ */

Test(pcwdump, filters_by_provider_pid_and_name)
{
    provider a, b;
    start(&a, (const char *[]){"Dump A", "Alpha Set", "one=1", NULL});
    start(&b, (const char *[]){"Dump B", "Beta Set", "two=2", NULL});
    result r = run((const char *[]){NULL});
    cr_assert(strstr(r.out, "Dump A") && strstr(r.out, "Dump B"));
    result_free(&r);

    r = run((const char *[]){"-p", a.pid, NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\"Dump A\"") && !strstr(r.out, "\"Dump B\""), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"--provider", "dump b", NULL}); /* case-insensitive */
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(!strstr(r.out, "\"Dump A\"") && strstr(r.out, "\"Dump B\""), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"-p", a.pid, "-p", "DUMP B", NULL}); /* alternatives */
    cr_assert(strstr(r.out, "\"Dump A\"") && strstr(r.out, "\"Dump B\""), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"-p", "no such provider", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.out, "");
    cr_assert(strstr(r.err, "nothing matches"), "%s", r.err);
    result_free(&r);
    stop(&a);
    stop(&b);
}

Test(pcwdump, filters_by_counterset_instance_and_counter)
{
    provider a, b;
    start(&a, (const char *[]){"Dump A", "Alpha Set", "one=1", "other=3", NULL});
    start(&b, (const char *[]){"Dump B", "Beta Set", "two=2", NULL});
    result r = run((const char *[]){"-c", "beta SET", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\"Beta Set\"") && !strstr(r.out, "Alpha Set"), "%s", r.out);
    cr_assert(!strstr(r.out, "Dump A"), "a provider without a matching counterset shows");
    result_free(&r);

    r = run((const char *[]){"-c", "*set", NULL});
    cr_assert(strstr(r.out, "\"Beta Set\"") && strstr(r.out, "\"Alpha Set\""), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"-c", "Gamma Set", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "nothing matches"), "%s", r.err);
    result_free(&r);

    r = run((const char *[]){"-p", b.pid, "-c", "Alpha Set", NULL}); /* both must hold */
    cr_assert_eq(r.status, 1);
    result_free(&r);

    r = run((const char *[]){"--json", "--compact", "-i", "O*", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\"name\":\"one\"") && strstr(r.out, "\"name\":\"other\"") &&
                  !strstr(r.out, "\"name\":\"two\""),
              "%s", r.out);
    cr_assert(!strstr(r.out, "Beta Set"), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"--json", "--compact", "-c", "Alpha Set", "--id", "1", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\"instances\":[{\"id\":1,\"name\":\"other\""), "%s", r.out);
    cr_assert(!strstr(r.out, "\"name\":\"one\""), "%s", r.out);
    result_free(&r);

    r = run(
        (const char *[]){"--json", "--compact", "-c", "Alpha Set", "--counters", "count, 4", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\"values\":{\"Count\":1,\"Hits Base\":1}"), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"--counters", "nonesuch", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "--counters"), "%s", r.err);
    result_free(&r);
    stop(&a);
    stop(&b);
}

/* ---- merged ------------------------------------------------------------- */

Test(pcwdump, merged_shows_instances_of_every_provider)
{
    provider a, b;
    start(&a, (const char *[]){"Dump A", "Shared Set", "from-a=10", NULL});
    start(&b, (const char *[]){"Dump B", "shared set", "from-b=20", NULL});
    result r = run((const char *[]){"--merged", "--json", "--compact", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_documents(r.out), 1, "%s", r.out);
    cr_assert(strstr(r.out, "\"countersets\":[{\"name\":\""), "%s", r.out);
    char want[128];
    snprintf(want, sizeof want, "\"name\":\"from-a\",\"pid\":%s,\"values\":{\"Count\":10,", a.pid);
    cr_assert(strstr(r.out, want), "%s\n%s", want, r.out);
    snprintf(want, sizeof want, "\"name\":\"from-b\",\"pid\":%s,\"values\":{\"Count\":20,", b.pid);
    cr_assert(strstr(r.out, want), "%s\n%s", want, r.out);
    cr_assert(strstr(r.out, "\"mismatched\":0"), "%s", r.out);
    result_free(&r);

    /* -p narrows the sources. */
    r = run((const char *[]){"--merged", "-p", b.pid, NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "from-b") && !strstr(r.out, "from-a"), "%s", r.out);
    cr_assert(strstr(r.out, "providers (1):"), "%s", r.out);
    result_free(&r);
    stop(&a);
    stop(&b);
}

/* ---- --segment and --check ---------------------------------------------- */

Test(pcwdump, segment_reads_one_file)
{
    provider a, b;
    start(&a, (const char *[]){"Dump A", "Alpha Set", "one=1", NULL});
    start(&b, (const char *[]){"Dump B", "Beta Set", "two=2", NULL});
    result r = run((const char *[]){"--segment", b.path, NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "Dump B") && !strstr(r.out, "Dump A"), "%s", r.out);
    result_free(&r);
    stop(&a);
    stop(&b);
}

Test(pcwdump, missing_segment_fails)
{
    result r = run((const char *[]){"--segment", "/nonexistent/x.seg", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.out, "");
    cr_assert(strstr(r.err, "pcwdump: /nonexistent/x.seg: system call failed"), "%s", r.err);
    result_free(&r);

    char junk[PATH_MAX];
    snprintf(junk, sizeof junk, "%s/junk.seg", tu_root);
    cr_assert_eq(tu_write_file(junk, "not a segment at all, just text", 31, 0600), 0);
    r = run((const char *[]){"--segment", junk, NULL});
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "segment is corrupted"), "%s", r.err);
    result_free(&r);
}

/* Copy a's segment, overwrite its first counterset with garbage. */
static void corrupt_copy(const provider *a, const char *dst)
{
    size_t len;
    unsigned char *b = tu_read_file(a->path, 1 << 24, &len);
    cr_assert(b && len > sizeof(pcw_seg_header));
    pcw_seg_header h;
    memcpy(&h, b, sizeof h);
    uint64_t cs = h.cset_head;
    cr_assert(cs && cs + sizeof(pcw_seg_cset) <= len);
    memset(b + cs, 0xA5, sizeof(pcw_seg_cset));
    cr_assert_eq(tu_write_file(dst, b, len, 0600), 0);
    free(b);
}

Test(pcwdump, check_reports_ok_and_corrupt)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Test Set", "one=1", NULL});
    result r = run((const char *[]){"--check", "--segment", a.path, NULL});
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    char want[3 * PATH_MAX];
    snprintf(want, sizeof want, "OK %s\n", a.path);
    cr_assert_str_eq(r.out, want);
    result_free(&r);

    char bad[PATH_MAX];
    snprintf(bad, sizeof bad, "%s/bad.seg", tu_root);
    corrupt_copy(&a, bad);
    r = run((const char *[]){"--check", "--segment", bad, NULL});
    cr_assert_eq(r.status, 1);
    snprintf(want, sizeof want, "CORRUPT %s: ", bad);
    cr_assert(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    result_free(&r);

    /* In the provider folder, next to the good one: the scan finds both
     * (a consumer would skip the bad one silently). */
    char inplace[2 * PATH_MAX];
    snprintf(inplace, sizeof inplace, "%s/999999-bad.seg", tu_provider_dir(geteuid()));
    corrupt_copy(&a, inplace);
    r = run((const char *[]){"--check", NULL});
    cr_assert_eq(r.status, 1);
    snprintf(want, sizeof want, "OK %s\n", a.path);
    cr_assert(strstr(r.out, want), "%s", r.out);
    snprintf(want, sizeof want, "CORRUPT %s: ", inplace);
    cr_assert(strstr(r.out, want), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"--check", "-p", a.pid, "--json", "--compact", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(json_documents(r.out), 1);
    snprintf(want, sizeof want, "{\"path\":\"%s\",\"status\":\"ok\"}],\"ok\":true}", a.path);
    cr_assert(strstr(r.out, want), "%s", r.out);
    result_free(&r);

    /* The listing itself skips what it cannot open and still succeeds. */
    r = run((const char *[]){NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "Dump A"));
    result_free(&r);
    stop(&a);
}

/* --check uses the consumer's own discovery: a provider folder the
 * consumer would refuse (writable by others, a symlink, owned by someone
 * else) is reported with what is wrong, and nothing inside it is trusted.
 * On 9ef2b5d --check listed such a folder without any check and called
 * the segment planted in it OK. */
Test(pcwdump, check_reports_untrusted_folders)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Test Set", "one=1", NULL});
    size_t len;
    unsigned char *bytes = tu_read_file(a.path, 1 << 24, &len);
    cr_assert(bytes);
    stop(&a);
    char dir[PATH_MAX], planted[2 * PATH_MAX], want[3 * PATH_MAX];
    snprintf(dir, sizeof dir, "%s/pcw-%u", tu_root, (unsigned)geteuid());
    snprintf(planted, sizeof planted, "%s/4242-0000000000000001.seg", dir);
    cr_assert_eq(tu_write_file(planted, bytes, len, 0600), 0);

    /* Writable by others. */
    cr_assert_eq(chmod(dir, 0777), 0);
    result r = run((const char *[]){"--check", NULL});
    cr_assert_eq(r.status, 1, "%s", r.out);
    snprintf(want, sizeof want, "ERROR %s: %s is writable by others", dir, dir);
    cr_assert(strstr(r.out, want), "%s", r.out);
    cr_assert(strstr(r.out, "PCW_DIR"), "says how to fix it: %s", r.out);
    cr_assert_null(strstr(r.out, "OK "), "%s", r.out);
    result_free(&r);
    r = run((const char *[]){"--check", "--json", "--compact", NULL});
    cr_assert_eq(r.status, 1);
    snprintf(want, sizeof want, "{\"path\":\"%s\",\"status\":\"error\",\"reason\":", dir);
    cr_assert(strstr(r.out, want), "%s", r.out);
    result_free(&r);
    cr_assert_eq(chmod(dir, 0700), 0);

    /* A symlink to a folder. */
    char real[PATH_MAX];
    snprintf(real, sizeof real, "%s/elsewhere", tu_root);
    cr_assert_eq(rename(dir, real), 0);
    cr_assert_eq(symlink(real, dir), 0);
    r = run((const char *[]){"--check", NULL});
    cr_assert_eq(r.status, 1, "%s", r.out);
    snprintf(want, sizeof want, "ERROR %s: %s is a symbolic link", dir, dir);
    cr_assert(strstr(r.out, want), "%s", r.out);
    cr_assert_null(strstr(r.out, "OK "), "%s", r.out);
    result_free(&r);
    cr_assert_eq(unlink(dir), 0);
    cr_assert_eq(rename(real, dir), 0);

    /* Someone else's: with --all-users, a folder named for another uid. */
    if (geteuid() == 0) {
        char other[PATH_MAX];
        snprintf(other, sizeof other, "%s/pcw-65534", tu_root);
        cr_assert_eq(rename(dir, other), 0);
        r = run((const char *[]){"--check", "--all-users", NULL});
        cr_assert_eq(r.status, 1, "%s", r.out);
        snprintf(want, sizeof want, "ERROR %s: %s is owned by uid 0, not uid 65534", other, other);
        cr_assert(strstr(r.out, want), "%s", r.out);
        cr_assert_null(strstr(r.out, "OK "), "%s", r.out);
        result_free(&r);
    }
    free(bytes);
}

/* ---- --watch, --remove-stale -------------------------------------------- */

Test(pcwdump, watch_repeats)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Test Set", "one=1", NULL});
    result r = run((const char *[]){"-c", "Test Set", "--watch", "0.05", "-n", "3", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "=== sample 1/3") && strstr(r.out, "=== sample 3/3"), "%s", r.out);
    cr_assert_null(strstr(r.out, "=== sample 4/"));
    result_free(&r);

    r = run((const char *[]){"--json", "--compact", "--watch", "0.05", "-n", "2", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(json_documents(r.out), 2, "%s", r.out);
    cr_assert(strstr(r.out, "\"sample\":2"), "%s", r.out);
    result_free(&r);
    stop(&a);
}

Test(pcwdump, remove_stale)
{
    provider a, b;
    start(&a, (const char *[]){"Dump A", "Test Set", "one=1", NULL});
    start(&b, (const char *[]){"Dump B", "Test Set", "two=2", NULL});
    kill(a.c.pid, SIGKILL);
    tu_finish(&a.c, 10000); /* reaped: its pid is gone */
    result r = run((const char *[]){NULL});
    char line[1024];
    cr_assert(line_with(r.out, "\"Dump A\"", line, sizeof line));
    cr_assert(strstr(line, "exited"), "%s", line);
    result_free(&r);

    r = run((const char *[]){"--remove-stale", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "removed 1 stale segment\n");
    cr_assert_neq(access(a.path, F_OK), 0);
    cr_assert_eq(access(b.path, F_OK), 0);
    result_free(&r);
    stop(&b);
}

/* ---- usage errors ------------------------------------------------------- */

Test(pcwdump, usage_errors_exit_2)
{
    static const struct {
        const char *args[4];
        const char *msg;
    } cases[] = {
        {{"--bogus"}, "unknown option '--bogus'"},
        {{"-x"}, "unknown option '-x'"},
        {{"-p"}, "option '-p' needs an argument"},
        {{"--dir"}, "option '--dir' needs an argument"},
        {{"--watch", "abc"}, "--watch: bad duration 'abc' (e.g. 5, 0.5, 500ms"},
        {{"--watch", "-1"}, "--watch: bad duration '-1'"},
        {{"--watch", "0"}, "--watch: bad duration '0'"},
        {{"--timeout", "0"}, "--timeout: bad duration '0' (1ms to 1h"},
        {{"-n", "0"}, "--count: must be at least 1"},
        {{"-n", "12x"}, "--count: '12x' is not a number"},
        {{"--id", "-3"}, "--id: '-3' is not a number"},
        {{"--id", "4294967296"}, "--id: 4294967296 is too large"},
        {{"--counters", "a,,b"}, "empty counter name"},
        {{"stray"}, "unexpected argument 'stray'"},
        {{"--merged", "--segment", "x"}, "cannot be combined"},
        {{"--compact"}, "--compact needs --json"},
        {{"-c", ""}, "non-empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = run(cases[i].args);
        cr_expect_eq(r.status, 2, "%s: status %d", cases[i].args[0], r.status);
        cr_expect(strstr(r.err, cases[i].msg), "%s: stderr: %s", cases[i].args[0], r.err);
        cr_expect(strstr(r.err, "pcwdump --help"), "%s", r.err);
        cr_expect_str_eq(r.out, "");
        result_free(&r);
    }
}

Test(pcwdump, help_and_version)
{
    result r = run((const char *[]){"--help", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "Usage: pcwdump"));
    cr_assert(strstr(r.out, "--check"));
    result_free(&r);
    r = run((const char *[]){"--version", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strncmp(r.out, "pcwdump ", 8) == 0, "%s", r.out);
    result_free(&r);
}

/* ---- issue 13: slow providers, one name twice, --counters ----------------- */

/* tests/helpers/slow_provider: NSETS callback countersets that answer only
 * when released ("blocked"), or at once ("free"). */
static void start_slow(tu_child *c, const char *name, const char *nsets, const char *mode)
{
    const char *args[] = {name, nsets, mode, NULL};
    cr_assert_eq(tu_spawn(c, "slow_provider", args), 0);
    char line[PATH_MAX + 16];
    cr_assert_geq(tu_readline(c, line, sizeof line, 10000), 0);
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s", line);
}

static void stop_slow(tu_child *c)
{
    int st = tu_finish(c, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "slow_provider: %d", st);
}

/* Item 12: one provider that does not answer in time no longer hides the
 * others' instances; the output says which provider failed and why. */
Test(pcwdump, merged_shows_the_providers_that_answered)
{
    tu_child slow, fast;
    start_slow(&slow, "Slow", "1", "blocked");
    start_slow(&fast, "Fast", "1", "free");
    char slow_pid[16];
    snprintf(slow_pid, sizeof slow_pid, "%d", (int)slow.pid);
    result r = run((const char *[]){"--merged", "-c", "Slow Set 1", "--timeout", "300", NULL});
    cr_assert_eq(r.status, 1, "a provider failed: status %d", r.status);
    cr_assert(strstr(r.out, "Fast-1"), "%s", r.out);
    cr_assert(strstr(r.out, "instances (1):"), "%s", r.out);
    char line[1024], want[64];
    snprintf(want, sizeof want, "provider %s \"Slow\"", slow_pid);
    cr_assert(line_with(r.out, want, line, sizeof line), "%s", r.out);
    cr_assert(strstr(line, "provider did not answer in time"), "%s", line);
    cr_assert_null(strstr(r.out, "could not be read"), "%s", r.out);
    result_free(&r);

    r = run((const char *[]){"--merged", "--json", "--compact", "-c", "Slow Set 1", "--timeout",
                             "300", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert_eq(json_documents(r.out), 1, "%s", r.out);
    cr_assert(strstr(r.out, "\"name\":\"Fast-1\""), "%s", r.out);
    snprintf(want, sizeof want, "\"pid\":%s,", slow_pid);
    const char *at = strstr(r.out, want);
    cr_assert(at, "%s", r.out);
    cr_assert(strstr(at, "\"error\":\"provider did not answer in time\"}"), "%s", r.out);
    result_free(&r);
    stop_slow(&slow);
    stop_slow(&fast);
}

/* Item 4 in pcwdump: four slow providers with two callback countersets
 * each cost one time limit, listed or merged, not one per provider or
 * counterset. */
Test(pcwdump, slow_providers_cost_one_time_limit)
{
    tu_child p[4];
    const char *names[4] = {"S1", "S2", "S3", "S4"};
    for (int i = 0; i < 4; i++)
        start_slow(&p[i], names[i], "2", "blocked");
    static const char *const forms[][4] = {{"--timeout", "1000", NULL},
                                           {"--merged", "--timeout", "1000", NULL}};
    for (size_t f = 0; f < 2; f++) {
        long long t0 = tu_now_ms();
        result r = run(forms[f]);
        long long took = tu_now_ms() - t0;
        cr_assert(took < 1900, "form %zu took %lld ms", f, took);
        cr_assert_eq(r.status, 1, "form %zu", f);
        /* Their segment countersets are shown all the same. */
        for (int i = 0; i < 4; i++)
            cr_assert(strstr(r.out, names[i]), "%s", r.out);
        result_free(&r);
    }
    for (int i = 0; i < 4; i++)
        stop_slow(&p[i]);
}

/* Item 13: a provider that registers one name twice, differing in case:
 * --merged shows both registrations' instances. */
Test(pcwdump, merged_shows_both_registrations_of_one_name)
{
    pcw_provider *prov;
    pcw_provider_options po = {.name = "Dup"};
    cr_assert_eq(pcw_provider_open(&prov, &po), PCW_OK);
    pcw_counter_desc c = pcw_counter_desc_default();
    c.id = 1, c.name = "V";
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = "Dup Set",
                                  .instance_type = PCW_MULTI_INSTANCE,
                                  .counter_count = 1,
                                  .counters = &c};
    pcw_registration *r1, *r2;
    cr_assert_eq(pcw_register(&r1, prov, &info), PCW_OK);
    info.name = "DUP SET";
    cr_assert_eq(pcw_register(&r2, prov, &info), PCW_OK);
    uint64_t v1 = 11, v2 = 22;
    pcw_data d1 = {&v1, sizeof v1}, d2 = {&v2, sizeof v2};
    pcw_instance *i1, *i2;
    cr_assert_eq(pcw_create_instance(&i1, r1, "first", 1, &d1), PCW_OK);
    cr_assert_eq(pcw_create_instance(&i2, r2, "second", 1, &d2), PCW_OK);

    result r = run((const char *[]){"--merged", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "instances (2):"), "%s", r.out);
    cr_assert(strstr(r.out, "first") && strstr(r.out, "second"), "%s", r.out);
    cr_assert(strstr(r.out, "providers (2):"), "%s", r.out);
    result_free(&r);
    r = run((const char *[]){"--merged", "--json", "--compact", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\"name\":\"first\"") && strstr(r.out, "\"name\":\"second\""), "%s",
              r.out);
    result_free(&r);
    pcw_provider_close(prov);
}

/* Item 14: --counters that names no counter prints the error alone. */
Test(pcwdump, counters_matching_nothing_print_only_the_error)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Alpha Set", "one=1", NULL});
    static const char *const forms[][5] = {{"--counters", "nosuch", NULL},
                                           {"--merged", "--counters", "nosuch", NULL},
                                           {"--json", "--counters", "nosuch", NULL},
                                           {"--counters", "nosuch", "-c", "Alpha Set", NULL}};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        result r = run(forms[f]);
        cr_assert_eq(r.status, 1, "form %zu", f);
        cr_assert_str_eq(r.out, "", "form %zu", f);
        cr_assert_str_eq(r.err, "pcwdump: --counters matches no counter\n", "form %zu", f);
        result_free(&r);
    }
    stop(&a);
}

/* A mistyped counterset or counter gets the nearest names, escaped; a
 * pattern, an id or a name far from every other gets none (issue 25,
 * item 12). */
Test(pcwdump, typos_get_the_nearest_names)
{
    provider a;
    start(&a, (const char *[]){"Dump A", "Alpha Set", "one=1", NULL});
    provider h;
    start(&h, (const char *[]){"Dump H", "Alpha\x1b]St", "two=2", NULL});
    result r = run((const char *[]){"-c", "Alpha St", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "pcwdump: -c \"Alpha St\": did you mean \"Alpha Set\" or "
                            "\"Alpha\\x1b]St\"?\npcwdump: nothing matches the filters\n");
    result_free(&r);
    r = run((const char *[]){"-c", "Alpha Set", "--counters", "Cuont", NULL});
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "pcwdump: --counters \"Cuont\": did you mean \"Count\"?\n"
                            "pcwdump: --counters matches no counter\n");
    result_free(&r);
    r = run((const char *[]){"--counters", "Hit", NULL}); /* the start of longer names */
    cr_assert_eq(r.status, 1);
    cr_assert_str_eq(r.err, "pcwdump: --counters \"Hit\": did you mean \"Hits\" or \"Hits Base\"?\n"
                            "pcwdump: --counters matches no counter\n");
    result_free(&r);
    static const char *const none[][5] = {
        {"-c", "Gamma*", NULL}, {"-c", "Zeta Zone", NULL}, {"--counters", "99", NULL}};
    for (size_t f = 0; f < sizeof none / sizeof none[0]; f++) {
        r = run(none[f]);
        cr_assert_eq(r.status, 1, "form %zu", f);
        cr_assert_null(strstr(r.err, "did you mean"), "form %zu: %s", f, r.err);
        result_free(&r);
    }
    stop(&h);
    stop(&a);
}

/* ---- histogram counters (PERF_PCW_HISTOGRAM) ------------------------------ */

static void hist_cmd(tu_child *c, const char *cmd)
{
    char reply[256];
    cr_assert(tu_command(c, reply, sizeof reply, cmd) > 0, "no reply to %s", cmd);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", cmd, reply);
}

/* tests/helpers/top_hist_provider with one instance "web", without
 * observations. */
static void hist_start(tu_child *c)
{
    cr_assert_eq(tu_spawn(c, "top_hist_provider", (const char *[]){NULL}), 0);
    char line[256];
    cr_assert(tu_readline(c, line, sizeof line, 10000) > 0, "top_hist_provider did not start");
    cr_assert(strncmp(line, "ready", 5) == 0, "%s", line);
    hist_cmd(c, "create web");
}

static void hist_stop(tu_child *c)
{
    tu_send(c, "quit");
    cr_assert_eq(tu_finish(c, 10000), 0);
}

/* A histogram's raw words: its type by name, its shape in the NOTES, its
 * count as the cell, and under the instances the sum, the zero bucket and
 * each non-empty bucket with its Prometheus index and bounds in seconds. */
Test(pcwdump, histogram_text_shows_shape_sum_zero_and_buckets)
{
    tu_child c;
    hist_start(&c);
    hist_cmd(&c, "observe web 1000000 980");     /* 1 ms: bucket -79 (2^-10, 2^-9.875] s */
    hist_cmd(&c, "observe web 20000000 20");     /* 20 ms: bucket -45 */
    hist_cmd(&c, "observe web 0 3");             /* the zero bucket */
    hist_cmd(&c, "observe web 9000000000000 1"); /* 9000 s: above 2^12, the last bucket */
    result r = run((const char *[]){"-c", "Hist Test", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char line[1024];
    cr_assert(line_with(r.out, "PERF_PCW_HISTOGRAM", line, sizeof line), "%s", r.out);
    cr_assert(strstr(line, "Latency") && strstr(line, "2704") &&
                  strstr(line, "histogram=unit:ns,schema:3,range:2^-30..2^12,buckets:336"),
              "%s", line);
    cr_assert(line_with(r.out, " web ", line, sizeof line), "%s", r.out);
    unsigned long long requests, count;
    cr_assert_eq(sscanf(line, " 0 web %llu %llu", &requests, &count), 2, "%s", line);
    cr_assert_eq(count, 1004, "%s", line);
    cr_assert(line_with(r.out, "Latency of 0 \"web\":", line, sizeof line), "%s", r.out);
    cr_assert(strstr(line, "count 1004  sum 9001380000000 ns  zero 3"), "%s", line);
    cr_assert(strstr(r.out, "zero      [0, 9.31323e-10 s]  3\n"), "%s", r.out);
    cr_assert(strstr(r.out, "bucket -79  (0.000976562 s, 0.00106495 s]  980\n"), "%s", r.out);
    cr_assert(strstr(r.out, "bucket -45  (0.0185814 s, 0.0202631 s]  20\n"), "%s", r.out);
    cr_assert(strstr(r.out, "bucket 96   (3756.05 s, 4096 s] and above  1\n"), "%s", r.out);
    /* Only the non-empty buckets. */
    const char *b = strstr(r.out, "histograms:");
    int n = 0;
    for (const char *p = b; p && (p = strstr(p, "bucket ")); p++)
        n++;
    cr_assert_eq(n, 3, "%s", b);
    result_free(&r);
    hist_stop(&c);
}

Test(pcwdump, histogram_json_has_shape_and_buckets)
{
    tu_child c;
    hist_start(&c);
    hist_cmd(&c, "observe web 1000000 980");
    hist_cmd(&c, "observe web 0 3");
    result r = run((const char *[]){"-c", "Hist Test", "--json", "--compact", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_documents(r.out), 1, "%s", r.out);
    cr_assert(strstr(r.out, "\"type_name\":\"PERF_PCW_HISTOGRAM\",\"size\":2704,"), "%s", r.out);
    cr_assert(strstr(r.out, "\"histogram\":{\"shape\":1277296907,\"unit\":\"ns\",\"schema\":3,"
                            "\"min_exp\":-30,\"max_exp\":12,\"buckets\":336,\"min_index\":-240,"
                            "\"zero_threshold\":9.3132257461547852e-10}"),
              "%s", r.out);
    cr_assert(strstr(r.out, "\"values\":{\"Requests\":983,\"Latency\":{\"sum\":980000000,"
                            "\"zero\":3,\"count\":983,\"buckets\":[{\"index\":-79,"
                            "\"lower\":0.0009765625,\"upper\":0.0010649489576809157,"
                            "\"count\":980}]}}"),
              "%s", r.out);
    result_free(&r);
    hist_stop(&c);
}

/* Hostile words: buckets whose sum does not fit 64 bits, a sum that
 * disagrees with them. pcwdump shows them as they are, the count
 * saturated and said to be, and does not crash. */
Test(pcwdump, histogram_hostile_words_saturate_the_count)
{
    tu_child c;
    hist_start(&c);
    hist_cmd(&c, "poke web 0 7");
    hist_cmd(&c, "poke web 2 18446744073709551615");
    hist_cmd(&c, "poke web 337 18446744073709551615");
    result r = run((const char *[]){"-c", "Hist Test", NULL});
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char line[1024];
    cr_assert(line_with(r.out, "Latency of 0 \"web\":", line, sizeof line), "%s", r.out);
    cr_assert(strstr(line, "count >=18446744073709551615  sum 7 ns  zero 0"), "%s", line);
    cr_assert(strstr(r.out, "bucket -239 (9.31323e-10 s, 1.01561e-09 s]  18446744073709551615\n"),
              "%s", r.out);
    cr_assert(strstr(r.out, "bucket 96   (3756.05 s, 4096 s] and above  18446744073709551615\n"),
              "%s", r.out);
    result_free(&r);
    r = run((const char *[]){"-c", "Hist Test", "--json", "--compact", NULL});
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_documents(r.out), 1, "%s", r.out);
    cr_assert(strstr(r.out, "\"Latency\":{\"sum\":7,\"zero\":0,\"count\":18446744073709551615,"
                            "\"count_overflow\":true,\"buckets\":[{\"index\":-239,"),
              "%s", r.out);
    result_free(&r);
    hist_stop(&c);
}
