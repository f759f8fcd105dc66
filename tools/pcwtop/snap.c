/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/snap.c - the snapshot the screen is drawn from (top_snap):
 * the model's last collection read under its lock - the header's figures,
 * the table (referenced), the rows on screen and their values, the graph's
 * series - and what the UI records refresh after refresh from it (the
 * history rings the graph draws, the heatmap's ring). The event loop
 * (main.c) calls it with the model locked, passing the UI's choices; it
 * changes nothing but the snapshot, so drawing never waits for a
 * collection and never changes what the keys act on.
 *
 * A row is cooked once per refresh (the value cache, by instance key); the
 * cache of the refresh before tells which values changed.
 */
#define _GNU_SOURCE 1
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcwtop.h"

int snap_init(top_snap *s)
{
    memset(s, 0, sizeof *s);
    view_init(&s->view);
    s->hist = calloc(1, sizeof *s->hist);
    ui_cached *cache = calloc(2 * UI_CACHE, sizeof *cache);
    if (!s->hist || !cache) {
        free(cache);
        free(s->hist);
        s->hist = NULL;
        return -1;
    }
    s->cache_cur = cache;
    s->cache_prev = cache + UI_CACHE;
    return 0;
}

void snap_free(top_snap *s)
{
    view_free(&s->view);
    top_table_unref(s->table);
    for (size_t i = 0; i < s->hdr.nsets; i++)
        free(s->hdr.sets[i].name);
    free(s->hdr.sets);
    free(s->hdr.set_name);
    free(s->hdr.exits);
    free(s->rows);
    heat_free(&s->heat);
    for (size_t i = 0; i < GRAPH_MAX_SERIES; i++)
        free(s->span[i]);
    if (s->hist)
        hist_free(s->hist);
    free(s->hist);
    /* One allocation holds both caches: the lower address is its start. */
    free(s->cache_cur < s->cache_prev ? s->cache_cur : s->cache_prev);
    memset(s, 0, sizeof *s);
}

uint64_t snap_series_key(const top_snap *s, uint64_t key)
{
    /* The same instance key in another counterset, or raw against cooked,
     * is another series. */
    uint64_t h = 1469598103934665603ull ^ (uint64_t)s->hdr.raw;
    for (const char *p = s->hdr.set_name ? s->hdr.set_name : ""; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return key ^ (h * 0x9e3779b97f4a7c15ull);
}

void snap_mark_stale(top_snap *s)
{
    s->stale = 1;
}

const ui_row *snap_row_at(const top_snap *s, size_t i)
{
    if (i < s->rows_first || i >= s->rows_first + s->nrows)
        return NULL;
    return &s->rows[i - s->rows_first];
}

/* ---- values ------------------------------------------------------------------ */

static ui_cached *cache_find(ui_cached *c, size_t n, uint64_t key)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].key == key)
            return &c[i];
    return NULL;
}

/* Row r's values for this refresh: cooked once, compared with the refresh
 * before. Returns the entry (`out` when the cache is full: out holds them). */
static const ui_cached *row_values(top_snap *s, top_model *m, const top_row *r, ui_cached *out)
{
    ui_cached *e = cache_find(s->cache_cur, s->ncur, r->key);
    if (e)
        return e;
    e = s->ncur < UI_CACHE ? &s->cache_cur[s->ncur++] : out;
    uint32_t nc = s->table->ncols;
    int raw = s->hdr.raw;
    memset(e, 0, sizeof *e);
    e->key = r->key;
    e->raw = raw;
    const ui_cached *before = cache_find(s->cache_prev, s->nprev, r->key);
    if (before && before->raw != raw)
        before = NULL;
    if (r->qi == UINT32_MAX) { /* a gone row: no values ("gone" / "exited") */
        memset(e->st, PCW_CSTATUS_NO_INSTANCE, sizeof e->st);
        return e;
    }
    if (nc <= UI_MAX_COLS) {
        top_model_row_values(m, r, e->v, e->st);
    } else {
        double v[nc];
        uint8_t st[nc];
        top_model_row_values(m, r, v, st);
        memcpy(e->v, v, sizeof e->v);
        memcpy(e->st, st, sizeof e->st);
    }
    for (uint32_t k = 0; before && k < nc && k < UI_MAX_COLS; k++)
        if (e->st[k] != before->st[k] || (e->st[k] == PCW_CSTATUS_VALID && e->v[k] != before->v[k]))
            e->changed |= 1ull << k;
    return e;
}

