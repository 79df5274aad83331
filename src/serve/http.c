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
 * Those threads are ours, each driving one library daemon in its "external"
 * epoll mode (every daemon on the shared listening socket), rather than the
 * library's thread pool: that way a thread knows when it has handled everything
 * that was ready (the idle hook, the end of a batch) and which thread a request
 * runs on (req->worker), so a server can keep state per thread and per batch
 * without a lock (the agent: its store handle, the token replies of a batch).
 *
 * Why the library's own connection limit is set far above ours: at its limit the
 * library stops accepting, and new connections wait in the kernel's queue where
 * no deadline reaches them (the queue is what slow clients fill). Ours answers
 * instead (http_guard.c).
 */
#include "http_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

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
    const char *const *names;
    size_t n;
    size_t *counts;
} header_tally;

/* One header against every name: the lengths first, so most pairs cost one
 * comparison of two numbers. */
static void tally(header_tally *t, const char *key, size_t key_len)
{
    /* "X-Forwarded-For : x": a name with space before its colon is still that
     * header to a relay that trims it; the gate counts it so. */
    while (key_len && (key[key_len - 1] == ' ' || key[key_len - 1] == '\t'))
        key_len--;
    for (size_t i = 0; i < t->n; i++) {
        if (strlen(t->names[i]) == key_len && strncasecmp(key, t->names[i], key_len) == 0)
            t->counts[i]++;
    }
}

static enum MHD_Result tally_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    size_t key_size, const char *value, size_t value_size)
{
    (void)kind, (void)value, (void)value_size;
    if (key)
        tally(cls, key, key_size);
    return MHD_YES;
}

void http_request_header_counts(const http_request *req, const char *const *names, size_t n,
                                size_t *counts)
{
    const http_exchange *x = req->impl;
    header_tally t = {.names = names, .n = n, .counts = counts};
    memset(counts, 0, n * sizeof *counts);
    if (x && x->inject) {
        for (size_t i = 0; i < x->inject->nheaders; i++)
            tally(&t, x->inject->headers[i].name, strlen(x->inject->headers[i].name));
    } else if (x && x->conn) {
        MHD_get_connection_values_n(x->conn, MHD_HEADER_KIND, tally_header, &t);
    }
}

size_t http_request_header_count(const http_request *req, const char *name)
{
    size_t count;
    http_request_header_counts(req, &name, 1, &count);
    return count;
}

/* ---- the connection: its guard entry and its peer ---- */

/* What stays true for as long as the connection: its guard entry, and who is at
 * the other end (a unix peer's credentials are those of its connect(); a TCP
 * peer's address cannot change either), read once at accept rather than per
 * request: a kept-alive client sends thousands. */
typedef struct http_conn {
    http_guard_conn *guard;
    http_peer peer;
    unsigned long long number; /* req->connection */
} http_conn;

static http_conn *conn_state(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static http_guard_conn *guard_entry(struct MHD_Connection *conn)
{
    http_conn *c = conn_state(conn);
    return c ? c->guard : NULL;
}

void http_request_admit(const http_request *req)
{
    const http_exchange *x = req->impl;
    if (x && x->conn && x->srv->guard)
        http_guard_admit(x->srv->guard, guard_entry(x->conn));
}

static void read_peer(http_server *srv, struct MHD_Connection *conn, int fd, http_peer *p)
{
    p->uid = -1;
    p->pid = -1;
    p->family = srv->lis.family;
    if (p->family == AF_UNIX) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
            p->uid = (long)cred.uid;
            p->pid = (long)cred.pid;
        }
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return;
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

/* STARTED: counted (a connection beyond the limits is cut or marked to get a
 * 503), its peer read; CLOSED, which the library notifies before it closes the
 * socket: forgotten. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    http_server *srv = cls;
    http_conn *c = *socket_context;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        if (c)
            http_guard_close(srv->guard, c->guard);
        free(c);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return;
    c = calloc(1, sizeof *c);
    if (c) {
        c->number = atomic_fetch_add(&srv->connections, 1) + 1;
        read_peer(srv, conn, ci->connect_fd, &c->peer);
        c->guard = http_guard_open(srv->guard, ci->connect_fd);
    }
    if (c && !c->guard) {
        free(c);
        c = NULL;
    }
    *socket_context = c;
    if (!c) /* out of memory: no room for it either */
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
    const http_conn *c = conn_state(x->conn);
    if (c) {
        x->req.peer = c->peer;
        x->req.connection = c->number;
        return;
    }
    x->req.peer = (http_peer){.family = x->srv->lis.family, .uid = -1, .pid = -1};
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
    const http_worker *w = cls;
    x->worker = w;
    x->srv = w->srv;
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
    x->req.worker = x->worker->index;
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
    err = ERROR_OR_SCRATCH(err);
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
    atomic_init(&srv->connections, 0);
    srv->wake = -1;
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

/* Per daemon (each event thread runs one): any one of them may end up holding
 * every connection of ours. */
static unsigned library_limit(const http_config *c)
{
    return (c->connection_limit + c->pending_limit) * LIBRARY_LIMIT_FACTOR;
}

/* An event thread: wait for the daemon's sockets (or its next timeout, or the
 * server's stop), let the library handle whatever is ready, then tell the idle
 * hook that the batch is done. Each daemon is driven by this one thread only. */
static void *event_loop(void *arg)
{
    http_worker *w = arg;
    http_server *srv = w->srv;
    struct epoll_event ev[2];
    while (!atomic_load(&srv->stopping)) {
        MHD_UNSIGNED_LONG_LONG next;
        int timeout = -1;
        if (MHD_get_timeout(w->daemon, &next) == MHD_YES)
            timeout = next > INT_MAX ? INT_MAX : (int)next;
        if (epoll_wait(w->epoll_fd, ev, 2, timeout) < 0 && errno != EINTR)
            break;
        if (atomic_load(&srv->stopping))
            break;
        MHD_run(w->daemon);
        if (srv->cfg.idle)
            srv->cfg.idle(srv->cfg.ctx, w->index);
    }
    return NULL;
}

static struct MHD_Daemon *start_daemon(http_worker *w, unsigned flags)
{
    http_server *srv = w->srv;
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, srv,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)srv->lis.fd,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)library_limit(&srv->cfg),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)srv->cfg.timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)srv->cfg.header_max,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, w,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
        MHD_OPTION_END);
}

