/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/unreadable.c - the providers the exporter cannot read
 * (unreadable.h).
 *
 * A check collects what discovery could not open, sorts it by path, and
 * logs each path that the previous check did not have: once per provider,
 * and again only after it went away. Paths and reasons come from file
 * names other users chose: xlog escapes them.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "unreadable.h"

struct unreadable {
    char **paths; /* sorted: what the last check could not read */
    size_t n;
    gid_t *groups; /* the exporter's supplementary groups (getgroups) */
    size_t ngroups;
    char hint[160]; /* the groups to share with: the exporter's */
};

/* The name of group gid, or its number, into buf. */
static const char *group_name(gid_t gid, char *buf, size_t cap)
{
    struct group gr, *res = NULL;
    char tmp[1024];
    if (getgrgid_r(gid, &gr, tmp, sizeof tmp, &res) == 0 && res)
        snprintf(buf, cap, "%s", res->gr_name);
    else
        snprintf(buf, cap, "%u", (unsigned)gid);
    return buf;
}

/* The exporter's supplementary groups into u->groups: getgroups asked for
 * their number first, then for them. 0, or -1 when out of memory or the
 * call fails. */
static int load_groups(unreadable *u)
{
    int n = getgroups(0, NULL);
    if (n < 0)
        return -1;
    u->groups = calloc(n ? (size_t)n : 1, sizeof *u->groups);
    if (!u->groups || (n = getgroups(n, u->groups)) < 0)
        return -1;
    u->ngroups = (size_t)n;
    return 0;
}

/* The groups a provider should share with, for the log: the exporter's
 * supplementary groups other than its own (the unit's
 * SupplementaryGroups=pcw), "a or b" when several, as many as the hint
 * holds; its own group when it has no other. */
static void make_hint(unreadable *u)
{
    char name[64];
    size_t len = 0, named = 0;
    for (size_t i = 0; i < u->ngroups; i++) {
        if (u->groups[i] == getegid())
            continue;
        group_name(u->groups[i], name, sizeof name);
        const char *sep = named ? " or " : "";
        if (len + strlen(sep) + strlen(name) + 4 >= sizeof u->hint) {
            snprintf(u->hint + len, sizeof u->hint - len, "%s", " ...");
            return;
        }
        len += (size_t)snprintf(u->hint + len, sizeof u->hint - len, "%s%s", sep, name);
        named++;
    }
    if (!named)
        group_name(getegid(), u->hint, sizeof u->hint);
}

unreadable *unreadable_open(void)
{
    unreadable *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    if (load_groups(u) != 0) {
        unreadable_close(u);
        return NULL;
    }
    make_hint(u);
    return u;
}

/* Is the exporter in group gid? */
static int in_group(const unreadable *u, gid_t gid)
{
    if (gid == getegid())
        return 1;
    for (size_t i = 0; i < u->ngroups; i++)
        if (u->groups[i] == gid)
            return 1;
    return 0;
}

static void free_paths(char **p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
    free(p);
}

void unreadable_close(unreadable *u)
{
    if (!u)
        return;
    free_paths(u->paths, u->n);
    free(u->groups);
    free(u);
}

size_t unreadable_count(const unreadable *u)
{
    return u->n;
}

/* One thing discovery could not read, until it is logged. */
typedef struct found {
    char *path;
    char uid[16], pid[16];
    int is_folder;
    char *why;
} found;

struct walk {
    const unreadable *u;
    found *v;
    size_t n, cap;
    int failed;
    uint64_t deadline_ns; /* the walk stops here (late) */
    int late;
};

/* Why the exporter may not read path: its mode says who may, and what a
 * provider does to share with the exporter. NULL when it is not a matter
 * of permission - among others when path is not a folder (is_folder) or a
 * regular file (a segment): a symlink someone planted is not followed,
 * nor what it points to described; discovery's reason stands. The mode
 * is read from path itself (fstatat, AT_SYMLINK_NOFOLLOW) and judged
 * against the exporter's user and groups, as the kernel does for the
 * mode bits (root, and ACLs, aside: discovery opened what they grant). */
