/* SPDX-License-Identifier: MIT */
/*
 * tools/common/container.c - a provider's container (container.h).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "container.h"

const pcw_container_info *tc_container(pcw_consumer *c, uint64_t provider_id, size_t *hint)
{
    size_t n = pcw_consumer_segment_count(c);
    for (size_t k = 0; k < n; k++) {
        size_t i = (*hint + k) % n;
        pcw_segment *s = pcw_consumer_segment(c, i);
        if (pcw_segment_provider(s)->provider_id == provider_id) {
            *hint = i;
            return pcw_segment_container(s);
        }
    }
    return NULL;
}

void tc_container_name(const pcw_container_info *ci, char *buf, size_t cap)
{
    if (!ci)
        snprintf(buf, cap, "%s", "");
    else if (ci->id[0])
        snprintf(buf, cap, "%.12s", ci->id);
    else
        snprintf(buf, cap, "ns:%llu", (unsigned long long)ci->mnt_ns);
}

int tc_name_match(const char *name, const char *sel)
{
    if (strcmp(sel, "host") == 0)
        return !*name;
    size_t n = strlen(sel);
    if (!*name || !n)
        return 0;
    return strcasecmp(name, sel) == 0 || strncasecmp(name, sel, n < 12 ? n : 12) == 0;
}
