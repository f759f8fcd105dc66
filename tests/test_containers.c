/* SPDX-License-Identifier: MIT */
/*
 * tests/test_containers.c - providers in other mount namespaces
 * (lib/consumer/containers.c, identity.c; docs/containers.md), with real
 * namespaces: each "container" is `unshare --mount --pid --fork` (one also
 * --user --map-root-user, as rootless podman runs) with its own tmpfs on
 * /dev/shm, started in a cgroup named as a runtime would name it. A host
 * consumer with `containers` finds, reads and labels their providers and
 * drops them when they exit; hostile containers (a symlink to a host
 * file, a FIFO, a huge sparse file, a symlinked PCW_DIR, folders that lie
 * about their owner) fail cleanly; an unprivileged consumer finds nothing
 * new. Needs root (CI runs as root); synchronised on the providers'
 * "ready" lines and the consumer's own state, never on sleeps.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <dirent.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "consumer/containers.h"
#include "consumer/private.h"
#include "pcw/collect.h"
#include "pcw/consumer.h"
#include "testutil.h"
#include "ctr_util.h"

static void setup(void)
{
    ctr_setup();
}

static void teardown(void)
{
    ctr_teardown();
}

TestSuite(containers, .init = setup, .fini = teardown, .timeout = 60);

/* The segment of the container whose id is `id`; NULL if none. */
static pcw_segment *by_id(pcw_consumer *c, const char *id)
{
    for (size_t i = 0; i < pcw_consumer_segment_count(c); i++) {
        const pcw_container_info *ci = pcw_segment_container(pcw_consumer_segment(c, i));
        if (ci && strcmp(ci->id, id) == 0)
            return pcw_consumer_segment(c, i);
    }
    return NULL;
}

/* Its "Ctr Test" instances: their count, and that instance i has Index i. */
static size_t read_instances(pcw_segment *s)
{
    const pcw_counterset *cs = pcw_segment_find_counterset(s, "Ctr Test");
    cr_assert_not_null(cs);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    cr_assert_eq(pcw_segment_read(s, cs, &snap, 0), PCW_OK);
    for (size_t r = 0; r < snap.count; r++) {
        char want[32];
        uint64_t index = pcw_snapshot_value(&snap, r, &cs->counters[1]);
        snprintf(want, sizeof want, "inst-%06llu", (unsigned long long)index);
        cr_assert_str_eq(pcw_snapshot_name(&snap, r), want);
    }
    size_t n = snap.count;
    pcw_snapshot_free(&snap);
    return n;
}

/* The parent of a process, from /proc/<pid>/stat; -1 if it is gone. */
static pid_t ppid_of(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    int ppid = -1; /* gone (another test's process may exit while we look) */
    if (f && fgets(buf, sizeof buf, f) && strrchr(buf, ')'))
        sscanf(strrchr(buf, ')') + 2, "%*c %d", &ppid);
    if (f)
        fclose(f);
    return ppid;
}

static pcw_consumer *open_containers(void)
{
    pcw_consumer *c;
    pcw_consumer_options o = {.containers = 1};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    return c;
}

/* Three containers (docker, Kubernetes on containerd, rootless-podman-like
 * in a user namespace) are found, read and labelled; one that exits is
 * gone at the next refresh, and the consumer knew a refresh was due. */
