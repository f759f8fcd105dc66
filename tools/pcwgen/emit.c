/* SPDX-License-Identifier: MIT */
/*
 * emit.c - the generated header: what CTRPP writes for PCW, in pcw's terms.
 *
 * For each counterset: counter-id macros, the data-block types (the
 * provider's own structs, or one generated struct), the registration
 * handle, and static inline InitRegistrationInformation / Register /
 * Unregister / Create / Close / Add functions; then CounterInitialize and
 * CounterCleanup for all countersets. Everything is `static inline` except
 * the handles, which are weak definitions, so the header can be included by
 * any number of translation units; the provider's implementation comes, as
 * for any program, from the one file that defines
 * PCW_PROVIDER_IMPLEMENTATION before including pcw/provider.h (or this
 * header).
 *
 * Output is deterministic (no dates, no paths beyond the name given) so
 * that golden files compare byte for byte.
 */
#include <string.h>

#include <pcw/histogram.h>
#include <pcw/types.h>

#include "emit.h"

typedef struct em {
    FILE *f;
    const char *P;           /* prefix */
    const mf_provider *prov; /* the provider of the counterset being emitted */
} em;

#define out(e, ...) fprintf((e)->f, __VA_ARGS__)

/* A C string literal for UTF-8 text. Bytes >= 0x80 pass through (the
 * compiler's source and execution sets are UTF-8); control characters,
 * quotes and backslashes are escaped; "??" is split so no trigraph forms
 * (-std=c11 enables them). */
static void c_string(em *e, const char *s)
{
    if (!s) {
        out(e, "NULL");
        return;
    }
    fputc('"', e->f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", e->f);
            break;
        case '\\':
            fputs("\\\\", e->f);
            break;
        case '\n':
            fputs("\\n", e->f);
            break;
        case '\t':
            fputs("\\t", e->f);
            break;
        case '\r':
            fputs("\\r", e->f);
            break;
        case '?':
            /* Escape a '?' that follows one: trigraphs are replaced
             * before escapes are read, so "\\??=" would still be one. */
            fputs(p > (const unsigned char *)s && p[-1] == '?' ? "\\?" : "?", e->f);
            break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                out(e, "\\%03o", *p);
            else
                fputc(*p, e->f);
        }
    }
    fputc('"', e->f);
}

/* Manifest text inside a comment: no "*" "/" pair, no control characters,
 * no non-ASCII bytes (kept out of comments so the header stays ASCII
 * outside string literals). */
static void c_comment(em *e, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '*' && p[1] == '/')
            fputs("* ", e->f);
        else if (*p < 0x20 || *p >= 0x7f)
            fputc('?', e->f);
        else
            fputc(*p, e->f);
    }
}

static const char *aggregate_macro(uint32_t a)
{
    switch (a) {
    case PCW_AGGREGATE_TOTAL:
        return "PCW_AGGREGATE_TOTAL";
    case PCW_AGGREGATE_AVERAGE:
        return "PCW_AGGREGATE_AVERAGE";
    case PCW_AGGREGATE_MIN:
        return "PCW_AGGREGATE_MIN";
    case PCW_AGGREGATE_MAX:
        return "PCW_AGGREGATE_MAX";
    default:
        return "PCW_AGGREGATE_UNDEFINED";
    }
}

static void attributes(em *e, uint32_t a)
{
    static const struct {
        uint32_t bit;
        const char *macro;
    } bits[] = {
        {PCW_ATTR_REFERENCE, "PCW_ATTR_REFERENCE"},
        {PCW_ATTR_NO_DISPLAY, "PCW_ATTR_NO_DISPLAY"},
        {PCW_ATTR_NO_DIGIT_GROUPING, "PCW_ATTR_NO_DIGIT_GROUPING"},
        {PCW_ATTR_DISPLAY_AS_HEX, "PCW_ATTR_DISPLAY_AS_HEX"},
        {PCW_ATTR_DISPLAY_AS_REAL, "PCW_ATTR_DISPLAY_AS_REAL"},
    };
    int any = 0;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (a & bits[i].bit)
            out(e, "%s%s", any++ ? " | " : "", bits[i].macro);
    if (!any)
        out(e, "0");
}

/* A reference to another counter, when there is one: PCW_REF(id). None is
 * zero, pcw_counter_desc's default, and is left out. */
