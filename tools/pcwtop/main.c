/* SPDX-License-Identifier: MIT */
/*
 * pcwtop - the live viewer: every provider's countersets, cooked values,
 * a graph; top-like (tools/pcwtop/README.md).
 *
 * main.c parses the options, then runs batch mode (batch.c) or sets up the
 * terminal and runs the interactive viewer: the event loop here, keys in
 * input.c, the snapshot in snap.c, drawing in screen.c, with the
 * collector thread (collector.c).
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
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
    "      --replay FILE        replay a log (pcwstat -f BIN -o FILE) instead of the\n"
    "                           live providers: the same screens at the recorded\n"
    "                           pace; with -b every logged sample as text\n"
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
    "h, F1 or ? help; q or F10 quit. --replay: space pause, . next sample,\n"
    ", or T the one before, b go to a time, + - speed.\n"
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
    enum {
        OPT_DIR = 256,
        OPT_ALL_USERS,
        OPT_VERSION,
        OPT_TIMEOUT,
        OPT_CONTAINERS,
        OPT_CONTAINER,
        OPT_REPLAY
    };
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
        {"replay", required_argument, NULL, OPT_REPLAY},
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
        case OPT_REPLAY:
            if (!*optarg)
                return usage_error("--replay needs a log file (pcwstat -f BIN -o FILE)");
            o->replay = optarg;
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
    if (o->replay && (o->containers || o->all_users || o->dir))
        return usage_error("--replay reads a log: --dir, --all-users and --container(s) "
                           "choose live providers");
    return 0;
}

/* ---- the interactive viewer ------------------------------------------------ */

/* How long the UI waits for the model before drawing what it has. */
#define UI_LOCK_MS 30

/* The collector thread still held the model when the viewer quit. */
static int model_busy;

/* Read the model (locked) into the snapshot, the UI's choices applied. */
static void sync_snapshot(top_ui *ui, top_snap *s, top_model *m)
{
    int fresh = snap_take(s, m);
    if (fresh)
        ui_refreshed(ui, s);
    snap_view(s, m, &ui->choice);
    if (ui->search_pending && s->table)
        ui_found(ui, snap_search(s, m, ui->search, ui->search_from));
    size_t h = (size_t)layout_table_height(LINES);
    ui_clamp(ui, s, h);
    snap_rows(s, m, ui->top, h, &ui->marks, ui->graph_col, fresh);
    if (ui->mode == MODE_HEAT)
        snap_heat(s, m, ui->cursor, ui->heat_col);
    /* --replay: the graph spans the whole log. */
    if (ui->mode == MODE_GRAPH && s->hdr.log && COLS > GRAPH_AXIS_W + 1)
        snap_span(s, m, ui->graph_col, 2 * (size_t)(COLS - GRAPH_AXIS_W - 1));
}

/* The requests the keys made (REACT_*) to the collector. */
static void post_requests(top_collector *col, const top_ui *ui, int flags)
{
    if (flags & REACT_WANT)
        collector_want(col, ui->want);
    if (flags & REACT_RAW)
        collector_set_raw(col, ui->raw);
    if (flags & REACT_ADVANCED)
        collector_set_advanced(col, ui->advanced);
    if (flags & REACT_INTERVAL)
        collector_set_interval(col, ui->interval_ns);
    if (flags & REACT_PAUSE)
        collector_pause(col, ui->paused);
    if (flags & REACT_COLLECT)
        collector_refresh(col);
    if (flags & REACT_SEEK)
        collector_seek(col, ui->seek_index);
    if (flags & REACT_SEEK_TIME)
        collector_seek_time(col, ui->seek_real_ns);
    if (flags & REACT_SPEED) {
        static const int speeds[] = UI_SPEEDS;
        int x = speeds[ui->speed];
        collector_set_interval(col, x ? ui->interval_ns / (uint64_t)x : 0);
    }
}

static void resize(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resize_term(ws.ws_row, ws.ws_col);
    clearok(curscr, TRUE);
}

