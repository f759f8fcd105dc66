/* SPDX-License-Identifier: MIT */
/*
 * pcwgen_test.h - helpers shared by pcwgen's tests.
 */
#ifndef PCWGEN_TEST_H
#define PCWGEN_TEST_H

#include <stddef.h>

/* ---- run.c: run pcwgen as a real process. */

typedef struct pcwgen_run {
    int status; /* exit status, or 128 + signal */
    char *out;  /* everything written to stdout (NUL-terminated) */
    size_t out_len;
    char *err; /* everything written to stderr */
} pcwgen_run;

/* The pcwgen binary: $PCWGEN, else the path the build compiled in. */
const char *pcwgen_bin(void);
/* Run pcwgen with argv[1..] = args (NULL-terminated). */
void pcwgen_exec(pcwgen_run *r, const char *const *args);
void pcwgen_run_free(pcwgen_run *r);
/* Read a whole file; NULL if it cannot be read. */
char *pcwgen_slurp(const char *path, size_t *len);

/* ---- testdir.c: a private PCW_DIR so tests never touch /dev/shm. */

/* mkdtemp a directory and point $PCW_DIR at it. */
void pcwgen_testdir_setup(void);
/* Remove it (and whatever pcw left in it). */
void pcwgen_testdir_teardown(void);
const char *pcwgen_testdir(void);

#endif
