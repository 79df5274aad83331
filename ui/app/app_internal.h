/*
 * app_internal: what the files of ui/app/ share. They are the console's top:
 * keys (keymap.c, app_keys.c, commands.c) -> actions (actions.c, edit.c,
 * form_create.c, form_edit.c, form_overlay.c)
 * -> the views and the state below; the frame (app_draw.c) drawn from the state,
 * only reading it; the loop (loop.c) that assembles the console, brings the state
 * up to date before each frame and hands it the events of other threads; its two
 * drivers, the terminal (ui.c) and the headless runner (headless.c). Private.
 */
#ifndef RAMPART_UI_APP_INTERNAL_H
#define RAMPART_UI_APP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/ui_form.h"
#include "../state/ui_state.h"
#include "../views/ui_views.h"

/* ---- keymap (keymap.c) --------------------------------------------------------- */

/*
 * Keys become requests through one table, per view, with the help text the `?`
 * overlay lists. In read-only mode the console neither lists nor runs the
 * requests that change data or show a token.
 */

enum { UI_VIEWS_ALL = (1u << UI_VIEW_COUNT) - 1 };

enum { UI_KEYMAP_KEYS = 2 };

typedef struct ui_keymap_entry {
    unsigned views;  /* bit (1u << ui_view_id) per view it works in */
    ui_request req;
    const char *help;
    int keys[UI_KEYMAP_KEYS]; /* the keys bound to it, 0 after the last */
} ui_keymap_entry;

/* The request of `key` in `view` (UI_REQ_NONE when unbound). */
ui_request ui_keymap_lookup(ui_view_id view, int key);

/* The whole table, in the order help lists it (one row per request and views). */
const ui_keymap_entry *ui_keymap_entries(size_t *count);

/* Whether read-only mode hides and refuses a request: it changes data, or shows
 * a secret (a token). */
bool ui_request_readonly_refused(ui_request req);

/* The same for this console: true (said in the status line) when it refuses it. */
bool ui_request_refused(ui_app *app, ui_request req);

/* A key's name as help shows it: "j", "Down", "PgDn", "C-d", "Space", "Tab". */
void ui_key_name(int key, char *buf, size_t size);

/* ---- the pending view's impact (impact_worker.c) ---- */

typedef struct ui_impact ui_impact;

/* Start the worker over the logs of the setting `logs` (words) and the cache at
 * `db_path`: it reads the logs once and posts a UI_EVENT_IMPACT summary now and
 * after each ui_impact_request. NULL when `logs` is empty (or it could not start:
 * app->impact_text says why). */
ui_impact *ui_impact_start(ui_app *app, const char *db_path, const char *logs);

/* The queue may have changed: a new summary. NULL: no-op. */
void ui_impact_request(ui_impact *w);

/* Stop the worker (a log being read stops at its next chunk) and free it. */
void ui_impact_stop(ui_impact *w);

/* A script's key name: a single UTF-8 character, or <Up>, <C-x>, <F1>… as in ui.h.
 * Returns the key, or UI_KEY_NONE when the name is unknown. */
int ui_key_parse(const char *name);

/* ---- keys, commands, help (app_keys.c, commands.c) ---------------------------- */

/* One key, as typed: overlays first, then the prompt, then the keymap's request
 * for the current view. */
void ui_app_key(ui_app *app, int key);

/* A `:` command line, as typed after the colon. */
void ui_app_command(ui_app *app, const char *line);

/* `:check IP [POLICY]` (check.c): the decision and the rule that made it, in the
 * status line; the policy defaults to the rule under the cursor's, else the only
 * cached one. */
void ui_check_command(ui_app *app, const char *arg);

/* `?`: the keys of the current view and the `:` commands (those read-only refuses
 * hidden then). */
void ui_help_open(ui_app *app);

/* ---- what to press (hints.c) ---------------------------------------------------- */

/* The name of the first key the keymap binds to `req` in `view` ("c", "Enter");
 * false when none is bound there. */
bool ui_hint_key(ui_view_id view, ui_request req, char *name, size_t size);

/* The key bar of the status row: the keys of the current view (or of the details
 * box on top), most important first, whole keys only, at most `width` columns.
 * Keys read-only refuses are left out then. */
void ui_hint_bar(const ui_app *app, int width, char *buf, size_t size);

enum { UI_HINT_LINES = 4 };

typedef struct ui_hint_lines {
    int n;
    char line[UI_HINT_LINES][1200];
} ui_hint_lines;

/* What an empty view says under its titles: with no rows in the cache, how to get
 * some (create, sync, import); with a filter or policy that hides them all, that
 * and how to clear it. None (n 0) while the view has rows or is being read. */
void ui_hint_empty(const ui_app *app, ui_hint_lines *out);

