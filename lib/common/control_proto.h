/* SPDX-License-Identifier: MIT */
/*
 * common/control_proto.h - the control channel's wire format, shared by the
 * provider (lib/provider/control.c) and the consumer library
 * (lib/consumer/control.c).
 *
 * One Unix-domain stream socket per provider, beside its segment
 * (<pid>-<nonce>.sock). Every message, both ways, is a fixed 24-byte header
 * followed by `length` payload bytes. All integers are little-endian and
 * encoded byte by byte, so neither side depends on struct layout:
 *
 *   offset size  field
 *   0      4     magic       PCW_CTL_MAGIC ("PCTL")
 *   4      2     version     PCW_CTL_VERSION
 *   6      2     type        PCW_CTL_* request; a reply sets PCW_CTL_REPLY
 *   8      4     length      payload bytes; requests <= PCW_CTL_MAX_REQUEST,
 *                            replies <= PCW_CTL_MAX_REPLY
 *   12     4     id          chosen by the consumer, echoed in the reply;
 *                            a late reply is recognised by it and dropped
 *   16     4     status      replies: pcw_status (int32, <= 0), or a
 *                            positive code: the provider's control
 *                            callback's own (Win32) error; requests: 0
 *   20     4     reserved    0
 *
 * Request payloads (strings are u32 byte length + bytes, no NUL):
 *   ADD_COUNTER, REMOVE_COUNTER:
 *       u32 reg_index, u32 counter_index, u32 instance_id, str instance_mask
 *   ENUMERATE, COLLECT:
 *       u32 reg_index, u32 flags (PCW_CTL_HOLD, PCW_CTL_TIMEOUT),
 *       u64 counter_mask (bit i = the i-th registered counter, by
 *       position), u32 instance_id, str instance_mask,
 *       then with PCW_CTL_TIMEOUT: u32 timeout_ms (the consumer's time left)
 *   COLLECT_END: u32 reg_index
 *   PING, AREA: empty
 * A payload must be consumed exactly: trailing bytes are a protocol error.
 *
 * Reply payloads:
 *   ENUMERATE, COLLECT (status PCW_OK):
 *       i32 callback_status (informational), u32 count, u32 data_size,
 *       then count items: u32 id, u32 name_len, u32 item_flags
 *       (PCW_CTL_ITEM_DATA), name bytes, data_size bytes if ITEM_DATA
 *   AREA (status PCW_OK): u32 area_size, and one descriptor (SCM_RIGHTS,
 *       sent with the reply's bytes): the connection's reply area, a
 *       memfd of area_size (<= PCW_CTL_MAX_REPLY) bytes sealed against
 *       shrinking and growing, opened read-only (docs/design.md 12.1)
 *   a reply to an ENUMERATE or COLLECT sent with PCW_CTL_IN_AREA may be a
 *       completion instead: type (request | PCW_CTL_REPLY |
 *       PCW_CTL_AREA_DONE), payload u32 offset, u32 length: the reply
 *       payload above is area[offset, offset + length)
 *   everything else, and every error: empty
 *   PCW_CTL_REFUSED (unsolicited, id 0, status PCW_E_PERMISSION, or
 *   PCW_E_CONNECTIONS_FULL - PCW_E_BUSY from providers built before it):
 *   the provider will not serve this peer; it then closes.
 *
 * The helpers below never read or write outside their buffer: a reader that
 * runs short sets `bad` and returns zeros, so a decoder checks once at the
 * end.
 *
 * Concurrency: pure functions on caller-owned buffers; any thread.
 */
#ifndef PCW_CONTROL_PROTO_H
#define PCW_CONTROL_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PCW_CTL_MAGIC       0x4C544350u /* "PCTL" little-endian */
#define PCW_CTL_VERSION     1u
#define PCW_CTL_HEADER_SIZE 24u
#define PCW_CTL_MAX_REQUEST (64u << 10) /* bytes of request payload */
#define PCW_CTL_MAX_REPLY   (64u << 20) /* bytes of reply payload */
/* A provider closes a connection that has sent no request for this long
 * (unless the consumer has counters added on it); a consumer reconnects
 * rather than reuse a connection idle for half of it. A provider may
 * define it smaller in its implementation file (the one that defines
 * PCW_PROVIDER_IMPLEMENTATION) before including pcw/provider.h. */
#ifndef PCW_CTL_IDLE_TIMEOUT_MS
#define PCW_CTL_IDLE_TIMEOUT_MS 30000
#endif
/* The same for a connection with counters added: long enough for a
 * consumer that collects every few minutes (an exporter scraped every
 * 60 s) to keep its connection. The consumer library adds its counters
 * again whenever it connects anew, so a connection closed for silence (or
 * shed to make room, lib/provider/control.c) costs it nothing. */
