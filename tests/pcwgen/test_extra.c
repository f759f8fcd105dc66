/* SPDX-License-Identifier: MIT */
/*
 * test_extra.c - providers built on headers generated from pcwgen's own
 * test manifests (tests/pcwgen/manifests): schema 2.0 with a BOM,
 * globalAggregate, average timer/base pairs, kernel style with two
 * structs, a whole event manifest with two providers, every form of
 * counterSet@instances. Between them they use every counter type, and
 * each must register.
 */

/* The provider implementation (pcw/provider.h): this file is the one of
 * its program that compiles it. */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include <criterion/criterion.h>

#include "provider_types.h"

#include "instances.h"
#include "pcw/collect.h"
#include "netstack.h"
#include "pcwgen_test.h"
#include "service.h"
#include "storage.h"
#include "tu2.h"

static pcw_provider *prov;

static void setup(void)
{
    pcwgen_testdir_setup();
    pcw_provider_options o = StorContosoStorageProvider_ProviderOptions();
    cr_assert_eq(pcw_provider_open(&prov, &o), PCW_OK);
}

static void teardown(void)
{
    FormsCounterCleanup();
    extra_tu2_cleanup_all();
    pcw_provider_close(prov);
    pcwgen_testdir_teardown();
}

TestSuite(extra, .init = setup, .fini = teardown);

static const pcw_counter_desc *by_id(const pcw_registration_info *info, uint32_t id)
{
    for (uint32_t i = 0; i < info->counter_count; i++)
        if (info->counters[i].id == id)
            return &info->counters[i];
    cr_assert_fail("no counter %u", id);
    return NULL;
}

Test(extra, storage_global_aggregate_and_average_pairs)
{
    pcw_registration_info info;
    StorInitRegistrationInformationContosoDisk(NULL, NULL, &info);
    cr_assert_str_eq(info.name, "Contoso Disk");
    cr_assert_eq(info.instance_type, PCW_GLOBAL_AGGREGATE);
    cr_assert_eq(info.counter_count, 9);
    cr_assert_str_eq(by_id(&info, 1)->symbol, "DiskReadsPerSec");
    cr_assert_eq(StorContosoDisk_DiskReadsPerSec_ID, 1);
    cr_assert_eq(by_id(&info, 1)->aggregate, PCW_AGGREGATE_TOTAL);
    cr_assert_eq(by_id(&info, 2)->type, PERF_COUNTER_BULK_COUNT);
    cr_assert_eq(by_id(&info, 2)->size, 8);
    cr_assert_eq(by_id(&info, 2)->default_scale, -4);
    cr_assert_eq(by_id(&info, 2)->attributes, PCW_ATTR_NO_DIGIT_GROUPING);
    /* No baseID: the base is the counter right after. */
    cr_assert_eq(by_id(&info, 3)->type, PERF_AVERAGE_TIMER);
    cr_assert_eq(by_id(&info, 3)->base_ref, PCW_REF(4));
    /* A 32-bit tick type without perfFreqID is 8 bytes (issue 27: 4 would
     * wrap after 4.3 s of nanoseconds, and pcw_register refuses it). */
    cr_assert_eq(by_id(&info, 3)->size, 8);
    cr_assert_eq(by_id(&info, 3)->default_scale, 3);
    cr_assert_eq(by_id(&info, 4)->type, PERF_AVERAGE_BASE);
    cr_assert_eq(by_id(&info, 4)->detail_level, PCW_DETAIL_ADVANCED);
    cr_assert_eq(by_id(&info, 4)->attributes, PCW_ATTR_NO_DISPLAY);
    cr_assert_null(by_id(&info, 4)->description);
    cr_assert_eq(by_id(&info, 5)->base_ref, PCW_REF(6));
    cr_assert_eq(by_id(&info, 5)->size, 8); /* perf_average_bulk is LARGE */
    cr_assert_eq(by_id(&info, 7)->aggregate, PCW_AGGREGATE_MAX);
    cr_assert_eq(by_id(&info, 8)->aggregate, PCW_AGGREGATE_MIN);
    cr_assert_eq(by_id(&info, 8)->type, PERF_100NSEC_TIMER_INV);
    cr_assert_eq(by_id(&info, 9)->attributes, PCW_ATTR_DISPLAY_AS_HEX | PCW_ATTR_REFERENCE);
    cr_assert_eq(by_id(&info, 9)->aggregate, PCW_AGGREGATE_UNDEFINED);

    StorInitRegistrationInformationContosoVolume(NULL, NULL, &info);
    cr_assert_eq(info.instance_type, PCW_MULTI_INSTANCE);
    cr_assert_eq(by_id(&info, 1)->base_ref, PCW_REF(3)); /* explicit baseID */
    cr_assert_eq(by_id(&info, 2)->attributes, PCW_ATTR_DISPLAY_AS_REAL);
    cr_assert_eq(by_id(&info, 2)->default_scale, -6);
    cr_assert_eq(by_id(&info, 4)->base_ref, PCW_REF(5));
    cr_assert_eq(by_id(&info, 4)->type, PERF_SAMPLE_FRACTION);
}

