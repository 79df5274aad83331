/*
 * agent: who may ask. Every request passes the gate before any reply (headers
 * only): relayed or browser-made requests, and ambiguous ones (Host or
 * Authorization twice), are refused on every listener, then a
 * unix peer's uid (SO_PEERCRED; the route's row in agent_routes says whether it
 * matters) or a TCP peer's Host and key are checked, then the peer's rate. Also
 * the error replies, in the remote API's shape.
 */
#include "agent_internal.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "rampart/codec.h"
#include "rampart/serve_reply.h"
#include "rampart/ids.h"

/* ---- replies ---- */

/* On every reply, not only those holding a token: nothing this endpoint says is
 * worth keeping, and a cache must never hold a token reply by mistake. Set once
 * (an error may follow another on the same response). */
static void no_store(http_response *resp)
{
    for (size_t i = 0; i < resp->nheaders; i++) {
        if (strcmp(resp->headers[i].name, "Cache-Control") == 0)
            return;
    }
    http_response_header(resp, "Cache-Control", "no-store");
}

void agent_error(http_response *resp, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    serve_error(resp, status, code, fmt, ap);
    va_end(ap);
    no_store(resp);
}

void agent_reply(http_response *resp, int status, char *json)
{
    serve_json(resp, status, json);
    no_store(resp);
}

void agent_store_error(http_response *resp, const error_info *e)
{
    if (e->code == ERROR_NOT_FOUND) {
        agent_error(resp, 404, "ERR_NOT_FOUND", "%s", e->msg);
        return;
    }
    agent_error(resp, 500, "ERR_INTERNAL", "the cache cannot be read: %s", e->msg);
}

void agent_layer_error(void *ctx, const http_request *req, int status, const char *msg,
                       http_response *resp)
{
    (void)ctx, (void)req;
    if (status == 405)
        msg = "this endpoint is read-only: only GET is answered here";
    agent_error(resp, status, serve_layer_code(status), "%s", msg);
}

/* ---- rate ---- */

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Refill `b` at `rate` per second up to `burst`, then take one token: 0 when
 * taken, else the seconds until one is there (nothing taken). */
static double bucket_take(agent_bucket *b, double rate, double burst, double now)
{
    b->tokens += (now - b->last) * rate;
    if (b->tokens > burst)
        b->tokens = burst;
    b->last = now;
    if (b->tokens >= 1.0) {
        b->tokens -= 1.0;
        return 0;
    }
    return (1.0 - b->tokens) / rate;
}

static size_t peer_hash(const char *s)
{
    size_t h = 5381;
    for (; *s; s++)
        h = h * 33 + (unsigned char)*s;
    return h;
}

/* The peer's slot: its own, else a free one, else the one idle the longest among
 * a few probed (a forgotten peer starts again with a full bucket). The table has a
 * fixed size: no number of peers makes it grow. */
static agent_rate_slot *rate_slot(agent *ag, const char *peer, double now)
{
    enum { PROBES = 8 };
    size_t h = peer_hash(peer);
    agent_rate_slot *victim = NULL;
    for (size_t i = 0; i < PROBES; i++) {
        agent_rate_slot *s = &ag->slots[(h + i) % AGENT_RATE_SLOTS];
        if (strcmp(s->peer, peer) == 0)
            return s;
        if (!victim || (victim->peer[0] && (!s->peer[0] || s->bucket.last < victim->bucket.last)))
            victim = s;
    }
    snprintf(victim->peer, sizeof victim->peer, "%s", peer);
    victim->bucket = (agent_bucket){.tokens = 2.0 * ag->rate, .last = now};
    return victim;
}

/* Token bucket: `rate` per second, a burst of twice that. 0 when the request may
 * go on, else the whole seconds to wait. */
static unsigned rate_wait(agent *ag, const char *peer)
{
    if (ag->rate == 0)
        return 0;
    double now = monotonic_s();
    pthread_mutex_lock(&ag->rate_lock);
    agent_rate_slot *s = rate_slot(ag, peer, now);
    double wait = bucket_take(&s->bucket, ag->rate, 2.0 * ag->rate, now);
    pthread_mutex_unlock(&ag->rate_lock);
    return (unsigned)ceil(wait);
}

/* Lines about refusals: a burst of REFUSAL_LINES_BURST, then REFUSAL_LINES_PER_S.
 * True when this one may be logged; *dropped then says how many were not since
 * the last line. (Only lookups are audited without limit: they passed the gate.) */
