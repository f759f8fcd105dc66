/* SPDX-License-Identifier: MIT */
/*
 * tools/common/outfile.c - opening a tool's output file (outfile.h).
 */
#define _GNU_SOURCE 1
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* May an existing `path` be overwritten? -y, or "y" at the prompt. */
static int may_overwrite(const char *tool, const char *path, int yes)
{
    if (yes)
        return 1;
    if (!isatty(0)) {
        fprintf(stderr, "%s: %s exists; use -y to overwrite it\n", tool, path);
        return 0;
    }
    fprintf(stderr, "%s exists. Overwrite it? [Y/N] ", path);
    char answer[16];
    if (!fgets(answer, sizeof answer, stdin) || (answer[0] != 'y' && answer[0] != 'Y')) {
        fprintf(stderr, "%s: not overwriting %s\n", tool, path);
        return 0;
    }
    return 1;
}

int outfile_open(const char *tool, const char *path, int yes)
{
    const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW;
    int fd = open(path, flags | O_CREAT | O_EXCL, 0666);
    if (fd >= 0)
        return fd;
    if (errno != EEXIST) {
        fprintf(stderr, "%s: %s: %s\n", tool, path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        fprintf(stderr,
                "%s: %s is a symbolic link; not following it (name the file it points to)\n", tool,
                path);
        return -1;
    }
    if (!may_overwrite(tool, path, yes))
        return -1;
    /* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
     * blocking; cleared below. */
    fd = open(path, flags | O_NONBLOCK);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: %s\n", tool, path,
                errno == ELOOP   ? "a symbolic link; not following it"
                : errno == ENXIO ? "a FIFO nobody reads"
                                 : strerror(errno));
        return -1;
    }
    const char *why = NULL;
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISREG(st.st_mode) && st.st_nlink > 1)
        why = "it has another hard link; not overwriting it";
    else if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
        why = "not a regular file";
    else if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0)
        why = strerror(errno);
    else if (fcntl(fd, F_SETFL, O_WRONLY) != 0)
        why = strerror(errno);
    if (why) {
        fprintf(stderr, "%s: %s: %s\n", tool, path, why);
        close(fd);
        return -1;
    }
    return fd;
}
