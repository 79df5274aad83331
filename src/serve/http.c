/*
 * http: the libmicrohttpd glue (the only file that includes it). See rampart/http.h
 * for the contract and the request's path through the hooks.
 *
 * Why one thread per connection: handlers of the reference server block on purpose
 * (fault delays) and on SQLite commits (synchronous=FULL); with a single event
 * thread one slow reply would stall every client, which is exactly what a client's
 * timeout tests must not see. The connection limit bounds the thread count.
 * A server whose hooks are quick (the agent's lookups) asks for a few event-loop
 * threads instead (http_config.threads): under many kept-alive connections, a
 * thread each costs more in context switches than the requests themselves.
 */
#include "http_internal.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "rampart/buf.h"
#include "rampart/model.h"

enum {
    DEFAULT_BODY_MAX = 1 << 20,
    DEFAULT_HEADER_MAX = 32 * 1024,
    DEFAULT_CONNECTIONS = 256,
    DEFAULT_PER_IP = 64,
    DEFAULT_TIMEOUT_S = 30,
    DELAY_MAX_MS = 60000,
    DELAY_SLICE_MS = 20,
    DROP_MAX_FACTOR = 4 /* body_max times this, read past the cap, then the cut */
};

struct http_server {
    http_config cfg;
    http_listener lis;
    struct MHD_Daemon *daemon;
    atomic_bool stopping;
};

/* One request, from its headers to the completion callback. */
typedef struct exchange {
    http_server *srv;
    struct MHD_Connection *conn;
    http_request req;
    struct timespec start;
    char *path;      /* the request path (req.path) */
    char *segbuf;    /* a copy cut into segments; path parameters point into it */
    buf_t body;      /* the request body read so far */
    bool too_large;
    size_t dropped;  /* body bytes read and dropped after too_large */
    bool replied;    /* a reply was queued before the body (gate, 413) */
    char names[HTTP_PARAMS_MAX][HTTP_PARAM_NAME_MAX]; /* from the matched pattern */
    const http_route *rt;        /* the matched route, or NULL: then `allow` */
    char allow[HTTP_ALLOW_MAX];  /* the methods of the path's routes ("": a 404) */
    const http_inject *inject; /* http_server_dispatch: its headers (conn is NULL) */
} exchange;

/* ---- small helpers ---- */

static double ms_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) * 1e3 +
           (double)(now.tv_nsec - start->tv_nsec) / 1e6;
}

const char *http_request_header(const http_request *req, const char *name)
{
    const exchange *x = req->impl;
    if (x && x->inject) { /* first match, as the library answers */
        for (size_t i = 0; i < x->inject->nheaders; i++) {
            if (strcasecmp(x->inject->headers[i].name, name) == 0)
                return x->inject->headers[i].value;
        }
        return NULL;
    }
    return x ? MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, name) : NULL;
}

const char *http_request_param(const http_request *req, const char *name)
{
    for (size_t i = 0; i < req->nparams; i++) {
        if (strcmp(req->params[i].name, name) == 0)
            return req->params[i].value;
    }
    return NULL;
}

static bool header_text_ok(const char *s, size_t max)
{
    size_t len = strlen(s);
    return len > 0 && len < max && !strpbrk(s, "\r\n");
}

bool http_response_header(http_response *resp, const char *name, const char *value)
{
    if (resp->nheaders == HTTP_HEADERS_MAX || !header_text_ok(name, HTTP_HEADER_NAME_MAX) ||
        strlen(value) >= HTTP_HEADER_VALUE_MAX || strpbrk(value, "\r\n"))
        return false;
    http_header *h = &resp->headers[resp->nheaders++];
    memcpy(h->name, name, strlen(name) + 1);
    memcpy(h->value, value, strlen(value) + 1);
    return true;
}

void http_response_set(http_response *resp, int status, char *body)
{
    if (resp->body) /* it may have held a token */
        model_wipe(resp->body, resp->body_len);
    free(resp->body);
    resp->status = status;
    resp->body = body;
    resp->body_len = body ? strlen(body) : 0;
}

/* The layer's own replies: the server's error hook shapes the body. */
static void layer_error(exchange *x, int status, const char *msg, http_response *resp)
{
    resp->status = status;
    const http_config *cfg = &x->srv->cfg;
    if (cfg->error) {
        cfg->error(cfg->ctx, &x->req, status, msg, resp);
        resp->status = status;
        return;
    }
    size_t n = strlen(msg) + 16;
    char *body = malloc(n);
    if (body) /* msg comes from this file: no quotes or backslashes to escape */
        snprintf(body, n, "{\"msg\":\"%s\"}", msg);
    http_response_set(resp, status, body);
}

