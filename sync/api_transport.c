/*
 * The API client's transport: the only file that drives libcurl's transfers
 * (sync/api.c builds the requests and reads the replies; api_classify.c and
 * api_http.c are pure). Every transfer runs through the client's multi handle,
 * one at a time, so that a list page requested ahead (api_ahead_start) and the
 * requests after it share one connection cache. See sync/api_client.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "api_client.h"
#include "rampart/url.h"

#ifndef RAMPART_VERSION
#define RAMPART_VERSION "0"
#endif

#define DEFAULT_CONNECT_MS 10000L
#define DEFAULT_TOTAL_MS 60000L
/* A reply that moves slower than this for this long is timed out (a trickle). */
#define DEFAULT_LOW_SPEED_BPS 10L
#define DEFAULT_LOW_SPEED_S 20L

/* ---- libcurl result codes ---------------------------------------------- */

typedef enum curl_when { WHEN_BEFORE, WHEN_AFTER, WHEN_DEPENDS } curl_when;

typedef struct curl_rule {
    CURLcode code;
    curl_when when;
    const char *sent_text;     /* the message when the request went out */
} curl_rule;

/* Codes that say when they happened. Anything not listed (a timeout, a send
 * error, out of memory) depends on whether the request had started going out. */
static const curl_rule curl_rules[] = {
    {CURLE_UNSUPPORTED_PROTOCOL, WHEN_BEFORE, NULL},
    {CURLE_FAILED_INIT, WHEN_BEFORE, NULL},
    {CURLE_URL_MALFORMAT, WHEN_BEFORE, NULL},
    {CURLE_NOT_BUILT_IN, WHEN_BEFORE, NULL},
    {CURLE_COULDNT_RESOLVE_PROXY, WHEN_BEFORE, NULL},
    {CURLE_COULDNT_RESOLVE_HOST, WHEN_BEFORE, NULL},
    {CURLE_COULDNT_CONNECT, WHEN_BEFORE, NULL},
    {CURLE_SSL_CONNECT_ERROR, WHEN_BEFORE, NULL},
    {CURLE_PEER_FAILED_VERIFICATION, WHEN_BEFORE, NULL},
    {CURLE_SSL_CERTPROBLEM, WHEN_BEFORE, NULL},
    {CURLE_SSL_CIPHER, WHEN_BEFORE, NULL},
    {CURLE_SSL_ENGINE_NOTFOUND, WHEN_BEFORE, NULL},
    {CURLE_SSL_ENGINE_SETFAILED, WHEN_BEFORE, NULL},
    {CURLE_SSL_CACERT_BADFILE, WHEN_BEFORE, NULL},
    {CURLE_SSL_CRL_BADFILE, WHEN_BEFORE, NULL},
    {CURLE_SSL_ISSUER_ERROR, WHEN_BEFORE, NULL},
    {CURLE_SSL_PINNEDPUBKEYNOTMATCH, WHEN_BEFORE, NULL},
    {CURLE_SSL_INVALIDCERTSTATUS, WHEN_BEFORE, NULL},
    {CURLE_SSL_CLIENTCERT, WHEN_BEFORE, NULL},
    {CURLE_PROXY, WHEN_BEFORE, NULL},
    {CURLE_BAD_FUNCTION_ARGUMENT, WHEN_BEFORE, NULL},
    {CURLE_UNKNOWN_OPTION, WHEN_BEFORE, NULL},
    {CURLE_GOT_NOTHING, WHEN_AFTER, "the connection closed after the request was sent"},
    {CURLE_RECV_ERROR, WHEN_AFTER, "connection reset after the request was sent"},
    {CURLE_PARTIAL_FILE, WHEN_AFTER, "the reply was cut short"},
    {CURLE_WEIRD_SERVER_REPLY, WHEN_AFTER, "the reply was not valid HTTP"},
    {CURLE_HTTP2, WHEN_AFTER, "the HTTP/2 connection failed after the request was sent"},
    {CURLE_HTTP2_STREAM, WHEN_AFTER, "the HTTP/2 stream failed after the request was sent"},
    {CURLE_BAD_CONTENT_ENCODING, WHEN_AFTER, "the reply's compression was corrupt"},
    {CURLE_WRITE_ERROR, WHEN_AFTER, "the reply could not be kept"},
    {CURLE_FILESIZE_EXCEEDED, WHEN_AFTER, NULL}, /* said by transport_text */
    {CURLE_OPERATION_TIMEDOUT, WHEN_DEPENDS, "timed out waiting for the reply"},
    {CURLE_SEND_ERROR, WHEN_DEPENDS, "the connection failed while sending the request"},
};

