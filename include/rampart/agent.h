/*
 * agent: the local endpoint from which the agents on this machine fetch their
 * tunnel token (the remote API hands a token out once, so this cache is the only
 * place that still holds it), check an address against a policy, and read the
 * cache through a read-only mirror of the remote API's GET routes.
 *
 * Contract:
 * - Built on http.h. Listeners: "unix:PATH" (the directory is created 0700, and
 *   an existing one must pass agent_socket_dir_trusted; the socket is 0600;
 *   callers identified by SO_PEERCRED and only uids in the allow
 *   list get answers beyond /healthz; other users reach the socket only if the
 *   admin grants them the directory and socket, e.g. with setfacl) and
 *   "tcp:HOST:PORT" on loopback only (anything else is ERROR_INVALID naming the
 *   address), where every request, /healthz included, needs "Authorization:
 *   Bearer <local key>" (checked in constant time) and a Host that is a loopback
 *   name ("localhost", 127.x.y.z, [::1], with any port; DNS rebinding). "fd:N" is
 *   an already-listening socket handed over by systemd (socket activation), held
 *   to the same rules as the kind it is. On every
 *   listener, requests relayed or made by a browser are refused with a 403: any of
 *   X-Forwarded-For, X-Forwarded-Host, X-Forwarded-Proto, X-Real-IP,
 *   X-Client-IP, True-Client-IP, Forwarded, Via, Origin, Sec-Fetch-Site,
 *   Sec-Fetch-Mode present (SSRF, DNS rebinding; one table in agent_gate.c).
 * - The local key lives in a file of mode 0600, created with a random key on first
 *   use (agent_key_ensure); it is never logged or put on argv.
 * - Routes (every reply JSON and with Cache-Control: no-store, token replies and
 *   the rest alike; errors in the remote API's shape {"error_code","status_code",
 *   "msg","details"}):
 *     GET /healthz                     -> {"status":"ok", …}; on a unix socket any
 *                                         peer may ask (nothing secret in it)
 *     GET /v1/credentials/{id}/token   -> {"id", "token"}; {id} may be a local id
 *                                         (the reply names the current id); 404
 *                                         unknown; 409 ERR_TOKEN_NOT_HELD when the
 *                                         credential exists but this machine lacks
 *                                         its token; 410 ERR_GONE when it is being
 *                                         deleted or was deleted remotely
 *     GET /v1/tokens/{name}            -> by description, among live credentials;
 *                                         404 none; 409 ERR_AMBIGUOUS with "ids"
 *     GET /v1/tokens?name=NAME         -> the same, for names holding a '/' (a path
 *                                         segment is decoded before routing)
 *     GET /v1/ip_policies/{id}/check?ip=ADDR -> {"ip","policy","allowed",
 *         "policy_known","action","cidr","synced","rule_id"}: allowed iff ADDR is in
 *         an allow rule and in no deny rule of the policy (policy.h; rules in force:
 *         every state but deleting, remote_deleted, failed); 400 for a bad address
 *     GET /credentials[/{id}], GET /ip_policy_rules[/{id}]: the mirror, same
 *         shapes, pagination (limit 1..100, before_id, newest first) and error
 *         bodies as the remote API, tokens null; other methods there answer 405.
 *         Rows shown: what the cache believes is on the remote now: states synced,
 *         deleting (its delete is not sent yet) and orphaned; rows never confirmed
 *         (new, creating, unknown, failed) and remote_deleted ones are not. Every
 *         uri (items, "uri", "next_page_uri") points back at the agent: absolute
 *         "http://127.0.0.1:PORT/…" on TCP, path-only "/credentials?…" on a unix
 *         socket (resolve it against the request's URL), or `public_url` when
 *         given (where clients reach the mirror through a cache in front). A
 *         version header, when sent, must say 2 (else 400 ERR_VERSION), as on the
 *         remote. Mirror replies (and only they) may be kept by caches: a strong
 *         ETag (the cache's id, its change counter for the kind, what was asked:
 *         serve_list.h), "Cache-Control: public, max-age=N,
 *         stale-while-revalidate=N" (N: mirror_max_age_s; 0: "public, no-cache"),
 *         and 304 with both, no body, when If-None-Match matches (RFC 9110 weak
 *         comparison; decided from the counter before any row is read). Every
 *         other reply, the mirror's errors included, is no-store.
 *     With mirror_only, a listener serves the mirror's four routes and nothing
 *         else: tokens, checks and /healthz are 404 there (for a cache or proxy
 *         in front, which must never reach a token).
 * - Requests are served by a few event threads per listener (one per core, 2 to
 *   8). Each reads through read-only store handles (WAL: writers never block a
 *   lookup for long): a token lookup through its thread's own handle, the rest
 *   through a pool (opened on demand, AGENT_POOL_MAX at most). A thread reads a
 *   credential's token once per batch (the requests it found ready together): a
 *   request from another connection asking the same within the batch, at most
 *   1 ms later, gets the same reply (audited like any). A client that changes
 *   the cache and then asks, on the same connection or a new one, sees the
 *   change. The policy index is rebuilt by the first check after the store's data_version
 *   moved; checks arriving meanwhile are answered from the previous index, which
 *   is freed once no check uses it.
 * - An audit line per token lookup (time, peer "uid:N" or "key@ADDR", credential
 *   id or name, result) goes to the log callback, and a line per refusal (at most
 *   20 at once, then 5 a second; the next line says how many were left out, so
 *   whoever can connect cannot flood the log); none ever contains a token or the
 *   key. The time of each credential's last token handed out is written to the
 *   cache (store_fetch_record_batch: ids and times only), off the request path:
 *   noted in memory, written in one transaction through the agent's one writable
 *   handle every AGENT_FETCH_FLUSH_S (1) second and at agent_stop (a busy cache
 *   keeps them for the next try), so the console, another process, can say which
 *   credentials local agents use. Per-peer rate limit (token bucket, a burst of twice the rate; a peer is a
 *   uid on a unix socket, a source address over TCP; a fixed table of peers, the
 *   longest idle forgotten first): 429 ERR_RATE_LIMITED with Retry-After.
 * - Limits: request headers 8 KiB (beyond: the library's own 431/414), bodies
 *   16 KiB (413), idle connections closed after idle_timeout_s. A path whose
 *   decoded form holds a control character ("%00", "%0A", …) is a 400 (a NUL
 *   would otherwise cut "web%00x" to "web"); Host or Authorization sent twice is
 *   a 400 (which one counts would be a guess).
 * - Slow clients (http.h, "Connections"). A TCP connection that has not shown the
 *   key is pending: its request head must have come, with the key, within
 *   head_timeout_s of accept (a deadline, not an idle timer), and at most 256
 *   are pending at once per listener, a new one cutting the oldest. So whoever
 *   connects without the key holds a connection for seconds, and never keeps a
 *   keyed agent out: no per-address cap (all of loopback is one address), and the
 *   connection limit (1024 per listener, lowered to fit the fd limit, whose soft
 *   value agent_start raises to the hard one) is answered with a 503 and
 *   Retry-After, not a queue. A unix socket is a listener of its own, its peers
 *   known by SO_PEERCRED at accept: never pending, whatever TCP goes through.
 * - agent_stop ends every connection and frees everything; no global state.
 */
