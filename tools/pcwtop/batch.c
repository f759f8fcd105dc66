/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/batch.c - `pcwtop -b`: no curses; each refresh is printed
 * as text, as `top -b` does, for scripts and for `make demo`:
 *
 *   pcwtop 0.5.0 - 10:42:17 - refresh 1 - delay 1s
 *   Providers: 1 live, 0 exited   Countersets: 2   Instances: 4   Cost: 210 us
 *   Countersets: Geometric Waves (1), Query Test (2)
 *   Counterset: Geometric Waves (multipleAggregate, 1 provider), sorted by Triangle
 *
 *     INSTANCE          PID  Triangle  Square Wave
 *     _Total              -        40           40
 *   + Small Wave       1234        48           60
 *
 * A blank line ends each refresh. The first column marks a row: '+' new,
 * '-' gone, 'x' its provider exited, '!' its provider did not answer in
 * time. Values are formatted as on screen (format.h). Like pcwstat, the
 * first collection is not printed, so that every rate printed covers a
 * whole interval.
 *
 * With -H COUNTER, the histogram counter's interval distribution follows
 * each table (heatmap.c, heat_print).
 *
 * --replay: every sample of the log after the first (which primes the
 * rates, as live), as fast as it is read, each headed with its own time
 * to the millisecond and its place in the log.
 *
 * Exit status: 0, or 1 when the counterset (-c), the sort column (-s) or
 * the histogram (-H) does not exist at the start, or a replayed log ends
 * in a damaged block.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcw/version.h>

#include "../common/output.h"
#include "pcwtop.h"

/* A name from a provider (or a message holding one), escaped: batch output
 * is text for a person, and this escape is its only quoting (escape.h). */
static void put_name(FILE *out, const char *s)
{
    esc_put(out, s, strlen(s), 0);
}

/* "pcwtop: MESSAGE" on stderr, escaped: messages quote names. */
static void say(const char *prefix, const char *msg, const char *suffix)
{
    fprintf(stderr, "pcwtop: %s", prefix);
    put_name(stderr, msg);
    fprintf(stderr, "%s\n", suffix);
}

static void print_header(FILE *out, const top_frame *f, const top_view *v, size_t count,
                         long refresh)
{
    char clock[32], iv[32], cost[32];
    fmt_clock(clock, sizeof clock, f->real_ns);
    fmt_interval(iv, sizeof iv, f->interval_ns);
    fmt_cost(cost, sizeof cost, f->cost_ns);
    size_t instances = f->table ? f->table->nq - f->table->ntotals : 0;
    if (f->log) {
        /* A replayed sample: its own time, to the millisecond (the CSV's),
         * and where in the log it is. */
        char when[48], from[48], to[48];
        fmt_datetime(when, sizeof when, f->real_ns);
        fmt_datetime(from, sizeof from, f->log_first_real_ns);
        fmt_datetime(to, sizeof to, f->log_last_real_ns);
        fprintf(out, "pcwtop %s - %s - sample %llu of %llu - replay\n", PCW_VERSION_STRING, when,
                (unsigned long long)f->log_index + 1, (unsigned long long)f->log_samples);
        fprintf(out, "Log: %s to %s   Countersets: %zu   Instances: %zu\n", from, to, f->nsets,
                instances);
    } else {
        fprintf(out, "pcwtop %s - %s - refresh %ld - delay %s\n", PCW_VERSION_STRING, clock,
                refresh, iv);
        fprintf(out,
                "Providers: %zu live, %zu exited   Countersets: %zu   Instances: %zu   "
                "Cost: %s\n",
                f->providers_live, f->providers_exited, f->nsets, instances, cost);
    }
    fputs("Countersets:", out);
    for (size_t i = 0; i < f->nsets; i++) {
        fprintf(out, "%s ", i ? "," : "");
        put_name(out, f->sets[i].name);
        if (!f->log) /* a log does not say how many providers published it */
            fprintf(out, " (%u)", f->sets[i].providers);
    }
    fputs(f->nsets ? "\n" : " none\n", out);
    for (size_t i = 0; i < f->nexits; i++) {
        fprintf(out, "Provider %d (", (int)f->exits[i].pid);
        put_name(out, f->exits[i].name);
        fputs(") exited\n", out);
    }
    if (f->born_now || f->gone_now)
        fprintf(out, "Instances: %zu new, %zu gone\n", f->born_now, f->gone_now);
    if (f->failed)
        fprintf(out, "No answer in time from %zu provider%s\n", f->failed,
                f->failed == 1 ? "" : "s");
    if (f->message[0]) {
        put_name(out, f->message);
        fputc('\n', out);
    }
    if (!f->table)
        return;
    const top_setinfo *si = f->set_index >= 0 ? &f->sets[f->set_index] : NULL;
    fputs("Counterset: ", out);
    put_name(out, f->set_name);
    if (f->log)
        fprintf(out, " (%s, from the log)", fmt_instance_type(f->instance_type));
    else
        fprintf(out, " (%s, %u provider%s%s)", fmt_instance_type(f->instance_type),
                si ? si->providers : 0, si && si->providers == 1 ? "" : "s",
                f->set_callback ? ", callback" : "");
    if (v->sort != TOP_SORT_NONE) {
        const char *col = v->sort == TOP_SORT_NAME              ? "name"
                          : v->sort == TOP_SORT_PID             ? "pid"
                          : (uint32_t)v->sort < f->table->ncols ? f->table->cols[v->sort].name
                                                                : "?";
        int desc = (v->sort >= 0) != v->reverse;
        fputs(", sorted by ", out);
        put_name(out, col);
        fprintf(out, ", %s", desc ? "descending" : "ascending");
    }
    if (v->container[0]) {
        fputs(", container \"", out);
        put_name(out, v->container);
        fputs("\"", out);
    }
    if (v->filter[0]) {
        fputs(", filter \"", out);
        put_name(out, v->filter);
        fprintf(out, "\" (%zu shown)", count - v->nshown_totals);
    }
    fprintf(out, "%s%s\n", f->raw ? ", raw values" : "", f->advanced ? ", advanced counters" : "");
    /* Why a total shows "-" for good (model.c, note_totals): a message
     * that quotes another process's counter name, escaped as messages are. */
    if (f->note[0] && v->totals) {
        put_name(out, f->note);
        fputc('\n', out);
    }
}

