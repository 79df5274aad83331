/*
 * Drawing a form (ui_form_draw): a centred box, one row per field (a LIST has a
 * row per line), the reason under its field, the focused field's hint, then the
 * form's message and the keys. The rows are laid out twice: once to find where
 * the focused field is, once to draw the window of rows that keeps it on screen.
 */
#include <stdio.h>
#include <string.h>

#include "rampart/ui_form.h"
#include "ui_text.h"

enum { LABEL_W = 14, BOX_MAX_W = 78, BOX_MIN_W = 30 };

static const ui_style plain = {UI_ATTR_NONE, UI_COLOR_DEFAULT};
static const ui_style label_focus = {UI_ATTR_BOLD, UI_COLOR_DEFAULT};
static const ui_style value_style = {UI_ATTR_UNDERLINE, UI_COLOR_DEFAULT};
static const ui_style cursor_style = {UI_ATTR_REVERSE, UI_COLOR_CURSOR};
static const ui_style error_style = {UI_ATTR_BOLD, UI_COLOR_ERROR};
static const ui_style hint_style = {UI_ATTR_DIM, UI_COLOR_DEFAULT};
static const ui_style title_style = {UI_ATTR_BOLD, UI_COLOR_TITLE};

/* Where rows go: row `n` of the layout lands on screen row top + n - first, when
 * it is inside [first, first + visible). With draw false only counts. */
typedef struct painter {
    ui_canvas *c;
    bool draw;
    int top, first, visible;
    int row;        /* rows laid out so far */
    int focus_row;  /* the focused row, once seen */
    int x, width;   /* inner left edge and width of the box */
} painter;

/* Screen row of the next layout row, or -1 when it is off the window. */
static int next_row(painter *p)
{
    int n = p->row++;
    if (!p->draw || n < p->first || n >= p->first + p->visible)
        return -1;
    return p->top + n - p->first;
}

/* Display width of one character as the canvas draws it, and its length. */
static int char_width(const ui_canvas *c, const char *s, size_t *len)
{
    return ui_canvas_char_width(c, s, len);
}

/* The first byte to show so the cursor stays inside `width` columns. */
static size_t scroll_start(const ui_canvas *c, const char *text, size_t cursor, int width)
{
    int used = 0;
    for (size_t at = 0; at < cursor;) {
        size_t len;
        used += char_width(c, text + at, &len);
        at += len;
    }
    size_t start = 0;
    for (int need = used - (width - 1); need > 0 && start < cursor;) {
        size_t len;
        need -= char_width(c, text + start, &len);
        start += len;
    }
    return start;
}

/* A value cell row: text in an underlined area, the cursor in reverse video. */
static void draw_value(painter *p, int y, const char *text, size_t cursor, bool focused)
{
    int x = p->x + LABEL_W, w = p->width - LABEL_W;
    if (y < 0 || w < 2)
        return;
    size_t start = focused ? scroll_start(p->c, text, cursor, w) : 0;
    ui_canvas_clear(p->c, y, x, w, value_style);
    ui_canvas_text(p->c, y, x, w, text + start, value_style, !focused);
    if (!focused)
        return;
    int col = 0;
    for (size_t at = start; at < cursor;) {
        size_t len;
        col += char_width(p->c, text + at, &len);
        at += len;
    }
    char under[5] = " ";
    int under_w = 1;
    if (text[cursor]) {
        size_t len;
        under_w = char_width(p->c, text + cursor, &len);
        memcpy(under, text + cursor, len);
        under[len] = '\0';
    }
    /* The whole character under the cursor: an escape ("\x1b") is several columns. */
    ui_canvas_text(p->c, y, x + col, under_w, under, cursor_style, false);
}

/* A read-only value: plain text (no editing underline), then a dim "(read-only)"
 * on the field's first row, so it shows without colour or attributes. */
static void draw_fixed(painter *p, int y, const char *text, bool first)
{
    int x = p->x + LABEL_W, w = p->width - LABEL_W;
    if (y < 0 || w < 2)
        return;
    ui_canvas_clear(p->c, y, x, w, plain);
    int used = ui_canvas_text(p->c, y, x, w, text, plain, true);
    if (first && used + 2 < w)
        ui_canvas_text(p->c, y, x + used + 2, w - used - 2, "(read-only)", hint_style, true);
}

