/* store: statements, errors and transactions, under every other store_*.c
 * (opening and closing a file, its schema: store_schema.c; the files:
 * store_files.c). */
#include "store_internal.h"

#include "rampart/validate.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

bool store_is_local_id(const char *id)
{
    return validate_is_local_id(id);
}

/* ---- statements ---------------------------------------------------------- */

error_code store_db_error(store *st, int rc, error_info *err)
{
    int primary = rc & 0xff;
    const char *msg = sqlite3_errmsg(st->db);
    if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
        return error_set(err, ERROR_CONFLICT, "database: %s", msg);
    if (primary == SQLITE_CONSTRAINT)
        return error_set(err, ERROR_INVALID, "database: %s", msg);
    if (primary == SQLITE_NOMEM)
        return error_set(err, ERROR_NOMEM, "out of memory");
    if (primary == SQLITE_BUSY)
        return error_set(err, ERROR_IO, "database: %s (another rampart is writing; try again)",
                         msg);
    /* The file, not a statement, is at fault: say which, and that it is the only
     * place its tokens are kept. */
    if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB)
        return error_set(err, ERROR_IO,
                         "database: %s is damaged or is not a SQLite database (%s): keep a "
                         "copy of it (the tokens in it are kept nowhere else) and run "
                         "'rampart doctor'",
                         st->path, msg);
    return error_set(err, ERROR_IO, "database: %s", msg);
}

error_code store_prepare(store *st, const char *sql, sqlite3_stmt **out, error_info *err)
{
    int rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    if (rc != SQLITE_OK) {
        *out = NULL;
        return store_db_error(st, rc, err);
    }
    /* SQL text with no statement in it prepares to NULL without an error code. */
    if (!*out)
        return error_set(err, ERROR_IO, "database: empty statement");
    return ERROR_OK;
}

sqlite3_stmt *store_stmt(store *st, store_stmt_id id, error_info *err)
{
    if (!st->stmts[id] && store_prepare(st, store_sql_text(id), &st->stmts[id], err))
        return NULL;
    return st->stmts[id];
}

sqlite3_stmt *store_kind_stmt(store *st, model_kind kind, store_kstmt which,
                              error_info *err)
{
    sqlite3_stmt **slot = &st->kstmts[kind][which];
    if (!*slot) { /* made from the descriptor on first use, then kept */
        char sql[4096];
        if (!store_kind_sql(kind, which, sql, sizeof sql)) {
            error_set(err, ERROR_IO, "database: a %s statement is too long",
                      kind_get(kind)->noun);
            return NULL;
        }
        if (store_prepare(st, sql, slot, err))
            return NULL;
    }
    return *slot;
}

void store_reset(sqlite3_stmt *s)
{
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
}

error_code store_bind_texts(store *st, sqlite3_stmt *s, const char *const *texts, int n,
                            error_info *err)
{
    for (int i = 0; i < n; i++) {
        int rc = sqlite3_bind_text(s, i + 1, texts[i], -1, SQLITE_STATIC);
        if (rc != SQLITE_OK) {
            store_reset(s);
            return store_db_error(st, rc, err);
        }
    }
    return ERROR_OK;
}

error_code store_bind_named(store *st, sqlite3_stmt *s, const char *const *names,
                            const char *const *texts, int n, error_info *err)
{
    for (int i = 0; i < n; i++) {
        int index = sqlite3_bind_parameter_index(s, names[i]);
        int rc = index ? sqlite3_bind_text(s, index, texts[i], -1, SQLITE_STATIC) : SQLITE_OK;
        if (rc != SQLITE_OK) {
            store_reset(s);
            return store_db_error(st, rc, err);
        }
    }
    return ERROR_OK;
}

error_code store_step(store *st, sqlite3_stmt *s, bool *row, error_info *err)
{
    int rc = sqlite3_step(s);
    *row = rc == SQLITE_ROW;
    if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        return ERROR_OK;
    error_code ec = store_db_error(st, rc, err);
    store_reset(s);
    return ec;
}

error_code store_exec(store *st, sqlite3_stmt *s, error_info *err)
{
    bool row;
    error_code rc = store_step(st, s, &row, err);
    store_reset(s);
    return rc;
}

void store_col_copy(sqlite3_stmt *s, int col, char *dst, size_t size)
{
    model_copy_text(dst, size, (const char *)sqlite3_column_text(s, col));
}

