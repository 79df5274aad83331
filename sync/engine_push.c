/*
 * engine: pushing the outbox. Deletes first (a delete frees a natural key a create
 * may need), then creates. Every state move is its own transaction, and a row is
 * claimed (creating) before its request goes out, so a crash mid-request leaves
 * "creating", which the next run reconciles by a listing before sending again.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PAGE_ROWS = 32, CONFIRM_TRIES = 3 };

static unsigned bit(model_state state)
{
    return 1u << state;
}

/* ---- walking the outbox --------------------------------------------------- */

typedef void (*rule_fn)(engine *e, const model_rule *row);
typedef void (*cred_fn)(engine *e, const model_cred *row);

typedef struct outbox_walk {
    engine *e;
    rule_fn on_rule;
    cred_fn on_cred;
} outbox_walk;

/* Any code but ERROR_OK ends the store's walk: the engine's own stop uses
 * ERROR_STATE, told apart from a database failure by e->stop. */
static error_code visit_rules(void *wp, model_rule *rows, size_t n, error_info *err)
{
    (void)err;
    outbox_walk *w = wp;
    for (size_t i = 0; i < n && w->e->stop == ENGINE_GO; i++)
        w->on_rule(w->e, &rows[i]);
    return w->e->stop == ENGINE_GO ? ERROR_OK : ERROR_STATE;
}

static error_code visit_creds(void *wp, model_cred *rows, size_t n, error_info *err)
{
    (void)err;
    outbox_walk *w = wp;
    for (size_t i = 0; i < n && w->e->stop == ENGINE_GO; i++)
        w->on_cred(w->e, &rows[i]);
    return w->e->stop == ENGINE_GO ? ERROR_OK : ERROR_STATE;
}

/* Keyset walks over the rows in `states`: rows that leave those states (or take
 * a remote id) while we act on them never come back. */
static void each_rule(engine *e, unsigned states, rule_fn fn)
{
    store_query q = {.states = states};
    outbox_walk w = {.e = e, .on_rule = fn};
    error_info err;
    if (store_rule_walk(e->st, &q, PAGE_ROWS, visit_rules, &w, &err) && e->stop == ENGINE_GO)
        engine_db_fail(e, &err);
}

static void each_cred(engine *e, unsigned states, cred_fn fn)
{
    store_query q = {.states = states};
    outbox_walk w = {.e = e, .on_cred = fn};
    error_info err;
    if (store_cred_walk(e->st, &q, PAGE_ROWS, visit_creds, &w, &err) && e->stop == ENGINE_GO)
        engine_db_fail(e, &err);
}

error_code engine_outbox_size(engine *e, size_t *out, error_info *err)
{
    size_t rules[MODEL_STATE_COUNT], creds[MODEL_STATE_COUNT];
    if (store_rule_state_counts(e->st, rules, err) || store_cred_state_counts(e->st, creds, err))
        return err->code;
    *out = rules[MODEL_STATE_NEW] + rules[MODEL_STATE_DELETING] + creds[MODEL_STATE_NEW] +
           creds[MODEL_STATE_DELETING] + creds[MODEL_STATE_ORPHANED];
    return ERROR_OK;
}

/* A state move of one row; a store failure stops the run. */
static bool move(engine *e, bool is_rule, const char *id, model_state state,
                 const char *why)
{
    error_info err;
    error_code rc = is_rule ? store_rule_set_state(e->st, id, state, why, &err)
                            : store_cred_set_state(e->st, id, state, why, &err);
    if (rc != ERROR_OK)
        engine_db_fail(e, &err);
    return rc == ERROR_OK;
}

/* ---- deletes -------------------------------------------------------------- */

typedef struct delete_job {
    bool is_rule;
    const char *id;
} delete_job;

static sync_outcome send_delete(engine *e, void *arg, sync_result *res)
{
    const delete_job *d = arg;
    return d->is_rule ? e->ops->rule_delete(e->api, d->id, res)
                      : e->ops->cred_delete(e->api, d->id, res);
}

/* 204 or 404: the remote copy is gone. An orphan then goes back to new (created
 * again later in this push); any other row is gone for good. */
