/* SPDX-License-Identifier: MIT */
/*
 * tests/test_query_path.c - counter paths: parsing every well-formed shape,
 * refusing every malformed one with an error that names the part, and
 * building paths back.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "pcw/pdh.h"

static pcw_path parse_ok(const char *text)
{
    pcw_path p;
    pcw_path_error err;
    int rc = pcw_path_parse(text, &p, &err);
    cr_assert_eq(rc, PCW_OK, "parse \"%s\": %d %s", text, rc, err.message);
    return p;
}

static void parse_bad(const char *text, int status, int part, const char *needle)
{
    pcw_path p;
    pcw_path_error err;
    int rc = pcw_path_parse(text, &p, &err);
    cr_assert_eq(rc, status, "parse \"%s\": rc %d, want %d (%s)", text, rc, status, err.message);
    cr_assert_eq(err.status, status);
    cr_assert_eq(err.part, part, "parse \"%s\": part %d, want %d (%s)", text, err.part, part,
                 err.message);
    cr_assert(strstr(err.message, needle), "parse \"%s\": message \"%s\" lacks \"%s\"", text,
              err.message, needle);
    cr_assert_null(p.storage_);
}

Test(path, full_form)
{
    pcw_path p = parse_ok("\\Web Server(example.org)\\Requests/sec");
    cr_assert_null(p.host);
    cr_assert_str_eq(p.counterset, "Web Server");
    cr_assert_str_eq(p.instance, "example.org");
    cr_assert_eq(p.has_index, 0);
    cr_assert_eq(p.index, 0);
    cr_assert_str_eq(p.counter, "Requests/sec");
    cr_assert_eq(p.wild, 0);
    pcw_path_free(&p);
}

Test(path, no_instance)
{
    pcw_path p = parse_ok("\\Memory\\Available Bytes");
    cr_assert_str_eq(p.counterset, "Memory");
    cr_assert_null(p.instance);
    cr_assert_str_eq(p.counter, "Available Bytes");
    pcw_path_free(&p);
}

Test(path, index)
{
    pcw_path p = parse_ok("\\Worker(job#1)\\Items");
    cr_assert_str_eq(p.instance, "job");
    cr_assert_eq(p.has_index, 1);
    cr_assert_eq(p.index, 1);
    pcw_path_free(&p);
    p = parse_ok("\\Worker(job#0)\\Items");
    cr_assert_str_eq(p.instance, "job");
    cr_assert_eq(p.has_index, 1);
    cr_assert_eq(p.index, 0);
    pcw_path_free(&p);
    p = parse_ok("\\Worker(job#4294967295)\\Items");
    cr_assert_eq(p.index, 4294967295u);
    pcw_path_free(&p);
    /* Only the last "#digits" is the index: an instance literally named
     * "build#3" is written "build#3#0". */
    p = parse_ok("\\Worker(build#3#0)\\Items");
    cr_assert_str_eq(p.instance, "build#3");
    cr_assert_eq(p.index, 0);
    pcw_path_free(&p);
    /* '#' not followed by digits up to the end is part of the name. */
    p = parse_ok("\\Lang(C#)\\Users");
    cr_assert_str_eq(p.instance, "C#");
    cr_assert_eq(p.has_index, 0);
    pcw_path_free(&p);
    p = parse_ok("\\Lang(C#x1)\\Users");
    cr_assert_str_eq(p.instance, "C#x1");
    pcw_path_free(&p);
    /* An index with no name: the n-th unnamed instance (a set without
     * instances published by several providers). */
    p = parse_ok("\\Memory(#2)\\Available Bytes");
    cr_assert_str_eq(p.instance, "");
    cr_assert_eq(p.index, 2);
    pcw_path_free(&p);
}

/* PDH's (ParentInstance/ObjectInstance#InstanceIndex): the instance part
 * splits at its first '/'; `instance` keeps the whole pcw name. */
