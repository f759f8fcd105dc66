/* SPDX-License-Identifier: MIT */
/*
 * pcw.pml - a Promela model of pcw's slot protocol (issue 11), checked by
 * spin: provider threads creating and closing instances in a counterset,
 * the limbo and its RCU grace period, reuse of slots and name blocks, and
 * consumers reading a run of a chunk's slots with the batched validation
 * (R0..R4, live-bit words), its per-slot fallback and the name cache (R5),
 * under C11's release/acquire/relaxed memory model. docs/model/README.md
 * explains it; check.sh runs it.
 *
 * The protocol modelled is the one specified at the top of
 * lib/common/layout.h (layout version 2, with live bits), as
 * pcw_create_instance / pcw_close_instance (lib/provider/instance.c) and
 * read_run / read_slot / read_pass (lib/consumer/read.c) implement it:
 *
 *   provider (any thread; one writer per slot)
 *     take:    a free name block (p->lock), a free slot (r->lock); both
 *              reused only after an RCU grace period
 *     C0:      fence(release)
 *     fill:    name bytes, name ref, data words      (relaxed stores)
 *     publish: gen = 2k+1, release
 *     P0:      cset.generation += 1, RMW release
 *     P1:      live bit set, RMW release
 *     close:   live bit cleared, RMW relaxed; gen = 2k+2, relaxed
 *     C1:      chunk.closes += 1, RMW release
 *     C2:      fence(release); cset.generation += 1, RMW release
 *              then limbo -> grace period -> free lists
 *   consumer, for the run of slots of one chunk
 *     R0:  c1 = chunk.closes, acquire
 *     R1': w = the live-bit word, acquire; the data of the slots whose bit
 *          is set, then their name refs and names (relaxed loads)
 *     R3:  fence(acquire)
 *     R4:  c2 = chunk.closes, relaxed
 *          c1 == c2: keep every copy, under the slot's id
 *          c1 != c2: per slot (read_slot): g1 = gen, acquire; skip if even;
 *          data, name ref, name (relaxed); fence(acquire); keep iff gen,
 *          relaxed, is still g1
 *   name cache (NAME_CACHE): a read records cset.generation (acquire) at
 *     its start, and after R5 = fence(acquire) + a relaxed re-load finds it
 *     unchanged, keeps its live words and names; a later read that starts
 *     with the same generation and meets the same live bits copies only the
 *     data, and keeps the recorded names only if R4 and R5 hold again.
 *
 * ---- Weak memory: how C11 is modelled -----------------------------------
 *
 * Spin interleaves the atomic steps of a sequentially consistent program,
 * so the segment is not a set of plain variables. Each location keeps
 * every value ever written to it: a pool of MESSAGES (m_loc, m_val),
 * appended in each location's modification order, each carrying a VIEW
 * (in vw[]). A view gives, for every location, the oldest message that may
 * still be read. Every thread has a current view. This is the operational
 * ("view-based") presentation of C11's release/acquire/relaxed fragment of
 * the promising semantics (Kang et al., POPL 2017), without promises:
 *
 *   relaxed load of L: may return ANY message of L at or after the
 *       thread's view of L. That is C11's coherence, the only constraint on
 *       a relaxed load: never older than a value this thread read before,
 *       or than a store that happens-before the load. The view of L moves
 *       up to the message read. So each relaxed load is independently stale
 *       or fresh, which is how the model lets loads be reordered with each
 *       other and see other threads' stores in any order.
 *   acquire load: the same choice, then the thread's view is joined with
 *       the view the message carries (it synchronises with the release).
 *   acquire fence: joins the views carried by every message the thread
 *       read with a relaxed load (RA(r) collects them): C11 7.17.4, a
 *       relaxed load followed by an acquire fence synchronises with the
 *       release fence (or release store) behind the message it read.
 *   release store: the message carries the writer's current view.
 *   relaxed store: the message carries the writer's view as of its last
 *       release fence (PF(p)): an acquire fence after a load of it
 *       synchronises with that fence and with nothing later.
 *   release RMW (closes += 1): reads the location's latest message (an RMW
 *       always reads the last value in modification order); its message
 *       carries the writer's current view joined with the view of the
 *       message it read (a release sequence continues through RMWs).
 *   mutex: unlock stores the thread's view in the lock, lock joins it.
 *
 * The promising semantics needs promises only for load buffering (cycles
 * of program order and reads-from). There can be none here: consumers
 * never write, and a provider thread reads no segment location but the
 * words it updates with RMWs (which read the latest value, and whose old
 * value decides nothing the thread does) and its own slot's gen, whose
 * latest value happens-before that read (the free-list mutex and the limbo
 * order the previous close before it), so the read is the provider's
 * private copy s_gen. Hence the machine allows every behaviour that C11
 * (RC11) allows for this program, and no more.
 *
 * Steps. Every consumer load is a step of its own. A provider step may
 * group operations of one thread when no behaviour is lost:
 *  - consecutive stores and RMWs with no lock operation between them (C0,
 *    the fill, the publish, P0 and P1; the bit clear, the close, C1, C2
 *    and the generation): whatever a consumer can read between two of them
 *    it can read after both, since its view cannot pass an older message
 *    before it acquires a later one of the writer; other providers read
 *    nothing but the words they RMW, and another thread's RMW that falls
 *    between two of these moves before or after the whole group, keeping
 *    its place in that word's modification order (a group has at most
 *    one RMW per word) and its view;
 *  - such stores with the lock-protected step before or after them (taking
 *    the slot; putting the instance in the limbo): another thread's step in
 *    between reads nothing these stores write and takes no lock they hold,
 *    so it commutes with them;
 *  - the hash-table updates, which only the Lookup reads, with the next
 *    step.
 * Taking the name block (p->lock) and the slot (r->lock) stay separate
 * steps, as do the steps of a reclaim.
 *
 * ---- What is checked ------------------------------------------------------
 *   keep(): a consumer keeps a sample only if its name ref, name bytes and
 *       data all carry the tag of the instance it judged live - the one
 *       whose live bit it saw, or which published the generation it saw:
 *       an older tag is a half-made entry (assertion "half"), a newer one a
 *       misattribution ("misattributed").
 *   reclaim(), the failed create: a slot, name block and instance struct go
 *       back for reuse only when no lookup (RCU read-side section) holds the
 *       instance ("held != x").
 *   spin's invalid end states: no deadlock (a provider thread blocked for
 *       ever in a grace period or waiting for another thread's reclaim).
 *
 * ---- Switches (spin -DNAME) ----------------------------------------------
 *   NO_RECHECK       negative: keep the first copies: no R3/R4, no per-slot
 *                    recheck                          -> misattributed
 *   NO_GRACE         negative: recycle the limbo without a grace period
 *                                                     -> held != x
 *   NO_C0            negative: no release fence before the fill; reuse on
 *                    another thread                   -> misattributed
 *   P1_RELAXED       negative: set the live bit with a relaxed RMW -> half
 *   RELAXED_PUBLISH  negative: publish gen with a relaxed store    -> half
 *   C1_RELAXED       negative: closes += 1 relaxed    -> misattributed
 *   CLEAR_LATE       negative: clear the live bit after C1, not before
 *                                                     -> misattributed
 *   NO_R5            negative (NAME_CACHE): no generation re-check after
 *                    the copies                       -> misattributed
 *   NAME_CACHE       a second read that reuses the first one's names
 *   P0_LATE          (NAME_CACHE) P0 after P1: verifies, see the README
 *   NO_C2            C2 left out: verifies (C0 covers what it did)
 *   GEN_BATCH        the batched form without live bits (the first text of
 *                    layout v2): R1 loads each slot's gen, acquire, and
 *                    copies the slots it finds odd
 *   APP_WRITER       an application thread other than the creator updates
 *                    an instance's counters (relaxed stores; the instance
 *                    is handed to it through the application's own mutex)
 *                    -> misattributed (README: a limit of acquire/release)
 *   REACH_BATCH, REACH_FALLBACK, REACH_REUSE, REACH_NAME_REUSE
 *                    reachability probes: assert false when a sample is
 *                    kept by that path (batched, fallback, name cache), or
 *                    a name block is reused by another slot, so that the
 *                    checks above are seen not to be vacuous
 *   NO_LOOKUP        no Lookup process (configurations checking consumers)
 *   Sizes: NPROV provider threads, NS slots, NC chunks, NINST creates in
 *   all (and as many name blocks), NREADERS consumers.
 */

