/*
 * A scripted remote for the engine's unit tests: rules and credentials kept in
 * arrays, ids that sort by creation, newest-first pages with next_page_uri, and a
 * script per operation that makes the next calls end with any outcome (optionally
 * after doing the work: a create whose reply is lost). A fake clock whose sleep
 * just advances time makes pacing and backoff instant and exact.
 * Included by test_engine.c only.
 */
#ifndef FAKE_REMOTE_H
#define FAKE_REMOTE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/sync.h"

enum { FAKE_MAX = 128, FAKE_SCRIPT = 32, FAKE_CALLS = 1024, FAKE_URIS = 64 };

typedef enum fake_op {
    OP_RULE_CREATE,
    OP_RULE_DELETE,
    OP_RULE_LIST,
    OP_CRED_CREATE,
    OP_CRED_DELETE,
    OP_CRED_LIST,
    OP_COUNT
} fake_op;

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
    bool empty;           /* list: an empty page that still has a next_page_uri */
    bool no_token;        /* credential create: a 201 whose body lacks the token */
    bool no_ids;          /* rule list: the items come without their ids */
    bool rewind;          /* rule list: next_page_uri leads back to the first page */
} fake_step;

typedef struct fake_remote {
    model_rule rules[FAKE_MAX];
    size_t nrules;
    model_cred creds[FAKE_MAX];   /* metadata as sent, marker included */
    char tokens[FAKE_MAX][64];
    size_t ncreds;
    int serial;
    size_t limit;                 /* page size */
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
} fake_remote;

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
        snprintf(res->message, sizeof res->message, "%s",
                 step.msg ? step.msg : sync_outcome_name(step.outcome));
    }
    return step;
}

static sync_outcome fake_refuse(sync_result *res, const char *msg)
{
    res->outcome = SYNC_REJECTED;
    res->http_status = 400;
    snprintf(res->message, sizeof res->message, "%s", msg);
    return SYNC_REJECTED;
}

/* ---- rules ---------------------------------------------------------------- */

static model_rule *fake_add_rule(fake_remote *f, const char *policy, const char *cidr,
                                 model_action action)
{
    model_rule *r = &f->rules[f->nrules++];
    memset(r, 0, sizeof *r);
    char id[MODEL_ID_MAX + 1];
    snprintf(id, sizeof id, "ipr_%027d", ++f->serial);
    strcpy(r->id, id);
    snprintf(r->uri, sizeof r->uri, "https://fake.invalid/ip_policy_rules/%s", id);
    strcpy(r->created_at, "2025-09-04T10:11:15Z");
    strcpy(r->policy_id, policy);
    strcpy(r->cidr, cidr);
    r->action = action;
    r->state = MODEL_STATE_SYNCED;
    return r;
}

static sync_outcome fake_rule_create(void *ctx, const model_rule *in, model_rule *out,
                                     sync_result *res)
{
    fake_remote *f = ctx;
    fake_step step = fake_begin(f, OP_RULE_CREATE, res);
    if (step.outcome != SYNC_OK && !step.commit)
        return step.outcome;
    for (size_t i = 0; i < f->nrules; i++) {
        if (!strcmp(f->rules[i].policy_id, in->policy_id) && !strcmp(f->rules[i].cidr, in->cidr))
            return fake_refuse(res, "duplicate CIDR in this policy");
    }
    model_rule *r = fake_add_rule(f, in->policy_id, in->cidr, in->action);
    strcpy(r->description, in->description);
    strcpy(r->metadata, in->metadata);
    if (step.outcome != SYNC_OK)
        return step.outcome; /* done, but the reply is lost */
    *out = *r;
    res->http_status = 201;
    return SYNC_OK;
}

static sync_outcome fake_delete(fake_remote *f, fake_op op, const char *id, sync_result *res)
{
    fake_step step = fake_begin(f, op, res);
    if (step.outcome != SYNC_OK && !step.commit)
        return step.outcome;
    bool found = false;
    if (op == OP_RULE_DELETE) {
        for (size_t i = 0; i < f->nrules && !found; i++) {
            if ((found = !strcmp(f->rules[i].id, id)))
                memmove(&f->rules[i], &f->rules[i + 1], (--f->nrules - i) * sizeof f->rules[0]);
        }
    } else {
        for (size_t i = 0; i < f->ncreds && !found; i++) {
            if ((found = !strcmp(f->creds[i].id, id))) {
                model_cred_clear(&f->creds[i]);
                f->ncreds--;
                memmove(&f->creds[i], &f->creds[i + 1], (f->ncreds - i) * sizeof f->creds[0]);
                memmove(f->tokens[i], f->tokens[i + 1], (f->ncreds - i) * sizeof f->tokens[0]);
                memset(&f->creds[f->ncreds], 0, sizeof f->creds[0]);
            }
        }
    }
    if (step.outcome != SYNC_OK)
        return step.outcome;
    res->http_status = found ? 204 : 404;
    res->outcome = found ? SYNC_OK : SYNC_NOT_FOUND;
    if (!found)
        snprintf(res->message, sizeof res->message, "not found");
    return res->outcome;
}

static sync_outcome fake_rule_delete(void *ctx, const char *id, sync_result *res)
{
    return fake_delete(ctx, OP_RULE_DELETE, id, res);
}

