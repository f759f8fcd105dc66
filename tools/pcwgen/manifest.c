/* SPDX-License-Identifier: MIT */
/*
 * manifest.c - reads the <counters> section of an instrumentation manifest
 * with expat (namespace processing on) into the model of manifest.h.
 *
 * Only elements in the counters namespace are interpreted; the rest of the
 * manifest (events, localization...) is skipped, wherever <counters> sits.
 * Per-attribute checks happen as each start tag arrives, so that errors
 * carry the tag's line; checks that need a whole counterSet (base counters,
 * duplicates, struct references) run at its end tag (check.c), using the
 * lines recorded in the model.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include <pcw/histogram.h>
#include <pcw/types.h>

#include "internal.h"

/* expat joins namespace URI and local name with this character. It cannot
 * occur in a local name, so the last one found splits them. */
#define NS_SEP '|'

typedef enum kind {
    K_OUTSIDE, /* an element outside any <counters> */
    K_FOREIGN, /* another namespace's element inside <counters> */
    K_COUNTERS,
    K_PROVIDER,
    K_COUNTERSET,
    K_STRUCTS,
    K_STRUCT,
    K_COUNTER,
    K_COUNTER_ATTRIBUTES,
    K_COUNTER_ATTRIBUTE,
} kind;

static const struct {
    const char *name;
    kind k;
    kind parent;
} elements[] = {
    {"counters", K_COUNTERS, K_OUTSIDE},
    {"provider", K_PROVIDER, K_COUNTERS},
    {"counterSet", K_COUNTERSET, K_PROVIDER},
    {"structs", K_STRUCTS, K_COUNTERSET},
    {"struct", K_STRUCT, K_STRUCTS},
    {"counter", K_COUNTER, K_COUNTERSET},
    {"counterAttributes", K_COUNTER_ATTRIBUTES, K_COUNTER},
    {"counterAttribute", K_COUNTER_ATTRIBUTE, K_COUNTER_ATTRIBUTES},
};

typedef struct ctx {
    XML_Parser xp;
    mf_manifest *m;
    mf_error *err;
    int failed;
    kind *stack; /* kind of every open element */
    size_t depth, cap;
    int saw_counters;
    unsigned long root_line;
    unsigned long foreign_counters_line; /* a <counters> in another namespace */
    char foreign_counters_ns[128];
    mf_provider *prov;
    mf_counterset *set;
    mf_counter *ctr;
} ctx;

static unsigned long line_of(ctx *c)
{
    return (unsigned long)XML_GetCurrentLineNumber(c->xp);
}

/* Record the first error (at `line`) and stop expat; later callbacks do
 * nothing. */
__attribute__((format(printf, 3, 4))) static int fail_at(ctx *c, unsigned long line,
                                                         const char *fmt, ...)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    c->err->line = line;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
    va_end(ap);
    XML_StopParser(c->xp, XML_FALSE);
    return -1;
}

#define fail(c, ...) fail_at((c), line_of(c), __VA_ARGS__)

static int oom(ctx *c)
{
    return fail(c, "out of memory");
}

/* ---- attributes --------------------------------------------------------- */

/* An unqualified attribute's value, or NULL. (Unqualified attributes have
 * no namespace, so their names come without a separator.) */
static const char *attr(const XML_Char **atts, const char *name)
{
    for (size_t i = 0; atts[i]; i += 2)
        if (strcmp(atts[i], name) == 0)
            return atts[i + 1];
    return NULL;
}

static const char *required(ctx *c, const XML_Char **atts, const char *elem, const char *name)
{
    const char *v = attr(atts, name);
    if (!v)
        fail(c, "<%s> lacks the required attribute %s", elem, name);
    return v;
}

/* A copy of the value, or NULL when absent (or out of memory: c->failed). */
static const char *dup_attr(ctx *c, const XML_Char **atts, const char *name)
{
    const char *v = attr(atts, name);
    if (!v)
        return NULL;
    char *d = mf_strdup(c->m, v);
    if (!d)
        oom(c);
    return d;
}

/* Strip XML whitespace around enumerated and numeric values (the schema's
 * types collapse it). Returns a pointer into a copy in `buf`. */
static const char *trim(const char *v, char *buf, size_t cap)
{
    while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r')
        v++;
    size_t n = strlen(v);
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\n' || v[n - 1] == '\r'))
        n--;
    if (n >= cap)
        n = cap - 1; /* too long to be valid anyway; still fails the check */
    memcpy(buf, v, n);
    buf[n] = 0;
    return buf;
}

