/*
 * store_apply: the rules of one policy, lean and all at once, for the commands
 * that compare a policy with something else (`apply` with a list, `export` with
 * the host's rules). One indexed range (rules_policy_id), six columns: no model
 * rows of 7 KB each, so 100,000 rules read in a fraction of a second.
 */
#include "store_internal.h"

#include <stdio.h>

static const char policy_rules_sql[] =
    "SELECT id, cidr, description, metadata, action, state FROM rules"
    " WHERE policy_id = ?1 ORDER BY policy_id, id";

static const char *col_text(sqlite3_stmt *s, int col)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    return t ? (const char *)t : "";
}

/* One row to the callback; a row the store could not have written (an unknown
 * action or state) is a database failure, not a rule to guess about. */
static error_code visit_row(sqlite3_stmt *s, store_policy_rule_fn fn, void *ctx,
                            error_info *err)
{
    store_policy_rule r = {
        .id = col_text(s, 0),
        .cidr = col_text(s, 1),
        .description = col_text(s, 2),
        .metadata = col_text(s, 3),
    };
    if (!model_action_parse(col_text(s, 4), &r.action) ||
        !model_state_parse(col_text(s, 5), &r.state))
        return error_set(err, ERROR_IO, "rule %s: unreadable action or state in the cache",
                         r.id);
    return fn(ctx, &r, err);
}

/* Each row of s to fn while rc holds; s is finalized. */
static error_code visit_rows(store *st, sqlite3_stmt *s, error_code rc, store_policy_rule_fn fn,
                             void *ctx, error_info *err)
{
    while (rc == ERROR_OK) {
        bool row = false;
        rc = store_step(st, s, &row, err);
        if (rc != ERROR_OK || !row)
            break;
        rc = visit_row(s, fn, ctx, err);
    }
    sqlite3_finalize(s);
    return rc;
}

error_code store_policy_rules(store *st, const char *policy_id, store_policy_rule_fn fn,
                              void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    sqlite3_stmt *s = NULL;
    if (store_prepare(st, policy_rules_sql, &s, err) != ERROR_OK)
        return err->code;
    error_code rc = store_bind_texts(st, s, &policy_id, 1, err);
    return visit_rows(st, s, rc, fn, ctx, err);
}

/* The 129 keys of an address's prefixes, then the policy. */
enum { CONTAINING_KEYS = 129, CONTAINING_FIRST = 2 };

static void containing_sql(char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "SELECT id, cidr, description, metadata, action,"
                                  " state FROM rules WHERE cidr_key IN (");
    for (int i = 0; i < CONTAINING_KEYS && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s?%d", i ? ", " : "",
                                CONTAINING_FIRST + i);
    if (len < size)
        snprintf(buf + len, size - len, ") AND +policy_id = ?1");
}

error_code store_policy_rules_containing(store *st, const char *policy_id, const char *ip,
                                         store_policy_rule_fn fn, void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    char sql[2048];
    containing_sql(sql, sizeof sql);
    sqlite3_stmt *s = NULL;
    if (store_prepare(st, sql, &s, err) != ERROR_OK)
        return err->code;
    error_code rc = store_bind_texts(st, s, &policy_id, 1, err);
    int bound = rc == ERROR_OK ? store_bind_addr_keys(s, CONTAINING_FIRST, ip) : SQLITE_OK;
    if (bound != SQLITE_OK)
        rc = store_db_error(st, bound, err);
    return visit_rows(st, s, rc, fn, ctx, err);
}
