/* store: one statement run once (store_stmt.h). */
#include "store_stmt.h"

error_code store_stmt_first(store *st, sqlite3_stmt *s, const char *const *args, int n,
                            bool *row, error_info *err)
{
    *row = false;
    if (!s || store_bind_texts(st, s, args, n, err) || store_step(st, s, row, err))
        return err->code;
    return ERROR_OK;
}

error_code store_stmt_text(store *st, sqlite3_stmt *s, const char *key, char *out, size_t size,
                           bool *row, error_info *err)
{
    if (size)
        out[0] = '\0';
    if (store_stmt_first(st, s, &key, 1, row, err))
        return err->code;
    if (*row)
        store_col_copy(s, 0, out, size);
    return ERROR_OK;
}

error_code store_stmt_int(store *st, sqlite3_stmt *s, long long *out, error_info *err)
{
    bool row;
    if (store_stmt_first(st, s, NULL, 0, &row, err))
        return err->code;
    *out = row ? (long long)sqlite3_column_int64(s, 0) : 0;
    store_reset(s);
    return ERROR_OK;
}

error_code store_stmt_run(store *st, sqlite3_stmt *s, const char *const *args, int n,
                          size_t *changes, error_info *err)
{
    if (!s || store_bind_texts(st, s, args, n, err) || store_exec(st, s, err))
        return err->code;
    if (changes)
        *changes = (size_t)sqlite3_changes(st->db);
    return ERROR_OK;
}