/* UInt32Type: decimal, or hexadecimal with 0x. */
static int parse_u32(const char *v, unsigned long *out)
{
    char buf[64];
    const char *s = trim(v, buf, sizeof buf);
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    if (!*s)
        return -1;
    unsigned long long x = 0;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return -1;
        x = x * (unsigned)base + (unsigned)d;
        if (x > 0xFFFFFFFFull)
            return -1;
    }
    *out = (unsigned long)x;
    return 0;
}

/* A decimal integer from lo to hi, with an optional sign. */
static int parse_int(const char *v, int lo, int hi, int *out)
{
    char buf[64];
    const char *s = trim(v, buf, sizeof buf);
    int neg = 0;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (!*s || strlen(s) > 4)
        return -1;
    int x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        x = x * 10 + (*s - '0');
    }
    x = neg ? -x : x;
    if (x < lo || x > hi)
        return -1;
    *out = x;
    return 0;
}

static int parse_scale(const char *v, int32_t *out)
{
    int x;
    if (parse_int(v, -10, 10, &x) != 0)
        return -1;
    *out = x;
    return 0;
}

/* {xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}, braces optional. */
static int valid_guid(const char *g)
{
    size_t n = strlen(g);
    if (n == 38 && g[0] == '{' && g[37] == '}')
        g++, n -= 2;
    if (n != 36)
        return 0;
    for (size_t i = 0; i < 36; i++) {
        char ch = g[i];
        int hex = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
        if (i == 8 || i == 13 || i == 18 || i == 23 ? ch != '-' : !hex)
            return 0;
    }
    return 1;
}

/* Strings that reach pcw_register must fit its limits. */
static int check_string(ctx *c, const char *elem, const char *attrname, const char *v, int nonempty)
{
    if (!v)
        return 0;
    if (nonempty && !*v) {
        fail(c, "<%s> has an empty %s", elem, attrname);
        return -1;
    }
    if (strlen(v) > PCW_MAX_STRING_BYTES) {
        fail(c, "<%s> %s is longer than %u bytes", elem, attrname, PCW_MAX_STRING_BYTES);
        return -1;
    }
    return 0;
}

static int check_symbol(ctx *c, const char *elem, const char *sym)
{
    if (!sym)
        return 0;
    if (!mf_is_c_ident(sym)) {
        fail(c, "<%s> symbol \"%s\" is not a C identifier", elem, sym);
        return -1;
    }
    if (mf_is_c_keyword(sym)) {
        fail(c, "<%s> symbol \"%s\" is a C keyword", elem, sym);
        return -1;
    }
    if (strlen(sym) > MF_MAX_IDENT) {
        fail(c, "<%s> symbol is longer than %d characters", elem, MF_MAX_IDENT);
        return -1;
    }
    return 0;
}

/* ---- elements ----------------------------------------------------------- */

static int start_counters(ctx *c, const XML_Char **atts)
{
    const char *v = attr(atts, "schemaVersion");
    c->saw_counters = 1;
    if (v) {
        char buf[32];
        const char *s = trim(v, buf, sizeof buf);
        /* 1.x and 2.0 share everything pcwgen reads. */
        int ok = strcmp(s, "1") == 0 || strcmp(s, "2") == 0 || strcmp(s, "2.0") == 0;
        if (!ok && s[0] == '1' && s[1] == '.' && s[2]) {
            ok = 1;
            for (const char *p = s + 2; *p; p++)
                ok = ok && *p >= '0' && *p <= '9';
        }
        if (!ok)
            return fail(c, "unsupported counters schemaVersion \"%s\" (pcwgen reads 1.x and 2.0)",
                        v);
        if (!c->m->schema_version && !(c->m->schema_version = mf_strdup(c->m, s)))
            oom(c);
    }
    return c->failed ? -1 : 0;
}

