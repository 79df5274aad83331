/*
 * http internals shared by http.c (the libmicrohttpd glue, lifecycle),
 * http_request.c (a request's way through the hooks), http_send.c (the reply on
 * the wire), http_listen.c (the listening socket), http_route.c (routes, paths)
 * and http_guard.c (connections not yet admitted). Not part of the public
 * contract (see rampart/http.h); only http*.c include this, and only http.c and
 * http_send.c include libmicrohttpd.
 */
#ifndef RAMPART_HTTP_INTERNAL_H
#define RAMPART_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/un.h>
#include <time.h>

#include "rampart/buf.h"
#include "rampart/http.h"

enum {
    HTTP_PARAM_NAME_MAX = 32, /* bytes of a {name} in a pattern, with the NUL */
    HTTP_ALLOW_MAX = 128      /* the Allow header of a 405 */
};

/* A bound, listening socket and how to name it. */
typedef struct http_listener {
    int fd;                             /* -1 once closed or handed over */
    int family;                         /* AF_INET, AF_INET6 or AF_UNIX */
    char address[HTTP_ADDRESS_MAX];     /* "127.0.0.1:PORT", "[::1]:PORT" or the path */
    char unix_path[sizeof ((struct sockaddr_un *)0)->sun_path]; /* "" for TCP */
} http_listener;

/*
 * Parse `spec` ("tcp:HOST:PORT" or "unix:PATH"), create, bind and listen; or
 * ("fd:N") check and adopt a listening socket passed by systemd.
 * ERROR_INVALID for a bad or non-loopback address (the message names the fix),
 * ERROR_IO for socket errors (address in use, …). On failure out->fd is -1.
 */
error_code http_listener_open(const char *spec, http_listener *out, error_info *err);

/* Close the socket (if still held) and remove a unix socket file. Idempotent. */
void http_listener_close(http_listener *lis);

/*
 * The route for req->method and `path`, which is cut in place into segments (path
 * parameters point into it; their names are copied into `names`), or NULL: then
 * `allow` lists the methods of the routes matching the path ("GET, DELETE": a
 * 405), or is "" (a 404).
 */
const http_route *http_route_find(const http_route *routes, size_t nroutes, char *path,
                                  http_request *req, char names[][HTTP_PARAM_NAME_MAX],
                                  char allow[HTTP_ALLOW_MAX]);

/*
 * True when the request target `uri` as sent (still percent-encoded; its path is
 * what comes before '?') holds a control character in its path, raw or encoded
 * (%00-%1F, %7F): decoded, a NUL would silently cut the C string the hooks see
 * ("web%00x" read as "web"), the others have no place in a path either.
 */
bool http_path_encoded_ctl(const char *uri);

/* The same for a path already decoded, `len` bytes long (a NUL inside counts). */
bool http_path_decoded_ctl(const char *path, size_t len);

/* ---- http.c: the server and one request (libmicrohttpd's types stay opaque) ---- */

struct MHD_Daemon;
struct MHD_Connection;

/* One library daemon and who drives it: an event thread of ours (index 0..), or
 * the library's own threads (index -1, a thread per connection). Every daemon of
 * a server shares its listening socket. */
typedef struct http_worker {
    struct http_server *srv;
    int index;
    struct MHD_Daemon *daemon;
    int epoll_fd;              /* an event thread's: the daemon's epoll and `wake` */
    pthread_t thread;
    bool running;              /* the event thread was started */
} http_worker;

struct http_server {
    http_config cfg;
    http_listener lis;
    http_worker *workers;      /* from http_server_start on; threads, or 1 */
    unsigned nworkers;
    int wake;                  /* an eventfd, readable once the server stops */
    struct http_guard *guard;  /* from http_server_start on */
    atomic_bool stopping;
    atomic_ullong connections; /* connections accepted so far: their numbers */
};

