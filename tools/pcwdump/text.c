/* SPDX-License-Identifier: MIT */
/*
 * text.c - the human-readable output: one block per provider, countersets
 * indented under it, counters and instances as aligned tables.
 *
 * Every string from a segment goes through text_put(), the tools' one
 * escape (tools/common/escape.h): backslashes (so the escapes stay
 * unambiguous), control characters (C0, DEL, C1), bidirectional overrides
 * and invalid UTF-8: a hostile provider must not be able to drive the
 * reader's terminal or disguise a name. Columns are aligned by code points (no East Asian width
 * tables: the output stays independent of the locale).
 */
#define _GNU_SOURCE 1
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcw/histogram.h>
#include "common/name.h"
#include <pcw/pdh.h>

#include "../common/escape.h"
#include "pcwdump.h"

/* Up to this many counters, instances print as a table with one column per
 * counter; beyond it, one block per instance with a counter per line. */
#define TABLE_MAX_COUNTERS 6

typedef struct text_st {
    FILE *out;
} text_st;

size_t text_put(FILE *out, const char *s, size_t n)
{
    return esc_put(out, s, n, 0);
}

static size_t width_of(const char *s)
{
    return esc_put(NULL, s, strlen(s), 0);
}

static void pad(FILE *out, size_t n)
{
    while (n--)
        putc(' ', out);
}

/* A cell: s left-aligned in w columns, then two spaces. */
static void cell(FILE *out, const char *s, size_t w)
{
    size_t used = esc_put(out, s, strlen(s), 0);
    pad(out, (w > used ? w - used : 0) + 2);
}

static void quoted(FILE *out, const char *s, size_t n)
{
    putc('"', out);
    esc_put(out, s, n, 0);
    putc('"', out);
}

/* Flag bits as "a,b,0x40". */
static void put_flags(FILE *out, uint32_t flags, const char *(*bit_name)(unsigned))
{
    int first = 1;
    for (unsigned b = 0; b < 32; b++) {
        if (!(flags & (1u << b)))
            continue;
        const char *n = bit_name(b);
        if (!first)
            putc(',', out);
        first = 0;
        if (n)
            fputs(n, out);
        else
            fprintf(out, "0x%x", 1u << b);
    }
}

