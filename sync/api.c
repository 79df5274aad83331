/*
 * The remote API's operations (sync_api_ops): what each request sends and how its
 * reply is read. The transport is sync/api_transport.c (the only file that drives
 * libcurl's transfers); pure parts (outcome classification, messages,
 * Retry-After, page URLs) are in api_classify.c and api_http.c; URLs are read by
 * rampart/url.h, with libcurl's own parser.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api_client.h"
#include "rampart/api.h"
#include "rampart/codec.h"
#include "rampart/kind.h"
#include "rampart/validate.h"

static bool is_2xx(const api_call *call)
{
    return call->x.net == API_NET_REPLY && call->x.status >= 200 && call->x.status <= 299;
}

/* Classify, then wipe the reply: a create reply holds a token. */
static sync_outcome finish(api_client *c, api_call *call, sync_result *res)
{
    sync_outcome o = api_classify(&call->x, res);
    buf_reset(&c->body);
    return o;
}

static sync_outcome refuse(sync_result *res, sync_outcome outcome, const error_info *why)
{
    memset(res, 0, sizeof *res);
    res->outcome = outcome;
    res->failure = sync_outcome_failure(outcome);
    res->retry_after_s = -1;
    model_copy_text(res->message, sizeof res->message, why->msg);
    return outcome;
}

/* Fits: the base is at most MODEL_URI_MAX - 64 bytes and an id MODEL_ID_MAX. */
static void set_url(api_client *c, const char *path, const char *id)
{
    snprintf(c->url, sizeof c->url, "%s%s%s%s", c->base, path, id ? "/" : "", id ? id : "");
}

/* ---- the operations ------------------------------------------------------ */

/* Record why a 2xx body is not usable; the classifier makes it AMBIGUOUS. */
static void set_decoded(api_call *call, bool ok, const error_info *why)
{
    call->x.decoded = ok;
    if (ok)
        return;
    model_copy_text(call->transport, sizeof call->transport, why->msg);
    call->x.decode_msg = call->transport;
}

static sync_outcome out_of_memory(sync_result *res)
{
    error_info err;
    error_set(&err, ERROR_NOMEM, "out of memory building the request");
    refuse(res, SYNC_NOT_SENT, &err);
    res->failure = SYNC_FAILURE_LOCAL; /* not an unreachable remote: no retry by itself */
    return res->outcome;
}

/* POST `payload` (freed here) to base+path. */
static void post(api_client *c, const char *path, char *payload, api_call *call)
{
    set_url(c, path, NULL);
    api_perform(c, API_POST, payload, call);
    free(payload);
}

/* What a create's reply must hold to be recorded: an id of its kind and, for a kind
 * whose create hands out a secret, that secret. Without its token a credential is
 * useless here: AMBIGUOUS lets the listing find it by its marker and the engine
 * replace it. */
static error_code check_created(const kind_desc *d, const model_object *out, error_info *err)
{
    char what[64];
    snprintf(what, sizeof what, "the new %s's id", d->noun);
    if (validate_id(model_object_id(out), d->id_prefix, what, err) != ERROR_OK)
        return err->code;
    if (d->has_token && (!out->cred.token || !out->cred.token[0]))
        return error_set(err, ERROR_FORMAT, "the reply carried no token");
    return ERROR_OK;
}

static sync_outcome api_create(void *ctx, const model_object *in, model_object *out,
                               sync_result *res)
{
    api_client *c = ctx;
    const kind_desc *d = kind_get(in->kind);
    model_object_init(out, in->kind);
    char *payload = codec_object_create_body(in);
    if (!payload)
        return out_of_memory(res);
    api_call call;
    post(c, d->api_path, payload, &call);
    if (is_2xx(&call)) {
        error_info err = {0};
        bool ok = codec_object_decode(d->kind, c->body.data, c->body.len, out, &err) == ERROR_OK &&
                  check_created(d, out, &err) == ERROR_OK;
        set_decoded(&call, ok, &err);
    }
    if (finish(c, &call, res) != SYNC_OK)
        model_object_clear(out);
    return res->outcome;
}

/* The path of object `id` of `kind`, or, when `id` is not a remote id of the kind,
 * false with `res` refused (never put in a URL). */
static bool object_url(api_client *c, model_kind kind, const char *id, sync_result *res)
{
    const kind_desc *d = kind_get(kind);
    error_info err = {0};
    if (validate_id(id, d->id_prefix, "id", &err) != ERROR_OK) {
        error_prefix(&err, "not sent");
        refuse(res, SYNC_REJECTED, &err);
        return false;
    }
    set_url(c, d->api_path, id);
    return true;
}