#ifndef NPROV
#define NPROV 2 /* provider threads creating and closing */
#endif
#ifndef NS
#define NS 2 /* slots in the counterset */
#endif
#ifndef NC
#define NC 1 /* chunks: chunk 0 holds NS-NC+1 slots, every other chunk 1 */
#endif
#ifndef NINST
#define NINST 3 /* creates in all (the instances 1..NINST) */
#endif
#ifndef NREADERS
#define NREADERS 1 /* consumers; consumer r reads chunk r % NC */
#endif
#if NINST > 7 || NS > 8 || NC > NS || NS - NC + 1 > 2
#error "instances and slots are bits of a byte, values fit in a byte: NINST <= 7, NS <= 8, NC <= NS, at most 2 slots per chunk"
#endif

/* Locations of the segment. */
#define GEN(s) (s)              /* chunk.gen[s]  */
#define REF(s) (NS + (s))       /* chunk.name[s]: name ref (offset, length) */
#define DAT(s) (2 * NS + (s))   /* row[s]: a data word */
#define NAM(b) (3 * NS + (b))   /* name block b: a word of name bytes */
#define CLO(c) (3 * NS + NB + (c)) /* chunk c's closes */
#define LIV(c) (3 * NS + NB + NC + (c)) /* chunk c's live-bit word */
#define NB NINST /* name blocks: each create may need a new one */
#ifdef NAME_CACHE
#define GENC (3 * NS + NB + 2 * NC) /* cset.generation */
#define NLOC (3 * NS + NB + 2 * NC + 1)
#define NGENW (2 * NINST) /* its RMWs: P0 and the close's */
#else
#define NLOC (3 * NS + NB + 2 * NC)
#define NGENW 0
#endif

