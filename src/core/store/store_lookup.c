/* Small lookups for the console and the agent endpoint: policy ids, credentials
 * by name, the change counter readers poll, and the cache's facts about itself. */
#include <stdio.h>
#include <string.h>

#include "store_internal.h"
#include "store_stmt.h"

/* One index seek per policy (min over rules_policy_id) instead of a DISTINCT
 * scan: a cache of a million rules in a handful of policies answers at once. */
error_code store_policy_ids(store *st, const char *after, char (*ids)[MODEL_ID_MAX + 1],
                            size_t max, size_t *count, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
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

error_code store_policy_counts(store *st, const char *after, store_policy_count *out,
                               size_t max, size_t *count, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *count = 0;
    const char *key = after ? after : "";
    sqlite3_stmt *s = store_stmt(st, STMT_POLICY_COUNTS, err);
    if (!s || store_bind_texts(st, s, &key, 1, err))
        return err->code;
    int rc = sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
    if (rc != SQLITE_OK) {
        store_reset(s);
        return store_db_error(st, rc, err);
    }
    while (*count < max) {
        bool row;
        if (store_step(st, s, &row, err))
            return err->code;
        if (!row)
            break;
        store_col_copy(s, 0, out[*count].id, sizeof out[*count].id);
        sqlite3_int64 n = sqlite3_column_int64(s, 1);
        out[*count].rules = n > 0 ? (size_t)n : 0;
        (*count)++;
    }
    store_reset(s);
    return ERROR_OK;
}

error_code store_cred_find_by_name(store *st, const char *name,
                                   char (*ids)[MODEL_ID_MAX + 1], size_t max,
                                   size_t *count, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *count = 0;
    sqlite3_stmt *s = store_stmt(st, STMT_BY_DESCRIPTION, err);
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
    err = ERROR_OR_SCRATCH(err);
    return store_stmt_int(st, store_stmt(st, STMT_DATA_VERSION, err), out, err);
}

error_code store_meta_get(store *st, const char *key, char *value, size_t size,
                          error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    sqlite3_stmt *s = store_stmt(st, STMT_META_GET, err);
    bool row;
    if (store_stmt_text(st, s, key, value, size, &row, err))
        return err->code;
    store_reset(s);
    return row ? ERROR_OK : error_set(err, ERROR_NOT_FOUND, "no %s in the cache yet", key);
}

error_code store_meta_set(store *st, const char *key, const char *value, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (!key || !key[0] || strlen(key) > STORE_META_KEY_MAX || !value ||
        strlen(value) > STORE_META_VALUE_MAX)
        return error_set(err, ERROR_INVALID, "a cache fact needs a key of at most %d bytes "
                         "and a value of at most %d", STORE_META_KEY_MAX,
                         STORE_META_VALUE_MAX);
    const char *args[] = {key, value};
    store_op op;
    if (store_op_begin(st, false, &op, err))
        return err->code;
    sqlite3_stmt *s = store_stmt(st, STMT_META_SET, err);
    error_code rc = !s ? err->code : store_bind_texts(st, s, args, 2, err);
    if (rc == ERROR_OK)
        rc = store_exec(st, s, err);
    return store_op_end(st, op, rc, err);
}
