/*
 * Drawing the frame: the two header rows (views, sync and agent state; position,
 * sort, filter, marks), the current view, the overlays, the status row. Every
 * frame is drawn whole into the canvas; the canvas flags only the rows whose
 * cells differ, and only those reach the terminal. Drawing reads the state and
 * changes nothing in it: the loop brought it up to date before (ui/app/loop.c).
 */
#include "app_internal.h"

#include <stdio.h>
#include <string.h>

#include "../widgets/ui_text.h"

static const ui_style bar = {UI_ATTR_REVERSE, UI_COLOR_TITLE};
static const ui_style plain = {0, UI_COLOR_DEFAULT};

enum { PROFILE_TITLE_MAX = 24 }; /* columns a long profile name may take in the title */

/* " rampart  ", or with a profile " rampart (staging)  "; when the tabs would not
 * fit beside that, the name alone: which account this is matters most. */
static void draw_title(const ui_app *app, ui_canvas *c, int tabs_width, int *x)
{
    const ui_style title = {UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_TITLE};
    const char *profile = ui_app_options(app)->profile;
    if (!profile) {
        *x += ui_canvas_text(c, 0, *x, -1, " rampart  ", title, false);
        return;
    }
    char text[96];
    snprintf(text, sizeof text, " rampart (%s)  ", profile);
    int w = ui_canvas_width(c, text, c->width);
    if (w + tabs_width > c->width || w > PROFILE_TITLE_MAX + 13) {
        *x += ui_canvas_text(c, 0, *x, 1, " ", title, false);
        *x += ui_canvas_text(c, 0, *x, PROFILE_TITLE_MAX, profile, title, true);
        *x += ui_canvas_text(c, 0, *x, 2, "  ", title, false);
        return;
    }
    *x += ui_canvas_text(c, 0, *x, -1, text, title, false);
}

static void tab_text(const ui_app *app, int i, char *tab, size_t size)
{
    bool cur = (ui_view_id)i == app->view;
    snprintf(tab, size, cur ? "[%d %s]" : " %d %s ", i + 1, app->views[i]->ops->title);
}

static void draw_tabs(const ui_app *app, ui_canvas *c, int *x)
{
    int tabs_width = 0;
    for (int i = 0; i < UI_VIEW_COUNT; i++) {
        char tab[32];
        tab_text(app, i, tab, sizeof tab);
        tabs_width += ui_canvas_width(c, tab, c->width);
    }
    draw_title(app, c, tabs_width, x);
    for (int i = 0; i < UI_VIEW_COUNT; i++) {
        char tab[32];
        bool cur = (ui_view_id)i == app->view;
        tab_text(app, i, tab, sizeof tab);
        ui_style s = cur ? (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD | UI_ATTR_UNDERLINE,
                                      UI_COLOR_TITLE}
                         : bar;
        *x += ui_canvas_text(c, 0, *x, -1, tab, s, false);
    }
    if (ui_app_readonly(app))
        *x += ui_canvas_text(c, 0, *x, -1, "  read-only",
                             (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD, UI_COLOR_TITLE}, false);
}

/* Text flush right on row y, cut when there is less room than it needs. */
static void draw_right(ui_canvas *c, int y, int used, const char *text, ui_style style)
{
    int room = c->width - used - 2;
    int w = ui_canvas_width(c, text, c->width);
    if (w > room)
        w = room;
    if (w > 0)
        ui_canvas_text(c, y, c->width - w, w, text, style, true);
}

/* The sync state, the longest of its texts that fits right of the tabs (the last,
 * the shortest, cut when none does). */
static void draw_sync_text(const ui_app *app, ui_canvas *c, int used)
{
    char right[UI_SYNC_TEXT_MAX + 16] = "";
    for (int i = 0; i < app->nsync_text; i++) {
        snprintf(right, sizeof right, "%s%s ", ui_app_options(app)->sandbox ? "sandbox: " : "",
                 app->sync_text[i]);
        if (ui_canvas_width(c, right, c->width) <= c->width - used - 2)
            break;
    }
    draw_right(c, 0, used, right, bar);
}

static void draw_top_row(const ui_app *app, ui_canvas *c)
{
    ui_canvas_clear(c, 0, 0, -1, bar);
    int x = 0;
    draw_tabs(app, c, &x);
    draw_sync_text(app, c, x);
}

void ui_app_draw_header(const ui_app *app, ui_canvas *c)
{
    if (!ui_app_too_small(app))
        draw_top_row(app, c);
}

/* Append " <label><value>" pieces to the header line. */
static void append(char *buf, size_t size, const char *label, const char *value)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s%s", label, value);
}

/* The agent's header text ("agent: 3 lookups", "agent: off", "agent: error …"). */
static void agent_text(const ui_app *app, char *buf, size_t size)
{
    if (app->agent) {
        agent_stats s;
        agent_stats_get(app->agent, &s);
        char n[32];
        ui_text_count(s.lookups, n, sizeof n);
        snprintf(buf, size, "agent: %s lookup%s", n, s.lookups == 1 ? "" : "s");
    } else if (app->agent_error[0]) {
        snprintf(buf, size, "agent: error %s", app->agent_error);
    } else {
        snprintf(buf, size, "agent: off");
    }
}