Test(extra, netstack_two_structs)
{
    pcw_registration_info info;
    NetInitRegistrationInformationNetAdapter(NULL, NULL, &info);
    cr_assert_eq(info.instance_type, PCW_MULTI_AGGREGATE);
    cr_assert_eq(info.block_count, 2);
    cr_assert_eq(info.block_sizes[0], sizeof(NET_TRAFFIC_COUNTERS));
    cr_assert_eq(info.block_sizes[1], sizeof(NET_ERROR_COUNTERS));
    const pcw_counter_desc *c = by_id(&info, 3);
    cr_assert_eq(c->block, 0);
    cr_assert_eq(c->offset, offsetof(NET_TRAFFIC_COUNTERS, PacketsReceived));
    cr_assert_eq(c->size, 4);
    c = by_id(&info, 11);
    cr_assert_eq(c->block, 1);
    cr_assert_eq(c->offset, offsetof(NET_ERROR_COUNTERS, TransmitErrors));
    cr_assert_eq(c->size, 8);
    cr_assert_eq(c->detail_level, PCW_DETAIL_ADVANCED);
    cr_assert_eq(by_id(&info, 20)->base_ref, PCW_REF(21));
    cr_assert_eq(by_id(&info, 20)->type, PERF_100NSEC_MULTI_TIMER);
    cr_assert_eq(by_id(&info, 21)->type, PERF_COUNTER_MULTI_BASE);
    cr_assert_eq(NetNetAdapter_DpcProcessorCount_ID, 21);

    /* No symbol: the C name comes from the counterset's name. */
    NetInitRegistrationInformationContosoNetworkUptime(NULL, NULL, &info);
    cr_assert_null(info.symbol);
    cr_assert_eq(info.instance_type, PCW_GLOBAL_AGGREGATE_HISTORY);
    cr_assert_eq(by_id(&info, 1)->type, PERF_ELAPSED_TIME);
    cr_assert_eq(by_id(&info, 1)->perf_time_ref, PCW_REF(2));
    cr_assert_eq(by_id(&info, 1)->perf_freq_ref, PCW_REF(3));
    cr_assert_eq(by_id(&info, 4)->type, PERF_COUNTER_DELTA);
    cr_assert_eq(by_id(&info, 4)->offset, offsetof(struct net_uptime, Resets));
}

Test(extra, service_two_providers_every_type)
{
    cr_assert_str_eq(SvcContosoServiceProvider_PROVIDER_NAME, "ContosoService");
    cr_assert_str_eq(SvcContosoServiceHost_PROVIDER_NAME, "Contoso Service Host");
    cr_assert_null(SvcContosoServiceHost_PROVIDER_CALLBACK);

    pcw_registration_info info;
    SvcInitRegistrationInformationServiceRequests(NULL, NULL, &info);
    cr_assert_eq(by_id(&info, 2)->base_ref, PCW_REF(3));
    cr_assert_eq(by_id(&info, 4)->type, PERF_PRECISION_100NS_TIMER);
    cr_assert_eq(by_id(&info, 4)->base_ref, PCW_REF(5)); /* its timestamp follows */
    cr_assert_eq(by_id(&info, 7)->perf_time_ref, PCW_REF(8));
    cr_assert_eq(by_id(&info, 7)->perf_freq_ref, PCW_REF(9));
    cr_assert_eq(by_id(&info, 15)->perf_time_ref, PCW_REF(8));
    cr_assert_eq(by_id(&info, 12)->type, PERF_COUNTER_HISTOGRAM_TYPE);
    cr_assert_eq(by_id(&info, 12)->size, 4);

    SvcInitRegistrationInformationServiceHost(NULL, NULL, &info);
    cr_assert_eq(info.instance_type, PCW_SINGLE_INSTANCE); /* the default */
    cr_assert_eq(by_id(&info, 4)->base_ref, 0);            /* precision, none follows */
    cr_assert_eq(by_id(&info, 5)->perf_freq_ref, PCW_REF(6));
    cr_assert_eq(by_id(&info, 7)->base_ref, PCW_REF(8));
    cr_assert_eq(by_id(&info, 9)->base_ref, PCW_REF(8));
    cr_assert_eq(by_id(&info, 9)->multi_ref, PCW_REF(8));
    cr_assert_eq(by_id(&info, 10)->base_ref, PCW_REF(8));
    cr_assert_eq(by_id(&info, 11)->base_ref, PCW_REF(12));
    cr_assert_eq(by_id(&info, 14)->type, PERF_COUNTER_NODATA);
    cr_assert_eq(by_id(&info, 14)->size, 4);
    cr_assert_eq(by_id(&info, 15)->type, PERF_COUNTER_TEXT);
    cr_assert_eq(by_id(&info, 15)->size, 8); /* SIZE_VARIABLE_LEN has the LARGE bit */
}

