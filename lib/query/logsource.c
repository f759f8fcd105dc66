/* SPDX-License-Identifier: MIT */
/*
 * lib/query/logsource.c - a query whose data source is pcw logs
 * (pcw_pdh_open_log; PDH's PdhBindInputDataSource; docs/history.md, "The
 * query layer on a log").
 *
 * Opening reads every file once through lib/history's reader: the block
 * index (each block's file, offset, sequence number, first sample's index
 * and times), the series (a path logged in several files is one series)
 * and, per file series, the identity changes seen at each block's start,
 * so that a seek can put back the identities in force there. Then each
 * collect decodes one sample into the series' current values, the old
 * current value becoming the previous one; a value is cooked when it is
 * read (pcw__hist_cook: what the live query computed), with the previous
 * sample only when the series' identity is the same (same file, same
 * identity record): a new identity, a seek or a file boundary has none.
 *
 * Handles select series by their parsed paths: a handle's values are
 * groups (one per counterset name), each a grid of rows (instances:
 * logged totals and aggregates first, then instances in log order) by
 * columns (counter names in log order). A row of a wildcard instance
 * pattern is shown in a sample when one of its series has a value there
 * (a status other than NO_INSTANCE or PROVIDER_GONE), as a live wildcard
 * shows the instances that exist; an instance named without wildcards is
 * always one row.
 *
 * Everything belongs to the query's thread, as the live query.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../history/history.h"
#include "logsource.h"
#include "pcw/histogram.h"
#include "common/name.h"

#define NONE        UINT32_MAX
#define FAST_SCALED 0x80u /* pcwl_log.fast: the identity's scale is not 0 */

/* The identity of a series no sample has given one yet. */
static const pcw__hist_series no_ident;

/* An identity in force from a block on (a file series'). */
typedef struct ident_change {
    uint64_t block;      /* the global block index it was seen at */
    pcw__hist_series id; /* path unused */
} ident_change;

/* A file series: where its values go and its identities' history. */
typedef struct fseries {
    uint32_t gid;
    ident_change *ch;
    size_t nch, cap;
    uint64_t seen_epoch;
    int pending; /* in lfile.pend */
} fseries;

typedef struct lfile {
    char *name;
    int direct; /* its series are the log's first ones, in order */
    pcw__hist_reader *r;
    fseries *fs;
    size_t nfs;
    uint64_t first_block, nblocks; /* in the global index */
    uint64_t first_sample, nsamples;
    char *damage; /* a sentence, or NULL */
    /* While indexing: the series whose identity record came since the last
     * block's start (work per identity record, not per series and block). */
    uint32_t *pend;
    size_t npend, pend_cap;
    uint64_t nchanges; /* identity changes indexed and pending (pcwl_max_ident_changes) */
} lfile;

typedef struct lblock {
    uint32_t file;
    uint64_t off, seq;
    uint64_t first_sample, nsamples;
    uint64_t first_real;
} lblock;

/* A series of the whole log. */
typedef struct gseries {
    char *path; /* as logged; the parts below point into `parts` */
    char *parts;
    const char *host, *set, *inst, *iname, *ctr;
    uint32_t dup, kind, counter_index;
    uint32_t list_type;
    int32_t list_scale;
    int parsed, has_inst;
} gseries;

typedef struct pcwl_log {
    lfile *files;
    size_t nfiles;
    lblock *blocks;
    size_t nblocks, blocks_cap;
    gseries *gs;
    size_t ngs, gs_cap;
    uint64_t samples;
    uint64_t first_ns, last_ns, first_real, last_real;
    /* Playback. */
    size_t file;     /* the file being read */
    uint64_t next;   /* the next sample's index */
    int fresh;       /* the next collect has no previous sample */
    int reported;    /* the damage of `file` was returned by a collect */
    uint64_t epochs; /* handles' instance epochs: never repeat */
    uint64_t gen;    /* +1 at every collect and seek: the handles' rows */
    /* Per series: the current and the previous value (two arrays swapped
     * at each collect: the reader decodes into the current one), the
     * index of the sample from which its identity is the current one
     * (the previous value counts only when it came after), and that
     * identity (the file reader's series). */
    pcw__hist_value *val[2];
    size_t tail[2]; /* val[k]'s series from tail[k] on (in the file's order)
                       have no instance: what a sample must clear */
    uint64_t *since;
    const pcw__hist_series **ident;
    /* Per series, from its identity (set_ident): how the walk cooks it
     * without the generic calls (PCWL_FAST_*, logcook.c; | FAST_SCALED
     * when its scale is not 0) and 10^scale. */
    uint8_t *fast;
    double *fscale;
    uint64_t cur;  /* the current sample's index */
    uint64_t base; /* the first sample read since the last forget */
    char err[512];
} pcwl_log;

/* A handle's group: one counterset's rows by columns. */
typedef struct lgroup {
    uint32_t nrows, ncols;
    uint32_t *cell;   /* [nrows * ncols]: series or NONE */
    uint32_t *rowrep; /* [nrows]: a series of the row (its names) */
    uint32_t *colrep; /* [ncols]: a series of the column */
    int wild, placeholder;
    uint32_t *vis; /* the rows shown in this sample */
    uint32_t nvis;
} lgroup;

struct pcwl_sel {
    lgroup *g;
    size_t ng;
    uint64_t *hbuf; /* pcw_pdh_get_histogram's buckets (PCW_HIST_MAX_BUCKETS) */
    uint64_t at;    /* the collection vis was computed for */
};

/* ---- small helpers ------------------------------------------------------ */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q, *cap = n;
    return 0;
}

/* A string -> index table (open addressing), for the series' paths and
 * the rows and columns of a handle: linear set-up work. */
typedef struct strtab {
    uint32_t *slot; /* index + 1; 0 empty */
    size_t cap, n;
} strtab;

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The index of s (names[] gives each index's string), or NONE after adding
 * it as `idx` (NONE and no change when idx is NONE). -2 (as uint32): out
 * of memory. */
static uint32_t strtab_get(strtab *t, const char *s, const char *(*name)(void *, uint32_t),
                           void *arg, uint32_t idx)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        uint32_t *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return NONE - 1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i]) {
                size_t j = str_hash(name(arg, t->slot[i] - 1)) & (cap - 1);
                while (slot[j])
                    j = (j + 1) & (cap - 1);
                slot[j] = t->slot[i];
            }
        free(t->slot);
        t->slot = slot, t->cap = cap;
    }
    size_t j = str_hash(s) & (t->cap - 1);
    for (; t->slot[j]; j = (j + 1) & (t->cap - 1))
        if (strcmp(name(arg, t->slot[j] - 1), s) == 0)
            return t->slot[j] - 1;
    if (idx != NONE) {
        t->slot[j] = idx + 1;
        t->n++;
    }
    return NONE;
}

/* A set of strings numbered in the order they were first added: a
 * strtab over an array of the strings themselves (not copies). */
typedef struct keyset {
    strtab t;
    const char **key;
    size_t n, cap;
} keyset;

static const char *keyset_at(void *arg, uint32_t i)
{
    return ((keyset *)arg)->key[i];
}

/* The index of s, added (the pointer, not a copy) if it is new; *added says
 * which. NONE - 1: out of memory, nothing added. */
static uint32_t keyset_intern(keyset *ks, const char *s, int *added)
{
    *added = 0;
    uint32_t i = strtab_get(&ks->t, s, keyset_at, ks, NONE);
    if (i != NONE)
        return i;
    if (grow((void **)&ks->key, &ks->cap, ks->n + 1, sizeof *ks->key))
        return NONE - 1;
    ks->key[ks->n] = s;
    if (strtab_get(&ks->t, s, keyset_at, ks, (uint32_t)ks->n) == NONE - 1)
        return NONE - 1;
    *added = 1;
    return (uint32_t)ks->n++;
}

static void keyset_free(keyset *ks)
{
    free(ks->key);
    free(ks->t.slot);
}

static const char *gs_path(void *arg, uint32_t i)
{
    return ((pcwl_log *)arg)->gs[i].path;
}

/* ---- opening: the index ----------------------------------------------------- */

/* Parse a path whose host part may name any machine (a log's paths carry
 * the recording machine's, and a path may name it): the host is split off
 * into *host (n bytes; "" when none) before pcw_path_parse sees the rest. */
