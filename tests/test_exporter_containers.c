/* SPDX-License-Identifier: MIT */
/*
 * tests/test_exporter_containers.c - pcw-exporter --collector.containers
 * (docs/containers.md): one host exporter serves the providers of three
 * containers (real mount + pid namespaces, one in a user namespace), each
 * series labelled with its container_id, pod_uid and host_pid; the output
 * passes promtool; a container that goes away takes its series with it;
 * without the flag none of them is served. Needs root and promtool.
 */
#define _GNU_SOURCE 1
#include <criterion/criterion.h>
#include <sys/wait.h>

#include "testutil.h"
#include "ctr_util.h"
#include "helpers/exporter_test.h"

static void setup(void)
{
    ctr_setup();
}

static void teardown(void)
{
    ctr_teardown();
}

TestSuite(exporter_containers, .init = setup, .fini = teardown, .timeout = 90);

/* The host pid of the container's provider: the unshare's only child. */
static int provider_pid(const tu_child *c)
{
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)c->pid, (int)c->pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    return atoi(buf);
}

static void scrape(const exporter *e, http_resp *r)
{
    cr_assert_eq(http_get(e->port, "/metrics", NULL, r), 200);
}

static void promtool_ok(const http_resp *r)
{
    char f[400], out[400];
    ex_path(f, sizeof f, "metrics.txt");
    cr_assert_eq(tu_write_file(f, r->body, r->body_len, 0600), 0);
    ex_path(out, sizeof out, "promtool.out");
    int rc = ex_sh("promtool check metrics < %s > %s 2>&1", f, out);
    char *msg = ex_slurp(out, NULL);
    cr_assert_eq(rc, 0, "promtool check metrics: %s", msg ? msg : "?");
    free(msg);
}

/* The series of the "Ctr Test" Index counter of instance `inst` with
 * these labels after provider="top_provider",pid="1". */
static const char *series(const http_resp *r, const char *inst, const char *labels)
{
    static char want[2048];
    snprintf(want, sizeof want,
             "pcw_ctr_test_index{instance_name=\"%s\",provider=\"top_provider\",pid=\"1\"%s}", inst,
             labels);
    return strstr(r->body, want) ? want : NULL;
}

Test(exporter_containers, three_containers_labelled_and_gone_on_exit)
{
    char cg1[PATH_MAX], cg2[PATH_MAX], cg3[PATH_MAX], rel[512];
    snprintf(rel, sizeof rel, "system.slice/docker-%s.scope", id_docker);
    make_cgroup(rel, cg1, sizeof cg1);
    snprintf(rel, sizeof rel,
             "kubepods.slice/kubepods-besteffort.slice/"
             "kubepods-besteffort-pod%.8s_3b1d_4e8f_9a7b_1c2d3e4f5a6b.slice/crio-%s.scope",
             pod_uid, id_cri);
    make_cgroup(rel, cg2, sizeof cg2);
    snprintf(rel, sizeof rel, "user.slice/libpod-%s.scope", id_podman);
    make_cgroup(rel, cg3, sizeof cg3);
    tu_child a, b, u;
    ctr_provider(&a, cg1, "", "1");
    ctr_provider(&b, cg2, "", "2");
    ctr_provider(&u, cg3, "--user --map-root-user", "1");

    exporter e;
    ex_start(&e,
             (const char *[]){"--collector.containers", "--collector.counterset=Ctr Test", NULL});
    http_resp r;
    scrape(&e, &r);
    char lab[512];
    snprintf(lab, sizeof lab, ",container_id=\"docker://%s\",host_pid=\"%d\"", id_docker,
             provider_pid(&a));
    cr_assert_not_null(series(&r, "inst-000000", lab), "no %s in\n%s", lab, r.body);
    snprintf(lab, sizeof lab, ",container_id=\"cri-o://%s\",pod_uid=\"%s\",host_pid=\"%d\"", id_cri,
             pod_uid, provider_pid(&b));
    cr_assert_not_null(series(&r, "inst-000001", lab), "no %s in\n%s", lab, r.body);
    snprintf(lab, sizeof lab, ",container_id=\"podman://%s\",host_pid=\"%d\"", id_podman,
             provider_pid(&u));
    cr_assert_not_null(series(&r, "inst-000000", lab), "no %s in\n%s", lab, r.body);
    promtool_ok(&r);
    http_free(&r);

    /* The docker one goes (killed: its segment stays in its tmpfs): its
     * series go with it at the next scrape. */
    kill(provider_pid(&a), SIGKILL);
    tu_finish(&a, 10000);
    scrape(&e, &r);
    cr_assert_null(strstr(r.body, id_docker), "%s", r.body);
    cr_assert_not_null(strstr(r.body, id_cri));
    promtool_ok(&r);
    http_free(&r);
    ex_stop(&e);
    tu_finish(&b, 10000);
    tu_finish(&u, 10000);
}

