/*
 * http: a request's way through the hooks once its headers are in, the same with
 * a connection (http.c) or without one (http_server_dispatch: tests, fuzzing):
 * routing, the layer's own replies (400, 404, 405, 413, 503, shaped by the error
 * hook), the body cap, the handler. No libmicrohttpd here.
 */
#include "http_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rampart/model.h"

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

double http_ms_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) * 1e3 +
           (double)(now.tv_nsec - start->tv_nsec) / 1e6;
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

void http_layer_error(http_exchange *x, int status, const char *msg, http_response *resp)
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
    if (body) /* msg comes from the layer: no quotes or backslashes to escape */
        snprintf(body, n, "{\"msg\":\"%s\"}", msg);
    http_response_set(resp, status, body);
}

void http_match(http_exchange *x)
{
    const http_config *cfg = &x->srv->cfg;
    x->rt = http_route_find(cfg->routes, cfg->nroutes, x->segbuf, &x->req, x->names,
                            x->allow);
    x->req.route_data = x->rt ? x->rt->data : NULL;
}

bool http_after_gate(http_exchange *x, http_response *resp)
{
    if (!x->path_ctl)
        return false;
    http_layer_error(x, 400, "the path holds a control character (%00-%1F or %7F): "
                     "no resource is named like that", resp);
    return true;
}

void http_append_body(http_exchange *x, const char *data, size_t n)
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

void http_handle(http_exchange *x, http_response *resp)
{
    http_server *srv = x->srv;
    if (x->too_large) {
        char msg[96];
        snprintf(msg, sizeof msg, "request body larger than %zu bytes", srv->cfg.body_max);
        http_layer_error(x, 413, msg, resp);
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
        http_layer_error(x, 405, msg, resp);
        http_response_header(resp, "Allow", x->allow);
    } else {
        http_layer_error(x, 404, "no such resource", resp);
    }
}

/* ---- without a connection (tests, fuzzing) ---- */

static void take_query(http_exchange *x, const http_inject *in)
{
    for (size_t i = 0; i < in->nquery; i++) {
        if (x->req.nquery == HTTP_QUERY_MAX) {
            x->req.query_overflow = true;
            return;
        }
        x->req.query[x->req.nquery++] = in->query[i];
    }
}

/* Everything after the gate, as on a connection. */
static void past_gate(http_exchange *x, const http_inject *in, http_response *resp)
{
    if (http_after_gate(x, resp))
        return;
    if (in->body_len > x->srv->cfg.body_max)
        x->too_large = true;
    else if (in->body && in->body_len > 0)
        http_append_body(x, in->body, in->body_len);
    http_handle(x, resp);
}

void http_server_dispatch(http_server *srv, const http_inject *in, http_response *resp)
{
    const http_config *cfg = &srv->cfg;
    http_exchange x = {.srv = srv, .inject = in};
    clock_gettime(CLOCK_MONOTONIC, &x.start);
    x.req.method = in->method;
    x.req.worker = -1; /* no event thread: nothing kept per batch */
    x.req.impl = &x;
    x.req.peer = in->peer;
    take_query(&x, in);
    size_t len = strlen(in->path);
    x.path_ctl = in->path_len > len || http_path_decoded_ctl(in->path, len);
    x.path = strdup(in->path);
    x.segbuf = strdup(in->path);
    if (!x.path || !x.segbuf) {
        http_layer_error(&x, 500, "out of memory", resp);
    } else {
        x.req.path = x.path;
        http_match(&x);
        bool on = !cfg->gate || cfg->gate(cfg->ctx, &x.req, resp);
        if (on) {
            http_response_set(resp, 0, NULL); /* a gate that lets it on has no say */
            memset(resp, 0, sizeof *resp);
            past_gate(&x, in, resp);
        }
    }
    if (resp->status < 100 || resp->status > 599)
        resp->status = 500;
    if (cfg->log) {
        http_response seen = *resp;
        seen.body = NULL;
        cfg->log(cfg->ctx, &x.req, &seen, http_ms_since(&x.start));
    }
    free(x.path);
    free(x.segbuf);
    buf_free(&x.body);
}