static int parse_any_host(const char *text, pcw_path *p, const char **host, size_t *n,
                          pcw_path_error *err)
{
    *host = "", *n = 0;
    if (strncmp(text, "\\\\", 2) == 0) {
        const char *e = strchr(text + 2, '\\');
        if (!e)
            return pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_HOST, 0,
                               "a host part without a counterset after it");
        *host = text + 2, *n = (size_t)(e - *host), text = e;
    }
    int rc = pcw_path_parse(text, p, err);
    if (rc != PCW_OK && err)
        err->offset += *n ? *n + 2 : 0;
    return rc;
}

/* Split a logged path into its parts (hostile: a path that does not parse
 * is listed but matches nothing). */
static int gs_parse(gseries *g)
{
    pcw_path p;
    g->host = g->set = g->inst = g->iname = g->ctr = "";
    const char *host;
    size_t hl;
    if (parse_any_host(g->path, &p, &host, &hl, NULL) != PCW_OK)
        return 0;
    size_t sl = strlen(p.counterset);
    size_t il = p.instance ? strlen(p.instance) : 0, cl = strlen(p.counter);
    /* host, set, iname, "iname#n", counter */
    char *b = malloc(hl + sl + 2 * il + cl + 20 + 5);
    if (!b) {
        pcw_path_free(&p);
        return -1;
    }
    char *w = b;
    g->parts = b;
#define PUT(dst, src, n)                                                                           \
    do {                                                                                           \
        memcpy(w, (src), (n));                                                                     \
        w[n] = 0;                                                                                  \
        (dst) = w;                                                                                 \
        w += (n) + 1;                                                                              \
    } while (0)
    PUT(g->host, host, hl);
    PUT(g->set, p.counterset, sl);
    PUT(g->iname, p.instance ? p.instance : "", il);
    PUT(g->ctr, p.counter, cl);
#undef PUT
    g->dup = p.index;
    g->has_inst = p.instance != NULL;
    char idx[16] = "";
    if (p.index)
        snprintf(idx, sizeof idx, "#%u", p.index);
    memcpy(w, g->iname, il);
    memcpy(w + il, idx, strlen(idx) + 1);
    g->inst = w;
    g->parsed = 1;
    pcw_path_free(&p);
    return 0;
}

/* The global series of file series `path` (kind), made if new. */
static int gs_find(pcwl_log *L, strtab *t, const char *path, uint32_t kind, uint32_t *gid)
{
    uint32_t i = strtab_get(t, path, gs_path, L, NONE);
    if (i != NONE && i != NONE - 1) {
        *gid = i;
        return 0;
    }
    if (grow((void **)&L->gs, &L->gs_cap, L->ngs + 1, sizeof *L->gs))
        return -1;
    gseries *g = &L->gs[L->ngs];
    memset(g, 0, sizeof *g);
    if (!(g->path = strdup(path)))
        return -1;
    L->ngs++;
    if (gs_parse(g))
        return -1;
    if (kind == PCW__HIST_KIND_COMPUTED)
        g->kind = strcmp(g->iname, "_Total") == 0 ? PCW_PDH_TOTAL : PCW_PDH_AGGREGATE;
    else
        g->kind = PCW_PDH_INSTANCE;
    if (strtab_get(t, path, gs_path, L, (uint32_t)(L->ngs - 1)) == NONE - 1)
        return -1;
    *gid = (uint32_t)(L->ngs - 1);
    return 0;
}

/* New file series (defined by the samples read so far) into the table. */
static int map_series(pcwl_log *L, lfile *f, strtab *t)
{
    size_t n = pcw__hist_reader_series_count(f->r);
    if (n <= f->nfs)
        return 0;
    fseries *fs = realloc(f->fs, n * sizeof *fs);
    if (!fs)
        return -1;
    f->fs = fs;
    for (size_t i = f->nfs; i < n; i++) {
        const pcw__hist_series *s = pcw__hist_reader_series(f->r, i);
        memset(&fs[i], 0, sizeof fs[i]);
        if (gs_find(L, t, s->path, s->kind, &fs[i].gid))
            return -1;
        f->nfs = i + 1;
    }
    return 0;
}

uint64_t pcwl_max_ident_changes = PCWL_MAX_IDENT_CHANGES;

/* The series whose identity record the last sample brought: pending
 * until the next block's start. 0, -1 out of memory, 1 beyond
 * pcwl_max_ident_changes (each pending series becomes one change). */
static int note_changed(lfile *f)
{
    size_t n;
    const uint32_t *ch = pcw__hist_reader_changed(f->r, &n);
    for (size_t i = 0; i < n; i++) {
        if (ch[i] >= f->nfs || f->fs[ch[i]].pending)
            continue;
        if (f->nchanges >= pcwl_max_ident_changes)
            return 1;
        if (grow((void **)&f->pend, &f->pend_cap, f->npend + 1, sizeof *f->pend))
            return -1;
        f->nchanges++;
        f->pend[f->npend++] = ch[i];
        f->fs[ch[i]].pending = 1;
    }
    return 0;
}

/* At a block's first sample (and at the file's end): the identities that
 * changed since the last block's start, into their series' histories. */
static int note_idents(pcwl_log *L, lfile *f, uint64_t block)
{
    for (size_t k = 0; k < f->npend; k++) {
        fseries *x = &f->fs[f->pend[k]];
        const pcw__hist_series *s = pcw__hist_reader_series(f->r, f->pend[k]);
        x->pending = 0;
        if (s->epoch == x->seen_epoch)
            continue;
        if (grow((void **)&x->ch, &x->cap, x->nch + 1, sizeof *x->ch))
            return -1;
        x->ch[x->nch].block = block;
        x->ch[x->nch].id = *s;
        x->ch[x->nch].id.path = NULL;
        x->nch++;
        x->seen_epoch = s->epoch;
        gseries *g = &L->gs[x->gid];
        g->list_type = s->type, g->list_scale = s->scale;
    }
    f->npend = 0;
    return 0;
}

/* f's damage: "FILE: what". 0, or -1 out of memory. */
static int set_damage(lfile *f, const char *what)
{
    size_t len = strlen(f->name) + strlen(what) + 3;
    if (!(f->damage = malloc(len)))
        return -1;
    snprintf(f->damage, len, "%s: %s", f->name, what);
    return 0;
}

/* Read file f whole into the index. 0, or -1 out of memory. A damaged
 * block ends the file's readable part (f->damage), as does the sample
 * whose identity changes pass pcwl_max_ident_changes. */
static int index_file(pcwl_log *L, size_t fi, strtab *t)
{
    lfile *f = &L->files[fi];
    f->first_block = L->nblocks;
    f->first_sample = L->samples;
    uint64_t blocks = 0;
    char why[400];
    for (;;) {
        uint64_t mono, real;
        const pcw__hist_value *v;
        size_t n;
        int rc = pcw__hist_reader_next(f->r, &mono, &real, &v, &n, why, sizeof why);
        if (rc < 0) {
            if (set_damage(f, why))
                return -1;
            break;
        }
        if (rc == 0)
            break;
        if (map_series(L, f, t) || (rc = note_changed(f)) < 0)
            return -1;
        if (rc > 0) { /* the index ends before this sample */
            snprintf(why, sizeof why,
                     "block at offset %llu: more than %llu identity changes (the limit of one "
                     "log; a damaged or hostile log)",
                     (unsigned long long)pcw__hist_reader_block_offset(f->r),
                     (unsigned long long)pcwl_max_ident_changes);
            if (set_damage(f, why))
                return -1;
            break;
        }
        if (pcw__hist_reader_blocks(f->r) != blocks) {
            blocks = pcw__hist_reader_blocks(f->r);
            if (grow((void **)&L->blocks, &L->blocks_cap, L->nblocks + 1, sizeof *L->blocks))
                return -1;
            lblock *b = &L->blocks[L->nblocks++];
            b->file = (uint32_t)fi;
            b->off = pcw__hist_reader_block_offset(f->r);
            b->seq = blocks - 1;
            b->first_sample = L->samples;
            b->nsamples = 0;
            b->first_real = real;
            if (note_idents(L, f, L->nblocks - 1))
                return -1;
        }
        L->blocks[L->nblocks - 1].nsamples++;
        if (!L->samples)
            L->first_ns = mono, L->first_real = real;
        L->last_ns = mono, L->last_real = real;
        L->samples++;
    }
    f->nblocks = L->nblocks - f->first_block;
    f->nsamples = L->samples - f->first_sample;
    /* Every series the file defined (after its last sample too) is mapped,
     * and the reader defines no more: the query's arrays are sized to them
     * and point into the reader's table (a file rewritten since is damage
     * when read again). */
    if (map_series(L, f, t))
        return -1;
    pcw__hist_reader_freeze(f->r);
    /* (Changes after the last block's start: the listing's identities.) */
    return note_idents(L, f, L->nblocks);
}