static int start_provider(ctx *c, const XML_Char **atts)
{
    mf_manifest *m = c->m;
    if (!required(c, atts, "provider", "providerName") ||
        !required(c, atts, "provider", "providerGuid"))
        return -1;
    if (mf_reserve(m, (void **)&m->providers, &m->providers_cap, m->nproviders,
                   sizeof *m->providers) != 0)
        return oom(c);
    mf_provider *p = &m->providers[m->nproviders++];
    memset(p, 0, sizeof *p);
    p->line = line_of(c);
    p->name = dup_attr(c, atts, "providerName");
    p->guid = dup_attr(c, atts, "providerGuid");
    p->type = dup_attr(c, atts, "providerType");
    p->callback = dup_attr(c, atts, "callback");
    p->symbol = dup_attr(c, atts, "symbol");
    p->application_identity = dup_attr(c, atts, "applicationIdentity");
    p->resource_base = dup_attr(c, atts, "resourceBase");
    if (c->failed)
        return -1;
    c->prov = p;
    c->set = NULL;
    if (check_string(c, "provider", "providerName", p->name, 1) != 0)
        return -1;
    if (check_symbol(c, "provider", p->symbol) != 0)
        return -1;
    p->ident = p->symbol ? p->symbol : mf_make_ident(c->m, p->name);
    if (!p->ident)
        return oom(c);
    if (!*p->ident || strlen(p->ident) > MF_MAX_IDENT)
        return fail(c, "<provider> providerName \"%s\" gives no usable C identifier; add a symbol",
                    p->name);
    if (!valid_guid(p->guid))
        return fail(c, "<provider> providerGuid \"%s\" is not a GUID", p->guid);
    if (p->type && strcmp(p->type, "userMode") != 0 && strcmp(p->type, "kernelMode") != 0)
        return fail(c, "<provider> providerType \"%s\" is not userMode or kernelMode", p->type);
    return c->failed ? -1 : 0;
}

/* The schema's `instances` values, pcw's types (<pcw/types.h> has the
 * PERFLIB mapping) and the macro the header names them by. */
#define INSTANCE_TYPE(name, macro)                                                                 \
    {                                                                                              \
        name, macro, #macro                                                                        \
    }
static const struct {
    const char *name;
    uint32_t type;
    const char *macro;
} instance_types[] = {
    INSTANCE_TYPE("single", PCW_SINGLE_INSTANCE),
    INSTANCE_TYPE("multiple", PCW_MULTI_INSTANCE),
    INSTANCE_TYPE("globalAggregate", PCW_GLOBAL_AGGREGATE),
    INSTANCE_TYPE("multipleAggregate", PCW_MULTI_AGGREGATE),
    INSTANCE_TYPE("globalAggregateHistory", PCW_GLOBAL_AGGREGATE_HISTORY),
    INSTANCE_TYPE("instanceAggregate", PCW_INSTANCE_AGGREGATE),
    INSTANCE_TYPE("multipleAggregateHistory", PCW_MULTI_AGGREGATE_HISTORY),
    INSTANCE_TYPE("instanceAggregateHistory", PCW_INSTANCE_AGGREGATE_HISTORY),
};
#define N_INSTANCE_TYPES (sizeof instance_types / sizeof instance_types[0])

static int start_counterset(ctx *c, const XML_Char **atts)
{
    mf_provider *p = c->prov;
    if (!required(c, atts, "counterSet", "guid") || !required(c, atts, "counterSet", "name"))
        return -1;
    if (mf_reserve(c->m, (void **)&p->sets, &p->sets_cap, p->nsets, sizeof *p->sets) != 0)
        return oom(c);
    mf_counterset *s = &p->sets[p->nsets++];
    memset(s, 0, sizeof *s);
    s->line = line_of(c);
    s->guid = dup_attr(c, atts, "guid");
    s->uri = dup_attr(c, atts, "uri");
    s->name = dup_attr(c, atts, "name");
    s->description = dup_attr(c, atts, "description");
    s->symbol = dup_attr(c, atts, "symbol");
    if (c->failed)
        return -1;
    c->set = s;
    if (!valid_guid(s->guid))
        return fail(c, "<counterSet> guid \"%s\" is not a GUID", s->guid);
    if (check_string(c, "counterSet", "name", s->name, 1) ||
        check_string(c, "counterSet", "description", s->description, 0) ||
        check_string(c, "counterSet", "uri", s->uri, 0) ||
        check_string(c, "counterSet", "symbol", s->symbol, 0) ||
        check_symbol(c, "counterSet", s->symbol))
        return -1;
    const char *inst = attr(atts, "instances");
    size_t it = 0; /* "single", the schema's default */
    if (inst) {
        char buf[64];
        const char *v = trim(inst, buf, sizeof buf);
        while (it < N_INSTANCE_TYPES && strcmp(instance_types[it].name, v) != 0)
            it++;
        if (it == N_INSTANCE_TYPES) {
            char list[256];
            size_t n = 0;
            for (size_t i = 0; i < N_INSTANCE_TYPES && n < sizeof list; i++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                                      instance_types[i].name);
            return fail(c, "<counterSet> instances=\"%s\" is not one of %s", inst, list);
        }
    }
    s->instance_type = instance_types[it].type;
    s->instances = instance_types[it].name;
    s->instance_macro = instance_types[it].macro;
    s->ident = s->symbol ? s->symbol : mf_make_ident(c->m, s->name);
    if (!s->ident)
        return oom(c);
    if (!*s->ident || strlen(s->ident) > MF_MAX_IDENT)
        return fail(c,
                    "<counterSet> name \"%s\" gives no usable C identifier; add a symbol attribute",
                    s->name);
    return c->failed ? -1 : 0;
}

