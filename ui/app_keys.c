/*
 * Keys of the loop: overlays first, then the prompt (filter, command line), then
 * the keymap's request for the current view. And the `:` commands, from a table.
 */
#include "app_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui_text.h"

/* ---- requests ------------------------------------------------------------------- */

static void table_result(ui_app *app, ui_table *t, error_code rc)
{
    if (rc != ERROR_OK)
        ui_app_status(app, true, "%s", t->error.msg);
}

/* Drop `id` from the views to go back to. */
static void history_drop(ui_app *app, ui_view_id id)
{
    int kept = 0;
    for (int i = 0; i < app->nhistory; i++) {
        if (app->history[i] != id)
            app->history[kept++] = app->history[i];
    }
    app->nhistory = kept;
}

void ui_app_switch(ui_app *app, ui_view_id id)
{
    if (id >= UI_VIEW_COUNT)
        return;
    ui_app_close_all(app);
    ui_app_prompt_close(app);
    if (id == app->view)
        return;
    /* Each view once, the one just left last: 'q' walks back through them. */
    history_drop(app, id);
    history_drop(app, app->view);
    app->history[app->nhistory++] = app->view;
    app->view = id;
}

bool ui_app_can_go_back(ui_app *app)
{
    const ui_table *t = &ui_app_view(app)->table;
    return t->filter[0] || t->policy[0] || app->nhistory > 0;
}

static void next_sort(ui_app *app, ui_table *t, bool reverse)
{
    if (reverse)
        ui_table_set_sort(t, t->sort, !t->descending);
    else
        ui_table_set_sort(t, (t->sort + 1) % t->src->nsorts, false);
    ui_app_status(app, false, "sorted by %s, %s", t->src->sorts[t->sort],
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

/* q: one step back (the filter, the policy, the view left for this one), and
 * out when there is nothing to go back to. */
static void back(ui_app *app, ui_view *v)
{
    if (v->table.filter[0]) {
        ui_table_set_filter(&v->table, "");
        ui_app_status(app, false, "filter cleared");
    } else if (v->table.policy[0]) {
        ui_view_rules_set_policy(v, "");
        ui_app_status(app, false, "showing the rules of every policy");
    } else if (app->nhistory > 0) {
        ui_view_id to = app->history[--app->nhistory];
        ui_app_close_all(app);
        app->view = to;
    } else {
        ui_app_quit(app, 0);
    }
}

static void cancel(ui_app *app, ui_view *v)
{
    if (v->table.filter[0]) {
        ui_table_set_filter(&v->table, "");
        ui_app_status(app, false, "filter cleared");
    } else if (v->table.nmarks) {
        ui_table_unmark_all(&v->table);
        ui_app_status(app, false, "marks cleared");
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
    case UI_REQ_MARK: mark_one(app, t); return true;
    case UI_REQ_MARK_RANGE: mark_range(app, t); return true;
    case UI_REQ_UNMARK_ALL: ui_table_unmark_all(t); return true;
    default: return false;
    }
}

static void create(ui_app *app)
{
    if (app->view == UI_VIEW_RULES)
        ui_action_create(app, UI_KIND_RULE);
    else if (app->view == UI_VIEW_CREDS)
        ui_action_create(app, UI_KIND_CRED);
}

static void switch_by(ui_app *app, int step)
{
    ui_app_switch(app, (ui_view_id)(((int)app->view + step + UI_VIEW_COUNT) % UI_VIEW_COUNT));
}

void ui_app_request(ui_app *app, ui_request req)
{
    ui_view *v = ui_app_view(app);
    if (ui_request_readonly_refused(req) && ui_app_readonly(app)) {
        ui_app_status(app, false, "read-only console (--readonly): changes and tokens are "
                      "off");
        return;
    }
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
    case UI_REQ_REVEAL: ui_action_reveal(app); break;
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
    case UI_REQ_CANCEL: cancel(app, v); break;
    case UI_REQ_QUIT: ui_app_quit(app, 0); break;
    default: break;
    }
}

/* ---- keys ----------------------------------------------------------------------- */

/* The overlay `self` closes itself: it may no longer be on top (it opened another). */
static void close_overlay(ui_app *app, void *self)
{
    for (int i = app->noverlays - 1; i >= 0; i--) {
        if (app->overlays[i].self != self)
            continue;
        ui_overlay o = app->overlays[i];
        memmove(&app->overlays[i], &app->overlays[i + 1],
                (size_t)(app->noverlays - i - 1) * sizeof app->overlays[0]);
        app->noverlays--;
        if (o.ops->free)
            o.ops->free(o.self);
        return;
    }
}

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
    if (ui_app_too_small(app)) {
        if (key == 'q' || key == 'Q')
            ui_app_quit(app, 0);
        return;
    }
    app->status[0] = '\0';
    app->status_error = false;
    ui_request req = ui_keymap_lookup(app->view, key);
    if (app->noverlays > 0) {
        ui_overlay top = app->overlays[app->noverlays - 1];
        if (top.ops->key(top.self, app, key, req) == UI_OVERLAY_CLOSE)
            close_overlay(app, top.self);
        return;
    }
    if (app->prompt.kind != UI_PROMPT_NONE) {
        ui_app_prompt_key(app, key);
        return;
    }
    if (req == UI_REQ_NONE) {
        unbound(app, key);
        return;
    }
    ui_app_request(app, req);
}

