/* SPDX-License-Identifier: MIT */
/*
 * tests/test_term_inject.c - names that attack the terminal (issue 23,
 * item 1). A provider (tests/helpers/hostile_provider) names its
 * counterset, counter, instance and itself with OSC 0 and OSC 2 (set the
 * window title), OSC 52 (set the clipboard), CSI, C1 controls (U+009D OSC,
 * U+009C ST), a backspace and a bidirectional override. Every tool runs
 * with every output it has in a real terminal: tmux on a private socket,
 * with set-clipboard on (so an OSC 52 that gets through makes a paste
 * buffer) and the pane titled "SAFE-TITLE". After each run the test
 * asserts that the pane title is unchanged, that there is no paste buffer,
 * and that the escape shows visibly on the screen (e.g. "\x1b]0;PWNED").
 * Every wait polls the screen for a marker with a deadline (tmux_util.h).
 */
#include "testutil.h"

#include <criterion/criterion.h>

#include "tmux_util.h"

#define TITLE0 "\x1b]0;PWNED-T0\x07"
#define TITLE2 "\x1b]2;PWNED-T2\x07"
#define CLIP   "\x1b]52;c;UFdORUQ=\x07" /* "PWNED" */
#define C1                                                                                         \
    "\xc2\x9d"                                                                                     \
    "2;PWNED-C1\xc2\x9c"
#define BIDI "\xe2\x80\xae"

static const char *const evil_set = "Evil" TITLE0 CLIP " Set";
static const char *const evil_counter = "Ctr" TITLE2 C1 "\x08";
static const char *const evil_instance = "Inst" TITLE0 CLIP "\x1b[31m" BIDI;
static const char *const evil_provider = "Prov" TITLE2 CLIP;

/* What the escaped names look like on the screen. */
#define SEEN_SET     "Evil\\x1b]0;PWNED-T0\\x07\\x1b]52;c;UFdORUQ=\\x07 Set"
#define SEEN_COUNTER "Ctr\\x1b]2;PWNED-T2\\x07\\u009d2;PWNED-C1\\u009c\\x08"
#define SEEN_JSON    "Evil\\u001b]0;PWNED-T0\\u0007\\u001b]52;c;UFdORUQ=\\u0007 Set"

static tu_child prov;
static int prov_running;

static void setup(void)
{
    tu_root_setup();
    snprintf(sock, sizeof sock, "inject-test-%d", (int)getpid());
    session(200, 50);
    TMUX("set-option", "-s", "set-clipboard", "on");
    TMUX("select-pane", "-t", "t", "-T", "SAFE-TITLE");
    const char *args[] = {evil_provider, evil_set, evil_counter, evil_instance, NULL};
    cr_assert_eq(tu_spawn(&prov, "hostile_provider", args), 0);
    char line[256];
    cr_assert(tu_readline(&prov, line, sizeof line, 30000) > 0, "hostile_provider did not start");
    cr_assert(strncmp(line, "ready", 5) == 0, "hostile_provider: %s", line);
    prov_running = 1;
}

static void teardown(void)
{
    if (prov_running) {
        tu_send(&prov, "quit");
        tu_finish(&prov, 10000);
    }
    tmux_teardown();
}

TestSuite(inject, .init = setup, .fini = teardown, .timeout = 120);

static void provider_cmd(const char *cmd)
{
    char reply[64];
    cr_assert(tu_command(&prov, reply, sizeof reply, cmd) > 0, "no reply to %s", cmd);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", cmd, reply);
}

/* s as a bash $'...' word: every byte as \xHH. */
static const char *bash_word(const char *s)
{
    static char buf[1024];
    size_t n = (size_t)snprintf(buf, sizeof buf, "$'");
    for (; *s && n + 8 < sizeof buf; s++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "\\x%02x", (unsigned char)*s);
    snprintf(buf + n, sizeof buf - n, "'");
    return buf;
}

/* Type `cmd` (a shell fragment; the tools are found in the build
 * directory) followed by a marker that shows when it has ended. */
static void start(const char *cmd)
{
    cr_assert(screen_wait("PCWTEST$", 0, 20000), "no shell prompt:\n%s", screen());
    char line[4096];
    snprintf(line, sizeof line, "PATH=%s:$PATH; %s; echo \"END-$((6*7))\"", build_dir(), cmd);
    type(line);
}

/* The pane title and paste buffers are as before, and `seen` is on the
 * screen. */
static void assert_safe(const char *what, const char *seen)
{
    cr_assert(screen_wait("END-42", 0, 30000), "%s did not end:\n%s", what, screen());
    char title[256] = "", buffers[1024] = "";
    tmux_v((const char *const[]){"display-message", "-p", "-t", "t", "#{pane_title}", NULL}, title,
           sizeof title);
    tmux_v((const char *const[]){"list-buffers", NULL}, buffers, sizeof buffers);
    cr_assert_str_eq(title, "SAFE-TITLE\n", "%s retitled the terminal:\n%s", what, screen());
    cr_assert_str_eq(buffers, "", "%s set the clipboard (OSC 52): %s", what, buffers);
    if (seen)
        cr_assert(strstr(screen(), seen), "%s: the escape does not show as \"%s\":\n%s", what, seen,
                  screen());
}