static int start_struct(ctx *c, const XML_Char **atts)
{
    mf_counterset *s = c->set;
    if (!required(c, atts, "struct", "name") || !required(c, atts, "struct", "type"))
        return -1;
    if (s->nstructs >= PCW_MAX_BLOCKS)
        return fail(c, "<counterSet> has more than %u structs", PCW_MAX_BLOCKS);
    if (mf_reserve(c->m, (void **)&s->structs, &s->structs_cap, s->nstructs, sizeof *s->structs) !=
        0)
        return oom(c);
    mf_struct *st = &s->structs[s->nstructs++];
    st->line = line_of(c);
    st->name = dup_attr(c, atts, "name");
    st->type = dup_attr(c, atts, "type");
    if (c->failed)
        return -1;
    if (strlen(st->name) > MF_MAX_IDENT || strlen(st->type) > MF_MAX_IDENT)
        return fail(c, "<struct> name or type is longer than %d characters", MF_MAX_IDENT);
    if (!mf_is_c_ident(st->name) || mf_is_c_keyword(st->name))
        return fail(c, "<struct> name \"%s\" is not a C identifier", st->name);
    /* The name becomes a parameter of Create/Add, next to these. */
    static const char *const reserved[] = {"inst", "name", "id", "buffer", "data"};
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (strcmp(st->name, reserved[i]) == 0)
            return fail(c, "<struct> name \"%s\" is reserved by the generated functions", st->name);
    /* A type name: C identifiers separated by single spaces ("struct x"). */
    const char *t = st->type;
    int ok = *t != 0;
    while (ok && *t) {
        size_t n = strcspn(t, " ");
        char word[256];
        ok = n > 0 && n < sizeof word;
        if (ok) {
            memcpy(word, t, n);
            word[n] = 0;
            ok = mf_is_c_ident(word);
            t += n;
            if (*t == ' ')
                ok = ok && *++t;
        }
    }
    if (!ok)
        fail(c, "<struct> type \"%s\" is not a C type name", st->type);
    return c->failed ? -1 : 0;
}

static const struct {
    const char *name;
    uint32_t v;
} aggregates[] = {
    {"undefined", PCW_AGGREGATE_UNDEFINED},
    {"sum", PCW_AGGREGATE_TOTAL},
    {"avg", PCW_AGGREGATE_AVERAGE},
    {"min", PCW_AGGREGATE_MIN},
    {"max", PCW_AGGREGATE_MAX},
};

/* An optional counter-id reference attribute. */
static int ref_attr(ctx *c, const XML_Char **atts, const char *name, int *has, unsigned long *v)
{
    const char *s = attr(atts, name);
    if (!s)
        return 0;
    if (parse_u32(s, v) != 0 || *v == PCW_NO_COUNTER) {
        fail(c, "<counter> %s=\"%s\" is not a counter id", name, s);
        return -1;
    }
    *has = 1;
    return 0;
}

/* pcw's extension attributes (namespace MF_PCW_NS), qualified names
 * "urn:pcw|local" as expat reports them. */
enum { PA_HISTOGRAM, PA_SCHEMA, PA_MIN_EXP, PA_MAX_EXP, PA_COUNT };
static const char *const pcw_attr_names[PA_COUNT] = {"histogram", "schema", "minExp", "maxExp"};

/* A histogram counter: pcw:histogram="ns|one" with pcw:schema, pcw:minExp
 * and pcw:maxExp (tools/pcwgen/README.md, "Histograms"). The manifest's
 * type is what CTRPP sees (perf_counter_large_rawcount: the sum of the
 * observations, the histogram's first word); pcw's is PERF_PCW_HISTOGRAM.
 * Everything pcw_register checks of a histogram is checked here. */
