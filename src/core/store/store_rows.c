/* store: the row primitives rules and credentials share (ids, states, insert,
 * remove, recreate, aliases, confirm); the edit code is above them. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

error_code store_row_resolve(store *st, model_kind kind, const char *id,
                             char canon[MODEL_ID_MAX + 1], model_state *state,
                             error_info *err)
{
    sqlite3_stmt *s = store_kind_stmt(st, kind, KSTMT_RESOLVE, err);
    if (!s || store_bind_texts(st, s, &id, 1, err))
        return err->code;
    bool row;
    if (store_step(st, s, &row, err))
        return err->code;
    error_code rc = ERROR_OK;
    if (!row) {
        rc = error_set(err, ERROR_NOT_FOUND, "no %s %s", kind_get(kind)->noun, id);
    } else {
        store_col_copy(s, 0, canon, MODEL_ID_MAX + 1);
        if (!model_state_parse((const char *)sqlite3_column_text(s, 1), state))
            rc = error_set(err, ERROR_IO, "database: %s %s has an unknown state",
                           kind_get(kind)->noun, canon);
    }
    store_reset(s);
    return rc;
}

error_code store_resolve_id(store *st, model_kind kind, const char *id,
                            char canon[MODEL_ID_MAX + 1], model_state *state, error_info *err)
{
    if ((unsigned)kind >= MODEL_KIND_COUNT || !id)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)kind);
    return store_row_resolve(st, kind, id, canon, state, err);
}

/* Run statement `s` (NULL: err says why) over texts ?1..?n. */
static error_code exec_args(store *st, sqlite3_stmt *s, const char *const *args, int n,
                            error_info *err)
{
    if (!s || store_bind_texts(st, s, args, n, err))
        return err->code;
    return store_exec(st, s, err);
}

/* Inside an op: drop the row (its token follows by cascade) and its aliases. */
error_code store_row_remove_in_op(store *st, model_kind kind, const char *canon,
                                 error_info *err)
{
    if (exec_args(st, store_stmt(st, STMT_ALIAS_DELETE, err), &canon, 1, err))
        return err->code;
    return exec_args(st, store_kind_stmt(st, kind, KSTMT_DELETE, err), &canon, 1, err);
}

/* Inside an op: a remote_deleted row becomes a new local create of the same
 * content. Its remote id, aliases (and a credential's dead token) go. */
error_code store_row_recreate_in_op(store *st, model_kind kind, const char *canon,
                                    char fresh[MODEL_ID_MAX + 1], error_info *err)
{
    if (ids_generate(&st->idgen, "local", fresh, MODEL_ID_MAX + 1, err))
        return err->code;
    /* A credential's token goes (no row for a kind without tokens). */
    if (exec_args(st, store_stmt(st, STMT_TOKEN_DELETE, err), &canon, 1, err) ||
        exec_args(st, store_stmt(st, STMT_ALIAS_DELETE, err), &canon, 1, err))
        return err->code;
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    const char *args[] = {canon, fresh, now};
    error_code rc = exec_args(st, store_kind_stmt(st, kind, KSTMT_RECREATE, err), args, 3, err);
    if (rc == ERROR_CONFLICT)
        return error_set(err, ERROR_CONFLICT, "%s %s cannot be created again: its policy "
                         "already has a live rule for the same cidr",
                         kind_get(kind)->noun, canon);
    return rc;
}

error_code store_row_set_state_in_op(store *st, model_kind kind, const char *id,
                                    model_state state, const char *error_text,
                                    error_info *err)
{
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    const char *args[] = {id, model_state_name(state), error_text ? error_text : "", now};
    error_code rc = exec_args(st, store_kind_stmt(st, kind, KSTMT_SET_STATE, err), args, 4, err);
    if (rc == ERROR_CONFLICT)
        return error_set(err, ERROR_CONFLICT, "%s %s cannot become %s: its policy already "
                         "has a live rule for the same cidr", kind_get(kind)->noun, id,
                         model_state_name(state));
    if (rc != ERROR_OK)
        return rc;
    if (sqlite3_changes(st->db) == 0)
        return error_set(err, ERROR_NOT_FOUND, "no %s %s", kind_get(kind)->noun, id);
    return ERROR_OK;
}

error_code store_row_set_state(store *st, model_kind kind, const char *id,
                               model_state state, const char *error_text,
                               error_info *err)
{
    if ((unsigned)state >= MODEL_STATE_COUNT)
        return error_set(err, ERROR_INVALID, "invalid sync state %d", (int)state);
    store_op op;
    if (store_op_begin(st, false, &op, err))
        return err->code;
    return store_op_end(st, op, store_row_set_state_in_op(st, kind, id, state, error_text, err), err);
}

error_code store_row_remove(store *st, model_kind kind, const char *id, error_info *err)
{
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    error_code rc = store_row_resolve(st, kind, id, canon, &state, err);
    if (rc == ERROR_OK)
        rc = store_row_remove_in_op(st, kind, canon, err);
    return store_op_end(st, op, rc, err);
}

