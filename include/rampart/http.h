/*
 * http: a small embedding of libmicrohttpd (src/serve/http*.c, the only files that
 * include it), used by the reference server (serve-api) and the local agent.
 *
 * - Listens on "tcp:HOST:PORT" (a loopback host; PORT 0 picks one, see
 *   http_server_address), "unix:PATH" (a socket file of mode 0600; a stale one is
 *   replaced, anything else at PATH refused) or "fd:N" (a listening socket passed
 *   by the service manager, http_listen_fds; TCP ones on loopback only). Nothing
 *   is ever served on a non-loopback address.
 * - Threads: one per connection (hooks may block), or with `threads` N event-loop
 *   threads (quick hooks only; req->worker and the idle hook let a hook keep state
 *   per thread). Either way hooks run concurrently and lock what they share.
 * - A request goes: route matched (its data and path parameters set for every hook
 *   from here on) -> gate (headers only: 401 comes before 404) -> a decoded path
 *   holding a control character is a 400 -> body read with a cap (413) -> 404 for
 *   an unknown path, 405 with Allow for another method -> handler -> the reply,
 *   altered by its fault -> log. The layer's own replies get their body from the
 *   error hook, so every reply of a server has one shape.
 * - Connections: no per-address cap (every peer is local). One is pending until
 *   admitted (http_request_admit, a request the gate let through, or a unix
 *   socket's accept); the limits and deadlines are http_config's.
 * - Requests and responses are views valid during the hook call; only a response
 *   body crosses the boundary, taken over by the layer. No global state. Errors:
 *   ERROR_INVALID for a bad listen address, ERROR_IO (with the system's reason).
 */
#ifndef RAMPART_HTTP_H
#define RAMPART_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "rampart/error.h"

enum {
    HTTP_PARAMS_MAX = 4,    /* {name} segments in one route pattern */
    HTTP_QUERY_MAX = 16,    /* query arguments kept per request */
    HTTP_HEADERS_MAX = 8,   /* extra response headers */
    HTTP_HEADER_NAME_MAX = 64,
    HTTP_HEADER_VALUE_MAX = 256,
    HTTP_ADDRESS_MAX = 128  /* "127.0.0.1:PORT", "[::1]:PORT" or a socket path */
};

/* A name/value pair: a path parameter or a query argument (value "" when the
 * argument had no '='). */
typedef struct http_param {
    const char *name;
    const char *value;
} http_param;

/* Who is calling. */
typedef struct http_peer {
    int family;        /* AF_INET, AF_INET6, AF_UNIX; 0 when unknown */
    char addr[64];     /* numeric address for TCP; "" for unix sockets */
    long uid;          /* unix sockets: the peer's uid (SO_PEERCRED); -1 otherwise */
    long pid;          /* unix sockets: the peer's pid; -1 otherwise */
} http_peer;

typedef struct http_request {
    const char *method;  /* "GET", "POST", … as sent */
    const char *path;    /* decoded path, without the query */
    http_param params[HTTP_PARAMS_MAX]; /* the route's {name} segments, in order
                                           (from the gate hook on) */
    size_t nparams;
    http_param query[HTTP_QUERY_MAX];   /* query arguments in the order sent,
                                           duplicates kept; decoded */
    size_t nquery;
    bool query_overflow; /* more than HTTP_QUERY_MAX arguments were sent */
    bool query_nul;      /* an argument decoded to text holding a NUL ("%00"): the C
                            string would silently stop there, so refuse the request */
    const char *body;    /* NULL in the gate hook and when there is no body; else
                            NUL-terminated after body_len bytes */
    size_t body_len;
    const void *route_data; /* the matched route's data, from the gate hook on
                               (NULL when no route matches: a 404 or 405) */
    http_peer peer;
    int worker;          /* the event thread serving it (0 .. threads-1), or -1:
                            a thread per connection, or http_server_dispatch */
    unsigned long long connection; /* tells its connection apart from the server's
                            others (1, 2, …); 0 for http_server_dispatch */
    void *impl;          /* the layer's own state; not for hooks */
} http_request;

/* The value of request header `name` (case-insensitive), or NULL. */
const char *http_request_header(const http_request *req, const char *name);

/* How many times header `name` (case-insensitive) was sent: 0, 1, or more (a
 * header that must be unambiguous, such as Host, can then be refused). */
size_t http_request_header_count(const http_request *req, const char *name);

/* The same for `n` names at once, in one pass over the request's headers:
 * counts[i] for names[i]. */
