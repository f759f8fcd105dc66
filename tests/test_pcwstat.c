/* SPDX-License-Identifier: MIT */
/*
 * tests/test_pcwstat.c - pcwstat end to end: typeperf's CSV and TSV
 * against a provider that keeps a PERF_COUNTER_COUNTER at a known rate (the
 * rate is asserted within a tolerance, never a timing of pcw), JSON lines,
 * -q/-qx, -cf, -o with and without -y, usage and path errors, Ctrl-C
 * ending the run with the file complete, a provider that exits or
 * appears mid-run, and a _Total across a provider killed and restarted
 * (every row a right value or none).
 *
 * pcwstat's output file is the observable signal: the tests wait for rows
 * to appear in it (with a deadline), never on a sleep.
 */
#include "testutil.h"

#include <criterion/criterion.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <math.h>
#include <regex.h>

#include "pcw/pdh.h"
#include "hist_dist.h"
#include "query_provider.h"

/* Compiled in: the new-match report and what it uses. */
#include "../tools/common/escape.h"
#include "../tools/common/grow.h"
#include "../tools/pcwstat/pcwstat.h"

TestSuite(pcwstat, .init = tu_root_setup, .fini = tu_root_teardown, .timeout = 90);

/* Run pcwstat in the background with stdout/stderr to files. */
static pid_t spawn_pcwstat(const char *const *args, const char *out, const char *err)
{
    const char *build = getenv("PCW_BUILD");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/pcwstat", build && *build ? build : PCW_BUILD_DIR);
    const char *argv[64];
    size_t n = 0;
    argv[n++] = path;
    for (size_t i = 0; args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t self = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        tu_die_with_parent(self);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int in = open("/dev/null", O_RDONLY);
        dup2(in, 0), dup2(o, 1), dup2(e, 2);
        execv(path, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid)
{
    int st;
    long long deadline = tu_now_ms() + 60000;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (tu_now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("pcwstat did not finish");
        }
        usleep(10 * 1000);
    }
    cr_assert(WIFEXITED(st), "pcwstat died of a signal");
    return WEXITSTATUS(st);
}

/* Run to completion; returns the exit status. */
static int run_pcwstat(const char *const *args, const char *out, const char *err)
{
    return wait_exit(spawn_pcwstat(args, out, err));
}

static char *slurp(const char *path)
{
    size_t n = 0;
    unsigned char *d = tu_read_file(path, 1 << 20, &n);
    cr_assert(d, "cannot read %s", path);
    char *s = realloc(d, n + 1);
    s[n] = 0;
    return s;
}

/* Split into lines (modifies s). */
static size_t lines(char *s, char **v, size_t cap)
{
    size_t n = 0;
    for (char *p = s; *p && n < cap;) {
        char *nl = strchr(p, '\n');
        cr_assert(nl, "line without a newline: \"%s\"", p);
        *nl = 0;
        v[n++] = p;
        p = nl + 1;
    }
    return n;
}

static size_t count_lines(const char *path)
{
    size_t n = 0;
    unsigned char *d = tu_read_file(path, 1 << 20, &n);
    size_t c = 0;
    for (size_t i = 0; d && i < n; i++)
        c += d[i] == '\n';
    free(d);
    return c;
}

/* Wait until `path` has at least `want` lines. */
static void wait_lines(const char *path, size_t want)
{
    long long deadline = tu_now_ms() + 30000;
    while (count_lines(path) < want) {
        cr_assert(tu_now_ms() < deadline, "%s never reached %zu lines", path, want);
        usleep(20 * 1000);
    }
}

/* A path in the test's root. A ring of buffers: a result stays valid for
 * the next 63 calls, more than any test makes. */
static const char *file(const char *name)
{
    static char buf[64][512];
    static int k;
    k = (k + 1) % 64;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tu_root, name);
    return buf[k];
}

static void match(const char *re, const char *s)
{
    regex_t r;
    cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
    int rc = regexec(&r, s, 0, NULL, 0);
    regfree(&r);
    cr_assert_eq(rc, 0, "\"%s\" does not match /%s/", s, re);
}

#define TIME_RE "\"[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\""

Test(pcwstat, csv_rate_at_a_known_rate)
{
    tu_child p;
    qp_start(&p, "Query Test", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "rate a %d 1000", QP_RATE); /* PERF_COUNTER_COUNTER, 1000/s */
    const char *out = file("out.csv");
    const char *args[] = {"\\Query Test(a)\\Rate", "-si", "0.5", "-sc", "4", "-o", out, NULL};
    cr_assert_eq(run_pcwstat(args, file("stdout"), file("stderr")), 0, "%s", slurp(file("stderr")));
    char *csv = slurp(out), *l[16];
    size_t n = lines(csv, l, 16);
    cr_assert_eq(n, 5, "header + 4 rows: %s", csv);
    char header[512];
    snprintf(header, sizeof header, "\"(PDH-CSV 4.0)\",\"\\\\%s\\Query Test(a)\\Rate\"",
             pcw_path_local_host());
    cr_assert_str_eq(l[0], header);
    for (size_t i = 1; i < n; i++) {
        match("^" TIME_RE ",\"[0-9]+\\.[0-9]{6}\"$", l[i]);
        double v = atof(strrchr(l[i], ',') + 2);
        /* The provider's count follows its clock; 25% leaves room for it
         * being descheduled for up to ~100 ms on a loaded machine. */
        cr_assert(fabs(v - 1000.0) <= 250.0, "row %zu: rate %.3f, want 1000/s", i, v);
    }
    free(csv);
    qp_stop(&p);
}

Test(pcwstat, tsv_and_several_columns)
{
    tu_child p;
    qp_start(&p, "Multi", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&p, "create x");
    qp_cmd(&p, "set x %d 4", QP_LEVEL);
    qp_cmd(&p, "create y");
    qp_cmd(&p, "set y %d 8", QP_LEVEL);
    const char *out = file("out.tsv");
    const char *args[] = {
        "\\Multi(*)\\Level", "-si", "0.2", "-sc", "2", "-f", "TSV", "-o", out, NULL};
    cr_assert_eq(run_pcwstat(args, file("stdout"), file("stderr")), 0, "%s", slurp(file("stderr")));
    char *tsv = slurp(out), *l[8];
    size_t n = lines(tsv, l, 8);
    cr_assert_eq(n, 3);
    const char *h = pcw_path_local_host();
    char header[1024];
    snprintf(header, sizeof header,
             "\"(PDH-TSV 4.0)\"\t\"\\\\%s\\Multi(_Total)\\Level\"\t\"\\\\%s\\Multi(x)\\Level\"\t"
             "\"\\\\%s\\Multi(y)\\Level\"",
             h, h, h);
    cr_assert_str_eq(l[0], header);
    /* _Total = avg(4, 8) = 6 */
    match("^" TIME_RE "\t\"6\\.000000\"\t\"4\\.000000\"\t\"8\\.000000\"$", l[1]);
    free(tsv);
    qp_stop(&p);
}

