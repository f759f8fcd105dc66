/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwrelog/select.c - -c PATH... and -cf FILE: which of the logs'
 * series to convert.
 *
 * A pattern is a counter path as pcwstat takes it, matched against each
 * logged series' path part by part, case-insensitively, as the query
 * layer matches paths against live names (pcw__wildcard_match: '*' any run,
 * '?' one character): the counterset and the counter; the instance (with
 * "parent/instance", each side against its side); #n as live - "(name)"
 * is the first instance of that name (#0), "(name#2)" the third, and a
 * wildcard every one; a path without an instance part the series without
 * one. A host, when given, is matched against the host the log names
 * ("\\*" for any), which may be another machine's: the host is taken
 * apart before the query's parser, which knows this machine's only. A pattern that is no path, or
 * that selects no series of the logs, is an error that names it.
 */
#define _GNU_SOURCE 1
#include <stdlib.h>
#include <string.h>

#include "common/name.h"
#include <pcw/pdh.h>

#include "../common/escape.h"
#include "relog.h"

static int wild(const char *pat, const char *name)
{
    return pcw__wildcard_match(pat, strlen(pat), name, strlen(name));
}

static int instance_matches(const pcw_path *pat, const pcw_path *p)
{
    if (!pat->instance)
        return !p->instance;
    const char *name = p->instance ? p->instance : "";
    uint32_t dup = p->instance ? p->index : 0;
    const char *pparent = pcw_path_parent_instance(pat);
    if (pparent) {
        const char *parent = pcw_path_parent_instance(p);
        if (!parent || !wild(pparent, parent) ||
            !wild(pcw_path_object_instance(pat), pcw_path_object_instance(p)))
            return 0;
    } else if (!wild(pat->instance, name)) {
        return 0;
    }
    if (pat->has_index)
        return dup == pat->index;
    return strpbrk(pat->instance, "*?") ? 1 : dup == 0;
}

/* A path parsed with its host apart: the query's parser takes only this
 * machine's name for a host, and a log may come from another machine. */
typedef struct split_path {
    pcw_path p;
    char *host; /* NULL: none given */
} split_path;

static int split_parse(const char *text, split_path *sp, pcw_path_error *err)
{
    sp->host = NULL;
    if (text[0] == '\\' && text[1] == '\\') {
        const char *end = strchr(text + 2, '\\');
        if (end && !(sp->host = strndup(text + 2, (size_t)(end - text - 2))))
            return PCW_E_NO_MEMORY;
        if (end)
            text = end;
    }
    int rc = pcw_path_parse(text, &sp->p, err);
    if (rc != PCW_OK) {
        free(sp->host);
        sp->host = NULL;
    }
    return rc;
}

static void split_free(split_path *sp)
{
    pcw_path_free(&sp->p);
    free(sp->host);
}

static int path_matches(const split_path *pat, const split_path *sp)
{
    if (pat->host && !(sp->host && wild(pat->host, sp->host)))
        return 0;
    const pcw_path *pp = &pat->p, *p = &sp->p;
    return wild(pp->counterset, p->counterset) && wild(pp->counter, p->counter) &&
           instance_matches(pp, p);
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

int select_columns(relog_run *run)
{
    const relog_opts *o = run->o;
    split_path *parsed = calloc(run->ncols ? run->ncols : 1, sizeof *parsed);
    unsigned char *ok = calloc(run->ncols ? run->ncols : 1, 1);
    int rc = parsed && ok ? 0 : -1;
    /* A logged path that does not parse (a hostile log) is kept whole,
     * and no pattern selects it. */
    for (size_t c = 0; rc == 0 && c < run->ncols; c++) {
        relog_col *col = &run->cols[c];
        ok[c] = split_parse(col->path, &parsed[c], NULL) == PCW_OK;
        col->counterset = dup_or_empty(ok[c] ? parsed[c].p.counterset : NULL);
        col->instance = dup_or_empty(ok[c] ? parsed[c].p.instance : NULL);
        col->counter = dup_or_empty(ok[c] ? parsed[c].p.counter : NULL);
        if (!col->counterset || !col->instance || !col->counter)
            rc = -1;
        col->selected = o->npatterns == 0;
    }
    for (size_t i = 0; rc == 0 && i < o->npatterns; i++) {
        split_path pat;
        pcw_path_error err;
        char shown[512];
        const char *text = o->patterns[i];
        if (split_parse(text, &pat, &err) != PCW_OK) {
            fprintf(stderr, "pcwrelog: bad counter path \"%s\": %s\n",
                    esc_str(shown, sizeof shown, text, ESC_BACKSLASH_LITERAL), err.message);
            rc = 1;
            break;
        }
        size_t hits = 0;
        for (size_t c = 0; c < run->ncols; c++)
            if (ok[c] && path_matches(&pat, &parsed[c])) {
                run->cols[c].selected = 1;
                hits++;
            }
        split_free(&pat);
        if (!hits) {
            fprintf(stderr,
                    "pcwrelog: \"%s\" matches no counter in the log%s (pcwrelog -q lists them)\n",
                    esc_str(shown, sizeof shown, text, ESC_BACKSLASH_LITERAL),
                    run->nlogs == 1 ? "" : "s");
            rc = 1;
            break;
        }
    }
    for (size_t c = 0; c < run->ncols; c++)
        if (ok && ok[c])
            split_free(&parsed[c]);
    free(parsed);
    free(ok);
    if (rc < 0) {
        fprintf(stderr, "pcwrelog: out of memory\n");
        return 1;
    }
    run->nselected = 0;
    for (size_t c = 0; c < run->ncols; c++)
        if (run->cols[c].selected)
            run->cols[c].out = run->nselected++;
    return rc;
}