static const curl_rule *curl_rule_for(int code)
{
    for (size_t i = 0; i < sizeof curl_rules / sizeof curl_rules[0]; i++) {
        if ((int)curl_rules[i].code == code)
            return &curl_rules[i];
    }
    return NULL;
}

api_net api_curl_net(int curl_code, bool sent)
{
    if (curl_code == CURLE_OK)
        return API_NET_REPLY;
    const curl_rule *r = curl_rule_for(curl_code);
    curl_when when = r ? r->when : WHEN_DEPENDS;
    if (when == WHEN_DEPENDS)
        when = sent ? WHEN_AFTER : WHEN_BEFORE;
    return when == WHEN_BEFORE ? API_NET_NOT_SENT : API_NET_LOST;
}

/* "could not reach the server: Failed to connect to …" or "connection reset
 * after the request was sent (Recv failure: …)", from libcurl's error buffer. */
static void transport_text(const api_client *c, CURLcode rc, api_net net, char *out,
                           size_t size)
{
    const char *detail = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
    const curl_rule *r = curl_rule_for((int)rc);
    if (c->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
        snprintf(out, size, "the reply was larger than %u MiB; it was dropped",
                 API_BODY_MAX / (1024u * 1024u));
    } else if (net == API_NET_NOT_SENT) {
        snprintf(out, size, "could not reach the server: %s", detail);
    } else if (r && r->sent_text) {
        snprintf(out, size, "%s (%s)", r->sent_text, detail);
    } else {
        snprintf(out, size, "the request failed after it was sent (%s)", detail);
    }
    api_scrub(out, c->key);
}

/* ---- callbacks ----------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
    api_client *c = userp;
    size_t n = size * nmemb;
    if (n > API_BODY_MAX - c->body.len) {
        c->too_big = true;
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    }
    return buf_append(&c->body, data, n) ? n : 0;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *userp)
{
    api_client *c = userp;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(line, "HTTP/", 5) == 0) {
        c->retry_after[0] = '\0'; /* a new reply (after a 1xx): forget the last one's */
        c->op_id[0] = '\0';
        c->etag[0] = '\0';
        c->no_store = false;
        return n;
    }
    const char *colon = memchr(line, ':', n);
    if (!colon)
        return n;
    size_t name_len = (size_t)(colon - line);
    const char *value = colon + 1;
    size_t value_len = n - name_len - 1;
    if (name_len == 11 && strncasecmp(line, "Retry-After", 11) == 0)
        api_take_header_value(value, value_len, c->retry_after, sizeof c->retry_after);
    else if (api_is_operation_id_header(line, name_len))
        api_take_operation_id(value, value_len, c->op_id, sizeof c->op_id);
    else if (name_len == 4 && strncasecmp(line, "ETag", 4) == 0)
        api_take_etag(value, value_len, c->etag, sizeof c->etag);
    else if (name_len == 13 && strncasecmp(line, "Cache-Control", 13) == 0)
        c->no_store = c->no_store || api_cache_control_no_store(value, value_len);
    return n;
}

/* ---- client -------------------------------------------------------------- */

static void free_headers(struct curl_slist *list)
{
    for (struct curl_slist *h = list; h; h = h->next)
        model_wipe(h->data, strlen(h->data));
    curl_slist_free_all(list);
}

/* Append "<a><b>" to `list`; on failure *ok turns false and the list is kept for
 * freeing. The line may hold the key: the stack copy is wiped. */
static struct curl_slist *add_header(struct curl_slist *list, const char *a, const char *b,
                                     bool *ok)
{
    char line[API_KEY_MAX + 64];
    snprintf(line, sizeof line, "%s%s", a, b);
    struct curl_slist *next = *ok ? curl_slist_append(list, line) : NULL;
    model_wipe(line, sizeof line);
    if (!next)
        *ok = false;
    return next ? next : list;
}

/* Two lists, so a request only switches a pointer: GET/DELETE, and POST/PATCH with
 * a body (Content-Type, and no "Expect: 100-continue", a round trip for nothing). */
