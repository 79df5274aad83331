/*
 * agent: a read-only mirror of the remote API's GET routes over the cache, so a
 * client written for the remote API can read it unchanged: the same list shape
 * (newest first, limit 1..100, before_id, next_page_uri), the same objects
 * (tokens null) and the same error bodies.
 *
 * Rows shown: what the cache believes is on the remote now (synced, deleting,
 * orphaned). Query rules, reading order and page shape are serve-api's own
 * (rampart/serve_list.h). Every uri points back at the agent (see rampart/agent.h).
 */
#include "agent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/serve_list.h"
#include "rampart/validate.h"

#define MIRROR_STATES                                                                    \
    ((1u << MODEL_STATE_SYNCED) | (1u << MODEL_STATE_DELETING) |                         \
     (1u << MODEL_STATE_ORPHANED))

static bool shown(model_state s)
{
    return (MIRROR_STATES >> s) & 1u;
}

/* ---- requests ---- */

/* The remote refuses a version other than 2; a missing header is fine here. */
static bool version_ok(const agent_listener *l, const http_request *req, http_response *resp)
{
    const char *v = http_request_header(req, l->ag->version_header);
    if (!v || strcmp(v, "2") == 0)
        return true;
    char shown_v[40];
    agent_log_text(shown_v, sizeof shown_v, v);
    agent_error(resp, 400, "ERR_VERSION", "unsupported %s '%s': this endpoint speaks 2",
                l->ag->version_header, shown_v);
    return false;
}

static void list(const agent_listener *l, model_kind kind, const http_request *req,
                 http_response *resp)
{
    serve_list_query q;
    char why[160];
    if (!version_ok(l, req, resp))
        return;
    if (!serve_list_parse(req, kind, &q, why, sizeof why)) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "%s", why);
        return;
    }
    error_info e = {0};
    store *st = agent_store_take(l->ag, &e);
    char *body = NULL;
    error_code rc = st ? serve_list_page(st, kind, &q, MIRROR_STATES, l->base, &body, &e)
                        : e.code;
    agent_store_give(l->ag, st, rc == ERROR_IO);
    if (rc == ERROR_OK)
        agent_reply(resp, 200, body);
    else
        agent_store_error(resp, &e);
}

void agent_mirror_list_rules(void *ctx, const http_request *req, http_response *resp)
{
    list(ctx, MODEL_KIND_RULE, req, resp);
}

void agent_mirror_list_creds(void *ctx, const http_request *req, http_response *resp)
{
    list(ctx, MODEL_KIND_CRED, req, resp);
}

/* ---- single objects ---- */

static void no_such(http_response *resp, model_kind kind, const char *id)
{
    char shown_id[MODEL_ID_MAX + 1];
    agent_log_text(shown_id, sizeof shown_id, id);
    agent_error(resp, 404, "ERR_NOT_FOUND", "no %s %s", serve_list_noun(kind), shown_id);
}

/* The row's store handle, or NULL after replying: an id of the wrong shape (a
 * local id too: the remote does not know those) is simply unknown. */
static store *get_start(const agent_listener *l, model_kind kind, const http_request *req,
                        const char **id, http_response *resp)
{
    *id = http_request_param(req, "id");
    if (!version_ok(l, req, resp))
        return NULL;
    if (!*id || validate_id(*id, kind_get(kind)->id_prefix, "id", NULL) != ERROR_OK) {
        no_such(resp, kind, *id);
        return NULL;
    }
    error_info e = {0};
    store *st = agent_store_take(l->ag, &e);
    if (!st)
        agent_store_error(resp, &e);
    return st;
}

static void get(const agent_listener *l, model_kind kind, const http_request *req,
                http_response *resp)
{
    const char *id;
    store *st = get_start(l, kind, req, &id, resp);
    if (!st)
        return;
    model_object obj;
    model_object_init(&obj, kind);
    error_info e = {0};
    error_code rc = store_get(st, kind, id, &obj, &e); /* never fills a token */
    agent_store_give(l->ag, st, rc == ERROR_IO);
    /* An alias resolves to another id: the remote would not know it by this one. */
    if (rc == ERROR_NOT_FOUND || (rc == ERROR_OK && (!shown(model_object_state(&obj)) ||
                                                     strcmp(model_object_id(&obj), id) != 0)))
        no_such(resp, kind, id);
    else if (rc != ERROR_OK)
        agent_store_error(resp, &e);
    else {
        serve_list_uris(l->base, &obj);
        agent_reply(resp, 200, kind_get(kind)->encode(&obj, 0));
    }
    model_object_clear(&obj);
}

void agent_mirror_get_rule(void *ctx, const http_request *req, http_response *resp)
{
    get(ctx, MODEL_KIND_RULE, req, resp);
}

void agent_mirror_get_cred(void *ctx, const http_request *req, http_response *resp)
{
    get(ctx, MODEL_KIND_CRED, req, resp);
}
