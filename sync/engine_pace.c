/*
 * engine: the pacing schedule. This client's share of the account's budget is
 * spread evenly (one request start every window / (requests * share) seconds,
 * never a burst), and a ring of completion times keeps it under requests * share
 * in any rolling window whatever the network delay. A 429 says someone else
 * spends the budget: the whole queue pauses (Retry-After, else backoff), the
 * spacing doubles, and each request that settles afterwards brings it back a
 * step. 429s give up by time (give_up_windows windows with nothing settling),
 * never by count.
 */
#include "engine_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First backoff step; doubles with each consecutive failure. */
static const double BACKOFF_BASE_S = 1.0;
/* The slowest pace after 429s: this many times the even spacing. */
static const double SLOW_MAX = 8.0;
/* Each settled request adds this part of the full rate back (AIMD): from half
 * the pace to the full one in 8 requests. */
static const double RECOVER_STEP = 1.0 / 16.0;

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

static void seed(engine *e)
{
    double t = engine_now(e);
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    e->rng = (bits ^ (uint64_t)(uintptr_t)e ^ 0x9E3779B97F4A7C15ULL) | 1u;
}

/* ---- the schedule --------------------------------------------------------- */

error_code engine_pace_init(engine *e, error_info *err)
{
    seed(e);
    const sync_budget *b = &e->opt.budget;
    engine_pace *p = &e->pace;
    double now = engine_now(e);
    p->window_s = b->window_s;
    p->give_up_s = b->give_up_windows * b->window_s;
    p->slow = 1.0;
    p->last_settled = now;
    if (b->requests <= 0)
        return ERROR_OK;
    double per_window = (double)b->requests * b->share;
    p->paced = true;
    p->base_interval = b->window_s / per_window;
    p->cap = per_window < 1.0 ? 1 : (size_t)per_window;
    p->ring = calloc(p->cap, sizeof *p->ring);
    if (!p->ring)
        return error_set(err, ERROR_NOMEM, "out of memory");
    return ERROR_OK;
}

void engine_pace_free(engine *e)
{
    free(e->pace.ring);
    e->pace.ring = NULL;
}

double engine_pace_interval(const engine *e)
{
    return e->pace.paced ? e->pace.base_interval * e->pace.slow : 0;
}

double engine_pace_slot(const engine *e)
{
    return engine_pace_slot_for(e, 1);
}

double engine_pace_slot_for(const engine *e, size_t n)
{
    const engine_pace *p = &e->pace;
    if (!p->paced || p->cap == 0)
        return 0;
    double at = p->next_at;
    if (n > p->cap)
        n = p->cap;
    /* The completions that must leave the window first: the oldest
     * count + n - cap of the ring. */
    if (p->count + n > p->cap) {
        double aged = p->ring[(p->head + p->count + n - p->cap - 1) % p->cap] + p->window_s;
        if (aged > at)
            at = aged;
    }
    return at;
}

void engine_pace_start(engine *e, double now)
{
    engine_pace *p = &e->pace;
    if (p->paced)
        p->next_at = (now > p->next_at ? now : p->next_at) + engine_pace_interval(e);
}

/* Completion times are what the server has surely seen by then: counting them
 * keeps us under its rolling window whatever the network delay. */
void engine_pace_count(engine *e, double when)
{
    engine_pace *p = &e->pace;
    if (!p->paced)
        return;
    if (p->count < p->cap) {
        p->ring[(p->head + p->count) % p->cap] = when;
        p->count++;
        return;
    }
    p->ring[p->head] = when;
    p->head = (p->head + 1) % p->cap;
}

static void slow_down(engine *e)
{
    engine_pace *p = &e->pace;
    p->slow = fmin(p->slow * 2.0, SLOW_MAX);
    /* Not even slower than one request per window. */
    if (p->paced && p->base_interval * p->slow > p->window_s)
        p->slow = fmax(1.0, p->window_s / p->base_interval);
}