void batch_print(FILE *out, top_model *m, top_view *v, long refresh)
{
    const top_frame *f = top_model_frame(m);
    size_t count = view_count(v, m);
    print_header(out, f, v, count, refresh);
    const top_table *t = f->table;
    if (!t)
        return;
    uint32_t *rows = malloc((count ? count : 1) * sizeof *rows);
    uint32_t nc = t->ncols;
    double *val = malloc((nc ? nc : 1) * sizeof *val);
    uint8_t *st = malloc(nc ? nc : 1);
    int *widths = malloc((nc ? nc : 1) * sizeof *widths);
    char *cell = malloc(4 * 256 + 8);
    if (!rows || !val || !st || !widths || !cell) {
        fprintf(stderr, "pcwtop: out of memory\n");
        free(rows), free(val), free(st), free(widths), free(cell);
        return;
    }
    count = view_rows(v, m, 0, count, rows);
    int namew = 8; /* "INSTANCE" */
    for (size_t i = 0; i < count; i++) {
        const top_row *r = &t->rows[rows[i]];
        int w = utf8_width(top_row_name(t, r), r->name_len);
        if (w > namew)
            namew = w > 60 ? 60 : w;
    }
    for (uint32_t k = 0; k < nc; k++)
        widths[k] = fmt_col_width(t->cols[k].name);
    fputc('\n', out);
    utf8_pad(cell, 4 * 256 + 8, "INSTANCE", 8, namew, 0);
    fprintf(out, "  %s %7s", cell, "PID");
    if (f->containers)
        fprintf(out, " %-13s", "CONTAINER");
    for (uint32_t k = 0; k < nc; k++) {
        char title[4 * 256 + 8];
        fmt_col_title(title, sizeof title, t->cols[k].name, t->cols[k].stat_len, widths[k]);
        utf8_pad(cell, 4 * 256 + 8, title, strlen(title), widths[k], 1);
        fprintf(out, "  %s", cell);
    }
    fputc('\n', out);
    for (size_t i = 0; i < count; i++) {
        const top_row *r = &t->rows[rows[i]];
        top_model_row_values(m, r, val, st);
        int state = top_row_state(r, nc ? st[0] : PCW_CSTATUS_VALID);
        int is_new = r->born && f->seq - r->born < TOP_NEW_REFRESHES;
        utf8_pad(cell, 4 * 256 + 8, top_row_name(t, r), r->name_len, namew, 0);
        if (r->kind == PCW_PDH_INSTANCE)
            fprintf(out, "%c %s %7d", fmt_mark(state, is_new), cell, (int)r->pid);
        else
            fprintf(out, "%c %s %7s", fmt_mark(state, is_new), cell, "-");
        if (f->containers) /* hex digits or "ns:<n>": nothing to escape */
            fprintf(out, " %-13s", r->ctr[0] ? r->ctr : "-");
        for (uint32_t k = 0; k < nc; k++) {
            char num[64];
            if (state == TOP_ROW_GONE || state == TOP_ROW_EXITED)
                snprintf(num, sizeof num, "%s", state == TOP_ROW_GONE ? "gone" : "exited");
            else
                fmt_cell(num, sizeof num, val[k], st[k], t->cols[k].unit, f->raw);
            fprintf(out, "  %*s", widths[k], num);
        }
        fputc('\n', out);
    }
    free(rows), free(val), free(st), free(widths), free(cell);
}

