/*
 * The confirmation's and the choice's models and drawing (ui_dialog.h), and the
 * centred box every dialog is drawn in. No curses, no ui_app.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/model.h"
#include "rampart/ui_dialog.h"

enum { BOX_MAX_W = UI_DIALOG_MAX_W, BOX_MIN_W = 24, CONFIRM_LINES_MAX = 64 };

static const ui_style plain = {UI_ATTR_NONE, UI_COLOR_DEFAULT};
static const ui_style title_style = {UI_ATTR_BOLD, UI_COLOR_TITLE};
static const ui_style selected_style = {UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_CURSOR};

/* What both dialogs show above their buttons: a title and the body's lines. */
typedef struct dialog_text {
    char *title;
    char **lines; /* room for CONFIRM_LINES_MAX */
    size_t count;
} dialog_text;

/* False when out of memory (what was allocated is left for text_free). */
static bool text_init(dialog_text *t, const char *title)
{
    t->title = strdup(title);
    t->lines = calloc(CONFIRM_LINES_MAX, sizeof *t->lines);
    return t->title && t->lines;
}

static error_code text_add_line(dialog_text *t, const char *line, error_info *err)
{
    if (t->count == CONFIRM_LINES_MAX)
        return ERROR_OK; /* callers summarise long lists; more would not fit anyway */
    if (!(t->lines[t->count] = strdup(line)))
        return error_set(err, ERROR_NOMEM, "out of memory");
    t->count++;
    return ERROR_OK;
}

static void text_free(dialog_text *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->lines[i]);
    free(t->lines);
    free(t->title);
}

struct ui_confirm {
    dialog_text text;
    char *yes_label;
    bool yes;  /* the selected button; No at first */
};

/* ---- confirm ------------------------------------------------------------------ */

