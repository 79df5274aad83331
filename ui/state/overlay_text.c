/*
 * The generic overlays (ui_overlays.h): a scrollable text box (details, help) and
 * a pick list (the policy picker). Each lays itself out before a frame (where the
 * box goes, how many lines fit, where the scroll stops) and then draws from that,
 * into the canvas only.
 */
#include "ui_overlays.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../widgets/ui_text.h"
#include "rampart/buf.h"

static const ui_style box_style = {0, UI_COLOR_DEFAULT};
static const ui_style title_style = {UI_ATTR_BOLD | UI_ATTR_REVERSE, UI_COLOR_TITLE};

/* ---- shared ------------------------------------------------------------------ */

/* The box of an overlay inside `area`: `want_w` x `want_h` at most, centred; the
 * whole width when it would leave a column or less each side (slivers of the
 * rows behind read as stray characters). */
static ui_rect centre(ui_rect area, int want_w, int want_h)
{
    int w = want_w < area.width - 2 ? want_w : area.width;
    int h = want_h < area.height ? want_h : area.height;
    if (w < 10)
        w = area.width;
    return (ui_rect){area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h};
}

static void draw_frame(ui_canvas *c, ui_rect r, const char *title, const char *footer)
{
    ui_canvas_box(c, r, box_style);
    char t[160];
    snprintf(t, sizeof t, " %s ", title);
    ui_canvas_text(c, r.y, r.x + 2, r.width - 4, t, title_style, true);
    if (footer)
        ui_canvas_text(c, r.y + r.height - 1, r.x + 2, r.width - 4, footer,
                       (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT}, true);
}

/* Scroll position after a request over `n` lines with `page` of them shown. */
static size_t scroll_by(ui_request req, size_t pos, size_t n, size_t page)
{
    size_t last = n > page ? n - page : 0;
    switch (req) {
    case UI_REQ_DOWN: pos++; break;
    case UI_REQ_UP: pos = pos ? pos - 1 : 0; break;
    case UI_REQ_PAGE_DOWN:
    case UI_REQ_HALF_DOWN: pos += req == UI_REQ_PAGE_DOWN ? page : page / 2 + 1; break;
    case UI_REQ_PAGE_UP:
    case UI_REQ_HALF_UP: {
        size_t step = req == UI_REQ_PAGE_UP ? page : page / 2 + 1;
        pos = pos > step ? pos - step : 0;
        break;
    }
    case UI_REQ_FIRST: pos = 0; break;
    case UI_REQ_LAST: pos = last; break;
    default: break;
    }
    return pos > last ? last : pos;
}

/* ---- text box ---------------------------------------------------------------- */

typedef struct text_line {
    char *label;
    char *value;
} text_line;

struct ui_text_overlay {
    char title[128];
    text_line *lines;
    size_t n, cap;
    size_t top;       /* first visual line shown */
    size_t visual;    /* visual lines at the last layout */
    size_t page;      /* rows shown at the last layout */
    int label_w;
    ui_rect box, inner; /* where the last layout put it */
    int vw;           /* columns of a value */
};

error_code ui_text_overlay_new(const char *title, ui_text_overlay **out, error_info *err)
{
    ui_text_overlay *o = calloc(1, sizeof *o);
    if (!o)
        return error_set(err, ERROR_NOMEM, "out of memory");
    snprintf(o->title, sizeof o->title, "%s", title);
    *out = o;
    return ERROR_OK;
}

error_code ui_text_overlay_add(ui_text_overlay *o, const char *label, const char *value,
                               error_info *err)
{
    // NOLINTNEXTLINE(clang-analyzer-core.NullDereference): callers pass a made overlay
    if (!buf_grow_array((void **)&o->lines, &o->cap, o->n + 1, sizeof *o->lines))
        return error_set(err, ERROR_NOMEM, "out of memory");
    text_line *l = &o->lines[o->n];
    l->label = strdup(label ? label : "");
    l->value = strdup(value ? value : "");
    if (!l->label || !l->value) {
        free(l->label);
        free(l->value);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    int w = (int)strlen(l->label);
    if (w > o->label_w)
        o->label_w = w > 24 ? 24 : w;
    o->n++;
    return ERROR_OK;
}

void ui_text_overlay_free(ui_text_overlay *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->lines[i].label);
        free(o->lines[i].value);
    }
    free(o->lines);
    free(o);
}