/* ---- sending ---- */

/* Wait before replying; cut short when the server stops, so stop never hangs. */
static void delay(http_server *srv, unsigned ms)
{
    if (ms > DELAY_MAX_MS)
        ms = DELAY_MAX_MS;
    while (ms > 0 && !atomic_load(&srv->stopping)) {
        unsigned slice = ms < DELAY_SLICE_MS ? ms : DELAY_SLICE_MS;
        struct timespec ts = {0, (long)slice * 1000000L};
        nanosleep(&ts, NULL);
        ms -= slice;
    }
}

typedef struct truncated {
    char *body;
    size_t cut; /* bytes sent before the connection is closed */
} truncated;

static ssize_t truncated_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    truncated *t = cls;
    if (pos >= t->cut)
        return MHD_CONTENT_READER_END_WITH_ERROR; /* the library closes the connection */
    size_t n = t->cut - (size_t)pos < max ? t->cut - (size_t)pos : max;
    memcpy(buf, t->body + pos, n);
    return (ssize_t)n;
}

static void truncated_free(void *cls)
{
    truncated *t = cls;
    model_wipe(t->body, strlen(t->body)); /* a create reply carries the token */
    free(t->body);
    free(t);
}

/* A reply that announces body_len bytes and sends about half. */
static struct MHD_Response *truncated_response(http_response *resp)
{
    truncated *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->body = resp->body;
    t->cut = resp->body_len / 2;
    struct MHD_Response *r = MHD_create_response_from_callback(
        (uint64_t)resp->body_len, 4096, truncated_read, t, truncated_free);
    if (!r) {
        free(t);
        return NULL;
    }
    resp->body = NULL; /* owned by the response now */
    return r;
}

/* A body sent one byte at a time, trickle_ms apart (clients' low-speed limits).
 * With a thread per connection the sleep holds only this connection's thread; a
 * client that gave up makes the next send fail and the library close it. */
typedef struct trickled {
    http_server *srv;
    char *body;
    size_t len;
    unsigned ms;
} trickled;

static ssize_t trickled_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    trickled *t = cls;
    if (pos >= t->len || max == 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    delay(t->srv, t->ms);
    if (atomic_load(&t->srv->stopping))
        return MHD_CONTENT_READER_END_WITH_ERROR;
    buf[0] = t->body[pos];
    return 1;
}

static void trickled_free(void *cls)
{
    trickled *t = cls;
    model_wipe(t->body, t->len);
    free(t->body);
    free(t);
}

static struct MHD_Response *trickled_response(http_server *srv, http_response *resp)
{
    trickled *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    *t = (trickled){.srv = srv, .body = resp->body, .len = resp->body_len,
                    .ms = resp->trickle_ms};
    struct MHD_Response *r = MHD_create_response_from_callback(
        (uint64_t)resp->body_len, 1, trickled_read, t, trickled_free);
    if (!r) {
        free(t);
        return NULL;
    }
    resp->body = NULL; /* owned by the response now */
    return r;
}

/* A reply body may carry a secret (a credential's token in a create reply, later
 * the agent's token replies): wiped before the memory goes back. Bodies are
 * NUL-terminated (http_response_set). */
static void wipe_free(void *body)
{
    if (!body)
        return;
    model_wipe(body, strlen(body));
    free(body);
}

static struct MHD_Response *plain_response(http_response *resp)
{
    if (!resp->body || resp->body_len == 0)
        return MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback(resp->body_len, resp->body,
                                                           wipe_free);
    if (r)
        resp->body = NULL;
    return r;
}

/*
 * A TCP reset instead of an orderly close. SO_LINGER {1, 0} alone is not enough:
 * the library shuts the socket down for writing before closing it, and a client
 * reading the FIN first reports an empty reply. Disconnecting the socket
 * (connect with AF_UNSPEC) aborts it at once: the kernel sends the RST now, and
 * the library's later shutdown and close act on an unconnected socket.
 */
static void arm_reset(exchange *x)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci || x->req.peer.family == AF_UNIX)
        return;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(ci->connect_fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    struct sockaddr unspec = {.sa_family = AF_UNSPEC};
    connect(ci->connect_fd, &unspec, sizeof unspec);
}

static void log_reply(exchange *x, const http_response *resp)
{
    const http_config *cfg = &x->srv->cfg;
    if (cfg->log)
        cfg->log(cfg->ctx, &x->req, resp, ms_since(&x->start));
}

