/* SPDX-License-Identifier: MIT */
/*
 * docs/model/area.pml - the control channel's reply area (docs/design.md,
 * "The reply area"): who may write the area when.
 *
 * One connection: a consumer that sends NREQ ENUMERATE/COLLECT requests,
 * pipelined as it likes (a request whose consumer gave up waiting is the
 * same to the protocol: its reply is still read off the stream, and its
 * completion still copied), and the provider's connection thread, which
 * serves them in order. The socket is two FIFO channels. A reply in the
 * area is two stores (area_lo, area_hi: any reply is more than one
 * store), tagged with its request's id; the consumer's copy is two loads.
 * Every step of either side may interleave with every step of the other.
 *
 * Memory order: every area store of a reply is sequenced before the
 * provider's sendmsg of its completion, and every load of the copy after
 * the consumer's recvmsg that returned it; the kernel's socket queue (a
 * lock) orders the two. So the model's sequentially consistent accesses
 * are exact for an honest provider (a hostile one is the consumer's
 * validation's business, not this model's).
 *
 * Checked: a copy taken on a completion is exactly its own request's
 * reply, whole - the provider never writes the area while the consumer
 * copies it.
 *
 * Variants (each must fail, check.sh):
 *   ALWAYS_FLAG   the consumer lets every request use the area (no area_id)
 *   CLEAR_ANY     the consumer frees the area on any reply, not the one
 *                 that was allowed it
 *   WRITE_ANY     the provider writes the area for requests not allowed it
 *                 (and replies on the socket)
 */
#ifndef NREQ
#define NREQ 4
#endif

#define SOCK 0
#define AREA 1

chan req = [NREQ] of { byte, bool };  /* id, PCW_CTL_IN_AREA */
chan rep = [NREQ] of { byte, bool };  /* id, a completion (AREA) or a socket reply */

byte area_lo, area_hi; /* the area: which request's reply its two halves hold */

active proctype Provider()
{
    byte id;
    bool flag;
end:
    do
    :: req ? id, flag ->
        if
        :: flag ->
            area_lo = id;
            area_hi = id;
            printf("P: reply %d written to the area\n", id);
            rep ! id, AREA
        :: else ->
#ifdef WRITE_ANY
            area_lo = id;
            area_hi = id;
#endif
            rep ! id, SOCK
        fi
    od
}

active proctype Consumer()
{
    byte sent = 0, got = 0, id, c_lo, c_hi;
    byte area_id = 0; /* the request allowed the area, its reply not read yet */
    bool how, flag;
    do
    :: sent < NREQ ->
        sent++;
#ifdef ALWAYS_FLAG
        flag = true;
#else
        flag = area_id == 0;
#endif
        if
        :: flag -> area_id = sent
        :: else -> skip
        fi;
        printf("C: request %d, in area %d\n", sent, flag);
        req ! sent, flag
    :: got < sent ->
        rep ? id, how;
        got++;
        if
        :: how == AREA ->
            c_lo = area_lo;
            c_hi = area_hi;
            printf("C: completion %d, copied %d/%d\n", id, c_lo, c_hi);
            assert(c_lo == id && c_hi == id) /* whole and its own */
        :: else -> skip
        fi;
#ifdef CLEAR_ANY
        area_id = 0;
#else
        if
        :: id == area_id -> area_id = 0
        :: else -> skip
        fi
#endif
    :: got == NREQ -> break
    od
}
