/* store: the sync engine's outbox moves and the user's retry, delete and discard of
 * rows (their edited rows' part is store_edit.c's). */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Bind `n` texts to statement `s` (NULL: err says why) and run it; *changes gets
 * the rows hit. */
static error_code exec_stmt(store *st, sqlite3_stmt *s, const char *const *args, int n,
                            int *changes, error_info *err)
{
    if (!s || store_bind_texts(st, s, args, n, err) || store_exec(st, s, err))
        return err->code;
    if (changes)
        *changes = sqlite3_changes(st->db);
    return ERROR_OK;
}

static error_code exec_texts(store *st, store_stmt_id id, const char *const *args, int n,
                             int *changes, error_info *err)
{
    return exec_stmt(st, store_stmt(st, id, err), args, n, changes, err);
}

/* The same for kind `kind`'s statement `which`. */
static error_code exec_kind(store *st, model_kind kind, store_kstmt which,
                            const char *const *args, int n, int *changes, error_info *err)
{
    return exec_stmt(st, store_kind_stmt(st, kind, which, err), args, n, changes, err);
}

/* ---- the sync lock -------------------------------------------------------- */

struct store_sync_lock {
    int fd; /* -1: nothing to lock (in-memory database) */
};

error_code store_sync_lock_take(store *st, store_sync_lock **out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *out = NULL;
    store_sync_lock *lock = calloc(1, sizeof *lock);
    if (!lock)
        return error_set(err, ERROR_NOMEM, "out of memory");
    lock->fd = -1;
    const char *db = sqlite3_db_filename(st->db, "main");
    if (!db || !*db) {
        *out = lock;
        return ERROR_OK;
    }
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s-sync.lock", db) >= (int)sizeof path) {
        free(lock);
        return error_set(err, ERROR_IO, "database path is too long for its sync lock");
    }
    lock->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock->fd < 0) {
        free(lock);
        return error_set(err, ERROR_IO, "cannot open %s: %s", path, strerror(errno));
    }
    if (flock(lock->fd, LOCK_EX | LOCK_NB) != 0) {
        int saved = errno;
        store_sync_unlock(lock);
        if (saved == EWOULDBLOCK)
            return error_set(err, ERROR_STATE, "another sync of this database is running: "
                             "try again when it has finished");
        return error_set(err, ERROR_IO, "cannot lock %s: %s", path, strerror(saved));
    }
    *out = lock;
    return ERROR_OK;
}

/* Closing the descriptor drops the lock; the file stays (removing it would race
 * with a process about to lock it). */
void store_sync_unlock(store_sync_lock *lock)
{
    if (!lock)
        return;
    if (lock->fd >= 0)
        close(lock->fd);
    free(lock);
}

/* ---- claim ---------------------------------------------------------------- */

static error_code claim(store *st, model_kind kind, const char *id, error_info *err)
{
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    const char *args[] = {id, now};
    store_op op;
    if (store_op_begin(st, false, &op, err))
        return err->code;
    int changes = 0;
    error_code rc = exec_kind(st, kind, KSTMT_CLAIM, args, 2, &changes, err);
    if (rc == ERROR_OK && changes == 0) {
        char canon[MODEL_ID_MAX + 1];
        model_state state;
        rc = store_row_resolve(st, kind, id, canon, &state, err);
        if (rc == ERROR_OK)
            rc = error_set(err, ERROR_STATE, "%s %s is %s, not new: not sent",
                           kind_get(kind)->noun, canon, model_state_name(state));
    }
    return store_op_end(st, op, rc, err);
}

error_code store_claim(store *st, model_kind kind, const char *id, error_info *err)
{
    return claim(st, kind, id, ERROR_OR_SCRATCH(err));
}

/* ---- requeue -------------------------------------------------------------- */

/* Inside an op: orphaned `canon` back to new under its local id, alias dropped. */
static error_code requeue_in_op(store *st, const char *canon, error_info *err)
{
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    const char *args[] = {canon, now};
    if (exec_texts(st, STMT_REQUEUE_ORPHAN, args, 2, NULL, err))
        return err->code;
    return exec_texts(st, STMT_ALIAS_DELETE, &canon, 1, NULL, err);
}