static bool add_headers(struct MHD_Response *r, const http_response *resp)
{
    if (resp->body_len > 0 &&
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                resp->content_type ? resp->content_type
                                                   : "application/json") != MHD_YES)
        return false;
    for (size_t i = 0; i < resp->nheaders; i++) {
        if (MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value) !=
            MHD_YES)
            return false;
    }
    return true;
}

/* Hand `resp` to the wire (or not, for a fault); frees its body in every case. */
static enum MHD_Result send_reply(exchange *x, http_response *resp)
{
    if (resp->delay_ms)
        delay(x->srv, resp->delay_ms);
    if (resp->status < 100 || resp->status > 599)
        resp->status = 500;
    http_fault fault = resp->fault;
    if (fault == HTTP_FAULT_TRUNCATE && resp->body_len == 0)
        fault = HTTP_FAULT_DROP;
    if (fault == HTTP_FAULT_RESET)
        arm_reset(x);
    if (fault == HTTP_FAULT_DROP || fault == HTTP_FAULT_RESET) {
        http_response_set(resp, resp->status, NULL);
        log_reply(x, resp);
        return MHD_NO; /* the library closes the connection: no reply at all */
    }
    struct MHD_Response *r =
        fault == HTTP_FAULT_TRUNCATE                    ? truncated_response(resp)
        : resp->trickle_ms > 0 && resp->body_len > 0 ? trickled_response(x->srv, resp)
                                                       : plain_response(resp);
    enum MHD_Result ok = MHD_NO;
    if (r && add_headers(r, resp))
        ok = MHD_queue_response(x->conn, (unsigned)resp->status, r);
    if (r)
        MHD_destroy_response(r);
    http_response_set(resp, resp->status, NULL);
    log_reply(x, resp);
    return ok;
}

/* ---- routing ---- */

/* Route as soon as method and path are known: the gate sees the matched route's
 * data (what it needs, who may ask), though it still speaks first. */
static void match(exchange *x)
{
    const http_config *cfg = &x->srv->cfg;
    x->rt = http_route_find(cfg->routes, cfg->nroutes, x->segbuf, &x->req, x->names,
                            x->allow);
    x->req.route_data = x->rt ? x->rt->data : NULL;
}

/* The reply to a request whose body has been read (or refused as too large). */
static void handle(exchange *x, http_response *resp)
{
    http_server *srv = x->srv;
    if (x->too_large) {
        char msg[96];
        snprintf(msg, sizeof msg, "request body larger than %zu bytes", srv->cfg.body_max);
        layer_error(x, 413, msg, resp);
        return;
    }
    if (x->rt) {
        x->req.body = x->body.data;
        x->req.body_len = x->body.len;
        x->rt->handler(srv->cfg.ctx, &x->req, resp);
    } else if (x->allow[0]) {
        char msg[HTTP_ALLOW_MAX + 64];
        /* The method is the client's text: not echoed into a JSON body. */
        snprintf(msg, sizeof msg, "method not allowed here; allowed: %s", x->allow);
        layer_error(x, 405, msg, resp);
        http_response_header(resp, "Allow", x->allow);
    } else {
        layer_error(x, 404, "no such resource", resp);
    }
}

static enum MHD_Result route(exchange *x)
{
    http_response resp = {0};
    handle(x, &resp);
    return send_reply(x, &resp);
}

/* ---- the request's life ---- */

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

static void fill_peer(exchange *x)
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

static exchange *exchange_new(http_server *srv, struct MHD_Connection *conn,
                              const char *url, const char *method)
{
    exchange *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->srv = srv;
    x->conn = conn;
    clock_gettime(CLOCK_MONOTONIC, &x->start);
    x->path = strdup(url);
    x->segbuf = strdup(url);
    if (!x->path || !x->segbuf) {
        free(x->path);
        free(x->segbuf);
        free(x);
        return NULL;
    }
    x->req.method = method;
    x->req.path = x->path;
    x->req.impl = x;
    MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, collect_arg, &x->req);
    fill_peer(x);
    match(x);
    return x;
}

static void exchange_free(exchange *x)
{
    if (!x)
        return;
    free(x->path);
    free(x->segbuf);
    buf_free(&x->body);
    free(x);
}