Test(pcwstat, json_lines)
{
    tu_child p;
    qp_start(&p, "Js", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create q\"x");
    qp_cmd(&p, "set q\"x %d 3", QP_LEVEL);
    const char *out = file("out.json");
    const char *args[] = {"\\Js(*)\\Level", "-si", "0.2", "-sc", "2", "-f",
                          "json",           "-o",  out,   NULL};
    cr_assert_eq(run_pcwstat(args, file("stdout"), file("stderr")), 0);
    char *js = slurp(out), *l[8];
    size_t n = lines(js, l, 8);
    cr_assert_eq(n, 2, "one object per sample: %s", js);
    for (size_t i = 0; i < n; i++) {
        match(
            "^\\{\"time\":\"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z\",\"sample\":[12],\"values\":"
            "\\[\\{\"path\":\"[^\"]*Js\\(q\\\\\"x\\)\\\\\\\\Level\",\"counterset\":\"Js\","
            "\"instance\":\"q\\\\\"x\",\"counter\":\"Level\",\"kind\":\"instance\",\"pid\":[0-9]+,"
            "\"provider_id\":\"[0-9a-f]{16}\",\"value\":3,\"status\":\"valid\"\\}\\]\\}$",
            l[i]);
    }
    free(js);
    qp_stop(&p);
}

Test(pcwstat, query_lists)
{
    tu_child a, b;
    qp_start(&a, "Listed", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&a, "create one");
    qp_start(&b, "Alone", PCW_SINGLE_INSTANCE, NULL);
    qp_cmd(&b, "create -");
    const char *args[] = {"-q", NULL};
    cr_assert_eq(run_pcwstat(args, file("q.out"), file("q.err")), 0);
    char *q = slurp(file("q.out"));
    cr_assert_str_eq(q, "\\Alone\\Count\n\\Alone\\Level\n\\Alone\\Peak\n\\Alone\\Low\n"
                        "\\Alone\\Hit Ratio\n\\Alone\\Rate\n\\Alone\\Plain\n"
                        "\\Listed(*)\\Count\n\\Listed(*)\\Level\n\\Listed(*)\\Peak\n"
                        "\\Listed(*)\\Low\n\\Listed(*)\\Hit Ratio\n\\Listed(*)\\Rate\n"
                        "\\Listed(*)\\Plain\n");
    free(q);
    const char *args2[] = {"-qx", "listed", NULL};
    cr_assert_eq(run_pcwstat(args2, file("qx.out"), file("qx.err")), 0);
    q = slurp(file("qx.out"));
    cr_assert_str_eq(q, "\\Listed(_Total)\\Count\n\\Listed(_Total)\\Level\n"
                        "\\Listed(_Total)\\Peak\n\\Listed(_Total)\\Low\n"
                        "\\Listed(_Total)\\Hit Ratio\n\\Listed(_Total)\\Rate\n"
                        "\\Listed(_Total)\\Plain\n\\Listed(one)\\Count\n\\Listed(one)\\Level\n"
                        "\\Listed(one)\\Peak\n\\Listed(one)\\Low\n\\Listed(one)\\Hit Ratio\n"
                        "\\Listed(one)\\Rate\n\\Listed(one)\\Plain\n");
    free(q);
    const char *args3[] = {"--query-instances", "Nope", NULL};
    cr_assert_eq(run_pcwstat(args3, file("qn.out"), file("qn.err")), 1);
    q = slurp(file("qn.err"));
    cr_assert(strstr(q, "\"Nope\" does not exist"), "%s", q);
    free(q);
    qp_stop(&a);
    qp_stop(&b);
}