static error_code requeue(store *st, const char *id, error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, MODEL_KIND_CRED, id, canon, &state, err))
        return err->code;
    if (state != MODEL_STATE_ORPHANED)
        return error_set(err, ERROR_STATE, "credential %s is %s, not orphaned", canon,
                         model_state_name(state));
    return requeue_in_op(st, canon, err);
}

error_code store_cred_requeue(store *st, const char *id, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, requeue(st, id, err), err);
}

/* ---- retry ---------------------------------------------------------------- */

static error_code set_state_in_op(store *st, model_kind kind, const char *canon,
                                  model_state state, const char *error_text,
                                  error_info *err)
{
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    const char *args[] = {canon, model_state_name(state), error_text, now};
    return exec_kind(st, kind, KSTMT_SET_STATE, args, 4, NULL, err);
}

static error_code retry_in_op(store *st, model_kind kind, const char *id, error_info *err)
{
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, kind, id, canon, &state, err))
        return err->code;
    switch (state) {
    case MODEL_STATE_FAILED:
        return set_state_in_op(st, kind, canon, MODEL_STATE_NEW, "", err);
    case MODEL_STATE_REMOTE_DELETED: {
        char fresh[MODEL_ID_MAX + 1];
        return store_row_recreate_in_op(st, kind, canon, fresh, err);
    }
    case MODEL_STATE_ORPHANED:
        return ERROR_OK; /* already queued: delete remotely, then create again */
    default:
        break;
    }
    return error_set(err, ERROR_STATE, "%s %s is %s: nothing to retry (only failed, "
                     "orphaned and remote_deleted rows are)", kind_get(kind)->noun,
                     canon, model_state_name(state));
}

static error_code retry(store *st, model_kind kind, const char *id, error_info *err)
{
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, retry_in_op(st, kind, id, err), err);
}

error_code store_retry(store *st, model_kind kind, const char *id, error_info *err)
{
    return retry(st, kind, id, ERROR_OR_SCRATCH(err));
}

/* ---- delete and discard: what a user's change does in each sync state ------ */

/* A change to one row in one transaction: `id` resolved to the row's id and
 * state, then `fn` (a delete or a discard, in the op) with a result the caller
 * may not want (NULL). */
typedef error_code (*row_change_fn)(store *st, model_kind kind, const char *canon,
                                    model_state state, store_delete_result *result,
                                    error_info *err);

static error_code change_row(store *st, model_kind kind, const char *id,
                             store_delete_result *result, row_change_fn fn, error_info *err)
{
    store_delete_result ignored;
    char canon[MODEL_ID_MAX + 1];
    model_state state = MODEL_STATE_NEW;
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    error_code rc = store_row_resolve(st, kind, id, canon, &state, err);
    if (rc == ERROR_OK)
        rc = fn(st, kind, canon, state, result ? result : &ignored, err);
    return store_op_end(st, op, rc, err);
}

typedef enum delete_action {
    DELETE_REMOVE,
    DELETE_MARK,
    DELETE_ALREADY,
    DELETE_IN_FLIGHT,
    DELETE_EDITED
} delete_action;

/* What a user's delete does in each sync state (DESIGN.md, Sync). */
static const delete_action delete_actions[MODEL_STATE_COUNT] = {
    [MODEL_STATE_NEW] = DELETE_REMOVE,
    [MODEL_STATE_CREATING] = DELETE_IN_FLIGHT,
    [MODEL_STATE_SYNCED] = DELETE_MARK,
    [MODEL_STATE_DELETING] = DELETE_ALREADY,
    [MODEL_STATE_FAILED] = DELETE_REMOVE,
    [MODEL_STATE_UNKNOWN] = DELETE_IN_FLIGHT,
    [MODEL_STATE_ORPHANED] = DELETE_MARK,
    [MODEL_STATE_REMOTE_DELETED] = DELETE_REMOVE,
    [MODEL_STATE_EDITED] = DELETE_EDITED,
    [MODEL_STATE_CONFLICT] = DELETE_EDITED,
};

