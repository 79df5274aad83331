/* emulator: lifecycle, the gate (API key, version header), the route table and
 * the fault engine's effects. See rampart/emulator.h. It calls the operations
 * (emulator_ops.c, emulator_list.c); they and it reply through emulator_reply.c. */
#include "emulator_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rampart/codec.h"
#include "rampart/validate.h"
#include "rampart/serve_reply.h"

enum { KEY_MAX = 4096 };

/* ---- the gate: 401 before anything else, then the version header ---- */

static bool gate(void *ctx, const http_request *req, http_response *resp)
{
    emulator *em = ctx;
    if (!serve_bearer_ok(http_request_header(req, "Authorization"), em->api_key, em->key_len)) {
        emu_error(resp, 401, "ERR_UNAUTHORIZED",
                  "missing or invalid API key: send Authorization: Bearer <API key>");
        http_response_header(resp, "WWW-Authenticate", "Bearer");
        return false;
    }
    const char *version = http_request_header(req, em->version_header);
    if (!version) {
        if (em->accept_missing_version)
            return true;
        emu_error(resp, 400, "ERR_VERSION", "missing header %s: send %s: 2",
                  em->version_header, em->version_header);
        return false;
    }
    if (strcmp(version, "2") != 0) {
        emu_error(resp, 400, "ERR_VERSION", "unsupported %s '%.32s': this server speaks 2",
                  em->version_header, version);
        return false;
    }
    return true;
}

/* The layer's own replies (404, 405, 413) in the API's error shape. */
static void layer_error(void *ctx, const http_request *req, int status, const char *msg,
                        http_response *resp)
{
    (void)ctx, (void)req;
    emu_error(resp, status, serve_layer_code(status), "%s", msg);
}

static void log_request(void *ctx, const http_request *req, const http_response *resp,
                        double ms)
{
    emulator *em = ctx;
    static const char *const fault_names[] = {
        [HTTP_FAULT_NONE] = NULL, [HTTP_FAULT_DROP] = "drop",
        [HTTP_FAULT_RESET] = "reset", [HTTP_FAULT_TRUNCATE] = "truncate",
    };
    const char *fault = resp->trickle_ms ? "trickle" : fault_names[resp->fault];
    if (em->log)
        em->log(em->log_ctx, req->method, req->path, resp->status, fault, ms,
                http_request_header(req, "User-Agent"));
}

/* ---- routes and faults ---- */

/* A route's operation: what --faults counts it as, and the code over its kind. */
typedef struct op_route {
    emulator_op op;
    model_kind kind;
    emu_op_fn run;
} op_route;

static const op_route ops[EMULATOR_OP_ANY] = {
    [EMULATOR_OP_CREATE_RULE] = {EMULATOR_OP_CREATE_RULE, MODEL_KIND_RULE, emu_create},
    [EMULATOR_OP_CREATE_CRED] = {EMULATOR_OP_CREATE_CRED, MODEL_KIND_CRED, emu_create},
    [EMULATOR_OP_DELETE_RULE] = {EMULATOR_OP_DELETE_RULE, MODEL_KIND_RULE, emu_delete},
    [EMULATOR_OP_DELETE_CRED] = {EMULATOR_OP_DELETE_CRED, MODEL_KIND_CRED, emu_delete},
    [EMULATOR_OP_LIST_RULES] = {EMULATOR_OP_LIST_RULES, MODEL_KIND_RULE, emu_list},
    [EMULATOR_OP_LIST_CREDS] = {EMULATOR_OP_LIST_CREDS, MODEL_KIND_CRED, emu_list},
    [EMULATOR_OP_GET_RULE] = {EMULATOR_OP_GET_RULE, MODEL_KIND_RULE, emu_get},
    [EMULATOR_OP_GET_CRED] = {EMULATOR_OP_GET_CRED, MODEL_KIND_CRED, emu_get},
    [EMULATOR_OP_PATCH_RULE] = {EMULATOR_OP_PATCH_RULE, MODEL_KIND_RULE, emu_patch},
    [EMULATOR_OP_PATCH_CRED] = {EMULATOR_OP_PATCH_CRED, MODEL_KIND_CRED, emu_patch},
};

static void on_route(void *ctx, const http_request *req, http_response *resp);

