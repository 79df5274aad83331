/*
 * store: a row as its columns' texts and back, by the descriptor: a field's
 * column text (an ACL one rule per line), a row read from a statement over its
 * columns, and store_get. The bottom of the row code: it calls only store.c and
 * store_sql.c.
 */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* The ACL column holds one rule per line. */
error_code store_cred_acl_split(const char *text, model_acl *acl, error_info *err)
{
    if (!text || !*text)
        return ERROR_OK;
    char *copy = strdup(text);
    if (!copy)
        return error_set(err, ERROR_NOMEM, "out of memory");
    error_code rc = ERROR_OK;
    for (char *line = copy, *next; rc == ERROR_OK && line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        rc = model_acl_add(acl, line, err);
    }
    free(copy);
    return rc;
}

error_code store_cred_acl_join(const model_acl *acl, char **out, error_info *err)
{
    size_t total = 1;
    for (size_t i = 0; i < acl->count; i++) {
        const char *rule = acl->rules[i];
        if (!rule || !*rule)
            return error_set(err, ERROR_INVALID, "acl rule %zu is empty", i + 1);
        if (strchr(rule, '\n'))
            return error_set(err, ERROR_INVALID, "acl rule %zu contains a line break",
                             i + 1);
        total += strlen(rule) + 1;
    }
    char *text = malloc(total);
    if (!text)
        return error_set(err, ERROR_NOMEM, "out of memory");
    char *p = text;
    for (size_t i = 0; i < acl->count; i++) {
        size_t len = strlen(acl->rules[i]);
        if (i)
            *p++ = '\n';
        memcpy(p, acl->rules[i], len);
        p += len;
    }
    *p = '\0';
    *out = text;
    return ERROR_OK;
}

/* The column text of field `f` of `row`; an ACL is joined into *heap (freed by the
 * caller), one rule per line, as store_insert writes it. NULL when that failed. */
const char *store_field_text(const model_object *row, const kind_field *f, char **heap,
                             error_info *err)
{
    const void *at = kind_field_at(row, f);
    switch (f->type) {
    case KIND_FIELD_ACL:
        return store_cred_acl_join(at, heap, err) == ERROR_OK ? *heap : NULL;
    case KIND_FIELD_ACTION:
        return model_action_name(*(const model_action *)at);
    case KIND_FIELD_TEXT:
        break;
    }
    return at;
}

error_code store_field_set_text(model_object *obj, const kind_field *f, const char *text,
                                error_info *err)
{
    void *at = kind_field_at_mut(obj, f);
    switch (f->type) {
    case KIND_FIELD_ACL: {
        model_acl fresh = {0};
        if (store_cred_acl_split(text, &fresh, err)) {
            model_acl_clear(&fresh);
            return err->code;
        }
        model_acl_clear(at);
        *(model_acl *)at = fresh;
        return ERROR_OK;
    }
    case KIND_FIELD_ACTION:
        if (!model_action_parse(text, at))
            return error_set(err, ERROR_INVALID, "%s: not allow or deny", f->name);
        return ERROR_OK;
    case KIND_FIELD_TEXT:
        break;
    }
    model_copy_text(at, f->size, text);
    return ERROR_OK;
}

error_code store_row_read(sqlite3_stmt *s, model_kind kind, model_object *out,
                          error_info *err)
{
    /* Whole-object zeroing: callers may compare or copy rows byte for byte. */
    model_object_init(out, kind);
    int width = store_row_width(kind);
    for (int i = 0; i < width - 1; i++) {
        const char *text = (const char *)sqlite3_column_text(s, i);
        if (store_field_set_text(out, store_row_field(kind, i), text ? text : "", err)) {
            model_object_clear(out);
            return err->code;
        }
    }
    /* The schema's CHECK constraint keeps the state parseable. */
    model_state *state = &out->head.state;
    if (!model_state_parse((const char *)sqlite3_column_text(s, width - 1), state))
        *state = MODEL_STATE_NEW;
    return ERROR_OK;
}

error_code store_get(store *st, model_kind kind, const char *id, model_object *out,
                     error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    model_object_init(out, kind); /* it holds no heap (store.h): nothing to free */
    sqlite3_stmt *s = store_kind_stmt(st, kind, KSTMT_GET, err);
    bool found;
    if (!s || store_bind_texts(st, s, &id, 1, err) || store_step(st, s, &found, err))
        return err->code;
    error_code rc = found ? store_row_read(s, kind, out, err)
                          : error_set(err, ERROR_NOT_FOUND, "no %s %s", kind_get(kind)->noun,
                                      id);
    store_reset(s);
    return rc;
}
