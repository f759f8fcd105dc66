/* SPDX-License-Identifier: MIT */
/*
 * lib/query/path.c - counter paths: parse, build, this machine's name.
 *
 * The grammar is PDH's (PdhParseCounterPath):
 *
 *   path     = [ "\\" host ] "\" set [ "(" [ parent "/" ] instance [ "#" index ] ")" ] "\" counter
 *
 * The host names this machine (".", "localhost", its name: every provider
 * the query finds, as PDH's local machine), "*" (every provider, said
 * explicitly), or a container: 12 to 64 hex digits of its id, or
 * "ns:<inode>" (pcw__q_host_kind; container.c resolves it when the path is
 * added; docs/containers.md, "Paths").
 *
 * pcw's instances are strings, as PCW's are; PDH's parent instance maps to
 * the part of a name before its first '/' (docs/query.md, "Parent
 * instances"), so "(parent/instance)" names the instance "parent/instance"
 * and the split matters only to wildcards (pcw__q_instance_match).
 *
 * Names may hold almost anything, so the split is positional, as PDH's is:
 * the counter is what follows the last '\'; the counterset part runs from
 * the '\' after the host to that last '\'; if it holds a '(' the instance
 * runs from the first '(' to the ')' that must end the part. A trailing
 * "#digits" of the instance is the index. Every error names the part and
 * its byte offset.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "path.h"
#include "common/name.h"

int pcw__q_fail(pcw_path_error *err, int status, int part, size_t offset, const char *fmt, ...)
{
    if (err) {
        err->status = status;
        err->part = part;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

void pcw__q_path_error_clear(pcw_path_error *err)
{
    if (err) {
        err->status = PCW_OK;
        err->part = PCW_PATH_SYNTAX;
        err->offset = 0;
        err->message[0] = 0;
    }
}

const char *pcw_path_local_host(void)
{
    /* Computed once per process; the host name is not expected to change
     * under a running consumer (and a stale one only affects matching of
     * an explicit \\host prefix). Racing first calls compute the same
     * bytes. */
    static char host[256];
    static int done;
    if (!done) {
        char h[256];
        if (gethostname(h, sizeof h - 1) != 0 || !h[0])
            snprintf(h, sizeof h, "localhost");
        h[sizeof h - 1] = 0;
        memcpy(host, h, sizeof host);
        done = 1;
    }
    return host;
}

/* Does `h` (n bytes) name this machine? */
static int is_local_host(const char *h, size_t n)
{
    const char *me = pcw_path_local_host();
    size_t ml = strlen(me), shortl = strcspn(me, ".");
    return (n == 1 && h[0] == '.') || pcw__name_equal(h, n, "localhost", 9) ||
           pcw__name_equal(h, n, me, ml) || pcw__name_equal(h, n, me, shortl);
}

/* A container's name in a path: 12 to 64 hex digits (a prefix of its id,
 * as docker accepts one) or "ns:<digits>" (the inode of a mount namespace
 * no runtime named, as the tools show it). */
static int is_container_name(const char *h, size_t n)
{
    if (n > 3 && memcmp(h, "ns:", 3) == 0) {
        for (size_t i = 3; i < n; i++)
            if (h[i] < '0' || h[i] > '9')
                return 0;
        return n - 3 <= 20;
    }
    if (n < 12 || n > 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f') ||
              (h[i] >= 'A' && h[i] <= 'F')))
            return 0;
    return 1;
}

int pcw__q_host_kind(const char *h, size_t n)
{
    /* This machine's names first: inside a Docker container the host name
     * is the container's short id, and there it names the container
     * itself, this machine, as it always did. */
    if (is_local_host(h, n))
        return PCW__Q_HOST_LOCAL;
    if (n == 1 && h[0] == '*')
        return PCW__Q_HOST_ANY;
    if (is_container_name(h, n))
        return PCW__Q_HOST_CONTAINER;
    return -1;
}

static int has_wild(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == '*' || s[i] == '?')
            return 1;
    return 0;
}

/* The last '#' and the digits after it, if they run to the end: the
 * index. Returns 1 and sets *at (offset of '#') when there is an index
 * candidate, 0 otherwise. */
static int find_index(const char *s, size_t n, size_t *at)
{
    size_t i = n;
    while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
        i--;
    if (i == n || i == 0 || s[i - 1] != '#')
        return 0;
    *at = i - 1;
    return 1;
}

int pcw__q_instance_match(const char *pat, const char *name, size_t len)
{
    size_t m = strlen(pat);
    const char *ps = memchr(pat, '/', m);
    if (!ps)
        return pcw__wildcard_match(pat, m, name, len);
    const char *ns = memchr(name, '/', len);
    if (!ns)
        return 0;
    size_t pp = (size_t)(ps - pat), np = (size_t)(ns - name);
    return pcw__wildcard_match(pat, pp, name, np) &&
           pcw__wildcard_match(ps + 1, m - pp - 1, ns + 1, len - np - 1);
}

