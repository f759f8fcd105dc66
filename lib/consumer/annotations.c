/* SPDX-License-Identifier: MIT */
/*
 * lib/consumer/annotations.c - a container's Kubernetes pod, namespace
 * and container name, from the OCI config.json its runtime keeps on the
 * host (docs/containers.md, "Identity"): the CRI annotations
 * io.kubernetes.pod.name, io.kubernetes.pod.namespace and
 * io.kubernetes.container.name, which containerd and CRI-O write there.
 *
 * The file is the runtime's, but the annotations' values come from the
 * pod spec, which a tenant writes: the file is opened without following a
 * symlink in its last component, must be a regular file of at most
 * PCW__CTR_CONFIG_MAX bytes, is parsed by jansson, and a value is taken
 * only if it is a string of at most PCW__CTR_K8S_NAME_MAX bytes (longer
 * than any name Kubernetes accepts). Values are not otherwise checked:
 * every output escapes them.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "containers.h"

/* Where each runtime keeps a container's config.json, below the state
 * root: dir, the container id, file. Podman (rootful) keeps its containers in
 * the same containers/storage as CRI-O. Docker keeps labels in its own
 * /var/lib/docker/containers/<id>/config.v2.json, and sets Kubernetes'
 * only under cri-dockerd: not read. */
static const struct {
    const char *runtime, *dir, *file;
} configs[] = {
    {"containerd", "/run/containerd/io.containerd.runtime.v2.task/k8s.io/", "/config.json"},
    {"cri-o", "/run/containers/storage/overlay-containers/", "/userdata/config.json"},
    {"podman", "/run/containers/storage/overlay-containers/", "/userdata/config.json"},
};

const char *pcw__ctr_state_root(void)
{
    const char *r = getenv("PCW_RUNTIME_ROOT");
    return r && r[0] == '/' ? r : "";
}

/* The file's contents, NUL-terminated, or NULL (not there, not a regular
 * file, a symlink, too big, unreadable). */
static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= PCW__CTR_CONFIG_MAX &&
        (buf = malloc(PCW__CTR_CONFIG_MAX + 1)) != NULL) {
        size_t n = 0;
        for (;;) { /* bounded even if the file grows while we read */
            ssize_t k = read(fd, buf + n, PCW__CTR_CONFIG_MAX + 1 - n);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            n += (size_t)k;
            if (n > PCW__CTR_CONFIG_MAX)
                break;
        }
        if (n > PCW__CTR_CONFIG_MAX) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = 0;
            *len = n;
        }
    }
    close(fd);
    return buf;
}

static void take(json_t *ann, const char *key, char *out)
{
    json_t *v = json_object_get(ann, key);
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    size_t n = s ? json_string_length(v) : 0;
    /* A NUL inside (JSON's \u0000) would cut the value short silently. */
    if (s && n <= PCW__CTR_K8S_NAME_MAX && strlen(s) == n)
        memcpy(out, s, n + 1);
}

void pcw__ctr_k8s_names(const char *runtime, const char *id, char *pod, char *ns, char *name)
{
    pod[0] = ns[0] = name[0] = 0;
    if (!id[0])
        return;
    for (size_t i = 0; i < sizeof configs / sizeof *configs; i++) {
        if (strcmp(runtime, configs[i].runtime) != 0)
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s%s%s%s", pcw__ctr_state_root(), configs[i].dir,
                             id, configs[i].file) >= sizeof path)
            return;
        size_t len = 0;
        char *buf = slurp(path, &len);
        if (!buf)
            return;
        json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
        free(buf);
        json_t *ann = json_object_get(root, "annotations");
        if (json_is_object(ann)) {
            take(ann, "io.kubernetes.pod.name", pod);
            take(ann, "io.kubernetes.pod.namespace", ns);
            take(ann, "io.kubernetes.container.name", name);
        }
        json_decref(root);
        return;
    }
}
