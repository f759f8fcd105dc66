/* SPDX-License-Identifier: MIT */
/*
 * tests/test_tools_containers.c - --containers in pcwtop (batch and a real
 * terminal), pcwstat and pcwdump (docs/containers.md): providers in two
 * containers (real mount + pid namespaces, tests/ctr_util.h) are shown
 * with their container; pcwtop --container shows one container's only.
 * Needs root (and tmux).
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <sys/wait.h>

#include "testutil.h"
#include "ctr_util.h"
#include "tmux_util.h"

static void setup(void)
{
    ctr_setup();
    snprintf(sock, sizeof sock, "ctr-test-%d", (int)getpid());
}

static void teardown(void)
{
    tmux_teardown();
    ctr_teardown();
}

TestSuite(tools_containers, .init = setup, .fini = teardown, .timeout = 90);

/* Run build/<prog> with args; its stdout (and stderr) as a string (to
 * free), its exit status into *status; asserts it exits within 30 s. */
static char *run_tool_status(const char *prog, const char *const *args, int *status)
{
    const char *build = getenv("PCW_BUILD");
    char bin[PATH_MAX], out[PATH_MAX];
    snprintf(bin, sizeof bin, "%s/%s", build && *build ? build : PCW_BUILD_DIR, prog);
    snprintf(out, sizeof out, "%s/%s.out", tu_root, prog);
    const char *argv[32] = {bin};
    size_t n = 1;
    for (; args && *args && n < 31; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        dup2(fd, 1), dup2(fd, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int st = -1;
    long long deadline = tu_now_ms() + 30000;
    while (waitpid(pid, &st, WNOHANG) != pid) {
        if (tu_now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            cr_assert_fail("%s did not finish", prog);
        }
        struct timespec ts = {0, 2 * 1000 * 1000}; /* a child's exit: no fd to wait on */
        nanosleep(&ts, NULL);
    }
    size_t len;
    char *s = (char *)tu_read_file(out, 1 << 20, &len);
    cr_assert_not_null(s);
    s = realloc(s, len + 1);
    s[len] = 0;
    cr_assert(WIFEXITED(st), "%s was killed by signal %d:\n%s", prog, WTERMSIG(st), s);
    *status = WEXITSTATUS(st);
    return s;
}

/* The same, asserting it exits 0. */
static char *run_tool(const char *prog, const char *const *args)
{
    int st;
    char *s = run_tool_status(prog, args, &st);
    cr_assert_eq(st, 0, "%s exited %d:\n%s", prog, st, s);
    return s;
}

/* Two containers: docker's (1 instance) and CRI-O's (2). */
static void two_containers(tu_child *a, tu_child *b)
{
    char cg1[PATH_MAX], cg2[PATH_MAX], rel[512];
    snprintf(rel, sizeof rel, "system.slice/docker-%s.scope", id_docker);
    make_cgroup(rel, cg1, sizeof cg1);
    snprintf(rel, sizeof rel, "kubepods/besteffort/pod%s/crio-%s", pod_uid, id_cri);
    make_cgroup(rel, cg2, sizeof cg2);
    ctr_provider(a, cg1, "", "1");
    ctr_provider(b, cg2, "", "2");
}

/* Has out a line holding both a and b? */
static int has_line(const char *out, const char *a, const char *b)
{
    for (const char *l = out; *l;) {
        size_t n = strcspn(l, "\n");
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
        if (strstr(line, a) && strstr(line, b))
            return 1;
        l += n + (l[n] == '\n');
    }
    return 0;
}

Test(tools_containers, pcwtop_batch_column_and_filter)
{
    tu_child a, b;
    two_containers(&a, &b);
    char *out = run_tool("pcwtop",
                         (const char *[]){"-b", "-n", "1", "--containers", "-c", "Ctr Test", NULL});
    cr_assert_not_null(strstr(out, "CONTAINER"), "%s", out);
    char want[128];
    cr_assert(has_line(out, "inst-000000", short_docker), "%s", out);
    cr_assert(has_line(out, "inst-000001", short_cri), "%s", out);
    free(out);
    /* Only the CRI-O one (its id's first 10 digits select it). */
    char sel[16];
    snprintf(sel, sizeof sel, "%.10s", id_cri);
    out = run_tool("pcwtop",
                   (const char *[]){"-b", "-n", "1", "--container", sel, "-c", "Ctr Test", NULL});
    cr_assert_null(strstr(out, short_docker), "%s", out);
    cr_assert(has_line(out, "inst-000001", short_cri), "%s", out);
    /* Every instance row is the CRI-O container's. */
    for (const char *l = out; *l;) {
        size_t n = strcspn(l, "\n");
        char row[1024];
        snprintf(row, sizeof row, "%.*s", (int)(n < sizeof row ? n : sizeof row - 1), l);
        if (strstr(row, "inst-"))
            cr_assert_not_null(strstr(row, short_cri), "a row of another container: %s", out);
        l += n + (l[n] == '\n');
    }
    snprintf(want, sizeof want, "container \"%s\"", sel);
    cr_assert_not_null(strstr(out, want), "%s", out);
    free(out);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
}

/* CRI-O's config.json for the CRI-O container (a fake state root):
 * Kubernetes' names, the container's with a terminal escape sequence. */
static void cri_config(void)
{
    char state[PATH_MAX], path[PATH_MAX + 200];
    snprintf(state, sizeof state, "%s/state", tu_root);
    snprintf(path, sizeof path,
             "%s/run/containers/storage/overlay-containers/%s/userdata/config.json", state, id_cri);
    ctr_write_file(path, "{\"annotations\":{\"io.kubernetes.pod.name\":\"web-0\","
                         "\"io.kubernetes.pod.namespace\":\"shop\","
                         "\"io.kubernetes.container.name\":\"a\\u001b[2Jb\"}}");
    cr_assert_eq(setenv("PCW_RUNTIME_ROOT", state, 1), 0);
}

Test(tools_containers, pcwtop_terminal_column)
{
    tu_child a, b;
    two_containers(&a, &b);
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "%s/pcwtop --containers -c 'Ctr Test'", build_dir());
    session(160, 30);
    type(cmd);
    WAIT_FOR(short_cri);
    WAIT_FOR("CONTAINER");
    char re[64];
    snprintf(re, sizeof re, "inst-000000(#[0-9]+)? +1 +%s", short_docker);
    WAIT_RE(re);
    keys("q");
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
}

/* The details pane ('d') of a container's instance names its container
 * and its Kubernetes namespace and pod (from the runtime's config.json). */
Test(tools_containers, pcwtop_details_name_the_pod)
{
    cri_config();
    tu_child a, b;
    two_containers(&a, &b);
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "%s/pcwtop --container %s -c 'Ctr Test'", build_dir(), short_cri);
    session(160, 30);
    type(cmd);
    WAIT_FOR("inst-000001");
    keys("d");
    char want[128];
    snprintf(want, sizeof want, "Container: %s  pod shop/web-0", short_cri);
    WAIT_FOR(want);
    keys("q");
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
}

