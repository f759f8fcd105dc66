/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/register.c - pcw_register: the rules a registration
 * must follow (with a sentence naming the counter and the rule it broke,
 * pcw_register_error), and publishing the counterset. pcw_unregister is in
 * teardown.c. Private (see internal.h).
 */
#include "internal.h"

/* ---- validation: which rule, for which counter ------------------------- */

/* Write a sentence into why (len bytes), when there is a buffer. */
__attribute__((format(printf, 3, 4))) static void pcw__why(char *why, size_t len, const char *fmt,
                                                           ...)
{
    if (!why || !len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
}

/* A string field: 0 when fine, else what is wrong with it. */
static const char *pcw__string_fault(const char *s, int required)
{
    if (!s)
        return required ? "is missing (NULL)" : NULL;
    size_t n = strnlen(s, PCW_MAX_STRING_BYTES + 1);
    if (n > PCW_MAX_STRING_BYTES)
        return "is longer than 4096 bytes (PCW_MAX_STRING_BYTES)";
    if (required && n == 0)
        return "is empty";
    if (pcw__utf8_count(s, n) < 0)
        return "is not valid UTF-8";
    return NULL;
}

/* The counter's size: as given, or its type's natural size for 0. */
static uint32_t pcw__counter_size(const pcw_counter_desc *c)
{
    if (c->size)
        return c->size;
    if (c->type == PERF_PCW_HISTOGRAM)
        return pcw_hist_shape_valid(c->histogram) ? pcw_hist_bytes(c->histogram) : 0;
    return PCW_COUNTER_NATURAL_SIZE(c->type);
}

/* A histogram counter's own rules (pcw/histogram.h): a valid shape, its
 * size, 8-byte alignment, no references, aggregate sum or none. */
static int pcw__validate_histogram(const pcw_counter_desc *c, uint32_t size, const char *who,
                                   char *why, size_t len)
{
    if (!pcw_hist_shape_valid(c->histogram)) {
        pcw__why(why, len,
                 "%s: histogram shape 0x%08x is not valid: make it with PCW_HISTOGRAM_SHAPE(unit, "
                 "schema -4..8, min_exp, max_exp) with -64 <= min_exp < max_exp <= 63 and at most "
                 "8192 buckets (pcw/histogram.h)",
                 who, c->histogram);
        return PCW_E_INVALID_PARAMETER;
    }
    if (size != pcw_hist_bytes(c->histogram)) {
        pcw__why(why, len, "%s: size %u; a histogram of this shape is %u bytes (0: that size)", who,
                 size, pcw_hist_bytes(c->histogram));
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->offset % 8 != 0 || c->offset > PCW_MAX_BLOCK_SIZE - size) {
        pcw__why(why, len,
                 c->offset % 8 ? "%s: offset %u is not a multiple of 8"
                               : "%s: offset %u puts the histogram past the largest data block "
                                 "(1 MiB)",
                 who, c->offset);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->base_ref || c->perf_time_ref || c->perf_freq_ref || c->multi_ref) {
        pcw__why(why, len, "%s: a histogram refers to no other counter (base_ref... must be 0)",
                 who);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->aggregate != PCW_AGGREGATE_UNDEFINED && c->aggregate != PCW_AGGREGATE_TOTAL) {
        pcw__why(why, len,
                 "%s: a histogram's aggregate is PCW_AGGREGATE_TOTAL (merge the buckets) or none",
                 who);
        return PCW_E_INVALID_PARAMETER;
    }
    return PCW_OK;
}

static int pcw__find_counter(const pcw_registration_info *in, uint32_t id)
{
    for (uint32_t i = 0; i < in->counter_count; i++)
        if (in->counters[i].id == id)
            return (int)i;
    return -1;
}

/* Does this type take the counter after it as its base by default
 * (pcw_counter_desc)? 2: it must (it needs a base); 1: if that counter
 * has a base type (precision timers); 0: no. */
static int pcw__default_base(uint32_t type)
{
    if (pcw_counter_type_needs_base(type))
        return 2;
    return type == PERF_PRECISION_SYSTEM_TIMER || type == PERF_PRECISION_100NS_TIMER ||
           type == PERF_PRECISION_OBJECT_TIMER;
}

/* The id the segment records as counter i's base: base_ref's, the counter
 * after it by the default rule, or PCW_NO_COUNTER. `in` is valid. */
static uint32_t pcw__base_id(const pcw_registration_info *in, uint32_t i)
{
    const pcw_counter_desc *c = &in->counters[i];
    if (c->base_ref)
        return c->base_ref - 1;
    if (pcw__default_base(c->type) && i + 1 < in->counter_count &&
        pcw_counter_type_is_base(in->counters[i + 1].type))
        return in->counters[i + 1].id;
    return PCW_NO_COUNTER;
}

/* "counter 2 (id 7, \"Hits\")": which counter, for messages. */
static void pcw__counter_label(char *out, size_t len, const pcw_registration_info *in, uint32_t i)
{
    const pcw_counter_desc *c = &in->counters[i];
    if (c->name && !pcw__string_fault(c->name, 1))
        snprintf(out, len, "counter %u (id %u, \"%.80s\")", i, c->id, c->name);
    else
        snprintf(out, len, "counter %u (id %u)", i, c->id);
}

/* One counter's rules. i: its index; need: per block, the end of its
 * counters so far. */
static int pcw__validate_counter(const pcw_registration_info *in, uint32_t i, uint32_t *need,
                                 char *why, size_t len)
{
    const pcw_counter_desc *c = &in->counters[i];
    char who[160];
    pcw__counter_label(who, sizeof who, in, i);
    const char *fault, *tname = pcw__counter_type_name(c->type);
    uint32_t size = pcw__counter_size(c);
    if ((fault = pcw__string_fault(c->name, 1))) {
        pcw__why(why, len, "%s: its name %s", who, fault);
        return PCW_E_INVALID_PARAMETER;
    }
    const struct {
        const char *what, *s;
    } strs[] = {{"description", c->description}, {"uri", c->uri}, {"symbol", c->symbol}};
    for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
        if ((fault = pcw__string_fault(strs[k].s, 0))) {
            pcw__why(why, len, "%s: its %s %s", who, strs[k].what, fault);
            return PCW_E_INVALID_PARAMETER;
        }
    if (c->id == PCW_NO_COUNTER) {
        pcw__why(why, len, "%s: id 0xFFFFFFFF is reserved (PCW_NO_COUNTER)", who);
        return PCW_E_INVALID_PARAMETER;
    }
    if (!tname) {
        pcw__why(why, len, "%s: type 0x%08x is not a counter type (PERF_* in pcw/types.h)", who,
                 c->type);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->type == PERF_PCW_HISTOGRAM) {
        int rc = pcw__validate_histogram(c, size, who, why, len);
        if (rc != PCW_OK)
            return rc;
    } else if (c->histogram) {
        pcw__why(why, len, "%s: histogram is set but the type is %s, not PERF_PCW_HISTOGRAM", who,
                 tname);
        return PCW_E_INVALID_PARAMETER;
    } else if (size != 4 && size != 8) {
        pcw__why(why, len, "%s: size %u; a counter is 4 or 8 bytes (0: its type's size)", who,
                 c->size);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->type != PERF_PCW_HISTOGRAM && !PCW_COUNTER_SIZE_OK(c->type, size)) {
        if (PCW_COUNTER_NATURAL_SIZE(c->type) == 8)
            pcw__why(why, len,
                     "%s: %s is a 64-bit type, so its field must be 8 bytes, not %u (or use the "
                     "type's 32-bit form)",
                     who, tname, size);
        else
            pcw__why(why, len,
                     "%s: %s is a 32-bit type, so its field must be 4 bytes, not %u (or use the "
                     "type's LARGE form; only PERF_COUNTER_RAWCOUNT and _HEX, PERF_AVERAGE_TIMER "
                     "and PERF_COUNTER_QUEUELEN_TYPE may be 8)",
                     who, tname, size);
        return PCW_E_INVALID_PARAMETER;
    }
    if (size == 4 && PCW_COUNTER_TYPE_TICKS_32(c->type) && !c->perf_freq_ref) {
        /* Issue 27: at 10^9 ticks per second 2^32 ticks are 4.3 s of summed
         * time, so consumers would see a wrap (a reset) every few samples. */
        pcw__why(why, len,
                 "%s: a 4-byte %s counts nanoseconds by default and wraps after 4.3 s of summed "
                 "time: declare the field uint64_t (8 bytes), or set perf_freq_ref to a counter "
                 "holding a coarser frequency (e.g. 1000000 for microseconds: 71 min)",
                 who, tname);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->type != PERF_PCW_HISTOGRAM &&
        (c->offset % size != 0 || c->offset > PCW_MAX_BLOCK_SIZE - size)) {
        pcw__why(why, len,
                 c->offset % size ? "%s: offset %u is not a multiple of its size"
                                  : "%s: offset %u is past the largest data block (1 MiB)",
                 who, c->offset);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->aggregate > PCW_AGGREGATE_MAX_) {
        pcw__why(why, len, "%s: aggregate %u is not a pcw_aggregate", who, c->aggregate);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->attributes & ~(uint32_t)PCW_ATTR_ALL_) {
        pcw__why(why, len, "%s: attributes 0x%x has bits no PCW_ATTR_* defines", who,
                 c->attributes);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->default_scale < -10 || c->default_scale > 10) {
        pcw__why(why, len, "%s: default_scale %d is outside -10..10", who, (int)c->default_scale);
        return PCW_E_INVALID_PARAMETER;
    }
    if (c->detail_level != 0 && c->detail_level != PCW_DETAIL_NOVICE &&
        c->detail_level != PCW_DETAIL_ADVANCED && c->detail_level != PCW_DETAIL_EXPERT &&
        c->detail_level != PCW_DETAIL_WIZARD) {
        pcw__why(why, len, "%s: detail_level %u is not a PCW_DETAIL_* value (or 0)", who,
                 c->detail_level);
        return PCW_E_INVALID_PARAMETER;
    }
    const struct {
        const char *what;
        uint32_t ref;
    } refs[] = {{"base_ref", c->base_ref},
                {"perf_time_ref", c->perf_time_ref},
                {"perf_freq_ref", c->perf_freq_ref},
                {"multi_ref", c->multi_ref}};
    for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++)
        if (refs[k].ref && pcw__find_counter(in, refs[k].ref - 1) < 0) {
            pcw__why(why, len,
                     "%s: %s names counter id %u, which is not in the table (references are "
                     "PCW_REF(id), 0 for none)",
                     who, refs[k].what, refs[k].ref - 1);
            return PCW_E_INVALID_PARAMETER;
        }
    if (pcw__default_base(c->type) == 2) {
        /* Windows' rule: the base is base_ref's, else the counter after. */
        int b = c->base_ref ? pcw__find_counter(in, c->base_ref - 1)
                            : (i + 1 < in->counter_count ? (int)i + 1 : -1);
        if (b < 0) {
            pcw__why(why, len,
                     "%s: %s needs a base counter: register one of a base type (e.g. "
                     "PERF_RAW_BASE, PERF_AVERAGE_BASE) right after it, or set base_ref",
                     who, tname);
            return PCW_E_INVALID_PARAMETER;
        }
        if (!pcw_counter_type_is_base(in->counters[b].type)) {
            char base[160];
            pcw__counter_label(base, sizeof base, in, (uint32_t)b);
            const char *bt = pcw__counter_type_name(in->counters[b].type);
            pcw__why(why, len,
                     "%s: %s needs a base counter, and its base (%s, %s) is %s, not a base type "
                     "(e.g. PERF_RAW_BASE, PERF_AVERAGE_BASE)",
                     who, tname, c->base_ref ? "base_ref" : "the counter after it", base,
                     bt ? bt : "of an unknown type");
            return PCW_E_INVALID_PARAMETER;
        }
    }
    for (uint32_t j = 0; j < i; j++) {
        const pcw_counter_desc *d = &in->counters[j];
        if (d->id == c->id) {
            pcw__why(why, len, "%s: id %u is also counter %u's (ids are unique)", who, c->id, j);
            return PCW_E_INVALID_PARAMETER;
        }
        if (pcw__name_equal(d->name, strlen(d->name), c->name, strlen(c->name))) {
            pcw__why(why, len,
                     "%s: name already used by counter %u (names compare case-insensitively)", who,
                     j);
            return PCW_E_INVALID_PARAMETER;
        }
    }
    if (c->offset + size > need[c->block])
        need[c->block] = c->offset + size;
    return PCW_OK;
}

