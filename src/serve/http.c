/*
 * http: the libmicrohttpd glue (with http_send.c, the only files that include it):
 * a request's life on a connection, the connections' guard hooked to the
 * library's notifications, start/stop. See rampart/http.h for the contract and
 * the request's path through the hooks.
 *
 * Why one thread per connection: handlers of the reference server block on purpose
 * (fault delays) and on SQLite commits (synchronous=FULL); with a single event
 * thread one slow reply would stall every client, which is exactly what a client's
 * timeout tests must not see. The connection limit bounds the thread count.
 * A server whose hooks are quick (the agent's lookups) asks for a few event-loop
 * threads instead (http_config.threads): under many kept-alive connections, a
 * thread each costs more in context switches than the requests themselves.
 *
 * Why the library's own connection limit is set far above ours: at its limit the
 * library stops accepting, and new connections wait in the kernel's queue where
 * no deadline reaches them (the queue is what slow clients fill). Ours answers
 * instead (http_guard.c).
 */
#include "http_internal.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

enum {
    DEFAULT_BODY_MAX = 1 << 20,
    DEFAULT_HEADER_MAX = 32 * 1024,
    DEFAULT_CONNECTIONS = 256,
    DEFAULT_HEAD_TIMEOUT_S = 5,
    DEFAULT_TIMEOUT_S = 30,
    LIBRARY_LIMIT_FACTOR = 2, /* the library's limit per thread: ours (with the
                                 pending ones) times this, never reached first */
    DROP_MAX_FACTOR = 4 /* body_max times this, read past the cap, then the cut */
};

/* ---- headers ---- */

const char *http_request_header(const http_request *req, const char *name)
{
    const http_exchange *x = req->impl;
    if (x && x->inject) { /* first match, as the library answers */
        for (size_t i = 0; i < x->inject->nheaders; i++) {
            if (strcasecmp(x->inject->headers[i].name, name) == 0)
                return x->inject->headers[i].value;
        }
        return NULL;
    }
    return x ? MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, name) : NULL;
}

typedef struct header_tally {
    const char *name;
    size_t count;
} header_tally;

static enum MHD_Result tally_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind, (void)value;
    header_tally *t = cls;
    if (key && strcasecmp(key, t->name) == 0)
        t->count++;
    return MHD_YES;
}

size_t http_request_header_count(const http_request *req, const char *name)
{
    const http_exchange *x = req->impl;
    header_tally t = {.name = name};
    if (x && x->inject) {
        for (size_t i = 0; i < x->inject->nheaders; i++)
            t.count += strcasecmp(x->inject->headers[i].name, name) == 0;
    } else if (x && x->conn) {
        MHD_get_connection_values(x->conn, MHD_HEADER_KIND, tally_header, &t);
    }
    return t.count;
}

/* ---- the connection's guard entry ---- */

static http_guard_conn *guard_entry(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

void http_request_admit(const http_request *req)
{
    const http_exchange *x = req->impl;
    if (x && x->conn && x->srv->guard)
        http_guard_admit(x->srv->guard, guard_entry(x->conn));
}

/* STARTED: counted (a connection beyond the limits is cut or marked to get a
 * 503); CLOSED, which the library notifies before it closes the socket:
 * forgotten. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    http_server *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        http_guard_close(srv->guard, *socket_context);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return;
    *socket_context = http_guard_open(srv->guard, ci->connect_fd);
    if (!*socket_context) /* out of memory: no room for it either */
        shutdown(ci->connect_fd, SHUT_RDWR);
}

/* ---- the request's life ---- */

static enum MHD_Result reply(http_exchange *x, http_response *resp)
{
    return http_send_reply(x, resp) ? MHD_YES : MHD_NO;
}

static enum MHD_Result route(http_exchange *x)
{
    http_response resp = {0};
    http_handle(x, &resp);
    return reply(x, &resp);
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    http_request *req = cls;
    if ((key && strlen(key) != key_size) || (value && strlen(value) != value_size))
        req->query_nul = true;
    if (req->nquery == HTTP_QUERY_MAX) {
        req->query_overflow = true;
        return MHD_NO;
    }
    req->query[req->nquery++] = (http_param){key ? key : "", value ? value : ""};
    return MHD_YES;
}

