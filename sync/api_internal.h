/*
 * api_internal: the parts of the API client outside the transport, so they can be
 * unit-tested on their own (sync/api_classify.c, sync/api_http.c: no connection,
 * only libcurl's date and URL parsers), plus the one libcurl-facing table that the
 * tests check by curl's own codes (sync/api.c).
 * Private to sync/api*.c and tests/unit/test_api*.c.
 *
 * Contract: pure functions, no allocation, no I/O, no global state. Nothing here
 * ever copies the API key or a token into a message; text that came from the
 * server is cleaned (control characters, invalid UTF-8, the key) before it is
 * kept.
 */
#ifndef RAMPART_API_INTERNAL_H
#define RAMPART_API_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "rampart/api.h"
#include "rampart/error.h"
#include "rampart/sync.h"

/* How the transport ended, before the HTTP status is looked at. */
typedef enum api_net {
    API_NET_REPLY,    /* a complete HTTP reply arrived */
    API_NET_NOT_SENT, /* failed before any of the request could have left */
    API_NET_LOST      /* failed after (some of) the request may have left */
} api_net;

/* One finished request as the classifier sees it. Strings may be NULL. */
typedef struct api_exchange {
    api_net net;
    const char *transport_msg; /* NOT_SENT/LOST: what went wrong, already clean */
    bool timed_out;            /* the transport gave up waiting (LOST: timed out) */
    long status;               /* HTTP status received, 0 when none (may be set
                                  with LOST when the reply was cut mid-body) */
    const char *body;          /* the reply body (not NUL-terminated) */
    size_t body_len;
    bool decoded;              /* 2xx: the body decoded into what the call expects */
    const char *decode_msg;    /* 2xx and !decoded: why (never quotes values) */
    const char *retry_after;   /* the Retry-After header value, or NULL */
    const char *header_op_id;  /* the operation id header value, or NULL */
    time_t now;                /* wall clock, for a Retry-After date */
    const char *secret;        /* the API key: scrubbed from any message */
} api_exchange;

/*
 * Classify `x` into `res` (fully overwritten) and return res->outcome:
 * 2xx decoded -> OK, 2xx not decoded -> AMBIGUOUS, 3xx -> REJECTED (redirects are
 * not followed), 401/403 -> AUTH, 404 -> NOT_FOUND, 429 -> RATE_LIMITED, other 4xx
 * -> REJECTED, 5xx -> AMBIGUOUS; a transport failure -> NOT_SENT or AMBIGUOUS as
 * `net` says, except that a definite 4xx status already received wins (the
 * server decided before the body was cut). res->failure types the cause: NOT_SENT
 * unreachable, LOST timed out or connection lost (`timed_out`), 2xx not decoded a
 * bad reply, 5xx (and statuses HTTP does not define) a server error, the others
 * as their outcome. retry_after_s is filled for 429 and 503 (else -1). The message
 * is the server's msg with " (operation op_…)", or a fallback such as "HTTP 502
 * from the server"; empty on OK.
 */
sync_outcome api_classify(const api_exchange *x, sync_result *res);

/*
 * Fill the server's side of `res` from an error reply: error_code, server_msg
 * (the body's "msg", cleaned) and operation_id from the body (details.operation_id,
 * else `header_op_id`), and the message: that msg with " (operation <id>)". A body
 * that is not an error object, or one without msg, gives "HTTP <status> from the
 * server<hint>" instead; the body is never quoted raw. Everything is truncated at
 * a UTF-8 boundary; the operation id survives a long msg.
 */
void api_error_message(long status, const char *body, size_t len, const char *header_op_id,
                       const char *hint, const char *secret, sync_result *res);

/*
 * Seconds to wait from a Retry-After value: delay-seconds ("120", a fraction is
 * tolerated) or an HTTP-date as curl_getdate reads it (the three forms of RFC
 * 9110: IMF-fixdate, RFC 850, asctime; and what libcurl tolerates beyond them),
 * measured from `now`. Negative delays and dates in the past give 0; absurdly
 * large ones are capped at API_RETRY_AFTER_MAX. NULL, empty or unparsable: -1.
 */
#define API_RETRY_AFTER_MAX 86400.0
double api_retry_after(const char *value, time_t now);

/* True when a response header name (not NUL-terminated, `len` bytes) carries the
 * operation id: it ends in "operation-id", case-insensitively. */
bool api_is_operation_id_header(const char *name, size_t len);

/* Copy a header value (`len` bytes, not NUL-terminated) into `out` without its
 * surrounding blanks and CR/LF; false (and `out` empty) when it is empty or does
 * not fit. */
bool api_take_header_value(const char *value, size_t len, char *out, size_t size);

/* Copy an ETag header value (`len` bytes) into `out` when it is one entity-tag
 * (W/"…" or "…", characters 0x21-0x7E, no '"' inside) that fits, else leave `out`
 * empty: it goes back in a request header, so nothing else may pass. */
void api_take_etag(const char *value, size_t len, char *out, size_t size);

/* True when a Cache-Control value (`len` bytes) holds the directive no-store. */
bool api_cache_control_no_store(const char *value, size_t len);

/* Copy an operation id header value (`len` bytes, trimmed of blanks) into `out`
 * when it looks like an id (letters, digits, '_', '-', '.'), else leave `out`
 * empty: a header must not smuggle text into messages. */
void api_take_operation_id(const char *value, size_t len, char *out, size_t size);

/*
 * The URL to fetch for a list page: `url` NULL gives `base` + `collection`
 * ("/ip_policy_rules"); a path starting with '/' is taken relative to the base's
 * origin; otherwise `url` must be an absolute URL (rampart/url.h's rules) with
 * the base's scheme, host and port (the API key goes wherever it points).
 * ERROR_INVALID with a message naming both hosts when it does not. Written to
 * `out` as libcurl will read it (its normal form: "https://h:443/x" stays, an
 * empty port or "127.1" does not).
 */
error_code api_page_url(const char *base, const char *collection, const char *url,
                        char *out, size_t size, error_info *err);

/*
 * Make server or transport text safe to show: every occurrence of `secret` (when
 * at least 4 bytes) becomes '*'s, control characters become spaces, and bytes
 * that are not UTF-8 become '?'. In place.
 */
void api_scrub(char *text, const char *secret);

/* ---- sync/api_config.c ---- */

/* Check a configuration before a client is made: a base URL as url_check_api_base
 * accepts (rampart/url.h: the check config.c makes too), at most
 * MODEL_URI_MAX - 64 bytes; a key of printable ASCII without spaces (a CR/LF
 * would inject headers), at most API_KEY_MAX; a version header name of HTTP token
 * characters; timeouts and the low-speed limit >= 0. ERROR_CONFIG with the
 * reason; never quotes the key. */
error_code api_check_config(const api_config *cfg, error_info *err);

/* The version header name of `cfg`, or API_DEFAULT_VERSION_HEADER. */
const char *api_version_header(const api_config *cfg);

/* Length of `url` without its trailing slashes. */
size_t api_base_len(const char *url);

/* ---- sync/api.c ---- */

/* From sync/api.c: how a libcurl result code ends a request. `sent` says whether
 * the request had started going out (libcurl's pre-transfer time or request size
 * is non-zero); codes that fix the answer either way ignore it. */
api_net api_curl_net(int curl_code, bool sent);

#endif
