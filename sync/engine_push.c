/*
 * engine: pushing the outbox. Deletes first (a delete frees a natural key a create
 * may need), then creates, each kind in turn. Every state move is its own
 * transaction, and a row is claimed (creating) before its request goes out, so a
 * crash mid-request leaves "creating", which the next run reconciles by a listing
 * before sending again. The rows come from engine_rows.c (the outbox, or a
 * scoped run's own rows).
 */
#include "engine_internal.h"

#include <stdio.h>
#include <string.h>

enum { CONFIRM_TRIES = 3 };

static unsigned bit(model_state state)
{
    return 1u << state;
}

/* ---- what the push sends --------------------------------------------------- */

/* What the push sends: deletes (an orphaned credential's remote copy is deleted
 * too, before it is created again), creates and edits. */
static unsigned deletes(void)
{
    return bit(MODEL_STATE_DELETING) | bit(MODEL_STATE_ORPHANED);
}

static unsigned creates(void)
{
    return bit(MODEL_STATE_NEW);
}

static unsigned edits(void)
{
    return bit(MODEL_STATE_EDITED);
}

error_code engine_outbox_size(engine *e, size_t *out, error_info *err)
{
    return engine_count_queue(e, deletes() | creates() | edits(), out, err);
}

/* A state move of one row; a store failure stops the run. */
static bool move(engine *e, const engine_target *t, model_state state, const char *why)
{
    error_info err;
    error_code rc = store_set_state(e->st, t->kind, t->id, state, why, &err);
    if (rc != ERROR_OK)
        engine_db_fail(e, &err);
    return rc == ERROR_OK;
}

static const char *noun(const engine_target *t)
{
    return kind_get(t->kind)->noun;
}

/* ---- deletes -------------------------------------------------------------- */

/* One delete on its way: the row and what its look showed. */
typedef struct delete_job {
    engine_target t;
    const model_object *row;
    model_object looked;
} delete_job;

static sync_outcome send_delete(engine *e, void *arg, sync_result *res)
{
    const delete_job *j = arg;
    return e->ops->remove(e->api, j->t.kind, j->t.id, res);
}

static sync_outcome send_look(engine *e, void *arg, sync_result *res)
{
    delete_job *j = arg;
    model_object_clear(&j->looked);
    sync_outcome out = e->ops->get(e->api, j->t.kind, j->t.id, &j->looked, res);
    if (out == SYNC_OK)
        engine_unmark_like(&j->looked, j->row);
    return out;
}

/* The look before a delete: the remote object must be what this cache saw (the
 * store compares the user's fields); else a conflict "changed" keeps it. */
static bool judge_delete(engine *e, void *arg)
{
    delete_job *j = arg;
    store_look_result r = engine_judge_look(e, &j->t, &j->looked);
    if (r == STORE_LOOK_CONFLICT)
        engine_log(e, SYNC_LOG_WARN, "%s %s was changed remotely since this cache saw it: "
                   "not deleted; a conflict to resolve (--keep-local deletes it anyway, "
                   "--take-remote keeps it)", noun(&j->t), j->t.id);
    return r == STORE_LOOK_WRITE;
}

/* An orphaned credential whose remote copy is gone: new again under its local id,
 * created afresh later in this push (with a token this time). */
static error_code requeue_orphan(engine *e, const engine_target *t, error_info *err)
{
    error_code rc = store_cred_requeue(e->st, t->id, err);
    if (rc == ERROR_STATE) /* discarded meanwhile (now deleting): the delete settled it */
        return store_remove(e->st, t->kind, t->id, err);
    if (rc == ERROR_OK) {
        e->report->orphans_deleted++;
        engine_log(e, SYNC_LOG_INFO, "deleted credential %s remotely (its token was "
                   "lost): creating it again", t->id);
    }
    return rc;
}

