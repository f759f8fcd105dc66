/* SPDX-License-Identifier: MIT */
/*
 * fuzz/segment/fuzz_segment.c - libFuzzer target for the consumer's segment
 * parser (lib/consumer/): every input is a segment file.
 *
 * Each input is written to a file in a private temporary directory and
 * opened with pcw_segment_open; if that succeeds, the target refreshes it,
 * reads every counterset (all instances, then each one by id), collects
 * and enumerates each with pcw_segment_collect (whose control-channel
 * paths run when the header or a counterset asks for a socket: there is
 * none beside the file), asks whether its provider is alive and runs
 * pcw_segment_check. Nothing may crash, hang, leak or read outside the
 * mapping.
 *
 * The header's uid is set to ours before writing: pcw_segment_open refuses
 * a segment whose header names another owner than the file's, and letting
 * the fuzzer spend its time rediscovering that one check would hide
 * everything behind it.
 *
 *   make check-fuzz FUZZ_SECONDS=60
 *
 * Seeds: made at build time from the current layout by make_seeds.c
 * ($(BUILD)/fuzz/segment-seeds); regression inputs: fuzz/segment/regressions.
 * docs/testing.md says how far a run gets.
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pcw/collect.h"
#include "pcw/consumer.h"
#include "common/layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256], dir[200];

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

static int setup(void)
{
    if (path[0])
        return 0;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pcw-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/1-fuzz.seg", dir);
    atexit(cleanup);
    return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        abort();
    size_t done = 0;
    if (size >= sizeof(pcw_seg_header)) {
        pcw_seg_header h;
        memcpy(&h, data, sizeof h);
        h.uid = (uint32_t)geteuid();
        if (write(fd, &h, sizeof h) != (ssize_t)sizeof h)
            abort();
        done = sizeof h;
    }
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0)
            abort();
        done += (size_t)w;
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (setup() != 0)
        abort();
    write_input(data, size);
    pcw_segment *seg;
    if (pcw_segment_open(&seg, path) != PCW_OK)
        return 0;
    int changed;
    (void)pcw_segment_refresh(seg, &changed);
    (void)pcw_segment_generation(seg);
    (void)pcw_segment_alive(seg);
    pcw_snapshot snap = PCW_SNAPSHOT_INIT;
    for (size_t i = 0; i < pcw_segment_counterset_count(seg); i++) {
        const pcw_counterset *cs = pcw_segment_counterset(seg, i);
        if (pcw_segment_read(seg, cs, &snap, 0) != PCW_OK)
            continue;
        /* Touch what the read returned, as a tool would. */
        size_t n = snap.count < 64 ? snap.count : 64;
        uint64_t sum = 0;
        for (size_t j = 0; j < n; j++) {
            size_t x = j;
            sum += strlen(pcw_snapshot_name(&snap, x));
            for (uint32_t k = 0; k < cs->counter_count; k++)
                sum += pcw_snapshot_value(&snap, x, &cs->counters[k]);
        }
        pcw_snapshot s2 = PCW_SNAPSHOT_INIT;
        for (size_t j = 0; j < n; j++)
            (void)pcw_segment_read_instance(seg, cs, pcw_snapshot_id(&snap, j), &s2, PCW_READ_APPEND);
        pcw_snapshot_free(&s2);
        (void)pcw_segment_read(seg, cs, &snap, PCW_READ_NO_NAMES);
        /* Collection: every instance, and again with masks; enumeration.
         * A 1 ms limit: no provider listens here. */
        int cb_status;
        pcw_query q = {1, snap.count ? pcw_snapshot_id(&snap, 0) : PCW_ANY_INSTANCE_ID, "*a?"};
        (void)pcw_segment_collect(seg, cs, NULL, &snap, 0, 0, 1, &cb_status);
        (void)pcw_segment_collect(seg, cs, &q, &snap, PCW_READ_NO_NAMES, 0, 1, &cb_status);
        (void)pcw_segment_collect(seg, cs, NULL, &snap, 0, 1, 1, &cb_status);
        if (sum == 0x5a5a5a5a5a5a5a5aull)
            fputc('\n', stderr); /* keep `sum` alive */
    }
    pcw_snapshot_free(&snap);
    char why[256];
    (void)pcw_segment_check(seg, why, sizeof why);
    (void)pcw_segment_find_counterset(seg, "x");
    pcw_segment_close(seg);
    return 0;
}
