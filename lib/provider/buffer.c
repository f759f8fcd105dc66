/* SPDX-License-Identifier: MIT */
/*
 * lib/provider/buffer.c - pcw_buffer, what a callback fills with
 * pcw_add_instance (PcwAddInstance): the checks on each instance, the
 * request's masks, and the encoded reply items. Private (see internal.h).
 */
#include "internal.h"

#define PCW__BUFFER_ITEMS_START 8192
/* What a connection keeps of each of its buffer's allocations between
 * requests: a hundred-instance reply's (~5 KB of items, 1 KiB of table)
 * fits, so a steady consumer's collections allocate nothing; a larger one
 * is freed after its request (memory held per connection stays bounded). */
#define PCW__BUFFER_KEEP_BYTES (64u << 10)

PCW__PRIVATE int pcw__buffer_init(pcw_buffer *b, pcw__reg *r, int collect, uint64_t counter_mask,
                                  uint32_t instance_id, const char *mask)
{
    b->reg = r;
    b->collect = collect;
    b->counter_mask = counter_mask;
    b->instance_id = instance_id;
    b->mask = mask;
    b->mask_len = strlen(mask);
    b->all_names = b->mask_len == 1 && mask[0] == '*';
    b->count = 0;
    b->duplicates = 0;
    b->names_len = 0;
    b->nnames = 0;
    if (b->tab)
        memset(b->tab, 0, b->tab_cap * sizeof *b->tab);
    memset(&b->items, 0, sizeof b->items);
    b->items.limit = PCW_CTL_MAX_REPLY - 16;
    /* Room for a typical reply from the start (a hundred instances of a
     * few counters is ~5 KB): growing from nothing, the items were copied
     * five times per collection. Untouched pages cost nothing. */
    if (!b->heap && (b->heap = (unsigned char *)malloc(PCW__BUFFER_ITEMS_START)))
        b->heap_cap = PCW__BUFFER_ITEMS_START;
    b->items.buf = b->heap, b->items.cap = b->heap ? b->heap_cap : 0;
    b->heap = NULL, b->heap_cap = 0; /* the writer's now */
    return PCW_OK;
}

/* Free *p if it holds more than the buffer keeps between requests. */
static void pcw__buffer_trim(void **p, size_t *cap, size_t elem)
{
    if (*cap > PCW__BUFFER_KEEP_BYTES / elem) {
        free(*p);
        *p = NULL, *cap = 0;
    }
}

PCW__PRIVATE void pcw__buffer_done(pcw_buffer *b)
{
    if (b->items.buf) {
        free(b->heap);
        b->heap = b->items.buf, b->heap_cap = b->items.cap;
    }
    memset(&b->items, 0, sizeof b->items);
    pcw__buffer_trim((void **)&b->heap, &b->heap_cap, 1);
    pcw__buffer_trim((void **)&b->names, &b->names_cap, 1);
    pcw__buffer_trim((void **)&b->name_at, &b->name_at_cap, sizeof *b->name_at);
    pcw__buffer_trim((void **)&b->tab, &b->tab_cap, sizeof *b->tab);
}

PCW__PRIVATE void pcw__buffer_free(pcw_buffer *b)
{
    pcw__buffer_done(b);
    free(b->heap);
    free(b->names);
    free(b->name_at);
    free(b->tab);
    memset(b, 0, sizeof *b);
}

