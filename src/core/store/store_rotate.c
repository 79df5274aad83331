/*
 * store: credential rotation (store.h): the link from a credential to its
 * successor, in the table `rotations` (schema step 11). The successor is an
 * ordinary queued create; the link only says which of the two the agent serves
 * and when the old one retires.
 */
#include "store_internal.h"
#include "store_stmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[STORE_ROTATION_STATE_COUNT] = {
    "waiting", "grace", "retiring", "retired", "stopped"};
static const char *const mode_names[] = {"grace", "finish", "now"};
static const char *const exec_names[] = {"none", "pending", "ok", "failed"};

const char *store_rotation_state_name(store_rotation_state state)
{
    return (unsigned)state < STORE_ROTATION_STATE_COUNT ? state_names[state] : "unknown";
}

/* An id or a local alias as ?1: its current id. */
#define ROT_RESOLVED "coalesce((SELECT remote_id FROM aliases WHERE local_id = ?1), ?1)"
#define HELD(col) "EXISTS (SELECT 1 FROM tokens AS t WHERE t.cred_id = " col ")"
#define SERVED(col) \
    "coalesce((SELECT f.last_at FROM token_fetches AS f WHERE f.cred_id = " col "), 0)"
/* The successor counts as held only while it lives: one marked for deletion
 * (creds delete) must never let the old one retire with it. */
#define LIVE_HELD(col, state) \
    "(" HELD(col) " AND " state " NOT IN ('deleting', 'remote_deleted', 'failed'))"
#define ROTATION_SELECT \
    "SELECT r.old_id, r.new_id, r.mode, r.grace_s, r.started_at, r.held_at, r.state," \
    " r.exec, r.exec_state, r.error, r.retired_at," \
    " coalesce(n.description, o.description, '')," \
    " " HELD("r.old_id") ", " LIVE_HELD("r.new_id", "coalesce(n.state, 'failed')") ", " \
    SERVED("r.old_id") ", " SERVED("r.new_id") ", coalesce(o.state, '')," \
    " (o.description IS NOT n.description OR o.acl IS NOT n.acl" \
    "  OR o.metadata IS NOT n.metadata)" \
    " FROM rotations AS r LEFT JOIN credentials AS n ON n.id = r.new_id" \
    " LEFT JOIN credentials AS o ON o.id = r.old_id"

static int name_index(const char *const *names, size_t n, const char *text)
{
    for (size_t i = 0; text && i < n; i++) {
        if (strcmp(names[i], text) == 0)
            return (int)i;
    }
    return 0;
}

static const char *col_text(sqlite3_stmt *s, int col)
{
    const char *t = (const char *)sqlite3_column_text(s, col);
    return t ? t : "";
}

/* A retirement whose delete became a conflict that the user resolved by keeping
 * the old credential (creds resolve --take-remote): the rotation is over. */
#define KEPT_ERROR "the old credential changed remotely and was kept (creds resolve " \
                   "--take-remote): it does not retire; --cancel drops the successor"

static bool old_kept(const char *old_state)
{
    return strcmp(old_state, "synced") == 0 || strcmp(old_state, "edited") == 0;
}

static void read_row(sqlite3_stmt *s, store_rotation *r)
{
    memset(r, 0, sizeof *r);
    store_col_copy(s, 0, r->old_id, sizeof r->old_id);
    store_col_copy(s, 1, r->new_id, sizeof r->new_id);
    r->mode = (store_rotation_mode)name_index(mode_names, 3, col_text(s, 2));
    r->grace_s = sqlite3_column_int64(s, 3);
    r->started_at = sqlite3_column_int64(s, 4);
    r->held_at = sqlite3_column_int64(s, 5);
    store_col_copy(s, 7, r->exec, sizeof r->exec);
    r->exec_state = (store_rotation_exec)name_index(exec_names, 4, col_text(s, 8));
    store_col_copy(s, 9, r->error, sizeof r->error);
    r->retired_at = sqlite3_column_int64(s, 10);
    store_col_copy(s, 11, r->name, sizeof r->name);
    r->old_held = sqlite3_column_int(s, 12) != 0;
    r->new_held = sqlite3_column_int(s, 13) != 0;
    r->old_served_at = sqlite3_column_int64(s, 14);
    r->new_served_at = sqlite3_column_int64(s, 15);
    r->old_changed = sqlite3_column_int(s, 17) != 0;
    const char *state = col_text(s, 6);
    if (strcmp(state, "active") == 0)
        r->state = r->new_held ? STORE_ROTATION_GRACE : STORE_ROTATION_WAITING;
    else if (strcmp(state, "retiring") == 0 && !old_kept(col_text(s, 16)))
        r->state = STORE_ROTATION_RETIRING;
    else if (strcmp(state, "retiring") == 0) {
        r->state = STORE_ROTATION_STOPPED;
        snprintf(r->error, sizeof r->error, "%s", KEPT_ERROR);
    }
    else if (strcmp(state, "retired") == 0)
        r->state = STORE_ROTATION_RETIRED;
    else
        r->state = STORE_ROTATION_STOPPED;
}