/* The event loop, the only one: it reads the keys' reaction flags, posts
 * their requests, reads the model when a collection ended or a key asked
 * for it (for at most UI_LOCK_MS, so a collection waiting for a slow
 * provider never holds up a key: then it draws what it read last and
 * tries again shortly), and draws. It polls the terminal and the wake pipe
 * (the collector writes to it after each collection, the signal handlers
 * on SIGINT/SIGTERM/SIGHUP and SIGWINCH). Returns the exit status. */
static int event_loop(top_ui *ui, top_snap *s, top_layout *lay, top_collector *col)
{
    int flags = REACT_RESYNC | REACT_REDRAW;
    uint64_t synced_seq = 0;
    while (!(flags & REACT_QUIT) && !signalled) {
        if (winched) {
            winched = 0;
            resize();
            flags |= REACT_RESYNC | REACT_REDRAW;
        }
        post_requests(col, ui, flags);
        if (flags & REACT_CLEAR)
            clearok(curscr, TRUE);
        uint64_t seq = collector_seq(col);
        if (seq != synced_seq || (flags & REACT_RESYNC) || s->stale) {
            top_model *m = collector_lock(col, UI_LOCK_MS);
            if (m) {
                sync_snapshot(ui, s, m);
                collector_unlock(col);
                synced_seq = seq;
            } else {
                snap_mark_stale(s); /* collecting: draw what we have, retry soon */
            }
        }
        screen_draw(ui, s, lay);
        flags = 0;
        if (ui->last_frame)
            break;
        struct pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
        int timeout = s->stale ? 50 : 1000; /* 1 s: the clock in the header */
        if (poll(p, 2, timeout) < 0 && errno != EINTR)
            break;
        if (p[1].revents & POLLIN) {
            char buf[64];
            while (read(wake_pipe[0], buf, sizeof buf) > 0) {
            }
        }
        if (p[0].revents & (POLLHUP | POLLERR))
            break; /* the terminal went away */
        wint_t c;
        int r;
        while (!(flags & REACT_QUIT) && (r = get_wch(&c)) != ERR)
            flags |= ui_key(ui, s, lay, r == KEY_CODE_YES, c);
    }
    return 0;
}

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
    top_ui ui;
    top_snap snap;
    top_layout lay;
    memset(&lay, 0, sizeof lay);
    /* A replay's pace is the log's: its interval is the recorded one. */
    ui_init(&ui, o, o->replay ? top_model_log_interval(m) : (uint64_t)(o->interval * 1e9));
    int status = 1;
    top_collector *col = NULL;
    if (snap_init(&snap) != 0) {
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
    lay.utf8 = !fmt_ascii;
    screen_init_colors(&lay);
    top_model_want(m, o->set, o->set == NULL);
    if (collector_start(&col, m, ui.interval_ns, wake_pipe[1]) != 0) {
        endwin();
        delscreen(scr);
        fprintf(stderr, "pcwtop: cannot start the collector thread\n");
        goto out;
    }
    status = event_loop(&ui, &snap, &lay, col);
    /* The terminal first: the collector may still be waiting for a
     * provider's answer (at most the time limit). */
    endwin();
    delscreen(scr);
    reset_len = 0;
    /* A collection still waiting for a provider is not waited for: the
     * prompt comes back now, and the model goes with the process. */
    if (collector_stop(col, 200) != 0)
        model_busy = 1;
    if (ui.message[0] && status != 0) {
        char msg[2048];
        fprintf(stderr, "pcwtop: %s\n", esc_str(msg, sizeof msg, ui.message, 0));
    }
out:
    ui_free(&ui);
    snap_free(&snap);
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

    if (o.replay) {
        char why[1024];
        top_model *lm;
        const char *files[] = {o.replay};
        if ((rc = top_model_open_log(&lm, files, 1, why, sizeof why)) != PCW_OK) {
            char msg[2048];
            fprintf(stderr, "pcwtop: %s\n", esc_str(msg, sizeof msg, why, 0));
            return 1;
        }
        rc = o.batch ? batch_run(&o, lm, &signalled) : interactive(&o, lm);
        if (!model_busy)
            top_model_close(lm);
        close(wake_pipe[0]);
        close(wake_pipe[1]);
        return rc;
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