Test(containers, found_read_labelled_and_removed_on_exit)
{
    char cg1[PATH_MAX], cg2[PATH_MAX], cg3[PATH_MAX], rel[512];
    snprintf(rel, sizeof rel, "system.slice/docker-%s.scope", id_docker);
    make_cgroup(rel, cg1, sizeof cg1);
    char pod_[sizeof pod_uid];
    strcpy(pod_, pod_uid);
    for (char *p = pod_; *p; p++)
        *p = *p == '-' ? '_' : *p;
    snprintf(rel, sizeof rel,
             "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/"
             "cri-containerd-%s.scope",
             pod_, id_cri);
    make_cgroup(rel, cg2, sizeof cg2);
    snprintf(rel, sizeof rel, "user.slice/libpod-%s.scope", id_podman);
    make_cgroup(rel, cg3, sizeof cg3);
    tu_child a, b, u;
    ctr_provider(&a, cg1, "", "1");
    ctr_provider(&b, cg2, "", "2");
    ctr_provider(&u, cg3, "--user --map-root-user", "3");

    pcw_consumer *c = open_containers();
    pcw_segment *sa = by_id(c, id_docker), *sb = by_id(c, id_cri), *su = by_id(c, id_podman);
    cr_assert(sa && sb && su, "not every container's provider was found");
    cr_assert_eq(read_instances(sa), 1);
    cr_assert_eq(read_instances(sb), 2);
    cr_assert_eq(read_instances(su), 3);

    const pcw_container_info *ia = pcw_segment_container(sa), *ib = pcw_segment_container(sb),
                             *iu = pcw_segment_container(su);
    cr_assert_str_eq(ia->runtime, "docker");
    cr_assert_str_eq(ia->pod_uid, "");
    cr_assert_str_eq(ib->runtime, "containerd");
    cr_assert_str_eq(ib->pod_uid, pod_uid);
    cr_assert_str_eq(iu->runtime, "podman");
    cr_assert_not_null(strstr(ib->cgroup, "/kubepods-burstable-pod"), "%s", ib->cgroup);
    cr_assert_not_null(strstr(ib->cgroup, id_cri), "%s", ib->cgroup);
    /* Pids: 1 in its own namespace; here, a child of its unshare. */
    cr_assert_eq(ia->ns_pid, 1);
    cr_assert_eq(pcw_segment_provider(sa)->pid, 1);
    cr_assert_eq(ppid_of(ia->host_pid), a.pid);
    cr_assert_eq(ppid_of(ib->host_pid), b.pid);
    cr_assert_eq(ppid_of(iu->host_pid), u.pid);
    cr_assert_neq(ia->mnt_ns, ib->mnt_ns);
    cr_assert_eq(strncmp(pcw_segment_provider(sa)->path, "/proc/", 6), 0);

    /* One is killed (its segment file stays behind in its tmpfs, which
     * the consumer's descriptor keeps): a refresh is due, and it is gone
     * from view with its namespace. */
    kill(ia->host_pid, SIGKILL);
    tu_finish(&a, 10000);
    cr_assert_eq(pcw__consumer_containers_changed(c), 1);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    cr_assert_null(by_id(c, id_docker));
    cr_assert_not_null(sb = by_id(c, id_cri));
    cr_assert_eq(read_instances(sb), 2);
    pcw_consumer_close(c);
    tu_finish(&b, 10000);
    tu_finish(&u, 10000);
}

/* Nothing changed: no refresh is due, so no walk of /proc. Run in a pid
 * namespace of its own, with its own /proc, so that no other process on
 * the machine (other tests' containers) changes anything: the consumer
 * and the container are all it sees. Failures exit with a line number. */
#define CHILD_CHECK(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                             \
            _exit(__LINE__ % 250 + 1);                                                             \
        }                                                                                          \
    } while (0)

static void steady_state_child(void)
{
    CHILD_CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
    CHILD_CHECK(mount("proc", "/proc", "proc", 0, NULL) == 0);
    tu_child a;
    char helper[PATH_MAX], line[64];
    tu_helper_path("top_provider", helper, sizeof helper);
    ctr_spawn(&a, NULL, "", "exec \"$@\"", (const char *[]){helper, "--set", "Ctr Test", NULL});
    CHILD_CHECK(tu_readline(&a, line, sizeof line, 30000) > 0);
    pcw_consumer *c;
    pcw_consumer_options o = {.containers = 1};
    CHILD_CHECK(pcw_consumer_open(&c, &o) == PCW_OK);
    CHILD_CHECK(pcw_consumer_refresh(c, NULL) == PCW_OK);
    CHILD_CHECK(pcw_consumer_segment_count(c) == 1);
    CHILD_CHECK(pcw__consumer_containers_changed(c) == 0);
    CHILD_CHECK(pcw__consumer_containers_changed(c) == 0);
    /* A file appears in its provider folder (as a new provider's segment
     * would): due. After the refresh, not. */
    char path[128];
    snprintf(path, sizeof path, "/proc/%d/root/dev/shm/pcw-0/new", (int)a.pid);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    CHILD_CHECK(fd >= 0);
    close(fd);
    CHILD_CHECK(pcw__consumer_containers_changed(c) == 1);
    CHILD_CHECK(pcw_consumer_refresh(c, NULL) == PCW_OK);
    CHILD_CHECK(pcw__consumer_containers_changed(c) == 0);
    /* A new provider folder in its PCW_DIR: due. */
    snprintf(path, sizeof path, "/proc/%d/root/dev/shm/pcw-4242", (int)a.pid);
    CHILD_CHECK(mkdir(path, 0700) == 0);
    CHILD_CHECK(pcw__consumer_containers_changed(c) == 1);
    pcw_consumer_close(c);
    tu_finish(&a, 10000);
    _exit(0);
}