/* A call that writes through other store calls (each its own op): a store_begin
 * of its own when the caller has none, so theirs nest as savepoints. */
static error_code tx_begin(store *st, bool *own, error_info *err)
{
    *own = !store_in_transaction(st);
    return *own ? store_begin(st, err) : ERROR_OK;
}

static error_code tx_end(store *st, bool own, error_code rc, error_info *err)
{
    if (!own)
        return rc;
    if (rc == ERROR_OK && store_commit(st, err) == ERROR_OK)
        return ERROR_OK;
    store_rollback(st);
    return err->code;
}

/* Run `sql` once with text ?1.. `texts` and whole numbers after them. */
static error_code run(store *st, const char *sql, const char *const *texts, int ntexts,
                      const long long *nums, int nnums, int *changes, error_info *err)
{
    sqlite3_stmt *s = NULL;
    if (store_prepare(st, sql, &s, err))
        return err->code;
    error_code rc = store_bind_texts(st, s, texts, ntexts, err);
    for (int i = 0; rc == ERROR_OK && i < nnums; i++) {
        int brc = sqlite3_bind_int64(s, ntexts + i + 1, (sqlite3_int64)nums[i]);
        if (brc != SQLITE_OK)
            rc = store_db_error(st, brc, err);
    }
    if (rc == ERROR_OK)
        rc = store_exec(st, s, err);
    if (changes)
        *changes = rc == ERROR_OK ? sqlite3_changes(st->db) : 0;
    sqlite3_finalize(s);
    return rc;
}

/* The first rotation `sql` (ROTATION_SELECT + a WHERE over ?1) finds. */
static error_code get_one(store *st, const char *sql, const char *id, store_rotation *out,
                          bool *found, error_info *err)
{
    sqlite3_stmt *s = NULL;
    *found = false;
    if (store_prepare(st, sql, &s, err))
        return err->code;
    error_code rc = store_bind_texts(st, s, &id, 1, err);
    if (rc == ERROR_OK)
        rc = store_step(st, s, found, err);
    if (rc == ERROR_OK && *found)
        read_row(s, out);
    sqlite3_finalize(s);
    return rc;
}

error_code store_rotation_get(store *st, const char *id, store_rotation *out,
                              error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    memset(out, 0, sizeof *out);
    bool found = false;
    error_code rc = get_one(st, ROTATION_SELECT " WHERE r.old_id = " ROT_RESOLVED
                            " OR r.new_id = " ROT_RESOLVED
                            " ORDER BY r.state = 'retired', r.started_at DESC LIMIT 1",
                            id, out, &found, err);
    if (rc != ERROR_OK)
        return rc;
    if (!found)
        return error_set(err, ERROR_NOT_FOUND, "credential %s is not being rotated", id);
    return ERROR_OK;
}

