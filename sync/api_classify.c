/* Outcome classification and user messages of the API client (no libcurl here). */
#include <stdio.h>
#include <string.h>

#include "api_internal.h"
#include "rampart/codec.h"
#include "rampart/model.h"
#include "rampart/utf8.h"

/* A text cut to fit a buffer (a server's message is kept to 512 bytes) may end
 * with the start of an echoed secret: mask a tail that is a prefix of it. */
static void mask_cut_secret(char *text, size_t len, const char *secret, size_t secret_len)
{
    enum { SHORTEST = 4 }; /* shorter tails say next to nothing of a secret */
    for (size_t k = secret_len - 1 < len ? secret_len - 1 : len; k >= SHORTEST; k--) {
        if (memcmp(text + len - k, secret, k) == 0) {
            memset(text + len - k, '*', k);
            return;
        }
    }
}

void api_scrub(char *text, const char *secret)
{
    if (!text)
        return;
    size_t secret_len = secret ? strlen(secret) : 0;
    size_t len = strlen(text);
    if (secret_len >= 4) {
        for (char *hit = strstr(text, secret); hit; hit = strstr(hit + secret_len, secret))
            memset(hit, '*', secret_len);
        mask_cut_secret(text, len, secret, secret_len);
    }
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x20 || c == 0x7f) {
            text[i++] = ' ';
            continue;
        }
        uint32_t cp;
        int n = utf8_decode(text + i, len - i, &cp);
        if (n < 0) {
            text[i++] = '?';
            continue;
        }
        i += (size_t)n;
    }
}

/* snprintf into `dst`, cut at a UTF-8 boundary when it does not fit. */
static void put_text(char *dst, size_t size, const char *a, const char *b, const char *c)
{
    char tmp[2048];
    snprintf(tmp, sizeof tmp, "%s%s%s", a ? a : "", b ? b : "", c ? c : "");
    model_copy_text(dst, size, tmp);
}

void api_error_message(long status, const char *body, size_t len, const char *header_op_id,
                       const char *hint, const char *secret, sync_result *res)
{
    codec_api_error e;
    memset(&e, 0, sizeof e);
    bool parsed = body && len && codec_api_error_decode(body, len, &e, NULL) == ERROR_OK;
    char op_id[MODEL_ID_MAX + 1] = "";
    if (parsed && e.operation_id[0])
        api_take_operation_id(e.operation_id, strlen(e.operation_id), op_id, sizeof op_id);
    if (!op_id[0] && header_op_id)
        api_take_operation_id(header_op_id, strlen(header_op_id), op_id, sizeof op_id);
    char text[600];
    if (parsed) {
        model_copy_text(res->error_code, sizeof res->error_code, e.error_code);
        api_scrub(res->error_code, secret);
        model_copy_text(res->server_msg, sizeof res->server_msg, e.msg);
        api_scrub(res->server_msg, secret);
    }
    if (parsed && e.msg[0]) {
        model_copy_text(text, sizeof text, e.msg);
        api_scrub(text, secret);
    } else {
        snprintf(text, sizeof text, "HTTP %ld from the server%s", status, hint ? hint : "");
    }
    char suffix[MODEL_ID_MAX + 16] = "";
    if (op_id[0])
        snprintf(suffix, sizeof suffix, " (operation %s)", op_id);
    /* The operation id must survive truncation: it is what support asks for. */
    size_t msg_size = sizeof res->message;
    size_t room = msg_size > strlen(suffix) + 1 ? msg_size - strlen(suffix) : 1;
    char head[600];
    model_copy_text(head, room < sizeof head ? room : sizeof head, text);
    put_text(res->message, msg_size, head, suffix, NULL);
    model_copy_text(res->operation_id, sizeof res->operation_id, op_id);
}

/* What each range of statuses means; the first row that matches wins. */
typedef struct status_rule {
    long lo, hi;
    sync_outcome outcome;
    sync_failure_kind failure;
    const char *hint; /* after "HTTP <n> from the server" when the body says nothing */
    bool retry_after;
} status_rule;