/* One request, from its request line to the completion callback. */
typedef struct http_exchange {
    http_server *srv;
    const http_worker *worker;   /* NULL for dispatch */
    struct MHD_Connection *conn; /* NULL until the headers are in, and for dispatch */
    http_request req;
    struct timespec start;
    char *path;      /* the request path (req.path) */
    char *segbuf;    /* a copy cut into segments; path parameters point into it */
    buf_t body;      /* the request body read so far */
    bool path_ctl;   /* the decoded path holds a control character: a 400 */
    bool too_large;
    size_t dropped;  /* body bytes read and dropped after too_large */
    bool replied;    /* a reply was queued before the body (gate, 400, 413, 503) */
    char names[HTTP_PARAMS_MAX][HTTP_PARAM_NAME_MAX]; /* from the matched pattern */
    const http_route *rt;        /* the matched route, or NULL: then `allow` */
    char allow[HTTP_ALLOW_MAX];  /* the methods of the path's routes ("": a 404) */
    const http_inject *inject; /* http_server_dispatch: its headers (conn is NULL) */
} http_exchange;

/* ---- http_request.c: after the headers, with or without a connection ---- */

/* One of the layer's own replies (status, reason `msg`), shaped by the error hook. */
void http_layer_error(http_exchange *x, int status, const char *msg, http_response *resp);

/* Route as soon as method and path are known: the gate sees the matched route's
 * data (what it needs, who may ask), though it still speaks first. */
void http_match(http_exchange *x);

/* The layer's checks that come after the gate (a stranger learns nothing from
 * them): true when `resp` holds the reply (a control character in the path: 400). */
bool http_after_gate(http_exchange *x, http_response *resp);

/* Body bytes, up to body_max; past it too_large is set and the rest dropped. */
void http_append_body(http_exchange *x, const char *data, size_t n);

/* The reply to a request whose body has been read (or refused as too large): 413,
 * the route's handler, 405 with Allow, or 404. */
void http_handle(http_exchange *x, http_response *resp);

/* ---- http_send.c: a reply on the wire, faults included ---- */

/* Milliseconds since `start` (CLOCK_MONOTONIC). */
double http_ms_since(const struct timespec *start);

/* Hand `resp` to the wire (or not, for a fault: drop, reset, truncate, trickle;
 * after its delay), then the log hook; frees its body in every case. False when
 * the library must close the connection (a drop or reset, or a failure). */
bool http_send_reply(http_exchange *x, http_response *resp);

/* ---- http_guard.c ---- */

typedef struct http_guard http_guard;
typedef struct http_guard_conn http_guard_conn;

typedef struct http_guard_limits {
    unsigned connection_limit; /* open at once; beyond: `over` (a 503, then closed) */
    unsigned pending_limit;    /* not admitted at once; beyond: the oldest is cut */
    unsigned head_timeout_s;   /* not admitted this long after accept: cut */
    bool admit_at_once;        /* a unix socket: its peer is known (SO_PEERCRED) */
} http_guard_limits;

typedef struct http_guard_stats {
    size_t cut_slow;  /* not admitted by the head deadline */
    size_t cut_room;  /* the oldest pending one, cut to make room for a new one */
    size_t over;      /* accepted beyond connection_limit (answered 503) */
} http_guard_stats;

/* A guard and its watchdog thread. ERROR_NOMEM, ERROR_IO (no thread). */
error_code http_guard_new(const http_guard_limits *lim, http_guard **out, error_info *err);

/* A new connection on socket `fd` (the library's STARTED notification): counted,
 * pending unless admitted at once; the oldest pending one is cut when there are
 * too many. NULL when out of memory (the caller closes the connection). */
http_guard_conn *http_guard_open(http_guard *g, int fd);

/* True when `c` came beyond connection_limit: answer 503 and close. */
bool http_guard_over(const http_guard_conn *c);

/* `c` is admitted: no deadline, not cut to make room (an over one never is). */
void http_guard_admit(http_guard *g, http_guard_conn *c);

/* The library closes `c` (its CLOSED notification, before the socket is closed):
 * forgotten and freed. NULL is a no-op. */
void http_guard_close(http_guard *g, http_guard_conn *c);

void http_guard_stats_get(http_guard *g, http_guard_stats *out);

/* Stop the watchdog and free; after the library closed every connection. */
void http_guard_free(http_guard *g);

#endif
