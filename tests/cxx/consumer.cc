/* SPDX-License-Identifier: MIT */
/*
 * tests/cxx/consumer.cc - a C++ consumer (libpcw from C++, including every
 * consumer header): reads "Cxx Web" and prints one line per counter of
 * instance "cxx", "Name = value base=<base id or -1>". Exit status 0 when
 * it found the instance, 1 otherwise.
 */
#include <pcw/collect.h>
#include <pcw/consumer.h>
#include <pcw/histogram.h>
#include <pcw/pdh.h>

#include <stdio.h>
#include <string.h>

int main()
{
    pcw_consumer *c = nullptr;
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    if (pcw_consumer_open(&c, nullptr) != PCW_OK || pcw_consumer_refresh(c, nullptr) != PCW_OK)
        return 1;
    const pcw_merged_counterset *web = pcw_consumer_find_counterset(c, "cxx web");
    if (!web || pcw_consumer_read(c, web, &snap, 0, nullptr) != PCW_OK) {
        fprintf(stderr, "cxx_consumer: no \"Cxx Web\" counters\n");
        return 1;
    }
    int found = 0;
    for (size_t i = 0; i < snap.count; i++) {
        if (strcmp(pcw_snapshot_name(&snap, i), "cxx") != 0)
            continue;
        found = 1;
        for (uint32_t k = 0; k < web->meta->counter_count; k++) {
            const pcw_counter *ctr = &web->meta->counters[k];
            if (ctr->type == PERF_PCW_HISTOGRAM) {
                /* The words: sum, zero bucket, buckets; count = their sum. */
                const unsigned char *row = pcw_snapshot_row(&snap, i) + ctr->data_offset;
                uint32_t n = pcw_hist_nbuckets(ctr->histogram);
                uint64_t sum, count = 0, w;
                memcpy(&sum, row, 8);
                for (uint32_t b = 1; b < 2 + n; b++) {
                    memcpy(&w, row + 8 * b, 8);
                    count += w;
                }
                printf("%s = %llu in %u buckets sum=%llu agg=%u detail=%u \"%s\"\n", ctr->name,
                       (unsigned long long)count, (unsigned)n, (unsigned long long)sum,
                       (unsigned)ctr->aggregate, (unsigned)ctr->detail_level, ctr->description);
                continue;
            }
            printf("%s = %llu base=%d agg=%u detail=%u \"%s\"\n", ctr->name,
                   (unsigned long long)pcw_snapshot_value(&snap, i, ctr),
                   ctr->base_id == PCW_NO_COUNTER ? -1 : (int)ctr->base_id,
                   (unsigned)ctr->aggregate, (unsigned)ctr->detail_level, ctr->description);
        }
    }
    pcw_snapshot_free(&snap);
    pcw_consumer_close(c);
    return found ? 0 : 1;
}
