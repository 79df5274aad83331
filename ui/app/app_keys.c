/*
 * The console's keys: overlays first, then the prompt (filter, command line), then
 * the keymap's request for the current view, which moves the table, acts through
 * the actions, or changes the state. (The `:` commands are in commands.c.)
 */
#include "app_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- requests ------------------------------------------------------------------- */

static void table_result(ui_app *app, ui_table *t, error_code rc)
{
    if (rc != ERROR_OK)
        ui_app_status(app, true, "%s", t->error.msg);
}

static void next_sort(ui_app *app, ui_table *t, bool reverse)
{
    if (reverse)
        ui_table_set_sort(t, t->sort, !t->descending);
    else
        ui_table_set_sort(t, ui_table_sort_next(t), false);
    ui_app_status(app, false, "sorted by %s, %s", ui_table_sort_name(t),
                  t->descending ? "descending" : "ascending");
}

static void mark_range(ui_app *app, ui_table *t)
{
    size_t added = 0;
    error_info e = {0};
    if (ui_table_mark_range(t, 100000, &added, &e) != ERROR_OK)
        ui_app_status(app, e.code != ERROR_INVALID, "%s", e.msg);
    else
        ui_app_status(app, false, "%zu more marked, %zu in all", added, t->nmarks);
}

static void mark_one(ui_app *app, ui_table *t)
{
    error_info e = {0};
    if (ui_table_mark_toggle(t, &e) != ERROR_OK) {
        ui_app_status(app, true, "%s", e.msg);
        return;
    }
    table_result(app, t, ui_table_move(t, 1));
}

/* q: one step back (the filter, the view's scope, the view left for this one),
 * and out when there is nothing to go back to. */
static void back(ui_app *app, ui_view *v)
{
    if (v->table.filter[0]) {
        ui_table_set_filter(&v->table, "");
        ui_app_status(app, false, "filter cleared");
    } else if (ui_table_scoped(&v->table) && v->ops->scope) {
        v->ops->scope(v, app, "");
    } else if (!ui_app_go_back(app)) {
        ui_app_quit(app, 0);
    }
}

/* Esc: the filter first; marks only at a second Esc in a row. Saying so rather
 * than asking: marks can take long to make and Esc is pressed out of habit, yet a
 * dialog for it would cost a key every time and stop the flow. */
static void cancel(ui_app *app, ui_view *v, bool again)
{
    size_t n = v->table.nmarks;
    if (v->table.filter[0]) {
        ui_table_set_filter(&v->table, "");
        ui_app_status(app, false, "filter cleared");
    } else if (n && !again) {
        app->esc_clears_marks = true;
        ui_app_status(app, false, "%zu marked: Esc again clears them", n);
    } else if (n) {
        ui_table_unmark_all(&v->table);
        ui_app_status(app, false, "cleared %zu mark%s", n, n == 1 ? "" : "s");
    }
}

/* Movement and marks: what every table does. */
static bool table_request(ui_app *app, ui_table *t, ui_request req)
{
    switch (req) {
    case UI_REQ_UP: table_result(app, t, ui_table_move(t, -1)); return true;
    case UI_REQ_DOWN: table_result(app, t, ui_table_move(t, 1)); return true;
    case UI_REQ_PAGE_UP: table_result(app, t, ui_table_page(t, -1)); return true;
    case UI_REQ_PAGE_DOWN: table_result(app, t, ui_table_page(t, 1)); return true;
    case UI_REQ_HALF_UP: table_result(app, t, ui_table_half(t, -1)); return true;
    case UI_REQ_HALF_DOWN: table_result(app, t, ui_table_half(t, 1)); return true;
    case UI_REQ_FIRST: table_result(app, t, ui_table_first(t)); return true;
    case UI_REQ_LAST: table_result(app, t, ui_table_last(t)); return true;
    case UI_REQ_SORT: next_sort(app, t, false); return true;
    case UI_REQ_SORT_REVERSE: next_sort(app, t, true); return true;
    case UI_REQ_ID_COLUMN:
        ui_app_status(app, false, ui_table_toggle_optional(t) ? "id column hidden ('i' shows it)"
                                                              : "id column shown");
        return true;
    case UI_REQ_MARK: mark_one(app, t); return true;
    case UI_REQ_MARK_RANGE: mark_range(app, t); return true;
    case UI_REQ_UNMARK_ALL: ui_table_unmark_all(t); return true;
    default: return false;
    }
}

static void create(ui_app *app)
{
    const ui_view_ops *ops = ui_app_view(app)->ops;
    if (ops->records)
        ui_action_create(app, ops->kind);
}

static void switch_by(ui_app *app, int step)
{
    ui_app_switch(app, (ui_view_id)(((int)app->view + step + UI_VIEW_COUNT) % UI_VIEW_COUNT));
}