/* An id that is not a remote id of the kind is never put in a URL. */
static sync_outcome api_remove(void *ctx, model_kind kind, const char *id, sync_result *res)
{
    api_client *c = ctx;
    if (!object_url(c, kind, id, res))
        return res->outcome;
    api_call call;
    api_perform(c, API_DELETE, NULL, &call);
    call.x.decoded = true; /* 204: nothing to read */
    return finish(c, &call, res);
}

/* ---- conditional page GETs (a follower: api_page_cache) ---- */

static long long wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* GET c->url, with If-None-Match when a page is kept for it; a 304 makes the kept
 * body the reply (c->reused). */
static void perform_page_get(api_client *c, api_call *call)
{
    char etag[API_ETAG_MAX] = "";
    char *kept = NULL;
    size_t len = 0;
    bool held = c->pages && strcmp(c->refetch, c->url) != 0 &&
                c->pages->get(c->pages->ctx, c->url, etag, sizeof etag, &kept, &len) &&
                etag[0] && api_cond_headers_set(c, etag);
    c->refetch[0] = '\0';
    api_perform(c, API_GET, NULL, call);
    api_cond_headers_clear(c);
    if (held && call->x.net == API_NET_REPLY && call->x.status == 304) {
        buf_reset(&c->body);
        if (buf_append(&c->body, kept, len)) {
            call->x.status = 200; /* the page, as the 200 that brought it */
            call->x.body = c->body.data;
            call->x.body_len = c->body.len;
            c->reused = true;
            c->pages->reused(c->pages->ctx, c->url, wall_ms());
        }
    }
    free(kept);
}

/* After a page decoded: keep it (a 200 with a tag), or, a kept one that did not
 * decode, ask for it whole next time; at the end of a listing, forget its pages
 * no longer used. */
static void keep_page(api_client *c, const codec_page *page, bool decoded)
{
    if (!c->pages)
        return;
    if (!decoded) {
        if (c->reused)
            snprintf(c->refetch, sizeof c->refetch, "%s", c->url);
        return;
    }
    char collection[MODEL_URI_MAX + 64];
    snprintf(collection, sizeof collection, "%s%s", c->base, kind_get(page->kind)->api_path);
    if (!c->reused && c->etag[0] && !c->no_store)
        c->pages->put(c->pages->ctx, c->url, collection, c->etag, c->body.data, c->body.len,
                      wall_ms());
    if (page->count == 0 || !page->next_page_uri[0])
        c->pages->prune(c->pages->ctx, collection, c->listing_ms[page->kind]);
}

/*
 * The one GET of a list page of `kind` (`url` NULL: the first): its URL checked
 * (api_page_url: the key goes nowhere else), then sent now into c->body, taking
 * the reply of the same request started ahead if there is one, or, with `call`
 * NULL, started ahead. false (with `res` filled, when given) when the URL is
 * refused or nothing was started. A conditional GET belongs here.
 */
static bool page_get(api_client *c, model_kind kind, const char *url, api_call *call,
                     sync_result *res)
{
    error_info err = {0};
    if (api_page_url(c->base, kind_get(kind)->api_path, url, c->url, sizeof c->url, &err) !=
        ERROR_OK) {
        api_ahead_drop(c);
        if (res)
            refuse(res, SYNC_REJECTED, &err);
        return false;
    }
    /* A follower's pages go one at a time: each carries its own If-None-Match and
     * most come back as a 304 with no body, so there is nothing to overlap. */
    if (!call)
        return c->pages ? false : api_ahead_start(c);
    if (!url)
        c->listing_ms[kind] = wall_ms();
    if (c->pages)
        perform_page_get(c, call);
    else if (!api_ahead_take(c, call))
        api_perform(c, API_GET, NULL, call);
    return true;
}

/* Every item must carry an id (a listing that holds an object it cannot name
 * says nothing of what is absent), and the next link must not be the page itself
 * (the engine would loop). A malformed id is the store's to refuse: its gate
 * names it and keeps the rest of the page. */
static error_code check_page(const api_client *c, const codec_page *page, error_info *err)
{
    const kind_desc *d = kind_get(page->kind);
    for (size_t i = 0; i < page->count; i++) {
        if (!model_object_id(&page->items[i])[0])
            return error_set(err, ERROR_FORMAT, "%s %zu: id: missing", d->noun, i + 1);
    }
    if (page->next_page_uri[0] && strcmp(page->next_page_uri, c->url) == 0)
        return error_set(err, ERROR_FORMAT, "next_page_uri points back to the same page");
    return ERROR_OK;
}