/* Remember `name`; PCW_E_DUPLICATE_NAME if an equal one is there. */
static int pcw__buffer_claim_name(pcw_buffer *b, const char *name, size_t len)
{
    if (b->nnames + 1 > b->tab_cap / 2) {
        /* 256 slots (1 KiB): a hundred names without a rehash. */
        size_t cap = b->tab_cap ? b->tab_cap * 2 : 256;
        uint32_t *t = (uint32_t *)calloc(cap, sizeof *t);
        if (!t || b->nnames >= UINT32_MAX - 1) {
            free(t);
            return PCW_E_NO_MEMORY;
        }
        for (size_t i = 0; i < b->nnames; i++) {
            uint64_t at = b->name_at[i];
            size_t h = (size_t)pcw__name_hash(b->names + (at >> 32), (uint32_t)at) & (cap - 1);
            while (t[h])
                h = (h + 1) & (cap - 1);
            t[h] = (uint32_t)i + 1;
        }
        free(b->tab);
        b->tab = t, b->tab_cap = cap;
    }
    size_t h = (size_t)pcw__name_hash(name, len) & (b->tab_cap - 1);
    for (; b->tab[h]; h = (h + 1) & (b->tab_cap - 1)) {
        uint64_t at = b->name_at[b->tab[h] - 1];
        if (pcw__name_equal(b->names + (at >> 32), (uint32_t)at, name, len))
            return PCW_E_DUPLICATE_NAME;
    }
    if (b->names_len + len > UINT32_MAX)
        return PCW_E_NO_MEMORY;
    if (b->names_len + len > b->names_cap) {
        size_t cap = b->names_cap ? b->names_cap : 1024;
        while (cap < b->names_len + len)
            cap *= 2;
        char *n = (char *)realloc(b->names, cap);
        if (!n)
            return PCW_E_NO_MEMORY;
        b->names = n, b->names_cap = cap;
    }
    if (b->nnames == b->name_at_cap) {
        size_t cap = b->name_at_cap ? b->name_at_cap * 2 : 128;
        uint64_t *a = (uint64_t *)realloc(b->name_at, cap * sizeof *a);
        if (!a)
            return PCW_E_NO_MEMORY;
        b->name_at = a, b->name_at_cap = cap;
    }
    if (len)
        memcpy(b->names + b->names_len, name, len);
    b->name_at[b->nnames] = (uint64_t)b->names_len << 32 | len;
    b->names_len += len;
    b->tab[h] = (uint32_t)++b->nnames;
    return PCW_OK;
}

int pcw_add_instance(pcw_buffer *b, const char *name, uint32_t id, uint32_t count,
                     const pcw_data *data)
{
    if (!b || !name || id >= PCW_ANY_INSTANCE_ID - 1)
        return PCW_E_INVALID_PARAMETER;
    pcw__reg *r = b->reg;
    if (count && (count != r->block_count || !data))
        return PCW_E_INVALID_COUNT;
    for (uint32_t i = 0; i < count; i++)
        if (data[i].size < r->block_need[i])
            return PCW_E_BUFFER_TOO_SMALL;
    size_t len;
    int rc = pcw__check_instance_name(r, name, &len);
    if (rc != PCW_OK)
        return rc;
    rc = pcw__buffer_claim_name(b, name, len);
    if (rc == PCW_E_DUPLICATE_NAME) {
        /* PCW documents names as unique, not a duplicate as a failure: a
         * KCS-style callback returns on its first error, which would lose
         * every instance after this one. The first of the names is kept,
         * this one dropped, and the consumer told once (the reply's
         * callback status, pcw__conn_collect). */
        b->duplicates++;
        return PCW_OK;
    }
    if (rc != PCW_OK)
        return rc;
    /* The masks: whatever the callback did, the consumer gets only what it
     * asked for. */
    if (b->instance_id != PCW_ANY_INSTANCE_ID && id != b->instance_id)
        return PCW_OK;
    /* "*" matches every valid name (and this one is valid). */
    if (!b->all_names && !pcw__wildcard_match(b->mask, b->mask_len, name, len))
        return PCW_OK;
    int with_data = b->collect && count;
    /* The item's bytes in one reservation: id, name length, flags, name,
     * data (control_proto.h). */
    unsigned char *item = pcw__ctl_reserve(&b->items, 12 + len + (with_data ? r->data_size : 0));
    if (!item)
        return PCW_E_NO_MEMORY;
    pcw__ctl_put_le(item, id, 4);
    pcw__ctl_put_le(item + 4, len, 4);
    pcw__ctl_put_le(item + 8, with_data ? PCW_CTL_ITEM_DATA : 0, 4);
    memcpy(item + 12, name, len);
    if (with_data) {
        /* Straight into the item: what the counter mask leaves out, and
         * what a block shorter than its place does not fill, is zero. */
        unsigned char *d = item + 12 + len;
        memset(d, 0, r->data_size);
        if (b->counter_mask == ~0ull) {
            for (uint32_t i = 0; i < count; i++)
                if (data[i].data)
                    memcpy(d + r->block_off[i], data[i].data,
                           data[i].size < r->block_size[i] ? data[i].size : r->block_size[i]);
        } else {
            for (uint32_t c = 0; c < r->counter_count; c++) {
                const pcw_counter_desc *cd = &r->counters[c];
                if (!pcw__ctl_counter_selected(b->counter_mask, c) || !data[cd->block].data)
                    continue;
                memcpy(d + r->block_off[cd->block] + cd->offset,
                       (const unsigned char *)data[cd->block].data + cd->offset, cd->size);
            }
        }
    }
    b->count++;
    return PCW_OK;
}