#ifndef RAMPART_AGENT_H
#define RAMPART_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

enum {
    AGENT_LISTEN_MAX = 4,
    AGENT_BASE_MAX = 160,             /* bytes of a mirror base, NUL included */
    AGENT_UIDS_MAX = 16,
    AGENT_RATE_DEFAULT = 50,          /* requests per second per peer */
    AGENT_IDLE_TIMEOUT_DEFAULT = 10,  /* seconds */
    AGENT_HEAD_TIMEOUT_DEFAULT = 5    /* seconds */
};

#define AGENT_RATE_UNLIMITED 0xFFFFFFFFu

typedef struct agent_options {
    const char *db_path;                 /* the cache (read-only handles per request;
                                            one writable for the fetch times) */
    const char *listen[AGENT_LISTEN_MAX];/* "unix:PATH" / "tcp:HOST:PORT" / "fd:N" (a
                                            socket passed by systemd, checked like ours);
                                            none: the default unix socket
                                            (agent_default_socket) */
    size_t nlisten;
    const char *profile;                 /* whose default socket; NULL: the default
                                            profile's */
    const char *key_path;                /* NULL: agent_default_key_path */
    long allow_uids[AGENT_UIDS_MAX];     /* unix callers allowed; none: our own uid */
    size_t nuids;
    unsigned rate_per_s;                 /* per peer; 0: AGENT_RATE_DEFAULT;
                                            AGENT_RATE_UNLIMITED: no limit */
    unsigned idle_timeout_s;             /* 0: AGENT_IDLE_TIMEOUT_DEFAULT */
    unsigned head_timeout_s;             /* a TCP connection without the key is cut
                                            this long after accept; 0:
                                            AGENT_HEAD_TIMEOUT_DEFAULT, or the idle
                                            timeout when that is shorter */
    const char *version_header;          /* mirror replies' version header name;
                                            NULL: the default */
    unsigned mirror_max_age_s;           /* how long caches may reuse a mirror reply
                                            (at most SERVE_MAX_AGE_MAX); 0: they
                                            revalidate every time */
    const char *public_url;              /* the base of the mirror's uris, as its
                                            clients reach it (url_check_api_base's
                                            rules, at most AGENT_BASE_MAX - 1
                                            bytes); NULL: each listener's own */
    bool mirror_only;                    /* serve the mirror's routes only */
    /* Audit and error lines (one line, no newline, never a token). Called from
     * server threads: must be thread-safe. NULL: none. */
    void (*on_log)(void *ctx, const char *line);
    void *log_ctx;
} agent_options;

