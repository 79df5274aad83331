/* emulator: create, get and delete of rules and credentials. The store does the
 * keeping (no SQL here); the codec reads and writes the JSON. */
#include "emulator_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/validate.h"

enum { TOKEN_SECRET_LEN = 21 };

static const char *body_of(const http_request *req)
{
    return req->body ? req->body : "";
}

/* ---- rules ---- */

void emu_create_rule(emulator *em, const http_request *req, http_response *resp)
{
    model_rule rule;
    error_info e = {0};
    if (codec_rule_decode(body_of(req), req->body_len, &rule, &e) != ERROR_OK) {
        emu_error(resp, 400, "ERR_INVALID_BODY", "%s", e.msg);
        return;
    }
    if (validate_rule(&rule, &e) != ERROR_OK) {
        emu_error(resp, 400, "ERR_VALIDATION", "%s", e.msg);
        return;
    }
    /* Whatever the body said about these, the server decides them. */
    rule.id[0] = rule.error[0] = '\0';
    rule.state = MODEL_STATE_SYNCED;
    ids_now_rfc3339(rule.created_at, sizeof rule.created_at);
    /* One lock over id and insert: ids are stored in the order they are made, so a
     * concurrent listing never pages past a row that is not there yet. */
    pthread_mutex_lock(&em->lock);
    error_code rc = ids_generate(&em->gen, "ipr", rule.id, sizeof rule.id, &e);
    if (rc == ERROR_OK) {
        emu_rule_uris(em, &rule);
        rc = store_rule_insert(em->st, &rule, &e);
    }
    pthread_mutex_unlock(&em->lock);
    if (rc != ERROR_OK) {
        emu_store_error(resp, &e);
        return;
    }
    emu_reply(resp, 201, codec_rule_encode(&rule, 0));
}

/* Ids of the wrong shape are simply unknown, as on the production service. */
static bool known_shape(const char *id, const char *prefix)
{
    return id && validate_id(id, prefix, "id", NULL) == ERROR_OK;
}

static void no_such(http_response *resp, const char *noun, const char *id)
{
    emu_error(resp, 404, "ERR_NOT_FOUND", "no %s %.80s", noun, id ? id : "");
}

void emu_get_rule(emulator *em, const http_request *req, http_response *resp)
{
    const char *id = http_request_param(req, "id");
    if (!known_shape(id, "ipr")) {
        no_such(resp, "ip policy rule", id);
        return;
    }
    model_rule rule;
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = store_rule_get(em->st, id, &rule, &e);
    pthread_mutex_unlock(&em->lock);
    if (rc == ERROR_NOT_FOUND) {
        no_such(resp, "ip policy rule", id);
        return;
    }
    if (rc != ERROR_OK) {
        emu_store_error(resp, &e);
        return;
    }
    emu_rule_uris(em, &rule);
    emu_reply(resp, 200, codec_rule_encode(&rule, 0));
}

typedef error_code (*remove_fn)(store *st, const char *id, error_info *err);

static void delete_row(emulator *em, const http_request *req, http_response *resp,
                       const char *prefix, const char *noun, remove_fn remove)
{
    const char *id = http_request_param(req, "id");
    if (!known_shape(id, prefix)) {
        no_such(resp, noun, id);
        return;
    }
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = remove(em->st, id, &e);
    pthread_mutex_unlock(&em->lock);
    if (rc == ERROR_NOT_FOUND) {
        no_such(resp, noun, id);
        return;
    }
    if (rc != ERROR_OK) {
        emu_store_error(resp, &e);
        return;
    }
    http_response_set(resp, 204, NULL);
}

void emu_delete_rule(emulator *em, const http_request *req, http_response *resp)
{
    delete_row(em, req, resp, "ipr", "ip policy rule", store_rule_remove);
}

/* ---- credentials ---- */

/* "<the id's 27-char body>_<21 base62>", as the production service's tokens look. */
static error_code make_token(const char *id, model_cred *cred, error_info *err)
{
    char token[IDS_BODY_LEN + TOKEN_SECRET_LEN + 2];
    const char *body = strchr(id, '_');
    body = body ? body + 1 : id;
    int n = snprintf(token, sizeof token, "%.*s_", IDS_BODY_LEN, body);
    error_code rc = ids_random_base62(token + n, TOKEN_SECRET_LEN, err);
    if (rc == ERROR_OK)
        rc = model_cred_set_token(cred, token, err);
    model_wipe(token, sizeof token);
    return rc;
}

static error_code insert_cred(emulator *em, model_cred *cred, error_info *err)
{
    pthread_mutex_lock(&em->lock);
    error_code rc = ids_generate(&em->gen, "cr", cred->id, sizeof cred->id, err);
    if (rc == ERROR_OK)
        rc = make_token(cred->id, cred, err);
    if (rc == ERROR_OK) {
        emu_cred_uri(em, cred);
        rc = store_cred_insert(em->st, cred, err); /* the token goes to its table */
    }
    pthread_mutex_unlock(&em->lock);
    return rc;
}

void emu_create_cred(emulator *em, const http_request *req, http_response *resp)
{
    model_cred cred = {0};
    error_info e = {0};
    if (codec_cred_decode(body_of(req), req->body_len, &cred, &e) != ERROR_OK) {
        emu_error(resp, 400, "ERR_INVALID_BODY", "%s", e.msg);
        return;
    }
    model_cred_set_token(&cred, NULL, NULL); /* a token in the request means nothing */
    if (!cred.owner_id[0])
        memcpy(cred.owner_id, EMULATOR_OWNER_ID, sizeof EMULATOR_OWNER_ID);
    if (validate_cred(&cred, &e) != ERROR_OK) {
        emu_error(resp, 400, "ERR_VALIDATION", "%s", e.msg);
        model_cred_clear(&cred);
        return;
    }
    cred.id[0] = cred.error[0] = '\0';
    cred.state = MODEL_STATE_SYNCED;
    ids_now_rfc3339(cred.created_at, sizeof cred.created_at);
    if (insert_cred(em, &cred, &e) != ERROR_OK)
        emu_store_error(resp, &e);
    else
        emu_reply(resp, 201, codec_cred_encode(&cred, 0)); /* the one reply with the token */
    model_cred_clear(&cred);
}

void emu_get_cred(emulator *em, const http_request *req, http_response *resp)
{
    const char *id = http_request_param(req, "id");
    if (!known_shape(id, "cr")) {
        no_such(resp, "credential", id);
        return;
    }
    model_cred cred = {0};
    error_info e = {0};
    pthread_mutex_lock(&em->lock);
    error_code rc = store_cred_get(em->st, id, &cred, &e); /* never fills the token */
    pthread_mutex_unlock(&em->lock);
    if (rc == ERROR_NOT_FOUND)
        no_such(resp, "credential", id);
    else if (rc != ERROR_OK)
        emu_store_error(resp, &e);
    else {
        emu_cred_uri(em, &cred);
        emu_reply(resp, 200, codec_cred_encode(&cred, 0));
    }
    model_cred_clear(&cred);
}

void emu_delete_cred(emulator *em, const http_request *req, http_response *resp)
{
    delete_row(em, req, resp, "cr", "credential", store_cred_remove);
}