#ifndef PCW_CTL_ADDED_IDLE_TIMEOUT_MS
#define PCW_CTL_ADDED_IDLE_TIMEOUT_MS 600000
#endif

enum {
    PCW_CTL_PING = 1,
    PCW_CTL_ADD_COUNTER = 2,
    PCW_CTL_REMOVE_COUNTER = 3,
    PCW_CTL_ENUMERATE = 4,
    PCW_CTL_COLLECT = 5,
    PCW_CTL_COLLECT_END = 6,
    /* Ask for a reply area: only a provider whose segment header has
     * PCW_SEG_F_AREA (common/layout.h) is asked; those before it would
     * answer PCW_E_PROTOCOL (an unknown type) and close the connection. */
    PCW_CTL_AREA = 7,
    PCW_CTL_TYPE_MAX_ = PCW_CTL_AREA,
    PCW_CTL_REFUSED = 0x7FFF,
    PCW_CTL_REPLY = 0x8000,
    PCW_CTL_AREA_DONE = 0x4000, /* with REPLY: a completion (see above) */
};

/* COLLECT flags */
enum {
    PCW_CTL_HOLD = 1u << 0,    /* keep the collection open (the provider's
                                 control callback has seen COLLECT_START)
                                 until COLLECT_END or end of connection */
    PCW_CTL_TIMEOUT = 1u << 1, /* a u32 timeout_ms ends the payload: the
                                  consumer waits that long at most, after
                                  which the request is cancelled (the
                                  callbacks' cancel signal, pcw/callback.h) */
    PCW_CTL_IN_AREA = 1u << 2, /* the reply may be written to the reply
                                  area (only after PCW_CTL_AREA succeeded):
                                  the consumer has finished reading it */
};
/* The flags word's offset in an ENUMERATE/COLLECT payload. */
#define PCW_CTL_FLAGS_AT 4u
/* reply item flags */
enum { PCW_CTL_ITEM_DATA = 1u << 0 };

typedef struct pcw_ctl_header {
    uint32_t magic;
    uint16_t version, type;
    uint32_t length, id;
    int32_t status;
    uint32_t reserved;
} pcw_ctl_header;

/* ---- a growable writer ---------------------------------------------------- */

typedef struct pcw_ctl_writer {
    unsigned char *buf;
    size_t len, cap;
    size_t limit; /* refuse to grow past this many bytes */
    int bad;      /* an allocation failed or the limit was reached */
} pcw_ctl_writer;

static inline unsigned char *pcw__ctl_reserve(pcw_ctl_writer *w, size_t n)
{
    if (w->bad)
        return NULL;
    if (n > w->limit || w->len > w->limit - n) {
        w->bad = 1;
        return NULL;
    }
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap = cap > w->limit / 2 ? w->limit : cap * 2;
        unsigned char *b = (unsigned char *)realloc(w->buf, cap);
        if (!b) {
            w->bad = 1;
            return NULL;
        }
        w->buf = b, w->cap = cap;
    }
    unsigned char *p = w->buf + w->len;
    w->len += n;
    return p;
}

/* On a little-endian host the wire's order is the host's: one copy, which
 * the compiler makes a single load or store (the byte loop it leaves as a
 * loop - a collection's decode is a few hundred of them). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PCW__CTL_LE_HOST 1
#else
#define PCW__CTL_LE_HOST 0
#endif

static inline void pcw__ctl_put_le(unsigned char *p, uint64_t v, int bytes)
{
    if (PCW__CTL_LE_HOST && bytes == 4) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        return;
    }
    if (PCW__CTL_LE_HOST && bytes == 8) {
        memcpy(p, &v, 8);
        return;
    }
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static inline void pcw__ctl_put_u16(pcw_ctl_writer *w, uint16_t v)
{
    unsigned char *p = pcw__ctl_reserve(w, 2);
    if (p)
        pcw__ctl_put_le(p, v, 2);
}
static inline void pcw__ctl_put_u32(pcw_ctl_writer *w, uint32_t v)
{
    unsigned char *p = pcw__ctl_reserve(w, 4);
    if (p)
        pcw__ctl_put_le(p, v, 4);
}
static inline void pcw__ctl_put_u64(pcw_ctl_writer *w, uint64_t v)
{
    unsigned char *p = pcw__ctl_reserve(w, 8);
    if (p)
        pcw__ctl_put_le(p, v, 8);
}
static inline void pcw__ctl_put_bytes(pcw_ctl_writer *w, const void *s, size_t n)
{
    unsigned char *p = pcw__ctl_reserve(w, n);
    if (p && n)
        memcpy(p, s, n);
}
static inline void pcw__ctl_put_str(pcw_ctl_writer *w, const char *s, size_t n)
{
    if (n > UINT32_MAX) {
        w->bad = 1;
        return;
    }
    pcw__ctl_put_u32(w, (uint32_t)n);
    pcw__ctl_put_bytes(w, s, n);
}

/* Encode a header at the writer's current end. */
static inline void pcw__ctl_put_header(pcw_ctl_writer *w, const pcw_ctl_header *h)
{
    pcw__ctl_put_u32(w, h->magic);
    pcw__ctl_put_u16(w, h->version);
    pcw__ctl_put_u16(w, h->type);
    pcw__ctl_put_u32(w, h->length);
    pcw__ctl_put_u32(w, h->id);
    pcw__ctl_put_u32(w, (uint32_t)h->status);
    pcw__ctl_put_u32(w, h->reserved);
}