Test(path, parent_instance)
{
    pcw_path p = parse_ok("\\Thread(explorer/0#1)\\% Processor Time");
    cr_assert_str_eq(p.instance, "explorer/0");
    cr_assert_str_eq(pcw_path_parent_instance(&p), "explorer");
    cr_assert_str_eq(pcw_path_object_instance(&p), "0");
    cr_assert_eq(p.has_index, 1);
    cr_assert_eq(p.index, 1);
    cr_assert_str_eq(p.counter, "% Processor Time");
    pcw_path_free(&p);
    /* The first '/' only: the object instance may hold more. */
    p = parse_ok("\\T(a/b/c#2)\\C");
    cr_assert_str_eq(pcw_path_parent_instance(&p), "a");
    cr_assert_str_eq(pcw_path_object_instance(&p), "b/c");
    cr_assert_eq(p.index, 2);
    pcw_path_free(&p);
    /* Wildcards on either side. */
    p = parse_ok("\\T(*/c)\\C");
    cr_assert_str_eq(pcw_path_parent_instance(&p), "*");
    cr_assert_str_eq(pcw_path_object_instance(&p), "c");
    cr_assert_eq(p.wild, PCW_PATH_WILD_INSTANCE);
    pcw_path_free(&p);
    /* Empty sides name the empty parent or instance of "/x" and "x/". */
    p = parse_ok("\\T(/x)\\C");
    cr_assert_str_eq(pcw_path_parent_instance(&p), "");
    cr_assert_str_eq(pcw_path_object_instance(&p), "x");
    pcw_path_free(&p);
    /* No '/': no parent. No instance part: neither. */
    p = parse_ok("\\T(job)\\C");
    cr_assert_null(pcw_path_parent_instance(&p));
    cr_assert_str_eq(pcw_path_object_instance(&p), "job");
    pcw_path_free(&p);
    p = parse_ok("\\Memory\\Free");
    cr_assert_null(pcw_path_parent_instance(&p));
    cr_assert_null(pcw_path_object_instance(&p));
    pcw_path_free(&p);
    cr_assert_null(pcw_path_parent_instance(NULL));
    /* Not filled by pcw_path_parse: no storage holds a parent. */
    pcw_path hand = {.counterset = "T", .instance = "a/b", .counter = "C"};
    cr_assert_null(pcw_path_parent_instance(&hand));
    cr_assert_str_eq(pcw_path_object_instance(&hand), "b");
    cr_assert_null(pcw_path_object_instance(NULL));
}

Test(path, wildcards)
{
    pcw_path p = parse_ok("\\Web Server(*)\\*");
    cr_assert_str_eq(p.instance, "*");
    cr_assert_str_eq(p.counter, "*");
    cr_assert_eq(p.wild, PCW_PATH_WILD_INSTANCE | PCW_PATH_WILD_COUNTER);
    pcw_path_free(&p);
    p = parse_ok("\\Web*\\Req?ests");
    cr_assert_eq(p.wild, PCW_PATH_WILD_COUNTERSET | PCW_PATH_WILD_COUNTER);
    pcw_path_free(&p);
    p = parse_ok("\\Worker(job*#1)\\Items");
    cr_assert_str_eq(p.instance, "job*");
    cr_assert_eq(p.index, 1);
    cr_assert_eq(p.wild, PCW_PATH_WILD_INSTANCE);
    pcw_path_free(&p);
}

Test(path, host)
{
    char path[512];
    snprintf(path, sizeof path, "\\\\%s\\Memory\\Free", pcw_path_local_host());
    pcw_path p = parse_ok(path);
    cr_assert_str_eq(p.host, pcw_path_local_host());
    cr_assert_str_eq(p.counterset, "Memory");
    pcw_path_free(&p);
    p = parse_ok("\\\\localhost\\Memory\\Free");
    cr_assert_str_eq(p.host, "localhost");
    pcw_path_free(&p);
    p = parse_ok("\\\\LOCALHOST\\Memory\\Free");
    pcw_path_free(&p);
    p = parse_ok("\\\\.\\Memory(x)\\Free");
    cr_assert_str_eq(p.host, ".");
    cr_assert_str_eq(p.instance, "x");
    pcw_path_free(&p);
}

/* The host part names a container (docs/containers.md, "Paths"): 12 to 64
 * hex digits of its id, or ns:<inode>; \\* is every provider; this
 * machine's names keep their meaning (no container). */
