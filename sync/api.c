/* The remote API client: the only file that drives libcurl's transport. Pure parts
 * (outcome classification, messages, Retry-After, page URLs) are in api_classify.c
 * and api_http.c; URLs are read by rampart/url.h, with libcurl's own parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "api_internal.h"
#include "rampart/api.h"
#include "rampart/buf.h"
#include "rampart/codec.h"
#include "rampart/kind.h"
#include "rampart/url.h"
#include "rampart/validate.h"

#ifndef RAMPART_VERSION
#define RAMPART_VERSION "0"
#endif

#define DEFAULT_CONNECT_MS 10000L
#define DEFAULT_TOTAL_MS 60000L
/* A reply that moves slower than this for this long is timed out (a trickle). */
#define DEFAULT_LOW_SPEED_BPS 10L
#define DEFAULT_LOW_SPEED_S 20L

struct api_client {
    CURL *easy;
    char *base;                   /* without a trailing slash */
    char *key;                    /* wiped on free */
    struct curl_slist *hdr_plain; /* GET/DELETE */
    struct curl_slist *hdr_json;  /* POST/PATCH: adds Content-Type, drops Expect */
    char errbuf[CURL_ERROR_SIZE];
    buf_t body;                   /* reply body of the last request (wiping) */
    bool too_big;
    char retry_after[64];
    char op_id[MODEL_ID_MAX + 1];
    char url[MODEL_URI_MAX + 64];
    /* Conditional page GETs (api_page_cache), when `pages` is set. */
    const api_page_cache *pages;
    struct curl_slist *hdr_cond;  /* hdr_plain and If-None-Match, for one GET */
    char etag[API_ETAG_MAX];      /* the last reply's entity tag ("" none) */
    bool no_store;                /* the last reply said Cache-Control: no-store */
    bool reused;                  /* the last page is a kept body (a 304) */
    char refetch[MODEL_URI_MAX + 64]; /* a kept body that did not decode: ask again */
    long long listing_ms[MODEL_KIND_COUNT]; /* when each listing's first page went */
};

