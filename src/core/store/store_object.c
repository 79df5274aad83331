/*
 * store: the calls that are the same for every kind (kind.h). Their SQL is made
 * from the descriptor (store_kind_sql); the little that is one kind's own (a
 * rule's natural key, a credential's ACL column and token) stays in store_rules.c
 * and store_creds.c.
 */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/ids.h"
#include "rampart/validate.h"

static void clear_rows(model_object *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        model_object_clear(&rows[i]);
}

/* Rows are moved, not copied: a credential's heap goes with its row. */
static void reverse_rows(model_object *rows, size_t n)
{
    for (size_t i = 0; i < n / 2; i++) {
        model_object tmp;
        memcpy(&tmp, &rows[i], sizeof tmp);
        memcpy(&rows[i], &rows[n - 1 - i], sizeof tmp);
        memcpy(&rows[n - 1 - i], &tmp, sizeof tmp);
    }
}

error_code store_page(store *st, model_kind kind, const store_query *q, const char *cursor,
                      store_dir dir, size_t limit, model_object *rows, size_t *count,
                      error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *count = 0;
    sqlite3_stmt *s;
    if (store_page_stmt(st, kind, q, cursor, dir, limit, &s, err))
        return err->code;
    size_t n = 0;
    bool row = true;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && n < limit && row) {
        rc = store_step(st, s, &row, err);
        if (rc == ERROR_OK && row && (rc = store_row_read(s, kind, &rows[n], err)) == ERROR_OK)
            n++;
    }
    store_reset(s);
    if (rc != ERROR_OK) {
        clear_rows(rows, n);
        return rc;
    }
    if (dir == STORE_BACKWARD)
        reverse_rows(rows, n);
    *count = n;
    return ERROR_OK;
}

error_code store_walk(store *st, model_kind kind, const store_query *q, size_t page_rows,
                      store_visit fn, void *ctx, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    model_object *rows = calloc(page_rows, sizeof *rows);
    if (!rows)
        return error_set(err, ERROR_NOMEM, "out of memory");
    char cursor[MODEL_ID_MAX + 1] = "";
    size_t n = page_rows;
    error_code rc = ERROR_OK;
    while (rc == ERROR_OK && n == page_rows) {
        rc = store_page(st, kind, q, cursor, STORE_FORWARD, page_rows, rows, &n, err);
        if (rc != ERROR_OK || n == 0)
            break;
        memcpy(cursor, model_object_id(&rows[n - 1]), sizeof cursor);
        rc = fn(ctx, rows, n, err);
        clear_rows(rows, n);
    }
    free(rows);
    return rc;
}

error_code store_count(store *st, model_kind kind, const store_query *q, size_t *out,
                       error_info *err)
{
    return store_count_rows(st, kind, q, out, ERROR_OR_SCRATCH(err));
}

error_code store_state_counts(store *st, model_kind kind, size_t counts[MODEL_STATE_COUNT],
                              error_info *err)
{
    return store_row_state_counts(st, kind, counts, ERROR_OR_SCRATCH(err));
}

static error_code insert_in_op(store *st, const model_object *obj, const char *id,
                               const char *created_at, error_info *err)
{
    /* A given id must not be one a local id already stands for. */
    if (model_object_id(obj)[0] && store_row_check_alias(st, obj->kind, id, err))
        return err->code;
    return store_row_insert_in_op(st, obj, id, created_at, err);
}

error_code store_insert_valid(store *st, model_object *obj, error_info *err)
{
    /* A person's create (a queued one: the remote's rows are kept as they are). */
    if (obj->kind == MODEL_KIND_RULE && obj->rule.state == MODEL_STATE_NEW &&
        validate_cidr_given(obj->rule.cidr, err) != ERROR_OK)
        return error_prefix(err, "cidr");
    char *given_id = obj->head.id, *given_at = obj->head.created_at;
    char id[MODEL_ID_MAX + 1] = ""; /* zero-filled: copied whole into the caller's row */
    if (!given_id[0] && ids_generate(&st->idgen, "local", id, sizeof id, err))
        return err->code;
    char now[MODEL_TIME_MAX + 1] = "";
    store_now(st, now);
    const char *use_id = given_id[0] ? given_id : id;
    const char *created = given_at[0] ? given_at : now;
    /* A credential with its token writes two rows: a failure undoes both. */
    const char *token = store_row_token(obj);
    bool two_writes = token && token[0];
    store_op op;
    if (store_op_begin(st, two_writes, &op, err) ||
        store_op_end(st, op, insert_in_op(st, obj, use_id, created, err), err))
        return err->code;
    /* Written back only once stored, so a failed insert can simply be retried. */
    if (!given_id[0])
        memcpy(given_id, id, sizeof id);
    if (!given_at[0])
        memcpy(given_at, now, sizeof now);
    return ERROR_OK;
}

error_code store_insert(store *st, model_object *obj, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if ((unsigned)obj->kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)obj->kind);
    /* The gate may put a CIDR in canonical form: undone if the insert then fails,
     * so a refused row is left as the caller gave it. */
    char given_cidr[MODEL_CIDR_MAX + 1];
    if (obj->kind == MODEL_KIND_RULE)
        memcpy(given_cidr, obj->rule.cidr, sizeof given_cidr);
    if (kind_validate_row(obj, err))
        return err->code;
    error_code rc = store_insert_valid(st, obj, err);
    if (rc != ERROR_OK && obj->kind == MODEL_KIND_RULE)
        memcpy(obj->rule.cidr, given_cidr, sizeof given_cidr);
    return rc;
}

