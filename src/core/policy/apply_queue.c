/*
 * apply_queue: a plan's ops written into the cache as queued changes, in one
 * transaction, each through the store's own calls (so its gate and messages):
 * store_delete, store_discard, store_edit, store_retry, store_insert. See
 * rampart/apply.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rampart/apply.h"
#include "rampart/kind.h"

enum { PROGRESS_EVERY = 250 };

/* Ops are queued in passes, so a delete frees its key before a create takes it. */
static const apply_op_kind passes[] = {APPLY_DELETE, APPLY_DROP,  APPLY_EDIT,
                                       APPLY_ADOPT,  APPLY_RETRY, APPLY_CREATE};

typedef struct queue_run {
    store *st;
    const apply_request *req;
    const apply_plan *plan;
    apply_progress_fn progress;
    void *ctx;
    size_t done, total;
} queue_run;

/* A field of an edit: its name and new value (NULL: not part of it). */
typedef struct edit_value {
    const char *field, *value;
} edit_value;

enum { EDIT_FIELDS_MAX = 2 };

/* One edit of rule `id` (one PATCH): a reused rule's cidr and description, or an
 * adopt's metadata. */
static error_code edit_fields(store *st, const char *id, const edit_value *v, size_t n,
                              error_info *err)
{
    model_object obj;
    model_object_init(&obj, MODEL_KIND_RULE);
    snprintf(obj.rule.id, sizeof obj.rule.id, "%s", id);
    unsigned fields = 0;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].value)
            continue;
        const kind_field *f = kind_field_by_name(MODEL_KIND_RULE, v[i].field);
        model_copy_text(kind_field_at_mut(&obj, f), f->size, v[i].value);
        fields |= kind_field_bit(MODEL_KIND_RULE, f);
    }
    return store_edit(st, &obj, fields, NULL, err);
}

static error_code create(const queue_run *q, size_t entry, error_info *err)
{
    model_object obj;
    model_object_init(&obj, MODEL_KIND_RULE);
    model_rule *r = &obj.rule;
    cidrset_format(&q->req->list->items[entry].pfx, r->cidr);
    snprintf(r->policy_id, sizeof r->policy_id, "%s", q->req->policy_id);
    r->action = q->req->action;
    model_copy_text(r->description, sizeof r->description,
                    apply_entry_description(q->req, entry));
    apply_metadata(q->req->name, r->metadata);
    r->state = MODEL_STATE_NEW;
    return store_insert(q->st, &obj, err);
}

static error_code one_op(const queue_run *q, const apply_op *op, error_info *err)
{
    const apply_rule *r = op->rule == SIZE_MAX ? NULL : &q->plan->rules[op->rule];
    char cidr[MODEL_CIDR_MAX + 1] = "";
    char meta[APPLY_META_MAX];
    if (op->entry != SIZE_MAX)
        cidrset_format(&q->req->list->items[op->entry].pfx, cidr);
    switch (op->kind) {
    case APPLY_DELETE:
        return store_delete(q->st, MODEL_KIND_RULE, r->id, NULL, err);
    case APPLY_DROP:
        return store_discard(q->st, MODEL_KIND_RULE, r->id, NULL, err);
    case APPLY_EDIT: {
        const edit_value v[EDIT_FIELDS_MAX] = {
            {"cidr", cidr},
            {"description", apply_edit_description(q->req, q->plan, op)}};
        return edit_fields(q->st, r->id, v, EDIT_FIELDS_MAX, err);
    }
    case APPLY_ADOPT:
        apply_metadata(q->req->name, meta);
        return edit_fields(q->st, r->id, &(edit_value){"metadata", meta}, 1, err);
    case APPLY_RETRY:
        return store_retry(q->st, MODEL_KIND_RULE, r->id, err);
    case APPLY_CREATE:
        return create(q, op->entry, err);
    default:
        return ERROR_OK; /* conflicts and blocked rules are the user's */
    }
}

static error_code run_pass(queue_run *q, apply_op_kind kind, error_info *err)
{
    for (size_t i = 0; i < q->plan->nops; i++) {
        const apply_op *op = &q->plan->ops[i];
        if (op->kind != kind)
            continue;
        error_code rc = one_op(q, op, err);
        if (rc != ERROR_OK) {
            const char *cidr = op->rule != SIZE_MAX ? q->plan->rules[op->rule].cidr : "";
            char text[MODEL_CIDR_MAX + 1];
            if (op->entry != SIZE_MAX) {
                cidrset_format(&q->req->list->items[op->entry].pfx, text);
                cidr = text;
            }
            return error_prefix(err, "%s (%s)", cidr, apply_op_name(kind));
        }
        if (q->progress && ++q->done % PROGRESS_EVERY == 0)
            q->progress(q->ctx, q->done, q->total);
    }
    return ERROR_OK;
}

error_code apply_plan_queue(store *st, const apply_request *req, const apply_plan *plan,
                            apply_progress_fn progress, void *ctx, error_info *err)
{
    queue_run q = {st, req, plan, progress, ctx, 0, 0};
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++)
        q.total += plan->count[passes[i]];
    if (q.total == 0)
        return ERROR_OK;
    error_code rc = store_begin(st, err);
    for (size_t i = 0; rc == ERROR_OK && i < sizeof passes / sizeof passes[0]; i++)
        rc = run_pass(&q, passes[i], err);
    if (rc != ERROR_OK) {
        if (store_in_transaction(st))
            store_rollback(st);
        return rc;
    }
    rc = store_commit(st, err);
    if (rc == ERROR_OK && progress)
        progress(ctx, q.total, q.total);
    return rc;
}