Test(containers, steady_state_needs_no_walk)
{
    pid_t k = fork();
    cr_assert_neq(k, -1);
    if (k == 0) {
        if (unshare(CLONE_NEWNS | CLONE_NEWPID) != 0)
            _exit(201);
        pid_t g = fork();
        if (g == 0)
            steady_state_child();
        int st;
        _exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) ? WEXITSTATUS(st) : 202);
    }
    int st;
    cr_assert_eq(waitpid(k, &st, 0), k);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

/* Write `text` to /proc/<pid>/<file> (a uid_map or gid_map). */
static void write_map(pid_t pid, const char *file, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    cr_assert_geq(fd, 0, "%s", path);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text), "%s: %s", path,
                 strerror(errno));
    close(fd);
}

/* Start `argv` (a provider) as uid 1000 of a user namespace where 1000 is
 * the host's 100000 (as rootless podman maps), in its own mount and pid
 * namespaces (pid 1) with its own /dev/shm; p gets its stdin and stdout. */
static void spawn_mapped(tu_child *p, char *const *argv)
{
    int ready[2], go[2], pin[2], pout[2];
    cr_assert(pipe2(ready, O_CLOEXEC) == 0 && pipe2(go, O_CLOEXEC) == 0 &&
              pipe2(pin, O_CLOEXEC) == 0 && pipe2(pout, O_CLOEXEC) == 0);
    pid_t k = fork();
    cr_assert_neq(k, -1);
    if (k == 0) {
        /* Only the provider keeps its stdin: it ends when ours closes. */
        close(pin[1]), close(pout[0]), close(ready[0]), close(go[1]);
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) != 0)
            _exit(10);
        char b = 'u';
        if (write(ready[1], &b, 1) != 1 || read(go[0], &b, 1) != 1)
            _exit(11); /* the parent writes our maps meanwhile */
        pid_t g = fork();
        if (g == 0) {
            if (setresgid(0, 0, 0) || setresuid(0, 0, 0) ||
                mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
                mount("tmpfs", "/dev/shm", "tmpfs", 0, "mode=1777"))
                _exit(12);
            unsetenv("PCW_DIR");
            if (setgroups(0, NULL) || setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
                _exit(13);
            dup2(pin[0], 0), dup2(pout[1], 1);
            execv(argv[0], argv);
            _exit(14);
        }
        int st;
        _exit(g > 0 && waitpid(g, &st, 0) == g && WIFEXITED(st) ? WEXITSTATUS(st) : 15);
    }
    close(pin[0]), close(pout[1]);
    char b;
    cr_assert_eq(read(ready[0], &b, 1), 1);
    write_map(k, "uid_map", "0 0 1\n1000 100000 1\n");
    write_map(k, "gid_map", "0 0 1\n1000 100000 1\n");
    cr_assert_eq(write(go[1], "g", 1), 1);
    close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
    *p = (tu_child){.pid = k, .in = pin[1], .out = pout[0]};
}

/* The segment of uid 1000 (100000 here) of p's provider (its child:
 * other tests' run at the same time). */
static pcw_segment *mapped_segment(pcw_consumer *c, const tu_child *p)
{
    for (size_t i = 0; i < pcw_consumer_segment_count(c); i++) {
        pcw_segment *x = pcw_consumer_segment(c, i);
        const pcw_container_info *ci = pcw_segment_container(x);
        if (ci && ci->host_pid && ppid_of(ci->host_pid) == p->pid &&
            strstr(pcw_segment_provider(x)->path, "/pcw-1000/"))
            return x;
    }
    return NULL;
}

/* A provider that runs as uid 1000 of a user namespace where 1000 is the
 * host's 100000: its folder pcw-1000 is owned by 100000 here, its header
 * says 1000. Found, read, its uid as it sees it. */
