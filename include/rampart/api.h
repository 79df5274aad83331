/*
 * api: the client of the remote API (sync/api.c, the only file that includes
 * libcurl). It implements sync_api_ops for the engine.
 *
 * Contract:
 * - One client owns one libcurl easy handle and one multi handle that runs all
 *   its transfers, one at a time over one connection cache (keep-alive); not
 *   thread-safe (one client per thread). A list page may be requested ahead
 *   (sync_api_ops.list_ahead): its request leaves at once and the next list_page
 *   of the same URL takes the reply; any other call drops it (that connection is
 *   closed, never reused with a reply pending).
 * - Every request carries `Authorization: Bearer <key>`, the version header
 *   (configurable name, value "2"), `User-Agent: rampart/<version>`,
 *   `Accept: application/json`, and `Content-Type: application/json` when it has
 *   a body. Creates go out on a fresh
 *   connection that is not reused (libcurl would silently re-send a POST whose
 *   reused connection died); edits (PATCH with the same values) are idempotent
 *   and may reuse one, like GET and DELETE.
 * - Timeouts: connect, total and low-speed (a reply slower than low_speed_bps
 *   for low_speed_s, default 10 bytes/s for 20 s: a server that trickles its
 *   reply is timed out, SYNC_FAILURE_TIMED_OUT, instead of holding a sync for
 *   minutes); proxies
 *   from the environment as libcurl reads them, except that a loopback base URL
 *   is never proxied; TLS verification on; redirects not followed (a 3xx is
 *   REJECTED). Response bodies are
 *   capped (API_BODY_MAX); a bigger one is an error, not a crash.
 * - Non-loopback base URLs must be https:// (config.c refuses others, and so does
 *   api_client_new, more strictly: 127.x must be a dotted quad). Only the http and
 *   https schemes are ever spoken.
 * - Error bodies are decoded into the result's message with the operation id
 *   ("host bits set … (operation op_…)"), and kept apart too (error_code,
 *   server_msg, operation_id); a body that is not JSON never reaches the user raw.
 *   Every failure is typed in sync_result.failure (unreachable, timed out,
 *   connection lost, rate limited, rejected, auth, not found, server error, bad
 *   reply). The API key and tokens never appear in a message.
 * - The five operations (create, remove, list_page, update, get) work on either
 *   kind through its descriptor (kind.h): its collection path, list key, id
 *   prefix, create body, decoder and editable fields.
 * - List pages: the first page is GET <base>/<collection> with no query (the
 *   server's default limit); after that the engine passes next_page_uri back
 *   verbatim. A next_page_uri whose scheme, host or port differs from the base
 *   URL's is refused with SYNC_REJECTED (the key would go there); a path-only one
 *   ("/ip_policy_rules?…") is taken relative to the base. A page whose items lack
 *   ids of their kind, or whose next_page_uri is the page itself, is AMBIGUOUS
 *   (an incomplete listing).
 * - Creates: a 2xx whose body does not decode, or lacks an id of its kind (or, for
 *   a credential, its token), is AMBIGUOUS: it may have been created. Deletes,
 *   edits and gets of an id that is not a remote id of the right kind are REJECTED
 *   without sending.
 * - Edits: PATCH <base>/<collection>/<id> with codec_patch_body (only the fields
 *   asked for); an empty field set or one holding a field the kind never lets
 *   change is REJECTED without sending. Edits and gets: a 200 whose body does not
 *   decode, or holds another id, is AMBIGUOUS; 404 is NOT_FOUND.
 * - The operation id comes from the error body or, failing that, from a response
 *   header whose name ends in "operation-id" (any case).
 * - Conditional GETs of list pages (a follower pulling from a hub's mirror through
 *   a cache), with `pages` set: a page GET sends If-None-Match with the entity tag
 *   kept for its URL, and a 304 makes the kept body the page, decoded as a 200's
 *   would be; a 200 that carries a well-formed entity tag (not "Cache-Control:
 *   no-store") and decodes is kept. When a listing completes (a page with no
 *   next_page_uri, or an empty one), its pages not used since its first page was
 *   asked are forgotten (their bounds moved). A kept body that no longer decodes
 *   is asked for again without the tag. Without `pages`, plain GETs.
 * - libcurl's global state: api_client_new calls curl_global_init and
 *   api_client_free curl_global_cleanup (reference-counted by libcurl). That is
 *   thread-safe with libcurl 7.84+ built "threadsafe" (Debian's is); with another
 *   build, make the first client before starting threads. Nobody else needs to
 *   call curl_global_init.
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
 * cache: store_http_page_*). Called on the client's thread; a failure of any
 * callback costs only a full download. The struct must outlive the client. */
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
 * unusable (see api_check_config in sync/api_internal.h), ERROR_NOMEM. No I/O:
 * the first connection is made by the first request. */
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