typedef enum api_method { API_GET, API_POST, API_PATCH, API_DELETE } api_method;

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
    if (!c->base || !c->key || !c->easy || !build_headers(c, vh)) {
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
    if (c->easy)
        curl_easy_cleanup(c->easy);
    free_headers(c->hdr_plain);
    free_headers(c->hdr_json);
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

typedef struct api_call {
    api_exchange x;
    char transport[CURL_ERROR_SIZE + 128];
} api_call;

/* Send one request to c->url and fill `call` for classification (the caller
 * decodes a 2xx body and sets x.decoded). */
static void perform(api_client *c, api_method m, const char *payload, api_call *call)
{
    memset(call, 0, sizeof *call);
    c->errbuf[0] = '\0';
    c->retry_after[0] = '\0';
    c->op_id[0] = '\0';
    c->etag[0] = '\0';
    c->no_store = false;
    c->reused = false;
    buf_reset(&c->body);
    c->too_big = false;
    CURLcode rc = set_method(c, m, payload);
    bool performed = rc == CURLE_OK;
    if (performed)
        rc = curl_easy_perform(c->easy);
    /* Transfer info is reset when a transfer starts: without one it is stale. */
    long status = 0;
    if (performed)
        curl_easy_getinfo(c->easy, CURLINFO_RESPONSE_CODE, &status);
    api_exchange *x = &call->x;
    x->net = api_curl_net((int)rc, performed && rc != CURLE_OK && request_started(c->easy));
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

static bool is_2xx(const api_call *call)
{
    return call->x.net == API_NET_REPLY && call->x.status >= 200 && call->x.status <= 299;
}

/* Classify, then wipe the reply: a create reply holds a token. */
static sync_outcome finish(api_client *c, api_call *call, sync_result *res)
{
    sync_outcome o = api_classify(&call->x, res);
    buf_reset(&c->body);
    return o;
}

static sync_outcome refuse(sync_result *res, sync_outcome outcome, const error_info *why)
{
    memset(res, 0, sizeof *res);
    res->outcome = outcome;
    res->failure = sync_outcome_failure(outcome);
    res->retry_after_s = -1;
    model_copy_text(res->message, sizeof res->message, why->msg);
    return outcome;
}

/* Fits: the base is at most MODEL_URI_MAX - 64 bytes and an id MODEL_ID_MAX. */
static void set_url(api_client *c, const char *path, const char *id)
{
    snprintf(c->url, sizeof c->url, "%s%s%s%s", c->base, path, id ? "/" : "", id ? id : "");
}

/* ---- the operations ------------------------------------------------------ */

/* Record why a 2xx body is not usable; the classifier makes it AMBIGUOUS. */
static void set_decoded(api_call *call, bool ok, const error_info *why)
{
    call->x.decoded = ok;
    if (ok)
        return;
    model_copy_text(call->transport, sizeof call->transport, why->msg);
    call->x.decode_msg = call->transport;
}

static sync_outcome out_of_memory(sync_result *res)
{
    error_info err;
    error_set(&err, ERROR_NOMEM, "out of memory building the request");
    refuse(res, SYNC_NOT_SENT, &err);
    res->failure = SYNC_FAILURE_LOCAL; /* not an unreachable remote: no retry by itself */
    return res->outcome;
}

/* POST `payload` (freed here) to base+path. */
static void post(api_client *c, const char *path, char *payload, api_call *call)
{
    set_url(c, path, NULL);
    perform(c, API_POST, payload, call);
    free(payload);
}

/* What a create's reply must hold to be recorded: an id of its kind and, for a kind
 * whose create hands out a secret, that secret. Without its token a credential is
 * useless here: AMBIGUOUS lets the listing find it by its marker and the engine
 * replace it. */
static error_code check_created(const kind_desc *d, const model_object *out, error_info *err)
{
    char what[64];
    snprintf(what, sizeof what, "the new %s's id", d->noun);
    if (validate_id(model_object_id(out), d->id_prefix, what, err) != ERROR_OK)
        return err->code;
    if (d->has_token && (!out->cred.token || !out->cred.token[0]))
        return error_set(err, ERROR_FORMAT, "the reply carried no token");
    return ERROR_OK;
}

static sync_outcome api_create(void *ctx, const model_object *in, model_object *out,
                               sync_result *res)
{
    api_client *c = ctx;
    const kind_desc *d = kind_get(in->kind);
    model_object_init(out, in->kind);
    char *payload = d->create_body(in);
    if (!payload)
        return out_of_memory(res);
    api_call call;
    post(c, d->api_path, payload, &call);
    if (is_2xx(&call)) {
        error_info err = {0};
        bool ok = d->decode(c->body.data, c->body.len, out, &err) == ERROR_OK &&
                  check_created(d, out, &err) == ERROR_OK;
        set_decoded(&call, ok, &err);
    }
    if (finish(c, &call, res) != SYNC_OK)
        model_object_clear(out);
    return res->outcome;
}

/* The path of object `id` of `kind`, or, when `id` is not a remote id of the kind,
 * false with `res` refused (never put in a URL). */
static bool object_url(api_client *c, model_kind kind, const char *id, sync_result *res)
{
    const kind_desc *d = kind_get(kind);
    error_info err = {0};
    if (validate_id(id, d->id_prefix, "id", &err) != ERROR_OK) {
        error_prefix(&err, "not sent");
        refuse(res, SYNC_REJECTED, &err);
        return false;
    }
    set_url(c, d->api_path, id);
    return true;
}

/* An id that is not a remote id of the kind is never put in a URL. */
static sync_outcome api_remove(void *ctx, model_kind kind, const char *id, sync_result *res)
{
    api_client *c = ctx;
    if (!object_url(c, kind, id, res))
        return res->outcome;
    api_call call;
    perform(c, API_DELETE, NULL, &call);
    call.x.decoded = true; /* 204: nothing to read */
    return finish(c, &call, res);
}

/* ---- conditional page GETs (a follower: api_page_cache) ---- */

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* hdr_plain and "If-None-Match: <etag>" (a copy: the plain list stays as it is;
 * it holds the key, so it is wiped when freed). False when out of memory. */
static bool conditional_headers(api_client *c, const char *etag)
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
    c->hdr_cond = h;
    return true;
}

/* GET c->url, with If-None-Match when a page is kept for it; a 304 makes the kept
 * body the reply (c->reused). */
static void perform_page_get(api_client *c, api_call *call)
{
    char etag[API_ETAG_MAX] = "";
    char *kept = NULL;
    size_t len = 0;
    bool held = c->pages && strcmp(c->refetch, c->url) != 0 &&
                c->pages->get(c->pages->ctx, c->url, etag, sizeof etag, &kept, &len) &&
                etag[0] && conditional_headers(c, etag);
    c->refetch[0] = '\0';
    perform(c, API_GET, NULL, call);
    free_headers(c->hdr_cond);
    c->hdr_cond = NULL;
    if (held && call->x.net == API_NET_REPLY && call->x.status == 304) {
        buf_reset(&c->body);
        if (buf_append(&c->body, kept, len)) {
            call->x.status = 200; /* the page, as the 200 that brought it */
            call->x.body = c->body.data;
            call->x.body_len = c->body.len;
            c->reused = true;
            c->pages->reused(c->pages->ctx, c->url, wall_ms());
        }
    }
    free(kept);
}

/* After a page decoded: keep it (a 200 with a tag), or, a kept one that did not
 * decode, ask for it whole next time; at the end of a listing, forget its pages
 * no longer used. */
static void keep_page(api_client *c, const codec_page *page, bool decoded)
{
    if (!c->pages)
        return;
    if (!decoded) {
        if (c->reused)
            snprintf(c->refetch, sizeof c->refetch, "%s", c->url);
        return;
    }
    char collection[MODEL_URI_MAX + 64];
    snprintf(collection, sizeof collection, "%s%s", c->base, kind_get(page->kind)->api_path);
    if (!c->reused && c->etag[0] && !c->no_store)
        c->pages->put(c->pages->ctx, c->url, collection, c->etag, c->body.data, c->body.len,
                      wall_ms());
    if (page->count == 0 || !page->next_page_uri[0])
        c->pages->prune(c->pages->ctx, collection, c->listing_ms[page->kind]);
}

/* GET a list page into c->body; false (with `res` filled) when the URL is refused. */
static bool get_page(api_client *c, model_kind kind, const char *url, api_call *call,
                     sync_result *res)
{
    error_info err = {0};
    if (api_page_url(c->base, kind_get(kind)->api_path, url, c->url, sizeof c->url, &err) !=
        ERROR_OK) {
        refuse(res, SYNC_REJECTED, &err);
        return false;
    }
    if (!url)
        c->listing_ms[kind] = wall_ms();
    perform_page_get(c, call);
    return true;
}

/* Every item must carry an id (a listing that holds an object it cannot name
 * says nothing of what is absent), and the next link must not be the page itself
 * (the engine would loop). A malformed id is the store's to refuse: its gate
 * names it and keeps the rest of the page. */
static error_code check_page(const api_client *c, const codec_page *page, error_info *err)
{
    const kind_desc *d = kind_get(page->kind);
    for (size_t i = 0; i < page->count; i++) {
        if (!model_object_id(&page->items[i])[0])
            return error_set(err, ERROR_FORMAT, "%s %zu: id: missing", d->noun, i + 1);
    }
    if (page->next_page_uri[0] && strcmp(page->next_page_uri, c->url) == 0)
        return error_set(err, ERROR_FORMAT, "next_page_uri points back to the same page");
    return ERROR_OK;
}

static sync_outcome api_list_page(void *ctx, model_kind kind, const char *url,
                                  codec_page *page, sync_result *res)
{
    api_client *c = ctx;
    memset(page, 0, sizeof *page);
    page->kind = kind;
    api_call call;
    if (!get_page(c, kind, url, &call, res))
        return res->outcome;
    if (is_2xx(&call)) {
        error_info err = {0};
        bool ok = codec_page_decode(kind, c->body.data, c->body.len, page, &err) == ERROR_OK &&
                  check_page(c, page, &err) == ERROR_OK;
        set_decoded(&call, ok, &err);
        keep_page(c, page, ok);
    }
    if (finish(c, &call, res) != SYNC_OK)
        codec_page_free(page);
    return res->outcome;
}

/* ---- edits and gets of one object ---------------------------------------- */

/* A 2xx carrying one object: decoded into `out`, which must be the object asked
 * for (a reply about another would be recorded over the wrong row). */
static void decode_object(api_client *c, const char *id, model_object *out, api_call *call)
{
    if (!is_2xx(call))
        return;
    const kind_desc *d = kind_get(out->kind);
    error_info err = {0};
    bool ok = d->decode(c->body.data, c->body.len, out, &err) == ERROR_OK;
    if (ok && strcmp(model_object_id(out), id) != 0) {
        error_set(&err, ERROR_FORMAT, "the reply is about another %s", d->noun);
        ok = false;
    }
    set_decoded(call, ok, &err);
}

/* The fields an edit may send: at least one, each one the kind lets change. */
static error_code check_edit_fields(model_kind kind, unsigned fields, error_info *err)
{
    unsigned editable = kind_field_set(kind, KIND_FIELD_EDIT);
    char names[128], allowed[128];
    if (fields == 0)
        return error_set(err, ERROR_INVALID, "not sent: an edit of no field");
    if (fields & ~editable) {
        kind_field_names(kind, fields & ~editable, names, sizeof names);
        return error_set(err, ERROR_INVALID, "not sent: %s cannot be changed; a %s may "
                         "change %s", names[0] ? names : "an unknown field",
                         kind_get(kind)->noun,
                         kind_field_names(kind, editable, allowed, sizeof allowed));
    }
    return ERROR_OK;
}

static sync_outcome api_update(void *ctx, const model_object *in, unsigned fields,
                               model_object *out, sync_result *res)
{
    api_client *c = ctx;
    const char *id = model_object_id(in);
    model_object_init(out, in->kind);
    error_info err = {0};
    if (check_edit_fields(in->kind, fields, &err) != ERROR_OK)
        return refuse(res, SYNC_REJECTED, &err);
    if (!object_url(c, in->kind, id, res))
        return res->outcome;
    char *payload = codec_patch_body(in, fields);
    if (!payload)
        return out_of_memory(res);
    api_call call;
    perform(c, API_PATCH, payload, &call);
    free(payload);
    decode_object(c, id, out, &call);
    if (finish(c, &call, res) != SYNC_OK)
        model_object_clear(out);
    return res->outcome;
}

static sync_outcome api_get(void *ctx, model_kind kind, const char *id, model_object *out,
                            sync_result *res)
{
    api_client *c = ctx;
    model_object_init(out, kind);
    if (!object_url(c, kind, id, res))
        return res->outcome;
    api_call call;
    perform(c, API_GET, NULL, &call);
    decode_object(c, id, out, &call);
    if (finish(c, &call, res) != SYNC_OK)
        model_object_clear(out);
    return res->outcome;
}

static const sync_api_ops api_table = {
    .create = api_create,
    .remove = api_remove,
    .list_page = api_list_page,
    .update = api_update,
    .get = api_get,
};

const sync_api_ops *api_ops(void)
{
    return &api_table;
}