/* ---- actions (form_create.c, form_edit.c, form_overlay.c; the rest in ui_app.h) ---- */

/* Open the create form of `kind` as an overlay. What the kind offers goes with it
 * (the rule form: the cached policy ids, the view's policy first). */
error_code ui_form_create_open(ui_app *app, model_kind kind, error_info *err);

/* A form overlay, create and edit alike (form_overlay.c): its form, the row it
 * is about (edit: the row as read when the form opened; create: the kind alone)
 * and how Enter stores it (false: the form stays open with the store's reason
 * under its field). Esc cancels; a read-only console saves nothing.
 * ui_form_overlay_new gives one with no form yet (NULL: out of memory);
 * ui_form_overlay_push pushes it (freed on failure), ui_form_overlay_free
 * releases form, row and overlay. */
typedef enum ui_form_overlay_use {
    UI_FORM_OVERLAY_CREATE,
    UI_FORM_OVERLAY_EDIT
} ui_form_overlay_use;

typedef struct ui_form_overlay {
    ui_form *form;
    model_object row;
    bool (*save)(struct ui_form_overlay *o, ui_app *app);
} ui_form_overlay;

ui_form_overlay *ui_form_overlay_new(model_kind kind,
                                     bool (*save)(ui_form_overlay *o, ui_app *app));
error_code ui_form_overlay_push(ui_app *app, ui_form_overlay *o, ui_form_overlay_use use,
                                error_info *err);
void ui_form_overlay_free(ui_form_overlay *o);

/* Open the edit form of `row` (as read from the store; copied) as an overlay. */
error_code ui_form_edit_open(ui_app *app, const model_object *row, error_info *err);

/* ---- the frame (app_draw.c) ----------------------------------------------------- */

/* Draw the whole screen from the state into `c`: the header, the current view,
 * the overlays bottom to top, the status row (or only that the terminal is too
 * small). Reads the state; the loop brought it up to date before. */
void ui_app_draw(const ui_app *app, ui_canvas *c);

/* Only the top header row (the tabs and the sync state): what a clock tick
 * changes, drawn without the rest of the frame. */
void ui_app_draw_header(const ui_app *app, ui_canvas *c);

/* ---- the loop (loop.c) ---------------------------------------------------------- */

/* A console: its state, its views, its sync state, its event handler. */
error_code ui_app_new(const ui_options *opt, int width, int height, bool ascii,
                      ui_app **out, error_info *err);

/* Stop the agent, close the overlays, stop the sync worker (cancelling it), free
 * the views, then the state. NULL is a no-op. */
void ui_app_free(ui_app *app);

/* The local agent endpoint on the console's cache, served while it is open (unless
 * opt->agent is false). A failure (another rampart serves the socket) goes to the
 * header and the log, not fatal. */
void ui_app_start_agent(ui_app *app);

/* `:profile NAME` (commands.c): whether the switch may happen now; false with the
 * reason in the status line (no profiles here, a sync running, a form open). */
bool ui_app_profile_allowed(ui_app *app, const char *name);

/*
 * After a key: when `:profile NAME` was asked for (app->profile_request), switch
 * (ui.h: the hooks open the profile, a new console on the same screen replaces
 * `app`, which is freed). Returns the console to go on with: the new one, or `app`
 * itself when nothing was asked or the switch failed (its status line says why).
 * `term` gives the terminal back around a key_command (NULL headless).
 */
ui_app *ui_app_follow_profile(ui_app *app, const ui_term_hold *term);

/* A frame: bring the state up to date (another writer's changes, the current
 * view's rows, the overlays' layout, the header's sync text), then draw it into
 * the state's canvas (only cells that differ are flagged). */
void ui_app_render(ui_app *app);

/* Whether something on screen changes by itself (a running sync's ETA or
 * countdown, the age of the last sync) or an idle auto-pull may come: the
 * terminal then wakes every second. */
bool ui_app_ticking(ui_app *app);

/* The console's clock moved (a second passed, a key, a headless `tick`): start an
 * idle auto-pull when one is due (ui.h), and bring the header's sync text up to
 * date. True when more than the header may have changed (a pull started): the
 * caller draws a whole frame then, else the header alone (ui_app_draw_header). */
bool ui_app_tick(ui_app *app);

/* ---- the headless runner (headless.c) ------------------------------------------ */

/* Parse the whole script, then run it on *app (already sized; replaced when the
 * script switches profiles). ERROR_INVALID naming the file and line for a bad
 * step; nothing runs then. */
error_code ui_headless_run(ui_app **app, const ui_options *opt, error_info *err);

/* 's' after the read-only check (app/sync_worker.c): start the worker, or retry at
 * once while it waits to retry an unreachable remote; refused (status line) when
 * no remote is configured or a sync is running. */
void ui_sync_start(ui_app *app);

#endif
