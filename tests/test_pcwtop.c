/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pcwtop.c - pcwtop, the live viewer.
 *
 *   data      its data layer (tools/pcwtop/model.c, view.c, format.c, in
 *             libpcwtop.a, which this suite links): every window of a sorted, filtered view against
 *             a brute-force sort of the same rows, over 20000 instances
 *             with many equal values; instance marks; number formatting.
 *   batch     `pcwtop -b` output checked as text; option errors.
 *   tty       the real program in a real terminal: tmux on a private
 *             socket (`tmux -L pcwtop-test-<pid>`, killed at the end),
 *             120x40, keys sent with send-keys, the screen read with
 *             capture-pane. Every wait polls the screen for the text it
 *             expects, with a deadline; nothing waits on a bare sleep.
 *
 * Providers: tests/helpers/top_provider (driven over its stdin) and the
 * Geometric Waves example.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <sys/prctl.h>
#include <pcw/version.h>
#include <locale.h>
#include <math.h>
#include <regex.h>
#include <wchar.h>

#include "../tools/pcwtop/format.h"
#include "../tools/pcwtop/model.h"
#include "tmux_util.h"

static void setup(void)
{
    tu_root_setup();
    snprintf(sock, sizeof sock, "pcwtop-test-%d", (int)getpid());
    setlocale(LC_ALL, "C.UTF-8");
}

static void pcwtop_path(char *buf, size_t len)
{
    snprintf(buf, len, "%s/pcwtop", build_dir());
}

/* ---- providers -------------------------------------------------------------- */

/* A helper provider (tests/helpers/NAME) that says "ready" when it is. */
static void helper_start(tu_child *c, const char *name, const char *const *args)
{
    cr_assert_eq(tu_spawn(c, name, args), 0);
    char line[256];
    cr_assert(tu_readline(c, line, sizeof line, 30000) > 0, "%s did not start", name);
    cr_assert(strncmp(line, "ready", 5) == 0, "%s: %s", name, line);
}

static void top_start(tu_child *c, const char *const *args)
{
    helper_start(c, "top_provider", args);
}

__attribute__((format(printf, 2, 3))) static void top_cmd(tu_child *c, const char *fmt, ...)
{
    char buf[512], reply[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cr_assert(tu_command(c, reply, sizeof reply, buf) > 0, "no reply to %s", buf);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", buf, reply);
}

static void top_stop(tu_child *c)
{
    tu_send(c, "quit");
    tu_finish(c, 10000);
}

/* The Geometric Waves example, until its stdin closes... it has none: it
 * runs until SIGTERM. */
static pid_t waves_start(void)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/examples/geometric_waves", build_dir());
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        /* It dies with the test: a failed assertion ends the test process
         * without waves_stop, and an orphan holding run-tests' stderr pipe
         * kept make check waiting for ever (seen once). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1);
        execl(path, path, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void waves_stop(pid_t pid)
{
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

TestSuite(pcwtop, .init = setup, .fini = tmux_teardown, .timeout = 180);

/* Start pcwtop in the session with these extra arguments (a shell
 * fragment) and wait for `ready` on screen. */
static void start_top_until(const char *args, const char *ready)
{
    cr_assert(screen_wait("PCWTEST$", 0, 20000), "no shell prompt:\n%s", screen());
    char exe[PATH_MAX], cmd[PATH_MAX + 512];
    pcwtop_path(exe, sizeof exe);
    snprintf(cmd, sizeof cmd, "stty -g > %s/stty.before; %s %s; echo \"exit=$?\"", tu_root, exe,
             args);
    type(cmd);
    WAIT_FOR(ready);
}

/* ...and wait for its function bar. */
static void start_top(const char *args)
{
    start_top_until(args, "F1Help"); /* the function bar (at any width) */
}

/* The screen line holding `needle`, copied into line; its index, or -1. */
static int line_of(const char *s, const char *needle, char *line, size_t cap)
{
    int idx = 0;
    for (const char *p = s; *p; idx++) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char buf[4096];
        size_t k = len < sizeof buf - 1 ? len : sizeof buf - 1;
        memcpy(buf, p, k);
        buf[k] = 0;
        if (strstr(buf, needle)) {
            if (line)
                snprintf(line, cap, "%s", buf);
            return idx;
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    return -1;
}

/* The whitespace-separated field `n` (0-based) after `after` in line. */
static int field_after(const char *line, const char *after, int n, char *out, size_t cap)
{
    const char *p = strstr(line, after);
    if (!p)
        return -1;
    p += strlen(after);
    for (int i = 0; i <= n; i++) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        if (e == p)
            return -1;
        if (i == n) {
            snprintf(out, cap, "%.*s", (int)(e - p), p);
            return 0;
        }
        p = e;
    }
    return -1;
}

/* The terminal after pcwtop: the prompt is back, the alternate screen,
 * mouse reporting and the hidden cursor are gone, the line discipline is
 * as before (stty -g) and a command typed runs and echoes. */
static void assert_restored(void)
{
    cr_assert(screen_wait("exit=", 0, 20000), "pcwtop did not end:\n%s", screen());
    char flags[256];
    tmux_v((const char *const[]){"display-message", "-p", "-t", "t",
                                 "#{alternate_on} #{mouse_any_flag} #{cursor_flag} "
                                 "#{keypad_cursor_flag}",
                                 NULL},
           flags, sizeof flags);
    cr_assert(strncmp(flags, "0 0 1 0", 7) == 0,
              "terminal modes left on (alternate mouse cursor keypad): %s", flags);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "stty -g | cmp -s - %s/stty.before && echo tty-same-$((6*7))",
             tu_root);
    type(cmd);
    cr_assert(screen_wait("tty-same-42", 0, 20000), "line discipline changed:\n%s", screen());
    const char *s = screen();
    cr_assert(!strstr(s, "\033") && !strstr(s, "[?1"), "escape sequences left:\n%s", s);
    cr_assert(!strstr(s, "F10Quit"), "pcwtop's screen is still there:\n%s", s);
    cr_assert(!strstr(s, "Sanitizer"), "a sanitizer report:\n%s", s);
}

/* ---- the data layer ---------------------------------------------------------- */

typedef struct bkey {
    double v;
    int has;
    const char *name;
    uint32_t row;
} bkey;
static int b_desc, b_names;