Test(containers, user_namespace_uids_are_mapped)
{
    char helper[PATH_MAX];
    tu_helper_path("top_provider", helper, sizeof helper);
    tu_child p;
    spawn_mapped(&p, (char *[]){helper, "--set", "Ctr Test", "--instances", "2", NULL});
    char line[64];
    cr_assert(tu_readline(&p, line, sizeof line, 30000) > 0, "the provider did not start");
    cr_assert_str_eq(line, "ready 1");

    pcw_consumer *c = open_containers();
    pcw_segment *s = mapped_segment(c, &p);
    cr_assert_not_null(s, "the provider of uid 1000 (100000 here) was not found");
    cr_assert_eq(pcw_segment_provider(s)->uid, 1000);
    cr_assert_eq(read_instances(s), 2);
    pcw_consumer_close(c);
    int st = tu_finish(&p, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

/* Its callback counterset too: the control socket's SO_PEERCRED says
 * 100000, the header 1000; the check compares the segment file's owner as
 * this consumer sees it (100000) with the former (docs/control-channel.md,
 * "Who may answer"). It was refused before: header uid against the
 * kernel's. */
Test(containers, user_namespace_callback_collected)
{
    char helper[PATH_MAX], line[PATH_MAX + 16];
    tu_helper_path("callback_provider", helper, sizeof helper);
    tu_child p;
    spawn_mapped(&p, (char *[]){helper, "u", "10", "0", NULL});
    cr_assert(tu_readline(&p, line, sizeof line, 30000) > 0, "the provider did not start");
    cr_assert(strncmp(line, "ready /dev/shm/pcw-1000/1-", 26) == 0, "%s", line);

    pcw_consumer *c = open_containers();
    pcw_segment *s = mapped_segment(c, &p);
    cr_assert_not_null(s, "the provider of uid 1000 (100000 here) was not found");
    const pcw_counterset *cs = pcw_segment_find_counterset(s, "Callback Test");
    cr_assert_not_null(cs);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    int rc = pcw_segment_collect(s, cs, NULL, &snap, 0, 0, 5000, NULL);
    cr_assert_eq(rc, PCW_OK, "collect: %s", pcw_error_detail());
    cr_assert_eq(snap.count, 3);
    for (size_t r = 0; r < snap.count; r++) {
        char want[16];
        uint64_t a = pcw_snapshot_value(&snap, r, &cs->counters[0]);
        snprintf(want, sizeof want, "u-%llu", (unsigned long long)(a / 100 - 1));
        cr_assert_str_eq(pcw_snapshot_name(&snap, r), want);
    }
    pcw_snapshot_free(&snap);
    pcw_consumer_close(c);
    int st = tu_finish(&p, 10000);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
}

/* The uid rule still holds under the map: an impostor of another uid (the
 * host's root) in a pid namespace of its own, where it is pid 1 as the
 * header says, with the segment mapped for writing, listening at the
 * socket path in place of the provider, passes every rule but the uid's,
 * and is refused by that one (PCW_E_PERMISSION, naming uid 0), not
 * waited for. */
Test(containers, user_namespace_impostor_of_another_uid_refused)
{
    char helper[PATH_MAX], line[PATH_MAX + 16];
    tu_helper_path("callback_provider", helper, sizeof helper);
    tu_child p, imp;
    spawn_mapped(&p, (char *[]){helper, "u", "10", "0", NULL});
    cr_assert(tu_readline(&p, line, sizeof line, 30000) > 0, "the provider did not start");
    cr_assert(strncmp(line, "ready /dev/shm/", 15) == 0, "%s", line);
    char seg[PATH_MAX + 64];
    pcw_consumer *c = open_containers();
    pcw_segment *s = mapped_segment(c, &p);
    cr_assert_not_null(s);
    snprintf(seg, sizeof seg, "/proc/%d/root%s", (int)pcw_segment_container(s)->host_pid, line + 6);
    static const char script[] =
        "import mmap, os, socket, sys\n"
        "seg = sys.argv[1]; sock = seg[:-4] + '.sock'\n"
        "fd = os.open(seg, os.O_RDWR)\n"
        "m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)\n"
        "os.unlink(sock)\n"
        "s = socket.socket(socket.AF_UNIX); s.bind(sock); s.listen(8)\n"
        "print('ready', os.getpid(), flush=True); sys.stdin.read()\n";
    cr_assert_eq(tu_spawn_argv(&imp, (const char *[]){"unshare", "--pid", "--fork", "--",
                                                      "/usr/bin/python3", "-c", script, seg, NULL}),
                 0);
    cr_assert(tu_readline(&imp, line, sizeof line, 30000) > 0, "the impostor did not start");
    cr_assert_str_eq(line, "ready 1", "the impostor is not pid 1 of its namespace");
    const pcw_counterset *cs = pcw_segment_find_counterset(s, "Callback Test");
    cr_assert_not_null(cs);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    int rc = pcw_segment_collect(s, cs, NULL, &snap, 0, 0, 2000, NULL);
    cr_assert_eq(rc, PCW_E_PERMISSION, "%s: %s", pcw_status_str(rc), pcw_error_detail());
    cr_assert_not_null(strstr(pcw_error_detail(), "served by uid 0,"), "%s", pcw_error_detail());
    pcw_snapshot_free(&snap);
    pcw_consumer_close(c);
    tu_finish(&imp, 10000);
    tu_finish(&p, 10000);
}

/* Without the option, nothing in a container is seen. */
Test(containers, off_by_default)
{
    tu_child a;
    ctr_provider(&a, NULL, "", "1");
    pcw_consumer *c;
    pcw_consumer_options o = {.all_users = 1};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    for (size_t i = 0; i < pcw_consumer_segment_count(c); i++)
        cr_assert_null(pcw_segment_container(pcw_consumer_segment(c, i)));
    pcw_consumer_close(c);
    tu_finish(&a, 10000);
}

/* A consumer without privilege finds no other namespace's provider: it
 * cannot read root's /proc/<pid>/root, as before. */
Test(containers, unprivileged_sees_nothing_new)
{
    tu_child a;
    ctr_provider(&a, NULL, "", "1");
    pid_t k = fork();
    cr_assert_neq(k, -1);
    if (k == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(2);
        pcw_consumer *c;
        pcw_consumer_options o = {.containers = 1};
        if (pcw_consumer_open(&c, &o) != PCW_OK || pcw_consumer_refresh(c, NULL) != PCW_OK)
            _exit(3);
        for (size_t i = 0; i < pcw_consumer_segment_count(c); i++)
            if (pcw_segment_container(pcw_consumer_segment(c, i)))
                _exit(4);
        pcw_consumer_close(c);
        _exit(0);
    }
    int st;
    cr_assert_eq(waitpid(k, &st, 0), k);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    tu_finish(&a, 10000);
}

/* ---- hostile containers ------------------------------------------------- */

typedef struct seen {
    char path[64][PATH_MAX];
    int status[64], folder[64];
    const pcw_container_info *ci[64];
    size_t n;
    pid_t root_pid[2]; /* only entries under /proc/<one of them>/root */
} seen;

static int record(pcw_discovered *d, void *arg)
{
    seen *s = (seen *)arg;
    char prefix[64];
    int k;
    for (k = 0; k < 2; k++) {
        snprintf(prefix, sizeof prefix, "/proc/%d/root/", (int)s->root_pid[k]);
        if (strncmp(d->path, prefix, strlen(prefix)) == 0)
            break;
    }
    if (k == 2 || s->n == 64)
        return PCW_OK;
    snprintf(s->path[s->n], PATH_MAX, "%s", d->path + strlen(prefix) - 1);
    s->status[s->n] = d->status;
    s->folder[s->n] = d->is_folder;
    s->n++;
    return PCW_OK;
}

static int status_of(const seen *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->path[i], path) == 0)
            return s->status[i];
    return 1000; /* not met */
}

