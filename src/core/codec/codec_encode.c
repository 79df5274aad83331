/*
 * Encoders. Keys follow the API's order; fields a local row does not have yet
 * (id, uri, created_at before the remote assigned them) are omitted rather than
 * written as "", just as the service omits empty description and metadata.
 */
#include "codec_internal.h"

#include "rampart/buf.h"
#include "rampart/kind.h"
#include "rampart/utf8.h"

#include <stdlib.h>
#include <string.h>

/* A copy with every invalid byte replaced by U+FFFD. */
static char *utf8_repair(const char *text)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t len = strlen(text);
    char *out = malloc(len * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        int n = utf8_decode((const char *)s + i, len - i, &cp);
        if (n <= 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, s + i, (size_t)n);
        o += (size_t)n;
        i += (size_t)n;
    }
    out[o] = '\0';
    return out;
}

/*
 * jansson refuses invalid UTF-8, and the encoders may return NULL only when out of
 * memory, so text that slipped past validation is repaired instead of dropped.
 */
json_t *codec_json_text(const char *text)
{
    json_t *value = json_string(text);
    if (value)
        return value;
    char *repaired = utf8_repair(text);
    if (!repaired)
        return NULL;
    value = json_string(repaired);
    /* The text may be a token. */
    model_wipe(repaired, strlen(repaired));
    free(repaired);
    return value;
}

/* Takes ownership of `value`; false (and nothing leaked) when either is missing. */
static bool put(json_t *obj, const char *key, json_t *value)
{
    return json_object_set_new(obj, key, value) == 0;
}

static bool put_text(json_t *obj, const char *key, const char *text)
{
    return put(obj, key, codec_json_text(text));
}

static bool put_nonempty(json_t *obj, const char *key, const char *text)
{
    return text[0] == '\0' || put_text(obj, key, text);
}

static bool put_state(json_t *obj, model_state state, const char *error)
{
    return put_text(obj, "state", model_state_name(state)) &&
           put_nonempty(obj, "error", error);
}

/* json_dumps allocates with malloc (rampart never installs other allocators), so
 * the caller's free() matches. */
static char *dump(json_t *root, bool ok, unsigned flags)
{
    size_t format = (flags & CODEC_PRETTY) ? JSON_INDENT(2) : JSON_COMPACT;
    char *out = ok ? json_dumps(root, format | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return out;
}

static json_t *policy_ref(const model_rule *rule)
{
    json_t *ref = json_object();
    if (!ref)
        return NULL;
    if (put_text(ref, "id", rule->policy_id) && put_nonempty(ref, "uri", rule->policy_uri))
        return ref;
    json_decref(ref);
    return NULL;
}

json_t *codec_json_acl(const model_acl *acl)
{
    json_t *list = json_array();
    if (!list)
        return NULL;
    for (size_t i = 0; i < acl->count; i++) {
        if (json_array_append_new(list, codec_json_text(acl->rules[i])) != 0) {
            json_decref(list);
            return NULL;
        }
    }
    return list;
}

/* id, uri, created_at, description, metadata: the head every object shares. */
static bool put_head(json_t *obj, const char *id, const char *uri, const char *created_at,
                     const char *description, const char *metadata)
{
    return put_nonempty(obj, "id", id) && put_nonempty(obj, "uri", uri) &&
           put_nonempty(obj, "created_at", created_at) &&
           put_nonempty(obj, "description", description) &&
           put_nonempty(obj, "metadata", metadata);
}

/* One of the kind's own fields (not the head's) of the struct at `base`: a required
 * text as it is, another only when not empty; an action by its name; an ACL as
 * an array (in a create body only when not empty). */
static bool put_own(json_t *obj, const kind_field *f, const void *base, bool create)
{
    const void *at = (const char *)base + f->offset;
    switch (f->type) {
    case KIND_FIELD_ACTION:
        return put_text(obj, f->name, model_action_name(*(const model_action *)at));
    case KIND_FIELD_ACL:
        return (create && ((const model_acl *)at)->count == 0) ||
               put(obj, f->name, codec_json_acl(at));
    case KIND_FIELD_TEXT:
    default:
        return (f->flags & KIND_FIELD_REQUIRED) ? put_text(obj, f->name, at)
                                                : put_nonempty(obj, f->name, at);
    }
}

/* The reference a nested field writes in an API object ("ip_policy": {"id",
 * "uri"}) from the kind's struct at `base`; NULL when out of memory. */
typedef json_t *(*nested_ref_fn)(const void *base);

/* The kind's own fields (not the head's) in descriptor order; in an API object
 * (create false) a nested one as `nested` writes it. */
static bool put_own_fields(json_t *obj, model_kind kind, const void *base, bool create,
                           nested_ref_fn nested)
{
    const kind_desc *d = kind_get(kind);
    bool ok = true;
    for (size_t i = 0; ok && i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (kind_field_in_head(kind, f))
            continue;
        if (f->nested && !create)
            ok = !nested || put(obj, f->nested, nested(base));
        else
            ok = put_own(obj, f, base, create);
    }
    return ok;
}

static json_t *rule_policy_ref(const void *base)
{
    return policy_ref(base);
}

char *codec_rule_encode(const model_rule *rule, unsigned flags)
{
    json_t *obj = json_object();
    bool ok = obj && put_head(obj, rule->id, rule->uri, rule->created_at,
                              rule->description, rule->metadata);
    ok = ok && put_own_fields(obj, MODEL_KIND_RULE, rule, false, rule_policy_ref);
    if (flags & CODEC_WITH_STATE)
        ok = ok && put_state(obj, rule->state, rule->error);
    return dump(obj, ok, flags);
}

char *codec_cred_encode(const model_cred *cred, unsigned flags)
{
    json_t *obj = json_object();
    bool ok = obj && put_head(obj, cred->id, cred->uri, cred->created_at,
                              cred->description, cred->metadata);
    ok = ok && put(obj, "token", cred->token ? codec_json_text(cred->token) : json_null());
    ok = ok && put_own_fields(obj, MODEL_KIND_CRED, cred, false, NULL);
    if (flags & CODEC_WITH_STATE)
        ok = ok && put_state(obj, cred->state, cred->error);
    return dump(obj, ok, flags);
}

/* Every text field of `fields` (count `n`) in `obj` set to a placeholder. */
static void fill_texts(model_object *obj, const kind_field *fields, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fields[i].type == KIND_FIELD_TEXT)
            model_copy_text(kind_field_at_mut(obj, &fields[i]), fields[i].size, "x");
    }
}