#define CH0 (NS - NC + 1)                  /* slots in chunk 0 */
#define CHUNK(s) ((s) < CH0 -> 0 : (s) - CH0 + 1)
#define CFIRST(c) ((c) == 0 -> 0 : CH0 + (c) - 1)
#define CCOUNT(c) ((c) == 0 -> CH0 : 1)
#define CINDEX(s) ((s) < CH0 -> (s) : 0)   /* the slot's index in its chunk */

/* Values. A fill is tagged t = 1, 2, ... in fill order, so a later
 * occupant of a slot or name block always has a larger tag. The name ref
 * word holds (offset, length): the model gives every instance a name of
 * its own length, so the word is t * 8 + b. APP_WRITER's updates write
 * t + 8 into the data word. */
#define REF_TAG(v) ((v) / 8)
#define REF_BLK(v) ((v) % 8)
#define DAT_TAG(v) ((v) % 8)
#define UPD 8
/* The live-bit word of a chunk: bit k of slot k is modelled as a 3-bit
 * field holding the tag of the instance whose P1 set it (0: clear), so
 * the model knows which occupant a reader judged live. As in the code, the
 * reader's decisions depend on the bits only; the tags are for keep(). */
#define FIELD(w, k) (((w) >> (3 * (k))) & 7)

#ifdef APP_WRITER
#define NAPPW NINST
#else
#define NAPPW 0
#endif
/* Messages: one initial message per location, then per instance five
 * stores (name, ref, data, publish, close) and three RMWs (live bit set
 * and cleared, closes), two more with NAME_CACHE (the generation), one
 * more with APP_WRITER. */
#define MAXM (NLOC + 8 * NINST + NAPPW + NGENW)
#define MAXG (2 * NINST + 1) /* gen values per slot: 0 .. 2 * NINST */

/* ---- the memory: message pool and views ------------------------------ */
byte nmsg;         /* messages in the pool */
byte m_loc[MAXM];  /* location written */
byte m_val[MAXM];  /* value */

/* Every view (a message index per location) lives in vw[], at these
 * offsets: the views messages carry, then the threads' and locks'. */
#define MV(m) ((m) * NLOC)              /* the view message m carries */
#define PV(p) (MV(MAXM) + (p) * NLOC)   /* provider thread: current view */
#define PF(p) (PV(NPROV) + (p) * NLOC)  /* ... at its last release fence */
#define LS PF(NPROV)                    /* registration lock (r->lock): free slots, limbo */
#define LN (LS + NLOC)                  /* provider lock (p->lock): free name blocks */
#ifdef APP_WRITER
#define LA (LN + NLOC)                  /* the application's own mutex */
#define AV (LA + NLOC)                  /* the application thread's view */
#define AF (AV + NLOC)                  /* ... at its last release fence */
#define RV(r) (AF + NLOC + (r) * NLOC)  /* consumer: current view */
#else
#define RV(r) (LN + NLOC + (r) * NLOC)  /* consumer: current view */
#endif
#define RA(r) (RV(NREADERS) + (r) * NLOC) /* consumer: views of messages read relaxed */
#define NVW RA(NREADERS)
byte vw[NVW];
#ifdef APP_WRITER
byte handed; /* instances handed to the application thread */
#endif

/* ---- provider-private state (not in the segment) ---------------------- */
byte budget = NINST;  /* creates left */
byte fillseq;         /* last fill tag */
byte free_slots;      /* bit s: slot s is on the free list */
byte free_names;      /* bit b: name block b is on the free list */
byte fresh_names;     /* name blocks the arena has handed out */
byte limbo;           /* bit i: instance i closed, waiting for a grace period */
byte nlimbo;
byte reclaiming;      /* instances in a batch a thread is waiting a grace period for */
byte hashed;          /* bit i: instance i is in the name hash table (cds_lfht) */
byte live[NPROV];     /* bit i: instance i is open, owned by that thread */
byte i_slot[NINST + 1];
byte i_blk[NINST + 1];
#ifdef REACH_NAME_REUSE
byte b_slot[NB];      /* 1 + the slot that last used name block b */
#endif
byte s_gen[NS];       /* the provider's copy of each slot's gen */

/* ---- the provider's RCU read-side section (a lookup in the hash table) -- */
bool rcu_in;          /* inside urcu_bp_read_lock() */
byte held;            /* instance the lookup found (0: none) */
bool gp_wait[NPROV];  /* synchronize_rcu of that thread waits for the section */

/* ---- ghosts for the properties ---------------------------------------- */
byte owner[NS * MAXG]; /* fill tag of the instance that published gen g in slot s */

#define SLOT_THRESHOLD (NS / 2 > 1 -> NS / 2 : 1) /* limbo + reclaiming >= this */