/* A host provider (with callback counterset "Ctr Cb" if cb); its segment's
 * path into seg. */
static void host_provider_cb(tu_child *p, char *seg, size_t cap, int cb)
{
    char line[256];
    cr_assert_eq(tu_spawn(p, "top_provider",
                          cb ? (const char *[]){"--set", "Host", "--callback", "Ctr Cb", NULL}
                             : (const char *[]){"--set", "Host", NULL}),
                 0);
    cr_assert(tu_readline(p, line, sizeof line, 30000) > 0);
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/pcw-0", tu_root);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    seg[0] = 0;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".seg"))
            cr_assert_lt((size_t)snprintf(seg, cap, "%s/%s", dir, e->d_name), cap);
    closedir(d);
    cr_assert(seg[0]);
}

static void host_provider(tu_child *p, char *seg, size_t cap)
{
    host_provider_cb(p, seg, cap, 0);
}

/* The host pid of the container's shell: the unshare's only child (the
 * unshare is in the container's mount namespace too: either may be the
 * one discovery reaches it by). */
static pid_t ctr_init(const tu_child *c)
{
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)c->pid, (int)c->pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    return (pid_t)atoi(buf);
}

/* Planted in a container's /dev/shm: a symlink to a host segment, a FIFO,
 * a huge sparse file, a huge sparse copy of a real segment, a folder
 * named for a uid that does not own it and a symlinked folder. Each is
 * refused (the copy is read within its header's size); the host's own
 * segment is never reached through the container. */
