/* SPDX-License-Identifier: MIT */
/*
 * pcw/provider_impl/records.h - the provider's private records: what a
 * pcw_provider, pcw_registration and pcw_instance handle names, and who
 * owns each field. Private: part of the implementation that
 * PCW_PROVIDER_IMPLEMENTATION compiles (pcw/provider_impl/impl.h); not an
 * API. Names starting with pcw__ are private.
 */
#ifndef PCW_PROVIDER_IMPL_RECORDS_H
#define PCW_PROVIDER_IMPL_RECORDS_H

typedef struct pcw__prov pcw__prov; /* behind a pcw_provider handle */
typedef struct pcw__reg pcw__reg;   /* behind a pcw_registration handle */
typedef struct pcw__inst pcw__inst; /* behind a pcw_instance handle */

/* The control channel (control.h) starts with the provider and stops
 * before it closes. */
static int pcw__control_start(pcw__prov *p);
static void pcw__control_stop(pcw__prov *p);
/* Start the channel if it is not running (first callback registration). */
static int pcw__control_ensure(pcw__prov *p);
/* After r left prov->regs and a grace period: wait for callbacks on r. */
static void pcw__control_forget(pcw__reg *r);

#define PCW__DEFAULT_MAX_SIZE (16ull << 30)
#define PCW__MIN_GROW         (1ull << 20)
#define PCW__MAX_GROW         (256ull << 20)
#define PCW__NAME_CLASSES     ((PCW_MAX_INSTANCE_NAME_BYTES + 15) / 16 + 1)

/* A vector of uint64_t (free lists). */
typedef struct pcw__vec {
    uint64_t *v;
    size_t n, cap;
} pcw__vec;

static int pcw__vec_push(pcw__vec *a, uint64_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        uint64_t *v = (uint64_t *)realloc(a->v, cap * sizeof *v);
        if (!v)
            return PCW_E_NO_MEMORY;
        a->v = v, a->cap = cap;
    }
    a->v[a->n++] = x;
    return PCW_OK;
}

/* A provider. Freed by pcw_provider_close. */
struct pcw__prov {
    void *handle;         /* its pcw_provider handle (handles.h) */
    pthread_mutex_t lock; /* arena, growth, free name lists, cset list */
    int fd;
    unsigned char *base; /* reserved address range; the file is mapped at its start */
    uint64_t max_size;   /* bytes reserved */
    uint64_t mapped;     /* bytes of file mapped (= file size) */
    uint64_t reserved;   /* bytes of file with pages reserved (fallocate), <=
                            mapped; the tail past it was given back */
    uint64_t used;       /* arena bump pointer (= header.size) */
    pcw_seg_header *hdr;
    uint64_t last_cset;                    /* offset of the last pcw_seg_cset, 0 = none */
    uint32_t nregs;                        /* registrations made, for reg_index */
    pcw__vec name_free[PCW__NAME_CLASSES]; /* freed name blocks by size class */
    /* Open registrations. Changed under `lock` (pcw__list_*_rcu); walked
     * by the control-channel threads under urcu_bp_read_lock(). */
    struct cds_list_head regs;
    void *control;            /* the control channel (control.h), or NULL */
    pcw_provider_options opt; /* as opened (strings not kept) */
    char path[PATH_MAX];
};

/* A chunk of slots, as the provider sees it (pcw/layout.h). */
typedef struct pcw__chunk {
    uint32_t first, n;
    uint32_t nfree;     /* slots in r->free_slots */
    int punched;        /* its pages went back to the system (pcw__punch) */
    uint64_t gen_floor; /* even, above every gen its slots had before the
                           punch zeroed them: reuse continues from here */
    pcw_seg_chunk *hdr;
    uint64_t *live;      /* live bits, (n + 63) / 64 words */
    uint64_t *gens;      /* gen[n] */
    uint64_t *names;     /* name ref[n] */
    unsigned char *rows; /* row[n], data_stride bytes each */
} pcw__chunk;

/* A registration. Freed by pcw_unregister (directly or from
 * pcw_provider_close), after a grace period. */
struct pcw__reg {
    void *handle; /* its pcw_registration handle (handles.h) */
    pcw__prov *prov;
    struct cds_list_head node; /* in prov->regs */
    pthread_mutex_t lock;      /* slot free list, chunk table */
    pcw_seg_cset *cset;
    uint64_t cset_off;
    uint32_t instance_type, flags;
    uint32_t counter_count, block_count;
    uint32_t data_size, data_stride, row_data; /* row_data: data's offset in a row */
    uint32_t *block_off, *block_size;          /* per block: offset in slot data, size */
    uint32_t *block_need;                      /* per block: end of its last counter */
    pcw_counter_desc *counters;                /* private copy (names not kept) */
    struct cds_lfht *names;                    /* open instances by folded name */
    pcw__vec free_slots;                       /* slot indexes free for reuse */
    size_t reclaiming;                         /* instances in a batch being reclaimed */
    pthread_cond_t reclaimed;                  /* signalled when that batch is back */
    pcw__vec limbo;                            /* closed instances (pointers) waiting
                                                  for a grace period before their slot
                                                  and name are reused */
    pcw__chunk *chunks;
    size_t nchunks, chunks_cap;
    uint64_t last_chunk; /* offset of the last chunk, 0 = none */
    uint32_t slot_count;
    pcw_callback callback;
    void *callback_context;
};

/* An instance. Its handle is freed when it closes; the record itself
 * after a grace period (pcw__reclaim), because lookups in reg->names may
 * still hold it. */
struct pcw__inst {
    struct cds_lfht_node node; /* in reg->names */
    void *handle;              /* its pcw_instance handle (handles.h) */
    pcw__reg *reg;
    pcw_seg_chunk *chunk; /* its chunk (closes counter) */
    uint64_t *live;       /* the live-bit word of its slot */
    uint64_t live_bit;
    uint64_t *gen;       /* its slot's generation */
    uint64_t *seq;       /* its row's sequence count, NULL without
                            PCW_REG_SEQCOUNT */
    unsigned char *data; /* its data: blocks at reg->block_off[] */
    uint64_t name_off;
    uint32_t name_len, id;
    /* Private copy for lookups, allocated with the record, right after it
     * (a pointer, not a flexible array member: this header is compiled as
     * C++ too, where those are not standard). */
    char *name;
};

#endif /* PCW_PROVIDER_IMPL_RECORDS_H */
