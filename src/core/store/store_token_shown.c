/*
 * store: whether the console has shown a credential's token yet (store.h). A sync
 * that brings a token while nobody looks leaves it "not yet shown", so the console
 * shows it once when it next can, even after a restart.
 */
#include "store_internal.h"

#include <sqlite3.h>

error_code store_token_mark_shown(store *st, const char *cred_id, bool *shown_before,
                                  error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    char now[MODEL_TIME_MAX + 1];
    store_now(st, now);
    const char *args[] = {cred_id, now};
    sqlite3_stmt *s = store_stmt(st, STMT_TOKEN_MARK_SHOWN, err);
    if (!s || store_bind_texts(st, s, args, 2, err) || store_exec(st, s, err))
        return err->code;
    /* No row changed: the token was shown before (the caller holds it, so it is
     * there). One UPDATE, so two consoles cannot both take the first showing. */
    if (shown_before)
        *shown_before = sqlite3_changes(st->db) == 0;
    return ERROR_OK;
}

error_code store_token_unseen(store *st, char (*ids)[MODEL_ID_MAX + 1], size_t max,
                              size_t *n, size_t *total, error_info *err)
{
    *n = 0;
    *total = 0;
    sqlite3_stmt *s = store_stmt(st, STMT_TOKEN_UNSEEN, err);
    if (!s)
        return err->code;
    for (;;) {
        bool row;
        if (store_step(st, s, &row, err)) {
            store_reset(s);
            return err->code;
        }
        if (!row)
            break;
        if (*n < max)
            store_col_copy(s, 0, ids[(*n)++], MODEL_ID_MAX + 1);
        (*total)++;
    }
    store_reset(s);
    return ERROR_OK;
}