void http_request_header_counts(const http_request *req, const char *const *names, size_t n,
                                size_t *counts);

/* The value of path parameter `name` ("id" for "{id}"), or NULL. */
const char *http_request_param(const http_request *req, const char *name);

/* From the gate: the peer proved who it is (a valid key, an allowed uid), so its
 * connection is admitted even if this request is refused on other grounds (its
 * rate): no head deadline any more, never cut to make room. Requests without a
 * connection (http_server_dispatch): no effect. */
void http_request_admit(const http_request *req);

/* What happens to a reply on the wire (fault injection for clients' tests). */
typedef enum http_fault {
    HTTP_FAULT_NONE,     /* send it */
    HTTP_FAULT_DROP,     /* close the connection without a byte of reply */
    HTTP_FAULT_RESET,    /* close with a TCP reset (unix sockets: as DROP) */
    HTTP_FAULT_TRUNCATE  /* announce the full Content-Length, send about half the
                            body, close; an empty body: as DROP */
} http_fault;

typedef struct http_header {
    char name[HTTP_HEADER_NAME_MAX];
    char value[HTTP_HEADER_VALUE_MAX];
} http_header;

/*
 * A reply, filled by a hook. Starts zeroed (a status outside 100..599 is sent as
 * 500). `body` is heap memory the layer takes over (and frees) whatever happens;
 * NULL for no body. `content_type` defaults to "application/json" when there is
 * a body. `delay_ms` delays the reply (after the handler ran) by up to 60 s; the
 * wait ends early when the server stops. The log hook sees the response with
 * `body` already handed over (NULL).
 */
typedef struct http_response {
    int status;
    char *body;
    size_t body_len;
    const char *content_type; /* static string or NULL */
    http_header headers[HTTP_HEADERS_MAX];
    size_t nheaders;
    http_fault fault;
    unsigned delay_ms;
    unsigned trickle_ms;      /* > 0: the body is sent one byte every trickle_ms ms
                                 (up to 60 s each; a fault for clients' low-speed
                                 limits), ended early when the server stops */
} http_response;

/* Add a header; false (and nothing added) when the table is full or a name or
 * value is too long or holds a line break. */
bool http_response_header(http_response *resp, const char *name, const char *value);

/* Set status and body (heap string, NUL-terminated, taken over; NULL: none).
 * A body already set is wiped and freed; every body the layer frees is wiped first
 * (a reply may carry a token). */
void http_response_set(http_response *resp, int status, char *body);

typedef void (*http_handler_fn)(void *ctx, const http_request *req, http_response *resp);

/* A route: exact method, and a pattern of '/'-separated segments where "{name}"
 * (name < 32 bytes) matches one non-empty segment. `data` is handed to the gate
 * and the handler as req->route_data (a server's own facts about the route). */
typedef struct http_route {
    const char *method;
    const char *pattern;
    http_handler_fn handler;
    const void *data;
} http_route;

/* Called with the headers only (req->body NULL), after the route is matched
 * (req->route_data) and before any reply or the body is read. Return true to go
 * on; false when `resp` holds the reply. */
typedef bool (*http_gate_fn)(void *ctx, const http_request *req, http_response *resp);

/* Fill the body of one of the layer's own replies (`status` with the reason `msg`:
 * 404, 405, 413). Status and Allow are set by the layer. */
typedef void (*http_error_fn)(void *ctx, const http_request *req, int status,
                              const char *msg, http_response *resp);

/* Called once per request after its reply was handed over, dropped or reset, with
 * the time since the headers arrived. */
typedef void (*http_log_fn)(void *ctx, const http_request *req, const http_response *resp,
                            double elapsed_ms);

/* Called by event thread `worker` (req->worker of the requests it serves) each
 * time it has handled every connection that was ready, before it waits for more:
 * the end of a batch of requests. Never while a hook of that thread runs; hooks
 * of other threads may run meanwhile. */
typedef void (*http_idle_fn)(void *ctx, int worker);