static void delete_done(engine *e, const delete_job *d, model_state state, bool was_gone)
{
    const char *noun = d->is_rule ? "rule" : "credential";
    error_info err;
    error_code rc;
    if (state == MODEL_STATE_ORPHANED) {
        rc = store_cred_requeue(e->st, d->id, &err);
        if (rc == ERROR_STATE) {
            /* The user discarded it meanwhile (now deleting): the delete settled it. */
            rc = store_cred_remove(e->st, d->id, &err);
        } else if (rc == ERROR_OK) {
            e->report->orphans_deleted++;
            engine_log(e, SYNC_LOG_INFO, "deleted credential %s remotely (its token was "
                       "lost): creating it again", d->id);
        }
    } else {
        rc = d->is_rule ? store_rule_remove(e->st, d->id, &err)
                        : store_cred_remove(e->st, d->id, &err);
        if (rc == ERROR_OK) {
            e->report->deleted++;
            engine_log(e, SYNC_LOG_INFO, "deleted %s %s%s", noun, d->id,
                       was_gone ? " (it was already gone)" : "");
        }
    }
    if (rc != ERROR_OK)
        engine_db_fail(e, &err);
}

static void push_delete(engine *e, bool is_rule, const char *id, model_state state)
{
    delete_job d = {is_rule, id};
    sync_result res;
    sync_outcome out = engine_send_idempotent(e, send_delete, &d, &res);
    const char *noun = is_rule ? "rule" : "credential";
    switch (out) {
    case SYNC_OK:
    case SYNC_NOT_FOUND:
        delete_done(e, &d, state, out == SYNC_NOT_FOUND);
        break;
    case SYNC_REJECTED:
        engine_log(e, SYNC_LOG_ERROR, "server refused to delete %s %s: %s", noun, id,
                   res.message);
        move(e, is_rule, id, state, res.message);
        break;
    default:
        if (e->stop == ENGINE_GO)
            engine_log(e, SYNC_LOG_WARN, "%s %s not deleted yet (%s): the next sync "
                       "tries again", noun, id, res.message);
        break;
    }
    engine_step(e, 1);
}

static void delete_rule(engine *e, const model_rule *row)
{
    push_delete(e, true, row->id, row->state);
}

static void delete_cred(engine *e, const model_cred *row)
{
    push_delete(e, false, row->id, row->state);
}

/* ---- creates -------------------------------------------------------------- */

typedef struct create_job {
    bool is_rule;
    const char *local_id;
    const char *label;        /* cidr or description, for log lines */
    const model_rule *rule;
    const model_cred *cred;   /* the request: metadata carries the marker */
    model_rule rule_out;
    model_cred cred_out;
} create_job;

static sync_outcome send_create(engine *e, create_job *j, sync_result *res)
{
    if (j->is_rule) {
        memset(&j->rule_out, 0, sizeof j->rule_out);
        return e->ops->rule_create(e->api, j->rule, &j->rule_out, res);
    }
    model_cred_clear(&j->cred_out);
    return e->ops->cred_create(e->api, j->cred, &j->cred_out, res);
}

/* 201: the row takes the remote id (and a credential its token) in one
 * transaction. A reply the store cannot record leaves the outcome to a listing. */
static void create_done(engine *e, create_job *j)
{
    const char *remote_id = j->is_rule ? j->rule_out.id : j->cred_out.id;
    if (!j->is_rule && (!j->cred_out.token || !j->cred_out.token[0])) {
        /* Useless without its token: the listing finds it by its marker, then it
         * is deleted and created again. */
        engine_log(e, SYNC_LOG_WARN, "credential %s: the reply carried no token: the "
                   "listing will tell", j->local_id);
        move(e, false, j->local_id, MODEL_STATE_UNKNOWN, "the reply carried no token");
        return;
    }
    error_info err;
    error_code rc = ERROR_IO;
    /* The token exists only in memory now: a busy database (another writer past
     * the busy timeout) gets a few more tries before it is given up. */
    for (int attempt = 0; attempt < CONFIRM_TRIES && rc == ERROR_IO; attempt++)
        rc = j->is_rule ? store_rule_confirm_create(e->st, j->local_id, &j->rule_out, &err)
                        : store_cred_confirm_create(e->st, j->local_id, &j->cred_out, &err);
    const char *noun = j->is_rule ? "rule" : "credential";
    if (rc == ERROR_OK) {
        e->report->created++;
        engine_log(e, SYNC_LOG_INFO, "created %s %s%s%s%s", noun, remote_id,
                   j->label[0] ? " (" : "", j->label, j->label[0] ? ")" : "");
        return;
    }
    if (rc == ERROR_IO || rc == ERROR_NOMEM) {
        engine_db_fail(e, &err);
        return;
    }
    engine_log(e, SYNC_LOG_WARN, "%s %s: the reply could not be recorded (%s): the "
               "listing will tell", noun, j->local_id, err.msg);
    move(e, j->is_rule, j->local_id, MODEL_STATE_UNKNOWN, err.msg);
}

