/*
 * agent: a read-only mirror of the remote API's GET routes over the cache, so a
 * client written for the remote API can read it unchanged: the same list shape
 * (newest first, limit 1..100, before_id, next_page_uri), the same objects
 * (tokens null) and the same error bodies.
 *
 * Rows shown: what the cache believes is on the remote now (synced, deleting,
 * orphaned). The store pages ascend, so a page is read BACKWARD from the cursor
 * with one row more than asked: that row, when it comes, proves a next page and
 * is not sent. Every uri points back at the agent (see rampart/agent.h).
 */
#include "agent_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/codec.h"
#include "rampart/validate.h"

enum { LIMIT_MAX = 100 };

#define MIRROR_STATES                                                                    \
    ((1u << MODEL_STATE_SYNCED) | (1u << MODEL_STATE_DELETING) |                         \
     (1u << MODEL_STATE_ORPHANED))

typedef struct list_query {
    size_t limit;
    const char *before_id; /* NULL: from the newest */
} list_query;

/* One page, ready to assemble: encoded items newest first. */
typedef struct page_rows {
    char **items;
    size_t count;
    char next_before[MODEL_ID_MAX + 1]; /* "" on the last page */
} page_rows;

typedef struct kind {
    const char *path;   /* "ip_policy_rules" */
    const char *prefix; /* of its ids: "ipr" */
    const char *noun;   /* "ip policy rule" */
    error_code (*fetch)(const agent_listener *l, store *st, const list_query *q,
                        page_rows *out, error_info *err);
} kind;

/* ---- uris and rows ---- */

static bool shown(model_state s)
{
    return (MIRROR_STATES >> s) & 1u;
}

static void rule_uris(const agent_listener *l, model_rule *r)
{
    snprintf(r->uri, sizeof r->uri, "%s/ip_policy_rules/%s", l->base, r->id);
    snprintf(r->policy_uri, sizeof r->policy_uri, "%s/ip_policies/%s", l->base, r->policy_id);
}

static void cred_uri(const agent_listener *l, model_cred *c)
{
    snprintf(c->uri, sizeof c->uri, "%s/credentials/%s", l->base, c->id);
}

static error_code fetch_rules(const agent_listener *l, store *st, const list_query *q,
                              page_rows *out, error_info *err)
{
    model_rule *rows = calloc(q->limit + 1, sizeof *rows);
    if (!rows)
        return error_set(err, ERROR_NOMEM, "out of memory");
    store_query sq = {.sort = STORE_SORT_ID, .states = MIRROR_STATES};
    size_t n = 0;
    error_code rc = store_rule_page(st, &sq, q->before_id ? q->before_id : "", STORE_BACKWARD,
                                    q->limit + 1, rows, &n, err);
    size_t oldest = n > q->limit ? 1 : 0;
    for (size_t i = n; rc == ERROR_OK && i-- > oldest;) {
        rule_uris(l, &rows[i]);
        out->items[out->count] = codec_rule_encode(&rows[i], 0);
        if (!out->items[out->count++])
            rc = error_set(err, ERROR_NOMEM, "out of memory");
    }
    if (rc == ERROR_OK && oldest)
        snprintf(out->next_before, sizeof out->next_before, "%s", rows[oldest].id);
    free(rows);
    return rc;
}

static error_code fetch_creds(const agent_listener *l, store *st, const list_query *q,
                              page_rows *out, error_info *err)
{
    model_cred *rows = calloc(q->limit + 1, sizeof *rows);
    if (!rows)
        return error_set(err, ERROR_NOMEM, "out of memory");
    store_query sq = {.sort = STORE_SORT_ID, .states = MIRROR_STATES};
    size_t n = 0;
    error_code rc = store_cred_page(st, &sq, q->before_id ? q->before_id : "", STORE_BACKWARD,
                                    q->limit + 1, rows, &n, err);
    size_t oldest = n > q->limit ? 1 : 0;
    for (size_t i = n; rc == ERROR_OK && i-- > oldest;) {
        cred_uri(l, &rows[i]);
        out->items[out->count] = codec_cred_encode(&rows[i], 0); /* token: null */
        if (!out->items[out->count++])
            rc = error_set(err, ERROR_NOMEM, "out of memory");
    }
    if (rc == ERROR_OK && oldest)
        snprintf(out->next_before, sizeof out->next_before, "%s", rows[oldest].id);
    for (size_t i = 0; i < n; i++)
        model_cred_clear(&rows[i]);
    free(rows);
    return rc;
}

