/*
 * sync_internal: the console's sync state, shared by its two files. Private.
 * - sync_worker.c: the worker thread (sync_run with its own store handle and API
 *   client, retries of an unreachable remote) and the ui thread's side of it:
 *   starting a run (the user's, or the idle auto-pull), joining it, handling its
 *   events, showing new tokens.
 * - sync_status.c: what the console says about the sync (the header's texts, the
 *   log lines of waits and failures, all from the engine's typed progress and
 *   report through rampart/ui_sync_text.h), the last sync the cache knows of
 *   (STORE_META_LAST_SYNC), whether a run is going and the monotonic clock.
 *   The calls run one way: sync_worker.c calls sync_status.c, never back.
 * Fields under `lock` are shared with the worker; the rest is the ui thread's.
 */
#ifndef RAMPART_UI_SYNC_INTERNAL_H
#define RAMPART_UI_SYNC_INTERNAL_H

#include <pthread.h>

#include "app_internal.h"

struct ui_sync {
    ui_app *app;

    /* the worker: fields below `lock` are shared with it */
    pthread_t thread;
    bool active;          /* ui thread: a thread was started and not joined yet */
    const ui_options *opt; /* borrowed for the whole run: settings, db path */
    api_config api;
    bool automatic;       /* this run is an idle auto-pull: pull only, a small share of
                             the budget, no retries */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    volatile bool cancel; /* the engine's cancel flag */
    bool no_retry;        /* end after the current attempt */
    bool retry_now;       /* 's' while waiting to retry */
    bool finished;        /* the worker posts nothing more (its last DONE is out) */
    bool exited;          /* the worker is about to return */
    double retry_at;      /* waiting to retry until then (monotonic s); 0: not */
    unsigned done_posted; /* DONE events the queue took */
    ui_event last_done;   /* the last attempt's result */

    /* header state (ui thread); times on the console's clock (ui_app_now) */
    bool joining;         /* inside ui_sync_join's drain loop: it joins, not DONE */
    unsigned done_seen, done_ignore_upto;
    bool final_handled;   /* the run's last DONE was handled */
    bool have_progress;
    sync_progress progress;   /* the last progress (its failure pointer cleared) */
    sync_failure wait_failure; /* the failure behind the last wait, copied */
    bool have_wait_failure;
    sync_progress phase_progress; /* the last progress that was not a wait */
    double progress_at;
    bool have_result, last_offline, last_automatic;
    error_code last_code;
    sync_report last_report;
    double last_at;
    /* the last sync the cache knows of (STORE_META_LAST_SYNC, wall seconds) */
    bool stored_known;
    double stored_at;
    /* the rows left after the last run, by cause, as the cache has them now (a
       resolve or a discard changes them before any sync) */
    bool have_queue;
    size_t queue_pending, queue_failed, queue_conflicts;
    /* the idle auto-pull */
    bool idle_started;
    double idle_since;    /* the console's first idle check */
    /* the last wait logged, so a countdown's repeats log once */
    sync_wait_cause logged_cause;
    double logged_end;
};

/* ---- sync_status.c --------------------------------------------------------- */

/* Monotonic seconds (the worker's retry times). */
double ui_sync_mono_now(void);

/* A progress event: keep it for the header (copying the failure behind a wait) and
 * log a wait for a 429 or a failure once when it starts. */
void ui_sync_status_progress(ui_app *app, ui_sync *s, const ui_event *ev);

/* A run's end: log why it stopped and the last row that did not go, from the
 * report's typed failures; re-read the cache's last sync. */
void ui_sync_status_done(ui_app *app, ui_sync *s, const ui_event *ev);

/* Re-read the header's counts of pending, failed and conflict rows through the
 * browse store. */
void ui_sync_read_queue(ui_app *app);

/* Re-read STORE_META_LAST_SYNC through the browse store. */
void ui_sync_read_last_sync(ui_app *app);

/* The texts of the header's sync state, longest first, into texts[0..max);
 * returns how many (at least 1). */
int ui_sync_texts(ui_app *app, char (*texts)[UI_SYNC_TEXT_MAX], int max);

/* Whether the header's text changes with time (an age, a countdown, a running
 * sync) or an auto-pull may come: the terminal then wakes every second. */
bool ui_sync_ticking(ui_app *app);

/* ---- sync_worker.c --------------------------------------------------------- */

/* Start an idle auto-pull when one is due (see ui.h): true when it started. */
bool ui_sync_idle(ui_app *app);

#endif
