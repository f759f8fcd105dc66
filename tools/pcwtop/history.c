/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/history.c - what the graph view draws from: one bounded ring
 * of values per series (an instance's counter), recorded at each refresh
 * for the rows on screen and the graph's series (pcwtop.h).
 *
 * Memory is bounded: HIST_SERIES series of HIST_POINTS doubles (about 5 MB)
 * whatever the number of instances; when every slot is taken, the series
 * recorded least recently gives its slot up. A refresh a series missed
 * (it was not on screen) reads as NaN: the graph leaves a gap.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pcwtop.h"

void hist_free(top_history *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->s[i].v);
    h->n = 0;
}

void hist_time(top_history *h, uint64_t seq, uint64_t mono_ns)
{
    h->seq_time[seq % HIST_POINTS] = mono_ns;
    h->seq_of[seq % HIST_POINTS] = seq;
}

static hist_series *find(const top_history *h, uint64_t key, uint32_t k)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->s[i].key == key && h->s[i].k == k && h->s[i].last)
            return (hist_series *)&h->s[i];
    return NULL;
}

const hist_series *hist_get(const top_history *h, uint64_t key, uint32_t k)
{
    return find(h, key, k);
}

void hist_put(top_history *h, uint64_t key, uint32_t k, uint64_t seq, double v)
{
    hist_series *s = find(h, key, k);
    if (!s) {
        if (h->n < HIST_SERIES) {
            s = &h->s[h->n];
            if (!(s->v = malloc(HIST_POINTS * sizeof *s->v)))
                return;
            h->n++;
        } else {
            s = &h->s[0];
            for (size_t i = 1; i < h->n; i++)
                if (h->s[i].last < s->last)
                    s = &h->s[i];
        }
        s->key = key;
        s->k = k;
        s->first = seq;
        s->last = 0;
    }
    if (s->last && seq <= s->last)
        return; /* recorded already */
    /* The refreshes it missed are gaps. */
    uint64_t from = s->last ? s->last + 1 : seq;
    if (seq - from >= HIST_POINTS)
        from = seq - HIST_POINTS + 1;
    for (uint64_t q = from; q < seq; q++)
        s->v[q % HIST_POINTS] = NAN;
    s->v[seq % HIST_POINTS] = v;
    s->last = seq;
    if (seq - s->first >= HIST_POINTS)
        s->first = seq - HIST_POINTS + 1;
}

double hist_at(const top_history *h, const hist_series *s, uint64_t seq, uint64_t *time_ns)
{
    if (time_ns)
        *time_ns = h->seq_of[seq % HIST_POINTS] == seq ? h->seq_time[seq % HIST_POINTS] : 0;
    if (!s || seq < s->first || seq > s->last)
        return NAN;
    return s->v[seq % HIST_POINTS];
}