Test(path, container_host)
{
    pcw_path p = parse_ok("\\\\0123456789aB\\Set(i)\\C");
    cr_assert_str_eq(p.host, "0123456789aB");
    cr_assert_str_eq(p.container, "0123456789aB");
    cr_assert_eq(p.wild, 0);
    pcw_path_free(&p);
    char id[80];
    snprintf(id, sizeof id, "\\\\%064d\\Set\\C", 7);
    p = parse_ok(id);
    cr_assert_eq(strlen(p.container), 64);
    pcw_path_free(&p);
    p = parse_ok("\\\\ns:4026532841\\Set\\C");
    cr_assert_str_eq(p.container, "ns:4026532841");
    pcw_path_free(&p);
    p = parse_ok("\\\\*\\Set(*)\\C");
    cr_assert_str_eq(p.host, "*");
    cr_assert_null(p.container);
    cr_assert_eq(p.wild, PCW_PATH_WILD_HOST | PCW_PATH_WILD_INSTANCE);
    pcw_path_free(&p);
    p = parse_ok("\\\\localhost\\Set\\C");
    cr_assert_null(p.container);
    cr_assert_eq(p.wild, 0);
    pcw_path_free(&p);
    snprintf(id, sizeof id, "\\\\%065d\\Set\\C", 7); /* 65 digits: too long for an id */
    parse_bad(id, PCW_E_NOT_FOUND, PCW_PATH_HOST, "nor a container");
}

Test(path, names_with_specials)
{
    /* Instance names may hold parentheses and backslashes: the instance
     * runs from the first '(' to the ')' before the last '\'. */
    pcw_path p = parse_ok("\\Proc(a(b)c)\\Time");
    cr_assert_str_eq(p.instance, "a(b)c");
    pcw_path_free(&p);
    p = parse_ok("\\Proc(C:\\dir\\x)\\Time");
    cr_assert_str_eq(p.instance, "C:\\dir\\x");
    pcw_path_free(&p);
    p = parse_ok("\\Proc(a)(b)\\Time");
    cr_assert_str_eq(p.instance, "a)(b");
    pcw_path_free(&p);
    /* Counters may hold parentheses, '%', '/', '#'. */
    p = parse_ok("\\Disk(0)\\% Idle Time (avg)/s #2");
    cr_assert_str_eq(p.counter, "% Idle Time (avg)/s #2");
    pcw_path_free(&p);
    /* UTF-8 names. */
    p = parse_ok("\\Сервер(узел)\\Запросы");
    cr_assert_str_eq(p.counterset, "Сервер");
    cr_assert_str_eq(p.instance, "узел");
    cr_assert_str_eq(p.counter, "Запросы");
    pcw_path_free(&p);
    /* Spaces are significant, as in PDH. */
    p = parse_ok("\\ Set ( i )\\ C ");
    cr_assert_str_eq(p.counterset, " Set ");
    cr_assert_str_eq(p.instance, " i ");
    cr_assert_str_eq(p.counter, " C ");
    pcw_path_free(&p);
}

Test(path, malformed_whole)
{
    parse_bad("", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "empty path");
    parse_bad("Set\\Counter", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "starts with");
    parse_bad("Set(i)\\Counter", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "starts with");
    parse_bad("/Set/Counter", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "starts with");
    parse_bad(" \\Set\\Counter", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "starts with");
    parse_bad("\\Set\xff\\Counter", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "UTF-8");
    parse_bad("\\Set\\Count\xc3", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "UTF-8");
    parse_bad("\\Set\\\xed\xa0\x80", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "UTF-8"); /* surrogate */
    parse_bad("\\Set\\\xc0\xaf", PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, "UTF-8");     /* overlong */
}

Test(path, too_long)
{
    static char big[PCW_PATH_MAX + 10];
    memset(big, 'a', sizeof big - 1);
    big[0] = '\\';
    big[5] = '\\';
    big[sizeof big - 1] = 0;
    parse_bad(big, PCW_E_NAME_TOO_LONG, PCW_PATH_SYNTAX, "longer than");
    /* Exactly the limit is fine. */
    big[PCW_PATH_MAX] = 0;
    pcw_path p = parse_ok(big);
    cr_assert_eq(strlen(p.counterset), 4);
    pcw_path_free(&p);
}