static void counter_ref(em *e, const char *field, uint32_t id, const char *comment)
{
    if (id != PCW_NO_COUNTER)
        out(e, "            .%s = PCW_REF(%u),%s\n", field, id, comment);
}

/* The C type of a counterset's block b, and its parameter name. User-mode
 * sets have one generated block type, P<Set>_values. */
static void block_type(em *e, const mf_counterset *s, size_t b)
{
    if (s->kernel_style)
        out(e, "%s", s->structs[b].type);
    else
        out(e, "%s%s_values", e->P, s->ident);
}

static const char *block_param(const mf_counterset *s, size_t b)
{
    return s->kernel_style ? s->structs[b].name : "values";
}

static size_t block_count(const mf_counterset *s)
{
    return s->kernel_style ? s->nstructs : 1;
}

static const char *counter_field(const mf_counter *k)
{
    return k->field ? k->field : k->ident;
}

static int has_histogram(const mf_manifest *m)
{
    for (size_t p = 0; p < m->nproviders; p++)
        for (size_t i = 0; i < m->providers[p].nsets; i++)
            for (size_t j = 0; j < m->providers[p].sets[i].ncounters; j++)
                if (m->providers[p].sets[i].counters[j].histogram)
                    return 1;
    return 0;
}

/* A histogram counter's type, made by PCW_HISTOGRAM_TYPE: P<Set>_<C>_hist. */
static void hist_type(em *e, const mf_counterset *s, const mf_counter *k)
{
    out(e, "%s%s_%s_hist", e->P, s->ident, k->ident);
}

/* ---- file prologue ------------------------------------------------------ */

