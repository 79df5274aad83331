/*
 * A scripted remote for the engine's unit tests: the objects of each kind kept in
 * arrays in creation order, ids that sort by creation, newest-first pages with
 * next_page_uri, and a script per operation that makes the next calls end with
 * any outcome (optionally after doing the work: a create whose reply is lost).
 * It implements the generic sync_api_ops over the kind descriptors, like the real
 * client; what the server decides for one kind (a rule's natural key, the cidrs
 * it refuses, a credential's token) is in fake_refusal and fake_store. A fake
 * clock whose sleep just advances time makes pacing and backoff instant and
 * exact. Included by test_engine.c and test_engine_pace.c.
 */
#ifndef FAKE_REMOTE_H
#define FAKE_REMOTE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/kind.h"
#include "rampart/sync.h"
#include "test_support.h"

enum {
    FAKE_MAX = 128,
    FAKE_SCRIPT = 32,
    FAKE_CALLS = 1024,
    FAKE_URIS = 64,
    FAKE_REJECTS = 8,
    FAKE_TOKEN_MAX = 64,
    FAKE_PATCHES = 64
};

/* One PATCH the fake received: the object and the fields its body held. */
typedef struct fake_patch {
    model_kind kind;
    char id[MODEL_ID_MAX + 1];
    unsigned fields;
} fake_patch;

/* What an operation does; with a kind it names one counter (fake_op_of). */
typedef enum fake_verb {
    FAKE_CREATE,
    FAKE_REMOVE,
    FAKE_LIST,
    FAKE_UPDATE,
    FAKE_GET,
    FAKE_VERBS
} fake_verb;

/* Per kind and verb, in the order of model_kind and fake_verb. */
typedef enum fake_op {
    OP_RULE_CREATE,
    OP_RULE_DELETE,
    OP_RULE_LIST,
    OP_RULE_UPDATE,
    OP_RULE_GET,
    OP_CRED_CREATE,
    OP_CRED_DELETE,
    OP_CRED_LIST,
    OP_CRED_UPDATE,
    OP_CRED_GET,
    OP_COUNT
} fake_op;

_Static_assert(OP_COUNT == MODEL_KIND_COUNT * FAKE_VERBS, "one op per kind and verb");
_Static_assert(MODEL_KIND_RULE == 0 && MODEL_KIND_CRED == 1, "ops follow model_kind");

static fake_op fake_op_of(model_kind kind, fake_verb verb)
{
    return (fake_op)((int)kind * FAKE_VERBS + (int)verb);
}

typedef struct fake_clock {
    double now;
    double slept;
} fake_clock;

/* One scripted reply. outcome SYNC_OK with !empty: behave normally. */
typedef struct fake_step {
    sync_outcome outcome;
    bool commit;          /* do the work anyway (the reply is what fails) */
    double retry_after;   /* for SYNC_RATE_LIMITED; < 0: none */
    const char *msg;
    sync_failure_kind failure; /* NONE: the outcome's usual one */
    bool empty;           /* list: an empty page that still has a next_page_uri */
    bool no_token;        /* credential create: a 201 whose body lacks the token */
    const char *token;    /* credential create: a 201 with this token (a hostile one) */
    int http_status;      /* the reply's status, when the test says (a 403) */
    bool no_ids;          /* list: the items come without their ids */
    bool rewind;          /* list: next_page_uri leads back to the first page */
} fake_step;

/* A cidr the server refuses to create, with what it answers (HTTP 400). */
typedef struct fake_reject {
    const char *cidr;
    const char *msg;
} fake_reject;

typedef struct fake_remote {
    /* Per kind, in creation order; credentials' metadata as sent, marker included. */
    model_object items[MODEL_KIND_COUNT][FAKE_MAX];
    size_t n[MODEL_KIND_COUNT];
    char tokens[MODEL_KIND_COUNT][FAKE_MAX][FAKE_TOKEN_MAX]; /* kinds with a token */
    int serial;
    size_t limit;                 /* page size */
    fake_reject rejects[FAKE_REJECTS];
    size_t nrejects;
    fake_step script[OP_COUNT][FAKE_SCRIPT];
    size_t script_len[OP_COUNT], script_pos[OP_COUNT];
    size_t calls[OP_COUNT];
    fake_op order[FAKE_CALLS];    /* every call, in order */
    double at[FAKE_CALLS];        /* fake time of each call */
    size_t ncalls;
    char uris[FAKE_URIS][MODEL_URI_MAX + 1]; /* next_page_uris handed out */
    size_t nuris;
    fake_clock *clock;
    double latency;               /* fake seconds per call */
    /* per kind, an id listed as an item the codec could not read ("" for none) */
    char unreadable[MODEL_KIND_COUNT][MODEL_ID_MAX + 1];
    fake_patch patches[FAKE_PATCHES]; /* every PATCH that reached the server */
    size_t npatches;
    char last_create_metadata[MODEL_METADATA_MAX + 1]; /* as the last create sent it */
} fake_remote;