Test(containers, hostile_files_fail_cleanly)
{
    tu_child host, h;
    char seg[PATH_MAX], line[256];
    host_provider(&host, seg, sizeof seg);
    static const char script[] =
        "cd /dev/shm && mkdir -m 700 pcw-0 pcw-5 && cd pcw-0 && "
        "ln -s \"$1\" 1-00000000000000aa.seg && mkfifo 1-00000000000000bb.seg && "
        "truncate -s 1T 1-00000000000000cc.seg && cp \"$1\" 1-00000000000000dd.seg && "
        "truncate -s 1T 1-00000000000000dd.seg && ln -s \"$2\" /dev/shm/pcw-7 && "
        "echo ready && read x";
    ctr_spawn(&h, NULL, "", script, (const char *[]){seg, tu_root, NULL});
    cr_assert(tu_readline(&h, line, sizeof line, 30000) > 0);
    cr_assert_str_eq(line, "ready");

    pcw_consumer *c;
    pcw_consumer_options o = {.containers = 1};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    long long t0 = tu_now_ms();
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    static seen s;
    memset(&s, 0, sizeof s);
    s.root_pid[0] = h.pid, s.root_pid[1] = ctr_init(&h);
    cr_assert_eq(pcw_consumer_discover(c, record, &s), PCW_OK);
    cr_assert_lt(tu_now_ms() - t0, 20000);
    cr_assert_eq(status_of(&s, "/dev/shm/pcw-0/1-00000000000000aa.seg"), PCW_E_PERMISSION);
    cr_assert_eq(status_of(&s, "/dev/shm/pcw-0/1-00000000000000bb.seg"), PCW_E_PERMISSION);
    cr_assert_eq(status_of(&s, "/dev/shm/pcw-0/1-00000000000000cc.seg"), PCW_E_CORRUPT);
    cr_assert_eq(status_of(&s, "/dev/shm/pcw-0/1-00000000000000dd.seg"), PCW_OK);
    cr_assert_eq(status_of(&s, "/dev/shm/pcw-5"), PCW_E_PERMISSION);
    cr_assert_eq(status_of(&s, "/dev/shm/pcw-7"), PCW_E_PERMISSION);

    /* The host's segment: once, as the host's; the copy reads as the
     * provider's (it is one, as far as bytes go), within its size. */
    size_t host_seen = 0, copies = 0;
    for (size_t i = 0; i < pcw_consumer_segment_count(c); i++) {
        pcw_segment *x = pcw_consumer_segment(c, i);
        if (strcmp(pcw_segment_provider(x)->path, seg) == 0)
            host_seen++;
        if (strstr(pcw_segment_provider(x)->path, "1-00000000000000dd.seg")) {
            copies++;
            cr_assert_not_null(pcw_segment_container(x));
            cr_assert_eq(pcw_segment_check(x, NULL, 0), PCW_OK);
        }
        cr_assert_null(strstr(pcw_segment_provider(x)->path, "00000000000000aa"));
    }
    cr_assert_eq(host_seen, 1);
    cr_assert_eq(copies, 1);
    pcw_consumer_close(c);
    tu_finish(&h, 10000);
    tu_finish(&host, 10000);
}

/* A container whose /dev/shm is a symlink to the host's PCW_DIR: nothing
 * is found through it (RESOLVE_NO_SYMLINKS); its folder is not opened. */
Test(containers, symlinked_pcw_dir_leads_nowhere)
{
    tu_child host, h;
    char seg[PATH_MAX], line[256];
    host_provider(&host, seg, sizeof seg);
    static const char script[] = "mount -t tmpfs tmpfs /dev && ln -s \"$1\" /dev/shm && "
                                 "echo ready && read x";
    ctr_spawn(&h, NULL, "", script, (const char *[]){tu_root, NULL});
    cr_assert(tu_readline(&h, line, sizeof line, 30000) > 0);
    cr_assert_str_eq(line, "ready");
    pcw_consumer *c = open_containers();
    static seen s;
    memset(&s, 0, sizeof s);
    s.root_pid[0] = h.pid, s.root_pid[1] = ctr_init(&h);
    cr_assert_eq(pcw_consumer_discover(c, record, &s), PCW_OK);
    cr_assert_eq(s.n, 0, "found %s through a symlinked /dev/shm", s.path[0]);
    for (size_t i = 0; i < pcw_consumer_segment_count(c); i++) {
        pcw_segment *x = pcw_consumer_segment(c, i);
        if (strcmp(pcw_segment_provider(x)->path, seg) != 0)
            continue;
        cr_assert_null(pcw_segment_container(x));
    }
    pcw_consumer_close(c);
    tu_finish(&h, 10000);
    tu_finish(&host, 10000);
}