static void log_free(pcwl_log *L)
{
    if (!L)
        return;
    for (size_t i = 0; i < L->nfiles; i++) {
        lfile *f = &L->files[i];
        pcw__hist_reader_close(f->r);
        for (size_t j = 0; j < f->nfs; j++)
            free(f->fs[j].ch);
        free(f->fs);
        free(f->pend);
        free(f->name);
        free(f->damage);
    }
    free(L->files);
    free(L->blocks);
    for (size_t i = 0; i < L->ngs; i++) {
        free(L->gs[i].path);
        free(L->gs[i].parts);
    }
    free(L->gs);
    for (int k = 0; k < 2; k++)
        free(L->val[k]);
    free(L->since);
    free(L->ident);
    free(L->fast);
    free(L->fscale);
    free(L);
}

/* The pcw status of a file the reader could not open. */
static int open_status(int e, const char *why)
{
    if (e == ENOENT || e == ENOTDIR)
        return PCW_E_NOT_FOUND;
    if (e == EACCES || e == EPERM)
        return PCW_E_PERMISSION;
    if (strstr(why, "this reader knows version"))
        return PCW_E_VERSION;
    if (strstr(why, "not a pcw log"))
        return PCW_E_CORRUPT;
    if (strstr(why, "not a regular file"))
        return PCW_E_INVALID_PARAMETER;
    return PCW_E_IO;
}

static int position(pcwl_log *L, uint64_t index);
static int counter_indexes(pcwl_log *L);
static void set_ident(pcwl_log *L, size_t g, const pcw__hist_series *id);

int pcw_pdh_open_log(pcw_pdh **out, const char *const *files, size_t nfiles, char *why,
                     size_t why_len)
{
    if (why && why_len)
        why[0] = 0;
    if (!out)
        return PCW_E_INVALID_PARAMETER;
    *out = NULL;
    if (!files || !nfiles) {
        if (why && why_len)
            snprintf(why, why_len, "no log to open");
        return PCW_E_INVALID_PARAMETER;
    }
    for (size_t i = 0; i < nfiles; i++)
        if (!files[i])
            return PCW_E_INVALID_PARAMETER;
    pcw_pdh *q = calloc(1, sizeof *q);
    pcwl_log *L = calloc(1, sizeof *L);
    strtab t = {0};
    int rc = PCW_E_NO_MEMORY;
    if (!q || !L || !(L->files = calloc(nfiles, sizeof *L->files)))
        goto fail;
    q->log = L;
    q->timeout_ms = 1000;
    q->detail = PCW_DETAIL_STANDARD;
    L->nfiles = nfiles;
    for (size_t i = 0; i < nfiles; i++) {
        lfile *f = &L->files[i];
        if (!(f->name = strdup(files[i])))
            goto fail;
        char msg[400] = "";
        errno = 0;
        if (pcw__hist_reader_open(&f->r, files[i], msg, sizeof msg)) {
            rc = open_status(errno, msg);
            if (why && why_len) {
                /* The reader names the file when open() failed. */
                if (strncmp(msg, files[i], strlen(files[i])) == 0)
                    snprintf(why, why_len, "%s", msg);
                else
                    snprintf(why, why_len, "%s: %s", files[i], msg);
            }
            goto fail;
        }
        if (index_file(L, i, &t))
            goto fail;
    }
    for (int k = 0; k < 2; k++)
        if (!(L->val[k] = calloc(L->ngs ? L->ngs : 1, sizeof *L->val[k])))
            goto fail;
    if (!(L->since = calloc(L->ngs ? L->ngs : 1, sizeof *L->since)))
        goto fail;
    for (size_t i = 0; i < nfiles; i++) {
        lfile *f = &L->files[i];
        f->direct = 1;
        for (size_t j = 0; j < f->nfs; j++)
            f->direct &= f->fs[j].gid == j;
    }
    if (!(L->ident = calloc(L->ngs ? L->ngs : 1, sizeof *L->ident)) ||
        !(L->fast = calloc(L->ngs ? L->ngs : 1, sizeof *L->fast)) ||
        !(L->fscale = calloc(L->ngs ? L->ngs : 1, sizeof *L->fscale)))
        goto fail;
    for (size_t i = 0; i < L->ngs; i++)
        set_ident(L, i, &no_ident);
    if (counter_indexes(L))
        goto fail;
    for (size_t i = 0; i < nfiles; i++)
        if (L->files[i].damage) {
            snprintf(L->err, sizeof L->err, "%s", L->files[i].damage);
            break;
        }
    free(t.slot);
    position(L, 0);
    *out = q;
    return PCW_OK;
fail:
    if (rc == PCW_E_NO_MEMORY && why && why_len)
        snprintf(why, why_len, "out of memory");
    free(t.slot);
    log_free(L);
    free(q);
    return rc;
}

/* Each counter's position among its counterset's counters in the log
 * (pcw_pdh_value.counter_index): counters numbered per set in log order,
 * through two key sets (linear work). */
static int counter_indexes(pcwl_log *L)
{
    keyset sets = {0}, keys = {0}; /* keys: "set\ncounter", owned here */
    uint32_t *nctr = calloc(L->ngs ? L->ngs : 1, sizeof *nctr), *cidx = NULL;
    int rc = -1, added;
    if (!nctr || !(cidx = calloc(L->ngs ? L->ngs : 1, sizeof *cidx)))
        goto out;
    for (size_t i = 0; i < L->ngs; i++) {
        gseries *g = &L->gs[i];
        uint32_t si = keyset_intern(&sets, g->set, &added);
        if (si == NONE - 1)
            goto out;
        /* "set\ncounter": a name holds no newline worth telling apart. */
        size_t a = strlen(g->set), b = strlen(g->ctr);
        char *key = malloc(a + b + 2);
        if (!key)
            goto out;
        memcpy(key, g->set, a);
        key[a] = '\n';
        memcpy(key + a + 1, g->ctr, b + 1);
        uint32_t ci = keyset_intern(&keys, key, &added);
        if (!added)
            free(key);
        if (ci == NONE - 1)
            goto out;
        if (added)
            cidx[ci] = nctr[si]++;
        g->counter_index = cidx[ci];
    }
    rc = 0;
out:
    for (size_t i = 0; i < keys.n; i++)
        free((char *)keys.key[i]);
    keyset_free(&sets);
    keyset_free(&keys);
    free(nctr);
    free(cidx);
    return rc;
}

/* ---- playback -------------------------------------------------------------- */

/* The identity file series x had at block b (none before its first). */
static const pcw__hist_series *ident_at(const fseries *x, uint64_t b)
{
    static const pcw__hist_series none;
    size_t lo = 0, hi = x->nch;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->ch[mid].block <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &x->ch[lo - 1].id : &none;
}

/* Every series without a value and without a previous one: after a seek,
 * at a file boundary. */
static void forget(pcwl_log *L)
{
    for (size_t i = 0; i < L->ngs; i++) {
        for (int k = 0; k < 2; k++) {
            memset(&L->val[k][i], 0, sizeof L->val[k][i]);
            L->val[k][i].raw.status = PCW_CSTATUS_NO_INSTANCE;
        }
        L->since[i] = 0;
    }
    L->tail[0] = L->tail[1] = 0;
    L->fresh = 1;
    L->gen++;
}

/* Series g's current identity is id (a file reader's series). */
static void set_ident(pcwl_log *L, size_t g, const pcw__hist_series *id)
{
    L->ident[g] = id;
    L->fast[g] = (uint8_t)(pcwl_fast_kind(id) | (id->scale ? FAST_SCALED : 0));
    L->fscale[g] = id->scale ? pcw__q_pow10(id->scale) : 1.0;
}

