/*
 * ui_app: what the console (its state in ui/state/app.c, its loop in ui/app/loop.c)
 * offers to the parts drawn inside it (views, overlays) and what those parts offer
 * back. The console owns the terminal, the canvas and every piece of state below;
 * nothing here is thread-safe except ui_app_post, the one door for other threads
 * (the sync worker, the agent).
 *
 * - Keys become requests through a table (ui/app/keymap.c), per view, like tig: a
 *   key means one ui_request; views and overlays act on requests, not on raw keys,
 *   except overlays that take text (forms, the filter and command line), which
 *   get the raw key first.
 * - An overlay (form, dialog, help) sits on top of the current view and gets
 *   every key until it closes itself; several may stack (a confirmation above a
 *   form). The loop draws the view, then the overlays bottom to top.
 * - Mutations (create, edit, resolve, delete, retry, discard, sync) go through
 *   the ui_action_* functions (ui/app/actions.c, ui/app/edit.c), which check the
 *   read-only flag themselves: a refused action says so in the status line and
 *   changes nothing.
 * - Memory: a pushed overlay's state is owned by the loop from then on and freed
 *   through its ops->free when it closes or the console ends.
 * - Dependencies run one way: keys -> actions -> the state; a frame is drawn
 *   from the state and only reads it (overlays fit themselves to the screen in
 *   their layout op, before the frame, and draw from what they hold).
 */
#ifndef RAMPART_UI_APP_H
#define RAMPART_UI_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/model.h"
#include "rampart/store.h"
#include "rampart/sync.h"
#include "rampart/ui.h"
#include "rampart/ui_canvas.h"
#include "rampart/ui_key.h"

typedef struct ui_app ui_app;

typedef enum ui_request {
    UI_REQ_NONE,
    UI_REQ_UP, UI_REQ_DOWN, UI_REQ_PAGE_UP, UI_REQ_PAGE_DOWN,
    UI_REQ_HALF_UP, UI_REQ_HALF_DOWN, UI_REQ_FIRST, UI_REQ_LAST,
    UI_REQ_ENTER,        /* details of the row */
    UI_REQ_FILTER,       /* '/' live filter */
    UI_REQ_POLICY,       /* 'p' rules of one policy */
    UI_REQ_SORT,         /* 'o' next sort column; 'O' reverses */
    UI_REQ_SORT_REVERSE,
    UI_REQ_ID_COLUMN,    /* 'i' hide or show the id column (Enter shows the id whole) */
    UI_REQ_MARK,         /* space */
    UI_REQ_MARK_RANGE,   /* 'V': marks from the last mark to the cursor */
    UI_REQ_UNMARK_ALL,
    UI_REQ_CREATE,       /* 'c' */
    UI_REQ_DELETE,       /* 'd' */
    UI_REQ_RETRY,        /* 'r' a failed row */
    UI_REQ_DISCARD,      /* 'x' a failed/remote-deleted row */
    UI_REQ_UNDO,         /* 'u' take back the row's queued create, edit or delete */
    UI_REQ_EDIT,         /* 'e' the row's edit form */
    UI_REQ_RESOLVE,      /* 'R' a conflict: keep local or take remote */
    UI_REQ_REVEAL,       /* 't' show a held token (asks first; off when read-only) */
    UI_REQ_ROTATE,       /* 'T' rotate the credential: queue its successor */
    UI_REQ_COPY_ID,      /* 'y' the row's id to the clipboard (OSC 52) */
    UI_REQ_COPY_CIDR,    /* 'Y' the rule's cidr to the clipboard */
    UI_REQ_SYNC,         /* 's' */
    UI_REQ_HELP,         /* '?' */
    UI_REQ_PROMPT,       /* ':' */
    UI_REQ_VIEW_NEXT,    /* Tab */
    UI_REQ_VIEW_PREV,    /* BTab */
    UI_REQ_VIEW_RULES, UI_REQ_VIEW_CREDS, UI_REQ_VIEW_PENDING, UI_REQ_VIEW_LOG, /* 1..4 */
    UI_REQ_REDRAW,       /* Ctrl-L */
    UI_REQ_BACK,         /* 'q': clear the filter/policy, back to the view left for
                            this one, or quit when there is nothing to go back to */
    UI_REQ_CANCEL,       /* Esc */
    UI_REQ_QUIT,         /* 'Q' or :quit */
    UI_REQ_COUNT
} ui_request;

