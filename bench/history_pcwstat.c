/* SPDX-License-Identifier: MIT */
/*
 * bench/history_pcwstat.c - pcwstat's own recorder (tools/pcwstat/record.c)
 * on the shape of history/record (issue 28, "Performance").
 *
 *   history/record_pcwstat/<instances>/<counters>
 *       what `pcwstat -f BIN -o FILE "\Bench(*)\*"` does each second:
 *       record_collect (pcw_pdh_collect with the group's rows compared
 *       with the log's words as the read copies them), then record_sample -
 *       the handle's rows handed over from the snapshot
 *       (pcw__q_raw_sample) with those bits, the sample's pieces
 *       planned in series order and written as a row sample - with a block
 *       every 10 samples (record_block_samples: one sample a second,
 *       --flush 10). The log goes to /dev/null. Beside history/record (the
 *       rows fused into the read, written as they come) and
 *       query/collect_cooked of the same run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "../tools/pcwstat/pcwstat.h"
#include "benchutil.h"
#include "pcw/pdh.h"

static void bm_record_pcwstat(gb_state *st, void *arg)
{
    (void)arg;
    bu_pin(BU_CPU_MAIN);
    int64_t n = gb_range(st, 0), c = gb_range(st, 1);
    bu_provider_stop_all();
    if (!bu_provider_get(n, c)) {
        gb_skip_with_error(st, "cannot start the provider child");
        return;
    }
    pcw_pdh *q;
    pcw_pdh_counter *h;
    if (pcw_pdh_open(&q, NULL) != PCW_OK) {
        gb_skip_with_error(st, "pcw_pdh_open");
        return;
    }
    char why[512] = "";
    recorder *rec = NULL;
    int bad = pcw_pdh_add_counter(q, "\\Bench(*)\\*", &h, NULL) != PCW_OK ||
              pcw_pdh_collect(q, NULL) != PCW_OK || pcw_pdh_collect(q, NULL) != PCW_OK;
    int fd = bad ? -1 : open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (fd >= 0 && (rec = record_open(fd, "/dev/null", NULL, 0, UINT64_MAX, why, sizeof why))) {
        record_block_samples(rec, 10);
        bad |= record_group(rec, q, h, why, sizeof why) != 1 ||
               record_sample(rec, q, why, sizeof why) != 0;
    }
    if (bad || !rec) {
        gb_skip_with_error(st, why[0] ? why : "set-up failed (not a group?)");
        goto out;
    }
    while (gb_keep_running(st))
        bad |=
            record_collect(rec, q, NULL) != PCW_OK || record_sample(rec, q, why, sizeof why) != 0;
    if (bad)
        gb_skip_with_error(st, "a collection or a write failed");
    gb_set_items_processed(st, gb_state_iterations(st) * n * c);
out:
    if (rec)
        record_finish(rec, why, sizeof why);
    pcw_pdh_close(q);
}

void bench_history_pcwstat_register(void)
{
    static const int64_t shape[2] = {6250, 16};
    gb_bench *b = gb_register("history/record_pcwstat", bm_record_pcwstat, NULL);
    gb_use_real_time(b);
    gb_unit_ns(b);
    gb_args(b, shape, 2);
}