/* Pick one set bit of mask (which is not 0) nondeterministically. */
inline pick(mask, out)
{
    if
    :: (mask & 1) -> out = 0
    :: (mask & 2) -> out = 1
    :: (mask & 4) -> out = 2
    :: (mask & 8) -> out = 3
    :: (mask & 16) -> out = 4
    :: (mask & 32) -> out = 5
    :: (mask & 64) -> out = 6
    :: (mask & 128) -> out = 7
    fi
}

/* The view at vw[dst..] becomes its join (per location, the later
 * message) with the view at vw[src..]. */
inline vjoin(dst, src)
{
    j = 0;
    do
    :: j < NLOC ->
        if
        :: vw[dst + j] < vw[src + j] -> vw[dst + j] = vw[src + j]
        :: else
        fi;
        j++
    :: else -> break
    od;
    j = 0
}

inline vcopy(dst, src)
{
    j = 0;
    do
    :: j < NLOC -> vw[dst + j] = vw[src + j]; j++
    :: else -> break
    od;
    j = 0
}

/* A store by a thread whose views are at vw[cur..] and vw[fence..]:
 * rel = 1: release store, the message carries the current view;
 * rel = 0: relaxed store, the message carries the view of the thread's
 * last release fence. */
inline store(cur, fence, L, v, rel)
{
    m = nmsg;
    assert(m < MAXM);
    nmsg++;
    m_loc[m] = L;
    m_val[m] = v;
    vw[cur + L] = m;
    if
    :: rel -> vcopy(MV(m), cur)
    :: else -> vcopy(MV(m), fence)
    fi;
    vw[MV(m) + L] = m;
    m = 0
}

/* An RMW on L (it reads the latest message): op RMW_ADD adds 1 (closes),
 * RMW_SET sets field k to t (fetch_or of a live bit), RMW_CLR clears field
 * k (fetch_and). rel = 1: release RMW, the message carries the current
 * view; rel = 0: relaxed RMW, the view of the last release fence; either
 * way joined with the view of the message it read (a release sequence
 * continues through RMWs). */
#define RMW_ADD 0
#define RMW_SET 1
#define RMW_CLR 2
inline rmw(cur, fence, L, rel, op, k, t)
{
    m0 = nmsg - 1;
    do
    :: m_loc[m0] != L -> m0--
    :: else -> break
    od;
    m = nmsg;
    assert(m < MAXM);
    nmsg++;
    m_loc[m] = L;
    if
    :: op == RMW_ADD -> m_val[m] = m_val[m0] + 1
    :: op == RMW_SET -> assert(FIELD(m_val[m0], k) == 0); m_val[m] = m_val[m0] | (t << (3 * (k)))
    :: op == RMW_CLR -> m_val[m] = m_val[m0] & ~(7 << (3 * (k)))
    fi;
    vw[cur + L] = m;
    if
    :: rel -> vcopy(MV(m), cur)
    :: else -> vcopy(MV(m), fence)
    fi;
    vjoin(MV(m), MV(m0));
    vw[MV(m) + L] = m;
    m = 0;
    m0 = 0
}

/* A consumer load: any message of L at or after the consumer's view of L.
 * acq = 1: acquire load (joins the message's view now); acq = 0: relaxed
 * (the message's view is only remembered for a later acquire fence). */
inline load(r, L, acq, out)
{
    atomic {
        k = vw[RV(r) + L];
        j = k + 1;
        do
        :: j < nmsg ->
            if
            :: m_loc[j] == L ->
                if
                :: k = j /* read this later message ... */
                :: skip  /* ... or not */
                fi
            :: else
            fi;
            j++
        :: else -> break
        od;
        out = m_val[k];
        vw[RV(r) + L] = k;
        if
        :: acq -> vjoin(RV(r), MV(k))
        :: else -> vjoin(RA(r), MV(k))
        fi;
        k = 0
    }
}

inline fence_acquire(r)
{
    d_step { vjoin(RV(r), RA(r)) }
}

/* pthread_mutex_lock / unlock of a lock whose view is lv. */
inline lock(lv)
{
    vjoin(PV(p), lv)
}
inline unlock(lv)
{
    vcopy(lv, PV(p))
}

/* urcu_bp_synchronize_rcu(): waits for the read-side section running when
 * it starts (if any) to end. It does not wait for consumers: they are in
 * other processes and never take part in RCU. */
inline synchronize_rcu()
{
    gp_wait[p] = rcu_in;
    (gp_wait[p] == 0)
}

/* The instances of batch leave the limbo: their name blocks go back to the
 * provider's free list (under p->lock), their slots to the registration's
 * (under r->lock), their structs are freed (pcw__reclaim). No lookup may
 * still hold one of them. */
