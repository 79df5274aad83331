/* store: IP policy rules. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct text_field {
    size_t offset;
    size_t size;
} text_field;

#define RULE_FIELD(f) {offsetof(model_rule, f), sizeof(((model_rule *)0)->f)}

/* Text columns in STORE_RULE_COLS order. */
static const text_field rule_text[RULE_COL_TEXT_COUNT] = {
    RULE_FIELD(id),        RULE_FIELD(uri),        RULE_FIELD(created_at),
    RULE_FIELD(description), RULE_FIELD(metadata), RULE_FIELD(cidr),
    RULE_FIELD(policy_id), RULE_FIELD(policy_uri), RULE_FIELD(error),
};

void store_rule_read(sqlite3_stmt *s, model_rule *out)
{
    /* Whole-struct zeroing: callers may compare or copy rows byte for byte. */
    memset(out, 0, sizeof *out);
    for (int i = 0; i < RULE_COL_TEXT_COUNT; i++)
        store_col_copy(s, i, (char *)out + rule_text[i].offset, rule_text[i].size);
    /* The schema's CHECK constraints keep both columns parseable. */
    if (!model_action_parse((const char *)sqlite3_column_text(s, RULE_COL_ACTION),
                            &out->action))
        out->action = MODEL_ACTION_ALLOW;
    if (!model_state_parse((const char *)sqlite3_column_text(s, RULE_COL_STATE),
                           &out->state))
        out->state = MODEL_STATE_NEW;
}

static bool is_live(model_state state)
{
    return state != MODEL_STATE_DELETING && state != MODEL_STATE_REMOTE_DELETED;
}