static char *permission_why(const unreadable *u, const char *path, int is_folder)
{
    struct stat st;
    if (geteuid() == 0 || fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !(is_folder ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
        return NULL;
    unsigned need = is_folder ? 05 : 04; /* r-x / r-- */
    unsigned bits = st.st_uid == geteuid()   ? (st.st_mode >> 6) & 07
                    : in_group(u, st.st_gid) ? (st.st_mode >> 3) & 07
                                             : st.st_mode & 07;
    if ((bits & need) == need)
        return NULL;
    char *why = NULL, group[64];
    mode_t group_bits = is_folder ? 0050 : 0040;
    int n;
    if ((st.st_mode & group_bits) != group_bits)
        n = asprintf(&why,
                     "owner-only (mode %03o): the provider did not share with group %s "
                     "(pcw_provider_options.share_with_group = 1, .group = its gid)",
                     (unsigned)(st.st_mode & 0777), u->hint);
    else
        n = asprintf(&why,
                     "shared with group %s (mode %03o), which the exporter is not in: the "
                     "provider should share with group %s (pcw_provider_options.group)",
                     group_name(st.st_gid, group, sizeof group), (unsigned)(st.st_mode & 0777),
                     u->hint);
    return n < 0 ? NULL : why;
}

static int on_discovered(pcw_discovered *d, void *arg)
{
    struct walk *w = (struct walk *)arg;
    if (mono_ns() >= w->deadline_ns) {
        w->late = 1;
        return PCW_E_TIMEOUT;
    }
    if (d->status == PCW_OK)
        return PCW_OK;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        found *v = realloc(w->v, cap * sizeof *v);
        if (!v) {
            w->failed = 1;
            return PCW_E_NO_MEMORY;
        }
        w->v = v, w->cap = cap;
    }
    found *f = &w->v[w->n];
    memset(f, 0, sizeof *f);
    f->is_folder = d->is_folder;
    snprintf(f->uid, sizeof f->uid, "%u", (unsigned)d->uid);
    snprintf(f->pid, sizeof f->pid, "%d", (int)d->name_pid);
    f->path = strdup(d->path);
    f->why = permission_why(w->u, d->path, d->is_folder);
    if (!f->why)
        f->why = strdup(d->why ? d->why : pcw_status_str(d->status));
    if (!f->path || !f->why) {
        free(f->path);
        free(f->why);
        w->failed = 1;
        return PCW_E_NO_MEMORY;
    }
    w->n++;
    return PCW_OK;
}

static int cmp_found(const void *a, const void *b)
{
    return strcmp(((const found *)a)->path, ((const found *)b)->path);
}

static int cmp_path(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(char *const *)elem);
}

int unreadable_check(unreadable *u, pcw_consumer *con, uint64_t deadline_ns)
{
    struct walk w = {u, NULL, 0, 0, 0, deadline_ns, 0};
    int rc = pcw_consumer_discover(con, on_discovered, &w);
    /* A walk cut short (the root not listable: the refresh says so; the
     * deadline) keeps the previous list, so nothing is logged twice. */
    char **paths = rc != PCW_OK ? NULL : calloc(w.n ? w.n : 1, sizeof *paths);
    if (!paths) {
        for (size_t i = 0; i < w.n; i++)
            free(w.v[i].path), free(w.v[i].why);
        free(w.v);
        return w.failed || rc == PCW_OK ? -1 : w.late;
    }
    if (w.n > 1)
        qsort(w.v, w.n, sizeof *w.v, cmp_found);
    for (size_t i = 0; i < w.n; i++) {
        found *f = &w.v[i];
        if (!u->paths || !bsearch(f->path, u->paths, u->n, sizeof *u->paths, cmp_path)) {
            if (f->is_folder)
                xlog(LOG_WARN, "cannot read a provider folder: its providers are not exported",
                     "path", f->path, "uid", f->uid, "reason", f->why, NULL);
            else
                xlog(LOG_WARN, "cannot read a provider: it is not exported", "path", f->path, "pid",
                     f->pid, "uid", f->uid, "reason", f->why, NULL);
        }
        paths[i] = f->path;
        free(f->why);
    }
    free(w.v);
    free_paths(u->paths, u->n);
    u->paths = paths;
    u->n = w.n;
    return 0;
}
