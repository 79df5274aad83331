/*
 * What the console says about the sync (sync_internal.h): the header's texts and
 * the log's lines about waits and failures, every cause named from the engine's
 * typed progress and report (rampart/ui_sync_text.h), never from a message's
 * text; the last sync the cache knows of (STORE_META_LAST_SYNC), so the header's
 * age survives a restart; whether a run is going (ui_sync_running) and the
 * clock of the worker's retries. It reads the worker's state and never starts,
 * stops or joins a run: sync_worker.c calls it, never the other way.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rampart/duration.h"
#include "rampart/kind.h"
#include "rampart/ui_sync_text.h"
#include "sync_internal.h"

enum { PIECE = 400 };

/* ---- the worker's state ------------------------------------------------------- */

static bool worker_finished(ui_sync *s)
{
    pthread_mutex_lock(&s->lock);
    bool f = s->finished;
    pthread_mutex_unlock(&s->lock);
    return f;
}

bool ui_sync_running(ui_app *app)
{
    ui_sync *s = ui_app_sync(app);
    return s && s->active && !worker_finished(s);
}

/* ---- texts, longest first ---------------------------------------------------- */

typedef struct texts {
    char (*t)[UI_SYNC_TEXT_MAX];
    int n, max;
} texts;

/* Add a text unless it is already there or there is no room. */
static void put(texts *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(texts *x, const char *fmt, ...)
{
    if (x->n >= x->max)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->t[x->n], UI_SYNC_TEXT_MAX, fmt, ap);
    va_end(ap);
    for (int i = 0; i < x->n; i++) {
        if (strcmp(x->t[i], x->t[x->n]) == 0)
            return;
    }
    x->n++;
}

/* What a phase is doing: "pushing 3 of 40", "pulling, 120 rows", … */
static void phase_text(const sync_progress *p, char *buf, size_t size)
{
    switch (p->phase) {
    case SYNC_PHASE_PUSH:
        if (p->total)
            snprintf(buf, size, "pushing %zu of %zu", p->done, p->total);
        else
            snprintf(buf, size, "syncing");
        return;
    case SYNC_PHASE_PULL:
        snprintf(buf, size, "pulling, %zu rows", p->done);
        return;
    case SYNC_PHASE_RECONCILE:
        snprintf(buf, size, "reconciling");
        return;
    case SYNC_PHASE_WAIT:
    case SYNC_PHASE_DONE:
        break;
    }
    snprintf(buf, size, "finishing");
}

/* A running sync: its phase with the pace and the ETA, or why it waits with the
 * countdown (the push's count kept in sight). */
static void progress_texts(ui_app *app, const ui_sync *s, texts *x)
{
    const sync_progress *p = &s->progress;
    double since = ui_app_now(app) - s->progress_at;
    char base[96], pace[48], eta[48] = "";
    phase_text(&s->phase_progress, base, sizeof base);
    ui_pace_text(p->rate_per_s, pace, sizeof pace);
    if (p->eta_s >= 0) {
        char a[32];
        snprintf(eta, sizeof eta, ", ETA %s", duration_countdown(p->eta_s - since, a, sizeof a));
    }
    if (p->phase != SYNC_PHASE_WAIT || p->wait_cause == SYNC_WAIT_BUDGET) {
        put(x, "%s%s%s%s", base, pace[0] ? ", " : "", pace, eta);
        put(x, "%s%s", base, eta);
        put(x, "%s", base);
        return;
    }
    const sync_failure *f = s->have_wait_failure ? &s->wait_failure : NULL;
    char d[PIECE], sh[PIECE];
    ui_wait_text(p->wait_cause, f, p->wait_s - since, p->rate_per_s, true, d, sizeof d);
    ui_wait_text(p->wait_cause, f, p->wait_s - since, p->rate_per_s, false, sh, sizeof sh);
    /* The cause with what the server said first, then the push's count. */
    bool counted = s->phase_progress.phase == SYNC_PHASE_PUSH && s->phase_progress.total;
    if (counted)
        put(x, "%s, %s", base, d);
    put(x, "%s", d);
    if (counted)
        put(x, "%s, %s", base, sh);
    put(x, "%s", sh);
}