static int bkey_cmp(const void *a, const void *b)
{
    const bkey *x = a, *y = b;
    if (x->has != y->has)
        return x->has ? -1 : 1; /* rows without a value last */
    if (b_names) {
        int c = strcasecmp(x->name, y->name);
        if (c)
            return b_desc ? -c : c;
    } else if (x->has && x->v != y->v) {
        return (x->v < y->v) != b_desc ? -1 : 1;
    }
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The view's rows [first, first + n) against a full sort of every row. */
static void check_window(top_view *v, top_model *m, size_t first, size_t n)
{
    const top_frame *f = top_model_frame(m);
    const top_table *t = f->table;
    size_t count = view_count(v, m);
    bkey *all = calloc(count + 1, sizeof *all);
    size_t k = 0;
    for (size_t r = t->ntotals; r < t->nrows; r++) {
        const top_row *row = &t->rows[r];
        if (!view_filter_match(v->filter, top_row_name(t, row), row->name_len))
            continue;
        double vals[8];
        uint8_t st[8];
        top_model_row_values(m, row, vals, st);
        bkey *b = &all[k++];
        b->row = (uint32_t)r;
        b->name = top_row_name(t, row);
        b->has = v->sort < 0 || st[v->sort] == PCW_CSTATUS_VALID;
        b->v = v->sort >= 0 ? vals[v->sort] : v->sort == TOP_SORT_PID ? (double)row->pid : 0;
    }
    size_t totals = v->totals ? t->ntotals : 0;
    cr_assert_eq(k + totals, count, "count %zu, expected %zu", count, k + totals);
    b_desc = (v->sort >= 0) != v->reverse;
    b_names = v->sort == TOP_SORT_NAME;
    qsort(all, k, sizeof *all, bkey_cmp);
    uint32_t *rows = calloc(n + 1, sizeof *rows);
    size_t got = view_rows(v, m, first, n, rows);
    size_t want = first >= count ? 0 : (count - first < n ? count - first : n);
    cr_assert_eq(got, want, "window [%zu, +%zu): %zu rows, expected %zu", first, n, got, want);
    for (size_t i = 0; i < got; i++) {
        size_t rank = first + i;
        uint32_t expect = rank < totals ? (uint32_t)rank : all[rank - totals].row;
        cr_assert_eq(rows[i], expect, "rank %zu: row %u, expected %u (sort %d reverse %d)", rank,
                     rows[i], expect, v->sort, v->reverse);
    }
    free(rows);
    free(all);
}

Test(pcwtop, view_windows_match_a_full_sort)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--instances", "20000", "--seed", "7", NULL});
    top_model *m;
    cr_assert_eq(top_model_open(&m, NULL), PCW_OK);
    top_model_want(m, "top test", 0); /* case-insensitive */
    cr_assert_eq(top_model_collect(m, 1000000000ull), PCW_OK);
    const top_frame *f = top_model_frame(m);
    cr_assert(f->table, "%s", f->message);
    cr_assert_eq(f->table->nq, 20001); /* _Total and the instances */
    cr_assert_eq(f->table->ntotals, 1);
    cr_assert_str_eq(f->set_name, "Top Test");
    top_view v;
    view_init(&v);
    /* The sort column cooked in one pass equals the values one by one. */
    const double *cv;
    const uint8_t *cs;
    cr_assert_eq(top_model_column(m, 0, &cv, &cs), PCW_OK);
    for (size_t r = 0; r < f->table->nrows; r += 97) {
        double vals[3];
        uint8_t st[3];
        top_model_row_values(m, &f->table->rows[r], vals, st);
        cr_assert_eq(cs[f->table->rows[r].qi], st[0]);
        cr_assert(cv[f->table->rows[r].qi] == vals[0]);
    }
    static const struct {
        int sort, reverse;
        const char *filter;
    } cases[] = {
        {0, 0, ""},
        {0, 1, ""},
        {TOP_SORT_NAME, 0, ""},
        {TOP_SORT_NAME, 1, ""},
        {1, 0, ""},
        {TOP_SORT_PID, 0, ""},
        {0, 0, "inst-01*"},
        {0, 1, "99"},
        {2, 0, ""},
        {TOP_SORT_NONE, 0, "*5"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        v.sort = cases[c].sort;
        v.reverse = cases[c].reverse;
        snprintf(v.filter, sizeof v.filter, "%s", cases[c].filter);
        size_t count = view_count(&v, m);
        check_window(&v, m, 0, 40);          /* the screen: one pass */
        check_window(&v, m, 3, 20);          /* inside it: no new work */
        check_window(&v, m, 0, 4096);        /* the largest one-pass window */
        check_window(&v, m, 5000, 40);       /* further down: quickselect */
        check_window(&v, m, count - 40, 40); /* End */
        check_window(&v, m, count - 10, 40); /* past the end */
        check_window(&v, m, 0, count);       /* batch mode: every row */
    }
    /* Without totals, _Total is not a row. */
    v.totals = 0;
    v.sort = 0;
    v.filter[0] = 0;
    check_window(&v, m, 0, 40);
    view_free(&v);
    top_model_close(m);
    top_stop(&p);
}

/* Both models' views of the same data, rank by rank (rows named by
 * instance name: the two tables are built alike, but keys are seeded). */
static void same_order(top_model *a, top_view *va, top_model *b, top_view *vb, size_t first,
                       size_t n, const char *what)
{
    size_t count = view_count(va, a);
    cr_assert_eq(count, view_count(vb, b), "%s: row counts", what);
    uint32_t *ra = calloc(n + 1, sizeof *ra), *rb = calloc(n + 1, sizeof *rb);
    cr_assert(ra && rb);
    size_t ga = view_rows(va, a, first, n, ra), gb = view_rows(vb, b, first, n, rb);
    cr_assert_eq(ga, gb, "%s: window sizes", what);
    const top_table *ta = top_model_frame(a)->table, *tb = top_model_frame(b)->table;
    for (size_t i = 0; i < ga; i++) {
        const top_row *x = &ta->rows[ra[i]], *y = &tb->rows[rb[i]];
        cr_assert(x->name_len == y->name_len &&
                      memcmp(top_row_name(ta, x), top_row_name(tb, y), x->name_len) == 0 &&
                      x->state == y->state,
                  "%s: rank %zu: %.*s vs %.*s", what, first + i, (int)x->name_len,
                  top_row_name(ta, x), (int)y->name_len, top_row_name(tb, y));
    }
    free(ra);
    free(rb);
}

/* Two models of "Top Test" on the same provider, the second cooking the
 * sort column after the read (top_model_set_fused(b, 0): pcwtop's way
 * before), and a view for each. */
static void open_pair(top_model **a, top_model **b, top_view *va, top_view *vb)
{
    cr_assert_eq(top_model_open(a, NULL), PCW_OK);
    cr_assert_eq(top_model_open(b, NULL), PCW_OK);
    top_model_want(*a, "Top Test", 0);
    top_model_want(*b, "Top Test", 0);
    top_model_set_fused(*b, 0);
    view_init(va);
    view_init(vb);
}

static void close_pair(tu_child *p, top_model *a, top_model *b, top_view *va, top_view *vb)
{
    view_free(va);
    view_free(vb);
    top_model_close(a);
    top_model_close(b);
    top_stop(p);
}

/* The sort column that comes with the collection (the column the refresh
 * before sorted by: pcw_pdh_collect_column converts it as it reads the
 * rows, or cooks it right after the read when the instance list moved)
 * gives the order the column cooked on demand gives
 * (top_model_set_fused(m, 0), pcwtop's way before), on the same data:
 * ties by the query's order, in both directions, every column; with
 * instances created, closed (gone rows without a value: last either way)
 * and changed between refreshes. */
Test(pcwtop, fused_sort_column_orders_as_the_column_cooked_after)
{
    tu_child p;
    top_start(&p,
              (const char *const[]){"--instances", "5000", "--seed", "11", "--plain", "1", NULL});
    top_model *a, *b;
    top_view va, vb;
    open_pair(&a, &b, &va, &vb);
    static const struct {
        int sort, reverse;
        const char *churn; /* a provider command before the round, or NULL */
        int fused;         /* the column the collection gives, or -1 */
    } rounds[] = {
        {0, 0, NULL, -1}, /* the first collection: nothing sorted before */
        {0, 0, NULL, 0},  /* steady (the first read the set twice) */
        {0, 0, NULL, 0},
        {0, 1, NULL, 0},                     /* ascending: the same column */
        {0, 0, "set inst-000100 999999", 0}, /* a value moves: steady still */
        {0, 0, "create late 5", -1},         /* more rows than the column held */
        {0, 0, NULL, 0},                     /* steady again */
        {2, 0, NULL, 0},                     /* another column: cooked after the read... */
        {2, 1, NULL, 2},                     /* ...then converted as read */
        {0, 0, "close inst-000007", 2},      /* cooked after the read; a gone
                                                row: no value, last */
        {0, 1, NULL, 0},
        {0, 1, NULL, 0},
        {TOP_SORT_NAME, 0, NULL, 0},  /* the last refresh sorted by 0 */
        {TOP_SORT_NAME, 0, NULL, -1}, /* names: no column asked for */
    };
    for (size_t r = 0; r < sizeof rounds / sizeof rounds[0]; r++) {
        if (rounds[r].churn)
            top_cmd(&p, "%s", rounds[r].churn);
        cr_assert_eq(top_model_collect(a, 1000000000ull), PCW_OK);
        cr_assert_eq(top_model_collect(b, 1000000000ull), PCW_OK);
        char what[64];
        snprintf(what, sizeof what, "round %zu (sort %d reverse %d)", r, rounds[r].sort,
                 rounds[r].reverse);
        cr_assert_eq(top_model_frame(a)->fused_col, rounds[r].fused, "%s: fused_col %d", what,
                     top_model_frame(a)->fused_col);
        cr_assert_eq(top_model_frame(b)->fused_col, -1, "%s: b does not fuse", what);
        va.sort = vb.sort = rounds[r].sort;
        va.reverse = vb.reverse = rounds[r].reverse;
        size_t count = view_count(&va, a);
        same_order(a, &va, b, &vb, 0, 40, what);
        same_order(a, &va, b, &vb, 2000, 40, what);
        same_order(a, &va, b, &vb, count - 40, 40, what);
        same_order(a, &va, b, &vb, 0, count, what);
        if (r >= 9 && rounds[r].sort == 0) { /* the gone row is the last */
            uint32_t last;
            cr_assert_eq(view_rows(&va, a, count - 1, 1, &last), 1);
            const top_table *t = top_model_frame(a)->table;
            cr_assert_str_eq(top_row_name(t, &t->rows[last]), "inst-000007", "%s", what);
        }
        if (r == 4 && !rounds[r].reverse) { /* the moved value leads */
            uint32_t first;
            cr_assert_eq(view_rows(&va, a, 0, 1, &first), 1);
            const top_table *t = top_model_frame(a)->table;
            cr_assert_str_eq(top_row_name(t, &t->rows[first]), "inst-000100", "%s", what);
        }
    }
    close_pair(&p, a, b, &va, &vb);
}

/* The first screenfuls that come ranked with the collection (the
 * refresh before showed them: pcw_pdh_collect_top keeps the window's
 * candidates as it reads the rows, bounded by the last refresh's cutoff,
 * and the column is never materialised) are the rows the column cooked on
 * demand gives (top_model_set_fused(m, 0)), on the same data: ties by the
 * query's order (a column of zeros), both directions, a value jumping
 * over the cutoff, the top rows falling below it (a bound fewer rows
 * reach: ranked again after the read), instances created and closed (a
 * gone row among the rows), a window further down in the same refresh. */
static void ranked_round(tu_child *p, top_model *a, top_view *va, top_model *b, top_view *vb,
                         int sort, int reverse, int ranked, const char *churn, size_t r)
{
    if (churn)
        top_cmd(p, "%s", churn);
    cr_assert_eq(top_model_collect(a, 1000000000ull), PCW_OK);
    cr_assert_eq(top_model_collect(b, 1000000000ull), PCW_OK);
    char what[96];
    snprintf(what, sizeof what, "round %zu (sort %d reverse %d%s%s)", r, sort, reverse,
             churn ? ", " : "", churn ? churn : "");
    if (ranked != -2) /* -2: either */
        cr_assert_eq(top_model_frame(a)->ranked_col, ranked, "%s: ranked_col %d", what,
                     top_model_frame(a)->ranked_col);
    cr_assert_eq(top_model_frame(b)->ranked_col, -1, "%s: b does not rank", what);
    va->sort = vb->sort = sort;
    va->reverse = vb->reverse = reverse;
    same_order(a, va, b, vb, 0, 40, what);
    same_order(a, va, b, vb, 7, 20, what);
    same_order(a, va, b, vb, 0, 60, what);
}

Test(pcwtop, ranked_window_orders_as_the_column_cooked_after)
{
    tu_child p;
    top_start(&p,
              (const char *const[]){"--instances", "5000", "--seed", "5", "--plain", "1", NULL});
    top_model *a, *b;
    top_view va, vb;
    open_pair(&a, &b, &va, &vb);
    size_t r = 0;
    ranked_round(&p, a, &va, b, &vb, 0, 0, -1, NULL, r++); /* nothing shown before */
    ranked_round(&p, a, &va, b, &vb, 0, 0, -2, NULL, r++); /* the new handle's
                                                            first reads may not be steady */
    ranked_round(&p, a, &va, b, &vb, 0, 0, 0, NULL, r++);  /* bounded */
    ranked_round(&p, a, &va, b, &vb, 0, 1, 0, NULL, r++);  /* ranked descending: missed */
    ranked_round(&p, a, &va, b, &vb, 0, 1, 0, NULL, r++);  /* ascending */
    ranked_round(&p, a, &va, b, &vb, 0, 1, 0, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 0, 0, 0, "set inst-000100 999999", r++);
    {
        uint32_t first;
        cr_assert_eq(view_rows(&va, a, 0, 1, &first), 1);
        const top_table *t = top_model_frame(a)->table;
        cr_assert_str_eq(top_row_name(t, &t->rows[first]), "inst-000100");
    }
    ranked_round(&p, a, &va, b, &vb, 0, 0, 0, NULL, r++);
    /* The 50 first rows fall to 0: fewer than the rows ranked reach the
     * last refresh's cutoff, so the bound is wrong. */
    {
        uint32_t top[50];
        cr_assert_eq(view_rows(&vb, b, 0, 50, top), 50);
        const top_table *t = top_model_frame(b)->table;
        for (size_t i = 0; i < 50; i++)
            top_cmd(&p, "set %s 0", top_row_name(t, &t->rows[top[i]]));
    }
    ranked_round(&p, a, &va, b, &vb, 0, 0, -1, NULL, r++); /* ranked after the read */
    ranked_round(&p, a, &va, b, &vb, 0, 0, 0, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 0, 1, 0, NULL, r++); /* the zeros lead, by row */
    ranked_round(&p, a, &va, b, &vb, 0, 1, 0, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 0, 0, -1, "create late 999", r++); /* after the read */
    ranked_round(&p, a, &va, b, &vb, 0, 0, -2, NULL, r++); /* (steady again: a read or two) */
    ranked_round(&p, a, &va, b, &vb, 0, 0, 0, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 0, 0, -1, "close inst-000100", r++);
    ranked_round(&p, a, &va, b, &vb, 0, 0, -2, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 0, 0, 0, NULL, r++); /* a gone row in the table */
    cr_assert(top_model_frame(a)->table->nghosts > 0);
    ranked_round(&p, a, &va, b, &vb, 2, 0, 0, NULL, r++); /* Ops: all 0, ties by row */
    ranked_round(&p, a, &va, b, &vb, 2, 0, 2, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 2, 1, 2, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 2, 1, 2, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 1, 0, 2, NULL, r++); /* Index: unique */
    ranked_round(&p, a, &va, b, &vb, 1, 0, 1, NULL, r++);
    /* A window further down as well: the next collection converts the
     * column (fused_col), and the first rows come from it. */
    size_t count = view_count(&va, a);
    same_order(a, &va, b, &vb, count - 40, 40, "the last rows");
    ranked_round(&p, a, &va, b, &vb, 1, 0, -1, NULL, r++);
    cr_assert_eq(top_model_frame(a)->fused_col, 1);
    ranked_round(&p, a, &va, b, &vb, 1, 0, 1, NULL, r++);
    /* A filter: the column, never a ranking. */
    snprintf(va.filter, sizeof va.filter, "inst-0001");
    snprintf(vb.filter, sizeof vb.filter, "inst-0001");
    ranked_round(&p, a, &va, b, &vb, 1, 0, 1, NULL, r++);
    ranked_round(&p, a, &va, b, &vb, 1, 0, -1, NULL, r++);
    cr_assert_eq(top_model_frame(a)->fused_col, 1);
    close_pair(&p, a, b, &va, &vb);
}

/* A counterset with a _Total and rates: the collection ranks the column
 * after the read (among the totals, which the view leaves out), in the
 * order the column gives. */
Test(pcwtop, ranked_window_with_totals_and_rates)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--instances", "3000", "--seed", "9", NULL});
    top_model *a, *b;
    top_view va, vb;
    open_pair(&a, &b, &va, &vb);
    for (size_t r = 0; r < 8; r++) {
        if (r == 3)
            top_cmd(&p, "ops inst-000010 5000");
        ranked_round(&p, a, &va, b, &vb, r < 5 ? 2 : 0, r == 6, -1, NULL, r);
        cr_assert(top_model_frame(a)->table->ntotals > 0);
    }
    close_pair(&p, a, b, &va, &vb);
}

Test(pcwtop, table_marks_new_gone_and_exited_rows)
{
    tu_child a, b;
    top_start(&a, (const char *const[]){NULL});
    top_cmd(&a, "create alpha 1");
    top_cmd(&a, "create beta 2");
    top_model *m;
    cr_assert_eq(top_model_open(&m, NULL), PCW_OK);
    top_model_want(m, NULL, 1); /* the first there is */
    cr_assert_eq(top_model_collect(m, 1000000000ull), PCW_OK);
    const top_frame *f = top_model_frame(m);
    cr_assert(f->table);
    cr_assert_eq(f->table->nrows, 3);
    for (size_t r = 0; r < 3; r++)
        cr_assert_eq(f->table->rows[r].born, 0, "rows there from the start are not new");
    /* A steady state keeps its table (the query may re-read the provider
     * list for a moment after a change: pcw_pdh_instance_epoch). */
    uint64_t table = 0;
    long long deadline = tu_now_ms() + 10000;
    do {
        table = f->table->id;
        cr_assert_eq(top_model_collect(m, 1000000000ull), PCW_OK);
    } while (f->table->id != table && tu_now_ms() < deadline);
    cr_assert_eq(f->table->id, table, "a steady state keeps its table");
    for (size_t r = 0; r < 3; r++)
        cr_assert_eq(f->table->rows[r].born, 0, "a table built again keeps the marks");
    /* A new instance is marked; a closed one stays, marked, where it was. */
    top_cmd(&a, "create gamma 3");
    top_cmd(&a, "close alpha");
    cr_assert_eq(top_model_collect(m, 1000000000ull), PCW_OK);
    uint64_t seq = f->seq;
    const top_table *t = f->table;
    cr_assert_eq(t->nrows, 4, "_Total, alpha (gone), beta, gamma");
    cr_assert_str_eq(top_row_name(t, &t->rows[1]), "alpha");
    cr_assert_eq(t->rows[1].state, TOP_ROW_GONE);
    cr_assert_eq(t->rows[1].qi, UINT32_MAX);
    cr_assert_str_eq(top_row_name(t, &t->rows[3]), "gamma");
    cr_assert_eq(t->rows[3].born, seq);
    cr_assert_eq(f->born_now, 1);
    cr_assert_eq(f->gone_now, 1);
    /* A provider that exits: its rows are marked exited. */
    top_start(&b, (const char *const[]){NULL});
    top_cmd(&b, "create delta 4");
    cr_assert_eq(top_model_collect(m, 1000000000ull), PCW_OK);
    cr_assert_eq(f->providers_live, 2);
    top_stop(&b);
    cr_assert_eq(top_model_collect(m, 1000000000ull), PCW_OK);
    t = f->table;
    uint32_t d = UINT32_MAX;
    for (uint32_t r = 0; r < t->nrows; r++)
        if (strcmp(top_row_name(t, &t->rows[r]), "delta") == 0)
            d = r;
    cr_assert_neq(d, UINT32_MAX, "delta stays a few refreshes");
    cr_assert_eq(t->rows[d].state, TOP_ROW_EXITED);
    cr_assert_eq(f->providers_live, 1);
    cr_assert_eq(f->providers_exited, 1);
    cr_assert_eq(f->nexits, 1);
    /* ...and leave after TOP_GONE_REFRESHES refreshes. */
    for (unsigned i = 0; i < TOP_GONE_REFRESHES; i++)
        cr_assert_eq(top_model_collect(m, 1000000000ull), PCW_OK);
    t = f->table;
    for (uint32_t r = 0; r < t->nrows; r++)
        cr_assert(t->rows[r].state == TOP_ROW_LIVE, "%s still there", top_row_name(t, &t->rows[r]));
    top_model_close(m);
    top_stop(&a);
}