/* ---- the prompt --------------------------------------------------------------- */

void ui_app_prompt_open(ui_app *app, ui_prompt_kind kind)
{
    ui_prompt *p = &app->prompt;
    ui_app_prompt_close(app);
    const char *initial = kind == UI_PROMPT_FILTER ? ui_app_view(app)->table.filter : "";
    error_info e = {0};
    if (ui_line_init(&p->line, initial, UI_PROMPT_MAX - UI_LINE_SLACK, &e) != ERROR_OK) {
        ui_app_status(app, true, "%s", e.msg);
        return;
    }
    p->kind = kind;
}

void ui_app_prompt_close(ui_app *app)
{
    app->prompt.kind = UI_PROMPT_NONE;
    ui_line_free(&app->prompt.line);
}

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

bool ui_app_prompt_key(ui_app *app, int key)
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
    return true;
}

bool ui_app_text_cursor(ui_app *app, int *y, int *x)
{
    const ui_prompt *p = &app->prompt;
    if (app->noverlays > 0 && app->cursor_set) {
        *y = app->cursor_y;
        *x = app->cursor_x;
        return true;
    }
    if (p->kind == UI_PROMPT_NONE || app->noverlays > 0)
        return false;
    char before[UI_PROMPT_MAX + 1];
    memcpy(before, p->line.buf, p->line.cursor);
    before[p->line.cursor] = '\0';
    *y = app->canvas.height - 1;
    *x = 1 + ui_canvas_width(&app->canvas, before, app->canvas.width);
    if (*x >= app->canvas.width)
        *x = app->canvas.width - 1;
    return true;
}

/* ---- `:` commands --------------------------------------------------------------- */

typedef void (*command_fn)(ui_app *app, const char *arg);

typedef struct ui_command {
    const char *name;
    const char *alias;
    command_fn run;
    const char *args;
    const char *help;
    ui_request req; /* the key's request it stands for (read-only refuses some) */
} ui_command;

static void cmd_view(ui_app *app, ui_view_id id, const char *arg)
{
    (void)arg;
    ui_app_switch(app, id);
}

static void cmd_rules(ui_app *app, const char *arg) { cmd_view(app, UI_VIEW_RULES, arg); }
static void cmd_creds(ui_app *app, const char *arg) { cmd_view(app, UI_VIEW_CREDS, arg); }
static void cmd_pending(ui_app *app, const char *arg) { cmd_view(app, UI_VIEW_PENDING, arg); }
static void cmd_log(ui_app *app, const char *arg) { cmd_view(app, UI_VIEW_LOG, arg); }

static void cmd_policy(ui_app *app, const char *arg)
{
    ui_app_switch(app, UI_VIEW_RULES);
    ui_view_rules_set_policy(app->views[UI_VIEW_RULES], arg);
    if (*arg)
        ui_app_status(app, false, "rules of policy %s", arg);
    else
        ui_app_status(app, false, "showing the rules of every policy");
}