static void fill_peer(http_exchange *x)
{
    http_peer *p = &x->req.peer;
    p->uid = -1;
    p->pid = -1;
    p->family = x->srv->lis.family;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (p->family == AF_UNIX) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (fd && getsockopt(fd->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            p->uid = (long)cred.uid;
            p->pid = (long)cred.pid;
        }
    } else if (ci && ci->client_addr) {
        /* Copied out: the library's sockaddr carries no alignment promise. */
        struct sockaddr_in6 in6;
        struct sockaddr_in in4;
        if (ci->client_addr->sa_family == AF_INET6) {
            memcpy(&in6, ci->client_addr, sizeof in6);
            inet_ntop(AF_INET6, &in6.sin6_addr, p->addr, sizeof p->addr);
        } else {
            memcpy(&in4, ci->client_addr, sizeof in4);
            inet_ntop(AF_INET, &in4.sin_addr, p->addr, sizeof p->addr);
        }
    }
}

/* The request line, still encoded (the library calls this before decoding it): the
 * exchange starts here, as the only place that sees a "%00" the decoded path
 * would hide. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)conn;
    http_exchange *x = calloc(1, sizeof *x);
    if (!x)
        return NULL; /* the access handler then closes the connection */
    x->srv = cls;
    x->path_ctl = http_path_encoded_ctl(uri);
    return x;
}

/* The headers are in: the rest of the exchange. False when out of memory. */
static bool exchange_fill(http_exchange *x, struct MHD_Connection *conn, const char *url,
                          const char *method)
{
    x->conn = conn;
    clock_gettime(CLOCK_MONOTONIC, &x->start);
    x->path = strdup(url);
    x->segbuf = strdup(url);
    if (!x->path || !x->segbuf)
        return false;
    x->req.method = method;
    x->req.path = x->path;
    x->req.impl = x;
    MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &x->req);
    fill_peer(x);
    http_match(x);
    return true;
}

static void exchange_free(http_exchange *x)
{
    if (!x)
        return;
    free(x->path);
    free(x->segbuf);
    buf_free(&x->body);
    free(x);
}

/* A Content-Length beyond the cap is refused before reading a byte of it. */
static bool declared_too_large(http_exchange *x)
{
    const char *cl =
        MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!cl)
        return false;
    char *end;
    unsigned long long n = strtoull(cl, &end, 10);
    return end != cl && n > (unsigned long long)x->srv->cfg.body_max;
}

/* A connection accepted beyond the limit: told to come back, then closed. */
static enum MHD_Result over_limit(http_exchange *x)
{
    http_response resp = {0};
    http_layer_error(x, 503, "too many connections: retry in a second", &resp);
    http_response_header(&resp, "Retry-After", "1");
    http_response_header(&resp, "Connection", "close");
    x->replied = true;
    return reply(x, &resp);
}

/* First call: headers only. The gate speaks first (401 before 404). A request it
 * lets through admits its connection. */