static void draw_position_row(const ui_app *app, ui_canvas *c)
{
    const ui_view *v = ui_app_view_const(app);
    const ui_table *t = &v->table;
    char rows[96], page[64], line[2048], count[32];
    ui_table_position(t, rows, sizeof rows, page, sizeof page);
    snprintf(line, sizeof line, " %s  %s", rows, page);
    if (t->nmarks) {
        ui_text_count(t->nmarks, count, sizeof count);
        append(line, sizeof line, "  ", count);
        append(line, sizeof line, " marked", "");
    }
    if (ui_table_sort_count(t) > 1 || t->descending) {
        append(line, sizeof line, "  sort ", ui_table_sort_name(t));
        append(line, sizeof line, t->descending ? " desc" : " asc", "");
    }
    char extra[256] = "";
    if (v->ops->describe)
        v->ops->describe(v, extra, sizeof extra);
    if (extra[0])
        append(line, sizeof line, "  ", extra);
    if (t->filter[0]) {
        append(line, sizeof line, "  filter \"", t->filter);
        append(line, sizeof line, "\"", "");
    }
    char agent_line[200];
    agent_text(app, agent_line, sizeof agent_line);
    append(agent_line, sizeof agent_line, " ", "");
    int aw = ui_canvas_width(c, agent_line, c->width);
    ui_canvas_clear(c, 1, 0, -1, plain);
    int used = ui_canvas_text(c, 1, 0, c->width - aw - 2 > 20 ? c->width - aw - 2 : -1, line,
                              (ui_style){UI_ATTR_BOLD, UI_COLOR_DEFAULT}, true);
    draw_right(c, 1, used, agent_line, (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT});
}

/* The row under the cursor needs attention (failed, orphaned…): its reason in
 * place of the key hints, so it shows without opening the details. */
static bool draw_note(const ui_app *app, ui_canvas *c, int y)
{
    const ui_table_row *row = ui_table_current(&ui_app_view_const(app)->table);
    if (!row || !row->note[0])
        return false;
    char msg[UI_TABLE_CELL_MAX + 4];
    snprintf(msg, sizeof msg, " ! %s", row->note); /* whole in the details (Enter) */
    ui_canvas_text(c, y, 0, -1, msg, (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}, true);
    return true;
}

static void draw_hints(const ui_app *app, ui_canvas *c, int y)
{
    char hints[512];
    ui_hint_bar(app, c->width, hints, sizeof hints);
    ui_canvas_text(c, y, 0, -1, hints, (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT}, true);
}

/* An empty view says what to do (ui_hint_empty) where the table says it has no
 * rows: the first lines under its titles. */
static void draw_empty(const ui_app *app, ui_canvas *c, ui_rect body)
{
    ui_hint_lines h;
    ui_hint_empty(app, &h);
    for (int i = 0; i < h.n && i + 1 < body.height; i++) {
        int y = body.y + 1 + i;
        ui_canvas_clear(c, y, body.x, body.width, plain);
        ui_canvas_text(c, y, body.x + 2, body.width - 2, h.line[i],
                       (ui_style){i ? 0 : UI_ATTR_BOLD, UI_COLOR_DEFAULT}, true);
    }
}

/* The status message wrapped onto the status area's rows (ui_app_status_rows:
 * the layout made room for them), the last cut with "…" when it goes on. */
static void draw_message(const ui_app *app, ui_canvas *c, const char *text)
{
    ui_style s = app->status_error ? (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR} : plain;
    int rows = ui_app_status_rows(app), width = c->width - 1;
    for (int i = 0, y = c->height - rows; i < rows && *text; i++, y++) {
        size_t n = i + 1 < rows ? ui_canvas_wrap(c, text, width) : strlen(text);
        char line[sizeof app->status + 16];
        snprintf(line, sizeof line, "%.*s", (int)n, text);
        ui_canvas_text(c, y, 1, width, line, s, true);
        text += n;
        while (*text == ' ')
            text++;
    }
}

static void draw_status(const ui_app *app, ui_canvas *c)
{
    int y = c->height - 1, rows = ui_app_status_rows(app);
    for (int i = 0; i < rows; i++)
        ui_canvas_clear(c, c->height - 1 - i, 0, -1, plain);
    const ui_prompt *p = &app->prompt;
    if (p->kind != UI_PROMPT_NONE && app->noverlays == 0) {
        ui_canvas_text(c, y, 0, 1, p->kind == UI_PROMPT_FILTER ? "/" : ":", plain, false);
        ui_canvas_text(c, y, 1, -1, p->line.buf, plain, true);
        return;
    }
    char text[sizeof app->status + 16];
    ui_app_status_text(app, text, sizeof text);
    if (text[0]) {
        draw_message(app, c, text);
        return;
    }
    if (!draw_note(app, c, y))
        draw_hints(app, c, y);
}

static void draw_too_small(ui_canvas *c)
{
    for (int y = 0; y < c->height; y++)
        ui_canvas_clear(c, y, 0, -1, plain);
    char msg[96];
    snprintf(msg, sizeof msg, "terminal too small: need %dx%d (now %dx%d)", UI_MIN_WIDTH,
             UI_MIN_HEIGHT, c->width, c->height);
    ui_canvas_text(c, 0, 0, -1, msg, (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}, true);
    if (c->height > 1)
        ui_canvas_text(c, 1, 0, -1, "make the window bigger, or press q to quit", plain, true);
}

void ui_app_draw(const ui_app *app, ui_canvas *c)
{
    if (ui_app_too_small(app)) {
        draw_too_small(c);
        return;
    }
    const ui_view *v = ui_app_view_const(app);
    ui_rect body = ui_app_body(app);
    ui_table_draw(&v->table, c, body);
    draw_empty(app, c, body);
    draw_top_row(app, c);
    draw_position_row(app, c);
    for (int i = 0; i < app->noverlays; i++)
        app->overlays[i].ops->draw(app->overlays[i].self, app, c, body);
    draw_status(app, c);
}
