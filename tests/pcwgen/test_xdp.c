/* SPDX-License-Identifier: MIT */
/*
 * test_xdp.c - a provider built on the header pcwgen generates from
 * microsoft/xdp-for-windows' xdppcw.man, compiled unchanged (the file in
 * ../shared/manifests when present, else the stand-in of the same structure
 * in tests/pcwgen/manifests). Its counters give field= without struct=:
 * each counterset has one <struct>, which they all use. Every counterset
 * registers, and what is stored through the generated accessors is what a
 * consumer reads, at each field's offset in the provider's own struct.
 *
 * Only what both manifests share is asserted literally (symbols, structs,
 * fields, ids, types, attributes); names and descriptions come from the
 * generated InitRegistrationInformation functions.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include <criterion/criterion.h>

#include "provider_types.h"

#include "pcw/consumer.h"
#include "pcwgen_test.h"
#include "tu2.h"
#include "xdppcw.h"

static pcw_provider *prov;

static void setup(void)
{
    pcwgen_testdir_setup();
    pcw_provider_options o = XdpXDP_ProviderOptions();
    cr_assert_eq(pcw_provider_open(&prov, &o), PCW_OK);
}

static void teardown(void)
{
    XdpCounterCleanup();
    pcw_provider_close(prov);
    prov = NULL;
    pcwgen_testdir_teardown();
}

TestSuite(xdp, .init = setup, .fini = teardown);

/* One counterset of the manifest: its generated Init function, its struct
 * and, by counter id (1, 2, ...), the offset of the field each names. */
typedef struct xdp_set {
    const char *symbol;
    void (*init)(pcw_callback, void *, pcw_registration_info *);
    size_t struct_size;
    size_t nfields;
    size_t offsets[10];
} xdp_set;

#define OFF(T, f) offsetof(T, f)
static const xdp_set sets[] = {
    {"RxQueue",
     XdpInitRegistrationInformationRxQueue,
     sizeof(XDP_PCW_RX_QUEUE),
     10,
     {OFF(XDP_PCW_RX_QUEUE, XskFramesDelivered), OFF(XDP_PCW_RX_QUEUE, XskFramesDropped),
      OFF(XDP_PCW_RX_QUEUE, XskInvalidDescriptors), OFF(XDP_PCW_RX_QUEUE, XskFramesTruncated),
      OFF(XDP_PCW_RX_QUEUE, InspectFramesPassed), OFF(XDP_PCW_RX_QUEUE, InspectFramesDropped),
      OFF(XDP_PCW_RX_QUEUE, InspectFramesRedirected), OFF(XDP_PCW_RX_QUEUE, InspectFramesForwarded),
      OFF(XDP_PCW_RX_QUEUE, InspectBatches), OFF(XDP_PCW_RX_QUEUE, InspectFramesDiscontiguous)}},
    {"LwfRxQueue",
     XdpInitRegistrationInformationLwfRxQueue,
     sizeof(XDP_PCW_LWF_RX_QUEUE),
     7,
     {OFF(XDP_PCW_LWF_RX_QUEUE, MappingFailures), OFF(XDP_PCW_LWF_RX_QUEUE, LinearizationFailures),
      OFF(XDP_PCW_LWF_RX_QUEUE, ForwardingFailuresAllocation),
      OFF(XDP_PCW_LWF_RX_QUEUE, ForwardingFailuresAllocationLimit),
      OFF(XDP_PCW_LWF_RX_QUEUE, ForwardingFailuresRscInvalidHeaders),
      OFF(XDP_PCW_LWF_RX_QUEUE, ForwardingNbsRequested),
      OFF(XDP_PCW_LWF_RX_QUEUE, ForwardingNbsSent)}},
    {"TxQueue",
     XdpInitRegistrationInformationTxQueue,
     sizeof(XDP_PCW_TX_QUEUE),
     3,
     {OFF(XDP_PCW_TX_QUEUE, XskInvalidDescriptors), OFF(XDP_PCW_TX_QUEUE, InjectionBatches),
      OFF(XDP_PCW_TX_QUEUE, QueueDepth)}},
    {"LwfTxQueue",
     XdpInitRegistrationInformationLwfTxQueue,
     sizeof(XDP_PCW_LWF_TX_QUEUE),
     2,
     {OFF(XDP_PCW_LWF_TX_QUEUE, FramesDroppedPause), OFF(XDP_PCW_LWF_TX_QUEUE, FramesDroppedNic)}},
};
#define NSETS (sizeof sets / sizeof sets[0])

Test(xdp, provider_attributes)
{
    cr_assert_str_eq(XdpXDP_PROVIDER_NAME, "XDP");
    cr_assert_str_eq(XdpXDP_PROVIDER_TYPE, "kernelMode");
    cr_assert_str_eq(XdpXDP_PROVIDER_CALLBACK, "custom"); /* written callback = "custom" */
    cr_assert_str_eq(XdpXDP_APPLICATION_IDENTITY, "xdp.sys");
    cr_assert_null(XdpXDP_PROVIDER_SYMBOL);
}

/* field= alone lands in the only struct: block 0, offsetof the field in
 * the provider's type, the field's size (UINT64 under a DWORD type). */
