/* store: transitional per-kind wrappers over the generic calls (removed once every
 * caller uses store_page, store_insert, …). */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

error_code store_rule_page(store *st, const store_query *q, const char *cursor,
                           store_dir dir, size_t limit, model_rule *rows,
                           size_t *count, error_info *err)
{
    model_object *objs = calloc(limit ? limit : 1, sizeof *objs);
    if (!objs)
        return error_set(err, ERROR_NOMEM, "out of memory");
    error_code rc = store_page(st, MODEL_KIND_RULE, q, cursor, dir, limit, objs, count, err);
    for (size_t i = 0; rc == ERROR_OK && i < *count; i++)
        rows[i] = objs[i].rule;
    free(objs);
    return rc;
}

error_code store_cred_page(store *st, const store_query *q, const char *cursor,
                           store_dir dir, size_t limit, model_cred *rows,
                           size_t *count, error_info *err)
{
    model_object *objs = calloc(limit ? limit : 1, sizeof *objs);
    if (!objs)
        return error_set(err, ERROR_NOMEM, "out of memory");
    error_code rc = store_page(st, MODEL_KIND_CRED, q, cursor, dir, limit, objs, count, err);
    for (size_t i = 0; rc == ERROR_OK && i < *count; i++)
        rows[i] = objs[i].cred; /* moves the heap */
    free(objs);
    return rc;
}

typedef struct walk_ctx {
    store_rule_visit rule_fn;
    store_cred_visit cred_fn;
    void *ctx;
} walk_ctx;