Test(path, malformed_host)
{
    parse_bad("\\\\", PCW_E_INVALID_NAME, PCW_PATH_HOST, "empty host");
    parse_bad("\\\\\\Set\\C", PCW_E_INVALID_NAME, PCW_PATH_HOST, "empty host");
    parse_bad("\\\\localhost", PCW_E_INVALID_NAME, PCW_PATH_HOST, "nothing follows host");
    parse_bad("\\\\no-such-host.invalid\\Set\\C", PCW_E_NOT_FOUND, PCW_PATH_HOST,
              "is not this machine");
    parse_bad("\\\\*x\\Set\\C", PCW_E_INVALID_NAME, PCW_PATH_HOST, "wildcards");
    parse_bad("\\\\0123456789a*\\Set\\C", PCW_E_INVALID_NAME, PCW_PATH_HOST, "wildcards");
    /* Too short for a container id (12 hex digits at least), not hex, an
     * "ns:" without its number: neither this machine nor a container. */
    parse_bad("\\\\0123456789a\\Set\\C", PCW_E_NOT_FOUND, PCW_PATH_HOST, "nor a container");
    parse_bad("\\\\0123456789ag\\Set\\C", PCW_E_NOT_FOUND, PCW_PATH_HOST, "nor a container");
    parse_bad("\\\\ns:\\Set\\C", PCW_E_NOT_FOUND, PCW_PATH_HOST, "nor a container");
    parse_bad("\\\\ns:12x\\Set\\C", PCW_E_NOT_FOUND, PCW_PATH_HOST, "nor a container");
    parse_bad("\\\\local?ost\\Set\\C", PCW_E_INVALID_NAME, PCW_PATH_HOST, "wildcards");
}

Test(path, malformed_counterset)
{
    parse_bad("\\\\Set", PCW_E_INVALID_NAME, PCW_PATH_HOST, "nothing follows host");
    parse_bad("\\\\C", PCW_E_INVALID_NAME, PCW_PATH_HOST, "nothing follows host");
    parse_bad("\\(i)\\C", PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, "empty counterset");
    parse_bad("\\\\localhost\\\\C", PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, "empty counterset");
    parse_bad("\\Se)t\\C", PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, "')' without '('");
    parse_bad("\\Set)(i)\\C", PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, "')' without '('");
    parse_bad("\\Set\\Sub\\C", PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, "'\\' inside counterset");
}

Test(path, malformed_counter)
{
    parse_bad("\\", PCW_E_INVALID_NAME, PCW_PATH_COUNTER, "no counter");
    parse_bad("\\Set", PCW_E_INVALID_NAME, PCW_PATH_COUNTER, "no counter");
    parse_bad("\\Set(i)", PCW_E_INVALID_NAME, PCW_PATH_COUNTER, "no counter");
    parse_bad("\\Set\\", PCW_E_INVALID_NAME, PCW_PATH_COUNTER, "empty counter");
    parse_bad("\\Set(i)\\", PCW_E_INVALID_NAME, PCW_PATH_COUNTER, "empty counter");
    parse_bad("\\\\localhost\\Set", PCW_E_INVALID_NAME, PCW_PATH_COUNTER, "no counter");
}

Test(path, malformed_instance)
{
    parse_bad("\\Set(\\C", PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, "without a closing");
    parse_bad("\\Set(i\\C", PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, "without a closing");
    parse_bad("\\Set(i)x\\C", PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, "without a closing");
    parse_bad("\\Set(i) \\C", PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, "without a closing");
    parse_bad("\\Set()\\C", PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, "empty instance");
    parse_bad("\\Set(\\C)", PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, "without a closing");
}

Test(path, malformed_index)
{
    parse_bad("\\Set(i#01)\\C", PCW_E_INVALID_NAME, PCW_PATH_INDEX, "leading zero");
    parse_bad("\\Set(i#00)\\C", PCW_E_INVALID_NAME, PCW_PATH_INDEX, "leading zero");
    parse_bad("\\Set(i#4294967296)\\C", PCW_E_INVALID_NAME, PCW_PATH_INDEX, "too large");
    parse_bad("\\Set(i#99999999999999999999999)\\C", PCW_E_INVALID_NAME, PCW_PATH_INDEX,
              "too large");
}

