/* SPDX-License-Identifier: MIT */
/*
 * tests/testutil.h - small helpers shared by the test binaries.
 *
 *   tu_root_setup / tu_root_teardown  a private mkdtemp() root exported as
 *                                     $PCW_DIR, removed afterwards (use as a
 *                                     Criterion .init/.fini)
 *   tu_spawn / tu_readline / tu_send / tu_finish
 *                                     run $PCW_BUILD/tests/helpers/NAME with
 *                                     pipes on its stdin and stdout
 *                                     (tu_spawn_wrapped: under a command
 *                                     such as unshare)
 *   tu_read_file / tu_write_file      whole-file I/O for crafting segments
 *   tu_alloc_count_start / _stop      count the process's allocations
 *                                     (ASan builds: TU_HAVE_MALLOC_HOOKS)
 *
 * Everything is static inline so each test binary takes only what it uses.
 */
#ifndef PCW_TESTUTIL_H
#define PCW_TESTUTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PCW_BUILD_DIR
#define PCW_BUILD_DIR "build"
#endif
#ifndef PCW_SOURCE_DIR
#define PCW_SOURCE_DIR "."
#endif
/* The -I flags of a program a test compiles, as the Makefile's
 * PCW_INCLUDES: the generated <pcw/provider.h> first, then lib/. */
#define PCW_TEST_INCLUDES "-I" PCW_BUILD_DIR "/include -I" PCW_SOURCE_DIR "/lib"

/* Leaks inside Criterion's own runner are suppressed for every test binary
 * by tests/lsan.supp (the Makefile sets LSAN_OPTIONS). */

/* The private root of this test process ("" until tu_root_setup). */
static char tu_root[256];

static inline void tu_root_setup(void)
{
    snprintf(tu_root, sizeof tu_root, "/tmp/pcw-test-XXXXXX");
    if (!mkdtemp(tu_root)) {
        perror("mkdtemp");
        abort();
    }
    /* Before anything opens a provider or consumer: they read it once. */
    setenv("PCW_DIR", tu_root, 1);
}

static inline int tu__rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static inline void tu_root_teardown(void)
{
    if (tu_root[0])
        nftw(tu_root, tu__rm, 16, FTW_DEPTH | FTW_PHYS);
    tu_root[0] = 0;
}

/* <root>/pcw-<uid>, created (0700) if missing. */
static inline const char *tu_provider_dir(uid_t uid)
{
    static char dir[320];
    snprintf(dir, sizeof dir, "%s/pcw-%u", tu_root, (unsigned)uid);
    mkdir(dir, 0700);
    return dir;
}

/* Milliseconds on the monotonic clock. */
static inline long long tu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- child programs ----------------------------------------------------- */

typedef struct tu_child {
    pid_t pid;
    int in;  /* its stdin (we write) */
    int out; /* its stdout (we read) */
    char buf[4096];
    size_t len;
} tu_child;

/* The path of helper NAME (tests/helpers) into path. */
static inline void tu_helper_path(const char *name, char *path, size_t cap)
{
    const char *build = getenv("PCW_BUILD");
    snprintf(path, cap, "%s/tests/helpers/%s", build && *build ? build : PCW_BUILD_DIR, name);
}

/* In a child just forked by a test: die (SIGKILL) when the test process
 * ends, however it ends - a failed assertion or a Criterion timeout runs no
 * clean-up, and a tool left running loads the machine for every test after
 * it. `parent` is getpid() read before fork(): if the test already ended,
 * exit now. (The signal follows the forking thread: fork from the test's
 * own thread. A change of credentials clears it.) */
static inline void tu_die_with_parent(pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
}

/* fork(), the child dying with the test process (tu_die_with_parent): what
 * a test that forks by hand calls instead of fork(). Not for a child that
 * enters a new PID namespace (its getppid() is 0 there). */
static inline pid_t tu_fork(void)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        tu_die_with_parent(parent);
    return pid;
}

