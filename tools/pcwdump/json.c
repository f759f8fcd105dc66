/* SPDX-License-Identifier: MIT */
/*
 * json.c - the --json output; the schema is docs/pcwdump-json.md.
 *
 * One JSON document per sample (so --watch yields a stream of documents,
 * one per line with --compact). Counter values are exact unsigned integers
 * (up to 2^64-1; readers that hold numbers as doubles lose precision past
 * 2^53, as the schema notes).
 */
#include <stdlib.h>
#include <string.h>

#include <pcw/histogram.h>
#include <pcw/pdh.h>
#include <pcw/types.h>

#include "json_writer.h"
#include "pcwdump.h"

typedef struct json_st {
    jw w;
    int merged;
} json_st;

static void flags_array(jw *w, const char *key, uint32_t flags, const char *(*bit_name)(unsigned))
{
    jw_key(w, key);
    jw_begin_array(w);
    for (unsigned b = 0; b < 32; b++) {
        if (!(flags & (1u << b)))
            continue;
        const char *n = bit_name(b);
        if (n) {
            jw_string(w, n);
        } else {
            char buf[16];
            snprintf(buf, sizeof buf, "0x%x", 1u << b);
            jw_string(w, buf);
        }
    }
    jw_end_array(w);
}

static void json_doc_begin(void *p, const dump_opts *o, unsigned sample, uint64_t time_ns)
{
    json_st *j = p;
    jw_begin_object(&j->w);
    jw_kv_u64(&j->w, "pcwdump_version", PCWDUMP_JSON_VERSION);
    jw_kv_u64(&j->w, "timestamp_ns", time_ns);
    if (o->interval > 0 || o->count > 1)
        jw_kv_u64(&j->w, "sample", sample);
    jw_key(&j->w, j->merged ? "countersets" : "providers");
    jw_begin_array(&j->w);
}

static void provider_fields(jw *w, const pcw_provider_info *pi)
{
    jw_kv_string(w, "path", pi->path);
    jw_kv_string(w, "name", pi->name);
    jw_kv_i64(w, "pid", pi->pid);
    jw_kv_u64(w, "uid", pi->uid);
    jw_kv_u64(w, "start_time", pi->start_time);
}

static void json_provider_begin(void *p, const pcw_provider_info *pi, const pcw_container_info *ci,
                                int alive)
{
    json_st *j = p;
    jw_begin_object(&j->w);
    provider_fields(&j->w, pi);
    if (ci) {
        jw_key(&j->w, "container");
        jw_begin_object(&j->w);
        jw_kv_string(&j->w, "runtime", ci->runtime);
        jw_kv_string(&j->w, "id", ci->id);
        jw_kv_string(&j->w, "pod_uid", ci->pod_uid);
        jw_kv_string(&j->w, "pod", ci->pod);
        jw_kv_string(&j->w, "namespace", ci->pod_namespace);
        jw_kv_string(&j->w, "container", ci->container_name);
        jw_kv_string(&j->w, "cgroup", ci->cgroup);
        jw_kv_i64(&j->w, "host_pid", ci->host_pid);
        jw_kv_u64(&j->w, "mnt_ns", ci->mnt_ns);
        jw_end_object(&j->w);
    }
    jw_kv_bool(&j->w, "alive", alive);
    flags_array(&j->w, "flags", pi->flags, name_seg_flag_bit);
    jw_key(&j->w, "countersets");
    jw_begin_array(&j->w);
}

static void json_provider_end(void *p)
{
    json_st *j = p;
    jw_end_array(&j->w);
    jw_end_object(&j->w);
}

static void optional_string(jw *w, const char *key, const char *s)
{
    if (*s)
        jw_kv_string(w, key, s);
}

static void optional_id(jw *w, const char *key, uint32_t id)
{
    if (id != PCW_NO_COUNTER)
        jw_kv_u64(w, key, id);
}