static error_code check_rule(const model_rule *rule, error_info *err)
{
    if ((unsigned)rule->action > MODEL_ACTION_DENY)
        return error_set(err, ERROR_INVALID, "invalid rule action %d", (int)rule->action);
    if ((unsigned)rule->state >= MODEL_STATE_COUNT)
        return error_set(err, ERROR_INVALID, "invalid sync state %d", (int)rule->state);
    if (!rule->cidr[0] || !rule->policy_id[0])
        return error_set(err, ERROR_INVALID, "a rule needs a cidr and a policy id");
    return ERROR_OK;
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

static error_code conflict(store *st, const model_rule *rule, const char *id,
                           error_info *err)
{
    char other[MODEL_ID_MAX + 1];
    bool found = false;
    if (is_live(rule->state) && live_rule_id(st, rule, other, &found, err))
        return err->code;
    if (found && strcmp(other, id) != 0)
        return error_set(err, ERROR_CONFLICT, "policy %s already has a rule for %s (%s)",
                         rule->policy_id, rule->cidr, other);
    return error_set(err, ERROR_CONFLICT, "rule %s already exists", id);
}

static error_code insert_in_op(store *st, const model_rule *rule, const char *id,
                               const char *created_at, const char *now, error_info *err)
{
    if (rule->id[0] && store_row_check_alias(st, STORE_KIND_RULE, id, err))
        return err->code;
    const char *args[] = {
        id, rule->uri, created_at, rule->description, rule->metadata, rule->cidr,
        rule->policy_id, rule->policy_uri, rule->error, model_action_name(rule->action),
        model_state_name(rule->state), now,
    };
    sqlite3_stmt *s = store_stmt(st, STMT_RULE_INSERT, err);
    if (!s || store_bind_texts(st, s, args, 12, err))
        return err->code;
    error_code rc = store_exec(st, s, err);
    return rc == ERROR_CONFLICT ? conflict(st, rule, id, err) : rc;
}

error_code store_rule_insert(store *st, model_rule *rule, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    if (check_rule(rule, err))
        return err->code;
    char id[MODEL_ID_MAX + 1] = ""; /* zero-filled: copied whole into the caller's row */
    if (!rule->id[0] && ids_generate(&st->idgen, "local", id, sizeof id, err))
        return err->code;
    char now[MODEL_TIME_MAX + 1] = "";
    ids_now_rfc3339(now, sizeof now);
    const char *use_id = rule->id[0] ? rule->id : id;
    const char *created = rule->created_at[0] ? rule->created_at : now;
    store_op op;
    if (store_op_begin(st, false, &op, err))
        return err->code;
    error_code rc = insert_in_op(st, rule, use_id, created, now, err);
    if (store_op_end(st, op, rc, err))
        return err->code;
    /* Written back only once stored, so a failed insert can simply be retried. */
    if (!rule->id[0])
        memcpy(rule->id, id, sizeof rule->id);
    if (!rule->created_at[0])
        memcpy(rule->created_at, now, sizeof rule->created_at);
    return ERROR_OK;
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

error_code store_rule_get(store *st, const char *id, model_rule *out, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    sqlite3_stmt *s = store_stmt(st, STMT_RULE_GET, err);
    bool found;
    if (!s || store_bind_texts(st, s, &id, 1, err) || read_one(st, s, out, &found, err))
        return err->code;
    return found ? ERROR_OK : error_set(err, ERROR_NOT_FOUND, "no rule %s", id);
}

error_code store_rule_find(store *st, const char *policy_id, const char *cidr,
                           model_rule *out, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    const char *args[] = {policy_id, cidr};
    sqlite3_stmt *s = store_stmt(st, STMT_RULE_FIND, err);
    bool found;
    if (!s || store_bind_texts(st, s, args, 2, err) || read_one(st, s, out, &found, err))
        return err->code;
    return found ? ERROR_OK
                 : error_set(err, ERROR_NOT_FOUND, "policy %s has no rule for %s",
                             policy_id, cidr);
}

static void reverse_rules(model_rule *rows, size_t n)
{
    model_rule tmp;
    for (size_t i = 0; i < n / 2; i++) {
        tmp = rows[i];
        rows[i] = rows[n - 1 - i];
        rows[n - 1 - i] = tmp;
    }
}

error_code store_rule_page(store *st, const store_query *q, const char *cursor,
                           store_dir dir, size_t limit, model_rule *rows,
                           size_t *count, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    *count = 0;
    sqlite3_stmt *s;
    if (store_page_stmt(st, STORE_KIND_RULE, q, cursor, dir, limit, &s, err))
        return err->code;
    size_t n = 0;
    bool row = true;
    while (n < limit && row) {
        if (store_step(st, s, &row, err))
            return err->code;
        if (row)
            store_rule_read(s, &rows[n++]);
    }
    store_reset(s);
    if (dir == STORE_BACKWARD)
        reverse_rules(rows, n);
    *count = n;
    return ERROR_OK;
}

error_code store_rule_count(store *st, const store_query *q, size_t *out, error_info *err)
{
    error_info scratch;
    return store_count_rows(st, STORE_KIND_RULE, q, out, err ? err : &scratch);
}

error_code store_rule_state_counts(store *st, size_t counts[MODEL_STATE_COUNT],
                                   error_info *err)
{
    error_info scratch;
    return store_row_state_counts(st, STORE_KIND_RULE, counts, err ? err : &scratch);
}

error_code store_rule_delete(store *st, const char *id, store_delete_result *result,
                             error_info *err)
{
    error_info scratch;
    return store_row_delete(st, STORE_KIND_RULE, id, result, err ? err : &scratch);
}

error_code store_rule_set_state(store *st, const char *id, model_state state,
                                const char *error_text, error_info *err)
{
    error_info scratch;
    return store_row_set_state(st, STORE_KIND_RULE, id, state, error_text,
                               err ? err : &scratch);
}

error_code store_rule_remove(store *st, const char *id, error_info *err)
{
    error_info scratch;
    return store_row_remove(st, STORE_KIND_RULE, id, err ? err : &scratch);
}

static error_code confirm_in_op(store *st, const char *local_id, const model_rule *remote,
                                error_info *err)
{
    if (store_row_check_confirm(st, STORE_KIND_RULE, local_id, remote->id, err))
        return err->code;
    char now[MODEL_TIME_MAX + 1] = "";
    ids_now_rfc3339(now, sizeof now);
    const char *args[] = {local_id, remote->id, remote->uri, remote->created_at,
                          remote->policy_uri, now};
    sqlite3_stmt *s = store_stmt(st, STMT_RULE_CONFIRM, err);
    if (!s || store_bind_texts(st, s, args, 6, err))
        return err->code;
    return store_row_confirm(st, STORE_KIND_RULE, s, local_id, remote->id, err);
}

error_code store_rule_confirm_create(store *st, const char *local_id,
                                     const model_rule *remote, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, confirm_in_op(st, local_id, remote, err), err);
}

error_code store_rule_walk(store *st, const store_query *q, size_t page_rows,
                           store_rule_visit fn, void *ctx, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    model_rule *rows = malloc(page_rows * sizeof *rows);
    if (!rows)
        return error_set(err, ERROR_NOMEM, "out of memory");
    char cursor[MODEL_ID_MAX + 1] = "";
    size_t n = page_rows;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && n == page_rows) {
        rc = store_rule_page(st, q, cursor, STORE_FORWARD, page_rows, rows, &n, err);
        if (rc != ERROR_OK || n == 0)
            break;
        memcpy(cursor, rows[n - 1].id, sizeof cursor);
        rc = fn(ctx, rows, n, err);
    }
    free(rows);
    return rc;
}