static void text_doc_begin(void *p, const dump_opts *o, unsigned sample, uint64_t time_ns)
{
    text_st *t = p;
    if (o->interval > 0 || o->count > 1) {
        time_t secs = (time_t)(time_ns / 1000000000u);
        struct tm tm;
        char when[64];
        localtime_r(&secs, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        if (o->count > 0)
            fprintf(t->out, "=== sample %u/%ld at %s ===\n", sample, o->count, when);
        else
            fprintf(t->out, "=== sample %u at %s ===\n", sample, when);
    }
}

static void text_provider_begin(void *p, const pcw_provider_info *pi, const pcw_container_info *ci,
                                int alive)
{
    text_st *t = p;
    fputs("Provider ", t->out);
    quoted(t->out, pi->name, strlen(pi->name));
    fprintf(t->out, "  pid %" PRId32 "  uid %" PRIu32 "  %s\n", pi->pid, pi->uid,
            alive ? "alive" : "exited");
    fputs("  segment: ", t->out);
    esc_put(t->out, pi->path, strlen(pi->path), 0);
    fprintf(t->out, "\n  start time: %" PRIu64 " (clock ticks after boot)", pi->start_time);
    if (pi->flags) {
        fputs("  flags: ", t->out);
        put_flags(t->out, pi->flags, name_seg_flag_bit);
    }
    putc('\n', t->out);
    if (ci) {
        /* The cgroup is the kernel's, but its last parts may be named by
         * the container itself (a delegated subtree): escaped. */
        fprintf(t->out, "  container: %s %s", ci->runtime[0] ? ci->runtime : "-",
                ci->id[0] ? ci->id : "-");
        if (ci->pod_uid[0])
            fprintf(t->out, "  pod uid %s", ci->pod_uid);
        fprintf(t->out, "  host pid %" PRId32 "  mount namespace %" PRIu64, ci->host_pid,
                ci->mnt_ns);
        if (ci->pod[0] || ci->pod_namespace[0] || ci->container_name[0]) {
            /* The pod spec's author named these: escaped. */
            fputs("\n  kubernetes: namespace ", t->out);
            esc_put(t->out, ci->pod_namespace, strlen(ci->pod_namespace), 0);
            fputs("  pod ", t->out);
            esc_put(t->out, ci->pod, strlen(ci->pod), 0);
            fputs("  container ", t->out);
            esc_put(t->out, ci->container_name, strlen(ci->container_name), 0);
        }
        fputs("\n  cgroup: ", t->out);
        esc_put(t->out, ci->cgroup, strlen(ci->cgroup), 0);
        putc('\n', t->out);
    }
}

static void text_provider_end(void *p)
{
    text_st *t = p;
    putc('\n', t->out);
}

/* The non-default attributes of a counter, for the NOTES column. */
static void counter_notes(FILE *out, const pcw_counter *c)
{
    const char *d = name_detail_level(c->detail_level);
    if (c->base_id != PCW_NO_COUNTER)
        fprintf(out, "base=%" PRIu32 " ", c->base_id);
    if (c->perf_time_id != PCW_NO_COUNTER)
        fprintf(out, "perfTime=%" PRIu32 " ", c->perf_time_id);
    if (c->perf_freq_id != PCW_NO_COUNTER)
        fprintf(out, "perfFreq=%" PRIu32 " ", c->perf_freq_id);
    if (c->multi_id != PCW_NO_COUNTER)
        fprintf(out, "multi=%" PRIu32 " ", c->multi_id);
    if (c->default_scale)
        fprintf(out, "scale=%" PRId32 " ", c->default_scale);
    if (c->histogram)
        fprintf(out, "histogram=unit:%s,schema:%d,range:2^%d..2^%d,buckets:%" PRIu32 " ",
                dump_hist_unit(c->histogram), pcw_hist_schema(c->histogram),
                pcw_hist_min_exp(c->histogram), pcw_hist_max_exp(c->histogram),
                pcw_hist_nbuckets(c->histogram));
    if (!d)
        fprintf(out, "detail=%" PRIu32 " ", c->detail_level);
    else if (c->detail_level > PCW_DETAIL_NOVICE)
        fprintf(out, "detail=%s ", d);
    if (c->attributes) {
        fputs("attributes=", out);
        put_flags(out, c->attributes, name_attribute_bit);
        putc(' ', out);
    }
    if (*c->uri) {
        fputs("uri=", out);
        esc_put(out, c->uri, strlen(c->uri), 0);
        putc(' ', out);
    }
    if (*c->symbol) {
        fputs("symbol=", out);
        esc_put(out, c->symbol, strlen(c->symbol), 0);
        putc(' ', out);
    }
    if (*c->description)
        esc_put(out, c->description, strlen(c->description), 0);
}

static void type_text(char *buf, size_t cap, uint32_t type)
{
    const char *n = name_counter_type(type);
    if (n)
        snprintf(buf, cap, "%s", n);
    else
        snprintf(buf, cap, "0x%08" PRIx32, type);
}

static void aggregate_text(char *buf, size_t cap, uint32_t a)
{
    const char *n = name_aggregate(a);
    if (n)
        snprintf(buf, cap, "%s", a ? n : "-");
    else
        snprintf(buf, cap, "%" PRIu32, a);
}

static void print_counters(FILE *out, const cset_view *v, const char *indent)
{
    const pcw_counterset *cs = v->cs;
    size_t wid = 2, wname = 4, wtype = 4;
    char buf[64];
    for (uint32_t i = 0; i < cs->counter_count; i++) {
        if (!v->shown[i])
            continue;
        const pcw_counter *c = &cs->counters[i];
        size_t w = (size_t)snprintf(buf, sizeof buf, "%" PRIu32, c->id);
        wid = w > wid ? w : wid;
        w = width_of(c->name);
        wname = w > wname ? w : wname;
        type_text(buf, sizeof buf, c->type);
        w = strlen(buf);
        wtype = w > wtype ? w : wtype;
    }
    fprintf(out, "%scounters (%zu):\n%s  ", indent, v->nshown, indent);
    cell(out, "ID", wid);
    cell(out, "NAME", wname);
    cell(out, "TYPE", wtype);
    fputs("SIZE  BLOCK  OFFSET  AGGREGATE  NOTES\n", out);
    for (uint32_t i = 0; i < cs->counter_count; i++) {
        if (!v->shown[i])
            continue;
        const pcw_counter *c = &cs->counters[i];
        fprintf(out, "%s  ", indent);
        snprintf(buf, sizeof buf, "%" PRIu32, c->id);
        cell(out, buf, wid);
        cell(out, c->name, wname);
        type_text(buf, sizeof buf, c->type);
        cell(out, buf, wtype);
        fprintf(out, "%-4" PRIu32 "  %-5" PRIu32 "  %-6" PRIu32 "  ", c->size, c->block, c->offset);
        aggregate_text(buf, sizeof buf, c->aggregate);
        char *notes = NULL;
        size_t nlen = 0;
        FILE *m = open_memstream(&notes, &nlen);
        if (m) {
            counter_notes(m, c);
            fclose(m);
        }
        while (nlen && notes[nlen - 1] == ' ')
            nlen--;
        if (nlen) {
            cell(out, buf, 9);
            fwrite(notes, 1, nlen, out);
        } else {
            fputs(buf, out);
        }
        free(notes);
        fputs("\n", out);
    }
}

/* A value's cell; a histogram's is its count of observations (its buckets
 * follow the instances: print_histograms). */
static void value_text(char *buf, size_t cap, const cset_view *v, size_t x, const pcw_counter *c)
{
    uint64_t val = pcw_snapshot_value(v->snap, x, c);
    dump_hist h;
    if (c->type == PERF_PCW_HISTOGRAM && dump_hist_read(v->snap, x, c, &h) != 0)
        snprintf(buf, cap, "invalid");
    else if (c->type == PERF_PCW_HISTOGRAM)
        snprintf(buf, cap, "%s%" PRIu64, h.count_overflow ? ">=" : "", h.count);
    else if (counter_is_hex(c))
        snprintf(buf, cap, "0x%" PRIx64, val);
    else
        snprintf(buf, cap, "%" PRIu64, val);
}

static int32_t sample_pid(const cset_view *v, size_t x)
{
    pcw_segment *s = pcw_consumer_segment(v->consumer, row_source(v->snap, x));
    return s ? pcw_segment_provider(s)->pid : 0;
}

static void print_instances(FILE *out, const dump_opts *o, const cset_view *v, const char *indent)
{
    const pcw_counterset *cs = v->cs;
    const pcw_snapshot *snap = v->snap;
    int values = !o->no_values && v->nshown > 0;
    int merged = v->merged != NULL;
    char buf[64];
    fprintf(out, "%sinstances (%zu):\n", indent, v->ninst);
    if (!v->ninst)
        return;
    size_t wpid = 3, wid = 2, wname = 4;
    size_t *wval = calloc(cs->counter_count, sizeof *wval);
    if (!wval)
        return;
    for (size_t k = 0; k < v->ninst; k++) {
        size_t x = v->order[k];
        uint32_t nlen = pcw_snapshot_name_len(snap, x);
        size_t w = (size_t)snprintf(buf, sizeof buf, "%" PRIu32, pcw_snapshot_id(snap, x));
        wid = w > wid ? w : wid;
        w = nlen ? esc_put(NULL, pcw_snapshot_name(snap, x), nlen, 0) : 1;
        wname = w > wname ? w : wname;
        if (merged) {
            w = (size_t)snprintf(buf, sizeof buf, "%" PRId32, sample_pid(v, x));
            wpid = w > wpid ? w : wpid;
        }
        for (uint32_t i = 0; values && i < cs->counter_count; i++) {
            if (!v->shown[i])
                continue;
            value_text(buf, sizeof buf, v, x, &cs->counters[i]);
            w = strlen(buf);
            wval[i] = w > wval[i] ? w : wval[i];
        }
    }
    int table = !values || v->nshown <= TABLE_MAX_COUNTERS;
    size_t wname_all = wname;
    fprintf(out, "%s  ", indent);
    if (merged)
        cell(out, "PID", wpid);
    cell(out, "ID", wid);
    if (table && values) {
        /* Value columns are right-aligned, their headers too. */
        fputs("NAME", out);
        size_t used = 4;
        for (uint32_t i = 0; i < cs->counter_count; i++) {
            if (!v->shown[i])
                continue;
            size_t w = width_of(cs->counters[i].name);
            wval[i] = w > wval[i] ? w : wval[i];
            pad(out, (wname > used ? wname - used : 0) + 2 + wval[i] - w);
            used = wname = 0;
            esc_put(out, cs->counters[i].name, strlen(cs->counters[i].name), 0);
        }
        wname = wname_all;
    } else {
        fputs("NAME", out);
    }
    fputs("\n", out);
    size_t wcname = 0;
    for (uint32_t i = 0; !table && i < cs->counter_count; i++) {
        size_t w = v->shown[i] ? width_of(cs->counters[i].name) : 0;
        wcname = w > wcname ? w : wcname;
    }
    for (size_t k = 0; k < v->ninst; k++) {
        size_t x = v->order[k];
        uint32_t nlen = pcw_snapshot_name_len(snap, x);
        fprintf(out, "%s  ", indent);
        if (merged) {
            snprintf(buf, sizeof buf, "%" PRId32, sample_pid(v, x));
            cell(out, buf, wpid);
        }
        snprintf(buf, sizeof buf, "%" PRIu32, pcw_snapshot_id(snap, x));
        cell(out, buf, wid);
        size_t used =
            nlen ? esc_put(out, pcw_snapshot_name(snap, x), nlen, 0) : esc_put(out, "-", 1, 0);
        if (table) {
            for (uint32_t i = 0; values && i < cs->counter_count; i++) {
                if (!v->shown[i])
                    continue;
                pad(out, (wname > used ? wname - used : 0) + 2);
                used = wname = 0; /* the name is padded once; values by width */
                value_text(buf, sizeof buf, v, x, &cs->counters[i]);
                /* Numbers align right under their header. */
                fprintf(out, "%*s", (int)wval[i], buf);
            }
            wname = wname_all;
            fputs("\n", out);
            continue;
        }
        fputs("\n", out);
        for (uint32_t i = 0; i < cs->counter_count; i++) {
            if (!v->shown[i])
                continue;
            fprintf(out, "%s      ", indent);
            cell(out, cs->counters[i].name, wcname);
            value_text(buf, sizeof buf, v, x, &cs->counters[i]);
            fprintf(out, "%s\n", buf);
        }
    }
    free(wval);
}

/* One bound in the histogram's exported unit ("0.00106495 s"). */
static void bound_text(char *buf, size_t cap, double b, uint32_t shape)
{
    snprintf(buf, cap, "%.6g%s", b, pcw_hist_unit(shape) == PCW_HIST_UNIT_NS ? " s" : "");
}

/* Under the instances: each histogram counter of each instance, its sum,
 * zero bucket and count, and one line per non-empty bucket with its
 * Prometheus index and bounds (O(buckets) each). */
static void print_histograms(FILE *out, const dump_opts *o, const cset_view *v, const char *indent)
{
    const pcw_counterset *cs = v->cs;
    int any = 0;
    for (uint32_t i = 0; !o->no_values && i < cs->counter_count; i++) {
        const pcw_counter *c = &cs->counters[i];
        if (!v->shown[i] || c->type != PERF_PCW_HISTOGRAM)
            continue;
        for (size_t k = 0; k < v->ninst; k++) {
            size_t x = v->order[k];
            if (!any++)
                fprintf(out, "%shistograms:\n", indent);
            fprintf(out, "%s  ", indent);
            esc_put(out, c->name, strlen(c->name), 0);
            fprintf(out, " of %" PRIu32 " ", pcw_snapshot_id(v->snap, x));
            quoted(out, pcw_snapshot_name(v->snap, x), pcw_snapshot_name_len(v->snap, x));
            dump_hist h;
            if (dump_hist_read(v->snap, x, c, &h) != 0) {
                fputs(": invalid histogram\n", out);
                continue;
            }
            fprintf(out, ": count %s%" PRIu64 "  sum %" PRIu64 "%s  zero %" PRIu64 "\n",
                    h.count_overflow ? ">=" : "", h.count, h.sum,
                    pcw_hist_unit(h.shape) == PCW_HIST_UNIT_NS ? " ns" : "", h.zero);
            char lo[48], hi[48];
            double l, u;
            if (h.zero) {
                pcw_hist_bucket_bounds(h.shape, UINT32_MAX, &l, &u);
                bound_text(hi, sizeof hi, u, h.shape);
                fprintf(out, "%s    zero      [0, %s]  %" PRIu64 "\n", indent, hi, h.zero);
            }
            int32_t base = pcw_hist_min_index(h.shape) + 1;
            for (uint32_t j = 0; j < h.nbuckets; j++) {
                uint64_t n = dump_hist_bucket(&h, j);
                if (!n)
                    continue;
                pcw_hist_bucket_bounds(h.shape, j, &l, &u);
                bound_text(lo, sizeof lo, l, h.shape);
                bound_text(hi, sizeof hi, u, h.shape);
                fprintf(out, "%s    bucket %-4" PRId32 " (%s, %s]%s  %" PRIu64 "\n", indent,
                        base + (int32_t)j, lo, hi, j + 1 == h.nbuckets ? " and above" : "", n);
            }
        }
    }
}

static void text_cset(void *p, const dump_opts *o, const cset_view *v)
{
    text_st *t = p;
    FILE *out = t->out;
    const pcw_counterset *cs = v->cs;
    const char *indent = v->merged ? "  " : "    ";
    const char *it = name_instance_type(cs->instance_type);
    fputs(v->merged ? "Counterset " : "  Counterset ", out);
    quoted(out, cs->name, strlen(cs->name));
    if (it)
        fprintf(out, "  %s", it);
    else
        fprintf(out, "  instance type %" PRIu32, cs->instance_type);
    if (cs->flags) {
        fputs("  flags: ", out);
        put_flags(out, cs->flags, name_cset_flag_bit);
    }
    putc('\n', out);
    static const char *const labels[] = {
        "description",         "guid",          "uri",           "symbol",
        "manifest provider",   "provider guid", "provider type", "provider callback",
        "application identity"};
    const char *strs[] = {
        cs->description,         cs->guid,          cs->uri,           cs->symbol,
        cs->provider_name,       cs->provider_guid, cs->provider_type, cs->provider_callback,
        cs->application_identity};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (*strs[i]) {
            fprintf(out, "%s%s: ", indent, labels[i]);
            esc_put(out, strs[i], strlen(strs[i]), 0);
            putc('\n', out);
        }
    if (v->merged) {
        fprintf(out, "%sproviders (%zu):", indent, v->nsources);
        for (size_t k = 0; k < v->nsources; k++) {
            pcw_segment *s =
                pcw_consumer_segment(v->consumer, v->merged->source_segment[v->sources[k]]);
            const pcw_provider_info *pi = pcw_segment_provider(s);
            fprintf(out, "%s %" PRId32 " ", k ? "," : "", pi->pid);
            quoted(out, pi->name, strlen(pi->name));
        }
        putc('\n', out);
        for (size_t k = 0; k < v->nsources; k++) {
            if (v->source_status[k] == PCW_OK)
                continue;
            pcw_segment *s =
                pcw_consumer_segment(v->consumer, v->merged->source_segment[v->sources[k]]);
            const pcw_provider_info *pi = pcw_segment_provider(s);
            fprintf(out, "%sprovider %" PRId32 " ", indent, pi->pid);
            quoted(out, pi->name, strlen(pi->name));
            fprintf(out, " failed: %s\n", dump_status(v->source_status[k]));
        }
        if (v->merged->mismatched)
            fprintf(out, "%s(%zu registrations of this name left out: their counters differ)\n",
                    indent, v->merged->mismatched);
    }
    print_counters(out, v, indent);
    if (v->read_rc != PCW_OK) {
        fprintf(out, "%s(instances could not be read: %s)\n", indent, dump_status(v->read_rc));
    } else {
        print_instances(out, o, v, indent);
        print_histograms(out, o, v, indent);
        if (v->snap->busy)
            fprintf(out, "%s(%" PRIu32 " instances left out: they kept changing during the read)\n",
                    indent, v->snap->busy);
        if (!v->merged && v->source_status[0] != PCW_OK) /* its segment's came */
            fprintf(out, "%s(callback instances missing: %s)\n", indent,
                    dump_status(v->source_status[0]));
    }
    if (v->merged)
        putc('\n', out);
}

static int text_doc_end(void *p, const dump_opts *o, size_t nproviders, size_t ncsets)
{
    text_st *t = p;
    (void)o, (void)nproviders, (void)ncsets;
    return fflush(t->out) != 0 || ferror(t->out) ? -1 : 0;
}

void *text_sink_new(FILE *out)
{
    text_st *t = calloc(1, sizeof *t);
    if (t)
        t->out = out;
    return t;
}

const dump_sink text_sink = {
    text_doc_begin, text_provider_begin, text_cset, text_provider_end, text_doc_end,
};