static const status_rule status_rules[] = {
    {200, 299, SYNC_OK, SYNC_FAILURE_NONE, NULL, false},
    {300, 399, SYNC_REJECTED, SYNC_FAILURE_REJECTED,
     ": a redirect, which is not followed (check api_url)", false},
    {401, 401, SYNC_AUTH, SYNC_FAILURE_AUTH, ": the API key was not accepted", false},
    {403, 403, SYNC_AUTH, SYNC_FAILURE_AUTH, ": the API key may not do this", false},
    {404, 404, SYNC_NOT_FOUND, SYNC_FAILURE_NOT_FOUND, ": not found", false},
    {429, 429, SYNC_RATE_LIMITED, SYNC_FAILURE_RATE_LIMITED, ": too many requests", true},
    {400, 499, SYNC_REJECTED, SYNC_FAILURE_REJECTED, NULL, false},
    {503, 503, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR, NULL, true},
    {500, 599, SYNC_AMBIGUOUS, SYNC_FAILURE_SERVER_ERROR, NULL, false},
};

static const status_rule *rule_for(long status)
{
    for (size_t i = 0; i < sizeof status_rules / sizeof status_rules[0]; i++) {
        if (status >= status_rules[i].lo && status <= status_rules[i].hi)
            return &status_rules[i];
    }
    return NULL;
}

static void start_result(const api_exchange *x, sync_result *res)
{
    memset(res, 0, sizeof *res);
    res->http_status = x->status >= 100 && x->status <= 999 ? (int)x->status : 0;
    res->retry_after_s = -1;
    if (x->header_op_id)
        api_take_operation_id(x->header_op_id, strlen(x->header_op_id), res->operation_id,
                              sizeof res->operation_id);
}

static sync_outcome transport_failure(const api_exchange *x, sync_result *res)
{
    res->outcome = x->net == API_NET_NOT_SENT ? SYNC_NOT_SENT : SYNC_AMBIGUOUS;
    res->failure = x->net == API_NET_NOT_SENT ? SYNC_FAILURE_UNREACHABLE
                   : x->timed_out             ? SYNC_FAILURE_TIMED_OUT
                                              : SYNC_FAILURE_CONNECTION_LOST;
    const char *what = x->transport_msg && x->transport_msg[0]
                           ? x->transport_msg
                           : "the connection failed";
    put_text(res->message, sizeof res->message, what, NULL, NULL);
    api_scrub(res->message, x->secret);
    return res->outcome;
}

static sync_outcome undecodable(const api_exchange *x, sync_result *res)
{
    char head[64];
    snprintf(head, sizeof head, "the server answered HTTP %ld but its reply ", x->status);
    const char *why = x->decode_msg && x->decode_msg[0] ? x->decode_msg : "was empty";
    put_text(res->message, sizeof res->message, head, "could not be read: ", why);
    api_scrub(res->message, x->secret);
    res->outcome = SYNC_AMBIGUOUS;
    res->failure = SYNC_FAILURE_BAD_REPLY;
    return res->outcome;
}

sync_outcome api_classify(const api_exchange *x, sync_result *res)
{
    start_result(x, res);
    const status_rule *rule = rule_for(x->status);
    bool definite = rule && x->status >= 400 && x->status <= 499;
    if (x->net != API_NET_REPLY && !definite)
        return transport_failure(x, res);
    if (!rule) {
        char text[64];
        snprintf(text, sizeof text, "unexpected HTTP status %ld from the server", x->status);
        put_text(res->message, sizeof res->message, text, NULL, NULL);
        res->outcome = SYNC_AMBIGUOUS;
        res->failure = SYNC_FAILURE_SERVER_ERROR;
        return res->outcome;
    }
    if (rule->outcome == SYNC_OK)
        return x->decoded ? (res->outcome = SYNC_OK) : undecodable(x, res);
    res->outcome = rule->outcome;
    res->failure = rule->failure;
    if (rule->retry_after)
        res->retry_after_s = api_retry_after(x->retry_after, x->now);
    /* A body cut mid-way by the transport is not worth decoding. */
    bool whole = x->net == API_NET_REPLY;
    api_error_message(x->status, whole ? x->body : NULL, whole ? x->body_len : 0,
                      x->header_op_id, rule->hint, x->secret, res);
    return res->outcome;
}