inline reclaim(batch)
{
    atomic {
#ifdef NO_GRACE
        printf("P%d: recycles the limbo (instances mask %d) without a grace period\n", p, batch);
#else
        printf("P%d: recycles the limbo (instances mask %d) after a grace period\n", p, batch);
#endif
        lock(LN);
        x = 1;
        do
        :: x <= NINST ->
            if
            :: (batch >> x) & 1 ->
                assert(held != x); /* a lookup that could see it has ended */
                free_names = free_names | (1 << i_blk[x])
            :: else
            fi;
            x++
        :: else -> break
        od;
        x = 0;
        unlock(LN)
    }
    atomic {
        lock(LS);
        x = 1;
        do
        :: x <= NINST ->
            if
            :: (batch >> x) & 1 ->
                assert(held != x);
                free_slots = free_slots | (1 << i_slot[x]);
                i_slot[x] = 0; /* free(in) */
                i_blk[x] = 0
            :: else
            fi;
            x++
        :: else -> break
        od;
        x = 0;
        unlock(LS)
    }
}

/* ---- a provider thread ------------------------------------------------
 * Creates and closes instances (its own) until NINST creates are done.
 * Steps are grouped as the header says. */
proctype Provider(byte p)
{
    byte i, s, b, g, t, ci, batch, act, x, j, m, m0;

end_idle:
    do
    :: /* pcw_create_instance. Claim the name in the hash table
        * (cds_lfht_add_unique: lookups may find it from now on), then
        * pcw__name_alloc under p->lock: a reclaimed block if there is one,
        * else a new one from the arena. */
        atomic {
            budget > 0 ->
            budget--;
            i = NINST - budget;
            hashed = hashed | (1 << i);
            lock(LN);
            if
            :: free_names != 0 ->
                pick(free_names, b);
                free_names = free_names & ~(1 << b)
            :: else ->
                b = fresh_names;
                fresh_names++
            fi;
            unlock(LN)
        }
slot_alloc:
        /* Under r->lock: a free slot; else, if half the slots are closed
         * but not reusable yet, wait for them (reclaim the limbo after a
         * grace period, or wait for the thread reclaiming it); else grow. */
        atomic {
            lock(LS);
            if
            :: free_slots != 0 ->
                pick(free_slots, s);
                free_slots = free_slots & ~(1 << s);
                unlock(LS);
                /* C0, the fill and the publish. */
                fillseq++;
                t = fillseq;
                i_slot[i] = s;
                i_blk[i] = b;
#ifdef REACH_NAME_REUSE
                assert(b_slot[b] == 0 || b_slot[b] == s + 1); /* reused by another slot */
                b_slot[b] = s + 1;
#endif
#ifndef NO_C0
                vcopy(PF(p), PV(p)); /* C0: fence(release) [pairs with R3] */
#endif
                store(PV(p), PF(p), NAM(b), t, 0);         /* name bytes, relaxed */
                store(PV(p), PF(p), REF(s), t * 8 + b, 0); /* name ref, relaxed */
                store(PV(p), PF(p), DAT(s), t, 0);         /* data, relaxed */
                g = s_gen[s] + 1;
                s_gen[s] = g;
                owner[s * MAXG + g] = t;
#ifdef RELAXED_PUBLISH
                store(PV(p), PF(p), GEN(s), g, 0);
#else
                store(PV(p), PF(p), GEN(s), g, 1); /* publish: release [pairs with R1] */
#endif
                /* P0: cset.generation += 1, release RMW [pairs with R5]
                 * (modelled with NAME_CACHE, the only reader of it). P1:
                 * the live bit, release RMW [pairs with R1']. */
#if defined(NAME_CACHE) && !defined(P0_LATE)
                rmw(PV(p), PF(p), GENC, 1, RMW_ADD, 0, 0);
#endif
                ci = CINDEX(s);
#ifdef P1_RELAXED
                rmw(PV(p), PF(p), LIV(CHUNK(s)), 0, RMW_SET, ci, t);
#else
                rmw(PV(p), PF(p), LIV(CHUNK(s)), 1, RMW_SET, ci, t);
#endif
#if defined(NAME_CACHE) && defined(P0_LATE)
                rmw(PV(p), PF(p), GENC, 1, RMW_ADD, 0, 0);
#endif
                ci = 0;
                live[p] = live[p] | (1 << i);
                printf("P%d: instance %d (tag %d) live in slot %d gen %d, name block %d\n",
                       p, i, t, s, g, b);
                act = 1
            :: free_slots == 0 && nlimbo + reclaiming >= SLOT_THRESHOLD && reclaiming != 0 ->
                unlock(LS);
                act = 2
            :: free_slots == 0 && nlimbo + reclaiming >= SLOT_THRESHOLD && reclaiming == 0 ->
                batch = limbo;
                reclaiming = nlimbo;
                limbo = 0;
                nlimbo = 0;
                unlock(LS);
                act = 3
            :: else ->
                unlock(LS);
                act = 0 /* pcw__add_chunk: growth is not modelled, the create fails */
            fi
        }
        if
        :: act == 1
        :: act == 2 -> (reclaiming == 0); goto slot_alloc /* pthread_cond_wait */
        :: act == 3 ->
#ifndef NO_GRACE
            synchronize_rcu();
#endif
            reclaim(batch);
            atomic {
                lock(LS);
                reclaiming = 0;
                batch = 0;
                unlock(LS)
            };
            goto slot_alloc
        :: act == 0 ->
            atomic {
                lock(LN);
                free_names = free_names | (1 << b);
                unlock(LN);
                hashed = hashed & ~(1 << i)
            };
            synchronize_rcu(); /* lookups may hold the struct */
            assert(held != i);
            i = 0; b = 0; act = 0;
            goto end_idle
        fi;
#ifdef APP_WRITER
        /* Hand it to the application thread (its own mutex). */
        if
        :: atomic {
               lock(LA);
               handed = handed | (1 << i);
               unlock(LA)
           }
        :: skip
        fi;
#endif
        i = 0; s = 0; b = 0; g = 0; t = 0; act = 0
    :: /* pcw_close_instance of an instance this thread owns: leave the hash
        * table (cds_lfht_del), close, C1, C2, then into the limbo under
        * r->lock. */
        atomic {
#ifdef APP_WRITER
            (live[p] & ~handed) != 0 -> /* the application thread gave it back */
            pick(live[p] & ~handed, i);
            lock(LA);
#else
            live[p] != 0 ->
            pick(live[p], i);
#endif
            live[p] = live[p] & ~(1 << i);
            hashed = hashed & ~(1 << i);
            s = i_slot[i];
            g = s_gen[s] + 1;
            s_gen[s] = g;
            ci = CINDEX(s); /* (spin 6.5 crashes on this expression as an inline argument) */
#ifndef CLEAR_LATE
            rmw(PV(p), PF(p), LIV(CHUNK(s)), 0, RMW_CLR, ci, 0); /* live bit cleared, relaxed */
#endif
            store(PV(p), PF(p), GEN(s), g, 0); /* close: gen = 2k+2, relaxed */
#ifdef C1_RELAXED
            rmw(PV(p), PF(p), CLO(CHUNK(s)), 0, RMW_ADD, 0, 0);
#else
            rmw(PV(p), PF(p), CLO(CHUNK(s)), 1, RMW_ADD, 0, 0); /* C1: release RMW [pairs with R0] */
#endif
#ifdef CLEAR_LATE
            rmw(PV(p), PF(p), LIV(CHUNK(s)), 0, RMW_CLR, ci, 0);
#endif
            ci = 0;
#ifndef NO_C2
            vcopy(PF(p), PV(p)); /* C2: fence(release) [pairs with R3] */
#endif
#ifdef NAME_CACHE
            rmw(PV(p), PF(p), GENC, 1, RMW_ADD, 0, 0); /* cset.generation += 1, release */
#endif
            printf("P%d: instance %d closed, slot %d gen %d\n", p, i, s, g);
            lock(LS);
            limbo = limbo | (1 << i);
            nlimbo++;
            unlock(LS);
            i = 0; s = 0; g = 0
        }
    od
}