static void create_refused(engine *e, create_job *j, const char *why)
{
    e->report->failed++;
    engine_log(e, SYNC_LOG_ERROR, "server refused %s: %s", j->local_id, why);
    move(e, j->is_rule, j->local_id, MODEL_STATE_FAILED, why);
}

/* Claim the row (new -> creating). false: skip it (taken by another sync) or stop. */
static bool claim(engine *e, const create_job *j)
{
    error_info err;
    error_code rc = j->is_rule ? store_rule_claim(e->st, j->local_id, &err)
                               : store_cred_claim(e->st, j->local_id, &err);
    if (rc == ERROR_STATE || rc == ERROR_NOT_FOUND) {
        engine_log(e, SYNC_LOG_INFO, "skipped %s: %s", j->local_id, err.msg);
        return false;
    }
    if (rc != ERROR_OK)
        engine_db_fail(e, &err);
    return rc == ERROR_OK;
}

/* Settle one reply. true: the row is settled (or the run stops); false: retry. */
static bool settle(engine *e, create_job *j, const sync_result *res, int attempt)
{
    switch (res->outcome) {
    case SYNC_OK:
        create_done(e, j);
        return true;
    case SYNC_REJECTED:
    case SYNC_NOT_FOUND:
        create_refused(e, j, res->message);
        return true;
    case SYNC_AMBIGUOUS:
        engine_log(e, SYNC_LOG_WARN, "%s %s may or may not have been created (%s): the "
                   "listing will tell", j->is_rule ? "rule" : "credential", j->local_id,
                   res->message);
        move(e, j->is_rule, j->local_id, MODEL_STATE_UNKNOWN, res->message);
        return true;
    case SYNC_AUTH:
        move(e, j->is_rule, j->local_id, MODEL_STATE_NEW, NULL);
        return true;
    case SYNC_RATE_LIMITED:
    case SYNC_NOT_SENT:
        break;
    }
    /* Surely not created: back to new; the pause was set by engine_after_request. */
    if (!move(e, j->is_rule, j->local_id, MODEL_STATE_NEW, res->message) ||
        e->stop != ENGINE_GO)
        return true;
    if (res->outcome == SYNC_RATE_LIMITED && attempt >= e->opt.max_attempts) {
        char why[sizeof res->message + 64];
        snprintf(why, sizeof why, "gave up after %d attempts: %s", attempt, res->message);
        create_refused(e, j, why);
        return true;
    }
    e->report->retried++;
    return false;
}

static void push_create(engine *e, create_job *j)
{
    for (int attempt = 1;; attempt++) {
        if (!engine_before_request(e) || !claim(e, j))
            break;
        sync_result res;
        memset(&res, 0, sizeof res);
        res.retry_after_s = -1;
        res.outcome = send_create(e, j, &res);
        engine_after_request(e, &res);
        if (settle(e, j, &res, attempt))
            break;
    }
    model_cred_clear(&j->cred_out);
    engine_step(e, 1);
}

static void create_rule(engine *e, const model_rule *row)
{
    create_job j = {.is_rule = true, .local_id = row->id, .label = row->cidr, .rule = row};
    push_create(e, &j);
}

static void create_cred(engine *e, const model_cred *row)
{
    model_cred req = {0};
    error_info err;
    if (model_cred_copy(&req, row, &err)) {
        engine_fail(e, ENGINE_DB, "%s", err.msg);
        return;
    }
    create_job j = {.is_rule = false, .local_id = row->id, .label = row->description,
                    .cred = &req};
    if (!engine_marked_metadata(row->metadata, row->id, req.metadata, sizeof req.metadata)) {
        char why[128];
        snprintf(why, sizeof why, "metadata too long to carry the creation marker (at "
                 "most %d bytes)", SYNC_USER_METADATA_MAX);
        create_refused(e, &j, why);
        engine_step(e, 1);
    } else {
        push_create(e, &j);
    }
    model_cred_clear(&req);
}

/* ---- the push ------------------------------------------------------------- */

void engine_push(engine *e)
{
    size_t total = 0;
    error_info err;
    if (engine_outbox_size(e, &total, &err)) {
        engine_db_fail(e, &err);
        return;
    }
    engine_phase(e, SYNC_PHASE_PUSH, total);
    each_rule(e, bit(MODEL_STATE_DELETING), delete_rule);
    each_cred(e, bit(MODEL_STATE_DELETING) | bit(MODEL_STATE_ORPHANED), delete_cred);
    each_rule(e, bit(MODEL_STATE_NEW), create_rule);
    each_cred(e, bit(MODEL_STATE_NEW), create_cred);
}