/* A record on screen: its kind and id. */
typedef struct ui_row_ref {
    model_kind kind;
    char id[MODEL_ID_MAX + 1];
} ui_row_ref;

/* ---- overlays -------------------------------------------------------------- */

typedef enum ui_overlay_result {
    UI_OVERLAY_KEEP,   /* stays open */
    UI_OVERLAY_CLOSE   /* close it (the loop frees it) */
} ui_overlay_result;

typedef struct ui_overlay_ops {
    const char *name;  /* "confirm", "create rule": for logs and the header */
    /* Before a frame is drawn: fit the overlay to the screen `area` (the whole
     * canvas minus the header/status), keeping what its keys need (a page's
     * height, a scroll position). May be NULL. */
    void (*layout)(void *self, const ui_canvas *c, ui_rect area);
    /* Draw inside `area` from what the overlay holds: reads, never changes. */
    void (*draw)(const void *self, const ui_app *app, ui_canvas *c, ui_rect area);
    /* A raw key (ui_key) and the request the current keymap gives it. */
    ui_overlay_result (*key)(void *self, ui_app *app, int key, ui_request req);
    void (*free)(void *self);
    /* The key bar's keys while it is on top (a form's: Enter save, Tab next
     * field, ...), at most `max`; returns how many. NULL: the view's key bar. */
    size_t (*hints)(const void *self, ui_key_hint *out, size_t max);
} ui_overlay_ops;

/* Push an overlay; the loop owns `self` from now on (freed through ops->free). */
error_code ui_app_push(ui_app *app, const ui_overlay_ops *ops, void *self, error_info *err);

/* ---- services of the console's state (ui/state/app.c) -------------------- */

/* The writer's handle of the cache (actions write through it). */
store *ui_app_store(ui_app *app);
/* The options the console runs with (borrowed for the whole run). */
const ui_options *ui_app_options(const ui_app *app);
/* Started with --readonly (or on a follower's cache): no change, no token. */
bool ui_app_readonly(const ui_app *app);

/* Why it is read-only, for messages: "started with --readonly" or the setting. */
const char *ui_app_readonly_why(const ui_app *app);

/* A message in the status line until the next key (error: styled as one, and
 * also added to the log view). printf-style. */
