/*
 * serve_list: list pages in the remote API's shape, shared by the reference server
 * (serve-api) and the agent's read-only mirror, so both answer a client written
 * for the remote API the same way.
 *
 * - Query: `limit` 1..100 (default 100) and `before_id` (an id of the collection's
 *   prefix); anything else, a repeat, a value holding a NUL or too many arguments
 *   is refused with the message a 400 ERR_INVALID_QUERY carries. Messages never
 *   quote a value; a parameter name is cut to 40 bytes with controls as '?'.
 * - Pages are newest first, read with one row more than asked, which proves a
 *   next page and is not sent. next_page_uri repeats the limit asked for.
 * - One piece of code for every kind: the collection's path, its list key and the
 *   id prefix come from the kind's descriptor (rampart/kind.h).
 * - Uris are `base` + the kind's path + "/ID" ("/ip_policy_rules/ID", and a rule's
 *   "/ip_policies/POLICY"; "/credentials/ID"); `base` "" gives path-only uris (a
 *   unix socket has no host).
 * - Bodies are heap strings the caller hands to http_response_set. Credentials are
 *   encoded with a null token (store pages never fill one).
 * - Entity tags (serve_list_etag) name one reply: the state of the kind's rows
 *   (store_change_tag: the cache's id and its change counter) and what was asked
 *   (the uris' base, the collection, limit and before_id, or the object's id).
 *   Strong: the same tag is the same bytes. A page keeps its bounds while the data
 *   stays (before_id is a cursor, not an offset), so a client walking the pages
 *   again asks for the same URLs and can be answered 304 for each.
 */
#ifndef RAMPART_SERVE_LIST_H
#define RAMPART_SERVE_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"
#include "rampart/http.h"
#include "rampart/kind.h"
#include "rampart/model.h"
#include "rampart/store.h"

enum { SERVE_LIST_LIMIT_MAX = 100 };

typedef struct serve_list_query {
    size_t limit;
    const char *before_id; /* NULL: from the newest; borrowed from the request */
} serve_list_query;

/* Parse the request's query for the collection of `kind` (a before_id must carry
 * the kind's id prefix). False with the 400's message in `why` when it is not
 * acceptable. */
bool serve_list_parse(const http_request *req, model_kind kind, serve_list_query *q,
                      char *why, size_t why_size);

/* The API's name of one object of `kind`, for messages ("no ip policy rule X"):
 * "ip policy rule", "credential". */
const char *serve_list_noun(model_kind kind);

/* Fill the row's uri as served from `base` (and a rule's policy uri). */
void serve_list_uris(const char *base, model_object *obj);

/* One page of `kind`'s rows in `states` (0: all) as the body of a list reply, into
 * *body (NULL on failure). Store errors are returned as the store gave them;
 * ERROR_NOMEM. */
error_code serve_list_page(store *st, model_kind kind, const serve_list_query *q,
                           unsigned states, const char *base, char **body, error_info *err);

/* "\"<cache id>-<r|c><counter>-<16 hex digits>\"" */
enum { SERVE_ETAG_MAX = STORE_CACHE_ID_MAX + 64 };

/* The entity tag of the reply to `q` (a page; `id` NULL) or of object `id` (`q`
 * NULL) of `kind`, with uris at `base`, while the kind's rows are at `tag`, into
 * `out` (at least SERVE_ETAG_MAX bytes). */
void serve_list_etag(const store_change_tag *tag, const char *base, model_kind kind,
                     const serve_list_query *q, const char *id, char *out, size_t size);

#endif
