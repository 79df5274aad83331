/*
 * api: the client of the remote API (sync/api*.c: the only files that drive
 * libcurl's transfers). It implements sync_api_ops for the engine, for either
 * kind through its descriptor (kind.h).
 *
 * - A client owns one easy and one multi handle, which run its transfers one at
 *   a time over one connection cache; not thread-safe. A page asked ahead
 *   (list_ahead) is taken by the next list_page of its URL; any other call drops
 *   it and closes that connection.
 * - Requests carry the key as a Bearer token, the version header ("2"),
 *   "User-Agent: rampart/<version>" and JSON Accept and Content-Type. A create
 *   goes out on a fresh connection never reused; GET, PATCH and DELETE reuse one.
 * - Connect, total and low-speed timeouts (SYNC_FAILURE_TIMED_OUT); proxies from
 *   the environment but never for a loopback base; TLS verified; http and https
 *   only; a 3xx is REJECTED; a body over API_BODY_MAX is an error.
 * - Every failure is typed (sync_result.failure). An error body's error_code, msg
 *   and operation id (else a header ending in "operation-id") are kept apart and
 *   told in the message; a body that is not JSON, the key and tokens never are.
 * - AMBIGUOUS: a create's 2xx without an object of its kind (a credential's: with
 *   its token), a get's or edit's 200 that does not decode or names another id, a
 *   page whose items lack ids or whose next_page_uri is itself. REJECTED without
 *   sending: an id that is not a remote id of the kind, an edit of no field or of
 *   one the kind never lets change, a next_page_uri of another origin (a path-only
 *   one is resolved against the base). With `pages`, page GETs are conditional.
 */
#ifndef RAMPART_API_H
#define RAMPART_API_H

#include <stdbool.h>

#include "rampart/error.h"
#include "rampart/sync.h"

#define API_BODY_MAX (16u * 1024u * 1024u)
#define API_KEY_MAX 1024                          /* bytes */
#define API_DEFAULT_VERSION_HEADER "Service-Version"

/* Where a client keeps the pages it pulled, with their entity tags (a follower's
 * cache: store_http_page_*). A page GET then sends If-None-Match with the tag kept
 * for its URL, and a 304 makes the kept body the page, decoded as a 200's would
 * be; a 200 that decodes and carries a well-formed tag (not "no-store") is kept;
 * a kept body that no longer decodes is asked for again without the tag. A
 * listing that completes forgets its pages not used since its first page. Called
 * on the client's thread; a failure of any callback costs only a full download.
 * The struct must outlive the client. */
enum { API_ETAG_MAX = 201 }; /* bytes of an entity tag, NUL included */
typedef struct api_page_cache {
    void *ctx;
    /* The tag (into `etag`) and a heap copy of the body (NUL-terminated after
     * *len bytes, freed by the client) kept for `url`; false when none. */
    bool (*get)(void *ctx, const char *url, char *etag, size_t etag_size, char **body,
                size_t *len);
    /* The page kept for `url` was used again (a 304), at `now_ms` (wall clock). */
    void (*reused)(void *ctx, const char *url, long long now_ms);
    /* Keep `body` (`len` bytes) and `etag` for `url`, a page of the listing whose
     * first page is `collection`. */
    void (*put)(void *ctx, const char *url, const char *collection, const char *etag,
                const char *body, size_t len, long long now_ms);
    /* Forget the pages of `collection` not used since `before_ms`. */
    void (*prune)(void *ctx, const char *collection, long long before_ms);
} api_page_cache;

typedef struct api_config {
    const char *base_url;        /* "https://api.example.com" (no trailing slash needed) */
    const char *api_key;         /* copied by the client, wiped on free */
    const char *version_header;  /* NULL/"": API_DEFAULT_VERSION_HEADER */
    long connect_timeout_ms;     /* 0: default 10 s */
    long total_timeout_ms;       /* 0: default 60 s */
    long low_speed_bps;          /* a reply slower than this many bytes per second ... */
    long low_speed_s;            /* ... for this many seconds is a timeout (timed_out);
                                    either 0: defaults 10 bytes/s for 20 s;
                                    negative: ERROR_CONFIG */
    const api_page_cache *pages; /* NULL: plain GETs; else conditional page GETs */
} api_config;

typedef struct api_client api_client;

/* Make a client from a copy of `cfg` (the base URL without trailing slashes);
 * *out is released with api_client_free. ERROR_CONFIG when the configuration is
 * unusable (see api_check_config in sync/api_internal.h: a base that is not
 * https is loopback only, 127.x as a dotted quad), ERROR_NOMEM. No I/O: the first
 * connection is made by the first request. Takes a reference on libcurl's global
 * state (curl_global_init; api_client_free gives it back), thread-safe with a
 * "threadsafe" libcurl 7.84+, else make the first client before any thread. */
error_code api_client_new(const api_config *cfg, api_client **out, error_info *err);

/* Free the client and wipe its copy of the key. NULL is a no-op. */
void api_client_free(api_client *client);

/* Start libcurl process-wide with allocators that zero what they free
 * (model_free_wiped): its receive buffers hold replies with tokens and its request
 * headers the key. Call once at start, before any thread and any other libcurl
 * use; later api_client_new calls only take references. ERROR_IO on failure
 * (libcurl then starts with its own allocators at the first client). */
error_code api_global_init_wiping(error_info *err);

/* The operations table for sync_run; its ctx is the api_client. */
const sync_api_ops *api_ops(void);

#endif