void ui_app_status(ui_app *app, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Append a line to the log view (time-stamped by the loop). */
void ui_app_log(ui_app *app, sync_log_level level, const char *line);

/* The cache changed under the views (a create, a delete, a sync): re-read the
 * visible pages and counts before the next draw, keeping the cursor's row. */
void ui_app_reload(ui_app *app);

/* The record under the cursor of the current view: false when the view is empty
 * or its rows are not records (the log). */
bool ui_app_current(ui_app *app, ui_row_ref *out);

/* The marked records of the current view, in the order of their keys (copied into
 * `out`, at most `max`); returns how many are marked in all. */
size_t ui_app_marked(ui_app *app, ui_row_ref *out, size_t max);

/* Forget the marks of the current view (after a delete). */
void ui_app_unmark_all(ui_app *app);

/* ---- events from other threads ------------------------------------------- */

typedef enum ui_event_kind {
    UI_EVENT_SYNC_PROGRESS, /* progress */
    UI_EVENT_SYNC_LOG,      /* level + line */
    UI_EVENT_SYNC_DONE,     /* report + code + line (the error message) */
    UI_EVENT_AGENT_LOG,     /* line (an audit line) */
    UI_EVENT_IMPACT         /* line: the pending view's impact summary */
} ui_event_kind;

typedef struct ui_event {
    ui_event_kind kind;
    sync_progress progress;  /* its failure pointer is NULL in an event: a progress
                                event carries a copy of the failure in
                                report.failure (kind NONE when there was none) */
    sync_log_level level;
    sync_report report;
    error_code code;
    char line[512];
} ui_event;

/* Queue an event for the loop and wake it. Thread-safe; never blocks for long.
 * Returns false when the queue is full (progress events may be dropped; the loop
 * keeps the last one). */
bool ui_app_post(ui_app *app, const ui_event *ev);

/* ---- actions (ui/app/actions.c, ui/app/edit.c, ui/sync_worker.c) --------------- */

/* 'c' in a record view: open the create form of its kind. */
void ui_action_create(ui_app *app, model_kind kind);

/* 'd': confirm (default No) then delete the marked rows, or the current row when
 * none is marked. */
void ui_action_delete(ui_app *app);

/* 'r' / 'x' on the current row (and marked rows). */
void ui_action_retry(ui_app *app);
void ui_action_discard(ui_app *app);
/* 'u': take back the queued create, edit or delete of the row under the cursor
 * (store_discard, as `rules discard` does); the status line says what was undone,
 * or why nothing was (nothing queued, or the change is being sent). */
void ui_action_undo(ui_app *app);

/* 'e' on a record: its edit form, pre-filled, the fields that never change
 * read-only; Enter saves the changed fields with store_edit. A row whose state
 * allows no edit (creating, deleting…) gets a status message and no form. */
void ui_action_edit(ui_app *app);

/* 'R' on a conflicting row: a dialog with both sides' values, "Keep local" /
 * "Take remote" / "Cancel"; the answer goes to store_resolve. */
void ui_action_resolve(ui_app *app);

/* 't' on a credential: confirm, then show its token once (OSC 52 copy offered). */
void ui_action_reveal(ui_app *app);

/* 'T' on a credential: start its rotation (store_rotation_start, the grace
 * period and command of the settings); the status line says what follows, and
 * why not when it cannot be rotated. The next sync creates the successor. */
void ui_action_rotate(ui_app *app);

/* 'y' / 'Y': send the row's id / the rule's cidr to the terminal's clipboard
 * (ui_clipboard_send); the status line says it was sent, not that it was copied. */
void ui_action_copy(ui_app *app, bool cidr);

/* 's': start a sync in the worker thread (refused while one runs). */
void ui_action_sync(ui_app *app);

/* Whether a sync is running, and the header's text for the sync state, its
 * longest form ("synced 12s ago", "pushing 3 of 40, paced: 1.6 req/s, ETA 25s",
 * "rate limited (429), retry in 12s", "server error 503: busy (op_…), retry in 4s",
 * "unreachable, retry in 30s", "2 failed", "never synced") into buf. Causes come
 * from the engine's typed progress and report (rampart/ui_sync_text.h); an age
 * comes from the cache's STORE_META_LAST_SYNC when the console has not synced. */
bool ui_sync_running(ui_app *app);
void ui_sync_state_text(ui_app *app, char *buf, size_t size);

/* The loop hands every sync event to the worker's side first (so it can keep the
 * state for the header and, on DONE, show the tokens of credentials created in
 * this console: once, then masked). The loop itself then adds SYNC_LOG lines to
 * the log view (the worker's side must not: they would show twice) and, on
 * SYNC_DONE, reloads every view; anything else (the DONE message in the status
 * line, errors on rows) is the worker side's. */
void ui_sync_on_event(ui_app *app, const ui_event *ev);

/* Wait for a running sync to end (headless `wait-sync`, and when quitting: the
 * worker is asked to stop between requests first). */
void ui_sync_join(ui_app *app, bool cancel);

/* Per-console state of the worker side, kept by the console (opaque to it): the
 * console's own (NULL when it has none), a new one, and freeing one (which joins a
 * running worker, cancelling it, first). */
typedef struct ui_sync ui_sync;
ui_sync *ui_app_sync(ui_app *app);
error_code ui_sync_new(ui_sync **out, error_info *err);
void ui_sync_free(ui_sync *s);

/* ---- raw terminal output (ui/state/app_raw.c) ------------------------------ */

/*
 * Bytes for the terminal itself, not for the screen grid: an OSC 52 clipboard
 * copy (wrapped in tmux's DCS passthrough when $TMUX is set). ui_app_raw queues a
 * copy (ui thread only; kept in the console's state).
 * The terminal loop (ui/app/ui.c), after the terminal's doupdate, writes the
 * queued bytes as they are to the terminal and then calls ui_app_raw_clear, which
 * wipes them (they may hold a token). It must do so even when no row changed.
 * Headless: the runner may just clear them.
 */
void ui_app_raw(ui_app *app, const char *bytes, size_t n);
/* The queued bytes (NULL and *n = 0 when none); valid until the next ui_app_raw*. */
const char *ui_app_raw_peek(const ui_app *app, size_t *n);
/* Wipe and drop the queued bytes. */
void ui_app_raw_clear(ui_app *app);

#endif
