/*
 * The console's sync worker (ui_app.h, ui_sync_*): sync_run in its own thread,
 * with its own store handle on the same database and its own API client, so the
 * console stays responsive. The worker never touches the loop's state: it posts
 * events (progress, log lines, one DONE per attempt) through ui_app_post.
 *
 * When the remote cannot be reached (the report's typed failure, through
 * sync_report_should_retry: never a message's text) the worker retries by itself
 * after a backoff (30 s, 60 s, 120 s, 240 s; then it stops and the header says
 * when it last tried). While it waits the sync counts as running: the header counts down
 * ("offline, retry in 30s"), 's' retries at once, quitting cancels it, and
 * `wait-sync` (ui_sync_join without cancel) ends it after the current attempt.
 *
 * After each attempt the tokens not yet shown (this sync's creates, or an earlier
 * one's nobody saw) are shown, once (the token dialog; store_token_unseen).
 *
 * The idle auto-pull starts here too (ui_sync_idle). What the console says about
 * a run is sync_status.c's: this file hands it each event.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rampart/api.h"
#include "rampart/ui_sync_text.h"
#include "sync_internal.h"
#include "rampart/ui_dialog.h"

enum { RETRIES_MAX = 4, FIRST_RETRY_S = 30, POST_TRIES = 2500 };

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}


error_code ui_sync_new(ui_sync **out, error_info *err)
{
    *out = NULL;
    ui_sync *s = calloc(1, sizeof *s);
    if (!s)
        return error_set(err, ERROR_NOMEM, "out of memory");
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s);
        return error_set(err, ERROR_NOMEM, "cannot make a mutex");
    }
    if (pthread_cond_init(&s->cond, &ca) != 0) {
        pthread_mutex_destroy(&s->lock);
        free(s);
        return error_set(err, ERROR_NOMEM, "cannot make a condition variable");
    }
    pthread_condattr_destroy(&ca);
    *out = s;
    return ERROR_OK;
}

static void stop_worker(ui_sync *s, bool cancel)
{
    if (!s->active)
        return;
    pthread_mutex_lock(&s->lock);
    if (cancel)
        s->cancel = true;
    s->no_retry = true;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    s->active = false;
}

void ui_sync_free(ui_sync *s)
{
    if (!s)
        return;
    stop_worker(s, true);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---- the worker thread --------------------------------------------------------- */

/* Post, retrying while the queue is full (a log line or a result must not be
 * lost); progress is never retried: the loop keeps the last one anyway. */
static bool post(ui_sync *s, const ui_event *ev)
{
    for (int i = 0; i < POST_TRIES; i++) {
        if (ui_app_post(s->app, ev))
            return true;
        if (ev->kind == UI_EVENT_SYNC_PROGRESS || s->cancel)
            return false;
        nap_ms(2);
    }
    return false;
}

static void on_progress(void *ctx, const sync_progress *p)
{
    ui_event ev = {.kind = UI_EVENT_SYNC_PROGRESS, .progress = *p};
    /* The failure lives only during the callback: the event carries a copy. */
    ev.progress.failure = NULL;
    if (p->failure)
        ev.report.failure = *p->failure;
    post(ctx, &ev);
}

static void on_log(void *ctx, sync_log_level level, const char *line)
{
    ui_event ev = {.kind = UI_EVENT_SYNC_LOG, .level = level};
    snprintf(ev.line, sizeof ev.line, "%s", line);
    post(ctx, &ev);
}

static void attempt(ui_sync *s, store *st, ui_event *ev)
{
    error_info e = {0};
    api_client *client = NULL;
    memset(ev, 0, sizeof *ev);
    ev->kind = UI_EVENT_SYNC_DONE;
    const ui_options *o = s->opt;
    sync_options so = {
        .push = !s->automatic, .pull = true, .budget = o->budget,
        .deadline_s = o->deadline_s, .max_backoff_s = o->max_backoff_s,
        .rotate_quiet_s = o->rotate_quiet_s, .rotate_keep_s = o->rotate_keep_s,
        .on_progress = on_progress, .on_log = on_log, .cb_ctx = s, .cancel = &s->cancel,
    };
    if (s->automatic)
        so.budget = ui_auto_pull_budget(&o->budget);
    ev->code = api_client_new(&s->api, &client, &e);
    if (ev->code == ERROR_OK && st)
        ev->code = sync_run(st, api_ops(), client, &so, &ev->report, &e);
    api_client_free(client);
    if (ev->code != ERROR_OK)
        snprintf(ev->line, sizeof ev->line, "%s", e.msg);
}