/* Bytes of `s` up to a line break that fit in `width` columns (at least one char). */
static size_t chunk(const ui_canvas *c, const char *s, int width)
{
    size_t i = 0;
    int w = 0;
    while (s[i] && s[i] != '\n') {
        size_t n;
        int cw = ui_canvas_char_width(c, s + i, &n);
        if (w + cw > width && i > 0)
            break;
        w += cw;
        i += n;
    }
    return i;
}

/* Count the visual lines (values wrapped to `vw` columns). */
static size_t count_lines(const ui_text_overlay *o, const ui_canvas *c, int vw)
{
    size_t v = 0;
    for (size_t i = 0; i < o->n; i++) {
        const char *s = o->lines[i].value;
        do {
            s += chunk(c, s, vw);
            if (*s == '\n')
                s++;
            v++;
        } while (*s);
    }
    return v;
}

/* One visual line at row y: the label on a value's first line, then its part. */
static void draw_part(const ui_text_overlay *o, ui_canvas *c, int y, const text_line *l,
                      bool first, const char *s, size_t len)
{
    char part[UI_PROMPT_MAX + 1];
    size_t n = len < sizeof part - 1 ? len : ui_text_prefix(s, sizeof part - 1);
    memcpy(part, s, n);
    part[n] = '\0';
    if (first && o->label_w)
        ui_canvas_text(c, y, o->inner.x, o->label_w, l->label,
                       (ui_style){UI_ATTR_BOLD, UI_COLOR_DEFAULT}, true);
    ui_canvas_text(c, y, o->inner.x + (o->label_w ? o->label_w + 2 : 0), o->vw, part,
                   box_style, false);
}

/* Draw the visual lines in view. */
static void draw_lines(const ui_text_overlay *o, ui_canvas *c)
{
    size_t v = 0;
    for (size_t i = 0; i < o->n; i++) {
        const char *s = o->lines[i].value;
        bool first = true;
        do {
            size_t len = chunk(c, s, o->vw);
            if (v >= o->top && v < o->top + (size_t)o->inner.height)
                draw_part(o, c, o->inner.y + (int)(v - o->top), &o->lines[i], first, s, len);
            v++;
            first = false;
            s += len;
            if (*s == '\n')
                s++;
        } while (*s);
    }
}

/* The box: as tall as the lines when they fit, the whole height otherwise; the
 * scroll position kept inside the lines. */
static void text_layout(void *self, const ui_canvas *c, ui_rect area)
{
    ui_text_overlay *o = self;
    o->box = centre(area, 100, area.height);
    o->inner = (ui_rect){o->box.x + 2, o->box.y + 1, o->box.width - 4, o->box.height - 2};
    o->vw = o->inner.width - (o->label_w ? o->label_w + 2 : 0);
    if (o->vw < 8)
        o->vw = 8;
    o->visual = count_lines(o, c, o->vw);
    o->page = (size_t)(o->inner.height > 0 ? o->inner.height : 1);
    if (o->visual <= o->page) {
        o->box = centre(area, 100, (int)o->visual + 2);
        o->inner.y = o->box.y + 1;
        o->inner.height = o->box.height - 2;
    }
    if (o->top + o->page > o->visual)
        o->top = o->visual > o->page ? o->visual - o->page : 0;
}

static void text_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    (void)area;
    const ui_text_overlay *o = self;
    char footer[64];
    if (o->visual > o->page)
        snprintf(footer, sizeof footer, " %zu-%zu of %zu  q closes ", o->top + 1,
                 o->top + o->page, o->visual);
    else
        snprintf(footer, sizeof footer, " q closes ");
    draw_frame(c, o->box, o->title, footer);
    draw_lines(o, c);
}

static ui_overlay_result text_key(void *self, ui_app *app, int key, ui_request req)
{
    (void)app;
    ui_text_overlay *o = self;
    if (key == UI_KEY_ESC || key == UI_KEY_ENTER || key == 'q' || req == UI_REQ_HELP)
        return UI_OVERLAY_CLOSE;
    if (req == UI_REQ_QUIT) {
        ui_app_quit(app, 0);
        return UI_OVERLAY_CLOSE;
    }
    o->top = scroll_by(req, o->top, o->visual, o->page);
    return UI_OVERLAY_KEEP;
}

static void text_free(void *self)
{
    ui_text_overlay_free(self);
}

static const ui_overlay_ops text_ops = {"text",   text_layout, text_draw, text_key,
                                        text_free, NULL};

