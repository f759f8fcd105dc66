/* SPDX-License-Identifier: MIT */
/*
 * extra_tu2.c - the second translation unit of test_extra: includes the
 * three headers generated from tests/pcwgen/manifests (storage, netstack, service) together.
 */
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include "provider_types.h"

#include "netstack.h"
#include "service.h"
#include "storage.h"
#include "tu2.h"

pcw_registration *extra_tu2_adapter_handle(void)
{
    return NetNetAdapter;
}

int extra_tu2_initialize_all(pcw_provider *prov)
{
    int rc = StorCounterInitialize(prov, NULL, NULL);
    if (rc == PCW_OK)
        rc = NetCounterInitialize(prov, NULL, NULL);
    if (rc == PCW_OK)
        rc = SvcCounterInitialize(prov, NULL, NULL);
    return rc;
}

void extra_tu2_cleanup_all(void)
{
    SvcCounterCleanup();
    NetCounterCleanup();
    StorCounterCleanup();
}

/* which: 0 no blocks, 1 traffic only, 2 both. */
int extra_tu2_add_adapter(pcw_buffer *buffer, const char *name, uint32_t id, int which)
{
    static NET_TRAFFIC_COUNTERS t = {.BytesReceived = 1};
    static NET_ERROR_COUNTERS e = {.ReceiveErrors = 2};
    return NetAddNetAdapter(buffer, name, id, which >= 1 ? &t : NULL, which >= 2 ? &e : NULL);
}