static bool build_headers(api_client *c, const char *version_header)
{
    bool ok = true;
    struct curl_slist **lists[] = {&c->hdr_plain, &c->hdr_json};
    for (size_t i = 0; i < 2; i++) {
        struct curl_slist *h = NULL;
        h = add_header(h, "Authorization: Bearer ", c->key, &ok);
        h = add_header(h, version_header, ": 2", &ok);
        h = add_header(h, "User-Agent: rampart/", RAMPART_VERSION, &ok);
        h = add_header(h, "Accept: application/json", "", &ok);
        if (i == 1) {
            h = add_header(h, "Content-Type: application/json", "", &ok);
            h = add_header(h, "Expect:", "", &ok);
        }
        *lists[i] = h;
    }
    return ok;
}

bool api_cond_headers_set(api_client *c, const char *etag)
{
    bool ok = true;
    struct curl_slist *h = NULL;
    for (const struct curl_slist *p = c->hdr_plain; p && ok; p = p->next)
        h = add_header(h, p->data, "", &ok);
    h = add_header(h, "If-None-Match: ", etag, &ok);
    if (!ok) {
        free_headers(h);
        return false;
    }
    api_cond_headers_clear(c);
    c->hdr_cond = h;
    return true;
}

void api_cond_headers_clear(api_client *c)
{
    free_headers(c->hdr_cond);
    c->hdr_cond = NULL;
}

/* Options that hold for every request of the client's life. */
static bool set_fixed_options(api_client *c, const api_config *cfg)
{
    CURL *e = c->easy;
    long connect_ms = cfg->connect_timeout_ms ? cfg->connect_timeout_ms : DEFAULT_CONNECT_MS;
    long total_ms = cfg->total_timeout_ms ? cfg->total_timeout_ms : DEFAULT_TOTAL_MS;
    bool low_default = cfg->low_speed_bps <= 0 || cfg->low_speed_s <= 0;
    long low_bps = low_default ? DEFAULT_LOW_SPEED_BPS : cfg->low_speed_bps;
    long low_s = low_default ? DEFAULT_LOW_SPEED_S : cfg->low_speed_s;
    /* The scheme whitelist is the one option whose failure must stop us: an older
     * libcurl would follow a URL to any protocol it knows. */
    if (curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK)
        return false;
    bool ok = curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c->errbuf) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, total_ms) == CURLE_OK;
    c->total_ms = total_ms;
    ok = ok && curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, low_bps) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, low_s) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                                (curl_off_t)API_BODY_MAX) == CURLE_OK;
    /* Decompression, if the server offers it; the body cap counts decoded bytes. */
    ok = ok && curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "") == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_WRITEDATA, c) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header) == CURLE_OK;
    ok = ok && curl_easy_setopt(e, CURLOPT_HEADERDATA, c) == CURLE_OK;
    /* A server on this machine is never reached through a proxy from the
     * environment: over http the key would reach the proxy in clear. */
    url_parts o;
    if (ok && url_parse(c->base, "api_url", &o, NULL) == ERROR_OK && url_is_loopback(&o))
        ok = curl_easy_setopt(e, CURLOPT_PROXY, "") == CURLE_OK;
    return ok;
}

error_code api_global_init_wiping(error_info *err)
{
    if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, malloc, model_free_wiped,
                             model_realloc_wiped, strdup, calloc) != CURLE_OK)
        return error_set(err, ERROR_IO, "the HTTP library could not start");
    return ERROR_OK;
}

error_code api_client_new(const api_config *cfg, api_client **out, error_info *err)
{
    *out = NULL;
    error_code rc = api_check_config(cfg, err);
    if (rc != ERROR_OK)
        return rc;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return error_set(err, ERROR_IO, "the HTTP library could not start");
    api_client *c = calloc(1, sizeof *c);
    if (!c) {
        curl_global_cleanup();
        return error_set(err, ERROR_NOMEM, "out of memory");
    }
    c->body.wipe = true; /* a create reply carries the credential's token */
    const char *vh = api_version_header(cfg);
    c->base = strndup(cfg->base_url, api_base_len(cfg->base_url));
    c->key = strdup(cfg->api_key);
    c->pages = cfg->pages;
    c->easy = curl_easy_init();
    c->multi = curl_multi_init();
    if (!c->base || !c->key || !c->easy || !c->multi || !build_headers(c, vh)) {
        api_client_free(c);
        return error_set(err, ERROR_NOMEM, "out of memory setting up the HTTP client");
    }
    if (!set_fixed_options(c, cfg)) {
        api_client_free(c);
        return error_set(err, ERROR_CONFIG,
                         "the HTTP library refused a setting (libcurl 7.85 or newer is needed)");
    }
    *out = c;
    return ERROR_OK;
}