static void recover(engine *e, double now)
{
    engine_pace *p = &e->pace;
    p->last_settled = now;
    p->slow = 1.0 / (1.0 / p->slow + RECOVER_STEP);
    if (p->slow < 1.0 + 1e-9)
        p->slow = 1.0;
}

/* ---- pauses --------------------------------------------------------------- */

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

static void pause_queue(engine *e, double now, double wait, sync_wait_cause cause,
                        const engine_target *t, const sync_result *res)
{
    if (now + wait <= e->resume_at)
        return;
    e->resume_at = now + wait;
    e->pause_cause = cause;
    engine_failure_from(&e->pause_failure, t, res);
}

static void rate_limited(engine *e, double now, const engine_target *t, const sync_result *res)
{
    e->failures++;
    slow_down(e);
    double stuck = now - e->pace.last_settled;
    if (stuck >= e->pace.give_up_s) {
        engine_fail_at(e, ENGINE_RATE_LIMITED, t, res, "rate limited (429: %s) for %.0f s with "
                       "no request going through: the account's budget is spent elsewhere",
                       res->message, stuck);
        return;
    }
    double wait = res->retry_after_s;
    if (wait < 0)
        wait = backoff(e);
    else if (wait > e->opt.max_backoff_s)
        wait = e->opt.max_backoff_s;
    if (e->pace.paced)
        engine_log(e, SYNC_LOG_WARN, "rate limited by the server: pausing the queue for "
                   "%.0f s, then going on at %.2g requests/s", wait,
                   1.0 / engine_pace_interval(e));
    else
        engine_log(e, SYNC_LOG_WARN, "rate limited by the server: pausing the queue for "
                   "%.0f s", wait);
    pause_queue(e, now, wait, SYNC_WAIT_RATE_LIMITED, t, res);
}

void engine_after_request(engine *e, const engine_target *t, const sync_result *res)
{
    double now = engine_now(e);
    e->requests++;
    if (res->outcome != SYNC_NOT_SENT)
        engine_pace_count(e, now);
    switch (res->outcome) {
    case SYNC_RATE_LIMITED:
        rate_limited(e, now, t, res);
        break;
    case SYNC_NOT_SENT:
        e->failures++;
        pause_queue(e, now, backoff(e), SYNC_WAIT_BACKOFF, t, res);
        if (++e->not_sent_streak >= (unsigned)e->opt.max_attempts)
            engine_fail_at(e, ENGINE_UNREACHABLE, t, res, "the remote could not be reached: %s",
                           res->message);
        return;
    case SYNC_AMBIGUOUS:
        e->failures++;
        /* Cut at the run's deadline: the deadline stopped it, not the remote. */
        if (res->failure == SYNC_FAILURE_TIMED_OUT && e->deadline_at > 0 &&
            now >= e->deadline_at - 0.05) {
            engine_fail_at(e, ENGINE_DEADLINE, t, res, "the sync's deadline (%g s) passed "
                           "during a request (%s)", e->opt.deadline_s, res->message);
            break;
        }
        /* A reply slower than the low-speed limit took that long already: each
         * retry would too. Stop; what is unsent waits for the next sync. */
        if (res->failure == SYNC_FAILURE_TIMED_OUT) {
            engine_fail_at(e, ENGINE_TOO_SLOW, t, res, "the remote is too slow (%s): "
                           "stopped rather than waiting on it again", res->message);
            break;
        }
        pause_queue(e, now, backoff(e), SYNC_WAIT_BACKOFF, t, res);
        break;
    case SYNC_AUTH:
        e->report->auth_failed = true;
        engine_fail_at(e, ENGINE_AUTH, t, res, "the remote refused the API key: %s",
                       res->message);
        break;
    case SYNC_OK:
    case SYNC_REJECTED:
    case SYNC_NOT_FOUND:
        e->failures = 0;
        recover(e, now);
        break;
    }
    e->not_sent_streak = 0;
}
