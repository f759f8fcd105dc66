/* SPDX-License-Identifier: MIT */
/*
 * lib/query/container.c - paths that select a container's providers
 * ("\\<container>\Set(inst)\Counter", docs/containers.md, "Paths"): the
 * host part resolved, when the path is added, to one container among the
 * consumer's providers, and its instances told from the others'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "container.h"
#include "fetch.h"
#include "path.h"
#include "pcw/consumer.h"

/* Does container ci match the name (12 to 64 hex digits, a prefix of its
 * id, case-insensitively; or "ns:<inode>")? */
static int name_matches(const pcw_container_info *ci, const char *name)
{
    if (strncmp(name, "ns:", 3) == 0)
        return !ci->id[0] && strtoull(name + 3, NULL, 10) == ci->mnt_ns;
    return strncasecmp(ci->id, name, strlen(name)) == 0;
}

int pcw__q_container_resolve(pcw_pdh *q, pcw_pdh_counter *h, pcw_path_error *err)
{
    const char *name = h->path.container;
    const pcw_container_info *found = NULL;
    size_t n = pcw_consumer_segment_count(q->c);
    for (size_t i = 0; i < n; i++) {
        const pcw_container_info *ci = pcw_segment_container(pcw_consumer_segment(q->c, i));
        if (!ci || !name_matches(ci, name))
            continue;
        if (found && (ci->id[0] ? strcmp(ci->id, found->id) != 0 : ci->mnt_ns != found->mnt_ns))
            /* Ids are hex: nothing to escape. */
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_HOST, 2,
                               "container \"%s\" is ambiguous: %.64s and %.64s both begin so "
                               "(give more digits of its id)",
                               name, found->id, ci->id);
        found = ci;
    }
    if (!found)
        return pcw__q_fail(err, PCW_E_NOT_FOUND, PCW_PATH_HOST, 2,
                           "no provider in container \"%s\" (containers are looked into only with "
                           "the containers option, --containers, and with the privilege to)",
                           name);
    snprintf(h->ctr_id, sizeof h->ctr_id, "%s", found->id);
    h->ctr_ns = found->mnt_ns;
    return PCW_OK;
}

int pcw__q_in_container(const pcw_pdh_counter *h, uint64_t provider_id, size_t *hint)
{
    pcw_consumer *c = h->q->c;
    size_t n = pcw_consumer_segment_count(c);
    for (size_t k = 0; k < n; k++) {
        size_t i = (*hint + k) % n;
        pcw_segment *s = pcw_consumer_segment(c, i);
        if (pcw__q_provider_id(pcw_segment_provider(s)) != provider_id)
            continue;
        *hint = i;
        const pcw_container_info *ci = pcw_segment_container(s);
        if (!ci)
            return 0;
        return h->ctr_id[0] ? strcmp(ci->id, h->ctr_id) == 0 : ci->mnt_ns == h->ctr_ns;
    }
    return 0;
}
