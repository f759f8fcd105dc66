/* SPDX-License-Identifier: MIT */
/*
 * test_hist.c - histogram counters declared in a manifest with pcw's
 * extension attributes (tests/pcwgen/manifests/histogram.man): the
 * generated header declares the histogram types, the fields and typed
 * observers, and descriptors of type PERF_PCW_HISTOGRAM with the shape;
 * they register, and what the observers count is read back through the
 * consumer library, bucket by bucket. The header is compiled into two
 * translation units (hist_tu2.c), a user-mode and a kernel-style set.
 */
#define PCW_PROVIDER_IMPLEMENTATION
#define _GNU_SOURCE 1 /* before any system header: pcw/provider.h needs it */

#include <criterion/criterion.h>

#include "provider_types.h"

#include "histogram.h"
#include "pcw/consumer.h"
#include "pcwgen_test.h"
#include "tu2.h"

static pcw_provider *prov;

static void setup(void)
{
    pcwgen_testdir_setup();
    pcw_provider_options o = HistContosoWeb_ProviderOptions();
    cr_assert_eq(pcw_provider_open(&prov, &o), PCW_OK);
}

static void teardown(void)
{
    HistCounterCleanup();
    pcw_provider_close(prov);
    pcwgen_testdir_teardown();
}

TestSuite(hist, .init = setup, .fini = teardown);

Test(hist, descriptors)
{
    pcw_registration_info info;
    HistInitRegistrationInformationWebRequests(NULL, NULL, &info);
    cr_assert_eq(info.counter_count, 3);
    const pcw_counter_desc *lat = &info.counters[1], *size = &info.counters[2];
    cr_assert_eq(lat->type, PERF_PCW_HISTOGRAM);
    cr_assert_eq(lat->histogram, PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, 3, -30, 12));
    cr_assert_eq(lat->size, 8 * (2 + 336)); /* 1 ns .. 1 h at schema 3: 336 buckets */
    cr_assert_eq(lat->offset % 8, 0);
    cr_assert_eq(lat->aggregate, PCW_AGGREGATE_TOTAL); /* the default for a histogram */
    cr_assert_eq(lat->base_ref, 0);
    cr_assert_eq(size->type, PERF_PCW_HISTOGRAM);
    cr_assert_eq(size->histogram, PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_ONE, 0, 0, 32));
    cr_assert_eq(size->size, 8 * (2 + 32));
    cr_assert_eq(size->aggregate, PCW_AGGREGATE_UNDEFINED); /* as the manifest says */
    cr_assert_eq(size->detail_level, PCW_DETAIL_ADVANCED);
    cr_assert_eq(sizeof(HistWebRequests_Latency_hist), lat->size);
    cr_assert_eq((uint32_t)HistWebRequests_Latency_hist_shape, lat->histogram);

    HistInitRegistrationInformationWebQueue(NULL, NULL, &info);
    cr_assert_eq(info.counters[1].type, PERF_PCW_HISTOGRAM);
    cr_assert_eq(info.counters[1].histogram, PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, -1, -20, 4));
    cr_assert_eq(info.counters[1].offset, offsetof(WEB_QUEUE_VALUES, Wait));
    cr_assert_eq(info.counters[1].size, sizeof(((WEB_QUEUE_VALUES *)0)->Wait));
}

/* The consumer's view of counter `id` of counterset `name`, and a
 * snapshot of its instances. */
static const pcw_counter *counter_of(pcw_segment *seg, const char *name, uint32_t id,
                                     pcw_snapshot *snap)
{
    const pcw_counterset *cs = pcw_segment_find_counterset(seg, name);
    cr_assert_not_null(cs, "%s", name);
    cr_assert_eq(pcw_segment_read(seg, cs, snap, 0), PCW_OK);
    for (uint32_t i = 0; i < cs->counter_count; i++)
        if (cs->counters[i].id == id)
            return &cs->counters[i];
    cr_assert_fail("%s: no counter %u", name, id);
    return NULL;
}

