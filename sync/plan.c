/*
 * sync_plan: what the next sync would do, from the cache alone (no network),
 * Terraform style: + create, - delete, ! needs attention, ~ changed remotely.
 */
#include "rampart/sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PLAN_PAGE = 32 };

typedef struct plan_line {
    char sign;
    const char *why;  /* fixed reason; NULL: the row's error (with a fallback) */
    const char *fallback;
} plan_line;

/* Per state; sign 0: the row is settled and not shown. */
static const plan_line lines[MODEL_STATE_COUNT] = {
    [MODEL_STATE_NEW] = {'+', "create", NULL},
    [MODEL_STATE_CREATING] = {'+', "create (interrupted: the listing is checked first)",
                              NULL},
    [MODEL_STATE_DELETING] = {'-', "delete", NULL},
    [MODEL_STATE_FAILED] = {'!', NULL, "the server refused it"},
    [MODEL_STATE_UNKNOWN] = {'!', "create outcome unknown: the next sync checks the "
                                  "remote listing", NULL},
    [MODEL_STATE_ORPHANED] = {'!', NULL, "created remotely but its token was lost: the "
                                        "next sync deletes it there and creates it again"},
    [MODEL_STATE_REMOTE_DELETED] = {'~', "deleted remotely: review, then discard or retry",
                                    NULL},
};

unsigned sync_plan_states(void)
{
    unsigned mask = 0;
    for (int s = 0; s < MODEL_STATE_COUNT; s++) {
        if (lines[s].sign)
            mask |= 1u << s;
    }
    return mask;
}

char sync_plan_line(model_state state, const char *error_text, const char **why)
{
    const plan_line *l = &lines[state];
    *why = l->why ? l->why : error_text && error_text[0] ? error_text : l->fallback;
    return l->sign;
}

static void fill_item(sync_plan_item *item, model_state state, const char *error_text,
                      char *why, size_t size)
{
    /* The item outlives nothing but the callback; the error is copied because the
     * rows it came from are reused by the next page. */
    const char *reason;
    item->sign = sync_plan_line(state, error_text, &reason);
    if (reason == error_text) {
        snprintf(why, size, "%s", error_text);
        reason = why;
    }
    item->why = reason;
}

typedef struct plan_walk {
    error_code (*fn)(void *ctx, const sync_plan_item *item, error_info *err);
    void *ctx;
} plan_walk;

static error_code plan_page(void *wp, model_object *rows, size_t n, error_info *err)
{
    plan_walk *w = wp;
    char why[MODEL_ERROR_MAX + 1];
    error_code rc = ERROR_OK;
    for (size_t i = 0; i < n && rc == ERROR_OK; i++) {
        sync_plan_item item = {.object = &rows[i]};
        fill_item(&item, model_object_state(&rows[i]), model_object_error(&rows[i]), why,
                  sizeof why);
        rc = w->fn(w->ctx, &item, err);
    }
    return rc;
}

error_code sync_plan(store *st,
                     error_code (*fn)(void *ctx, const sync_plan_item *item, error_info *err),
                     void *ctx, error_info *err)
{
    error_info scratch;
    err = err ? err : &scratch;
    if (!st || !fn)
        return error_set(err, ERROR_INVALID, "sync_plan needs a store and a callback");
    store_query q = {.states = sync_plan_states()};
    plan_walk w = {fn, ctx};
    error_code rc = ERROR_OK;
    for (int k = 0; k < MODEL_KIND_COUNT && rc == ERROR_OK; k++)
        rc = store_walk(st, (model_kind)k, &q, PLAN_PAGE, plan_page, &w, err);
    return rc;
}