Test(pcwstat, errors)
{
    tu_child p;
    qp_start(&p, "Err", PCW_MULTI_INSTANCE, NULL);
    struct {
        const char *args[8];
        int status;
        const char *needle;
    } cases[] = {
        {{"\\Err(*)\\Nope", "-sc", "1", NULL}, 1, "has no counter \"Nope\""},
        {{"\\Missing(*)\\Level", "-sc", "1", NULL}, 1, "\"Missing\" does not exist"},
        /* Typos get the nearest names (issue 25, item 12). */
        {{"\\Err(*)\\Levl", "-sc", "1", NULL}, 1, "\npcwstat: did you mean \"Level\"?\n"},
        {{"\\Er(*)\\Level", "-sc", "1", NULL}, 1, "\npcwstat: did you mean \"Err\"?\n"},
        {{"-q", "Erx", NULL}, 1, "\npcwstat: did you mean \"Err\"?\n"},
        {{"Err(*)\\Level", "-sc", "1", NULL}, 1, "starts with '\\'"},
        {{"\\Err(x#01)\\Level", NULL}, 1, "leading zero"},
        {{"\\Err\\Level", NULL}, 1, "has instances"},
        {{"\\Err(*)\\Level", "-si", "0", NULL}, 2, "bad interval"},
        {{"\\Err(*)\\Level", "-si", "1:75", NULL}, 2, "bad interval"},
        {{"\\Err(*)\\Level", "-si", NULL}, 2, "bad interval"},
        {{"\\Err(*)\\Level", "-sc", "-3", NULL}, 2, "bad sample count"},
        {{"\\Err(*)\\Level", "-f", "BIN", NULL}, 2, "give it with -o FILE"},
        {{"\\Err(*)\\Level", "-f", "SQL", NULL}, 2, "not supported"},
        {{"\\Err(*)\\Level", "-f", "JSON", "--log", "x.pcwlog", NULL},
         2,
         "--log records the columns"},
        {{"\\Err(*)\\Level", "-f", "XML", NULL}, 2, "unknown format"},
        {{"\\Err(*)\\Level", "--frobnicate", NULL}, 2, "unknown option"},
        {{"-sc", "1", NULL}, 2, "no counter path"},
        {{"-cf", "/nonexistent/file", NULL}, 1, "No such file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = run_pcwstat(cases[i].args, file("e.out"), file("e.err"));
        char *err = slurp(file("e.err"));
        cr_assert_eq(st, cases[i].status, "case %zu: exit %d: %s", i, st, err);
        cr_assert(strstr(err, cases[i].needle), "case %zu: \"%s\" lacks \"%s\"", i, err,
                  cases[i].needle);
        free(err);
    }
    qp_stop(&p);
    /* No provider at all. */
    const char *args[] = {"\\Err(*)\\Level", "-sc", "1", NULL};
    cr_assert_eq(run_pcwstat(args, file("e.out"), file("e.err")), 1);
    char *err = slurp(file("e.err"));
    cr_assert(strstr(err, "does not exist (no provider publishes it)"), "%s", err);
    free(err);
    const char *help[] = {"--help", NULL};
    cr_assert_eq(run_pcwstat(help, file("h.out"), file("h.err")), 0);
    err = slurp(file("h.out"));
    cr_assert(strstr(err, "Usage: pcwstat"));
    free(err);
    const char *version[] = {"--version", NULL};
    cr_assert_eq(run_pcwstat(version, file("v.out"), file("v.err")), 0);
    err = slurp(file("v.out"));
    match("^pcwstat \\(pcw\\) [0-9]+\\.[0-9]+\\.[0-9]+\n$", err);
    free(err);
}

Test(pcwstat, output_file_and_counter_file)
{
    tu_child p;
    qp_start(&p, "Files", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create f");
    qp_cmd(&p, "set f %d 5", QP_LEVEL);
    const char *out = file("exists.csv");
    cr_assert_eq(tu_write_file(out, "old\n", 4, 0600), 0);
    const char *cf = file("counters.txt");
    const char *list = "# counters\n\n  \\Files(f)\\Level\r\n\\Files(f)\\Peak\n";
    cr_assert_eq(tu_write_file(cf, list, strlen(list), 0600), 0);
    const char *no[] = {"-cf", cf, "-sc", "1", "-si", "0.1", "-o", out, NULL};
    cr_assert_eq(run_pcwstat(no, file("o.out"), file("o.err")), 1);
    char *s = slurp(file("o.err"));
    cr_assert(strstr(s, "use -y"), "%s", s);
    free(s);
    s = slurp(out);
    cr_assert_str_eq(s, "old\n", "left alone without -y");
    free(s);
    const char *yes[] = {"-cf", cf, "-sc", "1", "-si", "0.1", "-o", out, "-y", NULL};
    cr_assert_eq(run_pcwstat(yes, file("o.out"), file("o.err")), 0);
    s = slurp(out);
    char *l[4];
    cr_assert_eq(lines(s, l, 4), 2);
    cr_assert(strstr(l[0], "\\Files(f)\\Level\",\"") && strstr(l[0], "\\Files(f)\\Peak\""), "%s",
              l[0]);
    match("^" TIME_RE ",\"5\\.000000\",\"0\\.000000\"$", l[1]);
    free(s);
    qp_stop(&p);
}

Test(pcwstat, ctrl_c_ends_with_the_file_complete)
{
    tu_child p;
    qp_start(&p, "Sig", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create s");
    const char *out = file("sig.csv");
    const char *args[] = {"\\Sig(s)\\Level", "-si", "0.1", "-o", out, NULL};
    pid_t pid = spawn_pcwstat(args, file("s.out"), file("s.err"));
    wait_lines(out, 3); /* header and two rows */
    kill(pid, SIGINT);
    cr_assert_eq(wait_exit(pid), 0);
    char *s = slurp(out), *l[1024];
    size_t n = lines(s, l, 1024); /* asserts every line is complete */
    cr_assert_geq(n, 3);
    for (size_t i = 1; i < n; i++)
        match("^" TIME_RE ",\"0\\.000000\"$", l[i]);
    free(s);
    /* SIGTERM too (a fresh file: the old one's lines would not tell that
     * the new run is sampling). */
    unlink(out);
    pid = spawn_pcwstat(args, file("s.out"), file("s.err"));
    wait_lines(out, 2);
    kill(pid, SIGTERM);
    cr_assert_eq(wait_exit(pid), 0);
    s = slurp(out);
    lines(s, l, 1024);
    free(s);
    qp_stop(&p);
}

Test(pcwstat, providers_exit_and_appear_mid_run)
{
    tu_child a, b;
    qp_start(&a, "Mid", PCW_MULTI_INSTANCE, NULL);
    qp_start(&b, "Mid", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create ia");
    qp_cmd(&a, "set ia %d 1", QP_LEVEL);
    qp_cmd(&b, "create ib");
    qp_cmd(&b, "set ib %d 2", QP_LEVEL);
    const char *out = file("mid.csv"), *err = file("mid.err");
    const char *args[] = {"\\Mid(*)\\Level", "-si", "0.1", "-o", out, NULL};
    pid_t pid = spawn_pcwstat(args, file("mid.out"), err);
    wait_lines(out, 2);
    qp_stop(&b); /* b exits: its column goes empty */
    size_t at = count_lines(out);
    wait_lines(out, at + 3); /* rows certainly sampled after b left */
    /* A new instance appears: reported on stderr. */
    qp_cmd(&a, "create late");
    long long deadline = tu_now_ms() + 30000;
    for (;;) {
        char *e = slurp(err);
        int seen = strstr(e, "new: \\Mid(late)\\Level") != NULL;
        free(e);
        if (seen)
            break;
        cr_assert(tu_now_ms() < deadline, "new instance never reported");
        usleep(20 * 1000);
    }
    kill(pid, SIGINT);
    cr_assert_eq(wait_exit(pid), 0);
    char *s = slurp(out), *l[4096];
    size_t n = lines(s, l, 4096);
    cr_assert(strstr(l[0], "\\Mid(ia)\\Level\",\"") && strstr(l[0], "\\Mid(ib)\\Level\""), "%s",
              l[0]);
    cr_assert(!strstr(l[0], "late"), "columns are fixed at start");
    match("^" TIME_RE ",\"1\\.000000\",\"2\\.000000\"$", l[1]);
    match("^" TIME_RE ",\"1\\.000000\",\"\"$", l[n - 1]);
    free(s);
    qp_stop(&a);
}

/* A counterset with no instance at start has no column, so no handle of
 * pcwstat's holds it: its instances that start later are still reported
 * (pcw_pdh_expand reads a counterset no handle holds each time). */
Test(pcwstat, new_instances_of_a_set_without_columns)
{
    tu_child a, b;
    qp_start(&a, "NmCol", PCW_MULTI_INSTANCE, NULL);
    qp_start(&b, "NmNone", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&a, "create ia");
    const char *out = file("nm.csv"), *err = file("nm.err");
    const char *args[] = {"\\NmCol(*)\\Level", "\\NmNone(*)\\Level", "-si", "0.1", "-o", out, NULL};
    pid_t pid = spawn_pcwstat(args, file("nm.out"), err);
    wait_lines(out, 2);
    const char *want[] = {"new: \\NmNone(x)\\Level", "new: \\NmNone(y)\\Level"};
    for (int k = 0; k < 2; k++) {
        qp_cmd(&b, "create %c", k ? 'y' : 'x');
        long long deadline = tu_now_ms() + 30000;
        for (;;) {
            char *e = slurp(err);
            int seen = strstr(e, want[k]) != NULL;
            free(e);
            if (seen)
                break;
            cr_assert(tu_now_ms() < deadline, "never reported: %s", want[k]);
            usleep(20 * 1000); /* polling the file, deadline above */
        }
    }
    kill(pid, SIGINT);
    cr_assert_eq(wait_exit(pid), 0);
    qp_stop(&a);
    qp_stop(&b);
}

/* ---- issue 23: files pcwstat opens ------------------------------------------ */

/* Run fn(arg) in a child as uid/gid `id` (another user); wait for it. */
static void as_user(uid_t id, void (*fn)(void *), void *arg)
{
    pid_t self = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        tu_die_with_parent(self);
        if (setgroups(0, NULL) != 0 || setresgid(id, id, id) != 0 || setresuid(id, id, id) != 0)
            _exit(3);
        fn(arg);
        _exit(0);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the other user's step failed (%d)", st);
}

typedef struct plant {
    const char *target, *link;
} plant;

static void plant_symlink(void *arg)
{
    const plant *p = arg;
    if (symlink(p->target, p->link) != 0)
        _exit(4);
}

/* Issue 23 item 7: `-o` into a directory another user controls. That user
 * plants symlinks named as the output file; root runs pcwstat with and
 * without -y. Neither the dangling symlink (which passed stat()'s "exists"
 * check) nor one to an existing file may be followed: root's files stay as
 * they were, and pcwstat says why it refused. */
Test(pcwstat, output_never_follows_a_planted_symlink)
{
    if (geteuid() != 0)
        cr_skip_test("needs root to act as a second user (CI runs as root)");
    const uid_t other = 65534; /* nobody */
    tu_child p;
    qp_start(&p, "Sym", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create s");
    /* The other user's directory (not sticky: the kernel's
     * protected_symlinks does not apply there). */
    const char *dir = file("theirs");
    cr_assert_eq(chmod(tu_root, 0711), 0); /* they may pass through ours */
    cr_assert_eq(mkdir(dir, 0755), 0);
    cr_assert_eq(chown(dir, other, other), 0);
    /* Root's files, in root's directory. */
    const char *victim = file("victim"), *fresh = file("fresh");
    cr_assert_eq(tu_write_file(victim, "precious\n", 9, 0600), 0);
    char dangling[600], existing[600];
    snprintf(dangling, sizeof dangling, "%s/out.csv", dir);
    snprintf(existing, sizeof existing, "%s/out2.csv", dir);
    as_user(other, plant_symlink, &(plant){fresh, dangling});
    as_user(other, plant_symlink, &(plant){victim, existing});
    const char *cases[][8] = {
        {"\\Sym(s)\\Level", "-sc", "1", "-si", "0.1", "-o", dangling, NULL},
        {"\\Sym(s)\\Level", "-sc", "1", "-si", "0.1", "-o", dangling, "-y"},
        {"\\Sym(s)\\Level", "-sc", "1", "-si", "0.1", "-o", existing, "-y"},
    };
    for (size_t i = 0; i < 3; i++) {
        const char *args[9];
        memcpy(args, cases[i], sizeof cases[i]);
        args[8] = NULL;
        int st = run_pcwstat(args, file("y.out"), file("y.err"));
        char *err = slurp(file("y.err"));
        cr_assert_eq(st, 1, "case %zu: exit %d: %s", i, st, err);
        cr_assert(strstr(err, "symbolic link"), "case %zu: %s", i, err);
        free(err);
        struct stat sb;
        cr_assert(lstat(fresh, &sb) != 0 && errno == ENOENT, "case %zu: created %s", i, fresh);
        char *v = slurp(victim);
        cr_assert_str_eq(v, "precious\n", "case %zu: overwrote root's file", i);
        free(v);
    }
    qp_stop(&p);
}

/* Issue 23: only regular files, character devices and FIFOs are written,
 * and a file with other hard links is refused (one could be root's file
 * under a name another user chose). */
Test(pcwstat, output_refuses_hard_links_and_directories)
{
    tu_child p;
    qp_start(&p, "Hard", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create h");
    const char *victim = file("hvictim"), *alias = file("halias");
    cr_assert_eq(tu_write_file(victim, "precious\n", 9, 0600), 0);
    cr_assert_eq(link(victim, alias), 0);
    const char *args[] = {"\\Hard(h)\\Level", "-sc", "1", "-si", "0.1", "-o", alias, "-y", NULL};
    cr_assert_eq(run_pcwstat(args, file("h.out"), file("h.err")), 1);
    char *s = slurp(file("h.err"));
    cr_assert(strstr(s, "hard link"), "%s", s);
    free(s);
    s = slurp(victim);
    cr_assert_str_eq(s, "precious\n");
    free(s);
    const char *dargs[] = {"\\Hard(h)\\Level", "-sc", "1", "-si", "0.1", "-o", tu_root, "-y", NULL};
    cr_assert_eq(run_pcwstat(dargs, file("h.out"), file("h.err")), 1);
    s = slurp(file("h.err"));
    cr_assert(strstr(s, "Is a directory") || strstr(s, "not a regular file"), "%s", s);
    free(s);
    /* /dev/null is fine with -y (a character device: not truncated). */
    const char *nargs[] = {"\\Hard(h)\\Level", "-sc", "1", "-si", "0.1", "-o",
                           "/dev/null",        "-y",  NULL};
    cr_assert_eq(run_pcwstat(nargs, file("h.out"), file("h.err")), 0);
    qp_stop(&p);
}

/* Issue 23: a counter file is bounded. /dev/zero (one endless line of NUL
 * bytes) and an endless file of short lines are refused with a clear error
 * instead of being read until memory runs out. */
Test(pcwstat, counter_file_is_bounded)
{
    const char *zero[] = {"-cf", "/dev/zero", "-sc", "1", NULL};
    cr_assert_eq(run_pcwstat(zero, file("z.out"), file("z.err")), 1);
    char *s = slurp(file("z.err"));
    cr_assert(strstr(s, "/dev/zero") && strstr(s, "line 1"), "%s", s);
    free(s);
    /* Many short lines: /dev/zero's size limit is the line; this one is the
     * file's (yes prints "y\n" for ever). */
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t yes = fork();
    cr_assert(yes >= 0);
    if (yes == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execlp("yes", "yes", "\\Set(x)\\Counter", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fds[0]);
    const char *endless[] = {"-cf", fdpath, "-sc", "1", NULL};
    cr_assert_eq(run_pcwstat(endless, file("z.out"), file("z.err")), 1);
    close(fds[0]);
    kill(yes, SIGKILL);
    waitpid(yes, NULL, 0);
    s = slurp(file("z.err"));
    cr_assert(strstr(s, "larger than"), "%s", s);
    free(s);
}

/* ---- issue 23 item 5: set-up honours Ctrl-C --------------------------------- */

/* Has process pid a handler for SIGINT (SigCgt in /proc/PID/status)? */
static int catches_sigint(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    int yes = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "SigCgt:", 7) == 0)
            yes = (strtoull(line + 7, NULL, 16) >> (SIGINT - 1)) & 1;
    if (f)
        fclose(f);
    return yes;
}

/* `\Big(*)\*` with CSV output over 20,000 instances: 60,000 columns, each
 * its own handle. SIGINT, sent once pcwstat has its handler (it is
 * installed before the set-up), ends it within 5 s whether it came during
 * the set-up (exit 130, nothing written) or after (the run ends after the
 * current sample, exit 0). Set-up used to take 30 s here and ignore
 * SIGINT until it was done. */
Test(pcwstat, ctrl_c_during_setup_ends_it_at_once)
{
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "top_provider",
                          (const char *[]){"--set", "Big", "--instances", "20000", NULL}),
                 0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 60000) > 0, "top_provider did not start");
    const char *out = file("big.csv");
    const char *args[] = {"\\Big(*)\\*", "-si", "0.5", "-o", out, NULL};
    pid_t pid = spawn_pcwstat(args, file("big.out"), file("big.err"));
    long long deadline = tu_now_ms() + 30000;
    while (!catches_sigint(pid)) {
        cr_assert(tu_now_ms() < deadline, "pcwstat never installed its SIGINT handler");
        usleep(1000); /* the pace of polling /proc, not a synchronisation */
    }
    kill(pid, SIGINT);
    long long sent = tu_now_ms();
    int st;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (tu_now_ms() - sent > 5000) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("pcwstat ignored SIGINT for 5 s");
        }
        usleep(10 * 1000);
    }
    cr_assert(WIFEXITED(st), "pcwstat died of signal %d", WTERMSIG(st));
    char *err = slurp(file("big.err"));
    cr_assert(WEXITSTATUS(st) == 0 || (WEXITSTATUS(st) == 130 && strstr(err, "interrupted")),
              "exit %d: %s", WEXITSTATUS(st), err);
    free(err);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}

