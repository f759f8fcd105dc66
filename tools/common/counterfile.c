/* SPDX-License-Identifier: MIT */
/*
 * tools/common/counterfile.c - reading a counter file (counterfile.h).
 */
#define _GNU_SOURCE 1
#include "counterfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line of f into line (room for CF_MAX_LINE bytes and a NUL; its '\n'
 * not kept), *used counting the bytes read: its length, -1 at the end of
 * the file, -2 for a line longer than CF_MAX_LINE or holding a NUL byte
 * (read no further: the work stays bounded). fgets could not tell a NUL
 * inside a line from the end of a shorter one. */
static long read_line(FILE *f, char *line, size_t *used)
{
    size_t len = 0;
    int c;
    while ((c = getc(f)) != EOF) {
        (*used)++;
        if (c == '\n')
            break;
        if (c == 0 || len == CF_MAX_LINE)
            return -2;
        line[len++] = (char)c;
    }
    if (c == EOF && len == 0)
        return -1;
    line[len] = 0;
    return (long)len;
}

int counterfile_read(const char *tool, const char *file, int (*add)(void *arg, char *path),
                     void *arg)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", tool, file, strerror(errno));
        return 1;
    }
    char *line = malloc(CF_MAX_LINE + 1);
    size_t total = 0, lineno = 0;
    long n;
    int rc = line ? 0 : -1;
    while (rc == 0 && (n = read_line(f, line, &total)) != -1) {
        lineno++;
        if (n == -2) {
            fprintf(stderr,
                    "%s: %s: line %zu is longer than %u bytes or holds a NUL byte (not a "
                    "counter path)\n",
                    tool, file, lineno, CF_MAX_LINE);
            rc = 1;
            break;
        }
        if (total > CF_MAX_BYTES) {
            fprintf(stderr, "%s: %s: larger than %u bytes (a counter file lists paths)\n", tool,
                    file, CF_MAX_BYTES);
            rc = 1;
            break;
        }
        size_t len = (size_t)n;
        while (len > 0 && line[len - 1] == '\r')
            line[--len] = 0;
        size_t start = strspn(line, " \t");
        if (!line[start] || line[start] == '#')
            continue;
        char *copy = strdup(line + start);
        if (!copy || add(arg, copy))
            rc = -1;
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "%s: %s: %s\n", tool, file, strerror(errno));
        rc = 1;
    }
    if (rc < 0) {
        fprintf(stderr, "%s: out of memory\n", tool);
        rc = 1;
    }
    free(line);
    fclose(f);
    return rc;
}