error_code ui_confirm_new(const char *title, const char *yes_label, ui_confirm **out,
                          error_info *err)
{
    *out = NULL;
    ui_confirm *d = calloc(1, sizeof *d);
    if (!d || !text_init(&d->text, title) || !(d->yes_label = strdup(yes_label))) {
        ui_confirm_free(d);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    *out = d;
    return ERROR_OK;
}

error_code ui_confirm_add_line(ui_confirm *d, const char *line, error_info *err)
{
    return text_add_line(&d->text, line, err);
}

void ui_confirm_free(ui_confirm *d)
{
    if (!d)
        return;
    text_free(&d->text);
    free(d->yes_label);
    free(d);
}

ui_answer ui_confirm_key(ui_confirm *d, int key)
{
    switch (key) {
    case 'y':
    case 'Y':
        return UI_ANSWER_YES;
    case 'n':
    case 'N':
    case 'q':
    case UI_KEY_ESC:
        return UI_ANSWER_NO;
    case UI_KEY_ENTER:
    case '\n':
        return d->yes ? UI_ANSWER_YES : UI_ANSWER_NO;
    case UI_KEY_LEFT:
    case UI_KEY_RIGHT:
    case UI_KEY_TAB:
    case UI_KEY_BTAB:
    case 'h':
    case 'l':
        d->yes = !d->yes;
        return UI_ANSWER_NONE;
    default:
        return UI_ANSWER_NONE;
    }
}

bool ui_confirm_yes_selected(const ui_confirm *d) { return d->yes; }

ui_rect ui_dialog_box(ui_canvas *c, ui_rect area, int want_w, int rows, const char *title)
{
    int w = want_w + 4;
    if (w > BOX_MAX_W)
        w = BOX_MAX_W;
    if (w < BOX_MIN_W)
        w = BOX_MIN_W;
    if (w >= area.width - 2)
        w = area.width; /* no one-column sliver of the rows behind */
    int h = rows + 2 > area.height ? area.height : rows + 2;
    ui_rect box = {area.x + (area.width - w) / 2, area.y + (area.height - h) / 2, w, h};
    ui_canvas_box(c, box, plain);
    char t[160];
    snprintf(t, sizeof t, " %s ", title);
    ui_canvas_text(c, box.y, box.x + 2, w - 4, t, title_style, true);
    return box;
}

static void draw_button(ui_canvas *c, int y, int x, const char *label, bool selected)
{
    char b[64];
    snprintf(b, sizeof b, selected ? ">[ %s ]<" : " [ %s ] ", label);
    ui_canvas_text(c, y, x, -1, b, selected ? selected_style : plain, false);
}

/* A dialog's box, wide enough for its title, its lines and `buttons_w`, with
 * the lines drawn (the last that fits says "…" when some do not): returns the
 * buttons' row; the box into *box. */
static int draw_text_box(ui_canvas *c, ui_rect area, const dialog_text *t, int buttons_w,
                         ui_rect *box)
{
    int want = ui_canvas_width(c, t->title, BOX_MAX_W) + 2;
    for (size_t i = 0; i < t->count; i++) {
        int w = ui_canvas_width(c, t->lines[i], BOX_MAX_W);
        if (w > want)
            want = w;
    }
    if (buttons_w > want)
        want = buttons_w;
    int rows = (int)t->count + 3; /* lines, blank, buttons, blank */
    *box = ui_dialog_box(c, area, want, rows, t->title);
    int x = box->x + 2, w = box->width - 4, bottom = box->y + box->height - 2;
    for (size_t i = 0; i < t->count; i++) {
        int y = box->y + 1 + (int)i;
        if (y > bottom - 2) {
            ui_canvas_text(c, y - 1 < box->y + 1 ? box->y + 1 : y - 1, x, w,
                           c->ascii ? "..." : "\xe2\x80\xa6", plain, false);
            break;
        }
        ui_canvas_text(c, y, x, w, t->lines[i], plain, true);
    }
    return bottom - 1 < box->y + 1 ? box->y + 1 : bottom - 1;
}

void ui_confirm_draw(const ui_confirm *d, ui_canvas *c, ui_rect area)
{
    ui_rect box;
    int by = draw_text_box(c, area, &d->text, 0, &box);
    int no_w = ui_canvas_width(c, "No", 8) + 6;
    int yes_w = ui_canvas_width(c, d->yes_label, 40) + 6;
    int bx = box.x + (box.width - no_w - yes_w - 2) / 2;
    draw_button(c, by, bx, "No", !d->yes);
    draw_button(c, by, bx + no_w + 1, d->yes_label, d->yes);
}

/* ---- choice -------------------------------------------------------------------- */

struct ui_choose {
    dialog_text text;
    char *buttons[UI_CHOOSE_BUTTONS_MAX];
    size_t nbuttons, selected;
};

error_code ui_choose_new(const char *title, ui_choose **out, error_info *err)
{
    *out = NULL;
    ui_choose *d = calloc(1, sizeof *d);
    if (!d || !text_init(&d->text, title)) {
        ui_choose_free(d);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    *out = d;
    return ERROR_OK;
}

error_code ui_choose_add_line(ui_choose *d, const char *line, error_info *err)
{
    return text_add_line(&d->text, line, err);
}

error_code ui_choose_add_button(ui_choose *d, const char *label, error_info *err)
{
    if (d->nbuttons == UI_CHOOSE_BUTTONS_MAX)
        return error_set(err, ERROR_INVALID, "at most %d answers", UI_CHOOSE_BUTTONS_MAX);
    if (!(d->buttons[d->nbuttons] = strdup(label)))
        return error_set(err, ERROR_NOMEM, "out of memory");
    d->selected = d->nbuttons++; /* the last one added: the harmless one */
    return ERROR_OK;
}

void ui_choose_free(ui_choose *d)
{
    if (!d)
        return;
    text_free(&d->text);
    for (size_t i = 0; i < d->nbuttons; i++)
        free(d->buttons[i]);
    free(d);
}

/* The first button whose label starts with `key` (either case), -1 when none. */
static int button_of_letter(const ui_choose *d, int key)
{
    int lower = key >= 'A' && key <= 'Z' ? key - 'A' + 'a' : key;
    for (size_t i = 0; i < d->nbuttons; i++) {
        int first = (unsigned char)d->buttons[i][0];
        if (first >= 'A' && first <= 'Z')
            first = first - 'A' + 'a';
        if (first == lower)
            return (int)i;
    }
    return -1;
}

int ui_choose_key(ui_choose *d, int key)
{
    if (d->nbuttons == 0)
        return key == UI_KEY_ESC || key == 'q' ? UI_CHOOSE_CANCEL : UI_CHOOSE_NONE;
    switch (key) {
    case UI_KEY_ESC:
    case 'q':
        return UI_CHOOSE_CANCEL;
    case UI_KEY_ENTER:
    case '\n':
        return (int)d->selected;
    case UI_KEY_RIGHT:
    case UI_KEY_TAB:
    case 'l':
        d->selected = (d->selected + 1) % d->nbuttons;
        return UI_CHOOSE_NONE;
    case UI_KEY_LEFT:
    case UI_KEY_BTAB:
    case 'h':
        d->selected = (d->selected + d->nbuttons - 1) % d->nbuttons;
        return UI_CHOOSE_NONE;
    default:
        return key > ' ' && key < 0x7f ? button_of_letter(d, key) : UI_CHOOSE_NONE;
    }
}

size_t ui_choose_selected(const ui_choose *d) { return d->selected; }

void ui_choose_draw(const ui_choose *d, ui_canvas *c, ui_rect area)
{
    int buttons_w = 0;
    for (size_t i = 0; i < d->nbuttons; i++)
        buttons_w += ui_canvas_width(c, d->buttons[i], 40) + 7;
    ui_rect box;
    int by = draw_text_box(c, area, &d->text, buttons_w, &box);
    int bx = box.x + (box.width - buttons_w) / 2;
    for (size_t i = 0; i < d->nbuttons; i++) {
        draw_button(c, by, bx, d->buttons[i], i == d->selected);
        bx += ui_canvas_width(c, d->buttons[i], 40) + 7;
    }
}