/* A PCW_DIR inside the container that leads, through a symlink in the
 * middle of the path, to a folder that exists only on the host: followed
 * from /proc/<pid>/root, an absolute symlink resolves against the
 * consumer's root. openat2 refuses it; nothing is found. */
Test(containers, symlink_inside_path_stays_inside)
{
    tu_child host, h;
    char seg[PATH_MAX], line[256];
    host_provider(&host, seg, sizeof seg);
    static const char script[] = "mount -t tmpfs tmpfs /mnt && mount -t tmpfs tmpfs /tmp && "
                                 "ln -s \"$1\" /mnt/link && echo ready && read x";
    ctr_spawn(&h, NULL, "", script, (const char *[]){tu_root, NULL});
    cr_assert(tu_readline(&h, line, sizeof line, 30000) > 0);
    cr_assert_str_eq(line, "ready");
    pcw_consumer *c;
    pcw_consumer_options o = {.containers = 1, .container_dir = "/mnt/link/."};
    cr_assert_eq(pcw_consumer_open(&c, &o), PCW_OK);
    cr_assert_eq(pcw_consumer_refresh(c, NULL), PCW_OK);
    for (size_t i = 0; i < pcw_consumer_segment_count(c); i++)
        cr_assert_null(pcw_segment_container(pcw_consumer_segment(c, i)), "%s",
                       pcw_segment_provider(pcw_consumer_segment(c, i))->path);
    pcw_consumer_close(c);
    tu_finish(&h, 10000);
    tu_finish(&host, 10000);
}

/* A listening Unix socket at path (never accepted from); its fd. */
static int trap_listener(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    cr_assert_lt(strlen(path), sizeof a.sun_path);
    strcpy(a.sun_path, path);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(fd, 8), 0);
    return fd;
}

/* The segment whose path ends with `suffix`; NULL if none. */
static pcw_segment *by_suffix(pcw_consumer *c, const char *suffix)
{
    for (size_t i = 0; i < pcw_consumer_segment_count(c); i++) {
        const char *p = pcw_segment_provider(pcw_consumer_segment(c, i))->path;
        size_t n = strlen(p), k = strlen(suffix);
        if (n >= k && strcmp(p + n - k, suffix) == 0)
            return pcw_consumer_segment(c, i);
    }
    return NULL;
}

/* Copies of a live callback provider's segment, planted in a container
 * (held alive by a read lock): one whose socket is a symlink to a socket
 * of the host, one whose socket listens and never answers. Collecting
 * from either fails within the time limit, and nothing ever connects to
 * the host's socket: the socket is opened inside the container's root
 * without following a symlink. */
Test(containers, hostile_sockets_fail_cleanly)
{
    tu_child host, h;
    char seg[PATH_MAX], trap[PATH_MAX], line[256];
    host_provider_cb(&host, seg, sizeof seg, 1);
    snprintf(trap, sizeof trap, "%s/trap.sock", tu_root);
    int tfd = trap_listener(trap);
    static const char script[] =
        "cd /dev/shm && mkdir -m 700 pcw-0 && cd pcw-0 && "
        "cp \"$1\" 1-00000000000000ee.seg && ln -s \"$2\" 1-00000000000000ee.sock && "
        "cp \"$1\" 1-00000000000000ff.seg && exec /usr/bin/python3 -c '"
        "import fcntl, socket, sys\n"
        "held = [open(n, \"rb\") for n in (\"1-00000000000000ee.seg\", "
        "\"1-00000000000000ff.seg\")]\n"
        "for f in held: fcntl.lockf(f, fcntl.LOCK_SH)\n"
        "s = socket.socket(socket.AF_UNIX); s.bind(\"1-00000000000000ff.sock\"); s.listen(8)\n"
        "print(\"ready\", flush=True); sys.stdin.read()'";
    ctr_spawn(&h, NULL, "", script, (const char *[]){seg, trap, NULL});
    cr_assert(tu_readline(&h, line, sizeof line, 30000) > 0);
    cr_assert_str_eq(line, "ready");

    pcw_consumer *c = open_containers();
    pcw_segment *planted[2] = {by_suffix(c, "/1-00000000000000ee.seg"),
                               by_suffix(c, "/1-00000000000000ff.seg")};
    for (int i = 0; i < 2; i++) {
        cr_assert_not_null(planted[i]);
        cr_assert_not_null(pcw_segment_container(planted[i]));
        cr_assert_eq(pcw_segment_alive(planted[i]), PCW_OK);
        const pcw_counterset *cs = pcw_segment_find_counterset(planted[i], "Ctr Cb");
        cr_assert_not_null(cs);
        pcw_snapshot snap = PCW_SNAPSHOT_INIT;
        long long t0 = tu_now_ms();
        int rc = pcw_segment_collect(planted[i], cs, NULL, &snap, 0, 0, 500, NULL);
        cr_assert_neq(rc, PCW_OK, "%s", pcw_segment_provider(planted[i])->path);
        cr_assert_lt(tu_now_ms() - t0, 5000);
        pcw_snapshot_free(&snap);
    }
    cr_assert_eq(accept4(tfd, NULL, NULL, SOCK_NONBLOCK), -1,
                 "a connection reached the host's socket through the container's symlink");
    cr_assert_eq(errno, EAGAIN);
    close(tfd);
    pcw_consumer_close(c);
    tu_finish(&h, 10000);
    tu_finish(&host, 10000);
}

