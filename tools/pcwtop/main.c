/* SPDX-License-Identifier: MIT */
/*
 * pcwtop - the live viewer: every provider's countersets, cooked values,
 * a graph; top-like (tools/pcwtop/README.md).
 *
 * main.c parses the options, then runs batch mode (batch.c) or sets up the
 * terminal and runs the interactive viewer (input.c) with its collector
 * thread (collector.c).
 *
 * The terminal is restored on every way out: q and F10 return from the
 * event loop; SIGINT, SIGTERM and SIGHUP set a flag the loop sees (through
 * the wake pipe) and end it the same way; a crash (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT - in any thread, the collector's included)
 * writes the terminal's reset strings and restores the saved termios from
 * the signal handler (both async-signal-safe: write(2), tcsetattr(3)),
 * then dies of the same signal. pcw's own SIGBUS handler (segment
 * truncation) is installed later and passes every other SIGBUS on to ours.
 *
 * Exit status: 0 success (also after Ctrl-C or SIGTERM), 1 failure (no
 * terminal, an unknown counterset or column in batch mode...), 2 usage
 * error.
 */
#define _GNU_SOURCE 1
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

#include <pcw/version.h>

#include "../common/cli.h"
#include "pcwtop.h"

static const char usage_text[] =
    "Usage: pcwtop [OPTIONS]\n"
    "The live viewer of pcw performance counters: every counterset published,\n"
    "its instances and their cooked values (rates, percentages, _Total), and a\n"
    "graph; as top, interactive or in batch mode.\n"
    "\n"
    "  -d, --delay SECONDS      time between refreshes (default 1; 0.1 to 3600)\n"
    "  -c, --counterset NAME    start on this counterset (default: the first)\n"
    "  -f, --filter PATTERN     show instances whose name matches ('*', '?';\n"
    "                           without them, names containing PATTERN)\n"
    "  -s, --sort COLUMN        sort by a counter, 'name' or 'pid'; a '-' or '+'\n"
    "                           in front: ascending or descending\n"
    "  -n, --iterations N       refresh N times, then exit\n"
    "  -b, --batch              no curses: print each refresh as text (top -b)\n"
    "  -a, --advanced           show advanced counters too (hidden by default, as\n"
    "                           in perfmon; the a key toggles them)\n"
    "  -H, --heatmap COUNTER    a histogram counter's distribution: start in its\n"
    "                           heatmap (H); with -b, print it after each table\n"
    "      --timeout SECONDS    how long a callback provider has to answer each\n"
    "                           refresh (default: the delay, at most 1)\n"
    "      --dir DIR            root directory (default: $PCW_DIR, else /dev/shm)\n"
    "      --all-users          also other users' providers (needs their opt-in)\n"
    "      --containers         also providers in other mount namespaces (containers;\n"
    "                           needs root): a CONTAINER column names each one's\n"
    "      --container ID       only instances of this container (an id prefix, or\n"
    "                           'host' for pcwtop's own namespace); implies --containers;\n"
    "                           12+ hex digits select as a path's \\\\ID part does\n"
    "  -h, --help               this help\n"
    "      --version            version\n"
    "\n"
    "Keys: Up/Down, PgUp/PgDn, Home/End move; Tab switches between the counterset\n"
    "list and the table; Left/Right scroll the columns; c hides the list; F2 setup\n"
    "(columns); F3 search; F4, / or \\ filter; F5 refresh now; F6 or s sort;\n"
    "r reverse; +/- interval; space pause; t totals; v raw/cooked; a advanced\n"
    "counters; d details; g graph; H heatmap of a histogram; m mark for the graph;\n"
    "h, F1 or ? help; q or F10 quit.\n"
    "\n"
    "Exit status: 0 success, 1 failure, 2 usage error.\n";

/* ---- signals ------------------------------------------------------------ */

static volatile int signalled; /* SIGINT/SIGTERM/SIGHUP seen */
static volatile int winched;   /* SIGWINCH seen */
static int wake_pipe[2] = {-1, -1};
static struct termios saved_tty;
static int have_tty;
/* What the crash handler writes: the reset strings, built once curses is
 * up (rmcup, cnorm, sgr0, rmkx, mouse reporting off). */