/* How many times `needle` occurs in s. */
static size_t occurrences(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* _Total of a counter without an aggregate attribute (issue 24 item 8):
 * the column is empty, and stderr says why once per column, not per
 * sample; a total that has a value says nothing. CSV and JSON alike. */
Test(pcwstat, total_without_aggregate_is_explained_once)
{
    tu_child p;
    qp_start(&p, "NoAgg", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "set a %d 5", QP_PLAIN);
    qp_cmd(&p, "set a %d 5", QP_LEVEL);
    const char *formats[] = {"CSV", "json"};
    for (size_t f = 0; f < 2; f++) {
        const char *out = file("out"), *err = file("stderr");
        const char *args[] = {"\\NoAgg(_Total)\\Plain",
                              "\\NoAgg(_Total)\\Level",
                              "-si",
                              "0.1",
                              "-sc",
                              "4",
                              "-f",
                              formats[f],
                              "-o",
                              out,
                              "-y",
                              NULL};
        cr_assert_eq(run_pcwstat(args, file("stdout"), err), 0);
        char *e = slurp(err);
        cr_assert_eq(occurrences(e, "(_Total)\\Plain"), 1, "%s: stderr:\n%s", formats[f], e);
        match("\\(_Total\\)\\\\Plain: no total: counter \"Plain\" has no aggregate attribute", e);
        cr_assert_eq(occurrences(e, "Level"), 0, "%s: stderr:\n%s", formats[f], e);
        cr_assert_eq(occurrences(e, "\n"), 1, "%s: stderr:\n%s", formats[f], e);
        free(e);
        char *o = slurp(out);
        if (f == 0)
            match("\"\",\"5\\.000000\"\n", o); /* Plain empty, Level 5 */
        else
            match("\"counter\":\"Plain\"[^}]*\"status\":\"not aggregated", o);
        free(o);
    }
    qp_stop(&p);
}

/* Advanced counters (detailLevel="advanced", issue 24 item 6) are left out
 * of -q, -qx and wildcard columns, as perfmon hides them; named, they are
 * sampled. */
Test(pcwstat, advanced_counters_are_hidden_from_wildcards)
{
    tu_child p;
    cr_assert_eq(tu_spawn(&p, "query_provider",
                          (const char *const[]){"--set", "Det", "--advanced", "7", NULL}),
                 0);
    char line[256];
    cr_assert(tu_readline(&p, line, sizeof line, 10000) > 0 && strncmp(line, "ready", 5) == 0);
    qp_cmd(&p, "create a");
    qp_cmd(&p, "set a %d 9", QP_PLAIN);
    const char *q[] = {"-q", "Det", NULL};
    cr_assert_eq(run_pcwstat(q, file("q.out"), file("q.err")), 0);
    char *s = slurp(file("q.out"));
    cr_assert_str_eq(s, "\\Det(*)\\Count\n\\Det(*)\\Level\n\\Det(*)\\Peak\n\\Det(*)\\Low\n"
                        "\\Det(*)\\Hit Ratio\n\\Det(*)\\Rate\n");
    free(s);
    const char *qx[] = {"-qx", "Det", NULL};
    cr_assert_eq(run_pcwstat(qx, file("qx.out"), file("qx.err")), 0);
    s = slurp(file("qx.out"));
    cr_assert(!strstr(s, "Plain"), "%s", s);
    cr_assert(strstr(s, "\\Det(a)\\Rate\n"), "%s", s);
    free(s);
    const char *cols[] = {"\\Det(a)\\*", "-sc", "1", "-si", "0.1", "-o", file("c.csv"), NULL};
    cr_assert_eq(run_pcwstat(cols, file("c.out"), file("c.err")), 0);
    s = slurp(file("c.csv"));
    cr_assert(!strstr(s, "Plain"), "%s", s);
    free(s);
    const char *named[] = {"\\Det(a)\\Plain", "-sc", "1", "-si", "0.1", "-o", file("n.csv"), NULL};
    cr_assert_eq(run_pcwstat(named, file("n.out"), file("n.err")), 0);
    s = slurp(file("n.csv"));
    match("Det\\(a\\)\\\\Plain\"\n\"[^\"]*\",\"9\\.000000\"\n$", s);
    free(s);
    /* -a: asked for, they are listed and expanded. */
    const char *qa[] = {"-q", "Det", "-a", NULL};
    cr_assert_eq(run_pcwstat(qa, file("qa.out"), file("qa.err")), 0);
    s = slurp(file("qa.out"));
    cr_assert(strstr(s, "\\Det(*)\\Rate\n\\Det(*)\\Plain\n"), "%s", s);
    free(s);
    const char *ca[] = {"\\Det(a)\\*", "--advanced", "-sc",          "1", "-si",
                        "0.1",         "-o",         file("ca.csv"), NULL};
    cr_assert_eq(run_pcwstat(ca, file("ca.out"), file("ca.err")), 0);
    s = slurp(file("ca.csv"));
    cr_assert(strstr(s, "Det(a)\\Plain\""), "%s", s);
    free(s);
    qp_stop(&p);
}

/* One CSV cell: 1 and *v for a number, 0 for "" (no valid value). */
static int cell(const char *line, int col, double *v)
{
    const char *p = line;
    for (int c = 0; c < col; c++) {
        p = strstr(p, "\",\"");
        cr_assert(p, "no column %d in %s", col, line);
        p += 2;
    }
    cr_assert_eq(*p, '"', "%s", line);
    if (p[1] == '"')
        return 0;
    char *end;
    *v = strtod(p + 1, &end);
    cr_assert_eq(*end, '"', "column %d of %s is not a number", col, line);
    return 1;
}

/* Issue 24: a provider of a multipleAggregate set is killed (SIGKILL)
 * while pcwstat samples its _Total and its one instance, and started
 * again with the same instance. The instance counts at 1,000/s all
 * along (query_provider's "rate"), so in every row each value is either
 * empty (no valid value: first sample, provider gone, a new instance) or
 * right: w near 1,000/s (within 5x: a loaded machine may delay the
 * provider's counting thread), and _Total the sum of its members in that row -
 * w's value, or 0 when w has none. Before the fix _Total showed a rate
 * computed across the gap as valid. */
Test(pcwstat, total_across_a_provider_restart)
{
    tu_child a, b;
    qp_start(&a, "Rst", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&a, "create w");
    qp_cmd(&a, "rate w %d 1000", QP_COUNT);
    const char *out = file("rst.csv"), *err = file("rst.err");
    const char *args[] = {"\\Rst(*)\\Count", "-si", "0.1", "-o", out, NULL};
    pid_t pid = spawn_pcwstat(args, file("rst.out"), err);
    wait_lines(out, 5);
    kill(a.pid, SIGKILL);
    tu_finish(&a, 10000);
    size_t at = count_lines(out);
    wait_lines(out, at + 4); /* rows certainly sampled after a died */
    qp_start(&b, "Rst", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&b, "create w");
    qp_cmd(&b, "rate w %d 1000", QP_COUNT);
    at = count_lines(out);
    wait_lines(out, at + 6);
    kill(pid, SIGINT);
    cr_assert_eq(wait_exit(pid), 0);
    char *s = slurp(out), *l[4096];
    size_t n = lines(s, l, 4096);
    cr_assert(strstr(l[0], "\\Rst(_Total)\\Count\",\"") && strstr(l[0], "\\Rst(w)\\Count\""), "%s",
              l[0]);
    int both = 0, gap = 0;
    for (size_t i = 1; i < n; i++) {
        double total = 0, w = 0;
        int has_total = cell(l[i], 1, &total), has_w = cell(l[i], 2, &w);
        if (has_w)
            cr_assert(w > 200 && w < 5000, "row %zu: w %g/s, counting at 1000/s\n%s", i, w, s);
        if (has_total && has_w)
            cr_assert(fabs(total - w) <= 1e-6 * w, "row %zu: _Total %g, w %g\n%s", i, total, w, s);
        else if (has_total)
            cr_assert_eq(total, 0.0, "row %zu: _Total %g without a member rate\n%s", i, total, s);
        both += has_total && has_w;
        gap += !has_w;
    }
    cr_assert_geq(both, 2, "rows with both values: %d\n%s", both, s);
    cr_assert_geq(gap, 3, "rows without w: %d\n%s", gap, s);
    /* Both values again after the restart. */
    double v;
    cr_assert(cell(l[n - 1], 1, &v) && cell(l[n - 1], 2, &v), "last row: %s", l[n - 1]);
    free(s);
    qp_stop(&b);
}

/* 60 instances appear after the start: pcwstat says so in at most one line
 * per sample (a summary: the first names "and N more"), not a line per
 * instance - 1,000 new instances a second made 55,000 lines a minute. */
Test(pcwstat, new_instances_are_summarised_once_per_sample)
{
    tu_child p;
    cr_assert_eq(
        tu_spawn(&p, "top_provider", (const char *[]){"--set", "Churn", "--instances", "2", NULL}),
        0);
    char line[256], reply[256];
    cr_assert(tu_readline(&p, line, sizeof line, 30000) > 0, "top_provider did not start");
    const char *out = file("churn.csv"), *err = file("churn.err");
    const char *args[] = {"\\Churn(*)\\Value", "-si", "0.2", "-o", out, NULL};
    pid_t pid = spawn_pcwstat(args, file("churn.out"), err);
    wait_lines(out, 2);
    size_t before = count_lines(out);
    for (int i = 0; i < 60; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "create late-%02d 1", i);
        cr_assert(tu_command(&p, reply, sizeof reply, cmd) > 0 && strncmp(reply, "ok", 2) == 0,
                  "%s -> %s", cmd, reply);
    }
    /* Two samples after the last one certainly saw them all. */
    wait_lines(out, count_lines(out) + 2);
    kill(pid, SIGINT);
    cr_assert_eq(wait_exit(pid), 0);
    size_t samples = count_lines(out) - before;
    char *e = slurp(err);
    size_t said = occurrences(e, "pcwstat: new:");
    cr_assert_geq(said, 1, "no new instance reported:\n%s", e);
    cr_assert_leq(said, samples, "%zu lines about new instances in %zu samples:\n%s", said, samples,
                  e);
    cr_assert(strstr(e, " more"), "no summary:\n%s", e);
    free(e);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}

