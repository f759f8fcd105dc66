/* SPDX-License-Identifier: MIT */
/*
 * testdir.c - each provider test gets its own PCW_DIR (mkdtemp), so
 * segments never land in /dev/shm and parallel runs do not meet.
 */
#define _GNU_SOURCE 1

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "pcwgen_test.h"

static char dir[256];

void pcwgen_testdir_setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pcwgen-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp");
    cr_assert_eq(setenv("PCW_DIR", dir, 1), 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void pcwgen_testdir_teardown(void)
{
    if (dir[0])
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    dir[0] = 0;
}

const char *pcwgen_testdir(void)
{
    return dir;
}