/* Put file fi's reader at global block b (its identities as they were). */
static void rewind_to(pcwl_log *L, size_t fi, uint64_t b)
{
    lfile *f = &L->files[fi];
    if (b < f->first_block + f->nblocks)
        pcw__hist_reader_seek(f->r, L->blocks[b].off, L->blocks[b].seq);
    else
        pcw__hist_reader_seek(f->r, PCW__HIST_FILE_HEADER, 0); /* an empty file */
    for (size_t i = 0; i < f->nfs; i++)
        pcw__hist_reader_set_ident(f->r, i, ident_at(&f->fs[i], b));
    /* The current values' identities: this file's series. */
    for (size_t i = 0; i < L->ngs; i++)
        set_ident(L, i, &no_ident);
    for (size_t i = 0; i < f->nfs; i++)
        set_ident(L, f->fs[i].gid, pcw__hist_reader_series(f->r, i));
}

/* The last block whose first sample is at or before sample `index`. */
static size_t block_of(const pcwl_log *L, uint64_t index)
{
    size_t lo = 0, hi = L->nblocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L->blocks[mid].first_sample <= index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

/* Read on from file fi's start. */
static void start_file(pcwl_log *L, size_t fi)
{
    L->file = fi;
    L->reported = 0;
    rewind_to(L, fi, L->files[fi].first_block);
    forget(L);
}

/* The next collect reads sample `index` (L->samples: the end). */
static int position(pcwl_log *L, uint64_t index)
{
    if (index >= L->samples || !L->nblocks) {
        /* At the end: the last file's reader done. */
        L->next = L->samples;
        L->file = L->nfiles;
        L->reported = 1;
        forget(L);
        return PCW_OK;
    }
    size_t b = block_of(L, index);
    const lblock *bl = &L->blocks[b];
    L->file = bl->file;
    L->reported = 0;
    rewind_to(L, bl->file, b);
    forget(L);
    lfile *f = &L->files[bl->file];
    char why[400];
    int rc = PCW_OK;
    for (uint64_t k = bl->first_sample; k < index && rc == PCW_OK; k++) {
        uint64_t mono, real;
        const pcw__hist_value *v;
        size_t n;
        if (pcw__hist_reader_next(f->r, &mono, &real, &v, &n, why, sizeof why) != 1) {
            snprintf(L->err, sizeof L->err, "%s: %s", f->name, why);
            rc = PCW_E_CORRUPT;
        }
    }
    /* (Identity records read on the way changed the series in place: the
     * walk's per-series cooking kinds follow.) */
    for (size_t i = 0; i < f->nfs; i++)
        set_ident(L, f->fs[i].gid, pcw__hist_reader_series(f->r, i));
    if (rc == PCW_OK)
        L->next = index;
    return rc;
}

int pcwl_collect(pcw_pdh *q, size_t *failed)
{
    pcwl_log *L = q->log;
    if (failed)
        *failed = 0;
    for (;;) {
        if (L->file >= L->nfiles)
            return PCW_PDH_END_OF_LOG;
        lfile *f = &L->files[L->file];
        uint64_t mono, real;
        const pcw__hist_value *v;
        size_t n;
        char why[400];
        int rc = L->next < f->first_sample + f->nsamples; /* 0: the file is read */
        if (rc == 0) {
            if (f->damage && !L->reported) {
                L->reported = 1;
                snprintf(L->err, sizeof L->err, "%s", f->damage);
                return PCW_E_CORRUPT;
            }
            if (L->file + 1 >= L->nfiles) {
                L->file = L->nfiles;
                return PCW_PDH_END_OF_LOG;
            }
            start_file(L, L->file + 1);
            continue;
        }
        /* This sample becomes the current one, the current the previous
         * (a swap: the old previous values are overwritten). */
        if (!L->fresh) {
            pcw__hist_value *t = L->val[0];
            L->val[0] = L->val[1], L->val[1] = t;
            size_t k = L->tail[0];
            L->tail[0] = L->tail[1], L->tail[1] = k;
        }
        pcw__hist_value *cur = L->val[0];
        pcw__hist_reader_set_output(f->r, f->direct ? cur : NULL, L->tail[0]);
        rc = pcw__hist_reader_next(f->r, &mono, &real, &v, &n, why, sizeof why);
        pcw__hist_reader_set_output(f->r, NULL, 0);
        if (rc != 1) {
            /* The file changed since it was indexed. */
            snprintf(L->err, sizeof L->err, "%s: %s", f->name,
                     rc ? why : "the log ends before the samples it held");
            L->file = L->nfiles;
            forget(L);
            return PCW_E_CORRUPT;
        }
        /* The sample's values (the rest of this file's series have no
         * instance; other files' series have none since the file began). */
        size_t held = pcw__hist_reader_sample_values(f->r);
        if (!f->direct) { /* into the log's order */
            for (size_t i = held; i < L->tail[0] && i < f->nfs; i++) {
                memset(&cur[f->fs[i].gid], 0, sizeof cur[0]);
                cur[f->fs[i].gid].raw.status = PCW_CSTATUS_NO_INSTANCE;
            }
            for (size_t i = 0; i < held && i < f->nfs; i++)
                cur[f->fs[i].gid] = v[i];
        }
        L->tail[0] = held;
        (void)n;
        if (L->fresh)
            L->base = L->next;
        L->cur = L->next;
        size_t nch;
        const uint32_t *ch = pcw__hist_reader_changed(f->r, &nch);
        for (size_t i = 0; i < nch; i++)
            if (ch[i] < f->nfs) {
                uint32_t g = f->fs[ch[i]].gid;
                L->since[g] = L->cur;
                set_ident(L, g, pcw__hist_reader_series(f->r, ch[i]));
            }
        L->fresh = 0;
        L->gen++;
        L->next++;
        q->time_ns = mono;
        q->realtime_ns = real;
        q->collections++;
        return PCW_OK;
    }
}

/* ---- the log's facts -------------------------------------------------------- */

int pcw_pdh_is_log(const pcw_pdh *q)
{
    return PCWL_Q(q) ? 1 : 0;
}

int pcw_pdh_get_log_info(const pcw_pdh *q, pcw_pdh_log_info *out)
{
    if (!PCWL_Q(q) || !out)
        return PCW_E_INVALID_PARAMETER;
    const pcwl_log *L = q->log;
    memset(out, 0, sizeof *out);
    out->samples = L->samples;
    out->next = L->next;
    out->first_ns = L->first_ns, out->last_ns = L->last_ns;
    out->first_real_ns = L->first_real, out->last_real_ns = L->last_real;
    out->blocks = L->nblocks;
    out->series = L->ngs;
    out->files = L->nfiles;
    for (size_t i = 0; i < L->nfiles; i++)
        out->damaged |= L->files[i].damage != NULL;
    return PCW_OK;
}

const char *pcw_pdh_log_error(const pcw_pdh *q)
{
    return PCWL_Q(q) ? q->log->err : "";
}

int pcw_pdh_log_seek(pcw_pdh *q, uint64_t index)
{
    if (!PCWL_Q(q) || index > q->log->samples)
        return PCW_E_INVALID_PARAMETER;
    return position(q->log, index);
}

int pcw_pdh_log_seek_time(pcw_pdh *q, uint64_t realtime_ns)
{
    if (!PCWL_Q(q))
        return PCW_E_INVALID_PARAMETER;
    pcwl_log *L = q->log;
    /* The first block that starts after the time; the sample is in the
     * block before it (or is that block's first). */
    size_t lo = 0, hi = L->nblocks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (L->blocks[mid].nsamples && L->blocks[mid].first_real <= realtime_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return position(L, 0);
    /* Decode block lo - 1 to the first sample at or after the time. */
    const lblock *b = &L->blocks[lo - 1];
    lfile *f = &L->files[b->file];
    rewind_to(L, b->file, lo - 1);
    char why[400];
    uint64_t k = 0;
    for (; k < b->nsamples; k++) {
        uint64_t mono, real;
        const pcw__hist_value *v;
        size_t n;
        if (pcw__hist_reader_next(f->r, &mono, &real, &v, &n, why, sizeof why) != 1) {
            snprintf(L->err, sizeof L->err, "%s: %s", f->name, why);
            return PCW_E_CORRUPT;
        }
        if (real >= realtime_ns)
            break;
    }
    return position(L, b->first_sample + k);
}

size_t pcw_pdh_log_series_count(const pcw_pdh *q)
{
    return PCWL_Q(q) ? q->log->ngs : 0;
}

int pcw_pdh_log_series_at(const pcw_pdh *q, size_t i, pcw_pdh_log_series *out)
{
    if (!PCWL_Q(q) || !out || i >= q->log->ngs)
        return PCW_E_INVALID_PARAMETER;
    const gseries *g = &q->log->gs[i];
    memset(out, 0, sizeof *out);
    out->path = g->path;
    out->host = g->host;
    out->counterset = g->set;
    out->instance = g->inst;
    out->instance_name = g->iname;
    out->dup_index = g->dup;
    out->counter = g->ctr;
    out->counter_type = g->list_type;
    out->scale = g->list_scale;
    out->kind = g->kind;
    return PCW_OK;
}

/* ---- matching paths to series ------------------------------------------------ */

/* A pattern: a parsed path and its host part (any machine's name). */
typedef struct lpat {
    pcw_path p;
    const char *host; /* "" none */
    size_t host_len;
} lpat;

/* No host, ".", "localhost" or "*" match every logged series; another
 * name the series' logged host (case-insensitively). */
static int host_matches(const lpat *x, const gseries *g)
{
    size_t n = x->host_len;
    if (!n || (n == 1 && (x->host[0] == '*' || x->host[0] == '.')) ||
        pcw__name_equal(x->host, n, "localhost", 9))
        return 1;
    return pcw__name_equal(x->host, n, g->host, strlen(g->host));
}

static int name_matches(const char *pat, int wild, const char *name)
{
    if (wild)
        return pcw__wildcard_match(pat, strlen(pat), name, strlen(name));
    return pcw__name_equal(pat, strlen(pat), name, strlen(name));
}

static int set_matches(const lpat *x, const gseries *g)
{
    const pcw_path *p = &x->p;
    return g->parsed && host_matches(x, g) &&
           name_matches(p->counterset, (p->wild & PCW_PATH_WILD_COUNTERSET) != 0, g->set);
}

/* The counter part: the logged name ("Latency:p99"), or for a histogram's
 * statistic also the histogram's own name ("Latency" selects its logged
 * statistics, as live it selects the default ones). */
static int counter_matches(const pcw_path *p, const gseries *g)
{
    int wild = (p->wild & PCW_PATH_WILD_COUNTER) != 0;
    if (name_matches(p->counter, wild, g->ctr))
        return 1;
    const char *colon = strrchr(g->ctr, ':');
    if (!colon || g->list_type != PERF_PCW_HISTOGRAM || strchr(p->counter, ':'))
        return 0;
    size_t n = (size_t)(colon - g->ctr), pn = strlen(p->counter);
    return wild ? pcw__wildcard_match(p->counter, pn, g->ctr, n)
                : pcw__name_equal(p->counter, pn, g->ctr, n);
}

/* The instance part, as the live query matches an instance (values.c). */
static int instance_matches(const pcw_path *p, const gseries *g)
{
    if (!p->instance)
        return !g->has_inst;
    if (!pcw__q_instance_match(p->instance, g->iname, strlen(g->iname)))
        return 0;
    if (p->has_index)
        return g->dup == p->index;
    return (p->wild & PCW_PATH_WILD_INSTANCE) ? 1 : g->dup == 0;
}

static int series_matches(const lpat *x, const gseries *g)
{
    return set_matches(x, g) && counter_matches(&x->p, g) && instance_matches(&x->p, g);
}

static void sel_free(struct pcwl_sel *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->ng; i++) {
        free(sel->g[i].cell);
        free(sel->g[i].vis);
        free(sel->g[i].rowrep);
        free(sel->g[i].colrep);
    }
    free(sel->g);
    free(sel->hbuf);
    free(sel);
}

/* Build the groups of a handle: for each counterset name (in log order),
 * rows (computed ones first, then instances, in log order) by columns. */

/* The most cells a group's grid may have: a log's instances all have the
 * same counters, so its grid is its series; a hostile one's instances x
 * counters could be the square of them. */
#define GRID_MAX(series) (16 * (uint64_t)(series) + 65536)

/* The grid of series idx[0..n-1] (one counterset's, in log order):
 * 0, PCW_E_NO_MEMORY, or PCW_E_INVALID_NAME (beyond GRID_MAX). */
static int build_group(const pcwl_log *L, const pcw_path *p, const uint32_t *idx, size_t n,
                       lgroup *g)
{
    keyset rows = {0}, cols = {0}; /* row i's instance string, column j's counter */
    uint32_t *rowof = NULL, *colof = NULL;
    int rc = PCW_E_NO_MEMORY, added;
    if (!(rowof = malloc((n ? n : 1) * sizeof *rowof)) ||
        !(colof = malloc((n ? n : 1) * sizeof *colof)))
        goto out;
    /* Columns in log order; rows: computed series' first. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n; k++) {
            const gseries *s = &L->gs[idx[k]];
            if ((pass == 0) != (s->kind != PCW_PDH_INSTANCE))
                continue;
            if ((rowof[k] = keyset_intern(&rows, s->inst, &added)) == NONE - 1)
                goto out;
        }
    for (size_t k = 0; k < n; k++)
        if ((colof[k] = keyset_intern(&cols, L->gs[idx[k]].ctr, &added)) == NONE - 1)
            goto out;
    if ((uint64_t)rows.n * cols.n > GRID_MAX(n)) {
        rc = PCW_E_INVALID_NAME;
        goto out;
    }
    g->nrows = (uint32_t)rows.n, g->ncols = (uint32_t)cols.n;
    if (!(g->cell = malloc((rows.n * cols.n != 0 ? rows.n * cols.n : 1) * sizeof *g->cell)) ||
        !(g->vis = malloc((rows.n ? rows.n : 1) * sizeof *g->vis)) ||
        !(g->rowrep = malloc((rows.n ? rows.n : 1) * sizeof *g->rowrep)) ||
        !(g->colrep = malloc((cols.n ? cols.n : 1) * sizeof *g->colrep)))
        goto out;
    for (size_t i = 0; i < rows.n * cols.n; i++)
        g->cell[i] = NONE;
    for (size_t k = n; k-- > 0;) { /* (the first of each row and column stays) */
        g->cell[(size_t)rowof[k] * cols.n + colof[k]] = idx[k];
        g->rowrep[rowof[k]] = idx[k];
        g->colrep[colof[k]] = idx[k];
    }
    g->wild = (p->wild & PCW_PATH_WILD_INSTANCE) != 0;
    rc = 0;
out:
    free(rowof);
    free(colof);
    keyset_free(&rows);
    keyset_free(&cols);
    return rc;
}