error_code store_row_state_counts(store *st, model_kind kind,
                                  size_t counts[MODEL_STATE_COUNT], error_info *err)
{
    memset(counts, 0, MODEL_STATE_COUNT * sizeof counts[0]);
    sqlite3_stmt *s = store_kind_stmt(st, kind, KSTMT_STATE_COUNTS, err);
    if (!s)
        return err->code;
    bool row = true;
    while (row) {
        if (store_step(st, s, &row, err))
            return err->code;
        model_state state;
        if (row && model_state_parse((const char *)sqlite3_column_text(s, 0), &state))
            counts[state] = (size_t)sqlite3_column_int64(s, 1);
    }
    store_reset(s);
    return ERROR_OK;
}

error_code store_row_check_alias(store *st, model_kind kind, const char *id,
                                 error_info *err)
{
    if (!store_is_local_id(id))
        return ERROR_OK;
    sqlite3_stmt *s = store_stmt(st, STMT_ALIAS_EXISTS, err);
    if (!s || store_bind_texts(st, s, &id, 1, err))
        return err->code;
    bool row;
    if (store_step(st, s, &row, err))
        return err->code;
    store_reset(s);
    if (row)
        return error_set(err, ERROR_CONFLICT, "%s %s already exists",
                         kind_get(kind)->noun, id);
    return ERROR_OK;
}

error_code store_row_check_confirm(store *st, model_kind kind, const char *local_id,
                                   const char *remote_id, error_info *err)
{
    const char *noun = kind_get(kind)->noun;
    if (!remote_id[0])
        return error_set(err, ERROR_INVALID, "the remote's reply for %s %s has no id",
                         noun, local_id);
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    if (store_row_resolve(st, kind, local_id, canon, &state, err))
        return err->code;
    if (strcmp(canon, local_id) != 0)
        return error_set(err, ERROR_STATE, "%s %s was already confirmed as %s", noun,
                         local_id, canon);
    return ERROR_OK;
}

error_code store_row_confirm(store *st, model_kind kind, sqlite3_stmt *confirm,
                             const char *local_id, const char *remote_id,
                             error_info *err)
{
    if (store_exec(st, confirm, err)) {
        if (err->code == ERROR_CONFLICT)
            error_set(err, ERROR_CONFLICT, "%s %s already exists", kind_get(kind)->noun, remote_id);
        return err->code;
    }
    if (strcmp(local_id, remote_id) == 0)
        return ERROR_OK;
    const char *args[] = {local_id, remote_id, kind_get(kind)->noun};
    sqlite3_stmt *s = store_stmt(st, STMT_ALIAS_INSERT, err);
    if (!s || store_bind_texts(st, s, args, 3, err))
        return err->code;
    return store_exec(st, s, err);
}

/* ---- a whole row, by the descriptor ---------------------------------------- */

enum { ROW_COLS_MAX = 32 };

const char *store_row_token(const model_object *obj)
{
    return kind_get(obj->kind)->has_token ? obj->cred.token : NULL;
}

/* The row's columns as texts, ?1.. of KSTMT_INSERT: the given id and created_at
 * in place of the row's; an ACL is built in heaps[i]. */
static error_code insert_texts(const model_object *obj, const char *id,
                               const char *created_at, const char **texts, char **heaps,
                               error_info *err)
{
    int width = store_row_width(obj->kind);
    for (int i = 0; i < width - 1; i++) {
        const kind_field *f = store_row_field(obj->kind, i);
        const char *col = store_column(f);
        if (strcmp(col, "id") == 0)
            texts[i] = id;
        else if (strcmp(col, "created_at") == 0)
            texts[i] = created_at;
        else if (!(texts[i] = store_field_text(obj, f, &heaps[i], err)))
            return err->code;
    }
    texts[width - 1] = model_state_name(model_object_state(obj));
    return ERROR_OK;
}

error_code store_row_insert_in_op(store *st, const model_object *obj, const char *id,
                                  const char *created_at, error_info *err)
{
    int width = store_row_width(obj->kind);
    if (width > ROW_COLS_MAX)
        return error_set(err, ERROR_IO, "database: a %s has too many columns",
                         kind_get(obj->kind)->noun);
    const char *texts[ROW_COLS_MAX];
    char *heaps[ROW_COLS_MAX] = {0};
    sqlite3_stmt *s = store_kind_stmt(st, obj->kind, KSTMT_INSERT, err);
    error_code rc = !s ? err->code : insert_texts(obj, id, created_at, texts, heaps, err);
    if (rc == ERROR_OK && (rc = store_bind_texts(st, s, texts, width, err)) == ERROR_OK)
        rc = store_exec(st, s, err);
    for (int i = 0; i < width; i++)
        free(heaps[i]);
    if (rc == ERROR_CONFLICT)
        return store_row_conflict(st, obj, id, err);
    if (rc == ERROR_OK)
        rc = store_cred_put_token(st, id, store_row_token(obj), err);
    return rc;
}
