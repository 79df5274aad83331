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

/* Column widths for `avail` columns: minimums in order while they fit, then the
 * rest to bounded columns in order, then to the first open-ended one. */
static int layout(const ui_table_source *src, int avail, int *widths)
{
    int used = 0, n = 0;
    for (int i = 0; i < src->ncols; i++) {
        int need = src->cols[i].min_width + (n ? 1 : 0);
        if (used + need > avail)
            break;
        widths[n++] = src->cols[i].min_width;
        used += need;
    }
    int extra = avail - used;
    for (int i = 0; i < n && extra > 0; i++) {
        int max = src->cols[i].max_width;
        if (max <= 0 || widths[i] >= max)
            continue;
        int add = max - widths[i] < extra ? max - widths[i] : extra;
        widths[i] += add;
        extra -= add;
    }
    for (int i = 0; i < n && extra > 0; i++) {
        if (src->cols[i].max_width <= 0) {
            widths[i] += extra;
            extra = 0;
        }
    }
    return n;
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

static void draw_row(const ui_table *t, ui_canvas *c, int y, int x0, int width,
                     const ui_table_row *row, bool cursor, const int *widths, int n)
{
    ui_style plain = {0, UI_COLOR_DEFAULT};
    bool marked = ui_table_is_marked(t, row->key);
    ui_style cell = marked ? (ui_style){UI_ATTR_BOLD, UI_COLOR_MARK} : plain;
    ui_canvas_clear(c, y, x0, width, plain);
    ui_canvas_text(c, y, x0, 1, cursor ? (c->ascii ? ">" : "\xe2\x96\xb6") : " ",
                   cursor ? (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_CURSOR} : plain,
                   false);
    ui_canvas_text(c, y, x0 + 1, 1, marked ? "*" : " ", cell, false);
    int x = x0 + 2;
    for (int i = 0; i < n; i++) {
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
    int n = layout(t->src, area.width - 2, widths);
    ui_canvas_clear(c, area.y, area.x, area.width, plain);
    int x = area.x + 2;
    for (int i = 0; i < n; i++) {
        ui_canvas_text(c, area.y, x, widths[i], t->src->cols[i].title, title, true);
        x += widths[i] + 1;
    }
    for (int r = 1; r < area.height; r++) {
        int y = area.y + r;
        size_t i = (size_t)(r - 1);
        if (i < t->nrows) {
            draw_row(t, c, y, area.x, area.width, &t->rows[i], i == t->cursor, widths, n);
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