/* A group's name for the string table: its first series' set. */
typedef struct gctx {
    const pcwl_log *L;
    const uint32_t *first;
} gctx;

static const char *group_set(void *arg, uint32_t g)
{
    const gctx *c = arg;
    return c->L->gs[c->first[g]].set;
}

/* The hit series' groups (one per counterset name, in log order; only the
 * first with `first_only`) into sel: PCW_OK or build_group's status. The
 * series are bucketed by group through a string table and a counting
 * sort: linear work. */
static int groups_of(const pcwl_log *L, const pcw_path *p, const uint8_t *hit, int first_only,
                     struct pcwl_sel *sel)
{
    size_t cap = L->ngs ? L->ngs : 1;
    uint32_t *gof = malloc(cap * sizeof *gof), *first = malloc(cap * sizeof *first);
    uint32_t *idx = malloc(cap * sizeof *idx);
    size_t *off = calloc(cap + 1, sizeof *off), *pos = malloc(cap * sizeof *pos);
    gctx c = {L, first};
    strtab t = {0};
    uint32_t ng = 0;
    int rc = PCW_E_NO_MEMORY;
    if (!gof || !first || !idx || !off || !pos)
        goto out;
    for (size_t i = 0; i < L->ngs; i++) {
        gof[i] = NONE;
        if (!hit[i])
            continue;
        uint32_t g = strtab_get(&t, L->gs[i].set, group_set, &c, NONE);
        if (g == NONE - 1)
            goto out;
        if (g == NONE) {
            if (first_only && ng)
                continue;
            first[ng] = (uint32_t)i;
            if (strtab_get(&t, L->gs[i].set, group_set, &c, ng) == NONE - 1)
                goto out;
            g = ng++;
        }
        gof[i] = g;
        off[g + 1]++;
    }
    for (uint32_t g = 0; g < ng; g++) {
        off[g + 1] += off[g];
        pos[g] = off[g];
    }
    for (size_t i = 0; i < L->ngs; i++)
        if (gof[i] != NONE)
            idx[pos[gof[i]]++] = (uint32_t)i;
    rc = PCW_OK;
    if (!ng)
        goto out;
    rc = PCW_E_NO_MEMORY;
    lgroup *gs = calloc(ng, sizeof *gs);
    if (!gs)
        goto out;
    sel->g = gs, sel->ng = ng;
    rc = PCW_OK;
    for (uint32_t g = 0; g < ng && rc == PCW_OK; g++)
        rc = build_group(L, p, &idx[off[g]], off[g + 1] - off[g], &gs[g]);
out:
    free(gof);
    free(first);
    free(idx);
    free(off);
    free(pos);
    free(t.slot);
    return rc;
}