void api_client_free(api_client *c)
{
    if (!c)
        return;
    if (c->easy && c->multi)
        api_ahead_drop(c);
    if (c->multi)
        curl_multi_cleanup(c->multi);
    if (c->easy)
        curl_easy_cleanup(c->easy);
    free_headers(c->hdr_plain);
    free_headers(c->hdr_json);
    free_headers(c->hdr_cond);
    if (c->key) {
        model_wipe(c->key, strlen(c->key));
        free(c->key);
    }
    buf_free(&c->body);
    free(c->base);
    free(c);
    curl_global_cleanup();
}

/* ---- one request --------------------------------------------------------- */

/* Per-request options. A create goes out on a new connection that is closed
 * after it: on a reused connection that died, libcurl would silently send the
 * POST again and could create the object twice. GET, DELETE and PATCH (an edit
 * sent twice with the same values is the same edit) reuse. */
static CURLcode set_method(api_client *c, api_method m, const char *payload)
{
    CURL *e = c->easy;
    bool post = m == API_POST;
    bool body = post || m == API_PATCH;
    CURLcode rc = curl_easy_setopt(e, CURLOPT_URL, c->url);
    if (rc != CURLE_OK)
        return rc;
    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, post ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, post ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, body         ? c->hdr_json
                                            : c->hdr_cond ? c->hdr_cond
                                                          : c->hdr_plain);
    if (body) {
        /* A body makes the request a POST; PATCH only renames the method. */
        rc = curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, post ? NULL : "PATCH");
        if (rc != CURLE_OK)
            return rc;
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
        return curl_easy_setopt(e, CURLOPT_POSTFIELDS, payload);
    }
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    return curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m == API_DELETE ? "DELETE" : NULL);
}

/* Undo what only one request should have: the next one starts clean. */
static void reset_method(api_client *c)
{
    curl_easy_setopt(c->easy, CURLOPT_POSTFIELDS, (char *)NULL);
    curl_easy_setopt(c->easy, CURLOPT_FRESH_CONNECT, 0L);
    curl_easy_setopt(c->easy, CURLOPT_FORBID_REUSE, 0L);
    curl_easy_setopt(c->easy, CURLOPT_CUSTOMREQUEST, (char *)NULL);
    curl_easy_setopt(c->easy, CURLOPT_HTTPGET, 1L);
}

/* Whether any of the request may have left: libcurl stamps the pre-transfer time
 * just before it starts sending, and counts the request bytes it wrote. */
static bool request_started(CURL *e)
{
    curl_off_t pretransfer = 0;
    long request_size = 0;
    if (curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pretransfer) != CURLE_OK ||
        curl_easy_getinfo(e, CURLINFO_REQUEST_SIZE, &request_size) != CURLE_OK)
        return true; /* cannot tell: assume the worst */
    return pretransfer > 0 || request_size > 0;
}

/* ---- transfers over the multi handle -------------------------------------- */

/* A multi-interface failure as a result code: `started` (the transfer may have
 * sent something) gives one whose classification asks whether the request had
 * left (api_curl_net), never a plain "not sent". */
static CURLcode multi_failed(CURLMcode mc, bool started)
{
    if (mc == CURLM_OUT_OF_MEMORY)
        return CURLE_OUT_OF_MEMORY;
    return started ? CURLE_UNRECOVERABLE_POLL : CURLE_BAD_FUNCTION_ARGUMENT;
}

/* Take the easy handle out of the multi handle. Mid-transfer this aborts it, and
 * libcurl closes a connection whose reply was not read to its end. */
static void transfer_stop(api_client *c)
{
    if (!c->in_multi)
        return;
    curl_multi_remove_handle(c->multi, c->easy);
    c->in_multi = false;
}

/* Begin the transfer set up on the easy handle and move it as far as it goes
 * without waiting: on a kept-alive connection, the request is sent. *added says
 * whether a transfer began (its info is fresh). */