/* 204 or 404: the remote copy is gone, and so is the row (but an orphan). */
static void delete_done(engine *e, const engine_target *t, model_state state, bool was_gone)
{
    error_info err;
    error_code rc;
    if (state == MODEL_STATE_ORPHANED) {
        rc = requeue_orphan(e, t, &err);
    } else {
        rc = store_remove(e->st, t->kind, t->id, &err);
        if (rc == ERROR_OK) {
            e->report->deleted++;
            engine_log(e, SYNC_LOG_INFO, "deleted %s %s%s", noun(t), t->id,
                       was_gone ? " (it was already gone)" : "");
        }
    }
    if (rc != ERROR_OK)
        engine_db_fail(e, &err);
}

static void push_delete(engine *e, const model_object *row)
{
    delete_job j = {.t = {row->kind, model_object_id(row)}, .row = row};
    model_object_init(&j.looked, row->kind);
    const engine_target t = j.t;
    model_state state = model_object_state(row);
    sync_result res;
    engine_stage stage;
    engine_looked l = {send_look, send_delete, judge_delete, &j};
    sync_outcome out = engine_send_looked(e, &t, &l, &res, &stage);
    model_object_clear(&j.looked);
    if (stage == ENGINE_STAGE_JUDGED) {
        engine_step(e, 1);
        return;
    }
    switch (out) {
    case SYNC_OK:
    case SYNC_NOT_FOUND:
        delete_done(e, &t, state, out == SYNC_NOT_FOUND);
        break;
    case SYNC_REJECTED:
        engine_log(e, SYNC_LOG_ERROR, "server refused to delete %s %s: %s", noun(&t), t.id,
                   res.message);
        engine_note_row_failure(e, &t, &res);
        move(e, &t, state, res.message);
        break;
    default:
        if (e->stop != ENGINE_GO) {
            if (out == SYNC_RATE_LIMITED) /* the run gave up on 429s here */
                engine_note_row_failure(e, &t, &res);
            break;
        }
        engine_log(e, SYNC_LOG_WARN, "%s %s not deleted yet (%s): the next sync tries "
                   "again", noun(&t), t.id, res.message);
        engine_note_row_failure(e, &t, &res);
        break;
    }
    engine_step(e, 1);
}

/* ---- creates -------------------------------------------------------------- */

typedef struct create_job {
    engine_target t;          /* the local row */
    const char *label;        /* what names it in log lines ("" when only its id) */
    const model_object *req;  /* what is sent: a credential's metadata has the marker */
    model_object out;         /* the reply */
} create_job;

/* Whether the object's kind hands out a secret once, in the create reply. */
static bool gets_token(const model_object *obj)
{
    return kind_get(obj->kind)->has_token;
}

/* A created object whose kind hands out a secret once must come with it. */
static bool lacks_token(const model_object *obj)
{
    return gets_token(obj) && (!obj->cred.token || !obj->cred.token[0]);
}

/* A token the store would refuse (not a token's shape: escape sequences, a
 * thousand bytes) is neither kept nor ever shown. The credential is recorded as
 * the remote made it, orphaned with the reason (never the token's bytes), so
 * `creds token` and the console say why, and the next sync deletes it there and
 * creates it again, as for any token lost. */
static void create_bad_token(engine *e, create_job *j)
{
    error_info why, err;
    store_token_check(j->out.cred.token, &why);
    model_cred_set_token(&j->out.cred, NULL, NULL); /* wiped as it is freed */
    char reason[ERROR_MSG_MAX + 80]; /* the store cuts it to its error column */
    snprintf(reason, sizeof reason, "the remote's create reply held a malformed token (not "
             "stored): %s", why.msg);
    error_code rc = ERROR_IO;
    for (int attempt = 0; attempt < CONFIRM_TRIES && rc == ERROR_IO; attempt++)
        rc = store_confirm_create_without_token(e->st, j->t.id, &j->out, reason, &err);
    if (rc == ERROR_IO || rc == ERROR_NOMEM) {
        engine_db_fail(e, &err);
        return;
    }
    if (rc != ERROR_OK) {
        engine_log(e, SYNC_LOG_WARN, "%s %s: the reply could not be recorded (%s): the "
                   "listing will tell", noun(&j->t), j->t.id, err.msg);
        move(e, &j->t, MODEL_STATE_UNKNOWN, err.msg);
        return;
    }
    e->report->failed++;
    engine_log(e, SYNC_LOG_ERROR, "%s %s: %s: the next sync deletes it there and creates "
               "it again", noun(&j->t), model_object_id(&j->out), reason);
}