Test(pcwtop, numbers_and_names_at_a_fixed_width)
{
    char b[64];
    static const struct {
        double v;
        const char *unit;
        const char *want;
    } cases[] = {
        {48, "", "48"},         {99999, "", "99999"},       {123456, "", "123.5k"},
        {1e6, "", "1.000M"},    {999.96, "/s", "1.000k/s"}, {12.345, "/s", "12.35/s"},
        {-3.5, "", "-3.500"},   {45.2, "%", "45.20%"},      {100, "%", "100.0%"},
        {0.5, "%", "0.500%"},   {0.0015, "s", "1.500ms"},   {0.125, "", "0.125"},
        {2.5e12, "", "2.500T"}, {0, "/s", "0/s"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fmt_value(b, sizeof b, cases[i].v, cases[i].unit, 0);
        cr_assert_str_eq(b, cases[i].want, "%g%s", cases[i].v, cases[i].unit);
        cr_assert_leq(strlen(b), FMT_MIN_CELL);
    }
    fmt_value(b, sizeof b, 123456789, "/s", 1); /* raw: exact, no unit */
    cr_assert_str_eq(b, "123456789");
    fmt_value(b, sizeof b, 2652000001.0, "", 1);
    cr_assert_str_eq(b, "2652000001");
    /* Wide characters take two columns; a cut name ends in an ellipsis. */
    cr_assert_eq(utf8_width("日本語", strlen("日本語")), 6);
    utf8_pad(b, sizeof b, "日本語テスト", strlen("日本語テスト"), 7, 0);
    cr_assert_str_eq(b, "日本語…");
    utf8_pad(b, sizeof b, "ab", 2, 4, 1);
    cr_assert_str_eq(b, "  ab");
    utf8_pad(b, sizeof b, "a\tb", 3, 3, 0);
    cr_assert_str_eq(b, "a?b", "control characters are shown as '?'");
}

/* ---- batch mode ----------------------------------------------------------------- */

Test(pcwtop, batch_prints_each_refresh_as_text)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create small 5");
    top_cmd(&p, "create big 30");
    top_cmd(&p, "create mid 10");
    char exe[PATH_MAX], out[1 << 16], err[4096];
    pcwtop_path(exe, sizeof exe);
    int rc = run((const char *const[]){exe, "-b", "-n", "2", "-d", "0.2", "-c", "Top Test", "-s",
                                       "Value", NULL},
                 out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "pcwtop -b failed: %s", err);
    /* Two refreshes, each a header, the table, a blank line. */
    char *second = strstr(out + 1, "\npcwtop ");
    cr_assert(second, "two refreshes:\n%s", out);
    cr_assert(!strstr(second + 1, "\npcwtop "), "only two:\n%s", out);
    /* Numbered as printed: 1 and 2 (the priming collection is not one). */
    const char *first = strstr(out, " - refresh 1 - ");
    cr_assert(first && first < second && strstr(second, " - refresh 2 - "), "%s", out);
    cr_assert(strstr(out, "Providers: 1 live, 0 exited"), "%s", out);
    cr_assert(strstr(out, "Counterset: Top Test (multipleAggregate, 1 provider), sorted by Value, "
                          "descending"),
              "%s", out);
    regex_t re;
    cr_assert_eq(regcomp(&re,
                         "INSTANCE +PID +Value +Index +Ops\n"
                         "  _Total +- +30 +3 +0/s\n"
                         "  big +[0-9]+ +30 +1 +0/s\n"
                         "  mid +[0-9]+ +10 +2 +0/s\n"
                         "  small +[0-9]+ +5 +0 +0/s\n",
                         REG_EXTENDED),
                 0);
    cr_assert_eq(regexec(&re, second, 0, NULL, 0), 0, "the table:\n%s", second);
    regfree(&re);
    /* A filter, ascending by name. */
    rc = run(
        (const char *const[]){exe, "-b", "-n", "1", "-d", "0.1", "-f", "*i*", "-s", "-name", NULL},
        out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "filter \"*i*\" (2 shown)"), "%s", out);
    cr_assert(strstr(out, "big") < strstr(out, "mid"), "%s", out);
    cr_assert(!strstr(out, "  small "), "%s", out);
    top_stop(&p);
}

Test(pcwtop, bad_options_and_missing_countersets_are_refused)
{
    char exe[PATH_MAX], out[8192], err[8192];
    pcwtop_path(exe, sizeof exe);
    cr_assert_eq(run((const char *const[]){exe, "-d", "0", NULL}, out, sizeof out, err, sizeof err),
                 2);
    cr_assert(strstr(err, "bad delay \"0\""), "%s", err);
    cr_assert_eq(run((const char *const[]){exe, "--frob", NULL}, out, sizeof out, err, sizeof err),
                 2);
    cr_assert(strstr(err, "unknown option --frob"), "%s", err);
    cr_assert_eq(run((const char *const[]){exe, "-n", "x", NULL}, out, sizeof out, err, sizeof err),
                 2);
    cr_assert_eq(
        run((const char *const[]){exe, "--version", NULL}, out, sizeof out, err, sizeof err), 0);
    cr_assert_str_eq(out, "pcwtop (pcw) " PCW_VERSION_STRING "\n");
    cr_assert_eq(run((const char *const[]){exe, "--help", NULL}, out, sizeof out, err, sizeof err),
                 0);
    cr_assert(strstr(out, "Usage: pcwtop"), "%s", out);
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    cr_assert_eq(run((const char *const[]){exe, "-b", "-n", "1", "-c", "Nope", NULL}, out,
                     sizeof out, err, sizeof err),
                 1);
    cr_assert(strstr(err, "counterset \"Nope\" does not exist"), "%s", err);
    cr_assert_eq(run((const char *const[]){exe, "-b", "-n", "1", "-s", "Nope", NULL}, out,
                     sizeof out, err, sizeof err),
                 1);
    cr_assert(strstr(err, "no column \"Nope\" in \"Top Test\" (columns: name, pid, Value, Index, "
                          "Ops)"),
              "%s", err);
    /* Not a terminal: interactive mode says what to do. */
    cr_assert_eq(run((const char *const[]){exe, NULL}, out, sizeof out, err, sizeof err), 1);
    cr_assert(strstr(err, "must be a terminal (or use -b)"), "%s", err);
    top_stop(&p);
}

/* ---- the terminal ------------------------------------------------------------------ */

Test(pcwtop, shows_geometric_waves_and_their_values_change)
{
    pid_t w = waves_start();
    session(120, 40);
    start_top("-d 0.3 -c 'Geometric Waves'");
    WAIT_FOR("Small Wave");
    const char *s = screen();
    cr_assert(strstr(s, "Geometric Waves (multipleAggregate, 1 provider)"), "%s", s);
    cr_assert(strstr(s, "Providers: 1 live, 0 exited"), "%s", s);
    cr_assert(strstr(s, "Triangle") && strstr(s, "Square Wave"), "%s", s);
    cr_assert(strstr(s, "_Total") && strstr(s, "Medium Wave") && strstr(s, "Large Wave"), "%s", s);
    /* The Triangle of Small Wave moves once a second: wait for another. */
    char line[4096], first[64], now[64];
    cr_assert(line_of(s, "Small Wave", line, sizeof line) >= 0);
    cr_assert_eq(field_after(line, "Small Wave", 1, first, sizeof first), 0, "%s", line);
    long long deadline = tu_now_ms() + 20000;
    do {
        usleep(100 * 1000); /* polling pace */
        s = screen();
        cr_assert(line_of(s, "Small Wave", line, sizeof line) >= 0, "%s", s);
        cr_assert_eq(field_after(line, "Small Wave", 1, now, sizeof now), 0, "%s", line);
    } while (strcmp(first, now) == 0 && tu_now_ms() < deadline);
    cr_assert_str_neq(first, now, "Triangle stayed %s", first);
    keys("q");
    assert_restored();
    waves_stop(w);
}

/* The screen row (index) of each name, in order: a < b < c. */
static void assert_order(const char *a, const char *b, const char *c)
{
    long long deadline = tu_now_ms() + 20000;
    int ia, ib, ic;
    const char *s;
    do {
        s = screen();
        ia = line_of(s, a, NULL, 0), ib = line_of(s, b, NULL, 0), ic = line_of(s, c, NULL, 0);
        if (ia >= 0 && ia < ib && ib < ic)
            return;
        usleep(50 * 1000);
    } while (tu_now_ms() < deadline);
    cr_assert_fail("not in the order %s, %s, %s:\n%s", a, b, c, s);
}

Test(pcwtop, sorts_reverses_and_chooses_the_sort_column)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create small 5");
    top_cmd(&p, "create big 30");
    top_cmd(&p, "create mid 10");
    session(120, 40);
    start_top("-d 0.3 -s Value");
    WAIT_FOR("sorted by Value (descending)");
    assert_order("big", "mid", "small");
    keys("r");
    WAIT_FOR("sorted by Value (ascending)");
    assert_order("small", "mid", "big");
    /* F6 (or s): the chooser lists the columns; Down to INSTANCE. */
    keys("F6");
    WAIT_FOR("Sort by");
    keys("Down");
    keys("Enter");
    WAIT_FOR("sorted by INSTANCE (ascending)");
    assert_order("big", "mid", "small");
    keys("s");
    WAIT_FOR("Sort by");
    keys("Escape");
    WAIT_GONE("Sort by");
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, filters_by_word_and_by_wildcard)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create alpha 1");
    top_cmd(&p, "create beta 2");
    top_cmd(&p, "create gamma 3");
    session(120, 40);
    start_top("-d 0.3");
    WAIT_FOR("gamma");
    keys("/");
    WAIT_FOR("Filter:");
    TMUX("send-keys", "-t", "t", "-l", "ta");
    keys("Enter");
    WAIT_FOR("filter \"ta\": 1 shown");
    const char *s = screen();
    cr_assert(strstr(s, "beta") && !strstr(s, "alpha") && !strstr(s, "gamma"), "%s", s);
    keys("/");
    keys("C-u");
    TMUX("send-keys", "-t", "t", "-l", "G*A");
    keys("Enter");
    WAIT_FOR("filter \"G*A\": 1 shown");
    s = screen();
    cr_assert(strstr(s, "gamma") && !strstr(s, "beta") && !strstr(s, "alpha"), "%s", s);
    keys("/");
    keys("C-u");
    keys("Enter");
    WAIT_FOR("alpha");
    keys("F10");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, help_screen_and_details)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create alpha 1");
    session(120, 40);
    start_top("-d 0.3");
    WAIT_FOR("alpha");
    keys("h");
    WAIT_FOR("Press any key to return.");
    cr_assert(strstr(screen(), "raw / cooked values"), "%s", screen());
    keys("x");
    WAIT_GONE("Press any key to return.");
    keys("F1");
    WAIT_FOR("Press any key to return.");
    keys("Escape");
    WAIT_FOR("F10Quit");
    WAIT_FOR("INSTANCE");
    keys("?");
    WAIT_FOR("Press any key to return.");
    keys("Space");
    WAIT_GONE("Press any key to return.");
    /* Details: the counters' metadata. */
    keys("d");
    WAIT_FOR("PERF_COUNTER_BULK_COUNT");
    const char *s = screen();
    cr_assert(strstr(s, "PERF_COUNTER_LARGE_RAWCOUNT") && strstr(s, "AGGREGATE"), "%s", s);
    cr_assert(strstr(s, "max") && strstr(s, "sum"), "aggregates: %s", s);
    keys("Escape");
    WAIT_GONE("PERF_COUNTER_BULK_COUNT");
    keys("q");
    assert_restored();
    top_stop(&p);
}

/* Is a braille pattern (U+2801..U+28FF) on screen? */
static int braille_on_screen(void)
{
    const unsigned char *s = (const unsigned char *)screen();
    for (; *s; s++)
        if (s[0] == 0xE2 && (s[1] & 0xFC) == 0xA0 && !(s[1] == 0xA0 && s[2] == 0x80))
            return 1;
    return 0;
}

