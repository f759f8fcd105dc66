/* SPDX-License-Identifier: MIT */
/*
 * tools/pcwtop/layout.c - the screen's geometry and choices that the keys
 * need as well as the drawing (input.c moves within them, screen.c draws
 * them): pure functions of the UI state and the terminal's size, so that
 * neither calls the other.
 */
#include "pcwtop.h"

int layout_table_height(int nlines)
{
    /* The same for every mode: the rows read stay valid. */
    int h = nlines - UI_HEADER_LINES - 1 - 1; /* header, bar, the table's title */
    return h > 0 ? h : 0;
}

int layout_sets_shown(const top_ui *ui, int cols)
{
    if (ui->mode == MODE_SORT || ui->mode == MODE_SETUP)
        return 1; /* the chooser takes the list's place */
    return ui->sets_pane > 0 || (ui->sets_pane == 0 && cols >= UI_NARROW_COLS);
}

const char *layout_sort_label(const top_table *t, int sort)
{
    switch (sort) {
    case TOP_SORT_NONE:
        return "(as published)";
    case TOP_SORT_NAME:
        return "INSTANCE";
    case TOP_SORT_PID:
        return "PID";
    }
    if (t && sort >= 0 && (uint32_t)sort < t->ncols)
        return t->cols[sort].name;
    return "?";
}

size_t layout_sort_choices(const top_table *t, int *out, size_t cap)
{
    size_t n = 0;
    if (n < cap)
        out[n++] = TOP_SORT_NONE;
    if (n < cap)
        out[n++] = TOP_SORT_NAME;
    if (n < cap)
        out[n++] = TOP_SORT_PID;
    for (uint32_t k = 0; t && k < t->ncols && k < UI_MAX_COLS && n < cap; k++)
        out[n++] = (int)k;
    return n;
}