static const kind rules_kind = {"ip_policy_rules", "ipr", "ip policy rule", fetch_rules};
static const kind creds_kind = {"credentials", "cr", "credential", fetch_creds};

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

static bool parse_limit(const char *text, size_t *out)
{
    size_t len = strlen(text);
    if (len == 0 || len > 3 || strspn(text, "0123456789") != len)
        return false;
    long v = strtol(text, NULL, 10);
    if (v < 1 || v > LIMIT_MAX)
        return false;
    *out = (size_t)v;
    return true;
}

/* One argument; false (and `resp` holds the 400) when it is not acceptable. */
static bool take_param(const http_param *p, const kind *k, list_query *q, unsigned *seen,
                       http_response *resp)
{
    static const char *const names[] = {"limit", "before_id"};
    unsigned which = 0;
    while (which < 2 && strcmp(p->name, names[which]) != 0)
        which++;
    if (which == 2) {
        char name[48];
        agent_log_text(name, sizeof name, p->name);
        agent_error(resp, 400, "ERR_INVALID_QUERY", "unknown query parameter '%s': the "
                    "supported ones are limit and before_id", name);
        return false;
    }
    if (*seen & (1u << which)) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "query parameter %s given more than once",
                    names[which]);
        return false;
    }
    *seen |= 1u << which;
    if (which == 0 && !parse_limit(p->value, &q->limit)) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "limit must be a whole number from 1 to %d",
                    LIMIT_MAX);
        return false;
    }
    if (which == 1 && validate_id(p->value, k->prefix, "before_id", NULL) != ERROR_OK) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "before_id must be an id of this "
                    "collection (%s_…)", k->prefix);
        return false;
    }
    if (which == 1)
        q->before_id = p->value;
    return true;
}

static bool parse_query(const http_request *req, const kind *k, list_query *q,
                        http_response *resp)
{
    q->limit = LIMIT_MAX;
    q->before_id = NULL;
    if (req->query_nul || req->query_overflow) {
        agent_error(resp, 400, "ERR_INVALID_QUERY", "%s", req->query_nul
                    ? "a query parameter holds a NUL character"
                    : "too many query parameters: the supported ones are limit and before_id");
        return false;
    }
    unsigned seen = 0;
    for (size_t i = 0; i < req->nquery; i++) {
        if (!take_param(&req->query[i], k, q, &seen, resp))
            return false;
    }
    return true;
}

/* {"<path>":[items],"uri":…,"next_page_uri":…|null} */
static char *assemble(const agent_listener *l, const kind *k, const list_query *q,
                      const page_rows *rows)
{
    agent_json b = {0};
    agent_json_text(&b, "{\"");
    agent_json_text(&b, k->path);
    agent_json_text(&b, "\":[");
    for (size_t i = 0; i < rows->count; i++) {
        agent_json_text(&b, i ? "," : "");
        agent_json_text(&b, rows->items[i]);
    }
    char uri[AGENT_BASE_MAX + 256];
    snprintf(uri, sizeof uri, "%s/%s", l->base, k->path);
    agent_json_text(&b, "],\"uri\":");
    agent_json_string(&b, uri);
    agent_json_text(&b, ",\"next_page_uri\":");
    if (rows->next_before[0]) {
        snprintf(uri, sizeof uri, "%s/%s?before_id=%s&limit=%zu", l->base, k->path,
                 rows->next_before, q->limit);
        agent_json_string(&b, uri);
    } else {
        agent_json_text(&b, "null");
    }
    agent_json_text(&b, "}");
    return agent_json_take(&b);
}

static void list(const agent_listener *l, const kind *k, const http_request *req,
                 http_response *resp)
{
    list_query q;
    if (!version_ok(l, req, resp) || !parse_query(req, k, &q, resp))
        return;
    page_rows rows = {.items = calloc(q.limit + 1, sizeof(char *))};
    error_info e = {0};
    store *st = rows.items ? agent_store_take(l->ag, &e) : NULL;
    if (!rows.items)
        error_set(&e, ERROR_NOMEM, "out of memory");
    error_code rc = st ? k->fetch(l, st, &q, &rows, &e) : e.code;
    agent_store_give(l->ag, st, rc == ERROR_IO);
    if (rc == ERROR_OK)
        agent_reply(resp, 200, assemble(l, k, &q, &rows));
    else
        agent_store_error(resp, &e);
    for (size_t i = 0; i < rows.count; i++)
        free(rows.items[i]);
    free(rows.items);
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
    rule_uris(l, &rule);
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
        cred_uri(l, &cred);
        agent_reply(resp, 200, codec_cred_encode(&cred, 0));
    }
    model_cred_clear(&cred);
}