/* The cost of telling new matches (tools/pcwstat/newmatch.c, compiled in):
 * 2,000 matches that are not columns, a tenth replaced every sample for 50
 * samples. Each sample reports exactly the 200 new ones in one line, keeps
 * only the current matches, and costs the same string comparisons in the
 * last sample as in the second: O(m log m), not growing with the samples
 * (the list of every path ever seen grew by 1,000 a second and was
 * searched linearly for each match: 85 % of the CPU in strcmp). */
Test(pcwstat, new_matches_cost_the_same_every_sample)
{
    enum { LIVE = 2000, CHURN = 200, SAMPLES = 50, COLS = 100 };
    newmatch t = {0};
    char path[64];
    for (int i = 0; i < COLS; i++) {
        snprintf(path, sizeof path, "\\Set(col-%04d)\\C", i);
        cr_assert_eq(nm_add_column(&t, path), 0);
    }
    nm_columns_done(&t);
    uint64_t first = 0;
    for (int s = 0; s < SAMPLES; s++) {
        /* Live now: serials s*CHURN .. s*CHURN + LIVE - 1; and the columns. */
        for (int i = 0; i < COLS; i++) {
            snprintf(path, sizeof path, "\\Set(col-%04d)\\C", i);
            nm_see(path, &t);
        }
        for (int i = s * CHURN; i < s * CHURN + LIVE; i++) {
            snprintf(path, sizeof path, "\\Set(inst-%06d)\\C", i);
            nm_see(path, &t);
        }
        char *text = NULL;
        size_t len = 0;
        FILE *err = open_memstream(&text, &len);
        uint64_t before = t.compares;
        size_t fresh = nm_sample_end(&t, err);
        fclose(err);
        uint64_t cost = t.compares - before;
        cr_assert_eq(fresh, s == 0 ? LIVE : CHURN, "sample %d: %zu new", s, fresh);
        cr_assert_eq(t.nprev, LIVE, "sample %d keeps %zu matches", s, t.nprev);
        cr_assert_eq(occurrences(text, "\n"), 1, "sample %d: %s", s, text);
        if (s > 0) {
            char want[128];
            snprintf(want, sizeof want, "new: \\Set(inst-%06d)\\C, ", s * CHURN + LIVE - CHURN);
            cr_assert(strstr(text, want) && strstr(text, " and 197 more"), "%s", text);
        }
        free(text);
        if (s == 1)
            first = cost;
        if (s > 1)
            cr_assert_leq(cost, first + first / 4, "sample %d: %llu comparisons, the second %llu",
                          s, (unsigned long long)cost, (unsigned long long)first);
    }
    nm_free(&t);
}

