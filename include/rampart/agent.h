/*
 * agent: the local endpoint from which the agents on this machine fetch their
 * tunnel token (the remote API hands a token out once, so this cache is the only
 * place that still holds it), check an address against a policy, and read the
 * cache through a read-only mirror of the remote API's GET routes.
 *
 * Contract:
 * - Built on http.h. Listeners: "unix:PATH" (the directory is created 0700, the
 *   socket is 0600; callers identified by SO_PEERCRED and only uids in the allow
 *   list get answers beyond /healthz) and "tcp:HOST:PORT" on loopback only
 *   (anything else is ERROR_INVALID naming the address), where every request
 *   needs "Authorization: Bearer <local key>" (checked in constant time) and
 *   requests carrying X-Forwarded-For or Origin, or a Host that is not a loopback
 *   name, are refused (DNS rebinding, SSRF).
 * - The local key lives in a file of mode 0600, created with a random key on first
 *   use (agent_key_ensure); it is never logged or put on argv.
 * - Routes (every reply JSON; token replies carry Cache-Control: no-store):
 *     GET /healthz
 *     GET /v1/credentials/{id}/token   -> {"id", "token"}; 404 unknown; 409 with a
 *                                         distinct message when the credential
 *                                         exists but this machine lacks its token
 *     GET /v1/tokens/{name}            -> by description; 404 none; 409 several
 *                                         (their ids listed)
 *     GET /v1/ip_policies/{id}/check?ip=ADDR -> {"ip","policy","allowed","rule_id",…}
 *     GET /credentials[/{id}], GET /ip_policy_rules[/{id}]: the mirror, same
 *         shapes, pagination and error bodies as the remote API, tokens null;
 *         other methods there answer 405.
 * - Each connection thread reads through its own read-only store handle (WAL:
 *   writers never block a lookup for long). The policy index is rebuilt when the
 *   store's data_version moves.
 * - An audit line per token lookup (time, peer uid or "key", credential id,
 *   result) goes to the log callback; it never contains a token. Per-peer rate
 *   limit: 429 with Retry-After.
 * - agent_stop ends every connection and frees everything; no global state.
 */
#ifndef RAMPART_AGENT_H
#define RAMPART_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

enum { AGENT_LISTEN_MAX = 4, AGENT_UIDS_MAX = 16 };

typedef struct agent_options {
    const char *db_path;                 /* the cache (opened read-only per thread) */
    const char *listen[AGENT_LISTEN_MAX];/* "unix:PATH" / "tcp:HOST:PORT"; none: the
                                            default unix socket (agent_default_socket) */
    size_t nlisten;
    const char *key_path;                /* NULL: agent_default_key_path */
    long allow_uids[AGENT_UIDS_MAX];     /* unix callers allowed; none: our own uid */
    size_t nuids;
    unsigned rate_per_s;                 /* per peer; 0: default 50 */
    const char *version_header;          /* mirror replies' version header name;
                                            NULL: the default */
    /* Audit and error lines (one line, no newline, never a token). Called from
     * server threads: must be thread-safe. NULL: none. */
    void (*on_log)(void *ctx, const char *line);
    void *log_ctx;
} agent_options;

typedef struct agent agent;

/* "$XDG_RUNTIME_DIR/rampart/agent.sock" (falls back to /tmp/rampart-UID/ when
 * XDG_RUNTIME_DIR is unset) into buf. ERROR_INVALID when it does not fit. */
error_code agent_default_socket(char *buf, size_t size, error_info *err);

/* "$XDG_CONFIG_HOME/rampart/agent.key" (~/.config/…) into buf. */
error_code agent_default_key_path(char *buf, size_t size, error_info *err);

/* Create the key file (0600, random key) if missing; refuse one others can read. */
error_code agent_key_ensure(const char *path, error_info *err);

/* Open every listener and start serving. *out is NULL on failure (then nothing
 * listens). */
error_code agent_start(const agent_options *opt, agent **out, error_info *err);

typedef struct agent_stats {
    size_t requests;       /* answered */
    size_t lookups;        /* token lookups, successful or not */
    size_t refused;        /* refused by a peer, key, header or rate check */
    char address[2][128];  /* the first two listeners, as bound ("" when unused) */
} agent_stats;

/* A snapshot of the counters; thread-safe. */
void agent_stats_get(agent *ag, agent_stats *out);

/* Stop serving and free. NULL is a no-op. */
void agent_stop(agent *ag);

#endif
