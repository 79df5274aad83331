/*
 * engine: one sync run. Reconcile interrupted creates first (a listing before any
 * re-send, or a credential would be created twice), then rounds of push (deletes,
 * creates, edits) + pull:
 * another round only when the pull queued work again (an ambiguous create the
 * listing lacked, an orphaned credential to delete and create afresh).
 */
#include "engine_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

enum {
    DEFAULT_MAX_ATTEMPTS = 5,
    /* push + pull rounds in one run: enough for ambiguous -> listing -> resend, and
     * orphan -> delete -> create -> listing; bounded so a remote that keeps failing
     * cannot hold the run. */
    MAX_ROUNDS = 3,
    DEFAULT_LISTING_MAX = 10000000
};

static const double DEFAULT_MAX_BACKOFF_S = 30.0;
static const double DEFAULT_WINDOW_S = 60.0;
static const double DEFAULT_SHARE = 0.8;
static const double DEFAULT_GIVE_UP_WINDOWS = 2.0;

/* ---- the real clock ------------------------------------------------------- */

static double real_now(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void real_sleep(void *ctx, double seconds)
{
    (void)ctx;
    if (seconds <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- the run -------------------------------------------------------------- */

/* The budget with its defaults; rate_per_min alone (the older setting) is a
 * budget of that many per 60 s, all of it ours. */
static void fill_budget(sync_options *o)
{
    sync_budget *b = &o->budget;
    if (b->requests <= 0 && o->rate_per_min > 0)
        *b = (sync_budget){.requests = o->rate_per_min, .window_s = DEFAULT_WINDOW_S,
                           .share = 1.0, .give_up_windows = b->give_up_windows};
    if (b->requests < 0)
        b->requests = 0;
    if (!(b->window_s > 0))
        b->window_s = DEFAULT_WINDOW_S;
    if (!(b->share > 0))
        b->share = DEFAULT_SHARE;
    if (b->share > 1)
        b->share = 1;
    if (!(b->give_up_windows > 0))
        b->give_up_windows = DEFAULT_GIVE_UP_WINDOWS;
}

static void fill_defaults(sync_options *o)
{
    if (o->max_attempts <= 0)
        o->max_attempts = DEFAULT_MAX_ATTEMPTS;
    if (o->listing_max == 0)
        o->listing_max = DEFAULT_LISTING_MAX;
    if (!(o->max_backoff_s > 0))
        o->max_backoff_s = DEFAULT_MAX_BACKOFF_S;
    if (o->rate_per_min < 0)
        o->rate_per_min = 0;
    if (!(o->deadline_s > 0))
        o->deadline_s = 0;
    fill_budget(o);
    if (!o->clock.now || !o->clock.sleep)
        o->clock = (sync_clock){.now = real_now, .sleep = real_sleep, .ctx = NULL};
}

static bool valid_ops(const sync_api_ops *ops)
{
    return ops && ops->create && ops->remove && ops->list_page && ops->update && ops->get;
}

#define BIT(s) (1u << MODEL_STATE_##s)

/* A listing first when creates of unknown outcome (of the scope, when scoped)
 * must be settled before anything is sent again: it keeps creates exactly-once.
 * Edits and deletes need none: each write has its own look. */
static bool reconcile_first(engine *e)
{
    size_t inflight = 0;
    error_info err;
    if (engine_count_queue(e, BIT(CREATING) | BIT(UNKNOWN), &inflight, &err)) {
        engine_db_fail(e, &err);
        return false;
    }
    if (inflight == 0)
        return true;
    if (!e->opt.pull && !e->opt.scoped) {
        engine_log(e, SYNC_LOG_WARN, "%zu creates of unknown outcome wait for a sync "
                   "that pulls", inflight);
        return true;
    }
    engine_log(e, SYNC_LOG_INFO, "%zu creates were interrupted or ambiguous: checking "
               "the remote listing before sending anything", inflight);
    return engine_pull(e);
}

static void rounds(engine *e)
{
    for (int round = 0; round < MAX_ROUNDS && e->stop == ENGINE_GO; round++) {
        size_t before = e->requests;
        if (e->opt.push)
            engine_push(e);
        if (e->stop != ENGINE_GO || !e->opt.pull)
            return;
        /* Nothing sent since the last listing: it still stands. */
        if (e->pulled && e->requests == before)
            return;
        if (!engine_pull(e) || !e->opt.push || e->requeued == 0)
            return;
    }
}

/* A run stopped early by time (the deadline, 429s that did not end) says what it
 * did and what is left, after why. */
static void say_what_is_left(engine *e)
{
    const sync_report *r = e->report;
    char why[sizeof e->err.msg];
    snprintf(why, sizeof why, "%s", e->err.msg);
    const char *pull = !e->opt.pull ? ""
                       : e->pulled  ? "; the listing is up to date"
                                    : "; the listing was not completed (nothing marked "
                                      "deleted)";
    error_set(&e->err, ERROR_IO, "%s: done %zu created, %zu deleted, %zu updated%s; left "
              "%zu changes for the next sync (nothing is lost)", why, r->created, r->deleted,
              r->updated, pull, r->pending);
}

/* When a sync last completed its pull (or converged), for the console's "synced
 * 2 min ago" after a restart. */
static void note_last_sync(engine *e)
{
    if (!e->pulled && !e->report->converged)
        return;
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
        return;
    error_info err;
    if (store_meta_set(e->st, STORE_META_LAST_SYNC, when, &err))
        engine_log(e, SYNC_LOG_WARN, "the time of this sync was not kept: %s", err.msg);
}

static void finish_report(engine *e)
{
    sync_report *r = e->report;
    error_info err;
    size_t pending = 0, failed = 0, conflicted = 0;
    /* Only credentials are ever orphaned: counting the state for every kind
     * costs nothing. */
    unsigned waiting = BIT(NEW) | BIT(CREATING) | BIT(UNKNOWN) | BIT(DELETING) |
                       BIT(ORPHANED) | BIT(EDITED);
    unsigned held = BIT(FAILED) | BIT(CONFLICT);
    if (engine_count_queue(e, waiting, &pending, &err) ||
        engine_count_queue(e, BIT(FAILED), &failed, &err) ||
        engine_count_queue(e, BIT(CONFLICT), &conflicted, &err))
        engine_db_fail(e, &err);
    size_t attention = failed + conflicted;
    r->pending = pending;
    r->attention = attention;
    r->conflicted = conflicted;
    size_t all = 0;
    if (e->opt.scoped && engine_count_states(e, waiting | held, &all, &err) == ERROR_OK)
        r->others = all > pending + attention ? all - pending - attention : 0;
    r->cancelled = e->stop == ENGINE_CANCELLED;
    r->converged = e->stop == ENGINE_GO && pending == 0 && attention == 0;
    if (e->stop == ENGINE_DEADLINE || e->stop == ENGINE_RATE_LIMITED ||
        e->stop == ENGINE_TOO_SLOW)
        say_what_is_left(e);
    if (e->stop != ENGINE_GO)
        snprintf(r->last_error, sizeof r->last_error, "%s", e->err.msg);
}

static error_code result_code(const engine *e, error_info *err)
{
    switch (e->stop) {
    case ENGINE_GO:
    case ENGINE_CANCELLED:
        return ERROR_OK;
    case ENGINE_AUTH:
        return error_set(err, ERROR_CONFIG, "%s", e->err.msg);
    default:
        return error_set(err, ERROR_IO, "%s", e->err.msg);
    }
}

/* The cache's sync lock; with opt->wait_for_lock, while another process holds it,
 * tried again every quarter second until it is free, the deadline passes or the
 * cancel flag is set (that sync pushes this cache's queue meanwhile: ours may
 * find it done). */
static error_code take_lock(store *st, const sync_options *opt, store_sync_lock **lock,
                            error_info *err)
{
    const sync_clock clock = opt->clock; /* defaults filled: never NULL */
    double give_up = opt->deadline_s > 0 ? clock.now(clock.ctx) + opt->deadline_s : 0;
    bool told = false;
    for (;;) {
        error_code rc = store_sync_lock_take(st, lock, err);
        if (rc != ERROR_STATE || !opt->wait_for_lock || (opt->cancel && *opt->cancel) ||
            (give_up > 0 && clock.now(clock.ctx) >= give_up))
            return rc;
        if (!told && opt->on_log)
            opt->on_log(opt->cb_ctx, SYNC_LOG_WARN, /* shown without --verbose */
                        "another sync of this cache is running: waiting for it to finish");
        told = true;
        clock.sleep(clock.ctx, 0.25);
    }
}

error_code sync_run(store *st, const sync_api_ops *ops, void *api_ctx,
                    const sync_options *opt, sync_report *report, error_info *err)
{
    memset(report, 0, sizeof *report);
    report->failure.retry_after_s = report->row_failure.retry_after_s = -1;
    report->failure.kind = SYNC_FAILURE_LOCAL; /* until the run is under way */
    if (!st || !opt || !valid_ops(ops))
        return error_set(err, ERROR_INVALID, "sync_run needs a store, options and every "
                         "API operation");
    /* Inside the caller's transaction every state move would wait for its commit,
     * across network calls: a crash would lose the claim made before a create. */
    if (store_in_transaction(st))
        return error_set(err, ERROR_STATE, "sync_run cannot run inside a transaction");
    report->failure.kind = SYNC_FAILURE_NONE;
    sync_options filled = *opt;
    fill_defaults(&filled);
    store_sync_lock *lock = NULL;
    if (take_lock(st, &filled, &lock, err)) {
        report->failure.kind = err->code == ERROR_STATE ? SYNC_FAILURE_BUSY
                                                        : SYNC_FAILURE_DATABASE;
        snprintf(report->last_error, sizeof report->last_error, "%s", err->msg);
        return err->code;
    }
    engine e = {.st = st, .ops = ops, .api = api_ctx, .opt = filled, .report = report};
    e.run_start = engine_now(&e);
    if (e.opt.deadline_s > 0)
        e.deadline_at = e.run_start + e.opt.deadline_s;
    error_code rc = engine_pace_init(&e, err);
    if (rc != ERROR_OK)
        report->failure.kind = SYNC_FAILURE_LOCAL;
    if (rc == ERROR_OK) {
        engine_pace_load(&e);
        if (reconcile_first(&e))
            rounds(&e);
        finish_report(&e);
        note_last_sync(&e);
        engine_pace_save(&e);
        engine_phase(&e, SYNC_PHASE_DONE, 0);
        rc = result_code(&e, err);
    }
    engine_pace_free(&e);
    store_sync_unlock(lock);
    return rc;
}