/* The worker waits to retry an unreachable remote: the cause and the countdown. */
static void retry_texts(const ui_sync *s, double at, texts *x)
{
    double left = at - ui_sync_mono_now();
    const sync_failure *f = &s->last_report.failure;
    char d[PIECE], sh[PIECE];
    ui_wait_text(SYNC_WAIT_BACKOFF, f, left, 0, true, d, sizeof d);
    ui_wait_text(SYNC_WAIT_BACKOFF, f, left, 0, false, sh, sizeof sh);
    put(x, "%s", d);
    put(x, "%s", sh);
}

/* "synced 12s ago": from the later of the cache's last sync (any process's) and
 * the end of the console's own last run. */
static void synced_texts(ui_app *app, const ui_sync *s, texts *x)
{
    char a[32];
    double at = s->stored_known ? s->stored_at : s->last_at;
    if (s->stored_known && s->have_result && s->last_at > at)
        at = s->last_at;
    put(x, "synced %s ago", duration_age(ui_app_now(app) - at, a, sizeof a));
}

/* "1 conflict, 1 failed" (and ", 2 pending" with `pending`): the rows that wait
 * for the user, each cause by its name. */
static void waiting_text(const ui_sync *s, bool pending, char *buf, size_t size)
{
    size_t c = s->queue_conflicts, f = s->queue_failed;
    snprintf(buf, size, "%s", "");
    if (c)
        snprintf(buf, size, "%zu conflict%s", c, c == 1 ? "" : "s");
    if (f) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "%s%zu failed", n ? ", " : "", f);
    }
    if (pending && s->queue_pending) {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "%s%zu pending", n ? ", " : "", s->queue_pending);
    }
}

/* The rows left, as the cache has them now (a resolve changes them before the
 * next sync): conflicts and failed rows by name, with the last row failure of the
 * run when rows failed in it; else the pending rows; else synced. */
static void left_texts(ui_app *app, const ui_sync *s, texts *x)
{
    const sync_report *r = &s->last_report;
    char d[PIECE], sh[PIECE], all[96], held[96];
    waiting_text(s, true, all, sizeof all);
    waiting_text(s, false, held, sizeof held);
    if (held[0]) {
        if (s->queue_failed && r->failed && r->row_failure.kind != SYNC_FAILURE_NONE) {
            put(x, "%s: %s", all, ui_failure_text(&r->row_failure, true, d, sizeof d));
            put(x, "%s: %s", all, ui_failure_text(&r->row_failure, false, sh, sizeof sh));
        }
        put(x, "%s", all);
        put(x, "%s", held);
    } else if (s->queue_pending) {
        /* A pull (an automatic one) leaves the queue as it was: its age still says
         * how fresh the listing is. */
        if (s->stored_known || !s->last_automatic) {
            char a[32];
            double at = s->stored_known && s->stored_at > s->last_at ? s->stored_at : s->last_at;
            put(x, "%zu pending, synced %s ago", s->queue_pending,
                duration_age(ui_app_now(app) - at, a, sizeof a));
        }
        put(x, "%zu pending", s->queue_pending);
    } else {
        synced_texts(app, s, x);
    }
}

/* How the last run ended: why it stopped, else the rows it left. */
static void result_texts(ui_app *app, const ui_sync *s, texts *x)
{
    char ago[32], d[PIECE], sh[PIECE];
    duration_age(ui_app_now(app) - s->last_at, ago, sizeof ago);
    const sync_report *r = &s->last_report;
    const sync_failure *f = &r->failure;
    if (r->cancelled) {
        put(x, "sync cancelled");
    } else if (f->kind == SYNC_FAILURE_UNREACHABLE) {
        put(x, "unreachable (tried %s ago)", ago);
    } else if (f->kind != SYNC_FAILURE_NONE) {
        put(x, "%s (%s ago)", ui_failure_text(f, true, d, sizeof d), ago);
        put(x, "%s (%s ago)", ui_failure_text(f, false, sh, sizeof sh), ago);
        put(x, "%s", sh);
    } else if (s->last_code != ERROR_OK) {
        put(x, "sync failed (%s ago)", ago);
    } else {
        left_texts(app, s, x);
    }
}

