/* store: IP policy rules. */
#include "store_internal.h"

#include "rampart/validate.h"

#include <stdlib.h>
#include <string.h>

bool store_state_is_live(model_state state)
{
    return state != MODEL_STATE_DELETING && state != MODEL_STATE_REMOTE_DELETED &&
           state != MODEL_STATE_CONFLICT;
}

/* After a unique violation: the live rule holding the natural key, if any. */
static error_code live_rule_id(store *st, const char *policy_id, const char *cidr, char *out,
                               bool *found, error_info *err)
{
    const char *args[] = {policy_id, cidr};
    sqlite3_stmt *s = store_stmt(st, STMT_LIVE_ID_BY_KEY, err);
    if (!s || store_bind_texts(st, s, args, 2, err) || store_step(st, s, found, err))
        return err->code;
    if (*found)
        store_col_copy(s, 0, out, MODEL_ID_MAX + 1);
    store_reset(s);
    return ERROR_OK;
}

static error_code rule_conflict(store *st, const model_rule *rule, const char *id,
                                error_info *err)
{
    char other[MODEL_ID_MAX + 1];
    bool found = false;
    if (store_state_is_live(rule->state) && live_rule_id(st, rule->policy_id, rule->cidr, other, &found, err))
        return err->code;
    if (found && strcmp(other, id) != 0)
        return error_set(err, ERROR_CONFLICT, "policy %s already has a rule for %s (%s)",
                         rule->policy_id, rule->cidr, other);
    return error_set(err, ERROR_CONFLICT, "rule %s already exists", id);
}

error_code store_row_conflict(store *st, const model_object *row, const char *id,
                              error_info *err)
{
    if (kind_get(row->kind)->traits & KIND_KEYED) /* the natural key */
        return rule_conflict(st, &row->rule, id, err);
    return error_set(err, ERROR_CONFLICT, "%s %s already exists", kind_get(row->kind)->noun,
                     id);
}

error_code store_rule_find(store *st, const char *policy_id, const char *cidr,
                           model_rule *out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    /* The key is stored canonical; a caller's spelling of it finds the same row. */
    char canon[MODEL_CIDR_MAX + 1];
    if (validate_cidr(cidr, NULL, canon, sizeof canon, NULL) == ERROR_OK)
        cidr = canon;
    char id[MODEL_ID_MAX + 1];
    bool found = false;
    if (live_rule_id(st, policy_id, cidr, id, &found, err))
        return err->code;
    if (!found)
        return error_set(err, ERROR_NOT_FOUND, "policy %s has no rule for %s", policy_id,
                         cidr);
    model_object row;
    if (store_get(st, MODEL_KIND_RULE, id, &row, err))
        return err->code;
    *out = row.rule;
    return ERROR_OK;
}
