/*
 * ui_canvas: the screen as cells. Text is drawn as termsafe shows it (the one
 * writer of terminal text, shared with the command line): widths come from its
 * built-in table rather than the locale's wcwidth, so a headless dump is the same
 * on every machine, and what must not reach a terminal as is (controls, bidi,
 * zero-width characters, bytes that are not UTF-8) is drawn as its escape. The
 * terminal layer draws a '?' where the terminal's own idea of a width differs.
 */
#include "rampart/ui_canvas.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/termsafe.h"
#include "rampart/utf8.h"

static const ui_style plain = {0, UI_COLOR_DEFAULT};

error_code ui_canvas_init(ui_canvas *c, int width, int height, bool ascii, error_info *err)
{
    memset(c, 0, sizeof *c);
    c->ascii = ascii;
    return ui_canvas_resize(c, width, height, err);
}

error_code ui_canvas_resize(ui_canvas *c, int width, int height, error_info *err)
{
    if (width < 1 || height < 1)
        return error_set(err, ERROR_INVALID, "screen size %dx%d is too small", width, height);
    size_t n = (size_t)width * (size_t)height;
    ui_cell *cells = calloc(n, sizeof *cells);
    bool *changed = calloc((size_t)height, sizeof *changed);
    if (!cells || !changed) {
        free(cells);
        free(changed);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    free(c->cells);
    free(c->row_changed);
    c->cells = cells;
    c->row_changed = changed;
    c->width = width;
    c->height = height;
    for (int y = 0; y < height; y++)
        ui_canvas_clear(c, y, 0, -1, plain);
    return ERROR_OK;
}

void ui_canvas_free(ui_canvas *c)
{
    if (!c)
        return;
    free(c->cells);
    free(c->row_changed);
    memset(c, 0, sizeof *c);
}

static ui_cell *cell_at(ui_canvas *c, int y, int x)
{
    return &c->cells[(size_t)y * (size_t)c->width + (size_t)x];
}

static bool style_eq(ui_style a, ui_style b)
{
    return a.attr == b.attr && a.color == b.color;
}

/* Write one cell; the row is flagged only when something differs, so redrawing
 * the same content costs the terminal nothing. */
static void put_cell(ui_canvas *c, int y, int x, const char *text, size_t len,
                     ui_style style)
{
    ui_cell *cell = cell_at(c, y, x);
    if (strlen(cell->text) == len && memcmp(cell->text, text, len) == 0 &&
        style_eq(cell->style, style))
        return;
    memcpy(cell->text, text, len);
    cell->text[len] = '\0';
    cell->style = style;
    c->row_changed[y] = true;
}

/* A wide character cut in half by a write: its other half becomes a space. */
static void repair_edges(ui_canvas *c, int y, int x0, int x1)
{
    if (x0 > 0 && x0 < c->width && cell_at(c, y, x0)->text[0] == '\0')
        put_cell(c, y, x0 - 1, " ", 1, cell_at(c, y, x0 - 1)->style);
    if (x1 < c->width && cell_at(c, y, x1)->text[0] == '\0')
        put_cell(c, y, x1, " ", 1, cell_at(c, y, x1)->style);
}

void ui_canvas_clear(ui_canvas *c, int y, int x, int width, ui_style style)
{
    if (y < 0 || y >= c->height)
        return;
    int end = width < 0 ? c->width : x + width;
    if (x < 0)
        x = 0;
    if (end > c->width)
        end = c->width;
    if (x >= end)
        return;
    repair_edges(c, y, x, end);
    for (int i = x; i < end; i++)
        put_cell(c, y, i, " ", 1, style);
}

/* The next character of `s` as the canvas draws it: termsafe's glyph (its own
 * bytes, or its escape: one cell per character of it), '?' for a character
 * beyond ASCII in ASCII mode. */
typedef struct glyph {
    termsafe_glyph shown;
    size_t consumed;
} glyph;

static glyph next_glyph(const ui_canvas *c, const char *s)
{
    glyph g;
    g.consumed = termsafe_next(s, strnlen(s, UTF8_SEQ_MAX), &g.shown);
    if (c->ascii && !g.shown.escaped && (unsigned char)g.shown.text[0] >= 0x80)
        g.shown = (termsafe_glyph){.text = "?", .len = 1, .width = 1};
    return g;
}

int ui_canvas_char_width(const ui_canvas *c, const char *s, size_t *len)
{
    glyph g = next_glyph(c, s);
    *len = g.consumed;
    return g.shown.width;
}

int ui_canvas_width(const ui_canvas *c, const char *text, int max)
{
    int w = 0;
    while (text && *text && w < max) {
        glyph g = next_glyph(c, text);
        w += g.shown.width;
        text += g.consumed;
    }
    return w < max ? w : max;
}

static const char *ellipsis_text(const ui_canvas *c)
{
    return c->ascii ? "~" : "\xe2\x80\xa6";
}

/* Draw the first `cols` columns of one glyph at x (cells left of the screen are
 * skipped): an escape a character a cell, a wide character in two. */
static void put_glyph(ui_canvas *c, int y, int x, const glyph *g, int cols, ui_style style)
{
    const termsafe_glyph *t = &g->shown;
    if (t->escaped) {
        for (int i = 0; i < cols; i++) {
            if (x + i >= 0)
                put_cell(c, y, x + i, t->text + i, 1, style);
        }
        return;
    }
    if (x >= 0) {
        put_cell(c, y, x, t->text, t->len, style);
        if (t->width == 2 && x + 1 < c->width)
            put_cell(c, y, x + 1, "", 0, style);
    } else if (x + t->width > 0) {
        put_cell(c, y, 0, " ", 1, style); /* the right half of a cut wide char */
    }
}

int ui_canvas_text(ui_canvas *c, int y, int x, int max_width, const char *text,
                   ui_style style, bool ellipsis)
{
    if (y < 0 || y >= c->height || !text)
        return 0;
    int end = max_width < 0 ? c->width : x + max_width;
    if (end > c->width)
        end = c->width;
    if (x >= end)
        return 0;
    int start = x;
    repair_edges(c, y, start < 0 ? 0 : start, end);
    bool cut = ellipsis && ui_canvas_width(c, text, end - x + 1) > end - x;
    int limit = cut ? end - 1 : end;
    while (*text) {
        glyph g = next_glyph(c, text);
        if (x + g.shown.width > limit) {
            /* What fits of an escape; a space for a wide character. */
            int room = limit - x;
            if (room > 0 && g.shown.escaped)
                put_glyph(c, y, x, &g, room, style);
            else if (room > 0 && x >= 0)
                put_cell(c, y, x, " ", 1, style);
            x += room > 0 ? (g.shown.escaped ? room : 1) : 0;
            break;
        }
        put_glyph(c, y, x, &g, g.shown.width, style);
        x += g.shown.width;
        text += g.consumed;
    }
    if (cut) {
        if (x >= 0)
            put_cell(c, y, x, ellipsis_text(c), strlen(ellipsis_text(c)), style);
        x++;
    }
    return x - start;
}

size_t ui_canvas_wrap(const ui_canvas *c, const char *text, int width)
{
    size_t at = 0, space = 0;
    int used = 0, space_used = 0;
    while (text[at]) {
        glyph g = next_glyph(c, text + at);
        if (used + g.shown.width > width && at > 0)
            break;
        used += g.shown.width;
        at += g.consumed;
        if (text[at - 1] == ' ') {
            space = at;
            space_used = used;
        }
    }
    if (!text[at] || space == 0 || space_used * 2 < width)
        return at;
    return space;
}

int ui_canvas_printf(ui_canvas *c, int y, int x, ui_style style, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ui_canvas_text(c, y, x, -1, buf, style, false);
}

void ui_canvas_box(ui_canvas *c, ui_rect r, ui_style style)
{
    if (r.width < 2 || r.height < 2)
        return;
    bool a = c->ascii;
    const char *h = a ? "-" : "\xe2\x94\x80", *v = a ? "|" : "\xe2\x94\x82";
    const char *tl = a ? "+" : "\xe2\x94\x8c", *tr = a ? "+" : "\xe2\x94\x90";
    const char *bl = a ? "+" : "\xe2\x94\x94", *br = a ? "+" : "\xe2\x94\x98";
    int right = r.x + r.width - 1, bottom = r.y + r.height - 1;
    for (int y = r.y; y <= bottom; y++) {
        if (y < 0 || y >= c->height)
            continue;
        bool edge = y == r.y || y == bottom;
        ui_canvas_clear(c, y, r.x, r.width, style);
        for (int x = r.x; x <= right; x++) {
            const char *t = NULL;
            if (edge)
                t = x == r.x ? (y == r.y ? tl : bl) : x == right ? (y == r.y ? tr : br) : h;
            else if (x == r.x || x == right)
                t = v;
            if (t && x >= 0 && x < c->width)
                put_cell(c, y, x, t, strlen(t), style);
        }
    }
}

size_t ui_canvas_row_text(const ui_canvas *c, int y, char *buf, size_t size)
{
    if (size == 0)
        return 0;
    buf[0] = '\0';
    if (y < 0 || y >= c->height)
        return 0;
    size_t len = 0, keep = 0;
    for (int x = 0; x < c->width; x++) {
        const char *t = c->cells[(size_t)y * (size_t)c->width + (size_t)x].text;
        size_t n = strlen(t);
        if (len + n + 1 > size)
            break;
        memcpy(buf + len, t, n);
        len += n;
        if (n && strcmp(t, " ") != 0)
            keep = len;
    }
    buf[keep] = '\0';
    return keep;
}

void ui_canvas_dump(const ui_canvas *c, FILE *out)
{
    size_t size = (size_t)c->width * 4 + 1;
    char *buf = malloc(size);
    if (!buf)
        return;
    for (int y = 0; y < c->height; y++) {
        ui_canvas_row_text(c, y, buf, size);
        fprintf(out, "%s\n", buf);
    }
    fputs("----\n", out);
    free(buf);
}
