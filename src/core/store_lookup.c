/* Small lookups for the console and the agent endpoint: policy ids, credentials
 * by name, and the change counter readers poll. */
#include <stdio.h>
#include <string.h>

#include "store_internal.h"

/* One index seek per policy (min over rules_policy_id) instead of a DISTINCT
 * scan: a cache of a million rules in a handful of policies answers at once. */
error_code store_policy_ids(store *st, const char *after, char (*ids)[MODEL_ID_MAX + 1],
                            size_t max, size_t *count, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    *count = 0;
    char last[MODEL_ID_MAX + 1];
    snprintf(last, sizeof last, "%s", after ? after : "");
    sqlite3_stmt *s = store_stmt(st, STMT_POLICY_IDS, err);
    if (!s)
        return err->code;
    while (*count < max) {
        const char *key = last;
        bool row;
        if (store_bind_texts(st, s, &key, 1, err) || store_step(st, s, &row, err))
            return err->code;
        bool done = !row || sqlite3_column_type(s, 0) == SQLITE_NULL;
        if (!done) {
            store_col_copy(s, 0, ids[*count], MODEL_ID_MAX + 1);
            memcpy(last, ids[*count], sizeof last);
            (*count)++;
        }
        store_reset(s);
        if (done)
            break;
    }
    return ERROR_OK;
}

error_code store_cred_find_by_name(store *st, const char *name,
                                   char (*ids)[MODEL_ID_MAX + 1], size_t max,
                                   size_t *count, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    *count = 0;
    sqlite3_stmt *s = store_stmt(st, STMT_CRED_BY_NAME, err);
    if (!s || store_bind_texts(st, s, &name, 1, err))
        return err->code;
    int rc = sqlite3_bind_int64(s, 2, (sqlite3_int64)max + 1);
    if (rc != SQLITE_OK) {
        store_reset(s);
        return store_db_error(st, rc, err);
    }
    size_t seen = 0;
    for (;;) {
        bool row;
        if (store_step(st, s, &row, err))
            return err->code;
        if (!row)
            break;
        if (seen < max)
            store_col_copy(s, 0, ids[seen], MODEL_ID_MAX + 1);
        seen++;
    }
    store_reset(s);
    *count = seen;
    return ERROR_OK;
}

error_code store_data_version(store *st, long long *out, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    sqlite3_stmt *s = store_stmt(st, STMT_DATA_VERSION, err);
    bool row;
    if (!s || store_step(st, s, &row, err))
        return err->code;
    *out = row ? (long long)sqlite3_column_int64(s, 0) : 0;
    store_reset(s);
    return ERROR_OK;
}