/* Shorthands for the tests: the i-th object of a kind, its count, a token. */
#define FAKE_RULE(f, i) (&(f)->items[MODEL_KIND_RULE][i].rule)
#define FAKE_CRED(f, i) (&(f)->items[MODEL_KIND_CRED][i].cred)
#define FAKE_NRULES(f) ((f)->n[MODEL_KIND_RULE])
#define FAKE_NCREDS(f) ((f)->n[MODEL_KIND_CRED])
#define FAKE_TOKEN(f, i) ((f)->tokens[MODEL_KIND_CRED][i])

static double fake_now(void *ctx)
{
    return ((fake_clock *)ctx)->now;
}

static void fake_sleep(void *ctx, double s)
{
    fake_clock *c = ctx;
    c->now += s;
    c->slept += s;
}

static void fake_script(fake_remote *f, fake_op op, sync_outcome outcome, bool commit,
                        double retry_after, const char *msg)
{
    fake_step *s = &f->script[op][f->script_len[op]++];
    *s = (fake_step){.outcome = outcome, .commit = commit, .retry_after = retry_after,
                     .msg = msg};
}

static void fake_script_repeat(fake_remote *f, fake_op op, sync_outcome outcome, int n,
                               const char *msg)
{
    for (int i = 0; i < n; i++)
        fake_script(f, op, outcome, false, -1, msg);
}

/* The server refuses to create a rule for `cidr` (a valid one: the store refuses
 * invalid ones before any sync), answering `msg`. */
static void fake_reject_cidr(fake_remote *f, const char *cidr, const char *msg)
{
    f->rejects[f->nrejects++] = (fake_reject){cidr, msg};
}

/* Count the call, advance time, pop the script: the step to play. */
static fake_step fake_begin(fake_remote *f, fake_op op, sync_result *res)
{
    f->calls[op]++;
    if (f->ncalls < FAKE_CALLS) {
        f->order[f->ncalls] = op;
        f->at[f->ncalls++] = f->clock->now;
    }
    f->clock->now += f->latency;
    memset(res, 0, sizeof *res);
    res->retry_after_s = -1;
    fake_step step = {.outcome = SYNC_OK, .retry_after = -1};
    if (f->script_pos[op] < f->script_len[op])
        step = f->script[op][f->script_pos[op]++];
    res->outcome = step.outcome;
    if (step.outcome != SYNC_OK) {
        res->retry_after_s = step.retry_after;
        res->failure = step.failure;
        res->http_status = step.http_status;
        snprintf(res->message, sizeof res->message, "%s",
                 step.msg ? step.msg : sync_outcome_name(step.outcome));
    }
    return step;
}

/* A 400 as the real client reports it: the server's fields apart, and the message
 * with the operation id. */
static sync_outcome fake_refuse(sync_result *res, const char *msg)
{
    res->outcome = SYNC_REJECTED;
    res->failure = SYNC_FAILURE_REJECTED;
    res->http_status = 400;
    snprintf(res->error_code, sizeof res->error_code, "validation_error");
    snprintf(res->server_msg, sizeof res->server_msg, "%s", msg);
    snprintf(res->operation_id, sizeof res->operation_id, "op_fake%d", 400);
    snprintf(res->message, sizeof res->message, "%s (operation %s)", msg, res->operation_id);
    return SYNC_REJECTED;
}

/* ---- storing objects ------------------------------------------------------ */

/* The fields the server assigns, wherever the kind keeps them. */
typedef struct fake_head {
    char *uri, *created_at;
    model_state *state;
} fake_head;

static fake_head fake_head_of(model_object *o)
{
    if (o->kind == MODEL_KIND_CRED)
        return (fake_head){o->cred.uri, o->cred.created_at, &o->cred.state};
    return (fake_head){o->rule.uri, o->rule.created_at, &o->rule.state};
}

/* Why the server refuses to create `in`, or NULL: rules are refused for a cidr on
 * the reject list and for a policy's cidr that exists (the natural key). */