Test(pcwtop, graph_view_draws_lines_with_a_labelled_axis)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create one 10");
    top_cmd(&p, "create two 40");
    session(120, 40);
    start_top("-d 0.2 -s Value");
    WAIT_FOR("two");
    keys("g");
    WAIT_FOR("\\Top Test(*)\\Value");
    WAIT_FOR("now");
    /* A few refreshes make a line. */
    for (int i = 0; i < 5; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "set one %d", 10 + 5 * i);
        top_cmd(&p, "%s", cmd);
    }
    long long deadline = tu_now_ms() + 20000;
    while (!braille_on_screen() && tu_now_ms() < deadline)
        usleep(50 * 1000);
    cr_assert(braille_on_screen(), "no braille line:\n%s", screen());
    const char *s = screen();
    cr_assert(strstr(s, "TOP BY SORT") && strstr(s, "LAST") && strstr(s, "MAX"), "%s", s);
    cr_assert(line_of(s, "two", NULL, 0) >= 0 && line_of(s, "one", NULL, 0) >= 0, "%s", s);
    cr_assert(strstr(s, "50"), "the axis is labelled up to 50:\n%s", s);
    /* Right: the next counter. */
    keys("Right");
    WAIT_FOR("\\Top Test(*)\\Index");
    keys("Escape");
    WAIT_FOR("INSTANCE");
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, switches_countersets_from_the_list)
{
    pid_t w = waves_start();
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create alpha 1");
    session(120, 40);
    start_top("-d 0.3 -c 'Top Test'");
    WAIT_FOR("alpha");
    WAIT_RE("Geometric Waves +\\(1\\)");
    keys("Tab");
    keys("Up"); /* the list is in name order: Geometric Waves, Top Test */
    WAIT_FOR("Geometric Waves (multipleAggregate");
    WAIT_FOR("Square Wave");
    cr_assert(!strstr(screen(), "alpha"), "%s", screen());
    keys("Down");
    WAIT_FOR("Top Test (multipleAggregate");
    WAIT_FOR("alpha");
    keys("q");
    assert_restored();
    top_stop(&p);
    waves_stop(w);
}

static int screen_lines(void)
{
    char out[64];
    tmux_v((const char *const[]){"display-message", "-p", "-t", "t", "#{pane_height}", NULL}, out,
           sizeof out);
    return atoi(out);
}

Test(pcwtop, follows_terminal_resizes)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--instances", "60", NULL});
    session(120, 40);
    start_top("-d 0.3");
    WAIT_FOR("inst-000030");
    TMUX("resize-window", "-t", "t", "-x", "70", "-y", "15");
    cr_assert_eq(screen_lines(), 15);
    WAIT_GONE("inst-000030"); /* fewer rows fit */
    WAIT_FOR("inst-000005");
    const char *s = screen();
    char line[4096];
    cr_assert_eq(line_of(s, "F1Help", line, sizeof line), 14, "the bar on the last line:\n%s", s);
    for (const char *q = s; *q;) {
        const char *nl = strchr(q, '\n');
        size_t len = nl ? (size_t)(nl - q) : strlen(q);
        cr_assert_leq(utf8_width(q, len), 70, "a line wider than the terminal:\n%s", s);
        q = nl ? nl + 1 : q + len;
    }
    TMUX("resize-window", "-t", "t", "-x", "120", "-y", "40");
    WAIT_FOR("inst-000030");
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, marks_instances_that_come_and_go)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create stays 1");
    session(120, 40);
    start_top("-d 0.3");
    WAIT_FOR("stays");
    top_cmd(&p, "create newbie 2");
    WAIT_FOR("+newbie");
    WAIT_FOR("1 new, 0 gone");
    WAIT_GONE("+newbie"); /* new for a few refreshes, then plain */
    WAIT_FOR(" newbie");
    top_cmd(&p, "close newbie");
    WAIT_RE("-newbie +[0-9]+ +gone +gone +gone");
    WAIT_GONE("newbie"); /* and then it leaves */
    cr_assert(strstr(screen(), "stays"), "%s", screen());
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, shows_a_provider_that_exits)
{
    tu_child a, b;
    top_start(&a, (const char *const[]){NULL});
    top_cmd(&a, "create first 1");
    top_start(&b, (const char *const[]){NULL});
    top_cmd(&b, "create second 2");
    session(120, 40);
    start_top("-d 0.3");
    WAIT_FOR("Providers: 2 live, 0 exited");
    WAIT_FOR("second");
    char msg[128];
    snprintf(msg, sizeof msg, "provider %d (top_provider) exited", (int)b.pid);
    top_stop(&b);
    WAIT_FOR(msg);
    WAIT_FOR("Providers: 1 live, 1 exited");
    WAIT_RE("xsecond +[0-9]+ +exited +exited"); /* marked, a few refreshes... */
    WAIT_GONE("second");                        /* ...then gone */
    keys("q");
    assert_restored();
    top_stop(&a);
}

Test(pcwtop, a_callback_provider_that_does_not_answer_stalls_nothing)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--callback", "Top Callback", NULL});
    session(120, 40);
    start_top("-d 0.3 --timeout 0.3 -c 'Top Callback'");
    WAIT_FOR("cb-2");
    top_cmd(&p, "stall 4000");
    WAIT_FOR("!cb-0");
    WAIT_FOR("no answer");
    WAIT_FOR("did not answer in time");
    top_cmd(&p, "stall 0");
    WAIT_GONE("!cb-0");
    keys("q");
    assert_restored();
    /* A collection that waits 60 s: keys still work, and q quits at once. */
    top_cmd(&p, "stall 60000");
    start_top("-d 1 --timeout 60 -c 'Top Callback'");
    long long t0 = tu_now_ms();
    keys("h");
    WAIT_FOR("Press any key to return.");
    keys("x");
    WAIT_GONE("Press any key to return.");
    keys("q");
    assert_restored();
    cr_assert_lt(tu_now_ms() - t0, 50000, "pcwtop waited for the provider");
    top_stop(&p);
}

Test(pcwtop, wide_names_take_their_width)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create 日本語テスト 77");
    top_cmd(&p, "create plain-ascii 77");
    session(120, 40);
    start_top("-d 0.3 -s name");
    WAIT_FOR("日本語テスト");
    WAIT_FOR("plain-ascii");
    /* The Value column ends at the same terminal column on both rows. */
    char a[4096], b[4096];
    const char *s = screen();
    cr_assert(line_of(s, "日本語テスト", a, sizeof a) >= 0);
    cr_assert(line_of(s, "plain-ascii", b, sizeof b) >= 0);
    const char *va = strstr(a, " 77"), *vb = strstr(b, " 77");
    cr_assert(va && vb, "%s\n%s", a, b);
    cr_assert_eq(utf8_width(a, (size_t)(va - a)), utf8_width(b, (size_t)(vb - b)), "\n%s\n%s", a,
                 b);
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, mouse_click_selects_a_counterset)
{
    pid_t w = waves_start();
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create alpha 1");
    session(120, 40);
    start_top("-d 0.3 -c 'Top Test'");
    WAIT_RE("Geometric Waves +\\(1\\)");
    /* A left click on the list's first entry (screen row 4, column 2):
     * xterm's X10 report, as the terminal sends it. */
    TMUX("send-keys", "-t", "t", "-H", "1b", "5b", "4d", "20", "23", "25"); /* press */
    TMUX("send-keys", "-t", "t", "-H", "1b", "5b", "4d", "23", "23", "25"); /* release */
    WAIT_FOR("Geometric Waves (multipleAggregate");
    WAIT_FOR("Square Wave");
    keys("q");
    assert_restored();
    top_stop(&p);
    waves_stop(w);
}

/* The restore on every way out: q, F10 (above), Ctrl-C, SIGTERM, a crash. */
static void quit_by(const char *how)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create alpha 1");
    session(120, 40);
    start_top("-d 0.3");
    WAIT_FOR("alpha");
    if (strcmp(how, "C-c") == 0) {
        keys("C-c");
    } else {
        char pids[64];
        tmux_v((const char *const[]){"display-message", "-p", "-t", "t", "#{pane_pid}", NULL}, pids,
               sizeof pids);
        /* pcwtop is the shell's child. */
        char cmd[128], out[256];
        snprintf(cmd, sizeof cmd, "pgrep -P %d -x pcwtop", atoi(pids));
        cr_assert_eq(run((const char *const[]){"sh", "-c", cmd, NULL}, out, sizeof out, NULL, 0), 0,
                     "no pcwtop under the shell");
        kill((pid_t)atoi(out), strcmp(how, "TERM") == 0 ? SIGTERM : SIGSEGV);
    }
    assert_restored();
    if (strcmp(how, "SEGV") == 0)
        cr_assert(strstr(screen(), "exit=139"), "died of SIGSEGV:\n%s", screen());
    else
        cr_assert(strstr(screen(), "exit=0"), "%s", screen());
    top_stop(&p);
}

Test(pcwtop, ctrl_c_restores_the_terminal)
{
    quit_by("C-c");
}

Test(pcwtop, sigterm_restores_the_terminal)
{
    quit_by("TERM");
}

Test(pcwtop, a_crash_restores_the_terminal)
{
    quit_by("SEGV");
}

/* ---- the terminal goes away ---------------------------------------------------- */

/* Has process pid ended (gone, or a zombie nobody reaped yet)? */
static int process_gone(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* "pid (comm) S ..." */
    return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static int wait_process_gone(pid_t pid, int ms)
{
    long long deadline = tu_now_ms() + ms;
    while (!process_gone(pid)) {
        if (tu_now_ms() >= deadline)
            return 0;
        usleep(20 * 1000); /* the pace of polling */
    }
    return 1;
}

/* The pid pcwtop runs as, from the file the shell wrote before exec. */
static pid_t read_pid(const char *file)
{
    long long deadline = tu_now_ms() + 20000;
    for (;;) {
        FILE *f = fopen(file, "r");
        int pid = 0;
        if (f) {
            if (fscanf(f, "%d", &pid) != 1)
                pid = 0;
            fclose(f);
        }
        if (pid > 0 || tu_now_ms() >= deadline)
            return pid;
        usleep(20 * 1000);
    }
}

/* Start pcwtop in place of the session's shell (exec: the pane is its
 * terminal alone), through `wrapper` (a shell fragment, may be ""). */
static pid_t exec_top(const char *wrapper, const char *pidfile)
{
    cr_assert(screen_wait("PCWTEST$", 0, 20000), "no shell prompt:\n%s", screen());
    char exe[PATH_MAX], cmd[2 * PATH_MAX + 512];
    pcwtop_path(exe, sizeof exe);
    snprintf(cmd, sizeof cmd, "echo $$ > %s; exec %s %s -d 0.2", pidfile, wrapper, exe);
    type(cmd);
    return read_pid(pidfile);
}

/* The terminal hangs up (tmux's server ends, closing the pane's pty) while
 * pcwtop cannot see SIGHUP (blocked, as under some supervisors): it ends on
 * the terminal's hangup itself (poll's POLLHUP, read's EOF or EIO). */
Test(pcwtop, exits_when_its_terminal_hangs_up)
{
    session(100, 30);
    char pidfile[PATH_MAX];
    snprintf(pidfile, sizeof pidfile, "%s/top.pid", tu_root);
    pid_t pid = exec_top("python3 -c 'import os, signal, sys; "
                         "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGHUP]); "
                         "os.execv(sys.argv[1], sys.argv[1:])'",
                         pidfile);
    cr_assert_gt(pid, 0, "no pid in %s", pidfile);
    WAIT_FOR("F1Help");
    TMUX("kill-server");
    cr_assert(wait_process_gone(pid, 10000),
              "pcwtop (pid %d) still runs after its terminal hung up", (int)pid);
}

/* A test process killed before its teardown (Criterion's timeout, a
 * crash) takes its tmux server and the pcwtop in it along (tmux_watchdog):
 * no stray pcwtop keeps running after the tests. */
Test(pcwtop, a_killed_test_leaves_no_pcwtop_running)
{
    char pidfile[PATH_MAX];
    snprintf(pidfile, sizeof pidfile, "%s/top.pid", tu_root);
    pid_t child = fork();
    cr_assert(child >= 0);
    if (child == 0) { /* a test that dies: no assertion, no teardown */
        session(100, 30);
        if (screen_wait("PCWTEST$", 0, 20000)) {
            char exe[PATH_MAX], cmd[2 * PATH_MAX + 64];
            pcwtop_path(exe, sizeof exe);
            snprintf(cmd, sizeof cmd, "echo $$ > %s; exec %s -d 0.2", pidfile, exe);
            type(cmd);
            screen_wait("F1Help", 0, 20000);
        }
        raise(SIGKILL);
    }
    int st;
    cr_assert_eq(waitpid(child, &st, 0), child);
    pid_t pid = read_pid(pidfile);
    cr_assert_gt(pid, 0, "pcwtop never started");
    cr_assert(wait_process_gone(pid, 10000),
              "pcwtop (pid %d) still runs after the test that started it was killed", (int)pid);
}

/* Is there a colour (SGR 30-38, 40-48, 90-97, 100-107; 39 and 49 are the
 * defaults) in an escape? */
static int has_colour(const char *s)
{
    for (const char *p = s; (p = strstr(p, "\033[")) != NULL; p += 2) {
        const char *q = p + 2;
        while (*q && *q != 'm' && (size_t)(q - p) < 32) {
            int n = atoi(q);
            if ((n >= 30 && n <= 48 && n != 39) || (n >= 90 && n <= 107))
                return 1;
            while (*q >= '0' && *q <= '9')
                q++;
            if (*q == ';')
                q++;
            else
                break;
        }
    }
    return 0;
}

static const char *screen_escapes(void)
{
    static char buf[1 << 16];
    tmux_v((const char *const[]){"capture-pane", "-p", "-e", "-t", "t", NULL}, buf, sizeof buf);
    return buf;
}

Test(pcwtop, no_colour_with_no_color_and_none_on_a_dumb_terminal)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create alpha 1");
    session(120, 40);
    start_top("-d 0.3");
    WAIT_FOR("alpha");
    cr_assert(has_colour(screen_escapes()), "colours by default:\n%s", screen_escapes());
    keys("q");
    assert_restored();
    /* NO_COLOR: bold and reverse only. */
    char exe[PATH_MAX], cmd[PATH_MAX + 128];
    pcwtop_path(exe, sizeof exe);
    snprintf(cmd, sizeof cmd, "NO_COLOR=1 %s -d 0.3; echo \"nc-exit=$?\"", exe);
    type(cmd);
    WAIT_FOR("alpha");
    const char *e = screen_escapes();
    cr_assert(!has_colour(e), "colour despite NO_COLOR:\n%s", e);
    cr_assert(strstr(e, "\033[7m") || strstr(e, "\033[1m"), "no attributes at all:\n%s", e);
    keys("q");
    WAIT_FOR("nc-exit=0");
    /* A dumb terminal cannot be driven: say so, use -b. */
    snprintf(cmd, sizeof cmd, "TERM=dumb %s; echo \"dumb-exit=$?\"", exe);
    type(cmd);
    WAIT_FOR("dumb-exit=1");
    cr_assert(strstr(screen(), "use -b"), "%s", screen());
    top_stop(&p);
}