static error_code delete_in_op(store *st, model_kind kind, const char *canon,
                               model_state state, store_delete_result *result,
                               error_info *err)
{
    switch (delete_actions[state]) {
    case DELETE_REMOVE:
        *result = STORE_DELETE_REMOVED;
        return store_row_remove_in_op(st, kind, canon, err);
    case DELETE_MARK:
        *result = STORE_DELETE_MARKED;
        return store_row_set_state_in_op(st, kind, canon, MODEL_STATE_DELETING, NULL, err);
    case DELETE_ALREADY:
        *result = STORE_DELETE_ALREADY;
        return ERROR_OK;
    case DELETE_EDITED:
        return store_edit_delete_in_op(st, kind, canon, result, err);
    case DELETE_IN_FLIGHT:
        break;
    }
    return error_set(err, ERROR_STATE, "%s %s cannot be deleted now: %s; the next sync settles it",
                     kind_get(kind)->noun, canon,
                     state == MODEL_STATE_CREATING ? "its create is in flight"
                                                   : "the outcome of its create is unknown");
}

error_code store_delete(store *st, model_kind kind, const char *id,
                        store_delete_result *result, error_info *err)
{
    return change_row(st, kind, id, result, delete_in_op, ERROR_OR_SCRATCH(err));
}

/* A queued delete taken back (the row is the remote's again); refused for a row
 * the sync queued itself (a stray copy, an orphan's remote copy). */
static error_code undelete_in_op(store *st, model_kind kind, const char *canon,
                                 store_delete_result *result, error_info *err)
{
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    int changes = 0;
    if (exec_kind(st, kind, KSTMT_UNDELETE, (const char *const[]){canon, now}, 2, &changes,
                  err))
        return err->code;
    if (changes == 0)
        return error_set(err, ERROR_STATE, "%s %s is deleted by the next sync for a reason "
                         "of its own (see its error): it cannot be kept",
                         kind_get(kind)->noun, canon);
    *result = STORE_DELETE_REVERTED;
    return ERROR_OK;
}

static error_code discard_in_op(store *st, model_kind kind, const char *canon,
                                model_state state, store_delete_result *result,
                                error_info *err)
{
    const char *noun = kind_get(kind)->noun;
    switch (state) {
    case MODEL_STATE_NEW:
    case MODEL_STATE_FAILED:
    case MODEL_STATE_REMOTE_DELETED:
        *result = STORE_DELETE_REMOVED;
        if (exec_texts(st, STMT_ALIAS_DELETE, (const char *const[]){canon}, 1, NULL, err))
            return err->code;
        return exec_kind(st, kind, KSTMT_DELETE, (const char *const[]){canon}, 1,
                          NULL, err);
    case MODEL_STATE_ORPHANED:
        *result = STORE_DELETE_MARKED;
        return set_state_in_op(st, kind, canon, MODEL_STATE_DELETING, "", err);
    case MODEL_STATE_EDITED:
    case MODEL_STATE_CONFLICT:
        return store_edit_discard_in_op(st, kind, canon, result, err);
    case MODEL_STATE_DELETING:
        return undelete_in_op(st, kind, canon, result, err);
    case MODEL_STATE_SYNCED:
        return error_set(err, ERROR_STATE, "%s %s is synced: delete it instead of "
                         "discarding it", noun, canon);
    default:
        break;
    }
    return error_set(err, ERROR_STATE, "%s %s is %s: its change is being sent now: "
                     "only new, failed, orphaned, remote_deleted, edited, conflict and "
                     "deleting rows can be discarded (sync first)", noun, canon,
                     model_state_name(state));
}

error_code store_discard(store *st, model_kind kind, const char *id,
                         store_delete_result *result, error_info *err)
{
    return change_row(st, kind, id, result, discard_in_op, ERROR_OR_SCRATCH(err));
}
