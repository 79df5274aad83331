/*
 * store: an edit in place (store_update), one piece of code for every kind. Which
 * fields may change is the kind descriptor's (KIND_FIELD_EDIT); the columns they
 * go to are the kind's KSTMT_UPDATE, made from the descriptor, whose named
 * parameters are the fields' names, so nothing here is written per kind (the
 * natural key's conflict message is store_row_conflict's).
 */
#include "store_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

error_code store_update_check_fields(model_kind kind, unsigned fields, error_info *err)
{
    const kind_desc *d = kind_get(kind);
    if (fields == 0)
        return error_set(err, ERROR_INVALID, "nothing to change");
    if (fields >> d->field_count)
        return error_set(err, ERROR_INVALID, "field set 0x%x: a %s has %zu fields", fields,
                         d->noun, d->field_count);
    unsigned fixed = fields & ~kind_field_set(kind, KIND_FIELD_EDIT);
    if (!fixed)
        return ERROR_OK;
    char names[128];
    return error_set(err, ERROR_INVALID, "%s: cannot be changed after creation",
                     kind_field_names(kind, fixed, names, sizeof names));
}

/* Exchange field `f` between two objects of its kind: a move that leaves each
 * object owning what it then holds (an ACL's heap goes with its array). */
static void swap_field(model_object *a, model_object *b, const kind_field *f)
{
    size_t size = f->type == KIND_FIELD_TEXT  ? f->size
                  : f->type == KIND_FIELD_ACL ? sizeof(model_acl)
                                              : sizeof(model_action);
    unsigned char *x = kind_field_at_mut(a, f), *y = kind_field_at_mut(b, f);
    for (size_t i = 0; i < size; i++) {
        unsigned char t = x[i];
        x[i] = y[i];
        y[i] = t;
    }
}

/* Bind `text` to the parameter ":<name>" (without a copy: it must outlive the
 * statement's run). A statement without it is this file's bug, not the data's. */
static error_code bind_named(store *st, sqlite3_stmt *s, const char *name, const char *text,
                             error_info *err)
{
    char param[64];
    snprintf(param, sizeof param, ":%s", name);
    int index = sqlite3_bind_parameter_index(s, param);
    if (index == 0)
        return error_set(err, ERROR_IO, "database: the update has no parameter %s", param);
    int rc = sqlite3_bind_text(s, index, text, -1, SQLITE_STATIC);
    return rc == SQLITE_OK ? ERROR_OK : store_db_error(st, rc, err);
}

/* Bind the row's id and every editable column; *heap collects the one column
 * built on the heap (an ACL), freed by the caller after the run. */
static error_code bind_row(store *st, sqlite3_stmt *s, const model_object *row, char **heap,
                           error_info *err)
{
    const kind_desc *d = kind_get(row->kind);
    if (bind_named(st, s, "id", model_object_id(row), err))
        return err->code;
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (!(f->flags & KIND_FIELD_EDIT))
            continue;
        const char *text = store_field_text(row, f, heap, err);
        if (!text || bind_named(st, s, f->name, text, err))
            return err->code;
    }
    return ERROR_OK;
}

error_code store_update_write(store *st, const model_object *row, error_info *err)
{
    sqlite3_stmt *s = store_kind_stmt(st, row->kind, KSTMT_UPDATE, err);
    if (!s)
        return err->code;
    char *heap = NULL;
    error_code rc = bind_row(st, s, row, &heap, err);
    if (rc == ERROR_OK)
        rc = store_exec(st, s, err);
    else
        store_reset(s);
    free(heap);
    /* The one unique key an edit can break: a rule's (policy, cidr) among live rows. */
    return rc == ERROR_CONFLICT ? store_row_conflict(st, row, model_object_id(row), err) : rc;
}

error_code store_update_in_op(store *st, model_object *given, unsigned fields,
                              model_object *row, error_info *err)
{
    const kind_desc *d = kind_get(given->kind);
    if (store_get(st, given->kind, model_object_id(given), row, err))
        return err->code;
    for (size_t i = 0; i < d->field_count; i++) {
        if (fields & (1u << i))
            swap_field(row, given, &d->fields[i]);
    }
    if (kind_validate_row(row, err))
        return err->code;
    return store_update_write(st, row, err);
}

error_code store_update_run(store *st, model_object *obj, unsigned fields, bool multi_write,
                            store_update_fn fn, void *ctx, error_info *err)
{
    if ((unsigned)obj->kind >= MODEL_KIND_COUNT)
        return error_set(err, ERROR_INVALID, "object of unknown kind %d", (int)obj->kind);
    if (store_update_check_fields(obj->kind, fields, err))
        return err->code;
    /* The merge works on copies, so a refused edit leaves `obj` as it was given. */
    model_object given, row;
    model_object_init(&row, obj->kind);
    if (model_object_copy(&given, obj, err))
        return err->code;
    store_op op;
    error_code rc = store_op_begin(st, multi_write, &op, err);
    if (rc == ERROR_OK)
        rc = store_op_end(st, op, fn(st, &given, fields, &row, ctx, err), err);
    model_object_clear(&given);
    if (rc != ERROR_OK) {
        model_object_clear(&row);
        return rc;
    }
    model_object_clear(obj);
    memcpy(obj, &row, sizeof row); /* moved: `row`'s heap is `obj`'s now */
    return ERROR_OK;
}

static error_code update_fn(store *st, model_object *given, unsigned fields, model_object *row,
                            void *ctx, error_info *err)
{
    (void)ctx;
    return store_update_in_op(st, given, fields, row, err);
}

error_code store_update(store *st, model_object *obj, unsigned fields, error_info *err)
{
    return store_update_run(st, obj, fields, false, update_fn, NULL, ERROR_OR_SCRATCH(err));
}
