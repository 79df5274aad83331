/*
 * agent: the route tables (each row says what its route answers) and the agent's
 * own routes: a token by credential id or by name, a policy decision, health. The
 * mirror of the remote API's GET routes is in agent_mirror.c.
 *
 * A token exists in memory in four places here: the copy store_token_lookup
 * returns (wiped at once after the body is built), the reply body (wiped by the
 * http layer when it is freed), the body's buffer while it grows (a wiping buf,
 * rampart/buf.h), and the copy of a reply its event thread keeps until the end
 * of the batch (agent_batch.c: wiped then). Audit lines carry ids and names,
 * never a token.
 */
#include "agent_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/buf.h"
#include "rampart/codec.h"
#include "rampart/model.h"
#include "rampart/validate.h"

enum { NAME_IDS_MAX = 8, AUDIT_TEXT_MAX = 80 };

/* ---- tokens ---- */

typedef struct lookup {
    agent_listener *l;
    agent *ag;
    const http_request *req;
    const char *by;      /* "id" or "name" */
    const char *raw;     /* the id or name asked for, as sent */
    char asked[AUDIT_TEXT_MAX]; /* the same, neutralised for messages and lines */
    char peer[80];
} lookup;

static void audit(const lookup *lk, const char *cred_id, const char *result)
{
    agent_log(lk->ag, "token peer=%s by=%s %s=\"%s\" cred=%s result=%s", lk->peer, lk->by,
              lk->by, lk->asked, cred_id && *cred_id ? cred_id : "-", result);
}