/* 201: the row takes the remote id (and a credential its token) in one
 * transaction. The reply is recorded as the server sent it: a credential's
 * metadata still holds the creation marker, which the store keeps as the base of
 * a metadata edit, so the edit pass of this push sends the user's metadata back.
 * A reply the store cannot record leaves the outcome to a listing. */
static void create_done(engine *e, create_job *j)
{
    if (lacks_token(&j->out)) {
        /* Useless without its token: the listing finds it by its marker, then it
         * is deleted and created again. */
        engine_log(e, SYNC_LOG_WARN, "%s %s: the reply carried no token: the listing "
                   "will tell", noun(&j->t), j->t.id);
        move(e, &j->t, MODEL_STATE_UNKNOWN, "the reply carried no token");
        return;
    }
    if (gets_token(&j->out) && store_token_check(j->out.cred.token, NULL)) {
        create_bad_token(e, j);
        return;
    }
    error_info err;
    error_code rc = ERROR_IO;
    /* The token exists only in memory now: a busy database (another writer past
     * the busy timeout) gets a few more tries before it is given up. */
    for (int attempt = 0; attempt < CONFIRM_TRIES && rc == ERROR_IO; attempt++)
        rc = store_confirm_create(e->st, j->t.id, &j->out, &err);
    if (rc == ERROR_OK) {
        e->report->created++;
        engine_log(e, SYNC_LOG_INFO, "created %s %s%s%s%s", noun(&j->t),
                   model_object_id(&j->out), j->label[0] ? " (" : "", j->label,
                   j->label[0] ? ")" : "");
        return;
    }
    if (rc == ERROR_IO || rc == ERROR_NOMEM) {
        engine_db_fail(e, &err);
        return;
    }
    engine_log(e, SYNC_LOG_WARN, "%s %s: the reply could not be recorded (%s): the "
               "listing will tell", noun(&j->t), j->t.id, err.msg);
    move(e, &j->t, MODEL_STATE_UNKNOWN, err.msg);
}

/* `res` NULL: refused here, before sending. */
static void create_refused(engine *e, create_job *j, const sync_result *res, const char *why)
{
    e->report->failed++;
    engine_note_row_failure(e, &j->t, res);
    engine_log(e, SYNC_LOG_ERROR, "server refused %s: %s", j->t.id, why);
    move(e, &j->t, MODEL_STATE_FAILED, why);
}

/* Claim the row (new -> creating). false: skip it (taken by another sync) or stop. */
static bool claim(engine *e, const create_job *j)
{
    error_info err;
    error_code rc = store_claim(e->st, j->t.kind, j->t.id, &err);
    if (rc == ERROR_STATE || rc == ERROR_NOT_FOUND) {
        engine_log(e, SYNC_LOG_INFO, "skipped %s: %s", j->t.id, err.msg);
        return false;
    }
    if (rc != ERROR_OK)
        engine_db_fail(e, &err);
    return rc == ERROR_OK;
}