/* ---- at 80x24 (issue 25) ------------------------------------------------------------ */

/* A "Web Server" counterset as the README's, with one instance "www":
 * counters "Bytes Sent/sec" (= 2652000001) and "Cache Hit %". */
static void web_start(tu_child *c)
{
    helper_start(c, "exporter_provider", (const char *const[]){NULL});
    top_cmd(c, "pair Web\\sServer Bytes\\sSent/sec Cache\\sHit\\s%%");
    top_cmd(c, "create Web\\sServer www");
    top_cmd(c, "set Web\\sServer www 0 2652000001");
    top_cmd(c, "set Web\\sServer www 1 123456789012345"); /* wider than its title */
}

Test(pcwtop, raw_mode_shows_exact_integers)
{
    tu_child p;
    web_start(&p);
    session(80, 24);
    start_top("-d 0.3 -c 'Web Server'");
    WAIT_FOR("www");
    keys("v");
    WAIT_FOR("RAW VALUES");
    WAIT_FOR(" 2652000001");      /* not 2.652G */
    WAIT_FOR(" 123456789012345"); /* the column widens: not cut */
    keys("q");
    assert_restored();
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}

/* The "Kinds" counterset: 16 counter columns, far more than 80 columns
 * show; instances alpha and beta. */
static void kinds_start(tu_child *c)
{
    helper_start(c, "exporter_provider", (const char *const[]){NULL});
    top_cmd(c, "kinds Kinds");
    top_cmd(c, "create Kinds alpha");
    top_cmd(c, "create Kinds beta");
}

static void helper_stop(tu_child *c)
{
    tu_send(c, "quit");
    tu_finish(c, 10000);
}

static const char *const kinds_cols[] = {
    "Level",     "Requests", "Hits",  "Sampled", "Latency", "Size",         "Busy",
    "Busy Fine", "Idle",     "Queue", "Uptime",  "Changes", "Workers Busy", "Precise",
};
#define NKINDS_COLS (sizeof kinds_cols / sizeof kinds_cols[0])

/* The table's title line. */
static void title_line(char *line, size_t cap)
{
    cr_assert(line_of(screen(), "INSTANCE", line, cap) >= 0, "no table title:\n%s", screen());
}

/* The counter titles of a title line: only whole names of kinds_cols, each
 * set off by spaces (a sort arrow may precede one). Returns how many. */
static int whole_columns(const char *line)
{
    const char *pid = strstr(line, "PID");
    cr_assert(pid, "%s", line);
    char rest[4096];
    snprintf(rest, sizeof rest, " %s ", pid + 3);
    /* The sort arrow (U+25B2/U+25BC, 3 bytes) counts as a space. */
    for (char *a; (a = strstr(rest, "\xe2\x96\xb2")) || (a = strstr(rest, "\xe2\x96\xbc"));)
        memset(a, ' ', 3);
    int n = 0;
    for (int pass = 0; pass < 2; pass++) /* names with a space first: "Busy Fine" before "Busy" */
        for (size_t i = 0; i < NKINDS_COLS; i++) {
            size_t len = strlen(kinds_cols[i]);
            if ((strchr(kinds_cols[i], ' ') != NULL) != (pass == 0))
                continue;
            for (char *p = strstr(rest, kinds_cols[i]); p; p = strstr(p + 1, kinds_cols[i]))
                if (p[-1] == ' ' && p[len] == ' ') {
                    memset(p, ' ', len);
                    n++;
                }
        }
    for (const char *q = rest; *q; q++)
        cr_assert(*q == ' ', "titles run together or are cut: \"%s\" (left: \"%s\")", line, rest);
    return n;
}

Test(pcwtop, at_80x24_titles_are_separated_and_the_bar_fits)
{
    tu_child p;
    kinds_start(&p);
    session(80, 24);
    start_top("-d 0.3 -c Kinds");
    WAIT_FOR("alpha");
    char line[4096];
    title_line(line, sizeof line);
    cr_assert_geq(whole_columns(line), 2, "%s", line);
    const char *s = screen();
    cr_assert(line_of(s, "F1Help", line, sizeof line) == 23, "the bar on the last line:\n%s", s);
    cr_assert(strstr(line, "F10Quit"), "the bar is cut before F10Quit: \"%s\"", line);
    /* Sorted by a column (an arrow before its title): still set off. */
    keys("F6");
    WAIT_FOR("Sort by");
    for (int i = 0; i < 4; i++)
        keys("Down"); /* (as published), INSTANCE, PID, Level, Requests */
    keys("Enter");
    WAIT_FOR("sorted by Requests");
    title_line(line, sizeof line);
    cr_assert_geq(whole_columns(line), 2, "%s", line);
    keys("q");
    assert_restored();
    helper_stop(&p);
}

Test(pcwtop, at_80x24_the_help_scrolls_to_its_last_line)
{
    tu_child p;
    kinds_start(&p);
    session(80, 24);
    start_top("-d 0.3 -c Kinds");
    WAIT_FOR("alpha");
    keys("F1");
    WAIT_FOR("pcwtop - the live viewer");
    cr_assert(!strstr(screen(), "Press any key to return."), "the help fits 24 lines?\n%s",
              screen());
    keys("End");
    WAIT_FOR("Press any key to return.");
    /* The help's lines (below the 3 header lines) are whole. */
    const char *body = screen();
    for (int i = 0; i < 3 && body; i++)
        body = strchr(body, '\n') ? strchr(body, '\n') + 1 : NULL;
    cr_assert(body && !strstr(body, "\xe2\x80\xa6"), "a help line is cut:\n%s", screen());
    keys("Home");
    WAIT_FOR("pcwtop - the live viewer");
    for (int i = 0; i < 60; i++)
        keys("Down");
    WAIT_FOR("Press any key to return.");
    keys("x");
    WAIT_GONE("pcwtop - the live viewer");
    WAIT_FOR("alpha");
    keys("q");
    assert_restored();
    helper_stop(&p);
}

/* Is the counter title `name` (whole) on screen? */
static int title_shown(const char *name)
{
    char line[4096];
    if (line_of(screen(), "INSTANCE", line, sizeof line) < 0)
        return 0;
    whole_columns(line);
    size_t len = strlen(name);
    for (const char *p = strstr(line, name); p; p = strstr(p + 1, name))
        if (p[-1] != ' ' || (p[len] != ' ' && p[len] != 0))
            continue;
        else
            return 1;
    return 0;
}

static int title_wait(const char *name, int shown)
{
    long long deadline = tu_now_ms() + 20000;
    do {
        if (title_shown(name) == shown)
            return 1;
        usleep(50 * 1000); /* polling pace */
    } while (tu_now_ms() < deadline);
    return 0;
}
#define TITLE_SHOWN(name)                                                                          \
    cr_assert(title_wait((name), 1), "no column \"%s\":\n%s", (name), screen())
#define TITLE_HIDDEN(name)                                                                         \
    cr_assert(title_wait((name), 0), "column \"%s\" still shown:\n%s", (name), screen())

Test(pcwtop, at_80x24_right_and_left_scroll_the_columns)
{
    tu_child p;
    kinds_start(&p);
    session(80, 24);
    start_top("-d 0.3 -c Kinds");
    WAIT_FOR("alpha");
    TITLE_SHOWN("Level");
    cr_assert(!title_shown("Precise"), "all columns fit?\n%s", screen());
    /* One column at a time: every layout shows whole, separated titles. */
    for (int i = 2; i <= (int)NKINDS_COLS && !title_shown("Precise"); i++) {
        char first[32];
        snprintf(first, sizeof first, "columns %d-", i);
        keys("Right");
        WAIT_FOR(first);
        char line[4096];
        title_line(line, sizeof line);
        whole_columns(line);
    }
    TITLE_SHOWN("Precise"); /* the last column */
    TITLE_HIDDEN("Level");
    const char *s = screen();
    cr_assert(strstr(s, "alpha") && strstr(s, "INSTANCE"), "names stay:\n%s", s);
    for (int i = 0; i < (int)NKINDS_COLS; i++)
        keys("Left");
    TITLE_SHOWN("Level");
    keys("q");
    assert_restored();
    helper_stop(&p);
}

Test(pcwtop, at_80x24_c_hides_the_counterset_list_and_widens_the_table)
{
    tu_child p;
    kinds_start(&p);
    session(80, 24);
    start_top("-d 0.3 -c Kinds");
    WAIT_FOR("alpha");
    WAIT_FOR("Countersets "); /* the list's title; the header has "Countersets:" */
    char line[4096];
    title_line(line, sizeof line);
    int before = whole_columns(line);
    int x_before = (int)(strstr(line, "INSTANCE") - line);
    keys("c");
    WAIT_GONE("Countersets ");
    title_line(line, sizeof line);
    cr_assert_gt(whole_columns(line), before, "no more columns: %s", line);
    cr_assert_lt((int)(strstr(line, "INSTANCE") - line), x_before, "%s", line);
    keys("c");
    WAIT_FOR("Countersets ");
    keys("q");
    assert_restored();
    helper_stop(&p);
}

/* ---- htop's function keys (issue 25) ---------------------------------------------------- */

Test(pcwtop, f3_searches_and_jumps_to_an_instance)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--instances", "60", NULL});
    session(80, 24);
    start_top("-d 0.3");
    WAIT_FOR("inst-000005");
    cr_assert(!strstr(screen(), "inst-000050"), "%s", screen());
    keys("F3");
    WAIT_FOR("Search:");
    TMUX("send-keys", "-t", "t", "-l", "00050");
    WAIT_FOR("inst-000050"); /* the cursor went there, as typed */
    keys("Enter");
    WAIT_GONE("Search:");
    const char *s = screen();
    cr_assert(strstr(s, "inst-000050") && strstr(s, "inst-000001") == NULL,
              "not a filter: the rows around it are shown:\n%s", s);
    cr_assert(line_of(s, "inst-000049", NULL, 0) >= 0, "%s", s);
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, f4_filters_instances)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--instances", "30", NULL});
    session(80, 24);
    start_top("-d 0.3");
    WAIT_FOR("inst-000005");
    keys("F4");
    WAIT_FOR("Filter:");
    TMUX("send-keys", "-t", "t", "-l", "00017");
    keys("Enter");
    WAIT_FOR("filter \"00017\": 1 shown");
    const char *s = screen();
    cr_assert(strstr(s, "inst-000017") && !strstr(s, "inst-000005"), "%s", s);
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, f2_chooses_and_orders_the_columns)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--instances", "3", NULL});
    session(80, 24);
    start_top("-d 0.3");
    WAIT_FOR("inst-000002");
    char line[4096];
    title_line(line, sizeof line);
    cr_assert(strstr(line, "Value") < strstr(line, "Index") &&
                  strstr(line, "Index") < strstr(line, "Ops"),
              "%s", line);
    keys("F2");
    WAIT_FOR("Columns");
    keys("Space"); /* hide Value */
    long long deadline = tu_now_ms() + 20000;
    do {
        title_line(line, sizeof line);
        if (!strstr(line, "Value"))
            break;
        usleep(50 * 1000); /* polling pace */
    } while (tu_now_ms() < deadline);
    cr_assert(!strstr(line, "Value"), "%s", line);
    keys("End");
    keys("F7"); /* Ops up, before Index */
    keys("Escape");
    WAIT_GONE("Columns");
    deadline = tu_now_ms() + 20000;
    do {
        title_line(line, sizeof line);
        if (strstr(line, "Ops") && strstr(line, "Index") &&
            strstr(line, "Ops") < strstr(line, "Index"))
            break;
        usleep(50 * 1000); /* polling pace */
    } while (tu_now_ms() < deadline);
    cr_assert(strstr(line, "Ops") && strstr(line, "Ops") < strstr(line, "Index"), "%s", line);
    cr_assert(!strstr(line, "Value"), "%s", line);
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, f5_refreshes_now_even_when_paused)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    top_cmd(&p, "create alpha 1");
    session(80, 24);
    start_top("-d 0.3");
    WAIT_FOR("alpha");
    keys("Space");
    WAIT_FOR("PAUSED");
    top_cmd(&p, "set alpha 4321");
    keys("F5");
    WAIT_FOR(" 4321");
    cr_assert(strstr(screen(), "PAUSED"), "still paused:\n%s", screen());
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, the_help_lists_the_function_keys)
{
    tu_child p;
    top_start(&p, (const char *const[]){NULL});
    session(120, 60);
    start_top("-d 0.3");
    keys("h");
    WAIT_FOR("pcwtop - the live viewer");
    const char *s = screen();
    for (int k = 2; k <= 5; k++) {
        char f[8];
        snprintf(f, sizeof f, "F%d ", k);
        cr_assert(strstr(s, f), "%s not in the help:\n%s", f, s);
    }
    keys("x");
    keys("q");
    assert_restored();
    top_stop(&p);
}