/* The same, deterministically in the set-up: 3,000 paths naming instances
 * that are not there make the set-up write a line each on stderr, a pipe
 * this test does not read until it has filled (FIONREAD) - the set-up
 * cannot end before the test reads it.
 * SIGINT then, and the pipe drained: pcwstat must stop setting up at once
 * and say so (130), not finish the set-up and start sampling. */
Test(pcwstat, ctrl_c_in_the_set_up_stops_the_set_up)
{
    tu_child p;
    qp_start(&p, "Absent", PCW_MULTI_INSTANCE, NULL);
    const char *cf = file("absent.txt");
    FILE *f = fopen(cf, "w");
    cr_assert(f);
    for (int i = 0; i < 3000; i++)
        fprintf(f, "\\Absent(gone-%05d)\\Level\n", i);
    fclose(f);
    int pe[2];
    cr_assert_eq(pipe2(pe, O_CLOEXEC), 0);
    char exe[PATH_MAX];
    const char *build = getenv("PCW_BUILD");
    snprintf(exe, sizeof exe, "%s/pcwstat", build && *build ? build : PCW_BUILD_DIR);
    pid_t self = getpid();
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        tu_die_with_parent(self);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0), dup2(null, 1), dup2(pe[1], 2);
        execl(exe, exe, "-cf", cf, "-sc", "1", "-si", "0.1", (char *)NULL);
        _exit(127);
    }
    close(pe[1]);
    long long deadline = tu_now_ms() + 30000;
    int queued = 0;
    /* Half full: the set-up is writing, and cannot end before the pipe is
     * read (it has 270 KB to write). */
    while (ioctl(pe[0], FIONREAD, &queued) == 0 && queued < 32768) {
        cr_assert(tu_now_ms() < deadline, "pcwstat never filled its stderr (%d bytes)", queued);
        usleep(1000); /* the pace of polling the pipe, not a synchronisation */
    }
    cr_assert(catches_sigint(pid), "blocked before it installed its handler");
    kill(pid, SIGINT);
    char *err = NULL;
    size_t len = 0;
    FILE *all = open_memstream(&err, &len);
    char buf[4096];
    ssize_t r;
    while ((r = read(pe[0], buf, sizeof buf)) > 0)
        fwrite(buf, 1, (size_t)r, all);
    fclose(all);
    close(pe[0]);
    int st = wait_exit(pid);
    cr_assert_eq(st, 130, "exit %d after SIGINT in the set-up:\n%.2000s", st, err);
    cr_assert(strstr(err, "interrupted during the set-up"), "%.2000s", err);
    cr_assert_lt(occurrences(err, "an empty column"), 3000, "the set-up went on to the end");
    free(err);
    qp_stop(&p);
}