error_code store_plan(store *st, const char *sql, char *out, size_t size, error_info *err)
{
    char explain[2048];
    snprintf(explain, sizeof explain, "EXPLAIN QUERY PLAN %s", sql);
    sqlite3_stmt *s;
    if (store_prepare(st, explain, &s, err))
        return err->code;
    out[0] = '\0';
    bool row = true;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && row) {
        rc = store_step(st, s, &row, err);
        size_t len = strlen(out);
        if (rc == ERROR_OK && row)
            snprintf(out + len, size - len, "%s%s", len ? "; " : "",
                     (const char *)sqlite3_column_text(s, 3));
    }
    sqlite3_finalize(s);
    return rc;
}

error_code store_exec_sql(store *st, const char *sql, error_info *err)
{
    int rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? ERROR_OK : store_db_error(st, rc, err);
}

error_code store_query_text(store *st, const char *sql, char *out, size_t size,
                            error_info *err)
{
    sqlite3_stmt *s;
    if (store_prepare(st, sql, &s, err))
        return err->code;
    bool row;
    error_code rc = store_step(st, s, &row, err);
    if (rc == ERROR_OK)
        model_copy_text(out, size, row ? (const char *)sqlite3_column_text(s, 0) : "");
    sqlite3_finalize(s);
    return rc;
}

error_code store_run(store *st, store_stmt_id id, error_info *err)
{
    sqlite3_stmt *s = store_stmt(st, id, err);
    return s ? store_exec(st, s, err) : err->code;
}

void store_run_quiet(store *st, store_stmt_id id)
{
    error_info ignored;
    store_run(st, id, &ignored);
}

/* ---- transactions -------------------------------------------------------- */

/* SQLite rolls a transaction back by itself after some errors (disk full). */
static error_code check_tx_alive(store *st, error_info *err)
{
    if (st->in_tx && sqlite3_get_autocommit(st->db))
        return error_set(err, ERROR_STATE,
                         "the transaction was rolled back after an earlier error: "
                         "roll back and start again");
    return ERROR_OK;
}

error_code store_op_begin(store *st, bool multi_write, store_op *op, error_info *err)
{
    *op = STORE_OP_NONE;
    if (check_tx_alive(st, err))
        return err->code;
    store_op want = !st->in_tx ? STORE_OP_TX : multi_write ? STORE_OP_SAVEPOINT
                                                            : STORE_OP_NONE;
    if (want == STORE_OP_NONE)
        return ERROR_OK;
    if (store_run(st, want == STORE_OP_TX ? STMT_BEGIN : STMT_SAVEPOINT, err))
        return err->code;
    *op = want;
    return ERROR_OK;
}

error_code store_op_end(store *st, store_op op, error_code rc, error_info *err)
{
    if (op == STORE_OP_NONE)
        return rc;
    if (rc == ERROR_OK) {
        rc = store_run(st, op == STORE_OP_TX ? STMT_COMMIT : STMT_RELEASE, err);
        if (rc == ERROR_OK)
            return ERROR_OK;
    }
    if (op == STORE_OP_TX) {
        store_run_quiet(st, STMT_ROLLBACK);
    } else {
        store_run_quiet(st, STMT_ROLLBACK_TO);
        store_run_quiet(st, STMT_RELEASE);
    }
    return rc;
}

error_code store_begin(store *st, error_info *err)
{
    if (st->in_tx)
        return error_set(err, ERROR_STATE, "a transaction is already open");
    if (store_run(st, STMT_BEGIN, err))
        return err->code;
    st->in_tx = true;
    return ERROR_OK;
}

error_code store_commit(store *st, error_info *err)
{
    if (!st->in_tx)
        return error_set(err, ERROR_STATE, "no transaction is open");
    /* A commit now would keep a rules table without its indexes, natural key
     * included: the import must be finished (or the transaction rolled back). */
    if (st->indexes_dropped)
        return error_set(err, ERROR_STATE, "a bulk import is still open: finish it first");
    error_code rc = check_tx_alive(st, err);
    if (rc == ERROR_OK)
        rc = store_run(st, STMT_COMMIT, err);
    if (rc != ERROR_OK)
        store_run_quiet(st, STMT_ROLLBACK);
    st->in_tx = false;
    st->indexes_dropped = false;
    return rc;
}

void store_rollback(store *st)
{
    if (!st || !st->in_tx)
        return;
    store_run_quiet(st, STMT_ROLLBACK);
    st->in_tx = false;
    st->indexes_dropped = false; /* the rollback brought them back */
}

bool store_in_transaction(const store *st)
{
    return st && st->in_tx;
}

void store_now(store *st, char out[MODEL_TIME_MAX + 1])
{
    long long sec = (long long)time(NULL);
    if (sec != st->now_sec || !st->now_text[0]) {
        ids_now_rfc3339(st->now_text, sizeof st->now_text);
        st->now_sec = sec;
    }
    memcpy(out, st->now_text, MODEL_TIME_MAX + 1);
}

