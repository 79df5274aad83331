/*
 * api_client: the client's state and its transport (sync/api_transport.c, the one
 * file that drives libcurl's transfers), shared with the operations that build
 * requests and read replies (sync/api.c). Private to sync/api*.c.
 *
 * - One request at a time on one libcurl easy handle, always through the client's
 *   own multi handle, so every request shares one connection cache: GET, DELETE
 *   and PATCH reuse a kept-alive connection, a POST goes out on a fresh one that
 *   is closed after it (libcurl would silently send a POST again on a reused
 *   connection that turned out dead: a second object).
 * - A list page may be requested ahead (api_ahead_start): its request leaves at
 *   once and its reply waits in the socket while the caller does other work; the
 *   next api_ahead_take of the same URL finishes it. Any other request, a take of
 *   another URL, or freeing the client drops it (the transfer is aborted and its
 *   connection closed, never reused with a reply still pending).
 * - A finished request is an api_call: the api_exchange the classifier reads, its
 *   body in c->body until the next request (wiped: a create reply holds a token).
 */
#ifndef RAMPART_API_CLIENT_H
#define RAMPART_API_CLIENT_H

#include <stdbool.h>

#include <curl/curl.h>

#include "api_internal.h"
#include "rampart/buf.h"
#include "rampart/model.h"

struct api_client {
    CURL *easy;
    CURLM *multi;                 /* every transfer of the easy handle runs here */
    bool in_multi;                /* the easy handle is in `multi`: a transfer is on */
    char *base;                   /* without a trailing slash */
    char *key;                    /* wiped on free */
    struct curl_slist *hdr_plain; /* GET/DELETE */
    struct curl_slist *hdr_json;  /* POST/PATCH: adds Content-Type, drops Expect */
    char errbuf[CURL_ERROR_SIZE];
    buf_t body;                   /* reply body of the last request (wiping) */
    bool too_big;
    char retry_after[64];
    char op_id[MODEL_ID_MAX + 1];
    char url[MODEL_URI_MAX + 64];       /* the request's URL */
    char ahead_url[MODEL_URI_MAX + 64]; /* a GET started ahead, not taken; "" none */
    /* Conditional page GETs (api_page_cache), when `pages` is set (a follower). */
    const api_page_cache *pages;
    struct curl_slist *hdr_cond;  /* hdr_plain and If-None-Match, for one GET */
    char etag[API_ETAG_MAX];      /* the last reply's entity tag ("" none) */
    bool no_store;                /* the last reply said Cache-Control: no-store */
    bool reused;                  /* the last page is a kept body (a 304) */
    char refetch[MODEL_URI_MAX + 64]; /* a kept body that did not decode: ask again */
    long long listing_ms[MODEL_KIND_COUNT]; /* when each listing's first page went */
    long total_ms;                /* a request's own time limit */
    long deadline_ms;             /* what is left of the run's (0: none) */
};

typedef enum api_method { API_GET, API_POST, API_PATCH, API_DELETE } api_method;

typedef struct api_call {
    api_exchange x;
    char transport[CURL_ERROR_SIZE + 128];
} api_call;

/* Send one request to c->url (dropping a request started ahead) and fill `call`
 * for classification; the caller decodes a 2xx body from c->body and sets
 * x.decoded. `payload` is the body of a POST or PATCH (NULL otherwise). */
void api_perform(api_client *c, api_method m, const char *payload, api_call *call);

/* Start a GET of c->url and return without waiting for its reply (a request
 * started ahead before is dropped first). false: nothing was started. */
bool api_ahead_start(api_client *c);

/* When a GET of c->url was started ahead: wait for its reply, fill `call` as
 * api_perform would and return true. Otherwise drop whatever was started ahead
 * and return false (the caller sends the request itself). */
bool api_ahead_take(api_client *c, api_call *call);

/* Abort a request started ahead, if any. */
void api_ahead_drop(api_client *c);

/* The next GETs send c->hdr_plain plus "If-None-Match: <etag>" until
 * api_cond_headers_clear (the copy holds the key: it is wiped when freed). False
 * when out of memory (the plain headers stay). */
bool api_cond_headers_set(api_client *c, const char *etag);
void api_cond_headers_clear(api_client *c);

#endif