/* Wait for the retry time, 's', a stop or a cancel; true: try again. */
static bool wait_retry(ui_sync *s)
{
    pthread_mutex_lock(&s->lock);
    struct timespec until;
    until.tv_sec = (time_t)s->retry_at;
    until.tv_nsec = (long)((s->retry_at - (double)until.tv_sec) * 1e9);
    while (!s->cancel && !s->no_retry && !s->retry_now && ui_sync_mono_now() < s->retry_at)
        pthread_cond_timedwait(&s->cond, &s->lock, &until);
    bool again = !s->cancel && !s->no_retry;
    s->retry_now = false;
    s->retry_at = 0;
    pthread_mutex_unlock(&s->lock);
    return again;
}

static void *worker(void *arg)
{
    ui_sync *s = arg;
    store *st = NULL;
    error_info e = {0};
    error_code open_rc = store_open(s->opt->db_path, 0, &st, &e);
    for (unsigned n = 0;; n++) {
        ui_event ev;
        if (open_rc == ERROR_OK) {
            attempt(s, st, &ev);
        } else {
            memset(&ev, 0, sizeof ev);
            ev.kind = UI_EVENT_SYNC_DONE;
            ev.code = open_rc;
            snprintf(ev.line, sizeof ev.line, "%s", e.msg);
        }
        pthread_mutex_lock(&s->lock);
        bool retry = sync_report_should_retry(&ev.report) && !s->cancel && !s->no_retry &&
                     !s->automatic && n < RETRIES_MAX;
        s->retry_at = retry ? ui_sync_mono_now() + (double)(FIRST_RETRY_S << n) : 0;
        s->finished = !retry;
        s->last_done = ev;
        pthread_mutex_unlock(&s->lock);
        bool posted = post(s, &ev);
        pthread_mutex_lock(&s->lock);
        s->done_posted += posted ? 1u : 0u;
        pthread_mutex_unlock(&s->lock);
        if (!retry)
            break;
        if (!wait_retry(s)) {
            /* only ui_sync_join or ui_sync_free stop it here: they are joining */
            pthread_mutex_lock(&s->lock);
            s->finished = true;
            pthread_mutex_unlock(&s->lock);
            break;
        }
        ui_event start = {.kind = UI_EVENT_SYNC_PROGRESS,
                          .progress = {.phase = SYNC_PHASE_PUSH, .eta_s = -1}};
        post(s, &start);
    }
    store_close(st);
    pthread_mutex_lock(&s->lock);
    s->exited = true;
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- the ui thread's side --------------------------------------------------------- */

static double retry_at(ui_sync *s)
{
    pthread_mutex_lock(&s->lock);
    double at = s->retry_at;
    pthread_mutex_unlock(&s->lock);
    return at;
}

/* Start a run: `automatic` for an idle auto-pull (pull only, no status line, no
 * retries), else the user's 's'. Refusals go to the status line (never for an
 * automatic run, whose caller checked first). */
static void start_run(ui_app *app, bool automatic)
{
    ui_sync *s = ui_app_sync(app);
    const ui_options *opt = ui_app_options(app);
    if (!opt->remote) {
        ui_app_status(app, true, "no remote configured: set api_url and api_key in the "
                      "config file (or the environment), or start with --sandbox");
        return;
    }
    if (!opt->db_path || !s) {
        ui_app_status(app, true, "sync needs the database's path");
        return;
    }
    if (s->active && retry_at(s) > 0) {
        pthread_mutex_lock(&s->lock);
        s->retry_now = true;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        ui_app_status(app, false, "retrying the sync now");
        return;
    }
    if (ui_sync_running(app)) {
        ui_app_status(app, false, s->automatic ? "an automatic pull is running (progress in "
                      "the header): press s again when it ends" : "a sync is already "
                      "running (progress in the header)");
        return;
    }
    ui_sync_join(app, false); /* a run that ended but whose result is still queued */
    s->app = app;
    s->opt = opt;
    s->api = opt->api;
    s->automatic = automatic;
    s->cancel = s->no_retry = s->retry_now = s->finished = s->exited = false;
    s->retry_at = 0;
    s->final_handled = false;
    s->have_progress = false;
    /* The worker takes no signals: the loop's thread handles them (resize, quit). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->thread, NULL, worker, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        ui_app_status(app, true, "could not start the sync thread");
        return;
    }
    s->active = true;
    if (automatic)
        ui_app_log(app, SYNC_LOG_INFO, "automatic pull (idle): started");
    else
        ui_app_status(app, false, "sync started: keys keep working, progress in the header");
}

void ui_sync_start(ui_app *app)
{
    start_run(app, false);
}

/* The status line after a user's run: why it stopped, or the one summary the
 * command line prints too (sync_report_summary), then where to go for what is
 * left, by cause. Only failed rows make it an error: a conflict is not one. */
static void say_result(ui_app *app, const ui_event *ev, double retry)
{
    const sync_report *r = &ev->report;
    if (ev->code != ERROR_OK && retry > 0) {
        ui_app_status(app, true, "sync: %s; retrying in %.0fs ('s' now)", ev->line,
                      retry - ui_sync_mono_now());
        return;
    }
    if (ev->code != ERROR_OK) {
        ui_app_status(app, true, "sync: %s", ev->line);
        return;
    }
    if (r->cancelled) {
        ui_app_status(app, false, "sync cancelled");
        return;
    }
    char summary[UI_SYNC_TEXT_MAX];
    sync_report_summary(r, summary, sizeof summary);
    size_t conflicted = r->conflicted < r->attention ? r->conflicted : r->attention;
    bool failed_rows = r->attention > conflicted;
    ui_app_status(app, failed_rows, "sync: %s%s%s", summary,
                  conflicted ? ": R on a conflict resolves it (pending view, 3)" : "",
                  failed_rows ? conflicted ? "; failed rows: see the log (4)"
                                           : ": see the pending view (3) and the log (4)"
                              : "");
}

static void handle_done(ui_app *app, ui_sync *s, const ui_event *ev)
{
    double retry = retry_at(s);
    s->have_result = true;
    s->have_progress = false;
    s->last_code = ev->code;
    s->last_report = ev->report;
    s->last_offline = ev->report.failure.kind == SYNC_FAILURE_UNREACHABLE;
    s->last_automatic = s->automatic;
    s->last_at = ui_app_now(app);
    pthread_mutex_lock(&s->lock);
    bool last = s->finished && s->done_seen >= s->done_posted;
    pthread_mutex_unlock(&s->lock);
    if (last)
        s->final_handled = true;
    if (s->active && last && !s->joining) {
        pthread_join(s->thread, NULL);
        s->active = false;
    }
    ui_sync_status_done(app, s, ev);
    if (!s->automatic)
        say_result(app, ev, retry);
    ui_token_show_unseen(app); /* the tokens this sync brought */
}

void ui_sync_on_event(ui_app *app, const ui_event *ev)
{
    ui_sync *s = ui_app_sync(app);
    if (!s)
        return;
    if (ev->kind == UI_EVENT_SYNC_PROGRESS) {
        ui_sync_status_progress(app, s, ev);
        return;
    }
    if (ev->kind != UI_EVENT_SYNC_DONE)
        return;
    if (++s->done_seen <= s->done_ignore_upto)
        return; /* already handled by ui_sync_join */
    handle_done(app, s, ev);
}

static bool worker_exited(ui_sync *s)
{
    pthread_mutex_lock(&s->lock);
    bool e = s->exited;
    pthread_mutex_unlock(&s->lock);
    return e;
}

void ui_sync_join(ui_app *app, bool cancel)
{
    ui_sync *s = ui_app_sync(app);
    if (!s || !s->active)
        return;
    if (!cancel) {
        /* Keep handling its events while it ends: it waits for room in the queue
         * to post a log line or its result, and nobody else drains it now. */
        pthread_mutex_lock(&s->lock);
        s->no_retry = true;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        s->joining = true;
        while (!worker_exited(s)) {
            struct pollfd p = {.fd = ui_app_wake_fd(app), .events = POLLIN};
            poll(&p, 1, 100);
            ui_app_drain(app);
        }
        s->joining = false;
    }
    stop_worker(s, cancel);
    if (cancel || s->final_handled)
        return;
    /* Its last result may still be queued: handle it now, ignore it later. */
    pthread_mutex_lock(&s->lock);
    ui_event last = s->last_done;
    s->done_ignore_upto = s->done_posted;
    pthread_mutex_unlock(&s->lock);
    handle_done(app, s, &last);
    s->final_handled = true;
}

/* ---- the idle auto-pull ------------------------------------------------------------ */

/* A key may have come this recently before an auto-pull (a user between keys). */
#define IDLE_QUIET_S 5.0

static double later(double a, double b)
{
    return a > b ? a : b;
}

bool ui_sync_idle(ui_app *app)
{
    ui_sync *s = ui_app_sync(app);
    const ui_options *o = ui_app_options(app);
    if (!s || !o->remote || o->readonly || !(o->auto_pull_s > 0) || !o->db_path)
        return false;
    double now = ui_app_now(app);
    if (!s->idle_started) {
        s->idle_started = true;
        s->idle_since = now;
    }
    if (ui_sync_running(app) || ui_app_busy(app) || ui_app_too_small(app))
        return false;
    if (app->last_key_at > 0 && now - app->last_key_at < IDLE_QUIET_S)
        return false;
    double from = s->idle_since;
    if (s->have_result)
        from = later(from, s->last_at);
    if (s->stored_known)
        from = later(from, s->stored_at);
    if (now - from < o->auto_pull_s)
        return false;
    start_run(app, true);
    return true;
}
