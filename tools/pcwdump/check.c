/*
 * check.c - --check (verify segments with pcw_segment_check) and
 * --remove-stale.
 *
 * --check lists the provider folder itself rather than asking a
 * pcw_consumer: the consumer skips segments it cannot open, and those are
 * exactly the ones --check must report.
 */
#define _GNU_SOURCE 1
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcw/layout.h>

#include "json_writer.h"
#include "pcwdump.h"

typedef struct path_list {
    char **v;
    size_t n, cap;
} path_list;

static int push(path_list *l, const char *dir, const char *name)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v, l->cap = cap;
    }
    if (asprintf(&l->v[l->n], "%s%s%s", dir ? dir : "", dir ? "/" : "", name) < 0)
        return -1;
    l->n++;
    return 0;
}

static int is_seg_name(const char *n)
{
    size_t len = strlen(n), sl = strlen(PCW_SEG_SUFFIX);
    return n[0] != '.' && len > sl && strcmp(n + len - sl, PCW_SEG_SUFFIX) == 0;
}

static int is_provider_dir_name(const char *n)
{
    if (strncmp(n, "pcw-", 4) != 0 || !n[4])
        return 0;
    for (const char *p = n + 4; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

static int list_segments(path_list *l, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* no provider has run yet */
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL)
        if (is_seg_name(e->d_name))
            rc = push(l, dir, e->d_name);
    closedir(d);
    return rc;
}

static int collect(path_list *l, const dump_opts *o)
{
    if (o->segments.n) {
        for (size_t i = 0; i < o->segments.n; i++)
            if (push(l, NULL, o->segments.v[i]) != 0)
                return -1;
        return 0;
    }
    const char *root = dump_root(o);
    char *dir;
    if (!o->all_users) {
        if (asprintf(&dir, "%s/pcw-%u", root, (unsigned)geteuid()) < 0)
            return -1;
        int rc = list_segments(l, dir);
        free(dir);
        return rc;
    }
    DIR *d = opendir(root);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!is_provider_dir_name(e->d_name))
            continue;
        if (asprintf(&dir, "%s/%s", root, e->d_name) < 0) {
            rc = -1;
            break;
        }
        rc = list_segments(l, dir);
        free(dir);
    }
    closedir(d);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Failures that say nothing about the segment's structure. */
static int is_environmental(int rc)
{
    return rc == PCW_E_IO || rc == PCW_E_PERMISSION || rc == PCW_E_NO_MEMORY;
}

int check_run(const dump_opts *o)
{
    path_list l = {0};
    if (collect(&l, o) != 0) {
        fprintf(stderr, "pcwdump: %s\n", pcw_status_str(PCW_E_NO_MEMORY));
        return EXIT_FAIL;
    }
    qsort(l.v, l.n, sizeof *l.v, cmp_str);
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
        const char *path = l.v[i];
        pcw_segment *seg = NULL;
        char why[256] = "";
        int rc = pcw_segment_open(&seg, path);
        if (o->providers.n) {
            /* An unreadable segment can still be picked by the pid its
             * file name starts with. */
            const char *base = strrchr(path, '/');
            base = base ? base + 1 : path;
            pcw_provider_info fake = {.path = path, .name = "", .pid = atoi(base)};
            if (!sel_provider(o, seg ? pcw_segment_provider(seg) : &fake)) {
                pcw_segment_close(seg);
                continue;
            }
        }
        if (rc == PCW_OK)
            rc = pcw_segment_check(seg, why, sizeof why);
        else if (rc == PCW_E_CORRUPT && *pcw_error_detail())
            snprintf(why, sizeof why, "%s", pcw_error_detail());
        else
            snprintf(why, sizeof why, "%s", pcw_status_str(rc));
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
        free(l.v[i]);
    free(l.v);
    return status;
}

int remove_stale_run(const dump_opts *o)
{
    pcw_consumer *c;
    pcw_consumer_options co = {.dir = o->dir, .all_users = o->all_users};
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