/* Settle one reply. true: the row is settled (or the run stops); false: retry. */
static bool settle(engine *e, create_job *j, const sync_result *res)
{
    switch (res->outcome) {
    case SYNC_OK:
        create_done(e, j);
        return true;
    case SYNC_REJECTED:
    case SYNC_NOT_FOUND:
        create_refused(e, j, res, res->message);
        return true;
    case SYNC_AMBIGUOUS:
        engine_log(e, SYNC_LOG_WARN, "%s %s may or may not have been created (%s): the "
                   "listing will tell", noun(&j->t), j->t.id, res->message);
        move(e, &j->t, MODEL_STATE_UNKNOWN, res->message);
        return true;
    case SYNC_AUTH:
        /* A rotation's successor the key may not create: the rotation stops with
         * the reason (the old credential stays); anything else waits for a key. */
        if (res->http_status == 403 && engine_rotation_successor(e, j->t.id))
            create_refused(e, j, res, res->message);
        else
            move(e, &j->t, MODEL_STATE_NEW, NULL);
        return true;
    case SYNC_RATE_LIMITED:
    case SYNC_NOT_SENT:
        break;
    }
    /* Surely not created: back to new; the pause was set by engine_after_request,
     * which also stops the run when 429s last give_up_windows (the row stays new:
     * a 429 is never the row's fault). */
    if (!move(e, &j->t, MODEL_STATE_NEW, res->message))
        return true;
    if (e->stop != ENGINE_GO) {
        if (res->outcome == SYNC_RATE_LIMITED)
            engine_note_row_failure(e, &j->t, res);
        return true;
    }
    e->report->retried++;
    return false;
}

/* Outcomes that settle the row: another create may follow at once. */
static bool settles(sync_outcome outcome)
{
    return outcome == SYNC_OK || outcome == SYNC_REJECTED || outcome == SYNC_NOT_FOUND ||
           outcome == SYNC_AMBIGUOUS;
}

/* The next create may go at once: no budget slot or pause to wait for. Paced,
 * a request waits its slot anyway, and the row is claimed just before it. */
static bool next_goes_now(engine *e)
{
    return e->stop == ENGINE_GO && !e->pace.paced && e->resume_at <= engine_now(e);
}

/* Claim `next` inside the open transaction; a row no longer new is left to its
 * own turn (which says why it is skipped). */
static bool claim_next(engine *e, const create_job *next)
{
    error_info err;
    error_code rc = store_claim(e->st, next->t.kind, next->t.id, &err);
    if (rc != ERROR_OK && rc != ERROR_STATE && rc != ERROR_NOT_FOUND)
        engine_db_fail(e, &err);
    return rc == ERROR_OK;
}

/*
 * The reply of a create and the claim of the next row in ONE transaction: each
 * create then costs one durable commit, not two. Both durable steps stay where
 * they were: the claim of `next` is committed before its request goes out, and
 * the reply is committed as soon as it is read, the claim only riding along (see
 * DESIGN.md, "One commit per create"). Paced, or without a transaction to join
 * (the database busy past its timeout), each is its own transaction as before.
 * true when `next` was claimed.
 */
static bool settle_and_claim(engine *e, create_job *j, const sync_result *res,
                             const create_job *next)
{
    error_info err;
    bool joined = next && settles(res->outcome) && next_goes_now(e) &&
                  store_begin(e->st, &err) == ERROR_OK;
    if (!joined) {
        settle(e, j, res);
        return false;
    }
    sync_report before = *e->report;
    settle(e, j, res);
    bool claimed = e->stop == ENGINE_GO && claim_next(e, next);
    if (store_commit(e->st, &err) == ERROR_OK)
        return claimed;
    /* Nothing of it was kept: the reply once more on its own (its token is still
     * here), as if it had never been joined. */
    *e->report = before;
    engine_log(e, SYNC_LOG_WARN, "recording %s %s failed (%s): trying again", noun(&j->t),
               j->t.id, err.msg);
    settle(e, j, res);
    return false;
}

/* A row claimed with the last reply whose request will not go (the run stops):
 * new again, so the next sync sends it without a listing first. */