Test(exporter_containers, off_without_the_flag)
{
    tu_child a;
    ctr_provider(&a, NULL, "", "1");
    exporter e;
    ex_start(&e, (const char *[]){"--collector.all-users", NULL});
    http_resp r;
    scrape(&e, &r);
    cr_assert_null(strstr(r.body, "pcw_ctr_test"), "%s", r.body);
    http_free(&r);
    ex_stop(&e);
    tu_finish(&a, 10000);
}

/* The series of "Callback Test" counter A of instance `inst` of
 * callback_provider with these labels after pid="1", and its value. */
static const char *cb_series(const http_resp *r, const char *inst, const char *labels)
{
    static char want[1024];
    snprintf(
        want, sizeof want,
        "pcw_callback_test_a{instance_name=\"%s\",provider=\"callback_provider\",pid=\"1\"%s} ",
        inst, labels);
    const char *at = strstr(r->body, want);
    return at ? at + strlen(want) : NULL;
}

/* The acceptance test of issue 29: callback countersets (served over each
 * provider's control socket, collected across its mount and pid
 * namespaces) of three containers, one of them in a user namespace, with
 * their container labels; promtool passes. */
Test(exporter_containers, callback_countersets_of_three_containers)
{
    char cg1[PATH_MAX], cg2[PATH_MAX], cg3[PATH_MAX], rel[512];
    snprintf(rel, sizeof rel, "system.slice/docker-%s.scope", id_docker);
    make_cgroup(rel, cg1, sizeof cg1);
    snprintf(rel, sizeof rel,
             "kubepods.slice/kubepods-besteffort.slice/"
             "kubepods-besteffort-pod%.8s_3b1d_4e8f_9a7b_1c2d3e4f5a6b.slice/crio-%s.scope",
             pod_uid, id_cri);
    make_cgroup(rel, cg2, sizeof cg2);
    snprintf(rel, sizeof rel, "user.slice/libpod-%s.scope", id_podman);
    make_cgroup(rel, cg3, sizeof cg3);
    tu_child a, b, u;
    ctr_callback_provider(&a, cg1, "", "d");
    ctr_callback_provider(&b, cg2, "", "k");
    ctr_callback_provider(&u, cg3, "--user --map-root-user", "p");

    exporter e;
    ex_start(&e, (const char *[]){"--collector.containers", "--collector.counterset=Callback Test",
                                  NULL});
    http_resp r;
    scrape(&e, &r);
    char lab[512];
    snprintf(lab, sizeof lab, ",container_id=\"docker://%s\",host_pid=\"%d\"", id_docker,
             provider_pid(&a));
    const char *v = cb_series(&r, "d-1", lab);
    cr_assert(v && strncmp(v, "200\n", 4) == 0, "no %s = 200 in\n%s", lab, r.body);
    snprintf(lab, sizeof lab, ",container_id=\"cri-o://%s\",pod_uid=\"%s\",host_pid=\"%d\"", id_cri,
             pod_uid, provider_pid(&b));
    v = cb_series(&r, "k-2", lab);
    cr_assert(v && strncmp(v, "300\n", 4) == 0, "no %s = 300 in\n%s", lab, r.body);
    snprintf(lab, sizeof lab, ",container_id=\"podman://%s\",host_pid=\"%d\"", id_podman,
             provider_pid(&u));
    v = cb_series(&r, "p-0", lab);
    cr_assert(v && strncmp(v, "100\n", 4) == 0, "no %s = 100 in\n%s", lab, r.body);
    cr_assert_null(strstr(r.body, "pcw_exporter_errors_total{cause=\"provider\"} 1"), "%s", r.body);
    promtool_ok(&r);
    http_free(&r);
    ex_stop(&e);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
    tu_finish(&u, 10000);
}

/* Kubernetes' pod, namespace and container names (docs/containers.md,
 * "Identity"), from the CRI annotations of the config.json containerd
 * and CRI-O keep (a fake state root, PCW_RUNTIME_ROOT): labelled as
 * cAdvisor labels them. The CRI-O pod's author is hostile: a pod name
 * with a quote, a newline and a backslash comes out escaped, a namespace
 * longer than Kubernetes allows is dropped, and a podman config.json that
 * is a symlink (to a file with annotations) is not followed. promtool
 * passes. */
