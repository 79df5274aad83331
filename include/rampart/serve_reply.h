/*
 * serve_reply: what every server of rampart answers the same way (serve-api and
 * the agent endpoint): error bodies in the remote API's shape and the bearer-key
 * check.
 *
 * Contract:
 * - An error reply is {"error_code", "status_code", "msg", "details":
 *   {"operation_id"}} plus an Operation-Id header with the same random id, so a
 *   user can quote it. The message is the caller's text and must not hold a
 *   secret.
 * - The bearer check takes "Bearer KEY" (scheme case-insensitive, spaces around
 *   the key ignored) and compares in time that depends only on the expected key's
 *   length, never on where the first mismatch is.
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

/* Set `resp` to `status` with the JSON body `json` (heap, taken over); NULL (the
 * encoder ran out of memory) becomes a 500 error reply instead. */
void serve_json(http_response *resp, int status, char *json);

/* Whether the Authorization header value `header` (may be NULL) carries `key`
 * (`key_len` bytes; a NULL key never matches). */
bool serve_bearer_ok(const char *header, const char *key, size_t key_len);

#endif