/* A 404 for what was asked, audited. */
static void not_found(const lookup *lk, http_response *resp, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void not_found(const lookup *lk, http_response *resp, const char *fmt, ...)
{
    char msg[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    agent_error(resp, 404, "ERR_NOT_FOUND", "%s", msg);
    audit(lk, NULL, "not_found");
}

static void start_lookup(lookup *lk, agent_listener *l, const http_request *req,
                         const char *by, const char *asked)
{
    lk->l = l;
    lk->ag = l->ag;
    lk->req = req;
    lk->by = by;
    lk->raw = asked;
    agent_log_text(lk->asked, sizeof lk->asked, asked);
    agent_peer_name(req, lk->peer, sizeof lk->peer);
    atomic_fetch_add(&l->ag->lookups, 1);
}

/* {"id", "token", "acl"}: what an agent needs to use its token; during a
 * rotation's grace period, "superseded_by": the successor's id. */
static char *token_body(const char *id, const char *token, const model_acl *acl,
                        const char *successor)
{
    buf_t b = {.wipe = true};
    buf_puts(&b, "{\"id\":");
    buf_json_string(&b, id);
    buf_puts(&b, ",\"token\":");
    buf_json_string(&b, token);
    buf_puts(&b, ",\"acl\":[");
    for (size_t i = 0; i < acl->count; i++) {
        buf_puts(&b, i ? "," : "");
        buf_json_string(&b, acl->rules[i]);
    }
    buf_puts(&b, "]");
    if (successor[0]) {
        buf_puts(&b, ",\"superseded_by\":");
        buf_json_string(&b, successor);
    }
    buf_puts(&b, "}");
    return buf_take(&b);
}

/* An error body with one more member (`member`: ,"name":value) before its
 * closing brace; the headers (Operation-Id) stay. */
static void splice_member(http_response *resp, const char *member)
{
    size_t blen = resp->body ? strlen(resp->body) : 0;
    char *body = member && blen ? malloc(blen + strlen(member)) : NULL;
    if (!body)
        return;
    memcpy(body, resp->body, blen - 1);
    memcpy(body + blen - 1, member, strlen(member) + 1);
    http_response_set(resp, resp->status, body);
}

/* The successor of `id` by a rotation, when its token is held ("" if none). */
static void successor_of(store *st, const char *id, char succ[MODEL_ID_MAX + 1])
{
    bool found = false;
    if (store_rotation_successor(st, id, succ, &found, NULL) != ERROR_OK || !found)
        succ[0] = '\0';
}

/* 410 for a credential retired by a rotation (deleted, or no longer cached while
 * the link is kept): the successor's id beside it, so an agent pinned to an id
 * can follow. */
static void send_superseded(const lookup *lk, const char *id, const char *succ,
                            http_response *resp)
{
    agent_error(resp, 410, "ERR_GONE", "credential %s was replaced by a rotation: its "
                "successor is %s (/v1/credentials/%s/token)", id, succ, succ);
    buf_t m = {0};
    buf_puts(&m, ",\"superseded_by\":");
    buf_json_string(&m, succ);
    buf_puts(&m, "}");
    char *member = buf_take(&m);
    splice_member(resp, member);
    free(member);
    audit(lk, id, "superseded");
}

static bool gone(model_state s)
{
    return s == MODEL_STATE_DELETING || s == MODEL_STATE_REMOTE_DELETED;
}

/* Why a credential that exists has no token here (the 409's message). */
static const char *not_held_reason(const char *canon, model_state state)
{
    if (state == MODEL_STATE_FAILED)
        return "was refused by the remote when created, so it has no token (its error: "
               "rampart creds get ID)";
    if (validate_is_local_id(canon))
        return "is not created remotely yet: its token arrives with the sync that creates it";
    return "was created elsewhere or its token was lost: this machine does not hold its token";
}

/* The token of credential `id` (an id or a local alias) as the reply. */
static void send_token(const lookup *lk, store *st, const char *id, http_response *resp)
{
    error_info e = {0};
    char canon[MODEL_ID_MAX + 1];
    model_state state;
    char *token = NULL;
    model_acl acl = {0};
    /* One indexed read (id, state, token, ACL): the hot path of every agent. */
    error_code rc = store_token_lookup(st, id, canon, &state, &token, &acl, &e);
    char succ[MODEL_ID_MAX + 1] = "";
    if (rc == ERROR_OK || rc == ERROR_NOT_FOUND)
        successor_of(st, rc == ERROR_OK ? canon : id, succ);
    if ((rc == ERROR_NOT_FOUND || (rc == ERROR_OK && gone(state))) && succ[0]) {
        send_superseded(lk, rc == ERROR_OK ? canon : id, succ, resp);
    } else if (rc == ERROR_NOT_FOUND) {
        agent_error(resp, 404, "ERR_NOT_FOUND", "no credential %s in the cache", lk->asked);
        audit(lk, NULL, "not_found");
    } else if (rc != ERROR_OK) {
        agent_store_error(resp, &e);
        audit(lk, NULL, "error");
    } else if (gone(state)) {
        agent_error(resp, 410, "ERR_GONE", "credential %s was deleted (%s): its token is no "
                    "longer handed out", canon, model_state_name(state));
        audit(lk, canon, "deleted");
    } else if (!token) {
        agent_error(resp, 409, "ERR_TOKEN_NOT_HELD", "credential %s %s", canon,
                    not_held_reason(canon, state));
        audit(lk, canon, "not_held");
    } else {
        /* Cache-Control: no-store */
        agent_reply(resp, 200, token_body(canon, token, &acl, succ));
        audit(lk, canon, resp->status == 200 ? "ok" : "error");
        if (resp->status == 200) {
            agent_batch_note(lk->l, lk->req, canon); /* memory only: written off this path */
            agent_batch_keep(lk->l, lk->req, lk->by[0], lk->raw, canon, resp);
        }
    }
    model_free_wiped(token);
    model_acl_clear(&acl);
}

/* The reply this event thread gave to the same question in its current batch
 * (agent_batch.c), audited and noted like any: true when `resp` holds it. */
static bool batch_reply(const lookup *lk, http_response *resp)
{
    char canon[MODEL_ID_MAX + 1];
    if (!agent_batch_reply(lk->l, lk->req, lk->by[0], lk->raw, canon, resp))
        return false;
    audit(lk, canon, "ok");
    agent_batch_note(lk->l, lk->req, canon);
    return true;
}

/* A handle for the lookup, or NULL when `resp` holds the reply already: the
 * batch's (batch_reply), or the failure to get a handle (audited). */
static store *lookup_store(const lookup *lk, http_response *resp)
{
    if (batch_reply(lk, resp))
        return NULL;
    error_info e = {0};
    store *st = agent_lookup_store(lk->l, lk->req, &e);
    if (!st) {
        agent_store_error(resp, &e);
        audit(lk, NULL, "error");
    }
    return st;
}

static bool id_shape(const char *id)
{
    return id && (validate_id(id, "cr", "id", NULL) == ERROR_OK || validate_is_local_id(id));
}

static void token_by_id(void *ctx, const http_request *req, http_response *resp)
{
    agent_listener *l = ctx;
    const char *id = http_request_param(req, "id");
    lookup lk;
    start_lookup(&lk, l, req, "id", id);
    if (!id_shape(id)) {
        not_found(&lk, resp, "no credential %s in the cache (ids look like cr_… or local_…)",
                  lk.asked);
        return;
    }
    store *st = lookup_store(&lk, resp);
    if (!st)
        return;
    send_token(&lk, st, id, resp);
    agent_lookup_store_done(l, req, st, resp->status == 500);
}

/* "cr_a, cr_b, …" into msg, and the ids as a JSON array spliced into the body. */
static void ambiguous(const lookup *lk, char (*ids)[MODEL_ID_MAX + 1], size_t shown,
                      size_t count, http_response *resp)
{
    char list[NAME_IDS_MAX * (MODEL_ID_MAX + 2) + 16] = "";
    buf_t arr = {0};
    buf_puts(&arr, ",\"ids\":[");
    for (size_t i = 0; i < shown; i++) {
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", ids[i]);
        buf_puts(&arr, i ? "," : "");
        buf_json_string(&arr, ids[i]);
    }
    buf_puts(&arr, "]}");
    agent_error(resp, 409, "ERR_AMBIGUOUS", "%s credentials are named \"%s\": %s%s; ask by "
                "id instead (/v1/credentials/ID/token)", count > shown ? "more than 8" : "several",
                lk->asked, list, count > shown ? ", …" : "");
    char *ids_json = buf_take(&arr);
    splice_member(resp, ids_json); /* the error object, then ,"ids":[…]} */
    free(ids_json);
    audit(lk, NULL, "ambiguous");
}

/* The token of the one live credential whose description is `name`. */
static void send_token_named(agent_listener *l, const http_request *req, const char *name,
                             http_response *resp)
{
    lookup lk;
    start_lookup(&lk, l, req, "name", name);
    if (!name || strlen(name) > MODEL_DESCRIPTION_MAX) {
        not_found(&lk, resp, "no credential is named like that (names are descriptions, at "
                  "most %d bytes)", MODEL_DESCRIPTION_MAX);
        return;
    }
    store *st = lookup_store(&lk, resp);
    if (!st)
        return;
    char ids[NAME_IDS_MAX][MODEL_ID_MAX + 1];
    size_t count = 0;
    error_info e = {0};
    error_code rc = store_cred_find_by_name(st, name, ids, NAME_IDS_MAX, &count, &e);
    if (rc != ERROR_OK) {
        agent_store_error(resp, &e);
        audit(&lk, NULL, "error");
    } else if (count == 0) {
        not_found(&lk, resp, "no live credential is named \"%s\" in the cache", lk.asked);
    } else if (count > 1) {
        ambiguous(&lk, ids, count > NAME_IDS_MAX ? NAME_IDS_MAX : count, count, resp);
    } else {
        send_token(&lk, st, ids[0], resp);
    }
    agent_lookup_store_done(l, req, st, resp->status == 500);
}

static void token_by_name(void *ctx, const http_request *req, http_response *resp)
{
    send_token_named(ctx, req, http_request_param(req, "name"), resp);
}

/* GET /v1/tokens?name=NAME: the same lookup for names a path segment cannot carry
 * (a '/' in a description: the path is decoded before routing). */
static void token_by_query(void *ctx, const http_request *req, http_response *resp)
{
    if (req->query_nul || req->query_overflow || req->nquery != 1 ||
        strcmp(req->query[0].name, "name") != 0) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "send exactly one query parameter: "
                    "name=<the credential's description>");
        return;
    }
    send_token_named(ctx, req, req->query[0].value, resp);
}