Test(extra, publishes_counters)
{
    cr_assert_eq(extra_tu2_initialize_all(prov), PCW_OK);
    cr_assert_eq(extra_tu2_adapter_handle(), NetNetAdapter);
    cr_assert_not_null(NetContosoNetworkUptime);
    cr_assert_not_null(SvcServiceHost);

    /* Kernel style, two blocks. */
    NET_TRAFFIC_COUNTERS t = {.BytesReceived = 1000, .PacketsReceived = 3};
    NET_ERROR_COUNTERS e = {.TransmitErrors = 7};
    pcw_instance *eth0, *eth1;
    cr_assert_eq(NetCreateNetAdapter(&eth0, "eth0", &t, &e, NULL, NULL), PCW_OK);
    cr_assert_eq(NetCreateNetAdapter(&eth1, "eth1", NULL, NULL, NULL, NULL), PCW_OK);
    cr_assert_eq(NetNetAdapter_Traffic_of(eth0)->BytesReceived, 1000);
    cr_assert_eq(NetNetAdapter_Errors_of(eth0)->TransmitErrors, 7);
    pcw_u64_add(&NetNetAdapter_Traffic_of(eth1)->BytesSent, 42);
    pcw_u64_add(&NetNetAdapter_Errors_of(eth1)->TransmitErrors, 9);
    uint64_t v;
    memcpy(&v,
           (const char *)pcw_instance_block(eth1, 1) + offsetof(NET_ERROR_COUNTERS, TransmitErrors),
           8);
    cr_assert_eq(v, 9);
    memcpy(&v,
           (const char *)pcw_instance_block(eth1, 0) + offsetof(NET_TRAFFIC_COUNTERS, BytesSent),
           8);
    cr_assert_eq(v, 42);

    /* globalAggregate: one unnamed instance. */
    pcw_instance *disk;
    StorContosoDisk_values dv = {.DiskReadBytesSec = 1u << 20, .AvgDiskSecRead = 5};
    cr_assert_eq(StorCreateContosoDisk(&disk, "", &dv, NULL), PCW_OK);
    cr_assert_eq(StorContosoDisk_values_of(disk)->DiskReadBytesSec, 1u << 20);
    cr_assert_eq(StorContosoDisk_values_of(disk)->AvgDiskSecRead, 5);
    cr_assert_eq(sizeof dv.DiskReadBytesSec, 8);

    pcw_instance *ep;
    cr_assert_eq(SvcCreateServiceRequests(&ep, "endpoint-a", NULL, NULL), PCW_OK);
    pcw_u32_add(&SvcServiceRequests_values_of(ep)->RequestsPerSec, 3);
    cr_assert_eq(SvcServiceRequests_values_of(ep)->RequestsPerSec, 3);

    NetCloseNetAdapter(eth0);
    NetCloseNetAdapter(eth1);
    StorCloseContosoDisk(disk);
    SvcCloseServiceRequests(ep);
}

/* A two-block Add (kernel style, two structs) from a real callback,
 * collected through the control channel: each block lands at its place. */
static int net_callback(pcw_callback_type type, const pcw_callback_info *info, void *ctx)
{
    (void)ctx;
    if (type != PCW_CALLBACK_COLLECT_DATA)
        return PCW_OK;
    int rc = extra_tu2_add_adapter(info->buffer, "eth0", 3, 2);
    if (rc == PCW_OK)
        rc = extra_tu2_add_adapter(info->buffer, "eth1", 4, 1); /* second block zero */
    return rc;
}