/* -H: the histogram's distribution for each row of the view. */
static void print_heat(FILE *out, top_model *m, top_view *v, const char *name)
{
    const top_frame *f = top_model_frame(m);
    int k = f->table ? heat_find_column(f->table, name) : -1;
    size_t count = view_count(v, m);
    uint32_t *rows = malloc((count ? count : 1) * sizeof *rows);
    if (k < 0 || !rows) {
        free(rows);
        return;
    }
    count = view_rows(v, m, 0, count, rows);
    heat_print(out, m, rows, count, k);
    free(rows);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Sleep until `deadline`; -1 when a signal asks to stop. */
static int sleep_until(uint64_t deadline, volatile int *signalled)
{
    struct timespec ts = {(time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull)};
    while (!*signalled) {
        int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        if (r != EINTR)
            return 0;
    }
    return -1;
}

int batch_run(const top_options *o, top_model *m, volatile int *signalled)
{
    top_view v;
    view_init(&v);
    if (o->filter)
        snprintf(v.filter, sizeof v.filter, "%s", o->filter);
    if (o->container)
        snprintf(v.container, sizeof v.container, "%s", o->container);
    top_model_want(m, o->set, o->set == NULL);
    /* A replay prints every logged sample at once: no waiting. */
    uint64_t step = o->replay ? 0 : (uint64_t)(o->interval * 1e9);
    /* The first collection primes the rates; it is not printed. */
    top_model_collect(m, step);
    const top_frame *f = top_model_frame(m);
    int status = 0, sort_pending = o->sort != NULL;
    if (o->set && !f->table) {
        if (strstr(f->message, "not published") && !f->log)
            say("counterset \"", o->set, "\" does not exist (no provider publishes it)");
        else
            say("", f->message[0] ? f->message : "no counterset shown", "");
        view_free(&v);
        return 1;
    }
    char why[512];
    if (sort_pending && f->table) {
        if (view_parse_sort_spec(f, o->sort, &v.sort, &v.reverse, why, sizeof why) != 0) {
            say("", why, "");
            view_free(&v);
            return 1;
        }
        sort_pending = 0;
    }
    if (o->heat && f->table && heat_find_column(f->table, o->heat) < 0) {
        say("-H: no histogram counter \"", o->heat, "\" in this counterset");
        view_free(&v);
        return 1;
    }
    uint64_t deadline = mono_ns() + step;
    for (long n = 0; !*signalled && (o->count == 0 || n < o->count); n++) {
        if (sleep_until(deadline, signalled) != 0)
            break;
        uint64_t now = mono_ns();
        deadline += step;
        if (deadline < now)
            deadline = now + step; /* fell behind: do not burst */
        top_model_collect(m, step);
        if (f->log && (f->log_again || (f->message[0] && !f->table)))
            break; /* the end of the log (or its damaged block: said below) */
        if (sort_pending && f->table) {
            if (view_parse_sort_spec(f, o->sort, &v.sort, &v.reverse, why, sizeof why) != 0) {
                say("", why, "");
                status = 1;
                break;
            }
            sort_pending = 0;
        }
        batch_print(stdout, m, &v, n + 1);
        if (o->heat)
            print_heat(stdout, m, &v, o->heat);
        fputc('\n', stdout);
        if (fflush(stdout) != 0) {
            out_end_if_reader_gone(errno);
            status = 1;
            break;
        }
        if (f->log && f->log_end)
            break;
    }
    if (f->log && f->message[0] && (!f->table || (f->log_end && f->log_damaged))) {
        say("", f->message, ""); /* a damaged block ended the log */
        status = 1;
    }
    view_free(&v);
    return status;
}
