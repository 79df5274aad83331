/*
 * engine: waiting for the schedule or a pause (with a countdown), the run's
 * deadline, retries of idempotent requests, and the progress callback.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <string.h>

/* Longest single sleep, so the cancel flag is seen within this many seconds. */
static const double SLEEP_SLICE_S = 0.25;
/* A wait is reported again this often (a countdown). */
static const double COUNTDOWN_S = 1.0;
/* A pacing gap shorter than this is the pace itself, not a wait worth showing. */
static const double SHOWN_BUDGET_WAIT_S = 1.0;

/* ---- progress ------------------------------------------------------------ */

/* When the next request may start: the pause or the schedule, whichever is later. */
static double next_start(const engine *e)
{
    double slot = engine_pace_slot(e);
    return e->resume_at > slot ? e->resume_at : slot;
}

/*
 * Seconds until the phase's items are done, from the schedule: the wait for the
 * next start, then one interval per request after it (an item is a request).
 * Unpaced, the schedule says nothing: the mean time of this run's requests
 * stands in. < 0 when unknown (no total; unpaced before any request).
 */
static double eta(engine *e, double now)
{
    if (e->total == 0 || e->done > e->total)
        return -1;
    size_t left = e->total - e->done;
    if (left == 0)
        return 0;
    double first = next_start(e) - now;
    if (first < 0)
        first = 0;
    double per_item = e->per_item > 0 ? e->per_item : 1.0;
    if (e->pace.paced)
        return first + ((double)left * per_item - 1) * engine_pace_interval(e);
    if (e->requests == 0)
        return -1;
    return first + (now - e->run_start) / (double)e->requests * (double)left * per_item;
}

static void report(engine *e, sync_phase phase, double wait_s, sync_wait_cause cause)
{
    if (!e->opt.on_progress)
        return;
    double now = engine_now(e);
    double interval = engine_pace_interval(e);
    sync_progress p = {.phase = phase, .done = e->done, .total = e->total,
                       .eta_s = eta(e, now), .wait_s = wait_s, .wait_cause = cause,
                       .rate_per_s = interval > 0 ? 1.0 / interval : 0,
                       .requests = e->requests};
    if (cause == SYNC_WAIT_RATE_LIMITED || cause == SYNC_WAIT_BACKOFF)
        p.failure = &e->pause_failure;
    e->opt.on_progress(e->opt.cb_ctx, &p);
}

void engine_phase(engine *e, sync_phase phase, size_t total)
{
    e->phase = phase;
    e->done = 0;
    e->total = total;
    report(e, phase, 0, SYNC_WAIT_NONE);
}

void engine_step(engine *e, size_t items)
{
    e->done += items;
    if (e->total && e->done > e->total)
        e->total = e->done;
    report(e, e->phase, 0, SYNC_WAIT_NONE);
}

/* ---- waiting -------------------------------------------------------------- */

static bool cancelled(engine *e)
{
    if (e->stop != ENGINE_GO)
        return true;
    if (e->opt.cancel && *e->opt.cancel) {
        engine_fail(e, ENGINE_CANCELLED, "cancelled");
        return true;
    }
    return false;
}

/* Sleep until `until` (engine time) in slices, watching the cancel flag; a shown
 * wait is reported at once and then about every COUNTDOWN_S with what is left. */
static void wait_until(engine *e, double until, sync_wait_cause cause)
{
    double now = engine_now(e);
    if (until - now <= 1e-9)
        return;
    bool shown = cause != SYNC_WAIT_BUDGET || until - now >= SHOWN_BUDGET_WAIT_S;
    double reported = now;
    if (shown)
        report(e, SYNC_PHASE_WAIT, until - now, cause);
    while (!cancelled(e)) {
        now = engine_now(e);
        double left = until - now;
        if (left <= 1e-9)
            break;
        if (shown && now - reported >= COUNTDOWN_S - 1e-9) {
            report(e, SYNC_PHASE_WAIT, left, cause);
            reported = now;
        }
        e->opt.clock.sleep(e->opt.clock.ctx, left < SLEEP_SLICE_S ? left : SLEEP_SLICE_S);
    }
    if (shown && e->stop == ENGINE_GO)
        report(e, e->phase, 0, SYNC_WAIT_NONE);
}

static const char *cause_text(sync_wait_cause cause)
{
    static const char *const texts[] = {
        [SYNC_WAIT_RATE_LIMITED] = "the queue is paused after a 429",
        [SYNC_WAIT_BACKOFF] = "the queue is backing off after a failure"};
    const char *text = (unsigned)cause < sizeof texts / sizeof texts[0] ? texts[cause] : NULL;
    return text ? text : "the budget's next slot is later";
}

/* The deadline passed, or comes before `start`: stop (what is left is counted
 * when the run ends, see finish_report in engine.c). */
static bool past_deadline(engine *e, double now, double start, sync_wait_cause cause)
{
    if (e->deadline_at <= 0)
        return false;
    if (now >= e->deadline_at)
        engine_fail(e, ENGINE_DEADLINE, "the sync's deadline (%g s) passed",
                    e->opt.deadline_s);
    else if (start > e->deadline_at)
        engine_fail(e, ENGINE_DEADLINE, "the sync's deadline (%g s) comes before the next "
                    "request could go (%s)", e->opt.deadline_s, cause_text(cause));
    else
        return false;
    return true;
}