static void prologue(em *e, const mf_manifest *m, const emit_options *opt)
{
    char guard[256];
    size_t g = 0;
    const char *base = opt->source;
    const char *slash = strrchr(base, '/');
    if (slash)
        base = slash + 1;
    g += (size_t)snprintf(guard, sizeof guard, "PCWGEN_");
    for (const char *p = opt->prefix; *p && g < 100; p++)
        guard[g++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
    if (*opt->prefix)
        guard[g++] = '_';
    for (const char *p = base; *p && *p != '.' && g < 200; p++) {
        char ch = *p;
        if (ch >= 'a' && ch <= 'z')
            ch = (char)(ch - 'a' + 'A');
        else if (!((ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
            ch = '_';
        guard[g++] = ch;
    }
    snprintf(guard + g, sizeof guard - g, "_H");

    out(e, "/*\n * Generated by pcwgen from ");
    c_comment(e, base);
    out(e, "; do not edit.\n");
    out(e, " * Counters schema %s", m->schema_version ? m->schema_version : "(unspecified)");
    if (*opt->prefix)
        out(e, "; prefix %s", opt->prefix);
    out(e, ".\n *\n");
    out(e, " * C11 with GNU extensions (__attribute__((weak))). One source file of the\n"
           " * program defines PCW_PROVIDER_IMPLEMENTATION before including this header\n"
           " * (or <pcw/provider.h>): it compiles the provider's implementation. Link\n"
           " * with `pkg-config --libs pcw-provider` (liburcu-bp, liburcu-cds, pthread).\n");
    int kernel = 0;
    for (size_t p = 0; p < m->nproviders; p++)
        for (size_t i = 0; i < m->providers[p].nsets; i++)
            kernel = kernel || m->providers[p].sets[i].kernel_style;
    if (kernel) {
        out(e, " *\n * The including file must define these data-block types first:\n");
        for (size_t p = 0; p < m->nproviders; p++)
            for (size_t i = 0; i < m->providers[p].nsets; i++) {
                const mf_counterset *s = &m->providers[p].sets[i];
                for (size_t b = 0; s->kernel_style && b < s->nstructs; b++)
                    out(e, " *   %s (counterSet %s, struct %s)\n", s->structs[b].type, s->ident,
                        s->structs[b].name);
            }
    }
    out(e, " */\n#ifndef %s\n#define %s\n\n", guard, guard);
    /* provider.h first: it sets the feature macros its implementation
     * needs, which only works before any system header. It declares
     * pcw_add_instance too (pcw/callback.h). */
    out(e, "#include <pcw/provider.h>\n\n#include <stddef.h>\n#include <stdint.h>\n"
           "#include <string.h>\n\n");
    out(e,
        "#ifndef PCWGEN_FIELD_SIZE\n"
        "#define PCWGEN_FIELD_SIZE(type, member) sizeof(((type *)0)->member)\n"
        "#endif\n"
        "#ifndef PCWGEN_CHECK_FIELD\n"
        "/* pcw_register's rules for a counter's field, checked at compile time:\n"
        " * its size suits its counter type (PCW_COUNTER_SIZE_OK: 8 bytes for a\n"
        " * LARGE type, else 4, or 8 where pcw allows it) and it is aligned to its\n"
        " * size. */\n"
        "#define PCWGEN_CHECK_FIELD(type, member, counter_type)                                  "
        "\\\n"
        "    _Static_assert(PCW_COUNTER_SIZE_OK(counter_type, PCWGEN_FIELD_SIZE(type, member)),  "
        "\\\n"
        "                   #type \".\" #member \": its size does not suit \" #counter_type);      "
        "  \\\n"
        "    _Static_assert(offsetof(type, member) %% PCWGEN_FIELD_SIZE(type, member) == 0,       "
        "\\\n"
        "                   #type \".\" #member \": a counter field must be aligned to its "
        "size\")\n"
        "#define PCWGEN_CHECK_BLOCK(type) \\\n"
        "    _Static_assert(_Alignof(type) <= 8, #type \": pcw data blocks are 8-byte aligned\")\n"
        "#endif\n\n");
    if (has_histogram(m))
        out(e, "#ifndef PCWGEN_CHECK_HISTOGRAM\n"
               "/* A histogram field (pcw/histogram.h): exactly its histogram type's size,\n"
               " * 8-byte aligned. */\n"
               "#define PCWGEN_CHECK_HISTOGRAM(type, member, hist_type)                            "
               "  \\\n"
               "    _Static_assert(PCWGEN_FIELD_SIZE(type, member) == sizeof(hist_type),           "
               " \\\n"
               "                   #type \".\" #member \": not the size of \" #hist_type);         "
               "       \\\n"
               "    _Static_assert(offsetof(type, member) %% 8 == 0,                               "
               "  \\\n"
               "                   #type \".\" #member \": a histogram is 8-byte aligned\")\n"
               "#endif\n\n");
}

/* ---- provider ----------------------------------------------------------- */

static void provider(em *e, const mf_provider *p)
{
    out(e, "/* ==== provider ");
    c_comment(e, p->name);
    out(e, " (manifest line %lu) ==== */\n\n", p->line);
    const struct {
        const char *suffix, *value;
    } macros[] = {
        {"PROVIDER_NAME", p->name},          {"PROVIDER_GUID", p->guid},
        {"PROVIDER_TYPE", p->type},          {"PROVIDER_CALLBACK", p->callback},
        {"PROVIDER_SYMBOL", p->symbol},      {"APPLICATION_IDENTITY", p->application_identity},
        {"RESOURCE_BASE", p->resource_base},
    };
    out(e,
        "/* The provider's manifest attributes (NULL when absent). pcw has no\n"
        " * provider registry: pass the name to pcw_provider_open (see\n"
        " * %s%s_ProviderOptions) so consumers see it. */\n",
        e->P, p->ident);
    for (size_t i = 0; i < sizeof macros / sizeof macros[0]; i++) {
        out(e, "#define %s%s_%s ", e->P, p->ident, macros[i].suffix);
        c_string(e, macros[i].value);
        out(e, "\n");
    }
    out(e,
        "\nstatic inline pcw_provider_options %s%s_ProviderOptions(void)\n{\n"
        "    pcw_provider_options o;\n"
        "    memset(&o, 0, sizeof o);\n"
        "    o.name = %s%s_PROVIDER_NAME;\n"
        "    return o;\n}\n\n",
        e->P, p->ident, e->P, p->ident);
}

/* ---- counterset --------------------------------------------------------- */

static void counter_ids(em *e, const mf_counterset *s)
{
    out(e, "/* Counter ids. */\n");
    for (size_t i = 0; i < s->ncounters; i++)
        out(e, "#define %s%s_%s_ID %uu\n", e->P, s->ident, s->counters[i].ident, s->counters[i].id);
    out(e, "\n");
}

static void block_types(em *e, const mf_counterset *s)
{
    const char *P = e->P, *S = s->ident;
    for (size_t i = 0; i < s->ncounters; i++) {
        const mf_counter *k = &s->counters[i];
        if (!k->histogram)
            continue;
        int ns = k->hist_unit == PCW_HIST_UNIT_NS;
        out(e,
            "/* Histogram %s (id %u, pcw/histogram.h): %s, schema %d,\n"
            " * buckets 2^%d .. 2^%d%s, %u bytes. */\n",
            k->ident, k->id, ns ? "nanoseconds observed" : "values as observed", k->hist_schema,
            k->hist_min_exp, k->hist_max_exp, ns ? " s" : "", k->size);
        out(e, "PCW_HISTOGRAM_TYPE(");
        hist_type(e, s, k);
        out(e, ", %s, %d, %d, %d);\n\n", ns ? "PCW_HIST_UNIT_NS" : "PCW_HIST_UNIT_ONE",
            k->hist_schema, k->hist_min_exp, k->hist_max_exp);
    }
    if (!s->kernel_style) {
        out(e, "/* The instance's data block: one field per counter, sized by its type. */\n");
        out(e, "typedef struct %s%s_values {\n", P, S);
        for (size_t i = 0; i < s->ncounters; i++) {
            const mf_counter *k = &s->counters[i];
            /* _Alignas keeps 8-byte counters 8-aligned even where the ABI
             * aligns uint64_t to 4 (i386); pcw_register requires it. */
            if (k->histogram) {
                out(e, "    _Alignas(8) ");
                hist_type(e, s, k);
                out(e, " %s; /* id %u, histogram */\n", k->ident, k->id);
            } else {
                out(e, "    %s %s; /* id %u, %s */\n",
                    k->size == 8 ? "_Alignas(8) uint64_t" : "uint32_t", k->ident, k->id,
                    k->type_name);
            }
        }
        out(e, "} %s%s_values;\n\n", P, S);
    }
    /* Checked for both styles: the generated struct passes trivially; a
     * provider's struct must have 4- or 8-byte, naturally aligned fields,
     * as PcwRegister and pcw_register require. */
    out(e, "/* Layout checks: every counter field's size suits its type, and it is\n"
           " * aligned to its size. */\n");
    for (size_t i = 0; i < s->ncounters; i++) {
        const mf_counter *k = &s->counters[i];
        out(e, k->histogram ? "PCWGEN_CHECK_HISTOGRAM(" : "PCWGEN_CHECK_FIELD(");
        block_type(e, s, (size_t)k->block);
        out(e, ", %s, ", counter_field(k));
        if (k->histogram)
            hist_type(e, s, k);
        else
            out(e, "%s", k->type_macro);
        out(e, ");\n");
    }
    for (size_t b = 0; b < block_count(s); b++) {
        out(e, "PCWGEN_CHECK_BLOCK(");
        block_type(e, s, b);
        out(e, ");\n");
    }
    out(e, "\n");
}

static void counter_desc(em *e, const mf_counterset *s, const mf_counter *k)
{
    out(e, "        {\n");
    out(e, "            .id = %u,\n", k->id);
    out(e, "            .type = %s, /* %s%s */\n", k->type_macro, k->type_name,
        k->histogram ? ", pcw:histogram" : "");
    if (k->histogram) {
        out(e, "            .histogram = (uint32_t)");
        hist_type(e, s, k);
        out(e, "_shape,\n");
    }
    out(e, "            .block = %d,\n", k->block);
    out(e, "            .offset = (uint32_t)offsetof(");
    block_type(e, s, (size_t)k->block);
    out(e, ", %s),\n", counter_field(k));
    out(e, "            .size = (uint32_t)PCWGEN_FIELD_SIZE(");
    block_type(e, s, (size_t)k->block);
    out(e, ", %s),\n", counter_field(k));
    counter_ref(e, "base_ref", k->base_id,
                k->base_implicit ? " /* the counter after it (no baseID) */" : "");
    counter_ref(e, "perf_time_ref", k->perf_time_id, "");
    counter_ref(e, "perf_freq_ref", k->perf_freq_id, "");
    counter_ref(e, "multi_ref", k->multi_id, "");
    out(e, "            .default_scale = %d,\n", (int)k->default_scale);
    out(e, "            .detail_level = %s,\n",
        k->detail_level == PCW_DETAIL_ADVANCED ? "PCW_DETAIL_ADVANCED" : "PCW_DETAIL_STANDARD");
    out(e, "            .aggregate = %s,\n", aggregate_macro(k->aggregate));
    out(e, "            .attributes = ");
    attributes(e, k->attributes);
    out(e, ",\n            .name = ");
    c_string(e, k->name);
    out(e, ",\n            .description = ");
    c_string(e, k->description);
    out(e, ",\n            .uri = ");
    c_string(e, k->uri);
    out(e, ",\n            .symbol = ");
    c_string(e, k->symbol);
    out(e, ",\n        },\n");
}

static void init_registration(em *e, const mf_counterset *s)
{
    const char *P = e->P, *S = s->ident;
    out(e, "/* Fill *info from the manifest (PCW_REGISTRATION_INFORMATION). The\n"
           " * descriptors are static: info stays valid after the call. Change\n"
           " * info->flags (e.g. PCW_REG_SEQCOUNT) before pcw_register if needed. */\n");
    out(e,
        "static inline void\n%sInitRegistrationInformation%s(pcw_callback cb, void *ctx,\n"
        "%*spcw_registration_info *info)\n{\n",
        P, S, (int)(strlen(P) + strlen(S) + 28), "");
    out(e, "    static const pcw_counter_desc counters[] = {\n");
    for (size_t i = 0; i < s->ncounters; i++)
        counter_desc(e, s, &s->counters[i]);
    out(e, "    };\n");
    out(e, "    static const uint32_t block_sizes[] = {\n");
    for (size_t b = 0; b < block_count(s); b++) {
        out(e, "        (uint32_t)sizeof(");
        block_type(e, s, b);
        out(e, "),\n");
    }
    out(e, "    };\n");
    out(e, "    memset(info, 0, sizeof *info);\n");
    out(e, "    info->version = PCW_CURRENT_VERSION;\n");
    out(e, "    info->flags = 0;\n");
    out(e, "    info->name = ");
    c_string(e, s->name);
    out(e, ";\n    info->description = ");
    c_string(e, s->description);
    out(e, ";\n    info->guid = ");
    c_string(e, s->guid);
    out(e, ";\n    info->uri = ");
    c_string(e, s->uri);
    out(e, ";\n    info->symbol = ");
    c_string(e, s->symbol);
    out(e, ";\n    info->provider_name = ");
    c_string(e, e->prov ? e->prov->name : NULL);
    out(e, ";\n    info->provider_guid = ");
    c_string(e, e->prov ? e->prov->guid : NULL);
    out(e, ";\n    info->provider_type = ");
    c_string(e, e->prov ? e->prov->type : NULL);
    out(e, ";\n    info->provider_callback = ");
    c_string(e, e->prov ? e->prov->callback : NULL);
    out(e, ";\n    info->application_identity = ");
    c_string(e, e->prov ? e->prov->application_identity : NULL);
    out(e, ";\n    info->instance_type = %s; /* %s */\n", s->instance_macro, s->instances);
    out(e, "    info->counter_count = (uint32_t)(sizeof counters / sizeof counters[0]);\n");
    out(e, "    info->counters = counters;\n");
    out(e, "    info->block_count = (uint32_t)(sizeof block_sizes / sizeof block_sizes[0]);\n");
    out(e, "    info->block_sizes = block_sizes;\n");
    out(e, "    info->callback = cb;\n");
    out(e, "    info->callback_context = ctx;\n}\n\n");
}

/* ", const T0 *name0, const T1 *name1" */
static void block_params(em *e, const mf_counterset *s, int indent)
{
    for (size_t b = 0; b < block_count(s); b++) {
        out(e, ",\n%*sconst ", indent, "");
        block_type(e, s, b);
        out(e, " *%s", block_param(s, b));
    }
}

static void fill_data(em *e, const mf_counterset *s)
{
    for (size_t b = 0; b < block_count(s); b++) {
        out(e, "    data[%zu].data = %s;\n", b, block_param(s, b));
        out(e, "    data[%zu].size = (uint32_t)sizeof(", b);
        block_type(e, s, b);
        out(e, ");\n");
    }
}

/* A histogram's typed observers on the block that holds it. In kernel
 * style the provider's field may be declared as any 8-byte aligned object
 * of the right size (uint64_t[PCW_HISTOGRAM_WORDS(...)]), hence the cast;
 * PCWGEN_CHECK_HISTOGRAM has checked size and alignment. */
static void observers(em *e, const mf_counterset *s, const mf_counter *k)
{
    if (!k->histogram)
        return;
    static const char *const forms[] = {"", "_atomic"};
    out(e,
        "/* Count v (%s) in histogram %s of the instance's %s\n"
        " * block: _observe from the instance's one writer thread (plain stores),\n"
        " * _observe_atomic from any number of threads (pcw/histogram.h). */\n",
        k->hist_unit == PCW_HIST_UNIT_NS ? "nanoseconds" : "as observed", k->ident,
        block_param(s, (size_t)k->block));
    for (size_t f = 0; f < 2; f++) {
        out(e, "static inline void %s%s_%s_observe%s(", e->P, s->ident, k->ident, forms[f]);
        block_type(e, s, (size_t)k->block);
        out(e, " *%s, uint64_t v)\n{\n    ", block_param(s, (size_t)k->block));
        hist_type(e, s, k);
        out(e, "_observe%s(", forms[f]);
        if (s->kernel_style) {
            out(e, "(");
            hist_type(e, s, k);
            out(e, " *)(void *)");
        }
        out(e, "&%s->%s, v);\n}\n", block_param(s, (size_t)k->block), counter_field(k));
    }
    out(e, "\n");
}

static void functions(em *e, const mf_counterset *s)
{
    const char *P = e->P, *S = s->ident;
    size_t nb = block_count(s);

    out(e,
        "/* The registration handle, set by %sRegister%s. A weak definition (GCC's\n"
        " * DECLSPEC_SELECTANY): each translation unit that includes this header\n"
        " * defines it and the linker keeps one. */\n",
        P, S);
    out(e, "__attribute__((weak)) pcw_registration *%s%s = NULL;\n\n", P, S);

    init_registration(e, s);

    out(e, "/* PcwRegister through the manifest: stores the handle in %s%s. */\n", P, S);
    out(e,
        "static inline int %sRegister%s(pcw_provider *prov, pcw_callback cb, void *ctx)\n{\n"
        "    pcw_registration_info info;\n"
        "    %sInitRegistrationInformation%s(cb, ctx, &info);\n"
        "    return pcw_register(&%s%s, prov, &info);\n}\n\n",
        P, S, P, S, P, S);

    out(e, "/* PcwUnregister: closes the instances still open. */\n");
    out(e,
        "static inline void %sUnregister%s(void)\n{\n"
        "    pcw_unregister(%s%s);\n"
        "    %s%s = NULL;\n}\n\n",
        P, S, P, S, P, S);

    /* Unlike PcwCreateInstance, which goes on reading the caller's blocks,
     * pcw copies them into the segment once: the block pointers the
     * provider updates from then on are handed back here (README,
     * "Porting from PCW"). */
    out(e,
        "/* PcwCreateInstance: the block%s give%s the initial values (NULL: zeros),\n"
        " * copied once into the segment. The *_out pointer%s (NULL: not wanted)\n"
        " * receive%s the instance's block%s in the segment, where counters are\n"
        " * stored from now on (also %s%s_*_of(*inst)); NULL on failure. */\n",
        nb > 1 ? "s" : "", nb > 1 ? "" : "s", nb > 1 ? "s" : "", nb > 1 ? "" : "s",
        nb > 1 ? "s" : "", P, S);
    int ind = (int)(strlen(P) + strlen(S) + 24);
    out(e, "static inline int %sCreate%s(pcw_instance **inst, const char *name", P, S);
    block_params(e, s, ind);
    for (size_t b = 0; b < nb; b++) {
        out(e, ",\n%*s", ind, "");
        block_type(e, s, b);
        out(e, " **%s_out", block_param(s, b));
    }
    out(e, ")\n{\n    pcw_data data[%zu];\n", nb);
    fill_data(e, s);
    out(e, "    int rc = pcw_create_instance(inst, %s%s, name, %zu, data);\n", P, S, nb);
    for (size_t b = 0; b < nb; b++) {
        out(e, "    if (%s_out)\n        *%s_out =\n            rc == PCW_OK ? (",
            block_param(s, b), block_param(s, b));
        block_type(e, s, b);
        out(e, " *)pcw_instance_block(*inst, %zu) : NULL;\n", b);
    }
    out(e, "    return rc;\n}\n\n");

    out(e, "/* PcwCloseInstance. */\n");
    out(e,
        "static inline void %sClose%s(pcw_instance *inst)\n{\n"
        "    pcw_close_instance(inst);\n}\n\n",
        P, S);

    out(e, "/* PcwAddInstance, for a callback's ENUMERATE_INSTANCES / COLLECT_DATA:\n"
           " * with every block NULL, only the instance (no data) is added. */\n");
    out(e, "static inline int %sAdd%s(pcw_buffer *buffer, const char *name, uint32_t id", P, S);
    block_params(e, s, (int)(strlen(P) + strlen(S) + 21));
    out(e, ")\n{\n    pcw_data data[%zu];\n    if (", nb);
    for (size_t b = 0; b < nb; b++)
        out(e, "%s!%s", b ? " && " : "", block_param(s, b));
    out(e, ")\n        return pcw_add_instance(buffer, name, id, 0, NULL);\n");
    fill_data(e, s);
    out(e, "    return pcw_add_instance(buffer, name, id, %zu, data);\n}\n\n", nb);

    for (size_t b = 0; b < nb; b++) {
        out(e,
            "/* The instance's %s block inside the segment (valid until it is\n"
            " * closed): store counter values here. */\n",
            block_param(s, b));
        out(e, "static inline ");
        block_type(e, s, b);
        out(e, " *\n%s%s_%s_of(const pcw_instance *inst)\n{\n    return (", P, S,
            block_param(s, b));
        block_type(e, s, b);
        out(e, " *)pcw_instance_block(inst, %zu);\n}\n\n", b);
    }
    for (size_t i = 0; i < s->ncounters; i++)
        observers(e, s, &s->counters[i]);
}

static void counterset(em *e, const mf_counterset *s)
{
    out(e, "/* ==== counterSet ");
    c_comment(e, s->name);
    out(e, " (%s%s, %s, manifest line %lu) ==== */\n\n", e->P, s->ident, s->instances, s->line);
    counter_ids(e, s);
    block_types(e, s);
    functions(e, s);
}

/* ---- all countersets ---------------------------------------------------- */

static void initialize_all(em *e, const mf_manifest *m)
{
    const char *P = e->P;
    out(e, "/* ==== all countersets ==== */\n\n");
    out(e, "/* Unregister every counterset of the manifest (CTRPP's CounterCleanup).\n"
           " * Call it before pcw_provider_close, which would free the handles. */\n");
    out(e, "static inline void %sCounterCleanup(void)\n{\n", P);
    for (size_t p = m->nproviders; p-- > 0;)
        for (size_t i = m->providers[p].nsets; i-- > 0;)
            out(e, "    %sUnregister%s();\n", P, m->providers[p].sets[i].ident);
    out(e, "}\n\n");
    out(e, "/* Register every counterset of the manifest, each with cb and ctx\n"
           " * (CTRPP's CounterInitialize). On failure, unregisters them all and\n"
           " * returns the error. */\n");
    out(e,
        "static inline int %sCounterInitialize(pcw_provider *prov, pcw_callback cb, void *ctx)\n"
        "{\n    int rc = PCW_OK;\n",
        P);
    for (size_t p = 0; p < m->nproviders; p++)
        for (size_t i = 0; i < m->providers[p].nsets; i++) {
            out(e, "    if (rc == PCW_OK)\n");
            out(e, "        rc = %sRegister%s(prov, cb, ctx);\n", P, m->providers[p].sets[i].ident);
        }
    out(e, "    if (rc != PCW_OK)\n        %sCounterCleanup();\n", P);
    out(e, "    return rc;\n}\n\n");
}

int emit_header(FILE *f, const mf_manifest *m, const emit_options *opt)
{
    em e = {f, opt->prefix ? opt->prefix : "", NULL};
    emit_options o = *opt;
    o.prefix = e.P;
    prologue(&e, m, &o);
    for (size_t p = 0; p < m->nproviders; p++) {
        provider(&e, &m->providers[p]);
        e.prov = &m->providers[p];
        for (size_t i = 0; i < m->providers[p].nsets; i++)
            counterset(&e, &m->providers[p].sets[i]);
        e.prov = NULL;
    }
    initialize_all(&e, m);
    out(&e, "#endif\n");
    fflush(f);
    return ferror(f) ? -1 : 0;
}
