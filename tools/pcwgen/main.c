/* SPDX-License-Identifier: MIT */
/*
 * main.c - pcwgen's command line: read a manifest, write a header.
 *
 *   pcwgen [-o OUT.h] [-prefix PREFIX] MANIFEST
 *   pcwgen --version | --help
 *
 * Exit status: 0 success, 1 the manifest is wrong (or I/O failed),
 * 2 usage. Diagnostics go to stderr as "FILE:LINE: error: ...", like a
 * compiler's, so editors can jump to them.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcw/version.h>

#include "emit.h"
#include "internal.h"
#include "manifest.h"

/* Manifests are a few kilobytes; refuse anything absurd before reading. */
#define MAX_MANIFEST_BYTES (64u << 20)

static void usage(FILE *f)
{
    fprintf(f, "usage: pcwgen [-o OUT.h] [-prefix PREFIX] MANIFEST\n"
               "       pcwgen --version | --help\n"
               "  Generates a C header for the <counters> section of MANIFEST\n"
               "  (see tools/pcwgen/README.md). Writes to stdout without -o.\n");
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
        if (n == cap) {
            if (cap >= MAX_MANIFEST_BYTES) {
                free(buf);
                buf = NULL;
                errno = EFBIG;
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb, cap *= 2;
        }
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    int e = errno;
    fclose(f);
    errno = e;
    *len = n;
    return buf;
}

/* Write to OUT.tmpXXXXXX and rename, so a failed or interrupted run never
 * leaves a half header that make would take as up to date. */
static int write_output(const char *out, const mf_manifest *m, const emit_options *opt)
{
    if (!out)
        return emit_header(stdout, m, opt) == 0 && fflush(stdout) == 0 ? 0 : -1;
    size_t n = strlen(out);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return -1;
    snprintf(tmp, n + 16, "%s.tmpXXXXXX", out);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        free(tmp);
        return -1;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    int rc = emit_header(f, m, opt);
    if (fclose(f) != 0)
        rc = -1;
    /* mkstemp made it 0600; a header is an ordinary file. */
    if (rc == 0) {
        mode_t um = umask(0);
        umask(um);
        chmod(tmp, 0666 & ~um);
    }
    if (rc == 0 && rename(tmp, out) != 0)
        rc = -1;
    int e = errno;
    if (rc != 0)
        unlink(tmp);
    free(tmp);
    errno = e;
    return rc;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *prefix = "", *in = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out = argv[++i];
        } else if ((strcmp(argv[i], "-prefix") == 0 || strcmp(argv[i], "--prefix") == 0) &&
                   i + 1 < argc) {
            prefix = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("pcwgen (pcw) %s\n", PCW_VERSION_STRING);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1] != 0) {
            fprintf(stderr, "pcwgen: unknown or incomplete option %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else if (in) {
            fprintf(stderr, "pcwgen: more than one manifest given\n");
            usage(stderr);
            return 2;
        } else {
            in = argv[i];
        }
    }
    if (!in) {
        usage(stderr);
        return 2;
    }
    if (*prefix && (!mf_is_c_ident(prefix) || mf_is_c_keyword(prefix))) {
        fprintf(stderr, "pcwgen: -prefix \"%s\" is not a C identifier\n", prefix);
        return 2;
    }

    size_t len = 0;
    char *buf = read_file(in, &len);
    if (!buf) {
        fprintf(stderr, "%s: error: cannot read: %s\n", in, strerror(errno));
        return 1;
    }
    mf_manifest m;
    mf_error err;
    int rc = mf_parse(&m, buf, len, &err);
    free(buf);
    for (size_t i = 0; i < m.nwarnings; i++)
        fprintf(stderr, "%s:%lu: warning: %s\n", in, m.warnings[i].line, m.warnings[i].msg);
    if (rc != 0) {
        fprintf(stderr, "%s:%lu: error: %s\n", in, err.line, err.msg);
        mf_free(&m);
        return 1;
    }
    emit_options opt = {prefix, in};
    rc = write_output(out, &m, &opt);
    mf_free(&m);
    if (rc != 0) {
        fprintf(stderr, "pcwgen: cannot write %s: %s\n", out ? out : "stdout", strerror(errno));
        return 1;
    }
    return 0;
}