Test(exporter_containers, kubernetes_names_from_the_runtimes_config)
{
    char cg1[PATH_MAX], cg2[PATH_MAX], cg3[PATH_MAX], rel[512], id_ctrd[65];
    snprintf(id_ctrd, sizeof id_ctrd, "%.8s%s", id_docker,
             "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4");
    snprintf(rel, sizeof rel,
             "kubepods.slice/kubepods-burstable.slice/"
             "kubepods-burstable-pod%.8s_3b1d_4e8f_9a7b_1c2d3e4f5a6b.slice/"
             "cri-containerd-%s.scope",
             pod_uid, id_ctrd);
    make_cgroup(rel, cg1, sizeof cg1);
    snprintf(rel, sizeof rel,
             "kubepods.slice/kubepods-besteffort.slice/"
             "kubepods-besteffort-pod%.8s_3b1d_4e8f_9a7b_1c2d3e4f5a6b.slice/crio-%s.scope",
             pod_uid, id_cri);
    make_cgroup(rel, cg2, sizeof cg2);
    snprintf(rel, sizeof rel, "user.slice/libpod-%s.scope", id_podman);
    make_cgroup(rel, cg3, sizeof cg3);

    char state[PATH_MAX], path[PATH_MAX + 200], huge[400], json[1024];
    snprintf(state, sizeof state, "%s/state", tu_root);
    snprintf(path, sizeof path,
             "%s/run/containerd/io.containerd.runtime.v2.task/k8s.io/%s/config.json", state,
             id_ctrd);
    ctr_write_file(path, "{\"ociVersion\":\"1.0.2\",\"annotations\":{"
                         "\"io.kubernetes.cri.container-type\":\"container\","
                         "\"io.kubernetes.pod.name\":\"web-0\","
                         "\"io.kubernetes.pod.namespace\":\"shop\","
                         "\"io.kubernetes.container.name\":\"app\"}}");
    memset(huge, 'n', 300);
    huge[300] = 0;
    snprintf(path, sizeof path,
             "%s/run/containers/storage/overlay-containers/%s/userdata/config.json", state, id_cri);
    snprintf(json, sizeof json,
             "{\"annotations\":{\"io.kubernetes.pod.name\":\"evil\\\"pod\\nx\\\\y\","
             "\"io.kubernetes.pod.namespace\":\"%s\",\"io.kubernetes.container.name\":\"c\"}}",
             huge);
    ctr_write_file(path, json);
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s/elsewhere.json", tu_root);
    ctr_write_file(target, "{\"annotations\":{\"io.kubernetes.pod.name\":\"followed\"}}");
    snprintf(path, sizeof path,
             "%s/run/containers/storage/overlay-containers/%s/userdata/config.json", state,
             id_podman);
    ctr_write_file(path, "{}");
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(symlink(target, path), 0);
    cr_assert_eq(setenv("PCW_RUNTIME_ROOT", state, 1), 0);

    tu_child a, b, u;
    ctr_provider(&a, cg1, "", "1");
    ctr_provider(&b, cg2, "", "2");
    ctr_provider(&u, cg3, "", "1");
    exporter e;
    ex_start(&e,
             (const char *[]){"--collector.containers", "--collector.counterset=Ctr Test", NULL});
    http_resp r;
    scrape(&e, &r);
    char lab[1024];
    snprintf(lab, sizeof lab,
             ",container_id=\"containerd://%s\",pod_uid=\"%s\",namespace=\"shop\",pod=\"web-0\","
             "container=\"app\",host_pid=\"%d\"",
             id_ctrd, pod_uid, provider_pid(&a));
    cr_assert_not_null(series(&r, "inst-000000", lab), "no %s in\n%s", lab, r.body);
    snprintf(lab, sizeof lab,
             ",container_id=\"cri-o://%s\",pod_uid=\"%s\",pod=\"evil\\\"pod\\nx\\\\y\","
             "container=\"c\",host_pid=\"%d\"",
             id_cri, pod_uid, provider_pid(&b));
    cr_assert_not_null(series(&r, "inst-000001", lab), "no %s in\n%s", lab, r.body);
    snprintf(lab, sizeof lab, ",container_id=\"podman://%s\",host_pid=\"%d\"", id_podman,
             provider_pid(&u));
    cr_assert_not_null(series(&r, "inst-000000", lab), "no %s in\n%s", lab, r.body);
    cr_assert_null(strstr(r.body, "followed"), "%s", r.body);
    cr_assert_null(strstr(r.body, "nnnnnnnn"), "%s", r.body);
    promtool_ok(&r);
    http_free(&r);
    ex_stop(&e);
    tu_finish(&a, 10000);
    tu_finish(&b, 10000);
    tu_finish(&u, 10000);
}