static char reset_seq[512];
static size_t reset_len;

static void wake(void)
{
    int e = errno;
    if (wake_pipe[1] >= 0) {
        ssize_t w = write(wake_pipe[1], "s", 1);
        (void)w;
    }
    errno = e;
}

static void on_stop_signal(int sig)
{
    signalled = sig;
    wake();
}

static void on_winch(int sig)
{
    (void)sig;
    winched = 1;
    wake();
}

static void on_crash(int sig)
{
    /* SA_RESETHAND put the default action back: restore the terminal,
     * then the signal, raised again, ends the process (a fault re-faults
     * on return). */
    if (reset_len) {
        ssize_t w = write(STDOUT_FILENO, reset_seq, reset_len);
        (void)w;
    }
    if (have_tty)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
    raise(sig);
}

static void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags; /* no SA_RESTART: poll and sleeps return EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void add_cap(const char *name)
{
    char *s = tigetstr(name);
    if (!s || s == (char *)-1)
        return;
    size_t n = strlen(s);
    if (reset_len + n < sizeof reset_seq) {
        memcpy(reset_seq + reset_len, s, n);
        reset_len += n;
    }
}

static void build_reset_seq(void)
{
    reset_len = 0;
    add_cap("sgr0");
    add_cap("cnorm");
    add_cap("rmkx");
    /* Mouse reporting off (xterm's 1000/1002/1006; harmless elsewhere). */
    static const char mouse_off[] = "\033[?1006l\033[?1002l\033[?1000l";
    if (reset_len + sizeof mouse_off - 1 < sizeof reset_seq) {
        memcpy(reset_seq + reset_len, mouse_off, sizeof mouse_off - 1);
        reset_len += sizeof mouse_off - 1;
    }
    add_cap("rmcup");
}

/* ---- options -------------------------------------------------------------- */

#define usage_error(...) cli_usage_error("pcwtop", __VA_ARGS__)

