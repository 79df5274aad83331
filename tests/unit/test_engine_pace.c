/* sync engine: the budget's schedule, 429 pause and slowdown, give-up by time,
 * the run's deadline, progress (ETA from the schedule, countdown, wait causes)
 * and last_sync, against the scripted remote (fake_remote.h) and a fake clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "fake_remote.h"
#include "rampart/store.h"
#include "rampart/sync.h"
#include "test_support.h"

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";

enum { EVENTS_MAX = 512 };

/* One progress event as the callback saw it. */
typedef struct event {
    sync_phase phase;
    size_t done, total, requests;
    double at, eta_s, wait_s, rate_per_s;
    sync_wait_cause cause;
    sync_failure_kind failure; /* of p->failure; NONE when it was NULL */
    bool has_failure;
} event;

typedef struct fixture {
    store *st;
    fake_remote *remote;
    fake_clock clock;
    sync_options opt;
    sync_report report;
    error_info err;
    event events[EVENTS_MAX];
    size_t nevents;
} fixture;

static void on_progress(void *ctx, const sync_progress *p)
{
    fixture *f = ctx;
    if (f->nevents == EVENTS_MAX)
        return;
    f->events[f->nevents++] = (event){
        .phase = p->phase, .done = p->done, .total = p->total, .requests = p->requests,
        .at = f->clock.now, .eta_s = p->eta_s, .wait_s = p->wait_s,
        .rate_per_s = p->rate_per_s, .cause = p->wait_cause,
        .failure = p->failure ? p->failure->kind : SYNC_FAILURE_NONE,
        .has_failure = p->failure != NULL};
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &f->st, &err), ERROR_OK);
    f->remote = calloc(1, sizeof *f->remote);
    assert_non_null(f->remote);
    f->remote->limit = 100;
    f->remote->clock = &f->clock;
    f->clock.now = 1000;
    f->opt = (sync_options){
        .push = true,
        .pull = false,
        .budget = {.requests = 60, .window_s = 60, .share = 1.0},
        .clock = {.now = fake_now, .sleep = fake_sleep, .ctx = &f->clock},
        .on_progress = on_progress,
        .cb_ctx = f,
    };
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    store_close(f->st);
    fake_free(f->remote);
    free(f);
    return 0;
}

static error_code run(fixture *f)
{
    f->nevents = 0;
    f->clock.slept = 0;
    f->remote->ncalls = 0;
    return sync_run(f->st, &fake_ops, f->remote, &f->opt, &f->report, &f->err);
}

static void new_rules(fixture *f, int from, int n)
{
    for (int i = from; i < from + n; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        ts_insert_rule(f->st, POLICY, cidr, MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
    }
}

static size_t rules_in(fixture *f, model_state state)
{
    size_t counts[MODEL_STATE_COUNT];
    error_info err;
    assert_int_equal(store_state_counts(f->st, MODEL_KIND_RULE, counts, &err), ERROR_OK);
    return counts[state];
}

static bool near(double a, double b)
{
    return fabs(a - b) < 1e-6;
}

/* Never more than `cap` calls in any rolling `window` (call start times). */
static void assert_window(const fake_remote *r, size_t cap, double window)
{
    for (size_t i = cap; i < r->ncalls; i++)
        assert_true(r->at[i] - r->at[i - cap] >= window - 1e-6);
}

/* ---- the schedule --------------------------------------------------------- */

/* 120 per 60 s with the default share (80%): one request every 0.625 s, from the
 * first one on (no burst), 96 in any minute. */
static void test_schedule_spreads_requests_evenly(void **state)
{
    fixture *f = *state;
    f->opt.budget = (sync_budget){.requests = 120}; /* window 60 s, share 0.8 */
    new_rules(f, 0, 120);
    double start = f->clock.now;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.created, 120);
    assert_int_equal(f->remote->ncalls, 120);
    for (size_t i = 1; i < f->remote->ncalls; i++)
        assert_true(near(f->remote->at[i] - f->remote->at[i - 1], 0.625));
    assert_true(near(f->clock.now - start, 119 * 0.625));
    assert_window(f->remote, 96, 60);
}

