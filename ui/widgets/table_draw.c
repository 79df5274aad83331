/*
 * ui_table position text and drawing: column layout, the gutter (cursor and
 * mark), cells cut with an ellipsis (ids in the middle: they differ at the end).
 */
#include "rampart/ui_table.h"

#include <stdio.h>
#include <string.h>

#include "rampart/utf8.h"
#include "ui_text.h"

void ui_table_position(const ui_table *t, char *rows, size_t rows_size, char *page,
                       size_t page_size)
{
    if (t->nrows == 0) {
        snprintf(rows, rows_size, "no rows");
        snprintf(page, page_size, "page 0/0");
        return;
    }
    char a[32], b[32], total[32];
    ui_text_count(t->top + 1, a, sizeof a);
    ui_text_count(t->top + t->nrows, b, sizeof b);
    ui_text_count(t->total, total, sizeof total);
    snprintf(rows, rows_size, "rows %s-%s of %s", a, b, total);
    size_t pages = (t->total + t->height - 1) / t->height;
    size_t p = t->top / t->height + 1;
    if (t->top + t->nrows >= t->total || p > pages)
        p = pages;
    if (pages == 0)
        pages = p = 1;
    snprintf(page, page_size, "page %zu/%zu", p, pages);
}

/* The widest cell of column `col` on screen, its title included. */
static int widest(const ui_table *t, const ui_canvas *c, int col)
{
    int w = ui_canvas_width(c, t->src->cols[col].title, 1 << 20);
    for (size_t r = 0; r < t->nrows; r++) {
        int cw = ui_canvas_width(c, t->rows[r].cells[col], 1 << 20);
        w = cw > w ? cw : w;
    }
    return w;
}

/* Column indexes in placement order: by rank, then table order. */
static int placement(const ui_table_source *src, int *order)
{
    int n = 0;
    for (int rank = 0, left = src->ncols; left > 0; rank++) {
        for (int i = 0; i < src->ncols; i++) {
            if (src->cols[i].rank == rank) {
                order[n++] = i;
                left--;
            }
        }
    }
    return n;
}

void ui_table_layout(const ui_table *t, const ui_canvas *c, int width,
                     int widths[UI_TABLE_COLS_MAX])
{
    const ui_table_source *src = t->src;
    int order[UI_TABLE_COLS_MAX], want[UI_TABLE_COLS_MAX];
    int n = placement(src, order), avail = width - 2, used = 0, shown = 0;
    for (int i = 0; i < UI_TABLE_COLS_MAX; i++)
        widths[i] = 0;
    for (int k = 0; k < n; k++) { /* place: minimums (a whole column: its widest) */
        int i = order[k];
        const ui_table_col *col = &src->cols[i];
        int w = widest(t, c, i);
        want[i] = col->fit || col->max_width <= 0 ? w : col->max_width;
        if (col->max_width > 0 && want[i] > col->max_width)
            want[i] = col->max_width;
        if (!col->whole) /* a whole one is no wider than what it shows */
            want[i] = want[i] < col->min_width ? col->min_width : want[i];
        if (col->optional && t->hide_optional)
            continue;
        int sep = shown ? 1 : 0;
        int first = col->whole && used + sep + want[i] <= avail ? want[i] : col->min_width;
        if (used + sep + first > avail)
            continue;
        widths[i] = first;
        used += sep + first;
        shown++;
    }
    for (int k = 0; k < n && used < avail; k++) { /* grow toward what they show */
        int i = order[k];
        if (!widths[i] || widths[i] >= want[i])
            continue;
        int add = want[i] - widths[i] < avail - used ? want[i] - widths[i] : avail - used;
        widths[i] += add;
        used += add;
    }
    for (int i = 0; i < src->ncols && used < avail; i++) { /* the rest: open-ended */
        if (widths[i] && src->cols[i].max_width <= 0) {
            widths[i] += avail - used;
            used = avail;
        }
    }
}

bool ui_table_toggle_optional(ui_table *t)
{
    t->hide_optional = !t->hide_optional;
    return t->hide_optional;
}

