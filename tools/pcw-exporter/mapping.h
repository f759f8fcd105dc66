/* SPDX-License-Identifier: MIT */
/*
 * tools/pcw-exporter/mapping.h - which Prometheus metrics a pcw counter
 * type becomes: the one table (mapping.c) that docs/exporter.md shows.
 *
 * A counter becomes one or two metric families named
 * pcw_<counterset>_<counter><infix><unit>: its value, and - for the types
 * whose formula divides by a base - the base, so that PromQL computes the
 * ratio itself over any window (rate(a) / rate(b), or a / b). Values are
 * the raw sample (pcw_raw), never cooked: a rate is PromQL's to compute.
 */
#ifndef PCW_EXPORTER_MAPPING_H
#define PCW_EXPORTER_MAPPING_H

#include <stdint.h>

/* Prometheus metric types. */
enum { MT_GAUGE, MT_COUNTER, MT_SUMMARY, MT_HISTOGRAM };

/* Where a sample's value comes from (pcw_raw: X = first, Y/B = second,
 * multi, TB = freq). */
enum {
    V_X,       /* X */
    V_X_TB,    /* X / TB: a time in seconds */
    V_B,       /* B: the base */
    V_B_TB,    /* B / TB */
    V_MULTI,   /* the multi count (items) */
    V_ELAPSED, /* (Y - X) / TB: seconds since X */
};

typedef struct fam_rule {
    const char *infix; /* "" or "_base" */
    const char *unit;  /* "" or "_seconds" */
    uint8_t type;      /* MT_* */
    uint8_t value;     /* V_*: the sample (a summary's _sum) */
    uint8_t count;     /* a summary's _count: V_* */
    const char *help;  /* a base family's help, before the counter's family
                          name; NULL for the counter's own family, whose
                          help is the counter's description */
} fam_rule;

typedef struct type_rule {
    uint32_t type; /* PERF_* */
    uint8_t nfam;
    fam_rule fam[2];
} type_rule;

/* The rule for a counter type; NULL when it is not exported (bases, which
 * appear as the _base family of the counter that uses them; text, nodata;
 * unknown types). PERF_PCW_HISTOGRAM: the rule of a histogram of unit
 * PCW_HIST_UNIT_ONE (mapping_counter says which unit). */
const type_rule *mapping_find(uint32_t type);
/* The rule for a counter of `type` with histogram shape `shape` (0 unless
 * a histogram): a PCW_HIST_UNIT_NS histogram is a family in seconds
 * (_seconds), any other as mapping_find. */
const type_rule *mapping_counter(uint32_t type, uint32_t shape);

#endif /* PCW_EXPORTER_MAPPING_H */