static void draw_label(painter *p, int y, const char *label, bool focused)
{
    if (y < 0)
        return;
    ui_canvas_text(p->c, y, p->x - 2, 1, focused ? ">" : " ", label_focus, false);
    ui_canvas_text(p->c, y, p->x, LABEL_W - 1, label, focused ? label_focus : plain, true);
}

/* A reason under its value: "! reason", wrapped onto up to three rows. */
static void lay_error(painter *p, const char *reason)
{
    int w = p->width - LABEL_W;
    if (w < 4)
        return;
    const char *s = reason;
    for (int line = 0; line < 3 && *s; line++) {
        int y = next_row(p);
        char buf[ERROR_MSG_MAX + 4];
        snprintf(buf, sizeof buf, "%s%s", line == 0 ? "! " : "  ", s);
        /* Cut at the last space that fits (a whole word per row where possible). */
        size_t fit = 0, last_space = 0;
        int used = 0;
        while (buf[fit]) {
            size_t len;
            int cw = char_width(p->c, buf + fit, &len);
            if (used + cw > w)
                break;
            used += cw;
            if (buf[fit] == ' ' && fit > 2)
                last_space = fit;
            fit += len;
        }
        bool last = !buf[fit] || line == 2;
        if (!last && last_space)
            fit = last_space + 1;
        if (!last)
            buf[fit] = '\0';
        if (y >= 0)
            ui_canvas_text(p->c, y, p->x + LABEL_W, w, buf, error_style, last);
        s += strlen(buf) - 2;
        while (*s == ' ')
            s++;
    }
}

static void lay_hint(painter *p, const char *hint)
{
    int y = next_row(p);
    if (y >= 0)
        ui_canvas_text(p->c, y, p->x + LABEL_W, p->width - LABEL_W, hint, hint_style, true);
}

/* Every option with a mark, so the choice shows without colour or attributes. */
static void lay_choice(painter *p, const ui_form *f, size_t i, int y)
{
    if (y < 0)
        return;
    const char *on = p->c->ascii ? "(*) " : "(\xe2\x80\xa2) ";
    bool focused = ui_form_focus(f) == i;
    int x = p->x + LABEL_W, end = p->x + p->width;
    for (size_t o = 0; o < ui_form_options(f, i) && x < end; o++) {
        bool chosen = o == ui_form_choice(f, i);
        ui_style st = chosen && focused ? cursor_style : chosen ? label_focus : plain;
        x += ui_canvas_text(p->c, y, x, end - x, chosen ? on : "( ) ", plain, false);
        x += ui_canvas_text(p->c, y, x, end - x, ui_form_option(f, i, o), st, false);
        x += 2;
    }
}

/* A read-only field: its value (a LIST a row per non-empty line), never focused
 * unless nothing else is editable. */
static void lay_fixed(painter *p, const ui_form *f, size_t i)
{
    bool focused = ui_form_focus(f) == i;
    if (focused)
        p->focus_row = p->row;
    if (ui_form_field_kind(f, i) != UI_FORM_LIST) {
        int y = next_row(p);
        draw_label(p, y, ui_form_label(f, i), focused);
        draw_fixed(p, y, ui_form_text(f, i), true);
    } else {
        size_t shown = 0;
        for (size_t l = 0; l < ui_form_lines(f, i); l++) {
            const char *line = ui_form_line(f, i, l);
            if (!line[0])
                continue;
            int y = next_row(p);
            draw_label(p, y, shown == 0 ? ui_form_label(f, i) : "", focused);
            draw_fixed(p, y, line, shown++ == 0);
        }
        if (shown == 0) {
            int y = next_row(p);
            draw_label(p, y, ui_form_label(f, i), focused);
            draw_fixed(p, y, "(none)", true);
        }
    }
    if (ui_form_shows_error(f, i))
        lay_error(p, ui_form_error(f, i));
}