static const char *fake_refusal(fake_remote *f, const model_object *in)
{
    if (in->kind != MODEL_KIND_RULE)
        return NULL;
    for (size_t i = 0; i < f->nrejects; i++) {
        if (!strcmp(f->rejects[i].cidr, in->rule.cidr))
            return f->rejects[i].msg;
    }
    for (size_t i = 0; i < FAKE_NRULES(f); i++) {
        const model_rule *r = FAKE_RULE(f, i);
        if (!strcmp(r->policy_id, in->rule.policy_id) && !strcmp(r->cidr, in->rule.cidr))
            return "duplicate CIDR in this policy";
    }
    return NULL;
}

/* Keep a copy of `in` as the server's new object: a fresh id, uri, created_at,
 * synced, and a token for a kind that has one. */
static model_object *fake_store(fake_remote *f, const model_object *in)
{
    const kind_desc *d = kind_get(in->kind);
    size_t i = f->n[in->kind]++;
    model_object *o = &f->items[in->kind][i];
    model_object_init(o, in->kind);
    error_info err;
    model_object_copy(o, in, &err);
    char *id = model_object_id_buf(o);
    snprintf(id, MODEL_ID_MAX + 1, "%s_%027d", d->id_prefix, ++f->serial);
    fake_head h = fake_head_of(o);
    snprintf(h.uri, MODEL_URI_MAX + 1, "https://fake.invalid%s/%s", d->api_path, id);
    snprintf(h.created_at, MODEL_TIME_MAX + 1, "2025-09-04T10:11:15Z");
    *h.state = MODEL_STATE_SYNCED;
    if (d->has_token)
        snprintf(f->tokens[in->kind][i], FAKE_TOKEN_MAX, "%.27s_secretT0ken%d",
                 id + strlen(d->id_prefix) + 1, f->serial);
    return o;
}

static model_rule *fake_add_rule(fake_remote *f, const char *policy, const char *cidr,
                                 model_action action)
{
    model_object in = ts_rule(policy, cidr, action, MODEL_STATE_NEW);
    return &fake_store(f, &in)->rule;
}

/* Forget objects [first, first + count) of `kind`, as if deleted elsewhere. */
static void fake_drop(fake_remote *f, model_kind kind, size_t first, size_t count)
{
    size_t n = f->n[kind];
    for (size_t i = first; i < first + count; i++)
        model_object_clear(&f->items[kind][i]);
    memmove(&f->items[kind][first], &f->items[kind][first + count],
            (n - first - count) * sizeof f->items[kind][0]);
    memmove(f->tokens[kind][first], f->tokens[kind][first + count],
            (n - first - count) * sizeof f->tokens[kind][0]);
    memset(&f->items[kind][n - count], 0, count * sizeof f->items[kind][0]);
    f->n[kind] = n - count;
}

/* ---- the operations ------------------------------------------------------- */

static sync_outcome fake_create(void *ctx, const model_object *in, model_object *out,
                                sync_result *res)
{
    fake_remote *f = ctx;
    model_object_init(out, in->kind);
    fake_step step = fake_begin(f, fake_op_of(in->kind, FAKE_CREATE), res);
    if (step.outcome != SYNC_OK && !step.commit)
        return step.outcome;
    if (in->kind == MODEL_KIND_CRED)
        snprintf(f->last_create_metadata, sizeof f->last_create_metadata, "%s",
                 in->cred.metadata);
    const char *refused = fake_refusal(f, in);
    if (refused)
        return fake_refuse(res, refused);
    model_object *o = fake_store(f, in);
    if (step.outcome != SYNC_OK)
        return step.outcome; /* done, but the reply is lost */
    error_info err;
    model_object_copy(out, o, &err);
    if (kind_get(in->kind)->has_token && !step.no_token)
        model_cred_set_token(&out->cred,
                             step.token ? step.token : f->tokens[in->kind][f->n[in->kind] - 1],
                             &err);
    res->http_status = 201;
    return SYNC_OK;
}

static sync_outcome fake_remove(void *ctx, model_kind kind, const char *id, sync_result *res)
{
    fake_remote *f = ctx;
    fake_step step = fake_begin(f, fake_op_of(kind, FAKE_REMOVE), res);
    if (step.outcome != SYNC_OK && !step.commit)
        return step.outcome;
    bool found = false;
    for (size_t i = 0; i < f->n[kind] && !found; i++) {
        if ((found = !strcmp(model_object_id(&f->items[kind][i]), id)))
            fake_drop(f, kind, i, 1);
    }
    if (step.outcome != SYNC_OK)
        return step.outcome;
    res->http_status = found ? 204 : 404;
    res->outcome = found ? SYNC_OK : SYNC_NOT_FOUND;
    if (!found)
        snprintf(res->message, sizeof res->message, "not found");
    return res->outcome;
}