void ui_text_overlay_push(ui_app *app, ui_text_overlay *o)
{
    error_info e = {0};
    if (ui_app_push(app, &text_ops, o, &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
}

/* ---- pick list ------------------------------------------------------------------- */

typedef struct pick {
    char title[96];
    char **items;
    size_t n;
    size_t cursor, top, page;
    ui_rect box;      /* where the last layout put it */
    ui_pick_fn fn;
    void *ctx;
    bool done;
} pick;

/* As wide as the widest item, as tall as the items; the cursor kept in view. */
static void pick_layout(void *self, const ui_canvas *c, ui_rect area)
{
    pick *p = self;
    int want_w = 24;
    for (size_t i = 0; i < p->n; i++) {
        int w = ui_canvas_width(c, p->items[i], 200) + 6;
        if (w > want_w)
            want_w = w;
    }
    p->box = centre(area, want_w, (int)p->n + 2);
    p->page = (size_t)(p->box.height > 2 ? p->box.height - 2 : 1);
    if (p->cursor < p->top)
        p->top = p->cursor;
    if (p->cursor >= p->top + p->page)
        p->top = p->cursor - p->page + 1;
}

static void pick_draw(const void *self, const ui_app *app, ui_canvas *c, ui_rect area)
{
    (void)app;
    (void)area;
    const pick *p = self;
    ui_rect r = p->box;
    draw_frame(c, r, p->title, " Enter picks  Esc cancels ");
    for (size_t i = 0; i < p->page && p->top + i < p->n; i++) {
        size_t at = p->top + i;
        bool cur = at == p->cursor;
        int y = r.y + 1 + (int)i;
        ui_style s = cur ? (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_CURSOR} : box_style;
        ui_canvas_text(c, y, r.x + 1, 2, cur ? "> " : "  ", s, false);
        ui_canvas_text(c, y, r.x + 3, r.width - 4, p->items[at], s, true);
    }
}

static ui_overlay_result pick_key(void *self, ui_app *app, int key, ui_request req)
{
    pick *p = self;
    if (key == UI_KEY_ESC || key == 'q') {
        p->done = true;
        p->fn(app, p->ctx, -1, NULL);
        return UI_OVERLAY_CLOSE;
    }
    if (key == UI_KEY_ENTER) {
        p->done = true;
        p->fn(app, p->ctx, (int)p->cursor, p->items[p->cursor]);
        return UI_OVERLAY_CLOSE;
    }
    size_t last = p->n ? p->n - 1 : 0;
    switch (req) {
    case UI_REQ_DOWN: p->cursor = p->cursor < last ? p->cursor + 1 : last; break;
    case UI_REQ_UP: p->cursor = p->cursor ? p->cursor - 1 : 0; break;
    case UI_REQ_PAGE_DOWN:
        p->cursor = p->cursor + p->page < last ? p->cursor + p->page : last;
        break;
    case UI_REQ_PAGE_UP: p->cursor = p->cursor > p->page ? p->cursor - p->page : 0; break;
    case UI_REQ_FIRST: p->cursor = 0; break;
    case UI_REQ_LAST: p->cursor = last; break;
    default: break;
    }
    return UI_OVERLAY_KEEP;
}

static void pick_free(void *self)
{
    pick *p = self;
    if (!p->done)
        p->fn(NULL, p->ctx, -1, NULL);
    for (size_t i = 0; i < p->n; i++)
        free(p->items[i]);
    free(p->items);
    free(p);
}

static const ui_overlay_ops pick_ops = {"pick",   pick_layout, pick_draw, pick_key,
                                        pick_free, NULL};

error_code ui_pick_open(ui_app *app, const char *title, const char *const *items,
                        size_t count, ui_pick_fn fn, void *ctx, error_info *err)
{
    pick *p = calloc(1, sizeof *p);
    if (!p || !(p->items = calloc(count ? count : 1, sizeof *p->items))) {
        free(p);
        fn(app, ctx, -1, NULL);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    snprintf(p->title, sizeof p->title, "%s", title);
    p->fn = fn;
    p->ctx = ctx;
    for (size_t i = 0; i < count; i++) {
        if (!(p->items[p->n] = strdup(items[i]))) {
            pick_free(p);
            return error_set(err, ERROR_NOMEM, "out of memory");
        }
        p->n++;
    }
    return ui_app_push(app, &pick_ops, p, err); /* frees p (calling fn) on failure */
}
