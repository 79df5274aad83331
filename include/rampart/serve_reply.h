/*
 * serve_reply: what every server of rampart answers the same way (serve-api and
 * the agent endpoint): error bodies in the remote API's shape and the bearer-key
 * check.
 *
 * - An error reply is {"error_code", "status_code", "msg", "details":
 *   {"operation_id"}} plus an Operation-Id header with the same random id, so a
 *   user can quote it. The message is the caller's text and must not hold a
 *   secret.
 * - The bearer check takes "Bearer KEY" (scheme case-insensitive, spaces around
 *   the key ignored) and compares in time that depends only on the expected key's
 *   length, never on where the first mismatch is.
 * - Replies a cache may keep (the agent's mirror): an entity tag, If-None-Match
 *   read as RFC 9110 says (13.1.2: weak comparison, a list, "*"), and a
 *   Cache-Control a shared cache may act on. Nothing here reads a body: a 304 is
 *   decided from the tag alone.
 */
#ifndef RAMPART_SERVE_REPLY_H
#define RAMPART_SERVE_REPLY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "rampart/http.h"

/* Set `resp` to an error reply (a body already there is freed). */
void serve_error(http_response *resp, int status, const char *code, const char *fmt,
                 va_list ap) __attribute__((format(printf, 4, 0)));

/* The error_code of a reply the HTTP layer makes by itself (400, 404, 405, 413,
 * 503); "ERR_INTERNAL" for any other status. */
const char *serve_layer_code(int status);

/* Set `resp` to `status` with the JSON body `json` (heap, taken over); NULL (the
 * encoder ran out of memory) becomes a 500 error reply instead. */
void serve_json(http_response *resp, int status, char *json);

/* Whether the Authorization header value `header` (may be NULL) carries `key`
 * (`key_len` bytes; a NULL key never matches). */
bool serve_bearer_ok(const char *header, const char *key, size_t key_len);

/*
 * Whether the If-None-Match value `header` (may be NULL: no) matches the entity
 * tag `etag` ("\"…\""), by the weak comparison RFC 9110 prescribes for
 * If-None-Match: "*" matches any current representation, else each entity-tag of
 * the comma-separated list (W/"x" or "x", blanks around commas allowed) matches
 * when its opaque part equals etag's, weak or not. A list that is not made of
 * entity-tags matches nothing (the reply is then sent in full).
 */
bool serve_etag_matches(const char *header, const char *etag);

/* The longest max-age a reply says (a day). */
enum { SERVE_MAX_AGE_MAX = 86400 };

/*
 * Add ETag `etag` and the Cache-Control of a reply a shared cache may keep:
 * "public, max-age=N, stale-while-revalidate=N" (N: max_age_s, at most
 * SERVE_MAX_AGE_MAX), or "public, no-cache" for 0 (kept, but revalidated before
 * every use). "public" because followers send a key of their own to the cache
 * in front (RFC 9111 3.5: a shared cache keeps an answer to a request with
 * Authorization only when told so); the cache checks that key before it answers.
 * False when the headers did not fit.
 */
bool serve_cache_headers(http_response *resp, const char *etag, unsigned max_age_s);

#endif