error_code store_rotation_each(store *st,
                               error_code (*fn)(void *ctx, const store_rotation *r,
                                                error_info *err),
                               void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    sqlite3_stmt *s = NULL;
    if (store_prepare(st, ROTATION_SELECT " ORDER BY r.started_at, r.old_id", &s, err))
        return err->code;
    store_rotation *r = malloc(sizeof *r);
    if (!r) {
        sqlite3_finalize(s);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    error_code rc = ERROR_OK;
    bool row = true;
    while (rc == ERROR_OK) {
        rc = store_step(st, s, &row, err);
        if (rc != ERROR_OK || !row)
            break;
        read_row(s, r);
        rc = fn(ctx, r, err);
    }
    free(r);
    sqlite3_finalize(s);
    return rc;
}

bool store_rotation_due(const store_rotation *r, long long now, long long quiet_s,
                        const char **why)
{
    why = why ? why : &(const char *){NULL};
    if (r->state != STORE_ROTATION_WAITING && r->state != STORE_ROTATION_GRACE)
        *why = store_rotation_state_name(r->state);
    else if (!r->new_held)
        *why = "the successor's token is not held here yet";
    else if (r->exec_state == STORE_EXEC_PENDING)
        *why = "its command has not run yet";
    else if (r->mode == STORE_ROTATE_GRACE && r->exec_state == STORE_EXEC_FAILED)
        *why = "its command failed (the next sync runs it again; --finish retires anyway)";
    else if (r->mode == STORE_ROTATE_GRACE && !r->old_held)
        *why = "the old token was never held here, so its use is unknown: retire it with "
               "--finish";
    else if (r->mode == STORE_ROTATE_GRACE && r->old_changed)
        *why = "the old credential no longer matches its successor (changed here or "
               "remotely since the copy): it is not deleted; --finish retires it anyway, "
               "--cancel drops the successor";
    else if (r->mode == STORE_ROTATE_GRACE && (r->held_at == 0 || now < r->held_at + r->grace_s))
        *why = "the grace period";
    else if (r->mode == STORE_ROTATE_GRACE && r->old_served_at > 0 &&
             now < r->old_served_at + quiet_s)
        *why = "the old token was handed out within the quiet period";
    else /* --now, --finish, or a grace rotation past all of the above */
        *why = "due";
    return strcmp(*why, "due") == 0;
}

error_code store_rotation_settle(store *st, long long now, long long keep_s, size_t *stopped,
                                 error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    const long long nums[] = {now, keep_s};
    int n = 0;
    /* Stopped by its successor's failed create, which was queued again since
     * (creds retry): the rotation goes on. */
    error_code rc = run(st, "UPDATE rotations SET state = 'active', error = ''"
                        " WHERE state = 'stopped' AND EXISTS (SELECT 1 FROM credentials"
                        " AS c WHERE c.id = new_id AND c.state NOT IN ('failed', 'deleting',"
                        " 'remote_deleted'))", NULL, 0, NULL, 0, NULL, err);
    if (rc == ERROR_OK)
        rc = run(st, "UPDATE rotations SET held_at = ?1 WHERE held_at = 0"
                 " AND state = 'active' AND " HELD("new_id"), NULL, 0, nums, 1, NULL, err);
    if (rc == ERROR_OK)
        rc = run(st, "UPDATE rotations SET state = 'stopped', error = 'the successor''s "
                 "create failed: ' || (SELECT c.error FROM credentials AS c"
                 " WHERE c.id = new_id) WHERE state = 'active' AND EXISTS (SELECT 1 FROM"
                 " credentials AS c WHERE c.id = new_id AND c.state = 'failed')",
                 NULL, 0, NULL, 0, &n, err);
    if (rc == ERROR_OK)
        rc = run(st, "DELETE FROM rotations WHERE state = 'retired' AND retired_at > 0"
                 " AND retired_at + ?2 <= ?1", NULL, 0, nums, 2, NULL, err);
    if (stopped)
        *stopped = rc == ERROR_OK ? (size_t)n : 0;
    return store_op_end(st, op, rc, err);
}

error_code store_rotation_exec_done(store *st, const char *old_id, bool ok, const char *why,
                                    error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    char text[MODEL_ERROR_MAX + 1];
    snprintf(text, sizeof text, "%s", ok || !why ? "" : why);
    const char *args[] = {old_id, ok ? "ok" : "failed", text};
    store_op op;
    if (store_op_begin(st, false, &op, err))
        return err->code;
    error_code rc = run(st, "UPDATE rotations SET exec_state = ?2, error = ?3"
                        " WHERE old_id = ?1", args, 3, NULL, 0, NULL, err);
    return store_op_end(st, op, rc, err);
}

/* Inside an op: the old one is deleting, its error says why, the link retiring. */
static error_code retire_in_op(store *st, const store_rotation *r, error_info *err)
{
    store_delete_result result;
    error_code rc = store_delete(st, MODEL_KIND_CRED, r->old_id, &result, err);
    char why[MODEL_ERROR_MAX + 1];
    snprintf(why, sizeof why, "retired: rotated to %s", r->new_id);
    const char *args[] = {r->old_id, why};
    if (rc == ERROR_OK)
        rc = run(st, "UPDATE credentials SET error = ?2 WHERE id = ?1 AND state = 'deleting'",
                 args, 2, NULL, 0, NULL, err);
    if (rc == ERROR_OK)
        rc = run(st, "UPDATE rotations SET state = 'retiring' WHERE old_id = ?1", args, 1,
                 NULL, 0, NULL, err);
    return rc;
}

static error_code not_active(const store_rotation *r, error_info *err)
{
    return error_set(err, ERROR_STATE, "the rotation of %s to %s is %s%s%s", r->old_id,
                     r->new_id, store_rotation_state_name(r->state), r->error[0] ? ": " : "",
                     r->error);
}

static bool active(const store_rotation *r)
{
    return r->state == STORE_ROTATION_WAITING || r->state == STORE_ROTATION_GRACE;
}

/* ERROR_STATE when the successor is going (deleted by hand, or refused): the old
 * one is then the only credential with a working token. */
static error_code check_successor_lives(store *st, const store_rotation *r, error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, MODEL_KIND_CRED, r->new_id, canon, &state, err))
        return err->code;
    if (state == MODEL_STATE_DELETING || state == MODEL_STATE_REMOTE_DELETED ||
        state == MODEL_STATE_FAILED)
        return error_set(err, ERROR_STATE, "the successor %s of %s is %s: the old one stays "
                         "(--cancel ends the rotation)", r->new_id, r->old_id,
                         model_state_name(state));
    return ERROR_OK;
}