static enum MHD_Result begin(http_exchange *x)
{
    const http_config *cfg = &x->srv->cfg;
    http_guard_conn *gc = guard_entry(x->conn);
    if (http_guard_over(gc))
        return over_limit(x);
    http_response resp = {0};
    if (cfg->gate && !cfg->gate(cfg->ctx, &x->req, &resp)) {
        x->replied = true;
        return reply(x, &resp);
    }
    http_response_set(&resp, 0, NULL);
    memset(&resp, 0, sizeof resp);
    http_guard_admit(x->srv->guard, gc);
    if (http_after_gate(x, &resp)) {
        x->replied = true;
        return reply(x, &resp);
    }
    if (declared_too_large(x)) {
        x->too_large = true;
        x->replied = true;
        return route(x);
    }
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    (void)cls, (void)version;
    http_exchange *x = *con_cls; /* made by on_uri */
    if (!x)
        return MHD_NO;
    if (!x->conn)
        return exchange_fill(x, conn, url, method) ? begin(x) : MHD_NO;
    if (*upload_size) {
        if (!x->replied)
            http_append_body(x, upload, *upload_size);
        /* Dropping keeps the 413 clean for an honest client; one that streams on
         * (a chunked body never ends) would hold its thread: cut it off. */
        if (x->too_large &&
            (x->dropped += *upload_size) > DROP_MAX_FACTOR * x->srv->cfg.body_max)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    return x->replied ? MHD_YES : route(x);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode code)
{
    (void)cls, (void)conn, (void)code;
    exchange_free(*con_cls);
    *con_cls = NULL;
}

/* ---- lifecycle ---- */

error_code http_server_open(const http_config *cfg, http_server **out, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    *out = NULL;
    http_server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return error_set(err, ERROR_NOMEM, "out of memory");
    srv->cfg = *cfg;
    srv->cfg.listen = NULL; /* borrowed string, only read here */
    srv->cfg.body_max = cfg->body_max ? cfg->body_max : DEFAULT_BODY_MAX;
    srv->cfg.header_max = cfg->header_max ? cfg->header_max : DEFAULT_HEADER_MAX;
    srv->cfg.connection_limit = cfg->connection_limit ? cfg->connection_limit
                                                      : DEFAULT_CONNECTIONS;
    srv->cfg.pending_limit = cfg->pending_limit ? cfg->pending_limit
                             : srv->cfg.connection_limit / 4 ? srv->cfg.connection_limit / 4
                                                             : 1;
    srv->cfg.head_timeout_s = cfg->head_timeout_s ? cfg->head_timeout_s
                                                  : DEFAULT_HEAD_TIMEOUT_S;
    srv->cfg.timeout_s = cfg->timeout_s ? cfg->timeout_s : DEFAULT_TIMEOUT_S;
    atomic_init(&srv->stopping, false);
    if (http_listener_open(cfg->listen, &srv->lis, err) != ERROR_OK) {
        free(srv);
        return err->code;
    }
    *out = srv;
    return ERROR_OK;
}

static error_code start_guard(http_server *srv, error_info *err)
{
    const http_config *c = &srv->cfg;
    http_guard_limits lim = {.connection_limit = c->connection_limit,
                             .pending_limit = c->pending_limit,
                             .head_timeout_s = c->head_timeout_s,
                             .admit_at_once = srv->lis.family == AF_UNIX};
    return http_guard_new(&lim, &srv->guard, err);
}

/* Per thread of the pool (the library splits its limit among them): any one
 * thread may end up holding every connection of ours. */
static unsigned library_limit(const http_config *c)
{
    return (c->connection_limit + c->pending_limit) * LIBRARY_LIMIT_FACTOR *
           (c->threads ? c->threads : 1);
}

error_code http_server_start(http_server *srv, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    if (srv->daemon)
        return error_set(err, ERROR_IO, "the server is already running");
    if (start_guard(srv, err) != ERROR_OK)
        return err->code;
    bool pool = srv->cfg.threads > 0;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                     (pool ? MHD_USE_EPOLL : MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL);
    if (srv->lis.family == AF_INET6)
        flags |= MHD_USE_IPv6;
    srv->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(pool ? srv->cfg.threads : 0),
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->lis.fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)library_limit(&srv->cfg),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg.timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)srv->cfg.header_max,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, srv,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_END);
    if (!srv->daemon) {
        http_guard_free(srv->guard);
        srv->guard = NULL;
        return error_set(err, ERROR_IO, "cannot start the HTTP server on %s",
                         srv->lis.address);
    }
    return ERROR_OK;
}

const char *http_server_address(const http_server *srv)
{
    return srv->lis.address;
}

bool http_server_is_unix(const http_server *srv)
{
    return srv->lis.family == AF_UNIX;
}

void http_server_stats_get(http_server *srv, http_server_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!srv || !srv->guard)
        return;
    http_guard_stats s;
    http_guard_stats_get(srv->guard, &s);
    *out = (http_server_stats){.cut_slow = s.cut_slow, .cut_room = s.cut_room,
                               .over = s.over};
}

void http_server_stop(http_server *srv)
{
    if (!srv)
        return;
    atomic_store(&srv->stopping, true);
    if (srv->daemon) {
        /* Take the listening socket back so it is closed exactly once, here. */
        MHD_socket fd = MHD_quiesce_daemon(srv->daemon);
        if (fd == MHD_INVALID_SOCKET)
            srv->lis.fd = -1; /* still the library's: it closes it */
        MHD_stop_daemon(srv->daemon); /* every connection notified closed */
        srv->daemon = NULL;
    }
    http_guard_free(srv->guard);
    http_listener_close(&srv->lis);
    free(srv);
}