static error_code visit(void *ctxp, model_object *rows, size_t n, error_info *err)
{
    walk_ctx *w = ctxp;
    if (w->rule_fn) {
        model_rule *r = malloc(n * sizeof *r);
        if (!r)
            return error_set(err, ERROR_NOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
            r[i] = rows[i].rule;
        error_code rc = w->rule_fn(w->ctx, r, n, err);
        free(r);
        return rc;
    }
    model_cred *c = malloc(n * sizeof *c);
    if (!c)
        return error_set(err, ERROR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        c[i] = rows[i].cred;
    error_code rc = w->cred_fn(w->ctx, c, n, err);
    for (size_t i = 0; i < n; i++)
        rows[i].cred = c[i];
    free(c);
    return rc;
}

error_code store_rule_walk(store *st, const store_query *q, size_t page_rows,
                           store_rule_visit fn, void *ctx, error_info *err)
{
    walk_ctx w = {fn, NULL, ctx};
    return store_walk(st, MODEL_KIND_RULE, q, page_rows, visit, &w, err);
}

error_code store_cred_walk(store *st, const store_query *q, size_t page_rows,
                           store_cred_visit fn, void *ctx, error_info *err)
{
    walk_ctx w = {NULL, fn, ctx};
    return store_walk(st, MODEL_KIND_CRED, q, page_rows, visit, &w, err);
}

error_code store_rule_count(store *st, const store_query *q, size_t *out, error_info *err)
{ return store_count(st, MODEL_KIND_RULE, q, out, err); }
error_code store_cred_count(store *st, const store_query *q, size_t *out, error_info *err)
{ return store_count(st, MODEL_KIND_CRED, q, out, err); }
error_code store_rule_state_counts(store *st, size_t counts[MODEL_STATE_COUNT], error_info *err)
{ return store_state_counts(st, MODEL_KIND_RULE, counts, err); }
error_code store_cred_state_counts(store *st, size_t counts[MODEL_STATE_COUNT], error_info *err)
{ return store_state_counts(st, MODEL_KIND_CRED, counts, err); }

error_code store_rule_insert(store *st, model_rule *rule, error_info *err)
{
    model_object o;
    o.kind = MODEL_KIND_RULE;
    o.rule = *rule;
    error_code rc = store_insert(st, &o, err);
    if (rc == ERROR_OK)
        *rule = o.rule;
    return rc;
}

error_code store_cred_insert(store *st, model_cred *cred, error_info *err)
{
    model_object o;
    o.kind = MODEL_KIND_CRED;
    o.cred = *cred; /* borrowed: the caller keeps ownership */
    error_code rc = store_insert(st, &o, err);
    if (rc == ERROR_OK) {
        memcpy(cred->id, o.cred.id, sizeof cred->id);
        memcpy(cred->created_at, o.cred.created_at, sizeof cred->created_at);
    }
    return rc;
}

error_code store_rule_get(store *st, const char *id, model_rule *out, error_info *err)
{
    model_object o;
    model_object_init(&o, MODEL_KIND_RULE);
    error_code rc = store_get(st, MODEL_KIND_RULE, id, &o, err);
    if (rc == ERROR_OK)
        *out = o.rule;
    return rc;
}

error_code store_cred_get(store *st, const char *id, model_cred *out, error_info *err)
{
    model_cred_clear(out);
    model_object o;
    model_object_init(&o, MODEL_KIND_CRED);
    error_code rc = store_get(st, MODEL_KIND_CRED, id, &o, err);
    if (rc == ERROR_OK)
        *out = o.cred;
    return rc;
}

error_code store_rule_delete(store *st, const char *id, store_delete_result *result,
                             error_info *err)
{ return store_delete(st, MODEL_KIND_RULE, id, result, err); }
error_code store_cred_delete(store *st, const char *id, store_delete_result *result,
                             error_info *err)
{ return store_delete(st, MODEL_KIND_CRED, id, result, err); }
error_code store_rule_set_state(store *st, const char *id, model_state state,
                                const char *error_text, error_info *err)
{ return store_set_state(st, MODEL_KIND_RULE, id, state, error_text, err); }
error_code store_cred_set_state(store *st, const char *id, model_state state,
                                const char *error_text, error_info *err)
{ return store_set_state(st, MODEL_KIND_CRED, id, state, error_text, err); }
error_code store_rule_remove(store *st, const char *id, error_info *err)
{ return store_remove(st, MODEL_KIND_RULE, id, err); }
error_code store_cred_remove(store *st, const char *id, error_info *err)
{ return store_remove(st, MODEL_KIND_CRED, id, err); }

error_code store_rule_confirm_create(store *st, const char *local_id,
                                     const model_rule *remote, error_info *err)
{
    model_object o;
    o.kind = MODEL_KIND_RULE;
    o.rule = *remote;
    return store_confirm_create(st, local_id, &o, err);
}

error_code store_cred_confirm_create(store *st, const char *local_id,
                                     const model_cred *remote, error_info *err)
{
    model_object o;
    o.kind = MODEL_KIND_CRED;
    o.cred = *remote; /* borrowed */
    return store_confirm_create(st, local_id, &o, err);
}

error_code store_rule_claim(store *st, const char *id, error_info *err)
{ return store_claim(st, MODEL_KIND_RULE, id, err); }
error_code store_cred_claim(store *st, const char *id, error_info *err)
{ return store_claim(st, MODEL_KIND_CRED, id, err); }
error_code store_rule_retry(store *st, const char *id, error_info *err)
{ return store_retry(st, MODEL_KIND_RULE, id, err); }
error_code store_cred_retry(store *st, const char *id, error_info *err)
{ return store_retry(st, MODEL_KIND_CRED, id, err); }
error_code store_rule_discard(store *st, const char *id, store_delete_result *result,
                              error_info *err)
{ return store_discard(st, MODEL_KIND_RULE, id, result, err); }
error_code store_cred_discard(store *st, const char *id, store_delete_result *result,
                              error_info *err)
{ return store_discard(st, MODEL_KIND_CRED, id, result, err); }

error_code store_pull_stage_rules(store *st, const model_rule *rules, size_t n,
                                  error_info *err)
{
    model_object *objs = calloc(n ? n : 1, sizeof *objs);
    if (!objs)
        return error_set(err, ERROR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        objs[i].kind = MODEL_KIND_RULE;
        objs[i].rule = rules[i];
    }
    error_code rc = store_pull_stage(st, MODEL_KIND_RULE, objs, NULL, n, NULL, NULL, NULL, err);
    free(objs);
    return rc;
}

error_code store_pull_stage_creds(store *st, const model_cred *creds,
                                  const char *const *markers, size_t n,
                                  error_info *err)
{
    model_object *objs = calloc(n ? n : 1, sizeof *objs);
    if (!objs)
        return error_set(err, ERROR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        objs[i].kind = MODEL_KIND_CRED;
        objs[i].cred = creds[i]; /* borrowed */
    }
    error_code rc = store_pull_stage(st, MODEL_KIND_CRED, objs, markers, n, NULL, NULL, NULL, err);
    free(objs);
    return rc;
}
