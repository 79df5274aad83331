/* sync engine: every state transition, pacing and reconciliation, against a
 * scripted remote (fake_remote.h) and a fake clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <unistd.h>

#include "fake_remote.h"
#include "rampart/store.h"
#include "rampart/sync.h"
#include "test_support.h"

static const char POLICY[] = "ipp_2Zz1lqOxDdQyVpYcAAAAAAAAAAA";

enum { LOG_MAX = 16384 };

typedef struct fixture {
    store *st;
    fake_remote *remote;
    fake_clock clock;
    sync_options opt;
    sync_report report;
    error_info err;
    char log[LOG_MAX];
    sync_phase phases_seen[8];
    size_t nphases;
    bool eta_seen;
    size_t push_total;        /* the largest total a push phase announced */
    volatile bool cancel;
    const char *cancel_after; /* set cancel when a log line contains this */
} fixture;

static void on_log(void *ctx, sync_log_level level, const char *line)
{
    fixture *f = ctx;
    (void)level;
    size_t len = strlen(f->log);
    snprintf(f->log + len, sizeof f->log - len, "%s\n", line);
    if (f->cancel_after && strstr(line, f->cancel_after))
        f->cancel = true;
}

static void on_progress(void *ctx, const sync_progress *p)
{
    fixture *f = ctx;
    if (f->nphases == 0 || f->phases_seen[f->nphases - 1] != p->phase) {
        if (f->nphases < 8)
            f->phases_seen[f->nphases++] = p->phase;
    }
    if (p->phase == SYNC_PHASE_PUSH && p->eta_s >= 0)
        f->eta_seen = true;
    if (p->phase == SYNC_PHASE_PUSH && p->total > f->push_total)
        f->push_total = p->total;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    error_info err;
    assert_int_equal(store_open(":memory:", 0, &f->st, &err), ERROR_OK);
    f->remote = calloc(1, sizeof *f->remote);
    assert_non_null(f->remote);
    f->remote->limit = 10;
    f->remote->clock = &f->clock;
    f->clock.now = 1000;
    f->opt = (sync_options){
        .push = true,
        .pull = true,
        .clock = {.now = fake_now, .sleep = fake_sleep, .ctx = &f->clock},
        .on_progress = on_progress,
        .on_log = on_log,
        .cb_ctx = f,
        .cancel = &f->cancel,
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
    f->log[0] = '\0';
    f->clock.slept = 0;
    return sync_run(f->st, &fake_ops, f->remote, &f->opt, &f->report, &f->err);
}

/* Insert a new row through the store's gate; its id into id_out (may be NULL). */
static void insert(fixture *f, model_object *obj, char *id_out)
{
    ts_insert(f->st, obj, id_out);
}

static void new_rule(fixture *f, const char *cidr, model_action action, char *id_out)
{
    ts_insert_rule(f->st, POLICY, cidr, action, MODEL_STATE_NEW, id_out);
}

static void new_cred(fixture *f, const char *description, const char *metadata, char *id_out)
{
    model_object o;
    ts_cred_init(&o, description, metadata, NULL);
    o.cred.state = MODEL_STATE_NEW;
    insert(f, &o, id_out);
}

/* One new rule (its id into id_out, may be NULL) whose create the remote answers
 * with `outcome` `n` times in a row, then a run: what the run returned. */
static error_code run_failing_create(fixture *f, char *id_out, sync_outcome outcome, int n,
                                     const char *message)
{
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, id_out);
    fake_script_repeat(f->remote, OP_RULE_CREATE, outcome, n, message);
    return run(f);
}

/* One new rule for 10.0.0.0/8 whose create gets an answer that may or may not have
 * been applied (it was when `commit`), then a run: what the run returned. */
static error_code run_ambiguous_create(fixture *f, char *id_out, model_action action,
                                       bool commit, const char *message)
{
    new_rule(f, "10.0.0.0/8", action, id_out);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_AMBIGUOUS, commit, -1, message);
    return run(f);
}

static model_rule get_rule(fixture *f, const char *id)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    error_info err;
    assert_int_equal(store_get(f->st, MODEL_KIND_RULE, id, &o, &err), ERROR_OK);
    return o.rule;
}

/* A cached credential (without its token); release with model_object_clear. */
static void get_cred(fixture *f, const char *id, model_object *out)
{
    error_info err;
    model_object_init(out, MODEL_KIND_CRED);
    assert_int_equal(store_get(f->st, MODEL_KIND_CRED, id, out, &err), ERROR_OK);
}

static model_state cred_state(fixture *f, const char *id)
{
    model_object o;
    get_cred(f, id, &o);
    model_state s = o.cred.state;
    model_object_clear(&o);
    return s;
}

static size_t rule_count(fixture *f)
{
    size_t n = 0;
    error_info err;
    assert_int_equal(store_count(f->st, MODEL_KIND_RULE, NULL, &n, &err), ERROR_OK);
    return n;
}

static size_t rules_in(fixture *f, model_state state)
{
    size_t counts[MODEL_STATE_COUNT];
    error_info err;
    assert_int_equal(store_state_counts(f->st, MODEL_KIND_RULE, counts, &err), ERROR_OK);
    return counts[state];
}

/* The invariant the sync exists for: every credential on the server has its
 * token on this machine. */
static void assert_every_remote_cred_has_its_token(fixture *f)
{
    for (size_t i = 0; i < FAKE_NCREDS(f->remote); i++) {
        char *token = NULL;
        error_info err;
        assert_int_equal(store_token_get(f->st, FAKE_CRED(f->remote, i)->id, &token, &err),
                         ERROR_OK);
        assert_string_equal(token, FAKE_TOKEN(f->remote, i));
        model_wipe(token, strlen(token));
        free(token);
    }
}

/* Send the create of credential `id` as the engine would (the marker in its
 * metadata) straight to the fake, as if the reply were lost on the way back. */
static void create_behind_our_back(fixture *f, const char *id)
{
    model_object sent, ignored;
    get_cred(f, id, &sent);
    snprintf(sent.cred.metadata, sizeof sent.cred.metadata, SYNC_MARKER_KEY "%s", id);
    sync_result res;
    fake_create(f->remote, &sent, &ignored, &res);
    model_object_clear(&ignored);
    model_object_clear(&sent);
}

/* ---- push ----------------------------------------------------------------- */

static void test_creates_rules_and_creds(void **state)
{
    fixture *f = *state;
    char rid[MODEL_ID_MAX + 1], cid[MODEL_ID_MAX + 1];
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, rid);
    new_cred(f, "agent one", "owner=ops", cid);
    assert_int_equal(run(f), ERROR_OK);
    assert_true(f->report.converged);
    assert_int_equal(f->report.created, 2);
    assert_int_equal(f->report.pulled_rules, 1);
    assert_int_equal(f->report.pulled_creds, 1);
    model_rule r = get_rule(f, rid);
    assert_string_equal(r.id, FAKE_RULE(f->remote, 0)->id);
    assert_int_equal(r.state, MODEL_STATE_SYNCED);
    char line[128];
    snprintf(line, sizeof line, "created rule %s (10.0.0.0/8)", r.id);
    assert_non_null(strstr(f->log, line));
    /* The marker travels with the create; the cache keeps the user's metadata, and
     * the edit pass of the same run PATCHes it back, so the marker is gone. */
    char sent[256];
    snprintf(sent, sizeof sent, "owner=ops\n" SYNC_MARKER_KEY "%s", cid);
    assert_string_equal(f->remote->last_create_metadata, sent);
    assert_string_equal(FAKE_CRED(f->remote, 0)->metadata, "owner=ops");
    assert_int_equal(f->remote->calls[OP_CRED_UPDATE], 1);
    assert_int_equal(f->report.updated, 0); /* taking the marker away is no one's edit */
    model_object c;
    get_cred(f, cid, &c);
    assert_string_equal(c.cred.metadata, "owner=ops");
    assert_int_equal(c.cred.state, MODEL_STATE_SYNCED);
    model_object_clear(&c);
    assert_every_remote_cred_has_its_token(f);
    /* The token never reaches a log line. */
    assert_null(strstr(f->log, FAKE_TOKEN(f->remote, 0)));
    assert_true(f->eta_seen);
    assert_int_equal(f->phases_seen[0], SYNC_PHASE_PUSH);
    assert_int_equal(f->phases_seen[f->nphases - 1], SYNC_PHASE_DONE);
}

static void test_deletes_and_404_is_done(void **state)
{
    fixture *f = *state;
    fake_add_rule(f->remote, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW);
    fake_add_rule(f->remote, POLICY, "10.1.0.0/16", MODEL_ACTION_DENY);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.remote_added, 2);
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    strcpy(a, FAKE_RULE(f->remote, 0)->id);
    strcpy(b, FAKE_RULE(f->remote, 1)->id);
    error_info err;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, a, NULL, &err), ERROR_OK);
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, b, NULL, &err), ERROR_OK);
    /* b is already gone remotely: its DELETE answers 404. */
    fake_drop(f->remote, MODEL_KIND_RULE, 1, 1);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.deleted, 2);
    assert_true(f->report.converged);
    assert_int_equal(rule_count(f), 0);
    assert_int_equal(FAKE_NRULES(f->remote), 0);
    assert_non_null(strstr(f->log, "already gone"));
}

/* The server refuses one valid cidr (the store refuses invalid ones before any
 * sync): the row fails with the server's message, typed in the report. */
static void test_rejected_create_fails_with_message(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    new_rule(f, "10.20.0.0/16", MODEL_ACTION_ALLOW, id);
    fake_reject_cidr(f->remote, "10.20.0.0/16", "cidr 10.20.0.0/16 overlaps a reserved range");
    assert_int_equal(run(f), ERROR_OK);
    model_rule r = get_rule(f, id);
    assert_int_equal(r.state, MODEL_STATE_FAILED);
    assert_non_null(strstr(r.error, "overlaps a reserved range (operation op_fake400)"));
    char line[128];
    snprintf(line, sizeof line, "server refused %s: cidr 10.20.0.0/16 overlaps", id);
    assert_non_null(strstr(f->log, line));
    assert_int_equal(f->report.failed, 1);
    assert_int_equal(f->report.attention, 1);
    assert_false(f->report.converged);
    /* The run itself went through; the row's refusal is typed. */
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_NONE);
    const sync_failure *rf = &f->report.row_failure;
    assert_int_equal(rf->kind, SYNC_FAILURE_REJECTED);
    assert_int_equal(rf->http_status, 400);
    assert_string_equal(rf->error_code, "validation_error");
    assert_string_equal(rf->server_msg, "cidr 10.20.0.0/16 overlaps a reserved range");
    assert_string_equal(rf->operation_id, "op_fake400");
    assert_true(rf->has_object);
    assert_int_equal(rf->object_kind, MODEL_KIND_RULE);
    assert_string_equal(rf->object_id, id);
    /* A failed row is not sent again by the next sync. */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 1);
}

