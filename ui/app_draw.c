/*
 * Drawing the frame: the two header rows (views, sync and agent state; position,
 * sort, filter, marks), the current view, the overlays, the status row. Every
 * frame is drawn whole into the canvas; the canvas flags only the rows whose
 * cells differ, and only those reach the terminal.
 */
#include "app_internal.h"

#include <stdio.h>
#include <string.h>

#include "ui_text.h"

static const ui_style bar = {UI_ATTR_REVERSE, UI_COLOR_TITLE};
static const ui_style plain = {0, UI_COLOR_DEFAULT};

/* Another process (a CLI import, the sync worker's own handle) changed the cache. */
static void follow_other_writers(ui_app *app)
{
    if (ui_sync_running(app))
        return; /* the sync's end reloads everything once */
    long long v = 0;
    if (store_data_version(ui_app_browse_store(app), &v, NULL) != ERROR_OK)
        return;
    if (app->have_version && v != app->data_version)
        ui_app_reload(app);
    app->data_version = v;
    app->have_version = true;
}

static void draw_tabs(ui_app *app, ui_canvas *c, int *x)
{
    *x += ui_canvas_text(c, 0, *x, -1, " rampart  ", (ui_style){UI_ATTR_REVERSE | UI_ATTR_BOLD,
                                                                 UI_COLOR_TITLE}, false);
    for (int i = 0; i < UI_VIEW_COUNT; i++) {
        char tab[32];
        bool cur = (ui_view_id)i == app->view;
        snprintf(tab, sizeof tab, cur ? "[%d %s]" : " %d %s ", i + 1, app->views[i]->ops->title);
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

static void draw_top_row(ui_app *app, ui_canvas *c)
{
    ui_canvas_clear(c, 0, 0, -1, bar);
    int x = 0;
    draw_tabs(app, c, &x);
    char sync[160], right[170];
    ui_sync_state_text(app, sync, sizeof sync);
    snprintf(right, sizeof right, "%s%s ", ui_app_options(app)->sandbox ? "sandbox: " : "",
             sync);
    draw_right(c, 0, x, right, bar);
}

/* Append " <label><value>" pieces to the header line. */
static void append(char *buf, size_t size, const char *label, const char *value)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, "%s%s", label, value);
}

static void draw_position_row(ui_app *app, ui_canvas *c)
{
    ui_view *v = ui_app_view(app);
    ui_table *t = &v->table;
    char rows[96], page[64], line[2048], count[32];
    ui_table_position(t, rows, sizeof rows, page, sizeof page);
    snprintf(line, sizeof line, " %s  %s", rows, page);
    if (t->nmarks) {
        ui_text_count(t->nmarks, count, sizeof count);
        append(line, sizeof line, "  ", count);
        append(line, sizeof line, " marked", "");
    }
    if (t->src->nsorts > 1 || t->descending) {
        append(line, sizeof line, "  sort ", t->src->sorts[t->sort]);
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
    char agent_text[200];
    ui_app_agent_text(app, agent_text, sizeof agent_text);
    append(agent_text, sizeof agent_text, " ", "");
    int aw = ui_canvas_width(c, agent_text, c->width);
    ui_canvas_clear(c, 1, 0, -1, plain);
    int used = ui_canvas_text(c, 1, 0, c->width - aw - 2 > 20 ? c->width - aw - 2 : -1, line,
                              (ui_style){UI_ATTR_BOLD, UI_COLOR_DEFAULT}, true);
    draw_right(c, 1, used, agent_text, (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT});
}

void ui_app_draw_header(ui_app *app)
{
    draw_top_row(app, &app->canvas);
    draw_position_row(app, &app->canvas);
}

/* The row under the cursor needs attention (failed, orphaned…): its reason in
 * place of the key hints, so it shows without opening the details. */
static bool draw_note(ui_app *app, ui_canvas *c, int y)
{
    const ui_table_row *row = ui_table_current(&ui_app_view(app)->table);
    if (!row || !row->note[0])
        return false;
    char msg[UI_TABLE_CELL_MAX + 4];
    snprintf(msg, sizeof msg, " ! %s", row->note); /* whole in the details (Enter) */
    ui_canvas_text(c, y, 0, -1, msg, (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR}, true);
    return true;
}

static void draw_hints(ui_app *app, ui_canvas *c, int y)
{
    char hints[256] = " ? help  / filter  : command  Tab views";
    if (!ui_app_readonly(app)) {
        if (ui_app_view(app)->ops->records)
            append(hints, sizeof hints, "  c create  d delete", "");
        append(hints, sizeof hints, "  s sync", "");
    }
    append(hints, sizeof hints, ui_app_can_go_back(app) ? "  q back" : "  q quit", "");
    ui_canvas_text(c, y, 0, -1, hints, (ui_style){UI_ATTR_DIM, UI_COLOR_DEFAULT}, true);
}

void ui_app_draw_status(ui_app *app)
{
    ui_canvas *c = &app->canvas;
    int y = c->height - 1;
    ui_canvas_clear(c, y, 0, -1, plain);
    const ui_prompt *p = &app->prompt;
    if (p->kind != UI_PROMPT_NONE && app->noverlays == 0) {
        ui_canvas_text(c, y, 0, 1, p->kind == UI_PROMPT_FILTER ? "/" : ":", plain, false);
        ui_canvas_text(c, y, 1, -1, p->line.buf, plain, true);
        return;
    }
    if (app->status[0]) {
        ui_style s = app->status_error ? (ui_style){UI_ATTR_BOLD, UI_COLOR_ERROR} : plain;
        char msg[600];
        snprintf(msg, sizeof msg, " %s%s", app->status_error ? "error: " : "", app->status);
        ui_canvas_text(c, y, 0, -1, msg, s, true);
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

bool ui_app_too_small(const ui_app *app)
{
    return app->canvas.width < UI_MIN_WIDTH || app->canvas.height < UI_MIN_HEIGHT;
}

void ui_app_render(ui_app *app)
{
    ui_canvas *c = &app->canvas;
    app->cursor_set = false;
    follow_other_writers(app);
    if (ui_app_too_small(app)) {
        draw_too_small(c);
        return;
    }
    ui_view *v = ui_app_view(app);
    ui_rect body = {0, UI_HEADER_ROWS, c->width, c->height - UI_HEADER_ROWS - UI_STATUS_ROWS};
    error_info e = {0};
    if (ui_table_set_height(&v->table, ui_table_rows_for(body.height), &e) != ERROR_OK)
        ui_app_status(app, true, "%s", e.msg);
    ui_table_draw(&v->table, c, body);
    ui_app_draw_header(app);
    for (int i = 0; i < app->noverlays; i++)
        app->overlays[i].ops->draw(app->overlays[i].self, app, c, body);
    ui_app_draw_status(app);
}