enum { REFUSAL_LINES_PER_S = 5, REFUSAL_LINES_BURST = 20 };

static bool refusal_loggable(agent *ag, size_t *dropped)
{
    double now = monotonic_s();
    pthread_mutex_lock(&ag->rate_lock);
    agent_bucket *b = &ag->refusal_lines;
    if (b->last == 0) /* the first refusal: a full burst */
        *b = (agent_bucket){.tokens = REFUSAL_LINES_BURST, .last = now};
    bool ok = bucket_take(b, REFUSAL_LINES_PER_S, REFUSAL_LINES_BURST, now) == 0;
    if (ok) {
        *dropped = ag->refusal_lines_dropped;
        ag->refusal_lines_dropped = 0;
    } else {
        ag->refusal_lines_dropped++;
    }
    pthread_mutex_unlock(&ag->rate_lock);
    return ok;
}

/* ---- refusals ---- */

static bool refuse(agent_listener *l, const http_request *req, http_response *resp,
                   int status, const char *code, const char *msg)
{
    atomic_fetch_add(&l->ag->refused, 1);
    agent_error(resp, status, code, "%s", msg);
    size_t dropped = 0;
    if (!refusal_loggable(l->ag, &dropped))
        return false;
    char peer[80], path[96], more[64] = "";
    if (l->tcp) /* not known to hold the key yet */
        snprintf(peer, sizeof peer, "tcp:%s", req->peer.addr);
    else
        agent_peer_name(req, peer, sizeof peer);
    agent_log_text(path, sizeof path, req->path);
    if (dropped)
        snprintf(more, sizeof more, " (%zu earlier refusals not logged)", dropped);
    agent_log(l->ag, "refused peer=%s path=\"%s\" status=%d %s%s", peer, path, status, code,
              more);
    return false;
}

/* The headers that decide whether a request is taken, one table. A proxy or a
 * browser adds the first ones: such a request was relayed (SSRF) or comes from a
 * web page (DNS rebinding, CSRF), never from an agent: 403. The last ones must be
 * unambiguous: sent twice, which one the gate reads (the first) and which one a
 * relay in front acted on may differ: 400. */
typedef enum header_rule { HEADER_ABSENT, HEADER_ONCE } header_rule;

static const struct header_check {
    const char *name;
    header_rule rule;
} header_checks[] = {
    {"X-Forwarded-For", HEADER_ABSENT},   {"X-Forwarded-Host", HEADER_ABSENT},
    {"X-Forwarded-Proto", HEADER_ABSENT}, {"X-Real-IP", HEADER_ABSENT},
    {"X-Client-IP", HEADER_ABSENT},       {"True-Client-IP", HEADER_ABSENT},
    {"Forwarded", HEADER_ABSENT},         {"Via", HEADER_ABSENT},
    {"Origin", HEADER_ABSENT},            {"Sec-Fetch-Site", HEADER_ABSENT},
    {"Sec-Fetch-Mode", HEADER_ABSENT},
    {"Host", HEADER_ONCE},                {"Authorization", HEADER_ONCE},
};

enum { HEADER_CHECKS = sizeof header_checks / sizeof header_checks[0] };

const char *agent_refused_header(size_t i)
{
    for (size_t k = 0; k < HEADER_CHECKS; k++) {
        if (header_checks[k].rule == HEADER_ABSENT && i-- == 0)
            return header_checks[k].name;
    }
    return NULL;
}

/* The first row of the table the request breaks, or NULL. One pass over the
 * request's headers for the whole table: it runs on every request. */
static const struct header_check *header_broken(const http_request *req)
{
    const char *names[HEADER_CHECKS];
    for (size_t i = 0; i < HEADER_CHECKS; i++)
        names[i] = header_checks[i].name;
    size_t counts[HEADER_CHECKS];
    http_request_header_counts(req, names, HEADER_CHECKS, counts);
    for (size_t i = 0; i < HEADER_CHECKS; i++) {
        const struct header_check *c = &header_checks[i];
        if (counts[i] > (c->rule == HEADER_ONCE ? 1u : 0u))
            return c;
    }
    return NULL;
}

