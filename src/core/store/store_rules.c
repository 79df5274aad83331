/* store: IP policy rules. */
#include "store_internal.h"

#include "rampart/validate.h"

#include <stdlib.h>
#include <string.h>

#define RULE_FIELD(f) STORE_TEXT_COL(model_rule, f)

/* Text columns in STORE_RULE_COLS order. */
static const store_text_col rule_text[RULE_COL_TEXT_COUNT] = {
    RULE_FIELD(id),        RULE_FIELD(uri),        RULE_FIELD(created_at),
    RULE_FIELD(description), RULE_FIELD(metadata), RULE_FIELD(cidr),
    RULE_FIELD(policy_id), RULE_FIELD(policy_uri), RULE_FIELD(error),
};

void store_rule_read(sqlite3_stmt *s, model_rule *out)
{
    /* Whole-struct zeroing: callers may compare or copy rows byte for byte. */
    memset(out, 0, sizeof *out);
    store_read_texts(s, rule_text, RULE_COL_TEXT_COUNT, out);
    /* The schema's CHECK constraints keep both columns parseable. */
    if (!model_action_parse((const char *)sqlite3_column_text(s, RULE_COL_ACTION),
                            &out->action))
        out->action = MODEL_ACTION_ALLOW;
    if (!model_state_parse((const char *)sqlite3_column_text(s, RULE_COL_STATE),
                           &out->state))
        out->state = MODEL_STATE_NEW;
}

bool store_state_is_live(model_state state)
{
    return state != MODEL_STATE_DELETING && state != MODEL_STATE_REMOTE_DELETED &&
           state != MODEL_STATE_CONFLICT;
}

/* After a unique violation: the live rule holding the natural key, if any. */
static error_code live_rule_id(store *st, const model_rule *rule, char *out, bool *found,
                               error_info *err)
{
    const char *args[] = {rule->policy_id, rule->cidr};
    sqlite3_stmt *s = store_stmt(st, STMT_RULE_LIVE_ID, err);
    if (!s || store_bind_texts(st, s, args, 2, err) || store_step(st, s, found, err))
        return err->code;
    if (*found)
        store_col_copy(s, 0, out, MODEL_ID_MAX + 1);
    store_reset(s);
    return ERROR_OK;
}

error_code store_rule_conflict(store *st, const model_rule *rule, const char *id,
                               error_info *err)
{
    char other[MODEL_ID_MAX + 1];
    bool found = false;
    if (store_state_is_live(rule->state) && live_rule_id(st, rule, other, &found, err))
        return err->code;
    if (found && strcmp(other, id) != 0)
        return error_set(err, ERROR_CONFLICT, "policy %s already has a rule for %s (%s)",
                         rule->policy_id, rule->cidr, other);
    return error_set(err, ERROR_CONFLICT, "rule %s already exists", id);
}

error_code store_rule_insert_in_op(store *st, const model_rule *rule, const char *id,
                                   const char *created_at, error_info *err)
{
    const char *args[] = {
        id, rule->uri, created_at, rule->description, rule->metadata, rule->cidr,
        rule->policy_id, rule->policy_uri, rule->error, model_action_name(rule->action),
        model_state_name(rule->state), "",
    };
    sqlite3_stmt *s = store_stmt(st, STMT_RULE_INSERT, err);
    if (!s || store_bind_texts(st, s, args, 12, err))
        return err->code;
    error_code rc = store_exec(st, s, err);
    return rc == ERROR_CONFLICT ? store_rule_conflict(st, rule, id, err) : rc;
}

/* Run a bound single-row query over STORE_RULE_COLS; *found tells if it matched. */
static error_code read_one(store *st, sqlite3_stmt *s, model_rule *out, bool *found,
                           error_info *err)
{
    if (store_step(st, s, found, err))
        return err->code;
    if (*found)
        store_rule_read(s, out);
    store_reset(s);
    return ERROR_OK;
}

error_code store_rule_find(store *st, const char *policy_id, const char *cidr,
                           model_rule *out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    /* The key is stored canonical; a caller's spelling of it finds the same row. */
    char canon[MODEL_CIDR_MAX + 1];
    if (validate_cidr(cidr, NULL, canon, sizeof canon, NULL) == ERROR_OK)
        cidr = canon;
    const char *args[] = {policy_id, cidr};
    sqlite3_stmt *s = store_stmt(st, STMT_RULE_FIND, err);
    bool found;
    if (!s || store_bind_texts(st, s, args, 2, err) || read_one(st, s, out, &found, err))
        return err->code;
    return found ? ERROR_OK
                 : error_set(err, ERROR_NOT_FOUND, "policy %s has no rule for %s",
                             policy_id, cidr);
}