Test(tools_containers, pcwstat_json_names_the_container)
{
    cri_config();
    tu_child a, b;
    two_containers(&a, &b);
    char *out = run_tool("pcwstat", (const char *[]){"\\Ctr Test(*)\\Index", "-sc", "1", "-f",
                                                     "JSON", "--containers", NULL});
    char want[128];
    snprintf(want, sizeof want, "\"container\":\"%s\"", short_docker);
    cr_assert_not_null(strstr(out, want), "%s", out);
    snprintf(want, sizeof want, "\"container\":\"%s\",\"host_pid\":", short_cri);
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_not_null(strstr(out, ",\"namespace\":\"shop\",\"pod\":\"web-0\""), "%s", out);
    free(out);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
}

Test(tools_containers, pcwdump_shows_the_container)
{
    cri_config();
    tu_child a, b;
    two_containers(&a, &b);
    char *out = run_tool("pcwdump", (const char *[]){"--containers", "-c", "Ctr Test", NULL});
    char want[256];
    snprintf(want, sizeof want, "container: docker %s", id_docker);
    cr_assert_not_null(strstr(out, want), "%s", out);
    snprintf(want, sizeof want, "container: cri-o %s  pod uid %s", id_cri, pod_uid);
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_not_null(strstr(out, "kubernetes: namespace shop  pod web-0  container a\\x1b[2Jb"),
                       "%s", out);
    cr_assert_null(strchr(out, 0x1b), "an escape sequence reached the terminal");
    free(out);
    out = run_tool("pcwdump", (const char *[]){"--containers", "--json", "-c", "Ctr Test", NULL});
    snprintf(want, sizeof want, "\"id\": \"%s\"", id_cri);
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_not_null(strstr(out, "\"pod\": \"web-0\""), "%s", out);
    cr_assert_not_null(strstr(out, "\"namespace\": \"shop\""), "%s", out);
    cr_assert_not_null(strstr(out, "\"container\": \"a\\u001b[2Jb\""), "%s", out);
    free(out);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
}