/* Validate `in` as PcwRegister does, and derive the block layout. On
 * failure, `why` (if not NULL) says which field or counter and why. */
static int pcw__validate_registration(const pcw_registration_info *in, uint32_t *nblocks,
                                      uint32_t *need, char *why, size_t len)
{
    const char *fault;
    if (in->version != PCW_VERSION_1 && in->version != PCW_VERSION_2) {
        pcw__why(why, len,
                 "version 0x%x: set it to PCW_CURRENT_VERSION (PCW_VERSION_2, 0x200) or "
                 "PCW_VERSION_1 (0x100)",
                 in->version);
        return PCW_E_INVALID_PARAMETER;
    }
    if (in->flags & ~(uint32_t)PCW_REG_FLAGS_ALL_) {
        pcw__why(why, len, "flags 0x%x: bits 0x%x are not PCW_REG_* flags", in->flags,
                 in->flags & ~(uint32_t)PCW_REG_FLAGS_ALL_);
        return PCW_E_INVALID_PARAMETER;
    }
    /* PcwRegister knows PcwRegistrationSiloNeutral from version 2 on. */
    if ((in->flags & PCW_REG_SILO_NEUTRAL) && in->version != PCW_VERSION_2) {
        pcw__why(why, len,
                 "flags 0x%x: PCW_REG_SILO_NEUTRAL needs version PCW_VERSION_2 (0x200), not "
                 "0x%x",
                 in->flags, in->version);
        return PCW_E_INVALID_PARAMETER;
    }
    if ((fault = pcw__string_fault(in->name, 1))) {
        pcw__why(why, len, "the counterset name %s", fault);
        return PCW_E_INVALID_PARAMETER;
    }
    const struct {
        const char *what, *s;
    } strs[] = {{"description", in->description},
                {"guid", in->guid},
                {"uri", in->uri},
                {"symbol", in->symbol},
                {"provider_name", in->provider_name},
                {"provider_guid", in->provider_guid},
                {"provider_type", in->provider_type},
                {"provider_callback", in->provider_callback},
                {"application_identity", in->application_identity}};
    for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
        if ((fault = pcw__string_fault(strs[k].s, 0))) {
            pcw__why(why, len, "counterset \"%.80s\": its %s %s", in->name, strs[k].what, fault);
            return PCW_E_INVALID_PARAMETER;
        }
    if (in->instance_type > PCW_INSTANCE_TYPE_MAX_) {
        pcw__why(why, len, "counterset \"%.80s\": instance_type %u is not a pcw_instance_type",
                 in->name, in->instance_type);
        return PCW_E_INVALID_PARAMETER;
    }
    if (in->counter_count > PCW_MAX_COUNTERS) {
        pcw__why(why, len, "counterset \"%.80s\": %u counters; at most 4096 (PCW_MAX_COUNTERS)",
                 in->name, in->counter_count);
        return PCW_E_TOO_MANY_COUNTERS;
    }
    if (in->counter_count == 0 || !in->counters) {
        pcw__why(why, len, "counterset \"%.80s\": %s", in->name,
                 in->counter_count ? "counters is NULL" : "counter_count is 0: it needs counters");
        return PCW_E_INVALID_PARAMETER;
    }
    uint32_t blocks = in->block_count;
    if (blocks > PCW_MAX_BLOCKS || (in->block_sizes && blocks == 0)) {
        pcw__why(why, len,
                 blocks ? "counterset \"%.80s\": block_count %u; at most 64 (PCW_MAX_BLOCKS)"
                        : "counterset \"%.80s\": block_sizes is set but block_count is %u",
                 in->name, blocks);
        return PCW_E_INVALID_PARAMETER;
    }
    uint32_t maxblock = 0;
    for (uint32_t i = 0; i < in->counter_count; i++) {
        uint32_t b = in->counters[i].block;
        if (b >= PCW_MAX_BLOCKS || (in->block_count && b >= in->block_count)) {
            char who[160];
            pcw__counter_label(who, sizeof who, in, i);
            pcw__why(why, len, "%s: block %u is past %s (%u)", who, b,
                     in->block_count ? "block_count" : "the 64 blocks an instance may have",
                     in->block_count ? in->block_count : PCW_MAX_BLOCKS);
            return PCW_E_INVALID_PARAMETER;
        }
        if (b + 1 > maxblock)
            maxblock = b + 1;
    }
    if (blocks == 0)
        blocks = maxblock;
    for (uint32_t b = 0; b < blocks; b++)
        need[b] = 0;
    for (uint32_t i = 0; i < in->counter_count; i++) {
        int rc = pcw__validate_counter(in, i, need, why, len);
        if (rc != PCW_OK)
            return rc;
    }
    for (uint32_t b = 0; in->block_sizes && b < blocks; b++) {
        if (in->block_sizes[b] < need[b]) {
            pcw__why(why, len,
                     "counterset \"%.80s\": block_sizes[%u] is %u bytes, less than the %u its "
                     "counters need",
                     in->name, b, in->block_sizes[b], need[b]);
            return PCW_E_INVALID_PARAMETER;
        } else if (in->block_sizes[b] > PCW_MAX_BLOCK_SIZE) {
            pcw__why(why, len,
                     "counterset \"%.80s\": block_sizes[%u] is %u bytes, more than 1 MiB "
                     "(PCW_MAX_BLOCK_SIZE)",
                     in->name, b, in->block_sizes[b]);
            return PCW_E_INVALID_PARAMETER;
        }
    }
    *nblocks = blocks;
    return PCW_OK;
}

