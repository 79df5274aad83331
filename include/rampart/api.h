/*
 * api: the client of the remote API (sync/api.c, the only file that includes
 * libcurl). It implements sync_api_ops for the engine.
 *
 * Contract:
 * - One client owns one libcurl easy handle, reused for keep-alive; not
 *   thread-safe (one client per thread).
 * - Every request carries `Authorization: Bearer <key>`, the version header
 *   (configurable name, value "2"), `User-Agent: rampart/<version>`, and
 *   `Content-Type: application/json` when it has a body. Creates go out on a fresh
 *   connection that is not reused (libcurl would silently re-send a POST whose
 *   reused connection died).
 * - Timeouts: connect, total and low-speed; proxies from the environment as libcurl
 *   reads them; TLS verification on; redirects not followed. Response bodies are
 *   capped (API_BODY_MAX); a bigger one is an error, not a crash.
 * - Non-loopback base URLs must be https:// (config.c refuses others).
 * - Error bodies are decoded into the result's message with the operation id
 *   ("host bits set … (operation op_…)"); a body that is not JSON never reaches the
 *   user raw. The API key and tokens never appear in a message.
 * - List pages: the first page is GET <base>/<collection>; after that the engine
 *   passes next_page_uri back verbatim. A next_page_uri on another host than the
 *   base URL is refused (the key would go there).
 */
#ifndef RAMPART_API_H
#define RAMPART_API_H

#include <stdbool.h>

#include "rampart/error.h"
#include "rampart/sync.h"

#define API_BODY_MAX (16u * 1024u * 1024u)

typedef struct api_config {
    const char *base_url;        /* "https://api.example.com" (no trailing slash needed) */
    const char *api_key;         /* copied by the client, wiped on free */
    const char *version_header;  /* e.g. "Service-Version" */
    long connect_timeout_ms;     /* 0: default 10 s */
    long total_timeout_ms;       /* 0: default 60 s */
} api_config;

typedef struct api_client api_client;

/* Make a client; *out is released with api_client_free. */
error_code api_client_new(const api_config *cfg, api_client **out, error_info *err);

/* Free the client and wipe its copy of the key. NULL is a no-op. */
void api_client_free(api_client *client);

/* The operations table for sync_run; its ctx is the api_client. */
const sync_api_ops *api_ops(void);

#endif
