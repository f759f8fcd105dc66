/* SPDX-License-Identifier: MIT */
/*
 * tests/tmux_util.h - a real terminal for the tests of programs that write
 * to one (test_pcwtop.c, test_term_inject.c): tmux on a private socket
 * (`sock`, set by the test's init, e.g. "pcwtop-test-<pid>"; the server is
 * killed by tmux_teardown), a session "t" running bash, the screen read
 * with capture-pane, and every wait a poll of the screen with a deadline.
 * Also run(): a program to completion with its stdout and stderr.
 * Include after testutil.h and criterion.h.
 */
#ifndef PCW_TESTS_TMUX_UTIL_H
#define PCW_TESTS_TMUX_UTIL_H

#include <regex.h>

static char sock[64];

static const char *build_dir(void)
{
    const char *b = getenv("PCW_BUILD");
    return b && *b ? b : PCW_BUILD_DIR;
}

/* ---- running programs ------------------------------------------------------ */

/* Run argv (argv[0] looked up in PATH), its stdout into out (cap bytes,
 * NUL-terminated; may be NULL) and stderr into err. Returns the exit
 * status, or 128 + signal. */
static int run(const char *const *argv, char *out, size_t cap, char *err, size_t ecap)
{
    int po[2], pe[2];
    cr_assert(pipe2(po, O_CLOEXEC) == 0 && pipe2(pe, O_CLOEXEC) == 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0), dup2(po[1], 1), dup2(pe[1], 2);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(po[1]), close(pe[1]);
    size_t n = 0, en = 0;
    struct pollfd p[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2;
    long long deadline = tu_now_ms() + 60000;
    while (open_fds && tu_now_ms() < deadline) {
        if (poll(p, 2, 1000) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP)))
                continue;
            char buf[4096];
            ssize_t r = read(p[i].fd, buf, sizeof buf);
            if (r <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
                continue;
            }
            char *dst = i ? err : out;
            size_t *len = i ? &en : &n, c = i ? ecap : cap;
            if (dst && *len + 1 < c) {
                size_t k = (size_t)r < c - 1 - *len ? (size_t)r : c - 1 - *len;
                memcpy(dst + *len, buf, k);
                *len += k;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    if (out && cap)
        out[n] = 0;
    if (err && ecap)
        err[en] = 0;
    int st;
    if (open_fds)
        kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ---- tmux --------------------------------------------------------------------- */

static int tmux_v(const char *const *args, char *out, size_t cap)
{
    const char *argv[32] = {"tmux", "-L", sock};
    size_t n = 3;
    for (size_t i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    char err[1024];
    return run(argv, out, cap, err, sizeof err);
}
#define TMUX(...) tmux_v((const char *const[]){__VA_ARGS__, NULL}, NULL, 0)

static void tmux_teardown(void)
{
    TMUX("kill-server");
    tu_root_teardown();
}

/* The tmux server dies with the test process, however that ends: a test
 * Criterion kills (its timeout, a crash) runs no .fini, and its server -
 * with the program under test in it - used to keep running (stray pcwtop
 * processes for an hour). A watchdog child waits for the end of a pipe
 * only the test process holds, then becomes `tmux kill-server`. */
static void tmux_watchdog(void)
{
    int p[2];
    cr_assert(pipe2(p, O_CLOEXEC) == 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(p[0], 3);
        dup2(null, 0), dup2(null, 1), dup2(null, 2);
        close_range(4, ~0u, 0); /* nothing of the test's: no pipe kept open */
        char c;
        while (read(3, &c, 1) < 0 && errno == EINTR) {
        }
        execlp("tmux", "tmux", "-L", sock, "kill-server", (char *)NULL);
        _exit(127);
    }
    close(p[0]); /* p[1] stays open (close-on-exec) until the test process ends */
}

/* A session "t" running bash (no rc files), w x h, with our root and a UTF-8 locale. */
static void session(int w, int h)
{
    tmux_watchdog();
    char dir[300], ws[16], hs[16];
    snprintf(dir, sizeof dir, "PCW_DIR=%s", tu_root);
    snprintf(ws, sizeof ws, "%d", w);
    snprintf(hs, sizeof hs, "%d", h);
    cr_assert_eq(TMUX("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", ws, "-y", hs, "-e",
                      dir, "-e", "LANG=C.UTF-8", "-e", "PS1=PCWTEST$ ", "-e", "NO_COLOR=", "bash",
                      "--norc", "--noprofile"),
                 0, "cannot start tmux");
    TMUX("set-option", "-g", "status", "off");
    TMUX("resize-window", "-t", "t", "-x", ws, "-y", hs);
}

static const char *screen(void)
{
    static char buf[1 << 16];
    tmux_v((const char *const[]){"capture-pane", "-p", "-t", "t", NULL}, buf, sizeof buf);
    return buf;
}

/* Poll the screen until it holds `needle` (or, with `gone`, no longer
 * does), for at most ms. */
static int screen_wait(const char *needle, int gone, int ms)
{
    long long deadline = tu_now_ms() + ms;
    do {
        if ((strstr(screen(), needle) != NULL) != gone)
            return 1;
        usleep(50 * 1000); /* the pace of polling, not a synchronisation */
    } while (tu_now_ms() < deadline);
    return 0;
}
#define WAIT_FOR(text)                                                                             \
    cr_assert(screen_wait((text), 0, 20000), "never on screen: \"%s\"\n%s", (text), screen())
/* ...or a line matching an extended regular expression. */
static int screen_wait_re(const char *pattern, int ms)
{
    regex_t re;
    cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE), 0, "%s", pattern);
    long long deadline = tu_now_ms() + ms;
    int found;
    do {
        found = regexec(&re, screen(), 0, NULL, 0) == 0;
        if (!found)
            usleep(50 * 1000);
    } while (!found && tu_now_ms() < deadline);
    regfree(&re);
    return found;
}
#define WAIT_RE(re)                                                                                \
    cr_assert(screen_wait_re((re), 20000), "never on screen: /%s/\n%s", (re), screen())
#define WAIT_GONE(text)                                                                            \
    cr_assert(screen_wait((text), 1, 20000), "still on screen: \"%s\"\n%s", (text), screen())

/* Type a shell command into the session. */
static void type(const char *cmd)
{
    TMUX("send-keys", "-t", "t", "-l", cmd);
    TMUX("send-keys", "-t", "t", "Enter");
}

static void keys(const char *k)
{
    TMUX("send-keys", "-t", "t", k);
}

#endif /* PCW_TESTS_TMUX_UTIL_H */