int ui_sync_texts(ui_app *app, char (*t)[UI_SYNC_TEXT_MAX], int max)
{
    texts x = {t, 0, max};
    ui_sync *s = ui_app_sync(app);
    if (max <= 0)
        return 0;
    double at = 0;
    if (s && ui_sync_running(app)) {
        pthread_mutex_lock(&s->lock);
        at = s->retry_at;
        pthread_mutex_unlock(&s->lock);
    }
    if (!s)
        put(&x, "never synced");
    else if (ui_sync_running(app) && at > 0)
        retry_texts(s, at, &x);
    else if (ui_sync_running(app) && s->have_progress)
        progress_texts(app, s, &x);
    else if (ui_sync_running(app))
        put(&x, "%s", s->automatic ? "pulling" : "syncing");
    else if (s->have_result)
        result_texts(app, s, &x);
    else if (s->stored_known)
        synced_texts(app, s, &x);
    else
        put(&x, "%s", ui_app_options(app)->remote ? "never synced" : "no remote");
    return x.n;
}

void ui_sync_state_text(ui_app *app, char *buf, size_t size)
{
    char t[1][UI_SYNC_TEXT_MAX];
    if (size == 0)
        return;
    ui_sync_texts(app, t, 1);
    snprintf(buf, size, "%s", t[0]);
}

/* ---- events -------------------------------------------------------------------- */

/* A wait for a 429 or after a failure, logged once when it starts: its repeats
 * (a countdown, about once a second) end where the logged one ends. */
static void log_wait(ui_app *app, ui_sync *s)
{
    const sync_progress *p = &s->progress;
    bool failure_wait = p->phase == SYNC_PHASE_WAIT &&
                        (p->wait_cause == SYNC_WAIT_RATE_LIMITED ||
                         p->wait_cause == SYNC_WAIT_BACKOFF);
    if (!failure_wait) {
        if (p->phase != SYNC_PHASE_WAIT)
            s->logged_cause = SYNC_WAIT_NONE;
        return;
    }
    double end = s->progress_at + p->wait_s;
    bool same = s->logged_cause == p->wait_cause && end <= s->logged_end + 1.5;
    s->logged_end = end;
    if (same)
        return;
    s->logged_cause = p->wait_cause;
    const sync_failure *f = s->have_wait_failure ? &s->wait_failure : NULL;
    char w[PIECE], line[PIECE + 16];
    ui_wait_text(p->wait_cause, f, p->wait_s, p->rate_per_s, true, w, sizeof w);
    snprintf(line, sizeof line, "waiting: %s", w);
    ui_app_log_failure(app, SYNC_LOG_WARN, line, f);
}

void ui_sync_status_progress(ui_app *app, ui_sync *s, const ui_event *ev)
{
    s->have_progress = s->active;
    s->progress = ev->progress;
    s->progress.failure = NULL;
    s->progress_at = ui_app_now(app);
    s->have_wait_failure = ev->report.failure.kind != SYNC_FAILURE_NONE;
    if (s->have_wait_failure)
        s->wait_failure = ev->report.failure;
    if (ev->progress.phase != SYNC_PHASE_WAIT)
        s->phase_progress = ev->progress;
    /* Each row pushed has a new state in the cache (the engine commits every
     * move): the views read it again, so the pending view shows it now. */
    if (s->phase_progress.phase == SYNC_PHASE_PUSH)
        ui_app_reload(app);
    log_wait(app, s);
}

/* " (rule local_…)", "" when the failure is about no row. */
static void object_text(const sync_failure *f, char *buf, size_t size)
{
    buf[0] = '\0';
    if (f->has_object && f->object_id[0])
        snprintf(buf, size, " (%s %s)", kind_get(f->object_kind)->noun, f->object_id);
    else if (f->has_object)
        snprintf(buf, size, " (listing %s)", kind_get(f->object_kind)->plural);
}