static void test_auth_error_on_create_stops(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, a);
    new_rule(f, "10.1.0.0/16", MODEL_ACTION_ALLOW, b);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_AUTH, false, -1, "invalid API key");
    assert_int_equal(run(f), ERROR_CONFIG);
    assert_true(f->report.auth_failed);
    assert_int_equal(f->remote->ncalls, 1); /* stopped at once */
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_AUTH);
    assert_int_equal(f->report.failure.object_kind, MODEL_KIND_RULE);
    assert_string_equal(f->report.failure.object_id, a);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_NEW);
    assert_int_equal(get_rule(f, b).state, MODEL_STATE_NEW);
}

/* ---- ambiguous creates ---------------------------------------------------- */

static void test_ambiguous_rule_found_by_listing(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    assert_int_equal(run_ambiguous_create(f, id, MODEL_ACTION_DENY, true, "connection reset"),
                     ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 1); /* never re-sent */
    assert_int_equal(FAKE_NRULES(f->remote), 1);
    assert_int_equal(f->report.adopted, 1);
    model_rule r = get_rule(f, id);
    assert_string_equal(r.id, FAKE_RULE(f->remote, 0)->id);
    assert_int_equal(r.state, MODEL_STATE_SYNCED);
    assert_int_equal(rule_count(f), 1);
    assert_true(f->report.converged);
}

static void test_ambiguous_rule_not_created_is_resent(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    assert_int_equal(run_ambiguous_create(f, id, MODEL_ACTION_ALLOW, false, "502 bad gateway"),
                     ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 2);
    assert_int_equal(FAKE_NRULES(f->remote), 1);
    assert_int_equal(get_rule(f, id).state, MODEL_STATE_SYNCED);
    assert_true(f->report.converged);
}

static void test_ambiguous_cred_orphaned_then_recreated(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    new_cred(f, "agent", "", id);
    fake_script(f->remote, OP_CRED_CREATE, SYNC_AMBIGUOUS, true, -1, "timeout");
    assert_int_equal(run(f), ERROR_OK);
    /* Created twice, the first copy (token lost) deleted: one left, token held. */
    assert_int_equal(f->remote->calls[OP_CRED_CREATE], 2);
    assert_int_equal(f->remote->calls[OP_CRED_DELETE], 1);
    assert_int_equal(FAKE_NCREDS(f->remote), 1);
    assert_int_equal(f->report.orphans_deleted, 1);
    assert_true(f->report.converged);
    assert_int_equal(cred_state(f, id), MODEL_STATE_SYNCED);
    assert_every_remote_cred_has_its_token(f);
    assert_non_null(strstr(f->log, "token was lost"));
}

static void test_crash_in_creating_reconciles_first(void **state)
{
    fixture *f = *state;
    /* A crash after the row was claimed: the server got one request, the other
     * never left. */
    char cid[MODEL_ID_MAX + 1], rid[MODEL_ID_MAX + 1];
    new_cred(f, "agent", "", cid);
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, rid);
    error_info err;
    assert_int_equal(store_claim(f->st, MODEL_KIND_CRED, cid, &err), ERROR_OK);
    assert_int_equal(store_claim(f->st, MODEL_KIND_RULE, rid, &err), ERROR_OK);
    create_behind_our_back(f, cid);
    /* Other work is queued too: it must wait for the listing. */
    new_rule(f, "10.1.0.0/16", MODEL_ACTION_ALLOW, NULL);
    size_t before = f->remote->ncalls;
    assert_int_equal(run(f), ERROR_OK);
    /* The first requests of the run are listings, before any create. */
    assert_int_equal(f->remote->order[before], OP_RULE_LIST);
    assert_int_equal(f->remote->order[before + 1], OP_CRED_LIST);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 2);
    assert_int_equal(FAKE_NCREDS(f->remote), 1);
    assert_int_equal(FAKE_NRULES(f->remote), 2);
    assert_int_equal(cred_state(f, cid), MODEL_STATE_SYNCED);
    assert_int_equal(get_rule(f, rid).state, MODEL_STATE_SYNCED);
    assert_every_remote_cred_has_its_token(f);
    assert_true(f->report.converged);
}

/* ---- pull ----------------------------------------------------------------- */

static void seed_remote_rules(fixture *f, int n)
{
    for (int i = 0; i < n; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        fake_add_rule(f->remote, POLICY, cidr, MODEL_ACTION_ALLOW);
    }
}

static void test_auth_error_during_pull_marks_nothing(void **state)
{
    fixture *f = *state;
    seed_remote_rules(f, 5);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(rule_count(f), 5);
    fake_drop(f->remote, MODEL_KIND_RULE, 0, 5); /* as if everything were gone... */
    fake_script(f->remote, OP_RULE_LIST, SYNC_AUTH, false, -1, "unauthorized");
    assert_int_equal(run(f), ERROR_CONFIG);
    assert_true(f->report.auth_failed);
    assert_false(f->report.converged);
    assert_int_equal(rules_in(f, MODEL_STATE_SYNCED), 5); /* ...nothing marked deleted */
    assert_int_equal(rules_in(f, MODEL_STATE_REMOTE_DELETED), 0);
}

static void test_interrupted_pull_leaves_cache(void **state)
{
    fixture *f = *state;
    seed_remote_rules(f, 25); /* three pages of 10 */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.pulled_rules, 25);
    assert_int_equal(f->remote->calls[OP_RULE_LIST], 3);
    /* The remote changes, and the listing breaks on page 3. */
    fake_drop(f->remote, MODEL_KIND_RULE, 0, 5);
    fake_add_rule(f->remote, POLICY, "172.16.0.0/12", MODEL_ACTION_DENY);
    fake_script(f->remote, OP_RULE_LIST, SYNC_OK, false, -1, NULL);
    fake_script(f->remote, OP_RULE_LIST, SYNC_OK, false, -1, NULL);
    fake_script(f->remote, OP_RULE_LIST, SYNC_REJECTED, false, -1, "bad request");
    assert_int_equal(run(f), ERROR_IO);
    assert_non_null(strstr(f->report.last_error, "bad request"));
    assert_int_equal(rules_in(f, MODEL_STATE_SYNCED), 25);
    assert_int_equal(rule_count(f), 25);
    /* The next complete listing applies both changes. */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.remote_deleted, 5);
    assert_int_equal(f->report.remote_added, 1);
}

static void test_remote_additions_and_deletions(void **state)
{
    fixture *f = *state;
    seed_remote_rules(f, 3);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.remote_added, 3);
    char gone[MODEL_ID_MAX + 1];
    strcpy(gone, FAKE_RULE(f->remote, 1)->id);
    fake_drop(f->remote, MODEL_KIND_RULE, 1, 1);
    fake_add_rule(f->remote, POLICY, "192.168.0.0/16", MODEL_ACTION_ALLOW);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.remote_added, 1);
    assert_int_equal(f->report.remote_deleted, 1);
    assert_int_equal(get_rule(f, gone).state, MODEL_STATE_REMOTE_DELETED);
    /* Shown for review, never silently recreated. */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 0);
    assert_int_equal(FAKE_NRULES(f->remote), 3);
    assert_true(f->report.converged);
}

static void test_empty_page_ends_listing(void **state)
{
    fixture *f = *state;
    seed_remote_rules(f, 3);
    f->remote->script[OP_RULE_LIST][0] = (fake_step){.outcome = SYNC_OK, .empty = true};
    f->remote->script_len[OP_RULE_LIST] = 1;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_LIST], 1);
    assert_int_equal(f->report.pulled_rules, 0);
}

/* Items without ids cannot be matched: the listing is not complete evidence. */
static void test_item_without_id_fails_the_pull(void **state)
{
    fixture *f = *state;
    seed_remote_rules(f, 5);
    assert_int_equal(run(f), ERROR_OK);
    f->remote->script[OP_RULE_LIST][0] = (fake_step){.outcome = SYNC_OK, .no_ids = true};
    f->remote->script_len[OP_RULE_LIST] = 1;
    f->remote->script_pos[OP_RULE_LIST] = 0;
    assert_int_equal(run(f), ERROR_IO);
    assert_non_null(strstr(f->report.last_error, "without an id"));
    assert_int_equal(rules_in(f, MODEL_STATE_SYNCED), 5);
    assert_int_equal(rules_in(f, MODEL_STATE_REMOTE_DELETED), 0);
}

/* A server handing pages out in a loop stops the pull instead of looping forever. */
static void test_listing_that_loops_fails_the_pull(void **state)
{
    fixture *f = *state;
    seed_remote_rules(f, 25); /* three pages of 10 */
    fake_script(f->remote, OP_RULE_LIST, SYNC_OK, false, -1, NULL);
    f->remote->script[OP_RULE_LIST][1] = (fake_step){.outcome = SYNC_OK, .rewind = true};
    f->remote->script_len[OP_RULE_LIST] = 2;
    assert_int_equal(run(f), ERROR_IO);
    assert_non_null(strstr(f->report.last_error, "does not advance"));
    assert_true(f->remote->calls[OP_RULE_LIST] <= 4);
    assert_int_equal(rule_count(f), 0); /* nothing merged */
}

static void test_push_only_and_pull_only(void **state)
{
    fixture *f = *state;
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, NULL);
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_LIST], 0);
    assert_int_equal(FAKE_NRULES(f->remote), 1);
    new_rule(f, "10.1.0.0/16", MODEL_ACTION_ALLOW, NULL);
    f->opt.pull = true;
    f->opt.push = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 1);
    assert_int_equal(f->report.pending, 1);
    assert_false(f->report.converged);
}

/* ---- pacing, rate limits, retries ----------------------------------------- */

static void test_429_pauses_queue_for_retry_after(void **state)
{
    fixture *f = *state;
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, NULL);
    new_rule(f, "10.1.0.0/16", MODEL_ACTION_ALLOW, NULL);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 7, "slow down");
    assert_int_equal(run(f), ERROR_OK);
    assert_true(fabs(f->clock.slept - 7.0) < 1e-6);
    /* Nothing at all went out during the pause. */
    assert_true(f->remote->at[1] - f->remote->at[0] >= 7.0 - 1e-6);
    assert_int_equal(f->report.retried, 1);
    assert_int_equal(f->report.created, 2);
    assert_true(f->report.converged);
}

