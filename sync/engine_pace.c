/*
 * engine: pacing (a request budget per rolling minute), the queue's pause on 429
 * and backoff, retries of idempotent requests, and the progress and log
 * callbacks.
 */
#include "engine_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    WINDOW_S = 60,   /* the budget is per rolling minute */
    LOG_LINE_MAX = 768
};

/* Longest single sleep, so the cancel flag is seen within this many seconds. */
static const double SLEEP_SLICE_S = 0.25;
/* First backoff step; doubles with each consecutive failure. */
static const double BACKOFF_BASE_S = 1.0;

double engine_now(engine *e)
{
    return e->opt.clock.now(e->opt.clock.ctx);
}

/* ---- jitter --------------------------------------------------------------- */

/* xorshift64*: jitter needs spread, not secrecy. */
static double random01(engine *e)
{
    uint64_t x = e->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    e->rng = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
}

error_code engine_pace_init(engine *e, error_info *err)
{
    double t = engine_now(e);
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    e->rng = (bits ^ (uint64_t)(uintptr_t)e ^ 0x9E3779B97F4A7C15ULL) | 1u;
    if (e->opt.rate_per_min <= 0)
        return ERROR_OK;
    e->sent_cap = (size_t)e->opt.rate_per_min;
    e->sent = calloc(e->sent_cap, sizeof *e->sent);
    if (!e->sent)
        return error_set(err, ERROR_NOMEM, "out of memory");
    return ERROR_OK;
}

void engine_pace_free(engine *e)
{
    free(e->sent);
    e->sent = NULL;
}

/* ---- logs, progress ------------------------------------------------------- */

void engine_log(engine *e, sync_log_level level, const char *fmt, ...)
{
    if (!e->opt.on_log)
        return;
    char line[LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    e->opt.on_log(e->opt.cb_ctx, level, line);
}

static void report_progress(engine *e, sync_phase phase, double wait_s)
{
    if (!e->opt.on_progress)
        return;
    sync_progress p = {.phase = phase, .done = e->done, .total = e->total,
                       .eta_s = -1, .wait_s = wait_s};
    if (e->done > 0 && e->total >= e->done) {
        double per_item = (engine_now(e) - e->phase_start) / (double)e->done;
        /* Past the first minute's burst the budget sets the pace. */
        double paced = e->opt.rate_per_min > 0 ? (double)WINDOW_S / e->opt.rate_per_min : 0;
        if (phase == SYNC_PHASE_PUSH && per_item < paced)
            per_item = paced;
        p.eta_s = per_item * (double)(e->total - e->done);
    }
    e->opt.on_progress(e->opt.cb_ctx, &p);
}

void engine_phase(engine *e, sync_phase phase, size_t total)
{
    e->phase = phase;
    e->done = 0;
    e->total = total;
    e->phase_start = engine_now(e);
    report_progress(e, phase, 0);
}

void engine_step(engine *e, size_t items)
{
    e->done += items;
    if (e->total && e->done > e->total)
        e->total = e->done;
    report_progress(e, e->phase, 0);
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

/* Sleep until `until` (engine time) in slices, watching the cancel flag. */
static void wait_until(engine *e, double until)
{
    double left = until - engine_now(e);
    if (left <= 0)
        return;
    report_progress(e, SYNC_PHASE_WAIT, left);
    while (!cancelled(e)) {
        left = until - engine_now(e);
        if (left <= 1e-9)
            break;
        e->opt.clock.sleep(e->opt.clock.ctx, left < SLEEP_SLICE_S ? left : SLEEP_SLICE_S);
    }
    if (e->stop == ENGINE_GO)
        report_progress(e, e->phase, 0);
}

/* When the budget allows the next request: the oldest of the last rate_per_min
 * requests must be a full window old. */
static double budget_free_at(const engine *e)
{
    if (!e->sent || e->sent_count < e->sent_cap)
        return 0;
    return e->sent[e->sent_head] + WINDOW_S;
}

bool engine_before_request(engine *e)
{
    if (cancelled(e))
        return false;
    wait_until(e, e->resume_at);
    wait_until(e, budget_free_at(e));
    return !cancelled(e);
}

/* ---- after a request ------------------------------------------------------ */

/* Completion times are what the server has surely seen by then: pacing by them
 * keeps us under its rolling window whatever the network delay. */
static void count_request(engine *e, double when)
{
    if (!e->sent)
        return;
    if (e->sent_count < e->sent_cap) {
        e->sent[(e->sent_head + e->sent_count) % e->sent_cap] = when;
        e->sent_count++;
        return;
    }
    e->sent[e->sent_head] = when;
    e->sent_head = (e->sent_head + 1) % e->sent_cap;
}

/* Exponential backoff with "equal jitter": half fixed, half random. */
static double backoff(engine *e)
{
    double delay = BACKOFF_BASE_S;
    for (unsigned i = 1; i < e->failures && delay < e->opt.max_backoff_s; i++)
        delay *= 2;
    if (delay > e->opt.max_backoff_s)
        delay = e->opt.max_backoff_s;
    return delay / 2 + random01(e) * delay / 2;
}

static void pause_queue(engine *e, double now, double wait)
{
    if (now + wait > e->resume_at)
        e->resume_at = now + wait;
}

void engine_after_request(engine *e, const engine_target *t, const sync_result *res)
{
    double now = engine_now(e);
    e->requests++;
    if (res->outcome != SYNC_NOT_SENT)
        count_request(e, now);
    switch (res->outcome) {
    case SYNC_RATE_LIMITED: {
        e->failures++;
        double wait = res->retry_after_s;
        if (wait < 0)
            wait = backoff(e);
        else if (wait > e->opt.max_backoff_s)
            wait = e->opt.max_backoff_s;
        engine_log(e, SYNC_LOG_WARN, "rate limited by the server: pausing the queue for "
                   "%.0f s", wait);
        pause_queue(e, now, wait);
        break;
    }
    case SYNC_NOT_SENT:
        e->failures++;
        pause_queue(e, now, backoff(e));
        if (++e->not_sent_streak >= (unsigned)e->opt.max_attempts)
            engine_fail_at(e, ENGINE_UNREACHABLE, t, res, "the remote could not be reached: %s",
                           res->message);
        return;
    case SYNC_AMBIGUOUS:
        e->failures++;
        pause_queue(e, now, backoff(e));
        break;
    case SYNC_AUTH:
        e->report->auth_failed = true;
        engine_fail_at(e, ENGINE_AUTH, t, res, "the remote refused the API key: %s",
                       res->message);
        break;
    default:
        e->failures = 0;
        break;
    }
    e->not_sent_streak = 0;
}

sync_outcome engine_send_idempotent(engine *e, const engine_target *t, engine_request_fn fn,
                                    void *arg, sync_result *res)
{
    return engine_send_retrying(e, t, fn, arg, true, res);
}

sync_outcome engine_send_retrying(engine *e, const engine_target *t, engine_request_fn fn,
                                  void *arg, bool retry_ambiguous, sync_result *res)
{
    for (int attempt = 1;; attempt++) {
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
        if (!again || e->stop != ENGINE_GO || attempt >= e->opt.max_attempts)
            return out;
        e->report->retried++;
    }
}