static CURLcode transfer_start(api_client *c, bool *added)
{
    *added = false;
    long limit = c->deadline_ms > 0 && c->deadline_ms < c->total_ms ? c->deadline_ms
                                                                   : c->total_ms;
    curl_easy_setopt(c->easy, CURLOPT_TIMEOUT_MS, limit);
    CURLMcode mc = curl_multi_add_handle(c->multi, c->easy);
    if (mc != CURLM_OK)
        return multi_failed(mc, false);
    c->in_multi = *added = true;
    int running = 0;
    mc = curl_multi_perform(c->multi, &running);
    return mc == CURLM_OK ? CURLE_OK : multi_failed(mc, true);
}

/* The transfer's result, when it has ended. */
static bool transfer_done(api_client *c, CURLcode *rc)
{
    int left = 0;
    CURLMsg *m;
    while ((m = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (m->msg == CURLMSG_DONE && m->easy_handle == c->easy) {
            *rc = m->data.result;
            return true;
        }
    }
    return false;
}

/* Wait for the transfer to end, as curl_easy_perform does (its timeouts and
 * low-speed limit are the handle's), and take the handle out again. */
static CURLcode transfer_finish(api_client *c)
{
    CURLcode rc = CURLE_OK;
    while (!transfer_done(c, &rc)) {
        int running = 0;
        CURLMcode mc = curl_multi_poll(c->multi, NULL, 0, 1000, NULL);
        if (mc == CURLM_OK)
            mc = curl_multi_perform(c->multi, &running);
        if (mc != CURLM_OK) {
            rc = multi_failed(mc, true);
            break;
        }
        if (running == 0 && !transfer_done(c, &rc)) {
            rc = CURLE_UNRECOVERABLE_POLL; /* ended without a result: cannot happen */
            break;
        }
        if (running == 0)
            break;
    }
    transfer_stop(c);
    return rc;
}

/* ---- requests ------------------------------------------------------------- */

/* Forget what the last request left in the client. */
static void call_begin(api_client *c)
{
    c->errbuf[0] = '\0';
    c->retry_after[0] = '\0';
    c->op_id[0] = '\0';
    c->etag[0] = '\0';
    c->no_store = false;
    c->reused = false;
    buf_reset(&c->body);
    c->too_big = false;
}

/* Fill `call` from a transfer that ended with `rc` (`started`: one began, so its
 * info is this request's, not a stale one's). */
static void call_end(api_client *c, CURLcode rc, bool started, api_call *call)
{
    memset(call, 0, sizeof *call);
    long status = 0;
    if (started)
        curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
    api_exchange *x = &call->x;
    x->net = api_curl_net((int)rc, started && rc != CURLE_OK && request_started(c->easy));
    x->timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    if (rc != CURLE_OK)
        transport_text(c, rc, x->net, call->transport, sizeof call->transport);
    reset_method(c);
    x->transport_msg = call->transport;
    x->status = status >= 200 ? status : 0;
    x->body = c->body.data;
    x->body_len = c->body.len;
    x->retry_after = c->retry_after[0] ? c->retry_after : NULL;
    x->header_op_id = c->op_id[0] ? c->op_id : NULL;
    x->now = time(NULL);
    x->secret = c->key;
}

void api_perform(api_client *c, api_method m, const char *payload, api_call *call)
{
    api_ahead_drop(c);
    call_begin(c);
    bool started = false;
    CURLcode rc = set_method(c, m, payload);
    if (rc == CURLE_OK)
        rc = transfer_start(c, &started);
    if (rc == CURLE_OK)
        rc = transfer_finish(c);
    transfer_stop(c);
    call_end(c, rc, started, call);
}

/* ---- a list page requested ahead ------------------------------------------ */

void api_ahead_drop(api_client *c)
{
    if (!c->ahead_url[0])
        return;
    c->ahead_url[0] = '\0';
    transfer_stop(c);
    reset_method(c);
    buf_reset(&c->body);
}

bool api_ahead_start(api_client *c)
{
    api_ahead_drop(c);
    call_begin(c);
    bool started = false;
    if (set_method(c, API_GET, NULL) != CURLE_OK || transfer_start(c, &started) != CURLE_OK) {
        transfer_stop(c);
        reset_method(c);
        return false;
    }
    memcpy(c->ahead_url, c->url, sizeof c->ahead_url);
    return true;
}

bool api_ahead_take(api_client *c, api_call *call)
{
    if (!c->ahead_url[0])
        return false;
    if (strcmp(c->ahead_url, c->url) != 0) {
        api_ahead_drop(c);
        return false;
    }
    c->ahead_url[0] = '\0';
    CURLcode rc = transfer_finish(c);
    call_end(c, rc, true, call);
    return true;
}