/* Start program argv[0] (a path, or a name found on PATH; argv
 * NULL-terminated) with pipes to its stdin and from its stdout. Returns 0
 * or -1. */
static inline int tu_spawn_argv(tu_child *c, const char *const *argv)
{
    int pin[2], pout[2];
    if (pipe2(pin, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(pout, O_CLOEXEC) != 0) {
        close(pin[0]), close(pin[1]);
        return -1;
    }
    memset(c, 0, sizeof *c);
    c->pid = tu_fork();
    if (c->pid < 0)
        return -1;
    if (c->pid == 0) {
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    c->in = pin[1];
    c->out = pout[0];
    return 0;
}

/* Start helper NAME with argv (argv[0] is filled in; NULL-terminated),
 * through `wrapper` if not NULL: a NULL-terminated command line (found on
 * PATH) that runs the rest, such as {"unshare", "--pid", "--fork", "--",
 * NULL}. Returns 0 or -1. */
static inline int tu_spawn_wrapped(tu_child *c, const char *const *wrapper, const char *name,
                                   const char *const *args)
{
    char path[PATH_MAX];
    tu_helper_path(name, path, sizeof path);
    const char *argv[64];
    size_t n = 0;
    for (; wrapper && wrapper[n] && n < 32; n++)
        argv[n] = wrapper[n];
    argv[n++] = path;
    for (const char *const *a = args; a && *a && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    return tu_spawn_argv(c, argv);
}

/* Start helper NAME with argv (argv[0] is filled in; NULL-terminated).
 * Returns 0 or -1. */
static inline int tu_spawn(tu_child *c, const char *name, const char *const *args)
{
    return tu_spawn_wrapped(c, NULL, name, args);
}

/* Read one line (without its newline) into line; waits at most timeout_ms.
 * Returns its length, or -1 on timeout or end of file. */
static inline int tu_readline(tu_child *c, char *line, size_t cap, int timeout_ms)
{
    long long deadline = tu_now_ms() + timeout_ms;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t k = (size_t)(nl - c->buf);
            size_t m = k < cap - 1 ? k : cap - 1;
            memcpy(line, c->buf, m);
            line[m] = 0;
            memmove(c->buf, nl + 1, c->len - k - 1);
            c->len -= k + 1;
            return (int)m;
        }
        long long left = deadline - tu_now_ms();
        if (left <= 0 || c->len == sizeof c->buf)
            return -1;
        struct pollfd p = {c->out, POLLIN, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        ssize_t got = read(c->out, c->buf + c->len, sizeof c->buf - c->len);
        if (got <= 0)
            return -1;
        c->len += (size_t)got;
    }
}

/* Send one command line to the child. */
__attribute__((format(printf, 2, 3))) static inline int tu_send(tu_child *c, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line - 1)
        return -1;
    line[n++] = '\n';
    return write(c->in, line, (size_t)n) == n ? 0 : -1;
}

/* Send a command and return the child's reply line in reply. */
static inline int tu_command(tu_child *c, char *reply, size_t cap, const char *cmd)
{
    if (tu_send(c, "%s", cmd) != 0)
        return -1;
    return tu_readline(c, reply, cap, 10000);
}

/* Close its stdin (it exits cleanly) and reap it. Returns the wait status,
 * or -1. A child still running after timeout_ms is killed. */
static inline int tu_finish(tu_child *c, int timeout_ms)
{
    if (c->in >= 0)
        close(c->in);
    c->in = -1;
    int st = -1;
    long long deadline = tu_now_ms() + timeout_ms;
    for (;;) {
        pid_t r = waitpid(c->pid, &st, WNOHANG);
        if (r == c->pid)
            break;
        if (r < 0)
            return -1;
        if (tu_now_ms() > deadline) {
            kill(c->pid, SIGKILL);
            waitpid(c->pid, &st, 0);
            break;
        }
        usleep(2000); /* polling a child's exit: no fd to wait on */
    }
    if (c->out >= 0)
        close(c->out);
    c->out = -1;
    return st;
}

/* Start provider_child with args and wait for its "ready <path>" line.
 * Copies the path out. Returns 0 or -1. */
static inline int tu_spawn_provider(tu_child *c, const char *const *args, char *path, size_t cap)
{
    if (tu_spawn(c, "provider_child", args) != 0)
        return -1;
    char line[PATH_MAX + 16];
    if (tu_readline(c, line, sizeof line, 10000) < 0 || strncmp(line, "ready ", 6) != 0) {
        tu_finish(c, 1000);
        return -1;
    }
    size_t n = strlen(line + 6);
    if (n >= cap)
        n = cap - 1;
    memcpy(path, line + 6, n);
    path[n] = 0;
    return 0;
}

/* ---- files -------------------------------------------------------------- */

/* Read a whole file (at most max bytes) into a malloc'd buffer. */
static inline unsigned char *tu_read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    unsigned char *b = malloc(max ? max : 1);
    size_t n = 0;
    while (b && n < max) {
        ssize_t r = read(fd, b + n, max - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    *len = n;
    return b;
}

/* Create (or replace) path with these bytes and mode. Returns 0 or -1. */
static inline int tu_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    const unsigned char *p = data;
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, p + done, len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    fchmod(fd, mode);
    close(fd);
    return done == len ? 0 : -1;
}

/* A whole text file (at most max bytes) as a malloc'd NUL-terminated
 * string, or NULL. */
static inline char *tu_read_text(const char *path, size_t max)
{
    size_t len = 0;
    unsigned char *b = tu_read_file(path, max, &len);
    char *s = b ? realloc(b, len + 1) : NULL;
    if (!s) {
        free(b);
        return NULL;
    }
    s[len] = 0;
    return s;
}

/* Run the build's program TOOL ($PCW_BUILD/TOOL: pcwstat, pcwrelog...)
 * with args (NULL-terminated), stdin /dev/null, stdout and stderr into the
 * files out and err; wait at most timeout_ms (then SIGKILL). Returns the
 * wait status, or -1. */
static inline int tu_run_tool(const char *tool, const char *const *args, const char *out,
                              const char *err, int timeout_ms)
{
    const char *build = getenv("PCW_BUILD");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", build && *build ? build : PCW_BUILD_DIR, tool);
    const char *argv[64];
    size_t n = 0;
    argv[n++] = path;
    for (size_t i = 0; args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0), dup2(o, 1), dup2(e, 2);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    tu_child c = {.pid = pid, .in = -1, .out = -1};
    return tu_finish(&c, timeout_ms);
}

/* ---- counting allocations (ASan builds) ------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
/* From the sanitizer runtime (sanitizer/allocator_interface.h, which gcc
 * does not install): called on every allocation and free. */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
#define TU_HAVE_MALLOC_HOOKS 1

static volatile int tu_counting;
static volatile long tu_allocations;

static inline void tu_on_malloc(const volatile void *p, size_t n)
{
    (void)p, (void)n;
    if (tu_counting)
        tu_allocations++;
}

static inline void tu_on_free(const volatile void *p)
{
    (void)p;
}

/* Count allocations (of every thread) from now until tu_alloc_count_stop,
 * which returns how many. Hooks are installed once per process; returns
 * whether they are (a caller asserts it: uncounted is not zero). */
static inline int tu_alloc_count_start(void)
{
    static int installed;
    if (!installed)
        installed = __sanitizer_install_malloc_and_free_hooks(tu_on_malloc, tu_on_free);
    tu_allocations = 0;
    tu_counting = installed;
    return installed;
}

static inline long tu_alloc_count_stop(void)
{
    tu_counting = 0;
    return tu_allocations;
}
#endif

#endif /* PCW_TESTUTIL_H */
