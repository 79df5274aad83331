/* emulator: create, get, edit and delete, one piece of code for every kind (the
 * kind's descriptor says what differs, and which fields an edit may change). The
 * store does the keeping (no SQL here); the codec reads and writes the JSON. What
 * is a credential's own is here too, in one place each: its token and its default
 * owner. */
#include "emulator_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/serve_list.h"
#include "rampart/validate.h"

enum { TOKEN_SECRET_LEN = 21 };

static const char *body_of(const http_request *req)
{
    return req->body ? req->body : "";
}

/* Ids of the wrong shape are simply unknown, as on the production service. */
static bool known_shape(const char *id, model_kind kind)
{
    return id && validate_id(id, kind_get(kind)->id_prefix, "id", NULL) == ERROR_OK;
}

static void no_such(http_response *resp, model_kind kind, const char *id)
{
    emu_error(resp, 404, "ERR_NOT_FOUND", "no %s %.80s", serve_list_noun(kind),
              id ? id : "");
}

/* ---- create ---- */

/* "<the id's 27-char body>_<21 base62>", as the production service's tokens look. */
static error_code make_token(model_cred *cred, error_info *err)
{
    char token[IDS_BODY_LEN + TOKEN_SECRET_LEN + 2];
    const char *body = strchr(cred->id, '_');
    body = body ? body + 1 : cred->id;
    int n = snprintf(token, sizeof token, "%.*s_", IDS_BODY_LEN, body);
    error_code rc = ids_random_base62(token + n, TOKEN_SECRET_LEN, err);
    if (rc == ERROR_OK)
        rc = model_cred_set_token(cred, token, err);
    model_wipe(token, sizeof token);
    return rc;
}

/*
 * Whatever the body said about them, the server decides these: no id yet (made
 * under the lock), no error, synced, created now (an empty created_at is stamped by
 * the store). A token is the server's to make (insert_new), and a field the caller
 * fills (an owner) left empty is the API key's user.
 */
static void server_fields(model_object *obj)
{
    const kind_desc *d = kind_get(obj->kind);
    obj->head.id[0] = '\0';
    obj->head.created_at[0] = '\0';
    obj->head.error[0] = '\0';
    obj->head.state = MODEL_STATE_SYNCED;
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *f = &d->fields[i];
        char *v = f->flags & KIND_FIELD_CALLER ? kind_field_at_mut(obj, f) : NULL;
        if (v && !v[0])
            model_copy_text(v, f->size, EMULATOR_OWNER_ID);
    }
}

/* Id, token and insert under one lock: ids are stored in the order they are made,
 * so a concurrent listing never pages past a row that is not there yet. */
static error_code insert_new(emulator *em, model_object *obj, error_info *err)
{
    const kind_desc *d = kind_get(obj->kind);
    pthread_mutex_lock(&em->lock);
    error_code rc = ids_generate(&em->gen, d->id_prefix, model_object_id_buf(obj),
                                 MODEL_ID_MAX + 1, err);
    if (rc == ERROR_OK && d->has_token)
        rc = make_token(&obj->cred, err);
    if (rc == ERROR_OK) {
        serve_list_uris(em->base_url, obj);
        rc = store_insert(em->st, obj, err); /* a token goes to its own table */
    }
    pthread_mutex_unlock(&em->lock);
    return rc;
}

/* A decoded body becomes a row: checked before an id is made, so a bad body costs
 * no id and the message names the body's field. */
static void create_row(emulator *em, model_object *obj, http_response *resp)
{
    const kind_desc *d = kind_get(obj->kind);
    error_info e = {0};
    server_fields(obj);
    if (d->validate(obj, &e) != ERROR_OK)
        emu_error(resp, 400, "ERR_VALIDATION", "%s", e.msg);
    else if (insert_new(em, obj, &e) != ERROR_OK)
        emu_store_error(resp, &e);
    else
        emu_reply(resp, 201, codec_object_encode(obj, 0)); /* the one reply with a token */
}