/* The "no total" explanation quotes the path, whose counterset name is
 * another process's: escaped by the one rule of every tool
 * (tools/common/escape.h), a bidirectional override included. It had a
 * sanitiser of its own that let U+202E through. */
Test(pcwstat, total_explanation_escapes_the_names)
{
    tu_child p;
    qp_start(&p, "Agg\xe2\x80\xaeX", PCW_MULTI_AGGREGATE, NULL);
    qp_cmd(&p, "create a");
    const char *err = file("stderr");
    const char *args[] = {"\\Agg\xe2\x80\xaeX(_Total)\\Plain", "-si", "0.1", "-sc", "2", "-o",
                          file("out"), "-y", NULL};
    cr_assert_eq(run_pcwstat(args, file("stdout"), err), 0);
    char *e = slurp(err);
    cr_assert(strstr(e, "no total"), "stderr:\n%s", e);
    cr_assert_null(strstr(e, "\xe2\x80\xae"), "a raw U+202E on stderr:\n%s", e);
    cr_assert(strstr(e, "Agg\\u202eX(_Total)"), "stderr:\n%s", e);
    free(e);
    qp_stop(&p);
}

/* -q and -qx report a write error as every output does: into /dev/full
 * they exit 1 naming it (they exited 0: the listing's writes were never
 * checked). */