Test(extra, add_with_two_blocks)
{
    cr_assert_eq(NetRegisterNetAdapter(prov, net_callback, NULL), PCW_OK);
    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    const pcw_counterset *cs = NULL;
    for (size_t i = 0; i < pcw_segment_counterset_count(seg); i++)
        if (pcw_segment_counterset(seg, i)->flags & PCW_CSET_F_CALLBACK)
            cs = pcw_segment_counterset(seg, i);
    cr_assert_not_null(cs);
    cr_assert_eq(cs->block_count, 2);
    const pcw_counter *rx = NULL, *rxerr = NULL;
    for (uint32_t i = 0; i < cs->counter_count; i++) {
        if (cs->counters[i].block == 0 &&
            cs->counters[i].offset == offsetof(NET_TRAFFIC_COUNTERS, BytesReceived))
            rx = &cs->counters[i];
        if (cs->counters[i].block == 1 &&
            cs->counters[i].offset == offsetof(NET_ERROR_COUNTERS, ReceiveErrors))
            rxerr = &cs->counters[i];
    }
    cr_assert(rx && rxerr, "the manifest's BytesReceived and ReceiveErrors counters");
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    pcw_query q = PCW_QUERY_ALL;
    cr_assert_eq(pcw_segment_collect(seg, cs, &q, &snap, 0, 0, 2000, NULL), PCW_OK);
    cr_assert_eq(snap.count, 2);
    for (size_t i = 0; i < snap.count; i++) {
        size_t x = i;
        cr_assert_eq(pcw_snapshot_value(&snap, x, rx), 1); /* extra_tu2_add_adapter's */
        cr_assert_eq(pcw_snapshot_value(&snap, x, rxerr), pcw_snapshot_id(&snap, x) == 3 ? 2 : 0);
    }
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
}

/* Every counterSet@instances form (instances.man): the generated
 * registration says the matching pcw_instance_type; instance names follow
 * it (empty exactly for the single and global-aggregate forms); a consumer
 * reads the type and the values back. */
#define CHECK_FORM(Set, type, multi)                                                               \
    do {                                                                                           \
        pcw_registration_info info;                                                                \
        FormsInitRegistrationInformation##Set(NULL, NULL, &info);                                  \
        cr_assert_eq(info.instance_type, (type), #Set);                                            \
        cr_assert_eq(pcw_instance_type_is_multi(type), (multi), #Set);                             \
        pcw_instance *bad;                                                                         \
        cr_assert_eq(FormsCreate##Set(&bad, (multi) ? "" : "x", NULL, NULL), PCW_E_INVALID_NAME,   \
                     #Set);                                                                        \
        cr_assert_eq(FormsCreate##Set(&inst[type], (multi) ? "x" : "", NULL, NULL), PCW_OK, #Set); \
        Forms##Set##_values_of(inst[type])->Items = 100u + (type);                                 \
        names[type] = info.name;                                                                   \
        multis[type] = (multi);                                                                    \
    } while (0)

Test(extra, every_instances_form)
{
    cr_assert_eq(FormsCounterInitialize(prov, NULL, NULL), PCW_OK);
    pcw_instance *inst[PCW_INSTANCE_TYPE_MAX_ + 1] = {0};
    const char *names[PCW_INSTANCE_TYPE_MAX_ + 1] = {0};
    int multis[PCW_INSTANCE_TYPE_MAX_ + 1];
    CHECK_FORM(Single, PCW_SINGLE_INSTANCE, 0);
    CHECK_FORM(Multiple, PCW_MULTI_INSTANCE, 1);
    CHECK_FORM(GlobalAggregate, PCW_GLOBAL_AGGREGATE, 0);
    CHECK_FORM(MultipleAggregate, PCW_MULTI_AGGREGATE, 1);
    CHECK_FORM(GlobalAggregateHistory, PCW_GLOBAL_AGGREGATE_HISTORY, 0);
    CHECK_FORM(InstanceAggregate, PCW_INSTANCE_AGGREGATE, 1);
    CHECK_FORM(MultipleAggregateHistory, PCW_MULTI_AGGREGATE_HISTORY, 1);
    CHECK_FORM(InstanceAggregateHistory, PCW_INSTANCE_AGGREGATE_HISTORY, 1);

    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    for (uint32_t t = 0; t <= PCW_INSTANCE_TYPE_MAX_; t++) {
        cr_assert_not_null(names[t], "no counterset for instance type %u", t);
        const pcw_counterset *cs = pcw_segment_find_counterset(seg, names[t]);
        cr_assert_not_null(cs, "%s", names[t]);
        cr_assert_eq(cs->instance_type, t, "%s", names[t]);
        cr_assert_eq(pcw_segment_read(seg, cs, &snap, 0), PCW_OK);
        cr_assert_eq(snap.count, 1);
        cr_assert_str_eq(pcw_snapshot_name(&snap, 0), multis[t] ? "x" : "");
        cr_assert_eq(pcw_snapshot_value(&snap, 0, &cs->counters[0]), 100u + t);
    }
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
}