/* The groups of path p: 0, or a pcw status with err. */
static int select_series(const pcwl_log *L, const lpat *x, const char *text, struct pcwl_sel *sel,
                         pcw_path_error *err)
{
    const pcw_path *p = &x->p;
    uint8_t *hit = calloc(L->ngs ? L->ngs : 1, 1);
    if (!hit)
        return PCW_E_NO_MEMORY;
    int any_set = 0, any_ctr = 0, rc = PCW_OK;
    for (size_t i = 0; i < L->ngs; i++) {
        const gseries *g = &L->gs[i];
        if (!set_matches(x, g))
            continue;
        any_set = 1;
        if (!counter_matches(p, g))
            continue;
        any_ctr = 1;
        hit[i] = (uint8_t)instance_matches(p, g);
    }
    if (!any_set) {
        rc = pcw__q_fail(err, PCW_E_NOT_FOUND, PCW_PATH_COUNTERSET, 0,
                         "counterset \"%.200s\" is not in the log", p->counterset);
        goto out;
    }
    if (!any_ctr) {
        rc = pcw__q_fail(err, PCW_E_NOT_FOUND, PCW_PATH_COUNTER, strlen(text) - strlen(p->counter),
                         "counter \"%.200s\" is not in the log", p->counter);
        goto out;
    }
    /* One group per counterset name, in log order: the hits bucketed by
     * their set (a string table: linear work). */
    rc = groups_of(L, p, hit, 0, sel);
    if (rc == PCW_OK && !sel->ng && !(p->wild & PCW_PATH_WILD_INSTANCE)) {
        /* An instance named that the log does not hold: one row, no
         * instance (the live query's placeholder), the counters the path
         * selects in the first counterset it matches. */
        for (size_t i = 0; i < L->ngs; i++)
            hit[i] = (uint8_t)(set_matches(x, &L->gs[i]) && counter_matches(p, &L->gs[i]));
        rc = groups_of(L, p, hit, 1, sel);
        if (rc == PCW_OK && sel->ng) {
            sel->g[0].placeholder = 1;
            sel->g[0].wild = 0;
        }
    }
    if (rc == PCW_E_INVALID_NAME)
        rc = pcw__q_fail(err, PCW_E_INVALID_NAME, PCW_PATH_INSTANCE, 0,
                         "the log's instances x counters of a counterset the path selects are more "
                         "than 16 times its series (a damaged or hostile log)");
    else if (rc == PCW_E_NO_MEMORY)
        rc = pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
out:
    free(hit);
    return rc;
}

int pcwl_add_counter(pcw_pdh *q, const char *path, pcw_pdh_counter **out, pcw_path_error *err)
{
    if (out)
        *out = NULL;
    pcw__q_path_error_clear(err);
    if (!path)
        return pcw__q_fail(err, PCW_E_INVALID_PARAMETER, PCW_PATH_SYNTAX, 0, "no path");
    pcw_pdh_counter *h = calloc(1, sizeof *h);
    struct pcwl_sel *sel = calloc(1, sizeof *sel);
    if (!h || !sel || !(h->text = strdup(path))) {
        free(h), free(sel);
        return pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    }
    h->q = q;
    h->lsel = sel;
    lpat x;
    int rc = parse_any_host(path, &h->path, &x.host, &x.host_len, err), parsed = rc == PCW_OK;
    if (rc == PCW_OK) {
        x.p = h->path;
        rc = select_series(q->log, &x, path, sel, err);
    }
    if (rc == PCW_OK && grow((void **)&q->ctrs, &q->ctrs_cap, q->nctrs + 1, sizeof *q->ctrs))
        rc = pcw__q_fail(err, PCW_E_NO_MEMORY, PCW_PATH_SYNTAX, 0, "out of memory");
    if (rc != PCW_OK) {
        if (parsed)
            pcw_path_free(&h->path);
        sel_free(sel);
        free(h->text);
        free(h);
        return rc;
    }
    h->epoch = ++q->log->epochs;
    sel->at = UINT64_MAX;
    q->ctrs[q->nctrs++] = h;
    if (out)
        *out = h;
    return PCW_OK;
}

static void handle_free(pcw_pdh_counter *h)
{
    sel_free(h->lsel);
    pcw_path_free(&h->path);
    free(h->text);
    free(h);
}

int pcwl_remove_counter(pcw_pdh *q, pcw_pdh_counter *ctr)
{
    for (size_t i = q->nctrs; i-- > 0;)
        if (q->ctrs[i] == ctr) {
            memmove(q->ctrs + i, q->ctrs + i + 1, (q->nctrs - i - 1) * sizeof *q->ctrs);
            q->nctrs--;
            handle_free(ctr);
            return PCW_OK;
        }
    return PCW_E_INVALID_PARAMETER;
}

void pcwl_close(pcw_pdh *q)
{
    for (size_t i = 0; i < q->nctrs; i++)
        handle_free(q->ctrs[i]);
    free(q->ctrs);
    log_free(q->log);
    free(q);
}

int pcwl_expand(pcw_pdh *q, const char *path, int (*fn)(const char *path, void *arg), void *arg,
                pcw_path_error *err)
{
    pcw__q_path_error_clear(err);
    if (!path || !fn)
        return pcw__q_fail(err, PCW_E_INVALID_PARAMETER, PCW_PATH_SYNTAX, 0, "no path");
    lpat x;
    int rc = parse_any_host(path, &x.p, &x.host, &x.host_len, err);
    if (rc != PCW_OK)
        return rc;
    const pcwl_log *L = q->log;
    char buf[PCW_PATH_MAX + 64];
    for (size_t i = 0; i < L->ngs; i++) {
        const gseries *g = &L->gs[i];
        if (!series_matches(&x, g))
            continue;
        pcw_path_build(buf, sizeof buf, NULL, g->set, g->has_inst ? g->iname : NULL, g->dup,
                       g->ctr);
        if (fn(buf, arg))
            break;
    }
    pcw_path_free(&x.p);
    return PCW_OK;
}

/* ---- values ---------------------------------------------------------------- */

/* Is series i there in this sample (a wildcard shows it)? */
static int present(const pcwl_log *L, uint32_t i)
{
    int st = L->val[0][i].raw.status;
    return st != PCW_CSTATUS_NO_INSTANCE && st != PCW_CSTATUS_PROVIDER_GONE;
}

/* The rows shown in this sample (once per collection); a change of them
 * is a new instance epoch. */