void emu_create(emulator *em, model_kind kind, const http_request *req, http_response *resp)
{
    model_object obj;
    error_info e = {0};
    if (codec_object_decode(kind, body_of(req), req->body_len, &obj, &e) != ERROR_OK)
        emu_error(resp, 400, "ERR_INVALID_BODY", "%s", e.msg);
    else
        create_row(em, &obj, resp);
    model_object_clear(&obj);
}

/* ---- get / edit / delete ---- */

/* The path's {id} when it has the kind's shape; NULL after the 404 reply. */
static const char *path_id(model_kind kind, const http_request *req, http_response *resp)
{
    const char *id = http_request_param(req, "id");
    if (known_shape(id, kind))
        return id;
    no_such(resp, kind, id);
    return NULL;
}

/* A store call's failure as the reply: an unknown id is a 404 naming it. */
static void store_failed(http_response *resp, model_kind kind, const char *id,
                         const error_info *e)
{
    if (e->code == ERROR_NOT_FOUND)
        no_such(resp, kind, id);
    else
        emu_store_error(resp, e);
}

/* The reply to a store call on `obj` (asked for as `id`) that ended with `rc`:
 * the row as stored as a 200 (its uris as served from this base; the store never
 * fills a token, so a credential's is null), or the failure. */
static void reply_row(emulator *em, error_code rc, const error_info *e, const char *id,
                      model_object *obj, http_response *resp)
{
    if (rc != ERROR_OK) {
        store_failed(resp, obj->kind, id, e);
        return;
    }
    serve_list_uris(em->base_url, obj);
    emu_reply(resp, 200, codec_object_encode(obj, 0));
}

void emu_get(emulator *em, model_kind kind, const http_request *req, http_response *resp)
{
    const char *id = path_id(kind, req, resp);
    if (!id)
        return;
    model_object obj;
    model_object_init(&obj, kind);
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = store_get(em->st, kind, id, &obj, &e);
    pthread_mutex_unlock(&em->lock);
    reply_row(em, rc, &e, id, &obj, resp);
    model_object_clear(&obj);
}

/* A PATCH body the codec refused: bad JSON or a wrong type is the body's fault,
 * like a create's; a field that never changes, an unknown one or nothing to
 * change is refused as a create's bad field is. */
static void body_refused(http_response *resp, const error_info *e)
{
    if (e->code == ERROR_FORMAT)
        emu_error(resp, 400, "ERR_INVALID_BODY", "%s", e->msg);
    else
        emu_store_error(resp, e); /* ERROR_INVALID: 400 ERR_VALIDATION; no memory: 500 */
}

void emu_patch(emulator *em, model_kind kind, const http_request *req, http_response *resp)
{
    const char *id = path_id(kind, req, resp);
    if (!id)
        return;
    model_object obj;
    unsigned fields;
    error_info e = {0};
    if (codec_patch_decode(kind, body_of(req), req->body_len, &obj, &fields, &e) != ERROR_OK) {
        body_refused(resp, &e);
        model_object_clear(&obj);
        return;
    }
    const char *named = model_object_id(&obj);
    if (named[0] && strcmp(named, id) != 0) {
        emu_error(resp, 400, "ERR_VALIDATION", "id: the body names %s but the path %s: an "
                  "edit cannot move to another object", named, id);
        model_object_clear(&obj);
        return;
    }
    snprintf(model_object_id_buf(&obj), MODEL_ID_MAX + 1, "%s", id);
    /* The store checks the merged row as it checks a create (the same messages)
     * and keeps the id: the row stays where it was in list order. */
    pthread_mutex_lock(&em->lock);
    error_code rc = store_update(em->st, &obj, fields, &e);
    pthread_mutex_unlock(&em->lock);
    reply_row(em, rc, &e, id, &obj, resp);
    model_object_clear(&obj);
}

void emu_delete(emulator *em, model_kind kind, const http_request *req, http_response *resp)
{
    const char *id = path_id(kind, req, resp);
    if (!id)
        return;
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = store_remove(em->st, kind, id, &e);
    pthread_mutex_unlock(&em->lock);
    if (rc != ERROR_OK)
        store_failed(resp, kind, id, &e);
    else
        http_response_set(resp, 204, NULL);
}
