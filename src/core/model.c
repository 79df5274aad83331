#include "rampart/model.h"

#include "rampart/utf8.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static const char *const action_names[] = {
    [MODEL_ACTION_ALLOW] = "allow",
    [MODEL_ACTION_DENY] = "deny",
};

static const char *const state_names[MODEL_STATE_COUNT] = {
    [MODEL_STATE_NEW] = "new",
    [MODEL_STATE_CREATING] = "creating",
    [MODEL_STATE_SYNCED] = "synced",
    [MODEL_STATE_DELETING] = "deleting",
    [MODEL_STATE_FAILED] = "failed",
    [MODEL_STATE_UNKNOWN] = "unknown",
    [MODEL_STATE_ORPHANED] = "orphaned",
    [MODEL_STATE_REMOTE_DELETED] = "remote_deleted",
    [MODEL_STATE_EDITED] = "edited",
    [MODEL_STATE_CONFLICT] = "conflict",
};

const char *model_action_name(model_action action)
{
    return action == MODEL_ACTION_DENY ? action_names[MODEL_ACTION_DENY]
                                       : action_names[MODEL_ACTION_ALLOW];
}

bool model_action_parse(const char *text, model_action *out)
{
    for (size_t i = 0; i < sizeof action_names / sizeof action_names[0]; i++) {
        if (text && strcmp(text, action_names[i]) == 0) {
            *out = (model_action)i;
            return true;
        }
    }
    return false;
}

const char *model_state_name(model_state state)
{
    if ((unsigned)state >= MODEL_STATE_COUNT)
        return "invalid";
    return state_names[state];
}

bool model_state_parse(const char *text, model_state *out)
{
    for (size_t i = 0; i < MODEL_STATE_COUNT; i++) {
        if (text && strcmp(text, state_names[i]) == 0) {
            *out = (model_state)i;
            return true;
        }
    }
    return false;
}

bool model_copy_text(char *dst, size_t size, const char *src)
{
    if (size == 0)
        return false;
    size_t len = src ? strlen(src) : 0;
    if (len < size) {
        memcpy(dst, src ? src : "", len + 1);
        return true;
    }
    size_t cut = utf8_prefix(src, size - 1); /* the prefix stays whole characters */
    memcpy(dst, src, cut);
    dst[cut] = '\0';
    return false;
}

error_code model_acl_add(model_acl *acl, const char *rule, error_info *err)
{
    char *copy = strdup(rule ? rule : "");
    if (!copy)
        return error_set(err, ERROR_NOMEM, "out of memory");
    char **grown = realloc(acl->rules, (acl->count + 1) * sizeof *grown);
    if (!grown) {
        free(copy);
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    grown[acl->count++] = copy;
    acl->rules = grown;
    return ERROR_OK;
}

/* explicit_bzero: a memset the compiler may not drop, at memset's speed. The
 * byte-at-a-time volatile loop it replaces cost a sync a few percent: libcurl's
 * and jansson's buffers are all wiped as they are freed (model_free_wiped). */
void model_wipe(void *buf, size_t len)
{
    if (len)
        explicit_bzero(buf, len);
}

bool model_key_chars_ok(const char *key, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c <= ' ' || c >= 0x7f)
            return false;
    }
    return true;
}

void model_free_wiped(void *p)
{
    if (!p)
        return;
    model_wipe(p, malloc_usable_size(p));
    free(p);
}

void *model_realloc_wiped(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    if (n == 0) {
        model_free_wiped(p);
        return NULL;
    }
    void *q = malloc(n);
    if (!q)
        return NULL;
    size_t old = malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    model_free_wiped(p);
    return q;
}

error_code model_cred_set_token(model_cred *cred, const char *token, error_info *err)
{
    char *copy = NULL;
    if (token) {
        copy = strdup(token);
        if (!copy)
            return error_set(err, ERROR_NOMEM, "out of memory");
    }
    model_free_wiped(cred->token);
    cred->token = copy;
    return ERROR_OK;
}

error_code model_cred_copy(model_cred *dst, const model_cred *src, error_info *err)
{
    *dst = *src;
    dst->acl.count = 0;
    dst->acl.rules = NULL;
    dst->token = NULL;
    for (size_t i = 0; i < src->acl.count; i++) {
        if (model_acl_add(&dst->acl, src->acl.rules[i], err) != ERROR_OK) {
            model_cred_clear(dst);
            return ERROR_NOMEM;
        }
    }
    if (model_cred_set_token(dst, src->token, err) != ERROR_OK) {
        model_cred_clear(dst);
        return ERROR_NOMEM;
    }
    return ERROR_OK;
}

void model_acl_clear(model_acl *acl)
{
    for (size_t i = 0; i < acl->count; i++)
        free(acl->rules[i]);
    free(acl->rules);
    acl->rules = NULL;
    acl->count = 0;
}

void model_cred_clear(model_cred *cred)
{
    if (!cred)
        return;
    model_acl_clear(&cred->acl);
    model_free_wiped(cred->token);
    memset(cred, 0, sizeof *cred);
}

bool model_kind_owns_heap(model_kind kind)
{
    /* The model's own fact (kind.h builds on the model, not the other way). */
    static const bool owns[MODEL_KIND_COUNT] = {[MODEL_KIND_CRED] = true};
    return (unsigned)kind < MODEL_KIND_COUNT && owns[kind];
}

void model_object_init(model_object *obj, model_kind kind)
{
    memset(obj, 0, sizeof *obj);
    obj->kind = kind;
}

void model_object_clear(model_object *obj)
{
    if (!obj)
        return;
    model_kind kind = obj->kind;
    if (model_kind_owns_heap(kind))
        model_cred_clear(&obj->cred);
    model_object_init(obj, kind);
}

error_code model_object_copy(model_object *dst, const model_object *src, error_info *err)
{
    if (!model_kind_owns_heap(src->kind)) {
        memcpy(dst, src, sizeof *dst);
        return ERROR_OK;
    }
    model_object_init(dst, MODEL_KIND_CRED);
    return model_cred_copy(&dst->cred, &src->cred, err);
}

/* The fields every kind has: its head. */
const char *model_object_id(const model_object *obj)
{
    return obj->head.id;
}

char *model_object_id_buf(model_object *obj)
{
    return obj->head.id;
}

model_state model_object_state(const model_object *obj)
{
    return obj->head.state;
}

const char *model_object_error(const model_object *obj)
{
    return obj->head.error;
}