Test(pcwtop, at_80x24_the_header_line_is_whole)
{
    tu_child p;
    kinds_start(&p);
    session(80, 24);
    start_top("-d 0.3 -c Kinds");
    WAIT_FOR("alpha");
    char line[4096];
    cr_assert_eq(line_of(screen(), "Providers:", line, sizeof line), 0, "%s", screen());
    /* What does not fit is left out, not cut: the delay and the time stay. */
    cr_assert(!strstr(line, "\xe2\x80\xa6"), "the header is cut: \"%s\"", line);
    cr_assert(strstr(line, "Instances: 2") && strstr(line, "Delay: 0.3s"), "\"%s\"", line);
    regex_t re;
    cr_assert_eq(regcomp(&re, "[0-9]{2}:[0-9]{2}:[0-9]{2} *$", REG_EXTENDED), 0);
    int timed = regexec(&re, line, 0, NULL, 0) == 0;
    regfree(&re);
    cr_assert(timed, "no time at the end: \"%s\"", line);
    keys("q");
    assert_restored();
    helper_stop(&p);
}

Test(pcwtop, a_list_hidden_by_a_narrow_terminal_does_not_keep_the_keys)
{
    tu_child p;
    top_start(&p, (const char *const[]){"--callback", "Top Callback", NULL});
    top_cmd(&p, "create alpha 1");
    session(80, 24);
    start_top("-d 0.3 -c 'Top Test'");
    WAIT_FOR("alpha");
    WAIT_FOR("Countersets ");
    keys("Tab"); /* the list has the keys... */
    TMUX("resize-window", "-t", "t", "-x", "50", "-y", "24");
    WAIT_GONE("Countersets "); /* ...and hides itself below 60 columns */
    keys("Up");                /* the table's: not the hidden list's (Top Callback) */
    keys("t");                 /* a message says the keys before it were read */
    WAIT_FOR("totals hidden");
    cr_assert(strstr(screen(), "Top Test ("), "the counterset changed:\n%s", screen());
    keys("q");
    assert_restored();
    top_stop(&p);
}

/* A _Total of a counter without an aggregate attribute shows "-": the
 * message line says why while the totals are on screen (issue 24 item 8),
 * and stops when they are hidden (t). */
Test(pcwtop, says_why_a_total_is_not_computed)
{
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "query_provider",
                          (const char *const[]){"--set", "NoAgg", "--type", "6", NULL}),
                 0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 30000) > 0, "query_provider did not start");
    cr_assert(tu_command(&p, line, sizeof line, "create a") > 0 && strncmp(line, "ok", 2) == 0);
    session(120, 30);
    start_top("-d 0.2 -c NoAgg");
    WAIT_FOR("_Total");
    /* query_provider's "Plain" alone has no aggregate attribute. */
    WAIT_RE("^_Total: counter \"Plain\" has no aggregate attribute");
    const char *s = screen();
    cr_assert_eq(line_of(s, "no aggregate attribute", line, sizeof line), 2,
                 "on the message line (screen.c's line 2):\n%s", s);
    keys("t");
    WAIT_GONE("no aggregate attribute");
    /* ...and once "totals hidden" has had its refreshes, it stays away. */
    WAIT_GONE("totals hidden");
    cr_assert(!strstr(screen(), "no aggregate attribute"), "%s", screen());
    keys("q");
    assert_restored();
    /* Batch mode prints it under the counterset line. */
    char exe[PATH_MAX], out[1 << 16], err[4096];
    pcwtop_path(exe, sizeof exe);
    int rc = run((const char *const[]){exe, "-b", "-n", "1", "-d", "0.1", "-c", "NoAgg", NULL}, out,
                 sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "\n_Total: counter \"Plain\" has no aggregate attribute, so its total is "
                          "not computed (-)\n"),
              "%s", out);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}

/* Advanced counters (detailLevel="advanced", issue 24 item 6) are not
 * columns unless asked for, as perfmon hides them. */
Test(pcwtop, hides_advanced_counters)
{
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "query_provider",
                          (const char *const[]){"--set", "Det", "--advanced", "7", NULL}),
                 0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 30000) > 0, "query_provider did not start");
    cr_assert(tu_command(&p, line, sizeof line, "create a") > 0 && strncmp(line, "ok", 2) == 0);
    session(160, 30);
    start_top("-d 0.2 -c Det");
    WAIT_FOR("Rate");
    cr_assert(!strstr(screen(), "Plain"), "an advanced counter is a column:\n%s", screen());
    /* a shows them (the header says so), a again hides them. */
    keys("a");
    WAIT_FOR("Plain");
    WAIT_FOR("ADVANCED");
    keys("a");
    WAIT_GONE("Plain");
    keys("q");
    assert_restored();
    /* -a in batch mode. */
    char exe[PATH_MAX], out[1 << 16], err[4096];
    pcwtop_path(exe, sizeof exe);
    int rc = run((const char *const[]){exe, "-b", "-n", "1", "-d", "0.1", "-c", "Det", "-a", NULL},
                 out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "Rate") && strstr(out, "Plain") && strstr(out, "advanced counters"), "%s",
              out);
    rc = run((const char *const[]){exe, "-b", "-n", "1", "-d", "0.1", "-c", "Det", NULL}, out,
             sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert(strstr(out, "Rate") && !strstr(out, "Plain"), "%s", out);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}

/* ---- histograms: quantile columns, the heatmap, -b -H ------------------------- */

/* tests/helpers/top_hist_provider with instance "web" observing, every
 * millisecond, 49 times 1 ms and once 20 ms: 98 % in the bucket of 1 ms,
 * (2^-10, 2^-9.875] s, and 2 % in the bucket of 20 ms, (2^-5.75,
 * 2^-5.625] s. So p50 and p90 lie in the first, p99 in the second (its
 * rank, 99 %, is above the 98 % below it): within the bucket is the
 * schema's error (2^(1/8) - 1 = 9 %). */
#define P99_LO 0.018581361171917516 /* 2^-5.75 */
#define P99_HI 0.020263118041422026 /* 2^-5.625 */
#define P50_LO 0.0009765625         /* 2^-10 */
#define P50_HI 0.0010649489576809157

static void hist_provider_start(tu_child *p)
{
    helper_start(p, "top_hist_provider", (const char *const[]){NULL});
    top_cmd(p, "create web");
    top_cmd(p, "pattern web 1000000 49 20000000 1");
}

/* "19.56ms" -> 0.01956 (the units pcwtop writes seconds in); NAN if not. */
static double seconds_of(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s)
        return NAN;
    static const struct {
        const char *sfx;
        double f;
    } u[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (strncmp(end, u[i].sfx, strlen(u[i].sfx)) == 0)
            return v * u[i].f;
    return NAN;
}

/* The whitespace-separated field n (from 0) of line, into buf. */
static int field(const char *line, int n, char *buf, size_t cap)
{
    const char *p = line;
    for (int i = 0;; i++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return 0;
        size_t len = strcspn(p, " ");
        if (i == n) {
            snprintf(buf, cap, "%.*s", (int)len, p);
            return 1;
        }
        p += len;
    }
}

/* A histogram counter is its default statistics' columns (rate mean p50
 * p90 p99 p99.9 max), seconds written as times; p99 and p50 of a known
 * distribution are right within the schema's error. */
Test(pcwtop, histogram_quantile_columns_show_the_known_p99)
{
    tu_child p;
    hist_provider_start(&p);
    session(170, 30);
    start_top("-d 0.3 -c 'Hist Test'");
    WAIT_FOR("Latency:p99.9");
    const char *s = screen();
    char line[4096];
    cr_assert(line_of(s, "Latency:p99.9", line, sizeof line) >= 0);
    regex_t re;
    cr_assert_eq(regcomp(&re,
                         "INSTANCE +PID +Requests +Latency:rate +Latency:mean +Latency:p50 "
                         "+Latency:p90 +Latency:p99 +Latency:p99\\.9 +Latency:max",
                         REG_EXTENDED),
                 0);
    cr_assert_eq(regexec(&re, line, 0, NULL, 0), 0, "the titles: %s", line);
    regfree(&re);
    /* The web row once its values are there: name pid requests rate mean
     * p50 p90 p99 p99.9 max. */
    WAIT_RE(" web +[0-9]+ +[0-9.]+k/s +[0-9.]+k/s +[0-9.]+ms +[0-9.]+[mu]s +[0-9.]+[mu]s "
            "+[0-9.]+ms ");
    cr_assert(line_of(screen(), " web ", line, sizeof line) >= 0);
    memmove(line, strstr(line, " web "), strlen(strstr(line, " web ")) + 1); /* after the list */
    char f[64];
    cr_assert(field(line, 7, f, sizeof f), "%s", line);
    double p99 = seconds_of(f);
    cr_assert(p99 > P99_LO && p99 <= P99_HI * 1.0005, "p99 %s not in the 20 ms bucket: %s", f,
              line);
    cr_assert(field(line, 5, f, sizeof f), "%s", line);
    double p50 = seconds_of(f);
    cr_assert(p50 > P50_LO * 0.9995 && p50 <= P50_HI * 1.0005, "p50 %s not in the 1 ms bucket: %s",
              f, line);
    cr_assert(field(line, 9, f, sizeof f), "%s", line);
    cr_assert(fabs(seconds_of(f) - P99_HI) < 1e-5, "max is the 20 ms bucket's bound: %s", line);
    /* The bar offers the heatmap (the counterset has a histogram). */
    cr_assert(line_of(screen(), "F10Quit", line, sizeof line) >= 0 && strstr(line, " HHeatmap "),
              "%s", line);
    keys("q");
    assert_restored();
    top_stop(&p);
}

/* The heatmap rows of the screen: each row's label (its upper bound, in
 * seconds) and whether any cell of it is shaded, top to bottom. */
typedef struct heat_row {
    double upper;
    int shaded;
    char line[1024];
} heat_row;

/* ascii: the locale is not UTF-8 (the axis is '|', the shades . : * #). */
static int heat_rows(const char *s, heat_row *out, int cap, int ascii)
{
    regex_t re;
    cr_assert_eq(regcomp(&re,
                         ascii ? "^ *([0-9.]+[num]?s|\\+Inf) \\|"
                               : "^ *([0-9.]+[num]?s|\\+Inf) \xe2\x94\x82",
                         REG_EXTENDED),
                 0);
    static const char *const shades_u[] = {"\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93",
                                           "\xe2\x96\x88"};
    static const char *const shades_a[] = {".", ":", "*", "#"};
    int n = 0;
    for (const char *p = s; *p && n < cap;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), p);
        regmatch_t m[2];
        if (regexec(&re, buf, 2, m, 0) == 0) {
            heat_row *r = &out[n++];
            r->upper =
                strncmp(buf + m[1].rm_so, "+Inf", 4) == 0 ? INFINITY : seconds_of(buf + m[1].rm_so);
            const char *plot = buf + m[0].rm_eo;
            r->shaded = 0;
            for (int i = 0; i < 4; i++)
                r->shaded |= strstr(plot, ascii ? shades_a[i] : shades_u[i]) != NULL;
            snprintf(r->line, sizeof r->line, "%s", buf);
        }
        if (!nl)
            break;
        p = nl + 1;
    }
    regfree(&re);
    return n;
}

/* The row (index) whose range - above the next row's label, up to its own
 * - holds v, or -1. */
static int row_holding(const heat_row *r, int n, double v)
{
    for (int i = 0; i < n; i++)
        if (v <= r[i].upper && (i + 1 == n || v > r[i + 1].upper))
            return i;
    return -1;
}

/* H on the histogram: at 80x24, the rows holding 1 ms and 20 ms - and only
 * they - are shaded, p50 and p99 are marked on them, and the legend says
 * the last interval's statistics. */