/* ---- identity from cgroup paths ------------------------------------------ */

/* The ids the table below spells out. */
static const char c_docker[] = "d0c4e8d1a7b94f3c8e2a6b5d9c0f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a";
static const char c_cri[] = "c81d0a5b6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819";
static const char c_podman[] = "90d7a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e";
static const char c_pod[] = "5f0e6a2c-3b1d-4e8f-9a7b-1c2d3e4f5a6b";

Test(containers, cgroup_conventions)
{
    static const struct {
        const char *cgroup, *runtime, *id, *pod;
    } cases[] = {
        {"/system.slice/docker-"
         "d0c4e8d1a7b94f3c8e2a6b5d9c0f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a"
         ".scope",
         "docker", c_docker, ""},
        {"/docker/d0c4e8d1a7b94f3c8e2a6b5d9c0f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a", "docker",
         c_docker, ""},
        {"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-"
         "90d7a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e.scope/container",
         "podman", c_podman, ""},
        {"/machine.slice/libpod-conmon-"
         "90d7a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e.scope",
         "", "", ""},
        {"/kubepods.slice/kubepods-burstable.slice/"
         "kubepods-burstable-pod5f0e6a2c_3b1d_4e8f_9a7b_1c2d3e4f5a6b.slice/cri-containerd-"
         "c81d0a5b6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819.scope",
         "containerd", c_cri, c_pod},
        {"/kubepods.slice/kubepods-pod5f0e6a2c_3b1d_4e8f_9a7b_1c2d3e4f5a6b.slice/crio-"
         "c81d0a5b6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819.scope",
         "cri-o", c_cri, c_pod},
        {"/kubepods/besteffort/pod5f0e6a2c-3b1d-4e8f-9a7b-1c2d3e4f5a6b/"
         "c81d0a5b6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819",
         "", c_cri, c_pod},
        {"/../../kubepods-besteffort-pod5f0e6a2c_3b1d_4e8f_9a7b_1c2d3e4f5a6b.slice/"
         "cri-containerd-c81d0a5b6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819.scope",
         "containerd", c_cri, c_pod},
        /* A container with a delegated cgroup (its own cgroup namespace,
         * writable) may name a child cgroup after another container: the
         * outermost id, the runtime's, is the one. */
        {"/system.slice/docker-"
         "d0c4e8d1a7b94f3c8e2a6b5d9c0f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a.scope/docker-"
         "c81d0a5b6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819.scope",
         "docker", c_docker, ""},
        {"/", "", "", ""},
        {"/user.slice/user-1000.slice/session-2.scope", "", "", ""},
        {"/docker-XYZ.scope", "", "", ""},
        {"/kubepods/podnot-a-uid/x", "", "", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char rt[80], id[80], pod[80];
        pcw__cgroup_ids(cases[i].cgroup, rt, id, pod, sizeof rt);
        cr_assert_str_eq(rt, cases[i].runtime, "%s", cases[i].cgroup);
        cr_assert_str_eq(id, cases[i].id, "%s", cases[i].cgroup);
        cr_assert_str_eq(pod, cases[i].pod, "%s", cases[i].cgroup);
    }
}