typedef struct http_config {
    const char *listen;       /* "tcp:HOST:PORT", "unix:PATH" or "fd:N" */
    const http_route *routes; /* borrowed: must outlive the server */
    size_t nroutes;
    void *ctx;                /* handed to every hook */
    http_gate_fn gate;        /* NULL: every request goes on */
    http_error_fn error;      /* NULL: {"msg": "..."} bodies */
    http_log_fn log;          /* NULL: no log */
    size_t body_max;          /* request body cap in bytes; 0: 1 MiB */
    size_t header_max;        /* per-connection memory for the request line and
                                 headers; 0: 32 KiB (beyond it the library
                                 answers with an error itself) */
    unsigned connection_limit; /* connections open at once; 0: 256. Beyond it a new
                                  one gets 503 + Retry-After and is closed */
    unsigned pending_limit;   /* connections not yet admitted, at once; 0: a quarter
                                 of connection_limit (at least 1); beyond it the
                                 oldest of them is cut. A unix socket admits at
                                 accept: none are pending there */
    unsigned head_timeout_s;  /* a connection not admitted this long after accept is
                                 cut (the whole request head, not an idle timer);
                                 0: 5 s */
    unsigned timeout_s;       /* idle connection timeout; 0: 30 s */
    unsigned threads;         /* 0: one thread per connection (hooks may block);
                                 N: N event-loop threads sharing the connections
                                 (far fewer context switches under load, but a
                                 hook that blocks stalls every connection of its
                                 thread: only for quick hooks, no delays) */
    http_idle_fn idle;        /* with threads: called by each event thread after
                                 it handled what was ready, before it waits for
                                 more; NULL: none */
} http_config;

typedef struct http_server http_server;

/*
 * Create the listening socket, not yet served: the address (with the port picked
 * for PORT 0) is known before the first request can arrive, so a caller can derive
 * what its handlers need from it. `cfg` is copied except `routes` and `ctx`, which
 * are borrowed and must outlive the server. On failure *out is NULL.
 */
error_code http_server_open(const http_config *cfg, http_server **out, error_info *err);

/*
 * The sockets the service manager passed to this process (systemd's socket
 * activation; the sd_listen_fds(3) protocol, without libsystemd): when LISTEN_PID
 * is this process's pid, LISTEN_FDS sockets from fd *first (3) on, each made
 * close-on-exec; *count is 0 when the variables are missing or meant for another
 * process. Serve each with listen "fd:N". The variables are left in place
 * (clearing them is the caller's business). ERROR_INVALID when LISTEN_FDS is not
 * a count or names an fd that is not open.
 */
error_code http_listen_fds(int *first, int *count, error_info *err);

/* Start serving an opened server (once). */
error_code http_server_start(http_server *srv, error_info *err);

/* "127.0.0.1:PORT", "[::1]:PORT" (with the port actually bound) or the socket
 * path. Valid until http_server_stop. */
const char *http_server_address(const http_server *srv);

/* True when listening on a unix socket. */
bool http_server_is_unix(const http_server *srv);

/* Connections the layer ended or refused on its own (see "Connections" above). */
typedef struct http_server_stats {
    size_t cut_slow;  /* pending at the head deadline */
    size_t cut_room;  /* the oldest pending one, cut to make room */
    size_t over;      /* beyond connection_limit: answered 503 */
} http_server_stats;

/* A snapshot; thread-safe. All zero for a server not started. */
void http_server_stats_get(http_server *srv, http_server_stats *out);

/*
 * Stop (started or only opened): close the listener, end every connection
 * (waiting for running hooks to return; delays are cut short), remove a unix
 * socket file, free everything. NULL is a no-op.
 */
void http_server_stop(http_server *srv);

/* One request handed to a server without a connection (tests, fuzzing): the
 * values as the library would have decoded them from the wire. */
typedef struct http_inject {
    const char *method;
    const char *path;           /* decoded, without the query */
    size_t path_len;            /* 0: strlen(path); more: the decoded path held a
                                   NUL at strlen(path) (sent as %00) */
    const http_param *query;    /* decoded arguments, in order */
    size_t nquery;
    const http_param *headers;  /* looked up case-insensitively, first match;
                                   duplicates kept (http_request_header_count) */
    size_t nheaders;
    const char *body;           /* may hold NULs; NULL: none */
    size_t body_len;
    http_peer peer;
} http_inject;

/*
 * Run `in` through `srv`'s hooks on the calling thread as a connection's request
 * would go (gate, control characters in the path 400, body cap 413, routing
 * 404/405, handler, log hook), opened or
 * started alike. `*resp` must start zeroed; it is left with the reply (status in
 * 100..599; fault and delay_ms as set, not applied); the caller releases it with
 * http_response_set(resp, 0, NULL). Strings in `in` are borrowed for the call.
 */
void http_server_dispatch(http_server *srv, const http_inject *in, http_response *resp);

#endif