/* `text` cut to `width` columns in the middle ("abc…xyz") into out. */
static const char *cut_middle(const ui_canvas *c, const char *text, int width, char *out,
                              size_t size)
{
    int total = ui_canvas_width(c, text, 1 << 20);
    if (total <= width || width < 5)
        return text;
    int tail = (width - 1) / 2, head = width - 1 - tail;
    size_t len = strlen(text), h = 0, t = len;
    int w = 0;
    while (text[h]) { /* the head: `head` columns from the start */
        size_t n;
        int cw = ui_canvas_char_width(c, text + h, &n);
        if (w + cw > head)
            break;
        w += cw;
        h += n;
    }
    while (t > h && ui_canvas_width(c, text + t, 1 << 20) < tail) {
        size_t prev = utf8_prefix(text, t - 1); /* the start of the character before */
        t = prev > h ? prev : h;
    }
    if (ui_canvas_width(c, text + t, 1 << 20) > tail) { /* a wide char too many */
        size_t n;
        ui_canvas_char_width(c, text + t, &n);
        t += n;
    }
    const char *dots = c->ascii ? "~" : "\xe2\x80\xa6";
    snprintf(out, size, "%.*s%s%s", (int)h, text, dots, text + t);
    return out;
}

/* The cursor's row is one reverse bar from edge to edge (every cell, the gaps
 * between them and the rest of the line), so it is seen on any terminal. */
static void draw_row(const ui_table *t, ui_canvas *c, int y, int x0, int width,
                     const ui_table_row *row, bool cursor, const int *widths)
{
    ui_style plain = {0, UI_COLOR_DEFAULT};
    ui_style bar = {UI_ATTR_REVERSE, UI_COLOR_CURSOR};
    ui_style base = cursor ? bar : plain;
    bool marked = ui_table_is_marked(t, row->key);
    ui_style cell = marked ? (ui_style){UI_ATTR_BOLD, UI_COLOR_MARK} : plain;
    if (cursor)
        cell.attr = (uint8_t)(cell.attr | UI_ATTR_REVERSE);
    ui_canvas_clear(c, y, x0, width, base);
    ui_canvas_text(c, y, x0, 1, cursor ? (c->ascii ? ">" : "\xe2\x96\xb6") : " ",
                   cursor ? (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_CURSOR} : plain,
                   false);
    ui_canvas_text(c, y, x0 + 1, 1, marked ? "*" : " ", cursor ? bar : cell, false);
    int x = x0 + 2;
    for (int i = 0; i < t->src->ncols; i++) {
        if (!widths[i])
            continue;
        ui_style s = cell;
        if (row->style_col < 0 || row->style_col == i) {
            s.color = marked ? cell.color : row->style.color;
            s.attr = (uint8_t)(s.attr | row->style.attr);
        }
        char cut[UI_TABLE_CELL_MAX + 8];
        const char *text = t->src->cols[i].cut_middle
                               ? cut_middle(c, row->cells[i], widths[i], cut, sizeof cut)
                               : row->cells[i];
        ui_canvas_text(c, y, x, widths[i], text, s, true);
        x += widths[i] + 1;
    }
}

void ui_table_draw(const ui_table *t, ui_canvas *c, ui_rect area)
{
    ui_style plain = {0, UI_COLOR_DEFAULT};
    ui_style title = {UI_ATTR_BOLD | UI_ATTR_UNDERLINE, UI_COLOR_DEFAULT};
    int widths[UI_TABLE_COLS_MAX];
    ui_table_layout(t, c, area.width, widths);
    ui_canvas_clear(c, area.y, area.x, area.width, plain);
    int x = area.x + 2;
    for (int i = 0; i < t->src->ncols; i++) {
        if (!widths[i])
            continue;
        ui_canvas_text(c, area.y, x, widths[i], t->src->cols[i].title, title, true);
        x += widths[i] + 1;
    }
    for (int r = 1; r < area.height; r++) {
        int y = area.y + r;
        size_t i = (size_t)(r - 1);
        if (i < t->nrows) {
            draw_row(t, c, y, area.x, area.width, &t->rows[i], i == t->cursor, widths);
            continue;
        }
        ui_canvas_clear(c, y, area.x, area.width, plain);
        if (r == 1 && t->error.code)
            ui_canvas_text(c, y, area.x + 2, area.width - 2, t->error.msg,
                           (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}, true);
        else if (r == 1)
            ui_canvas_text(c, y, area.x + 2, area.width - 2,
                           t->filter[0] || ui_table_scoped(t) ? "(no rows match)" : "(no rows)",
                           (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT}, true);
    }
}