/* A Content-Length beyond the cap is refused before reading a byte of it. */
static bool declared_too_large(exchange *x)
{
    const char *cl =
        MHD_lookup_connection_value(x->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (!cl)
        return false;
    char *end;
    unsigned long long n = strtoull(cl, &end, 10);
    return end != cl && n > (unsigned long long)x->srv->cfg.body_max;
}

/* First call: headers only. The gate speaks first (401 before 404). */
static enum MHD_Result begin(exchange *x)
{
    const http_config *cfg = &x->srv->cfg;
    http_response resp = {0};
    if (cfg->gate && !cfg->gate(cfg->ctx, &x->req, &resp)) {
        x->replied = true;
        return send_reply(x, &resp);
    }
    free(resp.body);
    if (declared_too_large(x)) {
        x->too_large = true;
        x->replied = true;
        return route(x);
    }
    return MHD_YES;
}

static void append_body(exchange *x, const char *data, size_t n)
{
    if (x->too_large)
        return;
    if (n > x->srv->cfg.body_max - x->body.len) {
        x->too_large = true; /* keep reading (and dropping) so the reply is clean */
        buf_free(&x->body);
        return;
    }
    if (!buf_append(&x->body, data, n))
        x->too_large = true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    http_server *srv = cls;
    exchange *x = *con_cls;
    if (!x) {
        x = exchange_new(srv, conn, url, method);
        if (!x)
            return MHD_NO;
        *con_cls = x;
        return begin(x);
    }
    if (*upload_size) {
        if (!x->replied)
            append_body(x, upload, *upload_size);
        /* Dropping keeps the 413 clean for an honest client; one that streams on
         * (a chunked body never ends) would hold its thread: cut it off. */
        if (x->too_large && (x->dropped += *upload_size) > DROP_MAX_FACTOR * srv->cfg.body_max)
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
    srv->cfg.per_ip_limit = cfg->per_ip_limit ? cfg->per_ip_limit : DEFAULT_PER_IP;
    srv->cfg.timeout_s = cfg->timeout_s ? cfg->timeout_s : DEFAULT_TIMEOUT_S;
    atomic_init(&srv->stopping, false);
    if (http_listener_open(cfg->listen, &srv->lis, err) != ERROR_OK) {
        free(srv);
        return err->code;
    }
    *out = srv;
    return ERROR_OK;
}

error_code http_server_start(http_server *srv, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    if (srv->daemon)
        return error_set(err, ERROR_IO, "the server is already running");
    bool pool = srv->cfg.threads > 0;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                     (pool ? MHD_USE_EPOLL : MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL);
    if (srv->lis.family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* Per-IP counting means nothing on a unix socket: every peer is "local". */
    unsigned per_ip = srv->lis.family == AF_UNIX ? 0 : srv->cfg.per_ip_limit;
    srv->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(pool ? srv->cfg.threads : 0),
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->lis.fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)srv->cfg.connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg.timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)srv->cfg.header_max,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_END);
    if (!srv->daemon)
        return error_set(err, ERROR_IO, "cannot start the HTTP server on %s",
                         srv->lis.address);
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
        MHD_stop_daemon(srv->daemon);
        srv->daemon = NULL;
    }
    http_listener_close(&srv->lis);
    free(srv);
}

/* ---- without a connection (tests, fuzzing) ---- */

void http_server_dispatch(http_server *srv, const http_inject *in, http_response *resp)
{
    const http_config *cfg = &srv->cfg;
    exchange x = {.srv = srv, .inject = in};
    clock_gettime(CLOCK_MONOTONIC, &x.start);
    x.req.method = in->method;
    x.req.impl = &x;
    x.req.peer = in->peer;
    for (size_t i = 0; i < in->nquery; i++) {
        if (x.req.nquery == HTTP_QUERY_MAX) {
            x.req.query_overflow = true;
            break;
        }
        x.req.query[x.req.nquery++] = in->query[i];
    }
    x.path = strdup(in->path);
    x.segbuf = strdup(in->path);
    if (!x.path || !x.segbuf) {
        layer_error(&x, 500, "out of memory", resp);
        goto done;
    }
    x.req.path = x.path;
    match(&x);
    if (cfg->gate && !cfg->gate(cfg->ctx, &x.req, resp))
        goto done;
    http_response_set(resp, 0, NULL); /* a gate that lets the request on has no say */
    memset(resp, 0, sizeof *resp);
    if (in->body_len > cfg->body_max)
        x.too_large = true;
    else if (in->body && in->body_len > 0)
        append_body(&x, in->body, in->body_len);
    handle(&x, resp);
done:
    if (resp->status < 100 || resp->status > 599)
        resp->status = 500;
    if (cfg->log) {
        http_response seen = *resp;
        seen.body = NULL;
        cfg->log(cfg->ctx, &x.req, &seen, ms_since(&x.start));
    }
    free(x.path);
    free(x.segbuf);
    buf_free(&x.body);
}