error_code store_set_state(store *st, model_kind kind, const char *id, model_state state,
                           const char *error_text, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    /* The error column holds whole UTF-8 characters within MODEL_ERROR_MAX bytes,
     * whatever a server wrote into its message. */
    char text[MODEL_ERROR_MAX + 1] = "";
    if (error_text)
        model_copy_text(text, sizeof text, error_text);
    if (validate_text(text, MODEL_ERROR_MAX, "error text", err))
        return err->code;
    return store_row_set_state(st, kind, id, state, text, err);
}

error_code store_remove(store *st, model_kind kind, const char *id, error_info *err)
{
    return store_row_remove(st, kind, id, ERROR_OR_SCRATCH(err));
}

/* What a create reply must carry before the store takes it. */
static error_code check_remote_head(const model_object *remote, const char *uri,
                                    const char *created_at, const char *policy_uri,
                                    error_info *err)
{
    const kind_desc *d = kind_get(remote->kind);
    if (validate_id(model_object_id(remote), d->id_prefix, "id", err) ||
        validate_uri(uri, "uri", err) || validate_uri(policy_uri, "ip_policy.uri", err) ||
        (created_at[0] && validate_timestamp(created_at, "created_at", err)))
        return error_prefix(err, "the remote's %s", d->noun);
    return ERROR_OK;
}

/* The parameters of a kind's confirm statement: the row's head, then one per
 * field fixed at creation (":" and its name), which the statement fills in where the
 * row left it empty. */
enum { CONFIRM_HEAD = 6, CONFIRM_PARAMS = CONFIRM_HEAD + 4, CONFIRM_NAME_MAX = 32 };

typedef struct confirm_params {
    char own[CONFIRM_PARAMS - CONFIRM_HEAD][CONFIRM_NAME_MAX];
    const char *names[CONFIRM_PARAMS];
    const char *texts[CONFIRM_PARAMS];
    int count;
} confirm_params;

/* The reply's value of each text field fixed at creation: the remote fills in
 * what the create left out (a credential's owner). A value its field's check
 * refuses is "" (the row keeps its own): a create is not lost over a field the
 * user never set; the listing's gate has the last word on it. */
static void confirm_fields(const model_object *remote, confirm_params *p)
{
    const kind_desc *d = kind_get(remote->kind);
    for (size_t i = 0; i < d->field_count && p->count < CONFIRM_PARAMS; i++) {
        const kind_field *f = &d->fields[i];
        if (f->type != KIND_FIELD_TEXT || (f->flags & (KIND_FIELD_EDIT | KIND_FIELD_REMOTE)))
            continue;
        char *name = p->own[p->count - CONFIRM_HEAD];
        snprintf(name, sizeof p->own[0], ":%s", f->name);
        const char *value = kind_field_at(remote, f);
        error_info ignored;
        p->names[p->count] = name;
        p->texts[p->count++] = f->check && f->check(value, NULL, 0, &ignored) ? "" : value;
    }
}

static error_code confirm_in_op(store *st, const char *local_id, const model_object *remote,
                                error_info *err)
{
    const char *id = model_object_id(remote);
    const char *uri = kind_value(remote, "uri", NULL, 0);
    const char *created_at = kind_value(remote, "created_at", NULL, 0);
    const char *policy_uri = kind_value(remote, "policy_uri", NULL, 0); /* rules only */
    if (check_remote_head(remote, uri, created_at, policy_uri, err) ||
        store_row_check_confirm(st, remote->kind, local_id, id, err))
        return err->code;
    char now[MODEL_TIME_MAX + 1] = "";
    store_now(st, now);
    confirm_params p = {
        .names = {":local_id", ":id", ":uri", ":created_at", ":policy_uri", ":now"},
        .texts = {local_id, id, uri, created_at, policy_uri, now},
        .count = CONFIRM_HEAD,
    };
    confirm_fields(remote, &p);
    sqlite3_stmt *s = store_kind_stmt(st, remote->kind, KSTMT_CONFIRM, err);
    if (!s || store_bind_named(st, s, p.names, p.texts, p.count, err) ||
        store_row_confirm(st, remote->kind, s, local_id, id, err) ||
        store_edit_after_confirm(st, remote, id, err))
        return err->code;
    /* The token arrives with the reply and is written in the same transaction; one
     * stored before the confirm followed the rename (ON UPDATE CASCADE). */
    return store_cred_put_token(st, id, store_row_token(remote), err);
}

error_code store_confirm_create(store *st, const char *local_id, const model_object *remote,
                                error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, confirm_in_op(st, local_id, remote, err), err);
}

/* The confirm without the token, then the row orphaned with the reason: a remote
 * object this machine holds no token of is what an orphan is. */
static error_code confirm_orphan_in_op(store *st, const char *local_id,
                                       const model_object *remote, const char *reason,
                                       error_info *err)
{
    model_object head = *remote; /* shallow: only the token pointer differs */
    head.cred.token = NULL;
    if (confirm_in_op(st, local_id, &head, err))
        return err->code;
    return store_row_set_state_in_op(st, MODEL_KIND_CRED, model_object_id(remote),
                                     MODEL_STATE_ORPHANED, reason, err);
}

error_code store_confirm_create_without_token(store *st, const char *local_id,
                                              const model_object *remote, const char *reason,
                                              error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (!kind_get(remote->kind)->has_token)
        return error_set(err, ERROR_INVALID, "a %s has no token",
                         kind_get(remote->kind)->noun);
    /* The error column holds whole UTF-8 characters within MODEL_ERROR_MAX bytes. */
    char text[MODEL_ERROR_MAX + 1] = "";
    model_copy_text(text, sizeof text, reason ? reason : "");
    if (validate_text(text, MODEL_ERROR_MAX, "error text", err))
        return err->code;
    store_op op;
    if (store_op_begin(st, true, &op, err))
        return err->code;
    return store_op_end(st, op, confirm_orphan_in_op(st, local_id, remote, text, err), err);
}