static int histogram_attrs(ctx *c, const XML_Char **atts, mf_counter *k)
{
    const char *v[PA_COUNT] = {NULL};
    const char *any = NULL;
    size_t nslen = strlen(MF_PCW_NS);
    for (size_t i = 0; atts[i]; i += 2) {
        const char *q = atts[i];
        if (strncmp(q, MF_PCW_NS, nslen) != 0 || q[nslen] != NS_SEP)
            continue;
        size_t a = 0;
        while (a < PA_COUNT && strcmp(q + nslen + 1, pcw_attr_names[a]) != 0)
            a++;
        if (a == PA_COUNT)
            return fail(c,
                        "<counter> \"%s\": unknown attribute pcw:%s (" MF_PCW_NS
                        " has histogram, schema, minExp, maxExp)",
                        k->name, q + nslen + 1);
        v[a] = atts[i + 1];
        any = pcw_attr_names[a];
    }
    if (!any)
        return 0;
    if (!v[PA_HISTOGRAM])
        return fail(c, "<counter> \"%s\": pcw:%s without pcw:histogram", k->name, any);
    char buf[64];
    const char *u = trim(v[PA_HISTOGRAM], buf, sizeof buf);
    if (strcmp(u, "ns") == 0)
        k->hist_unit = PCW_HIST_UNIT_NS;
    else if (strcmp(u, "one") == 0)
        k->hist_unit = PCW_HIST_UNIT_ONE;
    else
        return fail(c,
                    "<counter> \"%s\": pcw:histogram=\"%s\" is not ns (nanoseconds observed, "
                    "seconds exported) or one (values as observed)",
                    k->name, v[PA_HISTOGRAM]);
    for (size_t a = PA_SCHEMA; a < PA_COUNT; a++)
        if (!v[a])
            return fail(c, "<counter> \"%s\": pcw:histogram needs pcw:%s too", k->name,
                        pcw_attr_names[a]);
    if (parse_int(v[PA_SCHEMA], PCW_HIST_SCHEMA_MIN, PCW_HIST_SCHEMA_MAX, &k->hist_schema) != 0)
        return fail(c, "<counter> \"%s\": pcw:schema=\"%s\" is not an integer from %d to %d",
                    k->name, v[PA_SCHEMA], PCW_HIST_SCHEMA_MIN, PCW_HIST_SCHEMA_MAX);
    if (parse_int(v[PA_MIN_EXP], PCW_HIST_EXP_MIN, PCW_HIST_EXP_MAX, &k->hist_min_exp) != 0 ||
        parse_int(v[PA_MAX_EXP], PCW_HIST_EXP_MIN, PCW_HIST_EXP_MAX, &k->hist_max_exp) != 0)
        return fail(c,
                    "<counter> \"%s\": pcw:minExp=\"%s\" and pcw:maxExp=\"%s\" must be "
                    "integers from %d to %d",
                    k->name, v[PA_MIN_EXP], v[PA_MAX_EXP], PCW_HIST_EXP_MIN, PCW_HIST_EXP_MAX);
    int s = k->hist_schema, lo = k->hist_min_exp, hi = k->hist_max_exp;
    if (lo >= hi)
        return fail(c, "<counter> \"%s\": pcw:minExp=\"%d\" is not below pcw:maxExp=\"%d\"",
                    k->name, lo, hi);
    if (s < 0 && (lo % (1 << -s) != 0 || hi % (1 << -s) != 0))
        return fail(c,
                    "<counter> \"%s\": at pcw:schema=\"%d\" pcw:minExp and pcw:maxExp must be "
                    "multiples of %d",
                    k->name, s, 1 << -s);
    long nb = s >= 0 ? (long)(hi - lo) << s : (long)(hi - lo) >> -s;
    if (nb > (long)PCW_HIST_MAX_BUCKETS)
        return fail(c,
                    "<counter> \"%s\": %ld buckets ((maxExp - minExp) * 2^schema); a histogram "
                    "has at most %u",
                    k->name, nb, PCW_HIST_MAX_BUCKETS);
    if (strcmp(k->type_name, "perf_counter_large_rawcount") != 0)
        return fail(c,
                    "<counter> \"%s\": a pcw:histogram counter's type must be "
                    "perf_counter_large_rawcount (what CTRPP sees: the sum of the "
                    "observations), not \"%s\"",
                    k->name, k->type_name);
    k->histogram = 1;
    k->hist_shape = PCW_HISTOGRAM_SHAPE(k->hist_unit, s, lo, hi);
    k->type = PERF_PCW_HISTOGRAM;
    k->type_macro = "PERF_PCW_HISTOGRAM";
    k->size = pcw_hist_bytes(k->hist_shape);
    return 0;
}