static void refresh_rows(const pcw_pdh_counter *hc)
{
    pcw_pdh_counter *h = (pcw_pdh_counter *)hc; /* the handle's cache */
    struct pcwl_sel *sel = h->lsel;
    pcwl_log *L = h->q->log;
    if (sel->at == L->gen)
        return;
    sel->at = L->gen;
    int changed = 0;
    for (size_t j = 0; j < sel->ng; j++) {
        lgroup *g = &sel->g[j];
        uint32_t n = 0;
        for (uint32_t r = 0; r < g->nrows; r++) {
            int show = !g->wild;
            for (uint32_t c = 0; c < g->ncols && !show; c++) {
                uint32_t s = g->cell[(size_t)r * g->ncols + c];
                show = s != NONE && present(L, s);
            }
            if (!show)
                continue;
            if (n >= g->nvis || g->vis[n] != r)
                changed = 1;
            g->vis[n++] = r;
        }
        if (n != g->nvis)
            changed = 1;
        g->nvis = g->placeholder ? 1 : n;
    }
    if (changed)
        h->epoch = ++L->epochs;
}

/* Where value i is: its group, row and column; -1 out of range. */
static int locate(const pcw_pdh_counter *h, size_t i, const lgroup **gp, uint32_t *row,
                  uint32_t *col)
{
    refresh_rows(h);
    const struct pcwl_sel *sel = h->lsel;
    for (size_t j = 0; j < sel->ng; j++) {
        const lgroup *g = &sel->g[j];
        size_t n = (size_t)g->nvis * g->ncols;
        if (i < n) {
            *gp = g;
            *row = g->vis[i / g->ncols];
            *col = (uint32_t)(i % g->ncols);
            return 0;
        }
        i -= n;
    }
    return -1;
}

size_t pcwl_value_count(const pcw_pdh_counter *h)
{
    refresh_rows(h);
    size_t n = 0;
    for (size_t j = 0; j < h->lsel->ng; j++)
        n += (size_t)h->lsel->g[j].nvis * h->lsel->g[j].ncols;
    return n;
}

/* Series s's previous sample: when it was read since the last seek (or
 * file boundary) and has the current identity; else NULL. */
static inline const pcw__hist_value *prev_of(const pcwl_log *L, uint32_t s)
{
    return L->cur > L->base && L->since[s] < L->cur ? &L->val[1][s] : NULL;
}

/* Series s cooked with the handle's flags and scale. */
static inline int cook(const pcw_pdh_counter *h, uint32_t s, unsigned flags, double *value)
{
    const pcwl_log *L = h->q->log;
    const pcw__hist_series *id = L->ident[s];
    pcw__hist_series scaled;
    if (h->scale_set) { /* pcw_pdh_set_scale */
        scaled = *id;
        scaled.scale = h->scale;
        id = &scaled;
    }
    const pcw__hist_value *prev = prev_of(L, s);
    /* A logged total was cooked live against its members' previous
     * samples: without a previous sample here (the first after a seek or
     * a file boundary) a two-sample total has no value yet, as live after
     * pcw_pdh_add_counter. */
    if (!prev && id->kind == PCW__HIST_KIND_COMPUTED && pcw_cook_needs_two(id->type) &&
        L->val[0][s].raw.status == PCW_CSTATUS_VALID) {
        *value = 0;
        return PCW_CSTATUS_NEW_DATA_NEEDED;
    }
    return pcw__hist_cook(id, &L->val[0][s], prev, flags, value);
}

/* The cell's status and value: a hole (an instance without that counter
 * in the log) has no data, a placeholder no instance. */
static inline int cook_cell(const pcw_pdh_counter *h, const lgroup *g, uint32_t s, unsigned flags,
                            double *value)
{
    if (g->placeholder || s == NONE) {
        *value = 0;
        return g->placeholder ? PCW_CSTATUS_NO_INSTANCE : PCW_CSTATUS_NO_DATA;
    }
    return cook(h, s, flags, value);
}

int pcwl_get_value(const pcw_pdh_counter *h, size_t i, unsigned flags, pcw_pdh_value *out)
{
    const lgroup *g;
    uint32_t r, c;
    if (!out || locate(h, i, &g, &r, &c))
        return PCW_E_INVALID_PARAMETER;
    const pcwl_log *L = h->q->log;
    uint32_t s = g->cell[(size_t)r * g->ncols + c];
    memset(out, 0, sizeof *out);
    /* Names from a series of the cell's row and of its column. */
    const gseries *gr = &L->gs[g->rowrep[r]], *gc = &L->gs[g->colrep[c]];
    out->counterset = gc->set;
    out->counter = gc->ctr;
    out->counter_index = gc->counter_index;
    if (g->placeholder) {
        const pcw_path *p = &h->path;
        out->instance = out->instance_name = p->instance ? p->instance : "";
        out->dup_index = p->index;
        out->counter_type = gc->list_type;
        out->status = out->raw.status = PCW_CSTATUS_NO_INSTANCE;
        out->instance_id = PCW_ANY_INSTANCE_ID;
        return PCW_OK;
    }
    out->instance = gr->inst;
    out->instance_name = gr->iname;
    out->dup_index = gr->dup;
    out->kind = gr->kind;
    out->status = cook_cell(h, g, s, flags, &out->value);
    if (s == NONE) {
        out->raw.status = PCW_CSTATUS_NO_DATA;
        out->counter_type = gc->list_type;
        return PCW_OK;
    }
    const gseries *gs = &L->gs[s];
    const pcw__hist_series *id = L->ident[s];
    out->counter_type = id->type ? id->type : gs->list_type;
    out->raw.status = L->val[0][s].raw.status;
    if (gs->kind == PCW_PDH_INSTANCE) {
        out->raw = L->val[0][s].raw;
        out->instance_id = id->instance_id;
        out->pid = id->pid;
        out->provider_id = id->provider_id;
        out->sources = 1;
    } else {
        out->instance_id = PCW_ANY_INSTANCE_ID;
    }
    return PCW_OK;
}

size_t pcwl_value_path(const pcw_pdh_counter *h, size_t i, int with_host, char *buf, size_t len)
{
    const lgroup *g;
    uint32_t r, c;
    if (locate(h, i, &g, &r, &c)) {
        if (buf && len)
            buf[0] = 0;
        return 0;
    }
    pcw_pdh_value v;
    pcwl_get_value(h, i, PCW_FMT_RAW, &v);
    const pcwl_log *L = h->q->log;
    const gseries *gr = &L->gs[g->rowrep[r]];
    const char *host = with_host && !g->placeholder && *gr->host ? gr->host : NULL;
    int has_inst = g->placeholder ? h->path.instance != NULL : gr->has_inst;
    return pcw_path_build(buf, len, host, v.counterset, has_inst ? v.instance_name : NULL,
                          v.dup_index, v.counter);
}

static const lgroup *single(const pcw_pdh_counter *h)
{
    refresh_rows(h);
    return h->lsel->ng == 1 ? &h->lsel->g[0] : NULL;
}

size_t pcwl_instance_count(const pcw_pdh_counter *h)
{
    const lgroup *g = single(h);
    return g ? g->nvis : 0;
}

size_t pcwl_selected_counter_count(const pcw_pdh_counter *h)
{
    const lgroup *g = single(h);
    return g ? g->ncols : 0;
}

int pcwl_generic_cook;

/* What a walk's fast cooking takes from its handle and flags. */
typedef struct fastcfg {
    int raw;     /* PCW_FMT_RAW: X as it is */
    int noscale; /* PCW_FMT_NOSCALE */
    int nocap;   /* PCW_FMT_NOCAP100 */
    int x1000;   /* PCW_FMT_1000 */
    int hscaled; /* pcw_pdh_set_scale's scale is not 0 ... */
    double hmul; /* ... and its 10^scale */
} fastcfg;

/* Series s (a cell's, of kind `kind`) cooked as pcw__hist_cook cooks it
 * (pcw_cook's formula, then pcw__q_finish: x100 and the cap for a
 * percentage, 10^scale, x1000, finiteness), the same operations in the
 * same order: PCW_CSTATUS_VALID with *value, or -1 when the value needs
 * a status or another formula (then cook() decides). */
