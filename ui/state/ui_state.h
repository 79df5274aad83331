/*
 * ui_state: the console's state (ui/state/app.c, ui/state/app_raw.c) and what the
 * layers above it share through it: the views and their tables, the overlays, the
 * prompt, the status line, the log ring, the events from other threads, the raw
 * bytes for the terminal. Private to ui/.
 *
 * - Dependencies run one way: keys (ui/app) -> actions (ui/app) -> views
 *   (ui/views) -> the overlays (ui/state) -> this state -> the widgets. The state
 *   calls nothing above it: it holds the views (made and freed by the loop,
 *   ui/app/loop.c) and the overlays as data with their ops, and hands each event
 *   to the handler the loop set.
 * - A frame is drawn from the state without changing it (ui/app/app_draw.c takes
 *   a const ui_app); the loop brings the state up to date just before (tables
 *   read, overlays laid out, the header's sync text).
 * - Only the ui thread touches the state, except ui_app_post (ui_app.h).
 */
#ifndef RAMPART_UI_STATE_H
#define RAMPART_UI_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "../widgets/ui_line.h"
#include "rampart/buf.h"
#include "rampart/agent.h"
#include "rampart/ui_app.h"
#include "rampart/ui_table.h"

typedef enum ui_view_id {
    UI_VIEW_RULES,
    UI_VIEW_CREDS,
    UI_VIEW_PENDING,
    UI_VIEW_LOG,
    UI_VIEW_COUNT
} ui_view_id;

/* Screen layout: two header rows, the status area (one row; a message longer than
 * the screen is wide wraps onto up to UI_STATUS_ROWS_MAX rows, taking them from
 * the view), the view in between. */
enum {
    UI_HEADER_ROWS = 2, UI_STATUS_ROWS = 1, UI_STATUS_ROWS_MAX = 6, UI_MIN_WIDTH = 60,
    UI_MIN_HEIGHT = 14
};

enum { UI_OVERLAYS_MAX = 8, UI_QUEUE_MAX = 64, UI_PROMPT_MAX = 1024 };

enum { UI_SYNC_TEXTS = 4, UI_SYNC_TEXT_MAX = 320 };

/* ---- views: a table over a row source (made in ui/views) ---------------------- */

typedef struct ui_view ui_view;

typedef struct ui_view_ops {
    const char *name;   /* "rules": for :commands */
    const char *title;  /* "Rules": for the header */
    bool records;       /* rows are records of one kind (create, delete, marks) */
    model_kind kind;    /* that kind, when `records` */
    /* A request only this view knows; true when it took it. May be NULL. */
    bool (*request)(ui_view *v, ui_app *app, ui_request req);
    /* Extra header text ("policy ipp_…"), "" when none. May be NULL. */
    void (*describe)(const ui_view *v, char *buf, size_t size);
    /* Narrow the view to `arg` ("" shows everything again), saying so in the status
     * line (the rules view: one policy). NULL: the view has no scope. */
    void (*scope)(ui_view *v, ui_app *app, const char *arg);
} ui_view_ops;

struct ui_view_ctx;

struct ui_view {
    const ui_view_ops *ops;
    ui_table table;
    ui_table_source src;
    struct ui_view_ctx *ctx; /* the source's state (ui/views/view_internal.h) */
};

/* ---- the log ring (kept by the state, shown by the log view) ------------------ */

enum { UI_LOG_LINES = 1000, UI_LOG_TEXT = 512 };

typedef struct ui_log_line {
    unsigned long long seq;  /* 1, 2, …: the row key */
    char time[9];            /* "12:03:04" */
    sync_log_level level;
    char text[UI_LOG_TEXT];
    /* A line about a failure (ui_app_log_failure) keeps its typed parts for the
     * details: kind NONE for other lines. */
    sync_failure_kind failure;
    int http_status;
    char error_code[64];
    char operation_id[MODEL_ID_MAX + 1];
} ui_log_line;

typedef struct ui_log_ring {
    ui_log_line *lines;      /* UI_LOG_LINES slots */
    size_t len, head;        /* oldest at head */
    unsigned long long next_seq;
} ui_log_ring;

/* The i-th oldest line kept (i < len). */
const ui_log_line *ui_log_at(const ui_log_ring *r, size_t i);

/* ---- the state ------------------------------------------------------------------ */

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

/* What the loop does with an event from another thread (ui_app_drain). */
typedef void (*ui_event_fn)(ui_app *app, const ui_event *ev);

struct ui_app {
    const ui_options *opt;
    store *st;
    store *browse;               /* read-only handle of the views (NULL: st) */
    ui_canvas canvas;
    ui_view *views[UI_VIEW_COUNT]; /* made and freed by the loop */
    ui_view_id view;
    ui_view_id history[UI_VIEW_COUNT]; /* views left for another, oldest first */
    int nhistory;
    ui_overlay overlays[UI_OVERLAYS_MAX];
    int noverlays;
    ui_prompt prompt;
    char status[512];
    bool status_error;
    ui_log_ring log;
    buf_t raw; /* bytes queued for the terminal (ui_app_raw): a wiping buffer */
    ui_sync *sync;               /* made and freed by the loop */
    /* The header's sync state, set before each frame: the same state said from the
     * longest to the shortest way; the header draws the first that fits. */
    char sync_text[UI_SYNC_TEXTS][UI_SYNC_TEXT_MAX];
    int nsync_text;
    double (*clock)(void *ctx);  /* the console's clock (wall seconds); a fake in tests */
    void *clock_ctx;
    double last_key_at;          /* the console's clock at the last key */
    bool esc_clears_marks;       /* the last key was an Esc that kept the marks */
    agent *agent;
    char agent_error[160];
    struct ui_impact *impact;    /* the impact_log worker (ui/app/impact_worker.c) */
    char impact_text[UI_SYNC_TEXT_MAX]; /* its last summary, in the pending view's
                                           header; "" none */
    bool quit;
    int exit_status;
    char profile_request[UI_PROMPT_MAX + 1]; /* `:profile NAME`: taken by the driver */
    bool repaint;
    long long data_version;
    bool have_version;
    bool queue_stale;            /* set by ui_app_reload: the header's counts of the
                                    rows a sync or the user still has to settle are
                                    read again before the next frame */
    ui_event_fn on_event;        /* set by the loop */
    /* events from other threads */
    pthread_mutex_t lock;
    ui_event *queue;             /* UI_QUEUE_MAX */
    size_t qhead, qlen;
    ui_event progress;           /* the last progress that did not fit */
    bool progress_pending;
    int wake[2];
};

