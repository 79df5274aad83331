#include "codec_internal.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/kind.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

size_t codec_skip_space(const char *json, size_t len, size_t pos)
{
    while (pos < len && (json[pos] == ' ' || json[pos] == '\t' || json[pos] == '\n' ||
                         json[pos] == '\r'))
        pos++;
    return pos;
}

const char *codec_type_name(const json_t *value)
{
    if (!value)
        return "nothing";
    switch (json_typeof(value)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "an unknown value";
}

const char *codec_jansson_text(json_error_t *jerr)
{
    enum json_error_code code = json_error_code(jerr);
    /* jansson's own wording names its option flag, which means nothing to a user. */
    if (code == json_error_null_character || code == json_error_null_byte_in_key)
        return "NUL character in a string";
    char *near = strstr(jerr->text, " near ");
    if (near)
        *near = '\0';
    return jerr->text;
}

error_code codec_jansson_code(const json_error_t *jerr)
{
    return json_error_code(jerr) == json_error_out_of_memory ? ERROR_NOMEM : ERROR_FORMAT;
}

error_code codec_load(const char *json, size_t len, json_t **out, error_info *err)
{
    *out = NULL;
    if (!json || codec_skip_space(json, len, 0) == len)
        return error_set(err, ERROR_FORMAT, "empty document");
    json_error_t jerr;
    json_t *root = json_loadb(json, len, CODEC_LOAD_FLAGS, &jerr);
    if (!root)
        return error_set(err, codec_jansson_code(&jerr),
                         "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                         codec_jansson_text(&jerr));
    *out = root;
    return ERROR_OK;
}

static error_code wrong_type(error_info *err, const char *field, const char *want,
                             const json_t *got)
{
    return error_set(err, ERROR_FORMAT, "%s: expected %s, got %s", field, want,
                     codec_type_name(got));
}

error_code codec_need_object(const json_t *value, error_info *err)
{
    if (json_is_object(value))
        return ERROR_OK;
    return error_set(err, ERROR_FORMAT, "expected an object, got %s",
                     codec_type_name(value));
}

/* A string value that fits `max` bytes and holds no NUL (which C text cannot keep). */
static error_code check_string(const json_t *value, const char *field, size_t max,
                               error_info *err)
{
    if (!json_is_string(value))
        return wrong_type(err, field, "a string", value);
    size_t len = json_string_length(value);
    if (memchr(json_string_value(value), '\0', len))
        return error_set(err, ERROR_FORMAT, "%s: contains a NUL character", field);
    if (len > max)
        return error_set(err, ERROR_FORMAT, "%s: %zu bytes, longer than %zu", field, len,
                         max);
    return ERROR_OK;
}

/* Absent and null read as "": the service omits or nulls what it has no value for. */
error_code codec_get_text(const json_t *obj, const char *key, const char *field,
                          char *dst, size_t size, bool required, error_info *err)
{
    const json_t *value = json_object_get(obj, key);
    dst[0] = '\0';
    if (!value || json_is_null(value)) {
        if (!required)
            return ERROR_OK;
        return value ? wrong_type(err, field, "a string", value)
                     : error_set(err, ERROR_FORMAT, "%s: missing", field);
    }
    error_code rc = check_string(value, field, size - 1, err);
    if (rc != ERROR_OK)
        return rc;
    memcpy(dst, json_string_value(value), json_string_length(value) + 1);
    return ERROR_OK;
}

/* One text field, `offset` bytes into `out`, from the key of the same name. */
static error_code get_field(const json_t *obj, const char *key, void *out, size_t offset,
                            size_t size, bool required, error_info *err)
{
    return codec_get_text(obj, key, key, (char *)out + offset, size, required, err);
}

/* The kind's flat text members into its struct `out`, in the API's order: the head
 * (id, uri, created_at, description, metadata), the kind's own text fields (a
 * nested one is read by its kind), the error. */
static error_code get_fields(const json_t *obj, model_kind kind, void *out, error_info *err)
{
    const kind_desc *d = kind_get(kind);
    const kind_head *h = &d->head;
    const struct {
        const char *key;
        size_t offset, max;
    } head[] = {{"id", h->id, MODEL_ID_MAX},
                {"uri", h->uri, MODEL_URI_MAX},
                {"created_at", h->created_at, MODEL_TIME_MAX},
                {"description", h->description, MODEL_DESCRIPTION_MAX},
                {"metadata", h->metadata, MODEL_METADATA_MAX}};
    error_code rc = ERROR_OK;
    for (size_t i = 0; rc == ERROR_OK && i < COUNT(head); i++)
        rc = get_field(obj, head[i].key, out, head[i].offset, head[i].max + 1, false, err);
    for (size_t i = 0; rc == ERROR_OK && i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (f->type != KIND_FIELD_TEXT || f->nested || kind_field_in_head(kind, f))
            continue;
        rc = get_field(obj, f->name, out, f->offset, f->size, f->flags & KIND_FIELD_REQUIRED,
                       err);
    }
    if (rc == ERROR_OK)
        rc = get_field(obj, "error", out, h->error, MODEL_ERROR_MAX + 1, false, err);
    return rc;
}

/* A string that must be one of a few words: NULL when absent or null. */
static error_code get_word(const json_t *obj, const char *key, const char **out,
                           error_info *err)
{
    const json_t *value = json_object_get(obj, key);
    *out = NULL;
    if (!value || json_is_null(value))
        return ERROR_OK;
    if (!json_is_string(value))
        return wrong_type(err, key, "a string", value);
    /* An embedded NUL would let "allow\u0000x" pass a strcmp as "allow". */
    if (strlen(json_string_value(value)) == json_string_length(value))
        *out = json_string_value(value);
    else
        *out = "";
    return ERROR_OK;
}

error_code codec_get_action(const json_t *obj, model_action *out, error_info *err)
{
    const char *word;
    error_code rc = get_word(obj, "action", &word, err);
    if (rc != ERROR_OK)
        return rc;
    if (!word)
        return error_set(err, ERROR_FORMAT, "action: missing");
    if (!model_action_parse(word, out))
        return error_set(err, ERROR_FORMAT, "action: expected allow or deny");
    return ERROR_OK;
}

/* Synced when the remote id is known, new otherwise; a "state" field overrides. */
static error_code get_state(const json_t *obj, bool has_id, model_state *out,
                            error_info *err)
{
    const char *word;
    error_code rc = get_word(obj, "state", &word, err);
    if (rc != ERROR_OK)
        return rc;
    *out = has_id ? MODEL_STATE_SYNCED : MODEL_STATE_NEW;
    if (word && !model_state_parse(word, out))
        return error_set(err, ERROR_FORMAT, "state: unknown state");
    return ERROR_OK;
}

/* The API's "ip_policy": {"id","uri"} or the create request's "ip_policy_id". */
static error_code get_policy(const json_t *obj, model_rule *out, error_info *err)
{
    const json_t *ref = json_object_get(obj, "ip_policy");
    const json_t *flat = json_object_get(obj, "ip_policy_id");
    bool has_flat = flat && !json_is_null(flat);
    out->policy_uri[0] = '\0';
    if (!ref || json_is_null(ref)) {
        if (!has_flat)
            return error_set(err, ERROR_FORMAT, "ip_policy: missing");
        return codec_get_text(obj, "ip_policy_id", "ip_policy_id", out->policy_id,
                        sizeof out->policy_id, true, err);
    }
    if (!json_is_object(ref))
        return wrong_type(err, "ip_policy", "an object", ref);
    error_code rc = codec_get_text(ref, "id", "ip_policy.id", out->policy_id,
                             sizeof out->policy_id, true, err);
    if (rc == ERROR_OK)
        rc = codec_get_text(ref, "uri", "ip_policy.uri", out->policy_uri,
                      sizeof out->policy_uri, false, err);
    if (rc != ERROR_OK || !has_flat)
        return rc;
    char other[MODEL_ID_MAX + 1];
    rc = codec_get_text(obj, "ip_policy_id", "ip_policy_id", other, sizeof other, true, err);
    if (rc == ERROR_OK && strcmp(other, out->policy_id) != 0)
        return error_set(err, ERROR_FORMAT, "ip_policy_id: differs from ip_policy.id");
    return rc;
}

error_code codec_rule_from_json(const json_t *value, model_rule *out, error_info *err)
{
    error_code rc = codec_need_object(value, err);
    if (rc == ERROR_OK)
        rc = get_fields(value, MODEL_KIND_RULE, out, err);
    if (rc == ERROR_OK)
        rc = get_policy(value, out, err);
    if (rc == ERROR_OK)
        rc = codec_get_action(value, &out->action, err);
    if (rc == ERROR_OK)
        rc = get_state(value, out->id[0] != '\0', &out->state, err);
    return rc;
}

error_code codec_rule_decode(const char *json, size_t len, model_rule *out,
                             error_info *err)
{
    json_t *root;
    error_code rc = codec_load(json, len, &root, err);
    if (rc == ERROR_OK)
        rc = codec_rule_from_json(root, out, err);
    json_decref(root);
    if (rc != ERROR_OK)
        memset(out, 0, sizeof *out);
    return rc;
}

error_code codec_get_acl(const json_t *obj, model_acl *acl, error_info *err)
{
    const json_t *list = json_object_get(obj, "acl");
    if (!list || json_is_null(list))
        return ERROR_OK;
    if (!json_is_array(list))
        return wrong_type(err, "acl", "an array", list);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *item = json_array_get(list, i);
        char field[32];
        snprintf(field, sizeof field, "acl[%zu]", i);
        error_code rc = check_string(item, field, MODEL_ACL_RULE_MAX, err);
        if (rc == ERROR_OK)
            rc = model_acl_add(acl, json_string_value(item), err);
        if (rc != ERROR_OK)
            return rc;
    }
    return ERROR_OK;
}

void codec_wipe_freed_memory(void)
{
    json_set_alloc_funcs(malloc, model_free_wiped);
}

/* jansson frees without clearing: zero the token's string in the tree first. Its
 * buffer is jansson's own heap copy, writable despite the const API. */
void codec_wipe_token(json_t *root)
{
    json_t *token = json_is_object(root) ? json_object_get(root, "token") : NULL;
    if (json_is_string(token))
        model_wipe((char *)json_string_value(token), json_string_length(token));
}

static error_code get_token(const json_t *obj, model_cred *out, error_info *err)
{
    const json_t *token = json_object_get(obj, "token");
    if (!token || json_is_null(token))
        return model_cred_set_token(out, NULL, err);
    /* No length limit: the model keeps tokens on the heap. */
    error_code rc = check_string(token, "token", SIZE_MAX, err);
    if (rc != ERROR_OK)
        return rc;
    return model_cred_set_token(out, json_string_value(token), err);
}

static error_code cred_fill(const json_t *value, model_cred *out, error_info *err)
{
    error_code rc = codec_need_object(value, err);
    if (rc == ERROR_OK)
        rc = get_fields(value, MODEL_KIND_CRED, out, err);
    if (rc == ERROR_OK)
        rc = get_token(value, out, err);
    if (rc == ERROR_OK)
        rc = codec_get_acl(value, &out->acl, err);
    if (rc == ERROR_OK)
        rc = get_state(value, out->id[0] != '\0', &out->state, err);
    return rc;
}

/* `out` ends cleared on failure, so it never holds half an ACL or a stray token. */
error_code codec_cred_from_json(const json_t *value, model_cred *out, error_info *err)
{
    model_cred_clear(out);
    error_code rc = cred_fill(value, out, err);
    if (rc != ERROR_OK)
        model_cred_clear(out);
    return rc;
}

error_code codec_cred_decode(const char *json, size_t len, model_cred *out,
                             error_info *err)
{
    json_t *root;
    error_code rc = codec_load(json, len, &root, err);
    if (rc == ERROR_OK)
        rc = codec_cred_from_json(root, out, err);
    else
        model_cred_clear(out);
    codec_wipe_token(root);
    json_decref(root);
    return rc;
}

static error_code get_status(const json_t *obj, int *out, error_info *err)
{
    const json_t *value = json_object_get(obj, "status_code");
    *out = 0;
    if (!value || json_is_null(value))
        return ERROR_OK;
    if (!json_is_integer(value))
        return wrong_type(err, "status_code", "an integer", value);
    json_int_t n = json_integer_value(value);
    if (n < 0 || n > INT_MAX)
        return error_set(err, ERROR_FORMAT, "status_code: out of range");
    *out = (int)n;
    return ERROR_OK;
}

/* A long message is cut rather than refused: part of the reason beats none. */
static error_code get_msg(const json_t *obj, char *dst, size_t size, error_info *err)
{
    const json_t *value = json_object_get(obj, "msg");
    dst[0] = '\0';
    if (!value || json_is_null(value))
        return ERROR_OK;
    error_code rc = check_string(value, "msg", SIZE_MAX, err);
    if (rc == ERROR_OK)
        model_copy_text(dst, size, json_string_value(value));
    return rc;
}

static error_code get_details(const json_t *obj, codec_api_error *out, error_info *err)
{
    const json_t *details = json_object_get(obj, "details");
    if (!details || json_is_null(details))
        return ERROR_OK;
    if (!json_is_object(details))
        return wrong_type(err, "details", "an object", details);
    return codec_get_text(details, "operation_id", "details.operation_id", out->operation_id,
                    sizeof out->operation_id, false, err);
}

static error_code api_error_fill(const json_t *root, codec_api_error *out,
                                 error_info *err)
{
    error_code rc = codec_need_object(root, err);
    if (rc == ERROR_OK)
        rc = get_status(root, &out->status_code, err);
    if (rc == ERROR_OK)
        rc = codec_get_text(root, "error_code", "error_code", out->error_code,
                      sizeof out->error_code, false, err);
    if (rc == ERROR_OK)
        rc = get_msg(root, out->msg, sizeof out->msg, err);
    if (rc == ERROR_OK)
        rc = get_details(root, out, err);
    return rc;
}

error_code codec_api_error_decode(const char *json, size_t len, codec_api_error *out,
                                  error_info *err)
{
    memset(out, 0, sizeof *out);
    json_t *root;
    error_code rc = codec_load(json, len, &root, err);
    if (rc == ERROR_OK)
        rc = api_error_fill(root, out, err);
    json_decref(root);
    if (rc != ERROR_OK)
        memset(out, 0, sizeof *out);
    return rc;
}