static void test_retry_after_is_clamped(void **state)
{
    fixture *f = *state;
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, NULL);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 3600, "slow down");
    f->opt.max_backoff_s = 20;
    assert_int_equal(run(f), ERROR_OK);
    assert_true(fabs(f->clock.slept - 20.0) < 1e-6);
}

static void test_backoff_without_retry_after(void **state)
{
    fixture *f = *state;
    assert_int_equal(run_failing_create(f, NULL, SYNC_RATE_LIMITED, 2, "slow down"),
                     ERROR_OK);
    /* 1 s then 2 s, each with up to half of it taken off by jitter. */
    assert_true(f->clock.slept >= 1.5 - 1e-6);
    assert_true(f->clock.slept <= 3.0 + 1e-6);
    assert_int_equal(f->report.created, 1);
}

/* A 429 is not an attempt: the create goes through after more 429s than
 * max_attempts (429s give up by time, see test_engine_pace.c). */
static void test_429s_are_not_attempts(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    f->opt.max_attempts = 3;
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, id);
    for (int i = 0; i < 6; i++)
        fake_script(f->remote, OP_RULE_CREATE, SYNC_RATE_LIMITED, false, 1, "too many requests");
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 7);
    assert_int_equal(get_rule(f, id).state, MODEL_STATE_SYNCED);
    assert_int_equal(f->report.created, 1);
    assert_int_equal(f->report.retried, 6);
}

static void test_not_sent_is_retried(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    assert_int_equal(run_failing_create(f, id, SYNC_NOT_SENT, 2, "connection refused"),
                     ERROR_OK);
    assert_int_equal(get_rule(f, id).state, MODEL_STATE_SYNCED);
    assert_int_equal(f->report.retried, 2);
    assert_true(f->clock.slept > 0);
}

static void test_unreachable_remote_stops(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    assert_int_equal(run_failing_create(f, id, SYNC_NOT_SENT, 5, "connection refused"),
                     ERROR_IO);
    assert_non_null(strstr(f->report.last_error, "could not be reached"));
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_UNREACHABLE);
    assert_true(f->report.failure.has_object);
    assert_string_equal(f->report.failure.object_id, id);
    assert_int_equal(get_rule(f, id).state, MODEL_STATE_NEW); /* not failed: retried later */
    assert_int_equal(f->remote->calls[OP_RULE_LIST], 0);
}

/* The older setting alone: rate_per_min R is a budget of R per 60 s, all ours,
 * spread evenly (one request every 60/R s), never more than R in a minute. */
static void test_rate_per_min_is_an_even_budget(void **state)
{
    fixture *f = *state;
    enum { R = 10, N = 30 };
    for (int i = 0; i < N; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        new_rule(f, cidr, MODEL_ACTION_ALLOW, NULL);
    }
    f->opt.pull = false;
    f->opt.rate_per_min = R;
    double start = f->clock.now;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.created, N);
    assert_true(fabs((f->clock.now - start) - (double)(N - 1) * 60.0 / R) < 1e-6);
    for (size_t i = 1; i < f->remote->ncalls; i++)
        assert_true(fabs(f->remote->at[i] - f->remote->at[i - 1] - 60.0 / R) < 1e-6);
    for (size_t i = R; i < f->remote->ncalls; i++)
        assert_true(f->remote->at[i] - f->remote->at[i - R] >= 60.0 - 1e-6);
}

static void test_cancel_between_requests(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 5; i++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.%d.0.0/16", i);
        new_rule(f, cidr, MODEL_ACTION_ALLOW, NULL);
    }
    f->cancel_after = "created rule";
    assert_int_equal(run(f), ERROR_OK);
    assert_true(f->report.cancelled);
    assert_false(f->report.converged);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 1);
    assert_int_equal(f->report.pending, 4);
    assert_int_equal(rules_in(f, MODEL_STATE_CREATING), 0); /* nothing left claimed */
}

static void test_reply_without_token_is_replaced(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    new_cred(f, "agent", "", id);
    f->remote->script[OP_CRED_CREATE][0] = (fake_step){.outcome = SYNC_OK, .no_token = true};
    f->remote->script_len[OP_CRED_CREATE] = 1;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(FAKE_NCREDS(f->remote), 1);
    assert_int_equal(f->remote->calls[OP_CRED_CREATE], 2);
    assert_every_remote_cred_has_its_token(f);
    assert_true(f->report.converged);
}

/* A create reply whose token is not a token's shape: not kept, the credential is
 * orphaned with the reason (never the token's bytes, in the row or the log), and
 * the run's next round deletes it there and creates it again. */
static void test_reply_with_malformed_token_is_orphaned(void **state)
{
    fixture *f = *state;
    static const char hostile[] = "2Hostile_\x1b]0;pwned\x07\x1b[2J\xe2\x80\xae";
    char id[MODEL_ID_MAX + 1];
    new_cred(f, "agent", "", id);
    f->remote->script[OP_CRED_CREATE][0] = (fake_step){.outcome = SYNC_OK, .token = hostile};
    f->remote->script_len[OP_CRED_CREATE] = 1;
    f->opt.pull = false; /* one push: the state it leaves */
    assert_int_equal(run(f), ERROR_OK);
    assert_false(f->report.converged);
    model_object row;
    model_object_init(&row, MODEL_KIND_CRED);
    error_info err;
    assert_int_equal(store_get(f->st, MODEL_KIND_CRED, id, &row, &err), ERROR_OK);
    assert_int_equal(row.cred.state, MODEL_STATE_ORPHANED);
    assert_string_equal(row.cred.id, FAKE_CRED(f->remote, 0)->id);
    assert_non_null(strstr(row.cred.error, "malformed token (not stored)"));
    assert_null(strchr(row.cred.error, '\x1b'));
    model_object_clear(&row);
    char *token = NULL;
    assert_int_equal(store_token_get(f->st, id, &token, &err), ERROR_UNAVAILABLE);
    assert_null(token);
    assert_non_null(strstr(err.msg, "malformed token (not stored)"));
    assert_null(strstr(f->log, "pwned"));
    assert_null(strchr(f->log, '\x1b'));

    /* The next run replaces it: deleted there, created again with a good token. */
    f->opt.pull = true;
    memset(&f->report, 0, sizeof f->report);
    assert_int_equal(run(f), ERROR_OK);
    assert_true(f->report.converged);
    assert_int_equal(FAKE_NCREDS(f->remote), 1);
    assert_every_remote_cred_has_its_token(f);
}

static void test_one_sync_at_a_time(void **state)
{
    fixture *f = *state;
    ts_store_dir d;
    ts_store_dir_open(&d, "/tmp/rampart-engine-XXXXXX", "rampart.db");
    store *mine = d.st, *other = ts_store_open(d.path);
    ts_insert_rule(mine, POLICY, "10.0.0.0/8", MODEL_ACTION_ALLOW, MODEL_STATE_NEW, NULL);
    error_info err;
    store_sync_lock *held = NULL;
    assert_int_equal(store_sync_lock_take(other, &held, &err), ERROR_OK);
    assert_int_equal(sync_run(mine, &fake_ops, f->remote, &f->opt, &f->report, &err),
                     ERROR_STATE);
    assert_non_null(strstr(err.msg, "another sync"));
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_BUSY);
    assert_false(sync_report_should_retry(&f->report));
    assert_int_equal(f->remote->ncalls, 0);
    store_sync_unlock(held);
    assert_int_equal(sync_run(mine, &fake_ops, f->remote, &f->opt, &f->report, &err),
                     ERROR_OK);
    assert_int_equal(FAKE_NRULES(f->remote), 1);
    store_close(other);
    ts_store_dir_close(&d);
}

/* ---- what the store refuses from a listing -------------------------------- */

/* The store is the gate for pulled rows too: a listed rule it refuses costs only
 * itself (a warning naming it, counted), the rest of the page is cached, an IPv6
 * cidr is kept canonical, and a cached rule whose remote copy turns bad is kept as
 * it was rather than taken for deleted. */
static void test_pull_refuses_bad_remote_rows(void **state)
{
    fixture *f = *state;
    char kept[MODEL_ID_MAX + 1];
    strcpy(kept, fake_add_rule(f->remote, POLICY, "172.16.0.0/12", MODEL_ACTION_DENY)->id);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(get_rule(f, kept).state, MODEL_STATE_SYNCED);
    strcpy(FAKE_RULE(f->remote, 0)->cidr, "172.16.0.1/12"); /* turns bad remotely */
    model_action allow = MODEL_ACTION_ALLOW;
    const char *good_v4 = fake_add_rule(f->remote, POLICY, "10.1.0.0/16", allow)->id;
    const char *junk = fake_add_rule(f->remote, POLICY, "not a cidr", allow)->id;
    const char *host = fake_add_rule(f->remote, POLICY, "10.0.0.1/8", allow)->id;
    const char *v6 = fake_add_rule(f->remote, POLICY, "2001:DB8:FFFF::/48", allow)->id;
    const char *last = fake_add_rule(f->remote, POLICY, "192.168.1.0/24", allow)->id;

    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.refused, 3);
    assert_int_equal(f->report.remote_deleted, 0);
    assert_true(f->report.converged);
    char line[256];
    snprintf(line, sizeof line,
             "remote rule %s refused: cidr: host bits set: did you mean 10.0.0.0/8?", host);
    assert_non_null(strstr(f->log, line));
    snprintf(line, sizeof line, "remote rule %s refused: cidr: ", junk);
    assert_non_null(strstr(f->log, line));
    snprintf(line, sizeof line, "remote rule %s refused: cidr: host bits set: did you mean "
             "172.16.0.0/12?", kept);
    assert_non_null(strstr(f->log, line));
    /* The good ones are cached, the IPv6 one canonical; nothing else is lost. */
    assert_int_equal(get_rule(f, good_v4).state, MODEL_STATE_SYNCED);
    assert_int_equal(get_rule(f, last).state, MODEL_STATE_SYNCED);
    model_rule r6 = get_rule(f, v6);
    assert_string_equal(r6.cidr, "2001:db8:ffff::/48");
    assert_int_equal(r6.state, MODEL_STATE_SYNCED);
    model_object none;
    model_object_init(&none, MODEL_KIND_RULE);
    error_info err;
    assert_int_equal(store_get(f->st, MODEL_KIND_RULE, junk, &none, &err), ERROR_NOT_FOUND);
    assert_int_equal(store_get(f->st, MODEL_KIND_RULE, host, &none, &err), ERROR_NOT_FOUND);
    assert_int_equal(rule_count(f), 4);
    /* The cached copy stays as it was: synced, with its good cidr. */
    model_rule k = get_rule(f, kept);
    assert_int_equal(k.state, MODEL_STATE_SYNCED);
    assert_string_equal(k.cidr, "172.16.0.0/12");
    assert_int_equal(rules_in(f, MODEL_STATE_REMOTE_DELETED), 0);
}

