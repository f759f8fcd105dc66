/* SPDX-License-Identifier: MIT */
/*
 * manifest.h - pcwgen's model of a manifest's <counters> section, and the
 * reader that builds it from a buffer.
 *
 * The reader is a pure function of its input (no files, no globals) so that
 * the same code serves the command-line tool, the tests and the fuzzer. It
 * checks everything the generated header relies on: after a successful
 * mf_parse() the emitter never has to report an error.
 */
#ifndef PCWGEN_MANIFEST_H
#define PCWGEN_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

/* The counters schema's namespace (schemaVersion 1.x and 2.0 share it). */
#define MF_COUNTERS_NS "http://schemas.microsoft.com/win/2005/12/counters"
/* pcw's namespace for extension attributes on <counter> (pcw:histogram,
 * pcw:schema, pcw:minExp, pcw:maxExp): attributes of their own namespace,
 * which cannot clash with the schema's and which a reader that does not
 * know them skips (tools/pcwgen/README.md, "Histograms"). */
#define MF_PCW_NS "urn:pcw"

/* <struct name="..." type="..."/>: one data block of a kernel-style set. */
typedef struct mf_struct {
    unsigned long line;
    const char *name; /* C identifier: the Create/Add parameter name */
    const char *type; /* the provider's C type, e.g. GEOMETRIC_WAVE_VALUES */
} mf_struct;

typedef struct mf_counter {
    unsigned long line;
    uint32_t id;
    const char *uri, *name, *description, *symbol; /* NULL when absent */
    const char *type_name;                         /* as written: perf_counter_rawcount */
    const char *type_macro;                        /* types.h's macro: PERF_COUNTER_RAWCOUNT */
    uint32_t type;                                 /* its value */
    uint32_t size;                                 /* 4 or 8 by type (user-mode style) */
    uint32_t detail_level;                         /* PCW_DETAIL_STANDARD or _ADVANCED */
    int32_t default_scale;                         /* -10..10 */
    uint32_t aggregate;                            /* pcw_aggregate */
    uint32_t attributes;                           /* PCW_ATTR_* */
    uint32_t base_id;                              /* PCW_NO_COUNTER or a counter id */
    int base_implicit; /* base_id is the following counter (no baseID) */
    uint32_t perf_time_id, perf_freq_id, multi_id;
    int has_base_attr, has_time_attr, has_freq_attr, has_multi_attr;
    unsigned long base_attr_value, time_attr_value, freq_attr_value, multi_attr_value;
    const char *struct_name; /* kernel style: the <struct name>, else NULL */
    const char *field;       /* kernel style: the member, else NULL */
    int block;               /* index into the set's structs; 0 in user mode */
    const char *ident;       /* C identifier: symbol, else made from name */
    /* pcw's extension (MF_PCW_NS attributes): a histogram counter. Then
     * type is PERF_PCW_HISTOGRAM, size its bytes, and hist_shape its
     * PCW_HISTOGRAM_SHAPE of hist_unit, hist_schema, hist_min_exp,
     * hist_max_exp. */
    int histogram;
    unsigned hist_unit; /* PCW_HIST_UNIT_NS or PCW_HIST_UNIT_ONE */
    int hist_schema, hist_min_exp, hist_max_exp;
    uint32_t hist_shape;
} mf_counter;

typedef struct mf_counterset {
    unsigned long line;
    const char *guid, *uri, *name, *description, *symbol;
    uint32_t instance_type;     /* pcw_instance_type */
    const char *instances;      /* as written (or "single" by default) */
    const char *instance_macro; /* its <pcw/types.h> name: PCW_MULTI_INSTANCE */
    const char *ident;          /* C identifier: symbol, else made from name */
    int kernel_style;           /* counters name structs and fields */
    mf_struct *structs;
    size_t nstructs, structs_cap;
    mf_counter *counters;
    size_t ncounters, counters_cap;
} mf_counterset;

typedef struct mf_provider {
    unsigned long line;
    const char *name, *guid, *type, *callback, *symbol, *application_identity;
    const char *resource_base;
    const char *ident; /* C identifier: symbol, else made from providerName */
    mf_counterset *sets;
    size_t nsets, sets_cap;
} mf_provider;

/* Non-fatal remarks (e.g. an attribute pcw cannot represent). */
typedef struct mf_warning {
    unsigned long line;
    const char *msg;
} mf_warning;

typedef struct mf_arena_block mf_arena_block;

typedef struct mf_manifest {
    const char *schema_version; /* of the first <counters>, or NULL */
    mf_provider *providers;
    size_t nproviders, providers_cap;
    mf_warning *warnings;
    size_t nwarnings, warnings_cap;
    mf_arena_block *arena; /* owns every pointer above */
} mf_manifest;

/* The first error found; line 0 when no line applies. */
typedef struct mf_error {
    unsigned long line;
    char msg[512];
} mf_error;

/* Parse `len` bytes of XML. Returns 0 and fills *m, or -1 and fills *err.
 * Either way call mf_free(m) afterwards. */
int mf_parse(mf_manifest *m, const char *buf, size_t len, mf_error *err);

void mf_free(mf_manifest *m);

/* Table of counter type names (exposed for tests and the README). */
typedef struct mf_type_info {
    const char *name;  /* manifest spelling */
    const char *macro; /* types.h macro */
    uint32_t value;
} mf_type_info;

const mf_type_info *mf_type_lookup(const char *name);
const mf_type_info *mf_type_table(size_t *n);

#endif /* PCWGEN_MANIFEST_H */