static uint64_t word(const pcw_snapshot *snap, size_t row, const pcw_counter *c, uint32_t w)
{
    uint64_t v;
    memcpy(&v, pcw_snapshot_row(snap, row) + c->data_offset + 8u * w, 8);
    return v;
}

Test(hist, observe_and_read_back)
{
    cr_assert_eq(HistCounterInitialize(prov, NULL, NULL), PCW_OK);
    cr_assert_eq(hist_tu2_handle(), HistWebRequests); /* one handle across units */
    pcw_instance *inst;
    HistWebRequests_values *v;
    cr_assert_eq(HistCreateWebRequests(&inst, "api", NULL, &v), PCW_OK);
    /* 1 ms three times from this unit, 2 s once from the other; 0 and a
     * value past 2^12 s land in the zero and the last bucket. */
    for (int i = 0; i < 3; i++)
        HistWebRequests_Latency_observe(v, 1000000);
    hist_tu2_observe_latency(inst, 2000000000);
    HistWebRequests_Latency_observe_atomic(v, 0);
    HistWebRequests_Latency_observe(v, UINT64_C(5000) * 1000000000);
    HistWebRequests_ResponseSize_observe(v, 1500);

    pcw_instance *q;
    WEB_QUEUE_VALUES *qv;
    cr_assert_eq(HistCreateWebQueue(&q, "", NULL, &qv), PCW_OK);
    HistWebQueue_Wait_observe(qv, 3000); /* 3 us: 2^-19 < x <= 2^-18 s */
    qv->Depth = 4;

    pcw_segment *seg;
    cr_assert_eq(pcw_segment_open(&seg, pcw_provider_path(prov)), PCW_OK);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    const pcw_counter *c = counter_of(seg, "Web Requests", 2, &snap);
    cr_assert_eq(c->type, PERF_PCW_HISTOGRAM);
    cr_assert_eq(c->histogram, (uint32_t)HistWebRequests_Latency_hist_shape);
    cr_assert_eq(c->size, sizeof(HistWebRequests_Latency_hist));
    cr_assert_eq(snap.count, 1);
    uint32_t shape = c->histogram, n = pcw_hist_nbuckets(shape);
    uint64_t sum = 3 * UINT64_C(1000000) + 2000000000 + UINT64_C(5000) * 1000000000;
    cr_assert_eq(word(&snap, 0, c, 0), sum);
    cr_assert_eq(word(&snap, 0, c, 1), 1); /* the 0 */
    cr_assert_eq(word(&snap, 0, c, pcw_hist_word(shape, 1000000)), 3);
    cr_assert_eq(word(&snap, 0, c, pcw_hist_word(shape, 2000000000)), 1);
    cr_assert_eq(word(&snap, 0, c, 2 + n - 1), 1); /* above 2^12 s */
    uint64_t count = 0;
    for (uint32_t w = 1; w < 2 + n; w++)
        count += word(&snap, 0, c, w);
    cr_assert_eq(count, 6);
    /* 1 ms is in bucket ceil(8 * log2(0.001)) = -79 at schema 3. */
    cr_assert_eq(pcw_hist_word(shape, 1000000), 2 + (-79) - pcw_hist_min_index(shape) - 1);

    c = counter_of(seg, "Web Requests", 3, &snap);
    cr_assert_eq(word(&snap, 0, c, 0), 1500);
    cr_assert_eq(word(&snap, 0, c, 2 + 10), 1); /* 1024 < 1500 <= 2048: bucket 11 */

    c = counter_of(seg, "Web Queue", 2, &snap);
    cr_assert_eq(c->histogram, PCW_HISTOGRAM_SHAPE(PCW_HIST_UNIT_NS, -1, -20, 4));
    cr_assert_eq(word(&snap, 0, c, 0), 3000);
    /* schema -1: bucket i covers (4^(i-1), 4^i] s; 3 us is in i = -9
     * (2^-20 < 3e-6 <= 2^-18), the first bucket above the zero bucket. */
    cr_assert_eq(word(&snap, 0, c, 2), 1);
    pcw_snapshot_free(&snap);
    pcw_segment_close(seg);
    HistCloseWebRequests(inst);
    HistCloseWebQueue(q);
}