Test(xdp, fields_without_struct_use_the_only_struct)
{
    for (size_t i = 0; i < NSETS; i++) {
        const xdp_set *x = &sets[i];
        pcw_registration_info info;
        x->init(NULL, NULL, &info);
        cr_assert_str_eq(info.symbol, x->symbol);
        cr_assert_eq(info.instance_type, PCW_MULTI_AGGREGATE, "%s", x->symbol);
        cr_assert_str_eq(info.provider_name, "XDP");
        cr_assert_eq(info.block_count, 1, "%s", x->symbol);
        cr_assert_eq(info.block_sizes[0], x->struct_size, "%s", x->symbol);
        cr_assert_eq(info.counter_count, x->nfields, "%s", x->symbol);
        for (uint32_t k = 0; k < info.counter_count; k++) {
            const pcw_counter_desc *c = &info.counters[k];
            cr_assert_eq(c->id, k + 1, "%s counter %u", x->symbol, k);
            cr_assert_eq(c->block, 0);
            cr_assert_eq(c->offset, x->offsets[k], "%s counter %u", x->symbol, c->id);
            cr_assert_eq(c->size, 8, "%s counter %u", x->symbol, c->id);
            cr_assert_eq(c->type, PERF_COUNTER_RAWCOUNT);
            cr_assert_eq(c->aggregate, PCW_AGGREGATE_TOTAL);
            cr_assert_eq(c->default_scale, 1);
            cr_assert_eq(c->detail_level, PCW_DETAIL_STANDARD);
            cr_assert_not_null(c->name);
        }
    }
}

/* Every counterset registers; values stored through the typed accessors
 * (from both translation units) are what a consumer reads back. */
Test(xdp, every_counterset_registers_and_publishes)
{
    cr_assert_eq(XdpCounterInitialize(prov, NULL, NULL), PCW_OK);
    cr_assert_not_null(XdpRxQueue);
    cr_assert_not_null(XdpLwfRxQueue);
    cr_assert_not_null(XdpTxQueue);
    cr_assert_not_null(XdpLwfTxQueue);
    cr_assert_eq(xdp_tu2_rx_queue_handle(), XdpRxQueue, "one handle across translation units");

    pcw_instance *rx, *lrx, *tx, *ltx;
    cr_assert_eq(xdp_tu2_create_rx_queue(&rx, "IfIndex 4 Queue 0", 11), PCW_OK);
    XDP_PCW_LWF_RX_QUEUE lrx0 = {.ForwardingNbsSent = 5};
    cr_assert_eq(XdpCreateLwfRxQueue(&lrx, "IfIndex 4 Queue 0", &lrx0, NULL), PCW_OK);
    cr_assert_eq(XdpCreateTxQueue(&tx, "IfIndex 4 Queue 0", NULL, NULL), PCW_OK);
    cr_assert_eq(XdpCreateLwfTxQueue(&ltx, "IfIndex 4 Queue 0", NULL, NULL), PCW_OK);
    /* The driver's STAT_INC, through the segment pointers. */
    XdpRxQueue__XdpPcwRxQueue_of(rx)->InspectFramesDiscontiguous = 3;
    pcw_u64_add(&XdpRxQueue__XdpPcwRxQueue_of(rx)->XskFramesDelivered, 1);
    XdpLwfRxQueue__XdpPcwLwfRxQueue_of(lrx)->MappingFailures = 2;
    XdpTxQueue__XdpPcwTxQueue_of(tx)->QueueDepth = 64;
    XdpLwfTxQueue__XdpPcwLwfTxQueue_of(ltx)->FramesDroppedNic = 9;

    /* What each counter (by id) should read: 0 unless set above. */
    static const struct {
        size_t set;
        uint32_t id;
        uint64_t value;
    } want[] = {{0, 1, 12}, {0, 10, 3}, {1, 1, 2}, {1, 7, 5}, {2, 3, 64}, {3, 2, 9}};

    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    cr_assert_eq(pcw_segment_counterset_count(seg), NSETS);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    for (size_t i = 0; i < NSETS; i++) {
        pcw_registration_info info;
        sets[i].init(NULL, NULL, &info);
        const pcw_counterset *cs = pcw_segment_find_counterset(seg, info.name);
        cr_assert_not_null(cs, "%s", info.name);
        cr_assert_eq(cs->instance_type, PCW_MULTI_AGGREGATE);
        cr_assert_str_eq(cs->provider_callback, "custom");
        cr_assert_eq(cs->counter_count, sets[i].nfields);
        cr_assert_eq(pcw_segment_read(seg, cs, &snap, 0), PCW_OK);
        cr_assert_eq(snap.count, 1, "%s", info.name);
        cr_assert_str_eq(pcw_snapshot_name(&snap, 0), "IfIndex 4 Queue 0");
        for (uint32_t k = 0; k < cs->counter_count; k++) {
            uint64_t expect = 0;
            for (size_t w = 0; w < sizeof want / sizeof want[0]; w++)
                if (want[w].set == i && want[w].id == cs->counters[k].id)
                    expect = want[w].value;
            cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[k]), expect,
                         "%s counter %u", info.name, cs->counters[k].id);
        }
    }
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    XdpCloseRxQueue(rx);
    XdpCloseLwfRxQueue(lrx);
    XdpCloseTxQueue(tx);
    XdpCloseLwfTxQueue(ltx);
}
