/* SPDX-License-Identifier: MIT */
/*
 * tests/helpers/manifest_provider.c - a provider that publishes every
 * counterset of a CTRPP manifest, read at run time with pcwgen's own
 * reader (tools/pcwgen/manifest.c): the counters' names, types, bases and
 * descriptions as the manifest gives them, each counter given the value
 * (its index + 1) * 1000 and each base 4000 (a histogram: that many
 * observations of that value), one instance per counterset.
 * The exporter's name tests (tests/test_exporter_names.c) run it on real
 * manifests.
 *
 *   manifest_provider MANIFEST
 *
 * Prints "ready <pid>" once everything is published, then waits for
 * "quit" or the end of stdin; "err <why>" and status 1 when the manifest
 * or a registration fails.
 */
#define PCW_PROVIDER_IMPLEMENTATION
#include <pcw/provider.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/pcwgen/manifest.h"

/* The descriptor tables, kept until the provider is closed (a
 * registration may refer to them). */
static pcw_counter_desc *tables[256];
static size_t ntables;

/* Publish one counterset: counters laid out one after another in one
 * block, each aligned to its size. */
static int publish(pcw_provider *prov, const mf_counterset *cs, char *why, size_t len)
{
    pcw_counter_desc *d = calloc(cs->ncounters ? cs->ncounters : 1, sizeof *d);
    if (!d || ntables == sizeof tables / sizeof tables[0]) {
        free(d);
        return PCW_E_NO_MEMORY;
    }
    tables[ntables++] = d;
    uint32_t off = 0;
    for (size_t i = 0; i < cs->ncounters; i++) {
        const mf_counter *c = &cs->counters[i];
        uint32_t size = c->size ? c->size : 4;
        uint32_t align = c->histogram ? 8 : size; /* a histogram: 8-byte words */
        off = (off + align - 1) / align * align;
        d[i] = (pcw_counter_desc){.id = c->id,
                                  .type = c->type,
                                  .offset = off,
                                  .size = size,
                                  .name = c->name,
                                  .description = c->description,
                                  .histogram = c->histogram ? c->hist_shape : 0};
        if (c->base_id != PCW_NO_COUNTER && !c->base_implicit)
            d[i].base_ref = PCW_REF(c->base_id);
        if (c->perf_time_id != PCW_NO_COUNTER)
            d[i].perf_time_ref = PCW_REF(c->perf_time_id);
        if (c->perf_freq_id != PCW_NO_COUNTER)
            d[i].perf_freq_ref = PCW_REF(c->perf_freq_id);
        if (c->multi_id != PCW_NO_COUNTER)
            d[i].multi_ref = PCW_REF(c->multi_id);
        off += size;
    }
    pcw_registration_info info = {.version = PCW_VERSION_1,
                                  .name = cs->name,
                                  .description = cs->description,
                                  .instance_type = cs->instance_type,
                                  .counter_count = (uint32_t)cs->ncounters,
                                  .counters = d};
    pcw_registration *reg;
    int rc = pcw_register(&reg, prov, &info);
    if (rc != PCW_OK) {
        pcw_register_error(rc, &info, why, len);
        return rc;
    }
    unsigned char *block = calloc(1, off ? off : 1);
    if (!block)
        return PCW_E_NO_MEMORY;
    for (size_t i = 0; i < cs->ncounters; i++) {
        uint64_t v = pcw_counter_type_is_base(d[i].type) ? 4000 : (uint64_t)(i + 1) * 1000;
        if (d[i].type == PERF_PCW_HISTOGRAM) /* v observations of v */
            for (uint64_t k = 0; k < v; k++)
                pcw_histogram_observe((uint64_t *)(void *)(block + d[i].offset), d[i].histogram, v);
        else if (d[i].size == 8)
            memcpy(block + d[i].offset, &v, 8);
        else
            memcpy(block + d[i].offset, &(uint32_t){(uint32_t)v}, 4);
    }
    pcw_data data = {block, off};
    pcw_instance *inst;
    rc = pcw_create_instance(&inst, reg, pcw_instance_type_is_multi(cs->instance_type) ? "x" : "",
                             1, &data);
    if (rc != PCW_OK)
        snprintf(why, len, "%s: create: %s", cs->name, pcw_status_str(rc));
    free(block);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: manifest_provider MANIFEST\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    static char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    mf_manifest m;
    mf_error err;
    char why[1024] = "";
    int rc = !n ? -1 : mf_parse(&m, buf, n, &err);
    if (rc != 0) {
        printf("err %s: %s\n", argv[1], n ? err.msg : "cannot read it");
        if (n)
            mf_free(&m);
        return 1;
    }
    pcw_provider *prov;
    rc = pcw_provider_open(&prov, NULL);
    for (size_t p = 0; rc == PCW_OK && p < m.nproviders; p++)
        for (size_t s = 0; rc == PCW_OK && s < m.providers[p].nsets; s++)
            rc = publish(prov, &m.providers[p].sets[s], why, sizeof why);
    if (rc != PCW_OK) {
        printf("err %s\n", why[0] ? why : pcw_status_str(rc));
        return 1; /* the descriptors stay with the provider */
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin) && strncmp(line, "quit", 4) != 0)
        ;
    pcw_provider_close(prov);
    for (size_t i = 0; i < ntables; i++)
        free(tables[i]);
    mf_free(&m);
    return 0;
}