static void simple(const char *cmd, const char *seen)
{
    start(cmd);
    assert_safe(cmd, seen);
}

/* ---- pcwstat ----------------------------------------------------------------- */

/* CSV on the terminal, and the "new:" line on stderr for an instance that
 * appears mid-run. */
Test(inject, pcwstat_csv_and_new_instances)
{
    start("pcwstat '\\Evil*(*)\\*' -si 0.2");
    cr_assert(screen_wait_re("^\"[0-9]{2}/[0-9]{2}/[0-9]{4} ", 30000), "no row:\n%s", screen());
    provider_cmd("add");
    WAIT_FOR("new:");
    keys("C-c");
    assert_safe("pcwstat CSV", SEEN_SET);
    cr_assert(strstr(screen(), "Inst\\x1b]0;PWNED-T0\\x07\\x1b]52;c;UFdORUQ=\\x07\\x1b[31m"
                               "\\u202e late"),
              "the new instance's name:\n%s", screen());
}

Test(inject, pcwstat_tsv)
{
    simple("pcwstat '\\Evil*(*)\\*' -f TSV -sc 1 -si 0.1", SEEN_COUNTER);
}

Test(inject, pcwstat_json)
{
    simple("pcwstat '\\Evil*(*)\\*' -f JSON -sc 1 -si 0.1", SEEN_JSON);
}

Test(inject, pcwstat_query)
{
    simple("pcwstat -q", SEEN_SET);
}

Test(inject, pcwstat_query_instances)
{
    simple("pcwstat -qx", SEEN_SET);
}

Test(inject, pcwstat_error_message)
{
    simple("pcwstat '\\Evil*(*)\\Nope' -sc 1", SEEN_SET);
}

/* ---- pcwtop -------------------------------------------------------------------- */

/* The "Countersets:" and "Counterset:" lines and the sort column. */
/* ---- pcwrelog: a log holds the names as recorded ----------------------------- */

/* Record the hostile provider into a log (a file: no terminal), and return
 * the shell command that shows it with pcwrelog's `opts`. */
static const char *recorded(const char *opts)
{
    static char cmd[PATH_MAX + 64];
    char log[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(log, sizeof log, "%s/evil.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/rec.out", tu_root);
    snprintf(err, sizeof err, "%s/rec.err", tu_root);
    const char *args[] = {"\\Evil*(*)\\*", "-sc", "2", "-si", "0.05", "-f", "BIN", "-o", log, NULL};
    int st = tu_run_tool("pcwstat", args, out, err, 60000);
    cr_assert(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "pcwstat -f BIN: %d", st);
    snprintf(cmd, sizeof cmd, "pcwrelog %s %s", log, opts);
    return cmd;
}

Test(inject, pcwrelog_csv)
{
    simple(recorded("-f CSV"), SEEN_SET);
}

Test(inject, pcwrelog_query)
{
    simple(recorded("-q"), SEEN_COUNTER);
}

Test(inject, pcwrelog_json)
{
    simple(recorded("-f JSON"), SEEN_JSON);
}

Test(inject, pcwtop_batch)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "pcwtop -b -n 2 -d 0.1 -s %s", bash_word(evil_counter));
    simple(cmd, "sorted by " SEEN_COUNTER);
    cr_assert(strstr(screen(), "Countersets: " SEEN_SET), "%s", screen());
}

/* -s naming no column: the error lists the columns. */
Test(inject, pcwtop_batch_sort_error)
{
    simple("pcwtop -b -n 1 -d 0.1 -s nope", SEEN_COUNTER);
}

/* A provider that exits: "Provider PID (NAME) exited". */
Test(inject, pcwtop_batch_exited_provider)
{
    start("pcwtop -b -d 0.2");
    WAIT_FOR("Countersets: Evil");
    tu_send(&prov, "quit");
    tu_finish(&prov, 10000);
    prov_running = 0;
    WAIT_FOR(") exited");
    keys("C-c");
    assert_safe("pcwtop -b", "(Prov\\x1b]2;PWNED-T2\\x07\\x1b]52;c;UFdORUQ=\\x07) exited");
}

/* The interactive viewer (it sanitised before: kept so). */
Test(inject, pcwtop_interactive)
{
    start("pcwtop -d 0.2");
    WAIT_FOR("F10Quit");
    WAIT_FOR("Evil");
    keys("q");
    assert_safe("pcwtop", NULL);
}

/* ---- pcwdump ------------------------------------------------------------------- */

Test(inject, pcwdump_text)
{
    simple("pcwdump", SEEN_SET);
}

Test(inject, pcwdump_json)
{
    simple("pcwdump --json --compact", SEEN_JSON);
}