static bool refuse_header(agent_listener *l, const http_request *req, http_response *resp,
                          const struct header_check *c)
{
    char msg[192];
    if (c->rule == HEADER_ONCE) {
        snprintf(msg, sizeof msg, "%s was sent more than once: send it once", c->name);
        return refuse(l, req, resp, 400, "ERR_BAD_REQUEST", msg);
    }
    snprintf(msg, sizeof msg, "requests carrying %s are refused: the agent endpoint "
             "answers local programs only, never relayed or browser requests", c->name);
    return refuse(l, req, resp, 403, "ERR_FORBIDDEN", msg);
}

/* A dotted quad 127.x.y.z (inet_pton: exactly four decimal parts, no leading
 * zeros, so "127.1" or "0x7f.0.0.1" are not taken). */
static bool loopback_v4(const char *h, size_t len)
{
    char text[INET_ADDRSTRLEN];
    struct in_addr a;
    if (len >= sizeof text)
        return false;
    memcpy(text, h, len);
    text[len] = '\0';
    return inet_pton(AF_INET, text, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

/* Host: "localhost", 127.x.y.z or "[::1]", each with an optional ":PORT". */
static bool loopback_host(const char *host)
{
    if (!host)
        return false;
    size_t len = strlen(host);
    size_t name = len;
    if (host[0] == '[') {
        const char *close = strchr(host, ']');
        if (!close)
            return false;
        name = (size_t)(close - host) + 1;
    } else {
        const char *colon = strchr(host, ':');
        if (colon)
            name = (size_t)(colon - host);
    }
    const char *port = host + name;
    if (*port && (*port != ':' || !port[1] || strspn(port + 1, "0123456789") != strlen(port + 1) ||
                  strlen(port + 1) > 5))
        return false;
    if (name == 9 && strncasecmp(host, "localhost", 9) == 0)
        return true;
    if (name == 5 && strncmp(host, "[::1]", 5) == 0)
        return true;
    return loopback_v4(host, name);
}

static bool uid_allowed(const agent *ag, long uid)
{
    for (size_t i = 0; i < ag->nuids; i++) {
        if (ag->uids[i] == uid)
            return true;
    }
    return false;
}

/* ---- the gate ---- */

/* The route's row says (agent_routes); a request no route takes needs an allowed
 * uid, so that a stranger learns nothing, not even which paths exist. */
static agent_auth route_auth(const http_request *req)
{
    const agent_route_info *info = req->route_data;
    return info ? info->auth : AGENT_AUTH_ALLOWED_UID;
}

bool agent_gate(void *ctx, const http_request *req, http_response *resp)
{
    agent_listener *l = ctx;
    agent *ag = l->ag;
    const struct header_check *broken = header_broken(req);
    if (broken)
        return refuse_header(l, req, resp, broken);
    if (l->tcp) {
        if (!loopback_host(http_request_header(req, "Host")))
            return refuse(l, req, resp, 403, "ERR_FORBIDDEN", "the Host header must name "
                          "this machine's loopback (localhost, 127.0.0.1 or [::1])");
        if (!serve_bearer_ok(http_request_header(req, "Authorization"), ag->key, ag->key_len)) {
            http_response_header(resp, "WWW-Authenticate", "Bearer");
            return refuse(l, req, resp, 401, "ERR_UNAUTHORIZED", "missing or wrong key: send "
                          "Authorization: Bearer <the agent's key file>");
        }
        http_request_admit(req); /* the key: no head deadline, never cut for room */
    } else if (route_auth(req) == AGENT_AUTH_ALLOWED_UID && !uid_allowed(ag, req->peer.uid)) {
        char msg[128];
        snprintf(msg, sizeof msg, "uid %ld may not ask this agent (start it with "
                 "--allow-uid %ld to allow it)", req->peer.uid, req->peer.uid);
        return refuse(l, req, resp, 403, "ERR_FORBIDDEN", msg);
    }
    char peer[80];
    agent_peer_name(req, peer, sizeof peer);
    unsigned wait = rate_wait(ag, peer);
    if (wait) {
        char secs[16];
        snprintf(secs, sizeof secs, "%u", wait);
        http_response_header(resp, "Retry-After", secs);
        char msg[96];
        snprintf(msg, sizeof msg, "too many requests: at most %u per second, retry in %u s",
                 ag->rate, wait);
        return refuse(l, req, resp, 429, "ERR_RATE_LIMITED", msg);
    }
    return true;
}