static const http_route routes[] = {
    {"POST", "/ip_policy_rules", on_route, &ops[EMULATOR_OP_CREATE_RULE]},
    {"GET", "/ip_policy_rules", on_route, &ops[EMULATOR_OP_LIST_RULES]},
    {"GET", "/ip_policy_rules/{id}", on_route, &ops[EMULATOR_OP_GET_RULE]},
    {"PATCH", "/ip_policy_rules/{id}", on_route, &ops[EMULATOR_OP_PATCH_RULE]},
    {"DELETE", "/ip_policy_rules/{id}", on_route, &ops[EMULATOR_OP_DELETE_RULE]},
    {"POST", "/credentials", on_route, &ops[EMULATOR_OP_CREATE_CRED]},
    {"GET", "/credentials", on_route, &ops[EMULATOR_OP_LIST_CREDS]},
    {"GET", "/credentials/{id}", on_route, &ops[EMULATOR_OP_GET_CRED]},
    {"PATCH", "/credentials/{id}", on_route, &ops[EMULATOR_OP_PATCH_CRED]},
    {"DELETE", "/credentials/{id}", on_route, &ops[EMULATOR_OP_DELETE_CRED]},
};

static const http_fault wire_faults[] = {
    [EMULATOR_FAULT_DROP] = HTTP_FAULT_DROP,
    [EMULATOR_FAULT_RESET] = HTTP_FAULT_RESET,
    [EMULATOR_FAULT_TRUNCATE] = HTTP_FAULT_TRUNCATE,
    [EMULATOR_FAULT_DELAY] = HTTP_FAULT_NONE,
    [EMULATOR_FAULT_STATUS] = HTTP_FAULT_NONE,
    [EMULATOR_FAULT_TRICKLE] = HTTP_FAULT_NONE,
};

/* Count the request; true with a copy of the fault selected for it. */
static bool pick_fault(emulator *em, emulator_op op, emulator_fault *out)
{
    pthread_mutex_lock(&em->lock);
    const emulator_fault *f = emulator_faults_next(&em->faults, op);
    if (f)
        *out = *f;
    pthread_mutex_unlock(&em->lock);
    return f != NULL;
}

static void refuse(const emulator_fault *f, http_response *resp)
{
    if (f->status == 429) {
        emu_error(resp, 429, "ERR_RATE_LIMITED", "too many requests (injected by --faults)");
        char secs[24];
        snprintf(secs, sizeof secs, "%ld", f->retry_after);
        if (f->retry_after >= 0)
            http_response_header(resp, "Retry-After", secs);
        return;
    }
    if (f->status == 403)
        emu_error(resp, 403, "ERR_FORBIDDEN", "forbidden: this key may not do that "
                  "(injected by --faults)");
    else if (f->status == 502)
        emu_error(resp, 502, "ERR_BAD_GATEWAY", "bad gateway (injected by --faults)");
    else
        emu_error(resp, 500, "ERR_INTERNAL", "internal error (injected by --faults)");
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The production limit: a rolling window of the last rate_limit requests, of every
 * client together (the account's budget). A refused request is not counted. */
static bool over_rate(emulator *em)
{
    if (em->rate_limit <= 0)
        return false;
    double now = monotonic_s();
    pthread_mutex_lock(&em->lock);
    bool over = em->rate_count == em->rate_limit && now - em->rate_times[em->rate_next] < (double)em->rate_window_s;
    if (!over) {
        em->rate_times[em->rate_next] = now;
        em->rate_next = (em->rate_next + 1) % em->rate_limit;
        if (em->rate_count < em->rate_limit)
            em->rate_count++;
    }
    pthread_mutex_unlock(&em->lock);
    return over;
}

static void on_route(void *ctx, const http_request *req, http_response *resp)
{
    emulator *em = ctx;
    const op_route *route = req->route_data;
    if (over_rate(em)) {
        emu_error(resp, 429, "ERR_RATE_LIMITED", "too many requests: at most %d per %d s",
                  em->rate_limit, em->rate_window_s);
        return;
    }
    emulator_fault fault;
    bool faulty = pick_fault(em, route->op, &fault);
    if (faulty && fault.kind == EMULATOR_FAULT_STATUS) {
        refuse(&fault, resp);
        return;
    }
    route->run(em, route->kind, req, resp);
    if (!faulty)
        return;
    resp->fault = wire_faults[fault.kind];
    if (fault.kind == EMULATOR_FAULT_DELAY)
        resp->delay_ms = fault.delay_ms;
    if (fault.kind == EMULATOR_FAULT_TRICKLE)
        resp->trickle_ms = fault.delay_ms;
}

/* ---- lifecycle ---- */

/* RFC 9110 token characters: a header name the client can send. */
static bool header_name_ok(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len >= EMU_HEADER_NAME_MAX)
        return false;
    return strspn(name, "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "abcdefghijklmnopqrstuvwxyz") == len;
}

static error_code check_key(const char *key, error_info *err)
{
    size_t len = key ? strlen(key) : 0;
    if (len == 0)
        return error_set(err, ERROR_INVALID, "the API key is empty");
    if (len > KEY_MAX)
        return error_set(err, ERROR_INVALID, "the API key is longer than %d bytes", KEY_MAX);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c <= ' ' || c == 0x7F)
            return error_set(err, ERROR_INVALID, "the API key holds a space or a control "
                             "character (at byte %zu)", i + 1);
    }
    return ERROR_OK;
}