/* An edit's look and its PATCH go back to back in one slot: no pacing gap opens
 * between them (the remote could change in it); the next pair starts two
 * intervals later, so the pace over the run is the same. */
static void test_look_and_write_share_one_slot(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 6; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        fake_add_rule(f->remote, POLICY, cidr, MODEL_ACTION_ALLOW);
    }
    f->opt.push = false;
    f->opt.pull = true;
    assert_int_equal(run(f), ERROR_OK);
    for (int i = 0; i < 6; i++) {
        model_object o;
        model_object_init(&o, MODEL_KIND_RULE);
        strcpy(o.rule.id, FAKE_RULE(f->remote, i)->id);
        strcpy(o.rule.description, "edited");
        const kind_field *d = kind_field_by_name(MODEL_KIND_RULE, "description");
        assert_int_equal(store_edit(f->st, &o, kind_field_bit(MODEL_KIND_RULE, d), NULL, NULL),
                         ERROR_OK);
        model_object_clear(&o);
    }
    f->opt.push = true;
    f->opt.pull = false;
    f->opt.budget = (sync_budget){.requests = 120}; /* 0.625 s apart */
    f->remote->latency = 0.1;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.updated, 6);
    assert_int_equal(f->remote->ncalls, 12);
    for (size_t i = 0; i < 12; i += 2) {
        assert_int_equal(f->remote->order[i], OP_RULE_GET);
        assert_int_equal(f->remote->order[i + 1], OP_RULE_UPDATE);
        /* The PATCH starts as soon as the look's reply is in. */
        assert_true(near(f->remote->at[i + 1] - f->remote->at[i], 0.1));
        if (i >= 2)
            assert_true(near(f->remote->at[i] - f->remote->at[i - 2], 1.25));
    }
    assert_window(f->remote, 96, 60);
}

/* Slow replies and a small share: still never more than requests * share in a
 * rolling window. */
static void test_never_more_than_the_share_in_a_window(void **state)
{
    fixture *f = *state;
    f->opt.budget = (sync_budget){.requests = 10, .window_s = 20, .share = 0.5};
    f->remote->latency = 3;
    new_rules(f, 0, 16);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.created, 16);
    assert_window(f->remote, 5, 20);
}

/* Two runs back to back on one cache (as two processes would, one after the
 * other: the sync lock lets one run at a time) keep one schedule: the second
 * starts one interval after the first's last request, not at once. */
static void test_back_to_back_runs_keep_one_schedule(void **state)
{
    fixture *f = *state;
    f->opt.budget = (sync_budget){.requests = 10, .window_s = 60, .share = 1.0};
    new_rules(f, 0, 5);
    assert_int_equal(run(f), ERROR_OK);
    double first_runs_last = f->remote->at[f->remote->ncalls - 1];
    new_rules(f, 5, 10);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.created, 10);
    assert_true(f->remote->at[0] - first_runs_last >= 6.0 - 1e-6);
    for (size_t i = 1; i < f->remote->ncalls; i++)
        assert_true(near(f->remote->at[i] - f->remote->at[i - 1], 6.0));
}

/* The shared record does not outlive a window: a run a window later starts at
 * once. */
static void test_old_schedule_is_not_taken_over(void **state)
{
    fixture *f = *state;
    f->opt.budget = (sync_budget){.requests = 10, .window_s = 60, .share = 1.0};
    new_rules(f, 0, 3);
    assert_int_equal(run(f), ERROR_OK);
    f->clock.now += 61;
    new_rules(f, 3, 1);
    double start = f->clock.now;
    assert_int_equal(run(f), ERROR_OK);
    assert_true(near(f->remote->at[0], start));
}

/* ---- 429 ------------------------------------------------------------------ */

/* A 429 pauses the whole queue for its Retry-After, then the pace is halved and
 * comes back a step with each request that goes through. */