/* A listed object the codec cannot read at all (a member of the wrong type) is
 * named, counted, and its cached copy kept: not taken for deleted remotely. */
static void test_pull_keeps_unreadable_remote_row(void **state)
{
    fixture *f = *state;
    char kept[MODEL_ID_MAX + 1];
    strcpy(kept, fake_add_rule(f->remote, POLICY, "172.16.0.0/12", MODEL_ACTION_DENY)->id);
    const char *other = fake_add_rule(f->remote, POLICY, "10.1.0.0/16", MODEL_ACTION_ALLOW)->id;
    assert_int_equal(run(f), ERROR_OK);
    strcpy(f->remote->unreadable[MODEL_KIND_RULE], kept);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.refused, 1);
    assert_int_equal(f->report.remote_deleted, 0);
    char line[256];
    snprintf(line, sizeof line, "remote rule %s refused: rule ", kept);
    assert_non_null(strstr(f->log, line));
    assert_non_null(strstr(f->log, ": action: expected a string"));
    assert_int_equal(get_rule(f, kept).state, MODEL_STATE_SYNCED);
    assert_int_equal(get_rule(f, other).state, MODEL_STATE_SYNCED);
}

/* ---- the typed failure, and the console's decision to retry --------------- */

/* A run that cannot start (inside the caller's transaction) says so as a local
 * failure, which the console does not retry by itself. */
static void test_local_failure_is_typed(void **state)
{
    fixture *f = *state;
    error_info err;
    assert_int_equal(store_begin(f->st, &err), ERROR_OK);
    assert_int_equal(sync_run(f->st, &fake_ops, f->remote, &f->opt, &f->report, &err),
                     ERROR_STATE);
    store_rollback(f->st);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_LOCAL);
    assert_string_equal(sync_failure_name(f->report.failure.kind), "local");
    assert_false(sync_report_should_retry(&f->report));
    assert_int_equal(f->remote->ncalls, 0);
}

static void test_failed_listing_is_typed(void **state)
{
    fixture *f = *state;
    /* Every try of the first page: 429, wait 30 s; the fifth is two windows
     * (120 s) after the run began with nothing settled: the run gives up. */
    for (int i = 0; i < 5; i++)
        fake_script(f->remote, OP_RULE_LIST, SYNC_RATE_LIMITED, false, 30, "slow down");
    assert_int_equal(run(f), ERROR_IO);
    assert_int_equal(f->remote->calls[OP_RULE_LIST], 5);
    const sync_failure *fl = &f->report.failure;
    assert_int_equal(fl->kind, SYNC_FAILURE_RATE_LIMITED);
    assert_true(fl->retry_after_s == 30.0);
    assert_true(fl->has_object);
    assert_int_equal(fl->object_kind, MODEL_KIND_RULE);
    assert_string_equal(fl->object_id, ""); /* a listing, not a row */
    assert_false(sync_report_should_retry(&f->report));
    assert_non_null(strstr(f->report.last_error, "rate limited (429: slow down) for 120 s"));
    assert_non_null(strstr(f->report.last_error, "the listing was not completed"));
}

/* What the console's worker decides (ui/sync_worker.c calls this and nothing
 * else): retry by itself only when the remote could not be reached. */
static void test_console_retries_on_the_typed_failure_only(void **state)
{
    fixture *f = *state;
    assert_int_equal(run_failing_create(f, NULL, SYNC_NOT_SENT, 5, "connection refused"),
                     ERROR_IO);
    assert_true(sync_report_should_retry(&f->report));
    /* A refused key is not worth retrying. */
    fake_script(f->remote, OP_RULE_CREATE, SYNC_AUTH, false, -1, "invalid API key");
    assert_int_equal(run(f), ERROR_CONFIG);
    assert_false(sync_report_should_retry(&f->report));
    /* A listing the server refused is not either. */
    fake_script(f->remote, OP_RULE_LIST, SYNC_REJECTED, false, -1, "bad request");
    assert_int_equal(run(f), ERROR_IO);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_REJECTED);
    assert_false(sync_report_should_retry(&f->report));
    /* The text is never read: only the type decides. */
    sync_report r;
    memset(&r, 0, sizeof r);
    snprintf(r.last_error, sizeof r.last_error, "the remote could not be reached: no");
    r.failure.kind = SYNC_FAILURE_REJECTED;
    assert_false(sync_report_should_retry(&r));
    r.failure.kind = SYNC_FAILURE_TIMED_OUT;
    assert_false(sync_report_should_retry(&r));
    r.last_error[0] = '\0';
    r.failure.kind = SYNC_FAILURE_UNREACHABLE;
    assert_true(sync_report_should_retry(&r));
    assert_false(sync_report_should_retry(NULL));
    assert_string_equal(sync_failure_name(SYNC_FAILURE_UNREACHABLE), "unreachable");
    assert_string_equal(sync_failure_name(SYNC_FAILURE_RATE_LIMITED), "rate_limited");
}

/* ---- orphans and the plan ------------------------------------------------- */

static void test_discarded_orphan_is_deleted_not_recreated(void **state)
{
    fixture *f = *state;
    char id[MODEL_ID_MAX + 1];
    new_cred(f, "agent", "", id);
    fake_script(f->remote, OP_CRED_CREATE, SYNC_AMBIGUOUS, true, -1, "timeout");
    f->opt.push = false;
    assert_int_equal(store_claim(f->st, MODEL_KIND_CRED, id, NULL), ERROR_OK);
    create_behind_our_back(f, id); /* reply lost */
    assert_int_equal(run(f), ERROR_OK); /* pull only: finds the orphan */
    assert_int_equal(cred_state(f, id), MODEL_STATE_ORPHANED);
    error_info err;
    assert_int_equal(store_discard(f->st, MODEL_KIND_CRED, id, NULL, &err), ERROR_OK);
    f->opt.push = true;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(FAKE_NCREDS(f->remote), 0);
    assert_int_equal(f->remote->calls[OP_CRED_CREATE], 1);
    model_object out;
    model_object_init(&out, MODEL_KIND_CRED);
    assert_int_equal(store_get(f->st, MODEL_KIND_CRED, id, &out, &err), ERROR_NOT_FOUND);
    assert_true(f->report.converged);
}

typedef struct plan_seen {
    char signs[16];
    char ids[16][MODEL_ID_MAX + 1];
    char why[16][MODEL_ERROR_MAX + 1];
    size_t n;
} plan_seen;

static error_code collect_plan(void *ctx, const sync_plan_item *item, error_info *err)
{
    (void)err;
    plan_seen *p = ctx;
    p->signs[p->n] = item->sign;
    strcpy(p->ids[p->n], model_object_id(item->object));
    snprintf(p->why[p->n], sizeof p->why[0], "%s", item->why);
    p->n++;
    return ERROR_OK;
}

static void test_plan_from_cache(void **state)
{
    fixture *f = *state;
    seed_remote_rules(f, 2);
    assert_int_equal(run(f), ERROR_OK);
    char doomed[MODEL_ID_MAX + 1], gone[MODEL_ID_MAX + 1];
    strcpy(doomed, FAKE_RULE(f->remote, 0)->id);
    strcpy(gone, FAKE_RULE(f->remote, 1)->id);
    error_info err;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, doomed, NULL, &err), ERROR_OK);
    assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, gone, MODEL_STATE_REMOTE_DELETED,
                                     NULL, &err),
                     ERROR_OK);
    char add[MODEL_ID_MAX + 1], bad[MODEL_ID_MAX + 1], cred[MODEL_ID_MAX + 1];
    new_rule(f, "192.168.0.0/16", MODEL_ACTION_ALLOW, add);
    new_rule(f, "192.169.0.0/16", MODEL_ACTION_ALLOW, bad);
    assert_int_equal(store_set_state(f->st, MODEL_KIND_RULE, bad, MODEL_STATE_FAILED,
                                     "cidr: 192.169.0.0/16 is reserved here (operation op_1)",
                                     &err),
                     ERROR_OK);
    new_cred(f, "agent", "", cred);
    size_t calls = f->remote->ncalls;
    plan_seen p = {0};
    assert_int_equal(sync_plan(f->st, collect_plan, &p, &err), ERROR_OK);
    assert_int_equal(f->remote->ncalls, calls); /* no network */
    assert_int_equal(p.n, 5);
    /* Rules by id (remote ids sort before local ones), then credentials. */
    assert_string_equal(p.ids[0], doomed);
    assert_int_equal(p.signs[0], '-');
    assert_string_equal(p.ids[1], gone);
    assert_int_equal(p.signs[1], '~');
    assert_int_equal(p.signs[2], '+');
    assert_int_equal(p.signs[3], '!');
    assert_string_equal(p.ids[3], bad);
    assert_non_null(strstr(p.why[3], "is reserved here")); /* the row's own error */
    assert_string_equal(p.ids[4], cred);
    assert_int_equal(p.signs[4], '+');
}

/* ---- edits in place ------------------------------------------------------- */

static unsigned field_bit(model_kind kind, const char *name)
{
    return kind_field_bit(kind, kind_field_by_name(kind, name));
}

/* A rule the remote has and the cache holds as synced; its id into id_out. */
static void synced_rule(fixture *f, const char *cidr, char *id_out)
{
    strcpy(id_out, fake_add_rule(f->remote, POLICY, cidr, MODEL_ACTION_ALLOW)->id);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(get_rule(f, id_out).state, MODEL_STATE_SYNCED);
}