static void cmd_filter(ui_app *app, const char *arg)
{
    ui_table_set_filter(&ui_app_view(app)->table, arg);
}

static void cmd_sort(ui_app *app, const char *arg)
{
    ui_table *t = &ui_app_view(app)->table;
    char col[64] = "", dir[16] = "";
    if (sscanf(arg, "%63s %15s", col, dir) < 1) {
        ui_app_status(app, true, ":sort needs a column (e.g. :sort %s [desc])", t->src->sorts[0]);
        return;
    }
    bool desc = strcmp(dir, "desc") == 0;
    if (dir[0] && !desc && strcmp(dir, "asc") != 0) {
        ui_app_status(app, true, ":sort %s: '%s' is not asc or desc", col, dir);
        return;
    }
    for (int i = 0; i < t->src->nsorts; i++) {
        if (strcmp(t->src->sorts[i], col) == 0) {
            ui_table_set_sort(t, i, desc);
            ui_app_status(app, false, "sorted by %s, %s", col, desc ? "descending" : "ascending");
            return;
        }
    }
    char names[256] = "";
    for (int i = 0; i < t->src->nsorts; i++) {
        size_t n = strlen(names);
        snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", t->src->sorts[i]);
    }
    ui_app_status(app, true, "cannot sort this view by '%s' (by: %s)", col, names);
}

static void cmd_quit(ui_app *app, const char *arg)
{
    (void)arg;
    ui_app_quit(app, 0);
}

static void cmd_help(ui_app *app, const char *arg)
{
    (void)arg;
    ui_help_open(app);
}

static void cmd_sync(ui_app *app, const char *arg)
{
    (void)arg;
    ui_app_request(app, UI_REQ_SYNC);
}

static const ui_command commands[] = {
    {"rules", "1", cmd_rules, "", "the rules view", UI_REQ_NONE},
    {"creds", "credentials", cmd_creds, "", "the credentials view", UI_REQ_NONE},
    {"pending", "plan", cmd_pending, "", "what the next sync does", UI_REQ_NONE},
    {"log", NULL, cmd_log, "", "the sync and agent log", UI_REQ_NONE},
    {"policy", NULL, cmd_policy, "[ID]", "rules of one policy (none: all)", UI_REQ_NONE},
    {"filter", NULL, cmd_filter, "[TEXT]", "filter this view (none: clear)", UI_REQ_NONE},
    {"sort", NULL, cmd_sort, "COL [asc|desc]", "sort this view", UI_REQ_NONE},
    {"sync", NULL, cmd_sync, "", "sync now", UI_REQ_SYNC},
    {"help", "h", cmd_help, "", "the keys and commands", UI_REQ_NONE},
    {"quit", "q", cmd_quit, "", "leave the console", UI_REQ_NONE},
};

void ui_app_command(ui_app *app, const char *line)
{
    while (*line == ' ')
        line++;
    char name[64];
    size_t n = strcspn(line, " ");
    if (n == 0)
        return;
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, line, n);
    name[n] = '\0';
    const char *arg = line + strcspn(line, " ");
    while (*arg == ' ')
        arg++;
    char trimmed[UI_PROMPT_MAX + 1];
    snprintf(trimmed, sizeof trimmed, "%s", arg);
    for (size_t len = strlen(trimmed); len > 0 && trimmed[len - 1] == ' '; len--)
        trimmed[len - 1] = '\0';
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        const ui_command *c = &commands[i];
        if (strcmp(name, c->name) == 0 || (c->alias && strcmp(name, c->alias) == 0)) {
            c->run(app, trimmed);
            return;
        }
    }
    ui_app_status(app, true, "unknown command ':%s' (:help lists the commands)", name);
}

void ui_app_command_help(ui_app *app, ui_text_overlay *o, error_info *err)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (ui_request_readonly_refused(commands[i].req) && ui_app_readonly(app))
            continue;
        char label[64];
        snprintf(label, sizeof label, ":%s %s", commands[i].name, commands[i].args);
        if (ui_text_overlay_add(o, label, commands[i].help, err) != ERROR_OK)
            return;
    }
}