/* ---- policy decisions ---- */

static bool check_query(const http_request *req, const char **ip, http_response *resp)
{
    *ip = NULL;
    if (req->query_nul || req->query_overflow) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "the only query parameter is ip=ADDR");
        return false;
    }
    for (size_t i = 0; i < req->nquery; i++) {
        const http_param *p = &req->query[i];
        if (strcmp(p->name, "ip") != 0 || *ip) {
            agent_error(resp, 400, "ERR_INVALID_QUERY", "%s: the only query parameter is "
                        "ip=ADDR, once", *ip ? "ip given twice" : "unknown parameter");
            return false;
        }
        *ip = p->value;
    }
    if (!*ip || !**ip) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "give the address to check: ?ip=ADDR "
                    "(IPv4 or IPv6, no prefix)");
        return false;
    }
    return true;
}

static void policy_check_route(void *ctx, const http_request *req, http_response *resp)
{
    agent_listener *l = ctx;
    const char *policy = http_request_param(req, "id");
    if (!policy || validate_id(policy, "ipp", "policy", NULL) != ERROR_OK) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "not a policy id: policy ids look like "
                    "ipp_…");
        return;
    }
    const char *ip;
    if (!check_query(req, &ip, resp))
        return;
    policy_decision d;
    error_info e = {0};
    error_code rc = agent_policy_check(l->ag, policy, ip, &d, &e);
    if (rc == ERROR_INVALID) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "ip: %s", e.msg);
        return;
    }
    if (rc != ERROR_OK) {
        agent_store_error(resp, &e);
        return;
    }
    buf_t b = {0};
    policy_decision_json(&b, ip, policy, &d, POLICY_JSON_COMPACT);
    agent_reply(resp, 200, buf_take(&b));
}