/* ---- the provider's RCU reader: a lookup in the name hash table ------- */
proctype Lookup()
{
    byte x;
end_out:
    do
    :: atomic { /* urcu_bp_read_lock() */
           rcu_in = 1;
           printf("L: read-side section begins\n")
       }
        if
        :: atomic { /* finds an instance */
               hashed != 0 ->
               pick(hashed, held);
               printf("L: a lookup finds instance %d\n", held)
           }
        :: skip
        fi;
        d_step { /* urcu_bp_read_unlock() */
            printf("L: read-side section ends\n");
            rcu_in = 0;
            held = 0;
            x = 0;
            do
            :: x < NPROV -> gp_wait[x] = 0; x++
            :: else -> break
            od;
            x = 0
        }
    od
}

#ifdef APP_WRITER
/* ---- an application thread updating counters of instances handed to it */
proctype App()
{
    byte i, s, x, j, m;
end_idle:
    do
    :: atomic {
           handed != 0 ->
           vjoin(AV, LA); /* lock */
           pick(handed, i);
           s = i_slot[i];
           x = s_gen[s];
           store(AV, AF, DAT(s), owner[s * MAXG + x] + UPD, 0);
           printf("A: the application thread updates instance %d: data = %d\n", i,
                  owner[s * MAXG + x] + UPD);
           handed = handed & ~(1 << i); /* give it back ... */
           vcopy(LA, AV); /* ... unlock */
           i = 0; s = 0; x = 0
       }
    od
}
#endif

/* ---- a consumer (lib/consumer/read.c) ---------------------------------
 * One read of the run of all slots of chunk r % NC (read_run):
 *   R0   c1 = closes, acquire
 *   R1'  w = the live-bit word, acquire (run_rows); the data of every slot
 *        whose bit is set, then each one's name ref and name (put_rows),
 *        relaxed
 *   R3   fence(acquire);  R4  c2 = closes, relaxed
 *        c1 == c2: keep every copy, under the slot's id
 *        else: read_slots: per slot, g1 = gen, acquire; skip if even; data,
 *        name ref, name (relaxed); fence(acquire); keep iff gen (relaxed)
 *        is still g1 (read_slot)
 * GEN_BATCH models the batched form without live bits (the first version
 * of layout v2): R1 loads each slot's gen (acquire) and copies the slots
 * it finds odd. */