static int parse(int argc, char **argv, top_options *o)
{
    enum { OPT_DIR = 256, OPT_ALL_USERS, OPT_VERSION, OPT_TIMEOUT, OPT_CONTAINERS, OPT_CONTAINER };
    static const struct option longs[] = {
        {"delay", required_argument, NULL, 'd'},
        {"counterset", required_argument, NULL, 'c'},
        {"filter", required_argument, NULL, 'f'},
        {"sort", required_argument, NULL, 's'},
        {"iterations", required_argument, NULL, 'n'},
        {"batch", no_argument, NULL, 'b'},
        {"advanced", no_argument, NULL, 'a'},
        {"heatmap", required_argument, NULL, 'H'},
        {"dir", required_argument, NULL, OPT_DIR},
        {"all-users", no_argument, NULL, OPT_ALL_USERS},
        {"containers", no_argument, NULL, OPT_CONTAINERS},
        {"container", required_argument, NULL, OPT_CONTAINER},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    o->interval = 1.0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":d:c:f:s:n:abhH:", longs, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'd':
            if (cli_duration(optarg, 1, &o->interval) != 0 || o->interval < TOP_MIN_INTERVAL ||
                o->interval > TOP_MAX_INTERVAL)
                return usage_error("bad delay \"%s\" (%gs to %gs; a duration, " CLI_DURATION_FORMS
                                   ")",
                                   optarg, TOP_MIN_INTERVAL, TOP_MAX_INTERVAL);
            break;
        case 'c':
            if (!*optarg)
                return usage_error("-c needs a counterset name");
            o->set = optarg;
            break;
        case 'f':
            if (strlen(optarg) >= sizeof((top_view *)0)->filter)
                return usage_error("filter longer than %zu bytes",
                                   sizeof((top_view *)0)->filter - 1);
            o->filter = optarg;
            break;
        case 's':
            o->sort = optarg;
            break;
        case 'n':
            errno = 0;
            o->count = strtol(optarg, &end, 10);
            if (end == optarg || *end || errno || o->count <= 0)
                return usage_error("bad count \"%s\" (a positive number)", optarg);
            break;
        case 'b':
            o->batch = 1;
            break;
        case 'a':
            o->advanced = 1;
            break;
        case 'H':
            if (!*optarg)
                return usage_error("-H needs a histogram counter's name");
            o->heat = optarg;
            break;
        case OPT_DIR:
            o->dir = optarg;
            break;
        case OPT_ALL_USERS:
            o->all_users = 1;
            break;
        case OPT_CONTAINERS:
            o->containers = 1;
            break;
        case OPT_CONTAINER:
            if (!*optarg || strlen(optarg) >= sizeof((top_view *)0)->container)
                return usage_error("bad container \"%s\" (an id prefix, or host)", optarg);
            o->container = optarg;
            o->containers = 1;
            break;
        case OPT_TIMEOUT:
            if (cli_duration(optarg, 1, &o->timeout) != 0 || o->timeout < 0.01 || o->timeout > 3600)
                return usage_error(
                    "bad timeout \"%s\" (10ms to 1h; a duration, " CLI_DURATION_FORMS ")", optarg);
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case OPT_VERSION:
            printf("pcwtop (pcw) %s\n", PCW_VERSION_STRING);
            exit(0);
        case ':':
            return usage_error("option %s needs a value", argv[optind - 1]);
        default:
            return usage_error("unknown option %s", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument \"%s\"", argv[optind]);
    return 0;
}

int top_apply_sort(top_view *v, const top_frame *f, const char *spec, char *why, size_t len)
{
    int dir = 0; /* 1 descending, -1 ascending, 0 the column's default */
    if (*spec == '+' || *spec == '-')
        dir = *spec++ == '+' ? 1 : -1;
    int sort;
    if (view_parse_sort(f, spec, &sort) != 0) {
        size_t n = (size_t)snprintf(why, len, "no column \"%s\" in \"%s\" (columns: name, pid",
                                    spec, f->set_name ? f->set_name : "");
        for (uint32_t k = 0; f->table && k < f->table->ncols && n < len; k++)
            n += (size_t)snprintf(why + n, len - n, ", %s", f->table->cols[k].name);
        if (n < len)
            snprintf(why + n, len - n, ")");
        return -1;
    }
    v->sort = sort;
    int desc_default = sort >= 0;
    v->reverse = dir == 0 ? 0 : (dir > 0) != desc_default;
    return 0;
}

/* ---- the interactive viewer ------------------------------------------------ */

/* The collector thread still held the model when the viewer quit. */
static int model_busy;

static int interactive(const top_options *o, top_model *m)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "pcwtop: standard input and output must be a terminal (or use -b)\n");
        return 1;
    }
    if (tcgetattr(STDIN_FILENO, &saved_tty) == 0)
        have_tty = 1;
    const char *term = getenv("TERM");
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr) {
        fprintf(stderr, "pcwtop: cannot drive the terminal \"%s\" (set TERM, or use -b)\n",
                term ? term : "");
        return 1;
    }
    build_reset_seq();
    top_ui *ui = calloc(1, sizeof *ui);
    top_history *hist = calloc(1, sizeof *hist);
    ui_cached *cache = calloc(2 * UI_CACHE, sizeof *cache);
    int status = 1;
    if (!ui || !hist || !cache) {
        endwin();
        delscreen(scr);
        fprintf(stderr, "pcwtop: out of memory\n");
        goto out;
    }
    /* Can the terminal draw clean lines with this terminal description? A
     * "dumb" one cannot address the cursor: no curses screen then. */
    if (!tigetstr("cup") || tigetstr("cup") == (char *)-1) {
        endwin();
        delscreen(scr);
        fprintf(stderr, "pcwtop: the terminal \"%s\" cannot move the cursor (use -b)\n",
                term ? term : "");
        goto out;
    }
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    ui->opt = o;
    ui->hist = hist;
    ui->cache_cur = cache;
    ui->cache_prev = cache + UI_CACHE;
    ui->utf8 = !fmt_ascii;
    ui->interval_ns = (uint64_t)(o->interval * 1e9);
    ui->focus = FOCUS_TABLE;
    view_init(&ui->view);
    if (o->filter)
        snprintf(ui->view.filter, sizeof ui->view.filter, "%s", o->filter);
    if (o->container)
        snprintf(ui->view.container, sizeof ui->view.container, "%s", o->container);
    ui->sort_pending = o->sort != NULL;
    ui->heat_pending = o->heat != NULL;
    ui->heat_col = -1;
    ui->want = o->set ? strdup(o->set) : NULL;
    screen_init_colors(ui);
    top_model_want(m, o->set, o->set == NULL);
    if (collector_start(&ui->col, m, ui->interval_ns, wake_pipe[1]) != 0) {
        endwin();
        delscreen(scr);
        fprintf(stderr, "pcwtop: cannot start the collector thread\n");
        goto out;
    }
    status = input_loop(ui, wake_pipe[0], &signalled, &winched);
    /* The terminal first: the collector may still be waiting for a
     * provider's answer (at most the time limit). */
    endwin();
    delscreen(scr);
    reset_len = 0;
    /* A collection still waiting for a provider is not waited for: the
     * prompt comes back now, and the model goes with the process. */
    if (collector_stop(ui->col, 200) != 0)
        model_busy = 1;
    if (ui->message[0] && status != 0) {
        char msg[2048];
        fprintf(stderr, "pcwtop: %s\n", esc_str(msg, sizeof msg, ui->message, 0));
    }