/* ---- health ---- */

static void health(void *ctx, const http_request *req, http_response *resp)
{
    (void)ctx, (void)req;
    agent_reply(resp, 200, strdup("{\"status\":\"ok\",\"service\":\"rampart agent\","
                                  "\"version\":\"" RAMPART_VERSION "\"}"));
}

/* ---- the tables ---- */

/* What each route answers, as `agent --help` prints it and rampart(1) says it: the
 * keys of a 200 reply (tests/e2e/docs_agree.sh compares them with the replies). */
static const agent_route_info
    healthz_info = {AGENT_AUTH_ANY_UID, "", "{\"status\", \"service\", \"version\"}",
                    "any uid may ask on a unix socket", -1},
    token_id_info = {AGENT_AUTH_ALLOWED_UID, "", "{\"id\", \"token\", \"acl\"}",
                     "{id} may be a local id; 404 unknown, 409 token not held here, "
                     "410 deleted", -1},
    token_name_info = {AGENT_AUTH_ALLOWED_UID, "", "{\"id\", \"token\", \"acl\"}",
                       "by description, among live credentials; 409 when several "
                       "match", -1},
    token_query_info = {AGENT_AUTH_ALLOWED_UID, "name=NAME", "{\"id\", \"token\", \"acl\"}",
                        "the same, for a name holding a '/'", -1},
    check_info = {AGENT_AUTH_ALLOWED_UID, "ip=ADDR",
                  "{\"ip\", \"policy\", \"allowed\", \"policy_known\", \"action\", \"cidr\", "
                  "\"synced\", \"rule_id\"}",
                  "decided as 'rampart check' does; 400 for a bad address", -1},
    creds_info = {AGENT_AUTH_ALLOWED_UID, "", "{\"credentials\", \"uri\", \"next_page_uri\"}",
                  "the mirror: a page, newest first (limit, before_id); rows synced, deleting "
                  "or orphaned", -1},
    cred_info = {AGENT_AUTH_ALLOWED_UID, "", NULL, "the mirror: as the remote API's, token null",
                 MODEL_KIND_CRED},
    rules_info = {AGENT_AUTH_ALLOWED_UID, "",
                  "{\"ip_policy_rules\", \"uri\", \"next_page_uri\"}",
                  "the mirror: a page, newest first (limit, before_id); rows synced, deleting "
                  "or orphaned", -1},
    rule_info = {AGENT_AUTH_ALLOWED_UID, "", NULL, "the mirror: as the remote API's",
                 MODEL_KIND_RULE};

#define MIRROR_ROUTES                                                                      \
    {"GET", "/credentials",          agent_mirror_list_creds, &creds_info},                \
    {"GET", "/credentials/{id}",     agent_mirror_get_cred,   &cred_info},                 \
    {"GET", "/ip_policy_rules",      agent_mirror_list_rules, &rules_info},                \
    {"GET", "/ip_policy_rules/{id}", agent_mirror_get_rule,   &rule_info}

const http_route agent_routes[] = {
    /* method, pattern,                   handler,            what it is */
    {"GET", "/healthz",                   health,             &healthz_info},
    {"GET", "/v1/credentials/{id}/token", token_by_id,        &token_id_info},
    {"GET", "/v1/tokens/{name}",          token_by_name,      &token_name_info},
    {"GET", "/v1/tokens",                 token_by_query,     &token_query_info},
    {"GET", "/v1/ip_policies/{id}/check", policy_check_route, &check_info},
    MIRROR_ROUTES,
};

const size_t agent_nroutes = sizeof agent_routes / sizeof agent_routes[0];

/* What a cache in front of the hub may reach: the mirror, nothing else. */
const http_route agent_mirror_routes[] = {MIRROR_ROUTES};

const size_t agent_mirror_nroutes = sizeof agent_mirror_routes / sizeof agent_mirror_routes[0];

/* The keys of one object of `kind` as the mirror sends it, made once (the help's
 * caller is one thread). */
static const char *object_keys(model_kind kind)
{
    static char keys[MODEL_KIND_COUNT][256];
    char *made = keys[kind][0] ? NULL : codec_object_keys(kind);
    if (made)
        model_copy_text(keys[kind], sizeof keys[kind], made);
    free(made);
    return keys[kind];
}

bool agent_route_doc_get(size_t i, agent_route_doc *out)
{
    if (i >= agent_nroutes)
        return false;
    const agent_route_info *info = agent_routes[i].data;
    const char *reply = info->object >= 0 ? object_keys((model_kind)info->object) : info->reply;
    *out = (agent_route_doc){agent_routes[i].method, agent_routes[i].pattern, info->query,
                             reply, info->note};
    return true;
}