/* ---- pages ---------------------------------------------------------------- */

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
static size_t fake_page(fake_remote *f, size_t n, const char *(*id_of)(fake_remote *, size_t),
                        const char *before, size_t *idx, bool *more)
{
    size_t count = 0;
    *more = false;
    for (size_t k = n; k-- > 0;) {
        if (before[0] && strcmp(id_of(f, k), before) >= 0)
            continue;
        if (count == f->limit) {
            *more = true;
            break;
        }
        idx[count++] = k;
    }
    return count;
}

static void fake_next(fake_remote *f, const char *kind, const char *last, char *next)
{
    snprintf(next, MODEL_URI_MAX + 1, "https://fake.invalid/%s?before_id=%s&limit=%zu", kind, last,
             f->limit);
    if (f->nuris < FAKE_URIS)
        strcpy(f->uris[f->nuris++], next);
}

static const char *rule_id_at(fake_remote *f, size_t i)
{
    return f->rules[i].id;
}

static const char *cred_id_at(fake_remote *f, size_t i)
{
    return f->creds[i].id;
}

static sync_outcome fake_rule_list(void *ctx, const char *url, codec_rule_page *page,
                                   sync_result *res)
{
    fake_remote *f = ctx;
    memset(page, 0, sizeof *page);
    fake_step step = fake_begin(f, OP_RULE_LIST, res);
    if (step.outcome != SYNC_OK)
        return step.outcome;
    char before[MODEL_ID_MAX + 1];
    if (!fake_page_start(f, url, before))
        return fake_refuse(res, "not a next_page_uri of this server");
    size_t idx[FAKE_MAX];
    bool more;
    size_t n = fake_page(f, f->nrules, rule_id_at, before, idx, &more);
    page->items = calloc(n ? n : 1, sizeof *page->items);
    for (size_t i = 0; i < n && !step.empty; i++) {
        page->items[page->count] = f->rules[idx[i]];
        if (step.no_ids)
            page->items[page->count].id[0] = '\0';
        page->count++;
    }
    if (step.rewind)
        fake_next(f, "rules", "zzzzzzzz", page->next_page_uri); /* before everything */
    else if (more || step.empty)
        fake_next(f, "rules", n ? f->rules[idx[n - 1]].id : "x", page->next_page_uri);
    res->http_status = 200;
    return SYNC_OK;
}

/* ---- credentials ---------------------------------------------------------- */

static sync_outcome fake_cred_create(void *ctx, const model_cred *in, model_cred *out,
                                     sync_result *res)
{
    fake_remote *f = ctx;
    fake_step step = fake_begin(f, OP_CRED_CREATE, res);
    if (step.outcome != SYNC_OK && !step.commit)
        return step.outcome;
    size_t i = f->ncreds++;
    model_cred *c = &f->creds[i];
    memset(c, 0, sizeof *c);
    error_info err;
    model_cred_copy(c, in, &err);
    char id[MODEL_ID_MAX + 1];
    snprintf(id, sizeof id, "cr_%027d", ++f->serial);
    strcpy(c->id, id);
    snprintf(c->uri, sizeof c->uri, "https://fake.invalid/credentials/%s", id);
    strcpy(c->created_at, "2025-09-04T10:11:15Z");
    c->state = MODEL_STATE_SYNCED;
    snprintf(f->tokens[i], sizeof f->tokens[i], "%.27s_secretT0ken%d", id + 3, f->serial);
    if (step.outcome != SYNC_OK)
        return step.outcome;
    model_cred_copy(out, c, &err);
    if (!step.no_token)
        model_cred_set_token(out, f->tokens[i], &err);
    res->http_status = 201;
    return SYNC_OK;
}

static sync_outcome fake_cred_delete(void *ctx, const char *id, sync_result *res)
{
    return fake_delete(ctx, OP_CRED_DELETE, id, res);
}

static sync_outcome fake_cred_list(void *ctx, const char *url, codec_cred_page *page,
                                   sync_result *res)
{
    fake_remote *f = ctx;
    memset(page, 0, sizeof *page);
    fake_step step = fake_begin(f, OP_CRED_LIST, res);
    if (step.outcome != SYNC_OK)
        return step.outcome;
    char before[MODEL_ID_MAX + 1];
    if (!fake_page_start(f, url, before))
        return fake_refuse(res, "not a next_page_uri of this server");
    size_t idx[FAKE_MAX];
    bool more;
    size_t n = fake_page(f, f->ncreds, cred_id_at, before, idx, &more);
    page->items = calloc(n ? n : 1, sizeof *page->items);
    error_info err;
    for (size_t i = 0; i < n && !step.empty; i++)
        model_cred_copy(&page->items[page->count++], &f->creds[idx[i]], &err);
    if (more || step.empty)
        fake_next(f, "credentials", n ? f->creds[idx[n - 1]].id : "x", page->next_page_uri);
    res->http_status = 200;
    return SYNC_OK;
}

static const sync_api_ops fake_ops = {
    .rule_create = fake_rule_create,
    .rule_delete = fake_rule_delete,
    .rule_list_page = fake_rule_list,
    .cred_create = fake_cred_create,
    .cred_delete = fake_cred_delete,
    .cred_list_page = fake_cred_list,
};

static void fake_free(fake_remote *f)
{
    for (size_t i = 0; i < f->ncreds; i++)
        model_cred_clear(&f->creds[i]);
    free(f);
}

#endif