Test(pcwtop, at_80x24_the_heatmap_shades_the_populated_buckets)
{
    tu_child p;
    hist_provider_start(&p);
    session(80, 24);
    start_top("-d 0.2 -c 'Hist Test'");
    WAIT_FOR("web");
    keys("Down"); /* from _Total to web */
    keys("H");
    WAIT_FOR("\\Hist Test(web)\\Latency  distribution per refresh");
    WAIT_FOR("last interval: ");
    WAIT_FOR("p99");
    /* Once a few columns are drawn. */
    heat_row rows[32];
    int n = 0, ok = 0;
    long long deadline = tu_now_ms() + 20000;
    while (!ok && tu_now_ms() < deadline) {
        n = heat_rows(screen(), rows, 32, 0);
        int r1 = row_holding(rows, n, 0.001), r20 = row_holding(rows, n, 0.020);
        ok = n >= 3 && r1 >= 0 && r20 >= 0 && rows[r1].shaded && rows[r20].shaded &&
             strstr(screen(), "p99 ");
        if (!ok)
            usleep(50 * 1000);
    }
    const char *s = screen();
    cr_assert(ok, "no shaded rows for 1 ms and 20 ms:\n%s", s);
    int r1 = row_holding(rows, n, 0.001), r20 = row_holding(rows, n, 0.020);
    cr_assert_lt(r20, r1, "larger values above:\n%s", s);
    for (int i = 0; i < n; i++)
        cr_assert(rows[i].shaded == (i == r1 || i == r20), "row %d (%s) shaded wrongly:\n%s", i,
                  rows[i].line, s);
    cr_assert(strstr(rows[r1].line, "p50"), "p50 marked on the 1 ms row:\n%s", s);
    cr_assert(strstr(rows[r20].line, "p99"), "p99 marked on the 20 ms row:\n%s", s);
    cr_assert(strstr(s, "now"), "the time axis:\n%s", s);
    cr_assert(strstr(s, "shades (observations a cell, log):"), "the legend:\n%s", s);
    char line[4096];
    cr_assert(line_of(s, "last interval:", line, sizeof line) >= 0);
    const char *q = strstr(line, " p99 ");
    cr_assert(q, "%s", line);
    double p99 = seconds_of(q + 5);
    cr_assert(p99 > P99_LO && p99 <= P99_HI * 1.0005, "%s", line);
    /* The bar on the last line: the heatmap's keys. */
    cr_assert_eq(line_of(s, "<>Histogram", line, sizeof line), 23, "%s", s);
    cr_assert(strstr(line, "Up/DnInstance") && strstr(line, "EscTable") && strstr(line, "F10Quit"),
              "%s", line);
    /* Any other key returns to the table. */
    keys("Escape");
    WAIT_FOR("INSTANCE");
    keys("q");
    assert_restored();
    top_stop(&p);
}

/* -b -H: the distribution as text after each table: the row's count,
 * rate, p50, p99, max, and a line per non-empty bucket with its bounds.
 * An -H that names no histogram is refused. */
Test(pcwtop, batch_prints_a_histogram_distribution)
{
    tu_child p;
    hist_provider_start(&p);
    char exe[PATH_MAX], out[1 << 16], err[4096];
    pcwtop_path(exe, sizeof exe);
    int rc = run((const char *const[]){exe, "-b", "-n", "2", "-d", "0.3", "-c", "Hist Test", "-H",
                                       "latency", NULL},
                 out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 0, "pcwtop -b -H failed: %s", err);
    char *second = strstr(out + 1, "\npcwtop ");
    cr_assert(second, "two refreshes:\n%s", out);
    cr_assert(strstr(second, "Latency:p99.9"), "%s", second);
    const char *d =
        strstr(second, "\nDistribution of Latency (the interval's non-empty buckets):\n");
    cr_assert(d, "%s", second);
    char line[4096];
    cr_assert(line_of(d, "  web: ", line, sizeof line) >= 0, "%s", d);
    const char *q = strstr(line, " p99 ");
    cr_assert(q, "%s", line);
    double p99 = seconds_of(q + 5);
    cr_assert(p99 > P99_LO && p99 <= P99_HI * 1.0005, "%s", line);
    /* Under web (after _Total's block): its two buckets, nothing else. */
    const char *w = strstr(d, "  web: ");
    regex_t re;
    cr_assert_eq(regcomp(&re,
                         "^  web: [0-9]+ obs [^\n]*\n"
                         "    \\(976\\.6us, 1\\.065ms\\] +[0-9]+  #+\n"
                         "    \\(18\\.58ms, 20\\.26ms\\] +[0-9]+  #+\n",
                         REG_EXTENDED | REG_NEWLINE),
                 0);
    cr_assert_eq(regexec(&re, w, 0, NULL, 0), 0, "%s", w);
    regfree(&re);
    rc = run((const char *const[]){exe, "-b", "-n", "1", "-d", "0.1", "-c", "Hist Test", "-H",
                                   "Requests", NULL},
             out, sizeof out, err, sizeof err);
    cr_assert_eq(rc, 1, "%s", out);
    cr_assert(strstr(err, "-H: no histogram counter \"Requests\" in this counterset"), "%s", err);
    top_stop(&p);
}

/* A histogram column's title keeps its statistic when the counter's name
 * is cut to the column's width. */
Test(pcwtop, histogram_titles_keep_their_statistic)
{
    char b[64];
    fmt_col_title(b, sizeof b, "Request Latency:p99.9", 6, 14);
    cr_assert_str_eq(b, "Request\xe2\x80\xa6:p99.9");
    fmt_col_title(b, sizeof b, "Latency:p99", 4, 14);
    cr_assert_str_eq(b, "Latency:p99");
    fmt_col_title(b, sizeof b, "Plain counter name longer", 0, 14);
    cr_assert_str_eq(b, "Plain counter name longer", "not a histogram: cut by utf8_pad");
    fmt_cell(b, sizeof b, 4096, PCW_CSTATUS_ABOVE_RANGE, "s", 0);
    cr_assert_str_eq(b, ">4.096ks", "at or above the range: a lower bound");
}

/* Hostile words under the heatmap: buckets that jump by nearly 2^64 (the
 * interval's count overflows), then go back (a reset), then count on as
 * before. The heatmap says what each interval is, draws what it can, and
 * pcwtop neither crashes nor stops. */
Test(pcwtop, the_heatmap_survives_hostile_buckets)
{
    tu_child p;
    hist_provider_start(&p);
    session(80, 24);
    start_top_until("-d 0.2 -c 'Hist Test' -H Latency", "<>Histogram"); /* the heatmap's bar */
    WAIT_FOR("\\Hist Test(_Total)\\Latency  distribution per refresh");
    WAIT_RE("last interval: [0-9]+ obs");
    top_cmd(&p, "poke web 2 18446744073709551000");
    top_cmd(&p, "poke web 300 18446744073709551000");
    WAIT_FOR("last interval: overflow");
    top_cmd(&p, "poke web 2 5");
    WAIT_FOR("last interval: counter reset");
    WAIT_RE("last interval: [0-9]+ obs .* p99 [0-9.]+ms");
    keys("q");
    assert_restored();
    top_stop(&p);
}

/* The heatmap in colour (its shades' colour pairs) and, with NO_COLOR in a
 * locale without UTF-8, in ASCII without colours: the same rows shaded,
 * with . : * #, the markers '<'. */
Test(pcwtop, the_heatmap_in_colour_and_in_ascii_mono)
{
    tu_child p;
    hist_provider_start(&p);
    session(80, 24);
    start_top_until("-d 0.2 -c 'Hist Test' -H Latency", "<>Histogram");
    WAIT_FOR("\xe2\x97\x80 p99");
    char line[4096];
    cr_assert(line_of(screen_escapes(), "\xe2\x97\x80 p99", line, sizeof line) >= 0);
    cr_assert(has_colour(line), "the p99 row's cells in colour: %s", line);
    keys("q");
    assert_restored();
    char exe[PATH_MAX], cmd[PATH_MAX + 128];
    pcwtop_path(exe, sizeof exe);
    snprintf(cmd, sizeof cmd,
             "LANG=C NO_COLOR=1 %s -d 0.2 -c 'Hist Test' -H Latency; echo \"mono-exit=$?\"", exe);
    type(cmd);
    WAIT_FOR("< p99");
    WAIT_FOR("< p50");
    heat_row rows[32];
    const char *s = screen();
    int n = heat_rows(s, rows, 32, 1);
    int r1 = row_holding(rows, n, 0.001), r20 = row_holding(rows, n, 0.020);
    cr_assert(n >= 3 && r1 >= 0 && r20 >= 0, "%s", s);
    for (int i = 0; i < n; i++)
        cr_assert(rows[i].shaded == (i == r1 || i == r20), "row %d (%s) shaded wrongly:\n%s", i,
                  rows[i].line, s);
    cr_assert(strstr(rows[r1].line, "< p50") && strstr(rows[r20].line, "< p99"), "%s", s);
    cr_assert(!has_colour(screen_escapes()), "colour despite NO_COLOR:\n%s", screen_escapes());
    keys("q");
    WAIT_FOR("mono-exit=0");
    top_stop(&p);
}

/* ---- --replay (issue 28) ------------------------------------------------------- */

/* Samples the log holds now (0: not readable yet), through the query layer. */
static uint64_t log_samples(const char *log)
{
    pcw_pdh *q;
    const char *files[] = {log};
    if (pcw_pdh_open_log(&q, files, 1, NULL, 0) != PCW_OK)
        return 0;
    pcw_pdh_log_info info;
    uint64_t n = pcw_pdh_get_log_info(q, &info) == PCW_OK ? info.samples : 0;
    pcw_pdh_close(q);
    return n;
}

/* The demo provider (Geometric Waves) recorded by a real pcwstat, which
 * prints the live CSV (live) and logs the same samples (log) until the log
 * holds `want` samples; then the recorder is killed (SIGKILL) and the
 * provider stopped. Every wait is on what the files or the model show. */
static void record_waves(const char *live, const char *log, uint64_t want)
{
    pid_t waves = waves_start();
    top_model *m;
    cr_assert_eq(top_model_open(&m, NULL), PCW_OK);
    top_model_want(m, "Geometric Waves", 0);
    long long deadline = tu_now_ms() + 20000;
    while (top_model_collect(m, 100000000ull), !top_model_frame(m)->table)
        cr_assert(tu_now_ms() < deadline, "Geometric Waves never published");
    top_model_close(m);
    char exe[PATH_MAX], err[PATH_MAX];
    snprintf(exe, sizeof exe, "%s/pcwstat", build_dir());
    snprintf(err, sizeof err, "%s/pcwstat.err", tu_root);
    pid_t rec = fork();
    cr_assert(rec >= 0);
    if (rec == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(e, 2);
        execl(exe, exe, "\\Geometric Waves(*)\\*", "-si", "0.1", "--flush", "0.1", "-f", "CSV",
              "-o", live, "--log", log, "-y", (char *)NULL);
        _exit(127);
    }
    deadline = tu_now_ms() + 30000;
    while (log_samples(log) < want) {
        cr_assert(tu_now_ms() < deadline, "the recorder logged no %llu samples: %s",
                  (unsigned long long)want, tu_read_text(err, 4096));
        usleep(20 * 1000); /* the pace of polling */
    }
    kill(rec, SIGKILL);
    int st;
    waitpid(rec, &st, 0);
    cr_assert(WIFSIGNALED(st), "the recorder ended before it was killed: %s",
              tu_read_text(err, 4096));
    waves_stop(waves);
}

/* One CSV field (quoted) at *p: copied into out, *p moved past it. */
static int csv_field(const char **p, char *out, size_t cap)
{
    const char *s = *p;
    if (*s != '"')
        return -1;
    const char *e = strchr(s + 1, '"');
    if (!e)
        return -1;
    snprintf(out, cap, "%.*s", (int)(e - s - 1), s + 1);
    *p = e + 1 + (e[1] == ',');
    return 0;
}

/* The cell pcwstat's CSV value `csv` is as pcwtop prints it: the same
 * number at pcwtop's width (format.h), or "" when pcwstat printed none. */
static void as_pcwtop_cell(const char *csv, char *out, size_t cap)
{
    char *end;
    double v = strtod(csv, &end);
    if (end == csv || *end)
        out[0] = 0;
    else
        fmt_value(out, cap, v, "", 0);
}

/* What pcwtop -b printed for one instance in the block of the sample at
 * `when` ("2026-11-27 02:46:05.835"): the line's cells after the PID,
 * space-separated into out; -1 if there is no such line. */
