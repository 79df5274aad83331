/*
 * ui_internal: what the console's loop, views, keymap, overlays and headless runner
 * share beyond ui_app.h. Private to ui/.
 *
 * Contract:
 * - Keys become requests through one table (ui/keymap.c): per view, with the help
 *   text the `?` overlay lists. In read-only mode the loop neither lists nor runs
 *   the requests that change data or show a token (ui_request_readonly_refused).
 * - A view is a ui_table over a row source plus the requests only it knows (the
 *   rules view's policy filter). Views draw into the canvas only.
 * - The loop (ui/app.c) is driven from outside: by the terminal loop (ui/ui.c) or
 *   by the headless runner (ui/headless.c), with the same calls, so both show the
 *   same screens.
 */
#ifndef RAMPART_UI_INTERNAL_H
#define RAMPART_UI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "rampart/ui_app.h"
#include "rampart/ui_table.h"

typedef enum ui_view_id {
    UI_VIEW_RULES,
    UI_VIEW_CREDS,
    UI_VIEW_PENDING,
    UI_VIEW_LOG,
    UI_VIEW_COUNT
} ui_view_id;

/* Screen layout: two header rows, one status row, the view in between. */
enum { UI_HEADER_ROWS = 2, UI_STATUS_ROWS = 1, UI_MIN_WIDTH = 64, UI_MIN_HEIGHT = 14 };

/* ---- keymap (ui/keymap.c) --------------------------------------------------- */

enum { UI_VIEWS_ALL = (1u << UI_VIEW_COUNT) - 1, UI_VIEWS_RECORDS = 3 };

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

/* A key's name as help shows it: "j", "Down", "PgDn", "C-d", "Space", "Tab". */
void ui_key_name(int key, char *buf, size_t size);

/* A script's key name: a single UTF-8 character, or <Up>, <C-x>, <F1>… as in ui.h.
 * Returns the key, or UI_KEY_NONE when the name is unknown. */
int ui_key_parse(const char *name);

/* ---- views (ui/view_*.c) ----------------------------------------------------- */

typedef struct ui_view ui_view;

typedef struct ui_view_ops {
    const char *name;   /* "rules": for :commands */
    const char *title;  /* "Rules": for the header */
    bool records;       /* rows are rules or credentials (create, delete, marks) */
    /* A request only this view knows; true when it took it. */
    bool (*request)(ui_view *v, ui_app *app, ui_request req);
    /* Extra header text ("policy ipp_…"), "" when none. */
    void (*describe)(ui_view *v, char *buf, size_t size);
} ui_view_ops;

struct ui_view_ctx;

struct ui_view {
    const ui_view_ops *ops;
    ui_table table;
    ui_table_source src;
    struct ui_view_ctx *ctx; /* the source's state (ui/view_internal.h) */
};

error_code ui_view_rules_new(ui_app *app, ui_view **out, error_info *err);
error_code ui_view_creds_new(ui_app *app, ui_view **out, error_info *err);
error_code ui_view_pending_new(ui_app *app, ui_view **out, error_info *err);
error_code ui_view_log_new(ui_app *app, ui_view **out, error_info *err);
void ui_view_free(ui_view *v);

/* The rules view's policy filter (`:policy ID`, the 'p' picker). */
void ui_view_rules_set_policy(ui_view *v, const char *policy);

/* Details of the current row in an overlay (Enter). */
void ui_view_details(ui_view *v, ui_app *app);

/* ---- the log ring (kept by the loop, shown by the log view) ----------------- */

enum { UI_LOG_LINES = 1000, UI_LOG_TEXT = 512 };

typedef struct ui_log_line {
    unsigned long long seq;  /* 1, 2, …: the row key */
    char time[9];            /* "12:03:04" */
    sync_log_level level;
    char text[UI_LOG_TEXT];
} ui_log_line;

typedef struct ui_log_ring {
    ui_log_line *lines;      /* UI_LOG_LINES slots */
    size_t len, head;        /* oldest at head */
    unsigned long long next_seq;
} ui_log_ring;

const ui_log_ring *ui_app_log_ring(ui_app *app);

/* The i-th oldest line kept (i < len). */
const ui_log_line *ui_log_at(const ui_log_ring *r, size_t i);

/* ---- text overlays (ui/overlay_text.c): help, details, lists ------------------ */

typedef struct ui_text_overlay ui_text_overlay;

/* An overlay of label/value lines under a title, scrolled with the usual keys,
 * closed with q, Esc or Enter. Push it with ui_text_overlay_push. */
error_code ui_text_overlay_new(const char *title, ui_text_overlay **out, error_info *err);
error_code ui_text_overlay_add(ui_text_overlay *o, const char *label, const char *value,
                               error_info *err);
void ui_text_overlay_free(ui_text_overlay *o); /* NULL is a no-op */
/* Push (the loop owns it from then on; freed on failure too). */
void ui_text_overlay_push(ui_app *app, ui_text_overlay *o);

/* `?`: the keys of the current view (those read-only refuses hidden then). */
void ui_help_open(ui_app *app);

/* A pick list (the policy picker): `fn` gets the picked line's index and text,
 * or -1 (Esc, the console ending, or opening failed), exactly once, with `ctx`
 * (app may then be NULL). The items are copied. */
typedef void (*ui_pick_fn)(ui_app *app, void *ctx, int chosen, const char *text);
error_code ui_pick_open(ui_app *app, const char *title, const char *const *items,
                        size_t count, ui_pick_fn fn, void *ctx, error_info *err);

/* ---- the loop (ui/app*.c), driven by ui/ui.c and ui/headless.c ---------------- */

error_code ui_app_new(const ui_options *opt, int width, int height, bool ascii,
                      ui_app **out, error_info *err);
void ui_app_free(ui_app *app);

/* One key, as typed. */
void ui_app_key(ui_app *app, int key);

/* Draw the whole screen into the canvas (only cells that differ are flagged). */
void ui_app_render(ui_app *app);
ui_canvas *ui_app_canvas(ui_app *app);

/* The terminal has a new size: the canvas and the views follow. */
error_code ui_app_resize(ui_app *app, int width, int height, error_info *err);

/* Handle the events other threads posted (never blocks). */
void ui_app_drain(ui_app *app);
int ui_app_wake_fd(ui_app *app);

/* Whether the user asked to quit, and the exit status to end with. */
bool ui_app_quitting(ui_app *app, int *status);
void ui_app_quit(ui_app *app, int status);

/* Where the terminal's cursor belongs (a text prompt), false when hidden. */
bool ui_app_text_cursor(ui_app *app, int *y, int *x);

/* Whether something on screen changes by itself (a running sync's ETA). */
bool ui_app_ticking(ui_app *app);

/* Ctrl-L was pressed since the last call (the terminal repaints everything). */
bool ui_app_take_repaint(ui_app *app);

/* The handle the views read through: a read-only one of its own (a reader's small
 * page cache, so browsing a large cache costs little memory, and the console's
 * own writes show up in its data_version like anyone's), or ui_app_store's. */
store *ui_app_browse_store(ui_app *app);

/* The current view. */
ui_view *ui_app_view(ui_app *app);
ui_view_id ui_app_view_id(ui_app *app);
void ui_app_switch(ui_app *app, ui_view_id id);

/* A `:` command line, as typed after the colon. */
void ui_app_command(ui_app *app, const char *line);

/* The agent's header text ("agent: 3 lookups", "agent: off", "agent: error …"). */
void ui_app_agent_text(ui_app *app, char *buf, size_t size);

#endif