static void test_429_pauses_then_resumes_slower(void **state)
{
    fixture *f = *state;
    new_rules(f, 0, 12);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_OK, false, -1, NULL);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_OK, false, -1, NULL);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 5, "slow down");
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.created, 12);
    const double *at = f->remote->at;
    assert_true(near(at[1] - at[0], 1.0));
    assert_true(at[3] - at[2] >= 5.0 - 1e-6); /* the pause */
    assert_true(near(at[4] - at[3], 2.0));    /* half the pace */
    for (size_t i = 5; i < f->remote->ncalls; i++) {
        double gap = at[i] - at[i - 1], before = at[i - 1] - at[i - 2];
        assert_true(gap <= before + 1e-9 && gap >= 1.0 - 1e-9);
    }
    assert_true(at[f->remote->ncalls - 1] - at[f->remote->ncalls - 2] < 2.0 - 1e-3);
}

/* 429s without Retry-After back off, but the run gives up only when nothing went
 * through for give_up_windows whole windows, and the rows stay queued. */
static void test_give_up_only_after_windows_without_progress(void **state)
{
    fixture *f = *state;
    f->opt.budget.give_up_windows = 2; /* 2 x 60 s */
    new_rules(f, 0, 3);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_OK, false, -1, NULL);
    fake_script_repeat(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, FAKE_SCRIPT - 1,
                       "slow down");
    double start = f->clock.now;
    assert_int_equal(run(f), ERROR_IO);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_RATE_LIMITED);
    assert_int_equal(f->report.row_failure.kind, SYNC_FAILURE_RATE_LIMITED);
    assert_true(f->remote->ncalls > 6); /* far more 429s than max_attempts */
    double last = f->remote->at[f->remote->ncalls - 1];
    assert_true(last - f->remote->at[0] >= 120.0 - 1e-6);
    assert_true(f->clock.now - start < 120.0 + 30.0 + 1.0); /* not a backoff more */
    assert_int_equal(f->report.created, 1);
    assert_int_equal(rules_in(f, MODEL_STATE_NEW), 2);
    assert_int_equal(f->report.pending, 2);
    assert_non_null(strstr(f->report.last_error, "left 2 changes"));
}

/* 429s for longer than two windows in all, each time with a request going
 * through in between: no give-up. */
static void test_429s_with_progress_do_not_give_up(void **state)
{
    fixture *f = *state;
    new_rules(f, 0, 3);
    for (int i = 0; i < 3; i++) {
        fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 30, "slow down");
        fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 30, "slow down");
        fake_script(f->remote, OP_RULE_CREATE, SYNC_OK, false, -1, NULL);
    }
    double start = f->clock.now;
    assert_int_equal(run(f), ERROR_OK);
    assert_true(f->clock.now - start >= 180.0 - 1e-6);
    assert_int_equal(f->report.created, 3);
    assert_true(f->report.converged);
}

/* ---- deadline ------------------------------------------------------------- */

/* Past the deadline the run stops between requests: timed_out, what was done and
 * what is left said, nothing lost; the next run finishes the job. */
static void test_deadline_stops_and_loses_nothing(void **state)
{
    fixture *f = *state;
    f->opt.pull = true;
    f->opt.deadline_s = 5.5; /* requests at 0, 1, ..., 5 s */
    new_rules(f, 0, 20);
    assert_int_equal(run(f), ERROR_IO);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_TIMED_OUT);
    assert_int_equal(f->report.created, 6);
    assert_int_equal(rules_in(f, MODEL_STATE_NEW), 14);
    assert_int_equal(rules_in(f, MODEL_STATE_CREATING), 0);
    assert_int_equal(f->report.pending, 14);
    const char *msg = f->report.last_error;
    assert_non_null(strstr(msg, "deadline (5.5 s)"));
    assert_non_null(strstr(msg, "6 created"));
    assert_non_null(strstr(msg, "left 14 changes"));
    assert_non_null(strstr(msg, "the listing was not completed"));
    assert_true(f->clock.now - 1000 <= 5.5 + 1e-6);
    f->opt.deadline_s = 0;
    assert_int_equal(run(f), ERROR_OK);
    assert_true(f->report.converged);
    assert_int_equal(FAKE_NRULES(f->remote), 20);
}