const char *pcw_register_error(int rc, const pcw_registration_info *info, char *buf, size_t len)
{
    if (!buf || !len)
        return "";
    uint32_t need[PCW_MAX_BLOCKS], nblocks;
    buf[0] = 0;
    if (rc == PCW_E_INVALID_PARAMETER || rc == PCW_E_TOO_MANY_COUNTERS) {
        if (!info)
            pcw__why(buf, len, "info is NULL");
        else if (pcw__validate_registration(info, &nblocks, need, buf, len) == PCW_OK)
            buf[0] = 0; /* info is fine: the failure was elsewhere */
    }
    if (!buf[0])
        pcw__why(buf, len, "%s", pcw_status_str(rc));
    return buf;
}

/* Free a registration record (its handle, if it still has one, too). */
PCW__PRIVATE void pcw__free_registration(pcw__reg *r)
{
    if (r->handle)
        pcw__handle_claim(r->handle, PCW__HANDLE_REGISTRATION);
    if (r->names)
        cds_lfht_destroy(r->names, NULL);
    free(r->block_off);
    free(r->counters);
    free(r->free_slots.v);
    free(r->limbo.v);
    free(r->chunks);
    pthread_cond_destroy(&r->reclaimed);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

/* ---- registration ------------------------------------------------------- */

int pcw_register(pcw_registration **out, pcw_provider *ph, const pcw_registration_info *in)
{
    if (!out || !ph || !in)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    pcw__prov *p = (pcw__prov *)pcw__handle_get(ph, PCW__HANDLE_PROVIDER);
    if (!p)
        return PCW_E_INVALID_HANDLE;
    uint32_t need[PCW_MAX_BLOCKS], nblocks = 0;
    int rc = pcw__validate_registration(in, &nblocks, need, NULL, 0);
    if (rc != PCW_OK)
        return rc;
    /* A callback counterset is served through the control channel: have it
     * listening before consumers can see the counterset. */
    if (in->callback && (rc = pcw__control_ensure(p)) != PCW_OK)
        return rc;

    pcw__reg *r = (pcw__reg *)calloc(1, sizeof *r);
    if (!r)
        return PCW_E_NO_MEMORY;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->reclaimed, NULL);
    r->prov = p;
    r->instance_type = in->instance_type;
    r->flags = in->flags;
    r->counter_count = in->counter_count;
    r->block_count = nblocks;
    r->callback = in->callback;
    r->callback_context = in->callback_context;
    r->block_off = (uint32_t *)calloc(3 * (size_t)(nblocks ? nblocks : 1), sizeof(uint32_t));
    r->counters = (pcw_counter_desc *)calloc(in->counter_count, sizeof *r->counters);
    r->names = cds_lfht_new_flavor(64, 64, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                                   &urcu_bp_flavor, NULL);
    r->handle = pcw__handle_new(PCW__HANDLE_REGISTRATION, r);
    if (!r->block_off || !r->counters || !r->names || !r->handle) {
        pcw__free_registration(r);
        return PCW_E_NO_MEMORY;
    }
    r->block_size = r->block_off + nblocks;
    r->block_need = r->block_size + nblocks;
    uint32_t data = 0;
    for (uint32_t b = 0; b < nblocks; b++) {
        uint32_t sz = in->block_sizes ? in->block_sizes[b] : need[b];
        r->block_off[b] = data;
        r->block_size[b] = sz;
        r->block_need[b] = need[b];
        data += (uint32_t)pcw__align(sz, 8);
    }
    uint32_t cset_flags = (in->flags & PCW_REG_SEQCOUNT ? PCW_CSET_F_SEQCOUNT : 0) |
                          (in->flags & PCW_REG_CACHELINE ? PCW_CSET_F_CACHELINE : 0) |
                          (in->callback ? PCW_CSET_F_CALLBACK : 0);
    r->data_size = data;
    r->row_data = pcw__seg_row_data(cset_flags);
    r->data_stride = (uint32_t)pcw__seg_row_stride(cset_flags, data);
    for (uint32_t i = 0; i < in->counter_count; i++) {
        r->counters[i] = in->counters[i];
        r->counters[i].size = pcw__counter_size(&in->counters[i]);
        r->counters[i].name = r->counters[i].description = NULL;
        r->counters[i].uri = r->counters[i].symbol = NULL;
    }

    pthread_mutex_lock(&p->lock);
    uint64_t off = pcw__arena_alloc(p, sizeof(pcw_seg_cset), &rc);
    uint64_t coff = off ? pcw__arena_alloc(p, sizeof(pcw_seg_counter) * in->counter_count, &rc) : 0;
    uint64_t boff = coff ? pcw__arena_alloc(p, 8 * (uint64_t)(nblocks ? nblocks : 1), &rc) : 0;
    if (boff) {
        pcw_seg_cset *cs = (pcw_seg_cset *)(p->base + off);
        /* Strings first (each may grow the arena; pointers into it stay
         * valid because the mapping never moves). */
        rc = pcw__arena_str(p, in->name, &cs->name);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->description, &cs->description);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->guid, &cs->guid);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->uri, &cs->uri);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->symbol, &cs->symbol);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_name, &cs->provider_name);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_guid, &cs->provider_guid);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_type, &cs->provider_type);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->provider_callback, &cs->provider_callback);
        if (rc == PCW_OK)
            rc = pcw__arena_str(p, in->application_identity, &cs->application_identity);
        pcw_seg_counter *sc = (pcw_seg_counter *)(p->base + coff);
        for (uint32_t i = 0; rc == PCW_OK && i < in->counter_count; i++) {
            const pcw_counter_desc *c = &in->counters[i];
            sc[i].id = c->id, sc[i].type = c->type, sc[i].block = c->block;
            /* The segment records ids, PCW_NO_COUNTER for none, and the
             * base the default rule chose: consumers need not know it. */
            sc[i].offset = c->offset, sc[i].size = pcw__counter_size(c);
            sc[i].base_id = pcw__base_id(in, i);
            sc[i].perf_time_id = c->perf_time_ref ? c->perf_time_ref - 1 : PCW_NO_COUNTER;
            sc[i].perf_freq_id = c->perf_freq_ref ? c->perf_freq_ref - 1 : PCW_NO_COUNTER;
            sc[i].multi_id = c->multi_ref ? c->multi_ref - 1 : PCW_NO_COUNTER;
            sc[i].default_scale = c->default_scale;
            sc[i].detail_level = c->detail_level ? c->detail_level : (uint32_t)PCW_DETAIL_STANDARD;
            sc[i].aggregate = c->aggregate, sc[i].attributes = c->attributes;
            sc[i].histogram = c->histogram;
            rc = pcw__arena_str(p, c->name, &sc[i].name);
            if (rc == PCW_OK)
                rc = pcw__arena_str(p, c->description, &sc[i].description);
            if (rc == PCW_OK)
                rc = pcw__arena_str(p, c->uri, &sc[i].uri);
            if (rc == PCW_OK)
                rc = pcw__arena_str(p, c->symbol, &sc[i].symbol);
        }
        if (rc == PCW_OK) {
            uint32_t *bl = (uint32_t *)(p->base + boff);
            for (uint32_t b = 0; b < nblocks; b++)
                bl[2 * b] = r->block_off[b], bl[2 * b + 1] = r->block_size[b];
            cs->flags = cset_flags;
            cs->instance_type = in->instance_type;
            cs->counter_count = in->counter_count;
            cs->counters_off = coff;
            cs->block_count = nblocks;
            cs->data_size = r->data_size;
            cs->blocks_off = boff;
            cs->data_stride = r->data_stride;
            cs->reg_index = p->nregs++;
            __atomic_store_n(&cs->state, PCW_CSET_LIVE, __ATOMIC_RELAXED);
            /* Publish: the release makes every field above visible to a
             * consumer that acquires the link (header.cset_head or the
             * previous counterset's next). */
            if (p->last_cset)
                __atomic_store_n(&((pcw_seg_cset *)(p->base + p->last_cset))->next, off,
                                 __ATOMIC_RELEASE);
            else
                __atomic_store_n(&p->hdr->cset_head, off, __ATOMIC_RELEASE);
            p->last_cset = off;
            r->cset = cs;
            r->cset_off = off;
            pcw__list_add_tail_rcu(&r->node, &p->regs);
            pcw__bump_generation(p);
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (rc != PCW_OK) {
        /* Arena bytes taken by a failed registration stay unused: they are
         * unreachable from the header, so consumers never see them. */
        pcw__free_registration(r);
        return rc;
    }
    *out = (pcw_registration *)r->handle;
    return PCW_OK;
}