char *codec_object_keys(model_kind kind)
{
    const kind_desc *d = kind_get(kind);
    model_object full;
    model_object_init(&full, kind);
    fill_texts(&full, d->head_fields, d->head_field_count);
    fill_texts(&full, d->fields, d->field_count);
    char *json = codec_object_encode(&full, 0);
    model_object_clear(&full);
    json_t *root = json ? json_loads(json, 0, NULL) : NULL;
    free(json);
    buf_t b = {0};
    bool ok = root && buf_puts(&b, "{");
    const char *key, *sep = "";
    json_t *value;
    json_object_foreach(root, key, value) {
        ok = ok && buf_puts(&b, sep) && buf_puts(&b, "\"") && buf_puts(&b, key) &&
             buf_puts(&b, "\"");
        sep = ", ";
    }
    ok = ok && buf_puts(&b, "}");
    json_decref(root);
    if (!ok)
        buf_free(&b);
    return ok ? buf_take(&b) : NULL;
}

/* A create body: description, metadata, then the kind's own fields, flat. */
static char *create_body(model_kind kind, const void *base)
{
    const char *at = base;
    json_t *obj = json_object();
    bool ok = obj &&
              put_nonempty(obj, "description", at + offsetof(model_head, description)) &&
              put_nonempty(obj, "metadata", at + offsetof(model_head, metadata)) &&
              put_own_fields(obj, kind, base, true, NULL);
    return dump(obj, ok, 0);
}

char *codec_rule_create_body(const model_rule *rule)
{
    return create_body(MODEL_KIND_RULE, rule);
}

char *codec_cred_create_body(const model_cred *cred)
{
    return create_body(MODEL_KIND_CRED, cred);
}

char *codec_api_error_encode(const codec_api_error *e)
{
    json_t *obj = json_object();
    json_t *details = NULL;
    bool ok = obj && put_nonempty(obj, "error_code", e->error_code) &&
              put(obj, "status_code", json_integer(e->status_code)) &&
              put_text(obj, "msg", e->msg);
    if (ok) {
        details = json_object();
        ok = put(obj, "details", details);
    }
    ok = ok && put_text(details, "operation_id", e->operation_id);
    return dump(obj, ok, 0);
}

static char *rule_encode(const model_object *obj, unsigned flags)
{
    return codec_rule_encode(&obj->rule, flags);
}

static char *cred_encode(const model_object *obj, unsigned flags)
{
    return codec_cred_encode(&obj->cred, flags);
}

char *codec_object_encode(const model_object *obj, unsigned flags)
{
    static char *(*const encode[MODEL_KIND_COUNT])(const model_object *, unsigned) = {
        [MODEL_KIND_RULE] = rule_encode,
        [MODEL_KIND_CRED] = cred_encode,
    };
    return encode[(unsigned)obj->kind < MODEL_KIND_COUNT ? obj->kind : MODEL_KIND_RULE](obj,
                                                                                      flags);
}

char *codec_object_create_body(const model_object *obj)
{
    return create_body(obj->kind, &obj->rule);
}