/* The state of a console on a `width` x `height` canvas, with no view and no sync
 * state yet (the loop adds them). ui_state_free releases it. */
error_code ui_state_new(const ui_options *opt, int width, int height, bool ascii,
                        ui_app **out, error_info *err);

/* Close every overlay and the prompt, and free what the state owns; the views and
 * the sync state must be gone already (the loop frees them first). NULL: no-op. */
void ui_state_free(ui_app *app);

/* The current view, its id, and a view by id. */
ui_view *ui_app_view(ui_app *app);
const ui_view *ui_app_view_const(const ui_app *app);
ui_view_id ui_app_view_id(const ui_app *app);

/* Switch to view `id` (closing overlays and the prompt); the view left is kept to
 * go back to ('q'), each view once. */
void ui_app_switch(ui_app *app, ui_view_id id);

/* Whether 'q' goes back (clears the filter or the scope, or returns to the view
 * left for this one) rather than quitting. */
bool ui_app_can_go_back(const ui_app *app);

/* Go back to the view left for this one; false when there is none. */
bool ui_app_go_back(ui_app *app);

/* Below the minimum size: the screen only says so, and keys other than q/Q are
 * ignored (nothing may happen that the admin cannot see). */
bool ui_app_too_small(const ui_app *app);

/* The status message as its area shows it ("error: " first for an error), into
 * buf; "" when there is none, or the prompt has the row. */
void ui_app_status_text(const ui_app *app, char *buf, size_t size);

/* The rows the status area takes: UI_STATUS_ROWS, or the lines of the message
 * wrapped to the screen's width (ui_canvas_wrap, one column of margin), at most
 * UI_STATUS_ROWS_MAX and half the rows under the header (the last row cut with
 * "…" when the message needs more; an error's whole text is in the log view). Read from the state,
 * so the layout (the view's height) and the drawing agree. */
int ui_app_status_rows(const ui_app *app);

/* The screen between the header and the status area: the current view's, and the
 * overlays'. */
ui_rect ui_app_body(const ui_app *app);

/* The prompt of the status row: open it (the filter starts from the view's) or
 * close it. */
void ui_app_prompt_open(ui_app *app, ui_prompt_kind kind);
void ui_app_prompt_close(ui_app *app);

/* Close the top overlay, one by its `self` (it may no longer be on top: it opened
 * another), or all of them (view switch, quit). */
void ui_app_close_top(ui_app *app);
void ui_app_close(ui_app *app, void *self);
void ui_app_close_all(ui_app *app);

/* The console's clock: wall-clock seconds since the epoch (CLOCK_REALTIME), or the
 * clock set with ui_app_set_clock (the headless runner's, moved by `tick`). Ages,
 * countdowns and the idle auto-pull read it. */
double ui_app_now(const ui_app *app);
void ui_app_set_clock(ui_app *app, double (*now)(void *ctx), void *ctx);

/* Append a line about a failure to the log view: `line` as ui_app_log, and the
 * failure's kind, status, error code and operation id for its details. */
void ui_app_log_failure(ui_app *app, sync_log_level level, const char *line,
                        const sync_failure *f);

/* Whether the user may be typing: an overlay (a form, a dialog) or the prompt is
 * open. */
bool ui_app_busy(const ui_app *app);

/* The log the log view shows. */
const ui_log_ring *ui_app_log_ring(ui_app *app);

/* The handle the views read through: a read-only one of its own (a reader's small
 * page cache, so browsing a large cache costs little memory, and the console's
 * own writes show up in its data_version like anyone's), or ui_app_store's. */
store *ui_app_browse_store(ui_app *app);

/* The canvas frames are drawn into; a new size for it (the views follow at the
 * next frame). */
ui_canvas *ui_app_canvas(ui_app *app);
error_code ui_app_resize(ui_app *app, int width, int height, error_info *err);

/* Whether the user asked to quit, and the exit status to end with. */
bool ui_app_quitting(const ui_app *app, int *status);
void ui_app_quit(ui_app *app, int status);

/* Ctrl-L was pressed since the last call (the terminal repaints everything). */
bool ui_app_take_repaint(ui_app *app);

/* Where the terminal's cursor belongs (the prompt being typed in), false when it
 * is hidden. */
bool ui_app_text_cursor(const ui_app *app, int *y, int *x);

/* Handle the events other threads posted, through the loop's handler (never
 * blocks); the pipe that wakes the loop when one is posted. */
void ui_app_drain(ui_app *app);
int ui_app_wake_fd(const ui_app *app);

#endif