/* An event thread's daemon (the library's "external" epoll mode: no thread of its
 * own), its epoll set (the daemon's epoll and the stop event) and the thread. */
static bool start_event_worker(http_worker *w, unsigned flags)
{
    w->daemon = start_daemon(w, flags | MHD_USE_EPOLL);
    const union MHD_DaemonInfo *di =
        w->daemon ? MHD_get_daemon_info(w->daemon, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (!di)
        return false;
    w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lib = {.events = EPOLLIN}, stop = {.events = EPOLLIN};
    if (w->epoll_fd < 0 || epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, di->epoll_fd, &lib) != 0 ||
        epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, w->srv->wake, &stop) != 0)
        return false;
    w->running = pthread_create(&w->thread, NULL, event_loop, w) == 0;
    return w->running;
}

/* Stop every worker: the event threads first (none runs a hook after this), then
 * the daemons, which close their connections (each notified closed). The shared
 * listening socket is taken back from each daemon so that it is closed exactly
 * once, by http_listener_close. */
static void stop_workers(http_server *srv)
{
    atomic_store(&srv->stopping, true);
    uint64_t one = 1;
    if (srv->wake >= 0 && write(srv->wake, &one, sizeof one) < 0) {
        /* an eventfd write fails only on overflow: it is readable already */
    }
    for (unsigned i = 0; i < srv->nworkers; i++) {
        if (srv->workers[i].running)
            pthread_join(srv->workers[i].thread, NULL);
    }
    for (unsigned i = 0; i < srv->nworkers; i++) {
        http_worker *w = &srv->workers[i];
        if (!w->daemon)
            continue;
        if (MHD_quiesce_daemon(w->daemon) == MHD_INVALID_SOCKET)
            srv->lis.fd = -1; /* still the library's: it closes it */
        MHD_stop_daemon(w->daemon);
        if (w->epoll_fd >= 0)
            close(w->epoll_fd);
    }
    free(srv->workers);
    srv->workers = NULL;
    srv->nworkers = 0;
    if (srv->wake >= 0)
        close(srv->wake);
    srv->wake = -1;
}

static bool start_workers(http_server *srv)
{
    bool events = srv->cfg.threads > 0;
    srv->nworkers = events ? srv->cfg.threads : 1;
    srv->workers = calloc(srv->nworkers, sizeof *srv->workers);
    if (!srv->workers)
        return false;
    unsigned flags = srv->lis.family == AF_INET6 ? MHD_USE_IPv6 : 0;
    for (unsigned i = 0; i < srv->nworkers; i++)
        srv->workers[i] = (http_worker){.srv = srv, .index = events ? (int)i : -1,
                                        .epoll_fd = -1};
    if (!events) {
        srv->workers[0].daemon = start_daemon(
            &srv->workers[0], flags | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
                                  MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL);
        return srv->workers[0].daemon != NULL;
    }
    srv->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (srv->wake < 0)
        return false;
    for (unsigned i = 0; i < srv->nworkers; i++) {
        if (!start_event_worker(&srv->workers[i], flags))
            return false;
    }
    return true;
}

error_code http_server_start(http_server *srv, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    if (srv->workers)
        return error_set(err, ERROR_IO, "the server is already running");
    if (start_guard(srv, err) != ERROR_OK)
        return err->code;
    if (!start_workers(srv)) {
        stop_workers(srv);
        atomic_store(&srv->stopping, false);
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
    stop_workers(srv); /* every connection notified closed */
    http_guard_free(srv->guard);
    http_listener_close(&srv->lis);
    free(srv);
}