/* The id a page starts before, from a next_page_uri this fake handed out. */
static bool fake_page_start(fake_remote *f, const char *url, char *before)
{
    before[0] = '\0';
    if (!url)
        return true;
    bool issued = false;
    for (size_t i = 0; i < f->nuris && !issued; i++)
        issued = !strcmp(f->uris[i], url);
    const char *p = strstr(url, "before_id=");
    if (!issued || !p)
        return false;
    p += strlen("before_id=");
    size_t len = strcspn(p, "&");
    memcpy(before, p, len);
    before[len] = '\0';
    return true;
}

/* Indexes (into the creation-ordered array) of one newest-first page. */
static size_t fake_page(fake_remote *f, model_kind kind, const char *before, size_t *idx,
                        bool *more)
{
    size_t count = 0;
    *more = false;
    for (size_t k = f->n[kind]; k-- > 0;) {
        if (before[0] && strcmp(model_object_id(&f->items[kind][k]), before) >= 0)
            continue;
        if (count == f->limit) {
            *more = true;
            break;
        }
        idx[count++] = k;
    }
    return count;
}

static void fake_next(fake_remote *f, model_kind kind, const char *last, char *next)
{
    snprintf(next, MODEL_URI_MAX + 1, "https://fake.invalid%s?before_id=%s&limit=%zu",
             kind_get(kind)->api_path, last, f->limit);
    if (f->nuris < FAKE_URIS)
        strcpy(f->uris[f->nuris++], next);
}

static sync_outcome fake_list(void *ctx, model_kind kind, const char *url, codec_page *page,
                              sync_result *res)
{
    fake_remote *f = ctx;
    memset(page, 0, sizeof *page);
    page->kind = kind;
    fake_step step = fake_begin(f, fake_op_of(kind, FAKE_LIST), res);
    if (step.outcome != SYNC_OK)
        return step.outcome;
    char before[MODEL_ID_MAX + 1];
    if (!fake_page_start(f, url, before))
        return fake_refuse(res, "not a next_page_uri of this server");
    size_t idx[FAKE_MAX];
    bool more;
    size_t n = fake_page(f, kind, before, idx, &more);
    page->items = calloc(n ? n : 1, sizeof *page->items);
    page->refused = calloc(1, sizeof *page->refused);
    error_info err;
    for (size_t i = 0; i < n && !step.empty; i++) {
        const char *id = model_object_id(&f->items[kind][idx[i]]);
        if (f->unreadable[kind][0] && strcmp(id, f->unreadable[kind]) == 0) {
            codec_refusal *r = &page->refused[page->refused_count++];
            snprintf(r->id, sizeof r->id, "%s", id);
            snprintf(r->msg, sizeof r->msg, "%s %zu: action: expected a string",
                     kind_get(kind)->noun, i + 1);
            continue;
        }
        model_object *item = &page->items[page->count++];
        model_object_init(item, kind);
        model_object_copy(item, &f->items[kind][idx[i]], &err);
        if (step.no_ids)
            model_object_id_buf(item)[0] = '\0';
    }
    if (step.rewind)
        fake_next(f, kind, "zzzzzzzz", page->next_page_uri); /* before everything */
    else if (more || step.empty)
        fake_next(f, kind, n ? model_object_id(&f->items[kind][idx[n - 1]]) : "x",
                  page->next_page_uri);
    res->http_status = 200;
    return SYNC_OK;
}

/* The server's object `id` of `kind`, NULL when it has none. */
static model_object *fake_find(fake_remote *f, model_kind kind, const char *id)
{
    for (size_t i = 0; i < f->n[kind]; i++) {
        if (!strcmp(model_object_id(&f->items[kind][i]), id))
            return &f->items[kind][i];
    }
    return NULL;
}

/* The server's copy as a reply carries it (no token). */
static sync_outcome fake_reply(const model_object *o, model_object *out, sync_result *res)
{
    error_info err;
    model_object_copy(out, o, &err);
    if (kind_get(o->kind)->has_token)
        model_cred_set_token(&out->cred, NULL, &err);
    res->http_status = 200;
    return SYNC_OK;
}