/* Callback countersets (served over each provider's control socket, across
 * its mount and pid namespaces) in three containers: pcwtop --containers
 * shows every container's instances, with their values, in its column;
 * pcwstat reads them too. */
Test(tools_containers, pcwtop_and_pcwstat_callback_countersets)
{
    char cg1[PATH_MAX], cg2[PATH_MAX], cg3[PATH_MAX], rel[512];
    snprintf(rel, sizeof rel, "system.slice/docker-%s.scope", id_docker);
    make_cgroup(rel, cg1, sizeof cg1);
    snprintf(rel, sizeof rel, "kubepods/besteffort/pod%s/crio-%s", pod_uid, id_cri);
    make_cgroup(rel, cg2, sizeof cg2);
    snprintf(rel, sizeof rel, "user.slice/libpod-%s.scope", id_podman);
    make_cgroup(rel, cg3, sizeof cg3);
    tu_child a, b, u;
    ctr_callback_provider(&a, cg1, "", "d");
    ctr_callback_provider(&b, cg2, "", "k");
    ctr_callback_provider(&u, cg3, "--user --map-root-user", "p");
    char short_podman[13];
    snprintf(short_podman, sizeof short_podman, "%.12s", id_podman);

    char *out = run_tool(
        "pcwtop", (const char *[]){"-b", "-n", "1", "--containers", "-c", "Callback Test", NULL});
    cr_assert(has_line(out, "d-1", short_docker) && has_line(out, "d-1", " 200"), "%s", out);
    cr_assert(has_line(out, "k-2", short_cri) && has_line(out, "k-2", " 300"), "%s", out);
    cr_assert(has_line(out, "p-0", short_podman) && has_line(out, "p-0", " 100"), "%s", out);
    free(out);
    out = run_tool("pcwstat", (const char *[]){"\\Callback Test(*)\\A", "-sc", "1", "-f", "JSON",
                                               "--containers", NULL});
    char want[64];
    snprintf(want, sizeof want, "\"container\":\"%s\"", short_podman);
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_not_null(strstr(out, "p-0"), "%s", out);
    free(out);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
    tu_finish(&u, 10000);
}

/* two_containers, and a third whose id (into twin) shares its first 20
 * digits with CRI-O's (3 instances). */
static void three_with_twin(tu_child *a, tu_child *b, tu_child *c, char twin[65])
{
    two_containers(a, b);
    char cg3[PATH_MAX], rel[512];
    snprintf(twin, 65, "%.20s%s", id_cri, "00000000000000000000000000000000000000000000");
    snprintf(rel, sizeof rel, "system.slice/docker-%s.scope", twin);
    make_cgroup(rel, cg3, sizeof cg3);
    ctr_provider(c, cg3, "", "3");
}

/* A path's host part selects a container (docs/containers.md, "Paths"):
 * \\<id prefix>\Set(*)\Counter reads that container's instances only, and
 * implies --containers; \\* reads every provider's, containers' too; an
 * ambiguous prefix, a container that is not there and a name that is
 * neither fail, saying so. */