void ui_sync_status_done(ui_app *app, ui_sync *s, const ui_event *ev)
{
    const sync_report *r = &ev->report;
    char d[PIECE], obj[MODEL_ID_MAX + 32], line[UI_LOG_TEXT];
    s->logged_cause = SYNC_WAIT_NONE;
    if (r->failure.kind != SYNC_FAILURE_NONE) {
        object_text(&r->failure, obj, sizeof obj);
        snprintf(line, sizeof line, "sync stopped: %s%s",
                 ui_failure_text(&r->failure, true, d, sizeof d), obj);
        ui_app_log_failure(app, SYNC_LOG_ERROR, line, &r->failure);
    } else if (ev->code != ERROR_OK) {
        snprintf(line, sizeof line, "sync stopped: %.480s", ev->line);
        ui_app_log(app, SYNC_LOG_ERROR, line);
    }
    const sync_failure *rf = &r->row_failure;
    if (rf->kind != SYNC_FAILURE_NONE && rf->has_object) {
        snprintf(line, sizeof line, "%s %s not sent: %s", kind_get(rf->object_kind)->noun,
                 rf->object_id, ui_failure_text(rf, true, d, sizeof d));
        ui_app_log_failure(app, SYNC_LOG_WARN, line, rf);
    }
    if (s->automatic && ev->code == ERROR_OK && r->failure.kind == SYNC_FAILURE_NONE) {
        snprintf(line, sizeof line, "automatic pull (idle): %zu rules, %zu credentials listed",
                 r->pulled_rules, r->pulled_creds);
        ui_app_log(app, SYNC_LOG_INFO, line);
    }
    ui_sync_read_last_sync(app);
    ui_sync_read_queue(app);
}

/* ---- the rows left, by cause ---------------------------------------------------- */

/* Rows of every kind in `states` (bits 1u << state), through the browse store. */
static bool count_states(ui_app *app, unsigned states, size_t *out)
{
    store_query q = {.states = states};
    *out = 0;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        size_t n = 0;
        error_info e = {0};
        if (store_count(ui_app_browse_store(app), (model_kind)k, &q, &n, &e) != ERROR_OK)
            return false;
        *out += n;
    }
    return true;
}

#define STATE_BIT(s) (1u << MODEL_STATE_##s)

void ui_sync_read_queue(ui_app *app)
{
    ui_sync *s = ui_app_sync(app);
    if (!s)
        return;
    /* The states a sync still sends or settles: the engine's `pending`. */
    unsigned waiting = STATE_BIT(NEW) | STATE_BIT(CREATING) | STATE_BIT(UNKNOWN) |
                       STATE_BIT(DELETING) | STATE_BIT(ORPHANED) | STATE_BIT(EDITED);
    s->have_queue = count_states(app, waiting, &s->queue_pending) &&
                    count_states(app, STATE_BIT(FAILED), &s->queue_failed) &&
                    count_states(app, STATE_BIT(CONFLICT), &s->queue_conflicts);
    if (s->have_queue || !s->have_result)
        return;
    /* The cache could not say: the run's own counts. */
    const sync_report *r = &s->last_report;
    s->queue_pending = r->pending;
    s->queue_conflicts = r->conflicted < r->attention ? r->conflicted : r->attention;
    s->queue_failed = r->attention - s->queue_conflicts;
}

/* ---- the cache's last sync ------------------------------------------------------- */

void ui_sync_read_last_sync(ui_app *app)
{
    ui_sync *s = ui_app_sync(app);
    if (!s)
        return;
    char v[STORE_META_VALUE_MAX + 1];
    double at;
    error_info e = {0};
    if (store_meta_get(ui_app_browse_store(app), STORE_META_LAST_SYNC, v, sizeof v, &e) ==
            ERROR_OK &&
        duration_parse_time(v, &at)) {
        s->stored_known = true;
        s->stored_at = at;
    }
}

/* ---- the clock ------------------------------------------------------------------- */

double ui_sync_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool ui_sync_ticking(ui_app *app)
{
    ui_sync *s = ui_app_sync(app);
    const ui_options *o = ui_app_options(app);
    if (!s)
        return false;
    return ui_sync_running(app) || s->have_result || s->stored_known ||
           (o->remote && !o->readonly && o->auto_pull_s > 0);
}