static int start_counter(ctx *c, const XML_Char **atts)
{
    mf_counterset *s = c->set;
    const char *id = required(c, atts, "counter", "id");
    const char *type = id ? required(c, atts, "counter", "type") : NULL;
    if (!type || !required(c, atts, "counter", "name"))
        return -1;
    if (s->ncounters >= PCW_MAX_COUNTERS)
        return fail(c, "<counterSet> has more than %u counters", PCW_MAX_COUNTERS);
    if (mf_reserve(c->m, (void **)&s->counters, &s->counters_cap, s->ncounters,
                   sizeof *s->counters) != 0)
        return oom(c);
    mf_counter *k = &s->counters[s->ncounters++];
    memset(k, 0, sizeof *k);
    k->line = line_of(c);
    k->base_id = k->perf_time_id = k->perf_freq_id = k->multi_id = PCW_NO_COUNTER;
    k->detail_level = PCW_DETAIL_STANDARD;
    k->uri = dup_attr(c, atts, "uri");
    k->name = dup_attr(c, atts, "name");
    k->description = dup_attr(c, atts, "description");
    k->symbol = dup_attr(c, atts, "symbol");
    k->type_name = dup_attr(c, atts, "type");
    k->struct_name = dup_attr(c, atts, "struct");
    k->field = dup_attr(c, atts, "field");
    if (c->failed)
        return -1;
    c->ctr = k;

    unsigned long v;
    if (parse_u32(id, &v) != 0 || v == PCW_NO_COUNTER)
        return fail(c, "<counter> id=\"%s\" is not an integer from 0 to 4294967294", id);
    k->id = (uint32_t)v;
    if (check_string(c, "counter", "name", k->name, 1) ||
        check_string(c, "counter", "description", k->description, 0) ||
        check_string(c, "counter", "uri", k->uri, 0) ||
        check_string(c, "counter", "symbol", k->symbol, 0) || check_symbol(c, "counter", k->symbol))
        return -1;

    char buf[64];
    const mf_type_info *ti = mf_type_lookup(trim(k->type_name, buf, sizeof buf));
    if (!ti)
        return fail(c, "<counter> \"%s\" has unknown type \"%s\"", k->name, k->type_name);
    k->type_name = ti->name;
    k->type_macro = ti->macro;
    k->type = ti->value;
    /* User-mode counters are DWORDs unless the type says LARGE (as PERFLIB
     * v2 sizes them); kernel-style ones take their field's size instead. */
    k->size = (ti->value & PCW_PERF_SIZE_LARGE) ? 8 : 4;
    if (histogram_attrs(c, atts, k) != 0)
        return -1;

    const char *dl = attr(atts, "detailLevel");
    if (dl) {
        const char *t = trim(dl, buf, sizeof buf);
        if (strcmp(t, "standard") == 0)
            k->detail_level = PCW_DETAIL_STANDARD;
        else if (strcmp(t, "advanced") == 0)
            k->detail_level = PCW_DETAIL_ADVANCED;
        else
            return fail(c, "<counter> detailLevel=\"%s\" is not standard or advanced", dl);
    }
    const char *sc = attr(atts, "defaultScale");
    if (sc && parse_scale(sc, &k->default_scale) != 0)
        return fail(c, "<counter> defaultScale=\"%s\" is not an integer from -10 to 10", sc);
    const char *ag = attr(atts, "aggregate");
    if (ag) {
        const char *t = trim(ag, buf, sizeof buf);
        size_t i = 0, n = sizeof aggregates / sizeof aggregates[0];
        while (i < n && strcmp(aggregates[i].name, t) != 0)
            i++;
        if (i == n)
            return fail(c, "<counter> aggregate=\"%s\" is not one of undefined, sum, avg, min, max",
                        ag);
        k->aggregate = aggregates[i].v;
    } else if (k->histogram) {
        k->aggregate = PCW_AGGREGATE_TOTAL; /* a _Total merges the buckets */
    }
    if (k->histogram && k->aggregate != PCW_AGGREGATE_TOTAL &&
        k->aggregate != PCW_AGGREGATE_UNDEFINED)
        return fail(c,
                    "<counter> \"%s\": a histogram's aggregate is sum (merge the buckets, the "
                    "default) or undefined, not \"%s\"",
                    k->name, ag);
    if (ref_attr(c, atts, "baseID", &k->has_base_attr, &k->base_attr_value) ||
        ref_attr(c, atts, "perfTimeID", &k->has_time_attr, &k->time_attr_value) ||
        ref_attr(c, atts, "perfFreqID", &k->has_freq_attr, &k->freq_attr_value) ||
        ref_attr(c, atts, "multiCounterID", &k->has_multi_attr, &k->multi_attr_value))
        return -1;
    if (k->histogram &&
        (k->has_base_attr || k->has_time_attr || k->has_freq_attr || k->has_multi_attr))
        return fail(c,
                    "<counter> \"%s\": a histogram refers to no other counter (no baseID, "
                    "perfTimeID, perfFreqID or multiCounterID)",
                    k->name);
    /* A 32-bit tick type without a perfFreqID counts nanoseconds and would
     * wrap after 4.3 s of summed time in 4 bytes (pcw_register refuses it):
     * its field is 8 bytes, pcw's extension (PCW_COUNTER_TYPE_TICKS_32). A
     * ported provider's assignments to it widen; nothing to write in the
     * manifest. */
    if (PCW_COUNTER_TYPE_TICKS_32(k->type) && !k->has_freq_attr)
        k->size = 8;
    if (k->field &&
        (!mf_is_c_ident(k->field) || mf_is_c_keyword(k->field) || strlen(k->field) > MF_MAX_IDENT))
        return fail(c, "<counter> field=\"%s\" is not a C member name", k->field);
    k->ident = k->symbol ? k->symbol : mf_make_ident(c->m, k->name);
    if (!k->ident)
        return oom(c);
    if (!*k->ident || strlen(k->ident) > MF_MAX_IDENT)
        return fail(c, "<counter> name \"%s\" gives no usable C identifier; add a symbol attribute",
                    k->name);
    return c->failed ? -1 : 0;
}

