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

/* Member `key` of obj into *out: NULL when absent or null; a value of another
 * type than `type` is refused, `want` naming the type in the message. */
static error_code get_member(const json_t *obj, const char *key, json_type type,
                             const char *want, const json_t **out, error_info *err)
{
    const json_t *value = json_object_get(obj, key);
    *out = NULL;
    if (!value || json_is_null(value))
        return ERROR_OK;
    if (json_typeof(value) != type)
        return wrong_type(err, key, want, value);
    *out = value;
    return ERROR_OK;
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
    static const struct {
        const char *key;
        size_t offset, max;
    } head[] = {{"id", offsetof(model_head, id), MODEL_ID_MAX},
                {"uri", offsetof(model_head, uri), MODEL_URI_MAX},
                {"created_at", offsetof(model_head, created_at), MODEL_TIME_MAX},
                {"description", offsetof(model_head, description), MODEL_DESCRIPTION_MAX},
                {"metadata", offsetof(model_head, metadata), MODEL_METADATA_MAX}};
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
        rc = get_field(obj, "error", out, offsetof(model_head, error), MODEL_ERROR_MAX + 1,
                       false, err);
    return rc;
}

/* A string that must be one of a few words: NULL when absent or null. */
static error_code get_word(const json_t *obj, const char *key, const char **out,
                           error_info *err)
{
    const json_t *value;
    *out = NULL;
    error_code rc = get_member(obj, key, JSON_STRING, "a string", &value, err);
    if (rc != ERROR_OK || !value)
        return rc;
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

/* What a kind reads beyond the common part, into its struct `out`. */
typedef error_code (*kind_part_fn)(const json_t *obj, void *out, error_info *err);

/* An object of `kind` into its struct `out`: the flat text members, the kind's
 * own part, then the state (which depends on whether the id is known). */
static error_code object_fill(const json_t *value, model_kind kind, kind_part_fn part,
                              void *out, error_info *err)
{
    char *at = out;
    error_code rc = codec_need_object(value, err);
    if (rc == ERROR_OK)
        rc = get_fields(value, kind, out, err);
    if (rc == ERROR_OK)
        rc = part(value, out, err);
    if (rc == ERROR_OK)
        rc = get_state(value, at[offsetof(model_head, id)] != '\0',
                       (model_state *)(at + offsetof(model_head, state)), err);
    return rc;
}

/* A rule's own part: its policy and its action. */
static error_code rule_part(const json_t *obj, void *out, error_info *err)
{
    model_rule *rule = out;
    error_code rc = get_policy(obj, rule, err);
    return rc == ERROR_OK ? codec_get_action(obj, &rule->action, err) : rc;
}

static error_code rule_fill(const json_t *value, void *out, error_info *err)
{
    return object_fill(value, MODEL_KIND_RULE, rule_part, out, err);
}

error_code codec_rule_from_json(const json_t *value, model_rule *out, error_info *err)
{
    return rule_fill(value, out, err);
}

/* Reads a loaded document's root into `out`. */
typedef error_code (*root_fn)(const json_t *root, void *out, error_info *err);

/* `json` loaded and read by `fill` into `out`, whose `size` bytes are zeroed
 * when that fails (for a struct that owns no heap). */
static error_code decode_flat(const char *json, size_t len, root_fn fill, void *out,
                              size_t size, error_info *err)
{
    json_t *root;
    error_code rc = codec_load(json, len, &root, err);
    if (rc == ERROR_OK)
        rc = fill(root, out, err);
    json_decref(root);
    if (rc != ERROR_OK)
        memset(out, 0, size);
    return rc;
}

error_code codec_rule_decode(const char *json, size_t len, model_rule *out,
                             error_info *err)
{
    return decode_flat(json, len, rule_fill, out, sizeof *out, err);
}

error_code codec_get_acl(const json_t *obj, model_acl *acl, error_info *err)
{
    const json_t *list;
    error_code rc = get_member(obj, "acl", JSON_ARRAY, "an array", &list, err);
    for (size_t i = 0; rc == ERROR_OK && i < json_array_size(list); i++) {
        const json_t *item = json_array_get(list, i);
        char field[32];
        snprintf(field, sizeof field, "acl[%zu]", i);
        rc = check_string(item, field, MODEL_ACL_RULE_MAX, err);
        if (rc == ERROR_OK)
            rc = model_acl_add(acl, json_string_value(item), err);
    }
    return rc;
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

/* A credential's own part: its token and its ACL. */
static error_code cred_part(const json_t *obj, void *out, error_info *err)
{
    model_cred *cred = out;
    error_code rc = get_token(obj, cred, err);
    return rc == ERROR_OK ? codec_get_acl(obj, &cred->acl, err) : rc;
}

/* `out` ends cleared on failure, so it never holds half an ACL or a stray token. */
error_code codec_cred_from_json(const json_t *value, model_cred *out, error_info *err)
{
    model_cred_clear(out);
    error_code rc = object_fill(value, MODEL_KIND_CRED, cred_part, out, err);
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

static error_code read_status(const json_t *value, codec_api_error *out, error_info *err)
{
    json_int_t n = json_integer_value(value);
    if (n < 0 || n > INT_MAX)
        return error_set(err, ERROR_FORMAT, "status_code: out of range");
    out->status_code = (int)n;
    return ERROR_OK;
}

static error_code read_error_code(const json_t *value, codec_api_error *out, error_info *err)
{
    error_code rc = check_string(value, "error_code", sizeof out->error_code - 1, err);
    if (rc == ERROR_OK)
        memcpy(out->error_code, json_string_value(value), json_string_length(value) + 1);
    return rc;
}

/* A long message is cut rather than refused: part of the reason beats none. */
static error_code read_msg(const json_t *value, codec_api_error *out, error_info *err)
{
    error_code rc = check_string(value, "msg", SIZE_MAX, err);
    if (rc == ERROR_OK)
        model_copy_text(out->msg, sizeof out->msg, json_string_value(value));
    return rc;
}

static error_code read_details(const json_t *value, codec_api_error *out, error_info *err)
{
    return codec_get_text(value, "operation_id", "details.operation_id", out->operation_id,
                          sizeof out->operation_id, false, err);
}

/* The members of an error reply, each optional (absent and null read as
 * nothing), in the order they are checked. */
static const struct {
    const char *key;
    json_type type;
    const char *want;
    error_code (*read)(const json_t *value, codec_api_error *out, error_info *err);
} api_error_members[] = {
    {"status_code", JSON_INTEGER, "an integer", read_status},
    {"error_code", JSON_STRING, "a string", read_error_code},
    {"msg", JSON_STRING, "a string", read_msg},
    {"details", JSON_OBJECT, "an object", read_details},
};

static error_code api_error_fill(const json_t *root, void *out, error_info *err)
{
    error_code rc = codec_need_object(root, err);
    for (size_t i = 0; rc == ERROR_OK && i < COUNT(api_error_members); i++) {
        const json_t *value;
        rc = get_member(root, api_error_members[i].key, api_error_members[i].type,
                        api_error_members[i].want, &value, err);
        if (rc == ERROR_OK && value)
            rc = api_error_members[i].read(value, out, err);
    }
    return rc;
}

error_code codec_api_error_decode(const char *json, size_t len, codec_api_error *out,
                                  error_info *err)
{
    memset(out, 0, sizeof *out);
    return decode_flat(json, len, api_error_fill, out, sizeof *out, err);
}

static error_code rule_decode(const char *json, size_t len, model_object *out,
                              error_info *err)
{
    return codec_rule_decode(json, len, &out->rule, err);
}

static error_code cred_decode(const char *json, size_t len, model_object *out,
                              error_info *err)
{
    return codec_cred_decode(json, len, &out->cred, err);
}

error_code codec_object_decode(model_kind kind, const char *json, size_t len,
                               model_object *out, error_info *err)
{
    typedef error_code (*decode_fn)(const char *, size_t, model_object *, error_info *);
    static const decode_fn decode[MODEL_KIND_COUNT] = {
        [MODEL_KIND_RULE] = rule_decode,
        [MODEL_KIND_CRED] = cred_decode,
    };
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        kind = MODEL_KIND_RULE;
    model_object_init(out, kind);
    return decode[kind](json, len, out, err);
}