Test(tools_containers, pcwstat_path_selects_a_container)
{
    tu_child a, b, c;
    char twin[65];
    three_with_twin(&a, &b, &c, twin);

    char path[256];
    snprintf(path, sizeof path, "\\\\%.24s\\Ctr Test(*)\\Index", id_cri);
    char *out = run_tool("pcwstat", (const char *[]){path, "-sc", "1", "-f", "JSON", NULL});
    char want[64];
    snprintf(want, sizeof want, "\"container\":\"%s\"", short_cri);
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_not_null(strstr(out, "inst-000001"), "%s", out);
    /* Each value's path names the container, as the path given did. */
    snprintf(want, sizeof want, "\"path\":\"\\\\\\\\%.24s\\\\Ctr Test(inst-000001", id_cri);
    cr_assert_not_null(strstr(out, want), "no %s in\n%s", want, out);
    cr_assert_null(strstr(out, short_docker), "another container's value:\n%s", out);
    cr_assert_null(strstr(out, "inst-000002"), "another container's value:\n%s", out);
    free(out);
    /* One instance by name, in the docker container: its value (0), not
     * the CRI-O container's instance of the same name. */
    snprintf(path, sizeof path, "\\\\%s\\Ctr Test(inst-000000)\\Index", id_docker);
    out = run_tool("pcwstat", (const char *[]){path, "-sc", "1", "-f", "JSON", NULL});
    snprintf(want, sizeof want, "\"container\":\"%s\"", short_docker);
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_null(strstr(out, short_cri), "%s", out);
    free(out);
    /* Every provider: the three containers' instances. */
    out = run_tool("pcwstat",
                   (const char *[]){"\\\\*\\Ctr Test(*)\\Index", "-sc", "1", "-f", "JSON", NULL});
    cr_assert_not_null(strstr(out, short_docker), "%s", out);
    cr_assert_not_null(strstr(out, "inst-000002"), "%s", out);
    free(out);

    int st;
    snprintf(path, sizeof path, "\\\\%.12s\\Ctr Test(*)\\Index", id_cri);
    out = run_tool_status("pcwstat", (const char *[]){path, "-sc", "1", NULL}, &st);
    cr_assert_neq(st, 0, "%s", out);
    cr_assert_not_null(strstr(out, "is ambiguous"), "%s", out);
    cr_assert_not_null(strstr(out, twin), "%s", out);
    free(out);
    out = run_tool_status(
        "pcwstat", (const char *[]){"\\\\feedfacefeedface\\Ctr Test(*)\\Index", "-sc", "1", NULL},
        &st);
    cr_assert_neq(st, 0, "%s", out);
    cr_assert_not_null(strstr(out, "no provider in container \"feedfacefeedface\""), "%s", out);
    free(out);
    out = run_tool_status(
        "pcwstat", (const char *[]){"\\\\not-a-container\\Ctr Test(*)\\Index", "-sc", "1", NULL},
        &st);
    cr_assert_neq(st, 0, "%s", out);
    cr_assert_not_null(strstr(out, "nor a container"), "%s", out);
    free(out);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
    tu_finish(&c, 10000);
}

/* pcwtop --container with a name a path can hold (12 digits or more) is
 * the path's selection: that container's rows only; a prefix of two containers' ids fails, naming
 * both. */
Test(tools_containers, pcwtop_container_is_a_path)
{
    tu_child a, b, c;
    char twin[65];
    three_with_twin(&a, &b, &c, twin);
    char sel[32];
    snprintf(sel, sizeof sel, "%.24s", id_cri);
    char *out = run_tool(
        "pcwtop", (const char *[]){"-b", "-n", "1", "--container", sel, "-c", "Ctr Test", NULL});
    cr_assert(has_line(out, "inst-000001", short_cri), "%s", out);
    cr_assert_null(strstr(out, "inst-000002"), "the twin's row:\n%s", out);
    cr_assert_null(strstr(out, short_docker), "%s", out);
    free(out);
    int st;
    snprintf(sel, sizeof sel, "%.12s", id_cri);
    out = run_tool_status(
        "pcwtop", (const char *[]){"-b", "-n", "1", "--container", sel, "-c", "Ctr Test", NULL},
        &st);
    cr_assert_neq(st, 0, "%s", out);
    cr_assert_not_null(strstr(out, "is ambiguous"), "%s", out);
    cr_assert_not_null(strstr(out, twin), "%s", out);
    free(out);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
    tu_finish(&c, 10000);
}

/* A namespace no runtime named is selected by the inode of its mount
 * namespace, as the tools name it: \\ns:<inode>\Set(*)\Counter. */
Test(tools_containers, pcwstat_path_selects_an_unnamed_namespace)
{
    tu_child a, b;
    ctr_provider(&a, NULL, "", "2");
    ctr_provider(&b, NULL, "", "1");
    /* a's provider: its unshare's only child; its mount namespace's inode. */
    char p[96], buf[64];
    snprintf(p, sizeof p, "/proc/%d/task/%d/children", (int)a.pid, (int)a.pid);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    snprintf(p, sizeof p, "/proc/%d/ns/mnt", atoi(buf));
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    char path[128], want[64];
    snprintf(path, sizeof path, "\\\\ns:%llu\\Ctr Test(*)\\Index", (unsigned long long)st.st_ino);
    char *out = run_tool("pcwstat", (const char *[]){path, "-sc", "1", "-f", "JSON", NULL});
    snprintf(want, sizeof want, "\"container\":\"ns:%llu\"", (unsigned long long)st.st_ino);
    /* Its two instances, and no value of b's. */
    const char *first = strstr(out, want);
    cr_assert_not_null(first, "%s", out);
    const char *second = strstr(first + 1, want);
    cr_assert_not_null(second, "%s", out);
    cr_assert_null(strstr(second + 1, want), "%s", out);
    cr_assert_eq(strstr(out, "\"container\":\"ns:") == first, 1, "another namespace's:\n%s", out);
    const char *other = strstr(second + 1, "\"container\":");
    cr_assert_null(other, "another namespace's value:\n%s", out);
    free(out);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
}
