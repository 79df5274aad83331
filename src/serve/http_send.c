/*
 * http: a reply on the wire. A plain body is handed to the library (and wiped
 * when it is done with it: a reply may carry a token); the faults clients' tests
 * ask for (drop, reset, truncate, delay, trickle: src/serve/README.md) are made
 * here. With http.c, the only file that includes libmicrohttpd.
 */
#include "http_internal.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rampart/model.h"

enum {
    DELAY_MAX_MS = 60000,
    DELAY_SLICE_MS = 20
};

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
    model_free_wiped(t->body); /* a create reply carries the token */
    free(t);
}

/* A response that reads resp's body through `state` (made for it and freed by
 * `done`), `block` bytes at most at a time: the body is the state's from then on.
 * NULL when the library refuses it: `state` is freed, the body stays resp's. */
static struct MHD_Response *reader_response(http_response *resp, size_t block,
                                            MHD_ContentReaderCallback reader, void *state,
                                            MHD_ContentReaderFreeCallback done)
{
    struct MHD_Response *r =
        MHD_create_response_from_callback((uint64_t)resp->body_len, block, reader, state, done);
    if (!r) {
        free(state);
        return NULL;
    }
    resp->body = NULL; /* owned by the response now */
    return r;
}

/* A reply that announces body_len bytes and sends about half. */
static struct MHD_Response *truncated_response(http_response *resp)
{
    truncated *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    t->body = resp->body;
    t->cut = resp->body_len / 2;
    return reader_response(resp, 4096, truncated_read, t, truncated_free);
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
    model_free_wiped(t->body);
    free(t);
}

static struct MHD_Response *trickled_response(http_server *srv, http_response *resp)
{
    trickled *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    *t = (trickled){.srv = srv, .body = resp->body, .len = resp->body_len,
                    .ms = resp->trickle_ms};
    return reader_response(resp, 1, trickled_read, t, trickled_free);
}

/* A reply body may carry a secret (a credential's token in a create reply, the
 * agent's token replies): wiped before the memory goes back. */
static struct MHD_Response *plain_response(http_response *resp)
{
    if (!resp->body || resp->body_len == 0)
        return MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
    struct MHD_Response *r =
        MHD_create_response_from_buffer_with_free_callback(resp->body_len, resp->body,
                                                           model_free_wiped);
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
static void arm_reset(http_exchange *x)
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

static void log_reply(http_exchange *x, const http_response *resp)
{
    const http_config *cfg = &x->srv->cfg;
    if (cfg->log)
        cfg->log(cfg->ctx, &x->req, resp, http_ms_since(&x->start));
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

bool http_send_reply(http_exchange *x, http_response *resp)
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
        return false; /* the library closes the connection: no reply at all */
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
    return ok == MHD_YES;
}