static const struct {
    const char *name;
    uint32_t bit;
} counter_attributes[] = {
    {"reference", PCW_ATTR_REFERENCE},
    {"noDisplay", PCW_ATTR_NO_DISPLAY},
    {"noDigitGrouping", PCW_ATTR_NO_DIGIT_GROUPING},
    {"displayAsHex", PCW_ATTR_DISPLAY_AS_HEX},
    {"displayAsReal", PCW_ATTR_DISPLAY_AS_REAL},
};

static int start_counter_attribute(ctx *c, const XML_Char **atts)
{
    const char *name = required(c, atts, "counterAttribute", "name");
    if (!name)
        return -1;
    char buf[64];
    const char *v = trim(name, buf, sizeof buf);
    for (size_t i = 0; i < sizeof counter_attributes / sizeof counter_attributes[0]; i++)
        if (strcmp(counter_attributes[i].name, v) == 0) {
            c->ctr->attributes |= counter_attributes[i].bit;
            return 0;
        }
    if (strcmp(v, "history") == 0) {
        /* Schema 2.0's per-counter history flag: pcw has no attribute bit
         * for it; the counterset's instance type still says whether the
         * whole set keeps history. */
        mf_warn(c->m, line_of(c),
                "counterAttribute \"history\" is not represented in pcw; ignored");
        return 0;
    }
    return fail(c,
                "<counterAttribute> name=\"%s\" is not one of reference, noDisplay, "
                "noDigitGrouping, displayAsHex, displayAsReal",
                name);
}

/* ---- expat callbacks ---------------------------------------------------- */

static int push(ctx *c, kind k)
{
    if (c->depth == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        kind *s = realloc(c->stack, cap * sizeof *s);
        if (!s) {
            oom(c);
            return -1;
        }
        c->stack = s, c->cap = cap;
    }
    c->stack[c->depth++] = k;
    return 0;
}

static int inside_counters(kind k)
{
    return k != K_OUTSIDE;
}