/* A copy of slot s is kept as belonging to the instance with tag o (the
 * one whose live bit the reader saw, or which published the generation it
 * saw). Every value in it must carry that tag: an older tag is a half-made
 * entry (the fill was not seen), a newer one belongs to a later occupant
 * of the slot or of the name block (misattribution). */
inline keep(s, o, rf, nm, dt)
{
    d_step {
        printf("C%d: keeps slot %d as instance tag %d: name ref tag %d, name %d, data %d\n",
               r, s, o, REF_TAG(rf), nm, dt);
        assert(o != 0);
        half = (REF_TAG(rf) < o || nm < o || DAT_TAG(dt) < o);
        misattributed = (REF_TAG(rf) > o || nm > o || DAT_TAG(dt) > o);
        assert(!half);
        assert(!misattributed)
    }
}

inline copy_data(s, dt)
{
    atomic {
        load(r, DAT(s), 0, dt);
        printf("C%d:   slot %d data -> %d\n", r, s, dt)
    }
}

/* The name ref, then the name bytes it points to (check_name, put_name). */
inline copy_name(s, rf, nm)
{
    atomic {
        load(r, REF(s), 0, rf);
        printf("C%d:   slot %d name ref -> tag %d, block %d\n", r, s, REF_TAG(rf), REF_BLK(rf))
    }
    if
    :: REF_TAG(rf) != 0 ->
        atomic {
            load(r, NAM(REF_BLK(rf)), 0, nm);
            printf("C%d:   name block %d -> tag %d\n", r, REF_BLK(rf), nm)
        }
    :: else -> nm = 0
    fi
}

#ifdef NAME_CACHE
/* The name cache (read.c: read_pass, do_read). The read above recorded
 * the generation cg it began with, its live words (own[]) and names; R5
 * keeps that record only if, after a fence(acquire), the generation is
 * still cg. The next read of the counterset, if it begins with the same
 * generation and meets the same live bits, copies only the data and keeps
 * the recorded names, again only if R4 and R5 hold. */
inline name_cache_reuse()
{
    fence_acquire(r); /* R5 of the recording read */
    atomic {
        load(r, GENC, 0, g2);
        printf("C%d: R5 generation = %d\n", r, g2)
    }
#ifndef NO_R5
    if
    :: g2 != cg -> goto done /* not cached */
    :: else
    fi;
#endif
    atomic {
        load(r, GENC, 1, g1); /* the reusing read's start, acquire */
        printf("C%d: reusing read: generation = %d\n", r, g1)
    }
    if
    :: g1 != cg -> goto done /* a fresh read: the one above again */
    :: else
    fi;
    atomic {
        load(r, CLO(c), 1, c1); /* R0 */
        printf("C%d: R0 chunk %d closes = %d\n", r, c, c1)
    }
    atomic {
        load(r, LIV(c), 1, w); /* R1' */
        printf("C%d: R1' chunk %d live word: slot %d bit %d, slot %d bit %d\n", r, c,
               f, FIELD(w, 0) != 0, f + 1, FIELD(w, 1) != 0);
        x = 0;
        do
        :: x < n ->
            if
            :: (FIELD(w, x) != 0) != (own[x] != 0) -> k = 1 /* other words: a miss */
            :: else
            fi;
            x++
        :: else -> break
        od;
        x = 0;
        w = 0
    }
    if
    :: k -> goto done
    :: else
    fi;
    x = 0;
    do /* the data only */
    :: x < n ->
        if
        :: own[x] != 0 -> copy_data(f + x, dt[x])
        :: else
        fi;
        x++
    :: else -> break
    od;
    fence_acquire(r); /* R3 */
    atomic {
        load(r, CLO(c), 0, c2); /* R4 */
        printf("C%d: R4 chunk %d closes = %d\n", r, c, c2)
    }
    if
    :: c1 != c2 -> goto done
    :: else
    fi;
    fence_acquire(r); /* R5 */
    atomic {
        load(r, GENC, 0, g2);
        printf("C%d: R5 generation = %d\n", r, g2)
    }
#ifndef NO_R5
    if
    :: g2 != g1 -> goto done
    :: else
    fi;
#endif
    x = 0;
    do
    :: x < n ->
        if
        :: own[x] != 0 ->
#ifdef REACH_REUSE
            assert(false);
#endif
            keep(f + x, own[x], rf[x], nm[x], dt[x])
        :: else
        fi;
        x++
    :: else -> break
    od;
done:
    skip
}
#endif

