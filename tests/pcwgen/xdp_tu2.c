/* SPDX-License-Identifier: MIT */
/*
 * xdp_tu2.c - the second translation unit of test_xdp: the header
 * generated from xdppcw.man, used the way XDP's driver uses CTRPP's.
 */
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include "provider_types.h"

#include "tu2.h"
#include "xdppcw.h"

pcw_registration *xdp_tu2_rx_queue_handle(void)
{
    return XdpRxQueue;
}

int xdp_tu2_create_rx_queue(pcw_instance **inst, const char *name, uint64_t delivered)
{
    XDP_PCW_RX_QUEUE v = {.XskFramesDelivered = delivered};
    return XdpCreateRxQueue(inst, name, &v, NULL);
}