/* Rewrite the length field of a header that starts at `at`. */
static inline void pcw__ctl_patch_length(pcw_ctl_writer *w, size_t at)
{
    if (!w->bad && w->len >= at + PCW_CTL_HEADER_SIZE)
        pcw__ctl_put_le(w->buf + at + 8, (uint64_t)(w->len - at - PCW_CTL_HEADER_SIZE), 4);
}

static inline void pcw__ctl_writer_free(pcw_ctl_writer *w)
{
    free(w->buf);
    w->buf = NULL, w->len = w->cap = 0, w->bad = 0;
}

/* ---- a bounds-checked reader ---------------------------------------------- */

typedef struct pcw_ctl_reader {
    const unsigned char *p;
    size_t len, pos;
    int bad; /* ran past the end, or a length field was too large */
} pcw_ctl_reader;

static inline const unsigned char *pcw__ctl_take(pcw_ctl_reader *r, size_t n)
{
    if (r->bad || n > r->len - r->pos) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *q = r->p + r->pos;
    r->pos += n;
    return q;
}

static inline uint64_t pcw__ctl_get_le(const unsigned char *p, int bytes)
{
    if (PCW__CTL_LE_HOST && bytes == 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    if (PCW__CTL_LE_HOST && bytes == 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        return x;
    }
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline uint16_t pcw__ctl_get_u16(pcw_ctl_reader *r)
{
    const unsigned char *q = pcw__ctl_take(r, 2);
    return q ? (uint16_t)pcw__ctl_get_le(q, 2) : 0;
}
static inline uint32_t pcw__ctl_get_u32(pcw_ctl_reader *r)
{
    const unsigned char *q = pcw__ctl_take(r, 4);
    return q ? (uint32_t)pcw__ctl_get_le(q, 4) : 0;
}
static inline uint64_t pcw__ctl_get_u64(pcw_ctl_reader *r)
{
    const unsigned char *q = pcw__ctl_take(r, 8);
    return q ? pcw__ctl_get_le(q, 8) : 0;
}
/* A string of at most `max` bytes: points into the buffer (not NUL-
 * terminated); *n gets its length. NULL (and bad) if it does not fit. */
static inline const char *pcw__ctl_get_str(pcw_ctl_reader *r, size_t max, uint32_t *n)
{
    uint32_t len = pcw__ctl_get_u32(r);
    *n = 0;
    if (r->bad || len > max) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *q = pcw__ctl_take(r, len);
    if (q)
        *n = len;
    return (const char *)q;
}

/* Decode a 24-byte header and check what can be checked without knowing
 * the direction: magic, version, reserved. Returns 0 if acceptable. */
static inline int pcw__ctl_get_header(const unsigned char *b, pcw_ctl_header *h)
{
    h->magic = (uint32_t)pcw__ctl_get_le(b, 4);
    h->version = (uint16_t)pcw__ctl_get_le(b + 4, 2);
    h->type = (uint16_t)pcw__ctl_get_le(b + 6, 2);
    h->length = (uint32_t)pcw__ctl_get_le(b + 8, 4);
    h->id = (uint32_t)pcw__ctl_get_le(b + 12, 4);
    h->status = (int32_t)(uint32_t)pcw__ctl_get_le(b + 16, 4);
    h->reserved = (uint32_t)pcw__ctl_get_le(b + 20, 4);
    if (h->magic != PCW_CTL_MAGIC || h->version != PCW_CTL_VERSION || h->reserved != 0)
        return -1;
    return 0;
}

/* ---- masks ------------------------------------------------------------------ */

/* Is counter `index` selected by `mask`? Bit i selects the i-th registered
 * counter; bit 63 also stands for every counter past the 64th, so ~0 is
 * "every counter" whatever the counterset's size. */
static inline int pcw__ctl_counter_selected(uint64_t mask, uint32_t index)
{
    return (mask >> (index < 63 ? index : 63)) & 1u;
}

#ifdef __cplusplus
}
#endif
#endif /* PCW_CONTROL_PROTO_H */