const char *pcw_path_parent_instance(const pcw_path *p)
{
    /* pcw_path_parse copies the parent after the counter, in storage_: a
     * pcw_path filled by hand has none. */
    if (!p || !p->storage_ || !p->instance || !p->counter || !strchr(p->instance, '/'))
        return NULL;
    return p->counter + strlen(p->counter) + 1;
}

const char *pcw_path_object_instance(const pcw_path *p)
{
    if (!p || !p->instance)
        return NULL;
    const char *slash = strchr(p->instance, '/');
    return slash ? slash + 1 : p->instance;
}

void pcw_path_free(pcw_path *p)
{
    if (!p)
        return;
    free(p->storage_);
    memset(p, 0, sizeof *p);
}

int pcw_path_parse(const char *text, pcw_path *out, pcw_path_error *err)
{
    pcw__q_path_error_clear(err);
    if (out)
        memset(out, 0, sizeof *out);
    if (!text || !out)
        return pcw__q_fail(err, PCW_E_INVALID_PARAMETER, PCW_PATH_SYNTAX, 0, "no path given");
    size_t n = strnlen(text, PCW_PATH_MAX + 1);
    if (n > PCW_PATH_MAX)
        return pcw__q_fail(err, PCW_E_NAME_TOO_LONG, PCW_PATH_SYNTAX, PCW_PATH_MAX,
                           "path is longer than %u bytes", PCW_PATH_MAX);
    if (n == 0)
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, 0,
                           "empty path (expected \\Counterset(Instance)\\Counter)");
    for (size_t i = 0; i < n;) {
        size_t at = i;
        if (pcw__utf8_next(text, n, &i) < 0)
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, at,
                               "path is not valid UTF-8 (byte %zu)", at);
    }
    if (text[0] != '\\')
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_SYNTAX, 0,
                           "a counter path starts with '\\' (\\Counterset(Instance)\\Counter), not "
                           "\"%.40s\"",
                           text);

    /* \\host */
    size_t pos = 0, host_at = 0, host_len = 0;
    int has_host = 0, host_kind = PCW__Q_HOST_LOCAL;
    if (n >= 2 && text[1] == '\\') {
        has_host = 1;
        host_at = 2;
        const char *slash = memchr(text + 2, '\\', n - 2);
        host_len = slash ? (size_t)(slash - (text + 2)) : n - 2;
        if (host_len == 0)
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_HOST, 2,
                               "empty host name after \"\\\\\"");
        if (!slash)
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_HOST, 2,
                               "nothing follows host \"%.*s\": expected \\Counterset\\Counter",
                               (int)(host_len > 200 ? 200 : host_len), text + 2);
        host_kind = pcw__q_host_kind(text + 2, host_len);
        if (host_kind < 0 && has_wild(text + 2, host_len))
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_HOST, 2,
                               "wildcards are not allowed in the host name \"%.*s\" (\\\\* alone "
                               "is every provider)",
                               (int)(host_len > 200 ? 200 : host_len), text + 2);
        if (host_kind < 0)
            return pcw__q_fail(err, PCW_E_NOT_FOUND, PCW_PATH_HOST, 2,
                               "host \"%.*s\" is not this machine (\"%s\") nor a container (12 to "
                               "64 hex digits of its id, or ns:<inode>): pcw reads local counters "
                               "only",
                               (int)(host_len > 200 ? 200 : host_len), text + 2,
                               pcw_path_local_host());
        pos = 2 + host_len;
    }
    /* text[pos] == '\\' */
    const char *last = text + n;
    while (last > text + pos + 1 && last[-1] != '\\')
        last--;
    size_t last_slash = (size_t)(last - text) - 1;
    if (last_slash == pos)
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_COUNTER, n,
                           "no counter: a path ends with \\Counter (\\Counterset\\Counter)");
    size_t ctr_at = last_slash + 1, ctr_len = n - ctr_at;
    if (ctr_len == 0)
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_COUNTER, ctr_at,
                           "empty counter name after the last '\\'");

    /* The counterset part: text[pos+1 .. last_slash) */
    size_t set_at = pos + 1, part_end = last_slash;
    const char *open = memchr(text + set_at, '(', part_end - set_at);
    size_t set_len = open ? (size_t)(open - (text + set_at)) : part_end - set_at;
    if (set_len == 0)
        return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, set_at,
                           "empty counterset name");
    for (size_t i = set_at; i < set_at + set_len; i++) {
        if (text[i] == ')')
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, i,
                               "')' without '(' in counterset \"%.*s\"",
                               (int)(set_len > 200 ? 200 : set_len), text + set_at);
        if (text[i] == '\\')
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_COUNTERSET, i,
                               "'\\' inside counterset \"%.*s\" (an instance goes in parentheses: "
                               "\\Counterset(Instance)\\Counter)",
                               (int)(set_len > 200 ? 200 : set_len), text + set_at);
    }
    size_t inst_at = 0, inst_len = 0, idx_at = 0;
    int has_inst = 0, has_idx = 0;
    unsigned long long idx = 0;
    if (open) {
        has_inst = 1;
        inst_at = (size_t)(open - text) + 1;
        if (text[part_end - 1] != ')')
            return pcw__q_fail(
                err, PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, inst_at - 1,
                "'(' without a closing ')' before the counter (\\Counterset(Instance)"
                "\\Counter)");
        if (part_end - 1 < inst_at)
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, inst_at - 1,
                               "'(' without a closing ')' before the counter");
        inst_len = part_end - 1 - inst_at;
        size_t h;
        if (find_index(text + inst_at, inst_len, &h)) {
            has_idx = 1;
            idx_at = inst_at + h;
            const char *d = text + idx_at + 1;
            size_t dn = inst_len - h - 1;
            if (dn > 1 && d[0] == '0')
                return pcw__q_fail(
                    err, PCW_E_INVALID_NAME, PCW_PATH_INDEX, idx_at,
                    "instance index \"#%.*s\" has a leading zero (write #%llu; for an "
                    "instance named so, add #0)",
                    (int)(dn > 30 ? 30 : dn), d, strtoull(d, NULL, 10));
            if (dn > 10)
                return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_INDEX, idx_at,
                                   "instance index \"#%.*s\" is too large (at most #4294967295)",
                                   (int)(dn > 30 ? 30 : dn), d);
            errno = 0;
            idx = strtoull(d, NULL, 10);
            if (errno || idx > 0xFFFFFFFFull)
                return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_INDEX, idx_at,
                                   "instance index \"#%.*s\" is too large (at most #4294967295)",
                                   (int)dn, d);
            inst_len = h;
        }
        if (inst_len == 0 && !has_idx)
            return pcw__q_fail(
                err, PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, inst_at,
                "empty instance name in \"()\" (use (*) for every instance, or leave "
                "the parentheses out for a counterset without instances)");
    }

    /* Copy the parts, NUL-terminated, into one block; the instance's
     * parent (before its first '/') last, for pcw_path_parent_instance. */
    const char *pslash = has_inst ? memchr(text + inst_at, '/', inst_len) : NULL;
    size_t parent_len = pslash ? (size_t)(pslash - (text + inst_at)) : 0;
    char *buf = malloc(host_len + set_len + inst_len + ctr_len + parent_len + 5);
    if (!buf)
        return pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    char *w = buf;
    if (has_host) {
        memcpy(w, text + host_at, host_len), w[host_len] = 0;
        out->host = w;
        if (host_kind == PCW__Q_HOST_CONTAINER)
            out->container = w;
        w += host_len + 1;
    }
    memcpy(w, text + set_at, set_len), w[set_len] = 0;
    out->counterset = w;
    w += set_len + 1;
    if (has_inst) {
        memcpy(w, text + inst_at, inst_len), w[inst_len] = 0;
        out->instance = w;
        w += inst_len + 1;
    }
    memcpy(w, text + ctr_at, ctr_len), w[ctr_len] = 0;
    out->counter = w;
    w += ctr_len + 1;
    memcpy(w, text + inst_at, parent_len), w[parent_len] = 0;
    out->index = (uint32_t)idx;
    out->has_index = has_idx;
    out->wild = (host_kind == PCW__Q_HOST_ANY ? PCW_PATH_WILD_HOST : 0) |
                (has_wild(text + set_at, set_len) ? PCW_PATH_WILD_COUNTERSET : 0) |
                (has_inst && has_wild(text + inst_at, inst_len) ? PCW_PATH_WILD_INSTANCE : 0) |
                (has_wild(text + ctr_at, ctr_len) ? PCW_PATH_WILD_COUNTER : 0);
    out->storage_ = buf;
    return PCW_OK;
}

