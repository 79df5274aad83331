/*
 * The `:` commands, from a table (each names the request of the key it stands
 * for, so read-only mode refuses and hides the same ones), and the help overlay
 * (`?`, `:help`): the keys of the current view, then the commands.
 */
#include "app_internal.h"

#include <stdio.h>
#include <string.h>

#include "../state/ui_overlays.h"

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

/* `:policy ID`: the rules view's scope (ui/views/policy.c says what it shows). */
static void cmd_policy(ui_app *app, const char *arg)
{
    ui_app_switch(app, UI_VIEW_RULES);
    ui_view *v = app->views[UI_VIEW_RULES];
    if (v->ops->scope)
        v->ops->scope(v, app, arg);
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
        ui_app_status(app, true, ":sort needs a column (e.g. :sort %s [desc])",
                      t->src->cols[ui_table_sort_find(t, NULL)].sort);
        return;
    }
    bool desc = strcmp(dir, "desc") == 0;
    if (dir[0] && !desc && strcmp(dir, "asc") != 0) {
        ui_app_status(app, true, ":sort %s: '%s' is not asc or desc", col, dir);
        return;
    }
    int found = ui_table_sort_find(t, col);
    if (found >= 0) {
        ui_table_set_sort(t, found, desc);
        ui_app_status(app, false, "sorted by %s, %s", col, desc ? "descending" : "ascending");
        return;
    }
    char names[256] = "";
    for (int i = 0; i < t->src->ncols; i++) {
        size_t n = strlen(names);
        if (t->src->cols[i].sort)
            snprintf(names + n, sizeof names - n, "%s%s", n ? ", " : "", t->src->cols[i].sort);
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
    if (!ui_request_refused(app, UI_REQ_SYNC))
        ui_action_sync(app);
}

/* `:profile NAME`: asked here, done by the driver after the key (ui_app_follow_profile),
 * since it replaces the whole console. */
static void cmd_profile(ui_app *app, const char *arg)
{
    if (!ui_app_profile_allowed(app, arg))
        return;
    snprintf(app->profile_request, sizeof app->profile_request, "%s", arg);
}

static const ui_command commands[] = {
    {"rules", "1", cmd_rules, "", "the rules view", UI_REQ_NONE},
    {"creds", "credentials", cmd_creds, "", "the credentials view", UI_REQ_NONE},
    {"pending", "plan", cmd_pending, "", "what the next sync does", UI_REQ_NONE},
    {"log", NULL, cmd_log, "", "the sync and agent log", UI_REQ_NONE},
    {"policy", NULL, cmd_policy, "[ID]", "rules of one policy (none: all)", UI_REQ_NONE},
    {"filter", NULL, cmd_filter, "[TEXT]", "filter this view (none: clear)", UI_REQ_NONE},
    {"sort", NULL, cmd_sort, "COL [asc|desc]", "sort this view", UI_REQ_NONE},
    {"check", NULL, ui_check_command, "IP [POLICY]", "allowed? and the rule that decides",
     UI_REQ_NONE},
    {"sync", NULL, cmd_sync, "", "sync now", UI_REQ_SYNC},
    {"profile", NULL, cmd_profile, "NAME", "switch to another profile's remote and cache",
     UI_REQ_NONE},
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

/* The `:` commands as help lines (those read-only refuses left out then). */
static void command_help(ui_app *app, ui_text_overlay *o, error_info *err)
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

/* ---- help ---------------------------------------------------------------------- */

/* The keys of one keymap row, as "j Down". */
static void keys_of(const ui_keymap_entry *e, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t k = 0; k < UI_KEYMAP_KEYS && e->keys[k]; k++) {
        char name[16];
        ui_key_name(e->keys[k], name, sizeof name);
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", len ? " " : "", name);
    }
}

void ui_help_open(ui_app *app)
{
    ui_view_id view = ui_app_view_id(app);
    char title[96];
    snprintf(title, sizeof title, "Keys of the %s view", ui_app_view(app)->ops->title);
    ui_text_overlay *o = NULL;
    error_info e = {0};
    if (ui_text_overlay_new(title, &o, &e) != ERROR_OK) {
        ui_app_status(app, true, "%s", e.msg);
        return;
    }
    size_t n;
    const ui_keymap_entry *ent = ui_keymap_entries(&n);
    for (size_t i = 0; i < n && e.code == ERROR_OK; i++) {
        if (!(ent[i].views & (1u << view)))
            continue;
        if (ui_request_readonly_refused(ent[i].req) && ui_app_readonly(app))
            continue;
        char keys[64];
        keys_of(&ent[i], keys, sizeof keys);
        ui_text_overlay_add(o, keys, ent[i].help, &e);
    }
    if (e.code == ERROR_OK)
        ui_text_overlay_add(o, "", "", &e);
    if (e.code == ERROR_OK)
        command_help(app, o, &e);
    if (e.code != ERROR_OK) {
        ui_text_overlay_free(o);
        ui_app_status(app, true, "%s", e.msg);
        return;
    }
    ui_text_overlay_push(app, o);
}