proctype Consumer(byte r)
{
    byte c, n, f, x, k, j, c1, c2, w, g1, g2, rf1, nm1, dt1, cg;
    bool half, misattributed;
    byte own[NS], rf[NS], nm[NS], dt[NS];

    c = r % NC;
    f = CFIRST(c);
    n = CCOUNT(c);
#ifdef NAME_CACHE
    atomic {
        load(r, GENC, 1, cg); /* the generation at the start: acquire [pairs with P0] */
        printf("C%d: recording read: generation = %d\n", r, cg)
    }
#endif
    atomic {
        load(r, CLO(c), 1, c1); /* R0: acquire [pairs with C1] */
        printf("C%d: R0 chunk %d closes = %d\n", r, c, c1)
    }
#ifdef GEN_BATCH
    x = 0;
    do /* R1 */
    :: x < n ->
        atomic {
            load(r, GEN(f + x), 1, g1); /* acquire [pairs with the publish] */
            printf("C%d: R1 slot %d gen = %d\n", r, f + x, g1);
            own[x] = (g1 & 1 -> owner[(f + x) * MAXG + g1] : 0);
            g1 = 0
        }
        if
        :: own[x] != 0 ->
            copy_data(f + x, dt[x]);
            copy_name(f + x, rf[x], nm[x])
        :: else
        fi;
        x++
    :: else -> break
    od;
#else
    atomic {
        load(r, LIV(c), 1, w); /* R1': acquire [pairs with P1] */
        printf("C%d: R1' chunk %d live word: slot %d bit %d, slot %d bit %d\n", r, c,
               f, FIELD(w, 0) != 0, f + 1, FIELD(w, 1) != 0);
        x = 0;
        do
        :: x < n -> own[x] = FIELD(w, x); x++
        :: else -> break
        od;
        x = 0;
        w = 0
    }
    x = 0;
    do /* the data of the live slots ... */
    :: x < n ->
        if
        :: own[x] != 0 -> copy_data(f + x, dt[x])
        :: else
        fi;
        x++
    :: else -> break
    od;
    x = 0;
    do /* ... then their names */
    :: x < n ->
        if
        :: own[x] != 0 -> copy_name(f + x, rf[x], nm[x])
        :: else
        fi;
        x++
    :: else -> break
    od;
#endif
#ifndef NO_RECHECK
    fence_acquire(r); /* R3 [pairs with C0, C2] */
    atomic {
        load(r, CLO(c), 0, c2); /* R4: relaxed */
        printf("C%d: R4 chunk %d closes = %d\n", r, c, c2)
    }
    if
    :: c1 == c2 ->
#endif
        x = 0;
        do
        :: x < n ->
            if
            :: own[x] != 0 ->
#ifdef REACH_BATCH
                assert(false);
#endif
                keep(f + x, own[x], rf[x], nm[x], dt[x])
            :: else
            fi;
            x++
        :: else -> break
        od;
#ifdef NAME_CACHE
        name_cache_reuse()
#else
        skip
#endif
#ifndef NO_RECHECK
    :: else -> /* a slot of the run closed meanwhile: slot by slot */
        x = 0;
        do
        :: x < n ->
            atomic {
                load(r, GEN(f + x), 1, g1); /* acquire */
                printf("C%d: fallback slot %d gen = %d\n", r, f + x, g1)
            }
            if
            :: g1 & 1 ->
                copy_data(f + x, dt1);
                copy_name(f + x, rf1, nm1);
                fence_acquire(r);
                atomic {
                    load(r, GEN(f + x), 0, g2); /* relaxed */
                    printf("C%d: fallback slot %d gen again = %d\n", r, f + x, g2)
                }
                if
                :: g1 == g2 ->
#ifdef REACH_FALLBACK
                    assert(false);
#endif
                    keep(f + x, owner[(f + x) * MAXG + g1], rf1, nm1, dt1)
                :: else
                fi
            :: else
            fi;
            x++
        :: else -> break
        od
    fi
#endif
}

init
{
    short x; /* vw[] may have more than 255 entries */
    byte j;
    d_step {
        /* Every location starts with one message, value 0; every view
         * starts at those. Every slot and name block is free. */
        x = 0;
        do
        :: x < NLOC ->
            m_loc[x] = x;
            j = 0;
            do
            :: j < NLOC -> vw[MV(x) + j] = j; j++
            :: else -> break
            od;
            x++
        :: else -> break
        od;
        nmsg = NLOC;
        /* Every thread's and lock's view: the initial messages. */
        x = MV(MAXM);
        do
        :: x < NVW -> vw[x] = (x - MV(MAXM)) % NLOC; x++
        :: else -> break
        od;
        free_slots = (1 << NS) - 1;
        x = 0;
        j = 0
    }
    atomic {
        x = 0;
        do
        :: x < NPROV -> run Provider(x); x++
        :: else -> break
        od;
        x = 0;
        do
        :: x < NREADERS -> run Consumer(x); x++
        :: else -> break
        od;
#ifndef NO_LOOKUP
        run Lookup();
#endif
#ifdef APP_WRITER
        run App();
#endif
        x = 0
    }
}