/* The rotation of `id`, refused unless it is under way with a live successor. */
static error_code get_going(store *st, const char *id, store_rotation *r, error_info *err)
{
    error_code rc = store_rotation_get(st, id, r, err);
    if (rc == ERROR_OK && !active(r))
        rc = not_active(r, err);
    if (rc == ERROR_OK)
        rc = check_successor_lives(st, r, err);
    return rc;
}

/* What a change does to the rotation it was given, inside the transaction. */
typedef error_code (*rotation_fn)(store *st, const store_rotation *r, void *ctx,
                                  error_info *err);

/* Read the rotation of `id` (with `going`, refused unless under way with a live
 * successor) and change it with `fn`, in a transaction of its own when the caller
 * has none. */
static error_code change_rotation(store *st, const char *id, bool going, rotation_fn fn,
                                  void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    bool own;
    if (tx_begin(st, &own, err))
        return err->code;
    store_rotation r;
    error_code rc = going ? get_going(st, id, &r, err) : store_rotation_get(st, id, &r, err);
    if (rc == ERROR_OK)
        rc = fn(st, &r, ctx, err);
    return tx_end(st, own, rc, err);
}

static error_code retire_held(store *st, const store_rotation *r, void *ctx, error_info *err)
{
    (void)ctx;
    if (!r->new_held)
        return error_set(err, ERROR_STATE, "the successor %s of %s holds no token here yet: "
                         "the old one stays until it does", r->new_id, r->old_id);
    return retire_in_op(st, r, err);
}

error_code store_rotation_retire(store *st, const char *id, error_info *err)
{
    return change_rotation(st, id, true, retire_held, NULL, err);
}

/* ctx: the caller's `retired`. */
static error_code finish_now(store *st, const store_rotation *r, void *ctx, error_info *err)
{
    bool *retired = ctx;
    const char *args[] = {r->old_id};
    error_code rc = run(st, "UPDATE rotations SET mode = 'finish' WHERE old_id = ?1 AND mode = "
                        "'grace'", args, 1, NULL, 0, NULL, err);
    if (rc == ERROR_OK && r->new_held && r->exec_state != STORE_EXEC_PENDING) {
        rc = retire_in_op(st, r, err);
        *retired = rc == ERROR_OK;
    }
    return rc;
}

error_code store_rotation_finish(store *st, const char *id, bool *retired, error_info *err)
{
    retired = retired ? retired : &(bool){false};
    *retired = false;
    return change_rotation(st, id, true, finish_now, retired, err);
}

/* ctx: the caller's `new_id` (NULL: not wanted). */
static error_code cancel_in_op(store *st, const store_rotation *r, void *ctx, error_info *err)
{
    char *new_id = ctx;
    error_code rc = ERROR_OK;
    if (!active(r) && r->state != STORE_ROTATION_STOPPED)
        rc = error_set(err, ERROR_STATE, "the rotation of %s to %s is %s: the old credential "
                       "is %s", r->old_id, r->new_id, store_rotation_state_name(r->state),
                       r->state == STORE_ROTATION_RETIRED ? "deleted" : "being deleted");
    store_delete_result result = STORE_DELETE_REMOVED;
    if (rc == ERROR_OK)
        rc = store_delete(st, MODEL_KIND_CRED, r->new_id, &result, err);
    if (rc == ERROR_STATE)
        error_prefix(err, "successor %s", r->new_id);
    const char *args[] = {r->old_id};
    if (rc == ERROR_OK) /* a successor removed took its link along already */
        rc = run(st, "DELETE FROM rotations WHERE old_id = ?1", args, 1, NULL, 0, NULL, err);
    if (rc == ERROR_OK && new_id)
        snprintf(new_id, MODEL_ID_MAX + 1, "%s", r->new_id);
    return rc;
}

