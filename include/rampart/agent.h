/*
 * agent: the local endpoint (over http.h) from which this machine's agents fetch
 * their tunnel token (the remote hands it out once: only this cache still holds
 * it), check an address against a policy, and read the cache through a read-only
 * mirror of the remote API's GET routes.
 *
 * - Listeners: "unix:PATH" (a directory it makes is 0700, one that exists must
 *   pass agent_socket_dir_trusted; the socket is 0600; peers are known by
 *   SO_PEERCRED and only allow_uids get more than /healthz), "tcp:HOST:PORT" on
 *   loopback only (every request needs "Authorization: Bearer <local key>",
 *   compared in constant time, and a loopback Host), "fd:N" (a socket passed by
 *   systemd, held to the rules of its family). On every listener a request
 *   carrying a header of agent_refused_header is a 403.
 * - Routes: one table, listed by agent_route_doc_get. Replies are JSON with
 *   "Cache-Control: no-store", errors in the remote API's shape; only the mirror's
 *   200 and 304 carry an ETag (serve_list.h) and mirror_max_age_s. With
 *   mirror_only a listener serves the mirror's routes alone (the rest is 404).
 * - An audit line per token lookup and per refusal (rate-capped) to on_log, never
 *   a token or the key; token-fetch times reach the cache every second, off the path.
 * - A check never waits for an index build: a thread rebuilds the policy index
 *   when the rules change; a change is in force once swapped in.
 * - Limits: per-peer rate (429, Retry-After), headers 8 KiB, bodies 16 KiB (413);
 *   a control character in the decoded path, or Host or Authorization sent twice,
 *   is a 400; slow TCP clients as in http.h ("Connections"). No global state.
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

/* A route as `agent --help` and rampart(1) document it, from the route table. */
typedef struct agent_route_doc {
    const char *method, *pattern; /* "GET", "/v1/credentials/{id}/token" */
    const char *query;            /* what it takes after '?' ("ip=ADDR"); "" none */
    const char *reply;            /* the keys of a 200 reply: {"id", "token", "acl"} */
    const char *note;             /* one sentence: what else, the error statuses */
} agent_route_doc;

/* The `i`th route of the table (0, 1, ...); false past the last. */
bool agent_route_doc_get(size_t i, agent_route_doc *out);

#endif