/* The user's edit of a rule: a new cidr and/or description (NULL: unchanged). */
static void edit_rule(fixture *f, const char *id, const char *cidr, const char *description)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    strcpy(o.rule.id, id);
    unsigned fields = 0;
    if (cidr) {
        strcpy(o.rule.cidr, cidr);
        fields |= field_bit(MODEL_KIND_RULE, "cidr");
    }
    if (description) {
        strcpy(o.rule.description, description);
        fields |= field_bit(MODEL_KIND_RULE, "description");
    }
    store_edit_result result;
    error_info err;
    if (store_edit(f->st, &o, fields, &result, &err) != ERROR_OK)
        fail_msg("store_edit: %s", err.msg);
    assert_int_equal(result, STORE_EDIT_EDITED);
}

/* A credential created through a sync (so its token is held here). */
static void synced_cred(fixture *f, const char *description, const char *metadata,
                        char *id_out)
{
    new_cred(f, description, metadata, id_out);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(cred_state(f, id_out), MODEL_STATE_SYNCED);
}

static store_conflict conflict_of(fixture *f, model_kind kind, const char *id)
{
    store_edit_info info;
    memset(&info, 0, sizeof info);
    error_info err;
    assert_int_equal(store_edit_get(f->st, kind, id, &info, &err), ERROR_OK);
    store_conflict c = info.conflict;
    store_edit_info_clear(&info);
    return c;
}

static const fake_patch *last_patch(fixture *f)
{
    assert_true(f->remote->npatches > 0);
    return &f->remote->patches[f->remote->npatches - 1];
}

/* One PATCH per edited row, holding only the fields changed, with the row's
 * values; an untouched row sends nothing; nothing is created or deleted. */
static void test_edit_sends_one_patch_of_the_changed_fields(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1], c[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    synced_rule(f, "10.1.0.0/16", b);
    synced_cred(f, "agent", "team=net", c);
    size_t patches = f->remote->npatches;
    edit_rule(f, a, "10.0.0.0/16", "web");
    model_object o;
    get_cred(f, c, &o);
    assert_int_equal(model_acl_add(&o.cred.acl, "bind:*.example.com", NULL), ERROR_OK);
    error_info err;
    assert_int_equal(store_edit(f->st, &o, field_bit(MODEL_KIND_CRED, "acl"), NULL, &err),
                     ERROR_OK);
    model_object_clear(&o);
    f->push_total = 0;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->push_total, 2); /* the outbox counts edited rows */
    assert_int_equal(f->remote->npatches, patches + 2);
    const fake_patch *pr = &f->remote->patches[patches];
    assert_string_equal(pr->id, a);
    assert_int_equal(pr->fields, field_bit(MODEL_KIND_RULE, "cidr") |
                                     field_bit(MODEL_KIND_RULE, "description"));
    const fake_patch *pc = &f->remote->patches[patches + 1];
    assert_string_equal(pc->id, FAKE_CRED(f->remote, 0)->id); /* c is its local alias */
    assert_int_equal(pc->fields, field_bit(MODEL_KIND_CRED, "acl"));
    assert_int_equal(f->report.updated, 2);
    assert_int_equal(f->report.conflicts, 0);
    assert_true(f->report.converged);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE] + f->remote->calls[OP_RULE_DELETE], 0);
    /* The remote has the values; the rows are synced with them. */
    assert_string_equal(FAKE_RULE(f->remote, 0)->cidr, "10.0.0.0/16");
    assert_string_equal(FAKE_RULE(f->remote, 0)->description, "web");
    assert_string_equal(FAKE_RULE(f->remote, 1)->cidr, "10.1.0.0/16");
    assert_int_equal(FAKE_CRED(f->remote, 0)->acl.count, 1);
    assert_string_equal(FAKE_CRED(f->remote, 0)->metadata, "team=net");
    model_rule r = get_rule(f, a);
    assert_int_equal(r.state, MODEL_STATE_SYNCED);
    assert_string_equal(r.cidr, "10.0.0.0/16");
    assert_int_equal(cred_state(f, c), MODEL_STATE_SYNCED);
    char line[160];
    snprintf(line, sizeof line, "updated rule %s (10.0.0.0/16): cidr, description", a);
    assert_non_null(strstr(f->log, line));
    /* Settled: the next run sends nothing. */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->npatches, patches + 2);
}

/* PATCH whose reply was lost: the next look shows the values sent, which
 * settles the edit without a second PATCH. */
static void test_ambiguous_edit_confirmed_by_get(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, "10.0.0.0/16", NULL);
    fake_script(f->remote, OP_RULE_UPDATE, SYNC_AMBIGUOUS, true, -1, "connection reset");
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_UPDATE], 1);
    assert_int_equal(f->remote->calls[OP_RULE_GET], 2);
    assert_int_equal(f->report.updated, 1);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_SYNCED);
    assert_true(f->report.converged);
    assert_non_null(strstr(f->log, "already holds the edit"));
}

/* The PATCH was lost before it applied: the look after it shows the old values,
 * so the same PATCH goes again in the same run. */
static void test_ambiguous_edit_not_applied_stays_edited(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, "10.0.0.0/16", NULL);
    fake_script(f->remote, OP_RULE_UPDATE, SYNC_AMBIGUOUS, false, -1, "timed out");
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_UPDATE], 2);
    assert_int_equal(f->remote->calls[OP_RULE_GET], 2);
    assert_int_equal(f->report.updated, 1);
    assert_int_equal(f->report.retried, 1);
    assert_string_equal(FAKE_RULE(f->remote, 0)->cidr, "10.0.0.0/16");
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_SYNCED);
    assert_true(f->report.converged);
    /* Ambiguous every time: the row stays edited for the next sync. */
    edit_rule(f, a, "10.0.0.0/24", NULL);
    for (int i = 0; i < 5; i++)
        fake_script(f->remote, OP_RULE_UPDATE, SYNC_AMBIGUOUS, false, -1, "timed out");
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_EDITED);
    assert_int_equal(f->report.pending, 1);
    assert_false(f->report.converged);
    const sync_failure *rf = &f->report.row_failure;
    assert_int_not_equal(rf->kind, SYNC_FAILURE_NONE);
    assert_string_equal(rf->object_id, a);
    assert_non_null(strstr(f->log, "not updated yet (timed out)"));
    assert_int_equal(run(f), ERROR_OK);
    assert_string_equal(FAKE_RULE(f->remote, 0)->cidr, "10.0.0.0/24");
    assert_true(f->report.converged);
}

/* 404: the object was deleted remotely while edited here: a conflict, and the
 * object is never created again by itself. */
static void test_edit_of_deleted_object_is_a_conflict(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, NULL, "web");
    fake_drop(f->remote, MODEL_KIND_RULE, 0, 1);
    f->opt.pull = false; /* the look before the PATCH finds out */
    assert_int_equal(run(f), ERROR_OK);
    f->opt.pull = true;
    assert_int_equal(f->remote->calls[OP_RULE_GET], 1);
    assert_int_equal(f->remote->calls[OP_RULE_UPDATE], 0);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 0);
    assert_int_equal(FAKE_NRULES(f->remote), 0);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_CONFLICT);
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_GONE);
    assert_int_equal(f->report.conflicts, 1);
    assert_int_equal(f->report.attention, 1);
    assert_false(f->report.converged);
    assert_int_equal(f->report.row_failure.kind, SYNC_FAILURE_NOT_FOUND);
    assert_non_null(strstr(f->log, "was deleted remotely while edited here"));
    /* The next run leaves it to the user. */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_UPDATE], 0);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 0);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_CONFLICT);
}

/* A PATCH whose reply is lost, then a GET that finds nothing: gone as well. */
static void test_ambiguous_edit_then_404_is_a_conflict(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, NULL, "web");
    fake_script(f->remote, OP_RULE_UPDATE, SYNC_AMBIGUOUS, false, -1, "connection reset");
    fake_drop(f->remote, MODEL_KIND_RULE, 0, 1);
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_GET], 1);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 0);
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_GONE);
    assert_int_equal(f->report.conflicts, 1);
}

/* Each edit is checked by a look at its object right before the PATCH, so a
 * push-only sync needs no listing: a field changed remotely since the last pull
 * is a conflict, never overwritten; one deleted remotely is a gone conflict
 * without a PATCH. */
static void test_edits_checked_against_listing_first(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    synced_rule(f, "10.1.0.0/16", b);
    edit_rule(f, a, NULL, "web");
    edit_rule(f, b, NULL, "db");
    strcpy(FAKE_RULE(f->remote, 0)->description, "changed there");
    fake_drop(f->remote, MODEL_KIND_RULE, 1, 1);
    size_t lists = f->remote->calls[OP_RULE_LIST];
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_LIST], lists);
    assert_int_equal(f->remote->calls[OP_RULE_GET], 2);
    assert_int_equal(f->remote->calls[OP_RULE_UPDATE], 0);
    assert_string_equal(FAKE_RULE(f->remote, 0)->description, "changed there");
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_FIELDS);
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, b), STORE_CONFLICT_GONE);
    assert_int_equal(f->report.conflicts, 2);
    assert_false(f->report.converged);
}

/* A field not edited here that the remote changed takes the remote's value, and
 * the PATCH carries only the edited field, so the colleague's change stays. */
static void test_look_takes_unedited_remote_fields(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, NULL, "web");
    strcpy(FAKE_RULE(f->remote, 0)->cidr, "10.0.0.0/9");
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_UPDATE], 1);
    assert_string_equal(FAKE_RULE(f->remote, 0)->cidr, "10.0.0.0/9");
    assert_string_equal(FAKE_RULE(f->remote, 0)->description, "web");
    model_rule r = get_rule(f, a);
    assert_int_equal(r.state, MODEL_STATE_SYNCED);
    assert_string_equal(r.cidr, "10.0.0.0/9");
    assert_true(f->report.converged);
}

/* A delete from a cache that has not seen a remote change deletes nothing: the
 * look finds the change, and the row becomes a conflict "changed" holding the
 * remote's values; take-remote keeps it, keep-local deletes it anyway. */