Test(path, error_offsets)
{
    pcw_path p;
    pcw_path_error err;
    cr_assert_eq(pcw_path_parse("\\Set(i#01)\\C", &p, &err), PCW_E_INVALID_NAME);
    cr_assert_eq(err.offset, 6); /* the '#' */
    cr_assert_eq(pcw_path_parse("\\Se)t\\C", &p, &err), PCW_E_INVALID_NAME);
    cr_assert_eq(err.offset, 3);
    cr_assert_eq(pcw_path_parse("\\Set\\\xff", &p, &err), PCW_E_INVALID_NAME);
    cr_assert_eq(err.offset, 5);
    cr_assert_eq(pcw_path_parse("\\(i)\\C", &p, &err), PCW_E_INVALID_NAME);
    cr_assert_eq(err.offset, 1);
}

Test(path, null_arguments)
{
    pcw_path p;
    pcw_path_error err;
    cr_assert_eq(pcw_path_parse(NULL, &p, &err), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_path_parse("\\S\\C", NULL, &err), PCW_E_INVALID_PARAMETER);
    cr_assert_eq(pcw_path_parse("\\S\\C", &p, NULL), PCW_OK); /* err is optional */
    pcw_path_free(&p);
    pcw_path_free(NULL);
}

Test(path, build)
{
    char buf[256];
    size_t n = pcw_path_build(buf, sizeof buf, NULL, "Worker", "job", 1, "Items");
    cr_assert_str_eq(buf, "\\Worker(job#1)\\Items");
    cr_assert_eq(n, strlen(buf));
    pcw_path_build(buf, sizeof buf, "host", "Memory", NULL, 0, "Free");
    cr_assert_str_eq(buf, "\\\\host\\Memory\\Free");
    pcw_path_build(buf, sizeof buf, NULL, "Worker", "job", 0, "Items");
    cr_assert_str_eq(buf, "\\Worker(job)\\Items");
    pcw_path_build(buf, sizeof buf, NULL, "Memory", "", 2, "Free");
    cr_assert_str_eq(buf, "\\Memory(#2)\\Free");
    /* Truncation behaves like snprintf. */
    char small[8];
    n = pcw_path_build(small, sizeof small, NULL, "Worker", "job", 1, "Items");
    cr_assert_eq(n, strlen("\\Worker(job#1)\\Items"));
    cr_assert_eq(strlen(small), sizeof small - 1);
    cr_assert_eq(memcmp(small, "\\Worker", 7), 0);
    cr_assert_eq(pcw_path_build(NULL, 0, NULL, "S", NULL, 0, "C"), 4);
}

Test(path, build_parse_round_trip)
{
    const char *sets[] = {"Web Server", "a", "Сервер"};
    const char *insts[] = {NULL, "x", "a(b)c", "C:\\dir", "build#3", "*", "p/i/j"};
    const char *ctrs[] = {"Requests", "% Time (x)", "#1"};
    for (size_t s = 0; s < 3; s++)
        for (size_t i = 0; i < 7; i++)
            for (size_t c = 0; c < 3; c++)
                for (uint32_t idx = 0; idx < 3; idx++) {
                    char buf[256];
                    /* A name ending in "#digits" needs an explicit index
                     * to round-trip: write #0. */
                    int needs_zero = insts[i] && strcmp(insts[i], "build#3") == 0 && idx == 0;
                    if (needs_zero) {
                        snprintf(buf, sizeof buf, "\\%s(%s#0)\\%s", sets[s], insts[i], ctrs[c]);
                    } else {
                        pcw_path_build(buf, sizeof buf, NULL, sets[s], insts[i], insts[i] ? idx : 0,
                                       ctrs[c]);
                    }
                    pcw_path p = parse_ok(buf);
                    cr_assert_str_eq(p.counterset, sets[s]);
                    cr_assert_str_eq(p.counter, ctrs[c]);
                    if (insts[i]) {
                        cr_assert_str_eq(p.instance, insts[i], "%s", buf);
                        cr_assert_eq(p.index, idx, "%s", buf);
                    } else {
                        cr_assert_null(p.instance);
                    }
                    pcw_path_free(&p);
                }
}