static void lay_field(painter *p, const ui_form *f, size_t i)
{
    if (ui_form_readonly(f, i)) {
        lay_fixed(p, f, i);
        return;
    }
    bool focused = ui_form_focus(f) == i;
    ui_form_kind kind = ui_form_field_kind(f, i);
    if (kind == UI_FORM_LIST) {
        size_t n = ui_form_lines(f, i), lf = ui_form_line_focus(f, i);
        bool any_line_error = false;
        for (size_t l = 0; l < n; l++) {
            if (focused && l == lf)
                p->focus_row = p->row;
            int y = next_row(p);
            draw_label(p, y, l == 0 ? ui_form_label(f, i) : "", focused && l == lf);
            draw_value(p, y, ui_form_line(f, i, l),
                       focused && l == lf ? ui_form_cursor(f, i) : 0, focused && l == lf);
            const char *reason = ui_form_line_error(f, i, l);
            if (reason[0]) {
                any_line_error = true;
                if (ui_form_shows_error(f, i))
                    lay_error(p, reason);
            }
        }
        if (!any_line_error && ui_form_shows_error(f, i))
            lay_error(p, ui_form_error(f, i));
    } else {
        if (focused)
            p->focus_row = p->row;
        int y = next_row(p);
        draw_label(p, y, ui_form_label(f, i), focused);
        if (kind == UI_FORM_CHOICE)
            lay_choice(p, f, i, y);
        else
            draw_value(p, y, ui_form_text(f, i), ui_form_cursor(f, i), focused);
        if (ui_form_shows_error(f, i))
            lay_error(p, ui_form_error(f, i));
    }
    if (focused && ui_form_hint(f, i)[0])
        lay_hint(p, ui_form_hint(f, i));
}

static void lay_fields(painter *p, const ui_form *f)
{
    for (size_t i = 0; i < ui_form_count(f); i++)
        lay_field(p, f, i);
}

void ui_form_draw(const ui_form *f, ui_canvas *c, ui_rect area)
{
    /* The whole width rather than a one-column sliver of the rows behind. */
    int box_w = area.width - 2 <= BOX_MAX_W ? area.width : BOX_MAX_W;
    if (box_w < BOX_MIN_W)
        box_w = area.width;
    painter p = {.c = c, .x = 0, .width = box_w - 6, .focus_row = 0};
    lay_fields(&p, f);
    int rows = p.row, focus = p.focus_row;
    bool has_msg = ui_form_message(f)[0] != '\0';
    int footer = 2 + (has_msg ? 1 : 0); /* blank, [message], keys */
    int box_h = rows + footer + 2;
    if (box_h > area.height)
        box_h = area.height;
    int visible = box_h - 2 - footer;
    if (visible < 1)
        visible = 1;
    int first = focus >= visible ? focus - visible + 1 : 0;
    ui_rect box = {area.x + (area.width - box_w) / 2, area.y + (area.height - box_h) / 2,
                   box_w, box_h};
    ui_canvas_box(c, box, plain);
    char title[128];
    snprintf(title, sizeof title, " %s ", ui_form_title(f));
    ui_canvas_text(c, box.y, box.x + 2, box_w - 4, title, title_style, true);
    p = (painter){.c = c, .draw = true, .top = box.y + 1, .first = first,
                  .visible = visible, .x = box.x + 4, .width = box_w - 6};
    lay_fields(&p, f);
    if (first > 0 || rows > first + visible) {
        char more[32];
        snprintf(more, sizeof more, " %d-%d of %d ", first + 1,
                 first + visible < rows ? first + visible : rows, rows);
        ui_canvas_text(c, box.y + box_h - 1, box.x + box_w - 2 - (int)strlen(more), -1,
                       more, hint_style, false);
    }
    int keys_y = box.y + box_h - 2;
    if (has_msg) {
        char msg[ERROR_MSG_MAX + 4];
        snprintf(msg, sizeof msg, "! %s", ui_form_message(f));
        ui_canvas_text(c, keys_y - 1, p.x, p.width, msg, error_style, true);
    }
    const char *keys = c->ascii ? "Enter save | Tab next field | Esc cancel"
                                : "Enter save \xc2\xb7 Tab next field \xc2\xb7 Esc cancel";
    ui_canvas_text(c, keys_y, p.x, p.width, keys, hint_style, true);
}