static void counter(jw *w, const pcw_counter *c)
{
    jw_begin_object(w);
    jw_kv_u64(w, "id", c->id);
    jw_kv_string(w, "name", c->name);
    jw_kv_string(w, "description", c->description);
    jw_kv_u64(w, "type", c->type);
    jw_kv_string(w, "type_name", name_counter_type(c->type)); /* null if unknown */
    jw_kv_u64(w, "size", c->size);
    jw_kv_u64(w, "block", c->block);
    jw_kv_u64(w, "offset", c->offset);
    optional_id(w, "base_id", c->base_id);
    optional_id(w, "perf_time_id", c->perf_time_id);
    optional_id(w, "perf_freq_id", c->perf_freq_id);
    optional_id(w, "multi_id", c->multi_id);
    jw_kv_u64(w, "detail_level", c->detail_level ? c->detail_level : PCW_DETAIL_STANDARD);
    const char *agg = name_aggregate(c->aggregate);
    if (agg) {
        jw_kv_string(w, "aggregate", agg);
    } else {
        char buf[16];
        snprintf(buf, sizeof buf, "%u", (unsigned)c->aggregate);
        jw_kv_string(w, "aggregate", buf);
    }
    flags_array(w, "attributes", c->attributes, name_attribute_bit);
    jw_kv_i64(w, "default_scale", c->default_scale);
    optional_string(w, "uri", c->uri);
    optional_string(w, "symbol", c->symbol);
    if (c->histogram) {
        double lo, zero_threshold;
        pcw_hist_bucket_bounds(c->histogram, UINT32_MAX, &lo, &zero_threshold);
        jw_key(w, "histogram");
        jw_begin_object(w);
        jw_kv_u64(w, "shape", c->histogram);
        jw_kv_string(w, "unit", dump_hist_unit(c->histogram));
        jw_kv_i64(w, "schema", pcw_hist_schema(c->histogram));
        jw_kv_i64(w, "min_exp", pcw_hist_min_exp(c->histogram));
        jw_kv_i64(w, "max_exp", pcw_hist_max_exp(c->histogram));
        jw_kv_u64(w, "buckets", pcw_hist_nbuckets(c->histogram));
        jw_kv_i64(w, "min_index", pcw_hist_min_index(c->histogram));
        jw_kv_double(w, "zero_threshold", zero_threshold);
        jw_end_object(w);
    }
    jw_end_object(w);
}

/* A histogram counter's value: its words as an object (O(buckets)). */
static void histogram_value(jw *w, const cset_view *v, size_t x, const pcw_counter *c)
{
    dump_hist h;
    if (dump_hist_read(v->snap, x, c, &h) != 0) {
        jw_null(w);
        return;
    }
    jw_begin_object(w);
    jw_kv_u64(w, "sum", h.sum);
    jw_kv_u64(w, "zero", h.zero);
    jw_kv_u64(w, "count", h.count);
    if (h.count_overflow)
        jw_kv_bool(w, "count_overflow", 1);
    jw_key(w, "buckets");
    jw_begin_array(w);
    int32_t base = pcw_hist_min_index(h.shape) + 1;
    for (uint32_t j = 0; j < h.nbuckets; j++) {
        uint64_t n = dump_hist_bucket(&h, j);
        if (!n)
            continue;
        double lo, hi;
        pcw_hist_bucket_bounds(h.shape, j, &lo, &hi);
        jw_begin_object(w);
        jw_kv_i64(w, "index", base + (int32_t)j);
        jw_kv_double(w, "lower", lo);
        jw_kv_double(w, "upper", hi);
        jw_kv_u64(w, "count", n);
        jw_end_object(w);
    }
    jw_end_array(w);
    jw_end_object(w);
}