/* Wait for a slot where `n` requests may start back to back, and take it. */
static bool before_requests(engine *e, size_t n)
{
    if (cancelled(e))
        return false;
    double slot = engine_pace_slot_for(e, n);
    double start = e->resume_at > slot ? e->resume_at : slot;
    sync_wait_cause cause = e->resume_at >= slot ? e->pause_cause : SYNC_WAIT_BUDGET;
    if (past_deadline(e, engine_now(e), start, cause))
        return false;
    wait_until(e, start, cause);
    if (cancelled(e))
        return false;
    double now = engine_now(e);
    for (size_t i = 0; i < n; i++)
        engine_pace_start(e, now);
    /* The request in flight gets what is left of the run's deadline. */
    if (e->ops->deadline)
        e->ops->deadline(e->api, e->deadline_at > 0 ? e->deadline_at - now : 0);
    return true;
}

bool engine_before_request(engine *e)
{
    return before_requests(e, 1);
}

bool engine_before_pair(engine *e)
{
    return before_requests(e, 2);
}

/* ---- retries -------------------------------------------------------------- */

sync_outcome engine_send_idempotent(engine *e, const engine_target *t, engine_request_fn fn,
                                    void *arg, sync_result *res)
{
    return engine_send_retrying(e, t, fn, arg, true, res);
}

sync_outcome engine_send_retrying(engine *e, const engine_target *t, engine_request_fn fn,
                                  void *arg, bool retry_ambiguous, sync_result *res)
{
    for (int attempt = 1;;) {
        memset(res, 0, sizeof *res);
        res->retry_after_s = -1;
        if (!engine_before_request(e)) {
            res->outcome = SYNC_NOT_SENT;
            snprintf(res->message, sizeof res->message, "%s", e->err.msg);
            return SYNC_NOT_SENT;
        }
        sync_outcome out = fn(e, arg, res);
        res->outcome = out;
        engine_after_request(e, t, res);
        bool again = out == SYNC_NOT_SENT || out == SYNC_RATE_LIMITED ||
                     (out == SYNC_AMBIGUOUS && retry_ambiguous);
        /* A 429 is not an attempt: 429s give up by time (engine_after_request). */
        if (out != SYNC_RATE_LIMITED)
            attempt++;
        if (!again || e->stop != ENGINE_GO || attempt > e->opt.max_attempts)
            return out;
        e->report->retried++;
    }
}

static void result_reset(sync_result *res)
{
    memset(res, 0, sizeof *res);
    res->retry_after_s = -1;
}

/* Send one request of a pair and count it. */
static sync_outcome send_one(engine *e, const engine_target *t, engine_request_fn fn, void *arg,
                             sync_result *res)
{
    result_reset(res);
    sync_outcome out = fn(e, arg, res);
    res->outcome = out;
    engine_after_request(e, t, res);
    return out;
}

static bool worth_again(sync_outcome out)
{
    return out == SYNC_NOT_SENT || out == SYNC_RATE_LIMITED || out == SYNC_AMBIGUOUS;
}

sync_outcome engine_send_looked(engine *e, const engine_target *t, const engine_looked *l,
                                sync_result *res, engine_stage *stage)
{
    for (int attempt = 1;;) {
        *stage = ENGINE_STAGE_LOOK;
        result_reset(res);
        if (!engine_before_pair(e)) {
            res->outcome = SYNC_NOT_SENT;
            snprintf(res->message, sizeof res->message, "%s", e->err.msg);
            return SYNC_NOT_SENT;
        }
        sync_outcome out = send_one(e, t, l->look, l->arg, res);
        if (out == SYNC_OK) {
            if (!l->judge(e, l->arg)) {
                *stage = ENGINE_STAGE_JUDGED;
                return SYNC_OK;
            }
            if (e->stop != ENGINE_GO)
                return SYNC_NOT_SENT;
            *stage = ENGINE_STAGE_WRITE;
            out = send_one(e, t, l->write, l->arg, res);
        }
        /* A 429 is not an attempt: 429s give up by time (engine_after_request). */
        if (out != SYNC_RATE_LIMITED)
            attempt++;
        if (!worth_again(out) || e->stop != ENGINE_GO || attempt > e->opt.max_attempts)
            return out;
        e->report->retried++;
    }
}

store_look_result engine_judge_look(engine *e, const engine_target *t,
                                    const model_object *looked)
{
    store_look_result r = STORE_LOOK_SKIP;
    error_info err;
    error_code rc = store_look(e->st, looked, &r, &err);
    if (rc == ERROR_INVALID) {
        engine_log(e, SYNC_LOG_WARN, "%s %s: the remote copy could not be read (%s): "
                   "nothing sent; the next sync looks again", kind_get(t->kind)->noun, t->id,
                   err.msg);
        return STORE_LOOK_SKIP;
    }
    if (rc != ERROR_OK && rc != ERROR_NOT_FOUND) {
        engine_db_fail(e, &err);
        return STORE_LOOK_SKIP;
    }
    if (r == STORE_LOOK_CONFLICT) {
        e->report->conflicts++;
        engine_note_row_failure(e, t, NULL);
    }
    return r;
}
