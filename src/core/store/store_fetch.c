/*
 * store: when a local agent last handed out each credential's token (store.h). The
 * agent records its fetches in memory and writes them here in batches, off its
 * request path; the console asks before a delete which credentials are in use.
 */
#include "store_internal.h"

#include <sqlite3.h>

static error_code record_one(store *st, const store_fetch *f, error_info *err)
{
    sqlite3_stmt *s = store_stmt(st, STMT_FETCH_RECORD, err);
    const char *args[] = {f->cred_id};
    if (!s || store_bind_texts(st, s, args, 1, err))
        return err->code;
    int rc = sqlite3_bind_int64(s, 2, (sqlite3_int64)f->at);
    if (rc != SQLITE_OK) {
        store_reset(s);
        return store_db_error(st, rc, err);
    }
    return store_exec(st, s, err);
}

error_code store_fetch_record_batch(store *st, const store_fetch *fetches, size_t n,
                                    error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (n == 0)
        return ERROR_OK;
    store_op op;
    if (store_op_begin(st, n > 1, &op, err))
        return err->code;
    error_code rc = ERROR_OK;
    for (size_t i = 0; rc == ERROR_OK && i < n; i++)
        rc = record_one(st, &fetches[i], err);
    return store_op_end(st, op, rc, err);
}

/* The last fetch of `id` at or after `since` into *at (0: none). */
static error_code fetched_since(store *st, const char *id, long long since, long long *at,
                                error_info *err)
{
    *at = 0;
    sqlite3_stmt *s = store_stmt(st, STMT_FETCH_SINCE, err);
    const char *args[] = {id};
    if (!s || store_bind_texts(st, s, args, 1, err))
        return err->code;
    int brc = sqlite3_bind_int64(s, 2, (sqlite3_int64)since);
    if (brc != SQLITE_OK) {
        store_reset(s);
        return store_db_error(st, brc, err);
    }
    bool row = false;
    error_code rc = store_step(st, s, &row, err);
    if (rc == ERROR_OK && row)
        *at = (long long)sqlite3_column_int64(s, 0);
    store_reset(s);
    return rc;
}

error_code store_fetch_recent(store *st, const char *const *ids, size_t n, long long since,
                              long long *at, size_t *found, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *found = 0;
    for (size_t i = 0; i < n; i++) {
        if (fetched_since(st, ids[i], since, &at[i], err) != ERROR_OK)
            return err->code;
        *found += at[i] != 0;
    }
    return ERROR_OK;
}