typedef struct agent agent;

/* "$XDG_RUNTIME_DIR/rampart/agent.sock" (falls back to /tmp/rampart-UID/ when
 * XDG_RUNTIME_DIR is unset) into buf: the default profile's, `profile` NULL, ""
 * or "default". Another profile's is agent-PROFILE.sock beside it, so agents of
 * two accounts never take each other's socket. ERROR_INVALID when it does not
 * fit, or when `profile` is not a profile name (config_profile_name_valid: it
 * becomes a file name). */
error_code agent_default_socket(char *buf, size_t size, const char *profile,
                                error_info *err);

/* "$XDG_CONFIG_HOME/rampart/agent.key" (~/.config/…) into buf. */
error_code agent_default_key_path(char *buf, size_t size, error_info *err);

/* Create the key file (0600, 32 random bytes as 64 hex digits and a newline) if
 * missing, with its missing parent directories (0700); ERROR_CONFIG for one that
 * others can read or write, that is not a regular file of ours, or that holds no
 * key. The key is loaded by agent_start only when a TCP listener needs it. */
error_code agent_key_ensure(const char *path, error_info *err);

/*
 * Whether the directory of the unix socket `socket_path` can be trusted, for the
 * agent before it listens there and for a client before it connects: a real
 * directory (not a symbolic link) of yours that group and others cannot write
 * (fileperm.h, FILEPERM_SOCKET_DIR). Without it, another user who made the
 * directory first (/tmp/rampart-UID when XDG_RUNTIME_DIR is unset) could serve
 * false tokens there. ERROR_CONFIG naming the directory, the owner or mode found
 * and the fix; ERROR_NOT_FOUND when it does not exist. Creates nothing.
 */
error_code agent_socket_dir_trusted(const char *socket_path, error_info *err);

/* Open every listener and start serving. ERROR_INVALID for a bad listen address
 * (the message names it: a TCP address that is not loopback says so), a bad uid or
 * too many listeners; ERROR_CONFIG for an unsafe socket directory or key file;
 * ERROR_IO from sockets and the store (the cache must exist: read-only handles
 * never create it). *out is NULL on failure (then nothing listens). */
error_code agent_start(const agent_options *opt, agent **out, error_info *err);

typedef struct agent_stats {
    size_t requests;       /* answered */
    size_t lookups;        /* token lookups, successful or not */
    size_t refused;        /* refused by a peer, key, header or rate check */
    size_t cut_slow;       /* connections cut: no key by the head deadline */
    size_t cut_room;       /* connections cut: the oldest without a key, for a
                              newer one */
    size_t over_limit;     /* connections beyond the limit, answered 503 */
    size_t index_builds;   /* policy index builds: the first, then one per change
                              of the rules (never for the agent's own writes) */
    size_t index_looks;    /* commits to the cache the indexer has seen since */
    char address[2][128];  /* the first two listeners, as agent_address gives them
                              ("" when unused) */
} agent_stats;

/* The headers a relay or a browser adds, which the agent refuses (403), by index;
 * NULL past the last. A front that relays to the agent (assets/nginx-fleet.conf)
 * must clear every one. */
const char *agent_refused_header(size_t i);

/* A snapshot of the counters; thread-safe. */
void agent_stats_get(agent *ag, agent_stats *out);

/* Listener i as bound ("unix:PATH" or "tcp:127.0.0.1:PORT"), or NULL past the
 * last. Valid until agent_stop. */
const char *agent_address(const agent *ag, size_t i);

/* Stop serving and free. NULL is a no-op. */
void agent_stop(agent *ag);

#endif