static void test_stale_delete_is_a_conflict(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.4.0.0/16", a);
    error_info err;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, a, NULL, &err), ERROR_OK);
    strcpy(FAKE_RULE(f->remote, 0)->cidr, "203.0.113.0/24");
    strcpy(FAKE_RULE(f->remote, 0)->description, "block attacker");
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_DELETE], 0);
    assert_int_equal(FAKE_NRULES(f->remote), 1);
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_CHANGED);
    assert_int_equal(f->report.conflicts, 1);
    assert_false(f->report.converged);
    assert_true(store_conflict_holds_remote(f->st, MODEL_KIND_RULE, a));
    model_rule r = get_rule(f, a);
    assert_string_equal(r.cidr, "203.0.113.0/24");
    assert_string_equal(r.description, "block attacker");
    store_edit_info info;
    memset(&info, 0, sizeof info);
    assert_int_equal(store_edit_get(f->st, MODEL_KIND_RULE, a, &info, &err), ERROR_OK);
    char text[512];
    assert_non_null(strstr(sync_edit_describe(&info, NULL, text, sizeof text),
                           "deleted here, changed remotely: cidr 10.4.0.0/16 -> 203.0.113.0/24"));
    store_edit_info_clear(&info);
    /* An edit is refused until it is resolved. */
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    strcpy(o.rule.id, a);
    strcpy(o.rule.description, "x");
    assert_int_equal(store_edit(f->st, &o, field_bit(MODEL_KIND_RULE, "description"), NULL,
                                &err),
                     ERROR_STATE);
    model_object_clear(&o);
    /* A pull keeps it a conflict and follows the remote's values. */
    strcpy(FAKE_RULE(f->remote, 0)->description, "block attacker 2");
    f->opt.pull = true;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_CHANGED);
    assert_string_equal(get_rule(f, a).description, "block attacker 2");
    /* take-remote: kept, synced; nothing deleted. */
    assert_int_equal(store_resolve(f->st, MODEL_KIND_RULE, a, STORE_TAKE_REMOTE, NULL, &err),
                     ERROR_OK);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_SYNCED);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(FAKE_NRULES(f->remote), 1);
    /* Again, and keep-local: deleted anyway after another look. */
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, a, NULL, &err), ERROR_OK);
    strcpy(FAKE_RULE(f->remote, 0)->description, "changed once more");
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_CHANGED);
    assert_int_equal(store_resolve(f->st, MODEL_KIND_RULE, a, STORE_KEEP_LOCAL, NULL, &err),
                     ERROR_OK);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_DELETING);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(FAKE_NRULES(f->remote), 0);
    assert_true(f->report.converged);
}

/* A delete of a rule gone remotely needs only the look (404: done). */
static void test_delete_of_gone_object_is_done(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.4.0.0/16", a);
    error_info err;
    assert_int_equal(store_delete(f->st, MODEL_KIND_RULE, a, NULL, &err), ERROR_OK);
    fake_drop(f->remote, MODEL_KIND_RULE, 0, 1);
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_GET], 1);
    assert_int_equal(f->remote->calls[OP_RULE_DELETE], 0);
    assert_int_equal(f->report.deleted, 1);
    assert_int_equal(rule_count(f), 0);
}

/* Someone writes between the look and the PATCH (a field this edit did not
 * send): said on the row, never silently. */
static sync_outcome crossing_update(void *ctx, const model_object *in, unsigned fields,
                                    model_object *out, sync_result *res)
{
    fake_remote *r = ctx;
    strcpy(FAKE_RULE(r, 0)->cidr, "10.0.0.0/9");
    return fake_update(ctx, in, fields, out, res);
}

static void test_write_between_look_and_patch_is_marked(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, NULL, "web");
    sync_api_ops ops = fake_ops;
    ops.update = crossing_update;
    f->opt.pull = false;
    assert_int_equal(sync_run(f->st, &ops, f->remote, &f->opt, &f->report, &f->err), ERROR_OK);
    assert_int_equal(f->report.updated, 1);
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_CROSSED);
    assert_int_equal(f->report.attention, 1);
    assert_non_null(strstr(f->log, "someone else changed cidr while this edit was sent"));
    assert_string_equal(get_rule(f, a).cidr, "10.0.0.0/9");
    error_info err;
    assert_int_equal(store_resolve(f->st, MODEL_KIND_RULE, a, STORE_KEEP_LOCAL, NULL, &err),
                     ERROR_OK);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_SYNCED);
}

/* A scoped sync (a command's --sync) pushes its own rows and says how many
 * others wait; an unrelated conflict does not make it fail. */
static void test_scoped_push_sends_only_its_rows(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1], c[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", c);
    edit_rule(f, c, NULL, "mine");
    strcpy(FAKE_RULE(f->remote, 0)->description, "theirs");
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK); /* c becomes a conflict */
    new_rule(f, "10.1.0.0/16", MODEL_ACTION_ALLOW, a);
    new_rule(f, "10.2.0.0/16", MODEL_ACTION_ALLOW, b);
    size_t lists = f->remote->calls[OP_RULE_LIST];
    sync_row_ref only = {.kind = MODEL_KIND_RULE};
    strcpy(only.id, a);
    f->opt.scoped = true;
    f->opt.only = &only;
    f->opt.only_count = 1;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.created, 1);
    assert_int_equal(f->remote->calls[OP_RULE_LIST], lists);
    assert_int_equal(FAKE_NRULES(f->remote), 2);
    assert_true(f->report.converged);
    assert_int_equal(f->report.pending, 0);
    assert_int_equal(f->report.others, 2); /* b waits, c is a conflict */
    assert_int_equal(get_rule(f, b).state, MODEL_STATE_NEW);
    /* The local id still names the row once it is created. */
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->report.created, 0);
    assert_true(f->report.converged);
}

/* 400: the server refuses the edit: a conflict with its message; the local values
 * stay for the user to change, keep or drop. */
static void test_edit_refused_is_a_conflict(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, "10.9.0.0/16", NULL);
    fake_reject_cidr(f->remote, "10.9.0.0/16", "cidr 10.9.0.0/16 overlaps a reserved range");
    assert_int_equal(run(f), ERROR_OK);
    model_rule r = get_rule(f, a);
    assert_int_equal(r.state, MODEL_STATE_CONFLICT);
    assert_string_equal(r.cidr, "10.9.0.0/16");
    assert_non_null(strstr(r.error, "overlaps a reserved range (operation op_fake400)"));
    assert_int_equal(conflict_of(f, MODEL_KIND_RULE, a), STORE_CONFLICT_REJECTED);
    assert_string_equal(FAKE_RULE(f->remote, 0)->cidr, "10.0.0.0/8");
    assert_int_equal(f->report.conflicts, 1);
    assert_int_equal(f->report.attention, 1);
    assert_int_equal(f->report.row_failure.kind, SYNC_FAILURE_REJECTED);
    assert_int_equal(f->report.row_failure.http_status, 400);
    char line[160];
    snprintf(line, sizeof line, "server refused the edit of rule %s: cidr 10.9.0.0/16", a);
    assert_non_null(strstr(f->log, line));
}

/* A 429 pauses the queue for Retry-After and the PATCH is sent again. */
static void test_edit_rate_limited_is_retried(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    edit_rule(f, a, NULL, "web");
    fake_script(f->remote, OP_RULE_UPDATE, SYNC_RATE_LIMITED, false, 7, "slow down");
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_RULE_UPDATE], 2);
    assert_true(f->clock.slept >= 7.0 - 1e-9);
    assert_int_equal(f->report.retried, 1);
    assert_int_equal(f->report.updated, 1);
    assert_int_equal(get_rule(f, a).state, MODEL_STATE_SYNCED);
    assert_true(f->report.converged);
}

/* A credential's edit never touches its token, and the token reaches no log. */
static void test_edit_keeps_the_token(void **state)
{
    fixture *f = *state;
    char c[MODEL_ID_MAX + 1];
    synced_cred(f, "agent", "", c);
    model_object o;
    get_cred(f, c, &o);
    strcpy(o.cred.description, "agent two");
    error_info err;
    assert_int_equal(store_edit(f->st, &o, field_bit(MODEL_KIND_CRED, "description"), NULL,
                                &err),
                     ERROR_OK);
    model_object_clear(&o);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(last_patch(f)->fields, field_bit(MODEL_KIND_CRED, "description"));
    assert_string_equal(FAKE_CRED(f->remote, 0)->description, "agent two");
    assert_every_remote_cred_has_its_token(f);
    assert_null(strstr(f->log, FAKE_TOKEN(f->remote, 0)));
    assert_true(f->report.converged);
}

/* The create sends the marker, and the same run PATCHes the user's metadata back
 * (only the metadata); with metadata of the API's full 4,096 bytes the marker goes
 * alone. */
static void test_cred_marker_removed_in_the_same_run(void **state)
{
    fixture *f = *state;
    char c[MODEL_ID_MAX + 1];
    static char big[MODEL_METADATA_MAX + 1];
    memset(big, 'm', MODEL_METADATA_MAX);
    big[MODEL_METADATA_MAX] = '\0';
    new_cred(f, "big", big, c);
    assert_int_equal(run(f), ERROR_OK);
    char marker[MODEL_ID_MAX + 32];
    snprintf(marker, sizeof marker, SYNC_MARKER_KEY "%s", c);
    assert_string_equal(f->remote->last_create_metadata, marker);
    assert_int_equal(f->report.created, 1);
    assert_int_equal(f->report.failed, 0);
    assert_int_equal(f->remote->calls[OP_CRED_UPDATE], 1);
    assert_int_equal(last_patch(f)->fields, field_bit(MODEL_KIND_CRED, "metadata"));
    assert_string_equal(FAKE_CRED(f->remote, 0)->metadata, big);
    /* The create came first, then its PATCH. */
    size_t create_at = 0, patch_at = 0;
    for (size_t i = 0; i < f->remote->ncalls; i++) {
        if (f->remote->order[i] == OP_CRED_CREATE)
            create_at = i + 1;
        if (f->remote->order[i] == OP_CRED_UPDATE)
            patch_at = i + 1;
    }
    assert_true(create_at > 0 && patch_at > create_at);
    model_object o;
    get_cred(f, c, &o);
    assert_string_equal(o.cred.metadata, big);
    assert_int_equal(o.cred.state, MODEL_STATE_SYNCED);
    model_object_clear(&o);
    assert_every_remote_cred_has_its_token(f);
    assert_true(f->report.converged);
}

/* The marker's PATCH is refused by the rate limit every time: the credential is
 * created (its token kept) and its edit waits for the next sync. */
static void test_cred_marker_patch_left_for_later(void **state)
{
    fixture *f = *state;
    char c[MODEL_ID_MAX + 1];
    new_cred(f, "agent", "team=net", c);
    /* 429s on the look before the PATCH until the run gives up (two windows
     * with nothing settled after the create). */
    for (int i = 0; i < 5; i++)
        fake_script(f->remote, OP_CRED_GET, SYNC_RATE_LIMITED, false, 30, "slow down");
    assert_int_equal(run(f), ERROR_IO);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_RATE_LIMITED);
    assert_int_equal(f->report.created, 1);
    assert_int_equal(cred_state(f, c), MODEL_STATE_EDITED);
    assert_every_remote_cred_has_its_token(f);
    assert_int_equal(f->report.row_failure.kind, SYNC_FAILURE_RATE_LIMITED);
    assert_int_equal(run(f), ERROR_OK);
    assert_string_equal(FAKE_CRED(f->remote, 0)->metadata, "team=net");
    assert_int_equal(cred_state(f, c), MODEL_STATE_SYNCED);
    assert_true(f->report.converged);
}

