/*
 * agent: a read-only mirror of the remote API's GET routes over the cache, so a
 * client written for the remote API can read it unchanged: the same list shape
 * (newest first, limit 1..100, before_id, next_page_uri), the same objects
 * (tokens null) and the same error bodies.
 *
 * Rows shown: what the cache believes is on the remote now (synced, deleting,
 * orphaned). Query rules, reading order and page shape are serve-api's own
 * (rampart/serve_list.h). Every uri points back at the agent, or at the public
 * URL a cache in front serves it under (see rampart/agent.h).
 *
 * Replies a cache may keep: each 200 carries a strong ETag made from the kind's
 * change counter (read before the rows: rampart/store.h) and what was asked, and
 * the Cache-Control of the max-age setting. A request whose If-None-Match
 * matches is answered 304 from the counter alone, without reading a row: that is
 * what a cache revalidating a page costs the hub.
 */
#include "agent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/serve_list.h"
#include "rampart/serve_reply.h"
#include "rampart/url.h"
#include "rampart/validate.h"

/* What the remote holds: a conflict only when its row holds the remote's values
 * (a delete that found the object changed remotely stays in force). */
#define MIRROR_STATES                                                                    \
    ((1u << MODEL_STATE_SYNCED) | (1u << MODEL_STATE_DELETING) |                         \
     (1u << MODEL_STATE_ORPHANED) | STORE_STATES_HELD)

static bool shown(store *st, const model_object *obj)
{
    model_state s = model_object_state(obj);
    if (s == MODEL_STATE_CONFLICT)
        return store_conflict_holds_remote(st, obj->kind, model_object_id(obj));
    return (MIRROR_STATES >> s) & 1u;
}

/* ---- settings ---- */

error_code agent_mirror_settings(agent *ag, const agent_options *opt, error_info *err)
{
    if (opt->mirror_max_age_s > SERVE_MAX_AGE_MAX)
        return error_set(err, ERROR_INVALID, "the mirror's max-age is at most %d seconds",
                         SERVE_MAX_AGE_MAX);
    ag->mirror_max_age_s = opt->mirror_max_age_s;
    const char *url = opt->public_url;
    if (!url || !*url)
        return ERROR_OK;
    size_t len = strlen(url);
    while (len > 0 && url[len - 1] == '/')
        len--;
    if (len >= sizeof ag->public_url)
        return error_set(err, ERROR_INVALID, "the public URL is longer than %zu bytes",
                         sizeof ag->public_url - 1);
    snprintf(ag->public_url, sizeof ag->public_url, "%.*s", (int)len, url);
    return url_check_api_base(ag->public_url, "public URL", err);
}

/* Where the uris of this listener's replies start. */
static const char *mirror_base(const agent_listener *l)
{
    return l->ag->public_url[0] ? l->ag->public_url : l->base;
}

/* ---- replies a cache may keep ---- */

/* The tag of what was asked, from the kind's change counter: read before any row
 * (an older tag on a newer body costs a download; the reverse would keep a stale
 * page). False after replying a store failure. */
static bool make_tag(const agent_listener *l, store *st, model_kind kind,
                     const serve_list_query *q, const char *id, char *etag, size_t size,
                     http_response *resp)
{
    store_change_tag tag;
    error_info e = {0};
    if (store_change_tag_get(st, kind, &tag, &e) != ERROR_OK) {
        agent_store_error(resp, &e);
        return false;
    }
    serve_list_etag(&tag, mirror_base(l), kind, q, id, etag, size);
    return true;
}

/* 304: the client (a cache revalidating) holds this reply already. */
static void not_modified(const agent_listener *l, const char *etag, http_response *resp)
{
    http_response_set(resp, 304, NULL);
    if (!serve_cache_headers(resp, etag, l->ag->mirror_max_age_s))
        agent_error(resp, 500, "ERR_INTERNAL", "the reply's headers did not fit");
}

/* 200 with `body` (taken over), its tag and the cache's headers. */
static void cacheable(const agent_listener *l, const char *etag, char *body,
                      http_response *resp)
{
    if (!body) {
        agent_reply(resp, 200, NULL); /* a 500, no-store */
        return;
    }
    http_response_set(resp, 200, body);
    if (!serve_cache_headers(resp, etag, l->ag->mirror_max_age_s))
        agent_error(resp, 500, "ERR_INTERNAL", "the reply's headers did not fit");
}

/* If-None-Match: "*" (any representation at all). */
static bool any_tag(const http_request *req)
{
    const char *h = http_request_header(req, "If-None-Match");
    if (!h)
        return false;
    h += strspn(h, " \t");
    return *h == '*' && h[1 + strspn(h + 1, " \t")] == '\0';
}

static bool asked_for(const http_request *req, const char *etag)
{
    return serve_etag_matches(http_request_header(req, "If-None-Match"), etag);
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
    if (!st) {
        agent_store_error(resp, &e);
        return;
    }
    char etag[SERVE_ETAG_MAX];
    if (!make_tag(l, st, kind, &q, NULL, etag, sizeof etag, resp)) {
        agent_store_give(l->ag, st, true);
        return;
    }
    if (asked_for(req, etag)) { /* "*" too: a collection always exists */
        agent_store_give(l->ag, st, false);
        not_modified(l, etag, resp);
        return;
    }
    char *body = NULL;
    error_code rc = serve_list_page(st, kind, &q, MIRROR_STATES, mirror_base(l), &body, &e);
    agent_store_give(l->ag, st, rc == ERROR_IO);
    if (rc == ERROR_OK)
        cacheable(l, etag, body, resp);
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
    char etag[SERVE_ETAG_MAX];
    if (!make_tag(l, st, kind, NULL, id, etag, sizeof etag, resp)) {
        agent_store_give(l->ag, st, true);
        return;
    }
    /* A tag of this object at this counter was only ever given out while it was
     * shown, and the counter moves with any change: it is shown still. ("*" asks
     * whether it exists at all, which only the row says.) */
    if (!any_tag(req) && asked_for(req, etag)) {
        agent_store_give(l->ag, st, false);
        not_modified(l, etag, resp);
        return;
    }
    model_object obj;
    model_object_init(&obj, kind);
    error_info e = {0};
    error_code rc = store_get(st, kind, id, &obj, &e); /* never fills a token */
    bool visible = rc == ERROR_OK && shown(st, &obj);
    agent_store_give(l->ag, st, rc == ERROR_IO);
    /* An alias resolves to another id: the remote would not know it by this one. */
    if (rc == ERROR_NOT_FOUND || (rc == ERROR_OK && (!visible ||
                                                     strcmp(model_object_id(&obj), id) != 0)))
        no_such(resp, kind, id);
    else if (rc != ERROR_OK)
        agent_store_error(resp, &e);
    else if (asked_for(req, etag)) /* "*": it exists */
        not_modified(l, etag, resp);
    else {
        serve_list_uris(mirror_base(l), &obj);
        cacheable(l, etag, codec_object_encode(&obj, 0), resp);
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