static sync_outcome api_list_page(void *ctx, model_kind kind, const char *url,
                                  codec_page *page, sync_result *res)
{
    api_client *c = ctx;
    memset(page, 0, sizeof *page);
    page->kind = kind;
    api_call call;
    if (!page_get(c, kind, url, &call, res))
        return res->outcome;
    if (is_2xx(&call)) {
        error_info err = {0};
        bool ok = codec_page_decode(kind, c->body.data, c->body.len, page, &err) == ERROR_OK &&
                  check_page(c, page, &err) == ERROR_OK;
        set_decoded(&call, ok, &err);
        keep_page(c, page, ok);
    }
    if (finish(c, &call, res) != SYNC_OK)
        codec_page_free(page);
    return res->outcome;
}

static bool api_list_ahead(void *ctx, model_kind kind, const char *url)
{
    return page_get(ctx, kind, url, NULL, NULL);
}

/* ---- edits and gets of one object ---------------------------------------- */

/* A 2xx carrying one object: decoded into `out`, which must be the object asked
 * for (a reply about another would be recorded over the wrong row). */
static void decode_object(api_client *c, const char *id, model_object *out, api_call *call)
{
    if (!is_2xx(call))
        return;
    const kind_desc *d = kind_get(out->kind);
    error_info err = {0};
    bool ok = codec_object_decode(d->kind, c->body.data, c->body.len, out, &err) == ERROR_OK;
    if (ok && strcmp(model_object_id(out), id) != 0) {
        error_set(&err, ERROR_FORMAT, "the reply is about another %s", d->noun);
        ok = false;
    }
    set_decoded(call, ok, &err);
}

/* The fields an edit may send: at least one, each one the kind lets change. */
static error_code check_edit_fields(model_kind kind, unsigned fields, error_info *err)
{
    unsigned editable = kind_field_set(kind, KIND_FIELD_EDIT);
    char names[128], allowed[128];
    if (fields == 0)
        return error_set(err, ERROR_INVALID, "not sent: an edit of no field");
    if (fields & ~editable) {
        kind_field_names(kind, fields & ~editable, names, sizeof names);
        return error_set(err, ERROR_INVALID, "not sent: %s cannot be changed; a %s may "
                         "change %s", names[0] ? names : "an unknown field",
                         kind_get(kind)->noun,
                         kind_field_names(kind, editable, allowed, sizeof allowed));
    }
    return ERROR_OK;
}

static sync_outcome api_update(void *ctx, const model_object *in, unsigned fields,
                               model_object *out, sync_result *res)
{
    api_client *c = ctx;
    const char *id = model_object_id(in);
    model_object_init(out, in->kind);
    error_info err = {0};
    if (check_edit_fields(in->kind, fields, &err) != ERROR_OK)
        return refuse(res, SYNC_REJECTED, &err);
    if (!object_url(c, in->kind, id, res))
        return res->outcome;
    char *payload = codec_patch_body(in, fields);
    if (!payload)
        return out_of_memory(res);
    api_call call;
    api_perform(c, API_PATCH, payload, &call);
    free(payload);
    decode_object(c, id, out, &call);
    if (finish(c, &call, res) != SYNC_OK)
        model_object_clear(out);
    return res->outcome;
}

static sync_outcome api_get(void *ctx, model_kind kind, const char *id, model_object *out,
                            sync_result *res)
{
    api_client *c = ctx;
    model_object_init(out, kind);
    if (!object_url(c, kind, id, res))
        return res->outcome;
    api_call call;
    api_perform(c, API_GET, NULL, &call);
    decode_object(c, id, out, &call);
    if (finish(c, &call, res) != SYNC_OK)
        model_object_clear(out);
    return res->outcome;
}

/* The run's deadline, for the transfers that follow (transfer_start). At least
 * 1 ms: 0 would mean no limit to libcurl. */
static void api_deadline(void *ctx, double seconds_left)
{
    api_client *c = ctx;
    c->deadline_ms = seconds_left > 0 ? (long)(seconds_left * 1000.0) + 1 : 0;
}

static const sync_api_ops api_table = {
    .create = api_create,
    .remove = api_remove,
    .list_page = api_list_page,
    .list_ahead = api_list_ahead,
    .deadline = api_deadline,
    .update = api_update,
    .get = api_get,
};

const sync_api_ops *api_ops(void)
{
    return &api_table;
}