static error_code set_base_url(emulator *em, const char *base, error_info *err)
{
    if (validate_uri(base, "--base-url", err) != ERROR_OK)
        return err->code;
    size_t len = strlen(base);
    while (len > 0 && base[len - 1] == '/')
        len--;
    if (len > EMU_BASE_URL_MAX || !strchr(base, ':'))
        return error_set(err, ERROR_INVALID, "--base-url: give an absolute http(s) URL of "
                         "at most %d bytes", EMU_BASE_URL_MAX);
    memcpy(em->base_url, base, len);
    em->base_url[len] = '\0';
    return ERROR_OK;
}

static error_code apply_settings(emulator *em, const emulator_config *cfg, error_info *err)
{
    if (emulator_faults_parse(cfg->faults, &em->faults, err) != ERROR_OK)
        return error_prefix(err, "--faults");
    if (check_key(cfg->api_key, err) != ERROR_OK)
        return err->code;
    const char *vh = cfg->version_header && *cfg->version_header ? cfg->version_header
                                                                 : EMULATOR_VERSION_HEADER;
    if (!header_name_ok(vh))
        return error_set(err, ERROR_INVALID, "--version-header: '%.64s' is not a header "
                         "name (letters, digits, '-')", vh);
    memcpy(em->version_header, vh, strlen(vh) + 1);
    em->accept_missing_version = cfg->accept_missing_version;
    if (cfg->base_url && *cfg->base_url && set_base_url(em, cfg->base_url, err))
        return err->code;
    em->key_len = strlen(cfg->api_key);
    em->api_key = malloc(em->key_len + 1);
    if (!em->api_key)
        return error_set(err, ERROR_NOMEM, "out of memory");
    memcpy(em->api_key, cfg->api_key, em->key_len + 1);
    em->log = cfg->log;
    em->log_ctx = cfg->log_ctx;
    if (cfg->rate_limit > 0) {
        em->rate_times = calloc((size_t)cfg->rate_limit, sizeof *em->rate_times);
        if (!em->rate_times)
            return error_set(err, ERROR_NOMEM, "out of memory");
        em->rate_limit = cfg->rate_limit;
    }
    if (cfg->rate_window_s < 0)
        return error_set(err, ERROR_INVALID, "--rate-window: give a whole number of seconds");
    em->rate_window_s = cfg->rate_window_s > 0 ? cfg->rate_window_s : 60;
    return ERROR_OK;
}

static error_code listen_on(emulator *em, const emulator_config *cfg, error_info *err)
{
    http_config hc = {
        .listen = cfg->listen, .routes = routes,
        .nroutes = sizeof routes / sizeof routes[0], .ctx = em,
        .gate = gate, .error = layer_error, .log = log_request,
    };
    if (http_server_open(&hc, &em->http, err) != ERROR_OK)
        return error_prefix(err, "--listen");
    if (!em->base_url[0])
        snprintf(em->base_url, sizeof em->base_url, "http://%s",
                 http_server_is_unix(em->http) ? "localhost" : http_server_address(em->http));
    return http_server_start(em->http, err);
}

error_code emulator_start(const emulator_config *cfg, emulator **out, error_info *err)
{
    err = ERROR_OR_SCRATCH(err);
    *out = NULL;
    emulator *em = calloc(1, sizeof *em);
    if (!em)
        return error_set(err, ERROR_NOMEM, "out of memory");
    pthread_mutex_init(&em->lock, NULL);
    error_code rc = apply_settings(em, cfg, err);
    if (rc == ERROR_OK && store_open(cfg->db_path, 0, &em->st, err) != ERROR_OK)
        rc = error_prefix(err, "--db");
    if (rc == ERROR_OK)
        rc = listen_on(em, cfg, err);
    if (rc != ERROR_OK) {
        emulator_stop(em);
        return rc;
    }
    *out = em;
    return ERROR_OK;
}

const char *emulator_address(const emulator *em)
{
    return http_server_address(em->http);
}

bool emulator_is_unix(const emulator *em)
{
    return http_server_is_unix(em->http);
}

const char *emulator_base_url(const emulator *em)
{
    return em->base_url;
}

void emulator_stop(emulator *em)
{
    if (!em)
        return;
    http_server_stop(em->http); /* first: no hook runs after this */
    store_close(em->st);
    if (em->api_key) {
        model_wipe(em->api_key, em->key_len);
        free(em->api_key);
    }
    pthread_mutex_destroy(&em->lock);
    free(em->rate_times);
    free(em);
}