static sync_outcome fake_not_found(sync_result *res)
{
    res->outcome = SYNC_NOT_FOUND;
    res->failure = SYNC_FAILURE_NOT_FOUND;
    res->http_status = 404;
    snprintf(res->message, sizeof res->message, "not found (operation op_fake404)");
    return SYNC_NOT_FOUND;
}

/* Copy the edited fields of `in` over the server's object. */
static void fake_apply(model_object *o, const model_object *in, unsigned fields)
{
    const kind_desc *d = kind_get(in->kind);
    for (size_t i = 0; i < d->field_count; i++) {
        const kind_field *kf = &d->fields[i];
        if (!(fields & kind_field_bit(in->kind, kf)))
            continue;
        const void *from = kind_field_at(in, kf);
        void *to = kind_field_at_mut(o, kf);
        error_info err;
        if (kf->type == KIND_FIELD_ACL) {
            model_acl *acl = to;
            for (size_t r = 0; r < acl->count; r++)
                free(acl->rules[r]);
            free(acl->rules);
            memset(acl, 0, sizeof *acl);
            const model_acl *src = from;
            for (size_t r = 0; r < src->count; r++)
                model_acl_add(acl, src->rules[r], &err);
        } else if (kf->type == KIND_FIELD_ACTION) {
            *(model_action *)to = *(const model_action *)from;
        } else {
            memcpy(to, from, kf->size);
        }
    }
}

/* Why the server refuses to give `o` the edited fields of `in`, or NULL: a rule's
 * new cidr on the reject list, or held by another rule of its policy. */
static const char *fake_edit_refusal(fake_remote *f, const model_object *o,
                                     const model_object *in, unsigned fields)
{
    const kind_field *cidr = kind_field_by_name(in->kind, "cidr");
    if (in->kind != MODEL_KIND_RULE || !cidr || !(fields & kind_field_bit(in->kind, cidr)))
        return NULL;
    for (size_t i = 0; i < f->nrejects; i++) {
        if (!strcmp(f->rejects[i].cidr, in->rule.cidr))
            return f->rejects[i].msg;
    }
    for (size_t i = 0; i < FAKE_NRULES(f); i++) {
        const model_rule *r = FAKE_RULE(f, i);
        if (r != &o->rule && !strcmp(r->policy_id, o->rule.policy_id) &&
            !strcmp(r->cidr, in->rule.cidr))
            return "duplicate CIDR in this policy";
    }
    return NULL;
}

/* PATCH: refused (400) for a cidr on the reject list, 404 for an id the server
 * does not have, else applied; every PATCH that reaches it is recorded. */
static sync_outcome fake_update(void *ctx, const model_object *in, unsigned fields,
                                model_object *out, sync_result *res)
{
    fake_remote *f = ctx;
    model_object_init(out, in->kind);
    fake_step step = fake_begin(f, fake_op_of(in->kind, FAKE_UPDATE), res);
    if (step.outcome != SYNC_OK && !step.commit)
        return step.outcome;
    if (f->npatches < FAKE_PATCHES) {
        fake_patch *p = &f->patches[f->npatches++];
        *p = (fake_patch){.kind = in->kind, .fields = fields};
        snprintf(p->id, sizeof p->id, "%s", model_object_id(in));
    }
    model_object *o = fake_find(f, in->kind, model_object_id(in));
    if (!o)
        return step.outcome != SYNC_OK ? step.outcome : fake_not_found(res);
    const char *refused = fake_edit_refusal(f, o, in, fields);
    if (refused)
        return fake_refuse(res, refused);
    fake_apply(o, in, fields);
    if (step.outcome != SYNC_OK)
        return step.outcome; /* done, but the reply is lost */
    return fake_reply(o, out, res);
}

static sync_outcome fake_get(void *ctx, model_kind kind, const char *id, model_object *out,
                             sync_result *res)
{
    fake_remote *f = ctx;
    model_object_init(out, kind);
    fake_step step = fake_begin(f, fake_op_of(kind, FAKE_GET), res);
    if (step.outcome != SYNC_OK)
        return step.outcome;
    model_object *o = fake_find(f, kind, id);
    return o ? fake_reply(o, out, res) : fake_not_found(res);
}

static const sync_api_ops fake_ops = {
    .create = fake_create,
    .remove = fake_remove,
    .list_page = fake_list,
    .update = fake_update,
    .get = fake_get,
};

static void fake_free(fake_remote *f)
{
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        for (size_t i = 0; i < f->n[k]; i++)
            model_object_clear(&f->items[k][i]);
    }
    free(f);
}

#endif
