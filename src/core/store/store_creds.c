/* store: tunnel credentials and their tokens. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

static bool token_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           c == '_';
}

error_code store_token_check(const char *token, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    size_t len = token ? strnlen(token, STORE_TOKEN_MAX + 1) : 0;
    if (len == 0)
        return error_set(err, ERROR_INVALID, "the token is empty");
    if (len > STORE_TOKEN_MAX)
        return error_set(err, ERROR_INVALID, "the token is longer than %d bytes",
                         STORE_TOKEN_MAX);
    for (size_t i = 0; i < len; i++) {
        if (!token_char(token[i]))
            return error_set(err, ERROR_INVALID, "the token holds a byte that is not a "
                             "letter, a digit or '_' (byte %zu of %zu)", i + 1, len);
    }
    return ERROR_OK;
}

/* The token is bound without a copy and unbound by store_exec's reset. Whatever
 * the caller, a token that may one day be printed has a token's shape. */
error_code store_cred_put_token(store *st, const char *cred_id, const char *token,
                                error_info *err)
{
    if (!token || !token[0])
        return ERROR_OK;
    if (store_token_check(token, err) != ERROR_OK)
        return error_prefix(err, "credential %s", cred_id);
    const char *args[] = {cred_id, token};
    sqlite3_stmt *s = store_stmt(st, STMT_TOKEN_PUT, err);
    if (!s || store_bind_texts(st, s, args, 2, err))
        return err->code;
    return store_exec(st, s, err);
}

error_code store_token_lookup(store *st, const char *cred_id, char canon[MODEL_ID_MAX + 1],
                              model_state *state, char **token, model_acl *acl,
                              error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *token = NULL;
    canon[0] = '\0';
    sqlite3_stmt *s = store_stmt(st, STMT_TOKEN_GET, err);
    bool found;
    if (!s || store_bind_texts(st, s, &cred_id, 1, err) || store_step(st, s, &found, err))
        return err->code;
    if (!found) {
        store_reset(s);
        return error_set(err, ERROR_NOT_FOUND, "no credential %s", cred_id);
    }
    store_col_copy(s, 0, canon, MODEL_ID_MAX + 1);
    const char *state_text = (const char *)sqlite3_column_text(s, 2);
    if (!state_text || !model_state_parse(state_text, state))
        *state = MODEL_STATE_UNKNOWN;
    error_code rc = acl ? store_cred_acl_split((const char *)sqlite3_column_text(s, 3), acl,
                                               err)
                        : ERROR_OK;
    const char *held = (const char *)sqlite3_column_text(s, 1);
    char *copy = NULL;
    if (held && rc == ERROR_OK) {
        size_t len = (size_t)sqlite3_column_bytes(s, 1);
        copy = malloc(len + 1);
        if (copy)
            memcpy(copy, held, len + 1);
        else
            rc = error_set(err, ERROR_NOMEM, "out of memory");
    }
    store_reset(s);
    if (rc != ERROR_OK && acl)
        model_acl_clear(acl);
    *token = copy;
    return rc;
}

/* A token an older version stored without the check: never handed out. */
static error_code refuse_held(char **token, const char *canon, error_info *err)
{
    error_info why;
    store_token_check(*token, &why);
    model_free_wiped(*token);
    *token = NULL;
    return error_set(err, ERROR_UNAVAILABLE, "credential %s: the token held here is "
                     "malformed (%s): not shown; delete the credential and create it "
                     "again", canon, why.msg);
}

/* Why a credential the remote created has no token here: the row's error when it
 * has one (a create reply whose token was malformed), else the usual reasons. */
static error_code no_token(store *st, const char *canon, model_state state, error_info *err)
{
    model_object row;
    model_object_init(&row, MODEL_KIND_CRED);
    error_info ignored;
    bool marked = state == MODEL_STATE_ORPHANED &&
                  store_get(st, MODEL_KIND_CRED, canon, &row, &ignored) == ERROR_OK &&
                  row.cred.error[0];
    if (marked)
        error_set(err, ERROR_UNAVAILABLE, "credential %s has no token here: %s", canon,
                  row.cred.error);
    model_object_clear(&row);
    if (marked)
        return ERROR_UNAVAILABLE;
    return error_set(err, ERROR_UNAVAILABLE,
                     "credential %s was created elsewhere or its token was lost: "
                     "this machine does not hold its token", canon);
}

error_code store_token_get(store *st, const char *cred_id, char **token,
                           error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    char canon[MODEL_ID_MAX + 1];
    model_state state = MODEL_STATE_UNKNOWN;
    if (store_token_lookup(st, cred_id, canon, &state, token, NULL, err) != ERROR_OK)
        return err->code;
    if (*token && store_token_check(*token, NULL) != ERROR_OK)
        return refuse_held(token, canon, err);
    if (*token)
        return ERROR_OK;
    if (store_is_local_id(canon))
        return error_set(err, ERROR_UNAVAILABLE,
                         "credential %s is not created remotely yet: its token arrives with "
                         "the sync that creates it", canon);
    return no_token(st, canon, state, err);
}