/* A wait that would end past the deadline is not begun. */
static void test_waits_never_sleep_past_the_deadline(void **state)
{
    fixture *f = *state;
    f->opt.deadline_s = 10;
    new_rules(f, 0, 2);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 30, "slow down");
    double start = f->clock.now;
    assert_int_equal(run(f), ERROR_IO);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_TIMED_OUT);
    assert_true(f->clock.now - start < 10.0);
    assert_true(near(f->clock.slept, 0));
    assert_int_equal(rules_in(f, MODEL_STATE_NEW), 2);
    assert_non_null(strstr(f->report.last_error, "paused after a 429"));
}

/* ---- progress ------------------------------------------------------------- */

/* During a pause the wait is reported about once a second, counting down, with
 * its cause and the failure behind it. */
static void test_countdown_during_a_wait(void **state)
{
    fixture *f = *state;
    new_rules(f, 0, 1);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 5, "slow down");
    assert_int_equal(run(f), ERROR_OK);
    double prev = 1e9, prev_at = -1;
    size_t waits = 0;
    for (size_t i = 0; i < f->nevents; i++) {
        const event *ev = &f->events[i];
        if (ev->phase != SYNC_PHASE_WAIT)
            continue;
        assert_int_equal(ev->cause, SYNC_WAIT_RATE_LIMITED);
        assert_true(ev->has_failure);
        assert_int_equal(ev->failure, SYNC_FAILURE_RATE_LIMITED);
        assert_true(ev->wait_s < prev);
        if (prev_at >= 0)
            assert_true(near(ev->at - prev_at, 1.0));
        prev = ev->wait_s;
        prev_at = ev->at;
        waits++;
    }
    assert_int_equal(waits, 5); /* 5 s, 4, 3, 2, 1 */
    assert_true(near(prev, 1.0));
}

/* A backoff after a dropped reply says so, with the failure. */
static void test_backoff_wait_names_its_failure(void **state)
{
    fixture *f = *state;
    f->opt.max_backoff_s = 4;
    char id[MODEL_ID_MAX + 1];
    ts_insert_rule(f->st, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, id);
    ts_insert_rule(f->st, POLICY, "10.1.0.0/16", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_NOT_SENT, false, -1, "connection refused");
    fake_script(f->remote, OP_RULE_CREATE, SYNC_NOT_SENT, false, -1, "connection refused");
    fake_script(f->remote, OP_RULE_CREATE, SYNC_NOT_SENT, false, -1, "connection refused");
    assert_int_equal(run(f), ERROR_OK);
    bool seen = false;
    for (size_t i = 0; i < f->nevents; i++) {
        const event *ev = &f->events[i];
        if (ev->phase == SYNC_PHASE_WAIT && ev->cause == SYNC_WAIT_BACKOFF) {
            assert_true(ev->has_failure);
            assert_int_equal(ev->failure, SYNC_FAILURE_UNREACHABLE);
            assert_true(ev->wait_s <= 4.0 + 1e-9);
            seen = true;
        }
    }
    assert_true(seen);
}

/* The ETA is the requests left at the schedule's pace (1/s here), not a guess
 * from the time so far: a slow first reply does not change it. */
static void test_eta_from_the_schedule(void **state)
{
    fixture *f = *state;
    new_rules(f, 0, 10);
    f->remote->latency = 0.5;
    assert_int_equal(run(f), ERROR_OK);
    size_t steps = 0;
    for (size_t i = 0; i < f->nevents; i++) {
        const event *ev = &f->events[i];
        if (ev->phase != SYNC_PHASE_PUSH || ev->total != 10)
            continue;
        size_t left = ev->total - ev->done;
        /* Before the first request: 9 intervals after it; after each: the wait for
         * the next slot (0.5 s, the reply took the rest) and then one per request. */
        double want = ev->done == 0 ? 9.0 : left == 0 ? 0 : 0.5 + (double)(left - 1);
        assert_true(near(ev->eta_s, want));
        assert_true(near(ev->rate_per_s, 1.0));
        assert_int_equal(ev->requests, ev->done);
        steps++;
    }
    assert_int_equal(steps, 11);
}