Test(pcwstat, query_listing_reports_write_errors)
{
    tu_child p;
    qp_start(&p, "Full", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create a");
    const char *forms[][3] = {{"-q", NULL}, {"-qx", NULL}, {"-q", "Full", NULL}};
    for (size_t i = 0; i < 3; i++) {
        int st = run_pcwstat(forms[i], "/dev/full", file("full.err"));
        char *e = slurp(file("full.err"));
        cr_assert_eq(st, 1, "form %zu: exit %d: %s", i, st, e);
        cr_assert(strstr(e, "write error"), "form %zu: %s", i, e);
        free(e);
    }
    qp_stop(&p);
}

/* A NUL inside a counter file's line is refused, naming the line, not
 * taken as the end of a shorter path (fgets' length could not see it). */
Test(pcwstat, counter_file_refuses_a_nul_inside_a_line)
{
    tu_child p;
    qp_start(&p, "Nul", PCW_MULTI_INSTANCE, NULL);
    qp_cmd(&p, "create a");
    static const char text[] = "# one path\n\\Nul(a)\\Level\0\\Nul(a)\\Peak\n";
    cr_assert_eq(tu_write_file(file("nul.txt"), text, sizeof text - 1, 0600), 0);
    const char *args[] = {"-cf", file("nul.txt"), "-sc", "1", "-si", "0.1", NULL};
    int st = run_pcwstat(args, file("n.out"), file("n.err"));
    char *e = slurp(file("n.err"));
    cr_assert_eq(st, 1, "exit %d: %s", st, e);
    cr_assert(strstr(e, "line 2") && strstr(e, "NUL"), "%s", e);
    free(e);
    qp_stop(&p);
}

/* ---- histograms (tests/helpers/hist_provider) ----------------------------- */

static void hist_start(tu_child *c, const char *set, const char *instances)
{
    const char *args[] = {"--set", set, "--instances", instances, NULL};
    cr_assert_eq(tu_spawn(c, "hist_provider", args), 0);
    char line[256];
    cr_assert(tu_readline(c, line, sizeof line, 10000) > 0, "hist_provider did not start");
    cr_assert(strncmp(line, "ready", 5) == 0, "hist_provider: %s", line);
}

static void hist_cmd(tu_child *c, const char *cmd)
{
    char reply[256];
    cr_assert(tu_command(c, reply, sizeof reply, cmd) > 0, "no reply to %s", cmd);
    cr_assert(strncmp(reply, "ok", 2) == 0, "%s -> %s", cmd, reply);
}

/* Field k (0: the time) of a CSV row of quoted fields, as a number; NAN
 * for an empty field. */
static double csv_field(const char *row, int k)
{
    const char *p = row;
    for (int i = 0; i < k; i++) {
        p = strstr(p, "\",\"");
        cr_assert(p, "row has no field %d: %s", k, row);
        p += 2;
    }
    cr_assert_eq(*p, '"');
    return p[1] == '"' ? NAN : atof(p + 1);
}

/* A histogram path prints its default statistics, typeperf-style headers
 * "\\host\Set(inst)\Latency:p99"; the quantiles of the interval's
 * observations are within the schema's error of the exact ones (the same
 * draws, tests/hist_dist.h); a quantile above the range prints the top
 * bound and says so once; -q lists the statistics; TSV has the same
 * columns. pcwstat's first row is its file's signal to observe: the
 * observations then fall in the second row's interval. */
Test(pcwstat, histogram_quantile_columns)
{
    tu_child p;
    hist_start(&p, "Hist Stat", "2");
    const char *out = file("hist.csv");
    const char *args[] = {"\\Hist Stat(inst0)\\Latency",
                          "\\Hist Stat(inst1)\\Latency:max",
                          "-si",
                          "2",
                          "-sc",
                          "2",
                          "-o",
                          out,
                          NULL};
    pid_t pid = spawn_pcwstat(args, file("hist.stdout"), file("hist.stderr"));
    wait_lines(out, 2); /* the header and the first sample (no interval yet) */
    hist_cmd(&p, "observe 0 Latency lognormal:2000000:1 20000 11");
    hist_cmd(&p, "observe 1 Latency const:5000000000000 3 1"); /* 5000 s */
    cr_assert_eq(wait_exit(pid), 0, "%s", slurp(file("hist.stderr")));
    char *csv = slurp(out), *l[8];
    size_t n = lines(csv, l, 8);
    cr_assert_eq(n, 3, "header + 2 rows: %s", csv);
    static const char *const stats[] = {"rate", "mean", "p50", "p90", "p99", "p99.9", "max"};
    const char *host = pcw_path_local_host();
    char header[4096];
    int at = snprintf(header, sizeof header, "\"(PDH-CSV 4.0)\"");
    for (size_t i = 0; i < 7; i++)
        at += snprintf(header + at, sizeof header - (size_t)at,
                       ",\"\\\\%s\\Hist Stat(inst0)\\Latency:%s\"", host, stats[i]);
    snprintf(header + at, sizeof header - (size_t)at, ",\"\\\\%s\\Hist Stat(inst1)\\Latency:max\"",
             host);
    cr_assert_str_eq(l[0], header);
    /* The first row: no observations yet (pcwstat primed its columns with
     * a sample: a rate of 0, no quantile). */
    match("^" TIME_RE ",\"0\\.000000\"(,\"\"){7}$", l[1]);
    uint64_t *obs = hd_sorted("lognormal:2000000:1", 20000, 11);
    cr_assert(obs);
    double sum = 0;
    for (size_t i = 0; i < 20000; i++)
        sum += (double)obs[i] * 1e-9;
    cr_assert_gt(csv_field(l[2], 1), 0.0, "rate: %s", l[2]);
    cr_assert(fabs(csv_field(l[2], 2) - sum / 20000) <= 1e-6, "mean: %s", l[2]);
    static const double q[] = {0.5, 0.9, 0.99, 0.999};
    for (int k = 0; k < 4; k++) {
        double want = (double)hd_quantile(obs, 20000, q[k]) * 1e-9, got = csv_field(l[2], 3 + k);
        /* the bound, and the 6 decimals pcwstat writes */
        cr_assert(fabs(got - want) <= want * hd_bound(3) + 5e-7, "p%g: %.6f, exact %.9f (%s)",
                  q[k] * 100, got, want, l[2]);
    }
    cr_assert_geq(csv_field(l[2], 7), (double)obs[19999] * 1e-9, "max: %s", l[2]);
    cr_assert_eq(csv_field(l[2], 8), 4096.0, "above the range: the top bound: %s", l[2]);
    char *err = slurp(file("hist.stderr"));
    const char *say = "Hist Stat(inst1)\\Latency:max: at or above the histogram's range: 4096 is "
                      "its top bound";
    cr_assert(strstr(err, say), "%s", err);
    cr_assert_null(strstr(strstr(err, say) + 1, say), "said once: %s", err);
    free(err);
    free(obs);
    free(csv);
    /* TSV: the same columns. */
    const char *tsv_args[] = {"\\Hist Stat(inst0)\\Latency:p99.9",
                              "-f",
                              "TSV",
                              "-si",
                              "0.1",
                              "-sc",
                              "1",
                              "-o",
                              file("hist.tsv"),
                              NULL};
    cr_assert_eq(run_pcwstat(tsv_args, file("t.out"), file("t.err")), 0);
    char *tsv = slurp(file("hist.tsv"));
    snprintf(header, sizeof header,
             "\"(PDH-TSV 4.0)\"\t\"\\\\%s\\Hist Stat(inst0)\\Latency:p99.9\"\n", host);
    cr_assert(strncmp(tsv, header, strlen(header)) == 0, "%s", tsv);
    free(tsv);
    /* -q: a histogram's statistics. */
    const char *q_args[] = {"-q", "Hist Stat", NULL};
    cr_assert_eq(run_pcwstat(q_args, file("q.out"), file("q.err")), 0);
    char *list = slurp(file("q.out"));
    cr_assert_str_eq(list, "\\Hist Stat(*)\\Requests\n"
                           "\\Hist Stat(*)\\Latency:rate\n\\Hist Stat(*)\\Latency:mean\n"
                           "\\Hist Stat(*)\\Latency:p50\n\\Hist Stat(*)\\Latency:p90\n"
                           "\\Hist Stat(*)\\Latency:p99\n\\Hist Stat(*)\\Latency:p99.9\n"
                           "\\Hist Stat(*)\\Latency:max\n"
                           "\\Hist Stat(*)\\Size:rate\n\\Hist Stat(*)\\Size:mean\n"
                           "\\Hist Stat(*)\\Size:p50\n\\Hist Stat(*)\\Size:p90\n"
                           "\\Hist Stat(*)\\Size:p99\n\\Hist Stat(*)\\Size:p99.9\n"
                           "\\Hist Stat(*)\\Size:max\n");
    free(list);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}

/* JSON: a histogram's statistics are values named "Latency:max", with the
 * top bound and the status "above range" for a value above the range. */
Test(pcwstat, histogram_json)
{
    tu_child p;
    hist_start(&p, "Hist Json", "1");
    const char *out = file("hist.json");
    const char *args[] = {
        "\\Hist Json(inst0)\\Latency:max", "-f", "json", "-si", "1", "-sc", "2", "-o", out, NULL};
    pid_t pid = spawn_pcwstat(args, file("hj.stdout"), file("hj.stderr"));
    wait_lines(out, 1);                                        /* the first sample */
    hist_cmd(&p, "observe 0 Latency const:5000000000000 1 1"); /* 5000 s */
    cr_assert_eq(wait_exit(pid), 0, "%s", slurp(file("hj.stderr")));
    char *js = slurp(out), *l[4];
    cr_assert_eq(lines(js, l, 4), 2, "%s", js);
    match("\"counter\":\"Latency:max\",.*\"value\":null,\"status\":\"no data", l[0]);
    match("\"counter\":\"Latency:max\",.*\"value\":4096,\"status\":\"above range", l[1]);
    free(js);
    tu_send(&p, "quit");
    tu_finish(&p, 10000);
}