/* Append s (n bytes) to buf at *at, counting what does not fit. */
static void put(char *buf, size_t len, size_t *at, const char *s, size_t n)
{
    if (*at < len) {
        size_t room = len - *at;
        memcpy(buf + *at, s, n < room ? n : room);
    }
    *at += n;
}

size_t pcw_path_build(char *buf, size_t len, const char *host, const char *counterset,
                      const char *instance, uint32_t index, const char *counter)
{
    size_t at = 0;
    if (!buf)
        len = 0; /* measure only, as snprintf(NULL, 0, ...) */
    if (!counterset || !counter) {
        if (len)
            buf[0] = 0; /* no path without both */
        return 0;
    }
    if (host) {
        put(buf, len, &at, "\\\\", 2);
        put(buf, len, &at, host, strlen(host));
    }
    put(buf, len, &at, "\\", 1);
    put(buf, len, &at, counterset, strlen(counterset));
    if (instance) {
        put(buf, len, &at, "(", 1);
        put(buf, len, &at, instance, strlen(instance));
        if (index > 0) {
            char num[16];
            int k = snprintf(num, sizeof num, "#%u", (unsigned)index);
            put(buf, len, &at, num, (size_t)k);
        }
        put(buf, len, &at, ")", 1);
    }
    put(buf, len, &at, "\\", 1);
    put(buf, len, &at, counter, strlen(counter));
    if (len)
        buf[at < len ? at : len - 1] = 0;
    return at;
}