static void json_cset(void *p, const dump_opts *o, const cset_view *v)
{
    json_st *j = p;
    jw *w = &j->w;
    const pcw_counterset *cs = v->cs;
    jw_begin_object(w);
    jw_kv_string(w, "name", cs->name);
    jw_kv_string(w, "description", cs->description);
    optional_string(w, "guid", cs->guid);
    optional_string(w, "uri", cs->uri);
    optional_string(w, "symbol", cs->symbol);
    optional_string(w, "provider_name", cs->provider_name);
    optional_string(w, "provider_guid", cs->provider_guid);
    optional_string(w, "provider_type", cs->provider_type);
    optional_string(w, "provider_callback", cs->provider_callback);
    optional_string(w, "application_identity", cs->application_identity);
    const char *it = name_instance_type(cs->instance_type);
    if (it) {
        jw_kv_string(w, "instance_type", it);
    } else {
        char buf[16];
        snprintf(buf, sizeof buf, "%u", (unsigned)cs->instance_type);
        jw_kv_string(w, "instance_type", buf);
    }
    flags_array(w, "flags", cs->flags, name_cset_flag_bit);
    jw_kv_u64(w, "data_size", cs->data_size);
    jw_key(w, "blocks");
    jw_begin_array(w);
    for (uint32_t b = 0; b < cs->block_count; b++) {
        jw_begin_object(w);
        jw_kv_u64(w, "offset", cs->block_offsets[b]);
        jw_kv_u64(w, "size", cs->block_sizes[b]);
        jw_end_object(w);
    }
    jw_end_array(w);
    if (!v->merged)
        jw_kv_u64(w, "registration", cs->reg_index);

    if (v->merged) {
        jw_key(w, "providers");
        jw_begin_array(w);
        for (size_t k = 0; k < v->nsources; k++) {
            size_t src = v->sources[k];
            pcw_segment *s = pcw_consumer_segment(v->consumer, v->merged->source_segment[src]);
            jw_begin_object(w);
            provider_fields(w, pcw_segment_provider(s));
            jw_kv_bool(w, "alive", pcw_segment_alive(s) == PCW_OK);
            jw_kv_u64(w, "registration", v->merged->source_cset[src]->reg_index);
            if (v->source_status[k] != PCW_OK)
                jw_kv_string(w, "error", dump_status(v->source_status[k]));
            jw_end_object(w);
        }
        jw_end_array(w);
        jw_kv_u64(w, "mismatched", v->merged->mismatched);
    }

    jw_key(w, "counters");
    jw_begin_array(w);
    for (uint32_t i = 0; i < cs->counter_count; i++)
        if (v->shown[i])
            counter(w, &cs->counters[i]);
    jw_end_array(w);

    if (v->read_rc != PCW_OK) {
        jw_kv_string(w, "error", dump_status(v->read_rc));
        jw_end_object(w);
        return;
    }
    if (!v->merged && v->source_status[0] != PCW_OK)
        jw_kv_string(w, "provider_error", dump_status(v->source_status[0]));
    jw_kv_u64(w, "busy", v->snap->busy);
    jw_key(w, "instances");
    jw_begin_array(w);
    for (size_t k = 0; k < v->ninst; k++) {
        size_t x = v->order[k];
        jw_begin_object(w);
        jw_kv_u64(w, "id", pcw_snapshot_id(v->snap, x));
        jw_key(w, "name");
        jw_string_n(w, pcw_snapshot_name(v->snap, x), pcw_snapshot_name_len(v->snap, x));
        if (v->merged) {
            pcw_segment *s = pcw_consumer_segment(v->consumer, row_source(v->snap, x));
            jw_kv_i64(w, "pid", s ? pcw_segment_provider(s)->pid : 0);
        }
        if (!o->no_values) {
            jw_key(w, "values");
            jw_begin_object(w);
            for (uint32_t i = 0; i < cs->counter_count; i++) {
                if (!v->shown[i])
                    continue;
                if (cs->counters[i].type == PERF_PCW_HISTOGRAM) {
                    jw_key(w, cs->counters[i].name);
                    histogram_value(w, v, x, &cs->counters[i]);
                } else {
                    jw_kv_u64(w, cs->counters[i].name,
                              pcw_snapshot_value(v->snap, x, &cs->counters[i]));
                }
            }
            jw_end_object(w);
        }
        jw_end_object(w);
    }
    jw_end_array(w);
    jw_end_object(w);
}

static int json_doc_end(void *p, const dump_opts *o, size_t nproviders, size_t ncsets)
{
    json_st *j = p;
    (void)o, (void)nproviders, (void)ncsets;
    jw_end_array(&j->w);
    jw_end_object(&j->w);
    return jw_finish(&j->w);
}

void *json_sink_new(FILE *out, int pretty, int merged)
{
    json_st *j = calloc(1, sizeof *j);
    if (j) {
        jw_init(&j->w, out, pretty);
        j->merged = merged;
    }
    return j;
}

const dump_sink json_sink = {
    json_doc_begin, json_provider_begin, json_cset, json_provider_end, json_doc_end,
};
