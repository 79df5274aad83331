/*
 * The loop's state, shared by ui/app.c (services, events), ui/app_keys.c (keys,
 * prompt, commands) and ui/app_draw.c (header, status line). Private to those.
 */
#ifndef RAMPART_UI_APP_INTERNAL_H
#define RAMPART_UI_APP_INTERNAL_H

#include <pthread.h>

#include "rampart/agent.h"
#include "ui_internal.h"
#include "ui_line.h"

enum { UI_OVERLAYS_MAX = 8, UI_QUEUE_MAX = 64, UI_PROMPT_MAX = 1024 };

typedef enum ui_prompt_kind { UI_PROMPT_NONE, UI_PROMPT_FILTER, UI_PROMPT_COMMAND } ui_prompt_kind;

/* The one-line editor of the status row (`/` filter, `:` command). */
typedef struct ui_prompt {
    ui_prompt_kind kind;
    ui_line line;                 /* allocated while open */
} ui_prompt;

typedef struct ui_overlay {
    const ui_overlay_ops *ops;
    void *self;
} ui_overlay;

struct ui_app {
    const ui_options *opt;
    store *st;
    store *browse;               /* read-only handle of the views (NULL: st) */
    ui_canvas canvas;
    ui_view *views[UI_VIEW_COUNT];
    ui_view_id view;
    ui_view_id history[UI_VIEW_COUNT]; /* views left for another, oldest first */
    int nhistory;
    ui_overlay overlays[UI_OVERLAYS_MAX];
    int noverlays;
    ui_prompt prompt;
    char status[512];
    bool status_error;
    ui_log_ring log;
    ui_sync *sync;
    agent *agent;
    char agent_error[160];
    bool quit;
    int exit_status;
    bool repaint;
    bool cursor_set;             /* an overlay placed the cursor this frame */
    int cursor_y, cursor_x;
    long long data_version;
    bool have_version;
    /* events from other threads */
    pthread_mutex_t lock;
    ui_event *queue;             /* UI_QUEUE_MAX */
    size_t qhead, qlen;
    ui_event progress;           /* the last progress that did not fit */
    bool progress_pending;
    int wake[2];
};

/* app_keys.c */
void ui_app_request(ui_app *app, ui_request req);
bool ui_app_prompt_key(ui_app *app, int key);
void ui_app_prompt_open(ui_app *app, ui_prompt_kind kind);
void ui_app_prompt_close(ui_app *app);
/* Whether 'q' goes back (clears the filter or the policy, or returns to the view
 * left for this one) rather than quitting. */
bool ui_app_can_go_back(ui_app *app);
/* The `:` commands as help lines (those read-only refuses left out then). */
void ui_app_command_help(ui_app *app, ui_text_overlay *o, error_info *err);

/* app_draw.c */
void ui_app_draw_header(ui_app *app);
void ui_app_draw_status(ui_app *app);
/* Below the minimum size: the screen only says so, and keys other than q/Q are
 * ignored (nothing may happen that the admin cannot see). */
bool ui_app_too_small(const ui_app *app);

/* app.c */
void ui_app_close_top(ui_app *app);
/* Pop every overlay (view switch, quit). */
void ui_app_close_all(ui_app *app);

#endif
