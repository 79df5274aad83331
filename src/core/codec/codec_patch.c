/*
 * Edit (PATCH) bodies, read (the reference server) and written (the sync): only
 * the fields the kind lets an edit change (KIND_FIELD_EDIT in kind.h). Read, each
 * is decoded as a create body's and everything else is named and refused;
 * written, exactly the fields asked for, empty values included.
 */
#include "codec_internal.h"

#include <string.h>

#include "rampart/kind.h"

/* Members an object of the kind carries that are not create fields, and that no
 * edit changes either: what the remote assigns, and the replies' own members (a
 * rule's ip_policy reference, a credential's token). */
static const char *const assigned_members[MODEL_KIND_COUNT][5] = {
    [MODEL_KIND_RULE] = {"id", "uri", "created_at", "ip_policy", NULL},
    [MODEL_KIND_CRED] = {"id", "uri", "created_at", "token", NULL},
};

static bool never_changes(model_kind kind, const char *key)
{
    for (const char *const *name = assigned_members[kind]; *name; name++) {
        if (strcmp(*name, key) == 0)
            return true;
    }
    const kind_field *f = kind_field_by_name(kind, key);
    return f && !(f->flags & KIND_FIELD_EDIT);
}

/* A member name as a message may show it: it is the client's text. */
static void shown_key(char *dst, size_t size, const char *key)
{
    model_copy_text(dst, size, key); /* cut at a character boundary */
    for (char *p = dst; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    }
}

/* What the kind lets an edit change, for messages: "cidr, description, metadata". */
static const char *editable_names(model_kind kind, char *buf, size_t size)
{
    return kind_field_names(kind, kind_field_set(kind, KIND_FIELD_EDIT), buf, size);
}

static error_code nothing_to_change(model_kind kind, error_info *err)
{
    char editable[128];
    return error_set(err, ERROR_INVALID, "nothing to change: a %s may change %s",
                     kind_get(kind)->noun, editable_names(kind, editable, sizeof editable));
}

/* "action: cannot be changed; a rule may change cidr, description, metadata" */
static error_code member_refused(model_kind kind, const char *why, const char *key,
                                 error_info *err)
{
    char name[41], editable[128];
    shown_key(name, sizeof name, key);
    return error_set(err, ERROR_INVALID, "%s: %s; a %s may change %s", name, why,
                     kind_get(kind)->noun, editable_names(kind, editable, sizeof editable));
}

/* Every member must be a field an edit may change. */
static error_code check_members(json_t *root, model_kind kind, error_info *err)
{
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        const kind_field *f = kind_field_by_name(kind, key);
        if ((f && (f->flags & KIND_FIELD_EDIT)) || strcmp(key, "id") == 0)
            continue;
        return member_refused(kind, never_changes(kind, key) ? "cannot be changed"
                                                             : "unknown field", key, err);
    }
    return ERROR_OK;
}

/* One editable field, present and not null, decoded as the create body's. */
static error_code get_edit_field(const json_t *root, const kind_field *f, model_object *out,
                                 error_info *err)
{
    void *at = kind_field_at_mut(out, f);
    switch (f->type) {
    case KIND_FIELD_ACL:
        return codec_get_acl(root, at, err);
    case KIND_FIELD_ACTION:
        return codec_get_action(root, at, err);
    case KIND_FIELD_TEXT:
        break;
    }
    return codec_get_text(root, f->name, f->name, at, f->size, false, err);
}

static error_code get_edit_fields(const json_t *root, model_object *out, unsigned *present,
                                  error_info *err)
{
    const kind_desc *d = kind_get(out->kind);
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        const json_t *value = json_object_get(root, f->name);
        if (!value || json_is_null(value) || !(f->flags & KIND_FIELD_EDIT))
            continue;
        if (get_edit_field(root, f, out, err))
            return err->code;
        *present |= kind_field_bit(out->kind, f);
    }
    return ERROR_OK;
}

error_code codec_patch_decode(model_kind kind, const char *json, size_t len,
                              model_object *out, unsigned *fields_present,
                              error_info *err)
{
    *fields_present = 0;
    if ((unsigned)kind >= MODEL_KIND_COUNT) {
        model_object_init(out, MODEL_KIND_RULE);
        return error_set(err, ERROR_INVALID, "an edit of unknown kind %d", (int)kind);
    }
    model_object_init(out, kind);
    /* No body at all is the commonest empty edit: say what to send. */
    if (!json || codec_skip_space(json, len, 0) == len)
        return nothing_to_change(kind, err);
    json_t *root;
    error_code rc = codec_load(json, len, &root, err);
    if (rc == ERROR_OK)
        rc = codec_need_object(root, err);
    if (rc == ERROR_OK)
        rc = check_members(root, kind, err);
    if (rc == ERROR_OK)
        rc = get_edit_fields(root, out, fields_present, err);
    /* Clients name the object in the body too (the official ones send the whole
     * update argument, id included): kept for the caller to compare with the path. */
    if (rc == ERROR_OK)
        rc = codec_get_text(root, "id", "id", model_object_id_buf(out), MODEL_ID_MAX + 1,
                            false, err);
    if (rc == ERROR_OK && *fields_present == 0)
        rc = nothing_to_change(kind, err);
    codec_wipe_token(root); /* a refused "token" member is still a secret */
    json_decref(root);
    if (rc != ERROR_OK) {
        model_object_clear(out);
        *fields_present = 0;
    }
    return rc;
}


/* ---- encoding an edit ---------------------------------------------------- */

/* One field's value as JSON: an empty text stays "" and an empty ACL [] (an absent
 * member would leave the field as it was). */
static json_t *edit_value(const model_object *obj, const kind_field *f)
{
    const void *at = kind_field_at(obj, f);
    switch (f->type) {
    case KIND_FIELD_ACL:
        return codec_json_acl(at);
    case KIND_FIELD_ACTION:
        return codec_json_text(model_action_name(*(const model_action *)at));
    case KIND_FIELD_TEXT:
        break;
    }
    return codec_json_text(at);
}

char *codec_patch_body(const model_object *obj, unsigned fields)
{
    const kind_desc *d = kind_get(obj->kind);
    json_t *root = json_object();
    bool ok = root != NULL;
    for (size_t i = 0; ok && i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        if (!(fields & kind_field_bit(obj->kind, f)) || !(f->flags & KIND_FIELD_EDIT))
            continue;
        ok = json_object_set_new(root, f->name, edit_value(obj, f)) == 0;
    }
    /* json_dumps allocates with malloc: the caller's free() matches. */
    char *out = ok ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return out;
}