/* ---- a refresh ------------------------------------------------------------------ */

int snap_take(top_snap *s, top_model *m)
{
    const top_frame *f = top_model_frame(m);
    if (f->seq == s->seq)
        return 0;
    s->seq_before = s->seq;
    s->seq = f->seq;
    /* This refresh's cache starts empty; the last one's tells changes. */
    ui_cached *t = s->cache_prev;
    s->cache_prev = s->cache_cur;
    s->nprev = s->ncur;
    s->cache_cur = t;
    s->ncur = 0;
    /* The header: scalars, and copies of what the model will free. */
    for (size_t i = 0; i < s->hdr.nsets; i++)
        free(s->hdr.sets[i].name);
    top_setinfo *sets = s->hdr.sets;
    size_t sets_cap = s->hdr.sets_cap;
    top_exit *exits = s->hdr.exits;
    size_t exits_cap = s->hdr.exits_cap;
    char *set_name = s->hdr.set_name;
    s->hdr = *f;
    s->hdr.table = NULL;
    s->hdr.sets = sets, s->hdr.sets_cap = sets_cap, s->hdr.nsets = 0;
    s->hdr.exits = exits, s->hdr.exits_cap = exits_cap, s->hdr.nexits = 0;
    s->set_changed = !set_name || !f->set_name || strcmp(set_name, f->set_name) != 0;
    free(set_name);
    s->hdr.set_name = f->set_name ? strdup(f->set_name) : NULL;
    if (f->nsets > s->hdr.sets_cap) {
        top_setinfo *n = realloc(s->hdr.sets, f->nsets * sizeof *n);
        if (n)
            s->hdr.sets = n, s->hdr.sets_cap = f->nsets;
    }
    for (size_t i = 0; i < f->nsets && i < s->hdr.sets_cap; i++) {
        s->hdr.sets[i] = f->sets[i];
        if (!(s->hdr.sets[i].name = strdup(f->sets[i].name)))
            break;
        s->hdr.nsets = i + 1;
    }
    if (f->nexits > s->hdr.exits_cap) {
        top_exit *n = realloc(s->hdr.exits, f->nexits * sizeof *n);
        if (n)
            s->hdr.exits = n, s->hdr.exits_cap = f->nexits;
    }
    s->hdr.nexits = f->nexits < s->hdr.exits_cap ? f->nexits : s->hdr.exits_cap;
    if (s->hdr.nexits)
        memcpy(s->hdr.exits, f->exits, s->hdr.nexits * sizeof *s->hdr.exits);
    if (s->hdr.set_index >= (int)s->hdr.nsets)
        s->hdr.set_index = -1;
    top_table_unref(s->table);
    s->table = f->table;
    top_table_ref(s->table);
    return 1;
}

void snap_view(top_snap *s, top_model *m, const top_choice *c)
{
    top_view *v = &s->view;
    memcpy(v->filter, c->filter, sizeof v->filter);
    memcpy(v->container, c->container, sizeof v->container);
    v->sort = c->sort;
    v->reverse = c->reverse;
    v->totals = c->totals;
    s->count = s->table ? view_count(v, m) : 0;
    s->nshown_totals = v->nshown_totals;
}

long snap_search(top_snap *s, top_model *m, const char *pattern, size_t from)
{
    enum { CHUNK = 256 };
    uint32_t rows[CHUNK];
    size_t n = s->count;
    if (!n || !s->table)
        return -1;
    size_t start = from < n ? from : 0;
    for (size_t done = 0; done < n;) {
        size_t at = (start + done) % n;
        size_t want = n - at < CHUNK ? n - at : CHUNK;
        if (want > n - done)
            want = n - done;
        size_t got = view_rows(&s->view, m, at, want, rows);
        if (!got)
            return -1;
        for (size_t i = 0; i < got; i++) {
            const top_row *r = &s->table->rows[rows[i]];
            if (view_filter_match(pattern, top_row_name(s->table, r), r->name_len))
                return (long)(at + i);
        }
        done += got;
    }
    return -1;
}