/* Pacing gaps under a second are the pace itself, not waits to show. */
static void test_short_pacing_gaps_are_not_waits(void **state)
{
    fixture *f = *state;
    f->remote->latency = 0.2; /* gaps of 0.8 s */
    new_rules(f, 0, 5);
    assert_int_equal(run(f), ERROR_OK);
    for (size_t i = 0; i < f->nevents; i++)
        assert_int_not_equal(f->events[i].phase, SYNC_PHASE_WAIT);
    f->opt.budget = (sync_budget){.requests = 1, .window_s = 3, .share = 1.0};
    new_rules(f, 5, 2);
    assert_int_equal(run(f), ERROR_OK);
    size_t budget_waits = 0;
    for (size_t i = 0; i < f->nevents; i++)
        budget_waits += f->events[i].phase == SYNC_PHASE_WAIT &&
                        f->events[i].cause == SYNC_WAIT_BUDGET && !f->events[i].has_failure;
    assert_true(budget_waits >= 3);
}

/* ---- last sync ------------------------------------------------------------ */

static void test_last_sync_written_when_the_pull_completed(void **state)
{
    fixture *f = *state;
    char when[STORE_META_VALUE_MAX + 1];
    error_info err;
    /* A push-only run that leaves a refused row: not converged, no pull. */
    fake_reject_cidr(f->remote, "10.0.0.0/16", "no");
    new_rules(f, 0, 1);
    assert_int_equal(run(f), ERROR_OK);
    assert_false(f->report.converged);
    assert_int_equal(store_meta_get(f->st, STORE_META_LAST_SYNC, when, sizeof when, &err),
                     ERROR_NOT_FOUND);
    f->opt.pull = true;
    fake_add_rule(f->remote, POLICY, "192.168.0.0/16", MODEL_ACTION_DENY); /* made elsewhere */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.remote_added, 1);
    assert_int_equal(store_meta_get(f->st, STORE_META_LAST_SYNC, when, sizeof when, &err),
                     ERROR_OK);
    assert_int_equal(strlen(when), 20); /* 2026-01-02T03:04:05Z */
    assert_int_equal(when[4], '-');
    assert_int_equal(when[10], 'T');
    assert_int_equal(when[19], 'Z');
}

static void test_rate_per_min_alone_is_a_whole_budget(void **state)
{
    fixture *f = *state;
    f->opt.budget = (sync_budget){0};
    f->opt.rate_per_min = 30; /* 30 per 60 s, share 1: every 2 s */
    new_rules(f, 0, 4);
    assert_int_equal(run(f), ERROR_OK);
    for (size_t i = 1; i < f->remote->ncalls; i++)
        assert_true(near(f->remote->at[i] - f->remote->at[i - 1], 2.0));
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_schedule_spreads_requests_evenly),
        T(test_never_more_than_the_share_in_a_window),
        T(test_back_to_back_runs_keep_one_schedule),
        T(test_old_schedule_is_not_taken_over),
        T(test_429_pauses_then_resumes_slower),
        T(test_give_up_only_after_windows_without_progress),
        T(test_429s_with_progress_do_not_give_up),
        T(test_deadline_stops_and_loses_nothing),
        T(test_waits_never_sleep_past_the_deadline),
        T(test_countdown_during_a_wait),
        T(test_backoff_wait_names_its_failure),
        T(test_eta_from_the_schedule),
        T(test_short_pacing_gaps_are_not_waits),
        T(test_last_sync_written_when_the_pull_completed),
        T(test_rate_per_min_alone_is_a_whole_budget),
        T(test_look_and_write_share_one_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