/* The plan shows an edit with its fields, and conflicts with why. */
static void test_plan_shows_edits_and_conflicts(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1], c[MODEL_ID_MAX + 1];
    synced_rule(f, "10.0.0.0/8", a);
    synced_rule(f, "10.1.0.0/16", b);
    synced_rule(f, "10.2.0.0/16", c);
    edit_rule(f, b, NULL, "gone soon");
    edit_rule(f, c, "10.9.0.0/16", NULL);
    fake_drop(f->remote, MODEL_KIND_RULE, 1, 1);
    fake_reject_cidr(f->remote, "10.9.0.0/16", "cidr 10.9.0.0/16 is reserved");
    assert_int_equal(run(f), ERROR_OK);
    edit_rule(f, a, "10.0.0.0/16", "");
    plan_seen p = {0};
    error_info err;
    assert_int_equal(sync_plan(f->st, collect_plan, &p, &err), ERROR_OK);
    assert_int_equal(p.n, 3);
    assert_string_equal(p.ids[0], a);
    assert_int_equal(p.signs[0], '~');
    assert_string_equal(p.why[0], "cidr 10.0.0.0/8 -> 10.0.0.0/16");
    assert_string_equal(p.ids[1], b);
    assert_int_equal(p.signs[1], '!');
    assert_string_equal(p.why[1], "deleted remotely while edited here: resolve with "
                                  "--keep-local or --take-remote");
    assert_string_equal(p.ids[2], c);
    assert_int_equal(p.signs[2], '!');
    assert_non_null(strstr(p.why[2], "cidr 10.9.0.0/16 is reserved (operation op_fake400)"));
}

/* A marker still on the server (an older rampart left it, or its PATCH was lost
 * and the row discarded meanwhile): the pull makes the row edited and another
 * round of the same run PATCHes it away. */
static void test_marker_left_on_server_removed_by_the_next_round(void **state)
{
    fixture *f = *state;
    char c[MODEL_ID_MAX + 1];
    synced_cred(f, "agent", "team=net", c);
    snprintf(FAKE_CRED(f->remote, 0)->metadata, MODEL_METADATA_MAX + 1,
             "team=net\n" SYNC_MARKER_KEY "%s", c);
    size_t patches = f->remote->npatches;
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->npatches, patches + 1);
    assert_int_equal(last_patch(f)->fields, field_bit(MODEL_KIND_CRED, "metadata"));
    assert_string_equal(FAKE_CRED(f->remote, 0)->metadata, "team=net");
    assert_int_equal(cred_state(f, c), MODEL_STATE_SYNCED);
    assert_int_equal(f->report.updated, 0); /* the marker's PATCH: no one's edit */
    assert_true(f->report.converged);
    assert_every_remote_cred_has_its_token(f);
}

/* The edit descriptions the CLI and the console share, from an edit as the store
 * reads it (built by hand: every conflict reason, cuts, lists, empty values). */
static size_t field_index(model_kind kind, const char *name)
{
    const kind_desc *d = kind_get(kind);
    for (size_t i = 0; i < d->field_count; i++) {
        if (!strcmp(d->fields[i].name, name))
            return i;
    }
    fail_msg("no field %s", name);
    return 0;
}

static void add_edit_field(store_edit_info *info, const char *name, const char *base,
                           const char *local, const char *remote)
{
    store_edit_field *f = &info->field[info->count++];
    f->field = field_index(info->kind, name);
    f->base = base ? strdup(base) : NULL;
    f->local = local ? strdup(local) : NULL;
    f->remote = remote ? strdup(remote) : NULL;
    info->fields |= field_bit(info->kind, name);
}

static void edit_info(store_edit_info *info, model_kind kind, model_state st,
                      store_conflict conflict)
{
    memset(info, 0, sizeof *info);
    info->kind = kind;
    info->state = st;
    info->conflict = conflict;
}

static void test_edit_describe(void **state)
{
    (void)state;
    char buf[512];
    store_edit_info info;
    edit_info(&info, MODEL_KIND_RULE, MODEL_STATE_EDITED, STORE_CONFLICT_NONE);
    add_edit_field(&info, "cidr", "10.0.0.0/8", "10.0.0.0/16", NULL);
    add_edit_field(&info, "description", "", "web", NULL);
    add_edit_field(&info, "metadata", "a=1\nb=2", "", NULL);
    assert_string_equal(sync_edit_describe(&info, NULL, buf, sizeof buf),
                        "cidr 10.0.0.0/8 -> 10.0.0.0/16; description \"\" -> web; "
                        "metadata a=1\\nb=2 -> \"\"");
    store_edit_info_clear(&info);

    /* A long text is cut at SYNC_EDIT_VALUE_MAX bytes with "…"; ACL rules are
     * joined by ", ". */
    edit_info(&info, MODEL_KIND_CRED, MODEL_STATE_EDITED, STORE_CONFLICT_NONE);
    add_edit_field(&info, "description", "0123456789012345678901234567890123456789xyz",
                   "short", NULL);
    add_edit_field(&info, "acl", "", "bind:a.example.com\nbind:b.example.com", NULL);
    assert_string_equal(sync_edit_describe(&info, NULL, buf, sizeof buf),
                        "description 0123456789012345678901234567890123456789\xE2\x80\xA6"
                        " -> short; acl \"\" -> bind:a.example.com, bind:b.example.com");
    /* The whole line cut to the buffer, at a character boundary. */
    char small[24];
    sync_edit_describe(&info, NULL, small, sizeof small);
    assert_string_equal(small, "description 01234567\xE2\x80\xA6"); /* 23 bytes */
    store_edit_info_clear(&info);

    edit_info(&info, MODEL_KIND_RULE, MODEL_STATE_CONFLICT, STORE_CONFLICT_FIELDS);
    add_edit_field(&info, "cidr", "10.0.0.0/8", "10.0.0.0/16", "10.1.0.0/16");
    add_edit_field(&info, "description", "", "web", NULL); /* edited, not conflicting */
    assert_string_equal(sync_edit_describe(&info, NULL, buf, sizeof buf),
                        "cidr: local 10.0.0.0/16, remote 10.1.0.0/16 (changed on both "
                        "sides): resolve with --keep-local or --take-remote");
    store_edit_info_clear(&info);

    edit_info(&info, MODEL_KIND_RULE, MODEL_STATE_CONFLICT, STORE_CONFLICT_GONE);
    add_edit_field(&info, "description", "", "web", NULL);
    assert_string_equal(sync_edit_describe(&info, NULL, buf, sizeof buf),
                        "deleted remotely while edited here: resolve with --keep-local or "
                        "--take-remote");
    store_edit_info_clear(&info);

    /* A create that clashes, then an edited cidr that does. */
    edit_info(&info, MODEL_KIND_RULE, MODEL_STATE_CONFLICT, STORE_CONFLICT_KEY);
    strcpy(info.other_id, "ipr_2Zz1lqOxDdQyVpYcAAAAAAAAAAB");
    assert_string_equal(sync_edit_describe(&info, NULL, buf, sizeof buf),
                        "the server has rule ipr_2Zz1lqOxDdQyVpYcAAAAAAAAAAB for this cidr "
                        "with the other action: resolve with --keep-local or --take-remote");
    add_edit_field(&info, "cidr", "10.0.0.0/8", "10.1.0.0/16", NULL);
    assert_string_equal(sync_edit_describe(&info, NULL, buf, sizeof buf),
                        "the server has rule ipr_2Zz1lqOxDdQyVpYcAAAAAAAAAAB for this cidr: "
                        "resolve with --keep-local or --take-remote");
    store_edit_info_clear(&info);

    edit_info(&info, MODEL_KIND_RULE, MODEL_STATE_CONFLICT, STORE_CONFLICT_REJECTED);
    add_edit_field(&info, "cidr", "10.0.0.0/8", "10.9.0.0/16", NULL);
    assert_string_equal(sync_edit_describe(&info, "cidr is reserved (operation op_1)", buf,
                                           sizeof buf),
                        "cidr is reserved (operation op_1)");
    store_edit_info_clear(&info);

    /* A settled row has nothing to say. */
    edit_info(&info, MODEL_KIND_RULE, MODEL_STATE_SYNCED, STORE_CONFLICT_NONE);
    assert_string_equal(sync_edit_describe(&info, NULL, buf, sizeof buf), "");
}

/* A reply under the low-speed limit (timed_out) stops the run instead of being
 * waited on again: the create is unknown, nothing else is sent, the next run
 * settles it by the listing. */
static void test_too_slow_reply_stops_the_run(void **state)
{
    fixture *f = *state;
    char a[MODEL_ID_MAX + 1], b[MODEL_ID_MAX + 1];
    new_rule(f, "10.0.0.0/8", MODEL_ACTION_ALLOW, a);
    new_rule(f, "10.1.0.0/16", MODEL_ACTION_ALLOW, b);
    fake_script(f->remote, OP_RULE_CREATE, SYNC_AMBIGUOUS, true, -1, "operation too slow");
    f->remote->script[OP_RULE_CREATE][0].failure = SYNC_FAILURE_TIMED_OUT;
    assert_int_equal(run(f), ERROR_IO);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_TIMED_OUT);
    assert_int_equal(f->remote->calls[OP_RULE_CREATE], 1);
    assert_int_equal(f->remote->calls[OP_RULE_LIST], 0);
    assert_non_null(strstr(f->report.last_error, "too slow"));
    assert_int_equal(run(f), ERROR_OK);
    assert_true(f->report.converged);
    assert_int_equal(FAKE_NRULES(f->remote), 2);
}

/* ---- another sync of the same cache ---------------------------------------- */

/* A clock whose third sleep ends the other process's sync (its lock released). */
typedef struct lock_clock {
    double now;
    int sleeps, release_at;
    store_sync_lock *held;
} lock_clock;

static double lock_now(void *ctx)
{
    return ((lock_clock *)ctx)->now;
}