__attribute__((always_inline)) static inline int cook_fast(const pcw_pdh_counter *h,
                                                           const pcwl_log *L, uint32_t s, int kind,
                                                           const fastcfg *c, double *value)
{
    const pcw_raw *now = &L->val[0][s].raw;
    double v;
    int how = kind & ~(int)FAST_SCALED;
    if (how == PCWL_FAST_NO_DATA) { /* pcw_cook: no formula, whatever the sample */
        *value = 0;
        return PCW_CSTATUS_NO_DATA;
    }
    if (how == PCWL_FAST_GENERIC || now->status != PCW_CSTATUS_VALID)
        return -1;
    if (c->raw) { /* X, no formula, no scale */
        *value = (double)now->first;
        return PCW_CSTATUS_VALID;
    }
    if (how == PCWL_FAST_RAW) {
        v = (double)now->first;
    } else if (how == PCWL_FAST_FRACTION) {
        if (now->second == 0)
            return -1;
        v = (double)now->first / (double)now->second;
        v *= 100.0;
        if (!c->nocap && v > 100.0)
            v = 100.0;
    } else {
        const pcw__hist_value *p = prev_of(L, s);
        if (!p || p->raw.status != PCW_CSTATUS_VALID || now->second <= p->raw.second ||
            now->first < p->raw.first || now->freq == 0)
            return -1;
        double den = (double)(now->second - p->raw.second);
        double num = (double)(now->first - p->raw.first);
        v = num / (den / (double)now->freq);
    }
    if (!c->noscale) {
        if (h->scale_set) {
            if (c->hscaled)
                v *= c->hmul;
        } else if (kind & FAST_SCALED) {
            v *= L->fscale[s];
        }
    }
    if (c->x1000)
        v *= 1000.0;
    if (!isfinite(v))
        return -1;
    *value = v;
    return PCW_CSTATUS_VALID;
}

/* A walk's (or a column's) fastcfg: once per call, not per value. */
static void fastcfg_of(const pcw_pdh_counter *h, unsigned flags, fastcfg *fc)
{
    int hs = h->scale_set && h->scale != 0;
    *fc = (fastcfg){.raw = (flags & PCW_FMT_RAW) != 0,
                    .noscale = (flags & PCW_FMT_NOSCALE) != 0,
                    .nocap = (flags & PCW_FMT_NOCAP100) != 0,
                    .x1000 = (flags & PCW_FMT_1000) != 0,
                    .hscaled = hs,
                    .hmul = hs ? pcw__q_pow10(h->scale) : 1.0};
}

/* Cell x's status and value (as cook_cell gives them): cook_fast's when
 * it has them. */
__attribute__((always_inline)) static inline int cook_cell_fast(const pcw_pdh_counter *h,
                                                                const pcwl_log *L, const lgroup *g,
                                                                uint32_t x, unsigned flags,
                                                                const fastcfg *fc, double *value)
{
    int s = x == NONE || g->placeholder || pcwl_generic_cook
                ? -1
                : cook_fast(h, L, x, L->fast[x], fc, value);
    return s >= 0 ? s : cook_cell(h, g, x, flags, value);
}

int pcwl_cook_column(const pcw_pdh_counter *h, size_t k, unsigned flags, double *values,
                     uint8_t *status)
{
    const lgroup *g = single(h);
    if (!g || k >= g->ncols || !values)
        return PCW_E_INVALID_PARAMETER;
    fastcfg fc;
    fastcfg_of(h, flags, &fc);
    for (uint32_t r = 0; r < g->nvis; r++) {
        uint32_t x = g->cell[(size_t)g->vis[r] * g->ncols + k];
        int st = cook_cell_fast(h, h->q->log, g, x, flags, &fc, &values[r]);
        if (status)
            status[r] = (uint8_t)st;
    }
    return PCW_OK;
}

/* Every value, a block of rows (at most 2,048 values, or one row) at a
 * time, to fn: the one walk of cook_all, visit and visit_rows. */
#define BLOCK_VALUES 2048u
static int walk(const pcw_pdh_counter *h, unsigned flags, double *v, uint8_t *st, int per_row,
                int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    refresh_rows(h);
    const struct pcwl_sel *sel = h->lsel;
    const pcwl_log *L = h->q->log;
    fastcfg fc;
    fastcfg_of(h, flags, &fc);
    size_t first = 0;
    for (size_t j = 0; j < sel->ng; j++) {
        const lgroup *g = &sel->g[j];
        size_t per = per_row || g->ncols >= BLOCK_VALUES ? 1 : BLOCK_VALUES / g->ncols;
        for (uint32_t r0 = 0; r0 < g->nvis; r0 += (uint32_t)per) {
            uint32_t rows = (uint32_t)(g->nvis - r0 < per ? g->nvis - r0 : per);
            /* (restrict: a status byte stored must not make the compiler
             * load the query's arrays again for the next value.) */
            double *restrict ov = fn ? v : v + first;
            uint8_t *restrict os = fn ? st : (st ? st + first : NULL);
            size_t n = 0;
            for (uint32_t r = r0; r < r0 + rows; r++) {
                const uint32_t *cells = &g->cell[(size_t)g->vis[r] * g->ncols];
                for (uint32_t c = 0; c < g->ncols; c++, n++) {
                    int s = cook_cell_fast(h, L, g, cells[c], flags, &fc, &ov[n]);
                    if (os)
                        os[n] = (uint8_t)s;
                }
            }
            if (fn) {
                pcw_pdh_rows b = {first, rows, g->ncols, v, st};
                if (fn(&b, arg))
                    return PCW_OK;
            }
            first += n;
        }
    }
    return PCW_OK;
}

/* The buffers of a walk that hands blocks over. */
static int walk_blocks(const pcw_pdh_counter *h, unsigned flags, int per_row,
                       int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    size_t cap = BLOCK_VALUES;
    for (size_t j = 0; j < h->lsel->ng; j++)
        if (h->lsel->g[j].ncols > cap)
            cap = h->lsel->g[j].ncols;
    double *v = malloc(cap * sizeof *v);
    uint8_t *st = malloc(cap);
    int rc = v && st ? walk(h, flags, v, st, per_row, fn, arg) : PCW_E_NO_MEMORY;
    free(v);
    free(st);
    return rc;
}

int pcwl_cook_all(const pcw_pdh_counter *h, unsigned flags, double *values, uint8_t *status)
{
    return walk(h, flags, values, status, 0, NULL, NULL);
}

int pcwl_visit_rows(const pcw_pdh_counter *h, unsigned flags,
                    int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    return walk_blocks(h, flags, 0, fn, arg);
}

/* pcw_pdh_visit's callback through a per-row walk. */
typedef struct row_fn {
    int (*fn)(const pcw_pdh_row *row, void *arg);
    void *arg;
} row_fn;

static int one_row(const pcw_pdh_rows *rows, void *arg)
{
    const row_fn *x = arg;
    pcw_pdh_row r = {rows->first, rows->count, rows->values, rows->status};
    return x->fn(&r, x->arg);
}

int pcwl_visit(const pcw_pdh_counter *h, unsigned flags,
               int (*fn)(const pcw_pdh_row *row, void *arg), void *arg)
{
    row_fn x = {fn, arg};
    return walk_blocks(h, flags, 1, one_row, &x);
}

int pcwl_collect_rows(pcw_pdh *q, size_t *failed, pcw_pdh_counter *h, unsigned flags,
                      int (*fn)(const pcw_pdh_rows *rows, void *arg), void *arg)
{
    int rc = pcwl_collect(q, failed);
    if (rc != PCW_OK)
        return rc;
    int r = walk_blocks(h, flags, 0, fn, arg);
    return r != PCW_OK ? r : rc;
}

int pcwl_get_histogram(const pcw_pdh_counter *h, size_t i, unsigned flags, pcw_hist_dist *out)
{
    const lgroup *g;
    uint32_t r, c;
    if (!out || locate(h, i, &g, &r, &c))
        return PCW_E_INVALID_PARAMETER;
    memset(out, 0, sizeof *out);
    uint32_t s = g->cell[(size_t)r * g->ncols + c];
    if (g->placeholder || s == NONE) {
        out->status = g->placeholder ? PCW_CSTATUS_NO_INSTANCE : PCW_CSTATUS_NO_DATA;
        return PCW_OK;
    }
    const pcwl_log *L = h->q->log;
    struct pcwl_sel *sel = h->lsel;
    if (!sel->hbuf && !(sel->hbuf = malloc(PCW_HIST_MAX_BUCKETS * sizeof *sel->hbuf)))
        return PCW_E_NO_MEMORY;
    pcw__hist_dist(L->ident[s], &L->val[0][s], prev_of(L, s), flags, sel->hbuf, out);
    return PCW_OK;
}
