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

#include "rampart/codec.h"
#include "rampart/serve_list.h"
#include "rampart/validate.h"

#define MIRROR_STATES                                                                    \
    ((1u << MODEL_STATE_SYNCED) | (1u << MODEL_STATE_DELETING) |                         \
     (1u << MODEL_STATE_ORPHANED))

typedef error_code (*list_fn)(store *st, const serve_list_query *q, unsigned states,
                              const char *base, char **body, error_info *err);

typedef struct kind {
    const char *path;   /* "ip_policy_rules" */
    const char *prefix; /* of its ids: "ipr" */
    const char *noun;   /* "ip policy rule" */
    list_fn list;
} kind;

static bool shown(model_state s)
{
    return (MIRROR_STATES >> s) & 1u;
}

static const kind rules_kind = {"ip_policy_rules", "ipr", "ip policy rule", serve_list_rules};
static const kind creds_kind = {"credentials", "cr", "credential", serve_list_creds};

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

static void list(const agent_listener *l, const kind *k, const http_request *req,
                 http_response *resp)
{
    serve_list_query q;
    char why[160];
    if (!version_ok(l, req, resp))
        return;
    if (!serve_list_parse(req, k->prefix, &q, why, sizeof why)) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "%s", why);
        return;
    }
    error_info e = {0};
    store *st = agent_store_take(l->ag, &e);
    char *body = NULL;
    error_code rc = st ? k->list(st, &q, MIRROR_STATES, l->base, &body, &e) : e.code;
    agent_store_give(l->ag, st, rc == ERROR_IO);
    if (rc == ERROR_OK)
        agent_reply(resp, 200, body);
    else
        agent_store_error(resp, &e);
}

void agent_mirror_list_rules(void *ctx, const http_request *req, http_response *resp)
{
    list(ctx, &rules_kind, req, resp);
}

void agent_mirror_list_creds(void *ctx, const http_request *req, http_response *resp)
{
    list(ctx, &creds_kind, req, resp);
}

/* ---- single objects ---- */

static void no_such(http_response *resp, const kind *k, const char *id)
{
    char shown_id[MODEL_ID_MAX + 1];
    agent_log_text(shown_id, sizeof shown_id, id);
    agent_error(resp, 404, "ERR_NOT_FOUND", "no %s %s", k->noun, shown_id);
}

/* The row's store handle, or NULL after replying: an id of the wrong shape (a
 * local id too: the remote does not know those) is simply unknown. */
static store *get_start(const agent_listener *l, const kind *k, const http_request *req,
                        const char **id, http_response *resp)
{
    *id = http_request_param(req, "id");
    if (!version_ok(l, req, resp))
        return NULL;
    if (!*id || validate_id(*id, k->prefix, "id", NULL) != ERROR_OK) {
        no_such(resp, k, *id);
        return NULL;
    }
    error_info e = {0};
    store *st = agent_store_take(l->ag, &e);
    if (!st)
        agent_store_error(resp, &e);
    return st;
}

void agent_mirror_get_rule(void *ctx, const http_request *req, http_response *resp)
{
    const agent_listener *l = ctx;
    const char *id;
    store *st = get_start(l, &rules_kind, req, &id, resp);
    if (!st)
        return;
    model_rule rule;
    error_info e = {0};
    error_code rc = store_rule_get(st, id, &rule, &e);
    agent_store_give(l->ag, st, rc == ERROR_IO);
    /* An alias resolves to another id: the remote would not know it by this one. */
    if (rc == ERROR_NOT_FOUND || (rc == ERROR_OK && (!shown(rule.state) ||
                                                     strcmp(rule.id, id) != 0))) {
        no_such(resp, &rules_kind, id);
        return;
    }
    if (rc != ERROR_OK) {
        agent_store_error(resp, &e);
        return;
    }
    serve_list_rule_uris(l->base, &rule);
    agent_reply(resp, 200, codec_rule_encode(&rule, 0));
}

void agent_mirror_get_cred(void *ctx, const http_request *req, http_response *resp)
{
    const agent_listener *l = ctx;
    const char *id;
    store *st = get_start(l, &creds_kind, req, &id, resp);
    if (!st)
        return;
    model_cred cred = {0};
    error_info e = {0};
    error_code rc = store_cred_get(st, id, &cred, &e); /* never fills the token */
    agent_store_give(l->ag, st, rc == ERROR_IO);
    if (rc == ERROR_NOT_FOUND || (rc == ERROR_OK && (!shown(cred.state) ||
                                                     strcmp(cred.id, id) != 0)))
        no_such(resp, &creds_kind, id);
    else if (rc != ERROR_OK)
        agent_store_error(resp, &e);
    else {
        serve_list_cred_uri(l->base, &cred);
        agent_reply(resp, 200, codec_cred_encode(&cred, 0));
    }
    model_cred_clear(&cred);
}