error_code store_rotation_cancel(store *st, const char *id, char new_id[MODEL_ID_MAX + 1],
                                 error_info *err)
{
    return change_rotation(st, id, false, cancel_in_op, new_id, err);
}

error_code store_rotation_successor(store *st, const char *id, char succ[MODEL_ID_MAX + 1],
                                    bool *found, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *found = false;
    sqlite3_stmt *s = store_stmt(st, STMT_ROTATION_SUCCESSOR, err);
    if (store_stmt_text(st, s, id, succ, MODEL_ID_MAX + 1, found, err))
        return err->code;
    store_reset(s);
    return ERROR_OK;
}

/* ---- start ---- */

/* Refuse a credential already in a rotation that is not over. */
static error_code check_free(store *st, const char *canon, error_info *err)
{
    store_rotation r;
    bool found;
    if (get_one(st, ROTATION_SELECT " WHERE r.old_id = ?1", canon, &r, &found, err))
        return err->code;
    if (found)
        return error_set(err, ERROR_STATE, "credential %s is already being rotated (to %s, "
                         "%s): finish or cancel that rotation first (rotate --finish or "
                         "--cancel)", canon, r.new_id, store_rotation_state_name(r.state));
    if (get_one(st, ROTATION_SELECT " WHERE r.new_id = ?1 AND r.state = 'active'", canon, &r,
                &found, err))
        return err->code;
    if (found)
        return error_set(err, ERROR_STATE, "credential %s is the successor of %s, whose "
                         "rotation is not over: finish or cancel it first", canon, r.old_id);
    return ERROR_OK;
}

/* The successor: the old one's user fields, a new create. */
static error_code make_successor(const model_object *old, model_object *succ,
                                 error_info *err)
{
    if (model_object_copy(succ, old, err))
        return err->code;
    model_cred *c = &succ->cred;
    c->id[0] = c->uri[0] = c->created_at[0] = c->error[0] = '\0';
    model_free_wiped(c->token);
    c->token = NULL;
    c->state = MODEL_STATE_NEW;
    return ERROR_OK;
}

static error_code start_in_op(store *st, const char *id, long long grace_s,
                              store_rotation_mode mode, const char *exec, long long now,
                              char new_id[MODEL_ID_MAX + 1], error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, MODEL_KIND_CRED, id, canon, &state, err))
        return err->code;
    if (state != MODEL_STATE_SYNCED && state != MODEL_STATE_EDITED)
        return error_set(err, ERROR_STATE, "credential %s is %s: only a credential that "
                         "exists remotely (synced or edited) can be rotated", canon,
                         model_state_name(state));
    if (check_free(st, canon, err))
        return err->code;
    model_object old, succ;
    model_object_init(&old, MODEL_KIND_CRED);
    model_object_init(&succ, MODEL_KIND_CRED);
    error_code rc = store_get(st, MODEL_KIND_CRED, canon, &old, err);
    if (rc == ERROR_OK)
        rc = make_successor(&old, &succ, err);
    if (rc == ERROR_OK)
        rc = store_insert(st, &succ, err);
    const char *args[] = {canon, succ.cred.id, mode_names[mode], exec,
                          exec[0] ? "pending" : "none"};
    const long long nums[] = {grace_s, now};
    if (rc == ERROR_OK)
        rc = run(st, "INSERT INTO rotations (old_id, new_id, mode, exec, exec_state, grace_s,"
                 " started_at, state) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'active')",
                 args, 5, nums, 2, NULL, err);
    if (rc == ERROR_OK)
        snprintf(new_id, MODEL_ID_MAX + 1, "%s", succ.cred.id);
    model_object_clear(&old);
    model_object_clear(&succ);
    return rc;
}

error_code store_rotation_start(store *st, const char *id, long long grace_s,
                                store_rotation_mode mode, const char *exec, long long now,
                                char new_id[MODEL_ID_MAX + 1], error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    exec = exec ? exec : "";
    if (grace_s < 0)
        return error_set(err, ERROR_INVALID, "a grace period cannot be negative");
    if (strlen(exec) > STORE_ROTATION_EXEC_MAX)
        return error_set(err, ERROR_INVALID, "the command is longer than %d bytes",
                         STORE_ROTATION_EXEC_MAX);
    if ((unsigned)mode > STORE_ROTATE_NOW)
        return error_set(err, ERROR_INVALID, "unknown rotation mode");
    bool own;
    if (tx_begin(st, &own, err))
        return err->code;
    error_code rc = start_in_op(st, id, grace_s, mode, exec, now, new_id, err);
    return tx_end(st, own, rc, err);
}