static void request(ui_app *app, ui_request req, bool esc_again)
{
    ui_view *v = ui_app_view(app);
    if (ui_request_refused(app, req))
        return;
    if (v->ops->request && v->ops->request(v, app, req))
        return;
    if (table_request(app, &v->table, req))
        return;
    switch (req) {
    case UI_REQ_ENTER: ui_view_details(v, app); break;
    case UI_REQ_FILTER: ui_app_prompt_open(app, UI_PROMPT_FILTER); break;
    case UI_REQ_PROMPT: ui_app_prompt_open(app, UI_PROMPT_COMMAND); break;
    case UI_REQ_CREATE: create(app); break;
    case UI_REQ_DELETE: ui_action_delete(app); break;
    case UI_REQ_RETRY: ui_action_retry(app); break;
    case UI_REQ_DISCARD: ui_action_discard(app); break;
    case UI_REQ_UNDO: ui_action_undo(app); break;
    case UI_REQ_EDIT: ui_action_edit(app); break;
    case UI_REQ_RESOLVE: ui_action_resolve(app); break;
    case UI_REQ_REVEAL: ui_action_reveal(app); break;
    case UI_REQ_ROTATE: ui_action_rotate(app); break;
    case UI_REQ_COPY_ID: ui_action_copy(app, false); break;
    case UI_REQ_COPY_CIDR: ui_action_copy(app, true); break;
    case UI_REQ_SYNC: ui_action_sync(app); break;
    case UI_REQ_HELP: ui_help_open(app); break;
    case UI_REQ_VIEW_NEXT: switch_by(app, 1); break;
    case UI_REQ_VIEW_PREV: switch_by(app, -1); break;
    case UI_REQ_VIEW_RULES: ui_app_switch(app, UI_VIEW_RULES); break;
    case UI_REQ_VIEW_CREDS: ui_app_switch(app, UI_VIEW_CREDS); break;
    case UI_REQ_VIEW_PENDING: ui_app_switch(app, UI_VIEW_PENDING); break;
    case UI_REQ_VIEW_LOG: ui_app_switch(app, UI_VIEW_LOG); break;
    case UI_REQ_REDRAW: app->repaint = true; break;
    case UI_REQ_BACK: back(app, v); break;
    case UI_REQ_CANCEL: cancel(app, v, esc_again); break;
    case UI_REQ_QUIT: ui_app_quit(app, 0); break;
    default: break;
    }
}

/* ---- the prompt ------------------------------------------------------------------ */

static void prompt_finish(ui_app *app, bool accept)
{
    ui_prompt *p = &app->prompt;
    ui_prompt_kind kind = p->kind;
    char line[UI_PROMPT_MAX + 1];
    snprintf(line, sizeof line, "%s", accept ? p->line.buf : "");
    ui_app_prompt_close(app);
    if (kind == UI_PROMPT_FILTER) {
        ui_table_set_filter(&ui_app_view(app)->table, line);
        if (!accept)
            ui_app_status(app, false, "filter cleared");
    } else if (accept) {
        ui_app_command(app, line);
    }
}

/* A key while the prompt is open: Enter runs it, Esc (or Backspace on an empty
 * line) closes it; the filter applies as it is typed. */
static void prompt_key(ui_app *app, int key)
{
    ui_prompt *p = &app->prompt;
    if (key == UI_KEY_ENTER) {
        prompt_finish(app, true);
    } else if (key == UI_KEY_ESC) {
        prompt_finish(app, false);
    } else if (key == UI_KEY_BACKSPACE && p->line.len == 0) {
        prompt_finish(app, p->kind == UI_PROMPT_FILTER);
    } else if (ui_line_key(&p->line, key) == UI_LINE_CHANGED &&
               p->kind == UI_PROMPT_FILTER) {
        ui_table_set_filter(&ui_app_view(app)->table, p->line.buf); /* live */
    }
}

/* ---- keys ----------------------------------------------------------------------- */

static void unbound(ui_app *app, int key)
{
    if (key < 0x20 || key >= UI_KEY_SPECIAL)
        return;
    char name[16];
    ui_key_name(key, name, sizeof name);
    ui_app_status(app, false, "'%s' does nothing here (? lists the keys)", name);
}

void ui_app_key(ui_app *app, int key)
{
    if (key == UI_KEY_NONE || key == UI_KEY_RESIZE)
        return;
    app->last_key_at = ui_app_now(app); /* the idle auto-pull waits for quiet */
    if (ui_app_too_small(app)) {
        if (key == 'q' || key == 'Q')
            ui_app_quit(app, 0);
        return;
    }
    app->status[0] = '\0';
    app->status_error = false;
    bool esc_again = app->esc_clears_marks; /* only the very next key counts */
    app->esc_clears_marks = false;
    ui_request req = ui_keymap_lookup(app->view, key);
    if (app->noverlays > 0) {
        ui_overlay top = app->overlays[app->noverlays - 1];
        /* It may no longer be on top when it closes: it may have opened another. */
        if (top.ops->key(top.self, app, key, req) == UI_OVERLAY_CLOSE)
            ui_app_close(app, top.self);
        return;
    }
    if (app->prompt.kind != UI_PROMPT_NONE) {
        prompt_key(app, key);
        return;
    }
    if (req == UI_REQ_NONE) {
        unbound(app, key);
        return;
    }
    request(app, req, esc_again);
}