out:
    if (ui) {
        view_free(&ui->view);
        top_table_unref(ui->table);
        for (size_t i = 0; i < ui->hdr.nsets; i++)
            free(ui->hdr.sets[i].name);
        free(ui->hdr.sets);
        free(ui->hdr.set_name);
        free(ui->hdr.exits);
        free(ui->rows);
        free(ui->marks);
        free(ui->want);
        heat_free(&ui->heat);
    }
    if (hist)
        hist_free(hist);
    free(hist);
    free(cache);
    free(ui);
    return status;
}

int main(int argc, char **argv)
{
    top_options o;
    memset(&o, 0, sizeof o);
    int rc = parse(argc, argv, &o);
    if (rc)
        return rc;
    setlocale(LC_ALL, "");
    int utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    if (o.batch && !utf8) {
        /* Text out is UTF-8 as published; widths still need wcwidth. */
        if (setlocale(LC_CTYPE, "C.UTF-8"))
            utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    } else if (!o.batch) {
        fmt_ascii = !utf8;
    }

    if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "pcwtop: pipe: %s\n", strerror(errno));
        return 1;
    }
    install(SIGINT, on_stop_signal, 0);
    install(SIGTERM, on_stop_signal, 0);
    install(SIGHUP, on_stop_signal, 0);
    signal(SIGPIPE, SIG_IGN);
    if (!o.batch) {
        install(SIGWINCH, on_winch, 0);
        int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
        for (size_t i = 0; i < sizeof crashes / sizeof crashes[0]; i++)
            install(crashes[i], on_crash, SA_RESETHAND | SA_NODEFER);
    }

    pcw_consumer_options co = {0};
    co.dir = o.dir;
    co.all_users = o.all_users;
    co.containers = o.containers;
    /* A callback provider gets at most this long to answer each refresh. */
    double timeout = o.timeout > 0 ? o.timeout : o.interval < 1.0 ? o.interval : 1.0;
    co.timeout_ms = (uint32_t)(timeout * 1000 + 0.5);
    top_model *m;
    if ((rc = top_model_open(&m, &co)) != PCW_OK) {
        fprintf(stderr, "pcwtop: %s\n", pcw_status_str(rc));
        return 1;
    }
    top_model_set_advanced(m, o.advanced);
    if (o.container)
        top_model_set_container(m, o.container);
    rc = o.batch ? batch_run(&o, m, &signalled) : interactive(&o, m);
    if (!model_busy)
        top_model_close(m);
    close(wake_pipe[0]);
    close(wake_pipe[1]);
    return rc;
}