void snap_rows(top_snap *s, top_model *m, size_t top, size_t h, const top_marks *marks,
               int graph_col, int fresh)
{
    if (h > s->rows_cap) {
        ui_row *n = realloc(s->rows, h * sizeof *n);
        if (!n)
            return;
        s->rows = n;
        s->rows_cap = h;
    }
    uint32_t rowbuf[h ? h : 1];
    s->nrows = s->table ? view_rows(&s->view, m, top, h, rowbuf) : 0;
    s->rows_first = top;
    ui_cached spare;
    uint32_t nc = s->table ? s->table->ncols : 0;
    for (size_t i = 0; i < s->nrows; i++) {
        const top_row *r = &s->table->rows[rowbuf[i]];
        const ui_cached *e = row_values(s, m, r, &spare);
        ui_row *u = &s->rows[i];
        u->row = rowbuf[i];
        u->key = r->key;
        u->state = top_row_state(r, nc ? e->st[0] : PCW_CSTATUS_VALID);
        u->is_new = r->born && s->seq - r->born < TOP_NEW_REFRESHES;
        u->changed = e->changed;
        memcpy(u->v, e->v, sizeof u->v);
        memcpy(u->st, e->st, sizeof u->st);
    }
    /* The graph's instances: the marked ones, else the first rows. */
    s->ngraph = 0;
    if (s->table) {
        for (size_t i = 0; i < marks->n && s->ngraph < GRAPH_MAX_SERIES; i++) {
            uint32_t r = top_table_find(s->table, marks->keys[i]);
            if (r != UINT32_MAX)
                s->graph_rows[s->ngraph++] = r;
        }
        if (!marks->n)
            s->ngraph = view_rows(&s->view, m, s->nshown_totals, GRAPH_MAX_SERIES, s->graph_rows);
    }
    /* History: every value on screen, and the graph's series. */
    if (fresh && s->table) {
        hist_time(s->hist, s->seq, s->hdr.mono_ns);
        for (size_t i = 0; i < s->nrows; i++) {
            const ui_row *u = &s->rows[i];
            if (s->table->rows[u->row].qi == UINT32_MAX)
                continue;
            for (uint32_t k = 0; k < nc && k < UI_MAX_COLS; k++)
                hist_put(s->hist, snap_series_key(s, u->key), k, s->seq,
                         u->st[k] == PCW_CSTATUS_VALID ? u->v[k] : NAN);
        }
        for (size_t i = 0; i < s->ngraph; i++) {
            const top_row *r = &s->table->rows[s->graph_rows[i]];
            if (r->qi == UINT32_MAX || graph_col >= (int)nc)
                continue;
            const ui_cached *e = row_values(s, m, r, &spare);
            int k = graph_col;
            hist_put(s->hist, snap_series_key(s, r->key), (uint32_t)k, s->seq,
                     e->st[k] == PCW_CSTATUS_VALID ? e->v[k] : NAN);
        }
    }
    s->stale = 0;
}

void snap_heat(top_snap *s, top_model *m, size_t cursor, int k)
{
    const ui_row *u = snap_row_at(s, cursor);
    if (!s->table || !u)
        return;
    const top_row *r = &s->table->rows[u->row];
    heat_record(&s->heat, m, r, k, snap_series_key(s, r->key), s->seq, s->hdr.mono_ns);
}

void snap_span(top_snap *s, top_model *m, int k, size_t n)
{
    if (!s->table || k < 0 || !n)
        return;
    if (s->span_col != k || s->span_n != n) {
        for (size_t i = 0; i < GRAPH_MAX_SERIES; i++) {
            free(s->span[i]);
            s->span[i] = NULL;
            s->span_key[i] = 0;
        }
        s->span_col = k;
        s->span_n = n;
    }
    for (size_t i = 0; i < s->ngraph; i++) {
        const top_row *r = &s->table->rows[s->graph_rows[i]];
        uint64_t key = snap_series_key(s, r->key);
        if (s->span[i] && s->span_key[i] == key)
            continue;
        if (!s->span[i] && !(s->span[i] = malloc(n * sizeof *s->span[i])))
            return;
        s->span_key[i] = key;
        top_model_log_span(m, r, (uint32_t)k, s->span[i], n);
    }
}
