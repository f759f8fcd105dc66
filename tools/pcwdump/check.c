/* SPDX-License-Identifier: MIT */
/*
 * check.c - --check (verify segments with pcw_segment_check) and
 * --remove-stale.
 *
 * --check walks the provider folders with the library's own discovery
 * (pcw_consumer_discover, the rules of pcw/naming.h) rather than a
 * pcw_consumer's refresh: the consumer skips silently what it cannot open
 * or trust, and those are exactly the things --check must report - a
 * segment it cannot read, and a provider folder it refuses.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>

#include "json_writer.h"
#include "pcwdump.h"

/* One thing to report: a segment (opened, or why not) or a refused
 * provider folder. */
typedef struct entry {
    char *path;
    int32_t name_pid;
    int is_folder;
    int status;
    char *why;        /* status != PCW_OK */
    pcw_segment *seg; /* opened, or NULL */
} entry;

typedef struct entry_list {
    entry *v;
    size_t n, cap;
} entry_list;

static int push(entry_list *l, const char *path, int32_t name_pid, int is_folder, int status,
                const char *why, pcw_segment *seg)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        entry *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v, l->cap = cap;
    }
    entry *e = &l->v[l->n];
    e->path = strdup(path);
    e->why = why ? strdup(why) : NULL;
    if (!e->path || (why && !e->why)) {
        free(e->path), free(e->why);
        return -1;
    }
    e->name_pid = name_pid, e->is_folder = is_folder, e->status = status, e->seg = seg;
    l->n++;
    return 0;
}

static int on_discovered(pcw_discovered *d, void *arg)
{
    if (push(arg, d->path, d->name_pid, d->is_folder, d->status, d->why, d->seg) != 0)
        return PCW_E_NO_MEMORY;
    d->seg = NULL; /* kept: checked once the list is sorted */
    return PCW_OK;
}

static int collect(entry_list *l, const dump_opts *o)
{
    if (o->segments.n) {
        for (size_t i = 0; i < o->segments.n; i++) {
            pcw_segment *seg = NULL;
            int rc = pcw_segment_open(&seg, o->segments.v[i]);
            if (push(l, o->segments.v[i], 0, 0, rc, rc == PCW_OK ? NULL : pcw_status_str(rc),
                     seg) != 0) {
                pcw_segment_close(seg);
                return PCW_E_NO_MEMORY;
            }
        }
        return PCW_OK;
    }
    pcw_consumer *c;
    pcw_consumer_options co = {
        .dir = o->dir, .all_users = o->all_users, .containers = o->containers};
    int rc = pcw_consumer_open(&c, &co);
    if (rc == PCW_OK) {
        rc = pcw_consumer_discover(c, on_discovered, l);
        pcw_consumer_close(c);
    }
    return rc == PCW_E_IO ? PCW_OK : rc; /* no root: nothing to check */
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

/* Failures that say nothing about the segment's structure. */
static int is_environmental(int rc)
{
    return rc == PCW_E_IO || rc == PCW_E_PERMISSION || rc == PCW_E_NO_MEMORY;
}

int check_run(const dump_opts *o)
{
    entry_list l = {0};
    int crc = collect(&l, o);
    if (crc != PCW_OK) {
        fprintf(stderr, "pcwdump: %s: %s\n", dump_root(o), pcw_status_str(crc));
        for (size_t i = 0; i < l.n; i++)
            pcw_segment_close(l.v[i].seg), free(l.v[i].path), free(l.v[i].why);
        free(l.v);
        return EXIT_FAIL;
    }
    qsort(l.v, l.n, sizeof *l.v, cmp_entry);
    jw w;
    if (o->json) {
        jw_init(&w, stdout, !o->compact);
        jw_begin_object(&w);
        jw_kv_u64(&w, "pcwdump_version", PCWDUMP_JSON_VERSION);
        jw_key(&w, "check");
        jw_begin_array(&w);
    }
    int status = EXIT_OK;
    size_t checked = 0;
    for (size_t i = 0; i < l.n; i++) {
        entry *en = &l.v[i];
        const char *path = en->path;
        pcw_segment *seg = en->seg;
        char why[512] = "";
        int rc = en->status;
        /* A provider filter picks segments (an unreadable one by the pid
         * its name gives); a refused folder concerns every provider. */
        if (o->providers.n && !en->is_folder) {
            pcw_provider_info named = {.path = path, .name = "", .pid = en->name_pid};
            if (!sel_provider(o, seg ? pcw_segment_provider(seg) : &named)) {
                pcw_segment_close(seg);
                continue;
            }
        }
        if (rc == PCW_OK)
            rc = pcw_segment_check(seg, why, sizeof why);
        else if (rc == PCW_E_CORRUPT && *pcw_error_detail())
            snprintf(why, sizeof why, "%s", pcw_error_detail());
        else
            snprintf(why, sizeof why, "%s", en->why ? en->why : pcw_status_str(rc));
        pcw_segment_close(seg);
        checked++;
        const char *verdict = rc == PCW_OK ? "OK" : is_environmental(rc) ? "ERROR" : "CORRUPT";
        if (rc != PCW_OK)
            status = EXIT_FAIL;
        if (o->json) {
            jw_begin_object(&w);
            jw_kv_string(&w, "path", path);
            jw_kv_string(&w, "status",
                         rc == PCW_OK           ? "ok"
                         : is_environmental(rc) ? "error"
                                                : "corrupt");
            if (rc != PCW_OK)
                jw_kv_string(&w, "reason", why);
            jw_end_object(&w);
        } else {
            fprintf(stdout, "%s ", verdict);
            text_put(stdout, path, strlen(path));
            if (rc != PCW_OK) {
                fputs(": ", stdout);
                text_put(stdout, why, strlen(why));
            }
            putc('\n', stdout);
        }
    }
    if (o->json) {
        jw_end_array(&w);
        jw_kv_bool(&w, "ok", status == EXIT_OK);
        jw_end_object(&w);
        if (jw_finish(&w) != 0)
            status = EXIT_FAIL;
    } else if (fflush(stdout) != 0) {
        status = EXIT_FAIL;
    }
    if (!checked) {
        if (o->providers.n) {
            fprintf(stderr, "pcwdump: nothing matches the filters\n");
            status = EXIT_FAIL;
        } else {
            fprintf(stderr, "pcwdump: no segments in %s\n", dump_root(o));
        }
    }
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].path), free(l.v[i].why);
    free(l.v);
    return status;
}

int remove_stale_run(const dump_opts *o)
{
    pcw_consumer *c;
    pcw_consumer_options co = {
        .dir = o->dir, .all_users = o->all_users, .containers = o->containers};
    int rc = pcw_consumer_open(&c, &co);
    size_t removed = 0;
    if (rc == PCW_OK) {
        rc = pcw_consumer_remove_stale(c, &removed);
        pcw_consumer_close(c);
    }
    if (rc != PCW_OK) {
        fprintf(stderr, "pcwdump: %s: %s\n", dump_root(o), pcw_status_str(rc));
        return EXIT_FAIL;
    }
    if (o->json) {
        jw w;
        jw_init(&w, stdout, !o->compact);
        jw_begin_object(&w);
        jw_kv_u64(&w, "pcwdump_version", PCWDUMP_JSON_VERSION);
        jw_kv_u64(&w, "removed", removed);
        jw_end_object(&w);
        return jw_finish(&w) == 0 ? EXIT_OK : EXIT_FAIL;
    }
    printf("removed %zu stale segment%s\n", removed, removed == 1 ? "" : "s");
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAIL;
}