static void unclaim(engine *e, const create_job *j)
{
    error_info err;
    if (store_set_state(e->st, j->t.kind, j->t.id, MODEL_STATE_NEW, NULL, &err) != ERROR_OK)
        engine_log(e, SYNC_LOG_WARN, "%s %s stays creating (%s): the next sync checks the "
                   "listing before sending it", noun(&j->t), j->t.id, err.msg);
}

/* Send `j` (already claimed when `claimed`) until it settles; claims `next` (may
 * be NULL) with the reply when it can. true when `next` was claimed. */
static bool send_create(engine *e, create_job *j, bool claimed, const create_job *next)
{
    for (;;) {
        if (!engine_before_request(e)) {
            if (claimed)
                unclaim(e, j);
            return false;
        }
        if (!claimed && !claim(e, j))
            return false;
        claimed = false;
        sync_result res;
        memset(&res, 0, sizeof res);
        res.retry_after_s = -1;
        model_object_clear(&j->out);
        res.outcome = e->ops->create(e->api, j->req, &j->out, &res);
        engine_after_request(e, &j->t, &res);
        if (settles(res.outcome) || res.outcome == SYNC_AUTH)
            return settle_and_claim(e, j, &res, next);
        if (settle(e, j, &res))
            return false;
    }
}

/* One create; `next` is the row after it in the walk (NULL at a page's end),
 * claimed with this one's reply when it can be. true when `next` was claimed. */
static bool push_create(engine *e, const model_object *row, bool claimed,
                        const model_object *next)
{
    model_object req;
    model_object_init(&req, row->kind);
    error_info err;
    if (model_object_copy(&req, row, &err)) {
        engine_fail(e, ENGINE_DB, "%s", err.msg);
        return false;
    }
    create_job j = {.t = {row->kind, model_object_id(row)}, .label = engine_row_label(row),
                    .req = &req};
    create_job n = {.t = {row->kind, next ? model_object_id(next) : NULL}};
    model_object_init(&j.out, row->kind);
    engine_mark_request(&req);
    bool next_claimed = send_create(e, &j, claimed, next ? &n : NULL);
    model_object_clear(&j.out);
    model_object_clear(&req);
    engine_step(e, 1);
    return next_claimed;
}

/* A page of new rows: each create claims the one after it with its reply. */
static error_code visit_creates(void *ctx, model_object *rows, size_t n, error_info *err)
{
    (void)err;
    engine *e = ctx;
    bool claimed = false;
    for (size_t i = 0; i < n && e->stop == ENGINE_GO; i++)
        claimed = push_create(e, &rows[i], claimed, i + 1 < n ? &rows[i + 1] : NULL);
    return e->stop == ENGINE_GO ? ERROR_OK : ERROR_STATE;
}

static void push_creates(engine *e, model_kind kind)
{
    engine_walk(e, kind, creates(), visit_creates, e);
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
    /* A delete or an edit is two requests (its look and the write). */
    size_t looked = 0;
    e->per_item = 1.0;
    if (engine_count_queue(e, deletes() | edits(), &looked, &err) == ERROR_OK && total)
        e->per_item = (double)(total + looked) / (double)total;
    engine_phase(e, SYNC_PHASE_PUSH, total);
    engine_rotate(e); /* a retirement that became due since the last sync */
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        engine_each_row(e, (model_kind)k, deletes(), push_delete);
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        push_creates(e, (model_kind)k);
    /* After the creates: a credential just created carries its marker until the
     * edit that puts the user's metadata back. */
    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        engine_edit(e, (model_kind)k);
    /* A successor created now: its command, and a retirement due at once (--now,
     * --finish), in this same sync. */
    if (e->stop != ENGINE_GO)
        engine_rotate_settle(e); /* a successor refused: its rotation stops now */
    else if (engine_rotate(e) > 0)
        engine_each_row(e, MODEL_KIND_CRED, deletes(), push_delete);
}