static void lock_sleep(void *ctx, double seconds)
{
    lock_clock *c = ctx;
    c->now += seconds;
    if (++c->sleeps == c->release_at) {
        store_sync_unlock(c->held);
        c->held = NULL;
    }
}

/* Busy at once by default; with wait_for_lock, it runs once the other sync ends,
 * and gives up busy at its deadline if that sync never does. */
static void test_waits_for_another_sync_of_the_cache(void **state)
{
    fixture *f = *state;
    char dir[64], path[128];
    ts_temp_dir_path(dir, sizeof dir, "/tmp/rampart-lock-XXXXXX", path, sizeof path, "c.db");
    store *other = ts_store_open(path), *mine = ts_store_open(path);
    lock_clock c = {.now = 1000, .release_at = 3};
    assert_int_equal(store_sync_lock_take(other, &c.held, NULL), ERROR_OK);
    sync_options o = f->opt;
    o.clock = (sync_clock){.now = lock_now, .sleep = lock_sleep, .ctx = &c};
    assert_int_equal(sync_run(mine, &fake_ops, f->remote, &o, &f->report, &f->err),
                     ERROR_STATE);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_BUSY);
    o.wait_for_lock = true;
    assert_int_equal(sync_run(mine, &fake_ops, f->remote, &o, &f->report, &f->err), ERROR_OK);
    assert_null(c.held);
    assert_true(c.sleeps >= 3);
    assert_non_null(strstr(f->log, "another sync of this cache is running"));

    assert_int_equal(store_sync_lock_take(other, &c.held, NULL), ERROR_OK);
    c.release_at = -1; /* never */
    o.deadline_s = 2;
    assert_int_equal(sync_run(mine, &fake_ops, f->remote, &o, &f->report, &f->err),
                     ERROR_STATE);
    assert_int_equal(f->report.failure.kind, SYNC_FAILURE_BUSY);
    assert_true(c.now >= 1000 + 2);
    store_sync_unlock(c.held);
    store_close(mine);
    store_close(other);
    assert_int_equal(ts_remove_tree(dir), 0);
}

/* ---- credential rotation ---------------------------------------------------- */

/* A synced credential with its token, rotated with `mode`: the successor's id. */
static void rotated_cred(fixture *f, store_rotation_mode mode, char *old_id, char *new_id)
{
    char local[MODEL_ID_MAX + 1];
    new_cred(f, "web", "team=a", local);
    assert_int_equal(run(f), ERROR_OK);
    model_object o;
    get_cred(f, local, &o);
    snprintf(old_id, MODEL_ID_MAX + 1, "%s", o.cred.id);
    model_object_clear(&o);
    error_info err;
    assert_int_equal(store_rotation_start(f->st, old_id, 3600, mode, "", 1800000000, new_id,
                                          &err), ERROR_OK);
    memset(f->remote->calls, 0, sizeof f->remote->calls);
}

/* --now: one push creates the successor (POST, the marker's look and PATCH) and
 * deletes the old one after its look: 5 requests, and the old one is gone. */
static void test_rotate_now_in_one_push(void **state)
{
    fixture *f = *state;
    char old_id[MODEL_ID_MAX + 1], new_id[MODEL_ID_MAX + 1];
    rotated_cred(f, STORE_ROTATE_NOW, old_id, new_id);
    f->opt.pull = false;
    assert_int_equal(run(f), ERROR_OK);
    const fake_remote *r = f->remote;
    assert_int_equal(r->calls[OP_CRED_CREATE], 1);
    assert_int_equal(r->calls[OP_CRED_GET], 2);
    assert_int_equal(r->calls[OP_CRED_UPDATE], 1);
    assert_int_equal(r->calls[OP_CRED_DELETE], 1);
    assert_int_equal(f->report.deleted, 1);
    model_object o;
    model_object_init(&o, MODEL_KIND_CRED);
    error_info err;
    assert_int_equal(store_get(f->st, MODEL_KIND_CRED, old_id, &o, &err), ERROR_NOT_FOUND);
    store_rotation rot;
    assert_int_equal(store_rotation_get(f->st, new_id, &rot, &err), ERROR_OK);
    assert_int_equal(rot.state, STORE_ROTATION_RETIRED);
    assert_true(rot.new_held);
    assert_every_remote_cred_has_its_token(f);
    assert_non_null(strstr(f->log, "retiring"));
}

/* Grace mode: the successor is created, the old one stays (its grace period). */
static void test_rotate_grace_keeps_the_old_one(void **state)
{
    fixture *f = *state;
    char old_id[MODEL_ID_MAX + 1], new_id[MODEL_ID_MAX + 1];
    rotated_cred(f, STORE_ROTATE_GRACE, old_id, new_id);
    assert_int_equal(run(f), ERROR_OK);
    assert_int_equal(f->remote->calls[OP_CRED_DELETE], 0);
    assert_int_equal(cred_state(f, old_id), MODEL_STATE_SYNCED);
    store_rotation rot;
    error_info err;
    assert_int_equal(store_rotation_get(f->st, old_id, &rot, &err), ERROR_OK);
    assert_int_equal(rot.state, STORE_ROTATION_GRACE);
    assert_true(rot.held_at > 0);
    assert_true(f->report.converged); /* a rotation in its grace period is no change */
}

/* A successor the key may not create (403) stops the rotation with the reason;
 * the old credential stays. Any other 403 create stays queued. */
static void test_rotate_successor_403_stops(void **state)
{
    fixture *f = *state;
    char old_id[MODEL_ID_MAX + 1], new_id[MODEL_ID_MAX + 1];
    rotated_cred(f, STORE_ROTATE_NOW, old_id, new_id);
    fake_script(f->remote, OP_CRED_CREATE, SYNC_AUTH, false, -1,
                "the API key may not do this");
    f->remote->script[OP_CRED_CREATE][0].http_status = 403;
    assert_int_not_equal(run(f), ERROR_OK);
    assert_int_equal(cred_state(f, new_id), MODEL_STATE_FAILED);
    assert_int_equal(cred_state(f, old_id), MODEL_STATE_SYNCED);
    store_rotation rot;
    error_info err;
    assert_int_equal(store_rotation_get(f->st, old_id, &rot, &err), ERROR_OK);
    assert_int_equal(rot.state, STORE_ROTATION_STOPPED);
    assert_non_null(strstr(rot.error, "may not"));
    assert_int_equal(f->remote->calls[OP_CRED_DELETE], 0);
}

/* Each outcome's name (for logs and --json) and the failure a result that names
 * none stands for; a value out of range is neither a name nor a success. */
static void test_outcome_names_and_failures(void **state)
{
    (void)state;
    static const struct {
        sync_outcome outcome;
        const char *name;
        sync_failure_kind failure;
    } cases[] = {
        {SYNC_OK, "ok", SYNC_FAILURE_NONE},
        {SYNC_NOT_SENT, "not_sent", SYNC_FAILURE_UNREACHABLE},
        {SYNC_AMBIGUOUS, "ambiguous", SYNC_FAILURE_CONNECTION_LOST},
        {SYNC_REJECTED, "rejected", SYNC_FAILURE_REJECTED},
        {SYNC_RATE_LIMITED, "rate_limited", SYNC_FAILURE_RATE_LIMITED},
        {SYNC_AUTH, "auth", SYNC_FAILURE_AUTH},
        {SYNC_NOT_FOUND, "not_found", SYNC_FAILURE_NOT_FOUND},
        {(sync_outcome)99, "unknown", SYNC_FAILURE_SERVER_ERROR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_string_equal(sync_outcome_name(cases[i].outcome), cases[i].name);
        assert_int_equal(sync_outcome_failure(cases[i].outcome), cases[i].failure);
    }
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outcome_names_and_failures),
        T(test_creates_rules_and_creds),
        T(test_deletes_and_404_is_done),
        T(test_rejected_create_fails_with_message),
        T(test_auth_error_on_create_stops),
        T(test_rotate_now_in_one_push),
        T(test_rotate_grace_keeps_the_old_one),
        T(test_rotate_successor_403_stops),
        T(test_ambiguous_rule_found_by_listing),
        T(test_ambiguous_rule_not_created_is_resent),
        T(test_ambiguous_cred_orphaned_then_recreated),
        T(test_crash_in_creating_reconciles_first),
        T(test_auth_error_during_pull_marks_nothing),
        T(test_interrupted_pull_leaves_cache),
        T(test_item_without_id_fails_the_pull),
        T(test_listing_that_loops_fails_the_pull),
        T(test_remote_additions_and_deletions),
        T(test_empty_page_ends_listing),
        T(test_push_only_and_pull_only),
        T(test_429_pauses_queue_for_retry_after),
        T(test_retry_after_is_clamped),
        T(test_backoff_without_retry_after),
        T(test_429s_are_not_attempts),
        T(test_not_sent_is_retried),
        T(test_unreachable_remote_stops),
        T(test_rate_per_min_is_an_even_budget),
        T(test_cancel_between_requests),
        T(test_reply_without_token_is_replaced),
        T(test_reply_with_malformed_token_is_orphaned),
        T(test_one_sync_at_a_time),
        T(test_discarded_orphan_is_deleted_not_recreated),
        T(test_plan_from_cache),
        T(test_pull_refuses_bad_remote_rows),
        T(test_pull_keeps_unreadable_remote_row),
        T(test_local_failure_is_typed),
        T(test_failed_listing_is_typed),
        T(test_console_retries_on_the_typed_failure_only),
        T(test_edit_sends_one_patch_of_the_changed_fields),
        T(test_ambiguous_edit_confirmed_by_get),
        T(test_ambiguous_edit_not_applied_stays_edited),
        T(test_edit_of_deleted_object_is_a_conflict),
        T(test_ambiguous_edit_then_404_is_a_conflict),
        T(test_edits_checked_against_listing_first),
        T(test_look_takes_unedited_remote_fields),
        T(test_stale_delete_is_a_conflict),
        T(test_delete_of_gone_object_is_done),
        T(test_write_between_look_and_patch_is_marked),
        T(test_scoped_push_sends_only_its_rows),
        T(test_waits_for_another_sync_of_the_cache),
        T(test_too_slow_reply_stops_the_run),
        T(test_edit_refused_is_a_conflict),
        T(test_edit_rate_limited_is_retried),
        T(test_edit_keeps_the_token),
        T(test_cred_marker_removed_in_the_same_run),
        T(test_cred_marker_patch_left_for_later),
        T(test_plan_shows_edits_and_conflicts),
        T(test_edit_describe),
        T(test_marker_left_on_server_removed_by_the_next_round),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
