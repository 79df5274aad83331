/*
 * apply_plan: the smallest change that makes the rules an apply NAME owns equal
 * to a list. See rampart/apply.h. One walk over the policy's rules keeps only
 * what matters (the rules NAME owns, and the live rules holding a list entry);
 * the list's entries are found by their canonical text in a sorted index.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rampart/apply.h"
#include "rampart/buf.h"

#define NONE SIZE_MAX

typedef struct builder {
    const apply_request *req;
    apply_plan *plan;
    char (*text)[MODEL_CIDR_MAX + 1]; /* per entry: its canonical cidr */
    size_t *by_text;                  /* entry indices in text order */
    size_t *holder;                   /* per entry: the unowned live rule holding it */
    size_t *covered;                  /* per entry: the owned rule standing for it */
    size_t cap_rules, cap_ops;
} builder;

static error_code nomem(error_info *err)
{
    return error_set(err, ERROR_NOMEM, "out of memory planning the apply");
}

static const char *const op_names[APPLY_OP_COUNT] = {
    [APPLY_CONFLICT] = "conflict", [APPLY_BLOCKED] = "blocked", [APPLY_DELETE] = "delete",
    [APPLY_DROP] = "drop",         [APPLY_EDIT] = "edit",       [APPLY_ADOPT] = "adopt",
    [APPLY_RETRY] = "retry",       [APPLY_CREATE] = "create",   [APPLY_KEEP] = "keep",
};

const char *apply_op_name(apply_op_kind kind)
{
    return (unsigned)kind < APPLY_OP_COUNT ? op_names[kind] : "?";
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
}

error_code apply_name_check(const char *name, error_info *err)
{
    size_t n = strlen(name);
    if (n == 0 || n > APPLY_NAME_MAX)
        return error_set(err, ERROR_INVALID, "--name: 1 to %d characters", APPLY_NAME_MAX);
    for (size_t i = 0; i < n; i++) {
        if (!name_char(name[i]))
            return error_set(err, ERROR_INVALID,
                             "--name: only letters, digits, '.', '_' and '-' (character %zu "
                             "is not)", i + 1);
    }
    return ERROR_OK;
}

void apply_metadata(const char *name, char out[APPLY_META_MAX])
{
    snprintf(out, APPLY_META_MAX, "%s%s%s", APPLY_META_HEAD, name, APPLY_META_TAIL);
}

bool apply_metadata_name(const char *metadata, char name[APPLY_NAME_MAX + 1])
{
    name[0] = '\0';
    size_t head = sizeof APPLY_META_HEAD - 1, tail = sizeof APPLY_META_TAIL - 1;
    size_t n = strlen(metadata);
    if (n <= head + tail || strncmp(metadata, APPLY_META_HEAD, head) != 0 ||
        strcmp(metadata + n - tail, APPLY_META_TAIL) != 0 || n - head - tail > APPLY_NAME_MAX)
        return false;
    for (size_t i = head; i < n - tail; i++) {
        if (!name_char(metadata[i]))
            return false;
    }
    memcpy(name, metadata + head, n - head - tail);
    name[n - head - tail] = '\0';
    return true;
}

const char *apply_entry_description(const apply_request *req, size_t entry)
{
    const char *note = req->list->items[entry].note;
    return note ? note : req->description ? req->description : req->name ? req->name : "";
}

const char *apply_edit_description(const apply_request *req, const apply_plan *plan,
                                   const apply_op *op)
{
    const char *note = req->list->items[op->entry].note;
    const char *want = note ? note : req->description;
    const char *has = plan->rules[op->rule].description;
    return want && strcmp(want, has ? has : "") != 0 ? want : NULL;
}

size_t apply_plan_requests(const apply_plan *plan)
{
    return plan->posts + plan->deletes + plan->patches + plan->gets;
}

void apply_plan_free(apply_plan *plan)
{
    if (!plan)
        return;
    for (size_t i = 0; i < plan->nrules; i++)
        free(plan->rules[i].description);
    free(plan->rules);
    free(plan->ops);
    *plan = (apply_plan){0};
}