static void XMLCALL on_start(void *ud, const XML_Char *qname, const XML_Char **atts)
{
    ctx *c = ud;
    if (c->failed)
        return;
    kind parent = c->depth ? c->stack[c->depth - 1] : K_OUTSIDE;
    if (c->depth == 0)
        c->root_line = line_of(c);
    const char *sep = strrchr(qname, NS_SEP);
    const char *local = sep ? sep + 1 : qname;
    size_t nslen = sep ? (size_t)(sep - qname) : 0;
    int ours = sep && nslen == strlen(MF_COUNTERS_NS) && memcmp(qname, MF_COUNTERS_NS, nslen) == 0;

    if (!ours) {
        if (!inside_counters(parent) && strcmp(local, "counters") == 0 &&
            !c->foreign_counters_line) {
            c->foreign_counters_line = line_of(c);
            snprintf(c->foreign_counters_ns, sizeof c->foreign_counters_ns, "%.*s",
                     (int)(nslen < 100 ? nslen : 100), nslen ? qname : "");
        }
        push(c, inside_counters(parent) ? K_FOREIGN : K_OUTSIDE);
        return;
    }
    size_t i = 0, n = sizeof elements / sizeof elements[0];
    while (i < n && strcmp(elements[i].name, local) != 0)
        i++;
    if (i == n) {
        fail(c, "unknown element <%s> in the counters namespace", local);
        return;
    }
    if (elements[i].k == K_COUNTERS ? inside_counters(parent) : parent != elements[i].parent) {
        const char *want = "?";
        for (size_t j = 0; j < n; j++)
            if (elements[j].k == elements[i].parent)
                want = elements[j].name;
        if (elements[i].k == K_COUNTERS)
            fail(c, "<counters> inside <counters>");
        else
            fail(c, "<%s> must be inside <%s>", local, want);
        return;
    }
    if (push(c, elements[i].k) != 0)
        return;
    switch (elements[i].k) {
    case K_COUNTERS:
        start_counters(c, atts);
        break;
    case K_PROVIDER:
        start_provider(c, atts);
        break;
    case K_COUNTERSET:
        start_counterset(c, atts);
        break;
    case K_STRUCT:
        start_struct(c, atts);
        break;
    case K_COUNTER:
        start_counter(c, atts);
        break;
    case K_COUNTER_ATTRIBUTE:
        start_counter_attribute(c, atts);
        break;
    default:
        break;
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *qname)
{
    ctx *c = ud;
    (void)qname;
    if (c->failed || c->depth == 0)
        return;
    kind k = c->stack[--c->depth];
    if (k == K_COUNTERSET) {
        if (c->set->ncounters == 0) {
            fail_at(c, c->set->line, "<counterSet> \"%s\" has no counters", c->set->name);
            return;
        }
        if (mf_check_counterset(c->m, c->set, c->err) != 0) {
            c->failed = 1;
            XML_StopParser(c->xp, XML_FALSE);
        }
        c->set = NULL;
    } else if (k == K_COUNTER) {
        c->ctr = NULL;
    } else if (k == K_PROVIDER) {
        c->prov = NULL;
    }
}

/* Manifests never need a DTD; refusing one rules out entity expansion
 * tricks on untrusted input. */
static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset)
{
    ctx *c = ud;
    (void)name, (void)sysid, (void)pubid, (void)has_internal_subset;
    fail(c, "a DOCTYPE declaration is not allowed in a manifest");
}

int mf_parse(mf_manifest *m, const char *buf, size_t len, mf_error *err)
{
    memset(m, 0, sizeof *m);
    memset(err, 0, sizeof *err);
    ctx c = {0};
    c.m = m;
    c.err = err;
    c.xp = XML_ParserCreateNS(NULL, NS_SEP);
    if (!c.xp) {
        mf_set_error(err, 0, "out of memory");
        return -1;
    }
    XML_SetUserData(c.xp, &c);
    XML_SetElementHandler(c.xp, on_start, on_end);
    XML_SetStartDoctypeDeclHandler(c.xp, on_doctype);
    XML_SetParamEntityParsing(c.xp, XML_PARAM_ENTITY_PARSING_NEVER);

    /* Feed in pieces: XML_Parse takes an int length. */
    const size_t piece = 1u << 30;
    int st = XML_STATUS_OK;
    do {
        size_t n = len < piece ? len : piece;
        st = XML_Parse(c.xp, buf, (int)n, n == len);
        buf += n, len -= n;
    } while (st == XML_STATUS_OK && len);
    if (st != XML_STATUS_OK && !c.failed) {
        mf_set_error(err, (unsigned long)XML_GetCurrentLineNumber(c.xp), "malformed XML: %s",
                     XML_ErrorString(XML_GetErrorCode(c.xp)));
        c.failed = 1;
    }
    if (!c.failed && !c.saw_counters) {
        if (c.foreign_counters_line)
            mf_set_error(err, c.foreign_counters_line,
                         "<counters> is in namespace \"%s\", not " MF_COUNTERS_NS,
                         c.foreign_counters_ns);
        else
            mf_set_error(err, c.root_line ? c.root_line : 1,
                         "no <counters> section (namespace " MF_COUNTERS_NS ")");
        c.failed = 1;
    }
    if (!c.failed && m->nproviders == 0) {
        mf_set_error(err, c.root_line ? c.root_line : 1, "<counters> declares no <provider>");
        c.failed = 1;
    }
    if (!c.failed && mf_check_manifest(m, err) != 0)
        c.failed = 1;
    XML_ParserFree(c.xp);
    free(c.stack);
    return c.failed ? -1 : 0;
}
