/*
 * engine: credential rotation's part of a push (store.h, "credential rotation").
 * The successor is an ordinary create and the old one's retirement an ordinary
 * delete with its look; what is the rotation's own is here: the links brought up
 * to date, the user's command once the successor's token is held, and the old
 * credential marked deleting once its retirement is due.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rampart/hookcmd.h"

enum { ROTATE_EXEC_TIMEOUT_S = 60 };
static const long long DEFAULT_QUIET_S = 3600, DEFAULT_KEEP_S = 30LL * 86400;

typedef struct rotation_ids {
    char (*old_ids)[MODEL_ID_MAX + 1];
    size_t n, cap;
} rotation_ids;

/* The old ids of the rotations that may still act (waiting, grace). */
static error_code collect(void *ctx, const store_rotation *r, error_info *err)
{
    rotation_ids *ids = ctx;
    if (r->state != STORE_ROTATION_WAITING && r->state != STORE_ROTATION_GRACE)
        return ERROR_OK;
    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? ids->cap * 2 : 16;
        void *grown = realloc(ids->old_ids, cap * sizeof *ids->old_ids);
        if (!grown)
            return error_set(err, ERROR_NOMEM, "out of memory");
        ids->old_ids = grown;
        ids->cap = cap;
    }
    snprintf(ids->old_ids[ids->n++], MODEL_ID_MAX + 1, "%s", r->old_id);
    return ERROR_OK;
}

/* A scoped run acts on the rotations of its own rows only. */
static bool in_scope(engine *e, const store_rotation *r)
{
    if (!e->opt.scoped)
        return true;
    for (size_t i = 0; i < e->opt.only_count; i++) {
        const sync_row_ref *ref = &e->opt.only[i];
        char canon[MODEL_ID_MAX + 1];
        model_state state;
        error_info err;
        if (!(kind_get(ref->kind)->traits & KIND_ROTATES) ||
            store_resolve_id(e->st, ref->kind, ref->id, canon, &state, &err) != ERROR_OK)
            continue;
        if (strcmp(canon, r->old_id) == 0 || strcmp(canon, r->new_id) == 0)
            return true;
    }
    return false;
}

/* The user's command, with the ids in its environment (never a token). */
static void run_exec(engine *e, const store_rotation *r)
{
    char old_env[MODEL_ID_MAX + 32], new_env[MODEL_ID_MAX + 32];
    snprintf(old_env, sizeof old_env, "RAMPART_ROTATE_OLD_ID=%s", r->old_id);
    snprintf(new_env, sizeof new_env, "RAMPART_ROTATE_NEW_ID=%s", r->new_id);
    const char *env[] = {old_env, new_env, NULL};
    error_info why = {0};
    error_code rc = hookcmd_run(r->exec, env, e->opt.rotate_exec_stderr ? 2 : -1,
                                ROTATE_EXEC_TIMEOUT_S, &why);
    error_info err;
    if (store_rotation_exec_done(e->st, r->old_id, rc == ERROR_OK, why.msg, &err)) {
        engine_db_fail(e, &err);
        return;
    }
    if (rc == ERROR_OK)
        engine_log(e, SYNC_LOG_INFO, "rotation of %s: its command ran (successor %s)",
                   r->old_id, r->new_id);
    else
        engine_log(e, SYNC_LOG_WARN, "rotation of %s: its command failed: %s; %s retires "
                   "only once it succeeds (the next sync runs it again) or with --finish",
                   r->old_id, why.msg, r->old_id);
}

/* Its command runs once the successor is held, and again after a failure while
 * the retirement waits for it (grace mode). */
static bool wants_exec(const store_rotation *r)
{
    return r->new_held && (r->exec_state == STORE_EXEC_PENDING ||
                           (r->exec_state == STORE_EXEC_FAILED && r->mode == STORE_ROTATE_GRACE));
}

/* One rotation: its command when due to run, then its retirement when due. */
static void act(engine *e, const char *old_id, long long now, size_t *retired)
{
    store_rotation r;
    error_info err;
    error_code rc = store_rotation_get(e->st, old_id, &r, &err);
    if (rc == ERROR_OK && in_scope(e, &r) && wants_exec(&r)) {
        run_exec(e, &r);
        if (e->stop != ENGINE_GO)
            return;
        rc = store_rotation_get(e->st, old_id, &r, &err);
    }
    if (rc != ERROR_OK) {
        if (rc != ERROR_NOT_FOUND)
            engine_db_fail(e, &err);
        return;
    }
    long long quiet = e->opt.rotate_quiet_s > 0 ? e->opt.rotate_quiet_s : DEFAULT_QUIET_S;
    if (!in_scope(e, &r) || !store_rotation_due(&r, now, quiet, NULL))
        return;
    if (store_rotation_retire(e->st, old_id, &err) != ERROR_OK) {
        engine_log(e, SYNC_LOG_WARN, "rotation of %s: not retired: %s", old_id, err.msg);
        return;
    }
    engine_log(e, SYNC_LOG_INFO, "retiring %s: rotated to %s", r.old_id, r.new_id);
    (*retired)++;
}

bool engine_rotation_successor(engine *e, const char *id)
{
    store_rotation r;
    return store_rotation_get(e->st, id, &r, NULL) == ERROR_OK &&
           (r.state == STORE_ROTATION_WAITING || r.state == STORE_ROTATION_GRACE) &&
           strcmp(r.old_id, id) != 0;
}

/* false when the database failed (the run stops). */
static bool settle_links(engine *e, long long now)
{
    long long keep = e->opt.rotate_keep_s > 0 ? e->opt.rotate_keep_s : DEFAULT_KEEP_S;
    size_t stopped = 0;
    error_info err;
    if (store_rotation_settle(e->st, now, keep, &stopped, &err) != ERROR_OK) {
        if (e->stop == ENGINE_GO)
            engine_db_fail(e, &err);
        return false;
    }
    if (stopped)
        engine_log(e, SYNC_LOG_WARN, "%zu rotations stopped: the successor's create failed "
                   "(the old credential stays; see rampart creds get ID)", stopped);
    return true;
}

void engine_rotate_settle(engine *e)
{
    settle_links(e, (long long)time(NULL));
}

size_t engine_rotate(engine *e)
{
    long long now = (long long)time(NULL);
    size_t retired = 0;
    error_info err;
    if (!settle_links(e, now))
        return 0;
    rotation_ids ids = {0};
    if (store_rotation_each(e->st, collect, &ids, &err) != ERROR_OK)
        engine_db_fail(e, &err);
    for (size_t i = 0; i < ids.n && e->stop == ENGINE_GO; i++)
        act(e, ids.old_ids[i], now, &retired);
    free(ids.old_ids);
    return retired;
}