/* ---- the list's index ---- */

static int by_text_order(const void *a, const void *b, void *ctx)
{
    const builder *bd = ctx;
    return strcmp(bd->text[*(const size_t *)a], bd->text[*(const size_t *)b]);
}

static error_code index_list(builder *b, error_info *err)
{
    size_t n = b->req->list->count;
    size_t m = n ? n : 1;
    b->text = malloc(m * sizeof *b->text);
    b->by_text = malloc(m * sizeof *b->by_text);
    b->holder = malloc(m * sizeof *b->holder);
    b->covered = malloc(m * sizeof *b->covered);
    if (!b->text || !b->by_text || !b->holder || !b->covered)
        return nomem(err);
    for (size_t i = 0; i < n; i++) {
        cidrset_format(&b->req->list->items[i].pfx, b->text[i]);
        b->by_text[i] = i;
        b->holder[i] = b->covered[i] = NONE;
    }
    qsort_r(b->by_text, n, sizeof *b->by_text, by_text_order, b);
    return ERROR_OK;
}

static size_t find_entry(const builder *b, const char *cidr)
{
    size_t lo = 0, hi = b->req->list->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(b->text[b->by_text[mid]], cidr);
        if (c == 0)
            return b->by_text[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NONE;
}

static void builder_free(builder *b)
{
    free(b->text);
    free(b->by_text);
    free(b->holder);
    free(b->covered);
}

/* ---- the policy's rules ---- */

/* The rows whose natural key is unique (store.h): the ones that hold a cidr. */
static bool is_live(model_state s)
{
    return s != MODEL_STATE_DELETING && s != MODEL_STATE_REMOTE_DELETED &&
           s != MODEL_STATE_CONFLICT;
}

static bool is_owned(const apply_request *req, const apply_rule *r)
{
    return r->action == req->action && strcmp(r->owner, req->name) == 0;
}

static error_code add_rule(builder *b, const store_policy_rule *r, bool owned,
                           error_info *err)
{
    apply_plan *p = b->plan;
    if (!buf_grow_array((void **)&p->rules, &b->cap_rules, p->nrules + 1, sizeof *p->rules))
        return nomem(err);
    apply_rule *a = &p->rules[p->nrules];
    *a = (apply_rule){.action = r->action, .state = r->state, .has_metadata = r->metadata[0]};
    snprintf(a->id, sizeof a->id, "%s", r->id);
    snprintf(a->cidr, sizeof a->cidr, "%s", r->cidr);
    apply_metadata_name(r->metadata, a->owner);
    if (owned && !(a->description = strdup(r->description)))
        return nomem(err);
    p->nrules++;
    return ERROR_OK;
}

static error_code take_rule(void *ctx, const store_policy_rule *r, error_info *err)
{
    builder *b = ctx;
    b->plan->policy_rules++;
    char owner[APPLY_NAME_MAX + 1];
    apply_metadata_name(r->metadata, owner);
    bool owned = r->action == b->req->action && strcmp(owner, b->req->name) == 0;
    size_t entry = find_entry(b, r->cidr);
    if (!owned && (entry == NONE || !is_live(r->state)))
        return ERROR_OK;
    error_code rc = add_rule(b, r, owned, err);
    if (rc == ERROR_OK && !owned)
        b->holder[entry] = b->plan->nrules - 1;
    return rc;
}

/* ---- ops ---- */

static error_code add_op(builder *b, apply_op_kind kind, size_t entry, size_t rule,
                         unsigned requests, error_info *err)
{
    apply_plan *p = b->plan;
    p->count[kind]++;
    if (kind == APPLY_KEEP)
        return ERROR_OK;
    if (!buf_grow_array((void **)&p->ops, &b->cap_ops, p->nops + 1, sizeof *p->ops))
        return nomem(err);
    p->ops[p->nops++] = (apply_op){kind, entry, rule, requests};
    bool post = kind == APPLY_CREATE || kind == APPLY_RETRY;
    bool patch = kind == APPLY_EDIT || kind == APPLY_ADOPT;
    p->posts += post ? requests : 0;
    p->patches += patch ? requests : 0;
    p->deletes += kind == APPLY_DELETE ? requests : 0;
    p->gets += patch || kind == APPLY_DELETE ? requests : 0; /* each write's look */
    return ERROR_OK;
}

static bool reached_remote(model_state s)
{
    return s == MODEL_STATE_SYNCED || s == MODEL_STATE_EDITED;
}

/*
 * An owned rule that holds its key (first pass) or does not (second pass): kept,
 * retried, left for the user, or a removal (whose DELETE an edit may save: the
 * ones that cost a request go to `removals`).
 */
static error_code owned_live(builder *b, size_t i, size_t *removals, size_t *nremovals,
                             error_info *err)
{
    const apply_rule *r = &b->plan->rules[i];
    size_t e = find_entry(b, r->cidr);
    bool in_flight = r->state == MODEL_STATE_CREATING || r->state == MODEL_STATE_UNKNOWN;
    if (e != NONE) {
        b->covered[e] = i;
        return add_op(b, r->state == MODEL_STATE_FAILED ? APPLY_RETRY : APPLY_KEEP, e, i,
                      r->state == MODEL_STATE_FAILED, err);
    }
    if (in_flight)
        return add_op(b, APPLY_BLOCKED, NONE, i, 0, err);
    if (reached_remote(r->state)) {
        removals[(*nremovals)++] = i;
        return ERROR_OK;
    }
    return add_op(b, APPLY_DELETE, NONE, i, 0, err); /* new, failed: never sent */
}

static error_code owned_other(builder *b, size_t i, error_info *err)
{
    const apply_rule *r = &b->plan->rules[i];
    size_t e = find_entry(b, r->cidr);
    if (r->state == MODEL_STATE_CONFLICT) {
        if (e != NONE && b->covered[e] == NONE)
            b->covered[e] = i;
        return add_op(b, APPLY_BLOCKED, NONE, i, 0, err);
    }
    if (r->state != MODEL_STATE_REMOTE_DELETED)
        return ERROR_OK; /* deleting: on its way out, holds nothing */
    if (e != NONE && b->covered[e] == NONE && b->holder[e] == NONE) {
        b->covered[e] = i;
        return add_op(b, APPLY_RETRY, e, i, 1, err);
    }
    return add_op(b, APPLY_DROP, NONE, i, 0, err);
}

/* An entry held by a rule the apply does not own: adopted, or a conflict. */
static error_code held_entry(builder *b, size_t e, error_info *err)
{
    size_t h = b->holder[e];
    const apply_rule *r = &b->plan->rules[h];
    bool adoptable = b->req->adopt && r->action == b->req->action && !r->has_metadata &&
                     (r->state == MODEL_STATE_NEW || r->state == MODEL_STATE_FAILED ||
                      reached_remote(r->state));
    if (!adoptable)
        return add_op(b, APPLY_CONFLICT, e, h, 0, err);
    return add_op(b, APPLY_ADOPT, e, h, reached_remote(r->state), err);
}

/* Descriptions of the two sides of a possible edit, for pairing equal ones. */
static int removal_order(const void *a, const void *b, void *ctx)
{
    const builder *bd = ctx;
    return strcmp(bd->plan->rules[*(const size_t *)a].description,
                  bd->plan->rules[*(const size_t *)b].description);
}

static int create_order(const void *a, const void *b, void *ctx)
{
    const builder *bd = ctx;
    return strcmp(apply_entry_description(bd->req, *(const size_t *)a),
                  apply_entry_description(bd->req, *(const size_t *)b));
}

/*
 * Removals (each a DELETE) and creates (each a POST) paired into edits (one PATCH
 * each): first those whose descriptions are equal (the rule keeps its own), then
 * the rest in order. Paired slots are set to NONE.
 */
static error_code pair_edits(builder *b, size_t *rem, size_t nrem, size_t *cre, size_t ncre,
                             error_info *err)
{
    qsort_r(rem, nrem, sizeof *rem, removal_order, b);
    qsort_r(cre, ncre, sizeof *cre, create_order, b);
    error_code rc = ERROR_OK;
    for (size_t i = 0, j = 0; rc == ERROR_OK && i < nrem && j < ncre;) {
        int c = strcmp(b->plan->rules[rem[i]].description,
                       apply_entry_description(b->req, cre[j]));
        if (c == 0) {
            rc = add_op(b, APPLY_EDIT, cre[j], rem[i], 1, err);
            rem[i++] = cre[j++] = NONE;
        } else if (c < 0) {
            i++;
        } else {
            j++;
        }
    }
    for (size_t i = 0, j = 0; rc == ERROR_OK && i < nrem && j < ncre;) {
        if (rem[i] == NONE)
            i++;
        else if (cre[j] == NONE)
            j++;
        else {
            rc = add_op(b, APPLY_EDIT, cre[j], rem[i], 1, err);
            rem[i++] = cre[j++] = NONE;
        }
    }
    for (size_t i = 0; rc == ERROR_OK && i < nrem; i++)
        rc = rem[i] == NONE ? ERROR_OK : add_op(b, APPLY_DELETE, NONE, rem[i], 1, err);
    for (size_t j = 0; rc == ERROR_OK && j < ncre; j++)
        rc = cre[j] == NONE ? ERROR_OK : add_op(b, APPLY_CREATE, cre[j], NONE, 1, err);
    return rc;
}

static error_code classify(builder *b, size_t *rem, size_t *cre, error_info *err)
{
    apply_plan *p = b->plan;
    size_t nrem = 0, ncre = 0;
    error_code rc = ERROR_OK;
    for (size_t i = 0; rc == ERROR_OK && i < p->nrules; i++) {
        if (is_owned(b->req, &p->rules[i]) && is_live(p->rules[i].state))
            rc = owned_live(b, i, rem, &nrem, err);
    }
    for (size_t i = 0; rc == ERROR_OK && i < p->nrules; i++) {
        if (is_owned(b->req, &p->rules[i]) && !is_live(p->rules[i].state))
            rc = owned_other(b, i, err);
    }
    for (size_t e = 0; rc == ERROR_OK && e < b->req->list->count; e++) {
        if (b->covered[e] != NONE)
            continue;
        if (b->holder[e] != NONE)
            rc = held_entry(b, e, err);
        else
            cre[ncre++] = e;
    }
    return rc == ERROR_OK ? pair_edits(b, rem, nrem, cre, ncre, err) : rc;
}

static int op_order(const void *pa, const void *pb, void *ctx)
{
    const apply_plan *plan = ctx;
    const apply_op *a = pa, *b = pb;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->entry != b->entry)
        return a->entry < b->entry ? -1 : 1;
    if (a->entry != NONE || a->rule == b->rule)
        return 0;
    return strcmp(plan->rules[a->rule].cidr, plan->rules[b->rule].cidr);
}

error_code apply_plan_build(store *st, const apply_request *req, apply_plan *out,
                            error_info *err)
{
    *out = (apply_plan){0};
    builder b = {.req = req, .plan = out};
    error_code rc = index_list(&b, err);
    if (rc == ERROR_OK)
        rc = store_policy_rules(st, req->policy_id, take_rule, &b, err);
    size_t *rem = NULL, *cre = NULL;
    if (rc == ERROR_OK) {
        rem = malloc((out->nrules ? out->nrules : 1) * sizeof *rem);
        cre = malloc((req->list->count ? req->list->count : 1) * sizeof *cre);
        rc = rem && cre ? classify(&b, rem, cre, err) : nomem(err);
    }
    free(rem);
    free(cre);
    builder_free(&b);
    if (rc == ERROR_OK && out->nops > 1)
        qsort_r(out->ops, out->nops, sizeof *out->ops, op_order, out);
    return rc;
}