static int batch_cells(const char *batch, const char *when, const char *instance, char *out,
                       size_t cap)
{
    char head[128];
    snprintf(head, sizeof head, " - %s - sample ", when);
    const char *b = strstr(batch, head);
    if (!b)
        return -1;
    const char *end = strstr(b, "\n\n\n"); /* the next block: a blank line, then its own */
    const char *next = strstr(b + 1, "\npcwtop ");
    if (!end || (next && next < end))
        end = next ? next : b + strlen(b);
    for (const char *l = b; l && l < end; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        /* "<mark> <name padded> <pid> <cells>": the name at column 2 */
        size_t n = strlen(instance);
        if (strncmp(l + 2, instance, n) != 0 || l[2 + n] != ' ')
            continue;
        const char *c = l + 2 + n;
        while (*c == ' ')
            c++;
        while (*c && *c != ' ')
            c++; /* the PID */
        size_t k = 0;
        out[0] = 0;
        while (*c && *c != '\n' && k + 2 < cap) {
            while (*c == ' ')
                c++;
            if (*c == '\n' || !*c)
                break;
            if (k)
                out[k++] = ' ';
            while (*c && *c != ' ' && *c != '\n' && k + 1 < cap)
                out[k++] = *c++;
            out[k] = 0;
        }
        return 0;
    }
    return -1;
}

/* Issue 28's "Accepted when": the values pcwtop --replay -b prints for each
 * logged sample are the ones the live pcwstat printed for the same sample
 * (matched by its time, to the millisecond), number for number as pcwtop
 * writes numbers. */
Test(pcwtop, replay_batch_prints_what_pcwstat_printed_live)
{
    char live[PATH_MAX], log[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(live, sizeof live, "%s/live.csv", tu_root);
    snprintf(log, sizeof log, "%s/waves.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/replay.out", tu_root);
    snprintf(err, sizeof err, "%s/replay.err", tu_root);
    record_waves(live, log, 12);
    uint64_t samples = log_samples(log);
    int st = tu_run_tool("pcwtop", (const char *[]){"--replay", log, "-b", NULL}, out, err, 30000);
    char *batch = tu_read_text(out, 1 << 22), *csv = tu_read_text(live, 1 << 22);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pcwtop --replay -b: %s",
              tu_read_text(err, 4096));
    cr_assert(batch && csv);
    /* Every sample but the first (it primes the rates, as live). */
    char want[64];
    snprintf(want, sizeof want, "sample %llu of %llu - replay", (unsigned long long)samples,
             (unsigned long long)samples);
    cr_assert(strstr(batch, want), "no \"%s\":\n%s", want, batch);
    /* The CSV's header: which instance and counter each column is. */
    enum { MAXC = 16 };
    char inst[MAXC][64], ctr[MAXC][64], f[4096];
    const char *p = csv;
    int ncols = 0;
    cr_assert_eq(csv_field(&p, f, sizeof f), 0, "%s", csv); /* "(PDH-CSV 4.0)" */
    while (*p != '\n' && ncols < MAXC && csv_field(&p, f, sizeof f) == 0) {
        char *open = strchr(f, '('), *close = strrchr(f, ')');
        cr_assert(open && close && close[1] == '\\', "%s", f);
        snprintf(inst[ncols], sizeof inst[ncols], "%.*s", (int)(close - open - 1), open + 1);
        snprintf(ctr[ncols], sizeof ctr[ncols], "%s", close + 2);
        ncols++;
    }
    cr_assert_eq(ncols, 8, "_Total and three waves, two counters each: %d", ncols);
    cr_assert_str_eq(ctr[0], "Triangle");
    cr_assert_str_eq(ctr[1], "Square Wave"); /* pcwtop's columns, in this order */
    /* Each row: its time as pcwtop prints it, the same numbers. */
    int compared = 0, rows = 0;
    for (p = strchr(p, '\n'); p && p[1]; p = strchr(p, '\n')) {
        p++;
        char t[64], when[64];
        cr_assert_eq(csv_field(&p, t, sizeof t), 0);
        int mo, d, y, h, mi, s, ms;
        cr_assert_eq(sscanf(t, "%d/%d/%d %d:%d:%d.%d", &mo, &d, &y, &h, &mi, &s, &ms), 7, "%s", t);
        snprintf(when, sizeof when, "%04d-%02d-%02d %02d:%02d:%02d.%03d", y, mo, d, h, mi, s, ms);
        rows++;
        char expect[MAXC / 2][256];
        for (int c = 0; c < ncols; c++) {
            char cell[64];
            cr_assert_eq(csv_field(&p, f, sizeof f), 0);
            as_pcwtop_cell(f, cell, sizeof cell);
            if (c % 2 == 0)
                snprintf(expect[c / 2], sizeof expect[c / 2], "%s", cell);
            else
                snprintf(expect[c / 2] + strlen(expect[c / 2]),
                         sizeof expect[c / 2] - strlen(expect[c / 2]), " %s", cell);
        }
        char got[256];
        if (batch_cells(batch, when, inst[0], got, sizeof got) != 0)
            continue; /* a row of the block the kill cut off: not in the log */
        for (int i = 0; i < ncols / 2; i++) {
            cr_assert_eq(batch_cells(batch, when, inst[2 * i], got, sizeof got), 0,
                         "no %s at %s:\n%s", inst[2 * i], when, batch);
            cr_assert_str_eq(got, expect[i], "%s at %s: pcwtop %s, pcwstat %s", inst[2 * i], when,
                             got, expect[i]);
        }
        compared++;
    }
    cr_assert_eq((uint64_t)compared, samples - 1,
                 "%d of %d live rows are in the log's %llu samples", compared, rows,
                 (unsigned long long)samples);
    free(batch);
    free(csv);
}

/* The sample the screen shows ("Replay: sample N of M"), or 0. */
static unsigned long shown_sample(void)
{
    const char *p = strstr(screen(), "Replay: sample ");
    return p ? strtoul(p + strlen("Replay: sample "), NULL, 10) : 0;
}

/* Wait until the screen shows sample n (of `of`), and its Small Wave row
 * holds the values pcwtop -b printed for that sample. */
static void wait_sample(unsigned long n, unsigned long of, const char *batch)
{
    char want[64];
    snprintf(want, sizeof want, "Replay: sample %lu of %lu", n, of);
    WAIT_FOR(want);
    const char *b = strstr(batch, " - sample ");
    char tag[64];
    snprintf(tag, sizeof tag, " - sample %lu of %lu -", n, of);
    cr_assert(b && (b = strstr(batch, tag)), "no sample %lu in the batch output", n);
    const char *l = strstr(b, "\n  Small Wave ");
    cr_assert(l);
    char line[256], on_screen[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(l + 3, "\n"), l + 3);
    /* The screen's row: after the list's bar, the same words. */
    cr_assert(line_of(screen(), "Small Wave ", on_screen, sizeof on_screen) >= 0, "%s", screen());
    char a[256] = "", c[256] = "";
    for (const char *s = line, *e; *s; s = e) { /* words, single-spaced */
        while (*s == ' ')
            s++;
        e = s + strcspn(s, " ");
        if (e > s)
            snprintf(a + strlen(a), sizeof a - strlen(a), "%s%.*s", a[0] ? " " : "", (int)(e - s),
                     s);
    }
    const char *r = strstr(on_screen, "Small Wave");
    for (const char *s = r, *e; s && *s; s = e) {
        while (*s == ' ')
            s++;
        e = s + strcspn(s, " ");
        if (e > s)
            snprintf(c + strlen(c), sizeof c - strlen(c), "%s%.*s", c[0] ? " " : "", (int)(e - s),
                     s);
    }
    cr_assert_str_eq(c, a, "sample %lu: the screen shows \"%s\", pcwtop -b printed \"%s\"", n, c,
                     a);
}

/* pcwtop --replay in a terminal: the logged samples' values, paused,
 * stepped forward and back (. , T), a seek to a time (b), the speed (+);
 * the header says where in the log it is. */
Test(pcwtop, replay_in_a_terminal_steps_pauses_and_seeks)
{
    char live[PATH_MAX], log[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(live, sizeof live, "%s/live.csv", tu_root);
    snprintf(log, sizeof log, "%s/waves.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/replay.out", tu_root);
    snprintf(err, sizeof err, "%s/replay.err", tu_root);
    record_waves(live, log, 30);
    unsigned long of = (unsigned long)log_samples(log);
    int st = tu_run_tool("pcwtop", (const char *[]){"--replay", log, "-b", NULL}, out, err, 30000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *batch = tu_read_text(out, 1 << 22);
    cr_assert(batch);
    session(120, 40);
    char args[PATH_MAX + 32];
    snprintf(args, sizeof args, "--replay %s", log);
    start_top_until(args, "Replay: sample");
    keys("Space");
    WAIT_FOR("PAUSED");
    /* A seek to a time: the first sample at or after it. Sample 20's time
     * to the second, so the one it lands on is the first of that second. */
    const char *b = strstr(batch, " - sample 20 of ");
    cr_assert(b);
    char when[32];
    snprintf(when, sizeof when, "%.19s", b - 23); /* "YYYY-MM-DD HH:MM:SS" */
    unsigned long first = 0;
    for (const char *p = batch; (p = strstr(p, "pcwtop ")) != NULL; p++) {
        const char *t = strstr(p, " - ");
        if (t && strncmp(t + 3, when, 19) == 0) {
            first = strtoul(strstr(t, " - sample ") + 10, NULL, 10);
            break;
        }
    }
    cr_assert(first >= 2, "no sample in %s", when);
    keys("b");
    WAIT_FOR("Go to:");
    TMUX("send-keys", "-t", "t", "-l", when + 11); /* HH:MM:SS: on the log's day */
    keys("Enter");
    wait_sample(first, of, batch);
    cr_assert(strstr(screen(), when), "the header has the sample's date and time:\n%s", screen());
    /* Paused: it stays there; steps move one sample. */
    keys(".");
    wait_sample(first + 1, of, batch);
    keys(",");
    wait_sample(first, of, batch);
    keys("T");
    wait_sample(first - 1, of, batch);
    /* The graph spans the whole log: its time axis runs from the log's first
     * sample's time to its last one's, the sample shown marked under it. */
    const char *range = strstr(batch, "\nLog: ");
    cr_assert(range);
    char from[16], to[16];
    snprintf(from, sizeof from, "%.8s", range + 6 + 11);             /* HH:MM:SS of the first */
    snprintf(to, sizeof to, "%.8s", strstr(range, " to ") + 4 + 11); /* ...of the last */
    keys("g");
    WAIT_FOR("over the whole log");
    char axis[128];
    snprintf(axis, sizeof axis, "^ +%s[^\n]*%s *$", from, to);
    cr_assert(screen_wait_re(axis, 20000), "no axis from %s to %s:\n%s", from, to, screen());
    cr_assert(strstr(screen(), "\xe2\x96\xb2"), "the sample shown is not marked:\n%s", screen());
    keys("Escape");
    WAIT_FOR("INSTANCE");
    keys("+");
    WAIT_FOR("Speed: 2x");
    /* Going on: it plays to the end of the log and stays there. */
    keys("Space");
    WAIT_FOR("END OF LOG");
    cr_assert_eq(shown_sample(), of, "%s", screen());
    keys("q");
    assert_restored();
    free(batch);
}

/* --replay of what is not a readable log: a clear error naming the file
 * (escaped: a file name is anyone's), a counterset the log does not hold,
 * options that choose live providers, and a log cut short: the samples
 * before the damage, then the block's offset, exit 1. */
Test(pcwtop, replay_refuses_what_is_not_a_log)
{
    char live[PATH_MAX], log[PATH_MAX], bad[PATH_MAX], cut[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
    snprintf(live, sizeof live, "%s/live.csv", tu_root);
    snprintf(log, sizeof log, "%s/waves.pcwlog", tu_root);
    snprintf(bad, sizeof bad, "%s/evil\033]0;x\007.pcwlog", tu_root);
    snprintf(cut, sizeof cut, "%s/cut.pcwlog", tu_root);
    snprintf(out, sizeof out, "%s/out", tu_root);
    snprintf(err, sizeof err, "%s/err", tu_root);
    cr_assert_eq(tu_write_file(bad, "not a log\n", 10, 0600), 0);
    int st = tu_run_tool("pcwtop", (const char *[]){"--replay", bad, "-b", NULL}, out, err, 30000);
    char *e = tu_read_text(err, 4096);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s", e);
    cr_assert(strstr(e, "evil\\x1b]0;x\\x07.pcwlog: not a pcw log"), "%s", e);
    free(e);
    record_waves(live, log, 8);
    st = tu_run_tool("pcwtop", (const char *[]){"--replay", log, "-b", "-c", "No Such", NULL}, out,
                     err, 30000);
    e = tu_read_text(err, 4096);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s", e);
    cr_assert(strstr(e, "\"No Such\" is not in the log"), "%s", e);
    free(e);
    st = tu_run_tool("pcwtop", (const char *[]){"--replay", log, "--dir", tu_root, NULL}, out, err,
                     30000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    /* The last block cut short. */
    size_t len;
    unsigned char *b = tu_read_file(log, 1 << 24, &len);
    cr_assert(b && len > 64);
    cr_assert_eq(tu_write_file(cut, b, len - 5, 0600), 0);
    free(b);
    st = tu_run_tool("pcwtop", (const char *[]){"--replay", cut, "-b", NULL}, out, err, 30000);
    e = tu_read_text(err, 4096);
    char *o = tu_read_text(out, 1 << 22);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s", e);
    cr_assert(strstr(e, "cut.pcwlog") && strstr(e, "offset"), "%s", e);
    cr_assert(strstr(o, " - sample 2 of "), "the samples before the damage:\n%s", o);
    free(e);
    free(o);
}
